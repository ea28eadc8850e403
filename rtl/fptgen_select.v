/*
 * fptgen RTL library: one of N words, by index (combinational).
 *
 * out = word sel of in (word i at bits [i*W +: W]) when sel < N, and 0 for
 * any other sel. The trainer's host port uses it to return the read column
 * of the tensor the AXI wrapper selects.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_select #(
    // Words (1 or more)
    parameter integer N = 2,
    // Bits per word (1 or more)
    parameter integer W = 8,
    // Bits of sel (at least clog2(N), and 1 or more; at most 31)
    parameter integer SEL_W = 1
) (
    input  wire [SEL_W-1:0] sel,
    input  wire [N*W-1:0]   in,
    output wire [W-1:0]     out
);

`include "fptgen_clog2.vh"

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (N < 1 || W < 1 || SEL_W < 1 || SEL_W > 31 || SEL_W < clog2(N)) begin : g_error_out_of_range
        fptgen_param_error_select_out_of_range error_inst ();
    end
endgenerate

// Word k of words when s is k (k < N), 0 for any other s.
function [W-1:0] pick;
    input [31:0] s;
    input [N*W-1:0] words;
    integer k;
    begin
        pick = {W{1'b0}};
        for (k = 0; k < N; k = k + 1) begin
            if (s == k) begin
                pick = words[k*W +: W];
            end
        end
    end
endfunction

assign out = pick({{(32 - SEL_W){1'b0}}, sel}, in);

endmodule

`resetall
