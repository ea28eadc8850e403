//! The yosys-estimate cache of a sweep's output directory: every distinct
//! design's estimate is kept under `OUT/cache/<design>/` with the design
//! files yosys read, its reports and `area.json`, keyed by the design hash
//! (the files, the script and the fptgen and yosys versions), so that a
//! later sweep into the same OUT reuses it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::designs::{Design, SHORT};
use super::results::Area;
use super::SweepError;
use fptgen_generator::output;
use fptgen_generator::render::{GenInfo, GeneratedFile, SynthScope};
use crate::synth::{self, SynthError, SynthReport};

/// The record of a cached estimate, relative to its design directory.
pub const RECORD: &str = "area.json";

/// `OUT/cache/<design>/area.json`: what a cached estimate is of.
#[derive(Debug, Serialize, Deserialize)]
struct CacheRecord {
    /// The full design hash.
    hash: String,
    /// yosys's version line.
    yosys: String,
    /// The synthesis script (`synth/synth.ys` or `synth/trainer.ys`).
    script: String,
    /// The estimate.
    area: Area,
    /// The id of the sweep plan that made it (none in records of sweeps
    /// before plans).
    #[serde(default)]
    plan: Option<String>,
}

/// The cache under an output directory, for estimates of one scope by one
/// yosys.
#[derive(Debug, Clone)]
pub struct Cache<'a> {
    dir: PathBuf,
    scope: SynthScope,
    yosys: &'a str,
    plan: Option<&'a str>,
}

impl<'a> Cache<'a> {
    /// The cache in `out/cache/` for estimates of `scope` by `yosys`
    /// (its version line).
    pub fn new(out: &Path, scope: SynthScope, yosys: &'a str) -> Cache<'a> {
        Cache { dir: out.join("cache"), scope, yosys, plan: None }
    }

    /// The same cache, used by the tasks of the sweep plan `id`: an
    /// estimate one of its tasks made counts as made by the sweep (not
    /// cached), so every task of a design reports the same, whichever ran
    /// yosys, and a task run again gives the same result.
    pub fn for_plan(self, id: &'a str) -> Cache<'a> {
        Cache { plan: Some(id), ..self }
    }

    /// Takes the lock of the design with hash `hash` (waiting for it),
    /// `OUT/cache/.<design>.lock`: the tasks of a design, in this process
    /// or others, estimate it one at a time, so yosys runs once. Held
    /// until the returned file is dropped.
    pub fn lock(&self, hash: &str) -> Result<std::fs::File, SweepError> {
        std::fs::create_dir_all(&self.dir).map_err(|err| SweepError::Io { path: self.dir.clone(), err })?;
        let path = self.dir.join(format!(".{}.lock", &hash[..SHORT]));
        let io = |err| SweepError::Io { path: path.clone(), err };
        let f = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io)?;
        f.lock().map_err(io)?;
        Ok(f)
    }

    /// The cache's directory, `OUT/cache`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory of the design with hash `hash`.
    pub fn design_dir(&self, hash: &str) -> PathBuf {
        self.dir.join(&hash[..SHORT])
    }

    /// The estimate an earlier run left for the design with hash `hash`,
    /// if its record is readable and of this very hash.
    pub fn lookup(&self, hash: &str) -> Option<Area> {
        self.record(hash).map(|r| r.area)
    }

    /// The record an earlier run left for the design with hash `hash`.
    fn record(&self, hash: &str) -> Option<CacheRecord> {
        let text = std::fs::read_to_string(self.design_dir(hash).join(RECORD)).ok()?;
        let r = serde_json::from_str::<CacheRecord>(&text).ok()?;
        (r.hash == hash).then_some(r)
    }

    /// The estimate of design `d`: from the cache if an earlier run left
    /// it, else by writing the design into its directory and running
    /// `synth` there (in a sweep, yosys on the design's top module and
    /// part), then keeping its reports (made with `gen`, for part
    /// `part_name`) and the record. Returns the estimate and whether it
    /// came from the cache (of an earlier sweep, if the cache is a plan's:
    /// [`Cache::for_plan`]).
    pub fn estimate(
        &self,
        d: &Design,
        gen: &GenInfo,
        part_name: &str,
        synth: impl FnOnce(&Path) -> Result<SynthReport, SynthError>,
    ) -> Result<(Area, bool), SweepError> {
        if let Some(r) = self.record(&d.hash) {
            let earlier = self.plan.is_none() || r.plan.as_deref() != self.plan;
            return Ok((r.area, earlier));
        }
        let dir = self.design_dir(&d.hash);
        output::write_dir(&dir, output::DESIGN, &d.files)?;
        let r = synth(&dir)?;
        let mut files = synth::report_files(&r, gen, part_name)?;
        let rec = CacheRecord {
            hash: d.hash.clone(),
            yosys: self.yosys.to_string(),
            script: self.scope.script().to_string(),
            area: Area::of(&r),
            plan: self.plan.map(str::to_string),
        };
        files.push(GeneratedFile::text(RECORD, serde_json::to_string_pretty(&rec)?));
        output::add_files(&dir, output::SYNTH, &files)?;
        Ok((rec.area, false))
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::synth::Resources;

    fn design(hash: &str) -> Design {
        Design {
            hash: hash.to_string(),
            files: vec![GeneratedFile::text("rtl/top.v", "module top; endmodule".into())],
            points: vec![0],
        }
    }

    /// A yosys report with 100 LUTs and 20 LUTRAM, 30 FFs, 2 CARRY8,
    /// 1 DSP, one RAMB36 and one RAMB18.
    fn report() -> SynthReport {
        SynthReport {
            yosys: "Yosys test".into(),
            script: "synth/synth.ys".into(),
            trainer_only: false,
            top: "top".into(),
            modules: Vec::new(),
            total: Resources { luts: 100, lutram: 20, ffs: 30, carry: 2, dsps: 1, ramb36: 1, ramb18: 1, muxf: 0 },
            carry_cell: "CARRY8".into(),
            logic_levels: 7,
            timing: crate::sta::Estimate {
                lut_levels: 3,
                carry_cells: 2,
                muxf_cells: 0,
                other_cells: 0,
                delay_ns: 2.0,
                fmax_mhz: 500.0,
                start: "FDRE a".into(),
                end: "FDRE b".into(),
            },
            clock_period_ns: 5.0,
            meets_clock: true,
            part: None,
            shares: None,
        }
    }

    fn gen() -> GenInfo {
        GenInfo { version: fptgen_generator::VERSION, source: "test.yaml".into() }
    }

    #[test]
    fn a_miss_runs_the_estimate_once_and_a_later_run_hits() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let out = tmp.path().join("out");
        let cache = Cache::new(&out, SynthScope::Design, "Yosys test");
        let d = design(&"ab".repeat(32));
        let runs = Cell::new(0);
        let fake = |dir: &Path| {
            runs.set(runs.get() + 1);
            assert!(dir.join("rtl/top.v").is_file(), "the design is written before yosys runs");
            Ok(report())
        };
        let (area, cached) = cache.estimate(&d, &gen(), "xcku035", fake).expect("estimate");
        assert!(!cached);
        assert_eq!(runs.get(), 1);
        assert_eq!((area.luts, area.ffs, area.carry, area.dsps, area.logic_levels), (120, 30, 2, 1, 7));
        assert_eq!(area.bram36, 1.5);
        assert_eq!(area.carry_cell, "CARRY8");
        let dir = out.join("cache").join("abababababababab");
        for f in ["area.json", "reports/synth.md", "reports/synth.json", "rtl/top.v"] {
            assert!(dir.join(f).is_file(), "{f}");
        }

        // A new cache over the same directory: a hit, yosys not run.
        let again = Cache::new(&out, SynthScope::Design, "Yosys test");
        let (hit, cached) =
            again.estimate(&d, &gen(), "xcku035", |_: &Path| -> Result<SynthReport, SynthError> { panic!("a cache hit runs nothing") }).expect("hit");
        assert!(cached);
        assert_eq!(hit, area);
    }

    #[test]
    fn a_record_of_another_hash_or_unreadable_is_a_miss() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(tmp.path(), SynthScope::Design, "Yosys test");
        let h = format!("{}{}", "cd".repeat(8), "0".repeat(48));
        assert_eq!(cache.lookup(&h), None, "nothing cached");
        // Same 16-digit name, different full hash.
        let other = format!("{}{}", "cd".repeat(8), "1".repeat(48));
        cache.estimate(&design(&other), &gen(), "p", |_: &Path| Ok(report())).expect("estimate");
        assert!(cache.lookup(&other).is_some());
        assert_eq!(cache.lookup(&h), None, "a record of another hash");
        std::fs::write(tmp.path().join("cache/cdcdcdcdcdcdcdcd/area.json"), "not json").expect("write");
        assert_eq!(cache.lookup(&other), None, "an unreadable record");
        assert_eq!(cache.design_dir(&h), tmp.path().join("cache/cdcdcdcdcdcdcdcd"));
        assert_eq!(cache.dir(), tmp.path().join("cache"));
    }

    #[test]
    fn a_failing_estimate_is_an_error_and_caches_nothing() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(tmp.path(), SynthScope::Design, "Yosys test");
        let d = design(&"ef".repeat(32));
        let e = cache.estimate(&d, &gen(), "p", |_: &Path| Err(SynthError::MissingYosys)).expect_err("fails");
        assert_eq!(e.to_string(), "yosys not found on PATH; install it (Debian: apt-get install yosys)");
        assert_eq!(cache.lookup(&d.hash), None);
    }

    #[test]
    fn in_a_plan_only_another_plans_estimates_count_as_cached() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let d = design(&"12".repeat(32));
        let yosys = std::cell::Cell::new(0);
        let run = |_: &Path| {
            yosys.set(yosys.get() + 1);
            Ok(report())
        };
        let plan_a = Cache::new(tmp.path(), SynthScope::Design, "Yosys test").for_plan("a");
        let lock = plan_a.lock(&d.hash).expect("lock");
        assert!(tmp.path().join("cache/.1212121212121212.lock").is_file());
        drop(lock);
        assert!(!plan_a.estimate(&d, &gen(), "p", run).expect("made").1);
        // The same plan again (another of its tasks, or the task rerun):
        // not cached, and yosys does not run.
        assert!(!plan_a.estimate(&d, &gen(), "p", run).expect("found").1);
        let plan_b = Cache::new(tmp.path(), SynthScope::Design, "Yosys test").for_plan("b");
        assert!(plan_b.estimate(&d, &gen(), "p", run).expect("found").1, "an earlier plan's estimate");
        assert_eq!(yosys.get(), 1);
    }
}
