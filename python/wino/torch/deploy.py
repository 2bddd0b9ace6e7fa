"""Deployment of a Winograd-aware model: every WinogradQuantConv2d replaced by wino's INT8
engine (wino.Int8Conv2d, on the CPU or the CUDA device the layer is on), with the same
parameters, so the deployed model computes exactly what the emulated one computes in eval mode.
"""
import copy

import torch
from torch import nn

import wino

from .wat import WinogradQuantConv2d, quantize_input


class Int8WinogradConv2d(nn.Module):
    """A WinogradQuantConv2d frozen onto wino.Int8Conv2d: float input -> int8 / uint8 with the
    layer's x_scale -> wino's INT8 Winograd -> y_scale * y. Inference only."""

    def __init__(self, layer):
        super().__init__()
        params = layer.int8_params()
        device = layer.weight.device
        self.tile_m, self.relu = layer.tile_m, layer.relu
        self.register_buffer("x_scale", layer.x_scale.detach().clone())
        self.register_buffer("x_unsigned", layer.x_unsigned.detach().clone())
        self.register_buffer("y_scale", layer.y_scale().detach().clone())
        self._x_dtype = torch.uint8 if bool(layer.x_unsigned) else torch.int8
        bias = None if layer.bias is None else layer.bias.detach().float().cpu().numpy()
        self.op = wino.Int8Conv2d(layer.weight.detach().float().cpu().numpy(), params,
                                  tile_m=layer.tile_m, padding=layer.padding, bias=bias,
                                  relu=layer.relu,
                                  x_dtype="u8" if bool(layer.x_unsigned) else "s8",
                                  device="cpu" if device.type == "cpu" else
                                  f"cuda:{device.index or 0}")

    def forward(self, x):
        xq = quantize_input(x.float(), self.x_scale, self.x_unsigned).to(self._x_dtype)
        # NCHW-contiguous as the emulation's output (the CUDA engine's is channels_last), so
        # that the layers after it compute the same bits
        return self.op(xq).float().contiguous() * self.y_scale

    def extra_repr(self):
        return f"tile_m={self.tile_m}, relu={self.relu}, x_dtype={self._x_dtype}"


def _replace(module):
    for name, child in module.named_children():
        if isinstance(child, WinogradQuantConv2d):
            setattr(module, name, Int8WinogradConv2d(child))
        else:
            _replace(child)


@torch.no_grad()
def deploy(model, example_input):
    """A copy of model (left as it is) in eval mode where every WinogradQuantConv2d runs on
    wino's INT8 engine; every other layer is untouched. example_input (a batch on the model's
    device) is run once, so that each engine is created here and a layer the engines refuse
    (e.g. F(6,3) past the int32 bound) raises wino.WinoError now."""
    deployed = copy.deepcopy(model).eval()
    if isinstance(deployed, WinogradQuantConv2d):
        deployed = Int8WinogradConv2d(deployed)
    else:
        _replace(deployed)
    deployed(example_input)
    return deployed
