//! `fptgen import`: a QONNX model as a model file and weights archive.

use std::path::Path;

use fptgen_import::{self as import, Lower};
use fptgen_generator::output::{write_dir, IMPORT};

/// Runs `fptgen import`: maps the whole file first, then writes OUT; with
/// `Lower::Approximate` also `distill.yaml`, and lists the layers to
/// retrain on stdout. An import that is not exact is written only with
/// `accept_inexact`.
pub fn run(model: &Path, out: &Path, lower: Lower, accept_inexact: bool) -> anyhow::Result<()> {
    let imported = import::import(model, lower)?;
    let inexact = imported.accepted(model, accept_inexact)?;
    for w in imported.warnings.iter().chain(&inexact) {
        eprintln!("warning: {w}");
    }
    write_dir(out, IMPORT, &import::files(&imported))?;
    let files = if imported.distill_yaml.is_some() { format!(", weights.npz and {}", import::distill::FILE) } else { " and weights.npz".to_string() };
    println!(
        "wrote {}: model.yaml ({} layers){files}, from {}",
        out.display(),
        imported.layers,
        model.display()
    );
    for (layers, (node, op), rewrite) in &imported.blocks {
        println!("approximation, retrain: layers {} replace node '{node}' ({op}): {rewrite}", layers.join(", "));
    }
    if !imported.blocks.is_empty() {
        println!(
            "retrain them with: fptgen train {} --teacher {} -o WEIGHTS.npz (block-wise distillation; {} lists the blocks)",
            out.join("model.yaml").display(),
            model.display(),
            out.join(import::distill::FILE).display()
        );
    }
    Ok(())
}
