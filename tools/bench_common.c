/* Helpers shared by `wino bench` on the CPU (tools/cmd_bench.c), on CUDA
 * (tools/cmd_bench_cuda.c) and on OpenCL (tools/bench_wino_opencl.c): reproducible data, INT8
 * scales, medians, time, CSV rows. */
#define _POSIX_C_SOURCE 200112L /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

double bench_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* splitmix64 mapped to (-1, 1): reproducible inputs without touching the C library's rand(). */
void bench_fill_uniform(float *v, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        v[i] = (float)(((double)(z >> 11) + 0.5) / 9007199254740992.0 * 2.0 - 1.0);
    }
}

float bench_relu_u8_scale(float *x, size_t n)
{
    float xmax = 0.0f;
    for (size_t i = 0; i < n; i++) {
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
        xmax = x[i] > xmax ? x[i] : xmax;
    }
    return xmax > 0.0f ? xmax / 255.0f : 1.0f;
}

float bench_s8_scale(const double *y, size_t n)
{
    double ymax = 0.0;
    for (size_t i = 0; i < n; i++)
        ymax = fabs(y[i]) > ymax ? fabs(y[i]) : ymax;
    return ymax > 0.0 ? (float)(ymax / 127.0) : 1.0f;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Milliseconds the warm-up lasts at least (when there is one): the first implementation timed in
 * a process ran 1.4x slower after 2 warm-up runs (INT8 ResNet-18 conv2_x at batch 1, 0.14 ms a
 * run, Zen 4, 2 threads: the thread pool's workers and the cores ramping up), as in wino_tune. */
#define WARMUP_MS 10.0

int bench_time_runs(const struct bench_runner *r, long warmup, long reps, double *times,
                    double *ms)
{
    const double warm_from = bench_now_ms();
    for (long i = 0; i < warmup || (warmup > 0 && bench_now_ms() - warm_from < WARMUP_MS); i++)
        if (r->run(r->state))
            return 1;
    for (long i = 0; i < reps; i++) {
        const double t0 = bench_now_ms();
        if (r->run(r->state))
            return 1;
        times[i] = bench_now_ms() - t0;
    }
    *ms = bench_median(times, reps);
    return 0;
}

/* s as one CSV field, quoted when it holds a comma, a quote or a newline. */
static void csv_field(const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

void bench_csv_row(const struct bench_csv_row *r)
{
    const struct bench_layer *l = r->layer;
    csv_field(r->set);
    putchar(',');
    csv_field(l->name);
    printf(",%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%s,%s,%.5g,%.5g,%zu,", l->n, l->c, l->h, l->w, l->k,
           l->r, l->s, l->pad, r->dtype, r->backend, r->impl, r->tile, r->ms,
           r->gflop / r->ms * 1e3, r->workspace_bytes);
    csv_field(r->device);
    printf(",%d,%.3g,%.4g,%s,", l->stride, r->rel_l1, r->prepare_ms, r->variant);
    if (r->threads)
        printf("%ld", r->threads);
    putchar(',');
    csv_field(r->choice);
}

enum wino_status bench_int8_calibrate(const struct wino_conv2d_desc *desc, int tile_m,
                                      const float *x, const float *w, float x_scale,
                                      struct wino_int8_params *q)
{
    struct wino_conv2d_desc d = *desc;
    d.n = 1;
    d.h = d.h < BENCH_CALIBRATION_SIDE ? d.h : BENCH_CALIBRATION_SIDE;
    d.w = d.w < BENCH_CALIBRATION_SIDE ? d.w : BENCH_CALIBRATION_SIDE;
    d.dtype = WINO_DTYPE_F32;
    float *crop = malloc((size_t)d.h * d.w * d.c * sizeof *crop);
    if (!crop)
        return WINO_OUT_OF_MEMORY;
    for (int h = 0; h < d.h; h++) /* rows of the window from rows of the image */
        memcpy(crop + (size_t)h * d.w * d.c, x + (size_t)h * desc->w * d.c,
               (size_t)d.w * d.c * sizeof *crop);
    const enum wino_status s = wino_int8_calibrate(&d, tile_m, crop, w, NULL, 0, x_scale,
                                                   WINO_CALIBRATE_PERCENTILE, 99.9, q);
    free(crop);
    return s;
}

const char *bench_op_name(int op)
{
    static const char *const names[] = {"fwd", "bwd-data", "bwd-filter"};
    return op >= BENCH_FWD && op <= BENCH_BWD_FILTER ? names[op] : "?";
}
