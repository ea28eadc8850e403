/*
 * fptgen RTL library: one trainable dense or dense_int8 layer's share of a feedback-rule
 * trainer (training: rule: dfa, drtp or sgm; docs/training.md, "Feedback
 * rules"; fptgen_sim::train::feedback is the definition).
 *
 * Capture: x_cap loads the layer's input vector (N_IN codes of X_W bits,
 * element i at bits [i*X_W +: X_W]) and a_cap its output vector, of which
 * only f'(o) is kept: 1 (FP_MODE 0, linear), a[o] > A_MIN (FP_MODE 1: relu,
 * A_MIN 0 for dense, act_min for dense_int8) or A_MIN < a[o] < A_MAX
 * (FP_MODE 2: dense_int8's relu6), a[o] read as an A_S-signed code.
 *
 * Deltas: after d_seed (which reloads the feedback LFSR with SEED), the
 * controller gives N_OUT * C steps (d_step), output o = 0, 1, ... in turn
 * and for each its classes k = 0 .. C - 1 (d_k, d_last at k = C - 1), with
 * the error e[k] (d_e) and whether k is the target class (d_kstar). Each
 * step adds one term of g[o]:
 *   MODE 0 (the network's output layer)  e[o]: the term of k = o;
 *   MODE 1 (dfa, a hidden layer)          B[o][k] * e[k];
 *   MODE 2 (drtp, a hidden layer)         -B[o][k] at k = k*;
 *   MODE 3 (sgm, a hidden layer)          u[o][k] * h[k] (s_u, s_h: the
 *                                         layer's fptgen_fb_sgm), and the
 *                                         sum is R(g[o], SHIFT_G);
 * B[o][k] = +1 when the LFSR's next output bit is 1, else -1, one bit per
 * step in modes 1 and 2 (the order o, k of feedback_matrix). At d_last,
 * delta[o] = f'(o) ? g[o] : 0 (mode 3: f'(o) ? R(g[o], SHIFT_G) : 0) is shown on d_value and pushed into the
 * layer's delta ring (d_push).
 *
 * Update walk: the ring's head is delta[o] of the current row (d_zero when
 * it is 0); u_row rotates it to the next row, u_col the input ring to the
 * next column. Every cycle the product of the heads is registered, and the
 * cycle after that its power-of-two step R(delta * (x - X_OFF), SHIFT_W) (weights,
 * u_bias = 0) or R(delta, SHIFT_B) (biases) saturated to S_W bits
 * (fptgen_fb_step; stochastically with STOCH_W/STOCH_B): u_step is valid two cycles after the heads and
 * u_bias it is computed from, which the controller holds that long.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_fb_layer #(
    // Inputs and outputs of the layer (>= 1)
    parameter integer N_IN = 4,
    parameter integer N_OUT = 3,
    // Outputs of the network: classes of the error (>= 1)
    parameter integer C = 2,
    // Input codes: bits, and 1 for two's complement
    parameter integer X_W = 8,
    parameter integer X_S = 1,
    // Output codes: bits, and 1 for two's complement
    parameter integer A_W = 8,
    parameter integer A_S = 1,
    // f'(o): 0 always (linear); 1 a[o] > A_MIN (relu); 2 A_MIN < a[o] < A_MAX
    // (relu6); A_MIN, A_MAX signed output codes (A_MIN < A_MAX in mode 2)
    parameter integer FP_MODE = 1,
    parameter integer A_MIN = 0,
    parameter integer A_MAX = 0,
    // Subtracted from every input code before the weight step's product:
    // dense_int8's input zero point, 0 for dense (nonzero: X_W <= 30 and
    // -2^X_W <= X_OFF < 2^X_W; the product's input grows by one bit)
    parameter integer X_OFF = 0,
    // 0: the output layer; 1: dfa; 2: drtp; 3: sgm
    parameter integer MODE = 1,
    // Feedback LFSR seed (32 bits, nonzero)
    parameter [31:0] SEED = 32'h1,
    // Bits of an error value and of a delta, two's complement
    parameter integer E_W = 9,
    parameter integer D_W = 13,
    // Shifts of the weight and bias steps (signed)
    parameter integer SHIFT_W = 0,
    parameter integer SHIFT_B = 0,
    // MODE 3: R's shift of g (0 .. 31)
    parameter integer SHIFT_G = 0,
    // Bits of the saturated step (two's complement, >= 2)
    parameter integer S_W = 10,
    // 1: the weights' (biases') steps round stochastically, from a rounding
    // LFSR reset to SEED_W (SEED_B) (fptgen_fb_step)
    parameter integer STOCH_W = 0,
    parameter integer STOCH_B = 0,
    parameter [31:0] SEED_W = 32'h1,
    parameter [31:0] SEED_B = 32'h1
) (
    input  wire                 clk,
    input  wire                 rst,
    // Capture
    input  wire                 x_cap,
    input  wire [N_IN*X_W-1:0]  x_data,
    input  wire                 a_cap,
    input  wire [N_OUT*A_W-1:0] a_data,
    // Deltas
    input  wire                 d_seed,
    input  wire                 d_step,
    input  wire [clog2(C)-1:0]  d_k,
    input  wire                 d_last,
    input  wire                 d_kstar,
    input  wire [E_W-1:0]       d_e,
    // MODE 3: h[k] and u[o][k] of the step (else unused)
    input  wire [E_W-1:0]       s_h,
    input  wire [7:0]           s_u,
    output wire [D_W-1:0]       d_value,
    // Update walk
    input  wire                 u_row,
    input  wire                 u_col,
    input  wire                 u_bias,
    // A parameter of this layer is written (its rounding LFSR moves on)
    input  wire                 u_wr,
    output wire                 d_zero,
    output wire [S_W-1:0]       u_step
);

`include "fptgen_clog2.vh"

localparam integer XE_W = X_W + 1 + (X_OFF != 0 ? 1 : 0);   // x - X_OFF, signed
localparam integer PR_W = D_W + XE_W;         // delta * x, exact

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (N_IN < 1 || N_OUT < 1 || C < 1 || X_W < 1 || A_W < 1 || MODE < 0 || MODE > 3 ||
            (MODE == 0 && N_OUT != C) || E_W < 2 || D_W < E_W || S_W < 2 ||
            (MODE == 3 && D_W < E_W + 8 + clog2(C)) || SHIFT_G < 0 || SHIFT_G > 31 ||
            SEED == 32'h0) begin : g_error_out_of_range
        fptgen_param_error_fb_layer_out_of_range error_inst ();
    end
    // The input offset (dense_int8); f' is checked by fptgen_fb_fprime.
    if (X_OFF != 0 && (X_W > 30 || X_OFF < -(1 << X_W) || X_OFF > (1 << X_W) - 1)) begin : g_error_offset_out_of_range
        fptgen_param_error_fb_layer_offset_out_of_range error_inst ();
    end
endgenerate

// ---------------------------------------------------------------------------
// Capture: the input ring (head at the low bits) and f' of every output
reg [N_IN*X_W-1:0] x_reg;
reg [N_OUT-1:0]    fp_reg;    // f'(o), rotated with the deltas as they are made
wire [N_OUT-1:0]   fp_cap;

fptgen_fb_fprime #(
    .N(N_OUT),
    .A_W(A_W),
    .A_S(A_S),
    .FP_MODE(FP_MODE),
    .A_MIN(A_MIN),
    .A_MAX(A_MAX)
) u_fprime (
    .a_data(a_data),
    .fp(fp_cap)
);

// The rings rotate right by one element: the head moves to the top.
wire [N_IN*X_W+X_W-1:0] x_cat = {x_reg[X_W-1:0], x_reg};
wire unused_x_cat = ^x_cat[X_W-1:0];

always @(posedge clk) begin
    if (x_cap) begin
        x_reg <= x_data;
    end else if (u_col) begin
        x_reg <= x_cat[N_IN*X_W+X_W-1:X_W];
    end
end

// ---------------------------------------------------------------------------
// Deltas
wire d_push;

fptgen_fb_delta #(
    .N_OUT(N_OUT),
    .C(C),
    .MODE(MODE),
    .SEED(SEED),
    .E_W(E_W),
    .D_W(D_W),
    .SHIFT_G(SHIFT_G)
) u_delta (
    .clk(clk),
    .rst(rst),
    .d_seed(d_seed),
    .d_step(d_step),
    .d_k(d_k),
    .d_last(d_last),
    .d_kstar(d_kstar),
    .d_e(d_e),
    .s_h(s_h),
    .s_u(s_u),
    .fp(fp_reg[0]),
    .d_value(d_value),
    .d_push(d_push)
);

reg [N_OUT*D_W-1:0] d_reg;   // the delta ring, head delta[0] at the low bits
wire [D_W-1:0] d_head = d_reg[D_W-1:0];

// Push inserts the new delta at the top, a row rotation the head: the
// ring shifts right by one delta either way.
wire [D_W-1:0] d_in = d_push ? d_value : d_head;
wire [N_OUT*D_W+D_W-1:0] d_cat = {d_in, d_reg};
wire [N_OUT:0] fp_cat = {fp_reg[0], fp_reg};
wire unused_cat = ^{d_cat[D_W-1:0], fp_cat[0]};

always @(posedge clk) begin
    if (a_cap) begin
        fp_reg <= fp_cap;
    end else if (d_push) begin
        fp_reg <= fp_cat[N_OUT:1];
    end
    if (d_push || u_row) begin
        d_reg <= d_cat[N_OUT*D_W+D_W-1:D_W];
    end
end

assign d_zero = d_head == {D_W{1'b0}};

// ---------------------------------------------------------------------------
// Steps: delta * x registered, then rounded and saturated
wire [X_W-1:0]  x_head = x_reg[X_W-1:0];
wire [XE_W-1:0] x_ext;   // x - X_OFF, exact

generate
    if (X_OFF == 0) begin : g_x_plain
        assign x_ext = {X_S != 0 ? x_head[X_W-1] : 1'b0, x_head};
    end else begin : g_x_off
        localparam [31:0] OFF32 = X_OFF;
        wire [XE_W-1:0] x_wide = {{2{X_S != 0 && x_head[X_W-1]}}, x_head};
        assign x_ext = x_wide - OFF32[XE_W-1:0];
    end
endgenerate
reg  [PR_W-1:0] prod_reg;

// The signed product on its own (in a ?: with an unsigned operand Verilog
// would multiply unsigned).
wire signed [PR_W-1:0] prod = $signed(d_head) * $signed(x_ext);

always @(posedge clk) begin
    prod_reg <= u_bias ? {{XE_W{d_head[D_W-1]}}, d_head} : prod;
end

fptgen_fb_step #(
    .IN_W(PR_W),
    .SHIFT_W(SHIFT_W),
    .SHIFT_B(SHIFT_B),
    .S_W(S_W),
    .STOCH_W(STOCH_W),
    .STOCH_B(STOCH_B),
    .SEED_W(SEED_W),
    .SEED_B(SEED_B)
) u_step_unit (
    .clk(clk),
    .rst(rst),
    .v(prod_reg),
    .u_bias(u_bias),
    .u_wr(u_wr),
    .u_step(u_step)
);

endmodule

`resetall
