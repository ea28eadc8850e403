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
// Input: IN_K transfers gathered into a beat of the core
wire [CORE_IN_W-1:0] core_in_data;
wire core_in_valid;
wire core_in_ready;

generate
    if (IN_K == 1) begin : g_in_direct
        assign core_in_data = s_axis_tdata[CORE_IN_W-1:0];
        assign core_in_valid = s_axis_tvalid;
        assign s_axis_tready = core_in_ready;
{%- if a.bus_in > a.core_in %}
        wire unused_in_pad = ^s_axis_tdata[IN_W-1:CORE_IN_W];
{%- endif %}
    end else begin : g_in_gather
        // Transfers 0 to IN_K - 2 are gathered in a register; the last goes
        // through to the core with them, so that it is taken exactly when
        // the core takes the beat (as with one transfer per beat: a request
        // whose last transfer the host has sent is in the pipeline, and
        // while training runs it is served at the safe point where the
        // handshake happened).
        reg [(IN_K-1)*IN_W-1:0] gather_reg;
        reg [31:0] gather_count_reg;
        wire gather_last = gather_count_reg == IN_K - 1;
        wire [IN_K*IN_W-1:0] gather_beat = {s_axis_tdata, gather_reg};
        always @(posedge aclk) begin
            if (rst) begin
                gather_count_reg <= 32'd0;
            end else if (s_axis_tvalid && s_axis_tready) begin
                if (gather_last) begin
                    gather_count_reg <= 32'd0;
                end else begin
                    gather_reg[gather_count_reg*IN_W +: IN_W] <= s_axis_tdata;
                    gather_count_reg <= gather_count_reg + 32'd1;
                end
            end
        end
        assign s_axis_tready = !gather_last || core_in_ready;
        assign core_in_data = gather_beat[CORE_IN_W-1:0];
        assign core_in_valid = gather_last && s_axis_tvalid;
{%- if a.in_k * a.bus_in > a.core_in %}
        wire unused_in_pad = ^gather_beat[IN_K*IN_W-1:CORE_IN_W];
{%- endif %}
    end
endgenerate

// ---------------------------------------------------------------------------
// Output: a beat of the core as OUT_K transfers, TLAST by vector count
wire [CORE_OUT_W-1:0] core_out_data;
wire core_out_valid;
wire core_out_ready;
wire out_last_part;   // the transfer on m_axis is a beat's last

generate
    if (OUT_K == 1) begin : g_out_direct
{%- if a.bus_out > a.core_out %}
        assign m_axis_tdata = {{= a.bus_out - a.core_out =}'d0, core_out_data};
{%- else %}
        assign m_axis_tdata = core_out_data;
{%- endif %}
        assign m_axis_tvalid = core_out_valid;
        assign core_out_ready = m_axis_tready;
        assign out_last_part = 1'b1;
    end else begin : g_out_scatter
        reg [OUT_K*OUT_W-1:0] scatter_reg;
        reg [31:0] scatter_count_reg;
        reg scatter_busy_reg;
        wire scatter_last = scatter_count_reg == OUT_K - 1;
        always @(posedge aclk) begin
            if (rst) begin
                scatter_count_reg <= 32'd0;
                scatter_busy_reg <= 1'b0;
            end else if (core_out_valid && core_out_ready) begin
                // Empty, or its last transfer leaves now: the next beat is
                // loaded in the same cycle (back-to-back vectors at one
                // transfer per cycle).
{%- if a.out_k * a.bus_out > a.core_out %}
                scatter_reg <= {{= a.out_k * a.bus_out - a.core_out =}'d0, core_out_data};
{%- else %}
                scatter_reg <= core_out_data;
{%- endif %}
                scatter_count_reg <= 32'd0;
                scatter_busy_reg <= 1'b1;
            end else if (scatter_busy_reg && m_axis_tready) begin
                scatter_reg <= scatter_reg >> OUT_W;
                if (scatter_last) begin
                    scatter_busy_reg <= 1'b0;
                end else begin
                    scatter_count_reg <= scatter_count_reg + 32'd1;
                end
            end
        end
        assign m_axis_tdata = scatter_reg[OUT_W-1:0];
        assign m_axis_tvalid = scatter_busy_reg;
        assign core_out_ready = !scatter_busy_reg || (scatter_last && m_axis_tready);
        assign out_last_part = scatter_last;
    end
endgenerate

reg [31:0] out_beat_reg;     // beat of the current output vector
reg [31:0] out_vector_reg;   // vector of the current batch
wire out_vector_end = out_last_part && out_beat_reg == OUT_BEATS - 1;

always @(posedge aclk) begin
    if (rst) begin
        out_beat_reg <= 32'd0;
        out_vector_reg <= 32'd0;
    end else if (m_axis_tvalid && m_axis_tready && out_last_part) begin
        if (out_vector_end) begin
            out_beat_reg <= 32'd0;
            out_vector_reg <= out_vector_reg == TLAST_BATCH - 1 ? 32'd0 : out_vector_reg + 32'd1;
        end else begin
            out_beat_reg <= out_beat_reg + 32'd1;
        end
    end
end

assign m_axis_tlast = out_vector_end && out_vector_reg == TLAST_BATCH - 1;

// ---------------------------------------------------------------------------
// AXI4-Lite slave: one transaction at a time (a write when both its address
// and data are valid, or a read; in turn when both wait), then its response.
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
wire unused_axil = ^{s_axil_awprot, s_axil_arprot, s_axis_tlast};

// A write must strobe all four bytes: a partial write (WSTRB not 4'b1111)
// is refused with SLVERR and changes nothing.
wire full_strobe = wstrb_reg == 4'b1111;

// The register's word address
wire [ADDR_W-3:0] word = addr_reg[ADDR_W-1:2];
wire unused_byte_addr = ^addr_reg[1:0];
{%- if let Some(t) = a.trainer %}

// ---------------------------------------------------------------------------
// Trainer control, status and events
reg ctl_start_reg, ctl_pause_reg, ctl_resume_reg;
reg [31:0] iterations_reg;
reg [31:0] events_reg [0:2];
reg [31:0] loaded_reg;
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

// The weight windows: a hit selects a tensor, its word and column
reg hit;
reg [{= t.host.sel_w - 1 =}:0] hit_sel;
reg [{= t.host.addr_w - 1 =}:0] hit_addr;
reg [{= t.host.col_w - 1 =}:0] hit_col;
always @(*) begin
    hit = 1'b0;
    hit_sel = {{= t.host.sel_w =}{1'b0}};
    hit_addr = {{= t.host.addr_w =}{1'b0}};
    hit_col = {{= t.host.col_w =}{1'b0}};
{%- for w in t.windows %}
    // {= w.t.layer =} {= w.t.role =}: {= w.depth =} word(s) of {= w.mem_cols =} column(s), {= w.t.width =}-bit parameters
    if (addr_reg[ADDR_W-1:{= w.shift =}] == {= a.addr_w - w.shift =}'d{= w.base >> w.shift =}
            && {1'b0, addr_reg[{= w.shift - 1 =}:{= w.t.col_w + 2 =}]} < {= w.t.addr_w + 1 =}'d{= w.depth =}
            && {1'b0, addr_reg[{= w.t.col_w + 1 =}:2]} < {= w.t.col_w + 1 =}'d{= w.mem_cols =}) begin
        hit = 1'b1;
        hit_sel = {= t.host.sel_w =}'d{= w.t.index =};
        hit_addr[{= w.t.addr_w - 1 =}:0] = addr_reg[{= w.shift - 1 =}:{= w.t.col_w + 2 =}];
        hit_col[{= w.t.col_w - 1 =}:0] = addr_reg[{= w.t.col_w + 1 =}:2];
    end
{%- endfor %}
end

// Weights are read while training is neither busy nor starting (a start
// drains the pipeline before the trainer raises st_busy), or is paused (the
// memories then hold the committed parameters); written only while it is
// neither busy nor starting (a paused ES group holds copies of its
// parameters in registers, which a write would miss). Any other weight
// access is refused at once with SLVERR (STATUS bits 3 and 4 say which are
// served now): one that waited would hold the bus, and with it STATUS
// polls and the pause and resume writes, until the run ends.
reg starting_reg;
always @(posedge aclk) begin
    if (rst) begin
        starting_reg <= 1'b0;
    end else if (ctl_start_reg && iterations_reg != 32'd0) begin
        starting_reg <= 1'b1;
    end else if (st_busy) begin
        starting_reg <= 1'b0;
    end
end
wire host_wr_ok = !st_busy && !starting_reg && !ctl_start_reg;
wire host_rd_ok = host_wr_ok || (st_paused && !ctl_start_reg);
wire host_en = hit && ((state_reg == S_WRITE && host_wr_ok && full_strobe) || (state_reg == S_READ && host_rd_ok));
wire host_we = state_reg == S_WRITE;
wire [{= t.host.data_w - 1 =}:0] host_rdata;

// The read parameter, sign- or zero-extended to 32 bits
reg [31:0] param_word;
always @(*) begin
    case (hit_sel)
{%- for w in t.windows %}
{%- if w.t.width < 32 %}
        {= t.host.sel_w =}'d{= w.t.index =}: param_word = {{{= 32 - w.t.width =}{ {% if w.t.signed %}host_rdata[{= w.t.width - 1 =}]{% else %}1'b0{% endif %} }}, host_rdata[{= w.t.width - 1 =}:0]};
{%- else %}
        {= t.host.sel_w =}'d{= w.t.index =}: param_word = host_rdata[31:0];
{%- endif %}
{%- endfor %}
        default: param_word = 32'd0;
    endcase
end
{%- endif %}

// Register reads
reg [31:0] reg_value;
always @(*) begin
    case (word)
        {= a.addr_w - 2 =}'d{= a.reg("ID") / 4 =}: reg_value = 32'h{= a.hex32("id") =};
        {= a.addr_w - 2 =}'d{= a.reg("VERSION") / 4 =}: reg_value = 32'h{= a.hex32("version") =};
        {= a.addr_w - 2 =}'d{= a.reg("INPUTS") / 4 =}: reg_value = 32'd{= a.inputs =};
        {= a.addr_w - 2 =}'d{= a.reg("OUTPUTS") / 4 =}: reg_value = 32'd{= a.outputs =};
        {= a.addr_w - 2 =}'d{= a.reg("FORMATS") / 4 =}: reg_value = 32'h{= a.hex32("formats") =};
        {= a.addr_w - 2 =}'d{= a.reg("STREAM_IN") / 4 =}: reg_value = 32'h{= a.hex32("stream_in") =};
        {= a.addr_w - 2 =}'d{= a.reg("STREAM_OUT") / 4 =}: reg_value = 32'h{= a.hex32("stream_out") =};
        {= a.addr_w - 2 =}'d{= a.reg("BATCH") / 4 =}: reg_value = TLAST_BATCH;
        {= a.addr_w - 2 =}'d{= a.reg("TRAINER") / 4 =}: reg_value = 32'h{= a.hex32("trainer") =};
{%- if let Some(t) = a.trainer %}
        {= a.addr_w - 2 =}'d{= a.reg("STATUS") / 4 =}: reg_value = {27'd0, host_wr_ok, host_rd_ok, st_done, st_paused, st_busy};
        {= a.addr_w - 2 =}'d{= a.reg("ITERATIONS") / 4 =}: reg_value = iterations_reg;
        {= a.addr_w - 2 =}'d{= a.reg("ITERATION") / 4 =}: reg_value = st_iteration;
        {= a.addr_w - 2 =}'d{= a.reg("GROUP") / 4 =}: reg_value = {{% if t.group_w < 32 %}{= 32 - t.group_w =}'d0, {% endif %}st_group};
{%- if !t.feedback %}
        {= a.addr_w - 2 =}'d{= a.reg("MEMBER") / 4 =}: reg_value = {{% if t.member_w < 32 %}{= 32 - t.member_w =}'d0, {% endif %}st_member};
        {= a.addr_w - 2 =}'d{= a.reg("LAST_LOSS") / 4 =}: reg_value = st_last_loss;
        {= a.addr_w - 2 =}'d{= a.reg("EVENTS2") / 4 =}: reg_value = events_reg[2];
{%- endif %}
        {= a.addr_w - 2 =}'d{= a.reg("EVENTS0") / 4 =}: reg_value = events_reg[0];
        {= a.addr_w - 2 =}'d{= a.reg("EVENTS1") / 4 =}: reg_value = events_reg[1];
        {= a.addr_w - 2 =}'d{= a.reg("LOADED") / 4 =}: reg_value = loaded_reg;
{%- endif %}
        default: reg_value = 32'd0;
    endcase
end

always @(posedge aclk) begin
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
                // Written (or refused) in this cycle: a partial strobe{% if a.trainer.is_some() %}, or a
                // weight while training runs, starts or is paused,{% endif %} gets SLVERR.
{%- if a.trainer.is_some() %}
                bresp_reg <= !full_strobe || (hit && !host_wr_ok);
{%- else %}
                bresp_reg <= !full_strobe;
{%- endif %}
                state_reg <= S_B;
            end
            S_READ: begin
{%- if a.trainer.is_some() %}
                if (hit && host_rd_ok) begin
                    rresp_reg <= 1'b0;
                    state_reg <= S_READ_MEM;
                end else begin
                    // A weight that cannot be read now is refused (SLVERR, 0).
                    rresp_reg <= hit;
                    rdata_reg <= hit ? 32'd0 : reg_value;
                    state_reg <= S_R;
                end
{%- else %}
                rresp_reg <= 1'b0;
                rdata_reg <= reg_value;
                state_reg <= S_R;
{%- endif %}
            end
            S_READ_MEM: begin
{%- if a.trainer.is_some() %}
                rdata_reg <= param_word;
{%- endif %}
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
{%- if let Some(t) = a.trainer %}

// Control pulses and registers written in S_WRITE
wire reg_write = state_reg == S_WRITE && !hit && full_strobe;
always @(posedge aclk) begin
    if (rst) begin
        ctl_start_reg <= 1'b0;
        ctl_pause_reg <= 1'b0;
        ctl_resume_reg <= 1'b0;
        iterations_reg <= 32'd0;
    end else begin
        ctl_start_reg <= reg_write && word == {= a.addr_w - 2 =}'d{= a.reg("CONTROL") / 4 =} && wdata_reg[0];
        ctl_pause_reg <= reg_write && word == {= a.addr_w - 2 =}'d{= a.reg("CONTROL") / 4 =} && wdata_reg[1];
        ctl_resume_reg <= reg_write && word == {= a.addr_w - 2 =}'d{= a.reg("CONTROL") / 4 =} && wdata_reg[2];
        if (reg_write && word == {= a.addr_w - 2 =}'d{= a.reg("ITERATIONS") / 4 =}) begin
            iterations_reg <= wdata_reg;
        end
    end
end

// Event counters (cleared by a start) and the sample-load count
{%- if t.feedback %}
wire [1:0] ev_kind = {1'b0, mon_kind};
{%- else %}
wire [1:0] ev_kind = mon_kind;
{%- endif %}
always @(posedge aclk) begin
    if (rst || ctl_start_reg) begin
        events_reg[0] <= 32'd0;
        events_reg[1] <= 32'd0;
        events_reg[2] <= 32'd0;
    end else if (mon_valid) begin
        events_reg[ev_kind] <= events_reg[ev_kind] + 32'd1;
    end
end

wire ld_fire = s_axis_ld_tvalid && s_axis_ld_tready;
always @(posedge aclk) begin
    if (rst) begin
        loaded_reg <= 32'd0;
    end else if (ld_fire) begin
        loaded_reg <= loaded_reg + 32'd1;
    end
end

// ---------------------------------------------------------------------------
// The design with its trainer (the event details are not registered: the
// counters above count them)
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
    .ctl_start(ctl_start_reg),
    .ctl_pause(ctl_pause_reg),
    .ctl_resume(ctl_resume_reg),
    .cfg_iterations(iterations_reg),
    .st_busy(st_busy),
    .st_paused(st_paused),
    .st_done(st_done),
    .st_iteration(st_iteration),
    .host_en(host_en),
    .host_we(host_we),
    .host_sel(hit_sel),
    .host_addr(hit_addr),
    .host_col(hit_col),
    .host_wdata(wdata_reg[{= t.host.data_w - 1 =}:0]),
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
wire unused_ld = ^{s_axis_ld_tdata, s_axis_ld_tlast, wdata_reg};
{%- else %}
wire unused_ld = ^{s_axis_ld_tlast, wdata_reg};
{%- endif %}
{%- else %}

// ---------------------------------------------------------------------------
// The inference pipeline
wire unused_regs = ^wdata_reg;
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
