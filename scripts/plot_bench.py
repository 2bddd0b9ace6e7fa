#!/usr/bin/env python3
"""Summarise `wino bench --csv` files: per layer, the speed of wino's automatic choice (and of
its best Winograd tile) relative to oneDNN's best algorithm, printed as a Markdown table with
geometric means, and drawn as a bar chart (needs matplotlib). A file may hold several runs of
the same bench: each implementation's time is the median of its runs.

usage: scripts/plot_bench.py OUT.png CSV [CSV ...]
"""
import csv
import math
import statistics
import sys
from collections import OrderedDict


def load(paths):
    """(set, layer, N) -> {impl: (ms, tile)} with medians over the runs, the fastest tile for
    wino-winograd; and the files' dtypes, thread counts and ops."""
    runs = OrderedDict()  # (set, layer, N) -> {(impl, tile): [ms, ...]}
    dtypes, threads, ops = set(), set(), set()
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = (row["set"], row["layer"], int(row["N"]))
                runs.setdefault(key, {}).setdefault((row["impl"], row["tile"]), []).append(
                    float(row["ms"]))
                dtypes.add(row["dtype"])
                threads.add(row.get("threads", ""))
                ops.add(row.get("op") or "fwd")
    layers = OrderedDict()
    for key, impls in runs.items():
        best = layers.setdefault(key, {})
        for (impl, tile), times in impls.items():
            ms = statistics.median(times)
            if impl in best and impl == "wino-winograd" and best[impl][0] <= ms:
                continue  # keep the fastest tile
            best[impl] = (ms, tile)
    return layers, dtypes, threads, ops


# The issues' targets against oneDNN's best: backward-filter 1.3x, the forward engines 1.5x.
TARGETS = {"bwd-filter": 1.3}


def ratios(layers):
    out = []
    for key, impls in layers.items():
        onednn = [impls[i][0] for i in ("onednn-direct", "onednn-winograd") if i in impls]
        if not onednn or "wino-auto" not in impls:
            continue
        best = min(onednn)
        auto_ms, auto_tile = impls["wino-auto"]
        tile_ms, tile = impls.get("wino-winograd", (float("nan"), ""))
        direct = impls.get("onednn-direct", (float("nan"), ""))[0]
        out.append((key, best / auto_ms, auto_tile, best / tile_ms, tile, direct / auto_ms))
    return out


def geomean(values):
    values = [v for v in values if v == v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    layers, dtypes, threads, ops = load(sys.argv[2:])
    rows = ratios(layers)
    print("| set | layer | N | wino-auto tile | vs oneDNN best | vs oneDNN direct | best wino tile | vs oneDNN best |")
    print("| --- | --- | ---: | --- | ---: | ---: | --- | ---: |")
    for (s, layer, n), auto, auto_tile, tile_ratio, tile, vs_direct in rows:
        tile_text = f"{tile} | {tile_ratio:.2f}x" if tile_ratio == tile_ratio else "- | -"
        print(f"| {s} | {layer} | {n} | {auto_tile or 'direct'} | {auto:.2f}x | {vs_direct:.2f}x "
              f"| {tile_text} |")
    print(f"\ngeomean wino-auto vs oneDNN best: {geomean([r[1] for r in rows]):.2f}x over {len(rows)} layers")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [f"{s}:{layer}:N{n}" for (s, layer, n), *_ in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.35 * len(rows)), 4.5))
    ax.bar(range(len(rows)), [r[1] for r in rows], color="tab:blue", label="wino-auto")
    ax.axhline(1.0, color="black", linewidth=0.8)
    target = TARGETS.get(next(iter(ops)), 1.5) if len(ops) == 1 else 1.5
    ax.axhline(target, color="tab:red", linewidth=0.8, linestyle="--", label=f"target {target}x")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, rotation=75, fontsize=7)
    ax.set_ylabel("speed vs oneDNN best (x)")
    dtype = "/".join(sorted(d.upper() for d in dtypes))
    where = f" ({'/'.join(sorted(threads))} threads)" if threads - {""} else ""
    what = "" if ops == {"fwd"} or not ops else " " + "/".join(sorted(ops))
    ax.set_title(f"wino {dtype}{what}{where} vs oneDNN 2.6 best of direct/Winograd")
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)


if __name__ == "__main__":
    main()
