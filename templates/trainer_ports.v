{#- Shared by es_top.v and fb_top.v (askama include: n is the network plan, t the trainer plan). -#}
{#- The trainer top's stream, load and control ports. #}
    input  wire clk,
    input  wire rst,
    input  wire [{= n.in_bits() - 1 =}:0] in_data,
    input  wire in_valid,
    output wire in_ready,
    output wire [{= n.out_bits() - 1 =}:0] out_data,
    output wire out_valid,
    input  wire out_ready,
    // training-sample load stream: {= t.words =} word(s) of {= t.word_w =} bits per input vector
    // (word 0 first, holding bits [{= t.word_w - 1 =}:0]); the target with the last word
    input  wire [{= t.word_w - 1 =}:0] ld_x,
    input  wire [{= n.out_bits() - 1 =}:0] ld_t,
    input  wire ld_valid,
    output wire ld_ready,
    // control and status
    input  wire ctl_start,
    input  wire ctl_pause,
    input  wire ctl_resume,
    input  wire [31:0] cfg_iterations,
    output wire st_busy,
    output wire st_paused,
    output wire st_done,
    output wire [31:0] st_iteration,
    // host access to the trainable memories (the AXI wrapper's weight
    // windows), while ctl_start is low: with host_en high on a rising
    // edge, column host_col of word host_addr of tensor host_sel (training
    // order) is read, and written with host_wdata if host_we is high;
    // host_rdata shows the value before the write after that edge. A read
    // (host_we low) is served while st_busy is low or st_paused is high, a
    // write only while st_busy is low; otherwise host_en is ignored
    input  wire host_en,
    input  wire host_we,
    input  wire [{= t.host().sel_w - 1 =}:0] host_sel,
    input  wire [{= t.host().addr_w - 1 =}:0] host_addr,
    input  wire [{= t.host().col_w - 1 =}:0] host_col,
    input  wire [{= t.host().data_w - 1 =}:0] host_wdata,
    output wire [{= t.host().data_w - 1 =}:0] host_rdata,