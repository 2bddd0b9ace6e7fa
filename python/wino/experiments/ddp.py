"""Data-parallel training with wino.torch.Conv2d (docs/python.md, "Data-parallel training"): a
small CNN whose 3x3 convolutions run on wino's operators trains under DistributedDataParallel,
one process per GPU (NCCL) or per CPU share (gloo), and is checked against the same steps in one
process on the whole global batches; then training steps are timed in one process and in all of
them, for torch.nn.Conv2d and for wino.torch.Conv2d.

    torchrun --nproc_per_node=2 -m wino.experiments.ddp --dtype f32 --out ddp_f32

writes ddp_f32.json (the checks, what ran each convolution, the timings) and ddp_f32.csv (the
timings), and exits with status 1 when a check fails. --dtype f32 trains in FP32 (TF32 off on
CUDA); bf16 and f16 in mixed precision: FP32 parameters, convolutions under torch.autocast.

The checks, on the model whose convolutions run wino's own kernels (set_algo("winograd")):
- ranks_equal: every process ends with the same parameters, bit for bit (each applies the same
  all-reduced gradient);
- ddp_vs_single: the largest difference between those parameters and the single process's, over
  the largest change training made to a parameter; rounding alone separates them (the
  all-reduce adds the processes' gradients in another order, and each convolution sees a smaller
  batch), so it must stay within TOLERANCE of the dtype;
- vs_torch (reported, not checked): the same measure against torch.nn.Conv2d's DDP training.
"""
import argparse
import csv
import datetime
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

import wino.torch as wt

DTYPES = {"f32": None, "bf16": torch.bfloat16, "f16": torch.float16}
# ddp_vs_single's bounds after the default 10 steps: FP32 rounding grown by training (H100:
# 5e-5, as far as torch.nn.Conv2d's DDP run is from wino's); 16-bit rounding of the
# convolutions' inputs and outputs (H100: 7e-4 to 1.5e-3)
TOLERANCE = {"f32": 1e-3, "bf16": 5e-2, "f16": 5e-2}
IMPLS = (("torch", None), ("wino.torch", "auto"), ("wino", "winograd"))  # (impl, wino's algo)
CLASSES = 10
COLUMNS = ["dtype", "impl", "processes", "global_batch", "ms_per_step", "images_per_s",
           "speedup_over_1", "ratio_torch_over_impl", "device"]


def make_model(width, impl_algo, device):
    """The CNN (four 3x3 convolutions, two poolings, a linear classifier) with the same initial
    parameters whatever the process; its convolutions wino.torch.Conv2d unless impl_algo is
    None (torch.nn.Conv2d)."""
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1), nn.ReLU(),
        nn.Conv2d(width, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(),
        nn.Conv2d(2 * width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * width, CLASSES))
    if impl_algo is not None:
        wt.set_algo(impl_algo)
        model = wt.convert(model)
    return model.to(device)


def batches(steps, batch, size):
    """The global batches (images, labels), the same in every process."""
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(batch, 3, size, size, generator=g),
             torch.randint(0, CLASSES, (batch,), generator=g)) for _ in range(steps)]


def shard(data, rank, world, device):
    """This process's share of each global batch, on its device."""
    out = []
    for x, t in data:
        part = x.shape[0] // world
        out.append((x[rank * part:(rank + 1) * part].to(device),
                    t[rank * part:(rank + 1) * part].to(device)))
    return out


def step_of(model, opt, dtype, device):
    """A training step on (images, labels); f16 with a loss scaler (FP16 gradients underflow
    without one), as FP16 mixed precision is trained."""
    scaler = torch.amp.GradScaler(device.type, enabled=dtype == "f16")

    def step(x, t):
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=DTYPES[dtype], enabled=DTYPES[dtype] is not None):
            loss = F.cross_entropy(model(x), t)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return step


def train(model, data, dtype, lr, device):
    """SGD with momentum over data; the final parameters, in the module's own order."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    step = step_of(model, opt, dtype, device)
    for x, t in data:
        step(x, t)
    return [p.detach().clone() for p in model.parameters()]


def relative_difference(a, b, start):
    """max |a - b| over the largest change from start to b, over all parameters."""
    diff = max((x - y).abs().max().item() for x, y in zip(a, b))
    change = max((y - s).abs().max().item() for y, s in zip(b, start))
    return diff / change


def step_ms(model, data, dtype, lr, warmup, reps, device):
    """Median ms of a training step (forward, backward with DDP's all-reduce, SGD) after warmup
    steps, each step between two CUDA events (a wall clock on the CPU)."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    step = step_of(model, opt, dtype, device)
    times = []
    for i in range(warmup + reps):
        x, t = data[i % len(data)]
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step(x, t)
            end.record()
            end.synchronize()
            ms = start.elapsed_time(end)
        else:
            t0 = time.perf_counter()
            step(x, t)
            ms = (time.perf_counter() - t0) * 1e3
        if i >= warmup:
            times.append(ms)
    return statistics.median(times)


def explain_runs(model):
    """{layer: "forward/backward_data/backward_filter" of what ran each} of a wino model."""
    module = model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model
    return {row["name"]: "/".join(row[k][0] for k in ("forward", "backward_data",
                                                         "backward_filter"))
            for row in wt.explain(module)}


def check(args, rank, world, device):
    """The checks of the module's docstring; rank 0's dict (other ranks: None)."""
    data = batches(args.steps, args.batch, args.size)
    mine = shard(data, rank, world, device)
    start = [p.detach().clone() for p in make_model(args.width, None, device).parameters()]
    wino_ddp = nn.parallel.DistributedDataParallel(make_model(args.width, "winograd", device))
    torch_ddp = nn.parallel.DistributedDataParallel(make_model(args.width, None, device))
    finals = {"wino": train(wino_ddp, mine, args.dtype, args.lr, device),
              "torch": train(torch_ddp, mine, args.dtype, args.lr, device)}
    runs = explain_runs(wino_ddp)
    gathered = [None] * world
    dist.all_gather_object(gathered, [p.cpu() for p in finals["wino"]])
    if rank != 0:
        return None
    single = train(make_model(args.width, "winograd", device), shard(data, 0, 1, device),
                   args.dtype, args.lr, device)
    result = {
        "ranks_equal": all(torch.equal(a, b) for g in gathered for a, b in zip(g, gathered[0])),
        "ddp_vs_single": relative_difference(finals["wino"], single, start),
        "vs_torch": relative_difference(finals["wino"], finals["torch"], start),
        "tolerance": TOLERANCE[args.dtype],
        "runs": runs,
    }
    result["pass"] = result["ranks_equal"] and result["ddp_vs_single"] <= result["tolerance"]
    return result


def timings(args, rank, world, device):
    """Rows (impl, processes, ms per step) for one process (rank 0 alone, the whole global
    batch; the others wait) and for all of them (DDP, each its share)."""
    data = batches(args.warmup + args.reps, args.batch, args.size)
    rows = []
    for impl, algo in IMPLS:
        if rank == 0:
            model = make_model(args.width, algo, device)
            ms = step_ms(model, shard(data, 0, 1, device), args.dtype, args.lr, args.warmup,
                         args.reps, device)
            rows.append((impl, 1, ms))
        dist.barrier()
        if world > 1:
            ddp = nn.parallel.DistributedDataParallel(make_model(args.width, algo, device))
            ms = step_ms(ddp, shard(data, rank, world, device), args.dtype, args.lr,
                         args.warmup, args.reps, device)
            rows.append((impl, world, ms))
    return rows


def device_name(device):
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def write(args, world, device, result, rows):
    torch_ms = {procs: ms for impl, procs, ms in rows if impl == "torch"}
    single_ms = {impl: ms for impl, procs, ms in rows if procs == 1}
    table = [{"dtype": args.dtype, "impl": impl, "processes": procs, "global_batch": args.batch,
              "ms_per_step": round(ms, 4), "images_per_s": round(args.batch / ms * 1e3, 1),
              "speedup_over_1": round(single_ms[impl] / ms, 3),
              "ratio_torch_over_impl": round(torch_ms[procs] / ms, 3),
              "device": device_name(device)} for impl, procs, ms in rows]
    record = {"commit": os.environ.get("WINO_COMMIT"),  # gpu-check sets it
              "date": datetime.date.today().isoformat(), "device": device_name(device),
              "world": world, "backend": dist.get_backend(), "args": vars(args),
              "torch": torch.__version__, "check": result, "timings": table}
    with open(args.out + ".json", "w") as f:
        json.dump(record, f, indent=1)
    with open(args.out + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(table)
    print(json.dumps(result, indent=1))
    for row in table:
        print(row)


def run(args, rank, world):
    """One process's part; the process group is initialized. True when the checks pass."""
    if torch.cuda.is_available() and dist.get_backend() == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
        torch.cuda.set_device(device)
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    else:
        device = torch.device("cpu")
    if args.batch % world:
        raise ValueError(f"--batch {args.batch} does not split over {world} processes")
    result = check(args, rank, world, device)
    rows = timings(args, rank, world, device) if args.reps else []
    if rank == 0:
        write(args, world, device, result, rows)
    return rank != 0 or result["pass"]


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", choices=list(DTYPES), default="f32")
    p.add_argument("--steps", type=int, default=10, help="training steps checked")
    p.add_argument("--batch", type=int, default=256, help="global batch")
    p.add_argument("--size", type=int, default=32, help="image height and width")
    p.add_argument("--width", type=int, default=64, help="channels of the first convolutions")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--warmup", type=int, default=10, help="untimed steps before the timed ones")
    p.add_argument("--reps", type=int, default=50, help="timed steps (0: no timings)")
    p.add_argument("--backend", choices=["nccl", "gloo"], default=None,
                   help="default: nccl where CUDA is available, else gloo")
    p.add_argument("--out", default="ddp", help="prefix of the .json and .csv written")
    return p.parse_args(argv)


def main():
    args = parse()
    backend = args.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    dist.init_process_group(backend)  # torchrun's environment: RANK, WORLD_SIZE, MASTER_ADDR
    try:
        ok = run(args, dist.get_rank(), dist.get_world_size())
        dist.barrier()  # every rank past its last collective before any tears the group down
    finally:
        dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
