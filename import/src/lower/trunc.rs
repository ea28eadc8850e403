//! QONNX's `Trunc` (`trunc.py`) as fptgen's `batchnorm` layer, for one
//! power-of-two `scale` `s = 2^-F`, zero point 0, and an input whose values
//! are multiples of `s` (at most `F` fraction bits), so that QONNX's first
//! step `X = round(x / s)` is exact. QONNX's executor runs the version of
//! the file's operator set of the node's domain (1 if the file names none):
//!
//! - **version 1** (`trunc_v1`, opset 1): `y = rounding_mode(X / 2^k) · s`
//!   with `k = input_bit_width - output_bit_width`, not clipped: the real
//!   value `x · 2^-k` rounded to a multiple of `s`. It is a batch norm with
//!   scale `2^-k` and shift 0, whose accumulator holds `x · 2^-k` exactly,
//!   cast to a format with `F` fraction bits, the rounding mode (`FLOOR` by
//!   default) and one integer bit more than the accumulator, which holds
//!   every rounded value, so nothing saturates, as in QONNX.
//! - **version 2** (`trunc_v2`, opset 2 and later): `X / trunc_scale`,
//!   `trunc_scale = 2^round(log2(output_scale / s))`, clipped to the
//!   `signed`, `narrow`, `output_bit_width` integer range, rounded and
//!   times `output_scale`. With a power-of-two `output_scale = 2^-G`,
//!   `trunc_scale = 2^(F - G)` exactly and the value is `output_scale ·
//!   round(clip(x / output_scale))`: the saturating cast to the format of a
//!   `Quant` with that scale, bit width, `signed`, `narrow` and rounding
//!   mode (`super::super::quant`), an identity batch norm that casts
//!   ([`super::cast::identity`]).
//!
//! Per-channel scales, and inputs finer than `s` (which QONNX rounds to `s`
//! first, ties to even, and then again), become two or three batch norms
//! that each round once ([`staged`]).
//!
//! Refused, naming the node: scales that are not powers of two or vary
//! within a channel, zero points other than 0, rounding modes without an
//! `ap_fixed` mode (`CEIL`, `UP`).

use fptgen_sim::fixed::{Format, Overflow, Quant};

use crate::error::ImportError;
use crate::graph::Graph;
use crate::mac::accumulator;
use crate::network::{Bn, Kind};
use crate::onnx::NodeProto;
use crate::quant;
use crate::walk::Shape;

use super::channels;

/// Input `k` of `node`: an integer bit width from 1 to 64.
fn bit_width(g: &Graph<'_>, node: &NodeProto, k: usize, what: &str) -> Result<i32, ImportError> {
    let b = quant::scalar_input(g, node, k, what)?;
    if b.fract() != 0.0 || !(1.0..=64.0).contains(&b) {
        return Err(ImportError::node(g.file, node, format!("{what} {b}: an integer from 1 to 64 is supported")));
    }
    Ok(b as i32)
}

/// The layers of the `Trunc` `node` reading `x` (of `shape`), as QONNX's
/// version of it ([`Graph::opset`]) computes: one batch norm for one
/// scale and an input no finer than it, else [`staged`]'s two or three.
pub fn lower(g: &Graph<'_>, node: &NodeProto, shape: &Shape, x: Format) -> Result<Vec<Kind>, ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    let opset = g.opset(node);
    let v2 = opset >= 2;
    let want = if v2 { 6 } else { 5 };
    if node.input.len() != want {
        return Err(err(format!(
            "has {} inputs; Trunc version {} (the file's opset {opset} of {}) takes {want}",
            node.input.len(),
            if v2 { 2 } else { 1 },
            node.domain
        )));
    }
    let z = quant::scalar_input(g, node, 2, "zero point")?;
    if z != 0.0 {
        return Err(err(format!("zero point {z}: only 0 maps to an ap_fixed format")));
    }
    let per = channels::po2_per_channel(g, node, 1, "scale", shape)?;
    let per_out = if v2 { Some(channels::po2_per_channel(g, node, 4, "output scale", shape)?) } else { None };
    let uniform = |v: &[i32]| v.iter().all(|&a| a == v[0]);
    if !uniform(&per) || per_out.as_deref().is_some_and(|o| !uniform(o)) || x.frac_bits() > per[0] {
        return staged(g, node, x, &per, per_out.as_deref());
    }
    let f = per[0];
    let channels = channels::count(shape);
    let wide = || err(format!("its exact form needs a format of more than 64 bits (input {x})"));
    if v2 {
        let fo = quant::po2_input(g, node, 4, "output scale")?;
        let bits = bit_width(g, node, 5, "output bit width")?;
        let out = quant::clipped_format(node, bits as u32, fo, "FLOOR").map_err(err)?;
        return Ok(vec![super::cast::identity(shape, x, false, Some(out)).ok_or_else(wide)?]);
    }
    let k = bit_width(g, node, 3, "input bit width")? - bit_width(g, node, 4, "output bit width")?;
    let mode = quant::mode(node, "FLOOR").map_err(err)?;
    let scale = 2f64.powi(-k);
    let sf = quant::exact_format(&[scale]).ok_or_else(wide)?;
    let one = fptgen_sim::layers::add::constant_format();
    let accum = accumulator(sf, x, one, 1).ok_or_else(wide)?;
    let int_bits = accum.int_bits() + 1;
    let width = u32::try_from(int_bits + f).ok().filter(|w| (1..=64).contains(w)).ok_or_else(wide)?;
    let output = Format::new(true, width, int_bits, mode, Overflow::Sat).map_err(|e| err(format!("gives no ap_fixed format: {e}")))?;
    let sc = sf.exact_f64(scale).map_err(|_| wide())?;
    Ok(vec![Kind::BatchNorm(Bn { channels, relu: false, scale: sf, shift: one, accum, output, scale_codes: vec![sc; channels], shift_codes: vec![0; channels] })])
}

/// A `Trunc` with per-channel scales `2^-F_c` (and output scales `2^-G_c`,
/// version 2), or of an input finer than its scale, in batch norms that
/// each round once:
///
/// 1. only for an input finer than some `2^-F_c`: `X = round(x · 2^F_c)`,
///    ties to even (QONNX's `np.round(x / scale)`), cast to integers
///    (`trunc<k>_1`), wide enough that nothing saturates;
/// 2. the integer QONNX rounds with the mode: version 1 `X · 2^-k`, not
///    clipped; version 2 `X · 2^(G_c - F_c)` (`X / trunc_scale`), cast to
///    the `signed`, `narrow`, `out_bw` integer range, which clips first
///    (`trunc<k>_2`, or `_1` without step 1); from `x` directly without
///    step 1, at scale `2^(F_c - k)` or `2^G_c`, since `X = x · 2^F_c`;
/// 3. that integer times `2^-F_c` (version 1) or `2^-G_c` (version 2),
///    exactly (`trunc<k>`).
fn staged(g: &Graph<'_>, node: &NodeProto, x: Format, f: &[i32], g_out: Option<&[i32]>) -> Result<Vec<Kind>, ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    let wide = || err(format!("its exact form needs a format of more than 64 bits (input {x})"));
    let zeros = vec![0.0; f.len()];
    let pow = |v: &[i32], sign: i32, plus: i32| -> Vec<f64> { v.iter().map(|&e| 2f64.powi(sign * e + plus)).collect() };
    // An integer format holding every value of `accum` rounded, not saturating.
    let integers = |accum: Format, mode: Quant| {
        let bits = (accum.int_bits() + 1).max(2);
        u32::try_from(bits).ok().filter(|&b| b <= 64).and_then(|b| Format::new(true, b, bits, mode, Overflow::Sat).ok())
    };
    let mut layers = Vec::new();
    let finer = f.iter().any(|&fc| x.frac_bits() > fc);
    let (mut input, mut base): (Format, Vec<i32>) = (x, f.to_vec());
    if finer {
        let mut bn = channels::batchnorm(x, &pow(f, 1, 0), &zeros, false, None).ok_or_else(wide)?;
        bn.output = integers(bn.accum, Quant::RndConv).ok_or_else(wide)?;
        input = bn.output;
        base = vec![0; f.len()];
        layers.push(Kind::BatchNorm(bn));
    }
    // Step 2's scale: 2^(base_c + e_c) with X = x · 2^base_c already applied when finer.
    let mode = quant::mode(node, "FLOOR").map_err(err)?;
    let (scale2, out_scale): (Vec<f64>, Vec<f64>) = match g_out {
        None => {
            let k = bit_width(g, node, 3, "input bit width")? - bit_width(g, node, 4, "output bit width")?;
            (base.iter().map(|&b| 2f64.powi(b - k)).collect(), pow(f, -1, 0))
        }
        Some(go) => (base.iter().zip(f).zip(go).map(|((&b, &fc), &gc)| 2f64.powi(b - fc + gc)).collect(), pow(go, -1, 0)),
    };
    let mut bn = channels::batchnorm(input, &scale2, &zeros, false, None).ok_or_else(wide)?;
    bn.output = match g_out {
        None => integers(bn.accum, mode).ok_or_else(wide)?,
        Some(_) => quant::clipped_format(node, bit_width(g, node, 5, "output bit width")? as u32, 0, "FLOOR").map_err(err)?,
    };
    let ints = bn.output;
    layers.push(Kind::BatchNorm(bn));
    layers.push(Kind::BatchNorm(channels::batchnorm(ints, &out_scale, &zeros, false, None).ok_or_else(wide)?));
    Ok(layers)
}
