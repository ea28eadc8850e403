"""NumPy float32 peer of fptgen's bit-accurate simulator.

Run by `cargo run --release --example peer` (examples/peer.rs), which
writes the MNIST network's weights, the inputs and one ES group's member
perturbations into DIR as .npy files, runs `python3 examples/peer_numpy.py
DIR SECONDS`, times the simulator on the same data, and prints the ratios.
This script prints one JSON object on stdout.

Measured (float32 throughout, no quantization between layers):

* inference: `relu(x @ W1.T + b1)`, `relu(. @ W2.T + b2)`, `. @ W3.T + b3`,
  one matrix multiply per layer, on batches of 256 images and on all the
  images at once (images/s);
* ES member evaluation: the group's N members (the same perturbations as
  the simulator's, in real units) on the M buffered images, all members
  at once: the committed first-layer pre-activations are computed once
  (the simulator caches its committed activations too); per member, the
  affected neurons' pre-activations change by `D_r @ X[:, cols_r].T`, then
  relu, the second and third layers as one matrix multiply each over all
  members' images, and the loss `sum |y - t|` per member (member-sample
  evaluations/s, N * M per group).
"""

import json
import os
import sys
import time

import numpy as np


def load(d, name):
    return np.load(os.path.join(d, name + ".npy"))


def rate(fn, items, seconds):
    """Items per second of fn over about `seconds`, the best of 3 rounds."""
    fn()
    best = 0.0
    for _ in range(3):
        n = 0
        t0 = time.perf_counter()
        while True:
            fn()
            n += 1
            el = time.perf_counter() - t0
            if el >= seconds / 3:
                break
        best = max(best, n * items / el)
    return best


def end_to_end(d):
    """`--e2e DIR`: read DIR/x.npy, infer, write DIR/y.npy (as `fptgen simulate -o` does)."""
    f32 = np.float32
    wt = [np.ascontiguousarray(load(d, "w%d" % i).astype(f32).T) for i in (1, 2, 3)]
    b = [load(d, "b%d" % i).astype(f32) for i in (1, 2, 3)]
    x = load(d, "x").astype(f32)
    h = np.maximum(x @ wt[0] + b[0], 0)
    h = np.maximum(h @ wt[1] + b[1], 0)
    np.save(os.path.join(d, "y.npy"), h @ wt[2] + b[2])


def main():
    if sys.argv[1] == "--e2e":
        end_to_end(sys.argv[2])
        return
    d, seconds = sys.argv[1], float(sys.argv[2])
    f32 = np.float32
    w = [load(d, "w%d" % i).astype(f32) for i in (1, 2, 3)]
    b = [load(d, "b%d" % i).astype(f32) for i in (1, 2, 3)]
    wt = [np.ascontiguousarray(x.T) for x in w]
    x = load(d, "x").astype(f32)

    def infer(v):
        h = np.maximum(v @ wt[0] + b[0], 0)
        h = np.maximum(h @ wt[1] + b[1], 0)
        return h @ wt[2] + b[2]

    out = {}
    batch = x[:256].copy()
    out["infer_batch256"] = rate(lambda: infer(batch), 256, seconds)
    out["infer_all"] = rate(lambda: infer(x), len(x), seconds)
    out["infer_outputs"] = infer(x).tolist()

    # ES: the group's members on the buffer.
    xb = load(d, "xb").astype(f32)
    t = load(d, "t").astype(f32)
    rows = load(d, "rows").astype(np.int64)  # per group parameter: its neuron
    cols = load(d, "cols").astype(np.int64)  # and its input
    dm = load(d, "d").astype(f32)  # [member][parameter], real units
    n_members, m = dm.shape[0], xb.shape[0]
    pre1 = xb @ wt[0] + b[0]  # committed, cached
    segs = []
    for r in np.unique(rows):
        sel = np.nonzero(rows == r)[0]
        segs.append((int(r), np.ascontiguousarray(xb[:, cols[sel]].T), np.ascontiguousarray(dm[:, sel])))

    def members():
        pre = np.broadcast_to(pre1, (n_members, m, pre1.shape[1])).copy()
        for r, xs, ds in segs:
            pre[:, :, r] += ds @ xs
        h = np.maximum(pre, 0).reshape(n_members * m, -1)
        h = np.maximum(h @ wt[1] + b[1], 0)
        y = (h @ wt[2] + b[2]).reshape(n_members, m, -1)
        return np.abs(y - t).sum(axis=(1, 2))

    out["es_member_samples"] = rate(members, n_members * m, seconds)
    out["es_losses"] = members().tolist()
    try:
        from threadpoolctl import threadpool_info

        out["blas"] = [
            {k: i.get(k) for k in ("internal_api", "version", "architecture", "num_threads", "threading_layer")}
            for i in threadpool_info()
        ]
    except ImportError:
        out["blas"] = "threadpoolctl not installed"
    out["numpy"] = np.__version__
    print(json.dumps(out))


if __name__ == "__main__":
    main()
