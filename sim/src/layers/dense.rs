//! The `dense` layer kind: fully connected, `y = act(W x + b)`.
//!
//! Everything the simulator knows about it: its model-file fields and their
//! checks, its tensors (`w` shaped `[outputs, inputs]`, `b` shaped
//! `[outputs]`), its exact forward pass with its fast paths, the float
//! reference and the quantization-aware backward pass. The generator's
//! `layers::dense` holds its hardware.
//!
//! For each output `o` the layer computes exactly this (every step in the
//! formats of `docs/numerics.md`, section "Layer arithmetic"):
//!
//! 1. `acc = cast<accum>(b[o])`
//! 2. for `i` in `0..inputs`, in increasing order:
//!    `acc = acc + cast<accum>(w[o][i] * x[i])` — the product is exact, then
//!    cast with the accumulator's quantization and overflow modes; the sum is
//!    exact, then the accumulator's overflow mode applies (so with saturating
//!    accumulators the order matters, and it is this one);
//! 3. `relu`: `acc = max(acc, 0)`; `linear`: unchanged;
//! 4. `y[o] = cast<output>(acc)`.

use num_traits::Float;

use super::{Activation, Backward, LayerInput, LayerKind, TensorSpec};
use crate::error::ModelError;
use crate::fixed::{Format, Overflow};
use crate::weights::LayerParams;

/// The model file's `type` of the kind.
pub const TYPE: &str = "dense";

/// What the kind is, for the error that lists the types.
pub const WHAT: &str = "fully connected";

/// Index of the weight tensor in [`LayerParams::tensors`].
pub const W: usize = 0;
/// Index of the bias tensor in [`LayerParams::tensors`].
pub const B: usize = 1;

/// Which of a layer's parameters are retrainable on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Trainable {
    /// The weight matrix is retrainable (kept in BRAM with a write port).
    pub weights: bool,
    /// The bias vector is retrainable.
    pub biases: bool,
}

impl Trainable {
    /// True if anything in the layer is retrainable.
    pub fn any(&self) -> bool {
        self.weights || self.biases
    }
}

impl std::fmt::Display for Trainable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match (self.weights, self.biases) {
            (false, false) => "-",
            (true, false) => "weights",
            (false, true) => "biases",
            (true, true) => "weights+biases",
        })
    }
}

/// Formats of a dense layer's tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Precision {
    /// Weight format.
    pub weight: Format,
    /// Bias format.
    pub bias: Format,
    /// Accumulator format.
    pub accum: Format,
    /// Output format.
    pub output: Format,
}

/// A fully connected layer `y = act(W x + b)`, `W` shaped `[outputs, inputs]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Dense {
    /// Number of inputs (>= 1).
    pub inputs: usize,
    /// Number of outputs (>= 1).
    pub outputs: usize,
    /// Activation function.
    pub activation: Activation,
    /// Formats.
    pub precision: Precision,
    /// Output neurons computed in parallel, 1..=outputs.
    pub pe: usize,
    /// Inputs consumed per cycle, 1..=inputs.
    pub simd: usize,
    /// How the hardware forms the products (the numerics do not depend on
    /// it).
    pub multipliers: Multipliers,
    /// Retrainable parameters.
    pub trainable: Trainable,
}

/// How a matrix-vector unit (`rtl/fptgen_dense.v`) forms its `pe x simd`
/// products. The arithmetic is the same either way: only the hardware
/// differs (docs/hardware.md, "Packed multipliers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Multipliers {
    /// One multiplier per product (a DSP48E2 each, as synthesis maps them).
    #[default]
    Dsp,
    /// Two products that share an input, those of neurons `2q` and `2q + 1`,
    /// in one multiplier: `((w[2q+1] << P) + w[2q]) * x`, the low product
    /// the low `P` bits of the result sign-extended, the high one the rest
    /// plus the low one's sign. Needs the adder tree (an exact, order-free
    /// accumulation) and a packed multiplicand that fits a DSP48E2's 27 x 18
    /// multiplier.
    Packed,
}

impl Dense {
    /// Reads a `type: dense` entry of the model file.
    pub(crate) fn from_file(input: &LayerInput) -> Result<Dense, ModelError> {
        let (c, lf) = (input.c, input.lf);
        input.only(&["inputs", "outputs", "activation", "precision", "pe", "simd", "multipliers", "trainable"], &["weight", "bias", "accum", "output"])?;
        // `inputs: N` checks the length of what feeds the layer; with
        // `inputs: [names]` the length is that of the gathered input.
        let count = input.input_count();
        if count.is_none() && !matches!(lf.inputs.as_ref().map(|i| &i.value), Some(crate::model::schema::InputsFile::Names(_))) {
            input.require(&count, "inputs")?;
        }
        let counted = match &count {
            Some(at) => Some(c.dim(at, "inputs")?),
            None => None,
        };
        let outputs = c.dim(input.require(&lf.outputs, "outputs")?, "outputs")?;
        let name = input.name;
        let err_at_count = |m: String| match &count {
            Some(at) => c.err(at, m),
            None => input.err_at_inputs(m),
        };
        if let [h, w, ch] = input.shape {
            return Err(err_at_count(format!(
                "layer '{name}' is dense but {} is an image [{h}, {w}, {ch}]; put a `type: flatten` layer before it",
                input.from
            )));
        }
        let prev_len: usize = input.shape.iter().product();
        let inputs = counted.unwrap_or(prev_len);
        if inputs != prev_len {
            let noun = if input.from == "the network input" { "values" } else { "outputs" };
            return Err(err_at_count(format!("layer '{name}' has {inputs} inputs but {} has {prev_len} {noun}", input.from)));
        }
        let [weight, bias, accum, output] = input.formats(["weight", "bias", "accum", "output"])?;
        let precision = Precision { weight, bias, accum, output };
        let (pe, simd) = c.fold_pair(&lf.pe, &lf.simd, (outputs, inputs), ("outputs", "inputs"), 1)?;
        let [weights, biases] = input.trainable(["weights", "biases"])?;
        let activation = input.activation(false)?;
        let mut d = Dense { inputs, outputs, activation, precision, pe, simd, multipliers: Multipliers::Dsp, trainable: Trainable { weights, biases } };
        d.multipliers = input.multipliers(&d)?;
        Ok(d)
    }

    /// Number of parameters (weights and biases).
    pub fn params(&self) -> u64 {
        self.macs() + self.outputs as u64
    }

    /// The row of output `o`'s weights.
    fn row<'a, T>(&self, w: &'a [T], o: usize) -> &'a [T] {
        &w[o * self.inputs..(o + 1) * self.inputs]
    }

    fn forward_float<T: Float>(&self, params: &[Vec<T>], x: &[T]) -> Vec<T> {
        let (w, b) = (&params[W], &params[B]);
        (0..self.outputs)
            .map(|o| {
                let mut acc = b[o];
                for (&wi, &xi) in self.row(w, o).iter().zip(x) {
                    acc = acc + wi * xi;
                }
                if self.activation == Activation::Relu && acc < T::zero() {
                    acc = T::zero();
                }
                acc
            })
            .collect()
    }
}

impl LayerKind for Dense {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    fn describe(&self) -> String {
        format!("dense {}x{}", self.outputs, self.inputs)
    }

    fn input_len(&self) -> usize {
        self.inputs
    }

    fn output_shape(&self) -> Vec<usize> {
        vec![self.outputs]
    }

    fn output_format(&self) -> Format {
        self.precision.output
    }

    fn output_floor(&self) -> i128 {
        let of = self.precision.output;
        match self.activation {
            Activation::Relu => 0.max(of.lossless_min_raw()),
            Activation::Linear => of.lossless_min_raw(),
        }
    }

    fn tensors(&self) -> Vec<TensorSpec> {
        vec![
            TensorSpec::new("w", "weights", vec![self.outputs, self.inputs], self.precision.weight, self.trainable.weights),
            TensorSpec::new("b", "biases", vec![self.outputs], self.precision.bias, self.trainable.biases),
        ]
    }

    fn macs(&self) -> u64 {
        self.inputs as u64 * self.outputs as u64
    }

    fn forward(&self, input_format: Format, p: &LayerParams, x: &[i128]) -> Vec<i128> {
        dense_forward(self, input_format, p, x)
    }

    fn recompute(&self, input_format: Format, p: &LayerParams, x: &[i128], outputs: &[usize], out: &mut [i128]) {
        for &o in outputs {
            out[o] = dense_neuron(self, input_format, p, x, o);
        }
    }

    fn affected(&self, tensor: usize, index: usize, out: &mut Vec<usize>) {
        out.push(if tensor == W { index / self.inputs.max(1) } else { index });
    }

    fn forward_f64(&self, params: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
        self.forward_float(params, x)
    }

    fn forward_f32(&self, params: &[Vec<f32>], x: &[f32]) -> Vec<f32> {
        self.forward_float(params, x)
    }

    fn backward(&self, b: Backward<'_>) -> Vec<f32> {
        let (gw, gb) = match b.grads {
            [gw, gb, ..] => (gw, gb),
            _ => return Vec::new(),
        };
        for (o, &dl) in b.delta.iter().enumerate() {
            if dl == 0.0 {
                continue;
            }
            gb[o] += dl;
            for (gi, &xi) in gw[o * self.inputs..(o + 1) * self.inputs].iter_mut().zip(b.x) {
                *gi += dl * xi;
            }
        }
        if !b.want_input {
            return Vec::new();
        }
        let mut prev = vec![0.0f32; self.inputs];
        for (o, &dl) in b.delta.iter().enumerate() {
            if dl == 0.0 {
                continue;
            }
            for (p, &wi) in prev.iter_mut().zip(self.row(&b.params[W], o)) {
                *p += dl * wi;
            }
        }
        prev
    }

    fn init_masters(&self, draw: &mut dyn FnMut(f32) -> f32) -> Vec<Vec<f32>> {
        let a = (6.0 / self.inputs as f64).sqrt().max(2.0 * self.precision.weight.to_f64(1)) as f32;
        let w = (0..self.inputs * self.outputs).map(|_| draw(a)).collect();
        vec![w, vec![0.0; self.outputs]]
    }

    fn formats(&self) -> Vec<(&'static str, Format)> {
        let p = &self.precision;
        vec![("weight", p.weight), ("bias", p.bias), ("accum", p.accum), ("output", p.output)]
    }

    fn folding(&self) -> String {
        format!("{}/{}", self.pe, self.simd)
    }

    fn activation(&self) -> Option<Activation> {
        Some(self.activation)
    }
}

/// A dense layer whose dot products [`dense_neuron`] forms in `i32`
/// ([`exact_accumulation`], [`dot_product_bits`] at most 32),
/// with its weight codes converted to `i32` once; [`Narrow::forward`] gives
/// [`dense_forward`]'s bits. The simulator's [`crate::network::Network`]
/// keeps one per qualifying layer.
#[derive(Debug, Clone)]
pub struct Narrow {
    /// The layer's input format.
    input_format: Format,
    /// [`exact_product_shift`] of the layer.
    shift: u32,
    /// The weight codes, row by row.
    weights: Vec<i32>,
}

impl Narrow {
    /// `Some` when the layer qualifies; `p` must hold codes of its formats.
    pub fn new(d: &Dense, input_format: Format, p: &LayerParams) -> Option<Narrow> {
        let shift = exact_accumulation(d, input_format)?;
        let narrow = dot_product_bits(d.precision.weight, input_format, d.inputs)? <= 32;
        // The codes fit i32 (dot_product_bits bounds them too).
        narrow.then(|| Narrow { input_format, shift, weights: p.tensors[W].iter().map(|&w| w as i32).collect() })
    }

    /// [`dense_forward`]'s result. Inputs that are not all codes of the
    /// input format (possible only with a hand-built model whose
    /// layers' formats do not chain) go to [`dense_forward`] itself.
    pub fn forward(&self, d: &Dense, p: &LayerParams, x: &[i128]) -> Vec<i128> {
        if !x.iter().all(|&v| self.input_format.contains_raw(v)) {
            return dense_forward(d, self.input_format, p, x);
        }
        let x: Vec<i32> = x.iter().map(|&v| v as i32).collect();
        self.weights
            .chunks_exact(d.inputs)
            .enumerate()
            .map(|(o, row)| {
                let sum: i32 = row.iter().zip(&x).map(|(&w, &xi)| w * xi).sum();
                finish_wrapping(d, p, o, i128::from(sum), self.shift)
            })
            .collect()
    }
}

/// One dense layer on raw codes: `x` in `input_format`, result in the
/// layer's output format. Callers guarantee the lengths.
pub fn dense_forward(d: &Dense, input_format: Format, p: &LayerParams, x: &[i128]) -> Vec<i128> {
    (0..d.outputs).map(|o| dense_neuron(d, input_format, p, x, o)).collect()
}

/// Output `o` of one dense layer on raw codes (steps 1 to 4 above, the
/// whole sum in input order): what [`dense_forward`] computes for that
/// output. Callers guarantee the lengths and `o < d.outputs`.
///
/// When every product fits the accumulator exactly (see [`exact_product_shift`]),
/// the products are plain integer products shifted into the accumulator's
/// fraction bits, and when the accumulation is exact ([`exact_accumulation`]:
/// `AP_WRAP`, whose sum is wrapped once at the end since wrap-around is
/// associative, or bounds that keep every partial sum in range) the
/// unshifted dot product is then formed
/// in `i32` or `i64` when [`dot_product_bits`] shows it cannot overflow
/// them, in `i128` otherwise. Without an exact product this is
/// [`dense_neuron_reference`]. All give the same bits (`sim/tests/fast_path.rs`).
///
/// Like the reference, the fast path assumes `x` holds codes of
/// `input_format` and `p` codes of the layer's formats (as
/// [`crate::network::Network::new`] and
/// [`crate::network::Network::check_input`] ensure).
pub fn dense_neuron(d: &Dense, input_format: Format, p: &LayerParams, x: &[i128], o: usize) -> i128 {
    let Some(shift) = exact_product_shift(d, input_format) else {
        return dense_neuron_reference(d, input_format, p, x, o);
    };
    let pr = &d.precision;
    let row = d.row(&p.tensors[W], o);
    if exact_accumulation(d, input_format).is_some() {
        // Each |w * x| << shift fits the accumulator (< 2^64), so a sum of at
        // most 2^20 of them cannot overflow an i128.
        let sum: i128 = match dot_product_bits(pr.weight, input_format, row.len()) {
            // Every |w * x| and every partial sum is below 2^(bits-1), so the
            // codes and the sum fit the narrower type exactly.
            Some(bits) if bits <= 32 => {
                i128::from(row.iter().zip(x).map(|(&w, &xi)| (w as i32) * (xi as i32)).sum::<i32>())
            }
            Some(bits) if bits <= 64 => {
                i128::from(row.iter().zip(x).map(|(&w, &xi)| (w as i64) * (xi as i64)).sum::<i64>())
            }
            _ => row.iter().zip(x).map(|(&w, &xi)| w * xi).sum(),
        };
        return finish_wrapping(d, p, o, sum, shift);
    }
    let bias = pr.accum.cast_from(p.tensors[B][o], &pr.bias);
    let acc = row.iter().zip(x).fold(bias, |acc, (&w, &xi)| pr.accum.add(acc, (w * xi) << shift));
    activate_and_cast(d, acc)
}

/// Step 3 and 4: the activation on the accumulator, then the output cast.
fn activate_and_cast(d: &Dense, mut acc: i128) -> i128 {
    if d.activation == Activation::Relu && acc < 0 {
        acc = 0;
    }
    d.precision.output.cast_from(acc, &d.precision.accum)
}

/// Output `o` of a layer with exact accumulation ([`exact_accumulation`]),
/// from the exact dot product `sum` of its weight and input codes: the
/// bias, then the products' sum shifted into the accumulator (one wrap),
/// the activation and the output cast.
fn finish_wrapping(d: &Dense, p: &LayerParams, o: usize, sum: i128, shift: u32) -> i128 {
    let pr = &d.precision;
    let bias = pr.accum.cast_from(p.tensors[B][o], &pr.bias);
    activate_and_cast(d, pr.accum.add(bias, sum << shift))
}

/// The definition of one output of a dense layer, operation by operation:
/// every product cast to the accumulator, every sum cast, in input order.
pub fn dense_neuron_reference(d: &Dense, input_format: Format, p: &LayerParams, x: &[i128], o: usize) -> i128 {
    let pr = &d.precision;
    let mut acc = pr.accum.cast_from(p.tensors[B][o], &pr.bias);
    for (&w, &xi) in d.row(&p.tensors[W], o).iter().zip(x) {
        let prod = pr.accum.mul_from(w, &pr.weight, xi, &input_format);
        acc = pr.accum.add(acc, prod);
    }
    activate_and_cast(d, acc)
}

/// `Some(s)` when casting any product of a weight code and an input code to
/// the accumulator is exact and changes nothing but the scale: the
/// accumulator has `s >= 0` more fraction bits than the product, and every
/// product shifted by `s` lies within the codes a conversion leaves
/// unchanged (`lossless_min_raw ..= max_raw`). `None` otherwise.
pub fn exact_product_shift(d: &Dense, input_format: Format) -> Option<u32> {
    let pr = &d.precision;
    let shift = pr.accum.frac_bits() - (pr.weight.frac_bits() + input_format.frac_bits());
    let shift = u32::try_from(shift).ok().filter(|&s| s < 64)?;
    let (w, x) = (pr.weight, input_format);
    let mut lo = i128::MAX;
    let mut hi = i128::MIN;
    for a in [w.min_raw(), w.max_raw()] {
        for b in [x.min_raw(), x.max_raw()] {
            let p = a.checked_mul(b)?.checked_mul(1i128.checked_shl(shift)?)?;
            lo = lo.min(p);
            hi = hi.max(p);
        }
    }
    (lo >= pr.accum.lossless_min_raw() && hi <= pr.accum.max_raw()).then_some(shift)
}

/// `Some(s)` (the [`exact_product_shift`]) when a layer's accumulation is
/// exact: every product cast to the accumulator is exact, and either the
/// accumulator wraps (`AP_WRAP`: the sum of the products, wrapped once,
/// equals the sum wrapped at every step, whatever the order) or bounds on
/// the codes prove that no partial sum, in any order, can leave the range
/// that every overflow mode leaves unchanged (`lossless_min_raw ..=
/// max_raw`): then saturating on every step (in input order, the
/// definition) changes nothing, and saturating, wrapping and exact sums are
/// all the same. The bound: the bias format is cast exactly (the
/// accumulator has at least its fraction bits) and `bias + n * product`
/// stays in range for the extreme bias codes and the extreme products
/// (negative products only lower the sum, positive ones only raise it).
///
/// When this holds, a neuron is `finish(bias, sum_i w[o][i] * x[i])` of
/// its exact integer dot product, formed in any order, in any integer type
/// or kernel that [`dot_product_bits`] proves wide enough; the fast paths
/// of [`dense_neuron`], [`Narrow`] and `crate::fast` rely on this.
pub fn exact_accumulation(d: &Dense, input_format: Format) -> Option<u32> {
    let shift = exact_product_shift(d, input_format)?;
    let pr = &d.precision;
    if pr.accum.overflow() == Overflow::Wrap {
        return Some(shift);
    }
    let bias_shift = u32::try_from(pr.accum.frac_bits() - pr.bias.frac_bits()).ok().filter(|&s| s < 64)?;
    let scale = 1i128.checked_shl(bias_shift)?;
    let (b_lo, b_hi) = (pr.bias.min_raw().checked_mul(scale)?, pr.bias.max_raw().checked_mul(scale)?);
    let (w, x) = (pr.weight, input_format);
    let (mut p_lo, mut p_hi) = (0i128, 0i128);
    for a in [w.min_raw(), w.max_raw()] {
        for b in [x.min_raw(), x.max_raw()] {
            let p = a.checked_mul(b)?.checked_mul(1i128.checked_shl(shift)?)?;
            p_lo = p_lo.min(p);
            p_hi = p_hi.max(p);
        }
    }
    let n = i128::try_from(d.inputs).ok()?;
    let lo = b_lo.checked_add(p_lo.checked_mul(n)?)?;
    let hi = b_hi.checked_add(p_hi.checked_mul(n)?)?;
    (lo >= pr.accum.lossless_min_raw() && hi <= pr.accum.max_raw()).then_some(shift)
}

/// Why `d`'s products cannot be packed two to a multiplier
/// ([`Multipliers::Packed`]) with inputs in `input_format`, or `None` if
/// they can: the products must go to the adder tree (an exact, order-free
/// accumulation: [`exact_accumulation`]), there must be two neurons in
/// parallel (`pe >= 2`), and the packed multiplicand, `2 * weight bits +
/// input bits + 3` (two sign-extended weights, the low one's field the
/// exact product's `weight + input + 2` bits), and the input, sign-extended
/// by one bit, must fit a DSP48E2's 27 x 18 multiplier.
pub fn packing_refusal(d: &Dense, input_format: Format) -> Option<String> {
    let (w, x) = (d.precision.weight.width(), input_format.width());
    if exact_accumulation(d, input_format).is_none() {
        return Some("its accumulation is not exact (docs/numerics.md, \"Exact accumulation\"), so its products are summed in order, not by the adder tree that packing feeds".into());
    }
    if d.pe < 2 {
        return Some("packing pairs neurons computed in parallel, and its pe is 1".into());
    }
    let a = 2 * w + x + 3;
    if a > 27 || x + 1 > 18 {
        return Some(format!(
            "{w}-bit weights and {x}-bit inputs make a {a} x {} multiply, which does not fit a DSP48E2's 27 x 18",
            x + 1
        ));
    }
    None
}

/// The smallest `b` such that every code of `weight` and of `input`, and
/// every sum of at most `n` products of one code of each, lies strictly
/// within `-2^(b-1) .. 2^(b-1)`, that is, fits a `b`-bit two's complement
/// integer; `None` if `b` would exceed 127. [`dense_neuron`] uses it to
/// form the dot product in `i32` or `i64`.
pub fn dot_product_bits(weight: Format, input: Format, n: usize) -> Option<u32> {
    let mag = |f: Format| f.min_raw().unsigned_abs().max(f.max_raw().unsigned_abs());
    let (w, x) = (mag(weight), mag(input));
    let bound = w.checked_mul(x)?.checked_mul(u128::try_from(n).ok()?)?.max(w).max(x);
    // |v| <= bound < 2^(b-1) for every value v in question.
    let bits = 128 - bound.leading_zeros() + 1;
    (bits <= 127).then_some(bits)
}
