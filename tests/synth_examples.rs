//! The generated Verilog of the small examples is synthesizable by yosys
//! (`synth_xilinx -family xcu`, the UltraScale family of seed 003's part).
//! Needs yosys: the test fails (it does not skip) without it.

use std::process::Command;

mod common;
use common::{fptgen, require, root};

fn synth(example: &str) -> String {
    require("yosys");
    let dir = tempfile::tempdir().expect("tempdir");
    let model = root().join(format!("examples/{example}/model.yaml"));
    let (code, _, err) = fptgen(&["generate", model.to_str().expect("utf8"), "-o", "out"], dir.path());
    assert_eq!(code, 0, "{err}");
    let out = dir.path().join("out");
    let mut files: Vec<String> = std::fs::read_dir(out.join("rtl"))
        .expect("rtl")
        .map(|e| format!("rtl/{}", e.expect("entry").file_name().to_string_lossy()))
        .collect();
    files.sort();
    let script = format!("read_verilog -defer {}; synth_xilinx -family xcu -top {example}; stat", files.join(" "));
    let o = Command::new("yosys").args(["-q", "-p", &script, "-p", "tee -o stat.txt stat"]).current_dir(&out).output().expect("yosys");
    let log = String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "yosys failed on {example}:\n{log}");
    std::fs::read_to_string(out.join("stat.txt")).expect("stat")
}

fn count(stat: &str, cell: &str) -> u64 {
    stat.lines()
        .rev()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            match (w.next(), w.next()) {
                (Some(c), Some(n)) if c == cell => n.parse::<u64>().ok(),
                _ => None,
            }
        })
        .unwrap_or(0)
}

#[test]
fn tiny_synthesizes_to_xilinx_cells() {
    let stat = synth("tiny");
    // Two 8x8 multipliers and the casts map to LUTs and carry chains or DSPs;
    // the fully parallel layer holds its 2x2 weights in registers or LUTs.
    let luts: u64 = (1..=6).map(|k| count(&stat, &format!("LUT{k}"))).sum();
    assert!(luts > 0, "no LUTs in:\n{stat}");
    assert!(count(&stat, "FDRE") + count(&stat, "FDSE") > 0, "no flip-flops in:\n{stat}");
}

#[test]
fn jet_tagging_synthesizes_to_xilinx_cells() {
    let stat = synth("jet_tagging");
    let luts: u64 = (1..=6).map(|k| count(&stat, &format!("LUT{k}"))).sum();
    assert!(luts > 0, "no LUTs in:\n{stat}");
}
