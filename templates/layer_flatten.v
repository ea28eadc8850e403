{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Layer {= l.name =}: {= l.op =}.
 *   input    {= l.x.name =}, {= f.beats =} pixels of {= f.beat_values =} values, one per beat
 *   output   the image as one vector of {= l.outputs =} values in C order
 *            = {= l.cycles =} cycles per image, valid {= l.latency =} cycles after the first input pixel
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= l.module =} ({% call m::stream_ports(l) %}{% endcall %}
);

fptgen_flatten #(
    .BEATS({= f.beats =}),
    .BEAT_W({= l.in_beat_bits() =})
) u_flatten (
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
