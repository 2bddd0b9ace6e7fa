/* `wino demo`: what wino does, in one run: generate F(m, r) exactly, convolve a layer with it
 * through the public API, and compare with the double-precision direct convolution. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "cli.h"
#include "ref/conv_ref.h"
#include "ref/error_metrics.h"
#include "wino_gen.h"

static const char *const usage_text =
    "usage: wino demo [--m M] [--n N] [--c C] [--hw HW] [--k K] [--seed S] [--reps R]\n"
    "  Generates F(M, 3) (default M = 4), runs an N x C x HW x HW -> K layer with a 3x3 filter\n"
    "  and padding 1 (default 1 x 32 x 28 x 28 -> 32) with Winograd and with the direct path,\n"
    "  and prints each result's error against the FP64 direct reference and its time: the\n"
    "  median of R runs (default 5) after one untimed warm-up run, whose output is checked.\n";

/* Runs one algorithm: one warm-up run, checked against ref, then reps timed runs; prints the
 * error and the median time. Returns 0 or 1. */
static int run_one(const struct wino_conv2d_desc *d, enum wino_algo algo, int tile_m,
                   const float *x, const float *w, float *y, const double *ref, size_t y_elems,
                   double *times, long reps)
{
    struct wino_conv2d_options opt = {.algo = algo, .tile_m = tile_m};
    wino_conv2d *op = NULL;
    size_t ws_bytes = 0;
    void *ws = NULL;
    enum wino_status st = wino_conv2d_create(d, w, NULL, &opt, &op);
    if (!st)
        st = wino_conv2d_workspace_size(op, &ws_bytes);
    if (!st && ws_bytes && posix_memalign(&ws, 64, ws_bytes))
        st = WINO_OUT_OF_MEMORY;
    if (!st)
        st = wino_conv2d_run(op, x, y, ws, ws_bytes);
    const double rel_l1 = st ? 0.0 : wino_rel_l1_f32(y, ref, y_elems),
                 max_abs = st ? 0.0 : wino_max_abs_err_f32(y, ref, y_elems);
    for (long i = 0; i < reps && !st; i++) {
        const double t0 = bench_now_ms();
        st = wino_conv2d_run(op, x, y, ws, ws_bytes);
        times[i] = bench_now_ms() - t0;
    }
    if (st) {
        fprintf(stderr, "wino demo: %s: %s\n", wino_status_string(st), wino_last_error());
    } else {
        enum wino_algo used;
        int m;
        wino_conv2d_algo(op, &used, &m);
        char name[32];
        if (used == WINO_ALGO_WINOGRAD)
            snprintf(name, sizeof name, "Winograd F(%dx%d,%dx%d)", m, m, d->r, d->s);
        else
            snprintf(name, sizeof name, "direct");
        printf("  %-24s relative L1 %.3e   max abs %.3e   %8.3f ms   workspace %zu B\n", name,
               rel_l1, max_abs, bench_median(times, reps), ws_bytes);
    }
    free(ws);
    wino_conv2d_destroy(op);
    return st != WINO_SUCCESS;
}

int wino_cmd_demo(int argc, char **argv)
{
    long m = 4, n = 1, c = 32, hw = 28, k = 32, seed = 1, reps = 5;
    const struct cli_option options[] = {
        {"--m", CLI_LONG, &m, 0, 1, WINO_MAX_ALPHA - 2, NULL, NULL},
        {"--n", CLI_LONG, &n, 0, 1, 64, NULL, NULL},
        {"--c", CLI_LONG, &c, 0, 1, 1024, NULL, NULL},
        {"--hw", CLI_LONG, &hw, 0, 1, 512, NULL, NULL},
        {"--k", CLI_LONG, &k, 0, 1, 1024, NULL, NULL},
        {"--seed", CLI_LONG, &seed, 0, 1, 1L << 30, NULL, NULL},
        {"--reps", CLI_LONG, &reps, 0, 1, 1000, NULL, NULL},
        {NULL, CLI_FLAG, NULL, 0, 0, 0, NULL, NULL}};
    const int parsed = cli_parse_verb("demo", options, argc, argv, usage_text);
    if (parsed >= 0)
        return parsed;

    wino_tile *tile = NULL;
    if (wino_tile_create((int)m, 3, NULL, 0, &tile)) {
        fprintf(stderr, "wino demo: %s\n", wino_last_error());
        return 1;
    }
    const int a = wino_tile_alpha(tile);
    printf("wino %s demo\n\n1. Exact generation of F(%ld, 3), alpha = %d, points:", wino_version(),
           m, a);
    for (int i = 0; i < a - 1; i++) {
        char p[64];
        wino_tile_point_string(tile, i, p, sizeof p, NULL);
        printf(" %s", p);
    }
    printf(" inf\n   G (alpha x 3), exact:\n");
    for (int i = 0; i < a; i++) {
        printf("    ");
        for (int j = 0; j < 3; j++) {
            char e[64];
            wino_tile_entry_string(tile, WINO_MATRIX_G, i, j, e, sizeof e, NULL);
            printf(" %8s", e);
        }
        printf("\n");
    }
    struct wino_op_counts base, opt;
    if (!wino_tile_op_counts(tile, WINO_TRANSFORM_INPUT, &base, &opt))
        printf("   input transform: %ld flops as matrix products, %ld in the generated recipe\n",
               base.add + base.mul + 2 * base.fma, opt.add + opt.mul + 2 * opt.fma);
    wino_tile_destroy(tile);

    struct wino_conv2d_desc d =
        wino_conv2d_desc_make((int)n, (int)c, (int)hw, (int)hw, (int)k, 3, 3, 1, 1);
    int p, q;
    wino_conv2d_output_size(&d, &p, &q);
    size_t xe = (size_t)(n * c * hw * hw), we = (size_t)(k * c * 9), ye = (size_t)(n * k) * p * q;
    float *x = malloc(xe * sizeof *x), *w = malloc(we * sizeof *w), *y = malloc(ye * sizeof *y);
    double *ref = malloc(ye * sizeof *ref), *times = malloc((size_t)reps * sizeof *times);
    if (!x || !w || !y || !ref || !times) {
        fprintf(stderr, "wino demo: out of memory\n");
        free(x), free(w), free(y), free(ref), free(times);
        return 1;
    }
    srand((unsigned)seed);
    for (size_t i = 0; i < xe; i++)
        x[i] = 2.0f * (float)rand() / (float)RAND_MAX - 1.0f;
    for (size_t i = 0; i < we; i++)
        w[i] = 2.0f * (float)rand() / (float)RAND_MAX - 1.0f;
    wino_ref_conv2d_fwd(&d, x, w, ref);

    printf("\n2. Convolution %ld x %ld x %ld x %ld -> %ld channels, 3x3, pad 1 (inputs uniform in "
           "(-1,1), seed %ld), FP32,\n   error against the FP64 direct convolution; time: median "
           "of %ld warm run%s after one warm-up:\n",
           n, c, hw, hw, k, seed, reps, reps == 1 ? "" : "s");
    int rc = run_one(&d, WINO_ALGO_WINOGRAD, (int)m, x, w, y, ref, ye, times, reps);
    rc |= run_one(&d, WINO_ALGO_DIRECT, 0, x, w, y, ref, ye, times, reps);
    free(x), free(w), free(y), free(ref), free(times);
    return rc;
}
