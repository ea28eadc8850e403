//! The error type of the `int8` module: every parameter that TFLite's
//! reference kernels would reject, assert on, or compute undefined
//! behaviour with is refused here as one of these values.

/// A parameter of the int8 arithmetic that is out of its domain.
///
/// `Display` gives a message a user can act on, naming the parameter and,
/// where one output channel is at fault, its index.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Int8Error {
    /// A real multiplier (an effective scale `s_in * s_w / s_out`) that is
    /// not finite or is negative: TFLite's `QuantizeMultiplier` has no
    /// defined result for it.
    #[error("real multiplier {value} is not a finite non-negative number")]
    BadRealMultiplier {
        /// The multiplier given.
        value: f64,
    },
    /// A real multiplier of `2^30` or more under double rounding: its shift
    /// would exceed 30, and `x * (1 << shift)` would be undefined in
    /// TFLite's double-rounding `MultiplyByQuantizedMultiplier`.
    #[error(
        "real multiplier {value} is too large for double rounding (shift {shift} > 30); \
         effective scales must be below 2^30"
    )]
    MultiplierTooLarge {
        /// The multiplier given.
        value: f64,
        /// The shift `QuantizeMultiplier` computed for it.
        shift: i32,
    },
    /// A quantized multiplier outside `0..=2^31-1` or a shift outside
    /// `-31..=30`, the domain TFLite's `MultiplyByQuantizedMultiplier`
    /// checks (`TFLITE_DCHECK`).
    #[error("quantized multiplier {multiplier} with shift {shift} is out of range (need multiplier >= 0, shift in -31..=30)")]
    BadQuantizedMultiplier {
        /// The 32-bit multiplier.
        multiplier: i32,
        /// The shift.
        shift: i32,
    },
    /// A zero point outside the int8 range `-128..=127`.
    #[error("{what} zero point {value} is outside -128..=127")]
    ZeroPoint {
        /// Which zero point (`input`, `output`, `weights`).
        what: &'static str,
        /// Its value (the negated offset for inputs and weights).
        value: i64,
    },
    /// An activation range that is empty or not inside `-128..=127`.
    #[error("activation range [{min}, {max}] is not a non-empty subrange of -128..=127")]
    ActivationRange {
        /// The lower bound.
        min: i32,
        /// The upper bound.
        max: i32,
    },
    /// A slice whose length does not match the kernel's shape.
    #[error("{what} has {got} elements, expected {expected}")]
    Length {
        /// Which slice (`weights`, `bias`, `multipliers`, `input`, `output`).
        what: &'static str,
        /// The length the shape requires.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// A kernel with zero inputs or zero outputs.
    #[error("fully-connected kernel has {inputs} inputs and {outputs} outputs; both must be at least 1")]
    EmptyShape {
        /// Number of inputs per output.
        inputs: usize,
        /// Number of outputs.
        outputs: usize,
    },
    /// Output channel `channel` can overflow its int32 accumulator for some
    /// int8 input (TFLite's reference kernel accumulates in `int32_t`, and
    /// its overflow is undefined behaviour).
    #[error("output channel {channel}: the accumulator can reach {bound} in magnitude, beyond int32")]
    AccumulatorOverflow {
        /// The output channel.
        channel: usize,
        /// The largest magnitude `|sum w * (x + input_offset) + bias|` can take.
        bound: i64,
    },
}
