//! Hand-worked cases for every rule of `docs/numerics.md`.
//!
//! Every expected value below was worked out by hand; the reasoning is in
//! the comment next to it. Notation: a format with `F` fractional bits has
//! step `2^-F`; `v` is the value in steps (`x * 2^F`); "raw" is the code.

use fptgen_sim::fixed::{
    Fixed, FixedError, Format, NonFiniteError, NotRepresentable, Overflow, Quant,
};

fn f(s: &str) -> Format {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// Raw code of `x` converted to the format spelled `s`.
fn q(s: &str, x: f64) -> i128 {
    f(s).quantize_f64(x).unwrap()
}

// ---------------------------------------------------------------- quantization

/// Inputs for the integer format ap_fixed<8,8,Q,AP_WRAP> (F = 0, step 1):
/// positive and negative ties (x.5) with even and odd floor, non-ties, and
/// exact values.
const INT_CASES: [f64; 10] = [2.5, -2.5, 3.5, -3.5, 2.25, -2.25, 2.75, -2.75, 2.0, -2.0];

fn check_int_mode(mode: &str, expected: [i128; 10]) {
    let s = format!("ap_fixed<8,8,{mode},AP_WRAP>");
    let got: Vec<i128> = INT_CASES.iter().map(|&x| q(&s, x)).collect();
    assert_eq!(got, expected, "{s} on {INT_CASES:?}");
}

#[test]
fn quant_trn_is_floor() {
    // floor: 2.5->2, -2.5->-3, 3.5->3, -3.5->-4, 2.25->2, -2.25->-3,
    // 2.75->2, -2.75->-3, exact values unchanged.
    check_int_mode("AP_TRN", [2, -3, 3, -4, 2, -3, 2, -3, 2, -2]);
}

#[test]
fn quant_trn_zero_truncates_toward_zero() {
    // drop the fraction of the magnitude: 2.5->2, -2.5->-2, 3.5->3, ...
    check_int_mode("AP_TRN_ZERO", [2, -2, 3, -3, 2, -2, 2, -2, 2, -2]);
}

#[test]
fn quant_rnd_ties_toward_plus_infinity() {
    // nearest; ties up: 2.5->3, -2.5->-2, 3.5->4, -3.5->-3;
    // non-ties to nearest: 2.25->2, -2.25->-2, 2.75->3, -2.75->-3.
    check_int_mode("AP_RND", [3, -2, 4, -3, 2, -2, 3, -3, 2, -2]);
}

#[test]
fn quant_rnd_zero_ties_toward_zero() {
    // ties toward zero: 2.5->2, -2.5->-2, 3.5->3, -3.5->-3.
    check_int_mode("AP_RND_ZERO", [2, -2, 3, -3, 2, -2, 3, -3, 2, -2]);
}

#[test]
fn quant_rnd_min_inf_ties_toward_minus_infinity() {
    // ties down: 2.5->2, -2.5->-3, 3.5->3, -3.5->-4.
    check_int_mode("AP_RND_MIN_INF", [2, -3, 3, -4, 2, -2, 3, -3, 2, -2]);
}

#[test]
fn quant_rnd_inf_ties_away_from_zero() {
    // ties away from zero: 2.5->3, -2.5->-3, 3.5->4, -3.5->-4.
    check_int_mode("AP_RND_INF", [3, -3, 4, -4, 2, -2, 3, -3, 2, -2]);
}

#[test]
fn quant_rnd_conv_ties_to_even() {
    // ties to the even neighbour: 2.5->2, -2.5->-2, 3.5->4, -3.5->-4.
    check_int_mode("AP_RND_CONV", [2, -2, 4, -4, 2, -2, 3, -3, 2, -2]);
}

#[test]
fn quant_modes_on_fractional_ties() {
    // ap_fixed<8,4>: F = 4, step 1/16. 1/32 is half a step (v = 0.5),
    // 3/32 is v = 1.5, -1/32 is v = -0.5.
    let cases = [
        // mode, raw of 1/32, raw of 3/32, raw of -1/32
        ("AP_TRN", [0, 1, -1]),         // floor(0.5)=0, floor(1.5)=1, floor(-0.5)=-1
        ("AP_TRN_ZERO", [0, 1, 0]),     // trunc
        ("AP_RND", [1, 2, 0]),          // ties up: 1, 2, 0
        ("AP_RND_ZERO", [0, 1, 0]),     // ties to zero
        ("AP_RND_MIN_INF", [0, 1, -1]), // ties down
        ("AP_RND_INF", [1, 2, -1]),     // ties away from zero
        ("AP_RND_CONV", [0, 2, 0]),     // ties to even: 0, 2, 0
    ];
    for (mode, expected) in cases {
        let s = format!("ap_fixed<8,4,{mode}>");
        let got = [q(&s, 1.0 / 32.0), q(&s, 3.0 / 32.0), q(&s, -1.0 / 32.0)];
        assert_eq!(got, expected, "{s}");
    }
}

#[test]
fn quant_unsigned_rounding() {
    // ap_ufixed<8,8> (F = 0): 2.5 ties; RND up -> 3, RND_CONV even -> 2,
    // TRN floor -> 2; 2.7 -> nearest 3 in every rounding mode.
    assert_eq!(q("ap_ufixed<8,8,AP_RND>", 2.5), 3);
    assert_eq!(q("ap_ufixed<8,8,AP_RND_CONV>", 2.5), 2);
    assert_eq!(q("ap_ufixed<8,8,AP_TRN>", 2.5), 2);
    assert_eq!(q("ap_ufixed<8,8,AP_RND_ZERO>", 2.7), 3);
    // -0.4 rounds to 0 (nearest), which is in range: 0.
    assert_eq!(q("ap_ufixed<8,8,AP_RND,AP_WRAP>", -0.4), 0);
    // -0.6 rounds to -1 (nearest): wraps to 256 - 1 = 255, saturates to 0.
    assert_eq!(q("ap_ufixed<8,8,AP_RND,AP_WRAP>", -0.6), 255);
    assert_eq!(q("ap_ufixed<8,8,AP_RND,AP_SAT>", -0.6), 0);
    // -0.4 with AP_TRN floors to -1: wraps to 255, saturates to 0.
    assert_eq!(q("ap_ufixed<8,8,AP_TRN,AP_WRAP>", -0.4), 255);
    assert_eq!(q("ap_ufixed<8,8,AP_TRN,AP_SAT>", -0.4), 0);
}

// ------------------------------------------------------------------- overflow

#[test]
fn overflow_modes_signed() {
    // ap_fixed<4,4>: F = 0, codes -8..=7.
    let cases = [
        // x, WRAP, SAT, SAT_ZERO, SAT_SYM
        (9.0, -7, 7, 0, 7),      // 9 - 16 = -7
        (-9.0, 7, -8, 0, -7),    // -9 + 16 = 7; SAT_SYM clamps to -7
        (-8.0, -8, -8, -8, -7),  // in range; SAT_SYM never gives -8
        (7.0, 7, 7, 7, 7),       // in range
        (100.0, 4, 7, 0, 7),     // 100 = 6*16 + 4
        (-100.0, -4, -8, 0, -7), // -100 = -7*16 + 12, 12 - 16 = -4
    ];
    for (x, wrap, sat, sat_zero, sat_sym) in cases {
        for (mode, expected) in [
            ("AP_WRAP", wrap),
            ("AP_SAT", sat),
            ("AP_SAT_ZERO", sat_zero),
            ("AP_SAT_SYM", sat_sym),
        ] {
            let s = format!("ap_fixed<4,4,AP_TRN,{mode}>");
            assert_eq!(q(&s, x), expected, "{x} -> {s}");
        }
    }
}

#[test]
fn overflow_modes_unsigned() {
    // ap_ufixed<4,4>: codes 0..=15. AP_SAT_SYM is AP_SAT for unsigned.
    let cases = [
        // x, WRAP, SAT, SAT_ZERO, SAT_SYM
        (17.0, 1, 15, 0, 15), // 17 - 16 = 1
        (-1.0, 15, 0, 0, 0),  // -1 + 16 = 15; negative saturates to 0
        (-0.5, 15, 0, 0, 0),  // AP_TRN: floor(-0.5) = -1, as above
        (15.0, 15, 15, 15, 15),
    ];
    for (x, wrap, sat, sat_zero, sat_sym) in cases {
        for (mode, expected) in [
            ("AP_WRAP", wrap),
            ("AP_SAT", sat),
            ("AP_SAT_ZERO", sat_zero),
            ("AP_SAT_SYM", sat_sym),
        ] {
            let s = format!("ap_ufixed<4,4,AP_TRN,{mode}>");
            assert_eq!(q(&s, x), expected, "{x} -> {s}");
        }
    }
}

#[test]
fn wrap_example_8_99() {
    // ap_fixed<10,4>: F = 6. 8.99 * 64 = 575.36, floor 575 = 8.984375,
    // outside [-8, 8): 575 - 1024 = -449, and -449/64 = -7.015625.
    let fmt = f("ap_fixed<10,4>");
    assert_eq!(fmt.quant(), Quant::Trn);
    assert_eq!(fmt.overflow(), Overflow::Wrap);
    assert_eq!(fmt.quantize_f64(8.99), Ok(-449));
    assert_eq!(fmt.to_f64(-449), -7.015625);
    let x = Fixed::from_f64(8.99, fmt).unwrap();
    assert_eq!(x.to_string(), "-7.015625");
}

#[test]
fn round_then_saturate_7_9() {
    // ap_fixed<4,4> (F = 0): 7.9 rounds to 8 first, then overflows:
    // AP_SAT gives 7, AP_WRAP gives 8 - 16 = -8, AP_SAT_ZERO 0.
    assert_eq!(q("ap_fixed<4,4,AP_RND,AP_SAT>", 7.9), 7);
    assert_eq!(q("ap_fixed<4,4,AP_RND,AP_WRAP>", 7.9), -8);
    assert_eq!(q("ap_fixed<4,4,AP_RND,AP_SAT_ZERO>", 7.9), 0);
    // AP_TRN: floor 7 fits, no overflow.
    assert_eq!(q("ap_fixed<4,4,AP_TRN,AP_SAT_ZERO>", 7.9), 7);
    // -8.4 rounds to -8, which fits AP_SAT, but AP_SAT_SYM maps it to -7.
    assert_eq!(q("ap_fixed<4,4,AP_RND,AP_SAT>", -8.4), -8);
    assert_eq!(q("ap_fixed<4,4,AP_RND,AP_SAT_SYM>", -8.4), -7);
    // The report says what happened: 7.9 was inexact and overflowed.
    let c = f("ap_fixed<4,4,AP_RND,AP_SAT>").convert_f64(7.9).unwrap();
    assert_eq!((c.raw, c.inexact, c.overflowed), (7, true, true));
    let c = f("ap_fixed<4,4,AP_RND,AP_SAT>").convert_f64(7.0).unwrap();
    assert_eq!((c.raw, c.inexact, c.overflowed), (7, false, false));
}

#[test]
fn sat_sym_never_produces_most_negative_code() {
    let sym = f("ap_fixed<4,4,AP_TRN,AP_SAT_SYM>");
    // -8 = -2^(W-1) is exactly the most negative code: becomes -7.
    assert_eq!(sym.quantize_f64(-8.0), Ok(-7));
    // Cast of the code -8 of ap_fixed<8,8> (value -8): -7.
    assert_eq!(sym.cast_from(-8, &f("ap_fixed<8,8>")), -7);
    // Sum -4 + -4 = -8: -7.
    assert_eq!(sym.add(-4, -4), -7);
    // min_raw is still the most negative code of the word; the smallest
    // lossless code is -7.
    assert_eq!(sym.min_raw(), -8);
    assert_eq!(sym.lossless_min_raw(), -7);
    // Unsigned AP_SAT_SYM is AP_SAT: 0 stays 0, -1 becomes 0.
    let usym = f("ap_ufixed<4,4,AP_TRN,AP_SAT_SYM>");
    assert_eq!(usym.quantize_f64(-1.0), Ok(0));
    assert_eq!(usym.lossless_min_raw(), 0);
    // Width 1 signed: max = 2^0 - 1 = 0, so the symmetric range is {0}.
    // (Xilinx's header would give -1 here; see docs/numerics.md.)
    assert_eq!(q("ap_fixed<1,1,AP_TRN,AP_SAT_SYM>", -1.0), 0);
    assert_eq!(q("ap_fixed<1,1,AP_TRN,AP_SAT_SYM>", 5.0), 0);
}

// ------------------------------------------------------ unusual I and widths

#[test]
fn negative_int_bits() {
    // ap_fixed<4,-2>: F = 6, codes -8..=7, values [-0.125, 0.109375].
    let fmt = f("ap_fixed<4,-2>");
    assert_eq!(fmt.frac_bits(), 6);
    // 0.1 * 64 = 6.4 -> floor 6 (0.09375).
    assert_eq!(fmt.quantize_f64(0.1), Ok(6));
    // 0.2 * 64 = 12.8 -> 12 -> wraps to 12 - 16 = -4 (-0.0625).
    assert_eq!(fmt.quantize_f64(0.2), Ok(-4));
    assert_eq!(fmt.to_f64(-4), -0.0625);
    assert_eq!(q("ap_fixed<4,-2,AP_TRN,AP_SAT>", 0.2), 7);
    // ap_ufixed<3,-1>: F = 4, codes 0..=7. 0.3 * 16 = 4.8: TRN 4, RND 5.
    assert_eq!(q("ap_ufixed<3,-1>", 0.3), 4);
    assert_eq!(q("ap_ufixed<3,-1,AP_RND>", 0.3), 5);
}

#[test]
fn int_bits_above_width() {
    // ap_fixed<4,8>: F = -4, step 16, codes -8..=7 = values -128..=112.
    let fmt = f("ap_fixed<4,8>");
    assert_eq!(fmt.frac_bits(), -4);
    // 40 = 2.5 steps: TRN 2 (32), RND 3 (48), RND_CONV 2.
    assert_eq!(fmt.quantize_f64(40.0), Ok(2));
    assert_eq!(fmt.to_f64(2), 32.0);
    assert_eq!(q("ap_fixed<4,8,AP_RND>", 40.0), 3);
    assert_eq!(q("ap_fixed<4,8,AP_RND_CONV>", 40.0), 2);
    // -40 = -2.5 steps: TRN -3, RND -2, RND_CONV -2, RND_INF -3.
    assert_eq!(q("ap_fixed<4,8,AP_TRN>", -40.0), -3);
    assert_eq!(q("ap_fixed<4,8,AP_RND>", -40.0), -2);
    assert_eq!(q("ap_fixed<4,8,AP_RND_CONV>", -40.0), -2);
    assert_eq!(q("ap_fixed<4,8,AP_RND_INF>", -40.0), -3);
    // 200 = 12.5 steps: TRN 12, wraps to -4 (-64); AP_SAT gives 7 (112).
    assert_eq!(fmt.quantize_f64(200.0), Ok(-4));
    assert_eq!(q("ap_fixed<4,8,AP_TRN,AP_SAT>", 200.0), 7);
    assert_eq!(Fixed::from_raw(7, fmt).unwrap().to_string(), "112");
}

#[test]
fn width_one() {
    // ap_fixed<1,1>: codes {-1, 0}.
    assert_eq!(f("ap_fixed<1,1>").min_raw(), -1);
    assert_eq!(f("ap_fixed<1,1>").max_raw(), 0);
    assert_eq!(q("ap_fixed<1,1>", 0.5), 0); // floor
    // 0.5 is a tie; AP_RND goes up to 1, which wraps (1 mod 2 = bit 1 = -1)
    // or saturates to 0.
    assert_eq!(q("ap_fixed<1,1,AP_RND,AP_WRAP>", 0.5), -1);
    assert_eq!(q("ap_fixed<1,1,AP_RND,AP_SAT>", 0.5), 0);
    assert_eq!(q("ap_fixed<1,1>", -1.0), -1);
    // ap_ufixed<1,1>: codes {0, 1}; 2 wraps to 0, saturates to 1.
    assert_eq!(q("ap_ufixed<1,1>", 1.0), 1);
    assert_eq!(q("ap_ufixed<1,1>", 2.0), 0);
    assert_eq!(q("ap_ufixed<1,1,AP_TRN,AP_SAT>", 2.0), 1);
    // ap_ufixed<1,0>: F = 1, values {0, 0.5}. 0.75 = 1.5 steps: TRN 1;
    // RND 2, which wraps to 0 and saturates to 1.
    assert_eq!(q("ap_ufixed<1,0>", 0.75), 1);
    assert_eq!(q("ap_ufixed<1,0,AP_RND,AP_WRAP>", 0.75), 0);
    assert_eq!(q("ap_ufixed<1,0,AP_RND,AP_SAT>", 0.75), 1);
    // Bit patterns: -1 is 0b1.
    assert_eq!(f("ap_fixed<1,1>").bits(-1), 1);
    assert_eq!(f("ap_fixed<1,1>").from_bits(1), -1);
}

#[test]
fn width_64_extremes() {
    let s64 = f("ap_fixed<64,64>");
    let u64f = f("ap_ufixed<64,64>");
    let two63 = 9223372036854775808.0; // 2^63, exact in a double
    let two64 = 18446744073709551616.0; // 2^64
    assert_eq!(s64.min_raw(), -(1i128 << 63));
    assert_eq!(s64.max_raw(), (1i128 << 63) - 1);
    assert_eq!(u64f.max_raw(), (1i128 << 64) - 1);
    // 2^63 is one above the signed maximum: wraps to -2^63, saturates to
    // 2^63 - 1.
    assert_eq!(s64.quantize_f64(two63), Ok(-(1i128 << 63)));
    assert_eq!(
        s64.with_modes(Quant::Trn, Overflow::Sat).quantize_f64(two63),
        Ok((1i128 << 63) - 1)
    );
    assert_eq!(s64.quantize_f64(-two63), Ok(-(1i128 << 63)));
    // 2^64 wraps to 0 unsigned, saturates to 2^64 - 1.
    assert_eq!(u64f.quantize_f64(two64), Ok(0));
    assert_eq!(
        u64f.with_modes(Quant::Trn, Overflow::Sat).quantize_f64(two64),
        Ok((1i128 << 64) - 1)
    );
    // The largest double below 2^64 is 2^64 - 2^11 (53-bit significand).
    assert_eq!(u64f.quantize_f64(18446744073709549568.0), Ok((1i128 << 64) - 2048));
    // Bit patterns.
    assert_eq!(u64f.bits(u64f.max_raw()), u64::MAX);
    assert_eq!(s64.bits(-1), u64::MAX);
    assert_eq!(s64.bits(s64.min_raw()), 1u64 << 63);
    assert_eq!(s64.from_bits(u64::MAX), -1);
    assert_eq!(u64f.from_bits(u64::MAX), (1i128 << 64) - 1);
    // to_f64 rounds to nearest, ties to even: 2^63 - 1 -> 2^63;
    // 2^53 + 1 is a tie between 2^53 and 2^53 + 2 -> 2^53 (even significand);
    // 2^53 + 3 is a tie between 2^53 + 2 (odd) and 2^53 + 4 -> 2^53 + 4.
    assert_eq!(s64.to_f64((1i128 << 63) - 1), two63);
    assert_eq!(s64.to_f64((1i128 << 53) + 1), 9007199254740992.0);
    assert_eq!(s64.to_f64((1i128 << 53) + 3), 9007199254740996.0);
    assert_eq!(u64f.to_f64(u64f.max_raw()), two64);
}

#[test]
fn u64_times_u64_product_is_exact() {
    let u = f("ap_ufixed<64,64>");
    let a = (1i128 << 64) - 1;
    // (2^64 - 1)^2 = 2^128 - 2^65 + 1.
    // Mod 2^64 that is 1 (AP_WRAP into ap_ufixed<64,64>).
    assert_eq!(u.mul_from(a, &u, a, &u), 1);
    // AP_SAT: the maximum.
    assert_eq!(
        u.with_modes(Quant::Trn, Overflow::Sat).mul_from(a, &u, a, &u),
        a
    );
    // ap_ufixed<64,128>: F = -64, step 2^64. product / 2^64 =
    // 2^64 - 2 + 2^-64: TRN -> 2^64 - 2, RND -> 2^64 - 2 (fraction < 1/2).
    let big = f("ap_ufixed<64,128>");
    assert_eq!(big.mul_from(a, &u, a, &u), (1i128 << 64) - 2);
    assert_eq!(
        big.with_modes(Quant::Rnd, Overflow::Wrap).mul_from(a, &u, a, &u),
        (1i128 << 64) - 2
    );
    // ap_ufixed<64,129>: step 2^65: 2^63 - 1 + 2^-65 -> TRN 2^63 - 1.
    assert_eq!(f("ap_ufixed<64,129>").mul_from(a, &u, a, &u), (1i128 << 63) - 1);
    // Signed: (-2^63)^2 = 2^126 -> ap_fixed<64,128> (step 2^64): 2^62.
    let s = f("ap_fixed<64,64>");
    let m = -(1i128 << 63);
    assert_eq!(f("ap_fixed<64,128>").mul_from(m, &s, m, &s), 1i128 << 62);
    // (2^64 - 1) * (-2^63) = -2^127 + 2^63; in steps of 2^64:
    // -2^63 + 1/2, a tie. TRN floor -> -2^63; RND (up) -> -2^63 + 1;
    // RND_CONV -> -2^63 (even).
    let t = f("ap_fixed<64,128>");
    assert_eq!(t.mul_from(a, &u, m, &s), m);
    assert_eq!(t.with_modes(Quant::Rnd, Overflow::Wrap).mul_from(a, &u, m, &s), m + 1);
    assert_eq!(t.with_modes(Quant::RndConv, Overflow::Wrap).mul_from(a, &u, m, &s), m);
    // Raw inputs outside their formats are still multiplied exactly:
    // (2^127 - 1)^2 = 2^254 - 2^128 + 1. Mod 2^64 that is 1.
    // In steps of 2^128 (ap_ufixed<64,192>): 2^126 - 1 + 2^-128, floor
    // 2^126 - 1, whose low 64 bits are all ones: wraps to 2^64 - 1.
    // In steps of 2^129 (ap_ufixed<64,193>): 2^125 - 1/2 + 2^-129; floor
    // 2^125 - 1 wraps to 2^64 - 1; AP_RND (above the tie) gives 2^125,
    // which wraps to 0.
    let i = i128::MAX;
    assert_eq!(u.mul_from(i, &u, i, &u), 1);
    assert_eq!(f("ap_ufixed<64,192>").mul_from(i, &u, i, &u), (1i128 << 64) - 1);
    assert_eq!(f("ap_ufixed<64,193>").mul_from(i, &u, i, &u), (1i128 << 64) - 1);
    assert_eq!(f("ap_ufixed<64,193,AP_RND>").mul_from(i, &u, i, &u), 0);
    // In steps of 2^100 (ap_ufixed<64,164>): the product's set bits are
    // 0 and 128..=253, so floor(product / 2^100) mod 2^64 holds bits
    // 100..=163 of it: zeros at 100..=127, ones at 128..=163, i.e.
    // (2^36 - 1) * 2^28 = 2^64 - 2^28. AP_SAT gives the maximum 2^64 - 1.
    assert_eq!(
        f("ap_ufixed<64,164>").mul_from(i, &u, i, &u),
        (1i128 << 64) - (1i128 << 28)
    );
    assert_eq!(
        f("ap_ufixed<64,164,AP_TRN,AP_SAT>").mul_from(i, &u, i, &u),
        (1i128 << 64) - 1
    );
    // Fixed::mul_to agrees.
    let x = Fixed::from_raw(a, u).unwrap();
    assert_eq!(x.mul_to(&x, big).raw(), (1i128 << 64) - 2);
}

#[test]
fn products_of_small_formats() {
    // 1.5 (ap_fixed<8,4>, raw 24) * -0.75 (ap_fixed<6,2>, raw -12) = -1.125
    // exactly; into ap_fixed<8,4> (step 1/16): -18. Into ap_fixed<6,4>
    // (step 1/4): -4.5 steps: TRN -5 (-1.25), RND -4 (-1.0), RND_CONV -4.
    let a = f("ap_fixed<8,4>");
    let b = f("ap_fixed<6,2>");
    assert_eq!(a.mul_from(24, &a, -12, &b), -18);
    assert_eq!(f("ap_fixed<6,4>").mul_from(24, &a, -12, &b), -5);
    assert_eq!(f("ap_fixed<6,4,AP_RND>").mul_from(24, &a, -12, &b), -4);
    assert_eq!(f("ap_fixed<6,4,AP_RND_CONV>").mul_from(24, &a, -12, &b), -4);
    // 7.5 * 7.5 = 56.25 into ap_fixed<8,4,AP_TRN,AP_SAT>: max 127 (7.9375).
    assert_eq!(f("ap_fixed<8,4,AP_TRN,AP_SAT>").mul_from(120, &a, 120, &a), 127);
}

// ------------------------------------------------------------- casts and sums

#[test]
fn casts() {
    let src = f("ap_fixed<8,4>"); // step 1/16
    // 127 = 7.9375 into ap_fixed<4,4,AP_RND,AP_SAT>: rounds to 8, saturates
    // to 7.
    assert_eq!(f("ap_fixed<4,4,AP_RND,AP_SAT>").cast_from(127, &src), 7);
    // -1 = -0.0625 into ap_ufixed<4,4>: AP_RND rounds to 0 -> 0; AP_TRN
    // floors to -1 -> AP_SAT 0, AP_WRAP 15.
    assert_eq!(f("ap_ufixed<4,4,AP_RND,AP_SAT>").cast_from(-1, &src), 0);
    assert_eq!(f("ap_ufixed<4,4,AP_TRN,AP_SAT>").cast_from(-1, &src), 0);
    assert_eq!(f("ap_ufixed<4,4,AP_TRN,AP_WRAP>").cast_from(-1, &src), 15);
    // Widening is exact: 127 -> ap_fixed<16,8> (step 1/256): 127 * 16.
    assert_eq!(f("ap_fixed<16,8>").cast_from(127, &src), 2032);
    // The source's modes do not matter, only the target's.
    let src_sat = src.with_modes(Quant::RndConv, Overflow::Sat);
    assert_eq!(f("ap_fixed<4,4>").cast_from(127, &src_sat), 7); // floor 7.9375
    // Fixed::cast.
    let x = Fixed::from_raw(127, src).unwrap();
    assert_eq!(x.cast(f("ap_fixed<4,4,AP_RND,AP_SAT>")).raw(), 7);
}

#[test]
fn sums() {
    let w = f("ap_fixed<4,4>");
    // 7 + 1 = 8: wraps to -8; saturates to 7.
    assert_eq!(w.add(7, 1), -8);
    assert_eq!(w.with_modes(Quant::Trn, Overflow::Sat).add(7, 1), 7);
    assert_eq!(w.with_modes(Quant::Trn, Overflow::SatZero).add(7, 1), 0);
    // -8 + -1 = -9: wraps to 7; AP_SAT -8; AP_SAT_SYM -7.
    assert_eq!(w.add(-8, -1), 7);
    assert_eq!(w.with_modes(Quant::Trn, Overflow::Sat).add(-8, -1), -8);
    assert_eq!(w.with_modes(Quant::Trn, Overflow::SatSym).add(-8, -1), -7);
    // Unsigned 15 + 1 = 16 wraps to 0.
    assert_eq!(f("ap_ufixed<4,4>").add(15, 1), 0);
    // Inputs that overflow i128 still sum exactly: 2 * i128::MIN = -2^128
    // is 0 mod 2^64.
    assert_eq!(f("ap_fixed<64,64>").add(i128::MIN, i128::MIN), 0);
    // Fixed::add requires equal formats.
    let a = Fixed::from_raw(7, w).unwrap();
    let b = Fixed::from_raw(1, w).unwrap();
    assert_eq!(a.add(&b).unwrap().raw(), -8);
    let c = Fixed::from_raw(1, w.with_modes(Quant::Trn, Overflow::Sat)).unwrap();
    assert!(matches!(a.add(&c), Err(FixedError::FormatMismatch { .. })));
}

// ---------------------------------------------------- doubles in and out

#[test]
fn exact_conversion() {
    // ap_fixed<8,4>: step 1/16, codes -128..=127, values [-8, 7.9375].
    let fmt = f("ap_fixed<8,4>");
    assert_eq!(fmt.exact_f64(0.0625), Ok(1));
    assert_eq!(fmt.exact_f64(7.9375), Ok(127));
    assert_eq!(fmt.exact_f64(-8.0), Ok(-128));
    assert_eq!(fmt.exact_f64(-0.0), Ok(0));
    // 1/32 is half a step.
    assert!(matches!(
        fmt.exact_f64(1.0 / 32.0),
        Err(NotRepresentable::NeedsRounding { .. })
    ));
    // 8 and 7.96875 are above 7.9375 (real comparison, even though 7.96875
    // would round down to 7.9375 under AP_TRN).
    match fmt.exact_f64(8.0) {
        Err(NotRepresentable::OutOfRange { min, max, .. }) => {
            assert_eq!((min.as_str(), max.as_str()), ("-8", "7.9375"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        fmt.exact_f64(7.96875),
        Err(NotRepresentable::OutOfRange { .. })
    ));
    assert!(matches!(
        fmt.exact_f64(f64::NAN),
        Err(NotRepresentable::NonFinite { .. })
    ));
    // AP_SAT_SYM: -8 is not lossless (it converts to -7.9375).
    match f("ap_fixed<8,4,AP_TRN,AP_SAT_SYM>").exact_f64(-8.0) {
        Err(NotRepresentable::OutOfRange { min, .. }) => assert_eq!(min, "-7.9375"),
        other => panic!("{other:?}"),
    }
    // The message names value, range and format.
    let msg = fmt.exact_f64(8.0).unwrap_err().to_string();
    assert_eq!(msg, "8 is outside the range [-8, 7.9375] of ap_fixed<8,4,AP_TRN,AP_WRAP>");
    let msg = fmt.exact_f64(0.03125).unwrap_err().to_string();
    assert_eq!(
        msg,
        "0.03125 is not a multiple of 2^-4 (the step of ap_fixed<8,4,AP_TRN,AP_WRAP>); it would need rounding"
    );
}

#[test]
fn non_finite_is_an_error() {
    let fmt = f("ap_fixed<8,4>");
    assert_eq!(
        fmt.quantize_f64(f64::INFINITY),
        Err(NonFiniteError { value: f64::INFINITY })
    );
    assert!(fmt.quantize_f64(f64::NAN).is_err());
    assert!(Fixed::from_f64(f64::NEG_INFINITY, fmt).is_err());
}

#[test]
fn extreme_doubles_and_exponents() {
    // f64::MAX = (2^53 - 1) * 2^971: a multiple of 2^971, so 0 mod 2^8
    // after scaling by 2^4; AP_SAT gives the max 127 / min -128.
    assert_eq!(q("ap_fixed<8,4>", f64::MAX), 0);
    assert_eq!(q("ap_fixed<8,4,AP_TRN,AP_SAT>", f64::MAX), 127);
    assert_eq!(q("ap_fixed<8,4,AP_TRN,AP_SAT>", -f64::MAX), -128);
    // Smallest subnormal 2^-1074: into ap_fixed<8,4> it floors to 0, and
    // its negative floors to -1 (the value is below 0).
    let tiny = f64::from_bits(1);
    assert_eq!(q("ap_fixed<8,4>", tiny), 0);
    assert_eq!(q("ap_fixed<8,4>", -tiny), -1);
    assert_eq!(q("ap_fixed<8,4,AP_RND>", -tiny), 0);
    // Into ap_fixed<64,-1024> (F = 1088) it is exactly 2^(1088-1074) = 16384.
    let deep = f("ap_fixed<64,-1024>");
    assert_eq!(deep.quantize_f64(tiny), Ok(16384));
    assert_eq!(deep.to_f64(16384), tiny);
    // ap_fixed<8,-1024>: F = 1032, raw 1 = 2^-1032, a subnormal.
    assert_eq!(f("ap_fixed<8,-1024>").to_f64(1), f64::from_bits(1 << (1074 - 1032)));
    // A value below half the smallest subnormal rounds to zero.
    assert_eq!(deep.to_f64(1), 0.0); // 2^-1088
    // ap_ufixed<64,1024>: max = (2^64 - 1) * 2^960 rounds to 2^1024: inf.
    let huge = f("ap_ufixed<64,1024>");
    assert_eq!(huge.to_f64(huge.max_raw()), f64::INFINITY);
    // quantize_exact with extreme exponents (value mantissa * 2^-frac):
    let r = f("ap_fixed<8,4,AP_RND_INF>");
    assert_eq!(r.quantize_exact(1, i32::MAX), 0); // far below half a step
    assert_eq!(f("ap_fixed<8,4>").quantize_exact(-1, i32::MAX), -1); // floor
    assert_eq!(f("ap_fixed<8,4>").quantize_exact(1, i32::MIN), 0); // 2^huge wraps to 0
    assert_eq!(f("ap_fixed<8,4,AP_TRN,AP_SAT>").quantize_exact(1, i32::MIN), 127);
    assert_eq!(f("ap_fixed<8,4,AP_TRN,AP_SAT>").quantize_exact(-1, i32::MIN), -128);
    // i128::MIN = -2^127 is 0 mod 2^64; saturates to -2^63.
    let s64 = f("ap_fixed<64,64>");
    assert_eq!(s64.quantize_exact(i128::MIN, 0), 0);
    assert_eq!(
        s64.with_modes(Quant::Trn, Overflow::Sat).quantize_exact(i128::MIN, 0),
        -(1i128 << 63)
    );
    // (i128::MIN)^2 = 2^254, exact in the 256-bit product; wraps to 0.
    assert_eq!(s64.mul_from(i128::MIN, &s64, i128::MIN, &s64), 0);
    // 3 * 2^-1 = 1.5 into ap_fixed<8,8>: TRN 1, RND 2.
    assert_eq!(f("ap_fixed<8,8>").quantize_exact(3, 1), 1);
    assert_eq!(f("ap_fixed<8,8,AP_RND>").quantize_exact(3, 1), 2);
}

#[test]
fn to_f64_small_formats() {
    // ap_fixed<8,4>: raw -128 = -8, raw 127 = 7.9375, raw 1 = 0.0625.
    let fmt = f("ap_fixed<8,4>");
    assert_eq!(fmt.to_f64(-128), -8.0);
    assert_eq!(fmt.to_f64(127), 7.9375);
    assert_eq!(fmt.to_f64(1), 0.0625);
    assert_eq!(fmt.to_f64(0), 0.0);
    assert!(fmt.to_f64(0).is_sign_positive());
}

// ------------------------------------------------------------- bit patterns

#[test]
fn bits_round_trip() {
    // ap_fixed<10,4>: -449 -> 1024 - 449 = 575 = 0x23F.
    let fmt = f("ap_fixed<10,4>");
    assert_eq!(fmt.bits(-449), 0x23F);
    assert_eq!(fmt.from_bits(0x23F), -449);
    // Upper bits are ignored.
    assert_eq!(fmt.from_bits(0xFFFF_FC00 | 0x23F), -449);
    // Unsigned: zero-extended. 0x3FF in ap_ufixed<10,4> is 1023.
    assert_eq!(f("ap_ufixed<10,4>").from_bits(0x3FF), 1023);
    // Out-of-range raw: bits is raw mod 2^W (1024 + 5 -> 5).
    assert_eq!(fmt.bits(1029), 5);
    assert!(fmt.contains_raw(-512) && fmt.contains_raw(511));
    assert!(!fmt.contains_raw(512) && !fmt.contains_raw(-513));
    let x = Fixed::from_raw(-449, fmt).unwrap();
    assert_eq!(x.bits(), 0x23F);
}

// ------------------------------------------------------------ Fixed values

#[test]
fn fixed_values() {
    let fmt = f("ap_fixed<8,4>");
    assert!(matches!(
        Fixed::from_raw(128, fmt),
        Err(FixedError::RawOutOfRange { raw: 128, .. })
    ));
    let e = Fixed::from_raw(128, fmt).unwrap_err().to_string();
    assert_eq!(e, "raw code 128 is outside [-128, 127], the codes of ap_fixed<8,4,AP_TRN,AP_WRAP>");
    let x = Fixed::from_f64(-1.5, fmt).unwrap();
    assert_eq!((x.raw(), x.format(), x.to_f64()), (-24, fmt, -1.5));
    assert_eq!(x.to_string(), "-1.5");
    // 1 step of ap_fixed<8,-8> (F = 16): 2^-16 = 0.0000152587890625.
    assert_eq!(
        Fixed::from_raw(1, f("ap_fixed<8,-8>")).unwrap().to_string(),
        "0.0000152587890625"
    );
}

// ------------------------------------------------------------------- parsing

fn parts(fmt: Format) -> (bool, u32, i32, Quant, Overflow) {
    (fmt.signed(), fmt.width(), fmt.int_bits(), fmt.quant(), fmt.overflow())
}

#[test]
fn parse_every_syntax() {
    use Overflow::*;
    use Quant::*;
    let cases = [
        ("ap_fixed<16,6>", (true, 16, 6, Trn, Wrap)),
        ("ap_fixed<16,6,AP_RND>", (true, 16, 6, Rnd, Wrap)),
        ("ap_fixed<16,6,AP_RND_CONV,AP_SAT>", (true, 16, 6, RndConv, Sat)),
        (" ap_fixed < 16 , -6 , AP_TRN_ZERO , AP_SAT_SYM > ", (true, 16, -6, TrnZero, SatSym)),
        ("ap_ufixed<8,0>", (false, 8, 0, Trn, Wrap)),
        ("ap_ufixed<8,0,AP_RND_ZERO>", (false, 8, 0, RndZero, Wrap)),
        ("ap_ufixed<8,12,AP_RND_MIN_INF,AP_SAT_ZERO>", (false, 8, 12, RndMinInf, SatZero)),
        ("ap_fixed<4,4,AP_RND_INF,AP_WRAP>", (true, 4, 4, RndInf, Wrap)),
        ("ap_int<8>", (true, 8, 8, Trn, Wrap)),
        ("ap_uint< 1 >", (false, 1, 1, Trn, Wrap)),
        ("ap_fixed<64,1024>", (true, 64, 1024, Trn, Wrap)),
        ("ap_fixed<1,-1024>", (true, 1, -1024, Trn, Wrap)),
        // QKeras: quantized_bits(b, i) -> ap_fixed<b, i+1, AP_RND_CONV, AP_SAT>
        ("quantized_bits(8,3)", (true, 8, 4, RndConv, Sat)),
        ("quantized_bits(8)", (true, 8, 1, RndConv, Sat)),
        ("quantized_bits(8, 3, alpha=1)", (true, 8, 4, RndConv, Sat)),
        ("quantized_bits(4,0,alpha=1.0)", (true, 4, 1, RndConv, Sat)),
        ("quantized_bits(6, alpha = 1)", (true, 6, 1, RndConv, Sat)),
        // quantized_relu(b, i) -> ap_ufixed<b, i, AP_RND_CONV, AP_SAT>
        ("quantized_relu(6,2)", (false, 6, 2, RndConv, Sat)),
        ("quantized_relu(6)", (false, 6, 0, RndConv, Sat)),
        ("quantized_relu(6,2,alpha=1)", (false, 6, 2, RndConv, Sat)),
        ("quantized_relu(6,2,)", (false, 6, 2, RndConv, Sat)), // trailing comma
    ];
    for (s, expected) in cases {
        let fmt = f(s);
        assert_eq!(parts(fmt), expected, "{s}");
        // Display is canonical and round-trips.
        assert_eq!(f(&fmt.to_string()), fmt, "{s}");
    }
    assert_eq!(
        f("quantized_bits(8,3)").to_string(),
        "ap_fixed<8,4,AP_RND_CONV,AP_SAT>"
    );
    assert_eq!(f("ap_uint<3>").to_string(), "ap_ufixed<3,3,AP_TRN,AP_WRAP>");
    assert_eq!(Quant::RndMinInf.to_string(), "AP_RND_MIN_INF");
    assert_eq!(Overflow::SatZero.to_string(), "AP_SAT_ZERO");
}

/// The parse error of `s`: (message, offset).
fn perr(s: &str) -> (String, usize) {
    let e = s.parse::<Format>().expect_err(s);
    (e.message().to_string(), e.offset())
}

#[test]
fn parse_every_error() {
    const EXPECTED: &str = "expected ap_fixed<W,I[,Q[,O]]>, ap_ufixed<W,I[,Q[,O]]>, ap_int<W>, \
                            ap_uint<W>, quantized_bits(b[,i]) or quantized_relu(b[,i])";
    let quants = "AP_RND, AP_RND_ZERO, AP_RND_MIN_INF, AP_RND_INF, AP_RND_CONV, AP_TRN, AP_TRN_ZERO";
    let overflows = "AP_SAT, AP_SAT_ZERO, AP_SAT_SYM, AP_WRAP";
    let cases: Vec<(&str, String, usize)> = vec![
        // offsets: "ap_fixed<" is 9 bytes, so W starts at 9.
        ("ap_fixed<0,0>", "width 0 is out of range 1..=64".into(), 9),
        ("ap_fixed<65,3>", "width 65 is out of range 1..=64".into(), 9),
        ("ap_fixed<8,1025>", "integer bits 1025 is out of range -1024..=1024".into(), 11),
        ("ap_fixed<8,-1025>", "integer bits -1025 is out of range -1024..=1024".into(), 11),
        // "ap_fixed<8,3," is 13 bytes.
        (
            "ap_fixed<8,3,AP_RDN>",
            format!("unknown quantization mode AP_RDN; expected one of {quants}"),
            13,
        ),
        (
            "ap_fixed<8,3,AP_SAT>",
            format!(
                "unknown quantization mode AP_SAT; expected one of {quants} \
                 (AP_SAT is an overflow mode; the quantization mode comes first)"
            ),
            13,
        ),
        // "ap_fixed<8,3,AP_RND," is 20 bytes.
        (
            "ap_fixed<8,3,AP_RND,AP_SATT>",
            format!("unknown overflow mode AP_SATT; expected one of {overflows}"),
            20,
        ),
        (
            "ap_fixed<8,3,AP_RND,AP_WRAP_SM>",
            format!("overflow mode AP_WRAP_SM is not supported; expected one of {overflows}"),
            20,
        ),
        // "ap_fixed<8,3,AP_RND,AP_SAT," is 27 bytes.
        (
            "ap_fixed<8,3,AP_RND,AP_SAT,2>",
            "the 5th template argument (N, saturation bits) is not supported; \
             expected at most ap_fixed<W,I,Q,O>"
                .into(),
            27,
        ),
        (
            "ap_fixed<8>",
            "expected `,` after the width W (the integer bits I are required), found `>`".into(),
            10,
        ),
        ("ap_fixed<8,3", "expected `>` to close ap_fixed<...>, found end of input".into(), 12),
        ("ap_fixed(8,3)", "expected `<` after ap_fixed, found `(`".into(), 8),
        ("ap_fixed<8,3>x", "unexpected `x` after the end of the format".into(), 13),
        ("ap_fixd<8,3>", format!("{EXPECTED}; found `ap_fixd`"), 0),
        ("AP_FIXED<8,3>", format!("{EXPECTED}; found `AP_FIXED`"), 0),
        ("", format!("{EXPECTED}; found an empty string"), 0),
        ("  <8>", format!("{EXPECTED}; found `<`"), 2),
        ("ap_fixed<a,3>", "expected an integer for the width W, found `a`".into(), 9),
        ("ap_fixed<8,3.5>", "expected an integer for the integer bits I, found `3.5`".into(), 11),
        (
            "ap_fixed<99999999999999999999,3>",
            "integer `99999999999999999999` for the width W is too large".into(),
            9,
        ),
        ("ap_int<8,3>", "expected `>` to close ap_int<W> (it takes only the width), found `,`".into(), 8),
        ("ap_uint<0>", "width 0 is out of range 1..=64".into(), 8),
        // "quantized_bits(" is 15 bytes; "quantized_bits(8,3," is 19.
        ("quantized_bits(0)", "width 0 is out of range 1..=64".into(), 15),
        (
            "quantized_bits(8,1024)",
            "integer bits 1025 is out of range -1024..=1024 (quantized_bits(b, i) has I = i + 1 = 1025)".into(),
            17,
        ),
        (
            "quantized_bits(8,3,alpha=\"auto\")",
            "alpha=\"auto\" is not supported: only alpha=1 maps to a fixed-point format".into(),
            25,
        ),
        (
            "quantized_bits(8,3,alpha=0.5)",
            "alpha=0.5 is not supported: only alpha=1 maps to a fixed-point format".into(),
            25,
        ),
        (
            "quantized_bits(8,3,symmetric=1)",
            "unsupported keyword argument `symmetric`; only alpha=1 is accepted in quantized_bits(b[,i][,alpha=1])".into(),
            19,
        ),
        (
            "quantized_bits(8,3,1)",
            "too many positional arguments; expected quantized_bits(b[,i][,alpha=1])".into(),
            19,
        ),
        (
            "quantized_bits(8,alpha=1,3)",
            "positional argument after a keyword argument; expected quantized_bits(b[,i][,alpha=1])".into(),
            25,
        ),
        (
            "quantized_relu(8,2",
            "expected `)` to close quantized_relu(b[,i][,alpha=1]), found end of input".into(),
            18,
        ),
        ("quantized_relu(8,-1025)", "integer bits -1025 is out of range -1024..=1024".into(), 17),
    ];
    for (s, message, offset) in cases {
        assert_eq!(perr(s), (message, offset), "{s:?}");
    }
    // Display is the message; the position and input are separate.
    let e = "ap_fixed<0,0>".parse::<Format>().unwrap_err();
    assert_eq!(e.to_string(), "width 0 is out of range 1..=64");
    assert_eq!((e.offset(), e.input()), (9, Some("ap_fixed<0,0>")));
}

#[test]
fn format_new_validates() {
    assert!(Format::new(true, 0, 0, Quant::Trn, Overflow::Wrap).is_err());
    assert!(Format::new(true, 65, 0, Quant::Trn, Overflow::Wrap).is_err());
    assert!(Format::new(false, 8, 1025, Quant::Trn, Overflow::Wrap).is_err());
    assert!(Format::new(false, 8, -1025, Quant::Trn, Overflow::Wrap).is_err());
    let e = Format::new(true, 0, 0, Quant::Trn, Overflow::Wrap).unwrap_err();
    assert_eq!((e.to_string().as_str(), e.offset()), ("width 0 is out of range 1..=64", 0));
    let fmt = Format::new(false, 64, -1024, Quant::RndConv, Overflow::SatSym).unwrap();
    assert_eq!(fmt.frac_bits(), 1088);
    assert_eq!(fmt.to_string(), "ap_ufixed<64,-1024,AP_RND_CONV,AP_SAT_SYM>");
}

#[test]
fn serde_as_canonical_string() {
    // Serialized as the canonical Display string; deserialized by FromStr,
    // so any accepted syntax works and errors are reported.
    let fmt = f("quantized_bits(8,3)");
    let yaml = serde_saphyr::to_string(&fmt).unwrap();
    assert_eq!(yaml.trim(), "ap_fixed<8,4,AP_RND_CONV,AP_SAT>");
    let back: Format = serde_saphyr::from_str("ap_ufixed< 6, 2 >").unwrap();
    assert_eq!(back, f("ap_ufixed<6,2,AP_TRN,AP_WRAP>"));
    let err = serde_saphyr::from_str::<Format>("ap_fixed<0,0>").unwrap_err();
    assert!(err.to_string().contains("width 0 is out of range 1..=64"), "{err}");
}
