/*
 * fptgen RTL library: the beats of a valid/ready stream scattered into
 * AXI4-Stream transfers, with TLAST by vector count (the AXI wrapper's
 * m_axis, docs/hardware.md, "AXI wrapper").
 *
 * A beat of BEAT_W bits leaves as K transfers of OUT_W bits: beat bits
 * [k*OUT_W +: OUT_W] in transfer k, zero above the beat. BEATS beats make
 * a vector; TLAST marks the last transfer of every BATCH-th vector.
 *
 * K = 1: wires. out_data = in_data zero-extended, out_valid = in_valid,
 * in_ready = out_ready.
 *
 * K > 1: a shift register of K*OUT_W bits (no reset), a transfer counter k
 * and a busy flag (both reset to 0):
 *   last      = k == K - 1
 *   out_valid = busy, out_data = the register's lowest OUT_W bits
 *   in_ready  = !busy || (last && out_ready)
 *   on an edge with in_valid && in_ready: the register <= the beat
 *   (zero-extended), k <= 0, busy <= 1 (the next beat is loaded in the
 *   cycle the last transfer of the one before leaves: back-to-back beats
 *   at one transfer per cycle); otherwise with busy && out_ready: the
 *   register shifts down by OUT_W bits, and last: busy <= 0, else
 *   k <= k + 1.
 * A beat accepted on an edge has its transfer j valid j + 1 cycles after
 * it (with out_ready high): K cycles of latency in all (AxiPlan::latency).
 *
 * TLAST: a beat counter b and a vector counter v (reset to 0); a transfer
 * that leaves (out_valid && out_ready) and is its beat's last (K = 1:
 * every transfer) advances them: at b == BEATS - 1, b <= 0 and v <= v + 1,
 * wrapping to 0 after BATCH - 1; otherwise b <= b + 1.
 *   out_last = (the transfer is its beat's last) && b == BEATS - 1
 *              && v == BATCH - 1
 *
 * Parameters: BEAT_W, OUT_W, K, BEATS, BATCH >= 1, and the beat must fit
 * its transfers (BEAT_W <= K * OUT_W). Illegal values stop elaboration
 * (the failed check instantiates fptgen_param_error_axis_scatter_<reason>,
 * which does not exist).
 *
 * Checked cycle by cycle by generator/tests/rtl/axis_scatter.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_axis_scatter #(
    // Bits of a beat (>= 1, at most K * OUT_W)
    parameter integer BEAT_W = 16,
    // Bits of a transfer (TDATA; >= 1)
    parameter integer OUT_W = 8,
    // Transfers per beat (>= 1)
    parameter integer K = 2,
    // Beats per vector (>= 1)
    parameter integer BEATS = 1,
    // out_last marks the last transfer of every BATCH-th vector (>= 1)
    parameter integer BATCH = 1
) (
    input  wire              clk,
    input  wire              rst,

    input  wire [BEAT_W-1:0] in_data,
    input  wire              in_valid,
    output wire              in_ready,

    output wire [OUT_W-1:0]  out_data,
    output wire              out_valid,
    input  wire              out_ready,
    output wire              out_last
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (BEAT_W < 1 || OUT_W < 1 || K < 1 || BEATS < 1 || BATCH < 1) begin : g_error_size_below_1
        fptgen_param_error_axis_scatter_size_below_1 error_inst ();
    end
    if (BEAT_W > K * OUT_W) begin : g_error_beat_wider_than_transfers
        fptgen_param_error_axis_scatter_beat_wider_than_transfers error_inst ();
    end
endgenerate

wire out_last_part;   // the transfer on the output is a beat's last

generate
    if (K == 1) begin : g_direct
        if (OUT_W > BEAT_W) begin : g_pad
            assign out_data = {{(OUT_W-BEAT_W){1'b0}}, in_data};
        end else begin : g_exact
            assign out_data = in_data;
        end
        assign out_valid = in_valid;
        assign in_ready = out_ready;
        assign out_last_part = 1'b1;
    end else begin : g_scatter
        wire [K*OUT_W-1:0] scatter_beat;
        if (K * OUT_W > BEAT_W) begin : g_pad
            assign scatter_beat = {{(K*OUT_W-BEAT_W){1'b0}}, in_data};
        end else begin : g_exact
            assign scatter_beat = in_data;
        end
        reg [K*OUT_W-1:0] scatter_reg;
        reg [31:0] scatter_count_reg;
        reg scatter_busy_reg;
        wire scatter_last = scatter_count_reg == K - 1;
        always @(posedge clk) begin
            if (rst) begin
                scatter_count_reg <= 32'd0;
                scatter_busy_reg <= 1'b0;
            end else if (in_valid && in_ready) begin
                // Empty, or its last transfer leaves now: the next beat is
                // loaded in the same cycle (back-to-back vectors at one
                // transfer per cycle).
                scatter_reg <= scatter_beat;
                scatter_count_reg <= 32'd0;
                scatter_busy_reg <= 1'b1;
            end else if (scatter_busy_reg && out_ready) begin
                scatter_reg <= scatter_reg >> OUT_W;
                if (scatter_last) begin
                    scatter_busy_reg <= 1'b0;
                end else begin
                    scatter_count_reg <= scatter_count_reg + 32'd1;
                end
            end
        end
        assign out_data = scatter_reg[OUT_W-1:0];
        assign out_valid = scatter_busy_reg;
        assign in_ready = !scatter_busy_reg || (scatter_last && out_ready);
        assign out_last_part = scatter_last;
    end
endgenerate

reg [31:0] out_beat_reg;     // beat of the current output vector
reg [31:0] out_vector_reg;   // vector of the current batch
wire out_vector_end = out_last_part && out_beat_reg == BEATS - 1;

always @(posedge clk) begin
    if (rst) begin
        out_beat_reg <= 32'd0;
        out_vector_reg <= 32'd0;
    end else if (out_valid && out_ready && out_last_part) begin
        if (out_vector_end) begin
            out_beat_reg <= 32'd0;
            out_vector_reg <= out_vector_reg == BATCH - 1 ? 32'd0 : out_vector_reg + 32'd1;
        end else begin
            out_beat_reg <= out_beat_reg + 32'd1;
        end
    end
end

assign out_last = out_vector_end && out_vector_reg == BATCH - 1;

endmodule

`resetall
