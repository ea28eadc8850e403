//! A cast as fptgen's `batchnorm` layer with scale 1 and shift 0: a
//! `Relu` or `Quant` that follows no layer (after a tensor that several
//! nodes read, or after another `Quant`), and the widening casts that let
//! an `Add` or `Concat` join activations of different formats.
//!
//! Why it is exact: fptgen's `batchnorm` computes per value
//! `cast<output>(act(cast<accum>(shift) + scale · x))` (docs/numerics.md).
//! With `scale` 1 and `shift` 0 (both `ap_ufixed<1,1>`, the constants of
//! fptgen's own `add` lowering) and an accumulator with `x`'s fraction bits
//! and one integer bit more than `x` needs ([`super::super::mac::accumulator`]),
//! the accumulator holds `x` exactly, so the layer is
//! `cast<output>(act(x))`: with a `Quant` after it (or being it) QONNX's
//! `Quant` of `act(x)` (its clip and rounding are the saturating cast,
//! `super::super::quant`), without one `act(x)` in `x`'s own format, which
//! holds it. A widening cast has no activation and an output format that
//! holds every value of `x`'s ([`holds`]), so it changes no value.

use fptgen_sim::fixed::{Format, Overflow, Quant};
use fptgen_sim::layers::add::constant_format;

use crate::error::ImportError;
use crate::graph::Graph;
use crate::mac::accumulator;
use crate::network::{Bn, Kind};
use crate::onnx::NodeProto;
use crate::quant;
use crate::tail::{tail_after, Tail};
use crate::walk::{is_quant, is_standard, Shape};

/// The identity batch norm over `shape`'s channels, reading `x`, with a
/// `relu` if asked, cast to `output` (`None`: `x`'s format); `None` when
/// its accumulator would need more than 64 bits.
pub fn identity(shape: &Shape, x: Format, relu: bool, output: Option<Format>) -> Option<Kind> {
    let channels = match *shape {
        Shape::Image(_, _, c) => c,
        Shape::Vector(n, _) => n,
    };
    let one = constant_format();
    let accum = accumulator(one, x, one, 1)?;
    Some(Kind::BatchNorm(Bn {
        channels,
        relu,
        scale: one,
        shift: one,
        accum,
        output: output.unwrap_or(x),
        scale_codes: vec![1; channels],
        shift_codes: vec![0; channels],
    }))
}

/// A `Relu` or `Quant` `node` that follows no layer, reading `x` of
/// `shape`, and the `Quant` or `Relu` after it that it absorbs (while each
/// tensor has one reader); returns the layer and the tensor where it ends.
pub fn standalone<'g>(g: &Graph<'g>, node: &'g NodeProto, shape: &Shape, x: Format) -> Result<(Kind, &'g str), ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    let (relu, output) = if is_standard(node, "Relu") {
        if node.input.len() != 1 {
            return Err(err(format!("has {} inputs; Relu takes one", node.input.len())));
        }
        (true, None)
    } else if is_quant(node) {
        (false, Some(quant::format(g, node)?))
    } else {
        return Err(err("is neither a Relu nor a Quant (please report this)".into()));
    };
    let Tail { relu, output, end } = tail_after(g, g.output(node)?, relu, output)?;
    let kind = identity(shape, x, relu, output).ok_or_else(|| err(format!("its exact accumulator for {x} values needs more than 64 bits")))?;
    Ok((kind, end))
}

/// Whether every value of `small` is a value of `big` (no rounding and no
/// saturation when cast).
pub fn holds(big: Format, small: Format) -> bool {
    let Some(shift) = u32::try_from(big.frac_bits() - small.frac_bits()).ok().filter(|&s| s < 64) else { return false };
    let scaled = |raw: i128| raw.checked_mul(1i128 << shift);
    matches!((scaled(small.max_raw()), scaled(small.lossless_min_raw())), (Some(hi), Some(lo)) if hi <= big.max_raw() && lo >= big.lossless_min_raw())
}

/// The format that `node` (an `Add` or `Concat`) gathers `formats` in:
/// the first of them that holds all the others, else the narrowest format
/// that holds them all (the most fraction bits, signed if any is, enough
/// integer bits for every one's range). An error naming the node if that
/// needs more than 64 bits.
pub fn common_format(g: &Graph<'_>, node: &NodeProto, formats: &[Format]) -> Result<Format, ImportError> {
    if let Some(f) = formats.iter().find(|f| formats.iter().all(|o| holds(**f, *o))) {
        return Ok(*f);
    }
    let too_wide = || ImportError::node(g.file, node, format!("joins the formats {}: a format that holds them all needs more than 64 bits", list(formats)));
    let frac = formats.iter().map(|f| f.frac_bits()).max().unwrap_or(0);
    let signed = formats.iter().any(|f| f.signed());
    let (mut hi, mut lo) = (0i128, 0i128);
    for f in formats {
        let shift = u32::try_from(frac - f.frac_bits()).ok().filter(|&s| s < 64).ok_or_else(too_wide)?;
        hi = hi.max(f.max_raw().checked_mul(1i128 << shift).ok_or_else(too_wide)?);
        lo = lo.min(f.lossless_min_raw().checked_mul(1i128 << shift).ok_or_else(too_wide)?);
    }
    let magnitude = u128::try_from(hi.max(-lo - 1)).unwrap_or(0);
    let width = if signed { quant::signed_bits(magnitude) } else { Some(128 - magnitude.leading_zeros()) }
        .filter(|w| (1..=64).contains(w))
        .ok_or_else(too_wide)?;
    Format::new(signed, width, width as i32 - frac, Quant::Trn, Overflow::Wrap).map_err(|e| ImportError::node(g.file, node, format!("gives no common format: {e}")))
}

fn list(formats: &[Format]) -> String {
    formats.iter().map(Format::to_string).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use fptgen_sim::fixed::Format;

    use super::holds;

    fn f(s: &str) -> Format {
        s.parse().unwrap()
    }

    #[test]
    fn a_format_holds_another_only_when_no_value_rounds_or_saturates() {
        assert!(holds(f("ap_fixed<8,4>"), f("ap_fixed<6,4>")));
        assert!(holds(f("ap_fixed<8,4>"), f("ap_ufixed<5,3>")));
        assert!(!holds(f("ap_fixed<8,4>"), f("ap_ufixed<5,4>")), "15.5 > 7.9375");
        assert!(!holds(f("ap_fixed<8,4>"), f("ap_fixed<8,3>")), "a fraction bit more");
        assert!(!holds(f("ap_ufixed<8,4>"), f("ap_fixed<4,2>")), "negative values");
        assert!(holds(f("ap_fixed<8,4,AP_TRN,AP_SAT_SYM>"), f("ap_fixed<7,3,AP_TRN,AP_SAT_SYM>")));
    }
}
