/* Bad input to the library's core, each refused or handled: thread counts beyond
 * WINO_MAX_THREADS, the default thread count (OMP_NUM_THREADS, affinity mask), concurrent runs,
 * and non-finite or out-of-range INT8 inputs. (Tuning caches: tests/test_tune.c.) */
#define _GNU_SOURCE /* sched_setaffinity, mkdtemp, setenv, posix_memalign */

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conv_check.h"
#include "op/int8_layer.h"
#include "base/threads.h"
#include "ref/int8_winograd_ref.h"

static char dir[] = "/tmp/wino-hardening-XXXXXX";

/* An INT8 layer's descriptor: 3 x 3, pad 1, NHWC, uint8 input. */
static struct wino_conv2d_desc int8_desc(int c, int h, int w, int k)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, c, h, w, k, 3, 3, 1, 1);
    d.layout = WINO_LAYOUT_NHWC;
    d.dtype = WINO_DTYPE_U8;
    return d;
}

/* Defect: threads = 100000 passed create, and run() then exited the process. */
static void thread_bounds(struct test_counts *c, struct test_rng *rng)
{
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 8, 13, 11, 6, 3, 3, 1, 1);
    static const float w[6 * 8 * 9];
    static const int bad[] = {WINO_MAX_THREADS + 1, 100000, 2147483647, -1};
    int ok = 1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const struct wino_context ctx = {.threads = bad[i]};
        wino_conv2d *op = NULL;
        ok &= wino_conv2d_create(&d, w, &ctx, NULL, &op) == WINO_INVALID_ARGUMENT && !op &&
              strstr(wino_last_error(), "threads");
        ok &= wino_tune(&d, &ctx, 1, NULL) == WINO_INVALID_ARGUMENT;
        struct wino_conv2d_desc d8 = int8_desc(8, 6, 6, 4);
        const struct wino_int8_params q = {.x_scale = 0.01f, .alpha_ta = 1.0f, .alpha_tw = 1.0f,
                                           .y_scale = 0.1f, .y_dtype = WINO_DTYPE_S8};
        ok &= wino_conv2d_create_int8(&d8, w, &q, &ctx, NULL, &op) == WINO_INVALID_ARGUMENT;
    }
    test_check(c, ok, "threads outside [0, WINO_MAX_THREADS] are refused by every create");
    /* more threads than CPUs is allowed and computes the same convolution */
    static const enum wino_algo algos[] = {WINO_ALGO_DIRECT, WINO_ALGO_WINOGRAD};
    ok = 1;
    for (int v = 0; v < 3; v++)
        for (int a = 0; a < 2; a++) {
            struct wino_conv2d_desc dv = d;
            dv.layout = v == 2 ? WINO_LAYOUT_NCHW : WINO_LAYOUT_NHWC;
            const struct wino_conv2d_options o = {
                .algo = algos[a], .variant = a && v < 2 ? (enum wino_variant)(v + 1) : 0};
            const struct wino_context many = {.threads = 64};
            ok &= conv_check(&dv, &o, &many, rng, 1, NULL) <= 1e-5;
        }
    test_check(c, ok, "64 threads (more than the CPUs) compute the convolution");
}

/* The thread count create() uses for threads = 0, as recorded by wino_tune in a cache. */
static long recorded_threads(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/threads-cache", dir);
    remove(path);
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 2, 4, 4, 2, 1, 1, 0, 0);
    const struct wino_context ctx = {.tuning_cache = path};
    long threads = -1;
    FILE *f = wino_tune(&d, &ctx, 1, NULL) ? NULL : fopen(path, "r");
    if (f && fscanf(f, "wino-tuning-cache 1 %*d %ld", &threads) != 1)
        threads = -1;
    if (f)
        fclose(f);
    remove(path);
    return threads;
}

/* Defect: the default was the online cores, whatever OMP_NUM_THREADS and the affinity say. */
static void default_threads(struct test_counts *c)
{
    setenv("OMP_NUM_THREADS", "3", 1);
    test_check(c, recorded_threads() == 3, "threads = 0 follows OMP_NUM_THREADS");
    setenv("OMP_NUM_THREADS", "5,2", 1);
    const int nested = wino_default_threads();
    setenv("OMP_NUM_THREADS", "100000", 1);
    const int huge = wino_default_threads();
    setenv("OMP_NUM_THREADS", "x", 1);
    const int junk = wino_default_threads();
    unsetenv("OMP_NUM_THREADS");
    cpu_set_t mask, one;
    int ok = !sched_getaffinity(0, sizeof mask, &mask);
    ok = ok && wino_default_threads() == CPU_COUNT(&mask) && junk == CPU_COUNT(&mask);
    test_check(c, ok && nested == 5 && huge == WINO_MAX_THREADS,
               "OMP_NUM_THREADS: the outer level, at most WINO_MAX_THREADS, junk ignored");
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &mask))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ok = !sched_setaffinity(0, sizeof one, &one) && recorded_threads() == 1;
    sched_setaffinity(0, sizeof mask, &mask);
    test_check(c, ok, "threads = 0 follows the affinity mask (taskset)");
}

/* run() from several threads at once, on one operator with separate workspaces. */
struct runner {
    const wino_conv2d *op;
    const float *x;
    const float *expected;
    size_t y_elems, ws_bytes;
    int same;
};

static void *run_repeatedly(void *arg)
{
    struct runner *r = arg;
    float *y = malloc(sizeof(float) * r->y_elems);
    void *ws = test_alloc64(r->ws_bytes ? r->ws_bytes : 64);
    r->same = y != NULL;
    for (int i = 0; i < 20 && r->same; i++)
        r->same = !wino_conv2d_run(r->op, r->x, y, ws, r->ws_bytes) &&
                  !memcmp(y, r->expected, sizeof(float) * r->y_elems);
    free(y);
    free(ws);
    return NULL;
}

static void concurrent_runs(struct test_counts *c, struct test_rng *rng)
{
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(2, 16, 20, 20, 16, 3, 3, 1, 1);
    const size_t xe = 2 * 16 * 20 * 20, we = 16 * 16 * 9, ye = xe;
    float *x = malloc(4 * xe), *w = malloc(4 * we), *y = malloc(4 * ye);
    for (size_t i = 0; i < xe; i++)
        x[i] = (float)test_rng_sym(rng);
    for (size_t i = 0; i < we; i++)
        w[i] = (float)test_rng_sym(rng);
    const struct wino_context ctx = {.threads = 2};
    int ok = 1;
    for (int algo = WINO_ALGO_DIRECT; algo <= WINO_ALGO_WINOGRAD; algo++) {
        const struct wino_conv2d_options o = {.algo = (enum wino_algo)algo};
        wino_conv2d *op = NULL;
        size_t bytes = 0;
        void *ws = NULL;
        ok &= !wino_conv2d_create(&d, w, &ctx, &o, &op) && !wino_conv2d_workspace_size(op, &bytes);
        ws = test_alloc64(bytes ? bytes : 64);
        ok &= ok && !wino_conv2d_run(op, x, y, ws, bytes);
        struct runner r[4];
        pthread_t t[4];
        int started = 0;
        while (ok && started < 4) {
            r[started] = (struct runner){op, x, y, ye, bytes, 0};
            ok = !pthread_create(&t[started], NULL, run_repeatedly, &r[started]);
            started += ok;
        }
        for (int i = 0; i < started; i++)
            ok &= !pthread_join(t[i], NULL) && r[i].same;
        free(ws);
        wino_conv2d_destroy(op);
    }
    test_check(c, ok, "concurrent run() calls with separate workspaces give the same bytes");
    free(x), free(w), free(y);
}

static int same_params(const struct wino_int8_params *a, const struct wino_int8_params *b)
{
    return a->x_scale == b->x_scale && a->alpha_ta == b->alpha_ta &&
           a->alpha_tw == b->alpha_tw && a->clip_c == b->clip_c && a->y_scale == b->y_scale;
}

/* Defect: a NaN sample reached a float-to-integer conversion (undefined behaviour). */
static void int8_non_finite(struct test_counts *c)
{
    const struct wino_conv2d_desc df = wino_conv2d_desc_make(1, 4, 6, 6, 3, 3, 3, 1, 1);
    struct wino_conv2d_desc d = df;
    d.layout = WINO_LAYOUT_NHWC;
    float samples[4 * 6 * 6], weights[3 * 9 * 4], bias[3] = {0.1f, -0.2f, 0.3f};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        samples[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
    for (size_t i = 0; i < sizeof weights / sizeof weights[0]; i++)
        weights[i] = (float)((i * 11) % 7) / 10.0f - 0.3f;
    struct wino_int8_params q;
    test_check(c, wino_int8_calibrate(&d, 4, samples, weights, bias, 0, 0.0f,
                                      WINO_CALIBRATE_PERCENTILE, 99.9, &q) == WINO_SUCCESS,
               "calibration of finite data succeeds");
    static const struct {
        int which; /* 0 samples, 1 weights, 2 bias */
        size_t at;
        float v;
        const char *name;
    } bad[] = {{0, 5, NAN, "samples[5]"},      {0, 143, INFINITY, "samples[143]"},
               {1, 7, NAN, "weights[7]"},      {1, 0, -INFINITY, "weights[0]"},
               {2, 2, NAN, "bias[2]"}};
    int ok = 1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        float *v = bad[i].which == 0 ? samples : bad[i].which == 1 ? weights : bias;
        const float keep = v[bad[i].at];
        v[bad[i].at] = bad[i].v;
        struct wino_int8_params p = q;
        const int refused =
            wino_int8_calibrate(&d, 4, samples, weights, bias, 0, 0.0f, WINO_CALIBRATE_MSE, 0.0,
                                &p) == WINO_INVALID_ARGUMENT &&
            strstr(wino_last_error(), bad[i].name) && same_params(&p, &q);
        struct wino_conv2d_desc d8 = d;
        d8.dtype = WINO_DTYPE_S8;
        const struct wino_conv2d_options o = {.bias = bias};
        wino_conv2d *op = NULL;
        const int refused8 = bad[i].which == 0 ||
                             (wino_conv2d_create_int8(&d8, weights, &q, NULL, &o, &op) ==
                                  WINO_INVALID_ARGUMENT &&
                              strstr(wino_last_error(), bad[i].name) && !op);
        if (!refused || !refused8)
            printf("  %s: %s\n", bad[i].name, wino_last_error());
        ok &= refused && refused8;
        v[bad[i].at] = keep;
    }
    test_check(c, ok, "non-finite samples, weights and biases are refused, naming the first");

    /* finite but huge weights: the clipping factors would not fit a float */
    float huge[3 * 9 * 4];
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++)
        huge[i] = 3.0e38f;
    struct wino_int8_params p = q;
    test_check(c, wino_int8_calibrate(&d, 2, samples, huge, NULL, 0, 0.0f,
                                      WINO_CALIBRATE_PERCENTILE, 99.9, &p) ==
                          WINO_INVALID_ARGUMENT &&
                      same_params(&p, &q),
               "calibration refuses clipping factors beyond the float range");

    /* options that do not apply to an INT8 forward layer are refused, not ignored */
    struct wino_conv2d_desc d8 = d;
    d8.dtype = WINO_DTYPE_S8;
    const struct wino_conv2d_options accumulate = {.accumulate = 1}, tf32 = {.tf32 = 2};
    wino_conv2d *op = NULL;
    test_check(c, wino_conv2d_create_int8(&d8, weights, &q, NULL, &accumulate, &op) ==
                          WINO_INVALID_ARGUMENT && !op &&
                      wino_conv2d_create_int8(&d8, weights, &q, NULL, &tf32, &op) ==
                          WINO_INVALID_ARGUMENT && !op,
               "create_int8 refuses accumulate and an out-of-range tf32");
}

/* A tiny f_a (x_scale 1e-38, huge weights) once overflowed the conversion of 128 / f_a to int
 * in the input transform: the engine must still match the specification. */
static void int8_extreme_scales(struct test_counts *c, struct test_rng *rng)
{
    const struct wino_conv2d_desc d = int8_desc(8, 9, 9, 5);
    const size_t xe = 8 * 9 * 9, we = 5 * 9 * 8, ye = 5 * 9 * 9;
    uint8_t x[8 * 9 * 9], y[5 * 9 * 9], ref[5 * 9 * 9];
    float w[5 * 9 * 8];
    for (size_t i = 0; i < xe; i++)
        x[i] = (uint8_t)test_rng_next(rng);
    for (size_t i = 0; i < we; i++)
        w[i] = (float)(1e30 * test_rng_sym(rng));
    const struct wino_int8_params q = {.x_scale = 1e-38f, .alpha_ta = 1.0f, .alpha_tw = 1e30f,
                                       .y_scale = 1e-6f, .y_dtype = WINO_DTYPE_S8};
    int ok = 1;
    for (int m = 2; m <= 6; m += 2) {
        const struct wino_conv2d_options o = {.tile_m = m};
        struct wino_int8_layer layer;
        wino_conv2d *op = NULL;
        size_t bytes = 0;
        int made = !wino_conv2d_create_int8(&d, w, &q, NULL, &o, &op) &&
                   !wino_conv2d_workspace_size(op, &bytes) &&
                   !wino_int8_layer_prepare(&d, m, w, &q, NULL, 0, &layer);
        void *ws = test_alloc64(bytes ? bytes : 64);
        memset(y, 0x7f, sizeof y);
        if (made) {
            wino_ref_int8_winograd(&d, &layer, x, ref);
            wino_int8_layer_release(&layer);
        }
        ok &= made && !wino_conv2d_run(op, x, y, ws, bytes) && !memcmp(y, ref, ye);
        free(ws);
        wino_conv2d_destroy(op);
    }
    test_check(c, ok, "x_scale 1e-38 with weights 1e30: the engine matches the specification");
}

int main(void)
{
    struct test_rng rng = {test_seed()};
    struct test_counts c = {0, 0};
    if (!mkdtemp(dir))
        return 1;
    thread_bounds(&c, &rng);
    default_threads(&c);
    concurrent_runs(&c, &rng);
    int8_non_finite(&c);
    int8_extreme_scales(&c, &rng);
    rmdir(dir);
    return test_report(&c);
}
