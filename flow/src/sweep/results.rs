//! What a sweep finds per point: the yosys estimate ([`Area`]), the
//! training schedule ([`Time`]), the training result ([`Quality`]), and
//! the point with all three ([`PointResult`], a row of `sweep.csv` and an
//! entry of `sweep.json`).

use serde::{Deserialize, Serialize};

use crate::synth::SynthReport;

/// A yosys estimate, as the sweep reports it (and caches it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Area {
    /// LUTs, including LUTs used as memory.
    pub luts: u64,
    /// Flip-flops.
    pub ffs: u64,
    /// Carry chains (`carry_cell` primitives).
    pub carry: u64,
    /// CARRY4 or CARRY8.
    pub carry_cell: String,
    /// DSP48E2 slices.
    pub dsps: u64,
    /// Block RAM in 36 Kb units.
    pub bram36: f64,
    /// Cells on the longest combinational path.
    pub logic_levels: u64,
    /// Shares of the part in percent, if fptgen knows its capacity.
    pub shares: Option<AreaShares>,
}

/// Shares of the part's capacity, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AreaShares {
    /// LUTs.
    pub luts: f64,
    /// Flip-flops.
    pub ffs: f64,
    /// Carry chains in CARRY8 units.
    pub carry8: f64,
    /// DSP slices.
    pub dsps: f64,
    /// Block RAM.
    pub bram36: f64,
}

impl Area {
    /// The estimate in a `fptgen synth` report: LUTs and LUTRAM together.
    pub fn of(r: &SynthReport) -> Area {
        let t = &r.total;
        Area {
            luts: t.luts + t.lutram,
            ffs: t.ffs,
            carry: t.carry,
            carry_cell: r.carry_cell.clone(),
            dsps: t.dsps,
            bram36: t.bram36(),
            logic_levels: r.logic_levels,
            shares: r.shares.map(|s| AreaShares {
                luts: s.luts,
                ffs: s.ffs,
                carry8: s.carry8,
                dsps: s.dsps,
                bram36: s.bram36,
            }),
        }
    }
}

/// A point's training time, from the generator's schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Time {
    /// G, groups per iteration.
    pub groups: u64,
    /// Blocks the design has: min(P, T).
    pub blocks_built: usize,
    /// Forward passes per iteration per buffered image: G * N (G * (N + 1)
    /// with baseline fitness).
    pub passes_per_image: u64,
    /// Clock cycles of one iteration, every overhead included.
    pub cycles_per_iteration: u64,
    /// One iteration in microseconds at the model's clock.
    pub iteration_us: f64,
    /// One iteration per buffered image (`iteration_us / M`).
    pub us_per_image: f64,
}

/// A point's training result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quality {
    /// Iterations trained.
    pub iterations: u64,
    /// Buffer loss after them.
    pub loss: u32,
    /// Accuracy on all samples after them (0 to 1), with labels.
    pub accuracy: Option<f64>,
}

/// One point of the sweep, as sweep.json lists it (and its result file,
/// `OUT/results/<index>.json`, holds it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointResult {
    /// N.
    pub population: usize,
    /// P.
    pub blocks: usize,
    /// The design's cache name (leading digits of its hash).
    pub design: Option<String>,
    /// True if the estimate came from OUT/cache (an earlier sweep).
    pub cached: Option<bool>,
    /// The yosys estimate.
    pub area: Option<Area>,
    /// The training schedule.
    pub time: Option<Time>,
    /// The training result, with --data.
    pub training: Option<Quality>,
    /// What failed, if anything.
    pub error: Option<String>,
}

impl PointResult {
    /// The point (N, P) with nothing found yet.
    pub fn new(population: usize, blocks: usize) -> PointResult {
        PointResult {
            population,
            blocks,
            design: None,
            cached: None,
            area: None,
            time: None,
            training: None,
            error: None,
        }
    }

    /// Records that `what` (configuration, synth, training) failed with
    /// message `e`, on a line after any earlier failure.
    pub fn fail(&mut self, what: &str, e: String) {
        let msg = format!("{what}: {e}");
        self.error = Some(match self.error.take() {
            Some(prev) => format!("{prev}\n{msg}"),
            None => msg,
        });
    }

    /// The first line of the error, for the table and the CSV.
    pub fn error_line(&self) -> Option<&str> {
        self.error.as_deref().map(|e| e.lines().next().unwrap_or(""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_accumulate_one_per_line_and_the_first_line_is_shown() {
        let mut r = PointResult::new(4, 2);
        assert_eq!(r.error_line(), None);
        r.fail("synth", "yosys failed in d, see log:\ntail".into());
        r.fail("training", "bad".into());
        assert_eq!(r.error.as_deref(), Some("synth: yosys failed in d, see log:\ntail\ntraining: bad"));
        assert_eq!(r.error_line(), Some("synth: yosys failed in d, see log:"));
    }
}
