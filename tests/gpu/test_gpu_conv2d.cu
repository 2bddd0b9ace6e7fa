/* FP32 and FP16 Winograd convolution on the CUDA backend against the FP64 direct reference:
 *  - every default tile F(m x m, r x r) (r 2..7, m 2..8, alpha <= 10) in FP32 on four random
 *    shapes: a 1x1 image with padding r - 1, one input channel, an output whose size is one more
 *    than a multiple of m, and a free draw (C and K among 1, 3, 17, 61 or random, batch 1..3,
 *    padding 0..r-1 per side); NCHW and NHWC, non-fused and fused (fused is refused with
 *    WINO_UNSUPPORTED except for F(2x2,3x3) and F(4x4,3x3): counted and printed, the shape then
 *    runs non-fused), bias and ReLU on some;
 *  - the fused kernels (and the fused-output ones in FP16) on 48 more free draws and on medium
 *    layers (several channel chunks, tile blocks and output-channel blocks);
 *  - FP16 on F(2..6, 3) and a few other tiles, TF32 GEMMs on a few shapes, the automatic choice
 *    (algo AUTO, tile 0) and medium layers where the GEMMs are larger;
 *  - the operator reports Winograd with the requested tile and variant; no output is NaN (y is
 *    poisoned before each of two runs); relative L1 error within the bound of its precision and
 *    alpha (FP32: docs/cpu-winograd.md's; FP16 and TF32: first bounds, the measured worst errors
 *    are printed at the end).
 * Usage: test_gpu_conv2d (WINO_TEST_SEED=N to replay; WINO_GPU_TEST_SMALL=1 without the medium
 * layers). */
#include "gpu_test_util.h"
#include "winograd_shapes.h"

enum precision { FP32 = 0, FP16 = 1, TF32 = 2 };
static const char *precision_name[3] = {"fp32", "fp16", "tf32"};

static struct test_counts tc;
static uint64_t base_seed;
static double worst[3][11]; /* largest error by precision and alpha */
static int measured[3][11];
static int fused_ran, fused_refused;

static double bound(enum precision p, int alpha)
{
    if (p == FP32)
        return gpu_f32_bound(alpha);
    if (p == TF32)
        return 5e-3;
    return gpu_f16_bound(alpha);
}

struct conv_case {
    struct wino_conv2d_desc d;
    enum wino_algo algo;
    int m; /* requested tile, 0: wino chooses */
    enum wino_variant variant;
    int with_bias, relu;
    enum precision prec;
};


/* Runs one case on stream (every fifth case on the default stream) and counts one check; a fused
 * case refused with WINO_UNSUPPORTED is counted as such and runs non-fused instead. */
static void run_case(const struct conv_case *cs, int id, struct test_rng *rng, cudaStream_t stream)
{
    const uint64_t seed = test_rng_next(rng);
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    o.algo = cs->algo;
    o.tile_m = cs->m;
    o.variant = cs->variant;
    o.relu = cs->relu;
    o.tf32 = cs->prec == TF32;
    const struct wino_context ctx = gpu_context(0, id % 5 == 4 ? NULL : stream);
    struct gpu_conv_result res;
    gpu_conv_check(&cs->d, &o, &ctx, cs->with_bias, seed, &res);
    const int has_fused = cs->d.r == 3 && (cs->m == 2 || cs->m == 4) &&
                          (cs->variant == WINO_VARIANT_FUSED || cs->prec == FP16);
    if ((cs->variant == WINO_VARIANT_FUSED || cs->variant == WINO_VARIANT_FUSED_OUTPUT) &&
        res.status == WINO_UNSUPPORTED && !has_fused && !strcmp(res.call, "wino_conv2d_create")) {
        struct conv_case non_fused = *cs;
        non_fused.variant = WINO_VARIANT_NON_FUSED;
        fused_refused++;
        run_case(&non_fused, id, rng, stream);
        return;
    }
    const int r = cs->d.r, m = cs->m ? cs->m : res.tile_m, alpha = m + r - 1;
    char tile[48];
    if (cs->m)
        snprintf(tile, sizeof tile, "F(%dx%d,%dx%d)", m, m, r, r);
    else
        snprintf(tile, sizeof tile, "tile chosen by wino (m %d, r %d)", m, r);
    const int tile_ok = cs->m ? res.tile_m == cs->m : m >= 2 && m <= 8 && alpha <= 10;
    const int variant_ok = cs->variant == WINO_VARIANT_AUTO
                               ? res.variant == WINO_VARIANT_FUSED ||
                                     res.variant == WINO_VARIANT_NON_FUSED ||
                                     res.variant == WINO_VARIANT_FUSED_OUTPUT
                               : res.variant == cs->variant;
    const int ran = res.status == WINO_SUCCESS;
    const double b = tile_ok ? bound(cs->prec, alpha) : 0.0;
    if (ran && res.variant == WINO_VARIANT_FUSED)
        fused_ran++;
    if (ran && tile_ok && !isnan(res.err)) {
        if (res.err > worst[cs->prec][alpha])
            worst[cs->prec][alpha] = res.err;
        measured[cs->prec][alpha]++;
    }
    const int ok = ran && res.algo == WINO_ALGO_WINOGRAD && tile_ok && variant_ok && res.err <= b;
    char shape[160], what[400];
    if (ran)
        snprintf(what, sizeof what, "ran");
    else
        snprintf(what, sizeof what, "%s from %s (%s)", gpu_status_name(res.status), res.call,
                 res.error);
    gpu_checkf(&tc, ok,
               "seed %llu case %d: %s %s %s, %s%s%s, %s stream, data seed %llu: "
               "%s; reported algo %d tile %d variant %s; relative L1 %.3e, bound %.1e",
               (unsigned long long)base_seed, id, tile, precision_name[cs->prec],
               gpu_variant_name(cs->variant), gpu_desc_string(&cs->d, shape, sizeof shape),
               cs->with_bias ? " bias" : "", cs->relu ? " relu" : "",
               ctx.stream ? "own" : "default", (unsigned long long)seed, what, (int)res.algo,
               res.tile_m, gpu_variant_name(res.variant), res.err, b);
}

/* count random cases of F(m x m, r x r) of kinds first_kind, first_kind + 1, ...: the variant
 * only, or (only == AUTO) non-fused and fused alternately, NCHW and NHWC in pairs (four cases
 * make all four pairings, a kind's layout changes with the tile), bias and ReLU drawn. */
static void random_cases(int m, int r, enum precision prec, int first_kind, int count,
                         enum wino_variant only, int *id, struct test_rng *rng,
                         cudaStream_t stream)
{
    for (int i = 0; i < count; i++) {
        struct conv_case cs;
        cs.d = random_desc(rng, m, r, first_kind + i,
                           prec == FP16 ? WINO_DTYPE_F16 : WINO_DTYPE_F32,
                           (i + m + r) % 4 >= 2 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW);
        cs.algo = WINO_ALGO_WINOGRAD;
        cs.m = m;
        cs.variant = only ? only : i & 1 ? WINO_VARIANT_FUSED : WINO_VARIANT_NON_FUSED;
        cs.with_bias = (int)(test_rng_next(rng) % 2);
        cs.relu = (int)(test_rng_next(rng) % 2);
        cs.prec = prec;
        run_case(&cs, (*id)++, rng, stream);
    }
}

/* One fixed layer. */
static void layer_case(int n, int c, int h, int w, int k, int r, int pad, enum wino_layout layout,
                       enum precision prec, enum wino_algo algo, int m, enum wino_variant variant,
                       int *id, struct test_rng *rng, cudaStream_t stream)
{
    struct conv_case cs;
    cs.d = wino_conv2d_desc_make(n, c, h, w, k, r, r, pad, pad);
    cs.d.layout = layout;
    cs.d.dtype = prec == FP16 ? WINO_DTYPE_F16 : WINO_DTYPE_F32;
    cs.algo = algo;
    cs.m = m;
    cs.variant = variant;
    cs.with_bias = 1;
    cs.relu = *id % 2;
    cs.prec = prec;
    run_case(&cs, (*id)++, rng, stream);
}

int main(void)
{
    base_seed = test_seed();
    struct test_rng rng = {base_seed};
    cudaStream_t stream = gpu_open_device(0);
    int id = 0;
    const enum wino_layout NCHW = WINO_LAYOUT_NCHW, NHWC = WINO_LAYOUT_NHWC;
    const enum wino_variant NF = WINO_VARIANT_NON_FUSED, F = WINO_VARIANT_FUSED,
                            FO = WINO_VARIANT_FUSED_OUTPUT, AUTO = WINO_VARIANT_AUTO;

    /* FP32: every default tile. */
    for (int r = 2; r <= 7; r++)
        for (int m = 2; m <= 8 && m + r - 1 <= 10; m++)
            random_cases(m, r, FP32, 0, 4, AUTO, &id, &rng, stream);

    /* FP16: F(2..6, 3) four times, a few other tiles twice. */
    for (int m = 2; m <= 6; m++)
        random_cases(m, 3, FP16, 0, 4, AUTO, &id, &rng, stream);
    static const int other_fp16[][2] = {{2, 2}, {4, 2}, {6, 2}, {2, 5}, {3, 5}, {4, 5}, {2, 7}};
    for (size_t i = 0; i < sizeof other_fp16 / sizeof other_fp16[0]; i++)
        random_cases(other_fp16[i][0], other_fp16[i][1], FP16, 2, 2, AUTO, &id, &rng, stream);

    /* The fused kernels: F(2x2,3x3) and F(4x4,3x3), 8 more free draws each in FP32 and FP16. */
    for (int m = 2; m <= 4; m += 2) {
        random_cases(m, 3, FP32, 3, 8, F, &id, &rng, stream);
        random_cases(m, 3, FP16, 3, 8, F, &id, &rng, stream);
        random_cases(m, 3, FP16, 3, 8, FO, &id, &rng, stream);
    }

    /* TF32 GEMMs. */
    layer_case(2, 64, 20, 20, 64, 3, 1, NCHW, TF32, WINO_ALGO_WINOGRAD, 2, NF, &id, &rng, stream);
    layer_case(1, 96, 14, 14, 80, 3, 1, NHWC, TF32, WINO_ALGO_WINOGRAD, 4, NF, &id, &rng, stream);
    layer_case(1, 61, 17, 13, 33, 3, 1, NCHW, TF32, WINO_ALGO_WINOGRAD, 4, F, &id, &rng, stream);

    /* The automatic choice: Winograd with a generated tile and variant. */
    layer_case(1, 17, 23, 19, 29, 3, 1, NCHW, FP32, WINO_ALGO_WINOGRAD, 0, AUTO, &id, &rng, stream);
    layer_case(2, 32, 16, 16, 32, 3, 1, NHWC, FP32, WINO_ALGO_WINOGRAD, 0, AUTO, &id, &rng, stream);
    layer_case(1, 9, 12, 12, 5, 5, 2, NCHW, FP32, WINO_ALGO_WINOGRAD, 0, AUTO, &id, &rng, stream);
    layer_case(1, 33, 15, 15, 17, 3, 1, NHWC, FP16, WINO_ALGO_WINOGRAD, 0, AUTO, &id, &rng, stream);
    layer_case(1, 3, 10, 10, 7, 3, 0, NCHW, FP32, WINO_ALGO_WINOGRAD, 0, AUTO, &id, &rng, stream);

    /* Medium layers: larger GEMMs (left out with WINO_GPU_TEST_SMALL set: under
     * compute-sanitizer they take minutes). */
    if (!getenv("WINO_GPU_TEST_SMALL")) {
        layer_case(2, 64, 20, 20, 64, 3, 1, NCHW,
                   FP32, WINO_ALGO_WINOGRAD, 4, NF, &id, &rng, stream);
        layer_case(2, 64, 20, 20, 64, 3, 1, NHWC,
                   FP32, WINO_ALGO_WINOGRAD, 6, F, &id, &rng, stream);
        layer_case(1, 96, 14, 14, 80, 3, 1, NCHW,
                   FP32, WINO_ALGO_WINOGRAD, 2, F, &id, &rng, stream);
        layer_case(1, 48, 16, 16, 40, 5, 2, NHWC,
                   FP32, WINO_ALGO_WINOGRAD, 4, NF, &id, &rng, stream);
        layer_case(1, 128, 28, 28, 128, 3, 1, NHWC,
                   FP16, WINO_ALGO_WINOGRAD, 4, NF, &id, &rng, stream);
        layer_case(1, 128, 28, 28, 128, 3, 1, NCHW,
                   FP16, WINO_ALGO_WINOGRAD, 6, F, &id, &rng, stream);
        layer_case(1, 128, 28, 28, 128, 3, 1, NHWC,
                   FP16, WINO_ALGO_WINOGRAD, 4, F, &id, &rng, stream);
        layer_case(2, 160, 30, 26, 96, 3, 1, NCHW,
                   FP16, WINO_ALGO_WINOGRAD, 2, F, &id, &rng, stream);
        layer_case(1, 128, 28, 28, 128, 3, 1, NHWC,
                   FP16, WINO_ALGO_WINOGRAD, 4, FO, &id, &rng, stream);
        layer_case(2, 160, 30, 26, 96, 3, 1, NCHW,
                   FP16, WINO_ALGO_WINOGRAD, 2, FO, &id, &rng, stream);
        layer_case(1, 64, 20, 20, 64, 3, 1, NCHW,
                   FP32, WINO_ALGO_WINOGRAD, 4, FO, &id, &rng, stream);
    }
    layer_case(1, 128, 28, 28, 128, 3, 1, NCHW, FP32, WINO_ALGO_WINOGRAD, 4, F, &id, &rng, stream);
    layer_case(2, 100, 30, 26, 72, 3, 0, NHWC, FP32, WINO_ALGO_WINOGRAD, 2, F, &id, &rng, stream);
    layer_case(2, 64, 20, 20, 64, 3, 1, NCHW, FP16, WINO_ALGO_WINOGRAD, 2, NF, &id, &rng, stream);

    CUDA_CHECK(cudaStreamDestroy(stream));
    printf("fused variant: %d runs, %d refused with WINO_UNSUPPORTED\n", fused_ran, fused_refused);
    printf("largest relative L1 error by alpha (cases measured, bound):\n");
    printf("alpha  %-26s %-26s %-26s\n", precision_name[0], precision_name[1], precision_name[2]);
    for (int a = 3; a <= 10; a++) {
        printf("%5d ", a);
        for (int p = 0; p < 3; p++) {
            char cell[64] = "-";
            if (measured[p][a])
                snprintf(cell, sizeof cell, "%.2e (%d, %.0e)", worst[p][a], measured[p][a],
                         bound((enum precision)p, a));
            printf(" %-26s", cell);
        }
        printf("\n");
    }
    return gpu_report(&tc);
}
