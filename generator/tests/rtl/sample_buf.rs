//! `rtl/fptgen_sample_buf.v` in Verilator against its specification: the
//! word-wide load stream (random gaps), then two plays of the buffer, one
//! with the pipeline always ready, where sample k must be taken exactly at
//! play + D + k * INTERVAL (D = 1 for one word per vector, WORDS + 2
//! otherwise: the schedule the trainer's cycle count relies on), one with
//! random back-pressure, where samples must come in order, stay valid until
//! taken and never closer than INTERVAL; and the targets, one per t_next
//! pulse (from the second cycle after play on: the target memory is read
//! one ahead). Configurations built with SUBSET = 1 then play a subset (sub
//! high: `count` samples in the order of a queue the harness keeps, popped
//! through x_sel_pop and t_sel_pop, as fptgen_diff_eval's FIFO), which must
//! follow play A's exact timing for `count` samples, with the queue's
//! inputs and targets. Several configurations in one build, every cycle's
//! outputs compared. Fails (does not skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common;
use crate::common::{mask, require_tool, scratch, verilate_and_run, Rng};

#[derive(Debug, Clone, Copy)]
struct Cfg {
    m: usize,
    x_w: u32,
    words: usize,
    word_w: u32,
    interval: usize,
    subset: bool,
}

const T_W: u32 = 12;

#[derive(Debug, Clone, Copy, Default)]
struct In {
    ld_valid: bool,
    ld_x: u64,
    ld_t: u64,
    ld_enable: bool,
    play: bool,
    sub: bool,
    count: usize,
    x_ready: bool,
    t_next: bool,
}

#[test]
fn sample_buffer_loads_and_plays_on_schedule() {
    require_tool("verilator", "--version");
    let cfgs = [
        Cfg { m: 5, x_w: 40, words: 3, word_w: 14, interval: 7, subset: true },
        Cfg { m: 3, x_w: 64, words: 1, word_w: 64, interval: 1, subset: true },
        Cfg { m: 4, x_w: 9, words: 2, word_w: 5, interval: 4, subset: false },
        Cfg { m: 1, x_w: 30, words: 4, word_w: 8, interval: 6, subset: true },
        Cfg { m: 6, x_w: 20, words: 1, word_w: 20, interval: 3, subset: false },
        Cfg { m: 7, x_w: 20, words: 1, word_w: 20, interval: 2, subset: true },
    ];
    let mut rng = Rng(0x5a3b_1e00);
    // Per configuration: the samples, and the inputs of every cycle.
    let mut samples: Vec<Vec<(u64, u64)>> = Vec::new();
    let mut stim: Vec<Vec<In>> = Vec::new();
    let mut plays: Vec<[usize; 2]> = Vec::new();
    // Per configuration with SUBSET = 1: the subset play's cycle and queue.
    let mut subs: Vec<Option<(usize, Vec<usize>)>> = Vec::new();
    let cycles = 700;
    for c in &cfgs {
        let s: Vec<(u64, u64)> = (0..c.m).map(|_| (rng.next() & mask(c.x_w), rng.next() & mask(T_W))).collect();
        let mut v = vec![In::default(); cycles];
        // Load: words in order, random gaps.
        let (mut k, mut w, mut t) = (0, 0, 0);
        while k < c.m {
            let valid = rng.next() % 10 < 7;
            v[t] = In { ld_valid: valid, ld_enable: true, ld_x: (s[k].0 >> (w as u32 * c.word_w)) & mask(c.word_w), ld_t: if w + 1 == c.words { s[k].1 } else { rng.next() & mask(T_W) }, ..In::default() };
            if valid {
                w += 1;
                if w == c.words {
                    w = 0;
                    k += 1;
                }
            }
            t += 1;
        }
        // Play A (always ready), then play B (random back-pressure).
        let a = t + 3;
        let b = a + c.words + 3 + c.m * c.interval + 20;
        assert!(b + c.words + 3 + c.m * c.interval * 4 + 40 < cycles);
        v[a].play = true;
        v[b].play = true;
        for (i, x) in v.iter_mut().enumerate().skip(a) {
            x.x_ready = i < b || rng.next().is_multiple_of(2);
        }
        for start in [a, b] {
            let mut pulses = 0;
            // (never in the cycle right after play)
            let mut i = start + 2;
            while pulses < c.m {
                if rng.next().is_multiple_of(3) {
                    v[i].t_next = true;
                    pulses += 1;
                }
                i += 1;
            }
        }
        // Play C (SUBSET = 1): a random subset, in a random order, always
        // ready.
        let sub = c.subset.then(|| {
            let start = b + c.words + 3 + c.m * c.interval * 4 + 40;
            let count = rng.range(1, c.m as i64) as usize;
            let mut pool: Vec<usize> = (0..c.m).collect();
            let queue: Vec<usize> = (0..count).map(|_| pool.remove(rng.range(0, pool.len() as i64 - 1) as usize)).collect();
            assert!(start + c.words + 3 + count * c.interval * 3 + 20 < cycles);
            v[start].play = true;
            v[start].sub = true;
            v[start].count = count;
            for x in v.iter_mut().skip(start) {
                x.x_ready = true;
            }
            let mut pulses = 0;
            // (never in the cycle right after play)
            let mut i = start + 2;
            while pulses < count {
                if rng.next().is_multiple_of(3) {
                    v[i].t_next = true;
                    pulses += 1;
                }
                i += 1;
            }
            (start, queue)
        });
        samples.push(s);
        stim.push(v);
        plays.push([a, b]);
        subs.push(sub);
    }

    let dir = scratch("rtl_sample_buf");
    let mut top = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule buf_top (\n    input wire clk,\n    input wire rst");
    for (i, c) in cfgs.iter().enumerate() {
        write!(top, ",\n    input wire [{}:0] ld_x{i}, input wire [{}:0] ld_t{i}, input wire ld_valid{i}, output wire ld_ready{i}, input wire ld_enable{i}, input wire play{i}, output wire [{}:0] x_data{i}, output wire x_valid{i}, input wire x_ready{i}, output wire [{}:0] t_data{i}, input wire t_next{i}, input wire sub{i}, input wire [{cm}:0] count{i}, input wire [{sm}:0] x_sel{i}, output wire x_sel_pop{i}, input wire [{sm}:0] t_sel{i}, output wire t_sel_pop{i}", c.word_w - 1, T_W - 1, c.x_w - 1, T_W - 1, cm = common::bits_for(c.m + 1) - 1, sm = common::bits_for(c.m) - 1).unwrap();
    }
    top += "\n);\n";
    for (i, c) in cfgs.iter().enumerate() {
        write!(top, "fptgen_sample_buf #(.M({}), .X_W({}), .T_W({T_W}), .WORDS({}), .WORD_W({}), .INTERVAL({}), .SUBSET({})) u{i} (\n    .clk(clk), .rst(rst), .ld_x(ld_x{i}), .ld_t(ld_t{i}), .ld_valid(ld_valid{i}), .ld_ready(ld_ready{i}), .ld_enable(ld_enable{i}),\n    .play(play{i}), .sub(sub{i}), .count(count{i}), .x_sel(x_sel{i}), .x_sel_pop(x_sel_pop{i}), .t_sel(t_sel{i}), .t_sel_pop(t_sel_pop{i}),\n    .x_data(x_data{i}), .x_valid(x_valid{i}), .x_ready(x_ready{i}), .t_data(t_data{i}), .t_next(t_next{i}));\n", c.m, c.x_w, c.words, c.word_w, c.interval, u8::from(c.subset)).unwrap();
    }
    top += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("buf_top.v"), top).unwrap();
    let mut text = String::new();
    for t in 0..cycles {
        for v in &stim {
            let x = v[t];
            write!(text, "{} {:x} {:x} {} {} {} {} {} {:x} ", u8::from(x.ld_valid), x.ld_x, x.ld_t, u8::from(x.ld_enable), u8::from(x.play), u8::from(x.x_ready), u8::from(x.t_next), u8::from(x.sub), x.count).unwrap();
        }
        text.push('\n');
    }
    fs::write(dir.join("stim.txt"), text).unwrap();
    let mut cpp = String::from("#include \"Vbuf_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vbuf_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    top.clk = 0; top.rst = 1; top.eval(); top.clk = 1; top.eval(); top.clk = 0; top.rst = 0; top.eval();\n");
    // The queues: x_sel and t_sel show the entry at their own pointer,
    // which a pop advances on the edge.
    for (i, c) in cfgs.iter().enumerate() {
        let q: Vec<String> = subs[i].as_ref().map(|(_, q)| q.clone()).unwrap_or_default().iter().map(|k| k.to_string()).collect();
        writeln!(cpp, "    const unsigned q{i}[] = {{{}0}}; unsigned xp{i} = 0, tp{i} = 0; const unsigned qn{i} = {};", q.iter().map(|k| format!("{k}, ")).collect::<String>(), q.len()).unwrap();
        let _ = c;
    }
    writeln!(cpp, "    for (int t = 0; t < {cycles}; ++t) {{\n        unsigned long long r[9];").unwrap();
    for i in 0..cfgs.len() {
        writeln!(cpp, "        for (int k = 0; k < 9; ++k) if (std::fscanf(f, \"%llx\", &r[k]) != 1) return 3;\n        top.ld_valid{i} = r[0]; top.ld_x{i} = r[1]; top.ld_t{i} = r[2]; top.ld_enable{i} = r[3]; top.play{i} = r[4]; top.x_ready{i} = r[5]; top.t_next{i} = r[6]; top.sub{i} = r[7]; top.count{i} = r[8];\n        top.x_sel{i} = q{i}[xp{i} < qn{i} ? xp{i} : qn{i}]; top.t_sel{i} = q{i}[tp{i} < qn{i} ? tp{i} : qn{i}];").unwrap();
    }
    cpp += "        top.eval();\n";
    for i in 0..cfgs.len() {
        writeln!(cpp, "        bool xpop{i} = top.x_sel_pop{i}, tpop{i} = top.t_sel_pop{i};").unwrap();
    }
    for i in 0..cfgs.len() {
        writeln!(cpp, "        std::printf(\"%d %d %llx %llx \", (int)top.ld_ready{i}, (int)top.x_valid{i}, (unsigned long long)top.x_data{i}, (unsigned long long)top.t_data{i});").unwrap();
    }
    cpp += "        std::printf(\"\\n\");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n";
    for i in 0..cfgs.len() {
        writeln!(cpp, "        if (xpop{i}) ++xp{i}; if (tpop{i}) ++tp{i};").unwrap();
    }
    cpp += "    }\n";
    for i in 0..cfgs.len() {
        writeln!(cpp, "    std::printf(\"%u %u\\n\", xp{i}, tp{i});").unwrap();
    }
    cpp += "    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), cpp).unwrap();
    let out = verilate_and_run(&dir, "buf_top", &["fptgen_sample_buf.v"]);
    let rows: Vec<Vec<u64>> = out.lines().map(|l| l.split_whitespace().map(|x| u64::from_str_radix(x, 16).unwrap()).collect()).collect();
    assert_eq!(rows.len(), cycles + cfgs.len());
    // The queues' final pointers: every entry popped once on each side.
    for (i, sub) in subs.iter().enumerate() {
        let n = sub.as_ref().map_or(0, |(_, q)| q.len() as u64);
        assert_eq!(rows[cycles + i], vec![n, n], "configuration {i}: queue pops (x, t)");
    }

    for (i, c) in cfgs.iter().enumerate() {
        let get = |t: usize, k: usize| rows[t][4 * i + k];
        let ctx = format!("configuration {i} {c:?}");
        for (t, x) in stim[i].iter().enumerate() {
            assert_eq!(get(t, 0), u64::from(x.ld_enable), "{ctx}: ld_ready at cycle {t}");
        }
        let d = if c.words == 1 { 1 } else { c.words + 2 };
        for (phase, &start) in plays[i].iter().enumerate() {
            let end = if phase == 0 { plays[i][1] } else { subs[i].as_ref().map_or(cycles, |(c, _)| *c) };
            // Takes: cycles (before the edge) with x_valid and x_ready.
            let takes: Vec<usize> = (start + 1..end).filter(|&t| get(t, 1) == 1 && stim[i][t].x_ready).collect();
            assert_eq!(takes.len(), c.m, "{ctx}, play {phase}: takes at {takes:?}");
            for (k, &t) in takes.iter().enumerate() {
                assert_eq!(get(t, 2), samples[i][k].0, "{ctx}, play {phase}: x_data of sample {k} at cycle {t}");
                // Row t is the cycle before edge t + 1; play was on edge start + 1.
                if phase == 0 {
                    assert_eq!(t - start, d + k * c.interval, "{ctx}: sample {k} taken {} edges after play", t - start);
                } else if k > 0 {
                    assert!(t - takes[k - 1] >= c.interval, "{ctx}, play 1: samples {} and {k} {} cycles apart", k - 1, t - takes[k - 1]);
                }
            }
            // Valid stays up until taken, and only a sample is ever valid.
            let mut k = 0;
            for (t, x) in stim[i].iter().enumerate().take(end).skip(start + 1) {
                if get(t, 1) == 1 {
                    assert!(k < c.m, "{ctx}, play {phase}: valid after the last sample at cycle {t}");
                    if x.x_ready {
                        k += 1;
                    } else {
                        assert_eq!(get(t + 1, 1), 1, "{ctx}, play {phase}: x_valid dropped before the take at cycle {}", t + 1);
                    }
                }
            }
            // Targets: before the n-th t_next pulse, t_data is target n.
            let pulses: Vec<usize> = (start + 1..end).filter(|&t| stim[i][t].t_next).collect();
            for (n, &t) in pulses.iter().enumerate() {
                assert_eq!(get(t, 3), samples[i][n].1, "{ctx}, play {phase}: t_data before t_next pulse {n} (cycle {t})");
            }
        }
        if let Some((start, queue)) = &subs[i] {
            let takes: Vec<usize> = (start + 1..cycles).filter(|&t| get(t, 1) == 1 && stim[i][t].x_ready).collect();
            assert_eq!(takes.len(), queue.len(), "{ctx}, subset play: takes at {takes:?}");
            for (k, &t) in takes.iter().enumerate() {
                assert_eq!(get(t, 2), samples[i][queue[k]].0, "{ctx}, subset play: x_data of entry {k} (sample {}) at cycle {t}", queue[k]);
                assert_eq!(t - start, d + k * c.interval, "{ctx}: subset entry {k} taken {} edges after play", t - start);
            }
            let pulses: Vec<usize> = (start + 1..cycles).filter(|&t| stim[i][t].t_next).collect();
            for (n, &t) in pulses.iter().enumerate() {
                assert_eq!(get(t, 3), samples[i][queue[n]].1, "{ctx}, subset play: t_data before t_next pulse {n} (cycle {t})");
            }
        }
    }
    let _ = fs::remove_dir_all(&dir);
}
