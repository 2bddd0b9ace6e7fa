#include "cpu/winograd_f32.h"

#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "core/error.h"

/* Tiles are numbered t = (n * tiles_h + ty) * tiles_w + tx; a tile's input window starts at
 * (ty * m - pad_h, tx * m - pad_w) and its outputs at (ty * m, tx * m). */
struct geometry {
    int tiles_h, tiles_w;
    long tiles;
};

static struct geometry geometry_of(const struct wino_f32_engine *e, int p, int q, int n)
{
    struct geometry g;
    g.tiles_h = (p + e->m - 1) / e->m;
    g.tiles_w = (q + e->m - 1) / e->m;
    g.tiles = (long)n * g.tiles_h * g.tiles_w;
    return g;
}

static size_t round64(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

int wino_f32_engine_has_tile(int m, int r)
{
    return wino_f32_transforms_for(m, r).input != NULL;
}

/* Tiles per fused block: V and M of a block should stay in about 1 MiB of L2. */
static int fused_block(int alpha, int c, int k)
{
    long tb = (1L << 20) / (4L * alpha * alpha * ((long)c + k));
    tb = tb / 16 * 16;
    return (int)(tb < 16 ? 16 : tb > 512 ? 512 : tb);
}

int wino_f32_engine_prefers_fused(int m, int r, const struct wino_conv2d_desc *d, long tiles,
                                  int threads)
{
    const long block = fused_block(m + r - 1, d->c, d->k);
    return (tiles + block - 1) / block >= 2L * threads;
}

enum wino_status wino_f32_engine_prepare(struct wino_f32_engine *e,
                                         const struct wino_conv2d_desc *d, const float *weights,
                                         int m, int fused, int threads)
{
    memset(e, 0, sizeof *e);
    const int r = d->r, a = m + r - 1, C = d->c, K = d->k;
    e->m = m;
    e->r = r;
    e->alpha = a;
    e->fused = fused;
    e->threads = threads;
    e->isa = wino_cpu_isa();
    e->tf = wino_f32_transforms_for(m, r);
    e->tile_block = fused ? fused_block(a, C, K) : 256;
    const size_t kc = (size_t)K * (size_t)C;
    e->U = malloc(sizeof(float) * kc * (size_t)(a * a));
    float *g = malloc(sizeof(float) * kc * (size_t)(r * r));
    if (!e->U || !g) {
        free(g);
        wino_f32_engine_release(e);
        return WINO_OUT_OF_MEMORY;
    }
    /* g[(i * r + j) * K * C + k * C + c]: one lane per (k, c), as the filter transform wants */
    for (int k = 0; k < K; k++)
        for (int c = 0; c < C; c++)
            for (int i = 0; i < r; i++)
                for (int j = 0; j < r; j++)
                    g[(size_t)(i * r + j) * kc + (size_t)k * C + c] =
                        d->layout == WINO_LAYOUT_NCHW
                            ? weights[(((size_t)k * C + c) * r + i) * r + j]
                            : weights[(((size_t)k * r + i) * r + j) * C + c];
    for (int k = 0; k < K; k++) /* U[(e * K + k) * C + c] */
        e->tf.filter(g + (size_t)k * C, (ptrdiff_t)(r * kc), (ptrdiff_t)kc, e->U + (size_t)k * C,
                     (ptrdiff_t)(a * kc), (ptrdiff_t)kc, C);
    free(g);
    return WINO_SUCCESS;
}

void wino_f32_engine_release(struct wino_f32_engine *e)
{
    free(e->U);
    memset(e, 0, sizeof *e);
}

/* Per-thread buffers and, for the non-fused variant, the shared V and M. */
struct layout {
    size_t gather, vblock, mblock, yblock, scratch; /* per-thread, bytes */
    size_t per_thread, shared_v, shared_m, total;
};

static int make_layout(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d,
                       long tiles, struct layout *l)
{
    const size_t aa = (size_t)e->alpha * (size_t)e->alpha, tb = (size_t)e->tile_block;
    const size_t C = (size_t)d->c, K = (size_t)d->k, T = (size_t)tiles;
    size_t v, mm;
    memset(l, 0, sizeof *l);
    l->gather = round64(4 * aa * tb);
    l->yblock = round64(4 * (size_t)e->m * (size_t)e->m * tb);
    l->scratch = round64(wino_f32_gemm_scratch_bytes(e->isa, d->k, e->tile_block, d->c));
    if (e->fused) {
        if (wino_mul_size(4 * aa * tb, C, &v) || wino_mul_size(4 * aa * tb, K, &mm))
            return -1;
        l->vblock = round64(v);
        l->mblock = round64(mm);
    } else if (wino_mul_size(4 * aa * C, T, &v) || wino_mul_size(4 * aa * K, T, &mm)) {
        return -1;
    } else {
        l->shared_v = round64(v);
        l->shared_m = round64(mm);
    }
    l->per_thread = l->gather + l->vblock + l->mblock + l->yblock + l->scratch;
    size_t all;
    if (wino_mul_size(l->per_thread, (size_t)e->threads, &all) ||
        all > SIZE_MAX - l->shared_v - l->shared_m)
        return -1;
    l->total = all + l->shared_v + l->shared_m;
    return 0;
}

size_t wino_f32_engine_workspace_bytes(const struct wino_f32_engine *e,
                                       const struct wino_conv2d_desc *d, int p, int q,
                                       int *overflow)
{
    struct layout l;
    *overflow = make_layout(e, d, geometry_of(e, p, q, d->n).tiles, &l) != 0;
    return *overflow ? 0 : l.total;
}

/* Input tiles t0 .. t0 + nt - 1 of channel c into g[(i * alpha + j) * tile_block + l]. */
static void gather_input(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d,
                         const struct geometry *gm, const float *x, int c, long t0, int nt,
                         float *g)
{
    const int a = e->alpha, H = d->h, W = d->w, C = d->c, ld = e->tile_block;
    const int nhwc = d->layout == WINO_LAYOUT_NHWC;
    for (int l = 0; l < nt; l++) {
        const long t = t0 + l, per_image = (long)gm->tiles_h * gm->tiles_w;
        const int n = (int)(t / per_image), rem = (int)(t % per_image);
        const int h0 = rem / gm->tiles_w * e->m - d->pad_h, w0 = rem % gm->tiles_w * e->m - d->pad_w;
        for (int i = 0; i < a; i++) {
            const int h = h0 + i;
            for (int j = 0; j < a; j++) {
                const int w = w0 + j;
                float v = 0.0f;
                if (h >= 0 && h < H && w >= 0 && w < W)
                    v = nhwc ? x[(((size_t)n * H + h) * W + w) * C + c]
                             : x[(((size_t)n * C + c) * H + h) * W + w];
                g[(size_t)(i * a + j) * ld + l] = v;
            }
        }
    }
}

/* Output tiles of channel k from yb[(i * m + j) * tile_block + l] into y, cropped. */
static void scatter_output(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d,
                           const struct geometry *gm, int p, int q, float *y, int k, long t0,
                           int nt, const float *yb)
{
    const int m = e->m, K = d->k, ld = e->tile_block;
    const int nhwc = d->layout == WINO_LAYOUT_NHWC;
    for (int l = 0; l < nt; l++) {
        const long t = t0 + l, per_image = (long)gm->tiles_h * gm->tiles_w;
        const int n = (int)(t / per_image), rem = (int)(t % per_image);
        const int p0 = rem / gm->tiles_w * m, q0 = rem % gm->tiles_w * m;
        for (int i = 0; i < m && p0 + i < p; i++)
            for (int j = 0; j < m && q0 + j < q; j++) {
                const size_t o = nhwc ? (((size_t)n * p + p0 + i) * q + q0 + j) * K + k
                                      : (((size_t)n * K + k) * p + p0 + i) * q + q0 + j;
                y[o] = yb[(size_t)(i * m + j) * ld + l];
            }
    }
}

/* V[((i * alpha + j) * C + c) * ldv + voff + l] = input transform of tiles t0 .. t0 + nt - 1. */
static void input_stage(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d,
                        const struct geometry *gm, const float *x, int c, long t0, int nt,
                        float *g, float *v, size_t ldv, size_t voff)
{
    const size_t C = (size_t)d->c, ld = (size_t)e->tile_block;
    gather_input(e, d, gm, x, c, t0, nt, g);
    e->tf.input(g, (ptrdiff_t)(e->alpha * ld), (ptrdiff_t)ld, v + c * ldv + voff,
                (ptrdiff_t)(e->alpha * C * ldv), (ptrdiff_t)(C * ldv), nt);
}

/* Output transform of channel k for tiles t0 .. t0 + nt - 1 of M (laid out like V). */
static void output_stage(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d,
                         const struct geometry *gm, int p, int q, float *y, int k, long t0,
                         int nt, const float *mm, size_t ldm, size_t moff, float *yb)
{
    const size_t K = (size_t)d->k, ld = (size_t)e->tile_block;
    e->tf.output(mm + k * ldm + moff, (ptrdiff_t)(e->alpha * K * ldm), (ptrdiff_t)(K * ldm), yb,
                 (ptrdiff_t)(e->m * ld), (ptrdiff_t)ld, nt);
    scatter_output(e, d, gm, p, q, y, k, t0, nt, yb);
}

/* M[e] (K x nt) = U[e] (K x C) * V[e] (C x nt) for every e in [0, alpha^2). */
static void gemm_stage(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d, int pos,
                       int nt, const float *v, size_t ldv, size_t voff, float *mm, size_t ldm,
                       size_t moff, void *scratch)
{
    const size_t C = (size_t)d->c, K = (size_t)d->k;
    wino_f32_gemm(e->isa, d->k, nt, d->c, e->U + (size_t)pos * K * C, (ptrdiff_t)C,
                  v + (size_t)pos * C * ldv + voff, (ptrdiff_t)ldv,
                  mm + (size_t)pos * K * ldm + moff, (ptrdiff_t)ldm, 0, scratch);
}

static void run_fused(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d, int p,
                      int q, const struct geometry *gm, const struct layout *l, const float *x,
                      float *y, char *ws)
{
    const int tb = e->tile_block, aa = e->alpha * e->alpha;
    const long blocks = (gm->tiles + tb - 1) / tb;
#pragma omp parallel for num_threads(e->threads) schedule(dynamic)
    for (long b = 0; b < blocks; b++) {
        char *mine = ws + (size_t)omp_get_thread_num() * l->per_thread;
        float *g = (float *)mine, *v = (float *)(mine + l->gather);
        float *mm = (float *)(mine + l->gather + l->vblock);
        float *yb = (float *)(mine + l->gather + l->vblock + l->mblock);
        void *scratch = mine + l->gather + l->vblock + l->mblock + l->yblock;
        const long t0 = b * tb;
        const int nt = (int)(gm->tiles - t0 < tb ? gm->tiles - t0 : tb);
        for (int c = 0; c < d->c; c++)
            input_stage(e, d, gm, x, c, t0, nt, g, v, (size_t)tb, 0);
        for (int pos = 0; pos < aa; pos++)
            gemm_stage(e, d, pos, nt, v, (size_t)tb, 0, mm, (size_t)tb, 0, scratch);
        for (int k = 0; k < d->k; k++)
            output_stage(e, d, gm, p, q, y, k, t0, nt, mm, (size_t)tb, 0, yb);
    }
}

static void run_non_fused(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d,
                          int p, int q, const struct geometry *gm, const struct layout *l,
                          const float *x, float *y, char *ws)
{
    const int tb = e->tile_block, aa = e->alpha * e->alpha;
    const long chunks = (gm->tiles + tb - 1) / tb, T = gm->tiles;
    float *v = (float *)(ws + l->per_thread * (size_t)e->threads);
    float *mm = (float *)((char *)v + l->shared_v);
#pragma omp parallel num_threads(e->threads)
    {
        char *mine = ws + (size_t)omp_get_thread_num() * l->per_thread;
        float *g = (float *)mine, *yb = (float *)(mine + l->gather);
        void *scratch = mine + l->gather + l->yblock;
#pragma omp for schedule(dynamic)
        for (long w = 0; w < chunks * d->c; w++) {
            const long t0 = w / d->c * tb;
            const int nt = (int)(T - t0 < tb ? T - t0 : tb);
            input_stage(e, d, gm, x, (int)(w % d->c), t0, nt, g, v, (size_t)T, (size_t)t0);
        }
#pragma omp for schedule(dynamic)
        for (long w = 0; w < chunks * aa; w++) {
            const long t0 = w / aa * tb;
            const int nt = (int)(T - t0 < tb ? T - t0 : tb);
            gemm_stage(e, d, (int)(w % aa), nt, v, (size_t)T, (size_t)t0, mm, (size_t)T,
                       (size_t)t0, scratch);
        }
#pragma omp for schedule(dynamic)
        for (long w = 0; w < chunks * d->k; w++) {
            const long t0 = w / d->k * tb;
            const int nt = (int)(T - t0 < tb ? T - t0 : tb);
            output_stage(e, d, gm, p, q, y, (int)(w % d->k), t0, nt, mm, (size_t)T, (size_t)t0,
                         yb);
        }
    }
}

void wino_f32_engine_run(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d, int p,
                         int q, const float *x, float *y, void *ws)
{
    const struct geometry gm = geometry_of(e, p, q, d->n);
    struct layout l;
    make_layout(e, d, gm.tiles, &l); /* cannot fail: workspace_bytes succeeded at create */
    if (e->fused)
        run_fused(e, d, p, q, &gm, &l, x, y, ws);
    else
        run_non_fused(e, d, p, q, &gm, &l, x, y, ws);
}
