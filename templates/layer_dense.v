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
    // weight trainer port (fptgen_param_mem): word address, column = pe*{= c.l.simd =} + lane
{%- call m::tr_ports("w", c.waddr_w, c.wcol_w, c.l.w.width) %}{% endcall %}{% endif %}{% if c.l.trainable.biases %},
    // bias trainer port: word address (neuron fold), column = pe
{%- call m::tr_ports("b", c.baddr_w, c.bcol_w, c.l.b.width) %}{% endcall %}{% endif %}
);
{% call m::tr_unused("w", c.l.trainable.weights, c.l.w.width) %}{% endcall %}
{%- call m::tr_unused("b", c.l.trainable.biases, c.l.b.width) %}{% endcall %}
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
    .W_WRITABLE({% if c.l.trainable.weights %}1{% else %}0{% endif %}),
    .W_STYLE("{= c.l.wmem.style =}"),
    .W_FILE("{= c.l.wmem.file =}"),
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
{%- call m::tr_connect("w", c.l.trainable.weights, c.waddr_w, c.wcol_w, c.l.w.width, false) %}{% endcall %}
{%- call m::tr_connect("b", c.l.trainable.biases, c.baddr_w, c.bcol_w, c.l.b.width, true) %}{% endcall %}
);

endmodule

`resetall
