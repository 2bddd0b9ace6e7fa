/* `wino bench`: times wino and the CPU baselines (oneDNN, im2col + OpenBLAS) on a named layer
 * set in one process, after checking each one's output against the FP64 reference: forward
 * convolution, or with --op the backward-data and backward-filter ones (wino and oneDNN).
 * `--backend cuda` is tools/cmd_bench_cuda.c, `--backend opencl` tools/bench_wino_opencl.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_cuda.h"
#include "cli.h"
#include "base/threads.h"

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
    IMPL_BEST_MEASURED, /* INT8 and backward: not a kernel, the fastest row of this run */
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

/* Whether implementation i has rows for this op and dtype: INT8 wino-auto only with a tuning
 * cache (without one AUTO's rule runs what a wino-winograd or wino-direct row runs), no
 * backward im2col baseline; best-measured is computed from the others. */
static int impl_measured(const struct bench_args *a, enum impl i)
{
    if (i == IMPL_BEST_MEASURED)
        return 0;
    if (a->op != BENCH_FWD)
        return i != IMPL_OPENBLAS;
    return !(a->dtype == BENCH_INT8 && i == IMPL_WINO_AUTO && !a->tuning_cache);
}

/* The wino-winograd rows of an op: forward and backward-data one per tile m (backward-data
 * runs the forward engine), backward-filter one (WinRS picks its kernels). */
static int winograd_rows(const struct bench_args *a)
{
    return a->op == BENCH_BWD_FILTER ? 1 : (int)(sizeof winograd_tiles / sizeof *winograd_tiles);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: wino bench [--backend cpu] --set NAME|FILE [--layer L ...] [--batch N]\n"
            "                  [--op fwd|bwd-data|bwd-filter] [--dtype f32|int8] [--threads T]\n"
            "                  [--reps R] [--warmup W] [--impl LIST] [--tuning-cache FILE]\n"
            "                  [--sets-dir DIR] [--csv]\n"
            "       wino bench --backend cuda --set NAME ...\n"
            "                  (the GPU bench: wino bench --backend cuda --help)\n"
            "       wino bench --backend opencl --set NAME ...\n"
            "                  (wino's OpenCL kernels: wino bench --backend opencl --help)\n"
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
            "as int8 (scale max |y| / 127); wino runs its INT8 Winograd tiles and its INT8 direct\n"
            "convolution (each checked byte for byte against the integer specification), oneDNN\n"
            "u8s8 with per-channel weight scales; errors are of the dequantized output (at most\n"
            "%g). With --tuning-cache F (written by `wino tune --dtype int8`), wino-auto is the\n"
            "library's own INT8 AUTO operator following F, calibrated for the tile it takes\n"
            "(none without F: AUTO's shape rule runs F(4x4, 3x3) or direct, as those rows do);\n"
            "best-measured is the faster of wino's best tile and oneDNN's direct kernel in this\n"
            "run (a per-layer choice, Mori et al. Table 3's \"Best\"): it names the kernel it\n"
            "copies and is never a wino row.\n"
            "With --op bwd-data (dx from dy and w) or bwd-filter (dw from x and dy), FP32: wino's\n"
            "backward operators (wino-winograd: backward-data through the forward Winograd tile\n"
            "m, backward-filter WinRS with the kernels it plans, tile F{n}_{r}[+F{n}_{r}]) and\n"
            "oneDNN's backward_data / backward_weights primitives; dy is uniform in (-1, 1) too,\n"
            "effective GFLOP/s count the same FLOPs, and best-measured is the fastest row of\n"
            "the layer. The FP64 reference of a large layer is computed for some images and\n"
            "channels (first, last, evenly spread; at most %.3g multiply-adds), the error over\n"
            "those slices of the output.\n"
            "\n"
            "  --backend cpu    the backend (cuda: wino vs cuDNN, see --backend cuda --help;\n"
            "                   opencl: see --backend opencl --help)\n"
            "  --op OP          fwd (default), bwd-data or bwd-filter (FP32, --backend cpu)\n"
            BENCH_LAYER_USAGE
            "  --tuning-cache F wino-auto follows the choices `wino tune` recorded in F (refused\n"
            "                   when F is missing, not a regular file or not a valid cache);\n"
            "                   --dtype int8: those of `wino tune --dtype int8`\n"
            "  --batch N        override every layer's batch size\n"
            "  --dtype T        f32 (default) or int8\n"
            "  --threads T      threads of every implementation (default: wino's, OMP_NUM_THREADS\n"
            "                   or else the CPUs of the affinity mask); sets\n"
            "                   wino's context, omp_set_num_threads for oneDNN (OpenMP build),\n"
            "                   openblas_set_num_threads\n"
            "  --reps R         timed runs per implementation (default 10)\n"
            "  --warmup W       untimed runs before them (default 2; W > 0: 10 ms at least)\n"
            "  --impl LIST      comma list of implementations to run (default: all available):\n",
            BOUND_DIRECT, BOUND_WINOGRAD, BENCH_BOUND_INT8, BENCH_REFERENCE_MACS);
    for (int i = 0; i < IMPL_COUNT; i++) {
        const char *note = i == IMPL_WINO_WINOGRAD   ? "(a row per tile m 2, 4, 6; bwd-filter: one)"
                           : i == IMPL_BEST_MEASURED ? "(int8, bwd-data, bwd-filter)"
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
            "                   best-measured ran; op: fwd, bwd-data or bwd-filter)\n"
            "  -h, --help       this text\n"
            "Options may also be written --name=value.\n",
            BENCH_CSV_COLUMNS ",op");
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
    a->reps = a->warmup = a->cl_device = -1;
    a->budget = BENCH_CL_BUDGET;
    a->candidates = BENCH_CL_CANDIDATES;
    for (int i = 0; i < IMPL_COUNT; i++)
        if (impl_available((enum impl)i))
            a->impls |= 1u << i;
    enum { CPU = 1u << BENCH_CPU, CUDA = 1u << BENCH_CUDA, OPENCL = 1u << BENCH_OPENCL };
    const struct cli_option options[] = {
        {"--backend", CLI_MODE, &a->backend, 0, 0, 0, "cpu|cuda|opencl", NULL},
        BENCH_LAYER_OPTIONS(&a->layers, 0),
        {"--dtype", CLI_CHOICE, &a->dtype, 0, 0, 0, "f32|f16|int8|bf16", NULL},
        {"--op", CLI_CHOICE, &a->op, 0, 0, 0, BENCH_OP_CHOICES, NULL},
        {"--batch", CLI_LONG, &a->batch, 0, 1, 65536, NULL, NULL},
        {"--reps", CLI_LONG, &a->reps, 0, 1, 1000000, NULL, NULL},
        {"--warmup", CLI_LONG, &a->warmup, 0, 0, 1000000, NULL, NULL},
        {"--csv", CLI_FLAG, &a->csv, 0, 0, 0, NULL, NULL},
        {"--threads", CLI_LONG, &a->threads, CPU, 1, WINO_MAX_THREADS, NULL, NULL},
        {"--impl", CLI_CALL, &a->impls, CPU, 0, 0, NULL, parse_impls},
        {"--tuning-cache", CLI_STRING, &a->tuning_cache, CPU | OPENCL, 0, 0, NULL, NULL},
        {"--device", CLI_LONG, &a->device, CUDA, 0, 1023, NULL, NULL},
        {"--cl-device", CLI_LONG, &a->cl_device, OPENCL, 0, 1023, NULL, NULL},
        {"--tune", CLI_FLAG, &a->tune, OPENCL, 0, 0, NULL, NULL},
        {"--budget", CLI_LONG, &a->budget, OPENCL, 0, 1000000, NULL, NULL},
        {"--candidates", CLI_LONG, &a->candidates, OPENCL, 0, 1000000, NULL, NULL},
        {NULL, CLI_FLAG, NULL, 0, 0, 0, NULL, NULL}};
    const enum cli_result r = cli_parse_args(VERB, options, argc, argv, NULL);
    if (r == CLI_HELP) {
        if (a->backend == BENCH_CUDA)
            bench_cuda_usage(stdout);
        else if (a->backend == BENCH_OPENCL)
            bench_opencl_usage(stdout);
        else
            usage(stdout);
        return -1;
    }
    if (r)
        return r;
    if (a->backend == BENCH_OPENCL &&
        ((a->dtype != BENCH_F32 && a->dtype != BENCH_F16) || a->op != BENCH_FWD))
        return cli_usage_error(VERB, "--backend opencl runs --op fwd in --dtype f32 or f16 only");
    if (a->backend == BENCH_CPU && (a->dtype == BENCH_F16 || a->dtype == BENCH_BF16))
        return cli_usage_error(VERB, "--dtype %s runs on --backend cuda only",
                               a->dtype == BENCH_F16 ? "f16" : "bf16");
    if (a->dtype == BENCH_BF16 && a->op != BENCH_BWD_FILTER)
        return cli_usage_error(VERB, "--dtype bf16: wino runs BF16 in --op bwd-filter only");
    if (a->op != BENCH_FWD && a->backend == BENCH_CUDA && a->dtype == BENCH_INT8)
        return cli_usage_error(VERB, "--op %s on --backend cuda: f32 or f16 (int8 is for "
                                     "inference)",
                               bench_op_name(a->op));
    if (a->op != BENCH_FWD && a->backend == BENCH_CPU && a->dtype != BENCH_F32)
        return cli_usage_error(VERB, "--op %s runs in f32 only on the cpu",
                               bench_op_name(a->op));
    /* wino ignores a cache it cannot use; the bench says so, as this one was asked for */
    if (a->backend == BENCH_CPU && a->tuning_cache &&
        wino_tuning_cache_check(a->tuning_cache) != WINO_SUCCESS)
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

/* The rows best-measured chooses from. INT8: wino's INT8 tiles and oneDNN's direct kernel (Mori
 * et al. Table 3's per-layer "Best"); backward: every row of the layer. */
static int measured_candidate(const struct bench_args *a, enum impl i)
{
    return a->op != BENCH_FWD || i == IMPL_WINO_WINOGRAD || i == IMPL_ONEDNN_DIRECT;
}

/* best-measured: the fastest candidate row of this run. Returns 1 when *out was filled. */
static int measured_choice(const struct bench_args *a, const struct row *rows, int n,
                           struct row *out)
{
    const struct row *best = NULL;
    for (int i = 0; i < n; i++)
        if (rows[i].status == ROW_OK && measured_candidate(a, rows[i].impl) &&
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
    if (pb->int8 && impl == IMPL_OPENBLAS) {
        memset(r, 0, sizeof *r);
        snprintf(r->info, sizeof r->info, "no INT8 path");
        return BENCH_SKIP;
    }
    const enum wino_algo algo = impl == IMPL_WINO_AUTO       ? WINO_ALGO_AUTO
                                : impl == IMPL_WINO_WINOGRAD ? WINO_ALGO_WINOGRAD
                                                             : WINO_ALGO_DIRECT;
    const int wino_tile = algo == WINO_ALGO_WINOGRAD ? tile_m : 0; /* wino's rows' */
    if (pb->int8 && impl <= IMPL_WINO_DIRECT)
        return bench_wino_int8_prepare(pb, algo, wino_tile, r);
    if (pb->op != BENCH_FWD && impl <= IMPL_WINO_DIRECT)
        return bench_wino_backward_prepare(pb, algo, pb->op == BENCH_BWD_DATA ? wino_tile : 0, r);
    switch (impl) {
    case IMPL_WINO_AUTO:
    case IMPL_WINO_WINOGRAD:
    case IMPL_WINO_DIRECT: return bench_wino_prepare(pb, algo, wino_tile, r);
    case IMPL_ONEDNN_DIRECT: return bench_onednn_prepare(pb, 0, r);
    case IMPL_ONEDNN_WINOGRAD: return bench_onednn_prepare(pb, 1, r);
    default: return bench_openblas_prepare(pb, r);
    }
}

/* Prepares, checks and times one implementation into *row; returns 0 when there is no row
 * (skipped), 1 when *row was filled (status says whether it may be reported). */
static int measure(const struct bench_args *a, const char *layer, enum impl impl, int tile_m,
                   const struct bench_problem *pb, const struct bench_check *check, float *y,
                   double *times, struct row *row)
{
    struct bench_runner r;
    char label[64];
    snprintf(label, sizeof label, "%s", impl_names[impl]);
    if (impl == IMPL_WINO_WINOGRAD && winograd_rows(a) > 1)
        snprintf(label, sizeof label, "%s m=%d", impl_names[impl], tile_m);
    memset(row, 0, sizeof *row);
    row->impl = impl;
    const double t0 = bench_now_ms();
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
    const size_t y_elems = bench_output_elems(pb);
    for (size_t i = 0; i < y_elems; i++)
        y[i] = NAN;
    if (r.run(r.state) || r.output(r.state, y)) {
        fprintf(stderr, "wino " VERB ": %s %s failed while running\n", layer, label);
        row->status = ROW_ERROR;
        r.destroy(r.state);
        return 1;
    }
    row->rel_l1 = bench_check_error(check, y);
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
    const int failed = bench_time_runs(&r, a->warmup, a->reps, times, &row->ms);
    r.destroy(r.state);
    if (failed) {
        fprintf(stderr, "wino " VERB ": %s %s failed while running\n", layer, label);
        row->status = ROW_ERROR;
    }
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
        printf(",%s\n", bench_op_name(a->op));
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
    struct bench_problem pb = {bench_layer_desc(&layer), 0, 0, a->op, NULL, NULL, NULL,
                               (int)a->threads, a->tuning_cache, 0, 0.0f, 0.0f};
    if (wino_conv2d_output_size(&pb.desc, &pb.p, &pb.q) != WINO_SUCCESS) {
        fprintf(stderr, "wino " VERB ": %s: %s\n", l->name, wino_last_error());
        return 1;
    }
    const struct wino_conv2d_desc *d = &pb.desc;
    const size_t x_n = (size_t)d->n * d->c * d->h * d->w, w_n = (size_t)d->k * d->c * d->r * d->s,
                 dy_n = (size_t)d->n * d->k * pb.p * pb.q;
    const double gflop = 2e-9 * d->n * d->k * d->c * d->r * d->s * pb.p * pb.q;
    /* the op's two inputs: x and w forward, dy and w backward-data, x and dy backward-filter */
    float *x = a->op != BENCH_BWD_DATA ? malloc(x_n * sizeof *x) : NULL,
          *w = a->op != BENCH_BWD_FILTER ? malloc(w_n * sizeof *w) : NULL,
          *dy = a->op != BENCH_FWD ? malloc(dy_n * sizeof *dy) : NULL,
          *y = malloc(bench_output_elems(&pb) * sizeof *y);
    double *times = malloc((size_t)a->reps * sizeof *times);
    struct bench_check check = {0};
    struct row rows[IMPL_COUNT + 2];
    int n = 0, status = 0;
    if ((a->op != BENCH_BWD_DATA && !x) || (a->op != BENCH_BWD_FILTER && !w) ||
        (a->op != BENCH_FWD && !dy) || !y || !times) {
        fprintf(stderr, "wino " VERB ": %s: out of memory\n", l->name);
        status = 1;
        goto done;
    }
    if (x)
        bench_fill_uniform(x, x_n, 2 * (uint64_t)index + 1);
    if (w)
        bench_fill_uniform(w, w_n, 2 * (uint64_t)index + 2);
    if (dy)
        bench_fill_uniform(dy, dy_n, ((uint64_t)index << 32) + 3);
    pb.x = x;
    pb.w = w;
    pb.dy = dy;
    if (int8) /* x through a ReLU, its uint8 step max x / 255 */
        pb.x_scale = bench_relu_u8_scale(x, x_n);
    if (bench_check_prepare(&pb, &check)) {
        fprintf(stderr, "wino " VERB ": %s: out of memory\n", l->name);
        status = 1;
        goto done;
    }
    if (int8) { /* the int8 step of y, max |y| / 127 of the reference (the whole output) */
        pb.int8 = 1;
        pb.y_scale = bench_s8_scale(check.ref, check.elems);
    }
    for (int i = 0; i < IMPL_COUNT; i++) {
        if (!(a->impls & (1u << i)) || !impl_measured(a, (enum impl)i))
            continue;
        const int tiles = i == IMPL_WINO_WINOGRAD ? winograd_rows(a) : 1;
        for (int t = 0; t < tiles; t++) {
            n += measure(a, l->name, (enum impl)i, winograd_tiles[t], &pb, &check, y, times,
                         &rows[n]);
            if (n && rows[n - 1].status != ROW_OK)
                status = 1;
        }
    }
    if ((int8 || a->op != BENCH_FWD) && (a->impls & (1u << IMPL_BEST_MEASURED)) &&
        measured_choice(a, rows, n, &rows[n]))
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
    free(dy);
    free(y);
    free(times);
    bench_check_release(&check);
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
    if (a.backend != BENCH_CPU) {
        rc = a.backend == BENCH_CUDA ? bench_cuda_run(&a, layers, count)
                                     : bench_opencl_run(&a, layers, count);
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
        printf("%s\n", BENCH_CSV_COLUMNS ",op");
    else
        printf("wino bench: set %s (%d layers), cpu, %s %s, %s, median of %ld after %ld "
               "warm-up%s\n",
               a.set, count, bench_op_name(a.op),
               a.dtype == BENCH_INT8 ? "int8 (GOP/s for GFLOP/s)" : "f32", device, a.reps,
               a.warmup, a.warmup == 1 ? "" : "s");
    int status = 0;
    for (int i = 0; i < count; i++)
        status |= bench_layer(&a, &layers[i], i, device);
    free(layers);
    return status ? 1 : 0;
}
