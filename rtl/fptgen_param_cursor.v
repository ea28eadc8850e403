/*
 * fptgen RTL library: the ES trainer's parameter cursor and the committed
 * parameters of a group.
 *
 * The trainer walks its K trainable tensors one parameter at a time, in the
 * training order (docs/training.md, "Order of the trainable parameters"):
 * tensor 0's parameters, then tensor 1's, ..., back to tensor 0's first
 * after the last. Each tensor is a matrix of ROWS x COLS parameters in a
 * memory folded PE x SIMD (docs/hardware.md, "Parameter memories"), walked
 * by its own fptgen_param_walk; this module adds the current tensor, so
 * that together they are the cursor, and everything the trainer does with
 * the memories at the cursor:
 *
 * - cursor strobes (from fptgen_es_ctrl, which raises at most one per
 *   cycle; the module requires that): clear moves the cursor and its
 *   saved position to the first parameter; rewind returns to the saved
 *   position; step moves to the next parameter (the current tensor's walk
 *   steps, and after its last parameter the next tensor becomes current);
 *   save remembers the position;
 * - trainer ports: tr_en[k] is high in a cycle with op_read or op_write
 *   when tensor k is current, tr_we[k] with op_write; tensor k's word
 *   address and column select are its field of tr_addr and tr_col (fields
 *   in tensor order, tensor 0 in the least significant bits, each clog2 of
 *   its memory's words and columns wide), its read data its field of
 *   tr_rdata (WIDTH[k] bits);
 * - committed values: op_read (with the block blk) reads the parameter at
 *   the cursor; the read data arrives one cycle later and is written, two's
 *   complement sign-extended (SIGNED[k] = 1) or zero-extended to PW bits,
 *   into block blk's register the cycle after that (so a run of reads, one
 *   per cycle, fills one register per cycle). param is block blk's
 *   register: with PREFETCH = 0 read combinationally at blk; with
 *   PREFETCH = 1 a register loaded on every edge with block blk_next's
 *   value (the caller's blk of the next cycle; a value written on the same
 *   edge is forwarded from a second register, through one 2:1
 *   multiplexer), so that param starts a register-to-register path
 *   instead of continuing one through the P-entry memory's read (issue 17:
 *   that read began the longest path of the trained examples). Either way
 *   param in a cycle is block blk's register as of that cycle;
 * - ahead (AHEAD = 1; with AHEAD = 0 the three outputs are 0 and the
 *   logic absent): a read also keeps the tensor it read from, with the value; on
 *   every edge param_ahead is loaded with block blk_ahead's committed value
 *   and lo_ahead and hi_ahead with the bounds of its tensor, as they were
 *   before the edge (a value written on the same edge is not forwarded),
 *   so that in a writing pass, where blk_ahead is the block written two
 *   cycles later (fptgen_es_ctrl), they are the value the next cycle
 *   writes from and its clamp range, one cycle early, all three from
 *   flip-flops: the trainer computes the write data a cycle ahead from
 *   them (issue 37). (A pass writes block j at the parameter that the
 *   group's read read into block j, the cursor walking the same way, so
 *   the tensor is the cursor's at the write. Reads end before the
 *   BOUNDARY that starts a pass, so no write is skipped there.);
 * - bounds: lo and hi are LO[k] and HI[k] of the current tensor k (PW-bit
 *   codes), the clamp range of its format.
 *
 * Per-tensor parameters are packed, tensor k at bits [k*32 +: 32] (ROWS,
 * COLS, PE, SIMD, WIDTH), [k*PW +: PW] (LO, HI) and [k] (SIGNED).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_param_cursor #(
    // Trainable tensors (>= 1)
    parameter integer K = 2,
    // Incremental-training blocks: committed registers (>= 1)
    parameter integer P = 2,
    // Width of the committed values and bounds: signed codes (>= 1)
    parameter integer PW = 9,
    // 1: param registered, from blk_next (the next cycle's blk); 0: param
    // read at blk in the same cycle (blk_next unused)
    parameter integer PREFETCH = 0,
    // 1: param_ahead, lo_ahead and hi_ahead (see the header); 0: they are 0
    parameter integer AHEAD = 0,
    // Vivado (and yosys) ram_style of the P committed values: "distributed"
    // (LUTRAM: with PREFETCH its read ends in the prefetch register) or
    // "block" (the block RAM's output then starts the perturbation's path;
    // read only by the synthesis attribute, which Verilator does not count
    // as a use)
    /* verilator lint_off UNUSEDPARAM */
    parameter COMMITTED_STYLE = "distributed",
    /* verilator lint_on UNUSEDPARAM */
    // Per tensor: the matrix and its folding (as fptgen_param_walk's)
    parameter [K*32-1:0] ROWS = {32'd2, 32'd2},
    parameter [K*32-1:0] COLS = {32'd1, 32'd2},
    parameter [K*32-1:0] PE = {32'd2, 32'd2},
    parameter [K*32-1:0] SIMD = {32'd1, 32'd2},
    // Per tensor: bits per parameter (1..PW, 1..PW-1 unsigned), and 1 for
    // two's complement, 0 for unsigned
    parameter [K*32-1:0] WIDTH = {32'd8, 32'd8},
    parameter [K-1:0] SIGNED = {K{1'b1}},
    // Per tensor: the clamp bounds, PW-bit two's complement codes
    parameter [K*PW-1:0] LO = {9'h181, 9'h181},
    parameter [K*PW-1:0] HI = {9'h07f, 9'h07f}
) (
    input  wire                    clk,
    input  wire                    rst,
    // Cursor strobes, at most one per cycle
    input  wire                    clear,
    input  wire                    rewind,
    input  wire                    step,
    input  wire                    save,
    // Serial-phase operation at the cursor, for block blk
    input  wire                    op_read,
    input  wire                    op_write,
    input  wire [clog2(P)-1:0]     blk,
    input  wire [clog2(P)-1:0]     blk_next,
    input  wire [clog2(P)-1:0]     blk_ahead,
    // Trainer ports of the tensors' memories: enables, and fields 0
    // (addresses), 1 (column selects) and 2 (read data) of every tensor
    output wire [K-1:0]            tr_en,
    output wire [K-1:0]            tr_we,
    output wire [field_offset(0, K)-1:0] tr_addr,
    output wire [field_offset(1, K)-1:0] tr_col,
    input  wire [field_offset(2, K)-1:0] tr_rdata,
    // Block blk's committed value, and the current tensor's bounds
    output wire [PW-1:0]           param,
    output wire [PW-1:0]           lo,
    output wire [PW-1:0]           hi,
    // Block blk_ahead's committed value and its tensor's bounds,
    // registered (see the header)
    output wire [PW-1:0]           param_ahead,
    output wire [PW-1:0]           lo_ahead,
    output wire [PW-1:0]           hi_ahead
);

`include "fptgen_clog2.vh"

// Entry k of a packed per-tensor parameter
function integer entry;
    input [K*32-1:0] v;
    input integer k;
    begin
        entry = v[k*32 +: 32];
    end
endfunction

// The width of tensor k's field of a packed trainer port: field 0 its
// memory's word address (clog2 of its words), 1 its column select (clog2 of
// its columns), 2 its read data (WIDTH)
function integer field_width;
    input integer f;
    input integer k;
    begin
        if (f == 0) begin
            field_width = clog2(((entry(ROWS, k) + entry(PE, k) - 1) / entry(PE, k)) *
                                ((entry(COLS, k) + entry(SIMD, k) - 1) / entry(SIMD, k)));
        end else if (f == 1) begin
            field_width = clog2(entry(PE, k) * entry(SIMD, k));
        end else begin
            field_width = entry(WIDTH, k);
        end
    end
endfunction

// Where tensor k's field f starts (k = K: the port's width)
function integer field_offset;
    input integer f;
    input integer k;
    integer i;
    begin
        field_offset = 0;
        for (i = 0; i < k; i = i + 1) begin
            field_offset = field_offset + field_width(f, i);
        end
    end
endfunction

// 1 if a tensor's width does not fit PW-bit signed codes
function integer bad_width;
    input integer dummy;
    integer i;
    begin
        bad_width = dummy;
        for (i = 0; i < K; i = i + 1) begin
            if (entry(WIDTH, i) < 1 || entry(WIDTH, i) + (SIGNED[i] ? 0 : 1) > PW) begin
                bad_width = 1;
            end
        end
    end
endfunction

localparam integer TW = clog2(K);   // tensor index
localparam integer JW = clog2(P);   // block index

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
// (fptgen_param_walk checks each tensor's matrix and folding.)
generate
    if (K < 1 || P < 1 || PW < 1 || bad_width(0) != 0 || (PREFETCH != 0 && PREFETCH != 1) ||
            (AHEAD != 0 && AHEAD != 1)) begin : g_error_out_of_range
        fptgen_param_error_param_cursor_out_of_range error_inst ();
    end
endgenerate

localparam integer LAST_T_I = K - 1;
localparam [TW-1:0] LAST_T = LAST_T_I[TW-1:0];

// ---------------------------------------------------------------------------
// Cursor: the current tensor, and per tensor its position
reg  [TW-1:0]   tid_reg, tid_saved_reg;
reg  [TW-1:0]   rd_tid_reg;      // the tensor of the read in flight
wire [K-1:0]    sel;             // one-hot: tensor k is current
wire [K-1:0]    rd_sel;          // one-hot: the read in flight is tensor k's
wire [K-1:0]    last;            // tensor k's walk is at its last parameter
wire [K*PW-1:0] rd_ext;          // tensor k's read data, extended to PW bits

generate
    genvar k;
    for (k = 0; k < K; k = k + 1) begin : g_tensor
        localparam integer K_I = k;
        localparam [TW-1:0] TID = K_I[TW-1:0];
        localparam integer W_K = entry(WIDTH, k);

        assign sel[k] = tid_reg == TID;
        assign tr_en[k] = sel[k] && (op_read || op_write);
        assign tr_we[k] = sel[k] && op_write;

        fptgen_param_walk #(
            .ROWS(entry(ROWS, k)),
            .COLS(entry(COLS, k)),
            .PE(entry(PE, k)),
            .SIMD(entry(SIMD, k))
        ) u_walk (
            .clk(clk),
            .rst(rst),
            .clear(clear),
            .rewind(rewind),
            .step(step && sel[k]),
            .save(save),
            .addr(tr_addr[field_offset(0, k) +: field_width(0, k)]),
            .col(tr_col[field_offset(1, k) +: field_width(1, k)]),
            .last(last[k])
        );

        assign rd_sel[k] = rd_tid_reg == TID;

        // The read data, extended to PW bits
        wire [W_K-1:0] rd = tr_rdata[field_offset(2, k) +: W_K];
        if (W_K < PW) begin : g_extend
            assign rd_ext[k*PW +: PW] = {{(PW - W_K){SIGNED[k] ? rd[W_K-1] : 1'b0}}, rd};
        end else begin : g_full
            assign rd_ext[k*PW +: PW] = rd;
        end
    end
endgenerate

// The current tensor's values (and the read tensor's data): 0 when no
// tensor matches (the selects are one-hot)
reg          cur_last;
reg [PW-1:0] lo_reg, hi_reg, rd_value;
integer i;

always @* begin
    cur_last = 1'b0;
    lo_reg = {PW{1'b0}};
    hi_reg = {PW{1'b0}};
    rd_value = {PW{1'b0}};
    for (i = 0; i < K; i = i + 1) begin
        if (sel[i]) begin
            cur_last = last[i];
            lo_reg = LO[i*PW +: PW];
            hi_reg = HI[i*PW +: PW];
        end
        if (rd_sel[i]) begin
            rd_value = rd_ext[i*PW +: PW];
        end
    end
end

always @(posedge clk) begin
    if (rst || clear) begin
        tid_reg <= {TW{1'b0}};
        tid_saved_reg <= {TW{1'b0}};
    end else if (rewind) begin
        tid_reg <= tid_saved_reg;
    end else if (step) begin
        if (cur_last) begin
            tid_reg <= tid_reg == LAST_T ? {TW{1'b0}} : tid_reg + 1'b1;
        end
    end else if (save) begin
        tid_saved_reg <= tid_reg;
    end
end

// ---------------------------------------------------------------------------
// Committed value of each block, read from memory at the group's start
(* ram_style = COMMITTED_STYLE *)
reg [PW-1:0] committed [0:P-1];
reg          rd_valid_reg;
reg [JW-1:0] rd_blk_reg;

always @(posedge clk) begin
    rd_valid_reg <= op_read;
    rd_blk_reg <= blk;
    rd_tid_reg <= tid_reg;
    if (rd_valid_reg) begin
        committed[rd_blk_reg] <= rd_value;
    end
end

generate
    if (AHEAD != 0) begin : g_ahead
        // The tensor each committed value was read from
        (* ram_style = "distributed" *)
        reg [TW-1:0] committed_tid [0:P-1];

        always @(posedge clk) begin
            if (rd_valid_reg) begin
                committed_tid[rd_blk_reg] <= rd_tid_reg;
            end
        end

        // Block blk_ahead's value and its tensor's bounds, ahead of the
        // write pass's write (as read, no forwarding: see the header); the
        // bounds (0 for an index past the last, which no read keeps) are
        // decoded before the registers
        reg [PW-1:0] ahead_reg, lo_ahead_reg, hi_ahead_reg;
        reg [TW-1:0] ahead_tid;
        reg [PW-1:0] ahead_lo, ahead_hi;
        integer a;

        always @* begin
            ahead_tid = committed_tid[blk_ahead];
            ahead_lo = {PW{1'b0}};
            ahead_hi = {PW{1'b0}};
            for (a = 0; a < K; a = a + 1) begin
                if ({{(32 - TW){1'b0}}, ahead_tid} == a) begin
                    ahead_lo = LO[a*PW +: PW];
                    ahead_hi = HI[a*PW +: PW];
                end
            end
        end

        always @(posedge clk) begin
            ahead_reg <= committed[blk_ahead];
            lo_ahead_reg <= ahead_lo;
            hi_ahead_reg <= ahead_hi;
        end

        assign param_ahead = ahead_reg;
        assign lo_ahead = lo_ahead_reg;
        assign hi_ahead = hi_ahead_reg;
    end else begin : g_no_ahead
        assign param_ahead = {PW{1'b0}};
        assign lo_ahead = {PW{1'b0}};
        assign hi_ahead = {PW{1'b0}};
        wire unused_blk_ahead = ^blk_ahead;
    end
endgenerate

generate
    if (PREFETCH != 0) begin : g_prefetch
        // The entry as read (the old value if it is being written on the
        // same edge), and the value being written with a flag that it is
        // the one read: two registers and a 2:1 multiplexer after them,
        // rather than the forwarding multiplexer before one register. That
        // form is a transparent read, which yosys maps to a LUT RAM with
        // its address registered instead (the read then starts the path);
        // this one keeps the data register.
        reg [PW-1:0] raw_reg;
        reg [PW-1:0] fwd_val_reg;
        reg          fwd_reg;

        always @(posedge clk) begin
            raw_reg <= committed[blk_next];
            fwd_val_reg <= rd_value;
            fwd_reg <= rd_valid_reg && rd_blk_reg == blk_next;
        end

        assign param = fwd_reg ? fwd_val_reg : raw_reg;
        wire unused_blk = ^blk;
    end else begin : g_direct
        assign param = committed[blk];
        wire unused_blk_next = ^blk_next;
    end
endgenerate
assign lo = lo_reg;
assign hi = hi_reg;

endmodule

`resetall
