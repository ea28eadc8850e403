{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Network {= n.name =} with its on-chip ES trainer (docs/training.md, "Hardware").
 *
 * The inference pipeline ({= n.name =}_net: II {= n.ii =}, latency {= n.latency =} cycles) and:
 *   - {= t.p =} incremental-training block(s) with {= t.lfsr_width =}-bit LFSR noise sources
 *     ({% if t.uniform == 1 %}uniform, {= t.noise_bits =} bits{% else %}rademacher{% endif %} per value): storage in a ring (fptgen_itb_ring)
 *     that rotates past one update unit (fptgen_itb);
 *   - one perturb/update unit (fptgen_es_step, fptgen_es_update, sigma {= t.sigma =}, lr_shift {= t.lr_shift =});
 *   - the loss accumulator (fptgen_loss_acc) and the {% if t.exact == 1 %}exact{% else %}power-of-two{% endif %} fitness signal;
 *   - a {= t.m =}-sample buffer (fptgen_sample_buf, inputs as {= t.words =} word(s) of {= t.word_w =} bits),
 *     loaded through the ld_* stream;
 *   - the weight-update controller (fptgen_es_ctrl: N = {= t.n =}, {= t.g =} group(s) of
 *     {= t.p =} over T = {= t.t =} parameters, {= t.cycles_per_iteration =} cycles per iteration{% if t.diff.is_some() %} at most{% endif %}).
 *   - member evaluation: {= t.evaluation.mode =} ({= t.evaluation.reason =}){% if let Some(d) = t.diff %};
 *     the difference unit (fptgen_diff_eval: {= t.m =} samples x {= d.rows =} rows of committed sums,
 *     {= d.slots =} row slot(s)){% endif %}.
 *
 * Trainable tensors, in training order (each in block RAM, written only
 * through its memory's trainer port):
{%- for x in t.tensors %}
 *   {= x.index =}: {= x.layer =} {= x.role =}, {= x.count =} parameters, clamped to [{= x.lo =}, {= x.hi =}]
{%- endfor %}
 *
 * Streams carry whole vectors (element k at bits [k*W +: W]). in/out are
 * answered with the committed parameters at any time: at full rate while
 * training is idle, paused or done, between members while it runs.
 * ld_x/ld_t load the buffer while training is not running: {= t.words =} word(s) per
 * input vector, the target (raw codes of the output format) with the last. ctl_* are one-cycle pulses. mon_valid marks events:
 * kind 0 a member's loss (mon_index = member, on st_last_loss), kind 1 the
 * baseline loss, kind 2 an update (mon_index = block, mon_param = the new
 * value as a signed {= t.param_w =}-bit code, mon_grad = the block's accumulator).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= n.name =} (
{%- include "trainer_ports.v" %}
    output wire [{= t.group_w - 1 =}:0] st_group,
    output wire [{= t.member_w - 1 =}:0] st_member,
    output wire [31:0] st_last_loss,
    // training events
    output wire mon_valid,
    output wire [1:0] mon_kind,
    output wire [{= t.index_w() - 1 =}:0] mon_index,
    output wire [{= t.param_w - 1 =}:0] mon_param,
    output wire [31:0] mon_grad
{% include "trainer_dump_port.v" %}
);

localparam integer P = {= t.p =};
localparam integer PW = {= t.param_w =};   // signed parameter codes
localparam integer EW = {= t.noise_w =};   // noise values
localparam integer LW = {= t.lfsr_width =};
localparam [P*LW-1:0] SEEDS = {= t.seeds_literal() =};

// ---------------------------------------------------------------------------
// Controller
wire ext_mode, ext_accept, ld_enable, play, loss_clear;
wire cur_clear, cur_rewind, cur_step, cur_save, seed;
wire [{= t.block_w =}:0] active;
wire [{= t.block_w - 1 =}:0] blk, blk_next, blk_ahead;
wire rot, draw, ring_clear, acc_en;
wire op_read, op_perturb, op_restore, op_update, op_fill, negate;
wire fin_start, fin_busy, sub, l_capture;
wire [1:0] fin_mode;
wire [{= t.count_w() - 1 =}:0] ch_count;
wire ev_loss, ev_base;
wire [32:0] signal;
wire [31:0] loss;
wire vec_valid;
wire [31:0] vec_loss;{% if t.diff.is_some() %}
wire diff_ch_valid;{% endif %}
wire net_in_ready, net_out_valid;
wire [{= n.out_bits() - 1 =}:0] net_out_data;
wire ext_in_fire = in_valid && in_ready;
wire ext_out_fire = out_valid && out_ready;
wire train_out_fire = !ext_mode && net_out_valid;

fptgen_es_ctrl #(
    .T({= t.t =}),
    .P(P),
    .N({= t.n =}),
    .M({= t.m =}),
    .FITNESS({= t.fitness =}),
    .SERVE_MAX({= t.serve_max =}),
    .LOSS_WAIT({= t.loss_wait =}),
    .DIFF({% if t.diff.is_some() %}1{% else %}0{% endif %})
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
    .st_group(st_group),
    .st_member(st_member),
    .st_last_loss(st_last_loss),
    .ev_loss(ev_loss),
    .ev_base(ev_base),
    .ext_mode(ext_mode),
    .ext_accept(ext_accept),
    .ext_in_valid(in_valid),
    .ext_in_fire(ext_in_fire),
    .ext_out_fire(ext_out_fire),
    .train_out_fire(train_out_fire),
    .ld_enable(ld_enable),
    .play(play),
    .loss_clear(loss_clear),
    .loss(loss),
    .cur_clear(cur_clear),
    .cur_rewind(cur_rewind),
    .cur_step(cur_step),
    .cur_save(cur_save),
    .seed(seed),
    .active(active),
    .rot(rot),
    .draw(draw),
    .clear(ring_clear),
    .acc_en(acc_en),
    .blk(blk),
    .blk_next(blk_next),
    .blk_ahead(blk_ahead),
    .op_read(op_read),
    .op_perturb(op_perturb),
    .op_restore(op_restore),
    .op_update(op_update),
    .negate(negate),
    .signal(signal),
    .op_fill(op_fill),
    .fin_start(fin_start),
    .fin_mode(fin_mode),
    .fin_busy(fin_busy),
    .ch_count(ch_count),
    .sub(sub),
    .l_capture(l_capture)
);

// Buffered samples enter whenever the controller is not serving requests.
wire x_gate = 1'b1;
{%- if t.diff.is_some() %}
// Evaluation by difference: a member's evaluation plays the changed
// samples (the difference unit's FIFO); the unit takes the load stream's
// words, one value per cycle, holding the stream meanwhile.
localparam integer BUF_SUBSET = 1;
wire diff_ld_hold;
wire ld_gate = !diff_ld_hold;
wire buf_sub = sub;
wire [{= t.count_w() - 1 =}:0] buf_count = ch_count;
wire [{= t.sample_w() - 1 =}:0] buf_x_sel, buf_t_sel;
wire buf_x_pop, buf_t_pop;
wire [31:0] diff_base;
{%- else %}
{% include "trainer_buffer_whole.v" %}
// (full evaluation: the difference unit's signals are constant)
assign fin_busy = 1'b0;
assign ch_count = {= t.count_w() =}'d0;
wire unused_diff = fin_start ^ (^fin_mode) ^ sub ^ l_capture ^ op_fill;
{%- endif %}

{% include "trainer_buffer.v" %}

fptgen_loss_acc #(
    .OUTPUTS({= n.outputs =}),
    .Y_W({= n.y.width =}),
    .Y_S({= n.y.signed =})
) u_loss (
    .clk(clk),
    .rst(rst),
    .clear(loss_clear),
    .init({% if t.diff.is_some() %}sub ? diff_base : 32'd0{% else %}32'd0{% endif %}),
    .add(train_out_fire),
    .y(net_out_data),
    .t(t_data),
    .loss(loss),
    .vec_valid(vec_valid),
    .vec_loss(vec_loss)
);


// ---------------------------------------------------------------------------
// Incremental-training blocks
// Q(s), registered: the controller's PO2 cycle lies between SIGNAL (s
// registered) and the pass in which the blocks add (ACCUM, or the next
// member's PERTURB), so no path runs from the loss through the priority
// encoder into the blocks' adders.
wire po2_zero, po2_neg;
wire [5:0] po2_exp;
wire [32:0] po2_onehot;
wire po2_zero_reg, po2_neg_reg;
wire [5:0] po2_exp_reg;
wire [32:0] po2_onehot_reg;

fptgen_po2 #(.S_W(33)) u_po2 (
    .s(signal),
    .zero(po2_zero),
    .neg(po2_neg),
    .exp(po2_exp),
    .onehot(po2_onehot)
);

fptgen_reg #(.W(41)) u_po2_reg (
    .clk(clk),
    .d({po2_zero, po2_neg, po2_exp, po2_onehot}),
    .q({po2_zero_reg, po2_neg_reg, po2_exp_reg, po2_onehot_reg})
);

// The blocks: block j serves parameter g*P + j of group g. The ring's
// head holds the block whose parameter the serial phase writes (blk) in a
// writing pass; the block at the unit is the one written in the next
// cycle (drawn_next and kept_next: the value it draws and the value it
// has, as they will be in the next cycle), and ahead_grad is the gradient
// of the one after it.
wire [EW-1:0] head_noise, drawn_next, kept_next;
wire [31:0] head_grad, next_grad, ahead_grad;

fptgen_itb_ring #(
    .P(P),
    .LW(LW),
    .SEEDS(SEEDS),
    .UNIFORM({= t.uniform =}),
    .NOISE_BITS({= t.noise_bits =}),
    .EXACT({= t.exact =}),
    .S_W(33)
) u_ring (
    .clk(clk),
    .rst(rst),
    .seed(seed),
    .rot(rot),
    .active(active),
    .draw(draw),
    .clear(ring_clear),
    .acc_en(acc_en),
    .signal(signal),
    .sig_zero(po2_zero_reg),
    .sig_neg(po2_neg_reg),
    .sig_exp(po2_exp_reg),
    .sig_onehot(po2_onehot_reg),
    .noise(head_noise),
    .grad(head_grad),
    .next_grad(next_grad),
    .drawn_next(drawn_next),
    .kept_next(kept_next),
    .ahead_grad(ahead_grad)
);
wire unused_ring = (^head_noise) ^ (^next_grad);

// ---------------------------------------------------------------------------
// Parameter cursor: the current parameter of the training order in the
// trainable memories, and each block's committed parameter, read from
// memory at the group's start; the block of the serial phase goes through
// the shared perturb/update unit, one cycle ahead of its write (issue 37):
// the unit computes, from the value, noise, step and bounds of the block
// and tensor of the next cycle, the next cycle's write data into a
// register, so that the writes start at flip-flops.
wire op_write = op_perturb || op_restore || op_update || op_fill;
wire [{= t.tensors.len() - 1 =}:0] tr_en, tr_we;
{%- for x in t.tensors %}
wire [{= x.addr_w - 1 =}:0] {= x.port() =}_tr_addr;
wire [{= x.col_w - 1 =}:0] {= x.port() =}_tr_col;
wire [{= x.width - 1 =}:0] {= x.port() =}_tr_rdata;
{%- endfor %}
wire [PW-1:0] sel_param, lo, hi, param_ahead, lo_ahead, hi_ahead;

fptgen_param_cursor #(
    .K({= t.tensors.len() =}),
    .P(P),
    .PW(PW),
    .PREFETCH(1),
    .AHEAD(1),
{%- for (p, v) in t.cursor_params() %}
    .{= p =}({= v =}){% if !loop.last %},{% endif %}
{%- endfor %}
) u_cursor (
    .clk(clk),
    .rst(rst),
    .clear(cur_clear),
    .rewind(cur_rewind),
    .step(cur_step),
    .save(cur_save),
    .op_read(op_read),
    .op_write(op_write),
    .blk(blk),
    .blk_next(blk_next),
    .blk_ahead(blk_ahead),
    .tr_en(tr_en),
    .tr_we(tr_we),
    .tr_addr({= t.ports("tr_addr") =}),
    .tr_col({= t.ports("tr_col") =}),
    .tr_rdata({= t.ports("tr_rdata") =}),
    .param(sel_param),
    .lo(lo),
    .hi(hi),
    .param_ahead(param_ahead),
    .lo_ahead(lo_ahead),
    .hi_ahead(hi_ahead)
);
wire unused_bounds = (^lo) ^ (^hi);

// In a writing pass, the cycle before block j's write: param_ahead is its
// committed value, noise_reg the value its perturbation adds (block j is
// at the ring's unit; in a perturbation pass it draws exactly when negate
// is low, draw being PERTURB and not an odd antithetic member, negate an
// odd antithetic member, and it is on, j < tg: so its noise in the head
// in the next cycle is the drawn value without negate and the kept one,
// negated, with it; registered from the ring's values of the next cycle,
// negate holding from the BOUNDARY through the pass), lo_ahead/hi_ahead
// the bounds of the tensor it was read from, the tensor of the write, and
// step_reg its step, R(grad / 2^lr_shift) of the block that the previous
// cycle's ahead_grad saw (the gradients stay as they are from the last
// accumulation through the update). The unit's results are registered:
// perturbed and updated are then the write data of block j (the exact
// value of the unregistered unit at the write, as docs/training.md states
// it). (The kept value's negation is exact in its EW bits, one more than
// the value's.)
wire [PW-1:0] perturbed_next, updated_next;
wire [EW-1:0] kept_neg = -kept_next;
wire [EW-1:0] noise_reg;
wire [PW-1:0] perturbed, updated;
wire [{= t.step_w() - 1 =}:0] step_next;
wire [{= t.step_w() - 1 =}:0] step_reg;

fptgen_es_step #(
    .LR_SHIFT({= t.lr_shift =})
) u_step (
    .grad(ahead_grad),
    .step(step_next)
);

fptgen_es_update #(
    .P_W(PW),
    .E_W(EW),
    .SIGMA({= t.sigma =}),
    .LR_SHIFT({= t.lr_shift =})
) u_update (
    .param(param_ahead),
    .lo(lo_ahead),
    .hi(hi_ahead),
    .noise(noise_reg),
    .negate(1'b0),
    .step(step_reg),
    .perturbed(perturbed_next),
    .updated(updated_next)
);

fptgen_reg #(.W({= t.step_w() =})) u_step_reg (.clk(clk), .d(step_next), .q(step_reg));
fptgen_reg #(.W(EW)) u_noise_reg (.clk(clk), .d(negate ? kept_neg : drawn_next), .q(noise_reg));
fptgen_reg #(.W(PW)) u_perturbed_reg (.clk(clk), .d(perturbed_next), .q(perturbed));
fptgen_reg #(.W(PW)) u_updated_reg (.clk(clk), .d(updated_next), .q(updated));

wire [PW-1:0] wdata = op_perturb ? perturbed : (op_update ? updated : sel_param);
{%- if let Some(d) = t.diff %}

// ---------------------------------------------------------------------------
// Evaluation by difference: the committed evaluation of each group keeps
// every sample's loss (l); the unit decides which samples a member changes
// (docs/training.md, "Evaluation by difference in hardware").
wire [{= t.sample_w() - 1 =}:0] l_index;

fptgen_counter #(.W({= t.sample_w() =})) u_l_index (
    .clk(clk),
    .rst(rst),
    .clear(loss_clear),
    .inc(l_capture && vec_valid),
    .count(l_index)
);

fptgen_diff_eval #(
    .M({= t.m =}),
    .INPUTS({= d.inputs =}),
    .ROWS({= d.rows =}),
    .X_W({= n.x.width =}),
    .X_S({= n.x.signed =}),
    .VPW({= d.vpw =}),
    .WORDS({= t.words =}),
    .PW(PW),
    .W_TRAIN(1),
    .B_TRAIN(1),
    .SLOTS({= d.slots =}),
    .S_W({= d.s_w =}),
    .SHIFT({= d.shift =}),
    .B_W({= d.b.width =}), .B_F({= d.b.frac =}), .B_S({= d.b.signed =}),
    .A_W({= d.a.width =}), .A_F({= d.a.frac =}), .A_S({= d.a.signed =}), .A_Q({= d.a.quant =}), .A_O({= d.a.ovf =}),
    .Y_W({= d.y.width =}), .Y_F({= d.y.frac =}), .Y_S({= d.y.signed =}), .Y_Q({= d.y.quant =}), .Y_O({= d.y.ovf =}),
    .RELU({= d.relu =}),
    .X_STYLE("{= d.x_style =}"),
    .S_STYLE("{= d.s_style =}")
) u_diff (
    .clk(clk),
    .rst(rst),
    .cur_clear(cur_clear),
    .cur_rewind(cur_rewind),
    .cur_step(cur_step),
    .cur_save(cur_save),
    .wr_perturb(op_perturb),
    .wr_update(op_update),
    .wr_fill(op_fill),
    .wdata(wdata),
    .committed(sel_param),
    .ld_fire(ld_valid && ld_ready),
    .ld_x(ld_x),
    .ld_hold(diff_ld_hold),
    .l_we(l_capture && vec_valid),
    .l_index(l_index),
    .l_value(vec_loss),
    .fin_start(fin_start),
    .fin_mode(fin_mode),
    .busy(fin_busy),
    .ch_count(ch_count),
    .base_loss(diff_base),
    .ch_valid(diff_ch_valid),
    .ch_index(buf_x_sel),
    .ch_pop(buf_x_pop),
    .ct_index(buf_t_sel),
    .ct_pop(buf_t_pop)
);

wire unused_diff_ch_valid = diff_ch_valid;
{%- else %}
wire unused_vec = vec_valid ^ (^vec_loss);
{%- endif %}
wire unused_wdata = ^wdata;

assign mon_valid = ev_loss || ev_base || op_update;
assign mon_kind = op_update ? 2'd2 : (ev_base ? 2'd1 : 2'd0);
assign mon_index = op_update ? {% if t.index_w() > t.block_w %}{{{= t.index_w() - t.block_w =}{1'b0}}, blk}{% else %}blk{% endif %} : {% if t.index_w() > t.member_w %}{{{= t.index_w() - t.member_w =}{1'b0}}, st_member}{% else %}st_member{% endif %};
assign mon_param = updated;
assign mon_grad = head_grad;

{% include "trainer_net.v" %}

{% include "trainer_dump.v" %}

endmodule

`resetall
