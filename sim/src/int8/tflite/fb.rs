//! The few tables of TFLite's schema (`tensorflow/compiler/mlir/lite/schema/schema.fbs`)
//! that fptgen reads, as thin wrappers over `flatbuffers::Table` with the
//! vtable offsets written by hand (field `id` `n` is at vtable offset
//! `4 + 2n`).
//!
//! Soundness: every accessor reads a field with the type that
//! [`flatbuffers::Verifiable::run_verifier`] of its table checked, and
//! tables are only reached through [`flatbuffers::root`], which runs the
//! verifier over the whole buffer first. That is the contract of
//! flatc-generated code, kept here by hand: a field added to an accessor
//! must be added to the verifier with the same type and offset.

use flatbuffers::{Follow, ForwardsUOffset, InvalidFlatbuffer, Table, Vector, Verifiable, Verifier};

type Tables<'a, T> = Vector<'a, ForwardsUOffset<T>>;

macro_rules! table {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub(super) struct $name<'a> {
            tab: Table<'a>,
        }

        impl<'a> Follow<'a> for $name<'a> {
            type Inner = $name<'a>;
            unsafe fn follow(buf: &'a [u8], loc: usize) -> Self::Inner {
                // SAFETY: forwarded; the caller guarantees a table at `loc`.
                $name { tab: unsafe { Table::new(buf, loc) } }
            }
        }
    };
}

/// Reads field `slot` of `tab` as `T`, `None` when absent.
///
/// # Safety
/// The table's verifier must have checked `slot` as a `T`.
unsafe fn field<'a, T: Follow<'a> + 'a>(tab: &Table<'a>, slot: u16) -> Option<T::Inner> {
    // SAFETY: forwarded to the caller.
    unsafe { tab.get::<T>(slot, None) }
}

table!(
    /// `table Model`: the root.
    Model
);
table!(
    /// `table OperatorCode`.
    OperatorCode
);
table!(
    /// `table SubGraph`.
    SubGraph
);
table!(
    /// `table Tensor`.
    Tensor
);
table!(
    /// `table QuantizationParameters`.
    Quantization
);
table!(
    /// `table Buffer`.
    Buffer
);
table!(
    /// `table Operator`.
    Operator
);
table!(
    /// `table FullyConnectedOptions` (member 8 of `union BuiltinOptions`).
    FullyConnectedOptions
);

/// `BuiltinOptions` union tag of `FullyConnectedOptions`.
pub(super) const BUILTIN_OPTIONS_FULLY_CONNECTED: u8 = 8;

// Vtable offsets, `4 + 2 * id` in schema order.
const MODEL_VERSION: u16 = 4;
const MODEL_OPERATOR_CODES: u16 = 6;
const MODEL_SUBGRAPHS: u16 = 8;
const MODEL_BUFFERS: u16 = 12;
const OPCODE_DEPRECATED_BUILTIN: u16 = 4;
const OPCODE_BUILTIN: u16 = 10;
const SUBGRAPH_TENSORS: u16 = 4;
const SUBGRAPH_INPUTS: u16 = 6;
const SUBGRAPH_OUTPUTS: u16 = 8;
const SUBGRAPH_OPERATORS: u16 = 10;
const TENSOR_SHAPE: u16 = 4;
const TENSOR_TYPE: u16 = 6;
const TENSOR_BUFFER: u16 = 8;
const TENSOR_NAME: u16 = 10;
const TENSOR_QUANTIZATION: u16 = 12;
const QUANT_SCALE: u16 = 8;
const QUANT_ZERO_POINT: u16 = 10;
const QUANT_QUANTIZED_DIMENSION: u16 = 16;
const BUFFER_DATA: u16 = 4;
const BUFFER_OFFSET: u16 = 6;
const BUFFER_SIZE: u16 = 8;
const OPERATOR_OPCODE_INDEX: u16 = 4;
const OPERATOR_INPUTS: u16 = 6;
const OPERATOR_OUTPUTS: u16 = 8;
const OPERATOR_BUILTIN_OPTIONS_TYPE: u16 = 10;
const OPERATOR_BUILTIN_OPTIONS: u16 = 12;
const FC_FUSED_ACTIVATION: u16 = 4;
const FC_WEIGHTS_FORMAT: u16 = 6;

impl Verifiable for Model<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.visit_table(pos)?
            .visit_field::<u32>("version", MODEL_VERSION, false)?
            .visit_field::<ForwardsUOffset<Tables<OperatorCode>>>("operator_codes", MODEL_OPERATOR_CODES, false)?
            .visit_field::<ForwardsUOffset<Tables<SubGraph>>>("subgraphs", MODEL_SUBGRAPHS, false)?
            .visit_field::<ForwardsUOffset<Tables<Buffer>>>("buffers", MODEL_BUFFERS, false)?
            .finish();
        Ok(())
    }
}

impl Verifiable for OperatorCode<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.visit_table(pos)?
            .visit_field::<i8>("deprecated_builtin_code", OPCODE_DEPRECATED_BUILTIN, false)?
            .visit_field::<i32>("builtin_code", OPCODE_BUILTIN, false)?
            .finish();
        Ok(())
    }
}

impl Verifiable for SubGraph<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.visit_table(pos)?
            .visit_field::<ForwardsUOffset<Tables<Tensor>>>("tensors", SUBGRAPH_TENSORS, false)?
            .visit_field::<ForwardsUOffset<Vector<i32>>>("inputs", SUBGRAPH_INPUTS, false)?
            .visit_field::<ForwardsUOffset<Vector<i32>>>("outputs", SUBGRAPH_OUTPUTS, false)?
            .visit_field::<ForwardsUOffset<Tables<Operator>>>("operators", SUBGRAPH_OPERATORS, false)?
            .finish();
        Ok(())
    }
}

impl Verifiable for Tensor<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.visit_table(pos)?
            .visit_field::<ForwardsUOffset<Vector<i32>>>("shape", TENSOR_SHAPE, false)?
            .visit_field::<i8>("type", TENSOR_TYPE, false)?
            .visit_field::<u32>("buffer", TENSOR_BUFFER, false)?
            .visit_field::<ForwardsUOffset<&str>>("name", TENSOR_NAME, false)?
            .visit_field::<ForwardsUOffset<Quantization>>("quantization", TENSOR_QUANTIZATION, false)?
            .finish();
        Ok(())
    }
}

impl Verifiable for Quantization<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.visit_table(pos)?
            .visit_field::<ForwardsUOffset<Vector<f32>>>("scale", QUANT_SCALE, false)?
            .visit_field::<ForwardsUOffset<Vector<i64>>>("zero_point", QUANT_ZERO_POINT, false)?
            .visit_field::<i32>("quantized_dimension", QUANT_QUANTIZED_DIMENSION, false)?
            .finish();
        Ok(())
    }
}

impl Verifiable for Buffer<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.visit_table(pos)?
            .visit_field::<ForwardsUOffset<Vector<u8>>>("data", BUFFER_DATA, false)?
            .visit_field::<u64>("offset", BUFFER_OFFSET, false)?
            .visit_field::<u64>("size", BUFFER_SIZE, false)?
            .finish();
        Ok(())
    }
}

impl Verifiable for Operator<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.visit_table(pos)?
            .visit_field::<u32>("opcode_index", OPERATOR_OPCODE_INDEX, false)?
            .visit_field::<ForwardsUOffset<Vector<i32>>>("inputs", OPERATOR_INPUTS, false)?
            .visit_field::<ForwardsUOffset<Vector<i32>>>("outputs", OPERATOR_OUTPUTS, false)?
            .visit_union::<u8, _>(
                "builtin_options_type",
                OPERATOR_BUILTIN_OPTIONS_TYPE,
                "builtin_options",
                OPERATOR_BUILTIN_OPTIONS,
                false,
                |tag, v, pos| match tag {
                    BUILTIN_OPTIONS_FULLY_CONNECTED => {
                        v.verify_union_variant::<ForwardsUOffset<FullyConnectedOptions>>("FullyConnectedOptions", pos)
                    }
                    // Other options are never read, so not verified.
                    _ => Ok(()),
                },
            )?
            .finish();
        Ok(())
    }
}

impl Verifiable for FullyConnectedOptions<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.visit_table(pos)?
            .visit_field::<i8>("fused_activation_function", FC_FUSED_ACTIVATION, false)?
            .visit_field::<i8>("weights_format", FC_WEIGHTS_FORMAT, false)?
            .finish();
        Ok(())
    }
}

/// Verifies `bytes` as a `Model` and returns its root.
pub(super) fn root(bytes: &[u8]) -> Result<Model<'_>, InvalidFlatbuffer> {
    flatbuffers::root::<Model>(bytes)
}

// SAFETY (all accessors below): each reads a field at the offset and with
// the type its table's `run_verifier` checked above.
impl<'a> Model<'a> {
    pub(super) fn operator_codes(&self) -> Option<Tables<'a, OperatorCode<'a>>> {
        unsafe { field::<ForwardsUOffset<Tables<OperatorCode>>>(&self.tab, MODEL_OPERATOR_CODES) }
    }
    pub(super) fn subgraphs(&self) -> Option<Tables<'a, SubGraph<'a>>> {
        unsafe { field::<ForwardsUOffset<Tables<SubGraph>>>(&self.tab, MODEL_SUBGRAPHS) }
    }
    pub(super) fn buffers(&self) -> Option<Tables<'a, Buffer<'a>>> {
        unsafe { field::<ForwardsUOffset<Tables<Buffer>>>(&self.tab, MODEL_BUFFERS) }
    }
}

impl OperatorCode<'_> {
    /// The builtin operator: the larger of `builtin_code` and
    /// `deprecated_builtin_code`, as TFLite's `GetBuiltinCode` reads it.
    pub(super) fn builtin(&self) -> i32 {
        let old = unsafe { field::<i8>(&self.tab, OPCODE_DEPRECATED_BUILTIN) }.unwrap_or(0);
        let new = unsafe { field::<i32>(&self.tab, OPCODE_BUILTIN) }.unwrap_or(0);
        new.max(i32::from(old))
    }
}

impl<'a> SubGraph<'a> {
    pub(super) fn tensors(&self) -> Option<Tables<'a, Tensor<'a>>> {
        unsafe { field::<ForwardsUOffset<Tables<Tensor>>>(&self.tab, SUBGRAPH_TENSORS) }
    }
    pub(super) fn inputs(&self) -> Option<Vector<'a, i32>> {
        unsafe { field::<ForwardsUOffset<Vector<i32>>>(&self.tab, SUBGRAPH_INPUTS) }
    }
    pub(super) fn outputs(&self) -> Option<Vector<'a, i32>> {
        unsafe { field::<ForwardsUOffset<Vector<i32>>>(&self.tab, SUBGRAPH_OUTPUTS) }
    }
    pub(super) fn operators(&self) -> Option<Tables<'a, Operator<'a>>> {
        unsafe { field::<ForwardsUOffset<Tables<Operator>>>(&self.tab, SUBGRAPH_OPERATORS) }
    }
}

impl<'a> Tensor<'a> {
    pub(super) fn shape(&self) -> Option<Vector<'a, i32>> {
        unsafe { field::<ForwardsUOffset<Vector<i32>>>(&self.tab, TENSOR_SHAPE) }
    }
    pub(super) fn type_code(&self) -> i8 {
        unsafe { field::<i8>(&self.tab, TENSOR_TYPE) }.unwrap_or(0)
    }
    pub(super) fn buffer(&self) -> u32 {
        unsafe { field::<u32>(&self.tab, TENSOR_BUFFER) }.unwrap_or(0)
    }
    pub(super) fn name(&self) -> Option<&'a str> {
        unsafe { field::<ForwardsUOffset<&str>>(&self.tab, TENSOR_NAME) }
    }
    pub(super) fn quantization(&self) -> Option<Quantization<'a>> {
        unsafe { field::<ForwardsUOffset<Quantization>>(&self.tab, TENSOR_QUANTIZATION) }
    }
}

impl<'a> Quantization<'a> {
    pub(super) fn scale(&self) -> Option<Vector<'a, f32>> {
        unsafe { field::<ForwardsUOffset<Vector<f32>>>(&self.tab, QUANT_SCALE) }
    }
    pub(super) fn zero_point(&self) -> Option<Vector<'a, i64>> {
        unsafe { field::<ForwardsUOffset<Vector<i64>>>(&self.tab, QUANT_ZERO_POINT) }
    }
    pub(super) fn quantized_dimension(&self) -> i32 {
        unsafe { field::<i32>(&self.tab, QUANT_QUANTIZED_DIMENSION) }.unwrap_or(0)
    }
}

impl<'a> Buffer<'a> {
    pub(super) fn data(&self) -> Option<&'a [u8]> {
        unsafe { field::<ForwardsUOffset<Vector<u8>>>(&self.tab, BUFFER_DATA) }.map(|v| v.bytes())
    }
    /// `(offset, size)` of data stored after the flatbuffer (models over
    /// 2 GB); TFLite uses them only when `offset > 1`.
    pub(super) fn external(&self) -> (u64, u64) {
        let offset = unsafe { field::<u64>(&self.tab, BUFFER_OFFSET) }.unwrap_or(0);
        let size = unsafe { field::<u64>(&self.tab, BUFFER_SIZE) }.unwrap_or(0);
        (offset, size)
    }
}

impl<'a> Operator<'a> {
    pub(super) fn opcode_index(&self) -> u32 {
        unsafe { field::<u32>(&self.tab, OPERATOR_OPCODE_INDEX) }.unwrap_or(0)
    }
    pub(super) fn inputs(&self) -> Option<Vector<'a, i32>> {
        unsafe { field::<ForwardsUOffset<Vector<i32>>>(&self.tab, OPERATOR_INPUTS) }
    }
    pub(super) fn outputs(&self) -> Option<Vector<'a, i32>> {
        unsafe { field::<ForwardsUOffset<Vector<i32>>>(&self.tab, OPERATOR_OUTPUTS) }
    }
    /// The options when they are `FullyConnectedOptions`.
    pub(super) fn fully_connected_options(&self) -> Option<FullyConnectedOptions<'a>> {
        let tag = unsafe { field::<u8>(&self.tab, OPERATOR_BUILTIN_OPTIONS_TYPE) }.unwrap_or(0);
        if tag != BUILTIN_OPTIONS_FULLY_CONNECTED {
            return None;
        }
        // The verifier checked the value as FullyConnectedOptions for this tag.
        unsafe { field::<ForwardsUOffset<FullyConnectedOptions>>(&self.tab, OPERATOR_BUILTIN_OPTIONS) }
    }
}

impl FullyConnectedOptions<'_> {
    pub(super) fn fused_activation(&self) -> i8 {
        unsafe { field::<i8>(&self.tab, FC_FUSED_ACTIVATION) }.unwrap_or(0)
    }
    pub(super) fn weights_format(&self) -> i8 {
        unsafe { field::<i8>(&self.tab, FC_WEIGHTS_FORMAT) }.unwrap_or(0)
    }
}
