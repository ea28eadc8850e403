//! Lowering a model's `training:` section with a feedback rule (`rule:
//! dfa`, `drtp` or `sgm`) to its hardware (`templates/fb_top.v` with
//! `rtl/fptgen_fb_ctrl.v`, `fptgen_fb_error.v`, one `fptgen_fb_layer.v`
//! per trainable layer and, under `sgm`, one `fptgen_fb_sgm.v` per hidden
//! trainable layer), and the exact schedule (docs/training.md, "Hardware
//! of the feedback rules").
//!
//! A sample takes, from its boundary to the next,
//! `3 + E1 + C * (1 + sum_l O_l) + H + U` cycles, plus `D` for sample 0 of an
//! iteration (the buffer starts then): one cycle at the boundary, the
//! sample enters the cycle after, its output is taken `E1 + 1` cycles
//! later, with `E1` the pipeline's latency for one vector
//! ([`crate::train_plan::evaluation_cycles`]); `C` the network's
//! outputs, `O_l` the outputs of trainable layer `l`, `D` the buffer's
//! first-sample delay, and `U` the update walk: 3 cycles for every
//! trainable parameter whose row's delta is nonzero (a conv2d's row: any
//! of its pixels' deltas; and then `P_l + 3` more, `P_l` its output
//! pixels, to sum the step), 1 for the others; `H`
//! is 0, or under `sgm` the modules' time, `max_l C * (O_l + C) + 2`. `U`
//! depends on the data; co-simulation checks every sample's count from the
//! simulator's deltas, and the report gives the bounds (every row's delta
//! zero, `U` = T, or every one nonzero).
//! Training starts with one cycle that waits for requests in flight (none
//! in an uninterrupted run), counted in iteration 0.

use fptgen_sim::model::{Model, Rule};
use fptgen_sim::train::hardware::{feedback_layers, module_shapes, Derivative, Feedback, Sgm, SgmModule};
use serde::Serialize;

use crate::plan::{clog2, NetworkPlan};
use crate::train_plan::{buffer_layout, evaluation_cycles, train_tensors, TrainTensor};

/// One trainable layer of a feedback trainer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FbLayer {
    /// Its index among the trainable layers.
    pub index: usize,
    /// Layer name.
    pub name: String,
    /// Inputs and outputs.
    pub n_in: usize,
    /// Outputs.
    pub n_out: usize,
    /// Input code bits and signedness (1: two's complement).
    pub x_w: u32,
    /// Input signedness.
    pub x_s: u32,
    /// Output code bits.
    pub a_w: u32,
    /// Output signedness.
    pub a_s: u32,
    /// `f'` (`rtl/fptgen_fb_layer.v`'s `FP_MODE`): 0 always (linear); 1
    /// `a > a_min` (relu); 2 `a_min < a < a_max` (dense_int8's relu6).
    pub fp_mode: u32,
    /// `A_MIN`, a signed output code.
    pub a_min: i128,
    /// `A_MAX`, a signed output code.
    pub a_max: i128,
    /// `X_OFF`: subtracted from every input code in the weight step (a
    /// dense_int8 layer's input zero point; 0 for dense).
    pub x_off: i128,
    /// 0: the output layer (`g = e`); 1: dfa; 2: drtp; 3: sgm.
    pub mode: u32,
    /// The feedback LFSR's initial state.
    pub seed: u64,
    /// Shifts of the weight and bias steps.
    pub shift_w: i32,
    /// Shift of the bias step.
    pub shift_b: i32,
    /// The weights' steps round stochastically: their rounding LFSR's
    /// initial state (`None`: to nearest).
    pub round_w: Option<u64>,
    /// The same for the biases.
    pub round_b: Option<u64>,
    /// The stream the layer takes and the one it gives (tapped).
    pub input: String,
    /// The stream it gives.
    pub output: String,
    /// Mode 3: its synthetic-gradient module.
    pub sgm: Option<FbSgm>,
    /// A conv2d layer (`rtl/fptgen_fb_conv.v`): its geometry.
    pub conv: Option<FbConv>,
    /// Bits of a beat of its input stream and of its output stream (a
    /// dense layer's whole vectors, a conv2d's pixels).
    pub x_beat_w: usize,
    /// Bits of a beat of its output stream.
    pub a_beat_w: usize,
}

/// The geometry of a trainable conv2d layer in a feedback trainer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FbConv {
    /// Input image height, width, channels.
    pub h: usize,
    /// Width.
    pub w: usize,
    /// Channels.
    pub cin: usize,
    /// Output image height and width, filters.
    pub oh: usize,
    /// Output width.
    pub ow: usize,
    /// Filters.
    pub filters: usize,
    /// 1 or 2.
    pub stride: usize,
    /// Padding on top and on the left.
    pub pad_t: usize,
    /// Padding on the left.
    pub pad_l: usize,
}

/// A hidden layer's synthetic-gradient module in hardware
/// (`rtl/fptgen_fb_sgm.v`): its shape from the model, its codes from the
/// archive ([`attach_sgm`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FbSgm {
    /// `sa`, `st`: the shifts aligning the layer's output and the target.
    pub shift_a: u32,
    /// `st`.
    pub shift_t: u32,
    /// The memory images, relative to the design directory.
    pub v_file: String,
    /// The image of `u`.
    pub u_file: String,
    /// The module's codes (None until [`attach_sgm`]).
    #[serde(skip)]
    pub module: Option<SgmModule>,
}

impl FbSgm {
    /// `s_h` (0 before the codes are attached).
    pub fn shift_h(&self) -> i32 {
        self.module.as_ref().map_or(0, |m| m.shift_h)
    }

    /// `s_g`.
    pub fn shift_g(&self) -> i32 {
        self.module.as_ref().map_or(0, |m| m.shift_g)
    }

    /// `c` as the packed `C_VALUES` parameter, entry 0 in the least
    /// significant bits.
    pub fn c_values(&self) -> String {
        let c = self.module.as_ref().map(|m| m.c.clone()).unwrap_or_default();
        concat_lsb_first(c.into_iter().map(|v| format!("32'h{:08x}", (v as i64 as u64) & 0xffff_ffff)))
    }

    /// The `$readmemh` images of `v` and `u`: one 8-bit two's complement
    /// code per line.
    pub fn images(&self) -> Option<[(String, String); 2]> {
        let m = self.module.as_ref()?;
        let hex = |codes: &[i128]| codes.iter().map(|&c| format!("{:02x}\n", (c as i64 as u64) & 0xff)).collect::<String>();
        Some([(self.v_file.clone(), hex(&m.v)), (self.u_file.clone(), hex(&m.u))])
    }
}

/// Attaches the codes of `sgm` to the modules of `plan`. Errors name the
/// layer without a module, or whose module has another shape.
pub fn attach_sgm(plan: &mut FbHwPlan, sgm: &Sgm, model: &Model) -> Result<(), String> {
    for l in &mut plan.layers {
        let Some(s) = &mut l.sgm else { continue };
        let li = model.layers.iter().position(|m| m.name == l.name).ok_or_else(|| format!("layer '{}' is not in the model", l.name))?;
        let m = sgm.module(li).ok_or_else(|| format!("rule sgm: layer '{}' has no synthetic-gradient module", l.name))?;
        if (m.outputs, m.classes, m.shift_a, m.shift_t) != (l.n_out, plan.c, s.shift_a, s.shift_t) {
            return Err(format!("rule sgm: the module of layer '{}' does not fit the layer", l.name));
        }
        s.module = Some(m.clone());
    }
    Ok(())
}

impl FbLayer {
    /// `ACC`: the controller's cycles summing a step of this layer before
    /// its read, `P + 1` for a conv2d with `P` output pixels, 0 for a dense
    /// layer (`rtl/fptgen_fb_conv.v`).
    pub fn acc(&self) -> u64 {
        self.conv.map_or(0, |c| (c.oh * c.ow) as u64 + 1)
    }

    /// Cycles of the update walk for one parameter of a row whose delta is
    /// nonzero: read, wait, write, and for a conv2d the start of the sum
    /// and `ACC` cycles before them.
    pub fn written_cycles(&self) -> u64 {
        3 + if self.acc() > 0 { self.acc() + 1 } else { 0 }
    }

    /// The LFSR seed as a 32-bit Verilog literal.
    pub fn seed_literal(&self) -> String {
        format!("32'h{:08x}", self.seed)
    }

    /// `STOCH_W` and `SEED_W` (`.0`: 0 or 1, `.1` a 32-bit literal) of
    /// the weights' rounding; [`FbLayer::rounding_b`] the biases'.
    pub fn rounding_w(&self) -> (u32, String) {
        rounding(self.round_w)
    }

    /// `STOCH_B` and `SEED_B`.
    pub fn rounding_b(&self) -> (u32, String) {
        rounding(self.round_b)
    }

    /// The rounding of the steps in words, for the design's comments.
    pub fn rounding_words(&self) -> &'static str {
        match (self.round_w.is_some(), self.round_b.is_some()) {
            (false, false) => "rounded to nearest",
            (true, true) => "rounded stochastically",
            (true, false) => "weights rounded stochastically, biases to nearest",
            (false, true) => "weights rounded to nearest, biases stochastically",
        }
    }

    /// `f'` in words, for the design's comments.
    pub fn derivative(&self) -> String {
        match self.fp_mode {
            0 => "linear".into(),
            1 if self.a_min == 0 && self.x_off == 0 => "relu".into(),
            1 => format!("f' = a > {}", self.a_min),
            _ => format!("f' = {} < a < {}", self.a_min, self.a_max),
        }
    }

    /// The input offset in words, for the design's comments ("" for none).
    pub fn offset(&self) -> String {
        if self.x_off == 0 {
            String::new()
        } else {
            format!(", input x - ({})", self.x_off)
        }
    }

    /// The layer in one line, for the design's header comment: its
    /// geometry, its feedback signal `g`, `f'`, the input offset, the steps
    /// and their rounding.
    pub fn summary(&self) -> String {
        let conv = match &self.conv {
            Some(cv) => format!("conv2d {}x{}x{} -> {}x{}x{} (fptgen_fb_conv), ", cv.h, cv.w, cv.cin, cv.oh, cv.ow, cv.filters),
            None => String::new(),
        };
        let g = match (self.mode, &self.sgm) {
            (0, _) => "g = e (the output layer)".to_string(),
            (1, _) => "g = B e (dfa)".to_string(),
            (2, _) => "g = -B[:, k*] (drtp)".to_string(),
            (_, Some(s)) => format!("g = R(U h, {}), h = sat(R(V [a, t] + c, {})) (sgm, fptgen_fb_sgm)", s.shift_g(), s.shift_h()),
            (m, None) => unreachable!("mode {m} is sgm's and has its module"),
        };
        format!(
            "{conv}{} x {}, {g}, {}{}, steps {} (weights) and {} (biases), {}",
            self.n_in,
            self.n_out,
            self.derivative(),
            self.offset(),
            self.weight_step(),
            self.bias_step(),
            self.rounding_words()
        )
    }

    /// The weight step's factor, `2^-k` (or `2^k` for a left shift).
    pub fn weight_step(&self) -> String {
        power_of_two(-self.shift_w)
    }

    /// The bias step's factor.
    pub fn bias_step(&self) -> String {
        power_of_two(-self.shift_b)
    }
}

fn rounding(seed: Option<u64>) -> (u32, String) {
    match seed {
        Some(s) => (1, format!("32'h{s:08x}")),
        None => (0, "32'h00000001".into()),
    }
}

fn power_of_two(e: i32) -> String {
    if e == 0 {
        "1".into()
    } else {
        format!("2^{e}")
    }
}

/// A feedback-rule trainer's hardware and schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FbHwPlan {
    /// `dfa`, `drtp` or `sgm`.
    pub rule: &'static str,
    /// M, buffered samples.
    pub m: usize,
    /// C, the network's outputs.
    pub c: usize,
    /// T, trainable parameters.
    pub t: u64,
    /// Trainable layers, in model order.
    pub layers: Vec<FbLayer>,
    /// Trainable tensors, in training order.
    pub tensors: Vec<TrainTensor>,
    /// Bits of an error value and of a delta.
    pub e_w: u32,
    /// Bits of a delta.
    pub d_w: u32,
    /// Bits of a parameter code (signed) and of a saturated step.
    pub param_w: u32,
    /// Bits of a saturated step.
    pub s_w: u32,
    /// Bits of `mon_value` (a delta or a parameter, sign-extended) and of
    /// `mon_index`.
    pub value_w: u32,
    /// Bits of `mon_index`.
    pub ix_w: usize,
    /// Bits of `st_sample`.
    pub sample_w: usize,
    /// Requests served per sample boundary at most.
    pub serve_max: usize,
    /// The sample buffer's words per input vector, their width, and its
    /// first-sample delay D.
    pub words: usize,
    /// Bits per word.
    pub word_w: usize,
    /// D.
    pub first_sample: u64,
    /// E1, the pipeline's latency for one vector.
    pub eval1: u64,
    /// H: cycles of the synthetic-gradient modules' state (0 without).
    pub sgm_cycles: u64,
    /// Cycles of a sample without the update walk (and without D).
    pub sample_fixed: u64,
    /// Cycles of a sample's update walk when every delta is nonzero (the
    /// most; the least is T).
    pub walk_max: u64,
    /// Cycles of an iteration when every delta is nonzero (the most).
    pub cycles_per_iteration_max: u64,
    /// Cycles of an iteration when every delta is zero (the least).
    pub cycles_per_iteration_min: u64,
}

impl FbHwPlan {
    /// Width of a buffered sample's index (0..M-1), `fptgen_sample_buf`'s
    /// x_sel.
    pub fn sample_w(&self) -> usize {
        crate::plan::clog2(self.m as u64)
    }

    /// Width of a sample count (0..M), `fptgen_sample_buf`'s count.
    pub fn count_w(&self) -> usize {
        crate::plan::clog2(self.m as u64 + 1)
    }

    /// The host port's widths ([`crate::train_plan::host_widths`]).
    pub fn host(&self) -> crate::train_plan::HostWidths {
        crate::train_plan::host_widths(&self.tensors)
    }

    /// Cycles before iteration 0's first sample boundary (the controller
    /// waits for requests in flight).
    pub const START_CYCLES: u64 = 1;

    /// A sample's cycles with update walk `u` (sample 0 of an iteration
    /// also waits for the buffer).
    pub fn sample_cycles(&self, first: bool, u: u64) -> u64 {
        self.sample_fixed + u + if first { self.first_sample } else { 0 }
    }

    /// Bits of the class index k (the controller's `clog2(C)`).
    pub fn k_w(&self) -> usize {
        clog2(self.c as u64)
    }

    /// Whether a layer has a synthetic-gradient module.
    pub fn has_sgm(&self) -> bool {
        self.layers.iter().any(|l| l.sgm.is_some())
    }

    /// Bits of a trainable layer's index (`clog2(L)`).
    pub fn layer_w(&self) -> usize {
        clog2(self.layers.len() as u64)
    }

    /// `v` as a `bits`-bit two's complement Verilog literal.
    fn literal(bits: u32, v: i128) -> String {
        let mask = if bits >= 128 { u128::MAX } else { (1u128 << bits) - 1 };
        format!("{bits}'h{:x}", (v as u128) & mask)
    }

    /// A tensor bound as a `param_w`-bit literal.
    pub fn code(&self, v: i128) -> String {
        Self::literal(self.param_w, v)
    }

    /// The controller's per-tensor and per-layer parameters as (name,
    /// Verilog literal), entry 0 in the least significant bits.
    pub fn ctrl_params(&self) -> Vec<(&'static str, String)> {
        let layer_of = |x: &TrainTensor| self.layers.iter().position(|l| l.name == x.layer).unwrap_or(0);
        let packed = |f: &dyn Fn(&TrainTensor) -> String| concat_lsb_first(self.tensors.iter().map(f));
        vec![
            ("ROWS", packed(&|x| format!("32'd{}", x.rows))),
            ("COLS", packed(&|x| format!("32'd{}", x.cols))),
            ("LAYER", packed(&|x| format!("32'd{}", layer_of(x)))),
            ("BIAS", packed(&|x| format!("1'b{}", u8::from(x.key == "b")))),
            ("N_OUT", concat_lsb_first(self.layers.iter().map(|l| format!("32'd{}", l.n_out)))),
            ("ACC", concat_lsb_first(self.layers.iter().map(|l| format!("32'd{}", l.acc())))),
        ]
    }

    /// The concatenation of every tensor's top-level signal
    /// `<layer>_<key>_<suffix>`, tensor 0 in the least significant bits.
    pub fn ports(&self, suffix: &str) -> String {
        concat_lsb_first(self.tensors.iter().map(|x| format!("{}_{suffix}", x.port())))
    }

    /// `fptgen_param_cursor`'s per-tensor parameters (one block).
    pub fn cursor_params(&self) -> Vec<(&'static str, String)> {
        let packed = |f: &dyn Fn(&TrainTensor) -> String| concat_lsb_first(self.tensors.iter().map(f));
        vec![
            ("ROWS", packed(&|x| format!("32'd{}", x.rows))),
            ("COLS", packed(&|x| format!("32'd{}", x.cols))),
            ("PE", packed(&|x| format!("32'd{}", x.pe))),
            ("SIMD", packed(&|x| format!("32'd{}", x.simd))),
            ("WIDTH", packed(&|x| format!("32'd{}", x.width))),
            ("SIGNED", packed(&|x| format!("1'b{}", u8::from(x.signed)))),
            ("LO", packed(&|x| self.code(x.lo))),
            ("HI", packed(&|x| self.code(x.hi))),
        ]
    }
}

fn concat_lsb_first(items: impl DoubleEndedIterator<Item = String>) -> String {
    let parts: Vec<String> = items.rev().collect();
    format!("{{{}}}", parts.join(", "))
}

/// The feedback trainer for `model` (None without a `training:` section or
/// with rule `es`). The model's trainable layers are dense, conv2d or dense_int8
/// ([`fptgen_sim::model`] refuses others at load), so the plan's layer of
/// the same name is the model's.
pub fn fb_plan(model: &Model, net: &NetworkPlan) -> Option<FbHwPlan> {
    let tr = model.training.as_ref()?;
    if !matches!(tr.rule, Rule::Dfa | Rule::Drtp | Rule::Sgm) {
        return None;
    }
    let specs = feedback_layers(model, tr).ok()?;
    let shapes = module_shapes(model);
    let mut layers = Vec::new();
    for (index, s) in specs.iter().enumerate() {
        let ml = &model.layers[s.layer];
        let k = net.layers.iter().position(|l| l.name == ml.name)?;
        let (lp, w) = (&net.layers[k], &net.wiring.layers[k]);
        let conv = match &ml.op {
            fptgen_sim::model::LayerOp::Conv2d(c) => {
                let ([oh, ow], [pad_t, pad_l]) = c.geometry();
                let [h, w, cin] = c.input;
                Some(FbConv { h, w, cin, oh, ow, filters: c.filters, stride: c.stride, pad_t, pad_l })
            }
            _ => None,
        };
        layers.push(FbLayer {
            index,
            name: lp.name.clone(),
            n_in: s.inputs,
            n_out: s.outputs,
            x_w: lp.x.width,
            x_s: lp.x.signed,
            a_w: lp.y.width,
            a_s: lp.y.signed,
            fp_mode: match s.derivative {
                Derivative::Always => 0,
                Derivative::Above(_) => 1,
                Derivative::Between(..) => 2,
            },
            a_min: match s.derivative {
                Derivative::Above(lo) | Derivative::Between(lo, _) => lo,
                Derivative::Always => 0,
            },
            a_max: match s.derivative {
                Derivative::Between(_, hi) => hi,
                _ => 0,
            },
            x_off: s.x_offset,
            mode: match s.feedback {
                Feedback::Error => 0,
                Feedback::Dfa => 1,
                Feedback::Drtp => 2,
                Feedback::Sgm => 3,
            },
            sgm: (s.feedback == Feedback::Sgm)
                .then(|| shapes.iter().find(|m| m.layer == s.layer))
                .flatten()
                .map(|m| FbSgm {
                    shift_a: m.shift_a,
                    shift_t: m.shift_t,
                    v_file: format!("mem/{}_sgm_v.hex", lp.name),
                    u_file: format!("mem/{}_sgm_u.hex", lp.name),
                    module: None,
                }),
            seed: s.seed,
            shift_w: s.shift_w,
            shift_b: s.shift_b,
            round_w: s.round_w,
            round_b: s.round_b,
            input: w.input.clone(),
            output: w.output.clone(),
            conv,
            x_beat_w: lp.in_beat_bits(),
            a_beat_w: lp.outputs / lp.out_beats() * lp.y.width as usize,
        });
    }
    let tensors = train_tensors(net);
    let t: u64 = tensors.iter().map(|x| x.count).sum();
    let c = model.output_len();
    let y = model.output_format();
    let e_w = y.width() + 2;
    let has_sgm = layers.iter().any(|l| l.sgm.is_some());
    // A dfa sum of C errors; an sgm sum of C products of 8-bit codes and
    // errors (its rounding only narrows it: s_g >= 0).
    let d_w = e_w + clog2(c as u64) as u32 + 1 + if has_sgm { 8 } else { 0 };
    let sgm_cycles = layers.iter().filter(|l| l.sgm.is_some()).map(|l| (c * (l.n_out + c) + 2) as u64).max().unwrap_or(0);
    let param_w = tensors.iter().map(|x| x.width + u32::from(!x.signed)).max().unwrap_or(1);
    let outs: usize = layers.iter().map(|l| l.n_out).sum();
    let (words, word_w, first_sample) = buffer_layout(net);
    let eval1 = evaluation_cycles(net, 1);
    let sample_fixed = 3 + eval1 + (c * (1 + outs)) as u64 + sgm_cycles;
    let m = tr.buffer as u64;
    // The walk's bounds: every row's delta zero, or every one nonzero.
    let layer_of = |x: &TrainTensor| layers.iter().find(|l| l.name == x.layer);
    let walk_max: u64 = tensors.iter().map(|x| x.count * layer_of(x).map_or(3, FbLayer::written_cycles)).sum();
    Some(FbHwPlan {
        rule: tr.rule.name(),
        m: tr.buffer,
        c,
        t,
        layers,
        e_w,
        d_w,
        param_w,
        s_w: param_w + 2,
        value_w: d_w.max(param_w),
        ix_w: clog2(t.max(outs as u64)),
        sample_w: clog2(m),
        serve_max: tr.buffer,
        words,
        word_w,
        first_sample,
        eval1,
        sgm_cycles,
        sample_fixed,
        walk_max,
        cycles_per_iteration_max: m * (sample_fixed + walk_max) + first_sample,
        cycles_per_iteration_min: m * (sample_fixed + t) + first_sample,
        tensors,
    })
}
