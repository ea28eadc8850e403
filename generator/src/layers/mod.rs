//! Layer kinds' hardware: one module per kind, owning everything the
//! generator knows about it.
//!
//! The simulator half of a kind is `fptgen_sim::layers::<kind>` (fields,
//! tensors, exact arithmetic); the generator half, here, is its hardware:
//! its plan (folding, cycles per vector and latency, the kind-specific
//! part [`KindPlan`]), its parameter memories ([`TensorMem`], one per
//! tensor of the kind), the RTL library files its module instantiates and
//! the template of its module (`templates/layer_<kind>.v`), behind the
//! [`LayerHw`] trait. Code outside this module never names a kind: it
//! works on the kind-neutral [`LayerPlan`] and asks [`LayerPlan::hw`] for
//! the rest. [`plan`] is the one place that maps a model layer to its
//! kind's hardware; a kind without hardware has none ([`has_hardware`]).
//!
//! Every parameter memory has the same layout (docs/hardware.md,
//! "Parameter memories"): the tensor as a matrix of `rows x cols`
//! parameters (its values in C order, row-major), folded `pe x simd`. The
//! ES trainer's walk (`rtl/fptgen_param_walk.v`) steps through exactly
//! this layout, so a kind chooses how its tensors map to such matrices,
//! and [`TensorMem`] does the rest once: the memory images, the location of
//! a parameter (which the co-simulation's final-memory check uses) and the
//! trainer port widths.
//!
//! Adding a kind's hardware: docs/hardware.md, "Layer kinds".

pub mod batchnorm;
pub mod concat;
pub mod conv2d;
pub mod dense;
pub mod dense_int8;
pub mod flatten;
pub mod int8;
pub mod maxpool2d;
pub mod requantize;
pub mod slice;

use fptgen_sim::fixed::Format;
use fptgen_sim::layers::TensorSpec;
use fptgen_sim::model::{Layer, LayerOp, Model};
use serde::Serialize;

use crate::bits::Bits;
use crate::plan::{clog2, HwFormat, LayerPlan, MemKind, MemPlan};
use crate::render::GenInfo;
use crate::rtl::RtlFile;
use crate::timing::{self, Block};

/// Makes the registry of the kinds with hardware from one list:
/// [`KINDS`], [`KindPlan`] (a variant per kind, named as its
/// `fptgen_sim::model::LayerOp` variant, holding the kind's plan type),
/// [`KindPlan::hw`] and [`plan`]. A line is `Kind(module::Plan) in
/// module;`; the module has `plan(model, layer, input_shape, &op)` and
/// `impl LayerHw for Plan`.
macro_rules! kinds_with_hardware {
    ($($(#[$doc:meta])* $kind:ident($plan:ty) in $module:ident;)*) => {
        /// The model file's `type` of every kind with hardware.
        pub const KINDS: &[&str] = &[$(fptgen_sim::layers::$module::TYPE,)*];

        /// The kind-specific part of a layer's plan, one variant per kind
        /// with hardware. In `report.json` its fields sit next to the
        /// kind-neutral ones of the layer.
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum KindPlan {
            $($(#[$doc])* $kind($plan),)*
        }

        impl KindPlan {
            /// The kind's hardware, for code that is not about one kind.
            pub fn hw(&self) -> &dyn LayerHw {
                match self {
                    $(KindPlan::$kind(p) => p,)*
                }
            }
        }

        /// The hardware plan of `layer` of `model`, fed values shaped
        /// `input_shape`, or None for a kind without hardware
        /// ([`has_hardware`]).
        pub fn plan(model: &Model, layer: &Layer, input_shape: &[usize]) -> Option<LayerPlan> {
            #[allow(unreachable_patterns)] // while every kind has hardware
            match &layer.op {
                $(LayerOp::$kind(op) => Some($module::plan(model, layer, input_shape, op)),)*
                _ => None,
            }
        }
    };
}

kinds_with_hardware! {
    /// A dense layer: `fptgen_dense`.
    Dense(dense::DensePlan) in dense;
    /// A 3x3 convolution: `fptgen_swg` feeding `fptgen_dense`.
    Conv2d(conv2d::Conv2dPlan) in conv2d;
    /// 2x2 max-pooling: `fptgen_maxpool`.
    MaxPool2d(maxpool2d::PoolPlan) in maxpool2d;
    /// Per-channel scale and shift: `fptgen_bn`.
    BatchNorm(batchnorm::BnPlan) in batchnorm;
    /// An image as one vector: `fptgen_flatten`.
    Flatten(flatten::FlattenPlan) in flatten;
    /// Its inputs joined by the top level.
    Concat(concat::ConcatPlan) in concat;
    /// A range of each pixel's channels: wires.
    Slice(slice::SlicePlan) in slice;
    /// An int8 fully connected layer: `fptgen_dense` and `fptgen_requant_vec`.
    DenseInt8(dense_int8::DenseInt8Plan) in dense_int8;
    /// An int8-to-int8 requantization: `fptgen_requant_vec`.
    Requantize(requantize::RequantizePlan) in requantize;
}

/// What the generator needs of a kind's hardware beyond the kind-neutral
/// [`LayerPlan`].
pub trait LayerHw {
    /// The folding, for `report.md` (`PE 2 x SIMD 2, 1 x 1 folds`).
    fn folding(&self) -> String;

    /// The RTL library files the layer's module instantiates (the shared
    /// `fptgen_clog2.vh` comes with every design).
    fn library(&self) -> &'static [RtlFile];

    /// The layer's module `l.module` (`rtl/<network>_<layer>.v`): the
    /// stream ports `in_*`/`out_*` of [`LayerPlan::inputs`] and
    /// [`LayerPlan::outputs`] values, and the trainer port
    /// `<key>_tr_*` of every trainable memory of `l.memories`
    /// (docs/hardware.md, "Interfaces").
    fn module(&self, l: &LayerPlan, gen: &GenInfo) -> Result<String, askama::Error>;

    /// The handshake models of the module's stream blocks, input to
    /// output, fresh from reset ([`crate::timing`]): the layer's cycle
    /// counts, alone and in the network, come from running them.
    fn blocks(&self, l: &LayerPlan) -> Vec<Block>;
}

/// True if the layer's kind has hardware.
pub fn has_hardware(layer: &Layer) -> bool {
    KINDS.contains(&layer.kind().type_name())
}

/// Memories with at least this many bits go to block RAM; smaller frozen
/// ones are left to the tools ("auto"), where a BRAM would be mostly empty.
const BLOCK_MIN_BITS: u64 = 4096;

/// Trainable memories at most this deep are distributed RAM (LUTRAM, one
/// LUT holds 64 words of one bit per read port), deeper ones block RAM. A
/// block RAM is at least 512 words deep, so a shallow memory would leave
/// most of it empty, and with the 4-bit column write enables of narrow
/// parameters yosys slices a bank into 8-bit-wide RAMB18s: MNIST's
/// model_ii56 (fc1 56 words deep) needed 139% of the xcku035's block RAM
/// that way (docs/results/kintex.md).
const LUTRAM_MAX_DEPTH: usize = 64;

/// The parameter memory of one tensor of a layer: the tensor as a matrix of
/// `rows x cols` parameters in C order, folded `pe x simd`. Word
/// `(r / pe) * sf + c / simd`, column `(r % pe) * simd + c % simd` holds
/// parameter `(r, c)`, with `sf = ceil(cols / simd)`; padding columns hold 0.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorMem {
    /// The tensor's index in the kind's tensors
    /// (`fptgen_sim::layers::LayerKind::tensors`, `LayerParams::tensors`).
    pub tensor: usize,
    /// Its key in the weights archive (`w`, `b`, ...): the memory image is
    /// `mem/<layer>_<key>.hex`, the trainer port `<key>_tr_*`.
    pub key: &'static str,
    /// What it is, plural (`weights`, `biases`, ...).
    pub role: &'static str,
    /// Its shape in the weights archive.
    pub shape: Vec<usize>,
    /// The format of every value.
    pub format: HwFormat,
    /// Retrained on the device: a block RAM with a trainer port.
    pub trainable: bool,
    /// Rows of the matrix.
    pub rows: usize,
    /// Parameters per row.
    pub cols: usize,
    /// Rows per memory word.
    pub pe: usize,
    /// Parameters of a row per memory word.
    pub simd: usize,
    /// The hierarchical name of its `fptgen_param_mem` instance inside the
    /// layer's module (`u_dense.u_wmem`).
    pub instance: String,
    /// The memory: `ceil(rows / pe) * ceil(cols / simd)` words of
    /// `pe * simd` columns.
    pub mem: MemPlan,
    /// The format, for the images.
    #[serde(skip)]
    pub raw_format: Format,
    /// The codes a trained value is clamped to (`TensorSpec::range`).
    #[serde(skip)]
    pub range: (i128, i128),
}

impl TensorMem {
    /// The memory of tensor `tensor` (`spec`) of layer `layer`, as a matrix
    /// of `rows x cols` folded `pe x simd`; its `fptgen_param_mem` is
    /// `instance` in the layer's module.
    pub fn new(layer: &str, tensor: usize, spec: &TensorSpec, [rows, cols]: [usize; 2], [pe, simd]: [usize; 2], instance: &str) -> Self {
        debug_assert_eq!(rows * cols, spec.len(), "the matrix holds the tensor");
        let mut mem = MemPlan {
            depth: rows.div_ceil(pe) * cols.div_ceil(simd),
            cols: pe * simd,
            col_width: spec.format.width(),
            kind: if spec.trainable { MemKind::Ram } else { MemKind::Rom },
            style: "auto",
            file: format!("mem/{layer}_{}.hex", spec.key),
            bank_cols: 0,
        };
        if spec.trainable && mem.depth <= LUTRAM_MAX_DEPTH {
            mem.style = "distributed";
        } else if spec.trainable || mem.bits() >= BLOCK_MIN_BITS {
            mem.style = "block";
        }

        TensorMem {
            tensor,
            key: spec.key,
            role: spec.role,
            shape: spec.shape.clone(),
            format: spec.format.into(),
            trainable: spec.trainable,
            rows,
            cols,
            pe,
            simd,
            instance: instance.to_string(),
            mem,
            raw_format: spec.format,
            range: spec.range,
        }
    }

    /// The same memory stored in banks if it is trainable and its word is
    /// wider than a block RAM's port ([`MemPlan::bank_for_writes`]): for the
    /// memories of `fptgen_dense`, which passes `W_BANK_COLS` and
    /// `B_BANK_COLS` on to `fptgen_param_mem`.
    pub fn banked(mut self) -> Self {
        if self.trainable {
            self.mem.bank_for_writes();
        }
        self
    }

    /// Parameters in the tensor.
    pub fn count(&self) -> usize {
        self.rows * self.cols
    }

    /// Synapse folds: words per `pe` rows.
    fn sf(&self) -> usize {
        self.cols.div_ceil(self.simd)
    }

    /// Width of the memory's word address (the trainer port's `tr_addr`).
    pub fn addr_w(&self) -> usize {
        clog2(self.mem.depth as u64)
    }

    /// Width of the trainer port's column select (`tr_col`).
    pub fn col_w(&self) -> usize {
        clog2(self.mem.cols as u64)
    }

    /// The memory word and column of the tensor's value `index` (C order).
    pub fn location(&self, index: usize) -> (usize, usize) {
        let (r, c) = (index / self.cols, index % self.cols);
        ((r / self.pe) * self.sf() + c / self.simd, (r % self.pe) * self.simd + c % self.simd)
    }

    /// The tensor's value (C order) at column `col` of word `word`, or None
    /// for padding.
    pub fn index_at(&self, word: usize, col: usize) -> Option<usize> {
        let r = (word / self.sf()) * self.pe + col / self.simd;
        let c = (word % self.sf()) * self.simd + col % self.simd;
        (r < self.rows && c < self.cols && col < self.mem.cols).then_some(r * self.cols + c)
    }

    /// `<role>[i][j]...`: the value `index` with its index in the tensor's
    /// shape, for messages.
    pub fn describe(&self, index: usize) -> String {
        let ix: String = fptgen_sim::tensor::unravel(index, &self.shape).iter().map(|i| format!("[{i}]")).collect();
        format!("{}{ix}", self.role)
    }

    /// The `$readmemh` image of the tensor's codes `raw` (C order): one
    /// word per line in hex, column 0 in the least significant bits.
    pub fn image(&self, raw: &[i128]) -> String {
        self.columns_image(raw, 0..self.mem.cols)
    }

    /// The files `fptgen_param_mem` reads: the image, or with banks each
    /// bank's image (its columns of every word) after the whole one, which
    /// the co-simulation harnesses read.
    pub fn image_files(&self, raw: &[i128]) -> Vec<(String, String)> {
        let mut files = vec![(self.mem.file.clone(), self.image(raw))];
        if self.mem.bank_cols > 0 {
            for b in 0..self.mem.banks() {
                files.push((self.mem.bank_file(b), self.columns_image(raw, self.mem.bank_range(b))));
            }
        }
        files
    }

    /// Columns `cols` of every word, one word per line in hex.
    fn columns_image(&self, raw: &[i128], cols: std::ops::Range<usize>) -> String {
        let f = self.raw_format;
        let mut out = String::new();
        for word in 0..self.mem.depth {
            let mut b = Bits::new();
            for col in cols.clone() {
                b.push(self.index_at(word, col).map_or(0, |i| f.bits(raw[i])), f.width());
            }
            out += &b.to_hex();
            out.push('\n');
        }
        out
    }
}

/// A layer plan's kind-neutral part for `layer` of `model` fed
/// `input_shape`, with its memories and kind-specific part; its cycles per
/// vector and latency are those of its blocks alone at full rate
/// ([`timing::measure`]).
pub(crate) fn layer_plan(model: &Model, layer: &Layer, input_shape: &[usize], memories: Vec<TensorMem>, kind_plan: KindPlan) -> LayerPlan {
    let kind = layer.kind();
    let mut l = LayerPlan {
        name: layer.name.clone(),
        module: format!("{}_{}", model.name, layer.name),
        kind: kind.type_name(),
        op: kind.describe(),
        inputs: kind.input_len(),
        outputs: kind.output_len(),
        input_shape: input_shape.to_vec(),
        output_shape: kind.output_shape(),
        macs: kind.macs(),
        cycles: 0,
        latency: 0,
        x: layer.input_format.into(),
        y: kind.output_format().into(),
        memories,
        kind_plan,
    };
    let blocks = l.hw().blocks(&l);
    if blocks.is_empty() {
        // A pass-through: a beat per cycle, no register.
        l.cycles = l.in_beats() as u64;
        return l;
    }
    let (_, m) = timing::settle(&blocks, l.in_beats(), l.out_beats(), 8);
    l.cycles = m.ii.unwrap_or(0);
    l.latency = m.latency;
    l
}

/// Vivado `ram_style` of a stream block's line buffer of `bits` bits: block
/// RAM when large enough to fill a good part of one.
pub(crate) fn line_buffer_style(bits: u64) -> &'static str {
    if bits >= BLOCK_MIN_BITS {
        "block"
    } else {
        "distributed"
    }
}
