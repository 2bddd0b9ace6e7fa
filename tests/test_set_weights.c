/* wino_conv2d_set_weights on the CPU: an operator given new weights computes exactly what an
 * operator created with them computes (same plan, same code: bit for bit), for every forward
 * and backward-data path that takes new weights; the others refuse with the documented status
 * and keep their weights. */
#define _POSIX_C_SOURCE 200112L
#include <string.h>

#include "base/tile_matrices.h"
#include "test_util.h"
#include "wino.h"

enum kind { FORWARD, BACKWARD_DATA };

struct layer {
    const char *name;
    enum kind kind;
    int n, c, h, w, k, r, pad, stride;
    enum wino_layout layout;
    enum wino_algo algo;
    enum wino_variant variant;
};

static enum wino_status create(enum kind kind, const struct wino_conv2d_desc *d, const float *w,
                               const struct wino_conv2d_options *o, wino_conv2d **op)
{
    const struct wino_context ctx = {.threads = 1};
    return kind == FORWARD ? wino_conv2d_create(d, w, &ctx, o, op)
                           : wino_conv2d_backward_data_create(d, w, &ctx, o, op);
}

/* Runs op on in into a poisoned out of out_elems floats. */
static int run(const wino_conv2d *op, const float *in, float *out, size_t out_elems)
{
    size_t bytes = 0;
    memset(out, 0xff, sizeof(float) * out_elems);
    if (wino_conv2d_workspace_size(op, &bytes))
        return 0;
    void *ws = test_alloc64(bytes);
    const int ok = wino_conv2d_run(op, in, out, ws, bytes) == WINO_SUCCESS;
    free(ws);
    return ok;
}

static void fill(struct test_rng *rng, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)test_rng_sym(rng);
}

static void check_layer(struct test_counts *c, struct test_rng *rng, const struct layer *L)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(L->n, L->c, L->h, L->w, L->k, L->r, L->r,
                                                      L->pad, L->pad);
    d.stride_h = d.stride_w = L->stride;
    d.layout = L->layout;
    int p = 0, q = 0;
    wino_conv2d_output_size(&d, &p, &q);
    const size_t we = (size_t)L->k * L->c * L->r * L->r, xe = (size_t)L->n * L->c * L->h * L->w,
                 ye = (size_t)L->n * L->k * p * q;
    const size_t in_e = L->kind == FORWARD ? xe : ye, out_e = L->kind == FORWARD ? ye : xe;
    float *w1 = malloc(sizeof(float) * we), *w2 = malloc(sizeof(float) * we);
    float *in = malloc(sizeof(float) * in_e), *a = malloc(sizeof(float) * out_e),
          *b = malloc(sizeof(float) * out_e), *old = malloc(sizeof(float) * out_e);
    fill(rng, w1, we);
    fill(rng, w2, we);
    fill(rng, in, in_e);
    const struct wino_conv2d_options o = {.algo = L->algo, .variant = L->variant};
    wino_conv2d *changed = NULL, *fresh = NULL;
    int ok = create(L->kind, &d, w1, &o, &changed) == WINO_SUCCESS &&
             create(L->kind, &d, w2, &o, &fresh) == WINO_SUCCESS && run(changed, in, old, out_e);
    ok = ok && wino_conv2d_set_weights(changed, w2, NULL) == WINO_SUCCESS &&
         run(changed, in, a, out_e) && run(fresh, in, b, out_e);
    char what[160];
    snprintf(what, sizeof what, "%s: new weights give the bits of an operator created with them",
             L->name);
    test_check(c, ok && memcmp(a, b, sizeof(float) * out_e) == 0, what);
    snprintf(what, sizeof what, "%s: and not the old result", L->name);
    test_check(c, ok && memcmp(a, old, sizeof(float) * out_e) != 0, what);
    wino_conv2d_destroy(changed);
    wino_conv2d_destroy(fresh);
    free(w1), free(w2), free(in), free(a), free(b), free(old);
}

static void check_refusals(struct test_counts *c)
{
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 4, 8, 8, 4, 3, 3, 1, 1);
    float w[4 * 4 * 9] = {0};
    wino_conv2d *op = NULL;
    test_check(c, wino_conv2d_create(&d, w, NULL, NULL, &op) == WINO_SUCCESS &&
                      wino_conv2d_set_weights(op, NULL, NULL) == WINO_INVALID_ARGUMENT &&
                      wino_conv2d_set_weights(op, w, (void *)1) == WINO_INVALID_ARGUMENT,
               "NULL weights and a stream on a CPU operator: invalid");
    wino_conv2d_destroy(op);
    test_check(c, wino_conv2d_set_weights(NULL, w, NULL) == WINO_INVALID_ARGUMENT,
               "a NULL operator: invalid");
    op = NULL;
    test_check(c, wino_conv2d_backward_filter_create(&d, NULL, NULL, &op) == WINO_SUCCESS &&
                      wino_conv2d_set_weights(op, w, NULL) == WINO_INVALID_ARGUMENT,
               "a backward-filter operator holds no weights: invalid");
    wino_conv2d_destroy(op);
    op = NULL;
    const struct wino_conv2d_options caller = {.algo = WINO_ALGO_WINOGRAD, .tile_m = 2,
                                               .matrices = wino_recorded_tile(2, 3)};
    test_check(c, wino_conv2d_create(&d, w, NULL, &caller, &op) == WINO_SUCCESS &&
                      wino_conv2d_set_weights(op, w, NULL) == WINO_UNSUPPORTED,
               "Winograd with caller matrices: unsupported (create anew)");
    wino_conv2d_destroy(op);
    op = NULL;
    struct wino_conv2d_desc s8 = d;
    s8.layout = WINO_LAYOUT_NHWC;
    s8.dtype = WINO_DTYPE_S8;
    const struct wino_int8_params params = {.x_scale = 0.02f, .alpha_ta = 1.0f,
                                            .alpha_tw = 1.0f, .y_scale = 0.05f,
                                            .y_dtype = WINO_DTYPE_S8};
    for (int i = 0; i < 4 * 4 * 9; i++)
        w[i] = (float)(i % 7) / 7.0f - 0.4f;
    test_check(c, wino_conv2d_create_int8(&s8, w, &params, NULL, NULL, &op) == WINO_SUCCESS &&
                      wino_conv2d_set_weights(op, w, NULL) == WINO_UNSUPPORTED,
               "INT8: unsupported (its weights are quantized at create)");
    wino_conv2d_destroy(op);
}

/* wino_int8_tile_matrices hands out the engines' tiles: A'^T and B'^T integer, G' as the
 * table's, too little storage refused. */
static void check_int8_tiles(struct test_counts *c)
{
    for (int m = 2; m <= 6; m += 2) {
        double storage[6 * 8 + 3 * 8 + 64];
        struct wino_tile_matrices t;
        struct wino_int8_tile want;
        const int a = m + 2;
        int ok = wino_int8_tile_matrices(m, storage, 6 * 8 + 3 * 8 + 64, &t) == WINO_SUCCESS &&
                 wino_int8_tile_make(m, &want) == WINO_SUCCESS && t.m == m && t.r == 3;
        for (int i = 0; ok && i < a; i++) {
            for (int j = 0; j < a; j++)
                ok &= t.bt[i * a + j] == want.bt[i][j];
            for (int j = 0; j < 3; j++)
                ok &= t.g[i * 3 + j] == want.g[i][j];
            for (int r = 0; r < m; r++)
                ok &= t.at[r * a + i] == want.at[r][i];
        }
        char what[96];
        snprintf(what, sizeof what, "wino_int8_tile_matrices(%d) is the engines' tile", m);
        test_check(c, ok, what);
        test_check(c, wino_int8_tile_matrices(m, storage, (size_t)(m * a + 3 * a + a * a) - 1,
                                              &t) == WINO_INSUFFICIENT_WORKSPACE,
                   "too little storage: insufficient");
    }
    double storage[128];
    struct wino_tile_matrices t;
    test_check(c, wino_int8_tile_matrices(3, storage, 128, &t) == WINO_UNSUPPORTED,
               "tile m = 3: unsupported");
}

int main(void)
{
    struct test_counts c = {0, 0};
    struct test_rng rng = {test_seed()};
    static const struct layer layers[] = {
        {"forward winograd F4 fused", FORWARD, 2, 5, 11, 9, 7, 3, 1, 1, WINO_LAYOUT_NCHW,
         WINO_ALGO_WINOGRAD, WINO_VARIANT_FUSED},
        {"forward winograd F2 non-fused NHWC", FORWARD, 1, 6, 7, 10, 3, 3, 0, 1,
         WINO_LAYOUT_NHWC, WINO_ALGO_WINOGRAD, WINO_VARIANT_NON_FUSED},
        {"forward direct stride 2", FORWARD, 2, 3, 9, 9, 5, 3, 1, 2, WINO_LAYOUT_NCHW,
         WINO_ALGO_DIRECT, WINO_VARIANT_AUTO},
        {"forward auto 5x5", FORWARD, 1, 4, 12, 12, 6, 5, 2, 1, WINO_LAYOUT_NCHW,
         WINO_ALGO_AUTO, WINO_VARIANT_AUTO},
        {"backward-data winograd", BACKWARD_DATA, 2, 5, 10, 8, 6, 3, 1, 1, WINO_LAYOUT_NCHW,
         WINO_ALGO_WINOGRAD, WINO_VARIANT_AUTO},
        {"backward-data winograd NHWC", BACKWARD_DATA, 1, 3, 9, 9, 4, 3, 2, 1,
         WINO_LAYOUT_NHWC, WINO_ALGO_WINOGRAD, WINO_VARIANT_AUTO},
        {"backward-data direct stride 2", BACKWARD_DATA, 2, 4, 9, 7, 3, 3, 1, 2,
         WINO_LAYOUT_NCHW, WINO_ALGO_DIRECT, WINO_VARIANT_AUTO},
    };
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
        check_layer(&c, &rng, &layers[i]);
    check_refusals(&c);
    check_int8_tiles(&c);
    return test_report(&c);
}
