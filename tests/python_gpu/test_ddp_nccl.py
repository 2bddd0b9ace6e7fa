"""wino.torch on two GPUs (run by scripts/gpu-check.sh on a machine with two or more): the
data-parallel experiment (wino.experiments.ddp) under torchrun, one process per GPU on NCCL, in
FP32 and in mixed precision (BF16, FP16), checked against one process on the whole batches; and
operators that never cross devices: each GPU gets its own, a tensor of the other GPU is refused.
On a machine with one GPU these tests are skipped (reported as skipped, not passed)."""
import json
import os
import subprocess
import sys

import pytest
import torch

import wino.torch as wt
from wino.experiments import ddp
from wino.torch import _ops

pytestmark = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
def test_torchrun_two_gpus_equal_one(dtype, tmp_path):
    out = str(tmp_path / "ddp")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "-m",
           "wino.experiments.ddp", "--dtype", dtype, "--reps", "0", "--out", out]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=os.environ)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with open(out + ".json") as f:
        record = json.load(f)
    assert record["world"] == 2 and record["backend"] == "nccl"
    check = record["check"]
    assert check["ranks_equal"], check
    assert check["ddp_vs_single"] <= ddp.TOLERANCE[dtype], check
    # the 3x3 convolutions of 64 and more channels run wino's own kernels (its Winograd
    # kernels have no BF16 forward, whose backward-data is a forward: those two run torch's)
    want = "torch/torch/wino" if dtype == "bf16" else "wino/wino/wino"
    for layer in ("2", "5", "7"):
        assert check["runs"][layer] == want, check["runs"]


def test_each_device_its_own_operator():
    """The same layer on both GPUs: each equals torch.nn.Conv2d on its device, and each device
    has its own cached operator."""
    torch.manual_seed(0)
    conf = ([1, 1], [1, 1], [1, 1])
    for index in (0, 1):
        dev = torch.device("cuda", index)
        ref = torch.nn.Conv2d(32, 32, 3, padding=1, bias=False).to(dev)
        mine = wt.convert(torch.nn.Conv2d(32, 32, 3, padding=1, bias=False)).to(dev)
        mine.load_state_dict(ref.state_dict())
        x = torch.randn(2, 32, 12, 12, device=dev)
        with torch.backends.cudnn.flags(allow_tf32=False):
            want = ref(x)
        got = mine(x)
        assert got.device == dev
        assert ((got - want).abs().max() <= 1e-4 * want.abs().max()).item()
        runs, _ = _ops.decision("forward", x.shape, mine.weight.shape, torch.float32, dev, "NCHW",
                                conf)
        assert runs in ("wino", "cudnn")
    devices = {key[0][4] for key in _ops._cache if key[0][0] == "forward"
               and key[0][1] == (2, 32, 12, 12)}
    assert devices == {"cuda:0", "cuda:1"}


def test_tensor_of_the_other_gpu_refused():
    m = wt.convert(torch.nn.Conv2d(8, 8, 3, padding=1)).to("cuda:0")
    x = torch.randn(1, 8, 6, 6, device="cuda:1")
    with pytest.raises(ValueError, match="different devices"):
        m(x)
    w = torch.randn(8, 8, 3, 3, device="cuda:0")
    with pytest.raises(ValueError, match="different devices"):
        torch.ops.wino.conv2d(x, w, [1, 1], [1, 1], [1, 1])
    dy = torch.randn(1, 8, 6, 6, device="cuda:0")
    with pytest.raises(ValueError, match="different devices"):
        torch.ops.wino.conv2d_backward_filter(x, dy, w, [1, 1], [1, 1], [1, 1])
    with pytest.raises(ValueError, match="different devices"):
        torch.ops.wino.conv2d_backward_data(x, w, [1, 8, 6, 6], [1, 1], [1, 1], [1, 1])
