{% import "macros.txt" as m -%}
{#- The folded matrix-vector unit (fptgen_dense) of a dense layer or a
    convolution: its input stream is <mv_src>_* (values of format mv_x), its
    output stream <mv_dst>_* (values of format mv_y), mv_in inputs per vector;
    d, wm, bm: its plan and memories. -#}
{%- call m::tr_unused("w", wm.trainable, d.w.width) %}{% endcall %}
{%- call m::tr_unused("b", bm.trainable, d.b.width) %}{% endcall %}
fptgen_dense #(
    .IN({= mv_in =}),
    .OUT({= mv_out =}),
    .PE({= d.pe =}),
    .SIMD({= d.simd =}),
    {% call m::fmt("X", mv_x, false) %}{% endcall %}
    {% call m::fmt("W", d.w, false) %}{% endcall %}
    {% call m::fmt("B", d.b, false) %}{% endcall %}
    {% call m::fmt("A", d.acc, true) %}{% endcall %}
    {% call m::fmt("Y", mv_y, true) %}{% endcall %}
    .RELU({= d.relu =}),
    .TREE({= d.tree =}),
    .PACK({= d.pack =}),
    .MEM_REG({= d.mem_reg =}),
    .X_ROTATE({= d.x_rotate =}),
    .W_WRITABLE({% if wm.trainable %}1{% else %}0{% endif %}),
    .W_STYLE("{= wm.mem.style =}"),
    .W_FILE("{= wm.mem.file =}"),
    .W_BANK_COLS({= wm.mem.bank_cols =}),
    .B_WRITABLE({% if bm.trainable %}1{% else %}0{% endif %}),
    .B_STYLE("{= bm.mem.style =}"),
    .B_FILE("{= bm.mem.file =}"),
    .B_BANK_COLS({= bm.mem.bank_cols =})
) u_dense (
    .clk(clk),
    .rst(rst),
    .in_data({= mv_src =}_data),
    .in_valid({= mv_src =}_valid),
    .in_ready({= mv_src =}_ready),
    .out_data({= mv_dst =}_data),
    .out_valid({= mv_dst =}_valid),
    .out_ready({= mv_dst =}_ready),
{%- call m::tr_connect("w", wm.trainable, wm.addr_w(), wm.col_w(), d.w.width, false) %}{% endcall %}
{%- call m::tr_connect("b", bm.trainable, bm.addr_w(), bm.col_w(), d.b.width, true) %}{% endcall %}
);

