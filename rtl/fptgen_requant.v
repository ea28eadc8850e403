/*
 * fptgen RTL library: int8 requantization, TFLite's
 * MultiplyByQuantizedMultiplier, output offset and clamp, pipelined
 * (docs/numerics.md, "Int8 requantization").
 *
 * For a signed 32-bit accumulator x, a multiplier m (0 .. 2^31-1) and a
 * shift s (-31 .. 30), the real scale being m * 2^(s - 31):
 *
 *   ROUNDING = 0 (single rounding, TFLITE_SINGLE_ROUNDING, the default):
 *     r = (x * m + 2^(t-1)) >> t, t = 31 - s (1 .. 62), in 64 bits;
 *   ROUNDING = 1 (double rounding, gemmlowp):
 *     r = RoundingDivideByPOT(SRDHM(x << max(s, 0), m), max(-s, 0)), where
 *     x << left wraps in 32 bits, SRDHM(a, b) = floor(a * b / 2^31 + 1/2)
 *     (ties toward +infinity; its one saturating case, a = b = -2^31,
 *     cannot occur since m >= 0) and RoundingDivideByPOT rounds to
 *     nearest, ties away from zero;
 *
 * then y = r[31:0] + OUT_ZP (wrapping in 32 bits, as the simulator's
 * wrapping_add) clamped to ACT_MIN .. ACT_MAX, as an OUT_W-bit code.
 * fptgen_sim::int8 (QuantizedMultiplier::apply) is the definition, itself
 * checked against LiteRT's reference kernels; generator/tests/rtl/requant.rs
 * checks this module against it.
 *
 * Single rounding uses floor((P + 2^(t-1)) / 2^t) = floor((floor(P / 2^(t-1))
 * + 1) / 2), so no variable rounding constant is added to the 63-bit
 * product: one barrel shift, then an increment and a fixed shift.
 *
 * Pipeline. LATENCY = 6 enabled edges from inputs to y, one value per
 * enabled cycle; en low freezes every stage (the caller's stall), in_valid
 * travels with the data to out_valid. Stages: input registers; the left
 * shift (double rounding); four partial products of x * m (a 32 x 31
 * multiply as 16 x 16, 16 x 15, 16 x 16 and 16 x 15 products, each within
 * one 18 x 18 multiplier: ECP5's MULT18X18D, a DSP48E2), registered; their
 * sum; the first shift; the rounding step; offset and clamp. Splitting the
 * product keeps the multipliers' carry chains apart from the sum's
 * (routed on ECP5, the whole 32 x 31 product in one stage was a 12 ns path,
 * docs/results/ecp5.md).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_requant #(
    // 0: single rounding (TFLITE_SINGLE_ROUNDING); 1: double rounding (gemmlowp)
    parameter integer ROUNDING = 0,
    // Output code width (8 for int8), 2 .. 32
    parameter integer OUT_W = 8,
    // Output zero point, added after the multiply
    parameter integer OUT_ZP = 0,
    // Activation clamp, ACT_MIN <= ACT_MAX, both within signed OUT_W bits
    parameter integer ACT_MIN = -128,
    parameter integer ACT_MAX = 127
) (
    input  wire                    clk,
    input  wire                    rst,
    // Advance the pipeline this cycle
    input  wire                    en,
    input  wire                    in_valid,
    // The int32 accumulator
    input  wire signed [31:0]      x,
    // The multiplier, 0 .. 2^31-1
    input  wire [30:0]             mult,
    // The shift, -31 .. 30 (two's complement)
    input  wire signed [5:0]       shift,
    output wire                    out_valid,
    output wire signed [OUT_W-1:0] y
);

localparam integer LATENCY = 6;

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (ROUNDING != 0 && ROUNDING != 1) begin : g_error_rounding
        fptgen_param_error_requant_rounding_not_0_or_1 error_inst ();
    end
    if (OUT_W < 2 || OUT_W > 32) begin : g_error_width
        fptgen_param_error_requant_out_w_out_of_range error_inst ();
    end
    if (ACT_MIN > ACT_MAX || ACT_MIN < -(2 ** (OUT_W - 1)) || ACT_MAX > 2 ** (OUT_W - 1) - 1) begin : g_error_clamp
        fptgen_param_error_requant_clamp_out_of_range error_inst ();
    end
endgenerate

// Valid bits, one per stage.
reg [LATENCY-1:0] valid_reg;

// Stage 1: input registers.
reg signed [31:0] x1_reg;
reg        [30:0] m1_reg;
reg signed [5:0]  s1_reg;

// Stage 2: the multiplicand (x, or x << left for double rounding).
reg signed [31:0] a2_reg;
reg        [30:0] m2_reg;
reg signed [5:0]  s2_reg;

// Stage 3: the partial products of a = ah * 2^16 + al (ah signed, al
// unsigned) and m = mh * 2^16 + ml (both unsigned):
// a * m = ah*mh * 2^32 + (ah*ml + al*mh) * 2^16 + al*ml.
reg        [31:0] ll3_reg;   // al * ml, 0 .. (2^16-1)^2
reg        [30:0] lh3_reg;   // al * mh, 0 .. (2^16-1)(2^15-1)
reg signed [31:0] hl3_reg;   // ah * ml, |.| < 2^31
reg signed [31:0] hh3_reg;   // ah * mh
reg signed [5:0]  s3_reg;

// Stage 4: the product, 63 bits signed.
reg signed [62:0] p4_reg;
reg signed [5:0]  s4_reg;

// Stage 5: single rounding: P >> (t - 1); double: q = SRDHM's result.
reg signed [62:0] q5_reg;
reg signed [5:0]  s5_reg;

// Stage 6 output: offset and clamp.
reg signed [OUT_W-1:0] y_reg;

// Double rounding's shifts: left = max(s, 0), right = max(-s, 0).
wire [5:0] left2  = s1_reg[5] ? 6'd0 : s1_reg;
// Single rounding's first shift, t - 1 = 30 - s (0 .. 61).
wire [5:0] t_minus_1 = 6'd30 - s4_reg;

// Stage 3's operands: each product within 18 x 18 bits, signed.
wire signed [16:0] al3 = $signed({1'b0, a2_reg[15:0]});
wire signed [16:0] ah3 = $signed({a2_reg[31], a2_reg[31:16]});
wire signed [16:0] ml3 = $signed({1'b0, m2_reg[15:0]});
wire signed [16:0] mh3 = $signed({2'b00, m2_reg[30:16]});
wire signed [33:0] ll3 = al3 * ml3;
wire signed [33:0] lh3 = al3 * mh3;
wire signed [33:0] hl3 = ah3 * ml3;
wire signed [33:0] hh3 = ah3 * mh3;

// Stage 4's value: the high and low products side by side (they do not
// overlap: al * ml < 2^32), plus the middle ones at 2^16.
wire signed [62:0] ends4 = {hh3_reg[30:0], ll3_reg};
wire signed [33:0] mid4 = {{2{hl3_reg[31]}}, hl3_reg} + {3'b000, lh3_reg};
wire signed [62:0] p4_next = ends4 + {{13{mid4[33]}}, mid4, 16'd0};

// Stage 5's value.
wire signed [62:0] p_nudged = p4_reg + 63'sd1073741824; // + 2^30
wire signed [62:0] q5_next = (ROUNDING == 0) ? (p4_reg >>> t_minus_1) : (p_nudged >>> 31);

// Stage 6's value: the rounding step.
// Single: (q + 1) >> 1. Double: RoundingDivideByPOT(q[31:0], right).
wire signed [62:0] single_r = (q5_reg + 63'sd1) >>> 1;
wire signed [31:0] q32 = q5_reg[31:0];
wire [5:0] right6 = s5_reg[5] ? -s5_reg : 6'd0;
wire [31:0] pot_mask = (right6 >= 6'd32) ? 32'hFFFF_FFFF : ((32'd1 << right6) - 32'd1);
wire [31:0] remainder = q32 & pot_mask;
wire [31:0] threshold = (pot_mask >> 1) + {31'd0, q32[31]};
// (Both terms signed: an unsigned one would make >>> a logical shift.)
wire signed [31:0] double_r = (q32 >>> right6) + $signed({31'd0, (remainder > threshold)});
wire signed [31:0] r6 = (ROUNDING == 0) ? single_r[31:0] : double_r;
wire signed [31:0] off6 = r6 + OUT_ZP;
wire signed [31:0] act_min32 = ACT_MIN;
wire signed [31:0] act_max32 = ACT_MAX;
wire signed [31:0] clamped6 = (off6 < act_min32) ? act_min32 : ((off6 > act_max32) ? act_max32 : off6);

always @(posedge clk) begin
    if (en) begin
        x1_reg <= x;
        m1_reg <= mult;
        s1_reg <= shift;

        a2_reg <= (ROUNDING == 0) ? x1_reg : (x1_reg <<< left2);
        m2_reg <= m1_reg;
        s2_reg <= s1_reg;

        ll3_reg <= ll3[31:0];
        lh3_reg <= lh3[30:0];
        hl3_reg <= hl3[31:0];
        hh3_reg <= hh3[31:0];
        s3_reg <= s2_reg;
        p4_reg <= p4_next;
        s4_reg <= s3_reg;

        q5_reg <= q5_next;
        s5_reg <= s4_reg;

        y_reg <= clamped6[OUT_W-1:0];
    end
end

always @(posedge clk) begin
    if (rst) begin
        valid_reg <= {LATENCY{1'b0}};
    end else if (en) begin
        valid_reg <= {valid_reg[LATENCY-2:0], in_valid};
    end
end

assign out_valid = valid_reg[LATENCY-1];
assign y = y_reg;

// Bits not needed: the high bits of the single-rounding result (r wraps to
// 32 bits) and of the clamped value (it fits OUT_W bits).
// Bits of the partial products that are known: the sign bits the 34-bit
// products repeat, and hh's top bit (|ah * mh| < 2^30, so bit 31 repeats
// bit 30).
wire unused_bits = &{1'b0, single_r[62:32], clamped6, ll3[33:32], lh3[33:31], hl3[33:32], hh3[33:32], hh3_reg[31]};

endmodule

`resetall
