//! Running a plan's tasks: [`Runner`] opens the plan in OUT (its inputs
//! checked and loaded, yosys found) and evaluates one point per task: the
//! point planned and rendered, its yosys estimate (from OUT/cache, or by
//! running yosys while holding the design's lock, so that tasks sharing a
//! design run yosys once), and with data its training in the simulator. A
//! point that fails is a result too: its error is recorded in it.

use std::path::{Path, PathBuf};

use super::cache::Cache;
use super::designs::Design;
use super::evaluate::chain;
use super::plan::{Plan, Task};
use super::point::prepare;
use super::result_file::ResultFile;
use super::results::PointResult;
use super::run::Spec;
use super::training::train_point;
use super::SweepError;
use fptgen_generator::design::gen_info;
use fptgen_generator::part;
use fptgen_generator::render::GenInfo;
use crate::synth;

/// A plan opened to run its tasks.
#[derive(Debug)]
pub struct Runner {
    out: PathBuf,
    plan: Plan,
    spec: Spec,
    yosys: String,
    gen: GenInfo,
}

impl Runner {
    /// Opens the plan in `out`: reads it, checks that its inputs have not
    /// changed, loads them and finds yosys.
    pub fn open(out: &Path) -> Result<Runner, SweepError> {
        let plan = Plan::read(out)?;
        let spec = plan.spec(out)?;
        let yosys = synth::yosys_version()?;
        let gen = gen_info(&spec.model);
        Ok(Runner { out: out.to_path_buf(), plan, spec, yosys, gen })
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// What is swept.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// yosys's version line.
    pub fn yosys(&self) -> &str {
        &self.yosys
    }

    /// The estimate cache, `OUT/cache/`, of this plan.
    pub fn cache(&self) -> Cache<'_> {
        Cache::new(&self.out, self.spec.scope, &self.yosys).for_plan(&self.plan.id)
    }

    /// Task `index`, or an error naming the plan and its range.
    pub fn task(&self, index: usize) -> Result<Task, SweepError> {
        self.plan.task(index, &self.out)
    }

    /// The design hash of task `index`'s point, if it can be planned:
    /// tasks with equal hashes share a yosys estimate.
    pub fn design_of(&self, index: usize) -> Option<String> {
        let t = self.task(index).ok()?;
        let s = &self.spec;
        prepare(&s.model, &s.params, t.population, t.blocks, s.scope, &self.yosys, &self.gen).ok().map(|p| p.hash)
    }

    /// Evaluates task `index`'s point. An error only if there is no such
    /// task or the design's lock cannot be taken; the point's own failures
    /// are in the result.
    pub fn evaluate(&self, index: usize) -> Result<ResultFile, SweepError> {
        let task = self.task(index)?;
        let s = &self.spec;
        let model = &s.model;
        let mut r = PointResult::new(task.population, task.blocks);
        match prepare(model, &s.params, task.population, task.blocks, s.scope, &self.yosys, &self.gen) {
            Err(e) => r.fail("configuration", e.to_string()),
            Ok(pr) => {
                let cache = self.cache();
                let design = Design { hash: pr.hash, files: pr.files, points: vec![index] };
                r.design = Some(design.name().to_string());
                r.time = Some(pr.time);
                let estimate = {
                    let _lock = cache.lock(&design.hash)?;
                    let yosys_run = |dir: &Path| synth::run(dir, &model.name, part::lookup(&model.part), s.scope, model.clock_period_ns);
                    cache.estimate(&design, &self.gen, &model.part, yosys_run)
                };
                match estimate {
                    Ok((area, cached)) => {
                        r.area = Some(area);
                        r.cached = Some(cached);
                    }
                    Err(e) => r.fail("synth", chain(&e)),
                }
                if let Some(t) = &s.train {
                    match train_point(&pr.model, &s.params, t, s.iterations) {
                        Ok(q) => r.training = Some(q),
                        Err(e) => r.fail("training", chain(&e)),
                    }
                }
            }
        }
        Ok(ResultFile::new(&self.plan, task, &self.yosys, r))
    }

    /// Evaluates task `index` and writes its result file; returns it and
    /// the file's path.
    pub fn run(&self, index: usize) -> Result<(ResultFile, PathBuf), SweepError> {
        let r = self.evaluate(index)?;
        let path = r.write(&self.out)?;
        Ok((r, path))
    }
}
