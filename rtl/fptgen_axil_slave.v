/*
 * fptgen RTL library: an AXI4-Lite slave (32-bit data) that serves one
 * transaction at a time through a simple register port (the AXI wrapper's
 * s_axil, docs/hardware.md, "AXI wrapper").
 *
 * States: IDLE, WRITE, READ, READ_MEM, B, R (reset: IDLE).
 *
 * IDLE. A write is taken when both its address and data are valid, a read
 * when its address is; when a write and a read wait together they are
 * taken in turn (a flag, reset to 0, is set by a write taken and cleared
 * by a read taken; with it set the read goes first), so that a stream of
 * writes cannot starve reads:
 *   take_write = IDLE && awvalid && wvalid && !(arvalid && read_turn)
 *   take_read  = IDLE && !take_write && arvalid
 *   awready = wready = take_write, arready = take_read
 * A write taken stores AWADDR, WDATA and WSTRB and goes to WRITE; a read
 * stores ARADDR and goes to READ. The stored address, data and strobe stay
 * until the next transaction is taken (reg_addr, reg_wdata).
 *
 * WRITE (one cycle; reg_write high). The write happens in this cycle if
 * all four bytes are strobed (reg_wfull: WSTRB 4'b1111) and the register
 * side does not refuse it (reg_werr); BRESP <= SLVERR if !reg_wfull or
 * reg_werr, else OKAY; then B.
 *
 * READ (one cycle; reg_read high). With reg_rwait the data comes a cycle
 * later: RRESP <= OKAY, then READ_MEM. Otherwise RRESP <= SLVERR if
 * reg_rerr, else OKAY; RDATA <= reg_rerr ? 0 : reg_rdata; then R.
 *
 * READ_MEM (one cycle). RDATA <= reg_rdata_late; then R.
 *
 * B: bvalid = 1 until bready (then IDLE). R: rvalid = 1 until rready (then
 * IDLE); RDATA and RRESP hold. bresp and rresp are {refused, 1'b0} as of
 * the last write and read (they hold between transactions).
 *
 * So a transaction is answered 2 (write, read) or 3 (read with reg_rwait)
 * cycles after the edge that takes it. AWPROT and ARPROT are ignored.
 *
 * Parameters: ADDR_W from 3 to 32. Illegal values stop elaboration (the
 * failed check instantiates fptgen_param_error_axil_slave_<reason>, which
 * does not exist).
 *
 * Checked cycle by cycle by generator/tests/rtl/axil_slave.rs.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fptgen_axil_slave #(
    // Address bits (byte address; from 3 to 32)
    parameter integer ADDR_W = 8
) (
    input  wire              clk,
    input  wire              rst,

    input  wire [ADDR_W-1:0] s_axil_awaddr,
    input  wire [2:0]        s_axil_awprot,
    input  wire              s_axil_awvalid,
    output wire              s_axil_awready,
    input  wire [31:0]       s_axil_wdata,
    input  wire [3:0]        s_axil_wstrb,
    input  wire              s_axil_wvalid,
    output wire              s_axil_wready,
    output wire [1:0]        s_axil_bresp,
    output wire              s_axil_bvalid,
    input  wire              s_axil_bready,
    input  wire [ADDR_W-1:0] s_axil_araddr,
    input  wire [2:0]        s_axil_arprot,
    input  wire              s_axil_arvalid,
    output wire              s_axil_arready,
    output wire [31:0]       s_axil_rdata,
    output wire [1:0]        s_axil_rresp,
    output wire              s_axil_rvalid,
    input  wire              s_axil_rready,

    // The register port: the current transaction's address and write data
    output wire [ADDR_W-1:0] reg_addr,
    output wire [31:0]       reg_wdata,
    // The write's cycle (state WRITE), and whether all four bytes are
    // strobed (a write without them is refused by this module)
    output wire              reg_write,
    output wire              reg_wfull,
    // With reg_write: refuse the write (SLVERR)
    input  wire              reg_werr,
    // The read's first cycle (state READ)
    output wire              reg_read,
    // With reg_read: the data comes a cycle later, on reg_rdata_late (OKAY)
    input  wire              reg_rwait,
    // With reg_read and not reg_rwait: refuse the read (SLVERR, data 0)
    input  wire              reg_rerr,
    // With reg_read and neither reg_rwait nor reg_rerr: the data
    input  wire [31:0]       reg_rdata,
    // The cycle after reg_read with reg_rwait (state READ_MEM): the data
    input  wire [31:0]       reg_rdata_late
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (ADDR_W < 3 || ADDR_W > 32) begin : g_error_addr_w_not_3_to_32
        fptgen_param_error_axil_slave_addr_w_not_3_to_32 error_inst ();
    end
endgenerate

localparam [2:0] S_IDLE = 3'd0, S_WRITE = 3'd1, S_READ = 3'd2, S_READ_MEM = 3'd3, S_B = 3'd4, S_R = 3'd5;
reg [2:0] state_reg;
reg [ADDR_W-1:0] addr_reg;
reg [31:0] wdata_reg;
reg [3:0] wstrb_reg;
reg [31:0] rdata_reg;
reg bresp_reg;   // the write was refused (SLVERR)
reg rresp_reg;   // the read was refused (SLVERR)

// A write and a read waiting together are taken in turn (the read first
// after a write), so that a stream of writes cannot starve STATUS polls.
reg read_turn_reg;
wire write_waiting = s_axil_awvalid && s_axil_wvalid;
wire take_write = state_reg == S_IDLE && write_waiting && !(s_axil_arvalid && read_turn_reg);
wire take_read = state_reg == S_IDLE && !take_write && s_axil_arvalid;
assign s_axil_awready = take_write;
assign s_axil_wready = take_write;
assign s_axil_arready = take_read;
assign s_axil_bvalid = state_reg == S_B;
assign s_axil_bresp = {bresp_reg, 1'b0};
assign s_axil_rvalid = state_reg == S_R;
assign s_axil_rresp = {rresp_reg, 1'b0};
assign s_axil_rdata = rdata_reg;
wire unused_prot = ^{s_axil_awprot, s_axil_arprot};

// A write must strobe all four bytes: a partial write (WSTRB not 4'b1111)
// is refused with SLVERR and changes nothing.
wire full_strobe = wstrb_reg == 4'b1111;

assign reg_addr = addr_reg;
assign reg_wdata = wdata_reg;
assign reg_write = state_reg == S_WRITE;
assign reg_wfull = full_strobe;
assign reg_read = state_reg == S_READ;

always @(posedge clk) begin
    if (rst) begin
        state_reg <= S_IDLE;
        addr_reg <= {ADDR_W{1'b0}};
        wdata_reg <= 32'd0;
        wstrb_reg <= 4'd0;
        read_turn_reg <= 1'b0;
        rdata_reg <= 32'd0;
        bresp_reg <= 1'b0;
        rresp_reg <= 1'b0;
    end else begin
        case (state_reg)
            S_IDLE: begin
                if (take_write) begin
                    read_turn_reg <= 1'b1;
                    addr_reg <= s_axil_awaddr;
                    wdata_reg <= s_axil_wdata;
                    wstrb_reg <= s_axil_wstrb;
                    state_reg <= S_WRITE;
                end else if (take_read) begin
                    read_turn_reg <= 1'b0;
                    addr_reg <= s_axil_araddr;
                    state_reg <= S_READ;
                end
            end
            S_WRITE: begin
                // Written (or refused) in this cycle: a partial strobe, or
                // a write the register side refuses, gets SLVERR.
                bresp_reg <= !full_strobe || reg_werr;
                state_reg <= S_B;
            end
            S_READ: begin
                if (reg_rwait) begin
                    rresp_reg <= 1'b0;
                    state_reg <= S_READ_MEM;
                end else begin
                    // A read the register side refuses: SLVERR, data 0.
                    rresp_reg <= reg_rerr;
                    rdata_reg <= reg_rerr ? 32'd0 : reg_rdata;
                    state_reg <= S_R;
                end
            end
            S_READ_MEM: begin
                rdata_reg <= reg_rdata_late;
                state_reg <= S_R;
            end
            S_B: begin
                if (s_axil_bready) begin
                    state_reg <= S_IDLE;
                end
            end
            S_R: begin
                if (s_axil_rready) begin
                    state_reg <= S_IDLE;
                end
            end
            default: state_reg <= S_IDLE;
        endcase
    end
end

endmodule

`resetall
