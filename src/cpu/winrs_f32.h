/* WinRS backward-filter convolution in FP32 on the CPU (Zhang et al., ICPP'25, sections 3-5),
 * for stride 1 and dilation 1, any R x S and padding, either layout.
 *
 * Row i of dW[k][c] is a 1D correlation summed over every row of dy (dimension reduction):
 *     dW[k][c][i][j] = sum_{n,p} sum_q dy[n][k][p][q] * x[n][c][p + i - pad_h][q + j - pad_w].
 * Each row of dy is split into units of r columns (filter split), and a unit with its window of
 * alpha = n + r - 1 columns of x is one 1D Winograd problem F(n, r): dy's unit is the "filter"
 * g, the window the input d, and n columns of dW's row the output (Omega_alpha(n, r)):
 *     dW[j0 .. j0 + n) += A^T [(G g) .* (B^T d)].
 * A^T is taken out of the sum over units, so per tile the alpha products are summed over every
 * unit (and over the channels) first: alpha GEMMs M[a] (K x C) += U[a] (K x units) V[a]
 * (units x C), and the output transform runs once per tile of dW at the end.
 *
 * A row of Q columns is covered by units of two kinds (widths r0 and r1, the fastest pair of
 * section 4.1); a filter row of S taps by S / n tiles of n and, when n does not divide S, one
 * of S mod n. dy is cut into segments (Algorithms 1 and 2) computed apart: the first into dw,
 * the others into buckets of the workspace, summed at the end with Kahan summation. Unlike
 * the GPU kernels, which run one kind per segment, a work item here runs both kinds of its
 * segment one after the other, so the residual units need no segment (nor bucket) of their
 * own. Rows of a segment whose row of x lies in the height padding are skipped
 * (Fig. 7's clipping). A work item is one segment and one block of K and C channels. */
#ifndef WINO_CPU_WINRS_F32_H
#define WINO_CPU_WINRS_F32_H

#include <stddef.h>

#include "cpu/gemm_f32.h"
#include "wino.h"

/* A transform matrix by rows of its nonzero entries: row a holds val[e] at column col[e] for
 * e in [start[a], start[a + 1]), in two parts split at mid[a] that the transform sums apart
 * (two chains of FMAs instead of one) as E and O. A row whose next row has the same entries up
 * to sign (the symmetric pairs of rows that points +-x give) is marked paired[a]: its part E
 * holds the entries whose sign the next row shares, O the others, and the pair is computed as
 * E + O and E - O, about halving its multiplications (docs/transform-ops.md); the next row
 * keeps no entries of its own. */
struct wino_winrs_matrix {
    int rows, cols;
    int *start, *mid, *col;
    unsigned char *paired;
    float *val;
};

/* F(n, r) rounded to float from the exact generator (recorded points of its alpha). */
struct wino_winrs_kernel {
    int n, r, alpha;
    struct wino_winrs_matrix at; /* n x alpha */
    struct wino_winrs_matrix g;  /* alpha x r */
    struct wino_winrs_matrix bt; /* alpha x alpha */
};

/* Units of one width and the tiles that cover a filter row for them. */
struct wino_winrs_kind {
    int r, n;      /* unit width; filter-gradient tile width */
    int units;     /* units per row of dy */
    int full;      /* tiles of n per filter row: S / n */
    int rest;      /* S mod n: the width of one more tile, or 0 */
    struct wino_winrs_kernel kernel[2]; /* F(n, r) and F(rest, r) */
};

/* A rectangle of dy computed apart: rows [p0, p1) x columns [q0, q1) of every image, units of
 * kind 0 in [q0, qs), of kind 1 in [qs, q1) (the last column of segments only). */
struct wino_winrs_segment {
    int p0, p1, q0, qs, q1;
};

/* What the planner may be told instead of choosing (tests; 0 = choose). */
struct wino_winrs_request {
    int n[2], r[2];    /* the kernels of the two kinds (kind 1 may stay 0 = chosen) */
    int segments;      /* the baseline segment count Z^ of Algorithm 2 */
    int max_alpha;     /* the largest alpha of a kernel (0 = WINO_MAX_ALPHA): CUDA's FP16 keeps
                        * alpha <= 8, where FP16 GEMM operands stay accurate */
    int ragged;        /* 1: one kind of units, the last of a row partial (dy read as zeros past
                        * the row), chosen for the fewest units x tiles: for kernels whose time
                        * goes by steps of units rather than by multiplications (CUDA's
                        * tensor-core kernel), where a second kind would be a launch of its own */
};

/* The plan of WinRS for one descriptor (src/cpu/winrs_plan.c). */
struct wino_winrs_plan {
    int kinds;
    int n[2], r[2], units[2]; /* units of r columns a row (ragged: the last one partial) */
    int segment_h, segment_w; /* the usual shape; the last band and column may differ */
    int bands, columns;       /* segments: bands x columns; the last column also holds the
                               * units of kind 1 */
};

/* Multiplications of the plan per row of dy and per (k, c) pair, against Q * S direct. */
long wino_winrs_plan_cost(const struct wino_winrs_plan *plan, int s);

/* Section 4.1: the fastest pair of kernels for desc's filter rows (S taps) and rows of dy of
 * q columns; req may be NULL. Returns WINO_SUCCESS or WINO_INVALID_ARGUMENT (a request that no
 * kernel can serve, with the reason). */
enum wino_status wino_winrs_plan_kernels(const struct wino_conv2d_desc *desc, int q,
                                         const struct wino_winrs_request *req,
                                         struct wino_winrs_plan *plan);

/* Algorithms 1 and 2: the segment count and shape of a plan with its kernels, when each
 * segment gives items_per_segment work items to threads; req (may be NULL) may fix Z^. */
void wino_winrs_plan_segments(const struct wino_conv2d_desc *desc, int p, int q,
                              long items_per_segment, int threads,
                              const struct wino_winrs_request *req,
                              struct wino_winrs_plan *plan);

struct wino_f32_winrs {
    int threads;
    enum wino_isa isa;
    int accumulate;
    struct wino_winrs_plan plan;
    struct wino_winrs_kind kind[2];
    int segments;
    struct wino_winrs_segment *seg;
    int kb, cb, kbp, cbp;    /* channel block sizes (p: rounded up to 16 lanes) */
    int kblocks, cblocks;
    int rows_per_item, row_groups; /* rows of dW per work item, and how many groups of them */
    int lb;                  /* units per chunk (the GEMMs' k) */
    int vcap;                /* rows of V per tile and alpha: the units of a chunk's rows of
                              * x (a chunk ends early rather than exceed it) */
    int sum_alpha;           /* the largest sum of alpha over the tiles of a filter row */
    /* per-thread scratch (see .c): byte offsets of its parts, U at 0 */
    size_t off_v, off_m, off_sdy, off_sx, off_tmp, off_pieces, off_runs, off_spans;
    size_t thread_bytes;
    size_t bucket_floats;    /* one bucket, a 64-byte multiple */
};

/* Plans and builds the kernels for a validated FP32 descriptor with stride 1 and dilation 1.
 * threads >= 1; req may be NULL. Returns WINO_SUCCESS, WINO_OUT_OF_MEMORY, or
 * WINO_INVALID_ARGUMENT (sizes that overflow, a request that cannot be served). */
enum wino_status wino_f32_winrs_prepare(struct wino_f32_winrs *w,
                                        const struct wino_conv2d_desc *desc, int threads,
                                        int accumulate, const struct wino_winrs_request *req);
void wino_f32_winrs_release(struct wino_f32_winrs *w);

size_t wino_f32_winrs_workspace_bytes(const struct wino_f32_winrs *w);

/* dw from x and dy (output size p x q); ws 64-byte aligned, workspace_bytes long. */
void wino_f32_winrs_run(const struct wino_f32_winrs *w, const struct wino_conv2d_desc *desc,
                        int p, int q, const float *x, const float *dy, float *dw, void *ws);

/* Rows [a, a + k) of a GEMM's left operand against rows [b, b + k) of its right one. */
struct wino_winrs_span {
    int a, b, k;
};

/* c[i][j] += sum over the spans s and l < s.k of a[s.a + l][i] * b[s.b + l][j] for i < m,
 * j < n: m and n multiples of 16, rows of a, b, c at lda, ldb, ldc floats; isa <=
 * wino_cpu_isa(). src/cpu/winrs_gemm_f32.c. */
void wino_f32_winrs_gemm(enum wino_isa isa, int m, int n, int spans,
                         const struct wino_winrs_span *span, const float *a, ptrdiff_t lda,
                         const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc);

/* The next GEMM's operands, brought into L2 while one runs: `rows` rows of m floats at a (lda
 * apart) and of n floats at b (ldb apart). */
struct wino_winrs_next {
    const float *a, *b;
    ptrdiff_t lda, ldb;
    int rows;
};

/* wino_f32_winrs_gemm for operands that stream from beyond L2 (src/cpu/bwd_filter_2d_f32.c):
 * c = (not +=) the products where `set`, and with AVX-512 the prefetches of next spread over
 * its blocks (NULL: none; next->a NULL: b's rows only). */
void wino_f32_winrs_gemm_streaming(enum wino_isa isa, int m, int n, int spans,
                                   const struct wino_winrs_span *span, const float *a,
                                   ptrdiff_t lda, const float *b, ptrdiff_t ldb, float *c,
                                   ptrdiff_t ldc, int set, const struct wino_winrs_next *next);

/* out[a][v] = sum_t m[a][t] * in[t][v] for the rows a of m, over vecs (1 to 4) x 16 lanes v;
 * in[t] is zero for t outside [lo, hi), and row t in [lo, hi) at in + (t - lo) * in_stride; out
 * row a at out + a * out_stride (16-float aligned); isa <= wino_cpu_isa().
 * src/cpu/winrs_transform_f32.c. */
void wino_f32_winrs_transform(enum wino_isa isa, const struct wino_winrs_matrix *m,
                              const float *in, ptrdiff_t in_stride, int lo, int hi, float *out,
                              ptrdiff_t out_stride, int vecs);

#endif
