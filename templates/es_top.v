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
wire [{= t.block_w - 1 =}:0] blk, blk_next;
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
reg po2_zero_reg, po2_neg_reg;
reg [5:0] po2_exp_reg;
reg [32:0] po2_onehot_reg;

fptgen_po2 #(.S_W(33)) u_po2 (
    .s(signal),
    .zero(po2_zero),
    .neg(po2_neg),
    .exp(po2_exp),
    .onehot(po2_onehot)
);

always @(posedge clk) begin
    po2_zero_reg <= po2_zero;
    po2_neg_reg <= po2_neg;
    po2_exp_reg <= po2_exp;
    po2_onehot_reg <= po2_onehot;
end

// The blocks: block j serves parameter g*P + j of group g. The ring's
// head holds the block whose parameter the serial phase writes (blk) in a
// writing pass; next_grad is the gradient of the block after it.
wire [EW-1:0] head_noise;
wire [31:0] head_grad, next_grad;

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
    .next_grad(next_grad)
);

// ---------------------------------------------------------------------------
// Parameter cursor: the current parameter of the training order in the
// trainable memories, and each block's committed parameter, read from
// memory at the group's start; the block of the serial phase goes through
// the shared perturb/update unit
wire op_write = op_perturb || op_restore || op_update || op_fill;
wire [{= t.tensors.len() - 1 =}:0] tr_en, tr_we;
{%- for x in t.tensors %}
wire [{= x.addr_w - 1 =}:0] {= x.port() =}_tr_addr;
wire [{= x.col_w - 1 =}:0] {= x.port() =}_tr_col;
wire [{= x.width - 1 =}:0] {= x.port() =}_tr_rdata;
{%- endfor %}
wire [PW-1:0] sel_param, lo, hi;

fptgen_param_cursor #(
    .K({= t.tensors.len() =}),
    .P(P),
    .PW(PW),
    .PREFETCH(1),
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
    .tr_en(tr_en),
    .tr_we(tr_we),
    .tr_addr({= t.ports("tr_addr") =}),
    .tr_col({= t.ports("tr_col") =}),
    .tr_rdata({= t.ports("tr_rdata") =}),
    .param(sel_param),
    .lo(lo),
    .hi(hi)
);

wire [PW-1:0] perturbed, updated;

// The step of the block the update writes in the next cycle (the one at
// the ring's unit), R(grad / 2^lr_shift), registered, so that the rounding
// is off the update's path.
wire [{= t.step_w() - 1 =}:0] step_next;
reg  [{= t.step_w() - 1 =}:0] step_reg;

fptgen_es_step #(
    .LR_SHIFT({= t.lr_shift =})
) u_step (
    .grad(next_grad),
    .step(step_next)
);

always @(posedge clk) begin
    step_reg <= step_next;
end

fptgen_es_update #(
    .P_W(PW),
    .E_W(EW),
    .SIGMA({= t.sigma =}),
    .LR_SHIFT({= t.lr_shift =})
) u_update (
    .param(sel_param),
    .lo(lo),
    .hi(hi),
    .noise(head_noise),
    .negate(negate),
    .step(step_reg),
    .perturbed(perturbed),
    .updated(updated)
);

wire [PW-1:0] wdata = op_perturb ? perturbed : (op_update ? updated : sel_param);
{%- if let Some(d) = t.diff %}

// ---------------------------------------------------------------------------
// Evaluation by difference: the committed evaluation of each group keeps
// every sample's loss (l); the unit decides which samples a member changes
// (docs/training.md, "Evaluation by difference in hardware").
reg [{= t.sample_w() - 1 =}:0] l_index_reg;

always @(posedge clk) begin
    if (rst || loss_clear) begin
        l_index_reg <= {= t.sample_w() =}'d0;
    end else if (l_capture && vec_valid) begin
        l_index_reg <= l_index_reg + 1'b1;
    end
end

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
    .l_index(l_index_reg),
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
