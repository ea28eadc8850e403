//! Co-simulation of on-chip training (ES or a feedback rule): the
//! generated trainer under Verilator against `fptgen_sim::train`, bit for
//! bit.
//!
//! The harness (`sim/train_harness.cpp`) loads a buffer, trains, optionally
//! injects inference requests and pauses at random, and logs every event.
//! This module takes the simulator's prediction for the same buffer
//! ([`fptgen_generator::expect`]) and compares, stopping at the first difference, which it names:
//! every member's loss (`st_last_loss`), the baseline loss, every block's
//! accumulator (`mon_grad`) and updated parameter (`mon_param`) at every
//! update; every answer to an injected request (`out_data`) against
//! inference with the parameters committed when the request was accepted;
//! the final contents of every trainable memory; and, in a run without
//! interruptions, every iteration's cycle count against the schedule of
//! [`fptgen_generator::train_plan`].

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use fptgen_sim::model::Model;
use fptgen_sim::network::Network;
use fptgen_sim::train::eval::Buffer;
use fptgen_sim::train::order::ParamRef;
use fptgen_sim::weights::Params;

use fptgen_generator::bits::Bits;
use crate::cosim::{build, BuildKind, CosimError};
use fptgen_generator::expect::{self, buffer_stimulus, describe, Event, Stimulus};
use fptgen_generator::plan::NetworkPlan;

/// How to run a training co-simulation.
#[derive(Debug, Clone, Copy)]
pub struct TrainCosimOptions {
    /// Iterations to train.
    pub iterations: u64,
    /// Per-mille chance per cycle of an inference request (0: none); pauses
    /// happen at a tenth of that rate.
    pub interrupt_permille: u32,
    /// Seeds the buffer, the requests and the harness's random choices.
    pub seed: u64,
}

/// What a training co-simulation checked (every check passed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrainCosimResult {
    /// Groups whose losses, accumulators and updates matched.
    pub groups: usize,
    /// Member losses compared.
    pub losses: usize,
    /// Updates (accumulator and new value) compared.
    pub updates: usize,
    /// Answers to injected requests compared.
    pub answers: usize,
    /// Pauses the harness made.
    pub pauses: usize,
    /// Trainable parameters compared in the final memories.
    pub final_params: usize,
    /// Measured cycles of each iteration (the uninterrupted run).
    pub iteration_cycles: Vec<u64>,
    /// The schedule's cycles per iteration (the most, for a feedback
    /// rule, whose iterations differ).
    pub predicted_cycles: u64,
    /// The schedule's cycles of every iteration.
    pub predicted: Vec<u64>,
    /// A feedback rule's run: groups count samples, member losses deltas,
    /// updates parameters written.
    pub feedback: bool,
    /// `rule: sgm`: nonzero deltas of layers with a synthetic-gradient
    /// module among those compared (so a test can tell that the modules
    /// were exercised).
    pub synthetic: usize,
    /// A feedback rule's run, per trainable layer in model order: its
    /// name, its nonzero deltas and its parameters whose final value
    /// differs from the initial one (the simulator's counts, which the
    /// hardware matched), so a test can tell which layers trained.
    pub trained_layers: Vec<(String, usize, usize)>,
}

impl TrainCosimResult {
    /// The one-line summary `fptgen cosim --train` prints.
    pub fn summary(&self) -> String {
        if self.feedback {
            return format!(
                "samples {} | deltas {} | parameters written {} | answers {} | pauses {} | final parameters {} | cycles per iteration measured {:?}, schedule {:?}",
                self.groups, self.losses, self.updates, self.answers, self.pauses, self.final_params, self.iteration_cycles, self.predicted
            );
        }
        format!(
            "groups {} | member losses {} | updates {} | answers {} | pauses {} | final parameters {} | cycles per iteration measured {:?}, predicted {}",
            self.groups,
            self.losses,
            self.updates,
            self.answers,
            self.pauses,
            self.final_params,
            self.iteration_cycles,
            self.predicted_cycles
        )
    }
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CosimError + '_ {
    move |err| CosimError::Io { path: path.to_path_buf(), err }
}

/// Runs the training harness `exe` (its build in `dir`) once on the
/// buffer and requests in `sim/run/`, with inference requests at `rate`
/// per mille per cycle, logging to `log_path`; first removes the final
/// memory dumps of an earlier run, which must not pass for this one's.
pub(crate) fn run_harness(
    exe: &Path,
    dir: &Path,
    plan: &NetworkPlan,
    opts: &TrainCosimOptions,
    rate: u32,
    log_path: &Path,
) -> Result<std::process::Output, CosimError> {
    let run_dir = dir.join("sim/run");
    for lp in &plan.layers {
        for m in &lp.memories {
            let path = run_dir.join(format!("{}.final", m.mem.file));
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&path)(e)),
                _ => {}
            }
        }
    }
    Command::new(exe)
        .current_dir(dir)
        .args(["sim/run/buffer.hex", "sim/run/requests.hex"])
        .arg(opts.seed.to_string())
        .arg(opts.iterations.to_string())
        .arg(rate.to_string())
        .arg(log_path)
        .output()
        .map_err(io(exe))
}

pub(crate) fn hex(vals: &[i128], f: fptgen_sim::fixed::Format) -> String {
    let mut b = Bits::new();
    for &r in vals {
        b.push(f.bits(r), f.width());
    }
    b.to_hex()
}

#[derive(Debug, Default)]
struct Log {
    events: Vec<Event>,
    start: Option<u64>,
    iterations: Vec<(u64, u64)>,
    answers: Vec<Answer>,
    pauses: usize,
}

fn parse_log(text: &str) -> Result<Log, CosimError> {
    let mut log = Log::default();
    for (n, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let bad = || CosimError::Harness(format!("training log line {}: cannot parse {line:?}", n + 1));
        let num = |i: usize| -> Result<u64, CosimError> { f.get(i).and_then(|x| x.parse().ok()).ok_or_else(bad) };
        match f.first().copied() {
            Some("L") => log.events.push(Event::Loss {
                it: num(1)?,
                group: num(2)?,
                member: num(3)?,
                loss: u32::try_from(num(4)?).map_err(|_| bad())?,
            }),
            Some("Z") => log.events.push(Event::Base {
                it: num(1)?,
                group: num(2)?,
                loss: u32::try_from(num(3)?).map_err(|_| bad())?,
            }),
            Some("U") => log.events.push(Event::Update {
                it: num(1)?,
                group: num(2)?,
                block: num(3)?,
                param: f.get(4).and_then(|x| u128::from_str_radix(x, 16).ok()).ok_or_else(bad)?,
                grad: f.get(5).and_then(|x| u32::from_str_radix(x, 16).ok()).ok_or_else(bad)?,
            }),
            Some(k @ ("G" | "W")) => {
                let (it, sample, index) = (num(1)?, num(2)?, num(3)?);
                let value = f.get(4).and_then(|x| u128::from_str_radix(x, 16).ok()).ok_or_else(bad)?;
                log.events.push(if k == "G" {
                    Event::Delta { it, sample, index, value }
                } else {
                    Event::Write { it, sample, index, value }
                });
            }
            Some("B") => log.start = Some(num(1)?),
            Some("I") => log.iterations.push((num(1)?, num(2)?)),
            Some("A") => log.answers.push((num(1)? as usize, num(2)?, num(3)?, f.get(4).ok_or_else(bad)?.to_string())),
            Some("P") => log.pauses += 1,
            Some("R") | Some("D") => {}
            _ => return Err(bad()),
        }
    }
    Ok(log)
}

fn mismatch(msg: String) -> CosimError {
    CosimError::Mismatch(msg)
}

/// Runs the training co-simulation of the design generated in `dir`.
pub fn run_train(dir: &Path, plan: &NetworkPlan, net: &Network, opts: TrainCosimOptions) -> Result<TrainCosimResult, CosimError> {
    let m = match (&plan.trainer, &plan.feedback) {
        (Some(t), _) => t.m,
        (None, Some(f)) => f.m,
        _ => return Err(CosimError::Harness("the design has no trainer".into())),
    };
    let dir = &std::path::absolute(dir).map_err(io(dir))?;
    let model = net.model();
    let training = model.training.ok_or_else(|| CosimError::Harness("the model has no training: section".into()))?;
    let training = fptgen_sim::model::Training { iterations: opts.iterations, ..training };

    let (inputs, targets, requests) = write_buffer(dir, net, m, opts.seed)?;
    let run_dir = dir.join("sim/run");

    // The simulator.
    let buffer = Buffer::new(model, inputs, targets).map_err(|e| CosimError::Harness(e.to_string()))?;
    let exp = expect::expectation(net, training, buffer, plan, opts.iterations).map_err(CosimError::Harness)?;
    let expected = &exp.events;

    let obj = build(dir, BuildKind::Train)?;
    let exe = dir.join(obj).join(format!("V{}", plan.name));
    let mut result = TrainCosimResult {
        predicted_cycles: exp.cycles.iter().copied().max().unwrap_or(0),
        predicted: exp.cycles.clone(),
        feedback: plan.feedback.is_some(),
        ..Default::default()
    };
    let rates: &[u32] = if opts.interrupt_permille > 0 { &[0, opts.interrupt_permille] } else { &[0] };
    for &rate in rates {
        let log_path = run_dir.join(format!("train-{rate}.log"));
        let out = run_harness(&exe, dir, plan, &opts, rate, &log_path)?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() || !stdout.lines().any(|l| l.starts_with("RESULT ")) {
            return Err(CosimError::Harness(format!(
                "training harness exit {:?}\n{}{}",
                out.status.code(),
                stdout,
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        let log = parse_log(&std::fs::read_to_string(&log_path).map_err(io(&log_path))?)?;
        let what = if rate == 0 { "uninterrupted run".to_string() } else { format!("run with interruptions ({rate}/1000)") };

        // Events, in order.
        for (k, want) in expected.iter().enumerate() {
            match log.events.get(k) {
                Some(got) if got == want => {}
                Some(got) => {
                    return Err(mismatch(format!(
                        "{what}: event {k} differs: hardware {}, simulator {}",
                        describe(got),
                        describe(want)
                    )))
                }
                None => {
                    return Err(mismatch(format!("{what}: the hardware stopped before event {k}: {}", describe(want))))
                }
            }
        }
        if log.events.len() > expected.len() {
            return Err(mismatch(format!("{what}: extra hardware event {}", describe(&log.events[expected.len()]))));
        }

        // Cycles per iteration.
        if rate == 0 {
            let start = log.start.ok_or_else(|| mismatch(format!("{what}: st_busy never rose")))?;
            let mut prev = start;
            let mut cycles = Vec::new();
            for (k, &(it, c)) in log.iterations.iter().enumerate() {
                if it != k as u64 + 1 {
                    return Err(mismatch(format!("{what}: st_iteration went to {it}, expected {}", k + 1)));
                }
                cycles.push(c - prev);
                prev = c;
            }
            if cycles.len() as u64 != opts.iterations {
                return Err(mismatch(format!("{what}: {} iterations completed, expected {}", cycles.len(), opts.iterations)));
            }
            if let Some((k, (c, want))) = cycles.iter().zip(&exp.cycles).enumerate().find(|(_, (c, want))| c != want) {
                return Err(mismatch(format!(
                    "{what}: iteration {k} took {c} cycles; the schedule gives {want} (every iteration: measured {cycles:?}, schedule {:?})",
                    exp.cycles
                )));
            }
            result.iteration_cycles = cycles;
        }

        // Answers, against the parameters committed when each was accepted.
        result.answers += check_answers(net, &exp.changes, &log.answers, &requests, opts.iterations, &what)?;
        result.pauses += log.pauses;

        // Final memories.
        result.final_params = check_final_memories(dir, plan, model, &exp.final_params, &what)?;
    }
    (result.groups, result.losses, result.updates) = exp.counts;
    result.synthetic = exp.synthetic;
    result.trained_layers = exp.trained_layers.clone();
    Ok(result)
}

/// Writes [`Stimulus`] for the design in `dir` and returns it.
pub(crate) fn write_buffer(dir: &Path, net: &Network, m: usize, seed: u64) -> Result<Stimulus, CosimError> {
    let model = net.model();
    let yf = model.output_format();
    let (inputs, targets, requests) = buffer_stimulus(net, m, seed);
    let run_dir = dir.join("sim/run");
    std::fs::create_dir_all(run_dir.join("mem")).map_err(io(&run_dir))?;
    let mut text = String::new();
    for (x, y) in inputs.iter().zip(&targets) {
        text += &format!("{} {}\n", hex(x, model.input_format), hex(y, yf));
    }
    let request_text: String = requests.iter().map(|x| hex(x, model.input_format) + "\n").collect();
    fptgen_generator::output::add_files(
        dir,
        fptgen_generator::output::COSIM,
        &[
            fptgen_generator::render::GeneratedFile::text("sim/run/buffer.hex", text),
            fptgen_generator::render::GeneratedFile::text("sim/run/requests.hex", request_text),
        ],
    )?;

    Ok((inputs, targets, requests))
}

/// An answer from the log: request, iteration, group, output hex.
pub(crate) type Answer = (usize, u64, u64, String);

pub(crate) fn check_answers(
    net: &Network,
    changes: &[((u64, u64), Vec<(ParamRef, i128)>)],
    answers: &[Answer],
    requests: &[Vec<i128>],
    iterations: u64,
    what: &str,
) -> Result<usize, CosimError> {
    let mut by_state: BTreeMap<(u64, u64), Vec<&Answer>> = BTreeMap::new();
    for a in answers {
        by_state.entry((a.1, a.2)).or_default().push(a);
    }
    let model = net.model().clone();
    let yf = model.output_format();
    let mut checked = 0;
    at_committed(net.params(), changes, iterations, by_state, &format!("{what}: an answer"), |params, list| {
        let n = Network::new(model.clone(), params.clone())?;
        for (r, it, g, got) in list {
            let want = hex(&n.infer(&requests[*r])?, yf);
            if *got != want {
                return Err(mismatch(format!(
                    "{what}: request {r} (accepted in iteration {it}, group or sample {g}): out_data = {got}, the simulator with the committed parameters gives {want}"
                )));
            }
            checked += 1;
        }
        Ok(())
    })?;
    Ok(checked)
}

/// Calls `f` with the committed parameters of every state `(iteration,
/// group or sample)` that `items` holds, and that state's items: the
/// parameters before the change of that state (`changes`, in order, from
/// `initial`), or the trained ones at `(iterations, 0)`, the end. A state
/// training never reached is a mismatch naming `kind`.
pub(crate) fn at_committed<T>(
    initial: &Params,
    changes: &[((u64, u64), Vec<(ParamRef, i128)>)],
    iterations: u64,
    mut items: BTreeMap<(u64, u64), Vec<T>>,
    kind: &str,
    mut f: impl FnMut(&Params, Vec<T>) -> Result<(), CosimError>,
) -> Result<(), CosimError> {
    let mut params: Params = initial.clone();
    for (key, list) in changes {
        if let Some(v) = items.remove(key) {
            f(&params, v)?;
        }
        for &(p, v) in list {
            p.set(&mut params, v);
        }
    }
    if let Some(v) = items.remove(&(iterations, 0)) {
        f(&params, v)?;
    }
    if let Some(((it, g), _)) = items.iter().next() {
        return Err(mismatch(format!("{kind} is tagged iteration {it}, group {g}, which training never reached")));
    }
    Ok(())
}

/// Compares the final contents of every trainable memory, dumped by the
/// harness, with the simulator's trained parameters `params`, column by
/// column through the memory's layout; returns the parameters compared.
pub(crate) fn check_final_memories(dir: &Path, plan: &NetworkPlan, model: &Model, params: &Params, what: &str) -> Result<usize, CosimError> {
    check_memories(dir, plan, model, params, "final", "final memory", "the simulator's trained value", what)
}

/// Compares the trainable memories' images `sim/run/<image>.<suffix>`
/// (written by a harness) with `params`, column by column through each
/// memory's layout; a difference is a mismatch naming `label`, the memory,
/// word, column and parameter, what the image holds and `expected` (what
/// the simulator's value is). Returns the parameters compared.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_memories(
    dir: &Path,
    plan: &NetworkPlan,
    model: &Model,
    params: &Params,
    suffix: &str,
    label: &str,
    expected: &str,
    what: &str,
) -> Result<usize, CosimError> {
    let mut count = 0;
    // A plan's layer is the model's layer of the same name (a folded batch
    // norm has none, and is never trainable).
    for lp in &plan.layers {
        let Some(k) = model.layers.iter().position(|l| l.name == lp.name) else { continue };
        let p = &params.layers[k];
        for m in lp.trainable() {
            let tensor = &p.tensors[m.tensor];
            let path = dir.join("sim/run").join(format!("{}.{suffix}", m.mem.file));
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            let got: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('@'))
                .collect();
            let want = m.image(tensor);
            let want: Vec<&str> = want.lines().collect();
            if got.len() != want.len() {
                return Err(mismatch(format!("{what}: {} has {} words, expected {}", path.display(), got.len(), want.len())));
            }
            let (f, w) = (m.raw_format, m.mem.col_width as usize);
            let bits = m.mem.cols * w;
            for (word, (g, x)) in got.iter().zip(&want).enumerate() {
                let (gb, wb) = (Bits::from_hex(g, bits), Bits::from_hex(x, bits));
                for c in 0..m.mem.cols {
                    let gv = gb.as_ref().map(|b| b.field(c * w, m.mem.col_width));
                    let wv = wb.as_ref().map(|b| b.field(c * w, m.mem.col_width));
                    if gv != wv {
                        let name = m.index_at(word, c).map_or("padding".to_string(), |i| format!("{}.{}", lp.name, m.describe(i)));
                        return Err(mismatch(format!(
                            "{what}: {label} {} word {word} column {c} ({name}) = {:?}, {expected} is {:?}",
                            m.mem.file,
                            gv.map(|v| f.from_bits(v)),
                            wv.map(|v| f.from_bits(v))
                        )));
                    }
                }
            }
            count += tensor.len();
        }
    }
    Ok(count)
}
