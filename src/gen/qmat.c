#include "gen/qmat.h"

#include <stdlib.h>
#include <string.h>

int wino_qmat_init(wino_qmat *m, int rows, int cols)
{
    size_t n = (size_t)rows * (size_t)cols;
    m->rows = rows;
    m->cols = cols;
    m->e = malloc((n ? n : 1) * sizeof(mpq_t));
    if (!m->e) {
        m->rows = m->cols = 0;
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        mpq_init(m->e[i]);
    return 0;
}

void wino_qmat_clear(wino_qmat *m)
{
    if (!m->e)
        return;
    size_t n = (size_t)m->rows * (size_t)m->cols;
    for (size_t i = 0; i < n; i++)
        mpq_clear(m->e[i]);
    free(m->e);
    memset(m, 0, sizeof *m);
}

int wino_qmat_mul(wino_qmat *out, const wino_qmat *a, const wino_qmat *b)
{
    if (wino_qmat_init(out, a->rows, b->cols))
        return -1;
    mpq_t t;
    mpq_init(t);
    for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < b->cols; j++)
            for (int k = 0; k < a->cols; k++) {
                if (!mpq_sgn(wino_qmat_at(a, i, k)) || !mpq_sgn(wino_qmat_at(b, k, j)))
                    continue;
                mpq_mul(t, wino_qmat_at(a, i, k), wino_qmat_at(b, k, j));
                mpq_add(wino_qmat_at(out, i, j), wino_qmat_at(out, i, j), t);
            }
    mpq_clear(t);
    return 0;
}

int wino_qmat_transpose(wino_qmat *out, const wino_qmat *a)
{
    if (wino_qmat_init(out, a->cols, a->rows))
        return -1;
    for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < a->cols; j++)
            mpq_set(wino_qmat_at(out, j, i), wino_qmat_at(a, i, j));
    return 0;
}

int wino_qmat_equal(const wino_qmat *a, const wino_qmat *b)
{
    if (a->rows != b->rows || a->cols != b->cols)
        return 0;
    for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < a->cols; j++)
            if (!mpq_equal(wino_qmat_at(a, i, j), wino_qmat_at(b, i, j)))
                return 0;
    return 1;
}
