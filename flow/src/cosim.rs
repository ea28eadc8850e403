//! Co-simulation: the generated Verilog under Verilator against the
//! bit-accurate simulator, every output bit compared, cycle counts measured.

use std::path::{Path, PathBuf};
use std::process::Command;

use fptgen_sim::network::Network;

use fptgen_generator::bits::Bits;
use fptgen_generator::expect::stimulus;
use fptgen_generator::plan::NetworkPlan;
use fptgen_generator::render::GeneratedFile;

/// What a co-simulation run measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CosimResult {
    /// Vectors streamed (in each of the two phases).
    pub vectors: usize,
    /// Output mismatches (the harness stops at the first).
    pub mismatches: usize,
    /// Measured initiation interval in cycles.
    pub ii: i64,
    /// Measured latency in cycles.
    pub latency: i64,
    /// Predicted initiation interval (report.json).
    pub predicted_ii: u64,
    /// Predicted latency (report.json).
    pub predicted_latency: u64,
    /// The harness's description of the first mismatch, if any.
    pub first_mismatch: Option<String>,
}

impl CosimResult {
    /// True if every bit matched and the measured cycles equal the prediction.
    pub fn passed(&self) -> bool {
        self.mismatches == 0
            && self.ii == self.predicted_ii as i64
            && self.latency == self.predicted_latency as i64
    }

    /// The one-line summary `fptgen cosim` prints.
    pub fn summary(&self) -> String {
        format!(
            "vectors {} mismatches {} | measured II {} latency {} | predicted II {} latency {}",
            self.vectors, self.mismatches, self.ii, self.latency, self.predicted_ii, self.predicted_latency
        )
    }
}

/// Why a co-simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum CosimError {
    /// A required tool is not installed.
    #[error("{0} not found on PATH; install it (Debian: apt-get install {0})")]
    MissingTool(&'static str),
    /// Verilator failed to build the design.
    #[error("verilator build failed in {}:\n{log}", dir.display())]
    Build {
        /// The output directory.
        dir: PathBuf,
        /// The tail of the build log.
        log: String,
    },
    /// Hardware and simulator differ (the first difference, named).
    #[error("{0}")]
    Mismatch(String),
    /// The harness ended without a result line.
    #[error("co-simulation did not complete: {0}")]
    Harness(String),
    /// An input vector is not valid for the network.
    #[error("{0}")]
    Sim(#[from] fptgen_sim::network::SimError),
    /// An output file could not be written.
    #[error(transparent)]
    Output(#[from] fptgen_generator::output::OutputError),
    /// The trace could not be put in place.
    #[error(transparent)]
    Trace(#[from] fptgen_sim::error::Error),
    /// A file could not be written or a program not started.
    #[error("{}: {err}", path.display())]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
}

/// Checks that `tool` runs.
pub fn require_tool(tool: &'static str) -> Result<(), CosimError> {
    match Command::new(tool).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => match Command::new(tool).arg("-V").output() {
            Ok(o) if o.status.success() => Ok(()),
            _ => Err(CosimError::MissingTool(tool)),
        },
    }
}

fn hex_lines(vs: &[Vec<i128>], f: fptgen_sim::fixed::Format) -> String {
    let mut s = String::new();
    for v in vs {
        let mut b = Bits::new();
        for &r in v {
            b.push(f.bits(r), f.width());
        }
        s += &b.to_hex();
        s.push('\n');
    }
    s
}

/// Which Verilator build of a design (`sim/build.sh`'s option).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildKind {
    /// The inference harness.
    Plain,
    /// The inference harness with VCD tracing.
    Trace,
    /// The training harness (designs with a trainer).
    Train,
    /// The inference harness through the AXI wrapper (`generate --axi`).
    Axi,
    /// The training harness through the AXI wrapper.
    AxiTrain,
}

impl BuildKind {
    /// The harness executable of design `name`, relative to the design.
    pub fn exe(self, name: &str) -> PathBuf {
        match self {
            BuildKind::Plain => PathBuf::from(format!("sim/obj/V{name}")),
            BuildKind::Trace => PathBuf::from(format!("sim/obj_trace/V{name}")),
            BuildKind::Train => PathBuf::from(format!("sim/obj_train/V{name}")),
            BuildKind::Axi => PathBuf::from(format!("sim/obj_axi/V{name}_axi")),
            BuildKind::AxiTrain => PathBuf::from(format!("sim/obj_axi_train/V{name}_axi")),
        }
    }
}

/// Builds the design generated in `dir` with Verilator (`sim/build.sh`);
/// returns the object directory, relative to `dir`.
pub fn build(dir: &Path, kind: BuildKind) -> Result<PathBuf, CosimError> {
    require_tool("verilator")?;
    let mut cmd = Command::new("sh");
    cmd.arg("sim/build.sh").current_dir(dir);
    let obj = match kind {
        BuildKind::Plain => "sim/obj",
        BuildKind::Trace => {
            cmd.arg("--trace");
            "sim/obj_trace"
        }
        BuildKind::Train => {
            cmd.arg("--train");
            "sim/obj_train"
        }
        BuildKind::Axi => {
            cmd.arg("--axi");
            "sim/obj_axi"
        }
        BuildKind::AxiTrain => {
            cmd.arg("--axi-train");
            "sim/obj_axi_train"
        }
    };
    let out = cmd.output().map_err(|err| CosimError::Io { path: dir.join("sim/build.sh"), err })?;
    if !out.status.success() {
        let log = String::from_utf8_lossy(&out.stderr) + String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        return Err(CosimError::Build { dir: dir.to_path_buf(), log: tail });
    }
    Ok(PathBuf::from(obj))
}

/// Runs the co-simulation of the design generated in `dir` (see
/// [`fptgen_generator::render`]) for `net`: writes the stimulus and the simulator's
/// expected outputs, builds with Verilator, runs, and parses the result.
pub fn run(
    dir: &Path,
    plan: &NetworkPlan,
    net: &Network,
    vectors: usize,
    seed: u64,
    trace: Option<&Path>,
) -> Result<CosimResult, CosimError> {
    run_inputs(dir, plan, net, &stimulus(net, vectors, seed), seed, trace)
}

/// [`run`] on given input vectors (raw codes of the input format, checked
/// by the simulator) instead of [`stimulus`]'s; `seed` draws the handshake
/// patterns.
pub fn run_inputs(
    dir: &Path,
    plan: &NetworkPlan,
    net: &Network,
    inputs: &[Vec<i128>],
    seed: u64,
    trace: Option<&Path>,
) -> Result<CosimResult, CosimError> {
    let kind = if trace.is_some() { BuildKind::Trace } else { BuildKind::Plain };
    run_harness(dir, plan, net, inputs, seed, trace, kind).map(|(r, _)| r)
}

/// [`run_inputs`] with the harness of `kind` (`Plain`, `Trace` or `Axi`);
/// also returns the harness's standard output.
pub fn run_harness(
    dir: &Path,
    plan: &NetworkPlan,
    net: &Network,
    inputs: &[Vec<i128>],
    seed: u64,
    trace: Option<&Path>,
    kind: BuildKind,
) -> Result<(CosimResult, String), CosimError> {
    let dir = &std::path::absolute(dir).map_err(|err| CosimError::Io { path: dir.to_path_buf(), err })?;
    let expected = net.infer_batch(inputs)?;
    let m = net.model();
    fptgen_generator::output::add_files(
        dir,
        fptgen_generator::output::COSIM,
        &[
            GeneratedFile::text("sim/run/inputs.hex", hex_lines(inputs, m.input_format)),
            GeneratedFile::text("sim/run/expected.hex", hex_lines(&expected, m.output_format())),
        ],
    )?;
    // The harness writes the trace inside the design; it is moved to the
    // user's path (which must not exist) only when the run has finished.
    let trace_tmp = trace.map(|_| fptgen_sim::files::temp_name(&dir.join("sim/run/trace.vcd")));
    build(dir, kind)?;
    let exe = kind.exe(&plan.name);
    let mut cmd = Command::new(dir.join(&exe));
    cmd.current_dir(dir).args(["sim/run/inputs.hex", "sim/run/expected.hex", &seed.to_string()]);
    if let Some(t) = &trace_tmp {
        cmd.arg(t);
    }
    let out = cmd.output().map_err(|err| CosimError::Io { path: dir.join(&exe), err })?;
    if let (Some(tmp), Some(t)) = (&trace_tmp, trace) {
        fptgen_sim::files::place_new(tmp, t)?;
    }
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let first_mismatch = stdout.lines().find(|l| l.starts_with("MISMATCH")).map(str::to_string);
    let result = stdout.lines().rev().find(|l| l.starts_with("RESULT ")).ok_or_else(|| {
        CosimError::Harness(format!(
            "exit {:?}\n{}{}",
            out.status.code(),
            stdout,
            String::from_utf8_lossy(&out.stderr)
        ))
    })?;
    let field = |k: &str| -> i64 {
        result
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
            .and_then(|v| v.parse().ok())
            .unwrap_or(-1)
    };
    let r = CosimResult {
        vectors: inputs.len(),
        mismatches: field("mismatches").max(0) as usize,
        ii: field("ii"),
        latency: field("latency"),
        predicted_ii: plan.ii,
        predicted_latency: plan.latency,
        first_mismatch,
    };
    Ok((r, stdout))
}
