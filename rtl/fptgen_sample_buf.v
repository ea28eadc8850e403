/*
 * fptgen RTL library: the ES trainer's sample buffer.
 *
 * Holds M training samples: an input vector (X_W bits) and its target
 * vector (T_W bits, raw codes of the output format) each, in two memories
 * (block RAM for large buffers).
 *
 * Load: a valid/ready stream (ld_ready = ld_enable) writes sample after
 * sample at a pointer that wraps after M, so the next M samples replace
 * the buffer.
 *
 * Play: a pulse on play presents samples 0..M-1 on the x stream, one every
 * INTERVAL cycles (the network's initiation interval, so the pipeline
 * never stalls and the schedule is exact): sample 0 is valid the cycle after
 * play, and after sample k is taken, sample k+1 is valid INTERVAL cycles
 * later. t_data shows the target of the next output: target 0 after play,
 * then the next one after each t_next pulse (one per output taken).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_sample_buf #(
    // Samples (>= 1)
    parameter integer M = 64,
    // Bits of an input vector and of a target vector (>= 1)
    parameter integer X_W = 16,
    parameter integer T_W = 16,
    // Cycles between samples presented (>= 1)
    parameter integer INTERVAL = 1
) (
    input  wire           clk,
    input  wire           rst,

    input  wire [X_W-1:0] ld_x,
    input  wire [T_W-1:0] ld_t,
    input  wire           ld_valid,
    output wire           ld_ready,
    input  wire           ld_enable,

    input  wire           play,
    output wire [X_W-1:0] x_data,
    output wire           x_valid,
    input  wire           x_ready,
    output wire [T_W-1:0] t_data,
    input  wire           t_next
);

function integer clog2;
    input integer value;
    integer v;
    begin
        clog2 = 1;
        v = value - 1;
        while (v > 1) begin
            clog2 = clog2 + 1;
            v = v >> 1;
        end
    end
endfunction

localparam integer AW = clog2(M);             // memory address
localparam integer IW = clog2(M + 1);         // sample index 0..M
localparam integer PACE_W = clog2(INTERVAL + 1);
localparam integer M_I_I = M;
localparam [IW-1:0] M_I = M_I_I[IW-1:0];
localparam integer PACE_INIT_I = INTERVAL - 1;
localparam [PACE_W-1:0] PACE_INIT = PACE_INIT_I[PACE_W-1:0];

initial begin
    if (M < 1 || X_W < 1 || T_W < 1 || INTERVAL < 1) begin
        $error("Error: fptgen_sample_buf parameters are out of range (instance %m)");
        $finish;
    end
end

(* ram_style = "block" *)
reg [X_W-1:0] xmem [0:M-1];
(* ram_style = "block" *)
reg [T_W-1:0] tmem [0:M-1];

// ---------------------------------------------------------------------------
// Load
reg [AW-1:0] wptr_reg;
localparam integer LAST_I = M - 1;
localparam [AW-1:0] LAST = LAST_I[AW-1:0];
wire ld_fire = ld_valid && ld_enable;
assign ld_ready = ld_enable;

always @(posedge clk) begin
    if (ld_fire) begin
        xmem[wptr_reg] <= ld_x;
        tmem[wptr_reg] <= ld_t;
    end
end

always @(posedge clk) begin
    if (rst) begin
        wptr_reg <= {AW{1'b0}};
    end else if (ld_fire) begin
        wptr_reg <= wptr_reg == LAST ? {AW{1'b0}} : wptr_reg + 1'b1;
    end
end

// ---------------------------------------------------------------------------
// Play: inputs
reg [IW-1:0]     xidx_reg;
reg [X_W-1:0]    x_reg;
reg              xv_reg;
reg [PACE_W-1:0] pace_reg;
wire x_take = xv_reg && x_ready;
wire x_more = xidx_reg != M_I;
wire x_rd = play || (x_take && x_more);
wire [AW-1:0] x_addr = play ? {AW{1'b0}} : xidx_reg[AW-1:0];

always @(posedge clk) begin
    if (x_rd) begin
        x_reg <= xmem[x_addr];
    end
end

always @(posedge clk) begin
    if (rst) begin
        xidx_reg <= M_I;
        xv_reg <= 1'b0;
        pace_reg <= {PACE_W{1'b0}};
    end else if (play) begin
        xidx_reg <= {{(IW - 1){1'b0}}, 1'b1};
        xv_reg <= 1'b1;
        pace_reg <= {PACE_W{1'b0}};
    end else if (x_take) begin
        if (x_more) begin
            xidx_reg <= xidx_reg + 1'b1;
            xv_reg <= INTERVAL == 1;
            pace_reg <= PACE_INIT;
        end else begin
            xv_reg <= 1'b0;
        end
    end else if (pace_reg != {PACE_W{1'b0}}) begin
        pace_reg <= pace_reg - 1'b1;
        if (pace_reg == {{(PACE_W - 1){1'b0}}, 1'b1}) begin
            xv_reg <= 1'b1;
        end
    end
end

assign x_data = x_reg;
assign x_valid = xv_reg;

// ---------------------------------------------------------------------------
// Play: targets
reg [IW-1:0]  tidx_reg;
reg [T_W-1:0] t_reg;
wire t_more = tidx_reg != M_I;
wire t_rd = play || (t_next && t_more);
wire [AW-1:0] t_addr = play ? {AW{1'b0}} : tidx_reg[AW-1:0];

always @(posedge clk) begin
    if (t_rd) begin
        t_reg <= tmem[t_addr];
    end
end

always @(posedge clk) begin
    if (rst) begin
        tidx_reg <= M_I;
    end else if (play) begin
        tidx_reg <= {{(IW - 1){1'b0}}, 1'b1};
    end else if (t_next && t_more) begin
        tidx_reg <= tidx_reg + 1'b1;
    end
end

assign t_data = t_reg;

endmodule

`resetall
