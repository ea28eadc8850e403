//! # fptgen-import
//!
//! The front end of `fptgen import`: a QONNX graph (ONNX protobuf with QONNX's `Quant`
//! nodes) to a model file and weights archive (`docs/import.md`).
//!
//! The data flows one way: the file's bytes are decoded into the ONNX
//! messages ([`onnx`], hand-written prost structs), indexed ([`graph`]),
//! walked from the input to the output in topological order ([`walk`])
//! and mapped to dense and conv2d ([`mac`], with the `Relu` and `Quant`
//! after them: [`tail`]), batchnorm ([`batchnorm`]), concat ([`concat`](mod@concat)),
//! maxpool2d, flatten and add layers ([`network`]), with the exact rewrites of
//! [`lower`] (1x1 convolutions, residual additions, casts for a standalone
//! `Relu` or `Quant` and for joins of two formats, `BipolarQuant`, `Trunc`)
//! and the `Quant` nodes' formats from [`quant`], rendered as a model file and weights
//! ([`yaml`]). Before anything is written the model file is checked by
//! fptgen's own loader and the loaded network is proven equal, in fptgen's
//! simulator on random inputs, to the ONNX graph's exact evaluation
//! ([`proof`], [`reference`](mod@reference) on [`dyadic`] values).
//! With [`Lower::Approximate`] the rewrites that change the function are
//! applied too; their layers (and what reads them) are left out of the
//! proof and listed for retraining in `distill.yaml` ([`distill`]).

pub mod batchnorm;
pub mod concat;
pub mod distill;
pub mod dyadic;
pub mod error;
pub mod graph;
pub mod int8;
pub mod lower;
pub mod mac;
pub mod network;
pub mod onnx;
pub mod proof;
pub mod quant;
pub mod reference;
pub mod structure;
pub mod tail;
pub mod walk;
pub mod yaml;

use std::path::{Path, PathBuf};

pub use error::ImportError;

use fptgen_sim::files::GeneratedFile;

/// Which rewrites the import applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lower {
    /// Only exact rewrites; a node that needs another is an error naming
    /// it and the rewrite (the default).
    #[default]
    Exact,
    /// Also the rewrites that change the function (seed 004): 5x5 and 7x7
    /// convolutions as stacked 3x3 ones ([`lower::stacked_conv`]).
    Approximate,
}

/// An imported network: the model file and the weights archive, in memory.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The model file's text.
    pub model_yaml: String,
    /// The weights archive's bytes.
    pub weights_npz: Vec<u8>,
    /// The number of layers.
    pub layers: usize,
    /// The distillation record (`distill.yaml`), when a rewrite changed
    /// the function.
    pub distill_yaml: Option<String>,
    /// Per approximated block: its layers' names, the node it replaces
    /// (name, op type) and the rewrite.
    pub blocks: Vec<(Vec<String>, (String, String), String)>,
    /// What the user should know that does not stop the import (nodes no
    /// output depends on).
    pub warnings: Vec<String>,
    /// An import that is not exact (the int8 domain): why, and what its
    /// check measured against the graph; `None` for an exact import (proved
    /// equal to the graph's exact evaluation, [`proof`]).
    pub inexact: Option<Inexact>,
}

/// Why an import is not exact, and how far from the graph it measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Inexact {
    /// The node that put the graph in the int8 domain, and why.
    pub reason: String,
    /// What the check measured.
    pub measured: int8::check::Disagreement,
}

impl std::fmt::Display for Inexact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the import is not exact: {}, so the graph maps to fptgen's int8 domain (TFLite's integer arithmetic, docs/import.md, \"The int8 domain\"); {}",
            self.reason, self.measured
        )
    }
}

impl Imported {
    /// Refuses an import that is not exact unless `accept` (`fptgen import
    /// --accept-inexact`), saying what was measured; with `accept`, returns
    /// what to warn of.
    pub fn accepted(&self, path: &Path, accept: bool) -> Result<Option<String>, ImportError> {
        match &self.inexact {
            None => Ok(None),
            Some(i) if accept => Ok(Some(i.to_string())),
            Some(i) => Err(ImportError::file(path, format!("{i}. Nothing was written: pass --accept-inexact to write it"))),
        }
    }
}

/// Reads and maps the ONNX file at `path`, with the rewrites `lower` allows.
pub fn import(path: &Path, lower: Lower) -> Result<Imported, ImportError> {
    let bytes = std::fs::read(path).map_err(|e| ImportError::file(path, e.to_string()))?;
    import_bytes(path, &bytes, lower)
}

/// Maps the bytes of an ONNX file as [`import`] does; `path` names the
/// file in errors and gives the network its name.
pub fn import_bytes(path: &Path, bytes: &[u8], lower: Lower) -> Result<Imported, ImportError> {
    // A TFLite flatbuffer (file identifier "TFL3" at byte 4) is not imported
    // as a graph: its int8 layers come in through the model file.
    if bytes.get(4..8) == Some(b"TFL3") {
        return Err(ImportError::file(
            path,
            "a TFLite model, not ONNX: `fptgen import` reads QONNX graphs; a TFLite model's int8 layers come in through a model file whose `dense_int8` layers name their operator (`tflite: {file, output}`), with `fptgen init-weights MODEL --from-tflite` taking their weights (docs/int8.md; docs/numerics.md)",
        ));
    }
    let proto = onnx::decode(bytes).map_err(|e| ImportError::file(path, e))?;
    let g = proto.graph.as_ref().ok_or_else(|| ImportError::file(path, "not an ONNX model (no graph)"))?;
    let checked = structure::check(path, g)?;
    let warnings = checked.warnings;
    let g = checked.pruned.as_ref().unwrap_or(g);
    let mut graph = graph::Graph::new(path, g)?;
    graph.opsets = proto.opset_import.iter().map(|o| (o.domain.clone(), o.version)).collect();
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let source = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    quant::check_all(&graph)?;
    if let Some(why) = int8::trigger(&graph) {
        return import_int8(path, &graph, why, &stem, &source).map(|i| Imported { warnings, ..i });
    }
    let net = walk::network(&graph, lower == Lower::Approximate)?;
    let model_yaml = yaml::model_yaml(&net, &yaml::network_name(&stem), &source);
    let model = fptgen_sim::model::parse(&model_yaml, Path::new("model.yaml"))
        .map_err(|e| ImportError::file(path, format!("the imported model does not validate (please report this): {e}")))?;
    let arrays = yaml::weight_arrays(&net);
    proof::check(&graph, &net, &model, &arrays, proof::SAMPLES)?;
    let weights_npz =
        fptgen_sim::tensor::npz_bytes(&arrays).map_err(|e| ImportError::file(path, format!("writing the weights archive: {e}")))?;
    let distill_yaml = distill::render(&net, &source);
    let blocks = net.blocks.iter().map(|b| (b.layers.iter().map(|&l| net.layers[l].name.clone()).collect(), b.node.clone(), b.rewrite.clone())).collect();
    Ok(Imported { model_yaml, weights_npz, layers: net.layers.len(), distill_yaml, blocks, warnings, inexact: None })
}

/// Maps a graph of the int8 domain ([`int8`]), which `why` says it is in.
fn import_int8(path: &Path, graph: &graph::Graph<'_>, why: (&onnx::NodeProto, String), stem: &str, source: &str) -> Result<Imported, ImportError> {
    let reason = format!("node '{}' ({}): {}", why.0.name, why.0.op_type, why.1);
    let net = int8::network(graph, why)?;
    let model_yaml = int8::render::model_yaml(&net, &yaml::network_name(stem), source);
    let model = fptgen_sim::model::parse(&model_yaml, Path::new("model.yaml"))
        .map_err(|e| ImportError::file(path, format!("the imported model does not validate (please report this): {e}")))?;
    let arrays = int8::render::weight_arrays(&net);
    let measured = int8::check::check(path, &net, &model, &arrays, int8::check::SAMPLES)?;
    let weights_npz =
        fptgen_sim::tensor::npz_bytes(&arrays).map_err(|e| ImportError::file(path, format!("writing the weights archive: {e}")))?;
    Ok(Imported {
        model_yaml,
        weights_npz,
        layers: net.layers.len(),
        distill_yaml: None,
        blocks: Vec::new(),
        warnings: Vec::new(),
        inexact: Some(Inexact { reason, measured }),
    })
}

/// The files of an import: `model.yaml` and `weights.npz`, and
/// `distill.yaml` when a rewrite changed the function.
pub fn files(imported: &Imported) -> Vec<GeneratedFile> {
    let file = |p: &str, contents: &[u8]| GeneratedFile { path: PathBuf::from(p), contents: contents.to_vec(), executable: false };
    let mut out = vec![file("model.yaml", imported.model_yaml.as_bytes()), file("weights.npz", &imported.weights_npz)];
    if let Some(d) = &imported.distill_yaml {
        out.push(file(distill::FILE, d.as_bytes()));
    }
    out
}
