/*
 * fptgen RTL library: walks the parameters of one tensor in training order.
 *
 * A trainable tensor is stored as a matrix of ROWS x COLS parameters
 * folded PE x SIMD (docs/hardware.md, "Parameter memories"), and the ES
 * trainer numbers its parameters in C order, row-major (docs/training.md,
 * "Order of the trainable parameters"). This module keeps the memory
 * location of the current one: parameter (r, c) is word
 * (r / PE) * SF + (c / SIMD), column (r % PE) * SIMD + (c % SIMD), with
 * SF = ceil(COLS / SIMD). (A dense layer's weights are its outputs x inputs
 * folded PE x SIMD; its biases outputs x 1, folded PE x 1.) No division or
 * multiplication: every index is a counter. The address and column-select
 * widths are clog2 of the memory's words and columns.
 *
 * step moves to the next parameter (from the last, back to the first); last
 * is high at the last one. save remembers the position and rewind returns
 * to it (the trainer walks a group's parameters once per phase); clear
 * and rst move both to the first parameter. At most one of them per cycle;
 * when several come at once the first of rst or clear, rewind, step, save
 * acts alone.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_param_walk #(
    // Rows of the matrix (>= 1)
    parameter integer ROWS = 4,
    // Parameters per row (>= 1)
    parameter integer COLS = 4,
    // Rows per word and parameters of a row per word (1 <= PE <= ROWS,
    // 1 <= SIMD <= COLS)
    parameter integer PE = 1,
    parameter integer SIMD = 1
) (
    input  wire clk,
    input  wire rst,
    input  wire clear,
    input  wire rewind,
    input  wire step,
    input  wire save,
    output wire [clog2(((ROWS + PE - 1) / PE) * ((COLS + SIMD - 1) / SIMD))-1:0] addr,
    output wire [clog2(PE * SIMD)-1:0] col,
    output wire last
);

`include "fptgen_clog2.vh"

localparam integer NF = (ROWS + PE - 1) / PE;
localparam integer SF = (COLS + SIMD - 1) / SIMD;
localparam integer AW = clog2(NF * SF);   // memory address
localparam integer CW = clog2(PE * SIMD); // column select

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (ROWS < 1 || COLS < 1 || PE < 1 || PE > ROWS || SIMD < 1 || SIMD > COLS) begin : g_error_out_of_range
        fptgen_param_error_param_walk_out_of_range error_inst ();
    end
endgenerate

localparam integer LAST_PE_I = (ROWS - 1) % PE;
localparam integer LAST_S_I = (COLS - 1) % SIMD;
localparam integer LAST_NF_I = NF - 1;
localparam [AW-1:0] LAST_NF = LAST_NF_I[AW-1:0];
localparam integer LAST_SF_I = SF - 1;
localparam [AW-1:0] LAST_SF = LAST_SF_I[AW-1:0];
localparam integer SF_A_I = SF;
localparam [AW-1:0] SF_A = SF_A_I[AW-1:0];
localparam [CW-1:0] LAST_PE = LAST_PE_I[CW-1:0];
localparam integer PE_MAX_I = PE - 1;
localparam [CW-1:0] PE_MAX = PE_MAX_I[CW-1:0];
localparam [CW-1:0] LAST_S = LAST_S_I[CW-1:0];
localparam integer S_MAX_I = SIMD - 1;
localparam [CW-1:0] S_MAX = S_MAX_I[CW-1:0];
localparam integer SIMD_C_I = SIMD;
localparam [CW-1:0] SIMD_C = SIMD_C_I[CW-1:0];
localparam integer ST_W = 3 * AW + 3 * CW;

// Position: lane s, synapse fold sf, PE p, neuron fold nf, and the derived
// row address nf*SF and column base p*SIMD.
reg [CW-1:0] s_reg, p_reg, cbase_reg;
reg [AW-1:0] sf_reg, nf_reg, rbase_reg;
reg [ST_W-1:0] saved_reg;

wire row_end = sf_reg == LAST_SF && s_reg == LAST_S;
wire last_row = nf_reg == LAST_NF && p_reg == LAST_PE;
assign last = row_end && last_row;
assign addr = rbase_reg + sf_reg;
assign col = cbase_reg + s_reg;

always @(posedge clk) begin
    if (rst || clear) begin
        {s_reg, p_reg, cbase_reg, sf_reg, nf_reg, rbase_reg} <= {ST_W{1'b0}};
        saved_reg <= {ST_W{1'b0}};
    end else if (rewind) begin
        {s_reg, p_reg, cbase_reg, sf_reg, nf_reg, rbase_reg} <= saved_reg;
    end else if (step) begin
        if (!row_end) begin
            if (s_reg == S_MAX) begin
                s_reg <= {CW{1'b0}};
                sf_reg <= sf_reg + 1'b1;
            end else begin
                s_reg <= s_reg + 1'b1;
            end
        end else begin
            s_reg <= {CW{1'b0}};
            sf_reg <= {AW{1'b0}};
            if (last_row) begin
                p_reg <= {CW{1'b0}};
                cbase_reg <= {CW{1'b0}};
                nf_reg <= {AW{1'b0}};
                rbase_reg <= {AW{1'b0}};
            end else if (p_reg == PE_MAX) begin
                p_reg <= {CW{1'b0}};
                cbase_reg <= {CW{1'b0}};
                nf_reg <= nf_reg + 1'b1;
                rbase_reg <= rbase_reg + SF_A;
            end else begin
                p_reg <= p_reg + 1'b1;
                cbase_reg <= cbase_reg + SIMD_C;
            end
        end
    end else if (save) begin
        saved_reg <= {s_reg, p_reg, cbase_reg, sf_reg, nf_reg, rbase_reg};
    end
end

endmodule

`resetall
