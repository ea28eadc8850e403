//! `fptgen cosim`: the generated Verilog against the simulator, in Verilator.

use std::path::Path;

use anyhow::{bail, Context};
use fptgen_generator::cosim;
use fptgen_sim::network::Network;

/// Runs `fptgen cosim`.
pub fn run(
    model: &Path,
    vectors: usize,
    seed: u64,
    trace: Option<&Path>,
    out: Option<&Path>,
    quantize: bool,
) -> anyhow::Result<()> {
    if vectors == 0 {
        bail!("--vectors must be at least 1");
    }
    cosim::require_tool("verilator")?;
    let (model, params) = super::load(model, quantize)?;
    let tmp;
    let dir = match out {
        Some(d) => d.to_path_buf(),
        None => {
            tmp = tempfile::tempdir().context("creating a temporary directory")?;
            tmp.path().join(&model.name)
        }
    };
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
    Ok(())
}
