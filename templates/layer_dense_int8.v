{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Layer {= l.name =}: {= l.op =}: TFLite's reference int8 FULLY_CONNECTED
 * (docs/numerics.md, "Int8 layers"), in three stages:
 *   input    {= l.x.name =}: int8 codes; the offset x - ({= r.z_in =}) as {= q.x_off.name =}
{%- call m::mvau_comment(d, wm, bm) %}{% endcall %}
 *   requant  {= r.rounding_name =} rounding, output zero point {= r.out_zp =}, clamp {= r.act_min =}..{= r.act_max =}
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

// The input offset: every int8 code minus the input zero point, in 9 bits
// (exact: -255 .. 255). Wires, on the input stream's handshake.
{%- call m::int8_offset(r, l.inputs, 9) %}{% endcall %}

// The int32 accumulators, one vector of {= l.outputs =} per input vector.
wire [{= l.outputs * 32 - 1 =}:0] acc_data;
wire acc_valid;
wire acc_ready;

{% include "mvau_inst.v" %}
{% include "requant_inst.v" %}
endmodule

`resetall
