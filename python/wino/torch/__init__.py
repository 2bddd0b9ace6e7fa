"""wino in PyTorch: custom operators (torch.ops.wino.conv2d and its two gradients, registered with
torch.library so that autograd, torch.compile and torch.export see them), the drop-in
wino.torch.Conv2d, convert(model), explain(module) and set_algo(name); Winograd-aware training
(WinogradQuantConv2d) and deployment through wino's INT8 engines (deploy)."""
from . import _ops
from ._ops import set_algo
from .modules import Conv2d, convert, explain, format_explanation

__all__ = ["Conv2d", "convert", "explain", "format_explanation", "set_algo"]
