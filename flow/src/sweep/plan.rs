//! A sweep's plan, `OUT/plan.json`: the grid as numbered tasks, one point
//! (N, P) each, and everything a task needs to give the same result on
//! any machine that sees the same files: the model, weights and data by
//! absolute path and SHA-256 (a task refuses files that changed), the
//! options (scope, iterations, `--quantize`), and what the merge reports
//! (the model's name, part and clock, the values before training).
//!
//! Writing a plan ([`Plan::write`]) replaces the sweep's earlier files in
//! OUT (plan, job script, results, merged outputs) and reserves one result
//! file per task, `OUT/results/<index>.json`, in OUT's manifest, so that
//! tasks running at once write their results without touching it.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use fptgen_sim::weights::{self, Conversion};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::grid::Grid;
use super::run::Spec;
use super::sbatch::script;
use super::training::Baseline;
use super::SweepError;
use fptgen_generator::output;
use fptgen_generator::render::{GeneratedFile, SynthScope};
use fptgen_generator::VERSION;

/// The plan's file name in OUT.
pub const PLAN: &str = "plan.json";
/// The plan's `format`: what reads it checks this first.
pub const FORMAT: &str = "fptgen sweep plan 1";
/// The job-array script's file name in OUT.
pub const SBATCH: &str = "sweep.sbatch";
/// The directory of the per-task logs (Slurm writes them).
pub const LOGS: &str = "logs";

/// An input file: its absolute path and the SHA-256 of its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Absolute path.
    pub path: PathBuf,
    /// SHA-256 of the contents, in hexadecimal.
    pub sha256: String,
}

impl Input {
    /// `path` made absolute, with its hash.
    pub fn of(path: &Path) -> Result<Input, SweepError> {
        let path = std::fs::canonicalize(path).map_err(|err| SweepError::Io { path: path.to_path_buf(), err })?;
        let sha256 = sha256_file(&path)?;
        Ok(Input { path, sha256 })
    }

    /// An error unless the file still has its hash; `plan` names the plan.
    pub fn verify(&self, plan: &Path) -> Result<(), SweepError> {
        let found = sha256_file(&self.path)?;
        if found != self.sha256 {
            return Err(SweepError::Changed {
                path: self.path.clone(),
                plan: plan.to_path_buf(),
                expected: self.sha256.clone(),
                found,
            });
        }
        Ok(())
    }
}

/// SHA-256 of `path`'s bytes, in hexadecimal.
fn sha256_file(path: &Path) -> Result<String, SweepError> {
    let bytes = std::fs::read(path).map_err(|err| SweepError::Io { path: path.to_path_buf(), err })?;
    Ok(hex(&Sha256::digest(&bytes)))
}

/// Bytes in lower-case hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One task: the point it evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Its number, 0 to n - 1 (Slurm's `SLURM_ARRAY_TASK_ID`).
    pub index: usize,
    /// N.
    pub population: usize,
    /// P.
    pub blocks: usize,
}

/// What the merged outputs say about the model and the data, fixed when
/// the plan is made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// The network's name.
    pub name: String,
    /// The FPGA part.
    pub part: String,
    /// The clock period in ns.
    pub clock_period_ns: f64,
    /// M, samples in the training buffer.
    pub buffer: usize,
    /// Samples in the data, with data.
    pub samples: Option<usize>,
    /// True if the data has labels (accuracy is reported).
    pub labels: bool,
    /// The loss and accuracy before training, with data.
    pub before: Option<Baseline>,
}

/// `OUT/plan.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// [`FORMAT`].
    pub format: String,
    /// The fptgen version that made the plan.
    pub fptgen: String,
    /// The plan's identity: its result files and cache entries carry it.
    pub id: String,
    /// The model file.
    pub model: Input,
    /// The weights archive the model names.
    pub weights: Input,
    /// Weights are converted with their formats' rounding (`--quantize`).
    pub quantize: bool,
    /// The training data, if every point is trained.
    pub data: Option<Input>,
    /// Iterations to train each point.
    pub iterations: u64,
    /// What yosys estimates: `design` or `trainer`.
    pub scope: String,
    /// The populations N, in the order given.
    pub population: Vec<usize>,
    /// The block counts P, in the order given.
    pub blocks: Vec<usize>,
    /// At most this many tasks run at once on a cluster (`%K` of the job array).
    pub max_running: usize,
    /// The model, the data and the values before training, for the merge.
    pub summary: Summary,
    /// The tasks: the grid's points, by N then P.
    pub tasks: Vec<Task>,
}

/// A scope's name in the plan.
pub fn scope_name(scope: SynthScope) -> &'static str {
    match scope {
        SynthScope::Design => "design",
        SynthScope::Trainer => "trainer",
    }
}

/// The result file of task `index`, relative to OUT.
pub fn result_path(index: usize) -> PathBuf {
    Path::new("results").join(format!("{index}.json"))
}

impl Plan {
    /// The plan of `spec` (its data, if any, read from `spec.train`),
    /// converting weights if `quantize`, with at most `max_running` tasks
    /// at once on a cluster.
    pub fn new(spec: &Spec, quantize: bool, max_running: usize) -> Result<Plan, SweepError> {
        let model = &spec.model;
        let tasks = spec.grid.points().into_iter().enumerate().map(|(index, (population, blocks))| Task { index, population, blocks }).collect();
        let mut plan = Plan {
            format: FORMAT.to_string(),
            fptgen: VERSION.to_string(),
            id: String::new(),
            model: Input::of(&model.source)?,
            weights: Input::of(&model.weights_path)?,
            quantize,
            data: spec.train.as_ref().map(|t| Input::of(&t.path)).transpose()?,
            iterations: spec.iterations,
            scope: scope_name(spec.scope).to_string(),
            population: spec.grid.population().to_vec(),
            blocks: spec.grid.blocks().to_vec(),
            max_running,
            summary: Summary {
                name: model.name.clone(),
                part: model.part.clone(),
                clock_period_ns: model.clock_period_ns,
                buffer: spec.training.buffer,
                samples: spec.train.as_ref().map(|t| t.data.inputs.len()),
                labels: spec.labels(),
                before: spec.baseline()?,
            },
            tasks,
        };
        // Unique per plan: its contents, the time and the process.
        let mut h = Sha256::new();
        h.update(serde_json::to_vec(&plan)?);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        h.update(now.to_le_bytes());
        h.update(std::process::id().to_le_bytes());
        plan.id = hex(&h.finalize()[..8]);
        Ok(plan)
    }

    /// The grid.
    pub fn grid(&self) -> Result<Grid, SweepError> {
        Ok(Grid::new(self.population.clone(), self.blocks.clone())?)
    }

    /// The scope of the estimates.
    pub fn synth_scope(&self) -> SynthScope {
        if self.scope == "trainer" {
            SynthScope::Trainer
        } else {
            SynthScope::Design
        }
    }

    /// Task `index`, or an error naming the plan and its range.
    pub fn task(&self, index: usize, out: &Path) -> Result<Task, SweepError> {
        self.tasks.get(index).copied().ok_or(SweepError::Index { index, tasks: self.tasks.len(), plan: out.join(PLAN) })
    }

    /// The plan's files: `plan.json` and the job-array script for the
    /// fptgen executable `exe`, with the sweep in `out` (absolute).
    pub fn files(&self, out: &Path, exe: &Path) -> Result<Vec<GeneratedFile>, SweepError> {
        let mut sbatch = GeneratedFile::text(SBATCH, script(self, out, exe)?);
        sbatch.executable = true;
        Ok(vec![GeneratedFile::text(PLAN, serde_json::to_string_pretty(self)?), sbatch])
    }

    /// Writes the plan into `out` for the fptgen executable `exe` (see the
    /// module documentation); `out` must be new, empty, or fptgen's.
    pub fn write(&self, out: &Path, exe: &Path) -> Result<(), SweepError> {
        let reserved: Vec<PathBuf> = self.tasks.iter().map(|t| result_path(t.index)).collect();
        // The job script names OUT absolutely: check it is fptgen's first.
        output::check_dir(out, [Path::new(PLAN), Path::new(SBATCH)])?;
        let abs = if out.exists() { std::fs::canonicalize(out) } else { std::path::absolute(out) };
        let abs = abs.map_err(|err| SweepError::Io { path: out.to_path_buf(), err })?;
        output::write_dir_reserving(out, output::SWEEP, &self.files(&abs, exe)?, &reserved)?;
        let logs = out.join(LOGS);
        std::fs::create_dir_all(&logs).map_err(|err| SweepError::Io { path: logs, err })?;
        Ok(())
    }

    /// True if `other` is this plan but for its id: the same inputs,
    /// options and tasks.
    pub fn equivalent(&self, other: &Plan) -> bool {
        let mut a = self.clone();
        a.id.clone_from(&other.id);
        a == *other
    }

    /// Writes the plan into `out` as [`Plan::write`] does, unless `out`
    /// already holds an equivalent plan: that one is kept with its results
    /// (so planning the same sweep again loses nothing) and returned.
    pub fn write_or_keep(self, out: &Path, exe: &Path) -> Result<(Plan, bool), SweepError> {
        if let Ok(old) = Plan::read(out) {
            if old.equivalent(&self) {
                return Ok((old, false));
            }
        }
        self.write(out, exe)?;
        Ok((self, true))
    }

    /// How many of the tasks have a result file in `out`.
    pub fn results_present(&self, out: &Path) -> usize {
        self.tasks.iter().filter(|t| out.join(result_path(t.index)).is_file()).count()
    }

    /// Reads the plan in `out`: an error naming `out` if it has none that
    /// fptgen wrote, naming the file if it is unreadable or not a plan.
    pub fn read(out: &Path) -> Result<Plan, SweepError> {
        let path = out.join(PLAN);
        if !out.is_dir() || !path.is_file() || !output::owns(out, Path::new(PLAN))? {
            return Err(SweepError::NotAPlan(out.to_path_buf()));
        }
        let text = std::fs::read_to_string(&path).map_err(|err| SweepError::Io { path: path.clone(), err })?;
        let plan: Plan = serde_json::from_str(&text).map_err(|e| SweepError::BadPlan(path.clone(), e.to_string()))?;
        if plan.format != FORMAT {
            return Err(SweepError::BadPlan(path, format!("format {:?}, expected {FORMAT:?}", plan.format)));
        }
        let grid = plan.grid().map_err(|e| SweepError::BadPlan(path.clone(), e.to_string()))?;
        let want: Vec<(usize, usize)> = plan.tasks.iter().map(|t| (t.population, t.blocks)).collect();
        if grid.points() != want || plan.tasks.iter().enumerate().any(|(i, t)| t.index != i) {
            return Err(SweepError::BadPlan(path, "its tasks are not its grid's points in order".into()));
        }
        Ok(plan)
    }

    /// The sweep the plan describes, its inputs checked against their
    /// hashes (an error naming a file that changed) and loaded.
    pub fn spec(&self, out: &Path) -> Result<Spec, SweepError> {
        let at = out.join(PLAN);
        self.model.verify(&at)?;
        let model = fptgen_sim::model::load(&self.model.path)?;
        self.weights.verify(&at)?;
        let conv = if self.quantize { Conversion::Quantize } else { Conversion::Exact };
        let params = weights::load_from(&model, &self.weights.path, conv)?;
        let mut spec = Spec::new(model, params, self.grid()?, self.synth_scope(), Some(self.iterations))?;
        if let Some(d) = &self.data {
            d.verify(&at)?;
            spec.read_data(&d.path)?;
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_files_are_numbered_under_results() {
        assert_eq!(result_path(0), Path::new("results/0.json"));
        assert_eq!(result_path(12), Path::new("results/12.json"));
    }

    #[test]
    fn a_changed_input_is_named_with_both_hashes() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let f = tmp.path().join("model.yaml");
        std::fs::write(&f, "a").expect("write");
        let input = Input::of(&f).expect("input");
        assert!(input.path.is_absolute());
        assert_eq!(input.sha256, "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb", "SHA-256 of \"a\"");
        input.verify(Path::new("plan.json")).expect("unchanged");
        std::fs::write(&f, "b").expect("write");
        let e = input.verify(Path::new("OUT/plan.json")).expect_err("changed");
        let msg = e.to_string();
        assert!(msg.contains("model.yaml") && msg.contains("OUT/plan.json") && msg.contains("ca978112"), "{msg}");
    }

    #[test]
    fn a_plan_file_that_is_not_a_plan_is_refused_naming_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let out = tmp.path().join("out");
        for (text, words) in [
            ("{\"format\": \"fptgen sweep pl", &["out/plan.json", "not a valid sweep plan", "line 2"][..]),
            ("[]", &["out/plan.json", "not a valid sweep plan"][..]),
        ] {
            output::write_dir(&out, output::SWEEP, &[GeneratedFile::text(PLAN, text.into())]).expect("write");
            let e = Plan::read(&out).expect_err("not a plan");
            for w in words {
                assert!(e.to_string().contains(w), "{w:?} in {e}");
            }
        }
        let e = Plan::read(tmp.path()).expect_err("no plan");
        assert!(matches!(e, SweepError::NotAPlan(_)), "{e}");
    }
}
