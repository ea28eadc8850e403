//! Property tests of `fptgen_sim::int8` against a straightforward
//! formulation written here, not a copy of the code under test:
//!
//! * every rounding is an exact rational `n / d` on `i128`, rounded by its
//!   definition (`floor(n/d + 1/2)` for "ties up", sign times
//!   `floor(|n|/d + 1/2)` for "ties away from zero"), where the code under
//!   test uses gemmlowp's nudges, masks and thresholds or a 64-bit shift;
//! * `frexp` is a loop of exact halvings and doublings of the double and
//!   the Q31 rounding is `f64::round`, where the code under test reads the
//!   double's bits.
//!
//! Every run uses a fixed seed, so it is reproducible.

use fptgen_sim::int8::{
    quantize_multiplier, quantize_multiplier_with, rounding_divide_by_pot, saturating_rounding_doubling_high_mul,
    FullyConnected, FullyConnectedParams, QuantizedMultiplier, Requant, Rounding,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32, seed: u64) -> Config {
    Config { cases, rng_seed: RngSeed::Fixed(seed), failure_persistence: None, ..Config::default() }
}

/// `n / d` rounded to nearest, ties toward positive infinity (`d > 0`).
fn round_ties_up(n: i128, d: i128) -> i128 {
    (2 * n + d).div_euclid(2 * d)
}

/// `n / d` rounded to nearest, ties away from zero (`d > 0`).
fn round_ties_away(n: i128, d: i128) -> i128 {
    n.signum() * (2 * n.abs() + d).div_euclid(2 * d)
}

/// Two's-complement wrap to 32 bits.
fn wrap32(v: i128) -> i32 {
    let m = v.rem_euclid(1i128 << 32);
    (if m >= 1i128 << 31 { m - (1i128 << 32) } else { m }) as i32
}

/// `x * multiplier * 2^(shift - 31)`, rounded per `rounding` as its
/// definition says (docs/numerics.md, "Int8 requantization").
fn requant_oracle(x: i32, multiplier: i32, shift: i32, rounding: Rounding) -> i32 {
    let (x, m) = (i128::from(x), i128::from(multiplier));
    match rounding {
        // One rounding of the exact value.
        Rounding::Single => wrap32(round_ties_up(x * m, 1i128 << (31 - shift))),
        // x * 2^left wrapped to 32 bits, times m / 2^31 rounded ties up,
        // then divided by 2^right rounded ties away from zero.
        Rounding::Double => {
            let left = shift.max(0);
            let right = (-shift).max(0);
            let y = i128::from(wrap32(x << left));
            let high = round_ties_up(y * m, 1i128 << 31);
            round_ties_away(high, 1i128 << right) as i32
        }
    }
}

/// TFLite's `QuantizeMultiplier`, with `frexp` as a halving loop and
/// `TfLiteRound` as `f64::round` (ties away from zero).
fn quantize_multiplier_oracle(real: f64, rounding: Rounding) -> Option<(i32, i32)> {
    if real == 0.0 {
        return Some((0, 0));
    }
    let (mut q, mut shift) = (real, 0i32);
    while q >= 1.0 {
        q /= 2.0;
        shift += 1;
    }
    while q < 0.5 {
        q *= 2.0;
        shift -= 1;
    }
    let mut q_fixed = (q * 2f64.powi(31)).round() as i64;
    if q_fixed == 1 << 31 {
        q_fixed /= 2;
        shift += 1;
    }
    if shift < -31 {
        return Some((0, 0));
    }
    if shift > 30 {
        return match rounding {
            Rounding::Single => Some((i32::MAX, 30)),
            Rounding::Double => None,
        };
    }
    Some((q_fixed as i32, shift))
}

/// A positive double spread over the whole exponent range, normal and
/// subnormal, from its bit pattern.
fn any_positive_f64() -> impl Strategy<Value = f64> {
    (1u64..0x7ff0_0000_0000_0000).prop_map(f64::from_bits)
}

/// Effective scales as they occur: a ratio of three float32 scales.
fn realistic_multiplier() -> impl Strategy<Value = f64> {
    (1.0f32..2.0, -12i32..0, 1.0f32..2.0, -12i32..0, 1.0f32..2.0).prop_map(|(a, ea, b, eb, c)| {
        let s_in = a * 2f32.powi(ea);
        let s_w = b * 2f32.powi(eb);
        let s_out = c * 2f32.powi(-6);
        f64::from(s_in) * f64::from(s_w) / f64::from(s_out)
    })
}

fn rounding() -> impl Strategy<Value = Rounding> {
    prop_oneof![Just(Rounding::Single), Just(Rounding::Double)]
}

proptest! {
    #![proptest_config(config(20_000, 0x1515_0001))]

    #[test]
    fn srdhm_is_round_ties_up_of_the_exact_product(a in any::<i32>(), b in any::<i32>()) {
        let expected = if a == i32::MIN && b == i32::MIN {
            i32::MAX
        } else {
            round_ties_up(i128::from(a) * i128::from(b), 1i128 << 31) as i32
        };
        prop_assert_eq!(saturating_rounding_doubling_high_mul(a, b), expected);
    }

    #[test]
    fn srdhm_at_ties(k in any::<i32>(), sign in prop_oneof![Just(1i64), Just(-1i64)]) {
        // a * b = (2k + 1) * 2^30: an exact tie, on either side of zero.
        let a = (i64::from(k >> 1) * 2 + 1) * sign;
        if let Ok(a) = i32::try_from(a) {
            let expected = round_ties_up(i128::from(a) << 30, 1i128 << 31) as i32;
            prop_assert_eq!(saturating_rounding_doubling_high_mul(a, 1 << 30), expected);
        }
    }

    #[test]
    fn rdbpot_is_round_ties_away_of_the_exact_quotient(x in any::<i32>(), e in 0u32..=31) {
        let expected = round_ties_away(i128::from(x), 1i128 << e) as i32;
        prop_assert_eq!(rounding_divide_by_pot(x, e), expected);
    }

    #[test]
    fn rdbpot_at_ties(k in -(1i32 << 20)..(1 << 20), e in 1u32..=10) {
        let x = (2 * k + 1) << (e - 1); // (k + 1/2) * 2^e
        let expected = round_ties_away(i128::from(x), 1i128 << e) as i32;
        prop_assert_eq!(rounding_divide_by_pot(x, e), expected);
    }

    #[test]
    fn apply_matches_the_exact_definition(
        x in any::<i32>(),
        m in (1i32 << 30)..=i32::MAX,
        shift in -31i32..=30,
        r in rounding(),
    ) {
        let qm = QuantizedMultiplier::new(m, shift).unwrap();
        prop_assert_eq!(qm.apply(x, r), requant_oracle(x, m, shift, r));
    }

    #[test]
    fn apply_matches_on_small_accumulators_and_realistic_multipliers(
        x in -(1i32 << 20)..(1 << 20),
        real in realistic_multiplier(),
        r in rounding(),
    ) {
        let qm = QuantizedMultiplier::from_real(real, r).unwrap();
        prop_assert_eq!(qm.apply(x, r), requant_oracle(x, qm.multiplier(), qm.shift(), r));
    }

    #[test]
    fn roundings_differ_by_at_most_one_and_only_for_right_shifts(
        x in -(1i32 << 24)..(1 << 24),
        m in (1i32 << 30)..=i32::MAX,
        shift in -31i32..=6,
    ) {
        let qm = QuantizedMultiplier::new(m, shift).unwrap();
        let (s, d) = (qm.apply(x, Rounding::Single), qm.apply(x, Rounding::Double));
        if shift > 0 {
            prop_assert_eq!(s, d);
        } else {
            prop_assert!((i64::from(s) - i64::from(d)).abs() <= 1, "{} vs {}", s, d);
        }
    }

    #[test]
    fn quantize_multiplier_matches_frexp_and_round(real in any_positive_f64(), r in rounding()) {
        let got = quantize_multiplier_with(real, r).ok();
        prop_assert_eq!(got, quantize_multiplier_oracle(real, r));
    }

    #[test]
    fn quantize_multiplier_at_q31_ties(
        biased in 900u64..1100,
        high in 0u64..(1 << 30),
        r in rounding(),
    ) {
        // The 22 fraction bits below Q31 are exactly one half: a tie.
        let real = f64::from_bits(biased << 52 | high << 22 | 1 << 21);
        let got = quantize_multiplier_with(real, r).ok();
        prop_assert_eq!(got, quantize_multiplier_oracle(real, r));
    }

    #[test]
    fn quantize_multiplier_is_within_half_a_unit(real in realistic_multiplier()) {
        let (m, shift) = quantize_multiplier(real).unwrap();
        prop_assert!((1 << 30..=i32::MAX).contains(&m));
        // |real - m * 2^(shift-31)| <= 2^(shift-32), checked exactly: real
        // is a double, so real * 2^(31-shift) * 2 is exact in f64 here.
        let scaled = real * 2f64.powi(32 - shift);
        prop_assert!((scaled - 2.0 * f64::from(m)).abs() <= 1.0, "{} {} {}", real, m, shift);
    }
}

/// The straightforward fully-connected layer: i64 accumulation, then the
/// exact-rational requantization above.
fn fc_oracle(p: &FullyConnectedParams, x: &[i8]) -> Vec<i8> {
    (0..p.outputs)
        .map(|c| {
            let mut acc: i64 = p.bias.as_ref().map_or(0, |b| i64::from(b[c]));
            for (i, &xi) in x.iter().enumerate() {
                let w = i64::from(p.weights[c * p.inputs + i]) + i64::from(p.weights_offset);
                acc += w * (i64::from(xi) + i64::from(p.input_offset));
            }
            let qm = match &p.requant {
                Requant::PerTensor(m) => *m,
                Requant::PerChannel(ms) => ms[c],
            };
            let y = requant_oracle(acc as i32, qm.multiplier(), qm.shift(), p.rounding);
            let y = i64::from(y) + i64::from(p.output_offset);
            y.clamp(i64::from(p.act_min), i64::from(p.act_max)) as i8
        })
        .collect()
}

#[derive(Debug, Clone)]
struct Case {
    params: FullyConnectedParams,
    inputs: Vec<Vec<i8>>,
}

fn fc_case() -> impl Strategy<Value = Case> {
    (1usize..48, 1usize..12, any::<bool>(), rounding()).prop_flat_map(|(n_in, n_out, per_channel, r)| {
        let weights = prop::collection::vec(-127i8..=127, n_in * n_out);
        let bias = prop::option::of(prop::collection::vec(-(1i32 << 16)..(1 << 16), n_out));
        let reals = prop::collection::vec(realistic_multiplier(), n_out);
        let zps = (-128i32..=127, -128i32..=127, -3i32..=3);
        let act = (-128i32..=127, -128i32..=127);
        let xs = prop::collection::vec(prop::collection::vec(any::<i8>(), n_in), 1..8);
        (weights, bias, reals, zps, act, xs).prop_map(move |(weights, bias, reals, zps, act, xs)| {
            let (z_in, z_out, z_w) = zps;
            let requant = if per_channel {
                Requant::PerChannel(reals.iter().map(|&m| QuantizedMultiplier::from_real(m, r).unwrap()).collect())
            } else {
                Requant::PerTensor(QuantizedMultiplier::from_real(reals[0], r).unwrap())
            };
            let params = FullyConnectedParams {
                inputs: n_in,
                outputs: n_out,
                weights,
                bias,
                input_offset: -z_in,
                weights_offset: if per_channel { 0 } else { -z_w },
                output_offset: z_out,
                requant,
                act_min: act.0.min(act.1),
                act_max: act.0.max(act.1),
                rounding: r,
            };
            Case { params, inputs: xs }
        })
    })
}

proptest! {
    #![proptest_config(config(3_000, 0x1515_0002))]

    #[test]
    fn fully_connected_matches_the_straightforward_layer(case in fc_case()) {
        let fc = FullyConnected::new(case.params.clone()).unwrap();
        for x in &case.inputs {
            prop_assert_eq!(fc.run(x).unwrap(), fc_oracle(&case.params, x));
        }
    }
}
