//! The import's exact rewrites of ONNX operators outside fptgen's core set
//! into it (seed 004's lowering), one pass per file. Each is exact by
//! construction, and the whole imported network is also checked against
//! the ONNX graph's exact evaluation on random inputs before anything is
//! written ([`super::proof`]).

pub mod bipolar;
pub mod cast;
pub mod channels;
pub mod conv1x1;
pub mod residual_add;
pub mod transpose;
pub mod trunc;
