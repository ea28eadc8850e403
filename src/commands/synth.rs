//! `fptgen synth`: a yosys resource estimate of the generated design.

use std::path::Path;

use fptgen_generator::render::SynthScope;
use fptgen_generator::{design, output, part};
use fptgen_flow::synth;

use super::TrainingOverrides;

/// Runs `fptgen synth`.
pub fn run(
    model: &Path,
    out: Option<&Path>,
    quantize: bool,
    overrides: TrainingOverrides,
    trainer_only: bool,
) -> anyhow::Result<()> {
    let (mut model, params) = super::load(model, quantize)?;
    overrides.apply(&mut model)?;
    if trainer_only && model.training.is_none() {
        anyhow::bail!("{}: --trainer-only needs a `training:` section in the model", model.source.display());
    }
    let scope = if trainer_only { SynthScope::Trainer } else { SynthScope::Design };
    let (dir, _tmp) = super::design_dir(out, &model.name)?;
    let n = design::write_design(&model, &params, &dir)?;
    let capacity = part::lookup(&n.part);
    let r = synth::run(&dir, &n.name, capacity, scope, n.clock_period_ns)?;
    let files = synth::report_files(&r, &design::gen_info(&model), &n.part)?;
    output::add_files(&dir, output::SYNTH, &files)?;
    if trainer_only {
        // report.md gives the trainer's added area from now on.
        let report = design::report_md_with_trainer_area(&model, &n, r.total)?;
        output::add_files(&dir, output::DESIGN, &[report])?;
    }
    let share = |x: f64| format!("{x:.2}%");
    let what = match (trainer_only, model.training.as_ref().map(|t| t.rule)) {
        (true, Some(fptgen_sim::model::Rule::Es)) => "the ES trainer alone".to_string(),
        (true, Some(rule)) => format!("the {} trainer alone", rule.name()),
        _ => "the whole design".to_string(),
    };
    let report = dir.join(format!("reports/{}.md", scope.report()));
    let report = if out.is_some() { format!(", report {}", report.display()) } else { String::new() };
    println!("{} on {}: yosys estimate of {what}{report}", n.name, n.part);
    let t = &r.total;
    let rows = [
        ("LUTs", t.luts + t.lutram, r.shares.map(|s| s.luts)),
        ("FFs", t.ffs, r.shares.map(|s| s.ffs)),
        (r.carry_cell.as_str(), t.carry, r.shares.map(|s| s.carry8)),
        ("DSP48E2", t.dsps, r.shares.map(|s| s.dsps)),
    ];
    for (name, used, s) in rows {
        println!("  {name:<8} {used:>9}{}", s.map(|x| format!("  {}", share(x))).unwrap_or_default());
    }
    println!(
        "  BRAM36   {:>9.1}{}",
        t.bram36(),
        r.shares.map(|s| format!("  {}", share(s.bram36))).unwrap_or_default()
    );
    println!("  longest combinational path: {} cells", r.logic_levels);
    let t = &r.timing;
    println!(
        "  timing estimate: {:.2} ns, fmax {:.0} MHz ({} the {} ns clock): {} LUT levels, {} carry, {} MUXF, {} other cells",
        t.delay_ns,
        t.fmax_mhz,
        if r.meets_clock { "meets" } else { "misses" },
        r.clock_period_ns,
        t.lut_levels,
        t.carry_cells,
        t.muxf_cells,
        t.other_cells
    );
    println!("    from {} to {}", t.start, t.end);
    if capacity.is_none() {
        println!("  (fptgen does not know the capacity of {}; no shares)", n.part);
    }
    Ok(())
}
