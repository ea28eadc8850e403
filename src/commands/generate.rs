//! `fptgen generate`: the network's Verilog and everything around it.

use std::path::Path;

use fptgen_generator::plan::{plan, NetworkPlan};
use fptgen_generator::render::{render, GenInfo};
use fptgen_generator::{output, VERSION};
use fptgen_sim::model::Model;
use fptgen_sim::weights::Params;

/// Plans, renders and writes the design of `model` into `out`.
pub fn write_design(model: &Model, params: &Params, out: &Path) -> anyhow::Result<NetworkPlan> {
    hardware_supported(model)?;
    let n = plan(model);
    let gen = GenInfo { version: VERSION, source: model.source.display().to_string() };
    let files = render(model, params, &n, &gen)?;
    output::write_dir(out, output::DESIGN, &files)?;
    Ok(n)
}

/// Refuses a model with a layer kind the generator cannot build yet.
pub fn hardware_supported(model: &Model) -> anyhow::Result<()> {
    match model.dense_only() {
        Ok(()) => Ok(()),
        Err((name, kind)) => anyhow::bail!(
            "{}: layer '{name}' is a {kind} layer; fptgen generates hardware for dense layers only so far \
             (check, simulate, train and train-es take every layer kind)",
            model.source.display()
        ),
    }
}

/// Runs `fptgen generate`.
pub fn run(model: &Path, out: &Path, quantize: bool, overrides: super::TrainingOverrides) -> anyhow::Result<()> {
    let (mut model, params) = super::load(model, quantize)?;
    overrides.apply(&mut model)?;
    let n = write_design(&model, &params, out)?;
    println!(
        "wrote {}: {} layers, II {} cycles, latency {} cycles ({:.1} ns), {:.0} inferences/s at {} ns",
        out.display(),
        n.layers.len(),
        n.ii,
        n.latency,
        n.latency_ns(),
        n.inferences_per_second(),
        n.clock_period_ns
    );
    Ok(())
}
