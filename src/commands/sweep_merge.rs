//! `fptgen sweep-merge OUT`: gathers a sweep plan's result files into
//! sweep.csv, sweep.json and the plots, prints the table, and names the
//! points that failed or have no result yet.

use std::path::Path;

use anyhow::bail;
use fptgen_flow::sweep::grid::list;
use fptgen_flow::sweep::plan::SBATCH;
use fptgen_flow::sweep::report::table;
use fptgen_flow::sweep::{merge, Plan, RESULTS};

/// Merges the sweep in `out`. The outputs are written whenever every
/// result file present is readable; the exit status is then 1 if a point
/// failed or has no result (listed with the commands that run them).
pub fn merge(out: &Path) -> anyhow::Result<()> {
    let plan = Plan::read(out)?;
    let merged = merge::gather(out, &plan)?;
    let ev = &merged.evaluation;
    print!("{}", table(&ev.results, plan.data.is_some(), plan.summary.labels));
    merge::write(out, &plan, &merged)?;
    let cache = out.join("cache");
    println!(
        "{} distinct designs: yosys ran {} times, {} estimates from {}",
        ev.designs,
        ev.yosys_runs,
        ev.cache_hits,
        cache.display()
    );
    println!("wrote {}: {}", out.display(), RESULTS.join(", "));
    let failed = ev.failed();
    let n = ev.results.len();
    if !merged.missing.is_empty() {
        let m = &merged.missing;
        bail!(
            "{} of {n} points have no result yet (tasks {}): wait for them, or run them again (sbatch --array={} {}, or fptgen sweep-run {} --index I), then merge again",
            m.len(),
            list(m),
            list(m),
            out.join(SBATCH).display(),
            out.display()
        );
    }
    if failed > 0 {
        bail!("{failed} of {n} points failed (see the table above and {})", out.join(RESULTS[0]).display());
    }
    Ok(())
}
