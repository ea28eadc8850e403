//! The device's cost of each training rule on `examples/mnist` (784-200-100-10,
//! the deployed 4-bit network): for ES (the model's N = 100, P = 100, M =
//! 64) and the feedback rules, on fc3 alone and on a hidden layer, the
//! trainer's added area (yosys, `synth_xilinx -family xcu`, the inference
//! pipeline a black box: `fptgen synth --trainer-only`) and the device's
//! time per training sample at the model's clock, from the generated
//! schedule (co-simulated in CI on smaller networks:
//! `flow/tests/cosim_feedback_random.rs`, `cosim_train_random.rs`).
//!
//! ES's time per sample is one iteration over the buffer divided by M (every
//! member evaluates every buffered sample); a feedback rule's is one
//! sample's forward pass, deltas and update walk, between the schedule's
//! bounds (every row's delta zero, or none).
//!
//! The sgm case's modules are seeded random codes (`sgm::random`): the
//! area does not depend on the values beyond what yosys can compress in
//! a read-only memory of random codes, the worst case.
//!
//! Run (writes OUT/table.md; about 15 minutes on 2 cores, most of it
//! yosys; results in docs/results/rules.md; `--rules sgm,dfa` runs only
//! those rules' rows):
//!
//!     cargo run --release --example rule_hardware -- --out target/rule_hardware
//!
//! With `--cnn` the same for `examples/mnist_cnn` (conv 8, pool, conv 16,
//! pool, dense 10): ES and DFA on its dense layer `fc`, then on its second
//! convolution `conv2` (DFA: `conv2` and `fc`, `rtl/fptgen_fb_conv.v`).

use std::path::{Path, PathBuf};

use fptgen_generator::render::SynthScope;
use fptgen_generator::design;
use fptgen_flow::synth;
use fptgen_sim::layers::dense::Trainable;
use fptgen_sim::model::{LayerOp, Model, Rule};
use fptgen_sim::weights::{self, Conversion};

/// One design of the table.
struct Case {
    rule: Rule,
    /// Names of the trainable (dense or conv2d) layers.
    layers: &'static [&'static str],
}

fn variant(base: &Model, case: &Case) -> Model {
    let mut m = base.clone();
    for l in &mut m.layers {
        let on = case.layers.contains(&l.name.as_str());
        match &mut l.op {
            LayerOp::Dense(d) => d.trainable = Trainable { weights: on, biases: on },
            LayerOp::Conv2d(c) => c.mvau.trainable = Trainable { weights: on, biases: on },
            _ => {}
        }
    }
    if let Some(t) = m.training.as_mut() {
        t.rule = case.rule;
    }
    m
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let out = match args.iter().position(|a| a == "--out") {
        Some(i) => PathBuf::from(args.get(i + 1).ok_or_else(|| anyhow::anyhow!("--out needs a directory"))?),
        None => anyhow::bail!("usage: rule_hardware --out DIR"),
    };
    if out.exists() {
        anyhow::bail!("{} exists; give a new directory", out.display());
    }
    let only: Option<Vec<String>> = args.iter().position(|a| a == "--rules").and_then(|i| args.get(i + 1)).map(|r| r.split(',').map(str::to_string).collect());
    let cnn = args.iter().any(|a| a == "--cnn");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let base = fptgen_sim::model::load(&root.join(if cnn { "examples/mnist_cnn/model.yaml" } else { "examples/mnist/model.yaml" }))?;
    let params = weights::load(&base, Conversion::Exact)?;
    let cnn_cases = [
        Case { rule: Rule::Es, layers: &["fc"] },
        Case { rule: Rule::Dfa, layers: &["fc"] },
        Case { rule: Rule::Es, layers: &["conv2"] },
        Case { rule: Rule::Dfa, layers: &["conv2", "fc"] },
    ];
    let mlp_cases = [
        Case { rule: Rule::Es, layers: &["fc3"] },
        Case { rule: Rule::Dfa, layers: &["fc3"] },
        Case { rule: Rule::Es, layers: &["fc2"] },
        Case { rule: Rule::Dfa, layers: &["fc2", "fc3"] },
        Case { rule: Rule::Drtp, layers: &["fc2", "fc3"] },
        Case { rule: Rule::Sgm, layers: &["fc2", "fc3"] },
        Case { rule: Rule::Es, layers: &["fc1"] },
        Case { rule: Rule::Dfa, layers: &["fc1", "fc2", "fc3"] },
    ];
    let cases: &[Case] = if cnn { &cnn_cases } else { &mlp_cases };
    let mut rows = Vec::new();
    for case in cases.iter().filter(|c| only.as_ref().is_none_or(|o| o.iter().any(|r| r == c.rule.name()))) {
        let mut m = variant(&base, case);
        let tag = format!("{}-{}", case.rule.name(), case.layers.join("-"));
        let dir = out.join(&tag);
        if case.rule == Rule::Sgm {
            std::fs::create_dir_all(&out)?;
            let path = out.join(format!("{tag}.sgm.npz"));
            fptgen_sim::train::sgm::save(&m, &fptgen_sim::train::sgm::random(&m, 1), &path, &[])?;
            m.sgm_path = Some(path);
        }
        let n = design::write_design(&m, &params, &dir)?;
        let ns = m.clock_period_ns;
        let us = |c: u64| c as f64 * ns / 1000.0;
        let tr = m.training.as_ref().expect("the example trains");
        let t = m.trainable_params();
        let (time, passes) = if let Some(es) = &n.trainer {
            let per = es.cycles_per_iteration / es.m as u64;
            (format!("{:.1}", us(per)), format!("{}", tr.passes_per_iteration(t)))
        } else if let Some(fb) = &n.feedback {
            (format!("{:.1} to {:.1}", us(fb.sample_fixed + fb.t), us(fb.sample_fixed + fb.walk_max)), "1".to_string())
        } else {
            anyhow::bail!("{tag}: no trainer planned");
        };
        eprintln!("{tag}: yosys ...");
        let start = std::time::Instant::now();
        let r = synth::run(&dir, &n.name, fptgen_generator::part::lookup(&n.part), SynthScope::Trainer, n.clock_period_ns)?;
        eprintln!("{tag}: {:.0} s", start.elapsed().as_secs_f64());
        let x = &r.total;
        rows.push(format!(
            "| {} | {} | {t} | {passes} | {time} | {} | {} | {} | {:.1} |",
            case.rule.name(),
            case.layers.join(", "),
            x.luts,
            x.ffs,
            x.dsps,
            x.bram36()
        ));
    }
    let mut table = String::from(
        "| rule | trained layers | T | forward passes per sample per iteration | us per sample at 200 MHz | LUTs | FFs | DSPs | BRAM36 |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        table += &r;
        table.push('\n');
    }
    std::fs::write(out.join("table.md"), &table)?;
    print!("{table}");
    Ok(())
}
