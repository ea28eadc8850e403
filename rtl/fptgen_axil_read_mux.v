/*
 * fptgen RTL library: the register read multiplexer of the AXI wrapper's
 * AXI4-Lite register map (docs/hardware.md, "AXI wrapper";
 * driver/registers.md). Purely combinational.
 *
 * N registers of 32 bits: register k at word address ADDRS[k*AW +: AW],
 * its value values[k*32 +: 32] (a constant, or a live status word, as the
 * instance wires it). For a word address addr:
 *   rdata = values of the register at addr, or 0 if none is there
 * (an unmapped address reads 0). No two registers share an address.
 *
 * Parameters: N >= 1, AW from 1 to 32, ADDRS the N addresses, all
 * different. Illegal values stop elaboration (the failed check
 * instantiates fptgen_param_error_axil_read_mux_<reason>, which does not
 * exist).
 *
 * Checked exhaustively over addresses by generator/tests/rtl/axil_read_mux.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_axil_read_mux #(
    // Registers (>= 1)
    parameter integer N = 2,
    // Bits of a word address (1 to 32)
    parameter integer AW = 8,
    // Register k's word address at [k*AW +: AW], all different
    parameter [N*AW-1:0] ADDRS = {8'd1, 8'd0}
) (
    input  wire [AW-1:0]   addr,
    input  wire [N*32-1:0] values,
    output reg  [31:0]     rdata
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (N < 1 || AW < 1 || AW > 32) begin : g_error_size
        fptgen_param_error_axil_read_mux_size_out_of_range error_inst ();
    end
endgenerate

genvar i, j;
generate
    for (i = 0; i < N; i = i + 1) begin : g_check_i
        for (j = i + 1; j < N; j = j + 1) begin : g_check_j
            if (ADDRS[i*AW +: AW] == ADDRS[j*AW +: AW]) begin : g_error_duplicate
                fptgen_param_error_axil_read_mux_duplicate_address error_inst ();
            end
        end
    end
endgenerate

// One compare per register, and the values of those that match OR-ed
// together (at most one does).
wire [N-1:0] match;
genvar m;
generate
    for (m = 0; m < N; m = m + 1) begin : g_match
        assign match[m] = addr == ADDRS[m*AW +: AW];
    end
endgenerate

integer k;
always @(*) begin
    rdata = 32'd0;
    for (k = 0; k < N; k = k + 1) begin
        rdata = rdata | ({32{match[k]}} & values[k*32 +: 32]);
    end
end

endmodule

`resetall
