//! `rtl/fptgen_skid.v`, the registered valid/ready stage between layers,
//! in Verilator against a model written here from its definition, not
//! from the RTL: a buffer of at most two beats whose flags are registers,
//! so on every cycle `in_ready = n < 2` and `out_valid = n > 0` for the
//! beats `n` it holds (neither depends on the same cycle's `out_ready` or
//! `in_valid`), and every beat leaves unchanged, in order, once.
//!
//! Widths 1 to 72 bits in one build (`port_stream`), 300 random beats
//! each: (a) at full rate beat `k` is accepted on cycle `k` and given on
//! cycle `k + 1`; (b) under random input gaps and output back-pressure
//! (six seeded runs) every beat is compared and the model is replayed on
//! every cycle of the trace. Fails (never skips) without Verilator.

use std::fs;

use crate::port_stream;
use crate::common::{require_tool, scratch, Rng};
use crate::port_stream::{Bench, Log, Sink, Source};

const BEATS: usize = 300;
const WIDTHS: [usize; 5] = [1, 8, 13, 33, 72];

fn bench() -> Bench {
    require_tool("verilator", "--version");
    let mut rng = Rng(0x736b_6964_0000_0001);
    let mut sources = Vec::new();
    let mut sinks = Vec::new();
    let mut body = String::new();
    for (i, &w) in WIDTHS.iter().enumerate() {
        sources.push(Source { bits: w, beats: (0..BEATS).map(|_| (0..w).map(|_| rng.coin()).collect()).collect() });
        sinks.push(Sink { bits: w, expect: BEATS });
        body += &format!(
            "fptgen_skid #(.W({w})) u{i} (\n    .clk(clk), .rst(rst),\n    .in_data(in{i}_data), .in_valid(in{i}_valid), .in_ready(in{i}_ready),\n    \
             .out_data(out{i}_data), .out_valid(out{i}_valid), .out_ready(out{i}_ready)\n);\n"
        );
    }
    port_stream::build(&scratch("rtl_skid"), "skid_top", &body, &["fptgen_skid.v"], sources, sinks)
}

/// Every beat of every instance given once, in order, bit for bit.
fn check_outputs(b: &Bench, log: &Log, run: &str) {
    for (i, &w) in WIDTHS.iter().enumerate() {
        let stuck = log.stuck.map(|t| format!(" (the bench stopped, cycle {t})")).unwrap_or_default();
        assert_eq!(log.accepted[i].len(), BEATS, "{run}, W {w}: beats accepted{stuck}");
        assert_eq!(log.outputs[i].len(), BEATS, "{run}, W {w}: beats given{stuck}");
        for (k, (t, bits)) in log.outputs[i].iter().enumerate() {
            if let Some(e) = (0..w).find(|&e| bits[e] != b.sources[i].beats[k][e]) {
                panic!("{run}, W {w}: beat {k} on cycle {t}, out_data bit {e} differs");
            }
        }
    }
}

/// The two-beat model replayed on a traced run.
fn check_handshake(log: &Log, i: usize, ctx: &str) {
    assert!(!log.cycles.is_empty(), "{ctx}: no trace");
    let mut n = 0usize;
    for (t, c) in log.cycles.iter().enumerate() {
        let (in_valid, in_ready) = c.src[i];
        let (out_valid, out_ready) = c.snk[i];
        assert_eq!(in_ready, n < 2, "{ctx}: in_ready on cycle {t} holding {n} beats");
        assert_eq!(out_valid, n > 0, "{ctx}: out_valid on cycle {t} holding {n} beats");
        n = n + usize::from(in_valid && in_ready) - usize::from(out_valid && out_ready);
    }
}

#[test]
fn skid_buffer_keeps_every_beat_with_registered_flags() {
    let b = bench();
    let log = b.full_rate();
    check_outputs(&b, &log, "full rate");
    for (i, &w) in WIDTHS.iter().enumerate() {
        for (k, &t) in log.accepted[i].iter().enumerate() {
            assert_eq!(t, k as u64, "full rate, W {w}: beat {k} accepted on cycle {t}");
        }
        for (k, (t, _)) in log.outputs[i].iter().enumerate() {
            assert_eq!(*t, k as u64 + 1, "full rate, W {w}: beat {k} given on cycle {t}");
        }
    }
    for (gap, stall, seed) in [(30, 30, 1), (0, 80, 2), (70, 10, 3), (50, 50, 4), (0, 95, 5), (90, 0, 6)] {
        let log = b.run(&[gap], &[stall], seed, true);
        let run = format!("{gap}% input gaps, {stall}% output stalls, seed {seed}");
        check_outputs(&b, &log, &run);
        for (i, &w) in WIDTHS.iter().enumerate() {
            check_handshake(&log, i, &format!("{run}, W {w}"));
        }
    }
    fs::remove_dir_all(&b.dir).ok();
}
