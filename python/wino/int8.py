"""wino's INT8 Winograd F(m x m, 3 x 3) (docs/int8-winograd.md) from Python: the exact tiles,
calibration of the clipping factors, and the INT8 operator on NumPy arrays or torch tensors
(CPU or CUDA). Tensors are NCHW here, as in torch; the engines' NHWC is handled inside."""
import ctypes
from dataclasses import dataclass
from typing import Union

import numpy as np

from . import _lib, ops

_Y_DTYPES = {"s8": _lib.DTYPE_S8, "u8": _lib.DTYPE_U8}


@dataclass
class Int8Params:
    """struct wino_int8_params: real input = x_scale * x, real output = y_scale * y; alpha_ta
    and alpha_tw clip the transformed activations and weights (alpha_tw a float, or one value
    per output channel); clip_c the PACT clip of the output (0: none); w_scale 0 for float
    weights."""
    x_scale: float
    alpha_ta: float
    alpha_tw: Union[float, np.ndarray]
    y_scale: float
    y_dtype: str = "s8"
    clip_c: float = 0.0
    w_scale: float = 0.0

    def to_c(self):
        """The C structure, and the per-channel array it points to (keep both alive)."""
        p = _lib.Int8ParamsC()
        p.x_scale, p.alpha_ta, p.y_scale = self.x_scale, self.alpha_ta, self.y_scale
        p.w_scale, p.clip_c = self.w_scale, self.clip_c
        if self.y_dtype not in _Y_DTYPES:
            raise ValueError(f"y_dtype {self.y_dtype!r}: 's8' or 'u8'")
        p.y_dtype = _Y_DTYPES[self.y_dtype]
        per_k = None
        if np.ndim(self.alpha_tw) == 0:
            p.alpha_tw = float(self.alpha_tw)
        else:
            per_k = np.ascontiguousarray(np.asarray(self.alpha_tw, dtype=np.float32).ravel())
            p.alpha_tw = float(per_k.max()) if per_k.size else 0.0
            p.alpha_tw_k = per_k.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        return p, per_k


def int8_tile(m):
    """(at, g, bt): the INT8 tile F(m, 3), m in {2, 4, 6}, exactly as the engines use it
    (integer A'^T with the balancing shifts, G', integer B'^T), as float64 arrays."""
    alpha = m + 2
    storage = (ctypes.c_double * (m * alpha + 3 * alpha + alpha * alpha))()
    t = _lib.TileMatrices()
    _lib.check(_lib.lib.wino_int8_tile_matrices(int(m), storage, len(storage), ctypes.byref(t)))
    flat = np.ctypeslib.as_array(storage).copy()
    at = flat[:m * alpha].reshape(m, alpha)
    g = flat[m * alpha:m * alpha + 3 * alpha].reshape(alpha, 3)
    bt = flat[m * alpha + 3 * alpha:].reshape(alpha, alpha)
    return at, g, bt


def _numpy(a, dtype=None):
    if hasattr(a, "detach"):  # a torch tensor
        a = a.detach().cpu().numpy()
    a = np.asarray(a)
    return np.ascontiguousarray(a if dtype is None else a.astype(dtype, copy=False))


def int8_calibrate(samples, weight, bias=None, relu=False, tile_m=4, padding=1, x_scale=0.0,
                   method="percentile", percentile=99.9):
    """Int8Params for a layer from sample activations (N x C x H x W floats), its filters
    (K x C x 3 x 3) and bias (K, or None): wino_int8_calibrate. x_scale 0: max |x| / 127 (or
    / 255 when every sample is >= 0)."""
    x = _numpy(samples, np.float32).transpose(0, 2, 3, 1).copy()  # NHWC
    w = _numpy(weight, np.float32).transpose(0, 2, 3, 1).copy()   # K x 3 x 3 x C
    desc = ops.make_desc(x.shape, w.shape, padding, layout="NHWC")
    b = None if bias is None else _numpy(bias, np.float32)
    if method not in ("percentile", "mse"):
        raise ValueError(f"method {method!r}: 'percentile' or 'mse'")
    p = _lib.Int8ParamsC()
    _lib.check(_lib.lib.wino_int8_calibrate(
        ctypes.byref(desc), int(tile_m), x.ctypes.data, w.ctypes.data,
        None if b is None else b.ctypes.data, int(bool(relu)), float(x_scale),
        _lib.CALIBRATE_PERCENTILE if method == "percentile" else _lib.CALIBRATE_MSE,
        float(percentile), ctypes.byref(p)))
    return Int8Params(x_scale=p.x_scale, alpha_ta=p.alpha_ta, alpha_tw=p.alpha_tw,
                      y_scale=p.y_scale, y_dtype="u8" if p.y_dtype == _lib.DTYPE_U8 else "s8",
                      clip_c=p.clip_c)


def int8_auto_choice(x_shape, w_shape, padding=1, stride=1, dilation=1, x_dtype="u8",
                     tuning_cache=None, threads=0):
    """What an INT8 operator with algo 'auto' runs for x (N x C x H x W) and filters (K x C x
    R x S) on the CPU: ('winograd', m), or ('direct', 0); the tuning cache's entry when
    tuning_cache holds one for this layer (`wino.tune(..., dtype="u8", cache=...)` writes it),
    else the shape rule. The clipping factors depend on it: calibrate for this tile."""
    n, c, h, w = x_shape
    k, wc, r, s = w_shape
    desc = ops.make_desc((n, h, w, c), (k, r, s, wc), padding, stride, dilation, layout="NHWC",
                         dtype=x_dtype)
    ctx = ops.make_context(threads=threads, tuning_cache=tuning_cache)
    algo, tile = ctypes.c_int(), ctypes.c_int()
    _lib.check(_lib.lib.wino_int8_auto_choice(ctypes.byref(desc), ctypes.byref(ctx),
                                              ctypes.byref(algo), ctypes.byref(tile)))
    return _lib.ALGO_NAMES[algo.value], tile.value


class Int8Conv2d:
    """wino's INT8 convolution of one layer: filters K x C x R x S (floats, or int8 with
    params.w_scale). algo 'auto': INT8 Winograd F(tile_m, 3) for 3 x 3 filters of stride 1 and
    dilation 1, INT8 direct convolution (CPU) for every other shape, where params.alpha_tw clips
    the weights themselves (docs/int8-winograd.md, "Direct"); 'winograd' or 'direct' force one.
    Call it on int8 / uint8 (x_dtype) NCHW inputs: a NumPy array, or a torch tensor on the CPU or
    on the CUDA device given; it returns the int8 / uint8 output of the same kind. The operator
    follows the input's batch and image size. tuning_cache (CPU): a file of `wino.tune(...,
    dtype=x_dtype)`; algo 'auto' then runs its entry for the layer (tile_m ignored), so params
    must be calibrated for what `int8_auto_choice` answers."""

    def __init__(self, weight, params, *, tile_m=4, padding=1, stride=1, dilation=1, bias=None,
                 relu=False, x_dtype="s8", device="cpu", variant="auto", algo="auto",
                 tuning_cache=None):
        if x_dtype not in _Y_DTYPES:
            raise ValueError(f"x_dtype {x_dtype!r}: 's8' or 'u8'")
        self.params, self.tile_m, self.padding = params, int(tile_m), padding
        self.stride, self.dilation, self.algo = stride, dilation, algo
        self.relu, self.x_dtype, self.variant = bool(relu), x_dtype, variant
        self.tuning_cache = tuning_cache
        w = _numpy(weight)
        if w.ndim != 4:
            raise ValueError(f"weight of shape {w.shape}: K x C x R x S")
        self._w = np.ascontiguousarray(w.transpose(0, 2, 3, 1).astype(
            np.int8 if params.w_scale else np.float32))
        self._bias = None if bias is None else _numpy(bias, np.float32)
        self.k, self.c = w.shape[0], w.shape[1]
        self.device = str(device)
        self._cuda = self.device.startswith("cuda")
        self._op, self._shape = None, None

    def _create(self, n, h, w):
        desc = ops.make_desc((n, h, w, self.c), self._w.shape, self.padding, self.stride,
                             self.dilation, layout="NHWC", dtype=self.x_dtype)
        options = ops.make_options(self.algo, variant=self.variant if self._cuda else "auto")
        follow_cache = self.tuning_cache is not None and self.algo == "auto"
        options.tile_m = self.tile_m if self.algo != "direct" and not follow_cache else 0
        options.relu = int(self.relu)
        if self._bias is not None:
            options.bias = self._bias.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        params, per_k = self.params.to_c()
        weights = self._w
        if self._cuda:
            import torch
            dev = torch.device(self.device)
            weights_t = torch.from_numpy(self._w).to(dev)
            ctx = ops.make_context("cuda", dev.index or 0,
                                   torch.cuda.current_stream(dev).cuda_stream)
            ptr = weights_t.data_ptr()
        else:
            ctx, ptr = ops.make_context(tuning_cache=self.tuning_cache), weights.ctypes.data
        self._op = ops.Operator("forward", desc, ptr, ctx, options, int8_params=params)
        del per_k  # create copied the per-channel clips
        self._shape = (n, h, w)
        self._pq = ops.output_size(desc)

    def _prepare(self, n, h, w):
        if self._op is None:
            self._create(n, h, w)
        elif self._shape != (n, h, w):
            self._op.reshape(n, h, w)
            self._shape = (n, h, w)
            self._pq = ops.output_size(self._op.desc)

    def __call__(self, x):
        want = np.int8 if self.x_dtype == "s8" else np.uint8
        y_np = np.int8 if self.params.y_dtype == "s8" else np.uint8
        if hasattr(x, "data_ptr") and x.is_cuda:
            return self._run_cuda(x)
        as_torch = hasattr(x, "data_ptr")
        xn = _numpy(x)
        if xn.dtype != want or xn.ndim != 4 or xn.shape[1] != self.c:
            raise TypeError(f"x must be {np.dtype(want).name} N x {self.c} x H x W, not "
                            f"{xn.dtype} {xn.shape}")
        n, _, h, w = xn.shape
        self._prepare(n, h, w)
        p, q = self._pq
        xh = np.ascontiguousarray(xn.transpose(0, 2, 3, 1))
        y = np.empty((n, p, q, self.k), dtype=y_np)
        ws, ws_ptr = ops.aligned_workspace(self._op.workspace_bytes)
        self._op.run(xh.ctypes.data, y.ctypes.data, ws_ptr)
        y = np.ascontiguousarray(y.transpose(0, 3, 1, 2))
        if as_torch:
            import torch
            return torch.from_numpy(y)
        return y

    def _run_cuda(self, x):
        import torch
        want = torch.int8 if self.x_dtype == "s8" else torch.uint8
        if x.dtype != want or x.dim() != 4 or x.shape[1] != self.c:
            raise TypeError(f"x must be {want} N x {self.c} x H x W, not {x.dtype} "
                            f"{tuple(x.shape)}")
        if torch.device(self.device) != x.device:
            raise ValueError(f"x is on {x.device}, the operator on {self.device}")
        n, _, h, w = x.shape
        self._prepare(n, h, w)
        p, q = self._pq
        xh = x.contiguous(memory_format=torch.channels_last)
        y = torch.empty((n, self.k, p, q), dtype=torch.int8 if self.params.y_dtype == "s8"
                        else torch.uint8, device=x.device, memory_format=torch.channels_last)
        ws = torch.empty(max(self._op.workspace_bytes, 1), dtype=torch.uint8, device=x.device)
        self._op.run(xh.data_ptr(), y.data_ptr(), ws.data_ptr() if self._op.workspace_bytes
                     else None, torch.cuda.current_stream(x.device).cuda_stream)
        return y
