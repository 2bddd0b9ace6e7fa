/* Dense matrices of exact rationals (GMP mpq_t), row-major. */
#ifndef WINO_GEN_QMAT_H
#define WINO_GEN_QMAT_H

#include <gmp.h>

typedef struct wino_qmat {
    int rows, cols;
    mpq_t *e; /* rows * cols entries */
} wino_qmat;

/* Allocates a rows x cols zero matrix (rows, cols >= 0). Returns 0, or -1 when out of memory. */
int wino_qmat_init(wino_qmat *m, int rows, int cols);
void wino_qmat_clear(wino_qmat *m); /* safe on a zeroed or cleared struct */

static inline mpq_ptr wino_qmat_at(const wino_qmat *m, int i, int j)
{
    return m->e[(size_t)i * (size_t)m->cols + (size_t)j];
}

/* out = a * b (out is initialised here; must not alias). Returns 0 or -1. */
int wino_qmat_mul(wino_qmat *out, const wino_qmat *a, const wino_qmat *b);
/* out = transpose(a) (initialised here). Returns 0 or -1. */
int wino_qmat_transpose(wino_qmat *out, const wino_qmat *a);
/* 1 if equal entry by entry (same shape), else 0. */
int wino_qmat_equal(const wino_qmat *a, const wino_qmat *b);

#endif
