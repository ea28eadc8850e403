//! Batched exact arithmetic: dense layers over many samples (or many ES
//! members) as integer matrix products, with the same bits as the
//! definition (`docs/numerics.md`, "Layer arithmetic"; `docs/training.md`,
//! "The batched evaluator").
//!
//! A dense layer qualifies when its accumulation is exact
//! ([`crate::layers::dense::exact_accumulation`]: every product cast to the
//! accumulator is exact, and the accumulator wraps or provably never
//! saturates) and its dot products fit `i64` ([`kernel::Rows::new`]). Its
//! outputs over a batch are then the exact integer matrix product of the
//! input codes and the weight codes ([`kernel`]), each finished by
//! [`finish::Finisher`] (bias, one accumulator addition, activation,
//! output cast). Other layers keep the per-sample path.
//!
//! Everything here is checked against the reference definition
//! (`dense_neuron_reference`) by property tests in `sim/tests/fast_path.rs`.

pub mod finish;
pub mod kernel;

use crate::fixed::Format;
use crate::layers::dense::{exact_accumulation, Dense, B, W};
use crate::weights::LayerParams;

use finish::Finisher;
use kernel::{Kernel, Rows};

/// `Some((min, max))` of a format's codes when they all fit `i64`.
pub fn i64_range(f: Format) -> Option<(i64, i64)> {
    Some((i64::try_from(f.min_raw()).ok()?, i64::try_from(f.max_raw()).ok()?))
}

/// A dense layer's batched exact forward pass: its weights packed for a
/// [`kernel::Rows`] kernel and its biases cast to the accumulator.
#[derive(Debug, Clone)]
pub struct FastDense {
    rows: Rows,
    finisher: Finisher,
    bias: Vec<i128>,
}

impl FastDense {
    /// `Some` when the layer qualifies (see the module documentation) and
    /// its input and output codes fit `i64`; `p` must hold codes of its
    /// formats. `allow_vnni` false keeps the portable kernels.
    pub fn new(d: &Dense, input_format: Format, p: &LayerParams, allow_vnni: bool) -> Option<FastDense> {
        let shift = exact_accumulation(d, input_format)?;
        i64_range(d.precision.output)?;
        let w: Vec<i64> = p.tensors[W].iter().map(|&v| i64::try_from(v).ok()).collect::<Option<_>>()?;
        let rows = Rows::new(&w, d.outputs, d.inputs, i64_range(input_format)?, allow_vnni)?;
        let finisher = Finisher::new(d, shift);
        let bias = p.tensors[B].iter().map(|&b| finisher.bias(b)).collect();
        Some(FastDense { rows, finisher, bias })
    }

    /// The kernel the layer's products use.
    pub fn kernel(&self) -> Kernel {
        self.rows.kernel()
    }

    /// The layer on `m` samples: `x` holds `m` rows of input codes, the
    /// result `m` rows of output codes, each equal to
    /// [`crate::layers::dense::dense_forward`]'s.
    pub fn forward(&self, x: Vec<i64>, m: usize) -> Vec<i64> {
        let n = self.rows.n();
        let mut sums = vec![0i64; m * n];
        self.rows.mul(x, m, &mut sums);
        self.finish(sums)
    }

    /// [`FastDense::forward`] of byte codes read as they are
    /// ([`Rows::mul_u8`]), or `None` when the kernel cannot read them so.
    pub fn forward_u8(&self, x: &[u8], m: usize) -> Option<Vec<i64>> {
        let mut sums = vec![0i64; m * self.rows.n()];
        self.rows.mul_u8(x, m, &mut sums)?;
        Some(self.finish(sums))
    }

    /// Every row of exact sums finished into output codes.
    fn finish(&self, mut sums: Vec<i64>) -> Vec<i64> {
        for row in sums.chunks_exact_mut(self.rows.n().max(1)) {
            // The output format's codes fit i64 (checked in `new`).
            self.finisher.finish_row(&self.bias, row);
        }
        sums
    }
}
