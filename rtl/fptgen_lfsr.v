/*
 * fptgen RTL library: LFSR noise source of the ES training blocks.
 *
 * A Galois LFSR of WIDTH bits that shifts right. One step outputs the low
 * bit o = s[0], then s = (s >> 1) ^ (o ? TAPS : 0), with the maximal-length
 * masks of docs/training.md (8: 0xB8, 16: 0xB400, 32: 0xA3000000). A noise
 * value takes BITS fresh output bits, the first in the least significant
 * position, so consecutive values never share bits.
 *
 * value shows the BITS bits the next BITS steps will output; a cycle with
 * next high performs those BITS steps. rst loads SEED.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_lfsr #(
    // State width: 8, 16 or 32
    parameter integer WIDTH = 8,
    // Initial state (nonzero)
    parameter [WIDTH-1:0] SEED = 1,
    // Output bits per value (1..WIDTH)
    parameter integer BITS = 1
) (
    input  wire            clk,
    input  wire            rst,
    input  wire            next,
    output wire [BITS-1:0] value
);

localparam [31:0] TAPS32 = (WIDTH == 8)  ? 32'h0000_00B8 :
                           (WIDTH == 16) ? 32'h0000_B400 :
                                           32'hA300_0000;
localparam [WIDTH-1:0] TAPS = TAPS32[WIDTH-1:0];

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (WIDTH != 8 && WIDTH != 16 && WIDTH != 32) begin : g_error_width_not_8_16_32
        fptgen_param_error_lfsr_width_not_8_16_32 error_inst ();
    end
    if (BITS < 1 || BITS > WIDTH) begin : g_error_bits_not_1_to_width
        fptgen_param_error_lfsr_bits_not_1_to_width error_inst ();
    end
    if (SEED == {WIDTH{1'b0}}) begin : g_error_seed_zero
        fptgen_param_error_lfsr_seed_zero error_inst ();
    end
endgenerate

reg [WIDTH-1:0] state_reg;

// BITS steps from state s: {state after them, their output bits}.
function [WIDTH+BITS-1:0] advance;
    input [WIDTH-1:0] s;
    integer k;
    reg [WIDTH-1:0] t;
    reg [BITS-1:0] o;
    begin
        t = s;
        for (k = 0; k < BITS; k = k + 1) begin
            o[k] = t[0];
            t = {1'b0, t[WIDTH-1:1]} ^ (t[0] ? TAPS : {WIDTH{1'b0}});
        end
        advance = {t, o};
    end
endfunction

wire [WIDTH+BITS-1:0] stepped = advance(state_reg);
assign value = stepped[BITS-1:0];

always @(posedge clk) begin
    if (rst) begin
        state_reg <= SEED;
    end else if (next) begin
        state_reg <= stepped[WIDTH+BITS-1:BITS];
    end
end

endmodule

`resetall
