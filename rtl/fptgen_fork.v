/*
 * fptgen RTL library: fork, one stream to two (a layer's output feeding two
 * branches of a graph, e.g. a residual block's main path and its skip
 * path), each output behind its own FIFO.
 *
 * Every beat accepted on the input is given, unchanged and in order, on both
 * outputs; each output is taken independently of the other. Nothing is ever
 * lost, repeated or reordered.
 *
 * Structure. Two FIFOs, FIFO i of DEPTHi entries (i = 0, 1), written
 * together on every accepted beat and read independently. Each has a count
 * of the beats it holds (count_i, 0 .. DEPTHi), and the registers
 * valid_i = (count_i != 0) and full_i = (count_i == DEPTHi), both loaded
 * from the next count. The storage of a FIFO depends on its depth:
 *   - DEPTHi < RAM_MIN_DEPTH = 4: registers, DEPTHi beats (ram_style
 *     "registers", so that no tool makes the array a LUTRAM), a write and
 *     a read pointer; out_data is the register the read pointer selects (a
 *     multiplexer of registers; DEPTHi = 1: one register, no pointers);
 *   - DEPTHi >= 4: a RAM of DEPTHi beats, (* ram_style = RAM_STYLEi *),
 *     written on every accepted beat and read synchronously (a read
 *     register with an enable, which Vivado and yosys fold into a block
 *     RAM's or a LUTRAM's output register), plus a bypass register: a beat
 *     that becomes the head on the edge it is accepted (the FIFO is empty,
 *     or holds one beat that is taken on that edge) is loaded into the
 *     bypass register; when the head is taken and the next beat was written
 *     on an earlier edge, the RAM reads it. out_data = the read register or
 *     the bypass register, as a register (sel) says. The RAM is never read
 *     at the address being written (only with count_i >= 2, two different
 *     entries). Registers: 2*W bits, the pointers and counts.
 * Hence out_data and out_valid are registers or multiplexers of registers:
 * a consumer sees no combinational path from in_valid or in_data.
 *
 * Handshake. With push = in_valid && in_ready and pop_i = out_valid_i &&
 * out_ready_i:
 *   in_ready    = !full_0 && !full_1                (registers only)
 *   out_valid_i = valid_i = (count_i != 0)           (a register)
 *   count_i    <= count_i + push - pop_i
 * full_i does not count a pop on the same edge: a full FIFO takes no beat
 * on the edge that pops it, only on the next. There is no combinational
 * path from out_ready_i (or in_valid) to in_ready, nor from in_valid to
 * out_valid_i. out_data_i is the oldest beat FIFO i holds.
 *
 * Cycle model. Cycle t is the clock period that ends with rising edge t+1;
 * a beat is accepted on cycle t when in_valid and in_ready are high in it,
 * output i gives a beat on cycle t when out_valid_i is high in it (with
 * out_ready_i high it is taken at the end of that cycle). A beat accepted
 * on cycle t is in FIFO i from cycle t+1 on: if FIFO i was empty, or held
 * one beat that was taken on cycle t, it is out_valid_i on cycle t+1 (one
 * edge of latency, the least possible with registered outputs). in_ready is
 * high on the first cycle after reset. At full rate (in_valid and both
 * out_ready held high), with t0 the cycle of the first beat:
 *   - DEPTH0, DEPTH1 >= 2: count_i stays at most 1, in_ready is always
 *     high: beat n is accepted on cycle t0 + n and given on both outputs on
 *     cycle t0 + n + 1 (one beat per cycle);
 *   - DEPTH0 = 1 or DEPTH1 = 1: the one-entry FIFO is full on the cycle
 *     after each beat: beat n is accepted on cycle t0 + 2n and given on
 *     both outputs on cycle t0 + 2n + 1 (one beat per two cycles).
 *
 * Depth of the FIFOs in a graph (deadlock freedom). When the two outputs
 * feed two branches that a join (fptgen_concat) takes beat by beat, the
 * join waits for beat n of the branch that is slower to give it (the long
 * branch) while beats n, n+1, ... of the other (the short branch) wait in
 * its FIFO, and the fork stops when that FIFO is full. For a branch X let
 *   N_X = max over n of (the beats X must have accepted to give its output
 *         beat n) - n
 * (its lead: 1 for a direct connection or any chain of register stages,
 * BEATS for fptgen_flatten(BEATS) -> fptgen_serialize(BEATS); a chain of X1
 * then X2 has at most N_X1 + N_X2 - 1), and C_X = the beats X accepts and
 * holds while its output is not taken (0 for a direct connection, 1 per
 * register stage with in_ready = !out_valid || out_ready). With branches
 * that accept whenever their output is not blocked (every fptgen stream
 * block), the graph is deadlock free if, for both (short, long) orders,
 *   DEPTH_short + C_short >= N_long
 * (with the join waiting for the long branch's beat n, the long branch is
 * never blocked, and the fork can push until the short side holds
 * DEPTH_short + C_short beats from n on, which covers the N_long the long
 * branch needs). It is also necessary when the long branch needs its
 * N_long beats for its first output beat (before the join takes beat 0 the
 * fork can push at most DEPTH_short + C_short beats), as flatten ->
 * serialize does. So a direct skip path around flatten(K) -> serialize(K) needs
 * DEPTH >= K, and with K - 1 the graph deadlocks after K - 1 beats.
 * Full rate needs more: with both branches taking a beat per cycle and
 * L_X = the cycles from branch X taking beat n from its FIFO to the join
 * taking pair n (0 for a direct connection), the short FIFO holds
 * L_long - L_short + 1 beats in the steady state, so one beat per cycle
 * needs DEPTH_short >= L_long - L_short + 2 (and DEPTH_long >= 2); each
 * entry fewer costs throughput (not correctness, down to the bound above).
 *
 * Parameters: W, DEPTH0, DEPTH1 >= 1; RAM_STYLE0, RAM_STYLE1 are Vivado
 * ram_style values ("distributed", "block" or "auto"), used only with
 * DEPTHi >= 4 and not checked. Illegal values stop elaboration (the failed
 * check instantiates fptgen_param_error_fork_<reason>, which does not
 * exist).
 *
 * Checked bit and cycle exactly, alone and in a fork -> branches ->
 * fptgen_concat graph with the depth rule above, by
 * generator/tests/rtl/fork.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_fork #(
    // Bits per beat (>= 1)
    parameter integer W = 8,
    // FIFO entries (beats) on output 0 and output 1 (>= 1); 1 halves the
    // rate, >= 2 gives a beat per cycle
    parameter integer DEPTH0 = 2,
    parameter integer DEPTH1 = 2,
    // Vivado ram_style of each FIFO's RAM, used when its DEPTH >= 4:
    // "distributed", "block" or "auto" (read only by the synthesis
    // attributes below, which Verilator does not count as a use)
    /* verilator lint_off UNUSEDPARAM */
    parameter RAM_STYLE0 = "auto",
    parameter RAM_STYLE1 = "auto"
    /* verilator lint_on UNUSEDPARAM */
) (
    input  wire         clk,
    input  wire         rst,

    input  wire [W-1:0] in_data,
    input  wire         in_valid,
    output wire         in_ready,

    output wire [W-1:0] out0_data,
    output wire         out0_valid,
    input  wire         out0_ready,

    output wire [W-1:0] out1_data,
    output wire         out1_valid,
    input  wire         out1_ready
);

`include "fptgen_clog2.vh"

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (W < 1) begin : g_error_w_below_1
        fptgen_param_error_fork_w_below_1 error_inst ();
    end
    if (DEPTH0 < 1) begin : g_error_depth0_below_1
        fptgen_param_error_fork_depth0_below_1 error_inst ();
    end
    if (DEPTH1 < 1) begin : g_error_depth1_below_1
        fptgen_param_error_fork_depth1_below_1 error_inst ();
    end
endgenerate

// Storage in RAM from this depth on, registers below it.
localparam integer RAM_MIN_DEPTH = 4;

wire [1:0]   full;
wire [1:0]   valid;
wire [2*W-1:0] data;
wire [1:0]   out_ready = {out1_ready, out0_ready};

assign in_ready = !full[0] && !full[1];
wire push = in_valid && in_ready;

// ---------------------------------------------------------------------------
// FIFO i (the same logic twice; only the RAM's attribute differs)
generate
    genvar i;
    for (i = 0; i < 2; i = i + 1) begin : g_fifo
        localparam integer D = i == 0 ? DEPTH0 : DEPTH1;
        localparam integer CW = clog2(D + 1);   // count 0..D
        localparam [CW-1:0] D_C = D[CW-1:0];

        reg [CW-1:0] count_reg;
        reg          valid_reg;
        reg          full_reg;

        wire pop = valid_reg && out_ready[i];
        wire [CW-1:0] count_next = count_reg + {{CW-1{1'b0}}, push} - {{CW-1{1'b0}}, pop};

        always @(posedge clk) begin
            if (rst) begin
                count_reg <= {CW{1'b0}};
                valid_reg <= 1'b0;
                full_reg <= 1'b0;
            end else begin
                count_reg <= count_next;
                valid_reg <= count_next != {CW{1'b0}};
                full_reg <= count_next == D_C;
            end
        end

        assign valid[i] = valid_reg;
        assign full[i] = full_reg;

        if (D == 1) begin : g_one
            // One entry: written when empty (push implies count 0)
            reg [W-1:0] q_reg;
            always @(posedge clk) begin
                if (push) begin
                    q_reg <= in_data;
                end
            end
            assign data[i*W +: W] = q_reg;
        end else begin : g_ptr
            localparam integer PW = clog2(D);   // entry 0..D-1
            localparam integer LAST_I = D - 1;
            localparam [PW-1:0] LAST = LAST_I[PW-1:0];

            reg  [PW-1:0] wr_reg;
            reg  [PW-1:0] rd_reg;                 // the head's entry
            wire [PW-1:0] wr_inc = wr_reg == LAST ? {PW{1'b0}} : wr_reg + 1'b1;
            wire [PW-1:0] rd_inc = rd_reg == LAST ? {PW{1'b0}} : rd_reg + 1'b1;

            always @(posedge clk) begin
                if (rst) begin
                    wr_reg <= {PW{1'b0}};
                    rd_reg <= {PW{1'b0}};
                end else begin
                    if (push) begin
                        wr_reg <= wr_inc;
                    end
                    if (pop) begin
                        rd_reg <= rd_inc;
                    end
                end
            end

            if (D < RAM_MIN_DEPTH) begin : g_regs
                // Registers, not a LUTRAM (an array read asynchronously
                // would be inferred as one)
                (* ram_style = "registers" *)
                reg [W-1:0] mem [0:D-1];
                always @(posedge clk) begin
                    if (push) begin
                        mem[wr_reg] <= in_data;
                    end
                end
                assign data[i*W +: W] = mem[rd_reg];
            end else begin : g_ram
                // The head: in the RAM's read register (sel_reg) or in the
                // bypass register.
                wire [W-1:0] ram_q;
                reg  [W-1:0] byp_reg;
                reg          sel_reg;
                // The pushed beat becomes the head on this edge.
                wire bypass = push && (count_reg == {CW{1'b0}} || (count_reg == {{CW-1{1'b0}}, 1'b1} && pop));
                // The next head was written on an earlier edge: read it.
                wire load = pop && count_reg > {{CW-1{1'b0}}, 1'b1};

                if (i == 0) begin : g_mem
                    (* ram_style = RAM_STYLE0 *)
                    reg [W-1:0] mem [0:D-1];
                    reg [W-1:0] q_reg;
                    always @(posedge clk) begin
                        if (push) begin
                            mem[wr_reg] <= in_data;
                        end
                    end
                    always @(posedge clk) begin
                        if (load) begin
                            q_reg <= mem[rd_inc];
                        end
                    end
                    assign ram_q = q_reg;
                end else begin : g_mem
                    (* ram_style = RAM_STYLE1 *)
                    reg [W-1:0] mem [0:D-1];
                    reg [W-1:0] q_reg;
                    always @(posedge clk) begin
                        if (push) begin
                            mem[wr_reg] <= in_data;
                        end
                    end
                    always @(posedge clk) begin
                        if (load) begin
                            q_reg <= mem[rd_inc];
                        end
                    end
                    assign ram_q = q_reg;
                end

                always @(posedge clk) begin
                    if (bypass) begin
                        byp_reg <= in_data;
                    end
                end
                always @(posedge clk) begin
                    if (rst) begin
                        sel_reg <= 1'b0;
                    end else if (bypass) begin
                        sel_reg <= 1'b0;
                    end else if (load) begin
                        sel_reg <= 1'b1;
                    end
                end
                assign data[i*W +: W] = sel_reg ? ram_q : byp_reg;
            end
        end
    end
endgenerate

assign out0_data = data[0 +: W];
assign out0_valid = valid[0];
assign out1_data = data[W +: W];
assign out1_valid = valid[1];

endmodule

`resetall
