//! Helpers shared by the RTL library's Verilator tests.

#![allow(dead_code)]

pub mod random_net;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Fails (never skips) when a required tool is missing.
pub fn require_tool(tool: &str, version_arg: &str) {
    let ok = Command::new(tool)
        .arg(version_arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "`{tool}` is not installed or does not run; the RTL tests need Verilator, yosys and Icarus \
         Verilog: apt-get install verilator yosys iverilog (bash tests/run.sh installs them)"
    );
}

/// A fresh scratch directory under Cargo's per-target temp dir. It is kept
/// when a test fails (the path is in the message) and removed on success.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Runs `cmd` in `dir`; fails the test with its output (and where the
/// files are) if it fails. Returns stdout.
pub fn run(cmd: &mut Command, what: &str, dir: &Path) -> String {
    let out = cmd
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}), files in {}:\n{stdout}\n{stderr}",
        out.status,
        dir.display()
    );
    stdout
}


/// The repository's RTL library, `rtl/`.
pub fn rtl_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl")
}

/// A copy of the library's `file` (a name under `rtl/`) with its one
/// occurrence of `right` replaced by `wrong`, written to a fresh scratch
/// directory `scratch_name`; returns the copy's path (absolute, so it can
/// stand in a `verilate_and_run` or `Bench::run` file list for `file`).
/// Fails unless `right` occurs exactly once. `expect_caught` removes it.
pub fn mutated_rtl(file: &str, right: &str, wrong: &str, scratch_name: &str) -> PathBuf {
    let source = fs::read_to_string(rtl_dir().join(file)).unwrap_or_else(|e| panic!("read rtl/{file}: {e}"));
    let n = source.matches(right).count();
    assert_eq!(n, 1, "`{right}` occurs {n} times in rtl/{file}, not once");
    let path = scratch(scratch_name).join(file);
    fs::write(&path, source.replace(right, wrong)).expect("write the mutated copy");
    path
}

/// The end of a mutation test: `result`, a run on the `mutated_rtl` copy
/// `mutated`, must have failed, naming one of `signals` (`what`: the
/// mutation); removes the copy's and the run's (`run_dir`) directories.
pub fn expect_caught<T>(result: Result<T, String>, what: &str, signals: &[&str], mutated: &Path, run_dir: &Path) {
    let Err(err) = result else { panic!("{what} was not noticed") };
    assert!(signals.iter().any(|s| err.contains(s)), "{err}");
    if let Some(dir) = mutated.parent() {
        let _ = fs::remove_dir_all(dir);
    }
    let _ = fs::remove_dir_all(run_dir);
}

/// Verilator's option that puts `rtl/` on the include path (for
/// `fptgen_clog2.vh`).
pub fn rtl_include() -> String {
    format!("-I{}", rtl_dir().display())
}

/// Verilator options that shorten a bench's build without changing what it
/// computes, as the generated `sim/build.sh` does: Verilator's once-run
/// code compiled without optimization, and every object through ccache
/// when it is installed and usable (Verilator's runtime library, the
/// largest part of a small bench's build, then compiles once for all the
/// benches).
pub fn quick_build() -> [String; 2] {
    static CCACHE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ccache = *CCACHE.get_or_init(|| {
        Command::new("ccache").arg("-p").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    });
    let flags = if ccache { "OPT_SLOW=-O0 OBJCACHE=ccache" } else { "OPT_SLOW=-O0" };
    ["-MAKEFLAGS".to_string(), flags.to_string()]
}

/// Builds `<top>.v` (in `dir`) with the library files `rtl` (names under the
/// repository's `rtl/`) and `main.cpp` (in `dir`) with `verilator -Wall`,
/// warnings fatal, into `dir/obj/vsim`.
pub fn verilate(dir: &Path, top: &str, rtl: &[&str]) {
    let lib = rtl_dir();
    run(
        Command::new("verilator")
            .args(["--cc", "--exe", "--build", "-Wall", "-Wno-DECLFILENAME", "-j", "2", "--top-module", top, "-Mdir", "obj", "-o", "vsim"])
            .args(quick_build())
            .arg(rtl_include())
            .arg(format!("{top}.v"))
            .args(rtl.iter().map(|f| lib.join(f)))
            .arg(dir.join("main.cpp")),
        "verilator build",
        dir,
    );
}

/// [`verilate`], then runs the simulation in `dir` and returns its stdout.
pub fn verilate_and_run(dir: &Path, top: &str, rtl: &[&str]) -> String {
    verilate(dir, top, rtl);
    run(&mut Command::new(dir.join("obj/vsim")), "simulation", dir)
}

/// Bits that hold 0 .. n - 1, at least 1 (written here, not taken from the
/// generator, so the tests check the RTL's widths independently).
pub fn bits_for(n: usize) -> u32 {
    let mut w = 1;
    while (1usize << w) < n {
        w += 1;
    }
    w
}

/// The low `w` bits set (all 64 for `w >= 64`).
pub fn mask(w: u32) -> u64 {
    if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }
}

/// Deterministic random numbers (SplitMix64), seeded by the tests.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn u128(&mut self) -> u128 {
        (u128::from(self.next()) << 64) | u128::from(self.next())
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi);
        let span = (hi - lo) as u64 + 1;
        lo + (self.next() % span) as i64
    }

    /// Uniform in `lo..=hi` for i128 bounds.
    pub fn range_i128(&mut self, lo: i128, hi: i128) -> i128 {
        assert!(lo <= hi);
        let span = hi.wrapping_sub(lo) as u128;
        if span == u128::MAX {
            return self.u128() as i128;
        }
        lo.wrapping_add((self.u128() % (span + 1)) as i128)
    }

    pub fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }

    /// A uniformly random `w`-bit two's complement value (`1 <= w <= 128`).
    pub fn signed_bits(&mut self, w: u32) -> i128 {
        (self.u128() as i128) >> (128 - w)
    }

    /// True with the given probability in percent.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Whether this run is the full tier: `bash tests/run.sh --full` sets
/// `FPTGEN_TIER=full` (and runs the `#[ignore]`d tests).
pub fn full_tier() -> bool {
    std::env::var("FPTGEN_TIER").is_ok_and(|v| v == "full")
}

/// How many random draws a test makes: `fast` in the fast tier (CI), `full`
/// in the full tier. The fast tier's draws are the first of the full
/// tier's (the same seeds).
pub fn draws(fast: u32, full: u32) -> u32 {
    if full_tier() { full } else { fast }
}

/// The seed of a random test's proptest runner: `default`, or
/// `FPTGEN_TEST_SEED` (a byte) to replay the draw a failure names.
pub fn seed_byte(default: u8) -> u8 {
    match std::env::var("FPTGEN_TEST_SEED") {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| panic!("FPTGEN_TEST_SEED={v}: not a byte (0 to 255)")),
        Err(_) => default,
    }
}

/// A deterministic proptest runner of `cases` draws from `[seed; 32]`
/// (ChaCha), without shrinking beyond `shrink` steps or persisting failures.
pub fn runner(seed: u8, cases: u32, shrink: u32) -> proptest::test_runner::TestRunner {
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    TestRunner::new_with_rng(
        Config { cases, max_shrink_iters: shrink, failure_persistence: None, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]),
    )
}

/// How to replay a failing draw of `test` (in test binary `bin`) drawn from `seed`.
pub fn replay(bin: &str, test: &str, seed: u8) -> String {
    format!("seed {seed}; replay with `FPTGEN_TEST_SEED={seed} cargo test -p fptgen-generator --test {bin} {test}`")
}

/// A port of a test's generated top: its name and width in bits (1 to 128).
pub type Port<'a> = (&'a str, u32);

/// A `Bench` top built up by a test whose port names are generated (an
/// instance per parameter set, say): its inputs and outputs in the order
/// of the stimulus and output rows, and its body (the instances added with
/// [`Top::instance`] follow it).
#[derive(Debug, Default)]
pub struct Top {
    pub inputs: Vec<(String, u32)>,
    pub outputs: Vec<(String, u32)>,
    pub body: String,
    pub insts: Vec<(String, Inst)>,
}

/// A port of a module under test: its name, width (1 to 128) and direction.
#[derive(Debug, Clone)]
pub struct Pin {
    pub name: String,
    pub bits: u32,
    pub input: bool,
}

/// An input port.
pub fn input(name: impl Into<String>, bits: u32) -> Pin {
    Pin { name: name.into(), bits, input: true }
}

/// An output port.
pub fn output(name: impl Into<String>, bits: u32) -> Pin {
    Pin { name: name.into(), bits, input: false }
}

/// An instance of a module under test ([`Top::instance`]): how failures
/// name it, its parameter overrides (`.A(1), .B(2)`) and its ports (in the
/// order of its stimulus and its model's outputs; `clk` is not one of
/// them). Each port `p` of instance `i` is the top's `u{i}_{p}`, connected
/// to the instance's `p`, unless `wiring` gives the instance's connections
/// instead (Verilog, on the names `u{i}_{p}`: for a port wider than the
/// bench's 128 bits, made of several of them).
#[derive(Debug, Clone)]
pub struct Inst {
    pub label: String,
    pub params: String,
    pub ports: Vec<Pin>,
    pub wiring: Option<String>,
}

impl Inst {
    pub fn inputs(&self) -> impl Iterator<Item = &Pin> {
        self.ports.iter().filter(|p| p.input)
    }

    pub fn outputs(&self) -> impl Iterator<Item = &Pin> {
        self.ports.iter().filter(|p| !p.input)
    }
}

/// A model of one instance, checked cycle by cycle ([`Built::check`]).
/// Cycle `t` is the clock period that ends with rising edge `t + 1`.
pub trait Model {
    /// The outputs in the current cycle (in port order) for its inputs.
    fn outputs(&self, inputs: &[u128]) -> Vec<u128>;
    /// The rising edge at the end of the cycle with these inputs.
    fn edge(&mut self, inputs: &[u128]);
}

impl Top {
    pub fn input(&mut self, name: impl Into<String>, w: u32) {
        self.inputs.push((name.into(), w));
    }

    pub fn output(&mut self, name: impl Into<String>, w: u32) {
        self.outputs.push((name.into(), w));
    }

    /// A top of `insts`, instances of `module` ([`Top::instance`]).
    pub fn of_instances(module: &str, insts: impl IntoIterator<Item = Inst>) -> Top {
        let mut top = Top::default();
        insts.into_iter().for_each(|inst| top.instance(module, inst));
        top
    }

    /// Adds instance `i` (the next) of `module`: its ports become the
    /// top's `u{i}_{p}` (see [`Inst`]); in a clocked top its `clk` is the
    /// top's. Instances go after `body`, and their ports after those
    /// added before.
    pub fn instance(&mut self, module: &str, inst: Inst) {
        let i = self.insts.len();
        for p in &inst.ports {
            assert!((1..=128).contains(&p.bits), "{}: port {} of {} bits (the bench takes 1 to 128)", inst.label, p.name, p.bits);
            let name = format!("u{i}_{}", p.name);
            if p.input { self.input(name, p.bits) } else { self.output(name, p.bits) }
        }
        self.insts.push((module.to_string(), inst));
    }

    /// The body with the instances.
    fn full_body(&self, clocked: bool) -> String {
        use std::fmt::Write as _;
        let mut body = self.body.clone();
        for (i, (module, inst)) in self.insts.iter().enumerate() {
            let mut conns: Vec<String> = if clocked { vec![".clk(clk)".into()] } else { Vec::new() };
            match &inst.wiring {
                Some(w) => conns.push(w.clone()),
                None => conns.extend(inst.ports.iter().map(|p| format!(".{}(u{i}_{})", p.name, p.name))),
            }
            write!(body, "\n// {}\n{module} #({}) u{i} (\n    {}\n);\n", inst.label, inst.params, conns.join(",\n    ")).unwrap();
        }
        body
    }

    fn bench<R>(&self, name: &str, clocked: bool, f: impl FnOnce(&Bench) -> R) -> R {
        fn refs(ports: &[(String, u32)]) -> Vec<Port<'_>> {
            ports.iter().map(|(n, w)| (n.as_str(), *w)).collect()
        }
        f(&Bench { name, inputs: &refs(&self.inputs), outputs: &refs(&self.outputs), clocked })
    }

    /// `Bench::run` of this top, named `name`.
    pub fn run(&self, name: &str, clocked: bool, dir: &Path, rtl: &[&str], stim: &[Vec<u128>]) -> Vec<Vec<u128>> {
        self.build(name, clocked, dir, rtl).simulate("stim.txt", stim)
    }

    /// `Bench::build` of this top, named `name`, to simulate (or check)
    /// several stimuli on one build.
    pub fn build(&self, name: &str, clocked: bool, dir: &Path, rtl: &[&str]) -> Built<'_> {
        self.bench(name, clocked, |b| b.build(dir, &self.full_body(clocked), rtl));
        Built { top: self, name: name.to_string(), clocked, dir: dir.to_path_buf() }
    }
}

/// A built [`Top`].
pub struct Built<'t> {
    pub top: &'t Top,
    pub name: String,
    pub clocked: bool,
    pub dir: PathBuf,
}

impl Built<'_> {
    /// `Bench::simulate`: one row of outputs per row of `stim`, written to
    /// `file` in the build's directory.
    pub fn simulate(&self, file: &str, stim: &[Vec<u128>]) -> Vec<Vec<u128>> {
        self.top.bench(&self.name, self.clocked, |b| b.simulate(&self.dir, file, stim))
    }

    /// Runs `stim` (per cycle, per instance, its inputs in port order) on a
    /// top of [`Top::instance`]s and compares every output of every
    /// instance in every cycle with its model (`models[i]` for instance
    /// `i`, from its state after reset as the model defines it); panics on
    /// the first difference, naming `run_name`, the instance, the signal,
    /// the cycle and both values.
    pub fn check<M: Model>(&self, run_name: &str, stim: &[Vec<Vec<u128>>], models: &mut [M]) {
        let insts: Vec<&Inst> = self.top.insts.iter().map(|(_, inst)| inst).collect();
        assert_eq!(models.len(), insts.len());
        assert_eq!((self.top.inputs.len(), self.top.outputs.len()), insts.iter().fold((0, 0), |(i, o), x| (i + x.inputs().count(), o + x.outputs().count())), "a top of instances only");
        let rows: Vec<Vec<u128>> = stim
            .iter()
            .map(|cycle| {
                assert_eq!(cycle.len(), insts.len());
                let mut row = Vec::new();
                for (inst, values) in insts.iter().zip(cycle) {
                    for (p, &v) in inst.inputs().zip(values) {
                        assert_eq!(v & !mask_u128(p.bits), 0, "{}: {} = {v:#x} does not fit {} bits", inst.label, p.name, p.bits);
                        row.push(v);
                    }
                }
                row
            })
            .collect();
        let file = format!("stim_{}.txt", run_name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
        let out = self.simulate(&file, &rows);
        for (t, (got, cycle)) in out.iter().zip(stim).enumerate() {
            let mut got = got.iter();
            for (i, (inst, model)) in insts.iter().zip(models.iter_mut()).enumerate() {
                let want = model.outputs(&cycle[i]);
                let ports: Vec<&Pin> = inst.outputs().collect();
                assert_eq!(want.len(), ports.len(), "{}: the model gives {} outputs for {} ports", inst.label, want.len(), ports.len());
                for (p, w) in ports.iter().zip(&want) {
                    let (g, w) = (*got.next().unwrap(), w & mask_u128(p.bits));
                    assert!(
                        g == w,
                        "{run_name}, {}: {} on cycle {t} is {g:#x}, expected {w:#x} (inputs {:x?}; files in {})",
                        inst.label,
                        p.name,
                        cycle[i],
                        self.dir.display()
                    );
                }
                model.edge(&cycle[i]);
            }
        }
    }

    /// Removes the build's directory (after the last run passed).
    pub fn done(self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A stimulus-driven simulation of a generated top `name` (in `dir`): ports
/// `inputs` and `outputs`, and, when `clocked`, a `clk` input. One row of
/// the stimulus per cycle, a value per input (masked to the input's width):
/// the driver sets the inputs, evaluates, records every output, then (when
/// clocked) gives a rising edge. The top's body (instances and wires) is
/// `body`; the port list is written here. Returns one row per cycle, a value
/// per output. Signals wider than 64 bits go through Verilator's 32-bit
/// words.
pub struct Bench<'a> {
    pub name: &'a str,
    pub inputs: &'a [Port<'a>],
    pub outputs: &'a [Port<'a>],
    pub clocked: bool,
}

impl Bench<'_> {
    /// [`Bench::build`], then [`Bench::simulate`] (the stimulus in
    /// `stim.txt`).
    pub fn run(&self, dir: &Path, body: &str, rtl: &[&str], stim: &[Vec<u128>]) -> Vec<Vec<u128>> {
        self.build(dir, body, rtl);
        self.simulate(dir, "stim.txt", stim)
    }

    /// Writes the top and its driver into `dir` and builds them
    /// ([`verilate`]). The driver reads the stimulus file its argument
    /// names: the number of cycles, then their rows.
    pub fn build(&self, dir: &Path, body: &str, rtl: &[&str]) {
        use std::fmt::Write as _;
        let name = self.name;
        let range = |w: u32| if w == 1 { String::new() } else { format!("[{}:0] ", w - 1) };
        let mut ports: Vec<String> = Vec::new();
        if self.clocked {
            ports.push("input wire clk".into());
        }
        ports.extend(self.inputs.iter().map(|&(n, w)| format!("input wire {}{n}", range(w))));
        ports.extend(self.outputs.iter().map(|&(n, w)| format!("output wire {}{n}", range(w))));
        let v = format!("`timescale 1ns / 1ps\n`default_nettype none\nmodule {name} (\n    {}\n);\n{body}endmodule\n`default_nettype wire\n", ports.join(",\n    "));
        fs::write(dir.join(format!("{name}.v")), v).expect("write top");

        let words = |w: u32| w.div_ceil(32);
        let mut c = format!(
            "#include \"V{name}.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {{\n    \
             VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    V{name} top(&ctx);\n    if (argc < 2) return 3;\n    \
             FILE* f = std::fopen(argv[1], \"r\");\n    unsigned long long x;\n    unsigned w;\n    long cycles;\n    \
             if (!f || std::fscanf(f, \"%ld\", &cycles) != 1) return 3;\n"
        );
        if self.clocked {
            c += "    top.clk = 0; top.eval();\n";
        }
        c += "    for (long t = 0; t < cycles; ++t) {\n";
        for &(n, w) in self.inputs {
            if w > 64 {
                for k in (0..words(w)).rev() {
                    writeln!(c, "        if (std::fscanf(f, \"%x\", &w) != 1) return 3; top.{n}[{k}] = w;").unwrap();
                }
            } else {
                writeln!(c, "        if (std::fscanf(f, \"%llx\", &x) != 1) return 3; top.{n} = x;").unwrap();
            }
        }
        c += "        top.eval();\n";
        for &(n, w) in self.outputs {
            if w > 64 {
                for k in (0..words(w)).rev() {
                    writeln!(c, "        std::printf(\"%08x\", (unsigned)top.{n}[{k}]);").unwrap();
                }
                c += "        std::printf(\" \");\n";
            } else {
                writeln!(c, "        std::printf(\"%llx \", (unsigned long long)top.{n});").unwrap();
            }
        }
        c += "        std::printf(\"\\n\");\n";
        if self.clocked {
            c += "        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n";
        }
        c += "    }\n    return 0;\n}\n";
        fs::write(dir.join("main.cpp"), c).expect("write driver");
        verilate(dir, name, rtl);
    }

    /// Runs the simulation [`Bench::build`] built in `dir` on `stim`
    /// (written to `file` in `dir`).
    pub fn simulate(&self, dir: &Path, file: &str, stim: &[Vec<u128>]) -> Vec<Vec<u128>> {
        use std::fmt::Write as _;
        let words = |w: u32| w.div_ceil(32);
        let mut text = format!("{}\n", stim.len());
        for row in stim {
            assert_eq!(row.len(), self.inputs.len(), "a stimulus row needs a value per input");
            for (&x, &(_, w)) in row.iter().zip(self.inputs) {
                let x = x & mask_u128(w);
                if w > 64 {
                    for k in (0..words(w)).rev() {
                        write!(text, "{:x} ", (x >> (32 * k)) as u32).unwrap();
                    }
                } else {
                    write!(text, "{x:x} ").unwrap();
                }
            }
            text.push('\n');
        }
        fs::write(dir.join(file), text).expect("write stimulus");

        let out = run(Command::new(dir.join("obj/vsim")).arg(file), "simulation", dir);
        let rows: Vec<Vec<u128>> = out
            .lines()
            .map(|l| l.split_whitespace().map(|x| u128::from_str_radix(x, 16).expect("a hex output")).collect())
            .collect();
        assert_eq!(rows.len(), stim.len(), "one line of outputs per cycle, files in {}", dir.display());
        assert!(rows.iter().all(|r| r.len() == self.outputs.len()), "a value per output, files in {}", dir.display());
        rows
    }
}

/// The low `w` bits set (all 128 for `w >= 128`).
pub fn mask_u128(w: u32) -> u128 {
    if w >= 128 { u128::MAX } else { (1u128 << w) - 1 }
}

/// `x`'s low `w` bits (`1 <= w <= 128`) as a two's complement number.
pub fn signed(x: u128, w: u32) -> i128 {
    ((x << (128 - w)) as i128) >> (128 - w)
}

/// `x` as a `w`-bit two's complement code (`1 <= w <= 128`).
pub fn code(x: i128, w: u32) -> u128 {
    (x as u128) & mask_u128(w)
}

/// Percent of cycles with in_valid and with out_ready, by phase of 500
/// cycles: full rate, random, stalls, gaps, both rare.
pub const STREAM_PHASES: [(u64, u64); 5] = [(100, 100), (50, 50), (90, 15), (15, 90), (30, 30)];

/// `cycles` rows of stimulus for one valid/ready stream block per width of
/// `data_w`: per block [rst, data, in_valid, out_ready], a reset in cycle 0
/// and rare ones after, random data, valid and ready at the rates of
/// [`STREAM_PHASES`] (in another order in the second half).
pub fn stream_stimulus(rng: &mut Rng, cycles: usize, data_w: &[u32]) -> Vec<Vec<Vec<u128>>> {
    (0..cycles)
        .map(|t| {
            let (v, r) = STREAM_PHASES[(t / 500 + if t >= cycles / 2 { 2 } else { 0 }) % STREAM_PHASES.len()];
            data_w
                .iter()
                .map(|&w| {
                    let rst = t == 0 || rng.chance(1) && rng.chance(30);
                    vec![u128::from(rst), rng.u128() & mask_u128(w), u128::from(rng.chance(v)), u128::from(rng.chance(r))]
                })
                .collect()
        })
        .collect()
}
