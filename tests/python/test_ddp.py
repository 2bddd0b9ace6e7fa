"""wino.torch under DistributedDataParallel on the CPU: the experiment of wino.experiments.ddp
(the GPU test runs it under torchrun on NCCL) in two gloo processes, small: every process ends
with the same parameters, and they equal one process's training on the whole batches within
rounding, in FP32 and under autocast to BF16 and FP16; and wino.torch.Conv2d under autocast against
torch.nn.Conv2d."""
import json
import os
import tempfile

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import wino.torch as wt
from wino.experiments import ddp

SMALL = ["--steps", "3", "--batch", "8", "--size", "8", "--width", "8", "--warmup", "1",
         "--reps", "2"]


def worker(rank, world, init_file, argv):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world)
    try:
        ddp.run(ddp.parse(argv), rank, world)
        dist.barrier()  # both ranks past their last collective
    except BaseException:
        dist.destroy_process_group()
        raise
    # The checks are done and the files written: leave without tearing gloo down and without
    # the interpreter's and the C++ libraries' teardown, where a thread of torch's gloo backend
    # now and then aborted the process after a clean run ("terminate called without an active
    # exception", SIGABRT).
    os._exit(0)


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
def test_two_processes_equal_one(dtype):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "ddp")
        argv = SMALL + ["--dtype", dtype, "--out", out]
        mp.spawn(worker, args=(2, os.path.join(d, "init"), argv), nprocs=2, join=True)
        with open(out + ".json") as f:
            record = json.load(f)
        with open(out + ".csv") as f:
            rows = f.read().splitlines()
    check = record["check"]
    assert check["ranks_equal"]
    assert check["ddp_vs_single"] <= ddp.TOLERANCE[dtype], check
    assert check["pass"]
    assert len(check["runs"]) == 4  # the four convolutions, each explained
    if dtype == "f32":  # wino's CPU engines run FP32: its kernels, not torch's, were checked
        first, *others = check["runs"].values()  # the images need no gradient
        assert first == "wino/not run yet/wino", check["runs"]
        assert all(r == "wino/wino/wino" for r in others), check["runs"]
    # one row per impl for 1 and for 2 processes
    assert len(rows) == 1 + 2 * len(ddp.IMPLS)
    assert {(t["impl"], t["processes"]) for t in record["timings"]} == \
        {(impl, p) for impl, _ in ddp.IMPLS for p in (1, 2)}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_autocast_as_torch(dtype):
    """Under torch.autocast, wino.torch.Conv2d computes in autocast's dtype like nn.Conv2d:
    the same output dtype and values, FP32 gradients of the FP32 parameters."""
    torch.manual_seed(0)
    ref = torch.nn.Conv2d(5, 7, 3, padding=1)
    mine = wt.convert(torch.nn.Conv2d(5, 7, 3, padding=1))
    mine.load_state_dict(ref.state_dict())
    x = torch.randn(2, 5, 9, 9)
    outs = []
    for m in (ref, mine):
        with torch.autocast("cpu", dtype=dtype):
            y = m(x)
        y.float().square().sum().backward()
        outs.append((y, m.weight.grad, m.bias.grad))
    (y0, gw0, gb0), (y1, gw1, gb1) = outs
    assert y1.dtype == y0.dtype == dtype
    assert gw1.dtype == gb1.dtype == torch.float32
    for a, b in ((y1, y0), (gw1, gw0), (gb1, gb0)):  # within the 16-bit dtype's rounding
        a, b = a.float(), b.float()
        assert (a - b).abs().max() <= 2e-2 * b.abs().max()
