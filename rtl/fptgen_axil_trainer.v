/*
 * fptgen RTL library: the trainer's registers in the AXI wrapper's
 * AXI4-Lite register map (docs/hardware.md, "AXI wrapper";
 * driver/registers.md): CONTROL, ITERATIONS, STATUS, the event counters
 * and LOADED, and when the weight windows may be served.
 *
 * Register writes come from fptgen_axil_slave's register port: reg_we is
 * high for one cycle with a full-strobe write to an address outside the
 * weight windows, reg_addr its word address, reg_wdata its data. Every
 * register below resets to 0 (rst, synchronous).
 *
 *   ctl_start, ctl_pause, ctl_resume (one-cycle pulses, registered):
 *     <= reg_we && reg_addr == CONTROL && reg_wdata[0], [1], [2]
 *   iterations <= reg_wdata on an edge with reg_we && reg_addr == ITERATIONS
 *   starting (the trainer was started, st_busy is not up yet):
 *     <= 1 on an edge with ctl_start && iterations != 0, else 0 on one
 *     with st_busy, else holds
 *   host_wr_ok = !st_busy && !starting && !ctl_start
 *                (weights may be written now: training neither busy nor
 *                starting)
 *   host_rd_ok = host_wr_ok || (st_paused && !ctl_start)
 *                (weights may be read now: also while paused)
 *   status = {27'd0, host_wr_ok, host_rd_ok, st_done, st_paused, st_busy}
 *   events0, events1, events2: on an edge with rst or ctl_start, all <= 0;
 *     else with mon_valid, the one of kind mon_kind (0, 1, 2; kind 3
 *     counts nowhere) <= itself + 1
 *   loaded <= loaded + 1 on an edge with ld_fire (a sample-load transfer)
 * Counters wrap at 2^32.
 *
 * Parameters: AW from 1 to 32; CONTROL and ITERATIONS two different word
 * addresses below 2^AW. Illegal values stop elaboration (the failed check
 * instantiates fptgen_param_error_axil_trainer_<reason>, which does not
 * exist).
 *
 * Checked cycle by cycle by generator/tests/rtl/axil_trainer.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_axil_trainer #(
    // Bits of a word address (1 to 32)
    parameter integer AW = 11,
    // Word addresses of CONTROL and ITERATIONS (different, below 2^AW)
    parameter integer CONTROL = 16,
    parameter integer ITERATIONS = 18
) (
    input  wire          clk,
    input  wire          rst,

    // Register writes
    input  wire          reg_we,
    input  wire [AW-1:0] reg_addr,
    input  wire [31:0]   reg_wdata,

    // The trainer's control and status
    output reg           ctl_start,
    output reg           ctl_pause,
    output reg           ctl_resume,
    output reg  [31:0]   iterations,
    input  wire          st_busy,
    input  wire          st_paused,
    input  wire          st_done,

    // Events (mon_valid, mon_kind) and sample-load transfers
    input  wire          mon_valid,
    input  wire [1:0]    mon_kind,
    input  wire          ld_fire,

    // Whether the weight windows may be served now, and the read values
    output wire          host_wr_ok,
    output wire          host_rd_ok,
    output wire [31:0]   status,
    output wire [31:0]   events0,
    output wire [31:0]   events1,
    output wire [31:0]   events2,
    output reg  [31:0]   loaded
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (AW < 1 || AW > 32 || CONTROL < 0 || ITERATIONS < 0 || (CONTROL >> AW) != 0 || (ITERATIONS >> AW) != 0
            || CONTROL == ITERATIONS) begin : g_error_addresses
        fptgen_param_error_axil_trainer_addresses_out_of_range error_inst ();
    end
endgenerate

localparam [AW-1:0] CONTROL_C = CONTROL[AW-1:0];
localparam [AW-1:0] ITERATIONS_C = ITERATIONS[AW-1:0];

reg starting_reg;

assign host_wr_ok = !st_busy && !starting_reg && !ctl_start;
assign host_rd_ok = host_wr_ok || (st_paused && !ctl_start);
assign status = {27'd0, host_wr_ok, host_rd_ok, st_done, st_paused, st_busy};

// Control pulses and ITERATIONS
always @(posedge clk) begin
    if (rst) begin
        ctl_start <= 1'b0;
        ctl_pause <= 1'b0;
        ctl_resume <= 1'b0;
        iterations <= 32'd0;
    end else begin
        ctl_start <= reg_we && reg_addr == CONTROL_C && reg_wdata[0];
        ctl_pause <= reg_we && reg_addr == CONTROL_C && reg_wdata[1];
        ctl_resume <= reg_we && reg_addr == CONTROL_C && reg_wdata[2];
        if (reg_we && reg_addr == ITERATIONS_C) begin
            iterations <= reg_wdata;
        end
    end
end

// Weights are read while training is neither busy nor starting (a start
// drains the pipeline before the trainer raises st_busy), or is paused;
// written only while it is neither busy nor starting.
always @(posedge clk) begin
    if (rst) begin
        starting_reg <= 1'b0;
    end else if (ctl_start && iterations != 32'd0) begin
        starting_reg <= 1'b1;
    end else if (st_busy) begin
        starting_reg <= 1'b0;
    end
end

// Event counters (cleared by a start) and the sample-load count
reg [31:0] events_reg [0:2];
always @(posedge clk) begin
    if (rst || ctl_start) begin
        events_reg[0] <= 32'd0;
        events_reg[1] <= 32'd0;
        events_reg[2] <= 32'd0;
    end else if (mon_valid) begin
        events_reg[mon_kind] <= events_reg[mon_kind] + 32'd1;
    end
end
assign events0 = events_reg[0];
assign events1 = events_reg[1];
assign events2 = events_reg[2];

always @(posedge clk) begin
    if (rst) begin
        loaded <= 32'd0;
    end else if (ld_fire) begin
        loaded <= loaded + 32'd1;
    end
end

endmodule

`resetall
