#include "cpu/winrs_f32.h"

#include <stdlib.h>
#include <string.h>

#include "base/conv_desc.h"
#include "base/error.h"
#include "base/tile_matrices.h"
#include "cpu/backward_filter_f32.h"
#include "cpu/backward_layout.h"
#include "cpu/backward_parallel.h"

#define LANES 16
/* Channels per block of K and of C: a block's GEMMs are up to 64 x 64 x units. */
#define CHANNEL_BLOCK 64
#define MIN_BLOCK 32
/* Units per chunk: the GEMMs' k, and the columns of U and rows of V kept per thread. */
#define CHUNK_UNITS 64
/* Accumulators M of one work item, in bytes: the rows of dW it covers are fit to this. */
#define M_BUDGET ((size_t)1 << 20)
/* Per-thread scratch, and filter rows, beyond which WinRS declines (very wide filters): the
 * direct path serves them. */
#define THREAD_LIMIT ((size_t)256 << 20)
#define MAX_WIDTH 4096

/* Per-thread scratch, in order: U (per kernel: alpha x lb x kbp, [a][l][k]), V (per tile: alpha
 * x vcap x cbp, [a][unit of a row of x][c]), M (per row of dW and tile: alpha x kbp x cbp), the
 * staged dy (columns x kbp) and x (columns x cbp) of one piece of a row, an output transform's
 * result (n x cbp), the pieces, runs and GEMM spans of a chunk. Channel blocks are padded to 16
 * with zeros, which the GEMMs carry along instead of handling edges. */

/* A run of units of one row of dy inside a chunk: image n, row p, units [u0, u1) of the
 * segment's row, the first at column l0 of the chunk. */
struct piece {
    int n, p, u0, u1, l0;
};

/* The pieces of a chunk that share one layout of V: pieces [e0, e1), consecutive rows of one
 * image, need the rows [h0, h1) of x (those inside the image), each for units [u0, u1) of the
 * segment's row; unit u of row h has row base + (h - h0) * (u1 - u0) + u - u0 of V. */
struct run {
    int e0, e1, h0, h1, u0, u1, base;
};

static size_t round64(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

static int round_lanes(int x)
{
    return (x + LANES - 1) / LANES * LANES;
}

static void matrix_release(struct wino_winrs_matrix *m)
{
    free(m->start);
    free(m->mid);
    free(m->col);
    free(m->paired);
    free(m->val);
    memset(m, 0, sizeof *m);
}

static void kernel_release(struct wino_winrs_kernel *k)
{
    matrix_release(&k->at);
    matrix_release(&k->g);
    matrix_release(&k->bt);
    memset(k, 0, sizeof *k);
}

/* Whether row b of a rows x cols matrix equals row a up to the sign of each entry (and is not
 * zero: a pair must save something). */
static int mirrors(const double *exact, int cols, int a, int b)
{
    int nonzero = 0;
    for (int t = 0; t < cols; t++) {
        const double x = exact[(size_t)a * cols + t], y = exact[(size_t)b * cols + t];
        if (x != y && x != -y)
            return 0;
        nonzero |= x != 0.0;
    }
    return nonzero;
}

/* A rows x cols matrix of a tile, rounded to float, as rows of its nonzero entries (exact zeros
 * of the generator's rationals stay zero in float) in the parts the transform sums apart. */
static enum wino_status matrix_make(const double *exact, int rows, int cols,
                                    struct wino_winrs_matrix *m)
{
    m->rows = rows, m->cols = cols;
    const size_t entries = (size_t)rows * cols;
    m->start = malloc(sizeof(int) * (size_t)(rows + 1));
    m->mid = malloc(sizeof(int) * (size_t)rows);
    m->col = malloc(sizeof(int) * entries);
    m->paired = calloc((size_t)rows, 1);
    m->val = malloc(sizeof(float) * entries);
    if (!m->start || !m->mid || !m->col || !m->paired || !m->val)
        return WINO_OUT_OF_MEMORY;
    int e = 0;
    for (int a = 0; a < rows; a++) {
        const double *row = exact + (size_t)a * cols, *next = row + cols;
        m->start[a] = e;
        if (a > 0 && m->paired[a - 1]) { /* computed with row a - 1 */
            m->mid[a] = e;
            continue;
        }
        m->paired[a] = a + 1 < rows && mirrors(exact, cols, a, a + 1);
        /* part E, then O: paired, the entries of equal and of opposite sign in the next row;
         * else every other entry */
        int seen = 0;
        for (int part = 0; part < 2; part++) {
            if (part)
                m->mid[a] = e;
            for (int t = 0; t < cols; t++) {
                if (row[t] == 0.0)
                    continue;
                const int in_o = m->paired[a] ? next[t] != row[t] : seen++ % 2;
                if (in_o == part) {
                    m->col[e] = t;
                    m->val[e++] = (float)row[t];
                }
            }
            seen = 0;
        }
    }
    m->start[rows] = e;
    return WINO_SUCCESS;
}

/* F(n, r) on the recorded points. */
static enum wino_status kernel_make(int n, int r, struct wino_winrs_kernel *k)
{
    const struct wino_tile_matrices *tile = wino_recorded_tile(n, r);
    if (!tile)
        return wino_fail(WINO_INTERNAL_ERROR, "WinRS: no tile F(%d, %d)", n, r);
    const int alpha = n + r - 1;
    k->n = n, k->r = r, k->alpha = alpha;
    enum wino_status st = matrix_make(tile->at, n, alpha, &k->at);
    if (!st)
        st = matrix_make(tile->g, alpha, r, &k->g);
    if (!st)
        st = matrix_make(tile->bt, alpha, alpha, &k->bt);
    if (st)
        kernel_release(k);
    return st == WINO_OUT_OF_MEMORY ? wino_fail(st, "WinRS: out of memory") : st;
}

/* The sum of alpha over the tiles of a filter row, and where tile t's alphas start in it. */
static int tiles_of(const struct wino_winrs_kind *kd)
{
    return kd->full + (kd->rest > 0);
}

static const struct wino_winrs_kernel *tile_kernel(const struct wino_winrs_kind *kd, int t)
{
    return &kd->kernel[t < kd->full ? 0 : 1];
}

static int alpha_offset(const struct wino_winrs_kind *kd, int t)
{
    return t <= kd->full ? t * kd->kernel[0].alpha
                         : kd->full * kd->kernel[0].alpha + kd->kernel[1].alpha;
}

enum wino_status wino_f32_winrs_prepare(struct wino_f32_winrs *w,
                                        const struct wino_conv2d_desc *d, int threads,
                                        int accumulate, const struct wino_winrs_request *req)
{
    memset(w, 0, sizeof *w);
    struct wino_conv_sizes sz;
    enum wino_status st = wino_conv_desc_check(d, &sz);
    if (!st && d->s > MAX_WIDTH)
        st = wino_fail(WINO_UNSUPPORTED, "WinRS: filter rows of %d taps (over %d)", d->s,
                       MAX_WIDTH);
    if (!st && req && req->ragged)
        st = wino_fail(WINO_INVALID_ARGUMENT, "WinRS on the CPU: plans cover each row exactly "
                                              "(no ragged units)");
    if (!st)
        st = wino_winrs_plan_kernels(d, sz.q, req, &w->plan);
    if (st)
        return st;
    w->threads = threads;
    w->isa = wino_cpu_isa();
    w->accumulate = accumulate;
    w->lb = CHUNK_UNITS;
    int alpha_max = 1, r_max = 1, u_floats = 0;
    for (int k = 0; k < w->plan.kinds; k++) {
        struct wino_winrs_kind *kd = &w->kind[k];
        kd->r = w->plan.r[k];
        kd->n = w->plan.n[k];
        kd->units = w->plan.units[k];
        kd->full = d->s / kd->n;
        kd->rest = d->s % kd->n;
        st = kernel_make(kd->n, kd->r, &kd->kernel[0]);
        if (!st && kd->rest)
            st = kernel_make(kd->rest, kd->r, &kd->kernel[1]);
        if (st) {
            wino_f32_winrs_release(w);
            return st;
        }
        const int sum = alpha_offset(kd, tiles_of(kd));
        w->sum_alpha = sum > w->sum_alpha ? sum : w->sum_alpha;
        alpha_max = kd->kernel[0].alpha > alpha_max ? kd->kernel[0].alpha : alpha_max;
        r_max = kd->r > r_max ? kd->r : r_max;
        const int u = kd->kernel[0].alpha + kd->kernel[1].alpha;
        u_floats = u > u_floats ? u : u_floats;
    }
    /* channel blocks of CHANNEL_BLOCK, and the rows of dW per work item that keep M within its
     * budget; then the segments (Algorithms 1 and 2) for four items per thread. When the
     * buckets' budget leaves threads fewer items than that, the blocks are halved, down to
     * MIN_BLOCK (each halving costs more transforms and smaller GEMMs, but no workspace). */
    size_t m_row;
    for (int block = CHANNEL_BLOCK;; block /= 2) {
        w->kblocks = (d->k - 1) / block + 1; /* rounded up without overflow near INT_MAX */
        w->cblocks = (d->c - 1) / block + 1;
        w->kb = (d->k - 1) / w->kblocks + 1;
        w->cb = (d->c - 1) / w->cblocks + 1;
        w->kbp = round_lanes(w->kb);
        w->cbp = round_lanes(w->cb);
        m_row = sizeof(float) * (size_t)w->sum_alpha * w->kbp * w->cbp;
        w->rows_per_item = (int)(M_BUDGET / m_row < 1 ? 1 : M_BUDGET / m_row);
        if (w->rows_per_item > d->r)
            w->rows_per_item = d->r;
        w->row_groups = (d->r + w->rows_per_item - 1) / w->rows_per_item;
        w->rows_per_item = (d->r + w->row_groups - 1) / w->row_groups;
        const long items = (long)w->kblocks * w->cblocks * w->row_groups;
        wino_winrs_plan_segments(d, sz.p, sz.q, items, threads, req, &w->plan);
        if (block <= MIN_BLOCK || items * w->plan.bands * w->plan.columns >= 4L * threads)
            break;
    }
    w->segments = w->plan.bands * w->plan.columns;
    if (!(w->seg = malloc(sizeof *w->seg * (size_t)w->segments))) {
        wino_f32_winrs_release(w);
        return wino_fail(WINO_OUT_OF_MEMORY, "WinRS: out of memory");
    }
    const int wide = w->kind[0].units * w->kind[0].r; /* the columns of kind 0 */
    for (int b = 0, z = 0; b < w->plan.bands; b++)
        for (int c = 0; c < w->plan.columns; c++, z++) {
            struct wino_winrs_segment *s = &w->seg[z];
            const int last = c + 1 == w->plan.columns;
            s->p0 = b * w->plan.segment_h;
            s->p1 = b + 1 == w->plan.bands ? sz.p : s->p0 + w->plan.segment_h;
            s->q0 = c * w->plan.segment_w;
            s->qs = last ? wide : s->q0 + w->plan.segment_w;
            s->q1 = last ? sz.q : s->qs; /* the last column takes the units of kind 1 */
        }
    const size_t lb = (size_t)w->lb, piece_cols = lb * (size_t)r_max;
    /* rows of V: a chunk of lb units in rows of at most row_units units meets at most
     * rows_per_item more rows of x per image, and one piece alone always fits */
    int row_units = w->plan.segment_w / w->plan.r[0];
    row_units = w->plan.units[1] > row_units ? w->plan.units[1] : row_units;
    row_units = row_units < w->lb ? row_units : w->lb;
    w->vcap = w->lb + w->rows_per_item * row_units;
    const size_t parts[9] = {
        sizeof(float) * (size_t)u_floats * lb * w->kbp,
        sizeof(float) * (size_t)w->sum_alpha * w->vcap * w->cbp,
        m_row * (size_t)w->rows_per_item,
        sizeof(float) * piece_cols * w->kbp,
        sizeof(float) * (piece_cols + (size_t)d->s - 1) * w->cbp,
        sizeof(float) * (size_t)alpha_max * w->cbp,
        sizeof(struct piece) * lb,
        sizeof(struct run) * lb,
        sizeof(struct wino_winrs_span) * lb};
    size_t *offsets[9] = {NULL,        &w->off_v,      &w->off_m,    &w->off_sdy,  &w->off_sx,
                          &w->off_tmp, &w->off_pieces, &w->off_runs, &w->off_spans};
    for (int i = 0; i < 9; i++) {
        if (offsets[i])
            *offsets[i] = w->thread_bytes;
        w->thread_bytes += round64(parts[i]);
    }
    w->bucket_floats = round64(sizeof(float) * sz.w_elems) / sizeof(float);
    if (w->thread_bytes > THREAD_LIMIT) {
        wino_f32_winrs_release(w);
        return wino_fail(WINO_UNSUPPORTED, "WinRS: a %dx%d filter needs over %zu MiB of buffers "
                         "per thread", d->r, d->s, THREAD_LIMIT >> 20);
    }
    return WINO_SUCCESS;
}

void wino_f32_winrs_release(struct wino_f32_winrs *w)
{
    for (int k = 0; k < 2; k++) {
        kernel_release(&w->kind[k].kernel[0]);
        kernel_release(&w->kind[k].kernel[1]);
    }
    free(w->seg);
    memset(w, 0, sizeof *w);
}

size_t wino_f32_winrs_workspace_bytes(const struct wino_f32_winrs *w)
{
    return w->thread_bytes * (size_t)w->threads +
           sizeof(float) * w->bucket_floats * (size_t)(w->segments - 1);
}

/* dst[col][ch] (ld floats per column) = element (ch, v0 + col) of one image row whose element
 * (0, 0) is at src, for ch < nch and col < ncols; zero for columns outside [0, width) and for
 * ch in [nch, ld). */
static void stage(const float *src, ptrdiff_t ch_stride, ptrdiff_t col_stride, int v0, int ncols,
                  int width, int nch, int ld, float *dst)
{
    for (int col = 0; col < ncols; col++) {
        const int v = v0 + col;
        float *out = dst + (size_t)col * ld;
        if (v < 0 || v >= width)
            memset(out, 0, sizeof(float) * (size_t)ld);
        else if (ch_stride == 1)
            memcpy(out, src + v * col_stride, sizeof(float) * (size_t)nch);
        if (v >= 0 && v < width)
            memset(out + nch, 0, sizeof(float) * (size_t)(ld - nch));
    }
    if (ch_stride != 1)
        for (int ch = 0; ch < nch; ch++)
            for (int col = 0; col < ncols; col++) {
                const int v = v0 + col;
                if (v >= 0 && v < width)
                    dst[(size_t)col * ld + ch] = src[ch * ch_stride + v * col_stride];
            }
}

/* The channel vectors of columns v0 .. v0 + ncols - 1 of one image row, as stage() lays them
 * out: read in place (returned, *stride = col_stride) when the channels are contiguous, the
 * block fills its vectors and every column is inside the image; else staged into dst. */
static const float *channel_rows(const float *src, ptrdiff_t ch_stride, ptrdiff_t col_stride,
                                 int v0, int ncols, int width, int nch, int ld, float *dst,
                                 ptrdiff_t *stride)
{
    if (ch_stride == 1 && nch == ld && v0 >= 0 && v0 + ncols <= width) {
        *stride = col_stride;
        return src + v0 * col_stride;
    }
    stage(src, ch_stride, col_stride, v0, ncols, width, nch, ld, dst);
    *stride = ld;
    return dst;
}

/* Asks the cache for cols columns of floats floats each, column c at first + c * stride: the
 * transforms read x and dy in place, a column (a vector of channels) at a time, one window
 * after the other, which the hardware prefetchers miss (3% on the 56 x 56 maps on Zen 3). */
static void prefetch_columns(const float *first, ptrdiff_t stride, int cols, int floats)
{
#if defined(__GNUC__)
    for (int c = 0; c < cols; c++)
        for (int f = 0; f < floats; f += LANES)
            __builtin_prefetch(first + c * stride + f);
#else
    (void)first, (void)stride, (void)cols, (void)floats;
#endif
}

/* One work item: segment sg, output channels [k0, k0 + nk), input channels [c0, c0 + nc), rows
 * [i0, i0 + ni) of dW, written to out (dw or a bucket in dw's layout; add: out += result). */
struct item {
    const struct wino_winrs_segment *sg;
    int k0, nk, c0, nc, i0, ni;
    float *out;
    int add;
};

/* The rows of x that rows p_first .. p_last of dy meet through the item's rows of dW. */
static void run_rows(const struct wino_conv2d_desc *d, const struct item *it, int p_first,
                     int p_last, struct run *rn)
{
    const int h0 = p_first + it->i0 - d->pad_h, h1 = p_last + it->i0 + it->ni - d->pad_h;
    rn->h0 = h0 > 0 ? h0 : 0;
    rn->h1 = h1 < d->h ? h1 : d->h;
    if (rn->h1 < rn->h0)
        rn->h1 = rn->h0;
}

/* The next chunk of the units [*row, *unit) onwards of the item's segment (rows of dy in (n, p)
 * order, per_row units each): its pieces and runs, at most lb units and w->vcap rows of V.
 * Returns the count of pieces; *runs, *row and *unit are updated. */
static int next_chunk(const struct wino_f32_winrs *w, const struct wino_conv2d_desc *d,
                      const struct item *it, int per_row, long *row, int *unit,
                      struct piece *pc, struct run *rn, int *runs)
{
    const int band = it->sg->p1 - it->sg->p0, lb = w->lb;
    const long rows = (long)band * d->n;
    int np = 0, nr = 0, l = 0, v_used = 0;
    while (*row < rows && l < lb) {
        const int take = per_row - *unit < lb - l ? per_row - *unit : lb - l;
        const struct piece e = {(int)(*row / band), it->sg->p0 + (int)(*row % band), *unit,
                                *unit + take, l};
        /* the next row of the last run's image joins it (its rows of V then hold every unit of
         * the segment's row; a row wider than a chunk keeps runs of one piece) */
        const int join = nr > 0 && per_row <= lb && pc[np - 1].n == e.n;
        struct run cand = {np, np + 1, 0, 0, e.u0, e.u1, v_used};
        if (join) {
            cand = rn[nr - 1];
            cand.e1 = np + 1, cand.u0 = 0, cand.u1 = per_row;
        }
        run_rows(d, it, join ? pc[cand.e0].p : e.p, e.p, &cand);
        const int used = cand.base + (cand.h1 - cand.h0) * (cand.u1 - cand.u0);
        if (used > w->vcap) /* never for the first piece (see vcap) */
            break;
        pc[np++] = e;
        rn[join ? nr - 1 : nr++] = cand;
        v_used = used;
        l += take;
        *unit += take;
        if (*unit == per_row) {
            *unit = 0;
            ++*row;
        }
    }
    *runs = nr;
    return np;
}

/* U = G g of every unit of the chunk's pieces, for both kernels of the tiles. */
static void filter_transforms(const struct wino_f32_winrs *w, const struct wino_conv2d_desc *d,
                              int p, int q, const float *dy, const struct item *it,
                              const struct wino_winrs_kind *kd, int q0, const struct piece *pc,
                              int np, char *mine)
{
    const int r = kd->r, kbp = w->kbp, lb = w->lb;
    float *u_buf[2] = {(float *)mine, (float *)mine + (size_t)kd->kernel[0].alpha * lb * kbp};
    float *sdy = (float *)(mine + w->off_sdy);
    const struct wino_strides4 ys = wino_y_strides(d, p, q);
    for (int e = 0; e < np; e++) {
        const struct piece *pe = &pc[e];
        ptrdiff_t ld;
        const float *g = channel_rows(dy + pe->n * ys.a + it->k0 * ys.b + pe->p * ys.c, ys.b,
                                      ys.d, q0 + pe->u0 * r, (pe->u1 - pe->u0) * r, q, it->nk,
                                      kbp, sdy, &ld);
        for (int u = pe->u0; u < pe->u1; u++) {
            if (u + 1 < pe->u1)
                prefetch_columns(g + (u + 1 - pe->u0) * r * ld, ld, r, kbp);
            for (int kk = 0; kk < 1 + (kd->rest > 0); kk++)
                wino_f32_winrs_transform(w->isa, &kd->kernel[kk].g, g + (u - pe->u0) * r * ld,
                                         ld, 0, r,
                                         u_buf[kk] + (size_t)(pe->l0 + u - pe->u0) * kbp,
                                         (ptrdiff_t)lb * kbp, kbp / LANES);
        }
    }
}

/* V = B^T d of every unit of every row of x of the chunk's runs, for every tile: once, for all
 * the item's rows of dW (a row of x meets up to R rows of dy). The windows are read in place
 * where the channels are contiguous and fill their vectors, else a row is staged at once
 * (NCHW, a partial channel block). */
static void input_transforms(const struct wino_f32_winrs *w, const struct wino_conv2d_desc *d,
                             const float *x, const struct item *it,
                             const struct wino_winrs_kind *kd, int q0, const struct piece *pc,
                             const struct run *rn, int nr, char *mine)
{
    const int r = kd->r, cbp = w->cbp, vcap = w->vcap;
    float *v = (float *)(mine + w->off_v), *sx = (float *)(mine + w->off_sx);
    const struct wino_strides4 xs = wino_x_strides(d);
    const int in_place = xs.b == 1 && it->nc == cbp;
    for (int z = 0; z < nr; z++) {
        const struct run *rz = &rn[z];
        const int pitch = rz->u1 - rz->u0, v0 = q0 + rz->u0 * r - d->pad_w;
        for (int h = rz->h0; h < rz->h1; h++) {
            const float *row = x + pc[rz->e0].n * xs.a + it->c0 * xs.b + h * xs.c;
            if (!in_place)
                stage(row, xs.b, xs.d, v0, pitch * r + d->s - 1, d->w, it->nc, cbp, sx);
            for (int t = 0; t < tiles_of(kd); t++) {
                const struct wino_winrs_kernel *kn = tile_kernel(kd, t);
                float *vt = v + ((size_t)alpha_offset(kd, t) * vcap + rz->base +
                                 (size_t)(h - rz->h0) * pitch) * cbp;
                for (int u = 0; u < pitch; u++) {
                    /* window columns col .. col + alpha - 1; in place, those outside the image
                     * are skipped as zeros */
                    const int col = v0 + u * r + t * kd->n;
                    const int lo = in_place && col < 0 ? -col : 0;
                    const int hi = in_place && col + kn->alpha > d->w ? d->w - col : kn->alpha;
                    const float *in = in_place ? row + (col + lo) * xs.d
                                               : sx + (ptrdiff_t)(col - v0) * cbp;
                    if (in_place && u + 1 < pitch) { /* the next window's new columns */
                        const int next = col + kn->alpha > 0 ? col + kn->alpha : 0;
                        const int end = col + kn->alpha + r < d->w ? col + kn->alpha + r : d->w;
                        if (end > next)
                            prefetch_columns(row + next * xs.d, xs.d, end - next, cbp);
                    }
                    wino_f32_winrs_transform(w->isa, &kn->bt, in, in_place ? xs.d : cbp, lo, hi,
                                             vt + (size_t)u * cbp, (ptrdiff_t)vcap * cbp,
                                             cbp / LANES);
                }
            }
        }
    }
}

/* The spans of the GEMMs of row i of dW: per run, its pieces whose row of x is inside the image
 * (Fig. 7's clipping: consecutive, as a run's rows are), their U columns and V rows in one
 * stretch each. Returns the count. */
static int row_spans(const struct wino_conv2d_desc *d, int i, const struct piece *pc,
                     const struct run *rn, int nr, struct wino_winrs_span *span)
{
    int ns = 0;
    for (int z = 0; z < nr; z++) {
        const struct run *rz = &rn[z];
        int first = rz->e0, last = rz->e1 - 1;
        while (first <= last && pc[first].p + i - d->pad_h < rz->h0)
            first++;
        while (last >= first && pc[last].p + i - d->pad_h >= rz->h1)
            last--;
        if (first > last)
            continue;
        span[ns].a = pc[first].l0;
        span[ns].b = rz->base + (pc[first].p + i - d->pad_h - rz->h0) * (rz->u1 - rz->u0) +
                     pc[first].u0 - rz->u0;
        span[ns].k = pc[last].l0 + pc[last].u1 - pc[last].u0 - pc[first].l0;
        ns++;
    }
    return ns;
}

/* M = the alpha products of the units of kind kd in columns [q0, q1) of the item's segment,
 * summed over them: per chunk of units, U (G g) and V (B^T d) once, then for every row of dW
 * and tile the GEMMs M[a] += U[a]^T V[a] over the spans of the row. */
static void accumulate(const struct wino_f32_winrs *w, const struct wino_conv2d_desc *d, int p,
                       int q, const float *x, const float *dy, const struct item *it,
                       const struct wino_winrs_kind *kd, int q0, int q1, char *mine)
{
    const int kbp = w->kbp, cbp = w->cbp, lb = w->lb, sa = w->sum_alpha, vcap = w->vcap;
    const float *u_buf[2] = {(float *)mine,
                             (float *)mine + (size_t)kd->kernel[0].alpha * lb * kbp};
    const float *v = (const float *)(mine + w->off_v);
    float *m = (float *)(mine + w->off_m);
    struct piece *pc = (struct piece *)(mine + w->off_pieces);
    struct run *rn = (struct run *)(mine + w->off_runs);
    struct wino_winrs_span *span = (struct wino_winrs_span *)(mine + w->off_spans);
    memset(m, 0, sizeof(float) * (size_t)it->ni * sa * kbp * cbp);
    const int per_row = (q1 - q0) / kd->r;
    long row = 0;
    int unit = 0, nr;
    for (int np; (np = next_chunk(w, d, it, per_row, &row, &unit, pc, rn, &nr)) > 0;) {
        filter_transforms(w, d, p, q, dy, it, kd, q0, pc, np, mine);
        input_transforms(w, d, x, it, kd, q0, pc, rn, nr, mine);
        for (int ii = 0; ii < it->ni; ii++) {
            const int ns = row_spans(d, it->i0 + ii, pc, rn, nr, span);
            for (int t = 0; ns && t < tiles_of(kd); t++) {
                const struct wino_winrs_kernel *kn = tile_kernel(kd, t);
                const float *ut = u_buf[t < kd->full ? 0 : 1];
                const float *vt = v + (size_t)alpha_offset(kd, t) * vcap * cbp;
                float *mt = m + ((size_t)ii * sa + alpha_offset(kd, t)) * kbp * cbp;
                for (int a = 0; a < kn->alpha; a++)
                    wino_f32_winrs_gemm(w->isa, kbp, cbp, ns, span, ut + (size_t)a * lb * kbp,
                                        kbp, vt + (size_t)a * vcap * cbp, cbp,
                                        mt + (size_t)a * kbp * cbp, cbp);
            }
        }
    }
}

/* dst[e * stride] (+)= src[e] for e < n. */
static void store_row(float *dst, ptrdiff_t stride, const float *src, int n, int add)
{
    if (stride == 1 && add)
        for (int e = 0; e < n; e++)
            dst[e] += src[e];
    else if (stride == 1)
        memcpy(dst, src, sizeof(float) * (size_t)n);
    else
        for (int e = 0; e < n; e++)
            dst[e * stride] = (add ? dst[e * stride] : 0.0f) + src[e];
}

/* The output transform A^T M of every tile of kind kd, once, into the item's part of out. */
static void output(const struct wino_f32_winrs *w, const struct wino_conv2d_desc *d,
                   const struct item *it, const struct wino_winrs_kind *kd, int add, char *mine)
{
    const int kbp = w->kbp, cbp = w->cbp;
    const float *m = (const float *)(mine + w->off_m);
    float *tmp = (float *)(mine + w->off_tmp);
    const struct wino_strides4 ws = wino_w_strides(d);
    for (int ii = 0; ii < it->ni; ii++)
        for (int t = 0; t < tiles_of(kd); t++) {
            const struct wino_winrs_kernel *kn = tile_kernel(kd, t);
            const float *mt = m + ((size_t)ii * w->sum_alpha + alpha_offset(kd, t)) * kbp * cbp;
            for (int k = 0; k < it->nk; k++) {
                wino_f32_winrs_transform(w->isa, &kn->at, mt + (size_t)k * cbp,
                                         (ptrdiff_t)kbp * cbp, 0, kn->alpha, tmp, cbp,
                                         cbp / LANES);
                for (int j = 0; j < kn->n; j++)
                    store_row(it->out + (it->k0 + k) * ws.a + it->c0 * ws.b +
                                  (it->i0 + ii) * ws.c + (t * kd->n + j) * ws.d,
                              ws.b, tmp + (size_t)j * cbp, it->nc, add);
            }
        }
}

/* Both kinds of units of the item's segment, the second adding onto the first. */
static void run_item(const struct wino_f32_winrs *w, const struct wino_conv2d_desc *d, int p,
                     int q, const float *x, const float *dy, const struct item *it, char *mine)
{
    const struct wino_winrs_segment *sg = it->sg;
    const int bounds[3] = {sg->q0, sg->qs, sg->q1};
    int add = it->add;
    for (int k = 0; k < w->plan.kinds; k++)
        if (bounds[k + 1] > bounds[k]) {
            accumulate(w, d, p, q, x, dy, it, &w->kind[k], bounds[k], bounds[k + 1], mine);
            output(w, d, it, &w->kind[k], add, mine);
            add = 1;
        }
}

/* What every work item of a run needs. */
struct winrs_run {
    const struct wino_f32_winrs *w;
    const struct wino_conv2d_desc *d;
    int p, q;
    const float *x, *dy;
    float *dw, *buckets;
    void *ws;
};

/* Work items [begin, end): segment, block of K, block of C, group of dW's rows. */
static void winrs_items(void *arg, long begin, long end, int worker)
{
    const struct winrs_run *r = arg;
    const struct wino_f32_winrs *w = r->w;
    const long per_segment = (long)w->kblocks * w->cblocks * w->row_groups;
    char *mine = (char *)r->ws + w->thread_bytes * (size_t)worker;
    for (long n = begin; n < end; n++) {
        const int z = (int)(n / per_segment), g = (int)(n % w->row_groups);
        const int kb = (int)(n / w->row_groups / w->cblocks % w->kblocks);
        const int cb = (int)(n / w->row_groups % w->cblocks);
        struct item it;
        it.sg = &w->seg[z];
        it.k0 = kb * w->kb;
        it.nk = r->d->k - it.k0 < w->kb ? r->d->k - it.k0 : w->kb;
        it.c0 = cb * w->cb;
        it.nc = r->d->c - it.c0 < w->cb ? r->d->c - it.c0 : w->cb;
        it.i0 = g * w->rows_per_item;
        it.ni = r->d->r - it.i0 < w->rows_per_item ? r->d->r - it.i0 : w->rows_per_item;
        it.out = z ? r->buckets + (size_t)(z - 1) * w->bucket_floats : r->dw;
        it.add = !z && w->accumulate;
        run_item(w, r->d, r->p, r->q, r->x, r->dy, &it, mine);
    }
}

void wino_f32_winrs_run(const struct wino_f32_winrs *w, const struct wino_conv2d_desc *d, int p,
                        int q, const float *x, const float *dy, float *dw, void *ws)
{
    float *buckets = (float *)((char *)ws + w->thread_bytes * (size_t)w->threads);
    struct winrs_run r = {w, d, p, q, x, dy, dw, buckets, ws};
    wino_backward_parallel(w->threads,
                           (long)w->segments * w->kblocks * w->cblocks * w->row_groups,
                           winrs_items, &r);
    wino_f32_buckets_reduce(dw, buckets, w->bucket_floats, w->segments - 1,
                            (size_t)d->k * d->c * d->r * d->s, w->threads);
}
