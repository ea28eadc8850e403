//! `fptgen sweep`: area, training time and accuracy (or loss) of the ES
//! trainer over a grid of populations N and block counts P (see
//! [`fptgen_flow::sweep`]): parses the options, prints the progress and
//! the table.

use std::path::PathBuf;

use anyhow::{anyhow, Context};
use fptgen_generator::render::SynthScope;
use fptgen_flow::sweep::grid::list;
use fptgen_flow::sweep::plan::{PLAN, SBATCH};
use fptgen_flow::sweep::{plan_here, run_all, Grid, Plan, Spec};
use indicatif::{ProgressBar, ProgressStyle};

/// `fptgen sweep`'s options.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Model file (YAML) with a `training:` section.
    #[arg(value_name = "MODEL")]
    pub model: PathBuf,
    /// Populations N to sweep, comma-separated (e.g. 10,50,100).
    #[arg(long, value_name = "N,...", value_delimiter = ',', required = true, value_parser = positive(), allow_hyphen_values = true)]
    pub population: Vec<usize>,
    /// Block counts P to sweep, comma-separated (e.g. 1,10,100,1000).
    #[arg(long, value_name = "P,...", value_delimiter = ',', required = true, value_parser = positive(), allow_hyphen_values = true)]
    pub blocks: Vec<usize>,
    /// Output directory: plan.json, sweep.sbatch, results/ (one file per
    /// point), sweep.csv, sweep.json, area_time.svg, quality_time.svg, and
    /// the yosys cache in cache/.
    #[arg(long, short, value_name = "OUT")]
    pub output: PathBuf,
    /// Training data (.npz, as for `train-es`): also train every point and
    /// report its accuracy (with `labels`) or buffer loss.
    #[arg(long, value_name = "FILE.npz")]
    pub data: Option<PathBuf>,
    /// Iterations to train each point instead of the model file's
    /// `iterations`.
    #[arg(long, value_name = "K", requires = "data", value_parser = crate::args::count::<u64>(1, u64::from(u32::MAX)), allow_negative_numbers = true)]
    pub iterations: Option<u64>,
    /// Points to work on at once (yosys runs and trainings; default: the
    /// number of cores).
    #[arg(long, short, value_name = "J", value_parser = crate::args::count::<usize>(1, 1024), allow_negative_numbers = true, conflicts_with = "plan_only")]
    pub jobs: Option<usize>,
    /// Only write the plan: OUT/plan.json (the grid as numbered tasks, with
    /// the model, weights and data by path and SHA-256) and OUT/sweep.sbatch
    /// (a Slurm job array, one point per task). Then run the tasks with
    /// `sbatch OUT/sweep.sbatch` or `fptgen sweep-run OUT --index I`, and
    /// gather them with `fptgen sweep-merge OUT`.
    #[arg(long)]
    pub plan_only: bool,
    /// At most K tasks of the job array run at once (`--array=0-(n-1)%K`).
    #[arg(long, value_name = "K", default_value_t = 16, value_parser = crate::args::count::<usize>(1, 100_000), allow_negative_numbers = true)]
    pub max_running: usize,
    /// Estimate the ES trainer alone, the inference pipeline a black box
    /// (as `synth --trainer-only`).
    #[arg(long)]
    pub trainer_only: bool,
    /// Convert weights that their format cannot represent exactly (see `check --quantize`).
    #[arg(long)]
    pub quantize: bool,
}

/// A parser of counts of N or P.
fn positive() -> crate::args::Count<usize> {
    crate::args::count(1, crate::args::MAX_DIM)
}

/// Runs `fptgen sweep`: the plan into OUT, then (unless --plan-only)
/// every task here and the merge.
pub fn run(a: Args) -> anyhow::Result<()> {
    let grid = Grid::new(a.population, a.blocks)?;
    if let Some(k) = a.iterations {
        super::check_iterations(k)?;
    }
    let (model, params) = super::load(&a.model, a.quantize)?;
    if let Some(t) = model.training.as_ref().filter(|t| t.rule != fptgen_sim::model::Rule::Es) {
        anyhow::bail!(
            "{}: fptgen sweep varies ES's population N and blocks P; rule {} has neither (one forward pass and one update per sample). Its design's area and time: fptgen synth --trainer-only and report.md",
            model.source.display(),
            t.rule.name()
        );
    }
    fptgen_generator::design::supported(&model)?;
    let scope = if a.trainer_only { SynthScope::Trainer } else { SynthScope::Design };
    let mut spec = Spec::new(model, params, grid, scope, a.iterations)?;
    if let Some(path) = &a.data {
        spec.read_data(path)?;
    }
    let out = &a.output;
    let exe = std::env::current_exe().context("finding the fptgen executable (the job script runs it)")?;
    if a.plan_only {
        let (plan, written) = Plan::new(&spec, a.quantize, a.max_running)?.write_or_keep(out, &exe)?;
        let n = plan.tasks.len();
        if !written {
            println!(
                "{} already holds this plan ({}, {n} tasks) with {} results: kept as it is",
                out.display(),
                plan.id,
                plan.results_present(out)
            );
            println!("run the tasks without a result (fptgen sweep-merge {} lists them), then merge", out.display());
            return Ok(());
        }
        println!(
            "planned {} on {}: {n} points (N {} x P {}) as tasks 0 to {}",
            spec.model.name,
            spec.model.part,
            list(spec.grid.population()),
            list(spec.grid.blocks()),
            n - 1
        );
        println!("wrote {}: {PLAN}, {SBATCH}", out.display());
        println!("run one task: fptgen sweep-run {} --index I; on a Slurm cluster: sbatch {}", out.display(), out.join(SBATCH).display());
        println!("then: fptgen sweep-merge {}", out.display());
        return Ok(());
    }
    let runner = plan_here(&spec, a.quantize, a.max_running, out, &exe)?;
    let spec = runner.spec();
    let points = spec.grid.points().len();
    let what = if a.trainer_only { "the ES trainer alone" } else { "the whole design" };
    println!(
        "sweep {} on {}: {points} points (N {} x P {}), yosys estimates of {what}{}",
        spec.model.name,
        spec.model.part,
        list(spec.grid.population()),
        list(spec.grid.blocks()),
        match &spec.train {
            Some(t) => format!(
                ", {} iterations on the first {} of {} samples of {}",
                spec.iterations,
                spec.training.buffer,
                t.data.inputs.len(),
                t.path.display()
            ),
            None => String::new(),
        }
    );
    if let Some(b) = runner.plan().summary.before {
        let acc_text = b.accuracy.map(|a| format!(", accuracy {:.2}%", 100.0 * a)).unwrap_or_default();
        println!("before training: loss {}{acc_text}", b.loss);
    }

    let bar = ProgressBar::new(points as u64);
    bar.set_style(
        ProgressStyle::with_template("{wide_bar} {pos}/{len} points, {elapsed} elapsed, ETA {eta}")
            .map_err(|e| anyhow!("progress bar template: {e}"))?,
    );
    let ran = run_all(&runner, a.jobs, &|| bar.inc(1));
    bar.finish_and_clear();
    ran?;
    super::sweep_merge::merge(out)
}
