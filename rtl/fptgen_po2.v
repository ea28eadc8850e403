/*
 * fptgen RTL library: power-of-two quantization of a fitness signal.
 *
 * For a signed S_W-bit signal s: zero = (s == 0), neg = (s < 0) and
 * exp = floor(log2 |s|), the position of the leading one of |s| (0 when s is
 * 0). Q(s) = (neg ? -1 : 1) * 2^exp (0 when zero), so a block multiplies its
 * noise value by Q(s) with a shift (docs/training.md, "One group"); onehot
 * is |Q(s)| itself, which blocks with +-1 noise add or subtract.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_po2 #(
    // Signal width (>= 2)
    parameter integer S_W = 33
) (
    input  wire [S_W-1:0]          s,
    output wire                    zero,
    output wire                    neg,
    // the exponent, 0..S_W-1: clog2(S_W) bits
    output wire [clog2(S_W)-1:0]   exp,
    output wire [S_W-1:0]          onehot
);

`include "fptgen_clog2.vh"

localparam integer EXP_W = clog2(S_W);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (S_W < 2) begin : g_error_out_of_range
        fptgen_param_error_po2_out_of_range error_inst ();
    end
endgenerate

assign neg = s[S_W-1];
// |s| fits S_W bits: |-2^(S_W-1)| = 2^(S_W-1) is the top bit alone.
wire [S_W-1:0] mag = neg ? (~s + 1'b1) : s;
assign zero = (mag == {S_W{1'b0}});

// |Q(s)| = 2^exp (0 when s is 0): the leading one of |s| alone, each bit
// one AND with the OR of the bits above it (a reduction per bit, which
// synthesis maps as a tree, not a chain through an encoder and a decoder).
generate
    genvar b;
    for (b = 0; b < S_W; b = b + 1) begin : g_onehot
        if (b == S_W - 1) begin : g_top
            assign onehot[b] = mag[b];
        end else begin : g_below
            assign onehot[b] = mag[b] & ~(|mag[S_W-1:b+1]);
        end
    end
endgenerate

// The exponent: bit b is the OR of the one-hot bits whose position has
// bit b set.
function [EXP_W-1:0] position;
    input [S_W-1:0] h;
    integer k;
    begin
        position = {EXP_W{1'b0}};
        for (k = 0; k < S_W; k = k + 1) begin
            position = position | (h[k] ? k[EXP_W-1:0] : {EXP_W{1'b0}});
        end
    end
endfunction

assign exp = position(onehot);

endmodule

`resetall
