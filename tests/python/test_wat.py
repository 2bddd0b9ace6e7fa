"""Winograd-aware training layers (wino.torch.wat): the eval-mode emulation equals wino's INT8
engine byte for byte, calibration equals wino_int8_calibrate, and the straight-through and PACT
gradients are what they claim."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import wino  # noqa: E402
from wino.torch.wat import (QConv2d, WinogradQuantConv2d, _fma_f32, calibrate,  # noqa: E402
                            quantize_input)


def _layer(tile_m, relu, unsigned, per_channel, bias, c=3, k=5, seed=0, shrink=1.0, pad=1,
           fit_int32=True):
    """A calibrated layer on random data, its clips then scaled by `shrink` (as training moves
    them), and the input batch."""
    g = torch.Generator().manual_seed(seed)
    layer = WinogradQuantConv2d(c, k, padding=pad, bias=bias, tile_m=tile_m, relu=relu,
                                per_channel=per_channel, fit_int32=fit_int32)
    with torch.no_grad():
        layer.weight.copy_(torch.randn(layer.weight.shape, generator=g) * 0.3)
        if bias:
            layer.bias.copy_(torch.randn(k, generator=g) * 0.2)
    x = torch.randn(3, c, 9, 14, generator=g)
    x = x.abs() if unsigned else x
    calibrate(layer, [x[:2], x[2:]])
    with torch.no_grad():
        for p in (layer.alpha_ta, layer.alpha_tw, layer.clip):
            p.mul_(shrink)
    return layer.eval(), x


def _engine_output(layer, x):
    xq = quantize_input(x, layer.x_scale, layer.x_unsigned)
    xq = xq.to(torch.uint8 if bool(layer.x_unsigned) else torch.int8)
    op = wino.Int8Conv2d(layer.weight.detach(), layer.int8_params(), tile_m=layer.tile_m,
                         padding=layer.padding,
                         bias=None if layer.bias is None else layer.bias.detach(),
                         relu=layer.relu, x_dtype="u8" if bool(layer.x_unsigned) else "s8")
    return op(xq)


@pytest.mark.parametrize("tile_m,relu,unsigned,per_channel,bias",
                         list(itertools.product((2, 4, 6), (False, True), (False, True),
                                                (False, True), (False, True))))
def test_eval_equals_engine(tile_m, relu, unsigned, per_channel, bias):
    for shrink, pad in ((1.0, 1), (0.6, 0), (1.3, 2)):
        layer, x = _layer(tile_m, relu, unsigned, per_channel, bias, shrink=shrink, pad=pad)
        y = _engine_output(layer, x)
        assert y.dtype == (torch.uint8 if relu else torch.int8)
        emulated = layer.int8_forward(x)
        assert emulated.shape == y.shape
        assert torch.equal(emulated, y.float()), \
            f"{int((emulated != y.float()).sum())} outputs differ"
        assert torch.equal(layer(x), y.float() * layer.y_scale())


def test_eval_covers_clipping_and_every_value():
    """The cases above clip for real: outputs at both ends and Vq at +-127."""
    layer, x = _layer(4, False, False, False, True, shrink=0.5)
    y = layer.int8_forward(x)
    assert y.max() == 127 and y.min() == -127
    layer, x = _layer(4, True, True, False, True, shrink=0.5)
    y = layer.int8_forward(x)
    assert y.max() == 255 and y.min() == 0


def _nearest_f32(v):
    """The float32 nearest the Fraction v (ties to even)."""
    f = np.float32(float(v))
    for cand in (np.nextafter(f, np.float32(-np.inf)), np.nextafter(f, np.float32(np.inf))):
        d, best = abs(Fraction(float(cand)) - v), abs(Fraction(float(f)) - v)
        if d < best or (d == best and int(cand.view(np.int32)) % 2 == 0):
            f = cand
    return f


def test_fma_single_rounding():
    """_fma_f32 rounds y * s + b once, also where rounding the double sum first would not
    (its sum lands on a float32 tie)."""
    rng = np.random.default_rng(1)
    ys = rng.integers(-2 ** 26, 2 ** 26, 400).astype(np.float32)
    ss = (rng.random(400) * 1e-3).astype(np.float32)
    bs = (rng.standard_normal(400) * 10).astype(np.float32)
    # double rounding: y * s = (97 * 257) * (673 / 2^24) = 1 + 2^-24, a float32 tie, and
    # b = +-2^-60 decides it, but is lost when the sum is first rounded to double
    ys = np.append(ys, np.float32([97 * 257, 97 * 257]))
    ss = np.append(ss, np.float32([673 / 2 ** 24, 673 / 2 ** 24]))
    bs = np.append(bs, np.float32([2 ** -60, -2 ** -60]))
    got = _fma_f32(torch.from_numpy(ys), torch.from_numpy(ss), torch.from_numpy(bs)).numpy()
    naive = (ys.astype(np.float64) * ss + bs).astype(np.float32)
    for y, s, b, r in zip(ys, ss, bs, got):
        exact = Fraction(float(y)) * Fraction(float(s)) + Fraction(float(b))
        assert r == _nearest_f32(exact), (y, s, b)
    assert (naive != got).any(), "the double-rounding case is not one"


def test_calibrate_equals_wino():
    for tile_m, relu in ((2, False), (4, True), (6, False)):
        layer, x = _layer(tile_m, relu, relu, False, True)
        p = wino.int8_calibrate(x.numpy(), layer.weight.detach().numpy(),
                                layer.bias.detach().numpy(), relu=relu, tile_m=tile_m)
        mine = layer.int8_params()
        assert (mine.x_scale, mine.alpha_ta, mine.alpha_tw) == \
            (p.x_scale, p.alpha_ta, p.alpha_tw)
        assert mine.y_dtype == p.y_dtype
        assert mine.clip_c == pytest.approx(p.clip_c, rel=1e-5)
        assert mine.y_scale == pytest.approx(p.y_scale, rel=1e-5)


def test_calibrate_per_channel_and_max():
    layer, x = _layer(4, False, False, True, True)
    u = layer.transformed_weights().abs()
    assert layer.alpha_tw.shape == (5,)
    assert (layer.alpha_tw <= u.flatten(1).max(1).values.float()).all()
    calibrate(layer, [x], percentile=100.0)
    assert torch.equal(layer.alpha_tw, u.flatten(1).max(1).values.float())
    assert float(layer.clip.detach()) == pytest.approx(float(
        torch.nn.functional.conv2d(x, layer.weight, layer.bias, padding=1).abs().max().detach()))


@pytest.mark.parametrize("tile_m", (2, 4, 6))
def test_training_forward_matches_eval(tile_m):
    """Training's fake quantization uses the engines' Vq and Uq: its outputs are the exact ones
    up to float32 rounding in the sums after them (a rare +-1 step)."""
    layer, x = _layer(tile_m, True, True, True, True, c=8, k=8)
    exact = layer(x)
    fake = layer.train()(x)
    steps = ((fake - exact).abs() / layer.y_scale()).detach()
    assert steps.max() <= 1.0 + 1e-4
    assert (steps > 0.5).float().mean() < 1e-3


def test_clip_factors_learn():
    """Each clip gets a nonzero gradient once it clips (PACT: from outside its range)."""
    layer, x = _layer(4, False, False, True, True, shrink=0.5)
    layer.train()
    layer(x).square().sum().backward()
    for p in (layer.alpha_ta, layer.clip, layer.weight, layer.bias):
        assert p.grad is not None and p.grad.abs().sum() > 0
    assert (layer.alpha_tw.grad != 0).all()
    qc = QConv2d(3, 5, stride=2)
    calibrate(qc, [x])
    with torch.no_grad():
        qc.alpha_w.mul_(0.5)
        qc.clip.mul_(0.5)
    qc.train()(x).square().sum().backward()
    assert qc.alpha_w.grad != 0 and qc.clip.grad != 0


def _reference_winograd(x, uq_real, layer):
    """Float64 Winograd with the given transformed weights, tile by tile (for the gradient)."""
    at, bt, m = layer._at, layer._bt, layer.tile_m
    n, c, h, w = x.shape
    pad = layer.padding
    p, q = h + 2 * pad - 2, w + 2 * pad - 2
    th, tw = -(-p // m), -(-q // m)
    xp = torch.nn.functional.pad(x, (pad, tw * m + 2 - w - pad, pad, th * m + 2 - h - pad))
    rows = []
    for i in range(th):
        cols = []
        for j in range(tw):
            d = xp[:, :, i * m:i * m + m + 2, j * m:j * m + m + 2]
            v = bt @ d @ bt.T                                    # n c a a
            mm = torch.einsum("ncab,kcab->nkab", v, uq_real)
            cols.append(at @ mm @ at.T)                          # n k m m
        rows.append(torch.cat(cols, 3))
    return torch.cat(rows, 2)[:, :, :p, :q]


@pytest.mark.parametrize("tile_m", (2, 4, 6))
def test_ste_input_gradient(tile_m):
    """Inside the clip ranges the gradient with respect to the input is that of the linear map
    the quantized pipeline stands for: Winograd with the dequantized Uq (for F(2,3) with weights
    whose U is on the int8 grid: the float convolution's). Inputs outside the input range get
    none."""
    layer, x = _layer(tile_m, False, False, False, True)
    with torch.no_grad():
        if tile_m == 2:  # U = G' g G'^T on multiples of 1/4: |4 U| <= 127 when |g| <= 2
            layer.weight.copy_(torch.randint(-2, 3, layer.weight.shape,
                                             generator=torch.Generator().manual_seed(3)))
        calibrate(layer, [x], percentile=100.0)  # then nothing clips
        layer.x_scale.mul_(1.01)
        layer.alpha_ta.mul_(2.0)
        layer.clip.mul_(2.0)
        if tile_m == 2:
            layer.alpha_tw.fill_(127 / 4)
    layer.train()
    x = x.clone().requires_grad_(True)
    g = torch.randn(layer(x).shape, dtype=torch.float64)
    (gx,) = torch.autograd.grad(layer(x), x, g.float())
    atw = float(layer.alpha_tw.detach())
    uq_real = layer.quantized_weights() * (atw / 127)
    x64 = x.detach().double().requires_grad_(True)
    (ref,) = torch.autograd.grad(_reference_winograd(x64, uq_real, layer), x64, g)
    assert ref.abs().max() > 1.0
    assert torch.allclose(gx.double(), ref, rtol=1e-4, atol=1e-4 * ref.abs().max())
    if tile_m == 2:
        x64 = x.detach().double().requires_grad_(True)
        out = torch.nn.functional.conv2d(x64, layer.weight.double(), padding=1)
        (conv,) = torch.autograd.grad(out, x64, g)
        assert torch.allclose(gx.double(), conv, rtol=1e-4, atol=1e-4 * conv.abs().max())
    beyond = x.detach().clone()
    beyond[0, 0, 4, 4] = 200 * layer.x_scale
    beyond.requires_grad_(True)
    (gb,) = torch.autograd.grad(layer(beyond), beyond, g.float())
    assert gb[0, 0, 4, 4] == 0 and gb[0, 0, 8, 12] != 0  # (8, 12): in no tile of (4, 4)


def test_float_mode_is_the_float_convolution():
    layer, x = _layer(4, True, False, False, True)
    layer.quantize = False
    ref = torch.relu(torch.nn.functional.conv2d(x, layer.weight, layer.bias, padding=1))
    assert torch.allclose(layer(x), ref)


def test_int32_bound_matches_engine_refusal():
    """int32_bound says when the engines refuse F(6,3): both sides of 2^31 - 1."""
    for c, refused in ((4, False), (64, True)):
        layer, x = _layer(6, False, False, False, False, c=c, k=4, shrink=0.05,
                          fit_int32=False)
        assert (layer.int32_bound() > 2 ** 31 - 1) == refused
        if refused:
            with pytest.raises(wino.WinoUnsupported):
                _engine_output(layer, x)
        else:
            assert torch.equal(_engine_output(layer, x).float(), layer.int8_forward(x))


@pytest.mark.parametrize("per_channel", (False, True))
def test_fit_int32_keeps_f63_deployable(per_channel):
    """With fit_int32 (the default) alpha_tw stays at or above the floor that keeps the int32
    bound: the same F(6,3) layer is accepted, tightly, and still equals the engine."""
    layer, x = _layer(6, False, False, per_channel, True, c=64, k=4, shrink=0.05)
    floor = layer.alpha_tw_floor()
    assert (layer.alpha_tw.detach().double() < floor).all()  # the floor is what holds it
    bound = layer.int32_bound()
    assert 2 ** 30 < bound <= 2 ** 31 - 1
    assert torch.equal(_engine_output(layer, x).float(), layer.int8_forward(x))
    alpha_tw = layer.int8_params().alpha_tw
    assert (torch.as_tensor(alpha_tw, dtype=torch.float64) >=
            (floor if per_channel else floor.max())).all()


def test_rejects_what_the_engines_do_not_run():
    with pytest.raises(ValueError):
        WinogradQuantConv2d(3, 3, tile_m=3)
    with pytest.raises(ValueError):
        WinogradQuantConv2d(3, 3, kernel_size=5)
