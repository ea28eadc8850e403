/*
 * fptgen RTL library: 2x2 max-pooling, stride 2 (Keras MaxPooling2D with
 * pool_size 2, padding "valid").
 *
 * Streaming order. An image of shape [H, W, C] streams one pixel per beat,
 * pixels in row-major order (row 0 left to right, then row 1, ...); a beat
 * holds the pixel's C channel values, channel c at bits [c*X_W +: X_W]. The
 * output image [OH, OW, C], OH = floor(H/2), OW = floor(W/2), streams the
 * same way. Images follow each other back to back: the first pixel after an
 * image's last is the next image's pixel (0, 0).
 *
 * Output pixel (oy, ox), channel c = the maximum of the codes of input
 * pixels (2oy, 2ox), (2oy, 2ox+1), (2oy+1, 2ox), (2oy+1, 2ox+1), channel c,
 * compared as signed (X_S = 1) or unsigned (X_S = 0) integers. With H odd
 * the last row is dropped, with W odd the last column (accepted, unused).
 *
 * Structure. Even rows: pixel 2ox is held in a register, pixel 2ox+1 writes
 * the pair's maximum into word ox of a line buffer of partial maxima (OW
 * words of C*X_W bits in RAM, (* ram_style = RAM_STYLE *), read one pixel
 * ahead; a register when OW = 1). Odd rows: pixel 2ox loads max(pixel,
 * word ox) into the register, pixel 2ox+1 loads max(register, pixel) into
 * the output register. Every path is one comparison and a multiplexer. A
 * dropped row or column has an even index, and what it loads is
 * overwritten before use. Registers: the held pixel and the output register
 * (2*C*X_W bits), the line buffer's read register, counters.
 *
 * Handshake. out_data/out_valid is a register. Every pixel offered is
 * accepted on that edge (in_ready high), except a pixel that completes an
 * output pixel (odd row, odd column) while the output register holds a
 * pixel that is not being taken (out_valid high, out_ready low):
 * in_ready = !(completes && out_valid && !out_ready), combinational in
 * out_ready as fptgen_dense's. The next image's pixels are accepted while
 * the last output pixel of the previous one waits. Nothing is ever lost or
 * repeated.
 *
 * Cycle model. Cycle t is the clock period that ends with rising edge t+1;
 * a pixel is accepted on cycle t when in_valid and in_ready are high in it,
 * an output pixel is output on cycle t when out_valid is high in it (with
 * out_ready high it is taken at the end of that cycle). With in_valid held
 * high (pixels always offered) and out_ready held high, in_ready is always
 * high. Let t0 be the cycle on which an image's pixel (0, 0) is accepted.
 * Then
 *   - pixel (y, x) is accepted on cycle t0 + y*W + x;
 *   - the next image's pixel (0, 0) on cycle t0 + H*W: images follow each
 *     other every H*W cycles;
 *   - output pixel (oy, ox) is output on cycle t0 + (2oy + 1)*W + 2ox + 2,
 *     the cycle after the last pixel it needs, (2oy + 1, 2ox + 1), is
 *     accepted.
 * in_ready is high on the first cycle after reset.
 *
 * Parameters: H, W >= 2; C, X_W >= 1; X_S 0 or 1. Illegal combinations stop
 * elaboration (the failed check instantiates fptgen_param_error_maxpool_
 * <reason>, which does not exist).
 *
 * Checked bit and cycle exactly by generator/tests/rtl/maxpool.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_maxpool #(
    // Input image: rows, columns (>= 2), channels (>= 1)
    parameter integer H = 8,
    parameter integer W = 8,
    parameter integer C = 1,
    // Bits per value (>= 1); 1: signed codes, 0: unsigned
    parameter integer X_W = 8,
    parameter integer X_S = 1,
    // Vivado ram_style of the line buffer: "block", "distributed" or "auto"
    // (read only by the synthesis attribute below, which Verilator does not
    // count as a use)
    /* verilator lint_off UNUSEDPARAM */
    parameter RAM_STYLE = "auto"
    /* verilator lint_on UNUSEDPARAM */
) (
    input  wire             clk,
    input  wire             rst,

    input  wire [C*X_W-1:0] in_data,
    input  wire             in_valid,
    output wire             in_ready,

    output wire [C*X_W-1:0] out_data,
    output wire             out_valid,
    input  wire             out_ready
);

`include "fptgen_clog2.vh"

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (C < 1 || X_W < 1) begin : g_error_size_below_1
        fptgen_param_error_maxpool_size_below_1 error_inst ();
    end
    if (H < 2 || W < 2) begin : g_error_image_below_2x2
        fptgen_param_error_maxpool_image_below_2x2 error_inst ();
    end
    if (X_S != 0 && X_S != 1) begin : g_error_x_s_not_0_or_1
        fptgen_param_error_maxpool_x_s_not_0_or_1 error_inst ();
    end
endgenerate

localparam integer PX = C * X_W;       // bits per pixel
localparam integer OW = W / 2;
localparam integer XW = clog2(W);
localparam integer YW = clog2(H);
localparam integer PW = clog2(OW);     // pair index 0..OW-1
localparam integer LAST_X_I = W - 1;
localparam integer LAST_Y_I = H - 1;
localparam integer LAST_P_I = OW - 1;
localparam [XW-1:0] LAST_X = LAST_X_I[XW-1:0];
localparam [YW-1:0] LAST_Y = LAST_Y_I[YW-1:0];
localparam [PW-1:0] LAST_P = LAST_P_I[PW-1:0];

// The larger of two codes
function [X_W-1:0] vmax;
    input [X_W-1:0] a;
    input [X_W-1:0] b;
    reg signed [X_W:0] a_ext;
    reg signed [X_W:0] b_ext;
    begin
        a_ext = {X_S != 0 ? a[X_W-1] : 1'b0, a};
        b_ext = {X_S != 0 ? b[X_W-1] : 1'b0, b};
        vmax = a_ext > b_ext ? a : b;
    end
endfunction

// ---------------------------------------------------------------------------
// Position: column, row, pair index (x/2, held at OW-1 over a dropped last
// column, so it always addresses the line buffer) and flags
reg [XW-1:0] x_reg;
reg [YW-1:0] y_reg;
reg [PW-1:0] p_reg;
reg          last_x_reg;   // x == W-1
reg          last_y_reg;   // y == H-1
reg          last_p_reg;   // p == OW-1
reg          out_valid_reg;
reg [PX-1:0] out_data_reg;

// A dropped last row (H odd) or column (W odd) has an even index: it only
// loads h_reg or (a row) line buffer words, which the next row or image
// overwrites before they are used. So only odd rows and columns matter.
wire odd_x = x_reg[0];
wire odd_y = y_reg[0];
wire done = odd_x && odd_y;   // the pixel completes an output pixel
wire out_free = !out_valid_reg || out_ready;

assign in_ready = !done || out_free;
wire accept = in_valid && in_ready;

wire [XW-1:0] x_next = last_x_reg ? {XW{1'b0}} : x_reg + 1'b1;
wire [YW-1:0] y_next = last_y_reg ? {YW{1'b0}} : y_reg + 1'b1;
wire [PW-1:0] p_next = last_x_reg ? {PW{1'b0}} : (odd_x && !last_p_reg) ? p_reg + 1'b1 : p_reg;

always @(posedge clk) begin
    if (rst) begin
        x_reg <= {XW{1'b0}};
        y_reg <= {YW{1'b0}};
        p_reg <= {PW{1'b0}};
        last_x_reg <= 1'b0;
        last_y_reg <= 1'b0;
        last_p_reg <= OW == 1;
    end else if (accept) begin
        x_reg <= x_next;
        p_reg <= p_next;
        last_x_reg <= x_next == LAST_X;
        last_p_reg <= p_next == LAST_P;
        if (last_x_reg) begin
            y_reg <= y_next;
            last_y_reg <= y_next == LAST_Y;
        end
    end
end

// ---------------------------------------------------------------------------
// Line buffer: word ox holds the maximum of pixels 2ox, 2ox+1 of the last
// even row
wire [PX-1:0] lb_rd;
reg  [PX-1:0] h_reg;          // pixel 2ox, or its maximum with word ox
wire [PX-1:0] max_h_in;       // max(h_reg, in_data)
wire [PX-1:0] max_lb_in;      // max(word ox, in_data)
wire          lb_we = accept && odd_x && !odd_y;

generate
    genvar c;
    for (c = 0; c < C; c = c + 1) begin : g_ch
        assign max_h_in[c*X_W +: X_W] = vmax(h_reg[c*X_W +: X_W], in_data[c*X_W +: X_W]);
        assign max_lb_in[c*X_W +: X_W] = vmax(lb_rd[c*X_W +: X_W], in_data[c*X_W +: X_W]);
    end

    if (OW >= 2) begin : g_lb_ram
        (* ram_style = RAM_STYLE *)
        reg [PX-1:0] mem [0:OW-1];
        reg [PX-1:0] rd_reg;
        always @(posedge clk) begin
            if (lb_we) begin
                mem[p_reg] <= max_h_in;
            end
        end
        // Read the next pixel's word: the odd row's pixel 2ox finds word ox
        // (written in the even row at least one edge earlier, as OW >= 2).
        always @(posedge clk) begin
            if (accept) begin
                rd_reg <= mem[p_next];
            end
        end
        assign lb_rd = rd_reg;
    end else begin : g_lb_reg
        // One pair per row: the line buffer is a register.
        reg [PX-1:0] lb_reg;
        always @(posedge clk) begin
            if (lb_we) begin
                lb_reg <= max_h_in;
            end
        end
        assign lb_rd = lb_reg;
    end
endgenerate

always @(posedge clk) begin
    if (accept && !odd_x) begin
        h_reg <= odd_y ? max_lb_in : in_data;
    end
end

// ---------------------------------------------------------------------------
// Output register
always @(posedge clk) begin
    if (accept && done) begin
        out_data_reg <= max_h_in;
    end
end

always @(posedge clk) begin
    if (rst) begin
        out_valid_reg <= 1'b0;
    end else if (accept && done) begin
        out_valid_reg <= 1'b1;
    end else if (out_ready) begin
        out_valid_reg <= 1'b0;
    end
end

assign out_data = out_data_reg;
assign out_valid = out_valid_reg;

endmodule

`resetall
