/*
 * fptgen RTL library: the ES trainer's P incremental-training blocks as a
 * ring that rotates past one update unit (fptgen_itb).
 *
 * Block j is its LFSR state (LW bits), its noise value e and its 32-bit
 * gradient accumulator G (docs/training.md, "Hardware"). The blocks are
 * storage only: a shift register of P - 1 entries (no reset, one enable:
 * it maps to SRL shift registers, so a block costs about
 * (LW + E_W + 32) / 32 LUTs) and the head register. The block at the
 * shift register's output is "at the unit"; a cycle with rot high writes
 * the unit's result for it into the head register and shifts the old
 * head into the shift register:
 *
 *     shift register (P - 1) --> unit --> head --+
 *          ^                                     |
 *          +-------------------------------------+
 *
 * At rest (after reset, and after every P rotations) block 0 is at the
 * unit and block P - 1 in the head. The trainer rotates in passes of
 * exactly P cycles: during rotation k of a pass block k is at the unit
 * (pos = k), and in the cycle after it block k is in the head, where the
 * top level reads its new noise value (noise, for the perturbation) and
 * its gradient (grad, for the update's monitor); next_grad is the
 * gradient of the block at the unit, the head's in the next cycle after a
 * rotation (the update's step register reads it).
 *
 * At the unit, block k (on: k < active) with the pass's strobes:
 *   - seed (a pulse, before any pass): the next pass starts every block's
 *     LFSR from its seed SEEDS[k*LW +: LW] (the seed is read one cycle
 *     ahead into a register);
 *   - draw (on blocks only): NOISE_BITS LFSR steps (fptgen_lfsr_advance),
 *     e = a value of those bits;
 *   - clear (every block): G = 0;
 *   - acc_en (on blocks only): G = sat(G + Q(s) * e);
 * exactly what P blocks in parallel, each with its own LFSR, compute.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_itb_ring #(
    // Blocks (>= 1)
    parameter integer P = 2,
    // LFSR width: 8, 16 or 32
    parameter integer LW = 8,
    // Block j's LFSR seed (nonzero) at bits [j*LW +: LW]
    parameter [P*LW-1:0] SEEDS = {8'h02, 8'h01},
    // 0: rademacher (NOISE_BITS = 1); 1: uniform (NOISE_BITS-bit values)
    parameter integer UNIFORM = 0,
    // Fresh noise bits per value (1..LW, at most 32)
    parameter integer NOISE_BITS = 1,
    // 0: power-of-two loss quantization (shift); 1: exact (multiply)
    parameter integer EXACT = 0,
    // Fitness signal width (>= 2)
    parameter integer S_W = 33
) (
    input  wire               clk,
    input  wire               rst,

    input  wire               seed,
    input  wire               rot,
    // Blocks in use: 0 .. active - 1 (1..P)
    input  wire [clog2(P):0]  active,
    input  wire               draw,
    input  wire               clear,
    input  wire               acc_en,
    // The fitness signal and its power-of-two form (fptgen_po2, registered)
    input  wire [S_W-1:0]     signal,
    input  wire               sig_zero,
    input  wire               sig_neg,
    input  wire [clog2(S_W)-1:0] sig_exp,
    input  wire [S_W-1:0]     sig_onehot,

    // The head block's noise value (sign-extended by one bit) and gradient
    output wire [(UNIFORM != 0 ? NOISE_BITS + 1 : 2):0] noise,
    output wire [31:0]        grad,
    // The gradient of the block at the unit
    output wire [31:0]        next_grad
);

`include "fptgen_clog2.vh"

localparam integer E_W = UNIFORM != 0 ? NOISE_BITS + 1 : 2;   // noise value width
localparam integer R_W = LW + E_W + 32;                       // one block: {lfsr, e, G}
localparam integer JW = clog2(P);
localparam integer LAST_I = P - 1;
localparam [JW-1:0] LAST = LAST_I[JW-1:0];

// 1 if a seed is zero
function integer zero_seed;
    input integer dummy;
    integer j;
    begin
        zero_seed = dummy;
        for (j = 0; j < P; j = j + 1) begin
            if (SEEDS[j*LW +: LW] == {LW{1'b0}}) begin
                zero_seed = 1;
            end
        end
    end
endfunction

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
// (fptgen_itb and fptgen_lfsr_advance check the noise and LFSR parameters.)
generate
    if (P < 1 || zero_seed(0) != 0) begin : g_error_out_of_range
        fptgen_param_error_itb_ring_out_of_range error_inst ();
    end
endgenerate

// ---------------------------------------------------------------------------
// Position: the block at the unit; the seed of the block at the unit in
// the next cycle, registered; seeding until the next pass has ended
reg  [JW-1:0] pos_reg;
wire          pos_last = pos_reg == LAST;
wire [JW-1:0] pos_inc = pos_last ? {JW{1'b0}} : pos_reg + 1'b1;
wire [JW-1:0] pos_next = rot ? pos_inc : pos_reg;
reg  [LW-1:0] seed_reg;
reg           seeding_reg;

always @(posedge clk) begin
    if (rst) begin
        pos_reg <= {JW{1'b0}};
        seeding_reg <= 1'b0;
    end else begin
        pos_reg <= pos_next;
        if (seed) begin
            seeding_reg <= 1'b1;
        end else if (rot && pos_last) begin
            seeding_reg <= 1'b0;
        end
    end
    seed_reg <= SEEDS[pos_next*LW +: LW];
end

wire on = {1'b0, pos_reg} < active;

// ---------------------------------------------------------------------------
// Storage
reg  [R_W-1:0] head_reg;
wire [R_W-1:0] at_unit;    // the block at the unit
wire [R_W-1:0] from_unit;  // its next values

generate
    if (P > 2) begin : g_shift
        // entry k at bits [k*R_W +: R_W]; the head enters entry 0
        reg [(P-1)*R_W-1:0] shift_reg;

        always @(posedge clk) begin
            if (rot) begin
                shift_reg <= {shift_reg[(P-2)*R_W-1:0], head_reg};
            end
        end

        assign at_unit = shift_reg[(P-2)*R_W +: R_W];
    end else if (P == 2) begin : g_pair
        reg [R_W-1:0] shift_reg;

        always @(posedge clk) begin
            if (rot) begin
                shift_reg <= head_reg;
            end
        end

        assign at_unit = shift_reg;
    end else begin : g_single
        assign at_unit = head_reg;
    end
endgenerate

always @(posedge clk) begin
    if (rot) begin
        head_reg <= from_unit;
    end
end

// ---------------------------------------------------------------------------
// The unit
wire [LW-1:0] lfsr_in = seeding_reg ? seed_reg : at_unit[R_W-1 -: LW];
wire [LW-1:0] lfsr_stepped;
wire [NOISE_BITS-1:0] bits;
wire [E_W-1:0] e_out;
wire [31:0] grad_out;
wire drawing = draw && on;

fptgen_lfsr_advance #(
    .WIDTH(LW),
    .BITS(NOISE_BITS)
) u_advance (
    .state(lfsr_in),
    .next(lfsr_stepped),
    .value(bits)
);

fptgen_itb #(
    .UNIFORM(UNIFORM),
    .NOISE_BITS(NOISE_BITS),
    .EXACT(EXACT),
    .S_W(S_W)
) u_itb (
    .noise_bits(bits),
    .draw(drawing),
    .e_in(at_unit[32 +: E_W]),
    .e_out(e_out),
    .acc_en(acc_en && on),
    .signal(signal),
    .sig_zero(sig_zero),
    .sig_neg(sig_neg),
    .sig_exp(sig_exp),
    .sig_onehot(sig_onehot),
    .clear(clear),
    .grad_in(at_unit[31:0]),
    .grad_out(grad_out)
);

assign from_unit = {drawing ? lfsr_stepped : lfsr_in, e_out, grad_out};

wire [E_W-1:0] head_e = head_reg[32 +: E_W];
assign noise = {head_e[E_W-1], head_e};
assign grad = head_reg[31:0];
assign next_grad = at_unit[31:0];

endmodule

`resetall
