#!/usr/bin/env python3
"""The error of wino's 16-bit CUDA backward-filter (WinRS, fused kernels) beside torch's, in the
setting of the WinRS paper's Table 4: x uniform in [0, 1), dy uniform in [0, 1) times 1e-2
(FP16's range), NHWC (channels_last), both against torch's float64 weight gradient of the same
rounded inputs on the GPU. Per layer and dtype one row:
    layer,dtype,impl,mare,rel_l1
mare = mean |dw - ref| / |ref| (the inputs are positive: every ref is), rel_l1 = sum |dw - ref| /
sum |ref|; impl wino (WINO_ALGO_WINOGRAD, the fused variant) or torch
(torch.ops.aten.convolution_backward with cudnn.benchmark, what autograd calls).

usage: winrs_accuracy.py [--set NAME] [--batch N] [--dtype f16|bf16 ...] [--sets-dir DIR]
(WINO_LIBRARY_DIR and PYTHONPATH as for the Python package's tests.)"""
import argparse
import os
import sys

import torch

from torch_baseline import read_set

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
from wino import ops as wops  # noqa: E402

DTYPES = {'f16': torch.float16, 'bf16': torch.bfloat16}


def errors(dw, ref):
    d = (dw.double() - ref).abs()
    return (d / ref.abs()).mean().item(), (d.sum() / ref.abs().sum()).item()


def wino_dw(x, dy, w_shape, pad, dtype):
    n, c, h, w = x.shape
    k, _, r, s = w_shape
    desc = wops.make_desc((n, h, w, c), (k, r, s, c), pad, 1, 1, 'NHWC', dtype)
    stream = torch.cuda.current_stream().cuda_stream
    ctx = wops.make_context('cuda', x.device.index or 0, stream)
    op = wops.Operator('backward_filter', desc, None, ctx,
                       wops.make_options(algo='winograd', variant='fused'))
    dw = torch.empty(w_shape, dtype=x.dtype, device=x.device,
                     memory_format=torch.channels_last)
    ws = torch.empty(max(op.workspace_bytes, 1), dtype=torch.uint8, device=x.device)
    op.run_filter(x.data_ptr(), dy.data_ptr(), dw.data_ptr(), ws.data_ptr(), stream)
    torch.cuda.synchronize()
    return dw


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--set', default='resnet18')
    p.add_argument('--batch', type=int, default=32)
    p.add_argument('--dtype', nargs='+', default=['f16', 'bf16'], choices=sorted(DTYPES))
    p.add_argument('--sets-dir', default=os.path.join(here, '..', 'bench', 'sets'))
    a = p.parse_args()
    torch.backends.cudnn.benchmark = True
    gen = torch.Generator(device='cuda').manual_seed(20261124)
    print('layer,dtype,impl,mare,rel_l1')
    for layer in read_set(a.sets_dir, a.set):
        name, (n, c, h, w, k, r, s, pad, stride) = layer[0], layer[1:]
        if stride != 1 or r != s:
            continue
        n = a.batch or n
        for dt in a.dtype:
            t = DTYPES[dt]
            x = torch.rand((n, c, h, w), generator=gen, device='cuda').to(t)
            p_out = h + 2 * pad - r + 1
            dy = (torch.rand((n, k, p_out, w + 2 * pad - s + 1), generator=gen,
                             device='cuda') * 1e-2).to(t)
            x = x.contiguous(memory_format=torch.channels_last)
            dy = dy.contiguous(memory_format=torch.channels_last)
            ref = torch.nn.grad.conv2d_weight(x.double(), (k, c, r, s), dy.double(),
                                              padding=pad)
            mine = wino_dw(x, dy, (k, c, r, s), pad, dt)
            theirs = torch.ops.aten.convolution_backward(
                dy, x, torch.empty((k, c, r, s), dtype=t, device='cuda'), None, [1, 1],
                [pad, pad], [1, 1], False, [0, 0], 1, [False, True, False])[1]
            for impl, dw in (('wino', mine), ('torch', theirs)):
                mare, l1 = errors(dw, ref)
                print(f'{name},{dt},{impl},{mare:.3e},{l1:.3e}', flush=True)


if __name__ == '__main__':
    main()
