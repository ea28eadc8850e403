/*
 * fptgen RTL library: the weight-update controller of the ES trainer.
 *
 * A state machine over iterations, groups, members and samples that runs
 * docs/training.md's algorithm on the unchanged inference pipeline, and
 * arbitrates the pipeline between training and inference requests. It
 * drives, through strobes, the rest of the trainer (generated per network):
 * the parameter cursor (fptgen_param_cursor), the ring of
 * incremental-training blocks (fptgen_itb_ring), the shared perturb/update unit
 * (fptgen_es_update), the sample buffer (fptgen_sample_buf) and the loss
 * accumulator (fptgen_loss_acc).
 *
 * One group of tg = min(P, T - g*P) parameters (block j serves parameter
 * g*P + j); "serial" phases take one block per cycle, j = 0..tg-1, at the
 * cursor, which then returns to the group's first parameter (rewind), except
 * after the update, when it moves on to the next group's. The blocks are a
 * ring (fptgen_itb_ring) that rotates past one unit in "passes" of P
 * rotations (rot), block j at the unit in rotation j: a pass that writes
 * the memory (PERTURB, UPDATE) takes P + 1 cycles, a lead cycle (block 0
 * at the unit) and then block j's write in cycle j + 1 (j < tg; block j is
 * then in the ring's head register):
 *
 *   GROUP        1 cycle   save the cursor
 *   READ         tg        read the committed parameters
 *   READ_WAIT    1         the last read lands
 *  [baseline: EVAL_START, EVAL, BASE_DONE: L_base]
 *   then N members, each after a BOUNDARY cycle:
 *   BOUNDARY     1         pause or serve here; before either, RESTORE
 *                          (tg cycles) writes the committed values back if
 *                          a perturbation is in memory, and the boundary
 *                          comes again
 *   PERTURB      P + 1     a pass: the blocks add the previous member's
 *                          Q(s) * e if it is pending (see ACCUM), draw
 *                          their noise (antithetic: even members only;
 *                          member 0 also clears the gradients), write
 *                          clamp(w + (+-e << sigma))
 *   EVAL_START   1         start the sample buffer, clear the loss
 *   EVAL         E - W     M samples, one every II cycles; ends when the
 *                          M-th output has been taken
 *   LOSS_WAIT    W         its error reaches the loss (W = LOSS_WAIT)
 *   SIGNAL       1         s = fitness signal, registered
 *   PO2          1         Q(s) (fptgen_po2 of s), registered by the top level;
 *                          the member's loss event
 *   ACCUM        P         the last member only: a pass, every block adds
 *                          Q(s) * e. Any other member that accumulates
 *                          (antithetic: the odd ones) leaves it pending, and
 *                          the next member's PERTURB pass does it, in the
 *                          same rotation as the draw (fptgen_itb adds with
 *                          the value before the draw), so each block's
 *                          operations keep their order
 *   BOUNDARY     1         (the (N+1)-th, before the update)
 *   UPDATE       P + 1     a pass: write clamp(w - R(G / 2^lr_shift))
 *   NEXT_GROUP   1         next group, or next iteration, or DONE
 *
 * The next member's perturbation and the update write every parameter in
 * use from its committed value (the cursor's copy), so the perturbed values
 * stay in memory until then: nothing is restored unless a pause or a
 * request needs the committed values at a boundary. Without pauses and
 * requests a group takes N * (P + E + 5) + 2 * P + tg + 5 cycles, plus E + 2 with
 * baseline fitness, where E = D + (M - 1) * II + latency + 1 + W, D being
 * the cycles from EVAL_START to the pipeline taking sample 0
 * (fptgen_sample_buf: 1, or WORDS + 2). The generator's report.json states the sum per
 * iteration and co-simulation measures it.
 *
 * Evaluation by difference (DIFF = 1; docs/training.md, "Evaluation by
 * difference in hardware"): fptgen_diff_eval keeps each buffered sample's
 * committed sums and decides which samples a member changes. ctl_start
 * first fills it: every group, GROUP, READ, READ_WAIT, then FILL (tg
 * cycles: the committed values written back, op_fill, the unit taking
 * them as its fill) and FIN (mode 2), then the next group; after the last
 * the training starts at group 0. Each group then evaluates the committed
 * parameters first (as the baseline evaluation: EVAL_START, EVAL,
 * LOSS_WAIT, BASE_DONE; the top level keeps each sample's loss, l_capture),
 * each member's PERTURB pass is followed by FIN (mode 0: FIN_GAP,
 * FIN_START, FIN_WAIT until the unit is idle, M * R + 9 cycles) and an
 * evaluation of the changed samples only (sub: ch_count of them, none
 * when ch_count is 0, the loss starting from the others' committed
 * losses), and the UPDATE pass by FIN (mode 1, the unit's commit).
 *
 * Inference: in IDLE, DONE and PAUSED the pipeline serves the external
 * stream at full rate. While training runs, a request waiting at a BOUNDARY
 * is served then (SERVE: up to SERVE_MAX requests while they keep coming),
 * so every answer is computed with the committed parameters, and training
 * continues where it stopped. Before the pipeline returns to training, the
 * controller stops accepting requests and waits until every outstanding
 * answer has left (DRAIN). A pause request (ctl_pause) takes effect at the
 * next BOUNDARY; ctl_resume continues. ctl_start (in IDLE or DONE) seeds
 * the noise sources again and runs cfg_iterations iterations from the
 * parameters in memory.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_es_ctrl #(
    // T: trainable parameters (>= 1)
    parameter integer T = 6,
    // P: incremental-training blocks (1..T)
    parameter integer P = 2,
    // N: population per group (>= 1; even for antithetic)
    parameter integer N = 4,
    // M: buffered samples per evaluation (>= 1)
    parameter integer M = 4,
    // Fitness: 0 antithetic, 1 baseline, 2 plain
    parameter integer FITNESS = 0,
    // Requests served per boundary at most (>= 1)
    parameter integer SERVE_MAX = 4,
    // Cycles from the last sample's output to its error being in `loss`
    // (fptgen_loss_acc's LAT, >= 1)
    parameter integer LOSS_WAIT = 1,
    // 1: evaluation by difference (fptgen_diff_eval); 0: every member
    // evaluates all M samples
    parameter integer DIFF = 0
) (
    input  wire           clk,
    input  wire           rst,

    // Control and status
    input  wire           ctl_start,
    input  wire           ctl_pause,
    input  wire           ctl_resume,
    input  wire [31:0]    cfg_iterations,
    output wire           st_busy,
    output wire           st_paused,
    output wire           st_done,
    output wire [31:0]    st_iteration,
    // the group index 0..G-1 (G = ceil(T / P)) and the member 0..N
    output wire [clog2((T + P - 1) / P)-1:0] st_group,
    output wire [clog2(N + 1)-1:0] st_member,
    output wire [31:0]    st_last_loss,
    // Events (one cycle each): a member's loss (ev_loss, member st_member),
    // the baseline loss (ev_base), both on st_last_loss
    output wire           ev_loss,
    output wire           ev_base,

    // Pipeline arbitration
    output wire           ext_mode,      // the pipeline serves the external stream
    output wire           ext_accept,    // external requests may enter
    input  wire           ext_in_valid,
    input  wire           ext_in_fire,
    input  wire           ext_out_fire,
    input  wire           train_out_fire,

    // Sample buffer and loss accumulator
    output wire           ld_enable,
    output wire           play,
    output wire           loss_clear,
    input  wire [31:0]    loss,

    // Parameter cursor
    output wire           cur_clear,
    output wire           cur_rewind,
    output wire           cur_step,
    output wire           cur_save,

    // Blocks
    output wire           seed,          // reseed the noise sources (in the next pass)
    output wire [clog2(P):0] active,     // tg: blocks in use in this group (0..P)
    output wire           rot,           // the ring rotates: the block at its unit is done
    output wire           draw,          // ... and draws noise if active
    output wire           clear,         // ... and clears its gradient
    output wire           acc_en,        // ... and accumulates Q(signal) * e if active
    output wire [clog2(P)-1:0] blk,      // block of the serial phase (0..P-1;
                                         // outside the serial phases and
                                         // passes it may hold P, no access
                                         // happens then)
    output wire [clog2(P)-1:0] blk_next, // blk of the next cycle (also up to P)
    output wire [clog2(P)-1:0] blk_ahead, // in a writing pass's BOUNDARY and
                                         // in the pass: blk two cycles later
                                         // if that cycle writes (0 at the
                                         // BOUNDARY, 1 in the lead cycle,
                                         // blk + 2 after; modulo 2^width,
                                         // meaningless otherwise), from
                                         // registers only
    output wire           op_read,       // read the parameter at the cursor into block blk
    output wire           op_perturb,    // write block blk's perturbed value
    output wire           op_restore,    // write block blk's committed value
    output wire           op_update,     // write block blk's updated value
    output wire           negate,        // perturb with -e (odd antithetic member)
    output wire [32:0]    signal,

    // Evaluation by difference (DIFF = 1; unused otherwise)
    output wire           op_fill,       // write block blk's committed value (the fill)
    output wire           fin_start,     // fptgen_diff_eval's finishing ...
    output wire [1:0]     fin_mode,      // ... in this mode
    input  wire           fin_busy,
    input  wire [clog2(M + 1)-1:0] ch_count, // changed samples of the member
    output wire           sub,           // the evaluation is of the changed samples
    output wire           l_capture      // the evaluation is the committed one: keep its losses
);

`include "fptgen_clog2.vh"

localparam integer G = (T + P - 1) / P;
// Widths: group index, member index (0..N), block index (0..P-1), block
// count (0..P), sample count (0..M)
localparam integer GW = clog2(G);
localparam integer NW = clog2(N + 1);
localparam integer JW = clog2(P);
localparam integer TGW = JW + 1;
localparam integer MW = clog2(M + 1);
localparam integer LAST_TG_I = T - (G - 1) * P;

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (T < 1 || P < 1 || P > T || N < 1 || M < 1 || FITNESS < 0 || FITNESS > 2 ||
            SERVE_MAX < 1 || LOSS_WAIT < 1 || LOSS_WAIT > 255) begin : g_error_count_out_of_range
        fptgen_param_error_es_ctrl_count_out_of_range error_inst ();
    end
    if (DIFF < 0 || DIFF > 1) begin : g_error_diff_not_0_or_1
        fptgen_param_error_es_ctrl_diff_not_0_or_1 error_inst ();
    end
    if (FITNESS == 0 && N % 2 != 0) begin : g_error_antithetic_needs_even_n
        fptgen_param_error_es_ctrl_antithetic_needs_even_n error_inst ();
    end
endgenerate

localparam integer LAST_G_I = G - 1;
localparam [GW-1:0] LAST_G = LAST_G_I[GW-1:0];
localparam integer N_C_I = N;
localparam [NW-1:0] N_C = N_C_I[NW-1:0];
localparam integer LAST_N_I = N - 1;
localparam [NW-1:0] LAST_N = LAST_N_I[NW-1:0];
localparam integer P_C_I = P;
localparam [TGW-1:0] P_C = P_C_I[TGW-1:0];
localparam [TGW-1:0] LAST_TG = LAST_TG_I[TGW-1:0];
localparam integer LAST_J_I = P - 1;
localparam [JW-1:0] LAST_J = LAST_J_I[JW-1:0];
localparam integer LAST_M_I = M - 1;
localparam [MW-1:0] LAST_M = LAST_M_I[MW-1:0];
localparam integer SV_W = clog2(SERVE_MAX);   // requests served at this boundary: 0..SERVE_MAX - 1
localparam integer LWW = 8;                     // LOSS_WAIT counter
localparam integer LAST_WAIT_I = LOSS_WAIT - 1;
localparam [LWW-1:0] LAST_WAIT = LAST_WAIT_I[LWW-1:0];
localparam integer LAST_SERVE_I = SERVE_MAX - 1;
localparam [SV_W-1:0] LAST_SERVE = LAST_SERVE_I[SV_W-1:0];

localparam [4:0] S_IDLE       = 5'd0,
                 S_DRAIN      = 5'd1,
                 S_INIT       = 5'd2,
                 S_GROUP      = 5'd3,
                 S_READ       = 5'd4,
                 S_READ_WAIT  = 5'd5,
                 S_EVAL_START = 5'd6,
                 S_EVAL       = 5'd7,
                 S_BASE_DONE  = 5'd8,
                 S_BOUNDARY   = 5'd9,
                 S_PERTURB    = 5'd11,
                 S_RESTORE    = 5'd12,
                 S_SIGNAL     = 5'd13,
                 S_ACCUM      = 5'd14,
                 S_UPDATE     = 5'd15,
                 S_NEXT_GROUP = 5'd16,
                 S_DONE       = 5'd17,
                 S_PAUSED     = 5'd18,
                 S_SERVE      = 5'd19,
                 S_PO2        = 5'd20,
                 S_LOSS_WAIT  = 5'd21,
                 S_FILL       = 5'd22,
                 S_FIN_GAP    = 5'd23,
                 S_FIN_START  = 5'd24,
                 S_FIN_WAIT   = 5'd25;

reg [4:0]      state_reg, state_next;
reg [4:0]      after_reg, after_next;      // DRAIN's successor
reg [31:0]     iter_reg, iter_next, iters_reg, iters_next;
reg [GW-1:0]   group_reg, group_next;
reg [NW-1:0]   member_reg, member_next;
reg [JW-1:0]   j_reg, j_next;
reg            lead_reg, lead_next;        // a writing pass's lead cycle
reg [LWW-1:0]  wait_reg, wait_next;
reg [MW-1:0]   outs_reg, outs_next;
reg            base_eval_reg, base_eval_next;  // the running evaluation is the baseline
reg            served_reg, served_next;        // this boundary has served
reg            dirty_reg, dirty_next;          // memory holds a perturbation
reg            pend_reg, pend_next;            // an accumulation waits for the next PERTURB
reg            pause_reg, pause_next;          // pause requested
reg            busy_reg, busy_next;
reg            done_reg, done_next;
reg [31:0]     last_loss_reg, last_loss_next;
reg [31:0]     prev_loss_reg, prev_loss_next;
reg [31:0]     base_loss_reg, base_loss_next;
reg [32:0]     signal_reg, signal_next;
reg [SV_W-1:0] serve_cnt_reg, serve_cnt_next;
reg            fill_reg, fill_next;            // the fill sweep runs (DIFF)
reg [1:0]      fin_mode_reg, fin_mode_next;
reg [15:0]     outstanding_reg;

wire [TGW-1:0] tg = group_reg == LAST_G ? LAST_TG : P_C;
wire [TGW-1:0] j_ext = {{(TGW - JW){1'b0}}, j_reg};
wire           j_last = j_ext + 1'b1 == tg;
wire           antithetic = FITNESS == 0;
wire           odd = member_reg[0];
wire           j_end = j_reg == LAST_J;    // a pass's last block
// The serial operations' strobes, registered: decoded from the next state,
// lead flag and block, so that the memories' trainer-port strobes start at
// flip-flops (fptgen synth on examples/mnist estimated 5.32 ns on a path
// from state_reg through the decode, j < tg and the ports' enables into
// fc1's weight memory). The value in a cycle is the one the current state
// gives: j < tg uses the current tg, which changes only when the group
// does (NEXT_GROUP), never just before a writing pass.
reg            op_read_reg, op_perturb_reg, op_restore_reg, op_update_reg, op_fill_reg;
wire [TGW-1:0] j_next_ext = {{(TGW - JW){1'b0}}, j_next};
wire           j_on_next = j_next_ext < tg;
wire           draws = !(antithetic && odd);
wire           accumulates = !(antithetic && !odd);
wire           write_pass = state_reg == S_PERTURB || state_reg == S_UPDATE;

// The arbitration flags of the state, registered with it (decoded from
// state_next), so that the stream handshakes start at a flip-flop.
reg ext_mode_reg, ext_accept_reg;
wire ext_mode_next = state_next == S_IDLE || state_next == S_DONE || state_next == S_PAUSED ||
                     state_next == S_SERVE || state_next == S_DRAIN;
wire ext_accept_next = state_next == S_IDLE || state_next == S_DONE || state_next == S_PAUSED ||
                       state_next == S_SERVE;

assign ext_mode = ext_mode_reg;
assign ext_accept = ext_accept_reg;
assign ld_enable = state_reg == S_IDLE || state_reg == S_DONE || state_reg == S_PAUSED;

assign st_busy = busy_reg;
assign st_paused = state_reg == S_PAUSED;
assign st_done = done_reg;
assign st_iteration = iter_reg;
assign st_group = group_reg;
assign st_member = member_reg;
assign st_last_loss = last_loss_reg;
assign ev_loss = state_reg == S_PO2;
assign ev_base = state_reg == S_BOUNDARY && base_eval_reg && FITNESS == 1;

// A member's evaluation by difference plays the changed samples only.
wire   sub_eval = DIFF != 0 && !base_eval_reg;
wire   no_samples = sub_eval && ch_count == {MW{1'b0}};
wire [MW-1:0] eval_last = sub_eval ? ch_count - 1'b1 : LAST_M;
assign sub = sub_eval;
assign l_capture = DIFF != 0 && base_eval_reg;
assign fin_start = state_reg == S_FIN_START;
assign fin_mode = fin_mode_reg;
assign op_fill = op_fill_reg;

assign play = state_reg == S_EVAL_START && !no_samples;
assign loss_clear = state_reg == S_EVAL_START;
assign seed = state_reg == S_INIT;
assign active = tg;
assign blk = j_reg;
assign blk_next = j_next;
// A writing pass's block two cycles ahead: the pass is entered from
// BOUNDARY with the lead cycle (block 0 written after it), then one block
// per cycle. Decoded from registers, so that the cursor's read of it is a
// short path (the write data is computed a cycle before the write).
localparam [JW:0] AHEAD_LEAD = 1, AHEAD_PASS = 2;
wire [JW:0] j_ahead = {1'b0, j_reg} + (lead_reg ? AHEAD_LEAD : AHEAD_PASS);
assign blk_ahead = state_reg == S_BOUNDARY ? {JW{1'b0}} : j_ahead[JW-1:0];
wire unused_j_ahead = j_ahead[JW];
assign rot = (write_pass && (lead_reg || !j_end)) || state_reg == S_ACCUM;
assign draw = state_reg == S_PERTURB && draws;
assign clear = state_reg == S_PERTURB && member_reg == {NW{1'b0}};
assign acc_en = state_reg == S_ACCUM || (state_reg == S_PERTURB && pend_reg);
assign op_read = op_read_reg;
assign op_perturb = op_perturb_reg;
assign op_restore = op_restore_reg;
assign op_update = op_update_reg;
assign negate = antithetic && odd;
assign signal = signal_reg;

wire serial = op_read || op_perturb || op_restore || op_update || op_fill;
assign cur_clear = state_reg == S_INIT;
assign cur_save = state_reg == S_GROUP;
// After a serial phase the cursor returns to the group's first parameter,
// except after the update and the fill, when it stays on the next group's
// first.
wire moves_on = state_reg == S_UPDATE || state_reg == S_FILL;
assign cur_step = serial && !(j_last && !moves_on);
assign cur_rewind = serial && j_last && !moves_on;

always @* begin
    state_next = state_reg;
    after_next = after_reg;
    iter_next = iter_reg;
    iters_next = iters_reg;
    group_next = group_reg;
    member_next = member_reg;
    j_next = j_reg;
    lead_next = lead_reg;
    outs_next = outs_reg;
    wait_next = wait_reg;
    base_eval_next = base_eval_reg;
    served_next = served_reg;
    dirty_next = dirty_reg;
    pend_next = pend_reg;
    pause_next = pause_reg || (ctl_pause && busy_reg);
    busy_next = busy_reg;
    done_next = done_reg;
    last_loss_next = last_loss_reg;
    prev_loss_next = prev_loss_reg;
    base_loss_next = base_loss_reg;
    signal_next = signal_reg;
    serve_cnt_next = serve_cnt_reg;
    fill_next = fill_reg;
    fin_mode_next = fin_mode_reg;

    case (state_reg)
        S_IDLE, S_DONE: begin
            if (ctl_start) begin
                state_next = S_DRAIN;
                after_next = S_INIT;
            end
        end
        S_DRAIN: begin
            if (outstanding_reg == 16'd0) begin
                state_next = after_reg;
            end
        end
        S_INIT: begin
            iter_next = 32'd0;
            iters_next = cfg_iterations;
            group_next = {GW{1'b0}};
            done_next = 1'b0;
            pause_next = 1'b0;
            fill_next = DIFF != 0;
            if (cfg_iterations == 32'd0) begin
                state_next = S_DONE;
                done_next = 1'b1;
            end else begin
                state_next = S_GROUP;
                busy_next = 1'b1;
            end
        end
        S_GROUP: begin
            j_next = {JW{1'b0}};
            member_next = {NW{1'b0}};
            served_next = 1'b0;
            state_next = S_READ;
        end
        S_READ: begin
            j_next = j_reg + 1'b1;
            if (j_last) begin
                state_next = S_READ_WAIT;
            end
        end
        S_READ_WAIT: begin
            if (fill_reg) begin
                j_next = {JW{1'b0}};
                state_next = S_FILL;
            end else if (FITNESS == 1 || DIFF != 0) begin
                base_eval_next = 1'b1;
                state_next = S_EVAL_START;
            end else begin
                state_next = S_BOUNDARY;
            end
        end
        S_EVAL_START: begin
            outs_next = {MW{1'b0}};
            wait_next = {LWW{1'b0}};
            state_next = no_samples ? S_LOSS_WAIT : S_EVAL;
        end
        S_EVAL: begin
            if (train_out_fire) begin
                outs_next = outs_reg + 1'b1;
                if (outs_reg == eval_last) begin
                    state_next = S_LOSS_WAIT;
                    wait_next = {LWW{1'b0}};
                end
            end
        end
        S_LOSS_WAIT: begin
            wait_next = wait_reg + 1'b1;
            if (wait_reg == LAST_WAIT) begin
                state_next = base_eval_reg ? S_BASE_DONE : S_SIGNAL;
            end
        end
        S_BASE_DONE: begin
            base_loss_next = loss;
            if (FITNESS == 1) begin
                last_loss_next = loss;
            end
            state_next = S_BOUNDARY;   // ev_base fires there
        end
        S_BOUNDARY: begin
            base_eval_next = 1'b0;
            if (dirty_reg && (pause_reg || (ext_in_valid && !served_reg))) begin
                // the committed values first, then this boundary again
                j_next = {JW{1'b0}};
                state_next = S_RESTORE;
            end else if (pause_reg) begin
                pause_next = 1'b0;
                state_next = S_PAUSED;
            end else if (ext_in_valid && !served_reg) begin
                serve_cnt_next = {SV_W{1'b0}};
                state_next = S_SERVE;
            end else begin
                served_next = 1'b0;
                j_next = {JW{1'b0}};
                lead_next = 1'b1;
                state_next = member_reg == N_C ? S_UPDATE : S_PERTURB;
            end
        end
        S_PAUSED: begin
            pause_next = 1'b0;
            if (ctl_resume) begin
                state_next = S_DRAIN;
                after_next = S_BOUNDARY;
            end
        end
        S_SERVE: begin
            if (ext_in_fire) begin
                serve_cnt_next = serve_cnt_reg + 1'b1;
            end
            if (!ext_in_valid || (ext_in_fire && serve_cnt_reg == LAST_SERVE)) begin
                served_next = 1'b1;
                state_next = S_DRAIN;
                after_next = S_BOUNDARY;
            end
        end
        S_PERTURB: begin
            lead_next = 1'b0;
            dirty_next = 1'b1;
            if (!lead_reg) begin
                j_next = j_reg + 1'b1;
                if (j_end) begin
                    pend_next = 1'b0;
                    fin_mode_next = 2'd0;
                    state_next = DIFF != 0 ? S_FIN_GAP : S_EVAL_START;
                end
            end
        end
        S_RESTORE: begin
            j_next = j_reg + 1'b1;
            if (j_last) begin
                dirty_next = 1'b0;
                state_next = S_BOUNDARY;
            end
        end
        S_SIGNAL: begin
            case (FITNESS)
                0: signal_next = {1'b0, prev_loss_reg} - {1'b0, loss};
                1: signal_next = {1'b0, loss} - {1'b0, base_loss_reg};
                default: signal_next = {1'b0, loss};
            endcase
            prev_loss_next = loss;
            last_loss_next = loss;
            state_next = S_PO2;
        end
        S_PO2: begin
            j_next = {JW{1'b0}};
            if (member_reg == LAST_N) begin
                // the last member accumulates before the update
                state_next = S_ACCUM;
            end else begin
                pend_next = accumulates;
                member_next = member_reg + 1'b1;
                state_next = S_BOUNDARY;
            end
        end
        S_ACCUM: begin
            j_next = j_reg + 1'b1;
            if (j_end) begin
                member_next = member_reg + 1'b1;
                state_next = S_BOUNDARY;
            end
        end
        S_UPDATE: begin
            lead_next = 1'b0;
            dirty_next = 1'b0;
            if (!lead_reg) begin
                j_next = j_reg + 1'b1;
                if (j_end) begin
                    fin_mode_next = 2'd1;
                    state_next = DIFF != 0 ? S_FIN_GAP : S_NEXT_GROUP;
                end
            end
        end
        S_FILL: begin
            j_next = j_reg + 1'b1;
            if (j_last) begin
                fin_mode_next = 2'd2;
                state_next = S_FIN_GAP;
            end
        end
        S_FIN_GAP: begin
            // the pass's last change reaches the unit's lanes
            state_next = S_FIN_START;
        end
        S_FIN_START: begin
            state_next = S_FIN_WAIT;
        end
        S_FIN_WAIT: begin
            if (!fin_busy) begin
                state_next = fin_mode_reg == 2'd0 ? S_EVAL_START : S_NEXT_GROUP;
            end
        end
        S_NEXT_GROUP: begin
            if (fill_reg) begin
                // the fill sweep: every group once, then training from group 0
                if (group_reg == LAST_G) begin
                    fill_next = 1'b0;
                    group_next = {GW{1'b0}};
                end else begin
                    group_next = group_reg + 1'b1;
                end
                state_next = S_GROUP;
            end else if (group_reg == LAST_G) begin
                group_next = {GW{1'b0}};
                iter_next = iter_reg + 1'b1;
                if (iter_reg + 1'b1 == iters_reg) begin
                    state_next = S_DONE;
                    busy_next = 1'b0;
                    done_next = 1'b1;
                end else begin
                    state_next = S_GROUP;
                end
            end else begin
                group_next = group_reg + 1'b1;
                state_next = S_GROUP;
            end
        end
        default: begin
            state_next = S_IDLE;
        end
    endcase
end

always @(posedge clk) begin
    if (rst) begin
        state_reg <= S_IDLE;
        ext_mode_reg <= 1'b1;
        ext_accept_reg <= 1'b1;
        after_reg <= S_IDLE;
        iter_reg <= 32'd0;
        iters_reg <= 32'd0;
        group_reg <= {GW{1'b0}};
        member_reg <= {NW{1'b0}};
        j_reg <= {JW{1'b0}};
        lead_reg <= 1'b0;
        wait_reg <= {LWW{1'b0}};
        outs_reg <= {MW{1'b0}};
        base_eval_reg <= 1'b0;
        served_reg <= 1'b0;
        dirty_reg <= 1'b0;
        pend_reg <= 1'b0;
        pause_reg <= 1'b0;
        busy_reg <= 1'b0;
        done_reg <= 1'b0;
        last_loss_reg <= 32'd0;
        prev_loss_reg <= 32'd0;
        base_loss_reg <= 32'd0;
        signal_reg <= 33'd0;
        serve_cnt_reg <= {SV_W{1'b0}};
        fill_reg <= 1'b0;
        fin_mode_reg <= 2'd0;
        op_fill_reg <= 1'b0;
        outstanding_reg <= 16'd0;
        op_read_reg <= 1'b0;
        op_perturb_reg <= 1'b0;
        op_restore_reg <= 1'b0;
        op_update_reg <= 1'b0;
    end else begin
        state_reg <= state_next;
        ext_mode_reg <= ext_mode_next;
        ext_accept_reg <= ext_accept_next;
        after_reg <= after_next;
        iter_reg <= iter_next;
        iters_reg <= iters_next;
        group_reg <= group_next;
        member_reg <= member_next;
        j_reg <= j_next;
        lead_reg <= lead_next;
        wait_reg <= wait_next;
        outs_reg <= outs_next;
        base_eval_reg <= base_eval_next;
        served_reg <= served_next;
        dirty_reg <= dirty_next;
        pend_reg <= pend_next;
        pause_reg <= pause_next;
        busy_reg <= busy_next;
        done_reg <= done_next;
        last_loss_reg <= last_loss_next;
        prev_loss_reg <= prev_loss_next;
        base_loss_reg <= base_loss_next;
        signal_reg <= signal_next;
        serve_cnt_reg <= serve_cnt_next;
        fill_reg <= fill_next;
        fin_mode_reg <= fin_mode_next;
        op_fill_reg <= state_next == S_FILL;
        outstanding_reg <= outstanding_reg + {15'd0, ext_in_fire} - {15'd0, ext_out_fire};
        op_read_reg <= state_next == S_READ;
        op_perturb_reg <= state_next == S_PERTURB && !lead_next && j_on_next;
        op_restore_reg <= state_next == S_RESTORE;
        op_update_reg <= state_next == S_UPDATE && !lead_next && j_on_next;
    end
end

endmodule

`resetall
