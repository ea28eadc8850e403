/*
 * fptgen RTL library: R(v, k), a power-of-two step of the feedback rules
 * (docs/training.md, "Feedback rules"; fptgen_sim::train::feedback::round_shift).
 *
 * r = v / 2^SHIFT rounded to the nearest integer, ties to even, for
 * SHIFT > 0 (with STOCH = 1: floor((v + rnd) / 2^SHIFT), stochastic
 * rounding, rnd the SHIFT random bits the caller gives;
 * fptgen_sim::train::feedback::stochastic_shift); v itself for SHIFT = 0;
 * v * 2^-SHIFT for SHIFT < 0. The
 * result saturates to OUT_W bits (two's complement): the caller subtracts
 * it from an OUT_W - 2 bit parameter and clamps, and a step saturated at
 * +-2^(OUT_W-1) gives the same clamped value as the exact one. v is a
 * signed IN_W-bit value. Combinational.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_round_shift #(
    // Bits of v, two's complement (>= 2)
    parameter integer IN_W = 16,
    // k: a right shift with rounding (> 0), none (0) or a left shift (< 0);
    // |k| <= 64
    parameter integer SHIFT = 1,
    // Bits of the saturated result (>= 2)
    parameter integer OUT_W = 10,
    // 1: stochastic rounding (SHIFT > 0), 0: to nearest
    parameter integer STOCH = 0,
    // Bits of rnd: SHIFT when STOCH = 1, else 1 (unused)
    parameter integer RND_W = 1
) (
    input  wire [IN_W-1:0]  v,
    input  wire [RND_W-1:0] rnd,
    output wire [OUT_W-1:0] r
);

localparam integer K = SHIFT > 0 ? SHIFT : 0;     // right shift
localparam integer L = SHIFT < 0 ? -SHIFT : 0;    // left shift
localparam integer X_W0 = IN_W + L + 1;           // holds v * 2^L and v / 2^K + 1
localparam integer X_W = X_W0 > OUT_W ? X_W0 : OUT_W;

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (IN_W < 2 || OUT_W < 2 || SHIFT > 64 || SHIFT < -64) begin : g_error_out_of_range
        fptgen_param_error_round_shift_out_of_range error_inst ();
    end
    // Stochastic: SHIFT > 0 and RND_W = SHIFT; to nearest: RND_W = 1.
    if (STOCH != 0 ? (SHIFT <= 0 || RND_W != SHIFT) : RND_W != 1) begin : g_error_rnd_w
        fptgen_param_error_round_shift_rnd_w_mismatch error_inst ();
    end
endgenerate

wire [X_W-1:0] x;   // the exact result, sign-extended to X_W bits

generate
    if (SHIFT > 0) begin : g_right
        // Sign-extend v by K bits so that every dropped bit exists.
        wire [IN_W+K-1:0] ve = {{K{v[IN_W-1]}}, v};
        wire [IN_W-1:0]   q = ve[IN_W+K-1:K];          // floor(v / 2^K)
        wire              up;
        if (STOCH != 0) begin : g_stochastic
            // Up when the dropped part plus rnd carries into bit K.
            wire [K:0] sum = {1'b0, ve[K-1:0]} + {1'b0, rnd};
            assign up = sum[K];
        end else begin : g_nearest
            wire half = ve[K-1];
            wire odd = q[0];
            wire low;
            if (K > 1) begin : g_low
                assign low = |ve[K-2:0];
            end else begin : g_no_low
                assign low = 1'b0;
            end
            // Up when the dropped part exceeds one half, or is one half and q is odd.
            assign up = half && (low || odd);
            wire unused_rnd = ^rnd;
        end
        assign x = {{(X_W - IN_W){q[IN_W-1]}}, q} + {{(X_W - 1){1'b0}}, up};
    end else begin : g_left
        wire [X_W-1:0] vx = {{(X_W - IN_W){v[IN_W-1]}}, v};
        assign x = vx << L;
        wire unused_rnd = ^rnd;
    end
endgenerate

// Saturate: x fits when its bits above OUT_W - 1 all equal its sign bit.
wire [X_W-OUT_W:0] top = x[X_W-1:OUT_W-1];
wire fits = (&top) || !(|top);
wire [OUT_W-1:0] max_code = {1'b0, {(OUT_W - 1){1'b1}}};
wire [OUT_W-1:0] min_code = {1'b1, {(OUT_W - 1){1'b0}}};

assign r = fits ? x[OUT_W-1:0] : (x[X_W-1] ? min_code : max_code);

endmodule

`resetall
