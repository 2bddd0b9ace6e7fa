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
#define WINO_OPENCL_ABI 4

#define WINO_OPENCL_STR_(x) #x
#define WINO_OPENCL_STR(x) WINO_OPENCL_STR_(x)
/* The name the component is loaded by (also its SONAME). */
#define WINO_OPENCL_LIBRARY_NAME "libwino_opencl.so." WINO_OPENCL_STR(WINO_VERSION_MAJOR)
#define WINO_OPENCL_ENTRY "wino_opencl_component_entry"

/* The kernel parameters of src/opencl/winograd_float.cl, what the tuner searches (their
 * defaults and valid values: src/opencl/opencl_params.h). */
struct wino_opencl_params {
    int gemm_bm, gemm_bn; /* tiles x output channels per GEMM work-group */
    int gemm_rm, gemm_rn; /* of them per work-item */
    int gemm_bk;          /* channels per step */
    int gemm_local;       /* 1: operands staged in local memory */
    int gemm_chunk;       /* MiB of V and M per chunk of tiles */
    int fused_ft, fused_fk; /* tiles x output channels per fused work-group */
    int fused_kpt;        /* output channels per fused work-item */
    int fused_fc;         /* channels transformed per step */
};

/* A tuning database entry (src/op/opencl_tuning.h): the parameters measured fastest for one
 * layer on one device, the non-fused half by the non-fused candidates' times and the fused
 * half by the fused ones', and the faster variant, what AUTO runs. */
struct wino_opencl_tuned {
    struct wino_opencl_params params;
    enum wino_variant variant;     /* NON_FUSED or FUSED */
    double non_fused_ms, fused_ms; /* the medians of those two */
};

/* The bounds of one layer's search: no new candidate once budget_s seconds have passed (0: no
 * limit) or max_candidates were timed (0: no limit); the default parameters of both variants
 * are timed whatever the bounds. */
struct wino_opencl_search {
    double budget_s;
    int max_candidates;
    int reps; /* timed runs per candidate (>= 1), their median compared */
};

/* What one layer's search found. */
struct wino_opencl_tuning {
    int tile_m; /* of the tile searched, F(tile_m x tile_m, r x r) */
    int tiles;  /* tiles timed with their defaults before the search (0: the tile was given) */
    struct wino_opencl_tuned best;
    double default_ms; /* what AUTO runs without an entry: non-fused, default parameters */
    int candidates;    /* timed, the defaults included */
    int refused;       /* not timed: refused by the compiler or the device, or a wrong result */
    int space;         /* the candidates the device's limits allow, both variants */
    double seconds;    /* the search's wall time */
};

struct wino_opencl_conv;

/* What the component gives the runtime (src/opencl/conv2d_opencl.c). */
struct wino_opencl_ops {
    int abi; /* WINO_OPENCL_ABI */
    /* Winograd F(tile_m x tile_m, r x r) (a default tile) for desc on ctx's device: checks the
     * context, builds the layer's kernels, transforms weights (a cl_mem), keeps bias (K host
     * floats, or NULL); variant NON_FUSED, FUSED or AUTO (the component chooses). tuned (NULL:
     * none) is the tuning database's entry for the layer: its parameters are taken when they
     * are valid on the device and its kernels build and fit there (else the defaults), and its
     * variant when variant is AUTO. */
    enum wino_status (*create)(const struct wino_conv2d_desc *desc,
                               const struct wino_conv_sizes *sizes, const void *weights,
                               const struct wino_context *ctx, int tile_m,
                               enum wino_variant variant, const float *bias, int relu,
                               const struct wino_opencl_tuned *tuned,
                               struct wino_opencl_conv **conv, size_t *workspace_bytes);
    /* New batch and image sizes (checked): the layer's kernels are built for them, with the
     * same parameters. */
    enum wino_status (*reshape)(struct wino_opencl_conv *conv,
                                const struct wino_conv2d_desc *desc,
                                const struct wino_conv_sizes *sizes, size_t *workspace_bytes);
    /* Enqueues the convolution of the cl_mem x into the cl_mem y on queue (a
     * cl_command_queue of the operator's context and device). */
    enum wino_status (*run)(struct wino_opencl_conv *conv, const void *x, void *y,
                            void *workspace, size_t workspace_bytes, void *queue);
    enum wino_variant (*variant)(const struct wino_opencl_conv *conv);
    void (*destroy)(struct wino_opencl_conv *conv);
    /* Enqueues the transform of new weights (a cl_mem laid out as create's) into the
     * operator's filters on queue, and nothing else. */
    enum wino_status (*set_weights)(struct wino_opencl_conv *conv, const void *weights,
                                    void *queue);
    /* The parameters the operator runs with; *tuned 1 when they are a database entry's. */
    void (*params)(const struct wino_opencl_conv *conv, struct wino_opencl_params *params,
                   int *tuned);
    /* The key of ctx's device in the tuning database ("NAME / DRIVER", no tab or newline),
     * after the checks of create's context. */
    enum wino_status (*device_key)(const struct wino_context *ctx, char *key, size_t cap);
    /* Times the candidate parameters of both variants of F(tile_m, r) for desc (FP32, a
     * default tile) on ctx's device, within search's bounds (src/opencl/tune.c). */
    enum wino_status (*tune)(const struct wino_conv2d_desc *desc, const struct wino_context *ctx,
                             int tile_m, const struct wino_opencl_search *search,
                             struct wino_opencl_tuning *result);
};

/* The component's one export (src/op/component_loader.h's wino_component_entry_fn): its
 * struct wino_opencl_ops, or NULL when services are of another ABI than WINO_OPENCL_ABI. */
const void *wino_opencl_component_entry(const struct wino_component_services *services);

#endif
