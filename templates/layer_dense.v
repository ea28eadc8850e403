{% import "macros.txt" as m -%}
{%- macro fmt(p, f, modes) -%}
    .{= p =}_W({= f.width =}), .{= p =}_F({= f.frac =}), .{= p =}_S({= f.signed =}),{% if modes %} .{= p =}_Q({= f.quant =}), .{= p =}_O({= f.ovf =}),{% endif %}  // {= f.name =}
{%- endmacro %}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Layer {= c.l.name =}: dense {= c.l.outputs =}x{= c.l.inputs =}{% if c.l.relu == 1 %}, relu{% else %}, linear{% endif %}.
 *   input    {= c.l.x.name =}
 *   weights  {= c.l.w.name =} ({= c.l.wmem.kind =}, {= c.l.wmem.depth =} x {= c.l.wmem.cols =} x {= c.l.wmem.col_width =} bits, {= c.l.wmem.style =}, {= c.l.wmem.file =})
 *   biases   {= c.l.b.name =} ({= c.l.bmem.kind =}, {= c.l.bmem.depth =} x {= c.l.bmem.cols =} x {= c.l.bmem.col_width =} bits, {= c.l.bmem.style =}, {= c.l.bmem.file =})
 *   accum    {= c.l.acc.name =}
 *   output   {= c.l.y.name =}
 *   folding  PE={= c.l.pe =} SIMD={= c.l.simd =}: {= c.l.nf =} neuron folds x {= c.l.sf =} synapse folds
 *            = {= c.l.cycles =} cycles per vector, output valid {= c.l.latency =} cycles after input
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= c.l.module =} (
    input  wire clk,
    input  wire rst,
    input  wire [{= c.in_msb =}:0] in_data,
    input  wire in_valid,
    output wire in_ready,
    output wire [{= c.out_msb =}:0] out_data,
    output wire out_valid,
    input  wire out_ready{% if c.l.trainable.weights %},
    // weight write port: word address, column = pe*{= c.l.simd =} + lane
    input  wire w_wr_en,
    input  wire [{= c.waddr_w - 1 =}:0] w_wr_addr,
    input  wire [{= c.wcol_w - 1 =}:0] w_wr_col,
    input  wire [{= c.l.w.width - 1 =}:0] w_wr_data{% endif %}{% if c.l.trainable.biases %},
    // bias write port: word address (neuron fold), column = pe
    input  wire b_wr_en,
    input  wire [{= c.baddr_w - 1 =}:0] b_wr_addr,
    input  wire [{= c.bcol_w - 1 =}:0] b_wr_col,
    input  wire [{= c.l.b.width - 1 =}:0] b_wr_data{% endif %}
);

fptgen_dense #(
    .IN({= c.l.inputs =}),
    .OUT({= c.l.outputs =}),
    .PE({= c.l.pe =}),
    .SIMD({= c.l.simd =}),
    {% call fmt("X", c.l.x, false) %}{% endcall %}
    {% call fmt("W", c.l.w, false) %}{% endcall %}
    {% call fmt("B", c.l.b, false) %}{% endcall %}
    {% call fmt("A", c.l.acc, true) %}{% endcall %}
    {% call fmt("Y", c.l.y, true) %}{% endcall %}
    .RELU({= c.l.relu =}),
    .WA_W({= c.waddr_w =}),
    .WC_W({= c.wcol_w =}),
    .W_WRITABLE({% if c.l.trainable.weights %}1{% else %}0{% endif %}),
    .W_STYLE("{= c.l.wmem.style =}"),
    .W_FILE("{= c.l.wmem.file =}"),
    .BA_W({= c.baddr_w =}),
    .BC_W({= c.bcol_w =}),
    .B_WRITABLE({% if c.l.trainable.biases %}1{% else %}0{% endif %}),
    .B_STYLE("{= c.l.bmem.style =}"),
    .B_FILE("{= c.l.bmem.file =}")
) u_dense (
    .clk(clk),
    .rst(rst),
    .in_data(in_data),
    .in_valid(in_valid),
    .in_ready(in_ready),
    .out_data(out_data),
    .out_valid(out_valid),
    .out_ready(out_ready),
{%- if c.l.trainable.weights %}
    .w_wr_en(w_wr_en),
    .w_wr_addr(w_wr_addr),
    .w_wr_col(w_wr_col),
    .w_wr_data(w_wr_data),
{%- else %}
    .w_wr_en(1'b0),
    .w_wr_addr({{= c.waddr_w =}{1'b0}}),
    .w_wr_col({{= c.wcol_w =}{1'b0}}),
    .w_wr_data({{= c.l.w.width =}{1'b0}}),
{%- endif %}
{%- if c.l.trainable.biases %}
    .b_wr_en(b_wr_en),
    .b_wr_addr(b_wr_addr),
    .b_wr_col(b_wr_col),
    .b_wr_data(b_wr_data)
{%- else %}
    .b_wr_en(1'b0),
    .b_wr_addr({{= c.baddr_w =}{1'b0}}),
    .b_wr_col({{= c.bcol_w =}{1'b0}}),
    .b_wr_data({{= c.l.b.width =}{1'b0}})
{%- endif %}
);

endmodule

`resetall
