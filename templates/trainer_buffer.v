{#- Shared by es_top.v and fb_top.v (askama include: n is the network plan, t the trainer plan). -#}
{#- The sample buffer and the arbitration of the pipeline's streams (the parent declares x_gate: buffered samples may enter; ld_gate:
    the load stream may move; BUF_SUBSET and the subset play's buf_sub, buf_count, buf_x_sel, buf_t_sel, and takes buf_x_pop, buf_t_pop). -#}
// ---------------------------------------------------------------------------
// Sample buffer and pipeline arbitration
wire [{= n.in_bits() - 1 =}:0] x_data;
wire [{= n.out_bits() - 1 =}:0] t_data;
wire x_valid;
wire x_ready = !ext_mode && net_in_ready && x_gate;  // the pipeline takes a buffered sample
wire buf_ld_ready;

fptgen_sample_buf #(
    .M({= t.m =}),
    .X_W({= n.in_bits() =}),
    .T_W({= n.out_bits() =}),
    .WORDS({= t.words =}),
    .WORD_W({= t.word_w =}),
    .INTERVAL({= n.ii =}),
    .SUBSET(BUF_SUBSET)
) u_buf (
    .clk(clk),
    .rst(rst),
    .ld_x(ld_x),
    .ld_t(ld_t),
    .ld_valid(ld_valid && ld_gate),
    .ld_ready(buf_ld_ready),
    .ld_enable(ld_enable),
    .play(play),
    .sub(buf_sub),
    .count(buf_count),
    .x_sel(buf_x_sel),
    .x_sel_pop(buf_x_pop),
    .t_sel(buf_t_sel),
    .t_sel_pop(buf_t_pop),
    .x_data(x_data),
    .x_valid(x_valid),
    .x_ready(x_ready),
    .t_data(t_data),
    .t_next(train_out_fire)
);

assign ld_ready = buf_ld_ready && ld_gate;
assign in_ready = ext_mode && ext_accept && net_in_ready;
assign out_valid = ext_mode && net_out_valid;
assign out_data = net_out_data;
