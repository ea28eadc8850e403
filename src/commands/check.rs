//! `fptgen check`: validate and summarize model files.

use std::path::PathBuf;

use fptgen_sim::model::Model;

/// Validates each model and its weights and prints a summary.
pub fn run(models: &[PathBuf], quantize: bool) -> anyhow::Result<()> {
    for (i, path) in models.iter().enumerate() {
        let (model, _params) = super::load(path, quantize)?;
        if i > 0 {
            println!();
        }
        print!("{}", summary(&model));
    }
    Ok(())
}

/// The summary `check` prints for a valid model.
pub fn summary(m: &Model) -> String {
    let mut s = String::new();
    let shape: Vec<String> = m.input_shape.iter().map(|d| d.to_string()).collect();
    s += &format!("{}: ok ({})\n", m.name, m.source.display());
    s += &format!("  part {}, clock {} ns, weights {}\n", m.part, m.clock_period_ns, m.weights_path.display());
    s += &format!("  input [{}] {}\n", shape.join(", "), m.input_format);
    let rows: Vec<[String; 10]> = m
        .layers
        .iter()
        .map(|l| {
            let d = l.dense();
            [
                l.name.clone(),
                format!("dense {}x{}", d.outputs, d.inputs),
                d.activation.to_string(),
                d.precision.weight.to_string(),
                d.precision.bias.to_string(),
                d.precision.accum.to_string(),
                d.precision.output.to_string(),
                format!("{}/{}", d.pe, d.simd),
                d.params().to_string(),
                if d.trainable.any() { format!("{} ({})", d.trainable_params(), d.trainable) } else { "-".to_string() },
            ]
        })
        .collect();
    let head = ["layer", "op", "act", "weight", "bias", "accum", "output", "pe/simd", "params", "trainable"];
    let mut width = head.map(str::len);
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let parts: Vec<String> = cells.iter().zip(width).map(|(c, w)| format!("{c:<w$}")).collect();
        format!("  {}\n", parts.join("  ").trim_end())
    };
    s += &line(head.to_vec());
    for r in &rows {
        s += &line(r.iter().map(String::as_str).collect());
    }
    s += &format!(
        "  total: {} parameters, {} MACs per inference, {} trainable parameters\n",
        m.params(),
        m.macs(),
        m.trainable_params()
    );
    s
}
