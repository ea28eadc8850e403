//! QONNX's `Trunc` (`trunc.py`) as fptgen's `batchnorm` layer, for a
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
//! Refused, naming the node: other scales or zero points, rounding modes
//! without an `ap_fixed` mode (`CEIL`, `UP`), and inputs finer than `s`
//! (QONNX would round them to `s` first, ties to even, and then again).

use fptgen_sim::fixed::{Format, Overflow};

use crate::import::error::ImportError;
use crate::import::graph::Graph;
use crate::import::mac::accumulator;
use crate::import::network::{Bn, Kind};
use crate::import::onnx::NodeProto;
use crate::import::quant;
use crate::import::walk::Shape;

/// Input `k` of `node`: an integer bit width from 1 to 64.
fn bit_width(g: &Graph<'_>, node: &NodeProto, k: usize, what: &str) -> Result<i32, ImportError> {
    let b = quant::scalar_input(g, node, k, what)?;
    if b.fract() != 0.0 || !(1.0..=64.0).contains(&b) {
        return Err(ImportError::node(g.file, node, format!("{what} {b}: an integer from 1 to 64 is supported")));
    }
    Ok(b as i32)
}

/// The layer of the `Trunc` `node` reading `x` (of `shape`), as QONNX's
/// version of it ([`Graph::opset`]) computes.
pub fn lower(g: &Graph<'_>, node: &NodeProto, shape: &Shape, x: Format) -> Result<Kind, ImportError> {
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
    let f = quant::po2_input(g, node, 1, "scale")?;
    let z = quant::scalar_input(g, node, 2, "zero point")?;
    if z != 0.0 {
        return Err(err(format!("zero point {z}: only 0 maps to an ap_fixed format")));
    }
    if x.frac_bits() > f {
        return Err(err(format!(
            "its input {x} has {} fraction bits, more than its scale 2^{} holds: QONNX rounds the input to the scale first (ties to even) and then truncates, a double rounding that fptgen's single cast does not compute",
            x.frac_bits(),
            -f
        )));
    }
    let channels = match *shape {
        Shape::Image(_, _, c) => c,
        Shape::Vector(n, _) => n,
    };
    let wide = || err(format!("its exact form needs a format of more than 64 bits (input {x})"));
    if v2 {
        let fo = quant::po2_input(g, node, 4, "output scale")?;
        let bits = bit_width(g, node, 5, "output bit width")?;
        let out = quant::clipped_format(node, bits as u32, fo, "FLOOR").map_err(err)?;
        return super::cast::identity(shape, x, false, Some(out)).ok_or_else(wide);
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
    Ok(Kind::BatchNorm(Bn { channels, relu: false, scale: sf, shift: one, accum, output, scale_codes: vec![sc; channels], shift_codes: vec![0; channels] }))
}
