//! The channel limit (`max_channels`, seed 004): a conv2d or dense layer
//! with more output channels, or a conv2d with more input channels, than
//! the limit becomes several layers of the core operator set that compute
//! exactly the same codes (docs/numerics.md, "Channel split"):
//!
//! * too many outputs: parts over the same input, each with a range of the
//!   filters, and a `concat` ([`PartOf`]);
//! * too many inputs: `slice` layers, one per group of input channels; per
//!   group and range of filters a partial convolution that computes the
//!   group's share of the sum in the layer's accumulator format (linear,
//!   the bias in group 0 only); per range of filters a lowered 3x3
//!   convolution that adds the partial sums and applies the layer's
//!   activation and output cast; and a `concat` of the ranges. Made only
//!   when the layer's accumulation is exact in any order
//!   ([`exact_accumulation`]);
//! * an `add` whose two inputs together have too many channels: slices of
//!   both inputs per range of channels, an add of each pair, and a
//!   `concat`.
//!
//! The last layer of a split keeps the layer's name, so later layers take
//! it as before.

use super::{Gather, InputRange, Layer, LayerOp, Lowered, PartOf, Source};
use crate::layers::add::{constant_format, sum_conv};
use crate::layers::dense::exact_accumulation;
use crate::layers::{Activation, Concat, Precision, Slice};

/// `layer`, to be layer `at` of the model, or the layers it is split into
/// under the channel limit `max`; an error message when it cannot be split
/// exactly.
pub(crate) fn split(layer: Layer, max: usize, at: usize) -> Result<Vec<Layer>, String> {
    match &layer.op {
        LayerOp::Conv2d(c) if c.input[2] > max && layer.lowered.is_some() => split_add(layer, max, at),
        LayerOp::Conv2d(c) if c.input[2] > max => split_inputs(layer, max, at),
        LayerOp::Conv2d(c) if c.filters > max && layer.lowered.is_none() => Ok(split_outputs(layer, max, at)),
        LayerOp::Dense(d) if d.outputs > max && layer.lowered.is_none() => Ok(split_outputs(layer, max, at)),
        _ => Ok(vec![layer]),
    }
}

/// A conv2d or dense `op` restricted to `f` of its filters (outputs).
fn with_outputs(op: &LayerOp, f: usize) -> LayerOp {
    match op {
        LayerOp::Conv2d(c) => {
            let mut c = c.clone();
            c.filters = f;
            c.mvau.outputs = f;
            c.mvau.pe = c.mvau.pe.min(f);
            LayerOp::Conv2d(c)
        }
        LayerOp::Dense(d) => {
            let mut d = d.clone();
            d.outputs = f;
            d.pe = d.pe.min(f);
            LayerOp::Dense(d)
        }
        other => other.clone(),
    }
}

/// The concat named `name` of `layers[first..]` (the model's layers `at +
/// first ..`), which all output the same format and pixels.
fn concat(name: String, layers: &[Layer], first: usize, at: usize) -> Layer {
    let parts = &layers[first..];
    let widths: Vec<usize> = parts.iter().map(|l| *l.kind().output_shape().last().expect("a shape")).collect();
    let mut shape = parts[0].kind().output_shape();
    let pixels = shape[..shape.len() - 1].iter().product();
    *shape.last_mut().expect("a shape") = widths.iter().sum();
    let format = parts[0].kind().output_format();
    Layer {
        name,
        op: LayerOp::Concat(Concat { shape, parts: parts.len(), format }),
        input_format: format,
        inputs: (at + first..at + layers.len()).map(Source::Layer).collect(),
        gather: Gather { widths, pixels },
        lowered: None,
        part_of: None,
            split_from: None,
    }
}

/// A layer with too many output channels: parts `<name>_part<k>` of at
/// most `max` filters on the same input, and their concat `<name>`.
fn split_outputs(layer: Layer, max: usize, at: usize) -> Vec<Layer> {
    let outputs = *layer.kind().output_shape().last().expect("a shape");
    let mut out: Vec<Layer> = (0..outputs.div_ceil(max))
        .map(|k| {
            let first = k * max;
            Layer {
                name: format!("{}_part{k}", layer.name),
                op: with_outputs(&layer.op, max.min(outputs - first)),
                input_format: layer.input_format,
                inputs: layer.inputs.clone(),
                gather: layer.gather.clone(),
                lowered: None,
                part_of: Some(PartOf { layer: layer.name.clone(), first, total: outputs, inputs: None }),
                split_from: None,
            }
        })
        .collect();
    out.push(concat(layer.name, &out, 0, at));
    out
}

/// A slice `name` of channels `first..first + count` of `layer`'s
/// (gathered) input image.
fn slice(layer: &Layer, input: [usize; 3], name: String, first: usize, count: usize) -> Layer {
    Layer {
        name,
        op: LayerOp::Slice(Slice { input, first, count, format: layer.input_format }),
        input_format: layer.input_format,
        inputs: layer.inputs.clone(),
        gather: layer.gather.clone(),
        lowered: None,
        part_of: None,
            split_from: None,
    }
}

/// An add (lowered to a convolution over the `2c` gathered channels of its
/// inputs `a`, `b`) with `2c > max`: per range `k` of at most `max / 2`
/// channels, slices `<name>_part<k>_a` and `_b` of each input, their add
/// `<name>_part<k>` (a lowered conv over `2·count` channels), and the
/// concat `<name>`.
fn split_add(layer: Layer, max: usize, at: usize) -> Result<Vec<Layer>, String> {
    let LayerOp::Conv2d(conv) = &layer.op else { unreachable!("split only passes a conv2d") };
    let (name, c) = (layer.name.clone(), conv.filters);
    let [h, w, _] = conv.input;
    if max < 2 {
        return Err(format!(
            "layer '{name}' is an add of {c}-channel images, lowered to a convolution of their {} gathered channels; \
             max_channels 1 cannot split it (each part needs a channel of both inputs): raise max_channels to 2 or more",
            2 * c
        ));
    }
    let f = max / 2;
    let mut out: Vec<Layer> = Vec::new();
    let mut sums = Vec::new();
    for k in 0..c.div_ceil(f) {
        let (first, count) = (k * f, f.min(c - k * f));
        for (side, src) in ["a", "b"].iter().zip(&layer.inputs) {
            let one = Layer { inputs: vec![*src], gather: Gather::single(h * w * c), ..layer.clone() };
            out.push(slice(&one, [h, w, c], format!("{name}_part{k}_{side}"), first, count));
        }
        let (op, params) = sum_conv([h, w], count, 2, conv.mvau.activation, conv.mvau.precision, [count, 2 * count]);
        let n = at + out.len();
        sums.push(out.len());
        out.push(Layer {
            name: format!("{name}_part{k}"),
            op: LayerOp::Conv2d(op),
            input_format: layer.input_format,
            inputs: vec![Source::Layer(n - 2), Source::Layer(n - 1)],
            gather: Gather { widths: vec![count; 2], pixels: h * w },
            lowered: Some(Lowered { from: "add", params }),
            part_of: None,
            split_from: None,
        });
    }
    // The concat takes the adds only: put it over them by index.
    let widths: Vec<usize> = sums.iter().map(|&i| out[i].kind().output_shape()[2]).collect();
    let format = out[sums[0]].kind().output_format();
    out.push(Layer {
        name,
        op: LayerOp::Concat(Concat { shape: vec![h, w, c], parts: sums.len(), format }),
        input_format: format,
        inputs: sums.iter().map(|&i| Source::Layer(at + i)).collect(),
        gather: Gather { widths, pixels: h * w },
        lowered: None,
        part_of: None,
            split_from: None,
    });
    Ok(out)
}

/// A conv2d with too many input channels: see the module documentation.
/// Names: slices `<name>_in<g>`, partial convolutions
/// `<name>_part<k>_in<g>`, sums `<name>_part<k>` (`<name>` when there is
/// one range of filters) and the concat `<name>`.
fn split_inputs(layer: Layer, max: usize, at: usize) -> Result<Vec<Layer>, String> {
    let LayerOp::Conv2d(conv) = &layer.op else { unreachable!("split only passes a conv2d") };
    let name = layer.name.clone();
    let d = &conv.mvau;
    let [h, w, cin] = conv.input;
    if exact_accumulation(d, layer.input_format).is_none() {
        return Err(format!(
            "layer '{name}' takes {cin} input channels, more than max_channels ({max}); it would be split into convolutions \
             over groups of channels whose partial sums are added, which is exact only when the accumulation is: the \
             accumulator {} must hold every product of a {} weight and a {} input exactly and either wrap (AP_WRAP) \
             or be wide enough that no sum of them saturates. Widen the accumulator, or raise max_channels",
            d.precision.accum, d.precision.weight, layer.input_format
        ));
    }
    let groups = cin.div_ceil(max);
    let per_group = cin.div_ceil(groups);
    let f = (max / groups).min(conv.filters);
    if f == 0 {
        return Err(format!(
            "layer '{name}' takes {cin} input channels: {groups} groups of at most max_channels ({max}), too many to add \
             (the sum of one filter's partial sums takes one channel per group); at most max_channels squared input \
             channels can be split"
        ));
    }
    let ([oh, ow], _) = conv.geometry();
    let ranges = conv.filters.div_ceil(f);
    let mut out: Vec<Layer> = Vec::new();
    let group = |g: usize| (g * per_group, per_group.min(cin - g * per_group));
    for g in 0..groups {
        let (first, count) = group(g);
        out.push(slice(&layer, conv.input, format!("{name}_in{g}"), first, count));
    }
    let sum_at = out.len();
    for k in 0..ranges {
        let (first, fk) = (k * f, f.min(conv.filters - k * f));
        let range_name = if ranges == 1 { name.clone() } else { format!("{name}_part{k}") };
        let base = out.len();
        for g in 0..groups {
            let (c0, count) = group(g);
            let mut part = conv.clone();
            part.input = [h, w, count];
            part.filters = fk;
            part.mvau.inputs = 9 * count;
            part.mvau.outputs = fk;
            part.mvau.pe = d.pe.min(fk);
            part.mvau.simd = d.simd.min(9 * count);
            part.mvau.activation = Activation::Linear;
            part.mvau.precision.output = d.precision.accum;
            part.mvau.trainable.biases = d.trainable.biases && g == 0;
            out.push(Layer {
                name: format!("{name}_part{k}_in{g}"),
                op: LayerOp::Conv2d(part),
                input_format: layer.input_format,
                inputs: vec![Source::Layer(at + g)],
                gather: Gather::single(h * w * count),
                lowered: None,
                part_of: Some(PartOf {
                    layer: name.clone(),
                    first,
                    total: conv.filters,
                    inputs: Some(InputRange { first: c0, count, total: cin }),
                }),
                split_from: None,
            });
        }
        let k1 = constant_format();
        let precision = Precision { weight: k1, bias: k1, accum: d.precision.accum, output: d.precision.output };
        // At most the layer's own folding: no more multipliers than it has.
        let fold = [d.pe.min(fk), d.simd.min(9 * groups * fk)];
        let (op, params) = sum_conv([oh, ow], fk, groups, d.activation, precision, fold);
        out.push(Layer {
            name: range_name,
            op: LayerOp::Conv2d(op),
            input_format: d.precision.accum,
            inputs: (at + base..at + base + groups).map(Source::Layer).collect(),
            gather: Gather { widths: vec![fk; groups], pixels: oh * ow },
            lowered: Some(Lowered { from: "sum", params }),
            part_of: None,
            split_from: None,
        });
    }
    if ranges > 1 {
        let sums: Vec<usize> = (0..ranges).map(|k| sum_at + k * (groups + 1) + groups).collect();
        let widths: Vec<usize> = sums.iter().map(|&i| out[i].kind().output_shape()[2]).collect();
        let format = d.precision.output;
        out.push(Layer {
            name,
            op: LayerOp::Concat(Concat { shape: vec![oh, ow, conv.filters], parts: ranges, format }),
            input_format: format,
            inputs: sums.iter().map(|&i| Source::Layer(at + i)).collect(),
            gather: Gather { widths, pixels: oh * ow },
            lowered: None,
            part_of: None,
            split_from: None,
        });
    }
    Ok(out)
}
