//! `pe: auto` and `simd: auto` with the model's `target_ii` (issue 17;
//! docs/hardware.md, "Folding"): the folding `check` reports is the one
//! worked out here by hand, the co-simulated design's measured initiation
//! interval is within the target, and the model file's mistakes are errors
//! at their lines.

mod common;
use common::{check_fails, expect_at, fptgen, require};

/// A conv (6x6x2 -> 6x6x4, same) and a dense layer (144 -> 10), both
/// `auto`, target 100 cycles per image.
const MODEL: &str = "name: autofold
target_ii: 100
input:
  shape: [6, 6, 2]
  format: ap_ufixed<4,0>
weights: w.npz
layers:
  - name: c
    type: conv2d
    filters: 4
    padding: same
    activation: relu
    precision: {weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<16,6>', output: 'ap_ufixed<4,2>'}
    pe: auto
    simd: auto
  - name: f
    type: flatten
  - name: d
    type: dense
    inputs: 144
    outputs: 10
    activation: linear
    precision: {weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<16,6>', output: 'ap_fixed<8,4>'}
    pe: auto
    simd: auto
";

/// By hand. The conv: 36 pixels, 4 filters, 18 window values (divisors 1,
/// 2, 3, 6, 9, 18): 36 * 4 * ceil(18 / s) <= 100 never, so SIMD 18, then
/// 36 * ceil(4 / p) <= 100 first at p = 2 (72 cycles). The dense layer:
/// 10 * ceil(144 / s) <= 100 first at s = 16 (divisors 1, 2, 3, 4, 6, 8,
/// 9, 12, 16: 10 * 9 = 90), PE 1.
#[test]
fn auto_folding_meets_the_target_in_cosim() {
    require("verilator");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("model.yaml"), MODEL).expect("write");
    let (code, _, err) = fptgen(&["init-weights", "model.yaml"], dir.path());
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = fptgen(&["check", "model.yaml"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("target_ii 100 cycles"), "{out}");
    let folding = |layer: &str| out.lines().find(|l| l.trim_start().starts_with(&format!("{layer} "))).unwrap_or_else(|| panic!("{out}")).to_string();
    assert!(folding("c").contains(" 2/18 "), "{}", folding("c"));
    assert!(folding("d").contains(" 1/16 "), "{}", folding("d"));
    let (code, out, err) = fptgen(&["cosim", "model.yaml", "--vectors", "8", "-o", "gen"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
    let ii: u64 = out
        .split("measured II ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no measured II in {out}"));
    assert!(ii <= 100, "measured II {ii} above the target 100: {out}");
    assert!(out.contains("mismatches 0"), "{out}");
}

/// `auto` without `target_ii`, a target of 0, and a bad word: errors at
/// their lines.
#[test]
fn auto_folding_needs_a_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("model.yaml"), MODEL.replace("target_ii: 100\n", "")).expect("write");
    let err = check_fails(dir.path());
    // The conv's `pe: auto`, line 13 without the target_ii line.
    expect_at(&err, 13, None, &["pe or simd `auto` needs the model's `target_ii`"]);
    std::fs::write(dir.path().join("model.yaml"), MODEL.replace("target_ii: 100", "target_ii: 0")).expect("write");
    let err = check_fails(dir.path());
    expect_at(&err, 2, None, &["target_ii is 0"]);
    std::fs::write(dir.path().join("model.yaml"), MODEL.replacen("pe: auto", "pe: fast", 1)).expect("write");
    let err = check_fails(dir.path());
    expect_at(&err, 14, None, &["auto"]);
}
