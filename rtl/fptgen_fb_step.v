/*
 * fptgen RTL library: the step unit of a feedback-rule layer (fptgen_fb_layer,
 * fptgen_fb_conv; docs/training.md, "Feedback rules" and "Stochastic
 * rounding").
 *
 * Every cycle step_reg takes v's power-of-two step, saturated to S_W bits
 * (fptgen_round_shift): R(v, SHIFT_W) for a weight (u_bias = 0), R(v,
 * SHIFT_B) for a bias (u_bias = 1). A tensor with STOCH_* = 1 rounds
 * stochastically, floor((v + r) / 2^SHIFT), r from its own 32-bit LFSR
 * (fptgen_lfsr, reset to SEED_*): min(SHIFT, 32) fresh output bits, the
 * first in the least significant position, shifted left by the rest of
 * SHIFT. The LFSR moves on to the next bits when a parameter of its
 * tensor is written (u_wr with u_bias selecting the tensor), so the k-th
 * written parameter of a tensor gets the k-th draw
 * (fptgen_sim::train::feedback::stochastic_shift).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_fb_step #(
    // Bits of v, two's complement (>= 2)
    parameter integer IN_W = 16,
    // Shifts of the weight and bias steps (signed, |k| <= 64)
    parameter integer SHIFT_W = 0,
    parameter integer SHIFT_B = 0,
    // Bits of the saturated step (>= 2)
    parameter integer S_W = 10,
    // 1: the tensor's steps round stochastically (its SHIFT > 0)
    parameter integer STOCH_W = 0,
    parameter integer STOCH_B = 0,
    // Initial states of the rounding LFSRs (nonzero; unused without STOCH)
    parameter [31:0] SEED_W = 32'h1,
    parameter [31:0] SEED_B = 32'h1
) (
    input  wire             clk,
    input  wire             rst,
    // The product or sum to step from
    input  wire [IN_W-1:0]  v,
    // The parameter is a bias (else a weight)
    input  wire             u_bias,
    // A parameter of this layer is written (the rounding LFSR moves on)
    input  wire             u_wr,
    output wire [S_W-1:0]   u_step
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if ((STOCH_W != 0 && SHIFT_W <= 0) || (STOCH_B != 0 && SHIFT_B <= 0)) begin : g_error_stochastic_shift
        fptgen_param_error_fb_step_stochastic_needs_positive_shift error_inst ();
    end
endgenerate

wire [2*S_W-1:0] steps;   // the weight step at [0 +: S_W], the bias step above

genvar t;
generate
    for (t = 0; t < 2; t = t + 1) begin : g_tensor
        // t = 0: the weights, t = 1: the biases
        localparam integer SHIFT = t == 0 ? SHIFT_W : SHIFT_B;
        localparam integer STOCH = t == 0 ? STOCH_W : STOCH_B;
        localparam [31:0] SEED = t == 0 ? SEED_W : SEED_B;
        localparam integer RND_W = STOCH != 0 && SHIFT > 0 ? SHIFT : 1;
        wire [RND_W-1:0] rnd;
        if (STOCH != 0 && SHIFT > 0) begin : g_lfsr
            localparam integer BITS = SHIFT < 32 ? SHIFT : 32;
            wire [BITS-1:0] bits;
            fptgen_lfsr #(.WIDTH(32), .SEED(SEED), .BITS(BITS)) u_lfsr (
                .clk(clk), .rst(rst), .next(u_wr && (t == 1 ? u_bias : !u_bias)), .value(bits)
            );
            if (SHIFT > 32) begin : g_wide
                assign rnd = {bits, {(SHIFT - 32){1'b0}}};
            end else begin : g_narrow
                assign rnd = bits;
            end
        end else begin : g_no_lfsr
            assign rnd = 1'b0;
        end
        fptgen_round_shift #(.IN_W(IN_W), .SHIFT(SHIFT), .OUT_W(S_W), .STOCH(STOCH), .RND_W(RND_W)) u_round (
            .v(v), .rnd(rnd), .r(steps[t*S_W +: S_W])
        );
    end
    if (STOCH_W == 0 && STOCH_B == 0) begin : g_no_rounding_lfsr
        wire unused_wr = ^{rst, u_wr};
    end
endgenerate

reg [S_W-1:0] step_reg;

always @(posedge clk) begin
    step_reg <= u_bias ? steps[S_W +: S_W] : steps[0 +: S_W];
end

assign u_step = step_reg;

endmodule

`resetall
