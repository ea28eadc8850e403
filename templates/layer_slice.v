{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Layer {= l.name =}: {= l.op =}. Channels {= s.first =}..{= s.first + s.count - 1 =} of each
 * {= s.channels =}-channel pixel beat, taken as the beat passes: wires only.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= l.module =} ({% call m::stream_ports(l) %}{% endcall %}
);

// Channel k of a beat is bits [k*{= l.x.width =} +: {= l.x.width =}].
assign out_data = in_data[{= s.first * l.x.width as usize =} +: {= s.count * l.x.width as usize =}];
assign out_valid = in_valid;
assign in_ready = out_ready;

// The channels outside the slice, the clock and the reset are not used here.
wire unused_clk_rst = &{1'b0, clk, rst};
{%- if s.first > 0 %}
wire unused_low = &{1'b0, in_data[{= s.first * l.x.width as usize - 1 =}:0]};
{%- endif %}
{%- if s.first + s.count < s.channels %}
wire unused_high = &{1'b0, in_data[{= s.channels * l.x.width as usize - 1 =}:{= (s.first + s.count) * l.x.width as usize =}]};
{%- endif %}

endmodule

`resetall
