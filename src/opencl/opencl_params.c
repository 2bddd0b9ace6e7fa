/* The kernel parameters' defaults, valid values and search space
 * (src/opencl/opencl_params.h). */
#include "opencl/opencl_params.h"

#include <string.h>

#include "base/error.h"

/* The values the tuner tries, powers of two around the defaults. */
static const int gemm_tiles[] = {16, 32, 64, 128};   /* gemm_bm, gemm_bn */
static const int gemm_per_item[] = {1, 2, 4, 8};     /* gemm_rm, gemm_rn */
static const int gemm_steps[] = {4, 8, 16, 32};      /* gemm_bk with local staging */
static const int gemm_chunks[] = {8, 16, 32, 64, 128}; /* gemm_chunk, MiB */
static const int fused_tiles[] = {8, 16, 32, 64};    /* fused_ft, fused_fk */
static const int fused_per_item[] = {1, 2, 4, 8};    /* fused_kpt */
static const int fused_steps[] = {1, 2, 4, 8, 16};   /* fused_fc */
#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

/* Without local staging the GEMM reads one channel at a time: gemm_bk is unused and kept at
 * the default, so that one candidate stands for them all. */
#define GEMM_BK_UNSTAGED 8
/* The default chunk's MiB when the device's cache is smaller: below, the launches of many
 * chunks cost more than the memory traffic they save (NVIDIA's drivers report a cache smaller
 * than the H100's 50 MB L2). */
#define MIN_DEFAULT_CHUNK 16
/* Smaller work-groups leave most of a device idle. */
#define MIN_GROUP 16
/* Private accumulators of a fused work-item, fused_kpt x alpha^2: the default's largest (4 x
 * 36); beyond, they spill out of registers. */
#define MAX_FUSED_ACCUMULATORS 144

enum wino_status wino_opencl_limits(cl_device_id device, struct wino_opencl_limits *lim)
{
    cl_ulong local = 0, cache = 0;
    memset(lim, 0, sizeof *lim);
    if (clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof lim->max_group,
                        &lim->max_group, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof lim->max_items,
                        lim->max_items, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL) !=
            CL_SUCCESS ||
        clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof cache, &cache, NULL) !=
            CL_SUCCESS)
        return wino_fail(WINO_INVALID_ARGUMENT, "cl_device is not an OpenCL device");
    lim->local_mem = (size_t)local;
    lim->cache = (size_t)cache;
    return WINO_SUCCESS;
}

static int listed(int v, const int *list, int n)
{
    for (int i = 0; i < n; i++)
        if (list[i] == v)
            return 1;
    return 0;
}

static const char *gemm_refusal(const struct wino_opencl_limits *lim,
                                const struct wino_opencl_params *p)
{
    if (!listed(p->gemm_bm, gemm_tiles, COUNT(gemm_tiles)) ||
        !listed(p->gemm_bn, gemm_tiles, COUNT(gemm_tiles)) ||
        !listed(p->gemm_rm, gemm_per_item, COUNT(gemm_per_item)) ||
        !listed(p->gemm_rn, gemm_per_item, COUNT(gemm_per_item)) ||
        !listed(p->gemm_chunk, gemm_chunks, COUNT(gemm_chunks)) ||
        (p->gemm_local != 0 && p->gemm_local != 1) ||
        (p->gemm_local ? !listed(p->gemm_bk, gemm_steps, COUNT(gemm_steps))
                       : p->gemm_bk != GEMM_BK_UNSTAGED))
        return "a GEMM parameter outside its list";
    const size_t rows = (size_t)(p->gemm_bm / p->gemm_rm), cols = (size_t)(p->gemm_bn / p->gemm_rn);
    if (rows * cols < MIN_GROUP || rows * cols > lim->max_group || cols > lim->max_items[0] ||
        rows > lim->max_items[1])
        return "a GEMM work-group outside the device's limits";
    /* two buffers of staged rows padded by 4 floats (src/opencl/winograd_float.cl) */
    if (p->gemm_local &&
        2 * sizeof(float) * (size_t)p->gemm_bk * (size_t)(p->gemm_bm + p->gemm_bn + 8) >
            lim->local_mem)
        return "GEMM tiles larger than the device's local memory";
    return NULL;
}

static const char *fused_refusal(const struct wino_opencl_limits *lim, int alpha,
                                 const struct wino_opencl_params *p)
{
    const size_t alpha2 = (size_t)alpha * (size_t)alpha;
    if (!listed(p->fused_ft, fused_tiles, COUNT(fused_tiles)) ||
        !listed(p->fused_fk, fused_tiles, COUNT(fused_tiles)) ||
        !listed(p->fused_kpt, fused_per_item, COUNT(fused_per_item)) ||
        !listed(p->fused_fc, fused_steps, COUNT(fused_steps)) || p->fused_kpt > p->fused_fk ||
        (size_t)p->fused_kpt * alpha2 > MAX_FUSED_ACCUMULATORS)
        return "a fused parameter outside its list";
    const size_t group = (size_t)p->fused_ft * (size_t)(p->fused_fk / p->fused_kpt);
    if (group < MIN_GROUP || group > lim->max_group || group > lim->max_items[0])
        return "a fused work-group outside the device's limits";
    if (sizeof(float) * alpha2 * (size_t)p->fused_fc * (size_t)p->fused_ft > lim->local_mem)
        return "fused tiles larger than the device's local memory";
    return NULL;
}

const char *wino_opencl_params_refusal(const struct wino_opencl_limits *lim, int alpha,
                                       enum wino_variant variant,
                                       const struct wino_opencl_params *p)
{
    return variant == WINO_VARIANT_FUSED ? fused_refusal(lim, alpha, p) : gemm_refusal(lim, p);
}

enum wino_status wino_opencl_params_default(const struct wino_opencl_limits *lim, int alpha,
                                            struct wino_opencl_params *p)
{
    const int alpha2 = alpha * alpha;
    /* 8 x 16 work-items of 4 x 4 outputs (32 tiles x 64 channels), 16 channels a step: 16
     * accumulators each, 13 KiB of local memory: of eight shapes timed on an H100, the
     * fastest on three of ResNet-18's four layers at batch 32 with F(7x7, 3x3), 15% behind on
     * conv4_x (docs/opencl.md) */
    p->gemm_bm = 32;
    p->gemm_bn = 64;
    p->gemm_rm = p->gemm_rn = 4;
    p->gemm_bk = 16;
    p->gemm_local = 1;
    /* V and M of a chunk within the device's cache, but not below MIN_DEFAULT_CHUNK */
    p->gemm_chunk = MIN_DEFAULT_CHUNK;
    for (int i = 0; i < COUNT(gemm_chunks); i++)
        if (gemm_chunks[i] > p->gemm_chunk && ((size_t)gemm_chunks[i] << 20) <= lim->cache)
            p->gemm_chunk = gemm_chunks[i];
    /* 16 tiles x 16 channels; 4 channels of alpha^2 accumulators per work-item up to alpha 6,
     * fewer beyond so that they stay in registers; channel steps as half the local memory
     * allows (two work-groups may share a compute unit) */
    p->fused_ft = 16;
    p->fused_fk = 16;
    p->fused_kpt = alpha2 <= 36 ? 4 : alpha2 <= 64 ? 2 : 1;
    p->fused_fc = 8;
    while (p->fused_fc > 1 &&
           sizeof(float) * (size_t)alpha2 * p->fused_fc * p->fused_ft > lim->local_mem / 2)
        p->fused_fc /= 2;
    if (gemm_refusal(lim, p) || fused_refusal(lim, alpha, p))
        return wino_fail(WINO_UNSUPPORTED, "OpenCL: the device's work-groups (%zu work-items, "
                         "%zu bytes of local memory) are too small for these kernels",
                         lim->max_group, lim->local_mem);
    return WINO_SUCCESS;
}

/* Adds c to out (when there is room) if it is valid for variant and not base; returns the new
 * count. */
static int add(const struct wino_opencl_limits *lim, int alpha, enum wino_variant variant,
               const struct wino_opencl_params *base, const struct wino_opencl_params *c,
               struct wino_opencl_params *out, int cap, int n)
{
    if (wino_opencl_params_refusal(lim, alpha, variant, c) || !memcmp(c, base, sizeof *c))
        return n;
    if (out && n < cap)
        out[n] = *c;
    return n + 1;
}

int wino_opencl_params_space(const struct wino_opencl_limits *lim, int alpha,
                             enum wino_variant variant, const struct wino_opencl_params *base,
                             struct wino_opencl_params *out, int cap)
{
    struct wino_opencl_params c = *base;
    int n = 0;
    if (variant == WINO_VARIANT_FUSED) {
        for (int a = 0; a < COUNT(fused_tiles); a++)
            for (int b = 0; b < COUNT(fused_tiles); b++)
                for (int k = 0; k < COUNT(fused_per_item); k++)
                    for (int s = 0; s < COUNT(fused_steps); s++) {
                        c.fused_ft = fused_tiles[a];
                        c.fused_fk = fused_tiles[b];
                        c.fused_kpt = fused_per_item[k];
                        c.fused_fc = fused_steps[s];
                        n = add(lim, alpha, variant, base, &c, out, cap, n);
                    }
        return n;
    }
    for (int a = 0; a < COUNT(gemm_tiles); a++)
        for (int b = 0; b < COUNT(gemm_tiles); b++)
            for (int i = 0; i < COUNT(gemm_per_item); i++)
                for (int j = 0; j < COUNT(gemm_per_item); j++)
                    for (int s = 0; s <= COUNT(gemm_steps); s++)
                        for (int h = 0; h < COUNT(gemm_chunks); h++) {
                            c.gemm_bm = gemm_tiles[a];
                            c.gemm_bn = gemm_tiles[b];
                            c.gemm_rm = gemm_per_item[i];
                            c.gemm_rn = gemm_per_item[j];
                            /* the last step stands for no local staging */
                            c.gemm_local = s < COUNT(gemm_steps);
                            c.gemm_bk = c.gemm_local ? gemm_steps[s] : GEMM_BK_UNSTAGED;
                            c.gemm_chunk = gemm_chunks[h];
                            n = add(lim, alpha, variant, base, &c, out, cap, n);
                        }
    return n;
}
