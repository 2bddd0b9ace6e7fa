/* wino_tune: time every candidate algorithm / tile / variant of one layer and keep the fastest
 * (Mazaheri et al. (EuroSys'20) section 3.3, brute force over a small space). FP32 layers time
 * wino_conv2d_create's candidates, INT8 (S8, U8) layers wino_conv2d_create_int8's. */
#define _POSIX_C_SOURCE 200112L /* clock_gettime, posix_memalign */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "op/conv2d_impl.h"
#include "base/error.h"
#include "base/int8_tile.h"
#include "base/tile_matrices.h"
#include "base/threads.h"
#include "op/tuning_cache.h"
#include "cpu/gemm_f32.h"
#include "cpu/gemm_s8.h"

/* The INT8 layer wino_tune times: the weights uniform in (-1, 1) (float), x any byte, S8 output
 * without ReLU, which every input type takes; x_scale, alpha_ta and y_scale only need to be
 * valid (the kernels' speed does not depend on their values). alpha_tw: 1 for the direct
 * convolution; for a Winograd tile the largest |G' w G'^T| (tile_params), so that the weights
 * are quantized over their whole range as a calibration leaves real ones, and a tile whose
 * int32 bound such weights break (F(6,3) beyond a few dozen channels) is refused here as it
 * would be for a real layer: the cache never names it. */
static const struct wino_int8_params tune_int8_params = {
    .x_scale = 1.0f / 64, .alpha_ta = 16.0f, .alpha_tw = 1.0f, .y_scale = 0.25f,
    .y_dtype = WINO_DTYPE_S8};

/* tune_int8_params with alpha_tw the largest |G' w G'^T| of tile F(m, 3) over the K C filters
 * of w (K x 3 x 3 x C). */
static enum wino_status tile_params(int m, const struct wino_conv2d_desc *d, const float *w,
                                    struct wino_int8_params *p)
{
    struct wino_int8_tile t;
    const enum wino_status st = wino_int8_tile_make(m, &t);
    if (st)
        return st;
    double largest = 0.0;
    for (int k = 0; k < d->k; k++)
        for (int c = 0; c < d->c; c++) {
            double g[3][3], u[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    g[i][j] = w[(((size_t)k * 3 + i) * 3 + j) * d->c + c];
            wino_int8_filter_transform(&t, g, u);
            for (int i = 0; i < t.alpha; i++)
                for (int j = 0; j < t.alpha; j++)
                    largest = fabs(u[i][j]) > largest ? fabs(u[i][j]) : largest;
        }
    *p = tune_int8_params;
    p->alpha_tw = largest > 0.0 ? (float)largest : 1.0f;
    return WINO_SUCCESS;
}

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

/* One layer's timing setup: its data and the context timed. */
struct tune_layer {
    const struct wino_conv2d_desc *desc;
    const struct wino_context *ctx;
    const void *x, *w;
    void *y;
};

/* A candidate: what the cache records, how it is created (INT8: with int8, else FP32), and
 * its times so far (samples < 0: it does not apply). */
struct candidate {
    struct wino_tuning_choice choice;
    struct wino_conv2d_options options;
    const struct wino_int8_params *int8;
    struct wino_int8_params tile_int8; /* an INT8 Winograd tile's own parameters */
    int samples;
    double *times;
};

/* The candidates are timed in up to ROUNDS sweeps over all of them, a share of the runs each,
 * so that a passing slowdown of a shared machine falls on every candidate's samples rather
 * than on all of one's. */
#define ROUNDS 3
/* Milliseconds of untimed runs before a candidate's timed ones (time_candidate). */
#define WARMUP_MS 10.0
#define MAX_CANDIDATES (1 + 3 * (WINO_TUNE_MAX_M - WINO_TUNE_MIN_M + 1))

/* runs timed runs of candidate c after a warm-up, their ms appended to its times; or the status
 * of the create or warm-up run that failed (the candidate does not apply). */
static enum wino_status time_candidate(const struct tune_layer *l, struct candidate *c, int runs)
{
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    void *ws = NULL;
    enum wino_status st =
        c->int8 ? wino_conv2d_create_int8(l->desc, l->w, c->int8, l->ctx, &c->options, &op)
                : wino_conv2d_create(l->desc, l->w, l->ctx, &c->options, &op);
    if (!st)
        st = wino_conv2d_workspace_size(op, &bytes);
    if (!st && posix_memalign(&ws, 64, bytes ? bytes : 64))
        st = wino_fail(WINO_OUT_OF_MEMORY, "wino_tune: out of memory");
    /* the warm-up: at least WARMUP_MS of runs. With one run, the candidates of a tune of the
     * whole set timed up to 2x what the bench times for the same operator (Zen 4, 2 threads,
     * INT8: ResNet-18 conv3_x 0.19-0.29 ms against 0.10); the pool's workers waking from their
     * sleep are the likely cause. */
    const double warm_from = now_ms();
    for (int i = 0; !st && (i < 1 || now_ms() - warm_from < WARMUP_MS); i++)
        st = wino_conv2d_run(op, l->x, l->y, ws, bytes);
    for (int i = 0; !st && i < runs; i++) {
        const double t0 = now_ms();
        wino_conv2d_run(op, l->x, l->y, ws, bytes);
        c->times[c->samples++] = now_ms() - t0;
    }
    wino_conv2d_destroy(op);
    free(ws);
    return st;
}

static unsigned next_random(unsigned *seed)
{
    return *seed = *seed * 1103515245u + 12345u;
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
    struct wino_tuning_choice best = {WINO_ALGO_DIRECT, 0, WINO_VARIANT_AUTO, -1.0};
    const char *why = wino_tuning_choice_refusal(desc, &best); /* the layer's own refusal */
    if (why)
        return wino_fail(WINO_UNSUPPORTED, "%s", why);
    if ((st = wino_context_check(ctx)))
        return st;
    const int int8 = desc->dtype == WINO_DTYPE_S8 || desc->dtype == WINO_DTYPE_U8;
    if (ctx && (ctx->backend == WINO_BACKEND_OPENCL || (int8 && ctx->backend != WINO_BACKEND_CPU)))
        return wino_fail(WINO_UNSUPPORTED, "wino_tune times the CPU's choices%s",
                         int8 ? " (INT8: the CPU backend only)" : "");
    const size_t element = int8 ? 1 : sizeof(float);
    unsigned char *x = malloc(element * sz.x_elems), *y = malloc(element * sz.y_elems);
    float *w = malloc(sizeof(float) * sz.w_elems);
    double *times = malloc(sizeof(double) * (size_t)reps * MAX_CANDIDATES);
    if (!x || !w || !y || !times) {
        free(x), free(w), free(y), free(times);
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_tune: out of memory");
    }
    unsigned seed = 12345u; /* random data: timings on zeros can flatter */
    for (size_t i = 0; i < sz.x_elems; i++) {
        const unsigned r = next_random(&seed);
        if (int8)
            x[i] = (unsigned char)(r >> 24);
        else
            ((float *)x)[i] = (float)(r >> 9) / 8388608.0f - 1.0f;
    }
    for (size_t i = 0; i < sz.w_elems; i++)
        w[i] = (float)(next_random(&seed) >> 9) / 8388608.0f - 1.0f;

    /* the thread count timed is the one recorded; never read the cache here */
    const struct wino_context plain = {.threads = wino_context_threads(ctx)};
    const struct tune_layer layer = {desc, &plain, x, w, y};
    struct candidate all[MAX_CANDIDATES];
    int n = 0;
    all[n++] = (struct candidate){.choice = best, .options = {.algo = WINO_ALGO_DIRECT},
                                  .int8 = int8 ? &tune_int8_params : NULL};
    for (int m = WINO_TUNE_MIN_M; m <= WINO_TUNE_MAX_M; m++)
        for (int v = WINO_VARIANT_AUTO; v <= WINO_VARIANT_FUSED; v++) {
            struct candidate *c = &all[n];
            *c = (struct candidate){.choice = {WINO_ALGO_WINOGRAD, m, (enum wino_variant)v, -1.0},
                                    .options = {.algo = WINO_ALGO_WINOGRAD, .tile_m = m,
                                                .variant = (enum wino_variant)v}};
            if (wino_tuning_choice_refusal(desc, &c->choice)) /* the cache takes what is timed */
                continue;
            if (int8 && tile_params(m, desc, w, &c->tile_int8))
                continue;
            c->int8 = int8 ? &c->tile_int8 : NULL;
            n++;
        }
    for (int i = 0; i < n; i++)
        all[i].times = times + (size_t)i * reps;
    enum wino_status direct_st = WINO_SUCCESS;
    char direct_why[256] = ""; /* what the later candidates' failures would overwrite */
    const int rounds = reps < ROUNDS ? reps : ROUNDS;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < n; i++) {
            struct candidate *c = &all[i];
            if (c->samples < 0)
                continue;
            const enum wino_status failed =
                time_candidate(&layer, c, reps / rounds + (r < reps % rounds));
            if (failed) {
                c->samples = -1;
                if (i == 0) {
                    direct_st = failed;
                    snprintf(direct_why, sizeof direct_why, "%s", wino_last_error());
                }
            }
        }
    for (int i = 0; i < n; i++) {
        struct candidate *c = &all[i];
        if (c->samples <= 0)
            continue;
        qsort(c->times, (size_t)c->samples, sizeof *c->times, compare_double);
        c->choice.ms = c->times[c->samples / 2];
        if (best.ms < 0.0 || c->choice.ms < best.ms)
            best = c->choice;
    }
    free(x), free(w), free(y), free(times);
    wino_ok(); /* candidates that did not apply leave no error behind */
    if (best.ms < 0.0)
        return wino_fail(direct_st ? direct_st : WINO_INTERNAL_ERROR,
                         "wino_tune: no candidate ran (direct convolution: %s)", direct_why);
    if (ctx && ctx->tuning_cache) {
        const int isa = int8 ? (int)wino_s8_isa() : (int)wino_cpu_isa();
        if ((st = wino_tuning_store(ctx->tuning_cache, isa, plain.threads, desc, &best)))
            return st;
    }
    if (choice)
        *choice = best;
    return WINO_SUCCESS;
}
