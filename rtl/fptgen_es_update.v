/*
 * fptgen RTL library: perturbation and update of one trainable parameter.
 *
 * The ES trainer writes the parameter memory one parameter at a time, so
 * one instance serves all incremental-training blocks (docs/training.md,
 * "Hardware"). For the selected block:
 *   perturbed = clamp(param + (+-e << SIGMA))   (-e when negate is high)
 *   updated   = clamp(param - step)
 * where step = R(grad / 2^LR_SHIFT) comes from fptgen_es_step (the top
 * level registers it, one cycle ahead, so that the rounding is off this
 * path).
 * clamp(v) = min(max(v, lo), hi), with the bounds of the parameter's own
 * format (lo = min_raw, or -max_raw for a signed AP_SAT_SYM format), so one
 * instance serves tensors of different formats. The bounds must satisfy
 * lo <= hi (every format's do): the unit picks lo for v < lo, else hi for
 * v > hi, which is that clamp only then. Parameters and bounds are
 * signed P_W-bit raw codes (an unsigned format is zero-extended by one
 * bit). The sums are exact.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_es_update #(
    // Width of the signed parameter codes and bounds (1..65)
    parameter integer P_W = 9,
    // Width of the signed noise value (fptgen_itb's noise output: 3 for
    // rademacher, b + 2 for b-bit uniform; 2..34)
    parameter integer E_W = 3,
    // A noise value moves a parameter by e << SIGMA codes (0..31)
    parameter integer SIGMA = 0,
    // The update's shift (-31..31), which sets the step's width
    parameter integer LR_SHIFT = 4
) (
    input  wire [P_W-1:0] param,
    input  wire [P_W-1:0] lo,
    input  wire [P_W-1:0] hi,
    input  wire [E_W-1:0] noise,
    input  wire           negate,
    // fptgen_es_step's step for LR_SHIFT: 33 bits, plus -LR_SHIFT for a
    // negative shift
    input  wire [32+(LR_SHIFT < 0 ? -LR_SHIFT : 0):0] step,
    output wire [P_W-1:0] perturbed,
    output wire [P_W-1:0] updated
);

localparam integer D_W = E_W + 1 + SIGMA;                      // +-e << SIGMA
localparam integer M_W = P_W > D_W ? P_W : D_W;
localparam integer ST_W = 33 + (LR_SHIFT < 0 ? -LR_SHIFT : 0);   // the step
localparam integer S_W = (M_W > ST_W ? M_W : ST_W) + 1;          // exact sums

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (P_W < 1 || P_W > 65 || E_W < 2 || E_W > 34 || SIGMA < 0 || SIGMA > 31 ||
            LR_SHIFT < -31 || LR_SHIFT > 31) begin : g_error_out_of_range
        fptgen_param_error_es_update_out_of_range error_inst ();
    end
endgenerate

wire signed [E_W:0] e_pert = negate ? -{noise[E_W-1], noise} : {noise[E_W-1], noise};
wire signed [S_W-1:0] delta = {{(S_W - E_W - 1){e_pert[E_W]}}, e_pert} <<< SIGMA;
wire signed [S_W-1:0] p_ext = {{(S_W - P_W){param[P_W-1]}}, param};
wire signed [S_W-1:0] lo_ext = {{(S_W - P_W){lo[P_W-1]}}, lo};
wire signed [S_W-1:0] hi_ext = {{(S_W - P_W){hi[P_W-1]}}, hi};
wire signed [S_W-1:0] step_ext = {{(S_W - ST_W){step[ST_W-1]}}, step};

wire signed [S_W-1:0] pert_sum = p_ext + delta;
wire signed [S_W-1:0] upd_diff = p_ext - step_ext;

// Clamped values: within [lo, hi], so the low P_W bits are the whole value.
wire signed [S_W-1:0] pert_c = pert_sum < lo_ext ? lo_ext : (pert_sum > hi_ext ? hi_ext : pert_sum);
wire signed [S_W-1:0] upd_c = upd_diff < lo_ext ? lo_ext : (upd_diff > hi_ext ? hi_ext : upd_diff);
assign perturbed = pert_c[P_W-1:0];
assign updated = upd_c[P_W-1:0];
wire unused_high = ^{pert_c[S_W-1:P_W], upd_c[S_W-1:P_W]};

endmodule

`resetall
