"""Winograd-aware training (WAT) of wino's INT8 Winograd layers (Mori et al., Electronics 2024,
section 3.3; docs/wat.md).

WinogradQuantConv2d emulates the INT8 pipeline of docs/int8-winograd.md in torch. In training
it computes the pipeline in float32 with fake quantization: rounding passes the gradient
straight through (STE) and every clip is PACT's, so the clipping factors alpha_ta, alpha_tw
(transformed activations and weights) and c (the output) learn from the loss. In eval mode with
`exact` (the default) it computes the integer pipeline step by step and returns the same
integers as wino's C and CUDA engines, so a deployed model (wino.torch.deploy) scores exactly
what the emulated one scores. QConv2d is the direct INT8 baseline (quantization-aware training
without Winograd). calibrate(model, batches) initializes the clipping factors from percentiles
of the layers' values (the paper's 99.9th).
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import wino

_QMAX = 127            # |Vq|, |Uq|, |wq| <= 127: symmetric int8 without -128
_INT32_MAX = 2 ** 31 - 1


def _pact(v, clip, levels, lo=None):
    """v clipped to [lo, clip] (lo = -clip by default) and rounded to the step clip / levels.
    Rounding passes the gradient straight through; the clip passes it inside the range and
    gives it to `clip` outside (PACT; the paper's eq. 9-11)."""
    c = torch.minimum(torch.maximum(v, -clip if lo is None else lo), clip)
    step = clip / levels
    return c + (torch.round(c / step) * step - c).detach()


def _ste_clip(v, clip, q):
    """The real value of the int8 q = clamp(rint(v 127 / clip)) (computed by the caller as the
    engines do), with PACT's gradient: v's inside [-clip, clip], clip's outside."""
    c = torch.minimum(torch.maximum(v, -clip), clip)
    return c + (q * (clip / _QMAX) - c).detach()


def _input_range(unsigned):
    """[lo, hi] of an int8 (unsigned False) or uint8 (True) input; unsigned a bool tensor."""
    return (torch.where(unsigned, 0.0, -128.0).float(), torch.where(unsigned, 255.0, 127.0).float())


def quantize_input(a, x_scale, unsigned):
    """The INT8 input of a float activation a (wino.h): clamp(rint(a / x_scale), lo, hi) in
    float32, [lo, hi] = [0, 255] for uint8 and [-128, 127] for int8 (unsigned: a bool tensor);
    float32 integer values."""
    lo, hi = _input_range(unsigned)
    return torch.clamp(torch.round(a / x_scale), lo, hi)


def _fma_f32(y, scale, bias):
    """fmaf(y, scale, bias) on float32 y with float32 scale and bias (broadcast): one rounding,
    as the engines' requantization. y * scale is exact in double; the rounding error of the
    double sum is recovered exactly (TwoSum) and folded in by rounding to odd, after which the
    conversion to float rounds as a single rounding of the exact value would (53 >= 2 * 24 + 2
    bits)."""
    p = y.double() * scale.double()
    b = bias.double()
    s = p + b
    bb = s - p
    err = (p - (s - bb)) + (b - bb)
    even = (s.view(torch.int64) & 1) == 0
    toward = torch.where(err > 0, math.inf, -math.inf).to(s)
    s = torch.where((err != 0) & even, torch.nextafter(s, toward), s)
    return s.float()


def _windows(x, m, padding):
    """x (N, C, H, W) zero padded and cut into the alpha x alpha input windows of F(m, 3) with
    stride m: (N, C, tiles_h, tiles_w, alpha, alpha), and the output size (P, Q)."""
    h, w = x.shape[-2:]
    p, q = h + 2 * padding - 2, w + 2 * padding - 2
    th, tw = -(-p // m), -(-q // m)
    x = F.pad(x, (padding, tw * m + 2 - w - padding, padding, th * m + 2 - h - padding))
    return x.unfold(2, m + 2, m).unfold(3, m + 2, m), p, q


def _untile(y, p, q):
    """(N, K, tiles_h, tiles_w, m, m) output tiles -> (N, K, P, Q), the edge tiles cropped."""
    n, k, th, tw, m, _ = y.shape
    return y.permute(0, 1, 2, 4, 3, 5).reshape(n, k, th * m, tw * m)[:, :, :p, :q]


def _percentile(mag, percentile):
    """The clipping factor of wino_int8_calibrate's percentile method: the ceil(p/100 n)-th
    smallest magnitude (the largest when that one is 0)."""
    flat = mag.reshape(-1)
    n = flat.numel()
    rank = min(max(math.ceil(percentile / 100.0 * n), 1), n)
    v = flat.kthvalue(rank).values if rank < n else flat.max()
    return v if v > 0 else flat.max()


class _QuantConv(nn.Module):
    """What the INT8 Winograd layer and the direct baseline share: weights and bias, the input
    quantization (x_scale, from calibration), the output's PACT clip c with y_scale = c / 127
    (c / 255 and a uint8 output after a fused ReLU). quantize = False makes it the float
    convolution (calibration runs it so)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, bias, relu):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.padding, self.relu = kernel_size, padding, bool(relu)
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, kernel_size,
                                               kernel_size))
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        self.clip = nn.Parameter(torch.tensor(1.0))
        self.register_buffer("x_scale", torch.tensor(1.0 / 127))
        self.register_buffer("x_unsigned", torch.tensor(False))
        self.quantize = True

    @property
    def y_qmax(self):
        return 255 if self.relu else _QMAX

    def y_scale(self):
        """The output step c / 127 (c / 255 with ReLU) in float32."""
        return self._clip() / self.y_qmax

    def _clip(self):
        return self.clip.clamp_min(1e-8)

    def _fake_input(self, x):
        """The real value of the quantized input, x_scale * x_int, with the STE (no gradient
        outside the representable range)."""
        lo, hi = _input_range(self.x_unsigned)
        s = self.x_scale
        inside = torch.clamp(x, lo * s, hi * s)
        return inside + (quantize_input(x, s, self.x_unsigned) * s - inside).detach()

    def _fake_output(self, y):
        c = self._clip()
        if self.relu:
            return _pact(y, c, 255, lo=torch.zeros_like(c))
        return _pact(y, c, _QMAX)

    def _float_forward(self, x):
        y = self._float_conv(x)
        return torch.relu(y) if self.relu else y

    def calibrate_input(self, x, percentile):
        """x_scale as wino_int8_calibrate derives it (max |x| / 127, / 255 when x >= 0) and c
        at the percentile of the float output's magnitudes."""
        unsigned = bool((x >= 0).all())
        xmax = np.float32(x.abs().max().item())
        self.x_unsigned.fill_(unsigned)
        self.x_scale.fill_(float(xmax / np.float32(255.0 if unsigned else 127.0)))
        self.clip.data.fill_(float(_percentile(self._float_forward(x).abs(), percentile)))

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"padding={self.padding}, bias={self.bias is not None}, relu={self.relu}")


class WinogradQuantConv2d(_QuantConv):
    """A 3 x 3, stride-1 convolution on wino's INT8 Winograd F(tile_m, 3) pipeline
    (docs/int8-winograd.md), trainable: alpha_ta (per layer), alpha_tw (per layer, or per output
    channel with per_channel), the output clip c, weights and bias. Training: fake quantization
    with STE and PACT clips, whose int8 values Vq and Uq are the engines' (the sums after them
    run in float32). Eval with exact = True: the engines' integers, step by step."""

    def __init__(self, in_channels, out_channels, kernel_size=3, padding=1, bias=True, tile_m=4,
                 relu=False, per_channel=False):
        if kernel_size != 3:
            raise ValueError(f"kernel_size {kernel_size}: INT8 Winograd runs 3 x 3 filters")
        if tile_m not in (2, 4, 6):
            raise ValueError(f"tile_m {tile_m}: INT8 Winograd runs F(2,3), F(4,3), F(6,3)")
        super().__init__(in_channels, out_channels, 3, padding, bias, relu)
        self.tile_m, self.per_channel = tile_m, bool(per_channel)
        self.alpha_ta = nn.Parameter(torch.tensor(1.0))
        self.alpha_tw = nn.Parameter(torch.ones(out_channels) if per_channel else
                                     torch.tensor(1.0))
        at, g, bt = (torch.from_numpy(a) for a in wino.int8_tile(tile_m))
        self.register_buffer("_at", at, persistent=False)
        self.register_buffer("_g", g, persistent=False)
        self.register_buffer("_bt", bt, persistent=False)
        self.exact = True

    def extra_repr(self):
        return super().extra_repr() + f", tile_m={self.tile_m}, per_channel={self.per_channel}"

    def _float_conv(self, x):
        return F.conv2d(x, self.weight, self.bias, padding=self.padding)

    def _clips(self):
        """alpha_ta (at least x_scale, as create_int8 requires) and alpha_tw (K values)."""
        ata = torch.maximum(self.alpha_ta, self.x_scale)
        atw = self.alpha_tw.clamp_min(1e-30).expand(self.out_channels)
        return ata, atw

    def _factors(self, ata, atw):
        """f_a (float) and f_w[k] (double) of steps 2 and 3, as src/op/int8_layer.c computes
        them from the float parameters."""
        return (127.0 * self.x_scale.double() / ata.detach().double()).float(), \
            127.0 / atw.detach().double()

    def forward(self, x):
        if not self.quantize:
            return self._float_forward(x)
        if self.exact and not self.training:
            return self.int8_forward(x).float() * self.y_scale()
        return self._fake_forward(x)

    def _transformed_input(self, xq):
        """Step 1 on integer inputs (any float dtype: every partial sum is an integer below
        2^24, exact in float32 too): V (N, C, tiles_h, tiles_w, alpha, alpha) and P, Q."""
        win, p, q = _windows(xq, self.tile_m, self.padding)
        bt = self._bt.to(xq.dtype)
        return torch.einsum("ij,nctwjk,lk->nctwil", bt, win, bt), p, q

    def _output_transform(self, mm, p, q):
        """Step 5 and the crop: A'^T M A' of (N, K, tiles_h, tiles_w, alpha, alpha)."""
        at = self._at.to(mm.dtype)
        return _untile(torch.einsum("pi,nktwij,qj->nktwpq", at, mm, at), p, q)

    def _fake_forward(self, x):
        """The pipeline with fake quantization, differentiable. The input integers pass the
        gradient straight through (1 / x_scale inside their range), V is exact, Vq and Uq are
        the engines' integers in the forward pass and PACT clips in the backward one; the EWMM,
        the output transform and the requantization run in float32 on real values."""
        ata, atw = self._clips()
        f_a, f_w = self._factors(ata, atw)
        lo, hi = _input_range(self.x_unsigned)
        s = self.x_scale
        inside = torch.minimum(torch.maximum(x, lo * s), hi * s) / s
        xq = inside + (torch.clamp(torch.round(x / s), lo, hi) - inside).detach()
        v, p, q = self._transformed_input(xq)
        vq = _ste_clip(v * s, ata, torch.clamp(torch.round(v.detach() * f_a), -127.0, 127.0))
        u = self.transformed_weights(self.weight.double())
        uq = _ste_clip(u.float(), atw.view(-1, 1, 1, 1), self._round_weights(u.detach(), f_w).float())
        y = self._output_transform(torch.einsum("nctwil,kcil->nktwil", vq, uq), p, q)
        if self.bias is not None:
            y = y + self.bias.view(1, -1, 1, 1)
        return self._fake_output(y)

    def int8_params(self):
        """The layer's wino.Int8Params (float32 values, as the C structure holds them)."""
        with torch.no_grad():
            ata, atw = self._clips()
            tw = atw.cpu().float().numpy()
            return wino.Int8Params(
                x_scale=float(self.x_scale), alpha_ta=float(ata),
                alpha_tw=tw.copy() if self.per_channel else float(tw[0]),
                y_scale=float(self.y_scale()), y_dtype="u8" if self.relu else "s8",
                clip_c=float(self._clip()))

    def _requantization(self, ata, atw):
        """S[k], b[k], lo, hi of step 6, computed in double and rounded once to float as
        src/op/int8_layer.c does from the parameters int8_params() gives the engines."""
        ys, c = self.y_scale().detach().double(), self._clip().detach().double()
        scale = (ata.detach().double() * atw.detach().double() / (127.0 * 127.0 * ys)).float()
        bias = torch.zeros_like(scale) if self.bias is None else \
            (self.bias.detach().double() / ys).float()
        c = c / ys
        qmax = float(self.y_qmax)
        hi = torch.clamp(c, max=qmax).float()
        lo = torch.zeros_like(hi) if self.relu else torch.clamp(-c, min=-127.0).float()
        return scale, bias, lo, hi

    def transformed_weights(self, w=None):
        """U = G' g G'^T in double (K, C, alpha, alpha) of w (the layer's weights by default),
        computed with the operations of wino_int8_filter_transform in its order, so that U has
        the engines' bits."""
        g = self._g
        w = self.weight.detach().double() if w is None else w
        gg = (g[:, 0, None] * w[:, :, None, 0, :] + g[:, 1, None] * w[:, :, None, 1, :]) + \
            g[:, 2, None] * w[:, :, None, 2, :]
        return (gg[..., :, None, 0] * g[:, 0] + gg[..., :, None, 1] * g[:, 1]) + \
            gg[..., :, None, 2] * g[:, 2]

    @staticmethod
    def _round_weights(u, f_w):
        """Step 3: Uq = clamp(rint(U f_w[k]), -127, 127), integers of U's dtype."""
        return torch.clamp(torch.round(u * f_w.view(-1, 1, 1, 1)), -127.0, 127.0)

    def quantized_weights(self):
        """The engines' Uq, (K, C, alpha, alpha) integers in float64."""
        with torch.no_grad():
            return self._round_weights(self.transformed_weights(), self._factors(*self._clips())[1])

    def int32_bound(self):
        """The largest |Y| any input can give with these weights (docs/int8-winograd.md): the
        engines refuse the layer when it exceeds 2^31 - 1."""
        s = self.quantized_weights().abs().sum(1)                 # K x alpha x alpha
        at = self._at.abs()
        return int(torch.einsum("ip,kpr,jr->kij", at, s, at).max().item()) * 127

    @torch.no_grad()
    def int8_forward(self, x):
        """Steps 1-7 in integers: the engines' int8 / uint8 output y (float32 integer values,
        N x K x P x Q) of the float input x; the real output is y_scale * y."""
        ata, atw = self._clips()
        f_a, f_w = self._factors(ata, atw)
        scale, bias, lo, hi = self._requantization(ata, atw)
        xq = quantize_input(x.float(), self.x_scale, self.x_unsigned)
        v, p, q = self._transformed_input(xq.double())                         # step 1
        vq = torch.clamp(torch.round(v.float() * f_a), -127.0, 127.0)          # step 2
        uq = self._round_weights(self.transformed_weights(), f_w)              # step 3
        mm = torch.einsum("nctwil,kcil->nktwil", vq.double(), uq)              # step 4
        y = self._output_transform(mm, p, q)                                   # step 5
        r = _fma_f32(y.float(), scale.view(1, -1, 1, 1), bias.view(1, -1, 1, 1))
        return torch.round(torch.minimum(torch.maximum(r, lo), hi))            # step 6

    def calibrate_input(self, x, percentile):
        """x_scale and c (the base's), alpha_ta at the percentile of |x_scale B'^T xq B'| over
        the quantized samples and alpha_tw of |G' g G'^T| (per output channel with
        per_channel), as wino_int8_calibrate computes them."""
        super().calibrate_input(x, percentile)
        with torch.no_grad():
            xq = quantize_input(x.float(), self.x_scale, self.x_unsigned)
            v, _, _ = self._transformed_input(xq.double())
            ata = _percentile((v * float(self.x_scale)).abs().float(), percentile)
            self.alpha_ta.data.fill_(max(float(ata), float(self.x_scale)))
            u = self.transformed_weights().abs().float()
            if self.per_channel:
                self.alpha_tw.data.copy_(torch.stack([_percentile(u[k], percentile)
                                                      for k in range(self.out_channels)]))
            else:
                self.alpha_tw.data.fill_(float(_percentile(u, percentile)))


class QConv2d(_QuantConv):
    """The direct INT8 baseline (quantization-aware training without Winograd): weights
    fake-quantized with one PACT clip alpha_w per layer, input and output quantized as in
    WinogradQuantConv2d; any stride."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=1, bias=True,
                 relu=False):
        super().__init__(in_channels, out_channels, kernel_size, padding, bias, relu)
        self.stride = stride
        self.alpha_w = nn.Parameter(torch.tensor(1.0))

    def extra_repr(self):
        return super().extra_repr() + f", stride={self.stride}"

    def _float_conv(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding)

    def forward(self, x):
        if not self.quantize:
            return self._float_forward(x)
        w = _pact(self.weight, self.alpha_w.clamp_min(1e-8), _QMAX)
        return self._fake_output(F.conv2d(self._fake_input(x), w, self.bias, self.stride,
                                          self.padding))

    def calibrate_input(self, x, percentile):
        """x_scale and c (the base's) and alpha_w at the percentile of |w|."""
        super().calibrate_input(x, percentile)
        self.alpha_w.data.fill_(float(_percentile(self.weight.detach().abs(), percentile)))


@torch.no_grad()
def calibrate(model, batches, percentile=99.9):
    """Initializes every WinogradQuantConv2d and QConv2d of model from the float activations
    the batches produce (the quantized layers run as float convolutions meanwhile): x_scale from
    the largest |input|, the clips alpha_ta, alpha_tw, alpha_w and c at the percentile of their
    values' magnitudes (99.9: the paper's initialization; 100: the largest, no clipping).
    Returns model."""
    layers = [m for m in model.modules() if isinstance(m, _QuantConv)]
    inputs = {m: [] for m in layers}
    hooks = [m.register_forward_pre_hook(lambda mod, args: inputs[mod].append(args[0].detach()))
             for m in layers]
    training = model.training
    model.eval()
    for m in layers:
        m.quantize = False
    try:
        for batch in batches:
            model(batch)
    finally:
        for h in hooks:
            h.remove()
        for m in layers:
            m.quantize = True
        model.train(training)
    for m in layers:
        m.calibrate_input(torch.cat(inputs.pop(m)), percentile)
    return model
