/*
 * fptgen RTL library: the ES update's step of one parameter.
 *
 *   step = R(grad / 2^LR_SHIFT)
 *
 * (grad * 2^-LR_SHIFT, exact, when LR_SHIFT is negative), where R rounds
 * to the nearest integer with ties to even (AP_RND_CONV) by fptgen_cast;
 * the step is exact in its width, 33 bits plus -LR_SHIFT for a negative
 * shift (docs/training.md, "One group"). fptgen_es_update subtracts it
 * from the parameter. The trainer's top level computes it for the block
 * that is at the ring's unit in the next cycle (whose update it computes
 * then, a cycle before the write) and registers it, so that the
 * selection and the rounding are one path, the subtraction and the clamp
 * another.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_es_step #(
    // The update subtracts grad / 2^LR_SHIFT, rounded (-31..31; a
    // negative shift multiplies by 2^-LR_SHIFT)
    parameter integer LR_SHIFT = 4
) (
    input  wire [31:0]    grad,
    output wire [32+(LR_SHIFT < 0 ? -LR_SHIFT : 0):0] step
);

localparam integer ST_W = 33 + (LR_SHIFT < 0 ? -LR_SHIFT : 0);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (LR_SHIFT < -31 || LR_SHIFT > 31) begin : g_error_out_of_range
        fptgen_param_error_es_step_out_of_range error_inst ();
    end
endgenerate

fptgen_cast #(
    .IN_W(32), .IN_F(LR_SHIFT), .OUT_W(ST_W), .OUT_F(0), .OUT_SIGNED(1), .QUANT(6), .OVF(0)
) u_step_round (
    .in(grad),
    .out(step)
);

endmodule

`resetall
