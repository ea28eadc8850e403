//! `fptgen sweep-run OUT --index I`: one task of a sweep plan (a Slurm
//! array task: `--index $SLURM_ARRAY_TASK_ID`): evaluates its point and
//! writes OUT/results/I.json atomically; prints what it wrote.

use std::path::Path;

use anyhow::bail;
use fptgen_flow::sweep::Runner;

/// Runs task `index` of the plan in `out`. Exit status 1 if the point
/// failed (its result file, with the error, is written all the same) or
/// nothing could be written.
pub fn run(out: &Path, index: usize) -> anyhow::Result<()> {
    let runner = Runner::open(out)?;
    let task = runner.task(index)?;
    let (r, path) = runner.run(index)?;
    let p = &r.point;
    println!("task {index} of {}: N {} P {}", runner.plan().tasks.len(), task.population, task.blocks);
    if let Some(a) = &p.area {
        let how = if p.cached == Some(true) { "from an earlier sweep's cache" } else { "by this sweep" };
        println!("  design {}: {} LUTs, {} FFs, {} DSP, {} BRAM36 (estimated {how})", p.design.as_deref().unwrap_or(""), a.luts, a.ffs, a.dsps, a.bram36);
    }
    if let Some(t) = &p.time {
        println!("  {} cycles per iteration ({} group{})", t.cycles_per_iteration, t.groups, if t.groups == 1 { "" } else { "s" });
    }
    if let Some(q) = &p.training {
        let acc = q.accuracy.map(|a| format!(", accuracy {:.2}%", 100.0 * a)).unwrap_or_default();
        println!("  after {} iterations: loss {}{acc}", q.iterations, q.loss);
    }
    println!("wrote {}", path.display());
    if let Some(e) = &p.error {
        bail!("task {index} (N {}, P {}) failed, as recorded in {}: {e}", p.population, p.blocks, path.display());
    }
    Ok(())
}
