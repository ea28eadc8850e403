//! The ONNX protobuf messages the import reads, written by hand from
//! `onnx.proto` (field numbers as there; only the fields fptgen uses), and
//! the decoding of a file into them. Unknown fields are skipped by prost.

use prost::Message;

/// `ModelProto`: the file's top-level message.
#[derive(Clone, PartialEq, Message)]
pub struct ModelProto {
    /// The ONNX IR version.
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    /// The graph.
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    /// The operator sets (domain and version) the graph uses.
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
}

/// `OperatorSetIdProto`: a domain and its version.
#[derive(Clone, PartialEq, Message)]
pub struct OperatorSetIdProto {
    /// The domain (empty: ONNX's own).
    #[prost(string, tag = "1")]
    pub domain: String,
    /// The version.
    #[prost(int64, tag = "2")]
    pub version: i64,
}

/// `GraphProto`: nodes in topological order, constants and interface.
#[derive(Clone, PartialEq, Message)]
pub struct GraphProto {
    /// The nodes.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    /// The graph's name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Constant tensors.
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    /// Inputs (older files list the initializers here too).
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    /// Outputs.
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
}

/// `NodeProto`: one operator application.
#[derive(Clone, PartialEq, Message)]
pub struct NodeProto {
    /// Input tensor names (an empty name is an omitted optional input).
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    /// Output tensor names.
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    /// The node's name.
    #[prost(string, tag = "3")]
    pub name: String,
    /// The operator, e.g. `MatMul`, `Quant`.
    #[prost(string, tag = "4")]
    pub op_type: String,
    /// Attributes.
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
    /// The operator's domain (empty: the ONNX standard domain).
    #[prost(string, tag = "7")]
    pub domain: String,
}

/// `AttributeProto`: a named attribute value (only the scalar kinds and a
/// tensor are read).
#[derive(Clone, PartialEq, Message)]
pub struct AttributeProto {
    /// The attribute's name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// A float value.
    #[prost(float, tag = "2")]
    pub f: f32,
    /// An integer value.
    #[prost(int64, tag = "3")]
    pub i: i64,
    /// A string value (bytes).
    #[prost(bytes = "vec", tag = "4")]
    pub s: Vec<u8>,
    /// A tensor value (`Constant` nodes).
    #[prost(message, optional, tag = "5")]
    pub t: Option<TensorProto>,
    /// Integer list values.
    #[prost(int64, repeated, tag = "8")]
    pub ints: Vec<i64>,
}

/// `TensorProto.DataType` values the import reads.
pub mod data_type {
    /// 32-bit float.
    pub const FLOAT: i32 = 1;
    /// 32-bit signed integer.
    pub const INT32: i32 = 6;
    /// 64-bit signed integer.
    pub const INT64: i32 = 7;
    /// 64-bit float.
    pub const DOUBLE: i32 = 11;
}

/// `TensorProto`: a constant tensor.
#[derive(Clone, PartialEq, Message)]
pub struct TensorProto {
    /// The shape.
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    /// The element type ([`data_type`]).
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    /// Values of a FLOAT tensor not stored in `raw_data`.
    #[prost(float, repeated, tag = "4")]
    pub float_data: Vec<f32>,
    /// Values of an INT32 tensor not stored in `raw_data`.
    #[prost(int32, repeated, tag = "5")]
    pub int32_data: Vec<i32>,
    /// Values of an INT64 tensor not stored in `raw_data`.
    #[prost(int64, repeated, tag = "7")]
    pub int64_data: Vec<i64>,
    /// The tensor's name.
    #[prost(string, tag = "8")]
    pub name: String,
    /// Values in little-endian bytes.
    #[prost(bytes = "vec", tag = "9")]
    pub raw_data: Vec<u8>,
    /// Values of a DOUBLE tensor not stored in `raw_data`.
    #[prost(double, repeated, tag = "10")]
    pub double_data: Vec<f64>,
    /// 1 when the values are stored in another file.
    #[prost(int32, tag = "14")]
    pub data_location: i32,
}

/// `ValueInfoProto`: a graph input's or output's name and type.
#[derive(Clone, PartialEq, Message)]
pub struct ValueInfoProto {
    /// The tensor's name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its type.
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
}

/// `TypeProto`, only its `tensor_type` case.
#[derive(Clone, PartialEq, Message)]
pub struct TypeProto {
    /// A tensor type.
    #[prost(message, optional, tag = "1")]
    pub tensor_type: Option<TensorTypeProto>,
}

/// `TypeProto.Tensor`: element type and shape.
#[derive(Clone, PartialEq, Message)]
pub struct TensorTypeProto {
    /// The element type ([`data_type`]).
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    /// The shape, if known.
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

/// `TensorShapeProto`.
#[derive(Clone, PartialEq, Message)]
pub struct TensorShapeProto {
    /// The dimensions.
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

/// `TensorShapeProto.Dimension`: a fixed size or a named (dynamic) one.
#[derive(Clone, PartialEq, Message)]
pub struct Dimension {
    /// A fixed size.
    #[prost(int64, optional, tag = "1")]
    pub dim_value: Option<i64>,
    /// A symbolic size.
    #[prost(string, optional, tag = "2")]
    pub dim_param: Option<String>,
}

/// Decodes an ONNX model file's bytes.
pub fn decode(bytes: &[u8]) -> Result<ModelProto, String> {
    ModelProto::decode(bytes).map_err(|e| format!("not an ONNX model (protobuf decoding failed: {e})"))
}

/// The protobuf bytes of `model` (for tests and fuzzing, which build
/// graphs in memory).
pub fn encode(model: &ModelProto) -> Vec<u8> {
    model.encode_to_vec()
}

impl TensorProto {
    /// The values as `f64` (exact for float, double and int32, and for
    /// int64 up to 2^53), or why not.
    pub fn values(&self) -> Result<Vec<f64>, String> {
        if self.data_location == 1 {
            return Err(format!("tensor '{}' is stored in an external file, which is not supported", self.name));
        }
        let raw = &self.raw_data;
        let from_raw = |size: usize, f: &dyn Fn(&[u8]) -> f64| -> Result<Vec<f64>, String> {
            if raw.len() % size != 0 {
                return Err(format!("tensor '{}': raw_data of {} bytes is not a whole number of elements", self.name, raw.len()));
            }
            Ok(raw.chunks_exact(size).map(f).collect())
        };
        let v = match self.data_type {
            data_type::FLOAT if !raw.is_empty() => from_raw(4, &|b| f64::from(f32::from_le_bytes(b.try_into().unwrap_or_default())))?,
            data_type::FLOAT => self.float_data.iter().map(|&x| f64::from(x)).collect(),
            data_type::DOUBLE if !raw.is_empty() => from_raw(8, &|b| f64::from_le_bytes(b.try_into().unwrap_or_default()))?,
            data_type::DOUBLE => self.double_data.clone(),
            data_type::INT32 if !raw.is_empty() => from_raw(4, &|b| f64::from(i32::from_le_bytes(b.try_into().unwrap_or_default())))?,
            data_type::INT32 => self.int32_data.iter().map(|&x| f64::from(x)).collect(),
            data_type::INT64 if !raw.is_empty() => from_raw(8, &|b| i64::from_le_bytes(b.try_into().unwrap_or_default()) as f64)?,
            data_type::INT64 => self.int64_data.iter().map(|&x| x as f64).collect(),
            t => return Err(format!("tensor '{}' has element type {t}; only float, double, int32 and int64 are read", self.name)),
        };
        // The shape's size, without overflow (a crafted shape can exceed i64).
        let len = self.dims.iter().try_fold(1i64, |p, &d| if d < 0 { None } else { p.checked_mul(d) });
        if len != Some(v.len() as i64) {
            return Err(format!("tensor '{}' has {} values for shape {:?}", self.name, v.len(), self.dims));
        }
        Ok(v)
    }
}
