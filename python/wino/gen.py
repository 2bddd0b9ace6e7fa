"""The exact generator (libwino_gen): Toom-Cook tiles F(m, r) over exact rationals, their
interpolation points, and the point search.

    >>> t = wino.gen.tile(4, 3)            # F(4, 3) on the recorded most accurate points
    >>> t.BT[0]                            # exact: a list of fractions.Fraction
    >>> t.bt                               # the same, rounded: a float64 numpy array
"""
import ctypes
from fractions import Fraction

import numpy as np

from . import _lib

_MATRICES = (("AT", "at", _lib.MATRIX_AT), ("G", "g", _lib.MATRIX_G),
             ("BT", "bt", _lib.MATRIX_BT))


def _text(call, *args):
    """A string the C API hands out under its buffer rules (asks the size, then fills)."""
    needed = ctypes.c_size_t(0)
    call(*args, None, 0, ctypes.byref(needed))  # fails, but says how much it needs
    buf = ctypes.create_string_buffer(needed.value)
    _lib.check(call(*args, buf, needed.value, None))
    return buf.value.decode()


class Tile:
    """The 1D algorithm F(m, r): y = A^T [(G g) .* (B^T d)], alpha = m + r - 1.

    Attributes: m, r, alpha; points (the alpha - 1 finite points, Fractions; infinity is the
    last row); AT, G, BT (exact, lists of rows of Fractions); at, g, bt (float64 arrays, the
    exact values rounded toward zero as the C library rounds them: within one ulp)."""

    def __init__(self, m, r, points=None, integer_bt=False, integer_at=False):
        g = _lib.gen_lib()
        if isinstance(points, (list, tuple)):
            points = ",".join(str(Fraction(p)) for p in points)
        flags = (_lib.TILE_INTEGER_BT if integer_bt else 0) | \
                (_lib.TILE_INTEGER_AT if integer_at else 0)
        handle = ctypes.c_void_p()
        _lib.check(g.wino_tile_create(int(m), int(r), points.encode() if points else None,
                                      flags, ctypes.byref(handle)))
        try:
            self.m, self.r = int(m), int(r)
            self.alpha = g.wino_tile_alpha(handle)
            self.points = [Fraction(_text(g.wino_tile_point_string, handle, i))
                           for i in range(self.alpha - 1)]
            for exact, rounded, which in _MATRICES:
                rows, cols = ctypes.c_int(), ctypes.c_int()
                _lib.check(g.wino_tile_matrix_shape(handle, which, ctypes.byref(rows),
                                                    ctypes.byref(cols)))
                setattr(self, exact, [[Fraction(_text(g.wino_tile_entry_string, handle, which,
                                                      i, j))
                                       for j in range(cols.value)] for i in range(rows.value)])
                out = np.empty((rows.value, cols.value), dtype=np.float64)
                _lib.check(g.wino_tile_matrix_double(
                    handle, which, out.ctypes.data_as(ctypes.POINTER(ctypes.c_double))))
                setattr(self, rounded, out)
            self._source = {lang: _text(g.wino_tile_emit, handle, code)
                            for lang, code in (("c", 0), ("cuda", 1))}
        finally:
            g.wino_tile_destroy(handle)

    def emit(self, lang="c"):
        """The generated straight-line transforms of F(m x m, r x r), C99 or CUDA C."""
        return self._source[lang]

    def __repr__(self):
        pts = ",".join(str(p) for p in self.points)
        return f"Tile(F({self.m}, {self.r}), points=[{pts}])"


def tile(m, r, points=None, integer_bt=False, integer_at=False):
    """F(m, r) exactly. points: None for the recorded most accurate points of alpha = m + r - 1,
    or alpha - 1 distinct finite rationals (a list of numbers/Fractions, or "0,1,-1,1/2,-2")."""
    return Tile(m, r, points, integer_bt, integer_at)


def recorded_points(alpha):
    """The recorded most accurate points of tile size alpha (1..16), as Fractions."""
    text = _lib.gen_lib().wino_points_recorded(int(alpha))
    if text is None:
        raise _lib.WinoError(_lib.INVALID_ARGUMENT, f"alpha = {alpha} outside [1, 16]")
    return [Fraction(p) for p in text.decode().split(",") if p]


def search_points(alpha, trials=0, threads=0, seed=1):
    """Searches the most accurate points for tile size alpha (4..16), as `wino points` does.
    Returns (points as Fractions, median relative L1 error of F(alpha-2 x alpha-2, 3 x 3) in
    FP32). trials 0: 10,000; threads 0: 2. Seconds for small alpha, minutes from 10 on."""
    g = _lib.gen_lib()
    median = ctypes.c_double()
    buf = ctypes.create_string_buffer(256)
    _lib.check(g.wino_points_search(int(alpha), int(trials), int(threads), int(seed), buf,
                                    len(buf), None, ctypes.byref(median)))
    return [Fraction(p) for p in buf.value.decode().split(",")], median.value


def points_error(alpha, points, trials=0, seed=1):
    """The median relative L1 error of the given points, measured as the search measures."""
    if isinstance(points, (list, tuple)):
        points = ",".join(str(Fraction(p)) for p in points)
    median = ctypes.c_double()
    _lib.check(_lib.gen_lib().wino_points_error(int(alpha), points.encode(), int(trials),
                                                int(seed), ctypes.byref(median)))
    return median.value
