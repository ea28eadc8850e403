/*
 * fptgen RTL library: one trainable conv2d layer's share of a feedback-rule
 * trainer (training: rule: dfa, drtp or sgm; docs/training.md, "Feedback
 * rules" and "Hardware of the feedback rules"; fptgen_sim::train::feedback
 * is the definition). The dense counterpart is fptgen_fb_layer; the ports
 * are the same plus u_acc.
 *
 * The layer is a 3x3 convolution of an H x W x CIN image to OH x OW x F
 * (stride STRIDE, padding PAD_T on top and PAD_L on the left), P = OH * OW
 * output pixels, N_OUT = P * F outputs (pixel-major).
 *
 * Capture (the layer's streams, one pixel per beat): x_cap writes each input
 * pixel (CIN codes of X_W bits) into the input memory, in order; a_cap
 * shifts each output pixel's f' bits (fptgen_fb_fprime) into the f'
 * register, so that f'(o) of output o = 0, 1, ... is in turn at its low
 * end when the deltas are made.
 *
 * Deltas (fptgen_fb_delta, as for a dense layer): N_OUT of them, pushed in
 * output order; each pixel's F deltas are written as one word of the delta
 * memory (address p), and nz[f] records whether filter f has a nonzero
 * delta.
 *
 * Update walk: the controller walks the layer's weights (F rows of 9 * CIN,
 * window order (ky, kx, c)) and then its biases (F rows of 1), u_col and
 * u_row moving to the next column and row; d_zero is !nz[f] of the current
 * row (the row is skipped). For a row that is not skipped, u_acc starts the
 * sum over the P pixels of delta[p][f] * x (the input at window position
 * (ky, kx, c) of pixel p, 0 in the padding; u_bias: 1): one pixel per cycle
 * for P cycles, each read from the two memories, multiplied and added two
 * cycles later. u_step is a register (fptgen_fb_step), reloaded every cycle
 * with R(sum, SHIFT_B if u_bias else SHIFT_W) saturated to S_W bits; with
 * STOCH_W (STOCH_B) the rounding adds the current draw of the weights' (the
 * biases') random bits, which each u_wr of such a row advances. It holds
 * the row's step from P + 4 cycles after u_acc (the controller's ACC = P + 1
 * cycles before its read, then read, wait, write) until the next u_acc.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_fb_conv #(
    // Input image: height, width, channels (>= 1)
    parameter integer H = 4,
    parameter integer W = 4,
    parameter integer CIN = 1,
    // Output image: height and width (>= 1), filters (>= 1)
    parameter integer OH = 4,
    parameter integer OW = 4,
    parameter integer F = 2,
    // Stride (1 or 2), padding on top and on the left (0 .. 2)
    parameter integer STRIDE = 1,
    parameter integer PAD_T = 1,
    parameter integer PAD_L = 1,
    // Outputs of the network: classes of the error (>= 1)
    parameter integer C = 2,
    // Input codes: bits, and 1 for two's complement
    parameter integer X_W = 8,
    parameter integer X_S = 1,
    // Output codes: bits, and 1 for two's complement
    parameter integer A_W = 8,
    parameter integer A_S = 1,
    // f'(o): 0 always (linear); 1 a[o] > A_MIN (relu: A_MIN 0); 2 A_MIN <
    // a[o] < A_MAX (fptgen_fb_fprime)
    parameter integer FP_MODE = 1,
    parameter integer A_MIN = 0,
    parameter integer A_MAX = 0,
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
    // Capture: one pixel per beat
    input  wire                 x_cap,
    input  wire [CIN*X_W-1:0]   x_data,
    input  wire                 a_cap,
    input  wire [F*A_W-1:0]     a_data,
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
    input  wire                 u_acc,
    output wire                 d_zero,
    output wire [S_W-1:0]       u_step
);

`include "fptgen_clog2.vh"

localparam integer P = OH * OW;
localparam integer N_OUT = P * F;
localparam integer XE_W = X_W + 1;            // an input code, signed
localparam integer PR_W = D_W + XE_W;         // delta * x, exact
localparam integer AC_W = PR_W + clog2(P) + 1; // a sum over the pixels, exact
localparam integer XA_W = clog2(H * W);
localparam integer PA_W = clog2(P);
localparam integer FW = clog2(F);
localparam integer CW = clog2(CIN);
localparam integer YW = clog2(OH);
localparam integer XW = clog2(OW);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (H < 1 || W < 1 || CIN < 1 || OH < 1 || OW < 1 || F < 1 || (STRIDE != 1 && STRIDE != 2) ||
            PAD_T < 0 || PAD_T > 2 || PAD_L < 0 || PAD_L > 2 || (OH - 1) * STRIDE + 3 > H + 2 * PAD_T + 1 ||
            (OW - 1) * STRIDE + 3 > W + 2 * PAD_L + 1 || C < 1 || X_W < 1 || A_W < 1 || S_W < 2) begin : g_error_out_of_range
        fptgen_param_error_fb_conv_out_of_range error_inst ();
    end
endgenerate

// ---------------------------------------------------------------------------
// Capture: the input image in memory, f' of every output in a register
reg [CIN*X_W-1:0] x_mem [0:H*W-1];
reg [XA_W-1:0]    xw_addr_reg;

always @(posedge clk) begin
    if (rst) begin
        xw_addr_reg <= {XA_W{1'b0}};
    end else if (x_cap) begin
        xw_addr_reg <= {{(32 - XA_W){1'b0}}, xw_addr_reg} == H * W - 1 ? {XA_W{1'b0}} : xw_addr_reg + 1'b1;
    end
end

always @(posedge clk) begin
    if (x_cap) begin
        x_mem[xw_addr_reg] <= x_data;
    end
end

reg  [N_OUT-1:0] fp_reg;
wire [F-1:0]     fp_beat;

fptgen_fb_fprime #(
    .N(F),
    .A_W(A_W),
    .A_S(A_S),
    .FP_MODE(FP_MODE),
    .A_MIN(A_MIN),
    .A_MAX(A_MAX)
) u_fprime (
    .a_data(a_data),
    .fp(fp_beat)
);

wire [N_OUT+F-1:0] fp_beat_cat = {fp_beat, fp_reg};
wire [N_OUT:0]     fp_rot_cat = {fp_reg[0], fp_reg};
wire unused_fp_cat = ^{fp_beat_cat[F-1:0], fp_rot_cat[0]};

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

always @(posedge clk) begin
    if (a_cap) begin
        fp_reg <= fp_beat_cat[N_OUT+F-1:F];
    end else if (d_push) begin
        fp_reg <= fp_rot_cat[N_OUT:1];
    end
end

// A pixel's deltas, filter 0 at the low bits, written to the delta memory
// with its last filter's.
reg [F*D_W-1:0] d_mem [0:P-1];
reg [F*D_W-1:0] drow_reg;
reg [FW-1:0]    df_reg;      // filter of the next delta
reg [PA_W-1:0]  dp_reg;      // pixel of the next delta
reg [F-1:0]     nz_reg;      // filter f has a nonzero delta
wire [F*D_W+D_W-1:0] drow_cat = {d_value, drow_reg};
wire [F*D_W-1:0] drow_next = drow_cat[F*D_W+D_W-1:D_W];
wire unused_drow = ^drow_cat[D_W-1:0];
wire df_last = {{(32 - FW){1'b0}}, df_reg} == F - 1;
wire [F-1:0] nz_bit = {{(F - 1){1'b0}}, 1'b1} << df_reg;

always @(posedge clk) begin
    if (rst || d_seed) begin
        df_reg <= {FW{1'b0}};
        dp_reg <= {PA_W{1'b0}};
        nz_reg <= {F{1'b0}};
    end else if (d_push) begin
        df_reg <= df_last ? {FW{1'b0}} : df_reg + 1'b1;
        if (df_last) begin
            dp_reg <= dp_reg + 1'b1;
        end
        if (d_value != {D_W{1'b0}}) begin
            nz_reg <= nz_reg | nz_bit;
        end
    end
    if (d_push) begin
        drow_reg <= drow_next;
    end
end

always @(posedge clk) begin
    if (d_push && df_last) begin
        d_mem[dp_reg] <= drow_next;
    end
end

// ---------------------------------------------------------------------------
// Update walk: the current parameter (filter, window position)
reg [FW-1:0] f_reg;
reg [CW-1:0] ci_reg;
reg [1:0]    kx_reg, ky_reg;
wire f_last = {{(32 - FW){1'b0}}, f_reg} == F - 1;
wire ci_last = {{(32 - CW){1'b0}}, ci_reg} == CIN - 1;

always @(posedge clk) begin
    if (rst || d_seed) begin
        f_reg <= {FW{1'b0}};
        ci_reg <= {CW{1'b0}};
        kx_reg <= 2'd0;
        ky_reg <= 2'd0;
    end else begin
        if (u_row) begin
            f_reg <= f_last ? {FW{1'b0}} : f_reg + 1'b1;
        end
        if (u_col) begin
            ci_reg <= ci_last ? {CW{1'b0}} : ci_reg + 1'b1;
            if (ci_last) begin
                kx_reg <= kx_reg == 2'd2 ? 2'd0 : kx_reg + 2'd1;
                if (kx_reg == 2'd2) begin
                    ky_reg <= ky_reg == 2'd2 ? 2'd0 : ky_reg + 2'd1;
                end
            end
        end
    end
end

assign d_zero = !nz_reg[f_reg];

// The sum: u_acc, then one pixel per cycle while run_reg.
reg          run_reg;
reg [PA_W-1:0] p_reg;
reg [YW-1:0] oy_reg;
reg [XW-1:0] ox_reg;
wire p_last = {{(32 - PA_W){1'b0}}, p_reg} == P - 1;
wire ox_last = {{(32 - XW){1'b0}}, ox_reg} == OW - 1;

always @(posedge clk) begin
    if (rst) begin
        run_reg <= 1'b0;
        p_reg <= {PA_W{1'b0}};
        oy_reg <= {YW{1'b0}};
        ox_reg <= {XW{1'b0}};
    end else if (u_acc) begin
        run_reg <= 1'b1;
        p_reg <= {PA_W{1'b0}};
        oy_reg <= {YW{1'b0}};
        ox_reg <= {XW{1'b0}};
    end else if (run_reg) begin
        p_reg <= p_reg + 1'b1;
        ox_reg <= ox_last ? {XW{1'b0}} : ox_reg + 1'b1;
        if (ox_last) begin
            oy_reg <= oy_reg + 1'b1;
        end
        if (p_last) begin
            run_reg <= 1'b0;
        end
    end
end

// The input position read: (oy * STRIDE + ky - PAD_T, ox * STRIDE + kx -
// PAD_L), outside the image (a negative one wraps to a large unsigned
// value) in the padding.
wire [31:0] iy = {{(32 - YW){1'b0}}, oy_reg} * STRIDE + {30'd0, ky_reg} - PAD_T;
wire [31:0] ix = {{(32 - XW){1'b0}}, ox_reg} * STRIDE + {30'd0, kx_reg} - PAD_L;
wire in_image = iy < H && ix < W;
wire [31:0] x_addr32 = iy * W + ix;
wire [XA_W-1:0] x_addr = x_addr32[XA_W-1:0];
wire unused_addr = ^x_addr32[31:XA_W];

reg [CIN*X_W-1:0] xq_reg;
reg [F*D_W-1:0]   dq_reg;
reg               v1_reg;

always @(posedge clk) begin
    xq_reg <= x_mem[x_addr];
    dq_reg <= d_mem[p_reg];
    v1_reg <= run_reg && (u_bias || in_image);
end

// delta[p][f] and x[c] of the words read.
reg [D_W-1:0] d_sel;
reg [X_W-1:0] x_sel;
integer i;
always @(*) begin
    d_sel = {D_W{1'b0}};
    x_sel = {X_W{1'b0}};
    for (i = 0; i < F; i = i + 1) begin
        if ({{(32 - FW){1'b0}}, f_reg} == i) d_sel = dq_reg[i*D_W +: D_W];
    end
    for (i = 0; i < CIN; i = i + 1) begin
        if ({{(32 - CW){1'b0}}, ci_reg} == i) x_sel = xq_reg[i*X_W +: X_W];
    end
end
wire [XE_W-1:0] x_ext = {X_S != 0 ? x_sel[X_W-1] : 1'b0, x_sel};
// The signed product on its own (in a ?: with an unsigned operand Verilog
// would multiply unsigned).
wire signed [PR_W-1:0] prod = $signed(d_sel) * $signed(x_ext);
reg  [PR_W-1:0] prod_reg;
reg  [AC_W-1:0] acc_reg;

always @(posedge clk) begin
    if (!v1_reg) begin
        prod_reg <= {PR_W{1'b0}};
    end else if (u_bias) begin
        prod_reg <= {{XE_W{d_sel[D_W-1]}}, d_sel};
    end else begin
        prod_reg <= prod;
    end
    if (u_acc) begin
        acc_reg <= {AC_W{1'b0}};
    end else begin
        acc_reg <= acc_reg + {{(AC_W - PR_W){prod_reg[PR_W-1]}}, prod_reg};
    end
end

fptgen_fb_step #(
    .IN_W(AC_W),
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
    .v(acc_reg),
    .u_bias(u_bias),
    .u_wr(u_wr),
    .u_step(u_step)
);

endmodule

`resetall
