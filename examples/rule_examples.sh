#!/usr/bin/env bash
# Every training rule on every example that trains, co-simulated: for each
# example and each of es, dfa, drtp and sgm, `fptgen cosim --train` (one
# iteration, a buffer of 4 samples, inference requests injected) compares
# every event, every answer, every iteration's cycles and the final
# memories with the simulator (ES with two members). Under sgm an example whose trainable layers
# include a hidden one needs modules: they are fitted with `fptgen train
# --sgm` on data (MNIST for examples/mnist, the data directory given; random
# images with random labels for examples/residual, written here).
#
#   bash examples/rule_examples.sh MNIST_DIR OUT
#
# OUT must not exist; OUT/table.md gets one row per example, and OUT/<example>-<rule>/
# each design and its cosim log. Results: docs/results/rules.md ("Every rule on
# every example").
set -euo pipefail
cd "$(dirname "$0")/.."
mnist=${1:?usage: rule_examples.sh MNIST_DIR OUT}
out=${2:?usage: rule_examples.sh MNIST_DIR OUT}
[ -e "$out" ] && { echo "$out exists; give a new directory" >&2; exit 1; }
mkdir -p "$out"
cargo build --release --quiet
fptgen=target/release/fptgen
[ -n "${CARGO_TARGET_DIR:-}" ] && fptgen=$CARGO_TARGET_DIR/release/fptgen

# Modules for the examples with a hidden trainable layer.
"$fptgen" train examples/mnist/model.yaml --data "$mnist" --sgm --limit 2000 -o "$out/mnist.sgm.npz" > "$out/mnist.sgm.log"
python3 - "$out/residual-data" <<'PY'
import os, sys
import numpy as np
d = sys.argv[1]
os.makedirs(d)
rng = np.random.default_rng(1)
for split, n in (("train", 600), ("test", 100)):
    np.save(os.path.join(d, f"x_{split}.npy"), rng.random((n, 8, 8, 2), dtype=np.float32))
    np.save(os.path.join(d, f"y_{split}.npy"), rng.integers(0, 3, n).astype(np.int64))
PY
"$fptgen" train examples/residual/model.yaml --data "$out/residual-data" --validation 100 --sgm -o "$out/residual.sgm.npz" > "$out/residual.sgm.log"

printf '| example | trained layers | es | dfa | drtp | sgm |\n|---|---|---|---|---|---|\n' > "$out/table.md"
for ex in tiny jet_tagging int8_head mnist mnist_cnn residual all_operators; do
    layers=$("$fptgen" check "examples/$ex/model.yaml" | grep -E '[0-9] \((weights|biases)' | awk '{print $1}' | paste -sd, -)
    row="| $ex | ${layers:-?} |"
    for rule in es dfa drtp sgm; do
        extra=()
        # ES: two members, so that MNIST's groups stay seconds of simulation.
        [ "$rule" = es ] && extra=(--population 2)
        [ "$rule" = sgm ] && [ -e "$out/$ex.sgm.npz" ] && extra=(--sgm "$(cd "$out" && pwd)/$ex.sgm.npz")
        start=$(date +%s)
        if "$fptgen" cosim "examples/$ex/model.yaml" --vectors 4 --seed 3 --train --iterations 1 --buffer 4 \
            --interrupt-rate 0.01 --rule "$rule" "${extra[@]}" -o "$out/$ex-$rule" > "$out/$ex-$rule.log" 2>&1; then
            cell="0 mismatches, $(( $(date +%s) - start )) s"
        else
            cell="FAILED ($(tail -1 "$out/$ex-$rule.log" | cut -c1-80))"
        fi
        row="$row $cell |"
        echo "$ex $rule: $cell" >&2
    done
    echo "$row" >> "$out/table.md"
done
cat "$out/table.md"
