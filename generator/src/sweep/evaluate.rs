//! Evaluating a sweep's grid in parallel: every point planned and
//! rendered, one yosys estimate per distinct design (from the cache when
//! an earlier sweep left it), and, with data, every point trained in the
//! simulator; yosys runs first, as they take longest. A failing point is
//! recorded in its result and the others go on.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use rayon::ThreadPool;

use super::cache::Cache;
use super::designs::Designs;
use super::point::prepare;
use super::results::{Area, PointResult, Quality};
use super::run::Spec;
use super::training::train_point;
use crate::part;
use crate::render::GenInfo;
use crate::synth;

/// What a sweep found.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Every point, in the grid's order.
    pub results: Vec<PointResult>,
    /// Distinct designs among the points that could be planned.
    pub designs: usize,
    /// Estimates made by running yosys.
    pub yosys_runs: usize,
    /// Estimates read from the cache.
    pub cache_hits: usize,
}

impl Evaluation {
    /// How many points failed.
    pub fn failed(&self) -> usize {
        self.results.iter().filter(|r| r.error.is_some()).count()
    }
}

/// A unit of work: the estimate of a design, or the training of a point.
enum Task {
    Synth(usize),
    Train(usize),
}

/// A task's result.
enum Outcome {
    Synth(usize, Result<(Area, bool), String>),
    Train(usize, Result<Quality, String>),
}

/// An error with its causes, as `error: cause: cause`.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s += &format!(": {c}");
        cause = c.source();
    }
    s
}

/// Evaluates every point of `spec` on `pool`, estimates through `cache`
/// (yosys version `yosys`, reports made with `gen`); calls `on_point`
/// once per point when it is done.
pub fn evaluate(
    spec: &Spec,
    cache: &Cache<'_>,
    yosys: &str,
    gen: &GenInfo,
    pool: &ThreadPool,
    on_point: &(dyn Fn() + Sync),
) -> Evaluation {
    let model = &spec.model;
    let points = spec.grid.points();
    let mut results: Vec<PointResult> = points.iter().map(|&(n, p)| PointResult::new(n, p)).collect();

    // Plan and render every point; group the points by design.
    let prepared: Vec<_> = pool.install(|| {
        points.par_iter().map(|&(n, p)| prepare(model, &spec.params, n, p, spec.scope, yosys, gen)).collect()
    });
    let mut designs = Designs::new();
    let mut models = Vec::new();
    // Tasks outstanding per point; a point is done when it reaches 0.
    let pending: Vec<AtomicUsize> = points.iter().map(|_| AtomicUsize::new(0)).collect();
    for (i, pr) in prepared.into_iter().enumerate() {
        match pr {
            Err(e) => {
                results[i].fail("configuration", e.to_string());
                models.push(None);
                on_point();
            }
            Ok(pr) => {
                let d = designs.add(i, pr.hash, pr.files);
                results[i].design = Some(designs.list()[d].name().to_string());
                results[i].time = Some(pr.time);
                pending[i].store(1 + usize::from(spec.train.is_some()), Ordering::SeqCst);
                models.push(Some(pr.model));
            }
        }
    }
    // yosys runs first: they take longest.
    let trainings = (0..points.len()).filter(|&i| spec.train.is_some() && models[i].is_some()).map(Task::Train);
    let tasks: Vec<Task> = (0..designs.len()).map(Task::Synth).chain(trainings).collect();
    let done = |i: usize| {
        if pending[i].fetch_sub(1, Ordering::SeqCst) == 1 {
            on_point();
        }
    };
    let outcomes: Vec<Outcome> = pool.install(|| {
        tasks
            .into_par_iter()
            .with_max_len(1)
            .map(|t| match t {
                Task::Synth(d) => {
                    let design = &designs.list()[d];
                    let yosys_run = |dir: &std::path::Path| synth::run(dir, &model.name, part::lookup(&model.part), spec.scope, model.clock_period_ns);
                    let r = cache.estimate(design, gen, &model.part, yosys_run).map_err(|e| chain(&e));
                    design.points.iter().for_each(|&i| done(i));
                    Outcome::Synth(d, r)
                }
                Task::Train(i) => {
                    let (m, t) = (models[i].as_ref().expect("prepared"), spec.train.as_ref().expect("data"));
                    let r = train_point(m, &spec.params, t, spec.iterations).map_err(|e| chain(&e));
                    done(i);
                    Outcome::Train(i, r)
                }
            })
            .collect()
    });
    let (mut yosys_runs, mut cache_hits) = (0usize, 0usize);
    for o in outcomes {
        match o {
            Outcome::Synth(d, r) => {
                match &r {
                    Ok((_, true)) => cache_hits += 1,
                    Ok((_, false)) => yosys_runs += 1,
                    Err(_) => {}
                }
                for &i in &designs.list()[d].points {
                    match &r {
                        Ok((area, cached)) => {
                            results[i].area = Some(area.clone());
                            results[i].cached = Some(*cached);
                        }
                        Err(e) => results[i].fail("synth", e.clone()),
                    }
                }
            }
            Outcome::Train(i, r) => match r {
                Ok(q) => results[i].training = Some(q),
                Err(e) => results[i].fail("training", e),
            },
        }
    }
    Evaluation { results, designs: designs.len(), yosys_runs, cache_hits }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("inner")]
    struct Inner;

    #[test]
    fn an_error_chain_joins_its_causes() {
        assert_eq!(chain(&Outer(Inner)), "outer: inner");
        assert_eq!(chain(&Inner), "inner");
    }
}
