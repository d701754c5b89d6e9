#!/usr/bin/python3
"""Plots shardlin-bench's JSON: time and bytes against rows, per strategy.

    /usr/bin/python3 bench/plot.py RESULTS.json OUT.png [--features=F]

One row of panels per world size W > 1 and quantity (time, bytes sent per
rank), one column per sharding dim, for N = K = F (default: the largest F in
the results). Time panels: each strategy on the threads backend (solid) and
the mpi backend (dotted), `auto` as open circles, the dense OpenBLAS GEMM +
bias of the same total work on all cores (black dashed) and PyTorch's
F.linear (grey, when measured). Bytes panels: measured bytes per rank
(markers) on the cost model's prediction (line).

Exits with status 3 and a message if matplotlib is not installed.
"""

import json
import sys

COLORS = {"activations": "tab:blue", "gather-weight": "tab:orange",
          "auto": "tab:green"}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:]
                if a.startswith("--") and "=" in a)
    if len(args) != 2:
        print(__doc__)
        sys.exit(2)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:
        print("matplotlib is not available to %s: %s "
              "(apt-get install python3-matplotlib)" % (sys.executable, e))
        sys.exit(3)

    with open(args[0]) as f:
        data = json.load(f)
    runs = [r for r in data.get("linear", [])
            if "median_s" in r and r["world_size"] > 1]
    if not runs:
        print("no multi-rank linear results to plot in %s" % args[0])
        sys.exit(4)
    features = int(opts.get("features", 0)) or max(r["n"] for r in runs)
    runs = [r for r in runs if r["n"] == features and r["k"] == features]
    worlds = sorted({r["world_size"] for r in runs})
    dims = [d for d in (1, 0) if any(r["dim"] == d for r in runs)]
    dense = {(d["m"], d["n"], d["k"]): d["median_s"]
             for d in data.get("dense", [])}
    torch = {(t["m"], t["n"], t["k"]): t["median_s"]
             for t in data.get("torch", {}).get("results", [])}

    nrows = 2 * len(worlds)
    fig, axes = plt.subplots(nrows, len(dims), figsize=(6.2 * len(dims),
                                                         3.3 * nrows),
                             squeeze=False)
    for wi, w in enumerate(worlds):
        for di, dim in enumerate(dims):
            ax_t = axes[2 * wi][di]
            ax_b = axes[2 * wi + 1][di]
            sel = [r for r in runs if r["world_size"] == w and r["dim"] == dim]
            rows = sorted({r["rows"] for r in sel})
            for strategy in ("activations", "gather-weight", "auto"):
                for backend, style in (("threads", "-"), ("mpi", ":")):
                    pts = sorted((r["rows"], r["median_s"] * 1e3)
                                 for r in sel if r["strategy"] == strategy
                                 and r["backend"] == backend)
                    if not pts:
                        continue
                    xs, ys = zip(*pts)
                    label = "%s (%s)" % (strategy, backend)
                    if strategy == "auto":
                        ax_t.plot(xs, ys, "o", mfc="none",
                                  color=COLORS[strategy], ms=9 if
                                  backend == "threads" else 6, label=label)
                    else:
                        ax_t.plot(xs, ys, style, marker=".",
                                  color=COLORS[strategy], label=label)
                # Bytes: backend independent; threads (else mpi) results.
                pts = sorted((r["rows"], r["bytes_sent_max"],
                              r["bytes_predicted_max"]) for r in sel
                             if r["strategy"] == strategy and
                             r["backend"] == "threads")
                if not pts:
                    pts = sorted((r["rows"], r["bytes_sent_max"],
                                  r["bytes_predicted_max"]) for r in sel
                                 if r["strategy"] == strategy)
                if pts:
                    xs, meas, pred = zip(*pts)
                    if strategy == "auto":
                        ax_b.plot(xs, meas, "o", mfc="none", ms=9,
                                  color=COLORS[strategy],
                                  label="auto (measured)")
                    else:
                        ax_b.plot(xs, pred, "-", color=COLORS[strategy],
                                  alpha=0.6, label=strategy + " (model)")
                        ax_b.plot(xs, meas, "x", color=COLORS[strategy],
                                  label=strategy + " (measured)")
            dx = [b for b in rows if (w * b, features, features) in dense]
            if dx:
                ax_t.plot(dx, [dense[(w * b, features, features)] * 1e3
                               for b in dx], "k--",
                          label="dense OpenBLAS GEMM+bias, %d cores"
                          % data["machine"]["cores"])
            tx = [b for b in rows if (w * b, features, features) in torch]
            if tx:
                ax_t.plot(tx, [torch[(w * b, features, features)] * 1e3
                               for b in tx], color="grey", ls="-.",
                          label="torch F.linear (dense)")
            split = "K split (row-wise)" if dim == 1 else "N split (col-wise)"
            ax_t.set_title("W = %d, %s: time per step" % (w, split))
            ax_b.set_title("W = %d, %s: bytes sent per rank (max)" % (w, split))
            ax_t.set_ylabel("ms (median)")
            ax_b.set_ylabel("bytes")
            for ax in (ax_t, ax_b):
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xlabel("B (rows per rank)")
                ax.grid(True, which="major", alpha=0.3)
                ax.legend(fontsize=7, loc="upper left")
    m = data.get("machine", {})
    fig.suptitle("shardlin-bench: y = x A^T + b, f32, N = K = %d  "
                 "(%d cores, load %.2f-%.2f, OpenBLAS)" %
                 (features, m.get("cores", 0), m.get("load_start", -1),
                  m.get("load_end", -1)), fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(args[1], dpi=72)


if __name__ == "__main__":
    main()
