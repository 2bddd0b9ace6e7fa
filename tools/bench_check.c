/* The check of `wino bench` on the CPU: the FP64 reference of an op's output, or of slices of it
 * (images and channels) when the whole reference would take minutes, and the relative L1 error
 * of a computed output against it. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ref/conv_ref.h"
#include "ref/error_metrics.h"

size_t bench_output_elems(const struct bench_problem *pb)
{
    const struct wino_conv2d_desc *d = &pb->desc;
    if (pb->op == BENCH_BWD_DATA)
        return (size_t)d->n * d->c * d->h * d->w;
    if (pb->op == BENCH_BWD_FILTER)
        return (size_t)d->k * d->c * d->r * d->s;
    return (size_t)d->n * d->k * pb->p * pb->q;
}

/* count indices of [0, d) ascending, the first and the last included when count > 1. */
static int *spread(int d, int count)
{
    int *idx = malloc((size_t)count * sizeof *idx);
    for (int j = 0; idx && j < count; j++)
        idx[j] = count == 1 ? 0 : (int)((long long)j * (d - 1) / (count - 1));
    return idx;
}

/* dst[a][b][:] = src[i0[a]][i1[b]][:] for a < n0, b < n1, src being ? x d1 x inner. i0 or i1
 * NULL: every index of that dimension. Works in place (dst == src): blocks only move down. */
static void gather(const float *src, int d1, size_t inner, const int *i0, int n0, const int *i1,
                   int n1, float *dst)
{
    for (int a = 0; a < n0; a++)
        for (int b = 0; b < n1; b++)
            memmove(dst + ((size_t)a * n1 + b) * inner,
                    src + ((size_t)(i0 ? i0[a] : a) * d1 + (i1 ? i1[b] : b)) * inner,
                    inner * sizeof *dst);
}

/* Halves *keep (rounding up, at least 1) while cost * *keep exceeds the budget. */
static void shrink(int *keep, double cost)
{
    while (*keep > 1 && cost * *keep > BENCH_REFERENCE_MACS)
        *keep = (*keep + 1) / 2;
}

/* The reference of the kept blocks on sliced inputs. Returns 0, or -1 when out of memory. */
static int sliced_reference(const struct bench_problem *pb, struct bench_check *c)
{
    struct wino_conv2d_desc d = pb->desc;
    const size_t hw = (size_t)d.h * d.w, pq = (size_t)pb->p * pb->q, rs = (size_t)d.r * d.s;
    float *a = NULL, *b = NULL;
    if (pb->op == BENCH_BWD_DATA) { /* dx[n][c] from dy[n][all k] and w[all k][c] */
        d.n = c->n0;
        d.c = c->n1;
        a = malloc((size_t)d.n * d.k * pq * sizeof *a);
        b = malloc((size_t)d.k * d.c * rs * sizeof *b);
        if (a && b) {
            gather(pb->dy, pb->desc.k, pq, c->keep0, c->n0, NULL, d.k, a);
            gather(pb->w, pb->desc.c, rs, NULL, d.k, c->keep1, c->n1, b);
            wino_ref_conv2d_bwd_data(&d, a, b, c->ref);
        }
    } else { /* dw[k][c] from x[all n][c] and dy[all n][k] */
        d.k = c->n0;
        d.c = c->n1;
        a = malloc((size_t)d.n * d.c * hw * sizeof *a);
        b = malloc((size_t)d.n * d.k * pq * sizeof *b);
        if (a && b) {
            gather(pb->x, pb->desc.c, hw, NULL, d.n, c->keep1, c->n1, a);
            gather(pb->dy, pb->desc.k, pq, NULL, d.n, c->keep0, c->n0, b);
            wino_ref_conv2d_bwd_filter(&d, a, b, c->ref);
        }
    }
    const int ok = a && b;
    free(a);
    free(b);
    return ok ? 0 : -1;
}

int bench_check_prepare(const struct bench_problem *pb, struct bench_check *c)
{
    const struct wino_conv2d_desc *d = &pb->desc;
    const double rs = (double)d->r * d->s, pq = (double)pb->p * pb->q;
    memset(c, 0, sizeof *c);
    if (pb->op == BENCH_BWD_DATA) { /* a block: one image's channel, K R S P Q MACs */
        c->d0 = d->n, c->d1 = d->c, c->inner = (size_t)d->h * d->w;
        c->n0 = d->n, c->n1 = d->c;
        shrink(&c->n0, d->c * d->k * rs * pq); /* fewer images first */
        shrink(&c->n1, c->n0 * d->k * rs * pq);
    } else if (pb->op == BENCH_BWD_FILTER) { /* a block: one (k, c) pair, N P Q R S MACs */
        c->d0 = d->k, c->d1 = d->c, c->inner = (size_t)d->r * d->s;
        c->n0 = d->k, c->n1 = d->c;
        const double block = d->n * pq * rs;
        while ((c->n0 > 1 || c->n1 > 1) && block * c->n0 * c->n1 > BENCH_REFERENCE_MACS) {
            int *larger = c->n0 >= c->n1 ? &c->n0 : &c->n1;
            *larger = (*larger + 1) / 2;
        }
    } else { /* forward: the whole output */
        c->d0 = c->n0 = d->n, c->d1 = c->n1 = d->k, c->inner = (size_t)pq;
    }
    c->elems = (size_t)c->n0 * c->n1 * c->inner;
    c->keep0 = spread(c->d0, c->n0);
    c->keep1 = spread(c->d1, c->n1);
    c->ref = malloc(c->elems * sizeof *c->ref);
    if (!c->keep0 || !c->keep1 || !c->ref)
        return -1;
    if (pb->op == BENCH_FWD) {
        wino_ref_conv2d_fwd(d, pb->x, pb->w, c->ref);
        return 0;
    }
    return sliced_reference(pb, c);
}

void bench_check_release(struct bench_check *c)
{
    free(c->keep0);
    free(c->keep1);
    free(c->ref);
    memset(c, 0, sizeof *c);
}

double bench_check_error(const struct bench_check *c, float *out)
{
    gather(out, c->d1, c->inner, c->keep0, c->n0, c->keep1, c->n1, out);
    return wino_rel_l1_f32(out, c->ref, c->elems);
}
