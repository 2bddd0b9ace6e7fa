/* wino_conv2d_create on the OpenCL backend: what it accepts before the component
 * (src/opencl/conv2d_opencl.c) checks the context and builds the layer's kernels. */
#include <stdlib.h>

#include "base/error.h"
#include "cpu/winograd_f32.h"
#include "op/conv2d_impl.h"
#include "op/opencl_loader.h"

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

static const struct wino_conv2d_path opencl_path = {run_opencl, reshape_opencl, variant_opencl,
                                                    release_opencl, NULL};

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
    if (o->variant == WINO_VARIANT_FUSED_OUTPUT)
        return "the fused-output variant is the CUDA backend's";
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
    const int tile_m = o->tile_m ? o->tile_m : wino_gpu_default_tile_m(desc);
    const char *why = opencl_refusal(desc, o, tile_m);
    if (why)
        return wino_fail(WINO_UNSUPPORTED, "%s", why);
    const struct wino_opencl_ops *component = wino_opencl_component();
    if (!component)
        return WINO_UNSUPPORTED;
    struct wino_conv2d *c = wino_gpu_winograd_new(desc, &sizes, tile_m, ctx, &opencl_path);
    if (!c)
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_create: out of memory");
    struct wino_opencl_conv *conv = NULL;
    st = component->create(desc, &sizes, weights, ctx, tile_m, o->variant, o->bias, o->relu,
                           &conv, &c->workspace_bytes);
    if (st) {
        free(c);
        return st;
    }
    c->state = conv;
    *op = c;
    return WINO_SUCCESS;
}
