/*
 * fptgen RTL library: read-only parameter memory.
 *
 * DEPTH words of WIDTH bits, initialised from a $readmemh image (one hex
 * word per line, word 0 first). Synchronous read with enable: rd_data shows
 * the word addressed on the last clock edge with rd_en high, which lets a
 * stalled pipeline hold its read. BLOCK selects block ROM or distributed
 * (LUT) ROM through Vivado's rom_style attribute.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_rom #(
    // Number of words (>= 1)
    parameter integer DEPTH = 16,
    // Bits per word (>= 1)
    parameter integer WIDTH = 8,
    // Address width (>= 1, 2^ADDR_W >= DEPTH)
    parameter integer ADDR_W = 4,
    // 1: block ROM; 0: distributed ROM
    parameter integer BLOCK = 1,
    // $readmemh image
    parameter INIT_FILE = "rom.hex"
) (
    input  wire              clk,
    input  wire              rd_en,
    input  wire [ADDR_W-1:0] rd_addr,
    output wire [WIDTH-1:0]  rd_data
);

initial begin
    if (DEPTH < 1 || WIDTH < 1 || ADDR_W < 1 || (DEPTH - 1) >> ADDR_W != 0) begin
        $error("Error: fptgen_rom needs DEPTH >= 1, WIDTH >= 1 and 2^ADDR_W >= DEPTH (instance %m)");
        $finish;
    end
end

reg [WIDTH-1:0] rd_data_reg;
assign rd_data = rd_data_reg;

generate
    if (BLOCK != 0) begin : g_block
        (* rom_style = "block" *)
        reg [WIDTH-1:0] mem [0:DEPTH-1];
        initial $readmemh(INIT_FILE, mem);
        always @(posedge clk) begin
            if (rd_en) begin
                rd_data_reg <= mem[rd_addr];
            end
        end
    end else begin : g_distributed
        (* rom_style = "distributed" *)
        reg [WIDTH-1:0] mem [0:DEPTH-1];
        initial $readmemh(INIT_FILE, mem);
        always @(posedge clk) begin
            if (rd_en) begin
                rd_data_reg <= mem[rd_addr];
            end
        end
    end
endgenerate

endmodule

`resetall
