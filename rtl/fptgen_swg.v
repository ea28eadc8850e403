/*
 * fptgen RTL library: sliding-window generator for a 3x3 convolution (as
 * FINN's ConvolutionInputGenerator in front of the MVAU, fptgen_dense).
 *
 * Streaming order. An image of shape [H, W, C] streams one pixel per beat,
 * pixels in row-major order (row 0 left to right, then row 1, ...); a beat
 * holds the pixel's C channel values, channel c at bits [c*X_W +: X_W]. The
 * output streams one beat per output pixel (oy, ox), also in row-major
 * order; a beat holds the 3x3 window of that output pixel, value (ky, kx, c)
 * at element (ky*3 + kx)*C + c, bits [((ky*3 + kx)*C + c)*X_W +: X_W]
 * (ky, kx = 0..2, top-left first). Images follow each other back to back:
 * the first pixel after an image's last is the next image's pixel (0, 0).
 *
 * Geometry (TensorFlow/Keras). Window (oy, ox) covers input rows
 * oy*STRIDE - PT + ky and columns ox*STRIDE - PL + kx; positions outside
 * the image are padding and hold the code 0.
 *   PAD = 0, "valid": OH = floor((H - 3)/STRIDE) + 1 (H, W >= 3), PT = 0.
 *   PAD = 1, "same":  OH = ceil(H/STRIDE), pad_total = max((OH - 1)*STRIDE
 *                     + 3 - H, 0), PT = floor(pad_total/2), the rest at the
 *                     bottom (at most 1 row).
 * Columns alike (OW, PL). Same padding with stride 1 pads 1 row/column on
 * every side; with stride 2 it pads 0 (even size) or 1 (odd size) before
 * and 1 after.
 *
 * Structure. The module walks the image in steps (y, x), row-major,
 * y = 0..YS-1, x = 0..W-1, where YS = H, except that same padding with
 * stride 1 adds a step row y = H of bottom padding (YS = H + 1), taken
 * without input. A step at y < H accepts pixel (y, x). Each step reads
 * column x of the two rows above from a line buffer (W words of 2*C*X_W
 * bits in RAM, (* ram_style = RAM_STYLE *), read one step ahead; a register
 * when W = 1), writes the new pixel back, and shifts the column (rows y-2,
 * y-1, y; padding rows zeroed) into two column registers. A window is
 * completed by the step of the last pixel it needs,
 *   sy = min(oy*STRIDE - PT + 2, H - 1), sx = min(ox*STRIDE - PL + 2, W - 1),
 * except the last window row of same padding with stride 1 (oy = H - 1),
 * completed by the padding step (sy = H, sx = min(ox + 1, W - 1)). That step
 * loads the window, from the column registers and the new column, into the
 * output register. Same padding with stride 1 completes two windows at
 * x = W - 1 (ox = W - 2 and W - 1, when W >= 2): the second is loaded from
 * the column registers on a later edge (the next one when the output is
 * ready), on which the next step, which completes no window, may already
 * shift them. Registers: two column registers and the output register
 * (15*C*X_W bits), the line buffer's read register, counters.
 *
 * Handshake. out_data/out_valid is a register. A step happens on a rising
 * edge unless (a) its pixel is not offered (in_valid low; the padding steps
 * need no input and ignore in_valid) or (b) the output register holds a
 * window that is not being taken (out_valid high, out_ready low) and the
 * step completes a window or the second window of a row still waits.
 * in_ready is high when a pixel step can happen (it depends on out_ready
 * combinationally, as fptgen_dense's), so it is low during the padding step
 * row: with same padding and stride 1 the next image's pixels wait for the
 * W padding steps that complete the last window row. Otherwise the next
 * image's pixels are accepted while the last windows of the previous one
 * are output. Nothing is ever lost or repeated.
 *
 * Cycle model. Cycle t is the clock period that ends with rising edge t+1;
 * a pixel is accepted on cycle t when in_valid and in_ready are high in it,
 * a window is output on cycle t when out_valid is high in it (with
 * out_ready high it is taken at the end of that cycle). With in_valid held
 * high (pixels always offered) and out_ready held high, a step happens on
 * every cycle. Let t0 be the cycle on which an image's pixel (0, 0) is
 * accepted. Then
 *   - pixel (y, x) is accepted on cycle t0 + y*W + x;
 *   - the next image's pixel (0, 0) on cycle t0 + YS*W: images follow each
 *     other every YS*W cycles (H*W; (H + 1)*W for same padding with stride
 *     1, whose W padding steps keep in_ready low);
 *   - window (oy, ox) is output on cycle t0 + sy*W + sx + 1, the cycle after
 *     the step that completes it, or on the cycle after the previous window
 *     if that is later, which happens only to the last window of each row
 *     with same padding and stride 1 (ox = W - 1, W >= 2): cycle
 *     t0 + sy*W + W + 1.
 * in_ready is high on the first cycle after reset.
 *
 * Parameters: H, W, C, X_W >= 1; STRIDE 1 or 2; PAD 0 or 1; valid padding
 * needs H, W >= 3. Illegal combinations stop elaboration (the failed check
 * instantiates fptgen_param_error_swg_<reason>, which does not exist).
 *
 * Checked bit and cycle exactly by generator/tests/rtl/swg.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_swg #(
    // Input image: rows, columns, channels (>= 1)
    parameter integer H = 8,
    parameter integer W = 8,
    parameter integer C = 1,
    // Window stride: 1 or 2
    parameter integer STRIDE = 1,
    // Padding: 0 "valid" (needs H, W >= 3), 1 "same" (TensorFlow/Keras)
    parameter integer PAD = 0,
    // Bits per value (>= 1)
    parameter integer X_W = 8,
    // Vivado ram_style of the line buffer: "block", "distributed" or "auto"
    // (read only by the synthesis attribute below, which Verilator does not
    // count as a use)
    /* verilator lint_off UNUSEDPARAM */
    parameter RAM_STYLE = "auto"
    /* verilator lint_on UNUSEDPARAM */
) (
    input  wire               clk,
    input  wire               rst,

    input  wire [C*X_W-1:0]   in_data,
    input  wire               in_valid,
    output wire               in_ready,

    output wire [9*C*X_W-1:0] out_data,
    output wire               out_valid,
    input  wire               out_ready
);

`include "fptgen_clog2.vh"

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (H < 1 || W < 1 || C < 1 || X_W < 1) begin : g_error_size_below_1
        fptgen_param_error_swg_size_below_1 error_inst ();
    end
    if (STRIDE != 1 && STRIDE != 2) begin : g_error_stride_not_1_or_2
        fptgen_param_error_swg_stride_not_1_or_2 error_inst ();
    end
    if (PAD != 0 && PAD != 1) begin : g_error_pad_not_0_or_1
        fptgen_param_error_swg_pad_not_0_or_1 error_inst ();
    end
    if (PAD == 0 && (H < 3 || W < 3)) begin : g_error_valid_image_below_3x3
        fptgen_param_error_swg_valid_image_below_3x3 error_inst ();
    end
endgenerate

localparam integer PX = C * X_W;                               // bits per pixel
// Same padding (Keras): output size, total padding, padding before
localparam integer OH_SAME = (H + STRIDE - 1) / STRIDE;
localparam integer OW_SAME = (W + STRIDE - 1) / STRIDE;
localparam integer PAD_H = (OH_SAME - 1) * STRIDE + 3 - H;
localparam integer PAD_W = (OW_SAME - 1) * STRIDE + 3 - W;
localparam integer PT = (PAD != 0 && PAD_H > 0) ? PAD_H / 2 : 0;
localparam integer PL = (PAD != 0 && PAD_W > 0) ? PAD_W / 2 : 0;
// Same padding with stride 1: a step row of bottom padding
localparam integer VROW = (PAD != 0 && STRIDE == 1) ? 1 : 0;
localparam integer YS = H + VROW;                              // step rows per image
// The first step column/row that completes a window; after it, every
// STRIDE-th one does.
localparam integer FX0_I = 2 - PL;
localparam integer FY0_I = 2 - PT;
// Same padding with stride 2 (and with W = 1): the step at x = W - 1
// completes the last window, which reaches 1 column past the image; the
// window is taken one column to the left (columns x-1, x, padding).
localparam integer EDGE_X = (PAD != 0 && (STRIDE == 2 || W == 1)) ? 1 : 0;
localparam integer EDGE_Y = (PAD != 0 && STRIDE == 2) ? 1 : 0;
// Same padding with stride 1 (W >= 2): the step at x = W - 1 completes two
// windows, the second one column to the left.
localparam integer DBL_X = (PAD != 0 && STRIDE == 1 && W >= 2) ? 1 : 0;

localparam integer XW = clog2(W + 3);                          // 0..W-1 and the constants 0..2
localparam integer YW = clog2(YS + 3);
localparam integer LAST_X_I = W - 1;
localparam integer LAST_Y_I = YS - 1;
localparam integer H1_I = H - 1;
localparam integer H_I = H;
localparam [XW-1:0] LAST_X = LAST_X_I[XW-1:0];
localparam [YW-1:0] LAST_Y = LAST_Y_I[YW-1:0];
localparam [YW-1:0] H1 = H1_I[YW-1:0];
localparam [YW-1:0] HV = H_I[YW-1:0];
localparam [XW-1:0] FX0 = FX0_I[XW-1:0];
localparam [YW-1:0] FY0 = FY0_I[YW-1:0];
localparam [YW-1:0] Y2 = 2;

// Flags of step column x: {last, completes, edge, double, first with left
// padding}
function [4:0] x_flags;
    input [XW-1:0] x;
    begin
        x_flags[4] = x == LAST_X;
        x_flags[3] = (x >= FX0 && (STRIDE == 1 || x[0] == FX0[0])) || (EDGE_X != 0 && x == LAST_X);
        x_flags[2] = EDGE_X != 0 && x == LAST_X;
        x_flags[1] = DBL_X != 0 && x == LAST_X;
        x_flags[0] = PL != 0 && x == {XW{1'b0}};
    end
endfunction

// Flags of step row y: {last, completes, edge, top row padding, middle row
// padding, padding row}; without padding before (PT = 0, PL = 0) no window
// reaches above row 0 or left of column 0, and those flags stay low.
function [5:0] y_flags;
    input [YW-1:0] y;
    begin
        y_flags[5] = y == LAST_Y;
        y_flags[4] = (y >= FY0 && (STRIDE == 1 || y[0] == FY0[0])) || (EDGE_Y != 0 && y == H1);
        y_flags[3] = EDGE_Y != 0 && y == H1;
        y_flags[2] = PT != 0 && y < Y2;
        y_flags[1] = PT != 0 && y == {YW{1'b0}};
        y_flags[0] = VROW != 0 && y == HV;
    end
endfunction

// ---------------------------------------------------------------------------
// Step position and its flags
reg [XW-1:0] x_reg;
reg [YW-1:0] y_reg;
reg          last_x_reg, fire_x_reg, edge_x_reg, dbl_x_reg, first_x_reg;
reg          last_y_reg, fire_y_reg, edge_y_reg, top0_reg, mid0_reg, vrow_reg;
reg          pend_reg;         // the second window of a row waits
reg          out_valid_reg;
reg  [9*PX-1:0] out_data_reg;

wire out_free = !out_valid_reg || out_ready;
wire fire = fire_x_reg && fire_y_reg;
// pend_reg and fire are never high together: the step after x = W - 1 is a
// step at x = 0, which completes no window.
wire can_step = out_free || !(pend_reg || fire);
wire step = can_step && (vrow_reg || in_valid);
wire load_step = step && fire;
wire load_pend = pend_reg && out_free;

assign in_ready = can_step && !vrow_reg;

wire [XW-1:0] x_next = last_x_reg ? {XW{1'b0}} : x_reg + 1'b1;
wire [YW-1:0] y_next = last_y_reg ? {YW{1'b0}} : y_reg + 1'b1;

always @(posedge clk) begin
    if (rst) begin
        x_reg <= {XW{1'b0}};
        y_reg <= {YW{1'b0}};
        {last_x_reg, fire_x_reg, edge_x_reg, dbl_x_reg, first_x_reg} <= x_flags({XW{1'b0}});
        {last_y_reg, fire_y_reg, edge_y_reg, top0_reg, mid0_reg, vrow_reg} <= y_flags({YW{1'b0}});
    end else if (step) begin
        x_reg <= x_next;
        {last_x_reg, fire_x_reg, edge_x_reg, dbl_x_reg, first_x_reg} <= x_flags(x_next);
        if (last_x_reg) begin
            y_reg <= y_next;
            {last_y_reg, fire_y_reg, edge_y_reg, top0_reg, mid0_reg, vrow_reg} <= y_flags(y_next);
        end
    end
end

// ---------------------------------------------------------------------------
// Line buffer: word x holds {row y-1, row y-2} of column x before step (y, x)
wire [2*PX-1:0] lb_rd;

generate
    if (W >= 2) begin : g_lb_ram
        localparam integer AW = clog2(W);
        (* ram_style = RAM_STYLE *)
        reg [2*PX-1:0] mem [0:W-1];
        reg [2*PX-1:0] rd_reg;
        // Write the step's column back (this row's pixel becomes the middle
        // row; during the padding row in_data is not used afterwards).
        always @(posedge clk) begin
            if (step) begin
                mem[x_reg[AW-1:0]] <= {in_data, lb_rd[PX +: PX]};
            end
        end
        // Read the next step's word (x_next != x_reg as W >= 2, and the
        // word was written at least one edge earlier).
        always @(posedge clk) begin
            if (step) begin
                rd_reg <= mem[x_next[AW-1:0]];
            end
        end
        assign lb_rd = rd_reg;
    end else begin : g_lb_reg
        // One column: the line buffer is the word itself.
        reg [2*PX-1:0] lb_reg;
        always @(posedge clk) begin
            if (step) begin
                lb_reg <= {in_data, lb_reg[PX +: PX]};
            end
        end
        assign lb_rd = lb_reg;
    end
endgenerate

// ---------------------------------------------------------------------------
// Columns: {bottom, middle, top} rows, padding rows zeroed as they enter
wire [PX-1:0]   n_top = top0_reg ? {PX{1'b0}} : lb_rd[0 +: PX];
wire [PX-1:0]   n_mid = mid0_reg ? {PX{1'b0}} : lb_rd[PX +: PX];
wire [PX-1:0]   n_bot = vrow_reg ? {PX{1'b0}} : in_data;
wire [3*PX-1:0] n_col = {n_bot, n_mid, n_top};
reg  [3*PX-1:0] c0_reg;   // column x-2 (after the step: x-1)
reg  [3*PX-1:0] c1_reg;   // column x-1 (after the step: x)

always @(posedge clk) begin
    if (step) begin
        // Column -1 (left of a row) is padding.
        c0_reg <= first_x_reg ? {3*PX{1'b0}} : c1_reg;
        c1_reg <= n_col;
    end
end

// The window's three columns: x-2, x-1, x; at an edge step x-1, x,
// padding; the second window of a row x-1, x, padding from the registers
// after the step (column -1 is padding when W = 1).
wire [3*PX-1:0] zcol = {3*PX{1'b0}};
wire [3*PX-1:0] wc0 = pend_reg ? c0_reg : !edge_x_reg ? c0_reg : first_x_reg ? zcol : c1_reg;
wire [3*PX-1:0] wc1 = pend_reg ? c1_reg : !edge_x_reg ? c1_reg : n_col;
wire [3*PX-1:0] wc2 = (pend_reg || edge_x_reg) ? zcol : n_col;
// Rows: y-2, y-1, y; at an edge row y-1, y, padding (stride 2, so never
// with the second window of a row).
wire            up = edge_y_reg;
wire [9*PX-1:0] win;

generate
    genvar kx, ky;
    for (kx = 0; kx < 3; kx = kx + 1) begin : g_kx
        wire [3*PX-1:0] col = kx == 0 ? wc0 : kx == 1 ? wc1 : wc2;
        wire [4*PX-1:0] rows = {{PX{1'b0}}, col};   // row slots 0..3
        for (ky = 0; ky < 3; ky = ky + 1) begin : g_ky
            assign win[(ky*3 + kx)*PX +: PX] = up ? rows[(ky + 1)*PX +: PX] : rows[ky*PX +: PX];
        end
    end
endgenerate

// ---------------------------------------------------------------------------
// Output register
always @(posedge clk) begin
    if (load_step || load_pend) begin
        out_data_reg <= win;
    end
end

always @(posedge clk) begin
    if (rst) begin
        out_valid_reg <= 1'b0;
        pend_reg <= 1'b0;
    end else begin
        if (load_step || load_pend) begin
            out_valid_reg <= 1'b1;
        end else if (out_ready) begin
            out_valid_reg <= 1'b0;
        end
        if (load_pend) begin
            pend_reg <= 1'b0;
        end else if (load_step && dbl_x_reg) begin
            pend_reg <= 1'b1;
        end
    end
end

assign out_data = out_data_reg;
assign out_valid = out_valid_reg;

endmodule

`resetall
