/* The FP32 direct path (im2col + GEMM) through the public API: random shapes large enough for
 * several column blocks per image, any stride, dilation and padding, both layouts, 1 and 2
 * threads, against the FP64 reference. Outputs are poisoned with NaN before each run. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign in conv_check.h */

#include "base/conv_desc.h"
#include "conv_check.h"

/* The gathers' run of taps inside the image (wino_taps_inside) against every tap tried, over
 * starts left of, inside and right of images of 1 to 9 columns. */
static int taps_inside_exact(void)
{
    for (int w = 1; w <= 9; w++)
        for (int taps = 1; taps <= 8; taps++)
            for (int dil = 1; dil <= 3; dil++)
                for (int w0 = -12; w0 <= 12; w0++) {
                    int first = -1, last = -1, j0, j1;
                    for (int j = 0; j < taps; j++)
                        if (w0 + j * dil >= 0 && w0 + j * dil < w) {
                            first = first < 0 ? j : first;
                            last = j;
                        }
                    wino_taps_inside(w0, taps, dil, w, &j0, &j1);
                    if (first < 0 ? j1 > j0 : j0 != first || j1 != last + 1) {
                        printf("taps inside: w0 %d, %d taps, dilation %d, width %d: [%d, %d)\n",
                               w0, taps, dil, w, j0, j1);
                        return 0;
                    }
                }
    return 1;
}

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
    if (wino_conv2d_output_size(&d, NULL, NULL))
        return 1; /* no output for this draw */
    struct wino_conv2d_options o = {.algo = WINO_ALGO_DIRECT};
    struct wino_context ctx = {.threads = 1 + case_id % 2};
    /* FP32 sums of C R S <= 833 products of numbers below 1 */
    const double err = conv_check(&d, &o, &ctx, rng, case_id % 3 != 0, NULL);
    if (err <= 1e-6)
        return 1;
    conv_check_report(case_id, "direct", &d, err);
    return 0;
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
    test_check(&c, taps_inside_exact(), "a filter row's taps inside the image, every case");
    return test_report(&c);
}
