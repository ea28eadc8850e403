//! A model's whole design on disk: planned ([`crate::plan`]), rendered
//! ([`crate::render`]) and written into an output directory
//! ([`crate::output`]), as `fptgen generate` writes it and `fptgen synth`
//! and `fptgen cosim` use it.

use std::path::Path;

use fptgen_sim::model::Model;
use fptgen_sim::weights::Params;

use crate::layers;
use crate::output::{self, OutputError};
use crate::plan::{plan, NetworkPlan};
use crate::render::GenInfo;
use crate::VERSION;

/// Why a design could not be written.
#[derive(Debug, thiserror::Error)]
pub enum DesignError {
    /// A template failed to render.
    #[error(transparent)]
    Render(#[from] askama::Error),
    /// The output directory could not be written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A layer's kind has no hardware yet.
    #[error("{file}: layer '{layer}' is a {kind} layer; fptgen generates hardware for {with_hardware} layers only so far (check, simulate, train and train-es take every layer kind)")]
    Unsupported {
        /// The model file.
        file: String,
        /// The layer.
        layer: String,
        /// Its kind.
        kind: &'static str,
        /// The kinds with hardware ([`crate::layers::KINDS`]), as a list.
        with_hardware: String,
    },
    /// A feedback rule on a model it cannot train (a model file's `rule:`
    /// line is checked at load; this catches a model built in code).
    #[error("{file}: {reason}")]
    Feedback {
        /// The model file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// AXI options that do not fit the design.
    #[error("{file}: {err}")]
    Axi {
        /// The model file.
        file: String,
        /// What does not fit.
        err: crate::axi::AxiError,
    },
    /// A training option the on-chip trainer does not implement yet.
    #[error("{file}: {what} has no hardware yet: {hint}")]
    NoHardware {
        /// The model file.
        file: String,
        /// The option, as the model file writes it.
        what: String,
        /// What the user can do instead.
        hint: &'static str,
    },
    /// The on-chip trainer does not take an image output yet.
    #[error("{file}: the network's output is an image ({shape}); the on-chip trainer takes networks whose output is a vector only so far (end the network with flatten and dense, generate it without its training: section, or train it with fptgen train-es)")]
    TrainerImages {
        /// The model file.
        file: String,
        /// The shape.
        shape: String,
    },
}

/// Refuses a graph that is not a chain (a layer with `inputs:` other than
/// the previous layer, a concat, a lowered add), a model with a layer kind
/// the generator cannot build yet ([`crate::layers::has_hardware`]), or a
/// trainer for image streams, or a training option without hardware
/// (`fitness: ranks`).
pub fn supported(model: &Model) -> Result<(), DesignError> {
    let file = model.source.display().to_string();
    if let Some(l) = model.layers.iter().find(|l| !layers::has_hardware(l)) {
        return Err(DesignError::Unsupported {
            file,
            layer: l.name.clone(),
            kind: l.kind().type_name(),
            with_hardware: layers::KINDS.join(", "),
        });
    }
    if let Some(t) = &model.training {
        if t.rule == fptgen_sim::model::Rule::Es && t.fitness == fptgen_sim::model::Fitness::Ranks {
            return Err(DesignError::NoHardware {
                file,
                what: "training: fitness: ranks".into(),
                hint: "fptgen train-es simulates it; generate the design with fitness antithetic, baseline or plain",
            });
        }
        if t.rule != fptgen_sim::model::Rule::Es {
            fptgen_sim::train::hardware::feedback_layers(model, t)
                .map_err(|e| DesignError::Feedback { file: file.clone(), reason: e.to_string() })?;
        }
        let output = model.layers.last().map(|l| l.kind().output_shape()).unwrap_or_default();
        if crate::plan::beats(&output) > 1 {
            return Err(DesignError::TrainerImages { file, shape: format!("{output:?}") });
        }
    }
    Ok(())
}

/// `report.md` of the design of `model` planned as `n`, rewritten with the
/// trainer's added area as `fptgen synth --trainer-only` measured it.
pub fn report_md_with_trainer_area(model: &Model, n: &NetworkPlan, area: crate::part::Resources) -> Result<crate::render::GeneratedFile, DesignError> {
    let n = NetworkPlan { trainer_area: Some(area), ..n.clone() };
    Ok(crate::render::report_md(&n, &gen_info(model))?)
}

/// What every file generated from `model` says about its origin: this
/// fptgen's version and the model file.
pub fn gen_info(model: &Model) -> GenInfo {
    GenInfo { version: VERSION, source: model.source.display().to_string() }
}

/// The hardware plan of `model` with `params`, and the parameters its
/// memories hold: batch norms that fold exactly into the layer before them
/// are folded ([`crate::fold`], listed in the plan's `folds`), the rest is
/// [`plan`]'s.
pub fn lower(model: &Model, params: &Params) -> (NetworkPlan, Params) {
    let (folded, fparams, notes) = crate::fold::fold(model, params);
    let mut n = plan(&folded);
    n.folds = notes;
    (n, fparams)
}

/// Under `rule: sgm`, reads the synthetic-gradient modules from the
/// model's `sgm_path` into the plan's trainer ([`crate::fb_plan::attach_sgm`]);
/// nothing to do otherwise.
pub fn load_sgm(model: &Model, n: &mut NetworkPlan) -> Result<(), DesignError> {
    let Some(fb) = n.feedback.as_mut().filter(|f| f.has_sgm()) else { return Ok(()) };
    let file = model.source.display().to_string();
    let path = model.sgm_path.as_ref().ok_or_else(|| DesignError::Feedback {
        file: file.clone(),
        reason: "rule sgm needs the synthetic-gradient modules of the hidden trainable layers: add `sgm: FILE` to the training section \
                 (write FILE with `fptgen train --sgm`)"
            .into(),
    })?;
    let sgm = fptgen_sim::train::hardware::load_sgm(model, path).map_err(|e| DesignError::Feedback { file: file.clone(), reason: e.to_string() })?;
    crate::fb_plan::attach_sgm(fb, &sgm, model).map_err(|reason| DesignError::Feedback { file, reason })
}

/// Plans, renders and writes the design of `model` with `params` into
/// `out` (all files or none; see [`output::write_dir`]); returns the plan.
/// Batch norms that fold exactly into the layer before them are folded
/// ([`crate::fold`]): the hardware computes the model's codes either way.
pub fn write_design(model: &Model, params: &Params, out: &Path) -> Result<NetworkPlan, DesignError> {
    write_design_with(model, params, out, None).map(|(n, _)| n)
}

/// The AXI wrapper's plan for `model` with `params` and `opts`, or the
/// error naming the option that does not fit (checked before anything is
/// written).
pub fn axi_plan(model: &Model, params: &Params, opts: &crate::axi::AxiOptions) -> Result<crate::axi::AxiPlan, DesignError> {
    supported(model)?;
    let (mut n, _) = lower(model, params);
    load_sgm(model, &mut n)?;
    crate::axi::AxiPlan::new(&n, opts).map_err(|err| DesignError::Axi { file: model.source.display().to_string(), err })
}

/// [`write_design`], with the AXI wrapper ([`crate::axi`]) when `axi` is
/// given: its options are checked before anything is written.
pub fn write_design_with(model: &Model, params: &Params, out: &Path, axi: Option<&crate::axi::AxiOptions>) -> Result<(NetworkPlan, Option<crate::axi::AxiPlan>), DesignError> {
    supported(model)?;
    let (mut n, fparams) = lower(model, params);
    load_sgm(model, &mut n)?;
    let a = match axi {
        Some(o) => Some(crate::axi::AxiPlan::new(&n, o).map_err(|err| DesignError::Axi { file: model.source.display().to_string(), err })?),
        None => None,
    };
    let gen = gen_info(model);
    let mut files = crate::render::render_with(&fparams, &n, &gen, a.as_ref())?;
    // The cocotb bench of the wrapper (with the simulator's answers), and
    // the FuseSoC core naming every file above.
    let bench = match &a {
        Some(a) => {
            files.extend(crate::cocotb::render(model, params, &n, a, &gen)?);
            let names = crate::cocotb::BenchNames::of(&n, a);
            Some(crate::fusesoc::BenchFiles { module: names.py.clone(), files: names.files() })
        }
        None => None,
    };
    let core = crate::fusesoc::plan(&n, &files, a.as_ref().map(|a| a.module.as_str()), bench);
    files.push(crate::fusesoc::render(&core, &gen)?);
    output::write_dir(out, output::DESIGN, &files)?;
    Ok((n, a))
}
