{% import "macros.txt" as m -%}
{% call m::header("#", gen) %}{% endcall %}
#
# Non-project Vivado batch flow for {= n.name =} on {= n.part =}, out of context:
#   cd <this design's directory> && vivado -mode batch -source vivado/build.tcl
# Reads the RTL and the XDC, synthesizes, optimizes, places and routes, and
# writes the utilization and timing reports to vivado/reports/ and the
# routed checkpoint to vivado/{= n.name =}_routed.dcp. The memory images in
# mem/ are read by $readmemh relative to the design's directory, so the
# script runs from there.

cd [file dirname [file dirname [file normalize [info script]]]]
set part {= n.part =}
set top {= n.name =}
file mkdir vivado/reports

read_verilog {
{%- for f in rtl_files %}
    rtl/{= f =}
{%- endfor %}
}
read_xdc constraints/{= n.name =}.xdc

# rtl/ holds the include file fptgen_clog2.vh, which the library modules include.
synth_design -part $part -top $top -mode out_of_context -include_dirs [file normalize rtl]
opt_design
place_design
route_design

report_utilization -file vivado/reports/utilization.rpt
report_utilization -hierarchical -file vivado/reports/utilization_hierarchical.rpt
report_timing_summary -max_paths 10 -file vivado/reports/timing_summary.rpt
write_checkpoint -force vivado/{= n.name =}_routed.dcp
