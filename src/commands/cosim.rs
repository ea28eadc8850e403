//! `fptgen cosim`: the generated Verilog against the simulator, in Verilator.

use std::path::Path;

use anyhow::bail;
use fptgen_generator::design;
use fptgen_flow::cosim;
use fptgen_flow::cosim_train::{self, TrainCosimOptions};
use fptgen_sim::network::Network;

/// The most input values (`--vectors` times the model's inputs) one
/// co-simulation generates: its stimulus and expected outputs are held in
/// memory and written as text.
pub const MAX_STIMULUS_CODES: usize = 20_000_000;

/// `fptgen cosim --train`'s options.
#[derive(Debug, Clone, Copy)]
pub struct TrainArgs {
    /// Iterations to train.
    pub iterations: u64,
    /// Chance per cycle of an inference request.
    pub interrupt_rate: f64,
}

/// Runs `fptgen cosim`.
#[allow(clippy::too_many_arguments)] // one per command-line option
pub fn run(
    model: &Path,
    vectors: usize,
    seed: u64,
    trace: Option<&Path>,
    out: Option<&Path>,
    quantize: bool,
    train: Option<TrainArgs>,
    overrides: super::TrainingOverrides,
    axi: Option<fptgen_generator::axi::AxiOptions>,
) -> anyhow::Result<()> {
    if vectors == 0 {
        bail!("--vectors must be at least 1");
    }
    if let Some(t) = train {
        if t.iterations == 0 || t.iterations > u64::from(u32::MAX) {
            bail!("--iterations must be between 1 and {}", u32::MAX);
        }
        let permille = t.interrupt_rate * 1000.0;
        if !(0.0..=1000.0).contains(&permille) || (permille - permille.round()).abs() > 1e-6 {
            bail!("--interrupt-rate is {}; it must be from 0 to 1 in steps of 0.001 (a chance per cycle)", t.interrupt_rate);
        }
    }
    // Before any work: a trace must go to a new file in an existing folder.
    if let Some(t) = trace {
        fptgen_sim::files::check_new(t, "--trace")?;
    }
    cosim::require_tool("verilator")?;
    let (mut model, params) = super::load(model, quantize)?;
    overrides.apply(&mut model)?;
    let codes = vectors.saturating_mul(model.input_len());
    if codes > MAX_STIMULUS_CODES {
        bail!(
            "--vectors {vectors} with {} inputs each is {codes} input values; the co-simulation holds at most {MAX_STIMULUS_CODES} in memory, so use at most {} vectors",
            model.input_len(),
            MAX_STIMULUS_CODES / model.input_len()
        );
    }
    if train.is_some() && model.training.is_none() {
        bail!("{}: --train needs a `training:` section in the model", model.source.display());
    }
    if let Some(o) = &axi {
        if trace.is_some() {
            bail!("--trace and --axi: the trace is of the design without its AXI wrapper; give one of them");
        }
        // Before anything is written: the options must fit.
        design::axi_plan(&model, &params, o)?;
    }
    let (dir, _tmp) = super::design_dir(out, &model.name)?;
    let (plan, axi_plan) = design::write_design_with(&model, &params, &dir, axi.as_ref())?;
    let net = Network::new(model, params)?;
    if let Some(a) = &axi_plan {
        return run_axi(&dir, &plan, a, &net, vectors, seed, train);
    }
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

/// `fptgen cosim --axi`: the same checks through the AXI wrapper.
fn run_axi(
    dir: &Path,
    plan: &fptgen_generator::plan::NetworkPlan,
    a: &fptgen_generator::axi::AxiPlan,
    net: &Network,
    vectors: usize,
    seed: u64,
    train: Option<TrainArgs>,
) -> anyhow::Result<()> {
    let r = fptgen_flow::cosim_axi::run(dir, plan, a, net, vectors, seed)?;
    println!("AXI: {}", r.summary());
    if let Some(m) = &r.first_mismatch {
        bail!("output differs from the simulator: {m}");
    }
    // The wrapper's cycle model (AxiPlan::ii and latency), where it is exact.
    if a.cycles_exact() && !r.passed() {
        bail!(
            "measured cycles through the AXI wrapper differ from the prediction: II {} vs {}, latency {} vs {}",
            r.ii,
            r.predicted_ii,
            r.latency,
            r.predicted_latency
        );
    }
    if let Some(t) = train {
        let opts = TrainCosimOptions { iterations: t.iterations, interrupt_permille: (t.interrupt_rate * 1000.0).round() as u32, seed };
        let r = fptgen_flow::cosim_axi::run_train(dir, plan, a, net, opts)?;
        println!("training: {}", r.summary());
    }
    Ok(())
}
