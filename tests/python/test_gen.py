"""wino.gen: exact tiles, points and the search, through libwino_gen."""
import random
from fractions import Fraction

import numpy as np
import pytest

import wino


def correlate(d, g):
    return [sum(g[k] * d[i + k] for k in range(len(g))) for i in range(len(d) - len(g) + 1)]


def apply(t, d, g):
    """y = A^T [(G g) .* (B^T d)] in exact rationals."""
    gg = [sum(row[k] * g[k] for k in range(t.r)) for row in t.G]
    dd = [sum(row[k] * d[k] for k in range(t.alpha)) for row in t.BT]
    return [sum(row[j] * gg[j] * dd[j] for j in range(t.alpha)) for row in t.AT]


@pytest.mark.parametrize("m,r", [(2, 3), (4, 3), (6, 3), (3, 5), (1, 7), (9, 8)])
def test_tile_is_exactly_the_correlation(m, r):
    t = wino.gen.tile(m, r)
    assert (t.m, t.r, t.alpha) == (m, r, m + r - 1)
    assert len(t.points) == t.alpha - 1
    assert t.points == wino.gen.recorded_points(t.alpha)
    rng = random.Random(m * 100 + r)
    for _ in range(5):
        d = [Fraction(rng.randint(-50, 50), rng.randint(1, 9)) for _ in range(t.alpha)]
        g = [Fraction(rng.randint(-50, 50), rng.randint(1, 9)) for _ in range(r)]
        assert apply(t, d, g) == correlate(d, g)
    for exact, rounded in ((t.AT, t.at), (t.G, t.g), (t.BT, t.bt)):
        assert rounded.dtype == np.float64
        nearest = np.array([[float(v) for v in row] for row in exact])
        assert np.all(np.abs(rounded - nearest) <= np.spacing(np.abs(nearest)))  # toward zero
        assert np.all(np.abs(rounded) <= np.abs(nearest))


def test_given_points_and_integer_flags():
    t = wino.gen.tile(4, 3, [0, 1, -1, 2, -2])
    assert t.points == [0, 1, -1, 2, -2]
    assert wino.gen.tile(4, 3, "0,1,-1,2,-2").BT == t.BT
    i = wino.gen.tile(6, 3, "0,1,-1,2,-2,1/2,-1/2", integer_bt=True, integer_at=True)
    assert all(v.denominator == 1 for row in i.BT + i.AT for v in row)
    d = [Fraction(k * k - 3) for k in range(i.alpha)]
    g = [Fraction(1, 3), Fraction(-2), Fraction(5, 7)]
    assert apply(i, d, g) == correlate(d, g)


def test_emitted_code():
    t = wino.gen.tile(2, 3)
    assert "float" in t.emit("c") and "__device__" in t.emit("cuda")


def test_search_is_deterministic_and_measured():
    points, median = wino.gen.search_points(5, trials=300, threads=1, seed=3)
    assert len(points) == 4 and points[:3] == [0, 1, -1]
    assert median > 0
    assert wino.gen.points_error(5, points, trials=300, seed=3) == median
    assert wino.gen.search_points(5, trials=300, threads=2, seed=3) == (points, median)


def test_bad_arguments_raise_with_the_reason():
    with pytest.raises(wino.WinoError, match="alpha|m"):
        wino.gen.tile(0, 3)
    with pytest.raises(wino.WinoError, match="point"):
        wino.gen.tile(4, 3, [0, 1, -1])  # 3 points where 5 are needed
    with pytest.raises(wino.WinoError):
        wino.gen.tile(2, 3, [0, 1, 1])  # not distinct
    with pytest.raises(wino.WinoError):
        wino.gen.search_points(3)
    with pytest.raises(wino.WinoError):
        wino.gen.recorded_points(17)
