{#- Shared by es_top.v (full evaluation) and fb_top.v (askama include: t is the trainer plan). -#}
{#- The sample buffer's subset ports (trainer_buffer.v) when every play is of the whole buffer. #}
// Every play is of the whole buffer; the load stream is never held.
localparam integer BUF_SUBSET = 0;
wire ld_gate = 1'b1;
wire buf_sub = 1'b0;
wire [{= t.count_w() - 1 =}:0] buf_count = {= t.count_w() =}'d{= t.m =};
wire [{= t.sample_w() - 1 =}:0] buf_x_sel = {= t.sample_w() =}'d0;
wire [{= t.sample_w() - 1 =}:0] buf_t_sel = {= t.sample_w() =}'d0;
wire buf_x_pop, buf_t_pop;
wire unused_buf_pop = buf_x_pop ^ buf_t_pop;
