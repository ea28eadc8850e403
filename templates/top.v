{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Network {= n.name =}{% if module_name != n.name %} (the inference pipeline of the trained top {= n.name =}){% endif %}: {= n.layers.len() =} layers, {= n.inputs =} inputs ({= n.x.name =}),
 * {= n.outputs =} outputs ({= n.y.name =}). Target {= n.part =} at {= n.clock_period_ns =} ns.
 * Initiation interval {= n.ii =} cycles, latency {= n.latency =} cycles (see report.md).
 *
 * Streams carry {% if n.in_beats > 1 %}images one pixel per beat ({= n.in_beats =} beats per input
 * image, the pixel's channels together){% else %}whole vectors{% endif %} in and {% if n.out_beats > 1 %}images one pixel per beat ({= n.out_beats =}
 * beats per output image){% else %}whole vectors{% endif %} out: element k of a beat at bits [k*W +: W]
 * (docs/hardware.md, "Streams of images"). rst is synchronous and active high.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= module_name =} (
    input  wire clk,
    input  wire rst,
    input  wire [{= n.in_beat_bits() - 1 =}:0] in_data,
    input  wire in_valid,
    output wire in_ready,
    output wire [{= n.out_beat_bits() - 1 =}:0] out_data,
    output wire out_valid,
    input  wire out_ready{% for c in layers %}{% for mem in c.l.trainable() %},
    // {= c.l.name =} {= mem.role =} trainer port (fptgen_param_mem)
{%- call m::tr_ports(c.l.name ~ "_" ~ mem.key, mem.addr_w(), mem.col_w(), mem.format.width) %}{% endcall %}{% endfor %}{% endfor %}
{%- if let Some(fb) = n.feedback %}{% for l in fb.layers %},
    // {= l.name =}'s input and output streams as the pipeline takes them (the feedback trainer's taps)
    output wire [{= l.x_beat_w - 1 =}:0] tap_{= l.name =}_x,
    output wire tap_{= l.name =}_x_fire,
    output wire [{= l.a_beat_w - 1 =}:0] tap_{= l.name =}_a,
    output wire tap_{= l.name =}_a_fire{% endfor %}{% endif %}
);
// Streams: <name>_data, <name>_valid, <name>_ready, one producer and one
// consumer each; in_* are the input ports.
{%- for st in n.wiring.streams %}
wire [{= st.bits - 1 =}:0] {= st.name =}_data;
wire {= st.name =}_valid;
wire {= st.name =}_ready;
{%- endfor %}
{% for f in n.wiring.forks %}
// {= f.input =} feeds two consumers: a fork with a FIFO of {= f.depth[0] =} and {= f.depth[1] =} beats
// (sized by the cycle model, docs/hardware.md "Graphs").
fptgen_fork #(
    .W({= f.bits =}),
    .DEPTH0({= f.depth[0] =}),
    .DEPTH1({= f.depth[1] =}),
    .RAM_STYLE0("distributed"),
    .RAM_STYLE1("distributed")
) u_{= f.name =} (
    .clk(clk),
    .rst(rst),
    .in_data({= f.input =}_data),
    .in_valid({= f.input =}_valid),
    .in_ready({= f.input =}_ready),
    .out0_data({= f.outputs[0] =}_data),
    .out0_valid({= f.outputs[0] =}_valid),
    .out0_ready({= f.outputs[0] =}_ready),
    .out1_data({= f.outputs[1] =}_data),
    .out1_valid({= f.outputs[1] =}_valid),
    .out1_ready({= f.outputs[1] =}_ready)
);
{% endfor %}
{%- for j in n.wiring.joins %}
// {= j.output =}: {= j.inputs[0] =} and {= j.inputs[1] =} joined beat by beat (channel concatenation)
fptgen_concat #(
    .W0({= j.bits[0] =}),
    .W1({= j.bits[1] =})
) u_{= j.name =} (
    .clk(clk),
    .rst(rst),
    .in0_data({= j.inputs[0] =}_data),
    .in0_valid({= j.inputs[0] =}_valid),
    .in0_ready({= j.inputs[0] =}_ready),
    .in1_data({= j.inputs[1] =}_data),
    .in1_valid({= j.inputs[1] =}_valid),
    .in1_ready({= j.inputs[1] =}_ready),
    .out_data({= j.output =}_data),
    .out_valid({= j.output =}_valid),
    .out_ready({= j.output =}_ready)
);
{% endfor %}
{%- for c in layers %}
// {= c.l.name =}: {= c.l.op =}, {= c.l.cycles =} cycles per vector
{= c.l.module =} u_{= c.l.name =} (
    .clk(clk),
    .rst(rst),
    .in_data({= c.w.input =}_data),
    .in_valid({= c.w.input =}_valid),
    .in_ready({= c.w.input =}_ready),
    .out_data({= c.w.driven() =}_data),
    .out_valid({= c.w.driven() =}_valid),
    .out_ready({= c.w.driven() =}_ready){% for mem in c.l.trainable() %},
{%- call m::tr_pass(c.l.name, mem.key) %}{% endcall %}{% endfor %}
);
{%- if let Some(y) = c.w.skid %}

// {= c.l.name =}'s output to {= c.w.output =} through a skid buffer: a registered ready
// (docs/hardware.md, "Timing")
fptgen_skid #(
    .W({= c.l.out_beat_bits() =})
) u_{= c.l.name =}_skid (
    .clk(clk),
    .rst(rst),
    .in_data({= y =}_data),
    .in_valid({= y =}_valid),
    .in_ready({= y =}_ready),
    .out_data({= c.w.output =}_data),
    .out_valid({= c.w.output =}_valid),
    .out_ready({= c.w.output =}_ready)
);
{%- endif %}
{% endfor %}
{%- if let Some(fb) = n.feedback %}
{%- for l in fb.layers %}
assign tap_{= l.name =}_x = {= l.input =}_data;
assign tap_{= l.name =}_x_fire = {= l.input =}_valid && {= l.input =}_ready;
assign tap_{= l.name =}_a = {= l.output =}_data;
assign tap_{= l.name =}_a_fire = {= l.output =}_valid && {= l.output =}_ready;
{%- endfor %}
{% endif %}
assign out_data = {= n.wiring.output =}_data;
assign out_valid = {= n.wiring.output =}_valid;
assign {= n.wiring.output =}_ready = out_ready;

endmodule

`resetall
