/* Refusals of the CUDA backend, never a crash: host pointers (malloc'ed) for weights, x, y or
 * workspace and NULL pointers are WINO_INVALID_ARGUMENT; a NULL, small or misaligned workspace is
 * WINO_INSUFFICIENT_WORKSPACE; a bad device ordinal, and with two GPUs a stream or weights of
 * another device, are WINO_INVALID_ARGUMENT; with WINO_ALGO_WINOGRAD stride 2, dilation 2,
 * R != S, other points, a tile beyond the generated ones, the fused variant of a tile without
 * fused kernels and BF16 forward and backward-data (wino's kernels: the backward-filter's) are
 * WINO_UNSUPPORTED (AUTO, DIRECT and VENDOR serve the layers with the vendor's engines:
 * test_gpu_vendor.cu); an INT8 dtype through wino_conv2d_create fails. Every refusal leaves
 * wino_last_error() non-empty and no operator.
 * Then: operators created and destroyed without running free their device memory; no CUDA error
 * is left pending; an operator made before the refused calls and a new one still compute
 * correct results.
 * Usage: test_gpu_bad_input (WINO_TEST_SEED=N to replay). */
#include "gpu_test_util.h"

static struct test_counts tc;

enum { ANY_FAILURE = -1 };

/* One check: the call returned want (ANY_FAILURE: anything but WINO_SUCCESS), wino_last_error()
 * is not empty and, for create calls (op given), *op was left NULL. */
static void expect(enum wino_status got, int want, wino_conv2d *const *op, const char *what)
{
    const char *err = wino_last_error();
    const int status_ok = want == ANY_FAILURE ? got != WINO_SUCCESS : (int)got == want;
    const int op_ok = !op || !*op;
    gpu_checkf(&tc, status_ok && err && err[0] && op_ok,
               "%s: got %s, want %s; wino_last_error() \"%s\"%s", what, gpu_status_name(got),
               want == ANY_FAILURE ? "a failure" : gpu_status_name((enum wino_status)want),
               err ? err : "(NULL)", op_ok ? "" : "; an operator was returned");
}

/* Creates with the arguments given and expects want; destroys whatever came back. */
static void expect_create(const struct wino_conv2d_desc *d, const void *w,
                          const struct wino_context *ctx, const struct wino_conv2d_options *o,
                          int want, const char *what)
{
    wino_conv2d *op = NULL;
    const enum wino_status st = wino_conv2d_create(d, w, ctx, o, &op);
    expect(st, want, &op, what);
    wino_conv2d_destroy(op);
}

static void expect_create_int8(const struct wino_conv2d_desc *d, const void *w,
                               const struct wino_int8_params *q, const struct wino_context *ctx,
                               const struct wino_conv2d_options *o, int want, const char *what)
{
    wino_conv2d *op = NULL;
    const enum wino_status st = wino_conv2d_create_int8(d, w, q, ctx, o, &op);
    expect(st, want, &op, what);
    wino_conv2d_destroy(op);
}

/* Runs op (FP32, desc d) on device x into device y and returns the relative L1 error against
 * ref; y is poisoned with NaN first. */
static double run_against(const wino_conv2d *op, const struct wino_conv2d_desc *d,
                          cudaStream_t stream, const void *dx, void *dy, void *ws, size_t bytes,
                          const double *ref, float *y)
{
    int p, q;
    wino_conv2d_output_size(d, &p, &q);
    const size_t yn = (size_t)d->n * d->k * p * q;
    CUDA_CHECK(cudaMemsetAsync(dy, 0xff, yn * sizeof(float), stream));
    if (wino_conv2d_run(op, dx, dy, ws, bytes) != WINO_SUCCESS) {
        printf("  run: %s\n", wino_last_error());
        return NAN;
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(y, dy, yn * sizeof(float), cudaMemcpyDeviceToHost));
    return wino_rel_l1_f32(y, ref, yn);
}

/* Device memory free now, after the device finished its work. */
static size_t device_free_bytes(void)
{
    size_t free_bytes = 0, total = 0;
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return free_bytes;
}

/* Operators created and destroyed without running (C = K = 256: FP32 F(6,3) with 16 MiB of
 * transformed weights, FP16 F(4,3), INT8 F(4,3) fused-output; and a 16-channel FP16 layer with
 * the variant timed at create, which allocates scratch memory) return their device memory: after
 * one warm-up round (which may set up lasting library state), ten rounds leave free memory
 * unchanged within 8 MiB. */
static void check_no_leak(cudaStream_t stream, struct test_rng *rng)
{
    const int C = 256, K = 256;
    const size_t wn = (size_t)K * C * 9;
    float *w = (float *)malloc(wn * sizeof(float));
    __half *wh = (__half *)malloc(wn * sizeof(__half));
    for (size_t i = 0; i < wn; i++) {
        w[i] = (float)(0.05 * test_rng_sym(rng));
        wh[i] = __float2half_rn(w[i]);
    }
    void *dw = gpu_upload(w, wn * sizeof(float)), *dwh = gpu_upload(wh, wn * sizeof(__half));
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, C, 28, 28, K, 3, 3, 1, 1);
    struct wino_conv2d_desc dh = d, d8 = d;
    dh.dtype = WINO_DTYPE_F16;
    d8.layout = WINO_LAYOUT_NHWC;
    d8.dtype = WINO_DTYPE_U8;
    struct wino_conv2d_options o, oh, o8;
    memset(&o, 0, sizeof o);
    o.algo = WINO_ALGO_WINOGRAD;
    o.tile_m = 6;
    o.variant = WINO_VARIANT_NON_FUSED;
    oh = o;
    oh.tile_m = 4;
    struct wino_conv2d_options auto_o = oh;
    auto_o.variant = WINO_VARIANT_AUTO;
    struct wino_conv2d_desc small = wino_conv2d_desc_make(1, 16, 12, 12, 16, 3, 3, 1, 1);
    small.dtype = WINO_DTYPE_F16;
    memset(&o8, 0, sizeof o8);
    o8.tile_m = 4;
    o8.variant = WINO_VARIANT_FUSED_OUTPUT;
    struct wino_int8_params q;
    memset(&q, 0, sizeof q);
    q.x_scale = 0.01f;
    q.alpha_ta = 20.0f;
    q.alpha_tw = 1.0f;
    q.y_scale = 0.1f;
    q.y_dtype = WINO_DTYPE_S8;
    const struct wino_context ctx = gpu_context(0, stream);
    size_t before = 0;
    int created = 0;
    for (int round = 0; round <= 10; round++) {
        if (round == 1)
            before = device_free_bytes();
        wino_conv2d *a = NULL, *b = NULL, *c = NULL, *e = NULL;
        created += wino_conv2d_create(&d, dw, &ctx, &o, &a) == WINO_SUCCESS;
        created += wino_conv2d_create(&dh, dwh, &ctx, &oh, &b) == WINO_SUCCESS;
        created += wino_conv2d_create_int8(&d8, dw, &q, &ctx, &o8, &c) == WINO_SUCCESS;
        created += wino_conv2d_create(&small, dwh, &ctx, &auto_o, &e) == WINO_SUCCESS;
        wino_conv2d_destroy(a);
        wino_conv2d_destroy(b);
        wino_conv2d_destroy(c);
        wino_conv2d_destroy(e);
    }
    const size_t after = device_free_bytes();
    gpu_checkf(&tc, created == 44, "FP32, FP16, INT8 and FP16-AUTO operators created 11 times "
               "each: %d of 44 succeeded (%s)", created, wino_last_error());
    gpu_checkf(&tc, after + (8u << 20) >= before,
               "create + destroy without running, 10 rounds: device memory free went from %zu "
               "to %zu bytes", before, after);
    CUDA_CHECK(cudaFree(dw));
    CUDA_CHECK(cudaFree(dwh));
    free(w), free(wh);
}

int main(void)
{
    struct test_rng rng = {test_seed()};
    cudaStream_t stream = gpu_open_device(0);
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    const struct wino_context ctx = gpu_context(0, stream);

    /* A valid FP32 layer; the weight buffers are large enough for a 3 x 5 filter too. */
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 5, 11, 11, 7, 3, 3, 1, 1);
    int p = 0, q = 0;
    wino_conv2d_output_size(&d, &p, &q);
    const size_t xn = (size_t)d.n * d.c * d.h * d.w, wn = (size_t)d.k * d.c * 3 * 5,
                 yn = (size_t)d.n * d.k * p * q;
    float *hx = (float *)malloc(xn * sizeof(float)), *hw = (float *)malloc(wn * sizeof(float));
    float *hy = (float *)malloc(yn * sizeof(float));
    double *ref = (double *)malloc(yn * sizeof(double));
    for (size_t i = 0; i < xn; i++)
        hx[i] = (float)test_rng_sym(&rng);
    for (size_t i = 0; i < wn; i++)
        hw[i] = (float)test_rng_sym(&rng);
    wino_ref_conv2d_fwd(&d, hx, hw, ref);
    void *dx = gpu_upload(hx, xn * sizeof(float)), *dw = gpu_upload(hw, wn * sizeof(float));
    void *dy = gpu_alloc(yn * sizeof(float));
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    o.algo = WINO_ALGO_WINOGRAD;
    o.tile_m = 2;
    o.variant = WINO_VARIANT_NON_FUSED;
    const double bound = gpu_f32_bound(2 + 3 - 1);

    /* The good operator, run once before the refused calls. */
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    enum wino_status st = wino_conv2d_create(&d, dw, &ctx, &o, &op);
    if (st == WINO_SUCCESS)
        st = wino_conv2d_workspace_size(op, &bytes);
    gpu_checkf(&tc, st == WINO_SUCCESS, "good FP32 operator F(2x2,3x3) on n1 c5 11x11 k7: %s (%s)",
               gpu_status_name(st), wino_last_error());
    if (st != WINO_SUCCESS) {
        printf("aborted: no operator to test with\n");
        return gpu_report(&tc);
    }
    void *ws = gpu_alloc(bytes + 64); /* + 64: room for the misaligned pointer below */
    double err = run_against(op, &d, stream, dx, dy, ws, bytes, ref, hy);
    gpu_checkf(&tc, err <= bound, "good run before the refused calls: relative L1 %.3e, bound "
               "%.1e", err, bound);

    /* create(): pointers and devices. */
    struct wino_context c2 = ctx;
    expect_create(&d, hw, &ctx, &o, WINO_INVALID_ARGUMENT, "create with host weights");
    expect_create(&d, NULL, &ctx, &o, WINO_INVALID_ARGUMENT, "create with NULL weights");
    expect_create(NULL, dw, &ctx, &o, WINO_INVALID_ARGUMENT, "create with NULL desc");
    expect(wino_conv2d_create(&d, dw, &ctx, &o, NULL), WINO_INVALID_ARGUMENT, NULL,
           "create with NULL op");
    c2.device = 999;
    expect_create(&d, dw, &c2, &o, WINO_INVALID_ARGUMENT, "create on device 999");
    c2.device = -1;
    expect_create(&d, dw, &c2, &o, WINO_INVALID_ARGUMENT, "create on device -1");
    c2.device = devices; /* one past the last */
    expect_create(&d, dw, &c2, &o, WINO_INVALID_ARGUMENT, "create on device = device count");

    /* create(): requests the CUDA backend does not serve. */
    struct wino_conv2d_options oa; /* AUTO and DIRECT serve these with the vendor's engines */
    memset(&oa, 0, sizeof oa);
    oa.algo = WINO_ALGO_WINOGRAD;
    struct wino_conv2d_desc bad = d;
    bad.stride_h = bad.stride_w = 2;
    expect_create(&bad, dw, &ctx, &o, WINO_UNSUPPORTED, "create with stride 2, algo WINOGRAD");
    bad = d;
    bad.dilation_h = bad.dilation_w = 2;
    expect_create(&bad, dw, &ctx, &oa, WINO_UNSUPPORTED, "create with dilation 2");
    bad = d;
    bad.s = 5;
    expect_create(&bad, dw, &ctx, &oa, WINO_UNSUPPORTED, "create with a 3x5 filter");
    struct wino_conv2d_options ob = o;
    ob.points = "0,3,-3";
    expect_create(&d, dw, &ctx, &ob, WINO_UNSUPPORTED, "create with points 0,3,-3");
    ob = o;
    ob.tile_m = 9; /* F(9, 3): alpha 11, valid but not a generated tile */
    expect_create(&d, dw, &ctx, &ob, WINO_UNSUPPORTED, "create with F(9x9,3x3)");
    ob.tile_m = 6;
    ob.variant = WINO_VARIANT_FUSED;
    expect_create(&d, dw, &ctx, &ob, WINO_UNSUPPORTED, "create fused F(6x6,3x3)");
    ob.variant = o.variant;
    ob.tile_m = 7; /* alpha 9 in FP16: rounding would swamp the result */
    bad = d;
    bad.dtype = WINO_DTYPE_F16;
    expect_create(&bad, dw, &ctx, &ob, WINO_UNSUPPORTED, "FP16 create with F(7x7,3x3)");
    bad = d;
    bad.dtype = WINO_DTYPE_BF16; /* BF16 is the backward-filter's only */
    expect_create(&bad, dw, &ctx, &o, WINO_UNSUPPORTED, "wino_conv2d_create with dtype BF16");
    wino_conv2d *bwd = NULL; /* backward-data runs on the forward engine: FP32 and FP16 too */
    expect(wino_conv2d_backward_data_create(&bad, dw, &ctx, &o, &bwd), WINO_UNSUPPORTED, &bwd,
           "wino_conv2d_backward_data_create with dtype BF16");
    wino_conv2d_destroy(bwd);
    bad = d;
    bad.dtype = WINO_DTYPE_S8;
    expect_create(&bad, dw, &ctx, &o, ANY_FAILURE, "wino_conv2d_create with dtype S8");
    bad.dtype = WINO_DTYPE_U8;
    bad.layout = WINO_LAYOUT_NHWC;
    expect_create(&bad, dw, &ctx, &oa, ANY_FAILURE, "wino_conv2d_create with dtype U8, NHWC");

    /* run() and workspace_size(). */
    void *hws = test_alloc64(bytes); /* aligned: only its being host memory is wrong */
    expect(wino_conv2d_run(op, hx, dy, ws, bytes), WINO_INVALID_ARGUMENT, NULL, "run with host x");
    expect(wino_conv2d_run(op, dx, hy, ws, bytes), WINO_INVALID_ARGUMENT, NULL, "run with host y");
    expect(wino_conv2d_run(op, NULL, dy, ws, bytes), WINO_INVALID_ARGUMENT, NULL,
           "run with NULL x");
    expect(wino_conv2d_run(op, dx, NULL, ws, bytes), WINO_INVALID_ARGUMENT, NULL,
           "run with NULL y");
    expect(wino_conv2d_run(NULL, dx, dy, ws, bytes), WINO_INVALID_ARGUMENT, NULL,
           "run with NULL op");
    if (bytes) {
        expect(wino_conv2d_run(op, dx, dy, hws, bytes), WINO_INVALID_ARGUMENT, NULL,
               "run with a host workspace");
        expect(wino_conv2d_run(op, dx, dy, NULL, bytes), WINO_INSUFFICIENT_WORKSPACE, NULL,
               "run with a NULL workspace");
        expect(wino_conv2d_run(op, dx, dy, ws, bytes - 1), WINO_INSUFFICIENT_WORKSPACE, NULL,
               "run with a workspace one byte too small");
        expect(wino_conv2d_run(op, dx, dy, ws, 0), WINO_INSUFFICIENT_WORKSPACE, NULL,
               "run with workspace_bytes 0");
        expect(wino_conv2d_run(op, dx, dy, (char *)ws + 32, bytes),
               WINO_INSUFFICIENT_WORKSPACE, NULL, "run with a workspace 32 bytes off alignment");
    } else {
        printf("skipped: workspace checks (the operator needs no workspace)\n");
    }
    size_t b2 = 0;
    expect(wino_conv2d_workspace_size(NULL, &b2), WINO_INVALID_ARGUMENT, NULL,
           "workspace_size of NULL op");
    expect(wino_conv2d_workspace_size(op, NULL), WINO_INVALID_ARGUMENT, NULL,
           "workspace_size into NULL");

    /* INT8 on the CUDA backend. */
    struct wino_conv2d_desc d8 = wino_conv2d_desc_make(1, 8, 8, 8, 4, 3, 3, 1, 1);
    d8.layout = WINO_LAYOUT_NHWC;
    d8.dtype = WINO_DTYPE_S8;
    const struct wino_int8_params q8 = {0.05f, 20.0f, 1.0f, NULL, 0.0f, 0.1f, WINO_DTYPE_S8, 0.0f};
    const size_t x8n = 8 * 8 * 8, y8n = 8 * 8 * 4, w8n = 4 * 9 * 8;
    int8_t *hx8 = (int8_t *)malloc(x8n), *hy8 = (int8_t *)malloc(y8n);
    float *hw8 = (float *)malloc(w8n * sizeof(float));
    for (size_t i = 0; i < x8n; i++)
        hx8[i] = (int8_t)((int)(test_rng_next(&rng) % 255) - 127);
    for (size_t i = 0; i < w8n; i++)
        hw8[i] = (float)(0.3 * test_rng_sym(&rng));
    void *dx8 = gpu_upload(hx8, x8n), *dy8 = gpu_alloc(y8n);
    void *dw8 = gpu_upload(hw8, w8n * sizeof(float));
    expect_create_int8(&d8, hw8, &q8, &ctx, NULL, WINO_INVALID_ARGUMENT,
                       "INT8 create with host weights");
    expect_create_int8(&d8, NULL, &q8, &ctx, NULL, WINO_INVALID_ARGUMENT,
                       "INT8 create with NULL weights");
    c2 = ctx;
    c2.device = 999;
    expect_create_int8(&d8, dw8, &q8, &c2, NULL, WINO_INVALID_ARGUMENT,
                       "INT8 create on device 999");
    struct wino_conv2d_options o8;
    memset(&o8, 0, sizeof o8);
    o8.tile_m = 6;
    o8.variant = WINO_VARIANT_FUSED;
    expect_create_int8(&d8, dw8, &q8, &ctx, &o8, WINO_UNSUPPORTED, "INT8 create fused F(6,3)");
    o8.tile_m = 4;
    o8.variant = (enum wino_variant)7;
    expect_create_int8(&d8, dw8, &q8, &ctx, &o8, WINO_INVALID_ARGUMENT, "INT8 create variant 7");
    o8.variant = WINO_VARIANT_ROWS; /* a variant INT8 lacks: unsupported, not invalid */
    expect_create_int8(&d8, dw8, &q8, &ctx, &o8, WINO_UNSUPPORTED, "INT8 create rows variant");
    o8.variant = WINO_VARIANT_NON_FUSED; /* with a workspace to refuse */
    wino_conv2d *op8 = NULL;
    size_t bytes8 = 0;
    st = wino_conv2d_create_int8(&d8, dw8, &q8, &ctx, &o8, &op8);
    if (st == WINO_SUCCESS)
        st = wino_conv2d_workspace_size(op8, &bytes8);
    gpu_checkf(&tc, st == WINO_SUCCESS, "good INT8 operator F(4,3) on n1 c8 8x8 k4: %s (%s)",
               gpu_status_name(st), wino_last_error());
    if (st == WINO_SUCCESS) {
        void *ws8 = gpu_alloc(bytes8), *hws8 = test_alloc64(bytes8);
        expect(wino_conv2d_run(op8, hx8, dy8, ws8, bytes8), WINO_INVALID_ARGUMENT, NULL,
               "INT8 run with host x");
        expect(wino_conv2d_run(op8, dx8, hy8, ws8, bytes8), WINO_INVALID_ARGUMENT, NULL,
               "INT8 run with host y");
        if (bytes8)
            expect(wino_conv2d_run(op8, dx8, dy8, hws8, bytes8), WINO_INVALID_ARGUMENT, NULL,
                   "INT8 run with a host workspace");
        CUDA_CHECK(cudaFree(ws8));
        free(hws8);
    }
    wino_conv2d_destroy(op8);

    /* Another device's stream, weights and input. */
    if (devices >= 2) {
        cudaStream_t s1;
        void *dw1 = NULL, *dx1 = NULL;
        CUDA_CHECK(cudaSetDevice(1));
        CUDA_CHECK(cudaStreamCreate(&s1));
        CUDA_CHECK(cudaMalloc(&dw1, wn * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(dw1, hw, wn * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMalloc(&dx1, xn * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(dx1, hx, xn * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaSetDevice(0));
        c2 = ctx;
        c2.stream = (void *)s1;
        expect_create(&d, dw, &c2, &o, WINO_INVALID_ARGUMENT,
                      "create on device 0 with a stream of device 1");
        c2 = ctx;
        c2.device = 1;
        expect_create(&d, dw1, &c2, &o, WINO_INVALID_ARGUMENT,
                      "create on device 1 with a stream of device 0");
        expect_create(&d, dw1, &ctx, &o, WINO_INVALID_ARGUMENT,
                      "create on device 0 with weights on device 1");
        expect(wino_conv2d_run(op, dx1, dy, ws, bytes), WINO_INVALID_ARGUMENT, NULL,
               "run on device 0 with x on device 1");
        CUDA_CHECK(cudaSetDevice(1));
        CUDA_CHECK(cudaStreamDestroy(s1));
        CUDA_CHECK(cudaFree(dw1));
        CUDA_CHECK(cudaFree(dx1));
        CUDA_CHECK(cudaSetDevice(0));
    } else {
        printf("skipped: one GPU (stream, weights and input of another device)\n");
    }

    /* Nothing was poisoned. */
    const cudaError_t pending = cudaGetLastError();
    gpu_checkf(&tc, pending == cudaSuccess, "CUDA error pending after the refused calls: %s",
               cudaGetErrorName(pending));
    check_no_leak(stream, &rng);
    err = run_against(op, &d, stream, dx, dy, ws, bytes, ref, hy);
    gpu_checkf(&tc, err <= bound, "the first operator after the refused calls: relative L1 %.3e, "
               "bound %.1e", err, bound);
    struct gpu_conv_result res;
    gpu_conv_check(&d, &o, &ctx, 1, test_rng_next(&rng), &res);
    gpu_checkf(&tc, res.status == WINO_SUCCESS && res.err <= bound,
               "a new operator after the refused calls: %s from %s (%s), relative L1 %.3e, "
               "bound %.1e", gpu_status_name(res.status), res.call, res.error, res.err, bound);

    wino_conv2d_destroy(op);
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dw));
    CUDA_CHECK(cudaFree(dy));
    CUDA_CHECK(cudaFree(dx8));
    CUDA_CHECK(cudaFree(dy8));
    CUDA_CHECK(cudaFree(dw8));
    CUDA_CHECK(cudaStreamDestroy(stream));
    free(hx), free(hw), free(hy), free(ref), free(hws), free(hx8), free(hy8), free(hw8);
    return gpu_report(&tc);
}
