//! The simulator against a NumPy float32 peer, in one run, on the same
//! inputs and weights (`docs/results/performance.md`, "Against NumPy").
//!
//!     cargo build --release && cargo run --release --example peer
//!
//! 1. Loads the MNIST example (`examples/mnist/model.yaml`, its weights),
//!    the 10,000 MNIST test images and, for ES, the first M = 64 training
//!    images with `mnist_noise`'s targets; picks the first group of
//!    P = `--blocks` (1,000) fc1 parameters, in training order, whose
//!    members change the buffer loss, and draws its N members' noise as
//!    the trainer does (the model's `training:` section: antithetic,
//!    8-bit rademacher LFSRs, seed 1).
//! 2. Times the simulator: `Network::infer_rows` on a matrix of the images'
//!    byte codes (the pixels: the input format is `ap_ufixed<8,0>`) and
//!    `Network::infer_batch` on one `i128` vector per image (checking that
//!    both give the same codes), each on a batch of 256 images and on all
//!    10,000 (both cores, and the batch on one thread), and the
//!    group's member evaluation (`Evaluator::evaluate_members`) with
//!    `EvalMode::Batched` and with the cached evaluator (`EvalMode::Cached`),
//!    checking that both give the same member losses.
//! 3. Writes the weights, images and the members' perturbations (in real
//!    units) as `.npy` files and runs `examples/peer_numpy.py` on them with
//!    `OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE` removed from its
//!    environment (threadpoolctl reports the BLAS kernel it then runs).
//! 4. Times the simulator again (the figures are the better of the two
//!    rounds, as NumPy's are the best of three), and, when
//!    `target/release/fptgen` exists, runs `fptgen simulate` and NumPy end
//!    to end on all 10,000 images as float `.npy` files (read, quantize or
//!    convert, infer, write).
//! 5. Prints every figure, the ratios, the load average before and after,
//!    and how often NumPy's argmax agrees with the simulator's.

#[path = "common/mnist_args.rs"]
mod mnist_args;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{anyhow, bail, Context};
use clap::Parser;
use mnist_args::MnistArgs;
use fptgen_sim::data;
use fptgen_sim::model::{self, Fitness};
use fptgen_sim::network::Network;
use fptgen_sim::qat::argmax;
use fptgen_sim::tensor::{write_npy, OutValues};
use fptgen_sim::train::{trainable_params, Buffer, EvalMode, Evaluator, NoiseSource, ParamRef};
use fptgen_sim::weights::{self, Conversion};

#[derive(Debug, Parser)]
struct Args {
    #[command(flatten)]
    mnist: MnistArgs,
    /// P, parameters per ES group.
    #[arg(long, default_value_t = 1000)]
    blocks: usize,
    /// Seconds per timed figure (per round).
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// The Python interpreter (with numpy and threadpoolctl).
    #[arg(long, default_value = "python3")]
    python: String,
}

/// Items per second of `f` over about `seconds`, the best of 3 rounds.
fn rate(mut f: impl FnMut(), items: usize, seconds: f64) -> f64 {
    f();
    let mut best = 0.0f64;
    for _ in 0..3 {
        let (mut n, t0) = (0usize, Instant::now());
        loop {
            f();
            n += 1;
            let el = t0.elapsed().as_secs_f64();
            if el >= seconds / 3.0 {
                best = best.max((n * items) as f64 / el);
                break;
            }
        }
    }
    best
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg").map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).unwrap_or_default()
}

fn npy(dir: &Path, name: &str, shape: &[usize], v: Vec<f64>) -> anyhow::Result<()> {
    Ok(write_npy(&dir.join(format!("{name}.npy")), shape, &OutValues::F64(v))?)
}

/// The simulator's figures of one round.
struct Round {
    rows256: f64,
    rows256_one_thread: f64,
    rows_all: f64,
    infer256: f64,
    infer256_one_thread: f64,
    infer_all: f64,
    es_batched: f64,
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let load_start = loadavg();
    let m = model::load(&a.mnist.model)?;
    let params = weights::load(&m, Conversion::Exact)?;
    let net = Network::new(m.clone(), params.clone())?;
    let splits = data::load_dir(&m, &a.mnist.data)?;
    let images = splits.test.inputs();
    let batch: Vec<Vec<i128>> = images[..256].to_vec();
    // The same images as one matrix of byte codes.
    let bytes: Vec<u8> = images.iter().flatten().map(|&c| u8::try_from(c)).collect::<Result<_, _>>()?;
    let bytes256 = &bytes[..256 * m.input_len()];
    let rows_out = net.infer_rows(&bytes)?;
    if rows_out != net.infer_batch(&images)?.into_iter().flatten().map(|c| c as i64).collect::<Vec<i64>>() {
        bail!("infer_rows and infer_batch disagree");
    }
    let (n_in, n_out) = (m.input_len(), m.output_len());

    // The ES buffer and group.
    let mut training = m.training.ok_or_else(|| anyhow!("the model has no training section"))?;
    training.blocks = a.blocks;
    let out_f = m.output_format();
    let (hi, lo) = (out_f.quantize_f64(14.34375)?, out_f.quantize_f64(-3.21875)?);
    let buf_in: Vec<Vec<i128>> = (0..training.buffer).map(|i| splits.train.input(i).to_vec()).collect();
    let targets: Vec<Vec<i128>> =
        (0..training.buffer).map(|i| (0..n_out).map(|o| if o == splits.train.label(i) { hi } else { lo }).collect()).collect();
    let buffer = Buffer::new(&m, buf_in.clone(), targets.clone())?;
    let order: Vec<ParamRef> = trainable_params(&m);
    let mut batched = Evaluator::new(EvalMode::Batched, &net, buffer.clone());
    let mut work = params.clone();
    let (mut refs, mut members, mut group) = (Vec::new(), Vec::new(), 0);
    for g in 0..order.len().div_ceil(a.blocks) {
        refs = order[g * a.blocks..((g + 1) * a.blocks).min(order.len())].to_vec();
        let mut noise: Vec<NoiseSource> = (0..refs.len()).map(|j| NoiseSource::seeded(&training.noise, training.seed, j)).collect();
        let mut e_prev: Vec<i64> = Vec::new();
        members = (0..training.population)
            .map(|mi| {
                let e: Vec<i64> = if training.fitness == Fitness::Antithetic && mi % 2 == 1 {
                    e_prev.iter().map(|&x| -x).collect()
                } else {
                    noise.iter_mut().map(NoiseSource::draw).collect()
                };
                let v = refs
                    .iter()
                    .zip(&e)
                    .map(|(r, &x)| {
                        let f = r.format(&m);
                        (r.get(&params) + (i128::from(x) << training.perturb_shift)).clamp(f.lossless_min_raw(), f.max_raw())
                    })
                    .collect::<Vec<i128>>();
                e_prev = e;
                v
            })
            .collect();
        let losses = batched.evaluate_members(&mut work, &refs, &members)?;
        if losses.iter().any(|&l| l != batched.loss()) {
            group = g;
            break;
        }
    }
    let d = m.layers[refs[0].layer].as_dense().expect("a dense layer");
    eprintln!(
        "ES group {group}: {} .. {} ({} parameters), N {}, M {}",
        refs[0].describe(&m),
        refs[refs.len() - 1].describe(&m),
        refs.len(),
        members.len(),
        buffer.len()
    );
    let mut cached = Evaluator::new(EvalMode::Cached, &net, buffer.clone());
    let want = cached.evaluate_members(&mut work, &refs, &members)?;
    if batched.evaluate_members(&mut work, &refs, &members)? != want {
        bail!("the batched and cached evaluators disagree");
    }
    let member_samples = members.len() * buffer.len();
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let mut round = || -> Round {
        Round {
            rows256: rate(|| drop(net.infer_rows(bytes256)), 256, a.seconds),
            rows256_one_thread: one.install(|| rate(|| drop(net.infer_rows(bytes256)), 256, a.seconds)),
            rows_all: rate(|| drop(net.infer_rows(&bytes)), images.len(), a.seconds),
            infer256: rate(|| drop(net.infer_batch(&batch)), 256, a.seconds),
            infer256_one_thread: one.install(|| rate(|| drop(net.infer_batch(&batch)), 256, a.seconds)),
            infer_all: rate(|| drop(net.infer_batch(&images)), images.len(), a.seconds),
            es_batched: rate(|| drop(batched.evaluate_members(&mut work.clone(), &refs, &members)), member_samples, a.seconds),
        }
    };
    let r1 = round();
    let es_cached = rate(|| drop(cached.evaluate_members(&mut work.clone(), &refs, &members)), member_samples, a.seconds);

    // The same data for NumPy.
    let dir = tempfile::tempdir()?;
    for (l, layer) in m.layers.iter().enumerate() {
        let d = layer.as_dense().expect("a dense layer");
        let (wf, bf) = (d.precision.weight, d.precision.bias);
        let p = &params.layers[l];
        npy(dir.path(), &format!("w{}", l + 1), &[d.outputs, d.inputs], p.tensors[0].iter().map(|&c| wf.to_f64(c)).collect())?;
        npy(dir.path(), &format!("b{}", l + 1), &[d.outputs], p.tensors[1].iter().map(|&c| bf.to_f64(c)).collect())?;
    }
    let xf = m.input_format;
    npy(dir.path(), "x", &[images.len(), n_in], images.iter().flatten().map(|&c| xf.to_f64(c)).collect())?;
    npy(dir.path(), "xb", &[buf_in.len(), n_in], buf_in.iter().flatten().map(|&c| xf.to_f64(c)).collect())?;
    npy(dir.path(), "t", &[targets.len(), n_out], targets.iter().flatten().map(|&c| out_f.to_f64(c)).collect())?;
    let weights_only: Vec<&ParamRef> = refs.iter().filter(|r| r.tensor == 0).collect();
    npy(dir.path(), "rows", &[weights_only.len()], weights_only.iter().map(|r| (r.index / d.inputs) as f64).collect())?;
    npy(dir.path(), "cols", &[weights_only.len()], weights_only.iter().map(|r| (r.index % d.inputs) as f64).collect())?;
    let wf = d.precision.weight;
    let dm: Vec<f64> = members
        .iter()
        .flat_map(|v| refs.iter().zip(v).filter(|(r, _)| r.tensor == 0).map(|(r, &x)| wf.to_f64(x) - wf.to_f64(r.get(&params))))
        .collect();
    npy(dir.path(), "d", &[members.len(), weights_only.len()], dm)?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/peer_numpy.py");
    let out = Command::new(&a.python)
        .arg(&script)
        .arg(dir.path())
        .arg(a.seconds.to_string())
        .env_remove("OPENBLAS_CORETYPE")
        .env_remove("OPENBLAS_L2_SIZE")
        .output()
        .with_context(|| format!("running {} {}", a.python, script.display()))?;
    if !out.status.success() {
        bail!("{} failed: {}", script.display(), String::from_utf8_lossy(&out.stderr));
    }
    let py: serde_json::Value = serde_json::from_slice(&out.stdout).context("the NumPy peer's output")?;
    let r2 = round();
    let best = |f: fn(&Round) -> f64| f(&r1).max(f(&r2));
    let np = |k: &str| py[k].as_f64().unwrap_or(f64::NAN);

    // Argmax agreement with the simulator, as a check that NumPy computes the network.
    let sim_out = net.infer_batch(&images)?;
    let agree = sim_out
        .iter()
        .zip(py["infer_outputs"].as_array().into_iter().flatten())
        .filter(|(y, p)| {
            let p: Vec<f64> = p.as_array().into_iter().flatten().filter_map(|v| v.as_f64()).collect();
            argmax(y) == (0..p.len()).reduce(|b, i| if p[i] > p[b] { i } else { b })
        })
        .count();

    // End to end: fptgen simulate against NumPy on float .npy files.
    let e2e = end_to_end(&a, dir.path())?;
    let load_end = loadavg();

    println!("machine: {} cores, load average {load_start} before, {load_end} after", std::thread::available_parallelism().map_or(0, |n| n.get()));
    println!("numpy {}, BLAS {}", py["numpy"], py["blas"]);
    println!("NumPy's argmax agrees with the simulator's on {agree} of {} test images", images.len());
    println!("| figure | fptgen | NumPy float32 | fptgen ÷ NumPy |");
    println!("|---|---|---|---|");
    let row = |what: &str, f: f64, n: f64, unit: &str| println!("| {what} | {f:.0} {unit} | {n:.0} {unit} | {:.2}x |", f / n);
    row("inference, batch 256, both cores (`infer_rows`, byte codes)", best(|r| r.rows256), np("infer_batch256"), "images/s");
    row("inference, all 10,000 test images, both cores (`infer_rows`)", best(|r| r.rows_all), np("infer_all"), "images/s");
    println!("| inference, batch 256, one thread (`infer_rows`; fptgen only) | {:.0} images/s | | |", best(|r| r.rows256_one_thread));
    row("inference, batch 256, both cores (`infer_batch`, an `i128` vector per image)", best(|r| r.infer256), np("infer_batch256"), "images/s");
    row("inference, all 10,000 test images, both cores (`infer_batch`)", best(|r| r.infer_all), np("infer_all"), "images/s");
    println!("| inference, batch 256, one thread (`infer_batch`; fptgen only) | {:.0} images/s | | |", best(|r| r.infer256_one_thread));
    row("ES member-sample evaluations (batched)", best(|r| r.es_batched), np("es_member_samples"), "/s");
    println!(
        "| ES member-sample evaluations (cached, today's) | {es_cached:.0} /s | | batched ÷ cached {:.1}x |",
        best(|r| r.es_batched) / es_cached
    );
    if let Some((f, n)) = e2e {
        println!(
            "| end to end, {} images (.npy in, .npy out) | {:.0} images/s ({f:.2} s) | {:.0} images/s ({n:.2} s) | {:.2}x |",
            images.len(),
            images.len() as f64 / f,
            images.len() as f64 / n,
            n / f
        );
    } else {
        println!("(end to end skipped: build target/release/fptgen first, `cargo build --release`)");
    }
    Ok(())
}

/// `fptgen simulate` and NumPy on the same float `.npy` input, each the
/// best of 3 runs: seconds, or `None` without a release `fptgen` binary.
fn end_to_end(a: &Args, dir: &Path) -> anyhow::Result<Option<(f64, f64)>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from).join("release/fptgen");
    if !bin.exists() {
        return Ok(None);
    }
    let script = root.join("examples/peer_numpy.py");
    let time = |c: &mut Command| -> anyhow::Result<f64> {
        let mut best = f64::INFINITY;
        for i in 0..3 {
            let _ = std::fs::remove_file(dir.join("y.npy"));
            let t0 = Instant::now();
            let s = c.status()?;
            if !s.success() {
                bail!("{c:?} failed (run {i})");
            }
            best = best.min(t0.elapsed().as_secs_f64());
        }
        Ok(best)
    };
    let f = time(Command::new(&bin).arg("simulate").arg(&a.mnist.model).arg("--inputs").arg(dir.join("x.npy")).arg("-o").arg(dir.join("y.npy")).stderr(std::process::Stdio::null()))?;
    let n = time(
        Command::new(&a.python)
            .arg(&script)
            .arg("--e2e")
            .arg(dir)
            .env_remove("OPENBLAS_CORETYPE")
            .env_remove("OPENBLAS_L2_SIZE"),
    )?;
    Ok(Some((f, n)))
}
