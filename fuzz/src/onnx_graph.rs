//! A structure-aware input for the ONNX importer: a small graph described
//! by values that `arbitrary` draws from the fuzzer's bytes (an input, then
//! a few steps from the operators the importer maps: `Quant`, `MatMul`,
//! `Gemm`, `Conv`, `Add`, `Relu`, `MaxPool`, `Flatten`,
//! `BatchNormalization`, `BipolarQuant`, `Trunc`, `Concat`, and any other
//! operator by name), built into an ONNX `ModelProto` whose shapes mostly
//! fit. Most inputs so reach the walk, the lowering and the proof instead
//! of failing in the protobuf decoder.

use arbitrary::{Arbitrary, Unstructured};
use fptgen_import::onnx::{
    self, AttributeProto, Dimension, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto,
    TensorTypeProto, TypeProto, ValueInfoProto,
};

const QDOMAIN: &str = "qonnx.custom_op.general";
/// Rounding modes, the ones with an ap_fixed mode more often.
const ROUNDINGS: [&str; 10] = ["ROUND", "FLOOR", "HALF_UP", "HALF_DOWN", "DOWN", "HALF_EVEN", "ROUND", "FLOOR", "CEIL", "UP"];

/// A graph: its input, up to eight steps, the operator set versions and
/// which rewrites the import may apply.
#[derive(Debug)]
pub struct GraphSpec {
    /// The graph's input.
    pub input: InputSpec,
    /// ONNX operator set (13 + this % 6).
    pub onnx_opset: u8,
    /// QONNX operator set (1 or 2).
    pub qonnx_v2: bool,
    /// Import with [`fptgen_import::Lower::Approximate`].
    pub approximate: bool,
    /// The nodes, in order (at most [`MAX_STEPS`]); each reads the previous
    /// step's output.
    pub steps: Vec<Step>,
}

/// The graph's input: a vector of `n` or an image `[c, h, w]`, and the
/// `Quant` that usually follows it.
#[derive(Debug, Arbitrary)]
pub struct InputSpec {
    /// An image rather than a vector.
    pub image: bool,
    /// Vector length (1 + n % 32).
    pub n: u8,
    /// Image channels (1 + c % 6).
    pub c: u8,
    /// Image height and width (1 + hw % 10 each).
    pub hw: (u8, u8),
    /// The input's quantizer.
    pub quant: QuantSpec,
}

/// A QONNX `Quant` (or `IntQuant`) node's parameters.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub struct QuantSpec {
    /// Bit width (1 + bits % 24; 0 and wide ones when `wild`).
    pub bits: u8,
    /// The scale's power of two (exp % 9 - 4, so 2^-12 .. 2^4).
    pub scale_exp: i8,
    /// Signed.
    pub signed: bool,
    /// Narrow range.
    pub narrow: bool,
    /// Index into the rounding modes.
    pub rounding: u8,
    /// A non-zero zero point.
    pub zeropt: i8,
    /// `IntQuant` instead of `Quant`.
    pub int_quant: bool,
    /// A scale that is not a power of two (when 1; such a scale puts
    /// the graph in the int8 domain).
    pub odd_scale: u8,
    /// Values as they come, when 0: any bit width, any scale, any zero
    /// point.
    pub wild: u8,
}

/// One step of the graph.
#[derive(Debug, Arbitrary)]
pub enum Step {
    /// `MatMul` (or `Gemm`) with quantized weights and an optional bias.
    Dense {
        /// Outputs (1 + out % 16).
        out: u8,
        /// The weights' quantizer.
        weights: QuantSpec,
        /// The bias and its quantizer (none: a plain float bias).
        bias: Option<Option<QuantSpec>>,
        /// `Gemm` rather than `MatMul` then `Add`.
        gemm: bool,
        /// `Gemm`'s `transB`.
        trans_b: bool,
        /// Seed of the weight values.
        seed: u16,
    },
    /// `Conv` with quantized weights.
    Conv {
        /// Filters (1 + f % 6).
        filters: u8,
        /// Kernel size (1, 3, 5 or 7).
        kernel: u8,
        /// Padding (pad % 4 on every side).
        pad: u8,
        /// Stride (1 + stride % 2).
        stride: u8,
        /// `group` attribute (1 when 0).
        group: u8,
        /// The weights' quantizer.
        weights: QuantSpec,
        /// A bias input.
        bias: bool,
        /// Seed of the weight values.
        seed: u16,
    },
    /// An activation `Quant`.
    Quant(QuantSpec),
    /// `BipolarQuant` with scale 2^(exp % 5 - 2).
    Bipolar(i8),
    /// QONNX `Trunc` from `in_bits` to `out_bits`.
    Trunc {
        /// Input bits (1 + in_bits % 16).
        in_bits: u8,
        /// Output bits (1 + out_bits % 16).
        out_bits: u8,
        /// The scale's power of two.
        scale_exp: i8,
        /// Index into the rounding modes.
        rounding: u8,
    },
    /// `Relu`.
    Relu,
    /// `MaxPool` (kernel 1 + k % 4, stride 1 + s % 3, padding p % 2).
    MaxPool(u8, u8, u8),
    /// `Flatten` (axis 1).
    Flatten,
    /// `BatchNormalization` with per-channel constants from a seed.
    BatchNorm(u16),
    /// `Add` of the current tensor and the output of an earlier step.
    Residual(u8),
    /// `Concat` of the current tensor and an earlier one along `axis`.
    Concat(u8, i8),
    /// Another operator by name (or one of the above with the wrong
    /// inputs), reading the current tensor and up to two earlier ones.
    Other {
        /// Index into a list of operator names.
        op: u8,
        /// Earlier steps it also reads.
        inputs: Vec<u8>,
        /// Integer attributes, by index into a list of names.
        ints: Vec<(u8, i64)>,
    },
}

/// A small linear congruential generator for weight values (the spec's
/// seeds decide them, not more fuzzer bytes).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, range: i64) -> i64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as i64).rem_euclid(range.max(1))
    }
}

/// The graph under construction: nodes, initializers and the tensors so
/// far (name and shape without the batch dimension).
struct Builder {
    nodes: Vec<NodeProto>,
    inits: Vec<TensorProto>,
    tensors: Vec<(String, Vec<usize>)>,
    count: usize,
    qonnx_v2: bool,
}

fn attr_i(name: &str, i: i64) -> AttributeProto {
    AttributeProto { name: name.into(), i, ..Default::default() }
}

fn attr_s(name: &str, s: &str) -> AttributeProto {
    AttributeProto { name: name.into(), s: s.as_bytes().to_vec(), ..Default::default() }
}

fn attr_ints(name: &str, ints: Vec<i64>) -> AttributeProto {
    AttributeProto { name: name.into(), ints, ..Default::default() }
}

impl QuantSpec {
    fn is_wild(&self) -> bool {
        self.wild == 0
    }

    fn bits(&self) -> f32 {
        if self.is_wild() {
            f32::from(self.bits) - 8.0
        } else {
            f32::from(1 + self.bits % 24)
        }
    }

    fn scale(&self) -> f32 {
        let s = 2f32.powi(i32::from(self.scale_exp.rem_euclid(9)) - 8);
        match (self.is_wild(), self.odd_scale == 1) {
            (true, _) => f32::from(self.scale_exp) / 16.0,
            (false, true) => s * 0.75,
            (false, false) => s,
        }
    }
}

impl Builder {
    fn name(&mut self, what: &str) -> String {
        self.count += 1;
        format!("{what}{}", self.count)
    }

    fn current(&self) -> (String, Vec<usize>) {
        self.tensors.last().cloned().unwrap_or_else(|| ("x".into(), vec![1]))
    }

    fn constant(&mut self, what: &str, dims: &[usize], values: Vec<f32>) -> String {
        let name = self.name(what);
        self.inits.push(TensorProto {
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type: onnx::data_type::FLOAT,
            float_data: values,
            name: name.clone(),
            ..Default::default()
        });
        name
    }

    fn scalar(&mut self, what: &str, v: f32) -> String {
        self.constant(what, &[], vec![v])
    }

    fn node(&mut self, op: &str, domain: &str, inputs: Vec<String>, attribute: Vec<AttributeProto>, shape: Vec<usize>) -> String {
        let out = self.name(&format!("{}_out", op.to_ascii_lowercase()));
        let name = self.name(op);
        self.nodes.push(NodeProto { input: inputs, output: vec![out.clone()], name, op_type: op.into(), attribute, domain: domain.into() });
        self.tensors.push((out.clone(), shape));
        out
    }

    /// A `Quant` of `x` (of `shape`); its output replaces nothing in
    /// `tensors` when `x` is a weight (`activation` false).
    fn quant(&mut self, x: String, shape: &[usize], q: QuantSpec, activation: bool) -> String {
        let scale = self.scalar("scale", q.scale());
        let zeropt = self.scalar("zeropt", if q.is_wild() { f32::from(q.zeropt) } else { 0.0 });
        let bits = self.scalar("bits", q.bits());
        let attrs = vec![
            attr_i("signed", i64::from(q.signed)),
            attr_i("narrow", i64::from(q.narrow && (q.signed || q.is_wild()))),
            attr_s("rounding_mode", ROUNDINGS[usize::from(q.rounding) % ROUNDINGS.len()]),
        ];
        let op = if q.int_quant { "IntQuant" } else { "Quant" };
        let out = self.node(op, QDOMAIN, vec![x, scale, zeropt, bits], attrs, shape.to_vec());
        if !activation {
            self.tensors.pop();
        }
        out
    }

    /// Weight values on the quantizer's grid (integers times its scale).
    fn weights(&mut self, what: &str, dims: &[usize], q: &QuantSpec, seed: u16) -> String {
        let mut rng = Lcg(u64::from(seed));
        let n: usize = dims.iter().product();
        let levels = 1i64 << (1 + q.bits % 6);
        let scale = q.scale();
        let values = (0..n).map(|_| (rng.next(levels) - levels / 2) as f32 * scale).collect();
        self.constant(what, dims, values)
    }

    /// An earlier tensor than the current one (not the raw graph input,
    /// which only its `Quant` may read, unless there is no other).
    fn earlier(&self, back: u8) -> (String, Vec<usize>) {
        let n = self.tensors.len();
        let i = n.saturating_sub(2 + usize::from(back) % n.max(1)).max(1);
        self.tensors.get(i).cloned().unwrap_or_else(|| self.current())
    }

    fn step(&mut self, step: &Step) {
        let (x, shape) = self.current();
        match step {
            Step::Dense { out, weights, bias, gemm, trans_b, seed } => {
                let (x, shape) = if shape.len() > 1 {
                    let n = shape.iter().product();
                    (self.node("Flatten", "", vec![x], vec![attr_i("axis", 1)], vec![n]), vec![n])
                } else {
                    (x, shape)
                };
                let n_in = shape.first().copied().unwrap_or(1);
                let n_out = 1 + usize::from(*out) % 16;
                let dims = if *gemm && *trans_b { [n_out, n_in] } else { [n_in, n_out] };
                let w = self.weights("w", &dims, weights, *seed);
                let w = self.quant(w, &dims, *weights, false);
                let b = bias.map(|q| {
                    let b = self.weights("b", &[n_out], &q.unwrap_or(*weights), seed.wrapping_add(1));
                    match q {
                        Some(q) => self.quant(b, &[n_out], q, false),
                        None => b,
                    }
                });
                if *gemm {
                    let mut ins = vec![x, w];
                    ins.extend(b);
                    self.node("Gemm", "", ins, vec![attr_i("transB", i64::from(*trans_b))], vec![n_out]);
                } else {
                    let h = self.node("MatMul", "", vec![x, w], vec![], vec![n_out]);
                    if let Some(b) = b {
                        self.node("Add", "", vec![h, b], vec![], vec![n_out]);
                    }
                }
            }
            Step::Conv { filters, kernel, pad, stride, group, weights, bias, seed } => {
                let (c, h, w) = match shape[..] {
                    [c, h, w] => (c, h, w),
                    _ => (shape.iter().product(), 1, 1),
                };
                let f = 1 + usize::from(*filters) % 6;
                let k = [1, 3, 5, 7][usize::from(*kernel) % 4];
                let p = usize::from(*pad) % 4;
                let s = 1 + usize::from(*stride) % 2;
                let g = usize::from(*group).max(1);
                let dims = [f, c / g.min(c).max(1), k, k];
                let wt = self.weights("w", &dims, weights, *seed);
                let wt = self.quant(wt, &dims, *weights, false);
                let mut ins = vec![x, wt];
                if *bias {
                    ins.push(self.weights("b", &[f], weights, seed.wrapping_add(1)));
                }
                let out = |d: usize| (d + 2 * p).saturating_sub(k) / s + 1;
                let attrs = vec![
                    attr_ints("kernel_shape", vec![k as i64; 2]),
                    attr_ints("pads", vec![p as i64; 4]),
                    attr_ints("strides", vec![s as i64; 2]),
                    attr_i("group", g as i64),
                ];
                self.node("Conv", "", ins, attrs, vec![f, out(h), out(w)]);
            }
            Step::Quant(q) => {
                self.quant(x, &shape, *q, true);
            }
            Step::Bipolar(e) => {
                let s = self.scalar("scale", 2f32.powi(i32::from(e.rem_euclid(5)) - 2));
                self.node("BipolarQuant", QDOMAIN, vec![x, s], vec![], shape);
            }
            Step::Trunc { in_bits, out_bits, scale_exp, rounding } => {
                let scale = self.scalar("scale", 2f32.powi(i32::from(scale_exp.rem_euclid(9)) - 6));
                let zeropt = self.scalar("zeropt", 0.0);
                let ib = self.scalar("in_bits", f32::from(1 + in_bits % 16));
                let mut ins = vec![x, scale.clone(), zeropt, ib];
                if self.qonnx_v2 {
                    ins.push(scale);
                }
                ins.push(self.scalar("out_bits", f32::from(1 + out_bits % 16)));
                let mode = ROUNDINGS[usize::from(*rounding) % ROUNDINGS.len()];
                self.node("Trunc", QDOMAIN, ins, vec![attr_s("rounding_mode", mode)], shape);
            }
            Step::Relu => {
                self.node("Relu", "", vec![x], vec![], shape);
            }
            Step::MaxPool(k, s, p) => {
                let (k, s, p) = (1 + usize::from(*k) % 4, 1 + usize::from(*s) % 3, usize::from(*p) % 2);
                let out = |d: usize| (d + 2 * p).saturating_sub(k) / s + 1;
                let new = match shape[..] {
                    [c, h, w] => vec![c, out(h), out(w)],
                    _ => shape,
                };
                let attrs = vec![
                    attr_ints("kernel_shape", vec![k as i64; 2]),
                    attr_ints("strides", vec![s as i64; 2]),
                    attr_ints("pads", vec![p as i64; 4]),
                ];
                self.node("MaxPool", "", vec![x], attrs, new);
            }
            Step::Flatten => {
                let n = shape.iter().product();
                self.node("Flatten", "", vec![x], vec![attr_i("axis", 1)], vec![n]);
            }
            Step::BatchNorm(seed) => {
                let c = shape.first().copied().unwrap_or(1);
                let mut rng = Lcg(u64::from(*seed));
                let mut vals = |lo: i64, span: i64| (0..c).map(|_| (lo + rng.next(span)) as f32 / 8.0).collect::<Vec<f32>>();
                let (g, b, m) = (vals(1, 16), vals(-8, 16), vals(-8, 16));
                // var + epsilon the square of a power of two, so the folded
                // scale is dyadic (batchnorm.rs).
                let v = (0..c).map(|_| [0.25, 1.0, 4.0][rng.next(3) as usize]).collect();
                let ins = vec![
                    x,
                    self.constant("gamma", &[c], g),
                    self.constant("beta", &[c], b),
                    self.constant("mean", &[c], m),
                    self.constant("var", &[c], v),
                ];
                let eps = AttributeProto { name: "epsilon".into(), f: 0.0, ..Default::default() };
                self.node("BatchNormalization", "", ins, vec![eps], shape);
            }
            Step::Residual(back) => {
                let (y, _) = self.earlier(*back);
                self.node("Add", "", vec![x, y], vec![], shape);
            }
            Step::Concat(back, axis) => {
                let (y, other) = self.earlier(*back);
                let mut new = shape.clone();
                if let (Some(a), Some(b)) = (new.first_mut(), other.first()) {
                    *a += b;
                }
                self.node("Concat", "", vec![x, y], vec![attr_i("axis", i64::from(*axis % 4))], new);
            }
            Step::Other { op, inputs, ints } => {
                const OPS: [&str; 26] = [
                    "Sigmoid", "Reshape", "Transpose", "Mul", "Sub", "AveragePool", "GlobalAveragePool", "LayerNormalization", "Identity",
                    "Pad", "Softmax", "Clip", "MatMul", "Gemm", "Conv", "Add", "Relu", "MaxPool", "Flatten", "BatchNormalization",
                    "Concat", "Quant", "IntQuant", "BipolarQuant", "Trunc", "QuantizeLinear",
                ];
                const ATTRS: [&str; 10] =
                    ["axis", "perm", "kernel_shape", "pads", "strides", "group", "transB", "signed", "narrow", "ceil_mode"];
                let i = usize::from(*op) % OPS.len();
                let op = OPS[i];
                let domain = if (21..25).contains(&i) { QDOMAIN } else { "" };
                let mut ins = vec![x];
                for &b in inputs.iter().take(4) {
                    ins.push(self.earlier(b).0);
                }
                let attrs = ints.iter().take(4).map(|&(a, v)| {
                    let name = ATTRS[usize::from(a) % ATTRS.len()];
                    if a % 2 == 0 {
                        attr_i(name, v)
                    } else {
                        attr_ints(name, vec![v % 8; 1 + usize::from(a) % 4])
                    }
                });
                self.node(op, domain, ins, attrs.collect(), shape);
            }
        }
    }
}

fn value_info(name: &str, shape: &[usize]) -> ValueInfoProto {
    let mut dim = vec![Dimension { dim_value: None, dim_param: Some("batch".into()) }];
    dim.extend(shape.iter().map(|&d| Dimension { dim_value: Some(d as i64), dim_param: None }));
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            tensor_type: Some(TensorTypeProto { elem_type: onnx::data_type::FLOAT, shape: Some(TensorShapeProto { dim }) }),
        }),
    }
}

/// The most steps a graph has.
pub const MAX_STEPS: usize = 8;

impl GraphSpec {
    /// Draws a graph from the fuzzer's bytes: the fixed fields, then steps
    /// while bytes remain (at most [`MAX_STEPS`]).
    pub fn draw(u: &mut Unstructured<'_>) -> arbitrary::Result<GraphSpec> {
        let mut g = GraphSpec {
            input: u.arbitrary()?,
            onnx_opset: u.arbitrary()?,
            qonnx_v2: u.arbitrary()?,
            approximate: u.arbitrary()?,
            steps: Vec::new(),
        };
        while g.steps.len() < MAX_STEPS && !u.is_empty() {
            g.steps.push(u.arbitrary()?);
        }
        Ok(g)
    }

    /// The graph as an ONNX model.
    pub fn model(&self) -> ModelProto {
        let i = &self.input;
        let shape = if i.image {
            vec![1 + usize::from(i.c) % 6, 1 + usize::from(i.hw.0) % 10, 1 + usize::from(i.hw.1) % 10]
        } else {
            vec![1 + usize::from(i.n) % 32]
        };
        let mut b = Builder { nodes: Vec::new(), inits: Vec::new(), tensors: vec![("x".into(), shape.clone())], count: 0, qonnx_v2: self.qonnx_v2 };
        b.quant("x".into(), &shape, i.quant, true);
        for s in &self.steps {
            b.step(s);
        }
        let (y, out_shape) = b.current();
        let graph = GraphProto {
            node: b.nodes,
            name: "fuzz".into(),
            initializer: b.inits,
            input: vec![value_info("x", &shape)],
            output: vec![value_info(&y, &out_shape)],
        };
        ModelProto {
            ir_version: 8,
            graph: Some(graph),
            opset_import: vec![
                OperatorSetIdProto { domain: String::new(), version: 13 + i64::from(self.onnx_opset % 6) },
                OperatorSetIdProto { domain: QDOMAIN.into(), version: if self.qonnx_v2 { 2 } else { 1 } },
            ],
        }
    }

    /// The graph's ONNX bytes.
    pub fn onnx(&self) -> Vec<u8> {
        onnx::encode(&self.model())
    }
}
