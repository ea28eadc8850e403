/*
 * fptgen RTL library: fixed-point cast (ap_fixed / ap_ufixed assignment).
 *
 * Combinational. `in` is a two's complement integer with IN_F fraction
 * bits: its value is in * 2^-IN_F. `out` is the code of that exact value in
 * the target format (OUT_W bits, OUT_F fraction bits, signed or unsigned,
 * quantization mode QUANT, overflow mode OVF), bit for bit the same as
 * fptgen_sim::fixed::Format::quantize_exact(in, IN_F) followed by
 * Format::bits (docs/numerics.md, "Conversion: quantize, then overflow").
 *
 * The two steps always run in this order:
 *
 *   1. Quantize. Measured in output LSBs the value is v = in * 2^-SHIFT with
 *      SHIFT = IN_F - OUT_F. It becomes an integer q per QUANT. No bound
 *      applies to q: it is computed in a width where it cannot wrap.
 *   2. Overflow. q becomes an OUT_W-bit code per OVF: keep the low bits
 *      (wrap), clamp (saturate), zero, or clamp to [-max, max].
 *
 * So 7.9 cast to ap_fixed<4,4,AP_RND,AP_SAT> rounds to 8 first and then
 * saturates to 7 (AP_WRAP gives -8, AP_SAT_ZERO gives 0).
 *
 * Step 1, SHIFT > 0 (SHIFT bits are dropped). Sign-extend `in` as far as
 * needed and split it the way Xilinx's ap_fixed_base does:
 *
 *   t  = in >>> SHIFT        arithmetic shift: floor(v)
 *   qb = bit SHIFT-1 of in   first dropped bit (weight 1/2)
 *   r  = |in[SHIFT-2:0]      any lower dropped bit set
 *   s  = in[IN_W-1]          the source is negative
 *
 * and add one to t exactly when Xilinx's quantization_adjust does:
 *
 *   QUANT  mode             q = t + 1 when
 *   0      AP_TRN           never                 (floor)
 *   1      AP_TRN_ZERO      s & (qb | r)          (toward zero)
 *   2      AP_RND           qb                    (ties toward +inf)
 *   3      AP_RND_ZERO      qb & (s | r)          (ties toward zero)
 *   4      AP_RND_MIN_INF   qb & r                (ties toward -inf)
 *   5      AP_RND_INF       qb & (~s | r)         (ties away from zero)
 *   6      AP_RND_CONV      qb & (t[0] | r)       (ties to even)
 *
 * t has TW = max(IN_W - SHIFT, 1) bits and t + 1 needs one more, so q is
 * TW + 1 bits wide and never wraps. Once SHIFT > IN_W every input bit is
 * dropped: t is -1 or 0, qb = s and r = |in. That holds for any larger
 * SHIFT, so the shift is clamped to DROP = min(SHIFT, IN_W + 1) and huge
 * shifts cost nothing. A 0 bit is appended below `in` (x = {sext(in), 0})
 * so that r is defined (and 0) when exactly one bit is dropped.
 *
 * Step 1, SHIFT <= 0 (a left shift by L = -SHIFT). The value is already an
 * integer: q = in << L, exactly. For L >= OUT_W the low OUT_W bits of q are
 * 0 and every nonzero q lies outside the output range with the sign of
 * `in`, so L is clamped to OUT_W without changing the result.
 *
 * Step 2. q is sign-extended to EW = max(QW, OUT_W + 2) bits (qe). With
 * neg = qe[EW-1]:
 *
 *   signed out:   q > max  <=> ~neg &  |qe[EW-2:OUT_W-1]
 *                 q < min  <=>  neg & ~&qe[EW-2:OUT_W-1]
 *                 q == min <=>  neg &  &qe[EW-2:OUT_W-1] & qe[OUT_W-2:0] == 0
 *   unsigned out: q > max  <=> ~neg &  |qe[EW-2:OUT_W]
 *                 q < min  <=>  neg
 *
 *   OVF  mode         result
 *   0    AP_WRAP      qe[OUT_W-1:0]
 *   1    AP_SAT       max if q > max, min if q < min, else qe[OUT_W-1:0]
 *   2    AP_SAT_ZERO  0 if q > max or q < min, else qe[OUT_W-1:0]
 *   3    AP_SAT_SYM   signed: max if q > max, -max if q < min or q == min
 *                     (the most negative code is never produced; for
 *                     OUT_W = 1 the range is {0}); unsigned: as AP_SAT
 *
 * Bits that a mode ignores (the dropped bits under AP_TRN, the bits below
 * qb under AP_RND, the sign under AP_RND_MIN_INF and AP_RND_CONV, the bits
 * above the word under AP_WRAP) are collected in wires named unused_*,
 * Verilator's idiom for "deliberately unused" (its default
 * --unused-regexp); they drive nothing and synthesis removes them. AP_TRN
 * with AP_WRAP is pure wiring.
 *
 * Illegal parameters (IN_W < 1, OUT_W outside 1..64, OUT_SIGNED, QUANT or
 * OVF out of range) stop elaboration: the failed check instantiates a
 * module that does not exist, fptgen_param_error_cast_<reason>. IN_F and
 * OUT_F may be any integers.
 *
 * Checked bit for bit against the simulator by generator/tests/rtl/cast.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_cast #(
    // Width of `in`, >= 1. `in` is always two's complement: callers sign-
    // or zero-extend unsigned sources by one bit.
    parameter integer IN_W = 16,
    // Fraction bits of `in` (any integer: negative, or larger than IN_W)
    parameter integer IN_F = 8,
    // Width of `out`, 1..64
    parameter integer OUT_W = 8,
    // Fraction bits of `out` (any integer: negative, or larger than OUT_W)
    parameter integer OUT_F = 4,
    // 1: `out` is two's complement (ap_fixed); 0: unsigned (ap_ufixed)
    parameter integer OUT_SIGNED = 1,
    // Quantization mode: 0 AP_TRN, 1 AP_TRN_ZERO, 2 AP_RND, 3 AP_RND_ZERO,
    // 4 AP_RND_MIN_INF, 5 AP_RND_INF, 6 AP_RND_CONV
    parameter integer QUANT = 0,
    // Overflow mode: 0 AP_WRAP, 1 AP_SAT, 2 AP_SAT_ZERO, 3 AP_SAT_SYM
    parameter integer OVF = 0
) (
    input  wire [IN_W-1:0]  in,
    output wire [OUT_W-1:0] out
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (IN_W < 1) begin : g_error_in_w_below_1
        fptgen_param_error_cast_in_w_below_1 error_inst ();
    end
    if (OUT_W < 1 || OUT_W > 64) begin : g_error_out_w_not_1_to_64
        fptgen_param_error_cast_out_w_not_1_to_64 error_inst ();
    end
    if (OUT_SIGNED != 0 && OUT_SIGNED != 1) begin : g_error_out_signed_not_0_or_1
        fptgen_param_error_cast_out_signed_not_0_or_1 error_inst ();
    end
    if (QUANT < 0 || QUANT > 6) begin : g_error_quant_not_0_to_6
        fptgen_param_error_cast_quant_not_0_to_6 error_inst ();
    end
    if (OVF < 0 || OVF > 3) begin : g_error_ovf_not_0_to_3
        fptgen_param_error_cast_ovf_not_0_to_3 error_inst ();
    end
endgenerate

// Quantization modes
localparam integer Q_TRN         = 0;
localparam integer Q_TRN_ZERO    = 1;
localparam integer Q_RND         = 2;
localparam integer Q_RND_ZERO    = 3;
localparam integer Q_RND_MIN_INF = 4;
localparam integer Q_RND_INF     = 5;
localparam integer Q_RND_CONV    = 6;
// Overflow modes
localparam integer O_WRAP        = 0;
localparam integer O_SAT         = 1;
localparam integer O_SAT_ZERO    = 2;
localparam integer O_SAT_SYM     = 3;

// v = in * 2^-SHIFT in output LSBs: SHIFT > 0 drops bits, SHIFT < 0 shifts left
localparam integer SHIFT = IN_F - OUT_F;
// Dropped bits, clamped: every SHIFT > IN_W behaves like IN_W + 1
localparam integer DROP = (SHIFT > IN_W + 1) ? IN_W + 1 : SHIFT;
// Width of t = floor(v) when bits are dropped
localparam integer TW = (IN_W - DROP > 1) ? IN_W - DROP : 1;
// Width of x = {sext(in), 1'b0}: t, qb and the lower dropped bits
localparam integer XW = DROP + TW + 1;
// Left shift, clamped: every -SHIFT >= OUT_W behaves like OUT_W
localparam integer LSHIFT = (-SHIFT > OUT_W) ? OUT_W : -SHIFT;
// Width of the quantized value q; it never wraps
localparam integer QW = (SHIFT <= 0) ? IN_W + LSHIFT :
                        (QUANT == Q_TRN) ? TW : TW + 1;
// Width of the range check: room for a sign bit above the unsigned range
localparam integer EW = (QW > OUT_W + 2) ? QW : OUT_W + 2;

wire [QW-1:0] q;    // step 1: quantized value, two's complement
wire [EW-1:0] qe;   // q sign-extended for the range check

// ---------------------------------------------------------------------------
// Step 1: quantize
generate
    if (SHIFT > 0) begin : g_drop
        wire [XW-1:0] x;        // {sext(in), 1'b0}
        wire [TW-1:0] t;        // floor(v)
        wire          qb;       // first dropped bit
        wire          r;        // any lower dropped bit
        wire          s;        // source sign

        if (XW > IN_W + 1) begin : g_sext
            assign x = {{(XW - IN_W - 1){in[IN_W-1]}}, in, 1'b0};
        end else begin : g_nosext
            assign x = {in, 1'b0};
        end

        assign t  = x[XW-1:DROP+1];
        assign qb = x[DROP];
        assign r  = |x[DROP-1:0];
        assign s  = in[IN_W-1];

        if (QUANT == Q_TRN) begin : g_trn
            // floor(v): the dropped bits do not matter
            wire unused_flags = &{1'b0, qb, r, s, 1'b0};
            assign q = t;
        end else begin : g_round
            wire inc;   // add one to floor(v)
            if (QUANT == Q_TRN_ZERO) begin : g_trn_zero
                assign inc = s & (qb | r);
            end else if (QUANT == Q_RND) begin : g_rnd
                // ties toward +inf: only the half bit matters
                wire unused_flags = &{1'b0, r, s, 1'b0};
                assign inc = qb;
            end else if (QUANT == Q_RND_ZERO) begin : g_rnd_zero
                assign inc = qb & (s | r);
            end else if (QUANT == Q_RND_MIN_INF) begin : g_rnd_min_inf
                // ties toward -inf: the sign does not matter
                wire unused_flags = &{1'b0, s, 1'b0};
                assign inc = qb & r;
            end else if (QUANT == Q_RND_INF) begin : g_rnd_inf
                assign inc = qb & (~s | r);
            end else if (QUANT == Q_RND_CONV) begin : g_rnd_conv
                // ties to even: the sign does not matter
                wire unused_flags = &{1'b0, s, 1'b0};
                assign inc = qb & (t[0] | r);
            end
            // TW + 1 bits: t + 1 cannot wrap
            assign q = {t[TW-1], t} + {{TW{1'b0}}, inc};
        end
    end else begin : g_shl
        // Already on the output grid: exact, no quantization
        if (LSHIFT > 0) begin : g_shift
            assign q = {in, {LSHIFT{1'b0}}};
        end else begin : g_same
            assign q = in;
        end
    end
endgenerate

// ---------------------------------------------------------------------------
// Step 2: overflow
generate
    if (EW > QW) begin : g_qe_sext
        assign qe = {{(EW - QW){q[QW-1]}}, q};
    end else begin : g_qe_same
        assign qe = q;
    end

    if (OVF == O_WRAP) begin : g_wrap
        // Keep the low OUT_W bits; the bits above the word do not matter
        wire unused_high = &{1'b0, qe[EW-1:OUT_W], 1'b0};
        assign out = qe[OUT_W-1:0];
    end else begin : g_check
        wire neg = qe[EW-1];
        wire above;     // q > max
        wire below;     // q below the range the mode keeps

        if (OUT_SIGNED != 0) begin : g_signed
            // In range iff qe[EW-1:OUT_W-1] is all zeros or all ones
            wire hi_ones = &qe[EW-2:OUT_W-1];
            assign above = ~neg & (|qe[EW-2:OUT_W-1]);
            if (OVF == O_SAT_SYM) begin : g_sym
                // [-max, max]: q == min (hi all ones, low OUT_W-1 bits
                // zero) is below it too
                wire [OUT_W-1:0] low_mask = {OUT_W{1'b1}} >> 1;
                assign below = neg & (~hi_ones | ~(|(qe[OUT_W-1:0] & low_mask)));
            end else begin : g_asym
                assign below = neg & ~hi_ones;
            end
        end else begin : g_unsigned
            // In range iff qe[EW-1:OUT_W] is all zeros
            assign above = ~neg & (|qe[EW-2:OUT_W]);
            assign below = neg;
        end

        if (OVF == O_SAT_ZERO) begin : g_sat_zero
            assign out = (above || below) ? {OUT_W{1'b0}} : qe[OUT_W-1:0];
        end else if (OVF == O_SAT || OVF == O_SAT_SYM) begin : g_sat
            // Clamp to [LO, HI]
            //   signed:   hi = 0111..1, lo = 1000..0 (AP_SAT) or
            //             -hi = 1000..01 (AP_SAT_SYM; 0 when OUT_W = 1)
            //   unsigned: hi = 1111..1, lo = 0
            localparam [OUT_W-1:0] ONES = {OUT_W{1'b1}};
            localparam [OUT_W-1:0] HI = (OUT_SIGNED != 0) ? ONES >> 1 : ONES;
            localparam [OUT_W-1:0] LO = (OUT_SIGNED == 0) ? {OUT_W{1'b0}} :
                                        (OVF == O_SAT_SYM) ? {OUT_W{1'b0}} - HI : ~HI;
            assign out = above ? HI : below ? LO : qe[OUT_W-1:0];
        end
    end
endgenerate

endmodule

`resetall
`default_nettype wire
