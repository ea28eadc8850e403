/*
 * fptgen RTL library: an LFSR noise source with its own state register (the
 * feedback trainers' random signs; the ES trainer keeps its blocks' states in
 * fptgen_itb_ring).
 *
 * A Galois LFSR of WIDTH bits that shifts right (the steps are
 * fptgen_lfsr_advance's: one outputs the low bit o = s[0], then
 * s = (s >> 1) ^ (o ? TAPS : 0), with the maximal-length masks of
 * docs/training.md). A noise
 * value takes BITS fresh output bits, the first in the least significant
 * position, so consecutive values never share bits.
 *
 * value shows the BITS bits the next BITS steps will output; a cycle with
 * next high performs those BITS steps. rst loads SEED.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_lfsr #(
    // State width: 8, 16 or 32
    parameter integer WIDTH = 8,
    // Initial state (nonzero)
    parameter [WIDTH-1:0] SEED = 1,
    // Output bits per value (1..WIDTH)
    parameter integer BITS = 1
) (
    input  wire            clk,
    input  wire            rst,
    input  wire            next,
    output wire [BITS-1:0] value
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
// (fptgen_lfsr_advance checks WIDTH and BITS.)
generate
    if (SEED == {WIDTH{1'b0}}) begin : g_error_seed_zero
        fptgen_param_error_lfsr_seed_zero error_inst ();
    end
endgenerate

reg  [WIDTH-1:0] state_reg;
wire [WIDTH-1:0] state_next;

fptgen_lfsr_advance #(
    .WIDTH(WIDTH),
    .BITS(BITS)
) u_advance (
    .state(state_reg),
    .next(state_next),
    .value(value)
);

always @(posedge clk) begin
    if (rst) begin
        state_reg <= SEED;
    end else if (next) begin
        state_reg <= state_next;
    end
end

endmodule

`resetall
