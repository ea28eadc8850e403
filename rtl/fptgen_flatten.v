/*
 * fptgen RTL library: flatten, a stream of beats to one whole vector (the
 * `flatten` layer kind: an image [H, W, C] as the vector of its values in C
 * order).
 *
 * An image streams as BEATS beats of BEAT_W bits (docs/hardware.md,
 * "Streams of images": one pixel per beat in row-major order, channel c at
 * bits [c*X_W +: X_W] of a beat, so BEATS = H*W and BEAT_W = C*X_W). The
 * output is one beat per image, the vector of BEATS*BEAT_W bits with beat k
 * at bits [k*BEAT_W +: BEAT_W]: value c of pixel p is element p*C + c, the
 * image in C order ((y, x, c), pixel-major). Codes are not changed. Images
 * follow each other back to back: the beat after an image's last is the
 * next image's beat 0.
 *
 * Structure. A beat counter. Beats 0 .. BEATS-2 are shifted into a
 * collecting register ((BEATS-1)*BEAT_W bits: after them beat k sits at
 * bits [k*BEAT_W +: BEAT_W]); accepting the last beat loads the output
 * register with {last beat, collected beats}. No RAM: the vector is needed
 * whole. With BEATS = 1 there is no collecting register and the block is a
 * register stage. Registers: the collecting and output registers
 * ((2*BEATS-1)*BEAT_W bits), the counter.
 *
 * Handshake. out_data/out_valid is a register. Beats 0 .. BEATS-2 are
 * accepted whenever offered (they do not depend on the output); the last
 * beat (counter at BEATS-1) waits while the output register holds a vector
 * that is not being taken:
 *   in_ready = !(last && out_valid && !out_ready),
 * combinational in out_ready as fptgen_dense's. Accepting the last beat
 * sets out_valid; otherwise out_valid clears on an edge with out_ready high.
 * The next image's beats are accepted while the previous vector waits.
 * Nothing is ever lost or repeated.
 *
 * Cycle model. Cycle t is the clock period that ends with rising edge t+1;
 * a beat is accepted on cycle t when in_valid and in_ready are high in it,
 * a vector is output on cycle t when out_valid is high in it (with
 * out_ready high it is taken at the end of that cycle). With in_valid held
 * high (beats always offered) and out_ready held high, in_ready is always
 * high. Let t0 be the cycle on which an image's beat 0 is accepted. Then
 *   - beat k is accepted on cycle t0 + k;
 *   - the next image's beat 0 on cycle t0 + BEATS: images follow each other
 *     every BEATS cycles (one vector per BEATS cycles);
 *   - the vector is output on cycle t0 + BEATS, the cycle after its last
 *     beat is accepted (latency: valid one edge after the last beat's).
 * in_ready is high on the first cycle after reset.
 *
 * Parameters: BEATS, BEAT_W >= 1. Illegal values stop elaboration (the
 * failed check instantiates fptgen_param_error_flatten_<reason>, which does
 * not exist).
 *
 * Checked bit and cycle exactly by generator/tests/rtl/flatten.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_flatten #(
    // Beats (pixels) per image (>= 1)
    parameter integer BEATS = 4,
    // Bits per beat (>= 1): channels per pixel times bits per value
    parameter integer BEAT_W = 8
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [BEAT_W-1:0]       in_data,
    input  wire                    in_valid,
    output wire                    in_ready,

    output wire [BEATS*BEAT_W-1:0] out_data,
    output wire                    out_valid,
    input  wire                    out_ready
);

`include "fptgen_clog2.vh"

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (BEATS < 1 || BEAT_W < 1) begin : g_error_size_below_1
        fptgen_param_error_flatten_size_below_1 error_inst ();
    end
endgenerate

localparam integer VW = BEATS * BEAT_W;   // bits per vector
localparam integer KW = clog2(BEATS);     // beat index 0..BEATS-1
localparam integer LAST_K_I = BEATS - 1;
localparam [KW-1:0] LAST_K = LAST_K_I[KW-1:0];

// ---------------------------------------------------------------------------
// Beat counter; last_reg: the counter is at BEATS-1 (always, for BEATS = 1)
reg [KW-1:0] k_reg;
reg          last_reg;
reg          out_valid_reg;
reg [VW-1:0] out_data_reg;

assign in_ready = !(last_reg && out_valid_reg && !out_ready);
wire accept = in_valid && in_ready;

wire [KW-1:0] k_next = last_reg ? {KW{1'b0}} : k_reg + 1'b1;

always @(posedge clk) begin
    if (rst) begin
        k_reg <= {KW{1'b0}};
        last_reg <= BEATS == 1;
    end else if (accept) begin
        k_reg <= k_next;
        last_reg <= k_next == LAST_K;
    end
end

// ---------------------------------------------------------------------------
// Collecting register and output register
generate
    if (BEATS >= 2) begin : g_collect
        // Beats 0 .. BEATS-2, shifted in from the top
        reg [VW-BEAT_W-1:0] coll_reg;
        if (BEATS >= 3) begin : g_shift
            always @(posedge clk) begin
                if (accept && !last_reg) begin
                    coll_reg <= {in_data, coll_reg[VW-BEAT_W-1:BEAT_W]};
                end
            end
        end else begin : g_one
            always @(posedge clk) begin
                if (accept && !last_reg) begin
                    coll_reg <= in_data;
                end
            end
        end
        always @(posedge clk) begin
            if (accept && last_reg) begin
                out_data_reg <= {in_data, coll_reg};
            end
        end
    end else begin : g_stage
        always @(posedge clk) begin
            if (accept) begin
                out_data_reg <= in_data;
            end
        end
    end
endgenerate

always @(posedge clk) begin
    if (rst) begin
        out_valid_reg <= 1'b0;
    end else if (accept && last_reg) begin
        out_valid_reg <= 1'b1;
    end else if (out_ready) begin
        out_valid_reg <= 1'b0;
    end
end

assign out_data = out_data_reg;
assign out_valid = out_valid_reg;

endmodule

`resetall
