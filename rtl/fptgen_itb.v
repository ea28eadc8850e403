/*
 * fptgen RTL library: incremental-training block (ITB) of the ES trainer.
 *
 * One block owns one trainable parameter at a time (docs/training.md):
 *   - draw latches a noise value e from NOISE_BITS fresh LFSR bits
 *     (rademacher: e = bit ? +1 : -1; uniform: the bits as a two's
 *     complement number);
 *   - perturbed = clamp(param + (+-e << SIGMA)), with -e when negate is high
 *     (the odd member of an antithetic pair);
 *   - acc_en adds Q(s) * e to the saturating 32-bit gradient accumulator G:
 *     with EXACT = 0, Q(s) = +-2^exp from fptgen_po2 and the product is a
 *     shift; with EXACT = 1 it is a multiplication by s;
 *   - updated = clamp(param - R(G / 2^LR_SHIFT)), R rounding to nearest
 *     with ties to even; clear zeroes G.
 * clamp keeps a raw code of the parameter's format (P_W bits, signed or
 * not; from -max for a signed AP_SAT_SYM format, P_SYM = 1). All intermediate values are wide enough to be exact; every
 * saturation and rounding is an fptgen_cast.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_itb #(
    // Parameter width and signedness (1: two's complement)
    parameter integer P_W = 8,
    parameter integer P_S = 1,
    // 1: the parameter's format is signed AP_SAT_SYM, whose most negative
    // code no conversion produces: clamping stops at -(2^(P_W-1) - 1)
    parameter integer P_SYM = 0,
    // 0: rademacher (NOISE_BITS = 1); 1: uniform (NOISE_BITS-bit values)
    parameter integer UNIFORM = 0,
    // Fresh noise bits per value
    parameter integer NOISE_BITS = 1,
    // Perturbation shift sigma
    parameter integer SIGMA = 0,
    // Learning-rate shift
    parameter integer LR_SHIFT = 4,
    // 0: power-of-two loss quantization (shift); 1: exact (multiply)
    parameter integer EXACT = 0,
    // Fitness signal width
    parameter integer S_W = 33,
    // Exponent width of fptgen_po2
    parameter integer EXP_W = 6
) (
    input  wire             clk,
    input  wire             rst,

    input  wire [NOISE_BITS-1:0] noise_bits,
    input  wire             draw,
    input  wire             negate,

    input  wire [P_W-1:0]   param,
    output wire [P_W-1:0]   perturbed,

    input  wire             acc_en,
    input  wire [S_W-1:0]   signal,
    input  wire             sig_zero,
    input  wire             sig_neg,
    input  wire [EXP_W-1:0] sig_exp,
    input  wire             clear,

    output wire [P_W-1:0]   updated,
    output wire [31:0]      grad
);

localparam integer E_W = UNIFORM != 0 ? NOISE_BITS : 2;   // noise value width
localparam integer D_W = E_W + 1 + SIGMA;                  // +-e << SIGMA
localparam integer PS_W = (P_W + 1 > D_W ? P_W + 1 : D_W) + 1;
localparam integer T_W = E_W + S_W + 1;                    // Q(s) * e, exact
localparam integer GS_W = (T_W > 32 ? T_W : 32) + 1;
localparam integer U_W = (P_W + 1 > 33 ? P_W + 1 : 33) + 1;

initial begin
    if (P_W < 1 || P_W > 64 || NOISE_BITS < 1 || NOISE_BITS > 32 ||
            (UNIFORM == 0 && NOISE_BITS != 1) || SIGMA < 0 || SIGMA > 31 ||
            LR_SHIFT < 0 || LR_SHIFT > 31 || S_W < 2 || (S_W - 1) >> EXP_W != 0) begin
        $error("Error: fptgen_itb parameters are out of range (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------------------
// Noise value
reg [E_W-1:0] e_reg;

generate
    if (UNIFORM != 0) begin : g_uniform
        always @(posedge clk) begin
            if (draw) begin
                e_reg <= noise_bits;
            end
        end
    end else begin : g_rademacher
        always @(posedge clk) begin
            if (draw) begin
                e_reg <= noise_bits[0] ? 2'b01 : 2'b11;
            end
        end
    end
endgenerate

wire signed [E_W:0] e_ext = {e_reg[E_W-1], e_reg};

// ---------------------------------------------------------------------------
// Perturbation
wire signed [E_W:0]    e_pert = negate ? -e_ext : e_ext;
wire signed [D_W-1:0]  delta;
generate
    if (SIGMA > 0) begin : g_sigma
        assign delta = {{SIGMA{e_pert[E_W]}}, e_pert} <<< SIGMA;
    end else begin : g_no_sigma
        assign delta = e_pert;
    end
endgenerate
wire signed [P_W:0]    param_ext = {P_S != 0 ? param[P_W-1] : 1'b0, param};
wire signed [PS_W-1:0] pert_sum = {{(PS_W - P_W - 1){param_ext[P_W]}}, param_ext}
                                + {{(PS_W - D_W){delta[D_W-1]}}, delta};

localparam integer CLAMP_OVF = (P_SYM != 0 && P_S != 0) ? 3 : 1;   // AP_SAT_SYM or AP_SAT

fptgen_cast #(
    .IN_W(PS_W), .IN_F(0), .OUT_W(P_W), .OUT_F(0), .OUT_SIGNED(P_S), .QUANT(0), .OVF(CLAMP_OVF)
) u_pert_clamp (
    .in(pert_sum),
    .out(perturbed)
);

// ---------------------------------------------------------------------------
// Gradient accumulator
reg  [31:0]           grad_reg;
wire signed [T_W-1:0] term;

generate
    if (EXACT != 0) begin : g_exact
        assign term = $signed(signal) * e_ext;
        wire unused_po2 = ^{sig_zero, sig_neg, sig_exp};
    end else begin : g_po2
        wire signed [T_W-1:0] shifted = $signed({{(T_W - E_W - 1){e_ext[E_W]}}, e_ext}) <<< sig_exp;
        assign term = sig_zero ? {T_W{1'b0}} : (sig_neg ? -shifted : shifted);
        wire unused_signal = ^signal;
    end
endgenerate

wire signed [GS_W-1:0] grad_sum = {{(GS_W - 32){grad_reg[31]}}, grad_reg}
                                + {{(GS_W - T_W){term[T_W-1]}}, term};
wire [31:0] grad_next;

fptgen_cast #(
    .IN_W(GS_W), .IN_F(0), .OUT_W(32), .OUT_F(0), .OUT_SIGNED(1), .QUANT(0), .OVF(1)
) u_grad_sat (
    .in(grad_sum),
    .out(grad_next)
);

always @(posedge clk) begin
    if (rst || clear) begin
        grad_reg <= 32'd0;
    end else if (acc_en) begin
        grad_reg <= grad_next;
    end
end

assign grad = grad_reg;

// ---------------------------------------------------------------------------
// Update: param - R(G / 2^LR_SHIFT), clamped
wire [32:0] step;

fptgen_cast #(
    .IN_W(32), .IN_F(LR_SHIFT), .OUT_W(33), .OUT_F(0), .OUT_SIGNED(1), .QUANT(6), .OVF(0)
) u_step_round (
    .in(grad_reg),
    .out(step)
);

wire signed [U_W-1:0] upd_diff = {{(U_W - P_W - 1){param_ext[P_W]}}, param_ext}
                               - {{(U_W - 33){step[32]}}, step};

fptgen_cast #(
    .IN_W(U_W), .IN_F(0), .OUT_W(P_W), .OUT_F(0), .OUT_SIGNED(P_S), .QUANT(0), .OVF(CLAMP_OVF)
) u_upd_clamp (
    .in(upd_diff),
    .out(updated)
);

endmodule

`resetall
