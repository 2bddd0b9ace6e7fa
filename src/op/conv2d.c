/* The convolution operator: create (validate, plan, prepare weights), workspace, run, destroy.
 * Paths: FP32 direct convolution as im2col + GEMM (any valid FP32 descriptor); the FP32 Winograd
 * engine with generated transforms (default tiles, recorded points); the portable scalar FP32
 * Winograd path for any other tile or point set (stride 1, dilation 1, square filters); INT8
 * Winograd (created in conv2d_int8.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "op/conv2d_impl.h"
#include "base/error.h"
#include "base/threads.h"
#include "op/tuning_cache.h"
#include "base/tile_check.h"
#include "base/tile_matrices.h"


/* Tiles of F(m x m, .) covering the output of the whole batch (P or Q may be near INT_MAX with
 * a large padding: rounded up without adding m - 1; the product with N fits, as y's size was
 * checked). */
static long tile_count(const struct wino_conv2d_desc *d, const struct wino_conv_sizes *s, int m)
{
    return (long)d->n * ((s->p - 1) / m + 1) * ((s->q - 1) / m + 1);
}

/* Relative time of Winograd with tile m: the alpha^2 GEMMs stream the transformed filters
 * (alpha^2 C K floats) once and do 2 C K flops per tile with each; while the filters stay in L2
 * only the flops count, beyond it the stream costs as much as about 8 tiles' flops (2 cores of
 * an AMD EPYC: GEMM at ~230 GFLOP/s against ~55 GB/s from the last-level cache; with it m = 4
 * wins ResNet-18 conv4_x at batch 1, 49 against 16 tiles, and m = 2 conv5_x, 16 against 4). */
static double winograd_cost(const struct wino_conv2d_desc *d, const struct wino_conv_sizes *s,
                            int m)
{
    const double a2 = (double)(m + d->r - 1) * (m + d->r - 1);
    const double filter_bytes = 4.0 * a2 * d->c * d->k;
    return a2 * ((double)tile_count(d, s, m) + (filter_bytes > (2 << 20) ? 8.0 : 0.0));
}

/* Output tile when the caller does not choose one (a tuning cache can do better): the cheaper of
 * m = 2 and m = 4 by winograd_cost for r <= 5, else m = 2. Larger tiles save flops but cost more
 * in transforms and edge waste; see docs/cpu-winograd.md. */
static int default_tile_m(const struct wino_conv2d_desc *d, const struct wino_conv_sizes *s)
{
    return d->r <= 5 && winograd_cost(d, s, 4) < winograd_cost(d, s, 2) ? 4 : 2;
}

const char *wino_winograd_refusal(const struct wino_conv2d_desc *d, int tile_m)
{
    if (d->stride_h != 1 || d->stride_w != 1)
        return "Winograd needs stride 1";
    if (d->dilation_h != 1 || d->dilation_w != 1)
        return "Winograd needs dilation 1";
    if (d->r != d->s)
        return "Winograd needs a square filter (R == S)";
    if (tile_m + d->r - 1 > WINO_MAX_ALPHA)
        return "tile too large: m + r - 1 exceeds WINO_MAX_ALPHA";
    return NULL;
}

/* ---- the CPU FP32 forward paths ---- */

static enum wino_status run_direct(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    const struct wino_epilogue ep = {op->bias, op->relu};
    wino_f32_direct_run(&op->direct, &op->desc, op->sizes.p, op->sizes.q, io->in, &ep, io->out,
                        io->workspace);
    return WINO_SUCCESS;
}

static enum wino_status reshape_direct(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                       const struct wino_conv_sizes *sizes, size_t *bytes)
{
    (void)sizes;
    struct wino_f32_direct shaped = op->direct; /* only blocks and workspace sizes change */
    if (wino_f32_direct_shape(&shaped, d))
        return wino_reshape_overflow();
    op->direct = shaped;
    *bytes = shaped.workspace_bytes;
    return WINO_SUCCESS;
}

static void release_direct(wino_conv2d *op)
{
    wino_f32_direct_release(&op->direct);
}

/* New weights: packed again, and shaped as at create (the blocks depend on the sizes). */
static enum wino_status set_weights_direct(wino_conv2d *op, const void *weights, void *stream)
{
    (void)stream;
    struct wino_f32_direct fresh;
    enum wino_status st = wino_f32_direct_prepare(&fresh, &op->desc, weights, op->direct.threads);
    if (!st && wino_f32_direct_shape(&fresh, &op->desc))
        st = WINO_INVALID_ARGUMENT;
    if (st) {
        wino_f32_direct_release(&fresh);
        return wino_fail(st, "wino_conv2d_set_weights: %s",
                         st == WINO_OUT_OF_MEMORY ? "out of memory" : "a size overflows");
    }
    wino_f32_direct_release(&op->direct);
    op->direct = fresh;
    return WINO_SUCCESS;
}

static const struct wino_conv2d_path cpu_direct = {run_direct, reshape_direct, wino_variant_none,
                                                   release_direct, set_weights_direct};

static enum wino_status run_winograd(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    const struct wino_epilogue ep = {op->bias, op->relu};
    wino_f32_engine_run(&op->engine, &op->desc, op->sizes.p, op->sizes.q, io->in, &ep, io->out,
                        io->workspace);
    return WINO_SUCCESS;
}

static enum wino_status reshape_winograd(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                         const struct wino_conv_sizes *sizes, size_t *bytes)
{
    int overflow = 0;
    *bytes = wino_f32_engine_workspace_bytes(&op->engine, d, sizes->p, sizes->q, &overflow);
    return overflow ? wino_reshape_overflow() : WINO_SUCCESS;
}

static enum wino_variant variant_winograd(const wino_conv2d *op)
{
    return op->engine.fused ? WINO_VARIANT_FUSED : WINO_VARIANT_NON_FUSED;
}

static void release_winograd(wino_conv2d *op)
{
    wino_f32_engine_release(&op->engine);
}

/* the engine of generated transforms (default tiles, recorded points), fused or not */
/* New weights: transformed again with the same tile, variant and threads (the workspace size
 * depends on those alone). */
static enum wino_status set_weights_winograd(wino_conv2d *op, const void *weights, void *stream)
{
    (void)stream;
    const struct wino_f32_engine *e = &op->engine;
    struct wino_f32_engine fresh;
    if (wino_f32_engine_prepare(&fresh, &op->desc, weights, e->m, e->fused, e->threads))
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_set_weights: out of memory");
    wino_f32_engine_release(&op->engine);
    op->engine = fresh;
    return WINO_SUCCESS;
}

static const struct wino_conv2d_path cpu_winograd = {run_winograd, reshape_winograd,
                                                     variant_winograd, release_winograd,
                                                     set_weights_winograd};

static enum wino_status run_scalar(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    const struct wino_epilogue ep = {op->bias, op->relu};
    wino_f32_winograd_run(&op->winograd, &op->desc, op->sizes.p, op->sizes.q, io->in, &ep,
                          io->out, io->workspace);
    return WINO_SUCCESS;
}

static enum wino_status reshape_scalar(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                       const struct wino_conv_sizes *sizes, size_t *bytes)
{
    (void)sizes;
    const size_t floats = wino_f32_winograd_workspace_floats(&op->winograd, d);
    if (floats > SIZE_MAX / sizeof(float))
        return wino_reshape_overflow();
    *bytes = sizeof(float) * floats;
    return WINO_SUCCESS;
}

static void release_scalar(wino_conv2d *op)
{
    wino_f32_winograd_release(&op->winograd);
}

/* the portable scalar Winograd path: any other tile, and caller tiles */
static const struct wino_conv2d_path cpu_winograd_scalar = {run_scalar, reshape_scalar,
                                                            wino_variant_none, release_scalar,
                                                            NULL};

enum wino_status wino_conv2d_check_create(const struct wino_conv2d_desc *desc,
                                          const struct wino_conv2d_options *options,
                                          const struct wino_conv2d_options **o,
                                          struct wino_conv_sizes *sizes)
{
    static const struct wino_conv2d_options defaults;
    *o = options ? options : &defaults;
    const enum wino_status st = wino_conv_desc_check(desc, sizes);
    return st ? st : wino_conv2d_check_options(*o);
}

enum wino_status wino_conv2d_check_options(const struct wino_conv2d_options *o)
{
    if (o->algo != WINO_ALGO_AUTO && o->algo != WINO_ALGO_DIRECT &&
        o->algo != WINO_ALGO_WINOGRAD && o->algo != WINO_ALGO_VENDOR)
        return wino_fail(WINO_INVALID_ARGUMENT, "unknown algorithm %d", (int)o->algo);
    if (o->tile_m < 0 || o->tile_m > WINO_MAX_ALPHA)
        return wino_fail(WINO_INVALID_ARGUMENT, "tile_m = %d outside [0, %d]", o->tile_m,
                         WINO_MAX_ALPHA);
    if (o->variant != WINO_VARIANT_AUTO && o->variant != WINO_VARIANT_FUSED &&
        o->variant != WINO_VARIANT_NON_FUSED && o->variant != WINO_VARIANT_FUSED_OUTPUT &&
        o->variant != WINO_VARIANT_ROWS)
        return wino_fail(WINO_INVALID_ARGUMENT, "unknown Winograd variant %d", (int)o->variant);
    if (o->points)
        return wino_fail(WINO_UNSUPPORTED,
                         "options.points is deprecated: the runtime holds no exact generator "
                         "since 0.2; build the tile with wino_tile_create and "
                         "wino_tile_matrices_get (libwino_gen) and pass it as options.matrices");
    if ((o->algo == WINO_ALGO_DIRECT || o->algo == WINO_ALGO_VENDOR) &&
        (o->tile_m || o->matrices || o->variant))
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "tile_m, matrices and variant apply to Winograd only");
    if (o->relu != 0 && o->relu != 1)
        return wino_fail(WINO_INVALID_ARGUMENT, "relu = %d must be 0 or 1", o->relu);
    if (o->tf32 != 0 && o->tf32 != 1)
        return wino_fail(WINO_INVALID_ARGUMENT, "tf32 = %d must be 0 or 1", o->tf32);
    if (o->accumulate)
        return wino_fail(WINO_INVALID_ARGUMENT, "accumulate applies to backward-filter only");
    return WINO_SUCCESS;
}

/* The CPU FP32 forward plan: what can_implement answers and create builds (wino_tune times
 * candidates through create; a reshape keeps all but the sizes). */
struct cpu_plan {
    struct wino_conv_sizes sizes;
    enum wino_algo algo;
    int tile_m;                                /* Winograd's tile, 0 for direct */
    const struct wino_conv2d_path *path;       /* the path that computes it */
    enum wino_variant variant;                 /* the engine's FUSED or NON_FUSED; else AUTO */
    const struct wino_tile_matrices *matrices; /* the scalar path's tile */
};

/* Validates desc and options for the CPU FP32 forward convolution and plans it for threads. */
static enum wino_status plan(const struct wino_conv2d_desc *desc,
                             const struct wino_conv2d_options *options, int threads,
                             struct cpu_plan *pl)
{
    static const struct wino_conv2d_options defaults;
    const struct wino_conv2d_options *o = options ? options : &defaults;
    memset(pl, 0, sizeof *pl);
    enum wino_status st = wino_conv_desc_check(desc, &pl->sizes);
    if (!st)
        st = wino_conv2d_check_options(o);
    if (st)
        return st;
    if (desc->dtype != WINO_DTYPE_F32)
        return wino_fail(WINO_UNSUPPORTED, "the CPU's forward convolution is FP32 (FP16 and BF16 "
                                           "run on the CUDA backend)");
    if (o->variant == WINO_VARIANT_FUSED_OUTPUT || o->variant == WINO_VARIANT_ROWS)
        return wino_fail(WINO_UNSUPPORTED, "the fused-output and ROWS variants are the CUDA "
                                           "backend's");
    if (o->algo == WINO_ALGO_VENDOR)
        return wino_fail(WINO_UNSUPPORTED, "WINO_ALGO_VENDOR runs on the CUDA backend");
    if (o->matrices) { /* the rule of wino_conv2d_options.matrices */
        st = wino_tile_matrices_check(o->matrices);
        if (st)
            return st;
        if (o->matrices->r != desc->r || (o->tile_m && o->tile_m != o->matrices->m))
            return wino_fail(WINO_INVALID_ARGUMENT,
                             "options.matrices is F(%d, %d), the layer needs r = %d%s",
                             o->matrices->m, o->matrices->r, desc->r,
                             o->tile_m ? " and m = tile_m" : "");
    }
    const int tile_m = o->matrices ? o->matrices->m
                       : o->tile_m ? o->tile_m
                                   : default_tile_m(desc, &pl->sizes);
    const char *why = wino_winograd_refusal(desc, tile_m);
    if (o->algo == WINO_ALGO_WINOGRAD && why)
        return wino_fail(WINO_UNSUPPORTED, "%s", why);
    pl->algo = o->algo;
    if (o->algo == WINO_ALGO_AUTO) /* Winograd saves nothing for 1-tap filters */
        pl->algo = (!why && desc->r > 1) ? WINO_ALGO_WINOGRAD : WINO_ALGO_DIRECT;
    pl->path = &cpu_direct;
    pl->variant = WINO_VARIANT_AUTO;
    if (pl->algo != WINO_ALGO_WINOGRAD)
        return WINO_SUCCESS;
    pl->tile_m = tile_m;
    if (!o->matrices && wino_f32_engine_has_tile(tile_m, desc->r)) {
        pl->path = &cpu_winograd;
        const long tiles = tile_count(desc, &pl->sizes, tile_m);
        pl->variant = o->variant != WINO_VARIANT_AUTO ? o->variant
                      : wino_f32_engine_prefers_fused(tile_m, desc->r, desc, tiles, threads)
                          ? WINO_VARIANT_FUSED
                          : WINO_VARIANT_NON_FUSED;
    } else {
        pl->path = &cpu_winograd_scalar;
        pl->matrices = o->matrices ? o->matrices : wino_recorded_tile(tile_m, desc->r);
    }
    return WINO_SUCCESS;
}

/* The nominal extent of one image axis: 56, or the dilated filter's extent when larger. Any
 * dilation and taps (the descriptor is not checked yet): the arithmetic in long. */
static int nominal_extent(int dilation, int taps)
{
    const long extent = (long)dilation * ((long)taps - 1) + 1;
    return dilation >= 1 && taps >= 1 && extent > 56 && extent <= 0x7fffffff ? (int)extent : 56;
}

const struct wino_conv2d_desc *wino_desc_for_planning(const struct wino_conv2d_desc *desc,
                                                      struct wino_conv2d_desc *nominal)
{
    if (!desc || desc->n || desc->h || desc->w)
        return desc;
    *nominal = *desc;
    nominal->n = 1;
    nominal->h = nominal_extent(desc->dilation_h, desc->r);
    nominal->w = nominal_extent(desc->dilation_w, desc->s);
    return nominal;
}

enum wino_status wino_conv2d_shaped(enum wino_status st, wino_conv2d **op, int unshaped)
{
    if (!st && unshaped) {
        (*op)->unshaped = 1;
        (*op)->workspace_bytes = 0;
    }
    return st;
}

enum wino_status wino_conv2d_can_implement(const struct wino_conv2d_desc *desc,
                                           const struct wino_conv2d_options *options)
{
    wino_ok();
    struct wino_conv2d_desc nominal;
    desc = wino_desc_for_planning(desc, &nominal);
    struct cpu_plan pl;
    return plan(desc, options, 1, &pl);
}

/* Prepares the planned path's state: the filters transformed or packed once. */
static enum wino_status prepare(wino_conv2d *o, const struct cpu_plan *pl,
                                const struct wino_conv2d_desc *desc, const void *weights,
                                int threads)
{
    if (pl->path == &cpu_winograd)
        return wino_f32_engine_prepare(&o->engine, desc, weights, pl->tile_m,
                                       pl->variant == WINO_VARIANT_FUSED, threads);
    if (pl->path == &cpu_winograd_scalar)
        return wino_f32_winograd_prepare(&o->winograd, pl->matrices, desc, weights);
    const enum wino_status st = wino_f32_direct_prepare(&o->direct, desc, weights, threads);
    return st == WINO_INVALID_ARGUMENT ? wino_fail(st, "direct convolution: C x R x S too large")
                                       : st;
}

static enum wino_status create_planned(const struct wino_conv2d_desc *desc, const void *weights,
                                       const struct wino_context *ctx,
                                       const struct wino_conv2d_options *options, wino_conv2d **op)
{
    wino_ok();
    if (!op)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_create: op is NULL");
    *op = NULL;
    if (!weights)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_create: weights is NULL");
    enum wino_status st = wino_context_check(ctx);
    if (st)
        return st;
    if (ctx && ctx->backend == WINO_BACKEND_CUDA)
        return wino_conv2d_create_cuda(desc, weights, ctx, options, op);
    if (ctx && ctx->backend == WINO_BACKEND_OPENCL)
        return wino_conv2d_create_opencl(desc, weights, ctx, options, op);
    const int threads = wino_context_threads(ctx);
    struct wino_conv2d_options tuned;
    const struct wino_conv2d_options *requested = options;
    if (ctx && ctx->tuning_cache && desc &&
        (!options || (options->algo == WINO_ALGO_AUTO && !options->tile_m && !options->points &&
                      !options->matrices && options->variant == WINO_VARIANT_AUTO))) {
        struct wino_tuning_choice c;
        if (wino_tuning_lookup(ctx->tuning_cache, (int)wino_cpu_isa(), threads, desc, &c)) {
            const struct wino_conv2d_options none = {.algo = WINO_ALGO_AUTO};
            tuned = options ? *options : none;
            tuned.algo = c.algo;
            tuned.tile_m = c.tile_m;
            tuned.variant = c.variant;
            options = &tuned;
        }
    }
    struct cpu_plan pl;
    st = plan(desc, options, threads, &pl);
    if (st && options != requested) { /* a cache entry this build cannot follow is ignored */
        options = requested;
        st = plan(desc, options, threads, &pl);
    }
    if (st)
        return st;
    struct wino_conv2d *o = calloc(1, sizeof *o);
    if (!o)
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_create: out of memory");
    o->path = pl.path;
    o->desc = *desc;
    o->sizes = pl.sizes;
    o->algo = pl.algo;
    o->tile_m = pl.tile_m;
    o->relu = options ? options->relu : 0;
    if (options && options->bias) {
        if ((o->bias = malloc(sizeof(float) * (size_t)desc->k)))
            memcpy(o->bias, options->bias, sizeof(float) * (size_t)desc->k);
        else
            st = WINO_OUT_OF_MEMORY;
    }
    if (!st)
        st = prepare(o, &pl, desc, weights, threads);
    if (!st) /* the workspace, as every reshape sizes it */
        st = o->path->reshape(o, desc, &o->sizes, &o->workspace_bytes);
    if (st) {
        wino_conv2d_destroy(o);
        return st == WINO_OUT_OF_MEMORY ? wino_fail(st, "wino_conv2d_create: out of memory") : st;
    }
    *op = o;
    return WINO_SUCCESS;
}

enum wino_status wino_conv2d_create(const struct wino_conv2d_desc *desc, const void *weights,
                                    const struct wino_context *ctx,
                                    const struct wino_conv2d_options *options, wino_conv2d **op)
{
    struct wino_conv2d_desc nominal;
    const struct wino_conv2d_desc *planned = wino_desc_for_planning(desc, &nominal);
    return wino_conv2d_shaped(create_planned(planned, weights, ctx, options, op),
                              op, planned == &nominal);
}

enum wino_status wino_conv2d_workspace_size(const wino_conv2d *op, size_t *bytes)
{
    wino_ok();
    if (!op || !bytes)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_workspace_size: NULL argument");
    *bytes = op->workspace_bytes;
    return WINO_SUCCESS;
}

enum wino_status wino_conv2d_algo(const wino_conv2d *op, enum wino_algo *algo, int *tile_m)
{
    wino_ok();
    if (!op || !algo || !tile_m)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_algo: NULL argument");
    *algo = op->algo;
    *tile_m = op->int8 ? op->int8->layer.tile.m : op->tile_m;
    return WINO_SUCCESS;
}

const char *wino_conv2d_reason(const wino_conv2d *op)
{
    if (!op)
        return "";
    return op->reason[0] ? op->reason : "as the options asked, or AUTO's rule for the layer";
}

enum wino_status wino_conv2d_check_workspace(const wino_conv2d *op, const void *workspace,
                                             size_t workspace_bytes)
{
    if (!op->workspace_bytes)
        return WINO_SUCCESS;
    if (!workspace || workspace_bytes < op->workspace_bytes)
        return wino_fail(WINO_INSUFFICIENT_WORKSPACE, "workspace of %zu bytes, %zu needed",
                         workspace ? workspace_bytes : 0, op->workspace_bytes);
    /* an OpenCL workspace is a cl_mem handle, not an address (the device aligns buffers) */
    if (op->backend != WINO_BACKEND_OPENCL && (uintptr_t)workspace % 64)
        return wino_fail(WINO_INSUFFICIENT_WORKSPACE, "workspace is not 64-byte aligned");
    return WINO_SUCCESS;
}

enum wino_status wino_conv2d_run(const wino_conv2d *op, const void *x, void *y, void *workspace,
                                 size_t workspace_bytes)
{
    return wino_conv2d_run_stream(op, x, y, workspace, workspace_bytes, op ? op->stream : NULL);
}

enum wino_status wino_conv2d_run_stream(const wino_conv2d *op, const void *x, void *y,
                                        void *workspace, size_t workspace_bytes, void *stream)
{
    wino_ok();
    if (!op || !x || !y)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_run: op, x or y is NULL");
    if (op->backend == WINO_BACKEND_CPU && stream)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "wino_conv2d_run_stream: a CPU operator takes stream NULL only");
    if (op->backend == WINO_BACKEND_OPENCL && !stream)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_run_stream: an OpenCL operator "
                                                "needs a command queue");
    if (op->kind == WINO_CONV2D_BACKWARD_FILTER)
        return wino_fail(WINO_INVALID_ARGUMENT, "a backward-filter operator runs with "
                                                "wino_conv2d_backward_filter_run");
    if (op->unshaped)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_run: the operator was created "
                                                "without sizes: reshape it first");
    const enum wino_status st = wino_conv2d_check_workspace(op, workspace, workspace_bytes);
    if (st)
        return st;
    const struct wino_conv2d_io io = {.in = x, .out = y, .workspace = workspace,
                                      .workspace_bytes = workspace_bytes, .stream = stream};
    return op->path->run(op, &io);
}

enum wino_status wino_conv2d_set_weights(wino_conv2d *op, const void *weights, void *stream)
{
    wino_ok();
    if (!op || !weights)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_set_weights: op or weights is NULL");
    if (op->backend == WINO_BACKEND_CPU && stream)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "wino_conv2d_set_weights: a CPU operator takes stream NULL only");
    if (op->kind == WINO_CONV2D_BACKWARD_FILTER)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_set_weights: a backward-filter "
                                                "operator holds no weights");
    if (!op->path->set_weights)
        return wino_fail(WINO_UNSUPPORTED, "wino_conv2d_set_weights: INT8 operators and "
                                           "Winograd with caller matrices take their weights "
                                           "at create only");
    return op->path->set_weights(op, weights, stream);
}

enum wino_status wino_reshape_overflow(void)
{
    return wino_fail(WINO_INVALID_ARGUMENT, "the workspace size overflows for these sizes");
}

enum wino_status wino_conv2d_reshape(wino_conv2d *op, int n, int h, int w,
                                     size_t *workspace_bytes)
{
    wino_ok();
    if (!op)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_reshape: op is NULL");
    struct wino_conv2d_desc d = op->desc;
    d.n = n, d.h = h, d.w = w;
    struct wino_conv_sizes sizes;
    size_t bytes = 0;
    enum wino_status st = wino_conv_desc_check(&d, &sizes);
    if (!st)
        st = op->path->reshape(op, &d, &sizes, &bytes);
    if (st)
        return st;
    op->desc = d;
    op->sizes = sizes;
    op->workspace_bytes = bytes;
    op->unshaped = 0;
    if (workspace_bytes)
        *workspace_bytes = bytes;
    return WINO_SUCCESS;
}

enum wino_status wino_conv2d_variant(const wino_conv2d *op, enum wino_variant *variant)
{
    wino_ok();
    if (!op || !variant)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_variant: NULL argument");
    *variant = op->path->variant(op);
    return WINO_SUCCESS;
}

enum wino_variant wino_variant_none(const wino_conv2d *op)
{
    (void)op;
    return WINO_VARIANT_AUTO;
}

void wino_conv2d_destroy(wino_conv2d *op)
{
    if (!op)
        return;
    free(op->bias);
    if (op->path)
        op->path->release(op);
    free(op);
}
