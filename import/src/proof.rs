//! The import's proof that its rewrites are exact: the imported model, as
//! fptgen's loader builds it (with its own lowering of `add` and its
//! channel splits), runs in fptgen's simulator on random inputs, and every
//! layer that stands for an ONNX tensor must equal that tensor of the ONNX
//! graph's exact evaluation ([`super::reference`]) value for value. The
//! first difference refuses the import, naming the node of the first layer
//! that differs. Inputs: the input format's largest, smallest and zero
//! codes, then seeded random codes. The layers of a rewrite that changes
//! the function (`--lower approximate`) and every layer that reads them
//! are left out ([`approximated`]): they are retrained, not proven.

use std::collections::BTreeMap;
use std::path::Path;

use fptgen_sim::model::Model;
use fptgen_sim::network::Network as Simulator;
use fptgen_sim::tensor::{Array, NamedArray, OutValues, Values};
use fptgen_sim::weights::{self, Conversion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::dyadic::Dyadic;
use super::error::ImportError;
use super::graph::Graph;
use super::network::Network;
use super::reference::{Reference, Tensor};
use super::walk::Shape;

/// Random inputs of the proof (after the three extremes).
pub const SAMPLES: usize = 64;

/// Seed of the proof's random inputs.
pub const SEED: u64 = 18;

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

/// ONNX's flat index of fptgen's value `j` of a tensor of `shape`.
pub fn onnx_index(shape: &Shape, j: usize) -> usize {
    match shape {
        Shape::Image(h, w, c) => (j % c) * h * w + j / c,
        Shape::Vector(_, Some(order)) => order[j],
        Shape::Vector(_, None) => j,
    }
}

/// Per layer of `net`: whether it is an approximation's
/// ([`Network::blocks`]) or reads one, directly or through other layers:
/// the layers the proof leaves out (the rest must still be exact).
pub fn approximated(net: &Network) -> Vec<bool> {
    let mut out = vec![false; net.layers.len()];
    for b in &net.blocks {
        for &l in &b.layers {
            out[l] = true;
        }
    }
    for k in 0..net.layers.len() {
        if net.layers[k].inputs.iter().any(|s| matches!(s, super::network::Src::Layer(j) if out[*j])) {
            out[k] = true;
        }
    }
    out
}

/// Runs the proof on `samples` random inputs (plus three extremes):
/// `model` and `named` (the archive) are what the import is about to write.
pub fn check(g: &Graph<'_>, net: &Network, model: &Model, named: &[NamedArray], samples: usize) -> Result<(), ImportError> {
    let file = g.file;
    let params = weights::from_arrays(model, Path::new("weights.npz"), arrays(named), Conversion::Exact)
        .map_err(|e| ImportError::file(file, format!("the imported weights do not load (please report this): {e}")))?;
    let sim = Simulator::new(model.clone(), params).map_err(|e| ImportError::file(file, format!("the imported model does not run (please report this): {e}")))?;
    let graph_input = g.proto.input.iter().find(|i| !g.is_constant(&i.name)).map(|i| i.name.clone()).unwrap_or_default();
    let f = net.input_format;
    let (lo, hi) = (f.lossless_min_raw(), f.max_raw());
    let n: usize = net.input_shape.iter().product();
    let onnx_shape = match net.input_shape[..] {
        [h, w, c] => vec![1, c, h, w],
        _ => vec![1, n],
    };
    let in_shape = Shape::from_dims(&net.input_shape);
    // Each imported layer's index in the loaded model (splits add layers).
    let index: Vec<usize> = net
        .layers
        .iter()
        .map(|l| {
            model.layers.iter().position(|m| m.name == l.name).ok_or_else(|| {
                ImportError::named(file, &l.node, format!("the loaded model has no layer '{}' (please report this)", l.name))
            })
        })
        .collect::<Result<_, _>>()?;
    let onnx = Reference::new(g)?;
    let approximate = approximated(net);
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    for s in 0..samples + 3 {
        let codes: Vec<i128> = (0..n)
            .map(|_| match s {
                0 => hi,
                1 => lo,
                2 => 0,
                _ => rng.random_range(lo..=hi),
            })
            .collect();
        let mut x = vec![Dyadic::ZERO; n];
        for (j, &c) in codes.iter().enumerate() {
            x[onnx_index(&in_shape, j)] = Dyadic::code(c, f.frac_bits());
        }
        let env = onnx.run((&graph_input, Tensor { shape: onnx_shape.clone(), v: x }))?;
        let trace = sim.trace(&codes).map_err(|e| ImportError::file(file, format!("the simulator refuses input {s} (please report this): {e}")))?;
        for ((l, k), &approx) in net.layers.iter().zip(&index).zip(&approximate) {
            let Some((tensor, shape)) = l.onnx.as_ref().filter(|_| !approx) else { continue };
            let want = env.get(tensor).ok_or_else(|| ImportError::named(file, &l.node, format!("the exact evaluation has no tensor '{tensor}' (please report this)")))?;
            let of = model.layers[*k].kind().output_format();
            let got = &trace[*k];
            if got.len() != want.v.len() {
                return Err(ImportError::named(file, &l.node, format!("layer '{}' has {} values, ONNX's tensor '{tensor}' {}", l.name, got.len(), want.v.len())));
            }
            for (j, &code) in got.iter().enumerate() {
                let (a, b) = (Dyadic::code(code, of.frac_bits()), want.v[onnx_index(shape, j)]);
                if a.cmp(&b) != std::cmp::Ordering::Equal {
                    return Err(ImportError::named(
                        file,
                        &l.node,
                        format!(
                            "the import's rewrite is not exact: on proof input {s}, layer '{}' value {j} is {} but the ONNX graph's exact evaluation of '{tensor}' gives {} (please report this)",
                            l.name,
                            a.approx(),
                            b.approx()
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::check;
    use crate::graph::Graph;
    use crate::network::{Kind, Network};
    use crate::{onnx, walk, yaml};

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/qonnx").join(format!("{name}.onnx"))
    }

    /// Runs the proof on `net` changed by `mutate`.
    fn prove(name: &str, mutate: impl FnOnce(&mut Network)) -> Result<(), String> {
        prove_with(name, mutate, "")
    }

    /// Runs the proof on `net` changed by `mutate`, with `top` added to the
    /// model file's top level.
    fn prove_with(name: &str, mutate: impl FnOnce(&mut Network), top: &str) -> Result<(), String> {
        let path = fixture(name);
        let bytes = std::fs::read(&path).unwrap();
        let proto = onnx::decode(&bytes).unwrap();
        let mut g = Graph::new(&path, proto.graph.as_ref().unwrap()).unwrap();
        g.opsets = proto.opset_import.iter().map(|o| (o.domain.clone(), o.version)).collect();
        let mut net = walk::network(&g, false).unwrap();
        mutate(&mut net);
        let text = yaml::model_yaml(&net, name, name).replace("\nlayers:\n", &format!("\n{top}layers:\n"));
        let model = fptgen_sim::model::parse(&text, Path::new("model.yaml")).unwrap();
        check(&g, &net, &model, &yaml::weight_arrays(&net), 8).map_err(|e| e.to_string())
    }

    fn mac_of<'n>(net: &'n mut Network, layer: &str) -> &'n mut crate::network::Mac {
        match &mut net.layers.iter_mut().find(|l| l.name == layer).unwrap().kind {
            Kind::Conv { mac, .. } | Kind::Dense(mac) => mac,
            _ => panic!("{layer} is not a conv or dense layer"),
        }
    }

    #[test]
    fn the_rewrites_of_the_residual_fixture_are_proven() {
        prove("resnet", |_| {}).unwrap();
    }

    /// fptgen's channel split (`max_channels` 3: slices, partial convolutions
    /// and their exact sum, parts and concats) of the imported layers, whose
    /// accumulators wrap and so split exactly, is proven like the rest:
    /// the split layers keep the imported layers' names.
    #[test]
    fn the_channel_split_of_an_imported_network_is_proven() {
        let path = fixture("resnet");
        let bytes = std::fs::read(&path).unwrap();
        let proto = onnx::decode(&bytes).unwrap();
        let g = Graph::new(&path, proto.graph.as_ref().unwrap()).unwrap();
        let net = walk::network(&g, false).unwrap();
        let text = yaml::model_yaml(&net, "resnet", "resnet").replace("\nlayers:\n", "\nmax_channels: 3\nlayers:\n");
        let model = fptgen_sim::model::parse(&text, Path::new("model.yaml")).unwrap();
        assert!(model.layers.len() > 2 * net.layers.len(), "max_channels 3 splits the layers");
        prove_with("resnet", |_| {}, "max_channels: 3\n").unwrap();
    }

    #[test]
    fn a_wrong_1x1_lowering_is_refused_naming_the_node() {
        // conv2 is the 1x1 'conv_1x1a': a corner tap made nonzero.
        let err = prove("resnet", |net| mac_of(net, "conv2").w[0] = 1).unwrap_err();
        assert!(err.contains("node 'conv_1x1a' (Conv)") && err.contains("not exact"), "{err}");
    }

    #[test]
    fn a_wrong_residual_rewrite_is_refused_naming_the_node() {
        // add2 is 'res_add2' lowered to concat + conv: its identity broken.
        let err = prove("resnet", |net| {
            let mac = mac_of(net, "add2");
            let centre = mac.w.iter().position(|&w| w == 1).unwrap();
            mac.w[centre] = 0;
        })
        .unwrap_err();
        assert!(err.contains("node 'res_add2' (Add)") && err.contains("not exact"), "{err}");
    }

    fn bn_of<'n>(net: &'n mut Network, layer: &str) -> &'n mut crate::network::Bn {
        match &mut net.layers.iter_mut().find(|l| l.name == layer).unwrap().kind {
            Kind::BatchNorm(b) => b,
            _ => panic!("{layer} is not a batch norm"),
        }
    }

    #[test]
    fn the_casts_and_the_bipolar_and_trunc_rewrites_are_proven() {
        prove("casts_cnn", |_| {}).unwrap();
        prove("bipolar_trunc", |_| {}).unwrap();
        prove("trunc_v2", |_| {}).unwrap();
    }

    #[test]
    fn a_wrong_widening_cast_is_refused_naming_the_node() {
        // cast3 widens conv1's output for 'add_mixed': made to give 0.
        let err = prove("casts_cnn", |net| bn_of(net, "cast3").scale_codes.fill(0)).unwrap_err();
        assert!(err.contains("node 'add_mixed' (Add)") && err.contains("not exact"), "{err}");
    }

    #[test]
    fn a_wrong_bipolar_sign_is_refused_naming_the_node() {
        // bipolar1 maps the step to -s and s: its shift made 0 (0 and 2s).
        let err = prove("bipolar_trunc", |net| bn_of(net, "bipolar1").shift_codes.fill(0)).unwrap_err();
        assert!(err.contains("node 'bipolar_act' (BipolarQuant)") && err.contains("not exact"), "{err}");
    }

    /// Brevitas's `QuantLinear` without a bias: `MatMul(x,
    /// Transpose(Quant(W)))`, the weights transposed at import.
    #[test]
    fn the_transposed_weights_of_a_brevitas_export_are_proven() {
        prove("brevitas_mlp", |_| {}).unwrap();
    }

    #[test]
    fn a_wrong_transpose_is_refused_naming_the_node() {
        // fc2 is '/fc2/MatMul' of Transpose(Quant(W)) (16 outputs of 24
        // inputs): its weights read as if not transposed (W's [16, 24]
        // codes in order, row by row of [24, 16]).
        let err = prove("brevitas_mlp", |net| {
            let mac = mac_of(net, "fc2");
            let w = mac.w.clone();
            mac.w = (0..16 * 24).map(|j| w[(j % 24) * 16 + j / 24]).collect();
            assert_ne!(mac.w, w);
        })
        .unwrap_err();
        assert!(err.contains("node '/fc2/MatMul' (MatMul)") && err.contains("not exact"), "{err}");
    }

    #[test]
    fn a_wrong_batchnorm_shift_is_refused_naming_the_node() {
        let err = prove("resnet", |net| match &mut net.layers.iter_mut().find(|l| l.name == "bn1").unwrap().kind {
            Kind::BatchNorm(b) => b.shift_codes[0] += 1,
            _ => panic!("bn1 is not a batch norm"),
        })
        .unwrap_err();
        assert!(err.contains("node 'bn1' (BatchNormalization)") && err.contains("not exact"), "{err}");
    }
}
