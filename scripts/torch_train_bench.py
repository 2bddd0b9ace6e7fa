#!/usr/bin/env python3
"""A training step of one convolution layer in PyTorch: forward, then backward for dx and dw
(y = conv(x), y.backward(dy)), timed for torch.nn.Conv2d (cudnn.benchmark on) and for
wino.torch.Conv2d on the layers of a `wino bench` set, in the same process. Writes CSV rows:

  set,layer,N,C,H,W,K,R,S,pad,dtype,impl,ms,ratio_torch_over_impl,runs,device

impl: torch; wino.torch (what a user of wino.torch.Conv2d gets: wino's AUTO, which on CUDA
takes cuDNN's engine where it timed faster); wino (wino.torch.set_algo("winograd"): wino's own
kernels, torch's where they refuse the layer). ratio = torch's ms / this impl's ms (> 1: faster
than torch); runs = what ran forward / backward-data / backward-filter (wino, cudnn or torch,
from explain()). Timing as scripts/torch_baseline.py (median of back-to-back calls with an
event between them, after warm-up calls that create the operators and let cuDNN choose). f16
and bf16 run channels_last, f32 with TF32 off.

With --kernels CSV, the GPU kernels of each step are profiled (torch.profiler, a few steps)
and written per step: layer,impl,kernel,calls,us. A step's time far above the sum of its
kernels points at the host (launch gaps, synchronization), not at a kernel.

usage: torch_train_bench.py --set NAME [--dtype f32|f16|bf16] [--batch N] [--reps R]
                            [--warmup W] [--sets-dir DIR] [--out CSV] [--kernels CSV]
"""
import copy
import csv
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_baseline import layer_script_args, median_ms, read_set, timing_mode  # noqa: E402

import wino.torch as wt  # noqa: E402

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
HEADER = "set,layer,N,C,H,W,K,R,S,pad,dtype,impl,ms,ratio_torch_over_impl,runs,device".split(",")


KERNEL_STEPS = 5
IMPLS = (("torch", None), ("wino.torch", "auto"), ("wino", "winograd"))  # (impl, wino's algo)


def step_of(module, x, dy):
    def step():
        x.grad = None
        module.weight.grad = None
        module(x).backward(dy)
    return step


def kernel_rows(step):
    """(kernel name, calls per step, microseconds per step) of the GPU kernels and copies of
    KERNEL_STEPS steps, the longest first."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(KERNEL_STEPS):
            step()
        torch.cuda.synchronize()
    rows = [(e.key, e.count / KERNEL_STEPS, e.device_time_total / KERNEL_STEPS)
            for e in prof.key_averages() if e.device_time_total > 0]
    return sorted(rows, key=lambda r: -r[2])


def main():
    args = layer_script_args(__doc__.split("\n\n")[0], DTYPES, extra=[("--kernels", "")])
    timing_mode(torch)
    dtype, dev = DTYPES[args.dtype], torch.device("cuda")
    fmt = torch.contiguous_format if dtype == torch.float32 else torch.channels_last
    out = sys.stdout if args.out == "-" else open(args.out, "w", newline="")
    w = csv.writer(out)
    w.writerow(HEADER)
    name = torch.cuda.get_device_name(dev)
    kernels = csv.writer(open(args.kernels, "w", newline="")) if args.kernels else None
    if kernels:
        kernels.writerow(["layer", "impl", "kernel", "calls", "us"])
    for layer in read_set(args.sets_dir, args.set):
        lname, n, c, h, wd, k, r, s, pad, stride = layer
        n = args.batch or n
        torch.manual_seed(0)
        ref = torch.nn.Conv2d(c, k, (r, s), stride, pad, bias=False).to(dev, dtype)
        ref = ref.to(memory_format=fmt)
        mod = wt.convert(copy.deepcopy(ref))
        x = torch.randn(n, c, h, wd, device=dev, dtype=dtype).to(memory_format=fmt)
        x.requires_grad_()
        dy = torch.randn_like(ref(x)).to(memory_format=fmt)
        base = [args.set, lname, n, c, h, wd, k, r, s, pad, args.dtype]
        t_ms = None
        for impl, algo in IMPLS:
            module = ref if algo is None else mod
            wt.set_algo(algo or "auto")
            step = step_of(module, x, dy)
            ms = median_ms(torch, step, args.warmup, args.reps)
            t_ms = t_ms or ms
            row = wt.explain(module)[0]
            runs = "/".join(row[kind][0] for kind in ("forward", "backward_data",
                                                       "backward_filter"))
            w.writerow(base + [impl, f"{ms:.4f}", f"{t_ms / ms:.3f}", runs, name])
            for kname, calls, us in kernel_rows(step) if kernels else ():
                kernels.writerow([lname, impl, kname[:120], f"{calls:g}", f"{us:.1f}"])
        wt.set_algo("auto")
        out.flush()


if __name__ == "__main__":
    main()
