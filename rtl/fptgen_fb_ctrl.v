/*
 * fptgen RTL library: the controller of a feedback-rule trainer (training:
 * rule: dfa, drtp or sgm; docs/training.md, "Feedback rules" and "Hardware of
 * the feedback rules").
 *
 * ctl_start (when idle or done) trains cfg_iterations iterations over the
 * M buffered samples. Each sample, from a boundary:
 *   BOUND  requests that wait are served first (at most SERVE_MAX per
 *          sample, then the pipeline drains), a pause is taken here;
 *   PLAY   at sample 0, one cycle: the sample buffer starts the iteration;
 *   FEED   x_allow until the pipeline takes the sample (x_fire);
 *   WAIT   until its output is taken (out_fire): the layers captured their
 *          inputs and outputs on the way, the error unit captures y and t;
 *   ERR    C cycles (k = 0 .. C - 1): the error unit finds k*;
 *   SGM    rule sgm only (SGM_CYCLES > 0): SGM_CYCLES cycles while the
 *          layers' synthetic-gradient modules compute h (h_start in the
 *          last ERR cycle);
 *   DELTA  for each trainable layer l in turn, N_OUT[l] * C steps: output
 *          o = 0, 1, ..., each over k = 0 .. C - 1 (d_last at C - 1, when
 *          the layer's delta is made: a mon event of kind 0);
 *   UPDATE the trainable tensors in training order, every parameter: one
 *          cycle (cursor step) when its row's delta is 0 (d_zero), else
 *          three: read, wait, write the new value (a mon event of kind 1)
 *          and step; a layer with ACC[l] > 0 (a conv2d, fptgen_fb_conv)
 *          first sums its step: one cycle that starts it (u_acc), then
 *          ACC[l] cycles.
 * Requests are served in ext_mode only (IDLE, DONE, BOUND's serving, a
 * pause), so the pipeline holds either requests or one training sample,
 * and every request is answered with committed parameters.
 *
 * Per-tensor parameters are packed, tensor k at bits [k*32 +: 32] (ROWS,
 * COLS, LAYER: its layer's index among the trainable layers) and [k]
 * (BIAS: the tensor is a layer's biases); per-layer N_OUT at [l*32 +: 32].
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_fb_ctrl #(
    // Trainable tensors and trainable layers (>= 1)
    parameter integer K = 2,
    parameter integer L = 1,
    // Buffered samples (>= 1) and network outputs (>= 1)
    parameter integer M = 4,
    parameter integer C = 2,
    // Requests served at a boundary at most (>= 1)
    parameter integer SERVE_MAX = 4,
    // Per tensor: rows, columns (parameters per row), layer, and whether
    // it holds biases
    parameter [K*32-1:0] ROWS = {32'd3, 32'd3},
    parameter [K*32-1:0] COLS = {32'd1, 32'd4},
    parameter [K*32-1:0] LAYER = {32'd0, 32'd0},
    parameter [K-1:0]    BIAS = 2'b10,
    // Per layer: outputs, and the cycles its step takes to sum (0: none,
    // a dense layer)
    parameter [L*32-1:0] N_OUT = {32'd3},
    parameter [L*32-1:0] ACC = {32'd0},
    // Width of mon_index (holds every parameter and every delta index)
    parameter integer IX_W = 4,
    // Cycles of the SGM state (0: no synthetic-gradient module)
    parameter integer SGM_CYCLES = 0
) (
    input  wire                 clk,
    input  wire                 rst,
    // Control and status
    input  wire                 ctl_start,
    input  wire                 ctl_pause,
    input  wire                 ctl_resume,
    input  wire [31:0]          cfg_iterations,
    output wire                 st_busy,
    output wire                 st_paused,
    output wire                 st_done,
    output wire [31:0]          st_iteration,
    output wire [clog2(M)-1:0]  st_sample,
    // External requests
    output wire                 ext_mode,
    output wire                 ext_accept,
    input  wire                 ext_in_valid,
    input  wire                 ext_in_fire,
    input  wire                 ext_out_fire,
    // Sample buffer and pipeline
    output wire                 ld_enable,
    output wire                 play,
    output wire                 x_allow,
    input  wire                 x_fire,
    input  wire                 out_fire,
    // Error unit
    output wire                 err_cap,
    output wire                 e_rot,
    output wire                 e_scan,
    output wire [clog2(C)-1:0]  k,
    // Synthetic-gradient modules: start h
    output wire                 h_start,
    // Layers: deltas
    output wire                 d_seed,
    output wire [L-1:0]         d_step,
    output wire                 d_last,
    // Layers: update walk
    output wire [L-1:0]         u_row,
    output wire [L-1:0]         u_col,
    output wire                 u_bias,
    output wire [L-1:0]         u_acc,
    output wire [clog2(L)-1:0]  u_layer,
    input  wire                 d_zero,
    // Parameter cursor
    output wire                 cur_clear,
    output wire                 cur_step,
    output wire                 op_read,
    output wire                 op_write,
    // Events: kind 0 a delta (index: its position among every layer's
    // outputs), kind 1 a parameter written (index: training order)
    output wire                 mon_valid,
    output wire                 mon_kind,
    output wire [IX_W-1:0]      mon_index
);

`include "fptgen_clog2.vh"

// Entry k of a packed per-tensor (or per-layer) parameter
function integer entry;
    input [K*32-1:0] v;
    input integer i;
    begin
        entry = v[i*32 +: 32];
    end
endfunction

function integer max_entry;
    input [K*32-1:0] v;
    input integer n;
    integer i;
    begin
        max_entry = 1;
        for (i = 0; i < n; i = i + 1) begin
            if (entry(v, i) > max_entry) max_entry = entry(v, i);
        end
    end
endfunction

function integer max_out;
    input [L*32-1:0] v;
    integer i;
    begin
        max_out = 1;
        for (i = 0; i < L; i = i + 1) begin
            if (v[i*32 +: 32] > max_out) max_out = v[i*32 +: 32];
        end
    end
endfunction

localparam integer SW = clog2(M);
localparam integer KW = clog2(C);
localparam integer TW = clog2(K);
localparam integer LW = clog2(L);
localparam integer RW = clog2(max_entry(ROWS, K));
localparam integer CW = clog2(max_entry(COLS, K));
localparam integer OW = clog2(max_out(N_OUT));
localparam integer FW = 16;                    // requests in flight
localparam integer QW = clog2(SERVE_MAX + 1);

localparam [3:0] S_IDLE = 4'd0, S_DRAIN = 4'd1, S_BOUND = 4'd2, S_SERVE = 4'd3,
                 S_PAUSED = 4'd4, S_PLAY = 4'd5, S_FEED = 4'd6, S_WAIT = 4'd7,
                 S_ERR = 4'd8, S_DELTA = 4'd9, S_READ = 4'd10, S_HOLD = 4'd11,
                 S_WRITE = 4'd12, S_DONE = 4'd13, S_SGM = 4'd14, S_ACC = 4'd15;
localparam integer GW = clog2(SGM_CYCLES + 1);
localparam integer AW = clog2(max_out(ACC) + 1);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (K < 1 || L < 1 || L > K || M < 1 || C < 1 || SERVE_MAX < 1 || IX_W < 1 || SGM_CYCLES < 0) begin : g_error_out_of_range
        fptgen_param_error_fb_ctrl_out_of_range error_inst ();
    end
endgenerate

reg [3:0]      state_reg;
reg [31:0]     it_reg;
reg [SW-1:0]   s_reg;
reg [KW-1:0]   k_reg;
reg [LW-1:0]   l_reg;
reg [OW-1:0]   o_reg;
reg [TW-1:0]   t_reg;       // tensor of the update walk
reg [RW-1:0]   row_reg;
reg [CW-1:0]   col_reg;
reg [IX_W-1:0] ix_reg;      // delta index, then parameter index
reg [FW-1:0]   flight_reg;
reg [QW-1:0]   served_reg;
reg            pause_reg;
reg [GW-1:0]   sgm_reg;     // cycles of the SGM state so far
reg [AW-1:0]   acc_reg;     // cycles of the ACC state so far
reg            summed_reg;  // the current parameter's step is summed

// The current tensor's and layer's sizes.
reg [31:0] rows_cur, cols_cur, layer_cur, nout_cur, acc_cur;
reg        bias_cur;
integer i;
always @(*) begin
    rows_cur = 32'd1;
    cols_cur = 32'd1;
    layer_cur = 32'd0;
    bias_cur = 1'b0;
    nout_cur = 32'd1;
    acc_cur = 32'd0;
    for (i = 0; i < K; i = i + 1) begin
        if ({{(32 - TW){1'b0}}, t_reg} == i) begin
            rows_cur = ROWS[i*32 +: 32];
            cols_cur = COLS[i*32 +: 32];
            layer_cur = LAYER[i*32 +: 32];
            bias_cur = BIAS[i];
        end
    end
    for (i = 0; i < L; i = i + 1) begin
        if ({{(32 - LW){1'b0}}, l_reg} == i) begin
            nout_cur = N_OUT[i*32 +: 32];
        end
        if (layer_cur == i) begin
            acc_cur = ACC[i*32 +: 32];
        end
    end
end

wire [31:0] k32 = {{(32 - KW){1'b0}}, k_reg};
wire [31:0] o32 = {{(32 - OW){1'b0}}, o_reg};
wire [31:0] row32 = {{(32 - RW){1'b0}}, row_reg};
wire [31:0] col32 = {{(32 - CW){1'b0}}, col_reg};
wire [31:0] t32 = {{(32 - TW){1'b0}}, t_reg};
wire [31:0] l32 = {{(32 - LW){1'b0}}, l_reg};
wire [31:0] s32 = {{(32 - SW){1'b0}}, s_reg};

wire k_last = k32 == C - 1;
wire o_last = o32 == nout_cur - 1;
wire l_last = l32 == L - 1;
wire col_last = col32 == cols_cur - 1;
wire row_last = row32 == rows_cur - 1;
wire t_last = t32 == K - 1;
wire s_last = s32 == M - 1;

wire in_update = state_reg == S_READ || state_reg == S_ACC || state_reg == S_HOLD || state_reg == S_WRITE;
wire skip = state_reg == S_READ && d_zero;
wire sum_first = state_reg == S_READ && !d_zero && acc_cur != 0 && !summed_reg;
wire advance = skip || state_reg == S_WRITE;
wire sample_end = advance && col_last && row_last && t_last;
wire serving = state_reg == S_SERVE;
wire served_full = {{(32 - QW){1'b0}}, served_reg} >= SERVE_MAX;
wire idle = state_reg == S_IDLE || state_reg == S_DONE;

always @(posedge clk) begin
    if (rst) begin
        state_reg <= S_IDLE;
        it_reg <= 32'd0;
        s_reg <= {SW{1'b0}};
        k_reg <= {KW{1'b0}};
        l_reg <= {LW{1'b0}};
        o_reg <= {OW{1'b0}};
        t_reg <= {TW{1'b0}};
        row_reg <= {RW{1'b0}};
        col_reg <= {CW{1'b0}};
        ix_reg <= {IX_W{1'b0}};
        served_reg <= {QW{1'b0}};
        pause_reg <= 1'b0;
        sgm_reg <= {GW{1'b0}};
        acc_reg <= {AW{1'b0}};
        summed_reg <= 1'b0;
    end else begin
        // A pause while paused is ignored (docs/training.md, "Pause and
        // resume"), as fptgen_es_ctrl does: only a running trainer latches it.
        if (ctl_pause && !idle && state_reg != S_PAUSED) begin
            pause_reg <= 1'b1;
        end
        case (state_reg)
            S_IDLE, S_DONE: begin
                if (ctl_start) begin
                    it_reg <= 32'd0;
                    s_reg <= {SW{1'b0}};
                    served_reg <= {QW{1'b0}};
                    pause_reg <= 1'b0;
                    state_reg <= S_DRAIN;
                end
            end
            S_DRAIN: begin
                if (flight_reg == {FW{1'b0}}) begin
                    state_reg <= S_BOUND;
                end
            end
            S_BOUND: begin
                if (it_reg == cfg_iterations) begin
                    state_reg <= S_DONE;
                end else if (pause_reg || ctl_pause) begin
                    pause_reg <= 1'b0;
                    state_reg <= S_PAUSED;
                end else if (ext_in_valid && !served_full) begin
                    state_reg <= S_SERVE;
                end else begin
                    served_reg <= {QW{1'b0}};
                    state_reg <= s_reg == {SW{1'b0}} ? S_PLAY : S_FEED;
                end
            end
            S_SERVE: begin
                if (ext_in_fire) begin
                    served_reg <= served_reg + 1'b1;
                end
                if (!ext_in_valid || (ext_in_fire && {{(32 - QW){1'b0}}, served_reg} + 1 >= SERVE_MAX)) begin
                    state_reg <= S_DRAIN;
                end
            end
            S_PAUSED: begin
                if (ctl_resume) begin
                    state_reg <= S_DRAIN;
                end
            end
            S_PLAY: state_reg <= S_FEED;
            S_FEED: begin
                if (x_fire) begin
                    state_reg <= S_WAIT;
                end
            end
            S_WAIT: begin
                if (out_fire) begin
                    k_reg <= {KW{1'b0}};
                    state_reg <= S_ERR;
                end
            end
            S_ERR: begin
                k_reg <= k_last ? {KW{1'b0}} : k_reg + 1'b1;
                if (k_last) begin
                    l_reg <= {LW{1'b0}};
                    o_reg <= {OW{1'b0}};
                    ix_reg <= {IX_W{1'b0}};
                    sgm_reg <= {GW{1'b0}};
                    state_reg <= SGM_CYCLES > 0 ? S_SGM : S_DELTA;
                end
            end
            S_SGM: begin
                sgm_reg <= sgm_reg + 1'b1;
                if ({{(32 - GW){1'b0}}, sgm_reg} == SGM_CYCLES - 1) begin
                    state_reg <= S_DELTA;
                end
            end
            S_DELTA: begin
                k_reg <= k_last ? {KW{1'b0}} : k_reg + 1'b1;
                if (k_last) begin
                    o_reg <= o_last ? {OW{1'b0}} : o_reg + 1'b1;
                    ix_reg <= ix_reg + 1'b1;
                    if (o_last) begin
                        l_reg <= l_reg + 1'b1;
                        if (l_last) begin
                            t_reg <= {TW{1'b0}};
                            row_reg <= {RW{1'b0}};
                            col_reg <= {CW{1'b0}};
                            ix_reg <= {IX_W{1'b0}};
                            state_reg <= S_READ;
                        end
                    end
                end
            end
            S_READ: begin
                if (sum_first) begin
                    acc_reg <= {AW{1'b0}};
                    state_reg <= S_ACC;
                end else if (!d_zero) begin
                    state_reg <= S_HOLD;
                end
            end
            S_ACC: begin
                acc_reg <= acc_reg + 1'b1;
                if ({{(32 - AW){1'b0}}, acc_reg} == acc_cur - 1) begin
                    summed_reg <= 1'b1;
                    state_reg <= S_READ;
                end
            end
            S_HOLD: state_reg <= S_WRITE;
            S_WRITE: begin
                summed_reg <= 1'b0;
                state_reg <= S_READ;
            end
            default: state_reg <= S_IDLE;
        endcase
        if (advance) begin
            ix_reg <= ix_reg + 1'b1;
            col_reg <= col_last ? {CW{1'b0}} : col_reg + 1'b1;
            if (col_last) begin
                row_reg <= row_last ? {RW{1'b0}} : row_reg + 1'b1;
                if (row_last) begin
                    t_reg <= t_last ? {TW{1'b0}} : t_reg + 1'b1;
                end
            end
            if (sample_end) begin
                s_reg <= s_last ? {SW{1'b0}} : s_reg + 1'b1;
                if (s_last) begin
                    it_reg <= it_reg + 32'd1;
                end
                state_reg <= S_BOUND;
            end
        end
    end
end

// Requests in flight: accepted and not yet answered.
always @(posedge clk) begin
    if (rst) begin
        flight_reg <= {FW{1'b0}};
    end else if (ext_in_fire != ext_out_fire) begin
        flight_reg <= ext_in_fire ? flight_reg + 1'b1 : flight_reg - 1'b1;
    end
end

wire training_phase = state_reg == S_PLAY || state_reg == S_FEED || state_reg == S_WAIT ||
                      state_reg == S_ERR || state_reg == S_SGM || state_reg == S_DELTA || in_update;

assign st_busy = !idle;
assign st_paused = state_reg == S_PAUSED;
assign st_done = state_reg == S_DONE;
assign st_iteration = it_reg;
assign st_sample = s_reg;

assign ext_mode = !training_phase;
assign ext_accept = idle || (serving && !served_full) || state_reg == S_PAUSED;
assign ld_enable = idle;
assign play = state_reg == S_PLAY;
assign x_allow = state_reg == S_FEED;
assign err_cap = state_reg == S_WAIT && out_fire;
assign e_rot = state_reg == S_ERR || state_reg == S_DELTA;
assign e_scan = state_reg == S_ERR;
assign k = k_reg;
assign h_start = SGM_CYCLES > 0 && state_reg == S_ERR && k_last;
assign d_seed = err_cap;
assign d_last = k_last;

genvar j;
generate
    for (j = 0; j < L; j = j + 1) begin : g_layer
        wire here = l32 == j;
        wire mine = layer_cur == j;
        assign d_step[j] = state_reg == S_DELTA && here;
        assign u_row[j] = advance && mine && col_last;
        assign u_col[j] = advance && mine && !bias_cur;
        assign u_acc[j] = sum_first && mine;
    end
endgenerate

assign u_bias = bias_cur;
assign u_layer = layer_cur[LW-1:0];

assign cur_clear = idle && ctl_start;
assign cur_step = advance;
assign op_read = state_reg == S_READ && !d_zero && !sum_first;
assign op_write = state_reg == S_WRITE;

assign mon_valid = (state_reg == S_DELTA && k_last) || state_reg == S_WRITE;
assign mon_kind = state_reg == S_WRITE;
assign mon_index = ix_reg;

wire unused_layer = ^layer_cur[31:LW];

endmodule

`resetall
