"""wino.torch on a CUDA GPU (run by scripts/gpu-check.sh): wino.torch.Conv2d against an FP64
reference in FP32, FP16 and BF16, NCHW and channels_last; what runs where (explain); a training
step captured in a CUDA graph (so nothing in it synchronizes or allocates outside torch);
INT8 on the GPU equal to the CPU's bytes; bad input."""
import copy

import numpy as np
import pytest
import torch

import wino
import wino.torch as wt

DEV = torch.device("cuda")
torch.backends.cudnn.allow_tf32 = False  # torch's own FP32 convolutions (the fallbacks) in FP32
# relative L1 bounds per dtype: FP32 Winograd a few 1e-5; 16-bit operands with FP32
# accumulation (docs/training.md, docs/cuda-winograd.md: up to ~1e-2 for BF16 WinRS)
BOUND = {torch.float32: 1e-4, torch.float16: 5e-3, torch.bfloat16: 3e-2}


def rel(a, b):
    a, b = a.double(), b.double()
    return ((a - b).abs().sum() / b.abs().sum()).item()


LAYERS = [dict(in_channels=16, out_channels=32, kernel_size=3, padding=1),
          dict(in_channels=64, out_channels=64, kernel_size=3, padding=1),
          dict(in_channels=8, out_channels=24, kernel_size=5, padding=2),
          dict(in_channels=32, out_channels=16, kernel_size=3, padding=1, stride=2)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("kw", LAYERS)
@pytest.mark.parametrize("channels_last", [False, True])
def test_training_convolutions_match_fp64(dtype, kw, channels_last):
    torch.manual_seed(0)
    ref = torch.nn.Conv2d(**kw).double()
    mod = wt.convert(copy.deepcopy(ref)).to(DEV, dtype)
    x = torch.randn(4, kw["in_channels"], 20, 18, dtype=torch.float64)
    xw = x.to(DEV, dtype)
    if channels_last:
        xw = xw.to(memory_format=torch.channels_last)
    xw.requires_grad_()
    xr = x.clone().requires_grad_()
    yr, yw = ref(xr), mod(xw)
    dy = torch.randn(yr.shape, dtype=torch.float64)
    yr.backward(dy)
    yw.backward(dy.to(DEV, dtype))
    torch.cuda.synchronize()
    assert rel(yw.cpu(), yr) < BOUND[dtype]
    assert rel(xw.grad.cpu(), xr.grad) < BOUND[dtype]
    assert rel(mod.weight.grad.cpu(), ref.weight.grad) < BOUND[dtype]
    # wino serves every layer on CUDA: its kernels, or (AUTO, where they refuse the layer or
    # lose the timing at create) cuDNN's engines through its own API, which explain names
    row = wt.explain(mod)[0]
    for kind in ("forward", "backward_data", "backward_filter"):
        runs, why = row[kind]
        assert runs == "wino" and why == "" or runs == "cudnn" and "cuDNN" in why, row


def test_training_step_captures_in_a_cuda_graph():
    torch.manual_seed(1)
    model = wt.convert(torch.nn.Sequential(torch.nn.Conv2d(32, 32, 3, padding=1),
                                           torch.nn.ReLU(),
                                           torch.nn.Conv2d(32, 32, 3, padding=1))).to(DEV)
    x = torch.randn(8, 32, 16, 16, device=DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up: operators created (they time kernels once)
        for _ in range(3):
            opt.zero_grad(set_to_none=False)
            model(x).square().mean().backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=False)
    with torch.cuda.graph(graph):
        loss = model(x).square().mean()
        loss.backward()
    eager = copy.deepcopy(model)
    for p in eager.parameters():
        p.grad = None
    eager(x).square().mean().backward()
    graph.replay()
    torch.cuda.synchronize()
    for p, q in zip(model.parameters(), eager.parameters()):
        assert rel(p.grad, q.grad) < 1e-5


def test_int8_on_the_gpu_equals_the_cpu():
    rng = np.random.default_rng(3)
    a = np.maximum(rng.standard_normal((2, 32, 14, 14)), 0).astype(np.float32)
    w = (0.1 * rng.standard_normal((48, 32, 3, 3))).astype(np.float32)
    params = wino.int8_calibrate(a, w, relu=True)
    x = np.clip(np.rint(a / params.x_scale), 0, 255).astype(np.uint8)
    cpu = wino.Int8Conv2d(w, params, relu=True, x_dtype="u8")(x)
    gpu = wino.Int8Conv2d(w, params, relu=True, x_dtype="u8", device="cuda:0")(
        torch.from_numpy(x).to(DEV))
    assert np.array_equal(gpu.cpu().numpy(), cpu)


def test_bad_input():
    w = torch.randn(4, 3, 3, 3, device=DEV)
    with pytest.raises(ValueError, match="different devices"):
        torch.ops.wino.conv2d(torch.randn(1, 3, 8, 8), w, [1, 1], [1, 1], [1, 1])
    with pytest.raises(TypeError, match="dtypes"):
        torch.ops.wino.conv2d(torch.randn(1, 3, 8, 8, device=DEV).half(), w, [1, 1], [1, 1],
                              [1, 1])
    x = torch.randn(2, 3, 16, 16, device=DEV)[:, :, ::2, ::2]  # not contiguous: copied
    assert rel(torch.ops.wino.conv2d(x, w, [1, 1], [1, 1], [1, 1]),
               torch.nn.functional.conv2d(x.double(), w.double(), padding=1)) < 1e-4


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_weights_changed_in_place_are_used(dtype):
    """The cached operators take the weights of each call (wino_conv2d_set_weights on the
    stream), also when an optimizer changed them in place at the same address."""
    torch.manual_seed(2)
    mod = wt.convert(torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)).to(DEV, dtype)
    x = torch.randn(2, 16, 12, 12, device=DEV, dtype=dtype).requires_grad_()
    for _ in range(3):
        y = mod(x)
        dy = torch.randn_like(y)
        y.backward(dy)
        want = torch.nn.functional.conv2d(x.double(), mod.weight.double(), padding=1)
        dx = torch.nn.grad.conv2d_input(x.shape, mod.weight.double(), dy.double(), padding=1)
        assert rel(y, want) < BOUND[dtype] and rel(x.grad, dx) < BOUND[dtype]
        x.grad = None
        with torch.no_grad():
            mod.weight.mul_(-0.5).add_(0.01)
