"""wino.tune and the tuning cache from Python (CPU): the choice is recorded, AUTO follows it,
and for INT8 int8_auto_choice and Int8Conv2d agree with it."""
import numpy as np
import pytest

import wino
from wino import ops


def test_fp32_tune_is_followed(tmp_path):
    cache = tmp_path / "tune.txt"
    x_shape, w_shape = (1, 8, 10, 10), (8, 8, 3, 3)
    choice = wino.tune(x_shape, w_shape, padding=1, cache=cache, threads=1, reps=2)
    assert choice["algo"] in ("direct", "winograd") and choice["ms"] > 0
    assert cache.exists()
    desc = ops.make_desc(x_shape, w_shape, padding=1)
    w = np.zeros(w_shape, dtype=np.float32)
    op = ops.Operator("forward", desc, w.ctypes.data,
                      ops.make_context(threads=1, tuning_cache=cache))
    assert op.algo == (choice["algo"], choice["tile_m"])
    assert choice["algo"] == "direct" or op.variant == choice["variant"]


@pytest.mark.parametrize("x_dtype", ["u8", "s8"])
def test_int8_tune_auto_choice_and_operator_agree(tmp_path, x_dtype):
    cache = tmp_path / "tune.txt"
    n, c, h, w, k = 1, 8, 10, 10, 8
    # the default thread count, the one Int8Conv2d's context takes and the cache is keyed by
    choice = wino.tune((n, h, w, c), (k, 3, 3, c), padding=1, layout="NHWC", dtype=x_dtype,
                       cache=cache, reps=2)
    expected = (choice["algo"], choice["tile_m"])
    assert wino.int8_auto_choice((n, c, h, w), (k, c, 3, 3), padding=1, x_dtype=x_dtype,
                                 tuning_cache=cache) == expected
    rng = np.random.default_rng(1)
    weight = rng.uniform(-1, 1, (k, c, 3, 3)).astype(np.float32)
    params = wino.Int8Params(x_scale=0.02, alpha_ta=4.0, alpha_tw=0.5, y_scale=0.05)
    conv = wino.Int8Conv2d(weight, params, padding=1, x_dtype=x_dtype, tuning_cache=cache)
    x = rng.integers(0 if x_dtype == "u8" else -128, 128, (n, c, h, w)).astype(
        np.uint8 if x_dtype == "u8" else np.int8)
    y = conv(x)
    assert y.shape == (n, k, h, w)
    assert conv._op.algo == expected
    # the same bytes as the operator created with that algorithm and tile explicitly
    explicit = wino.Int8Conv2d(weight, params, padding=1, x_dtype=x_dtype, algo=expected[0],
                               tile_m=expected[1] or 4)
    assert np.array_equal(explicit(x), y)


def test_int8_auto_choice_without_cache_is_the_shape_rule():
    assert wino.int8_auto_choice((1, 8, 10, 10), (8, 8, 3, 3)) == ("winograd", 4)
    assert wino.int8_auto_choice((1, 8, 10, 10), (8, 8, 3, 3), stride=2) == ("direct", 0)


def test_tune_refuses_int8_nchw(tmp_path):
    with pytest.raises(wino.WinoError):
        wino.tune((1, 8, 10, 10), (8, 8, 3, 3), padding=1, dtype="u8", cache=tmp_path / "t")
