//! Property tests of `fptgen_sim::fixed` against two independent oracles:
//!
//! 1. the `fixed` crate (v1.x), for every format it can express: `FixedI8`,
//!    `FixedI16`, `FixedI32`, `FixedI64` and their unsigned counterparts
//!    with every number of fractional bits from 0 to the width (248 types).
//!    Correspondence, from `fixed`'s documentation and source
//!    (`float_helper.rs`, `int_helper.rs`, `macros_from_to.rs`):
//!    * from a float, `wrapping_from_num` rounds to nearest with ties to
//!      even, then wraps: `AP_RND_CONV, AP_WRAP`; `saturating_from_num`:
//!      `AP_RND_CONV, AP_SAT`; `checked_from_num` is `None` exactly when
//!      `AP_RND_CONV` overflows;
//!    * from another fixed-point number, extra fractional bits are
//!      discarded (rounds toward -inf): `wrapping_from_num` is
//!      `AP_TRN, AP_WRAP`, `saturating_from_num` is `AP_TRN, AP_SAT`,
//!      `checked_from_num` is `None` exactly when `AP_TRN` overflows;
//!    * `wide_mul` / `wide_mul_unsigned` give the exact product in the
//!      double-width type, which is then cast as above;
//!    * `wrapping_add` / `saturating_add` / `checked_add` are the sum with
//!      `AP_WRAP` / `AP_SAT` / overflow detection;
//!    * `to_num::<f64>()` rounds to nearest, ties to even, like `to_f64`;
//!    * rounding to an integer: `checked_floor` is `AP_TRN`, `round_to_zero`
//!      is `AP_TRN_ZERO`, `checked_round` (ties away from zero) is
//!      `AP_RND_INF`, `checked_round_ties_even` is `AP_RND_CONV`.
//! 2. a slow reference written here in Xilinx's own formulation (floor, then
//!    `quantization_adjust(qb, r, s)`, then clamp or `rem_euclid`) on `i128`,
//!    for all 7 x 4 mode combinations and widths up to 32.
//!
//! All runs use a fixed seed, so they are reproducible.

use std::marker::PhantomData;

use fixed::traits::Fixed as FixedT;
use fixed::types::extra::*;
use fixed::{FixedI128, FixedI16, FixedI32, FixedI64, FixedI8, FixedU128, FixedU16, FixedU32, FixedU64, FixedU8};
use fptgen_sim::fixed::{Conversion, Format, Overflow, Quant};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

// Case counts: each `fixed` case checks all 248 types (or 40 product
// targets), each reference case all 28 mode combinations.
const CASES_FROM_F64: u32 = 20_000;
const CASES_CODES: u32 = 10_000;
const CASES_CASTS: u32 = 20_000;
const CASES_PRODUCTS: u32 = 50_000;
const CASES_REFERENCE: u32 = 50_000;

/// A reproducible proptest configuration: fixed seed, no failure files.
fn config(cases: u32, seed: u64) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    }
}

fn fmt(signed: bool, width: u32, int_bits: i32, q: Quant, o: Overflow) -> Format {
    Format::new(signed, width, int_bits, q, o).expect("valid format")
}

/// A raw code of `f` from random bits, often small in magnitude: the bits
/// are arithmetically shifted right by `shift` first, so that values near
/// zero (and their rounding ties) are as common as values near the range
/// ends.
fn raw_from(f: &Format, bits: u64, shift: u32) -> i128 {
    f.from_bits(((bits as i64) >> (shift % 64)) as u64)
}

// ----------------------------------------------------------- the fixed crate

/// One `fixed` type, seen through raw codes.
trait Oracle {
    fn signed(&self) -> bool;
    fn width(&self) -> u32;
    fn int_bits(&self) -> i32;
    fn name(&self) -> String {
        format!(
            "{}{}F{}",
            if self.signed() { "I" } else { "U" },
            self.int_bits(),
            self.width() as i32 - self.int_bits()
        )
    }
    fn format(&self, q: Quant, o: Overflow) -> Format {
        fmt(self.signed(), self.width(), self.int_bits(), q, o)
    }
    /// (wrapping, saturating, checked) conversion of a double.
    fn conv_f64(&self, x: f64) -> (i128, i128, Option<i128>);
    fn to_f64(&self, raw: i128) -> f64;
    /// (wrapping, saturating, checked) sum.
    fn add(&self, a: i128, b: i128) -> (i128, i128, Option<i128>);
    /// (floor, round_to_zero, round (ties away), round_ties_even) to an
    /// integer, as exact integers; `None` where `fixed` overflows.
    fn round_int(&self, raw: i128) -> [Option<i128>; 4];
    /// (wrapping, saturating, checked) cast of a source value.
    fn cast(&self, src: &Src) -> (i128, i128, Option<i128>);
}

struct Ty<T>(PhantomData<T>);

fn to_raw<T: FixedT>(v: T) -> i128 {
    v.to_bits().try_into().ok().expect("bits of a <=64-bit type fit i128")
}

fn from_raw<T: FixedT>(raw: i128) -> T {
    T::from_bits(raw.try_into().ok().expect("raw code in range"))
}

impl<T: FixedT> Oracle for Ty<T> {
    fn signed(&self) -> bool {
        T::IS_SIGNED
    }
    fn width(&self) -> u32 {
        T::INT_NBITS + T::FRAC_NBITS
    }
    fn int_bits(&self) -> i32 {
        T::INT_NBITS as i32
    }
    fn conv_f64(&self, x: f64) -> (i128, i128, Option<i128>) {
        (
            to_raw(T::wrapping_from_num(x)),
            to_raw(T::saturating_from_num(x)),
            T::checked_from_num(x).map(to_raw),
        )
    }
    fn to_f64(&self, raw: i128) -> f64 {
        from_raw::<T>(raw).to_num::<f64>()
    }
    fn add(&self, a: i128, b: i128) -> (i128, i128, Option<i128>) {
        let (a, b) = (from_raw::<T>(a), from_raw::<T>(b));
        (
            to_raw(a.wrapping_add(b)),
            to_raw(a.saturating_add(b)),
            a.checked_add(b).map(to_raw),
        )
    }
    fn round_int(&self, raw: i128) -> [Option<i128>; 4] {
        let x = from_raw::<T>(raw);
        let int = |v: T| v.to_num::<i128>();
        [
            x.checked_floor().map(int),
            Some(int(x.round_to_zero())),
            x.checked_round().map(int),
            x.checked_round_ties_even().map(int),
        ]
    }
    fn cast(&self, src: &Src) -> (i128, i128, Option<i128>) {
        src.cast_to::<T>()
    }
}

/// Push `Ty<$fix<U>>` for every listed fraction type.
macro_rules! push_types {
    ($v:ident, $fix:ident, [$($u:ident),*]) => {
        $( $v.push(Box::new(Ty::<$fix<$u>>(PhantomData)) as Box<dyn Oracle>); )*
    };
}

/// Every type of the `fixed` crate with 8, 16, 32 or 64 bits.
#[allow(clippy::vec_init_then_push)]
fn all_types() -> Vec<Box<dyn Oracle>> {
    let mut v: Vec<Box<dyn Oracle>> = Vec::new();
    push_types!(v, FixedI8, [U0, U1, U2, U3, U4, U5, U6, U7, U8]);
    push_types!(v, FixedU8, [U0, U1, U2, U3, U4, U5, U6, U7, U8]);
    push_types!(v, FixedI16, [U0, U1, U2, U3, U4, U5, U6, U7, U8, U9, U10, U11, U12, U13, U14, U15, U16]);
    push_types!(v, FixedU16, [U0, U1, U2, U3, U4, U5, U6, U7, U8, U9, U10, U11, U12, U13, U14, U15, U16]);
    push_types!(v, FixedI32, [U0, U1, U2, U3, U4, U5, U6, U7, U8, U9, U10, U11, U12, U13, U14, U15, U16, U17, U18, U19, U20, U21, U22, U23, U24, U25, U26, U27, U28, U29, U30, U31, U32]);
    push_types!(v, FixedU32, [U0, U1, U2, U3, U4, U5, U6, U7, U8, U9, U10, U11, U12, U13, U14, U15, U16, U17, U18, U19, U20, U21, U22, U23, U24, U25, U26, U27, U28, U29, U30, U31, U32]);
    push_types!(v, FixedI64, [U0, U1, U2, U3, U4, U5, U6, U7, U8, U9, U10, U11, U12, U13, U14, U15, U16, U17, U18, U19, U20, U21, U22, U23, U24, U25, U26, U27, U28, U29, U30, U31, U32, U33, U34, U35, U36, U37, U38, U39, U40, U41, U42, U43, U44, U45, U46, U47, U48, U49, U50, U51, U52, U53, U54, U55, U56, U57, U58, U59, U60, U61, U62, U63, U64]);
    push_types!(v, FixedU64, [U0, U1, U2, U3, U4, U5, U6, U7, U8, U9, U10, U11, U12, U13, U14, U15, U16, U17, U18, U19, U20, U21, U22, U23, U24, U25, U26, U27, U28, U29, U30, U31, U32, U33, U34, U35, U36, U37, U38, U39, U40, U41, U42, U43, U44, U45, U46, U47, U48, U49, U50, U51, U52, U53, U54, U55, U56, U57, U58, U59, U60, U61, U62, U63, U64]);
    v
}

/// The format of a `fixed` type, with `AP_TRN, AP_WRAP`.
fn type_format<T: FixedT>() -> Format {
    fmt(
        T::IS_SIGNED,
        T::INT_NBITS + T::FRAC_NBITS,
        T::INT_NBITS as i32,
        Quant::Trn,
        Overflow::Wrap,
    )
}

/// Source types of the cast tests: every width, both signednesses,
/// all-integer, all-fraction and mixed (eight, to keep compile time down:
/// each source is instantiated for all 248 targets).
macro_rules! sources {
    ($($name:ident: $ty:ty),* $(,)?) => {
        /// A value of one of the source types.
        #[derive(Clone, Copy, Debug)]
        enum Src { $($name($ty)),* }

        const N_SOURCES: usize = [$(stringify!($name)),*].len();

        impl Src {
            /// Source type number `k` with a random code: the value and our
            /// view of it (raw code, format).
            fn make(k: usize, bits: u64, shift: u32) -> (Src, i128, Format) {
                let mut i = 0;
                $(
                    if k == i {
                        let f = type_format::<$ty>();
                        let raw = raw_from(&f, bits, shift);
                        return (Src::$name(from_raw::<$ty>(raw)), raw, f);
                    }
                    i += 1;
                )*
                let _ = i;
                unreachable!("source index {k} out of range")
            }

            fn cast_to<T: FixedT>(&self) -> (i128, i128, Option<i128>) {
                match *self {
                    $(Src::$name(v) => (
                        to_raw(T::wrapping_from_num(v)),
                        to_raw(T::saturating_from_num(v)),
                        T::checked_from_num(v).map(to_raw),
                    )),*
                }
            }
        }
    };
}

sources! {
    I5F3: FixedI8<U3>,
    U0F8: FixedU8<U8>,
    U7F9: FixedU16<U9>,
    I16F16: FixedI32<U16>,
    I32F32: FixedI64<U32>,
    U64F0: FixedU64<U0>,
    I0F64: FixedI64<U64>,
    U51F13: FixedU64<U13>,
}

/// Products: operand types, the `fixed` method giving the exact product,
/// and its (double-width) type.
macro_rules! products {
    ($($name:ident: $a:ty, $b:ty, $method:ident -> $p:ty);* $(;)?) => {
        /// An exact product computed by `fixed`.
        #[derive(Clone, Copy, Debug)]
        enum Prod { $($name($p)),* }

        const N_PRODUCTS: usize = [$(stringify!($name)),*].len();

        /// Random operands (our view) and `fixed`'s exact product.
        struct ProdCase {
            prod: Prod,
            a: i128,
            fa: Format,
            b: i128,
            fb: Format,
        }

        impl Prod {
            fn make(k: usize, ra: (u64, u32), rb: (u64, u32)) -> ProdCase {
                let mut i = 0;
                $(
                    if k == i {
                        let fa = type_format::<$a>();
                        let fb = type_format::<$b>();
                        let a = raw_from(&fa, ra.0, ra.1);
                        let b = raw_from(&fb, rb.0, rb.1);
                        let p: $p = from_raw::<$a>(a).$method(from_raw::<$b>(b));
                        return ProdCase { prod: Prod::$name(p), a, fa, b, fb };
                    }
                    i += 1;
                )*
                let _ = i;
                unreachable!("product index {k} out of range")
            }

            fn cast_to<T: FixedT>(&self) -> (i128, i128, Option<i128>) {
                match *self {
                    $(Prod::$name(v) => (
                        to_raw(T::wrapping_from_num(v)),
                        to_raw(T::saturating_from_num(v)),
                        T::checked_from_num(v).map(to_raw),
                    )),*
                }
            }
        }
    };
}

products! {
    U64xU64: FixedU64<U0>, FixedU64<U0>, wide_mul -> FixedU128<U0>;
    I64xI64: FixedI64<U0>, FixedI64<U0>, wide_mul -> FixedI128<U0>;
    U0F64xU32F32: FixedU64<U64>, FixedU64<U32>, wide_mul -> FixedU128<U96>;
    I1F63xI63F1: FixedI64<U63>, FixedI64<U1>, wide_mul -> FixedI128<U64>;
    I32F32xI32F32: FixedI64<U32>, FixedI64<U32>, wide_mul -> FixedI128<U64>;
    I44F20xU24F40: FixedI64<U20>, FixedU64<U40>, wide_mul_unsigned -> FixedI128<U60>;
    I16F16xI1F31: FixedI32<U16>, FixedI32<U31>, wide_mul -> FixedI64<U47>;
    U0F32xU32F0: FixedU32<U32>, FixedU32<U0>, wide_mul -> FixedU64<U32>;
    I22F10xU0F32: FixedI32<U10>, FixedU32<U32>, wide_mul_unsigned -> FixedI64<U42>;
    I8F8xI1F15: FixedI16<U8>, FixedI16<U15>, wide_mul -> FixedI32<U23>;
    I4F4xI1F7: FixedI8<U4>, FixedI8<U7>, wide_mul -> FixedI16<U11>;
    U0F8xU5F3: FixedU8<U8>, FixedU8<U3>, wide_mul -> FixedU16<U11>;
}

/// Targets of the product tests (a subset, to keep compile time down):
/// fractional bits 0, 1, W/2, W-1 and W of every width and signedness.
trait ProdTarget {
    fn format(&self, q: Quant, o: Overflow) -> Format;
    fn cast(&self, p: &Prod) -> (i128, i128, Option<i128>);
}

impl<T: FixedT> ProdTarget for Ty<T> {
    fn format(&self, q: Quant, o: Overflow) -> Format {
        type_format::<T>().with_modes(q, o)
    }
    fn cast(&self, p: &Prod) -> (i128, i128, Option<i128>) {
        p.cast_to::<T>()
    }
}

macro_rules! push_targets {
    ($v:ident, $fix:ident, [$($u:ident),*]) => {
        $( $v.push(Box::new(Ty::<$fix<$u>>(PhantomData)) as Box<dyn ProdTarget>); )*
    };
}

#[allow(clippy::vec_init_then_push)]
fn product_targets() -> Vec<Box<dyn ProdTarget>> {
    let mut v: Vec<Box<dyn ProdTarget>> = Vec::new();
    push_targets!(v, FixedI8, [U0, U1, U4, U7, U8]);
    push_targets!(v, FixedU8, [U0, U1, U4, U7, U8]);
    push_targets!(v, FixedI16, [U0, U1, U8, U15, U16]);
    push_targets!(v, FixedU16, [U0, U1, U8, U15, U16]);
    push_targets!(v, FixedI32, [U0, U1, U16, U31, U32]);
    push_targets!(v, FixedU32, [U0, U1, U16, U31, U32]);
    push_targets!(v, FixedI64, [U0, U1, U32, U63, U64]);
    push_targets!(v, FixedU64, [U0, U1, U32, U63, U64]);
    v
}

/// Our (wrapping, saturating, checked) result from two conversions.
fn ours3(wrap: Conversion, sat: Conversion) -> (i128, i128, Option<i128>) {
    (
        wrap.raw,
        sat.raw,
        if wrap.overflowed { None } else { Some(wrap.raw) },
    )
}

/// Doubles that exercise every format: arbitrary finite doubles, small
/// integers times powers of two (exact ties and near-ties for every F),
/// and 53-bit significands at every scale the formats use.
fn any_double() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>()
            .prop_map(f64::from_bits)
            .prop_filter("finite", |x| x.is_finite()),
        (-64i64..=64, -70i32..=70).prop_map(|(m, e)| m as f64 * 2f64.powi(e)),
        (any::<i64>(), 0u32..64, -140i32..=80)
            .prop_map(|(m, s, e)| ((m >> s) as f64) * 2f64.powi(e)),
        (any::<i64>(), -140i32..=80).prop_map(|(m, e)| {
            // m * 2^e +- half a step of F = -e - 1: ties.
            (((m >> 11) | 1) as f64) * 2f64.powi(e)
        }),
    ]
}

proptest! {
    #![proptest_config(config(CASES_FROM_F64, 0x5eed_0001))]

    /// (1) conversion from f64: RND_CONV with WRAP / SAT / overflow check.
    #[test]
    fn oracle_from_f64(x in any_double()) {
        for t in all_types() {
            let wrap = t.format(Quant::RndConv, Overflow::Wrap).convert_f64(x).unwrap();
            let sat = t.format(Quant::RndConv, Overflow::Sat).convert_f64(x).unwrap();
            prop_assert_eq!(ours3(wrap, sat), t.conv_f64(x), "{} from {:e}", t.name(), x);
        }
    }

}

proptest! {
    #![proptest_config(config(CASES_CODES, 0x5eed_0002))]

    /// (5) to_f64, and (4) sums, and integer rounding, on random codes.
    #[test]
    fn oracle_to_f64_add_round(
        a in any::<u64>(), sa in 0u32..64, b in any::<u64>(), sb in 0u32..64,
    ) {
        for t in all_types() {
            let f = t.format(Quant::Trn, Overflow::Wrap);
            let ra = raw_from(&f, a, sa);
            let rb = raw_from(&f, b, sb);
            prop_assert_eq!(f.to_f64(ra).to_bits(), t.to_f64(ra).to_bits(), "{} to_f64 {}", t.name(), ra);
            let wrap = f.convert_sum(ra, rb);
            let sat = t.format(Quant::Trn, Overflow::Sat).convert_sum(ra, rb);
            prop_assert_eq!(ours3(wrap, sat), t.add(ra, rb), "{} {} + {}", t.name(), ra, rb);
            // Rounding to an integer: ours into a 64-bit integer format with
            // AP_SAT (never overflows where `fixed` does not).
            let int = fmt(t.signed(), 64, 64, Quant::Trn, Overflow::Sat);
            let modes = [Quant::Trn, Quant::TrnZero, Quant::RndInf, Quant::RndConv];
            let theirs = t.round_int(ra);
            for (q, th) in modes.into_iter().zip(theirs) {
                if let Some(th) = th {
                    let ours = int.with_modes(q, Overflow::Sat).cast_from(ra, &f);
                    prop_assert_eq!(ours, th, "{} round {} {}", t.name(), q, ra);
                }
            }
        }
    }

}

proptest! {
    #![proptest_config(config(CASES_CASTS, 0x5eed_0003))]

    /// (2) casts between `fixed` types: TRN with WRAP / SAT / overflow check.
    #[test]
    fn oracle_casts(k in 0..N_SOURCES, bits in any::<u64>(), shift in 0u32..64) {
        let (src, raw, from) = Src::make(k, bits, shift);
        for t in all_types() {
            let wrap = t.format(Quant::Trn, Overflow::Wrap).convert_from(raw, &from);
            let sat = t.format(Quant::Trn, Overflow::Sat).convert_from(raw, &from);
            prop_assert_eq!(ours3(wrap, sat), t.cast(&src), "{:?} -> {}", src, t.name());
        }
    }

}

proptest! {
    #![proptest_config(config(CASES_PRODUCTS, 0x5eed_0004))]

    /// (3) exact products, cast with TRN and WRAP / SAT / overflow check.
    #[test]
    fn oracle_products(
        k in 0..N_PRODUCTS,
        a in any::<u64>(), sa in 0u32..64, b in any::<u64>(), sb in 0u32..64,
    ) {
        let c = Prod::make(k, (a, sa), (b, sb));
        for t in product_targets() {
            let wrap = t.format(Quant::Trn, Overflow::Wrap).convert_product(c.a, &c.fa, c.b, &c.fb);
            let sat = t.format(Quant::Trn, Overflow::Sat).convert_product(c.a, &c.fa, c.b, &c.fb);
            prop_assert_eq!(
                ours3(wrap, sat),
                t.cast(&c.prod),
                "{:?} = {} * {} -> {}", c.prod, c.a, c.b, t.format(Quant::Trn, Overflow::Wrap)
            );
        }
    }
}

// -------------------------------------------------- the slow reference

/// `x = m * 2^e` exactly, found without looking at the bit pattern: scale
/// by 2 until integral, then halve while the integer needs more than 53
/// bits (exact: such an integer-valued double has that many trailing zeros).
fn decompose(x: f64) -> (i128, i32) {
    if x == 0.0 {
        return (0, 0);
    }
    let (mut y, mut e) = (x, 0i32);
    while y.fract() != 0.0 {
        y *= 2.0;
        e -= 1;
    }
    while y.abs() >= 9007199254740992.0 {
        y /= 2.0;
        e += 1;
    }
    (y as i128, e)
}

/// Xilinx's `quantization_adjust`: whether to add one to the floor, given
/// qb (first dropped bit), r (any lower dropped bit), s (source negative)
/// and the floor's lowest bit.
fn xilinx_adjust(q: Quant, qb: bool, r: bool, s: bool, floor_odd: bool) -> bool {
    match q {
        Quant::Trn => false,
        Quant::Rnd => qb,
        Quant::RndZero => qb && (s || r),
        Quant::RndMinInf => qb && r,
        Quant::RndInf => qb && (!s || r),
        Quant::RndConv => qb && (floor_odd || r),
        Quant::TrnZero => s && (qb || r),
    }
}

/// The code of `m * 2^e` in `f`, computed the slow way (formats of width
/// at most 32; `|m| < 2^64`).
fn reference(f: &Format, m: i128, e: i32) -> i128 {
    let w = f.width();
    assert!(w <= 32);
    let (min, max) = if f.signed() {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    };
    // The value in units of the target's LSB is m * 2^k.
    let k = e + f.frac_bits();
    let q: i128 = if m == 0 {
        0
    } else if k > 60 {
        // |q| >= 2^61: out of range, and 0 modulo 2^w (w <= 32 < k).
        return match f.overflow() {
            Overflow::Wrap | Overflow::SatZero => 0,
            _ if m > 0 => max,
            Overflow::SatSym if f.signed() => -max,
            _ => min,
        };
    } else if k >= 0 {
        m << k
    } else {
        let d = -k;
        let s = m < 0;
        let (floor, qb, r) = if d > 120 {
            // |m * 2^k| < 2^-56: floor is 0 or -1, the dropped part is
            // tiny (positive) or almost 1 (negative).
            if s { (-1, true, true) } else { (0, false, true) }
        } else {
            let floor = m >> d; // arithmetic shift = floor
            let rem = m - (floor << d); // 0 <= rem < 2^d
            let qb = (rem >> (d - 1)) & 1 == 1;
            let r = rem & ((1i128 << (d - 1)) - 1) != 0;
            (floor, qb, r)
        };
        floor + i128::from(xilinx_adjust(f.quant(), qb, r, s, floor & 1 == 1))
    };
    let in_range = min <= q && q <= max;
    match f.overflow() {
        Overflow::Wrap => (q - min).rem_euclid(1i128 << w) + min,
        Overflow::Sat => q.clamp(min, max),
        Overflow::SatZero => if in_range { q } else { 0 },
        Overflow::SatSym => if f.signed() { q.clamp(-max, max) } else { q.clamp(min, max) },
    }
}

fn small_format() -> impl Strategy<Value = (bool, u32, i32)> {
    (any::<bool>(), 1u32..=32).prop_flat_map(|(s, w)| (Just(s), Just(w), -8i32..=(w as i32 + 8)))
}

proptest! {
    #![proptest_config(config(CASES_REFERENCE, 0x5eed_0005))]

    /// quantize_f64 agrees with the slow reference for all 7 x 4 modes.
    #[test]
    fn reference_quantize_f64((signed, w, i) in small_format(), x in any_double()) {
        let (m, e) = decompose(x);
        if (-1000..=900).contains(&e) {
            prop_assert_eq!(m as f64 * 2f64.powi(e), x, "decompose");
        }
        for q in Quant::ALL {
            for o in Overflow::ALL {
                let f = fmt(signed, w, i, q, o);
                prop_assert_eq!(f.quantize_f64(x).unwrap(), reference(&f, m, e), "{} <- {:e}", f, x);
            }
        }
    }

    /// quantize_exact (and so casts and products, which build the same
    /// exact value) agrees with the slow reference for all 7 x 4 modes.
    #[test]
    fn reference_quantize_exact(
        (signed, w, i) in small_format(),
        m in any::<i64>(), s in 0u32..64, frac in -70i32..=150,
    ) {
        let m = i128::from(m >> s);
        for q in Quant::ALL {
            for o in Overflow::ALL {
                let f = fmt(signed, w, i, q, o);
                prop_assert_eq!(f.quantize_exact(m, frac), reference(&f, m, -frac), "{} <- {} * 2^-{}", f, m, frac);
            }
        }
    }

    /// Sums agree with the slow reference (the exact sum, quantized).
    #[test]
    fn reference_add((signed, w, i) in small_format(), a in any::<u64>(), sa in 0u32..64, b in any::<u64>(), sb in 0u32..64) {
        for o in Overflow::ALL {
            let f = fmt(signed, w, i, Quant::Rnd, o);
            let (ra, rb) = (raw_from(&f, a, sa), raw_from(&f, b, sb));
            prop_assert_eq!(f.add(ra, rb), reference(&f, ra + rb, -f.frac_bits()), "{} {} + {}", f, ra, rb);
        }
    }

    /// exact_f64 accepts exactly the doubles that convert losslessly.
    #[test]
    fn exact_f64_is_lossless_conversion((signed, w, i) in small_format(), x in any_double()) {
        for o in Overflow::ALL {
            for q in [Quant::Trn, Quant::RndConv] {
                let f = fmt(signed, w, i, q, o);
                let c = f.convert_f64(x).unwrap();
                let lossless = !c.inexact && !c.overflowed;
                match f.exact_f64(x) {
                    Ok(raw) => {
                        prop_assert!(lossless, "{} accepted {:e}", f, x);
                        prop_assert_eq!(raw, c.raw);
                    }
                    Err(e) => prop_assert!(!lossless, "{} refused {:e}: {}", f, x, e),
                }
            }
        }
    }
}
