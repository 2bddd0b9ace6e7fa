/* `wino tune`: measure the algorithm, tile and variant of each layer of a set and record the
 * fastest in a tuning cache that wino_conv2d_create reads (struct wino_context.tuning_cache). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "wino.h"

static const char *const usage_text =
    "usage: wino tune --cache FILE --set NAME|FILE [--layer L ...] [--batch N]\n"
    "                 [--layout nchw|nhwc] [--threads T] [--reps R] [--sets-dir DIR]\n"
    "       wino tune --check FILE\n"
    "  Times direct convolution and Winograd with each generated tile m in 2..6, fused and\n"
    "  non-fused, for every layer (FP32, median of R runs, default 10), and records the fastest\n"
    "  per layer, ISA and thread count in FILE (updated atomically).\n"
    BENCH_LAYER_USAGE
    "  --threads T defaults to wino's (OMP_NUM_THREADS, else the CPUs of the affinity mask).\n"
    "  --check validates FILE.\n"
    "  Options may also be written --name=value.\n";

static const char *choice_name(const struct wino_tuning_choice *c, char *buf, size_t cap)
{
    if (c->algo != WINO_ALGO_WINOGRAD)
        return "direct";
    snprintf(buf, cap, "winograd m=%d %s", c->tile_m,
             c->variant == WINO_VARIANT_FUSED ? "fused" : "non-fused");
    return buf;
}

int wino_cmd_tune(int argc, char **argv)
{
    struct bench_layer_args layer_args;
    const char *cache = NULL, *check = NULL;
    long batch = 0, threads = 0, reps = 10;
    int nhwc = 0;
    enum { TUNE = 1, CHECK = 2 };
    memset(&layer_args, 0, sizeof layer_args);
    const struct cli_option options[] = {
        {"--cache", CLI_STRING, &cache, TUNE, 0, 0, NULL, NULL},
        BENCH_LAYER_OPTIONS(&layer_args, TUNE),
        {"--batch", CLI_LONG, &batch, TUNE, 1, 1 << 20, NULL, NULL},
        {"--layout", CLI_CHOICE, &nhwc, TUNE, 0, 0, "nchw|nhwc", NULL},
        {"--threads", CLI_LONG, &threads, TUNE, 1, WINO_MAX_THREADS, NULL, NULL},
        {"--reps", CLI_LONG, &reps, TUNE, 1, 1 << 20, NULL, NULL},
        {"--check", CLI_STRING, &check, CHECK, 0, 0, NULL, NULL},
        {NULL, CLI_FLAG, NULL, 0, 0, 0, NULL, NULL}};
    const int parsed = cli_parse_verb("tune", options, argc, argv, usage_text);
    if (parsed >= 0)
        return parsed;
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
    const struct wino_context ctx = {.threads = (int)threads, .tuning_cache = cache};
    for (int i = 0; i < count && !rc; i++) {
        if (batch)
            layers[i].n = (int)batch;
        struct wino_conv2d_desc d = bench_layer_desc(&layers[i]);
        d.layout = nhwc ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
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
