/* FP32 forward convolution through the public API in NCHW (PyTorch's default layout, which the
 * CPU engines copy to and from NHWC around the computation) and in NHWC, on 3x3 layers with
 * padding 1 (not a test; `wino bench` times NHWC only).
 *
 *   gcc -O2 -std=c99 -Iinclude bench/layout_bench.c build/libwino.a -lgmp -lm -lpthread -lgomp
 *   ./a.out THREADS "N C H K" ...
 *
 * For each layer and layout: wino_conv2d_create with AUTO, then 2 warm-up runs and the median
 * of 15 timed wino_conv2d_run calls (CLOCK_MONOTONIC), x and w fixed, y overwritten. */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wino.h"

#define WARMUP 2
#define REPS 15

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median ms of REPS runs of the layer in `layout`, or a negative value on failure. */
static double time_layer(int threads, int n, int c, int h, int k, enum wino_layout layout)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(n, c, h, h, k, 3, 3, 1, 1);
    d.layout = layout;
    const size_t xn = (size_t)n * c * h * h, wn = (size_t)k * c * 9, yn = (size_t)n * k * h * h;
    float *x = malloc(xn * sizeof *x), *w = malloc(wn * sizeof *w), *y = malloc(yn * sizeof *y);
    const struct wino_context ctx = {.threads = threads};
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_AUTO};
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    void *ws = NULL;
    double t[REPS], median = -1.0;
    if (!x || !w || !y)
        goto done;
    for (size_t i = 0; i < xn; i++)
        x[i] = (float)(i % 13) * 0.01f;
    for (size_t i = 0; i < wn; i++)
        w[i] = (float)(i % 7) * 0.01f - 0.03f;
    if (wino_conv2d_create(&d, w, &ctx, &o, &op) || wino_conv2d_workspace_size(op, &bytes) ||
        (bytes && posix_memalign(&ws, 64, bytes)))
        goto done;
    for (int r = 0; r < WARMUP + REPS; r++) {
        const double t0 = now_ms();
        if (wino_conv2d_run(op, x, y, ws, bytes))
            goto done;
        if (r >= WARMUP)
            t[r - WARMUP] = now_ms() - t0;
    }
    qsort(t, REPS, sizeof t[0], cmp);
    median = t[REPS / 2];
done:
    wino_conv2d_destroy(op);
    free(ws), free(x), free(w), free(y);
    return median;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s THREADS \"N C H K\" ...\n", argv[0]);
        return 2;
    }
    const int threads = atoi(argv[1]);
    printf("N,C,H,W,K,threads,nchw_ms,nhwc_ms\n");
    for (int i = 2; i < argc; i++) {
        int n, c, h, k;
        if (sscanf(argv[i], "%d %d %d %d", &n, &c, &h, &k) != 4) {
            fprintf(stderr, "bad layer \"%s\"\n", argv[i]);
            return 2;
        }
        const double nchw = time_layer(threads, n, c, h, k, WINO_LAYOUT_NCHW);
        const double nhwc = time_layer(threads, n, c, h, k, WINO_LAYOUT_NHWC);
        if (nchw < 0 || nhwc < 0) {
            fprintf(stderr, "layer \"%s\": %s\n", argv[i], wino_last_error());
            return 1;
        }
        printf("%d,%d,%d,%d,%d,%d,%.3f,%.3f\n", n, c, h, h, k, threads, nchw, nhwc);
    }
    return 0;
}
