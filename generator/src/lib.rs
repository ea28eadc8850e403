//! # fptgen-generator
//!
//! Lowers a validated [`fptgen_sim::model::Model`] to a hardware plan
//! ([`plan`], each layer by its kind's hardware in [`layers`]) and renders
//! it ([`render`]): Verilog from the askama templates in `templates/` and
//! the library modules in `rtl/` ([`rtl`]), memory images, the Verilator
//! harness and the reports. [`output`] writes the files safely,
//! [`design`] writes a model's whole design, [`expect`] says what the
//! simulator predicts a generated trainer does, [`cosim`] builds and runs the
//! co-simulation against the bit-accurate simulator, [`synth`] estimates
//! the design's resources with yosys, [`sta`] estimates its worst
//! register-to-register path from yosys's netlist, and [`sweep`] evaluates the ES trainer
//! over a grid of populations and block counts.

pub mod axi;
pub mod bits;
pub mod cocotb;
pub mod cosim;
pub mod cosim_axi;
pub mod cosim_train;
pub mod design;
pub mod diff_plan;
pub mod expect;
pub mod export;
pub mod fb_plan;
pub mod fold;
pub mod fusesoc;
pub mod implement;
pub mod layers;
pub mod output;
pub mod part;
pub mod plan;
pub mod render;
pub mod rtl;
pub mod sta;
pub mod sweep;
pub mod synth;
pub mod timing;
pub mod train_plan;
pub mod wiring;

/// fptgen's version, written into every generated file.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
