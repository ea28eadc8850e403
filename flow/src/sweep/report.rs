//! A sweep's results as text: `sweep.csv`, `sweep.json` and the table the
//! command prints.

use super::evaluate::Evaluation;
use super::plan::Plan;
use super::results::PointResult;
use fptgen_generator::VERSION;

/// The CSV columns, in order.
pub const COLUMNS: [&str; 24] = [
    "population",
    "blocks",
    "status",
    "error",
    "design",
    "cached",
    "luts",
    "luts_pct",
    "ffs",
    "ffs_pct",
    "carry",
    "dsps",
    "dsps_pct",
    "bram36",
    "bram36_pct",
    "logic_levels",
    "groups",
    "blocks_built",
    "passes_per_image",
    "cycles_per_iteration",
    "iteration_us",
    "us_per_image",
    "loss",
    "accuracy",
];

/// A CSV field: quoted if it holds a comma, a quote or a line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The value as text, or nothing.
fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// `sweep.csv`: a header of [`COLUMNS`], then one row per point; a failed
/// point has the first line of its error and empty cells where nothing
/// was found.
pub fn csv(results: &[PointResult]) -> String {
    let mut s = COLUMNS.join(",") + "\n";
    for r in results {
        let a = r.area.as_ref();
        let sh = a.and_then(|a| a.shares);
        let t = r.time.as_ref();
        let q = r.training.as_ref();
        let row = [
            r.population.to_string(),
            r.blocks.to_string(),
            if r.error.is_some() { "failed" } else { "ok" }.to_string(),
            field(r.error_line().unwrap_or("")),
            opt(r.design.as_deref()),
            opt(r.cached),
            opt(a.map(|a| a.luts)),
            opt(sh.map(|s| s.luts)),
            opt(a.map(|a| a.ffs)),
            opt(sh.map(|s| s.ffs)),
            opt(a.map(|a| a.carry)),
            opt(a.map(|a| a.dsps)),
            opt(sh.map(|s| s.dsps)),
            opt(a.map(|a| a.bram36)),
            opt(sh.map(|s| s.bram36)),
            opt(a.map(|a| a.logic_levels)),
            opt(t.map(|t| t.groups)),
            opt(t.map(|t| t.blocks_built)),
            opt(t.map(|t| t.passes_per_image)),
            opt(t.map(|t| t.cycles_per_iteration)),
            opt(t.map(|t| t.iteration_us)),
            opt(t.map(|t| t.us_per_image)),
            opt(q.map(|q| q.loss)),
            opt(q.and_then(|q| q.accuracy)),
        ];
        s += &row.join(",");
        s.push('\n');
    }
    s
}

/// `us` microseconds, readably: in s, ms or us with 3 decimals.
pub fn duration(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.3} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.3} ms", us / 1e3)
    } else {
        format!("{us:.3} us")
    }
}

/// The results table the command prints, one line per point after a
/// header, each line ending in a newline: the loss column if `trained`,
/// the accuracy column if the data has `labels`.
pub fn table(results: &[PointResult], trained: bool, labels: bool) -> String {
    let mut head = vec!["N", "P", "LUTs", "share", "FFs", "DSP", "BRAM36", "G", "passes/image", "cycles/iter", "iteration"];
    if trained {
        head.push("loss");
    }
    if labels {
        head.push("accuracy");
    }
    head.extend(["design", "status"]);
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    for r in results {
        let a = r.area.as_ref();
        let t = r.time.as_ref();
        let mut row = vec![
            r.population.to_string(),
            r.blocks.to_string(),
            opt(a.map(|a| a.luts)),
            opt(a.and_then(|a| a.shares).map(|s| format!("{:.2}%", s.luts))),
            opt(a.map(|a| a.ffs)),
            opt(a.map(|a| a.dsps)),
            opt(a.map(|a| format!("{:.1}", a.bram36))),
            opt(t.map(|t| t.groups)),
            opt(t.map(|t| t.passes_per_image)),
            opt(t.map(|t| t.cycles_per_iteration)),
            opt(t.map(|t| duration(t.iteration_us))),
        ];
        let q = r.training.as_ref();
        if trained {
            row.push(opt(q.map(|q| q.loss)));
        }
        if labels {
            row.push(opt(q.and_then(|q| q.accuracy).map(|a| format!("{:.2}%", 100.0 * a))));
        }
        row.push(opt(r.design.as_deref()));
        row.push(match r.error_line() {
            Some(e) => format!("failed: {e}"),
            None => "ok".into(),
        });
        rows.push(row);
    }
    let cols = rows[0].len();
    let width: Vec<usize> = (0..cols).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let mut text = String::new();
    for row in &rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c == cols - 1 {
                line += cell;
            } else if c >= cols - 2 {
                line += &format!("{cell:<w$}  ", w = width[c]);
            } else {
                line += &format!("{cell:>w$}  ", w = width[c]);
            }
        }
        text += line.trim_end();
        text.push('\n');
    }
    text
}

/// `sweep.json`: the sweep's settings (from its `plan`), the yosys that
/// made the estimates, the counts of designs, yosys runs, cache hits and
/// failed points, the values before training, and every point.
pub fn json(plan: &Plan, yosys: &str, ev: &Evaluation) -> serde_json::Value {
    let s = &plan.summary;
    let trained = plan.data.is_some();
    serde_json::json!({
        "fptgen": VERSION,
        "model": plan.model.path.display().to_string(),
        "name": s.name,
        "part": s.part,
        "clock_period_ns": s.clock_period_ns,
        "scope": plan.scope,
        "yosys": yosys,
        "population": plan.population,
        "blocks": plan.blocks,
        "data": plan.data.as_ref().map(|d| d.path.display().to_string()),
        "samples": s.samples,
        "buffer": s.buffer,
        "iterations": trained.then_some(plan.iterations),
        "before": s.before.map(|b| serde_json::json!({ "loss": b.loss, "accuracy": b.accuracy })),
        "plan": plan.id,
        "designs": ev.designs,
        "yosys_runs": ev.yosys_runs,
        "cache_hits": ev.cache_hits,
        "failed": ev.failed(),
        "points": ev.results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::results::{Area, AreaShares, Quality, Time};

    /// N 2, P 4: an estimate with shares, a schedule and a training
    /// result; N 3, P 4: failed, with a comma and a quote on its first
    /// line.
    fn results() -> Vec<PointResult> {
        let mut ok = PointResult::new(2, 4);
        ok.design = Some("0123456789abcdef".into());
        ok.cached = Some(false);
        ok.area = Some(Area {
            luts: 1200,
            ffs: 800,
            carry: 30,
            carry_cell: "CARRY8".into(),
            dsps: 2,
            bram36: 1.5,
            logic_levels: 9,
            shares: Some(AreaShares { luts: 0.5, ffs: 0.25, carry8: 0.125, dsps: 1.75, bram36: 2.5 }),
        });
        ok.time = Some(Time {
            groups: 2,
            blocks_built: 4,
            passes_per_image: 4,
            cycles_per_iteration: 300,
            iteration_us: 1.5,
            us_per_image: 0.375,
        });
        ok.training = Some(Quality { iterations: 2, loss: 17, accuracy: Some(0.75) });
        let mut failed = PointResult::new(3, 4);
        failed.fail("configuration", "population is 3, \"odd\"\nsecond line".into());
        vec![ok, failed]
    }

    #[test]
    fn the_csv_has_a_header_and_a_row_per_point() {
        let want = "population,blocks,status,error,design,cached,luts,luts_pct,ffs,ffs_pct,carry,dsps,dsps_pct,\
bram36,bram36_pct,logic_levels,groups,blocks_built,passes_per_image,cycles_per_iteration,iteration_us,us_per_image,loss,accuracy
2,4,ok,,0123456789abcdef,false,1200,0.5,800,0.25,30,2,1.75,1.5,2.5,9,2,4,4,300,1.5,0.375,17,0.75
3,4,failed,\"configuration: population is 3, \"\"odd\"\"\",,,,,,,,,,,,,,,,,,,,
";
        assert_eq!(csv(&results()), want);
    }

    #[test]
    fn an_empty_sweep_is_the_header_alone() {
        assert_eq!(csv(&[]).lines().count(), 1);
        assert_eq!(csv(&[]).trim_end().split(',').count(), 24);
    }

    #[test]
    fn durations_pick_their_unit() {
        for (us, want) in [(0.5, "0.500 us"), (999.0, "999.000 us"), (1500.0, "1.500 ms"), (2_500_000.0, "2.500 s")] {
            assert_eq!(duration(us), want, "{us}");
        }
    }

    #[test]
    fn the_table_aligns_columns_and_shows_the_first_error_line() {
        let t = table(&results(), true, true);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(t.ends_with('\n'));
        let head: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(
            head,
            ["N", "P", "LUTs", "share", "FFs", "DSP", "BRAM36", "G", "passes/image", "cycles/iter", "iteration", "loss", "accuracy", "design", "status"]
        );
        assert!(lines[1].contains("1200") && lines[1].contains("0.50%") && lines[1].contains("1.500 us"), "{}", lines[1]);
        assert!(lines[1].contains("75.00%") && lines[1].ends_with("0123456789abcdef  ok"), "{}", lines[1]);
        assert!(lines[2].ends_with("failed: configuration: population is 3, \"odd\""), "{}", lines[2]);
        // Right-aligned numbers: "N" over "2" and "3".
        assert_eq!(lines[0].find('N'), lines[1].find('2'));
        let t = table(&results(), false, false);
        assert!(!t.contains("loss") && !t.contains("accuracy"));
    }
}
