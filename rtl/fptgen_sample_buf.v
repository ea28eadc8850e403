/*
 * fptgen RTL library: the ES trainer's sample buffer.
 *
 * Holds M training samples: an input vector (X_W bits) and its target
 * vector (T_W bits, raw codes of the output format). An input vector is
 * stored as WORDS words of WORD_W bits (word 0 holds bits [WORD_W-1:0]), so
 * a wide vector fills block RAMs in depth rather than in width (a 6,272-bit
 * MNIST image is 88 words of 72 bits, not 88 RAMs of 64 rows); targets are
 * stored whole.
 *
 * Load: a valid/ready stream of words, WORDS per sample (ld_ready =
 * ld_enable); ld_t is taken with the last word of each sample (it is
 * ignored with the others). The write
 * pointer wraps after M samples, so the next M replace the buffer.
 *
 * Play: a pulse on play presents samples 0..M-1 on the x stream, one every
 * INTERVAL cycles (the network's initiation interval, so the pipeline never
 * stalls and the schedule is exact). Sample 0 is valid D cycles after play
 * (D = 1 for WORDS = 1, WORDS + 1 otherwise: one read per word, one cycle to
 * capture the last); after sample k is taken, sample k+1 is valid INTERVAL
 * cycles later, which needs WORDS <= INTERVAL - 2 when WORDS > 1. t_data
 * shows the target of the next output: target 0 from the second cycle
 * after play on, then the next one after each t_next pulse (one per output
 * taken; never in the cycle right after play, which the first output
 * cannot reach: it leaves the network at least one cycle after sample 0).
 * The target memory is read one target ahead into its read register, and
 * t_data is a fabric register loaded from it, so no path starts at a block
 * RAM's output without a register (ECP5's EBR clock-to-output is 4.3 ns;
 * docs/results/ecp5.md).
 *
 * Subsets (SUBSET = 1, evaluation by difference): a play with sub high
 * presents `count` samples (1..M) instead of all M, in the order an
 * external queue gives them (fptgen_diff_eval's FIFO of changed samples):
 * x_sel is the index of the next sample to present, x_sel_pop advances the
 * queue when its first word is read (at play and after each sample taken),
 * and t_sel/t_sel_pop do the same for the targets, so that t_data follows
 * the same samples. The timing is that of a play of `count` samples. With
 * sub low, or SUBSET = 0, a play is as above (x_sel_pop and t_sel_pop stay
 * low).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_sample_buf #(
    // Samples (>= 1)
    parameter integer M = 64,
    // Bits of an input vector and of a target vector (>= 1)
    parameter integer X_W = 16,
    parameter integer T_W = 16,
    // Words per input vector (1, or 2 .. INTERVAL - 2) and their width
    // (WORDS * WORD_W >= X_W > (WORDS - 1) * WORD_W)
    parameter integer WORDS = 1,
    parameter integer WORD_W = 16,
    // Cycles between samples presented (>= 1)
    parameter integer INTERVAL = 1,
    // 1: plays of a subset (sub, count, x_sel, t_sel) are possible
    parameter integer SUBSET = 0
) (
    input  wire              clk,
    input  wire              rst,

    input  wire [WORD_W-1:0] ld_x,
    input  wire [T_W-1:0]    ld_t,
    input  wire              ld_valid,
    output wire              ld_ready,
    input  wire              ld_enable,

    input  wire              play,
    input  wire              sub,
    input  wire [clog2(M + 1)-1:0] count,
    input  wire [clog2(M)-1:0] x_sel,
    output wire              x_sel_pop,
    input  wire [clog2(M)-1:0] t_sel,
    output wire              t_sel_pop,
    output wire [X_W-1:0]    x_data,
    output wire              x_valid,
    input  wire              x_ready,
    output wire [T_W-1:0]    t_data,
    input  wire              t_next
);

`include "fptgen_clog2.vh"

localparam integer XA_W = clog2(M * WORDS);   // input-word address
localparam integer TA_W = clog2(M);           // target address
localparam integer IW = clog2(M + 1);         // sample index 0..M
localparam integer KW = clog2(WORDS + 1);     // word index 0..WORDS
localparam integer PACE_W = clog2(INTERVAL + 1);
localparam integer XP_W = WORDS * WORD_W;     // padded vector
localparam integer M_II = M;
localparam [IW-1:0] M_I = M_II[IW-1:0];
localparam integer LAST_XA_I = M * WORDS - 1;
localparam [XA_W-1:0] LAST_XA = LAST_XA_I[XA_W-1:0];
localparam integer LAST_TA_I = M - 1;
localparam [TA_W-1:0] LAST_TA = LAST_TA_I[TA_W-1:0];
localparam integer LAST_K_I = WORDS - 1;
localparam [KW-1:0] LAST_K = LAST_K_I[KW-1:0];
localparam integer PACE_INIT_I = INTERVAL - 1;
localparam [PACE_W-1:0] PACE_INIT = PACE_INIT_I[PACE_W-1:0];

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (M < 1 || X_W < 1 || T_W < 1 || INTERVAL < 1 || WORDS < 1 || WORD_W < 1 ||
            WORDS * WORD_W < X_W || (WORDS - 1) * WORD_W >= X_W ||
            (WORDS > 1 && WORDS > INTERVAL - 2) || SUBSET < 0 || SUBSET > 1) begin : g_error_out_of_range
        fptgen_param_error_sample_buf_out_of_range error_inst ();
    end
endgenerate

(* ram_style = "block" *)
reg [WORD_W-1:0] xmem [0:M*WORDS-1];
(* ram_style = "block" *)
reg [T_W-1:0] tmem [0:M-1];

// ---------------------------------------------------------------------------
// Load
reg [XA_W-1:0] xw_reg;   // next input word
reg [TA_W-1:0] tw_reg;   // next target
reg [KW-1:0]   lk_reg;   // word of the sample being loaded
wire ld_fire = ld_valid && ld_enable;
wire ld_last = lk_reg == LAST_K;
assign ld_ready = ld_enable;

always @(posedge clk) begin
    if (ld_fire) begin
        xmem[xw_reg] <= ld_x;
    end
    if (ld_fire && ld_last) begin
        tmem[tw_reg] <= ld_t;
    end
end

always @(posedge clk) begin
    if (rst) begin
        xw_reg <= {XA_W{1'b0}};
        tw_reg <= {TA_W{1'b0}};
        lk_reg <= {KW{1'b0}};
    end else if (ld_fire) begin
        xw_reg <= xw_reg == LAST_XA ? {XA_W{1'b0}} : xw_reg + 1'b1;
        lk_reg <= ld_last ? {KW{1'b0}} : lk_reg + 1'b1;
        if (ld_last) begin
            tw_reg <= tw_reg == LAST_TA ? {TA_W{1'b0}} : tw_reg + 1'b1;
        end
    end
end

// ---------------------------------------------------------------------------
// Subsets: the play's kind and length
wire             sub_now = SUBSET != 0 && sub;
reg              sub_reg;
reg [IW-1:0]     count_reg;
wire [IW-1:0]    total = sub_reg ? count_reg : M_I;

always @(posedge clk) begin
    if (rst) begin
        sub_reg <= 1'b0;
        count_reg <= M_I;
    end else if (play) begin
        sub_reg <= sub_now;
        count_reg <= count;
    end
end

// ---------------------------------------------------------------------------
// Play: inputs
reg [IW-1:0]     xidx_reg;   // samples presented so far (the current one included)
reg              xv_reg;
reg [PACE_W-1:0] pace_reg;
wire x_take = xv_reg && x_ready;
wire x_more = xidx_reg != total;
reg [XP_W-1:0]   x_reg;

generate
    if (WORDS == 1) begin : g_whole
        // One word per sample: the memory's output register is the vector.
        wire x_rd = play || (x_take && x_more);
        reg [XA_W-1:0] ra_reg;
        wire sel = play ? sub_now : sub_reg;
        assign x_sel_pop = x_rd && sel;
        always @(posedge clk) begin
            if (x_rd) begin
                x_reg <= xmem[sel ? x_sel : (play ? {XA_W{1'b0}} : ra_reg)];
            end
        end
        always @(posedge clk) begin
            if (rst) begin
                ra_reg <= {XA_W{1'b0}};
                xidx_reg <= M_I;
                xv_reg <= 1'b0;
                pace_reg <= {PACE_W{1'b0}};
            end else if (play) begin
                ra_reg <= {{(XA_W - 1){1'b0}}, 1'b1};
                xidx_reg <= {{(IW - 1){1'b0}}, 1'b1};
                xv_reg <= 1'b1;
                pace_reg <= {PACE_W{1'b0}};
            end else if (x_take) begin
                if (x_more) begin
                    ra_reg <= ra_reg + 1'b1;
                    xidx_reg <= xidx_reg + 1'b1;
                    xv_reg <= INTERVAL == 1;
                    pace_reg <= PACE_INIT;
                end else begin
                    xv_reg <= 1'b0;
                end
            end else if (pace_reg != {PACE_W{1'b0}}) begin
                pace_reg <= pace_reg - 1'b1;
                if (pace_reg == {{(PACE_W - 1){1'b0}}, 1'b1}) begin
                    xv_reg <= 1'b1;
                end
            end
        end
    end else begin : g_words
        // WORDS reads per sample, one per cycle, each shifted into x_reg
        // the cycle after (the last word read ends in the top bits). The
        // sample is valid once its last word is in and INTERVAL cycles have
        // passed since the previous one was taken.
        reg [XA_W-1:0]   ra_reg;     // next word to read
        reg [KW-1:0]     rk_reg;     // words still to read of this sample
        reg              cap_reg;    // a word was read last cycle
        reg [KW-1:0]     left_reg;   // words still to capture
        reg              pend_reg;   // a sample is being assembled or waits
        reg [WORD_W-1:0] word_reg;
        wire rd = rk_reg != {KW{1'b0}};
        // a subset's next sample: its first word
        localparam integer WORDS_I = WORDS;
        wire [31:0] sel_base32 = {{(32 - TA_W){1'b0}}, x_sel} * WORDS_I;
        wire [XA_W-1:0] sel_base = sel_base32[XA_W-1:0];
        wire unused_sel_base = ^sel_base32;
        assign x_sel_pop = (play && sub_now) || (!play && x_take && x_more && sub_reg);
        wire [KW-1:0] left_next = cap_reg ? left_reg - 1'b1 : left_reg;
        wire [PACE_W-1:0] pace_next = pace_reg == {PACE_W{1'b0}} ? pace_reg : pace_reg - 1'b1;
        always @(posedge clk) begin
            if (rd) begin
                word_reg <= xmem[ra_reg];
            end
            if (cap_reg) begin
                x_reg <= {word_reg, x_reg[XP_W-1:WORD_W]};
            end
        end
        always @(posedge clk) begin
            if (rst) begin
                ra_reg <= {XA_W{1'b0}};
                rk_reg <= {KW{1'b0}};
                cap_reg <= 1'b0;
                left_reg <= {KW{1'b0}};
                pend_reg <= 1'b0;
                xidx_reg <= M_I;
                xv_reg <= 1'b0;
                pace_reg <= {PACE_W{1'b0}};
            end else begin
                cap_reg <= rd;
                if (play) begin
                    ra_reg <= sub_now ? sel_base : {XA_W{1'b0}};
                    rk_reg <= LAST_K + 1'b1;
                    left_reg <= LAST_K + 1'b1;
                    pend_reg <= 1'b1;
                    xidx_reg <= {{(IW - 1){1'b0}}, 1'b1};
                    xv_reg <= 1'b0;
                    pace_reg <= {PACE_W{1'b0}};
                end else if (x_take) begin
                    xv_reg <= 1'b0;
                    left_reg <= left_next;
                    if (x_more) begin
                        if (sub_reg) begin
                            ra_reg <= sel_base;
                        end
                        rk_reg <= LAST_K + 1'b1;
                        left_reg <= LAST_K + 1'b1;
                        xidx_reg <= xidx_reg + 1'b1;
                        pace_reg <= PACE_INIT;
                    end else begin
                        pend_reg <= 1'b0;
                    end
                end else begin
                    if (rd) begin
                        ra_reg <= ra_reg + 1'b1;
                        rk_reg <= rk_reg - 1'b1;
                    end
                    left_reg <= left_next;
                    pace_reg <= pace_next;
                    if (pend_reg && left_next == {KW{1'b0}} && pace_next == {PACE_W{1'b0}}) begin
                        xv_reg <= 1'b1;
                    end
                end
            end
        end
    end
endgenerate

assign x_data = x_reg[X_W-1:0];
assign x_valid = xv_reg;
generate
    if (XP_W > X_W) begin : g_pad
        wire unused_pad = ^x_reg[XP_W-1:X_W];
    end
endgenerate

// ---------------------------------------------------------------------------
// Play: targets, read one ahead: play reads target 0 into the memory's read
// register (t_ram_reg); the next cycle (fill_reg) moves it to t_reg and
// reads target 1; each t_next moves the next target to t_reg and reads the
// one after it.
reg [IW-1:0]  tidx_reg;     // targets read from the memory in this play
reg           fill_reg;     // the cycle after play
reg [T_W-1:0] t_ram_reg;
reg [T_W-1:0] t_reg;
wire t_more = tidx_reg != total;
wire t_adv = fill_reg || t_next;
wire t_rd = play || (t_adv && t_more);
wire t_sel_now = play ? sub_now : sub_reg;
wire [TA_W-1:0] t_addr = t_sel_now ? t_sel : (play ? {TA_W{1'b0}} : tidx_reg[TA_W-1:0]);
assign t_sel_pop = t_rd && t_sel_now;

always @(posedge clk) begin
    if (t_rd) begin
        t_ram_reg <= tmem[t_addr];
    end
    if (t_adv) begin
        t_reg <= t_ram_reg;
    end
end

always @(posedge clk) begin
    if (rst) begin
        tidx_reg <= M_I;
        fill_reg <= 1'b0;
    end else begin
        fill_reg <= play;
        if (play) begin
            tidx_reg <= {{(IW - 1){1'b0}}, 1'b1};
        end else if (t_adv && t_more) begin
            tidx_reg <= tidx_reg + 1'b1;
        end
    end
end

assign t_data = t_reg;

endmodule

`resetall
