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

wino.torch.Conv2d calls `conv2d_autograd`: in eager mode the same computations through a
torch.autograd.Function, which skips the dispatcher's Python layers that a custom operator
pays on every call (about 0.2 ms a call on an H100 host, more than the kernels of a ResNet-18
layer); while torch.compile or torch.export trace, or under a dispatch mode, the custom ops.
"""
import threading
from typing import List

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

from .. import _lib, ops as wops

_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
_KINDS = ("forward", "backward_data", "backward_filter")


class _Entry:
    """A cached operator (or the reason wino does not serve its key) and its lock: a run and
    the weights it reads stay together when threads share the operator. fresh: no run yet, so
    the operator still holds the weights it was created with. out: the operator's (P, Q)."""

    def __init__(self, op=None, why=None):
        self.op, self.why, self.lock, self.fresh = op, why, threading.Lock(), True
        self.out = None if op is None else wops.output_size(op.desc)


_cache = {}
_cache_lock = threading.Lock()
_decisions = {}  # call key -> (what ran: "wino", "cudnn" or "torch", why)


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
    """torch's current stream on a tensor's device as an address (the raw query: a tenth of
    torch.cuda.current_stream's cost, which is paid on every call)."""
    return torch._C._cuda_getCurrentRawStream(device.index) if device.type == "cuda" else None


_algo = "auto"  # what operators created from now on are asked for (set_algo)


def set_algo(algo):
    """The algorithm that wino's operators created from now on run (wino_conv2d_options.algo):
    "auto" (default: on CUDA wino's kernels or cuDNN's engine, whichever AUTO timed faster),
    "winograd" (wino's Winograd kernels only; layers they refuse run on torch), "direct" or
    "vendor". Operators already created keep theirs; each choice has its own cache entries."""
    global _algo
    wops.make_options(algo=algo)  # raises ValueError for an unknown name
    _algo = algo


def _call_key(kind, x_size, w_size, dtype, device, layout, conf):
    return (kind, tuple(x_size), tuple(w_size), dtype, str(device), layout, tuple(map(tuple, conf)),
            _algo)


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


def _entry(kind, x_size, w_size, weight, device, dtype, layout, conf, stream):
    """(entry, mine): the cached operator for this call (stream: torch's current one on
    device), or an entry holding the reason wino does not serve it; mine when this call
    created the operator with weight's data.

    Forward and backward-data operators hold transformed weights, so each stream has its own
    (two streams could otherwise overwrite each other's weights between set_weights and run);
    while a CUDA graph is being captured, where nothing may be created, the operator of another
    stream is taken. Backward-filter operators hold no data and serve every stream."""
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
                               None if weight is None else weight.data_ptr(), ctx,
                               wops.make_options(algo=_algo))
        except _lib.WinoUnsupported as err:
            why = err.message
    mine = _Entry(op, why)
    with _cache_lock:
        e = _cache.setdefault(key, mine)
    _decisions[key[0]] = _what_runs(e)
    return e, e is mine


def _what_runs(e):
    """(what runs, why): torch's convolution (wino does not serve the call), cuDNN's engine
    (AUTO on CUDA timed it faster than wino's kernel, or wino's refuse the layer) or wino's."""
    if e.op is None:
        return "torch", e.why
    if e.op.algo[0] == "vendor":
        return "cudnn", e.op.reason
    return "wino", ""


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


def _run_with_weights(e, mine, weight, stream, src, dst):
    """dst = the operator (forward or backward-data) on src, with a workspace from torch's
    allocator. Takes the lock and gives the operator weight first (unless this call created it
    and nothing ran since: the weights change in place between steps, so an address proves
    nothing)."""
    ws, address = _workspace(e.op.workspace_bytes, src.device)
    with e.lock:
        if not (mine and e.fresh):
            e.op.set_weights(weight.data_ptr(), stream)
        e.fresh = False
        e.op.run(src.data_ptr(), dst.data_ptr(), address, stream)
    return dst


def _forward(x, weight, padding, stride, dilation):
    _check_4d(x, "x")
    _check_pair(x, weight, "x and weight")
    conf = (padding, stride, dilation)
    _check_shapes(x.shape, weight.shape, None, conf)
    layout = _layout(x) or "NCHW"
    x = _as_layout(x, layout)
    w = _weights_in(weight, layout)
    stream = _stream(x.device)
    e, mine = _entry("forward", x.shape, weight.shape, w, x.device, x.dtype, layout, conf,
                     stream)
    if e.op is None:
        return torch.nn.functional.conv2d(x, weight, None, stride, padding, dilation)
    y = torch.empty((x.shape[0], weight.shape[0], *e.out), dtype=x.dtype, device=x.device,
                    memory_format=_format(layout))
    return _run_with_weights(e, mine, w, stream, x, y)


def _backward_data(dy, weight, x_size, padding, stride, dilation):
    _check_4d(dy, "dy")
    _check_pair(dy, weight, "dy and weight")
    _check_shapes(x_size, weight.shape, dy.shape, (padding, stride, dilation))
    layout = _layout(dy) or "NCHW"
    dy = _as_layout(dy, layout)
    w = _weights_in(weight, layout)
    stream = _stream(dy.device)
    e, mine = _entry("backward_data", x_size, weight.shape, w, dy.device, dy.dtype, layout,
                     (padding, stride, dilation), stream)
    if e.op is None:
        return torch.nn.grad.conv2d_input(x_size, weight, dy, stride, padding, dilation)
    dx = torch.empty(x_size, dtype=dy.dtype, device=dy.device, memory_format=_format(layout))
    return _run_with_weights(e, mine, w, stream, dy, dx)


def _backward_filter(x, dy, weight, padding, stride, dilation):
    """dw, of weight's shape and dtype (weight's values are not read)."""
    _check_4d(x, "x")
    _check_pair(x, dy, "x and dy")
    _check_shapes(x.shape, weight.shape, dy.shape, (padding, stride, dilation))
    layout = _layout(x) or "NCHW"
    x, dy = _as_layout(x, layout), _as_layout(dy, layout)
    stream = _stream(x.device)
    e, _ = _entry("backward_filter", x.shape, weight.shape, None, x.device, x.dtype, layout,
                  (padding, stride, dilation), stream)
    if e.op is None:
        return torch.nn.grad.conv2d_weight(x, weight.shape, dy, stride, padding, dilation)
    dw = torch.empty(weight.shape, dtype=x.dtype, device=x.device, memory_format=_format(layout))
    ws, address = _workspace(e.op.workspace_bytes, x.device)
    e.op.run_filter(x.data_ptr(), dy.data_ptr(), dw.data_ptr(), address, stream)
    return dw


def _out_size(size, k, pad, stride, dil):
    return (size + 2 * pad - dil * (k - 1) - 1) // stride + 1


@torch.library.custom_op("wino::conv2d", mutates_args=())
def conv2d(x: torch.Tensor, weight: torch.Tensor, padding: List[int], stride: List[int],
           dilation: List[int]) -> torch.Tensor:
    return _forward(x, weight, padding, stride, dilation)


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
    return _backward_data(dy, weight, x_size, padding, stride, dilation)


@conv2d_backward_data.register_fake
def _(dy, weight, x_size, padding, stride, dilation):
    return torch.empty(x_size, dtype=dy.dtype, device=dy.device,
                       memory_format=_format(_layout(dy) or "NCHW"))


@torch.library.custom_op("wino::conv2d_backward_filter", mutates_args=())
def conv2d_backward_filter(x: torch.Tensor, dy: torch.Tensor, weight: torch.Tensor,
                           padding: List[int], stride: List[int],
                           dilation: List[int]) -> torch.Tensor:
    """dw, of weight's shape and dtype (weight's values are not read)."""
    return _backward_filter(x, dy, weight, padding, stride, dilation)


@conv2d_backward_filter.register_fake
def _(x, dy, weight, padding, stride, dilation):
    return torch.empty(weight.shape, dtype=x.dtype, device=x.device,
                       memory_format=_format(_layout(x) or "NCHW"))


def _setup_context(ctx, inputs, output):
    x, weight, padding, stride, dilation = inputs
    ctx.save_for_backward(x, weight)
    ctx.conf = (padding, stride, dilation)


def _gradients(ctx, dy, backward_data, backward_filter):
    """(dx, dw) of the saved forward, each only where its input needs it."""
    x, weight = ctx.saved_tensors
    padding, stride, dilation = ctx.conf
    dy = _as_layout(dy, _layout(x) or "NCHW")
    dx = dw = None
    if ctx.needs_input_grad[0]:
        dx = backward_data(dy, weight, list(x.shape), padding, stride, dilation)
    if ctx.needs_input_grad[1]:
        dw = backward_filter(x, dy, weight, padding, stride, dilation)
    return dx, dw


def _backward(ctx, dy):
    dx, dw = _gradients(ctx, dy, torch.ops.wino.conv2d_backward_data,
                        torch.ops.wino.conv2d_backward_filter)
    return dx, dw, None, None, None


torch.library.register_autograd("wino::conv2d", _backward, setup_context=_setup_context)


class _EagerConv2d(torch.autograd.Function):
    """wino::conv2d and its autograd without the dispatcher (see the module's docstring)."""

    @staticmethod
    def forward(ctx, x, weight, padding, stride, dilation):
        _setup_context(ctx, (x, weight, padding, stride, dilation), None)
        return _forward(x, weight, padding, stride, dilation)

    @staticmethod
    def backward(ctx, dy):
        dx, dw = _gradients(ctx, dy, _backward_data, _backward_filter)
        return dx, dw, None, None, None


def conv2d_autograd(x, weight, padding, stride, dilation):
    """y = conv(x, weight) with autograd: the custom operator wino::conv2d when a compiler,
    an exporter or a dispatch mode traces the call (they see one operator), else the same
    computation in eager mode without the dispatcher's cost per call."""
    eager = (not torch.compiler.is_compiling() and _get_current_dispatch_mode() is None and
             type(x) is torch.Tensor and type(weight) in (torch.Tensor, torch.nn.Parameter))
    if eager:
        return _EagerConv2d.apply(x, weight, padding, stride, dilation)
    return torch.ops.wino.conv2d(x, weight, padding, stride, dilation)


def decision(kind, x_size, w_size, dtype, device, layout, conf):
    """(what ran this call, why): "wino" (wino's kernels), "cudnn" (cuDNN's engine through
    wino's AUTO, with its reason) or "torch" (wino does not serve it, with wino's reason);
    ("not run yet", "") when no such call was made."""
    device = torch.device(device)
    for lay in (layout, "NHWC" if layout == "NCHW" else "NCHW"):  # a gradient of one channel
        key = _call_key(kind, x_size, w_size, dtype, device, lay, conf)  # can be either
        if key in _decisions:
            return _decisions[key]
    return "not run yet", ""
