/* One layer's OpenCL program (src/opencl/winograd_float.cl specialised by -D constants) and its
 * launches: the build with given kernel parameters, the filter transform, the non-fused and
 * fused runs. */
#ifndef WINO_OPENCL_OPENCL_KERNELS_H
#define WINO_OPENCL_OPENCL_KERNELS_H

#include <stddef.h>

#include "opencl/opencl_component.h"
#include "opencl/program_cache.h"
#include "wino.h"

struct wino_opencl_layer {
    cl_program program;
    cl_kernel filter, input, gemm, output, fused;
    int tiles_h, tiles_w, tiles, alpha;
    int chunk; /* tiles per chunk of the non-fused pipeline */
    int c, k;
    size_t m_offset; /* floats of the workspace before M (V of a chunk, aligned) */
    size_t y_elems;
    size_t workspace_bytes; /* V and M of a chunk (non-fused) */
    struct wino_opencl_params params;
};

/* Builds the layer's program and kernels (released with wino_opencl_layer_release); keep: its
 * binary is stored in the program cache (src/opencl/program_cache.h). */
enum wino_status wino_opencl_layer_build(cl_context context, cl_device_id device,
                                         const struct wino_conv2d_desc *desc, int tile_m,
                                         int relu, int has_bias,
                                         const struct wino_opencl_params *params, int keep,
                                         struct wino_opencl_layer *layer);

/* WINO_UNSUPPORTED when the compiled kernel of variant cannot run its work-group on device
 * (more work-items or local memory than the compiler allows it: registers run out first on
 * GPUs). */
enum wino_status wino_opencl_layer_fits(const struct wino_opencl_layer *layer,
                                        cl_device_id device, enum wino_variant variant);

void wino_opencl_layer_release(struct wino_opencl_layer *layer);

/* Bytes of an element of x, w and y: FP32, or FP16 (the kernels' loads and stores only; U, the
 * workspace and the bias are FP32 whatever the dtype). */
static inline size_t wino_opencl_elem_size(const struct wino_conv2d_desc *d)
{
    return d->dtype == WINO_DTYPE_F16 ? 2 : 4;
}

/* Enqueues U = G w G^T into u. */
enum wino_status wino_opencl_filter_transform(const struct wino_opencl_layer *layer,
                                              void *queue, const void *weights, cl_mem u);

/* Enqueue the convolution (bias may be NULL). */
enum wino_status wino_opencl_run_non_fused(const struct wino_opencl_layer *layer, void *queue,
                                           const void *x, cl_mem u, cl_mem bias, void *y,
                                           void *workspace);
enum wino_status wino_opencl_run_fused(const struct wino_opencl_layer *layer, void *queue,
                                       const void *x, cl_mem u, cl_mem bias, void *y);

#endif
