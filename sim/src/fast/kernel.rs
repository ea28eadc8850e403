//! Exact integer matrix products: `out[s][o] = sum_i a[s][i] * b[o][i]`
//! for integer codes, with every partial sum proven to fit the accumulator
//! the kernel uses, so the result is the exact integer whatever the order
//! of the additions.
//!
//! [`Rows`] holds the right operand (`n` rows of `k` codes: a dense layer's
//! weights, or the perturbations of a group's members) laid out for the
//! fastest kernel that the bounds allow:
//!
//! * `Vnni`: on x86-64 with AVX-512 VNNI (checked at run time), when the left
//!   operand's codes lie in `0..=255` (`u8`), the rows' in `-128..=127` (`i8`)
//!   and `k * max|a| * max|b| < 2^31`: `vpdpbusd` multiplies 64 byte pairs
//!   and adds them in groups of four into sixteen `i32` lanes; every partial
//!   sum of any subset of the products is at most `k * max|a| * max|b|` in
//!   magnitude, so no lane can wrap and the `i32` sums are exact.
//! * `I32`: the same bound, codes converted to `i32`, a plain loop.
//! * `I64`: `k * max|a| * max|b| < 2^63`, in `i64`.
//!
//! [`Rows::new`] returns `None` when even `i64` could overflow; callers then
//! keep their `i128` path.

/// The right operand of [`Rows::mul`], packed for one kernel.
#[derive(Debug, Clone)]
pub struct Rows {
    n: usize,
    k: usize,
    /// The left operand's code range the kernel was chosen for.
    a_range: (i64, i64),
    repr: Repr,
}

#[derive(Debug, Clone)]
enum Repr {
    /// Panel `p` (rows `16p .. 16p + 15`) holds, for each step `t` of four
    /// inputs, 16 rows times 4 codes (`[k4 / 4][16][4]`), zero-padded.
    #[cfg(target_arch = "x86_64")]
    Vnni { k4: usize, panels: usize, packed: Vec<i8> },
    I32(Vec<i32>),
    I64(Vec<i64>),
}

/// A left operand of [`Rows::mul_left`] (`m` rows of `k` codes), with the
/// `u8` copy the `Vnni` kernel reads when every code fits `u8`, so that it
/// is converted once for several products.
#[derive(Debug, Clone)]
pub struct Left {
    m: usize,
    k: usize,
    a: Vec<i64>,
    /// The smallest and largest code (`(0, 0)` when empty).
    range: (i64, i64),
    /// Rows padded to a multiple of 4 bytes, when every code fits `u8`.
    a8: Option<Vec<u8>>,
}

impl Left {
    /// `m` rows of `k` codes, row-major.
    pub fn new(a: Vec<i64>, m: usize, k: usize) -> Left {
        assert_eq!(a.len(), m * k, "a must hold m * k codes");
        let k4 = k.div_ceil(4) * 4;
        let range = if a.is_empty() { (0, 0) } else { range_of(&a) };
        let a8 = (k > 0 && range.0 >= 0 && range.1 <= 255).then(|| {
            let mut a8 = vec![0u8; m * k4];
            for (dst, src) in a8.chunks_exact_mut(k4).zip(a.chunks_exact(k)) {
                narrow_u8(src, &mut dst[..k]);
            }
            a8
        });
        Left { m, k, a, range, a8 }
    }

    /// Rows `m`.
    pub fn m(&self) -> usize {
        self.m
    }
}

/// Defines `fn $name($args) -> $ret` from a body the compiler vectorizes,
/// compiled a second time for AVX-512 and chosen at run time
/// ([`has_avx512`]).
macro_rules! vectorized {
    ($(#[$doc:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        $(#[$doc])*
        $vis fn $name($($arg: $ty),*) -> $ret {
            #[inline(always)]
            fn body($($arg: $ty),*) -> $ret $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
            unsafe fn body_avx512($($arg: $ty),*) -> $ret {
                body($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            if has_avx512() {
                // SAFETY: the CPU has the features (checked).
                return unsafe { body_avx512($($arg),*) };
            }
            body($($arg),*)
        }
    };
}

vectorized! {
    /// The smallest and largest value of a non-empty slice.
    fn range_of(a: &[i64]) -> (i64, i64) {
        a.iter().fold((i64::MAX, i64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)))
    }
}

vectorized! {
    /// `dst[i] = src[i] as u8` (codes known to be in `0..=255`).
    fn narrow_u8(src: &[i64], dst: &mut [u8]) -> () {
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = v as u8;
        }
    }
}

vectorized! {
    /// `src` as `i64` (codes known to fit), appended to `dst`.
    pub fn extend_i64(src: &[i128], dst: &mut Vec<i64>) -> () {
        dst.extend(src.iter().map(|&v| v as i64));
    }
}

vectorized! {
    /// `dst[o] += w[o] * dv` for every `o` (callers guarantee no overflow).
    pub fn axpy(dst: &mut [i64], w: &[i64], dv: i64) -> () {
        for (d, &x) in dst.iter_mut().zip(w) {
            *d += x * dv;
        }
    }
}

vectorized! {
    /// `sum_i a[i] * b[i]` (callers guarantee no overflow).
    pub fn dot(a: &[i64], b: &[i64]) -> i64 {
        a.iter().zip(b).map(|(&x, &y)| x * y).sum()
    }
}

/// The kernel a [`Rows`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// AVX-512 VNNI, `u8 x i8` products summed in `i32`.
    Vnni,
    /// `i32` products and sums.
    I32,
    /// `i64` products and sums.
    I64,
}

/// True if this machine runs the `Vnni` kernel.
pub fn has_vnni() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// True if this machine has AVX-512 F, DQ, BW and VL (the vectorized
/// loops of `crate::fast` then run compiled for them).
pub fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `max(|lo|, |hi|)` as `u128`.
fn mag(lo: i64, hi: i64) -> u128 {
    u128::from(lo.unsigned_abs().max(hi.unsigned_abs()))
}

impl Rows {
    /// Packs `rows` (`n` rows of `k` codes, row-major) for a left operand
    /// whose codes lie in `a_lo..=a_hi`. `None` when a partial sum could
    /// exceed `i64`. `allow_vnni` false keeps the portable kernels (tests).
    pub fn new(rows: &[i64], n: usize, k: usize, (a_lo, a_hi): (i64, i64), allow_vnni: bool) -> Option<Rows> {
        assert_eq!(rows.len(), n * k, "rows must hold n * k codes");
        let (b_lo, b_hi) = rows.iter().fold((0i64, 0i64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let bound = mag(a_lo, a_hi).checked_mul(mag(b_lo, b_hi))?.checked_mul(k.max(1) as u128)?;
        let a_range = (a_lo, a_hi);
        if bound < 1 << 31 {
            #[cfg(target_arch = "x86_64")]
            if allow_vnni && a_lo >= 0 && a_hi <= 255 && b_lo >= -128 && b_hi <= 127 && has_vnni() {
                let k4 = k.div_ceil(4) * 4;
                let panels = n.div_ceil(16);
                let mut packed = vec![0i8; panels * k4 * 16];
                for (o, row) in rows.chunks_exact(k.max(1)).enumerate().take(n) {
                    let (p, lane) = (o / 16, o % 16);
                    for (i, &v) in row.iter().enumerate() {
                        packed[p * k4 * 16 + (i / 4) * 64 + lane * 4 + i % 4] = v as i8;
                    }
                }
                return Some(Rows { n, k, a_range, repr: Repr::Vnni { k4, panels, packed } });
            }
            return Some(Rows { n, k, a_range, repr: Repr::I32(rows.iter().map(|&v| v as i32).collect()) });
        }
        (bound < 1 << 63).then(|| Rows { n, k, a_range, repr: Repr::I64(rows.to_vec()) })
    }

    /// The kernel in use.
    pub fn kernel(&self) -> Kernel {
        match self.repr {
            #[cfg(target_arch = "x86_64")]
            Repr::Vnni { .. } => Kernel::Vnni,
            Repr::I32(_) => Kernel::I32,
            Repr::I64(_) => Kernel::I64,
        }
    }

    /// Rows `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `out[s * n + o] = sum_i a[s * k + i] * rows[o * k + i]` for `m`
    /// left rows, exactly. Every code of `a` must lie in the range given to
    /// [`Rows::new`] (checked; panics otherwise, as a wrong bound would
    /// silently give wrong sums).
    pub fn mul(&self, a: Vec<i64>, m: usize, out: &mut [i64]) {
        self.mul_left(&Left::new(a, m, self.k), out)
    }

    /// [`Rows::mul`] of a prepared left operand.
    pub fn mul_left(&self, left: &Left, out: &mut [i64]) {
        let (n, k, m) = (self.n, self.k, left.m);
        assert!(left.k == k && out.len() == m * n, "operand shapes");
        let (lo, hi) = self.a_range;
        assert!(lo <= left.range.0 && left.range.1 <= hi, "left operand outside the range the kernel was chosen for");
        if k == 0 {
            out.fill(0);
            return;
        }
        let a = &left.a;
        match &self.repr {
            #[cfg(target_arch = "x86_64")]
            Repr::Vnni { k4, panels, packed } => {
                let (k4, panels) = (*k4, *panels);
                // The range check above puts every code in 0..=255.
                let a8 = left.a8.as_ref().expect("codes in 0..=255 have a u8 copy");
                vnni_mul(a8, m, k4, packed, panels, n, out);
            }
            Repr::I32(b) => {
                let a32: Vec<i32> = a.iter().map(|&v| v as i32).collect();
                for (dst, x) in out.chunks_exact_mut(n).zip(a32.chunks_exact(k)) {
                    for (d, row) in dst.iter_mut().zip(b.chunks_exact(k)) {
                        *d = i64::from(row.iter().zip(x).map(|(&w, &xi)| w * xi).sum::<i32>());
                    }
                }
            }
            Repr::I64(b) => {
                for (dst, x) in out.chunks_exact_mut(n).zip(a.chunks_exact(k)) {
                    for (d, row) in dst.iter_mut().zip(b.chunks_exact(k)) {
                        *d = row.iter().zip(x).map(|(&w, &xi)| w * xi).sum::<i64>();
                    }
                }
            }
        }
    }
}

impl Rows {
    /// [`Rows::mul`] of `m` rows of `k` byte codes (`a.len() == m * k`),
    /// read as they are: `None` (nothing written) unless the kernel is `Vnni`
    /// and `k` is a multiple of 4, so that the rows are already the kernel's
    /// operand. Every code must lie in the range given to [`Rows::new`]
    /// (checked; panics otherwise).
    pub fn mul_u8(&self, a: &[u8], m: usize, out: &mut [i64]) -> Option<()> {
        let (n, k) = (self.n, self.k);
        assert!(a.len() == m * k && out.len() == m * n, "operand shapes");
        match &self.repr {
            #[cfg(target_arch = "x86_64")]
            Repr::Vnni { k4, panels, packed } if *k4 == k && k > 0 => {
                let (lo, hi) = byte_range(a);
                let (want_lo, want_hi) = self.a_range;
                assert!(
                    a.is_empty() || (want_lo <= i64::from(lo) && i64::from(hi) <= want_hi),
                    "left operand outside the range the kernel was chosen for"
                );
                vnni_mul(a, m, *k4, packed, *panels, n, out);
                Some(())
            }
            _ => None,
        }
    }
}

vectorized! {
    /// The smallest and largest byte (`(255, 0)` when empty).
    pub fn byte_range(a: &[u8]) -> (u8, u8) {
        a.iter().fold((u8::MAX, u8::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)))
    }
}

/// The `Vnni` product of `m` rows of `k4` bytes and the packed panels,
/// widened into `out` (`m` rows of `n`).
#[cfg(target_arch = "x86_64")]
fn vnni_mul(a8: &[u8], m: usize, k4: usize, packed: &[i8], panels: usize, n: usize, out: &mut [i64]) {
    let ldo = panels * 16;
    let mut acc = vec![0i32; m * ldo];
    assert!(a8.len() >= m * k4 && packed.len() >= panels * k4 * 16, "operand sizes");
    // SAFETY: `Repr::Vnni` is only built when `has_vnni()`; the buffers
    // have the sizes `vnni::gemm` documents (asserted above).
    unsafe { vnni::gemm(a8, m, k4, packed, panels, &mut acc) };
    for (dst, src) in out.chunks_exact_mut(n.max(1)).zip(acc.chunks_exact(ldo.max(1))) {
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = i64::from(v);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::*;

    /// Rows of a register tile (samples).
    const MR: usize = 6;
    /// Panels of 16 outputs in a register tile.
    const NP: usize = 4;

    /// `acc[s][16p + l] = sum_t a[s][t] * b_p[t][l]` for `m` rows of `a`
    /// (`k4` bytes each, `k4` a multiple of 4) and `panels` packed panels
    /// (`k4 * 16` bytes each); `acc` is `m * panels * 16` lanes.
    ///
    /// # Safety
    /// The CPU must have AVX-512F, BW and VNNI; `a.len() >= m * k4`,
    /// `b.len() >= panels * k4 * 16`, `acc.len() >= m * panels * 16`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn gemm(a: &[u8], m: usize, k4: usize, b: &[i8], panels: usize, acc: &mut [i32]) {
        let ldo = panels * 16;
        let mut s = 0;
        while s < m {
            let rows = (m - s).min(MR);
            let mut p = 0;
            while p < panels {
                let np = (panels - p).min(NP);
                let (ap, bp) = (a.as_ptr().add(s * k4), b.as_ptr().add(p * k4 * 16));
                let op = acc.as_mut_ptr().add(s * ldo + p * 16);
                macro_rules! go {
                    ($q:tt) => {
                        match rows {
                            1 => tile::<1, $q>(ap, k4, bp, op, ldo),
                            2 => tile::<2, $q>(ap, k4, bp, op, ldo),
                            3 => tile::<3, $q>(ap, k4, bp, op, ldo),
                            4 => tile::<4, $q>(ap, k4, bp, op, ldo),
                            5 => tile::<5, $q>(ap, k4, bp, op, ldo),
                            _ => tile::<MR, $q>(ap, k4, bp, op, ldo),
                        }
                    };
                }
                // Every (rows, panels) pair in 1..=MR x 1..=NP.
                match np {
                    1 => go!(1),
                    2 => go!(2),
                    3 => go!(3),
                    _ => go!(NP),
                }
                p += np;
            }
            s += rows;
        }
    }

    /// One register tile: `R` rows by `P` panels, all of `k4`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    unsafe fn tile<const R: usize, const P: usize>(a: *const u8, k4: usize, b: *const i8, out: *mut i32, ldo: usize) {
        let mut acc = [[_mm512_setzero_si512(); P]; R];
        let pstride = k4 * 16;
        for t in 0..k4 / 4 {
            let mut bv = [_mm512_setzero_si512(); P];
            for (q, v) in bv.iter_mut().enumerate() {
                *v = _mm512_loadu_si512(b.add(q * pstride + t * 64) as *const _);
            }
            for (r, row) in acc.iter_mut().enumerate() {
                let av = _mm512_set1_epi32((a.add(r * k4 + t * 4) as *const i32).read_unaligned());
                for (c, v) in row.iter_mut().zip(&bv) {
                    *c = _mm512_dpbusd_epi32(*c, av, *v);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            for (q, v) in row.iter().enumerate() {
                _mm512_storeu_si512(out.add(r * ldo + q * 16) as *mut _, *v);
            }
        }
    }
}
