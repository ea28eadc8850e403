/*
 * fptgen RTL library: AXI4-Stream transfers gathered into the beats of a
 * valid/ready stream (the AXI wrapper's s_axis, docs/hardware.md, "AXI
 * wrapper").
 *
 * A beat of BEAT_W bits arrives as K transfers of IN_W bits: beat bits
 * [k*IN_W +: IN_W] in transfer k (bits of the last transfer above the beat
 * are padding, ignored). The beat's element bits are the caller's business.
 *
 * K = 1: wires. out_data = in_data[BEAT_W-1:0], out_valid = in_valid,
 * in_ready = out_ready (the padding bits above BEAT_W are ignored; clk and
 * rst are unused).
 *
 * K > 1: transfers 0 to K - 2 are stored in a register (no reset; slot k
 * written by transfer k), the last goes through to the output with them,
 * so that it is taken exactly when the consumer takes the beat (a beat
 * whose last transfer the host has sent is in the pipeline, as with one
 * transfer per beat). A counter k (reset to 0) says which transfer is
 * next:
 *   last      = k == K - 1
 *   in_ready  = !last || out_ready
 *   out_valid = last && in_valid
 *   out_data  = {in_data, stored transfers K-2 .. 0}[BEAT_W-1:0]
 *   on an edge with in_valid && in_ready: last: k <= 0; otherwise the
 *   transfer is stored in slot k and k <= k + 1.
 * out_data is that concatenation in every cycle (before a slot is first
 * written it holds whatever the register powered up with). With in_valid
 * and out_ready high, a beat is taken every K cycles, its last transfer
 * on the edge that takes the beat: gathering adds K - 1 cycles of latency
 * and no bubble (AxiPlan::latency).
 *
 * Parameters: IN_W, BEAT_W, K >= 1, and the beat must fit its transfers
 * (BEAT_W <= K * IN_W). Illegal values stop elaboration (the failed check
 * instantiates fptgen_param_error_axis_gather_<reason>, which does not
 * exist).
 *
 * Checked cycle by cycle by generator/tests/rtl/axis_gather.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_axis_gather #(
    // Bits of a transfer (TDATA; >= 1)
    parameter integer IN_W = 8,
    // Bits of a beat (>= 1, at most K * IN_W)
    parameter integer BEAT_W = 16,
    // Transfers per beat (>= 1)
    parameter integer K = 2
) (
    input  wire              clk,
    input  wire              rst,

    input  wire [IN_W-1:0]   in_data,
    input  wire              in_valid,
    output wire              in_ready,

    output wire [BEAT_W-1:0] out_data,
    output wire              out_valid,
    input  wire              out_ready
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (IN_W < 1 || BEAT_W < 1 || K < 1) begin : g_error_size_below_1
        fptgen_param_error_axis_gather_size_below_1 error_inst ();
    end
    if (BEAT_W > K * IN_W) begin : g_error_beat_wider_than_transfers
        fptgen_param_error_axis_gather_beat_wider_than_transfers error_inst ();
    end
endgenerate

generate
    if (K == 1) begin : g_direct
        assign out_data = in_data[BEAT_W-1:0];
        assign out_valid = in_valid;
        assign in_ready = out_ready;
        wire unused_clock = ^{clk, rst};
        if (IN_W > BEAT_W) begin : g_pad
            wire unused_pad = ^in_data[IN_W-1:BEAT_W];
        end
    end else begin : g_gather
        reg [(K-1)*IN_W-1:0] gather_reg;
        reg [31:0] gather_count_reg;
        wire gather_last = gather_count_reg == K - 1;
        wire [K*IN_W-1:0] gather_beat = {in_data, gather_reg};
        always @(posedge clk) begin
            if (rst) begin
                gather_count_reg <= 32'd0;
            end else if (in_valid && in_ready) begin
                if (gather_last) begin
                    gather_count_reg <= 32'd0;
                end else begin
                    gather_reg[gather_count_reg*IN_W +: IN_W] <= in_data;
                    gather_count_reg <= gather_count_reg + 32'd1;
                end
            end
        end
        assign in_ready = !gather_last || out_ready;
        assign out_data = gather_beat[BEAT_W-1:0];
        assign out_valid = gather_last && in_valid;
        if (K * IN_W > BEAT_W) begin : g_pad
            wire unused_pad = ^gather_beat[K*IN_W-1:BEAT_W];
        end
    end
endgenerate

endmodule

`resetall
