//! Opening a `.tflite` file: verification, then the main subgraph's tensors,
//! buffers and fully-connected operators copied into plain values.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::fb;
use super::types::{Activation, FullyConnectedOp, TensorInfo, TensorType};
use crate::error::{Error, TensorError};

/// The builtin code of `FULLY_CONNECTED`.
const FULLY_CONNECTED: i32 = 9;

/// A TFLite model read from a file: its main subgraph (subgraph 0).
#[derive(Debug, Clone)]
pub struct TfliteModel {
    path: PathBuf,
    bytes: Vec<u8>,
    tensors: Vec<TensorInfo>,
    /// Byte range of each buffer's data in `bytes` (`None`: no data).
    buffers: Vec<Option<Range<usize>>>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    fully_connected: Vec<FullyConnectedOp>,
}

impl TfliteModel {
    /// Reads and checks the model file at `path`.
    pub fn open(path: &Path) -> Result<Self, Error> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Ok(Self::from_bytes(path, bytes)?)
    }

    /// Checks `bytes` as a TFLite model; `path` names it in errors. Errors:
    /// not a flatbuffer with TFLite's `TFL3` identifier, a flatbuffer that
    /// fails verification, no subgraph, a buffer outside the file, a tensor
    /// whose scales and zero points differ in number, an operator that
    /// refers to a missing operator code or tensor.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<Self, TensorError> {
        let parts = parse(path, &bytes)?;
        Ok(TfliteModel {
            path: path.to_path_buf(),
            bytes,
            tensors: parts.tensors,
            buffers: parts.buffers,
            inputs: parts.inputs,
            outputs: parts.outputs,
            fully_connected: parts.fully_connected,
        })
    }

    /// The file the model was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The model file's bytes, as read (or as replaced, for a model made
    /// by [`TfliteModel::from_bytes`] from [`TfliteModel::with_data`]).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Every tensor of the main subgraph, in index order.
    pub fn tensors(&self) -> &[TensorInfo] {
        &self.tensors
    }

    /// The indices of the subgraph's input tensors.
    pub fn inputs(&self) -> &[usize] {
        &self.inputs
    }

    /// The indices of the subgraph's output tensors.
    pub fn outputs(&self) -> &[usize] {
        &self.outputs
    }

    /// The `FULLY_CONNECTED` operators, in execution order.
    pub fn fully_connected(&self) -> &[FullyConnectedOp] {
        &self.fully_connected
    }

    /// The first tensor named `name`; an error naming the file and the
    /// tensor when there is none.
    pub fn tensor(&self, name: &str) -> Result<&TensorInfo, TensorError> {
        self.tensors
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| {
                let names: Vec<String> = self.tensors.iter().take(20).map(|t| format!("'{}'", t.name)).collect();
                let more = if self.tensors.len() > 20 { format!(" and {} more", self.tensors.len() - 20) } else { String::new() };
                TensorError::tensor(
                    &self.path,
                    name,
                    format!("no tensor of this name in the model's main subgraph; its tensors are {}{more}", names.join(", ")),
                )
            })
    }

    /// The tensor at `index` (operators refer to tensors by index).
    pub fn tensor_at(&self, index: usize) -> Result<&TensorInfo, TensorError> {
        self.tensors.get(index).ok_or_else(|| {
            TensorError::file(
                &self.path,
                format!("no tensor at index {index} (the main subgraph has {})", self.tensors.len()),
            )
        })
    }

    /// The raw little-endian data of `tensor`, checked to hold exactly its
    /// shape's number of elements of its type. Errors: no data (an
    /// activation, not a constant), a type whose size is unknown, a size
    /// that does not match the shape.
    pub fn data(&self, tensor: &TensorInfo) -> Result<&[u8], TensorError> {
        let err = |msg: String| TensorError::tensor(&self.path, &tensor.name, msg);
        let range = self
            .buffers
            .get(tensor.buffer as usize)
            .ok_or_else(|| {
                err(format!("buffer index {} is past the model's {} buffers", tensor.buffer, self.buffers.len()))
            })?
            .clone()
            .ok_or_else(|| err("has no data (it is not a constant tensor)".to_string()))?;
        let size = tensor.dtype.size().ok_or_else(|| err(format!("data of type {} cannot be read", tensor.dtype)))?;
        let needed = tensor.num_elements().and_then(|n| n.checked_mul(size));
        if needed != Some(range.len()) {
            return Err(err(format!(
                "its buffer has {} bytes, but shape {:?} of {} needs {}",
                range.len(),
                tensor.shape,
                tensor.dtype,
                needed.map_or("more than memory".to_string(), |n| n.to_string())
            )));
        }
        Ok(&self.bytes[range])
    }

    /// The codes of the int8 constant tensor `name`.
    pub fn int8_data(&self, name: &str) -> Result<Vec<i8>, TensorError> {
        let t = self.typed(name, TensorType::Int8)?;
        Ok(self.data(t)?.iter().map(|&b| b as i8).collect())
    }

    /// The values of the int32 constant tensor `name`.
    pub fn int32_data(&self, name: &str) -> Result<Vec<i32>, TensorError> {
        let t = self.typed(name, TensorType::Int32)?;
        Ok(self.data(t)?.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    /// The tensor `name`, which must have type `dtype`.
    pub fn typed(&self, name: &str, dtype: TensorType) -> Result<&TensorInfo, TensorError> {
        let t = self.tensor(name)?;
        if t.dtype != dtype {
            return Err(TensorError::tensor(&self.path, name, format!("is {}, expected {dtype}", t.dtype)));
        }
        Ok(t)
    }
}

impl TfliteModel {
    /// The model file's bytes with the data of the constant tensor `tensor`
    /// replaced by `data`, little-endian, of exactly the same length: the
    /// rest of the file is unchanged, so the copy runs wherever the original
    /// ran (issue 15's `--format tflite` export). Errors: the tensor has no
    /// data, `data` has another length, or another tensor shares its
    /// buffer (replacing it would change that one too).
    pub fn with_data(&self, tensor: &TensorInfo, data: &[u8]) -> Result<Vec<u8>, TensorError> {
        let old = self.data(tensor)?;
        let err = |msg: String| TensorError::tensor(&self.path, &tensor.name, msg);
        if old.len() != data.len() {
            return Err(err(format!("holds {} bytes; the replacement has {}", old.len(), data.len())));
        }
        if let Some(other) = self.tensors.iter().find(|t| t.buffer == tensor.buffer && t.index != tensor.index) {
            return Err(err(format!(
                "shares its buffer {} with tensor '{}'; replacing it would change both",
                tensor.buffer, other.name
            )));
        }
        let start = old.as_ptr() as usize - self.bytes.as_ptr() as usize;
        let mut out = self.bytes.clone();
        out[start..start + data.len()].copy_from_slice(data);
        Ok(out)
    }

    /// The model file's bytes with the weights (int8 codes, `[outputs,
    /// inputs]` in C order) and, if given, the bias (int32) of the
    /// fully-connected operator `op` replaced; see [`TfliteModel::with_data`].
    /// The quantization parameters (scales, zero points) stay as they
    /// are. Errors as `with_data`, and for weights or a bias of the wrong
    /// type, a bias given to an operator without one, or a weight code of
    /// -128 (TFLite's int8 weights are symmetric, -127..127).
    pub fn with_fully_connected(&self, op: &FullyConnectedOp, weights: &[i8], bias: Option<&[i32]>) -> Result<Vec<u8>, TensorError> {
        let wt = self.tensor_at(op.weights)?;
        if wt.dtype != TensorType::Int8 {
            return Err(TensorError::tensor(&self.path, &wt.name, format!("is {}, expected int8 weights", wt.dtype)));
        }
        if let Some(i) = weights.iter().position(|&w| w == i8::MIN) {
            return Err(TensorError::tensor(&self.path, &wt.name, format!("replacement code {i} is -128; int8 weights are -127..127")));
        }
        let bytes: Vec<u8> = weights.iter().map(|&w| w as u8).collect();
        let mut model = self.clone();
        model.bytes = self.with_data(wt, &bytes)?;
        if let Some(b) = bias {
            let bt = match op.bias {
                Some(i) => self.tensor_at(i)?,
                None => return Err(TensorError::tensor(&self.path, &wt.name, "its operator has no bias to replace")),
            };
            if bt.dtype != TensorType::Int32 {
                return Err(TensorError::tensor(&self.path, &bt.name, format!("is {}, expected an int32 bias", bt.dtype)));
            }
            let bytes: Vec<u8> = b.iter().flat_map(|v| v.to_le_bytes()).collect();
            model.bytes = model.with_data(bt, &bytes)?;
        }
        Ok(model.bytes)
    }
}

/// What `parse` reads out of the flatbuffer.
struct Parts {
    tensors: Vec<TensorInfo>,
    buffers: Vec<Option<Range<usize>>>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    fully_connected: Vec<FullyConnectedOp>,
}

fn parse(path: &Path, bytes: &[u8]) -> Result<Parts, TensorError> {
    let file_err = |msg: String| TensorError::file(path, msg);
    if bytes.len() < 8 {
        return Err(file_err(format!("not a TFLite model: {} bytes is too short for a flatbuffer", bytes.len())));
    }
    if &bytes[4..8] != b"TFL3" {
        return Err(file_err(format!(
            "not a TFLite model: the flatbuffer file identifier is {:?}, expected \"TFL3\"",
            String::from_utf8_lossy(&bytes[4..8])
        )));
    }
    let model = fb::root(bytes).map_err(|e| file_err(format!("not a valid TFLite flatbuffer: {e}")))?;
    let subgraph = model
        .subgraphs()
        .filter(|s| !s.is_empty())
        .map(|s| s.get(0))
        .ok_or_else(|| file_err("the model has no subgraph".to_string()))?;

    let mut buffers = Vec::new();
    for (i, b) in model.buffers().into_iter().flatten().enumerate() {
        let (offset, size) = b.external();
        let range = if offset > 1 {
            let end = offset.checked_add(size).filter(|&e| e <= bytes.len() as u64);
            let end = end.ok_or_else(|| {
                file_err(format!(
                    "buffer {i} lies at bytes {offset}..+{size}, past the end of the file ({} bytes)",
                    bytes.len()
                ))
            })?;
            Some(offset as usize..end as usize)
        } else {
            b.data().map(|d| {
                // `d` is a subslice of `bytes` (the verifier checked it).
                let start = d.as_ptr() as usize - bytes.as_ptr() as usize;
                start..start + d.len()
            })
        };
        buffers.push(range);
    }

    let mut tensors = Vec::new();
    for (index, t) in subgraph.tensors().into_iter().flatten().enumerate() {
        let name = t.name().unwrap_or("").to_string();
        let (scales, zero_points, quantized_dimension) = match t.quantization() {
            Some(q) => (
                q.scale().map_or(Vec::new(), |v| v.iter().collect()),
                q.zero_point().map_or(Vec::new(), |v| v.iter().collect()),
                q.quantized_dimension(),
            ),
            None => (Vec::new(), Vec::new(), 0),
        };
        if scales.len() != zero_points.len() && !zero_points.is_empty() {
            return Err(TensorError::tensor(
                path,
                &name,
                format!("has {} quantization scales but {} zero points", scales.len(), zero_points.len()),
            ));
        }
        tensors.push(TensorInfo {
            index,
            name,
            dtype: TensorType::from_code(t.type_code()),
            shape: t.shape().map_or(Vec::new(), |v| v.iter().collect()),
            scales,
            zero_points,
            quantized_dimension,
            buffer: t.buffer(),
        });
    }

    let n_tensors = tensors.len();
    let tensor_index = |what: &str, i: i32| -> Result<usize, TensorError> {
        usize::try_from(i).ok().filter(|&i| i < n_tensors).ok_or_else(|| {
            file_err(format!("{what} refers to tensor {i}, but the main subgraph has {n_tensors} tensors"))
        })
    };
    let list = |what: &str, v: Option<flatbuffers::Vector<'_, i32>>| -> Result<Vec<usize>, TensorError> {
        v.into_iter().flatten().map(|i| tensor_index(what, i)).collect()
    };
    let inputs = list("the subgraph's input list", subgraph.inputs())?;
    let outputs = list("the subgraph's output list", subgraph.outputs())?;

    let codes: Vec<i32> = model.operator_codes().into_iter().flatten().map(|c| c.builtin()).collect();
    let mut fully_connected = Vec::new();
    for (index, op) in subgraph.operators().into_iter().flatten().enumerate() {
        let code = codes.get(op.opcode_index() as usize).copied().ok_or_else(|| {
            file_err(format!(
                "operator {index} uses operator code {}, but the model has {}",
                op.opcode_index(),
                codes.len()
            ))
        })?;
        if code != FULLY_CONNECTED {
            continue;
        }
        let what = format!("operator {index} (FULLY_CONNECTED)");
        let ins: Vec<i32> = op.inputs().into_iter().flatten().collect();
        let outs: Vec<i32> = op.outputs().into_iter().flatten().collect();
        if ins.len() < 2 || ins.len() > 3 || outs.len() != 1 {
            return Err(file_err(format!(
                "{what} has {} inputs and {} outputs; expected input, weights, optional bias and one output",
                ins.len(),
                outs.len()
            )));
        }
        let bias = match ins.get(2) {
            None | Some(-1) => None,
            Some(&b) => Some(tensor_index(&format!("{what} bias"), b)?),
        };
        let options = op.fully_connected_options();
        fully_connected.push(FullyConnectedOp {
            index,
            input: tensor_index(&format!("{what} input"), ins[0])?,
            weights: tensor_index(&format!("{what} weights"), ins[1])?,
            bias,
            output: tensor_index(&format!("{what} output"), outs[0])?,
            activation: Activation::from_code(options.map_or(0, |o| o.fused_activation())),
            weights_format: options.map_or(0, |o| o.weights_format()),
        });
    }
    Ok(Parts { tensors, buffers, inputs, outputs, fully_connected })
}
