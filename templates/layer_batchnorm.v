{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Layer {= l.name =}: {= l.op =}{% if b.relu == 1 %}, relu{% else %}, linear{% endif %}: y = cast(shift[c] + scale[c] * x) per channel.
 *   input    {= l.x.name =}, {= l.in_beats() =} beat(s) of {= b.c =} values
 *   scale    {= b.scale.name =} ({= sm.mem.kind =}, {= sm.mem.depth =} x {= sm.mem.cols =} x {= sm.mem.col_width =} bits, {= sm.mem.style =}, {= sm.mem.file =})
 *   shift    {= b.shift.name =} ({= hm.mem.kind =}, {= hm.mem.depth =} x {= hm.mem.cols =} x {= hm.mem.col_width =} bits, {= hm.mem.style =}, {= hm.mem.file =})
 *   accum    {= b.acc.name =}
 *   output   {= l.y.name =}, one beat per input beat, valid two cycles after it
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module {= l.module =} ({% call m::stream_ports(l) %}{% endcall %}{% if sm.trainable %},
    // scale trainer port (fptgen_param_mem): word 0, column = channel
{%- call m::tr_ports("scale", sm.addr_w(), sm.col_w(), b.scale.width) %}{% endcall %}{% endif %}{% if hm.trainable %},
    // shift trainer port: word 0, column = channel
{%- call m::tr_ports("shift", hm.addr_w(), hm.col_w(), b.shift.width) %}{% endcall %}{% endif %}
);
{% call m::tr_unused("scale", sm.trainable, b.scale.width) %}{% endcall %}
{%- call m::tr_unused("shift", hm.trainable, b.shift.width) %}{% endcall %}
fptgen_bn #(
    .C({= b.c =}),
    {% call m::fmt("X", l.x, false) %}{% endcall %}
    {% call m::fmt("S", b.scale, false) %}{% endcall %}
    {% call m::fmt("H", b.shift, false) %}{% endcall %}
    {% call m::fmt("A", b.acc, true) %}{% endcall %}
    {% call m::fmt("Y", l.y, true) %}{% endcall %}
    .RELU({= b.relu =}),
    .S_WRITABLE({% if sm.trainable %}1{% else %}0{% endif %}),
    .S_STYLE("{= sm.mem.style =}"),
    .S_FILE("{= sm.mem.file =}"),
    .H_WRITABLE({% if hm.trainable %}1{% else %}0{% endif %}),
    .H_STYLE("{= hm.mem.style =}"),
    .H_FILE("{= hm.mem.file =}")
) u_bn (
    .clk(clk),
    .rst(rst),
    .in_data(in_data),
    .in_valid(in_valid),
    .in_ready(in_ready),
    .out_data(out_data),
    .out_valid(out_valid),
    .out_ready(out_ready),
{%- call m::tr_connect_as("s", "scale", sm.trainable, sm.addr_w(), sm.col_w(), b.scale.width, false) %}{% endcall %}
{%- call m::tr_connect_as("h", "shift", hm.trainable, hm.addr_w(), hm.col_w(), b.shift.width, true) %}{% endcall %}
);

endmodule

`resetall
