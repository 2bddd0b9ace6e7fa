/* The FP32 Winograd engine (generated transforms + GEMMs): every default tile, fused and
 * non-fused, NCHW and NHWC, 1 and 2 threads, random awkward shapes (partial edge tiles, one
 * channel, 1x1 images, padding larger than the filter) against the FP64 direct reference, and
 * outputs large enough to be written by non-temporal stores. Outputs are poisoned with NaN
 * before each run. The bound per tile is docs/cpu-winograd.md's. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign in conv_check.h */

#include "conv_check.h"
#include "cpu/gemm_f32.h"

/* Relative L1 bound for F(m x m, r x r) on inputs in (-1, 1), by alpha: 6x to 13x the largest
 * error measured over these tests with five seeds (docs/cpu-winograd.md). */
static double bound(int alpha)
{
    static const double by_alpha[11] = {0, 0, 0, 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4};
    return by_alpha[alpha];
}

static double worst[11];

/* One random convolution with F(m x m, r x r), C and K in min_ch..max_ch, H and W in
 * 1..max_hw; returns 1 on pass. */
static int check(struct test_rng *rng, int m, int r, enum wino_variant variant, int threads,
                 int min_ch, int max_ch, int max_hw, int case_id)
{
    struct wino_conv2d_desc d;
    d.n = 1 + (int)(test_rng_next(rng) % 2);
    d.c = min_ch + (int)(test_rng_next(rng) % (unsigned)(max_ch - min_ch + 1));
    d.k = min_ch + (int)(test_rng_next(rng) % (unsigned)(max_ch - min_ch + 1));
    d.h = 1 + (int)(test_rng_next(rng) % (unsigned)max_hw);
    d.w = 1 + (int)(test_rng_next(rng) % (unsigned)max_hw);
    d.r = d.s = r;
    d.pad_h = (int)(test_rng_next(rng) % (unsigned)(r + 2));
    d.pad_w = (int)(test_rng_next(rng) % (unsigned)(r + 2));
    d.stride_h = d.stride_w = d.dilation_h = d.dilation_w = 1;
    d.layout = (test_rng_next(rng) & 1) ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
    d.dtype = WINO_DTYPE_F32;
    if (wino_conv2d_output_size(&d, NULL, NULL))
        return 1; /* no output for this draw */
    struct wino_conv2d_options o = {.algo = WINO_ALGO_WINOGRAD, .tile_m = m, .variant = variant};
    struct wino_context ctx = {.threads = threads};
    enum wino_variant used = WINO_VARIANT_AUTO;
    double err = conv_check(&d, &o, &ctx, rng, case_id % 3 != 1, &used);
    if (used != variant)
        err = NAN;
    const int alpha = m + r - 1;
    if (err > worst[alpha])
        worst[alpha] = err;
    if (err <= bound(alpha))
        return 1;
    char what[64];
    snprintf(what, sizeof what, "F(%dx%d,%dx%d) %s, %d threads", m, m, r, r,
             variant == WINO_VARIANT_FUSED ? "fused" : "non-fused", threads);
    conv_check_report(case_id, what, &d, err);
    return 0;
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
                            1 + (i >> 1) % 2, 1, 19, 23, i);
            char what[64];
            snprintf(what, sizeof what, "F(%dx%d, %dx%d) fused and non-fused vs FP64", m, m, r, r);
            test_check(&c, ok, what);
        }
    /* More channels and tiles: GEMMs whose A block (tiles x C) exceeds 32 KiB, so the row
     * micro-panels run outermost, and every split of the rows into micro-panels; then C and K
     * of 256 or more, the GEMMs that run on AMX-BF16 tiles where the machine has them
     * (wino_f32_packed_gemm_isa_for), with partial row and column blocks. */
    static const struct {
        int largest_m, cases, min_ch, max_ch, max_hw;
    } wide[] = {{4, 6, 1, 80, 32}, {6, 4, 256, 300, 11}};
    printf("packed GEMM for C, K >= 256: %s\n",
           wino_isa_name(wino_f32_packed_gemm_isa_for(256, 256)));
    for (size_t w = 0; w < sizeof wide / sizeof wide[0]; w++)
        for (int m = 2; m <= wide[w].largest_m; m += 2) {
            int ok = 1;
            for (int i = 0; i < wide[w].cases; i++)
                ok &= check(&rng, m, 3, i & 1 ? WINO_VARIANT_FUSED : WINO_VARIANT_NON_FUSED,
                            1 + (i >> 1) % 2, wide[w].min_ch, wide[w].max_ch, wide[w].max_hw, i);
            char what[80];
            snprintf(what, sizeof what, "F(%dx%d, 3x3), C and K of %d-%d, vs FP64", m, m,
                     wide[w].min_ch, wide[w].max_ch);
            test_check(&c, ok, what);
        }
    /* Outputs of 16 MiB or more, which the engine writes by non-temporal stores (NHWC with K a
     * multiple of 4, or in the transpose of an NCHW y) or, NHWC with K = 258, as before; bias
     * and ReLU in all. */
    for (int k = 256; k <= 258; k += 2) {
        int ok = 1;
        for (int i = 0; i < 4; i++) {
            const int fused = i & 1;
            const struct wino_conv2d_desc d = {1, 3, 128, 128, k, 3, 3, 1, 1, 1, 1, 1, 1,
                                               i < 2 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW,
                                               WINO_DTYPE_F32};
            struct wino_conv2d_options o = {.algo = WINO_ALGO_WINOGRAD, .tile_m = 4,
                                            .variant = fused ? WINO_VARIANT_FUSED
                                                             : WINO_VARIANT_NON_FUSED};
            struct wino_context ctx = {.threads = 2};
            enum wino_variant used = WINO_VARIANT_AUTO;
            const double err = conv_check(&d, &o, &ctx, &rng, 1, &used);
            if (!(err <= bound(6) && used == o.variant)) {
                conv_check_report(i, "F(4x4, 3x3), a 16 MiB output", &d, err);
                ok = 0;
            }
        }
        char what[80];
        snprintf(what, sizeof what, "F(4x4, 3x3), K = %d, %.1f MiB of y, NHWC and NCHW", k,
                 128.0 * 128 * k * 4 / (1 << 20));
        test_check(&c, ok, what);
    }
    printf("largest relative L1 error by alpha:");
    for (int a = 3; a <= 10; a++)
        printf(" %d:%.2e", a, worst[a]);
    printf("\n");
    return test_report(&c);
}
