//! Distinct designs: points whose design files (all that yosys reads) are
//! identical share one design, one yosys estimate and one cache entry,
//! named by a hash of those files.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use fptgen_generator::render::{GeneratedFile, SynthScope};
use fptgen_generator::VERSION;

/// The design directories yosys reads from: a point's design is its files
/// under these.
pub const YOSYS_READS: [&str; 3] = ["rtl", "mem", "synth"];

/// Hexadecimal digits of the design hash that name a cache directory.
pub const SHORT: usize = 16;

/// The files of `files` that yosys reads (under [`YOSYS_READS`]).
pub fn yosys_reads(files: Vec<GeneratedFile>) -> Vec<GeneratedFile> {
    files.into_iter().filter(|f| YOSYS_READS.iter().any(|d| f.path.starts_with(d))).collect()
}

/// SHA-256, in hexadecimal, of what a yosys estimate depends on: `files`
/// (those yosys reads, in any order), the script, and the fptgen and yosys
/// versions.
pub fn design_hash(files: &[GeneratedFile], scope: SynthScope, yosys: &str) -> String {
    let mut h = Sha256::new();
    let mut field = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    field(b"fptgen sweep cache 1");
    field(VERSION.as_bytes());
    field(yosys.as_bytes());
    field(scope.script().as_bytes());
    let mut read: Vec<&GeneratedFile> = files.iter().collect();
    read.sort_by(|a, b| a.path.cmp(&b.path));
    for f in read {
        field(f.path.to_string_lossy().as_bytes());
        field(&f.contents);
    }
    h.finalize().iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// One distinct design: the points that share it, and its files.
#[derive(Debug, Clone)]
pub struct Design {
    /// The full hash ([`design_hash`]).
    pub hash: String,
    /// The files yosys reads.
    pub files: Vec<GeneratedFile>,
    /// Indices of the points that have this design, in the order added.
    pub points: Vec<usize>,
}

impl Design {
    /// The design's short name: the hash's first [`SHORT`] digits (its
    /// cache directory).
    pub fn name(&self) -> &str {
        &self.hash[..SHORT]
    }
}

/// The distinct designs of a sweep's points, in order of their first
/// point.
#[derive(Debug, Clone, Default)]
pub struct Designs {
    list: Vec<Design>,
    by_hash: BTreeMap<String, usize>,
}

impl Designs {
    /// No designs yet.
    pub fn new() -> Designs {
        Designs::default()
    }

    /// Adds point `point`, whose design has hash `hash` and files `files`
    /// (kept only if the design is new); returns the design's index.
    pub fn add(&mut self, point: usize, hash: String, files: Vec<GeneratedFile>) -> usize {
        let list = &mut self.list;
        let d = *self.by_hash.entry(hash.clone()).or_insert_with(|| {
            list.push(Design { hash, files, points: Vec::new() });
            list.len() - 1
        });
        self.list[d].points.push(point);
        d
    }

    /// The designs.
    pub fn list(&self) -> &[Design] {
        &self.list
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> GeneratedFile {
        GeneratedFile::text(path, text.to_string())
    }

    #[test]
    fn the_hash_is_64_hex_digits_and_ignores_file_order() {
        let a = [file("rtl/a.v", "module a;"), file("mem/w.mem", "01")];
        let b = [file("mem/w.mem", "01"), file("rtl/a.v", "module a;")];
        let h = design_hash(&a, SynthScope::Design, "Yosys 0.33");
        assert_eq!(h.len(), 64);
        assert!(h.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{h}");
        assert_eq!(h, design_hash(&b, SynthScope::Design, "Yosys 0.33"));
    }

    #[test]
    fn the_hash_changes_with_contents_names_script_and_yosys() {
        let base = [file("rtl/a.v", "module a;")];
        let h = design_hash(&base, SynthScope::Design, "Yosys 0.33");
        let others = [
            design_hash(&[file("rtl/a.v", "module b;")], SynthScope::Design, "Yosys 0.33"),
            design_hash(&[file("rtl/b.v", "module a;")], SynthScope::Design, "Yosys 0.33"),
            design_hash(&base, SynthScope::Trainer, "Yosys 0.33"),
            design_hash(&base, SynthScope::Design, "Yosys 0.34"),
        ];
        for o in others {
            assert_ne!(h, o);
        }
    }

    #[test]
    fn fields_are_delimited() {
        // The same bytes split differently between name and contents.
        let a = design_hash(&[file("rtl/ab", "c")], SynthScope::Design, "y");
        let b = design_hash(&[file("rtl/a", "bc")], SynthScope::Design, "y");
        assert_ne!(a, b);
    }

    #[test]
    fn only_what_yosys_reads_is_kept() {
        let files = vec![
            file("rtl/a.v", ""),
            file("mem/w.mem", ""),
            file("synth/synth.ys", ""),
            file("sim/build.sh", ""),
            file("report.json", ""),
            file("rtlx/b.v", ""),
        ];
        let kept: Vec<String> = yosys_reads(files).iter().map(|f| f.path.display().to_string()).collect();
        assert_eq!(kept, ["rtl/a.v", "mem/w.mem", "synth/synth.ys"]);
    }

    #[test]
    fn points_with_equal_hashes_share_a_design() {
        let mut d = Designs::new();
        let h1 = "1".repeat(64);
        let h2 = "2".repeat(64);
        assert_eq!(d.add(0, h1.clone(), vec![file("rtl/a.v", "first")]), 0);
        assert_eq!(d.add(1, h2.clone(), vec![file("rtl/a.v", "second")]), 1);
        assert_eq!(d.add(2, h1.clone(), vec![file("rtl/a.v", "ignored")]), 0);
        assert_eq!(d.len(), 2);
        assert_eq!(d.list()[0].points, [0, 2]);
        assert_eq!(d.list()[1].points, [1]);
        assert_eq!(d.list()[0].files[0].contents, b"first\n");
        assert_eq!(d.list()[0].name(), "1111111111111111");
    }
}
