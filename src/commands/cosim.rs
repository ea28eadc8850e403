//! `fptgen cosim`: the generated Verilog against the simulator, in Verilator.

use std::path::Path;

use anyhow::bail;
use fptgen_generator::cosim;
use fptgen_generator::cosim_train::{self, TrainCosimOptions};
use fptgen_sim::network::Network;

/// `fptgen cosim --train`'s options.
#[derive(Debug, Clone, Copy)]
pub struct TrainArgs {
    /// Iterations to train.
    pub iterations: u64,
    /// Chance per cycle of an inference request.
    pub interrupt_rate: f64,
}

/// Runs `fptgen cosim`.
pub fn run(
    model: &Path,
    vectors: usize,
    seed: u64,
    trace: Option<&Path>,
    out: Option<&Path>,
    quantize: bool,
    train: Option<TrainArgs>,
) -> anyhow::Result<()> {
    if vectors == 0 {
        bail!("--vectors must be at least 1");
    }
    if let Some(t) = train {
        if t.iterations == 0 || t.iterations > u64::from(u32::MAX) {
            bail!("--iterations must be between 1 and {}", u32::MAX);
        }
        if !(0.0..=1.0).contains(&t.interrupt_rate) {
            bail!("--interrupt-rate must be between 0 and 1 (a chance per cycle), not {}", t.interrupt_rate);
        }
    }
    cosim::require_tool("verilator")?;
    let (model, params) = super::load(model, quantize)?;
    if train.is_some() && model.training.is_none() {
        bail!("{}: --train needs a `training:` section in the model", model.source.display());
    }
    let (dir, _tmp) = super::design_dir(out, &model.name)?;
    let plan = super::generate::write_design(&model, &params, &dir)?;
    let net = Network::new(model, params)?;
    let r = cosim::run(&dir, &plan, &net, vectors, seed, trace)?;
    println!("{}", r.summary());
    if let Some(m) = &r.first_mismatch {
        bail!("output differs from the simulator: {m}");
    }
    if !r.passed() {
        bail!(
            "measured cycles differ from the prediction: II {} vs {}, latency {} vs {}",
            r.ii,
            r.predicted_ii,
            r.latency,
            r.predicted_latency
        );
    }
    if let Some(t) = train {
        let opts = TrainCosimOptions {
            iterations: t.iterations,
            interrupt_permille: (t.interrupt_rate * 1000.0).round() as u32,
            seed,
        };
        let r = cosim_train::run_train(&dir, &plan, &net, opts)?;
        println!("training: {}", r.summary());
    }
    Ok(())
}
