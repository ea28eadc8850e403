/*
 * fptgen RTL library: one whole vector -> a stream of beats (the inverse of
 * fptgen_flatten). The ES trainer feeds a network whose input is an image
 * (one pixel per beat) from its sample buffer, which holds whole vectors,
 * through this block.
 *
 * Beat k of a vector is bits [k*BEAT_W +: BEAT_W] of in_data (for an image
 * in C order: pixel k, its channels together; docs/hardware.md, "Streams of
 * images").
 *
 * Structure. A shift register of BEATS*BEAT_W bits: accepting a vector
 * loads it, each beat taken shifts it down by one beat, out_data is its
 * lowest beat (no wide multiplexer). A beat counter and a busy flag
 * (out_valid).
 *
 * Handshake. out_valid = busy. in_ready = !busy || (last && out_ready),
 * where last = the counter is at BEATS-1: the next vector is accepted on
 * the edge that takes the last beat of the current one, so vectors follow
 * each other without a gap. Nothing is lost or repeated.
 *
 * Cycle model. With in_valid and out_ready high, a vector accepted on cycle
 * t has its beat k valid on cycle t + 1 + k, and the next vector is
 * accepted on cycle t + BEATS: one vector every BEATS cycles. in_ready is
 * high on the first cycle after reset. (fptgen_generator::timing::blocks::
 * Serialize models this handshake.)
 *
 * Parameters: BEATS, BEAT_W >= 1. Illegal values stop elaboration (the
 * failed check instantiates fptgen_param_error_serialize_<reason>, which
 * does not exist).
 *
 * Checked bit and cycle exactly by generator/tests/rtl/serialize.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_serialize #(
    // Beats per vector (>= 1)
    parameter integer BEATS = 4,
    // Bits per beat (>= 1)
    parameter integer BEAT_W = 8
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [BEATS*BEAT_W-1:0] in_data,
    input  wire                    in_valid,
    output wire                    in_ready,

    output wire [BEAT_W-1:0]       out_data,
    output wire                    out_valid,
    input  wire                    out_ready
);

`include "fptgen_clog2.vh"

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (BEATS < 1 || BEAT_W < 1) begin : g_error_size_below_1
        fptgen_param_error_serialize_size_below_1 error_inst ();
    end
endgenerate

localparam integer KW = clog2(BEATS);
localparam integer LAST_I = BEATS - 1;
localparam [KW-1:0] LAST = LAST_I[KW-1:0];

reg [BEATS*BEAT_W-1:0] shift_reg;
reg [KW-1:0]           k_reg;
reg                    busy_reg;

wire last = k_reg == LAST;
wire take = busy_reg && out_ready;
assign in_ready = !busy_reg || (last && out_ready);
wire accept = in_valid && in_ready;

always @(posedge clk) begin
    if (rst) begin
        busy_reg <= 1'b0;
        k_reg <= {KW{1'b0}};
    end else begin
        if (accept) begin
            busy_reg <= 1'b1;
            k_reg <= {KW{1'b0}};
        end else if (take) begin
            busy_reg <= !last;
            k_reg <= last ? {KW{1'b0}} : k_reg + 1'b1;
        end
    end
end

generate
    if (BEATS > 1) begin : g_shift
        always @(posedge clk) begin
            if (accept) begin
                shift_reg <= in_data;
            end else if (take) begin
                shift_reg <= {{BEAT_W{1'b0}}, shift_reg[BEATS*BEAT_W-1:BEAT_W]};
            end
        end
    end else begin : g_single
        always @(posedge clk) begin
            if (accept) begin
                shift_reg <= in_data;
            end
        end
    end
endgenerate

assign out_data = shift_reg[BEAT_W-1:0];
assign out_valid = busy_reg;

endmodule

`resetall
