//! The AXI wrapper (`fptgen generate --axi`, `fptgen cosim --axi`; issue
//! 19 items 1 to 3):
//!
//! * tiny through the wrapper, inference and ES training with
//!   interruptions (`cosim --axi --train`): every output bit and TLAST
//!   against the simulator, the registers against the model, weights
//!   written, read back and trained through the register map with the C
//!   driver, every answer (also those served during training), the weights
//!   read at every pause and the final weights against the simulator; the
//!   same under dfa (a feedback-rule trainer's pauses);
//! * the inference-only tiny with its vectors split into two transfers
//!   and TLAST every third vector; then two faults put into the design's
//!   copy of the wrapper's scatter module (`rtl/fptgen_axis_scatter.v`) by
//!   hand (TLAST on every vector; a transfer's bits shifted by one), each
//!   of which the harness must name;
//! * the wrapper lint-clean (verilator -Wall) and synthesizable (yosys)
//!   for an ES trainer, a feedback-rule trainer and an inference-only
//!   design; the C driver compiled with `cc -Wall -Werror` (and linked into
//!   a program that uses each function);
//! * `vivado/package_ip.tcl` in tclsh with stub Vivado commands that fail
//!   on any command the flow does not use.
//!
//! Needs verilator, yosys, cc and tclsh: a test fails (it does not skip)
//! without them.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{fptgen, require, root, run_with_stubs, untrained_copy};

/// The number after `key ` in `line`.
fn after(line: &str, key: &str) -> i64 {
    let i = line.find(key).unwrap_or_else(|| panic!("{key} in {line}")) + key.len();
    line[i..].trim_start().split(|c: char| !c.is_ascii_digit()).next().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{key} in {line}"))
}

#[test]
fn tiny_through_the_axi_wrapper_inference_and_training_with_interruptions() {
    require("verilator");
    let dir = tempfile::tempdir().expect("tempdir");
    let model = root().join("examples/tiny/model.yaml");
    let (code, out, err) = fptgen(
        &["cosim", model.to_str().expect("utf8"), "--axi", "--train", "--iterations", "2", "--interrupt-rate", "0.02", "-o", "out"],
        dir.path(),
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let inf = out.lines().find(|l| l.starts_with("AXI: vectors")).unwrap_or_else(|| panic!("{out}"));
    assert_eq!(after(inf, "vectors"), 100, "{inf}");
    assert_eq!(after(inf, "mismatches"), 0, "{inf}");
    let tr = out.lines().find(|l| l.starts_with("training: AXI")).unwrap_or_else(|| panic!("{out}"));
    // tiny: 6 parameters in one memory word of 4 and one of 2.
    assert_eq!(after(tr, "written and read back"), 6, "{tr}");
    assert_eq!(after(tr, "final parameters"), 6, "{tr}");
    // The interrupted run was interrupted: answers while training (each
    // compared exactly with the parameters committed where it was served)
    // and pauses, at each of which every tensor was read through the
    // weight windows and compared with the committed parameters there.
    assert!(after(tr, "exact,") > 0 && after(tr, "pauses") > 0, "{tr}");
    assert_eq!(after(tr, "parameters read while paused"), 6 * after(tr, "pauses"), "{tr}");
    // The parameter images the harness wrote are the new random ones, not
    // the model's: the simulator trained from what went over AXI4-Lite.
    let load = std::fs::read_to_string(dir.path().join("out/sim/run/fc1_w.hex.load")).expect("load image");
    let initial = std::fs::read_to_string(dir.path().join("out/mem/fc1_w.hex")).expect("image");
    assert_ne!(load, initial);
}

#[test]
fn tiny_dfa_through_the_axi_wrapper_reads_weights_at_pauses() {
    require("verilator");
    let dir = tempfile::tempdir().expect("tempdir");
    let model = root().join("examples/tiny/model.yaml");
    let (code, out, err) = fptgen(
        &[
            "cosim",
            model.to_str().expect("utf8"),
            "--axi",
            "--train",
            "--rule",
            "dfa",
            "--iterations",
            "2",
            "--interrupt-rate",
            "0.02",
            "--vectors",
            "10",
            "-o",
            "out",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let tr = out.lines().find(|l| l.starts_with("training: AXI")).unwrap_or_else(|| panic!("{out}"));
    // The feedback rule's pauses (between samples) are safe points too:
    // the tensors read there are the parameters after the earlier samples'
    // updates, and a write there is refused (the harness checks it).
    assert!(after(tr, "pauses") > 0, "{tr}");
    assert_eq!(after(tr, "parameters read while paused"), 6 * after(tr, "pauses"), "{tr}");
    assert_eq!(after(tr, "final parameters"), 6, "{tr}");
}

/// Rebuilds the AXI inference harness in `out` and runs it on the run's
/// vectors; returns its exit code and output.
fn rerun(out: &Path) -> (i32, String) {
    let b = Command::new("sh").args(["sim/build.sh", "--axi"]).current_dir(out).output().expect("build");
    assert!(b.status.success(), "{}{}", String::from_utf8_lossy(&b.stdout), String::from_utf8_lossy(&b.stderr));
    let o = Command::new(out.join("sim/obj_axi/Vtiny_axi"))
        .args(["sim/run/inputs.hex", "sim/run/expected.hex", "1"])
        .current_dir(out)
        .output()
        .expect("harness");
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned())
}

fn mutate(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).expect("the RTL file");
    assert_eq!(text.matches(from).count(), 1, "{from} once in {}", file.display());
    std::fs::write(file, text.replace(from, to)).expect("write");
}

#[test]
fn split_transfers_and_batched_tlast_and_faults_are_named() {
    require("verilator");
    let dir = tempfile::tempdir().expect("tempdir");
    let model = untrained_copy(dir.path(), "tiny");
    let (code, out, err) = fptgen(
        &["cosim", model.to_str().expect("utf8"), "--axi", "--axi-width", "8", "--axi-batch", "3", "--vectors", "40", "-o", "out"],
        dir.path(),
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let line = out.lines().find(|l| l.starts_with("AXI: vectors")).unwrap_or_else(|| panic!("{out}"));
    assert_eq!(after(line, "mismatches"), 0, "{line}");
    // Two 8-bit transfers per 16-bit vector each way: the pipeline (II 1)
    // goes at the streams' rate, one transfer per cycle back to back (the
    // scatter register reloads as its last transfer leaves: issue 39), and
    // the wrapper's cycle model predicts it (AxiPlan::ii and latency; the
    // cosim command fails when they differ).
    assert_eq!(after(line, "measured II"), 2, "{line}");
    assert_eq!(after(line, "predicted II"), 2, "{line}");
    assert_eq!(after(line, "latency"), after(line, "predicted II 2 latency"), "{line}");
    let o = dir.path().join("out");
    let regs = std::fs::read_to_string(o.join("driver/tiny_regs.h")).expect("header");
    assert!(regs.contains("#define TINY_S_AXIS_TRANSFERS 2u") && regs.contains("#define TINY_S_AXIS_BYTES 1u"), "{regs}");

    // Fault 1: TLAST on every vector instead of every third (in the
    // wrapper's m_axis scatter, the library module the design's copy of
    // rtl/ holds).
    let scatter = o.join("rtl/fptgen_axis_scatter.v");
    let good = std::fs::read_to_string(&scatter).expect("scatter");
    mutate(&scatter, "assign out_last = out_vector_end && out_vector_reg == BATCH - 1;", "assign out_last = out_vector_end;");
    let (code, text) = rerun(&o);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("MISMATCH phase=A vector=0 beat=1 signal=m_axis_tlast got=1 expected=0"), "{text}");

    // Fault 2: the output transfers shifted by 7 bits instead of 8.
    std::fs::write(&scatter, &good).expect("restore");
    mutate(&scatter, "scatter_reg <= scatter_reg >> OUT_W;", "scatter_reg <= scatter_reg >> (OUT_W - 1);");
    let (code, text) = rerun(&o);
    assert_eq!(code, 1, "{text}");
    let m = text.lines().find(|l| l.starts_with("MISMATCH")).unwrap_or_else(|| panic!("{text}"));
    assert!(m.contains("beat=1 output=1 signal=m_axis_tdata[7:0]"), "{m}");
}

/// Generates `model` with `--axi` (and `extra`) into `dir/name`.
fn generate(model: &Path, dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["generate", model.to_str().expect("utf8"), "-o", name, "--axi"];
    args.extend_from_slice(extra);
    let (code, out, err) = fptgen(&args, dir);
    assert_eq!(code, 0, "{out}\n{err}");
    dir.join(name)
}

/// The three kinds of wrapper: ES trainer, feedback-rule trainer, inference only.
fn designs(dir: &Path) -> Vec<PathBuf> {
    let tiny = root().join("examples/tiny/model.yaml");
    vec![
        generate(&tiny, dir, "es", &[]),
        generate(&tiny, dir, "dfa", &["--rule", "dfa"]),
        generate(&untrained_copy(dir, "tiny"), dir, "inference", &["--axi-batch", "4"]),
    ]
}

#[test]
fn wrapper_is_lint_clean_and_synthesizable_and_the_driver_compiles() {
    require("verilator");
    require("yosys");
    require("cc");
    let dir = tempfile::tempdir().expect("tempdir");
    for out in designs(dir.path()) {
        let rtl: Vec<String> = std::fs::read_dir(out.join("rtl"))
            .expect("rtl")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "v"))
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let o = Command::new("verilator")
            .args(["--lint-only", "-Wall", "-Irtl", "--top-module", "tiny_axi"])
            .args(&rtl)
            .current_dir(&out)
            .output()
            .expect("verilator");
        assert!(o.status.success(), "{}: {}", out.display(), String::from_utf8_lossy(&o.stderr));
        // Coarse synthesis (to the fine-grained cells) and a check that fails
        // on any driver conflict, loop or undriven wire: 4 s, not 20.
        let script = format!("read_verilog -defer -Irtl {}; hierarchy -check -top tiny_axi; synth -top tiny_axi -run :fine; check -assert", rtl.join(" "));
        let o = Command::new("yosys").args(["-q", "-p", &script]).current_dir(&out).output().expect("yosys");
        assert!(o.status.success(), "{}: {}{}", out.display(), String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));

        // The driver, and a program that calls each of its functions.
        let trainer = out.file_name().is_some_and(|n| n != "inference");
        let mut main = String::from("#include \"tiny_driver.h\"\nstatic uint32_t regs[4096];\nint main(void) {\n    tiny_dev d;\n    int r = tiny_init(&d, regs);\n");
        if trainer {
            main += "    int32_t x[2] = {1, -1}, t[2] = {3, 4}, w[8];\n    uint8_t buf[64];\n    size_t n = tiny_pack_samples(x, t, 1, buf);\n    tiny_start(&d, 1);\n    tiny_pause(&d);\n    tiny_resume(&d);\n    r += tiny_train(&d, 1, 1);\n    tiny_write_param(&d, 0, 0, 0, 5);\n    r += tiny_read_param(&d, 0, 0, 0);\n    tiny_read_tensor(&d, 0, w);\n    tiny_write_tensor(&d, 0, w);\n    r += tiny_read_tensor_paused(&d, 0, w, 1);\n    r += (int)tiny_status(&d) + (int)tiny_tensor_size(1) + (int)n;\n";
        }
        main += "    return r;\n}\n";
        std::fs::write(out.join("driver/main.c"), main).expect("main.c");
        let o = Command::new("cc")
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o", "driver/demo", "driver/tiny_driver.c", "driver/main.c"])
            .current_dir(&out)
            .output()
            .expect("cc");
        assert!(o.status.success(), "{}: {}", out.display(), String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn driver_packs_samples_as_the_register_map_says() {
    require("cc");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = generate(&root().join("examples/tiny/model.yaml"), dir.path(), "es", &[]);
    // tiny: 2 inputs of 8 bits (one 16-bit word per sample), 2 outputs of 8
    // bits: TDATA = word in bytes 0-1, target in bytes 2-3.
    let md = std::fs::read_to_string(out.join("driver/registers.md")).expect("registers.md");
    assert!(md.contains("TDATA[15:0] of word k") && md.contains("TDATA[31:16]"), "{md}");
    let main = "#include <stdio.h>\n#include \"tiny_driver.h\"\nint main(void) {\n    int32_t x[4] = {1, -1, -128, 127}, t[4] = {3, -4, 0, 1};\n    uint8_t b[8];\n    size_t i, n = tiny_pack_samples(x, t, 2, b);\n    for (i = 0; i < n; ++i) printf(\"%02x\", b[i]);\n    printf(\"\\n\");\n    return 0;\n}\n";
    std::fs::write(out.join("driver/pack.c"), main).expect("pack.c");
    let o = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-o", "driver/pack", "driver/tiny_driver.c", "driver/pack.c"])
        .current_dir(&out)
        .output()
        .expect("cc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(out.join("driver/pack")).output().expect("pack");
    // Sample 0: x = 0x01, 0xff; t = 0x03, 0xfc. Sample 1: 0x80, 0x7f; 0x00, 0x01.
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "01ff03fc807f0001");
}

const STUBS: &str = r#"
namespace eval ipx {}
set log [open $::env(STUB_LOG) w]
proc record {args} { puts $::log [join [concat {*}$args] " "]; flush $::log }
foreach cmd {create_project add_files set_property update_compile_order close_project
             ipx::package_project ipx::infer_bus_interfaces ipx::associate_bus_interfaces
             ipx::create_xgui_files ipx::update_checksums ipx::check_integrity ipx::save_core} {
    proc $cmd {args} [format {record %s {*}$args} $cmd]
}
proc current_fileset {args} { record current_fileset {*}$args; return sources_1 }
proc get_files {args} { record get_files {*}$args; return [list files {*}$args] }
proc ipx::current_core {args} { record ipx::current_core {*}$args; return core }
proc ipx::get_bus_interfaces {args} { record ipx::get_bus_interfaces {*}$args; return [list busif {*}$args] }
proc ipx::get_bus_parameters {args} { record ipx::get_bus_parameters {*}$args; return [list busparam {*}$args] }
rename unknown tcl_unknown
proc unknown {args} { error "not a Vivado command of this flow: $args" }
source [lindex $argv 0]
close $log
"#;

#[test]
fn package_ip_tcl_packages_the_wrapper_with_its_interfaces() {
    require("tclsh");
    let dir = tempfile::tempdir().expect("tempdir");
    for out in designs(dir.path()) {
        let (log, calls) = run_with_stubs(dir.path(), STUBS, &out.join("vivado/package_ip.tcl"));
        let names: Vec<&str> = calls.iter().map(|c| c[0].as_str()).collect();
        let pos = |n: &str| names.iter().position(|c| *c == n).unwrap_or_else(|| panic!("{n} in {log}"));
        // The order that matters: a project with the sources, packaged,
        // interfaces, then the core saved and the project closed.
        assert!(pos("create_project") < pos("add_files") && pos("add_files") < pos("ipx::package_project"), "{log}");
        assert!(pos("ipx::package_project") < pos("ipx::associate_bus_interfaces") && pos("ipx::save_core") < pos("close_project"), "{log}");
        let create = &calls[pos("create_project")];
        assert_eq!(create[1..3], ["-part", "xcku035-fbva676-3-e"], "{create:?}");
        // Every RTL file of the design and every memory image is added, and
        // each exists (the script runs from the design's directory).
        let added: Vec<&String> = calls.iter().filter(|c| c[0] == "add_files").flat_map(|c| c[1..].iter()).filter(|a| !a.starts_with('-')).collect();
        for e in std::fs::read_dir(out.join("rtl")).expect("rtl").chain(std::fs::read_dir(out.join("mem")).expect("mem")) {
            let p = e.expect("entry").path();
            let rel = p.strip_prefix(&out).expect("prefix").to_string_lossy().into_owned();
            assert!(added.iter().any(|a| **a == rel), "{rel} not added: {added:?}");
        }
        for a in &added {
            assert!(out.join(a).is_file(), "{a} does not exist");
        }
        let top = calls.iter().find(|c| c[0] == "set_property" && c[1] == "top").unwrap_or_else(|| panic!("top in {log}"));
        assert_eq!(top[2], "tiny_axi");
        let pkg = &calls[pos("ipx::package_project")];
        assert!(pkg.windows(2).any(|w| w[0] == "-root_dir" && w[1] == "vivado/ip"), "{pkg:?}");
        // The AXI interfaces are inferred, each associated with aclk, and
        // aresetn is the clock's active-low reset.
        let inferred: Vec<&str> = calls.iter().filter(|c| c[0] == "ipx::infer_bus_interfaces").map(|c| c[1].as_str()).collect();
        assert!(inferred.contains(&"xilinx.com:interface:axis_rtl:1.0") && inferred.contains(&"xilinx.com:interface:aximm_rtl:1.0"), "{inferred:?}");
        let wrapper = std::fs::read_to_string(out.join("rtl/tiny_axi.v")).expect("wrapper");
        for bus in ["s_axis", "m_axis", "s_axis_ld", "s_axil"] {
            let has = wrapper.contains(&format!("{bus}_tvalid")) || wrapper.contains(&format!("{bus}_awvalid"));
            let assoc = calls.iter().any(|c| c[0] == "ipx::associate_bus_interfaces" && c[1..] == ["-busif", bus, "-clock", "aclk", "core"]);
            assert_eq!(has, assoc, "{}: {bus} in the wrapper {has}, associated {assoc}:\n{log}", out.display());
        }
        assert!(calls.iter().any(|c| c[0] == "ipx::associate_bus_interfaces" && c[1..] == ["-clock", "aclk", "-reset", "aresetn", "core"]), "{log}");
        assert!(log.contains("set_property value ACTIVE_LOW"), "{log}");
        // report.md says how to put it in a block design.
        let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
        assert!(md.contains("vivado -mode batch -source vivado/package_ip.tcl") && md.contains("create_bd_cell"), "{md}");
    }
}
