//! # fptgen-generator
//!
//! Lowers a validated [`fptgen_sim::model::Model`] to a hardware plan and
//! renders it (Verilog, harnesses, constraints, reports) from the askama
//! templates in `templates/` and the library modules in `rtl/`.
//!
//! Nothing is lowered yet: this crate currently only fixes the direction of
//! the data flow (model file → `fptgen-sim` → `fptgen-generator` → files).

/// The model type the generator consumes, re-exported for its callers.
pub use fptgen_sim::model::Model;
