/* One layer's OpenCL program (src/opencl/winograd_float.cl specialised by -D constants) and its
 * launches: the kernel parameters, the build, the filter transform, the non-fused and fused
 * runs. */
#ifndef WINO_OPENCL_OPENCL_KERNELS_H
#define WINO_OPENCL_OPENCL_KERNELS_H

#include <stddef.h>

#include "opencl/program_cache.h"
#include "wino.h"

/* The kernel parameters of winograd_float.cl (what the tuner searches). */
struct wino_opencl_params {
    int gemm_bm, gemm_bn; /* tiles x output channels per GEMM work-group */
    int gemm_rm, gemm_rn; /* of them per work-item */
    int gemm_bk;          /* channels per step */
    int gemm_local;       /* 1: operands staged in local memory */
    int fused_ft, fused_fk; /* tiles x output channels per fused work-group */
    int fused_kpt;        /* output channels per fused work-item */
    int fused_fc;         /* channels transformed per step */
};

struct wino_opencl_layer {
    cl_program program;
    cl_kernel filter, input, gemm, output, fused;
    int tiles_h, tiles_w, tiles, alpha;
    int c, k;
    size_t v_elems, m_elems, y_elems;
    size_t workspace_bytes; /* V and M (non-fused) */
    struct wino_opencl_params params;
};

/* The parameters for desc with F(tile_m, r) on device (defaults fitted to the device's
 * work-group and local-memory limits) and the variant (AUTO: non-fused). */
enum wino_status wino_opencl_params_choose(cl_device_id device,
                                           const struct wino_conv2d_desc *desc, int tile_m,
                                           enum wino_variant variant,
                                           struct wino_opencl_params *params,
                                           enum wino_variant *chosen);

/* Builds the layer's program and kernels (released with wino_opencl_layer_release). */
enum wino_status wino_opencl_layer_build(cl_context context, cl_device_id device,
                                         const struct wino_conv2d_desc *desc, int tile_m,
                                         int relu, int has_bias,
                                         const struct wino_opencl_params *params,
                                         struct wino_opencl_layer *layer);
void wino_opencl_layer_release(struct wino_opencl_layer *layer);

/* U = G w G^T into u, waited for (create's transform). */
enum wino_status wino_opencl_filter_transform(const struct wino_opencl_layer *layer,
                                              void *queue, const void *weights, cl_mem u);

/* Enqueue the convolution (bias may be NULL). */
enum wino_status wino_opencl_run_non_fused(const struct wino_opencl_layer *layer, void *queue,
                                           const void *x, cl_mem u, cl_mem bias, void *y,
                                           void *workspace);
enum wino_status wino_opencl_run_fused(const struct wino_opencl_layer *layer, void *queue,
                                       const void *x, cl_mem u, cl_mem bias, void *y);

#endif
