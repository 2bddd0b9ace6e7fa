/* wino_conv2d_create_int8: an operator running the INT8 Winograd engine. */
#include <stdlib.h>

#include <omp.h>

#include "core/conv2d_impl.h"
#include "core/error.h"

enum wino_status wino_conv2d_create_int8(const struct wino_conv2d_desc *desc, const void *weights,
                                         const struct wino_int8_params *params,
                                         const struct wino_context *ctx,
                                         const struct wino_conv2d_options *options,
                                         wino_conv2d **op)
{
    wino_ok();
    if (!op)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_create_int8: op is NULL");
    *op = NULL;
    if (ctx && ctx->threads < 0)
        return wino_fail(WINO_INVALID_ARGUMENT, "context threads = %d must be >= 0",
                         ctx->threads);
    if (options && (options->algo != WINO_ALGO_AUTO && options->algo != WINO_ALGO_WINOGRAD))
        return wino_fail(WINO_INVALID_ARGUMENT, "INT8: only the Winograd algorithm is built");
    if (options && (options->points || options->variant != WINO_VARIANT_AUTO))
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "INT8 Winograd: points and variant are fixed (leave them 0)");
    if (options && options->relu != 0 && options->relu != 1)
        return wino_fail(WINO_INVALID_ARGUMENT, "relu = %d must be 0 or 1", options->relu);
    const int tile_m = options && options->tile_m ? options->tile_m : 4;
    struct wino_int8_layer layer;
    enum wino_status st =
        wino_int8_layer_prepare(desc, tile_m, weights, params, options ? options->bias : NULL,
                                options ? options->relu : 0, &layer);
    if (st)
        return st;
    struct wino_conv2d *o = calloc(1, sizeof *o);
    if (o)
        o->int8 = calloc(1, sizeof *o->int8);
    if (!o || !o->int8) {
        free(o);
        wino_int8_layer_release(&layer);
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_create_int8: out of memory");
    }
    o->desc = *desc;
    wino_conv_desc_check(desc, &o->sizes); /* checked by the layer preparation */
    o->algo = WINO_ALGO_WINOGRAD;
    const int threads = ctx && ctx->threads ? ctx->threads : omp_get_num_procs();
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
