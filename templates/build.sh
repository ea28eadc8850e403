{% import "macros.txt" as m -%}
#!/bin/sh
{% call m::header("#", gen) %}{% endcall %}
#
# Builds the Verilator co-simulation of {= n.name =}: sim/obj/V{= n.name =}, or with
# --trace sim/obj_trace/V{= n.name =} (which writes a VCD when given a 4th argument).
# Run it from the output directory, since it reads mem/*.hex:
#   sim/obj/V{= n.name =} INPUTS.hex EXPECTED.hex SEED [TRACE.vcd]
set -eu
cd "$(dirname "$0")/.."
obj=sim/obj
trace=
if [ "${1:-}" = "--trace" ]; then
    obj=sim/obj_trace
    trace=--trace
fi
exec verilator --cc --exe --build -j 2 -Wall $trace \
    --top-module {= n.name =} -Mdir "$obj" -o V{= n.name =} \
    -CFLAGS -O1 \
{%- for f in rtl_files %}
    rtl/{= f =} \
{%- endfor %}
    "$PWD/sim/harness.cpp"
