//! The generated Verilog is Verilog-2001 (docs/hardware.md, "Language"):
//! `fptgen generate` on every example, with and without its `training:`
//! section, then Icarus Verilog in its IEEE 1364-2001 mode parses and
//! elaborates every generated `.v` file, the design from its top and every
//! module as a root of its own (the library modules with their default
//! parameters; the AXI wrapper of tiny, `--axi`, too), with and without `FPTGEN_DUMP_FINAL` (the define of the
//! training co-simulation's build). Any error or warning fails the test with
//! iverilog's message.
//!
//! iverilog accepts every system task it knows in any language mode, so the
//! files are also searched for the SystemVerilog (and Verilog-2005) ones.
//!
//! Needs iverilog: the test fails (it does not skip) without it.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{fptgen, require, root, untrained_copy};

/// System tasks and functions that are not Verilog-2001 but that
/// `iverilog -g2001` accepts.
const NOT_2001: &[&str] = &[
    "$error", "$fatal", "$warning", "$info", "$writememh", "$writememb", "$clog2", "$bits", "$countones",
    "$onehot", "$onehot0", "$isunknown", "$urandom", "$sformatf",
];

/// `text` without its comments (`//` to the end of the line, `/* */`),
/// string literals kept.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push(c);
                while let Some(d) = chars.next() {
                    out.push(d);
                    if d == '\\' {
                        if let Some(e) = chars.next() {
                            out.push(e);
                        }
                    } else if d == '"' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for d in chars.by_ref() {
                    if d == '\n' {
                        out.push('\n');
                    }
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The module names a Verilog file declares.
fn modules(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut words = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'));
    while let Some(w) = words.next() {
        if w == "module" {
            if let Some(name) = words.by_ref().find(|w| !w.is_empty()) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// Generates `model` into `out` (with the options `extra`) and checks
/// every `.v` file.
fn check_design(model: &Path, out: &Path, dir: &Path, extra: &[&str]) {
    let mut args = vec!["generate", model.to_str().expect("utf8"), "-o", out.to_str().expect("utf8")];
    args.extend_from_slice(extra);
    let (code, stdout, err) = fptgen(&args, dir);
    assert_eq!(code, 0, "generate {} failed:\n{stdout}\n{err}", model.display());
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).expect("report.json")).expect("json");
    let top = report["network"]["name"].as_str().expect("name").to_string();

    // The modules (.v) and the include file they share (.vh).
    let mut sources: Vec<PathBuf> = std::fs::read_dir(out.join("rtl"))
        .expect("rtl")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "v" || x == "vh"))
        .collect();
    sources.sort();
    let files: Vec<PathBuf> = sources.iter().filter(|p| p.extension().is_some_and(|x| x == "v")).cloned().collect();
    assert!(files.len() >= 5, "{}: too few Verilog files: {files:?}", out.display());
    let mut roots = vec![top.clone()];
    for f in &sources {
        let text = strip_comments(&std::fs::read_to_string(f).expect("read"));
        for t in NOT_2001 {
            let found = text.match_indices(t).any(|(i, _)| {
                !text[i + t.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            });
            assert!(!found, "{}: {t} is not Verilog-2001", f.display());
        }
        if f.extension().is_some_and(|x| x == "vh") {
            assert!(modules(&text).is_empty(), "{}: an include file declares no module", f.display());
            continue;
        }
        let names = modules(&text);
        assert_eq!(names.len(), 1, "{}: one module per file, found {names:?}", f.display());
        roots.extend(names.into_iter().filter(|n| *n != top));
    }

    for define in [None, Some("FPTGEN_DUMP_FINAL")] {
        let mut cmd = Command::new("iverilog");
        cmd.args(["-g2001", "-o", "/dev/null", "-I", "rtl"]);
        if let Some(d) = define {
            cmd.arg(format!("-D{d}"));
        }
        for r in &roots {
            cmd.args(["-s", r]);
        }
        let o = cmd.args(&files).current_dir(out).output().expect("run iverilog");
        let msg = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(
            o.status.success() && msg.trim().is_empty(),
            "iverilog -g2001{} on {} (top {top}) failed ({}):\n{msg}",
            define.map(|d| format!(" -D{d}")).unwrap_or_default(),
            out.display(),
            o.status
        );
    }
}

#[test]
fn generated_verilog_is_verilog_2001() {
    require("iverilog");
    let dir = tempfile::tempdir().expect("tempdir");
    for example in ["tiny", "jet_tagging", "mnist", "int8_head"] {
        let model = root().join(format!("examples/{example}/model.yaml"));
        check_design(&model, &dir.path().join(format!("{example}-out")), dir.path(), &[]);
        let untrained = untrained_copy(dir.path(), example);
        check_design(&untrained, &dir.path().join(format!("{example}-untrained-out")), dir.path(), &[]);
    }
    // The AXI wrapper (its top is a root like any module's), around an ES
    // trainer, a feedback-rule trainer and the inference-only tiny, with
    // transfers split (--axi-width 8).
    let tiny = root().join("examples/tiny/model.yaml");
    check_design(&tiny, &dir.path().join("tiny-axi"), dir.path(), &["--axi"]);
    check_design(&tiny, &dir.path().join("tiny-dfa-axi"), dir.path(), &["--axi", "--rule", "dfa", "--axi-width", "8"]);
    let untrained = dir.path().join("tiny-untrained/model.yaml");
    check_design(&untrained, &dir.path().join("tiny-untrained-axi"), dir.path(), &["--axi", "--axi-width", "8"]);
}

#[test]
fn comment_stripping_and_module_names() {
    let text = "// module a $error\nmodule b; /* module c\n $fatal */ initial $display(\"// $error\"); endmodule\n";
    let s = strip_comments(text);
    assert!(!s.contains("module a") && !s.contains("module c") && !s.contains("$fatal"), "{s}");
    assert!(s.contains("\"// $error\""), "{s}");
    assert_eq!(modules(&s), vec!["b".to_string()]);
}
