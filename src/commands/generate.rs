//! `fptgen generate`: the network's Verilog and everything around it.

use std::path::Path;

use fptgen_generator::design::write_design;

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
