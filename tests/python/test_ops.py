"""wino's operators on NumPy arrays against a float64 reference convolution written here."""
import numpy as np
import pytest

import wino
from wino import ops


def ref_conv(x, w, pad, stride, dil):
    """y[n,k,p,q] = sum x[n,c,p*s-pad+i*d, q*s-pad+j*d] w[k,c,i,j] in float64 (NCHW)."""
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.zeros((n, c, h + 2 * pad[0], wd + 2 * pad[1]))
    xp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + wd] = x
    p = (h + 2 * pad[0] - dil[0] * (r - 1) - 1) // stride[0] + 1
    q = (wd + 2 * pad[1] - dil[1] * (s - 1) - 1) // stride[1] + 1
    y = np.zeros((n, k, p, q))
    for i in range(r):
        for j in range(s):
            win = xp[:, :, i * dil[0]:i * dil[0] + stride[0] * (p - 1) + 1:stride[0],
                     j * dil[1]:j * dil[1] + stride[1] * (q - 1) + 1:stride[1]]
            y += np.einsum("nchw,kc->nkhw", win, w[:, :, i, j].astype(np.float64))
    return y


def ref_grads(x, w, dy, pad, stride, dil):
    """(dx, dw) of sum(conv(x, w) * dy), by the adjoint of ref_conv's loop."""
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    _, _, p, q = dy.shape
    xp = np.zeros((n, c, h + 2 * pad[0], wd + 2 * pad[1]))
    xp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + wd] = x
    dxp = np.zeros_like(xp)
    dw = np.zeros(w.shape)
    for i in range(r):
        for j in range(s):
            sl = (slice(None), slice(None),
                  slice(i * dil[0], i * dil[0] + stride[0] * (p - 1) + 1, stride[0]),
                  slice(j * dil[1], j * dil[1] + stride[1] * (q - 1) + 1, stride[1]))
            dw[:, :, i, j] = np.einsum("nchw,nkhw->kc", xp[sl], dy)
            dxp[sl] += np.einsum("nkhw,kc->nchw", dy, w[:, :, i, j].astype(np.float64))
    return dxp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + wd], dw


def rel_l1(a, b):
    return np.abs(a - b).sum() / max(np.abs(b).sum(), 1e-30)


def nhwc(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def nchw(a):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


def random_layers(count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        r = int(rng.choice([1, 2, 3, 5, 7]))
        stride = int(rng.choice([1, 1, 1, 2]))
        dil = int(rng.choice([1, 1, 2])) if stride == 1 else 1
        pad = int(rng.integers(0, r))
        h, w = int(rng.integers(dil * (r - 1) + 1, 19)), int(rng.integers(dil * (r - 1) + 1, 19))
        yield dict(n=int(rng.integers(1, 4)), c=int(rng.integers(1, 9)), h=h, w=w,
                   k=int(rng.integers(1, 9)), r=r, pad=pad, stride=stride, dil=dil,
                   layout=str(rng.choice(["NCHW", "NHWC"])))


@pytest.mark.parametrize("L", list(random_layers(24, 7)), ids=lambda L: str(tuple(L.values())))
def test_three_convolutions_match_the_reference(L):
    rng = np.random.default_rng(L["n"] * 1000 + L["c"] * 10 + L["k"])
    x = rng.uniform(-1, 1, (L["n"], L["c"], L["h"], L["w"])).astype(np.float32)
    w = rng.uniform(-1, 1, (L["k"], L["c"], L["r"], L["r"])).astype(np.float32)
    pad, stride, dil = (L["pad"],) * 2, (L["stride"],) * 2, (L["dil"],) * 2
    y_ref = ref_conv(x, w, pad, stride, dil)
    dy = rng.uniform(-1, 1, y_ref.shape).astype(np.float32)
    dx_ref, dw_ref = ref_grads(x, w, dy, pad, stride, dil)
    conf = dict(padding=pad, stride=stride, dilation=dil, layout=L["layout"])
    to, back = (nhwc, nchw) if L["layout"] == "NHWC" else (lambda a: a, lambda a: a)
    y = back(wino.conv2d(to(x), to(w), **conf))
    dx = back(wino.conv2d_backward_data(to(dy), to(w), to(x).shape, **conf))
    dw = back(wino.conv2d_backward_filter(to(x), to(dy), to(w).shape, **conf))
    assert rel_l1(y, y_ref) < 1e-4
    assert rel_l1(dx, dx_ref) < 1e-4
    assert rel_l1(dw, dw_ref) < 1e-4


def test_operator_reports_what_it_runs_and_takes_new_weights():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 10, 10), dtype=np.float32)
    w1 = rng.standard_normal((6, 4, 3, 3), dtype=np.float32)
    w2 = rng.standard_normal((6, 4, 3, 3), dtype=np.float32)
    desc = ops.make_desc(x.shape, w1.shape, 1)
    op = wino.Operator("forward", desc, w1.ctypes.data, options=ops.make_options("winograd", 4))
    assert op.algo == ("winograd", 4) and op.variant in ("fused", "non-fused")
    y = np.empty((2, 6, 10, 10), np.float32)
    ws, address = ops.aligned_workspace(op.workspace_bytes)
    op.set_weights(w2.ctypes.data)
    op.run(x.ctypes.data, y.ctypes.data, address)
    assert rel_l1(y, ref_conv(x, w2, (1, 1), (1, 1), (1, 1))) < 1e-5
    bf = wino.Operator("backward_filter", desc, options=ops.make_options("winograd"))
    info = bf.winrs_info()
    assert bf.algo[0] == "winograd" and info["kernels"] in (1, 2) and info["segments"] >= 1
    # AUTO runs the direct path on so few 2D tiles (2 images of 2 x 2 tiles of 5 x 5)
    auto = wino.Operator("backward_filter", desc)
    assert auto.algo[0] == "direct" and auto.winrs_info()["kernels"] == 0


def test_bad_input_raises_a_named_error():
    x = np.zeros((1, 3, 8, 8), np.float32)
    w = np.zeros((4, 3, 3, 3), np.float32)
    with pytest.raises(TypeError, match="float32"):
        wino.conv2d(x.astype(np.float64), w)
    with pytest.raises(TypeError, match="numpy"):
        wino.conv2d([[1.0]], w)
    with pytest.raises(ValueError, match="channels"):
        wino.conv2d(x, np.zeros((4, 2, 3, 3), np.float32))
    with pytest.raises(ValueError, match="dy has shape"):
        wino.conv2d_backward_data(np.zeros((1, 4, 5, 5), np.float32), w, x.shape, padding=1)
    with pytest.raises(wino.WinoError, match="invalid|pad|size"):
        wino.conv2d(x, np.zeros((4, 3, 9, 9), np.float32))  # filter larger than the image
    with pytest.raises(wino.WinoUnsupported, match="stride"):
        wino.conv2d(x, w, stride=2, algo="winograd")
    desc = ops.make_desc(x.shape, w.shape, 1, stride=2)
    assert "stride" in wino.can_implement("forward", desc, ops.make_options("winograd"))
    assert wino.can_implement("forward", desc) is None


@pytest.mark.parametrize("r, s, stride, dilation, padding", [(5, 3, 2, 1, 2), (1, 1, 2, 1, 0),
                                                           (3, 3, 1, 2, 1), (3, 3, 2, 1, 1)])
def test_int8_direct_exact(r, s, stride, dilation, padding):
    """INT8 direct convolution (any shape): with x in {-1, 0, 1}, weights on the int8 grid
    (alpha_tw 1: steps of 1/127) and a unit requantization (y_scale = x_scale / 127), the
    output is the exact integer convolution, clamped to +-127."""
    rng = np.random.default_rng(r * 100 + stride * 10 + dilation)
    x = rng.integers(-1, 2, (2, 6, 11, 10)).astype(np.int8)
    wq = rng.integers(-9, 10, (7, 6, r, s))
    params = wino.Int8Params(x_scale=1.0, alpha_ta=1.0, alpha_tw=1.0, y_scale=1.0 / 127)
    op = wino.Int8Conv2d((wq / 127.0).astype(np.float32), params, padding=padding,
                         stride=stride, dilation=dilation, x_dtype="s8")
    y = op(x)
    exact = ref_conv(x.astype(np.float64), wq.astype(np.float64), (padding, padding),
                     (stride, stride), (dilation, dilation))
    assert op._op.algo == ("direct", 0)
    assert np.array_equal(y, np.clip(exact, -127, 127).astype(np.int8))


def test_int8_tile_and_operator():
    at, g, bt = wino.int8_tile(4)
    assert at.shape == (4, 6) and g.shape == (6, 3) and bt.shape == (6, 6)
    assert np.all(at == np.round(at)) and np.all(bt == np.round(bt))
    rng = np.random.default_rng(2)
    a = np.maximum(rng.standard_normal((2, 8, 9, 9)), 0).astype(np.float32)
    w = (0.2 * rng.standard_normal((5, 8, 3, 3))).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    params = wino.int8_calibrate(a, w, b, relu=True, tile_m=4)
    assert params.y_dtype == "u8" and params.alpha_ta > 0 and params.alpha_tw > 0
    op = wino.Int8Conv2d(w, params, tile_m=4, bias=b, relu=True, x_dtype="u8")
    x = np.clip(np.rint(a / params.x_scale), 0, 255).astype(np.uint8)
    y = op(x)
    assert y.dtype == np.uint8 and y.shape == (2, 5, 9, 9)
    real = ref_conv(x * np.float64(params.x_scale), w, (1, 1), (1, 1), (1, 1)) + b[:, None, None]
    real = np.maximum(real, 0)
    # INT8 Winograd on random data: about 10% (docs/int8-error-study.md); a wiring error is ~100%
    assert rel_l1(y * params.y_scale, np.minimum(real, params.clip_c)) < 0.2
    assert np.array_equal(op(x[:1]), y[:1])  # another batch size: the operator follows it
    with pytest.raises(TypeError, match="uint8"):
        op(x.astype(np.int8))
    per_k = wino.Int8Params(params.x_scale, params.alpha_ta, np.full(5, params.alpha_tw),
                            params.y_scale, "u8", params.clip_c)
    assert np.array_equal(wino.Int8Conv2d(w, per_k, bias=b, relu=True, x_dtype="u8")(x), y)
