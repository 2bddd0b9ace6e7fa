/* `wino bench` runner for the textbook GEMM convolution: per image, im2col (single-threaded)
 * into a (C*R*S) x (P*Q) buffer, then one cblas_sgemm of OpenBLAS, K x (C*R*S) times that.
 * Both steps are timed: together they are what a GEMM-based framework layer costs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifdef WINO_HAVE_OPENBLAS

#include <cblas.h>

struct openblas_state {
    struct wino_conv2d_desc d;
    int p, q;
    const float *x, *w;
    float *col, *y;
};

int bench_openblas_available(void) { return 1; }
void bench_openblas_set_threads(int threads) { openblas_set_num_threads(threads); }

/* col[(c*R + i)*S + j][p*Q + q] = x[c][p*stride - pad + i][q*stride - pad + j], 0 outside. */
static void im2col(const struct openblas_state *st, const float *x)
{
    const struct wino_conv2d_desc *d = &st->d;
    float *out = st->col;
    for (int c = 0; c < d->c; c++)
        for (int i = 0; i < d->r; i++)
            for (int j = 0; j < d->s; j++)
                for (int p = 0; p < st->p; p++) {
                    const int h = p * d->stride_h - d->pad_h + i;
                    const float *row = x + ((size_t)c * d->h + h) * d->w;
                    for (int q = 0; q < st->q; q++) {
                        const int w = q * d->stride_w - d->pad_w + j;
                        *out++ = (h >= 0 && h < d->h && w >= 0 && w < d->w) ? row[w] : 0.0f;
                    }
                }
}

static int openblas_run(void *p)
{
    struct openblas_state *st = p;
    const struct wino_conv2d_desc *d = &st->d;
    const int crs = d->c * d->r * d->s, pq = st->p * st->q;
    for (int n = 0; n < d->n; n++) {
        im2col(st, st->x + (size_t)n * d->c * d->h * d->w);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d->k, pq, crs, 1.0f, st->w, crs,
                    st->col, pq, 0.0f, st->y + (size_t)n * d->k * pq, pq);
    }
    return 0;
}

static int openblas_output(void *p, float *y)
{
    struct openblas_state *st = p;
    memcpy(y, st->y, (size_t)st->d.n * st->d.k * st->p * st->q * sizeof *y);
    return 0;
}

static void openblas_destroy(void *p)
{
    struct openblas_state *st = p;
    if (!st)
        return;
    free(st->col);
    free(st->y);
    free(st);
}

enum bench_prep bench_openblas_prepare(const struct bench_problem *pb, struct bench_runner *out)
{
    const struct wino_conv2d_desc *d = &pb->desc;
    memset(out, 0, sizeof *out);
    if (d->dilation_h != 1 || d->dilation_w != 1) {
        snprintf(out->info, sizeof out->info, "im2col here handles dilation 1 only");
        return BENCH_SKIP;
    }
    const size_t col_elems = (size_t)d->c * d->r * d->s * pb->p * pb->q;
    struct openblas_state *st = calloc(1, sizeof *st);
    if (st) {
        st->d = *d;
        st->p = pb->p;
        st->q = pb->q;
        st->x = pb->x;
        st->w = pb->w; /* K x C x R x S is already the row-major K x (C*R*S) GEMM operand */
        st->col = malloc(col_elems * sizeof *st->col);
        st->y = malloc((size_t)d->n * d->k * pb->p * pb->q * sizeof *st->y);
    }
    if (!st || !st->col || !st->y) {
        openblas_destroy(st);
        snprintf(out->info, sizeof out->info, "out of memory");
        return BENCH_FAIL;
    }
    for (size_t i = 0; i < (size_t)d->n * d->k * pb->p * pb->q; i++) /* poisoned for the check */
        st->y[i] = NAN;
    snprintf(out->info, sizeof out->info, "im2col + cblas_sgemm");
    out->workspace_bytes = col_elems * sizeof(float);
    out->state = st;
    out->run = openblas_run;
    out->output = openblas_output;
    out->destroy = openblas_destroy;
    return BENCH_READY;
}

#else /* built without OpenBLAS: the impl is listed as unavailable */

int bench_openblas_available(void) { return 0; }
void bench_openblas_set_threads(int threads) { (void)threads; }
enum bench_prep bench_openblas_prepare(const struct bench_problem *pb, struct bench_runner *out)
{
    (void)pb;
    memset(out, 0, sizeof *out);
    snprintf(out->info, sizeof out->info, "built without OpenBLAS");
    return BENCH_SKIP;
}

#endif
