/* Public generator API: argument checks around the exact Toom-Cook construction. */
#include "gen/tile.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gen/point_db.h"
#include "gen/points.h"
#include "gen/q_range.h"
#include "gen/transform_ops.h"

enum wino_status wino_tile_create(int m, int r, const char *points, unsigned flags,
                                  wino_tile **tile)
{
    wino_ok();
    if (!tile)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tile_create: tile is NULL");
    *tile = NULL;
    if (m < 1 || r < 1)
        return wino_fail(WINO_INVALID_ARGUMENT, "F(m, r) needs m >= 1 and r >= 1 (got m=%d, r=%d)",
                         m, r);
    if (m > WINO_MAX_ALPHA || r > WINO_MAX_ALPHA || m + r - 1 > WINO_MAX_ALPHA)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "F(%d, %d): alpha = m + r - 1 must not exceed %d", m, r, WINO_MAX_ALPHA);
    if (flags & ~(unsigned)(WINO_TILE_INTEGER_BT | WINO_TILE_INTEGER_AT))
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tile_create: unknown flags 0x%x", flags);

    const int alpha = m + r - 1;
    const char *text = points ? points : wino_point_db_points(alpha);
    mpq_t *q = NULL;
    char err[160];
    int rc = wino_points_parse(text, alpha - 1, &q, err, sizeof err);
    if (rc == -2)
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_tile_create: out of memory");
    if (rc)
        return wino_fail(WINO_INVALID_ARGUMENT, "F(%d, %d): %s", m, r, err);

    struct wino_tile *t = calloc(1, sizeof *t);
    if (!t || wino_toom_build(&t->toom, m, r, q)) {
        free(t);
        wino_points_free(q, alpha - 1);
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_tile_create: out of memory");
    }
    wino_points_free(q, alpha - 1);
    if (flags & WINO_TILE_INTEGER_BT)
        wino_toom_integer_bt(&t->toom);
    if (flags & WINO_TILE_INTEGER_AT)
        wino_toom_integer_at(&t->toom);
    *tile = t;
    return WINO_SUCCESS;
}

void wino_tile_destroy(wino_tile *tile)
{
    if (!tile)
        return;
    wino_toom_clear(&tile->toom);
    free(tile);
}

int wino_tile_m(const wino_tile *tile) { return tile ? tile->toom.m : 0; }
int wino_tile_r(const wino_tile *tile) { return tile ? tile->toom.r : 0; }
int wino_tile_alpha(const wino_tile *tile) { return tile ? tile->toom.alpha : 0; }

/* Copies the rational q as text into buf under the public buffer rules. */
static enum wino_status put_rational(mpq_srcptr q, char *buf, size_t cap, size_t *needed)
{
    size_t len = mpz_sizeinbase(mpq_numref(q), 10) + mpz_sizeinbase(mpq_denref(q), 10) + 3;
    char *tmp = malloc(len);
    if (!tmp)
        return wino_fail(WINO_OUT_OF_MEMORY, "out of memory");
    mpq_get_str(tmp, 10, q);
    size_t n = strlen(tmp) + 1;
    if (needed)
        *needed = n;
    enum wino_status st = WINO_SUCCESS;
    if (!buf || cap < n)
        st = wino_fail(WINO_INVALID_ARGUMENT, "buffer of %zu bytes too small for %zu", cap, n);
    else
        memcpy(buf, tmp, n);
    free(tmp);
    return st;
}

enum wino_status wino_tile_point_string(const wino_tile *tile, int index, char *buf, size_t cap,
                                        size_t *needed)
{
    wino_ok();
    if (!tile)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tile_point_string: tile is NULL");
    if (index < 0 || index >= tile->toom.npoints)
        return wino_fail(WINO_INVALID_ARGUMENT, "point index %d outside [0, %d)", index,
                         tile->toom.npoints);
    return put_rational(tile->toom.points[index], buf, cap, needed);
}

const wino_qmat *wino_tile_matrix(const wino_tile *tile, enum wino_matrix which)
{
    switch (which) {
    case WINO_MATRIX_AT:
        return &tile->toom.AT;
    case WINO_MATRIX_G:
        return &tile->toom.G;
    case WINO_MATRIX_BT:
        return &tile->toom.BT;
    }
    return NULL;
}

/* Common checks of the matrix accessors; sets *mat on success. */
static enum wino_status checked_matrix(const wino_tile *tile, enum wino_matrix which,
                                       const wino_qmat **mat)
{
    if (!tile)
        return wino_fail(WINO_INVALID_ARGUMENT, "tile is NULL");
    *mat = wino_tile_matrix(tile, which);
    if (!*mat)
        return wino_fail(WINO_INVALID_ARGUMENT, "unknown matrix %d", (int)which);
    return WINO_SUCCESS;
}

enum wino_status wino_tile_check_range(const wino_tile *tile, enum wino_matrix which, double lo,
                                       double hi, const char *format)
{
    static const char *const names[3] = {"A^T", "G", "B^T"};
    const wino_qmat *m = wino_tile_matrix(tile, which);
    for (int i = 0; i < m->rows; i++)
        for (int j = 0; j < m->cols; j++) {
            const int range = wino_q_range(wino_qmat_at(m, i, j), lo, hi);
            if (!range)
                continue;
            char value[96], words[64];
            wino_q_describe(wino_qmat_at(m, i, j), value, sizeof value);
            wino_q_range_words(range, format, lo, hi, words, sizeof words);
            return wino_fail(WINO_UNSUPPORTED, "F(%d, %d): %s[%d][%d] = %s %s", tile->toom.m,
                             tile->toom.r, names[which], i, j, value, words);
        }
    return WINO_SUCCESS;
}

enum wino_status wino_tile_matrix_shape(const wino_tile *tile, enum wino_matrix which, int *rows,
                                        int *cols)
{
    wino_ok();
    const wino_qmat *m;
    enum wino_status st = checked_matrix(tile, which, &m);
    if (st)
        return st;
    if (!rows || !cols)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tile_matrix_shape: rows or cols is NULL");
    *rows = m->rows;
    *cols = m->cols;
    return WINO_SUCCESS;
}

enum wino_status wino_tile_entry_string(const wino_tile *tile, enum wino_matrix which, int row,
                                        int col, char *buf, size_t cap, size_t *needed)
{
    wino_ok();
    const wino_qmat *m;
    enum wino_status st = checked_matrix(tile, which, &m);
    if (st)
        return st;
    if (row < 0 || row >= m->rows || col < 0 || col >= m->cols)
        return wino_fail(WINO_INVALID_ARGUMENT, "entry (%d, %d) outside the %d x %d matrix", row,
                         col, m->rows, m->cols);
    return put_rational(wino_qmat_at(m, row, col), buf, cap, needed);
}

enum wino_status wino_tile_matrix_double(const wino_tile *tile, enum wino_matrix which,
                                         double *out)
{
    wino_ok();
    const wino_qmat *m;
    enum wino_status st = checked_matrix(tile, which, &m);
    if (st)
        return st;
    if (!out)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tile_matrix_double: out is NULL");
    if ((st = wino_tile_check_range(tile, which, DBL_MIN, DBL_MAX, "double")))
        return st;
    for (int i = 0; i < m->rows; i++)
        for (int j = 0; j < m->cols; j++)
            out[(size_t)i * (size_t)m->cols + (size_t)j] = mpq_get_d(wino_qmat_at(m, i, j));
    return WINO_SUCCESS;
}

enum wino_status wino_tile_matrices_get(const wino_tile *tile, double *storage,
                                        size_t storage_count,
                                        struct wino_tile_matrices *matrices)
{
    wino_ok();
    if (!tile || !storage || !matrices)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tile_matrices_get: NULL argument");
    const size_t m = (size_t)tile->toom.m, r = (size_t)tile->toom.r, a = (size_t)tile->toom.alpha;
    if (storage_count < m * a + a * r + a * a)
        return wino_fail(WINO_INSUFFICIENT_WORKSPACE,
                         "wino_tile_matrices_get: F(%zu, %zu) needs %zu doubles of storage, not %zu",
                         m, r, m * a + a * r + a * a, storage_count);
    double *at = storage, *g = at + m * a, *bt = g + a * r;
    enum wino_status st = wino_tile_matrix_double(tile, WINO_MATRIX_AT, at);
    if (!st)
        st = wino_tile_matrix_double(tile, WINO_MATRIX_G, g);
    if (!st)
        st = wino_tile_matrix_double(tile, WINO_MATRIX_BT, bt);
    if (st)
        return st;
    const struct wino_tile_matrices made = {.m = (int)m, .r = (int)r, .at = at, .g = g, .bt = bt};
    *matrices = made;
    return WINO_SUCCESS;
}

enum wino_status wino_tile_op_counts(const wino_tile *tile, enum wino_transform which,
                                     struct wino_op_counts *baseline,
                                     struct wino_op_counts *optimized)
{
    wino_ok();
    if (!tile)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tile_op_counts: tile is NULL");
    if (which != WINO_TRANSFORM_INPUT && which != WINO_TRANSFORM_FILTER &&
        which != WINO_TRANSFORM_OUTPUT)
        return wino_fail(WINO_INVALID_ARGUMENT, "unknown transform %d", (int)which);
    return wino_gen_op_counts(&tile->toom, which, baseline, optimized);
}

enum wino_status wino_tile_emit(const wino_tile *tile, enum wino_emit_lang lang, char *buf,
                                size_t cap, size_t *needed)
{
    wino_ok();
    if (!tile)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tile_emit: tile is NULL");
    if (lang != WINO_EMIT_C && lang != WINO_EMIT_CUDA && lang != WINO_EMIT_OPENCL)
        return wino_fail(WINO_INVALID_ARGUMENT, "unknown emit language %d", (int)lang);
    if (!buf && !needed)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tile_emit: buf and needed are both NULL");
    return wino_gen_emit(&tile->toom, lang, buf, cap, needed);
}
