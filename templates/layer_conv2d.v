{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Layer {= l.name =}: {= l.op =}{% if d.relu == 1 %}, relu{% else %}, linear{% endif %}.
 *   input    {= l.x.name =}, image {= c.h =} x {= c.w =} x {= c.c =}, one pixel per beat
 *   window   3x3, stride {= c.stride =}, {% if c.same == 1 %}same{% else %}valid{% endif %} padding: fptgen_swg, {= c.oh =} x {= c.ow =} windows of {= mv_in =} values
{%- call m::mvau_comment(d, wm, bm) %}{% endcall %}
 *   output   {= l.y.name =}, image {= c.oh =} x {= c.ow =} x {= mv_out =}, one pixel per beat
 *   folding  PE={= d.pe =} SIMD={= d.simd =}: {= d.nf =} neuron folds x {= d.sf =} synapse folds per window
 *            = {= l.cycles =} cycles per image, last pixel valid {= l.latency =} cycles after the first input pixel
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= l.module =} ({% call m::stream_ports(l) %}{% endcall %}
{%- call m::mvau_tr_ports(d, wm, bm) %}{% endcall %}
);

// 3x3 windows of the input image, in row-major order; value (ky, kx, c) at
// element (ky*3 + kx)*{= c.c =} + c, the weights' order (OHWI).
wire [{= mv_in * l.x.width as usize - 1 =}:0] win_data;
wire win_valid;
wire win_ready;

fptgen_swg #(
    .H({= c.h =}),
    .W({= c.w =}),
    .C({= c.c =}),
    .STRIDE({= c.stride =}),
    .PAD({= c.same =}),
    .X_W({= l.x.width =}),
    .RAM_STYLE("{= c.ram_style =}")
) u_swg (
    .clk(clk),
    .rst(rst),
    .in_data(in_data),
    .in_valid(in_valid),
    .in_ready(in_ready),
    .out_data(win_data),
    .out_valid(win_valid),
    .out_ready(win_ready)
);
{% include "mvau_inst.v" %}
endmodule

`resetall
