/*
 * fptgen RTL library: writable parameter memory (trainable parameters).
 *
 * DEPTH words of COLS columns of COL_W bits, initialised from a $readmemh
 * image (one hex word per line, column 0 in the least significant bits).
 * One synchronous read port with enable (as fptgen_rom) and one write port
 * that writes a single column (one parameter) of one word, so training
 * hardware can update a parameter without a read-modify-write. Trainable
 * parameters are never fused into logic: this is an inferred block RAM with
 * per-column write enables.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_ram #(
    // Number of words (>= 1)
    parameter integer DEPTH = 16,
    // Columns (parameters) per word (>= 1)
    parameter integer COLS = 1,
    // Bits per column (>= 1)
    parameter integer COL_W = 8,
    // Address width (>= 1, 2^ADDR_W >= DEPTH)
    parameter integer ADDR_W = 4,
    // Column-select width (>= 1, 2^COL_SEL_W >= COLS)
    parameter integer COL_SEL_W = 1,
    // 1: block RAM; 0: distributed RAM
    parameter integer BLOCK = 1,
    // $readmemh image
    parameter INIT_FILE = "ram.hex"
) (
    input  wire                  clk,
    input  wire                  rd_en,
    input  wire [ADDR_W-1:0]     rd_addr,
    output wire [COLS*COL_W-1:0] rd_data,
    input  wire                  wr_en,
    input  wire [ADDR_W-1:0]     wr_addr,
    input  wire [COL_SEL_W-1:0]  wr_col,
    input  wire [COL_W-1:0]      wr_data
);

initial begin
    if (DEPTH < 1 || COLS < 1 || COL_W < 1 || ADDR_W < 1 || COL_SEL_W < 1 ||
            (DEPTH - 1) >> ADDR_W != 0 || (COLS - 1) >> COL_SEL_W != 0) begin
        $error("Error: fptgen_ram parameters are inconsistent (instance %m)");
        $finish;
    end
end

reg [COLS*COL_W-1:0] rd_data_reg;
assign rd_data = rd_data_reg;

generate
    genvar c;
    if (BLOCK != 0) begin : g_block
        (* ram_style = "block" *)
        reg [COLS*COL_W-1:0] mem [0:DEPTH-1];
        initial $readmemh(INIT_FILE, mem);
        always @(posedge clk) begin
            if (rd_en) begin
                rd_data_reg <= mem[rd_addr];
            end
        end
        for (c = 0; c < COLS; c = c + 1) begin : g_col
            localparam integer COL_I = c;
            localparam [COL_SEL_W-1:0] COL = COL_I[COL_SEL_W-1:0];
            always @(posedge clk) begin
                if (wr_en && wr_col == COL) begin
                    mem[wr_addr][c*COL_W +: COL_W] <= wr_data;
                end
            end
        end
    end else begin : g_distributed
        (* ram_style = "distributed" *)
        reg [COLS*COL_W-1:0] mem [0:DEPTH-1];
        initial $readmemh(INIT_FILE, mem);
        always @(posedge clk) begin
            if (rd_en) begin
                rd_data_reg <= mem[rd_addr];
            end
        end
        for (c = 0; c < COLS; c = c + 1) begin : g_col
            localparam integer COL_I = c;
            localparam [COL_SEL_W-1:0] COL = COL_I[COL_SEL_W-1:0];
            always @(posedge clk) begin
                if (wr_en && wr_col == COL) begin
                    mem[wr_addr][c*COL_W +: COL_W] <= wr_data;
                end
            end
        end
    end
endgenerate

endmodule

`resetall
