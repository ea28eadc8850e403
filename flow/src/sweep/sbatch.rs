//! `OUT/sweep.sbatch`: the plan's tasks as a Slurm job array, one point
//! per task (`--array=0-(n-1)%K`), each with its own log, that a user
//! submits as is (`sbatch OUT/sweep.sbatch`). Rendered from
//! `templates/sweep.sbatch`.

use std::path::Path;

use askama::Template;

use super::grid::list;
use super::plan::Plan;
use super::SweepError;
use fptgen_generator::VERSION;

#[derive(Template)]
#[template(path = "sweep.sbatch")]
struct SbatchTemplate<'a> {
    version: &'static str,
    plan: &'a Plan,
    population: String,
    blocks: String,
    out: &'a str,
    exe: &'a str,
}

/// Characters a path in the script may not hold: they would need quoting
/// in an `#SBATCH` line (white space, quotes, backslashes), or Slurm or
/// the shell would expand them (`%`, `$`, backquotes).
const UNSAFE: [char; 6] = ['\'', '"', '\\', '%', '$', '`'];

/// `path` as text for the script, or an error naming it if it has a
/// character the script cannot hold.
fn safe(path: &Path) -> Result<&str, SweepError> {
    match path.to_str() {
        Some(s) if !s.chars().any(|c| c.is_whitespace() || c.is_control() || UNSAFE.contains(&c)) => Ok(s),
        _ => Err(SweepError::ScriptPath(path.to_path_buf())),
    }
}

/// The job-array script of `plan`, whose tasks run the fptgen executable
/// `exe` on the sweep in `out` (both absolute paths).
pub fn script(plan: &Plan, out: &Path, exe: &Path) -> Result<String, SweepError> {
    let t = SbatchTemplate {
        version: VERSION,
        plan,
        population: list(&plan.population),
        blocks: list(&plan.blocks),
        out: safe(out)?,
        exe: safe(exe)?,
    };
    Ok(t.render()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_the_script_cannot_hold_are_refused() {
        for ok in ["/scratch/me/sweep-1", "/a/b_c.d/e+f"] {
            assert_eq!(safe(Path::new(ok)).expect("safe"), ok);
        }
        for bad in ["/a b", "/a%A", "/a$HOME", "/a'b", "/a\"b", "/a\\b", "/a`b`", "/a\tb"] {
            let e = safe(Path::new(bad)).expect_err(bad);
            assert!(e.to_string().contains(bad), "{e}");
        }
    }
}
