#!/usr/bin/env python3
"""Summarizes `wino bench --backend cuda --csv` results against the CUDA backend's targets:
per layer wino's best Winograd row against cuDNN's best row (both layouts) of the same file, the
geomean, and for INT8 deeplabv3-r18 the comparison with cuDNN's best FP16 of a second file.
With --torch: per layer wino's best own kernel (never a cuDNN row, nor best-measured or the
wino-auto of files before 2026-11-23, which may copy one) against the torch row
(scripts/torch_baseline.py; the faster layout where it has two) that gpu-check appended to the
same file: the totals and the geomean of the per-layer ratios torch / wino (> 1: wino faster).
--plot-torch draws those ratios per layer on a log scale, one panel per file, beside the same
ratios for wino-auto (the library's AUTO choice) and cudnn-graph where the file has them.
usage: cuda_targets.py FILE.csv [...]   |   cuda_targets.py --int8-vs-f16 INT8.csv F16.csv
       cuda_targets.py --plot OUT.png FILE.csv [...]   (bars per layer; needs matplotlib)
       cuda_targets.py --torch FILE.csv [...]   |   --plot-torch OUT.png FILE.csv [...]"""
import csv
import math
import sys
from collections import OrderedDict


def best_rows(path):
    """layer -> (wino best row or None, cuDNN best row or None, C)."""
    layers = OrderedDict()
    for r in csv.DictReader(open(path)):
        w, c, _ = layers.get(r['layer'], (None, None, int(r['C'])))
        ms = float(r['ms'])
        if r['impl'] in ('wino-winograd', 'wino-fused', 'wino-fused-out', 'wino-rows') and (w is None or ms < float(w['ms'])):
            w = r
        if r['impl'].startswith('cudnn') and (c is None or ms < float(c['ms'])):
            c = r
        layers[r['layer']] = (w, c, int(r['C']))
    return layers


def geomean(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float('nan')


def summary(path):
    ratios = []
    print(f'## {path}')
    print('| layer | C | wino best | ms | cuDNN best | ms | cuDNN / wino | wino of floor |')
    print('|---|---|---|---|---|---|---|---|')
    for layer, (w, c, ch) in best_rows(path).items():
        if not w or not c:
            continue
        ratio = float(c['ms']) / float(w['ms'])
        ratios.append(ratio)
        print(f"| {layer} | {ch} | {w['tile']} {w['impl'][5:]} | {float(w['ms']):.4f} | {c['impl']} {c['layout']} |"
              f" {float(c['ms']):.4f} | {ratio:.2f} | {float(w['of_floor']):.2f} |")
    print(f'\ngeomean cuDNN best / wino best: {geomean(ratios):.2f} over {len(ratios)} layers; '
          f'>= 2x on {sum(r >= 2 for r in ratios)}\n')


def int8_vs_f16(int8_path, f16_path):
    i8, f16 = best_rows(int8_path), best_rows(f16_path)
    print(f'## INT8 {int8_path} against FP16 {f16_path}')
    print('| layer | C | wino INT8 best | ms | cuDNN INT8 ms | cuDNN FP16 ms | vs cuDNN FP16 | vs cuDNN INT8 | choice ms |')
    print('|---|---|---|---|---|---|---|---|---|')
    total_choice = total_f16 = 0.0
    for layer, (w, c, ch) in i8.items():
        h = f16[layer][1]
        choice = min(float(w['ms']), float(c['ms']))
        total_choice += choice
        total_f16 += float(h['ms'])
        print(f"| {layer} | {ch} | {w['tile']} {w['impl'][5:]} | {float(w['ms']):.4f} | {float(c['ms']):.4f} | {float(h['ms']):.4f} |"
              f" {float(h['ms']) / float(w['ms']):.2f} | {float(c['ms']) / float(w['ms']):.2f} |"
              f" {choice:.4f} |")
    print(f'\n13-layer total with the per-layer choice {total_choice:.3f} ms, cuDNN best FP16 '
          f'{total_f16:.3f} ms: {total_f16 / total_choice:.2f}x lower\n')


def plot(out, paths):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(paths), 1, figsize=(11, 2.6 * len(paths)), squeeze=False)
    for ax, path in zip(axes[:, 0], paths):
        rows = [(layer, float(c['ms']) / float(w['ms']))
                for layer, (w, c, _) in best_rows(path).items() if w and c]
        ax.bar(range(len(rows)), [r for _, r in rows], color='tab:blue')
        ax.axhline(1.0, color='black', linewidth=0.8)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([layer for layer, _ in rows], rotation=60, fontsize=7)
        ax.set_ylabel('cuDNN best / wino')
        name = path.rsplit('/', 1)[-1].replace('.csv', '')
        ax.set_title(f'{name}: geomean {geomean([r for _, r in rows]):.2f}x', fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


DTYPES = {'f32': 'FP32', 'f16': 'FP16', 'bf16': 'BF16', 'int8': 'INT8'}
SERIES = (('own', "wino's best own kernel", 'tab:green'), ('auto', 'wino-auto', 'tab:blue'),
          ('graph', 'cudnn-graph', 'tab:gray'))


def vs_torch(path):
    """[(layer, C, {series: fastest row})] for the layers with a torch row and a wino row:
    'torch' (its faster layout), 'own' (wino's best own kernel), 'auto' and 'graph' where the
    file has them."""
    rows = list(csv.DictReader(open(path)))
    # files without best-measured rows predate it: their wino-auto was the per-layer best of the
    # bench, which may copy a cuDNN row, not the library's choice
    library_auto = any(r['impl'] == 'best-measured' for r in rows)
    layers = OrderedDict()
    for r in rows:
        impl = r['impl']
        if impl == 'torch':
            name = 'torch'
        elif impl == 'wino-auto':
            name = 'auto' if library_auto else None
        elif impl.startswith('wino-'):
            name = 'own'
        else:
            name = 'graph' if impl == 'cudnn-graph' else None
        best = layers.setdefault(r['layer'], {})
        if name and (name not in best or float(r['ms']) < float(best[name]['ms'])):
            best[name] = r
    return [(layer, int(b['own']['C']), b) for layer, b in layers.items()
            if 'torch' in b and 'own' in b]


def speedups(rows, name):
    """torch's time over the series' per layer (nan where a layer has no such row)."""
    return [float(b['torch']['ms']) / float(b[name]['ms']) if name in b else float('nan')
            for _, _, b in rows]


def panel_geomean(rows, name):
    return geomean([r for r in speedups(rows, name) if r == r])


def torch_summary(path):
    rows = vs_torch(path)
    print(f'## {path}: wino\'s own kernels against torch, same run')
    print('| layer | C | wino best own | dtype | ms | of floor | torch dtype | ms | torch / wino |')
    print('|---|---|---|---|---|---|---|---|---|')
    ratios = speedups(rows, 'own')
    for (layer, ch, b), ratio in zip(rows, ratios):
        w, t = b['own'], b['torch']
        print(f"| {layer} | {ch} | {w['tile']} {w['impl'][5:]} | {w['dtype']} |"
              f" {float(w['ms']):.4f} | {float(w.get('of_floor') or 'nan'):.2f} | {t['dtype']} |"
              f" {float(t['ms']):.4f} | {ratio:.2f} |")
    if not rows:
        print('\n(no layer has both a wino row and a torch row)\n')
        return
    own = sum(float(b['own']['ms']) for _, _, b in rows)
    torch = sum(float(b['torch']['ms']) for _, _, b in rows)
    slower = [layer for (layer, ch, _), r in zip(rows, ratios) if r < 1 and ch >= 128]
    others = ''.join(f'; {label} {panel_geomean(rows, name):.2f}' for name, label, _ in SERIES[1:]
                     if any(name in b for _, _, b in rows))
    print(f'\ntotal over {len(rows)} layers: wino {own:.4f} ms, torch {torch:.4f} ms, wino / torch '
          f'{own / torch:.2f}; geomean torch / wino {geomean(ratios):.2f} '
          f'({min(ratios):.2f}-{max(ratios):.2f}){others}; slower than torch at C >= 128: '
          f'{", ".join(slower) or "none"}\n')


def plot_torch(out, paths):
    """One panel per file: per layer torch / row for each series the file has, log scale."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FormatStrFormatter, NullFormatter
    fig, axes = plt.subplots(len(paths), 1, figsize=(12, 2.6 * len(paths)), squeeze=False)
    for ax, path in zip(axes[:, 0], paths):
        rows = vs_torch(path)
        present = [s for s in SERIES if any(s[0] in b for _, _, b in rows)]
        width = 0.8 / len(present)
        for i, (name, label, color) in enumerate(present):
            x = [j + (i - (len(present) - 1) / 2) * width for j in range(len(rows))]
            # bars grow from the 1.0 line, so that slower than torch points down
            ax.bar(x, [v - 1 for v in speedups(rows, name)], width, bottom=1, color=color,
                   label=label)
        ax.axhline(1.0, color='black', linewidth=0.8)
        ax.set_yscale('log')
        lo, hi = ax.get_ylim()
        ax.set_yticks([t for t in (0.125, 0.25, 0.5, 1, 2, 4, 8) if lo <= t <= hi])
        ax.yaxis.set_major_formatter(FormatStrFormatter('%g'))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.tick_params(axis='y', labelsize=7)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([r[0] for r in rows], rotation=60, ha='right', fontsize=7)
        ax.set_xlim(-0.6, len(rows) - 0.4)
        ax.set_ylabel('torch / row (x)')
        own, t = rows[0][2]['own'], rows[0][2]['torch']
        against = '' if own['dtype'] == t['dtype'] else f" vs torch {DTYPES[t['dtype']]}"
        base = path.rsplit('/', 1)[-1].replace('.csv', '')
        batches = sorted({int(r[2]['own']['N']) for r in rows})
        batch = (f'batch {batches[0]}' if len(batches) == 1 else
                 'batches ' + ', '.join(map(str, batches)) + ' as in the set')
        ax.set_title(f"{own['set']} {DTYPES[own['dtype']]}{against}, {batch} ({base}); "
                     f"geomean: " + ', '.join(f'{label} {panel_geomean(rows, n):.2f}x'
                                              for n, label, _ in present), fontsize=8)
        ax.legend(fontsize=7, loc='upper left', bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=90)


if __name__ == '__main__':
    if sys.argv[1:2] == ['--torch']:
        for p in sys.argv[2:]:
            torch_summary(p)
    elif sys.argv[1:2] == ['--plot-torch']:
        plot_torch(sys.argv[2], sys.argv[3:])
    elif sys.argv[1:2] == ['--plot']:
        plot(sys.argv[2], sys.argv[3:])
    elif sys.argv[1:2] == ['--int8-vs-f16']:
        int8_vs_f16(sys.argv[2], sys.argv[3])
    else:
        for p in sys.argv[1:]:
            summary(p)
