/*
 * fptgen RTL library: the delta lanes of evaluation by difference
 * (docs/training.md, "Evaluation by difference in hardware", step 1).
 *
 * During the trainer's perturbation pass one parameter per cycle passes
 * the update unit with its change D (the weight code difference, a D_W-bit
 * two's complement code) and the input index i it multiplies. LANES lanes,
 * one per buffered training sample s, each add D * x[s][i] (x: the
 * sample's input codes, X_W bits, signed if X_S, all lanes' codes of
 * index i in one word, in_x) into the accumulator dS[s][r] of the row
 * slot r (in_slot; SLOTS accumulators per lane, the rows a group touches).
 * The same lanes compute full dot products (D = every committed weight,
 * one row after the other): in_first restarts a slot's sum with the
 * product instead of adding to it, so no clear cycle is needed.
 *
 * Each product p[s] = sext(D) * ext(x[s]) is exact (D_W + X_W + 1 bits);
 * it is sign-extended or truncated to ACC_W bits and the sums wrap modulo
 * 2^ACC_W (ACC_W must be wide enough for the sums the caller needs, e.g.
 * fptgen_sim's dot_product_bits; then wrapping of partial sums does not
 * matter). An in_slot >= SLOTS writes nothing.
 *
 * Pipeline, one input per cycle, no stall (cycle c ends with edge c + 1):
 * inputs with in_valid high in cycle c
 *   - edge c + 1: the products of every lane are registered, with the
 *     write flag (in_valid, in_slot < SLOTS), in_first and in_slot (one
 *     multiply per register-to-register path);
 *   - edge c + 2: acc[slot][s] <= (first ? 0 : acc[slot][s]) + p[s] in
 *     every lane (one add, after a SLOTS:1 read);
 * and the read port: rd_data is a register loaded on every edge with
 * acc[rd_slot][rd_lane] as it is before that edge's update (0 when
 * rd_slot >= SLOTS or rd_lane >= LANES; the LANES x SLOTS read
 * multiplexer ends in that register). Each lane's SLOTS accumulators are
 * one array with two asynchronous reads (yosys maps it to LUT RAM,
 * RAM32M16). So an input of cycle c is in rd_data from edge c + LAT on,
 * LAT = 3, when rd_slot and rd_lane address it in cycle c + 2 (or later);
 * an input of cycle c + 1 to the same slot is not yet in the value read
 * in cycle c + 2.
 *
 * rst (synchronous) drops what is in flight: an input is accumulated only
 * if rst is low in its cycle c and in cycle c + 1. The accumulators
 * themselves are not reset (a slot's first input has in_first high), nor
 * is rd_data.
 *
 * Parameters: LANES, SLOTS >= 1; X_W 1..32; D_W 2..32; ACC_W 2..64;
 * X_S 0 or 1. Illegal values stop elaboration (the failed check
 * instantiates fptgen_param_error_delta_lanes_<reason>, which does not
 * exist).
 *
 * Checked cycle by cycle against a reference model by
 * generator/tests/rtl/delta_lanes.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_delta_lanes #(
    // Lanes: buffered samples (M), >= 1
    parameter integer LANES = 64,
    // Input code width, 1..32
    parameter integer X_W = 8,
    // 1: input codes signed (two's complement); 0: unsigned
    parameter integer X_S = 1,
    // Change code width (always signed, two's complement), 2..32
    parameter integer D_W = 5,
    // Accumulators per lane (row slots), >= 1
    parameter integer SLOTS = 3,
    // Accumulator width, 2..64; sums wrap modulo 2^ACC_W
    parameter integer ACC_W = 24
) (
    input  wire                     clk,
    input  wire                     rst,
    // One product per lane per cycle: D times lane s's x, into slot in_slot
    // (restarting its sum if in_first)
    input  wire                     in_valid,
    input  wire                     in_first,
    input  wire [clog2(SLOTS)-1:0]  in_slot,
    input  wire [D_W-1:0]           in_d,
    input  wire [LANES*X_W-1:0]     in_x,
    // Registered read of acc[rd_slot][rd_lane]
    input  wire [clog2(SLOTS)-1:0]  rd_slot,
    input  wire [clog2(LANES)-1:0]  rd_lane,
    output wire [ACC_W-1:0]         rd_data
);

`include "fptgen_clog2.vh"

localparam integer SLOT_W = clog2(SLOTS);
localparam integer LANE_W = clog2(LANES);
localparam integer P_W = D_W + X_W + 1;                // the exact product
localparam integer PR_W = (ACC_W < P_W) ? ACC_W : P_W; // its bits kept
localparam integer LAST_SLOT_I = SLOTS - 1;
localparam integer LAST_LANE_I = LANES - 1;
localparam [SLOT_W-1:0] LAST_SLOT = LAST_SLOT_I[SLOT_W-1:0];
localparam [LANE_W-1:0] LAST_LANE = LAST_LANE_I[LANE_W-1:0];

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (LANES < 1 || SLOTS < 1) begin : g_error_size_below_1
        fptgen_param_error_delta_lanes_size_below_1 error_inst ();
    end
    if (X_W < 1 || X_W > 32 || D_W < 2 || D_W > 32 || ACC_W < 2 || ACC_W > 64) begin : g_error_width_out_of_range
        fptgen_param_error_delta_lanes_width_out_of_range error_inst ();
    end
    if (X_S != 0 && X_S != 1) begin : g_error_x_s_not_0_or_1
        fptgen_param_error_delta_lanes_x_s_not_0_or_1 error_inst ();
    end
endgenerate

// Addresses in range (the comparisons only where an address can exceed
// its range)
wire in_slot_ok;
wire rd_slot_ok;
wire rd_lane_ok;

generate
    if (SLOTS == (1 << SLOT_W)) begin : g_slots_full
        assign in_slot_ok = 1'b1;
        assign rd_slot_ok = 1'b1;
    end else begin : g_slots_part
        assign in_slot_ok = !(in_slot > LAST_SLOT);
        assign rd_slot_ok = !(rd_slot > LAST_SLOT);
    end

    if (LANES == (1 << LANE_W)) begin : g_lanes_full
        assign rd_lane_ok = 1'b1;
    end else begin : g_lanes_part
        assign rd_lane_ok = !(rd_lane > LAST_LANE);
    end
endgenerate

// Stage 1: the products' write flag (valid, slot in range, no reset),
// restart flag and slot
reg              we_reg;
reg              first_reg;
reg [SLOT_W-1:0] slot_reg;

always @(posedge clk) begin
    we_reg <= !rst && in_valid && in_slot_ok;
    first_reg <= in_first;
    slot_reg <= in_slot;
end

wire signed [D_W-1:0] d = in_d;
wire                  acc_we = we_reg && !rst;

// Every lane's acc[rd_slot]
wire [ACC_W-1:0] rd_val [0:LANES-1];

generate
    genvar s;
    for (s = 0; s < LANES; s = s + 1) begin : g_lane
        wire [X_W-1:0]        x = in_x[s*X_W +: X_W];
        wire signed [X_W:0]   x_ext = {X_S != 0 ? x[X_W-1] : 1'b0, x};
        wire signed [P_W-1:0] prod = d * x_ext;
        reg  [PR_W-1:0]       p_reg;

        always @(posedge clk) begin
            p_reg <= prod[PR_W-1:0];
        end

        if (PR_W < P_W) begin : g_truncate
            wire unused_prod = ^prod[P_W-1:PR_W];
        end

        // The product as an ACC_W-bit term
        wire [ACC_W-1:0] term;

        if (ACC_W > PR_W) begin : g_extend
            assign term = {{(ACC_W - PR_W){p_reg[PR_W-1]}}, p_reg};
        end else begin : g_fit
            assign term = p_reg;
        end

        // Stage 2: the lane's accumulators
        reg  [ACC_W-1:0] acc_reg [0:SLOTS-1];
        wire [ACC_W-1:0] base = first_reg ? {ACC_W{1'b0}} : acc_reg[slot_reg];

        always @(posedge clk) begin
            if (acc_we) begin
                acc_reg[slot_reg] <= base + term;
            end
        end

        assign rd_val[s] = acc_reg[rd_slot];
    end
endgenerate

// The read port
reg [ACC_W-1:0] rd_reg;

always @(posedge clk) begin
    rd_reg <= (rd_slot_ok && rd_lane_ok) ? rd_val[rd_lane] : {ACC_W{1'b0}};
end

assign rd_data = rd_reg;

endmodule

`resetall
