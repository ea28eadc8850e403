//! The int8 import's check before anything is written: the model file and
//! archive load into fptgen's simulator, and on random int8 inputs every
//! layer's codes are within one code of the ONNX graph's real function
//! evaluated on that layer's own input codes (QONNX's `Quant` of the exact
//! real sum: `round(y / s_out) + z_out` to nearest, clipped), so an
//! import whose requantization or bias rounding moves an output by more
//! than one code is refused, naming the node.
//!
//! Not an exact proof, as the `ap_fixed` import's is: QONNX rounds the real
//! value, TFLite's kernel the product of an integer sum and a 31-bit
//! multiplier, and TFLite's int32 bias is the float bias rounded; they
//! differ on ties and near them. The check measures how much
//! ([`Disagreement`]): how many of the graph's outputs differ from the
//! graph's own function on the check's inputs, by how much, and how many of
//! the layers' differing outputs lie at a tie. `fptgen import` prints it and
//! writes the import only with `--accept-inexact`.

use std::collections::BTreeMap;
use std::path::Path;

use fptgen_sim::model::Model;
use fptgen_sim::network::Network as Simulator;
use fptgen_sim::tensor::{Array, NamedArray, OutValues, Values};
use fptgen_sim::weights::{self, Conversion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::super::error::ImportError;
use super::{Kind, Network};

/// Random inputs of the check (after the two extremes and zero).
pub const SAMPLES: usize = 1000;

/// Seed of the check's random inputs.
const SEED: u64 = 18;

/// The archive's arrays as the simulator's loader reads them.
fn arrays(named: &[NamedArray]) -> BTreeMap<String, Array> {
    named
        .iter()
        .map(|a| {
            let values = match &a.values {
                OutValues::F64(v) => v.clone(),
                OutValues::I64(v) => v.iter().map(|&x| x as f64).collect(),
                OutValues::U64(v) => v.iter().map(|&x| x as f64).collect(),
            };
            (a.name.clone(), Array { shape: a.shape.clone(), values: Values::Float(values), dtype: "<f8".into() })
        })
        .collect()
}

/// How close to a tie (`k + 1/2`) a real value must be to count as one: the
/// graph's real function is evaluated in `f64`, and TFLite's 31-bit
/// multiplier and int32 bias move a value by far less than this.
pub const TIE: f64 = 1.0 / (1 << 20) as f64;

/// A value QONNX's 8-bit `Quant` rounds: `y / scale`, before rounding (ties
/// to even), the zero point and the clip.
#[derive(Debug, Clone, Copy)]
struct Real {
    t: f64,
    zero_point: i32,
}

impl Real {
    /// QONNX's code for it.
    fn code(self) -> f64 {
        (self.t.round_ties_even() + f64::from(self.zero_point)).clamp(-128.0, 127.0)
    }

    /// Whether it lies at a tie, or within [`TIE`] of one.
    fn at_tie(self) -> bool {
        (self.t - self.t.floor() - 0.5).abs() <= TIE
    }
}

/// QONNX's 8-bit `Quant` of the real `y`, before rounding.
fn real(y: f64, scale: f32, zero_point: i32) -> Real {
    Real { t: y / f64::from(scale), zero_point }
}

/// The real function of layer `kind` on input codes `x`, as the values
/// QONNX rounds to output codes.
fn reference(kind: &Kind, x: &[i128]) -> Vec<Real> {
    match kind {
        Kind::Dense(d) => (0..d.outputs)
            .map(|o| {
                let s_w = f64::from(d.weight_scales[if d.weight_scales.len() == 1 { 0 } else { o }]);
                let z_in = i128::from(d.input.zero_point());
                let sum: i128 = (0..d.inputs).map(|i| i128::from(d.w[o * d.inputs + i]) * (x[i] - z_in)).sum();
                let mut y = sum as f64 * s_w * f64::from(d.input.scale()) + d.bias_real[o];
                if d.relu {
                    y = y.max(0.0);
                }
                real(y, d.output.scale(), d.output.zero_point())
            })
            .collect(),
        Kind::Requantize(from, to) => {
            x.iter().map(|&c| real((c - i128::from(from.zero_point())) as f64 * f64::from(from.scale()), to.scale(), to.zero_point())).collect()
        }
    }
}

/// What the check measured between the imported int8 chain and the graph's
/// own function (QONNX's semantics, in real arithmetic) on its inputs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Disagreement {
    /// Check inputs: the two extremes, the zero point and the random ones.
    pub inputs: usize,
    /// Graph outputs compared (inputs times the output's length).
    pub outputs: usize,
    /// Graph outputs whose code differs from the graph's (each chain fed
    /// its own codes from the input on).
    pub differ: usize,
    /// The largest difference of a graph output, in codes.
    pub worst: i128,
    /// Layer outputs compared on the layer's own input codes.
    pub layer_outputs: usize,
    /// Layer outputs that differ on their own input codes.
    pub layer_differ: usize,
    /// Of those, the ones whose real value lies at a tie or within [`TIE`]
    /// of one (QONNX rounds ties to even, TFLite's requantization toward
    /// +infinity, and the multiplier and bias move values near a tie).
    pub ties: usize,
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
        write!(
            f,
            "on {} check inputs (the extremes, the zero point and {} seeded random ones) {} of the graph's {} outputs ({:.1}%) differ from the graph's own function (QONNX's, in real arithmetic)",
            self.inputs,
            self.inputs.saturating_sub(3),
            self.differ,
            self.outputs,
            pct(self.differ, self.outputs)
        )?;
        if self.differ > 0 {
            write!(f, ", by at most {} code{}", self.worst, if self.worst == 1 { "" } else { "s" })?;
        }
        write!(f, "; layer by layer, on each layer's own input codes, {} of {} outputs differ", self.layer_differ, self.layer_outputs)?;
        if self.layer_differ > 0 {
            write!(
                f,
                ", {} of them at a tie or within 2^-20 of one (QONNX rounds ties to even, TFLite's requantization toward +infinity) and {} further from one (the 31-bit multiplier or the int32 bias rounded)",
                self.ties,
                self.layer_differ - self.ties
            )?;
        }
        Ok(())
    }
}

/// Loads `model` with the archive `named` and checks every layer on the
/// extremes, zero and `samples` random int8 inputs; returns what it
/// measured.
pub fn check(file: &Path, net: &Network, model: &Model, named: &[NamedArray], samples: usize) -> Result<Disagreement, ImportError> {
    let params = weights::from_arrays(model, Path::new("weights.npz"), arrays(named), Conversion::Exact)
        .map_err(|e| ImportError::file(file, format!("the imported weights do not load: {e}")))?;
    let sim = Simulator::new(model.clone(), params).map_err(|e| ImportError::file(file, format!("the imported model does not run: {e}")))?;
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut m = Disagreement { inputs: samples + 3, ..Disagreement::default() };
    for s in 0..samples + 3 {
        let x: Vec<i128> = (0..net.inputs)
            .map(|_| match s {
                0 => 127,
                1 => -128,
                2 => i128::from(net.interface.zero_point()),
                _ => rng.random_range(-128..=127),
            })
            .collect();
        let trace = sim.trace(&x).map_err(|e| ImportError::file(file, format!("the simulator refuses check input {s}: {e}")))?;
        // The graph's own chain, each layer on the graph's codes.
        let mut graph: Vec<i128> = x.clone();
        let mut input = x;
        for (k, l) in net.layers.iter().enumerate() {
            let got = &trace[k];
            let want = reference(&l.kind, &input);
            graph = reference(&l.kind, &graph).iter().map(|r| r.code() as i128).collect();
            for (j, (&g, &r)) in got.iter().zip(&want).enumerate() {
                let w = r.code();
                let d = (g as f64 - w).abs() as i128;
                m.layer_outputs += 1;
                if d > 0 {
                    m.layer_differ += 1;
                    m.ties += usize::from(r.at_tie());
                }
                if d > 1 {
                    return Err(ImportError::named(
                        file,
                        &l.node,
                        format!(
                            "its int8 layer '{}' is more than one code from the graph: on check input {s} output {j} is {g} where QONNX's real function gives {w} (the bias or the requantization does not fit the int8 domain)",
                            l.name
                        ),
                    ));
                }
            }
            input = got.clone();
        }
        for (&g, &w) in input.iter().zip(&graph) {
            let d = (g - w).abs();
            m.outputs += 1;
            m.differ += usize::from(d > 0);
            m.worst = m.worst.max(d);
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use fptgen_sim::layers::dense_int8::Affine;

    use super::super::dense::Dense;
    use super::super::{render, Kind, Layer, Network};
    use super::check;

    /// A 2-input, 1-output layer with weights 1 and scales making every
    /// multiplier exactly 1/2: its bias (real 0) is written as `b` codes.
    fn net(b: i64) -> Network {
        let q = Affine::new(0.5, 0).unwrap();
        let d = Dense {
            inputs: 2,
            outputs: 1,
            relu: false,
            input: q,
            output: Affine::new(1.0, 0).unwrap(),
            weight_scales: vec![1.0],
            w: vec![1, 1],
            b: vec![b],
            bias_real: vec![0.0],
        };
        Network { inputs: 2, interface: q, layers: vec![Layer { name: "fc1".into(), node: ("mm".into(), "MatMul".into()), kind: Kind::Dense(d) }] }
    }

    fn run(n: &Network) -> Result<super::Disagreement, String> {
        let yaml = render::model_yaml(n, "t", "t.onnx");
        let model = fptgen_sim::model::parse(&yaml, Path::new("model.yaml")).map_err(|e| e.to_string())?;
        check(Path::new("t.onnx"), n, &model, &render::weight_arrays(n), 16).map_err(|e| e.to_string())
    }

    #[test]
    fn a_layer_within_one_code_passes_and_one_further_off_is_refused_by_name() {
        // Ties differ (QONNX to even, TFLite toward +infinity): at most one code.
        let m = run(&net(0)).unwrap();
        assert!(m.worst <= 1, "{m:?}");
        // Every output is (x0 + x1) / 2: the odd sums are ties, and half of
        // them (2.5: QONNX 2, TFLite 3) differ, all counted as ties.
        assert!(m.differ > 0 && m.layer_differ == m.differ && m.ties == m.layer_differ, "{m:?}");
        assert_eq!((m.inputs, m.outputs, m.layer_outputs), (19, 19, 19), "{m:?}");
        // A bias of 6 codes (3 output codes) where the graph's is 0.
        let e = run(&net(6)).unwrap_err();
        assert!(e.contains("node 'mm' (MatMul)") && e.contains("more than one code"), "{e}");
    }
}
