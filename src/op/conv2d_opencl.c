/* wino_conv2d_create on the OpenCL backend: what it accepts before the component
 * (src/opencl/conv2d_opencl.c) checks the context and builds the layer's kernels, and the
 * tuning database entry it hands the component; the tuner's front (src/op/opencl_tuning.h). */
#include <stdlib.h>

#include "base/error.h"
#include "cpu/winograd_f32.h"
#include "op/conv2d_impl.h"
#include "op/opencl_loader.h"
#include "op/opencl_tuning.h"
#include "op/tuning_cache.h"

/* The component's operator lives in op->state; the component is loaded once it exists. */
static enum wino_status run_opencl(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    return wino_opencl_component()->run(op->state, io->in, io->out, io->workspace,
                                        io->workspace_bytes, io->stream);
}

static enum wino_status reshape_opencl(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                       const struct wino_conv_sizes *sizes, size_t *bytes)
{
    return wino_opencl_component()->reshape(op->state, d, sizes, bytes);
}

static enum wino_variant variant_opencl(const wino_conv2d *op)
{
    return wino_opencl_component()->variant(op->state);
}

static void release_opencl(wino_conv2d *op)
{
    if (op->state)
        wino_opencl_component()->destroy(op->state);
}

/* stream NULL: the context's queue, as wino_conv2d_run takes */
static enum wino_status set_weights_opencl(wino_conv2d *op, const void *weights, void *stream)
{
    return wino_opencl_component()->set_weights(op->state, weights, stream ? stream : op->stream);
}

static const struct wino_conv2d_path opencl_path = {run_opencl, reshape_opencl, variant_opencl,
                                                    release_opencl, set_weights_opencl};

/* Why the OpenCL kernels cannot serve desc with F(tile_m, r) and options o, or NULL. */
static const char *opencl_refusal(const struct wino_conv2d_desc *desc,
                                  const struct wino_conv2d_options *o, int tile_m)
{
    if (o->algo == WINO_ALGO_DIRECT || o->algo == WINO_ALGO_VENDOR)
        return "OpenCL: Winograd only (WINO_ALGO_WINOGRAD or AUTO)";
    if (desc->dtype != WINO_DTYPE_F32 && desc->dtype != WINO_DTYPE_F16)
        return "OpenCL: FP32 and FP16 only";
    if (o->tf32)
        return "tf32 is the CUDA backend's";
    if (o->variant == WINO_VARIANT_FUSED_OUTPUT || o->variant == WINO_VARIANT_ROWS)
        return "the fused-output and ROWS variants are the CUDA backend's";
    if (o->matrices)
        return "OpenCL: Winograd runs the generated tiles only (options.matrices NULL)";
    const char *why = wino_winograd_refusal(desc, tile_m);
    if (why)
        return why;
    if (!wino_f32_engine_has_tile(tile_m, desc->r))
        return "OpenCL: Winograd runs the default tiles (r 2..7, m 2..8, m + r - 1 <= 10)";
    return NULL;
}

enum wino_status wino_conv2d_create_opencl(const struct wino_conv2d_desc *desc,
                                           const void *weights, const struct wino_context *ctx,
                                           const struct wino_conv2d_options *options,
                                           wino_conv2d **op)
{
    const struct wino_conv2d_options *o;
    struct wino_conv_sizes sizes;
    enum wino_status st = wino_conv2d_check_create(desc, options, &o, &sizes);
    if (st)
        return st;
    int tile_m = o->tile_m ? o->tile_m : wino_gpu_default_tile_m(desc);
    const char *why = opencl_refusal(desc, o, tile_m);
    if (why)
        return wino_fail(WINO_UNSUPPORTED, "%s", why);
    const struct wino_opencl_ops *component = wino_opencl_component();
    if (!component)
        return WINO_UNSUPPORTED;
    /* the parameters measured for this layer on this device and driver, if any; AUTO's tile
     * (none asked) is the fastest one measured */
    struct wino_opencl_tuned tuned;
    char device[400];
    int found = 0;
    if (ctx->tuning_cache) {
        if ((st = component->device_key(ctx, device, sizeof device)))
            return st;
        found = o->tile_m
                    ? wino_opencl_tuning_lookup(ctx->tuning_cache, device, desc, tile_m, &tuned)
                    : wino_opencl_tuning_fastest(ctx->tuning_cache, device, desc, &tile_m,
                                                 &tuned);
    }
    struct wino_conv2d *c = wino_gpu_winograd_new(desc, &sizes, tile_m, ctx, &opencl_path);
    if (!c)
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_create: out of memory");
    struct wino_opencl_conv *conv = NULL;
    st = component->create(desc, &sizes, weights, ctx, tile_m, o->variant, o->bias, o->relu,
                           found ? &tuned : NULL, &conv, &c->workspace_bytes);
    if (st) {
        free(c);
        return st;
    }
    c->state = conv;
    *op = c;
    return WINO_SUCCESS;
}

/* component's search of desc with tile_m within search, stored in ctx's database. */
static enum wino_status tune_tile(const struct wino_opencl_ops *component,
                                  const struct wino_conv2d_desc *desc,
                                  const struct wino_context *ctx, const char *device, int tile_m,
                                  const struct wino_opencl_search *search,
                                  struct wino_opencl_tuning *result)
{
    const enum wino_status st = component->tune(desc, ctx, tile_m, search, result);
    return st || !ctx->tuning_cache
               ? st
               : wino_opencl_tuning_store(ctx->tuning_cache, device, desc, tile_m, &result->best);
}

static double tuning_ms(const struct wino_opencl_tuning *t)
{
    return wino_opencl_tuned_ms(&t->best);
}

/* The tile search of wino_opencl_tune (tile_m 0): each tile's defaults (the tile decides more
 * than the parameters: it sets the multiply count and the transforms' cost), then the rest of
 * the budget on the fastest tile's parameters; *result the fastest of the entries stored. */
static enum wino_status tune_tiles(const struct wino_opencl_ops *component,
                                   const struct wino_conv2d_desc *desc,
                                   const struct wino_context *ctx, const char *device,
                                   const struct wino_opencl_search *search,
                                   struct wino_opencl_tuning *result)
{
    const struct wino_conv2d_options none = {.algo = WINO_ALGO_WINOGRAD};
    const struct wino_opencl_search defaults = {0.0, 1, search->reps}; /* no candidate after */
    struct wino_opencl_tuning tiles[WINO_OPENCL_TUNE_MAX_M + 1];
    int count = 0, fastest = -1;
    double seconds = 0.0, default_ms = -1.0;
    for (int m = WINO_TUNE_MIN_M; m <= WINO_OPENCL_TUNE_MAX_M; m++) {
        if (opencl_refusal(desc, &none, m))
            continue;
        struct wino_opencl_tuning *t = &tiles[count];
        const enum wino_status st = tune_tile(component, desc, ctx, device, m, &defaults, t);
        /* another tile's kernels failing on the device leave that tile out, AUTO's own not */
        if (st && (st != WINO_DEVICE_ERROR || m == wino_gpu_default_tile_m(desc)))
            return st;
        if (st)
            continue;
        seconds += t->seconds;
        if (m == wino_gpu_default_tile_m(desc))
            default_ms = t->default_ms;
        if (fastest < 0 || tuning_ms(t) < tuning_ms(&tiles[fastest]))
            fastest = count;
        count++;
    }
    struct wino_opencl_search rest = *search;
    rest.budget_s = search->budget_s > 0.0 ? search->budget_s - seconds : 0.0;
    if (search->budget_s <= 0.0 || rest.budget_s > 0.0) {
        struct wino_opencl_tuning *t = &tiles[fastest];
        const enum wino_status st = tune_tile(component, desc, ctx, device, t->tile_m, &rest, t);
        if (st)
            return st;
        seconds += t->seconds;
        for (int i = 0; i < count; i++) /* its defaults timed again: noise may reorder */
            if (tuning_ms(&tiles[i]) < tuning_ms(&tiles[fastest]))
                fastest = i;
    }
    *result = tiles[fastest];
    result->tiles = count;
    result->default_ms = default_ms;
    result->seconds = seconds;
    return wino_ok(); /* tiles left out leave no error behind */
}

enum wino_status wino_opencl_tune(const struct wino_conv2d_desc *desc,
                                  const struct wino_context *ctx, int tile_m,
                                  const struct wino_opencl_search *search,
                                  struct wino_opencl_tuning *result)
{
    wino_ok();
    struct wino_conv_sizes sizes;
    enum wino_status st = wino_conv_desc_check(desc, &sizes);
    if (st)
        return st;
    if (!ctx || ctx->backend != WINO_BACKEND_OPENCL || !search || search->reps < 1 || !result)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_opencl_tune: an OpenCL context, a search "
                         "with reps >= 1 and a result are required");
    if (desc->dtype != WINO_DTYPE_F32 && desc->dtype != WINO_DTYPE_F16)
        return wino_fail(WINO_UNSUPPORTED, "wino_opencl_tune: FP32 and FP16 only");
    const struct wino_conv2d_options none = {.algo = WINO_ALGO_WINOGRAD};
    const char *why = opencl_refusal(desc, &none, tile_m ? tile_m : wino_gpu_default_tile_m(desc));
    if (why)
        return wino_fail(WINO_UNSUPPORTED, "%s", why);
    const struct wino_opencl_ops *component = wino_opencl_component();
    if (!component)
        return WINO_UNSUPPORTED;
    char device[400];
    if ((st = wino_context_check(ctx)) ||
        (st = component->device_key(ctx, device, sizeof device)))
        return st;
    return tile_m ? tune_tile(component, desc, ctx, device, tile_m, search, result)
                  : tune_tiles(component, desc, ctx, device, search, result);
}

enum wino_status wino_conv2d_opencl_params(const wino_conv2d *op,
                                           struct wino_opencl_params *params, int *tuned)
{
    if (!op || op->path != &opencl_path || !params || !tuned)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_opencl_params: not an OpenCL "
                                                "forward operator");
    wino_opencl_component()->params(op->state, params, tuned);
    return WINO_SUCCESS;
}
