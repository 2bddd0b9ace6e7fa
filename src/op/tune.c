/* wino_tune: time every candidate algorithm / tile / variant of one layer and keep the fastest
 * (Mazaheri et al. (EuroSys'20) section 3.3, brute force over a small space). */
#define _POSIX_C_SOURCE 200112L /* clock_gettime, posix_memalign */

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "op/conv2d_impl.h"
#include "base/error.h"
#include "base/threads.h"
#include "op/tuning_cache.h"
#include "cpu/gemm_f32.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median ms of reps runs of one candidate, or a negative value when it cannot run. */
static double time_candidate(const struct wino_conv2d_desc *d, const struct wino_context *ctx,
                             const struct wino_conv2d_options *o, const float *x, const float *w,
                             float *y, int reps, double *times)
{
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    void *ws = NULL;
    double median = -1.0;
    if (wino_conv2d_create(d, w, ctx, o, &op) || wino_conv2d_workspace_size(op, &bytes) ||
        posix_memalign(&ws, 64, bytes ? bytes : 64) || wino_conv2d_run(op, x, y, ws, bytes)) {
        wino_conv2d_destroy(op);
        free(ws);
        return median; /* the warm-up run above failed or the candidate does not apply */
    }
    for (int i = 0; i < reps; i++) {
        const double t0 = now_ms();
        wino_conv2d_run(op, x, y, ws, bytes);
        times[i] = now_ms() - t0;
    }
    qsort(times, (size_t)reps, sizeof *times, compare_double);
    median = times[reps / 2];
    wino_conv2d_destroy(op);
    free(ws);
    return median;
}

enum wino_status wino_tune(const struct wino_conv2d_desc *desc, const struct wino_context *ctx,
                           int reps, struct wino_tuning_choice *choice)
{
    wino_ok();
    struct wino_conv_sizes sz;
    enum wino_status st = wino_conv_desc_check(desc, &sz);
    if (st)
        return st;
    if (reps < 1)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tune: reps = %d must be >= 1", reps);
    if (desc->dtype != WINO_DTYPE_F32)
        return wino_fail(WINO_UNSUPPORTED, "wino_tune: only FP32 is implemented so far");
    if ((st = wino_context_check(ctx)))
        return st;
    if (ctx && ctx->backend == WINO_BACKEND_OPENCL)
        return wino_fail(WINO_UNSUPPORTED, "wino_tune times the CPU's choices");
    float *x = malloc(sizeof(float) * sz.x_elems), *w = malloc(sizeof(float) * sz.w_elems);
    float *y = malloc(sizeof(float) * sz.y_elems);
    double *times = malloc(sizeof(double) * (size_t)reps);
    if (!x || !w || !y || !times) {
        free(x), free(w), free(y), free(times);
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_tune: out of memory");
    }
    unsigned seed = 12345u; /* random data: timings on zeros can flatter */
    for (size_t i = 0; i < sz.x_elems; i++)
        x[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f;
    for (size_t i = 0; i < sz.w_elems; i++)
        w[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f;

    /* the thread count timed is the one recorded; never read the cache here */
    const struct wino_context plain = {.threads = wino_context_threads(ctx)};
    struct wino_tuning_choice best = {WINO_ALGO_DIRECT, 0, WINO_VARIANT_AUTO, -1.0};
    struct wino_conv2d_options o = {.algo = WINO_ALGO_DIRECT};
    best.ms = time_candidate(desc, &plain, &o, x, w, y, reps, times);
    for (int m = WINO_TUNE_MIN_M; m <= WINO_TUNE_MAX_M; m++)
        for (int v = WINO_VARIANT_NON_FUSED; v <= WINO_VARIANT_FUSED; v++) {
            const struct wino_tuning_choice c = {WINO_ALGO_WINOGRAD, m, (enum wino_variant)v,
                                                 -1.0};
            if (wino_tuning_choice_refusal(desc, &c)) /* the cache accepts what is timed here */
                continue;
            const struct wino_conv2d_options wo = {.algo = c.algo, .tile_m = m,
                                                   .variant = c.variant};
            const double ms = time_candidate(desc, &plain, &wo, x, w, y, reps, times);
            if (ms >= 0.0 && (best.ms < 0.0 || ms < best.ms)) {
                best = c;
                best.ms = ms;
            }
        }
    free(x), free(w), free(y), free(times);
    wino_ok(); /* candidates that did not apply leave no error behind */
    if (best.ms < 0.0)
        return wino_fail(WINO_INTERNAL_ERROR, "wino_tune: no candidate ran");
    if (ctx && ctx->tuning_cache) {
        st = wino_tuning_store(ctx->tuning_cache, (int)wino_cpu_isa(), plain.threads, desc,
                               &best);
        if (st)
            return st;
    }
    if (choice)
        *choice = best;
    return WINO_SUCCESS;
}
