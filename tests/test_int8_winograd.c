/* INT8 Winograd (docs/int8-winograd.md):
 *  (a) the reference is the convolution when nothing rounds: with x in {-1, 0, 1}, alpha_ta =
 *      127 s_x (so Vq = V) and impulse filters whose transformed weights are integers times a
 *      per-channel alpha_tw, the output is exactly the shifted signed sum of input channels
 *      (F(2,3), F(4,3); F(6,3) has |V| up to 2500 and cannot avoid rounding);
 *  (b) the engine equals the reference byte for byte on random shapes: edge tiles, odd C and K,
 *      padding 0..2, batch 1..2, int8/uint8 in and out, bias, ReLU, PACT clip, per-channel
 *      clips, int8 weights, 1 and 2 threads, through the public API; and with every int8 GEMM
 *      (scalar, AVX512-VNNI, AMX) and every transform build (baseline, AVX2, AVX-512) this
 *      machine runs; outputs poisoned first;
 *  (c) the quantized output is close to the float convolution on random data (SQNR);
 *  (d) bad parameters and overflow-prone layers are refused with the documented status.
 * Usage: test_int8_winograd (WINO_TEST_SEED=N to replay). */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "op/int8_layer.h"
#include "base/tile_matrices.h"
#include "cpu/gemm_s8.h"
#include "cpu/winograd_s8.h"
#include "ref/conv_ref.h"
#include "ref/int8_winograd_ref.h"
#include "int8_test_cases.h"
#include "test_util.h"

/* test_check with a printf-style description. */
static void checkf(struct test_counts *tc, int ok, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    test_check(tc, ok, what);
}


static size_t out_elems(const struct wino_conv2d_desc *d)
{
    int p, q;
    wino_conv2d_output_size(d, &p, &q);
    return (size_t)d->n * p * q * d->k;
}

/* Smallest L <= 100000 making L * G'[:, i] G'[:, j]^T integral, or 0. */
static int impulse_scale(const struct wino_int8_tile *t, int i, int j)
{
    for (int L = 1; L <= 100000; L++) {
        int ok = 1;
        for (int p = 0; p < t->alpha && ok; p++)
            for (int r = 0; r < t->alpha && ok; r++) {
                const double u = L * t->g[p][i] * t->g[r][j];
                ok = fabs(u - rint(u)) < 1e-9 && fabs(u) <= 127.0;
            }
        if (ok)
            return L;
    }
    return 0;
}

/* (a) */
static void check_exact_impulses(struct test_counts *tc, struct test_rng *rng, int m)
{
    struct wino_int8_tile tile;
    wino_int8_tile_make(m, &tile);
    const int C = 1 + (int)(test_rng_next(rng) % 9), K = 1 + (int)(test_rng_next(rng) % 9);
    const int H = 3 + (int)(test_rng_next(rng) % 12), W = 3 + (int)(test_rng_next(rng) % 12);
    const int pad = (int)(test_rng_next(rng) % 3);
    const struct wino_conv2d_desc d = int8_desc(1, C, H, W, K, pad, WINO_DTYPE_S8);
    int8_t *x = malloc((size_t)H * W * C), *y = malloc(out_elems(&d)), *want = malloc(out_elems(&d));
    float *w = calloc((size_t)K * 9 * C, sizeof *w), *tw = malloc(sizeof(float) * K);
    int *ik = malloc(sizeof(int) * K), *jk = malloc(sizeof(int) * K);
    for (size_t i = 0; i < (size_t)H * W * C; i++)
        x[i] = (int8_t)((int)(test_rng_next(rng) % 3) - 1);
    for (int k = 0; k < K; k++) {
        int L = 0;
        while (!L) {
            ik[k] = (int)(test_rng_next(rng) % 3);
            jk[k] = (int)(test_rng_next(rng) % 3);
            L = impulse_scale(&tile, ik[k], jk[k]);
        }
        tw[k] = 127.0f / (float)L; /* f_w = 127 / alpha_tw = L */
        for (int c = 0; c < C; c++)
            w[(((size_t)k * 3 + ik[k]) * 3 + jk[k]) * C + c] =
                (float)((int)(test_rng_next(rng) % 3) - 1);
    }
    const struct wino_int8_params q = {1.0f, 127.0f, 0.0f, tw, 0.0f, 1.0f, WINO_DTYPE_S8, 0.0f};
    struct wino_int8_layer L;
    int ok = wino_int8_layer_prepare(&d, m, w, &q, NULL, 0, &L) == WINO_SUCCESS;
    if (ok) {
        const int P = H + 2 * pad - 2, Q = W + 2 * pad - 2;
        for (int p = 0; p < P; p++)
            for (int qq = 0; qq < Q; qq++)
                for (int k = 0; k < K; k++) {
                    int s = 0;
                    const int h = p - pad + ik[k], ww = qq - pad + jk[k];
                    if (h >= 0 && h < H && ww >= 0 && ww < W)
                        for (int c = 0; c < C; c++)
                            s += (int)w[(((size_t)k * 3 + ik[k]) * 3 + jk[k]) * C + c] *
                                 x[((size_t)h * W + ww) * C + c];
                    want[((size_t)p * Q + qq) * K + k] = (int8_t)s;
                }
        memset(y, 0x5a, out_elems(&d));
        wino_ref_int8_winograd(&d, &L, x, y);
        ok = !memcmp(y, want, out_elems(&d));
        wino_int8_layer_release(&L);
    }
    checkf(tc, ok, "reference F(%d,3) is the exact convolution when nothing rounds (C=%d "
               "K=%d %dx%d pad %d)", m, C, K, H, W, pad);
    free(x), free(y), free(want), free(w), free(tw), free(ik), free(jk);
}


/* (b) one random case through the public API against the reference. */
static void check_engine_case(struct test_counts *tc, struct test_rng *rng, int m, int threads)
{
    const int x_signed = (int)(test_rng_next(rng) % 2), relu = (int)(test_rng_next(rng) % 2);
    const int N = 1 + (int)(test_rng_next(rng) % 2), C = 1 + (int)(test_rng_next(rng) % 70);
    const int K = 1 + (int)(test_rng_next(rng) % 40), pad = (int)(test_rng_next(rng) % 3);
    const int least = 3 - 2 * pad > 1 ? 3 - 2 * pad : 1; /* one output row at least */
    const int H = least + (int)(test_rng_next(rng) % 20), W = least + (int)(test_rng_next(rng) % 20);
    const int int8_weights = (int)(test_rng_next(rng) % 2), with_bias = (int)(test_rng_next(rng) % 2);
    const struct wino_conv2d_desc d =
        int8_desc(N, C, H, W, K, pad, x_signed ? WINO_DTYPE_S8 : WINO_DTYPE_U8);
    struct wino_int8_tile tile;
    wino_int8_tile_make(m, &tile);
    float *tw_k = malloc(sizeof(float) * K), *bias = malloc(sizeof(float) * K);
    struct wino_int8_params q = random_params(rng, &tile, C, x_signed, relu, tw_k, K);
    const size_t xn = (size_t)N * H * W * C, wn = (size_t)K * 9 * C, yn = out_elems(&d);
    uint8_t *x = malloc(xn), *y = malloc(yn), *want = malloc(yn);
    void *w = malloc(wn * sizeof(float));
    random_layer_data(rng, x, xn, w, wn, int8_weights, &q, bias, K);
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_WINOGRAD, .tile_m = m,
                                          .bias = with_bias ? bias : NULL, .relu = relu};
    const struct wino_context ctx = {.threads = threads};
    wino_conv2d *op = NULL;
    struct wino_int8_layer L;
    int ok = wino_conv2d_create_int8(&d, w, &q, &ctx, &o, &op) == WINO_SUCCESS &&
             wino_int8_layer_prepare(&d, m, w, &q, with_bias ? bias : NULL, relu, &L) ==
                 WINO_SUCCESS;
    if (ok) {
        size_t bytes = 0;
        void *ws = NULL;
        wino_conv2d_workspace_size(op, &bytes);
        if (bytes && posix_memalign(&ws, 64, bytes))
            ws = NULL;
        memset(y, 0xa5, yn);
        memset(want, 0x5a, yn);
        ok = wino_conv2d_run(op, x, y, ws, bytes) == WINO_SUCCESS;
        wino_ref_int8_winograd(&d, &L, x, want);
        ok = ok && !memcmp(y, want, yn);
        free(ws);
        wino_int8_layer_release(&L);
    }
    checkf(tc, ok,
               "F(%d,3) engine == reference: N=%d C=%d %dx%d K=%d pad %d, %s in, %s out, "
               "%s weights%s%s%s%s, %d thread(s)",
               m, N, C, H, W, K, pad, x_signed ? "s8" : "u8",
               q.y_dtype == WINO_DTYPE_S8 ? "s8" : "u8", int8_weights ? "int8" : "float",
               with_bias ? ", bias" : "", relu ? ", relu" : "", q.clip_c > 0 ? ", PACT" : "",
               q.alpha_tw_k ? ", per-channel alpha_tw" : "", threads);
    if (!ok)
        printf("    %s\n", wino_last_error());
    wino_conv2d_destroy(op);
    free(tw_k), free(bias), free(x), free(y), free(want), free(w);
}

/* SQNR (dB) of the INT8 layer's output against the float convolution of the float samples. */
static double int8_sqnr(const struct wino_conv2d_desc *df, int m, const float *xf,
                        const float *w, const struct wino_int8_params *q, const double *ref)
{
    struct wino_conv2d_desc d = *df;
    d.dtype = WINO_DTYPE_U8; /* the samples are post-ReLU */
    const size_t xn = (size_t)d.n * d.h * d.w * d.c, yn = out_elems(&d);
    uint8_t *x = malloc(xn);
    int8_t *y = malloc(yn);
    for (size_t i = 0; i < xn; i++) {
        const float v = rintf(xf[i] / q->x_scale);
        x[i] = (uint8_t)(v > 255.0f ? 255.0f : v);
    }
    struct wino_int8_layer L;
    double sig = 0.0, err = 0.0;
    if (wino_int8_layer_prepare(&d, m, w, q, NULL, 0, &L) == WINO_SUCCESS) {
        wino_ref_int8_winograd(&d, &L, x, y);
        for (size_t i = 0; i < yn; i++) {
            const double e = q->y_scale * y[i] - ref[i];
            sig += ref[i] * ref[i];
            err += e * e;
        }
        wino_int8_layer_release(&L);
    } else {
        err = sig = 1.0;
    }
    free(x), free(y);
    return 10.0 * log10(sig / (err > 0.0 ? err : 1e-300));
}

/* (b) again with every (int8 GEMM, vector ISA) pair this machine runs, through the engine, on 2
 * threads: random small images (one block of tiles, shared by the threads) or, with c > 0, the
 * given shape (C = K = c on hw x hw: several blocks, one thread each; K in chunks past 64). */
static void check_engine_isas(struct test_counts *tc, struct test_rng *rng, int m, int c, int hw)
{
    const int C = c ? c : 1 + (int)(test_rng_next(rng) % 90);
    const int K = c ? c : 1 + (int)(test_rng_next(rng) % 40);
    const int H = hw ? hw : 2 + (int)(test_rng_next(rng) % 15);
    const int W = hw ? hw : 2 + (int)(test_rng_next(rng) % 15);
    const struct wino_conv2d_desc d = int8_desc(2, C, H, W, K, 1, WINO_DTYPE_U8);
    struct wino_int8_tile tile;
    wino_int8_tile_make(m, &tile);
    float *tw_k = malloc(sizeof(float) * K), *w = malloc(sizeof(float) * 9 * C * K);
    const struct wino_int8_params q = random_params(rng, &tile, C, 0, 1, tw_k, K);
    const size_t xn = (size_t)2 * H * W * C, yn = out_elems(&d);
    uint8_t *x = malloc(xn), *y = malloc(yn), *want = malloc(yn);
    for (size_t i = 0; i < xn; i++)
        x[i] = (uint8_t)test_rng_next(rng);
    for (size_t i = 0; i < (size_t)9 * C * K; i++)
        w[i] = (float)(0.3 * test_rng_sym(rng));
    struct wino_int8_layer ref;
    if (wino_int8_layer_prepare(&d, m, w, &q, NULL, 1, &ref)) {
        checkf(tc, 0, "F(%d,3) layer for the ISA sweep: %s", m, wino_last_error());
        return;
    }
    memset(want, 0x5a, yn);
    wino_ref_int8_winograd(&d, &ref, x, want);
    wino_int8_layer_release(&ref);
    for (int g = WINO_S8_SCALAR; g <= (int)wino_s8_isa(); g++)
        for (int v = WINO_ISA_SCALAR; v <= (int)wino_cpu_isa(); v++) {
            struct wino_int8_layer L;
            struct wino_s8_engine e;
            int overflow = 0, ok = 0;
            void *ws = NULL;
            if (!wino_int8_layer_prepare(&d, m, w, &q, NULL, 1, &L) &&
                !wino_s8_engine_prepare(&e, &d, &L, 2, (enum wino_s8_isa)g, (enum wino_isa)v)) {
                const size_t bytes = wino_s8_engine_workspace_bytes(&e, &d, &overflow);
                if (!overflow && !posix_memalign(&ws, 64, bytes ? bytes : 64)) {
                    memset(y, 0xa5, yn);
                    wino_s8_engine_run(&e, &d, H, W, x, y, ws);
                    ok = !memcmp(y, want, yn);
                }
                wino_s8_engine_release(&e);
            }
            free(ws);
            checkf(tc, ok, "F(%d,3) engine == reference with %s GEMMs and %s transforms (C=%d K=%d "
                   "%dx%d)", m, wino_s8_isa_name((enum wino_s8_isa)g),
                   wino_isa_name((enum wino_isa)v), C, K, H, W);
        }
    free(tw_k), free(w), free(x), free(y), free(want);
}

/* (c) calibrated layers on post-ReLU inputs (independent pixels: the hard case) and heavy-tailed
 * weights: F(2,3) tracks the float convolution closely; for F(4,3) and F(6,3), whose transforms
 * enlarge the range 100x and 2500x, clipping at the 99.9th percentile beats no clipping. The
 * full study on realistic data is docs/int8-error-study.md. */
static void check_calibrated(struct test_counts *tc, struct test_rng *rng)
{
    const int C = 32, K = 16, H = 18, W = 18;
    struct wino_conv2d_desc df = wino_conv2d_desc_make(1, C, H, W, K, 3, 3, 1, 1);
    df.layout = WINO_LAYOUT_NHWC;
    const size_t xn = (size_t)H * W * C, wn = (size_t)K * 9 * C, yn = out_elems(&df);
    float *xf = malloc(xn * sizeof(float)), *w = malloc(wn * sizeof(float));
    double *ref = malloc(yn * sizeof(double));
    for (size_t i = 0; i < xn; i++) {
        const double v = test_rng_sym(rng);
        xf[i] = (float)(v > 0.0 ? v * v : 0.0);
    }
    for (size_t i = 0; i < wn; i++) { /* Laplace: heavy tails */
        const double u = test_rng_sym(rng);
        w[i] = (float)(0.05 * (u < 0 ? log(-u + 1e-12) : -log(u + 1e-12)));
    }
    wino_ref_conv2d_fwd(&df, xf, w, ref);
    for (int m = 2; m <= 6; m += 2) {
        struct wino_int8_params full, p999, mse;
        const int ok = wino_int8_calibrate(&df, m, xf, w, NULL, 0, 0.0f,
                                           WINO_CALIBRATE_PERCENTILE, 100.0, &full) == 0 &&
                       wino_int8_calibrate(&df, m, xf, w, NULL, 0, 0.0f,
                                           WINO_CALIBRATE_PERCENTILE, 99.9, &p999) == 0 &&
                       wino_int8_calibrate(&df, m, xf, w, NULL, 0, 0.0f, WINO_CALIBRATE_MSE,
                                           0.0, &mse) == 0;
        const double s_full = ok ? int8_sqnr(&df, m, xf, w, &full, ref) : -1e9,
                     s_999 = ok ? int8_sqnr(&df, m, xf, w, &p999, ref) : -1e9,
                     s_mse = ok ? int8_sqnr(&df, m, xf, w, &mse, ref) : -1e9;
        checkf(tc, ok && (m == 2 ? s_full >= 15.0 && s_999 >= 15.0 && s_mse >= 15.0 : s_999 > s_full),
               "F(%d,3) calibrated: SQNR %.1f dB (max clip), %.1f dB (99.9%%), %.1f dB (MSE)", m,
               s_full, s_999, s_mse);
    }
    free(xf), free(w), free(ref);
}

/* (d) */
static void check_refusals(struct test_counts *tc)
{
    const struct wino_conv2d_desc d = int8_desc(1, 8, 8, 8, 4, 1, WINO_DTYPE_S8);
    float w[4 * 9 * 8];
    for (int i = 0; i < 4 * 9 * 8; i++)
        w[i] = 0.1f * (float)((i % 7) - 3);
    const struct wino_int8_params good = {0.05f, 20.0f, 1.0f, NULL, 0.0f, 0.1f, WINO_DTYPE_S8,
                                          0.0f};
    struct {
        const char *what;
        struct wino_int8_params q;
        enum wino_status want;
    } cases[12];
    int n = 0;
#define CASE(label, field, value, status)                                                          \
    cases[n].what = label, cases[n].q = good, cases[n].q.field = value, cases[n].want = status, n++
    CASE("x_scale = 0", x_scale, 0.0f, WINO_INVALID_ARGUMENT);
    CASE("x_scale = NaN", x_scale, NAN, WINO_INVALID_ARGUMENT);
    CASE("negative y_scale", y_scale, -1.0f, WINO_INVALID_ARGUMENT);
    CASE("alpha_ta = inf", alpha_ta, INFINITY, WINO_INVALID_ARGUMENT);
    CASE("alpha_ta below the input step", alpha_ta, 0.01f, WINO_INVALID_ARGUMENT);
    CASE("alpha_tw = 0", alpha_tw, 0.0f, WINO_INVALID_ARGUMENT);
    CASE("alpha_tw step underflows", alpha_tw, 1e-37f, WINO_INVALID_ARGUMENT);
    CASE("negative w_scale", w_scale, -1.0f, WINO_INVALID_ARGUMENT);
    CASE("negative clip_c", clip_c, -1.0f, WINO_INVALID_ARGUMENT);
    CASE("uint8 output without relu", y_dtype, WINO_DTYPE_U8, WINO_INVALID_ARGUMENT);
    CASE("float output type", y_dtype, WINO_DTYPE_F32, WINO_INVALID_ARGUMENT);
    CASE("tiny y_scale (requantization scale not finite)", y_scale, 1e-44f,
         WINO_INVALID_ARGUMENT);
#undef CASE
    for (int i = 0; i < n; i++) {
        wino_conv2d *op = NULL;
        const enum wino_status st = wino_conv2d_create_int8(&d, w, &cases[i].q, NULL, NULL, &op);
        checkf(tc, st == cases[i].want && !op, "refused: %s (%s)", cases[i].what,
                   wino_last_error());
        wino_conv2d_destroy(op);
    }
    wino_conv2d *op = NULL;
    struct wino_conv2d_desc bad = d;
    bad.dtype = WINO_DTYPE_F32;
    checkf(tc, wino_conv2d_create_int8(&bad, w, &good, NULL, NULL, &op) ==
                       WINO_INVALID_ARGUMENT, "refused: float input dtype");
    bad = d;
    bad.layout = WINO_LAYOUT_NCHW;
    checkf(tc, wino_conv2d_create_int8(&bad, w, &good, NULL, NULL, &op) == WINO_UNSUPPORTED,
               "refused: NCHW");
    bad = d;
    bad.stride_h = 2;
    struct wino_conv2d_options winograd = {0};
    winograd.algo = WINO_ALGO_WINOGRAD;
    checkf(tc, wino_conv2d_create_int8(&bad, w, &good, NULL, &winograd, &op) == WINO_UNSUPPORTED,
           "refused by WINOGRAD: stride 2");
    enum wino_algo algo = WINO_ALGO_AUTO;
    int tile_m = -1;
    checkf(tc, wino_conv2d_create_int8(&bad, w, &good, NULL, NULL, &op) == WINO_SUCCESS &&
                   wino_conv2d_algo(op, &algo, &tile_m) == WINO_SUCCESS &&
                   algo == WINO_ALGO_DIRECT && tile_m == 0,
           "AUTO on stride 2: INT8 direct (tests/test_int8_direct.c)");
    wino_conv2d_destroy(op);
    op = NULL;
    const struct wino_conv2d_options o3 = {.tile_m = 3};
    checkf(tc, wino_conv2d_create_int8(&d, w, &good, NULL, &o3, &op) == WINO_UNSUPPORTED,
               "refused: F(3,3) is not an INT8 tile");
    checkf(tc, wino_conv2d_create_int8(&d, NULL, &good, NULL, NULL, &op) ==
                       WINO_INVALID_ARGUMENT &&
                   wino_conv2d_create_int8(&d, w, NULL, NULL, NULL, &op) == WINO_INVALID_ARGUMENT &&
                   wino_conv2d_create_int8(&d, w, &good, NULL, NULL, NULL) ==
                       WINO_INVALID_ARGUMENT,
               "refused: NULL weights, params, op");

    /* Calibration's own refusals. */
    struct wino_conv2d_desc fd = d;
    fd.dtype = WINO_DTYPE_F32;
    float xs[8 * 8 * 8], zeros[8 * 8 * 8] = {0};
    for (int i = 0; i < 8 * 8 * 8; i++)
        xs[i] = 0.01f * (float)(i % 13);
    struct wino_int8_params out;
    checkf(tc,
           wino_int8_calibrate(&fd, 4, xs, w, NULL, 0, 0.0f, WINO_CALIBRATE_PERCENTILE, 0.0,
                               &out) == WINO_INVALID_ARGUMENT &&
               wino_int8_calibrate(&fd, 4, xs, w, NULL, 0, 0.0f, WINO_CALIBRATE_PERCENTILE,
                                   100.5, &out) == WINO_INVALID_ARGUMENT &&
               wino_int8_calibrate(&fd, 4, xs, w, NULL, 0, 0.0f, (enum wino_calibration)7, 99.9,
                                   &out) == WINO_INVALID_ARGUMENT &&
               wino_int8_calibrate(&fd, 4, xs, w, NULL, 0, -1.0f, WINO_CALIBRATE_MSE, 0.0,
                                   &out) == WINO_INVALID_ARGUMENT &&
               wino_int8_calibrate(&d, 4, xs, w, NULL, 0, 0.0f, WINO_CALIBRATE_MSE, 0.0, &out) ==
                   WINO_INVALID_ARGUMENT &&
               wino_int8_calibrate(&fd, 4, zeros, w, NULL, 0, 0.0f, WINO_CALIBRATE_MSE, 0.0,
                                   &out) == WINO_INVALID_ARGUMENT &&
               wino_int8_calibrate(&fd, 3, xs, w, NULL, 0, 0.0f, WINO_CALIBRATE_MSE, 0.0, &out) ==
                   WINO_UNSUPPORTED &&
               wino_int8_calibrate(&fd, 4, NULL, w, NULL, 0, 0.0f, WINO_CALIBRATE_MSE, 0.0,
                                   &out) == WINO_INVALID_ARGUMENT,
           "calibration refuses: percentile 0 and 100.5, unknown method, negative x_scale, "
           "int8 desc, all-zero samples, F(3,3), NULL samples");
    checkf(tc,
           wino_int8_calibrate(&fd, 4, xs, w, NULL, 1, 0.0f, WINO_CALIBRATE_PERCENTILE, 99.9,
                               &out) == WINO_SUCCESS &&
               out.y_dtype == WINO_DTYPE_U8 && out.x_scale > 0.0f && out.alpha_ta >= out.x_scale &&
               out.alpha_tw > 0.0f && out.y_scale > 0.0f && out.clip_c > 0.0f,
           "calibration with relu: uint8 output, positive scales and clips");

    /* Weights that saturate every transformed value: F(6,3)'s output transform could exceed
     * int32 from a few hundred channels on; F(2,3)'s cannot. */
    const int C = 512, K = 2;
    const struct wino_conv2d_desc big = int8_desc(1, C, 8, 8, K, 1, WINO_DTYPE_S8);
    float *wb = malloc(sizeof(float) * K * 9 * C);
    for (int i = 0; i < K * 9 * C; i++)
        wb[i] = (i % 2) ? 1.0f : -1.0f;
    struct wino_int8_params qb = good;
    qb.alpha_tw = 1e-3f;
    const struct wino_conv2d_options o6 = {.tile_m = 6};
    const struct wino_conv2d_options o2 = {.tile_m = 2};
    checkf(tc, wino_conv2d_create_int8(&big, wb, &qb, NULL, &o6, &op) == WINO_UNSUPPORTED,
               "refused: F(6,3), C = 512, saturated weights could overflow int32 (%s)",
               wino_last_error());
    const enum wino_status st2 = wino_conv2d_create_int8(&big, wb, &qb, NULL, &o2, &op);
    checkf(tc, st2 == WINO_SUCCESS, "accepted: F(2,3), C = 512, saturated weights");
    wino_conv2d_destroy(op);
    free(wb);
}

int main(void)
{
    struct test_counts tc = {0, 0};
    struct test_rng rng = {test_seed()};
    printf("int8 GEMM: %s\n", wino_s8_isa_name(wino_s8_isa()));
    for (int i = 0; i < 10; i++) {
        check_exact_impulses(&tc, &rng, 2);
        check_exact_impulses(&tc, &rng, 4);
    }
    static const int tiles[3] = {2, 4, 6};
    for (int i = 0; i < 60; i++)
        check_engine_case(&tc, &rng, tiles[i % 3], 1 + i % 2);
    for (int i = 0; i < 6; i++)
        check_engine_isas(&tc, &rng, tiles[i % 3], 0, 0);
    for (int i = 0; i < 2; i++)
        check_engine_isas(&tc, &rng, tiles[i], 64, 40);
    /* K in chunks of 64, 64 and 22 channels, several blocks; drawn from a stream of their own,
     * so that the draws of the checks below stay as they were */
    struct test_rng chunked = {rng.s ^ 0x9e3779b97f4a7c15u};
    for (int i = 0; i < 2; i++)
        check_engine_isas(&tc, &chunked, tiles[i], 150, 24);
    check_calibrated(&tc, &rng);
    check_refusals(&tc);
    return test_report(&tc);
}
