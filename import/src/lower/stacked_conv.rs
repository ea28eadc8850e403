//! A 5x5 or 7x7 `Conv` (stride 1, `same` padding) as two or three stacked
//! 3x3 `same` convolutions (seed 004: "we use three 3×3 convolutions to
//! replace a 7×7 convolution"). Applied only by `fptgen import --lower
//! approximate`: it changes the function (the stack of `n = (k - 1) / 2`
//! 3x3 kernels has the `k`x`k` receptive field, but not every `k`x`k`
//! kernel is such a product, and the casts between the layers round), so
//! the layers must be retrained against the original node (`fptgen train
//! --teacher`, block-wise distillation).
//!
//! Initialization (seed 004 copies the teacher's weights where a layer
//! has a counterpart and initializes the rest randomly; here nothing is
//! random):
//!
//! - the first layer (`channels` to `filters`) copies the centre 3x3 of
//!   the teacher's kernel, in the teacher's weight format, bias zero;
//! - each later layer (`filters` to `filters`) is the identity: weight 1 at
//!   the centre tap where filter = channel, 0 elsewhere, in the teacher's
//!   weight format with enough integer bits to hold 1 (the same fraction
//!   bits); the last one has the teacher's bias, `Relu` and output format.
//!
//! So before training the block computes the teacher's kernel cut to its
//! centre 3x3. The layers between are linear, in the teacher's output
//! format made signed (one more integer bit when it is unsigned) and
//! saturating; when the teacher has no output `Quant`, the first layer's
//! exact accumulator format, saturating.

use fptgen_sim::fixed::{Format, Overflow};

use super::super::mac::{accumulator, ohwi, LargeConv};
use super::super::network::Mac;

/// How the new layers are initialized, as the distillation record says it.
pub const INIT: &str = "first 3x3: the centre 3x3 of the teacher's kernel, bias 0; later 3x3s: identity at the centre tap (weight 1 where filter = channel), the last with the teacher's bias; nothing random";

/// A `Conv`'s geometry, as its attributes give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    /// The kernel size `k` (5 or 7).
    pub kernel: usize,
    /// `strides`.
    pub strides: Vec<i64>,
    /// `pads` (`[top, left, bottom, right]`).
    pub pads: Vec<i64>,
    /// `auto_pad`.
    pub auto_pad: String,
    /// `group`.
    pub group: i64,
    /// `dilations`.
    pub dilations: Vec<i64>,
}

/// The rewrite in words, for errors and the distillation record.
pub fn rewrite(k: usize) -> String {
    format!("{k}x{k} convolution as {} stacked 3x3 convolutions (seed 004)", depth(k))
}

/// The number of 3x3 layers for a `k`x`k` kernel: `(k - 1) / 2`.
pub fn depth(k: usize) -> usize {
    (k - 1) / 2
}

/// Checks that the geometry is the one the rewrite covers: stride 1,
/// `same` padding (pads `(k - 1) / 2` on every side, or `auto_pad`
/// `SAME_UPPER`/`SAME_LOWER`, equal at stride 1 for an odd kernel), group
/// 1, dilation 1; the reason when not.
pub fn check(g: &Geometry) -> Result<(), String> {
    let k = g.kernel;
    let p = depth(k) as i64;
    if g.group != 1 || g.dilations != [1, 1] {
        return Err(format!("a {k}x{k} convolution with group {} and dilations {:?}: the stacked 3x3 rewrite takes group 1 and dilation 1", g.group, g.dilations));
    }
    if g.strides != [1, 1] {
        return Err(format!("a {k}x{k} convolution with strides {:?}: the stacked 3x3 rewrite takes stride 1", g.strides));
    }
    let same = match g.auto_pad.as_str() {
        "SAME_UPPER" | "SAME_LOWER" => true,
        "NOTSET" | "" => g.pads == [p, p, p, p],
        _ => false,
    };
    if !same {
        return Err(format!(
            "a {k}x{k} convolution with pads {:?} (auto_pad {}): the stacked 3x3 rewrite takes 'same' padding, pads [{p}, {p}, {p}, {p}]",
            g.pads, g.auto_pad
        ));
    }
    Ok(())
}

/// The centre 3x3 of OIHW `k`x`k` codes of `f` filters and `c` channels,
/// as OIHW 3x3 codes.
pub fn centre(w: &[i128], f: usize, c: usize, k: usize) -> Vec<i128> {
    let o = k / 2 - 1;
    (0..f * c * 9).map(|j| {
        let (oc, ky, kx) = (j / 9, j / 3 % 3, j % 3);
        w[(oc * k + o + ky) * k + o + kx]
    }).collect()
}

/// The OIHW 3x3 identity of `f` channels: `one` at the centre tap where
/// filter = channel, 0 elsewhere.
pub fn identity(f: usize, one: i128) -> Vec<i128> {
    (0..f * f * 9).map(|j| if j % 9 == 4 && j / 9 / f == j / 9 % f { one } else { 0 }).collect()
}

/// `w`, or the signed format with `w`'s fraction bits (at least 0) and
/// enough integer bits to hold 1; with the code of 1.
pub fn holding_one(w: Format) -> Option<(Format, i128)> {
    let frac = w.frac_bits().max(0);
    let one = 1i128 << frac;
    if w.frac_bits() >= 0 && w.max_raw() >= one {
        return Some((w, one));
    }
    let int = w.int_bits().max(2);
    let width = u32::try_from(frac + int).ok()?;
    Format::new(true, width, int, w.quant(), w.overflow()).ok().map(|f| (f, one))
}

/// The format between the stacked layers: `out` made signed (one more
/// integer bit when it is unsigned), saturating.
pub fn between(out: Format) -> Option<Format> {
    let (width, int) = if out.signed() { (out.width(), out.int_bits()) } else { (out.width() + 1, out.int_bits() + 1) };
    Format::new(true, width, int, out.quant(), Overflow::Sat).ok()
}

/// The stacked layers of `conv` (reading values of `x`), first to last,
/// as conv2d 3x3 `same` stride-1 layers ([`Mac`], weights in fptgen's
/// order); the reason when a format would need more than 64 bits.
pub fn layers(conv: &LargeConv<'_>, x: Format) -> Result<Vec<Mac>, String> {
    let (f, c, k) = (conv.filters, conv.channels, conv.kernel);
    let wide = || format!("the stacked 3x3 rewrite of this {k}x{k} convolution needs a format of more than 64 bits");
    let (bias_format, bias) = (conv.bias.0, &conv.bias.1);
    let first_accum = accumulator(conv.weight, x, bias_format, 9 * c).ok_or_else(wide)?;
    let mid = between(conv.output.unwrap_or(first_accum)).ok_or_else(wide)?;
    let (id_format, one) = holding_one(conv.weight).ok_or_else(wide)?;
    let n = depth(k);
    let mut out = vec![Mac {
        inputs: c,
        outputs: f,
        relu: false,
        weight: conv.weight,
        bias: bias_format,
        accum: first_accum,
        output: mid,
        w: ohwi(&centre(&conv.w, f, c, k), f, c),
        b: vec![0; f],
        fold: None,
    }];
    for i in 1..n {
        let last = i + 1 == n;
        let accum = accumulator(id_format, mid, bias_format, 9 * f).ok_or_else(wide)?;
        out.push(Mac {
            inputs: f,
            outputs: f,
            relu: last && conv.relu,
            weight: id_format,
            bias: bias_format,
            accum,
            output: if last { conv.output.unwrap_or(accum) } else { mid },
            w: ohwi(&identity(f, one), f, f),
            b: if last { bias.clone() } else { vec![0; f] },
            fold: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use fptgen_sim::fixed::{Format, Overflow, Quant};

    use super::{centre, check, holding_one, identity, Geometry};

    fn geometry(pads: [i64; 4], strides: [i64; 2]) -> Geometry {
        Geometry { kernel: 7, strides: strides.to_vec(), pads: pads.to_vec(), auto_pad: "NOTSET".into(), group: 1, dilations: vec![1, 1] }
    }

    #[test]
    fn the_centre_of_a_5x5_kernel_and_the_identity() {
        // One filter, one channel, codes 0..25 row by row: the centre 3x3
        // is rows 1..4, columns 1..4.
        let w: Vec<i128> = (0..25).collect();
        assert_eq!(centre(&w, 1, 1, 5), vec![6, 7, 8, 11, 12, 13, 16, 17, 18]);
        let id = identity(2, 16);
        assert_eq!(id.iter().filter(|&&v| v != 0).count(), 2);
        assert_eq!((id[4], id[9 + 4], id[18 + 4], id[27 + 4]), (16, 0, 0, 16));
    }

    #[test]
    fn one_needs_two_integer_bits_and_only_same_stride_one_is_covered() {
        let w = Format::new(true, 5, 1, Quant::Trn, Overflow::Sat).unwrap(); // 2^-4, up to 0.9375
        let (f, one) = holding_one(w).unwrap();
        assert_eq!((f.width(), f.int_bits(), f.frac_bits(), one), (6, 2, 4, 16));
        assert!(check(&geometry([3, 3, 3, 3], [1, 1])).is_ok());
        assert!(check(&geometry([1, 1, 1, 1], [1, 1])).unwrap_err().contains("pads [3, 3, 3, 3]"));
        assert!(check(&geometry([3, 3, 3, 3], [2, 2])).unwrap_err().contains("stride 1"));
    }
}
