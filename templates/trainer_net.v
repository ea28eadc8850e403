{#- Shared by es_top.v and fb_top.v (askama include: n is the network plan, t the trainer plan). -#}
{#- The inference pipeline (through the serializer when its input is an image), its trainer ports and taps. -#}
// ---------------------------------------------------------------------------
// The inference pipeline
{%- if n.in_port_beats != n.in_beats %}

// Its input is an image, one pixel per beat: whole input vectors (requests
// and buffered samples) go through a serializer.
wire [{= n.in_beat_bits() - 1 =}:0] net_beat_data;
wire net_beat_valid, net_beat_ready;

fptgen_serialize #(
    .BEATS({= n.in_beats =}),
    .BEAT_W({= n.in_beat_bits() =})
) u_serialize (
    .clk(clk),
    .rst(rst),
    .in_data(ext_mode ? in_data : x_data),
    .in_valid(ext_mode ? (in_valid && ext_accept) : (x_valid && x_gate)),
    .in_ready(net_in_ready),
    .out_data(net_beat_data),
    .out_valid(net_beat_valid),
    .out_ready(net_beat_ready)
);
{%- endif %}

// Host access (the AXI wrapper) to the trainable memories, when the
// trainer leaves them alone: reads while training is not busy or paused
// (a pause is taken at a BOUNDARY, where the memories hold the committed
// parameters), writes only while it is not busy (a paused group holds
// copies of its parameters in registers); never while starting.
wire host_on = (!st_busy || st_paused) && !ctl_start;
wire host_go = host_en && (!host_we || !st_busy);   // the access is served
wire [{= t.tensors.len() - 1 =}:0] m_en, m_we;
{%- for x in t.tensors %}
wire host_is_{= x.index =} = host_on && host_sel == {= t.host().sel_w =}'d{= x.index =};
assign m_en[{= x.index =}] = host_on ? (host_go && host_is_{= x.index =}) : tr_en[{= x.index =}];
assign m_we[{= x.index =}] = host_on ? (host_go && host_we && host_is_{= x.index =}) : tr_we[{= x.index =}];
wire [{= x.addr_w - 1 =}:0] {= x.port() =}_m_addr = host_on ? host_addr[{= x.addr_w - 1 =}:0] : {= x.port() =}_tr_addr;
wire [{= x.col_w - 1 =}:0] {= x.port() =}_m_col = host_on ? host_col[{= x.col_w - 1 =}:0] : {= x.port() =}_tr_col;
wire [{= x.width - 1 =}:0] {= x.port() =}_m_wdata = host_on ? host_wdata[{= x.width - 1 =}:0] : wdata[{= x.width - 1 =}:0];
{%- endfor %}
// The read column of the tensor host_sel selects (the wrapper holds
// host_sel until it has taken the data), zero-extended.
wire [{= t.tensors.len() * t.host().data_w - 1 =}:0] host_rdata_all;
{%- for x in t.tensors %}
{%- if (x.width as usize) < t.host().data_w %}
assign host_rdata_all[{= x.index * t.host().data_w =} +: {= t.host().data_w =}] = {{= t.host().data_w - (x.width as usize) =}'d0, {= x.port() =}_tr_rdata};
{%- else %}
assign host_rdata_all[{= x.index * t.host().data_w =} +: {= t.host().data_w =}] = {= x.port() =}_tr_rdata;
{%- endif %}
{%- endfor %}

fptgen_select #(
    .N({= t.tensors.len() =}),
    .W({= t.host().data_w =}),
    .SEL_W({= t.host().sel_w =})
) u_host_rdata (
    .sel(host_sel),
    .in(host_rdata_all),
    .out(host_rdata)
);
// (bits of the widest tensor's port that narrower ones do not use)
wire unused_host = ^{host_addr, host_col, host_wdata};

{= n.name =}_net u_net (
    .clk(clk),
    .rst(rst),
{%- if n.in_port_beats != n.in_beats %}
    .in_data(net_beat_data),
    .in_valid(net_beat_valid),
    .in_ready(net_beat_ready),
{%- else %}
    .in_data(ext_mode ? in_data : x_data),
    .in_valid(ext_mode ? (in_valid && ext_accept) : (x_valid && x_gate)),
    .in_ready(net_in_ready),
{%- endif %}
    .out_data(net_out_data),
    .out_valid(net_out_valid),
    .out_ready(ext_mode ? out_ready : 1'b1){% for x in t.tensors %},
    .{= x.port() =}_tr_en(m_en[{= x.index =}]),
    .{= x.port() =}_tr_we(m_we[{= x.index =}]),
    .{= x.port() =}_tr_addr({= x.port() =}_m_addr),
    .{= x.port() =}_tr_col({= x.port() =}_m_col),
    .{= x.port() =}_tr_wdata({= x.port() =}_m_wdata),
    .{= x.port() =}_tr_rdata({= x.port() =}_tr_rdata){% endfor %}
{%- if let Some(fb) = n.feedback %}{% for l in fb.layers %},
    .tap_{= l.name =}_x(tap_{= l.name =}_x),
    .tap_{= l.name =}_x_fire(tap_{= l.name =}_x_fire),
    .tap_{= l.name =}_a(tap_{= l.name =}_a),
    .tap_{= l.name =}_a_fire(tap_{= l.name =}_a_fire){% endfor %}{% endif %}
);
