"""Times wino's own backward-filter kernels (WinRS, fused variant: never cuDNN's engine) on NCHW
and channels_last tensors of a layer set beside torch's weight gradient
(torch.ops.aten.convolution_backward, cudnn.benchmark, FP32 with TF32 off) on one GPU, in one
process. NCHW x and dy reach the tensor-core kernel staged in NHWC (src/cuda/winrs_cuda.cu), so
the two wino rows differ by that staging. Rows: set,layer,N,C,H,W,K,R,S,pad,dtype,impl,layout,
ms,ratio_torch_over_impl,device; the ratio is over torch's faster layout.

    PYTHONPATH=python WINO_LIBRARY_DIR=build \\
        python3 scripts/torch_bwd_filter_layouts.py --set resnet18 --batch 32 --dtype f32
"""
import csv
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_baseline import layer_script_args, median_ms, read_set, timing_mode  # noqa: E402

from wino import ops as wops  # noqa: E402

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
HEADER = ("set,layer,N,C,H,W,K,R,S,pad,dtype,impl,layout,ms,ratio_torch_over_impl,"
          "device").split(",")


def wino_ms(x, dy, w_shape, pad, layout, dtype, args):
    """wino's fused WinRS on x and dy (contiguous in layout) into a dw of layout's format."""
    stream = torch.cuda.current_stream()
    (n, c, h, w), (k, _, r, s) = x.shape, w_shape
    shapes = (((n, c, h, w), (k, c, r, s)) if layout == "NCHW" else
              ((n, h, w, c), (k, r, s, c)))
    desc = wops.make_desc(*shapes, padding=pad, layout=layout, dtype=dtype)
    op = wops.Operator("backward_filter", desc,
                       context=wops.make_context("cuda", torch.cuda.current_device(),
                                                 stream.cuda_stream),
                       options=wops.make_options(algo="winograd", variant="fused"))
    fmt = torch.channels_last if layout == "NHWC" else torch.contiguous_format
    dw = torch.empty(w_shape, dtype=x.dtype, device=x.device, memory_format=fmt)
    ws = torch.empty(op.workspace_bytes + wops.ALIGNMENT, dtype=torch.uint8, device=x.device)
    at = ws.data_ptr() + (-ws.data_ptr()) % wops.ALIGNMENT
    def run():
        op.run_filter(x.data_ptr(), dy.data_ptr(), dw.data_ptr(), at, stream.cuda_stream)
    return median_ms(torch, run, args.warmup, args.reps)


def main():
    args = layer_script_args(__doc__.split("\n\n")[0], DTYPES)
    timing_mode(torch)
    torch.backends.cudnn.allow_tf32 = False
    dtype = DTYPES[args.dtype]
    device = torch.cuda.get_device_name()
    out = open(args.out, "w", newline="") if args.out != "-" else sys.stdout
    rows = csv.writer(out)
    rows.writerow(HEADER)
    for name, n, c, h, w, k, r, s, pad, stride in read_set(args.sets_dir, args.set):
        n = args.batch or n
        if stride != 1:
            continue
        g = torch.Generator(device="cuda").manual_seed(1)
        x0 = torch.rand(n, c, h, w, device="cuda", generator=g, dtype=dtype) * 2 - 1
        p, q = h + 2 * pad - r + 1, w + 2 * pad - s + 1
        dy0 = torch.rand(n, k, p, q, device="cuda", generator=g, dtype=dtype) * 2 - 1
        weight = torch.empty(k, c, r, s, device="cuda", dtype=dtype)
        times = []
        for layout, fmt in (("NCHW", torch.contiguous_format), ("NHWC", torch.channels_last)):
            x, dy = x0.contiguous(memory_format=fmt), dy0.contiguous(memory_format=fmt)
            wt = weight.contiguous(memory_format=fmt)
            def torch_dw():
                torch.ops.aten.convolution_backward(dy, x, wt, None, [1, 1], [pad, pad], [1, 1],
                                                    False, [0, 0], 1, [False, True, False])
            times.append(("torch", layout, median_ms(torch, torch_dw, args.warmup, args.reps)))
            times.append(("wino-winrs", layout,
                          wino_ms(x, dy, (k, c, r, s), pad, layout, args.dtype, args)))
        best_torch = min(t for impl, _, t in times if impl == "torch")
        for impl, layout, t in times:
            rows.writerow([args.set, name, n, c, h, w, k, r, s, pad, args.dtype, impl, layout,
                           f"{t:.4f}", f"{best_torch / t:.3f}", device])
        out.flush()


if __name__ == "__main__":
    main()
