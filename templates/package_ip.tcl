{% import "macros.txt" as m -%}
{% call m::header("#", gen) %}{% endcall %}
#
# Packages {= a.module =} (the AXI wrapper of {= n.name =}) as a Vivado IP in
# vivado/ip/, for the IP catalog and block designs:
#   cd <this design's directory> && vivado -mode batch -source vivado/package_ip.tcl
# Then, in a project: add vivado/ip to the IP repositories
# (set_property ip_repo_paths <dir>/vivado/ip [current_project];
# update_ip_catalog) and add fptgen:fptgen:{= a.module =}:1.0 to a block design
# (create_bd_cell -type ip -vlnv fptgen:fptgen:{= a.module =}:1.0 {= n.name =}_0).
# Interfaces: s_axis, m_axis{% if a.trainer.is_some() %}, s_axis_ld{% endif %} (AXI4-Stream) and s_axil (AXI4-Lite),
# all on the clock aclk with the active-low reset aresetn. The memory images
# (mem/*.hex) are packaged with the RTL: $readmemh reads them by the path
# relative to the design's directory.

cd [file dirname [file dirname [file normalize [info script]]]]
set part {= n.part =}
set top {= a.module =}
file delete -force vivado/ip vivado/ip_project

create_project -part $part {= a.module =}_ip vivado/ip_project
add_files -norecurse {
{%- for f in rtl_files %}
    rtl/{= f =}
{%- endfor %}
    rtl/fptgen_clog2.vh
}
add_files -norecurse [glob mem/*.hex]
set_property file_type {Verilog Header} [get_files fptgen_clog2.vh]
set_property include_dirs [file normalize rtl] [current_fileset]
set_property top $top [current_fileset]
update_compile_order -fileset sources_1

ipx::package_project -root_dir vivado/ip -vendor fptgen -library fptgen -taxonomy /UserIP -import_files -set_current true
set core [ipx::current_core]
set_property version 1.0 $core
set_property display_name "{= n.name =} (fptgen, AXI)" $core
set_property description "fptgen design {= n.name =}: {= a.inputs =} inputs, {= a.outputs =} outputs{% if a.trainer.is_some() %}, on-chip training{% endif %}; registers in driver/registers.md" $core

# The interfaces Vivado infers from the port names, made explicit.
ipx::infer_bus_interfaces xilinx.com:interface:axis_rtl:1.0 $core
ipx::infer_bus_interfaces xilinx.com:interface:aximm_rtl:1.0 $core
ipx::infer_bus_interfaces xilinx.com:signal:clock_rtl:1.0 $core
ipx::infer_bus_interfaces xilinx.com:signal:reset_rtl:1.0 $core
{%- for b in ["s_axis", "m_axis", "s_axil"] %}
ipx::associate_bus_interfaces -busif {= b =} -clock aclk $core
{%- endfor %}
{%- if a.trainer.is_some() %}
ipx::associate_bus_interfaces -busif s_axis_ld -clock aclk $core
{%- endif %}
ipx::associate_bus_interfaces -clock aclk -reset aresetn $core
set_property value ACTIVE_LOW [ipx::get_bus_parameters POLARITY -of_objects [ipx::get_bus_interfaces aresetn -of_objects $core]]

ipx::create_xgui_files $core
ipx::update_checksums $core
ipx::check_integrity $core
ipx::save_core $core
close_project
