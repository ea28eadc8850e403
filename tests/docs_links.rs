//! Every relative Markdown link of the README and docs/ (pages, files,
//! and `#anchors` into Markdown pages) points at something that exists, so
//! moving a section or a file cannot leave a dead link behind.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, and every `.md` file under docs/.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).expect("docs/").map(|e| e.expect("entry").path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut out);
    out
}

/// The text of a page outside fenced code blocks and inline code spans.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if fenced || line.starts_with("    ") && !line.trim_start().starts_with(['|', '-', '*', '[']) {
            out.push('\n');
            continue;
        }
        // Drop inline code spans.
        let mut code = false;
        for c in line.chars() {
            if c == '`' {
                code = !code;
            } else if !code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of the inline links `[text](target)` of `text`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].trim();
        // `[text](target "title")`
        let target = target.split_whitespace().next().unwrap_or("");
        out.push(target.to_string());
        rest = &after[end..];
    }
    out
}

/// GitHub's anchors of a Markdown page's headings (lowercase; letters,
/// digits, `-` and `_` kept, spaces to `-`, the rest dropped; a repeated
/// anchor gets `-1`, `-2`, ...).
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

#[test]
fn relative_links_resolve() {
    let mut dead = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        let name = page.strip_prefix(root()).unwrap_or(&page).display().to_string();
        for target in links(&prose(&text)) {
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() { page.clone() } else { page.parent().expect("dir").join(file) };
            if !path.exists() {
                dead.push(format!("{name}: ({target}): no file {}", path.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                if path.extension().is_some_and(|e| e == "md") {
                    let t = std::fs::read_to_string(&path).expect("page");
                    if !anchors(&t).contains(&anchor.to_lowercase()) {
                        dead.push(format!("{name}: ({target}): no heading with that anchor in {}", path.display()));
                    }
                }
            }
        }
    }
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}

/// docs/index.md links every page of docs/ (one line each), so a new page
/// cannot be left out of the index.
#[test]
fn index_lists_every_page() {
    let index = std::fs::read_to_string(root().join("docs/index.md")).expect("docs/index.md");
    let listed: HashSet<String> = links(&prose(&index)).into_iter().map(|t| t.split('#').next().unwrap_or("").to_string()).collect();
    let missing: Vec<String> = pages()
        .iter()
        .filter_map(|p| p.strip_prefix(root().join("docs")).ok())
        .map(|p| p.display().to_string())
        .filter(|p| p != "index.md" && !listed.contains(p))
        .collect();
    assert!(missing.is_empty(), "docs/index.md does not list: {}", missing.join(", "));
}

#[test]
fn anchors_follow_github() {
    let a = anchors("# Open place and route (Lattice ECP5)\n## Approximate rewrites (`--lower approximate`)\n## Notes\n## Notes\n");
    assert!(a.contains("open-place-and-route-lattice-ecp5"));
    assert!(a.contains("approximate-rewrites---lower-approximate"));
    assert!(a.contains("notes") && a.contains("notes-1"));
}
