/* `wino tune`: measure the algorithm, tile and variant of each layer of a set and record the
 * fastest in a tuning cache that wino_conv2d_create reads (struct wino_context.tuning_cache). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "wino.h"

static const char *const usage_text =
    "usage: wino tune --cache FILE --set NAME [--batch N] [--layout nchw|nhwc] [--threads T]\n"
    "                 [--reps R] [--sets-dir DIR]\n"
    "       wino tune --check FILE\n"
    "  Times direct convolution and Winograd with each generated tile m in 2..6, fused and\n"
    "  non-fused, for every layer of bench/sets/NAME.txt (FP32, median of R runs, default 10),\n"
    "  and records the fastest per layer, ISA and thread count in FILE (updated atomically).\n"
    "  --threads T defaults to the online cores. --check validates FILE.\n";

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
    const char *cache = NULL, *set = NULL, *dir = "bench/sets", *check = NULL, *v;
    long batch = 0, threads = 0, reps = 10;
    int nhwc = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (!strcmp(a, "--cache") || !strcmp(a, "--set") || !strcmp(a, "--sets-dir") ||
            !strcmp(a, "--check") || !strcmp(a, "--layout")) {
            if (!(v = cli_value("tune", argc, argv, &i)))
                return 2;
            if (!strcmp(a, "--cache"))
                cache = v;
            else if (!strcmp(a, "--set"))
                set = v;
            else if (!strcmp(a, "--sets-dir"))
                dir = v;
            else if (!strcmp(a, "--check"))
                check = v;
            else if (!strcmp(v, "nchw") || !strcmp(v, "nhwc"))
                nhwc = !strcmp(v, "nhwc");
            else {
                fprintf(stderr, "wino tune: --layout: \"%s\" is not nchw or nhwc\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--batch") || !strcmp(a, "--threads") || !strcmp(a, "--reps")) {
            long *dst = a[2] == 'b' ? &batch : a[2] == 't' ? &threads : &reps;
            if (!(v = cli_value("tune", argc, argv, &i)) ||
                cli_parse_long("tune", a + 2, v, 1, 1 << 20, dst))
                return 2;
        } else {
            fprintf(stderr, "wino tune: unknown option \"%s\" (wino tune --help)\n", a);
            return 2;
        }
    }
    if (check) {
        enum wino_status st = wino_tuning_cache_check(check);
        if (st) {
            fprintf(stderr, "wino tune: %s\n", wino_last_error());
            return 1;
        }
        printf("%s: a valid tuning cache\n", check);
        return 0;
    }
    if (!cache || !set) {
        fprintf(stderr, "wino tune: --cache and --set are required (wino tune --help)\n");
        return 2;
    }
    struct bench_layer *layers = NULL;
    int count = 0;
    int rc = bench_read_set(dir, set, &layers, &count);
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
