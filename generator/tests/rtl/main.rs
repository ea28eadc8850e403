//! The testbench of every module of the RTL library `rtl/`: one module
//! here per `rtl/fptgen_<name>.v`, `<name>.rs` (e.g. `po2.rs` for
//! `rtl/fptgen_po2.v`), each a Verilator bench against a model written in
//! the test, and `param_checks.rs`, every module's parameter checks in
//! Verilator, yosys and Icarus Verilog.
//!
//! They are one test binary, not one per module, so the fast tier links it
//! once and tests of different modules run in parallel (cargo runs test
//! binaries one after another). One module's tests:
//! `cargo test -p fptgen-generator --test rtl po2::`. A new library module's
//! testbench is `generator/tests/rtl/<name>.rs` and one `mod` line below.
//!
//! The tests share one process: a scratch directory's name
//! (`common::scratch`, name and process id) must be unique across all the
//! modules (they start with `rtl_<module>`), and no test may change
//! process-wide state (environment, current directory).

#[path = "../common/mod.rs"]
mod common;
#[path = "../fb_layer_model/mod.rs"]
mod fb_layer_model;
#[path = "../pixel_stream/mod.rs"]
mod pixel_stream;
#[path = "../port_stream/mod.rs"]
mod port_stream;

mod axil_read_mux;
mod axil_slave;
mod axil_trainer;
mod axil_window;
mod axis_gather;
mod axis_scatter;
mod bn;
mod cast;
mod concat;
mod counter;
mod delta_finish;
mod delta_lanes;
mod dense;
mod diff_eval;
mod es_ctrl;
mod es_step;
mod es_update;
mod fb_conv;
mod fb_ctrl;
mod fb_delta;
mod fb_error;
mod fb_fprime;
mod fb_layer;
mod fb_sgm;
mod fb_step;
mod flatten;
mod fork;
mod io_shell;
mod itb;
mod itb_ring;
mod lfsr;
mod lfsr_advance;
mod loss_acc;
mod maxpool;
mod param_checks;
mod param_cursor;
mod param_mem;
mod param_walk;
mod po2;
mod reg;
mod requant;
mod requant_vec;
mod round_shift;
mod sample_buf;
mod select;
mod serialize;
mod skid;
mod swg;
