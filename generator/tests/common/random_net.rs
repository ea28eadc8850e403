//! Proptest strategies for random networks, dense ([`network`]) and with
//! image layers ([`cnn`]): random depth, widths,
//! formats, rounding and overflow modes, activations, trainable memories and
//! folding (including PE and SIMD that do not divide the dimension).

use proptest::prelude::*;

pub const QUANT: [&str; 7] = ["AP_RND", "AP_RND_ZERO", "AP_RND_MIN_INF", "AP_RND_INF", "AP_RND_CONV", "AP_TRN", "AP_TRN_ZERO"];
pub const OVF: [&str; 4] = ["AP_SAT", "AP_SAT_ZERO", "AP_SAT_SYM", "AP_WRAP"];

/// The model file's spelling of a format: `ap_fixed<w,i,q,o>` (signed) or
/// `ap_ufixed<...>`.
pub fn ap_format(signed: bool, w: u32, i: i32, q: &str, o: &str) -> String {
    format!("{}<{w},{i},{q},{o}>", if signed { "ap_fixed" } else { "ap_ufixed" })
}

/// A random code of `f`, its extremes (and zero) often.
pub fn random_code(rng: &mut super::Rng, f: fptgen_sim::fixed::Format) -> i128 {
    match rng.range(0, 5) {
        0 => f.min_raw(),
        1 => f.max_raw(),
        2 => 0,
        _ => rng.range_i128(f.min_raw(), f.max_raw()),
    }
}

pub fn format(max_w: u32) -> impl Strategy<Value = String> {
    (any::<bool>(), 1..=max_w, -3i32..=8, 0..QUANT.len(), 0..OVF.len()).prop_map(|(s, w, i, q, o)| {
        format!("{}<{w},{i},{},{}>", if s { "ap_fixed" } else { "ap_ufixed" }, QUANT[q], OVF[o])
    })
}

#[derive(Debug, Clone)]
pub struct LayerSpec {
    outputs: usize,
    relu: bool,
    weight: String,
    bias: String,
    accum: String,
    output: String,
    pe_pick: usize,
    simd_pick: usize,
    train_w: bool,
    train_b: bool,
}

pub fn layer() -> impl Strategy<Value = LayerSpec> {
    (
        (1usize..=9, any::<bool>(), format(8), format(10), format(24), format(12)),
        (any::<usize>(), any::<usize>(), any::<bool>(), any::<bool>()),
    )
        .prop_map(|((outputs, relu, weight, bias, accum, output), (pe_pick, simd_pick, train_w, train_b))| LayerSpec {
            outputs,
            relu,
            weight,
            bias,
            accum,
            output,
            pe_pick,
            simd_pick,
            train_w,
            train_b,
        })
}

/// A random model file (without `weights:` contents) and a weight seed.
/// With `trainable`, at least one tensor is trainable (the last layer's
/// biases when the draw made none).
pub fn network(trainable: bool) -> impl Strategy<Value = (String, u64)> {
    (1usize..=9, format(12), prop::collection::vec(layer(), 1..=3), any::<u64>()).prop_map(move |(inputs, xf, mut layers, seed)| {
        if trainable && !layers.iter().any(|l| l.train_w || l.train_b) {
            layers.last_mut().expect("at least one layer").train_b = true;
        }
        let mut y = format!("name: rnd\ninput:\n  shape: [{inputs}]\n  format: '{xf}'\nweights: w.npz\nlayers:\n");
        let mut n_in = inputs;
        for (k, l) in layers.iter().enumerate() {
            // Any PE in 1..=outputs and SIMD in 1..=inputs, dividing or not.
            y += &dense_yaml(&format!("l{k}"), l, n_in);
            n_in = l.outputs;
        }
        (y, seed)
    })
}


/// One layer of a random image network, before it is fitted to the shape
/// it is fed.
#[derive(Debug, Clone)]
pub enum ImageOp {
    /// A convolution: filters, stride 2 (else 1), same padding (else valid),
    /// and a dense layer's draw for its formats, folding and trainables.
    Conv { stride2: bool, same: bool, l: LayerSpec },
    /// A 2x2 max-pool.
    Pool,
    /// A batch norm: relu, the formats of scale, shift, accumulator and
    /// output, and which of scale and shift are trainable.
    Bn { relu: bool, formats: [String; 4], train: [bool; 2] },
}

fn image_op() -> impl Strategy<Value = ImageOp> {
    prop_oneof![
        3 => (any::<bool>(), any::<bool>(), layer()).prop_map(|(stride2, same, mut l)| {
            l.outputs = 1 + l.outputs % 4;
            ImageOp::Conv { stride2, same, l }
        }),
        1 => Just(ImageOp::Pool),
        1 => (any::<bool>(), (format(8), format(8), format(20), format(8)), any::<[bool; 2]>())
            .prop_map(|(relu, (s, h, a, y), train)| ImageOp::Bn { relu, formats: [s, h, a, y], train }),
    ]
}

fn dense_yaml(name: &str, l: &LayerSpec, n_in: usize) -> String {
    let pe = 1 + l.pe_pick % l.outputs;
    let simd = 1 + l.simd_pick % n_in;
    format!(
        "  - name: {name}\n    type: dense\n    inputs: {n_in}\n    outputs: {}\n    activation: {}\n    precision: {{weight: '{}', bias: '{}', accum: '{}', output: '{}'}}\n    pe: {pe}\n    simd: {simd}\n    trainable: [{}]\n",
        l.outputs,
        if l.relu { "relu" } else { "linear" },
        l.weight,
        l.bias,
        l.accum,
        l.output,
        trainables(l).join(", ")
    )
}

fn trainables(l: &LayerSpec) -> Vec<&'static str> {
    let mut t = Vec::new();
    if l.train_w {
        t.push("weights");
    }
    if l.train_b {
        t.push("biases");
    }
    t
}

/// A random image network (a model file without `weights:` contents, and a
/// weight seed): an input image of 1 to 7 rows and columns and 1 to 3
/// channels, 1 to 3 convolutions (both strides, both paddings, any folding),
/// pools and batch norms, then either the image as the output or a flatten and a dense
/// layer. A draw that does not fit its shape is adapted: valid padding on
/// an image below 3x3 becomes same, a pool on an image below 2x2 is left out.
/// With `trainable` (for the on-chip trainer, whose networks output
/// vectors) the dense layer is always there and at least one tensor is
/// trainable (its biases when the draw made none).
pub fn cnn(trainable: bool) -> impl Strategy<Value = (String, u64)> {
    (
        (1usize..=7, 1usize..=7, 1usize..=3, format(8)),
        prop::collection::vec(image_op(), 1..=3),
        prop::option::of(layer()),
        layer(),
        any::<u64>(),
    )
        .prop_map(move |((h0, w0, c0, xf), ops, dense, tail, seed)| {
            let dense = if trainable {
                let mut d = dense.unwrap_or(tail);
                let any = ops.iter().any(|op| match op {
                    ImageOp::Conv { l, .. } => l.train_w || l.train_b,
                    ImageOp::Bn { train, .. } => train[0] || train[1],
                    ImageOp::Pool => false,
                });
                if !any && !d.train_w && !d.train_b {
                    d.train_b = true;
                }
                Some(d)
            } else {
                dense
            };
            let mut y = format!("name: rnd\ninput:\n  shape: [{h0}, {w0}, {c0}]\n  format: '{xf}'\nweights: w.npz\nlayers:\n");
            let (mut h, mut w, mut c) = (h0, w0, c0);
            for (k, op) in ops.iter().enumerate() {
                match op {
                    ImageOp::Pool if h >= 2 && w >= 2 => {
                        y += &format!("  - name: p{k}\n    type: maxpool2d\n");
                        (h, w) = (h / 2, w / 2);
                    }
                    ImageOp::Pool => {}
                    ImageOp::Bn { relu, formats: [sf, hf, af, yf], train } => {
                        let t: Vec<&str> = [(train[0], "scale"), (train[1], "shift")].iter().filter(|x| x.0).map(|x| x.1).collect();
                        y += &format!(
                            "  - name: b{k}\n    type: batchnorm\n    activation: {}\n    precision: {{scale: '{sf}', shift: '{hf}', accum: '{af}', output: '{yf}'}}\n    trainable: [{}]\n",
                            if *relu { "relu" } else { "linear" },
                            t.join(", ")
                        );
                    }
                    ImageOp::Conv { stride2, same, l } => {
                        let stride = if *stride2 { 2 } else { 1 };
                        let same = *same || h < 3 || w < 3;
                        let pe = 1 + l.pe_pick % l.outputs;
                        let simd = 1 + l.simd_pick % (9 * c);
                        y += &format!(
                            "  - name: c{k}\n    type: conv2d\n    filters: {}\n    stride: {stride}\n    padding: {}\n    activation: {}\n    precision: {{weight: '{}', bias: '{}', accum: '{}', output: '{}'}}\n    pe: {pe}\n    simd: {simd}\n    trainable: [{}]\n",
                            l.outputs,
                            if same { "same" } else { "valid" },
                            if l.relu { "relu" } else { "linear" },
                            l.weight,
                            l.bias,
                            l.accum,
                            l.output,
                            trainables(l).join(", ")
                        );
                        let out = |n: usize| if same { n.div_ceil(stride) } else { (n - 3) / stride + 1 };
                        (h, w, c) = (out(h), out(w), l.outputs);
                    }
                }
            }
            if let Some(d) = dense {
                y += "  - name: flat\n    type: flatten\n";
                y += &dense_yaml("fc", &d, h * w * c);
            }
            (y, seed)
        })
}

/// The accumulator of a random convolution whose input channels are split:
/// it wraps, and its 28 fraction bits and 20 integer bits hold every
/// product of the random formats' codes (at most 11 + 15 fraction bits, 8
/// + 8 integer bits), so the sum of partial sums is exact.
pub const SPLIT_ACCUM: &str = "ap_fixed<48,20,AP_TRN,AP_WRAP>";

fn conv_yaml(name: &str, l: &LayerSpec, inputs: Option<&str>, c_in: usize, stride: usize, same: bool) -> String {
    let pe = 1 + l.pe_pick % l.outputs;
    let simd = 1 + l.simd_pick % (9 * c_in);
    format!(
        "  - name: {name}\n    type: conv2d\n{}    filters: {}\n    stride: {stride}\n    padding: {}\n    activation: {}\n    precision: {{weight: '{}', bias: '{}', accum: '{}', output: '{}'}}\n    pe: {pe}\n    simd: {simd}\n    trainable: [{}]\n",
        inputs.map(|i| format!("    inputs: [{i}]\n")).unwrap_or_default(),
        l.outputs,
        if same { "same" } else { "valid" },
        if l.relu { "relu" } else { "linear" },
        l.weight,
        l.bias,
        l.accum,
        l.output,
        trainables(l).join(", ")
    )
}

/// A random graph network (a model file without `weights:` contents, and a
/// weight seed): an input image of 3 to 7 rows and columns and 1 to 3
/// channels into a convolution `a`; a branch of one or two convolutions
/// (same padding, stride 1) from `a`; the two joined by `add` (lowered to
/// concat + conv) or `concat`, with the branch or the skip path first; then
/// either the image out, a pool, or flatten and dense. So the fork's FIFO
/// sizing, the join and the lowering are drawn with random formats and
/// folding. Without `trainable`, half of them get a channel limit
/// (`max_channels` 2 to 4), which
/// splits every convolution or add with more channels (slices, partial
/// convolutions, sums and concats); a convolution whose input is split gets
/// an accumulator that wraps and holds every product
/// ([`SPLIT_ACCUM`]), which makes the split exact. With `trainable`,
/// flatten and dense end it and at least one tensor is trainable.
pub fn graph(trainable: bool) -> impl Strategy<Value = (String, u64)> {
    (
        (3usize..=7, 3usize..=7, 1usize..=3, format(8)),
        (layer(), layer(), prop::option::of(layer()), any::<bool>(), any::<bool>(), format(10)),
        (0usize..3, layer(), any::<u64>()),
    )
        .prop_map(move |((h, w, c0, xf), (a, b1, b2, add, swap, yf), (tail, mut fc, seed))| {
            // The channel limit comes from the weight seed's bits, so the
            // rest of the draw is what it was before limits were drawn. Not
            // for the trainer's networks: a split graph with its trainer
            // co-simulates for minutes (CI time); trained splits are
            // checked in the simulator (sim/tests/graph.rs).
            let limit = (!trainable && seed >> 60 & 1 == 1).then_some(2 + (seed >> 61) as usize % 3);
            let mut a = a;
            a.outputs = 1 + a.outputs % 4;
            let f = a.outputs;
            let limit_line = limit.map(|m| format!("max_channels: {m}\n")).unwrap_or_default();
            let mut y = format!("name: rnd\ninput:\n  shape: [{h}, {w}, {c0}]\n  format: '{xf}'\nweights: w.npz\n{limit_line}layers:\n");
            // Split inputs need an accumulation that is exact in any order.
            let max = limit.unwrap_or(usize::MAX);
            if c0 > max {
                a.accum = SPLIT_ACCUM.into();
            }
            y += &conv_yaml("a", &a, None, c0, 1, true);
            // The branch keeps a's shape, and its last layer takes a's
            // output format: a join gathers inputs of one format.
            let mut b1 = b1;
            b1.outputs = f;
            if f > max {
                b1.accum = SPLIT_ACCUM.into();
            }
            let mut last = "b1";
            let mut b2 = b2;
            if let Some(b) = b2.as_mut() {
                b.outputs = f;
                if f > max {
                    b.accum = SPLIT_ACCUM.into();
                }
            }
            match b2.as_mut() {
                Some(b) => b.output = a.output.clone(),
                None => b1.output = a.output.clone(),
            }
            y += &conv_yaml("b1", &b1, Some("a"), f, 1, true);
            if let Some(b) = &b2 {
                y += &conv_yaml("b2", b, Some("b1"), f, 1, true);
                last = "b2";
            }
            let ins = if swap { format!("[a, {last}]") } else { format!("[{last}, a]") };
            let c = if add {
                y += &format!("  - name: j\n    type: add\n    inputs: {ins}\n    precision: {{output: '{yf}'}}\n");
                f
            } else {
                y += &format!("  - name: j\n    type: concat\n    inputs: {ins}\n");
                2 * f
            };
            let tail = if trainable { 2 } else { tail };
            match tail {
                0 => {}
                1 => y += "  - name: p\n    type: maxpool2d\n",
                _ => {
                    if trainable && !(a.train_w || a.train_b || b1.train_w || b1.train_b || fc.train_w || fc.train_b) {
                        fc.train_b = true;
                    }
                    y += "  - name: flat\n    type: flatten\n";
                    y += &dense_yaml("fc", &fc, h * w * c);
                }
            }
            (y, seed)
        })
}
