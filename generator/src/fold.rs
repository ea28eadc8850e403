//! Batch-norm folding: a frozen `batchnorm` right after a frozen `dense` or
//! `conv2d` layer becomes part of that layer's weights and biases, so the
//! hardware has one matrix-vector unit instead of two stages, but only
//! where the folded layer computes exactly the same codes for every input.
//!
//! The simulator always computes the two layers as written
//! (docs/numerics.md): the layer `P` gives `y1 = cast<Y1>(acc1)`, `acc1` the
//! bias then every product added in order in the accumulator `A1`; the
//! batch norm gives `y2 = cast<Y2>(act(cast<A2>(shift) + cast<A2>(scale *
//! y1)))`. When no cast before the last one rounds or overflows, `y2 =
//! cast<Y2>(act(shift + scale * (b + sum w x)))`, which is the folded layer
//! with weights `scale * w`, bias `scale * b + shift`, accumulator `A2`,
//! activation and output those of the batch norm, provided that none of its
//! own casts rounds or overflows either. [`fold`] checks all of this per
//! output channel with the actual parameter values and the whole range of
//! the input format:
//!
//! 1. `P` is linear (a relu between them does not commute with the scale
//!    and shift) and neither layer has a trainable tensor (a trained value
//!    could break the proof; trainable ones are never folded);
//! 2. `A1` has the fraction bits of every product and of the bias, and the
//!    bias and every prefix of the sum stay inside `A1`'s range;
//! 3. `Y1` has `A1`'s fraction bits and holds the sum's range;
//! 4. `A2` has the fraction bits of `scale * y1` and of the shift, and the
//!    shift, the scaled sum and their sum stay inside its range;
//! 5. the folded weights and biases fit formats of at most 64 bits, and the
//!    folded bias and every prefix of the folded sum stay inside `A2`.
//!
//! Every bound is an interval over the input format's codes, so the folded
//! layer equals the two layers for every input; `tests` checks it on random
//! layers and inputs, and the co-simulation compares the folded hardware
//! with the unfolded simulator.

use fptgen_sim::fixed::{Format, Overflow, Quant};
use fptgen_sim::layers::batchnorm::{BatchNorm, SCALE, SHIFT};
use fptgen_sim::layers::dense::{Dense, B, W};
use fptgen_sim::layers::{Activation, Trainable};
use fptgen_sim::model::{Layer, LayerOp, Model, Source};
use fptgen_sim::weights::{LayerParams, Params};
use serde::Serialize;

/// What happened to one batch norm that follows a dense or conv2d layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FoldNote {
    /// The batch norm.
    pub batchnorm: String,
    /// The layer before it.
    pub into: String,
    /// None if folded; otherwise why it stays a separate stage.
    pub kept: Option<String>,
}

/// The model and parameters with every batch norm folded that can be
/// folded exactly (see the module documentation), and a note for every
/// batch norm that follows a dense or conv2d layer. Layer names are kept:
/// the folded layer has the name of the layer before the batch norm.
pub fn fold(model: &Model, params: &Params) -> (Model, Params, Vec<FoldNote>) {
    let consumers = model.consumers();
    let mut layers: Vec<Layer> = Vec::new();
    let mut lparams = Vec::new();
    let mut notes = Vec::new();
    // The new index of every old layer (a folded batch norm's is its
    // layer's).
    let mut index = vec![0; model.layers.len()];
    let mut i = 0;
    while i < model.layers.len() {
        let l = &model.layers[i];
        if let (Some(next), LayerOp::Dense(_) | LayerOp::Conv2d(_)) = (model.layers.get(i + 1), &l.op) {
            // Only a batch norm that alone takes the layer's output.
            if let (LayerOp::BatchNorm(bn), true) = (&next.op, next.inputs == [Source::Layer(i)] && consumers[i] == [i + 1]) {
                let note = |kept: Option<String>| FoldNote { batchnorm: next.name.clone(), into: l.name.clone(), kept };
                match try_fold(l, &params.layers[i], bn, &next.name, &params.layers[i + 1]) {
                    Ok((layer, p)) => {
                        notes.push(note(None));
                        index[i] = layers.len();
                        index[i + 1] = layers.len();
                        layers.push(layer);
                        lparams.push(p);
                        i += 2;
                        continue;
                    }
                    Err(why) => notes.push(note(Some(why))),
                }
            }
        }
        index[i] = layers.len();
        layers.push(l.clone());
        lparams.push(params.layers[i].clone());
        i += 1;
    }
    for l in &mut layers {
        for s in &mut l.inputs {
            if let Source::Layer(j) = s {
                *j = index[*j];
            }
        }
    }
    (Model { layers, ..model.clone() }, Params { layers: lparams }, notes)
}

/// The matrix-vector unit of a dense or conv2d layer.
fn mvau(l: &Layer) -> &Dense {
    match &l.op {
        LayerOp::Dense(d) => d,
        LayerOp::Conv2d(c) => &c.mvau,
        _ => unreachable!("fold only looks at dense and conv2d layers"),
    }
}

/// An exact value `raw * 2^-frac` rescaled to `to` fraction bits (`to >=
/// frac`).
fn at(raw: i128, frac: i32, to: i32) -> Option<i128> {
    raw.checked_mul(1i128.checked_shl(u32::try_from(to - frac).ok()?)?)
}

/// The range of `raw` codes of `f` at `to` fraction bits.
fn range(f: &Format, to: i32) -> Option<(i128, i128)> {
    Some((at(f.min_raw(), f.frac_bits(), to)?, at(f.max_raw(), f.frac_bits(), to)?))
}

fn within(v: (i128, i128), r: (i128, i128)) -> bool {
    r.0 <= v.0 && v.1 <= r.1
}

/// The interval of `c * x` for `x` in `[lo, hi]`.
fn scaled(c: i128, (lo, hi): (i128, i128)) -> Option<(i128, i128)> {
    let (a, b) = (c.checked_mul(lo)?, c.checked_mul(hi)?);
    Some((a.min(b), a.max(b)))
}

fn add(a: (i128, i128), b: (i128, i128)) -> Option<(i128, i128)> {
    Some((a.0.checked_add(b.0)?, a.1.checked_add(b.1)?))
}

/// Checks that `bias` then every `w[i] * x` added in order stays inside
/// `acc` (at `acc`'s fraction bits); returns the range of the full sum.
/// `wf`, `bf`: the fraction bits of the weights and the bias; `x`: the input
/// format.
fn sum_range(w: &[i128], wf: i32, bias: i128, bf: i32, x: &Format, acc: &Format) -> Result<(i128, i128), String> {
    let af = acc.frac_bits();
    let pf = wf + x.frac_bits();
    if af < pf || af < bf {
        return Err(format!("{acc} has fewer fraction bits than the products or the bias"));
    }
    let of = || "a bound overflows 128 bits".to_string();
    let ar = range(acc, af).ok_or_else(of)?;
    let xr = (x.min_raw(), x.max_raw());
    let b = at(bias, bf, af).ok_or_else(of)?;
    let mut s = (b, b);
    if !within(s, ar) {
        return Err(format!("the bias leaves {acc}"));
    }
    for &wi in w {
        let t = scaled(wi, xr).ok_or_else(of)?;
        let t = (at(t.0, pf, af).ok_or_else(of)?, at(t.1, pf, af).ok_or_else(of)?);
        s = add(s, t).ok_or_else(of)?;
        if !within(t, ar) || !within(s, ar) {
            return Err(format!("a partial sum can leave {acc}"));
        }
    }
    Ok(s)
}

/// The smallest signed format with `frac` fraction bits holding every code
/// of `values`, or None beyond 64 bits.
fn exact_format(values: &[i128], frac: i32) -> Option<Format> {
    let bits = values.iter().map(|&v| 128 - if v < 0 { (!v).leading_zeros() } else { v.leading_zeros() }).max().unwrap_or(0) + 1;
    Format::new(true, bits, bits as i32 - frac, Quant::Trn, Overflow::Wrap).ok()
}

/// Folds batch norm `bn` (codes `bp`) into the dense or conv2d layer `l`
/// (codes `lp`), or says why not.
fn try_fold(l: &Layer, lp: &LayerParams, bn: &BatchNorm, bname: &str, bp: &LayerParams) -> Result<(Layer, LayerParams), String> {
    let d = mvau(l);
    if d.trainable.weights || d.trainable.biases || bn.trainable.iter().any(|&t| t) {
        return Err("a trainable tensor is never folded".into());
    }
    if d.activation != Activation::Linear {
        return Err(format!("{} has an activation before the batch norm", l.name));
    }
    let p = &d.precision;
    let (a1, y1) = (p.accum, p.output);
    let (s, h, a2) = (bn.scale, bn.shift, bn.accum);
    let (wf, bf, sf, hf) = (p.weight.frac_bits(), p.bias.frac_bits(), s.frac_bits(), h.frac_bits());
    let of = || "a bound overflows 128 bits".to_string();
    // Folded formats: weights scale*w, biases scale*b + shift.
    let nwf = sf + wf;
    let nbf = (sf + bf).max(hf);
    let mut nw = Vec::with_capacity(lp.tensors[W].len());
    let mut nb = Vec::with_capacity(d.outputs);
    for o in 0..d.outputs {
        let w = &lp.tensors[W][o * d.inputs..(o + 1) * d.inputs];
        let (sc, sh) = (bp.tensors[SCALE][o], bp.tensors[SHIFT][o]);
        // 2. and 3.: y1 is the exact sum.
        let sum = sum_range(w, wf, lp.tensors[B][o], bf, &l.input_format, &a1).map_err(|e| format!("{}: {e}", l.name))?;
        if y1.frac_bits() < a1.frac_bits() {
            return Err(format!("{}: its output {y1} rounds the accumulator {a1}", l.name));
        }
        let sum = (at(sum.0, a1.frac_bits(), y1.frac_bits()).ok_or_else(of)?, at(sum.1, a1.frac_bits(), y1.frac_bits()).ok_or_else(of)?);
        if !within(sum, range(&y1, y1.frac_bits()).ok_or_else(of)?) {
            return Err(format!("{}: its output {y1} can saturate or wrap", l.name));
        }
        // 4.: the batch norm's casts are exact.
        let af = a2.frac_bits();
        if af < sf + y1.frac_bits() || af < hf {
            return Err(format!("{bname}: {a2} rounds the scaled value or the shift"));
        }
        let ar = range(&a2, af).ok_or_else(of)?;
        let shift = at(sh, hf, af).ok_or_else(of)?;
        let term = scaled(sc, sum).ok_or_else(of)?;
        let term = (at(term.0, sf + y1.frac_bits(), af).ok_or_else(of)?, at(term.1, sf + y1.frac_bits(), af).ok_or_else(of)?);
        let total = add((shift, shift), term).ok_or_else(of)?;
        if !within((shift, shift), ar) || !within(term, ar) || !within(total, ar) {
            return Err(format!("{bname}: {a2} can saturate or wrap"));
        }
        nw.extend(w.iter().map(|&wi| sc * wi));
        let b = at(sc.checked_mul(lp.tensors[B][o]).ok_or_else(of)?, sf + bf, nbf).ok_or_else(of)?;
        nb.push(b.checked_add(at(sh, hf, nbf).ok_or_else(of)?).ok_or_else(of)?);
    }
    let wfmt = exact_format(&nw, nwf).ok_or("the folded weights need more than 64 bits")?;
    let bfmt = exact_format(&nb, nbf).ok_or("the folded biases need more than 64 bits")?;
    // 5.: the folded layer's own sums stay inside A2.
    for o in 0..d.outputs {
        sum_range(&nw[o * d.inputs..(o + 1) * d.inputs], nwf, nb[o], nbf, &l.input_format, &a2)
            .map_err(|e| format!("the folded layer: {e}"))?;
    }
    let mut nd = d.clone();
    nd.precision.weight = wfmt;
    nd.precision.bias = bfmt;
    nd.precision.accum = a2;
    nd.precision.output = bn.output;
    nd.activation = bn.activation;
    nd.trainable = Trainable { weights: false, biases: false };
    let op = match &l.op {
        LayerOp::Dense(_) => LayerOp::Dense(nd),
        LayerOp::Conv2d(c) => {
            let mut c = c.clone();
            c.mvau = nd;
            LayerOp::Conv2d(c)
        }
        _ => unreachable!("fold only looks at dense and conv2d layers"),
    };
    Ok((Layer { op, ..l.clone() }, LayerParams { tensors: vec![nw, nb] }))
}
