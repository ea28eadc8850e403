{% import "macros.txt" as m -%}
{% call m::header("//", gen) %}{% endcall %}
//
// {= top =} in the I/O shell fptgen implement places and routes
// (rtl/fptgen_io_shell.v): {= in_w =} input bits shifted in on sin,
// {= out_w =} output bits loaded on sload and shifted out on sout.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= top =}_ecp5 (
    input  wire clk,
    input  wire sin,
    input  wire sload,
    output wire sout
);

wire [{= in_w - 1 =}:0] core_in;
wire [{= out_w - 1 =}:0] core_out;

fptgen_io_shell #(
    .IN_W({= in_w =}),
    .OUT_W({= out_w =})
) u_shell (
    .clk(clk),
    .sin(sin),
    .sload(sload),
    .sout(sout),
    .core_in(core_in),
    .core_out(core_out)
);

{= top =} u_core (
    .clk(clk){% for s in slices %},
    .{= s.name =}({% if s.input %}core_in{% else %}core_out{% endif %}[{= s.hi =}:{= s.lo =}]){% endfor %}
);

endmodule

`resetall
