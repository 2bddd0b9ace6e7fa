/* The interface between libwino and its OpenCL component, libwino_opencl.so.MAJOR: the
 * component links the OpenCL ICD loader (libOpenCL), libwino links none and loads the component
 * at the first OpenCL create (src/op/opencl_loader.c), so that no program needs an OpenCL
 * library unless it asks for the backend. The component exports one symbol,
 * wino_opencl_component; each side checks the other's WINO_OPENCL_ABI. */
#ifndef WINO_OPENCL_OPENCL_COMPONENT_H
#define WINO_OPENCL_OPENCL_COMPONENT_H

#include <stddef.h>

#include "base/conv_desc.h"
#include "component/component_error.h"
#include "wino.h"

/* Changes whenever a structure below, or one they point to (wino.h's, conv_desc.h's),
 * changes. */
#define WINO_OPENCL_ABI 1

#define WINO_OPENCL_STR_(x) #x
#define WINO_OPENCL_STR(x) WINO_OPENCL_STR_(x)
/* The name the component is loaded by (also its SONAME). */
#define WINO_OPENCL_LIBRARY_NAME "libwino_opencl.so." WINO_OPENCL_STR(WINO_VERSION_MAJOR)
#define WINO_OPENCL_ENTRY "wino_opencl_component_entry"

struct wino_opencl_conv;

/* What the component gives the runtime (src/opencl/conv2d_opencl.c). */
struct wino_opencl_ops {
    int abi; /* WINO_OPENCL_ABI */
    /* Winograd F(tile_m x tile_m, r x r) (a default tile) for desc on ctx's device: checks the
     * context, builds the layer's kernels, transforms weights (a cl_mem), keeps bias (K host
     * floats, or NULL); variant NON_FUSED, FUSED or AUTO (the component chooses). */
    enum wino_status (*create)(const struct wino_conv2d_desc *desc,
                               const struct wino_conv_sizes *sizes, const void *weights,
                               const struct wino_context *ctx, int tile_m,
                               enum wino_variant variant, const float *bias, int relu,
                               struct wino_opencl_conv **conv, size_t *workspace_bytes);
    /* New batch and image sizes (checked): the layer's kernels are built for them. */
    enum wino_status (*reshape)(struct wino_opencl_conv *conv,
                                const struct wino_conv2d_desc *desc,
                                const struct wino_conv_sizes *sizes, size_t *workspace_bytes);
    /* Enqueues the convolution of the cl_mem x into the cl_mem y on queue (a
     * cl_command_queue of the operator's context and device). */
    enum wino_status (*run)(struct wino_opencl_conv *conv, const void *x, void *y,
                            void *workspace, size_t workspace_bytes, void *queue);
    enum wino_variant (*variant)(const struct wino_opencl_conv *conv);
    void (*destroy)(struct wino_opencl_conv *conv);
};

/* The component's one export (src/op/component_loader.h's wino_component_entry_fn): its
 * struct wino_opencl_ops, or NULL when services are of another ABI than WINO_OPENCL_ABI. */
const void *wino_opencl_component_entry(const struct wino_component_services *services);

#endif
