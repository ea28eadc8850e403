//! `fptgen simulate`: bit-accurate inference on a batch.

use std::io::Write as _;
use std::path::Path;

use anyhow::bail;
use fptgen_sim::network::{quantize_input, Network};
use fptgen_sim::tensor::{self, OutValues, Values};
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
    let arr = tensor::read_npy(inputs)?;
    let n_in = model.input_len();
    let one_sample = arr.shape == model.input_shape || arr.shape == [n_in];
    let batch = if one_sample {
        1
    } else if arr.shape.len() >= 2 && arr.shape[1..].iter().product::<usize>() == n_in
        && (arr.shape[1..] == model.input_shape[..] || arr.shape.len() == 2)
    {
        arr.shape[0]
    } else {
        bail!(TensorError::file(
            inputs,
            format!(
                "has shape {:?}; expected [N, {}] or [N, {:?}] for model '{}'",
                arr.shape,
                n_in,
                model.input_shape,
                model.name
            )
        ));
    };
    let samples: Vec<Vec<i128>> = match (&arr.values, input_kind) {
        (Values::Float(v), Kind::Float) => v
            .chunks(n_in.max(1))
            .enumerate()
            .map(|(s, chunk)| {
                quantize_input(&model, chunk).map_err(|(i, m)| {
                    let mut ix = tensor::unravel(s * n_in + i, &arr.shape);
                    if one_sample {
                        ix = tensor::unravel(i, &arr.shape);
                    }
                    TensorError { file: inputs.to_path_buf(), tensor: None, index: Some(ix), message: m }
                })
            })
            .collect::<Result<_, _>>()?,
        (Values::Int(v), Kind::Raw) => v.chunks(n_in.max(1)).map(<[i128]>::to_vec).collect(),
        (Values::Int(_), Kind::Float) => bail!(TensorError::file(
            inputs,
            format!("has integer type {}; pass --input-kind raw to read raw codes, or give float values", arr.dtype)
        )),
        (Values::Float(_), Kind::Raw) => bail!(TensorError::file(
            inputs,
            format!("has float type {}; --input-kind raw needs an integer array", arr.dtype)
        )),
    };
    debug_assert_eq!(samples.len(), batch);
    let net = Network::new(model, params)?;
    for (s, x) in samples.iter().enumerate() {
        if let Err(e) = net.check_input(s, x) {
            bail!(TensorError::file(inputs, e.to_string()));
        }
    }
    let outs = net.infer_batch(&samples)?;
    let fmt = net.model().output_format();
    let n_out = net.model().output_len();
    match output {
        Some(path) => {
            let flat: Vec<i128> = outs.concat();
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
            for y in &outs {
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
