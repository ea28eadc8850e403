//! A `Concat` of activations as fptgen's `concat`: along the channels of
//! images of one height and width (ONNX's axis 1 of NCHW; fptgen gathers
//! each pixel's channels input after input, the same order) or along
//! vectors, all of one format, each input once.

use fptgen_sim::fixed::Format;

use super::error::ImportError;
use super::graph::Graph;
use super::network::Src;
use super::onnx::NodeProto;
use super::walk::Shape;

/// The shape and format of `node`'s concatenation of `parts` (each with
/// its source, shape and format), or why fptgen's `concat` cannot hold it.
pub fn shape(g: &Graph<'_>, node: &NodeProto, parts: &[(Src, &Shape, Format)]) -> Result<(Shape, Format), ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    let Some(&(_, first, format)) = parts.first() else { return Err(err("concatenates nothing".into())) };
    let axis = Graph::int_attr(node, "axis", 1);
    let shape = match *first {
        Shape::Image(h, w, _) if axis == 1 || axis == -3 => {
            let mut c = 0;
            for (_, p, _) in parts {
                match **p {
                    Shape::Image(ph, pw, pc) if (ph, pw) == (h, w) => c += pc,
                    _ => return Err(err(format!("concatenates {first:?} with {p:?}: images of one height and width are imported"))),
                }
            }
            Shape::Image(h, w, c)
        }
        Shape::Vector(_, None) if axis == 1 || axis == -1 => {
            let mut n = 0;
            for (_, p, _) in parts {
                match **p {
                    Shape::Vector(pn, None) => n += pn,
                    _ => return Err(err("concatenates a vector with an image or a flattened image".into())),
                }
            }
            Shape::Vector(n, None)
        }
        _ => return Err(err(format!("axis {axis} of {first:?}: the channel axis (1) of images or vectors is imported"))),
    };
    if let Some((_, _, f)) = parts.iter().find(|p| p.2 != format) {
        return Err(err(format!("concatenates the formats {format} and {f}: fptgen's concat holds one format")));
    }
    if parts.iter().enumerate().any(|(i, p)| parts[..i].iter().any(|q| q.0 == p.0)) {
        return Err(err("concatenates a tensor with itself; fptgen reads each input once".into()));
    }
    Ok((shape, format))
}
