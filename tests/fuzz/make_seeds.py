#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets (tests/fuzz/corpus/<target>/) in the input formats
their files describe: ordinary cases, edge values, and the bad inputs of issue 11.
Usage: python3 tests/fuzz/make_seeds.py (from the repository root)."""
import math
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    os.makedirs(os.path.join(ROOT, target), exist_ok=True)
    with open(os.path.join(ROOT, target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- fuzz_tile: "<m><r><flags><mode>points", m, r, flags as characters counted from '0' ----

def tile(m, r, points=None, flags=0):
    head = chr(ord("0") + m) + chr(ord("0") + r) + chr(ord("0") + flags)
    return head + ("d" if points is None else "=" + points)


TILE_SEEDS = {
    "f4x3_default": tile(4, 3),
    "f2x3_integer_bt_at": tile(2, 3, flags=3),
    "f6x3_integer_bt": tile(6, 3, flags=1),
    "f14x3_default": tile(14, 3),
    "f16x1_default": tile(16, 1),
    "f4x3_classic": tile(4, 3, "0,1,-1,2,-2"),
    "f4x3_fractions": tile(4, 3, "0,1,-1,1/2,-2"),
    "f2x3_spaces_signs": tile(2, 3, " +0 , 1,-1 "),
    "f2x3_repeated": tile(2, 3, "0,1,1"),
    "f2x3_zero_denominator": tile(2, 3, "0,1,1/0"),
    "f2x3_too_few": tile(2, 3, "0,1"),
    "f2x3_too_many": tile(2, 3, "0,1,-1,2"),
    "f2x3_infinity": tile(2, 3, "0,1,inf"),
    "f2x3_long_digits": tile(2, 3, "0,1," + "9" * 140),
    "unknown_flag": tile(4, 3, flags=4),
    "m0": tile(0, 3),
    "alpha17": tile(15, 3),
    # issue 11 #1: constants that overflow float crash emit (wino gen ... --emit c)
    "issue11_gen_1e40": tile(2, 3, "0,1,1" + "0" * 40),
    "issue11_gen_1_over_1e50": tile(2, 3, "0,1,1/1" + "0" * 50),
    "issue11_gen_2d_product": tile(1, 3, "1,1000000000000000000000096"),
    # issue 11 #2: ill-conditioned and out-of-range points
    "issue11_points_1e6": tile(3, 3, "0,1,-1,1000000"),
    "issue11_points_1e20": tile(3, 3, "0,1,-1,1" + "0" * 20),
    "issue11_points_1_over_1e40": tile(3, 3, "0,1,-1,1/1" + "0" * 40),
}

# ---- fuzz_conv2d: one byte per field, see decode() in fuzz_conv2d.c ----

INT_EDGES = [16, 17, 31, 32, 33, 63, 64, 100, 127, 128, 255, 1000, 4096, 46340, 46341, 65535,
             65536, 1 << 20, 1 << 24, 1 << 30, (2**31 - 1) // 2, 2**31 - 2, 2**31 - 1, -2**31,
             -2**31 + 1, -2, -100, -65536, 2, 3, 5, 7]
FLOAT_EDGES = [0.0, -0.0, 1e-45, 1.1754943508222875e-38, 1e-30, 3.4028234663852886e38, 1e30, -1.0,
               -1e-3, 1.0, 127.0, 1e10, math.inf, -math.inf, math.nan, 0.5]
THREADS = [0, 1, 2, 3, 4, 8, 64, 1024, 1025, 100000, -1, 2**31 - 1, -2**31]
POINTS = ["0,1,-1", "0,1,-1,2,-2", "0,1,-1,1/2,-2", "0,1,-1,1000000",
          "0,1,-1,100000000000000000000", "0,1,-1,1/1" + "0" * 40, "0,1,-1,2,-2,1/2,-1/2",
          "0,-1,1,1/2,-3,-1/2,3,1/3,-1/3,2,-2,3/2,-3/2,1/4,-4"]


def enc_int(v):
    if -1 <= v <= 15:
        return v + 1
    return 0xE0 + INT_EDGES.index(v)


def enc_enum(v, count):
    return v if 0 <= v < count else count if v == -1 else count + 1


def enc_float(v):
    """The byte of an edge value, else the byte of the nearest ordinary value."""
    for i, e in enumerate(FLOAT_EDGES):
        if (e == v and math.copysign(1, e) == math.copysign(1, v)) or (math.isnan(e) and
                                                                         math.isnan(v)):
            return 0xF0 + i
    return min(range(0xF0), key=lambda b: abs(math.ldexp(1 + (b & 15) / 16, (b >> 4) - 10) - v))


def conv(n=1, c=8, h=12, w=12, k=8, r=3, s=3, pad=1, stride=1, dilation=1, layout=0, dtype=0,
         algo=0, tile_m=0, variant=0, points=None, relu=0, bias=False, tw_k=False, tuning=False,
         threads=0, backend=0, device=0, use_ctx=True, use_options=True, kind=0,
         accumulate=False, int8=False, calibrate=False, x_scale=0.01, alpha_ta=3.0, alpha_tw=0.5,
         w_scale=0.0, y_scale=0.05, y_dtype=2, clip_c=0.0, seed=12345):
    mode = int8 | calibrate << 1 | (not use_ctx) << 2 | (not use_options) << 3 | kind << 4
    b = [mode] + [enc_int(v) for v in (n, c, h, w, k, r, s, pad, pad, stride, stride, dilation,
                                         dilation)]
    b += [enc_enum(layout, 2), enc_enum(dtype, 4), enc_enum(algo, 3), enc_int(tile_m),
          enc_enum(variant, 4)]
    tail = b""
    if points is None:
        b.append(0)
    elif points in POINTS:
        b.append(4 + POINTS.index(points))
    else:
        b += [1, len(points)]
        tail = points.encode()
    flags = relu | tuning << 3 | tw_k << 4 | bias << 5 | accumulate << 6
    head = bytes(b) + tail
    rest = [flags, THREADS.index(threads), enc_enum(backend, 2), device + 1]
    rest += [enc_float(x_scale), enc_float(alpha_ta), enc_float(alpha_tw), enc_float(w_scale),
             enc_float(y_scale), enc_enum(y_dtype, 4), enc_float(clip_c), enc_float(0.25)]
    return head + bytes(rest) + struct.pack(">I", seed)


INT8 = dict(layout=1, dtype=2, int8=True)
CONV_SEEDS = {
    "auto_3x3": conv(),
    "auto_no_ctx_no_options": conv(use_ctx=False, use_options=False),
    "winograd_f4_nhwc_bias_relu": conv(algo=2, tile_m=4, layout=1, bias=True, relu=1),
    "winograd_f2_fused": conv(algo=2, tile_m=2, variant=2),
    "winograd_f6_non_fused": conv(algo=2, tile_m=6, variant=1, threads=2),
    "winograd_5x5_scalar": conv(r=5, s=5, pad=2, algo=2, tile_m=3),
    "winograd_f14_3x3": conv(h=14, w=14, algo=2, tile_m=14),
    "winograd_f16_1x1": conv(r=1, s=1, pad=0, algo=2, tile_m=16),
    "winograd_fused_output_cpu": conv(algo=2, variant=3),
    "winograd_stride2_refused": conv(algo=2, stride=2),
    "direct_stride2_dilation2": conv(algo=1, stride=2, dilation=2, layout=1, bias=True),
    "direct_1x1_image": conv(h=1, w=1, r=1, s=1, pad=0, algo=1),
    "direct_pad_larger_than_image": conv(h=2, w=2, pad=7, algo=1),
    "points_classic": conv(algo=2, tile_m=2, points="0,1,-1"),
    "points_from_input": conv(algo=2, tile_m=2, points="0,1,-1/2"),
    "f16_unsupported": conv(dtype=1),
    "cuda_backend": conv(backend=1),
    "huge_sizes": conv(n=2**31 - 1, c=65536, h=65536, w=65536, k=65536),
    "negative_pad": conv(pad=-2),
    "no_output": conv(h=2, w=2, r=7, s=7, pad=0),
    "tuning_cache_missing": conv(tuning=True),
    # issue 11 #2: user points giving wrong output, NaN or inf with SUCCESS
    "issue11_points_1e6_tile3": conv(algo=2, tile_m=3, points="0,1,-1,1000000"),
    "issue11_points_1e20_tile3": conv(algo=2, tile_m=3, points="0,1,-1,100000000000000000000"),
    "issue11_points_1_over_1e40_tile3": conv(algo=2, tile_m=3, points=POINTS[5]),
    # issue 11 #5: threads = 100000 passed create, run exited through the OpenMP runtime
    "issue11_threads_100000": conv(threads=100000),
    "threads_1025": conv(threads=1025),
    "threads_negative": conv(threads=-1),
    "backward_data_auto": conv(kind=1),
    "backward_data_winograd_nhwc": conv(kind=1, algo=2, tile_m=4, layout=1),
    "backward_data_direct_stride2": conv(kind=1, algo=1, stride=2, dilation=2, pad=3),
    "backward_data_pad_beyond_filter": conv(kind=1, algo=2, pad=3),
    "backward_filter_auto": conv(kind=2),
    "backward_filter_accumulate": conv(kind=2, accumulate=True, layout=1),
    "backward_filter_wide_row": conv(kind=2, h=4, w=15, r=1, s=13, pad=0),
    "backward_filter_direct_dilation": conv(kind=2, algo=1, dilation=2),
    "backward_filter_tile_refused": conv(kind=2, algo=2, tile_m=4),
    "forward_accumulate_refused": conv(accumulate=True),
    "int8_s8_f4": conv(**INT8, relu=0),
    "int8_u8_relu_f2": conv(layout=1, dtype=3, int8=True, tile_m=2, relu=1, y_dtype=3, bias=True),
    "int8_f6_per_channel_clip": conv(**INT8, tile_m=6, tw_k=True, clip_c=2.0),
    "int8_int8_weights": conv(**INT8, w_scale=0.0025),
    "int8_calibrate": conv(**INT8, calibrate=True, x_scale=0.0),
    "int8_calibrate_relu": conv(**INT8, calibrate=True, relu=1, bias=True, seed=7),
    "int8_nan_scale": conv(**INT8, x_scale=math.nan),
    "int8_inf_clip": conv(**INT8, alpha_ta=math.inf),
    "int8_nchw_refused": conv(layout=0, dtype=2, int8=True),
}

# ---- fuzz_tuning_cache: the file itself ----

HEADER = "wino-tuning-cache 1\n"
# The layer of fuzz_tuning_cache.c: dtype 0, NCHW, 1x3x12x12 -> 4, 3x3, pad 1, stride 1,
# dilation 1, one thread; one line per ISA value so that one of them matches the machine.
LAYER = "1 0 0 1 3 12 12 4 3 3 1 1 1 1 1 1"


def cache(choice):
    return HEADER + "".join("%d %s %s\n" % (isa, LAYER, choice) for isa in range(3))


CACHE_SEEDS = {
    "direct": cache("1 0 0 0.5"),
    "winograd_f2_non_fused": cache("2 2 1 0.25"),
    "winograd_f4_fused": cache("2 4 2 0.125"),
    "winograd_f6": cache("2 6 1 1.0"),
    "empty": HEADER,
    "no_header": "1 0 0 1\n",
    "other_version": "wino-tuning-cache 2\n",
    "no_final_newline": cache("2 4 1 0.1")[:-1],
    "other_layer": HEADER + "2 1 0 0 8 64 56 56 64 3 3 1 1 1 1 1 1 2 4 2 0.3\n",
    "negative_ms": cache("2 4 1 -1"),
    "nan_ms": cache("2 4 1 nan"),
    "tile_17": cache("2 17 1 0.1"),
    "variant_fused_output": cache("2 4 3 0.1"),
    "long_line": HEADER + "1 " * 400 + "\n",
    # issue 11 #3: a well-formed foreign entry selecting F(14x14, 3x3)
    "issue11_f14x14": cache("2 14 0 0.01"),
}


# ---- fuzz_cli: the arguments after "wino", separated by NUL bytes ----

CLI_SEEDS = {
    "gen_f4x3": ["gen", "--m", "4", "--r", "3"],
    "gen_points_emit_c": ["gen", "--m=2", "--r=3", "--points", "0,1,-1", "--emit", "c"],
    "gen_emit_cuda_json": ["gen", "--m", "2", "--r", "3", "--emit", "cuda", "--json"],
    "gen_integer": ["gen", "--m", "4", "--r", "3", "--integer-bt", "--integer-at"],
    "gen_op_table": ["gen", "--op-table"],
    "gen_mode_conflict": ["gen", "--m", "4", "--r", "3", "--op-table"],
    "gen_missing_value": ["gen", "--m"],
    "gen_huge_number": ["gen", "--m", "9" * 25, "--r", "3"],
    "gen_negative": ["gen", "--m", "-1", "--r", "3"],
    "gen_help": ["gen", "-h"],
    "gen_flag_with_value": ["gen", "--json=1"],
    # issue 11 #1: wino gen with constants that overflow float crashed (SIGFPE)
    "issue11_gen_1e40": ["gen", "--m", "2", "--r", "3", "--points", "0,1,1" + "0" * 40,
                         "--emit", "c"],
    "issue11_gen_1_over_1e50": ["gen", "--m", "2", "--r", "3", "--points", "0,1,1/1" + "0" * 50,
                                "--emit", "c"],
    "issue11_gen_2d_product": ["gen", "--m", "1", "--r", "3", "--points",
                               "1,1000000000000000000000096", "--emit", "c"],
    # issue 11 #2: points --eval printed nan and exited 0
    "issue11_points_eval_1e6": ["points", "--eval", "--alpha", "5", "--points", "0,1,-1,1000000",
                                "--trials", "8"],
    "issue11_points_eval_1e20": ["points", "--eval", "--alpha", "5", "--points",
                                 "0,1,-1,1" + "0" * 20, "--trials", "8"],
    "points_search": ["points", "--alpha", "6", "--trials", "100"],
    "points_mode_conflict": ["points", "--alpha", "5", "--eval", "--all"],
    "tune_check_not_a_cache": ["tune", "--check", "README.md"],
    "tune_check_missing": ["tune", "--check", "no-such-cache"],
    "tune_layer": ["tune", "--cache", "c.txt", "--layer", "1 8 12 12 8 3 3 1 1", "--reps", "1"],
    # issue 11 #8: option messages and conventions of every verb
    "issue11_calibrate_unknown": ["calibrate", "--foo"],
    "issue11_gen_op_table_with_tile": ["gen", "--m", "4", "--r", "3", "--op-table"],
    "issue11_info_layers": ["info", "--layers", "resnet18"],
    "calibrate_options": ["calibrate", "--set", "resnet18", "--tile", "4", "--method", "mse",
                          "--percentile", "99.9"],
    "calibrate_study": ["calibrate", "--study", "--tile", "2"],
    "bench_mode_conflict": ["bench", "--backend", "cuda", "--threads", "2"],
    "bench_impl": ["bench", "--set=resnet18", "--impl", "wino-auto", "--csv"],
    "bench_layer": ["bench", "--layer", "1 64 56 56 64 3 3 1 1", "--dtype", "int8"],
    "info_layer": ["info", "--layer", "conv 1 8 12 12 8 3 3 1 1"],
    "demo": ["demo", "--m", "4", "--reps", "1"],
    "version": ["--version"],
    "help": ["help"],
    "help_verb": ["help", "gen"],
    "help_unknown": ["help", "nope"],
    "unknown_verb": ["nope"],
    "empty": [""],
}


def main():
    for name, data in TILE_SEEDS.items():
        write("tile", name, data)
    for name, data in CONV_SEEDS.items():
        write("conv2d", name, data)
    for name, data in CACHE_SEEDS.items():
        write("tuning_cache", name, data)
    for name, args in CLI_SEEDS.items():
        write("cli", name, "\0".join(args))


if __name__ == "__main__":
    main()
