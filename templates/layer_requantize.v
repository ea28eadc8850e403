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
localparam [31:0] Z_IN = {= r.z_in_32() =};  // {= r.z_in =}
wire [{= r.lanes * 32 - 1 =}:0] xo_data;
wire xo_valid = in_valid;
wire xo_ready;
assign in_ready = xo_ready;

genvar i;
generate
    for (i = 0; i < {= r.lanes =}; i = i + 1) begin : g_offset
        assign xo_data[i*32 +: 32] = {{24{in_data[i*8+7]}}, in_data[i*8 +: 8]} - Z_IN;
    end
endgenerate

{% include "requant_inst.v" %}
endmodule

`resetall
