//! The ONNX graph's own semantics, evaluated exactly: every node the import
//! reads, computed on [`Dyadic`] values from the operators' definitions
//! (ONNX's operator specification and QONNX's `Quant`), independently of
//! fptgen's layers (the nodes that read only constants, the weights'
//! `Quant`s, once). The import's proof ([`super::proof`]) compares fptgen's
//! simulator on the imported model with this evaluation.
//!
//! Tensors keep ONNX's shapes with a batch dimension of 1 (`[1, n]`,
//! `[1, c, h, w]`). A node whose exact result is not a dyadic rational (a
//! batch norm dividing by `sqrt(3)`) or does not fit 128 bits is an error
//! naming the node.

use std::collections::HashMap;

use super::dyadic::Dyadic;
use super::error::ImportError;
use super::graph::Graph;
use super::onnx::NodeProto;

/// A tensor: its ONNX shape and its values in C order.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// The shape (batch dimension 1).
    pub shape: Vec<usize>,
    /// The values, C order.
    pub v: Vec<Dyadic>,
}

/// The graph prepared for evaluation: the nodes that read no activation
/// (weight `Quant`s) evaluated once.
pub struct Reference<'a, 'g> {
    g: &'a Graph<'g>,
    fixed: HashMap<String, Tensor>,
}

impl<'a, 'g> Reference<'a, 'g> {
    /// Evaluates the graph's constant part.
    pub fn new(g: &'a Graph<'g>) -> Result<Reference<'a, 'g>, ImportError> {
        let mut r = Reference { g, fixed: HashMap::new() };
        for node in g.proto.node.iter().filter(|n| n.op_type != "Constant" && !n.input.iter().any(|i| g.is_activation(i))) {
            let y = r.node(node, &HashMap::new())?;
            r.fixed.extend(node.output.first().map(|o| (o.clone(), y)));
        }
        Ok(r)
    }

    /// Evaluates every node that reads an activation, in file order
    /// (ONNX's topological order), with the graph input `input` given, and
    /// returns every activation tensor.
    pub fn run(&self, input: (&str, Tensor)) -> Result<HashMap<String, Tensor>, ImportError> {
        let g = self.g;
        let mut env: HashMap<String, Tensor> = HashMap::new();
        env.insert(input.0.to_string(), input.1);
        for node in g.proto.node.iter().filter(|n| n.op_type != "Constant" && n.input.iter().any(|i| g.is_activation(i))) {
            let y = self.node(node, &env)?;
            env.extend(node.output.first().map(|o| (o.clone(), y)));
        }
        Ok(env)
    }

    /// Evaluates `node` with its inputs from `env`, the constant part, or
    /// the graph's constants.
    fn node(&self, node: &NodeProto, env: &HashMap<String, Tensor>) -> Result<Tensor, ImportError> {
        let g = self.g;
        let err = |m: String| ImportError::node(g.file, node, format!("exact evaluation: {m}"));
        let mut args = Vec::new();
        for name in &node.input {
            if name.is_empty() {
                args.push(None);
            } else if let Some(t) = env.get(name).or_else(|| self.fixed.get(name)) {
                args.push(Some(t.clone()));
            } else if let Some((shape, values)) = g.constant(name)? {
                let v = values.iter().map(|&x| Dyadic::from_f64(x)).collect::<Option<Vec<_>>>().ok_or_else(|| err(format!("constant '{name}' is not finite")))?;
                args.push(Some(Tensor { shape: shape.to_vec(), v }));
            } else {
                return Err(err(format!("its input '{name}' is neither computed before it nor a constant")));
            }
        }
        if node.op_type == "Trunc" {
            return trunc(node, &args, g.opset(node)).map_err(err);
        }
        eval_node(node, &args).map_err(err)
    }
}

fn arg<'t>(args: &'t [Option<Tensor>], k: usize) -> Result<&'t Tensor, String> {
    args.get(k).and_then(Option::as_ref).ok_or_else(|| format!("input {k} is missing"))
}

fn ints(node: &NodeProto, name: &str) -> Option<Vec<i64>> {
    node.attribute.iter().find(|a| a.name == name).map(|a| a.ints.clone())
}

const OVERFLOW: &str = "a value does not fit 128 bits";

fn eval_node(node: &NodeProto, args: &[Option<Tensor>]) -> Result<Tensor, String> {
    let x = arg(args, 0)?;
    let map = |f: &dyn Fn(Dyadic) -> Option<Dyadic>| -> Result<Tensor, String> {
        Ok(Tensor { shape: x.shape.clone(), v: x.v.iter().map(|&a| f(a)).collect::<Option<_>>().ok_or(OVERFLOW)? })
    };
    match node.op_type.as_str() {
        "Quant" | "IntQuant" => quant(node, args),
        "BipolarQuant" => bipolar_quant(args),
        "Relu" => map(&|a| Some(if a.m < 0 { Dyadic::ZERO } else { a })),
        "Identity" => Ok(x.clone()),
        "Add" => broadcast(x, arg(args, 1)?, Dyadic::add),
        "MatMul" => matmul(x, arg(args, 1)?, false),
        "Gemm" => gemm(node, args),
        "Conv" => conv(node, args),
        "MaxPool" => maxpool(node, x),
        "LayerNormalization" => layer_norm(node, args),
        "BatchNormalization" => batchnorm(node, args),
        "Concat" => concat(node, args),
        "Transpose" => transpose(node, x),
        "Flatten" | "Reshape" => {
            let n = x.v.len();
            Ok(Tensor { shape: vec![1, n], v: x.v.clone() })
        }
        op => Err(format!("operator {op} is not evaluated")),
    }
}

/// ONNX `Transpose`: output dimension `k` is input dimension `perm[k]`
/// (default: the dimensions reversed).
fn transpose(node: &NodeProto, x: &Tensor) -> Result<Tensor, String> {
    let rank = x.shape.len();
    let perm: Vec<usize> = match ints(node, "perm") {
        Some(p) => p.iter().map(|&d| usize::try_from(d).ok().filter(|&d| d < rank)).collect::<Option<_>>().ok_or(format!("perm {p:?} of a rank-{rank} tensor"))?,
        None => (0..rank).rev().collect(),
    };
    if perm.len() != rank || (0..rank).any(|d| !perm.contains(&d)) {
        return Err(format!("perm {perm:?} is not a permutation of {rank} dimensions"));
    }
    let shape: Vec<usize> = perm.iter().map(|&d| x.shape[d]).collect();
    // The strides of x's dimensions, C order.
    let mut stride = vec![1; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        stride[d] = stride[d + 1] * x.shape[d + 1];
    }
    let v = (0..x.v.len())
        .map(|j| {
            // j's index in the output, dimension by dimension from the last.
            let (mut rest, mut at) = (j, 0);
            for k in (0..rank).rev() {
                at += rest % shape[k] * stride[perm[k]];
                rest /= shape[k];
            }
            x.v[at]
        })
        .collect();
    Ok(Tensor { shape, v })
}

/// The attribute as an integer, or `default`.
fn int(node: &NodeProto, name: &str, default: i64) -> i64 {
    Graph::int_attr(node, name, default)
}

/// QONNX's `int_quant`: `clip(x / scale + zeropt, min, max)`, rounded, then
/// `(y - zeropt) · scale`; here for a power-of-two scale and zero point 0.
fn quant(node: &NodeProto, args: &[Option<Tensor>]) -> Result<Tensor, String> {
    let x = arg(args, 0)?;
    let scalar = |k: usize| -> Result<Dyadic, String> {
        let t = arg(args, k)?;
        match t.v.as_slice() {
            [a, rest @ ..] if rest.iter().all(|b| b == a) => Ok(*a),
            _ => Err(format!("input {k} is not one value")),
        }
    };
    let (scale, zeropt, bits) = (scalar(1)?.normalized(), scalar(2)?, scalar(3)?.at(0));
    let Some(b @ 1..=64) = bits else {
        return Err("only integer bit widths 1..64 are evaluated".into());
    };
    if scale.m != 1 || zeropt.m != 0 {
        return Err("only power-of-two scales and zero point 0 are evaluated".into());
    }
    let (b, f) = (b as u32, scale.e);
    let (signed, narrow) = (int(node, "signed", 1) != 0, int(node, "narrow", 0) != 0);
    let (lo, hi): (i128, i128) = match (signed, narrow) {
        (true, false) => (-(1 << (b - 1)), (1 << (b - 1)) - 1),
        (true, true) => (-(1 << (b - 1)) + 1, (1 << (b - 1)) - 1),
        (false, false) => (0, (1 << b) - 1),
        (false, true) => (0, (1 << b) - 2),
    };
    let mode = Graph::string_attr(node, "rounding_mode", "ROUND").to_ascii_uppercase();
    let q = |a: Dyadic| -> Result<Dyadic, String> {
        // y = x / scale = x · 2^f, clipped to [lo, hi] before rounding.
        let y = Dyadic { m: a.m, e: a.e - f };
        let code = if y < Dyadic::code(lo, 0) {
            lo
        } else if y > Dyadic::code(hi, 0) {
            hi
        } else {
            round(y, &mode)?
        };
        Ok(Dyadic::code(code, f))
    };
    Ok(Tensor { shape: x.shape.clone(), v: x.v.iter().map(|&a| q(a)).collect::<Result<_, _>>()? })
}

/// Input `k` of `args` as one value (a scalar, or a tensor of equal values).
fn scalar(args: &[Option<Tensor>], k: usize) -> Result<Dyadic, String> {
    let t = arg(args, k)?;
    match t.v.as_slice() {
        [a, rest @ ..] if rest.iter().all(|b| b == a) => Ok(*a),
        _ => Err(format!("input {k} is not one value")),
    }
}

/// QONNX's `BipolarQuant` (`bipolar_quant.py`, `binary_quant`):
/// `where(x >= 0, 1, -1) · scale`.
/// The scale broadcasts (numpy's rules: one per tensor, or per channel).
fn bipolar_quant(args: &[Option<Tensor>]) -> Result<Tensor, String> {
    broadcast(arg(args, 0)?, arg(args, 1)?, |a, s| if a.m >= 0 { Some(s) } else { Dyadic::ZERO.sub(s) })
}

/// Input `k` of `args` broadcast to `x`'s shape (numpy's rules), element
/// by element.
fn per_element(x: &Tensor, args: &[Option<Tensor>], k: usize) -> Result<Vec<Dyadic>, String> {
    let t = broadcast(x, arg(args, k)?, |_, s| Some(s))?;
    if t.shape != x.shape {
        return Err(format!("input {k} of shape {:?} does not broadcast to {:?}", arg(args, k)?.shape, x.shape));
    }
    Ok(t.v)
}

/// `2^-F` as `F`, if `d` is a positive power of two.
fn po2(d: Dyadic) -> Option<i32> {
    let d = d.normalized();
    (d.m == 1).then_some(d.e)
}

/// QONNX's `Trunc` (`trunc.py`), for a power-of-two `scale` `2^-F` and
/// zero point 0. Version 1 (`trunc_v1`, QONNX opset 1): `X = round(x /
/// scale)` (numpy: ties to even), `y = rounding_mode(X / 2^(in_bw -
/// out_bw)) · scale`, no clipping. Version 2 (`trunc_v2`, opset 2 and
/// later): `X` as before, divided by `trunc_scale = 2^round(log2(out_scale
/// / scale))`, clipped to the `signed`, `narrow`, `out_bw` integer range,
/// rounded with the mode, times `out_scale` (here a power of two).
///
/// The scale and output scale broadcast (one per tensor, or per channel):
/// each element is computed with its own.
fn trunc(node: &NodeProto, args: &[Option<Tensor>], opset: i64) -> Result<Tensor, String> {
    let x = arg(args, 0)?;
    let scales = per_element(x, args, 1)?;
    let out_scales = if opset < 2 { None } else { Some(per_element(x, args, 4)?) };
    let mut v = Vec::with_capacity(x.v.len());
    // The other inputs (bit widths, zero point) as they are; x and the scales per element.
    let mut one: Vec<Option<Tensor>> = args.iter().enumerate().map(|(k, a)| if k == 0 { None } else { a.clone() }).collect();
    for (j, &a) in x.v.iter().enumerate() {
        one[0] = Some(Tensor { shape: vec![1], v: vec![a] });
        one[1] = Some(Tensor { shape: vec![1], v: vec![scales[j]] });
        if let Some(o) = &out_scales {
            one[4] = Some(Tensor { shape: vec![1], v: vec![o[j]] });
        }
        v.push(trunc_one(node, &one, opset)?.v[0]);
    }
    Ok(Tensor { shape: x.shape.clone(), v })
}

/// [`trunc`] with one scale (and output scale).
fn trunc_one(node: &NodeProto, args: &[Option<Tensor>], opset: i64) -> Result<Tensor, String> {
    let x = arg(args, 0)?;
    let f = po2(scalar(args, 1)?).ok_or("only a power-of-two scale is evaluated")?;
    if scalar(args, 2)?.m != 0 {
        return Err("only zero point 0 is evaluated".into());
    }
    let bits = |k: usize| scalar(args, k).and_then(|d| d.at(0).filter(|b| (1..=64).contains(b)).ok_or_else(|| format!("input {k}: only integer bit widths 1..64 are evaluated")));
    let mode = Graph::string_attr(node, "rounding_mode", "FLOOR").to_ascii_uppercase();
    let whole = |a: Dyadic| round(Dyadic { m: a.m, e: a.e - f }, "ROUND");
    let v: Vec<Dyadic> = if opset < 2 {
        let k = i32::try_from(bits(3)? - bits(4)?).map_err(|_| OVERFLOW)?;
        x.v.iter().map(|&a| Ok(Dyadic::code(round(Dyadic { m: whole(a)?, e: k }, &mode)?, f))).collect::<Result<_, String>>()?
    } else {
        let fo = po2(scalar(args, 4)?).ok_or("only a power-of-two output scale is evaluated")?;
        let b = bits(5)? as u32;
        let (signed, narrow) = (int(node, "signed", 1) != 0, int(node, "narrow", 0) != 0);
        let (lo, hi): (i128, i128) = match (signed, narrow) {
            (true, false) => (-(1 << (b - 1)), (1 << (b - 1)) - 1),
            (true, true) => (-(1 << (b - 1)) + 1, (1 << (b - 1)) - 1),
            (false, false) => (0, (1 << b) - 1),
            (false, true) => (0, (1 << b) - 2),
        };
        // trunc_scale = 2^(f - fo): X / trunc_scale = X · 2^(fo - f).
        let q = |a: Dyadic| -> Result<Dyadic, String> {
            let y = Dyadic { m: whole(a)?, e: f - fo };
            let code = if y < Dyadic::code(lo, 0) {
                lo
            } else if y > Dyadic::code(hi, 0) {
                hi
            } else {
                round(y, &mode)?
            };
            Ok(Dyadic::code(code, fo))
        };
        x.v.iter().map(|&a| q(a)).collect::<Result<_, String>>()?
    };
    Ok(Tensor { shape: x.shape.clone(), v })
}

/// `y` rounded to an integer as QONNX's rounding mode does (numpy's
/// `round` ties to even, `floor`, `ceil`, `fix`, and QONNX's own
/// half-up and half-down).
fn round(y: Dyadic, mode: &str) -> Result<i128, String> {
    let y = y.normalized();
    if y.e <= 0 {
        return y.at(0).ok_or_else(|| OVERFLOW.to_string());
    }
    if y.e > 120 {
        return Err(OVERFLOW.into());
    }
    let k = y.e as u32;
    let floor = y.m >> k;
    let r = y.m - (floor << k); // in (0, 2^k): y is not an integer
    let half = 1i128 << (k - 1);
    let neg = y.m < 0;
    let up = match mode {
        "FLOOR" => false,
        "CEIL" => true,
        "DOWN" => neg,
        "UP" => !neg,
        "ROUND" | "HALF_EVEN" => r > half || (r == half && floor % 2 != 0),
        "HALF_UP" => r > half || (r == half && !neg),
        "HALF_DOWN" => r > half || (r == half && neg),
        m => return Err(format!("rounding mode {m} is not evaluated")),
    };
    Ok(floor + i128::from(up))
}

/// Elementwise `f(a, b)` with numpy's broadcasting.
fn broadcast(a: &Tensor, b: &Tensor, f: fn(Dyadic, Dyadic) -> Option<Dyadic>) -> Result<Tensor, String> {
    let rank = a.shape.len().max(b.shape.len());
    let pad = |s: &[usize]| [vec![1; rank - s.len()], s.to_vec()].concat();
    let (sa, sb) = (pad(&a.shape), pad(&b.shape));
    let mut shape = Vec::with_capacity(rank);
    for (&x, &y) in sa.iter().zip(&sb) {
        if x != y && x != 1 && y != 1 {
            return Err(format!("shapes {:?} and {:?} do not broadcast", a.shape, b.shape));
        }
        shape.push(x.max(y));
    }
    let n: usize = shape.iter().product();
    let index = |s: &[usize], mut j: usize| {
        let (mut k, mut stride) = (0, 1);
        for d in (0..rank).rev() {
            let i = j % shape[d];
            j /= shape[d];
            if s[d] != 1 {
                k += i * stride;
            }
            stride *= s[d];
        }
        k
    };
    let v = (0..n).map(|j| f(a.v[index(&sa, j)], b.v[index(&sb, j)])).collect::<Option<_>>().ok_or(OVERFLOW)?;
    Ok(Tensor { shape, v })
}

/// `[1, n] × [n, m]` (or `× [m, n]ᵀ`).
fn matmul(a: &Tensor, b: &Tensor, trans_b: bool) -> Result<Tensor, String> {
    let ([1, n], [r, c]) = (a.shape.as_slice(), b.shape.as_slice()) else {
        return Err(format!("shapes {:?} and {:?}: a [1, n] by [n, m] product is evaluated", a.shape, b.shape));
    };
    let (k, m) = if trans_b { (*c, *r) } else { (*r, *c) };
    if k != *n {
        return Err(format!("shapes {:?} and {:?} do not multiply", a.shape, b.shape));
    }
    let mut v = Vec::with_capacity(m);
    for o in 0..m {
        let mut s = Dyadic::ZERO;
        for i in 0..k {
            let w = if trans_b { b.v[o * k + i] } else { b.v[i * m + o] };
            s = s.add(a.v[i].mul(w).ok_or(OVERFLOW)?).ok_or(OVERFLOW)?;
        }
        v.push(s);
    }
    Ok(Tensor { shape: vec![1, m], v })
}

fn gemm(node: &NodeProto, args: &[Option<Tensor>]) -> Result<Tensor, String> {
    if int(node, "transA", 0) != 0 || Graph::float_attr(node, "alpha", 1.0) != 1.0 || Graph::float_attr(node, "beta", 1.0) != 1.0 {
        return Err("only transA 0, alpha 1 and beta 1 are evaluated".into());
    }
    let y = matmul(arg(args, 0)?, arg(args, 1)?, int(node, "transB", 0) != 0)?;
    match args.get(2).and_then(Option::as_ref) {
        Some(c) => broadcast(&y, c, Dyadic::add),
        None => Ok(y),
    }
}

/// ONNX `Conv` (group 1, dilation 1) of `[1, C, H, W]` by `[F, C, kh, kw]`,
/// with `pads`, `strides`, `auto_pad` and an optional bias.
fn conv(node: &NodeProto, args: &[Option<Tensor>]) -> Result<Tensor, String> {
    let (x, w) = (arg(args, 0)?, arg(args, 1)?);
    let (&[1, c, h, wd], &[f, wc, kh, kw]) = (x.shape.as_slice(), w.shape.as_slice()) else {
        return Err(format!("shapes {:?} and {:?}: a 2-D convolution is evaluated", x.shape, w.shape));
    };
    if wc != c || int(node, "group", 1) != 1 || ints(node, "dilations").is_some_and(|d| d.iter().any(|&v| v != 1)) {
        return Err("only group 1, dilation 1 and matching channels are evaluated".into());
    }
    let s = ints(node, "strides").unwrap_or_else(|| vec![1, 1]);
    let [sy, sx] = s[..] else { return Err("strides of two dimensions expected".into()) };
    let (sy, sx) = (sy as usize, sx as usize);
    let auto = Graph::string_attr(node, "auto_pad", "NOTSET");
    let same = |n: usize, k: usize, st: usize| {
        let out = n.div_ceil(st);
        let p = ((out - 1) * st + k).saturating_sub(n);
        (p / 2, p - p / 2)
    };
    let (t, l, b, r) = match auto.as_str() {
        "SAME_UPPER" => {
            let ((t, b), (l, r)) = (same(h, kh, sy), same(wd, kw, sx));
            (t, l, b, r)
        }
        "VALID" => (0, 0, 0, 0),
        _ => match ints(node, "pads").unwrap_or_else(|| vec![0; 4])[..] {
            [t, l, b, r] if [t, l, b, r].iter().all(|&p| p >= 0) => (t as usize, l as usize, b as usize, r as usize),
            _ => return Err("pads of four non-negative values expected".into()),
        },
    };
    if h + t + b < kh || wd + l + r < kw {
        return Err("the kernel is larger than the padded image".into());
    }
    let (oh, ow) = ((h + t + b - kh) / sy + 1, (wd + l + r - kw) / sx + 1);
    let bias = args.get(2).and_then(Option::as_ref);
    let mut v = Vec::with_capacity(f * oh * ow);
    for o in 0..f {
        for oy in 0..oh {
            for ox in 0..ow {
                let mut s = bias.map_or(Dyadic::ZERO, |bt| bt.v[o]);
                for k in 0..c {
                    for ky in 0..kh {
                        for kx in 0..kw {
                            let (y, xx) = ((oy * sy + ky) as isize - t as isize, (ox * sx + kx) as isize - l as isize);
                            if y < 0 || xx < 0 || y >= h as isize || xx >= wd as isize {
                                continue;
                            }
                            let a = x.v[(k * h + y as usize) * wd + xx as usize];
                            let p = a.mul(w.v[((o * c + k) * kh + ky) * kw + kx]).ok_or(OVERFLOW)?;
                            s = s.add(p).ok_or(OVERFLOW)?;
                        }
                    }
                }
                v.push(s);
            }
        }
    }
    Ok(Tensor { shape: vec![1, f, oh, ow], v })
}

/// ONNX `MaxPool` with `ceil_mode` 0, padded or not (`pads` `[top, left,
/// bottom, right]`; a padded position is left out of its window, as if it
/// held minus infinity).
fn maxpool(node: &NodeProto, x: &Tensor) -> Result<Tensor, String> {
    let [1, c, h, w] = x.shape[..] else { return Err(format!("shape {:?}: an image is pooled", x.shape)) };
    let (Some([kh, kw]), s) = (ints(node, "kernel_shape").as_deref().map(|k| [k[0] as usize, k[k.len() - 1] as usize]), ints(node, "strides")) else {
        return Err("kernel_shape expected".into());
    };
    let s = s.unwrap_or_else(|| vec![1, 1]);
    let (sy, sx) = (s[0] as usize, s[s.len() - 1] as usize);
    let pads = ints(node, "pads").unwrap_or_else(|| vec![0; 4]);
    let Ok([t, l, b, r]) = <[usize; 4]>::try_from(pads.iter().map(|&p| usize::try_from(p).unwrap_or(usize::MAX)).collect::<Vec<_>>()) else {
        return Err(format!("pads {pads:?}: four non-negative pads expected"));
    };
    if int(node, "ceil_mode", 0) != 0 || h + t + b < kh || w + l + r < kw || t >= kh || l >= kw || b >= kh || r >= kw {
        return Err(format!("only ceil_mode 0 and pads smaller than the kernel are evaluated (pads {pads:?})"));
    }
    let (oh, ow) = ((h + t + b - kh) / sy + 1, (w + l + r - kw) / sx + 1);
    let mut v = Vec::with_capacity(c * oh * ow);
    for k in 0..c {
        for oy in 0..oh {
            for ox in 0..ow {
                let win = (0..kh).flat_map(|dy| (0..kw).map(move |dx| (dy, dx)));
                let inside = win.filter_map(|(dy, dx)| {
                    let (y, xx) = ((oy * sy + dy).checked_sub(t)?, (ox * sx + dx).checked_sub(l)?);
                    (y < h && xx < w).then(|| x.v[(k * h + y) * w + xx])
                });
                v.push(inside.max().unwrap_or(Dyadic::ZERO));
            }
        }
    }
    Ok(Tensor { shape: vec![1, c, oh, ow], v })
}

/// ONNX `LayerNormalization` (`axis`, `epsilon`, `Scale`, optional `B`),
/// in `f64`, NOT exact: the root of a variance is irrational in general.
/// The import maps a layer norm only as an approximation
/// (`lower/layernorm.rs`), which the proof leaves out with every layer
/// after it; this evaluation gives the teacher's targets for its
/// distillation (`fptgen train --teacher`), each `f64` result taken as the
/// dyadic rational it is.
fn layer_norm(node: &NodeProto, args: &[Option<Tensor>]) -> Result<Tensor, String> {
    let x = arg(args, 0)?;
    let scale = arg(args, 1)?;
    let bias = args.get(2).and_then(Option::as_ref);
    let rank = x.shape.len() as i64;
    let axis = int(node, "axis", -1);
    let a = usize::try_from(if axis < 0 { rank + axis } else { axis }).ok().filter(|&a| (a as i64) < rank).ok_or(format!("axis {axis} of a rank-{rank} tensor"))?;
    let inner: usize = x.shape[a..].iter().product();
    if inner == 0 || scale.v.len() != inner || bias.is_some_and(|b| b.v.len() != inner) {
        return Err(format!("Scale and B must have the {inner} values of the normalized dimensions"));
    }
    let eps = f64::from(Graph::float_attr(node, "epsilon", 1e-5));
    let mut v = Vec::with_capacity(x.v.len());
    for group in x.v.chunks(inner) {
        let xs: Vec<f64> = group.iter().map(|d| d.approx()).collect();
        let mean = xs.iter().sum::<f64>() / inner as f64;
        let var = xs.iter().map(|&t| (t - mean) * (t - mean)).sum::<f64>() / inner as f64;
        let sd = (var + eps).sqrt();
        for (i, &t) in xs.iter().enumerate() {
            let y = (t - mean) / sd * scale.v[i].approx() + bias.map_or(0.0, |b| b.v[i].approx());
            v.push(Dyadic::from_f64(y).ok_or("a result is not finite")?);
        }
    }
    Ok(Tensor { shape: x.shape.clone(), v })
}

/// ONNX `BatchNormalization` (inference): per channel `c` (dimension 1)
/// `y = (x - mean) / sqrt(var + epsilon) · scale + B`, exactly.
fn batchnorm(node: &NodeProto, args: &[Option<Tensor>]) -> Result<Tensor, String> {
    let x = arg(args, 0)?;
    let (gamma, beta, mean, var) = (arg(args, 1)?, arg(args, 2)?, arg(args, 3)?, arg(args, 4)?);
    let c = *x.shape.get(1).ok_or("an input of rank 2 or more expected")?;
    let per = x.v.len() / c.max(1);
    let eps = Dyadic::from_f64(f64::from(Graph::float_attr(node, "epsilon", 1e-5))).ok_or("epsilon is not finite")?;
    let mut v = Vec::with_capacity(x.v.len());
    for (j, &a) in x.v.iter().enumerate() {
        let k = j / per % c;
        let sd = var.v[k].add(eps).and_then(Dyadic::sqrt).ok_or_else(|| format!("sqrt(var + epsilon) of channel {k} is not a dyadic rational"))?;
        let num = a.sub(mean.v[k]).and_then(|d| d.mul(gamma.v[k])).ok_or(OVERFLOW)?;
        let q = num.div(sd).ok_or_else(|| format!("channel {k}: (x - mean) · scale / sqrt(var + epsilon) is not a dyadic rational"))?;
        v.push(q.add(beta.v[k]).ok_or(OVERFLOW)?);
    }
    Ok(Tensor { shape: x.shape.clone(), v })
}

/// ONNX `Concat` along `axis`.
fn concat(node: &NodeProto, args: &[Option<Tensor>]) -> Result<Tensor, String> {
    let ts: Vec<&Tensor> = args.iter().flatten().collect();
    let rank = ts[0].shape.len() as i64;
    let axis = int(node, "axis", 1);
    let axis = if axis < 0 { axis + rank } else { axis } as usize;
    let outer: usize = ts[0].shape[..axis].iter().product();
    let mut shape = ts[0].shape.clone();
    shape[axis] = ts.iter().map(|t| t.shape[axis]).sum();
    let mut v = Vec::new();
    for o in 0..outer {
        for t in &ts {
            let inner: usize = t.shape[axis..].iter().product();
            v.extend_from_slice(&t.v[o * inner..(o + 1) * inner]);
        }
    }
    Ok(Tensor { shape, v })
}

#[cfg(test)]
mod tests {
    use super::{transpose, Dyadic, NodeProto, Tensor};
    use crate::onnx::AttributeProto;

    fn tensor(shape: &[usize]) -> Tensor {
        let n = shape.iter().product::<usize>();
        Tensor { shape: shape.to_vec(), v: (0..n).map(|k| Dyadic::from_f64(k as f64).unwrap()).collect() }
    }

    fn values(t: &Tensor) -> Vec<i128> {
        t.v.iter().map(|d| d.at(0).unwrap()).collect()
    }

    #[test]
    fn transpose_follows_perm_and_reverses_by_default() {
        let mut node = NodeProto { op_type: "Transpose".into(), ..Default::default() };
        // [[0, 1, 2], [3, 4, 5]] reversed: [[0, 3], [1, 4], [2, 5]].
        let y = transpose(&node, &tensor(&[2, 3])).unwrap();
        assert_eq!((y.shape.clone(), values(&y)), (vec![3, 2], vec![0, 3, 1, 4, 2, 5]));
        // [2, 3, 4] with perm [1, 2, 0]: y[j][k][i] = x[i][j][k] = 12i + 4j + k.
        node.attribute.push(AttributeProto { name: "perm".into(), ints: vec![1, 2, 0], ..Default::default() });
        let y = transpose(&node, &tensor(&[2, 3, 4])).unwrap();
        assert_eq!(y.shape, vec![3, 4, 2]);
        let want: Vec<i128> = (0..24).map(|j| 12 * (j % 2) + 4 * (j / 8) + j / 2 % 4).collect();
        assert_eq!(values(&y), want);
        node.attribute[0].ints = vec![0, 0, 1];
        assert!(transpose(&node, &tensor(&[2, 3, 4])).unwrap_err().contains("not a permutation"));
    }
}
