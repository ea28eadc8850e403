//! `fptgen sweep`: area, training time and accuracy (or loss) of the ES
//! trainer over a grid of populations N and block counts P.
//!
//! Each point (N, P) is the model with its `training:` section's
//! `population` and `blocks` replaced, as `fptgen synth --population N
//! --blocks P` does. Its area is a yosys estimate of its generated design;
//! points whose design files (`rtl/`, `mem/`, `synth/`, all yosys reads)
//! are identical share one estimate, and every estimate is kept under
//! `OUT/cache/<design>/`, keyed by a SHA-256 of those files, the scope and
//! the fptgen and yosys versions, so a later sweep into the same OUT reuses
//! it. Its training time is the generator's exact schedule; its accuracy
//! or loss comes from the simulator's ES trainer, bit-exact with the
//! hardware.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{anyhow, bail, Context};
use fptgen_generator::plan::plan;
use fptgen_generator::render::{render, GenInfo, GeneratedFile, SynthScope};
use fptgen_generator::{output, part, synth, VERSION};
use fptgen_sim::model::Model;
use fptgen_sim::network::Network;
use fptgen_sim::train::{naive_loss, Buffer, EvalMode, Trainer};
use fptgen_sim::weights::Params;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::train_es::{self, Data};

/// The files a sweep writes into OUT (besides `cache/`): always all four,
/// so that a later sweep into the same OUT replaces every one of them.
pub const RESULTS: [&str; 4] = ["sweep.csv", "sweep.json", "area_time.svg", "quality_time.svg"];

/// The design directories yosys reads from: a point's design is its files
/// under these.
const YOSYS_READS: [&str; 3] = ["rtl", "mem", "synth"];

/// Hexadecimal digits of the design hash that name a cache directory.
const SHORT: usize = 16;

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
    /// Output directory: sweep.csv, sweep.json, area_time.svg,
    /// quality_time.svg, and the yosys cache in cache/.
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
    #[arg(long, short, value_name = "J", value_parser = crate::args::count::<usize>(1, 1024), allow_negative_numbers = true)]
    pub jobs: Option<usize>,
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

/// A yosys estimate, as the sweep reports it (and caches it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Area {
    /// LUTs, including LUTs used as memory.
    pub luts: u64,
    /// Flip-flops.
    pub ffs: u64,
    /// Carry chains (`carry_cell` primitives).
    pub carry: u64,
    /// CARRY4 or CARRY8.
    pub carry_cell: String,
    /// DSP48E2 slices.
    pub dsps: u64,
    /// Block RAM in 36 Kb units.
    pub bram36: f64,
    /// Cells on the longest combinational path.
    pub logic_levels: u64,
    /// Shares of the part in percent, if fptgen knows its capacity.
    pub shares: Option<AreaShares>,
}

/// Shares of the part's capacity, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AreaShares {
    /// LUTs.
    pub luts: f64,
    /// Flip-flops.
    pub ffs: f64,
    /// Carry chains in CARRY8 units.
    pub carry8: f64,
    /// DSP slices.
    pub dsps: f64,
    /// Block RAM.
    pub bram36: f64,
}

impl Area {
    fn of(r: &synth::SynthReport) -> Area {
        let t = &r.total;
        Area {
            luts: t.luts + t.lutram,
            ffs: t.ffs,
            carry: t.carry,
            carry_cell: r.carry_cell.clone(),
            dsps: t.dsps,
            bram36: t.bram36(),
            logic_levels: r.logic_levels,
            shares: r.shares.map(|s| AreaShares {
                luts: s.luts,
                ffs: s.ffs,
                carry8: s.carry8,
                dsps: s.dsps,
                bram36: s.bram36,
            }),
        }
    }
}

/// `OUT/cache/<design>/area.json`: what a cached estimate is of.
#[derive(Debug, Serialize, Deserialize)]
struct CacheRecord {
    /// The full design hash.
    hash: String,
    /// yosys's version line.
    yosys: String,
    /// The synthesis script (`synth/synth.ys` or `synth/trainer.ys`).
    script: String,
    /// The estimate.
    area: Area,
}

/// A point's training time, from the generator's schedule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Time {
    /// G, groups per iteration.
    pub groups: u64,
    /// Blocks the design has: min(P, T).
    pub blocks_built: usize,
    /// Forward passes per iteration per buffered image: G * N (G * (N + 1)
    /// with baseline fitness).
    pub passes_per_image: u64,
    /// Clock cycles of one iteration, every overhead included.
    pub cycles_per_iteration: u64,
    /// One iteration in microseconds at the model's clock.
    pub iteration_us: f64,
    /// One iteration per buffered image (`iteration_us / M`).
    pub us_per_image: f64,
}

/// A point's training result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quality {
    /// Iterations trained.
    pub iterations: u64,
    /// Buffer loss after them.
    pub loss: u32,
    /// Accuracy on all samples after them (0 to 1), with labels.
    pub accuracy: Option<f64>,
}

/// One point of the sweep, as sweep.json lists it.
#[derive(Debug, Clone, Serialize)]
pub struct PointResult {
    /// N.
    pub population: usize,
    /// P.
    pub blocks: usize,
    /// The design's cache name (leading digits of its hash).
    pub design: Option<String>,
    /// True if the estimate came from OUT/cache (an earlier sweep).
    pub cached: Option<bool>,
    /// The yosys estimate.
    pub area: Option<Area>,
    /// The training schedule.
    pub time: Option<Time>,
    /// The training result, with --data.
    pub training: Option<Quality>,
    /// What failed, if anything.
    pub error: Option<String>,
}

impl PointResult {
    fn fail(&mut self, what: &str, e: String) {
        let msg = format!("{what}: {e}");
        self.error = Some(match self.error.take() {
            Some(prev) => format!("{prev}\n{msg}"),
            None => msg,
        });
    }

    /// The first line of the error, for the table and the CSV.
    fn error_line(&self) -> Option<&str> {
        self.error.as_deref().map(|e| e.lines().next().unwrap_or(""))
    }
}

/// What one point needs after planning and rendering.
struct Prepared {
    model: Model,
    time: Time,
    hash: String,
    files: Vec<GeneratedFile>,
}

/// One distinct design: the points that share it, and its files.
struct Design {
    hash: String,
    files: Vec<GeneratedFile>,
    points: Vec<usize>,
}

/// The training data and buffer.
struct TrainInput {
    path: PathBuf,
    data: Data,
    buffer: Buffer,
}

enum Task {
    Synth(usize),
    Train(usize),
}

enum Outcome {
    Synth(usize, Result<(Area, bool), String>),
    Train(usize, Result<Quality, String>),
}

/// Runs `fptgen sweep`.
pub fn run(a: Args) -> anyhow::Result<()> {
    distinct(&a.population, "--population")?;
    distinct(&a.blocks, "--blocks")?;
    if let Some(k) = a.iterations {
        train_es::check_iterations(k)?;
    }
    let (model, params) = super::load(&a.model, a.quantize)?;
    super::generate::hardware_supported(&model)?;
    let training = train_es::training_section(&model)?;
    let scope = if a.trainer_only { SynthScope::Trainer } else { SynthScope::Design };
    let k = a.iterations.unwrap_or(training.iterations);
    let train = match &a.data {
        None => None,
        Some(path) => {
            let data = train_es::read_data(&model, path)?;
            let buffer = train_es::buffer(&model, training.buffer, &data, path)?;
            Some(TrainInput { path: path.clone(), data, buffer })
        }
    };
    let out = &a.output;
    // Refuse a foreign OUT before any work; then create it (with its
    // manifest) so that the cache can go inside.
    let manifest = output::check_dir(out, RESULTS.iter().map(Path::new))?;
    let yosys = synth::yosys_version()?;
    if manifest.is_none() {
        output::add_files(out, output::SWEEP, &[])?;
    }
    let jobs = a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().context("starting the worker threads")?;

    let points: Vec<(usize, usize)> =
        a.population.iter().flat_map(|&n| a.blocks.iter().map(move |&p| (n, p))).collect();
    let what = if a.trainer_only { "the ES trainer alone" } else { "the whole design" };
    println!(
        "sweep {} on {}: {} points (N {} x P {}), yosys estimates of {what}{}",
        model.name,
        model.part,
        points.len(),
        list(&a.population),
        list(&a.blocks),
        match &train {
            Some(t) => format!(
                ", {k} iterations on the first {} of {} samples of {}",
                training.buffer,
                t.data.inputs.len(),
                t.path.display()
            ),
            None => String::new(),
        }
    );
    let before = match &train {
        Some(t) => {
            let loss = naive_loss(&model, &params, &t.buffer);
            let acc = train_es::accuracy(&Network::new(model.clone(), params.clone())?, &t.data)?;
            let acc_text = acc.map(|a| format!(", accuracy {:.2}%", 100.0 * train_es::ratio(a))).unwrap_or_default();
            println!("before training: loss {loss}{acc_text}");
            Some((loss, acc.map(train_es::ratio)))
        }
        None => None,
    };

    let bar = ProgressBar::new(points.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{wide_bar} {pos}/{len} points, {elapsed} elapsed, ETA {eta}")
            .map_err(|e| anyhow!("progress bar template: {e}"))?,
    );
    let gen = GenInfo { version: VERSION, source: model.source.display().to_string() };
    let mut results: Vec<PointResult> = points
        .iter()
        .map(|&(n, p)| PointResult {
            population: n,
            blocks: p,
            design: None,
            cached: None,
            area: None,
            time: None,
            training: None,
            error: None,
        })
        .collect();

    // Plan and render every point; group the points by design.
    let prepared: Vec<Result<Prepared, String>> = pool.install(|| {
        points.par_iter().map(|&(n, p)| prepare(&model, &params, n, p, scope, &yosys, &gen)).collect()
    });
    let mut designs: Vec<Design> = Vec::new();
    let mut by_hash: BTreeMap<String, usize> = BTreeMap::new();
    let mut models: Vec<Option<Model>> = Vec::new();
    // Tasks outstanding per point; a point is done when it reaches 0.
    let pending: Vec<AtomicUsize> = points.iter().map(|_| AtomicUsize::new(0)).collect();
    for (i, pr) in prepared.into_iter().enumerate() {
        match pr {
            Err(e) => {
                results[i].fail("configuration", e);
                models.push(None);
                bar.inc(1);
            }
            Ok(pr) => {
                results[i].design = Some(pr.hash[..SHORT].to_string());
                results[i].time = Some(pr.time);
                let d = *by_hash.entry(pr.hash.clone()).or_insert_with(|| {
                    designs.push(Design { hash: pr.hash, files: pr.files, points: Vec::new() });
                    designs.len() - 1
                });
                designs[d].points.push(i);
                pending[i].store(1 + usize::from(train.is_some()), Ordering::SeqCst);
                models.push(Some(pr.model));
            }
        }
    }
    // yosys runs first: they take longest.
    let trainings = (0..points.len()).filter(|&i| train.is_some() && models[i].is_some()).map(Task::Train);
    let tasks: Vec<Task> = (0..designs.len()).map(Task::Synth).chain(trainings).collect();
    let done = |i: usize| {
        if pending[i].fetch_sub(1, Ordering::SeqCst) == 1 {
            bar.inc(1);
        }
    };
    let outcomes: Vec<Outcome> = pool.install(|| {
        tasks
            .into_par_iter()
            .with_max_len(1)
            .map(|t| match t {
                Task::Synth(d) => {
                    let r = estimate(out, &designs[d], scope, &yosys, &gen, &model.name, &model.part)
                        .map_err(|e| format!("{e:#}"));
                    designs[d].points.iter().for_each(|&i| done(i));
                    Outcome::Synth(d, r)
                }
                Task::Train(i) => {
                    let (m, t) = (models[i].as_ref().expect("prepared"), train.as_ref().expect("data"));
                    let r = train_point(m, &params, t, k).map_err(|e| format!("{e:#}"));
                    done(i);
                    Outcome::Train(i, r)
                }
            })
            .collect()
    });
    bar.finish_and_clear();
    let (mut ran, mut hits) = (0usize, 0usize);
    for o in outcomes {
        match o {
            Outcome::Synth(d, r) => {
                if let Ok((_, cached)) = &r {
                    if *cached {
                        hits += 1;
                    } else {
                        ran += 1;
                    }
                }
                for &i in &designs[d].points {
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

    let labels = train.as_ref().is_some_and(|t| t.data.labels.is_some());
    print_table(&results, train.is_some(), labels);
    let failed = results.iter().filter(|r| r.error.is_some()).count();
    let json = serde_json::json!({
        "fptgen": VERSION,
        "model": model.source.display().to_string(),
        "name": model.name,
        "part": model.part,
        "clock_period_ns": model.clock_period_ns,
        "scope": if a.trainer_only { "trainer" } else { "design" },
        "yosys": yosys,
        "population": a.population,
        "blocks": a.blocks,
        "data": train.as_ref().map(|t| t.path.display().to_string()),
        "samples": train.as_ref().map(|t| t.data.inputs.len()),
        "buffer": training.buffer,
        "iterations": train.as_ref().map(|_| k),
        "before": before.map(|(loss, acc)| serde_json::json!({ "loss": loss, "accuracy": acc })),
        "designs": designs.len(),
        "yosys_runs": ran,
        "cache_hits": hits,
        "failed": failed,
        "points": results,
    });
    let files = vec![
        GeneratedFile::text(RESULTS[0], csv(&results)),
        GeneratedFile::text(RESULTS[1], serde_json::to_string_pretty(&json)?),
        GeneratedFile::text(RESULTS[2], plot_area(&model.name, &results)?),
        GeneratedFile::text(RESULTS[3], plot_quality(&model.name, &results, train.is_some(), labels, before)?),
    ];
    output::write_dir(out, output::SWEEP, &files)?;
    println!(
        "{} distinct designs: yosys ran {ran} times, {hits} estimates from {}",
        designs.len(),
        out.join("cache").display()
    );
    println!("wrote {}: {}", out.display(), RESULTS.join(", "));
    if failed > 0 {
        bail!("{failed} of {} points failed (see the table above and {})", results.len(), out.join(RESULTS[0]).display());
    }
    Ok(())
}

/// An error naming `option` if `values` lists a value twice.
fn distinct(values: &[usize], option: &str) -> anyhow::Result<()> {
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            bail!("{option} lists {v} more than once");
        }
    }
    Ok(())
}

fn list(v: &[usize]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

/// Plans and renders the point (N, P): its model, schedule and design.
fn prepare(
    model: &Model,
    params: &Params,
    n: usize,
    p: usize,
    scope: SynthScope,
    yosys: &str,
    gen: &GenInfo,
) -> Result<Prepared, String> {
    let mut model = model.clone();
    let t = model.training.as_mut().ok_or("no training section")?;
    t.population = n;
    t.blocks = p;
    t.check()?;
    let m = t.buffer;
    let plan = plan(&model);
    let (Some(tp), Some(hw)) = (&plan.training, &plan.trainer) else {
        return Err("no training plan".into());
    };
    let time = Time {
        groups: tp.groups,
        blocks_built: hw.p,
        passes_per_image: tp.forward_passes_per_iteration_per_image,
        cycles_per_iteration: tp.cycles_per_iteration,
        iteration_us: tp.iteration_us,
        us_per_image: tp.iteration_us / m as f64,
    };
    let files = render(&model, params, &plan, gen).map_err(|e| e.to_string())?;
    // The cache keeps what yosys reads, nothing else.
    let files: Vec<GeneratedFile> =
        files.into_iter().filter(|f| YOSYS_READS.iter().any(|d| f.path.starts_with(d))).collect();
    let hash = design_hash(&files, scope, yosys);
    Ok(Prepared { model, time, hash, files })
}

/// SHA-256, in hexadecimal, of what a yosys estimate depends on: `files`
/// (those yosys reads), the script, and the fptgen and yosys versions.
fn design_hash(files: &[GeneratedFile], scope: SynthScope, yosys: &str) -> String {
    let mut h = Sha256::new();
    let mut field = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    field(b"fptgen sweep cache 1");
    field(VERSION.as_bytes());
    field(yosys.as_bytes());
    field(scope.script().as_bytes());
    let mut read: Vec<&GeneratedFile> = files.iter().collect();
    read.sort_by(|a, b| a.path.cmp(&b.path));
    for f in read {
        field(f.path.to_string_lossy().as_bytes());
        field(&f.contents);
    }
    h.finalize().iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The yosys estimate of design `d`: from `OUT/cache/<design>/area.json`
/// if an earlier run left it, else by writing the design there and running
/// yosys. Returns the estimate and whether it came from the cache.
fn estimate(
    out: &Path,
    d: &Design,
    scope: SynthScope,
    yosys: &str,
    gen: &GenInfo,
    top: &str,
    part_name: &str,
) -> anyhow::Result<(Area, bool)> {
    let dir = out.join("cache").join(&d.hash[..SHORT]);
    let record = dir.join("area.json");
    if let Ok(text) = std::fs::read_to_string(&record) {
        if let Ok(r) = serde_json::from_str::<CacheRecord>(&text) {
            if r.hash == d.hash {
                return Ok((r.area, true));
            }
        }
    }
    output::write_dir(&dir, output::DESIGN, &d.files)?;
    let r = synth::run(&dir, top, part::lookup(part_name), scope)?;
    let area = Area::of(&r);
    let mut files = synth::report_files(&r, gen, part_name)?;
    let rec = CacheRecord { hash: d.hash.clone(), yosys: yosys.to_string(), script: scope.script().to_string(), area };
    files.push(GeneratedFile::text("area.json", serde_json::to_string_pretty(&rec)?));
    output::add_files(&dir, output::SYNTH, &files)?;
    Ok((rec.area, false))
}

/// Trains the point's model (`training:` already replaced) for `k`
/// iterations on the buffer.
fn train_point(model: &Model, params: &Params, t: &TrainInput, k: u64) -> anyhow::Result<Quality> {
    let mut training = train_es::training_section(model)?;
    training.iterations = k;
    let net = Network::new(model.clone(), params.clone())?;
    let mut trainer = Trainer::with_training(net, training, t.buffer.clone(), EvalMode::Cached)?;
    let loss = trainer.run(k, &mut |_| {})?;
    let acc = train_es::accuracy(&trainer.network()?, &t.data)?;
    Ok(Quality { iterations: k, loss, accuracy: acc.map(train_es::ratio) })
}

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

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn csv(results: &[PointResult]) -> String {
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

/// `x` microseconds, readably.
fn duration(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.3} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.3} ms", us / 1e3)
    } else {
        format!("{us:.3} us")
    }
}

fn print_table(results: &[PointResult], trained: bool, labels: bool) {
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
        println!("{}", line.trim_end());
    }
}

/// One plotted point: x (the iteration time in ns), y and the Ps it
/// stands for (points of one N that coincide, such as P beyond T, share a
/// marker).
type Pt = (f64, f64, Vec<usize>);

/// The successful points with a y value, per N, in order of P.
fn series(results: &[PointResult], y: impl Fn(&PointResult) -> Option<f64>) -> Vec<(usize, Vec<Pt>)> {
    let mut by_n: BTreeMap<usize, Vec<(f64, f64, usize)>> = BTreeMap::new();
    for r in results {
        if let (Some(t), Some(v)) = (&r.time, y(r)) {
            by_n.entry(r.population).or_default().push((1e3 * t.iteration_us, v, r.blocks));
        }
    }
    by_n.into_iter()
        .map(|(n, mut v)| {
            v.sort_by_key(|p| p.2);
            let mut pts: Vec<Pt> = Vec::new();
            for (x, y, p) in v {
                match pts.iter_mut().find(|q| q.0 == x && q.1 == y) {
                    Some(q) => q.2.push(p),
                    None => pts.push((x, y, vec![p])),
                }
            }
            (n, pts)
        })
        .collect()
}

/// A logarithmic axis range over whole decades around `values` (positive
/// ones), so that it has labeled ticks.
fn log_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values.filter(|v| *v > 0.0).fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if hi == 0.0 {
        return 1.0..10.0;
    }
    let lo = 10f64.powf(lo.log10().floor());
    let hi = 10f64.powf(hi.log10().ceil());
    if hi > lo {
        lo..hi
    } else {
        lo..lo * 10.0
    }
}

/// The time axis: every point's iteration time, in ns (plotters labels
/// a logarithmic axis of values below 1 poorly).
fn time_range(results: &[PointResult]) -> std::ops::Range<f64> {
    log_range(results.iter().filter_map(|r| r.time.as_ref()).map(|t| 1e3 * t.iteration_us))
}

/// `v` with at most 3 significant digits after the point, without
/// trailing zeros.
fn tick_number(v: f64) -> String {
    let digits = if v == 0.0 { 0 } else { (2 - v.abs().log10().floor() as i32).max(0) as usize };
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A duration in nanoseconds as a tick label, in ns, us, ms or s.
fn tick_duration(ns: f64) -> String {
    let (v, unit) = match ns {
        x if x >= 1e9 => (x / 1e9, "s"),
        x if x >= 1e6 => (x / 1e6, "ms"),
        x if x >= 1e3 => (x / 1e3, "us"),
        x => (x, "ns"),
    };
    format!("{} {unit}", tick_number(v))
}

/// LUTs against iteration time, one series per N, points labeled by P.
fn plot_area(name: &str, results: &[PointResult]) -> anyhow::Result<String> {
    let s = series(results, |r| r.area.as_ref().map(|a| a.luts as f64).filter(|v| *v > 0.0));
    let points = s.iter().flat_map(|(_, v)| v.iter());
    let x = time_range(results);
    let y = log_range(points.map(|p| p.1));
    plot(&format!("{name}: area vs training time"), "LUTs (yosys estimate)", x, y, true, &s, None, Corner::UpperRight)
}

/// Accuracy (with labels) or buffer loss after training against
/// iteration time; without data, an empty chart that says so.
fn plot_quality(
    name: &str,
    results: &[PointResult],
    trained: bool,
    labels: bool,
    before: Option<(u32, Option<f64>)>,
) -> anyhow::Result<String> {
    let s = series(results, |r| {
        let q = r.training.as_ref()?;
        if labels {
            q.accuracy.map(|a| 100.0 * a)
        } else {
            Some(f64::from(q.loss))
        }
    });
    let x = time_range(results);
    let base = before.and_then(|(loss, acc)| if labels { acc.map(|a| 100.0 * a) } else { Some(f64::from(loss)) });
    let (title, ylabel, y, corner) = if !trained {
        (format!("{name}: no --data, no accuracy or loss"), "accuracy or loss", 0.0..1.0, Corner::UpperRight)
    } else if labels {
        (format!("{name}: accuracy after training vs training time"), "accuracy on all samples (%)", 0.0..100.0, Corner::LowerRight)
    } else {
        let top = s.iter().flat_map(|(_, v)| v.iter().map(|p| p.1)).chain(base).fold(0.0f64, f64::max);
        let y = 0.0..(top * 1.1).max(1.0);
        (format!("{name}: buffer loss after training vs training time"), "buffer loss (raw codes)", y, Corner::UpperRight)
    };
    plot(&title, ylabel, x, y, false, &s, base, corner)
}

/// Where a chart's legend goes.
#[derive(Clone, Copy)]
enum Corner {
    UpperRight,
    LowerRight,
}

/// Draws the chart as SVG text: a logarithmic time axis, `y` logarithmic
/// if `log_y`, one line per N with its points labeled by P, and a
/// horizontal line at `baseline` (the value before training).
#[allow(clippy::too_many_arguments)]
fn plot(
    title: &str,
    ylabel: &str,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    log_y: bool,
    series: &[(usize, Vec<Pt>)],
    baseline: Option<f64>,
    corner: Corner,
) -> anyhow::Result<String> {
    use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
    use plotters::prelude::*;

    #[allow(clippy::too_many_arguments)]
    fn draw<Y>(
        area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        title: &str,
        ylabel: &str,
        x: std::ops::Range<f64>,
        y: Y,
        series: &[(usize, Vec<Pt>)],
        baseline: Option<f64>,
        corner: Corner,
    ) -> anyhow::Result<()>
    where
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let xr = x.clone();
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 20))
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(x.log_scale(), y)?;
        chart
            .configure_mesh()
            .x_desc("time per training iteration (generated trainer's schedule, log scale)")
            .y_desc(ylabel)
            .x_labels(12)
            .x_label_formatter(&|v| tick_duration(*v))
            .y_label_formatter(&|v| tick_number(*v))
            .draw()?;
        for (i, (n, pts)) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(pts.iter().map(|p| (p.0, p.1)), color.stroke_width(2)))?
                .label(format!("N = {n}"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart.draw_series(pts.iter().map(|p| {
                EmptyElement::at((p.0, p.1))
                    + Circle::new((0, 0), 4, color.filled())
                    + Text::new(format!("P={}", list(&p.2)), (6, -16), ("sans-serif", 12))
            }))?;
        }
        if let Some(b) = baseline {
            let grey = RGBColor(128, 128, 128);
            chart
                .draw_series(LineSeries::new([(xr.start, b), (xr.end, b)], grey.stroke_width(1)))?
                .label("before training")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey));
        }
        if !series.is_empty() || baseline.is_some() {
            let position = match corner {
                Corner::UpperRight => SeriesLabelPosition::UpperRight,
                Corner::LowerRight => SeriesLabelPosition::LowerRight,
            };
            chart
                .configure_series_labels()
                .position(position)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
        }
        Ok(())
    }

    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, (900, 600)).into_drawing_area();
        area.fill(&WHITE)?;
        if log_y {
            draw(&area, title, ylabel, x, y.log_scale(), series, baseline, corner)?;
        } else {
            draw(&area, title, ylabel, x, y, series, baseline, corner)?;
        }
        area.present()?;
    }
    Ok(svg)
}
