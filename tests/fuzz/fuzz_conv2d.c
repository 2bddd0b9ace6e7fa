/* Fuzz target: descriptor, options and context validation of the convolution operators.
 * Input: the fields of struct wino_conv2d_desc, wino_conv2d_options, wino_context and (INT8)
 * wino_int8_params, one byte each through the tables below (decode_int, decode_float), then a
 * seed for the tensors. tests/fuzz/make_seeds.py writes inputs in this format.
 * Checks, FP32: can_implement and create give the same status (for a context create accepts);
 * a created operator reports what was asked; a run of a small layer, with a workspace of exactly
 * the reported size and the output poisoned with NaN, gives finite values within a loose bound of
 * the FP64 reference. Backward-data and backward-filter likewise (their can_implement, create and
 * run, dw += dW with accumulate). INT8 (wino_conv2d_create_int8, optionally after
 * wino_int8_calibrate): a run gives the bytes of the integer specification (src/ref). */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <float.h>
#include <limits.h>
#include <math.h>

#include "caller_tile.h"
#include "op/int8_layer.h"
#include "fuzz/fuzz_run_check.h"
#include "ref/int8_direct_ref.h"
#include "ref/int8_winograd_ref.h"

/* Layers run only below these sizes, so one input takes milliseconds: multiply-adds of the
 * direct convolution (the FP64 reference does them all), and tensor and weight elements. */
#define RUN_MAX_MACS (1L << 19)
#define RUN_MAX_ELEMS (1L << 18)
#define RUN_MAX_THREADS 8

/* Sizes: mostly small (-1..15), else one of the edge values. */
static int decode_int(struct fuzz_input *in)
{
    static const int edges[32] = {16,      17,        31,          32,          33,
                                  63,      64,        100,         127,         128,
                                  255,     1000,      4096,        46340,       46341,
                                  65535,   65536,     1 << 20,     1 << 24,     1 << 30,
                                  INT_MAX / 2, INT_MAX - 1, INT_MAX, INT_MIN,     INT_MIN + 1,
                                  -2,      -100,      -65536,      2,           3,
                                  5,       7};
    const uint8_t b = fuzz_u8(in);
    return b < 0xe0 ? b % 17 - 1 : edges[b - 0xe0];
}

/* Scales and clips: a spread of ordinary values, else one of the edge values. */
static float decode_float(struct fuzz_input *in)
{
    static const float edges[16] = {0.0f,    -0.0f,   1e-45f,  FLT_MIN, 1e-30f,   FLT_MAX,
                                    1e30f,   -1.0f,   -1e-3f,  1.0f,    127.0f,   1e10f,
                                    INFINITY, -INFINITY, NAN,  0.5f};
    const uint8_t b = fuzz_u8(in);
    return b < 0xf0 ? ldexpf(1.0f + (float)(b & 15) / 16.0f, (int)(b >> 4) - 10) : edges[b - 0xf0];
}

/* One of the listed enum values, or a value outside the enum. */
static int decode_enum(struct fuzz_input *in, int count)
{
    const int v = fuzz_pick(in, count + 2);
    return v < count ? v : v == count ? -1 : 1000;
}

static const int thread_choices[] = {0, 1, 2, 3, 4, 8, 64, 1024, 1025, 100000, -1, INT_MAX,
                                     INT_MIN};

/* Points: NULL, a few bytes of the input, or one of these sets (recorded, classic, and the
 * ill-conditioned or out-of-range ones of issue 11). */
static const char *const point_choices[] = {
    "0,1,-1",
    "0,1,-1,2,-2",
    "0,1,-1,1/2,-2",
    "0,1,-1,1000000",
    "0,1,-1,100000000000000000000",
    "0,1,-1,1/10000000000000000000000000000000000000000",
    "0,1,-1,2,-2,1/2,-1/2",
    "0,-1,1,1/2,-3,-1/2,3,1/3,-1/3,2,-2,3/2,-3/2,1/4,-4",
};
#define POINT_CHOICES (int)(sizeof point_choices / sizeof point_choices[0])

struct fuzz_case {
    struct wino_conv2d_desc desc;
    struct wino_conv2d_options options;
    struct wino_context ctx;
    struct wino_int8_params params;
    enum wino_conv2d_kind kind;
    int use_ctx, use_options, int8, calibrate;
    char *points; /* owned when read from the input */
    struct caller_tile tile; /* options.matrices: a tile on those points */
    float *bias, *alpha_tw_k;
    uint64_t seed;
};

static void decode(struct fuzz_input *in, struct fuzz_case *c)
{
    const uint8_t mode = fuzz_u8(in);
    c->int8 = mode & 1;
    c->calibrate = (mode >> 1) & 1;
    c->use_ctx = !((mode >> 2) & 1);
    c->use_options = !((mode >> 3) & 1);
    c->kind = (enum wino_conv2d_kind)((mode >> 4) % 3);
    struct wino_conv2d_desc *d = &c->desc;
    int *fields[] = {&d->n,     &d->c,     &d->h,        &d->w,        &d->k,
                     &d->r,     &d->s,     &d->pad_h,    &d->pad_w,    &d->stride_h,
                     &d->stride_w, &d->dilation_h, &d->dilation_w};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *fields[i] = decode_int(in);
    d->layout = (enum wino_layout)decode_enum(in, 2);
    d->dtype = (enum wino_dtype)decode_enum(in, 4);

    struct wino_conv2d_options *o = &c->options;
    o->algo = (enum wino_algo)decode_enum(in, 3);
    o->tile_m = decode_int(in);
    o->variant = (enum wino_variant)decode_enum(in, 4);
    /* 0, 3: no tile; 1, >= 4: a tile on those points when the generator makes one; 2: the
     * deprecated options.points, always refused */
    const int points = fuzz_pick(in, 4 + POINT_CHOICES);
    const char *text = points == 1 ? (c->points = fuzz_string(in, fuzz_u8(in) % 24))
                       : points >= 4 ? point_choices[points - 4]
                                     : NULL;
    if (text && !caller_tile_make(o->tile_m, d->r, text, &c->tile))
        o->matrices = &c->tile.matrices;
    else if (points == 2)
        o->points = point_choices[0];
    const uint8_t flags = fuzz_u8(in);
    o->relu = (flags & 3) == 3 ? 2 : flags & 1;
    o->tf32 = (flags >> 2) & 1;
    o->accumulate = (flags >> 6) & 1;

    c->ctx.threads = thread_choices[fuzz_pick(in, sizeof thread_choices / sizeof(int))];
    c->ctx.backend = (enum wino_backend)decode_enum(in, 2);
    c->ctx.device = fuzz_pick(in, 3) - 1;
    c->ctx.tuning_cache = (flags >> 3) & 1 ? "/nonexistent/wino-tuning-cache" : NULL;

    struct wino_int8_params *q = &c->params;
    q->x_scale = decode_float(in);
    q->alpha_ta = decode_float(in);
    q->alpha_tw = decode_float(in);
    q->w_scale = decode_float(in);
    q->y_scale = decode_float(in);
    q->y_dtype = (enum wino_dtype)decode_enum(in, 4);
    q->clip_c = decode_float(in);
    const float tw_k = decode_float(in);
    c->seed = fuzz_u32(in) | 1;
    /* Per-channel clips and the bias need K values: only for a K that is small anyway. */
    const int k_small = d->k >= 1 && d->k <= 4096;
    if ((flags >> 4) & 1 && k_small && (c->alpha_tw_k = malloc(sizeof(float) * (size_t)d->k))) {
        for (int k = 0; k < d->k; k++)
            c->alpha_tw_k[k] = k % 2 ? tw_k : q->alpha_tw;
        q->alpha_tw_k = c->alpha_tw_k;
    }
    if ((flags >> 5) & 1 && k_small && (c->bias = malloc(sizeof(float) * (size_t)d->k))) {
        struct test_rng rng = {c->seed};
        for (int k = 0; k < d->k; k++)
            c->bias[k] = (float)test_rng_sym(&rng);
        o->bias = c->bias;
    }
}

/* Element counts of x, w and y and the multiply-adds of the layer in double (no overflow), or
 * 0 when the descriptor has no output or a field below its minimum. */
struct work {
    double x, w, y, macs;
};

static struct work work_of(const struct wino_conv2d_desc *d)
{
    struct work t = {0, 0, 0, 0};
    const int fields[] = {d->n, d->c, d->h, d->w, d->k, d->r, d->s, d->stride_h, d->stride_w,
                          d->dilation_h, d->dilation_w};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i] < 1)
            return t;
    if (d->pad_h < 0 || d->pad_w < 0)
        return t;
    const double p = wino_conv_out_dim(d->h, d->pad_h, d->dilation_h, d->r, d->stride_h);
    const double q = wino_conv_out_dim(d->w, d->pad_w, d->dilation_w, d->s, d->stride_w);
    t.x = (double)d->n * d->c * d->h * d->w;
    t.w = (double)d->k * d->c * d->r * d->s;
    t.y = (double)d->n * d->k * p * q;
    t.macs = t.y * d->c * d->r * d->s;
    return t;
}

static int small_enough(const struct work *t)
{
    return t->macs >= 1 && t->macs <= RUN_MAX_MACS && t->x <= RUN_MAX_ELEMS &&
           t->w <= RUN_MAX_ELEMS && t->y <= RUN_MAX_ELEMS;
}

/* can_implement of c->kind (*algo: what create would use; AUTO for the forward kind, whose
 * can_implement does not say). */
static enum wino_status can_implement(const struct fuzz_case *c,
                                      const struct wino_conv2d_options *o, enum wino_algo *algo)
{
    *algo = WINO_ALGO_AUTO;
    if (c->kind == WINO_CONV2D_BACKWARD_DATA)
        return wino_conv2d_backward_data_can_implement(&c->desc, o, algo);
    if (c->kind == WINO_CONV2D_BACKWARD_FILTER)
        return wino_conv2d_backward_filter_can_implement(&c->desc, o, algo);
    return wino_conv2d_can_implement(&c->desc, o);
}

static enum wino_status create(const struct fuzz_case *c, const float *w,
                               const struct wino_context *ctx,
                               const struct wino_conv2d_options *o, wino_conv2d **op)
{
    if (c->kind == WINO_CONV2D_BACKWARD_DATA)
        return wino_conv2d_backward_data_create(&c->desc, w, ctx, o, op);
    if (c->kind == WINO_CONV2D_BACKWARD_FILTER)
        return wino_conv2d_backward_filter_create(&c->desc, ctx, o, op);
    return wino_conv2d_create(&c->desc, w, ctx, o, op);
}

/* Runs a backward operator on random data, dx or dw poisoned with NaN (dw random when it
 * accumulates), and checks it against the FP64 reference: finite and within the loose bound. */
static void run_backward(const struct fuzz_case *c, const wino_conv2d *op, const float *w,
                         const struct work *t)
{
    const struct wino_conv2d_desc *d = &c->desc;
    const int filter = c->kind == WINO_CONV2D_BACKWARD_FILTER;
    const int accumulate = filter && c->use_options && c->options.accumulate;
    enum wino_algo algo;
    int tile_m;
    size_t bytes = 0;
    FUZZ_REQUIRE(!wino_conv2d_algo(op, &algo, &tile_m) &&
                     !wino_conv2d_workspace_size(op, &bytes),
                 "%s", wino_last_error());
    if (bytes > FUZZ_RUN_MAX_WORKSPACE)
        return;
    const size_t xn = (size_t)t->x, yn = (size_t)t->y, n = filter ? (size_t)t->w : xn;
    float *x = malloc(sizeof(float) * xn), *dy = malloc(sizeof(float) * yn);
    float *got = malloc(sizeof(float) * n), *before = malloc(sizeof(float) * n);
    double *want = malloc(sizeof(double) * n);
    void *ws = bytes ? fuzz_alloc64(bytes) : NULL;
    FUZZ_REQUIRE(x && dy && got && before && want && (ws || !bytes), "out of memory");
    struct test_rng rng = {c->seed};
    for (size_t i = 0; i < xn; i++)
        x[i] = (float)test_rng_sym(&rng);
    for (size_t i = 0; i < yn; i++)
        dy[i] = (float)test_rng_sym(&rng);
    for (size_t i = 0; i < n; i++)
        got[i] = before[i] = accumulate ? (float)test_rng_sym(&rng) : NAN;
    if (filter) {
        FUZZ_REQUIRE(!wino_conv2d_backward_filter_run(op, x, dy, got, ws, bytes),
                     "backward-filter run: %s", wino_last_error());
        wino_ref_conv2d_bwd_filter(d, x, dy, want);
    } else {
        FUZZ_REQUIRE(!wino_conv2d_run(op, dy, got, ws, bytes), "backward-data run: %s",
                     wino_last_error());
        wino_ref_conv2d_bwd_data(d, dy, w, want);
    }
    for (size_t i = 0; i < n; i++) {
        want[i] += accumulate ? before[i] : 0.0;
        FUZZ_REQUIRE(isfinite(got[i]), "element %zu = %g (algo %d)", i, (double)got[i],
                     (int)algo);
    }
    const double err = wino_rel_l1_f32(got, want, n);
    /* backward-data runs the forward engine; WinRS measured at most 1.2e-6 (docs/training.md) */
    const double limit = filter ? 1e-4
                                : fuzz_error_bound(algo, tile_m + d->r - 1,
                                                   c->use_options && c->options.matrices);
    FUZZ_REQUIRE(err <= limit, "relative L1 error %.3g above %.3g (kind %d, algo %d, tile m %d)",
                 err, limit, (int)c->kind, (int)algo, tile_m);
    free(x), free(dy), free(got), free(before), free(want), free(ws);
}

/* can_implement and create of the FP32 operators; a small layer that is created is run. */
static void fuzz_f32(const struct fuzz_case *c)
{
    const struct wino_conv2d_desc *d = &c->desc;
    const struct wino_conv2d_options *o = c->use_options ? &c->options : NULL;
    const struct wino_context *ctx = c->use_ctx ? &c->ctx : NULL;
    enum wino_algo planned;
    const enum wino_status can = can_implement(c, o, &planned);
    FUZZ_REQUIRE(can == WINO_SUCCESS || can == WINO_INVALID_ARGUMENT || can == WINO_UNSUPPORTED,
                 "can_implement: status %d", (int)can);
    FUZZ_REQUIRE(!can == !*wino_last_error(), "can_implement: status %d, error \"%s\"", (int)can,
                 wino_last_error());
    const struct work t = work_of(d);
    const int small = small_enough(&t);
    if (!can && !small)
        return; /* valid but too large to create here */
    const size_t wn = small ? (size_t)t.w : 16;
    float *w = malloc(sizeof(float) * wn);
    FUZZ_REQUIRE(w, "out of memory");
    struct test_rng rng = {c->seed ^ 0x5bd1e995u};
    for (size_t i = 0; i < wn; i++)
        w[i] = (float)test_rng_sym(&rng);
    wino_conv2d *op = NULL;
    const enum wino_status st = create(c, w, ctx, o, &op);
    FUZZ_REQUIRE(!st == !!op && !st == !*wino_last_error(), "create: status %d, op %p, error "
                 "\"%s\"", (int)st, (void *)op, wino_last_error());
    /* can_implement has no context: the two agree when create accepts the context */
    const int agree = !ctx || (ctx->backend == WINO_BACKEND_CPU && ctx->threads >= 0 &&
                               ctx->threads <= WINO_MAX_THREADS);
    if (agree && st != WINO_OUT_OF_MEMORY)
        FUZZ_REQUIRE(st == can, "kind %d: can_implement %d but create %d: %s", (int)c->kind,
                     (int)can, (int)st, wino_last_error());
    if (!st) {
        enum wino_conv2d_kind kind;
        enum wino_algo algo;
        int tile_m;
        FUZZ_REQUIRE(!wino_conv2d_kind(op, &kind) && kind == c->kind &&
                         !wino_conv2d_algo(op, &algo, &tile_m),
                     "kind %d: %s", (int)c->kind, wino_last_error());
        FUZZ_REQUIRE(algo == WINO_ALGO_DIRECT || algo == WINO_ALGO_WINOGRAD, "algo %d",
                     (int)algo);
        FUZZ_REQUIRE(!o || o->algo == WINO_ALGO_AUTO || o->algo == algo,
                     "algo %d asked, %d used", (int)o->algo, (int)algo);
        FUZZ_REQUIRE(planned == WINO_ALGO_AUTO || planned == algo,
                     "can_implement planned algo %d, create used %d", (int)planned, (int)algo);
        FUZZ_REQUIRE(algo != WINO_ALGO_WINOGRAD || !o || !o->tile_m || o->tile_m == tile_m,
                     "tile m %d asked, %d used", o ? o->tile_m : 0, tile_m);
        const int runs = !ctx || (ctx->backend == WINO_BACKEND_CPU &&
                                  ctx->threads <= RUN_MAX_THREADS);
        if (runs && c->kind == WINO_CONV2D_FORWARD)
            fuzz_check_f32_run(d, op, w, o ? o->bias : NULL, o ? o->relu : 0, c->seed,
                               o && o->matrices);
        else if (runs)
            run_backward(c, op, w, &t);
    }
    wino_conv2d_destroy(op);
    free(w);
}

static int all_finite(const float *v, size_t n)
{
    int finite = 1;
    for (size_t i = 0; i < n; i++)
        finite &= isfinite(v[i]) != 0;
    return finite;
}

/* Fills v with values uniform in (-scale, scale); with one chance in eight one of them becomes a
 * special value. Returns 1 when all are finite. */
static int draw(float *v, size_t n, double scale, struct test_rng *rng)
{
    static const float specials[] = {0.0f, 1e30f, -1e-30f, FLT_MAX, NAN, INFINITY};
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(scale * test_rng_sym(rng));
    const uint64_t special = test_rng_next(rng);
    if (special % 8 == 0)
        v[special / 8 % n] = specials[special / 8 / n % 6];
    return all_finite(v, n);
}

/* Calibrates c->params from random samples; 0 when that failed (the status checked). */
static int calibrate(struct fuzz_case *c, const float *w, const struct work *t)
{
    struct wino_conv2d_desc f = c->desc;
    f.dtype = WINO_DTYPE_F32;
    const size_t xn = (size_t)t->x;
    float *samples = malloc(sizeof(float) * xn);
    FUZZ_REQUIRE(samples, "out of memory");
    struct test_rng rng = {c->seed};
    const int finite = draw(samples, xn, 1.0, &rng) && all_finite(w, (size_t)t->w);
    const int tile_m = c->use_options ? c->options.tile_m : 0;
    const enum wino_calibration method = (enum wino_calibration)(c->seed >> 8 & 1);
    const float *bias = c->use_options ? c->options.bias : NULL;
    const int relu = c->use_options ? c->options.relu : 0;
    const enum wino_status st = wino_int8_calibrate(&f, tile_m, samples, w, bias, relu,
                                                    c->params.x_scale, method, 99.9, &c->params);
    FUZZ_REQUIRE(st == WINO_SUCCESS || st == WINO_INVALID_ARGUMENT ||
                     st == WINO_UNSUPPORTED || st == WINO_OUT_OF_MEMORY,
                 "calibrate: status %d", (int)st);
    FUZZ_REQUIRE(!st == !*wino_last_error(), "calibrate: status %d, error \"%s\"", (int)st,
                 wino_last_error());
    FUZZ_REQUIRE(finite || st, "calibrate accepted a non-finite sample or weight");
    free(samples);
    return st == WINO_SUCCESS;
}

/* Runs the INT8 operator on random bytes; its output must be the integer specification's. */
static void run_int8(const struct fuzz_case *c, wino_conv2d *op, const float *w,
                     const struct work *t)
{
    const struct wino_conv2d_desc *d = &c->desc;
    const struct wino_conv2d_options *o = c->use_options ? &c->options : NULL;
    enum wino_algo algo = WINO_ALGO_AUTO;
    int tile_m = 0;
    FUZZ_REQUIRE(!wino_conv2d_algo(op, &algo, &tile_m), "%s", wino_last_error());
    struct wino_int8_layer layer;
    const float *bias = o ? o->bias : NULL;
    const int relu = o ? o->relu : 0;
    FUZZ_REQUIRE(!(algo == WINO_ALGO_DIRECT
                       ? wino_int8_direct_prepare(d, w, &c->params, bias, relu, &layer)
                       : wino_int8_layer_prepare(d, tile_m, w, &c->params, bias, relu, &layer)),
                 "the layer of a created INT8 operator: %s", wino_last_error());
    size_t bytes = 0;
    FUZZ_REQUIRE(!wino_conv2d_workspace_size(op, &bytes), "%s", wino_last_error());
    const size_t xn = (size_t)t->x, yn = (size_t)t->y;
    uint8_t *x = malloc(xn), *y = malloc(yn), *want = malloc(yn);
    void *ws = bytes ? fuzz_alloc64(bytes) : NULL;
    FUZZ_REQUIRE(x && y && want && (ws || !bytes), "out of memory");
    struct test_rng rng = {c->seed};
    for (size_t i = 0; i < xn; i++)
        x[i] = (uint8_t)test_rng_next(&rng);
    memset(y, 0x7f, yn);
    FUZZ_REQUIRE(!wino_conv2d_run(op, x, y, ws, bytes), "INT8 run: %s", wino_last_error());
    if (algo == WINO_ALGO_DIRECT)
        wino_ref_int8_direct(d, &layer, x, want);
    else
        wino_ref_int8_winograd(d, &layer, x, want);
    for (size_t i = 0; i < yn; i++)
        FUZZ_REQUIRE(y[i] == want[i], "INT8 y[%zu] = %d, the specification says %d", i, y[i],
                     want[i]);
    wino_int8_layer_release(&layer);
    free(x), free(y), free(want), free(ws);
}

/* wino_conv2d_create_int8 (after wino_int8_calibrate when asked); a small layer that is
 * created is run. */
static void fuzz_int8(struct fuzz_case *c)
{
    const struct work t = work_of(&c->desc);
    if (!small_enough(&t))
        return; /* the weights and samples would not fit */
    const size_t wn = (size_t)t.w;
    float *w = malloc(sizeof(float) * wn); /* float, or int8 when params.w_scale > 0 */
    FUZZ_REQUIRE(w, "out of memory");
    struct test_rng rng = {c->seed ^ 0x5bd1e995u};
    const int int8_weights = c->params.w_scale > 0.0f;
    int finite = 1;
    if (int8_weights)
        for (size_t i = 0; i < wn; i++)
            ((int8_t *)w)[i] = (int8_t)((int)(test_rng_next(&rng) % 255) - 127);
    else
        finite = draw(w, wn, 0.3, &rng);
    if (c->calibrate && (int8_weights || !calibrate(c, w, &t))) {
        free(w);
        return;
    }
    const struct wino_conv2d_options *o = c->use_options ? &c->options : NULL;
    const struct wino_context *ctx = c->use_ctx ? &c->ctx : NULL;
    wino_conv2d *op = NULL;
    const enum wino_status st = wino_conv2d_create_int8(&c->desc, w, &c->params, ctx, o, &op);
    FUZZ_REQUIRE(st == WINO_SUCCESS || st == WINO_INVALID_ARGUMENT || st == WINO_UNSUPPORTED ||
                     st == WINO_OUT_OF_MEMORY,
                 "create_int8: status %d", (int)st);
    FUZZ_REQUIRE(!st == !!op && !st == !*wino_last_error(), "create_int8: status %d, error "
                 "\"%s\"", (int)st, wino_last_error());
    FUZZ_REQUIRE(finite || st, "create_int8 accepted non-finite weights");
    if (!st && (!ctx || ctx->threads <= RUN_MAX_THREADS))
        run_int8(c, op, w, &t);
    wino_conv2d_destroy(op);
    free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_input in = {data, size, 0};
    struct fuzz_case c;
    memset(&c, 0, sizeof c);
    decode(&in, &c);
    if (c.int8)
        fuzz_int8(&c);
    else
        fuzz_f32(&c);
    free(c.points);
    free(c.bias);
    free(c.alpha_tw_k);
    return 0;
}
