{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Layer {= l.name =}: {= l.op =}{% if d.relu == 1 %}, relu{% else %}, linear{% endif %}.
 *   input    {= l.x.name =}
{%- call m::mvau_comment(d, wm, bm) %}{% endcall %}
 *   output   {= l.y.name =}
 *   folding  PE={= d.pe =} SIMD={= d.simd =}: {= d.nf =} neuron folds x {= d.sf =} synapse folds
 *            = {= l.cycles =} cycles per vector, output valid {= l.latency =} cycles after input
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= l.module =} ({% call m::stream_ports(l) %}{% endcall %}
{%- call m::mvau_tr_ports(d, wm, bm) %}{% endcall %}
);
{% include "mvau_inst.v" %}
endmodule

`resetall
