//! Co-simulation through the AXI wrapper (`fptgen cosim --axi`): the same
//! checks as [`crate::cosim`] and [`crate::cosim_train`], with the harness
//! driving only the wrapper's AXI4-Stream ports and its AXI4-Lite register
//! map (through the generated C driver).
//!
//! Inference: every output bit and TLAST of both phases, and the
//! registers that describe the design against the model. Training: the
//! weights are first replaced through the weight windows by random codes
//! (read back and compared by the harness), so the simulator trains from
//! those; then the buffer goes in through the sample-load stream, training
//! runs (with inference requests and pauses through the register map when
//! interrupted), and fptgen compares every answer exactly with the
//! simulator's inference on the parameters committed in the state that
//! served it (the harness tags each request accepted during training with
//! the state it polls next, holding the answer until then, so the trainer
//! waits where it served it), every trainable tensor read through the
//! weight windows at each pause against the parameters committed at that
//! pause, the event counters, the iteration, the last loss, a weight read
//! refused (SLVERR) while training ran, a weight write refused while paused, and
//! every trainable tensor read back at the end.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use fptgen_sim::network::Network;
use fptgen_sim::train::eval::Buffer;
use fptgen_sim::weights::Params;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use fptgen_generator::axi::AxiPlan;
use crate::cosim::{build, BuildKind, CosimError, CosimResult};
use fptgen_generator::expect::{stimulus, Event};
use crate::cosim_train::{at_committed, check_answers, check_final_memories, check_memories, io, run_harness, write_buffer, TrainCosimOptions};
use fptgen_generator::plan::NetworkPlan;

fn mismatch(msg: String) -> CosimError {
    CosimError::Mismatch(msg)
}

/// The `REG NAME VALUE` lines of a harness's output.
fn registers(text: &str) -> HashMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            (f.next() == Some("REG")).then_some(())?;
            let name = f.next()?.to_string();
            Some((name, f.next()?.parse().ok()?))
        })
        .collect()
}

fn expect_reg(regs: &HashMap<String, u64>, name: &str, want: u64, what: &str) -> Result<(), CosimError> {
    match regs.get(name) {
        Some(&v) if v == want => Ok(()),
        Some(&v) => Err(mismatch(format!("{what}: register {name} (s_axil_rdata) = {v:#x}, expected {want:#x}"))),
        None => Err(CosimError::Harness(format!("{what}: the harness did not report register {name}"))),
    }
}

/// fptgen's version as the `VERSION` register holds it.
fn version() -> u64 {
    let v: Vec<u64> = fptgen_generator::VERSION.split('.').map(|s| s.parse().unwrap_or(0)).collect();
    v.first().copied().unwrap_or(0) << 16 | v.get(1).copied().unwrap_or(0) << 8 | v.get(2).copied().unwrap_or(0)
}

/// Inference through the wrapper of the design in `dir` (generated with
/// `a`): [`crate::cosim::run`]'s checks plus TLAST on every output
/// transfer and the describing registers against the model. The predicted
/// cycles are the wrapper's ([`AxiPlan::ii`], [`AxiPlan::latency`]), exact
/// when [`AxiPlan::cycles_exact`].
pub fn run(dir: &Path, plan: &NetworkPlan, a: &AxiPlan, net: &Network, vectors: usize, seed: u64) -> Result<CosimResult, CosimError> {
    let inputs = stimulus(net, vectors, seed);
    let (mut r, stdout) = crate::cosim::run_harness(dir, plan, net, &inputs, seed, None, BuildKind::Axi)?;
    // The wrapper's cycles (split transfers add to the design's).
    r.predicted_ii = a.ii(plan);
    r.predicted_latency = a.latency(plan);
    if r.first_mismatch.is_some() {
        return Ok(r);
    }
    let regs = registers(&stdout);
    let m = net.model();
    let what = "AXI4-Lite";
    let (xf, yf) = (m.input_format, m.output_format());
    expect_reg(&regs, "ID", 0x4650_5447, what)?;
    expect_reg(&regs, "VERSION", version(), what)?;
    expect_reg(&regs, "INPUTS", m.input_len() as u64, what)?;
    expect_reg(&regs, "OUTPUTS", m.output_len() as u64, what)?;
    let formats = u64::from(xf.width()) | u64::from(yf.width()) << 8 | u64::from(xf.signed()) << 16 | u64::from(yf.signed()) << 17;
    expect_reg(&regs, "FORMATS", formats, what)?;
    expect_reg(&regs, "BATCH", u64::from(a.batch), what)?;
    let kind = match &m.training {
        None => 0,
        Some(t) if t.rule == fptgen_sim::model::Rule::Es => 1,
        Some(_) => 2,
    };
    let tensors: u64 = if kind == 0 { 0 } else { m.layers.iter().map(|l| l.kind().tensors().iter().filter(|t| t.trainable).count() as u64).sum() };
    expect_reg(&regs, "TRAINER", kind | tensors << 8, what)?;
    if !stdout.lines().any(|l| l == "DRIVER check=0") {
        return Err(mismatch(format!("{what}: the C driver's check of the registers failed:\n{stdout}")));
    }
    Ok(r)
}

/// What a training co-simulation through the wrapper checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AxiTrainResult {
    /// Parameters written through the weight windows and read back.
    pub written: usize,
    /// Answers compared exactly, all of them.
    pub answers: usize,
    /// Of those, the answers to requests served during training.
    pub answers_during: usize,
    /// Pauses the harness saw (STATUS).
    pub pauses: usize,
    /// Parameters read through the weight windows at the pauses and
    /// compared with the committed parameters there.
    pub paused_params: usize,
    /// Event counters compared (EVENTS0..2).
    pub events: [u64; 3],
    /// Trainable parameters compared at the end.
    pub final_params: usize,
    /// Cycles from the start to done, per run.
    pub cycles: Vec<u64>,
}

impl AxiTrainResult {
    /// The one-line summary `fptgen cosim --axi --train` prints.
    pub fn summary(&self) -> String {
        format!(
            "AXI: parameters written and read back {} | events {:?} | answers {} exact, {} during training | pauses {}, parameters read while paused {} | final parameters {} | cycles {:?}",
            self.written, self.events, self.answers, self.answers_during, self.pauses, self.paused_params, self.final_params, self.cycles
        )
    }
}

/// Random initial codes for every trainable tensor of `plan` (within each
/// tensor's clamp range), as parameters of the model and as the memory
/// images the harness writes (`sim/run/<image>.load`).
fn new_params(net: &Network, plan: &NetworkPlan, seed: u64) -> (Params, Vec<fptgen_generator::render::GeneratedFile>, usize) {
    let model = net.model();
    let mut params = net.params().clone();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xa11c_e5ed);
    let mut files = Vec::new();
    let mut count = 0;
    for lp in &plan.layers {
        let Some(k) = model.layers.iter().position(|l| l.name == lp.name) else { continue };
        for m in lp.trainable() {
            let f = m.raw_format;
            let (lo, hi) = (m.range.0.max(f.min_raw()), m.range.1.min(f.max_raw()));
            let t = &mut params.layers[k].tensors[m.tensor];
            for v in t.iter_mut() {
                *v = rng.random_range(lo..=hi);
            }
            count += m.mem.depth * m.mem.cols;
            let base = m.mem.file.rsplit('/').next().unwrap_or(&m.mem.file).to_string();
            files.push(fptgen_generator::render::GeneratedFile::text(format!("sim/run/{base}.load"), m.image(t)));
        }
    }
    (params, files, count)
}

/// One parsed log of the AXI training harness.
#[derive(Debug, Default)]
struct AxiLog {
    answers: Vec<crate::cosim_train::Answer>,
    /// Of `answers`, those served during training.
    during: usize,
    /// The pauses at which the tensors were read: number, iteration, group.
    paused: Vec<(u64, u64, u64)>,
    /// The weight read issued during training: its RRESP and data.
    held: Option<(u64, u64)>,
    pauses: usize,
    regs: HashMap<String, u64>,
}

fn parse_log(text: &str) -> Result<AxiLog, CosimError> {
    let mut log = AxiLog { regs: registers(text), ..Default::default() };
    for (n, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let bad = || CosimError::Harness(format!("AXI training log line {}: cannot parse {line:?}", n + 1));
        let num = |i: usize| -> Result<u64, CosimError> { f.get(i).and_then(|x| x.parse().ok()).ok_or_else(bad) };
        match f.first().copied() {
            Some("A") => log.answers.push((num(1)? as usize, num(2)?, num(3)?, f.get(4).ok_or_else(bad)?.to_string())),
            Some("T") => {
                log.answers.push((num(1)? as usize, num(2)?, num(3)?, f.get(4).ok_or_else(bad)?.to_string()));
                log.during += 1;
            }
            Some("K") => log.paused.push((num(1)?, num(2)?, num(3)?)),
            Some("H") => log.held = Some((num(1)?, num(2)?)),
            Some("P") => log.pauses += 1,
            Some("R") | Some("Q") | Some("REG") => {}
            _ => return Err(bad()),
        }
    }
    Ok(log)
}

/// Training through the wrapper of the design in `dir` (generated with
/// `a`): see the module's documentation. Runs once without interruptions
/// and, with `opts.interrupt_permille > 0`, once with them.
pub fn run_train(dir: &Path, plan: &NetworkPlan, a: &AxiPlan, net: &Network, opts: TrainCosimOptions) -> Result<AxiTrainResult, CosimError> {
    let t = a.trainer.as_ref().ok_or_else(|| CosimError::Harness("the design has no trainer".into()))?;
    let dir = &std::path::absolute(dir).map_err(io(dir))?;
    let model = net.model();
    let training = model.training.ok_or_else(|| CosimError::Harness("the model has no training: section".into()))?;
    let training = fptgen_sim::model::Training { iterations: opts.iterations, ..training };
    let (inputs, targets, requests) = write_buffer(dir, net, t.m, opts.seed)?;
    let (params, loads, written) = new_params(net, plan, opts.seed);
    fptgen_generator::output::add_files(dir, fptgen_generator::output::COSIM, &loads)?;
    let net = &Network::new(model.clone(), params)?;

    let buffer = Buffer::new(model, inputs, targets).map_err(|e| CosimError::Harness(e.to_string()))?;
    let exp = fptgen_generator::expect::expectation(net, training, buffer, plan, opts.iterations).map_err(CosimError::Harness)?;
    let mut counts = [0u64; 3];
    let mut last_loss = 0u64;
    for e in &exp.events {
        match e {
            Event::Loss { loss, .. } => {
                counts[0] += 1;
                last_loss = u64::from(*loss);
            }
            Event::Base { loss, .. } => {
                counts[1] += 1;
                last_loss = u64::from(*loss);
            }
            Event::Update { .. } => counts[2] += 1,
            Event::Delta { .. } => counts[0] += 1,
            Event::Write { .. } => counts[1] += 1,
        }
    }
    build(dir, BuildKind::AxiTrain)?;
    let exe = dir.join(BuildKind::AxiTrain.exe(&plan.name));
    let run_dir = dir.join("sim/run");
    let mut result = AxiTrainResult { written, events: counts, ..Default::default() };
    let rates: &[u32] = if opts.interrupt_permille > 0 { &[0, opts.interrupt_permille] } else { &[0] };
    for &rate in rates {
        let what = if rate == 0 { "AXI, uninterrupted run".to_string() } else { format!("AXI, run with interruptions ({rate}/1000)") };
        let log_path = run_dir.join(format!("axi-train-{rate}.log"));
        let out = run_harness(&exe, dir, plan, &opts, rate, &log_path)?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if let Some(m) = stdout.lines().find(|l| l.starts_with("MISMATCH")) {
            return Err(mismatch(format!("{what}: {m}")));
        }
        let Some(res) = stdout.lines().find(|l| l.starts_with("RESULT ")).filter(|_| out.status.success()) else {
            return Err(CosimError::Harness(format!(
                "AXI training harness exit {:?}\n{}{}",
                out.status.code(),
                stdout,
                String::from_utf8_lossy(&out.stderr)
            )));
        };
        if let Some(c) = res.split_whitespace().find_map(|kv| kv.strip_prefix("cycles=")).and_then(|v| v.parse().ok()) {
            result.cycles.push(c);
        }
        let log = parse_log(&std::fs::read_to_string(&log_path).map_err(io(&log_path))?)?;

        // Registers after the end.
        // done, weights readable and writable
        expect_reg(&log.regs, "STATUS", 0b11100, &what)?;
        expect_reg(&log.regs, "ITERATIONS", opts.iterations, &what)?;
        expect_reg(&log.regs, "ITERATION", opts.iterations, &what)?;
        expect_reg(&log.regs, "EVENTS0", counts[0], &what)?;
        expect_reg(&log.regs, "EVENTS1", counts[1], &what)?;
        expect_reg(&log.regs, "LOADED", (t.m * t.words) as u64, &what)?;
        if !t.feedback {
            expect_reg(&log.regs, "EVENTS2", counts[2], &what)?;
            expect_reg(&log.regs, "LAST_LOSS", last_loss, &what)?;
        }

        // Every answer, against the parameters committed in the state that
        // served it.
        result.answers += check_answers(net, &exp.changes, &log.answers, &requests, opts.iterations, &what)?;
        result.answers_during += log.during;

        // The tensors read through the weight windows at each pause: the
        // parameters committed there (before the update of the paused group
        // or sample, after those of every earlier one).
        let mut by_state: BTreeMap<(u64, u64), Vec<u64>> = BTreeMap::new();
        for &(k, it, g) in &log.paused {
            by_state.entry((it, g)).or_default().push(k);
        }
        if rate > 0 && log.paused.len() != log.pauses {
            return Err(CosimError::Harness(format!("{what}: {} pauses, but tensors read at {}", log.pauses, log.paused.len())));
        }
        at_committed(net.params(), &exp.changes, opts.iterations, by_state, &format!("{what}: a pause"), |params, list| {
            for k in list {
                let (it, g) = log.paused.iter().find(|p| p.0 == k).map(|p| (p.1, p.2)).unwrap_or_default();
                result.paused_params += check_memories(
                    dir,
                    plan,
                    model,
                    params,
                    &format!("pause{k}"),
                    &format!("memory read through AXI4-Lite at pause {k} (iteration {it}, group or sample {g}):"),
                    "the simulator's committed value there",
                    &what,
                )?;
            }
            Ok(())
        })?;
        result.pauses += log.pauses;

        // The weight read issued while training was busy: refused at once
        // (SLVERR, data 0) rather than holding the bus until done.
        if rate == 0 {
            let held = log.held.ok_or_else(|| CosimError::Harness(format!("{what}: no weight read during training")))?;
            if held != (2, 0) {
                return Err(mismatch(format!(
                    "{what}: the weight read issued while training was busy got RRESP {} and data {:#x} (s_axil_rresp, s_axil_rdata); expected SLVERR (2) and 0",
                    held.0, held.1
                )));
            }
        }

        // Every trainable tensor, read through the windows at the end.
        result.final_params = check_final_memories(dir, plan, model, &exp.final_params, &what)?;
    }
    Ok(result)
}
