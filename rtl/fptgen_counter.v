/*
 * fptgen RTL library: a W-bit up counter with a synchronous clear.
 *
 * count is 0 after a clock edge with rst or clear high; otherwise it grows
 * by 1 on every edge with inc high (modulo 2^W) and holds without it.
 * rst and clear act alike: clear is the user's restart (a new pass), rst
 * the design's reset.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_counter #(
    // Bits of the count (1 or more)
    parameter integer W = 8
) (
    input  wire         clk,
    input  wire         rst,
    input  wire         clear,
    input  wire         inc,
    output wire [W-1:0] count
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (W < 1) begin : g_error_w_below_1
        fptgen_param_error_counter_w_below_1 error_inst ();
    end
endgenerate

reg [W-1:0] count_reg;

always @(posedge clk) begin
    if (rst || clear) begin
        count_reg <= {W{1'b0}};
    end else if (inc) begin
        count_reg <= count_reg + 1'b1;
    end
end

assign count = count_reg;

endmodule

`resetall
