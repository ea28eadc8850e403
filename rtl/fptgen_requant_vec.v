/*
 * fptgen RTL library: a vector of int32 accumulators requantized to int8
 * codes (or OUT_W-bit codes), one fptgen_requant per lane, as a
 * valid/ready stream: the output stage of an int8 layer (TFLite's
 * MultiplyByQuantizedMultiplier, output offset and clamp; docs/numerics.md,
 * "Int8 requantization").
 *
 * Lane k takes bits [k*32 +: 32] of in_data and gives bits
 * [k*OUT_W +: OUT_W] of out_data, with its own multiplier
 * MULTS[k*31 +: 31] and shift SHIFTS[k*6 +: 6] (two's complement, -31 ..
 * 30): the per-channel scales of the layer, constants of the design.
 *
 * Handshake. The lanes form one pipeline of LATENCY = 6 stages that
 * advances together (fptgen_requant's en):
 *   en       = !out_valid || out_ready
 *   in_ready = en
 * so a vector is taken whenever the last stage is empty or being emptied,
 * and comes out LATENCY enabled edges later. With out_ready held high it
 * takes one vector per cycle and out_valid follows in_valid 6 edges later.
 * in_ready depends on out_ready combinationally (as the other fptgen stream
 * blocks' do). The cycle model is fptgen_generator::timing::blocks::Pipe;
 * generator/tests/rtl/requant.rs (against it) and
 * generator/tests/rtl/requant_vec.rs (against a model of its own) check
 * both the values and the handshake, cycle by cycle, under random valid
 * and ready.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_requant_vec #(
    // Lanes (values per vector), >= 1
    parameter integer N = 1,
    // 0: single rounding (TFLITE_SINGLE_ROUNDING); 1: double rounding (gemmlowp)
    parameter integer ROUNDING = 0,
    // Output code width, 2 .. 32
    parameter integer OUT_W = 8,
    // Output zero point
    parameter integer OUT_ZP = 0,
    // Activation clamp, as output codes
    parameter integer ACT_MIN = -128,
    parameter integer ACT_MAX = 127,
    // Per lane: the multiplier (0 .. 2^31-1), 31 bits each, lane 0 lowest
    // (default 0: every output is the clamped zero point)
    parameter [N*31-1:0] MULTS = 0,
    // Per lane: the shift (-31 .. 30), 6 bits two's complement, lane 0 lowest
    parameter [N*6-1:0] SHIFTS = 0
) (
    input  wire               clk,
    input  wire               rst,
    input  wire [N*32-1:0]    in_data,
    input  wire               in_valid,
    output wire               in_ready,
    output wire [N*OUT_W-1:0] out_data,
    output wire               out_valid,
    input  wire               out_ready
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
// (ROUNDING, OUT_W and the clamp are checked by every fptgen_requant.)
generate
    if (N < 1) begin : g_error_size
        fptgen_param_error_requant_vec_size_below_1 error_inst ();
    end
endgenerate

wire en = !out_valid || out_ready;
assign in_ready = en;

wire [N-1:0] lane_valid;

genvar k;
generate
    for (k = 0; k < N; k = k + 1) begin : g_lane
        fptgen_requant #(
            .ROUNDING(ROUNDING),
            .OUT_W(OUT_W),
            .OUT_ZP(OUT_ZP),
            .ACT_MIN(ACT_MIN),
            .ACT_MAX(ACT_MAX)
        ) u_requant (
            .clk(clk),
            .rst(rst),
            .en(en),
            .in_valid(in_valid),
            .x(in_data[k*32 +: 32]),
            .mult(MULTS[k*31 +: 31]),
            .shift(SHIFTS[k*6 +: 6]),
            .out_valid(lane_valid[k]),
            .y(out_data[k*OUT_W +: OUT_W])
        );
    end
endgenerate

// Every lane's valid is the same; lane 0's is the stream's.
assign out_valid = lane_valid[0];
wire unused_valid = &{1'b0, lane_valid};

endmodule

`resetall
