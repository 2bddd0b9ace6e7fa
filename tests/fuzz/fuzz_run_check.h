/* One run of a created FP32 operator checked against the FP64 reference, shared by the fuzz
 * targets that create operators. Needs _POSIX_C_SOURCE >= 200112L (posix_memalign). */
#ifndef WINO_TESTS_FUZZ_RUN_CHECK_H
#define WINO_TESTS_FUZZ_RUN_CHECK_H

#include <math.h>

#include "fuzz/fuzz_input.h"
#include "ref/conv_ref.h"
#include "ref/error_metrics.h"
#include "test_util.h"
#include "wino.h"

/* Workspaces above this are not allocated (the run is skipped). */
#define FUZZ_RUN_MAX_WORKSPACE (64L << 20)

static inline void *fuzz_alloc64(size_t bytes)
{
    void *p = NULL;
    return posix_memalign(&p, 64, bytes ? bytes : 1) ? NULL : p;
}

/* Loose relative L1 bound of FP32 wino against the FP64 reference: the tested bounds of
 * docs/cpu-winograd.md grow about 3x per alpha from 1e-6 at alpha 3; this allows 10x more, at
 * most 5%. Caller-given points (held to the library's own error bound) get 100%: anything above
 * is a wrong result. */
static inline double fuzz_error_bound(enum wino_algo algo, int alpha, int custom_points)
{
    if (custom_points)
        return 1.0;
    if (algo != WINO_ALGO_WINOGRAD)
        return 1e-5;
    const double b = 1e-5 * pow(3.0, alpha - 3);
    return b < 5e-2 ? b : 5e-2;
}

/* Runs op (created for d with weights w, bias (K values or NULL) and relu) on inputs drawn from
 * seed, with a workspace of exactly the reported size and the output poisoned with NaN; every
 * output must be finite and the whole within fuzz_error_bound of the reference. */
static inline void fuzz_check_f32_run(const struct wino_conv2d_desc *d, const wino_conv2d *op,
                                      const float *w, const float *bias, int relu,
                                      uint64_t seed, int custom_points)
{
    enum wino_algo algo;
    int tile_m, p, q;
    size_t bytes = 0;
    FUZZ_REQUIRE(!wino_conv2d_algo(op, &algo, &tile_m) &&
                     !wino_conv2d_workspace_size(op, &bytes) &&
                     !wino_conv2d_output_size(d, &p, &q),
                 "%s", wino_last_error());
    if (bytes > FUZZ_RUN_MAX_WORKSPACE)
        return;
    const size_t xn = (size_t)d->n * d->c * d->h * d->w, yn = (size_t)d->n * d->k * p * q;
    float *x = malloc(sizeof(float) * xn), *y = malloc(sizeof(float) * yn);
    double *ref = malloc(sizeof(double) * yn);
    void *ws = bytes ? fuzz_alloc64(bytes) : NULL;
    FUZZ_REQUIRE(x && y && ref && (ws || !bytes), "out of memory");
    struct test_rng rng = {seed | 1};
    for (size_t i = 0; i < xn; i++)
        x[i] = (float)test_rng_sym(&rng);
    for (size_t i = 0; i < yn; i++)
        y[i] = NAN;
    FUZZ_REQUIRE(!wino_conv2d_run(op, x, y, ws, bytes), "run: %s", wino_last_error());
    wino_ref_conv2d_fwd(d, x, w, ref);
    for (size_t i = 0; i < yn; i++) {
        const size_t k = d->layout == WINO_LAYOUT_NHWC ? i % (size_t)d->k
                                                       : i / ((size_t)p * q) % (size_t)d->k;
        ref[i] += bias ? bias[k] : 0.0;
        if (relu && ref[i] < 0.0)
            ref[i] = 0.0;
        FUZZ_REQUIRE(isfinite(y[i]), "y[%zu] = %g (algo %d, tile m %d)", i, (double)y[i],
                     (int)algo, tile_m);
    }
    const double err = wino_rel_l1_f32(y, ref, yn);
    const double limit = fuzz_error_bound(algo, tile_m + d->r - 1, custom_points);
    FUZZ_REQUIRE(err <= limit, "relative L1 error %.3g above %.3g (algo %d, tile m %d)", err,
                 limit, (int)algo, tile_m);
    free(x), free(y), free(ref), free(ws);
}

#endif
