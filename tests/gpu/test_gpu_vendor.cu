/* The vendor path of the CUDA backend (cuDNN's engines through src/cuda/vendor_conv.cu) and
 * AUTO's choice between it and wino's tiles, against the FP64 reference:
 *  - WINO_ALGO_DIRECT on random layers of every kind (forward, backward-data, backward-filter),
 *    FP32, FP16 and BF16, NCHW and NHWC, strides 1-3, dilations 1-2, filters 1x1 to 5x3,
 *    padding 0-2, odd channel counts, batch 1-3: the operator reports the kind and algo DIRECT,
 *    the output is poisoned (NaN) before each of two runs, the relative L1 error is within the
 *    dtype's rounding bound (inputs rounded to the dtype for the reference);
 *  - the same through unaligned tensors (offset by one element: the plan for element-aligned
 *    tensors);
 *  - WINO_ALGO_AUTO where wino's kernels refuse the layer (stride 2, BF16 NCHW forward): algo
 *    VENDOR, a reason naming cuDNN; AUTO on 3x3 layers: WINOGRAD or VENDOR, a reason that gives
 *    both times, the same choice on a second create of the layer, correct either way; AUTO's
 *    forward choice on a small layer, FP32 and FP16: the vendor's or one of the tiles it times
 *    (FP32 F(2x2) to F(7x7), FP16 to F(4x4)), reported by wino_conv2d_algo and named in the reason
 *    beside every tile's time;
 *  - AUTO with a tuning cache (layers created nowhere else in the process, so that its memory
 *    of choices does not answer first): a first create times and writes a valid entry; hand-
 *    written entries naming a tile (forward, backward-data) or the vendor's (forward,
 *    backward-filter) are followed, as the reason says, and compute the convolution; a stale
 *    entry (F(8x8, 3x3), which AUTO does not time) is timed anew and replaced;
 *  - forward with bias and ReLU, set_weights, backward-filter with accumulate (dw += dW);
 *  - a run captured in a CUDA graph on a non-blocking stream replays the eager bytes;
 *  - refusals: VENDOR on the CPU and for INT8 (WINO_UNSUPPORTED), VENDOR with a tile
 *    (WINO_INVALID_ARGUMENT), host x at run (WINO_INVALID_ARGUMENT), a workspace too small
 *    (WINO_INSUFFICIENT_WORKSPACE).
 * Where cuDNN 9 is not installed every vendor create must fail with WINO_UNSUPPORTED: the test
 * checks that and stops.
 * Usage: test_gpu_vendor (WINO_TEST_SEED=N to replay; WINO_GPU_TEST_SMALL=1: two random layers
 * per kind and dtype instead of six, for compute-sanitizer). */
#include <cuda_bf16.h>
#include <time.h>
#include <unistd.h>

#include "gpu_test_util.h"

static struct test_counts tc;
static struct test_rng rng;

/* Relative L1 bound of a vendor convolution: the inputs are the dtype's (the reference sees
 * them), so what remains is the output's rounding and FP32 sums. */
static double bound_of(enum wino_dtype t)
{
    return t == WINO_DTYPE_F32 ? 1e-5 : t == WINO_DTYPE_F16 ? 2e-3 : 1.6e-2;
}

static size_t element_size(enum wino_dtype t)
{
    return t == WINO_DTYPE_F32 ? 4 : 2;
}

/* v rounded to the dtype, and its bytes at *out. */
static float to_dtype(float v, enum wino_dtype t, void *out)
{
    if (t == WINO_DTYPE_F16) {
        const __half h = __float2half_rn(v);
        memcpy(out, &h, 2);
        return __half2float(h);
    }
    if (t == WINO_DTYPE_BF16) {
        const __nv_bfloat16 b = __float2bfloat16_rn(v);
        memcpy(out, &b, 2);
        return __bfloat162float(b);
    }
    memcpy(out, &v, 4);
    return v;
}

static float from_dtype(const void *p, enum wino_dtype t)
{
    if (t == WINO_DTYPE_F16)
        return __half2float(*(const __half *)p);
    if (t == WINO_DTYPE_BF16)
        return __bfloat162float(*(const __nv_bfloat16 *)p);
    return *(const float *)p;
}

/* A host tensor of n random values in (-1, 1) rounded to t, and its device copy at offset
 * elements past an aligned allocation (*base: what to free). */
struct tensor {
    float *host;
    void *base, *device;
    size_t n;
};

static struct tensor random_tensor(size_t n, enum wino_dtype t, int offset)
{
    struct tensor x;
    const size_t e = element_size(t);
    char *bytes = (char *)malloc((n + 1) * e);
    x.host = (float *)malloc(n * sizeof(float));
    x.n = n;
    for (size_t i = 0; i < n; i++)
        x.host[i] = to_dtype((float)test_rng_sym(&rng), t, bytes + (i + offset) * e);
    x.base = gpu_upload(bytes, (n + 1) * e);
    x.device = (char *)x.base + offset * e;
    free(bytes);
    return x;
}

static void tensor_free(struct tensor *x)
{
    free(x->host);
    CUDA_CHECK(cudaFree(x->base));
}

static void sizes_of(const struct wino_conv2d_desc *d, size_t *xn, size_t *wn, size_t *yn)
{
    int p = 0, q = 0;
    wino_conv2d_output_size(d, &p, &q);
    *xn = (size_t)d->n * d->c * d->h * d->w;
    *wn = (size_t)d->k * d->c * d->r * d->s;
    *yn = (size_t)d->n * d->k * p * q;
}

static const char *kind_name(enum wino_conv2d_kind k)
{
    return k == WINO_CONV2D_FORWARD ? "forward" : k == WINO_CONV2D_BACKWARD_DATA ? "bwd-data"
                                                                                 : "bwd-filter";
}

static const char *dtype_name(enum wino_dtype t)
{
    return t == WINO_DTYPE_F32 ? "FP32" : t == WINO_DTYPE_F16 ? "FP16" : "BF16";
}

/* A layer's operator and tensors: in (x or dy), in2 (w, or dy for backward-filter), out, with
 * the FP64 reference of out (with the bias and ReLU of o, plus out0 when accumulating). */
struct problem {
    struct wino_conv2d_desc d;
    enum wino_conv2d_kind kind;
    struct tensor in, in2;
    void *out_base, *out;
    size_t out_n;
    double *ref;
};

static struct problem problem_make(const struct wino_conv2d_desc *d, enum wino_conv2d_kind kind,
                                   int offset, const float *bias, int relu, const float *out0)
{
    struct problem p;
    memset(&p, 0, sizeof p);
    p.d = *d;
    p.kind = kind;
    size_t xn, wn, yn;
    sizes_of(d, &xn, &wn, &yn);
    const size_t e = element_size(d->dtype);
    p.in = random_tensor(kind == WINO_CONV2D_BACKWARD_DATA ? yn : xn, d->dtype, offset);
    p.in2 = random_tensor(kind == WINO_CONV2D_BACKWARD_FILTER ? yn : wn, d->dtype, offset);
    p.out_n = kind == WINO_CONV2D_FORWARD ? yn : kind == WINO_CONV2D_BACKWARD_DATA ? xn : wn;
    p.out_base = gpu_alloc((p.out_n + 1) * e);
    p.out = (char *)p.out_base + offset * e;
    p.ref = (double *)malloc(p.out_n * sizeof(double));
    if (kind == WINO_CONV2D_FORWARD)
        wino_ref_conv2d_fwd(d, p.in.host, p.in2.host, p.ref);
    else if (kind == WINO_CONV2D_BACKWARD_DATA)
        wino_ref_conv2d_bwd_data(d, p.in.host, p.in2.host, p.ref);
    else
        wino_ref_conv2d_bwd_filter(d, p.in.host, p.in2.host, p.ref);
    int oh = 0, ow = 0;
    wino_conv2d_output_size(d, &oh, &ow);
    for (size_t i = 0; i < p.out_n; i++) {
        if (bias || relu) {
            const size_t k = d->layout == WINO_LAYOUT_NHWC ? i % (size_t)d->k
                                                           : i / ((size_t)oh * ow) % (size_t)d->k;
            p.ref[i] += bias ? bias[k] : 0.0;
            if (relu && p.ref[i] < 0.0)
                p.ref[i] = 0.0;
        }
        if (out0)
            p.ref[i] += out0[i];
    }
    return p;
}

static void problem_free(struct problem *p)
{
    tensor_free(&p->in);
    tensor_free(&p->in2);
    CUDA_CHECK(cudaFree(p->out_base));
    free(p->ref);
}

static enum wino_status create(const struct problem *p, const struct wino_context *ctx,
                               const struct wino_conv2d_options *o, wino_conv2d **op)
{
    *op = NULL;
    if (p->kind == WINO_CONV2D_FORWARD)
        return wino_conv2d_create(&p->d, p->in2.device, ctx, o, op);
    if (p->kind == WINO_CONV2D_BACKWARD_DATA)
        return wino_conv2d_backward_data_create(&p->d, p->in2.device, ctx, o, op);
    return wino_conv2d_backward_filter_create(&p->d, ctx, o, op);
}

static enum wino_status run(const struct problem *p, const wino_conv2d *op, void *ws,
                            size_t bytes, cudaStream_t stream)
{
    if (p->kind == WINO_CONV2D_BACKWARD_FILTER)
        return wino_conv2d_backward_filter_run(op, p->in.device, p->in2.device, p->out, ws,
                                               bytes);
    return wino_conv2d_run_stream(op, p->in.device, p->out, ws, bytes, stream);
}

/* The relative L1 error of out against the reference. */
static double out_error(const struct problem *p)
{
    const size_t e = element_size(p->d.dtype);
    char *h = (char *)malloc(p->out_n * e);
    float *f = (float *)malloc(p->out_n * sizeof(float));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h, p->out, p->out_n * e, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < p->out_n; i++)
        f[i] = from_dtype(h + i * e, p->d.dtype);
    const double err = wino_rel_l1_f32(f, p->ref, p->out_n);
    free(h);
    free(f);
    return err;
}

/* Two runs of op on p, out poisoned before each (not when accumulating: out holds dw0); the
 * larger error, NaN when a run failed (why then says so). */
static double checked_runs(const struct problem *p, const wino_conv2d *op, cudaStream_t stream,
                           int poison, char *why, size_t cap)
{
    size_t bytes = 0;
    why[0] = '\0';
    if (wino_conv2d_workspace_size(op, &bytes)) {
        snprintf(why, cap, "%s", wino_last_error());
        return NAN;
    }
    void *ws = gpu_alloc(bytes);
    double worst = 0.0;
    for (int r = 0; r < (poison ? 2 : 1); r++) {
        if (poison)
            CUDA_CHECK(cudaMemset(p->out, 0xff, p->out_n * element_size(p->d.dtype)));
        const enum wino_status st = run(p, op, ws, bytes, stream);
        if (st) {
            snprintf(why, cap, "run: %s: %s", gpu_status_name(st), wino_last_error());
            worst = NAN;
            break;
        }
        const double err = out_error(p);
        if (!(err <= worst))
            worst = err;
    }
    CUDA_CHECK(cudaFree(ws));
    return worst;
}

static struct wino_conv2d_desc random_desc(enum wino_dtype t, enum wino_layout layout)
{
    static const int filters[6][2] = {{1, 1}, {3, 3}, {5, 5}, {2, 2}, {3, 1}, {5, 3}};
    const int f = (int)(test_rng_next(&rng) % 6);
    struct wino_conv2d_desc d;
    memset(&d, 0, sizeof d);
    d.n = 1 + (int)(test_rng_next(&rng) % 3);
    d.c = 1 + (int)(test_rng_next(&rng) % 40);
    d.k = 1 + (int)(test_rng_next(&rng) % 40);
    d.r = filters[f][0];
    d.s = filters[f][1];
    d.stride_h = 1 + (int)(test_rng_next(&rng) % 3);
    d.stride_w = 1 + (int)(test_rng_next(&rng) % 3);
    d.dilation_h = 1 + (int)(test_rng_next(&rng) % 2);
    d.dilation_w = 1 + (int)(test_rng_next(&rng) % 2);
    d.pad_h = (int)(test_rng_next(&rng) % 3);
    d.pad_w = (int)(test_rng_next(&rng) % 3);
    d.h = d.dilation_h * (d.r - 1) + 1 + (int)(test_rng_next(&rng) % 20);
    d.w = d.dilation_w * (d.s - 1) + 1 + (int)(test_rng_next(&rng) % 20);
    d.layout = layout;
    d.dtype = t;
    return d;
}

/* The relative L1 bound of what an operator ran: the vendor's by dtype; wino's Winograd
 * (forward, backward-data) by its tile's alpha, as the forward tests bound it (AUTO may take any
 * tile it times); WinRS's first bounds. */
static double run_bound(const struct problem *p, enum wino_algo algo, int m)
{
    const enum wino_dtype t = p->d.dtype;
    if (algo != WINO_ALGO_WINOGRAD)
        return bound_of(t);
    if (p->kind == WINO_CONV2D_BACKWARD_FILTER)
        return t == WINO_DTYPE_F32 ? 1e-4 : 1e-2;
    const int alpha = m + p->d.r - 1;
    return t == WINO_DTYPE_F32 ? gpu_f32_bound(alpha) : gpu_f16_bound(alpha);
}

/* Creates p's operator with options o into *op (NULL when create failed) and checks it: the
 * kind, the algo (DIRECT when asked, else wino's or the vendor's), two checked runs. */
static void check_op(const struct problem *p, const struct wino_conv2d_options *o,
                     const struct wino_context *ctx, const char *what, wino_conv2d **op)
{
    char why[300], shape[160];
    const enum wino_status st = create(p, ctx, o, op);
    enum wino_algo algo = WINO_ALGO_AUTO;
    enum wino_conv2d_kind got = WINO_CONV2D_FORWARD;
    int m = 0;
    double err = NAN;
    if (st)
        snprintf(why, sizeof why, "create: %s: %s", gpu_status_name(st), wino_last_error());
    else {
        wino_conv2d_algo(*op, &algo, &m);
        wino_conv2d_kind(*op, &got);
        err = checked_runs(p, *op, (cudaStream_t)ctx->stream, 1, why, sizeof why);
    }
    const int algo_ok = o->algo == WINO_ALGO_DIRECT ? algo == WINO_ALGO_DIRECT
                                                    : algo == WINO_ALGO_VENDOR ||
                                                          algo == WINO_ALGO_WINOGRAD;
    const double b = run_bound(p, algo, m);
    gpu_checkf(&tc, !st && got == p->kind && algo_ok && err <= b,
               "%s %s %s %s: algo %d tile %d, rel L1 %.2e (bound %.0e) %s%s", what,
               kind_name(p->kind), dtype_name(p->d.dtype),
               gpu_desc_string(&p->d, shape, sizeof shape), (int)algo, m, err, b, why,
               *op ? wino_conv2d_reason(*op) : "");
}

/* One layer of one kind with options o: create, algo as expected, two checked runs. */
static void check_case(const struct wino_conv2d_desc *d, enum wino_conv2d_kind kind,
                       const struct wino_conv2d_options *o, const struct wino_context *ctx,
                       int offset, const char *what)
{
    struct problem p = problem_make(d, kind, offset, o->bias, o->relu, NULL);
    wino_conv2d *op = NULL;
    check_op(&p, o, ctx, what, &op);
    wino_conv2d_destroy(op);
    problem_free(&p);
}

/* AUTO on a layer: a reason that starts with "AUTO:", the same choice when created again. */
static void check_auto(const struct wino_conv2d_desc *d, enum wino_conv2d_kind kind,
                       const struct wino_context *ctx, enum wino_algo expect)
{
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_AUTO};
    check_case(d, kind, &o, ctx, 0, "AUTO");
    struct problem p = problem_make(d, kind, 0, NULL, 0, NULL);
    wino_conv2d *a = NULL, *b = NULL;
    enum wino_algo algo_a = WINO_ALGO_AUTO, algo_b = WINO_ALGO_AUTO;
    int m = 0;
    const int ok = !create(&p, ctx, &o, &a) && !create(&p, ctx, &o, &b) &&
                   !wino_conv2d_algo(a, &algo_a, &m) && !wino_conv2d_algo(b, &algo_b, &m);
    printf("  AUTO %s %s: %s\n", kind_name(kind), dtype_name(d->dtype),
           a ? wino_conv2d_reason(a) : wino_last_error());
    gpu_checkf(&tc, ok && algo_a == algo_b && !strncmp(wino_conv2d_reason(a), "AUTO:", 5) &&
                        (expect == WINO_ALGO_AUTO || algo_a == expect),
               "AUTO %s %s: the same choice twice (%d, %d), expected %d: %s",
               kind_name(kind), dtype_name(d->dtype), (int)algo_a, (int)algo_b, (int)expect,
               a ? wino_conv2d_reason(a) : wino_last_error());
    wino_conv2d_destroy(a);
    wino_conv2d_destroy(b);
    problem_free(&p);
}

/* Wall-clock milliseconds: AUTO's create time is printed (for docs/cuda-winograd.md), not
 * checked. */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* AUTO's forward choice on a small layer, FP32 and FP16: the vendor's or one of the tiles AUTO
 * times, what wino_conv2d_algo reports named in the reason, beside the times of every tile
 * timed (FP32: F(2x2) to F(7x7); FP16: to F(4x4)). */
static void check_auto_tiles(const struct wino_context *ctx)
{
    static const enum wino_dtype dtypes[2] = {WINO_DTYPE_F32, WINO_DTYPE_F16};
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_AUTO};
    for (int t = 0; t < 2; t++) {
        struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 32, 24, 24, 32, 3, 3, 1, 1);
        d.layout = WINO_LAYOUT_NHWC;
        d.dtype = dtypes[t];
        struct problem p = problem_make(&d, WINO_CONV2D_FORWARD, 0, NULL, 0, NULL);
        wino_conv2d *op = NULL;
        const double start = now_ms();
        check_op(&p, &o, ctx, "AUTO tiles", &op);
        const double took = now_ms() - start;
        enum wino_algo algo = WINO_ALGO_AUTO;
        int m = -1;
        const char *why = op ? wino_conv2d_reason(op) : wino_last_error();
        const int largest = t ? 4 : 7;
        char chosen[64], last[16], beyond[16];
        snprintf(last, sizeof last, ", %d: ", largest);
        snprintf(beyond, sizeof beyond, ", %d: ", largest + 1);
        /* FP16 on Hopper: also the ROWS kernels' F(4, 3) and F(6, 3) (test_gpu_rows), last in
         * the list */
        cudaDeviceProp prop;
        CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        const int rows = t && prop.major == 9 && prop.minor == 0;
        const int listed = strstr(why, "(m 2: ") && strstr(why, last) && !strstr(why, beyond) &&
                           (!rows || (strstr(why, ", ROWS 4: ") && strstr(why, ", ROWS 6: ")));
        enum wino_variant variant = WINO_VARIANT_AUTO;
        int ok = op && !wino_conv2d_algo(op, &algo, &m) && !wino_conv2d_variant(op, &variant) &&
                 listed;
        const int by_rows = variant == WINO_VARIANT_ROWS;
        if (by_rows)
            snprintf(chosen, sizeof chosen, "AUTO: Winograd ROWS F(%d, 3) at ", m);
        else
            snprintf(chosen, sizeof chosen, "AUTO: Winograd F(%dx%d, 3x3) at ", m, m);
        ok = ok && (algo == WINO_ALGO_VENDOR ? m == 0 && !strncmp(why, "AUTO: the vendor's", 18)
                                             : algo == WINO_ALGO_WINOGRAD && m >= 2 &&
                                                   (by_rows ? rows && (m == 4 || m == 6)
                                                            : m <= largest) &&
                                                   !strncmp(why, chosen, strlen(chosen)));
        printf("  AUTO forward %s, created in %.1f ms: %s\n", dtype_name(d.dtype), took, why);
        gpu_checkf(&tc, ok, "AUTO forward %s: algo %d tile %d is one of the candidates and the "
                   "reason names it beside every tile timed (m 2 to %d, and ROWS 4 and 6 on "
                   "Hopper in FP16): %s", dtype_name(d.dtype),
                   (int)algo, m, largest, why);
        wino_conv2d_destroy(op);
        problem_free(&p);
    }
}

/* The DEVICE of path's first CUDA line (src/op/tuning_cache.h), "" when there is none: the key
 * this machine's creates write, taken from the file so that the test need not rebuild it. */
static void cached_device(const char *path, char *buf, size_t cap)
{
    char text[4096];
    FILE *f = fopen(path, "r");
    const size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    const char *line = strstr(text, "\ncuda\t");
    const char *end = line ? strchr(line + 6, '\t') : NULL;
    buf[0] = '\0';
    if (end)
        snprintf(buf, cap, "%.*s", (int)(end - line - 6), line + 6);
}

/* Appends to path the CUDA line of (device, kind, d) without options: choice vendor, tile m and
 * the times. */
static int append_entry(const char *path, const char *device, enum wino_conv2d_kind kind,
                        const struct wino_conv2d_desc *d, int vendor, int m, double wino_ms,
                        double vendor_ms)
{
    FILE *f = fopen(path, "a");
    int ok = f && fprintf(f, "cuda\t%s\t%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d 0 0 0 0 "
                             "%d %d %.6f %.6f\n", device, (int)kind, (int)d->dtype,
                          (int)d->layout, d->n, d->c, d->h, d->w, d->k, d->r, d->s, d->pad_h,
                          d->pad_w, d->stride_h, d->stride_w, d->dilation_h, d->dilation_w,
                          vendor, m, wino_ms, vendor_ms) > 0;
    if (f)
        ok &= fclose(f) == 0;
    return ok;
}

/* A layer's AUTO operator with the tuning cache: created and checked (check_op), then its
 * algo, tile and reason against what is expected (want_algo AUTO: anything; followed: whether
 * the reason must, or must not, say that the cache gave the choice). */
static void check_cached(const struct wino_conv2d_desc *d, enum wino_conv2d_kind kind,
                         const struct wino_context *ctx, enum wino_algo want_algo, int want_m,
                         int followed, const char *what)
{
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_AUTO};
    struct problem p = problem_make(d, kind, 0, NULL, 0, NULL);
    wino_conv2d *op = NULL;
    check_op(&p, &o, ctx, what, &op);
    enum wino_algo algo = WINO_ALGO_AUTO;
    int m = -1;
    const char *why = op ? wino_conv2d_reason(op) : wino_last_error();
    const int from_cache = strstr(why, "as the tuning cache recorded") != NULL;
    printf("  %s: %s\n", what, why);
    gpu_checkf(&tc, op && !wino_conv2d_algo(op, &algo, &m) &&
                        (want_algo == WINO_ALGO_AUTO || (algo == want_algo && m == want_m)) &&
                        from_cache == followed,
               "%s %s: algo %d tile %d (want %d, %d), the cache's choice %d (want %d): %s", what,
               kind_name(kind), (int)algo, m, (int)want_algo, want_m, from_cache, followed, why);
    wino_conv2d_destroy(op);
    problem_free(&p);
}

/* AUTO with ctx->tuning_cache. Every layer here is created nowhere else in the process. */
static void check_tuning_cache(const struct wino_context *base)
{
    char path[] = "/tmp/wino-gpu-cache-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) {
        gpu_checkf(&tc, 0, "tuning cache: mkstemp failed");
        return;
    }
    close(fd);
    remove(path);
    struct wino_context ctx = *base;
    ctx.tuning_cache = path;

    /* a first create times the candidates and stores the choice */
    const struct wino_conv2d_desc timed = wino_conv2d_desc_make(2, 24, 18, 18, 40, 3, 3, 1, 1);
    check_cached(&timed, WINO_CONV2D_FORWARD, &ctx, WINO_ALGO_AUTO, 0, 0, "cache: first create");
    char device[400];
    cached_device(path, device, sizeof device);
    gpu_checkf(&tc, device[0] && test_count_lines(path) == 2 &&
                        wino_tuning_cache_check(path) == WINO_SUCCESS,
               "cache: the first create wrote one valid entry (device \"%s\"): %s", device,
               wino_last_error());
    if (!device[0]) {
        remove(path);
        return;
    }

    /* hand-written entries are followed, with no timing: a tile, the vendor's */
    const struct wino_conv2d_desc tile3 = wino_conv2d_desc_make(1, 20, 15, 17, 28, 3, 3, 1, 1);
    const struct wino_conv2d_desc vendor = wino_conv2d_desc_make(1, 20, 15, 17, 36, 3, 3, 1, 1);
    const struct wino_conv2d_desc data2 = wino_conv2d_desc_make(2, 16, 14, 14, 24, 3, 3, 1, 1);
    const struct wino_conv2d_desc filter = wino_conv2d_desc_make(2, 16, 14, 14, 20, 3, 3, 1, 1);
    int ok = append_entry(path, device, WINO_CONV2D_FORWARD, &tile3, 0, 3, 0.01, 0.02) &&
             append_entry(path, device, WINO_CONV2D_FORWARD, &vendor, 1, 0, -1.0, 0.01) &&
             append_entry(path, device, WINO_CONV2D_BACKWARD_DATA, &data2, 0, 2, 0.01, 0.02) &&
             append_entry(path, device, WINO_CONV2D_BACKWARD_FILTER, &filter, 1, 0, 0.02, 0.01);
    gpu_checkf(&tc, ok && wino_tuning_cache_check(path) == WINO_SUCCESS,
               "cache: the hand-written entries are valid: %s", wino_last_error());
    check_cached(&tile3, WINO_CONV2D_FORWARD, &ctx, WINO_ALGO_WINOGRAD, 3, 1,
                 "cache: forward entry F(3x3, 3x3)");
    check_cached(&vendor, WINO_CONV2D_FORWARD, &ctx, WINO_ALGO_VENDOR, 0, 1,
                 "cache: forward entry vendor");
    check_cached(&data2, WINO_CONV2D_BACKWARD_DATA, &ctx, WINO_ALGO_WINOGRAD, 2, 1,
                 "cache: backward-data entry F(2x2, 3x3)");
    check_cached(&filter, WINO_CONV2D_BACKWARD_FILTER, &ctx, WINO_ALGO_VENDOR, 0, 1,
                 "cache: backward-filter entry vendor");

    /* a stale entry is not followed: the layer is timed and its entry replaced */
    const struct wino_conv2d_desc stale = wino_conv2d_desc_make(1, 12, 21, 19, 16, 3, 3, 1, 1);
    const int lines = test_count_lines(path);
    ok = append_entry(path, device, WINO_CONV2D_FORWARD, &stale, 0, 8, 0.01, 0.02) &&
         wino_tuning_cache_check(path) == WINO_INVALID_ARGUMENT;
    gpu_checkf(&tc, ok, "cache: an entry of F(8x8, 3x3) is reported stale: %s",
               wino_last_error());
    check_cached(&stale, WINO_CONV2D_FORWARD, &ctx, WINO_ALGO_AUTO, 0, 0,
                 "cache: stale entry");
    gpu_checkf(&tc, test_count_lines(path) == lines + 1 &&
                        wino_tuning_cache_check(path) == WINO_SUCCESS,
               "cache: the stale entry was replaced by the timed choice (%d lines, %d before "
               "it): %s", test_count_lines(path), lines, wino_last_error());
    remove(path);
}

/* Backward-filter with accumulate: dw = dw0 + dW. */
static void check_accumulate(const struct wino_context *ctx)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(2, 6, 11, 9, 5, 3, 3, 1, 1);
    d.stride_h = 2;
    float *dw0 = (float *)malloc(d.k * d.c * 9 * sizeof(float));
    for (int i = 0; i < d.k * d.c * 9; i++)
        dw0[i] = (float)test_rng_sym(&rng);
    struct problem p = problem_make(&d, WINO_CONV2D_BACKWARD_FILTER, 0, NULL, 0, dw0);
    CUDA_CHECK(cudaMemcpy(p.out, dw0, p.out_n * 4, cudaMemcpyHostToDevice));
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_DIRECT, .accumulate = 1};
    wino_conv2d *op = NULL;
    char why[300] = "";
    double err = NAN;
    if (create(&p, ctx, &o, &op))
        snprintf(why, sizeof why, "%s", wino_last_error());
    else
        err = checked_runs(&p, op, (cudaStream_t)ctx->stream, 0, why, sizeof why);
    gpu_checkf(&tc, err <= 1e-5, "backward-filter accumulate (dw += dW): rel L1 %.2e %s", err,
               why);
    wino_conv2d_destroy(op);
    problem_free(&p);
    free(dw0);
}

/* Forward VENDOR with new weights: the runs after set_weights use them. */
static void check_set_weights(const struct wino_context *ctx)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 7, 13, 13, 9, 3, 3, 1, 1);
    d.stride_w = 2;
    struct problem p = problem_make(&d, WINO_CONV2D_FORWARD, 0, NULL, 0, NULL);
    struct tensor other = random_tensor(p.in2.n, d.dtype, 0);
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_VENDOR};
    wino_conv2d *op = NULL;
    char why[300] = "";
    double err = NAN;
    if (!create(&p, ctx, &o, &op) &&
        !wino_conv2d_set_weights(op, other.device, (void *)ctx->stream)) {
        wino_ref_conv2d_fwd(&d, p.in.host, other.host, p.ref);
        err = checked_runs(&p, op, (cudaStream_t)ctx->stream, 1, why, sizeof why);
    } else {
        snprintf(why, sizeof why, "%s", wino_last_error());
    }
    gpu_checkf(&tc, err <= 1e-5, "forward VENDOR after set_weights: rel L1 %.2e %s", err, why);
    wino_conv2d_destroy(op);
    tensor_free(&other);
    problem_free(&p);
}

/* A run captured in a graph on a non-blocking stream replays the eager run's bytes. */
static void check_graph(const struct wino_context *ctx)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(2, 16, 14, 14, 24, 3, 3, 1, 1);
    d.layout = WINO_LAYOUT_NHWC;
    d.dtype = WINO_DTYPE_F16;
    d.stride_h = d.stride_w = 2;
    struct problem p = problem_make(&d, WINO_CONV2D_FORWARD, 0, NULL, 0, NULL);
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_VENDOR};
    wino_conv2d *op = NULL;
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    size_t bytes = 0, out_bytes = p.out_n * 2;
    int ok = !create(&p, ctx, &o, &op) && !wino_conv2d_workspace_size(op, &bytes);
    void *ws = gpu_alloc(bytes);
    char *eager = (char *)malloc(out_bytes), *replayed = (char *)malloc(out_bytes);
    ok = ok && !run(&p, op, ws, bytes, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaMemcpy(eager, p.out, out_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(p.out, 0xff, out_bytes));
    cudaGraph_t g = NULL;
    cudaGraphExec_t exec = NULL;
    size_t nodes = 0;
    if (ok) {
        CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        ok = !run(&p, op, ws, bytes, s);
        CUDA_CHECK(cudaStreamEndCapture(s, &g));
        CUDA_CHECK(cudaGraphGetNodes(g, NULL, &nodes));
        CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
        CUDA_CHECK(cudaGraphLaunch(exec, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        CUDA_CHECK(cudaMemcpy(replayed, p.out, out_bytes, cudaMemcpyDeviceToHost));
    }
    gpu_checkf(&tc, ok && nodes > 0 && !memcmp(eager, replayed, out_bytes),
               "VENDOR run captured in a CUDA graph (%zu nodes) replays the eager bytes (%s)",
               nodes, ok ? "" : wino_last_error());
    if (exec)
        CUDA_CHECK(cudaGraphExecDestroy(exec));
    if (g)
        CUDA_CHECK(cudaGraphDestroy(g));
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(ws));
    free(eager);
    free(replayed);
    wino_conv2d_destroy(op);
    problem_free(&p);
}

static void expect_status(enum wino_status got, enum wino_status want, wino_conv2d *op,
                          const char *what)
{
    gpu_checkf(&tc, got == want && wino_last_error()[0], "%s: %s (want %s): %s", what,
               gpu_status_name(got), gpu_status_name(want), wino_last_error());
    wino_conv2d_destroy(op);
}

static void check_refusals(const struct wino_context *ctx)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 4, 9, 9, 4, 3, 3, 1, 1);
    struct problem p = problem_make(&d, WINO_CONV2D_FORWARD, 0, NULL, 0, NULL);
    wino_conv2d *op = NULL;
    const struct wino_conv2d_options vendor = {.algo = WINO_ALGO_VENDOR};
    struct wino_conv2d_options tiled = vendor;
    tiled.tile_m = 2;
    expect_status(wino_conv2d_create(&d, p.in2.host, NULL, &vendor, &op), WINO_UNSUPPORTED, op,
                  "VENDOR on the CPU");
    expect_status(create(&p, ctx, &tiled, &op), WINO_INVALID_ARGUMENT, op, "VENDOR with tile_m");
    struct wino_conv2d_desc d8 = d;
    d8.layout = WINO_LAYOUT_NHWC;
    d8.dtype = WINO_DTYPE_U8;
    struct wino_int8_params q;
    memset(&q, 0, sizeof q);
    q.x_scale = 0.01f, q.alpha_ta = 20.0f, q.alpha_tw = 1.0f, q.y_scale = 0.05f;
    expect_status(wino_conv2d_create_int8(&d8, p.in2.host, &q, NULL, &vendor, &op),
                  WINO_UNSUPPORTED, op, "VENDOR for INT8");
    enum wino_status st = create(&p, ctx, &vendor, &op);
    size_t bytes = 0;
    if (!st)
        st = wino_conv2d_workspace_size(op, &bytes);
    gpu_checkf(&tc, !st, "refusals: the good VENDOR operator: %s", wino_last_error());
    if (!st) {
        void *ws = gpu_alloc(bytes + 64);
        expect_status(wino_conv2d_run(op, p.in.host, p.out, ws, bytes), WINO_INVALID_ARGUMENT,
                      NULL, "VENDOR run with host x");
        if (bytes)
            expect_status(wino_conv2d_run(op, p.in.device, p.out, ws, bytes - 1),
                          WINO_INSUFFICIENT_WORKSPACE, NULL, "VENDOR run, workspace too small");
        CUDA_CHECK(cudaFree(ws));
    }
    wino_conv2d_destroy(op);
    CUDA_CHECK(cudaDeviceSynchronize()); /* nothing left pending */
    problem_free(&p);
}

int main(void)
{
    rng.s = test_seed();
    cudaStream_t stream = gpu_open_device(0);
    const struct wino_context ctx = gpu_context(0, stream);
    {
        struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 4, 9, 9, 4, 3, 3, 1, 1);
        struct problem p = problem_make(&d, WINO_CONV2D_FORWARD, 0, NULL, 0, NULL);
        const struct wino_conv2d_options o = {.algo = WINO_ALGO_VENDOR};
        wino_conv2d *op = NULL;
        const enum wino_status st = create(&p, &ctx, &o, &op);
        wino_conv2d_destroy(op);
        problem_free(&p);
        if (st) {
            gpu_checkf(&tc, st == WINO_UNSUPPORTED && strstr(wino_last_error(), "cuDNN"),
                       "no vendor path: %s", wino_last_error());
            printf("no vendor path here: %s\n", wino_last_error());
            return gpu_report(&tc);
        }
    }
    static const enum wino_dtype dtypes[3] = {WINO_DTYPE_F32, WINO_DTYPE_F16, WINO_DTYPE_BF16};
    const struct wino_conv2d_options direct = {.algo = WINO_ALGO_DIRECT};
    const char *small = getenv("WINO_GPU_TEST_SMALL");
    const int layers = small && small[0] == '1' ? 2 : 6;
    for (int kind = 0; kind < 3; kind++)
        for (int t = 0; t < 3; t++)
            for (int i = 0; i < layers; i++) {
                const struct wino_conv2d_desc d =
                    random_desc(dtypes[t], i % 2 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW);
                check_case(&d, (enum wino_conv2d_kind)kind, &direct, &ctx, i == layers - 1,
                           "DIRECT");
            }
    /* AUTO where wino's kernels refuse: the vendor's */
    struct wino_conv2d_desc strided = wino_conv2d_desc_make(2, 24, 20, 20, 32, 3, 3, 1, 1);
    strided.stride_h = strided.stride_w = 2;
    for (int kind = 0; kind < 3; kind++)
        check_auto(&strided, (enum wino_conv2d_kind)kind, &ctx, WINO_ALGO_VENDOR);
    struct wino_conv2d_desc bf16 = wino_conv2d_desc_make(2, 32, 16, 16, 32, 3, 3, 1, 1);
    bf16.dtype = WINO_DTYPE_BF16; /* NCHW: the ROWS kernel takes NHWC BF16 only */
    check_auto(&bf16, WINO_CONV2D_FORWARD, &ctx, WINO_ALGO_VENDOR);
    /* AUTO on layers both serve: either, with both times in the reason */
    for (int t = 0; t < 2; t++) {
        struct wino_conv2d_desc d = wino_conv2d_desc_make(4, 64, 28, 28, 64, 3, 3, 1, 1);
        d.layout = WINO_LAYOUT_NHWC;
        d.dtype = dtypes[t];
        for (int kind = 0; kind < 3; kind++)
            check_auto(&d, (enum wino_conv2d_kind)kind, &ctx, WINO_ALGO_AUTO);
    }
    struct wino_conv2d_desc biased = wino_conv2d_desc_make(2, 5, 12, 10, 7, 3, 3, 1, 1);
    biased.stride_h = 2;
    const float bias[7] = {0.5f, -0.25f, 1.0f, -1.0f, 0.125f, 0.0f, 2.0f};
    const struct wino_conv2d_options vendor_bias = {.algo = WINO_ALGO_VENDOR, .bias = bias,
                                                    .relu = 1};
    for (int t = 0; t < 3; t++) {
        biased.dtype = dtypes[t];
        biased.layout = t == 1 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
        check_case(&biased, WINO_CONV2D_FORWARD, &vendor_bias, &ctx, 0, "VENDOR bias+ReLU");
    }
    check_auto_tiles(&ctx);
    check_tuning_cache(&ctx);
    check_accumulate(&ctx);
    check_set_weights(&ctx);
    check_graph(&ctx);
    check_refusals(&ctx);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return gpu_report(&tc);
}
