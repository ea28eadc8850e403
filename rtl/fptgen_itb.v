/*
 * fptgen RTL library: the update unit of the ES trainer's incremental-
 * training blocks (ITB).
 *
 * A block is one trainable parameter's noise value e and gradient
 * accumulator G (docs/training.md, "Hardware"). The blocks are storage in
 * a ring (fptgen_itb_ring) that rotates past this one unit, which computes
 * the block's next values from its current ones (combinational):
 *   - draw replaces e by a value made of NOISE_BITS fresh LFSR bits
 *     (rademacher: e = bit ? +1 : -1; uniform: 2u + 1 with u the bits as a
 *     two's complement number, the odd values -(2^b - 1) .. 2^b - 1, zero
 *     mean);
 *   - acc_en adds Q(s) * e (the current e, before a draw in the same step)
 *     to the saturating 32-bit G: with EXACT = 0, Q(s) = +-2^exp from
 *     fptgen_po2 and the product is a shift (rademacher noise: the shared
 *     one-hot 2^exp, added or subtracted); with EXACT = 1 it is a
 *     multiplication by s;
 *   - clear zeroes G (before acc_en).
 * The perturbation and the update themselves (the rounded step
 * R(G / 2^lr_shift), and the result clamped to the parameter's range) are
 * computed by fptgen_es_step and fptgen_es_update, since the blocks write
 * the parameter memory one at a time. All intermediate values are wide
 * enough to be exact; every saturation and rounding is an fptgen_cast.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_itb #(
    // 0: rademacher (NOISE_BITS = 1); 1: uniform (NOISE_BITS-bit values)
    parameter integer UNIFORM = 0,
    // Fresh noise bits per value (1..32)
    parameter integer NOISE_BITS = 1,
    // 0: power-of-two loss quantization (shift); 1: exact (multiply)
    parameter integer EXACT = 0,
    // Fitness signal width (>= 2)
    parameter integer S_W = 33
) (
    // The block's noise value: e_in now, e_out after the step
    input  wire [NOISE_BITS-1:0] noise_bits,
    input  wire               draw,
    input  wire [(UNIFORM != 0 ? NOISE_BITS + 1 : 2)-1:0] e_in,
    output wire [(UNIFORM != 0 ? NOISE_BITS + 1 : 2)-1:0] e_out,

    // The block's gradient accumulator: grad_in now, grad_out after the step
    input  wire               acc_en,
    input  wire [S_W-1:0]     signal,
    input  wire               sig_zero,
    input  wire               sig_neg,
    // fptgen_po2's exponent and one-hot of the signal
    input  wire [clog2(S_W)-1:0] sig_exp,
    input  wire [S_W-1:0]     sig_onehot,
    input  wire               clear,
    input  wire [31:0]        grad_in,
    output wire [31:0]        grad_out
);

`include "fptgen_clog2.vh"

localparam integer E_W = UNIFORM != 0 ? NOISE_BITS + 1 : 2;   // noise value width
localparam integer T_W = E_W + S_W + 1;                    // Q(s) * e, exact
localparam integer GS_W = (T_W > 32 ? T_W : 32) + 1;

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (NOISE_BITS < 1 || NOISE_BITS > 32 || (UNIFORM == 0 && NOISE_BITS != 1) ||
            S_W < 2) begin : g_error_out_of_range
        fptgen_param_error_itb_out_of_range error_inst ();
    end
endgenerate

// ---------------------------------------------------------------------------
// Noise value
generate
    if (UNIFORM != 0) begin : g_uniform
        assign e_out = draw ? {noise_bits, 1'b1} : e_in;  // 2u + 1
    end else begin : g_rademacher
        assign e_out = draw ? (noise_bits[0] ? 2'b01 : 2'b11) : e_in;
    end
endgenerate

// ---------------------------------------------------------------------------
// Gradient accumulator
wire signed [GS_W-1:0] grad_ext = {{(GS_W - 32){grad_in[31]}}, grad_in};
wire signed [GS_W-1:0] grad_sum;

generate
    if (EXACT != 0) begin : g_exact
        wire signed [E_W:0] e_ext = {e_in[E_W-1], e_in};
        wire signed [T_W-1:0] term = $signed(signal) * e_ext;
        assign grad_sum = grad_ext + {{(GS_W - T_W){term[T_W-1]}}, term};
        wire unused_po2 = ^{sig_zero, sig_neg, sig_exp, sig_onehot};
    end else if (UNIFORM != 0) begin : g_po2_uniform
        // e * 2^exp: a shifter.
        wire signed [E_W:0] e_ext = {e_in[E_W-1], e_in};
        wire signed [T_W-1:0] shifted = $signed({{(T_W - E_W - 1){e_ext[E_W]}}, e_ext}) <<< sig_exp;
        wire signed [T_W-1:0] term = sig_zero ? {T_W{1'b0}} : (sig_neg ? -shifted : shifted);
        assign grad_sum = grad_ext + {{(GS_W - T_W){term[T_W-1]}}, term};
        wire unused_signal = ^{signal, sig_onehot};
    end else begin : g_po2_rademacher
        // e = +-1, so Q(s) * e = +-2^exp: add or subtract the shared
        // one-hot 2^exp (0 when s = 0): a + (b ^ neg) + neg, one adder.
        wire neg = sig_neg ^ e_in[E_W-1];
        wire [GS_W-1:0] mag = {{(GS_W - S_W){1'b0}}, sig_onehot};
        assign grad_sum = grad_ext + $signed(mag ^ {GS_W{neg}}) + $signed({{(GS_W - 1){1'b0}}, neg});
        wire unused_signal = ^{signal, sig_zero, sig_exp};
    end
endgenerate

wire [31:0] grad_sat;

fptgen_cast #(
    .IN_W(GS_W), .IN_F(0), .OUT_W(32), .OUT_F(0), .OUT_SIGNED(1), .QUANT(0), .OVF(1)
) u_grad_sat (
    .in(grad_sum),
    .out(grad_sat)
);

assign grad_out = clear ? 32'd0 : (acc_en ? grad_sat : grad_in);

endmodule

`resetall
