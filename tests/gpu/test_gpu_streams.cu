/* Per-run streams and reshape on the CUDA backend:
 *  - one FP32 operator (non-fused F(4x4,3x3): its GEMMs share the device's cuBLAS handle) and
 *    one FP16 operator (F(2x2,3x3), the fastest variant) each run by two host threads at once,
 *    each thread on a stream of its own (wino_conv2d_run_stream) with its own input, workspace
 *    and output, ROUNDS times; every output, poisoned before its run, is checked against the
 *    FP64 reference of that thread's input (an output computed from the other thread's input or
 *    workspace fails by far);
 *  - one FP32 operator reshaped across three input sizes (and back), run on the default stream
 *    (NULL) after each: the workspace size that reshape returns is wino_conv2d_workspace_size's,
 *    and each output matches the reference of its size;
 *  - with 2 or more GPUs, a stream of device 1 given to an operator of device 0 is refused with
 *    WINO_INVALID_ARGUMENT and nothing is written; with one GPU this part is skipped (printed,
 *    not counted).
 * Usage: test_gpu_streams (WINO_TEST_SEED=N to replay). */
#include <pthread.h>

#include "gpu_test_util.h"

static struct test_counts tc;

enum { ROUNDS = 8 };

/* A layer's random x and w (uniform in (-1, 1), rounded to half for FP16 so that the reference
 * sees the GPU's values), their device copies and the FP64 reference output. */
struct layer {
    struct wino_conv2d_desc d;
    int half;
    size_t xn, wn, yn, es;
    float *x, *w;
    double *ref;
    void *dx, *dw;
};

static void layer_make(struct layer *L, const struct wino_conv2d_desc *d, const float *w,
                       struct test_rng *rng)
{
    int p = 0, q = 0;
    wino_conv2d_output_size(d, &p, &q);
    L->d = *d;
    L->half = d->dtype == WINO_DTYPE_F16;
    L->es = L->half ? sizeof(__half) : sizeof(float);
    L->xn = (size_t)d->n * d->c * d->h * d->w;
    L->wn = (size_t)d->k * d->c * d->r * d->s;
    L->yn = (size_t)d->n * d->k * p * q;
    L->x = (float *)malloc(L->xn * sizeof(float));
    L->w = (float *)malloc(L->wn * sizeof(float));
    L->ref = (double *)malloc(L->yn * sizeof(double));
    for (size_t i = 0; i < L->xn; i++)
        L->x[i] = (float)test_rng_sym(rng);
    for (size_t i = 0; i < L->wn; i++)
        L->w[i] = w ? w[i] : (float)test_rng_sym(rng);
    void *hx = malloc(L->xn * L->es), *hw = malloc(L->wn * L->es);
    if (L->half) {
        for (size_t i = 0; i < L->xn; i++) {
            ((__half *)hx)[i] = __float2half_rn(L->x[i]);
            L->x[i] = __half2float(((__half *)hx)[i]);
        }
        for (size_t i = 0; i < L->wn; i++) {
            ((__half *)hw)[i] = __float2half_rn(L->w[i]);
            L->w[i] = __half2float(((__half *)hw)[i]);
        }
    } else {
        memcpy(hx, L->x, L->xn * L->es);
        memcpy(hw, L->w, L->wn * L->es);
    }
    wino_ref_conv2d_fwd(d, L->x, L->w, L->ref);
    L->dx = gpu_upload(hx, L->xn * L->es);
    L->dw = gpu_upload(hw, L->wn * L->es);
    free(hx), free(hw);
}

static void layer_free(struct layer *L)
{
    free(L->x), free(L->w), free(L->ref);
    CUDA_CHECK(cudaFree(L->dx));
    CUDA_CHECK(cudaFree(L->dw));
}

/* The relative L1 error of the device output dy against L's reference (NaN when an output is
 * NaN: a poisoned element left unwritten). */
static double output_error(const struct layer *L, const void *dy)
{
    void *hy = malloc(L->yn * L->es);
    float *y = (float *)malloc(L->yn * sizeof(float));
    CUDA_CHECK(cudaMemcpy(hy, dy, L->yn * L->es, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < L->yn; i++)
        y[i] = L->half ? __half2float(((__half *)hy)[i]) : ((float *)hy)[i];
    const double err = wino_rel_l1_f32(y, L->ref, L->yn);
    free(hy), free(y);
    return err;
}

/* One host thread's share: ROUNDS runs of op on its stream, each output checked. */
struct runner {
    const wino_conv2d *op;
    const struct layer *L;
    cudaStream_t stream;
    size_t ws_bytes;
    enum wino_status status; /* the first failing run's */
    char why[256];
    double worst; /* largest error over the rounds (NaN sticks) */
};

static void *run_rounds(void *arg)
{
    struct runner *r = (struct runner *)arg;
    const struct layer *L = r->L;
    CUDA_CHECK(cudaSetDevice(0)); /* a new host thread's current device is 0 anyway: say so */
    void *dy = gpu_alloc(L->yn * L->es), *ws = gpu_alloc(r->ws_bytes);
    r->worst = 0.0;
    for (int round = 0; round < ROUNDS && r->status == WINO_SUCCESS; round++) {
        CUDA_CHECK(cudaMemsetAsync(dy, 0xff, L->yn * L->es, r->stream));
        r->status = wino_conv2d_run_stream(r->op, L->dx, dy, ws, r->ws_bytes, r->stream);
        if (r->status) {
            snprintf(r->why, sizeof r->why, "%s", wino_last_error());
            break;
        }
        CUDA_CHECK(cudaStreamSynchronize(r->stream));
        const double err = output_error(L, dy);
        if (!(err <= r->worst))
            r->worst = err;
    }
    CUDA_CHECK(cudaFree(dy));
    CUDA_CHECK(cudaFree(ws));
    return NULL;
}

/* Two threads, two streams, one operator of layer a's weights; thread i convolves layers[i]. */
static void concurrent_runs(const char *label, const struct layer layers[2],
                            const struct wino_conv2d_options *o, double bound)
{
    const struct wino_context ctx = gpu_context(0, NULL);
    wino_conv2d *op = NULL;
    size_t ws_bytes = 0;
    enum wino_status st = wino_conv2d_create(&layers[0].d, layers[0].dw, &ctx, o, &op);
    if (!st)
        st = wino_conv2d_workspace_size(op, &ws_bytes);
    gpu_checkf(&tc, st == WINO_SUCCESS, "%s: create: %s", label, wino_last_error());
    if (st)
        return;
    enum wino_variant v = WINO_VARIANT_AUTO;
    wino_conv2d_variant(op, &v);
    struct runner r[2];
    pthread_t t[2];
    memset(r, 0, sizeof r);
    for (int i = 0; i < 2; i++) {
        r[i].op = op, r[i].L = &layers[i], r[i].ws_bytes = ws_bytes;
        CUDA_CHECK(cudaStreamCreateWithFlags(&r[i].stream, cudaStreamNonBlocking));
    }
    int started = 0;
    for (int i = 0; i < 2; i++)
        started += pthread_create(&t[i], NULL, run_rounds, &r[i]) == 0;
    gpu_checkf(&tc, started == 2, "%s: pthread_create", label);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < started; i++) {
        gpu_checkf(&tc, r[i].status == WINO_SUCCESS && r[i].worst <= bound,
                   "%s (%s): thread %d on its stream: %s %s; relative L1 %.3e, bound %.1e",
                   label, gpu_variant_name(v), i, gpu_status_name(r[i].status), r[i].why,
                   r[i].worst, bound);
        printf("%s (%s), thread %d: %d runs, worst relative L1 %.3e\n", label,
               gpu_variant_name(v), i, ROUNDS, r[i].worst);
    }
    for (int i = 0; i < 2; i++)
        CUDA_CHECK(cudaStreamDestroy(r[i].stream));
    wino_conv2d_destroy(op);
}

static void streams_case(int half, struct test_rng *rng)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(3, 45, 30, 27, 38, 3, 3, 1, 1);
    if (half) {
        d.dtype = WINO_DTYPE_F16;
        d.layout = WINO_LAYOUT_NHWC;
    }
    struct layer layers[2];
    layer_make(&layers[0], &d, NULL, rng);
    layer_make(&layers[1], &d, layers[0].w, rng); /* the same weights, another input */
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    o.algo = WINO_ALGO_WINOGRAD;
    o.tile_m = half ? 2 : 4;
    o.variant = half ? WINO_VARIANT_AUTO : WINO_VARIANT_NON_FUSED;
    concurrent_runs(half ? "FP16 F(2x2,3x3), two streams" : "FP32 F(4x4,3x3), two streams",
                    layers, &o, half ? gpu_f16_bound(4) : gpu_f32_bound(6));
    layer_free(&layers[0]);
    layer_free(&layers[1]);
}

/* Creates at one size, reshapes to others (and back), runs on the default stream after each. */
static void reshape_case(struct test_rng *rng)
{
    static const int sizes[4][3] = {{2, 24, 24}, {1, 9, 13}, {4, 41, 35}, {2, 24, 24}};
    struct wino_conv2d_desc d = wino_conv2d_desc_make(2, 19, 24, 24, 23, 3, 3, 1, 1);
    struct layer first;
    layer_make(&first, &d, NULL, rng);
    const struct wino_context ctx = gpu_context(0, NULL);
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    o.algo = WINO_ALGO_WINOGRAD;
    o.tile_m = 4;
    o.variant = WINO_VARIANT_NON_FUSED;
    wino_conv2d *op = NULL;
    enum wino_status st = wino_conv2d_create(&d, first.dw, &ctx, &o, &op);
    gpu_checkf(&tc, st == WINO_SUCCESS, "reshape: create: %s", wino_last_error());
    for (int i = 1; i < 4 && st == WINO_SUCCESS; i++) {
        struct wino_conv2d_desc di = d;
        di.n = sizes[i][0], di.h = sizes[i][1], di.w = sizes[i][2];
        struct layer L;
        layer_make(&L, &di, first.w, rng);
        size_t bytes = 0, queried = 0;
        st = wino_conv2d_reshape(op, di.n, di.h, di.w, &bytes);
        if (!st)
            st = wino_conv2d_workspace_size(op, &queried);
        char why[256];
        snprintf(why, sizeof why, "%s", st ? wino_last_error() : "");
        void *ws = gpu_alloc(bytes), *dy = gpu_alloc(L.yn * L.es);
        double err = NAN;
        if (!st) {
            CUDA_CHECK(cudaMemset(dy, 0xff, L.yn * L.es));
            st = wino_conv2d_run_stream(op, L.dx, dy, ws, bytes, NULL);
            snprintf(why, sizeof why, "%s", st ? wino_last_error() : "");
            CUDA_CHECK(cudaDeviceSynchronize());
            if (!st)
                err = output_error(&L, dy);
        }
        gpu_checkf(&tc, st == WINO_SUCCESS && bytes == queried && err <= gpu_f32_bound(6),
                   "reshape %d: to n %d, %d x %d: %s %s; workspace %zu (query: %zu); relative "
                   "L1 %.3e, bound %.1e", i, di.n, di.h, di.w, gpu_status_name(st), why, bytes,
                   queried, err, gpu_f32_bound(6));
        printf("reshape to n %d, %d x %d: workspace %zu bytes, relative L1 %.3e\n", di.n, di.h,
               di.w, bytes, err);
        CUDA_CHECK(cudaFree(ws));
        CUDA_CHECK(cudaFree(dy));
        layer_free(&L);
    }
    wino_conv2d_destroy(op);
    layer_free(&first);
}

/* A stream of device 1 given to an operator of device 0. */
static void foreign_stream_case(struct test_rng *rng)
{
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        printf("skipped (not counted): a stream of another device needs 2 GPUs, this machine "
               "has %d\n", count);
        return;
    }
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 8, 12, 12, 8, 3, 3, 1, 1);
    struct layer L;
    layer_make(&L, &d, NULL, rng);
    const struct wino_context ctx = gpu_context(0, NULL);
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    enum wino_status st = wino_conv2d_create(&d, L.dw, &ctx, NULL, &op);
    if (!st)
        st = wino_conv2d_workspace_size(op, &bytes);
    gpu_checkf(&tc, st == WINO_SUCCESS, "foreign stream: create: %s", wino_last_error());
    if (st) {
        layer_free(&L);
        return;
    }
    cudaStream_t other;
    CUDA_CHECK(cudaSetDevice(1));
    CUDA_CHECK(cudaStreamCreate(&other));
    CUDA_CHECK(cudaSetDevice(0));
    void *ws = gpu_alloc(bytes), *dy = gpu_alloc(L.yn * L.es);
    CUDA_CHECK(cudaMemset(dy, 0x7f, L.yn * L.es));
    st = wino_conv2d_run_stream(op, L.dx, dy, ws, bytes, other);
    char why[256];
    snprintf(why, sizeof why, "%s", wino_last_error());
    CUDA_CHECK(cudaDeviceSynchronize());
    unsigned char *h = (unsigned char *)malloc(L.yn * L.es);
    CUDA_CHECK(cudaMemcpy(h, dy, L.yn * L.es, cudaMemcpyDeviceToHost));
    size_t written = 0;
    for (size_t i = 0; i < L.yn * L.es; i++)
        written += h[i] != 0x7f;
    gpu_checkf(&tc, st == WINO_INVALID_ARGUMENT && strstr(why, "device 1") && written == 0,
               "a stream of device 1 for an operator of device 0: %s \"%s\", %zu output bytes "
               "written", gpu_status_name(st), why, written);
    /* the refusal leaves the operator usable on its own device */
    st = wino_conv2d_run_stream(op, L.dx, dy, ws, bytes, NULL);
    CUDA_CHECK(cudaDeviceSynchronize());
    const double err = st ? NAN : output_error(&L, dy);
    gpu_checkf(&tc, st == WINO_SUCCESS && err <= gpu_f32_bound(9), /* AUTO: up to F(7x7, 3x3) */
               "after the refusal, a run on device 0: %s; relative L1 %.3e",
               gpu_status_name(st), err);
    free(h);
    CUDA_CHECK(cudaSetDevice(1));
    CUDA_CHECK(cudaStreamDestroy(other));
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(dy));
    wino_conv2d_destroy(op);
    layer_free(&L);
}

int main(void)
{
    struct test_rng rng = {test_seed()};
    cudaStream_t stream = gpu_open_device(0);
    streams_case(0, &rng);
    streams_case(1, &rng);
    reshape_case(&rng);
    foreign_stream_case(&rng);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return gpu_report(&tc);
}
