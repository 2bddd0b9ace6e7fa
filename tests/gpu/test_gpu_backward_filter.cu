/* Backward-filter on the CUDA backend (WinRS in the CUDA component, src/cuda/winrs_cuda.h):
 *  - layers of awkward shapes (filter widths 1 to 7, R != S, padding up to R - 1, batch 1 to 8,
 *    one channel, channels past a multiple of the fused kernels' 64 x 64 blocks, both layouts,
 *    units of two widths, a rest tile, NHWC channels in 16-byte pieces for the tensor-core NHWC
 *    kernel: multiples of 4 for FP32's, 8 for 16 bits', whose plans have one width of units
 *    with a partial last unit a row), FP32, FP16 and BF16, fused and non-fused, dw = dW and
 *    dw += dW: each result against the FP64 reference (wino_ref_conv2d_bwd_filter) on inputs
 *    uniform in (-1, 1) (rounded to 16 bits for FP16 and BF16), dw poisoned with NaN first (or random values
 *    to accumulate onto);
 *  - a layer whose units need several chunks (the GEMMs' beta = 1 sums them) and several
 *    segments of the fused kernels (their buckets summed); one of more than a round of thread
 *    blocks, some run whole and the rest in clusters after them (NHWC, every dtype);
 *  - one operator reshaped across two sizes;
 *  - AUTO's workspace on layers of the winrs-bfc set: at most twice x + dy + dw;
 *  - bad input: host pointers, a workspace too small, stride 2 with WINO_ALGO_WINOGRAD
 *    (WINO_UNSUPPORTED; AUTO and DIRECT serve it with the vendor's engines: test_gpu_vendor.cu).
 * Usage: test_gpu_backward_filter (WINO_TEST_SEED=N to replay). */
#include <cuda_bf16.h>

#include "gpu_test_util.h"

static struct test_counts tc;
static struct test_rng rng;

/* Relative L1 bounds (inputs in (-1, 1)) by the largest alpha of the operator's kernels: FP32
 * the CPU WinRS's (tests/test_backward_filter.c, docs/training.md), FP16 for its FP16 GEMM
 * operands. */
static double f32_bound(int alpha)
{
    return alpha <= 4 ? 2e-6 : alpha <= 8 ? 1e-5 : 2e-4;
}

static double f16_bound(int alpha)
{
    return alpha <= 4 ? 3e-3 : alpha <= 8 ? 1e-2 : 5e-2;
}

/* BF16 keeps 8 significant bits to FP16's 11: its operands' rounding is 8 times FP16's. */
static double bf16_bound(int alpha)
{
    return 8.0 * f16_bound(alpha);
}

static double bound_of(enum wino_dtype t, int alpha)
{
    return t == WINO_DTYPE_F16 ? f16_bound(alpha) : t == WINO_DTYPE_BF16 ? bf16_bound(alpha)
                                                                         : f32_bound(alpha);
}

static const char *dtype_name(enum wino_dtype t)
{
    return t == WINO_DTYPE_F16 ? "FP16" : t == WINO_DTYPE_BF16 ? "BF16" : "FP32";
}

static int largest_alpha(const wino_conv2d *op)
{
    struct wino_winrs_info info;
    if (wino_conv2d_backward_filter_info(op, &info))
        return 0;
    int a = info.alpha[0];
    if (info.kernels > 1 && info.alpha[1] > a)
        a = info.alpha[1];
    return a;
}

/* A 16-bit element of type t (FP16 or BF16) from v, and back. */
static unsigned short to_bits(float v, enum wino_dtype t)
{
    if (t == WINO_DTYPE_F16)
        return __half_as_ushort(__float2half_rn(v));
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

static float from_bits(unsigned short b, enum wino_dtype t)
{
    if (t == WINO_DTYPE_F16)
        return __half2float(__ushort_as_half(b));
    return __bfloat162float(__ushort_as_bfloat16(b));
}

/* Host values rounded as the device will see them (to half or bfloat16 for FP16 and BF16). */
static void randomize(float *v, size_t n, enum wino_dtype t)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = (float)test_rng_sym(&rng);
        if (t != WINO_DTYPE_F32)
            v[i] = from_bits(to_bits(v[i], t), t);
    }
}

static void *upload(const float *v, size_t n, enum wino_dtype t)
{
    if (t == WINO_DTYPE_F32)
        return gpu_upload(v, n * sizeof(float));
    unsigned short *h = (unsigned short *)malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++)
        h[i] = to_bits(v[i], t);
    void *d = gpu_upload(h, n * sizeof *h);
    free(h);
    return d;
}

static void download(float *v, const void *d, size_t n, enum wino_dtype t)
{
    if (t == WINO_DTYPE_F32) {
        CUDA_CHECK(cudaMemcpy(v, d, n * sizeof(float), cudaMemcpyDeviceToHost));
        return;
    }
    unsigned short *h = (unsigned short *)malloc(n * sizeof *h);
    CUDA_CHECK(cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
        v[i] = from_bits(h[i], t);
    free(h);
}

/* One run of op on d's sizes: the relative L1 error against the reference (NaN on failure). */
static double run_checked(wino_conv2d *op, const struct wino_conv2d_desc *d, int accumulate)
{
    const enum wino_dtype t = d->dtype;
    int p = 0, q = 0;
    wino_conv2d_output_size(d, &p, &q);
    const size_t xn = (size_t)d->n * d->c * d->h * d->w, yn = (size_t)d->n * d->k * p * q,
                 wn = (size_t)d->k * d->c * d->r * d->s;
    float *x = (float *)malloc(xn * 4), *dy = (float *)malloc(yn * 4), *dw = (float *)malloc(wn * 4);
    double *ref = (double *)malloc(wn * 8);
    randomize(x, xn, t);
    randomize(dy, yn, t);
    randomize(dw, wn, t); /* what accumulate adds onto */
    wino_ref_conv2d_bwd_filter(d, x, dy, ref);
    for (size_t i = 0; i < wn && accumulate; i++)
        ref[i] += dw[i];
    if (!accumulate)
        for (size_t i = 0; i < wn; i++)
            dw[i] = NAN;
    void *gx = upload(x, xn, t), *gdy = upload(dy, yn, t), *gdw = upload(dw, wn, t);
    size_t bytes = 0;
    wino_conv2d_workspace_size(op, &bytes);
    void *ws = gpu_alloc(bytes);
    const enum wino_status st = wino_conv2d_backward_filter_run(op, gx, gdy, gdw, ws, bytes);
    CUDA_CHECK(cudaDeviceSynchronize());
    double err = NAN;
    if (!st) {
        download(dw, gdw, wn, t);
        err = wino_rel_l1_f32(dw, ref, wn);
    } else {
        printf("  run: %s: %s\n", gpu_status_name(st), wino_last_error());
    }
    cudaFree(gx), cudaFree(gdy), cudaFree(gdw), cudaFree(ws);
    free(x), free(dy), free(dw), free(ref);
    return err;
}

struct layer {
    int n, c, h, w, k, r, s, pad_h, pad_w;
    enum wino_layout layout;
};

static struct wino_conv2d_desc desc_of(const struct layer *l, enum wino_dtype dtype)
{
    struct wino_conv2d_desc d =
        wino_conv2d_desc_make(l->n, l->c, l->h, l->w, l->k, l->r, l->s, l->pad_h, l->pad_w);
    d.layout = l->layout;
    d.dtype = dtype;
    return d;
}

static void check_layer(const struct layer *l, enum wino_dtype dtype, enum wino_variant variant,
                        int accumulate, const struct wino_context *ctx)
{
    const struct wino_conv2d_desc d = desc_of(l, dtype);
    const struct wino_conv2d_options o = {
        .algo = WINO_ALGO_AUTO, .variant = variant, .accumulate = accumulate};
    const char *vname = variant == WINO_VARIANT_FUSED ? "fused" : "non-fused";
    wino_conv2d *op = NULL;
    const enum wino_status st = wino_conv2d_backward_filter_create(&d, ctx, &o, &op);
    const int alpha = st ? 0 : largest_alpha(op);
    const double err = st ? NAN : run_checked(op, &d, accumulate);
    const double bound = bound_of(dtype, alpha);
    printf("  %s %s %s %dx%dx%dx%d -> %d, %dx%d%s: alpha %d, rel L1 %.2e\n",
           dtype_name(dtype), vname,
           l->layout == WINO_LAYOUT_NHWC ? "NHWC" : "NCHW", l->n, l->c, l->h, l->w, l->k, l->r,
           l->s, accumulate ? " +=" : "", alpha, err);
    gpu_checkf(&tc, !st && err <= bound,
               "%s %s %s %dx%dx%dx%d -> %d, %dx%d pad %d,%d%s: alpha %d, rel L1 %.2e <= %.0e "
               "(%s%s%s)",
               dtype_name(dtype), vname,
               l->layout == WINO_LAYOUT_NHWC ? "NHWC" : "NCHW", l->n, l->c, l->h, l->w, l->k, l->r,
               l->s, l->pad_h, l->pad_w, accumulate ? ", dw +=" : "", alpha, err, bound,
               gpu_status_name(st), st ? ": " : "", st ? wino_last_error() : "");
    wino_conv2d_destroy(op);
}

static void check_reshape(const struct wino_context *ctx)
{
    const struct layer a = {2, 6, 10, 13, 5, 3, 3, 1, 1, WINO_LAYOUT_NCHW};
    struct wino_conv2d_desc d = desc_of(&a, WINO_DTYPE_F32);
    wino_conv2d *op = NULL;
    const struct wino_conv2d_options winrs = {.algo = WINO_ALGO_WINOGRAD};
    int ok = !wino_conv2d_backward_filter_create(&d, ctx, &winrs, &op);
    const int sizes[3][3] = {{3, 17, 9}, {1, 5, 30}, {2, 10, 13}};
    double worst = 0.0;
    for (int i = 0; i < 3 && ok; i++) {
        size_t bytes = 0, asked = 0;
        d.n = sizes[i][0], d.h = sizes[i][1], d.w = sizes[i][2];
        ok = !wino_conv2d_reshape(op, d.n, d.h, d.w, &bytes) &&
             !wino_conv2d_workspace_size(op, &asked) && asked == bytes;
        const double err = ok ? run_checked(op, &d, 0) : NAN;
        ok = ok && err <= f32_bound(largest_alpha(op));
        worst = err > worst || isnan(err) ? err : worst;
    }
    gpu_checkf(&tc, ok, "one operator reshaped across three sizes: worst rel L1 %.2e (%s)", worst,
               wino_last_error());
    wino_conv2d_destroy(op);
}

static void check_bad_run(const struct wino_conv2d_desc *d, enum wino_variant variant,
                          const struct wino_context *ctx);

/* AUTO's operators of winrs-bfc-sized layers take at most twice x + dy + dw as workspace
 * (create only: nothing runs). */
static void check_auto_workspace(const struct wino_context *ctx)
{
    static const struct layer layers[] = {
        {32, 512, 14, 14, 512, 3, 3, 1, 1, WINO_LAYOUT_NHWC},
        {32, 256, 28, 28, 256, 5, 5, 2, 2, WINO_LAYOUT_NHWC},
        {32, 1024, 7, 7, 1024, 3, 3, 1, 1, WINO_LAYOUT_NHWC},
        {32, 64, 112, 112, 64, 3, 3, 1, 1, WINO_LAYOUT_NHWC},
        /* NCHW: x and dy staged in NHWC for the tensor-core kernel */
        {32, 512, 14, 14, 512, 3, 3, 1, 1, WINO_LAYOUT_NCHW},
        {32, 64, 112, 112, 64, 3, 3, 1, 1, WINO_LAYOUT_NCHW},
    };
    for (int i = 0; i < (int)(sizeof layers / sizeof layers[0]); i++)
        for (int dt = 0; dt < 2; dt++) {
            const struct wino_conv2d_desc d =
                desc_of(&layers[i], dt ? WINO_DTYPE_F16 : WINO_DTYPE_F32);
            wino_conv2d *op = NULL;
            size_t bytes = 0;
            enum wino_variant v = WINO_VARIANT_AUTO;
            const enum wino_status st = wino_conv2d_backward_filter_create(&d, ctx, NULL, &op);
            if (!st) {
                wino_conv2d_workspace_size(op, &bytes);
                wino_conv2d_variant(op, &v);
            }
            const double data = (dt ? 2.0 : 4.0) *
                                ((double)d.n * d.c * d.h * d.w + (double)d.n * d.k * d.h * d.w +
                                 (double)d.k * d.c * d.r * d.s);
            gpu_checkf(&tc, !st && bytes <= 2.0 * data,
                       "AUTO %s %dx%dx%dx%d -> %d, %dx%d: %s, workspace %.2f x the data (%s)",
                       dtype_name(d.dtype), d.n, d.c, d.h, d.w, d.k, d.r, d.s,
                       v == WINO_VARIANT_FUSED ? "fused" : "non-fused", bytes / data,
                       st ? wino_last_error() : "");
            wino_conv2d_destroy(op);
        }
}

static void check_bad_input(const struct wino_context *ctx)
{
    const struct layer a = {4, 4, 64, 64, 4, 3, 3, 1, 1, WINO_LAYOUT_NHWC}; /* buckets */
    struct wino_conv2d_desc d = desc_of(&a, WINO_DTYPE_F32);
    wino_conv2d *op = NULL;
    const struct wino_conv2d_options fused_output = {.variant = WINO_VARIANT_FUSED_OUTPUT};
    gpu_checkf(&tc, wino_conv2d_backward_filter_create(&d, ctx, &fused_output, &op) ==
                            WINO_UNSUPPORTED && !op,
               "WINO_VARIANT_FUSED_OUTPUT is WINO_UNSUPPORTED (%s)", wino_last_error());
    struct wino_conv2d_desc strided = d;
    strided.stride_h = 2;
    const struct wino_conv2d_options winrs = {.algo = WINO_ALGO_WINOGRAD};
    gpu_checkf(&tc, wino_conv2d_backward_filter_create(&strided, ctx, &winrs, &op) ==
                            WINO_UNSUPPORTED && !op,
               "stride 2 with WINO_ALGO_WINOGRAD is WINO_UNSUPPORTED");
    for (int v = 0; v < 2; v++)
        check_bad_run(&d, v ? WINO_VARIANT_NON_FUSED : WINO_VARIANT_AUTO, ctx);
}

/* Runs of an operator of d with variant (AUTO: the fused kernels) refuse host pointers and a
 * workspace too small. */
static void check_bad_run(const struct wino_conv2d_desc *d, enum wino_variant variant,
                          const struct wino_context *ctx)
{
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_WINOGRAD, .variant = variant};
    wino_conv2d *op = NULL;
    enum wino_variant got = WINO_VARIANT_AUTO;
    if (wino_conv2d_backward_filter_create(d, ctx, &o, &op) || wino_conv2d_variant(op, &got)) {
        gpu_checkf(&tc, 0, "create for the bad-input checks: %s", wino_last_error());
        return;
    }
    gpu_checkf(&tc, got == (variant ? variant : WINO_VARIANT_FUSED),
               "variant %d asked, %d reported", (int)variant, (int)got);
    size_t bytes = 0;
    wino_conv2d_workspace_size(op, &bytes);
    gpu_checkf(&tc, bytes > 0, "the layer needs a workspace (%zu bytes)", bytes);
    struct wino_winrs_info info;
    const int fused = got == WINO_VARIANT_FUSED; /* its workspace is buckets: segments > 1 */
    gpu_checkf(&tc, !wino_conv2d_backward_filter_info(op, &info) && info.segments >= 1 + fused,
               "info reports %d segments (%s)", info.segments, fused ? "fused" : "non-fused");
    const size_t n = 4 * 64 * 64 * 4;
    float *host = (float *)calloc(n, sizeof(float));
    void *gx = gpu_alloc(n * 4), *gdy = gpu_alloc(n * 4), *gdw = gpu_alloc(4 * 4 * 9 * 4),
         *ws = gpu_alloc(bytes);
    gpu_checkf(&tc, wino_conv2d_backward_filter_run(op, host, gdy, gdw, ws, bytes) ==
                        WINO_INVALID_ARGUMENT,
               "a host x is refused (%s)", wino_last_error());
    gpu_checkf(&tc, wino_conv2d_backward_filter_run(op, gx, gdy, host, ws, bytes) ==
                        WINO_INVALID_ARGUMENT,
               "a host dw is refused (%s)", wino_last_error());
    gpu_checkf(&tc, wino_conv2d_backward_filter_run(op, gx, gdy, gdw, ws, bytes / 2) ==
                        WINO_INSUFFICIENT_WORKSPACE,
               "half the workspace is refused (%s)", wino_last_error());
    CUDA_CHECK(cudaDeviceSynchronize());
    cudaFree(gx), cudaFree(gdy), cudaFree(gdw), cudaFree(ws);
    free(host);
    wino_conv2d_destroy(op);
}

int main(void)
{
    rng.s = test_seed();
    cudaStream_t stream = gpu_open_device(0);
    const struct wino_context ctx = gpu_context(0, stream);
    static const struct layer layers[] = {
        {2, 3, 9, 11, 5, 3, 3, 1, 1, WINO_LAYOUT_NCHW},
        {1, 8, 16, 16, 8, 3, 3, 1, 1, WINO_LAYOUT_NHWC},
        {3, 4, 7, 13, 6, 5, 5, 2, 2, WINO_LAYOUT_NCHW},
        {1, 2, 12, 20, 3, 1, 7, 0, 3, WINO_LAYOUT_NHWC},
        {2, 5, 6, 6, 4, 2, 2, 0, 0, WINO_LAYOUT_NCHW},
        {1, 1, 5, 9, 1, 3, 4, 2, 3, WINO_LAYOUT_NCHW},
        {2, 16, 14, 14, 32, 3, 3, 1, 1, WINO_LAYOUT_NHWC},
        {8, 8, 128, 128, 8, 3, 3, 1, 1, WINO_LAYOUT_NCHW}, /* several chunks, segments */
        {2, 70, 9, 10, 130, 3, 3, 1, 1, WINO_LAYOUT_NHWC},  /* past 64 x 64 blocks */
        {1, 65, 7, 7, 66, 5, 5, 2, 2, WINO_LAYOUT_NCHW},
        /* NHWC with channels in 16-byte pieces: the tensor-core kernel of
         * winrs_fused_nhwc.cu, past 64 x 64 blocks, many segments, a 1 x 7 filter, channels
         * in FP32's pieces of 4 only */
        {4, 72, 20, 30, 136, 3, 3, 1, 1, WINO_LAYOUT_NHWC},
        {8, 8, 64, 64, 16, 5, 5, 2, 2, WINO_LAYOUT_NHWC},
        {1, 8, 12, 20, 16, 1, 7, 0, 3, WINO_LAYOUT_NHWC},
        {3, 12, 11, 9, 20, 3, 3, 1, 1, WINO_LAYOUT_NHWC},
        /* NCHW with channels in 16-byte pieces: staged in NHWC for the tensor-core kernel (the
         * third in FP32 only); the transposes' vectors of 16 bytes (maps of 600 and 240
         * pixels), 8 (196 in 16 bits), 4 (42: 16 bits) and one element (99, 49) */
        {4, 72, 20, 30, 136, 3, 3, 1, 1, WINO_LAYOUT_NCHW},
        {1, 8, 12, 20, 16, 1, 7, 0, 3, WINO_LAYOUT_NCHW},
        {3, 12, 11, 9, 20, 3, 3, 1, 1, WINO_LAYOUT_NCHW},
        {2, 136, 14, 14, 72, 3, 3, 1, 1, WINO_LAYOUT_NCHW},
        {2, 16, 6, 7, 8, 3, 3, 1, 1, WINO_LAYOUT_NCHW},
        {3, 8, 7, 7, 16, 3, 3, 1, 1, WINO_LAYOUT_NCHW},
    };
    static const enum wino_variant variants[2] = {WINO_VARIANT_FUSED, WINO_VARIANT_NON_FUSED};
    static const enum wino_dtype dtypes[3] = {WINO_DTYPE_F32, WINO_DTYPE_F16, WINO_DTYPE_BF16};
    const int count = (int)(sizeof layers / sizeof layers[0]);
    for (int i = 0; i < count; i++)
        for (int dt = 0; dt < 3; dt++)
            for (int v = 0; v < 2; v++)
                for (int acc = 0; acc < 2; acc++)
                    check_layer(&layers[i], dtypes[dt], variants[v],
                                acc, &ctx);
    /* More than a round of 64 x 64 blocks on an H100's 132 SMs (147 a segment), sized so that
     * the round model (split_rounds) would take the first blocks of K x C whole and the rest
     * in clusters (winrs_grid's head); a device of other sizes may plan it otherwise */
    static const struct layer rounds = {16, 448, 8, 8, 448, 3, 3, 1, 1, WINO_LAYOUT_NHWC};
    check_layer(&rounds, WINO_DTYPE_F16, WINO_VARIANT_FUSED, 0, &ctx);
    check_layer(&rounds, WINO_DTYPE_BF16, WINO_VARIANT_FUSED, 1, &ctx);
    check_layer(&rounds, WINO_DTYPE_F32, WINO_VARIANT_FUSED, 0, &ctx);
    check_reshape(&ctx);
    check_auto_workspace(&ctx);
    check_bad_input(&ctx);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return gpu_report(&tc);
}
