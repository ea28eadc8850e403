//! `fptgen check`: validate and summarize model files.

use std::path::PathBuf;

use fptgen_sim::int8::Rounding;
use fptgen_sim::model::{Distribution, LayerOp, Model, Source, Training};

/// Validates each model and its weights and prints a summary.
pub fn run(models: &[PathBuf], quantize: bool) -> anyhow::Result<()> {
    for (i, path) in models.iter().enumerate() {
        let (model, _params) = super::load(path, quantize)?;
        // Under rule sgm, the modules' archive is checked too once it exists
        // (before `fptgen train --sgm` writes it, the summary says so).
        let needs_modules = !fptgen_sim::train::sgm::module_shapes(&model).is_empty();
        if let (Some(p), true, Some(fptgen_sim::model::Rule::Sgm)) = (&model.sgm_path, needs_modules, model.training.map(|t| t.rule)) {
            if p.exists() {
                fptgen_sim::train::sgm::load(&model, p)?;
            }
        }
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
    if let Some(t) = m.target_ii {
        s += &format!("  target_ii {t} cycles: the layers' `auto` pe/simd are chosen for it (docs/hardware.md, \"Folding\")\n");
    }
    s += &format!("  input [{}] {}\n", shape.join(", "), m.input_format);
    // The inputs column only for a graph: a chain's summary is as before.
    let graph = !m.is_chain();
    let rows: Vec<Vec<String>> = m
        .layers
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let k = l.kind();
            let formats = k.formats();
            let format = |name: &str| formats.iter().find(|(n, _)| *n == name).map_or("-".to_string(), |(_, f)| f.to_string());
            let tensors = k.tensors();
            let trainable: Vec<_> = tensors.iter().filter(|t| t.trainable).collect();
            let count = |ts: &mut dyn Iterator<Item = &fptgen_sim::layers::TensorSpec>| ts.map(|t| t.len() as u64).sum::<u64>();
            let mut row = vec![
                l.name.clone(),
                l.describe(),
                k.activation().map_or("-".to_string(), |a| a.to_string()),
                format("weight"),
                format("bias"),
                format("accum"),
                format("output"),
                k.folding(),
                {
                    let fixed = count(&mut tensors.iter().enumerate().filter(|(i, _)| l.is_constant(*i)).map(|(_, t)| t));
                    let all = count(&mut tensors.iter());
                    if fixed == 0 {
                        all.to_string()
                    } else {
                        format!("{} (+{fixed} fixed)", all - fixed)
                    }
                },
                if trainable.is_empty() {
                    "-".to_string()
                } else {
                    let roles: Vec<&str> = trainable.iter().map(|t| t.role).collect();
                    format!("{} ({})", count(&mut trainable.iter().copied()), roles.join("+"))
                },
            ];
            if graph {
                let names: Vec<String> = l
                    .inputs
                    .iter()
                    .map(|s| match *s {
                        Source::Input => "input".to_string(),
                        Source::Layer(j) => m.layers[j].name.clone(),
                    })
                    .collect();
                row.push(if l.is_chained(i) { "-".to_string() } else { names.join(", ") });
            }
            row
        })
        .collect();
    let mut head = vec!["layer", "op", "act", "weight", "bias", "accum", "output", "pe/simd", "params", "trainable"];
    if graph {
        head.push("inputs");
    }
    let mut width: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let parts: Vec<String> = cells.iter().zip(&width).map(|(c, &w)| format!("{c:<w$}")).collect();
        format!("  {}\n", parts.join("  ").trim_end())
    };
    s += &line(head.clone());
    for r in &rows {
        s += &line(r.iter().map(String::as_str).collect());
    }
    s += &format!(
        "  total: {} parameters, {} MACs per inference, {} trainable parameters\n",
        m.params(),
        m.macs(),
        m.trainable_params()
    );
    if let Some(t) = &m.training {
        s += &format!("  {}\n", training_line(m, t));
    }
    s += &int8_lines(m);
    s
}

/// The int8 interface and each int8 layer's quantization, one line each
/// (nothing for a model without either).
pub fn int8_lines(m: &Model) -> String {
    let mut s = String::new();
    if let Some(i) = &m.interface {
        // Load checked every int8 layer fed by the input against it.
        let fed: Vec<String> = m
            .layers
            .iter()
            .filter(|l| l.inputs.contains(&Source::Input) && l.kind().input_quantization().is_some())
            .map(|l| format!("'{}'", l.name))
            .collect();
        let check = if fed.is_empty() { String::new() } else { format!("; equals the input quantization of {} bit for bit", fed.join(", ")) };
        s += &format!("  interface: {} (from {}){check}\n", i.quantization, i.from);
    }
    for l in &m.layers {
        match &l.op {
            LayerOp::DenseInt8(d) => {
                let ws = d.weight_scales();
                let scales = if ws.len() == 1 { format!("weight scale {:?} (per tensor)", ws[0]) } else { format!("{} weight scales (per channel)", ws.len()) };
                let (lo, hi) = d.activation_range();
                s += &format!(
                    "  int8 '{}': input {}; output {}; {scales}; output codes {lo}..={hi}; {} rounding\n",
                    l.name,
                    d.input_q(),
                    d.output_q(),
                    rounding(d.rounding)
                );
            }
            LayerOp::Requantize(r) => {
                s += &format!(
                    "  int8 '{}': requantize {} -> {}; multiplier {} shift {}; {} rounding\n",
                    l.name,
                    r.input_q(),
                    r.output_q(),
                    r.multiplier().multiplier(),
                    r.multiplier().shift(),
                    rounding(r.rounding)
                );
            }
            _ => {}
        }
    }
    s
}

/// The model file's name of a rounding.
fn rounding(r: Rounding) -> &'static str {
    match r {
        Rounding::Single => "single",
        Rounding::Double => "double",
    }
}

/// Under `rule: sgm`: which layers have synthetic-gradient modules, and
/// where they are read from.
fn sgm_note(m: &Model) -> String {
    let layers: Vec<&str> = fptgen_sim::train::sgm::module_shapes(m).iter().map(|s| m.layers[s.layer].name.as_str()).collect();
    match (&m.sgm_path, layers.is_empty()) {
        (Some(p), false) => format!(
            "; synthetic-gradient modules of {} from {}{}",
            layers.join(", "),
            p.display(),
            if p.exists() { "" } else { " (not written yet: fptgen train --sgm)" }
        ),
        _ => String::new(),
    }
}

/// One line about the `training:` section: N, k, P, M, T, G and the forward
/// passes each buffered sample takes per iteration.
pub fn training_line(m: &Model, t: &Training) -> String {
    let trainable = m.trainable_params();
    let noise = match t.noise.distribution {
        Distribution::Rademacher => format!("rademacher {}-bit LFSR", t.noise.width.bits()),
        Distribution::Uniform => format!("uniform {} bits of a {}-bit LFSR", t.noise.bits, t.noise.width.bits()),
    };
    if t.rule != fptgen_sim::model::Rule::Es {
        return format!(
            "training: rule {} (feedback, dense, conv2d and dense_int8 layers), k {}, M {}, T {trainable}; \
             1 forward pass and 1 update per sample per iteration; lr_shift {}{}, steps rounded {}, seed {}{}",
            t.rule.name(),
            t.iterations,
            t.buffer,
            t.lr_shift,
            if t.lr_shift_auto {
                if m.layers.last().is_some_and(|l| l.kind().output_quantization().is_some()) {
                    " (auto: 16 - round(log2 of the int8 output scale))"
                } else {
                    " (auto: 16 + the output's fraction bits)"
                }
            } else {
                ""
            },
            match t.step_rounding {
                fptgen_sim::model::StepRounding::Auto => "auto (stochastically for tensors of at most 8 bits)",
                r => r.name(),
            },
            t.seed,
            sgm_note(m)
        );
    }
    format!(
        "training: N {}, k {}, P {}, M {}, T {trainable}, G {}; {} forward passes per sample per iteration; \
         {}, {}, {noise}, sigma {}{}, lr_shift {}{}, seed {}",
        t.population,
        t.iterations,
        t.blocks,
        t.buffer,
        t.groups(trainable),
        t.passes_per_iteration(trainable),
        t.fitness,
        t.loss_quantization,
        t.perturb_shift,
        if t.perturb_shift_auto { " (auto)" } else { "" },
        t.lr_shift,
        if t.lr_shift_auto { " (auto)" } else { "" },
        t.seed,
    )
}
