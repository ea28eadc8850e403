/*
 * fptgen RTL library: the deltas of one trainable layer of a feedback-rule
 * trainer (training: rule: dfa, drtp or sgm; docs/training.md, "Feedback
 * rules"; fptgen_sim::train::feedback is the definition). Used by
 * fptgen_fb_layer (dense) and fptgen_fb_conv (conv2d).
 *
 * After d_seed (which reloads the feedback LFSR with SEED), the controller
 * gives N_OUT * C steps (d_step), output o = 0, 1, ... in turn and for each
 * its classes k = 0 .. C - 1 (d_k, d_last at k = C - 1), with the error
 * e[k] (d_e) and whether k is the target class (d_kstar). Each step adds
 * one term of g[o]:
 *   MODE 0 (the network's output layer)  e[o]: the term of k = o;
 *   MODE 1 (dfa, a hidden layer)          B[o][k] * e[k];
 *   MODE 2 (drtp, a hidden layer)         -B[o][k] at k = k*;
 *   MODE 3 (sgm, a hidden layer)          u[o][k] * h[k] (s_u, s_h: the
 *                                         layer's fptgen_fb_sgm), and the
 *                                         sum is R(g[o], SHIFT_G);
 * B[o][k] = +1 when the LFSR's next output bit is 1, else -1, one bit per
 * step in modes 1 and 2 (the order o, k of feedback_matrix). At d_last,
 * d_value = fp ? g[o] : 0 (mode 3: fp ? R(g[o], SHIFT_G) : 0), fp being
 * f'(o) as the parent keeps it, and d_push marks it. d_value is
 * combinational from the registers and the current step's inputs (the
 * term of the step at d_last is in it). D_W must hold the exact sum
 * (the generator uses E_W + clog2(C) + 1, plus 8 in an sgm trainer); a
 * narrower D_W wraps modulo 2^D_W.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_fb_delta #(
    // Outputs of the layer (>= 1)
    parameter integer N_OUT = 3,
    // Outputs of the network: classes of the error (>= 1)
    parameter integer C = 2,
    // 0: the output layer; 1: dfa; 2: drtp; 3: sgm
    parameter integer MODE = 1,
    // Feedback LFSR seed (32 bits, nonzero)
    parameter [31:0] SEED = 32'h1,
    // Bits of an error value and of a delta, two's complement
    parameter integer E_W = 9,
    parameter integer D_W = 13,
    // MODE 3: R's shift of g (0 .. 31)
    parameter integer SHIFT_G = 0
) (
    input  wire                 clk,
    input  wire                 rst,
    input  wire                 d_seed,
    input  wire                 d_step,
    input  wire [clog2(C)-1:0]  d_k,
    input  wire                 d_last,
    input  wire                 d_kstar,
    input  wire [E_W-1:0]       d_e,
    // MODE 3: h[k] and u[o][k] of the step (else unused)
    input  wire [E_W-1:0]       s_h,
    input  wire [7:0]           s_u,
    // f'(o) of the current output
    input  wire                 fp,
    output wire [D_W-1:0]       d_value,
    output wire                 d_push
);

`include "fptgen_clog2.vh"

localparam integer OW = clog2(N_OUT);
localparam integer KW = clog2(C);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (N_OUT < 1 || C < 1 || MODE < 0 || MODE > 3 || (MODE == 0 && N_OUT != C) || E_W < 2 || D_W < E_W ||
            (MODE == 3 && D_W < E_W + 8 + clog2(C)) || SHIFT_G < 0 || SHIFT_G > 31 || SEED == 32'h0) begin : g_error_out_of_range
        fptgen_param_error_fb_delta_out_of_range error_inst ();
    end
endgenerate

wire lfsr_bit;

fptgen_lfsr #(
    .WIDTH(32),
    .SEED(SEED),
    .BITS(1)
) u_lfsr (
    .clk(clk),
    .rst(rst || d_seed),
    .next(d_step && (MODE == 1 || MODE == 2)),
    .value(lfsr_bit)
);

reg [OW-1:0]  o_reg;      // the current output (mode 0 compares it with k)
reg [D_W-1:0] g_reg;      // g[o] so far
wire [D_W-1:0] e_ext = {{(D_W - E_W){d_e[E_W-1]}}, d_e};
wire [D_W-1:0] one = {{(D_W - 1){1'b0}}, 1'b1};
wire [31:0] o32 = {{(32 - OW){1'b0}}, o_reg};
wire [31:0] k32 = {{(32 - KW){1'b0}}, d_k};
reg  [D_W-1:0] term;
// MODE 3: u[o][k] * h[k], exact in E_W + 8 bits.
wire [D_W-1:0] s_term;

generate
    if (MODE == 3) begin : g_sgm_term
        wire signed [E_W+7:0] s_prod = $signed(s_u) * $signed(s_h);
        assign s_term = {{(D_W - E_W - 8){s_prod[E_W+7]}}, s_prod};
    end else begin : g_no_sgm
        assign s_term = {D_W{1'b0}};
        wire unused_s = ^{s_u, s_h};
    end
endgenerate

always @(*) begin
    if (MODE == 0) begin
        term = o32 == k32 ? e_ext : {D_W{1'b0}};
    end else if (MODE == 1) begin
        term = lfsr_bit ? e_ext : -e_ext;
    end else if (MODE == 2) begin
        term = d_kstar ? (lfsr_bit ? -one : one) : {D_W{1'b0}};
    end else begin
        term = s_term;
    end
end

wire [D_W-1:0] g_next = (d_k == {KW{1'b0}} ? {D_W{1'b0}} : g_reg) + term;
wire [D_W-1:0] g_out;

fptgen_round_shift #(.IN_W(D_W), .SHIFT(MODE == 3 ? SHIFT_G : 0), .OUT_W(D_W)) u_round_g (.v(g_next), .rnd(1'b0), .r(g_out));

assign d_value = fp ? g_out : {D_W{1'b0}};
assign d_push = d_step && d_last;

always @(posedge clk) begin
    if (rst || d_seed) begin
        o_reg <= {OW{1'b0}};
        g_reg <= {D_W{1'b0}};
    end else if (d_step) begin
        g_reg <= g_next;
        if (d_last) begin
            o_reg <= o_reg + 1'b1;
        end
    end
end

endmodule

`resetall
