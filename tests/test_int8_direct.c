/* INT8 direct convolution (docs/int8-winograd.md, "Direct"):
 *  (a) the engine equals the integer reference byte for byte on random layers: any filter
 *      (1 x 1 to 7 x 5), stride 1-3, dilation 1-2, padding 0-3, odd C and K, 1 x 1 images,
 *      batch 1-3, int8/uint8 in and out, bias, ReLU, PACT clip, per-channel clips, int8 weights,
 *      through the public API (AUTO on layers Winograd does not take, and DIRECT on 3 x 3 ones)
 *      with 1 and 2 threads, and through the engine with every int8 GEMM this machine runs;
 *      outputs poisoned first;
 *  (b) the reference is the convolution when nothing rounds: x in {-1, 0, 1}, weights on the
 *      int8 grid and a unit requantization give the exact integer sums;
 *  (c) bad requests are refused with the documented status;
 *  (d) the requantization of rows of sums alone equals the scalar one with every vector ISA.
 * Usage: test_int8_direct (WINO_TEST_SEED=N to replay). */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <string.h>

#include "base/tile_matrices.h"
#include "cpu/direct_s8.h"
#include "cpu/requantize_s8.h"
#include "op/int8_layer.h"
#include "ref/int8_direct_ref.h"
#include "int8_test_cases.h"
#include "test_util.h"

/* A random layer: its descriptor, parameters and data. */
struct layer {
    struct wino_conv2d_desc d;
    struct wino_int8_params q;
    struct wino_conv2d_options o;
    float tw_k[64], bias[64];
    uint8_t *x;
    void *w;
    size_t xn, yn;
};

/* Kinds of random layers: any, 3 x 3 of stride 1, stride 1 with 64 or 128 channels (what
 * the direct engine's implicit path takes), any of stride 1 on 24 x 24 to 40 x 40 images
 * (blocks enough for the engine's output channels in one group), and 3 x 3 (dilation 1 or 2)
 * of the implicit path on such images (several windows an image). */
enum layer_kind { ANY_LAYER, THREE_BY_THREE, IMPLICIT, LARGE, LARGE_IMPLICIT };

static void random_layer(struct test_rng *rng, struct layer *L, enum layer_kind kind)
{
    memset(L, 0, sizeof *L);
    const int three_by_three = kind == THREE_BY_THREE || kind == LARGE_IMPLICIT;
    const int implicit = kind == IMPLICIT || kind == LARGE_IMPLICIT;
    const int large = kind == LARGE || kind == LARGE_IMPLICIT;
    const int r = three_by_three ? 3 : 1 + (int)(test_rng_next(rng) % 7);
    const int s = three_by_three ? 3 : 1 + (int)(test_rng_next(rng) % 5);
    const int stride = kind != ANY_LAYER ? 1 : 1 + (int)(test_rng_next(rng) % 3);
    const int dil = kind == THREE_BY_THREE ? 1 : 1 + (int)(test_rng_next(rng) % 2);
    const int pad = (int)(test_rng_next(rng) % 4);
    const int c = implicit ? 64 << (test_rng_next(rng) % 2) : 1 + (int)(test_rng_next(rng) % 37);
    const int k = 1 + (int)(test_rng_next(rng) % 40);
    const int side = large ? 24 : 1, sides = large ? 17 : 13;
    int h = side + (int)(test_rng_next(rng) % sides), w = side + (int)(test_rng_next(rng) % sides);
    if (h + 2 * pad < dil * (r - 1) + 1) /* the dilated filter fits the padded image */
        h = dil * (r - 1) + 1;
    if (w + 2 * pad < dil * (s - 1) + 1)
        w = dil * (s - 1) + 1;
    const int relu = (int)(test_rng_next(rng) % 2);
    const int x_signed = (int)(test_rng_next(rng) % 2);
    L->d = wino_conv2d_desc_make(1 + (int)(test_rng_next(rng) % 3), c, h, w, k, r, s, pad, pad);
    L->d.stride_h = L->d.stride_w = stride;
    L->d.dilation_h = L->d.dilation_w = dil;
    L->d.layout = WINO_LAYOUT_NHWC;
    L->d.dtype = x_signed ? WINO_DTYPE_S8 : WINO_DTYPE_U8;
    struct wino_int8_tile t;
    wino_int8_tile_make(2, &t); /* random_params sizes alpha_ta from a tile: unused here */
    L->q = random_params(rng, &t, c * r * s / 9 + 1, x_signed, relu, L->tw_k, k);
    int p, q;
    wino_conv2d_output_size(&L->d, &p, &q);
    L->xn = (size_t)L->d.n * h * w * c;
    L->yn = (size_t)L->d.n * p * q * k;
    L->x = test_alloc64(L->xn);
    L->w = test_alloc64((size_t)k * r * s * c * sizeof(float));
    random_layer_data(rng, L->x, L->xn, L->w, (size_t)k * r * s * c,
                      (int)(test_rng_next(rng) % 4 == 0), &L->q, L->bias, k);
    L->o.bias = test_rng_next(rng) % 2 ? L->bias : NULL;
    L->o.relu = relu;
    /* DIRECT where Winograd would take the layer, AUTO (which falls back to direct) elsewhere */
    const int winograd = r == 3 && s == 3 && stride == 1 && dil == 1;
    L->o.algo = winograd ? WINO_ALGO_DIRECT : WINO_ALGO_AUTO;
}

static void free_layer(struct layer *L)
{
    free(L->x);
    free(L->w);
}

static void describe(char *out, size_t n, const struct layer *L, const char *how)
{
    const struct wino_conv2d_desc *d = &L->d;
    snprintf(out, n,
             "%s: %dx%dx%dx%d%s -> %d, %dx%d filter, stride %d, dilation %d, pad %d, %s out%s%s",
             how, d->n, d->h, d->w, d->c, d->dtype == WINO_DTYPE_S8 ? " s8" : " u8", d->k, d->r,
             d->s, d->stride_h, d->dilation_h, d->pad_h,
             L->q.y_dtype == WINO_DTYPE_S8 ? "s8" : "u8", L->o.relu ? ", relu" : "",
             L->q.w_scale > 0 ? ", int8 weights" : "");
}

/* (a) through the API and through the engine with each GEMM, against the reference. */
static void random_layers(struct test_counts *tc, struct test_rng *rng)
{
    for (int i = 0; i < 92; i++) {
        struct layer L;
        random_layer(rng, &L, i >= 88   ? LARGE_IMPLICIT
                              : i >= 80 ? LARGE
                              : i >= 60 ? IMPLICIT
                              : i % 6 == 0 ? THREE_BY_THREE
                                           : ANY_LAYER);
        struct wino_int8_layer ref_layer;
        enum wino_status st = wino_int8_direct_prepare(&L.d, L.w, &L.q, L.o.bias, L.o.relu,
                                                       &ref_layer);
        char what[256];
        describe(what, sizeof what, &L, "prepare");
        test_check(tc, st == WINO_SUCCESS, what);
        if (st) {
            printf("  %s\n", wino_last_error());
            free_layer(&L);
            continue;
        }
        uint8_t *want = test_alloc64(L.yn), *got = test_alloc64(L.yn);
        wino_ref_int8_direct(&L.d, &ref_layer, L.x, want);
        for (int threads = 1; threads <= 2; threads++) {
            struct wino_context ctx = {0};
            ctx.threads = threads;
            wino_conv2d *op = NULL;
            st = wino_conv2d_create_int8(&L.d, L.w, &L.q, &ctx, &L.o, &op);
            enum wino_algo algo = WINO_ALGO_AUTO;
            int tile_m = -1;
            if (!st)
                wino_conv2d_algo(op, &algo, &tile_m);
            size_t bytes = 0;
            if (!st)
                st = wino_conv2d_workspace_size(op, &bytes);
            void *ws = bytes ? test_alloc64(bytes) : NULL;
            memset(got, 0x7f, L.yn);
            if (!st)
                st = wino_conv2d_run(op, L.x, got, ws, bytes);
            describe(what, sizeof what, &L, threads == 1 ? "API, 1 thread" : "API, 2 threads");
            const int same = !st && !memcmp(got, want, L.yn);
            test_check(tc, same && algo == WINO_ALGO_DIRECT && tile_m == 0, what);
            if (st)
                printf("  %s\n", wino_last_error());
            free(ws);
            wino_conv2d_destroy(op);
        }
        /* each GEMM and requantization; the GEMMs that can run the implicit path, both ways */
        const int implicit_too = wino_s8_direct_implicit_takes(&L.d);
        for (int isa = WINO_S8_SCALAR; isa <= (int)wino_s8_isa(); isa++)
            for (int v = WINO_ISA_SCALAR; v <= (int)wino_cpu_isa(); v++)
                for (int implicit = 0; implicit <= (isa >= WINO_S8_VNNI && implicit_too);
                     implicit++) {
                    struct wino_int8_layer layer;
                    struct wino_s8_direct e;
                    int overflow = 0;
                    wino_int8_direct_prepare(&L.d, L.w, &L.q, L.o.bias, L.o.relu, &layer);
                    st = wino_s8_direct_prepare(&e, &L.d, &layer, 2, (enum wino_s8_isa)isa,
                                                (enum wino_isa)v);
                    e.implicit = implicit;
                    const size_t bytes =
                        st ? 0 : wino_s8_direct_workspace_bytes(&e, &L.d, &overflow);
                    void *ws = test_alloc64(bytes ? bytes : 64);
                    int p, q;
                    wino_conv2d_output_size(&L.d, &p, &q);
                    memset(got, 0x7f, L.yn);
                    if (!st)
                        wino_s8_direct_run(&e, &L.d, p, q, L.x, got, ws);
                    char how[64];
                    snprintf(how, sizeof how, "engine, %s GEMM%s, %s requantization",
                             wino_s8_isa_name((enum wino_s8_isa)isa),
                             implicit ? " (implicit)" : "", wino_isa_name((enum wino_isa)v));
                    describe(what, sizeof what, &L, how);
                    test_check(tc, !st && !overflow && !memcmp(got, want, L.yn), what);
                    free(ws);
                    wino_s8_direct_release(&e);
                }
        wino_int8_layer_release(&ref_layer);
        free(want);
        free(got);
        free_layer(&L);
    }
}

/* (b) exact integer sums: x in {-1, 0, 1}, weights k / 127 (alpha_tw 1: Wq = k), y_scale =
 * x_scale / 127 (scale 1), no bias: y = clamp(sum x Wq) exactly. */
static void exact_sums(struct test_counts *tc, struct test_rng *rng)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(2, 5, 7, 6, 3, 3, 2, 1, 0);
    d.stride_h = 2;
    d.dilation_w = 2;
    d.layout = WINO_LAYOUT_NHWC;
    d.dtype = WINO_DTYPE_S8;
    int p, q;
    wino_conv2d_output_size(&d, &p, &q);
    const size_t xn = (size_t)d.n * d.h * d.w * d.c, wn = (size_t)d.k * d.r * d.s * d.c;
    int8_t x[2 * 7 * 6 * 5];
    float w[3 * 3 * 2 * 5];
    int8_t y[2 * 4 * 4 * 3];
    for (size_t i = 0; i < xn; i++)
        x[i] = (int8_t)((int)(test_rng_next(rng) % 3) - 1);
    for (size_t i = 0; i < wn; i++)
        w[i] = (float)((int)(test_rng_next(rng) % 7) - 3) / 127.0f;
    struct wino_int8_params prm = {0};
    prm.x_scale = 1.0f;
    prm.alpha_tw = 1.0f;
    prm.y_scale = 1.0f / 127.0f;
    prm.y_dtype = WINO_DTYPE_S8;
    struct wino_int8_layer L;
    int ok = wino_int8_direct_prepare(&d, w, &prm, NULL, 0, &L) == WINO_SUCCESS &&
             (size_t)d.n * p * q * d.k <= sizeof y;
    if (ok) {
        wino_ref_int8_direct(&d, &L, x, y);
        for (int n = 0; n < d.n; n++)
            for (int i = 0; i < p; i++)
                for (int j = 0; j < q; j++)
                    for (int k = 0; k < d.k; k++) {
                        long sum = 0;
                        for (int a = 0; a < d.r; a++)
                            for (int b = 0; b < d.s; b++) {
                                const int h = i * d.stride_h - d.pad_h + a * d.dilation_h;
                                const int v = j * d.stride_w - d.pad_w + b * d.dilation_w;
                                if (h < 0 || h >= d.h || v < 0 || v >= d.w)
                                    continue;
                                for (int c = 0; c < d.c; c++) {
                                    const float wt = w[((k * d.r + a) * d.s + b) * d.c + c];
                                    sum += x[((n * d.h + h) * d.w + v) * d.c + c] *
                                           (long)rint(127.0 * wt);
                                }
                            }
                        sum = sum > 127 ? 127 : sum < -127 ? -127 : sum;
                        ok &= y[((n * p + i) * q + j) * d.k + k] == sum;
                    }
        wino_int8_layer_release(&L);
    }
    test_check(tc, ok, "reference: exact integer sums with unit scales (stride 2, dilation 2)");
}

/* (c) refusals. */
static void bad_requests(struct test_counts *tc)
{
    struct wino_conv2d_desc d = int8_desc(1, 4, 8, 8, 4, 1, WINO_DTYPE_S8);
    d.stride_h = d.stride_w = 2;
    float w[4 * 3 * 3 * 4] = {0};
    struct wino_int8_params q = {0};
    q.x_scale = 0.1f, q.alpha_tw = 1.0f, q.y_scale = 0.1f, q.y_dtype = WINO_DTYPE_S8;
    struct wino_conv2d_options o = {0};
    wino_conv2d *op = NULL;
    o.tile_m = 4;
    enum wino_algo algo = WINO_ALGO_AUTO;
    int tile_m = -1;
    test_check(tc, wino_conv2d_create_int8(&d, w, &q, NULL, &o, &op) == WINO_SUCCESS &&
                       wino_conv2d_algo(op, &algo, &tile_m) == WINO_SUCCESS &&
                       algo == WINO_ALGO_DIRECT && tile_m == 0,
               "AUTO with tile_m 4 on a strided layer: direct (tile_m is Winograd's)");
    wino_conv2d_destroy(op);
    op = NULL;
    o.tile_m = 0;
    o.algo = WINO_ALGO_WINOGRAD;
    test_check(tc, wino_conv2d_create_int8(&d, w, &q, NULL, &o, &op) == WINO_UNSUPPORTED && !op,
               "WINOGRAD on a strided layer: WINO_UNSUPPORTED");
    o.algo = WINO_ALGO_DIRECT;
    o.tile_m = 2;
    test_check(tc, wino_conv2d_create_int8(&d, w, &q, NULL, &o, &op) == WINO_INVALID_ARGUMENT,
               "DIRECT with a tile: WINO_INVALID_ARGUMENT");
    o.tile_m = 0;
    q.alpha_tw = 0.0f;
    test_check(tc, wino_conv2d_create_int8(&d, w, &q, NULL, &o, &op) == WINO_INVALID_ARGUMENT,
               "DIRECT with alpha_tw 0: WINO_INVALID_ARGUMENT");
    q.alpha_tw = 1.0f;
    w[5] = NAN;
    test_check(tc, wino_conv2d_create_int8(&d, w, &q, NULL, &o, &op) == WINO_INVALID_ARGUMENT,
               "DIRECT with a NaN weight: WINO_INVALID_ARGUMENT");
    w[5] = 0.0f;
    d.layout = WINO_LAYOUT_NCHW;
    test_check(tc, wino_conv2d_create_int8(&d, w, &q, NULL, &o, &op) == WINO_UNSUPPORTED,
               "DIRECT on NCHW: WINO_UNSUPPORTED");
    d.layout = WINO_LAYOUT_NHWC;
    struct wino_conv2d_desc deep = wino_conv2d_desc_make(1, 8192, 3, 3, 1, 3, 3, 0, 0);
    deep.layout = WINO_LAYOUT_NHWC;
    deep.dtype = WINO_DTYPE_U8;
    float *dw = calloc((size_t)8192 * 9, sizeof *dw);
    test_check(tc, dw && wino_conv2d_create_int8(&deep, dw, &q, NULL, &o, &op) == WINO_UNSUPPORTED,
               "DIRECT with R S C = 73728 (int32 could overflow): WINO_UNSUPPORTED");
    free(dw);
    o.algo = WINO_ALGO_DIRECT;
    d.stride_h = d.stride_w = 1;
    struct wino_context cuda = {0};
    cuda.backend = WINO_BACKEND_CUDA;
    test_check(tc, wino_conv2d_create_int8(&d, w, &q, &cuda, &o, &op) != WINO_SUCCESS && !op,
               "DIRECT on the CUDA backend: refused");
}

/* (d) the requantization of rows of sums alone, with every vector ISA: random rows, channel
 * ranges of 1 to 200 (64-channel blocks and the 16- and 1-channel tails in one call), strides
 * past the row, signed and ReLU outputs, byte for byte against wino_int8_requantize, the
 * bytes around each row's range untouched. */
static void requantize_rows(struct test_counts *tc, struct test_rng *rng)
{
    enum { MOST_K = 200, MOST_ROWS = 9, PAD = 7, AREA = MOST_ROWS * (MOST_K + PAD) };
    float scale[MOST_K], bias[MOST_K];
    int32_t y[AREA];
    uint8_t got[AREA], want[AREA];
    for (int t = 0; t < 24; t++) {
        const int k = 1 + (int)(test_rng_next(rng) % MOST_K);
        const int rows = 1 + (int)(test_rng_next(rng) % MOST_ROWS);
        /* every third case all the channels, the others a random range of them */
        const int k0 = t % 3 ? (int)(test_rng_next(rng) % (unsigned)k) : 0;
        const int k1 = t % 3 ? k0 + 1 + (int)(test_rng_next(rng) % (unsigned)(k - k0)) : k;
        const size_t ldy = (size_t)(k1 - k0) + test_rng_next(rng) % PAD;
        const size_t ldo = (size_t)k + test_rng_next(rng) % PAD;
        const int relu = t % 2;
        struct wino_int8_layer L;
        memset(&L, 0, sizeof L);
        L.k = k, L.scale = scale, L.bias = bias;
        L.lo = relu ? 0.0f : -127.0f, L.hi = relu ? 255.0f : 127.0f;
        for (int i = 0; i < k; i++) {
            scale[i] = (float)(test_rng_next(rng) % 1000 + 1) * 1e-4f;
            bias[i] = (float)((int)(test_rng_next(rng) % 2001) - 1000) * 0.01f;
        }
        for (int i = 0; i < AREA; i++)
            y[i] = (int32_t)(test_rng_next(rng) % 60001) - 30000; /* in range and clamped */
        for (int v = WINO_ISA_SCALAR; v <= (int)wino_cpu_isa(); v++) {
            memset(got, 0x5a, sizeof got);
            memset(want, 0x5a, sizeof want);
            for (int i = 0; i < rows; i++)
                for (int kk = k0; kk < k1; kk++)
                    want[(size_t)i * ldo + kk] = (uint8_t)wino_int8_requantize(
                        y[(size_t)i * ldy + (size_t)(kk - k0)], scale[kk], bias[kk], L.lo, L.hi);
            wino_s8_requantize((enum wino_isa)v, &L, rows, y, ldy, k0, k1, got, ldo);
            char what[160];
            snprintf(what, sizeof what, "requantization, %s: %d rows, channels %d..%d of %d, %s",
                     wino_isa_name((enum wino_isa)v), rows, k0, k1 - 1, k,
                     relu ? "ReLU, uint8 out" : "int8 out");
            test_check(tc, !memcmp(got, want, sizeof got), what);
        }
    }
}

int main(void)
{
    struct test_counts tc = {0, 0};
    struct test_rng rng = {test_seed()};
    printf("int8 GEMMs up to %s\n", wino_s8_isa_name(wino_s8_isa()));
    random_layers(&tc, &rng);
    exact_sums(&tc, &rng);
    requantize_rows(&tc, &rng);
    bad_requests(&tc);
    return test_report(&tc);
}
