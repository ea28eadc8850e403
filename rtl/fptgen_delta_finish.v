/*
 * fptgen RTL library: finishing a dense neuron from its exact dot product,
 * for evaluation by difference (docs/training.md, "Evaluation by
 * difference in hardware", step 2).
 *
 * A dense layer whose accumulation is exact (fptgen_sim's
 * exact_accumulation: every product is cast to the accumulator by a left
 * shift, and either the accumulator wraps or no partial sum can leave its
 * range) computes each output as
 *
 *     y = cast<Y>(act(bias_acc + (s << SHIFT)))
 *
 * where s = sum_i w[i] * x[i] is the exact integer dot product of the
 * weight and input codes, SHIFT = A_F - W_F - X_F, bias_acc is the bias
 * code cast to the accumulator, the addition is modulo 2^A_W (where the
 * accumulator does not wrap, the bounds make that the exact sum), act is
 * relu (negative accumulators to 0) or the identity, and the cast is the
 * output format's quantization and overflow (fptgen_cast). That is what
 * fptgen_dense's adder tree (TREE = 1) computes, and what the simulator's
 * definition gives (its in-order saturating sum equals the exact one).
 *
 * Here the dot product comes in two parts, in_s + in_ds (the committed
 * sum of a buffered sample and a member's change, or any split), added
 * modulo 2^S_W: S_W must be wide enough for the whole dot product
 * (fptgen_sim's dot_product_bits), the parts themselves may wrap.
 *
 * Pipeline, one neuron per cycle, no stall: inputs with in_valid in cycle
 * c are at the output from edge c + LAT on, LAT = 3 (edge c + 1: the sum of
 * the parts and the bias cast; edge c + 2: the accumulator; edge c + 3:
 * relu and the output cast), with their in_tag (any label the caller
 * needs back, e.g. sample and row). rst drops what is in flight.
 *
 * Checked bit for bit against the simulator's dense layer by
 * generator/tests/rtl/delta_finish.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_delta_finish #(
    // Width of the dot product and of each of its two parts (two's
    // complement), 2..64
    parameter integer S_W = 24,
    // Left shift from the product's fraction bits to the accumulator's,
    // A_F - W_F - X_F, 0..63
    parameter integer SHIFT = 0,
    // Bias format: width, fraction bits, signed (1) or unsigned (0)
    parameter integer B_W = 8,
    parameter integer B_F = 4,
    parameter integer B_S = 1,
    // Accumulator format and its quantization / overflow modes (fptgen_cast
    // codes; they apply to the bias cast)
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
    parameter integer RELU = 1,
    // Width of the tag carried alongside, >= 1
    parameter integer TAG_W = 1
) (
    input  wire             clk,
    input  wire             rst,
    input  wire             in_valid,
    input  wire [S_W-1:0]   in_s,
    input  wire [S_W-1:0]   in_ds,
    input  wire [B_W-1:0]   in_b,
    input  wire [TAG_W-1:0] in_tag,
    output wire             out_valid,
    output wire [Y_W-1:0]   out_y,
    output wire [TAG_W-1:0] out_tag
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (S_W < 2 || S_W > 64) begin : g_error_s_w_not_2_to_64
        fptgen_param_error_delta_finish_s_w_not_2_to_64 error_inst ();
    end
    if (SHIFT < 0 || SHIFT > 63) begin : g_error_shift_not_0_to_63
        fptgen_param_error_delta_finish_shift_not_0_to_63 error_inst ();
    end
    if (A_W < 1 || A_W > 64 || B_W < 1 || B_W > 64 || TAG_W < 1) begin : g_error_width_out_of_range
        fptgen_param_error_delta_finish_width_out_of_range error_inst ();
    end
    if (RELU != 0 && RELU != 1) begin : g_error_relu_not_0_or_1
        fptgen_param_error_delta_finish_relu_not_0_or_1 error_inst ();
    end
endgenerate

// The shifted dot product: sign-extended to A_W + SHIFT + S_W bits so that
// the shift never loses a bit the accumulator keeps
localparam integer X_W = A_W + SHIFT + S_W;

reg  [2:0]       valid_reg;
reg  [TAG_W-1:0] tag1_reg, tag2_reg, tag3_reg;

// Stage 1: the dot product, and the bias in the accumulator's format
reg  [S_W-1:0]   s_reg;
reg  [A_W-1:0]   bias_acc_reg;
wire [A_W-1:0]   bias_acc;

fptgen_cast #(
    .IN_W(B_W + 1), .IN_F(B_F), .OUT_W(A_W), .OUT_F(A_F), .OUT_SIGNED(A_S), .QUANT(A_Q), .OVF(A_O)
) u_bias_cast (
    .in({B_S != 0 ? in_b[B_W-1] : 1'b0, in_b}),
    .out(bias_acc)
);

// Stage 2: the accumulator, modulo 2^A_W
wire [X_W-1:0]   s_x = {{(A_W + SHIFT){s_reg[S_W-1]}}, s_reg};
wire [X_W-1:0]   s_sh = s_x << SHIFT;
wire             unused_s_sh = ^s_sh[X_W-1:A_W];
reg  [A_W-1:0]   acc_reg;

// Stage 3: relu and the output cast
wire [A_W-1:0]   act = (RELU != 0 && A_S != 0 && acc_reg[A_W-1]) ? {A_W{1'b0}} : acc_reg;
wire [Y_W-1:0]   y;
reg  [Y_W-1:0]   y_reg;

fptgen_cast #(
    .IN_W(A_W + 1), .IN_F(A_F), .OUT_W(Y_W), .OUT_F(Y_F), .OUT_SIGNED(Y_S), .QUANT(Y_Q), .OVF(Y_O)
) u_out_cast (
    .in({A_S != 0 ? act[A_W-1] : 1'b0, act}),
    .out(y)
);

always @(posedge clk) begin
    s_reg <= in_s + in_ds;
    bias_acc_reg <= bias_acc;
    tag1_reg <= in_tag;
    acc_reg <= bias_acc_reg + s_sh[A_W-1:0];
    tag2_reg <= tag1_reg;
    y_reg <= y;
    tag3_reg <= tag2_reg;
end

always @(posedge clk) begin
    if (rst) begin
        valid_reg <= 3'b000;
    end else begin
        valid_reg <= {valid_reg[1:0], in_valid};
    end
end

assign out_valid = valid_reg[2];
assign out_y = y_reg;
assign out_tag = tag3_reg;

endmodule

`resetall
