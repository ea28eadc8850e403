/*
 * fptgen RTL library: a register stage of W bits without reset.
 *
 * q is d as it was at the last clock edge: one cycle of latency, every
 * cycle (no enable). It has no reset: where it is used (the ES trainer's
 * pipeline of Q(s) and of the parameter-write data) every value it holds
 * is loaded before it is read, so its state after reset does not matter,
 * and a register without reset packs with the logic in front of it.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_reg #(
    // Bits (1 or more)
    parameter integer W = 1
) (
    input  wire         clk,
    input  wire [W-1:0] d,
    output wire [W-1:0] q
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (W < 1) begin : g_error_w_below_1
        fptgen_param_error_reg_w_below_1 error_inst ();
    end
endgenerate

reg [W-1:0] q_reg;

always @(posedge clk) begin
    q_reg <= d;
end

assign q = q_reg;

endmodule

`resetall
