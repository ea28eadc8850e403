/*
 * fptgen RTL library: folded dense (fully connected) layer.
 *
 * y[o] = cast<Y>(act(acc[o])), acc[o] = cast<A>(b[o]) then, for i = 0..IN-1
 * in order, acc = cast<A>(acc + cast<A>(w[o][i] * x[i])): exactly the
 * arithmetic of fptgen's bit-accurate simulator (docs/numerics.md, "Layer
 * arithmetic"), every cast by fptgen_cast.
 *
 * Folding as in FINN's MVAU: PE output neurons in parallel, SIMD inputs per
 * cycle. A vector takes NF*SF cycles (NF = ceil(OUT/PE) neuron folds,
 * SF = ceil(IN/SIMD) synapse folds); fold (nf, sf) computes neurons
 * nf*PE .. nf*PE+PE-1 over inputs sf*SIMD .. sf*SIMD+SIMD-1. Padding inputs
 * are zero and padding weights are zero; adding a zero product leaves any
 * accumulator unchanged.
 *
 * Two accumulations (TREE):
 * - the in-order chain (TREE = 0): the SIMD products are added to the
 *   accumulator one after another in input order, each sum cast, so even a
 *   saturating accumulator matches the simulator's definition; one cycle,
 *   SIMD adders deep;
 * - the adder tree (TREE = 1), where the order cannot matter (the
 *   generator proves it with fptgen_sim's exact_accumulation: the products
 *   are exact, and the accumulator wraps or the bounds on the codes keep
 *   every partial sum in range, so every cast is the identity or a wrap):
 *   the products are registered, summed pairwise with a register after
 *   every second level and after the root, shifted to the accumulator's
 *   fraction bits and added to it modulo 2^A_W; a register-to-register path
 *   is then at most two adders (or one multiplier) deep. docs/hardware.md,
 *   "Adder trees", has the argument.
 *
 * Pipeline: issue (counters, x slice, memory address) -> m (memory data,
 * registered x slice) -> [MEM_REG only: the same registered again ->] s1
 * -> [tree only: products -> T tree stages ->]
 * accumulate (acc registers; on the last synapse fold the activation and
 * output cast go to the output buffer). A vector is accepted on an edge,
 * its last fold is issued NF*SF-1 cycles later, and the next vector can be
 * accepted on the edge after that (initiation interval NF*SF); its output
 * is valid NF*SF+1 edges after acceptance for the chain, NF*SF+3+T for the
 * tree (T = ceil(clog2(SIMD)/2), 0 for SIMD = 1), one more with packed
 * multipliers and one more with MEM_REG. in/out are valid/ready streams of whole vectors (element k
 * at bits [k*W +: W]); the pipeline stalls only when a vector finishes
 * while the output register is full and not taken (until then, vectors
 * are accepted and folded as usual), so nothing is lost.
 *
 * Parameters are read from fptgen_param_mem: a ROM for frozen tensors, a
 * block RAM with a one-column write port for trainable ones.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_dense #(
    // Inputs per vector
    parameter integer IN = 4,
    // Outputs per vector
    parameter integer OUT = 4,
    // Output neurons computed in parallel (1..OUT)
    parameter integer PE = 1,
    // Inputs consumed per cycle (1..IN)
    parameter integer SIMD = 1,
    // Input format: width, fraction bits, signed (1) or unsigned (0)
    parameter integer X_W = 8,
    parameter integer X_F = 4,
    parameter integer X_S = 1,
    // Weight format
    parameter integer W_W = 8,
    parameter integer W_F = 4,
    parameter integer W_S = 1,
    // Bias format
    parameter integer B_W = 8,
    parameter integer B_F = 4,
    parameter integer B_S = 1,
    // Accumulator format and its quantization / overflow modes (fptgen_cast codes)
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
    // Accumulation. 0: the in-order chain (any formats). 1: a pipelined
    // adder tree, every addition modulo 2^A_W; legal only where the order
    // of the additions cannot matter: every product cast to the accumulator
    // exactly by a shift (A_F >= W_F + X_F, checked here), and the
    // accumulator wrapping or proven never to overflow (fptgen_sim's
    // exact_accumulation, which the generator checks before it sets 1).
    // Adds T + 2 cycles of latency (T = ceil(clog2(SIMD) / 2), 0 for
    // SIMD = 1).
    parameter integer TREE = 0,
    // Multipliers (TREE = 1 only). 0: one per product. 1: the products of
    // neurons 2q and 2q + 1 with the same input x share one:
    // ((w[2q+1] << P_W) + w[2q]) * x, registered; the low product is the
    // low P_W bits sign-extended, the high one the upper P_W bits plus the
    // low one's sign bit (exact: the low product fits P_W signed bits). The
    // multiply is (2*W_W + X_W + 3) x (X_W + 1) bits, one DSP48E2 when that
    // is at most 27 x 18 (the generator checks). Adds 1 cycle of latency.
    parameter integer PACK = 0,
    // 1: the parameter memories' read data (and the stage's control) are
    // registered once more in fabric before any arithmetic, so that no
    // path starts at a block RAM's read port without its output register
    // (the generator sets it for Lattice ECP5 parts, whose DP16KD has 4.26
    // ns of clock-to-output that way). Adds 1 cycle of latency. 0: the
    // arithmetic starts at the memories' read registers.
    parameter integer MEM_REG = 0,
    // 1: the input vector is rotated by one synapse fold per issued fold,
    // the fold issued always its lowest SIMD inputs (the generator sets it
    // for Lattice ECP5 parts); 0: the fold is selected from the held vector
    // by the synapse-fold counter, an SF-way multiplexer. Same cycles.
    parameter integer X_ROTATE = 0,
    // (The weight memory has NF*SF words of PE*SIMD columns, the bias memory
    // NF words of PE columns; the module derives their address and
    // column-select widths, clog2 of those counts.)
    // 1: weights writable (trainer port); 0: ROM
    parameter integer W_WRITABLE = 0,
    // Vivado ram_style/rom_style of the weight memory: "block",
    // "distributed" or "auto"
    parameter W_STYLE = "block",
    // Weight memory image (with banks, their images' prefix)
    parameter W_FILE = "w.hex",
    // Columns per bank of the weight memory (fptgen_param_mem's BANK_COLS;
    // 0: one memory)
    parameter integer W_BANK_COLS = 0,
    // 1: biases writable; 0: ROM
    parameter integer B_WRITABLE = 0,
    // Vivado ram_style/rom_style of the bias memory
    parameter B_STYLE = "auto",
    // Bias memory image (with banks, their images' prefix)
    parameter B_FILE = "b.hex",
    // Columns per bank of the bias memory (0: one memory)
    parameter integer B_BANK_COLS = 0
) (
    input  wire               clk,
    input  wire               rst,

    input  wire [IN*X_W-1:0]  in_data,
    input  wire               in_valid,
    output wire               in_ready,

    output wire [OUT*Y_W-1:0] out_data,
    output wire               out_valid,
    input  wire               out_ready,

    // Trainer ports of the parameter memories (fptgen_param_mem; ignored
    // for read-only tensors): word address and column select, clog2 of
    // the words (NF*SF, NF) and columns (PE*SIMD, PE) of each memory
    input  wire               w_tr_en,
    input  wire               w_tr_we,
    input  wire [clog2(((OUT + PE - 1) / PE) * ((IN + SIMD - 1) / SIMD))-1:0] w_tr_addr,
    input  wire [clog2(PE * SIMD)-1:0] w_tr_col,
    input  wire [W_W-1:0]     w_tr_wdata,
    output wire [W_W-1:0]     w_tr_rdata,
    input  wire               b_tr_en,
    input  wire               b_tr_we,
    input  wire [clog2((OUT + PE - 1) / PE)-1:0] b_tr_addr,
    input  wire [clog2(PE)-1:0] b_tr_col,
    input  wire [B_W-1:0]     b_tr_wdata,
    output wire [B_W-1:0]     b_tr_rdata
);

`include "fptgen_clog2.vh"

localparam integer NF = (OUT + PE - 1) / PE;
localparam integer SF = (IN + SIMD - 1) / SIMD;
localparam integer XP = SF * SIMD;          // inputs including zero padding
localparam integer P_W = W_W + X_W + 2;     // exact signed product
localparam integer P_F = W_F + X_F;
localparam integer NF_W = clog2(NF);
localparam integer SF_W = clog2(SF);
localparam integer WA_W = clog2(NF * SF);   // weight memory address
localparam integer SHIFT = A_F - P_F;       // product to accumulator fraction bits
// The adder tree (TREE = 1): LEVELS levels of pairwise sums over the SIMD
// products, a register after every second level and after the root (T
// registered stages); TW-bit nodes, enough for the exact sum of SIMD
// products or, if fewer, the A_W - SHIFT bits the accumulator keeps of it
localparam integer LEVELS = (SIMD > 1) ? clog2(SIMD) : 0;
localparam integer T = (LEVELS + 1) / 2;
// Registered stages from the products to the tree's root: the tree's T,
// and with PACK the packed products' register before the products'
localparam integer D = T + PACK;
localparam integer TW = (P_W + LEVELS < A_W - SHIFT) ? P_W + LEVELS : A_W - SHIFT;
localparam integer TREE_NODES = tree_offset(SIMD, LEVELS + 1);

// (tree_nodes and tree_offset, the tree's layout: fptgen_clog2.vh)

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (PE < 1 || PE > OUT || SIMD < 1 || SIMD > IN) begin : g_error_pe_or_simd_out_of_range
        fptgen_param_error_dense_pe_or_simd_out_of_range error_inst ();
    end
    if (TREE != 0 && (TREE != 1 || SHIFT < 0 || TW < 1)) begin : g_error_tree_needs_exact_products
        fptgen_param_error_dense_tree_needs_exact_products error_inst ();
    end
    if (PACK != 0 && (PACK != 1 || TREE != 1)) begin : g_error_pack_needs_tree
        fptgen_param_error_dense_pack_needs_tree error_inst ();
    end
    if (MEM_REG != 0 && MEM_REG != 1) begin : g_error_mem_reg_not_0_or_1
        fptgen_param_error_dense_mem_reg_not_0_or_1 error_inst ();
    end
    if (X_ROTATE != 0 && X_ROTATE != 1) begin : g_error_x_rotate_not_0_or_1
        fptgen_param_error_dense_x_rotate_not_0_or_1 error_inst ();
    end
endgenerate

localparam integer NF_LAST_I = NF - 1;
localparam integer SF_LAST_I = SF - 1;
localparam integer WA_LAST_I = NF * SF - 1;
localparam [NF_W-1:0] NF_LAST = NF_LAST_I[NF_W-1:0];
localparam [SF_W-1:0] SF_LAST = SF_LAST_I[SF_W-1:0];
localparam [WA_W-1:0] WA_LAST = WA_LAST_I[WA_W-1:0];

// ---------------------------------------------------------------------------
// Issue: input vector register and fold counters
reg [XP*X_W-1:0] x_reg;
reg              busy_reg;
reg [NF_W-1:0]   nf_reg;
reg [SF_W-1:0]   sf_reg;
reg [WA_W-1:0]   waddr_reg;

wire stall;
wire last_sf = (sf_reg == SF_LAST);
wire last_nf = (nf_reg == NF_LAST);
wire issue_last = busy_reg && last_sf && last_nf;

assign in_ready = !stall && (!busy_reg || issue_last);
wire accept = in_valid && in_ready;

always @(posedge clk) begin
    if (rst) begin
        busy_reg <= 1'b0;
        nf_reg <= {NF_W{1'b0}};
        sf_reg <= {SF_W{1'b0}};
        waddr_reg <= {WA_W{1'b0}};
    end else if (!stall) begin
        if (busy_reg) begin
            if (last_sf) begin
                sf_reg <= {SF_W{1'b0}};
                nf_reg <= last_nf ? {NF_W{1'b0}} : nf_reg + 1'b1;
            end else begin
                sf_reg <= sf_reg + 1'b1;
            end
            waddr_reg <= (waddr_reg == WA_LAST) ? {WA_W{1'b0}} : waddr_reg + 1'b1;
        end
        if (accept) begin
            busy_reg <= 1'b1;
        end else if (issue_last) begin
            busy_reg <= 1'b0;
        end
    end
end

// The input vector and the fold being issued (x_now), by X_ROTATE:
// 0: the vector is held and x_now is its fold sf_reg, an SF-way
//    multiplexer;
// 1: the vector is rotated by one synapse fold (SIMD inputs) on every
//    issued fold, so that the fold being issued is always its lowest SIMD
//    inputs: no multiplexer on the issue path (at SIMD 1 a 784-input layer
//    had a 784-way one, driven by sf_reg: brevitas_mnist's worst routed
//    path on ECP5, docs/results/ecp5.md). After SF folds the vector is back
//    in place for the next neuron fold; a vector accepted on the edge that
//    issues the last fold replaces it.
wire [XP*X_W-1:0]   x_in;
wire [SIMD*X_W-1:0] x_now;
genvar f;

generate
    if (XP > IN) begin : g_x_pad
        assign x_in = {{((XP - IN) * X_W){1'b0}}, in_data};
    end else begin : g_x_nopad
        assign x_in = in_data;
    end
    if (X_ROTATE != 0 && SF > 1) begin : g_x_rotate
        always @(posedge clk) begin
            if (accept) begin
                x_reg <= x_in;
            end else if (busy_reg && !stall) begin
                x_reg <= {x_reg[SIMD*X_W-1:0], x_reg[XP*X_W-1:SIMD*X_W]};
            end
        end
        assign x_now = x_reg[SIMD*X_W-1:0];
    end else begin : g_x_select
        // The SIMD inputs of each synapse fold
        wire [SIMD*X_W-1:0] x_fold [0:SF-1];
        for (f = 0; f < SF; f = f + 1) begin : g_x_fold
            assign x_fold[f] = x_reg[f*SIMD*X_W +: SIMD*X_W];
        end
        always @(posedge clk) begin
            if (accept) begin
                x_reg <= x_in;
            end
        end
        assign x_now = x_fold[sf_reg];
    end
endgenerate

// ---------------------------------------------------------------------------
// m: the parameter memories' read (one cycle) and the registered x slice
reg                 m_valid_reg;
reg                 m_first_reg;
reg                 m_last_reg;
reg                 m_done_reg;
reg [NF_W-1:0]      m_nf_reg;
reg [SIMD*X_W-1:0]  m_x_reg;

always @(posedge clk) begin
    if (rst) begin
        m_valid_reg <= 1'b0;
    end else if (!stall) begin
        m_valid_reg <= busy_reg;
    end
end

always @(posedge clk) begin
    if (!stall) begin
        m_first_reg <= (sf_reg == {SF_W{1'b0}});
        m_last_reg <= last_sf;
        m_done_reg <= last_sf && last_nf;
        m_nf_reg <= nf_reg;
        m_x_reg <= x_now;
    end
end

wire [PE*SIMD*W_W-1:0] w_rd;
wire [PE*B_W-1:0]      b_rd;

generate
    // Trainer ports of frozen tensors are tied off by the layer wrapper.
    fptgen_param_mem #(
        .DEPTH(NF * SF), .COLS(PE * SIMD), .COL_W(W_W),
        .WRITABLE(W_WRITABLE), .STYLE(W_STYLE), .INIT_FILE(W_FILE),
        .BANK_COLS(W_BANK_COLS)
    ) u_wmem (
        .clk(clk), .rd_en(!stall), .rd_addr(waddr_reg), .rd_data(w_rd),
        .tr_en(w_tr_en), .tr_we(w_tr_we), .tr_addr(w_tr_addr), .tr_col(w_tr_col),
        .tr_wdata(w_tr_wdata), .tr_rdata(w_tr_rdata)
    );

    fptgen_param_mem #(
        .DEPTH(NF), .COLS(PE), .COL_W(B_W),
        .WRITABLE(B_WRITABLE), .STYLE(B_STYLE), .INIT_FILE(B_FILE),
        .BANK_COLS(B_BANK_COLS)
    ) u_bmem (
        .clk(clk), .rd_en(!stall), .rd_addr(nf_reg), .rd_data(b_rd),
        .tr_en(b_tr_en), .tr_we(b_tr_we), .tr_addr(b_tr_addr), .tr_col(b_tr_col),
        .tr_wdata(b_tr_wdata), .tr_rdata(b_tr_rdata)
    );
endgenerate

// ---------------------------------------------------------------------------
// s1: the stage the arithmetic starts from: the memory stage itself
// (MEM_REG = 0), or its copy one register later (MEM_REG = 1), so that the
// weights and biases leave fabric flip-flops rather than a block RAM's
// read port (ECP5's DP16KD without its output register: 4.26 ns of
// clock-to-output)
wire                 s1_valid;
wire                 s1_first;
wire                 s1_last;
wire                 s1_done;
wire [NF_W-1:0]      s1_nf;
wire [SIMD*X_W-1:0]  s1_x;
wire [PE*SIMD*W_W-1:0] s1_w;
wire [PE*B_W-1:0]    s1_b;

generate
    if (MEM_REG != 0) begin : g_mem_reg
        reg                   valid_reg;
        reg                   first_reg;
        reg                   last_reg;
        reg                   done_reg;
        reg [NF_W-1:0]        nf_q;
        reg [SIMD*X_W-1:0]    x_q;
        reg [PE*SIMD*W_W-1:0] w_q;
        reg [PE*B_W-1:0]      b_q;

        always @(posedge clk) begin
            if (rst) begin
                valid_reg <= 1'b0;
            end else if (!stall) begin
                valid_reg <= m_valid_reg;
            end
        end

        always @(posedge clk) begin
            if (!stall) begin
                first_reg <= m_first_reg;
                last_reg <= m_last_reg;
                done_reg <= m_done_reg;
                nf_q <= m_nf_reg;
                x_q <= m_x_reg;
                w_q <= w_rd;
                b_q <= b_rd;
            end
        end

        assign s1_valid = valid_reg;
        assign s1_first = first_reg;
        assign s1_last = last_reg;
        assign s1_done = done_reg;
        assign s1_nf = nf_q;
        assign s1_x = x_q;
        assign s1_w = w_q;
        assign s1_b = b_q;
    end else begin : g_mem_direct
        assign s1_valid = m_valid_reg;
        assign s1_first = m_first_reg;
        assign s1_last = m_last_reg;
        assign s1_done = m_done_reg;
        assign s1_nf = m_nf_reg;
        assign s1_x = m_x_reg;
        assign s1_w = w_rd;
        assign s1_b = b_rd;
    end
endgenerate

// ---------------------------------------------------------------------------
// Accumulate. y_fold is each PE's activation + output cast of a neuron's
// final sum; fin_* are the control of the stage that presents it (s1 for
// the in-order chain, the accumulator stage for the tree).
wire [PE*Y_W-1:0] y_fold;
wire              fin_valid;
wire              fin_last;
wire              fin_done;
wire [NF_W-1:0]   fin_nf;
// Per PE: the raw bias of the fold being accumulated (b_bias) and its cast
// to the accumulator (bias_acc), and the neuron's final sum (fin_acc)
wire [PE*B_W-1:0] b_bias;
wire [PE*A_W-1:0] bias_acc;
wire [PE*A_W-1:0] fin_acc;

generate
    genvar q;
    for (q = 0; q < PE; q = q + 1) begin : g_cast
        wire [B_W-1:0] b = b_bias[q*B_W +: B_W];
        wire [A_W-1:0] sum = fin_acc[q*A_W +: A_W];
        wire [A_W-1:0] act = (RELU != 0 && A_S != 0 && sum[A_W-1]) ? {A_W{1'b0}} : sum;

        fptgen_cast #(
            .IN_W(B_W + 1), .IN_F(B_F), .OUT_W(A_W), .OUT_F(A_F), .OUT_SIGNED(A_S), .QUANT(A_Q), .OVF(A_O)
        ) u_bias_cast (
            .in({B_S != 0 ? b[B_W-1] : 1'b0, b}),
            .out(bias_acc[q*A_W +: A_W])
        );

        fptgen_cast #(
            .IN_W(A_W + 1), .IN_F(A_F), .OUT_W(Y_W), .OUT_F(Y_F), .OUT_SIGNED(Y_S), .QUANT(Y_Q), .OVF(Y_O)
        ) u_out_cast (
            .in({A_S != 0 ? act[A_W-1] : 1'b0, act}),
            .out(y_fold[q*Y_W +: Y_W])
        );
    end
endgenerate

generate
    genvar p, l, j, i;
    if (TREE == 0) begin : g_chain
        // Per PE: bias then the SIMD products in input order, one saturating
        // (or wrapping) cast after every addition, as the simulator's definition.
        assign fin_valid = s1_valid;
        assign fin_last = s1_last;
        assign fin_done = s1_done;
        assign fin_nf = s1_nf;
        assign b_bias = s1_b;

        for (p = 0; p < PE; p = p + 1) begin : g_pe
            reg  [A_W-1:0] acc_reg;
            wire [A_W-1:0] chain [0:SIMD];

            assign chain[0] = s1_first ? bias_acc[p*A_W +: A_W] : acc_reg;

            for (l = 0; l < SIMD; l = l + 1) begin : g_lane
                wire [W_W-1:0] w = s1_w[(p*SIMD + l)*W_W +: W_W];
                wire [X_W-1:0] x = s1_x[l*X_W +: X_W];
                wire signed [W_W:0] w_ext = {W_S != 0 ? w[W_W-1] : 1'b0, w};
                wire signed [X_W:0] x_ext = {X_S != 0 ? x[X_W-1] : 1'b0, x};
                wire signed [P_W-1:0] prod = w_ext * x_ext;
                wire [A_W-1:0] prod_acc;
                wire [A_W+1:0] sum;

                fptgen_cast #(
                    .IN_W(P_W), .IN_F(P_F), .OUT_W(A_W), .OUT_F(A_F), .OUT_SIGNED(A_S), .QUANT(A_Q), .OVF(A_O)
                ) u_prod_cast (
                    .in(prod),
                    .out(prod_acc)
                );

                assign sum = {{2{A_S != 0 ? chain[l][A_W-1] : 1'b0}}, chain[l]}
                           + {{2{A_S != 0 ? prod_acc[A_W-1] : 1'b0}}, prod_acc};

                fptgen_cast #(
                    .IN_W(A_W + 2), .IN_F(A_F), .OUT_W(A_W), .OUT_F(A_F), .OUT_SIGNED(A_S), .QUANT(A_Q), .OVF(A_O)
                ) u_sum_cast (
                    .in(sum),
                    .out(chain[l+1])
                );
            end

            always @(posedge clk) begin
                if (s1_valid && !stall) begin
                    acc_reg <= chain[SIMD];
                end
            end

            assign fin_acc[p*A_W +: A_W] = chain[SIMD];
        end
    end else begin : g_tree
        // Control of the stages after s1: stages 0..PACK hold the registered
        // (with PACK: packed, then separated) products, the next T stages the
        // registered tree levels, stage D + 1 the accumulators (the final
        // stage; D = T + PACK).
        reg [D+1:0]      c_valid_reg;
        reg [D+1:0]      c_first_reg;
        reg [D+1:0]      c_last_reg;
        reg [D+1:0]      c_done_reg;
        reg [NF_W-1:0]   c_nf_reg [0:D+1];
        // The biases of the fold in each of stages 0..D (needed at stage D)
        reg [PE*B_W-1:0] c_b_reg [0:D];
        integer k;

        // (The flags that reach the stall and output logic are reset, so
        // that synthesis keeps them in flip-flops, not in a shift-register
        // LUT with its slower clock-to-out.)
        always @(posedge clk) begin
            if (rst) begin
                c_valid_reg <= {(D + 2){1'b0}};
                c_last_reg <= {(D + 2){1'b0}};
                c_done_reg <= {(D + 2){1'b0}};
            end else if (!stall) begin
                c_valid_reg <= {c_valid_reg[D:0], s1_valid};
                c_last_reg <= {c_last_reg[D:0], s1_last};
                c_done_reg <= {c_done_reg[D:0], s1_done};
            end
        end

        always @(posedge clk) begin
            if (!stall) begin
                c_first_reg <= {c_first_reg[D:0], s1_first};
                c_nf_reg[0] <= s1_nf;
                for (k = 1; k <= D + 1; k = k + 1) begin
                    c_nf_reg[k] <= c_nf_reg[k-1];
                end
                c_b_reg[0] <= s1_b;
                for (k = 1; k <= D; k = k + 1) begin
                    c_b_reg[k] <= c_b_reg[k-1];
                end
            end
        end

        assign fin_valid = c_valid_reg[D+1];
        assign fin_last = c_last_reg[D+1];
        assign fin_done = c_done_reg[D+1];
        assign fin_nf = c_nf_reg[D+1];
        assign b_bias = c_b_reg[D];

        // The registered products (the tree's level 0): lane l of neuron p
        // at prod_q[(p*SIMD + l)*TW +: TW], each sign-extended by the
        // tree's growth, TW bits of it kept (or, when TW is the narrower
        // A_W - SHIFT, the product modulo 2^TW, all that the wrapped sum
        // keeps)
        wire [PE*SIMD*TW-1:0] prod_q;

        if (PACK == 0) begin : g_single
            for (p = 0; p < PE; p = p + 1) begin : g_pe
                for (l = 0; l < SIMD; l = l + 1) begin : g_lane
                    wire [W_W-1:0] w = s1_w[(p*SIMD + l)*W_W +: W_W];
                    wire [X_W-1:0] x = s1_x[l*X_W +: X_W];
                    wire signed [W_W:0] w_ext = {W_S != 0 ? w[W_W-1] : 1'b0, w};
                    wire signed [X_W:0] x_ext = {X_S != 0 ? x[X_W-1] : 1'b0, x};
                    wire signed [P_W-1:0] prod = w_ext * x_ext;
                    wire [P_W+LEVELS:0] prod_x = {{(LEVELS + 1){prod[P_W-1]}}, prod};
                    wire unused_prod_x = ^prod_x[P_W+LEVELS:TW];
                    reg  [TW-1:0] prod_reg;

                    always @(posedge clk) begin
                        if (!stall) begin
                            prod_reg <= prod_x[TW-1:0];
                        end
                    end

                    assign prod_q[(p*SIMD + l)*TW +: TW] = prod_reg;
                end
            end
        end else begin : g_packed
            // Neurons p = 2q and p + 1 (absent, weight 0, for the last pair
            // of an odd PE) share lane l's multiplier.
            for (p = 0; p < PE; p = p + 2) begin : g_pair
                for (l = 0; l < SIMD; l = l + 1) begin : g_lane
                    wire [W_W-1:0] w_lo = s1_w[(p*SIMD + l)*W_W +: W_W];
                    wire [W_W-1:0] w_hi;
                    wire [X_W-1:0] x = s1_x[l*X_W +: X_W];
                    wire signed [W_W:0] lo_ext = {W_S != 0 ? w_lo[W_W-1] : 1'b0, w_lo};
                    wire signed [W_W:0] hi_ext = {W_S != 0 ? w_hi[W_W-1] : 1'b0, w_hi};
                    wire signed [X_W:0] x_ext = {X_S != 0 ? x[X_W-1] : 1'b0, x};
                    // hi * 2^P_W + lo, in W_W + 1 + P_W bits
                    wire signed [W_W+P_W:0] packed_w = {hi_ext, {P_W{1'b0}}} + {{P_W{lo_ext[W_W]}}, lo_ext};
                    // hi*x*2^P_W + lo*x, in 2*P_W bits (|hi*x| < 2^(P_W-2))
                    wire signed [2*P_W-1:0] both = packed_w * x_ext;
                    reg  [2*P_W-1:0] both_reg;
                    // lo*x is the low P_W bits as a signed number; the upper
                    // bits are hi*x minus 1 when it is negative
                    wire [P_W-1:0] prod_lo = both_reg[P_W-1:0];
                    wire [P_W-1:0] prod_hi = both_reg[2*P_W-1:P_W] + {{(P_W - 1){1'b0}}, both_reg[P_W-1]};
                    wire [P_W+LEVELS:0] lo_x = {{(LEVELS + 1){prod_lo[P_W-1]}}, prod_lo};
                    wire [P_W+LEVELS:0] hi_x = {{(LEVELS + 1){prod_hi[P_W-1]}}, prod_hi};
                    wire unused_x = ^{lo_x[P_W+LEVELS:TW], hi_x[P_W+LEVELS:TW]};
                    reg  [TW-1:0] lo_reg;
                    reg  [TW-1:0] hi_reg;

                    if (p + 1 < PE) begin : g_hi
                        assign w_hi = s1_w[((p + 1)*SIMD + l)*W_W +: W_W];
                        assign prod_q[((p + 1)*SIMD + l)*TW +: TW] = hi_reg;
                    end else begin : g_no_hi
                        assign w_hi = {W_W{1'b0}};
                        wire unused_hi = ^hi_reg;
                    end

                    always @(posedge clk) begin
                        if (!stall) begin
                            both_reg <= both;
                            lo_reg <= lo_x[TW-1:0];
                            hi_reg <= hi_x[TW-1:0];
                        end
                    end

                    assign prod_q[(p*SIMD + l)*TW +: TW] = lo_reg;
                end
            end
        end

        for (p = 0; p < PE; p = p + 1) begin : g_pe
            // Every level of the tree, level 0 (the products) first; node n
            // of level j is node[tree_offset(SIMD, j) + n].
            // (split_var: the levels are separate signals to Verilator,
            // which would otherwise see the array feed itself)
            wire [TW-1:0] node [0:TREE_NODES-1] /* verilator split_var */;

            for (l = 0; l < SIMD; l = l + 1) begin : g_lane
                assign node[l] = prod_q[(p*SIMD + l)*TW +: TW];
            end

            for (j = 1; j <= LEVELS; j = j + 1) begin : g_level
                for (i = 0; i < tree_nodes(SIMD, j); i = i + 1) begin : g_node
                    // This node, node[DST], sums node[SRC] and node[SRC + 1]
                    localparam integer SRC = tree_offset(SIMD, j - 1) + 2*i;
                    localparam integer DST = tree_offset(SIMD, j) + i;
                    wire [TW-1:0] sum;

                    if (2*i + 1 < tree_nodes(SIMD, j - 1)) begin : g_pair
                        assign sum = node[SRC] + node[SRC + 1];
                    end else begin : g_pass
                        assign sum = node[SRC];
                    end

                    if (j % 2 == 0 || j == LEVELS) begin : g_reg
                        reg [TW-1:0] sum_reg;

                        always @(posedge clk) begin
                            if (!stall) begin
                                sum_reg <= sum;
                            end
                        end

                        assign node[DST] = sum_reg;
                    end else begin : g_comb
                        assign node[DST] = sum;
                    end
                end
            end

            // Stage D -> D + 1: the accumulator, bias on a neuron's first
            // fold; the root (the fold's dot product) shifted to the
            // accumulator's fraction bits, every addition modulo 2^A_W
            wire [TW-1:0]    root = node[TREE_NODES - 1];
            wire [A_W+TW:0]  root_x = {{(A_W + 1){root[TW-1]}}, root};
            wire [A_W+TW:0]  root_sh = root_x << SHIFT;
            wire             unused_root_sh = ^root_sh[A_W+TW:A_W];
            reg  [A_W-1:0]   acc_reg;

            always @(posedge clk) begin
                if (c_valid_reg[D] && !stall) begin
                    acc_reg <= (c_first_reg[D] ? bias_acc[p*A_W +: A_W] : acc_reg) + root_sh[A_W-1:0];
                end
            end

            assign fin_acc[p*A_W +: A_W] = acc_reg;
        end
    end
endgenerate

// ---------------------------------------------------------------------------
// Output: collect folds; the last fold of a vector loads the output register
reg  [OUT*Y_W-1:0] y_buf_reg;
wire [OUT*Y_W-1:0] y_next;
reg  [OUT*Y_W-1:0] out_data_reg;
reg                out_valid_reg;

generate
    genvar o;
    for (o = 0; o < OUT; o = o + 1) begin : g_out
        localparam integer FOLD_I = o / PE;
        localparam [NF_W-1:0] FOLD = FOLD_I[NF_W-1:0];
        assign y_next[o*Y_W +: Y_W] = (fin_nf == FOLD) ? y_fold[(o % PE)*Y_W +: Y_W] : y_buf_reg[o*Y_W +: Y_W];
    end
endgenerate

assign stall = fin_valid && fin_done && out_valid_reg && !out_ready;

always @(posedge clk) begin
    if (fin_valid && fin_last && !stall) begin
        y_buf_reg <= y_next;
    end
    if (fin_valid && fin_done && !stall) begin
        out_data_reg <= y_next;
    end
end

always @(posedge clk) begin
    if (rst) begin
        out_valid_reg <= 1'b0;
    end else if (fin_valid && fin_done && !stall) begin
        out_valid_reg <= 1'b1;
    end else if (out_ready) begin
        out_valid_reg <= 1'b0;
    end
end

assign out_data = out_data_reg;
assign out_valid = out_valid_reg;

endmodule

`resetall
