//! The tables of the README and docs/ whose figures come from deterministic
//! commands (cycles, schedules, resources, timing estimates) are rendered
//! from the golden baselines (`tests/baselines/*.json`), between the lines
//! `<!-- baselines: KIND -->` and `<!-- /baselines -->`. This test renders
//! every such block and fails when a page differs from what it would
//! write; `bash tests/run.sh --bless` (FPTGEN_BLESS=1) writes the pages.
//! Hand-written figures stay outside the blocks only with the commit that
//! measured them.

use serde_json::Value;

mod common;
use common::baseline::{self, Design, DESIGNS};
use common::root;

/// The pages with generated blocks.
const PAGES: &[&str] = &["README.md", "docs/hardware.md", "docs/results/kintex.md", "docs/results/mnist_cnn.md", "docs/results/ecp5.md"];

/// `1234567` as `1,234,567`.
fn thousands(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// LUTs as the reports count them: logic and memory LUTs.
fn luts(total: &Value) -> u64 {
    u(total, "luts") + u(total, "lutram")
}

fn bram36(total: &Value) -> f64 {
    u(total, "ramb36") as f64 + u(total, "ramb18") as f64 / 2.0
}

fn share(used: f64, part: &Value, k: &str) -> String {
    format!("{:.1}%", 100.0 * used / f(part, k))
}

/// The design's row label: its title and the command that makes it.
fn label(d: &Design) -> String {
    let mut cmd = format!("`{}`", d.model);
    if !d.args.is_empty() {
        cmd = format!("`{} {}`", d.model, d.args.join(" "));
    }
    format!("{} | {cmd}", d.title)
}

/// The designs whose baseline has `section`, with it.
fn with(section: &str) -> Vec<(&'static Design, Value)> {
    DESIGNS
        .iter()
        .filter_map(|d| baseline::load(d.name).get(section).cloned().map(|v| (d, v)))
        .collect()
}

/// The cell names of a path's end points, without yosys's cell type.
fn cell(v: &Value) -> String {
    let s = v.as_str().unwrap_or("");
    let name = s.split_once(' ').map(|x| x.1).unwrap_or(s);
    format!("`{name}`")
}

/// Every design's exact figures: II, latency and the trainer's schedule.
fn schedule() -> String {
    let mut t = String::from(
        "| design | model file | II (cycles) | latency (cycles) | trainer | cycles per group | cycles per iteration | one iteration |\n|---|---|---:|---:|---|---:|---:|---:|\n",
    );
    for (d, e) in with("exact") {
        let clock = f(&e, "clock_period_ns");
        let (trainer, group, iter) = if let Some(es) = e.get("es") {
            let mode = es["evaluation"].as_str().unwrap_or("");
            let mode = if mode == "difference" { "ES by difference (every sample changed: the most)" } else { "ES, full evaluation" };
            (mode.to_string(), thousands(u(es, "cycles_per_group")), u(es, "cycles_per_iteration"))
        } else if let Some(fb) = e.get("feedback") {
            (format!("{} (at most)", fb["rule"].as_str().unwrap_or("")), "-".into(), u(fb, "cycles_per_iteration_max"))
        } else {
            ("none".into(), "-".into(), 0)
        };
        let time = if iter == 0 { "-".into() } else { micro(iter as f64 * clock) };
        let iter = if iter == 0 { "-".into() } else { thousands(iter) };
        t += &format!("| {} | {} | {} | {trainer} | {group} | {iter} | {time} |\n", label(&d), thousands(u(&e, "ii")), thousands(u(&e, "latency")));
    }
    t
}

/// `ns` nanoseconds in the unit that reads best.
fn micro(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} us", ns / 1e3)
    }
}

/// Resources and the timing estimate of every design synthesized whole.
fn synth() -> String {
    let mut t = String::from(
        "| design | model file | LUTs | FFs | CARRY4 | DSP48E2 | BRAM36 | estimate | fmax | clock |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for (d, s) in with("synth") {
        let (tot, part, tm) = (&s["total"], &s["part"], &s["timing"]);
        let delay = f(tm, "delay_ns");
        let clock = f(&s, "clock_period_ns");
        t += &format!(
            "| {} | {} ({}) | {} ({}) | {} | {} ({}) | {:.1} ({}) | {delay:.2} ns | {:.0} MHz | {} {clock} ns |\n",
            label(d),
            thousands(luts(tot)),
            share(luts(tot) as f64, part, "luts"),
            thousands(u(tot, "ffs")),
            share(u(tot, "ffs") as f64, part, "ffs"),
            thousands(u(tot, "carry")),
            thousands(u(tot, "dsps")),
            share(u(tot, "dsps") as f64, part, "dsps"),
            bram36(tot),
            share(bram36(tot), part, "bram36"),
            1000.0 / delay,
            if delay <= clock { "meets" } else { "misses" },
        );
    }
    t
}

/// Every design placed and routed for an ECP5 part (`fptgen implement`).
fn routed() -> String {
    let mut t = String::from(
        "| design | model file | part | routed fmax | clock | LUT4 + carry (TRELLIS_COMB) | FFs | MULT18X18D | EBR (DP16KD) | worst path | in wires |\n|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for (d, r) in with("routed") {
        let used = |k: &str| r["utilization"].get(k).and_then(|u| u[0].as_u64()).unwrap_or(0);
        let fmax = f(&r, "fmax_mhz");
        let clock = f(&r, "clock_mhz");
        let p = &r["worst_path"];
        t += &format!(
            "| {} | {} | {fmax:.1} MHz | {} {clock:.0} MHz | {} | {} | {} | {} | {:.2} ns | {:.2} ns |\n",
            label(d),
            r["part"].as_str().unwrap_or(""),
            if fmax >= clock { "meets" } else { "misses" },
            thousands(used("TRELLIS_COMB")),
            thousands(used("TRELLIS_FF")),
            used("MULT18X18D"),
            used("DP16KD"),
            f(p, "delay_ns"),
            f(p, "routing_ns"),
        );
    }
    t
}

/// The README's short table: every example's cycles and estimate.
fn examples() -> String {
    let mut t = String::from("| design | II (cycles) | latency (cycles) | LUTs | DSP48E2 | BRAM36 | timing estimate |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (d, e) in with("exact") {
        if d.name.starts_with("mnist_p") {
            continue;
        }
        let b = baseline::load(d.name);
        let (l, dsp, bram, est) = match b.get("synth") {
            Some(s) => {
                let tot = &s["total"];
                (thousands(luts(tot)), thousands(u(tot, "dsps")), format!("{:.1}", bram36(tot)), format!("{:.2} ns", f(&s["timing"], "delay_ns")))
            }
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        t += &format!("| {} | {} | {} | {l} | {dsp} | {bram} | {est} |\n", d.title, thousands(u(&e, "ii")), thousands(u(&e, "latency")));
    }
    t
}

/// The worst path of every design synthesized whole, by the estimate.
fn timing() -> String {
    let mut t = String::from("| design | estimate | fmax | LUT levels | carry | MUXF | from | to |\n|---|---:|---:|---:|---:|---:|---|---|\n");
    for (d, s) in with("synth") {
        let tm = &s["timing"];
        let delay = f(tm, "delay_ns");
        t += &format!(
            "| {} | {delay:.2} ns | {:.0} MHz | {} | {} | {} | {} | {} |\n",
            d.title,
            1000.0 / delay,
            u(tm, "lut_levels"),
            u(tm, "carry_cells"),
            u(tm, "muxf_cells"),
            cell(&tm["start"]),
            cell(&tm["end"]),
        );
    }
    t
}

/// Table II: the MNIST trainer alone at P = 1, 10, 100, 1000, with the
/// schedule of the whole design.
fn blocks() -> String {
    let mut t = String::from(
        "| P | LUTs | share | FFs | BRAM36 | G | forward passes / iteration / image | at the II and clock | trainer schedule | evaluation |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for name in ["mnist_p1", "mnist_p10", "mnist", "mnist_p1000"] {
        let b = baseline::load(name);
        let (Some(s), Some(e)) = (b.get("trainer_only"), b.get("exact")) else { continue };
        let (tot, part) = (&s["total"], &s["part"]);
        let tr = &e["training"];
        let clock = f(&e, "clock_period_ns");
        let passes = u(tr, "forward_passes_per_iteration_per_image");
        let es = &e["es"];
        let iteration = u(es, "cycles_per_iteration");
        t += &format!(
            "| {} | {} | {} | {} | {:.1} | {} | {} | {} | {} | {} |\n",
            u(tr, "blocks"),
            thousands(luts(tot)),
            share(luts(tot) as f64, part, "luts"),
            thousands(u(tot, "ffs")),
            bram36(tot),
            thousands(u(tr, "groups")),
            thousands(passes),
            micro(passes as f64 * u(&e, "ii") as f64 * clock),
            micro(iteration as f64 * clock / u(es, "m") as f64),
            es["evaluation"].as_str().unwrap_or(""),
        );
    }
    t
}

/// Table I: each trainer module's LUTs and FFs (with its submodules) in
/// the MNIST trainer alone at P = 1 and P = 1000, and the growth per block.
fn units() -> String {
    let mut t = String::from(
        "| module | LUTs, P = 1 | FFs, P = 1 | LUTs, P = 1000 | FFs, P = 1000 | LUTs per further block |\n|---|---:|---:|---:|---:|---:|\n",
    );
    let (Some(a), Some(b)) = (baseline::load("mnist_p1").get("trainer_only").cloned(), baseline::load("mnist_p1000").get("trainer_only").cloned())
    else {
        return t;
    };
    for name in ["fptgen_itb_ring", "fptgen_itb", "fptgen_lfsr_advance", "fptgen_loss_acc", "fptgen_po2", "fptgen_es_update", "fptgen_es_step", "fptgen_es_ctrl", "fptgen_param_cursor", "fptgen_sample_buf", "fptgen_diff_eval"] {
        let (Some(x), Some(y)) = (a["modules"].get(name), b["modules"].get(name)) else { continue };
        let growth = (luts(y) as f64 - luts(x) as f64) / 999.0;
        t += &format!(
            "| `{name}` | {} | {} | {} | {} | {growth:.2} |\n",
            thousands(luts(x)),
            thousands(u(x, "ffs")),
            thousands(luts(y)),
            thousands(u(y, "ffs")),
        );
    }
    t
}

/// One design's figures, exact and synthesized, as rows of a table.
fn one(name: &str) -> String {
    let d = baseline::design(name);
    let b = baseline::load(name);
    let e = b.get("exact").unwrap_or_else(|| panic!("{name}: no exact figures"));
    let clock = f(e, "clock_period_ns");
    let ii = u(e, "ii");
    let mut t = format!("| {} | value |\n|---|---:|\n", d.title);
    t += &format!("| initiation interval | {} cycles ({:.0} inferences/s at {:.0} MHz) |\n", thousands(ii), 1e9 / (ii as f64 * clock), 1000.0 / clock);
    t += &format!("| latency | {} cycles ({}) |\n", thousands(u(e, "latency")), micro(u(e, "latency") as f64 * clock));
    for l in e["layers"].as_array().expect("layers") {
        let fold = match (l["pe"].as_u64(), l["simd"].as_u64()) {
            (Some(p), Some(q)) => format!(", PE {p} x SIMD {q}"),
            _ => String::new(),
        };
        t += &format!(
            "| layer `{}` ({}{fold}): cycles per vector, latency | {}, {} |\n",
            l["name"].as_str().unwrap_or(""),
            l["kind"].as_str().unwrap_or(""),
            thousands(u(l, "cycles")),
            thousands(u(l, "latency"))
        );
    }
    if let Some(s) = b.get("synth") {
        let (tot, part) = (&s["total"], &s["part"]);
        t += &format!("| LUTs, with the trainer | {} ({} of the {}) |\n", thousands(luts(tot)), share(luts(tot) as f64, part, "luts"), part["device"].as_str().unwrap_or(""));
        t += &format!("| flip-flops | {} ({}) |\n", thousands(u(tot, "ffs")), share(u(tot, "ffs") as f64, part, "ffs"));
        t += &format!("| DSP48E2 | {} ({}) |\n", thousands(u(tot, "dsps")), share(u(tot, "dsps") as f64, part, "dsps"));
        t += &format!("| BRAM36 | {:.1} ({}) |\n", bram36(tot), share(bram36(tot), part, "bram36"));
        t += &format!("| timing estimate | {:.2} ns |\n", f(&s["timing"], "delay_ns"));
    }
    if let (Some(es), Some(tr)) = (e.get("es"), e.get("training")) {
        let it = u(es, "cycles_per_iteration");
        t += &format!(
            "| one ES iteration (N {}, P {}, M {}, {} evaluation) | {} cycles ({} at {:.0} MHz) |\n",
            u(tr, "population"),
            u(tr, "blocks"),
            u(es, "m"),
            es["evaluation"].as_str().unwrap_or(""),
            thousands(it),
            micro(it as f64 * clock),
            1000.0 / clock
        );
    }
    t
}

/// The block of kind `kind`, with the line that says where it comes from.
fn render(kind: &str) -> String {
    if let Some(name) = kind.strip_prefix("design ") {
        let b = baseline::load(name);
        let yosys = b.get("synth").and_then(|s| s["yosys"].as_str().map(|y| format!(" and `fptgen synth` ({y})"))).unwrap_or_default();
        let d = baseline::design(name);
        return format!(
            "{}\nGenerated from `tests/baselines/{name}.json`: `fptgen generate {}`{yosys}. `bash tests/run.sh --bless` rewrites it, `tests/docs_generated.rs` checks it.\n",
            one(name),
            std::iter::once(d.model).chain(d.args.iter().copied()).collect::<Vec<_>>().join(" ")
        );
    }
    let (table, source) = match kind {
        "schedule" => (schedule(), "`fptgen generate` (report.json)"),
        "synth" => (synth(), "`fptgen synth` (yosys `synth_xilinx -family xcu`, estimates; LUTs include LUTs used as memory)"),
        "examples" => (examples(), "`fptgen generate` and `fptgen synth` (yosys estimates; LUTs include LUTs used as memory)"),
        "routed" => (routed(), "`fptgen implement` (yosys `synth_ecp5`, nextpnr-ecp5 with Project Trellis timing; routed, not estimated)"),
        "timing" => (timing(), "`fptgen synth`'s timing estimate (flow/src/sta.rs)"),
        "blocks" => (blocks(), "`fptgen synth examples/mnist/model.yaml --blocks P --trainer-only` and `fptgen generate` (report.json)"),
        "units" => (units(), "`fptgen synth examples/mnist/model.yaml --blocks P --trainer-only` (reports/synth_trainer.json)"),
        other => panic!("unknown generated block `{other}`"),
    };
    let yosys = with("synth").first().and_then(|(_, s)| s["yosys"].as_str().map(str::to_string)).unwrap_or_default();
    let tool = match kind {
        "schedule" => String::new(),
        "routed" => with("routed")
            .first()
            .map(|(_, r)| format!(", {} and {}", r["tools"]["yosys"].as_str().unwrap_or(""), r["tools"]["nextpnr"].as_str().unwrap_or("")))
            .unwrap_or_default(),
        _ => format!(", {yosys}"),
    };
    format!("{table}\nGenerated from the golden baselines `tests/baselines/*.json`: {source}{tool}. `bash tests/run.sh --bless` rewrites them, `tests/docs_generated.rs` checks this table.\n")
}

/// `text` with every generated block rendered anew.
fn rendered(page: &str, text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("<!-- baselines: ") {
        let head_end = at + rest[at..].find("-->").unwrap_or_else(|| panic!("{page}: unclosed marker")) + 3;
        let kind = rest[at + 16..head_end - 3].trim();
        let end = rest[head_end..].find("<!-- /baselines -->").unwrap_or_else(|| panic!("{page}: block `{kind}` has no `<!-- /baselines -->`"));
        out += &rest[..head_end];
        out += "\n";
        out += &render(kind);
        rest = &rest[head_end + end..];
    }
    out + rest
}

#[test]
fn generated_tables_equal_the_baselines() {
    let mut stale = Vec::new();
    for page in PAGES {
        let p = root().join(page);
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{page}: {e}"));
        let want = rendered(page, &text);
        if want != text {
            if baseline::blessing() {
                std::fs::write(&p, &want).unwrap_or_else(|e| panic!("{page}: {e}"));
            } else {
                stale.push(first_difference(page, &text, &want));
            }
        }
    }
    assert!(stale.is_empty(), "pages differ from their baselines (bless with `bash tests/run.sh --bless`):\n{}", stale.join("\n"));
}

/// `page:LINE: is ... / would be ...` for the first line that differs.
fn first_difference(page: &str, is: &str, want: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (is.lines().collect(), want.lines().collect());
    let i = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    format!("{page}:{}: is\n    {}\n  would be\n    {}", i + 1, a.get(i).unwrap_or(&"(end)"), b.get(i).unwrap_or(&"(end)"))
}

/// Every page has at least one block, and every block's kind renders: a
/// page that lost its markers would otherwise pass unchecked.
#[test]
fn every_page_has_generated_blocks() {
    for page in PAGES {
        let text = std::fs::read_to_string(root().join(page)).expect("page");
        assert!(text.contains("<!-- baselines: "), "{page} has no generated block");
    }
}
