//! The import's rewrites of ONNX operators outside fptgen's core set
//! into it (seed 004's lowering), one pass per file. Each is exact by
//! construction, and the whole imported network is also checked against
//! the ONNX graph's exact evaluation on random inputs before anything is
//! written ([`super::proof`]); except the rewrites that change the function
//! ([`stacked_conv`], [`pool`]'s 3x3 stride 2, [`layernorm`]), applied only by `--lower approximate`, whose layers
//! (and the layers after them) the proof leaves out and `fptgen train
//! --teacher` retrains.

pub mod bipolar;
pub mod cast;
pub mod channels;
pub mod conv1x1;
pub mod layernorm;
pub mod pool;
pub mod residual_add;
pub mod stacked_conv;
pub mod transpose;
pub mod trunc;
