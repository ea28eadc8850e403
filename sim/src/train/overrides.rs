//! Replacing a model's `training:` settings from outside its file (for
//! sweeping one design over block counts, populations, buffers or rules:
//! the CLI's `--blocks`, `--population`, `--buffer`, `--rule` and `--sgm`),
//! checked as the loader checks the section.

use std::path::PathBuf;

use crate::error::ModelError;
use crate::model::{Model, Rule};

use super::feedback::feedback_layers;
use super::steps::StepBasis;

/// Replacements for a model's training settings; `None` keeps the file's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrainingOverride {
    /// The block count P.
    pub blocks: Option<usize>,
    /// The population N.
    pub population: Option<usize>,
    /// The buffer M (samples per evaluation).
    pub buffer: Option<usize>,
    /// The rule.
    pub rule: Option<Rule>,
    /// The synthetic-gradient modules' archive of rule sgm.
    pub sgm: Option<PathBuf>,
}

impl TrainingOverride {
    /// True if it replaces nothing.
    pub fn is_empty(&self) -> bool {
        *self == TrainingOverride::default()
    }

    /// Applies the replacements to `model`: steps the model file did not
    /// give follow the new rule, N and M (as `auto` does), and the result
    /// is checked as a loaded section is. An error (about the model file)
    /// if there is something to replace but no `training:` section, if
    /// `sgm` is given for another rule, or if the section is then invalid.
    pub fn apply(&self, model: &mut Model) -> Result<(), ModelError> {
        if self.is_empty() {
            return Ok(());
        }
        let whole = |m: &Model, msg: String| ModelError::whole(&m.source, msg);
        let basis = StepBasis::of(model);
        let Some(rule) = model.training.as_ref().map(|t| self.rule.unwrap_or(t.rule)) else {
            return Err(whole(model, "--blocks, --population, --buffer, --rule and --sgm need a `training:` section in the model".into()));
        };
        if let Some(p) = &self.sgm {
            if rule != Rule::Sgm {
                return Err(whole(model, format!("--sgm names the modules of rule sgm, but the rule is {} (add --rule sgm)", rule.name())));
            }
            model.sgm_path = Some(p.clone());
        }
        let Some(t) = model.training.as_mut() else { return Ok(()) };
        if let Some(r) = self.rule {
            t.rule = r;
        }
        if let Some(p) = self.blocks {
            t.blocks = p;
        }
        if let Some(n) = self.population {
            t.population = n;
        }
        if let Some(m) = self.buffer {
            t.buffer = m;
        }
        *t = t.resolve(basis.as_ref());
        if let Err(e) = t.check() {
            return Err(whole(model, format!("with --blocks/--population/--buffer: {e}")));
        }
        if let (Some(r), Some(t)) = (self.rule, &model.training) {
            if r != Rule::Es {
                if let Err(e) = feedback_layers(model, t) {
                    return Err(whole(model, format!("with --rule {}: {e}", r.name())));
                }
            }
        }
        Ok(())
    }
}
