/*
 * fptgen RTL library: the difference unit of member evaluation by
 * difference (docs/training.md, "Evaluation by difference in hardware").
 *
 * The trainable layer L is dense, the network's first layer (its input
 * is the network input), with exact accumulation; its weights
 * (W_TRAIN = 1: parameters 0 .. ROWS*INPUTS - 1 of the training order,
 * row-major) and/or its biases (B_TRAIN = 1: the next ROWS) are the
 * trainable set. The unit keeps, per buffered sample s and output row r,
 * the committed exact dot product S[s][r] (without the bias), and decides
 * after a member's perturbation which samples the member changes: a
 * sample whose L outputs are all unchanged keeps its committed loss l[s]
 * (the controller stores it), every other sample must be evaluated.
 *
 * Walk (a mirror of fptgen_param_cursor): cur_clear, cur_rewind, cur_step
 * and cur_save move the unit's position (is_bias, row r, input i) over L's
 * trainable parameters exactly as they move the cursor, so in a cycle in
 * which the trainer writes a parameter the position is that parameter's.
 *
 * Snoop: in a cycle with wr_perturb or wr_update (the trainer writes
 * wdata at the cursor, whose committed value is committed, both PW-bit
 * two's complement codes) a weight's change D = wdata - committed, with
 * wr_fill (a write of the committed value itself) D = committed, goes to
 * the delta lanes (fptgen_delta_lanes): dS[s][slot] += D * x[s][i] for
 * every sample, slot = r - (the row of the pass's first weight). A pass
 * is the run of writes from the saved position (its first write follows
 * cur_save, cur_rewind or cur_clear): the unit records the rows it wrote
 * (rows_used), whether it wrote a bias (a member that changes a bias is
 * evaluated on every sample), and per slot whether the row's first write
 * was its input 0 (fresh: in a fill pass the sum starts there). A bias
 * written with wr_update or wr_fill is the new committed bias (the unit's
 * copy, in the training order's codes); with B_TRAIN = 0 the biases are
 * the constant BIASES.
 *
 * The writes are registered before anything is computed from them (a
 * write's data is the end of the trainer's perturbation path), so a
 * change reaches the lanes two cycles after its write.
 *
 * Finishing: fin_start (not while busy, at least 2 cycles after the
 * pass's last write) runs over every sample s and slot k < R (R = rows_used,
 * at least 1), one (s, k) per cycle from the second cycle after it on,
 * sample-major:
 *   - fin_mode 0 (member): y' = finish(b[r], S[s][r] + dS[s][k]) and
 *     y = finish(b[r], S[s][r]) (fptgen_delta_finish, twice); a sample is
 *     changed when any of its rows differs or the pass wrote a bias.
 *     Changed samples go, in increasing order, into a FIFO with two read
 *     sides (ch_valid, ch_index, ch_pop for the inputs; ct_index, ct_pop
 *     for the targets, fptgen_sample_buf's x_sel and t_sel) and are
 *     counted (ch_count); the unchanged samples'
 *     l[s] are summed (base_loss, modulo 2^32: the generator uses the unit
 *     only where no loss of M samples can reach 2^32);
 *   - fin_mode 1 (update): S[s][r] += dS[s][k];
 *   - fin_mode 2 (fill): S[s][r] = (fresh[k] ? 0 : S[s][r]) + dS[s][k], so
 *     that fill passes over every parameter in the training order (with
 *     wr_fill) compute S from nothing.
 * busy is high from the cycle after fin_start for M * R + FIN_TAIL cycles
 * (FIN_TAIL = 6: a start cycle, the reads, the finishing's LAT of 3, the
 * verdict); the results are valid when it falls.
 *
 * Inputs of the buffered samples (x[s][i], the network's input codes):
 * loaded with the sample buffer, from its load stream (a word of WORD_W =
 * VPW * X_W bits holds inputs k*VPW .. k*VPW + VPW - 1 of word k, input k*VPW
 * in the least significant bits; WORDS words per sample, the write
 * pointer wrapping after M samples, as fptgen_sample_buf's). ld_fire is a
 * word taken by the buffer; the unit then writes its VPW values, one per
 * cycle, into each sample's own memory (INPUTS x X_W, X_STYLE) and holds
 * ld_hold high meanwhile (the top level lowers ld_ready). A sample's
 * memory is read at the walk's input every cycle, so the lanes see all
 * M samples' x[.][i] one cycle after the write that needs them.
 *
 * Per-sample committed losses: l_we writes l_value into l[l_index].
 *
 * rst (synchronous) resets the walk, the load pointer, the finishing and
 * the FIFO; S, l and the biases are not reset (the fill computes S).
 *
 * Parameters out of range stop elaboration (fptgen_param_error_diff_eval_*,
 * which do not exist). Checked against the simulator's dense layer (the
 * committed and the perturbed network's outputs, sample by sample) by
 * generator/tests/rtl/diff_eval.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_diff_eval #(
    // Buffered samples, one lane each (>= 1)
    parameter integer M = 4,
    // L's inputs and outputs (>= 1)
    parameter integer INPUTS = 4,
    parameter integer ROWS = 2,
    // Input codes: width (1..32), signed
    parameter integer X_W = 8,
    parameter integer X_S = 1,
    // Load words: values per word (>= 1; WORD_W = VPW * X_W) and words per
    // sample (WORDS * VPW >= INPUTS > (WORDS - 1) * VPW)
    parameter integer VPW = 4,
    parameter integer WORDS = 1,
    // The trainer's parameter codes: width (2..31), two's complement
    parameter integer PW = 8,
    // 1: L's weights / biases are trainable (at least one)
    parameter integer W_TRAIN = 1,
    parameter integer B_TRAIN = 1,
    // Row slots of a pass: ceil((P - 1) / INPUTS) + 1 for P blocks (>= 1)
    parameter integer SLOTS = 2,
    // Exact dot product: width (2..64) and its shift into the accumulator
    parameter integer S_W = 24,
    parameter integer SHIFT = 0,
    // Bias, accumulator and output formats (fptgen_delta_finish)
    parameter integer B_W = 8,
    parameter integer B_F = 4,
    parameter integer B_S = 1,
    parameter integer A_W = 24,
    parameter integer A_F = 8,
    parameter integer A_S = 1,
    parameter integer A_Q = 0,
    parameter integer A_O = 0,
    parameter integer Y_W = 8,
    parameter integer Y_F = 4,
    parameter integer Y_S = 1,
    parameter integer Y_Q = 0,
    parameter integer Y_O = 0,
    // 1: relu; 0: linear
    parameter integer RELU = 1,
    // With B_TRAIN = 0: the biases' codes, row r at [r*B_W +: B_W]
    parameter [ROWS*B_W-1:0] BIASES = 0,
    // ram_style of each sample's input memory and of S (attributes only,
    // which Verilator does not read)
    /* verilator lint_off UNUSEDPARAM */
    parameter X_STYLE = "block",
    parameter S_STYLE = "block"
    /* verilator lint_on UNUSEDPARAM */
) (
    input  wire                     clk,
    input  wire                     rst,

    // The cursor's strobes
    input  wire                     cur_clear,
    input  wire                     cur_rewind,
    input  wire                     cur_step,
    input  wire                     cur_save,

    // The trainer's writes
    input  wire                     wr_perturb,
    input  wire                     wr_update,
    input  wire                     wr_fill,
    input  wire [PW-1:0]            wdata,
    input  wire [PW-1:0]            committed,

    // The sample buffer's load stream
    input  wire                     ld_fire,
    input  wire [VPW*X_W-1:0]       ld_x,
    output wire                     ld_hold,

    // Per-sample committed losses
    input  wire                     l_we,
    input  wire [clog2(M)-1:0]      l_index,
    input  wire [31:0]              l_value,

    // Finishing
    input  wire                     fin_start,
    input  wire [1:0]               fin_mode,
    output wire                     busy,
    output wire [clog2(M + 1)-1:0]  ch_count,
    output wire [31:0]              base_loss,
    output wire                     ch_valid,
    output wire [clog2(M)-1:0]      ch_index,
    input  wire                     ch_pop,
    output wire [clog2(M)-1:0]      ct_index,
    input  wire                     ct_pop
);

`include "fptgen_clog2.vh"

localparam integer SW_ = clog2(M);          // sample index
localparam integer CW = clog2(M + 1);       // sample count
localparam integer RW = clog2(ROWS);        // row
localparam integer IXW = clog2(INPUTS);     // input
localparam integer KW = clog2(SLOTS);       // slot
localparam integer RCW = clog2(SLOTS + 1);  // rows used 0..SLOTS
localparam integer DW = PW + 1;             // a weight's change
localparam integer WXW = clog2(WORDS);      // load word index
localparam integer UW = clog2(WORDS * VPW + 1); // unpack address
localparam integer VW = clog2(VPW + 1);     // values left in a word
localparam integer SAW = clog2(M * ROWS);   // S address
localparam integer FIN_LAT = 3;             // fptgen_delta_finish's LAT
localparam integer TAG_W = 32 + 2;          // l, slot in use, last slot

localparam integer LAST_I_I = INPUTS - 1;
localparam [IXW-1:0] LAST_I = LAST_I_I[IXW-1:0];
localparam integer LAST_R_I = ROWS - 1;
localparam [RW-1:0] LAST_R = LAST_R_I[RW-1:0];
localparam integer LAST_S_I = M - 1;
localparam [SW_-1:0] LAST_S = LAST_S_I[SW_-1:0];
localparam integer LAST_W_I = WORDS - 1;
localparam [WXW-1:0] LAST_W = LAST_W_I[WXW-1:0];
localparam integer VPW_I = VPW;
localparam [VW-1:0] VPW_C = VPW_I[VW-1:0];
localparam [UW-1:0] VPW_U = VPW_I[UW-1:0];
localparam integer INPUTS_I = INPUTS;
localparam [UW:0] INPUTS_U = INPUTS_I[UW:0];
localparam integer ROWS_I = ROWS;
localparam [SAW-1:0] ROWS_A = ROWS_I[SAW-1:0];

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (M < 1 || INPUTS < 1 || ROWS < 1 || SLOTS < 1 || VPW < 1 || WORDS < 1) begin : g_error_count_out_of_range
        fptgen_param_error_diff_eval_count_out_of_range error_inst ();
    end
    if (WORDS * VPW < INPUTS || (WORDS - 1) * VPW >= INPUTS) begin : g_error_words_do_not_fit_inputs
        fptgen_param_error_diff_eval_words_do_not_fit_inputs error_inst ();
    end
    if (X_W < 1 || X_W > 32 || PW < 2 || PW > 31 || X_S < 0 || X_S > 1) begin : g_error_width_out_of_range
        fptgen_param_error_diff_eval_width_out_of_range error_inst ();
    end
    if (W_TRAIN < 0 || W_TRAIN > 1 || B_TRAIN < 0 || B_TRAIN > 1 || W_TRAIN + B_TRAIN == 0) begin : g_error_train_flags_invalid
        fptgen_param_error_diff_eval_train_flags_invalid error_inst ();
    end
    if (SLOTS > ROWS || M * ROWS > 65536 || S_W < 2 || S_W > 64) begin : g_error_size_out_of_range
        fptgen_param_error_diff_eval_size_out_of_range error_inst ();
    end
endgenerate

// ---------------------------------------------------------------------------
// Walk: the cursor's position in L's trainable parameters
wire first_bias = (W_TRAIN == 0);
reg             pos_bias_reg, sav_bias_reg;
reg  [RW-1:0]   pos_r_reg, sav_r_reg;
reg  [IXW-1:0]  pos_i_reg, sav_i_reg;
reg             at_start_reg;   // the position is the saved one, not yet stepped from

always @(posedge clk) begin
    if (rst || cur_clear) begin
        pos_bias_reg <= first_bias;
        pos_r_reg <= {RW{1'b0}};
        pos_i_reg <= {IXW{1'b0}};
        sav_bias_reg <= first_bias;
        sav_r_reg <= {RW{1'b0}};
        sav_i_reg <= {IXW{1'b0}};
        at_start_reg <= 1'b1;
    end else if (cur_rewind) begin
        pos_bias_reg <= sav_bias_reg;
        pos_r_reg <= sav_r_reg;
        pos_i_reg <= sav_i_reg;
        at_start_reg <= 1'b1;
    end else if (cur_step) begin
        at_start_reg <= 1'b0;
        if (!pos_bias_reg) begin
            if (pos_i_reg == LAST_I) begin
                pos_i_reg <= {IXW{1'b0}};
                if (pos_r_reg == LAST_R) begin
                    pos_r_reg <= {RW{1'b0}};
                    pos_bias_reg <= (B_TRAIN != 0);
                end else begin
                    pos_r_reg <= pos_r_reg + 1'b1;
                end
            end else begin
                pos_i_reg <= pos_i_reg + 1'b1;
            end
        end else begin
            if (pos_r_reg == LAST_R) begin
                pos_r_reg <= {RW{1'b0}};
                pos_bias_reg <= first_bias;
            end else begin
                pos_r_reg <= pos_r_reg + 1'b1;
            end
        end
    end else if (cur_save) begin
        sav_bias_reg <= pos_bias_reg;
        sav_r_reg <= pos_r_reg;
        sav_i_reg <= pos_i_reg;
        at_start_reg <= 1'b1;
    end
end

// ---------------------------------------------------------------------------
// Snoop: a pass's writes
wire            wr = wr_perturb || wr_update || wr_fill;
wire            wr_weight = wr && !pos_bias_reg;
wire            wr_bias = wr && pos_bias_reg;
wire            unused_wr_bias = wr_bias;
reg  [RW-1:0]   base_r_reg;     // the row of the pass's first weight (slot 0)
reg  [RCW-1:0]  rows_used_reg;
reg             bias_seen_reg;
reg  [SLOTS-1:0] fresh_reg;
wire [RW-1:0]   slot_r = pos_r_reg - base_r_reg;
wire [KW-1:0]   slot_now = at_start_reg ? {KW{1'b0}} : slot_r[KW-1:0];
wire [31:0]     slot_rows = {{(32 - KW){1'b0}}, slot_now} + 32'd1;   // rows used when slot_now is the last
wire            unused_slot_rows = ^slot_rows;
wire            first_now = at_start_reg || pos_i_reg == {IXW{1'b0}};
wire            unused_slot_r = ^slot_r;

always @(posedge clk) begin
    if (rst) begin
        rows_used_reg <= {RCW{1'b0}};
        bias_seen_reg <= 1'b0;
        fresh_reg <= {SLOTS{1'b0}};
        base_r_reg <= {RW{1'b0}};
    end else if (wr) begin
        if (at_start_reg) begin
            bias_seen_reg <= pos_bias_reg;
            rows_used_reg <= {{(RCW - 1){1'b0}}, !pos_bias_reg};
            fresh_reg <= {{(SLOTS - 1){1'b0}}, !pos_bias_reg && pos_i_reg == {IXW{1'b0}}};
            if (!pos_bias_reg) begin
                base_r_reg <= pos_r_reg;
            end
        end else if (pos_bias_reg) begin
            bias_seen_reg <= 1'b1;
        end else if (pos_i_reg == {IXW{1'b0}}) begin
            // a weight row after the first: it starts at input 0
            rows_used_reg <= slot_rows[RCW-1:0];
            fresh_reg[slot_now] <= 1'b1;
        end
    end
end

// The write, registered: its change, lane slot, input and row
reg             sn_weight_reg, sn_bias_reg, sn_fill_reg, sn_commit_reg, sn_first_reg;
reg  [PW-1:0]   sn_wdata_reg, sn_committed_reg;
reg  [KW-1:0]   sn_slot_reg;
reg  [IXW-1:0]  sn_i_reg;
reg  [RW-1:0]   sn_r_reg;

always @(posedge clk) begin
    sn_weight_reg <= wr_weight && !rst;
    sn_bias_reg <= wr_bias && !rst;
    sn_fill_reg <= wr_fill;
    sn_commit_reg <= wr_update || wr_fill;
    sn_first_reg <= first_now;
    sn_wdata_reg <= wdata;
    sn_committed_reg <= committed;
    sn_slot_reg <= slot_now;
    sn_i_reg <= pos_i_reg;
    sn_r_reg <= pos_r_reg;
end

wire [DW-1:0]   wdata_x = {sn_wdata_reg[PW-1], sn_wdata_reg};
wire [DW-1:0]   committed_x = {sn_committed_reg[PW-1], sn_committed_reg};
wire [DW-1:0]   d_now = sn_fill_reg ? committed_x : wdata_x - committed_x;

// The committed biases
reg  [B_W-1:0]  bias_mem [0:ROWS-1];
wire            unused_wdata_hi = ^sn_wdata_reg;

generate
    if (B_TRAIN != 0) begin : g_bias_shadow
        always @(posedge clk) begin
            if (sn_bias_reg && sn_commit_reg) begin
                bias_mem[sn_r_reg] <= sn_wdata_reg[B_W-1:0];
            end
        end
    end else begin : g_bias_const
        wire unused_sn = sn_bias_reg ^ sn_commit_reg ^ (^sn_r_reg);
        genvar r;
        for (r = 0; r < ROWS; r = r + 1) begin : g_row
            initial bias_mem[r] = BIASES[r*B_W +: B_W];
        end
    end
endgenerate

// The lanes' input, registered with the sample inputs' read
reg             ln_valid_reg, ln_first_reg;
reg  [KW-1:0]   ln_slot_reg;
reg  [DW-1:0]   ln_d_reg;
wire [M*X_W-1:0] ln_x;

always @(posedge clk) begin
    ln_valid_reg <= sn_weight_reg && !rst;
    ln_first_reg <= sn_first_reg;
    ln_slot_reg <= sn_slot_reg;
    ln_d_reg <= d_now;
end

// ---------------------------------------------------------------------------
// Loading: each sample's inputs, from the buffer's load words
reg  [SW_-1:0]  ld_s_reg;       // the sample and word the next load word belongs to
reg  [WXW-1:0]  ld_k_reg;
reg  [UW-1:0]   ld_base_reg;    // its first input: ld_k * VPW
reg  [VPW*X_W-1:0] un_word_reg; // the word being unpacked
reg  [VW-1:0]   un_left_reg;
reg  [UW-1:0]   un_addr_reg;
reg  [SW_-1:0]  un_s_reg;

assign ld_hold = un_left_reg != {VW{1'b0}};
wire un_we = ld_hold && {1'b0, un_addr_reg} < INPUTS_U;

always @(posedge clk) begin
    if (rst) begin
        ld_s_reg <= {SW_{1'b0}};
        ld_k_reg <= {WXW{1'b0}};
        ld_base_reg <= {UW{1'b0}};
        un_left_reg <= {VW{1'b0}};
    end else if (ld_fire) begin
        un_word_reg <= ld_x;
        un_left_reg <= VPW_C;
        un_addr_reg <= ld_base_reg;
        un_s_reg <= ld_s_reg;
        if (ld_k_reg == LAST_W) begin
            ld_k_reg <= {WXW{1'b0}};
            ld_base_reg <= {UW{1'b0}};
            ld_s_reg <= (ld_s_reg == LAST_S) ? {SW_{1'b0}} : ld_s_reg + 1'b1;
        end else begin
            ld_k_reg <= ld_k_reg + 1'b1;
            ld_base_reg <= ld_base_reg + VPW_U;
        end
    end else if (ld_hold) begin
        un_word_reg <= un_word_reg >> X_W;
        un_left_reg <= un_left_reg - 1'b1;
        un_addr_reg <= un_addr_reg + 1'b1;
    end
end

genvar s;
generate
    for (s = 0; s < M; s = s + 1) begin : g_sample
        (* ram_style = X_STYLE *)
        reg  [X_W-1:0] x_mem [0:INPUTS-1];
        reg  [X_W-1:0] x_reg;

        always @(posedge clk) begin
            if (un_we && un_s_reg == s) begin
                x_mem[un_addr_reg[IXW-1:0]] <= un_word_reg[X_W-1:0];
            end
            x_reg <= x_mem[sn_i_reg];
        end

        assign ln_x[s*X_W +: X_W] = x_reg;
    end
endgenerate

// ---------------------------------------------------------------------------
// The delta lanes
reg  [KW-1:0]   f_slot_reg;
reg  [SW_-1:0]  f_s_reg;
wire [S_W-1:0]  ds;

fptgen_delta_lanes #(
    .LANES(M),
    .X_W(X_W),
    .X_S(X_S),
    .D_W(DW),
    .SLOTS(SLOTS),
    .ACC_W(S_W)
) u_lanes (
    .clk(clk),
    .rst(rst),
    .in_valid(ln_valid_reg),
    .in_first(ln_first_reg),
    .in_slot(ln_slot_reg),
    .in_d(ln_d_reg),
    .in_x(ln_x),
    .rd_slot(f_slot_reg),
    .rd_lane(f_s_reg),
    .rd_data(ds)
);

// ---------------------------------------------------------------------------
// Finishing, stage 0: one (sample, slot) per cycle, from the cycle after
// the start cycle (f_go)
reg             f_go_reg;
reg             f_run_reg;
reg  [1:0]      mode_reg;
reg  [RCW-1:0]  f_rows_reg;     // R
reg  [SAW-1:0]  f_srow_reg;     // s * ROWS
wire [31:0]     f_slot32 = {{(32 - KW){1'b0}}, f_slot_reg};
wire [31:0]     f_rows32 = {{(32 - RCW){1'b0}}, f_rows_reg};
wire            f_slot_last = f_slot32 + 32'd1 >= f_rows32;
wire            f_slot_used = f_slot32 < f_rows32;
wire [31:0]     f_r32 = {{(32 - RW){1'b0}}, base_r_reg} + f_slot32;
wire [31:0]     f_addr32 = {{(32 - SAW){1'b0}}, f_srow_reg} + f_r32;
wire [RW-1:0]   f_r = f_r32[RW-1:0];
wire [SAW-1:0]  f_addr = f_addr32[SAW-1:0];
wire            unused_f = ^{f_r32, f_addr32};

// Stage 1: the reads
(* ram_style = S_STYLE *)
reg  [S_W-1:0]  s_mem [0:M*ROWS-1];
reg  [S_W-1:0]  s_q_reg;
reg  [B_W-1:0]  b_q_reg;
reg  [31:0]     l_mem [0:M-1];
reg  [31:0]     l_q_reg;
reg             v1_reg, used1_reg, last1_reg, fresh1_reg;
reg  [SAW-1:0]  addr1_reg;

always @(posedge clk) begin
    if (l_we) begin
        l_mem[l_index] <= l_value;
    end
    l_q_reg <= l_mem[f_s_reg];
    s_q_reg <= s_mem[f_addr];
    b_q_reg <= bias_mem[f_r];
    addr1_reg <= f_addr;
    used1_reg <= f_slot_used;
    last1_reg <= f_slot_last;
    fresh1_reg <= fresh_reg[f_slot_reg];
    v1_reg <= f_run_reg && !rst;
    // commits: the new sum, written where it was read
    if (v1_reg && used1_reg && mode_reg != 2'd0) begin
        s_mem[addr1_reg] <= ((mode_reg == 2'd2 && fresh1_reg) ? {S_W{1'b0}} : s_q_reg) + ds;
    end
end

always @(posedge clk) begin
    if (rst) begin
        f_go_reg <= 1'b0;
        f_run_reg <= 1'b0;
        mode_reg <= 2'd0;
        f_slot_reg <= {KW{1'b0}};
        f_s_reg <= {SW_{1'b0}};
        f_srow_reg <= {SAW{1'b0}};
        f_rows_reg <= {RCW{1'b0}};
    end else if (fin_start && !busy) begin
        f_go_reg <= 1'b1;
        mode_reg <= fin_mode;
        f_slot_reg <= {KW{1'b0}};
        f_s_reg <= {SW_{1'b0}};
        f_srow_reg <= {SAW{1'b0}};
        f_rows_reg <= rows_used_reg;
    end else if (f_go_reg) begin
        f_go_reg <= 1'b0;
        f_run_reg <= 1'b1;
    end else if (f_run_reg) begin
        if (f_slot_last) begin
            f_slot_reg <= {KW{1'b0}};
            f_srow_reg <= f_srow_reg + ROWS_A;
            if (f_s_reg == LAST_S) begin
                f_run_reg <= 1'b0;
            end else begin
                f_s_reg <= f_s_reg + 1'b1;
            end
        end else begin
            f_slot_reg <= f_slot_reg + 1'b1;
        end
    end
end

// Stages 2 to 4: the perturbed and the committed output of the row
wire            new_valid, old_valid;
wire [Y_W-1:0]  y_new, y_old;
wire [TAG_W-1:0] tag_in = {l_q_reg, used1_reg, last1_reg};
wire [TAG_W-1:0] tag_out, tag_unused;
wire            fin_in = v1_reg && mode_reg == 2'd0;

fptgen_delta_finish #(
    .S_W(S_W), .SHIFT(SHIFT),
    .B_W(B_W), .B_F(B_F), .B_S(B_S),
    .A_W(A_W), .A_F(A_F), .A_S(A_S), .A_Q(A_Q), .A_O(A_O),
    .Y_W(Y_W), .Y_F(Y_F), .Y_S(Y_S), .Y_Q(Y_Q), .Y_O(Y_O),
    .RELU(RELU), .TAG_W(TAG_W)
) u_new (
    .clk(clk), .rst(rst), .in_valid(fin_in),
    .in_s(s_q_reg), .in_ds(ds), .in_b(b_q_reg), .in_tag(tag_in),
    .out_valid(new_valid), .out_y(y_new), .out_tag(tag_out)
);

fptgen_delta_finish #(
    .S_W(S_W), .SHIFT(SHIFT),
    .B_W(B_W), .B_F(B_F), .B_S(B_S),
    .A_W(A_W), .A_F(A_F), .A_S(A_S), .A_Q(A_Q), .A_O(A_O),
    .Y_W(Y_W), .Y_F(Y_F), .Y_S(Y_S), .Y_Q(Y_Q), .Y_O(Y_O),
    .RELU(RELU), .TAG_W(TAG_W)
) u_old (
    .clk(clk), .rst(rst), .in_valid(fin_in),
    .in_s(s_q_reg), .in_ds({S_W{1'b0}}), .in_b(b_q_reg), .in_tag(tag_in),
    .out_valid(old_valid), .out_y(y_old), .out_tag(tag_unused)
);

wire unused_finish = old_valid ^ (^tag_unused);

// Stage 5: the verdicts
reg             changed_reg;    // a row of the current sample differs
reg  [SW_-1:0]  v_s_reg;        // the sample of the next verdict
reg  [CW-1:0]   count_reg;
reg  [31:0]     base_reg;
reg  [SW_-1:0]  fifo [0:M-1];
reg  [CW-1:0]   rd_ptr_reg, rt_ptr_reg;
wire [31:0]     out_l = tag_out[TAG_W-1:2];
wire            out_used = tag_out[1];
wire            out_last = tag_out[0];
wire            differs = changed_reg || bias_seen_reg || (out_used && y_new != y_old);

always @(posedge clk) begin
    if (rst || (fin_start && !busy)) begin
        changed_reg <= 1'b0;
        v_s_reg <= {SW_{1'b0}};
        count_reg <= {CW{1'b0}};
        base_reg <= 32'd0;
        rd_ptr_reg <= {CW{1'b0}};
        rt_ptr_reg <= {CW{1'b0}};
    end else begin
        if (new_valid) begin
            if (out_last) begin
                changed_reg <= 1'b0;
                v_s_reg <= v_s_reg + 1'b1;
                if (differs) begin
                    fifo[count_reg[SW_-1:0]] <= v_s_reg;
                    count_reg <= count_reg + 1'b1;
                end else begin
                    base_reg <= base_reg + out_l;
                end
            end else begin
                changed_reg <= differs;
            end
        end
        if (ch_pop && ch_valid) begin
            rd_ptr_reg <= rd_ptr_reg + 1'b1;
        end
        if (ct_pop && rt_ptr_reg < count_reg) begin
            rt_ptr_reg <= rt_ptr_reg + 1'b1;
        end
    end
end

// busy: the run, the reads, the finishing and the verdict in flight
reg  [FIN_LAT:0] flight_reg;

always @(posedge clk) begin
    if (rst) begin
        flight_reg <= {(FIN_LAT + 1){1'b0}};
    end else begin
        flight_reg <= {flight_reg[FIN_LAT-1:0], v1_reg};
    end
end

assign busy = f_go_reg || f_run_reg || v1_reg || (|flight_reg);
assign ch_count = count_reg;
assign base_loss = base_reg;
assign ch_valid = rd_ptr_reg < count_reg;
assign ch_index = fifo[rd_ptr_reg[SW_-1:0]];
assign ct_index = fifo[rt_ptr_reg[SW_-1:0]];

endmodule

`resetall
