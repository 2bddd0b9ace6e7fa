/* `wino bench`: times wino and the CPU baselines (oneDNN, im2col + OpenBLAS) on a named layer
 * set in one process, after checking each one's output against the FP64 reference.
 * `--backend cuda` is tools/cmd_bench_cuda.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_cuda.h"
#include "cli.h"
#include "base/threads.h"
#include "ref/conv_ref.h"
#include "ref/error_metrics.h"

#define VERB "bench"

/* Largest relative L1 error against the FP64 reference that still counts as a right answer:
 * FP32 direct / GEMM sums stay near 1e-6; Winograd's error grows with the tile but stays far
 * below a broken result's O(1). */
#define BOUND_DIRECT 1e-4
#define BOUND_WINOGRAD 1e-2

enum impl {
    IMPL_WINO_AUTO,
    IMPL_WINO_WINOGRAD,
    IMPL_WINO_DIRECT,
    IMPL_ONEDNN_DIRECT,
    IMPL_ONEDNN_WINOGRAD,
    IMPL_OPENBLAS,
    IMPL_BEST_MEASURED, /* INT8: not a kernel, the faster row of this run (see usage) */
    IMPL_COUNT
};
static const char *const impl_names[IMPL_COUNT] = {"wino-auto",      "wino-winograd",
                                                   "wino-direct",    "onednn-direct",
                                                   "onednn-winograd", "openblas-im2col",
                                                   "best-measured"};
static const int winograd_tiles[] = {2, 4, 6}; /* the m of wino-winograd's rows */

/* One (layer, implementation) result. */
struct row {
    enum impl impl;
    char tile[24], variant[16], info[160], choice[160];
    enum { ROW_OK, ROW_WRONG, ROW_ERROR } status;
    double ms, prep_ms, rel_l1;
    size_t workspace;
};

static int impl_available(enum impl i)
{
    if (i == IMPL_ONEDNN_DIRECT || i == IMPL_ONEDNN_WINOGRAD)
        return bench_onednn_available();
    if (i == IMPL_OPENBLAS)
        return bench_openblas_available();
    return 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: wino bench [--backend cpu] --set NAME|FILE [--layer L ...] [--batch N]\n"
            "                  [--dtype f32|int8] [--threads T] [--reps R] [--warmup W]\n"
            "                  [--impl LIST] [--tuning-cache FILE] [--sets-dir DIR] [--csv]\n"
            "       wino bench --backend cuda --set NAME ...\n"
            "                  (the GPU bench: wino bench --backend cuda --help)\n"
            "\n"
            "Times FP32 forward convolution of every layer of a set (inputs and weights uniform\n"
            "in (-1, 1), given as NCHW; wino runs NHWC and oneDNN its blocked layouts, converted\n"
            "outside the timing) with wino and the baselines, in this process. Each implementation\n"
            "is first checked once against wino's FP64 reference (relative L1 error at most %g,\n"
            "%g with a Winograd tile); a wrong result is refused (stderr, exit 1). Time = median\n"
            "of R runs after W warm-ups, CLOCK_MONOTONIC around the run alone: filter preparation,\n"
            "oneDNN's primitive creation and its reorders into its preferred formats are excluded.\n"
            "Effective GFLOP/s count direct-convolution FLOPs 2*N*K*C*R*S*P*Q; `vs oneDNN` is\n"
            "oneDNN's best time (direct or Winograd) over this time (> 1: faster than oneDNN).\n"
            "With --dtype int8: inputs pass a ReLU and run as uint8 (scale max x / 255), outputs\n"
            "as int8 (scale max |y| / 127); wino runs its INT8 Winograd tiles (each checked byte\n"
            "for byte against the integer specification), oneDNN u8s8 with per-channel weight\n"
            "scales; errors are of the dequantized output (at most %g). The library has no INT8\n"
            "choice of its own yet (wino-auto is FP32 only); best-measured is the faster of wino's\n"
            "best tile and oneDNN's direct kernel in this run (a per-layer choice, Mori et al.\n"
            "Table 3's \"Best\"): it names the kernel it copies and is never a wino row.\n"
            "\n"
            "  --backend cpu    the backend (cuda: wino vs cuDNN, see --backend cuda --help)\n"
            BENCH_LAYER_USAGE
            "  --tuning-cache F wino-auto follows the choices `wino tune` recorded in F (refused\n"
            "                   when F is missing, not a regular file or not a valid cache)\n"
            "  --batch N        override every layer's batch size\n"
            "  --dtype T        f32 (default) or int8\n"
            "  --threads T      threads of every implementation (default: wino's, OMP_NUM_THREADS\n"
            "                   or else the CPUs of the affinity mask); sets\n"
            "                   wino's context, omp_set_num_threads for oneDNN (OpenMP build),\n"
            "                   openblas_set_num_threads\n"
            "  --reps R         timed runs per implementation (default 10)\n"
            "  --warmup W       untimed runs before them (default 2)\n"
            "  --impl LIST      comma list of implementations to run (default: all available):\n",
            BOUND_DIRECT, BOUND_WINOGRAD, BENCH_BOUND_INT8);
    for (int i = 0; i < IMPL_COUNT; i++) {
        const char *note = i == IMPL_WINO_WINOGRAD   ? "(one row per valid tile m in 2, 4, 6)"
                           : i == IMPL_BEST_MEASURED ? "(int8 only)"
                           : !impl_available((enum impl)i)
                               ? "(unavailable: not found at build time)"
                               : NULL;
        if (note)
            fprintf(out, "                     %-16s%s\n", impl_names[i], note);
        else
            fprintf(out, "                     %s\n", impl_names[i]);
    }
    fprintf(out,
            "  --csv            machine-readable rows, one per (layer, impl), with the header\n"
            "                   %s\n"
            "                   (rel_l1: error against FP64; prepare_ms: untimed preparation;\n"
            "                   variant: wino's Winograd variant; choice: what wino-auto or\n"
            "                   best-measured ran)\n"
            "  -h, --help       this text\n"
            "Options may also be written --name=value.\n",
            BENCH_CSV_COLUMNS);
}

/* The CLI_CALL handler of --impl: the comma list into the bit set at dest. */
static int parse_impls(void *dest, const char *list, char *why, size_t cap)
{
    unsigned *bits = dest;
    *bits = 0;
    for (const char *p = list;; p++) {
        const size_t len = strcspn(p, ",");
        int found = -1;
        for (int i = 0; i < IMPL_COUNT; i++)
            if (strlen(impl_names[i]) == len && !strncmp(p, impl_names[i], len))
                found = i;
        if (found < 0) {
            snprintf(why, cap, "unknown implementation \"%.*s\" (see --help)",
                     (int)(len < 40 ? len : 40), p);
            return 1;
        }
        if (!impl_available((enum impl)found)) {
            snprintf(why, cap, "%s is not available (its library was not found at build)",
                     impl_names[found]);
            return 1;
        }
        *bits |= 1u << found;
        p += len;
        if (!*p)
            return 0;
    }
}

/* Returns 0, -1 for --help (printed), or 2 after one line on stderr. */
static int parse_args(int argc, char **argv, struct bench_args *a)
{
    memset(a, 0, sizeof *a);
    a->reps = a->warmup = -1;
    for (int i = 0; i < IMPL_COUNT; i++)
        if (impl_available((enum impl)i))
            a->impls |= 1u << i;
    enum { CPU = 1u << BENCH_CPU, CUDA = 1u << BENCH_CUDA };
    const struct cli_option options[] = {
        {"--backend", CLI_MODE, &a->backend, 0, 0, 0, "cpu|cuda", NULL},
        BENCH_LAYER_OPTIONS(&a->layers, 0),
        {"--dtype", CLI_CHOICE, &a->dtype, 0, 0, 0, "f32|f16|int8", NULL},
        {"--batch", CLI_LONG, &a->batch, 0, 1, 65536, NULL, NULL},
        {"--reps", CLI_LONG, &a->reps, 0, 1, 1000000, NULL, NULL},
        {"--warmup", CLI_LONG, &a->warmup, 0, 0, 1000000, NULL, NULL},
        {"--csv", CLI_FLAG, &a->csv, 0, 0, 0, NULL, NULL},
        {"--threads", CLI_LONG, &a->threads, CPU, 1, WINO_MAX_THREADS, NULL, NULL},
        {"--impl", CLI_CALL, &a->impls, CPU, 0, 0, NULL, parse_impls},
        {"--tuning-cache", CLI_STRING, &a->tuning_cache, CPU, 0, 0, NULL, NULL},
        {"--device", CLI_LONG, &a->device, CUDA, 0, 1023, NULL, NULL},
        {NULL, CLI_FLAG, NULL, 0, 0, 0, NULL, NULL}};
    const enum cli_result r = cli_parse_args(VERB, options, argc, argv, NULL);
    if (r == CLI_HELP) {
        if (a->backend == BENCH_CUDA)
            bench_cuda_usage(stdout);
        else
            usage(stdout);
        return -1;
    }
    if (r)
        return r;
    if (a->backend == BENCH_CPU && a->dtype == BENCH_F16)
        return cli_usage_error(VERB, "--dtype f16 runs on --backend cuda only");
    /* wino ignores a cache it cannot use; the bench says so, as this one was asked for */
    if (a->tuning_cache && wino_tuning_cache_check(a->tuning_cache) != WINO_SUCCESS)
        return cli_usage_error(VERB, "--tuning-cache: %s", wino_last_error());
    if (a->backend == BENCH_CPU && !a->threads) /* named in the report, given to every library */
        a->threads = wino_default_threads();
    return 0;
}

/* "MODEL (T threads)" from /proc/cpuinfo's first model name. */
static void device_name(char *buf, size_t cap, long threads)
{
    char line[512], model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (!strncmp(line, "model name", 10) && colon) {
            snprintf(model, sizeof model, "%s", colon + 1 + strspn(colon + 1, " \t"));
            model[strcspn(model, "\r\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
    snprintf(buf, cap, "%s (%ld thread%s)", model, threads, threads == 1 ? "" : "s");
}

/* INT8 problems: x through a ReLU, the shared scales x_scale = max x / 255 and y_scale =
 * max |y| / 127, and the FP64 reference of that input. */
static void int8_problem(struct bench_problem *pb, float *x, size_t x_n, double *ref, size_t y_n)
{
    pb->x_scale = bench_relu_u8_scale(x, x_n);
    wino_ref_conv2d_fwd(&pb->desc, x, pb->w, ref);
    pb->int8 = 1;
    pb->y_scale = bench_s8_scale(ref, y_n);
}

/* INT8 best-measured: the faster of wino's best INT8 tile and oneDNN's direct kernel of this
 * run (Mori et al. Table 3's per-layer "Best"). Returns 1 when *out was filled. */
static int measured_choice(const struct row *rows, int n, struct row *out)
{
    const struct row *best = NULL;
    for (int i = 0; i < n; i++)
        if (rows[i].status == ROW_OK &&
            (rows[i].impl == IMPL_WINO_WINOGRAD || rows[i].impl == IMPL_ONEDNN_DIRECT) &&
            (!best || rows[i].ms < best->ms))
            best = &rows[i];
    if (!best)
        return 0;
    *out = *best;
    out->impl = IMPL_BEST_MEASURED;
    snprintf(out->choice, sizeof out->choice, "measured: %s%s%s", impl_names[best->impl],
             best->tile[0] ? " " : "", best->tile);
    memcpy(out->info, out->choice, sizeof out->info);
    return 1;
}

static enum bench_prep prepare(enum impl impl, int tile_m, const struct bench_problem *pb,
                               struct bench_runner *r)
{
    if (pb->int8 && impl != IMPL_WINO_WINOGRAD && impl != IMPL_ONEDNN_DIRECT &&
        impl != IMPL_ONEDNN_WINOGRAD) {
        memset(r, 0, sizeof *r);
        snprintf(r->info, sizeof r->info, "no INT8 path");
        return BENCH_SKIP;
    }
    if (pb->int8 && impl == IMPL_WINO_WINOGRAD)
        return bench_wino_int8_prepare(pb, tile_m, r);
    switch (impl) {
    case IMPL_WINO_AUTO: return bench_wino_prepare(pb, WINO_ALGO_AUTO, 0, r);
    case IMPL_WINO_WINOGRAD: return bench_wino_prepare(pb, WINO_ALGO_WINOGRAD, tile_m, r);
    case IMPL_WINO_DIRECT: return bench_wino_prepare(pb, WINO_ALGO_DIRECT, 0, r);
    case IMPL_ONEDNN_DIRECT: return bench_onednn_prepare(pb, 0, r);
    case IMPL_ONEDNN_WINOGRAD: return bench_onednn_prepare(pb, 1, r);
    default: return bench_openblas_prepare(pb, r);
    }
}

/* Prepares, checks and times one implementation into *row; returns 0 when there is no row
 * (skipped), 1 when *row was filled (status says whether it may be reported). */
static int measure(const struct bench_args *a, const char *layer, enum impl impl, int tile_m,
                   const struct bench_problem *pb, const double *ref, float *y, double *times,
                   struct row *row)
{
    struct bench_runner r;
    char label[64];
    snprintf(label, sizeof label, "%s", impl_names[impl]);
    if (impl == IMPL_WINO_WINOGRAD)
        snprintf(label, sizeof label, "%s m=%d", impl_names[impl], tile_m);
    memset(row, 0, sizeof *row);
    row->impl = impl;
    double t0 = bench_now_ms();
    const enum bench_prep prep = prepare(impl, tile_m, pb, &r);
    row->prep_ms = bench_now_ms() - t0;
    snprintf(row->info, sizeof row->info, "%s", r.info);
    if (prep == BENCH_SKIP) {
        fprintf(stderr, "wino " VERB ": note: %s %s skipped: %s\n", layer, label, r.info);
        return 0;
    }
    if (prep == BENCH_FAIL) {
        fprintf(stderr, "wino " VERB ": %s %s failed: %s\n", layer, label, r.info);
        row->status = ROW_ERROR;
        return 1;
    }
    snprintf(row->tile, sizeof row->tile, "%s", r.tile);
    snprintf(row->variant, sizeof row->variant, "%s", r.variant);
    if (impl == IMPL_WINO_AUTO) /* what the library chose */
        snprintf(row->choice, sizeof row->choice, "%s%s%s%s", r.tile[0] ? "winograd " : "direct",
                 r.tile, r.variant[0] ? " " : "", r.variant);
    row->workspace = r.workspace_bytes;
    const size_t y_elems = (size_t)pb->desc.n * pb->desc.k * pb->p * pb->q;
    for (size_t i = 0; i < y_elems; i++)
        y[i] = NAN;
    if (r.run(r.state) || r.output(r.state, y)) {
        fprintf(stderr, "wino " VERB ": %s %s failed while running\n", layer, label);
        row->status = ROW_ERROR;
        r.destroy(r.state);
        return 1;
    }
    row->rel_l1 = wino_rel_l1_f32(y, ref, y_elems);
    const double bound = pb->int8 ? BENCH_BOUND_INT8 : row->tile[0] ? BOUND_WINOGRAD : BOUND_DIRECT;
    if (!(row->rel_l1 <= bound)) {
        fprintf(stderr,
                "wino " VERB ": %s %s %s: wrong result (relative L1 error %.3g > %g), not "
                "reported\n",
                layer, label, row->tile, row->rel_l1, bound);
        row->status = ROW_WRONG;
        r.destroy(r.state);
        return 1;
    }
    int failed = 0;
    for (long i = 0; i < a->warmup && !failed; i++)
        failed = r.run(r.state);
    for (long i = 0; i < a->reps && !failed; i++) {
        t0 = bench_now_ms();
        failed = r.run(r.state);
        times[i] = bench_now_ms() - t0;
    }
    r.destroy(r.state);
    if (failed) {
        fprintf(stderr, "wino " VERB ": %s %s failed while running\n", layer, label);
        row->status = ROW_ERROR;
        return 1;
    }
    row->ms = bench_median(times, a->reps);
    return 1;
}

static void print_table(const struct bench_layer *l, const struct bench_problem *pb,
                        double gflop, const struct row *rows, int n, double onednn_best)
{
    printf("\n%s: N=%d C=%d H=%d W=%d K=%d R=%d S=%d pad=%d stride=%d -> %dx%d, %.3g GFLOP\n",
           l->name, pb->desc.n, l->c, l->h, l->w, l->k, l->r, l->s, l->pad, l->stride, pb->p,
           pb->q, gflop);
    printf("  %-16s %-10s %10s %9s %9s %12s %9s %10s  %s\n", "impl", "tile", "ms", "GFLOP/s",
           "vs oneDNN", "workspace_B", "rel_L1", "prepare_ms", "info");
    for (int i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        printf("  %-16s %-10s ", impl_names[r->impl], r->tile[0] ? r->tile : "-");
        if (r->status != ROW_OK) {
            printf("%10s  %s\n", r->status == ROW_WRONG ? "WRONG" : "ERROR", r->info);
            continue;
        }
        char ratio[16] = "-";
        if (onednn_best > 0)
            snprintf(ratio, sizeof ratio, "%.2fx", onednn_best / r->ms);
        printf("%10.4f %9.1f %9s %12zu %9.2e %10.1f  %s\n", r->ms, gflop / r->ms * 1e3, ratio,
               r->workspace, r->rel_l1, r->prep_ms, r->info);
    }
}

static void print_csv_rows(const struct bench_args *a, const struct bench_layer *l,
                           double gflop, const struct row *rows, int n, const char *device)
{
    for (int i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        if (r->status != ROW_OK)
            continue; /* refused: the reason went to stderr */
        const struct bench_csv_row csv = {
            a->set, l, a->dtype == BENCH_INT8 ? "int8" : "f32", "cpu", impl_names[r->impl],
            r->tile, r->ms, gflop, r->workspace, device, r->rel_l1, r->prep_ms, r->variant,
            a->threads, r->choice};
        bench_csv_row(&csv);
        putchar('\n');
    }
}

/* Runs every selected implementation on one layer. Returns 0, or 1 if any failed or was wrong. */
static int bench_layer(const struct bench_args *a, const struct bench_layer *l, int index,
                       const char *device)
{
    const int int8 = a->dtype == BENCH_INT8;
    struct bench_layer layer = *l;
    if (a->batch)
        layer.n = (int)a->batch;
    struct bench_problem pb = {bench_layer_desc(&layer), 0, 0, NULL, NULL, (int)a->threads,
                               a->tuning_cache, 0, 0.0f, 0.0f};
    if (wino_conv2d_output_size(&pb.desc, &pb.p, &pb.q) != WINO_SUCCESS) {
        fprintf(stderr, "wino " VERB ": %s: %s\n", l->name, wino_last_error());
        return 1;
    }
    const struct wino_conv2d_desc *d = &pb.desc;
    const size_t x_n = (size_t)d->n * d->c * d->h * d->w, w_n = (size_t)d->k * d->c * d->r * d->s,
                 y_n = (size_t)d->n * d->k * pb.p * pb.q;
    const double gflop = 2e-9 * d->n * d->k * d->c * d->r * d->s * pb.p * pb.q;
    float *x = malloc(x_n * sizeof *x), *w = malloc(w_n * sizeof *w), *y = malloc(y_n * sizeof *y);
    double *ref = malloc(y_n * sizeof *ref), *times = malloc((size_t)a->reps * sizeof *times);
    struct row rows[IMPL_COUNT + 2];
    int n = 0, status = 0;
    if (!x || !w || !y || !ref || !times) {
        fprintf(stderr, "wino " VERB ": %s: out of memory\n", l->name);
        status = 1;
        goto done;
    }
    bench_fill_uniform(x, x_n, 2 * (uint64_t)index + 1);
    bench_fill_uniform(w, w_n, 2 * (uint64_t)index + 2);
    pb.x = x;
    pb.w = w;
    if (int8)
        int8_problem(&pb, x, x_n, ref, y_n);
    else
        wino_ref_conv2d_fwd(d, x, w, ref);
    for (int i = 0; i < IMPL_COUNT; i++) {
        if (!(a->impls & (1u << i)) || (int8 && i == IMPL_WINO_AUTO) || i == IMPL_BEST_MEASURED)
            continue; /* no INT8 AUTO in the library; best-measured: below */
        const int tiles = i == IMPL_WINO_WINOGRAD ? 3 : 1;
        for (int t = 0; t < tiles; t++) {
            n += measure(a, l->name, (enum impl)i, winograd_tiles[t], &pb, ref, y, times, &rows[n]);
            if (n && rows[n - 1].status != ROW_OK)
                status = 1;
        }
    }
    if (int8 && (a->impls & (1u << IMPL_BEST_MEASURED)) && measured_choice(rows, n, &rows[n]))
        n++;
    double onednn_best = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].status == ROW_OK &&
            (rows[i].impl == IMPL_ONEDNN_DIRECT || rows[i].impl == IMPL_ONEDNN_WINOGRAD) &&
            (onednn_best == 0 || rows[i].ms < onednn_best))
            onednn_best = rows[i].ms;
    if (a->csv)
        print_csv_rows(a, &layer, gflop, rows, n, device);
    else
        print_table(&layer, &pb, gflop, rows, n, onednn_best);
    fflush(stdout);
done:
    free(x);
    free(w);
    free(y);
    free(ref);
    free(times);
    return status;
}

int wino_cmd_bench(int argc, char **argv)
{
    struct bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bench_layer *layers = NULL;
    int count = 0;
    if ((rc = bench_load_layers(VERB, &a.layers, NULL, &layers, &count, a.set, sizeof a.set)))
        return rc;
    if (a.backend == BENCH_CUDA) {
        rc = bench_cuda_run(&a, layers, count);
        free(layers);
        return rc;
    }
    a.reps = a.reps < 0 ? 10 : a.reps;
    a.warmup = a.warmup < 0 ? 2 : a.warmup;
    bench_onednn_set_threads((int)a.threads);
    bench_openblas_set_threads((int)a.threads);
    char device[320];
    device_name(device, sizeof device, a.threads);
    if (a.csv)
        printf("%s\n", BENCH_CSV_COLUMNS);
    else
        printf("wino bench: set %s (%d layers), cpu, %s, %s, median of %ld after %ld "
               "warm-up%s\n",
               a.set, count, a.dtype == BENCH_INT8 ? "int8 (GOP/s for GFLOP/s)" : "f32", device,
               a.reps, a.warmup, a.warmup == 1 ? "" : "s");
    int status = 0;
    for (int i = 0; i < count; i++)
        status |= bench_layer(&a, &layers[i], i, device);
    free(layers);
    return status ? 1 : 0;
}
