//! The nodes a layer absorbs after its own: a `Relu` and an activation
//! `Quant`, in either order, while each tensor has exactly one reader (a
//! tensor read by several nodes, or leaving the graph, ends the layer).
//!
//! A `Relu` after the `Quant` equals the `Relu` before it: every rounding
//! mode maps 0 to 0 and is monotone, so the two commute.

use fptgen_sim::fixed::Format;

use super::error::ImportError;
use super::graph::Graph;
use super::quant;
use super::walk::{is_quant, is_standard};

/// What follows a layer: its activation, its output format and the tensor
/// where the layer ends.
pub struct Tail<'g> {
    /// A `Relu` follows.
    pub relu: bool,
    /// The activation `Quant`'s format, if one follows.
    pub output: Option<Format>,
    /// The last tensor absorbed (`end` itself when nothing is).
    pub end: &'g str,
}

/// Absorbs the `Relu` and the `Quant` after tensor `end`.
pub fn tail<'g>(g: &Graph<'g>, end: &'g str) -> Result<Tail<'g>, ImportError> {
    tail_after(g, end, false, None)
}

/// Absorbs the `Relu` and the `Quant` after tensor `end` when a `Relu`
/// (`relu`) or a `Quant` (`output`) has been absorbed already: at most one
/// of each, for two `Quant` nodes in a row are two casts, not one.
pub fn tail_after<'g>(g: &Graph<'g>, mut end: &'g str, mut relu: bool, mut output: Option<Format>) -> Result<Tail<'g>, ImportError> {
    while let Some(n) = g.only_consumer(end) {
        if is_standard(n, "Relu") && !relu {
            relu = true;
        } else if is_quant(n) && output.is_none() {
            output = Some(quant::format(g, n)?);
        } else {
            break;
        }
        end = g.output(n)?;
    }
    Ok(Tail { relu, output, end })
}
