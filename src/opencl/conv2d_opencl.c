/* The OpenCL component's Winograd convolution (src/opencl/opencl_component.h): FP32 and FP16
 * (FP32 arithmetic) forward, F(m x m, r x r) for every default tile, non-fused (input transform,
 * alpha^2 GEMMs, output transform) or fused (one kernel). create() checks the context, chooses
 * the kernel parameters (a tuning database entry's, else the defaults: src/opencl/opencl_params.h),
 * builds one program for the layer (its sizes compile-time constants, src/opencl/winograd_float.cl
 * after the tile's emitted transforms; binaries cached on disk, src/opencl/program_cache.c) and
 * transforms the filters on the device; run() checks its buffers and enqueues. The tuner is
 * src/opencl/tuner.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "opencl/opencl_component.h"
#include "opencl/opencl_kernels.h"
#include "opencl/opencl_params.h"
#include "opencl/program_cache.h"
#include "opencl/tuner.h"

struct wino_opencl_conv {
    struct wino_conv2d_desc desc;
    int tile_m, alpha, relu;
    enum wino_variant variant;
    struct wino_opencl_params params;
    int tuned; /* params are a tuning database entry's */
    cl_context context;
    cl_device_id device;
    cl_mem u;    /* transformed filters U[pos][K][C] */
    cl_mem bias; /* K floats, or NULL */
    struct wino_opencl_layer layer; /* the program and kernels for the current sizes */
};

/* The ICD dispatch table every object of one OpenCL implementation begins with: how a host
 * pointer passed for a cl_mem or queue is told apart without handing it to the driver. */
static const void *dispatch_of(const void *object)
{
    const void *dispatch = NULL;
    memcpy(&dispatch, object, sizeof dispatch);
    return dispatch;
}

/* Checks that buffer is a cl_mem of conv's context holding at least bytes. */
static enum wino_status check_buffer(const struct wino_opencl_conv *conv, const void *buffer,
                                     size_t bytes, const char *name)
{
    cl_context owner = NULL;
    size_t size = 0;
    if (dispatch_of(buffer) != dispatch_of(conv->context) ||
        clGetMemObjectInfo((cl_mem)buffer, CL_MEM_CONTEXT, sizeof owner, &owner, NULL) !=
            CL_SUCCESS ||
        clGetMemObjectInfo((cl_mem)buffer, CL_MEM_SIZE, sizeof size, &size, NULL) != CL_SUCCESS)
        return wino_fail(WINO_INVALID_ARGUMENT, "OpenCL: %s is not a cl_mem buffer (a host "
                         "pointer, or an object of another OpenCL implementation)", name);
    if (owner != conv->context)
        return wino_fail(WINO_INVALID_ARGUMENT, "OpenCL: %s belongs to another cl_context than "
                         "the operator's", name);
    if (size < bytes)
        return wino_fail(bytes && !strcmp(name, "workspace") ? WINO_INSUFFICIENT_WORKSPACE
                                                              : WINO_INVALID_ARGUMENT,
                         "OpenCL: %s holds %zu bytes, %zu needed", name, size, bytes);
    return WINO_SUCCESS;
}

/* Checks that queue is an in-order cl_command_queue of context and device. */
static enum wino_status check_queue(cl_context context, cl_device_id device, const void *queue)
{
    cl_context owner = NULL;
    cl_device_id on = NULL;
    cl_command_queue_properties props = 0;
    if (dispatch_of(queue) != dispatch_of(context) ||
        clGetCommandQueueInfo((cl_command_queue)queue, CL_QUEUE_CONTEXT, sizeof owner, &owner,
                              NULL) != CL_SUCCESS ||
        clGetCommandQueueInfo((cl_command_queue)queue, CL_QUEUE_DEVICE, sizeof on, &on, NULL) !=
            CL_SUCCESS ||
        clGetCommandQueueInfo((cl_command_queue)queue, CL_QUEUE_PROPERTIES, sizeof props, &props,
                              NULL) != CL_SUCCESS)
        return wino_fail(WINO_INVALID_ARGUMENT, "OpenCL: the stream is not a cl_command_queue");
    if (owner != context || on != device)
        return wino_fail(WINO_INVALID_ARGUMENT, "OpenCL: the command queue belongs to another "
                         "%s than the context's", owner != context ? "cl_context" : "device");
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return wino_fail(WINO_INVALID_ARGUMENT, "OpenCL: the command queue must be in-order");
    return WINO_SUCCESS;
}

/* Checks ctx's cl_context, cl_device and queue. */
static enum wino_status check_context(const struct wino_context *ctx)
{
    cl_context context = ctx->cl_context;
    cl_device_id device = ctx->cl_device;
    cl_uint count = 0;
    cl_device_id devices[16];
    if (clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof count, &count, NULL) !=
            CL_SUCCESS ||
        clGetContextInfo(context, CL_CONTEXT_DEVICES,
                         sizeof devices[0] * (count < 16 ? count : 16), devices, NULL) !=
            CL_SUCCESS)
        return wino_fail(WINO_INVALID_ARGUMENT, "OpenCL: cl_context is not an OpenCL context");
    int member = 0;
    for (cl_uint i = 0; i < count && i < 16; i++)
        member |= devices[i] == device;
    if (!member)
        return wino_fail(WINO_INVALID_ARGUMENT, "OpenCL: cl_device is not a device of "
                                                "cl_context");
    return check_queue(context, device, ctx->stream);
}

/* A device buffer of bytes, filled from host (may be NULL: left uninitialized). */
static enum wino_status new_buffer(cl_context context, size_t bytes, const void *host,
                                   cl_mem *buffer)
{
    cl_int err = CL_SUCCESS;
    *buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0),
                             bytes, (void *)host, &err);
    if (err == CL_SUCCESS)
        return WINO_SUCCESS;
    *buffer = NULL;
    return wino_fail(err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY ||
                             err == CL_OUT_OF_RESOURCES
                         ? WINO_OUT_OF_MEMORY
                         : WINO_DEVICE_ERROR,
                     "clCreateBuffer of %zu bytes: error %d", bytes, (int)err);
}

static void conv_destroy(struct wino_opencl_conv *conv)
{
    if (!conv)
        return;
    wino_opencl_layer_release(&conv->layer);
    if (conv->u)
        clReleaseMemObject(conv->u);
    if (conv->bias)
        clReleaseMemObject(conv->bias);
    if (conv->context)
        clReleaseContext(conv->context);
    free(conv);
}

/* conv's parameters and variant: tuned's when it is not NULL and its parameters are valid on
 * the device (its variant for AUTO), else the defaults (AUTO: non-fused). */
static enum wino_status choose(struct wino_opencl_conv *conv,
                               const struct wino_opencl_tuned *tuned, enum wino_variant variant)
{
    struct wino_opencl_limits lim;
    enum wino_status st = wino_opencl_limits(conv->device, &lim);
    if (!st)
        st = wino_opencl_params_default(&lim, conv->alpha, &conv->params);
    if (st)
        return st;
    conv->variant = variant == WINO_VARIANT_FUSED ? WINO_VARIANT_FUSED : WINO_VARIANT_NON_FUSED;
    conv->tuned = tuned &&
                  (tuned->variant == WINO_VARIANT_NON_FUSED ||
                   tuned->variant == WINO_VARIANT_FUSED) &&
                  !wino_opencl_params_refusal(&lim, conv->alpha, WINO_VARIANT_NON_FUSED,
                                              &tuned->params) &&
                  !wino_opencl_params_refusal(&lim, conv->alpha, WINO_VARIANT_FUSED,
                                              &tuned->params);
    if (conv->tuned) {
        conv->params = tuned->params;
        if (variant == WINO_VARIANT_AUTO)
            conv->variant = tuned->variant;
    }
    return WINO_SUCCESS;
}

/* Builds conv's layer for desc with its parameters; its variant's kernel must fit the device. */
static enum wino_status build(struct wino_opencl_conv *conv, const struct wino_conv2d_desc *desc,
                              struct wino_opencl_layer *layer)
{
    enum wino_status st = wino_opencl_layer_build(conv->context, conv->device, desc, conv->tile_m,
                                                  conv->relu, conv->bias != NULL, &conv->params,
                                                  1, layer);
    if (!st && (st = wino_opencl_layer_fits(layer, conv->device, conv->variant)))
        wino_opencl_layer_release(layer);
    return st;
}

static enum wino_status conv_create(const struct wino_conv2d_desc *desc,
                                    const struct wino_conv_sizes *sizes, const void *weights,
                                    const struct wino_context *ctx, int tile_m,
                                    enum wino_variant variant, const float *bias, int relu,
                                    const struct wino_opencl_tuned *tuned,
                                    struct wino_opencl_conv **out, size_t *workspace_bytes)
{
    (void)sizes;
    *out = NULL;
    enum wino_status st = check_context(ctx);
    if (st)
        return st;
    struct wino_opencl_conv *conv = calloc(1, sizeof *conv);
    if (!conv)
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_create: out of memory");
    conv->desc = *desc;
    conv->tile_m = tile_m;
    conv->alpha = tile_m + desc->r - 1;
    conv->relu = relu;
    conv->context = ctx->cl_context;
    clRetainContext(conv->context);
    conv->device = ctx->cl_device;
    const size_t alpha2 = (size_t)conv->alpha * (size_t)conv->alpha;
    const size_t w_bytes = wino_opencl_elem_size(desc) * desc->k * desc->c * desc->r * desc->s;
    /* the filter transform runs once, built with the layer's program */
    st = check_buffer(conv, weights, w_bytes, "weights");
    if (!st)
        st = choose(conv, tuned, variant);
    if (!st)
        st = new_buffer(conv->context, sizeof(float) * alpha2 * desc->k * desc->c, NULL,
                        &conv->u);
    if (!st && bias)
        st = new_buffer(conv->context, sizeof(float) * (size_t)desc->k, bias, &conv->bias);
    if (!st && (st = build(conv, desc, &conv->layer)) && conv->tuned) {
        /* an entry whose kernels this device does not take (never trusted): the defaults */
        st = choose(conv, NULL, variant);
        if (!st && !(st = build(conv, desc, &conv->layer)))
            wino_ok();
    }
    if (!st)
        st = wino_opencl_filter_transform(&conv->layer, ctx->stream, weights, conv->u);
    if (!st && clFinish(ctx->stream) != CL_SUCCESS)
        st = wino_fail(WINO_DEVICE_ERROR, "OpenCL: the filter transform failed");
    if (st) {
        conv_destroy(conv);
        return st;
    }
    *workspace_bytes = conv->variant == WINO_VARIANT_FUSED ? 0 : conv->layer.workspace_bytes;
    *out = conv;
    return WINO_SUCCESS;
}

static enum wino_status conv_reshape(struct wino_opencl_conv *conv,
                                     const struct wino_conv2d_desc *desc,
                                     const struct wino_conv_sizes *sizes,
                                     size_t *workspace_bytes)
{
    (void)sizes;
    struct wino_opencl_layer layer;
    const enum wino_status st = build(conv, desc, &layer);
    if (st)
        return st;
    wino_opencl_layer_release(&conv->layer);
    conv->layer = layer;
    conv->desc = *desc;
    *workspace_bytes = conv->variant == WINO_VARIANT_FUSED ? 0 : layer.workspace_bytes;
    return WINO_SUCCESS;
}

static enum wino_status conv_run(struct wino_opencl_conv *conv, const void *x, void *y,
                                 void *workspace, size_t workspace_bytes, void *queue)
{
    (void)workspace_bytes; /* the buffer's own size is checked instead */
    const struct wino_conv2d_desc *d = &conv->desc;
    const int fused = conv->variant == WINO_VARIANT_FUSED;
    enum wino_status st = check_queue(conv->context, conv->device, queue);
    if (!st)
        st = check_buffer(conv, x, wino_opencl_elem_size(d) * d->n * d->c * d->h * d->w, "x");
    if (!st)
        st = check_buffer(conv, y, wino_opencl_elem_size(d) * conv->layer.y_elems, "y");
    if (!st && !fused)
        st = check_buffer(conv, workspace, conv->layer.workspace_bytes, "workspace");
    if (!st && (y == x || (!fused && (y == workspace || x == workspace))))
        st = wino_fail(WINO_INVALID_ARGUMENT, "OpenCL: x, y and the workspace must be distinct "
                                              "buffers");
    if (st)
        return st;
    return fused ? wino_opencl_run_fused(&conv->layer, queue, x, conv->u, conv->bias, y)
                 : wino_opencl_run_non_fused(&conv->layer, queue, x, conv->u, conv->bias, y,
                                             workspace);
}

static enum wino_variant conv_variant(const struct wino_opencl_conv *conv)
{
    return conv->variant;
}

static enum wino_status conv_set_weights(struct wino_opencl_conv *conv, const void *weights,
                                         void *queue)
{
    const struct wino_conv2d_desc *d = &conv->desc;
    enum wino_status st = check_queue(conv->context, conv->device, queue);
    if (!st)
        st = check_buffer(conv, weights, wino_opencl_elem_size(d) * d->k * d->c * d->r * d->s,
                          "weights");
    return st ? st : wino_opencl_filter_transform(&conv->layer, queue, weights, conv->u);
}

static void conv_params(const struct wino_opencl_conv *conv, struct wino_opencl_params *params,
                        int *tuned)
{
    *params = conv->params;
    *tuned = conv->tuned;
}

static enum wino_status device_key(const struct wino_context *ctx, char *key, size_t cap)
{
    const enum wino_status st = check_context(ctx);
    return st ? st : wino_opencl_device_key(ctx->cl_device, key, cap);
}

static enum wino_status tune(const struct wino_conv2d_desc *desc, const struct wino_context *ctx,
                             int tile_m, const struct wino_opencl_search *search,
                             struct wino_opencl_tuning *result)
{
    const enum wino_status st = check_context(ctx);
    return st ? st : wino_opencl_tune_layer(ctx->cl_context, ctx->cl_device, ctx->stream, desc,
                                            tile_m, search, result);
}

/* The component's one export (default visibility; everything else is hidden). */
__attribute__((visibility("default"))) const void *
wino_opencl_component_entry(const struct wino_component_services *services)
{
    static const struct wino_opencl_ops ops = {
        WINO_OPENCL_ABI,  conv_create, conv_reshape, conv_run,   conv_variant,
        conv_destroy,     conv_set_weights, conv_params, device_key, tune};
    return wino_component_use_services(services, WINO_OPENCL_ABI) ? &ops : NULL;
}
