/*
 * fptgen RTL library: I/O shell for place and route on a real package.
 *
 * A generated design has hundreds of port bits (tiny: 247, jet_tagging:
 * 668), more than a package has pins. `fptgen implement` places and routes
 * the design inside this shell instead, which needs three pins besides the
 * clock: every input of the design is a flip-flop of a serial shift
 * register (`sin` in, one bit per cycle), and every output is captured by a
 * flip-flop of a parallel-load shift register (`sload` high: load the
 * design's outputs; low: shift them out on `sout`). So every path into and
 * out of the design starts or ends at a flip-flop next to it, as in a
 * system that registers the design's ports, and the router sees the
 * design's own register-to-register paths; the shell adds one LUT level
 * (the load multiplexer) in front of each capture flip-flop and nothing
 * else. It is for timing and bitstreams, not a way to use the design.
 *
 * Cycle model, on every rising edge of clk:
 *   core_in  <= {core_in[IN_W-2:0], sin}              (core_in[0] is newest)
 *   cap      <= sload ? core_out : {1'b0, cap[OUT_W-1:1]}
 *   sout      = cap[0]
 * No reset: the shell's state after power-up is what the bitstream's
 * initial values make it (zero).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_io_shell #(
    // Bits of the design's inputs, the clock excluded (1 or more)
    parameter integer IN_W = 8,
    // Bits of the design's outputs (1 or more)
    parameter integer OUT_W = 8
) (
    input  wire             clk,

    // Pins
    input  wire             sin,
    input  wire             sload,
    output wire             sout,

    // The design's ports
    output wire [IN_W-1:0]  core_in,
    input  wire [OUT_W-1:0] core_out
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (IN_W < 1) begin : g_error_in_w_below_1
        fptgen_param_error_io_shell_in_w_below_1 error_inst ();
    end
    if (OUT_W < 1) begin : g_error_out_w_below_1
        fptgen_param_error_io_shell_out_w_below_1 error_inst ();
    end
endgenerate

reg [IN_W-1:0]  in_reg = {IN_W{1'b0}};
reg [OUT_W-1:0] cap_reg = {OUT_W{1'b0}};

generate
    if (IN_W == 1) begin : g_in_one
        always @(posedge clk) begin
            in_reg <= sin;
        end
    end else begin : g_in_shift
        always @(posedge clk) begin
            in_reg <= {in_reg[IN_W-2:0], sin};
        end
    end
    if (OUT_W == 1) begin : g_out_one
        always @(posedge clk) begin
            cap_reg <= sload ? core_out : 1'b0;
        end
    end else begin : g_out_shift
        always @(posedge clk) begin
            cap_reg <= sload ? core_out : {1'b0, cap_reg[OUT_W-1:1]};
        end
    end
endgenerate

assign core_in = in_reg;
assign sout = cap_reg[0];

endmodule

`resetall
