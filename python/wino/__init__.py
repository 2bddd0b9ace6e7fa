"""wino: Winograd convolution with exactly generated transforms, from Python.

Bindings of the C library (include/wino.h, include/wino_gen.h) through ctypes:

- wino.gen: exact Toom-Cook tiles F(m, r), recorded and searched interpolation points;
- wino.conv2d, wino.conv2d_backward_data, wino.conv2d_backward_filter: FP32 on NumPy arrays;
- wino.Operator: one operator on raw addresses (any array library, CPU or CUDA);
- wino.Int8Conv2d, wino.int8_calibrate, wino.int8_tile, wino.int8_auto_choice: the INT8
  Winograd pipeline;
- wino.tune: the measured per-layer choice (FP32 and INT8, CPU) into a tuning cache;
- wino.torch (imported on demand): torch custom operators, nn.Conv2d drop-in, Winograd-aware
  training and deployment.
"""
from . import gen
from ._lib import WinoError, WinoUnsupported, version
from .int8 import Int8Conv2d, Int8Params, int8_auto_choice, int8_calibrate, int8_tile
from .ops import (Operator, can_implement, conv2d, conv2d_backward_data,
                  conv2d_backward_filter, tune)

__version__ = version()  # the C library's, which the package is built from

__all__ = ["gen", "WinoError", "WinoUnsupported", "version", "Int8Conv2d", "Int8Params",
           "int8_auto_choice", "int8_calibrate", "int8_tile", "Operator", "can_implement",
           "conv2d", "conv2d_backward_data", "conv2d_backward_filter", "tune"]
