{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Layer {= l.name =}: {= l.op =}: TFLite's reference int8 REQUANTIZE
 * (docs/numerics.md, "Int8 layers"), {= r.lanes =} values per beat:
 * y = clamp(MultiplyByQuantizedMultiplier(x - ({= r.z_in =}), M, shift) + {= r.out_zp =}, -128, 127),
 * {= r.rounding_name =} rounding; {= l.cycles =} cycles per vector, output valid {= l.latency =} cycles after input.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= l.module =} ({% call m::stream_ports(l) %}{% endcall %}
);

// The input offset: every int8 code minus the input zero point, as int32.
{%- call m::int8_offset(r, r.lanes, 32) %}{% endcall %}

{% include "requant_inst.v" %}
endmodule

`resetall
