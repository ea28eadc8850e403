//! Reading and validating a model file.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_saphyr::{Location, Spanned};

use super::schema::{
    InterfaceFile, DistributionFile, EvaluationFile, FitnessFile, InputsFile, LayerFile, LossFile, LossQuantizationFile, ModelFile, RuleFile, ShiftFile, StepRoundingFile, TrainingFile,
};
use super::{
    Distribution, Evaluation, Fitness, Gather, Interface, Layer, LayerOp, LfsrWidth, Loss, LossQuantization, Model, Rule, Source, StepRounding, Training,
    DEFAULT_CLOCK_PERIOD_NS, DEFAULT_MAX_CHANNELS, DEFAULT_PART, MAX_DIM,
};
use crate::error::{Error, ModelError, Pos};
use crate::layers::{add, file_types, LayerInput, REWRITES};
use crate::fixed::Format;

/// Reads and validates the model file at `path`.
///
/// The weights path in the file is resolved relative to the file's directory.
pub fn load(path: &Path) -> Result<Model, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    Ok(parse(&text, path)?)
}

/// Validates model-file `text`, reporting errors against `path`.
pub fn parse(text: &str, path: &Path) -> Result<Model, ModelError> {
    let file: ModelFile = serde_saphyr::from_str(text).map_err(|e| yaml_error(path, &e))?;
    Checker { text, path, target_ii: std::cell::Cell::new(None) }.model(file)
}

/// Converts a YAML/serde error into a [`ModelError`] with its position.
fn yaml_error(path: &Path, err: &serde_saphyr::Error) -> ModelError {
    let inner = err.without_snippet();
    let message = strip_location_suffix(&inner.to_string());
    match err.location() {
        Some(loc) if loc.line() > 0 => ModelError::at(path, pos(&loc), message),
        _ => ModelError::whole(path, message),
    }
}

/// serde-saphyr appends " at line X, column Y" to plain messages; we print the
/// position in front, compiler style, so drop the suffix.
fn strip_location_suffix(msg: &str) -> String {
    let msg = msg.trim();
    match msg.rfind(" at line ") {
        Some(i) if msg[i..].contains("column") => msg[..i].trim_end().to_string(),
        _ => msg.to_string(),
    }
}

fn pos(loc: &Location) -> Pos {
    Pos { line: loc.line(), column: loc.column() }
}

/// Turns the model file's values into checked ones, with errors at their
/// positions; layer kinds use it to read their own fields.
pub(crate) struct Checker<'a> {
    text: &'a str,
    path: &'a Path,
    /// The model's `target_ii` (read before the layers).
    target_ii: std::cell::Cell<Option<u64>>,
}

impl Checker<'_> {
    /// An error at the value `at`.
    pub(crate) fn err<T>(&self, at: &Spanned<T>, message: impl Into<String>) -> ModelError {
        self.err_at(&at.referenced, message)
    }

    /// An error at a position of the file.
    pub(crate) fn err_at(&self, at: &Location, message: impl Into<String>) -> ModelError {
        ModelError::at(self.path, pos(at), message)
    }

    /// The directory of the model file (what its paths are relative to).
    pub(crate) fn dir(&self) -> PathBuf {
        self.path.parent().map(Path::to_path_buf).unwrap_or_default()
    }

    /// Position of the character `offset` bytes into the scalar at `at`,
    /// skipping an opening quote.
    fn pos_in_scalar(&self, at: &Spanned<String>, offset: usize) -> Pos {
        let base = pos(&at.referenced);
        let quoted = self
            .text
            .lines()
            .nth(base.line.saturating_sub(1) as usize)
            .and_then(|l| l.chars().nth(base.column.saturating_sub(1) as usize))
            .is_some_and(|c| c == '"' || c == '\'');
        let before = at.value.get(..offset).map(|s| s.chars().count()).unwrap_or(0) as u64;
        Pos { line: base.line, column: base.column + u64::from(quoted) + before }
    }

    /// A format string, with errors pointing into it.
    pub(crate) fn format(&self, s: &Spanned<String>, what: &str) -> Result<Format, ModelError> {
        s.value.parse::<Format>().map_err(|e| {
            ModelError::at(
                self.path,
                self.pos_in_scalar(s, e.offset()),
                format!("bad {what} format '{}': {e}", s.value),
            )
        })
    }

    fn identifier(&self, s: &Spanned<String>, what: &str) -> Result<String, ModelError> {
        let v = &s.value;
        let mut chars = v.chars();
        let ok_start = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        let ok_rest = chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok_start || !ok_rest || v.len() > 64 {
            return Err(self.err(
                s,
                format!(
                    "{what} '{v}' is not usable as a Verilog identifier: use 1 to 64 characters \
                     from [A-Za-z0-9_], not starting with a digit"
                ),
            ));
        }
        if VERILOG_KEYWORDS.contains(&v.as_str()) {
            return Err(self.err(s, format!("{what} '{v}' is a Verilog keyword")));
        }
        Ok(v.clone())
    }

    /// A dimension: 1 to [`MAX_DIM`].
    pub(crate) fn dim(&self, s: &Spanned<u64>, what: &str) -> Result<usize, ModelError> {
        if s.value == 0 || s.value > MAX_DIM as u64 {
            return Err(self.err(s, format!("{what} is {}; it must be between 1 and {MAX_DIM}", s.value)));
        }
        Ok(s.value as usize)
    }

    fn model(&self, f: ModelFile) -> Result<Model, ModelError> {
        let name = self.identifier(&f.name, "network name")?;
        if let Some(why) = reserved_network_name(&name) {
            return Err(self.err(&f.name, format!("network name '{name}' is reserved: {why}")));
        }
        let part = match &f.part {
            None => DEFAULT_PART.to_string(),
            Some(p) => {
                let v = p.value.trim();
                if v.is_empty() || v.contains(char::is_whitespace) {
                    return Err(self.err(p, format!("part '{}' is not a part number", p.value)));
                }
                v.to_string()
            }
        };
        let clock_period_ns = match &f.clock_period_ns {
            None => DEFAULT_CLOCK_PERIOD_NS,
            Some(c) if c.value.is_finite() && c.value > 0.0 => c.value,
            Some(c) => {
                return Err(self.err(c, format!("clock_period_ns is {}; it must be a positive number", c.value)))
            }
        };
        let target_ii = match &f.target_ii {
            None => None,
            Some(t) if t.value >= 1 && t.value <= MAX_DIM as u64 * MAX_DIM as u64 => Some(t.value),
            Some(t) => return Err(self.err(t, format!("target_ii is {}; it must be a positive number of cycles", t.value))),
        };
        self.target_ii.set(target_ii);
        if f.input.shape.value.is_empty() {
            return Err(self.err(&f.input.shape, "input shape is empty; give at least one dimension"));
        }
        let mut input_shape = Vec::new();
        for d in &f.input.shape.value {
            input_shape.push(self.dim(d, "input dimension")?);
        }
        let input_len: usize = input_shape.iter().product();
        if input_len > MAX_DIM {
            return Err(self.err(&f.input.shape, format!("input has {input_len} values; at most {MAX_DIM} are supported")));
        }
        let input_format = self.format(&f.input.format, "input")?;
        if f.weights.value.trim().is_empty() {
            return Err(self.err(&f.weights, "weights path is empty"));
        }
        let dir = self.path.parent().map(Path::to_path_buf).unwrap_or_default();
        let weights_path: PathBuf = dir.join(&f.weights.value);

        let interface = match &f.interface {
            None => None,
            Some(i) => Some(self.interface(i, &dir)?),
        };
        if f.layers.value.is_empty() {
            return Err(self.err(&f.layers, "the model has no layers"));
        }
        let mut layers: Vec<Layer> = Vec::new();
        let mut names = HashSet::new();
        // Every layer's position by name, for messages about forward references.
        let mut positions: HashMap<&str, usize> = HashMap::new();
        for (i, lf) in f.layers.value.iter().enumerate() {
            positions.entry(lf.name.value.as_str()).or_insert(i);
        }
        let max_channels = self.count(&f.max_channels, "max_channels", 1, MAX_DIM as u64, DEFAULT_MAX_CHANNELS as u64)? as usize;
        let mut index: HashMap<String, usize> = HashMap::new();
        // Per layer, its entry in the file (a split layer's parts share it).
        let mut entry_of: Vec<usize> = Vec::new();
        for (i, lf) in f.layers.value.iter().enumerate() {
            let sources = self.sources(lf, i, layers.len(), &index, &positions)?;
            let shape_of = |s: Source| match s {
                Source::Input => input_shape.clone(),
                Source::Layer(j) => layers[j].kind().output_shape(),
            };
            let format_of = |s: Source| match s {
                Source::Input => input_format,
                Source::Layer(j) => layers[j].kind().output_format(),
            };
            let describe = |s: Source| match s {
                Source::Input => "the network input".to_string(),
                Source::Layer(j) if j + 1 == layers.len() => format!("the previous layer '{}'", layers[j].name),
                Source::Layer(j) => format!("layer '{}'", layers[j].name),
            };
            let label = |s: Source| match s {
                Source::Input => "input".to_string(),
                Source::Layer(j) => layers[j].name.clone(),
            };
            // The int8 quantization of what feeds the layer (one source only).
            let feed = match sources.as_slice() {
                [Source::Input] => Some(interface.as_ref().map(|i| i.quantization)),
                [Source::Layer(j)] => layers[*j].kind().output_quantization().map(Some),
                _ => None,
            };
            let parts: Vec<Vec<usize>> = sources.iter().map(|&s| shape_of(s)).collect();
            let format = format_of(sources[0]);
            let lname = &lf.name.value;
            if let Some(k) = sources.iter().position(|&s| format_of(s) != format) {
                return Err(self.inputs_err(
                    lf,
                    format!(
                        "layer '{lname}' gathers inputs of different formats: '{}' gives {format} but '{}' gives {}; \
                         the inputs of a layer must have the same format",
                        label(sources[0]),
                        label(sources[k]),
                        format_of(sources[k])
                    ),
                ));
            }
            let (shape, gather, from) = if let [one] = sources.as_slice() {
                let len = parts[0].iter().product();
                (parts[0].clone(), Gather::single(len), describe(*one))
            } else {
                let labels: Vec<String> = sources.iter().map(|&s| format!("'{}'", label(s))).collect();
                let from = format!("the gather of {} and {}", labels[..labels.len() - 1].join(", "), labels[labels.len() - 1]);
                let image = parts[0].len() == 3;
                if let Some(k) = parts.iter().position(|p| (p.len() == 3) != image) {
                    let (im, vec) = if image { (0, k) } else { (k, 0) };
                    return Err(self.inputs_err(
                        lf,
                        format!(
                            "layer '{lname}' gathers an image ('{}', {:?}) and a vector ('{}', {:?}); its inputs must be all images or all vectors",
                            label(sources[im]),
                            parts[im],
                            label(sources[vec]),
                            parts[vec]
                        ),
                    ));
                }
                if image {
                    if let Some(k) = parts.iter().position(|p| p[..2] != parts[0][..2]) {
                        return Err(self.inputs_err(
                            lf,
                            format!(
                                "layer '{lname}' gathers images of different sizes: '{}' is {}x{} but '{}' is {}x{}; \
                                 gathered images must have the same height and width",
                                label(sources[0]),
                                parts[0][0],
                                parts[0][1],
                                label(sources[k]),
                                parts[k][0],
                                parts[k][1]
                            ),
                        ));
                    }
                    let widths: Vec<usize> = parts.iter().map(|p| p[2]).collect();
                    let c = widths.iter().sum();
                    (vec![parts[0][0], parts[0][1], c], Gather { widths, pixels: parts[0][0] * parts[0][1] }, from)
                } else {
                    let widths: Vec<usize> = parts.iter().map(|p| p.iter().product()).collect();
                    (vec![widths.iter().sum()], Gather { widths, pixels: 1 }, from)
                }
            };
            if gather.len() > MAX_DIM {
                return Err(self.inputs_err(lf, format!("layer '{lname}' gathers {} values; at most {MAX_DIM} are supported", gather.len())));
            }
            // int8 codes are not ap_fixed values: only int8 layers read them.
            if !INT8_KINDS.contains(&lf.kind.value.as_str()) {
                if let Some(Source::Layer(j)) = sources.iter().find(|s| matches!(s, Source::Layer(j) if layers[*j].kind().output_quantization().is_some())) {
                    return Err(self.inputs_err(
                        lf,
                        format!(
                            "layer '{lname}' is {} layer but '{}' outputs affine int8 values (codes with a scale and zero point), \
                             which only int8 layers (dense_int8, requantize) take; the network may end in an int8 layer",
                            crate::layers::a_kind(&lf.kind.value),
                            layers[*j].name
                        ),
                    ));
                }
            }
            let mut layer = self.layer(lf, &shape, &parts, &from, format, feed)?;
            // A parameter tensor beyond the budget (MAX_TENSOR_VALUES) is
            // refused here, before fptgen draws, reads or simulates it.
            for t in layer.kind().tensors() {
                let values = t.shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64));
                if values.is_none_or(|n| n > super::MAX_TENSOR_VALUES) {
                    return Err(self.err(
                        &lf.kind,
                        format!(
                            "layer '{}' has a tensor '{}' of shape {:?} ({} values); at most {} are supported (fptgen's budget for one tensor)",
                            lf.name.value,
                            t.key,
                            t.shape,
                            values.map_or("more than 2^64".to_string(), |n| n.to_string()),
                            super::MAX_TENSOR_VALUES
                        ),
                    ));
                }
            }
            layer.inputs = sources;
            layer.gather = gather;
            if !names.insert(layer.name.clone()) {
                return Err(self.err(&lf.name, format!("layer name '{}' is used twice", layer.name)));
            }
            if layer.name == name {
                return Err(self.err(&lf.name, format!("layer name '{}' is the network's name; the top-level module needs it", layer.name)));
            }
            let mut split = self.split(lf, layer, max_channels, layers.len())?;
            let last = split.len() - 1;
            for l in &mut split[..last] {
                l.split_from = Some(lf.name.value.clone());
            }
            for l in &split[..split.len() - 1] {
                if !names.insert(l.name.clone()) || l.name == name {
                    return Err(self.err(
                        &lf.name,
                        format!("layer '{}' is split into parts named {}_part<k> (max_channels), but '{}' is already a name", lf.name.value, lf.name.value, l.name),
                    ));
                }
            }
            index.insert(lf.name.value.clone(), layers.len() + split.len() - 1);
            entry_of.extend(std::iter::repeat_n(i, split.len()));
            layers.extend(split);
        }
        let mut used = vec![false; layers.len()];
        for l in &layers {
            for s in &l.inputs {
                if let Source::Layer(j) = *s {
                    used[j] = true;
                }
            }
        }
        if let Some(j) = used.iter().take(layers.len() - 1).position(|u| !u) {
            return Err(self.err(
                &f.layers.value[entry_of[j]].name,
                format!(
                    "the output of layer '{}' is used by no later layer (a dead branch): every layer but the last \
                     must feed another, and the network's output is the last layer's",
                    layers[j].name
                ),
            ));
        }
        let training = match &f.training {
            None => None,
            Some(t) => {
                let trainable: u64 =
                    layers.iter().flat_map(|l| l.kind().tensors()).filter(|t| t.trainable).map(|t| t.len() as u64).sum();
                let training = self.training(t, trainable)?;
                // The automatic steps follow the formats, N, M, ...
                let training = training.resolve(crate::train::steps::StepBasis::of_layers(&layers).as_ref());
                if training.rule != Rule::Es {
                    // The feedback rules train the layers whose update is
                    // an outer product of deltas and inputs.
                    if let Some(l) = layers.iter().find(|l| l.kind().tensors().iter().any(|t| t.trainable) && !crate::train::feedback::trains(&l.op)) {
                        let at = t.value.rule.as_ref().expect("a rule other than es was written");
                        return Err(self.err(
                            at,
                            format!(
                                "rule {} trains dense, conv2d and dense_int8 layers only; layer '{}' is a trainable {} layer (use rule es)",
                                training.rule.name(),
                                l.name,
                                l.kind().type_name()
                            ),
                        ));
                    }
                }
                Some(training)
            }
        };
        let sgm_path = self.sgm_path(&f, training.as_ref(), &layers, &dir)?;
        let model = Model {
            name,
            part,
            clock_period_ns,
            target_ii,
            input_shape,
            input_format,
            weights_path,
            source: self.path.to_path_buf(),
            sgm_path,
            rule_at: f.training.as_ref().and_then(|t| t.value.rule.as_ref()).map(|r| pos(&r.referenced)),
            max_channels,
            layers,
            training,
            interface,
        };
        // evaluation: difference only where the hardware can.
        if let Some(e) = f.training.as_ref().and_then(|t| t.value.evaluation.as_ref()) {
            if e.value == EvaluationFile::Difference {
                if let Err(why) = crate::train::difference::eligibility(&model) {
                    return Err(self.err(e, format!("evaluation difference: {why}")));
                }
            }
        }
        Ok(model)
    }

    /// `training: sgm:`: only with `rule: sgm`, and needed by it when a
    /// trainable layer is not the output layer (the output layer's `g` is
    /// the error itself).
    fn sgm_path(&self, f: &ModelFile, training: Option<&Training>, layers: &[Layer], dir: &Path) -> Result<Option<PathBuf>, ModelError> {
        let Some(t) = &f.training else { return Ok(None) };
        let rule = training.map(|t| t.rule);
        match (&t.value.sgm, rule) {
            (Some(s), Some(Rule::Sgm)) => {
                if s.value.trim().is_empty() {
                    return Err(self.err(s, "sgm path is empty"));
                }
                Ok(Some(dir.join(&s.value)))
            }
            (Some(s), _) => Err(self.err(
                s,
                format!("`sgm:` names the modules of rule sgm, but the rule is {}", rule.unwrap_or_default().name()),
            )),
            (None, Some(Rule::Sgm)) => {
                let last = layers.len().saturating_sub(1);
                match layers.iter().take(last).find(|l| l.kind().tensors().iter().any(|t| t.trainable)) {
                    Some(l) => Err(self.err(
                        t.value.rule.as_ref().expect("rule sgm was written"),
                        format!(
                            "rule sgm needs pretrained synthetic-gradient modules for the hidden trainable layer '{}': \
                             add `sgm: FILE` to the training section and write FILE with `fptgen train --sgm`",
                            l.name
                        ),
                    )),
                    None => Ok(None),
                }
            }
            (None, _) => Ok(None),
        }
    }

    /// The `interface:` section: `scale` and `zero_point`, or `tflite` and
    /// `tensor` (an int8 tensor of a TFLite file, relative to `dir`).
    fn interface(&self, i: &Spanned<InterfaceFile>, dir: &Path) -> Result<Interface, ModelError> {
        let v = &i.value;
        if let Some(t) = &v.trainable {
            return Err(self.err(
                t,
                "the interface's scale and zero point are fixed by the frozen prefix, never trained; remove `trainable`",
            ));
        }
        match (&v.scale, &v.zero_point, &v.tflite, &v.tensor) {
            (Some(s), Some(z), None, None) => {
                let scale = crate::layers::dense_int8::check_scale(s.value).map_err(|m| self.err(s, format!("interface {m}")))?;
                let q = crate::layers::Affine::new(scale, z.value).map_err(|m| self.err(z, format!("interface {m}")))?;
                Ok(Interface { quantization: q, from: "the model file".into() })
            }
            (None, None, Some(file), Some(tensor)) => {
                let path = dir.join(&file.value);
                let model = crate::int8::tflite::TfliteModel::open(&path).map_err(|e| self.err(file, format!("interface: {e}")))?;
                let (scale, z) = model.int8_quantization(&tensor.value).map_err(|e| self.err(tensor, format!("interface: {e}")))?;
                let q = crate::layers::Affine::new(scale, z).map_err(|m| self.err(tensor, format!("interface: {m}")))?;
                Ok(Interface { quantization: q, from: format!("tensor '{}' of {}", tensor.value, file.value) })
            }
            _ => Err(self.err(
                i,
                "the interface takes `scale` and `zero_point`, or `tflite` (a .tflite file) and `tensor` (the name of its int8 tensor)",
            )),
        }
    }

    /// A count between `min` and `max`, or `default` when absent.
    fn count(&self, v: &Option<Spanned<u64>>, what: &str, min: u64, max: u64, default: u64) -> Result<u64, ModelError> {
        match v {
            None => Ok(default),
            Some(s) if s.value >= min && s.value <= max => Ok(s.value),
            Some(s) => Err(self.err(s, format!("{what} is {}; it must be between {min} and {max}", s.value))),
        }
    }

    /// An error about the `training:` section as a whole, at its key (a
    /// top-level key starts a line) or, failing that, at its first field.
    fn section_err(&self, t: &Spanned<TrainingFile>, message: impl Into<String>) -> ModelError {
        let key_line = self
            .text
            .lines()
            .position(|l| l.strip_prefix("training").is_some_and(|rest| rest.trim_start().starts_with(':')));
        match key_line {
            Some(i) => ModelError::at(self.path, Pos { line: i as u64 + 1, column: 1 }, message),
            None => self.err(t, message),
        }
    }

    fn training(&self, t: &Spanned<TrainingFile>, trainable: u64) -> Result<Training, ModelError> {
        if trainable == 0 {
            return Err(self.section_err(
                t,
                "the model has a training section but no trainable parameters; \
                 mark some with `trainable: [weights, biases]` in a layer",
            ));
        }
        let f = &t.value;
        let d = Training::default();
        let dim = MAX_DIM as u64;
        let population = self.count(&f.population, "population", 1, dim, d.population as u64)? as usize;
        let iterations = self.count(&f.iterations, "iterations", 1, u64::from(u32::MAX), d.iterations)?;
        let blocks = self.count(&f.blocks, "blocks", 1, dim, d.blocks as u64)? as usize;
        let buffer = self.count(&f.buffer, "buffer", 1, dim, d.buffer as u64)? as usize;
        let max_shift = u64::from(Training::MAX_SHIFT);
        let perturb_shift = match &f.perturb_shift {
            None | Some(Spanned { value: ShiftFile::Auto, .. }) => None,
            Some(Spanned { value: ShiftFile::Value(v), .. }) if (0..=max_shift as i64).contains(v) => Some(*v as u32),
            Some(s @ Spanned { value: ShiftFile::Value(v), .. }) => {
                return Err(self.err(s, format!("perturb_shift is {v}; it must be between 0 and {max_shift} (or auto)")))
            }
        };
        let lr_shift = match &f.lr_shift {
            None | Some(Spanned { value: ShiftFile::Auto, .. }) => None,
            Some(Spanned { value: ShiftFile::Value(v), .. }) if v.unsigned_abs() <= max_shift => Some(*v as i32),
            Some(s @ Spanned { value: ShiftFile::Value(v), .. }) => {
                return Err(self.err(s, format!("lr_shift is {v}; it must be between -{max_shift} and {max_shift} (or auto)")))
            }
        };
        let mut noise = d.noise;
        if let Some(n) = &f.noise {
            if let Some(w) = &n.value.width {
                noise.width = LfsrWidth::from_bits(w.value).ok_or_else(|| {
                    self.err(w, format!("noise width is {}; it must be 8, 16 or 32 (bits of the LFSR)", w.value))
                })?;
            }
            if let Some(dist) = n.value.distribution {
                noise.distribution = match dist {
                    DistributionFile::Rademacher => Distribution::Rademacher,
                    DistributionFile::Uniform => Distribution::Uniform,
                };
            }
            let width = u64::from(noise.width.bits());
            noise.bits = self.count(&n.value.bits, "noise bits", 1, width, d.noise.bits.into()).map_err(|e| {
                ModelError { message: format!("{} (the noise width)", e.message), ..e }
            })? as u32;
        }
        let fitness = match f.fitness.as_ref().map(|s| s.value) {
            None => d.fitness,
            Some(FitnessFile::Antithetic) => Fitness::Antithetic,
            Some(FitnessFile::Baseline) => Fitness::Baseline,
            Some(FitnessFile::Plain) => Fitness::Plain,
            Some(FitnessFile::Ranks) => Fitness::Ranks,
        };
        if fitness.mirrored() && population % 2 == 1 {
            let msg = format!(
                "population is {population}; fitness {fitness} evaluates mirrored pairs (+e, -e), \
                 so the population must be even"
            );
            return Err(match (&f.population, &f.fitness) {
                (Some(p), _) => self.err(p, msg),
                (None, Some(fit)) => self.err(fit, msg),
                (None, None) => self.section_err(t, msg),
            });
        }
        let loss = match f.loss {
            None | Some(LossFile::Mae) => Loss::Mae,
        };
        let loss_quantization = match f.loss_quantization {
            None => d.loss_quantization,
            Some(LossQuantizationFile::Po2) => LossQuantization::Po2,
            Some(LossQuantizationFile::Exact) => LossQuantization::Exact,
        };
        let rule = match f.rule.as_ref().map(|r| r.value) {
            None | Some(RuleFile::Es) => Rule::Es,
            Some(RuleFile::Drtp) => Rule::Drtp,
            Some(RuleFile::Dfa) => Rule::Dfa,
            Some(RuleFile::Sgm) => Rule::Sgm,
        };
        let step_rounding = match &f.step_rounding {
            None => StepRounding::Auto,
            Some(s) => {
                let r = match s.value {
                    StepRoundingFile::Auto => StepRounding::Auto,
                    StepRoundingFile::Nearest => StepRounding::Nearest,
                    StepRoundingFile::Stochastic => StepRounding::Stochastic,
                };
                if rule == Rule::Es && r != StepRounding::Auto {
                    return Err(self.err(
                        s,
                        format!("step_rounding {} is for the feedback rules (drtp, dfa, sgm); ES rounds its updates to nearest", r.name()),
                    ));
                }
                r
            }
        };
        let evaluation = match &f.evaluation {
            None => Evaluation::Auto,
            Some(e) => {
                let v = match e.value {
                    EvaluationFile::Auto => Evaluation::Auto,
                    EvaluationFile::Full => Evaluation::Full,
                    EvaluationFile::Difference => Evaluation::Difference,
                };
                if rule != Rule::Es && v != Evaluation::Auto {
                    return Err(self.err(e, format!("evaluation {} is for ES; the feedback rules evaluate every sample once", v.name())));
                }
                v
            }
        };
        Ok(Training {
            evaluation,
            step_rounding,
            rule,
            population,
            iterations,
            blocks,
            buffer,
            noise,
            perturb_shift: perturb_shift.unwrap_or(d.perturb_shift),
            perturb_shift_auto: perturb_shift.is_none(),
            lr_shift: lr_shift.unwrap_or(d.lr_shift),
            lr_shift_auto: lr_shift.is_none(),
            loss,
            fitness,
            loss_quantization,
            seed: f.seed.unwrap_or(d.seed),
        })
    }

    /// An error at a layer's `inputs:` (at its `type` when it has none).
    fn inputs_err(&self, lf: &LayerFile, message: impl Into<String>) -> ModelError {
        match &lf.inputs {
            Some(i) => self.err(i, message),
            None => self.err(&lf.kind, message),
        }
    }

    /// What feeds entry `i` of the file (`lf`, layer `next` of the model):
    /// its `inputs:` names, checked
    /// against the earlier layers (`index`, by name) and all the layers
    /// (`positions`, for a forward reference); by default the previous
    /// layer, or the network input for the first.
    fn sources(
        &self,
        lf: &LayerFile,
        i: usize,
        next: usize,
        index: &HashMap<String, usize>,
        positions: &HashMap<&str, usize>,
    ) -> Result<Vec<Source>, ModelError> {
        // `next`: the index the layer will have in the model.
        let default = if next == 0 { Source::Input } else { Source::Layer(next - 1) };
        let Some(Spanned { value: InputsFile::Names(list), referenced: outer, .. }) = &lf.inputs else {
            return Ok(vec![default]);
        };
        let lname = &lf.name.value;
        if list.is_empty() {
            return Err(self.err_at(
                outer,
                format!("layer '{lname}' lists no inputs; name at least one earlier layer (or leave `inputs` out: the previous layer)"),
            ));
        }
        let mut out = Vec::with_capacity(list.len());
        for n in list {
            // A bare `inputs: name` has no position of its own.
            let at = if n.referenced.line() == 0 { outer } else { &n.referenced };
            let v = n.value.as_str();
            let s = if v == "input" {
                Source::Input
            } else if let Some(&j) = index.get(v) {
                Source::Layer(j)
            } else if v == lname.as_str() {
                return Err(self.err_at(at, format!("layer '{lname}' takes its own output; a layer's inputs must be earlier layers")));
            } else if let Some(&j) = positions.get(v) {
                return Err(self.err_at(
                    at,
                    format!(
                        "layer '{lname}' takes '{v}', which comes later (layer {} of the file, this is layer {}); \
                         a layer's inputs must be earlier layers: list the layers in topological order",
                        j + 1,
                        i + 1
                    ),
                ));
            } else {
                let mut known: Vec<&str> = index.keys().map(String::as_str).collect();
                known.sort_by_key(|k| index[*k]);
                known.insert(0, "input");
                return Err(self.err_at(
                    at,
                    format!("layer '{lname}' takes '{v}', but no earlier layer has that name; it can take {}", known.join(", ")),
                ));
            };
            if out.contains(&s) {
                return Err(self.err_at(at, format!("layer '{lname}' lists '{v}' twice in its inputs")));
            }
            out.push(s);
        }
        Ok(out)
    }

    /// `layer` (entry `lf`, to be layer `at` of the model), or the layers
    /// it is split into under the channel limit `max` ([`super::split`]).
    fn split(&self, lf: &LayerFile, layer: Layer, max: usize, at: usize) -> Result<Vec<Layer>, ModelError> {
        super::split::split(layer, max, at).map_err(|m| self.err(&lf.kind, m))
    }

    fn layer(
        &self,
        lf: &LayerFile,
        shape: &[usize],
        parts: &[Vec<usize>],
        from: &str,
        format: Format,
        feed: Option<Option<crate::layers::Affine>>,
    ) -> Result<Layer, ModelError> {
        let name = self.identifier(&lf.name, "layer name")?;
        if let Some((_, why)) = RESERVED_LAYER_NAMES.iter().find(|(r, _)| *r == name) {
            return Err(self.err(&lf.name, format!("layer name '{name}' is reserved: {why}")));
        }
        let input = LayerInput { c: self, lf, name: &name, shape, parts, from, format, feed };
        let mut lowered = None;
        let op = match (lf.kind.value.as_str(), LayerOp::read(&lf.kind.value, &input)) {
            (_, Some(op)) => op?,
            (add::TYPE, None) => {
                let (op, l) = add::lower(&input)?;
                lowered = Some(l);
                op
            }
            (other, None) => {
                let kinds: Vec<String> = file_types().map(|(k, what)| format!("{k} ({what})")).collect();
                let hint = REWRITES
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(other))
                    .map(|(_, r)| format!("; seed 004 rewrites it as {r}"))
                    .unwrap_or_default();
                return Err(self.err(
                    &lf.kind,
                    format!("layer type '{other}' is not in the core operator set{hint}; the types are {}", kinds.join(", ")),
                ));
            }
        };
        let output_len: usize = op.kind().output_shape().iter().product();
        if output_len == 0 || output_len > MAX_DIM {
            return Err(self.err(&lf.kind, format!("layer '{name}' outputs {output_len} values; it must output between 1 and {MAX_DIM}")));
        }
        let len = shape.iter().product();
        Ok(Layer { name, op, input_format: format, inputs: Vec::new(), gather: Gather::single(len), lowered, part_of: None, split_from: None })
    }

    /// A matrix-vector unit's folding `(pe, simd)` from the layer's `pe`
    /// and `simd` entries: each 1 (absent) to its dimension (`outputs`,
    /// `inputs`, named `names`), or `auto`, chosen for the model's
    /// `target_ii` by [`crate::layers::fold::choose`] with `repeats` vectors
    /// per input (a convolution's output pixels).
    pub(crate) fn fold_pair(
        &self,
        pe: &Option<Spanned<ShiftFile>>,
        simd: &Option<Spanned<ShiftFile>>,
        (outputs, inputs): (usize, usize),
        names: (&str, &str),
        repeats: usize,
    ) -> Result<(usize, usize), ModelError> {
        let one = |v: &Option<Spanned<ShiftFile>>, what: &str, dim: usize, dim_name: &str| -> Result<Option<usize>, ModelError> {
            match v {
                None => Ok(Some(1)),
                Some(Spanned { value: ShiftFile::Auto, .. }) => Ok(None),
                Some(Spanned { value: ShiftFile::Value(n), .. }) if *n >= 1 && *n as u64 <= dim as u64 => Ok(Some(*n as usize)),
                Some(s @ Spanned { value: ShiftFile::Value(n), .. }) => {
                    Err(self.err(s, format!("{what} is {n}; it must be between 1 and the layer's {dim} {dim_name}, or auto")))
                }
            }
        };
        let p = one(pe, "pe", outputs, names.0)?;
        let s = one(simd, "simd", inputs, names.1)?;
        if p.is_some() && s.is_some() {
            return Ok((p.unwrap_or(1), s.unwrap_or(1)));
        }
        let at = if p.is_none() { pe } else { simd };
        let Some(target) = self.target_ii.get() else {
            let at = at.as_ref().expect("an auto entry was written");
            return Err(self.err(at, "pe or simd `auto` needs the model's `target_ii` (cycles per input vector) at the top level"));
        };
        Ok(crate::layers::fold::choose(outputs, inputs, repeats, target, p, s))
    }
}

/// Why a network name cannot be used, if it cannot: the generated design's
/// module names (`<name>`, `<name>_<layer>`, `<name>_net`) must not meet the
/// library's (`fptgen_*`).
fn reserved_network_name(name: &str) -> Option<&'static str> {
    (name == LIBRARY_PREFIX || name.starts_with(&format!("{LIBRARY_PREFIX}_"))).then_some(
        "names starting with 'fptgen' belong to fptgen's RTL library (modules fptgen_*), \
         which the network's modules would collide with",
    )
}

/// The layer kinds that take affine int8 values (`crate::layers::dense_int8`).
const INT8_KINDS: &[&str] = &["dense_int8", "requantize"];

/// The prefix of the RTL library's module names.
pub const LIBRARY_PREFIX: &str = "fptgen";

/// Layer names that generated modules or signals already use, each with the
/// reason. A layer `L` of network `N` becomes the module `N_L`.
pub const RESERVED_LAYER_NAMES: &[(&str, &str)] =
    &[("net", "a trained network's layer chain is the module <network>_net and its wires are net_*")];

/// Verilog-2001 reserved words, which cannot name modules or signals.
const VERILOG_KEYWORDS: &[&str] = &[
    "always", "and", "assign", "automatic", "begin", "buf", "bufif0", "bufif1", "case", "casex",
    "casez", "cell", "cmos", "config", "deassign", "default", "defparam", "design", "disable",
    "edge", "else", "end", "endcase", "endconfig", "endfunction", "endgenerate", "endmodule",
    "endprimitive", "endspecify", "endtable", "endtask", "event", "for", "force", "forever",
    "fork", "function", "generate", "genvar", "highz0", "highz1", "if", "ifnone", "incdir",
    "include", "initial", "inout", "input", "instance", "integer", "join", "large", "liblist",
    "library", "localparam", "macromodule", "medium", "module", "nand", "negedge", "nmos", "nor",
    "noshowcancelled", "not", "notif0", "notif1", "or", "output", "parameter", "pmos", "posedge",
    "primitive", "pull0", "pull1", "pulldown", "pullup", "pulsestyle_onevent",
    "pulsestyle_ondetect", "rcmos", "real", "realtime", "reg", "release", "repeat", "rnmos",
    "rpmos", "rtran", "rtranif0", "rtranif1", "scalared", "showcancelled", "signed", "small",
    "specify", "specparam", "strong0", "strong1", "supply0", "supply1", "table", "task", "time",
    "tran", "tranif0", "tranif1", "tri", "tri0", "tri1", "triand", "trior", "trireg", "unsigned",
    "use", "uwire", "vectored", "wait", "wand", "weak0", "weak1", "while", "wire", "wor", "xnor",
    "xor", "logic", "bit", "byte", "int",
];
