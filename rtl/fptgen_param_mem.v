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
 * STYLE is passed to Vivado as ram_style/rom_style ("block" keeps trainable
 * parameters in block RAM, never fused into logic; "auto" lets the tools
 * choose, which suits small frozen tables).
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
    // Vivado ram_style / rom_style: "block" or "auto" (read only by the
    // synthesis attribute below, which Verilator does not count as a use)
    /* verilator lint_off UNUSEDPARAM */
    parameter STYLE = "block",
    /* verilator lint_on UNUSEDPARAM */
    // $readmemh image
    parameter INIT_FILE = "mem.hex"
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

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (DEPTH < 1 || COLS < 1 || COL_W < 1) begin : g_error_size_below_1
        fptgen_param_error_param_mem_size_below_1 error_inst ();
    end
endgenerate

(* ram_style = STYLE, rom_style = STYLE *)
reg [COLS*COL_W-1:0] mem [0:DEPTH-1];
reg [COLS*COL_W-1:0] rd_data_reg;

initial $readmemh(INIT_FILE, mem);

always @(posedge clk) begin
    if (rd_en) begin
        rd_data_reg <= mem[rd_addr];
    end
end

assign rd_data = rd_data_reg;

generate
    genvar c;
    if (WRITABLE != 0) begin : g_trainer_port
        reg [COLS*COL_W-1:0] tr_word_reg;
        reg [COL_SEL_W-1:0]  tr_col_reg;
        for (c = 0; c < COLS; c = c + 1) begin : g_col
            localparam integer COL_I = c;
            localparam [COL_SEL_W-1:0] COL = COL_I[COL_SEL_W-1:0];
            always @(posedge clk) begin
                if (tr_en && tr_we && tr_col == COL) begin
                    mem[tr_addr][c*COL_W +: COL_W] <= tr_wdata;
                end
            end
        end
        always @(posedge clk) begin
            if (tr_en) begin
                tr_word_reg <= mem[tr_addr];
                tr_col_reg <= tr_col;
            end
        end
        assign tr_rdata = tr_word_reg[tr_col_reg*COL_W +: COL_W];
    end else begin : g_read_only
        // The trainer port of a ROM drives nothing.
        wire unused_trainer = ^{tr_en, tr_we, tr_addr, tr_col, tr_wdata};
        assign tr_rdata = {COL_W{1'b0}};
    end
endgenerate

`ifdef FPTGEN_DUMP_FINAL
// Co-simulation only (the training harness's build defines
// FPTGEN_DUMP_FINAL): writes the contents to sim/run/<INIT_FILE>.final, one
// word per line in hex (COLS*COL_W bits, word 0 first, as the $readmemh
// image). The generated top level calls it through a hierarchical name when
// its harness-only input dump_final is high on a rising edge, so that the
// final trainable parameters can be compared with the simulator's.
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
                        digit[j] = (k*4 + j < COLS*COL_W) ? mem[i][k*4 + j] : 1'b0;
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
