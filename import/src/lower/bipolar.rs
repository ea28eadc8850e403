//! QONNX's `BipolarQuant` of an activation (`bipolar_quant.py`,
//! `binary_quant`: `where(x >= 0, 1, -1) · scale`) as two of fptgen's
//! `batchnorm` layers, for a power-of-two `scale` `s = 2^-S` (one, or one
//! per channel: [`lower`]).
//!
//! Why it is exact: `x` has `F` fraction bits, so `k = 2^F · x` is an
//! integer. The first batch norm (`<name>_step`) computes `2^F · x + 1 =
//! k + 1` exactly in its accumulator, applies `relu` and casts to
//! `ap_ufixed<1,1,AP_TRN,AP_SAT>`: `k >= 0` gives `k + 1 >= 1`, saturated
//! to 1; `k < 0` gives `k + 1 <= 0`, 0 after the `relu`. So it is the step
//! `[x >= 0]`. The second computes `2s · step - s` exactly, `s` or `-s`,
//! in `ap_fixed<2, 2-S>` (the format of the bipolar weights too), which
//! holds both. The scale and shift formats are the exact ones of their
//! values; both layers are checked again by the import's proof.

use fptgen_sim::fixed::{Format, Overflow, Quant};

use crate::error::ImportError;
use crate::graph::Graph;
use crate::mac::accumulator;
use crate::network::{Bn, Kind};
use crate::onnx::NodeProto;
use crate::quant;
use crate::walk::Shape;

use super::channels;
use crate::int8::affine::broadcast_index;

/// The per-channel batch norm `y = cast<output>(act(shift + scale · x))`
/// with the one `scale` and `shift` on every channel, in their exact
/// formats.
fn affine(channels: usize, x: Format, scale: f64, shift: f64, relu: bool, output: Format) -> Option<Bn> {
    let (sf, tf) = (quant::exact_format(&[scale])?, quant::exact_format(&[shift])?);
    let (sc, tc) = (sf.exact_f64(scale).ok()?, tf.exact_f64(shift).ok()?);
    Some(Bn {
        channels,
        relu,
        scale: sf,
        shift: tf,
        accum: accumulator(sf, x, tf, 1)?,
        output,
        scale_codes: vec![sc; channels],
        shift_codes: vec![tc; channels],
    })
}

/// The step and sign layers of the `BipolarQuant` `node` reading `x` (of
/// `shape`); an error naming the node if its scale is not one power of
/// two per tensor or per channel, or the formats need more than 64 bits.
///
/// Per channel (scales `s_c = 2^-S_c`) the sign layer computes `2·s_c ·
/// step - s_c` with per-channel scales and shifts, in the exact format of
/// all the `±s_c` (`ap_fixed<2 + S_max - S_min, 2 - S_min>`).
pub fn lower(g: &Graph<'_>, node: &NodeProto, shape: &Shape, x: Format) -> Result<[Kind; 2], ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    if node.input.len() != 2 {
        return Err(err(format!("has {} inputs; BipolarQuant takes 2 (x, scale)", node.input.len())));
    }
    let per = channels::po2_per_channel(g, node, 1, "scale", shape)?;
    let channels = channels::count(shape);
    let unit = Format::new(false, 1, 1, Quant::Trn, Overflow::Sat).expect("a valid format");
    let wide = || err(format!("its exact form needs a format of more than 64 bits (input {x}, scales {per:?} as 2^-S)"));
    let step = affine(channels, x, 2f64.powi(x.frac_bits()), 1.0, true, unit).ok_or_else(wide)?;
    if per.iter().all(|&s| s == per[0]) {
        let s = per[0];
        let out = quant::bipolar_format(s).ok_or_else(wide)?;
        let scale = 2f64.powi(-s);
        let sign = affine(channels, unit, 2.0 * scale, -scale, false, out).ok_or_else(wide)?;
        return Ok([Kind::BatchNorm(step), Kind::BatchNorm(sign)]);
    }
    let scales: Vec<f64> = per.iter().map(|&s| 2f64.powi(1 - s)).collect();
    let shifts: Vec<f64> = per.iter().map(|&s| -(2f64.powi(-s))).collect();
    let both: Vec<f64> = shifts.iter().flat_map(|&t| [t, -t]).collect();
    let out = quant::exact_format(&both).ok_or_else(wide)?;
    let sign = channels::batchnorm(unit, &scales, &shifts, false, Some(out)).ok_or_else(wide)?;
    Ok([Kind::BatchNorm(step), Kind::BatchNorm(sign)])
}

/// The codes of a `BipolarQuant` `q` of the constant `values` (of `shape`)
/// whose scale differs between elements (per channel): `±s` of each
/// element's scale (numpy's broadcasting), every scale a power of two, in
/// the exact format of all the values.
pub fn weights(g: &Graph<'_>, q: &NodeProto, shape: &[usize], values: &[f64]) -> Result<(Format, Vec<i128>), ImportError> {
    let err = |m: String| ImportError::node(g.file, q, m);
    let name = q.input.get(1).map_or("", String::as_str);
    let (s_shape, scales) = g.constant(name)?.ok_or_else(|| err(format!("its scale '{name}' is not a constant")))?;
    let signs = quant::bipolar_codes(values);
    let mut real = Vec::with_capacity(values.len());
    for (k, &sign) in signs.iter().enumerate() {
        let s = broadcast_index(s_shape, shape, k)
            .map(|j| scales[j])
            .ok_or_else(|| err(format!("its scale of shape {s_shape:?} does not broadcast to the weights' {shape:?}")))?;
        if quant::po2_frac_bits(s).is_none() {
            return Err(err(format!("scale {s} is not a power of two; only power-of-two scales map to an ap_fixed format")));
        }
        real.push(sign as f64 * s);
    }
    let f = quant::exact_format(&real).ok_or_else(|| err("its scales need a format of more than 64 bits".into()))?;
    let codes = quant::codes(g, q, f, &real)?;
    Ok((f, codes))
}
