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