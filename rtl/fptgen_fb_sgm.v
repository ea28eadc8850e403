/*
 * fptgen RTL library: one hidden layer's static synthetic-gradient module
 * (training: rule: sgm; docs/training.md, "Synthetic-gradient modules";
 * fptgen_sim::train::sgm is the definition).
 *
 * With N = N_OUT outputs of the layer, C classes and W = N + C:
 *   u    = [a[0] << SHIFT_A, .., a[N-1] << SHIFT_A, t[0] << SHIFT_T, .., t[C-1] << SHIFT_T]
 *   h[k] = sat_E_W(R(c[k] + sum_i v[k][i] * u[i], SHIFT_H))       k < C
 * and, for the layer's delta loop, the codes u[o][k] of g[o] = R(sum_k
 * u[o][k] * h[k], SHIFT_G) (the sum and its rounding are fptgen_fb_layer's).
 * v (C x W) and u (N x C) are 8-bit codes in read-only memories
 * (fptgen_param_mem, $readmemh images V_FILE and U_FILE, one code per
 * word); c[k] is the signed 32-bit entry k of C_VALUES.
 *
 * Capture: a_cap loads the layer's output codes into the u ring, t_cap the
 * target codes. Either is illegal while h is computed (from h_start to its
 * last multiply-accumulate step): the ring rotates at every step, and a
 * capture then would stop the rotation (a_cap) or be overwritten in part by
 * it (t_cap), so h would be computed from misplaced codes. fptgen_fb_ctrl
 * captures only before h_start.
 *
 * h: h_start begins C * W multiply-accumulate steps, one per cycle, v read
 * from memory and u[i] from the ring's head (the ring rotates once per
 * step, so it is back in place after each k). h[k] enters the h ring two
 * cycles after its last step: the h ring is complete C * W + 2 cycles
 * after the cycle following h_start (the controller waits that long).
 *
 * Delta loop: d_seed reads u[0][0]; each d_step (the layer's steps, output
 * o = 0, 1, .., classes k = 0 .. C - 1) moves to the next code and
 * rotates the h ring, so that s_u = u[o][k] and s_h = h[k] at every step.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_fb_sgm #(
    // Outputs of the layer and of the network (>= 1)
    parameter integer N_OUT = 3,
    parameter integer C = 2,
    // The layer's output codes: bits, and 1 for two's complement
    parameter integer A_W = 8,
    parameter integer A_S = 1,
    // Target codes: bits, and 1 for two's complement
    parameter integer Y_W = 8,
    parameter integer Y_S = 1,
    // Left shifts aligning the output and target codes in u (>= 0)
    parameter integer SHIFT_A = 0,
    parameter integer SHIFT_T = 0,
    // R's shift for h (0 .. 31)
    parameter integer SHIFT_H = 0,
    // Bits of h, two's complement (the error's width)
    parameter integer E_W = 10,
    // c[k], signed 32 bits each, entry 0 in the least significant bits
    parameter [C*32-1:0] C_VALUES = {C{32'd0}},
    // $readmemh images of v (C * (N_OUT + C) codes, row-major) and u
    // (N_OUT * C codes, row-major), one 8-bit code per line
    parameter V_FILE = "sgm_v.hex",
    parameter U_FILE = "sgm_u.hex"
) (
    input  wire                 clk,
    input  wire                 rst,
    // Capture
    input  wire                 a_cap,
    input  wire [N_OUT*A_W-1:0] a_data,
    input  wire                 t_cap,
    input  wire [C*Y_W-1:0]     t_data,
    // h
    input  wire                 h_start,
    // Delta loop
    input  wire                 d_seed,
    input  wire                 d_step,
    output wire [E_W-1:0]       s_h,
    output wire [7:0]           s_u
);

`include "fptgen_clog2.vh"

localparam integer W = N_OUT + C;
localparam integer UA_W = A_W + SHIFT_A + 1;   // a shifted, signed
localparam integer UT_W = Y_W + SHIFT_T + 1;   // t shifted, signed
localparam integer U_W = UA_W > UT_W ? UA_W : UT_W;
localparam integer P_W = U_W + 8;              // v * u, exact
localparam integer ACC_W0 = (P_W > 32 ? P_W : 32) + clog2(W + 1) + 1;
localparam integer ACC_W = ACC_W0;             // c + sum of W products, exact
localparam integer V_DEPTH = C * W;
localparam integer U_DEPTH = N_OUT * C;
localparam integer VA_W = clog2(V_DEPTH);
localparam integer UD_W = clog2(U_DEPTH);
localparam integer KW = clog2(C);
localparam integer IW = clog2(W);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (N_OUT < 1 || C < 1 || A_W < 1 || Y_W < 1 || SHIFT_A < 0 || SHIFT_T < 0 ||
            SHIFT_H < 0 || SHIFT_H > 31 || E_W < 2) begin : g_error_out_of_range
        fptgen_param_error_fb_sgm_out_of_range error_inst ();
    end
endgenerate

// ---------------------------------------------------------------------------
// The u ring: W signed codes of U_W bits, head (u[0]) at the low bits
reg [W*U_W-1:0] u_reg;
wire [N_OUT*U_W-1:0] a_ext;
wire [C*U_W-1:0]     t_ext;

genvar j;
generate
    for (j = 0; j < N_OUT; j = j + 1) begin : g_a
        wire [A_W-1:0] a = a_data[j*A_W +: A_W];
        wire sa = A_S != 0 && a[A_W-1];
        assign a_ext[j*U_W +: U_W] = {{(U_W - A_W){sa}}, a} << SHIFT_A;
    end
    for (j = 0; j < C; j = j + 1) begin : g_t
        wire [Y_W-1:0] t = t_data[j*Y_W +: Y_W];
        wire st = Y_S != 0 && t[Y_W-1];
        assign t_ext[j*U_W +: U_W] = {{(U_W - Y_W){st}}, t} << SHIFT_T;
    end
endgenerate

reg busy_reg;
wire [W*U_W+U_W-1:0] u_cat = {u_reg[U_W-1:0], u_reg};
wire unused_u_cat = ^u_cat[U_W-1:0];

always @(posedge clk) begin
    if (a_cap) begin
        u_reg[N_OUT*U_W-1:0] <= a_ext;
    end else if (busy_reg) begin
        u_reg <= u_cat[W*U_W+U_W-1:U_W];
    end
    if (t_cap) begin
        u_reg[W*U_W-1:N_OUT*U_W] <= t_ext;
    end
end

// ---------------------------------------------------------------------------
// h: C * W steps, v read from memory the cycle before its product
reg [KW-1:0]   k_reg;
reg [IW-1:0]   i_reg;
reg [VA_W-1:0] va_reg;
wire [31:0] k32 = {{(32 - KW){1'b0}}, k_reg};
wire [31:0] i32 = {{(32 - IW){1'b0}}, i_reg};
wire i_last = i32 == W - 1;
wire k_last = k32 == C - 1;

always @(posedge clk) begin
    if (rst) begin
        busy_reg <= 1'b0;
        k_reg <= {KW{1'b0}};
        i_reg <= {IW{1'b0}};
        va_reg <= {VA_W{1'b0}};
    end else if (h_start) begin
        busy_reg <= 1'b1;
        k_reg <= {KW{1'b0}};
        i_reg <= {IW{1'b0}};
        va_reg <= {VA_W{1'b0}};
    end else if (busy_reg) begin
        va_reg <= va_reg + 1'b1;
        i_reg <= i_last ? {IW{1'b0}} : i_reg + 1'b1;
        if (i_last) begin
            k_reg <= k_last ? {KW{1'b0}} : k_reg + 1'b1;
            if (k_last) begin
                busy_reg <= 1'b0;
            end
        end
    end
end

wire [7:0] v_code;
wire [7:0] unused_v_tr, unused_u_tr;   // the ROMs' trainer ports drive 0

fptgen_param_mem #(
    .DEPTH(V_DEPTH),
    .COLS(1),
    .COL_W(8),
    .WRITABLE(0),
    .STYLE("auto"),
    .INIT_FILE(V_FILE)
) u_v (
    .clk(clk),
    .rd_en(busy_reg),
    .rd_addr(va_reg),
    .rd_data(v_code),
    .tr_en(1'b0),
    .tr_we(1'b0),
    .tr_addr({VA_W{1'b0}}),
    .tr_col(1'b0),
    .tr_wdata(8'd0),
    .tr_rdata(unused_v_tr)
);

// The step's other operands, registered with the memory read.
reg [U_W-1:0] uq_reg;
reg [KW-1:0]  kq_reg;
reg           vq_valid, vq_first, vq_last;

always @(posedge clk) begin
    if (rst) begin
        vq_valid <= 1'b0;
        vq_first <= 1'b0;
        vq_last <= 1'b0;
    end else begin
        vq_valid <= busy_reg;
        vq_first <= busy_reg && i_reg == {IW{1'b0}};
        vq_last <= busy_reg && i_last;
    end
    uq_reg <= u_reg[U_W-1:0];
    kq_reg <= k_reg;
end

reg [31:0] c_k;
integer q;
always @(*) begin
    c_k = 32'd0;
    for (q = 0; q < C; q = q + 1) begin
        if ({{(32 - KW){1'b0}}, kq_reg} == q) begin
            c_k = C_VALUES[q*32 +: 32];
        end
    end
end

wire signed [P_W-1:0] prod = $signed(v_code) * $signed(uq_reg);
wire [ACC_W-1:0] c_ext = {{(ACC_W - 32){c_k[31]}}, c_k};
wire [ACC_W-1:0] p_ext = {{(ACC_W - P_W){prod[P_W-1]}}, prod};
reg  [ACC_W-1:0] acc_reg;
reg              h_push;

always @(posedge clk) begin
    if (rst) begin
        h_push <= 1'b0;
    end else begin
        h_push <= vq_valid && vq_last;
    end
    if (vq_valid) begin
        acc_reg <= (vq_first ? c_ext : acc_reg) + p_ext;
    end
end

wire [E_W-1:0] h_new;

fptgen_round_shift #(.IN_W(ACC_W), .SHIFT(SHIFT_H), .OUT_W(E_W)) u_round_h (.v(acc_reg), .rnd(1'b0), .r(h_new));

// The h ring: C values, head h[0] at the low bits after the C pushes.
reg [C*E_W-1:0] h_reg;
wire [C*E_W+E_W-1:0] h_cat = {h_push ? h_new : h_reg[E_W-1:0], h_reg};
wire unused_h_cat = ^h_cat[E_W-1:0];

always @(posedge clk) begin
    if (h_push || d_step) begin
        h_reg <= h_cat[C*E_W+E_W-1:E_W];
    end
end

assign s_h = h_reg[E_W-1:0];

// ---------------------------------------------------------------------------
// u[o][k] for the delta loop: the next code is read at every step.
reg [UD_W-1:0] ua_reg;
wire [31:0] ua32 = {{(32 - UD_W){1'b0}}, ua_reg};
wire [UD_W-1:0] ua_next = ua32 == U_DEPTH - 1 ? {UD_W{1'b0}} : ua_reg + 1'b1;

always @(posedge clk) begin
    if (rst || d_seed) begin
        ua_reg <= {UD_W{1'b0}};
    end else if (d_step) begin
        ua_reg <= ua_next;
    end
end

fptgen_param_mem #(
    .DEPTH(U_DEPTH),
    .COLS(1),
    .COL_W(8),
    .WRITABLE(0),
    .STYLE("auto"),
    .INIT_FILE(U_FILE)
) u_u (
    .clk(clk),
    .rd_en(d_seed || d_step),
    .rd_addr(d_seed ? {UD_W{1'b0}} : ua_next),
    .rd_data(s_u),
    .tr_en(1'b0),
    .tr_we(1'b0),
    .tr_addr({UD_W{1'b0}}),
    .tr_col(1'b0),
    .tr_wdata(8'd0),
    .tr_rdata(unused_u_tr)
);

wire unused_tr = ^{unused_v_tr, unused_u_tr};

endmodule

`resetall
