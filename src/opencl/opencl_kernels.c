/* The layer's OpenCL program and launches (src/opencl/opencl_kernels.h). */
#include "opencl/opencl_kernels.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "opencl/opencl_sources.h"

/* The tiles of a chunk of the non-fused pipeline: as many as keep V and M within
 * p->gemm_chunk MiB (so that they can stay in the device's cache between the stages), or twice
 * U's bytes, which every chunk's GEMMs read again; WINO_OPENCL_CHUNK_TILES, where set, instead
 * (the tests' way to many chunks on small layers). */
static size_t chunk_tiles(const struct wino_conv2d_desc *d, size_t alpha2, size_t tiles,
                          const struct wino_opencl_params *p)
{
    const char *forced = getenv("WINO_OPENCL_CHUNK_TILES");
    const size_t per_tile = sizeof(float) * alpha2 * ((size_t)d->c + (size_t)d->k),
                 u_bytes = sizeof(float) * alpha2 * (size_t)d->c * (size_t)d->k;
    size_t bytes = (size_t)p->gemm_chunk << 20;
    if (bytes < 2 * u_bytes)
        bytes = 2 * u_bytes;
    size_t chunk = forced && atol(forced) > 0 ? (size_t)atol(forced) : bytes / per_tile;
    if (chunk < 1)
        chunk = 1;
    return chunk < tiles ? chunk : tiles;
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
                                         const struct wino_opencl_params *p, int keep,
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
    const size_t chunk = chunk_tiles(d, alpha2, tiles, p);
    /* the kernels index a chunk's V and M with int below 2^31: refuse what would not fit */
    if (tiles > INT32_MAX || alpha2 * chunk * (size_t)(d->c > d->k ? d->c : d->k) > INT32_MAX)
        return wino_fail(WINO_UNSUPPORTED, "OpenCL: the layer is too large for 32-bit indices "
                         "(%zu tiles)", tiles);
    layer->tiles = (int)tiles;
    layer->chunk = (int)chunk;
    /* M 256-byte aligned after V: its rows are written as float4 */
    layer->m_offset = (alpha2 * chunk * (size_t)d->c + 63) / 64 * 64;
    layer->y_elems = (size_t)d->n * d->k * out_p * out_q;
    layer->workspace_bytes = sizeof(float) * (layer->m_offset + alpha2 * chunk * (size_t)d->k);
    layer->params = *p;
    const char *tile_text = wino_opencl_tile_source(tile_m, r);
    if (!tile_text)
        return wino_fail(WINO_UNSUPPORTED, "OpenCL: F(%d, %d) is not a default tile", tile_m, r);
    char options[1400], tile[32];
    snprintf(tile, sizeof tile, "f%dx%d_%dx%d", tile_m, tile_m, r, r);
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -DN=%d -DC=%d -DH=%d -DW=%d -DK=%d -DR=%d -DPAD_H=%d -DPAD_W=%d "
             "-DP=%d -DQ=%d -DALPHA=%d -DTILE_M=%d -DTILES_H=%d -DTILES_W=%d -DTILES=%d "
             "-DNHWC=%d -DHALF=%d -DRELU=%d -DHAS_BIAS=%d -DCHUNK=%d -DM_OFFSET=%zu "
             "-DINPUT_TRANSFORM=wino_f32_input_transform_%s__opencl "
             "-DFILTER_TRANSFORM=wino_f32_filter_transform_%s__opencl "
             "-DOUTPUT_TRANSFORM=wino_f32_output_transform_%s__opencl "
             "-DGEMM_BM=%d -DGEMM_BN=%d -DGEMM_RM=%d -DGEMM_RN=%d -DGEMM_BK=%d -DGEMM_LOCAL=%d "
             "-DFUSED_FT=%d -DFUSED_FK=%d -DFUSED_KPT=%d -DFUSED_FC=%d",
             d->n, d->c, d->h, d->w, d->k, r, d->pad_h, d->pad_w, out_p, out_q, alpha, tile_m,
             layer->tiles_h, layer->tiles_w, layer->tiles, d->layout == WINO_LAYOUT_NHWC,
             d->dtype == WINO_DTYPE_F16, relu,
             has_bias, layer->chunk, layer->m_offset, tile, tile, tile, p->gemm_bm, p->gemm_bn, p->gemm_rm,
             p->gemm_rn, p->gemm_bk, p->gemm_local, p->fused_ft, p->fused_fk, p->fused_kpt,
             p->fused_fc);
    const size_t tile_len = strlen(tile_text), kernels_len = strlen(wino_opencl_winograd_float);
    char *source = malloc(tile_len + kernels_len + 2);
    if (!source)
        return wino_fail(WINO_OUT_OF_MEMORY, "out of memory");
    memcpy(source, tile_text, tile_len);
    source[tile_len] = '\n';
    memcpy(source + tile_len + 1, wino_opencl_winograd_float, kernels_len + 1);
    enum wino_status st = wino_opencl_build(context, device, source, options, keep,
                                            &layer->program, NULL);
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

enum wino_status wino_opencl_layer_fits(const struct wino_opencl_layer *layer,
                                        cl_device_id device, enum wino_variant variant)
{
    const struct wino_opencl_params *p = &layer->params;
    const int fused = variant == WINO_VARIANT_FUSED;
    const cl_kernel kernel = fused ? layer->fused : layer->gemm;
    const size_t group = fused ? (size_t)p->fused_ft * (p->fused_fk / p->fused_kpt)
                               : (size_t)(p->gemm_bm / p->gemm_rm) * (p->gemm_bn / p->gemm_rn);
    size_t allowed = 0;
    cl_ulong local = 0, device_local = 0;
    if (clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof allowed,
                                 &allowed, NULL) != CL_SUCCESS ||
        clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local,
                                 NULL) != CL_SUCCESS ||
        clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof device_local, &device_local,
                        NULL) != CL_SUCCESS)
        return wino_fail(WINO_DEVICE_ERROR, "OpenCL: clGetKernelWorkGroupInfo failed");
    if (group > allowed || local > device_local)
        return wino_fail(WINO_UNSUPPORTED, "OpenCL: the compiled %s kernel runs work-groups of "
                         "at most %zu work-items with %llu bytes of local memory, not %zu",
                         fused ? "fused" : "GEMM", allowed, (unsigned long long)local, group);
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
    return err == CL_SUCCESS ? WINO_SUCCESS : launch_failure(err, "filter transform");
}

/* Sets a kernel's int arguments from index first on. */
static cl_int set_ints(cl_kernel kernel, cl_uint first, int count, const int *values)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < count && err == CL_SUCCESS; i++)
        err = clSetKernelArg(kernel, first + (cl_uint)i, sizeof(int), &values[i]);
    return err;
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
    /* chunk after chunk through the same V and M, each chunk's three stages in turn */
    for (int t0 = 0; t0 < layer->tiles && err == CL_SUCCESS; t0 += layer->chunk) {
        const int range[2] = {t0, layer->tiles - t0 < layer->chunk ? layer->tiles - t0
                                                                   : layer->chunk};
        err = set_ints(layer->input, 2, 2, range);
        if (err == CL_SUCCESS)
            err = set_ints(layer->gemm, 2, 1, &range[1]);
        if (err == CL_SUCCESS)
            err = set_ints(layer->output, 3, 2, range);
        if (err == CL_SUCCESS)
            err = launch_1d(queue, layer->input, (size_t)range[1] * layer->c);
        if (err == CL_SUCCESS) {
            const size_t local[3] = {(size_t)(p->gemm_bn / p->gemm_rn),
                                     (size_t)(p->gemm_bm / p->gemm_rm), 1};
            const size_t global[3] = {
                (size_t)(layer->k + p->gemm_bn - 1) / p->gemm_bn * local[0],
                (size_t)(range[1] + p->gemm_bm - 1) / p->gemm_bm * local[1],
                (size_t)layer->alpha * layer->alpha};
            err = clEnqueueNDRangeKernel(queue, layer->gemm, 3, NULL, global, local, 0, NULL,
                                         NULL);
        }
        if (err == CL_SUCCESS)
            err = launch_1d(queue, layer->output, (size_t)range[1] * layer->k);
    }
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
