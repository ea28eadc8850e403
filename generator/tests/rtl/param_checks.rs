//! The RTL library's parameter checks (docs/hardware.md, "Parameter
//! checks"): a failed check instantiates a module that intentionally does
//! not exist, `fptgen_param_error_<module>_<reason>`, which stops
//! elaboration in every tool; Verilog-2001 has no `$error`.
//!
//! For every module of `rtl/`, as the top with its default parameters and
//! then with one parameter overridden to an illegal value:
//!
//! * `verilator --lint-only -Wall` (parameters by `-G`): silent with the
//!   defaults (so an undefined module in an untaken generate branch is not
//!   reported), an error naming the check's module otherwise;
//! * yosys `read_verilog -defer` + `hierarchy -check` (parameters by
//!   `-chparam`), as `synth_xilinx` starts: the same;
//! * `iverilog -g2001` (parameters by `-P`): the same.
//!
//! Verilator, yosys and iverilog are required: without them this test fails
//! (it never skips).

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::{require_tool, scratch};

/// A module's illegal parameter sets: (parameter, value, the check's module).
struct Case {
    module: &'static str,
    bad: &'static [(&'static str, i64, &'static str)],
}

const CASES: &[Case] = &[
    Case {
        module: "fptgen_swg",
        bad: &[
            ("C", 0, "fptgen_param_error_swg_size_below_1"),
            ("STRIDE", 3, "fptgen_param_error_swg_stride_not_1_or_2"),
            ("PAD", 2, "fptgen_param_error_swg_pad_not_0_or_1"),
            ("H", 2, "fptgen_param_error_swg_valid_image_below_3x3"),
        ],
    },
    Case {
        module: "fptgen_maxpool",
        bad: &[
            ("C", 0, "fptgen_param_error_maxpool_size_below_1"),
            ("H", 1, "fptgen_param_error_maxpool_image_below_2x2"),
            ("X_S", 2, "fptgen_param_error_maxpool_x_s_not_0_or_1"),
        ],
    },
    Case { module: "fptgen_flatten", bad: &[("BEATS", 0, "fptgen_param_error_flatten_size_below_1")] },
    Case { module: "fptgen_serialize", bad: &[("BEAT_W", 0, "fptgen_param_error_serialize_size_below_1")] },
    Case {
        module: "fptgen_fork",
        bad: &[
            ("W", 0, "fptgen_param_error_fork_w_below_1"),
            ("DEPTH0", 0, "fptgen_param_error_fork_depth0_below_1"),
            ("DEPTH1", 0, "fptgen_param_error_fork_depth1_below_1"),
        ],
    },
    Case {
        module: "fptgen_concat",
        bad: &[("W0", 0, "fptgen_param_error_concat_w0_below_1"), ("W1", 0, "fptgen_param_error_concat_w1_below_1")],
    },
    Case { module: "fptgen_skid", bad: &[("W", 0, "fptgen_param_error_skid_w_below_1")] },
    Case { module: "fptgen_reg", bad: &[("W", 0, "fptgen_param_error_reg_w_below_1")] },
    Case { module: "fptgen_counter", bad: &[("W", 0, "fptgen_param_error_counter_w_below_1")] },
    Case {
        module: "fptgen_select",
        bad: &[
            ("N", 0, "fptgen_param_error_select_out_of_range"),
            ("W", 0, "fptgen_param_error_select_out_of_range"),
            ("SEL_W", 0, "fptgen_param_error_select_out_of_range"),
            ("SEL_W", 32, "fptgen_param_error_select_out_of_range"),
            ("N", 3, "fptgen_param_error_select_out_of_range"),
        ],
    },
    Case {
        module: "fptgen_io_shell",
        bad: &[("IN_W", 0, "fptgen_param_error_io_shell_in_w_below_1"), ("OUT_W", 0, "fptgen_param_error_io_shell_out_w_below_1")],
    },
    Case {
        module: "fptgen_bn",
        bad: &[
            ("C", 0, "fptgen_param_error_bn_c_below_1"),
            ("A_W", 65, "fptgen_param_error_bn_width_not_1_to_64"),
            ("RELU", 2, "fptgen_param_error_bn_flag_not_0_or_1"),
            ("Y_Q", 7, "fptgen_param_error_bn_mode_out_of_range"),
        ],
    },
    Case {
        module: "fptgen_cast",
        bad: &[
            ("IN_W", 0, "fptgen_param_error_cast_in_w_below_1"),
            ("OUT_W", 65, "fptgen_param_error_cast_out_w_not_1_to_64"),
            ("OUT_SIGNED", 2, "fptgen_param_error_cast_out_signed_not_0_or_1"),
            ("QUANT", 7, "fptgen_param_error_cast_quant_not_0_to_6"),
            ("OVF", 4, "fptgen_param_error_cast_ovf_not_0_to_3"),
        ],
    },
    Case {
        module: "fptgen_dense",
        bad: &[
            ("PE", 5, "fptgen_param_error_dense_pe_or_simd_out_of_range"),
            ("TREE", 2, "fptgen_param_error_dense_tree_needs_exact_products"),
            // Packed products feed only the adder tree (TREE is 0 by default).
            ("PACK", 1, "fptgen_param_error_dense_pack_needs_tree"),
            ("MEM_REG", 2, "fptgen_param_error_dense_mem_reg_not_0_or_1"),
            ("X_ROTATE", 2, "fptgen_param_error_dense_x_rotate_not_0_or_1"),
        ],
    },
    Case {
        module: "fptgen_delta_finish",
        bad: &[
            ("S_W", 1, "fptgen_param_error_delta_finish_s_w_not_2_to_64"),
            ("SHIFT", 64, "fptgen_param_error_delta_finish_shift_not_0_to_63"),
            ("A_W", 65, "fptgen_param_error_delta_finish_width_out_of_range"),
            ("RELU", 2, "fptgen_param_error_delta_finish_relu_not_0_or_1"),
        ],
    },
    Case {
        module: "fptgen_delta_lanes",
        bad: &[
            ("SLOTS", 0, "fptgen_param_error_delta_lanes_size_below_1"),
            ("D_W", 1, "fptgen_param_error_delta_lanes_width_out_of_range"),
            ("X_S", 2, "fptgen_param_error_delta_lanes_x_s_not_0_or_1"),
        ],
    },
    Case {
        module: "fptgen_diff_eval",
        bad: &[
            ("M", 0, "fptgen_param_error_diff_eval_count_out_of_range"),
            ("WORDS", 2, "fptgen_param_error_diff_eval_words_do_not_fit_inputs"),
            ("PW", 1, "fptgen_param_error_diff_eval_width_out_of_range"),
            ("B_TRAIN", 2, "fptgen_param_error_diff_eval_train_flags_invalid"),
            ("SLOTS", 3, "fptgen_param_error_diff_eval_size_out_of_range"),
        ],
    },
    Case {
        module: "fptgen_es_ctrl",
        bad: &[
            ("P", 7, "fptgen_param_error_es_ctrl_count_out_of_range"),
            ("N", 3, "fptgen_param_error_es_ctrl_antithetic_needs_even_n"),
            ("DIFF", 2, "fptgen_param_error_es_ctrl_diff_not_0_or_1"),
        ],
    },
    Case {
        module: "fptgen_es_update",
        bad: &[
            ("SIGMA", 32, "fptgen_param_error_es_update_out_of_range"),
            ("SIGMA", -1, "fptgen_param_error_es_update_out_of_range"),
            ("P_W", 0, "fptgen_param_error_es_update_out_of_range"),
            ("P_W", 66, "fptgen_param_error_es_update_out_of_range"),
            ("E_W", 1, "fptgen_param_error_es_update_out_of_range"),
            ("E_W", 35, "fptgen_param_error_es_update_out_of_range"),
            ("LR_SHIFT", -32, "fptgen_param_error_es_update_out_of_range"),
            ("LR_SHIFT", 32, "fptgen_param_error_es_update_out_of_range"),
        ],
    },
    Case {
        module: "fptgen_es_step",
        bad: &[("LR_SHIFT", 32, "fptgen_param_error_es_step_out_of_range"), ("LR_SHIFT", -32, "fptgen_param_error_es_step_out_of_range")],
    },
    Case { module: "fptgen_itb", bad: &[("NOISE_BITS", 2, "fptgen_param_error_itb_out_of_range")] },
    Case { module: "fptgen_itb_ring", bad: &[("SEEDS", 0, "fptgen_param_error_itb_ring_out_of_range")] },
    Case {
        module: "fptgen_fb_layer",
        bad: &[
            ("MODE", 4, "fptgen_param_error_fb_layer_out_of_range"),
            ("X_OFF", 256, "fptgen_param_error_fb_layer_offset_out_of_range"),
        ],
    },
    Case { module: "fptgen_fb_sgm", bad: &[("SHIFT_H", 32, "fptgen_param_error_fb_sgm_out_of_range")] },
    Case { module: "fptgen_fb_conv", bad: &[("STRIDE", 3, "fptgen_param_error_fb_conv_out_of_range")] },
    Case { module: "fptgen_fb_delta", bad: &[("MODE", 4, "fptgen_param_error_fb_delta_out_of_range")] },
    Case { module: "fptgen_fb_step", bad: &[("STOCH_W", 1, "fptgen_param_error_fb_step_stochastic_needs_positive_shift")] },
    Case { module: "fptgen_fb_fprime", bad: &[("FP_MODE", 3, "fptgen_param_error_fb_fprime_out_of_range")] },
    Case { module: "fptgen_fb_error", bad: &[("E_W", 9, "fptgen_param_error_fb_error_out_of_range")] },
    Case { module: "fptgen_fb_ctrl", bad: &[("SERVE_MAX", 0, "fptgen_param_error_fb_ctrl_out_of_range")] },
    Case {
        module: "fptgen_round_shift",
        bad: &[("SHIFT", 65, "fptgen_param_error_round_shift_out_of_range"), ("RND_W", 2, "fptgen_param_error_round_shift_rnd_w_mismatch")],
    },
    Case { module: "fptgen_lfsr", bad: &[("SEED", 0, "fptgen_param_error_lfsr_seed_zero")] },
    Case {
        module: "fptgen_lfsr_advance",
        bad: &[
            ("WIDTH", 12, "fptgen_param_error_lfsr_width_not_8_16_32"),
            ("BITS", 0, "fptgen_param_error_lfsr_bits_not_1_to_width"),
            ("BITS", 9, "fptgen_param_error_lfsr_bits_not_1_to_width"),
        ],
    },
    Case { module: "fptgen_loss_acc", bad: &[("Y_W", 65, "fptgen_param_error_loss_acc_out_of_range")] },
    Case {
        module: "fptgen_param_mem",
        bad: &[
            ("COLS", 0, "fptgen_param_error_param_mem_size_below_1"),
            ("BANK_COLS", 2, "fptgen_param_error_param_mem_bank_cols_out_of_range"),
        ],
    },
    Case {
        module: "fptgen_param_walk",
        bad: &[
            ("PE", 9, "fptgen_param_error_param_walk_out_of_range"),
            ("PE", 0, "fptgen_param_error_param_walk_out_of_range"),
            ("SIMD", 5, "fptgen_param_error_param_walk_out_of_range"),
            ("SIMD", 0, "fptgen_param_error_param_walk_out_of_range"),
            ("ROWS", 0, "fptgen_param_error_param_walk_out_of_range"),
            ("COLS", 0, "fptgen_param_error_param_walk_out_of_range"),
        ],
    },
    Case { module: "fptgen_param_cursor", bad: &[("P", 0, "fptgen_param_error_param_cursor_out_of_range")] },
    Case { module: "fptgen_po2", bad: &[("S_W", 1, "fptgen_param_error_po2_out_of_range"), ("S_W", 0, "fptgen_param_error_po2_out_of_range")] },
    Case {
        module: "fptgen_requant",
        bad: &[
            ("ROUNDING", 2, "fptgen_param_error_requant_rounding_not_0_or_1"),
            ("OUT_W", 1, "fptgen_param_error_requant_out_w_out_of_range"),
            ("ACT_MAX", 128, "fptgen_param_error_requant_clamp_out_of_range"),
        ],
    },
    Case {
        module: "fptgen_requant_vec",
        bad: &[("N", 0, "fptgen_param_error_requant_vec_size_below_1"), ("N", -1, "fptgen_param_error_requant_vec_size_below_1")],
    },
    Case { module: "fptgen_sample_buf", bad: &[("WORDS", 2, "fptgen_param_error_sample_buf_out_of_range")] },
    Case {
        module: "fptgen_axis_gather",
        bad: &[("K", 0, "fptgen_param_error_axis_gather_size_below_1"), ("BEAT_W", 17, "fptgen_param_error_axis_gather_beat_wider_than_transfers")],
    },
    Case {
        module: "fptgen_axis_scatter",
        bad: &[("BATCH", 0, "fptgen_param_error_axis_scatter_size_below_1"), ("BEAT_W", 17, "fptgen_param_error_axis_scatter_beat_wider_than_transfers")],
    },
    Case { module: "fptgen_axil_slave", bad: &[("ADDR_W", 2, "fptgen_param_error_axil_slave_addr_w_not_3_to_32")] },
    Case {
        module: "fptgen_axil_window",
        bad: &[
            ("DEPTH", 3, "fptgen_param_error_axil_window_geometry_out_of_range"),
            ("BASE", 4100, "fptgen_param_error_axil_window_base_out_of_range"),
            ("WIDTH", 9, "fptgen_param_error_axil_window_format_out_of_range"),
        ],
    },
    Case {
        module: "fptgen_axil_read_mux",
        bad: &[
            ("AW", 33, "fptgen_param_error_axil_read_mux_size_out_of_range"),
            // Both registers at address 0.
            ("ADDRS", 0, "fptgen_param_error_axil_read_mux_duplicate_address"),
        ],
    },
    Case { module: "fptgen_axil_trainer", bad: &[("ITERATIONS", 16, "fptgen_param_error_axil_trainer_addresses_out_of_range")] },
];

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The three tools on `module` as the top, with `param` (if any) set.
/// Returns each tool's name, success and output.
fn elaborate(dir: &Path, module: &str, param: Option<(&str, i64)>) -> Vec<(&'static str, bool, String)> {
    let lib: Vec<String> = fs::read_dir(dir)
        .expect("scratch")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".v"))
        .collect();
    let mut out = Vec::new();

    let mut v = Command::new("verilator");
    v.args(["--lint-only", "-Wall", "--top-module", module]);
    if let Some((p, x)) = param {
        v.arg(format!("-G{p}={x}"));
    }
    let o = v.args(&lib).current_dir(dir).output().expect("run verilator");
    out.push(("verilator --lint-only -Wall", o.status.success(), text(&o)));

    // (yosys reads a negative value only as a sized signed literal.)
    let chparam = param
        .map(|(p, x)| if x < 0 { format!(" -chparam {p} 32'sh{:08x}", x as u32) } else { format!(" -chparam {p} {x}") })
        .unwrap_or_default();
    let script = format!("read_verilog -defer {}; hierarchy -check{chparam} -top {module}", lib.join(" "));
    let o = Command::new("yosys").args(["-q", "-p", &script]).current_dir(dir).output().expect("run yosys");
    out.push(("yosys hierarchy -check", o.status.success(), text(&o)));

    let mut i = Command::new("iverilog");
    i.args(["-g2001", "-o", "/dev/null", "-s", module]);
    if let Some((p, x)) = param {
        i.arg(format!("-P{module}.{p}={x}"));
    }
    let o = i.args(&lib).current_dir(dir).output().expect("run iverilog");
    out.push(("iverilog -g2001", o.status.success(), text(&o)));
    out
}

#[test]
fn illegal_parameters_stop_elaboration_in_every_tool() {
    require_tool("verilator", "--version");
    require_tool("yosys", "-V");
    require_tool("iverilog", "-V");
    let dir = scratch("rtl_param_checks");
    let rtl = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl");
    for e in fs::read_dir(&rtl).expect("rtl/") {
        let p = e.expect("entry").path();
        // The modules, and the include file they share (found in the
        // working directory by every tool).
        if p.extension().is_some_and(|x| x == "v" || x == "vh") {
            fs::copy(&p, dir.join(p.file_name().expect("name"))).expect("copy");
        }
    }
    // Images for the default INIT_FILE, W_FILE, B_FILE, S_FILE, H_FILE,
    // V_FILE and U_FILE
    // (yosys reads them).
    for f in ["mem.hex", "w.hex", "b.hex", "scale.hex", "shift.hex", "sgm_v.hex", "sgm_u.hex"] {
        fs::write(dir.join(f), "00\n").expect("image");
    }
    // Every library module has a check, and every check is exercised here.
    let mut modules: Vec<String> = fs::read_dir(&rtl)
        .expect("rtl/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".v").map(str::to_string))
        .collect();
    modules.sort();
    let mut tested: Vec<String> = CASES.iter().map(|c| c.module.to_string()).collect();
    tested.sort();
    assert_eq!(modules, tested, "every module in rtl/ needs a case here");
    for c in CASES {
        let source = fs::read_to_string(rtl.join(format!("{}.v", c.module))).expect("source");
        // A check of several conditions has a row per condition.
        let checks = source.matches(" error_inst ();").count();
        let mut tested: Vec<&str> = c.bad.iter().map(|b| b.2).collect();
        tested.sort_unstable();
        tested.dedup();
        assert_eq!(checks, tested.len(), "{}: {checks} checks in the source, {} tested", c.module, tested.len());
        assert!(!source.contains("$error"), "{}: $error is SystemVerilog", c.module);
    }

    let mut failures = Vec::new();
    for c in CASES {
        for (tool, ok, out) in elaborate(&dir, c.module, None) {
            if !ok || !out.trim().is_empty() {
                failures.push(format!("{} with its default parameters: {tool} is not silent:\n{out}", c.module));
            }
        }
        for &(p, x, check) in c.bad {
            for (tool, ok, out) in elaborate(&dir, c.module, Some((p, x))) {
                if ok {
                    failures.push(format!("{} with {p} = {x}: {tool} accepted it:\n{out}", c.module));
                } else if !out.contains(check) {
                    failures.push(format!("{} with {p} = {x}: {tool} failed without naming {check}:\n{out}", c.module));
                }
            }
        }
    }
    assert!(failures.is_empty(), "files in {}:\n{}", dir.display(), failures.join("\n"));
    fs::remove_dir_all(&dir).ok();
}
