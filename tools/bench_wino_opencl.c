/* `wino bench --backend opencl`: wino's OpenCL kernels on a layer set, NHWC FP32 or FP16 forward,
 * with the default kernel parameters (wino-opencl) and the tuned ones (wino-opencl-tuned: a
 * tuning database's entry, or the one --tune searches first), non-fused and fused; each output is
 * checked against the FP64 reference, then timed between markers on the queue (median), as the
 * CUDA bench times between events. Also the OpenCL device the CLI opens, `wino tune --backend
 * opencl`'s too. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/conv_desc.h"
#include "base/half.h"
#include "bench.h"
#include "cli.h"
#include "op/opencl_tuning.h"

void bench_opencl_params_text(const struct wino_opencl_params *p, int fused, char *buf,
                              size_t cap)
{
    if (fused)
        snprintf(buf, cap, "fused %dx%d kpt%d fc%d", p->fused_ft, p->fused_fk, p->fused_kpt,
                 p->fused_fc);
    else
        snprintf(buf, cap, "gemm %dx%d/%dx%d bk%d %s chunk%d", p->gemm_bm, p->gemm_bn,
                 p->gemm_rm, p->gemm_rn, p->gemm_bk, p->gemm_local ? "local" : "global",
                 p->gemm_chunk);
}

void bench_opencl_bounds_text(long budget, long candidates, char *buf, size_t cap)
{
    char time[32] = "no time bound", count[32] = "no candidate bound";
    if (budget)
        snprintf(time, sizeof time, "%ld s", budget);
    if (candidates)
        snprintf(count, sizeof count, "%ld candidates", candidates);
    snprintf(buf, cap, "%s and %s", time, count);
}

#ifndef WINO_HAVE_OPENCL

#define NO_OPENCL "--backend opencl: this build has no OpenCL"

void bench_opencl_usage(FILE *out)
{
    fprintf(out, "wino bench " NO_OPENCL "\n");
}

int bench_opencl_open(const char *verb, long index, struct bench_opencl *cl)
{
    (void)index;
    memset(cl, 0, sizeof *cl);
    return cli_usage_error(verb, NO_OPENCL);
}

void bench_opencl_close(struct bench_opencl *cl)
{
    (void)cl;
}

int bench_opencl_run(const struct bench_args *a, const struct bench_layer *layers, int count)
{
    (void)a;
    (void)layers;
    (void)count;
    return cli_usage_error("bench", NO_OPENCL);
}

#else

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cpu/layout_f32.h"

/* Largest relative L1 error against the FP64 reference that counts as right: the CUDA bench's
 * FP32 bound (wino's worst tile, F(8,3), stays near 1e-5; FP16, y's rounding, near 2e-4). */
#define BOUND 1e-3
#define MAX_DEVICES 64

void bench_opencl_usage(FILE *out)
{
    fprintf(out,
            "usage: wino bench --backend opencl --set NAME|FILE [--layer L ...] [--batch N]\n"
            "                  [--dtype f32|f16] [--cl-device D] [--tuning-cache FILE]\n"
            "                  [--tune [--budget S]\n"
            "                  [--candidates N]] [--reps R] [--warmup W] [--sets-dir DIR]\n"
            "                  [--csv]\n"
            "\n"
            "Times wino's OpenCL kernels on every layer of a set, FP32 (or --dtype f16: FP16\n"
            "tensors, FP32 arithmetic) forward in NHWC (inputs and weights uniform in (-1, 1),\n"
            "rounded to FP16 for f16, converted outside the timing), on one OpenCL device:\n"
            "  wino-opencl        the default kernel parameters, non-fused and fused\n"
            "  wino-opencl-tuned  the parameters of the tuning database's entry for the layer and\n"
            "                     device (--tuning-cache, written by `wino tune --backend opencl`\n"
            "                     or by --tune), non-fused and fused; the choice column names\n"
            "                     them and which variant AUTO runs\n"
            "Each row is first checked once against wino's FP64 reference (relative L1 error at\n"
            "most %g; a wrong result is refused: stderr, exit 1). Time = median of R runs after W\n"
            "warm-ups, each between two markers on the queue (the difference of their profiling\n"
            "end times; the runs are enqueued back to back, as the CUDA bench's between events):\n"
            "filter transform and kernel builds are excluded (their time is prepare_ms).\n"
            "\n"
            BENCH_LAYER_USAGE
            "  --batch N        override every layer's batch size\n"
            "  --dtype T        f32 (default) or f16\n"
            "  --cl-device D    the device's index over every platform's devices (default:\n"
            "                   $%s, else the first GPU, else the first device)\n"
            "  --tuning-cache F the tuning database of the wino-opencl-tuned rows (a layer\n"
            "                   without an entry has none: a note)\n"
            "  --tune           search each layer first (`wino tune --backend opencl`) and store\n"
            "                   the result in F (without --tuning-cache: a temporary file)\n"
            "  --budget S       seconds of search per layer (default %d; 0: no time bound)\n"
            "  --candidates N   candidates per layer at most (default %d: no bound)\n"
            "  --reps R         timed runs per row, and per candidate of --tune (default 10)\n"
            "  --warmup W       untimed runs before them (default 2)\n"
            "  --csv            machine-readable rows, the CPU bench's columns (threads empty)\n"
            "                   then layout,op\n"
            "  -h, --help       this text\n"
            "Options may also be written --name=value.\n",
            BOUND, BENCH_CL_DEVICE_ENV, BENCH_CL_BUDGET, BENCH_CL_CANDIDATES);
}

/* ---- the device ---- */

/* The name of the device's string parameter into buf (cap bytes). */
static void device_text(cl_device_id d, cl_device_info what, char *buf, size_t cap)
{
    if (clGetDeviceInfo(d, what, cap - 1, buf, NULL) != CL_SUCCESS)
        snprintf(buf, cap, "?");
    buf[cap - 1] = '\0';
}

int bench_opencl_open(const char *verb, long index, struct bench_opencl *cl)
{
    memset(cl, 0, sizeof *cl);
    const char *named = getenv(BENCH_CL_DEVICE_ENV);
    if (index < 0 && named && named[0] && (cli_to_long(named, &index) || index < 0))
        return cli_usage_error(verb, "%s=%s: not a device index", BENCH_CL_DEVICE_ENV, named);
    cl_platform_id platforms[16], of[MAX_DEVICES];
    cl_device_id devices[MAX_DEVICES];
    cl_uint np = 0;
    int count = 0;
    if (clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS)
        np = 0;
    for (cl_uint p = 0; p < np && p < 16; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, (cl_uint)(MAX_DEVICES - count),
                           devices + count, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && count < MAX_DEVICES; d++)
            of[count++] = platforms[p];
    }
    if (!count)
        return cli_usage_error(verb, "--backend opencl: no OpenCL device (Debian: "
                                     "pocl-opencl-icd, or the GPU vendor's ICD)");
    for (int d = 0; index < 0 && d < count; d++) {
        cl_device_type type = 0;
        if (clGetDeviceInfo(devices[d], CL_DEVICE_TYPE, sizeof type, &type, NULL) ==
                CL_SUCCESS &&
            (type & CL_DEVICE_TYPE_GPU))
            index = d;
    }
    if (index < 0)
        index = 0;
    if (index >= count) {
        char list[512] = "", name[128];
        for (int d = 0; d < count; d++) {
            device_text(devices[d], CL_DEVICE_NAME, name, sizeof name);
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d %s", d ? ", " : "",
                     d, name);
        }
        return cli_usage_error(verb, "OpenCL device %ld: this machine has %d (%s)", index, count,
                               list);
    }
    cl_device_id device = devices[index];
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue queue = err == CL_SUCCESS ? clCreateCommandQueue(context, device,
                                                                      CL_QUEUE_PROFILING_ENABLE,
                                                                      &err)
                                               : NULL;
    if (err != CL_SUCCESS) {
        if (context)
            clReleaseContext(context);
        fprintf(stderr, "wino %s: OpenCL context or queue of device %ld: error %d\n", verb,
                index, (int)err);
        return 1;
    }
    cl->device = device;
    cl->context = context;
    cl->queue = queue;
    device_text(device, CL_DEVICE_NAME, cl->name, sizeof cl->name);
    device_text(device, CL_DRIVER_VERSION, cl->driver, sizeof cl->driver);
    if (clGetPlatformInfo(of[index], CL_PLATFORM_NAME, sizeof cl->platform - 1, cl->platform,
                          NULL) != CL_SUCCESS)
        snprintf(cl->platform, sizeof cl->platform, "?");
    return 0;
}

void bench_opencl_close(struct bench_opencl *cl)
{
    if (cl->queue)
        clReleaseCommandQueue(cl->queue);
    if (cl->context)
        clReleaseContext(cl->context);
    memset(cl, 0, sizeof *cl);
}

/* ---- one layer ---- */

/* What every row of a layer shares: the problem, its reference, the device buffers. */
struct layer_run {
    struct bench_layer layer;      /* with the batch that runs */
    struct bench_problem pb;       /* NCHW, the reference's */
    struct bench_check check;
    struct wino_conv2d_desc desc;  /* NHWC, wino's */
    double gflop;
    const struct bench_opencl *cl;
    cl_mem x, w, y;                /* NHWC x, KRSC w, NHWC y, of desc.dtype */
    float *y_nhwc;                 /* y read back */
    uint16_t *y_half;              /* FP16: y as read, before it becomes y_nhwc */
};

/* A buffer of n floats from host (NULL: uninitialized). */
static cl_mem upload(const struct bench_opencl *cl, const float *host, size_t n)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(cl->context, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0),
                              sizeof(float) * (n ? n : 1), (void *)host, &err);
    return err == CL_SUCCESS ? m : NULL;
}

/* A buffer of n elements of lr's dtype holding host's values (FP16: values already FP16;
 * NULL: uninitialized). */
static cl_mem upload_elements(const struct layer_run *lr, const float *host, size_t n)
{
    if (lr->desc.dtype != WINO_DTYPE_F16)
        return upload(lr->cl, host, n);
    uint16_t *h = malloc(sizeof *h * (n ? n : 1));
    if (!h)
        return NULL;
    if (host)
        wino_halves_from_floats(host, h, n);
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(lr->cl->context,
                              CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0),
                              sizeof *h * (n ? n : 1), host ? (void *)h : NULL, &err);
    free(h);
    return err == CL_SUCCESS ? m : NULL;
}

/* Bytes of an element of x, w and y. */
static size_t elem_size(const struct layer_run *lr)
{
    return wino_dtype_size(lr->desc.dtype);
}

static void release_mem(cl_mem m)
{
    if (m)
        clReleaseMemObject(m);
}

static void release_layer(struct layer_run *lr)
{
    release_mem(lr->x);
    release_mem(lr->w);
    release_mem(lr->y);
    free(lr->y_nhwc);
    free(lr->y_half);
    bench_check_release(&lr->check);
}

/* The layer's data (the CPU bench's inputs for the same index), reference and buffers.
 * Returns 0, or 1 after an error line. */
static int setup_layer(const struct bench_args *a, const struct bench_opencl *cl,
                       const struct bench_layer *l, int index, struct layer_run *lr)
{
    memset(lr, 0, sizeof *lr);
    lr->layer = *l;
    if (a->batch)
        lr->layer.n = (int)a->batch;
    lr->cl = cl;
    lr->pb.desc = bench_layer_desc(&lr->layer);
    lr->pb.op = BENCH_FWD;
    if (wino_conv2d_output_size(&lr->pb.desc, &lr->pb.p, &lr->pb.q) != WINO_SUCCESS) {
        fprintf(stderr, "wino bench: %s: %s\n", l->name, wino_last_error());
        return 1;
    }
    const struct wino_conv2d_desc *d = &lr->pb.desc;
    const size_t hw = (size_t)d->h * d->w, rs = (size_t)d->r * d->s,
                 x_n = (size_t)d->n * d->c * hw, w_n = (size_t)d->k * d->c * rs,
                 y_n = (size_t)d->n * d->k * lr->pb.p * lr->pb.q;
    lr->desc = *d;
    lr->desc.layout = WINO_LAYOUT_NHWC;
    lr->desc.dtype = a->dtype == BENCH_F16 ? WINO_DTYPE_F16 : WINO_DTYPE_F32;
    lr->gflop = 2e-9 * d->n * d->k * d->c * d->r * d->s * lr->pb.p * lr->pb.q;
    float *x = malloc(sizeof(float) * x_n), *w = malloc(sizeof(float) * w_n),
          *x_nhwc = malloc(sizeof(float) * x_n), *w_krsc = malloc(sizeof(float) * w_n);
    lr->y_nhwc = malloc(sizeof(float) * y_n);
    lr->y_half = lr->desc.dtype == WINO_DTYPE_F16 ? malloc(sizeof *lr->y_half * y_n) : NULL;
    int rc = !x || !w || !x_nhwc || !w_krsc || !lr->y_nhwc ||
             (lr->desc.dtype == WINO_DTYPE_F16 && !lr->y_half);
    if (!rc) {
        bench_fill_uniform(x, x_n, 2 * (uint64_t)index + 1);
        bench_fill_uniform(w, w_n, 2 * (uint64_t)index + 2);
        /* FP16: the reference is of the values the device sees */
        if (lr->desc.dtype == WINO_DTYPE_F16) {
            wino_round_to_half(x, x_n);
            wino_round_to_half(w, w_n);
        }
        lr->pb.x = x;
        lr->pb.w = w;
        rc = bench_check_prepare(&lr->pb, &lr->check) != 0;
    }
    if (!rc) {
        wino_f32_transpose_batched(x, x_nhwc, d->n, (size_t)d->c, hw, 1, 0);
        wino_f32_transpose_batched(w, w_krsc, d->k, (size_t)d->c, rs, 1, 0);
        lr->x = upload_elements(lr, x_nhwc, x_n);
        lr->w = upload_elements(lr, w_krsc, w_n);
        lr->y = upload_elements(lr, NULL, y_n);
        if (!lr->x || !lr->w || !lr->y) {
            fprintf(stderr, "wino bench: %s: the device's buffers failed\n", l->name);
            rc = 1;
        }
    } else {
        fprintf(stderr, "wino bench: %s: out of memory\n", l->name);
    }
    lr->pb.x = lr->pb.w = NULL; /* freed below: only the reference needed them */
    free(x);
    free(w);
    free(x_nhwc);
    free(w_krsc);
    if (rc)
        release_layer(lr);
    return rc;
}

/* ---- the runner ---- */

struct cl_state {
    const struct layer_run *lr;
    wino_conv2d *op;
    cl_mem workspace;
    size_t workspace_bytes;
};

/* Enqueues one run (cl_output's blocking read waits for it). */
static int cl_run(void *p)
{
    const struct cl_state *st = p;
    return wino_conv2d_run(st->op, st->lr->x, st->lr->y, st->workspace, st->workspace_bytes);
}

/* The median time in ms of reps runs of r (a cl_state), each between two markers on its
 * queue (their profiling end times), after warmup untimed runs; consecutive runs share a
 * marker, so the device runs them back to back while the host enqueues ahead. times: reps
 * doubles of scratch. Returns 0, or 1 when a run or the queue failed. */
static int time_runs(const struct bench_runner *r, long warmup, long reps, double *times,
                     double *ms)
{
    cl_command_queue queue = ((const struct cl_state *)r->state)->lr->cl->queue;
    cl_event *marks = calloc((size_t)reps + 1, sizeof *marks);
    long made = 0;
    int rc = 1;
    if (!marks)
        return 1;
    for (long i = 0; i < warmup; i++)
        if (r->run(r->state))
            goto done;
    for (; made <= reps; made++)
        if ((made && r->run(r->state)) ||
            clEnqueueMarkerWithWaitList(queue, 0, NULL, &marks[made]) != CL_SUCCESS)
            goto done;
    if (clFinish(queue) != CL_SUCCESS)
        goto done;
    cl_ulong prev = 0;
    for (long i = 0; i <= reps; i++) {
        cl_ulong end;
        if (clGetEventProfilingInfo(marks[i], CL_PROFILING_COMMAND_END, sizeof end, &end,
                                    NULL) != CL_SUCCESS)
            goto done;
        if (i)
            times[i - 1] = 1e-6 * (double)(end - prev);
        prev = end;
    }
    *ms = bench_median(times, reps);
    rc = 0;
done:
    for (long i = 0; i < made; i++)
        clReleaseEvent(marks[i]); /* teardown */
    free(marks);
    return rc;
}

static int cl_output(void *p, float *y)
{
    const struct cl_state *st = p;
    const struct layer_run *lr = st->lr;
    const size_t pq = (size_t)lr->pb.p * lr->pb.q, y_n = (size_t)lr->desc.n * lr->desc.k * pq;
    void *to = lr->y_half ? (void *)lr->y_half : (void *)lr->y_nhwc;
    if (clEnqueueReadBuffer(lr->cl->queue, lr->y, CL_TRUE, 0, elem_size(lr) * y_n, to, 0, NULL,
                            NULL) != CL_SUCCESS)
        return 1;
    if (lr->y_half)
        wino_floats_from_halves(lr->y_half, lr->y_nhwc, y_n);
    wino_f32_transpose_batched(lr->y_nhwc, y, lr->desc.n, pq, (size_t)lr->desc.k, 1, 0);
    return 0;
}

static void cl_destroy(void *p)
{
    struct cl_state *st = p;
    if (!st)
        return;
    wino_conv2d_destroy(st->op);
    release_mem(st->workspace);
    free(st);
}

/* A context of the layer's OpenCL device and queue, following database (NULL: none). */
static struct wino_context context_of(const struct layer_run *lr, const char *database)
{
    struct wino_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.backend = WINO_BACKEND_OPENCL;
    ctx.cl_context = lr->cl->context;
    ctx.cl_device = lr->cl->device;
    ctx.stream = lr->cl->queue;
    ctx.tuning_cache = database;
    return ctx;
}

/* wino's operator for the layer with variant (AUTO included), following database (NULL: the
 * defaults); y poisoned with NaN so that an output left unwritten fails the check. *params and
 * *tuned (optional) receive what it runs with. */
static enum bench_prep prepare(const struct layer_run *lr, enum wino_variant variant,
                               const char *database, struct bench_runner *out,
                               struct wino_opencl_params *params, int *tuned)
{
    memset(out, 0, sizeof *out);
    const struct wino_context ctx = context_of(lr, database);
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    o.variant = variant;
    struct cl_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(out->info, sizeof out->info, "out of memory");
        return BENCH_FAIL;
    }
    st->lr = lr;
    const enum wino_status s = wino_conv2d_create(&lr->desc, lr->w, &ctx, &o, &st->op);
    struct wino_opencl_params p;
    int from_database = 0;
    const float nan = NAN;
    const uint16_t nan_half = 0x7e00u;
    const void *poison = lr->y_half ? (const void *)&nan_half : (const void *)&nan;
    const size_t y_bytes = elem_size(lr) * lr->desc.n * lr->desc.k * lr->pb.p * lr->pb.q;
    if (s == WINO_UNSUPPORTED) {
        snprintf(out->info, sizeof out->info, "%s", wino_last_error());
        cl_destroy(st);
        return BENCH_SKIP;
    }
    if (s || wino_conv2d_workspace_size(st->op, &st->workspace_bytes) ||
        wino_conv2d_opencl_params(st->op, &p, &from_database) ||
        (st->workspace_bytes &&
         !(st->workspace = upload(lr->cl, NULL, st->workspace_bytes / sizeof(float) + 1))) ||
        clEnqueueFillBuffer(lr->cl->queue, lr->y, poison, elem_size(lr), 0, y_bytes, 0, NULL,
                            NULL) != CL_SUCCESS) {
        snprintf(out->info, sizeof out->info, "%s", s ? wino_last_error() : "device buffers");
        cl_destroy(st);
        return BENCH_FAIL;
    }
    if (database && !from_database) {
        snprintf(out->info, sizeof out->info, "no entry for this layer and device in %s",
                 database);
        cl_destroy(st);
        return BENCH_SKIP;
    }
    bench_wino_describe(st->op, lr->desc.r, lr->desc.s, out);
    if (params)
        *params = p;
    if (tuned)
        *tuned = from_database;
    out->state = st;
    out->run = cl_run;
    out->output = cl_output;
    out->destroy = cl_destroy;
    out->workspace_bytes = st->workspace_bytes;
    return BENCH_READY;
}

/* ---- rows ---- */

struct row {
    const char *impl;
    char tile[24], variant[16], choice[160];
    enum { ROW_OK, ROW_WRONG, ROW_ERROR } status;
    double ms, prep_ms, err, vs_default;
    size_t workspace;
};

/* Prepares, checks and times one row; returns 0 when there is none (skipped, a note), 1 when
 * *row was filled (its status says whether it may be reported). */
static int measure(const struct bench_args *a, struct layer_run *lr, const char *impl,
                   enum wino_variant variant, const char *database, double *times,
                   struct row *row)
{
    struct bench_runner r;
    struct wino_opencl_params p;
    const int fused = variant == WINO_VARIANT_FUSED;
    const char *label = fused ? "fused" : "non-fused";
    memset(row, 0, sizeof *row);
    row->impl = impl;
    const double t0 = bench_now_ms();
    const enum bench_prep prep = prepare(lr, variant, database, &r, &p, NULL);
    row->prep_ms = bench_now_ms() - t0;
    if (prep == BENCH_SKIP) {
        fprintf(stderr, "wino bench: note: %s %s %s skipped: %s\n", lr->layer.name, impl, label,
                r.info);
        return 0;
    }
    if (prep == BENCH_FAIL) {
        fprintf(stderr, "wino bench: %s %s %s failed: %s\n", lr->layer.name, impl, label, r.info);
        row->status = ROW_ERROR;
        return 1;
    }
    snprintf(row->tile, sizeof row->tile, "%s", r.tile);
    snprintf(row->variant, sizeof row->variant, "%s", r.variant);
    bench_opencl_params_text(&p, fused, row->choice, sizeof row->choice);
    row->workspace = r.workspace_bytes;
    float *out = malloc(sizeof(float) * lr->check.elems);
    int failed = !out || r.run(r.state) || r.output(r.state, out);
    if (!failed) {
        row->err = bench_check_error(&lr->check, out);
        if (!(row->err <= BOUND)) {
            fprintf(stderr, "wino bench: %s %s %s: wrong result (relative L1 error %.3g > %g), "
                            "not timed\n",
                    lr->layer.name, impl, label, row->err, BOUND);
            row->status = ROW_WRONG;
            r.destroy(r.state);
            free(out);
            return 1;
        }
        failed = time_runs(&r, a->warmup, a->reps, times, &row->ms);
    }
    free(out);
    r.destroy(r.state);
    if (failed) {
        fprintf(stderr, "wino bench: %s %s %s failed while running: %s\n", lr->layer.name, impl,
                label, wino_last_error());
        row->status = ROW_ERROR;
    }
    return 1;
}

/* --tune: the layer's search, stored in database; a note says what it found. 0, or 1 after an
 * error line. */
static int tune_layer(const struct bench_args *a, const struct layer_run *lr,
                      const char *database)
{
    const struct wino_context ctx = context_of(lr, database);
    const struct wino_opencl_search search = {(double)a->budget, (int)a->candidates,
                                              (int)a->reps};
    struct wino_opencl_tuning t;
    const enum wino_status st = wino_opencl_tune(&lr->desc, &ctx, 0, &search, &t);
    if (st == WINO_UNSUPPORTED) /* the rows will say why */
        return 0;
    if (st) {
        fprintf(stderr, "wino bench: %s: --tune failed: %s\n", lr->layer.name, wino_last_error());
        return 1;
    }
    char tile[24];
    bench_tile_name(tile, sizeof tile, t.tile_m, lr->desc.r, lr->desc.s);
    fprintf(stderr, "wino bench: note: %s tuned: %s (fastest of %d tiles), %d of %d candidates, "
                    "%.1f s in all, default %.4g ms, tuned %.4g ms %s\n",
            lr->layer.name, tile, t.tiles, t.candidates, t.space, t.seconds, t.default_ms,
            wino_opencl_tuned_ms(&t.best),
            t.best.variant == WINO_VARIANT_FUSED ? "fused" : "non-fused");
    return 0;
}

/* The variant AUTO runs on the layer with database: an operator's own answer. */
static enum wino_variant auto_variant(const struct layer_run *lr, const char *database)
{
    struct bench_runner r;
    enum wino_variant v = WINO_VARIANT_AUTO;
    if (prepare(lr, WINO_VARIANT_AUTO, database, &r, NULL, NULL) != BENCH_READY)
        return v;
    wino_conv2d_variant(((const struct cl_state *)r.state)->op, &v);
    r.destroy(r.state);
    return v;
}

static void print_table(const struct layer_run *lr, const struct row *rows, int n)
{
    const struct bench_layer *l = &lr->layer;
    printf("\n%s: N=%d C=%d H=%d W=%d K=%d R=%d S=%d pad=%d stride=%d -> %dx%d, %.3g GFLOP\n",
           l->name, l->n, l->c, l->h, l->w, l->k, l->r, l->s, l->pad, l->stride, lr->pb.p,
           lr->pb.q, lr->gflop);
    printf("  %-17s %-9s %-9s %10s %9s %10s %12s %9s %10s  %s\n", "impl", "tile", "variant",
           "ms", "GFLOP/s", "vs default", "workspace_B", "rel_L1", "prepare_ms", "parameters");
    for (int i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        printf("  %-17s %-9s %-9s ", r->impl, r->tile[0] ? r->tile : "-", r->variant);
        if (r->status != ROW_OK) {
            printf("%10s\n", r->status == ROW_WRONG ? "WRONG" : "ERROR");
            continue;
        }
        char ratio[16] = "-";
        if (r->vs_default > 0)
            snprintf(ratio, sizeof ratio, "%.2fx", r->vs_default);
        printf("%10.4f %9.1f %10s %12zu %9.2e %10.1f  %s\n", r->ms, lr->gflop / r->ms * 1e3,
               ratio, r->workspace, r->err, r->prep_ms, r->choice);
    }
}

static void print_csv(const struct bench_args *a, const struct layer_run *lr,
                      const struct row *rows, int n)
{
    for (int i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        if (r->status != ROW_OK)
            continue; /* refused: the reason went to stderr */
        const struct bench_csv_row csv = {
            a->set,  &lr->layer, a->dtype == BENCH_F16 ? "f16" : "f32", "opencl", r->impl,
            r->tile, r->ms,
            lr->gflop, r->workspace, lr->cl->name, r->err, r->prep_ms, r->variant, 0,
            r->choice};
        bench_csv_row(&csv);
        printf(",NHWC,fwd\n");
    }
}

/* Every row of one layer. Returns 0, or 1 when a row failed or was wrong. */
static int bench_layer(const struct bench_args *a, const struct bench_opencl *cl,
                       const struct bench_layer *l, int index, const char *database)
{
    static const enum wino_variant variants[2] = {WINO_VARIANT_NON_FUSED, WINO_VARIANT_FUSED};
    struct layer_run lr;
    if (setup_layer(a, cl, l, index, &lr))
        return 1;
    struct row rows[4];
    double *times = malloc(sizeof(double) * (size_t)a->reps);
    if (!times) {
        fprintf(stderr, "wino bench: %s: out of memory\n", l->name);
        release_layer(&lr);
        return 1;
    }
    int n = 0;
    double default_ms[2] = {0.0, 0.0};
    for (int v = 0; v < 2; v++)
        if (measure(a, &lr, "wino-opencl", variants[v], NULL, times, &rows[n]) &&
            rows[n++].status == ROW_OK)
            default_ms[v] = rows[n - 1].ms;
    int status = database && a->tune && tune_layer(a, &lr, database);
    const enum wino_variant chosen =
        database && !status ? auto_variant(&lr, database) : WINO_VARIANT_AUTO;
    for (int v = 0; v < 2 && database && !status; v++) {
        struct row *r = &rows[n];
        if (!measure(a, &lr, "wino-opencl-tuned", variants[v], database, times, r))
            continue;
        n++;
        if (r->status == ROW_OK && default_ms[v] > 0.0)
            r->vs_default = default_ms[v] / r->ms;
        if (variants[v] == chosen)
            snprintf(r->choice + strlen(r->choice), sizeof r->choice - strlen(r->choice),
                     "; AUTO runs it");
    }
    for (int i = 0; i < n; i++)
        status |= rows[i].status != ROW_OK;
    if (a->csv)
        print_csv(a, &lr, rows, n);
    else
        print_table(&lr, rows, n);
    fflush(stdout);
    free(times);
    release_layer(&lr);
    return status;
}

/* The database of the tuned rows: --tuning-cache (a regular file; with --tune it may not exist
 * yet), else with --tune a temporary file (*temporary 1). Returns 0, or 2 after an error line. */
static int database_path(const struct bench_args *a, char *path, size_t cap, int *temporary)
{
    struct stat st;
    *temporary = 0;
    path[0] = '\0';
    if (a->tuning_cache) {
        const int missing = stat(a->tuning_cache, &st) && errno == ENOENT;
        if (missing && !a->tune)
            return cli_usage_error("bench", "--tuning-cache %s: no such file (--tune writes one)",
                                   a->tuning_cache);
        if (!missing && (stat(a->tuning_cache, &st) || !S_ISREG(st.st_mode)))
            return cli_usage_error("bench", "--tuning-cache %s: not a regular file",
                                   a->tuning_cache);
        snprintf(path, cap, "%s", a->tuning_cache);
        return 0;
    }
    if (!a->tune)
        return 0;
    const char *tmp = getenv("TMPDIR");
    snprintf(path, cap, "%s/wino-opencl-tuning-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    const int fd = mkstemp(path);
    if (fd < 0) {
        fprintf(stderr, "wino bench: --tune: cannot make a temporary file %s\n", path);
        return 1;
    }
    close(fd); /* empty: the first store starts it */
    *temporary = 1;
    return 0;
}

int bench_opencl_run(const struct bench_args *args, const struct bench_layer *layers, int count)
{
    struct bench_args a = *args;
    a.reps = a.reps < 0 ? 10 : a.reps;
    a.warmup = a.warmup < 0 ? 2 : a.warmup;
    char database[4096];
    int temporary = 0, rc = database_path(&a, database, sizeof database, &temporary);
    struct bench_opencl cl;
    if (rc || (rc = bench_opencl_open("bench", a.cl_device, &cl)))
        return rc;
    if (a.csv)
        printf("%s,layout,op\n", BENCH_CSV_COLUMNS);
    else
        printf("wino bench: set %s (%d layers), opencl, fwd %s NHWC, %s (%s, driver %s), "
               "median of %ld after %ld warm-up%s\n",
               a.set, count, a.dtype == BENCH_F16 ? "f16" : "f32", cl.name, cl.platform,
               cl.driver, a.reps, a.warmup,
               a.warmup == 1 ? "" : "s");
    char bounds[80];
    bench_opencl_bounds_text(a.budget, a.candidates, bounds, sizeof bounds);
    if (a.tune)
        fprintf(a.csv ? stderr : stdout, "%s--tune: each layer searched first (%s) into %s\n",
                a.csv ? "wino bench: note: " : "  ", bounds,
                temporary ? "a temporary database" : database);
    int status = 0;
    for (int i = 0; i < count; i++)
        status |= bench_layer(&a, &cl, &layers[i], i, database[0] ? database : NULL);
    bench_opencl_close(&cl);
    if (temporary)
        remove(database);
    return status ? 1 : 0;
}

#endif
