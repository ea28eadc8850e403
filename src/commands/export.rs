//! `fptgen export`: a model's trained int8 layers for CMSIS-NN or as the
//! `.tflite` they came from (`fptgen_generator::export`).

use std::io::Write;
use std::path::Path;

use fptgen_generator::{export, output};
use fptgen_sim::files;
use fptgen_sim::weights::{self, Conversion};

use crate::ExportFormat;

/// Loads the model and its trained weights (`weights`, or the archive the
/// model names) and writes the export to `out`.
pub fn run(model: &Path, weights_path: Option<&Path>, format: ExportFormat, out: &Path) -> anyhow::Result<()> {
    if format == ExportFormat::Tflite {
        files::check_new(out, "-o")?;
    }
    let model = fptgen_sim::model::load(model)?;
    let params = match weights_path {
        Some(w) => weights::load_from(&model, w, Conversion::Exact)?,
        None => weights::load(&model, Conversion::Exact)?,
    };
    match format {
        ExportFormat::CmsisNn => {
            let files = export::cmsis_files(&model, &params, fptgen_generator::VERSION)?;
            output::write_dir(out, output::EXPORT, &files)?;
            let names: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
            println!("wrote {} in {} (CMSIS-NN)", names.join(", "), out.display());
        }
        ExportFormat::Tflite => {
            let bytes = export::tflite_bytes(&model, &params)?;
            files::write_new(out, |mut f| f.write_all(&bytes))?;
            println!("wrote {} ({} bytes, the .tflite with the trained int8 layers)", out.display(), bytes.len());
        }
    }
    Ok(())
}
