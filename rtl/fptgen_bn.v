/*
 * fptgen RTL library: per-channel scale and shift on a stream (the
 * `batchnorm` layer kind: inference-time batch normalization with its
 * statistics folded into a scale and a shift per channel).
 *
 * Arithmetic, per channel c of each beat, exactly the simulator's
 * (sim/src/layers/batchnorm.rs, docs/numerics.md "batchnorm"): a dense
 * neuron with one input, its bias the shift and its weight the scale,
 * every cast by fptgen_cast as in fptgen_dense:
 *   acc = cast<A>(shift[c])
 *   acc = cast<A>(acc + cast<A>(scale[c] * x))  (exact product cast with
 *         A's quantization and overflow modes; exact sum, then A's overflow
 *         mode)
 *   acc = 0 if RELU and acc < 0 (a signed accumulator), else acc
 *   y   = cast<Y>(acc)
 *
 * Streaming order. A beat holds C values of X_W bits, channel c at bits
 * [c*X_W +: X_W]; its C results go to bits [c*Y_W +: Y_W] of the output
 * beat. A beat is one pixel of an image (docs/hardware.md, "Streams of
 * images", C its channels) or a whole vector of C elements; the block does
 * not count beats, so images of any size stream through it. All channels
 * are computed in parallel, one beat per cycle.
 *
 * Parameters. scale and shift each live in their own fptgen_param_mem
 * (docs/hardware.md, "Parameter memories"), u_smem and u_hmem, of DEPTH 1
 * word of C columns: column c of word 0 holds channel c's code (the
 * [channels] tensor as a 1 x C matrix folded 1 x C). A ROM for a frozen
 * tensor, a RAM with a trainer port (s_tr_*, h_tr_*, as fptgen_dense's
 * w_tr_*, b_tr_*) for a trainable one. Both are read at address 0 on every
 * edge (rd_en held high, also during reset, whose edge thus loads the read
 * registers before the first beat), so their read registers show the
 * contents of the edge before: a parameter written by the trainer on an
 * edge e (tr_en and tr_we high in the cycle ending with e) is used by every
 * beat accepted on edge e+2 or later; a beat accepted on edge e+1 still
 * uses the value before the write. In cycles (below): a write in cycle w
 * is used by the beats accepted on cycles w+2 on, the beat of cycle w+1
 * uses the old value. So a trainer that updates parameters between beats
 * keeps the stream idle in the cycle of its (last) write and the next one.
 * A trainer read (tr_en) in cycle w shows the value before that cycle's
 * write on tr_rdata after edge w+1 (fptgen_param_mem's read-first port).
 *
 * Structure. Two register stages that advance together. Stage 1: per
 * channel the multiply and the product's cast to the accumulator, and the
 * shift's cast, on the memories' read registers and the input beat
 * (registered: 2 x A_W bits per channel). Stage 2: the sum, its cast, relu
 * and the output cast, into the output register (C*Y_W bits). The split
 * keeps the multiply and the adders of the casts on different
 * register-to-register paths (issue 17: the one-stage form was the longest
 * path of examples/all_operators). The parameters are read when a beat is
 * accepted, as before, so the trainer's timing below does not change.
 *
 * Handshake. The stages form a pipeline that advances together (as
 * fptgen_requant_vec's):
 *   en       = !out_valid || out_ready
 *   in_ready = en
 * combinational in out_ready, as fptgen_dense's. On an edge with en high
 * stage 1 takes in_valid and the beat, stage 2 takes stage 1. Nothing is
 * ever lost or repeated. The cycle model is fptgen_generator::timing::
 * blocks::Pipe::new(2).
 *
 * Cycle model. Cycle t is the clock period that ends with rising edge t+1;
 * a beat is accepted on cycle t when in_valid and in_ready are high in it,
 * a result beat is output on cycle t when out_valid is high in it (with
 * out_ready high it is taken at the end of that cycle). With in_valid held
 * high (beats always offered) and out_ready held high, in_ready is always
 * high. Let t0 be the cycle on which a beat is accepted (the first beat
 * after reset: cycle 0). Then
 *   - the k-th beat from it (k = 0: itself) is accepted on cycle t0 + k:
 *     one beat per cycle, images of any size back to back;
 *   - its result is output on cycle t0 + k + 2 (latency 2: valid two edges
 *     after the beat's edge).
 * in_ready is high on the first cycle after reset.
 *
 * Parameters: C >= 1; every width 1..64 (the simulator's formats); every
 * signedness, RELU and WRITABLE flag 0 or 1; A_Q, Y_Q 0..6 and A_O, Y_O
 * 0..3 (fptgen_cast's codes). Fraction counts may be any integers. Illegal
 * combinations stop elaboration (the failed check instantiates
 * fptgen_param_error_bn_<reason>, which does not exist).
 *
 * Checked bit and cycle exactly by generator/tests/rtl/bn.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_bn #(
    // Channels per beat (>= 1): values computed in parallel
    parameter integer C = 4,
    // Input format: width (1..64), fraction bits, signed (1) or unsigned (0)
    parameter integer X_W = 8,
    parameter integer X_F = 4,
    parameter integer X_S = 1,
    // Scale format ("S"): width, fraction bits, signed
    parameter integer S_W = 8,
    parameter integer S_F = 4,
    parameter integer S_S = 1,
    // Shift format ("H", for sHift): width, fraction bits, signed
    parameter integer H_W = 8,
    parameter integer H_F = 4,
    parameter integer H_S = 1,
    // Accumulator format and its quantization / overflow modes
    // (fptgen_cast codes: A_Q 0..6, A_O 0..3)
    parameter integer A_W = 24,
    parameter integer A_F = 8,
    parameter integer A_S = 1,
    parameter integer A_Q = 0,
    parameter integer A_O = 0,
    // Output format and modes
    parameter integer Y_W = 8,
    parameter integer Y_F = 4,
    parameter integer Y_S = 1,
    parameter integer Y_Q = 0,
    parameter integer Y_O = 0,
    // 1: relu on the accumulator; 0: linear
    parameter integer RELU = 0,
    // (Each memory has 1 word of C columns; the trainer ports' address is
    // clog2(1) = 1 bit, always 0, and their column select clog2(C) bits.)
    // 1: scale writable (trainer port s_tr_*); 0: ROM
    parameter integer S_WRITABLE = 0,
    // Vivado ram_style/rom_style of the scale memory: "block",
    // "distributed" or "auto"
    parameter S_STYLE = "auto",
    // Scale memory image ($readmemh, one word of C columns)
    parameter S_FILE = "scale.hex",
    // 1: shift writable (trainer port h_tr_*); 0: ROM
    parameter integer H_WRITABLE = 0,
    // Vivado ram_style/rom_style of the shift memory
    parameter H_STYLE = "auto",
    // Shift memory image
    parameter H_FILE = "shift.hex"
) (
    input  wire                 clk,
    input  wire                 rst,

    input  wire [C*X_W-1:0]     in_data,
    input  wire                 in_valid,
    output wire                 in_ready,

    output wire [C*Y_W-1:0]     out_data,
    output wire                 out_valid,
    input  wire                 out_ready,

    // Trainer ports of the parameter memories (fptgen_param_mem; ignored
    // for read-only tensors): word address (1 word: clog2(1) bits, 0) and
    // column select (the channel, clog2(C) bits)
    input  wire                 s_tr_en,
    input  wire                 s_tr_we,
    input  wire [clog2(1)-1:0]  s_tr_addr,
    input  wire [clog2(C)-1:0]  s_tr_col,
    input  wire [S_W-1:0]       s_tr_wdata,
    output wire [S_W-1:0]       s_tr_rdata,
    input  wire                 h_tr_en,
    input  wire                 h_tr_we,
    input  wire [clog2(1)-1:0]  h_tr_addr,
    input  wire [clog2(C)-1:0]  h_tr_col,
    input  wire [H_W-1:0]       h_tr_wdata,
    output wire [H_W-1:0]       h_tr_rdata
);

`include "fptgen_clog2.vh"

localparam integer P_W = S_W + X_W + 2;     // exact signed product
localparam integer P_F = S_F + X_F;

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
localparam BAD_C = C < 1;
localparam BAD_WIDTH = X_W < 1 || X_W > 64 || S_W < 1 || S_W > 64 || H_W < 1 || H_W > 64
                    || A_W < 1 || A_W > 64 || Y_W < 1 || Y_W > 64;
localparam BAD_FLAG = (X_S != 0 && X_S != 1) || (S_S != 0 && S_S != 1) || (H_S != 0 && H_S != 1)
                   || (A_S != 0 && A_S != 1) || (Y_S != 0 && Y_S != 1) || (RELU != 0 && RELU != 1)
                   || (S_WRITABLE != 0 && S_WRITABLE != 1) || (H_WRITABLE != 0 && H_WRITABLE != 1);
localparam BAD_MODE = A_Q < 0 || A_Q > 6 || Y_Q < 0 || Y_Q > 6 || A_O < 0 || A_O > 3 || Y_O < 0 || Y_O > 3;

generate
    if (BAD_C) begin : g_error_c_below_1
        fptgen_param_error_bn_c_below_1 error_inst ();
    end
    if (BAD_WIDTH) begin : g_error_width_not_1_to_64
        fptgen_param_error_bn_width_not_1_to_64 error_inst ();
    end
    if (BAD_FLAG) begin : g_error_flag_not_0_or_1
        fptgen_param_error_bn_flag_not_0_or_1 error_inst ();
    end
    if (BAD_MODE) begin : g_error_mode_out_of_range
        fptgen_param_error_bn_mode_out_of_range error_inst ();
    end
endgenerate

// ---------------------------------------------------------------------------
// Handshake: two stages that advance together
reg             s1_valid_reg;
reg [C*Y_W-1:0] out_data_reg;
reg             out_valid_reg;

wire en = !out_valid_reg || out_ready;
assign in_ready = en;

// ---------------------------------------------------------------------------
// Parameter memories, read at address 0 on every edge
wire [C*S_W-1:0] s_rd;
wire [C*H_W-1:0] h_rd;

generate
    // Trainer ports of frozen tensors are tied off by the layer wrapper.
    fptgen_param_mem #(
        .DEPTH(1), .COLS(C), .COL_W(S_W),
        .WRITABLE(S_WRITABLE), .STYLE(S_STYLE), .INIT_FILE(S_FILE)
    ) u_smem (
        .clk(clk), .rd_en(1'b1), .rd_addr(1'b0), .rd_data(s_rd),
        .tr_en(s_tr_en), .tr_we(s_tr_we), .tr_addr(s_tr_addr), .tr_col(s_tr_col),
        .tr_wdata(s_tr_wdata), .tr_rdata(s_tr_rdata)
    );

    fptgen_param_mem #(
        .DEPTH(1), .COLS(C), .COL_W(H_W),
        .WRITABLE(H_WRITABLE), .STYLE(H_STYLE), .INIT_FILE(H_FILE)
    ) u_hmem (
        .clk(clk), .rd_en(1'b1), .rd_addr(1'b0), .rd_data(h_rd),
        .tr_en(h_tr_en), .tr_we(h_tr_we), .tr_addr(h_tr_addr), .tr_col(h_tr_col),
        .tr_wdata(h_tr_wdata), .tr_rdata(h_tr_rdata)
    );
endgenerate

// ---------------------------------------------------------------------------
// Channel datapaths. Stage 1: product and its cast, the shift's cast.
// Stage 2: sum and its cast, relu, output cast.
wire [C*Y_W-1:0] y;

generate
    genvar c;
    for (c = 0; c < C; c = c + 1) begin : g_ch
        wire [S_W-1:0] s = s_rd[c*S_W +: S_W];
        wire [H_W-1:0] h = h_rd[c*H_W +: H_W];
        wire [X_W-1:0] x = in_data[c*X_W +: X_W];
        wire signed [S_W:0] s_ext = {S_S != 0 ? s[S_W-1] : 1'b0, s};
        wire signed [X_W:0] x_ext = {X_S != 0 ? x[X_W-1] : 1'b0, x};
        wire signed [P_W-1:0] prod = s_ext * x_ext;
        wire [A_W-1:0] shift_acc;
        wire [A_W-1:0] prod_acc;
        reg  [A_W-1:0] shift_acc_reg;
        reg  [A_W-1:0] prod_acc_reg;
        wire [A_W+1:0] sum;
        wire [A_W-1:0] acc;

        fptgen_cast #(
            .IN_W(H_W + 1), .IN_F(H_F), .OUT_W(A_W), .OUT_F(A_F), .OUT_SIGNED(A_S), .QUANT(A_Q), .OVF(A_O)
        ) u_shift_cast (
            .in({H_S != 0 ? h[H_W-1] : 1'b0, h}),
            .out(shift_acc)
        );

        fptgen_cast #(
            .IN_W(P_W), .IN_F(P_F), .OUT_W(A_W), .OUT_F(A_F), .OUT_SIGNED(A_S), .QUANT(A_Q), .OVF(A_O)
        ) u_prod_cast (
            .in(prod),
            .out(prod_acc)
        );

        // Stage 1 registers (no reset: stage 1's valid says when they hold a beat)
        always @(posedge clk) begin
            if (en) begin
                shift_acc_reg <= shift_acc;
                prod_acc_reg <= prod_acc;
            end
        end

        assign sum = {{2{A_S != 0 ? shift_acc_reg[A_W-1] : 1'b0}}, shift_acc_reg}
                   + {{2{A_S != 0 ? prod_acc_reg[A_W-1] : 1'b0}}, prod_acc_reg};

        fptgen_cast #(
            .IN_W(A_W + 2), .IN_F(A_F), .OUT_W(A_W), .OUT_F(A_F), .OUT_SIGNED(A_S), .QUANT(A_Q), .OVF(A_O)
        ) u_sum_cast (
            .in(sum),
            .out(acc)
        );

        wire [A_W-1:0] act = (RELU != 0 && A_S != 0 && acc[A_W-1]) ? {A_W{1'b0}} : acc;

        fptgen_cast #(
            .IN_W(A_W + 1), .IN_F(A_F), .OUT_W(Y_W), .OUT_F(Y_F), .OUT_SIGNED(Y_S), .QUANT(Y_Q), .OVF(Y_O)
        ) u_out_cast (
            .in({A_S != 0 ? act[A_W-1] : 1'b0, act}),
            .out(y[c*Y_W +: Y_W])
        );
    end
endgenerate

// ---------------------------------------------------------------------------
// Stage 2: the output register
always @(posedge clk) begin
    if (en) begin
        out_data_reg <= y;
    end
end

always @(posedge clk) begin
    if (rst) begin
        s1_valid_reg <= 1'b0;
        out_valid_reg <= 1'b0;
    end else if (en) begin
        s1_valid_reg <= in_valid;
        out_valid_reg <= s1_valid_reg;
    end
end

assign out_data = out_data_reg;
assign out_valid = out_valid_reg;

endmodule

`resetall
