/* Backward-filter on the CUDA backend: WinRS in the CUDA component (src/cuda/winrs_cuda.h),
 * planned here with the CPU planner's kernels (section 4.1's fastest pair of F(n, r),
 * src/cpu/winrs_plan.c) and the runtime's tiles, so the component does no planning. FP32, FP16
 * and BF16, stride 1 and dilation 1; everything else is the vendor library's (WINO_UNSUPPORTED). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/tile_matrices.h"
#include "cpu/winrs_f32.h"
#include "cuda/cuda_component.h"
#include "op/conv2d_impl.h"

struct filter_cuda {
    const struct wino_cuda_winrs_ops *ops; /* the loaded component's, looked up once at create */
    struct wino_cuda_winrs *winrs;
    struct wino_winrs_plan kernels; /* what wino_conv2d_backward_filter_info reports */
    int accumulate;
    int fused; /* the fused kernels or the non-fused stages */
};

/* AUTO's choice, made at create: the fused kernels for tensors with K and C in 16-byte pieces
 * (the tensor-core kernel of src/cuda/winrs_fused_nhwc.cu, NCHW x and dy staged in NHWC in the
 * workspace; 16 bits: 1.3-6x faster than
 * the non-fused stages on every 3 x 3 layer of ResNet-18 and VGG-16 at batch 32 on the H100,
 * bench/results/2026-11-24_cuda-*_b32_bwd-filter-nhwc_h100.csv; FP32: faster on 35 of the 40
 * layers of winrs-bfc, 2026-11-25_cuda-f32_winrs-bfc_b32_bwd-filter-tf32_h100.csv); otherwise the fused kernels
 * where K x C is at most FUSED_MAX_BLOCKS blocks of 64 x 64 or dy's maps at most
 * FUSED_MAX_PIXELS, the non-fused stages elsewhere (unless their workspace is too large:
 * NON_FUSED_MAX_WORKSPACE). On
 * the H100 (bench/results/2026-11-23_cuda-*_winrs-bfc_b32_bwd-filter-fused*_h100.csv) the fused
 * kernels won the layers of 64 x 64 and 128 x 128 channels (the non-fused GEMMs have too few
 * blocks there) and tied or won on 7 x 7 maps (short GEMMs, whose U, V and M would take 2 to 5
 * times x + dy + dw as workspace), and lost elsewhere, where cuBLAS's GEMMs outrun their
 * products. */
#define FUSED_MAX_BLOCKS 4
#define FUSED_MAX_PIXELS 64

/* AUTO leaves the non-fused stages for the fused kernels, whatever their speed, where they
 * would need more workspace than this many times x + dy + dw (the fused kernels' buckets stay
 * within half of it). */
#define NON_FUSED_MAX_WORKSPACE 2.0

/* The fused kernels of d run on the tensor-core kernel: in NHWC where x and dy lie on 16-byte
 * boundaries, as allocators give them; NCHW x and dy are staged in NHWC. */
static int tensor_core_kernel(const struct wino_conv2d_desc *d)
{
    const int piece = d->dtype == WINO_DTYPE_F32 ? 4 : 8; /* channels in 16 bytes */
    return d->k % piece == 0 && d->c % piece == 0;
}

static int fused_by_default(const struct wino_conv2d_desc *d, const struct wino_conv_sizes *s)
{
    return tensor_core_kernel(d) ||
           (long)((d->k + 63) / 64) * ((d->c + 63) / 64) <= FUSED_MAX_BLOCKS ||
           (long)s->p * s->q <= FUSED_MAX_PIXELS;
}

/* Appends F(n, r) for units (q0, units) and tiles (j0, tiles) to plan. */
static void add_problem(struct wino_cuda_winrs_plan *plan, int n, int r, int q0, int units,
                        int j0, int tiles, int first)
{
    struct wino_cuda_winrs_problem *p = &plan->p[plan->problems++];
    const struct wino_tile_matrices *t = wino_recorded_tile(n, r);
    const int alpha = n + r - 1;
    memset(p, 0, sizeof *p);
    p->n = n, p->r = r, p->q0 = q0, p->units = units, p->j0 = j0, p->tiles = tiles;
    p->first = first;
    for (int i = 0; i < n * alpha; i++)
        p->at[i] = (float)t->at[i];
    for (int i = 0; i < alpha * r; i++)
        p->g[i] = (float)t->g[i];
    for (int i = 0; i < alpha * alpha; i++)
        p->bt[i] = (float)t->bt[i];
}

/* The largest alpha of an FP16 kernel: beyond it the 16-bit GEMM operands lose the result to
 * rounding (FP16 alpha 16 measured 4.6e-2 relative L1 on a 9x9 layer of 32 x 112 x 112 on the
 * H100, alpha 8 at most 1e-2; bench/results/2026-11-23_cuda-f16-bfc10-bwd-filter_h100.csv). */
#define CUDA_F16_MAX_ALPHA 8

/* The largest alpha of a BF16 kernel, FP16's for a start. BF16 rounds U and V 8 times coarser:
 * alpha 8 measured up to 1.1e-2 relative L1 on the H100 (alpha 4: 3.4e-3), 8x cuDNN's best BF16
 * (bench/results/2026-11-23_cuda-bf16-bfc8-bwd-filter_h100.csv); whether alpha 4 buys that
 * error back at a speed worth it is to be measured on the GPU. */
#define CUDA_BF16_MAX_ALPHA 8

/* The largest alpha of d's kernels on the fused kernels or the non-fused stages (0: any). */
static int max_alpha_of(const struct wino_conv2d_desc *d, int fused)
{
    const int of_dtype = d->dtype == WINO_DTYPE_F16    ? CUDA_F16_MAX_ALPHA
                         : d->dtype == WINO_DTYPE_BF16 ? CUDA_BF16_MAX_ALPHA
                                                       : 0;
    if (!fused)
        return of_dtype;
    return of_dtype && of_dtype < WINO_CUDA_WINRS_FUSED_MAX_ALPHA
               ? of_dtype
               : WINO_CUDA_WINRS_FUSED_MAX_ALPHA;
}

/* The component's plan for d (output width q): per kind of units, its tiles of n taps and the
 * tile of the rest; the first kind with units writes dw, the other adds to it. The tensor-core
 * kernel takes one kind with a partial last unit a row (ragged): its time goes by steps of
 * units whatever alpha (ResNet-18 conv3_x, FP16, H100: 15.6 ns a unit with alpha 8, 14.7 with
 * alpha 4), and a second kind was a launch and a bucket sum of its own, a third of the layer's
 * time (bench/results/2026-11-25_*ragged*). */
static enum wino_status plan_of(const struct wino_conv2d_desc *d, int q, int accumulate,
                                int fused, struct wino_winrs_plan *kernels,
                                struct wino_cuda_winrs_plan *plan)
{
    const struct wino_winrs_request req = {.max_alpha = max_alpha_of(d, fused),
                                           .ragged = fused && tensor_core_kernel(d)};
    enum wino_status st = wino_winrs_plan_kernels(d, q, &req, kernels);
    if (st)
        return st;
    memset(plan, 0, sizeof *plan);
    plan->accumulate = accumulate;
    plan->fused = fused;
    int q0 = 0, written = 0;
    for (int k = 0; k < kernels->kinds; k++) {
        const int n = kernels->n[k], r = kernels->r[k], units = kernels->units[k];
        if (!units)
            continue;
        const int full = d->s / n, rest = d->s % n;
        if (full)
            add_problem(plan, n, r, q0, units, 0, full, !written);
        if (rest)
            add_problem(plan, rest, r, q0, units, full * n, 1, !written);
        written = 1;
        q0 += units * r;
    }
    return WINO_SUCCESS;
}

static enum wino_status run_filter_cuda(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    const struct filter_cuda *f = op->state;
    return f->ops->run(f->winrs, io->in, io->in2, io->out, io->workspace, io->workspace_bytes,
                       io->stream);
}

static enum wino_status reshape_filter_cuda(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                            const struct wino_conv_sizes *sizes, size_t *bytes)
{
    struct filter_cuda *f = op->state;
    struct wino_winrs_plan kernels;
    struct wino_cuda_winrs_plan plan;
    enum wino_status st = plan_of(d, sizes->q, f->accumulate, f->fused, &kernels, &plan);
    if (!st)
        st = f->ops->reshape(f->winrs, d, sizes, &plan, bytes);
    if (st)
        return st;
    f->kernels = kernels;
    op->tile_m = kernels.n[0];
    return WINO_SUCCESS;
}

static void release_filter_cuda(wino_conv2d *op)
{
    struct filter_cuda *f = op->state;
    if (f && f->winrs)
        f->ops->destroy(f->winrs);
    free(f);
}

static enum wino_variant variant_filter_cuda(const wino_conv2d *op)
{
    return ((const struct filter_cuda *)op->state)->fused ? WINO_VARIANT_FUSED
                                                          : WINO_VARIANT_NON_FUSED;
}

static const struct wino_conv2d_path filter_cuda = {run_filter_cuda, reshape_filter_cuda,
                                                    variant_filter_cuda, release_filter_cuda,
                                                    NULL};

/* f's component operator for its variant, planned for desc and sizes. */
static enum wino_status create_winrs(struct filter_cuda *f, const struct wino_conv2d_desc *desc,
                                     const struct wino_conv_sizes *sizes,
                                     const struct wino_context *ctx, size_t *workspace_bytes)
{
    struct wino_cuda_winrs_plan plan;
    const enum wino_status st =
        plan_of(desc, sizes->q, f->accumulate, f->fused, &f->kernels, &plan);
    return st ? st : f->ops->create(desc, sizes, ctx, &plan, &f->winrs, workspace_bytes);
}

/* wino's own backward-filter operator: WinRS with o->variant. */
static enum wino_status winrs_create(const struct wino_conv2d_desc *desc,
                                     const struct wino_conv_sizes *sizes,
                                     const struct wino_context *ctx,
                                     const struct wino_conv2d_options *o, wino_conv2d **op)
{
    const struct wino_cuda_winrs_ops *w = wino_cuda_winrs();
    if (!w)
        return WINO_UNSUPPORTED;
    struct wino_conv2d *c = calloc(1, sizeof *c);
    struct filter_cuda *f = calloc(1, sizeof *f);
    if (!c || !f) {
        free(c);
        free(f);
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_backward_filter_create: out of memory");
    }
    c->path = &filter_cuda;
    c->state = f;
    c->kind = WINO_CONV2D_BACKWARD_FILTER;
    c->backend = WINO_BACKEND_CUDA;
    c->desc = *desc;
    c->sizes = *sizes;
    c->algo = WINO_ALGO_WINOGRAD;
    c->stream = ctx->stream;
    f->ops = w;
    f->accumulate = o->accumulate;
    f->fused = o->variant == WINO_VARIANT_FUSED ||
               (o->variant == WINO_VARIANT_AUTO && fused_by_default(desc, sizes));
    enum wino_status st = create_winrs(f, desc, sizes, ctx, &c->workspace_bytes);
    const double data = (double)wino_dtype_size(desc->dtype) *
                        ((double)sizes->x_elems + sizes->y_elems + sizes->w_elems);
    if (!st && o->variant == WINO_VARIANT_AUTO && !f->fused &&
        (double)c->workspace_bytes > NON_FUSED_MAX_WORKSPACE * data) {
        w->destroy(f->winrs);
        f->winrs = NULL;
        f->fused = 1;
        st = create_winrs(f, desc, sizes, ctx, &c->workspace_bytes);
    }
    if (st) {
        wino_conv2d_destroy(c);
        return st;
    }
    c->tile_m = f->kernels.n[0];
    *op = c;
    return WINO_SUCCESS;
}

/* AUTO's candidate (struct wino_cuda_auto.make): WinRS, which has no tile to choose. */
static enum wino_status make_winrs(const struct wino_cuda_auto *a, int tile_m, wino_conv2d **op)
{
    (void)tile_m;
    return winrs_create(a->desc, a->sizes, a->ctx, a->o, op);
}

enum wino_status wino_backward_filter_create_cuda(const struct wino_conv2d_desc *desc,
                                                  const struct wino_conv_sizes *sizes,
                                                  const struct wino_context *ctx,
                                                  const struct wino_conv2d_options *o,
                                                  wino_conv2d **op)
{
    if (desc->dtype != WINO_DTYPE_F32 && desc->dtype != WINO_DTYPE_F16 &&
        desc->dtype != WINO_DTYPE_BF16)
        return wino_fail(WINO_UNSUPPORTED, "CUDA backward-filter: FP32, FP16 and BF16");
    if (o->algo == WINO_ALGO_DIRECT || o->algo == WINO_ALGO_VENDOR)
        return wino_vendor_create(WINO_CONV2D_BACKWARD_FILTER, desc, sizes, NULL, ctx, o, op);
    if (o->variant == WINO_VARIANT_FUSED_OUTPUT || o->variant == WINO_VARIANT_ROWS)
        return wino_fail(WINO_UNSUPPORTED, "CUDA backward-filter: the variants are FUSED (the "
                                           "default) and NON_FUSED");
    if (desc->stride_h != 1 || desc->stride_w != 1 || desc->dilation_h != 1 ||
        desc->dilation_w != 1) {
        const char *why = "CUDA backward-filter (WinRS) needs stride 1 and dilation 1";
        return wino_options_leave_choice(o)
                   ? wino_vendor_instead(WINO_CONV2D_BACKWARD_FILTER, desc, sizes, NULL, ctx, o,
                                         why, op)
                   : wino_fail(WINO_UNSUPPORTED, "%s: WINO_ALGO_AUTO or VENDOR runs the "
                                                 "vendor's", why);
    }
    if (!wino_options_leave_choice(o))
        return winrs_create(desc, sizes, ctx, o, op);
    const struct wino_cuda_auto a = {WINO_CONV2D_BACKWARD_FILTER, desc, sizes, NULL, ctx, o,
                                     {0}, 1, make_winrs};
    return wino_cuda_auto_create(&a, op);
}

void wino_backward_filter_cuda_info(const wino_conv2d *op, struct wino_winrs_info *info)
{
    if (op->algo != WINO_ALGO_WINOGRAD)
        return; /* the vendor's: no kernels of wino's */
    const struct filter_cuda *f = op->state;
    const struct wino_winrs_plan *k = &f->kernels;
    info->kernels = k->kinds;
    for (int i = 0; i < k->kinds; i++) {
        info->n[i] = k->n[i];
        info->r[i] = k->r[i];
        info->alpha[i] = k->n[i] + k->r[i] - 1;
        info->units[i] = k->units[i];
    }
    info->segments = f->ops->segments(f->winrs);
    info->segment_h = info->segment_w = 0;
}
