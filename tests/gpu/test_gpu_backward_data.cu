/* Backward-data on the CUDA backend (dx from dy and w: the CUDA forward engine on the filters
 * rotated on the device) against the FP64 reference wino_ref_conv2d_bwd_data:
 *  - random shapes, NCHW and NHWC, R in {2, 3, 5}, padding 0..R-1 per side, batch 1 and 3, odd
 *    image sizes, channels among 1, 3, 17, 61 or random; FP32 with wino's tile (AUTO) and with
 *    F(2x2,3x3) fused, FP16 with its tile (algo WINOGRAD: wino's kernels, not AUTO's choice); the operator reports kind BACKWARD_DATA, algo
 *    Winograd; dx is poisoned (NaN) before each of two runs; relative L1 error within the
 *    forward tests' bound of the precision and alpha (tests/gpu/test_gpu_conv2d.cu);
 *  - an operator created without sizes: refused before a reshape, then reshaped across two sizes
 *    and checked at each;
 *  - wino_conv2d_run_stream on a created non-blocking stream (not the context's): correct dx, and
 *    a capture of that stream in global mode holds the run's kernels (a run enqueued on another
 *    stream would leave the graph empty), whose replay gives dx again;
 *  - refusals: host weights and host dy (WINO_INVALID_ARGUMENT); with WINO_ALGO_WINOGRAD
 *    stride 2, dilation 2, R != S, padding R, INT8 (WINO_UNSUPPORTED), each with no operator and
 *    a message (AUTO and DIRECT serve them with the vendor's engines: test_gpu_vendor.cu).
 * The largest errors by precision and alpha are printed at the end.
 * Usage: test_gpu_backward_data (WINO_TEST_SEED=N to replay). */
#include "gpu_test_util.h"

static struct test_counts tc;
static uint64_t base_seed;
/* wino's kernels: AUTO may take the vendor's engines where they time faster */
static const struct wino_conv2d_options winograd = {.algo = WINO_ALGO_WINOGRAD};
static double worst[2][11]; /* largest error by precision (0 FP32, 1 FP16) and alpha */
static int measured[2][11];

/* The forward tests' bounds (test_gpu_conv2d.cu): FP32 docs/cpu-winograd.md's, FP16 by alpha. */
static double bound(int half, int alpha)
{
    return half ? gpu_f16_bound(alpha) : gpu_f32_bound(alpha);
}

/* Elements of x (dx), w and y (dy) of d. */
static void tensor_sizes(const struct wino_conv2d_desc *d, size_t *xn, size_t *wn, size_t *yn)
{
    int p = 0, q = 0;
    wino_conv2d_output_size(d, &p, &q);
    *xn = (size_t)d->n * d->c * d->h * d->w;
    *wn = (size_t)d->k * d->c * d->r * d->s;
    *yn = (size_t)d->n * d->k * p * q;
}

/* n random values in (-1, 1); for FP16 rounded to half (the reference sees what the GPU sees),
 * with their device copy at the dtype. */
static float *random_tensor(struct test_rng *rng, size_t n, int half, void **device)
{
    float *v = (float *)malloc(n * sizeof(float));
    __half *h = (__half *)malloc(n * sizeof(__half));
    for (size_t i = 0; i < n; i++) {
        v[i] = (float)test_rng_sym(rng);
        h[i] = __float2half_rn(v[i]);
        if (half)
            v[i] = __half2float(h[i]);
    }
    *device = half ? gpu_upload(h, n * sizeof(__half)) : gpu_upload(v, n * sizeof(float));
    free(h);
    return v;
}

/* Creates the backward-data operator of d from host weights w (uploaded here and freed right
 * after create, which keeps its own transformed copy). */
static enum wino_status create_op(const struct wino_conv2d_desc *d,
                                  const struct wino_conv2d_options *o,
                                  const struct wino_context *ctx, struct test_rng *rng, float **w,
                                  wino_conv2d **op)
{
    size_t xn, wn, yn;
    tensor_sizes(d, &xn, &wn, &yn);
    void *dw = NULL;
    *w = random_tensor(rng, wn, d->dtype == WINO_DTYPE_F16, &dw);
    *op = NULL;
    const enum wino_status st = wino_conv2d_backward_data_create(d, dw, ctx, o, op);
    CUDA_CHECK(cudaFree(dw));
    return st;
}

/* Runs op (shaped for d, weights w on the host) twice on random dy, dx poisoned with NaN bytes
 * on stream before each run, through wino_conv2d_run_stream on stream (use_stream) or
 * wino_conv2d_run (stream: the context's), and returns the larger relative L1 error against the
 * FP64 reference (NaN when a run failed, why then holds the message, or an output held a
 * NaN). */
static double run_against_reference(const wino_conv2d *op, const struct wino_conv2d_desc *d,
                                    const float *w, struct test_rng *rng, cudaStream_t stream,
                                    int use_stream, char *why, size_t cap)
{
    const int half = d->dtype == WINO_DTYPE_F16;
    const size_t es = half ? sizeof(__half) : sizeof(float);
    size_t xn, wn, yn, bytes = 0;
    tensor_sizes(d, &xn, &wn, &yn);
    void *ddy = NULL;
    float *dy = random_tensor(rng, yn, half, &ddy);
    double *ref = (double *)malloc(xn * sizeof(double));
    wino_ref_conv2d_bwd_data(d, dy, w, ref);
    float *dx = (float *)malloc(xn * sizeof(float));
    void *hx = malloc(xn * es), *ddx = gpu_alloc(xn * es);
    why[0] = '\0';
    double err = 0.0;
    if (wino_conv2d_workspace_size(op, &bytes)) {
        snprintf(why, cap, "workspace_size: %s", wino_last_error());
        err = NAN;
    }
    void *ws = gpu_alloc(bytes);
    for (int run = 0; run < 2 && !isnan(err); run++) {
        CUDA_CHECK(cudaMemsetAsync(ddx, 0xff, xn * es, stream)); /* NaN in FP32 and FP16 */
        const enum wino_status st = use_stream
                                        ? wino_conv2d_run_stream(op, ddy, ddx, ws, bytes, stream)
                                        : wino_conv2d_run(op, ddy, ddx, ws, bytes);
        if (st) {
            snprintf(why, cap, "run: %s: %s", gpu_status_name(st), wino_last_error());
            err = NAN;
            break;
        }
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(hx, ddx, xn * es, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < xn; i++)
            dx[i] = half ? __half2float(((__half *)hx)[i]) : ((float *)hx)[i];
        const double e = wino_rel_l1_f32(dx, ref, xn);
        if (!(e <= err)) /* NaN sticks */
            err = e;
    }
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(ddy));
    CUDA_CHECK(cudaFree(ddx));
    free(dy), free(ref), free(dx), free(hx);
    return err;
}

/* Checks one error against the bound of the operator's tile, and records it. */
static void check_error(const wino_conv2d *op, const struct wino_conv2d_desc *d, double err,
                        const char *why, const char *what)
{
    enum wino_algo algo = WINO_ALGO_AUTO;
    enum wino_conv2d_kind kind = WINO_CONV2D_FORWARD;
    enum wino_variant variant = WINO_VARIANT_AUTO;
    int m = 0;
    wino_conv2d_algo(op, &algo, &m);
    wino_conv2d_kind(op, &kind);
    wino_conv2d_variant(op, &variant);
    const int half = d->dtype == WINO_DTYPE_F16, alpha = m + d->r - 1;
    const int alpha_ok = m >= 2 && alpha >= 3 && alpha <= 10;
    const double b = alpha_ok ? bound(half, alpha) : 0.0;
    if (alpha_ok && !isnan(err)) {
        if (err > worst[half][alpha])
            worst[half][alpha] = err;
        measured[half][alpha]++;
    }
    char shape[160];
    gpu_checkf(&tc,
               kind == WINO_CONV2D_BACKWARD_DATA && algo == WINO_ALGO_WINOGRAD && alpha_ok &&
                   err <= b,
               "seed %llu %s: %s: kind %d algo %d F(%dx%d,%dx%d) %s: relative L1 %.3e, bound "
               "%.1e%s%s",
               (unsigned long long)base_seed, what, gpu_desc_string(d, shape, sizeof shape),
               (int)kind, (int)algo, m, m, d->r, d->r, gpu_variant_name(variant), err, b,
               why[0] ? "; " : "", why);
}

static const int channel_picks[4] = {1, 3, 17, 61};

static int random_channels(struct test_rng *rng)
{
    const int i = (int)(test_rng_next(rng) % 6);
    return i < 4 ? channel_picks[i] : 1 + (int)(test_rng_next(rng) % 24);
}

/* An odd size of at least lo (lo + 0 .. 2 * span, odd). */
static int odd_size(struct test_rng *rng, int lo, int span)
{
    const int v = lo + (int)(test_rng_next(rng) % (unsigned)(2 * span));
    return v | 1;
}

/* A random descriptor with filter r x r that Winograd backward-data serves. */
static struct wino_conv2d_desc random_desc(struct test_rng *rng, int r, int batch,
                                           enum wino_layout layout, enum wino_dtype dtype)
{
    struct wino_conv2d_desc d;
    memset(&d, 0, sizeof d);
    d.n = batch;
    d.c = random_channels(rng);
    d.k = random_channels(rng);
    d.r = d.s = r;
    d.pad_h = (int)(test_rng_next(rng) % (unsigned)r);
    d.pad_w = (int)(test_rng_next(rng) % (unsigned)r);
    /* at least one output row and column: h + 2 pad >= r */
    d.h = odd_size(rng, r - 2 * d.pad_h > 1 ? r - 2 * d.pad_h : 1, 9);
    d.w = odd_size(rng, r - 2 * d.pad_w > 1 ? r - 2 * d.pad_w : 1, 9);
    d.stride_h = d.stride_w = d.dilation_h = d.dilation_w = 1;
    d.layout = layout;
    d.dtype = dtype;
    return d;
}

/* One shape: create on ctx, two poisoned runs against the reference, destroy. */
static void shape_case(const struct wino_conv2d_desc *d, const struct wino_conv2d_options *o,
                       const struct wino_context *ctx, struct test_rng *rng, const char *what)
{
    float *w = NULL;
    wino_conv2d *op = NULL;
    const enum wino_status st = create_op(d, o, ctx, rng, &w, &op);
    char shape[160], why[320];
    if (st) {
        gpu_checkf(&tc, 0, "seed %llu %s: %s: create: %s: %s", (unsigned long long)base_seed,
                   what, gpu_desc_string(d, shape, sizeof shape), gpu_status_name(st),
                   wino_last_error());
    } else {
        const double err = run_against_reference(op, d, w, rng, (cudaStream_t)ctx->stream, 0,
                                                 why, sizeof why);
        check_error(op, d, err, why, what);
    }
    wino_conv2d_destroy(op);
    free(w);
}

static void random_shapes(cudaStream_t stream, struct test_rng *rng)
{
    static const int filters[3] = {2, 3, 5};
    const struct wino_context ctx = gpu_context(0, stream);
    int id = 0;
    for (int fi = 0; fi < 3; fi++)
        for (int half = 0; half < 2; half++)
            for (int i = 0; i < 8; i++, id++) {
                const enum wino_layout layout = i % 2 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
                const struct wino_conv2d_desc d =
                    random_desc(rng, filters[fi], i % 4 < 2 ? 1 : 3, layout,
                                half ? WINO_DTYPE_F16 : WINO_DTYPE_F32);
                struct wino_conv2d_options o; /* wino's kernels (AUTO may take the vendor's) */
                memset(&o, 0, sizeof o);
                o.algo = WINO_ALGO_WINOGRAD;
                char what[64];
                if (filters[fi] == 3 && i >= 6) { /* F(2x2,3x3) with its fused kernel */
                    o.algo = WINO_ALGO_WINOGRAD;
                    o.tile_m = 2;
                    o.variant = WINO_VARIANT_FUSED;
                }
                snprintf(what, sizeof what, "random shape %d%s", id,
                         o.tile_m ? " (F(2,3) fused)" : "");
                shape_case(&d, &o, &ctx, rng, what);
            }
}

/* Created without sizes: a run before the first reshape is refused; then two sizes. */
static void reshape_case(cudaStream_t stream, struct test_rng *rng)
{
    const struct wino_context ctx = gpu_context(0, stream);
    struct wino_conv2d_desc d = wino_conv2d_desc_make(0, 13, 0, 0, 7, 3, 3, 1, 0);
    d.layout = WINO_LAYOUT_NHWC;
    float *w = NULL;
    wino_conv2d *op = NULL;
    enum wino_status st = create_op(&d, &winograd, &ctx, rng, &w, &op);
    gpu_checkf(&tc, st == WINO_SUCCESS, "reshape: create without sizes: %s: %s",
               gpu_status_name(st), wino_last_error());
    if (st) {
        free(w);
        return;
    }
    void *ddy = gpu_alloc(64), *ddx = gpu_alloc(64);
    st = wino_conv2d_run(op, ddy, ddx, NULL, 0);
    gpu_checkf(&tc, st == WINO_INVALID_ARGUMENT, "reshape: run before the first reshape: %s",
               gpu_status_name(st));
    CUDA_CHECK(cudaFree(ddy));
    CUDA_CHECK(cudaFree(ddx));
    static const int sizes[2][3] = {{1, 9, 15}, {3, 21, 11}};
    for (int i = 0; i < 2; i++) {
        d.n = sizes[i][0], d.h = sizes[i][1], d.w = sizes[i][2];
        size_t bytes = 0;
        st = wino_conv2d_reshape(op, d.n, d.h, d.w, &bytes);
        char why[320] = "", what[64];
        snprintf(what, sizeof what, "reshape to size %d", i);
        if (st)
            snprintf(why, sizeof why, "reshape: %s: %s", gpu_status_name(st), wino_last_error());
        const double err =
            st ? NAN : run_against_reference(op, &d, w, rng, stream, 0, why, sizeof why);
        check_error(op, &d, err, why, what);
    }
    wino_conv2d_destroy(op);
    free(w);
}

/* run_stream on a stream of its own, then a capture of that stream holds the run's kernels. */
static void stream_case(cudaStream_t ctx_stream, struct test_rng *rng)
{
    const struct wino_context ctx = gpu_context(0, ctx_stream);
    cudaStream_t own;
    CUDA_CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
    struct wino_conv2d_desc d = wino_conv2d_desc_make(3, 17, 19, 23, 29, 3, 3, 1, 1);
    d.dtype = WINO_DTYPE_F16;
    float *w = NULL;
    wino_conv2d *op = NULL;
    const enum wino_status st = create_op(&d, &winograd, &ctx, rng, &w, &op);
    gpu_checkf(&tc, st == WINO_SUCCESS, "run_stream: create: %s: %s", gpu_status_name(st),
               wino_last_error());
    if (!st) {
        char why[320];
        const double err = run_against_reference(op, &d, w, rng, own, 1, why, sizeof why);
        check_error(op, &d, err, why, "run_stream on a created stream");

        /* the same run captured on own: a kernel enqueued elsewhere would not be in the graph */
        size_t xn, wn, yn, bytes = 0;
        tensor_sizes(&d, &xn, &wn, &yn);
        wino_conv2d_workspace_size(op, &bytes);
        void *ddy = NULL;
        float *dy = random_tensor(rng, yn, 1, &ddy);
        void *ddx = gpu_alloc(xn * sizeof(__half)), *ws = gpu_alloc(bytes);
        __half *first = (__half *)malloc(xn * sizeof(__half));
        __half *again = (__half *)malloc(xn * sizeof(__half));
        /* eager first: run() asks CUDA about new pointers once, which a capture forbids */
        const enum wino_status eager = wino_conv2d_run_stream(op, ddy, ddx, ws, bytes, own);
        gpu_checkf(&tc, eager == WINO_SUCCESS, "run_stream: eager run: %s",
                   wino_last_error());
        CUDA_CHECK(cudaStreamSynchronize(own));
        CUDA_CHECK(cudaMemcpy(first, ddx, xn * sizeof(__half), cudaMemcpyDeviceToHost));
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_CHECK(cudaStreamBeginCapture(own, cudaStreamCaptureModeGlobal));
        const enum wino_status captured = wino_conv2d_run_stream(op, ddy, ddx, ws, bytes, own);
        CUDA_CHECK(cudaStreamEndCapture(own, &graph));
        size_t nodes = 0;
        CUDA_CHECK(cudaGraphGetNodes(graph, NULL, &nodes));
        gpu_checkf(&tc, captured == WINO_SUCCESS && nodes >= 1,
                   "run_stream: the capture of its stream holds the run (%s, %zu nodes)",
                   gpu_status_name(captured), nodes);
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CUDA_CHECK(cudaMemsetAsync(ddx, 0xff, xn * sizeof(__half), own));
        CUDA_CHECK(cudaGraphLaunch(exec, own));
        CUDA_CHECK(cudaStreamSynchronize(own));
        CUDA_CHECK(cudaMemcpy(again, ddx, xn * sizeof(__half), cudaMemcpyDeviceToHost));
        gpu_checkf(&tc, !memcmp(first, again, xn * sizeof(__half)),
                   "run_stream: the graph's replay gives the eager run's dx");
        CUDA_CHECK(cudaGraphExecDestroy(exec));
        CUDA_CHECK(cudaGraphDestroy(graph));
        CUDA_CHECK(cudaFree(ddy));
        CUDA_CHECK(cudaFree(ddx));
        CUDA_CHECK(cudaFree(ws));
        free(dy), free(first), free(again);
    }
    wino_conv2d_destroy(op);
    free(w);
    CUDA_CHECK(cudaStreamDestroy(own));
}

/* One refused create: the status, a message and no operator. */
static void expect_create(const struct wino_conv2d_desc *d, const void *w,
                          const struct wino_context *ctx, const struct wino_conv2d_options *o,
                          enum wino_status want, const char *what)
{
    wino_conv2d *op = NULL;
    const enum wino_status st = wino_conv2d_backward_data_create(d, w, ctx, o, &op);
    const char *err = wino_last_error();
    gpu_checkf(&tc, st == want && !op && err && err[0], "refusal: %s: got %s, want %s (\"%s\")",
               what, gpu_status_name(st), gpu_status_name(want), err ? err : "");
    wino_conv2d_destroy(op);
}

static void bad_input(cudaStream_t stream, struct test_rng *rng)
{
    const struct wino_context ctx = gpu_context(0, stream);
    const struct wino_conv2d_desc good = wino_conv2d_desc_make(1, 8, 12, 12, 8, 3, 3, 1, 1);
    size_t xn, wn, yn;
    tensor_sizes(&good, &xn, &wn, &yn);
    void *dw = NULL;
    float *host_w = random_tensor(rng, wn * 4, 0, &dw); /* large enough for every case below */
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    expect_create(&good, host_w, &ctx, &o, WINO_INVALID_ARGUMENT, "host weights");
    o.algo = WINO_ALGO_WINOGRAD; /* AUTO takes the vendor's for these (test_gpu_vendor.cu) */
    struct wino_conv2d_desc d = good;
    d.stride_h = d.stride_w = 2;
    expect_create(&d, dw, &ctx, &o, WINO_UNSUPPORTED, "stride 2 (WINOGRAD)");
    d = good;
    d.dilation_h = d.dilation_w = 2;
    expect_create(&d, dw, &ctx, &o, WINO_UNSUPPORTED, "dilation 2");
    d = good;
    d.s = 2;
    expect_create(&d, dw, &ctx, &o, WINO_UNSUPPORTED, "R != S");
    d = good;
    d.pad_h = d.pad_w = 3;
    expect_create(&d, dw, &ctx, &o, WINO_UNSUPPORTED, "padding R (above R-1)");
    d = good;
    d.layout = WINO_LAYOUT_NHWC;
    d.dtype = WINO_DTYPE_S8;
    expect_create(&d, dw, &ctx, &o, WINO_UNSUPPORTED, "INT8");

    /* host dy and host dx at run */
    wino_conv2d *op = NULL;
    enum wino_status st = wino_conv2d_backward_data_create(&good, dw, &ctx, &o, &op);
    gpu_checkf(&tc, st == WINO_SUCCESS, "refusal: create of the good layer: %s",
               wino_last_error());
    if (!st) {
        size_t bytes = 0;
        wino_conv2d_workspace_size(op, &bytes);
        void *ws = gpu_alloc(bytes), *ddy = gpu_alloc(yn * 4), *ddx = gpu_alloc(xn * 4);
        float *host = (float *)calloc(xn > yn ? xn : yn, sizeof(float));
        st = wino_conv2d_run(op, host, ddx, ws, bytes);
        gpu_checkf(&tc, st == WINO_INVALID_ARGUMENT, "refusal: host dy: got %s",
                   gpu_status_name(st));
        st = wino_conv2d_run(op, ddy, host, ws, bytes);
        gpu_checkf(&tc, st == WINO_INVALID_ARGUMENT, "refusal: host dx: got %s",
                   gpu_status_name(st));
        st = wino_conv2d_run(op, ddy, ddx, ws, bytes ? bytes - 1 : 0);
        gpu_checkf(&tc, !bytes || st == WINO_INSUFFICIENT_WORKSPACE,
                   "refusal: a workspace one byte short: got %s", gpu_status_name(st));
        CUDA_CHECK(cudaFree(ws));
        CUDA_CHECK(cudaFree(ddy));
        CUDA_CHECK(cudaFree(ddx));
        free(host);
    }
    wino_conv2d_destroy(op);
    CUDA_CHECK(cudaGetLastError()); /* no CUDA error left pending by the refusals */
    CUDA_CHECK(cudaFree(dw));
    free(host_w);
}

int main(void)
{
    base_seed = test_seed();
    struct test_rng rng = {base_seed};
    cudaStream_t stream = gpu_open_device(0);
    random_shapes(stream, &rng);
    reshape_case(stream, &rng);
    reshape_case(NULL, &rng); /* the default stream */
    stream_case(stream, &rng);
    bad_input(stream, &rng);
    CUDA_CHECK(cudaStreamDestroy(stream));
    printf("largest relative L1 error by alpha (cases measured, bound):\n");
    printf("alpha  %-26s %-26s\n", "fp32", "fp16");
    for (int a = 3; a <= 10; a++) {
        char cell[2][64];
        int any = 0;
        for (int p = 0; p < 2; p++) {
            snprintf(cell[p], sizeof cell[p], "-");
            if (measured[p][a]) {
                snprintf(cell[p], sizeof cell[p], "%.2e (%d, %.0e)", worst[p][a], measured[p][a],
                         bound(p, a));
                any = 1;
            }
        }
        if (any)
            printf("%5d  %-26s %-26s\n", a, cell[0], cell[1]);
    }
    return gpu_report(&tc);
}
