/* The FP32 Winograd engine (generated transforms + GEMMs): every default tile, fused and
 * non-fused, NCHW and NHWC, 1 and 2 threads, random awkward shapes (partial edge tiles, one
 * channel, 1x1 images, padding larger than the filter) against the FP64 direct reference.
 * Outputs are poisoned with NaN before each run. The bound per tile is docs/cpu-winograd.md's. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <math.h>
#include <stdlib.h>

#include "ref/conv_ref.h"
#include "ref/error_metrics.h"
#include "test_util.h"
#include "wino.h"

/* Relative L1 bound for F(m x m, r x r) on inputs in (-1, 1), by alpha: 6x to 13x the largest
 * error measured over these tests with five seeds (docs/cpu-winograd.md). */
static double bound(int alpha)
{
    static const double by_alpha[11] = {0, 0, 0, 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4};
    return by_alpha[alpha];
}

static double worst[11];

/* One random convolution with F(m x m, r x r); returns 1 on pass. */
static int check(struct test_rng *rng, int m, int r, enum wino_variant variant, int threads,
                 int case_id)
{
    struct wino_conv2d_desc d;
    d.n = 1 + (int)(test_rng_next(rng) % 2);
    d.c = 1 + (int)(test_rng_next(rng) % 19);
    d.k = 1 + (int)(test_rng_next(rng) % 19);
    d.h = 1 + (int)(test_rng_next(rng) % 23);
    d.w = 1 + (int)(test_rng_next(rng) % 23);
    d.r = d.s = r;
    d.pad_h = (int)(test_rng_next(rng) % (unsigned)(r + 2));
    d.pad_w = (int)(test_rng_next(rng) % (unsigned)(r + 2));
    d.stride_h = d.stride_w = d.dilation_h = d.dilation_w = 1;
    d.layout = (test_rng_next(rng) & 1) ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
    d.dtype = WINO_DTYPE_F32;
    int p, q;
    if (wino_conv2d_output_size(&d, &p, &q))
        return 1; /* no output for this draw */
    const size_t xe = (size_t)d.n * d.c * d.h * d.w, we = (size_t)d.k * d.c * r * r,
                 ye = (size_t)d.n * d.k * p * q;
    float *x = malloc(xe * 4), *w = malloc(we * 4), *y = malloc(ye * 4);
    double *ref = malloc(ye * 8);
    for (size_t i = 0; i < xe; i++)
        x[i] = (float)test_rng_sym(rng);
    for (size_t i = 0; i < we; i++)
        w[i] = (float)test_rng_sym(rng);
    for (size_t i = 0; i < ye; i++)
        y[i] = NAN;
    wino_ref_conv2d_fwd(&d, x, w, ref);
    struct wino_conv2d_options o = {WINO_ALGO_WINOGRAD, m, NULL, variant};
    struct wino_context ctx = {threads};
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    void *ws = NULL;
    enum wino_variant used = WINO_VARIANT_AUTO;
    int ok = !wino_conv2d_create(&d, w, &ctx, &o, &op) && !wino_conv2d_workspace_size(op, &bytes) &&
             !posix_memalign(&ws, 64, bytes ? bytes : 64) &&
             !wino_conv2d_run(op, x, y, ws, bytes) && !wino_conv2d_variant(op, &used) &&
             used == variant;
    const double err = ok ? wino_rel_l1_f32(y, ref, ye) : NAN;
    const int alpha = m + r - 1;
    if (err > worst[alpha])
        worst[alpha] = err;
    if (!(err <= bound(alpha))) {
        printf("  case %d F(%dx%d,%dx%d) %s %s %d threads: %dx%dx%dx%d k%d pad %d,%d: err %.3e "
               "(%s)\n", case_id, m, m, r, r, variant == WINO_VARIANT_FUSED ? "fused" : "non-fused",
               d.layout ? "NHWC" : "NCHW", threads, d.n, d.c, d.h, d.w, d.k, d.pad_h, d.pad_w, err,
               wino_last_error());
        ok = 0;
    }
    free(ws);
    wino_conv2d_destroy(op);
    free(x), free(w), free(y), free(ref);
    return ok;
}

int main(void)
{
    uint64_t seed = test_seed();
    struct test_rng rng = {seed};
    struct test_counts c = {0, 0};
    for (int r = 2; r <= 7; r++)
        for (int m = 2; m <= 8 && m + r - 1 <= 10; m++) {
            int ok = 1;
            for (int i = 0; i < 6; i++)
                ok &= check(&rng, m, r, i & 1 ? WINO_VARIANT_FUSED : WINO_VARIANT_NON_FUSED,
                            1 + (i >> 1) % 2, i);
            char what[64];
            snprintf(what, sizeof what, "F(%dx%d, %dx%d) fused and non-fused vs FP64", m, m, r, r);
            test_check(&c, ok, what);
        }
    printf("largest relative L1 error by alpha:");
    for (int a = 3; a <= 10; a++)
        printf(" %d:%.2e", a, worst[a]);
    printf("\n");
    return test_report(&c);
}
