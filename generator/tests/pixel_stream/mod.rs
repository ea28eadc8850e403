//! A Verilator bench for streaming modules with one valid/ready input and
//! one valid/ready output (`rtl/swg.rs`, `rtl/maxpool.rs`, `rtl/flatten.rs`,
//! `rtl/bn.rs`): several instances in one build, each fed its own beats by a
//! source and drained by a sink, and a log of the cycle of every transfer.
//!
//! Cycle `t` is the clock period that ends with rising edge `t + 1`, counted
//! from the first cycle after reset. In each cycle the bench sets the
//! inputs, evaluates, records a transfer where valid and ready are both
//! high, then clocks. The source raises `in_valid` (when beats remain) unless
//! a random gap (`gap` percent) delays it, and holds it, with the same data,
//! until the beat is taken; while `in_valid` is low, `in_data` carries
//! random bits. The sink lowers `out_ready` with probability `stall` percent
//! in each cycle. With `gap = stall = 0` (the run that `build_and_run` does)
//! the input is offered at full rate and the output is always ready.
//!
//! A module may have ports besides the eight of the streams (a trainer port,
//! say): `Dut::ports` connects them (tied off) in the instance, to
//! constants or to wires that `Dut::decls` declares (an output's wire named
//! `unused_*`, which Verilator's `-Wall` accepts unread), and `Dut::files`
//! are written next to the bench, for file parameters (`$readmemh` images,
//! read relative to the bench's directory).
//!
//! The run ends when every instance has taken all its beats and given all
//! the outputs expected of it, plus 40 cycles in which any further output is
//! logged too; or at a cycle limit (200 cycles per beat in or out), which
//! `Log::stuck` reports.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{run, verilate_and_run};

/// One instance of the module under test.
#[derive(Debug, Default)]
pub struct Dut {
    /// Verilog parameter assignments, e.g. `.H(4), .W(5)`.
    pub params: String,
    /// Bits of `in_data` and `out_data`.
    pub in_bits: usize,
    pub out_bits: usize,
    /// Input beats, in order.
    pub beats: Vec<Vec<bool>>,
    /// Outputs the instance must give for these beats.
    pub outputs: usize,
    /// Connections of the module's other ports, appended to the instance's
    /// port list, e.g. `.s_tr_en(1'b0), .s_tr_rdata(unused_s_rdata0)`
    /// (empty: none).
    pub ports: String,
    /// Verilog placed before the instance in the top, e.g. `wire [7:0]
    /// unused_s_rdata0;` (empty: none).
    pub decls: String,
    /// Files written into the bench's directory before it runs: (name,
    /// contents), e.g. a memory image a parameter names.
    pub files: Vec<(String, String)>,
}

/// What one instance did: the cycle of every input beat taken, and the
/// cycle and data of every output taken.
#[derive(Debug, Default)]
pub struct Log {
    pub accepted: Vec<u64>,
    pub outputs: Vec<(u64, Vec<bool>)>,
    /// The run hit the cycle limit (on this cycle) before every instance was done.
    pub stuck: Option<u64>,
    /// With `rerun_traced`: the four handshake signals in every cycle, from
    /// cycle 0 on.
    pub cycles: Vec<Cycle>,
}

impl Log {
    /// Asserts `accepted` input beats (`what[0]`) accepted and `outputs`
    /// outputs (`what[1]`) given, naming the cycle where the bench stopped
    /// at its cycle limit.
    pub fn check_counts(&self, ctx: &str, accepted: usize, outputs: usize, what: [&str; 2]) {
        let stuck = self.stuck.map(|t| format!(" (the bench stopped at its cycle limit, cycle {t})")).unwrap_or_default();
        assert_eq!(self.accepted.len(), accepted, "{ctx}: {} accepted{stuck}", what[0]);
        assert_eq!(self.outputs.len(), outputs, "{ctx}: {} output{stuck}", what[1]);
    }
}

/// The handshake signals of one instance in one cycle (after evaluation,
/// before the clock edge).
#[derive(Debug, Clone, Copy)]
pub struct Cycle {
    pub in_valid: bool,
    pub in_ready: bool,
    pub out_valid: bool,
    pub out_ready: bool,
}

/// `images` random images of `len` codes of `x_w` bits each, a fifth of
/// the codes extremes (0, the maximum, and the two around half).
pub fn random_images(rng: &mut crate::common::Rng, images: usize, len: usize, x_w: u32) -> Vec<Vec<u64>> {
    let max = (1u64 << x_w) - 1;
    let half = 1u64 << (x_w - 1);
    let extremes = [0, max, half, half - 1];
    (0..images)
        .map(|_| (0..len).map(|_| if rng.chance(20) { extremes[(rng.next() % 4) as usize] } else { rng.next() & max }).collect())
        .collect()
}

/// Packs `values` of `w` bits each, value `k` at bits `[k*w +: w]`.
pub fn pack(values: &[u64], w: u32) -> Vec<bool> {
    let mut bits = Vec::with_capacity(values.len() * w as usize);
    for &v in values {
        for b in 0..w {
            bits.push((v >> b) & 1 == 1);
        }
    }
    bits
}

/// Value `k` of `w` bits of `bits`.
pub fn field(bits: &[bool], k: usize, w: u32) -> u64 {
    let lo = k * w as usize;
    (0..w as usize).fold(0, |v, b| v | (u64::from(bits[lo + b]) << b))
}

/// `bits` as hex digits, most significant first (`$readmemh`'s format).
pub fn to_hex(bits: &[bool]) -> String {
    let nibbles = bits.len().div_ceil(4).max(1);
    (0..nibbles)
        .rev()
        .map(|n| {
            let v = (0..4).fold(0u32, |v, b| v | (u32::from(bits.get(4 * n + b).copied().unwrap_or(false)) << b));
            char::from_digit(v, 16).unwrap()
        })
        .collect()
}

/// `to_hex`'s inverse: `bits` bits of hex digits.
pub fn from_hex(hex: &str, bits: usize) -> Vec<bool> {
    let digits: Vec<u32> = hex.chars().rev().map(|c| c.to_digit(16).expect("hex digit")).collect();
    (0..bits).map(|b| digits.get(b / 4).is_some_and(|d| (d >> (b % 4)) & 1 == 1)).collect()
}

/// Writes the top `top` (the instances of `module`), the beat files and the
/// C++ bench into `dir`, builds them with `verilator -Wall` (warnings fatal)
/// together with `rtl/<module>.v`, and runs them once at full rate
/// (`gap = stall = 0`).
pub fn build_and_run(dir: &Path, top: &str, module: &str, duts: &[Dut]) -> Vec<Log> {
    build_and_run_with(dir, top, module, &[], duts)
}

/// `build_and_run` for a module that instantiates other library modules:
/// `lib` names their files under `rtl/` (e.g. `fptgen_cast.v`).
pub fn build_and_run_with(dir: &Path, top: &str, module: &str, lib: &[&str], duts: &[Dut]) -> Vec<Log> {
    let mut v = String::from("// Generated by generator/tests/pixel_stream\n`timescale 1ns / 1ps\n`default_nettype none\n\n");
    write!(v, "module {top} (\n    input  wire clk,\n    input  wire rst").unwrap();
    for (i, d) in duts.iter().enumerate() {
        write!(
            v,
            ",\n    input  wire [{}:0] in_data{i},\n    input  wire in_valid{i},\n    output wire in_ready{i},\n    \
             output wire [{}:0] out_data{i},\n    output wire out_valid{i},\n    input  wire out_ready{i}",
            d.in_bits - 1,
            d.out_bits - 1
        )
        .unwrap();
    }
    v += "\n);\n\n";
    for (i, d) in duts.iter().enumerate() {
        if !d.decls.is_empty() {
            writeln!(v, "{}", d.decls).unwrap();
        }
        writeln!(
            v,
            "{module} #({}) u{i} (\n    .clk(clk), .rst(rst),\n    .in_data(in_data{i}), .in_valid(in_valid{i}), .in_ready(in_ready{i}),\n    \
             .out_data(out_data{i}), .out_valid(out_valid{i}), .out_ready(out_ready{i}){}{}\n);\n",
            d.params,
            if d.ports.is_empty() { "" } else { ",\n    " },
            d.ports
        )
        .unwrap();
    }
    v += "endmodule\n\n`default_nettype wire\n";
    fs::write(dir.join(format!("{top}.v")), v).unwrap();

    for (i, d) in duts.iter().enumerate() {
        for (name, text) in &d.files {
            fs::write(dir.join(name), text).unwrap();
        }
        let mut text = String::new();
        for b in &d.beats {
            assert_eq!(b.len(), d.in_bits);
            writeln!(text, "{}", to_hex(b)).unwrap();
        }
        fs::write(dir.join(format!("in{i}.hex")), text).unwrap();
    }
    fs::write(dir.join("main.cpp"), main_cpp(top, duts)).unwrap();
    let rtl = format!("{module}.v");
    let files: Vec<&str> = std::iter::once(rtl.as_str()).chain(lib.iter().copied()).collect();
    let out = verilate_and_run(dir, top, &files);
    parse(&out, duts)
}

/// Runs the bench built by `build_and_run` again, with random input gaps
/// (percent of cycles), random output stalls (percent) and a seed.
pub fn rerun(dir: &Path, duts: &[Dut], gap: u32, stall: u32, seed: u64) -> Vec<Log> {
    let out = run(
        Command::new(dir.join("obj/vsim")).args([gap.to_string(), stall.to_string(), seed.to_string()]),
        "simulation",
        dir,
    );
    parse(&out, duts)
}

/// `rerun` that also logs every instance's handshake signals in every
/// cycle (`Log::cycles`), for a check of the handshake cycle by cycle
/// under gaps and back-pressure (the same stimulus as `rerun`'s).
pub fn rerun_traced(dir: &Path, duts: &[Dut], gap: u32, stall: u32, seed: u64) -> Vec<Log> {
    let out = run(
        Command::new(dir.join("obj/vsim")).args([gap.to_string(), stall.to_string(), seed.to_string(), "trace".to_string()]),
        "simulation",
        dir,
    );
    parse(&out, duts)
}

fn parse(out: &str, duts: &[Dut]) -> Vec<Log> {
    let mut logs: Vec<Log> = duts.iter().map(|_| Log::default()).collect();
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["A", i, t] => logs[i.parse::<usize>().unwrap()].accepted.push(t.parse().unwrap()),
            ["O", i, t, hex] => {
                let i: usize = i.parse().unwrap();
                logs[i].outputs.push((t.parse().unwrap(), from_hex(hex, duts[i].out_bits)));
            }
            ["T", t] => logs.iter_mut().for_each(|l| l.stuck = Some(t.parse().unwrap())),
            ["C", i, t, iv, ir, ov, or] => {
                let l = &mut logs[i.parse::<usize>().unwrap()];
                assert_eq!(t.parse::<usize>().unwrap(), l.cycles.len(), "trace lines out of order");
                let b = |s: &str| s == "1";
                l.cycles.push(Cycle { in_valid: b(iv), in_ready: b(ir), out_valid: b(ov), out_ready: b(or) });
            }
            _ => panic!("unexpected bench output line: {line}"),
        }
    }
    logs
}

/// The start of a C++ bench for the Verilated top `top`: the includes and
/// the helpers (hex beats to and from Verilator's signals, the random
/// generator); shared with `port_stream`.
pub fn cpp_prelude(top: &str) -> String {
    format!(
        r#"// Generated by generator/tests/pixel_stream
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>
#include "V{top}.h"
#include "verilated.h"

typedef std::vector<uint32_t> Words;

static Words parse_hex(const std::string& s, int bits) {{
    Words w((bits + 31) / 32, 0);
    const int n = static_cast<int>(s.size());
    for (int i = 0; i < n; ++i) {{
        const int nib = n - 1 - i;
        const char ch = s[i];
        const uint32_t d = ch <= '9' ? ch - '0' : ch - 'a' + 10;
        if (nib / 8 < static_cast<int>(w.size())) w[nib / 8] |= d << ((nib % 8) * 4);
    }}
    return w;
}}

static std::string to_hex(const Words& w, int bits) {{
    std::string s;
    for (int nib = (bits + 3) / 4 - 1; nib >= 0; --nib) s.push_back("0123456789abcdef"[(w[nib / 8] >> ((nib % 8) * 4)) & 0xf]);
    return s;
}}

template <typename T>
static void set_sig(T& sig, const Words& w) {{
    uint64_t v = w[0];
    if (w.size() > 1) v |= static_cast<uint64_t>(w[1]) << 32;
    sig = static_cast<T>(v);
}}

template <std::size_t N>
static void set_sig(VlWide<N>& sig, const Words& w) {{
    for (std::size_t i = 0; i < N; ++i) sig[i] = i < w.size() ? w[i] : 0;
}}

template <typename T>
static Words get_sig(const T& sig, int bits) {{
    const uint64_t v = static_cast<uint64_t>(sig);
    Words w((bits + 31) / 32, 0);
    w[0] = static_cast<uint32_t>(v);
    if (w.size() > 1) w[1] = static_cast<uint32_t>(v >> 32);
    return w;
}}

template <std::size_t N>
static Words get_sig(const VlWide<N>& sig, int bits) {{
    Words w((bits + 31) / 32, 0);
    for (std::size_t i = 0; i < w.size() && i < N; ++i) w[i] = sig[i];
    return w;
}}

struct Rng {{
    uint64_t s;
    uint64_t next() {{
        s += 0x9e3779b97f4a7c15ull;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }}
    bool chance(int percent) {{ return percent > 0 && static_cast<int>(next() % 100) < percent; }}
}};
"#
    )
}

fn main_cpp(top: &str, duts: &[Dut]) -> String {
    let total: usize = duts.iter().map(|d| d.beats.len() + d.outputs).sum();
    let mut c = cpp_prelude(top);
    write!(
        c,
        r#"
struct Port {{
    std::vector<Words> beats;
    int in_bits, out_bits;
    std::size_t expect;
    std::size_t next = 0, outs = 0;
    bool valid = false, ready = false;
    Rng src, snk;
    Words garbage() {{
        Words w((in_bits + 31) / 32, 0);
        for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<uint32_t>(src.next());
        if (in_bits % 32) w.back() &= (1u << (in_bits % 32)) - 1;
        return w;
    }}
    bool done() const {{ return next == beats.size() && outs >= expect; }}
}};

int main(int argc, char** argv) {{
    const int gap = argc > 1 ? std::atoi(argv[1]) : 0;
    const int stall = argc > 2 ? std::atoi(argv[2]) : 0;
    const uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
    const bool trace = argc > 4 && std::string(argv[4]) == "trace";
    VerilatedContext ctx;
    V{top} top(&ctx);
    std::vector<Port> p({n});
"#,
        n = duts.len()
    )
    .unwrap();
    for (i, d) in duts.iter().enumerate() {
        writeln!(
            c,
            "    p[{i}].in_bits = {}; p[{i}].out_bits = {}; p[{i}].expect = {};\n    \
             p[{i}].src.s = seed * 1000003ull + {i} * 2ull; p[{i}].snk.s = seed * 1000003ull + {i} * 2ull + 1;\n    \
             {{\n        std::ifstream f(\"in{i}.hex\");\n        std::string line;\n        \
             while (std::getline(f, line)) if (!line.empty()) p[{i}].beats.push_back(parse_hex(line, {}));\n        \
             if (p[{i}].beats.size() != {}) {{ std::fprintf(stderr, \"in{i}.hex: wrong beat count\\n\"); return 3; }}\n    }}",
            d.in_bits,
            d.out_bits,
            d.outputs,
            d.in_bits,
            d.beats.len()
        )
        .unwrap();
    }
    c += "    top.clk = 0;\n    top.rst = 1;\n";
    for i in 0..duts.len() {
        writeln!(c, "    top.in_valid{i} = 0; top.out_ready{i} = 0;").unwrap();
    }
    writeln!(
        c,
        "    for (int k = 0; k < 3; ++k) {{ top.eval(); top.clk = 1; top.eval(); top.clk = 0; }}\n    \
         top.rst = 0;\n    top.eval();\n    \
         const long limit = 200L * {total} + 2000;\n    long tail = -1;\n    \
         for (long t = 0; ; ++t) {{\n        \
         if (t > limit) {{ std::printf(\"T %ld\\n\", t); break; }}"
    )
    .unwrap();
    for i in 0..duts.len() {
        writeln!(
            c,
            "        {{\n            Port& q = p[{i}];\n            \
             if (!q.valid && q.next < q.beats.size() && !q.src.chance(gap)) q.valid = true;\n            \
             top.in_valid{i} = q.valid;\n            \
             set_sig(top.in_data{i}, q.valid ? q.beats[q.next] : q.garbage());\n            \
             q.ready = !q.snk.chance(stall);\n            top.out_ready{i} = q.ready;\n        }}"
        )
        .unwrap();
    }
    c += "        top.eval();\n";
    for i in 0..duts.len() {
        writeln!(
            c,
            "        {{\n            Port& q = p[{i}];\n            \
             if (trace) std::printf(\"C {i} %ld %d %d %d %d\\n\", t, q.valid ? 1 : 0, top.in_ready{i} ? 1 : 0, top.out_valid{i} ? 1 : 0, q.ready ? 1 : 0);\n            \
             if (q.valid && top.in_ready{i}) {{ std::printf(\"A {i} %ld\\n\", t); q.valid = false; ++q.next; }}\n            \
             if (top.out_valid{i} && q.ready) {{ std::printf(\"O {i} %ld %s\\n\", t, to_hex(get_sig(top.out_data{i}, q.out_bits), q.out_bits).c_str()); ++q.outs; }}\n        }}"
        )
        .unwrap();
    }
    c += "        top.clk = 1;\n        top.eval();\n        top.clk = 0;\n        top.eval();\n        bool all = true;\n        for (const Port& q : p) all = all && q.done();\n        if (all && tail < 0) tail = t + 40;\n        if (tail >= 0 && t >= tail) break;\n    }\n    top.final();\n    return 0;\n}\n";
    c
}

/// Checks the full-rate run of one parameter set against a cycle model:
/// image `n`'s pixel `k` (of `pixels`, rows of `w`) is accepted on cycle
/// `n * period + k`, and its output `j` (rows of `ow`) is given on cycle
/// `n * period + outputs[j]`. `what` names an output ("window", "output
/// pixel") in messages.
#[allow(clippy::too_many_arguments)]
pub fn check_cycles(log: &Log, ctx: &str, images: usize, period: usize, outputs: &[usize], (pixels, w): (usize, usize), ow: usize, what: &str) {
    for n in 0..images {
        // The first pixel after reset is accepted on cycle 0.
        let t0 = (n * period) as u64;
        for k in 0..pixels {
            let t = log.accepted[n * pixels + k];
            let want = t0 + k as u64;
            assert_eq!(t, want, "{ctx}: image {n}, pixel (y {}, x {}) accepted on cycle {t}, model {want}", k / w, k % w);
        }
        for (j, &dt) in outputs.iter().enumerate() {
            let (t, _) = log.outputs[n * outputs.len() + j];
            let want = t0 + dt as u64;
            assert_eq!(t, want, "{ctx}: image {n}, {what} (oy {}, ox {}) output on cycle {t}, model {want}", j / ow, j % ow);
        }
    }
}

/// `verilator --lint-only -Wall` of the library module `module` with
/// parameter overrides; success and the tool's output.
pub fn lint(module: &str, dir: &Path, params: &[(&str, i64)]) -> (bool, String) {
    let rtl = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../rtl/{module}.v"));
    let out = Command::new("verilator")
        .args(["--lint-only", "-Wall", "--top-module", module])
        .arg(crate::common::rtl_include())
        .args(params.iter().map(|(p, v)| format!("-G{p}={v}")))
        .arg(rtl)
        .current_dir(dir)
        .output()
        .expect("run verilator");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// Every `legal` parameter set lints clean, and every `illegal` one stops
/// elaboration naming its check's module.
pub fn check_parameters(module: &str, dir: &Path, legal: &[&[(&str, i64)]], illegal: &[(&[(&str, i64)], &str)]) {
    for p in legal {
        let (ok, text) = lint(module, dir, p);
        assert!(ok && text.trim().is_empty(), "legal parameters {p:?} must lint clean:\n{text}");
    }
    for (p, check) in illegal {
        let (ok, text) = lint(module, dir, p);
        assert!(!ok, "{p:?} must stop elaboration:\n{text}");
        assert!(text.contains(check), "{p:?} must name {check}:\n{text}");
    }
}

/// The cell types and counts yosys' `stat` lists.
pub fn cells(stat: &str) -> Vec<(String, u64)> {
    let after = stat.split("Number of cells:").nth(1).unwrap_or_else(|| panic!("no cell count:\n{stat}"));
    after
        .lines()
        .skip(1)
        .map_while(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [name, n] => n.parse().ok().map(|n| (name.to_string(), n)),
                _ => None,
            }
        })
        .collect()
}

/// A yosys `stat` report and the cells it lists.
pub struct Synth {
    pub stat: String,
    pub cells: Vec<(String, u64)>,
}

impl Synth {
    /// How many cells of the types `pred` accepts.
    pub fn count(&self, pred: impl Fn(&str) -> bool) -> u64 {
        self.cells.iter().filter(|(c, _)| pred(c)).map(|(_, n)| n).sum()
    }

    /// The cell types and counts, "type n, type n, ...".
    pub fn list(&self) -> String {
        self.cells.iter().map(|(c, n)| format!("{c} {n}")).collect::<Vec<_>>().join(", ")
    }
}

/// yosys `synth_xilinx -family xcu -noiopad` of the library's `module`
/// (`rtl/<module>.v`) with `chparam <params>` (e.g. `-set W 8`), in `dir`
/// (script `<name>.ys`, report `<name>.txt`).
pub fn synth_xilinx(dir: &Path, module: &str, name: &str, params: &str) -> Synth {
    let script = format!(
        "read_verilog -defer {}\nchparam {params} {module}\n\
         synth_xilinx -family xcu -top {module} -noiopad\ntee -q -o {name}.txt stat\n",
        crate::common::rtl_dir().join(format!("{module}.v")).display()
    );
    fs::write(dir.join(format!("{name}.ys")), script).unwrap();
    run(Command::new("yosys").args(["-q", "-s", &format!("{name}.ys")]), "yosys synth_xilinx", dir);
    let stat = fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
    Synth { cells: cells(&stat), stat }
}

/// The synthesis test of a module: `synth_xilinx` of `module` once per
/// `(name, chparam, label)` of `runs`, in a scratch directory
/// `<test>_synth` (yosys required, removed on success); `check(i, synth)`
/// checks run i's cells, then every run's cell counts are printed, one
/// line per run after its label.
pub fn synth_runs(test: &str, module: &str, runs: &[(String, String, String)], mut check: impl FnMut(usize, &Synth)) {
    crate::common::require_tool("yosys", "-V");
    let dir = crate::common::scratch(&format!("{test}_synth"));
    let mut report = String::new();
    for (i, (name, params, label)) in runs.iter().enumerate() {
        let syn = synth_xilinx(&dir, module, name, params);
        writeln!(report, "  {label}: {}", syn.list()).unwrap();
        check(i, &syn);
    }
    eprintln!("{test}: yosys synth_xilinx -family xcu -noiopad\n{report}");
    fs::remove_dir_all(&dir).ok();
}

/// The synthesis test of a line-buffer module (`fptgen_maxpool`,
/// `fptgen_swg`) over `(name, chparam, pixel bits, RAM_STYLE)`: the line
/// buffer maps to RAM primitives, and the flip-flops are at most `pixels`
/// pixel registers (`what`) and 64 more (counters).
pub fn line_buffer_synth(test: &str, module: &str, sets: &[(&str, &str, u64, &str)], pixels: u64, what: &str) {
    let runs: Vec<_> = sets
        .iter()
        .map(|(name, params, _, style)| (name.to_string(), format!("{params} -set RAM_STYLE \"{style}\""), format!("{name} (ram_style {style})")))
        .collect();
    synth_runs(test, module, &runs, |i, syn| {
        let (name, _, px, _) = sets[i];
        let stat = &syn.stat;
        let rams = syn.count(|c| c.starts_with("RAM"));
        let ffs = syn.count(|c| c.starts_with("FD"));
        assert!(rams > 0, "{name}: the line buffer must map to RAM primitives:\n{stat}");
        assert!(ffs <= pixels * px + 64, "{name}: {ffs} flip-flops, more than the {what}:\n{stat}");
    });
}

/// A test's bench of an instance per parameter set, each streaming its
/// images: the scratch directory, the instances, the images and the logs
/// of the full-rate run.
pub struct Images {
    pub dir: std::path::PathBuf,
    pub duts: Vec<Dut>,
    pub imgs: Vec<Vec<Vec<u64>>>,
    pub full_rate: Vec<Log>,
}

/// Builds the top `top` (in a fresh scratch directory `name`) with an
/// instance of `module` per image set, `dut(i, &imgs[i])`, and runs it at
/// full rate.
pub fn image_bench(name: &str, top: &str, module: &str, imgs: Vec<Vec<Vec<u64>>>, dut: impl Fn(usize, &[Vec<u64>]) -> Dut) -> Images {
    let duts: Vec<Dut> = imgs.iter().enumerate().map(|(i, im)| dut(i, im)).collect();
    let dir = crate::common::scratch(name);
    let full_rate = build_and_run(&dir, top, module, &duts);
    Images { dir, duts, imgs, full_rate }
}
