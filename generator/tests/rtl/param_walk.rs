//! `rtl/fptgen_param_walk.v` (the walk over one tensor's parameters in
//! training order) in Verilator against a model written here from its
//! header comment and docs/training.md ("Order of the trainable
//! parameters", "Hardware"): the flat index i of parameter (r, c) of a
//! ROWS x COLS matrix in C order; its word (r / PE) * SF + c / SIMD and
//! column (r % PE) * SIMD + c % SIMD, SF = ceil(COLS / SIMD), on ports
//! clog2(words) and clog2(PE * SIMD) bits wide (the top's ports are
//! written from those widths, so a wrong width fails the build); last at
//! i = ROWS * COLS - 1; step (i + 1, from the last back to 0), save,
//! rewind (back to the saved index), clear and rst (both to 0), in the
//! priority rst and clear, rewind, step, save when several come at once.
//! Matrices from 1 x 1 to a 64 x 784 layer folded 4 x 16, PE and SIMD that
//! divide and that do not, one word and one column; random strobes in
//! segments of different step rates, several strobes at once now and then,
//! resets in the middle. Every output compared every cycle. Fails (does
//! not skip) without Verilator.

use std::fmt::Write as _;

use crate::common::{bits_for, require_tool, scratch, Bench, Rng};

/// ROWS, COLS, PE, SIMD.
const WALKS: [(usize, usize, usize, usize); 12] = [
    (1, 1, 1, 1),
    (4, 4, 1, 1),
    (5, 7, 2, 3),
    (3, 4, 3, 4),
    (7, 1, 3, 1),
    (1, 9, 1, 4),
    (6, 6, 6, 6),
    (2, 2, 2, 2),
    (8, 16, 2, 4),
    (9, 17, 4, 5),
    (13, 50, 4, 7),
    (64, 784, 4, 16),
];

/// One walk's strobes in one cycle.
#[derive(Debug, Clone, Copy, Default)]
struct In {
    clear: bool,
    rewind: bool,
    step: bool,
    save: bool,
}

/// The model: the current and the saved flat index.
#[derive(Debug, Default)]
struct Walk {
    i: usize,
    saved: usize,
}

/// Word and column of flat index `i` of walk `(rows, cols, pe, simd)`.
fn location((_, cols, pe, simd): (usize, usize, usize, usize), i: usize) -> (u128, u128) {
    let (r, c) = (i / cols, i % cols);
    (((r / pe) * cols.div_ceil(simd) + c / simd) as u128, ((r % pe) * simd + c % simd) as u128)
}

fn widths((rows, cols, pe, simd): (usize, usize, usize, usize)) -> (u32, u32) {
    (bits_for(rows.div_ceil(pe) * cols.div_ceil(simd)), bits_for(pe * simd))
}

/// `cycles` cycles from `seed`; `long`: enough for the largest walk to wrap.
fn walk_matches_the_model(name: &str, cycles: usize, seed: u64, long: bool) {
    require_tool("verilator", "--version");
    let dir = scratch(name);
    let fields = ["clear", "rewind", "step", "save", "addr", "col", "last"];
    let names: Vec<Vec<String>> = (0..WALKS.len()).map(|i| fields.iter().map(|n| format!("{n}{i}")).collect()).collect();
    let mut ins: Vec<(&str, u32)> = vec![("rst", 1)];
    ins.extend(names.iter().flat_map(|n| n[..4].iter().map(|s| (s.as_str(), 1))));
    let outs: Vec<(&str, u32)> = names
        .iter()
        .zip(WALKS)
        .flat_map(|(n, w)| [(n[4].as_str(), widths(w).0), (n[5].as_str(), widths(w).1), (n[6].as_str(), 1)])
        .collect();
    let mut body = String::new();
    for (i, (rows, cols, pe, simd)) in WALKS.iter().enumerate() {
        writeln!(
            body,
            "fptgen_param_walk #(.ROWS({rows}), .COLS({cols}), .PE({pe}), .SIMD({simd})) u{i} (.clk(clk), .rst(rst), .clear(clear{i}), .rewind(rewind{i}), \
             .step(step{i}), .save(save{i}), .addr(addr{i}), .col(col{i}), .last(last{i}));"
        )
        .unwrap();
    }

    // Segments of 50 to 400 cycles, each with its own strobes per walk:
    // a sweep (steps alone), or steps at 30, 90 or 100 per cent with
    // random rates (per cent) of save, rewind, clear and of several
    // strobes at once (the long run starts with 60000 cycles of sweeps).
    // rst in the first cycle and twice in the middle.
    let resets = [0, cycles / 3, 2 * cycles / 3 + 1];
    let mut rng = Rng(seed);
    let mut stim: Vec<(bool, Vec<In>)> = Vec::new();
    while stim.len() < cycles {
        let len = rng.range(50, 400) as usize;
        let rates: Vec<[u64; 5]> = WALKS
            .iter()
            .map(|_| {
                if rng.chance(40) || (long && stim.len() < 60_000) {
                    [95, 0, 0, 0, 0]
                } else {
                    [[30, 90, 100][(rng.next() % 3) as usize], rng.range(0, 10) as u64, rng.range(0, 6) as u64, rng.range(0, 2) as u64, rng.range(0, 8) as u64]
                }
            })
            .collect();
        for _ in 0..len {
            let x = rates
                .iter()
                .map(|r| {
                    if rng.chance(r[4]) {
                        return In { clear: rng.chance(20), rewind: rng.coin(), step: rng.coin(), save: rng.coin() };
                    }
                    let k = rng.next() % 100;
                    let (save, rewind, clear) = (r[1], r[1] + r[2], r[1] + r[2] + r[3]);
                    In { save: k < save, rewind: (save..rewind).contains(&k), clear: (rewind..clear).contains(&k), step: k >= clear && rng.chance(r[0]) }
                })
                .collect();
            stim.push((resets.contains(&stim.len()), x));
        }
    }
    stim.truncate(cycles);
    let rows_in: Vec<Vec<u128>> = stim
        .iter()
        .map(|(rst, x)| {
            let mut v = vec![u128::from(*rst)];
            v.extend(x.iter().flat_map(|s| [s.clear, s.rewind, s.step, s.save].map(u128::from)));
            v
        })
        .collect();
    let bench = Bench { name: "walk_top", inputs: &ins, outputs: &outs, clocked: true };
    let rows = bench.run(&dir, &body, &["fptgen_param_walk.v"], &rows_in);

    let mut model: Vec<Walk> = WALKS.iter().map(|_| Walk::default()).collect();
    let mut wraps = vec![0usize; WALKS.len()];
    let mut rewinds = vec![0usize; WALKS.len()];
    for (t, (row, (rst, x))) in rows.iter().zip(&stim).enumerate() {
        for (k, &w) in WALKS.iter().enumerate() {
            let m = &mut model[k];
            let count = w.0 * w.1;
            // Before the first edge (with rst) the position is unknown.
            if t > 0 {
                let (addr, col) = location(w, m.i);
                let last = u128::from(m.i + 1 == count);
                let ctx = format!("cycle {t}: ROWS x COLS {} x {} PE {} SIMD {}, parameter {} (saved {})", w.0, w.1, w.2, w.3, m.i, m.saved);
                for (j, (name, want)) in [("addr", addr), ("col", col), ("last", last)].into_iter().enumerate() {
                    let got = row[3 * k + j];
                    assert_eq!(got, want, "{ctx}: {name} {got}, expected {want}");
                }
            }
            let s = x[k];
            if *rst || s.clear {
                *m = Walk::default();
            } else if s.rewind {
                rewinds[k] += usize::from(m.i != m.saved);
                m.i = m.saved;
            } else if s.step {
                wraps[k] += usize::from(m.i + 1 == count);
                m.i = (m.i + 1) % count;
            } else if s.save {
                m.saved = m.i;
            }
        }
    }
    // The walks wrapped (several times up to 200 parameters, all but the
    // largest at least once, the largest too in the long run) and rewound to other positions.
    assert!(WALKS.iter().zip(&wraps).all(|(w, &n)| n >= [3, 1, usize::from(long)][usize::from(w.0 * w.1 > 200) + usize::from(w.0 * w.1 > 2000)]), "wraps per walk: {wraps:?}");
    assert!(WALKS.iter().zip(&rewinds).all(|(w, &n)| w.0 * w.1 == 1 || n >= 10), "rewinds to another position per walk: {rewinds:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn param_walk_matches_the_model() {
    walk_matches_the_model("rtl_param_walk", 6000, 0x9a_3a1c, false);
}

/// The same, long enough to take the 64 x 784 walk around its 50176
/// parameters.
#[test]
#[ignore = "full tier: 400k cycles"]
fn param_walk_matches_the_model_long() {
    walk_matches_the_model("rtl_param_walk_long", 400_000, 0x9a_3a1c, true);
}
