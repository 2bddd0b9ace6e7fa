"""wino's convolution operators (include/wino.h) from Python: the Operator class around one
wino_conv2d handle on raw pointers (for any array library), and conv2d, conv2d_backward_data and
conv2d_backward_filter on NumPy arrays (CPU, FP32)."""
import ctypes

import numpy as np

from . import _lib

_ALGOS = {"auto": _lib.ALGO_AUTO, "direct": _lib.ALGO_DIRECT, "winograd": _lib.ALGO_WINOGRAD,
          "vendor": _lib.ALGO_VENDOR}
_VARIANTS = {v: k for k, v in _lib.VARIANT_NAMES.items()}
_LAYOUTS = {"NCHW": _lib.LAYOUT_NCHW, "NHWC": _lib.LAYOUT_NHWC}
_KINDS = {"forward": _lib.KIND_FORWARD, "backward_data": _lib.KIND_BACKWARD_DATA,
          "backward_filter": _lib.KIND_BACKWARD_FILTER}
DTYPES = {"f32": _lib.DTYPE_F32, "f16": _lib.DTYPE_F16, "s8": _lib.DTYPE_S8,
          "u8": _lib.DTYPE_U8, "bf16": _lib.DTYPE_BF16}
ALIGNMENT = 64  # what run() requires of the workspace


def _pair(v):
    return (int(v), int(v)) if np.isscalar(v) else (int(v[0]), int(v[1]))


def make_desc(x_shape, w_shape, padding=0, stride=1, dilation=1, layout="NCHW", dtype="f32"):
    """The descriptor of conv(x, w): x_shape and w_shape as the layout orders them
    (NCHW: N C H W and K C R S; NHWC: N H W C and K R S C)."""
    if layout not in _LAYOUTS:
        raise ValueError(f"layout {layout!r}: NCHW or NHWC")
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise ValueError(f"x {tuple(x_shape)} and w {tuple(w_shape)} must both have 4 dimensions")
    if layout == "NCHW":
        (n, c, h, w), (k, wc, r, s) = x_shape, w_shape
    else:
        (n, h, w, c), (k, r, s, wc) = x_shape, w_shape
    if wc != c:
        raise ValueError(f"x has {c} channels, the filter {wc}")
    ph, pw = _pair(padding)
    sh, sw = _pair(stride)
    dh, dw = _pair(dilation)
    return _lib.Desc(int(n), int(c), int(h), int(w), int(k), int(r), int(s), ph, pw, sh, sw,
                     dh, dw, _LAYOUTS[layout], DTYPES[dtype])


def output_size(desc):
    """(P, Q) of a descriptor, checked by the library."""
    p, q = ctypes.c_int(), ctypes.c_int()
    _lib.check(_lib.lib.wino_conv2d_output_size(ctypes.byref(desc), ctypes.byref(p),
                                                ctypes.byref(q)))
    return p.value, q.value


def make_options(algo="auto", tile_m=0, variant="auto", accumulate=False, tf32=False):
    if algo not in _ALGOS:
        raise ValueError(f"algo {algo!r}: one of {sorted(_ALGOS)}")
    if variant not in _VARIANTS:
        raise ValueError(f"variant {variant!r}: one of {sorted(_VARIANTS)}")
    o = _lib.Options()
    o.algo, o.tile_m, o.variant = _ALGOS[algo], int(tile_m), _VARIANTS[variant]
    o.accumulate, o.tf32 = int(bool(accumulate)), int(bool(tf32))
    return o


def make_context(backend="cpu", device=0, stream=None, threads=0, tuning_cache=None):
    """struct wino_context; tuning_cache: the path of a file written by `tune` (`wino tune`),
    whose entries AUTO follows."""
    ctx = _lib.Context()
    ctx.threads = int(threads)
    if tuning_cache is not None:
        ctx.tuning_cache = str(tuning_cache).encode()
    ctx.backend = _lib.BACKEND_CUDA if backend == "cuda" else _lib.BACKEND_CPU
    ctx.device = int(device)
    ctx.stream = stream
    return ctx


def tune(x_shape, w_shape, padding=0, stride=1, dilation=1, layout="NCHW", dtype="f32",
         cache=None, threads=0, reps=10):
    """wino_tune on the CPU: times the layer's candidates (FP32: direct and the Winograd tiles
    and variants; "u8" or "s8": the INT8 direct convolution and tiles, NHWC only) and returns
    the fastest as a dict (algo, tile_m, variant, ms), recorded in the file cache when given."""
    desc = make_desc(x_shape, w_shape, padding, stride, dilation, layout, dtype)
    ctx = make_context(threads=threads, tuning_cache=cache)
    choice = _lib.TuningChoice()
    _lib.check(_lib.lib.wino_tune(ctypes.byref(desc), ctypes.byref(ctx), int(reps),
                                  ctypes.byref(choice)))
    return {"algo": _lib.ALGO_NAMES[choice.algo], "tile_m": choice.tile_m,
            "variant": _lib.VARIANT_NAMES[choice.variant], "ms": choice.ms}


def can_implement(kind, desc, options=None):
    """None when the CPU would create this operator, else the reason it would not (the
    library's own sentence). kind: "forward", "backward_data" or "backward_filter"."""
    opts = ctypes.byref(options) if options is not None else None
    if kind == "forward":
        st = _lib.lib.wino_conv2d_can_implement(ctypes.byref(desc), opts)
    else:
        fn = (_lib.lib.wino_conv2d_backward_data_can_implement if kind == "backward_data"
              else _lib.lib.wino_conv2d_backward_filter_can_implement)
        st = fn(ctypes.byref(desc), opts, None)
    return None if st == _lib.SUCCESS else _lib.lib.wino_last_error().decode()


class Operator:
    """One wino operator (forward, backward_data or backward_filter) of a descriptor.

    weights: the address of the filters (forward and backward_data; host memory on the CPU,
    device memory on CUDA). int8_params (a wino._lib.Int8ParamsC): an INT8 forward operator
    (wino_conv2d_create_int8). The operator owns its C handle and destroys it when collected."""

    def __init__(self, kind, desc, weights=None, context=None, options=None, int8_params=None):
        if kind not in _KINDS:
            raise ValueError(f"kind {kind!r}: one of {sorted(_KINDS)}")
        self.kind, self.desc = kind, desc
        self.context = context if context is not None else make_context()
        self.options = options if options is not None else make_options()
        handle = ctypes.c_void_p()
        args = (ctypes.byref(desc), ctypes.byref(self.context), ctypes.byref(self.options),
                ctypes.byref(handle))
        if int8_params is not None:
            if kind != "forward":
                raise ValueError("INT8 operators are forward ones")
            st = _lib.lib.wino_conv2d_create_int8(args[0], weights, ctypes.byref(int8_params),
                                                  *args[1:])
        elif kind == "backward_filter":
            st = _lib.lib.wino_conv2d_backward_filter_create(*args)
        else:
            create = (_lib.lib.wino_conv2d_create if kind == "forward"
                      else _lib.lib.wino_conv2d_backward_data_create)
            st = create(args[0], weights, *args[1:])
        _lib.check(st)
        self._handle = handle
        self.workspace_bytes = self._workspace_size()

    def _workspace_size(self):
        size = ctypes.c_size_t()
        _lib.check(_lib.lib.wino_conv2d_workspace_size(self._handle, ctypes.byref(size)))
        return size.value

    def reshape(self, n, h, w):
        """New batch and image sizes (the same channels, filter and padding)."""
        size = ctypes.c_size_t()
        _lib.check(_lib.lib.wino_conv2d_reshape(self._handle, int(n), int(h), int(w),
                                                ctypes.byref(size)))
        self.desc.n, self.desc.h, self.desc.w = int(n), int(h), int(w)
        self.workspace_bytes = size.value

    def run(self, src, dst, workspace=None, stream=None):
        """forward: dst = conv(src); backward_data: dx (dst) from dy (src). Addresses."""
        _lib.check(_lib.lib.wino_conv2d_run_stream(self._handle, src, dst, workspace,
                                                   self.workspace_bytes, stream))

    def run_filter(self, x, dy, dw, workspace=None, stream=None):
        """backward_filter: dw from x and dy (addresses); on CUDA enqueued on stream."""
        _lib.check(_lib.lib.wino_conv2d_backward_filter_run_stream(
            self._handle, x, dy, dw, workspace, self.workspace_bytes, stream))

    def set_weights(self, weights, stream=None):
        """New filters (an address, laid out as at create); on CUDA enqueued on stream."""
        _lib.check(_lib.lib.wino_conv2d_set_weights(self._handle, weights, stream))

    @property
    def algo(self):
        """(algorithm name, tile m) the operator runs."""
        algo, tile = ctypes.c_int(), ctypes.c_int()
        _lib.check(_lib.lib.wino_conv2d_algo(self._handle, ctypes.byref(algo),
                                             ctypes.byref(tile)))
        return _lib.ALGO_NAMES[algo.value], tile.value

    @property
    def reason(self):
        """Why the operator runs what `algo` reports (on CUDA: AUTO's timed comparison with the
        vendor's engine)."""
        return _lib.lib.wino_conv2d_reason(self._handle).decode()

    @property
    def variant(self):
        v = ctypes.c_int()
        _lib.check(_lib.lib.wino_conv2d_variant(self._handle, ctypes.byref(v)))
        return _lib.VARIANT_NAMES[v.value]

    def winrs_info(self):
        """What a backward_filter operator runs (wino_conv2d_backward_filter_info) as a dict."""
        i = _lib.WinrsInfo()
        _lib.check(_lib.lib.wino_conv2d_backward_filter_info(self._handle, ctypes.byref(i)))
        return {"kernels": i.kernels, "n": list(i.n), "r": list(i.r), "alpha": list(i.alpha),
                "units": list(i.units), "segments": i.segments}

    def close(self):
        if getattr(self, "_handle", None):
            _lib.lib.wino_conv2d_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


def aligned_workspace(nbytes):
    """A zeroed NumPy byte buffer of nbytes whose address is 64-byte aligned, and that address
    (None for 0 bytes)."""
    if not nbytes:
        return None, None
    raw = np.zeros(nbytes + ALIGNMENT, dtype=np.uint8)
    offset = (-raw.ctypes.data) % ALIGNMENT
    view = raw[offset:offset + nbytes]
    return view, view.ctypes.data


def _f32(a, name):
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, not {type(a).__name__}")
    if a.dtype != np.float32:
        raise TypeError(f"{name} must be float32 (the CPU runs FP32), not {a.dtype}")
    return np.ascontiguousarray(a)


def _shape_of(desc, which, p=None, q=None):
    d = desc
    nchw = d.layout == _lib.LAYOUT_NCHW
    if which == "x":
        return (d.n, d.c, d.h, d.w) if nchw else (d.n, d.h, d.w, d.c)
    if which == "w":
        return (d.k, d.c, d.r, d.s) if nchw else (d.k, d.r, d.s, d.c)
    return (d.n, d.k, p, q) if nchw else (d.n, p, q, d.k)


def _run(kind, desc, src, weights, options, threads, out_shape):
    ctx = make_context(threads=threads)
    op = Operator(kind, desc, weights.ctypes.data if weights is not None else None, ctx, options)
    out = np.empty(out_shape, dtype=np.float32)
    ws, ws_ptr = aligned_workspace(op.workspace_bytes)
    if kind == "backward_filter":
        op.run_filter(src[0].ctypes.data, src[1].ctypes.data, out.ctypes.data, ws_ptr)
    else:
        op.run(src.ctypes.data, out.ctypes.data, ws_ptr)
    del ws
    return out


def conv2d(x, w, padding=0, stride=1, dilation=1, layout="NCHW", algo="auto", tile_m=0,
           variant="auto", threads=0):
    """y = conv(x, w) (cross-correlation, as deep-learning frameworks define it) on the CPU."""
    x, w = _f32(x, "x"), _f32(w, "w")
    desc = make_desc(x.shape, w.shape, padding, stride, dilation, layout)
    p, q = output_size(desc)
    return _run("forward", desc, x, w, make_options(algo, tile_m, variant), threads,
                _shape_of(desc, "y", p, q))


def conv2d_backward_data(dy, w, x_shape, padding=0, stride=1, dilation=1, layout="NCHW",
                         algo="auto", tile_m=0, variant="auto", threads=0):
    """dx (of x_shape) from dy and w: the gradient of conv2d with respect to its input."""
    dy, w = _f32(dy, "dy"), _f32(w, "w")
    desc = make_desc(x_shape, w.shape, padding, stride, dilation, layout)
    p, q = output_size(desc)
    if dy.shape != _shape_of(desc, "y", p, q):
        raise ValueError(f"dy has shape {dy.shape}, the output of this convolution "
                         f"{_shape_of(desc, 'y', p, q)}")
    return _run("backward_data", desc, dy, w, make_options(algo, tile_m, variant), threads,
                tuple(x_shape))


def conv2d_backward_filter(x, dy, w_shape, padding=0, stride=1, dilation=1, layout="NCHW",
                           algo="auto", threads=0):
    """dw (of w_shape) from x and dy: the gradient of conv2d with respect to its filters."""
    x, dy = _f32(x, "x"), _f32(dy, "dy")
    desc = make_desc(x.shape, w_shape, padding, stride, dilation, layout)
    p, q = output_size(desc)
    if dy.shape != _shape_of(desc, "y", p, q):
        raise ValueError(f"dy has shape {dy.shape}, the output of this convolution "
                         f"{_shape_of(desc, 'y', p, q)}")
    return _run("backward_filter", desc, (x, dy), None, make_options(algo), threads,
                tuple(w_shape))
