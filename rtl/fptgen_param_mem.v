/*
 * fptgen RTL library: parameter memory.
 *
 * DEPTH words of COLS columns of COL_W bits (one parameter per column,
 * column 0 in the least significant bits), initialised from a $readmemh
 * image (one hex word per line, word 0 first).
 *
 * Read: synchronous with enable; rd_data shows the word addressed on the
 * last rising edge with rd_en high, so a stalled pipeline holds its read.
 *
 * Trainer port (WRITABLE = 1, trainable parameters): a second port that
 * reads and writes one column (one parameter) of one word, so training
 * hardware updates a single parameter without a read-modify-write. In a
 * cycle with tr_en high it writes tr_wdata into column tr_col of word
 * tr_addr if tr_we is high, and reads that column as it was before the
 * write (read-first): tr_rdata shows it after the edge. With WRITABLE = 0
 * the memory is a ROM and the trainer port is ignored (tr_rdata is 0).
 *
 * Banks (BANK_COLS > 0): the columns are stored as banks of BANK_COLS
 * columns (the last may hold fewer), each its own memory with its own read
 * register and column write ports, bank b initialised from its own image
 * <INIT_FILE>.bank<b>.hex (b in four decimal digits; bank b's columns of
 * every word, one word per line). The same contents, reads and writes, in
 * every cycle, as one memory. It exists for wide trainable words: with one
 * memory each column's write port is as wide as the word, which yosys
 * cannot elaborate for a word of thousands of bits (MNIST's fc1 at PE 50 x
 * SIMD 56: 2,800 ports of 11,200 bits), and a block RAM's port is at most
 * 72 bits wide anyway. BANK_COLS = 0 keeps one memory, read from INIT_FILE.
 *
 * STYLE is passed to Vivado (and yosys) as ram_style/rom_style ("block"
 * keeps trainable parameters in block RAM, never fused into logic;
 * "distributed" puts a shallow memory in LUTRAM, two LUTs per bit and 64
 * words, its reads registered in slice flip-flops; "auto" lets the tools
 * choose, which suits small frozen tables). With "distributed" the trainer
 * read selects its column before the register, from the LUTRAM's
 * asynchronous read: each bank registers only the addressed column (zero
 * when the column is in another bank) and tr_rdata is the OR of the banks'
 * registers, so the wide column multiplexer is split across a register
 * without a cycle of latency (with block RAM the word is registered inside
 * the RAM and the whole multiplexer follows it). The port's behaviour is
 * the same in every cycle.
 *
 * Simulation only, with FPTGEN_DUMP_FINAL defined: the task write_final
 * writes the contents to sim/run/<INIT_FILE>.final in the image's format;
 * the generated top level calls it (docs/hardware.md, "Language").
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_param_mem #(
    // Number of words (>= 1)
    parameter integer DEPTH = 16,
    // Columns (parameters) per word (>= 1)
    parameter integer COLS = 1,
    // Bits per column (>= 1)
    parameter integer COL_W = 8,
    // 1: trainer port enabled; 0: read-only
    parameter integer WRITABLE = 0,
    // Vivado ram_style / rom_style: "block", "distributed" or "auto"
    parameter STYLE = "block",
    // $readmemh image (BANK_COLS = 0), or the banks' images' common prefix
    parameter INIT_FILE = "mem.hex",
    // Columns per bank (0: one memory; 1..COLS: banks, see above)
    parameter integer BANK_COLS = 0
) (
    input  wire                      clk,
    input  wire                      rd_en,
    input  wire [clog2(DEPTH)-1:0]   rd_addr,
    output wire [COLS*COL_W-1:0]     rd_data,
    input  wire                      tr_en,
    input  wire                      tr_we,
    input  wire [clog2(DEPTH)-1:0]   tr_addr,
    input  wire [clog2(COLS)-1:0]    tr_col,
    input  wire [COL_W-1:0]          tr_wdata,
    output wire [COL_W-1:0]          tr_rdata
);

`include "fptgen_clog2.vh"

// Column-select width of the trainer port
localparam integer COL_SEL_W = clog2(COLS);
// Word width
localparam integer WORD_W = COLS * COL_W;
// Banks (1 with BANK_COLS = 0)
localparam BANKED = BANK_COLS > 0 && BANK_COLS <= COLS;
// LUTRAM: the trainer read selects its column before the register (a
// string comparison, whose sides differ in width when STYLE is another)
/* verilator lint_off WIDTH */
localparam LUTRAM = STYLE == "distributed";
/* verilator lint_on WIDTH */
// Columns per bank, and banks (one bank of every column without banks)
localparam integer BANK_COLS_USED = BANKED ? BANK_COLS : COLS;
// (none when a size is below 1, so that the size check is what stops
// elaboration)
localparam integer BANKS = DEPTH < 1 || COLS < 1 || COL_W < 1 ? 0 : (COLS + BANK_COLS_USED - 1) / BANK_COLS_USED;

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (DEPTH < 1 || COLS < 1 || COL_W < 1) begin : g_error_size_below_1
        fptgen_param_error_param_mem_size_below_1 error_inst ();
    end
    if (BANK_COLS < 0 || BANK_COLS > COLS || BANKS > 10000) begin : g_error_bank_cols_out_of_range
        fptgen_param_error_param_mem_bank_cols_out_of_range error_inst ();
    end
endgenerate

// Bank b's image: <INIT_FILE>.bank<bbbb>.hex, b in four decimal digits.
function [8*4-1:0] dec4;
    input integer v;
    begin
        // '0' + each digit, the thousands in the top byte
        dec4 = (48 + (v / 1000) % 10) * 16777216 + (48 + (v / 100) % 10) * 65536
             + (48 + (v / 10) % 10) * 256 + (48 + v % 10);
    end
endfunction

// Every bank's read-first trainer word, concatenated (column 0 lowest;
// block RAM and auto styles)
wire [WORD_W-1:0] tr_word;
// Every bank's registered read-first column, zero when the column is in
// another bank (LUTRAM style, BANKS columns of COL_W bits)
wire [BANKS*COL_W-1:0] tr_sel;

`ifdef FPTGEN_DUMP_FINAL
// Simulation only: the whole words, gathered from the memory or its banks
// by write_final (below).
reg [WORD_W-1:0] final_mem [0:DEPTH-1];
`endif

generate
    genvar b, c;
    // The memory as BANKS banks g_bank[b]; one memory (BANK_COLS = 0) is
    // one bank of every column, read from INIT_FILE. (An illegal BANK_COLS
    // also makes one bank, so that the check above is what stops
    // elaboration.)
    for (b = 0; b < BANKS; b = b + 1) begin : g_bank
        // The bank's first column, its columns and its width
        localparam integer FIRST = b * BANK_COLS_USED;
        localparam integer NC = COLS - FIRST < BANK_COLS_USED ? COLS - FIRST : BANK_COLS_USED;
        localparam integer BW = NC * COL_W;

        (* ram_style = STYLE, rom_style = STYLE *)
        reg [BW-1:0] mem [0:DEPTH-1];
        reg [BW-1:0] rd_data_reg;

        if (BANKED) begin : g_bank_image
            initial $readmemh({INIT_FILE, ".bank", dec4(b), ".hex"}, mem);
        end else begin : g_image
            initial $readmemh(INIT_FILE, mem);
        end

        always @(posedge clk) begin
            if (rd_en) begin
                rd_data_reg <= mem[rd_addr];
            end
        end
        assign rd_data[FIRST*COL_W +: BW] = rd_data_reg;

        if (WRITABLE != 0) begin : g_trainer_port
            // Column c of the bank is the one addressed
            wire [NC-1:0] hit;
            for (c = 0; c < NC; c = c + 1) begin : g_col
                localparam integer COL_I = FIRST + c;
                localparam [COL_SEL_W-1:0] COL = COL_I[COL_SEL_W-1:0];
                assign hit[c] = tr_col == COL;
                always @(posedge clk) begin
                    if (tr_en && tr_we && hit[c]) begin
                        mem[tr_addr][c*COL_W +: COL_W] <= tr_wdata;
                    end
                end
            end
            if (LUTRAM) begin : g_lutram_read
                // The addressed word (asynchronous LUTRAM read, before any
                // write of this edge), its addressed column, registered
                wire [BW-1:0] word = mem[tr_addr];
                reg [COL_W-1:0] col_next;
                reg [COL_W-1:0] col_reg;
                integer i;
                always @* begin
                    col_next = {COL_W{1'b0}};
                    for (i = 0; i < NC; i = i + 1) begin
                        col_next = col_next | ({COL_W{hit[i]}} & word[i*COL_W +: COL_W]);
                    end
                end
                always @(posedge clk) begin
                    if (tr_en) begin
                        col_reg <= col_next;
                    end
                end
                assign tr_sel[b*COL_W +: COL_W] = col_reg;
                assign tr_word[FIRST*COL_W +: BW] = {BW{1'b0}};
            end else begin : g_word_read
                reg [BW-1:0] tr_word_reg;
                always @(posedge clk) begin
                    if (tr_en) begin
                        tr_word_reg <= mem[tr_addr];
                    end
                end
                assign tr_word[FIRST*COL_W +: BW] = tr_word_reg;
                assign tr_sel[b*COL_W +: COL_W] = {COL_W{1'b0}};
            end
        end else begin : g_no_trainer_port
            assign tr_word[FIRST*COL_W +: BW] = {BW{1'b0}};
            assign tr_sel[b*COL_W +: COL_W] = {COL_W{1'b0}};
        end
`ifdef FPTGEN_DUMP_FINAL
        // Simulation only: this bank's columns into final_mem. The
        // generated top level calls every bank's copy, then write_final
        // (templates/trainer_dump.v). (Blocking: write_final reads
        // final_mem in the same call.)
        /* verilator lint_off BLKSEQ */
        task copy;
            integer i;
            begin
                for (i = 0; i < DEPTH; i = i + 1) begin
                    final_mem[i][FIRST*COL_W +: BW] = mem[i];
                end
            end
        endtask
        /* verilator lint_on BLKSEQ */
`endif
    end

    if (WRITABLE != 0 && LUTRAM) begin : g_trainer_port_or
        // The OR of the banks' registered columns (all but one are zero)
        wire unused_word = ^tr_word;
        reg [COL_W-1:0] rdata;
        integer i;
        always @* begin
            rdata = {COL_W{1'b0}};
            for (i = 0; i < BANKS; i = i + 1) begin
                rdata = rdata | tr_sel[i*COL_W +: COL_W];
            end
        end
        assign tr_rdata = rdata;
    end else if (WRITABLE != 0) begin : g_trainer_port
        reg [COL_SEL_W-1:0] tr_col_reg;
        wire unused_sel = ^tr_sel;
        always @(posedge clk) begin
            if (tr_en) begin
                tr_col_reg <= tr_col;
            end
        end
        assign tr_rdata = tr_word[tr_col_reg*COL_W +: COL_W];
    end else begin : g_read_only
        // The trainer port of a ROM drives nothing.
        wire unused_trainer = ^{tr_en, tr_we, tr_addr, tr_col, tr_wdata, tr_word, tr_sel};
        assign tr_rdata = {COL_W{1'b0}};
    end
endgenerate

`ifdef FPTGEN_DUMP_FINAL
// Co-simulation only (the training harness's build defines
// FPTGEN_DUMP_FINAL): writes the contents to sim/run/<INIT_FILE>.final, one
// word per line in hex (COLS*COL_W bits, word 0 first, as the $readmemh
// image). The generated top level calls it through a hierarchical name when
// its harness-only input dump_final is high on a rising edge, so that the
// final trainable parameters can be compared with the simulator's, after
// the copy task of every bank g_bank[b] (one without banks)
// has gathered the words into final_mem.
// A word is written one hex digit at a time (ceil(COLS*COL_W/4) digits,
// the most significant first, as %h of the whole word would print it), as
// $display arguments of more than 8192 bits are refused by Verilator and a
// wide memory's word is wider (MNIST's fc1 at PE 50 x SIMD 56: 11,200 bits).
localparam integer FINAL_DIGITS = (COLS * COL_W + 3) / 4;

task write_final;
    integer fd;
    integer i;
    integer k;
    integer j;
    reg [3:0] digit;
    begin
        fd = $fopen({"sim/run/", INIT_FILE, ".final"}, "w");
        if (fd == 0) begin
            $display("Error: fptgen_param_mem cannot write sim/run/%0s.final (instance %m)", INIT_FILE);
        end else begin
            for (i = 0; i < DEPTH; i = i + 1) begin
                for (k = FINAL_DIGITS - 1; k >= 0; k = k - 1) begin
                    // (bits above the word, in its top digit, are 0)
                    for (j = 0; j < 4; j = j + 1) begin
                        digit[j] = (k*4 + j < COLS*COL_W) ? final_mem[i][k*4 + j] : 1'b0;
                    end
                    $fwrite(fd, "%h", digit);
                end
                $fwrite(fd, "\n");
            end
            $fclose(fd);
        end
    end
endtask
`endif

endmodule

`resetall
