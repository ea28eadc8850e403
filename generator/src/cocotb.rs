//! The cocotb bench of the AXI wrapper (issue 39; `fptgen generate --axi`):
//! `cocotb/test_<name>_axi.py` drives the wrapper through cocotbext-axi's
//! AXI models and compares every answer with `cocotb/<name>_expected.json`,
//! which fptgen writes here from its bit-accurate simulator: stream vectors
//! and their outputs, the weights as the weight windows hold them, and,
//! when a short training run fits the bench's budget, the sample buffer,
//! the trained weights, the event counters and outputs after training.
//! Run through the design's FuseSoC core ([`crate::fusesoc`], target
//! `sim`) or any cocotb flow (docs/verification.md).

use std::collections::BTreeMap;

use askama::Template;
use fptgen_sim::model::Model;
use fptgen_sim::network::Network;
use fptgen_sim::train::eval::Buffer;
use fptgen_sim::weights::Params;
use serde::Serialize;

use crate::axi::AxiPlan;
use crate::expect::Event;
use crate::plan::NetworkPlan;
use crate::render::{GenInfo, GeneratedFile};

/// The stimulus seed of the bench's data.
pub const SEED: u64 = 1;

/// Cycles the stream test may take at full rate (vectors = this / II,
/// from 16 to 1,000).
pub const STREAM_CYCLES: u64 = 40_000;

/// Cycles a bench training run may take (iterations times cycles per
/// iteration); a design whose single iteration takes longer gets a bench
/// without the training test (the data says why).
pub const TRAIN_CYCLES: u64 = 200_000;

/// Outputs compared after training.
const AFTER_VECTORS: usize = 16;

#[derive(Debug, Serialize)]
struct Stream {
    in_w: u32,
    out_w: u32,
    core_in: usize,
    core_in_beats: usize,
    bus_in: usize,
    in_k: usize,
    core_out: usize,
    core_out_beats: usize,
    bus_out: usize,
    out_k: usize,
    batch: u32,
}

#[derive(Debug, Serialize)]
struct Tensor {
    name: String,
    base: u64,
    depth: usize,
    cols: usize,
    col_bits: usize,
    width: u32,
    signed: bool,
    /// Word `w`, column `c` at `w * cols + c`; `None` for padding.
    codes: Vec<Option<i64>>,
}

#[derive(Debug, Serialize)]
struct Training {
    iterations: u64,
    feedback: bool,
    words: usize,
    word_w: usize,
    target_at: usize,
    ld_bytes: usize,
    samples: Vec<Vec<u64>>,
    targets: Vec<Vec<u64>>,
    /// Per tensor, as [`Tensor::codes`].
    #[serde(rename = "final")]
    final_: Vec<Vec<Option<i64>>>,
    /// The simulator's parameter changes in order: `(iteration, group or
    /// sample, [(tensor, position, code)])`, each made after the state
    /// `(iteration, group or sample)`, whose committed parameters (what a
    /// pause there reads) are the initial ones with every change before it
    /// (positions as in [`Tensor::codes`]).
    changes: Vec<(u64, u64, Vec<(usize, usize, i64)>)>,
    events: [u64; 3],
    last_loss: Option<u64>,
    /// The schedule's cycles of the run.
    cycles: u64,
    expected_after: Vec<Vec<u64>>,
}

#[derive(Debug, Serialize)]
struct BenchData {
    design: String,
    module: String,
    seed: u64,
    registers: BTreeMap<&'static str, u64>,
    offsets: BTreeMap<&'static str, u32>,
    status: BTreeMap<&'static str, u32>,
    stream: Stream,
    cycles: BTreeMap<&'static str, u64>,
    vectors: Vec<Vec<u64>>,
    expected: Vec<Vec<u64>>,
    tensors: Vec<Tensor>,
    training: Option<Training>,
    /// Why a design with a trainer has no training test.
    training_note: Option<String>,
}

/// The bench's file names and module.
#[derive(Debug, Clone)]
pub struct BenchNames {
    /// The wrapper's module.
    pub module: String,
    /// The design.
    pub design: String,
    /// The Python module (`test_<name>_axi`).
    pub py: String,
    /// The expected data's file name (`<name>_expected.json`).
    pub data: String,
    /// The core's VLNV (for the bench's header).
    pub vlnv: String,
}

impl BenchNames {
    /// The names for the wrapper `a` of design `n`.
    pub fn of(n: &NetworkPlan, a: &AxiPlan) -> BenchNames {
        BenchNames {
            module: a.module.clone(),
            design: n.name.clone(),
            py: format!("test_{}", a.module),
            data: format!("{}_expected.json", n.name),
            vlnv: format!("fptgen:design:{}:{}", n.name, crate::VERSION),
        }
    }

    /// The bench's files under `cocotb/`.
    pub fn files(&self) -> Vec<String> {
        vec![format!("{}.py", self.py), self.data.clone()]
    }
}

#[derive(Template)]
#[template(path = "cocotb_test.py", escape = "none")]
struct BenchTemplate<'a> {
    gen: &'a GenInfo,
    b: &'a BenchNames,
}

#[derive(Template)]
#[template(path = "report.json")]
struct JsonTemplate {
    json: String,
}

/// The codes of the trainable tensor `(layer, key)` as its window holds
/// them, from `params` of `model`.
fn window_codes(plan: &NetworkPlan, model: &Model, params: &Params, layer: &str, key: &str) -> Vec<Option<i64>> {
    let Some(lp) = plan.layers.iter().find(|l| l.name == layer) else { return Vec::new() };
    let Some(k) = model.layers.iter().position(|l| l.name == layer) else { return Vec::new() };
    let Some(m) = lp.trainable().into_iter().find(|m| m.key == key) else { return Vec::new() };
    let tensor = &params.layers[k].tensors[m.tensor];
    (0..m.mem.depth).flat_map(|w| (0..m.mem.cols).map(move |c| (w, c))).map(|(w, c)| m.index_at(w, c).map(|i| tensor[i] as i64)).collect()
}

/// The simulator's changes (`(state, [(parameter, code)])`) as windows and
/// positions in them ([`Training::changes`]).
#[allow(clippy::type_complexity)]
fn window_changes(
    plan: &NetworkPlan,
    model: &Model,
    windows: &[crate::axi::Window],
    changes: &[((u64, u64), Vec<(fptgen_sim::train::ParamRef, i128)>)],
) -> Result<Vec<(u64, u64, Vec<(usize, usize, i64)>)>, String> {
    // (layer, tensor, flat index) -> (window, position)
    let mut at: BTreeMap<(usize, usize, usize), (usize, usize)> = BTreeMap::new();
    for (k, w) in windows.iter().enumerate() {
        let (Some(lp), Some(layer)) = (plan.layers.iter().find(|l| l.name == w.t.layer), model.layers.iter().position(|l| l.name == w.t.layer)) else {
            continue;
        };
        let Some(m) = lp.trainable().into_iter().find(|m| m.key == w.t.key) else { continue };
        for (pos, (word, col)) in (0..m.mem.depth).flat_map(|wd| (0..m.mem.cols).map(move |c| (wd, c))).enumerate() {
            if let Some(i) = m.index_at(word, col) {
                at.insert((layer, m.tensor, i), (k, pos));
            }
        }
    }
    changes
        .iter()
        .map(|((it, g), list)| {
            let writes = list
                .iter()
                .map(|(p, v)| {
                    at.get(&(p.layer, p.tensor, p.index))
                        .map(|&(k, pos)| (k, pos, *v as i64))
                        .ok_or_else(|| format!("a trained parameter (layer {}, tensor {}, value {}) is in no weight window", p.layer, p.tensor, p.index))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok((*it, *g, writes))
        })
        .collect()
}

fn bits(v: &[i128], f: fptgen_sim::fixed::Format) -> Vec<u64> {
    v.iter().map(|&r| f.bits(r)).collect()
}

/// The bench of the wrapper `a` of design `n` (planned from `model` with
/// `params`): the Python module and its expected data.
pub fn render(model: &Model, params: &Params, n: &NetworkPlan, a: &AxiPlan, gen: &GenInfo) -> Result<Vec<GeneratedFile>, askama::Error> {
    let err = |e: String| askama::Error::Custom(e.into());
    let net = Network::new(model.clone(), params.clone()).map_err(|e| err(e.to_string()))?;
    let (xf, yf) = (model.input_format, model.output_format());
    let count = (STREAM_CYCLES / a.ii(n).max(1)).clamp(16, 1000) as usize;
    let count = count - count % a.batch as usize;
    let count = count.max(a.batch as usize);
    let inputs = crate::expect::stimulus(&net, count, SEED);
    let outputs = net.infer_batch(&inputs).map_err(|e| err(e.to_string()))?;

    let mut registers = BTreeMap::new();
    registers.insert("ID", u64::from(crate::axi::ID));
    registers.insert("VERSION", u64::from(a.version));
    registers.insert("INPUTS", a.inputs as u64);
    registers.insert("OUTPUTS", a.outputs as u64);
    registers.insert("FORMATS", u64::from(a.formats_word()));
    registers.insert("STREAM_IN", u64::from(a.stream_in_word()));
    registers.insert("STREAM_OUT", u64::from(a.stream_out_word()));
    registers.insert("BATCH", u64::from(a.batch));
    registers.insert("TRAINER", u64::from(a.trainer_word()));
    let status = BTreeMap::from([("busy", 1), ("paused", 2), ("done", 4), ("readable", 8), ("writable", 16), ("idle", 0b11000), ("finished", 0b11100)]);

    let windows = a.trainer.as_ref().map_or(&[][..], |t| &t.windows[..]);
    let tensors: Vec<Tensor> = windows
        .iter()
        .map(|w| Tensor {
            name: format!("{}.{}", w.t.layer, w.t.key),
            base: w.base,
            depth: w.depth,
            cols: w.mem_cols,
            col_bits: w.t.col_w,
            width: w.t.width,
            signed: w.t.signed,
            codes: window_codes(n, model, params, &w.t.layer, w.t.key),
        })
        .collect();

    let (training, training_note) = match (&a.trainer, model.training) {
        (Some(t), Some(tr)) => {
            let per = n.trainer.as_ref().map(|t| t.cycles_per_iteration).or(n.feedback.as_ref().map(|f| f.cycles_per_iteration_max)).unwrap_or(0);
            let iterations = tr.iterations.clamp(1, 2);
            if per * iterations > TRAIN_CYCLES {
                (None, Some(format!("a training iteration takes {per} cycles, above the bench's budget of {TRAIN_CYCLES}: the bench streams and reads and writes weights but does not train; `fptgen cosim --axi --train` checks training in Verilator")))
            } else {
                match training_data(model, &net, n, t, tr, iterations, &inputs, windows, a.batch as usize) {
                    Ok(data) => (Some(data), None),
                    // The bench without its training test rather than no
                    // design: the note says why.
                    Err(e) => (None, Some(format!("the simulator's expectation of a training run failed: {e}"))),
                }
            }
        }
        _ => (None, None),
    };

    let data = BenchData {
        design: n.name.clone(),
        module: a.module.clone(),
        seed: SEED,
        registers,
        offsets: a.regs.iter().map(|r| (r.name, r.offset)).collect(),
        status,
        stream: Stream {
            in_w: a.in_w,
            out_w: a.out_w,
            core_in: a.core_in,
            core_in_beats: a.core_in_beats,
            bus_in: a.bus_in,
            in_k: a.in_k,
            core_out: a.core_out,
            core_out_beats: a.core_out_beats,
            bus_out: a.bus_out,
            out_k: a.out_k,
            batch: a.batch,
        },
        cycles: BTreeMap::from([("ii", a.ii(n)), ("latency", a.latency(n))]),
        vectors: inputs.iter().map(|x| bits(x, xf)).collect(),
        expected: outputs.iter().map(|y| bits(y, yf)).collect(),
        tensors,
        training,
        training_note,
    };
    let json = serde_json::to_string(&data).map_err(|e| askama::Error::Custom(Box::new(e)))?;
    let names = BenchNames::of(n, a);
    Ok(vec![
        GeneratedFile::text(format!("cocotb/{}.py", names.py), BenchTemplate { gen, b: &names }.render()?),
        GeneratedFile::text(format!("cocotb/{}", names.data), JsonTemplate { json }.render()?),
    ])
}

/// The training test's data: the buffer, the simulator's run of
/// `iterations` from the model's weights (its counters, last loss and
/// trained weights as the windows hold them) and outputs after it.
#[allow(clippy::too_many_arguments)]
fn training_data(
    model: &Model,
    net: &Network,
    n: &NetworkPlan,
    t: &crate::axi::AxiTrainer,
    tr: fptgen_sim::model::Training,
    iterations: u64,
    inputs: &[Vec<i128>],
    windows: &[crate::axi::Window],
    batch: usize,
) -> Result<Training, String> {
    let (xf, yf) = (model.input_format, model.output_format());
    let training = fptgen_sim::model::Training { iterations, ..tr };
    let (samples, targets, _) = crate::expect::buffer_stimulus(net, t.m, SEED);
    let buffer = Buffer::new(model, samples.clone(), targets.clone()).map_err(|e| e.to_string())?;
    let exp = crate::expect::expectation(net, training, buffer, n, iterations)?;
    let mut events = [0u64; 3];
    let mut last_loss = None;
    for e in &exp.events {
        match e {
            Event::Loss { loss, .. } | Event::Base { loss, .. } => {
                events[usize::from(matches!(e, Event::Base { .. }))] += 1;
                last_loss = Some(u64::from(*loss));
            }
            Event::Update { .. } => events[2] += 1,
            Event::Delta { .. } => events[0] += 1,
            Event::Write { .. } => events[1] += 1,
        }
    }
    let trained = Network::new(model.clone(), exp.final_params.clone()).map_err(|e| e.to_string())?;
    let after = trained.infer_batch(&inputs[..AFTER_VECTORS.min(inputs.len())]).map_err(|e| e.to_string())?;
    let k = after.len() - after.len() % batch;
    Ok(Training {
        iterations,
        feedback: t.feedback,
        words: t.words,
        word_w: t.word_w,
        target_at: t.target_at,
        ld_bytes: t.ld_bus / 8,
        samples: samples.iter().map(|x| bits(x, xf)).collect(),
        targets: targets.iter().map(|y| bits(y, yf)).collect(),
        final_: windows.iter().map(|w| window_codes(n, model, &exp.final_params, &w.t.layer, w.t.key)).collect(),
        changes: window_changes(n, model, windows, &exp.changes)?,
        events,
        last_loss: if t.feedback { None } else { last_loss.or(Some(0)) },
        cycles: exp.cycles.iter().sum(),
        expected_after: after[..k].iter().map(|y| bits(y, yf)).collect(),
    })
}
