/*
 * fptgen RTL library: the output error of a feedback-rule trainer
 * (docs/training.md, "Feedback rules").
 *
 * cap loads the network's output y and the sample's target t (C codes of
 * Y_W bits each, element k at bits [k*Y_W +: Y_W], Y_S = 1 for two's
 * complement). Both are rings: rot moves every element down by one, so
 * after C rotations they are back. e shows e[k] = y[k] - t[k] of the head
 * (E_W = Y_W + 2 bits, exact). A pass of C cycles with scan and rot high
 * and k = 0 .. C - 1 finds k*, the first index of the largest target
 * (the scan compares the head, so the ring must turn with it, as
 * fptgen_fb_ctrl drives it); kstar is high when k equals it. cap takes
 * precedence over rot in the same cycle.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_fb_error #(
    // Outputs of the network (>= 1)
    parameter integer C = 2,
    // Bits of an output code, and 1 for two's complement
    parameter integer Y_W = 8,
    parameter integer Y_S = 1,
    // Bits of an error value (Y_W + 2)
    parameter integer E_W = 10
) (
    input  wire                clk,
    input  wire                cap,
    input  wire [C*Y_W-1:0]    y,
    input  wire [C*Y_W-1:0]    t,
    input  wire                rot,
    input  wire                scan,
    input  wire [clog2(C)-1:0] k,
    output wire [E_W-1:0]      e,
    output wire                kstar
);

`include "fptgen_clog2.vh"

localparam integer KW = clog2(C);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (C < 1 || Y_W < 1 || E_W != Y_W + 2) begin : g_error_out_of_range
        fptgen_param_error_fb_error_out_of_range error_inst ();
    end
endgenerate

reg [C*Y_W-1:0] y_reg, t_reg;
reg [Y_W-1:0]   best_reg;
reg [KW-1:0]    kstar_reg;
wire [C*Y_W+Y_W-1:0] y_cat = {y_reg[Y_W-1:0], y_reg};
wire [C*Y_W+Y_W-1:0] t_cat = {t_reg[Y_W-1:0], t_reg};
wire unused_cat = ^{y_cat[Y_W-1:0], t_cat[Y_W-1:0]};

always @(posedge clk) begin
    if (cap) begin
        y_reg <= y;
        t_reg <= t;
    end else if (rot) begin
        y_reg <= y_cat[C*Y_W+Y_W-1:Y_W];
        t_reg <= t_cat[C*Y_W+Y_W-1:Y_W];
    end
end

// Heads, extended by two bits (sign or zero) so that the difference is exact.
wire sy = Y_S != 0 && y_reg[Y_W-1];
wire st = Y_S != 0 && t_reg[Y_W-1];
wire [E_W-1:0] y_head = {sy, sy, y_reg[Y_W-1:0]};
wire [E_W-1:0] t_head = {st, st, t_reg[Y_W-1:0]};
wire [E_W-1:0] b_ext = {(Y_S != 0 && best_reg[Y_W-1]), (Y_S != 0 && best_reg[Y_W-1]), best_reg};

assign e = y_head - t_head;

// t_head > best, on the extended (signed) values.
wire greater = $signed(t_head) > $signed(b_ext);

always @(posedge clk) begin
    if (scan && (k == {KW{1'b0}} || greater)) begin
        best_reg <= t_reg[Y_W-1:0];
        kstar_reg <= k;
    end
end

assign kstar = k == kstar_reg;

endmodule

`resetall
