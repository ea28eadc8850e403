/*
 * fptgen RTL library: concat, two streams joined into one, beat by beat
 * (the channel concatenation that ends a graph's branches, e.g. a residual
 * block's main path and its skip path).
 *
 * Beat n of the output is {beat n of input 1, beat n of input 0}: input 0
 * in the low W0 bits, input 1 in the high W1 bits. For pixel streams
 * (docs/hardware.md, "Streams of images": channel k at bits [k*X_W +: X_W])
 * the output pixel has input 0's channels first, then input 1's: Keras'
 * Concatenate(axis=-1)([in0, in1]). Codes are not changed. Nothing is ever
 * lost, repeated or paired out of order.
 *
 * Structure. One output register stage (W0 + W1 data bits and out_valid);
 * no other state.
 *
 * Handshake. A pair is taken (beat n of both inputs, on the same edge)
 * when both inputs are valid and the output register is free or being
 * emptied:
 *   free      = !out_valid || out_ready
 *   in0_ready = in1_valid && free
 *   in1_ready = in0_valid && free
 *   take      = in0_valid && in0_ready = in1_valid && in1_ready
 *             = in0_valid && in1_valid && free
 *   out_valid <= take || (out_valid && !out_ready)      (a register)
 *   out_data  <= {in1_data, in0_data} on take
 * So each input's ready depends combinationally on the other input's valid
 * (as usual for a join) and on out_ready, never on its own valid; out_valid
 * and out_data are registers. No combinational loop arises when one
 * fptgen_fork feeds both inputs through two branches: the fork's
 * out_valid are registers and its in_ready depends on registers only, and
 * every fptgen stream block's out_valid is a register, so in0_valid and
 * in1_valid never depend on in0_ready or in1_ready in the same cycle.
 *
 * Cycle model. Cycle t is the clock period that ends with rising edge t+1;
 * a pair is taken on cycle t when take is high in it, a beat is output on
 * cycle t when out_valid is high in it (with out_ready high it is taken at
 * the end of that cycle). A pair taken on cycle t is output from cycle t+1
 * on (one edge of latency). With both inputs valid in every cycle and
 * out_ready held high, a pair is taken on every cycle: pair n on cycle
 * t0 + n, output on cycle t0 + n + 1 (one beat per cycle). The register
 * is free on the first cycle after reset.
 *
 * Parameters: W0, W1 >= 1. Illegal values stop elaboration (the failed
 * check instantiates fptgen_param_error_concat_<reason>, which does not
 * exist).
 *
 * Checked bit and cycle exactly by generator/tests/rtl/concat.rs, and in a
 * fptgen_fork -> branches -> concat graph by generator/tests/rtl/fork.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_concat #(
    // Bits per beat of input 0 (>= 1): the output's low bits
    parameter integer W0 = 8,
    // Bits per beat of input 1 (>= 1): the output's high bits
    parameter integer W1 = 8
) (
    input  wire             clk,
    input  wire             rst,

    input  wire [W0-1:0]    in0_data,
    input  wire             in0_valid,
    output wire             in0_ready,

    input  wire [W1-1:0]    in1_data,
    input  wire             in1_valid,
    output wire             in1_ready,

    output wire [W0+W1-1:0] out_data,
    output wire             out_valid,
    input  wire             out_ready
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (W0 < 1) begin : g_error_w0_below_1
        fptgen_param_error_concat_w0_below_1 error_inst ();
    end
    if (W1 < 1) begin : g_error_w1_below_1
        fptgen_param_error_concat_w1_below_1 error_inst ();
    end
endgenerate

reg               out_valid_reg;
reg [W0+W1-1:0]   out_data_reg;

wire free = !out_valid_reg || out_ready;
assign in0_ready = in1_valid && free;
assign in1_ready = in0_valid && free;
wire take = in0_valid && in1_valid && free;

always @(posedge clk) begin
    if (rst) begin
        out_valid_reg <= 1'b0;
    end else begin
        out_valid_reg <= take || (out_valid_reg && !out_ready);
    end
end

always @(posedge clk) begin
    if (take) begin
        out_data_reg <= {in1_data, in0_data};
    end
end

assign out_data = out_data_reg;
assign out_valid = out_valid_reg;

endmodule

`resetall
