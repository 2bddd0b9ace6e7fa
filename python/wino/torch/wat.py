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


class _ClipSTE(torch.autograd.Function):
    """q * clip / levels, the real value of the integers q = rint(clamp(v, lo, clip) levels /
    clip) the caller computed, lo = -clip (0 with relu), with PACT's gradients (the paper's
    eq. 9-11): v's inside [lo, clip] (rounding passes it straight through), clip's outside
    (+1 above, -1 below -clip), summed to clip's shape."""

    @staticmethod
    def forward(ctx, v, clip, q, levels, relu):
        above = v > clip
        below = v < 0 if relu else v < -clip
        ctx.save_for_backward(above, below)
        ctx.clip_shape, ctx.relu = clip.shape, relu
        return q * (clip / levels)

    @staticmethod
    def backward(ctx, g):
        above, below = ctx.saved_tensors
        g_v = g.masked_fill(above | below, 0.0)
        g_clip = g.masked_fill(~above, 0.0)
        if not ctx.relu:
            g_clip = g_clip - g.masked_fill(~below, 0.0)
        return g_v, g_clip.sum_to_size(ctx.clip_shape), None, None, None


def _pact(v, clip, levels, relu=False):
    """v clipped to [-clip, clip] ([0, clip] with relu) and rounded to the step clip / levels,
    with _ClipSTE's gradients."""
    with torch.no_grad():
        lo = torch.zeros_like(clip) if relu else -clip
        q = torch.round(torch.clamp(v, lo, clip) / (clip / levels))
    return _ClipSTE.apply(v, clip, q, levels, relu)


class _InputSTE(torch.autograd.Function):
    """quantize_input(x, x_scale, unsigned) with the straight-through gradient 1 / x_scale
    inside the representable range and none outside."""

    @staticmethod
    def forward(ctx, x, x_scale, unsigned):
        lo, hi = _input_range(unsigned)
        ctx.save_for_backward((x >= lo * x_scale) & (x <= hi * x_scale), x_scale)
        return torch.clamp(torch.round(x / x_scale), lo, hi)  # quantize_input

    @staticmethod
    def backward(ctx, g):
        inside, x_scale = ctx.saved_tensors
        return g.masked_fill(~inside, 0.0) / x_scale, None, None


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
    double sum is recovered exactly (TwoSum) and folded in by rounding to odd (an inexact sum
    with an even last bit moves one ulp toward the exact value), after which the conversion to
    float rounds as a single rounding of the exact value would (53 >= 2 * 24 + 2 bits)."""
    p = y.double() * scale.double()
    b = bias.double()
    s = p + b
    bb = s - p
    err = (p - (s - bb)) + (b - bb)
    bits = s.view(torch.int64)
    nudge = torch.where((err > 0) == (s > 0), 1, -1) * ((err != 0) & ((bits & 1) == 0))
    return (bits + nudge).view(torch.float64).float()


def _exact_dtype(x, largest_sum, largest_operand):
    """The float dtype in which products of integers on x's device are exact when every partial
    sum stays below largest_sum and every operand below largest_operand: float32 below 2^24,
    unless CUDA matmuls may round operands to TF32 (11 significant bits); float64 else."""
    tf32 = x.is_cuda and torch.backends.cuda.matmul.allow_tf32
    exact = largest_sum < 2 ** 24 and not (tf32 and largest_operand > 2 ** 11)
    return torch.float32 if exact else torch.float64


def _tiles(x, m, padding):
    """x (N, C, H, W) zero padded and cut into the alpha x alpha input windows of F(m, 3) with
    stride m, position-major: (alpha^2, N tiles_h tiles_w, C), and (N, tiles_h, tiles_w, P, Q)
    for _untile."""
    n, c, h, w = x.shape
    a, p, q = m + 2, h + 2 * padding - 2, w + 2 * padding - 2
    th, tw = -(-p // m), -(-q // m)
    x = F.pad(x, (padding, tw * m + 2 - w - padding, padding, th * m + 2 - h - padding))
    win = x.unfold(2, a, m).unfold(3, a, m)                     # N C th tw a a
    return win.permute(4, 5, 0, 2, 3, 1).reshape(a * a, n * th * tw, c), (n, th, tw, p, q)


def _untile(y, shape):
    """(m^2, N tiles_h tiles_w, K) output tiles -> (N, K, P, Q), the edge tiles cropped."""
    n, th, tw, p, q = shape
    m, k = math.isqrt(y.shape[0]), y.shape[2]
    y = y.reshape(m, m, n, th, tw, k).permute(2, 5, 3, 0, 4, 1)
    return y.reshape(n, k, th * m, tw * m)[:, :, :p, :q]


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

    def _fake_output(self, y):
        return _pact(y, self._clip(), self.y_qmax, relu=self.relu)

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
                 relu=False, per_channel=False, fit_int32=True):
        if kernel_size != 3:
            raise ValueError(f"kernel_size {kernel_size}: INT8 Winograd runs 3 x 3 filters")
        if tile_m not in (2, 4, 6):
            raise ValueError(f"tile_m {tile_m}: INT8 Winograd runs F(2,3), F(4,3), F(6,3)")
        super().__init__(in_channels, out_channels, 3, padding, bias, relu)
        self.tile_m, self.per_channel, self.fit_int32 = tile_m, bool(per_channel), fit_int32
        self.alpha_ta = nn.Parameter(torch.tensor(1.0))
        self.alpha_tw = nn.Parameter(torch.ones(out_channels) if per_channel else
                                     torch.tensor(1.0))
        at, g, bt = (torch.from_numpy(a) for a in wino.int8_tile(tile_m))
        self.register_buffer("_at", at, persistent=False)
        self.register_buffer("_g", g, persistent=False)
        self.register_buffer("_bt", bt, persistent=False)
        self.register_buffer("_kron_bt", torch.kron(bt, bt), persistent=False)
        self.register_buffer("_kron_at", torch.kron(at, at), persistent=False)
        self.register_buffer("_kron_g", torch.kron(g, g), persistent=False)
        rows = at.abs().sum(1)
        self.register_buffer("_at_row_products", torch.outer(rows, rows), persistent=False)
        self._beta_b = int(bt.abs().sum(1).max())  # the largest absolute row sum of B'^T
        self._max_kron_bt = int(self._kron_bt.abs().max())
        self.exact = True

    def extra_repr(self):
        return super().extra_repr() + f", tile_m={self.tile_m}, per_channel={self.per_channel}" \
            + ("" if self.fit_int32 else ", fit_int32=False")

    def _float_conv(self, x):
        return F.conv2d(x, self.weight, self.bias, padding=self.padding)

    def _clips(self, u_sums=None):
        """alpha_ta (at least x_scale, as create_int8 requires) and alpha_tw (K values; with
        fit_int32 at least the floor of _alpha_tw_floor(u_sums), so that the engines accept
        the layer). u_sums: sum_c |U| (K, alpha, alpha), by default of the exact U."""
        ata = torch.maximum(self.alpha_ta, self.x_scale)
        atw = self.alpha_tw.clamp_min(1e-30).expand(self.out_channels)
        if self.fit_int32:
            if u_sums is None:
                u_sums = self.transformed_weights().abs().sum(1)
            floor = self._alpha_tw_floor(u_sums)
            up = floor.float()  # rounded up to float
            up = torch.where(up.double() < floor, torch.nextafter(up, up.new_tensor(math.inf)),
                             up)
            atw = torch.maximum(atw, up if self.per_channel else up.max())
        return ata, atw

    def alpha_tw_floor(self):
        """The least alpha_tw[k] (double, K values) with which the engines' int32 bound
        (docs/int8-winograd.md, int32_bound()) holds for these weights: since
        |Uq| <= |U| 127 / alpha_tw + 1/2, the bound stays below 2^31 - 1 when
        alpha_tw >= 127^2 W1 / (2^31 - 1 - 127 W0) for every output (i, j), with
        W1 = sum |A'_ip| |A'_jq| sum_c |U_pq| and W0 = sum |A'_ip| |A'_jq| C / 2. Only
        F(6,3) with a few dozen channels or more comes near it."""
        return self._alpha_tw_floor(self.transformed_weights().abs().sum(1))

    def _alpha_tw_floor(self, u_sums):
        at = self._at.abs()
        w1 = torch.einsum("ip,kpr,jr->kij", at, u_sums.detach().double(), at)
        room = _INT32_MAX - 127.0 * self._at_row_products * (self.in_channels / 2)
        return (127.0 ** 2 * w1 / room.clamp_min(1.0)).flatten(1).max(1).values

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

    def _input_dtype(self, xq):
        """Step 1's exact dtype: its partial sums stay below beta_B^2 * 255 <= 637500."""
        return _exact_dtype(xq, self._beta_b ** 2 * 255, max(255, self._max_kron_bt))

    def _transformed_input(self, xq):
        """Step 1 on integer inputs, exact in _input_dtype(xq): V = B'^T d B' of every window
        as one product with B'^T (x) B'^T, (alpha^2, tiles, C), and the tiling for _untile."""
        d, shape = _tiles(xq, self.tile_m, self.padding)
        return (self._kron_bt.to(xq.dtype) @ d.flatten(1)).view(d.shape), shape

    def _output_transform(self, mm, shape):
        """Step 5 and the crop: A'^T M A' of M (alpha^2, tiles, K) in M's dtype -> N K P Q."""
        return _untile((self._kron_at.to(mm.dtype) @ mm.flatten(1)).view(-1, *mm.shape[1:]),
                       shape)

    @staticmethod
    def _by_position(u):
        """(K, C, alpha, alpha) -> the EWMM's GEMM operands, (alpha^2, C, K)."""
        return u.permute(2, 3, 1, 0).reshape(-1, u.shape[1], u.shape[0])

    def _fake_forward(self, x):
        """The pipeline with fake quantization, differentiable. The input integers pass the
        gradient straight through (1 / x_scale inside their range), V is exact, Vq and Uq are
        the engines' integers in the forward pass (up to U's last bits: here one product with
        G' (x) G') and PACT clips in the backward one; the EWMM, the output transform and the
        requantization run in float32 on real values."""
        k, c, a = self.out_channels, self.in_channels, self.tile_m + 2
        u = (self._kron_g @ self.weight.double().reshape(k * c, 9).T).view(a * a, k, c)
        u = u.transpose(1, 2)                                                  # a^2 C K
        ata, atw = self._clips(u.detach().abs().sum(1).T.reshape(k, a, a))
        f_a, f_w = self._factors(ata, atw)
        s = self.x_scale
        v, shape = self._transformed_input(_InputSTE.apply(x, s, self.x_unsigned))
        vq = _ClipSTE.apply(v * s, ata, torch.clamp(torch.round(v.detach() * f_a), -127.0,
                                                    127.0), _QMAX, False)
        uq = torch.clamp(torch.round(u.detach() * f_w), -127.0, 127.0)
        uq = _ClipSTE.apply(u.float(), atw, uq.float(), _QMAX, False)
        y = self._output_transform(torch.bmm(vq, uq), shape)
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

    def transformed_weights(self):
        """U = G' g G'^T in double (K, C, alpha, alpha), computed with the operations of
        wino_int8_filter_transform in its order, so that U has the engines' bits."""
        g, w = self._g, self.weight.detach().double()
        gg = (g[:, 0, None] * w[:, :, None, 0, :] + g[:, 1, None] * w[:, :, None, 1, :]) + \
            g[:, 2, None] * w[:, :, None, 2, :]
        return (gg[..., :, None, 0] * g[:, 0] + gg[..., :, None, 1] * g[:, 1]) + \
            gg[..., :, None, 2] * g[:, 2]

    def _quantized(self):
        """alpha_ta, alpha_tw and the engines' Uq (K, C, alpha, alpha; integers in float64)."""
        u = self.transformed_weights()
        ata, atw = self._clips(u.abs().sum(1))
        f_w = self._factors(ata, atw)[1]
        return ata, atw, torch.clamp(torch.round(u * f_w.view(-1, 1, 1, 1)), -127.0, 127.0)

    def quantized_weights(self):
        """Step 3: the engines' Uq = clamp(rint(U 127 / alpha_tw[k]), -127, 127), (K, C, alpha,
        alpha) integers in float64."""
        with torch.no_grad():
            return self._quantized()[2]

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
        ata, atw, uq = self._quantized()                                       # step 3
        f_a = self._factors(ata, atw)[0]
        scale, bias, lo, hi = self._requantization(ata, atw)
        xq = quantize_input(x.float(), self.x_scale, self.x_unsigned)
        v, shape = self._transformed_input(xq.to(self._input_dtype(xq)))      # step 1
        vq = torch.clamp(torch.round(v.float() * f_a), -127.0, 127.0)          # step 2
        dt = _exact_dtype(x, 16129 * self.in_channels, 127)
        mm = torch.bmm(vq.to(dt), self._by_position(uq).to(dt))                # step 4
        y = self._output_transform(mm.double(), shape)                         # step 5
        r = _fma_f32(y.float(), scale.view(1, -1, 1, 1), bias.view(1, -1, 1, 1))
        return torch.round(torch.minimum(torch.maximum(r, lo), hi))            # step 6

    def calibrate_input(self, x, percentile):
        """x_scale and c (the base's), alpha_ta at the percentile of |x_scale B'^T xq B'| over
        the quantized samples and alpha_tw of |G' g G'^T| (per output channel with
        per_channel), as wino_int8_calibrate computes them."""
        super().calibrate_input(x, percentile)
        with torch.no_grad():
            xq = quantize_input(x.float(), self.x_scale, self.x_unsigned)
            v, _ = self._transformed_input(xq.to(self._input_dtype(xq)))
            ata = _percentile((v.double() * float(self.x_scale)).abs().float(), percentile)
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
        x = _InputSTE.apply(x, self.x_scale, self.x_unsigned) * self.x_scale
        return self._fake_output(F.conv2d(x, w, self.bias, self.stride, self.padding))

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
