/* Fuzz target: the point parser, tile creation, operation counts and code emission.
 * Input: m, r, flags, a byte choosing the recorded points (NULL) or the rest of the input as the
 * point string (format below). Checks: statuses match the documented rules; a created tile
 * satisfies the exact Toom-Cook identity on integer data; its printed points re-create the same
 * matrices; entries in double are finite or refused; emitted code honours the buffer rules, or
 * is refused with a reason. */
#include <math.h>

#include <gmp.h>

#include "fuzz/fuzz_input.h"
#include "test_util.h"
#include "wino_gen.h"

/* Operation counts and code are made only up to this alpha: the recipe optimizer takes seconds
 * on the largest tiles in this instrumented build, and one input should take milliseconds. */
#define EMIT_MAX_ALPHA 8

/* A matrix of the tile as exact rationals (row-major, rows x cols, mpq_init'ed), read back
 * through the public string API; free with free_matrix. */
static mpq_t *exact_matrix(const wino_tile *t, enum wino_matrix which, int *rows, int *cols)
{
    FUZZ_REQUIRE(!wino_tile_matrix_shape(t, which, rows, cols), "%s", wino_last_error());
    const int n = *rows * *cols;
    mpq_t *q = malloc(sizeof(mpq_t) * (size_t)n);
    FUZZ_REQUIRE(q, "out of memory");
    for (int i = 0; i < n; i++) {
        size_t needed = 0;
        wino_tile_entry_string(t, which, i / *cols, i % *cols, NULL, 0, &needed);
        char *s = malloc(needed);
        FUZZ_REQUIRE(s && !wino_tile_entry_string(t, which, i / *cols, i % *cols, s, needed, NULL),
                     "%s", wino_last_error());
        mpq_init(q[i]);
        FUZZ_REQUIRE(!mpq_set_str(q[i], s, 10), "entry \"%s\" is not a rational", s);
        free(s);
    }
    return q;
}

static void free_matrix(mpq_t *q, int rows, int cols)
{
    for (int i = 0; i < rows * cols; i++)
        mpq_clear(q[i]);
    free(q);
}

/* y = A^T [(G g) .* (B^T d)] must equal the correlation y_i = sum_k g_k d_{i+k} exactly, for
 * integer d and g of the test generator. */
static void check_identity(const wino_tile *t)
{
    int m, r, alpha, cols;
    mpq_t *at = exact_matrix(t, WINO_MATRIX_AT, &m, &alpha);
    mpq_t *g_mat = exact_matrix(t, WINO_MATRIX_G, &alpha, &r);
    mpq_t *bt = exact_matrix(t, WINO_MATRIX_BT, &alpha, &cols);
    struct test_rng rng = {(uint64_t)(m * 31 + r)};
    long d[WINO_MAX_ALPHA], g[WINO_MAX_ALPHA];
    for (int i = 0; i < alpha; i++)
        d[i] = (long)(test_rng_next(&rng) % 255) - 127;
    for (int k = 0; k < r; k++)
        g[k] = (long)(test_rng_next(&rng) % 255) - 127;
    mpq_t e, u, v, sum;
    mpq_inits(e, u, v, sum, NULL);
    for (int i = 0; i < m; i++) {
        mpq_set_ui(sum, 0, 1);
        for (int j = 0; j < alpha; j++) {
            mpq_set_ui(u, 0, 1); /* (G g)_j */
            for (int k = 0; k < r; k++) {
                mpq_set_si(e, g[k], 1);
                mpq_mul(e, e, g_mat[j * r + k]);
                mpq_add(u, u, e);
            }
            mpq_set_ui(v, 0, 1); /* (B^T d)_j */
            for (int k = 0; k < alpha; k++) {
                mpq_set_si(e, d[k], 1);
                mpq_mul(e, e, bt[j * alpha + k]);
                mpq_add(v, v, e);
            }
            mpq_mul(e, u, v);
            mpq_mul(e, e, at[i * alpha + j]);
            mpq_add(sum, sum, e);
        }
        long want = 0;
        for (int k = 0; k < r; k++)
            want += g[k] * d[i + k];
        mpq_set_si(e, want, 1);
        FUZZ_REQUIRE(mpq_equal(sum, e), "F(%d, %d): output %d is not the correlation", m, r, i);
    }
    mpq_clears(e, u, v, sum, NULL);
    free_matrix(at, m, alpha);
    free_matrix(g_mat, alpha, r);
    free_matrix(bt, alpha, alpha);
}

/* The emitted code of t in lang (malloc'ed), after checking the buffer rules, or NULL when the
 * emitter refused (with a reason). */
/* Emits into a buffer of first_cap bytes, then (when that was too small, which must be refused
 * without writing past it) into one of the size asked for. */
static void check_emit(const wino_tile *t, enum wino_emit_lang lang, size_t first_cap)
{
    size_t needed = 0;
    char *text = malloc(first_cap);
    FUZZ_REQUIRE(text, "out of memory");
    enum wino_status st = wino_tile_emit(t, lang, text, first_cap, &needed);
    if (st == WINO_INVALID_ARGUMENT && needed > first_cap) {
        free(text);
        FUZZ_REQUIRE((text = malloc(needed)), "out of memory");
        st = wino_tile_emit(t, lang, text, needed, NULL);
    }
    if (st) /* a constant outside the float range */
        FUZZ_REQUIRE((st == WINO_UNSUPPORTED || st == WINO_OUT_OF_MEMORY) && *wino_last_error(),
                     "emit: status %d, error \"%s\"", (int)st, wino_last_error());
    else
        FUZZ_REQUIRE(needed > 1 && strlen(text) + 1 == needed, "emitted %zu bytes, needed %zu",
                     strlen(text) + 1, needed);
    free(text);
}

/* The tile's points printed back as a point string (malloc'ed). */
static char *printed_points(const wino_tile *t)
{
    const int count = wino_tile_alpha(t) - 1;
    size_t len = 1;
    for (int i = 0; i < count; i++) {
        size_t needed = 0;
        wino_tile_point_string(t, i, NULL, 0, &needed);
        len += needed;
    }
    char *s = calloc(1, len), *at = s;
    FUZZ_REQUIRE(s, "out of memory");
    for (int i = 0; i < count; i++) {
        size_t needed = 0;
        FUZZ_REQUIRE(!wino_tile_point_string(t, i, at, len - (size_t)(at - s), &needed), "%s",
                     wino_last_error());
        at += needed - 1;
        if (i + 1 < count)
            *at++ = ',';
    }
    return s;
}

static void check_counts(const wino_tile *t)
{
    for (int which = WINO_TRANSFORM_INPUT; which <= WINO_TRANSFORM_OUTPUT; which++) {
        struct wino_op_counts base, opt;
        enum wino_status st = wino_tile_op_counts(t, (enum wino_transform)which, &base, &opt);
        if (st) {
            FUZZ_REQUIRE(st == WINO_OUT_OF_MEMORY, "op counts: %s", wino_last_error());
            continue;
        }
        FUZZ_REQUIRE(base.add >= 0 && base.mul >= 0 && base.fma >= 0 && opt.add >= 0 &&
                         opt.mul >= 0 && opt.fma >= 0,
                     "negative operation count");
    }
}

/* Two tiles of the same points and flags have the same exact matrices. */
static void check_same(const wino_tile *a, const wino_tile *b)
{
    for (int which = WINO_MATRIX_AT; which <= WINO_MATRIX_BT; which++) {
        int rows, cols;
        mpq_t *qa = exact_matrix(a, (enum wino_matrix)which, &rows, &cols);
        mpq_t *qb = exact_matrix(b, (enum wino_matrix)which, &rows, &cols);
        for (int i = 0; i < rows * cols; i++)
            FUZZ_REQUIRE(mpq_equal(qa[i], qb[i]), "matrix %d entry %d differs", which, i);
        free_matrix(qa, rows, cols);
        free_matrix(qb, rows, cols);
    }
}

static void check_tile(const wino_tile *t, int m, int r, unsigned flags, size_t first_cap)
{
    const int alpha = m + r - 1;
    FUZZ_REQUIRE(wino_tile_m(t) == m && wino_tile_r(t) == r && wino_tile_alpha(t) == alpha,
                 "shape of F(%d, %d)", m, r);
    const int shape[3][2] = {{m, alpha}, {alpha, r}, {alpha, alpha}};
    double *values = malloc(sizeof(double) * (size_t)(alpha * alpha));
    FUZZ_REQUIRE(values, "out of memory");
    for (int which = WINO_MATRIX_AT; which <= WINO_MATRIX_BT; which++) {
        int rows = 0, cols = 0;
        FUZZ_REQUIRE(!wino_tile_matrix_shape(t, (enum wino_matrix)which, &rows, &cols) &&
                         rows == shape[which][0] && cols == shape[which][1],
                     "matrix %d is %d x %d", which, rows, cols);
        const enum wino_status st = wino_tile_matrix_double(t, (enum wino_matrix)which, values);
        FUZZ_REQUIRE(!st || (st == WINO_UNSUPPORTED && *wino_last_error()),
                     "matrix_double: status %d, error \"%s\"", (int)st, wino_last_error());
        for (int i = 0; !st && i < rows * cols; i++)
            FUZZ_REQUIRE(isfinite(values[i]), "matrix %d entry %d = %g", which, i, values[i]);
    }
    free(values);
    check_identity(t);

    char *points = printed_points(t);
    wino_tile *again = NULL;
    FUZZ_REQUIRE(!wino_tile_create(m, r, points, flags, &again),
                 "printed points \"%s\" refused: %s", points, wino_last_error());
    check_same(t, again);
    wino_tile_destroy(again);
    free(points);
    if (alpha > EMIT_MAX_ALPHA)
        return;
    check_counts(t);
    check_emit(t, WINO_EMIT_C, first_cap);
    check_emit(t, WINO_EMIT_CUDA, first_cap);
    check_emit(t, WINO_EMIT_OPENCL, first_cap);
}

/* Input: "<m><r><flags><mode>points". m, r and flags are characters counted from '0' ('4' is 4,
 * '@' is 16; 5 bits, 3 for flags, so 4 is an unknown flag); mode 'd' takes the recorded points,
 * any other mode the rest of the input as the point string: "430=0,1,-1,2,-2". */
static unsigned digit(struct fuzz_input *in, unsigned mask)
{
    return (unsigned)(fuzz_u8(in) - '0') & mask;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_input in = {data, size, 0};
    const int m = (int)digit(&in, 31), r = (int)digit(&in, 31);
    const unsigned flags = digit(&in, 7);
    const int default_points = fuzz_u8(&in) == 'd';
    const int alpha = m + r - 1;
    char *points = default_points ? NULL : fuzz_string(&in, size);
    if (!default_points && !points)
        return 0;

    wino_tile *t = NULL;
    enum wino_status st = wino_tile_create(m, r, points, flags, &t);
    const int valid = m >= 1 && r >= 1 && alpha <= WINO_MAX_ALPHA && flags <= 3;
    if (st == WINO_SUCCESS) {
        FUZZ_REQUIRE(valid && t, "F(%d, %d) flags %u accepted", m, r, flags);
        check_tile(t, m, r, flags, 1 + size * 2654435761u % 65536);
    } else {
        FUZZ_REQUIRE(!t && *wino_last_error(), "a failed create left a tile or no reason");
        FUZZ_REQUIRE(st == WINO_INVALID_ARGUMENT || st == WINO_OUT_OF_MEMORY, "status %d: %s",
                     (int)st, wino_last_error());
        FUZZ_REQUIRE(!(valid && default_points), "F(%d, %d) refused with its recorded points: %s",
                     m, r, wino_last_error());
    }
    wino_tile_destroy(t);
    free(points);
    return 0;
}
