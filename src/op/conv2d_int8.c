/* wino_conv2d_create_int8: an operator running the INT8 Winograd engine, or on the CPU the INT8
 * direct convolution for the layers Winograd does not take or the tuning cache gives it;
 * wino_int8_auto_choice: what AUTO takes. */
#include <stdio.h>
#include <stdlib.h>

#include "op/conv2d_impl.h"
#include "base/error.h"
#include "base/threads.h"
#include "cpu/direct_s8.h"
#include "cpu/gemm_s8.h"
#include "op/int8_layer.h"
#include "op/tuning_cache.h"

/* The tile AUTO's rule takes for the Winograd shape. */
#define DEFAULT_TILE_M 4

/* A host copy of device weights (NULL when there is nothing to copy: the layer's checks then
 * refuse the arguments). */
static enum wino_status weights_to_host(const struct wino_conv2d_desc *desc, const void *weights,
                                        const struct wino_int8_params *params,
                                        const struct wino_context *ctx, void **host)
{
    struct wino_conv_sizes sizes;
    if (!desc || !weights || !params || wino_conv_desc_check(desc, &sizes))
        return WINO_SUCCESS;
    const size_t bytes = sizes.w_elems * (params->w_scale > 0 ? 1 : sizeof(float));
    if (!(*host = malloc(bytes)))
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_create_int8: out of memory");
    enum wino_status st = wino_cuda_copy_to_host(ctx, weights, bytes, *host);
    if (st) {
        free(*host);
        *host = NULL;
    }
    return st;
}

/* The CPU INT8 path: the engine of src/cpu/winograd_s8.h (one fused variant). */
static enum wino_status run_int8(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    wino_s8_engine_run(op->int8, &op->desc, op->sizes.p, op->sizes.q, io->in, io->out,
                       io->workspace);
    return WINO_SUCCESS;
}

static enum wino_status reshape_int8(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                     const struct wino_conv_sizes *sizes, size_t *bytes)
{
    (void)sizes;
    int overflow = 0;
    *bytes = wino_s8_engine_workspace_bytes(op->int8, d, &overflow);
    return overflow ? wino_reshape_overflow() : WINO_SUCCESS;
}

static enum wino_variant variant_int8(const wino_conv2d *op)
{
    (void)op;
    return WINO_VARIANT_FUSED;
}

static void release_int8(wino_conv2d *op)
{
    if (op->int8)
        wino_s8_engine_release(op->int8);
    free(op->int8);
}

static const struct wino_conv2d_path cpu_int8 = {run_int8, reshape_int8, variant_int8,
                                                 release_int8, NULL};

/* The CPU INT8 direct path: src/cpu/direct_s8.h, its engine in op->state. */
static enum wino_status run_direct(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    wino_s8_direct_run(op->state, &op->desc, op->sizes.p, op->sizes.q, io->in, io->out,
                       io->workspace);
    return WINO_SUCCESS;
}

static enum wino_status reshape_direct(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                       const struct wino_conv_sizes *sizes, size_t *bytes)
{
    (void)sizes;
    int overflow = 0;
    *bytes = wino_s8_direct_workspace_bytes(op->state, d, &overflow);
    return overflow ? wino_reshape_overflow() : WINO_SUCCESS;
}

static void release_direct(wino_conv2d *op)
{
    if (op->state)
        wino_s8_direct_release(op->state);
    free(op->state);
}

static const struct wino_conv2d_path cpu_int8_direct = {run_direct, reshape_direct,
                                                        wino_variant_none, release_direct, NULL};

static enum wino_status create_direct(const struct wino_conv2d_desc *desc, const void *weights,
                                      const struct wino_int8_params *params,
                                      const struct wino_context *ctx,
                                      const struct wino_conv2d_options *options,
                                      wino_conv2d **op)
{
    struct wino_int8_layer layer;
    enum wino_status st = wino_int8_direct_prepare(desc, weights, params,
                                                   options ? options->bias : NULL,
                                                   options ? options->relu : 0, &layer);
    if (st)
        return st;
    struct wino_conv2d *o = calloc(1, sizeof *o);
    struct wino_s8_direct *e = o ? calloc(1, sizeof *e) : NULL;
    if (!e) {
        free(o);
        wino_int8_layer_release(&layer);
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_create_int8: out of memory");
    }
    o->path = &cpu_int8_direct;
    o->state = e;
    o->desc = *desc;
    wino_conv_desc_check(desc, &o->sizes); /* checked by the layer preparation */
    o->algo = WINO_ALGO_DIRECT;
    st = wino_s8_direct_prepare(e, desc, &layer, wino_context_threads(ctx), wino_s8_isa(),
                                wino_cpu_isa());
    int overflow = 0;
    if (!st)
        o->workspace_bytes = wino_s8_direct_workspace_bytes(e, desc, &overflow);
    if (!st && overflow)
        st = wino_fail(WINO_INVALID_ARGUMENT, "INT8 direct workspace size overflows");
    if (st) {
        wino_conv2d_destroy(o);
        return st;
    }
    *op = o;
    return WINO_SUCCESS;
}

static enum wino_status create_on_cuda(const struct wino_conv2d_desc *desc,
                                       struct wino_int8_layer *layer,
                                       const struct wino_context *ctx, enum wino_variant variant,
                                       wino_conv2d **op)
{
    struct wino_conv2d *o = calloc(1, sizeof *o);
    enum wino_status st = WINO_OUT_OF_MEMORY;
    if (!o)
        wino_fail(st, "wino_conv2d_create_int8: out of memory");
    else {
        o->desc = *desc;
        wino_conv_desc_check(desc, &o->sizes);
        o->algo = WINO_ALGO_WINOGRAD;
        o->tile_m = layer->tile.m;
        o->backend = WINO_BACKEND_CUDA;
        o->stream = ctx->stream;
        o->path = &wino_path_cuda;
        st = wino_cuda_conv_create_int8(desc, &o->sizes, layer, ctx, variant, &o->cuda,
                                        &o->workspace_bytes);
    }
    wino_int8_layer_release(layer);
    if (st) {
        free(o);
        return st;
    }
    *op = o;
    return WINO_SUCCESS;
}

/* The INT8 Winograd operator of tile_m (CPU or CUDA as ctx says). */
static enum wino_status create_winograd(const struct wino_conv2d_desc *desc, const void *weights,
                                        const struct wino_int8_params *params,
                                        const struct wino_context *ctx,
                                        const struct wino_conv2d_options *options, int tile_m,
                                        wino_conv2d **op)
{
    const int cuda = ctx && ctx->backend == WINO_BACKEND_CUDA;
    const enum wino_variant variant = options ? options->variant : WINO_VARIANT_AUTO;
    enum wino_status st;
    if (options && options->matrices)
        return wino_fail(WINO_INVALID_ARGUMENT, "INT8 Winograd: the tiles are fixed (leave "
                                                "options.matrices NULL)");
    if (variant != WINO_VARIANT_AUTO && !cuda)
        return wino_fail(WINO_INVALID_ARGUMENT, "INT8 Winograd: the variant is fixed on the "
                                                "CPU (leave it 0)");
    if (variant == WINO_VARIANT_ROWS)
        return wino_fail(WINO_UNSUPPORTED, "INT8 Winograd on CUDA: no rows variant (fused, "
                                           "non-fused or fused-output)");
    if (variant != WINO_VARIANT_AUTO && variant != WINO_VARIANT_FUSED &&
        variant != WINO_VARIANT_NON_FUSED && variant != WINO_VARIANT_FUSED_OUTPUT)
        return wino_fail(WINO_INVALID_ARGUMENT, "INT8 Winograd: unknown variant %d", (int)variant);
    void *host_weights = NULL; /* the layer is prepared on the host from a copy */
    if (cuda && (st = weights_to_host(desc, weights, params, ctx, &host_weights)))
        return st;
    struct wino_int8_layer layer;
    st = wino_int8_layer_prepare(desc, tile_m, cuda ? host_weights : weights, params,
                                 options ? options->bias : NULL, options ? options->relu : 0,
                                 &layer);
    free(host_weights);
    if (st)
        return st;
    if (cuda)
        return create_on_cuda(desc, &layer, ctx, variant, op);
    struct wino_conv2d *o = calloc(1, sizeof *o);
    if (o)
        o->int8 = calloc(1, sizeof *o->int8);
    if (!o || !o->int8) {
        free(o);
        wino_int8_layer_release(&layer);
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_create_int8: out of memory");
    }
    o->path = &cpu_int8;
    o->desc = *desc;
    wino_conv_desc_check(desc, &o->sizes); /* checked by the layer preparation */
    o->algo = WINO_ALGO_WINOGRAD;
    const int threads = wino_context_threads(ctx);
    st = wino_s8_engine_prepare(o->int8, desc, &layer, threads, wino_s8_isa(), wino_cpu_isa());
    int overflow = 0;
    if (!st)
        o->workspace_bytes = wino_s8_engine_workspace_bytes(o->int8, desc, &overflow);
    if (!st && overflow)
        st = wino_fail(WINO_INVALID_ARGUMENT, "INT8 Winograd workspace size overflows");
    if (st) {
        wino_conv2d_destroy(o);
        return st;
    }
    *op = o;
    return WINO_SUCCESS;
}

/* The algorithm (as asked, or AUTO's: WINOGRAD or DIRECT) and the Winograd tile that create
 * runs for desc (not NULL) with ctx (checked) and options (NULL: the defaults); *cached is the
 * tuning cache's entry that AUTO followed, else its ms is -1. AUTO on the CPU follows the entry
 * of (wino_s8_isa(), threads, desc) in ctx->tuning_cache when the options leave every choice
 * to wino. Without one it decides by the shape alone, so that the caller knows what alpha_tw
 * clips: Winograd (options->tile_m, else DEFAULT_TILE_M) for 3 x 3 filters of stride 1 and
 * dilation 1, direct for every other one, as the FP32 path falls back. AUTO on CUDA is
 * Winograd (its variant timed at create). */
static void int8_plan(const struct wino_conv2d_desc *desc, const struct wino_context *ctx,
                      const struct wino_conv2d_options *options, enum wino_algo *algo,
                      int *tile_m, struct wino_tuning_choice *cached)
{
    const int cpu = !ctx || ctx->backend == WINO_BACKEND_CPU;
    *algo = options ? options->algo : WINO_ALGO_AUTO;
    *tile_m = options && options->tile_m ? options->tile_m : DEFAULT_TILE_M;
    cached->ms = -1.0;
    if (*algo != WINO_ALGO_AUTO)
        return;
    if (cpu && ctx && ctx->tuning_cache && (!options || wino_options_leave_choice(options)) &&
        wino_tuning_lookup(ctx->tuning_cache, (int)wino_s8_isa(), wino_context_threads(ctx),
                           desc, cached)) {
        *algo = cached->algo;
        *tile_m = cached->tile_m;
        return;
    }
    *algo = cpu && !wino_int8_winograd_shape(desc) ? WINO_ALGO_DIRECT : WINO_ALGO_WINOGRAD;
}

enum wino_status wino_int8_auto_choice(const struct wino_conv2d_desc *desc,
                                       const struct wino_context *ctx, enum wino_algo *algo,
                                       int *tile_m)
{
    wino_ok();
    if (!algo || !tile_m)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_int8_auto_choice: algo or tile_m is NULL");
    struct wino_conv2d_desc nominal;
    const struct wino_conv2d_desc *planned = wino_desc_for_planning(desc, &nominal);
    struct wino_conv_sizes sizes;
    enum wino_status st = wino_conv_desc_check(planned, &sizes);
    if (st || (st = wino_context_check(ctx)))
        return st;
    if (desc->dtype != WINO_DTYPE_S8 && desc->dtype != WINO_DTYPE_U8)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "wino_int8_auto_choice: desc->dtype must be WINO_DTYPE_S8 or U8");
    if (desc->layout != WINO_LAYOUT_NHWC)
        return wino_fail(WINO_UNSUPPORTED, "INT8 runs NHWC tensors only");
    if (ctx && ctx->backend == WINO_BACKEND_OPENCL)
        return wino_fail(WINO_UNSUPPORTED, "INT8 runs on the CPU and CUDA backends");
    if (ctx && ctx->backend == WINO_BACKEND_CUDA && !wino_int8_winograd_shape(desc))
        return wino_fail(WINO_UNSUPPORTED, "INT8 on CUDA: Winograd only, for 3x3 filters of "
                                           "stride 1 and dilation 1");
    struct wino_tuning_choice cached;
    int8_plan(planned, ctx, NULL, algo, tile_m, &cached);
    if (*algo == WINO_ALGO_DIRECT)
        *tile_m = 0;
    return wino_ok(); /* a stale cache entry skipped is no error of this call */
}

static enum wino_status create_int8_planned(const struct wino_conv2d_desc *desc,
                                            const void *weights,
                                            const struct wino_int8_params *params,
                                            const struct wino_context *ctx,
                                            const struct wino_conv2d_options *options,
                                            wino_conv2d **op)
{
    wino_ok();
    if (!op)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_create_int8: op is NULL");
    *op = NULL;
    if (!desc)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_create_int8: desc is NULL");
    enum wino_status st = wino_context_check(ctx);
    if (st)
        return st;
    if (ctx && ctx->backend == WINO_BACKEND_OPENCL)
        return wino_fail(WINO_UNSUPPORTED, "INT8 runs on the CPU and CUDA backends");
    if (options && (st = wino_conv2d_check_options(options)))
        return st;
    if (options && options->algo == WINO_ALGO_VENDOR)
        return wino_fail(WINO_UNSUPPORTED, "INT8: no vendor path (wino's INT8 specification is "
                                           "its own; the vendor's INT8 would round otherwise)");
    const int cuda = ctx && ctx->backend == WINO_BACKEND_CUDA;
    const enum wino_variant variant = options ? options->variant : WINO_VARIANT_AUTO;
    enum wino_algo algo;
    int tile_m;
    struct wino_tuning_choice cached;
    int8_plan(desc, ctx, options, &algo, &tile_m, &cached);
    if (algo == WINO_ALGO_DIRECT) {
        if (cuda)
            return wino_fail(WINO_UNSUPPORTED, "INT8 direct convolution runs on the CPU (CUDA: "
                                               "Winograd only)");
        if (variant != WINO_VARIANT_AUTO || (options && options->matrices))
            return wino_fail(WINO_INVALID_ARGUMENT, "INT8 direct: no variant or matrices (leave "
                                                    "them 0)");
        st = create_direct(desc, weights, params, ctx, options, op);
    } else
        st = create_winograd(desc, weights, params, ctx, options, tile_m, op);
    if (!st && cached.ms >= 0.0)
        snprintf((*op)->reason, sizeof (*op)->reason,
                 "AUTO: the tuning cache's choice for this layer (%.4f ms when tuned)", cached.ms);
    return st;
}

enum wino_status wino_conv2d_create_int8(const struct wino_conv2d_desc *desc, const void *weights,
                                         const struct wino_int8_params *params,
                                         const struct wino_context *ctx,
                                         const struct wino_conv2d_options *options,
                                         wino_conv2d **op)
{
    struct wino_conv2d_desc nominal;
    const struct wino_conv2d_desc *planned = wino_desc_for_planning(desc, &nominal);
    return wino_conv2d_shaped(create_int8_planned(planned, weights, params, ctx, options, op),
                              op, planned == &nominal);
}
