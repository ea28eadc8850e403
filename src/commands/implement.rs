//! `fptgen implement`: place and route for a Lattice ECP5 part.

use std::path::Path;

use fptgen_generator::{design, output, part};
use fptgen_flow::implement;
use indicatif::{ProgressBar, ProgressStyle};

use super::TrainingOverrides;

/// Runs `fptgen implement`.
pub fn run(model: &Path, out: Option<&Path>, part_name: Option<&str>, quantize: bool, overrides: TrainingOverrides) -> anyhow::Result<()> {
    let (mut model, params) = super::load(model, quantize)?;
    overrides.apply(&mut model)?;
    if let Some(p) = part_name {
        model.part = p.to_string();
    }
    let ecp5 = match part::ecp5(&model.part) {
        Ok(Some(p)) => p,
        Ok(None) => anyhow::bail!(
            "{}: part {} is not a Lattice ECP5 part; `fptgen implement` places and routes for ECP5 (give --part LFE5U-85F-8BG381C, or `part:` in the model); for {} the design's vivado/build.tcl runs Vivado",
            model.source.display(),
            model.part,
            model.part
        ),
        Err(e) => anyhow::bail!("{}: {e}", if part_name.is_some() { "--part".to_string() } else { model.source.display().to_string() }),
    };
    let (dir, _tmp) = super::design_dir(out, &model.name)?;
    let n = design::write_design(&model, &params, &dir)?;
    let gen = design::gen_info(&model);
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("style"));
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let mut progress = |line: &str| {
        let line = line.trim();
        if !line.is_empty() {
            bar.set_message(line.chars().take(100).collect::<String>());
        }
    };
    let r = implement::run(&dir, &n.name, &model.part, ecp5, n.clock_period_ns, &gen, &mut progress);
    bar.finish_and_clear();
    let r = r?;
    output::add_files(&dir, output::IMPLEMENT, &implement::report_files(&r, &gen)?)?;
    let where_ = if out.is_some() { format!(", report {}", dir.join("reports/implement.md").display()) } else { String::new() };
    println!("{} on {} (speed {}): placed and routed by {}{where_}", n.name, r.ecp5.device, r.ecp5.speed, r.tools.nextpnr_version);
    println!(
        "  routed fmax {:.1} MHz: {} the {:.1} MHz clock ({} ns)",
        r.fmax_mhz,
        if r.meets_clock { "meets" } else { "misses" },
        r.clock_mhz,
        n.clock_period_ns
    );
    for (k, (used, avail)) in r.utilization.iter().filter(|(_, u)| u.0 > 0) {
        println!("  {k:<14} {used:>7} of {avail:>7}  {:.1}%", 100.0 * *used as f64 / (*avail).max(1) as f64);
    }
    if let Some(p) = &r.worst_path {
        println!("  worst path {:.2} ns ({:.2} in cells, {:.2} in wires, {} hops)", p.delay_ns, p.logic_ns, p.routing_ns, p.hops.len());
        println!("    from {} to {}", p.from, p.to);
    }
    if out.is_some() {
        println!("  bitstream {} ({} bytes)", dir.join(&r.bitstream.0).display(), r.bitstream.1);
    }
    Ok(())
}
