//! `rtl/fptgen_serialize.v`, one whole vector to a stream of beats (the
//! trainer's feed of a network whose input is an image), in Verilator
//! against a model written here from the definition (beat `k` of a vector
//! is its bits `[k*BEAT_W +: BEAT_W]`), not from the RTL:
//!
//! * `serialize_outputs_and_cycles`: several parameter sets (BEATS 1, 2, 3
//!   and larger, beats of 1 to 72 bits) in one build, five random vectors
//!   back to back. (a) Input always offered, output always ready: every
//!   beat compared with the model, and every acceptance and output cycle
//!   with the cycle model of the module's header (vector `n` accepted on
//!   cycle `t0 + n*BEATS`, its beat `k` output on `t0 + n*BEATS + 1 + k`).
//!   (b) Random input gaps and output back-pressure (four seeded runs):
//!   every beat compared, nothing lost or extra, and the header's handshake
//!   (`out_valid = busy`, `in_ready = !busy || (last && out_ready)`)
//!   replayed cycle by cycle on the logged signals.
//! * `serialize_illegal_parameters_stop_elaboration`: `verilator --lint-only
//!   -Wall` is silent on legal sets and fails on illegal ones, naming
//!   `fptgen_param_error_serialize_size_below_1`.
//!
//! Verilator is required: without it these tests fail (they never skip).

use std::fs;

use crate::pixel_stream;
use crate::common::{require_tool, scratch, Rng};
use crate::pixel_stream::{field, pack, Dut, Log};

const VECTORS: usize = 5;
const SEED: u64 = 0x7365_7269_0000_0001;

/// (BEATS, BEAT_W)
const CFGS: &[(usize, u32)] = &[(1, 8), (1, 13), (2, 1), (3, 8), (4, 16), (9, 3), (49, 8), (5, 72)];

fn vectors(rng: &mut Rng, beats: usize, w: u32) -> Vec<Vec<u64>> {
    let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    // Beats of at most 64 bits as values; wider ones as 2 values each.
    let per = w.div_ceil(64) as usize;
    (0..VECTORS).map(|_| (0..beats * per).map(|_| rng.next() & mask).collect()).collect()
}

/// The bits of beat `k` of vector `v` (the model).
fn beat_bits(v: &[u64], k: usize, w: u32) -> Vec<bool> {
    let per = w.div_ceil(64) as usize;
    let mut bits = Vec::new();
    for j in 0..per {
        let width = (w - 64 * j as u32).min(64);
        bits.extend(pack(&[v[k * per + j]], width));
    }
    bits
}

struct Bench {
    dir: std::path::PathBuf,
    duts: Vec<Dut>,
    vecs: Vec<Vec<Vec<u64>>>,
    full_rate: Vec<Log>,
}

fn bench() -> Bench {
    require_tool("verilator", "--version");
    let mut rng = Rng(SEED);
    let vecs: Vec<Vec<Vec<u64>>> = CFGS.iter().map(|&(b, w)| vectors(&mut rng, b, w)).collect();
    let duts = CFGS
        .iter()
        .zip(&vecs)
        .map(|(&(beats, w), vs)| Dut {
            params: format!(".BEATS({beats}), .BEAT_W({w})"),
            in_bits: beats * w as usize,
            out_bits: w as usize,
            beats: vs.iter().map(|v| (0..beats).flat_map(|k| beat_bits(v, k, w)).collect()).collect(),
            outputs: VECTORS * beats,
            ..Default::default()
        })
        .collect::<Vec<_>>();
    let dir = scratch("rtl_serialize");
    let full_rate = pixel_stream::build_and_run(&dir, "serialize_top", "fptgen_serialize", &duts);
    Bench { dir, duts, vecs, full_rate }
}

fn check_outputs(b: &Bench, logs: &[Log], run: &str) {
    for (i, &(beats, w)) in CFGS.iter().enumerate() {
        let log = &logs[i];
        let ctx = format!("{run}, BEATS {beats} BEAT_W {w}");
        assert_eq!(log.accepted.len(), VECTORS, "{ctx}: vectors accepted (stuck: {:?})", log.stuck);
        assert_eq!(log.outputs.len(), VECTORS * beats, "{ctx}: beats output (stuck: {:?})", log.stuck);
        for (n, (t, bits)) in log.outputs.iter().enumerate() {
            let want = beat_bits(&b.vecs[i][n / beats], n % beats, w);
            for e in 0..w as usize {
                assert_eq!(field(bits, e, 1), field(&want, e, 1), "{ctx}: vector {}, beat {}, output on cycle {t}, bit {e}", n / beats, n % beats);
            }
        }
    }
}

fn check_handshake(beats: usize, log: &Log, ctx: &str) {
    assert!(!log.cycles.is_empty(), "{ctx}: no trace");
    let (mut k, mut busy) = (0, false);
    for (t, c) in log.cycles.iter().enumerate() {
        let last = k == beats - 1;
        let ir = !busy || (last && c.out_ready);
        assert_eq!(c.out_valid, busy, "{ctx}: out_valid on cycle {t}, model {busy}");
        assert_eq!(c.in_ready, ir, "{ctx}: in_ready on cycle {t} (beat {k}, busy {busy}, out_ready {}), model {ir}", c.out_ready);
        if c.in_valid && ir {
            busy = true;
            k = 0;
        } else if busy && c.out_ready {
            busy = !last;
            k = if last { 0 } else { k + 1 };
        }
    }
}

#[test]
fn serialize_outputs_and_cycles() {
    let b = bench();
    check_outputs(&b, &b.full_rate, "full rate");
    for (i, &(beats, w)) in CFGS.iter().enumerate() {
        let log = &b.full_rate[i];
        let t0 = log.accepted[0];
        for (n, &t) in log.accepted.iter().enumerate() {
            assert_eq!(t, t0 + (n * beats) as u64, "BEATS {beats} BEAT_W {w}: vector {n} accepted on cycle {t}");
        }
        for (j, (t, _)) in log.outputs.iter().enumerate() {
            let want = t0 + (j / beats * beats) as u64 + 1 + (j % beats) as u64;
            assert_eq!(*t, want, "BEATS {beats} BEAT_W {w}: beat {} of vector {} output on cycle {t}, model {want}", j % beats, j / beats);
        }
    }
    for (gap, stall, seed) in [(30, 30, 1), (10, 70, 2), (60, 10, 3), (0, 90, 4)] {
        let logs = pixel_stream::rerun_traced(&b.dir, &b.duts, gap, stall, seed);
        let run = format!("{gap}% input gaps, {stall}% output stalls, seed {seed}");
        check_outputs(&b, &logs, &run);
        for (i, &(beats, w)) in CFGS.iter().enumerate() {
            check_handshake(beats, &logs[i], &format!("{run}, BEATS {beats} BEAT_W {w}"));
        }
    }
    fs::remove_dir_all(&b.dir).ok();
}

#[test]
fn serialize_illegal_parameters_stop_elaboration() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_serialize_illegal");
    let legal: &[&[(&str, i64)]] = &[&[], &[("BEATS", 1)], &[("BEATS", 2), ("BEAT_W", 1)], &[("BEATS", 784), ("BEAT_W", 8)]];
    let illegal: &[(&[(&str, i64)], &str)] = &[
        (&[("BEATS", 0)], "fptgen_param_error_serialize_size_below_1"),
        (&[("BEAT_W", 0)], "fptgen_param_error_serialize_size_below_1"),
    ];
    pixel_stream::check_parameters("fptgen_serialize", &dir, legal, illegal);
    fs::remove_dir_all(&dir).ok();
}
