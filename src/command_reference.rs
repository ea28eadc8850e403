//! docs/commands.md, the command reference, is generated from the clap
//! definition in main.rs by clap-markdown (a dev-dependency: the binary
//! does not carry it). This test fails when the page differs from what
//! clap produces; `FPTGEN_BLESS=1 cargo test --bin fptgen command_reference`
//! (also run by `bash tests/run.sh --bless`) rewrites it.

use clap::CommandFactory;

const PAGE: &str = "docs/commands.md";

/// The page: a line saying where it comes from, then clap-markdown's text.
fn rendered() -> String {
    let options = clap_markdown::MarkdownOptions::new()
        .title("Command reference".to_string())
        .show_footer(false)
        .show_table_of_contents(true);
    let body = clap_markdown::help_markdown_command_custom(&crate::Cli::command(), &options);
    format!(
        "<!-- Generated from the CLI's clap definition (src/main.rs) by clap-markdown; do not edit.\n     `FPTGEN_BLESS=1 cargo test --bin fptgen command_reference` rewrites it; the fast tier fails when it differs. -->\n\n{}\n",
        body.trim_end()
    )
}

#[test]
fn command_reference_is_generated_from_clap() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PAGE);
    let want = rendered();
    let is = std::fs::read_to_string(&path).unwrap_or_default();
    if is == want {
        return;
    }
    if std::env::var("FPTGEN_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap_or_else(|e| panic!("{PAGE}: {e}"));
        return;
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (is.lines().collect(), want.lines().collect());
    let i = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    panic!(
        "{PAGE} differs from what clap produces (FPTGEN_BLESS=1 cargo test --bin fptgen command_reference rewrites it):\n{PAGE}:{}: is\n    {}\n  would be\n    {}",
        i + 1,
        a.get(i).unwrap_or(&"(end)"),
        b.get(i).unwrap_or(&"(end)")
    );
}
