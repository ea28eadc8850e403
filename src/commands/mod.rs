//! One module per subcommand.

pub mod check;
pub mod cosim;
pub mod export;
pub mod generate;
pub mod implement;
pub mod import;
pub mod init_weights;
pub mod simulate;
pub mod sweep;
pub mod sweep_merge;
pub mod sweep_run;
pub mod synth;
pub mod train;
pub mod train_distill;
pub mod train_es;
pub mod train_sgm;

use std::path::{Path, PathBuf};

use fptgen_sim::model::{Model, Rule};
use fptgen_sim::weights::{self, Conversion, Params};

/// Command-line replacements for a model's `training:` settings, for
/// sweeping one design over several block counts or populations.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TrainingOverrides {
    /// Replace the `training:` section's `blocks` (P).
    #[arg(long, value_name = "P", value_parser = crate::args::count::<usize>(1, crate::args::MAX_DIM), allow_negative_numbers = true)]
    pub blocks: Option<usize>,
    /// Replace the `training:` section's `population` (N).
    #[arg(long, value_name = "N", value_parser = crate::args::count::<usize>(1, crate::args::MAX_DIM), allow_negative_numbers = true)]
    pub population: Option<usize>,
    /// Replace the `training:` section's `buffer` (M, samples per evaluation).
    #[arg(long, value_name = "M", value_parser = crate::args::count::<usize>(1, crate::args::MAX_DIM), allow_negative_numbers = true)]
    pub buffer: Option<usize>,
    /// Replace the `training:` section's `rule` (es, dfa, drtp or sgm; the
    /// feedback rules train dense, conv2d and dense_int8 layers; an lr_shift the model does
    /// not give is the rule's automatic one, as are ES's automatic steps
    /// with --population and --buffer).
    #[arg(long, value_name = "RULE", value_parser = parse_rule)]
    pub rule: Option<Rule>,
    /// Replace the `training:` section's `sgm` (the synthetic-gradient
    /// modules of rule sgm, written by `fptgen train --sgm`).
    #[arg(long, value_name = "FILE")]
    pub sgm: Option<std::path::PathBuf>,
}

/// The AXI wrapper's options (`generate --axi`, `cosim --axi`).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct AxiArgs {
    /// Also generate the AXI wrapper rtl/<name>_axi.v (AXI4-Stream data,
    /// AXI4-Lite registers and weights, the sample-load stream with a
    /// trainer), its C driver and register map in driver/, and
    /// vivado/package_ip.tcl; with cosim, co-simulate through it.
    #[arg(long)]
    pub axi: bool,
    /// TDATA bits of the AXI4-Stream data ports (a multiple of 8 up to
    /// 1024): a beat of the design's stream goes as ceil(bits / W)
    /// transfers. Default: a beat padded to bytes (at most 1024 bits).
    #[arg(long, value_name = "W", requires = "axi", value_parser = crate::args::count::<usize>(0, 1 << 20), allow_negative_numbers = true)]
    pub axi_width: Option<usize>,
    /// m_axis TLAST on the last transfer of every N-th output vector.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "axi", value_parser = crate::args::count::<u32>(1, u64::from(u32::MAX)), allow_negative_numbers = true)]
    pub axi_batch: u32,
}

impl AxiArgs {
    /// The options, when --axi is given.
    pub fn options(&self) -> Option<fptgen_generator::axi::AxiOptions> {
        self.axi.then_some(fptgen_generator::axi::AxiOptions { width: self.axi_width, batch: self.axi_batch })
    }
}

/// `es`, `dfa`, `drtp` or `sgm`.
fn parse_rule(s: &str) -> Result<Rule, String> {
    [Rule::Es, Rule::Dfa, Rule::Drtp, Rule::Sgm].into_iter().find(|r| r.name() == s).ok_or_else(|| format!("expected es, dfa, drtp or sgm, not {s:?}"))
}

impl TrainingOverrides {
    /// The replacements, as the simulator's [`TrainingOverride`].
    ///
    /// [`TrainingOverride`]: fptgen_sim::train::TrainingOverride
    pub fn to_override(&self) -> fptgen_sim::train::TrainingOverride {
        fptgen_sim::train::TrainingOverride {
            blocks: self.blocks,
            population: self.population,
            buffer: self.buffer,
            rule: self.rule,
            sgm: self.sgm.clone(),
        }
    }

    /// Applies the replacements to `model` ([`TrainingOverride::apply`]).
    ///
    /// [`TrainingOverride::apply`]: fptgen_sim::train::TrainingOverride::apply
    pub fn apply(&self, model: &mut Model) -> anyhow::Result<()> {
        Ok(self.to_override().apply(model)?)
    }
}

/// Loads a model file and its weights archive.
pub fn load(model: &Path, quantize: bool) -> anyhow::Result<(Model, Params)> {
    load_with(model, None, quantize)
}

/// Loads a model file and the weights of `weights` (an archive checked
/// against the model's tensors as the model's own is), or of the archive
/// the model names.
pub fn load_with(model: &Path, weights: Option<&Path>, quantize: bool) -> anyhow::Result<(Model, Params)> {
    let model = fptgen_sim::model::load(model)?;
    let conv = if quantize { Conversion::Quantize } else { Conversion::Exact };
    let params = match weights {
        Some(w) => weights::load_from(&model, w, conv)?,
        None => weights::load(&model, conv)?,
    };
    Ok((model, params))
}

/// Checks an `--iterations` value: 1 to 2^32 - 1, as the model file's.
pub fn check_iterations(k: u64) -> anyhow::Result<()> {
    if k == 0 || k > u64::from(u32::MAX) {
        anyhow::bail!("--iterations is {k}; it must be between 1 and {}", u32::MAX);
    }
    Ok(())
}

/// Where a command generates its design: `out`, or `<name>` in a fresh
/// temporary directory, which lives as long as the returned guard.
pub fn design_dir(out: Option<&Path>, name: &str) -> anyhow::Result<(PathBuf, Option<tempfile::TempDir>)> {
    use anyhow::Context;
    match out {
        Some(d) => Ok((d.to_path_buf(), None)),
        None => {
            let tmp = tempfile::tempdir().context("creating a temporary directory")?;
            Ok((tmp.path().join(name), Some(tmp)))
        }
    }
}
