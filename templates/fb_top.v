{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Network {= n.name =} with its on-chip {= t.rule =} trainer (docs/training.md, "Feedback rules"
 * and "Hardware of the feedback rules").
 *
 * The inference pipeline ({= n.name =}_net: II {= n.ii =}, latency {= n.latency =} cycles) and:
 *   - the controller (fptgen_fb_ctrl): each buffered sample in turn goes through the pipeline
 *     once, then its deltas are made and every trainable parameter is updated in place;
 *   - the error unit (fptgen_fb_error): e = y - t and the target class k*;
 *   - per trainable layer (fptgen_fb_layer) the capture of its input and f'(output), the
 *     feedback from a 32-bit LFSR (B is never stored), the deltas and the power-of-two steps:
{%- for l in t.layers %}
 *       {= l.name =}: {= l.summary() =}
{%- endfor %}
 *   - the parameter cursor (fptgen_param_cursor) and one update unit: clamp(p - step);
 *   - a {= t.m =}-sample buffer (fptgen_sample_buf, inputs as {= t.words =} word(s) of {= t.word_w =} bits),
 *     loaded through the ld_* stream.
 * A sample takes {= t.sample_fixed =} cycles{% if t.has_sgm() %} (of which {= t.sgm_cycles =} for the synthetic-gradient modules){% endif %} plus the update walk: 3 per parameter of a row
 * whose delta is nonzero, 1 per other parameter (T = {= t.t =}).
 *
 * Trainable tensors, in training order (each in block RAM, written only
 * through its memory's trainer port):
{%- for x in t.tensors %}
 *   {= x.index =}: {= x.layer =} {= x.role =}, {= x.count =} parameters, clamped to [{= x.lo =}, {= x.hi =}]
{%- endfor %}
 *
 * Streams carry whole vectors (element k at bits [k*W +: W]). in/out are
 * answered with the committed parameters at any time: at full rate while
 * training is idle, paused or done, between samples while it runs.
 * ld_x/ld_t load the buffer while training is not running: {= t.words =} word(s) per
 * input vector, the target (raw codes of the output format) with the last.
 * ctl_* are one-cycle pulses. mon_valid marks events: kind 0 a delta
 * (mon_index = its position among the trainable layers' outputs, mon_value
 * the delta), kind 1 a parameter written (mon_index = its position in the
 * training order, mon_value the new value), values sign-extended to
 * {= t.value_w =} bits.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= n.name =} (
{%- include "trainer_ports.v" %}
    output wire [{= t.sample_w - 1 =}:0] st_sample,
    // training events
    output wire mon_valid,
    output wire mon_kind,
    output wire [{= t.ix_w - 1 =}:0] mon_index,
    output wire [{= t.value_w - 1 =}:0] mon_value
{% include "trainer_dump_port.v" %}
);

localparam integer PW = {= t.param_w =};   // signed parameter codes
localparam integer SW = {= t.s_w =};   // saturated steps
localparam integer DW = {= t.d_w =};   // deltas
localparam integer EW = {= t.e_w =};   // errors
localparam integer VW = {= t.value_w =};   // mon_value

// ---------------------------------------------------------------------------
// Controller
wire ext_mode, ext_accept, ld_enable, play, x_allow;
wire err_cap, e_rot, e_scan, d_seed, d_last, u_bias, d_zero, h_start;
wire [{= t.k_w() - 1 =}:0] k;
wire [{= t.layers.len() - 1 =}:0] d_step, u_row, u_col, u_acc;
wire [{= t.layer_w() - 1 =}:0] u_layer;
wire cur_clear, cur_step, op_read, op_write;
wire net_in_ready, net_out_valid;
wire [{= n.out_bits() - 1 =}:0] net_out_data;
wire ext_in_fire = in_valid && in_ready;
wire ext_out_fire = out_valid && out_ready;
wire train_out_fire = !ext_mode && net_out_valid;
wire x_fire;
wire [{= t.ix_w - 1 =}:0] ev_index;
wire ev_valid, ev_kind;

fptgen_fb_ctrl #(
    .K({= t.tensors.len() =}),
    .L({= t.layers.len() =}),
    .M({= t.m =}),
    .C({= t.c =}),
    .SERVE_MAX({= t.serve_max =}),
{%- for (p, v) in t.ctrl_params() %}
    .{= p =}({= v =}),
{%- endfor %}
    .IX_W({= t.ix_w =}),
    .SGM_CYCLES({= t.sgm_cycles =})
) u_ctrl (
    .clk(clk),
    .rst(rst),
    .ctl_start(ctl_start),
    .ctl_pause(ctl_pause),
    .ctl_resume(ctl_resume),
    .cfg_iterations(cfg_iterations),
    .st_busy(st_busy),
    .st_paused(st_paused),
    .st_done(st_done),
    .st_iteration(st_iteration),
    .st_sample(st_sample),
    .ext_mode(ext_mode),
    .ext_accept(ext_accept),
    .ext_in_valid(in_valid),
    .ext_in_fire(ext_in_fire),
    .ext_out_fire(ext_out_fire),
    .ld_enable(ld_enable),
    .play(play),
    .x_allow(x_allow),
    .x_fire(x_fire),
    .out_fire(train_out_fire),
    .err_cap(err_cap),
    .e_rot(e_rot),
    .e_scan(e_scan),
    .k(k),
    .h_start(h_start),
    .d_seed(d_seed),
    .d_step(d_step),
    .d_last(d_last),
    .u_row(u_row),
    .u_col(u_col),
    .u_bias(u_bias),
    .u_acc(u_acc),
    .u_layer(u_layer),
    .d_zero(d_zero),
    .cur_clear(cur_clear),
    .cur_step(cur_step),
    .op_read(op_read),
    .op_write(op_write),
    .mon_valid(ev_valid),
    .mon_kind(ev_kind),
    .mon_index(ev_index)
);

// Buffered samples enter only when the controller feeds one.
wire x_gate = x_allow;
{% include "trainer_buffer_whole.v" %}

{% include "trainer_buffer.v" %}

assign x_fire = x_valid && x_ready;

// ---------------------------------------------------------------------------
// Error unit: y and t of the sample, e = y - t and k*
wire [EW-1:0] e;
wire kstar;

fptgen_fb_error #(
    .C({= t.c =}),
    .Y_W({= n.y.width =}),
    .Y_S({= n.y.signed =}),
    .E_W(EW)
) u_error (
    .clk(clk),
    .cap(err_cap),
    .y(net_out_data),
    .t(t_data),
    .rot(e_rot),
    .scan(e_scan),
    .k(k),
    .e(e),
    .kstar(kstar)
);

// ---------------------------------------------------------------------------
// Trainable layers: capture (taps of the pipeline, training samples only),
// deltas and steps
{%- for l in t.layers %}
wire [{= l.x_beat_w - 1 =}:0] tap_{= l.name =}_x;
wire [{= l.a_beat_w - 1 =}:0] tap_{= l.name =}_a;
wire tap_{= l.name =}_x_fire, tap_{= l.name =}_a_fire;
{%- endfor %}
wire [{= t.layers.len() =}*DW-1:0] d_value_flat;
wire [{= t.layers.len() =}*SW-1:0] step_flat;
wire [{= t.layers.len() - 1 =}:0] d_zero_flat;
{%- if !t.has_sgm() %}
wire unused_h_start = h_start;
{%- endif %}
{%- for l in t.layers %}{% if l.conv.is_none() %}
wire unused_u_acc_{= l.name =} = u_acc[{= l.index =}];
{%- endif %}{% endfor %}
{% for l in t.layers %}
{%- match l.sgm %}
{%- when Some with (sg) %}
// {= l.name =}'s synthetic-gradient module
wire [EW-1:0] sgm_{= l.name =}_h;
wire [7:0] sgm_{= l.name =}_u;
{%- if let Some(cv) = l.conv %}
// its output image (one pixel per beat) collected into one vector
wire [{= l.n_out * l.a_w as usize - 1 =}:0] sgm_{= l.name =}_a;
wire sgm_{= l.name =}_a_valid, sgm_{= l.name =}_a_ready;
wire unused_sgm_{= l.name =}_a_ready = sgm_{= l.name =}_a_ready;

fptgen_flatten #(
    .BEATS({= cv.oh * cv.ow =}),
    .BEAT_W({= l.a_beat_w =})
) u_sgm_flat_{= l.name =} (
    .clk(clk),
    .rst(rst),
    .in_data(tap_{= l.name =}_a),
    .in_valid(tap_{= l.name =}_a_fire && !ext_mode),
    .in_ready(sgm_{= l.name =}_a_ready),
    .out_data(sgm_{= l.name =}_a),
    .out_valid(sgm_{= l.name =}_a_valid),
    .out_ready(1'b1)
);
{%- endif %}

fptgen_fb_sgm #(
    .N_OUT({= l.n_out =}),
    .C({= t.c =}),
    .A_W({= l.a_w =}),
    .A_S({= l.a_s =}),
    .Y_W({= n.y.width =}),
    .Y_S({= n.y.signed =}),
    .SHIFT_A({= sg.shift_a =}),
    .SHIFT_T({= sg.shift_t =}),
    .SHIFT_H({= sg.shift_h() =}),
    .E_W(EW),
    .C_VALUES({= sg.c_values() =}),
    .V_FILE("{= sg.v_file =}"),
    .U_FILE("{= sg.u_file =}")
) u_sgm_{= l.name =} (
    .clk(clk),
    .rst(rst),
{%- if l.conv.is_some() %}
    .a_cap(sgm_{= l.name =}_a_valid),
    .a_data(sgm_{= l.name =}_a),
{%- else %}
    .a_cap(tap_{= l.name =}_a_fire && !ext_mode),
    .a_data(tap_{= l.name =}_a),
{%- endif %}
    .t_cap(err_cap),
    .t_data(t_data),
    .h_start(h_start),
    .d_seed(d_seed),
    .d_step(d_step[{= l.index =}]),
    .s_h(sgm_{= l.name =}_h),
    .s_u(sgm_{= l.name =}_u)
);
{%- when None %}
{%- endmatch %}

{%- match l.conv %}
{%- when Some with (cv) %}
fptgen_fb_conv #(
    .H({= cv.h =}),
    .W({= cv.w =}),
    .CIN({= cv.cin =}),
    .OH({= cv.oh =}),
    .OW({= cv.ow =}),
    .F({= cv.filters =}),
    .STRIDE({= cv.stride =}),
    .PAD_T({= cv.pad_t =}),
    .PAD_L({= cv.pad_l =}),
{%- when None %}
fptgen_fb_layer #(
    .N_IN({= l.n_in =}),
    .N_OUT({= l.n_out =}),
{%- endmatch %}
    .C({= t.c =}),
    .X_W({= l.x_w =}),
    .X_S({= l.x_s =}),
    .A_W({= l.a_w =}),
    .A_S({= l.a_s =}),
    .FP_MODE({= l.fp_mode =}),
    .A_MIN({= l.a_min =}),
    .A_MAX({= l.a_max =}),
{%- if l.conv.is_none() %}
    .X_OFF({= l.x_off =}),
{%- endif %}
    .MODE({= l.mode =}),
    .SEED({= l.seed_literal() =}),
    .E_W(EW),
    .D_W(DW),
    .SHIFT_W({= l.shift_w =}),
    .SHIFT_B({= l.shift_b =}),
    .SHIFT_G({% match l.sgm %}{% when Some with (sg) %}{= sg.shift_g() =}{% when None %}0{% endmatch %}),
    .S_W(SW),
    .STOCH_W({= l.rounding_w().0 =}),
    .STOCH_B({= l.rounding_b().0 =}),
    .SEED_W({= l.rounding_w().1 =}),
    .SEED_B({= l.rounding_b().1 =})
) u_fb_{= l.name =} (
    .clk(clk),
    .rst(rst),
    .x_cap(tap_{= l.name =}_x_fire && !ext_mode),
    .x_data(tap_{= l.name =}_x),
    .a_cap(tap_{= l.name =}_a_fire && !ext_mode),
    .a_data(tap_{= l.name =}_a),
    .d_seed(d_seed),
    .d_step(d_step[{= l.index =}]),
    .d_k(k),
    .d_last(d_last),
    .d_kstar(kstar),
    .d_e(e),
{%- match l.sgm %}
{%- when Some with (sg) %}
    .s_h(sgm_{= l.name =}_h),
    .s_u(sgm_{= l.name =}_u),
{%- when None %}
    .s_h({EW{1'b0}}),
    .s_u(8'd0),
{%- endmatch %}
    .d_value(d_value_flat[{= l.index =}*DW +: DW]),
    .u_row(u_row[{= l.index =}]),
    .u_col(u_col[{= l.index =}]),
    .u_bias(u_bias),
    .u_wr(op_write && u_layer == {= t.layer_w() =}'d{= l.index =}),
{%- if l.conv.is_some() %}
    .u_acc(u_acc[{= l.index =}]),
{%- endif %}
    .d_zero(d_zero_flat[{= l.index =}]),
    .u_step(step_flat[{= l.index =}*SW +: SW])
);
{% endfor %}
assign d_zero = d_zero_flat[u_layer];

// ---------------------------------------------------------------------------
// Parameter cursor and the update unit: clamp(p - step) to the tensor's range
wire [{= t.tensors.len() - 1 =}:0] tr_en, tr_we;
{%- for x in t.tensors %}
wire [{= x.addr_w - 1 =}:0] {= x.port() =}_tr_addr;
wire [{= x.col_w - 1 =}:0] {= x.port() =}_tr_col;
wire [{= x.width - 1 =}:0] {= x.port() =}_tr_rdata;
{%- endfor %}
wire [PW-1:0] sel_param, lo, hi;
// (the ES trainer's one-cycle-ahead outputs, unused here)
wire [PW-1:0] unused_ahead, unused_lo_ahead, unused_hi_ahead;
wire unused_cursor_ahead = (^unused_ahead) ^ (^unused_lo_ahead) ^ (^unused_hi_ahead);

fptgen_param_cursor #(
    .K({= t.tensors.len() =}),
    .P(1),
    .PW(PW),
{%- for (p, v) in t.cursor_params() %}
    .{= p =}({= v =}){% if !loop.last %},{% endif %}
{%- endfor %}
) u_cursor (
    .clk(clk),
    .rst(rst),
    .clear(cur_clear),
    .rewind(1'b0),
    .step(cur_step),
    .save(1'b0),
    .op_read(op_read),
    .op_write(op_write),
    .blk(1'b0),
    .blk_next(1'b0),
    .blk_ahead(1'b0),
    .tr_en(tr_en),
    .tr_we(tr_we),
    .tr_addr({= t.ports("tr_addr") =}),
    .tr_col({= t.ports("tr_col") =}),
    .tr_rdata({= t.ports("tr_rdata") =}),
    .param(sel_param),
    .lo(lo),
    .hi(hi),
    .param_ahead(unused_ahead),
    .lo_ahead(unused_lo_ahead),
    .hi_ahead(unused_hi_ahead)
);

wire [SW-1:0] step = step_flat[u_layer*SW +: SW];
wire signed [SW:0] diff = $signed({ {3{sel_param[PW-1]}}, sel_param}) - $signed({step[SW-1], step});
wire signed [SW:0] lo_ext = $signed({ {3{lo[PW-1]}}, lo});
wire signed [SW:0] hi_ext = $signed({ {3{hi[PW-1]}}, hi});
wire signed [SW:0] clamped = diff < lo_ext ? lo_ext : (diff > hi_ext ? hi_ext : diff);
wire [PW-1:0] wdata = clamped[PW-1:0];
wire unused_clamped = ^clamped[SW:PW];

// ---------------------------------------------------------------------------
// Events
// The delta being made: the value of the layer whose step it is.
wire [DW-1:0] d_value_sel ={% for l in t.layers %}{% if !loop.first %} |{% endif %}
    ({DW{d_step[{= l.index =}]}} & d_value_flat[{= l.index =}*DW +: DW]){% endfor %};
assign mon_valid = ev_valid;
assign mon_kind = ev_kind;
assign mon_index = ev_index;
{%- if t.value_w > t.d_w %}
wire [VW-1:0] ev_delta = {{(VW - DW){d_value_sel[DW-1]}}, d_value_sel};
{%- else %}
wire [VW-1:0] ev_delta = d_value_sel;
{%- endif %}
{%- if t.value_w > t.param_w %}
wire [VW-1:0] ev_param = {{(VW - PW){wdata[PW-1]}}, wdata};
{%- else %}
wire [VW-1:0] ev_param = wdata;
{%- endif %}
assign mon_value = ev_kind ? ev_param : ev_delta;

{% include "trainer_net.v" %}

{% include "trainer_dump.v" %}

endmodule

`resetall
