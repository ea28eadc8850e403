//! # fptgen-generator
//!
//! Lowers a validated [`fptgen_sim::model::Model`] to a hardware plan
//! ([`plan`], each layer by its kind's hardware in [`layers`]) and renders
//! it ([`render`]): Verilog from the askama templates in `templates/` and
//! the library modules in `rtl/` ([`rtl`]), memory images, the Verilator
//! harness and the reports. [`output`] writes the files safely,
//! [`design`] writes a model's whole design, and [`expect`] says what the
//! simulator predicts a generated trainer does. Model in, files out: the
//! flow around a design (co-simulation, synthesis, place and route,
//! sweeps) is the crate `fptgen-flow`.

pub mod axi;
pub mod bits;
pub mod cocotb;
pub mod design;
pub mod diff_plan;
pub mod expect;
pub mod export;
pub mod fb_plan;
pub mod fold;
pub mod fusesoc;
pub mod layers;
pub mod output;
pub mod part;
pub mod plan;
pub mod render;
pub mod rtl;
pub mod timing;
pub mod train_plan;
pub mod wiring;

/// fptgen's version, written into every generated file.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
