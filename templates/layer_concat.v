{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Layer {= l.name =}: {= l.op =}. Its {= c.parts =} inputs arrive already joined, one
 * beat per pixel with every input's values in order, by the top level's
 * fptgen_concat blocks: this module passes that stream through.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= l.module =} ({% call m::stream_ports(l) %}{% endcall %}
);

assign out_data = in_data;
assign out_valid = in_valid;
assign in_ready = out_ready;

// A pass-through: the clock and reset are the interface's, not used here.
wire unused_clk_rst = &{1'b0, clk, rst};

endmodule

`resetall
