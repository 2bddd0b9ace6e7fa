/* `wino tune`: measure the algorithm, tile and variant of each layer of a set and record the
 * fastest in a tuning cache that wino_conv2d_create and, with --dtype int8,
 * wino_conv2d_create_int8 read (struct wino_context.tuning_cache);
 * with --backend opencl, search the OpenCL kernels' parameters and variant of each layer into
 * an OpenCL tuning database (src/op/opencl_tuning.h) that the OpenCL create reads the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "op/opencl_tuning.h"
#include "wino.h"

static const char *const usage_text =
    "usage: wino tune --cache FILE --set NAME|FILE [--layer L ...] [--batch N]\n"
    "                 [--layout nchw|nhwc] [--dtype f32|int8|u8|s8] [--threads T] [--reps R]\n"
    "                 [--sets-dir DIR]\n"
    "       wino tune --backend opencl --cache FILE --set NAME|FILE [--layer L ...]\n"
    "                 [--batch N] [--layout nchw|nhwc] [--dtype f32|f16] [--cl-device D]\n"
    "                 [--budget S] [--candidates N] [--reps R] [--sets-dir DIR]\n"
    "       wino tune --check FILE\n"
    "  Times direct convolution and Winograd with each generated tile m in 2..6, fused and\n"
    "  non-fused, for every layer (FP32, median of R runs, default 10), and records the fastest\n"
    "  per layer, ISA and thread count in FILE (updated atomically).\n"
    "  --dtype int8 (or u8: uint8 inputs, what `wino bench --dtype int8` runs; s8: int8\n"
    "  inputs) times instead the INT8 direct convolution and, for 3x3 filters of stride 1,\n"
    "  the INT8 Winograd tiles m = 2, 4, 6 (a tile the int32 bounds refuse is skipped), NHWC,\n"
    "  keyed by the INT8 kernels' ISA; wino_conv2d_create_int8 with AUTO follows the entry\n"
    "  (calibrate for the tile wino_int8_auto_choice answers).\n"
    "  --backend opencl searches instead the tile and the OpenCL kernels' parameters (GEMM\n"
    "  work-group tile, outputs per work-item, channel step, local-memory staging, chunk; fused\n"
    "  tile, channels per work-item, channel step) and variant of each layer on one OpenCL\n"
    "  device (FP32, or FP16 with --dtype f16): each tile m in 2..8 the kernels run with its\n"
    "  defaults (both variants), then for the fastest tile among the values valid for the\n"
    "  device's limits, the\n"
    "  variants in turn, a neighbour of the variant's best so far (one parameter changed) and\n"
    "  a candidate of a fixed shuffled order in turn, each built, checked against the default's\n"
    "  output and timed (median of R runs), until S seconds (default 20, the tiles' defaults\n"
    "  included) or N candidates (default: no bound; 0: none for either) per layer. Each tile's\n"
    "  fastest of each variant and faster variant go to FILE, an OpenCL tuning database keyed\n"
    "  by device, driver, layer and tile, which an OpenCL create with wino_context.tuning_cache\n"
    "  = FILE follows (AUTO: the fastest tile's entry); per layer it prints the tile, the search\n"
    "  time, the candidates timed, the default tile's default and the tuned times and the\n"
    "  speed-up.\n"
    "  Layers the backend cannot run are skipped with a note. --layout defaults to nhwc there\n"
    "  (what `wino bench --backend opencl` runs) and for INT8 (its only layout), nchw for FP32\n"
    "  on the CPU.\n"
    BENCH_LAYER_USAGE
    "  --threads T defaults to wino's (OMP_NUM_THREADS, else the CPUs of the affinity mask).\n"
    "  --cl-device D  the OpenCL device's index over every platform's devices (default:\n"
    "                 $" BENCH_CL_DEVICE_ENV ", else the first GPU, else the first device).\n"
    "  --check validates FILE (a CPU tuning cache).\n"
    "  Options may also be written --name=value.\n";

static const char *choice_name(const struct wino_tuning_choice *c, char *buf, size_t cap)
{
    if (c->algo != WINO_ALGO_WINOGRAD)
        return "direct";
    snprintf(buf, cap, "winograd m=%d%s", c->tile_m,
             c->variant == WINO_VARIANT_FUSED       ? " fused"
             : c->variant == WINO_VARIANT_NON_FUSED ? " non-fused"
                                                    : ""); /* INT8: no variants */
    return buf;
}

/* The index of --dtype f32|f16|int8|u8|s8 (int8 is u8, as `wino bench --dtype int8` runs). */
enum tune_dtype { TUNE_F32, TUNE_F16, TUNE_INT8, TUNE_U8, TUNE_S8 };

/* --backend opencl's options beyond the layers. */
struct opencl_args {
    long cl_device, budget, candidates, reps;
    int f16; /* FP16 layers instead of FP32 */
};

/* Searches every layer on the OpenCL device into cache. Returns the exit status. */
static int tune_opencl(const char *set, struct bench_layer *layers, int count, int nhwc,
                       const char *cache, const struct opencl_args *o)
{
    struct bench_opencl cl;
    int rc = bench_opencl_open("tune", o->cl_device, &cl);
    if (rc)
        return rc;
    char bounds[80];
    bench_opencl_bounds_text(o->budget, o->candidates, bounds, sizeof bounds);
    printf("wino tune: set %s (%d layers), opencl, %s (%s, driver %s); per layer %s, median of "
           "%ld\n",
           set, count, cl.name, cl.platform, cl.driver, bounds, o->reps);
    struct wino_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.backend = WINO_BACKEND_OPENCL;
    ctx.cl_context = cl.context;
    ctx.cl_device = cl.device;
    ctx.stream = cl.queue;
    ctx.tuning_cache = cache;
    const struct wino_opencl_search search = {(double)o->budget, (int)o->candidates,
                                              (int)o->reps};
    for (int i = 0; i < count && !rc; i++) {
        struct wino_conv2d_desc d = bench_layer_desc(&layers[i]);
        d.layout = nhwc ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
        d.dtype = o->f16 ? WINO_DTYPE_F16 : WINO_DTYPE_F32;
        struct wino_opencl_tuning t;
        const enum wino_status st = wino_opencl_tune(&d, &ctx, 0, &search, &t);
        if (st == WINO_UNSUPPORTED) {
            fprintf(stderr, "wino tune: note: %s skipped: %s\n", layers[i].name,
                    wino_last_error());
            continue;
        }
        if (st) {
            fprintf(stderr, "wino tune: %s: %s\n", layers[i].name, wino_last_error());
            rc = 1;
            continue;
        }
        const int fused = t.best.variant == WINO_VARIANT_FUSED;
        const double ms = wino_opencl_tuned_ms(&t.best);
        char params[64], tile[24];
        bench_opencl_params_text(&t.best.params, fused, params, sizeof params);
        bench_tile_name(tile, sizeof tile, t.tile_m, d.r, d.s);
        printf("%-16s N=%d C=%d %dx%d K=%d %s (fastest of %d tiles): %d of %d candidates, "
               "%.1f s in all, default %.4f ms, tuned %.4f ms (%.2fx): %s\n",
               layers[i].name, d.n, d.c, d.h, d.w, d.k, tile, t.tiles, t.candidates, t.space,
               t.seconds, t.default_ms, ms, t.default_ms / ms, params);
        fflush(stdout);
    }
    bench_opencl_close(&cl);
    return rc;
}

int wino_cmd_tune(int argc, char **argv)
{
    struct bench_layer_args layer_args;
    const char *cache = NULL, *check = NULL;
    long batch = 0, threads = 0, reps = 10;
    int backend = 0, layout = -1, dtype = -1; /* -1: the backend's */
    struct opencl_args o = {-1, -1, -1, 0, 0};
    enum { TUNE = 1, CHECK = 2 };
    memset(&layer_args, 0, sizeof layer_args);
    const struct cli_option options[] = {
        {"--backend", CLI_CHOICE, &backend, TUNE, 0, 0, "cpu|opencl", NULL},
        {"--cache", CLI_STRING, &cache, TUNE, 0, 0, NULL, NULL},
        BENCH_LAYER_OPTIONS(&layer_args, TUNE),
        {"--batch", CLI_LONG, &batch, TUNE, 1, 1 << 20, NULL, NULL},
        {"--layout", CLI_CHOICE, &layout, TUNE, 0, 0, "nchw|nhwc", NULL},
        {"--dtype", CLI_CHOICE, &dtype, TUNE, 0, 0, "f32|f16|int8|u8|s8", NULL},
        {"--threads", CLI_LONG, &threads, TUNE, 1, WINO_MAX_THREADS, NULL, NULL},
        {"--reps", CLI_LONG, &reps, TUNE, 1, 1 << 20, NULL, NULL},
        {"--cl-device", CLI_LONG, &o.cl_device, TUNE, 0, 1023, NULL, NULL},
        {"--budget", CLI_LONG, &o.budget, TUNE, 0, 1000000, NULL, NULL},
        {"--candidates", CLI_LONG, &o.candidates, TUNE, 0, 1000000, NULL, NULL},
        {"--check", CLI_STRING, &check, CHECK, 0, 0, NULL, NULL},
        {NULL, CLI_FLAG, NULL, 0, 0, 0, NULL, NULL}};
    const int parsed = cli_parse_verb("tune", options, argc, argv, usage_text);
    if (parsed >= 0)
        return parsed;
    const int opencl = backend == 1, int8 = dtype >= TUNE_INT8;
    if (!opencl && (o.cl_device >= 0 || o.budget >= 0 || o.candidates >= 0))
        return cli_usage_error("tune", "--cl-device, --budget and --candidates are --backend "
                                       "opencl's");
    if (opencl ? int8 : dtype == TUNE_F16)
        return cli_usage_error("tune", "--dtype %s --backend %s's",
                               int8 ? "int8, u8 and s8 are" : "f16 is", int8 ? "cpu" : "opencl");
    if (opencl && threads)
        return cli_usage_error("tune", "--threads is --backend cpu's");
    if (int8 && layout == 0)
        return cli_usage_error("tune", "--dtype int8 runs NHWC only (--layout nhwc)");
    if (check) {
        enum wino_status st = wino_tuning_cache_check(check);
        if (st) {
            fprintf(stderr, "wino tune: %s\n", wino_last_error());
            return 1;
        }
        printf("%s: a valid tuning cache\n", check);
        return 0;
    }
    if (!cache)
        return cli_usage_error("tune", "--cache FILE is required (wino tune --help)");
    struct bench_layer *layers = NULL;
    char set[BENCH_NAME_MAX];
    int count = 0;
    int rc = bench_load_layers("tune", &layer_args, NULL, &layers, &count, set, sizeof set);
    if (rc)
        return rc;
    for (int i = 0; i < count && batch; i++)
        layers[i].n = (int)batch;
    if (opencl) {
        o.budget = o.budget < 0 ? BENCH_CL_BUDGET : o.budget;
        o.candidates = o.candidates < 0 ? BENCH_CL_CANDIDATES : o.candidates;
        o.reps = reps;
        o.f16 = dtype == TUNE_F16;
        rc = tune_opencl(set, layers, count, layout < 0 || layout == 1, cache, &o);
        free(layers);
        return rc;
    }
    const struct wino_context ctx = {.threads = (int)threads, .tuning_cache = cache};
    for (int i = 0; i < count && !rc; i++) {
        struct wino_conv2d_desc d = bench_layer_desc(&layers[i]);
        d.layout = layout == 1 || int8 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
        if (int8)
            d.dtype = dtype == TUNE_S8 ? WINO_DTYPE_S8 : WINO_DTYPE_U8;
        struct wino_tuning_choice c;
        char name[64];
        if (wino_tune(&d, &ctx, (int)reps, &c)) {
            fprintf(stderr, "wino tune: %s: %s\n", layers[i].name, wino_last_error());
            rc = 1;
        } else {
            printf("%-16s N=%d C=%d %dx%d K=%d %dx%d: %-28s %9.4f ms\n", layers[i].name, d.n, d.c,
                   d.h, d.w, d.k, d.r, d.s, choice_name(&c, name, sizeof name), c.ms);
        }
    }
    free(layers);
    return rc;
}
