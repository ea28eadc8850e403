//! `fptgen import`: a QONNX model as a model file and weights archive.

use std::path::Path;

use fptgen_generator::import;
use fptgen_generator::output::{write_dir, IMPORT};

/// Runs `fptgen import`: maps the whole file first, then writes OUT.
pub fn run(model: &Path, out: &Path) -> anyhow::Result<()> {
    let imported = import::import(model)?;
    write_dir(out, IMPORT, &import::files(&imported))?;
    println!(
        "wrote {}: model.yaml ({} layers) and weights.npz, from {}",
        out.display(),
        imported.layers,
        model.display()
    );
    Ok(())
}
