/*
 * fptgen RTL library: skid buffer (a registered valid/ready stage).
 *
 * One beat of W bits per transfer, at full throughput, with registered
 * out_data / out_valid AND a registered in_ready: no combinational path from
 * out_ready (or anything downstream) to in_ready. The generated top level
 * puts one at each layer boundary (docs/hardware.md, "Timing"), so a
 * layer's ready never reaches the layer before it combinationally.
 *
 * The structure is that of alexforencich/verilog-axis axis_register with
 * REG_TYPE = 2 (the "skid buffer"): an output register and a temporary
 * register that catches the beat accepted in the cycle the output stalls.
 * One difference: in_ready resets to 1 (the value it takes anyway one cycle
 * after reset, both registers being empty), so the buffer's state after
 * reset equals its idle state.
 *
 * Cycle model (generator/src/timing/blocks.rs, Skid), with fire =
 * in_valid && in_ready:
 *   in_ready  <= out_ready || (!temp_valid && (!out_valid || !in_valid))
 *   in_ready:  out_valid <= in_valid          if out_ready || !out_valid
 *              temp_valid <= in_valid          otherwise
 *   !in_ready and out_ready: out_valid <= temp_valid, temp_valid <= 0
 * A beat accepted on an edge is valid at the output in the cycle after it
 * (one edge of latency); beats keep their order and none is lost or
 * duplicated under any valid/ready pattern.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_skid #(
    // Bits per beat (1 or more)
    parameter integer W = 8
) (
    input  wire         clk,
    input  wire         rst,

    input  wire [W-1:0] in_data,
    input  wire         in_valid,
    output wire         in_ready,

    output wire [W-1:0] out_data,
    output wire         out_valid,
    input  wire         out_ready
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (W < 1) begin : g_error_w_below_1
        fptgen_param_error_skid_w_below_1 error_inst ();
    end
endgenerate

reg         in_ready_reg;
reg [W-1:0] out_data_reg;
reg         out_valid_reg, out_valid_next;
reg [W-1:0] temp_data_reg;
reg         temp_valid_reg, temp_valid_next;

reg store_in_to_out;
reg store_in_to_temp;
reg store_temp_to_out;

// Ready next cycle if the output is taken now, or the temporary register
// will not be filled on this edge (output empty, or no input).
wire in_ready_early = out_ready || (!temp_valid_reg && (!out_valid_reg || !in_valid));

always @* begin
    out_valid_next = out_valid_reg;
    temp_valid_next = temp_valid_reg;
    store_in_to_out = 1'b0;
    store_in_to_temp = 1'b0;
    store_temp_to_out = 1'b0;
    if (in_ready_reg) begin
        if (out_ready || !out_valid_reg) begin
            // output taken or empty: the input goes to the output
            out_valid_next = in_valid;
            store_in_to_out = 1'b1;
        end else begin
            // output stalled: the input goes to the temporary register
            temp_valid_next = in_valid;
            store_in_to_temp = 1'b1;
        end
    end else if (out_ready) begin
        // not ready (temporary full), output taken: temporary to output
        out_valid_next = temp_valid_reg;
        temp_valid_next = 1'b0;
        store_temp_to_out = 1'b1;
    end
end

always @(posedge clk) begin
    if (rst) begin
        in_ready_reg <= 1'b1;
        out_valid_reg <= 1'b0;
        temp_valid_reg <= 1'b0;
    end else begin
        in_ready_reg <= in_ready_early;
        out_valid_reg <= out_valid_next;
        temp_valid_reg <= temp_valid_next;
    end
end

always @(posedge clk) begin
    if (store_in_to_out) begin
        out_data_reg <= in_data;
    end else if (store_temp_to_out) begin
        out_data_reg <= temp_data_reg;
    end
    if (store_in_to_temp) begin
        temp_data_reg <= in_data;
    end
end

assign in_ready = in_ready_reg;
assign out_data = out_data_reg;
assign out_valid = out_valid_reg;

endmodule

`resetall
