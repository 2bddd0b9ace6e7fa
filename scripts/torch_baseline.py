#!/usr/bin/env python3
"""What a PyTorch user gets: times torch.nn.functional.conv2d on the layers of a `wino bench` set
and writes rows in the bench's CSV format with impl = torch, so that gpu-check can append them to
the CSV of the `wino bench --backend cuda` run of the same set and both are measured in one run.
--op bwd-data / bwd-filter time torch.ops.aten.convolution_backward instead (what autograd
calls) with output_mask selecting grad_input (dx from dy and w) or grad_weight (dw from x and
dy) alone, on the layer's dy (uniform in (-1, 1), like x and w); the op column says which.

Timing as `wino bench`: cudnn.benchmark = True, W warm-up calls (the first one lets cuDNN pick its
engine for the shape), then R calls enqueued behind a GPU sleep (so that the GPU runs them back
to back, whatever the host spends on a call) with a CUDA event between consecutive calls; the
median of the R intervals. f16 and bf16 run in channels_last (NHWC, like wino), f32
with TF32 off (torch's default for convolutions is TF32 on) in NCHW, torch's default, and in
channels_last (wino's layout): a row each (--layout picks one). --dtype int8 times f16:
torch has no INT8 convolution on CUDA, and FP16 is what wino's INT8 kernels must beat.

Columns are taken from the CSV that --append names (its header line), or the bench's header;
what does not apply to torch stays empty (tile, workspace_bytes, variant, threads, choice).
error / rel_l1 = relative L1 error against torch's float64 convolution of the same inputs on
the GPU; prepare_ms = the first call's wall time (cuDNN's engine search included).

usage: torch_baseline.py --set NAME [--dtype f16|bf16|f32|int8] [--op fwd|bwd-data|bwd-filter]
                         [--layout nchw|nhwc] [--batch N] [--reps R] [--warmup W]
                         [--sets-dir DIR] [--append CSV]
"""
import argparse
import csv
import os
import statistics
import sys
import time

BENCH_HEADER = ('set,layer,N,C,H,W,K,R,S,pad,dtype,backend,impl,tile,ms,eff_gflops,'
                'workspace_bytes,device').split(',')


def read_set(sets_dir, name):
    """The layers of bench/sets/NAME.txt: `name N C H W K R S pad stride` per line, # comments."""
    layers = []
    with open(os.path.join(sets_dir, name + '.txt')) as f:
        for line in f:
            fields = line.split('#', 1)[0].split()
            if not fields:
                continue
            if len(fields) != 10:
                sys.exit(f'torch_baseline: {name}.txt: expected `name N C H W K R S pad stride`: '
                         f'{line.strip()}')
            layers.append([fields[0]] + [int(v) for v in fields[1:]])
    return layers


def layer_script_args(description, dtypes, extra=()):
    """The arguments that the per-layer GPU scripts beside this one share: --set, --dtype (one of
    dtypes), --batch, --reps, --warmup, --sets-dir and --out, and a script's own string options
    (extra: (flag, default) pairs), parsed."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument('--set', required=True)
    ap.add_argument('--dtype', default='f32', choices=sorted(dtypes))
    ap.add_argument('--batch', type=int, default=0)
    ap.add_argument('--reps', type=int, default=30)
    ap.add_argument('--warmup', type=int, default=5)
    ap.add_argument('--sets-dir', default=os.path.join(os.path.dirname(__file__), '..', 'bench',
                                                       'sets'))
    ap.add_argument('--out', default='-')
    for flag, default in extra:
        ap.add_argument(flag, default=default)
    return ap.parse_args()


def timing_mode(torch):
    """What a PyTorch user timing convolutions sets: cudnn.benchmark on, TF32 off."""
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


def sleep_cycles(torch, seconds):
    """GPU clock cycles of torch.cuda._sleep that last about seconds (measured once)."""
    if not hasattr(sleep_cycles, 'per_second'):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(10 ** 7)
        stop.record()
        stop.synchronize()
        sleep_cycles.per_second = 10 ** 7 / (start.elapsed_time(stop) * 1e-3)
    return int(seconds * sleep_cycles.per_second)


def median_ms(torch, call, warmup, reps):
    """Median of reps back-to-back calls, an event between consecutive ones (as `wino bench`).
    The calls wait behind a GPU sleep that outlasts the host's enqueueing of them all, so that
    the GPU runs them back to back and the intervals time the GPU alone: enqueued as the host
    goes, a kernel shorter than torch's dispatch (tens of microseconds a call on some hosts)
    timed the host instead. The sleep grows until the first event is still pending when the
    host has enqueued the last call."""
    call()  # the first call may search cuDNN's engines: not the host's cost of a call
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(max(warmup - 1, 1)):
        call()
    host_s = (time.perf_counter() - start) / max(warmup - 1, 1) * reps
    torch.cuda.synchronize()
    cycles = sleep_cycles(torch, 2 * host_s + 1e-3)
    for _ in range(5):
        events = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
        torch.cuda._sleep(cycles)
        events[0].record()
        for i in range(reps):
            call()
            events[i + 1].record()
        ahead = not events[0].query()
        events[-1].synchronize()
        if ahead:
            return statistics.median(events[i].elapsed_time(events[i + 1]) for i in range(reps))
        cycles *= 4
    sys.exit('torch_baseline: the host could not enqueue the calls ahead of the GPU')


def layer_row(torch, index, layer, args, dtype, nhwc, device_name):
    import torch.nn.functional as F
    name, n, c, h, w, k, r, s, pad, stride = layer
    if args.batch:
        n = args.batch
    gen = torch.Generator(device='cuda').manual_seed(index + 1)
    x = torch.rand(n, c, h, w, device='cuda', generator=gen) * 2 - 1
    wt = torch.rand(k, c, r, s, device='cuda', generator=gen) * 2 - 1
    p, q = (h + 2 * pad - r) // stride + 1, (w + 2 * pad - s) // stride + 1
    dy = torch.rand(n, k, p, q, device='cuda', generator=gen) * 2 - 1
    x, wt, dy = x.to(dtype), wt.to(dtype), dy.to(dtype)
    if nhwc:
        x = x.contiguous(memory_format=torch.channels_last)
        wt = wt.contiguous(memory_format=torch.channels_last)
        dy = dy.contiguous(memory_format=torch.channels_last)

    def compute(x, wt, dy):
        if args.op == 'fwd':
            return F.conv2d(x, wt, padding=pad, stride=stride)
        grads = torch.ops.aten.convolution_backward(
            dy, x, wt, None, [stride, stride], [pad, pad], [1, 1], False, [0, 0], 1,
            [args.op == 'bwd-data', args.op == 'bwd-filter', False])
        return grads[0] if args.op == 'bwd-data' else grads[1]

    def call():
        return compute(x, wt, dy)

    torch.cuda.synchronize()
    start = time.perf_counter()
    y = call()
    torch.cuda.synchronize()
    prepare_ms = (time.perf_counter() - start) * 1e3
    ref = compute(x.double(), wt.double(), dy.double())
    err = ((y.double() - ref).abs().sum() / ref.abs().sum()).item()
    del ref
    ms = median_ms(torch, call, args.warmup, args.reps)
    gflop = 2e-9 * n * k * c * r * s * p * q
    return {
        'set': args.set, 'layer': name, 'N': n, 'C': c, 'H': h, 'W': w, 'K': k, 'R': r, 'S': s,
        'pad': pad, 'stride': stride, 'dtype': args.torch_dtype, 'backend': 'cuda',
        'impl': 'torch', 'tile': '', 'ms': f'{ms:.5g}', 'eff_gflops': f'{gflop / ms * 1e3:.5g}',
        'workspace_bytes': '', 'device': device_name, 'layout': 'NHWC' if nhwc else 'NCHW',
        'error': f'{err:.3g}', 'rel_l1': f'{err:.3g}', 'prepare_ms': f'{prepare_ms:.4g}',
        'op': args.op,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--set', required=True)
    ap.add_argument('--dtype', default='f32', choices=['f32', 'f16', 'bf16', 'int8'])
    ap.add_argument('--op', default='fwd', choices=['fwd', 'bwd-data', 'bwd-filter'])
    ap.add_argument('--layout', choices=['nchw', 'nhwc'],
                    help='only this layout (default: nhwc; f32 both)')
    ap.add_argument('--batch', type=int, default=0, help='override every layer\'s batch size')
    ap.add_argument('--reps', type=int, default=30)
    ap.add_argument('--warmup', type=int, default=5)
    ap.add_argument('--sets-dir', default='bench/sets')
    ap.add_argument('--append', metavar='CSV', help='append rows to CSV, in its columns')
    args = ap.parse_args()
    if args.reps < 1 or args.warmup < 1 or args.batch < 0:
        ap.error('--reps and --warmup must be >= 1, --batch >= 0')
    layers = read_set(args.sets_dir, args.set)
    import torch
    if not torch.cuda.is_available():
        sys.exit('torch_baseline: torch sees no CUDA device')
    timing_mode(torch)
    dtype = {'f32': torch.float32, 'f16': torch.float16, 'bf16': torch.bfloat16,
             'int8': torch.float16}[args.dtype]
    args.torch_dtype = {'f32': 'f32', 'f16': 'f16', 'bf16': 'bf16', 'int8': 'f16'}[args.dtype]
    device_name = torch.cuda.get_device_name()
    header = BENCH_HEADER + ['layout', 'stride', 'error', 'prepare_ms', 'op']
    out = sys.stdout
    if args.append and os.path.exists(args.append):
        with open(args.append) as f:
            header = next(csv.reader(f), None) or header
    if args.append:
        out = open(args.append, 'a', newline='')
    writer = csv.DictWriter(out, fieldnames=header, extrasaction='ignore', restval='',
                            lineterminator='\n')
    if not args.append or out.tell() == 0:
        writer.writeheader()
    layouts = [args.layout == 'nhwc'] if args.layout else \
        [False, True] if dtype == torch.float32 else [True]
    for nhwc in layouts:
        total = 0.0
        for index, layer in enumerate(layers):
            row = layer_row(torch, index, layer, args, dtype, nhwc, device_name)
            total += float(row['ms'])
            writer.writerow(row)
            out.flush()
        print(f'torch_baseline: {args.set} {args.torch_dtype} {args.op} '
              f'{"NHWC" if nhwc else "NCHW"}: {len(layers)} layers, {total:.4f} ms total '
              f'(torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, '
              f'{device_name})', file=sys.stderr)


if __name__ == '__main__':
    main()
