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
 * rotation. One cycle earlier still (issue 37: the trainer computes the
 * memory's write data a cycle before the write, from registers): the
 * noise value the block at the unit leaves with, the head's in the next
 * cycle after a rotation, is the value a draw gives (from the block's
 * LFSR state, or its seed while seeding) when it draws (draw, and the
 * block is on), and the block's e otherwise. drawn_next and kept_next are
 * those two values as they will be in the next cycle (from the block at
 * the unit then: with rot the one behind the unit, P = 1 the unit's
 * result; without rot the same block), sign-extended like noise and
 * neither through draw or active of the next cycle, so that the trainer
 * registers the one it needs; ahead_grad is the
 * gradient, as of this cycle, of the block at the unit in the next cycle
 * (with rot the one behind the unit, without it the one at the unit;
 * P = 1: the one block), which the update's step register reads.
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
    output wire [31:0]        next_grad,
    // The noise values a draw at the unit gives and the block at the unit
    // has, in the next cycle, and the gradient of the block at the unit in
    // the next cycle (see the header)
    output wire [(UNIFORM != 0 ? NOISE_BITS + 1 : 2):0] drawn_next,
    output wire [(UNIFORM != 0 ? NOISE_BITS + 1 : 2):0] kept_next,
    output wire [31:0]        ahead_grad
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
// Position: the block at the unit; the seeds of the block at the unit
// (seed_reg) and of the one behind it (seed_inc_reg), registered; seeding
// until the next pass has ended. The position moves by at most one block
// per cycle, so the seeds move along with it: a rotation takes the one
// behind, and the seed two blocks on is read from the position register
// through the table SEEDS rotated by two (seeds2), so that no path runs
// from rot through a P-entry table.
reg  [JW-1:0] pos_reg;
wire          pos_last = pos_reg == LAST;
wire [JW-1:0] pos_inc = pos_last ? {JW{1'b0}} : pos_reg + 1'b1;
wire [JW-1:0] pos_next = rot ? pos_inc : pos_reg;
reg  [LW-1:0] seed_reg;
reg  [LW-1:0] seed_inc_reg;
reg           seeding_reg;
wire [P*LW-1:0] seeds2;   // entry k: the seed of block (k + 2) mod P

genvar k;
generate
    for (k = 0; k < P; k = k + 1) begin : g_seeds2
        assign seeds2[k*LW +: LW] = SEEDS[((k + 2) % P)*LW +: LW];
    end
endgenerate

always @(posedge clk) begin
    if (rst) begin
        pos_reg <= {JW{1'b0}};
        seeding_reg <= 1'b0;
        seed_reg <= SEEDS[0 +: LW];
        seed_inc_reg <= SEEDS[(1 % P)*LW +: LW];
    end else begin
        pos_reg <= pos_next;
        if (seed) begin
            seeding_reg <= 1'b1;
        end else if (rot && pos_last) begin
            seeding_reg <= 1'b0;
        end
        if (rot) begin
            seed_reg <= seed_inc_reg;
            seed_inc_reg <= seeds2[pos_reg*LW +: LW];
        end
    end
end

wire on = {1'b0, pos_reg} < active;

// ---------------------------------------------------------------------------
// Storage
reg  [R_W-1:0] head_reg;
wire [R_W-1:0] at_unit;    // the block at the unit
wire [R_W-1:0] from_unit;  // its next values
wire [R_W-1:0] behind;      // the block at the unit after a rotation

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
        assign behind = shift_reg[(P-3)*R_W +: R_W];
    end else if (P == 2) begin : g_pair
        reg [R_W-1:0] shift_reg;

        always @(posedge clk) begin
            if (rot) begin
                shift_reg <= head_reg;
            end
        end

        assign at_unit = shift_reg;
        assign behind = head_reg;
    end else begin : g_single
        assign at_unit = head_reg;
        assign behind = from_unit;
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
// The next cycle's block at the unit, seeding flag and seed, and the
// value a draw gives from them (fptgen_itb's: 2u + 1 uniform, +-1
// rademacher)
wire [R_W-1:0] at_unit_next = rot ? behind : at_unit;
wire           seeding_next = !rst && (seed || (seeding_reg && !(rot && pos_last)));
wire [LW-1:0]  lfsr_next = seeding_next ? (rot ? seed_inc_reg : seed_reg) : at_unit_next[R_W-1 -: LW];
wire [LW-1:0]  unused_next_stepped;
wire [NOISE_BITS-1:0] bits_next;
wire [E_W-1:0] e_drawn;

fptgen_lfsr_advance #(
    .WIDTH(LW),
    .BITS(NOISE_BITS)
) u_advance_next (
    .state(lfsr_next),
    .next(unused_next_stepped),
    .value(bits_next)
);

generate
    if (UNIFORM != 0) begin : g_drawn_uniform
        assign e_drawn = {bits_next, 1'b1};
    end else begin : g_drawn_rademacher
        assign e_drawn = bits_next[0] ? 2'b01 : 2'b11;
    end
endgenerate
wire [E_W-1:0] e_kept = at_unit_next[32 +: E_W];
assign drawn_next = {e_drawn[E_W-1], e_drawn};
assign kept_next = {e_kept[E_W-1], e_kept};
assign ahead_grad = P == 1 ? at_unit[31:0] : at_unit_next[31:0];

endmodule

`resetall
