"""The C library, loaded with ctypes: its structures, enums and status checks.

Where the library is looked for, in order: the directory named by WINO_LIBRARY_DIR, the package's
own directory (where `pip install .` puts libwino and libwino_gen), then the dynamic linker's
search path. Nothing here computes a convolution: every function calls the C API of
include/wino.h and include/wino_gen.h.
"""
import ctypes
import ctypes.util
import os

SUCCESS, INVALID_ARGUMENT, UNSUPPORTED, OUT_OF_MEMORY, INSUFFICIENT_WORKSPACE, DEVICE_ERROR, \
    INTERNAL_ERROR = range(7)

DTYPE_F32, DTYPE_F16, DTYPE_S8, DTYPE_U8, DTYPE_BF16 = range(5)
LAYOUT_NCHW, LAYOUT_NHWC = range(2)
ALGO_AUTO, ALGO_DIRECT, ALGO_WINOGRAD, ALGO_VENDOR = range(4)
BACKEND_CPU, BACKEND_CUDA = range(2)
VARIANT_AUTO, VARIANT_NON_FUSED, VARIANT_FUSED, VARIANT_FUSED_OUTPUT, VARIANT_ROWS = range(5)
KIND_FORWARD, KIND_BACKWARD_DATA, KIND_BACKWARD_FILTER = range(3)
MATRIX_AT, MATRIX_G, MATRIX_BT = range(3)
TILE_INTEGER_BT, TILE_INTEGER_AT = 1, 2
CALIBRATE_PERCENTILE, CALIBRATE_MSE = range(2)

ALGO_NAMES = {ALGO_AUTO: "auto", ALGO_DIRECT: "direct", ALGO_WINOGRAD: "winograd",
              ALGO_VENDOR: "vendor"}
VARIANT_NAMES = {VARIANT_AUTO: "auto", VARIANT_NON_FUSED: "non-fused", VARIANT_FUSED: "fused",
                 VARIANT_FUSED_OUTPUT: "fused-output", VARIANT_ROWS: "rows"}


class WinoError(RuntimeError):
    """A wino call failed: status (an int of enum wino_status), its sentence, and wino's
    explanation of this failure."""

    def __init__(self, status, message):
        self.status = status
        self.message = message
        super().__init__(f"{status_string(status)}: {message}")


class WinoUnsupported(WinoError):
    """WINO_UNSUPPORTED: a valid request this build cannot serve (the caller may fall back)."""


class Desc(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int) for name in (
        "n", "c", "h", "w", "k", "r", "s", "pad_h", "pad_w", "stride_h", "stride_w",
        "dilation_h", "dilation_w", "layout", "dtype")]

    def key(self):
        return tuple(getattr(self, name) for name, _ in self._fields_)


class Context(ctypes.Structure):
    _fields_ = [("threads", ctypes.c_int), ("tuning_cache", ctypes.c_char_p),
                ("backend", ctypes.c_int), ("device", ctypes.c_int),
                ("stream", ctypes.c_void_p), ("cl_context", ctypes.c_void_p),
                ("cl_device", ctypes.c_void_p)]


class TileMatrices(ctypes.Structure):
    _fields_ = [("m", ctypes.c_int), ("r", ctypes.c_int),
                ("at", ctypes.POINTER(ctypes.c_double)), ("g", ctypes.POINTER(ctypes.c_double)),
                ("bt", ctypes.POINTER(ctypes.c_double))]


class Options(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_int), ("tile_m", ctypes.c_int), ("points", ctypes.c_char_p),
                ("variant", ctypes.c_int), ("bias", ctypes.POINTER(ctypes.c_float)),
                ("relu", ctypes.c_int), ("tf32", ctypes.c_int), ("accumulate", ctypes.c_int),
                ("matrices", ctypes.POINTER(TileMatrices))]


class WinrsInfo(ctypes.Structure):
    _fields_ = [("kernels", ctypes.c_int), ("n", ctypes.c_int * 2), ("r", ctypes.c_int * 2),
                ("alpha", ctypes.c_int * 2), ("units", ctypes.c_int * 2),
                ("segments", ctypes.c_int), ("segment_h", ctypes.c_int),
                ("segment_w", ctypes.c_int)]


class TuningChoice(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_int), ("tile_m", ctypes.c_int), ("variant", ctypes.c_int),
                ("ms", ctypes.c_double)]


class Int8ParamsC(ctypes.Structure):
    _fields_ = [("x_scale", ctypes.c_float), ("alpha_ta", ctypes.c_float),
                ("alpha_tw", ctypes.c_float), ("alpha_tw_k", ctypes.POINTER(ctypes.c_float)),
                ("w_scale", ctypes.c_float), ("y_scale", ctypes.c_float),
                ("y_dtype", ctypes.c_int), ("clip_c", ctypes.c_float)]


def _candidates(stem):
    names = [f"lib{stem}.so.0", f"lib{stem}.so"]
    dirs = [os.environ.get("WINO_LIBRARY_DIR"), os.path.dirname(os.path.abspath(__file__))]
    for d in dirs:
        if d:
            for name in names:
                yield os.path.join(d, name)
    found = ctypes.util.find_library(stem)
    if found:
        yield found
    yield from names


def _load(stem):
    errors = []
    for path in _candidates(stem):
        if os.path.sep in path and not os.path.exists(path):
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError(f"wino: lib{stem} not found (set WINO_LIBRARY_DIR to the directory "
                      f"holding it, or `pip install .` from wino's repository): "
                      + "; ".join(errors))


def _declare(lib, name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)


lib = _load("wino")
_P = ctypes.c_void_p
_PD, _PO, _PC = ctypes.POINTER(Desc), ctypes.POINTER(Options), ctypes.POINTER(Context)
_OP = ctypes.POINTER(ctypes.c_void_p)
for _name, _res, _args in [
    ("wino_status_string", ctypes.c_char_p, [ctypes.c_int]),
    ("wino_last_error", ctypes.c_char_p, []),
    ("wino_version", ctypes.c_char_p, []),
    ("wino_conv2d_output_size", ctypes.c_int,
     [_PD, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]),
    ("wino_conv2d_can_implement", ctypes.c_int, [_PD, _PO]),
    ("wino_conv2d_create", ctypes.c_int, [_PD, _P, _PC, _PO, _OP]),
    ("wino_conv2d_backward_data_can_implement", ctypes.c_int,
     [_PD, _PO, ctypes.POINTER(ctypes.c_int)]),
    ("wino_conv2d_backward_data_create", ctypes.c_int, [_PD, _P, _PC, _PO, _OP]),
    ("wino_conv2d_backward_filter_can_implement", ctypes.c_int,
     [_PD, _PO, ctypes.POINTER(ctypes.c_int)]),
    ("wino_conv2d_backward_filter_create", ctypes.c_int, [_PD, _PC, _PO, _OP]),
    ("wino_conv2d_create_int8", ctypes.c_int,
     [_PD, _P, ctypes.POINTER(Int8ParamsC), _PC, _PO, _OP]),
    ("wino_int8_calibrate", ctypes.c_int,
     [_PD, ctypes.c_int, _P, _P, _P, ctypes.c_int, ctypes.c_float, ctypes.c_int,
      ctypes.c_double, ctypes.POINTER(Int8ParamsC)]),
    ("wino_tune", ctypes.c_int, [_PD, _PC, ctypes.c_int, ctypes.POINTER(TuningChoice)]),
    ("wino_int8_auto_choice", ctypes.c_int,
     [_PD, _PC, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]),
    ("wino_int8_tile_matrices", ctypes.c_int,
     [ctypes.c_int, ctypes.POINTER(ctypes.c_double), ctypes.c_size_t,
      ctypes.POINTER(TileMatrices)]),
    ("wino_conv2d_workspace_size", ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_size_t)]),
    ("wino_conv2d_reshape", ctypes.c_int,
     [_P, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]),
    ("wino_conv2d_run_stream", ctypes.c_int, [_P, _P, _P, _P, ctypes.c_size_t, _P]),
    ("wino_conv2d_backward_filter_run_stream", ctypes.c_int,
     [_P, _P, _P, _P, _P, ctypes.c_size_t, _P]),
    ("wino_conv2d_set_weights", ctypes.c_int, [_P, _P, _P]),
    ("wino_conv2d_algo", ctypes.c_int,
     [_P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]),
    ("wino_conv2d_variant", ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_int)]),
    ("wino_conv2d_reason", ctypes.c_char_p, [_P]),
    ("wino_conv2d_backward_filter_info", ctypes.c_int, [_P, ctypes.POINTER(WinrsInfo)]),
    ("wino_conv2d_destroy", None, [_P]),
]:
    _declare(lib, _name, _res, *_args)


def status_string(status):
    return lib.wino_status_string(status).decode()


def check(status):
    """Raises the WinoError of a failed call (WinoUnsupported for WINO_UNSUPPORTED)."""
    if status != SUCCESS:
        message = lib.wino_last_error().decode()
        raise (WinoUnsupported if status == UNSUPPORTED else WinoError)(status, message)


def version():
    """The C library's version, "MAJOR.MINOR.PATCH"."""
    return lib.wino_version().decode()


_gen = None


def gen_lib():
    """libwino_gen, the exact generator, loaded on first use."""
    global _gen
    if _gen is None:
        g = _load("wino_gen")
        _C, _S = ctypes.c_char_p, ctypes.c_size_t
        _T = ctypes.POINTER(ctypes.c_void_p)
        for name, res, args in [
            ("wino_tile_create", ctypes.c_int, [ctypes.c_int, ctypes.c_int, _C, ctypes.c_uint, _T]),
            ("wino_tile_destroy", None, [_P]),
            ("wino_tile_alpha", ctypes.c_int, [_P]),
            ("wino_tile_point_string", ctypes.c_int,
             [_P, ctypes.c_int, _C, _S, ctypes.POINTER(_S)]),
            ("wino_tile_matrix_shape", ctypes.c_int,
             [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]),
            ("wino_tile_entry_string", ctypes.c_int,
             [_P, ctypes.c_int, ctypes.c_int, ctypes.c_int, _C, _S, ctypes.POINTER(_S)]),
            ("wino_tile_matrix_double", ctypes.c_int,
             [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]),
            ("wino_tile_emit", ctypes.c_int, [_P, ctypes.c_int, _C, _S, ctypes.POINTER(_S)]),
            ("wino_points_recorded", _C, [ctypes.c_int]),
            ("wino_points_search", ctypes.c_int,
             [ctypes.c_int, ctypes.c_long, ctypes.c_int, ctypes.c_ulonglong, _C, _S,
              ctypes.POINTER(_S), ctypes.POINTER(ctypes.c_double)]),
            ("wino_points_error", ctypes.c_int,
             [ctypes.c_int, _C, ctypes.c_long, ctypes.c_ulonglong,
              ctypes.POINTER(ctypes.c_double)]),
        ]:
            _declare(g, name, res, *args)
        _gen = g
    return _gen
