//! Gathering a plan's result files into the sweep's outputs ([`RESULTS`]):
//! every task's result in the grid's order; a task without a result file
//! is a failed point ("missing"), named with the command that runs it; a
//! result file that is truncated, corrupt, or not this plan's is an error
//! naming it, and nothing is written.

use std::collections::BTreeMap;
use std::path::Path;

use super::evaluate::Evaluation;
use super::plan::{result_path, Plan};
use super::plot::{plot_area, plot_quality};
use super::report::json;
use super::result_file::ResultFile;
use super::results::PointResult;
use super::{SweepError, RESULTS};
use fptgen_generator::output;
use fptgen_generator::render::GeneratedFile;

/// A plan's results, gathered.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// Every point, its counts of designs, yosys runs and cache hits.
    pub evaluation: Evaluation,
    /// The indices of the tasks without a result file.
    pub missing: Vec<usize>,
    /// The version lines of the yosys that made the estimates, each once
    /// ("; "-separated if they differ).
    pub yosys: String,
}

/// Gathers the results of `plan`'s tasks in `out`.
pub fn gather(out: &Path, plan: &Plan) -> Result<Merged, SweepError> {
    let mut results = Vec::new();
    let mut missing = Vec::new();
    let mut yosys: Vec<String> = Vec::new();
    for &task in &plan.tasks {
        match ResultFile::read(out, plan, task)? {
            Some(r) => {
                if !yosys.contains(&r.yosys) {
                    yosys.push(r.yosys.clone());
                }
                results.push(r.point);
            }
            None => {
                let mut p = PointResult::new(task.population, task.blocks);
                p.fail(
                    "missing",
                    format!(
                        "no result in {}: its task did not finish (run it: fptgen sweep-run {} --index {})",
                        out.join(result_path(task.index)).display(),
                        out.display(),
                        task.index
                    ),
                );
                missing.push(task.index);
                results.push(p);
            }
        }
    }
    Ok(Merged { evaluation: counts(results), missing, yosys: yosys.join("; ") })
}

/// The evaluation of `results`: distinct designs, and among them those
/// estimated by this sweep (yosys runs) and those from an earlier one
/// (cache hits).
fn counts(results: Vec<PointResult>) -> Evaluation {
    let mut designs: BTreeMap<&str, Option<bool>> = BTreeMap::new();
    for r in &results {
        if let Some(d) = r.design.as_deref() {
            let cached = designs.entry(d).or_insert(None);
            if r.area.is_some() {
                *cached = Some(cached.unwrap_or(true) && r.cached == Some(true));
            }
        }
    }
    let yosys_runs = designs.values().filter(|c| **c == Some(false)).count();
    let cache_hits = designs.values().filter(|c| **c == Some(true)).count();
    let designs = designs.len();
    Evaluation { results, designs, yosys_runs, cache_hits }
}

/// The result files ([`RESULTS`]) of `merged`: the CSV, the JSON and the
/// two charts.
pub fn result_files(plan: &Plan, merged: &Merged) -> Result<Vec<GeneratedFile>, SweepError> {
    let ev = &merged.evaluation;
    let name = &plan.summary.name;
    let s = &plan.summary;
    let json = json(plan, &merged.yosys, ev);
    Ok(vec![
        GeneratedFile::text(RESULTS[0], super::report::csv(&ev.results)),
        GeneratedFile::text(RESULTS[1], serde_json::to_string_pretty(&json)?),
        GeneratedFile::text(RESULTS[2], plot_area(name, &ev.results)?),
        GeneratedFile::text(RESULTS[3], plot_quality(name, &ev.results, plan.data.is_some(), s.labels, s.before)?),
    ])
}

/// Writes the result files of `merged` into `out`, replacing those of an
/// earlier merge of the plan.
pub fn write(out: &Path, plan: &Plan, merged: &Merged) -> Result<(), SweepError> {
    output::add_files(out, output::SWEEP, &result_files(plan, merged)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(design: &str, cached: Option<bool>, area: bool) -> PointResult {
        let mut p = PointResult::new(2, 2);
        p.design = Some(design.into());
        p.cached = cached;
        if area {
            p.area = Some(super::super::results::Area {
                luts: 1,
                ffs: 1,
                carry: 0,
                carry_cell: "CARRY8".into(),
                dsps: 0,
                bram36: 0.0,
                logic_levels: 1,
                shares: None,
            });
        }
        p
    }

    #[test]
    fn designs_are_counted_once_as_run_or_cached() {
        let ev = counts(vec![
            point("a", Some(false), true),
            point("a", Some(false), true),
            point("b", Some(true), true),
            point("c", None, false),
            PointResult::new(3, 3),
        ]);
        assert_eq!((ev.designs, ev.yosys_runs, ev.cache_hits), (3, 1, 1));
        assert_eq!(ev.results.len(), 5);
    }
}
