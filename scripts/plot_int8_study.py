#!/usr/bin/env python3
"""Draws `wino calibrate --study --csv` output: SQNR against FP32 per layer for every INT8
Winograd tile and clipping method, beside INT8 direct convolution (needs matplotlib).

usage: scripts/plot_int8_study.py STUDY.csv OUT.png
"""
import csv
import math
import sys
from collections import OrderedDict


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    layers = list(OrderedDict.fromkeys(r["layer"] for r in rows))
    series = list(OrderedDict.fromkeys((r["algo"], r["clip"]) for r in rows))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / len(series)
    for i, (algo, clip) in enumerate(series):
        ys = []
        for layer in layers:
            v = [float(r["sqnr_db"]) for r in rows
                 if r["layer"] == layer and r["algo"] == algo and r["clip"] == clip]
            ys.append(v[0] if v and not math.isnan(v[0]) else 0.0)
        ax.bar([x + i * width for x in range(len(layers))], ys, width,
               label=f"{algo}, clip {clip}" if algo != "direct" else "INT8 direct")
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(layers))])
    ax.set_xticklabels(layers)
    ax.set_ylabel("SQNR against FP32 (dB)")
    ax.axhline(0, color="black", linewidth=0.5)
    ax.legend(fontsize=7, ncol=4)
    ax.set_title("INT8 Winograd vs INT8 direct: output SQNR (0 = refused, int32 bound)")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
