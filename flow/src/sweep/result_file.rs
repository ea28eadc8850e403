//! A task's result file, `OUT/results/<index>.json`: the point's result,
//! marked with the plan and the task it answers. Written whole under a
//! temporary name and renamed into place; its bytes depend only on the
//! plan and the index, so a task run twice writes the same file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::plan::{result_path, Plan, Task};
use super::results::PointResult;
use super::SweepError;
use fptgen_generator::output;

/// A result file's `format`.
pub const FORMAT: &str = "fptgen sweep result 1";

/// `OUT/results/<index>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultFile {
    /// [`FORMAT`].
    pub format: String,
    /// The id of the plan whose task this is.
    pub plan: String,
    /// The task's index.
    pub index: usize,
    /// The version line of the yosys that estimated the point.
    pub yosys: String,
    /// The point's result.
    pub point: PointResult,
}

impl ResultFile {
    /// The result of `task` of `plan`, estimated by `yosys`.
    pub fn new(plan: &Plan, task: Task, yosys: &str, point: PointResult) -> ResultFile {
        ResultFile { format: FORMAT.to_string(), plan: plan.id.clone(), index: task.index, yosys: yosys.to_string(), point }
    }

    /// Writes it into `out` (atomically, see the module documentation);
    /// returns its path.
    pub fn write(&self, out: &Path) -> Result<PathBuf, SweepError> {
        let rel = result_path(self.index);
        let text = serde_json::to_string_pretty(self)? + "\n";
        output::replace_reserved(out, &rel, text.as_bytes())?;
        Ok(out.join(rel))
    }

    /// The result of `task` of `plan` in `out`: `None` if it has none yet,
    /// an error naming the file if it is unreadable, truncated, not a
    /// result, or another plan's or task's.
    pub fn read(out: &Path, plan: &Plan, task: Task) -> Result<Option<ResultFile>, SweepError> {
        let path = out.join(result_path(task.index));
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(SweepError::Io { path, err }),
        };
        let bad = |msg: String| SweepError::BadResult { path: path.clone(), msg, index: task.index };
        let r: ResultFile = serde_json::from_str(&text).map_err(|e| bad(format!("not a complete result ({e})")))?;
        if r.format != FORMAT {
            return Err(bad(format!("format {:?}, expected {FORMAT:?}", r.format)));
        }
        if r.plan != plan.id {
            return Err(bad(format!("a result of plan {}, not of this plan ({})", r.plan, plan.id)));
        }
        if (r.index, r.point.population, r.point.blocks) != (task.index, task.population, task.blocks) {
            return Err(bad(format!(
                "the result of task {} (N {}, P {}), not of task {} (N {}, P {})",
                r.index, r.point.population, r.point.blocks, task.index, task.population, task.blocks
            )));
        }
        Ok(Some(r))
    }
}
