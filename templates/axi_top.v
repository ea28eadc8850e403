{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * AXI wrapper of {= a.core =} (fptgen generate --axi; docs/hardware.md, "AXI wrapper").
 *
 * s_axis (AXI4-Stream in): {= a.inputs =} input elements of {= a.in_w =} bits per vector,
 *   {= a.core_in_beats =} beat(s) of {= a.core_in =} bits per vector, each beat sent as {= a.in_k =} transfer(s)
 *   of TDATA {= a.bus_in =} bits (beat bits [k*{= a.bus_in =} +: {= a.bus_in =}] in transfer k, padding
 *   zero); element e of a beat at bits [e*{= a.in_w =} +: {= a.in_w =}]. TLAST is ignored.
 * m_axis (AXI4-Stream out): {= a.outputs =} output elements of {= a.out_w =} bits, {= a.core_out_beats =} beat(s) of
 *   {= a.core_out =} bits per vector as {= a.out_k =} transfer(s) of TDATA {= a.bus_out =} bits each; TLAST
 *   on the last transfer of every TLAST_BATCH-th vector. Back-pressure
 *   (TREADY low) stalls the pipeline.
{%- if let Some(t) = a.trainer %}
 * s_axis_ld (AXI4-Stream in, sample load): one transfer per buffer word,
 *   the word ({= t.word_w =} bits, {= t.words =} per input vector, word 0 first) in
 *   TDATA[{= t.word_w - 1 =}:0] and the target ({= t.target_w =} bits) in TDATA[{= t.target_at + t.target_w - 1 =}:{= t.target_at =}]
 *   (read with the last word of a sample); accepted while training is not
 *   running. TLAST is ignored.
{%- endif %}
 * s_axil (AXI4-Lite slave, 32-bit data, {= a.addr_w =}-bit addresses): the register map of
 *   driver/registers.md{% if a.trainer.is_some() %} (control, status, events) and a window per trainable
 *   tensor: column c of word w at base + ((w << COL_BITS) | c) * 4, sign- or
 *   zero-extended on reads; a weight read is served while training is not
 *   busy (before a start, or done) or paused, a weight write while it is
 *   not busy; any other weight access is refused at once (SLVERR, nothing
 *   written, reads 0), so that it never holds the bus{% endif %}. One
 *   transaction at a time, each answered within a few cycles; a write
 *   must strobe all four bytes (WSTRB 4'b1111): a partial write is refused
 *   with SLVERR and changes nothing. Other responses are OKAY (unmapped
 *   addresses read 0 and ignore writes).
 *
 * aresetn is active low and synchronous (the core's rst is its inverse).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= a.module =} #
(
    // m_axis TLAST marks the last transfer of every TLAST_BATCH-th output
    // vector (1: every vector; >= 1)
    parameter integer TLAST_BATCH = {= a.batch =}
)
(
    input  wire                   aclk,
    input  wire                   aresetn,

    // AXI4-Stream input (the network's input vectors)
    input  wire [{= a.bus_in - 1 =}:0]         s_axis_tdata,
    input  wire                   s_axis_tvalid,
    output wire                   s_axis_tready,
    input  wire                   s_axis_tlast,

    // AXI4-Stream output (the network's output vectors)
    output wire [{= a.bus_out - 1 =}:0]         m_axis_tdata,
    output wire                   m_axis_tvalid,
    input  wire                   m_axis_tready,
    output wire                   m_axis_tlast,
{%- if let Some(t) = a.trainer %}

    // AXI4-Stream sample load (the training buffer)
    input  wire [{= t.ld_bus - 1 =}:0]         s_axis_ld_tdata,
    input  wire                   s_axis_ld_tvalid,
    output wire                   s_axis_ld_tready,
    input  wire                   s_axis_ld_tlast,
{%- endif %}

    // AXI4-Lite slave (registers{% if a.trainer.is_some() %} and weights{% endif %})
    input  wire [{= a.addr_w - 1 =}:0]         s_axil_awaddr,
    input  wire [2:0]             s_axil_awprot,
    input  wire                   s_axil_awvalid,
    output wire                   s_axil_awready,
    input  wire [31:0]            s_axil_wdata,
    input  wire [3:0]             s_axil_wstrb,
    input  wire                   s_axil_wvalid,
    output wire                   s_axil_wready,
    output wire [1:0]             s_axil_bresp,
    output wire                   s_axil_bvalid,
    input  wire                   s_axil_bready,
    input  wire [{= a.addr_w - 1 =}:0]         s_axil_araddr,
    input  wire [2:0]             s_axil_arprot,
    input  wire                   s_axil_arvalid,
    output wire                   s_axil_arready,
    output wire [31:0]            s_axil_rdata,
    output wire [1:0]             s_axil_rresp,
    output wire                   s_axil_rvalid,
    input  wire                   s_axil_rready
);

// Parameter checks: fptgen_param_error_* modules intentionally do not exist,
// so illegal parameters stop elaboration (docs/hardware.md, "Parameter checks").
generate
    if (TLAST_BATCH < 1) begin : g_error_tlast_batch_below_1
        fptgen_param_error_axi_tlast_batch_below_1 error_inst ();
    end
endgenerate

localparam integer CORE_IN_W = {= a.core_in =};    // a beat of the core's input stream
localparam integer CORE_OUT_W = {= a.core_out =};   // a beat of the core's output stream
localparam integer IN_W = {= a.bus_in =};          // s_axis TDATA
localparam integer OUT_W = {= a.bus_out =};         // m_axis TDATA
localparam integer IN_K = {= a.in_k =};            // transfers per input beat
localparam integer OUT_K = {= a.out_k =};           // transfers per output beat
localparam integer OUT_BEATS = {= a.core_out_beats =};       // output beats per vector
localparam integer ADDR_W = {= a.addr_w =};

wire rst = !aresetn;

// ---------------------------------------------------------------------------
// Input: IN_K transfers gathered into a beat of the core (TLAST ignored)
wire [CORE_IN_W-1:0] core_in_data;
wire core_in_valid;
wire core_in_ready;
fptgen_axis_gather #(
    .IN_W(IN_W),
    .BEAT_W(CORE_IN_W),
    .K(IN_K)
) u_gather (
    .clk(aclk),
    .rst(rst),
    .in_data(s_axis_tdata),
    .in_valid(s_axis_tvalid),
    .in_ready(s_axis_tready),
    .out_data(core_in_data),
    .out_valid(core_in_valid),
    .out_ready(core_in_ready)
);

// ---------------------------------------------------------------------------
// Output: a beat of the core as OUT_K transfers, TLAST by vector count
wire [CORE_OUT_W-1:0] core_out_data;
wire core_out_valid;
wire core_out_ready;
fptgen_axis_scatter #(
    .BEAT_W(CORE_OUT_W),
    .OUT_W(OUT_W),
    .K(OUT_K),
    .BEATS(OUT_BEATS),
    .BATCH(TLAST_BATCH)
) u_scatter (
    .clk(aclk),
    .rst(rst),
    .in_data(core_out_data),
    .in_valid(core_out_valid),
    .in_ready(core_out_ready),
    .out_data(m_axis_tdata),
    .out_valid(m_axis_tvalid),
    .out_ready(m_axis_tready),
    .out_last(m_axis_tlast)
);

// ---------------------------------------------------------------------------
// AXI4-Lite slave: one transaction at a time, through its register port
wire [ADDR_W-1:0] reg_addr;      // the transaction's byte address
wire [31:0] reg_wdata;
wire reg_write;                  // the write's cycle
wire reg_wfull;                  // all four bytes strobed
wire reg_werr;                   // the write is refused (SLVERR)
wire reg_read;                   // the read's first cycle
wire reg_rwait;                  // the read's data comes a cycle later
wire reg_rerr;                   // the read is refused (SLVERR, 0)
wire [31:0] reg_value;           // a register's value
wire [31:0] reg_rdata_late;      // the data of a read that waited
fptgen_axil_slave #(
    .ADDR_W(ADDR_W)
) u_axil (
    .clk(aclk),
    .rst(rst),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awprot(s_axil_awprot),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wready(s_axil_wready),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bready(s_axil_bready),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(s_axil_arprot),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready),
    .reg_addr(reg_addr),
    .reg_wdata(reg_wdata),
    .reg_write(reg_write),
    .reg_wfull(reg_wfull),
    .reg_werr(reg_werr),
    .reg_read(reg_read),
    .reg_rwait(reg_rwait),
    .reg_rerr(reg_rerr),
    .reg_rdata(reg_value),
    .reg_rdata_late(reg_rdata_late)
);

// The register's word address
wire [ADDR_W-3:0] word = reg_addr[ADDR_W-1:2];
wire unused_byte_addr = ^reg_addr[1:0];
wire unused_tlast = s_axis_tlast;
{%- if let Some(t) = a.trainer %}

// ---------------------------------------------------------------------------
// The weight windows: a hit selects a tensor, its word and column (the
// windows do not overlap: each one's outputs are 0 without its hit)
wire [{= t.host.data_w - 1 =}:0] host_rdata;
{%- for w in t.windows %}

// {= w.t.layer =} {= w.t.role =}: {= w.depth =} word(s) of {= w.mem_cols =} column(s), {= w.t.width =}-bit parameters at 0x{= "{:x}"|format(w.base) =}
wire win{= w.t.index =}_hit;
wire [{= t.host.sel_w - 1 =}:0] win{= w.t.index =}_sel;
wire [{= t.host.addr_w - 1 =}:0] win{= w.t.index =}_addr;
wire [{= t.host.col_w - 1 =}:0] win{= w.t.index =}_col;
wire [31:0] win{= w.t.index =}_rdata;
fptgen_axil_window #(
    .ADDR_W(ADDR_W),
    .BASE({= w.base =}),
    .A_W({= w.t.addr_w =}),
    .C_W({= w.t.col_w =}),
    .DEPTH({= w.depth =}),
    .COLS({= w.mem_cols =}),
    .INDEX({= w.t.index =}),
    .SEL_W({= t.host.sel_w =}),
    .HOST_A_W({= t.host.addr_w =}),
    .HOST_C_W({= t.host.col_w =}),
    .DATA_W({= t.host.data_w =}),
    .WIDTH({= w.t.width =}),
    .SIGNED({% if w.t.signed %}1{% else %}0{% endif %})
) u_window{= w.t.index =} (
    .addr(reg_addr),
    .hit(win{= w.t.index =}_hit),
    .host_sel(win{= w.t.index =}_sel),
    .host_addr(win{= w.t.index =}_addr),
    .host_col(win{= w.t.index =}_col),
    .host_rdata(host_rdata),
    .rdata(win{= w.t.index =}_rdata)
);
{%- endfor %}

wire hit = {% for w in t.windows %}{% if !loop.first %} | {% endif %}win{= w.t.index =}_hit{% endfor %};
wire [{= t.host.sel_w - 1 =}:0] hit_sel = {% for w in t.windows %}{% if !loop.first %} | {% endif %}win{= w.t.index =}_sel{% endfor %};
wire [{= t.host.addr_w - 1 =}:0] hit_addr = {% for w in t.windows %}{% if !loop.first %} | {% endif %}win{= w.t.index =}_addr{% endfor %};
wire [{= t.host.col_w - 1 =}:0] hit_col = {% for w in t.windows %}{% if !loop.first %} | {% endif %}win{= w.t.index =}_col{% endfor %};
// The read parameter, sign- or zero-extended to 32 bits
wire [31:0] param_word = {% for w in t.windows %}{% if !loop.first %} | {% endif %}win{= w.t.index =}_rdata{% endfor %};

// ---------------------------------------------------------------------------
// Trainer control, status and events
wire ctl_start, ctl_pause, ctl_resume;
wire [31:0] iterations;
wire st_busy, st_paused, st_done;
wire [31:0] st_iteration;
wire [{= t.group_w - 1 =}:0] st_group;
{%- if !t.feedback %}
wire [{= t.member_w - 1 =}:0] st_member;
wire [31:0] st_last_loss;
wire [1:0] mon_kind;
{%- else %}
wire mon_kind;
{%- endif %}
wire mon_valid;
wire host_wr_ok, host_rd_ok;
wire [31:0] status;
wire [31:0] events0, events1, events2;
wire [31:0] loaded;
fptgen_axil_trainer #(
    .AW(ADDR_W - 2),
    .CONTROL({= a.reg("CONTROL") / 4 =}),
    .ITERATIONS({= a.reg("ITERATIONS") / 4 =})
) u_trainer_regs (
    .clk(aclk),
    .rst(rst),
    // Register writes: full-strobe writes outside the weight windows
    .reg_we(reg_write && reg_wfull && !hit),
    .reg_addr(word),
    .reg_wdata(reg_wdata),
    .ctl_start(ctl_start),
    .ctl_pause(ctl_pause),
    .ctl_resume(ctl_resume),
    .iterations(iterations),
    .st_busy(st_busy),
    .st_paused(st_paused),
    .st_done(st_done),
    .mon_valid(mon_valid),
{%- if t.feedback %}
    .mon_kind({1'b0, mon_kind}),
{%- else %}
    .mon_kind(mon_kind),
{%- endif %}
    .ld_fire(s_axis_ld_tvalid && s_axis_ld_tready),
    .host_wr_ok(host_wr_ok),
    .host_rd_ok(host_rd_ok),
    .status(status),
    .events0(events0),
    .events1(events1),
    .events2(events2),
    .loaded(loaded)
);

// Weights are read while training is neither busy nor starting, or is
// paused; written only while it is neither busy nor starting (a paused ES
// group holds copies of its parameters in registers, which a write would
// miss). Any other weight access is refused at once with SLVERR (STATUS
// bits 3 and 4 say which are served now): one that waited would hold the
// bus, and with it STATUS polls and the pause and resume writes, until the
// run ends. A read served waits a cycle for the memory.
wire host_en = hit && ((reg_write && reg_wfull && host_wr_ok) || (reg_read && host_rd_ok));
wire host_we = reg_write;
assign reg_werr = hit && !host_wr_ok;
assign reg_rwait = hit && host_rd_ok;
assign reg_rerr = hit;
assign reg_rdata_late = param_word;
{%- else %}

// No weights: every write and read is a register's
assign reg_werr = 1'b0;
assign reg_rwait = 1'b0;
assign reg_rerr = 1'b0;
assign reg_rdata_late = 32'd0;
wire unused_regs = ^{reg_wdata, reg_write, reg_wfull, reg_read};
{%- endif %}

// ---------------------------------------------------------------------------
// Register reads (driver/registers.md; other addresses read 0)
wire [31:0] rd_id = 32'h{= a.hex32("id") =};
wire [31:0] rd_version = 32'h{= a.hex32("version") =};
wire [31:0] rd_inputs = 32'd{= a.inputs =};
wire [31:0] rd_outputs = 32'd{= a.outputs =};
wire [31:0] rd_formats = 32'h{= a.hex32("formats") =};
wire [31:0] rd_stream_in = 32'h{= a.hex32("stream_in") =};
wire [31:0] rd_stream_out = 32'h{= a.hex32("stream_out") =};
wire [31:0] rd_batch = TLAST_BATCH;
wire [31:0] rd_trainer = 32'h{= a.hex32("trainer") =};
{%- if let Some(t) = a.trainer %}
wire [31:0] rd_status = status;
wire [31:0] rd_iterations = iterations;
wire [31:0] rd_iteration = st_iteration;
wire [31:0] rd_group = {{% if t.group_w < 32 %}{= 32 - t.group_w =}'d0, {% endif %}st_group};
{%- if !t.feedback %}
wire [31:0] rd_member = {{% if t.member_w < 32 %}{= 32 - t.member_w =}'d0, {% endif %}st_member};
wire [31:0] rd_last_loss = st_last_loss;
wire [31:0] rd_events2 = events2;
{%- else %}
wire [31:0] rd_member = 32'd0;
wire [31:0] rd_last_loss = 32'd0;
wire [31:0] rd_events2 = 32'd0;
wire unused_events2 = ^events2;
{%- endif %}
wire [31:0] rd_events0 = events0;
wire [31:0] rd_events1 = events1;
wire [31:0] rd_loaded = loaded;
{%- endif %}
fptgen_axil_read_mux #(
    .N({= a.read_regs().len() =}),
    .AW(ADDR_W - 2),
    .ADDRS({ {%- for r in a.read_regs() %}{% if !loop.first %}, {% endif %}{= a.addr_w - 2 =}'d{= r.1 =}{% endfor %}})
) u_read_mux (
    .addr(word),
    .values({ {%- for r in a.read_regs() %}{% if !loop.first %}, {% endif %}rd_{= r.0 =}{% endfor %}}),
    .rdata(reg_value)
);
{%- if let Some(t) = a.trainer %}

// ---------------------------------------------------------------------------
// The design with its trainer (the event details are not registered: the
// counters of u_trainer_regs count them)
wire [{= t.mon_index_w - 1 =}:0] unused_mon_index;
wire [{= t.mon_value_w - 1 =}:0] unused_mon_value;
{%- if !t.feedback %}
wire [31:0] unused_mon_grad;
{%- endif %}
{= a.core =} u_core (
    .clk(aclk),
    .rst(rst),
    .in_data(core_in_data),
    .in_valid(core_in_valid),
    .in_ready(core_in_ready),
    .out_data(core_out_data),
    .out_valid(core_out_valid),
    .out_ready(core_out_ready),
    .ld_x(s_axis_ld_tdata[{= t.word_w - 1 =}:0]),
    .ld_t(s_axis_ld_tdata[{= t.target_at + t.target_w - 1 =}:{= t.target_at =}]),
    .ld_valid(s_axis_ld_tvalid),
    .ld_ready(s_axis_ld_tready),
    .ctl_start(ctl_start),
    .ctl_pause(ctl_pause),
    .ctl_resume(ctl_resume),
    .cfg_iterations(iterations),
    .st_busy(st_busy),
    .st_paused(st_paused),
    .st_done(st_done),
    .st_iteration(st_iteration),
    .host_en(host_en),
    .host_we(host_we),
    .host_sel(hit_sel),
    .host_addr(hit_addr),
    .host_col(hit_col),
    .host_wdata(reg_wdata[{= t.host.data_w - 1 =}:0]),
    .host_rdata(host_rdata),
{%- if t.feedback %}
    .st_sample(st_group),
    .mon_valid(mon_valid),
    .mon_kind(mon_kind),
    .mon_index(unused_mon_index),
    .mon_value(unused_mon_value)
{%- else %}
    .st_group(st_group),
    .st_member(st_member),
    .st_last_loss(st_last_loss),
    .mon_valid(mon_valid),
    .mon_kind(mon_kind),
    .mon_index(unused_mon_index),
    .mon_param(unused_mon_value),
    .mon_grad(unused_mon_grad)
{%- endif %}
);
{%- if t.ld_bus > t.target_at + t.target_w || t.target_at > t.word_w %}
wire unused_ld = ^{s_axis_ld_tdata, s_axis_ld_tlast, reg_wdata};
{%- else %}
wire unused_ld = ^{s_axis_ld_tlast, reg_wdata};
{%- endif %}
{%- else %}

// ---------------------------------------------------------------------------
// The inference pipeline
{%- for p in a.tied %}
wire [{= p.3 - 1 =}:0] unused_{= p.0 =}_tr_rdata;
{%- endfor %}
{= a.core =} u_core (
    .clk(aclk),
    .rst(rst),
    .in_data(core_in_data),
    .in_valid(core_in_valid),
    .in_ready(core_in_ready),
    .out_data(core_out_data),
    .out_valid(core_out_valid),
    .out_ready(core_out_ready){% for p in a.tied %},
    .{= p.0 =}_tr_en(1'b0),
    .{= p.0 =}_tr_we(1'b0),
    .{= p.0 =}_tr_addr({= p.1 =}'d0),
    .{= p.0 =}_tr_col({= p.2 =}'d0),
    .{= p.0 =}_tr_wdata({= p.3 =}'d0),
    .{= p.0 =}_tr_rdata(unused_{= p.0 =}_tr_rdata){% endfor %}
);
{%- endif %}

endmodule

`resetall
