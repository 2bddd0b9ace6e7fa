"""wino.torch on the CPU: the custom operators and wino.torch.Conv2d against torch.nn.Conv2d
(outputs and the three gradients), gradcheck, torch.compile and torch.export, convert/explain,
and bad input."""
import copy

import numpy as np
import pytest
import torch

import wino.torch as wt


def pair(seed, **kw):
    """A torch.nn.Conv2d and its wino.torch.Conv2d twin with the same parameters."""
    torch.manual_seed(seed)
    ref = torch.nn.Conv2d(**kw)
    return ref, wt.convert(copy.deepcopy(ref))


def rel(a, b):
    return ((a - b).abs().sum() / b.abs().sum().clamp_min(1e-30)).item()


def layers():
    rng = np.random.default_rng(11)
    for i in range(16):
        k = int(rng.choice([1, 3, 5]))
        stride = int(rng.choice([1, 1, 2]))
        yield dict(in_channels=int(rng.integers(1, 10)), out_channels=int(rng.integers(1, 10)),
                   kernel_size=k, stride=stride, padding=int(rng.integers(0, k)),
                   dilation=int(rng.choice([1, 2])) if stride == 1 else 1,
                   bias=bool(i % 2)), (int(rng.integers(1, 4)), int(rng.integers(9, 17)),
                                       int(rng.integers(9, 17))), bool(rng.integers(0, 2))


@pytest.mark.parametrize("kw,size,channels_last", list(layers()))
def test_conv2d_matches_nn_conv2d(kw, size, channels_last):
    ref, mod = pair(1, **kw)
    ref.double()  # the reference runs in FP64; wino's FP32 Winograd errors reach a few 1e-5
    n, h, w = size
    x = torch.randn(n, kw["in_channels"], h, w)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    xr, xw = x.double().requires_grad_(), x.clone().requires_grad_()
    yr, yw = ref(xr), mod(xw)
    assert yw.shape == yr.shape and rel(yw, yr) < 1e-4
    assert yw.is_contiguous(memory_format=torch.channels_last) == channels_last or yw.shape[1] == 1
    dy = torch.randn(yr.shape)
    yr.backward(dy.double())
    yw.backward(dy)
    assert rel(xw.grad, xr.grad) < 1e-4
    assert rel(mod.weight.grad, ref.weight.grad) < 1e-4
    if kw["bias"]:
        assert rel(mod.bias.grad, ref.bias.grad) < 1e-4
    assert all(r[kind][0] == "wino" for r in wt.explain(mod) for kind in r if kind != "name")


def test_gradcheck():
    torch.manual_seed(3)
    x = torch.randn(1, 2, 6, 5, requires_grad=True)
    w = torch.randn(3, 2, 3, 3, requires_grad=True)
    fn = lambda a, b: torch.ops.wino.conv2d(a, b, [1, 1], [1, 1], [1, 1])  # noqa: E731
    # FP32 kernels: finite differences with eps 1e-2 are exact up to FP32 rounding (the
    # convolution is linear), so the tolerance is FP32's, not FP64's
    assert torch.autograd.gradcheck(fn, (x, w), eps=1e-2, atol=2e-3, rtol=2e-3)
    assert torch.library.opcheck(torch.ops.wino.conv2d.default, (x, w, [1, 1], [1, 1], [1, 1]),
                                 test_utils=("test_schema", "test_faketensor",
                                             "test_autograd_registration"))


def test_compile_and_export():
    ref, mod = pair(4, in_channels=4, out_channels=6, kernel_size=3, padding=1)
    x = torch.randn(2, 4, 10, 10)
    compiled = torch.compile(mod, backend="aot_eager", fullgraph=True)
    assert rel(compiled(x), ref(x)) < 1e-5
    exported = torch.export.export(mod, (x,))
    assert any("wino.conv2d" in str(node.target) for node in exported.graph.nodes)
    assert rel(exported.module()(x), ref(x)) < 1e-5


def test_eager_calls_skip_the_dispatcher():
    """wino.torch.Conv2d in eager mode runs through a torch.autograd.Function (no custom-op
    dispatch per call); the custom operator gives the same values and gradients."""
    ref, mod = pair(6, in_channels=5, out_channels=7, kernel_size=3, padding=1, bias=False)
    x = torch.randn(2, 5, 11, 9, requires_grad=True)
    y = mod(x)
    assert y.grad_fn.name().startswith("_EagerConv2d")
    dy = torch.randn(y.shape)
    y.backward(dy)
    x2 = x.detach().clone().requires_grad_()
    w2 = mod.weight.detach().clone().requires_grad_()
    y2 = torch.ops.wino.conv2d(x2, w2, [1, 1], [1, 1], [1, 1])
    y2.backward(dy)
    assert torch.equal(y, y2) and torch.equal(x.grad, x2.grad)
    assert torch.equal(mod.weight.grad, w2.grad)


def test_convert_and_explain():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(8, 8, 3, padding=1, groups=2),
                                torch.nn.Conv2d(8, 4, 3, padding="same"))
    wt.convert(model)
    assert isinstance(model[0], wt.Conv2d) and isinstance(model[3], wt.Conv2d)
    rows = {r["name"]: r for r in wt.explain(model)}
    assert rows["0"]["forward"] == ("not run yet", "")
    model(torch.randn(1, 3, 12, 12)).sum().backward()
    rows = {r["name"]: r for r in wt.explain(model)}
    assert rows["0"]["forward"][0] == "wino" and rows["3"]["backward_filter"][0] == "wino"
    assert rows["2"]["forward"][0] == "torch" and "groups" in rows["2"]["forward"][1]
    assert "groups" in wt.format_explanation(wt.explain(model))


def test_fallbacks_and_bad_input():
    ref, mod = pair(5, in_channels=3, out_channels=4, kernel_size=3, padding=1)
    x64 = torch.randn(1, 3, 8, 8, dtype=torch.float64)
    assert rel(mod.double()(x64), ref.double()(x64)) < 1e-12  # float64: torch's, said so
    assert "float64" in wt.explain(mod)[0]["forward"][1]
    mod.float(), ref.float()
    x = torch.randn(2, 3, 16, 16)[:, :, ::2, ::2]  # not contiguous: copied
    assert rel(mod(x), ref(x)) < 1e-5
    x3 = torch.randn(3, 8, 8)  # unbatched: torch's
    assert rel(mod(x3), ref(x3)) < 1e-5
    with pytest.raises(TypeError, match="dtypes"):
        torch.ops.wino.conv2d(torch.randn(1, 3, 8, 8), torch.randn(4, 3, 3, 3).double(),
                              [1, 1], [1, 1], [1, 1])
    with pytest.raises(ValueError, match="4 dimensions"):
        torch.ops.wino.conv2d(torch.randn(3, 8, 8), torch.randn(4, 3, 3, 3), [1, 1], [1, 1],
                              [1, 1])
    with pytest.raises(ValueError, match="5 channels"):
        mod(torch.randn(1, 5, 8, 8))
    with pytest.raises(ValueError, match="larger than"):
        mod(torch.randn(1, 3, 1, 0))
    with pytest.raises(ValueError, match="dy has shape"):
        torch.ops.wino.conv2d_backward_data(torch.randn(1, 4, 7, 8), mod.weight, [1, 3, 8, 8],
                                            [1, 1], [1, 1], [1, 1])
    with pytest.raises(ValueError, match="dy has shape"):
        torch.ops.wino.conv2d_backward_filter(torch.randn(1, 3, 8, 8), torch.randn(1, 5, 8, 8),
                                              mod.weight, [1, 1], [1, 1], [1, 1])


def test_weights_changed_in_place_are_used():
    """Cached operators take each call's weights, also when changed in place."""
    ref, mod = pair(6, in_channels=4, out_channels=4, kernel_size=3, padding=1, bias=False)
    x = torch.randn(1, 4, 9, 9, requires_grad=True)
    for _ in range(3):
        y = mod(x)
        dy = torch.randn_like(y)
        y.backward(dy)
        assert rel(y, torch.nn.functional.conv2d(x, mod.weight, padding=1)) < 1e-5
        assert rel(x.grad, torch.nn.grad.conv2d_input(x.shape, mod.weight, dy, padding=1)) < 1e-5
        x.grad = None
        with torch.no_grad():
            mod.weight.mul_(-0.5).add_(0.01)
