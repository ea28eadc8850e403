//! An `Add` of two activations (a residual connection) as seed 004 lowers
//! it: a concatenation of the two tensors and a 3x3 convolution (a dense
//! layer for vectors) whose kernels are the identity at the centre tap.
//!
//! Without a `Relu` after it the import writes fptgen's own `add` layer,
//! which fptgen lowers at load to exactly that concatenation and
//! convolution (docs/numerics.md, "add"); with a `Relu` it writes the
//! `concat` and the `conv2d` (or `dense`) itself, with the activation on
//! the convolution, folded as fptgen folds its own `add` (`pe` c, `simd`
//! 2c: a window in 9 cycles; vectors `pe` n, `simd` 2). Output channel `f` accumulates `0 + a_f + b_f` and zero
//! products, every term exact in an accumulator with the input format's
//! fraction bits, so the layer computes `cast<output>(act(a + b))` bit for
//! bit. The rewrite needs both inputs in one format (a concatenation holds
//! one format); otherwise the node is refused.

use fptgen_sim::fixed::Format;
use fptgen_sim::layers::add::{constant_format, sum_format};

use crate::error::ImportError;
use crate::graph::Graph;
use crate::mac::accumulator;
use crate::network::{Kind, Mac};
use crate::onnx::NodeProto;
use crate::tail::{tail, Tail};
use crate::walk::Shape;

/// How an `Add` is written.
pub enum Lowering {
    /// fptgen's `add` (lowered by fptgen at load).
    Add(Kind),
    /// A `concat` of the two inputs, then this identity-at-the-centre
    /// `conv2d` (or `[I I]` `dense`) with the `Relu`.
    ConcatThen(Kind),
}

/// Lowers `node`, an `Add` of two activations of shapes `sa`, `sb` and
/// formats `fa`, `fb`; returns the layers, the output shape and the tensor
/// where they end (after the absorbed `Relu` and `Quant`).
pub fn lower<'g>(g: &Graph<'g>, node: &'g NodeProto, (sa, fa): (&Shape, Format), (sb, fb): (&Shape, Format)) -> Result<(Lowering, Shape, &'g str), ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    if node.input.len() != 2 || node.input[0] == node.input[1] {
        return Err(err("an Add of two different activations is imported (a tensor added to itself is not)".into()));
    }
    if sa != sb {
        return Err(err(format!("adds tensors of shapes {sa:?} and {sb:?}; equal shapes are imported (no broadcasting between activations)")));
    }
    if let Shape::Vector(_, Some(_)) = sa {
        return Err(err("adds flattened images, whose order differs between ONNX (c, h, w) and fptgen (h, w, c)".into()));
    }
    if fa != fb {
        return Err(err(format!(
            "its inputs have the formats {fa} and {fb}: the exact rewrite (concat + 3x3 convolution) gathers both into one tensor of one format, and a cast of either to the other's format could round or saturate; quantize both with the same Quant format"
        )));
    }
    sum_format(fa).ok_or_else(|| err(format!("the exact sum of two {fa} values needs more than 64 bits")))?;
    let Tail { relu, output, end } = tail(g, g.output(node)?)?;
    if !relu {
        return Ok((Lowering::Add(Kind::Add { output }), sa.clone(), end));
    }
    let one = constant_format();
    let (kind, products) = match *sa {
        Shape::Image(_, _, c) => {
            // OHWI [c, 3, 3, 2c]: 1 at the centre of channels f and c + f.
            let w = (0..c * 9 * 2 * c).map(|j| {
                let (f, tap, k) = (j / (18 * c), j / (2 * c) % 9, j % (2 * c));
                i128::from(tap == 4 && (k == f || k == c + f))
            });
            (Mac { inputs: 2 * c, outputs: c, relu, weight: one, bias: one, accum: one, output: one, w: w.collect(), b: vec![0; c], fold: Some([c, 2 * c]) }, 9 * 2 * c)
        }
        Shape::Vector(n, _) => {
            let w = (0..n * 2 * n).map(|j| i128::from(j % (2 * n) == j / (2 * n) || j % (2 * n) == n + j / (2 * n)));
            (Mac { inputs: 2 * n, outputs: n, relu, weight: one, bias: one, accum: one, output: one, w: w.collect(), b: vec![0; n], fold: Some([n, 2]) }, 2 * n)
        }
    };
    let accum = accumulator(one, fa, one, products).ok_or_else(|| err("its exact accumulator needs more than 64 bits".into()))?;
    let mac = Mac { accum, output: output.unwrap_or(accum), ..kind };
    let kind = match sa {
        Shape::Image(..) => Kind::Conv { mac, stride: 1, same: true },
        Shape::Vector(..) => Kind::Dense(mac),
    };
    Ok((Lowering::ConcatThen(kind), sa.clone(), end))
}
