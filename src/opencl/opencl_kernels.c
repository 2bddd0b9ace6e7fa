/* The layer's OpenCL program and launches (src/opencl/opencl_kernels.h). */
#include "opencl/opencl_kernels.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "opencl/opencl_sources.h"

/* Limits of the device that the kernel parameters must respect. */
struct device_limits {
    size_t max_group;  /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    size_t local_mem;  /* CL_DEVICE_LOCAL_MEM_SIZE, bytes */
};

static enum wino_status device_limits(cl_device_id device, struct device_limits *lim)
{
    cl_ulong local = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof lim->max_group,
                        &lim->max_group, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL) !=
            CL_SUCCESS)
        return wino_fail(WINO_INVALID_ARGUMENT, "cl_device is not an OpenCL device");
    lim->local_mem = (size_t)local;
    return WINO_SUCCESS;
}

enum wino_status wino_opencl_params_choose(cl_device_id device,
                                           const struct wino_conv2d_desc *desc, int tile_m,
                                           enum wino_variant variant,
                                           struct wino_opencl_params *p,
                                           enum wino_variant *chosen)
{
    struct device_limits lim;
    enum wino_status st = device_limits(device, &lim);
    if (st)
        return st;
    const int alpha = tile_m + desc->r - 1, alpha2 = alpha * alpha;
    /* 8 x 8 work-items of 4 x 4 outputs: 16 accumulators each, 2 KiB of local memory */
    p->gemm_bm = p->gemm_bn = 32;
    p->gemm_rm = p->gemm_rn = 4;
    p->gemm_bk = 8;
    p->gemm_local = 1;
    /* 16 tiles x 16 channels; 4 channels of alpha^2 accumulators per work-item up to alpha 6,
     * fewer beyond so that they stay in registers; channel steps as local memory allows */
    p->fused_ft = 16;
    p->fused_fk = 16;
    p->fused_kpt = alpha2 <= 36 ? 4 : alpha2 <= 64 ? 2 : 1;
    p->fused_fc = 8;
    while (p->fused_fc > 1 &&
           sizeof(float) * (size_t)alpha2 * p->fused_fc * p->fused_ft > lim.local_mem / 2)
        p->fused_fc /= 2;
    const size_t gemm_group = (size_t)(p->gemm_bm / p->gemm_rm) * (p->gemm_bn / p->gemm_rn);
    const size_t fused_group = (size_t)p->fused_ft * (p->fused_fk / p->fused_kpt);
    if (gemm_group > lim.max_group || fused_group > lim.max_group ||
        sizeof(float) * (size_t)alpha2 * p->fused_ft > lim.local_mem / 2)
        return wino_fail(WINO_UNSUPPORTED, "OpenCL: the device's work-groups (%zu work-items, "
                         "%zu bytes of local memory) are too small for these kernels",
                         lim.max_group, lim.local_mem);
    *chosen = variant == WINO_VARIANT_FUSED ? WINO_VARIANT_FUSED : WINO_VARIANT_NON_FUSED;
    return WINO_SUCCESS;
}

void wino_opencl_layer_release(struct wino_opencl_layer *layer)
{
    cl_kernel *kernels[5] = {&layer->filter, &layer->input, &layer->gemm, &layer->output,
                             &layer->fused};
    for (int i = 0; i < 5; i++)
        if (*kernels[i])
            clReleaseKernel(*kernels[i]);
    if (layer->program)
        clReleaseProgram(layer->program);
    memset(layer, 0, sizeof *layer);
}

enum wino_status wino_opencl_layer_build(cl_context context, cl_device_id device,
                                         const struct wino_conv2d_desc *d, int tile_m,
                                         int relu, int has_bias,
                                         const struct wino_opencl_params *p,
                                         struct wino_opencl_layer *layer)
{
    memset(layer, 0, sizeof *layer);
    const int r = d->r, alpha = tile_m + r - 1;
    const int out_p = d->h + 2 * d->pad_h - r + 1, out_q = d->w + 2 * d->pad_w - r + 1;
    layer->alpha = alpha;
    layer->c = d->c;
    layer->k = d->k;
    layer->tiles_h = (out_p + tile_m - 1) / tile_m;
    layer->tiles_w = (out_q + tile_m - 1) / tile_m;
    const size_t tiles = (size_t)d->n * layer->tiles_h * layer->tiles_w,
                 alpha2 = (size_t)alpha * alpha;
    /* the kernels index with int below 2^31: refuse what would not fit */
    if (tiles > INT32_MAX || alpha2 * tiles * (size_t)(d->c > d->k ? d->c : d->k) > INT32_MAX)
        return wino_fail(WINO_UNSUPPORTED, "OpenCL: the layer is too large for 32-bit indices "
                         "(%zu tiles)", tiles);
    layer->tiles = (int)tiles;
    layer->v_elems = alpha2 * tiles * (size_t)d->c;
    layer->m_elems = alpha2 * tiles * (size_t)d->k;
    layer->y_elems = (size_t)d->n * d->k * out_p * out_q;
    layer->workspace_bytes = sizeof(float) * (layer->v_elems + layer->m_elems);
    layer->params = *p;
    const char *tile_text = wino_opencl_tile_source(tile_m, r);
    if (!tile_text)
        return wino_fail(WINO_UNSUPPORTED, "OpenCL: F(%d, %d) is not a default tile", tile_m, r);
    char options[1400], tile[32];
    snprintf(tile, sizeof tile, "f%dx%d_%dx%d", tile_m, tile_m, r, r);
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -DN=%d -DC=%d -DH=%d -DW=%d -DK=%d -DR=%d -DPAD_H=%d -DPAD_W=%d "
             "-DP=%d -DQ=%d -DALPHA=%d -DTILE_M=%d -DTILES_H=%d -DTILES_W=%d -DTILES=%d "
             "-DNHWC=%d -DRELU=%d -DHAS_BIAS=%d -DM_OFFSET=%zu "
             "-DINPUT_TRANSFORM=wino_f32_input_transform_%s__opencl "
             "-DFILTER_TRANSFORM=wino_f32_filter_transform_%s__opencl "
             "-DOUTPUT_TRANSFORM=wino_f32_output_transform_%s__opencl "
             "-DGEMM_BM=%d -DGEMM_BN=%d -DGEMM_RM=%d -DGEMM_RN=%d -DGEMM_BK=%d -DGEMM_LOCAL=%d "
             "-DFUSED_FT=%d -DFUSED_FK=%d -DFUSED_KPT=%d -DFUSED_FC=%d",
             d->n, d->c, d->h, d->w, d->k, r, d->pad_h, d->pad_w, out_p, out_q, alpha, tile_m,
             layer->tiles_h, layer->tiles_w, layer->tiles, d->layout == WINO_LAYOUT_NHWC, relu,
             has_bias, layer->v_elems, tile, tile, tile, p->gemm_bm, p->gemm_bn, p->gemm_rm,
             p->gemm_rn, p->gemm_bk, p->gemm_local, p->fused_ft, p->fused_fk, p->fused_kpt,
             p->fused_fc);
    const size_t tile_len = strlen(tile_text), kernels_len = strlen(wino_opencl_winograd_float);
    char *source = malloc(tile_len + kernels_len + 2);
    if (!source)
        return wino_fail(WINO_OUT_OF_MEMORY, "out of memory");
    memcpy(source, tile_text, tile_len);
    source[tile_len] = '\n';
    memcpy(source + tile_len + 1, wino_opencl_winograd_float, kernels_len + 1);
    enum wino_status st = wino_opencl_build(context, device, source, options, &layer->program,
                                            NULL);
    free(source);
    if (st)
        return st;
    static const char *const names[5] = {"filter_transform", "input_transform", "gemm",
                                         "output_transform", "fused"};
    cl_kernel *kernels[5] = {&layer->filter, &layer->input, &layer->gemm, &layer->output,
                             &layer->fused};
    for (int i = 0; i < 5; i++) {
        cl_int err = CL_SUCCESS;
        *kernels[i] = clCreateKernel(layer->program, names[i], &err);
        if (err != CL_SUCCESS) {
            *kernels[i] = NULL;
            wino_opencl_layer_release(layer);
            return wino_fail(WINO_DEVICE_ERROR, "clCreateKernel(%s): error %d", names[i],
                             (int)err);
        }
    }
    return WINO_SUCCESS;
}

/* Sets a kernel's arguments, buffers in order (NULL buffers stay NULL). */
static cl_int set_buffers(cl_kernel kernel, int count, const void *const *buffers)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < count && err == CL_SUCCESS; i++)
        err = clSetKernelArg(kernel, (cl_uint)i, sizeof(cl_mem), buffers[i] ? &buffers[i] : NULL);
    return err;
}

/* Enqueues a 1D kernel over count work-items (the driver picks the work-group). */
static cl_int launch_1d(cl_command_queue queue, cl_kernel kernel, size_t count)
{
    const size_t group = 64, global = (count + group - 1) / group * group;
    return clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &group, 0, NULL, NULL);
}

static enum wino_status launch_failure(cl_int err, const char *what)
{
    return wino_fail(err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY ||
                             err == CL_MEM_OBJECT_ALLOCATION_FAILURE
                         ? WINO_OUT_OF_MEMORY
                         : WINO_DEVICE_ERROR,
                     "OpenCL %s: error %d", what, (int)err);
}

enum wino_status wino_opencl_filter_transform(const struct wino_opencl_layer *layer,
                                              void *queue, const void *weights, cl_mem u)
{
    const void *args[2] = {weights, u};
    cl_int err = set_buffers(layer->filter, 2, args);
    if (err == CL_SUCCESS)
        err = launch_1d(queue, layer->filter, (size_t)layer->k * layer->c);
    if (err == CL_SUCCESS)
        err = clFinish(queue);
    return err == CL_SUCCESS ? WINO_SUCCESS : launch_failure(err, "filter transform");
}

enum wino_status wino_opencl_run_non_fused(const struct wino_opencl_layer *layer, void *queue,
                                           const void *x, cl_mem u, cl_mem bias, void *y,
                                           void *workspace)
{
    const struct wino_opencl_params *p = &layer->params;
    const void *in_args[2] = {x, workspace}, *gemm_args[2] = {workspace, u},
               *out_args[3] = {workspace, bias, y};
    cl_int err = set_buffers(layer->input, 2, in_args);
    if (err == CL_SUCCESS)
        err = set_buffers(layer->gemm, 2, gemm_args);
    if (err == CL_SUCCESS)
        err = set_buffers(layer->output, 3, out_args);
    if (err == CL_SUCCESS)
        err = launch_1d(queue, layer->input, (size_t)layer->tiles * layer->c);
    if (err == CL_SUCCESS) {
        const size_t local[3] = {(size_t)(p->gemm_bn / p->gemm_rn),
                                 (size_t)(p->gemm_bm / p->gemm_rm), 1};
        const size_t global[3] = {(size_t)(layer->k + p->gemm_bn - 1) / p->gemm_bn * local[0],
                                  (size_t)(layer->tiles + p->gemm_bm - 1) / p->gemm_bm *
                                      local[1],
                                  (size_t)layer->alpha * layer->alpha};
        err = clEnqueueNDRangeKernel(queue, layer->gemm, 3, NULL, global, local, 0, NULL, NULL);
    }
    if (err == CL_SUCCESS)
        err = launch_1d(queue, layer->output, (size_t)layer->tiles * layer->k);
    return err == CL_SUCCESS ? WINO_SUCCESS : launch_failure(err, "enqueue");
}

enum wino_status wino_opencl_run_fused(const struct wino_opencl_layer *layer, void *queue,
                                       const void *x, cl_mem u, cl_mem bias, void *y)
{
    const struct wino_opencl_params *p = &layer->params;
    const void *args[4] = {x, u, bias, y};
    cl_int err = set_buffers(layer->fused, 4, args);
    if (err == CL_SUCCESS) {
        const size_t local[2] = {(size_t)p->fused_ft * (p->fused_fk / p->fused_kpt), 1};
        const size_t global[2] = {(size_t)(layer->tiles + p->fused_ft - 1) / p->fused_ft *
                                      local[0],
                                  (size_t)(layer->k + p->fused_fk - 1) / p->fused_fk};
        err = clEnqueueNDRangeKernel(queue, layer->fused, 2, NULL, global, local, 0, NULL, NULL);
    }
    return err == CL_SUCCESS ? WINO_SUCCESS : launch_failure(err, "enqueue");
}
