{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Layer {= l.name =}: {= l.op =}.
 *   input    {= l.x.name =}, image {= p.h =} x {= p.w =} x {= p.c =}, one pixel per beat
 *   output   the same format, image {= p.h / 2 =} x {= p.w / 2 =} x {= p.c =}
 *            = {= l.cycles =} cycles per image, last pixel valid {= l.latency =} cycles after the first input pixel
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= l.module =} ({% call m::stream_ports(l) %}{% endcall %}
);

fptgen_maxpool #(
    .H({= p.h =}),
    .W({= p.w =}),
    .C({= p.c =}),
    .X_W({= l.x.width =}),
    .X_S({= l.x.signed =}),
    .RAM_STYLE("{= p.ram_style =}")
) u_pool (
    .clk(clk),
    .rst(rst),
    .in_data(in_data),
    .in_valid(in_valid),
    .in_ready(in_ready),
    .out_data(out_data),
    .out_valid(out_valid),
    .out_ready(out_ready)
);

endmodule

`resetall
