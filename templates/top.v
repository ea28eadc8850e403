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
);
{% for c in layers %}
// {= c.l.name =}: {= c.l.op =}, {= c.l.cycles =} cycles per vector
wire [{= c.l.out_beat_bits() - 1 =}:0] {= c.l.name =}_out_data;
wire {= c.l.name =}_out_valid;
wire {= c.l.name =}_out_ready;
wire {= c.l.name =}_in_ready;

{= c.l.module =} u_{= c.l.name =} (
    .clk(clk),
    .rst(rst),
    .in_data({= c.src =}_data),
    .in_valid({= c.src =}_valid),
    .in_ready({= c.l.name =}_in_ready),
    .out_data({= c.l.name =}_out_data),
    .out_valid({= c.l.name =}_out_valid),
    .out_ready({= c.l.name =}_out_ready){% for mem in c.l.trainable() %},
{%- call m::tr_pass(c.l.name, mem.key) %}{% endcall %}{% endfor %}
);
{% endfor %}
assign in_ready = {= first =}_in_ready;
{%- for c in layers %}{% if !loop.last %}
assign {= c.l.name =}_out_ready = {= c.next =}_in_ready;{% endif %}{% endfor %}
assign {= last =}_out_ready = out_ready;
assign out_data = {= last =}_out_data;
assign out_valid = {= last =}_out_valid;

endmodule

`resetall
