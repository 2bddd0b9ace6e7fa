#!/usr/bin/env python3
"""A training step of one convolution layer in PyTorch: forward, then backward for dx and dw
(y = conv(x), y.backward(dy)), timed for torch.nn.Conv2d (cudnn.benchmark on) and for
wino.torch.Conv2d (wino's kernels where it serves the layer; explain() names what ran each
part) on the layers of a `wino bench` set, in the same process. Writes CSV rows:

  set,layer,N,C,H,W,K,R,S,pad,dtype,impl,ms,ratio_torch_over_impl,runs,device

impl torch or wino; ratio = torch's ms / this impl's ms (> 1: faster than torch); runs = what
ran forward / backward-data / backward-filter (wino or torch). Timing as scripts/torch_baseline.py
(median of back-to-back calls with an event between them, after warm-up calls that create the
operators and let cuDNN choose). f16 and bf16 run channels_last, f32 with TF32 off.

usage: torch_train_bench.py --set NAME [--dtype f32|f16|bf16] [--batch N] [--reps R]
                            [--warmup W] [--sets-dir DIR] [--out CSV]
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


def step_ms(module, x, dy, warmup, reps):
    def step():
        x.grad = None
        module.weight.grad = None
        module(x).backward(dy)
    return median_ms(torch, step, warmup, reps)


def main():
    args = layer_script_args(__doc__.split("\n\n")[0], DTYPES)
    timing_mode(torch)
    dtype, dev = DTYPES[args.dtype], torch.device("cuda")
    fmt = torch.contiguous_format if dtype == torch.float32 else torch.channels_last
    out = sys.stdout if args.out == "-" else open(args.out, "w", newline="")
    w = csv.writer(out)
    w.writerow(HEADER)
    name = torch.cuda.get_device_name(dev)
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
        t_ms = step_ms(ref, x, dy, args.warmup, args.reps)
        w_ms = step_ms(mod, x, dy, args.warmup, args.reps)
        row = wt.explain(mod)[0]
        runs = "/".join(row[kind][0] for kind in ("forward", "backward_data", "backward_filter"))
        base = [args.set, lname, n, c, h, wd, k, r, s, pad, args.dtype]
        w.writerow(base + ["torch", f"{t_ms:.4f}", "1.000", "torch/torch/torch", name])
        w.writerow(base + ["wino", f"{w_ms:.4f}", f"{t_ms / w_ms:.3f}", runs, name])
        out.flush()


if __name__ == "__main__":
    main()
