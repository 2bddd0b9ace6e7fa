/* The FP32 direct path (im2col + GEMM) through the public API: random shapes large enough for
 * several column blocks per image, any stride, dilation and padding, both layouts, 1 and 2
 * threads, against the FP64 reference. Outputs are poisoned with NaN before each run. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <math.h>
#include <stdlib.h>

#include "ref/conv_ref.h"
#include "ref/error_metrics.h"
#include "test_util.h"
#include "wino.h"

static int check(struct test_rng *rng, int case_id)
{
    struct wino_conv2d_desc d;
    d.n = 1 + (int)(test_rng_next(rng) % 3);
    d.c = 1 + (int)(test_rng_next(rng) % 17);
    d.k = 1 + (int)(test_rng_next(rng) % 37);
    d.h = 1 + (int)(test_rng_next(rng) % 41);
    d.w = 1 + (int)(test_rng_next(rng) % 41);
    d.r = 1 + (int)(test_rng_next(rng) % 7);
    d.s = 1 + (int)(test_rng_next(rng) % 7);
    d.pad_h = (int)(test_rng_next(rng) % 5);
    d.pad_w = (int)(test_rng_next(rng) % 5);
    d.stride_h = 1 + (int)(test_rng_next(rng) % 3);
    d.stride_w = 1 + (int)(test_rng_next(rng) % 3);
    d.dilation_h = 1 + (int)(test_rng_next(rng) % 2);
    d.dilation_w = 1 + (int)(test_rng_next(rng) % 3);
    d.layout = (test_rng_next(rng) & 1) ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
    d.dtype = WINO_DTYPE_F32;
    int p, q;
    if (wino_conv2d_output_size(&d, &p, &q))
        return 1; /* no output for this draw */
    const size_t xe = (size_t)d.n * d.c * d.h * d.w, we = (size_t)d.k * d.c * d.r * d.s,
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
    struct wino_conv2d_options o = {WINO_ALGO_DIRECT, 0, NULL, WINO_VARIANT_AUTO};
    struct wino_context ctx = {1 + case_id % 2};
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    void *ws = NULL;
    int ok = !wino_conv2d_create(&d, w, &ctx, &o, &op) && !wino_conv2d_workspace_size(op, &bytes) &&
             !posix_memalign(&ws, 64, bytes ? bytes : 64) && !wino_conv2d_run(op, x, y, ws, bytes);
    /* FP32 sums of C R S <= 833 products of numbers below 1 */
    const double err = ok ? wino_rel_l1_f32(y, ref, ye) : NAN;
    if (!(err <= 1e-6)) {
        printf("  case %d: %dx%dx%dx%d k%d %dx%d pad %d,%d stride %d,%d dil %d,%d %s: err %.3e "
               "(%s)\n", case_id, d.n, d.c, d.h, d.w, d.k, d.r, d.s, d.pad_h, d.pad_w, d.stride_h,
               d.stride_w, d.dilation_h, d.dilation_w, d.layout ? "NHWC" : "NCHW", err,
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
    int ok = 1;
    for (int i = 0; i < 120; i++)
        ok &= check(&rng, i);
    test_check(&c, ok, "im2col + GEMM direct convolution vs FP64, random shapes");
    return test_report(&c);
}
