//! `fptgen generate`: the network's Verilog and everything around it.

use std::path::Path;

use fptgen_generator::axi::AxiOptions;
use fptgen_generator::design::write_design_with;

/// Runs `fptgen generate` (with the AXI wrapper when `axi` is given).
pub fn run(model: &Path, out: &Path, quantize: bool, overrides: super::TrainingOverrides, axi: Option<AxiOptions>) -> anyhow::Result<()> {
    let (mut model, params) = super::load(model, quantize)?;
    overrides.apply(&mut model)?;
    let (n, a) = write_design_with(&model, &params, out, axi.as_ref())?;
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
    if let Some(a) = a {
        println!(
            "AXI wrapper rtl/{}.v: s_axis {} bits, m_axis {} bits, AXI4-Lite {} address bits; driver/ and vivado/package_ip.tcl; cocotb bench cocotb/test_{}.py",
            a.module, a.bus_in, a.bus_out, a.addr_w, a.module
        );
    }
    println!("FuseSoC core {}.core (docs/verification.md)", n.name);
    Ok(())
}
