/*
 * fptgen RTL library: loss accumulator of the ES trainer.
 *
 * Adds, for one sample per cycle with add high, the absolute errors
 * |y[o] - t[o]| of its OUTPUTS outputs (raw codes of the output format,
 * Y_W bits, signed if Y_S) to an unsigned 32-bit loss that saturates at
 * 2^32 - 1 (docs/training.md, "One group"). The terms are never negative,
 * so saturating once per sample equals saturating after every term.
 *
 * Pipelined so that no register-to-register path is more than two adders
 * deep: the absolute errors are registered, summed by an adder tree with a
 * register after every second level and after the root (T = ceil(clog2(
 * OUTPUTS) / 2) stages, 0 for one output), and the sum is added to the
 * loss. A sample added in cycle c is in `loss` from edge c + 1 + LAT on,
 * LAT = T + 1 (the trainer waits that long after the last sample:
 * fptgen_es_ctrl's LOSS_WAIT). clear sets the loss to init (0 for a
 * whole evaluation; evaluation by difference starts from the unchanged
 * samples' committed losses) and drops the samples still in the pipeline
 * (and one added in the same cycle); rst zeroes it.
 *
 * Per sample: vec_valid is high in the cycle in which a sample's sum
 * reaches the loss register's input (the loss shows it from the next
 * edge), with that sum in vec_loss (its low 32 bits), so that a caller can
 * keep each sample's loss (fptgen_diff_eval's l).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_loss_acc #(
    // Outputs per sample
    parameter integer OUTPUTS = 10,
    // Output format width and signedness
    parameter integer Y_W = 8,
    parameter integer Y_S = 1
) (
    input  wire                   clk,
    input  wire                   rst,
    input  wire                   clear,
    input  wire [31:0]            init,
    input  wire                   add,
    input  wire [OUTPUTS*Y_W-1:0] y,
    input  wire [OUTPUTS*Y_W-1:0] t,
    output wire [31:0]            loss,
    output wire                   vec_valid,
    output wire [31:0]            vec_loss
);

`include "fptgen_clog2.vh"

localparam integer D_W = Y_W + 2;          // signed difference
localparam integer E_W = Y_W + 1;          // its absolute value
localparam integer LEVELS = (OUTPUTS > 1) ? clog2(OUTPUTS) : 0;
localparam integer T = (LEVELS + 1) / 2;   // registered tree stages
localparam integer SUM_W = E_W + LEVELS;   // the exact sum of OUTPUTS terms
localparam integer L_W = (SUM_W > 32 ? SUM_W : 32) + 1;
localparam integer NODES = tree_offset(OUTPUTS, LEVELS + 1);

// (tree_nodes and tree_offset, the tree's layout: fptgen_clog2.vh)

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (OUTPUTS < 1 || OUTPUTS >= (1 << 21) || Y_W < 1 || Y_W > 64) begin : g_error_out_of_range
        fptgen_param_error_loss_acc_out_of_range error_inst ();
    end
endgenerate

// Which stages hold a sample: bit 0 the absolute errors, bit k tree stage k
reg [T:0] valid_reg;

generate
    if (T == 0) begin : g_valid_one
        always @(posedge clk) begin
            valid_reg <= !(rst || clear) && add;
        end
    end else begin : g_valid_shift
        always @(posedge clk) begin
            if (rst || clear) begin
                valid_reg <= {(T + 1){1'b0}};
            end else begin
                valid_reg <= {valid_reg[T-1:0], add};
            end
        end
    end
endgenerate

// Every level of the tree, level 0 (the absolute errors) first
// (split_var: the levels are separate signals to Verilator, which would
// otherwise see the array feed itself)
wire [SUM_W-1:0] node [0:NODES-1] /* verilator split_var */;

generate
    genvar o, j, i;
    for (o = 0; o < OUTPUTS; o = o + 1) begin : g_out
        wire [Y_W-1:0] ya = y[o*Y_W +: Y_W];
        wire [Y_W-1:0] ta = t[o*Y_W +: Y_W];
        wire signed [D_W-1:0] d = {{2{Y_S != 0 ? ya[Y_W-1] : 1'b0}}, ya} - {{2{Y_S != 0 ? ta[Y_W-1] : 1'b0}}, ta};
        wire [D_W-1:0] mag = d[D_W-1] ? -d : d;
        wire unused_mag = mag[D_W-1];
        reg  [E_W-1:0] err_reg;

        always @(posedge clk) begin
            err_reg <= mag[E_W-1:0];
        end

        wire [SUM_W:0] err_ext = {{(LEVELS + 1){1'b0}}, err_reg};
        wire unused_err_ext = err_ext[SUM_W];

        assign node[o] = err_ext[SUM_W-1:0];
    end

    for (j = 1; j <= LEVELS; j = j + 1) begin : g_level
        for (i = 0; i < tree_nodes(OUTPUTS, j); i = i + 1) begin : g_node
            // This node, node[DST], sums node[SRC] and node[SRC + 1]
            localparam integer SRC = tree_offset(OUTPUTS, j - 1) + 2*i;
            localparam integer DST = tree_offset(OUTPUTS, j) + i;
            wire [SUM_W-1:0] sum;

            if (2*i + 1 < tree_nodes(OUTPUTS, j - 1)) begin : g_pair
                assign sum = node[SRC] + node[SRC + 1];
            end else begin : g_pass
                assign sum = node[SRC];
            end

            if (j % 2 == 0 || j == LEVELS) begin : g_reg
                reg [SUM_W-1:0] sum_reg;

                always @(posedge clk) begin
                    sum_reg <= sum;
                end

                assign node[DST] = sum_reg;
            end else begin : g_comb
                assign node[DST] = sum;
            end
        end
    end
endgenerate

reg  [31:0]    loss_reg;
wire [L_W-1:0] total = {{(L_W - 32){1'b0}}, loss_reg} + {{(L_W - SUM_W){1'b0}}, node[NODES-1]};

always @(posedge clk) begin
    if (rst) begin
        loss_reg <= 32'd0;
    end else if (clear) begin
        loss_reg <= init;
    end else if (valid_reg[T]) begin
        loss_reg <= (total[L_W-1:32] != {(L_W - 32){1'b0}}) ? 32'hFFFF_FFFF : total[31:0];
    end
end

assign loss = loss_reg;

wire [L_W-1:0] vec_ext = {{(L_W - SUM_W){1'b0}}, node[NODES-1]};
wire           unused_vec_ext = ^vec_ext[L_W-1:32];

assign vec_valid = valid_reg[T];
assign vec_loss = vec_ext[31:0];

endmodule

`resetall
