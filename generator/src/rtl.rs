//! The hand-written RTL library (`rtl/` in this repository), compiled into
//! the binary so that the generator is self-contained. A design gets the
//! files its layers' kinds name ([`crate::layers::LayerHw::library`]; a
//! kind's own module file is defined with its kind), the shared include
//! file [`CLOG2`], and with a `training:` section the trainer's
//! [`TRAINER`] files.

/// A library file: its name under `rtl/` and its text.
pub type RtlFile = (&'static str, &'static str);

/// The one definition of the constant function `clog2`, included in the
/// body of every module that derives a width from its sizes. Not a
/// compilation unit: build scripts put `rtl/` on the include path.
pub const CLOG2: RtlFile = ("fptgen_clog2.vh", include_str!("../../rtl/fptgen_clog2.vh"));

/// Every cast between formats.
pub const CAST: RtlFile = ("fptgen_cast.v", include_str!("../../rtl/fptgen_cast.v"));

/// A parameter memory: ROM, or block RAM with a trainer port.
pub const PARAM_MEM: RtlFile = ("fptgen_param_mem.v", include_str!("../../rtl/fptgen_param_mem.v"));

/// The ES trainer's part of the library, added to designs with a
/// `training:` section.
pub const TRAINER: &[RtlFile] = &[
    ("fptgen_lfsr_advance.v", include_str!("../../rtl/fptgen_lfsr_advance.v")),
    ("fptgen_itb.v", include_str!("../../rtl/fptgen_itb.v")),
    ("fptgen_itb_ring.v", include_str!("../../rtl/fptgen_itb_ring.v")),
    ("fptgen_po2.v", include_str!("../../rtl/fptgen_po2.v")),
    ("fptgen_es_step.v", include_str!("../../rtl/fptgen_es_step.v")),
    ("fptgen_es_update.v", include_str!("../../rtl/fptgen_es_update.v")),
    ("fptgen_loss_acc.v", include_str!("../../rtl/fptgen_loss_acc.v")),
    ("fptgen_param_walk.v", include_str!("../../rtl/fptgen_param_walk.v")),
    ("fptgen_param_cursor.v", include_str!("../../rtl/fptgen_param_cursor.v")),
    ("fptgen_sample_buf.v", include_str!("../../rtl/fptgen_sample_buf.v")),
    ("fptgen_es_ctrl.v", include_str!("../../rtl/fptgen_es_ctrl.v")),
    ("fptgen_reg.v", include_str!("../../rtl/fptgen_reg.v")),
    ("fptgen_counter.v", include_str!("../../rtl/fptgen_counter.v")),
    ("fptgen_select.v", include_str!("../../rtl/fptgen_select.v")),
];

/// The difference unit of ES evaluation by difference, with its blocks.
pub const DIFF: &[RtlFile] = &[
    ("fptgen_delta_lanes.v", include_str!("../../rtl/fptgen_delta_lanes.v")),
    ("fptgen_delta_finish.v", include_str!("../../rtl/fptgen_delta_finish.v")),
    ("fptgen_diff_eval.v", include_str!("../../rtl/fptgen_diff_eval.v")),
];

/// The shell `fptgen implement` places a design in (not part of a design).
pub const IO_SHELL: RtlFile = ("fptgen_io_shell.v", include_str!("../../rtl/fptgen_io_shell.v"));

/// The synthetic-gradient module of `rule: sgm`.
pub const SGM: RtlFile = ("fptgen_fb_sgm.v", include_str!("../../rtl/fptgen_fb_sgm.v"));

/// The feedback-rule trainer's files (with the sample buffer, LFSR and
/// cursor it shares with the ES trainer).
pub const FEEDBACK: &[RtlFile] = &[
    ("fptgen_lfsr_advance.v", include_str!("../../rtl/fptgen_lfsr_advance.v")),
    ("fptgen_lfsr.v", include_str!("../../rtl/fptgen_lfsr.v")),
    ("fptgen_round_shift.v", include_str!("../../rtl/fptgen_round_shift.v")),
    ("fptgen_fb_delta.v", include_str!("../../rtl/fptgen_fb_delta.v")),
    ("fptgen_fb_fprime.v", include_str!("../../rtl/fptgen_fb_fprime.v")),
    ("fptgen_fb_step.v", include_str!("../../rtl/fptgen_fb_step.v")),
    ("fptgen_fb_layer.v", include_str!("../../rtl/fptgen_fb_layer.v")),
    ("fptgen_fb_conv.v", include_str!("../../rtl/fptgen_fb_conv.v")),
    ("fptgen_fb_error.v", include_str!("../../rtl/fptgen_fb_error.v")),
    ("fptgen_fb_ctrl.v", include_str!("../../rtl/fptgen_fb_ctrl.v")),
    ("fptgen_param_walk.v", include_str!("../../rtl/fptgen_param_walk.v")),
    ("fptgen_param_cursor.v", include_str!("../../rtl/fptgen_param_cursor.v")),
    ("fptgen_sample_buf.v", include_str!("../../rtl/fptgen_sample_buf.v")),
    ("fptgen_select.v", include_str!("../../rtl/fptgen_select.v")),
];

/// The trainer's serializer of whole input vectors into the pixel beats of
/// a network whose input is an image.
pub const SERIALIZE: RtlFile = ("fptgen_serialize.v", include_str!("../../rtl/fptgen_serialize.v"));

/// A fork: one stream to two, each behind a FIFO (graphs).
pub const FORK: RtlFile = ("fptgen_fork.v", include_str!("../../rtl/fptgen_fork.v"));

/// A join: two streams to one beat, channel concatenation (graphs).
pub const CONCAT: RtlFile = ("fptgen_concat.v", include_str!("../../rtl/fptgen_concat.v"));

/// A skid buffer: a registered valid/ready stage with a registered ready,
/// at the layer boundaries of the top level.
pub const SKID: RtlFile = ("fptgen_skid.v", include_str!("../../rtl/fptgen_skid.v"));

/// The AXI wrapper's part of the library (`fptgen generate --axi`): the
/// stream gather and scatter, the AXI4-Lite slave and its register read
/// multiplexer.
pub const AXI: &[RtlFile] = &[
    ("fptgen_axis_gather.v", include_str!("../../rtl/fptgen_axis_gather.v")),
    ("fptgen_axis_scatter.v", include_str!("../../rtl/fptgen_axis_scatter.v")),
    ("fptgen_axil_slave.v", include_str!("../../rtl/fptgen_axil_slave.v")),
    ("fptgen_axil_read_mux.v", include_str!("../../rtl/fptgen_axil_read_mux.v")),
];

/// The AXI wrapper's files for a design with a trainer: a weight window's
/// decode, and the trainer's control, status and event registers.
pub const AXI_TRAINER: &[RtlFile] = &[
    ("fptgen_axil_window.v", include_str!("../../rtl/fptgen_axil_window.v")),
    ("fptgen_axil_trainer.v", include_str!("../../rtl/fptgen_axil_trainer.v")),
];

/// One int32-to-int8 requantization (TFLite's MultiplyByQuantizedMultiplier,
/// offset and clamp).
pub const REQUANT: RtlFile = ("fptgen_requant.v", include_str!("../../rtl/fptgen_requant.v"));

/// A vector of requantizations as one valid/ready pipeline.
pub const REQUANT_VEC: RtlFile = ("fptgen_requant_vec.v", include_str!("../../rtl/fptgen_requant_vec.v"));

/// True for a file that is compiled (a module), false for an include file.
pub fn is_module(name: &str) -> bool {
    name.ends_with(".v")
}
