"""wino's convolutions as torch custom operators (torch.library), with autograd.

    wino::conv2d(x, weight, padding, stride, dilation) -> y
    wino::conv2d_backward_data(dy, weight, x_size, padding, stride, dilation) -> dx
    wino::conv2d_backward_filter(x, dy, weight, padding, stride, dilation) -> dw

Each runs wino's operator when wino serves the call (device, dtype, shape), and torch's own
convolution otherwise, so an operator never refuses a valid convolution; `decision` says which
ran and why. x may be NCHW-contiguous or channels_last (NHWC); the result has x's format. On
CUDA, operators are created once per shape, dtype, layout, device (and stream, see _entry)
(creation may time kernels and synchronize, like cudnn.benchmark's first call) and cached; every
later call enqueues on torch's current stream (new weights by wino_conv2d_set_weights, then the
run), with its workspace from torch's caching allocator: no synchronization, no host copies, so
a training step can be captured in a CUDA graph once its operators exist.
"""
import threading
from typing import List

import torch

from .. import _lib, ops as wops

_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
_KINDS = ("forward", "backward_data", "backward_filter")


class _Entry:
    """A cached operator (or the reason wino does not serve its key) and its lock: a run and
    the weights it reads stay together when threads share the operator. fresh: no run yet, so
    the operator still holds the weights it was created with."""

    def __init__(self, op=None, why=None):
        self.op, self.why, self.lock, self.fresh = op, why, threading.Lock(), True


_cache = {}
_cache_lock = threading.Lock()
_decisions = {}  # (kind, call key) -> reason wino did not run it, or None when it did


def _layout(t):
    """NCHW or NHWC as t's strides say (a tensor of one channel or pixel can be both: its
    exact strides decide, as torch's own convolutions decide), None when neither."""
    n, c, h, w = t.shape
    if t.stride() == (c * h * w, h * w, w, 1):
        return "NCHW"
    if t.is_contiguous(memory_format=torch.channels_last):
        return "NHWC"
    return "NCHW" if t.is_contiguous() else None


def _format(layout):
    return torch.channels_last if layout == "NHWC" else torch.contiguous_format


def _as_layout(t, layout):
    """t in the layout's memory, copied only when it is not already (non-contiguous inputs)."""
    return t.contiguous(memory_format=_format(layout))


def _stream(device):
    return torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else None


def _call_key(kind, x_size, w_size, dtype, device, layout, conf):
    return (kind, tuple(x_size), tuple(w_size), dtype, str(device), layout, tuple(map(tuple, conf)))


def _static_refusal(device, dtype, layout):
    if device.type not in ("cpu", "cuda"):
        return f"wino runs on CPU and CUDA tensors, not {device.type}"
    if dtype not in _DTYPES:
        return f"wino has no {dtype} convolution"
    if layout is None:
        return "unreachable: inputs are made contiguous first"
    return None


def _desc(x_size, w_size, layout, dtype, conf):
    n, c, h, w = x_size
    k, _, r, s = w_size
    padding, stride, dilation = conf
    xs = (n, c, h, w) if layout == "NCHW" else (n, h, w, c)
    ws = (k, c, r, s) if layout == "NCHW" else (k, r, s, c)
    return wops.make_desc(xs, ws, padding, stride, dilation, layout, _DTYPES[dtype])


def _entry(kind, x_size, w_size, weight, device, dtype, layout, conf):
    """(entry, mine): the cached operator for this call, or an entry holding the reason wino
    does not serve it; mine when this call created the operator with weight's data.

    Forward and backward-data operators hold transformed weights, so each stream has its own
    (two streams could otherwise overwrite each other's weights between set_weights and run);
    while a CUDA graph is being captured, where nothing may be created, the operator of another
    stream is taken. Backward-filter operators hold no data and serve every stream."""
    stream = _stream(device)
    call = _call_key(kind, x_size, w_size, dtype, device, layout, conf)
    key = (call, None if kind == "backward_filter" else stream)
    with _cache_lock:
        e = _cache.get(key)
        if e is None and stream is not None and torch.cuda.is_current_stream_capturing():
            e = next((v for k, v in _cache.items() if k[0] == call), None)
    if e is not None:
        return e, False
    why = _static_refusal(device, dtype, layout)
    op = None
    if why is None:
        ctx = wops.make_context("cuda" if device.type == "cuda" else "cpu", device.index or 0,
                                stream)
        try:
            op = wops.Operator(kind, _desc(x_size, w_size, layout, dtype, conf),
                               None if weight is None else weight.data_ptr(), ctx)
        except _lib.WinoUnsupported as err:
            why = err.message
    mine = _Entry(op, why)
    with _cache_lock:
        e = _cache.setdefault(key, mine)
    _decisions[key[0]] = e.why
    return e, e is mine


def _workspace(nbytes, device):
    """(tensor kept alive for the call, its 64-byte aligned address) from torch's allocator."""
    if not nbytes:
        return None, None
    buf = torch.empty(nbytes + wops.ALIGNMENT, dtype=torch.uint8, device=device)
    address = buf.data_ptr()
    return buf, address + (-address) % wops.ALIGNMENT


def _weights_in(weight, layout):
    """The filters as the operator takes them: K C R S (NCHW) or K R S C (NHWC) memory."""
    return _as_layout(weight, layout)


def _check_pair(a, b, what):
    if a.device != b.device:
        raise ValueError(f"wino: {what} are on different devices ({a.device}, {b.device})")
    if a.dtype != b.dtype:
        raise TypeError(f"wino: {what} have different dtypes ({a.dtype}, {b.dtype})")


def _check_4d(t, name):
    if t.dim() != 4:
        raise ValueError(f"wino: {name} must have 4 dimensions (N C H W), not {t.dim()}")


def _check_shapes(x_size, w_size, dy_size, conf):
    """Raises ValueError unless x (N C H W), w (K C R S) and dy (N K P Q, or None) fit conf."""
    padding, stride, dilation = conf
    if len(x_size) != 4 or len(w_size) != 4:
        raise ValueError(f"wino: x {tuple(x_size)} and weight {tuple(w_size)} must have 4 "
                         f"dimensions")
    if x_size[1] != w_size[1]:
        raise ValueError(f"wino: x has {x_size[1]} channels, weight {tuple(w_size)} expects "
                         f"{w_size[1]}")
    p = _out_size(x_size[2], w_size[2], padding[0], stride[0], dilation[0])
    q = _out_size(x_size[3], w_size[3], padding[1], stride[1], dilation[1])
    if p < 1 or q < 1:
        raise ValueError(f"wino: the dilated filter {tuple(w_size[2:])} is larger than the "
                         f"padded input {tuple(x_size[2:])}")
    if dy_size is not None and tuple(dy_size) != (x_size[0], w_size[0], p, q):
        raise ValueError(f"wino: dy has shape {tuple(dy_size)}, the output of this convolution "
                         f"{(x_size[0], w_size[0], p, q)}")


def _run_with_weights(e, mine, weight, stream, run):
    """Takes the lock, gives the operator weight (unless this call created it and nothing ran
    since: the weights change in place between steps, so an address proves nothing), runs."""
    with e.lock:
        if not (mine and e.fresh):
            e.op.set_weights(weight.data_ptr(), stream)
        e.fresh = False
        run()


@torch.library.custom_op("wino::conv2d", mutates_args=())
def conv2d(x: torch.Tensor, weight: torch.Tensor, padding: List[int], stride: List[int],
           dilation: List[int]) -> torch.Tensor:
    _check_4d(x, "x")
    _check_pair(x, weight, "x and weight")
    conf = (padding, stride, dilation)
    _check_shapes(x.shape, weight.shape, None, conf)
    layout = _layout(x) or "NCHW"
    x = _as_layout(x, layout)
    w = _weights_in(weight, layout)
    e, mine = _entry("forward", x.shape, weight.shape, w, x.device, x.dtype, layout, conf)
    if e.op is None:
        return torch.nn.functional.conv2d(x, weight, None, stride, padding, dilation)
    p, q = wops.output_size(e.op.desc)
    y = torch.empty((x.shape[0], weight.shape[0], p, q), dtype=x.dtype, device=x.device,
                    memory_format=_format(layout))
    ws, address = _workspace(e.op.workspace_bytes, x.device)
    stream = _stream(x.device)
    _run_with_weights(e, mine, w, stream,
                      lambda: e.op.run(x.data_ptr(), y.data_ptr(), address, stream))
    return y


def _out_size(size, k, pad, stride, dil):
    return (size + 2 * pad - dil * (k - 1) - 1) // stride + 1


@conv2d.register_fake
def _(x, weight, padding, stride, dilation):
    p = _out_size(x.shape[2], weight.shape[2], padding[0], stride[0], dilation[0])
    q = _out_size(x.shape[3], weight.shape[3], padding[1], stride[1], dilation[1])
    return torch.empty((x.shape[0], weight.shape[0], p, q), dtype=x.dtype, device=x.device,
                       memory_format=_format(_layout(x) or "NCHW"))


@torch.library.custom_op("wino::conv2d_backward_data", mutates_args=())
def conv2d_backward_data(dy: torch.Tensor, weight: torch.Tensor, x_size: List[int],
                         padding: List[int], stride: List[int],
                         dilation: List[int]) -> torch.Tensor:
    _check_4d(dy, "dy")
    _check_pair(dy, weight, "dy and weight")
    _check_shapes(x_size, weight.shape, dy.shape, (padding, stride, dilation))
    layout = _layout(dy) or "NCHW"
    dy = _as_layout(dy, layout)
    w = _weights_in(weight, layout)
    e, mine = _entry("backward_data", x_size, weight.shape, w, dy.device, dy.dtype, layout,
               (padding, stride, dilation))
    if e.op is None:
        return torch.nn.grad.conv2d_input(x_size, weight, dy, stride, padding, dilation)
    dx = torch.empty(x_size, dtype=dy.dtype, device=dy.device, memory_format=_format(layout))
    ws, address = _workspace(e.op.workspace_bytes, dy.device)
    stream = _stream(dy.device)
    _run_with_weights(e, mine, w, stream,
                      lambda: e.op.run(dy.data_ptr(), dx.data_ptr(), address, stream))
    return dx


@conv2d_backward_data.register_fake
def _(dy, weight, x_size, padding, stride, dilation):
    return torch.empty(x_size, dtype=dy.dtype, device=dy.device,
                       memory_format=_format(_layout(dy) or "NCHW"))


@torch.library.custom_op("wino::conv2d_backward_filter", mutates_args=())
def conv2d_backward_filter(x: torch.Tensor, dy: torch.Tensor, weight: torch.Tensor,
                           padding: List[int], stride: List[int],
                           dilation: List[int]) -> torch.Tensor:
    """dw, of weight's shape and dtype (weight's values are not read)."""
    _check_4d(x, "x")
    _check_pair(x, dy, "x and dy")
    _check_shapes(x.shape, weight.shape, dy.shape, (padding, stride, dilation))
    layout = _layout(x) or "NCHW"
    x, dy = _as_layout(x, layout), _as_layout(dy, layout)
    e, _ = _entry("backward_filter", x.shape, weight.shape, None, x.device, x.dtype, layout,
               (padding, stride, dilation))
    if e.op is None:
        return torch.nn.grad.conv2d_weight(x, weight.shape, dy, stride, padding, dilation)
    dw = torch.empty(weight.shape, dtype=x.dtype, device=x.device, memory_format=_format(layout))
    ws, address = _workspace(e.op.workspace_bytes, x.device)
    e.op.run_filter(x.data_ptr(), dy.data_ptr(), dw.data_ptr(), address, _stream(x.device))
    return dw


@conv2d_backward_filter.register_fake
def _(x, dy, weight, padding, stride, dilation):
    return torch.empty(weight.shape, dtype=x.dtype, device=x.device,
                       memory_format=_format(_layout(x) or "NCHW"))


def _setup_context(ctx, inputs, output):
    x, weight, padding, stride, dilation = inputs
    ctx.save_for_backward(x, weight)
    ctx.conf = (padding, stride, dilation)


def _backward(ctx, dy):
    x, weight = ctx.saved_tensors
    padding, stride, dilation = ctx.conf
    dy = _as_layout(dy, _layout(x) or "NCHW")
    dx = dw = None
    if ctx.needs_input_grad[0]:
        dx = torch.ops.wino.conv2d_backward_data(dy, weight, list(x.shape), padding, stride,
                                                 dilation)
    if ctx.needs_input_grad[1]:
        dw = torch.ops.wino.conv2d_backward_filter(x, dy, weight, padding, stride, dilation)
    return dx, dw, None, None, None


torch.library.register_autograd("wino::conv2d", _backward, setup_context=_setup_context)


def decision(kind, x_size, w_size, dtype, device, layout, conf):
    """None when wino ran (or would run) this call, else the reason torch's convolution did;
    "not run yet" when no such call was made."""
    device = torch.device(device)
    for lay in (layout, "NHWC" if layout == "NCHW" else "NCHW"):  # a gradient of one channel
        key = _call_key(kind, x_size, w_size, dtype, device, lay, conf)  # can be either
        if key in _decisions:
            return _decisions[key]
    return "not run yet"
