/* INT8 Winograd F(m x m, 3 x 3), m in {2, 4, 6}, on the CUDA backend: the GPU operator's output
 * is byte for byte the CPU operator's, made by the same wino_conv2d_create_int8 call with a CPU
 * context on the same data (the CPU engine is tested against the integer specification in
 * tests/test_int8_winograd.c), and on some shapes also wino_ref_int8_winograd's directly:
 *  - random shapes: edge tiles (H, W not multiples of m), C in {1, 3, 5, 17, 67} and K in
 *    {1, 7, 33} with every tile, batch 1..2, padding 0..2, int8 and uint8 inputs, int8 and uint8
 *    outputs (uint8 with ReLU), bias, PACT clip, per-channel alpha_tw, int8 weights with w_scale,
 *    the default tile (0: 4); y poisoned with 0x7f bytes before each of two runs;
 *  - layers whose F(6, 3) could overflow int32: the GPU refuses exactly when the CPU does;
 *  - a calibrated (wino_int8_calibrate) layer N=1, C=K=256, 28x28, for F(4, 3) and F(6, 3).
 * Usage: test_gpu_int8 (WINO_TEST_SEED=N to replay). */
#include "gpu_test_util.h"

extern "C" {
#include "op/int8_layer.h"
#include "base/int8_tile.h"
#include "base/tile_matrices.h"
#include "int8_test_cases.h"
#include "ref/int8_winograd_ref.h"
}

static struct test_counts tc;
static uint64_t base_seed;

/* One INT8 layer and its host data. */
struct int8_case {
    struct wino_conv2d_desc d; /* NHWC 3x3, dtype S8 or U8 */
    int m;                     /* options.tile_m (0: the default, 4) */
    enum wino_variant variant; /* of the GPU operator (the CPU's is fixed) */
    struct wino_int8_params q;
    const void *w;     /* K x 3 x 3 x C, float (q.w_scale == 0) or int8 */
    const float *bias; /* K values or NULL */
    int relu;
    const uint8_t *x; /* N x H x W x C */
    int check_ref;    /* also compare with wino_ref_int8_winograd */
};

static size_t out_elems(const struct wino_conv2d_desc *d)
{
    int p = 0, q = 0;
    wino_conv2d_output_size(d, &p, &q);
    return (size_t)d->n * p * q * d->k;
}

/* Index of the first byte where a and b differ, or n; *count receives how many differ. */
static size_t first_difference(const uint8_t *a, const uint8_t *b, size_t n, size_t *count)
{
    size_t first = n;
    *count = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            if (first == n)
                first = i;
            (*count)++;
        }
    return first;
}

/* Fills why with "" when got == want, else where and how they differ. */
static void compare_outputs(const struct int8_case *cs, const uint8_t *got, const uint8_t *want,
                            const char *against, char *why, size_t cap)
{
    const size_t yn = out_elems(&cs->d);
    size_t count;
    const size_t i = first_difference(got, want, yn, &count);
    why[0] = 0;
    if (i == yn)
        return;
    int p, q;
    wino_conv2d_output_size(&cs->d, &p, &q);
    const int s = cs->q.y_dtype == WINO_DTYPE_S8;
    const size_t k = i % cs->d.k, pix = i / cs->d.k;
    snprintf(why, cap, "%zu of %zu bytes differ from %s, first at n %zu p %zu q %zu k %zu: got %d, "
             "want %d", count, yn, against, pix / ((size_t)p * q), pix / q % p, pix % q, k,
             s ? (int)(int8_t)got[i] : (int)got[i], s ? (int)(int8_t)want[i] : (int)want[i]);
}

/* Creates the layer on the CPU and on the GPU (stream; NULL: the default stream) and counts one
 * check: same status, and on success the GPU reports Winograd F(m, 3) and its output equals the
 * CPU's in two runs; with check_ref one more check against the reference. Returns the CPU's
 * status. */
static enum wino_status run_case(const struct int8_case *cs, const char *label, cudaStream_t stream)
{
    const struct wino_conv2d_desc *d = &cs->d;
    const int m = cs->m ? cs->m : 4; /* 0: the default tile */
    const size_t xn = (size_t)d->n * d->h * d->w * d->c, yn = out_elems(d);
    const size_t wn = (size_t)d->k * 9 * d->c * (cs->q.w_scale > 0.0f ? 1 : sizeof(float));
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    o.tile_m = cs->m;
    o.bias = cs->bias;
    o.relu = cs->relu;
    uint8_t *want = (uint8_t *)malloc(yn), *got = (uint8_t *)malloc(yn);

    /* The CPU operator. */
    struct wino_context cpu;
    memset(&cpu, 0, sizeof cpu);
    cpu.backend = WINO_BACKEND_CPU;
    wino_conv2d *cop = NULL;
    const enum wino_status st_cpu = wino_conv2d_create_int8(d, cs->w, &cs->q, &cpu, &o, &cop);
    char cpu_error[256];
    snprintf(cpu_error, sizeof cpu_error, "%s", wino_last_error());
    enum wino_status st_run = WINO_SUCCESS;
    if (st_cpu == WINO_SUCCESS) {
        size_t bytes = 0;
        wino_conv2d_workspace_size(cop, &bytes);
        void *ws = test_alloc64(bytes);
        memset(want, 0x5a, yn);
        st_run = wino_conv2d_run(cop, cs->x, want, ws, bytes);
        free(ws);
    }
    wino_conv2d_destroy(cop);

    /* The GPU operator. */
    const struct wino_context ctx = gpu_context(0, stream);
    o.variant = cs->variant;
    void *dw = gpu_upload(cs->w, wn), *dx = gpu_upload(cs->x, xn), *dy = gpu_alloc(yn);
    void *ws = NULL;
    wino_conv2d *gop = NULL;
    const enum wino_status st_gpu = wino_conv2d_create_int8(d, dw, &cs->q, &ctx, &o, &gop);
    char why[512] = "";
    if (st_cpu != st_gpu) {
        snprintf(why, sizeof why, "CPU %s (%s), GPU %s (%s)", gpu_status_name(st_cpu), cpu_error,
                 gpu_status_name(st_gpu), wino_last_error());
    } else if (st_run != WINO_SUCCESS) {
        snprintf(why, sizeof why, "CPU run: %s", gpu_status_name(st_run));
    } else if (st_gpu == WINO_SUCCESS) {
        CUDA_CHECK(cudaFree(dw)); /* create() copied the weights */
        dw = NULL;
        enum wino_algo algo = WINO_ALGO_AUTO;
        int tile_m = 0;
        enum wino_variant variant = WINO_VARIANT_AUTO;
        size_t bytes = 0;
        if (wino_conv2d_algo(gop, &algo, &tile_m) || algo != WINO_ALGO_WINOGRAD || tile_m != m)
            snprintf(why, sizeof why, "reported algo %d tile %d", (int)algo, tile_m);
        else if (wino_conv2d_variant(gop, &variant) || variant == WINO_VARIANT_AUTO ||
                 (cs->variant != WINO_VARIANT_AUTO && variant != cs->variant))
            snprintf(why, sizeof why, "reported variant %d", (int)variant);
        else if (wino_conv2d_workspace_size(gop, &bytes))
            snprintf(why, sizeof why, "workspace size: %s", wino_last_error());
        ws = gpu_alloc(bytes);
        for (int run = 0; run < 2 && !why[0]; run++) {
            CUDA_CHECK(cudaMemsetAsync(dy, 0x7f, yn, stream));
            const enum wino_status st = wino_conv2d_run(gop, dx, dy, ws, bytes);
            if (st) {
                snprintf(why, sizeof why, "GPU run %d: %s (%s)", run, gpu_status_name(st),
                         wino_last_error());
                break;
            }
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaStreamSynchronize(stream));
            CUDA_CHECK(cudaMemcpy(got, dy, yn, cudaMemcpyDeviceToHost));
            compare_outputs(cs, got, want, run ? "the CPU (second run)" : "the CPU", why,
                            sizeof why);
        }
    }
    char shape[160];
    gpu_desc_string(d, shape, sizeof shape);
    const char *y_type = cs->q.y_dtype == WINO_DTYPE_U8 ? "u8" : "s8";
    gpu_checkf(&tc, !why[0],
               "seed %llu %s: F(%d,3) %s %s -> %s, %s weights%s%s%s%s%s, %s stream: %s",
               (unsigned long long)base_seed, label, m, gpu_variant_name(cs->variant), shape,
               y_type,
               cs->q.w_scale > 0.0f ? "int8" : "float", cs->bias ? ", bias" : "",
               cs->relu ? ", relu" : "", cs->q.clip_c > 0.0f ? ", PACT" : "",
               cs->q.alpha_tw_k ? ", per-channel alpha_tw" : "",
               st_cpu ? ", refused" : "", stream ? "own" : "default", why);

    /* The integer specification itself. */
    if (cs->check_ref && st_cpu == WINO_SUCCESS && st_gpu == WINO_SUCCESS) {
        struct wino_int8_layer L;
        uint8_t *ref = (uint8_t *)malloc(yn);
        memset(ref, 0xa5, yn);
        const enum wino_status st =
            wino_int8_layer_prepare(d, m, cs->w, &cs->q, cs->bias, cs->relu, &L);
        if (st == WINO_SUCCESS) {
            wino_ref_int8_winograd(d, &L, cs->x, ref);
            wino_int8_layer_release(&L);
            compare_outputs(cs, got, ref, "wino_ref_int8_winograd", why, sizeof why);
        } else {
            snprintf(why, sizeof why, "wino_int8_layer_prepare: %s", wino_last_error());
        }
        gpu_checkf(&tc, !why[0], "seed %llu %s: F(%d,3) %s -> %s, GPU == reference: %s",
                   (unsigned long long)base_seed, label, m, shape, y_type, why);
        free(ref);
    }
    wino_conv2d_destroy(gop);
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(dw));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    free(want), free(got);
    return st_cpu;
}

/* Random layer parameters that clip some values and spread the outputs (as in
 * tests/test_int8_winograd.c): y_dtype U8 only with relu; tw_k holds K per-channel clips when
 * they are drawn. */


/* One random layer: tile m (0: default), variant, C and K given, the rest drawn. */
static void random_case(struct test_rng *rng, int id, int m, enum wino_variant variant, int C,
                        int K, int check_ref, cudaStream_t stream)
{
    const int x_signed = (int)(test_rng_next(rng) % 2), relu = (int)(test_rng_next(rng) % 2);
    const int N = 1 + (int)(test_rng_next(rng) % 2), pad = (int)(test_rng_next(rng) % 3);
    const int least = 3 - 2 * pad > 1 ? 3 - 2 * pad : 1;
    const int H = least + (int)(test_rng_next(rng) % 20), W = least + (int)(test_rng_next(rng) % 20);
    const int int8_weights = (int)(test_rng_next(rng) % 2), with_bias = (int)(test_rng_next(rng) % 2);
    struct int8_case cs;
    cs.d = int8_desc(N, C, H, W, K, pad, x_signed ? WINO_DTYPE_S8 : WINO_DTYPE_U8);
    cs.m = m;
    cs.variant = variant;
    float *tw_k = (float *)malloc(sizeof(float) * K), *bias = (float *)malloc(sizeof(float) * K);
    struct wino_int8_tile tile;
    wino_int8_tile_make(m ? m : 4, &tile);
    cs.q = random_params(rng, &tile, C, x_signed, relu, tw_k, K);
    const size_t xn = (size_t)N * H * W * C, wn = (size_t)K * 9 * C;
    uint8_t *x = (uint8_t *)malloc(xn);
    void *w = malloc(wn * sizeof(float));
    random_layer_data(rng, x, xn, w, wn, int8_weights, &cs.q, bias, K);
    cs.w = w;
    cs.bias = with_bias ? bias : NULL;
    cs.relu = relu;
    cs.x = x;
    cs.check_ref = check_ref;
    char label[32];
    snprintf(label, sizeof label, "case %d", id);
    run_case(&cs, label, stream);
    free(tw_k), free(bias), free(x), free(w);
}

/* Saturated weights with a tiny alpha_tw on C = 512: F(6, 3)'s int32 bound triggers on the CPU
 * (tests/test_int8_winograd.c); the GPU must answer the same for each tile. */
static void overflow_cases(struct test_rng *rng, cudaStream_t stream)
{
    const int C = 512, K = 2;
    struct int8_case cs;
    memset(&cs, 0, sizeof cs);
    cs.d = int8_desc(1, C, 8, 8, K, 1, WINO_DTYPE_S8);
    float *w = (float *)malloc(sizeof(float) * K * 9 * C);
    uint8_t *x = (uint8_t *)malloc((size_t)8 * 8 * C);
    for (int i = 0; i < K * 9 * C; i++)
        w[i] = (i % 2) ? 1.0f : -1.0f;
    for (int i = 0; i < 8 * 8 * C; i++)
        x[i] = (uint8_t)test_rng_next(rng);
    cs.q.x_scale = 0.05f;
    cs.q.alpha_ta = 20.0f;
    cs.q.alpha_tw = 1e-3f;
    cs.q.y_scale = 0.1f;
    cs.q.y_dtype = WINO_DTYPE_S8;
    cs.w = w;
    cs.x = x;
    printf("overflow bound, C = 512, saturated weights: CPU answers");
    for (int m = 2; m <= 6; m += 2) {
        cs.m = m;
        printf(" F(%d,3) %s", m, gpu_status_name(run_case(&cs, "overflow bound", stream)));
    }
    printf("\n");
    free(w), free(x);
}

/* N=1, C=K=256, 28x28, pad 1, post-ReLU inputs, calibrated at the 99.9th percentile with bias
 * and ReLU; uint8 input quantized with the calibrated x_scale. */
static void large_layer(struct test_rng *rng, int m, enum wino_variant variant, int check_ref,
                        cudaStream_t stream)
{
    const int C = 256, K = 256, H = 28, W = 28;
    struct wino_conv2d_desc df = int8_desc(1, C, H, W, K, 1, WINO_DTYPE_F32);
    const size_t xn = (size_t)H * W * C, wn = (size_t)K * 9 * C;
    float *xf = (float *)malloc(xn * sizeof(float)), *w = (float *)malloc(wn * sizeof(float));
    float *bias = (float *)malloc(K * sizeof(float));
    uint8_t *x = (uint8_t *)malloc(xn);
    for (size_t i = 0; i < xn; i++) {
        const double v = test_rng_sym(rng);
        xf[i] = (float)(v > 0.0 ? v * v : 0.0);
    }
    for (size_t i = 0; i < wn; i++)
        w[i] = (float)(0.05 * test_rng_sym(rng));
    for (int k = 0; k < K; k++)
        bias[k] = (float)(0.1 * test_rng_sym(rng));
    struct int8_case cs;
    memset(&cs, 0, sizeof cs);
    const enum wino_status st = wino_int8_calibrate(&df, m, xf, w, bias, 1, 0.0f,
                                                    WINO_CALIBRATE_PERCENTILE, 99.9, &cs.q);
    gpu_checkf(&tc, st == WINO_SUCCESS, "seed %llu: calibrating the 256-channel layer for "
               "F(%d,3): %s", (unsigned long long)base_seed, m, wino_last_error());
    if (st == WINO_SUCCESS) {
        for (size_t i = 0; i < xn; i++) {
            const float v = rintf(xf[i] / cs.q.x_scale);
            x[i] = (uint8_t)(v > 255.0f ? 255.0f : v);
        }
        cs.d = df;
        cs.d.dtype = WINO_DTYPE_U8;
        cs.m = m;
        cs.variant = variant;
        cs.w = w;
        cs.bias = bias;
        cs.relu = 1;
        cs.x = x;
        cs.check_ref = check_ref;
        printf("calibrated 256-channel layer, F(%d,3) %s: CPU answers %s\n", m,
               gpu_variant_name(variant),
               gpu_status_name(run_case(&cs, "calibrated 256-channel layer", stream)));
    }
    free(xf), free(w), free(bias), free(x);
}

int main(void)
{
    base_seed = test_seed();
    struct test_rng rng = {base_seed};
    cudaStream_t stream = gpu_open_device(0);
    static const int tiles[3] = {2, 4, 6}, cs[5] = {1, 3, 5, 17, 67}, ks[3] = {1, 7, 33};
    const enum wino_variant NF = WINO_VARIANT_NON_FUSED, F = WINO_VARIANT_FUSED,
                            FO = WINO_VARIANT_FUSED_OUTPUT;
    const enum wino_variant turns[3] = {NF, F, FO};
    /* Every (tile, C, K) combination, then 15 more, F(2,3) and F(4,3) non-fused, fused and
     * fused-output in turn; one case in 7 on the default stream, one in 8 also against the
     * reference. Then the fused kernels on wider layers: several channel chunks and output
     * blocks. */
    for (int i = 0; i < 60; i++) {
        const int m = tiles[(i / 15) % 3];
        random_case(&rng, i, m, m < 6 ? turns[i % 3] : NF, cs[i % 5], ks[(i / 5) % 3],
                    i % 8 == 3, i % 7 == 6 ? NULL : stream);
    }
    for (int i = 0; i < 16; i++)
        random_case(&rng, 60 + i, i % 2 ? 4 : 2, i % 4 < 2 ? F : FO, 33 + 29 * (i % 4),
                    17 + 23 * (i % 3), i % 4 == 1, i % 5 == 4 ? NULL : stream);
    random_case(&rng, 76, 0, WINO_VARIANT_AUTO, 17, 7, 1, stream); /* default tile, variant */
    overflow_cases(&rng, stream);
    large_layer(&rng, 4, NF, 1, stream);
    large_layer(&rng, 4, F, 1, stream);
    large_layer(&rng, 4, FO, 0, stream);
    large_layer(&rng, 2, F, 0, stream);
    large_layer(&rng, 6, NF, 0, stream);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return gpu_report(&tc);
}
