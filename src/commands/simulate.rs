//! `fptgen simulate`: bit-accurate inference on a batch.

use std::io::Write as _;
use std::path::Path;

use anyhow::bail;
use fptgen_sim::network::{CodeRows, Network, QuantizedRows, SimError};
use indicatif::{ProgressBar, ProgressStyle};
use fptgen_sim::tensor::{self, OutValues, Values};
use fptgen_sim::model::Model;
use fptgen_sim::TensorError;

use crate::Kind;

/// Runs the simulator on the inputs and prints or writes the outputs.
pub fn run(
    model: &Path,
    inputs: &Path,
    output: Option<&Path>,
    weights: Option<&Path>,
    input_kind: Kind,
    output_kind: Kind,
    quantize: bool,
) -> anyhow::Result<()> {
    let (model, params) = super::load_with(model, weights, quantize)?;
    // A float array is quantized block by block as it is read (never held
    // whole as doubles); any other array comes back whole.
    let mut rows = QuantizedRows::new(model.input_format);
    let streamed = tensor::read_npy_floats_with(inputs, |header, offset, xs| {
        if offset == 0 {
            batch_of(&model, inputs, &header.shape)?;
            if input_kind == Kind::Raw {
                return Err(float_for_raw(inputs, &header.dtype).into());
            }
        }
        rows.push(xs).map_err(|(i, m)| {
            TensorError { file: inputs.to_path_buf(), tensor: None, index: Some(tensor::unravel(offset + i, &header.shape)), message: m }.into()
        })
    })?;
    let (shape, dtype) = (&streamed.header.shape, &streamed.header.dtype);
    let batch = batch_of(&model, inputs, shape)?;
    let n_in = model.input_len();
    // The batch as one row-major matrix of input codes.
    let codes = match (streamed.values, input_kind) {
        (None, Kind::Float) => rows.finish(),
        (None, Kind::Raw) | (Some(Values::Float(_)), Kind::Raw) => bail!(float_for_raw(inputs, dtype)),
        (Some(Values::Int(v)), Kind::Raw) => CodeRows::narrowest(v),
        (Some(Values::Float(v)), Kind::Float) => CodeRows::quantize(model.input_format, &v).map_err(|(i, m)| TensorError {
            file: inputs.to_path_buf(),
            tensor: None,
            index: Some(tensor::unravel(i, shape)),
            message: m,
        })?,
        (Some(Values::Int(_)), Kind::Float) => bail!(TensorError::file(
            inputs,
            format!("has integer type {dtype}; pass --input-kind raw to read raw codes, or give float values")
        )),
    };
    debug_assert_eq!(codes.len(), batch * n_in);
    let net = Network::new(model, params)?;
    let fmt = net.model().output_format();
    let n_out = net.model().output_len();
    let flat = infer(&net, &codes, batch, n_in).map_err(|e| TensorError::file(inputs, e.to_string()))?;
    let outs: Vec<&[i128]> = flat.chunks(n_out.max(1)).collect();
    match output {
        Some(path) => {
            let values = match output_kind {
                Kind::Float => OutValues::F64(flat.iter().map(|&r| fmt.to_f64(r)).collect()),
                Kind::Raw => match flat.iter().map(|&r| i64::try_from(r)).collect::<Result<Vec<_>, _>>() {
                    Ok(v) => OutValues::I64(v),
                    Err(_) => OutValues::U64(flat.iter().map(|&r| r as u64).collect()),
                },
            };
            tensor::write_npy(path, &[outs.len(), n_out], &values)?;
            eprintln!("wrote {} ({} samples x {} outputs, {})", path.display(), outs.len(), n_out, fmt);
        }
        None => {
            let mut out = std::io::stdout().lock();
            for y in outs {
                let cells: Vec<String> = match output_kind {
                    Kind::Float => y.iter().map(|&r| fmt.to_f64(r).to_string()).collect(),
                    Kind::Raw => y.iter().map(|&r| r.to_string()).collect(),
                };
                match writeln!(out, "{}", cells.join(" ")) {
                    // A reader that stops early (`| head`) ends the listing.
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
                    r => r?,
                }
            }
        }
    }
    Ok(())
}

/// The number of samples in an input array of `shape`: one sample (the
/// model's input shape, or flat), or `[N, ...]` with one sample per row.
fn batch_of(model: &Model, inputs: &Path, shape: &[usize]) -> Result<usize, TensorError> {
    let n_in = model.input_len();
    if shape == model.input_shape || shape == [n_in] {
        Ok(1)
    } else if shape.len() >= 2 && shape[1..].iter().product::<usize>() == n_in && (shape[1..] == model.input_shape[..] || shape.len() == 2) {
        Ok(shape[0])
    } else {
        Err(TensorError::file(
            inputs,
            format!("has shape {:?}; expected [N, {}] or [N, {:?}] for model '{}'", shape, n_in, model.input_shape, model.name),
        ))
    }
}

/// The refusal of a float array under `--input-kind raw`.
fn float_for_raw(inputs: &Path, dtype: &str) -> TensorError {
    TensorError::file(inputs, format!("has float type {dtype}; --input-kind raw needs an integer array"))
}

/// Samples per call of the simulator on a long input, between updates of
/// the progress bar.
const BLOCK: usize = 1 << 16;

/// Runs the batch; an input of more than [`BLOCK`] samples goes in blocks
/// with a progress bar on stderr (drawn only on a terminal). Errors name
/// the sample in the whole batch.
fn infer(net: &Network, codes: &CodeRows, batch: usize, n_in: usize) -> Result<Vec<i128>, SimError> {
    if batch <= BLOCK {
        return net.infer_code_rows(codes);
    }
    let bar = ProgressBar::new(batch as u64);
    if let Ok(style) = ProgressStyle::with_template("{wide_bar} {pos}/{len} samples, {elapsed} elapsed, ETA {eta}") {
        bar.set_style(style);
    }
    let mut out = Vec::with_capacity(batch * net.model().output_len());
    for start in (0..batch).step_by(BLOCK) {
        let end = (start + BLOCK).min(batch);
        let part = net.infer_code_rows(&codes.slice(start * n_in..end * n_in)).map_err(|e| match e {
            SimError::InputRange { sample, index, raw, format } => SimError::InputRange { sample: sample + start, index, raw, format },
            SimError::InputLen { sample, got, want } => SimError::InputLen { sample: sample + start, got, want },
            e => e,
        })?;
        out.extend(part);
        bar.inc((end - start) as u64);
    }
    bar.finish_and_clear();
    Ok(out)
}
