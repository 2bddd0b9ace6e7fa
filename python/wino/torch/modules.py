"""wino.torch.Conv2d, a drop-in for torch.nn.Conv2d; convert(model) and explain(module)."""
import torch

from . import _ops


def _static_refusal(m):
    """Why the module's configuration keeps it on torch whatever the input, or None."""
    if m.groups != 1:
        return f"groups = {m.groups}: wino runs dense convolutions (groups 1)"
    if m.padding_mode != "zeros":
        return f"padding_mode {m.padding_mode!r}: wino pads with zeros"
    if _padding(m) is None:
        return f"padding {m.padding!r} with stride {m.stride}: 'same' needs stride 1 and odd " \
               f"dilated filter sizes"
    return None


def _padding(m):
    """The module's padding as two numbers, or None when 'same' does not make them."""
    if m.padding == "valid":
        return [0, 0]
    if m.padding == "same":
        pads = []
        for k, d, s in zip(m.kernel_size, m.dilation, m.stride):
            extent = d * (k - 1)
            if s != 1 or extent % 2:
                return None
            pads.append(extent // 2)
        return pads
    return list(m.padding)


def _autocast(input, weight, bias):
    """The three tensors in torch.autocast's dtype where autocast is on for input's device (its
    rule for convolutions: they run in the lower precision, whatever the parameters' dtype);
    unchanged otherwise. The casts are autograd operations: FP32 parameters get FP32 gradients."""
    device = input.device.type
    if not torch.is_autocast_enabled(device):
        return input, weight, bias
    dtype = torch.get_autocast_dtype(device)
    return tuple(t if t is None or not t.is_floating_point() else t.to(dtype)
                 for t in (input, weight, bias))


class Conv2d(torch.nn.Conv2d):
    """torch.nn.Conv2d whose convolutions (forward, backward-data, backward-filter) run on
    wino's operators where wino serves them (on CUDA, AUTO may pick cuDNN's engine through
    them), and on torch's otherwise (explain() says which and why). Same constructor,
    parameters and state_dict as torch.nn.Conv2d; under torch.autocast it computes in
    autocast's dtype, as torch.nn.Conv2d does."""

    def _conv_forward(self, input, weight, bias):
        if _static_refusal(self) or input.dim() != 4:
            return super()._conv_forward(input, weight, bias)
        input, weight, bias = _autocast(input, weight, bias)
        self._last_input = (tuple(input.shape), input.dtype, str(input.device),
                            _ops._layout(input) or "NCHW")
        y = _ops.conv2d_autograd(input, weight, _padding(self), list(self.stride),
                                 list(self.dilation))
        return y if bias is None else y + bias.view(1, -1, 1, 1)


def convert(model):
    """Replaces every torch.nn.Conv2d of model (itself included) by a wino.torch.Conv2d that
    shares its parameters; returns the model (or the new module when model is a Conv2d)."""
    if type(model) is torch.nn.Conv2d:
        new = Conv2d(model.in_channels, model.out_channels, model.kernel_size, model.stride,
                     model.padding, model.dilation, model.groups, model.bias is not None,
                     model.padding_mode, device="meta")
        new.weight, new.bias = model.weight, model.bias
        new.train(model.training)
        return new
    for name, child in model.named_children():
        setattr(model, name, convert(child))
    return model


def explain(module):
    """What runs each convolution of module: a list of dicts, one per Conv2d (name, and per kind
    of convolution (what runs, why): 'wino' (wino's kernels), 'cudnn' (cuDNN's engine, chosen by
    wino's AUTO on CUDA: its reason says the times), 'torch' or 'not run yet'). Configuration
    reasons hold for every input; the others are those of the last input seen."""
    rows = []
    for name, m in module.named_modules():
        if not isinstance(m, torch.nn.Conv2d):
            continue
        row = {"name": name or type(module).__name__}
        why = None if isinstance(m, Conv2d) else "a torch.nn.Conv2d (wino.torch.convert swaps it)"
        why = why or _static_refusal(m)
        last = getattr(m, "_last_input", None)
        for kind in _ops._KINDS:
            if why:
                row[kind] = ("torch", why)
            elif last is None:
                row[kind] = ("not run yet", "")
            else:
                shape, dtype, device, layout = last
                conf = (_padding(m), list(m.stride), list(m.dilation))
                row[kind] = _ops.decision(kind, shape, m.weight.shape, dtype, device, layout,
                                          conf)
        rows.append(row)
    return rows


def format_explanation(rows):
    """explain()'s rows as text, one line per layer and kind."""
    lines = []
    for row in rows:
        for kind in _ops._KINDS:
            runs, why = row[kind]
            lines.append(f"{row['name']:<24} {kind:<16} {runs}" + (f": {why}" if why else ""))
    return "\n".join(lines)
