{% import "macros.txt" as m -%}
{%- macro fmt(p, f, modes) -%}
    .{= p =}_W({= f.width =}), .{= p =}_F({= f.frac =}), .{= p =}_S({= f.signed =}),{% if modes %} .{= p =}_Q({= f.quant =}), .{= p =}_O({= f.ovf =}),{% endif %}  // {= f.name =}
{%- endmacro %}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Layer {= l.name =}: {= l.op =}{% if d.relu == 1 %}, relu{% else %}, linear{% endif %}.
 *   input    {= l.x.name =}
 *   weights  {= d.w.name =} ({= wm.mem.kind =}, {= wm.mem.depth =} x {= wm.mem.cols =} x {= wm.mem.col_width =} bits, {= wm.mem.style =}, {= wm.mem.file =})
 *   biases   {= d.b.name =} ({= bm.mem.kind =}, {= bm.mem.depth =} x {= bm.mem.cols =} x {= bm.mem.col_width =} bits, {= bm.mem.style =}, {= bm.mem.file =})
 *   accum    {= d.acc.name =}
 *   output   {= l.y.name =}
 *   folding  PE={= d.pe =} SIMD={= d.simd =}: {= d.nf =} neuron folds x {= d.sf =} synapse folds
 *            = {= l.cycles =} cycles per vector, output valid {= l.latency =} cycles after input
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= l.module =} (
    input  wire clk,
    input  wire rst,
    input  wire [{= l.in_bits() - 1 =}:0] in_data,
    input  wire in_valid,
    output wire in_ready,
    output wire [{= l.out_bits() - 1 =}:0] out_data,
    output wire out_valid,
    input  wire out_ready{% if wm.trainable %},
    // weight trainer port (fptgen_param_mem): word address, column = pe*{= d.simd =} + lane
{%- call m::tr_ports("w", wm.addr_w(), wm.col_w(), d.w.width) %}{% endcall %}{% endif %}{% if bm.trainable %},
    // bias trainer port: word address (neuron fold), column = pe
{%- call m::tr_ports("b", bm.addr_w(), bm.col_w(), d.b.width) %}{% endcall %}{% endif %}
);
{% call m::tr_unused("w", wm.trainable, d.w.width) %}{% endcall %}
{%- call m::tr_unused("b", bm.trainable, d.b.width) %}{% endcall %}
fptgen_dense #(
    .IN({= l.inputs =}),
    .OUT({= l.outputs =}),
    .PE({= d.pe =}),
    .SIMD({= d.simd =}),
    {% call fmt("X", l.x, false) %}{% endcall %}
    {% call fmt("W", d.w, false) %}{% endcall %}
    {% call fmt("B", d.b, false) %}{% endcall %}
    {% call fmt("A", d.acc, true) %}{% endcall %}
    {% call fmt("Y", l.y, true) %}{% endcall %}
    .RELU({= d.relu =}),
    .W_WRITABLE({% if wm.trainable %}1{% else %}0{% endif %}),
    .W_STYLE("{= wm.mem.style =}"),
    .W_FILE("{= wm.mem.file =}"),
    .B_WRITABLE({% if bm.trainable %}1{% else %}0{% endif %}),
    .B_STYLE("{= bm.mem.style =}"),
    .B_FILE("{= bm.mem.file =}")
) u_dense (
    .clk(clk),
    .rst(rst),
    .in_data(in_data),
    .in_valid(in_valid),
    .in_ready(in_ready),
    .out_data(out_data),
    .out_valid(out_valid),
    .out_ready(out_ready),
{%- call m::tr_connect("w", wm.trainable, wm.addr_w(), wm.col_w(), d.w.width, false) %}{% endcall %}
{%- call m::tr_connect("b", bm.trainable, bm.addr_w(), bm.col_w(), d.b.width, true) %}{% endcall %}
);

endmodule

`resetall
