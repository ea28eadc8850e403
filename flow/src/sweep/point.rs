//! One point (N, P) of a sweep: the model with its `training:` section's
//! `population` and `blocks` replaced (as `fptgen synth --population N
//! --blocks P` does), planned and rendered: its training schedule and the
//! design files yosys reads.

use fptgen_sim::model::Model;
use fptgen_sim::weights::Params;

use super::designs::{design_hash, yosys_reads};
use super::results::Time;
use super::SweepError;
use fptgen_generator::render::{render, GenInfo, GeneratedFile, SynthScope};

/// What one point needs after planning and rendering.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The model with N and P.
    pub model: Model,
    /// Its training schedule.
    pub time: Time,
    /// The hash of its design ([`design_hash`]).
    pub hash: String,
    /// Its design files that yosys reads.
    pub files: Vec<GeneratedFile>,
}

/// Plans and renders the point (N, P) of `model` with `params`: its model,
/// schedule and design, hashed for an estimate of `scope` by `yosys`; an
/// error ([`SweepError::NoTraining`], [`SweepError::Config`],
/// [`SweepError::NoPlan`], [`SweepError::Render`]) if it has none.
pub fn prepare(
    model: &Model,
    params: &Params,
    n: usize,
    p: usize,
    scope: SynthScope,
    yosys: &str,
    gen: &GenInfo,
) -> Result<Prepared, SweepError> {
    let mut model = model.clone();
    let basis = fptgen_sim::train::steps::StepBasis::of(&model);
    let t = model.training.as_mut().ok_or(SweepError::NoTraining)?;
    t.population = n;
    t.blocks = p;
    // Automatic steps follow N (`lr_shift: auto`).
    *t = t.resolve(basis.as_ref());
    t.check().map_err(SweepError::Config)?;
    let m = t.buffer;
    let (plan, params) = fptgen_generator::design::lower(&model, params);
    let params = &params;
    let (Some(tp), Some(hw)) = (&plan.training, &plan.trainer) else {
        return Err(SweepError::NoPlan);
    };
    let time = Time {
        groups: tp.groups,
        blocks_built: hw.p,
        passes_per_image: tp.forward_passes_per_iteration_per_image,
        cycles_per_iteration: tp.cycles_per_iteration,
        iteration_us: tp.iteration_us,
        us_per_image: tp.iteration_us / m as f64,
    };
    // The cache keeps what yosys reads, nothing else.
    let files = yosys_reads(render(params, &plan, gen)?);
    let hash = design_hash(&files, scope, yosys);
    Ok(Prepared { model, time, hash, files })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use fptgen_sim::weights;

    use super::*;
    use fptgen_generator::design::gen_info;

    /// The tiny example: 2 inputs, 2 outputs, T = 6 trainable parameters,
    /// M = 4, 5 ns clock, antithetic fitness.
    fn tiny() -> (Model, Params) {
        let yaml = include_str!("../../../examples/tiny/model.yaml");
        let model = fptgen_sim::model::parse(yaml, Path::new("tiny.yaml")).expect("valid model");
        let params = weights::random(&model, 3);
        (model, params)
    }

    fn point(n: usize, p: usize) -> Result<Prepared, SweepError> {
        let (model, params) = tiny();
        prepare(&model, &params, n, p, SynthScope::Design, "Yosys test", &gen_info(&model))
    }

    #[test]
    fn blocks_beyond_the_trainable_count_build_the_same_design() {
        let (a, b) = (point(2, 6).expect("P 6"), point(2, 8).expect("P 8"));
        assert_eq!(a.hash, b.hash, "P 6 and P 8 are both the 6-block design of T = 6");
        assert_eq!((a.time.blocks_built, b.time.blocks_built), (6, 6));
        assert_ne!(a.hash, point(4, 6).expect("N 4").hash, "N changes the design");
        assert_ne!(a.hash, point(2, 3).expect("P 3").hash, "P below T changes the design");
    }

    #[test]
    fn the_design_is_what_yosys_reads() {
        let p = point(2, 2).expect("point");
        assert!(!p.files.is_empty());
        for f in &p.files {
            let top = f.path.components().next().expect("a path").as_os_str().to_string_lossy().into_owned();
            assert!(["rtl", "mem", "synth"].contains(&top.as_str()), "{}", f.path.display());
        }
        assert!(p.files.iter().any(|f| f.path == Path::new("synth/synth.ys")));
        assert_eq!(p.model.training.map(|t| (t.population, t.blocks)), Some((2, 2)));
    }

    #[test]
    fn the_schedule_has_ceil_t_over_p_groups() {
        // T = 6: P 4 makes groups of 4 and 2, P 6 one group.
        let p = point(4, 4).expect("point");
        assert_eq!((p.time.groups, p.time.blocks_built, p.time.passes_per_image), (2, 4, 8));
        let p = point(2, 6).expect("point");
        assert_eq!((p.time.groups, p.time.blocks_built, p.time.passes_per_image), (1, 6, 2));
        // 5 ns per cycle; per image: M = 4.
        assert!((p.time.iteration_us - p.time.cycles_per_iteration as f64 * 0.005).abs() < 1e-9);
        assert!((p.time.us_per_image - p.time.iteration_us / 4.0).abs() < 1e-12);
    }

    #[test]
    fn an_invalid_training_section_is_a_configuration_error() {
        let e = point(3, 2).expect_err("odd N with antithetic fitness");
        assert_eq!(e.to_string(), "population is 3; fitness antithetic needs an even population");
        let (mut model, params) = tiny();
        model.training = None;
        let e = prepare(&model, &params, 2, 2, SynthScope::Design, "y", &gen_info(&model)).expect_err("no section");
        assert_eq!(e.to_string(), "no training section");
    }
}
