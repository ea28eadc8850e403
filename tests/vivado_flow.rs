//! The generated Vivado flow (`vivado/build.tcl` and the XDC it reads),
//! checked without Vivado: `tclsh` runs the script with stub Vivado
//! commands that record each call and its arguments, and fail on any
//! command the flow does not use (so a typo is caught). The test then checks
//! the sequence, the part, top and mode, that every file the script reads
//! exists and that it reads every RTL file of the design, that the reports
//! go to vivado/reports/, and that the XDC (sourced by the stub
//! `read_xdc`) constrains the clock to the model's period with 20% input
//! and output delays. Needs tclsh: the test fails (it does not skip)
//! without it.

use std::path::Path;

mod common;
use common::{fptgen, require, root, run_with_stubs};

const STUBS: &str = r#"
set log [open $::env(STUB_LOG) w]
proc record {args} { puts $::log [join [concat {*}$args] " "]; flush $::log }
foreach cmd {read_verilog synth_design opt_design place_design route_design report_utilization report_timing_summary write_checkpoint create_clock set_input_delay set_output_delay} {
    proc $cmd {args} [format {record %s {*}$args} $cmd]
}
proc read_xdc {args} { record read_xdc {*}$args; uplevel #0 [list source [lindex $args end]] }
proc get_ports {args} { record get_ports {*}$args; return [list ports {*}$args] }
rename unknown tcl_unknown
proc unknown {args} { error "not a Vivado command of this flow: $args" }
source [lindex $argv 0]
close $log
"#;

fn flow(example: &str) {
    require("tclsh");
    let dir = tempfile::tempdir().expect("tempdir");
    let model = root().join(format!("examples/{example}/model.yaml"));
    let (code, _, err) = fptgen(&["generate", model.to_str().expect("utf8"), "-o", "out"], dir.path());
    assert_eq!(code, 0, "{err}");
    let out = dir.path().join("out");
    // Run from elsewhere: the script must find its own directory.
    let (log, calls) = run_with_stubs(dir.path(), STUBS, &out.join("vivado/build.tcl"));
    let names: Vec<&str> = calls.iter().map(|c| c[0].as_str()).filter(|c| *c != "get_ports").collect();
    assert_eq!(
        names,
        [
            "read_verilog", "read_xdc", "create_clock", "set_input_delay", "set_output_delay", "synth_design",
            "opt_design", "place_design", "route_design", "report_utilization", "report_utilization",
            "report_timing_summary", "write_checkpoint"
        ],
        "{log}"
    );
    let call = |name: &str| calls.iter().find(|c| c[0] == name).unwrap_or_else(|| panic!("{name} in {log}"));
    // Every RTL module of the design is read, and nothing that does not
    // exist; the include file is found through synth_design's include_dirs.
    let mut read: Vec<String> = call("read_verilog")[1..].to_vec();
    read.sort();
    let mut rtl: Vec<String> = std::fs::read_dir(out.join("rtl"))
        .expect("rtl")
        .map(|e| format!("rtl/{}", e.expect("entry").file_name().to_string_lossy()))
        .filter(|f| f.ends_with(".v"))
        .collect();
    rtl.sort();
    assert_eq!(read, rtl);
    let xdc = &call("read_xdc")[1];
    assert_eq!(xdc, &format!("constraints/{example}.xdc"));
    for f in read.iter().chain([xdc]) {
        assert!(out.join(f).is_file(), "{f} does not exist");
    }
    // Every $readmemh image a layer names exists too (relative to the
    // design's directory, where the script runs).
    let mut images = 0;
    for f in std::fs::read_dir(out.join("rtl")).expect("rtl") {
        let text = std::fs::read_to_string(f.expect("entry").path()).expect("rtl file");
        for part in text.split("_FILE(\"").skip(1) {
            let img = &part[..part.find('"').expect("quote")];
            assert!(out.join(img).is_file(), "memory image {img} missing");
            images += 1;
        }
    }
    assert!(images > 0);
    let synth = call("synth_design");
    assert_eq!(synth[1..7], ["-part", "xcku035-fbva676-3-e", "-top", example, "-mode", "out_of_context"]);
    assert_eq!(synth[7], "-include_dirs");
    let include = Path::new(&synth[8]);
    assert!(include.is_absolute() && include.join("fptgen_clog2.vh").is_file(), "include_dirs {include:?}");
    assert_eq!(synth.len(), 9, "{synth:?}");
    for c in calls.iter().filter(|c| c[0].starts_with("report_")) {
        let i = c.iter().position(|a| a == "-file").expect("-file");
        assert!(c[i + 1].starts_with("vivado/reports/"), "{c:?}");
    }
    assert!(out.join("vivado/reports").is_dir(), "the script creates vivado/reports");
    // The clock: the model's 5 ns; inputs and outputs get 20% of it.
    assert_eq!(call("create_clock")[1..5], ["-name", "clk", "-period", "5.000"]);
    assert_eq!(call("set_input_delay")[1..4], ["-clock", "clk", "1.000"]);
    assert_eq!(call("set_output_delay")[1..4], ["-clock", "clk", "1.000"]);
    assert!(log.contains("get_ports clk"), "{log}");
}

#[test]
fn tiny_vivado_flow_calls_the_right_commands_on_existing_files() {
    flow("tiny");
}

#[test]
fn mnist_vivado_flow_calls_the_right_commands_on_existing_files() {
    flow("mnist");
}

#[test]
fn report_md_names_the_vivado_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = root().join("examples/tiny/model.yaml");
    let (code, _, err) = fptgen(&["generate", model.to_str().expect("utf8"), "-o", "out"], dir.path());
    assert_eq!(code, 0, "{err}");
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).expect("report.md");
    assert!(md.contains("vivado -mode batch -source vivado/build.tcl"), "{md}");
    assert!(Path::new(&dir.path().join("out/vivado/build.tcl")).is_file());
}
