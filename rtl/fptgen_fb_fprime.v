/*
 * fptgen RTL library: f'(o) of N output codes of a trainable layer in a
 * feedback-rule trainer (docs/training.md, "Feedback rules";
 * fptgen_sim::train::feedback::Derivative is the definition). Used by
 * fptgen_fb_layer (a whole output vector) and fptgen_fb_conv (one output
 * pixel).
 *
 * fp[o] = 1 (FP_MODE 0, linear), a[o] > A_MIN (FP_MODE 1: relu, A_MIN 0
 * for dense and conv2d, act_min for dense_int8) or A_MIN < a[o] < A_MAX
 * (FP_MODE 2: dense_int8's relu6), a[o] = a_data[o*A_W +: A_W] read as an
 * A_S-signed code. Combinational.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_fb_fprime #(
    // Codes (>= 1)
    parameter integer N = 4,
    // Output codes: bits, and 1 for two's complement
    parameter integer A_W = 8,
    parameter integer A_S = 1,
    // f'(o): 0 always (linear); 1 a[o] > A_MIN (relu); 2 A_MIN < a[o] < A_MAX
    // (relu6); A_MIN, A_MAX signed output codes (A_MIN < A_MAX in mode 2)
    parameter integer FP_MODE = 1,
    parameter integer A_MIN = 0,
    parameter integer A_MAX = 0
) (
    input  wire [N*A_W-1:0] a_data,
    output wire [N-1:0]     fp
);

localparam integer CW = A_W + 1 > 33 ? A_W + 1 : 33;          // the comparisons, signed

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (N < 1 || A_W < 1 || FP_MODE < 0 || FP_MODE > 2 || (FP_MODE == 2 && A_MIN >= A_MAX)) begin : g_error_out_of_range
        fptgen_param_error_fb_fprime_out_of_range error_inst ();
    end
endgenerate

genvar o;
generate
    if (FP_MODE == 0) begin : g_fp_always
        assign fp = {N{1'b1}};
        wire unused_a = ^a_data;
    end else begin : g_fp_test
        localparam [31:0] LO32 = A_MIN;
        localparam [31:0] HI32 = A_MAX;
        wire signed [CW-1:0] lo = {{(CW - 32){LO32[31]}}, LO32};
        wire signed [CW-1:0] hi = {{(CW - 32){HI32[31]}}, HI32};
        for (o = 0; o < N; o = o + 1) begin : g_fp
            wire [A_W-1:0] a = a_data[o*A_W +: A_W];
            wire signed [CW-1:0] a_c = {{(CW - A_W){A_S != 0 && a[A_W-1]}}, a};
            if (FP_MODE == 1) begin : g_above
                assign fp[o] = a_c > lo;
            end else begin : g_between
                assign fp[o] = a_c > lo && a_c < hi;
            end
        end
        if (FP_MODE == 1) begin : g_no_hi
            wire unused_hi = ^hi;
        end
    end
endgenerate

endmodule

`resetall
