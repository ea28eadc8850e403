/*
 * fptgen RTL library: loss accumulator of the ES trainer.
 *
 * Adds, for one sample per cycle with add high, the absolute errors
 * |y[o] - t[o]| of its OUTPUTS outputs (raw codes of the output format,
 * Y_W bits, signed if Y_S) to an unsigned 32-bit loss that saturates at
 * 2^32 - 1 (docs/training.md, "One group"). The terms are never negative,
 * so saturating once per sample equals saturating after every term. clear
 * zeroes the loss.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_loss_acc #(
    // Outputs per sample
    parameter integer OUTPUTS = 10,
    // Output format width and signedness
    parameter integer Y_W = 8,
    parameter integer Y_S = 1
) (
    input  wire                   clk,
    input  wire                   rst,
    input  wire                   clear,
    input  wire                   add,
    input  wire [OUTPUTS*Y_W-1:0] y,
    input  wire [OUTPUTS*Y_W-1:0] t,
    output wire [31:0]            loss
);

localparam integer D_W = Y_W + 2;          // signed difference
localparam integer SUM_W = Y_W + 1 + 21;   // OUTPUTS terms of up to Y_W+1 bits, OUTPUTS < 2^21
localparam integer L_W = (SUM_W > 32 ? SUM_W : 32) + 1;

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (OUTPUTS < 1 || OUTPUTS >= (1 << 21) || Y_W < 1 || Y_W > 64) begin : g_error_out_of_range
        fptgen_param_error_loss_acc_out_of_range error_inst ();
    end
endgenerate

// Sum of |y - t| over the outputs of one sample.
function [SUM_W-1:0] abs_error_sum;
    input [OUTPUTS*Y_W-1:0] yv;
    input [OUTPUTS*Y_W-1:0] tv;
    integer o;
    reg [Y_W-1:0] ya;
    reg [Y_W-1:0] ta;
    reg signed [D_W-1:0] d;
    begin
        abs_error_sum = {SUM_W{1'b0}};
        for (o = 0; o < OUTPUTS; o = o + 1) begin
            ya = yv[o*Y_W +: Y_W];
            ta = tv[o*Y_W +: Y_W];
            d = {{2{Y_S != 0 ? ya[Y_W-1] : 1'b0}}, ya} - {{2{Y_S != 0 ? ta[Y_W-1] : 1'b0}}, ta};
            abs_error_sum = abs_error_sum + {{(SUM_W - D_W){1'b0}}, (d[D_W-1] ? -d : d)};
        end
    end
endfunction

reg  [31:0]    loss_reg;
wire [L_W-1:0] total = {{(L_W - 32){1'b0}}, loss_reg} + {{(L_W - SUM_W){1'b0}}, abs_error_sum(y, t)};

always @(posedge clk) begin
    if (rst || clear) begin
        loss_reg <= 32'd0;
    end else if (add) begin
        loss_reg <= (total[L_W-1:32] != {(L_W - 32){1'b0}}) ? 32'hFFFF_FFFF : total[31:0];
    end
end

assign loss = loss_reg;

endmodule

`resetall
