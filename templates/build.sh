{% import "macros.txt" as m -%}
#!/bin/sh
{% call m::header("#", gen) %}{% endcall %}
#
# Builds the Verilator co-simulation of {= n.name =}: sim/obj/V{= n.name =}, or with
# --trace sim/obj_trace/V{= n.name =} (which writes a VCD when given a 4th argument){% if n.training.is_some() %},
# or with --train sim/obj_train/V{= n.name =}, the training harness (sim/train_harness.cpp,
# with FPTGEN_DUMP_FINAL defined, which adds the harness-only input dump_final that
# makes every trainable memory write sim/run/<image>.final){% endif %}.
{%- if axi %}
# With --axi (sim/obj_axi/V{= n.name =}_axi), the inference harness through the AXI
# wrapper (sim/axi_harness.cpp){% if n.training.is_some() %}, with --axi-train (sim/obj_axi_train/V{= n.name =}_axi) the
# training harness through it (sim/axi_train_harness.cpp){% endif %}; both compile the C driver
# (driver/{= n.name =}_driver.c) into the harness.
{%- endif %}
# Run it from the output directory, since it reads mem/*.hex:
#   sim/obj/V{= n.name =} INPUTS.hex EXPECTED.hex SEED [TRACE.vcd]
set -eu
cd "$(dirname "$0")/.."
obj=sim/obj
harness=sim/harness.cpp
opts=
top={= n.name =}
extra=
case "${1:-}" in
    --trace)
        obj=sim/obj_trace
        opts=--trace
        ;;{% if n.training.is_some() %}
    --train)
        obj=sim/obj_train
        harness=sim/train_harness.cpp
        opts=+define+FPTGEN_DUMP_FINAL
        ;;{% endif %}
{%- if axi %}
    --axi)
        obj=sim/obj_axi
        top={= n.name =}_axi
        harness=sim/axi_harness.cpp
        opts=-CFLAGS\ -DFPTGEN_AXI
        extra="$PWD/driver/{= n.name =}_driver.c"
        ;;{% if n.training.is_some() %}
    --axi-train)
        obj=sim/obj_axi_train
        top={= n.name =}_axi
        harness=sim/axi_train_harness.cpp
        opts=-CFLAGS\ -DFPTGEN_AXI
        extra="$PWD/driver/{= n.name =}_driver.c"
        ;;{% endif %}
{%- endif %}
esac
# Verilator's once-run code (constructors, initial blocks) is compiled
# without optimization, which shortens the build and not the run; with
# ccache installed (and usable), every compiled object is cached, so
# Verilator's own runtime library and any design built before compile once.
makeflags=OPT_SLOW=-O0
if command -v ccache >/dev/null 2>&1 && ccache -p >/dev/null 2>&1; then
    makeflags="$makeflags OBJCACHE=ccache"
fi
exec verilator --cc --exe --build -j 2 -Wall $opts \
    --top-module "$top" -Mdir "$obj" -o "V$top" -Irtl \
    -CFLAGS -O1 -MAKEFLAGS "$makeflags" \
{%- for f in rtl_files %}
    rtl/{= f =} \
{%- endfor %}
{%- for f in axi_files %}
    rtl/{= f =} \
{%- endfor %}
    "$PWD/$harness" $extra
