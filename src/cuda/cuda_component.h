/* The interface between libwino and its CUDA component, libwino_cuda.so.MAJOR: the component
 * links the CUDA runtime and cuBLAS, libwino links neither and loads the component on the first
 * CUDA call (src/op/cuda_loader.c), so that a program using the CPU alone needs no CUDA
 * library. The component exports one symbol, wino_cuda_component; each side checks the other's
 * WINO_CUDA_ABI and refuses a component or runtime of another build. */
#ifndef WINO_CUDA_CUDA_COMPONENT_H
#define WINO_CUDA_CUDA_COMPONENT_H

#include <stddef.h>

#include "base/conv_desc.h"
#include "component/component_error.h"
#include "cuda/vendor_conv.h"
#include "cuda/winrs_cuda.h"
#include "op/int8_layer.h"
#include "wino.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Changes whenever a structure below, or a structure they point to (wino.h's, conv_desc.h's,
 * int8_layer.h's), or what they may hold changes (8: the device's name and the vendor library's
 * version, which key the tuning cache's CUDA entries; 9: create's one-dimensional tile for
 * WINO_VARIANT_ROWS). */
#define WINO_CUDA_ABI 9

/* The ROWS variant's alpha (src/cuda/winograd_rows.h): F(m, s) with m = WINO_ROWS_ALPHA - s + 1. */
#define WINO_ROWS_ALPHA 8

/* The name the component is loaded by (also its SONAME). */
#define WINO_CUDA_STR_(x) #x
#define WINO_CUDA_STR(x) WINO_CUDA_STR_(x)
#define WINO_CUDA_LIBRARY_NAME "libwino_cuda.so." WINO_CUDA_STR(WINO_VERSION_MAJOR)

/* The exported symbol's name. */
#define WINO_CUDA_ENTRY "wino_cuda_component"

struct wino_cuda_conv;

/* What the component gives the runtime: the functions of src/cuda/conv2d_cuda.h. */
struct wino_cuda_ops {
    int abi; /* WINO_CUDA_ABI */
    enum wino_status (*create)(const struct wino_conv2d_desc *desc,
                               const struct wino_conv_sizes *sizes, const void *weights,
                               const struct wino_context *ctx, int tile_m,
                               const struct wino_tile_matrices *line, enum wino_variant variant,
                               const float *bias, int relu, int tf32,
                               struct wino_cuda_conv **conv, size_t *workspace_bytes);
    enum wino_status (*create_int8)(const struct wino_conv2d_desc *desc,
                                    const struct wino_conv_sizes *sizes,
                                    const struct wino_int8_layer *layer,
                                    const struct wino_context *ctx, enum wino_variant variant,
                                    struct wino_cuda_conv **conv, size_t *workspace_bytes);
    enum wino_status (*copy_to_host)(const struct wino_context *ctx, const void *src,
                                     size_t bytes, void *dst);
    enum wino_status (*reshape)(struct wino_cuda_conv *conv, const struct wino_conv2d_desc *desc,
                                const struct wino_conv_sizes *sizes, size_t *workspace_bytes);
    enum wino_status (*run)(struct wino_cuda_conv *conv, const void *x, void *y,
                            void *workspace, size_t workspace_bytes, void *stream);
    enum wino_status (*set_weights)(struct wino_cuda_conv *conv, const void *weights,
                                    void *stream);
    enum wino_variant (*variant)(const struct wino_cuda_conv *conv);
    void (*destroy)(struct wino_cuda_conv *conv);
    enum wino_status (*rotated_filters_create)(const struct wino_conv2d_desc *desc,
                                               const void *weights,
                                               const struct wino_context *ctx, void **rotated);
    enum wino_status (*rotate_filters)(const struct wino_conv2d_desc *desc, const void *weights,
                                       void *rotated, int device, void *stream);
    const struct wino_cuda_winrs_ops *winrs; /* backward-filter (src/cuda/winrs_cuda.h) */
    const struct wino_cuda_vendor_ops *vendor; /* cuDNN's engines (src/cuda/vendor_conv.h) */
    /* Plain device memory and timing (src/cuda/device_common.h): zeroed memory of ctx's
     * device, its release (also of rotated filters), the median ms of run on ctx's stream. */
    enum wino_status (*device_zeros)(const struct wino_context *ctx, size_t bytes, void **p);
    void (*device_free)(const struct wino_context *ctx, void *p);
    enum wino_status (*time_run)(const struct wino_context *ctx,
                                 enum wino_status (*run)(void *arg, void *stream), void *arg,
                                 double *ms);
    /* The name of ctx's device, as CUDA reports it, into buf (cap bytes). */
    enum wino_status (*device_name)(const struct wino_context *ctx, char *buf, size_t cap);
};

/* The component's one export (src/op/component_loader.h's wino_component_entry_fn): its
 * struct wino_cuda_ops, or NULL when services (the runtime's error reporting,
 * src/component/component_error.h) are of another ABI than WINO_CUDA_ABI. */
const void *wino_cuda_component(const struct wino_component_services *services);

#ifdef __cplusplus
}
#endif

#endif
