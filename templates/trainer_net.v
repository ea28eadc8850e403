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
    .{= x.port() =}_tr_en(tr_en[{= x.index =}]),
    .{= x.port() =}_tr_we(tr_we[{= x.index =}]),
    .{= x.port() =}_tr_addr({= x.port() =}_tr_addr),
    .{= x.port() =}_tr_col({= x.port() =}_tr_col),
    .{= x.port() =}_tr_wdata(wdata[{= x.width - 1 =}:0]),
    .{= x.port() =}_tr_rdata({= x.port() =}_tr_rdata){% endfor %}
{%- if let Some(fb) = n.feedback %}{% for l in fb.layers %},
    .tap_{= l.name =}_x(tap_{= l.name =}_x),
    .tap_{= l.name =}_x_fire(tap_{= l.name =}_x_fire),
    .tap_{= l.name =}_a(tap_{= l.name =}_a),
    .tap_{= l.name =}_a_fire(tap_{= l.name =}_a_fire){% endfor %}{% endif %}
);
