//! QONNX's `BipolarQuant` of an activation (`bipolar_quant.py`,
//! `binary_quant`: `where(x >= 0, 1, -1) · scale`) as two of fptgen's
//! `batchnorm` layers, for a power-of-two `scale` `s = 2^-S`.
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

use crate::import::error::ImportError;
use crate::import::graph::Graph;
use crate::import::mac::accumulator;
use crate::import::network::{Bn, Kind};
use crate::import::onnx::NodeProto;
use crate::import::quant;
use crate::import::walk::Shape;

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
/// two or the formats need more than 64 bits.
pub fn lower(g: &Graph<'_>, node: &NodeProto, shape: &Shape, x: Format) -> Result<[Kind; 2], ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    if node.input.len() != 2 {
        return Err(err(format!("has {} inputs; BipolarQuant takes 2 (x, scale)", node.input.len())));
    }
    let s = quant::po2_input(g, node, 1, "scale")?;
    let channels = match *shape {
        Shape::Image(_, _, c) => c,
        Shape::Vector(n, _) => n,
    };
    let unit = Format::new(false, 1, 1, Quant::Trn, Overflow::Sat).expect("a valid format");
    let wide = || err(format!("its exact form needs a format of more than 64 bits (input {x}, scale 2^{})", -s));
    let out = quant::bipolar_format(s).ok_or_else(wide)?;
    let step = affine(channels, x, 2f64.powi(x.frac_bits()), 1.0, true, unit).ok_or_else(wide)?;
    let scale = 2f64.powi(-s);
    let sign = affine(channels, unit, 2.0 * scale, -scale, false, out).ok_or_else(wide)?;
    Ok([Kind::BatchNorm(step), Kind::BatchNorm(sign)])
}
