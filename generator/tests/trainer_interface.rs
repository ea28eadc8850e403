//! The trainer's port protocol as docs/training.md ("Interface") states it,
//! checked in Verilator on `examples/tiny` with `lr_shift: 0` (so that one
//! iteration moves parameters), by a testbench that drives the generated top
//! level the way a user's would:
//!
//! * reset: synchronous, active high, one cycle suffices: with random
//!   initial register values (`--x-initial unique`, four seeds), a run after
//!   one reset cycle equals the run after four, event for event and in the
//!   final memories; every status output is 0 after it;
//! * `ctl_start` is acted on in IDLE and DONE only; `st_busy` rises on the
//!   second rising edge after the one that samples `ctl_start` (nothing to
//!   drain), and `cfg_iterations` is sampled on that edge (a change before
//!   it counts, one after it does not);
//! * iteration k (1, 2, ...) ends, `st_iteration` becoming k, exactly
//!   `k * cycles_per_iteration` edges after the edge that raised `st_busy`;
//!   the last one also lowers `st_busy` and raises `st_done`, a level that
//!   stays high until the next run's start (which lowers it on the edge that
//!   raises `st_busy`);
//! * `ctl_pause` before `st_busy` rises, or after the run's last BOUNDARY,
//!   is ignored; in between it pauses at the next BOUNDARY, and after
//!   `ctl_resume` the run ends with the parameters of an uninterrupted run;
//! * the host port (`host_*`): while paused a read gives the committed
//!   parameter (the initial image with the updates of the groups before the
//!   paused one), and a write is ignored, as is one while running;
//! * the update events (`mon_kind` 2) applied to the initial memory image,
//!   parameter `st_group * P + mon_index` in the training order at the
//!   memory word and column of docs/hardware.md's layout, give exactly the
//!   final memories, which the harness-only input `dump_final` writes
//!   (`FPTGEN_DUMP_FINAL`).
//!
//! Needs Verilator: fails (does not skip) without it.

use std::fs;
use std::path::Path;
use std::process::Command;

use fptgen_generator::output::write_dir;
use fptgen_generator::plan::plan;
use fptgen_generator::render::{render, GenInfo};
use fptgen_sim::model;
use fptgen_sim::weights::{self, Conversion};

mod common;
use common::{require_tool, run, scratch};

const TB: &str = r#"
#include "Vtiny.h"
#include "verilated.h"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

static int failures = 0;
#define CHECK(cond, ...) do { if (!(cond)) { std::printf("FAIL line %d: ", __LINE__); std::printf(__VA_ARGS__); std::printf("\n"); ++failures; } } while (0)

struct Options {
    int rst_cycles = 4;
    int rand_seed = 0;           // 0: registers start at 0; else random, this seed
    uint32_t iterations = 1;
    long cfg_to_2_before = -1;   // cfg_iterations becomes 2 before this edge offset
    long start_at = -1;          // another one-cycle ctl_start before this edge offset
    long pause_at = -1;          // one-cycle ctl_pause before this edge offset
    long resume_after = 50;      // ctl_resume this many edges after st_paused rose
    bool host = false;           // host port: a write while running, reads and a write while paused
};

struct Result {
    long busy_rise = -1, done_rise = -1, done_fall = -1, busy_fall = -1, paused_rise = -1, restart = -1;
    std::vector<long> iteration_edges;   // edge offset at which st_iteration became 1, 2, ...
    std::vector<std::string> events;
    std::vector<uint64_t> updates;       // (group*P + block) << 32 | new value, in order
    std::vector<std::string> wmem, bmem; // dump_final's files
    bool done_held = true;
    long paused_group = -1;              // st_group at the first pause
    std::vector<uint64_t> paused_reads;  // host reads while paused: parameter t of the training order
    uint64_t reread = 0;                 // parameter 0 read again after a host write while paused
};

// Parameter t of the training order (weights row-major, then biases) at its
// memory word and column (docs/hardware.md): returns {is_bias, word, column}.
static void locate(long t, bool& bias, long& word, long& col) {
    bias = t >= OUTPUTS * INPUTS;
    if (bias) {
        const long o = t - OUTPUTS * INPUTS;
        word = o / PE;
        col = o % PE;
    } else {
        const long o = t / INPUTS, i = t % INPUTS;
        word = (o / PE) * SF + i / SIMD;
        col = (o % PE) * SIMD + i % SIMD;
    }
}

static std::vector<std::string> read_lines(const char* path) {
    std::vector<std::string> v;
    std::ifstream f(path);
    std::string s;
    while (f >> s) v.push_back(s);
    return v;
}

static Result train(const Options& o) {
    Result r;
    auto ctx = std::make_unique<VerilatedContext>();
    if (o.rand_seed != 0) {
        ctx->randReset(2);
        ctx->randSeed(o.rand_seed);
    }
    auto top = std::make_unique<Vtiny>(ctx.get());
    long edge_no = 0;
    auto edge = [&]() { top->eval(); top->clk = 1; top->eval(); ++edge_no; top->clk = 0; top->eval(); };
    top->clk = 0; top->rst = 1; top->in_valid = 0; top->out_ready = 1; top->ld_valid = 0;
    top->ctl_start = 0; top->ctl_pause = 0; top->ctl_resume = 0; top->dump_final = 0;
    top->cfg_iterations = o.iterations;
    for (int i = 0; i < o.rst_cycles; ++i) edge();
    top->rst = 0;
    top->eval();
    CHECK(!top->st_busy && !top->st_paused && !top->st_done && top->st_iteration == 0 && top->st_group == 0 &&
          top->st_member == 0 && top->st_last_loss == 0 && top->ld_ready && !top->mon_valid,
          "status after %d reset cycle(s), seed %d", o.rst_cycles, o.rand_seed);
    // Load the M samples, with a gap after every second word.
    for (int k = 0; k < M; ++k) {
        for (;;) {
            top->ld_valid = (edge_no % 3) != 2;
            top->ld_x = XS[k];
            top->ld_t = TS[k];
            top->eval();
            const bool fire = top->ld_valid && top->ld_ready;
            edge();
            if (fire) break;
        }
    }
    top->ld_valid = 0;
    for (int i = 0; i < 5; ++i) edge();

    top->ctl_start = 1;
    const long s = edge_no + 1;   // the edge that samples ctl_start
    bool busy = false, done = false, paused = false;
    uint32_t it = 0;
    long paused_at = -1, done_at = -1;
    for (long guard = 0; guard < 200000; ++guard) {
        const long e = edge_no + 1 - s;   // offset of the coming edge
        top->ctl_start = e == 0 || e == o.start_at;
        top->ctl_pause = e == o.pause_at;
        top->ctl_resume = paused_at >= 0 && e == paused_at + o.resume_after;
        if (o.cfg_to_2_before >= 0 && e == o.cfg_to_2_before) top->cfg_iterations = 2;
        // The host port: a write while running (ignored), and while paused
        // a read of every parameter, a write (ignored) and a read again.
        top->host_en = 0;
        top->host_we = 0;
        const long pe = paused_at >= 0 ? e - paused_at : -1;   // edges into the pause
        if (o.host && (e == 10 || (paused && pe >= 1 && pe <= T + 2))) {
            const long t = paused && pe <= T ? pe - 1 : 0;
            bool bias; long word, col;
            locate(t, bias, word, col);
            top->host_en = 1;
            top->host_we = !paused || pe == T + 1;
            top->host_sel = bias ? 1 : 0;
            top->host_addr = static_cast<uint32_t>(word);
            top->host_col = static_cast<uint32_t>(col);
            top->host_wdata = 0x55;
        }
        const bool host_read = o.host && paused && pe >= 1 && pe <= T + 2 && pe != T + 1;
        top->eval();
        if (top->mon_valid) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "kind %d it %u group %d index %d param %02x grad %08x loss %u", top->mon_kind,
                          top->st_iteration, top->st_group, top->mon_index, top->mon_param, top->mon_grad, top->st_last_loss);
            r.events.push_back(buf);
            if (top->mon_kind == 2)
                r.updates.push_back((static_cast<uint64_t>(top->st_group * P + top->mon_index) << 32) | top->mon_param);
        }
        edge();
        if (host_read) {
            // host_rdata after the edge: the column read (zero-extended)
            const uint64_t v = top->host_rdata;
            if (pe <= T) r.paused_reads.push_back(v);
            else r.reread = v;
        }
        if (top->st_busy != busy) {
            busy = top->st_busy;
            if (busy && r.busy_rise < 0) r.busy_rise = e;
            else if (busy) r.restart = e;
            else r.busy_fall = e;
        }
        if (top->st_iteration != it) {
            it = top->st_iteration;
            if (it != 0) r.iteration_edges.push_back(e);
        }
        if (top->st_paused != paused) {
            paused = top->st_paused;
            if (paused) { paused_at = e; if (r.paused_rise < 0) { r.paused_rise = e; r.paused_group = top->st_group; } }
        }
        if (top->st_done != done) {
            done = top->st_done;
            if (done) { r.done_rise = e; done_at = e; }
            else r.done_fall = e;
        }
        if (done_at >= 0 && done_at > o.start_at && e >= done_at + 50) break;
    }
    // st_done is a level: it stays high (nothing restarts here).
    for (int i = 0; i < 50; ++i) {
        edge();
        if (!top->st_done || top->st_busy) r.done_held = false;
    }
    top->dump_final = 1;
    edge();
    top->dump_final = 0;
    top->final();
    r.wmem = read_lines("sim/run/mem/fc1_w.hex.final");
    r.bmem = read_lines("sim/run/mem/fc1_b.hex.final");
    std::remove("sim/run/mem/fc1_w.hex.final");
    std::remove("sim/run/mem/fc1_b.hex.final");
    return r;
}

static bool same(const Result& a, const Result& b) {
    return a.busy_rise == b.busy_rise && a.done_rise == b.done_rise && a.iteration_edges == b.iteration_edges &&
           a.events == b.events && a.wmem == b.wmem && a.bmem == b.bmem;
}

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    // Reference run.
    const Result ref = train(Options{});
    CHECK(ref.busy_rise == 2, "st_busy rose after edge %ld, expected 2", ref.busy_rise);
    CHECK(ref.iteration_edges.size() == 1 && ref.iteration_edges[0] == 2 + CYCLES,
          "iteration 1 ended at edge %ld, expected %ld", ref.iteration_edges.empty() ? -1 : ref.iteration_edges[0], 2 + CYCLES);
    CHECK(ref.done_rise == 2 + CYCLES && ref.busy_fall == ref.done_rise, "st_done rose at %ld, st_busy fell at %ld",
          ref.done_rise, ref.busy_fall);
    CHECK(ref.done_held, "st_done did not stay high");
    CHECK(ref.paused_rise < 0 && ref.restart < 0, "unexpected pause or restart");
    CHECK(ref.updates.size() == T, "%zu updates, expected %d", ref.updates.size(), T);

    // One reset cycle suffices, from random initial values.
    for (int seed = 1; seed <= 4; ++seed) {
        Options a, b;
        a.rst_cycles = 1; a.rand_seed = seed;
        b.rst_cycles = 4; b.rand_seed = seed;
        CHECK(same(train(a), train(b)), "seed %d: one reset cycle and four differ", seed);
    }

    // cfg_iterations is sampled on the edge that raises st_busy.
    {
        Options a;
        a.cfg_to_2_before = 2;
        const Result r = train(a);
        CHECK(r.iteration_edges.size() == 2 && r.iteration_edges[1] == 2 + 2 * CYCLES && r.done_rise == 2 + 2 * CYCLES,
              "cfg_iterations changed before edge 2: %zu iterations, done at %ld", r.iteration_edges.size(), r.done_rise);
        Options b;
        b.cfg_to_2_before = 3;
        CHECK(same(train(b), ref), "cfg_iterations changed before edge 3 made a difference");
    }

    // ctl_start during a run is ignored; after DONE it starts again.
    {
        Options a;
        a.start_at = 10;
        CHECK(same(train(a), ref), "ctl_start during the run made a difference");
        Options b;
        b.start_at = 2 + CYCLES + 5;
        const Result r = train(b);
        CHECK(r.restart == b.start_at + 2 && r.done_fall == r.restart && r.iteration_edges.size() == 2 &&
                  r.iteration_edges[1] == b.start_at + 2 + CYCLES && r.done_rise == b.start_at + 2 + CYCLES,
              "restart after done: st_busy rose at %ld, done at %ld", r.restart, r.done_rise);
    }

    // ctl_pause: ignored before st_busy and after the last BOUNDARY.
    {
        Options a;
        a.pause_at = 1;
        CHECK(same(train(a), ref), "ctl_pause before st_busy made a difference");
        Options b;
        b.pause_at = 2 + CYCLES - 1;   // during the last group's update
        CHECK(same(train(b), ref), "ctl_pause after the last BOUNDARY made a difference");
        Options c;
        c.pause_at = 30;
        const Result r = train(c);
        CHECK(r.paused_rise > 30 && r.done_rise > ref.done_rise, "pause at 30: st_paused rose at %ld", r.paused_rise);
        CHECK(r.events == ref.events && r.wmem == ref.wmem && r.bmem == ref.bmem,
              "a paused and resumed run differs from the uninterrupted one");
    }

    // The host port: while paused it reads the committed parameters (the
    // initial ones with the updates of the groups before the paused one);
    // a write while paused, and one while running, are ignored.
    {
        Options h;
        h.pause_at = CYCLES / 2;   // in group 1 of 3
        h.host = true;
        const Result r = train(h);
        CHECK(r.events == ref.events && r.wmem == ref.wmem && r.bmem == ref.bmem,
              "host accesses while running and paused changed the run");
        std::vector<std::string> wimg = read_lines("mem/fc1_w.hex"), bimg = read_lines("mem/fc1_b.hex");
        std::vector<uint64_t> want;
        for (long t = 0; t < T; ++t) {
            bool bias; long word, col;
            locate(t, bias, word, col);
            const int width = bias ? B_W : W_W;
            uint64_t v = (std::strtoull((bias ? bimg : wimg)[word].c_str(), nullptr, 16) >> (col * width)) & ((1ull << width) - 1);
            for (uint64_t u : ref.updates)
                if (static_cast<long>(u >> 32) == t && static_cast<long>(u >> 32) / P < r.paused_group) v = u & ((1ull << width) - 1);
            want.push_back(v);
        }
        CHECK(r.paused_group > 0, "paused in group %ld: the committed parameters there are the initial ones; the check is weak", r.paused_group);
        CHECK(r.paused_reads == want, "host reads while paused in group %ld differ from the committed parameters", r.paused_group);
        CHECK(!want.empty() && r.reread == want[0], "a host write while paused changed parameter 0 (%llx, was %llx)",
              static_cast<unsigned long long>(r.reread), static_cast<unsigned long long>(want.empty() ? 0 : want[0]));
    }

    // The update events, applied to the initial image, give the final memories.
    {
        std::vector<std::string> wimg = read_lines("mem/fc1_w.hex"), bimg = read_lines("mem/fc1_b.hex");
        std::vector<uint64_t> w, b;
        for (auto& x : wimg) w.push_back(std::strtoull(x.c_str(), nullptr, 16));
        for (auto& x : bimg) b.push_back(std::strtoull(x.c_str(), nullptr, 16));
        for (uint64_t u : ref.updates) {
            bool bias; long word, col;
            locate(static_cast<long>(u >> 32), bias, word, col);
            const int width = bias ? B_W : W_W;
            uint64_t& m = bias ? b[word] : w[word];
            const uint64_t mask = ((1ull << width) - 1) << (col * width);
            m = (m & ~mask) | (((u & 0xffffffffull) << (col * width)) & mask);
        }
        CHECK(w.size() == ref.wmem.size() && b.size() == ref.bmem.size(), "memory sizes");
        for (size_t k = 0; k < w.size() && k < ref.wmem.size(); ++k)
            CHECK(w[k] == std::strtoull(ref.wmem[k].c_str(), nullptr, 16), "weight word %zu: events give %llx, memory %s", k,
                  static_cast<unsigned long long>(w[k]), ref.wmem[k].c_str());
        for (size_t k = 0; k < b.size() && k < ref.bmem.size(); ++k)
            CHECK(b[k] == std::strtoull(ref.bmem[k].c_str(), nullptr, 16), "bias word %zu: events give %llx, memory %s", k,
                  static_cast<unsigned long long>(b[k]), ref.bmem[k].c_str());
        CHECK(ref.wmem != wimg || ref.bmem != bimg, "training changed nothing; the check is void");
    }
    std::printf(failures == 0 ? "PASS\n" : "FAILED %d\n", failures);
    return failures == 0 ? 0 : 1;
}
"#;

#[test]
fn trainer_interface_protocol() {
    require_tool("verilator", "--version");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tiny/model.yaml");
    let yaml = fs::read_to_string(&src).expect("tiny model") + "  lr_shift: 0\n";
    let m = model::parse(&yaml, &src).expect("model");
    let params = weights::load(&m, Conversion::Exact).expect("weights");
    let n = plan(&m);
    let t = n.trainer.as_ref().expect("trainer");
    let l = &n.layers[0];
    assert_eq!((n.layers.len(), t.words, t.tensors.len()), (1, 1, 2), "the testbench assumes tiny's shape");
    // The weight and bias memories (the tensors of a dense layer).
    let (w, b) = (&l.memories[0], &l.memories[1]);
    assert_eq!((w.key, b.key, w.pe, b.simd), ("w", "b", b.pe, 1), "a dense layer's memories");
    assert!(w.mem.cols * w.mem.col_width as usize <= 64 && t.word_w <= 64 && n.out_bits() <= 64);
    let gen = GenInfo { version: fptgen_generator::VERSION, source: "trainer_interface".into() };
    let files = render(&params, &n, &gen).expect("render");
    let dir = scratch("trainer_interface");
    write_dir(&dir.join("out"), fptgen_generator::output::DESIGN, &files).expect("write");
    let out = dir.join("out");
    fs::create_dir_all(out.join("sim/run/mem")).expect("mkdir");

    // Buffer samples: input and target vectors, element k at bits [k*W +: W].
    let consts = format!(
        "static const int M = {m};\nstatic const int P = {p};\nstatic const int T = {tt};\nstatic const long CYCLES = {c};\n\
         static const long INPUTS = {i};\nstatic const long OUTPUTS = {o};\nstatic const long PE = {pe};\n\
         static const long SIMD = {simd};\nstatic const long SF = {sf};\nstatic const int W_W = {ww};\nstatic const int B_W = {bw};\n\
         static const uint64_t XS[{m}] = {{0x1020, 0xf030, 0x7f80, 0x0506}};\n\
         static const uint64_t TS[{m}] = {{0x0810, 0x0000, 0x1f01, 0x0302}};\n",
        m = t.m,
        p = t.p,
        tt = t.t,
        c = t.cycles_per_iteration,
        i = l.inputs,
        o = l.outputs,
        pe = w.pe,
        simd = w.simd,
        sf = w.cols.div_ceil(w.simd),
        ww = w.format.width,
        bw = b.format.width,
    );
    assert_eq!(t.m, 4, "four samples below");
    let tb = TB.replacen("static int failures", &format!("{consts}static int failures"), 1);
    fs::write(out.join("tb.cpp"), tb).expect("tb");
    let rtl: Vec<String> = files
        .iter()
        .filter_map(|f| f.path.to_str().filter(|p| p.starts_with("rtl/") && p.ends_with(".v")).map(str::to_string))
        .collect();
    run(
        Command::new("verilator")
            .args(["--cc", "--exe", "--build", "-Wall", "-j", "2", "+define+FPTGEN_DUMP_FINAL", "--x-initial", "unique"])
            .args(["--top-module", "tiny", "-Mdir", "obj", "-o", "vtb", "-Irtl"])
            .args(common::quick_build())
            .args(&rtl)
            .arg(out.join("tb.cpp")),
        "verilator build",
        &out,
    );
    let stdout = run(&mut Command::new(out.join("obj/vtb")), "testbench", &out);
    assert!(stdout.contains("PASS") && !stdout.contains("FAIL"), "{stdout}");
    fs::remove_dir_all(&dir).ok();
}
