/*
 * fptgen RTL library: perturbation and update of one trainable parameter.
 *
 * The ES trainer writes the parameter memory one parameter at a time, so
 * one instance serves all incremental-training blocks (docs/training.md,
 * "Hardware"). For the selected block:
 *   perturbed = clamp(param + (+-e << SIGMA))   (-e when negate is high)
 *   updated   = clamp(param - step)
 * where step = R(grad / 2^LR_SHIFT) comes from fptgen_es_step. The ES
 * trainer's top level feeds the unit a cycle before the write (the block's
 * committed value read ahead, its noise value at the ring's unit, the
 * bounds of the next cycle's tensor, the step registered a cycle before
 * that) and registers both results, so that the memories' write data
 * leave flip-flops and the rounding is a path of its own (issue 37).
 * clamp(v) = min(max(v, lo), hi), with the bounds of the parameter's own
 * format (lo = min_raw, or -max_raw for a signed AP_SAT_SYM format), so one
 * instance serves tensors of different formats. The bounds must satisfy
 * lo <= hi (every format's do): the unit picks lo for v < lo, else hi for
 * v > hi, which is that clamp only then. Parameters and bounds are
 * signed P_W-bit raw codes (an unsigned format is zero-extended by one
 * bit). The sums are exact, each only as wide as it needs: the
 * perturbation's max(P_W, E_W + 1 + SIGMA) + 1 bits; the update's P_W + 2
 * for a step within [-2^P_W, 2^P_W - 1] (P_W + 1 bits), while a step
 * beyond it gives a bound directly, since the parameter is a P_W-bit
 * code: p - s < -2^(P_W-1) <= lo for s >= 2^P_W (lo), and
 * p - s > 2^(P_W-1) - 1 >= hi for s < -2^P_W (hi); so the update's carry
 * chains are not those of the 33-bit step.
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
localparam integer PS_W = M_W + 1;                               // the perturbed sum
// The update: the step's sign and bits P_W..ST_W-2 decide whether it is
// beyond [-2^P_W, 2^P_W - 1] (SAT = 1; needs ST_W >= P_W + 3); within it,
// the step is P_W + 1 bits and the difference P_W + 2
localparam integer SAT = ST_W >= P_W + 3 ? 1 : 0;
localparam integer U_W = SAT != 0 ? P_W + 2 : (P_W > ST_W ? P_W : ST_W) + 1;
localparam integer SS_W = SAT != 0 ? P_W + 1 : ST_W;               // the step used

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (P_W < 1 || P_W > 65 || E_W < 2 || E_W > 34 || SIGMA < 0 || SIGMA > 31 ||
            LR_SHIFT < -31 || LR_SHIFT > 31) begin : g_error_out_of_range
        fptgen_param_error_es_update_out_of_range error_inst ();
    end
endgenerate

// Perturbation
wire signed [E_W:0] e_pert = negate ? -{noise[E_W-1], noise} : {noise[E_W-1], noise};
wire signed [PS_W-1:0] delta = {{(PS_W - E_W - 1){e_pert[E_W]}}, e_pert} <<< SIGMA;
wire signed [PS_W-1:0] p_ext = {{(PS_W - P_W){param[P_W-1]}}, param};
wire signed [PS_W-1:0] lo_ext = {{(PS_W - P_W){lo[P_W-1]}}, lo};
wire signed [PS_W-1:0] hi_ext = {{(PS_W - P_W){hi[P_W-1]}}, hi};
wire signed [PS_W-1:0] pert_sum = p_ext + delta;

// Update: the step beyond the range (above: the lower bound, below: the
// upper), or within it
wire          st_above;
wire          st_below;
wire [SS_W-1:0] st_in;

generate
    if (SAT != 0) begin : g_saturate
        assign st_above = !step[ST_W-1] && |step[ST_W-2:P_W];
        assign st_below = step[ST_W-1] && !(&step[ST_W-2:P_W]);
        assign st_in = step[P_W:0];
    end else begin : g_full
        assign st_above = 1'b0;
        assign st_below = 1'b0;
        assign st_in = step;
    end
endgenerate

wire signed [U_W-1:0] up_ext = {{(U_W - P_W){param[P_W-1]}}, param};
wire signed [U_W-1:0] ulo_ext = {{(U_W - P_W){lo[P_W-1]}}, lo};
wire signed [U_W-1:0] uhi_ext = {{(U_W - P_W){hi[P_W-1]}}, hi};
wire signed [U_W-1:0] step_ext = {{(U_W - SS_W){st_in[SS_W-1]}}, st_in};
wire signed [U_W-1:0] upd_diff = up_ext - step_ext;

// Clamped values: within [lo, hi], so the low P_W bits are the whole value.
wire signed [PS_W-1:0] pert_c = pert_sum < lo_ext ? lo_ext : (pert_sum > hi_ext ? hi_ext : pert_sum);
wire signed [U_W-1:0] upd_c = st_above ? ulo_ext : (st_below ? uhi_ext :
                              (upd_diff < ulo_ext ? ulo_ext : (upd_diff > uhi_ext ? uhi_ext : upd_diff)));
assign perturbed = pert_c[P_W-1:0];
assign updated = upd_c[P_W-1:0];
wire unused_high = ^{pert_c[PS_W-1:P_W], upd_c[U_W-1:P_W]};

endmodule

`resetall
