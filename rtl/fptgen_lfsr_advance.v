/*
 * fptgen RTL library: BITS steps of the ES and feedback trainers' Galois
 * LFSR, combinational.
 *
 * One step outputs the low bit o = s[0], then s = (s >> 1) ^ (o ? TAPS : 0),
 * with the maximal-length masks of docs/training.md (8: 0xB8, 16: 0xB400,
 * 32: 0xA3000000). value holds the BITS output bits of BITS steps from
 * state, the first in the least significant position; next is the state
 * after them. fptgen_lfsr keeps one state in a register; the ES trainer's
 * ring of training blocks (fptgen_itb_ring) keeps one per block in its
 * shift register and advances the one at its unit.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_lfsr_advance #(
    // State width: 8, 16 or 32
    parameter integer WIDTH = 8,
    // Output bits per value (1..WIDTH)
    parameter integer BITS = 1
) (
    input  wire [WIDTH-1:0] state,
    output wire [WIDTH-1:0] next,
    output wire [BITS-1:0]  value
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
endgenerate

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

wire [WIDTH+BITS-1:0] stepped = advance(state);

assign next = stepped[WIDTH+BITS-1:BITS];
assign value = stepped[BITS-1:0];

endmodule

`resetall
