/*
 * fptgen RTL library: one trainable tensor's window in the AXI wrapper's
 * AXI4-Lite address space (docs/hardware.md, "AXI wrapper"): the address
 * decode and the read data's extension to 32 bits. Purely combinational.
 *
 * The window is 2^SHIFT bytes at BASE (SHIFT = A_W + C_W + 2, BASE a
 * multiple of 2^SHIFT); column c of memory word w is at byte
 * BASE + ((w << C_W) | c) * 4. For a byte address addr:
 *   word = addr[SHIFT-1:C_W+2], col = addr[C_W+1:2]
 *   hit  = addr[ADDR_W-1:SHIFT] == BASE >> SHIFT && word < DEPTH
 *          && col < COLS
 * (the two low bits are ignored). The outputs are zero without a hit, so
 * that the windows of a design, which never overlap, combine by OR:
 *   host_sel  = hit ? INDEX : 0                      (SEL_W bits)
 *   host_addr = hit ? word : 0, zero-extended        (HOST_A_W bits)
 *   host_col  = hit ? col : 0, zero-extended         (HOST_C_W bits)
 *   rdata     = hit ? host_rdata[WIDTH-1:0] sign- (SIGNED = 1) or
 *               zero-extended (SIGNED = 0) to 32 bits : 0
 *
 * Parameters (the generator's AxiPlan windows): 3 < A_W + C_W + 2 < ADDR_W
 * <= 31, A_W and C_W >= 1, DEPTH from 1 to 2^A_W, COLS from 1 to 2^C_W,
 * INDEX below 2^SEL_W, HOST_A_W >= A_W, HOST_C_W >= C_W, BASE a multiple
 * of 2^SHIFT below 2^ADDR_W, WIDTH from 1 to 32 and at most DATA_W,
 * SIGNED 0 or 1. Illegal values stop elaboration (the failed check
 * instantiates fptgen_param_error_axil_window_<reason>, which does not
 * exist).
 *
 * Checked exhaustively over addresses by generator/tests/rtl/axil_window.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_axil_window #(
    // AXI4-Lite byte address bits (at most 31)
    parameter integer ADDR_W = 13,
    // Byte offset of word 0, column 0 (a multiple of 2^(A_W + C_W + 2))
    parameter integer BASE = 4096,
    // Bits of the memory's word address and of its column select (>= 1)
    parameter integer A_W = 1,
    parameter integer C_W = 2,
    // Memory words (1 to 2^A_W) and parameters per word (1 to 2^C_W)
    parameter integer DEPTH = 1,
    parameter integer COLS = 4,
    // The tensor's index in training order (host_sel), below 2^SEL_W
    parameter integer INDEX = 0,
    // Bits of host_sel, host_addr and host_col (the host port's: the
    // widest of any tensor's)
    parameter integer SEL_W = 1,
    parameter integer HOST_A_W = 1,
    parameter integer HOST_C_W = 2,
    // Bits of host_rdata (the host port's) and of one parameter (1 to 32,
    // at most DATA_W)
    parameter integer DATA_W = 8,
    parameter integer WIDTH = 8,
    // The parameter is two's complement (1: sign-extended) or not (0)
    parameter integer SIGNED = 1
) (
    input  wire [ADDR_W-1:0]   addr,
    output wire                hit,
    output wire [SEL_W-1:0]    host_sel,
    output wire [HOST_A_W-1:0] host_addr,
    output wire [HOST_C_W-1:0] host_col,
    input  wire [DATA_W-1:0]   host_rdata,
    output wire [31:0]         rdata
);

localparam integer SHIFT = A_W + C_W + 2;

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (A_W < 1 || C_W < 1 || SHIFT >= ADDR_W || ADDR_W > 31 || DEPTH < 1 || ((DEPTH - 1) >> A_W) != 0 || COLS < 1 || ((COLS - 1) >> C_W) != 0
            || SEL_W < 1 || INDEX < 0 || (INDEX >> SEL_W) != 0 || HOST_A_W < A_W || HOST_C_W < C_W) begin : g_error_geometry
        fptgen_param_error_axil_window_geometry_out_of_range error_inst ();
    end
    if (BASE < 0 || BASE % (1 << SHIFT) != 0 || (BASE >> ADDR_W) != 0) begin : g_error_base
        fptgen_param_error_axil_window_base_out_of_range error_inst ();
    end
    if (WIDTH < 1 || WIDTH > 32 || WIDTH > DATA_W || (SIGNED != 0 && SIGNED != 1)) begin : g_error_format
        fptgen_param_error_axil_window_format_out_of_range error_inst ();
    end
endgenerate

localparam integer HI_W = ADDR_W - SHIFT;
localparam integer BASE_HI_I = BASE >> SHIFT;
localparam [HI_W-1:0] BASE_HI = BASE_HI_I[HI_W-1:0];
localparam [A_W:0] DEPTH_C = DEPTH[A_W:0];
localparam [C_W:0] COLS_C = COLS[C_W:0];
localparam [SEL_W-1:0] INDEX_C = INDEX[SEL_W-1:0];

wire [A_W-1:0] word = addr[SHIFT-1:C_W+2];
wire [C_W-1:0] col = addr[C_W+1:2];
wire unused_byte_addr = ^addr[1:0];

assign hit = addr[ADDR_W-1:SHIFT] == BASE_HI && {1'b0, word} < DEPTH_C && {1'b0, col} < COLS_C;
assign host_sel = hit ? INDEX_C : {SEL_W{1'b0}};

generate
    if (HOST_A_W > A_W) begin : g_addr_pad
        assign host_addr = hit ? {{(HOST_A_W-A_W){1'b0}}, word} : {HOST_A_W{1'b0}};
    end else begin : g_addr
        assign host_addr = hit ? word : {HOST_A_W{1'b0}};
    end
    if (HOST_C_W > C_W) begin : g_col_pad
        assign host_col = hit ? {{(HOST_C_W-C_W){1'b0}}, col} : {HOST_C_W{1'b0}};
    end else begin : g_col
        assign host_col = hit ? col : {HOST_C_W{1'b0}};
    end
    if (WIDTH < 32) begin : g_extend
        wire fill = SIGNED != 0 && host_rdata[WIDTH-1];
        assign rdata = hit ? {{(32-WIDTH){fill}}, host_rdata[WIDTH-1:0]} : 32'd0;
    end else begin : g_whole
        assign rdata = hit ? host_rdata[31:0] : 32'd0;
    end
    if (DATA_W > WIDTH) begin : g_data_pad
        wire unused_rdata = ^host_rdata[DATA_W-1:WIDTH];
    end
endgenerate

endmodule

`resetall
