//! A proptest strategy for random dense networks: random depth, widths,
//! formats, rounding and overflow modes, activations, trainable memories and
//! folding (including PE and SIMD that do not divide the dimension).

use proptest::prelude::*;

pub const QUANT: [&str; 7] = ["AP_RND", "AP_RND_ZERO", "AP_RND_MIN_INF", "AP_RND_INF", "AP_RND_CONV", "AP_TRN", "AP_TRN_ZERO"];
pub const OVF: [&str; 4] = ["AP_SAT", "AP_SAT_ZERO", "AP_SAT_SYM", "AP_WRAP"];

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
            let pe = 1 + l.pe_pick % l.outputs;
            let simd = 1 + l.simd_pick % n_in;
            let mut trainable = Vec::new();
            if l.train_w {
                trainable.push("weights");
            }
            if l.train_b {
                trainable.push("biases");
            }
            y += &format!(
                "  - name: l{k}\n    type: dense\n    inputs: {n_in}\n    outputs: {}\n    activation: {}\n    precision: {{weight: '{}', bias: '{}', accum: '{}', output: '{}'}}\n    pe: {pe}\n    simd: {simd}\n    trainable: [{}]\n",
                l.outputs,
                if l.relu { "relu" } else { "linear" },
                l.weight,
                l.bias,
                l.accum,
                l.output,
                trainable.join(", ")
            );
            n_in = l.outputs;
        }
        (y, seed)
    })
}

