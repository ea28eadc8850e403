//! # fptgen-flow
//!
//! The flow around a design that `fptgen-generator` writes: [`cosim`]
//! builds and runs the co-simulation against the bit-accurate simulator
//! (inference), [`cosim_train`] the on-chip training against the
//! simulator's prediction (`fptgen_generator::expect`), [`cosim_axi`] both
//! through the AXI wrapper; [`synth`] estimates the design's resources
//! with yosys and [`sta`] its worst register-to-register path from yosys's
//! netlist; [`implement`] places and routes it for a Lattice ECP5 with the
//! open tools; [`sweep`] evaluates the ES trainer over a grid of
//! populations and block counts, here or as a Slurm job array. It runs
//! tools and reads their results; what a design is, and its files, are
//! the generator's.

pub mod cosim;
pub mod cosim_axi;
pub mod cosim_train;
pub mod implement;
pub mod sta;
pub mod sweep;
pub mod synth;
