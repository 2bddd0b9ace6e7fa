/* The kernel parameters (struct wino_opencl_params, src/opencl/opencl_component.h) against a
 * device's limits: the defaults, which values are valid, and the tuner's candidates. Valid
 * means what the tuner may choose: every value from its list (src/opencl/opencl_params.c), the
 * work-groups and their local memory within the device's limits. A tuning database entry
 * outside that is never built. */
#ifndef WINO_OPENCL_OPENCL_PARAMS_H
#define WINO_OPENCL_OPENCL_PARAMS_H

#include <stddef.h>

#include "opencl/opencl_component.h"
#include "opencl/program_cache.h"

/* What of a device the parameters must respect. */
struct wino_opencl_limits {
    size_t max_group;    /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    size_t max_items[3]; /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
    size_t local_mem;    /* CL_DEVICE_LOCAL_MEM_SIZE, bytes */
    size_t cache;        /* CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, bytes */
};

enum wino_status wino_opencl_limits(cl_device_id device, struct wino_opencl_limits *lim);

/* The defaults for tiles of alpha x alpha on lim (both variants' halves); WINO_UNSUPPORTED
 * when the device's work-groups are too small for them. */
enum wino_status wino_opencl_params_default(const struct wino_opencl_limits *lim, int alpha,
                                            struct wino_opencl_params *p);

/* Why the half of p that variant (NON_FUSED or FUSED) runs is not valid for tiles of alpha x
 * alpha on lim, or NULL. */
const char *wino_opencl_params_refusal(const struct wino_opencl_limits *lim, int alpha,
                                       enum wino_variant variant,
                                       const struct wino_opencl_params *p);

/* The valid parameters that differ from base in variant's half alone, in the order of the
 * value lists: the first cap of them into out (NULL: counted only). Returns how many there
 * are. */
int wino_opencl_params_space(const struct wino_opencl_limits *lim, int alpha,
                             enum wino_variant variant, const struct wino_opencl_params *base,
                             struct wino_opencl_params *out, int cap);

#endif
