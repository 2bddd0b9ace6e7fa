/* Tests of the transform emitters (src/gen/transform_ops.c) and of the committed generated code.
 *  (a) Reproducibility: for every default tile the C, CUDA and OpenCL text of wino_tile_emit
 *      equals the committed file byte for byte; so do src/cpu/generated/transform_table.c and the op-count
 *      table in docs/transform-ops.md. Emission is deterministic and follows the buffer rules.
 *  (b) Numerics: every committed C transform, reached through wino_f32_transforms_for, on random
 *      inputs in (-1, 1) with 1, 3, 17 and 64 lanes and three memory layouts (gathered,
 *      transposed, padded with gaps), outputs poisoned with NaN first, against M X M^T in double
 *      from the exact matrices: |error| <= TOL * (|M| |X| |M|^T) element by element, and nothing
 *      written outside the output elements.
 *  (c) The committed CUDA and OpenCL functions, compiled here as C, checked the same way on
 *      single tiles.
 *  (d) Float literals: the nearest float to a rational, and the shortest text reading back as it.
 * Usage: test_emit (WINO_TEST_SEED=N to replay the random inputs). */
#include "cpu/transform_table.h"
#include "base/int8_tile.h"
#include "gen/default_tiles.h"
#include "gen/float_literal.h"
#include "gen/op_table.h"
#include "gen/runtime_tables.h"
#include "base/tile_matrices.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "test_util.h"

/* The CUDA emission compiled as C: this is how a machine without a GPU checks it. */
#define __device__
#define __forceinline__ static inline
#define __fmaf_rn fmaf
#include "cuda/generated/wino_f32_transforms_f2x2_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f5x5_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f6x6_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f7x7_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f8x8_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f2x2_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f5x5_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f6x6_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f7x7_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f8x8_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f2x2_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f5x5_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f6x6_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f7x7_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f2x2_5x5.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_5x5.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_5x5.cuh"
#include "cuda/generated/wino_f32_transforms_f5x5_5x5.cuh"
#include "cuda/generated/wino_f32_transforms_f6x6_5x5.cuh"
#include "cuda/generated/wino_f32_transforms_f2x2_6x6.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_6x6.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_6x6.cuh"
#include "cuda/generated/wino_f32_transforms_f5x5_6x6.cuh"
#include "cuda/generated/wino_f32_transforms_f2x2_7x7.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_7x7.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_7x7.cuh"

/* The OpenCL emission compiled as C: its one builtin is fma. */
#define fma fmaf
#include "opencl/generated/wino_f32_transforms_f2x2_2x2.cl"
#include "opencl/generated/wino_f32_transforms_f3x3_2x2.cl"
#include "opencl/generated/wino_f32_transforms_f4x4_2x2.cl"
#include "opencl/generated/wino_f32_transforms_f5x5_2x2.cl"
#include "opencl/generated/wino_f32_transforms_f6x6_2x2.cl"
#include "opencl/generated/wino_f32_transforms_f7x7_2x2.cl"
#include "opencl/generated/wino_f32_transforms_f8x8_2x2.cl"
#include "opencl/generated/wino_f32_transforms_f2x2_3x3.cl"
#include "opencl/generated/wino_f32_transforms_f3x3_3x3.cl"
#include "opencl/generated/wino_f32_transforms_f4x4_3x3.cl"
#include "opencl/generated/wino_f32_transforms_f5x5_3x3.cl"
#include "opencl/generated/wino_f32_transforms_f6x6_3x3.cl"
#include "opencl/generated/wino_f32_transforms_f7x7_3x3.cl"
#include "opencl/generated/wino_f32_transforms_f8x8_3x3.cl"
#include "opencl/generated/wino_f32_transforms_f2x2_4x4.cl"
#include "opencl/generated/wino_f32_transforms_f3x3_4x4.cl"
#include "opencl/generated/wino_f32_transforms_f4x4_4x4.cl"
#include "opencl/generated/wino_f32_transforms_f5x5_4x4.cl"
#include "opencl/generated/wino_f32_transforms_f6x6_4x4.cl"
#include "opencl/generated/wino_f32_transforms_f7x7_4x4.cl"
#include "opencl/generated/wino_f32_transforms_f2x2_5x5.cl"
#include "opencl/generated/wino_f32_transforms_f3x3_5x5.cl"
#include "opencl/generated/wino_f32_transforms_f4x4_5x5.cl"
#include "opencl/generated/wino_f32_transforms_f5x5_5x5.cl"
#include "opencl/generated/wino_f32_transforms_f6x6_5x5.cl"
#include "opencl/generated/wino_f32_transforms_f2x2_6x6.cl"
#include "opencl/generated/wino_f32_transforms_f3x3_6x6.cl"
#include "opencl/generated/wino_f32_transforms_f4x4_6x6.cl"
#include "opencl/generated/wino_f32_transforms_f5x5_6x6.cl"
#include "opencl/generated/wino_f32_transforms_f2x2_7x7.cl"
#include "opencl/generated/wino_f32_transforms_f3x3_7x7.cl"
#include "opencl/generated/wino_f32_transforms_f4x4_7x7.cl"
#undef fma

/* Error bound relative to |M| |X| |M|^T, which bounds every intermediate of a recipe: the
 * deepest default recipes chain 7 operations per pass, 14 per 2D transform, each rounding once
 * and its constant once, so at most 28 * 2^-24 = 14 FLT_EPSILON; 2 to 4 is what is measured. */
#define TOL (16 * FLT_EPSILON)
#define TILES_PER_FUNCTION 8

static const int lane_counts[] = {1, 3, 17, 64};
static const char *const stage_names[3] = {"input", "filter", "output"};
static const enum wino_matrix stage_matrix[3] = {WINO_MATRIX_BT, WINO_MATRIX_G, WINO_MATRIX_AT};

static struct test_rng rng;
static struct test_counts counts;

/* ---- (a) reproducibility ---- */

/* The committed file as text (malloc'ed), or NULL. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t len = 0, cap = 1 << 16;
    char *text = malloc(cap);
    for (size_t got = 1; text && got;) {
        if (cap - len < 4097) {
            char *p = realloc(text, cap *= 2);
            if (!p) {
                free(text);
                text = NULL;
                break;
            }
            text = p;
        }
        got = fread(text + len, 1, 4096, f);
        len += got;
        text[len] = '\0';
    }
    fclose(f);
    return text;
}

/* Whether the committed file equals the expected text; says how to refresh it if not. */
static int matches_committed(const char *path, const char *expected)
{
    char *text = read_text(path);
    int ok = text && !strcmp(text, expected);
    if (!ok) {
        size_t at = 0;
        while (text && text[at] && text[at] == expected[at])
            at++;
        printf("STALE: %s %s (first difference at byte %zu); regenerate the committed files "
               "with: wino gen --write-defaults .\n",
               path, text ? "differs from the generator's output" : "is missing", at);
    }
    free(text);
    return ok;
}

/* Whether the runtime's tile t holds exactly the generator's F(t->m, t->r) on points. */
static int same_tile(const struct wino_tile_matrices *t, const char *points, unsigned flags)
{
    wino_tile *tile = NULL;
    double storage[WINO_MAX_ALPHA * 3 * WINO_MAX_ALPHA];
    struct wino_tile_matrices g;
    int same = !wino_tile_create(t->m, t->r, points, flags, &tile) &&
               !wino_tile_matrices_get(tile, storage, sizeof storage / sizeof storage[0], &g);
    const int a = t->m + t->r - 1;
    same = same && !memcmp(t->at, g.at, sizeof(double) * (size_t)(t->m * a)) &&
           !memcmp(t->g, g.g, sizeof(double) * (size_t)(a * t->r)) &&
           !memcmp(t->bt, g.bt, sizeof(double) * (size_t)(a * a));
    wino_tile_destroy(tile);
    return same;
}

/* The tables compiled into the runtime are the generator's matrices, bit for bit. */
static void check_runtime_tiles(void)
{
    int tiles = 0, same = 1;
    for (int r = 1; r <= WINO_MAX_ALPHA; r++)
        for (int m = 1; m + r - 1 <= WINO_MAX_ALPHA; m++, tiles++) {
            const struct wino_tile_matrices *t = wino_recorded_tile(m, r);
            if (!t || t->m != m || t->r != r || !same_tile(t, NULL, 0)) {
                printf("  F(%d, %d) differs from the generator's\n", m, r);
                same = 0;
            }
        }
    test_check(&counts, same && tiles == 136 && !wino_recorded_tile(16, 2) &&
                            !wino_recorded_tile(0, 3),
               "the runtime's 136 recorded tiles are the generator's, bit for bit");
    same = !wino_int8_exact_tile(3) && !wino_int8_exact_tile(8);
    for (int m = 2; m <= 6; m += 2) {
        const struct wino_tile_matrices *t = wino_int8_exact_tile(m);
        same = same && t && t->m == m &&
               same_tile(t, wino_int8_tile_points(m),
                         WINO_TILE_INTEGER_BT | WINO_TILE_INTEGER_AT);
    }
    test_check(&counts, same, "the runtime's INT8 tiles F(2|4|6, 3) are the generator's");
}

/* The emission of F(m, r) (malloc'ed), checking the buffer rules on the way. */
static char *emit(const wino_tile *tile, enum wino_emit_lang lang)
{
    size_t n = 0, n2 = 0;
    if (wino_tile_emit(tile, lang, NULL, 0, &n) || n < 2)
        return NULL;
    char *text = malloc(n), small[8];
    if (!text)
        return NULL;
    const int ok = wino_tile_emit(tile, lang, small, sizeof small, &n2) == WINO_INVALID_ARGUMENT &&
                   n2 == n && wino_tile_emit(tile, lang, text, n, NULL) == WINO_SUCCESS &&
                   strlen(text) + 1 == n;
    if (!ok) {
        free(text);
        return NULL;
    }
    return text;
}

static void check_reproducible(void)
{
    char path[128], what[200];
    for (int r = WINO_DEFAULT_MIN_R; r <= WINO_DEFAULT_MAX_R; r++)
        for (int m = WINO_DEFAULT_MIN_M; m <= WINO_DEFAULT_MAX_M; m++) {
            if (!wino_is_default_tile(m, r))
                continue;
            wino_tile *tile;
            if (wino_tile_create(m, r, NULL, 0, &tile)) {
                test_check(&counts, 0, wino_last_error());
                continue;
            }
            for (int lang = WINO_EMIT_C; lang <= WINO_EMIT_OPENCL; lang++) {
                char *text = emit(tile, (enum wino_emit_lang)lang),
                     *again = emit(tile, (enum wino_emit_lang)lang);
                wino_default_tile_path(m, r, (enum wino_emit_lang)lang, path, sizeof path);
                snprintf(what, sizeof what, "%s is what the generator emits now", path);
                test_check(&counts,
                           text && again && !strcmp(text, again) && matches_committed(path, text),
                           what);
                free(text);
                free(again);
            }
            wino_tile_destroy(tile);
        }
    char *table = wino_gen_transform_table();
    test_check(&counts, table && matches_committed(WINO_TRANSFORM_TABLE_PATH, table),
               WINO_TRANSFORM_TABLE_PATH " is what the generator emits now");
    free(table);
    char *list = wino_gen_cuda_tile_list();
    test_check(&counts, list && matches_committed(WINO_CUDA_TILE_LIST_PATH, list),
               WINO_CUDA_TILE_LIST_PATH " is what the generator emits now");
    free(list);
    char *int8 = wino_gen_int8_tables();
    test_check(&counts, int8 && matches_committed(WINO_INT8_TABLES_PATH, int8),
               WINO_INT8_TABLES_PATH " is what the generator emits now");
    free(int8);
    char *recipes = wino_gen_int8_recipes();
    test_check(&counts, recipes && matches_committed(WINO_INT8_RECIPES_PATH, recipes),
               WINO_INT8_RECIPES_PATH " is what the generator emits now");
    free(recipes);
    char *rows = wino_gen_rows_tiles();
    test_check(&counts, rows && matches_committed(WINO_ROWS_TILES_PATH, rows),
               WINO_ROWS_TILES_PATH " is what the generator emits now");
    free(rows);
    char *tiles = wino_gen_recorded_tiles();
    test_check(&counts, tiles && matches_committed(WINO_RECORDED_TILES_PATH, tiles),
               WINO_RECORDED_TILES_PATH " is what the generator emits now");
    free(tiles);
    check_runtime_tiles();

    char *doc = read_text(WINO_OP_TABLE_DOC), *ops = wino_gen_op_table();
    char *begin = doc ? strstr(doc, WINO_OP_TABLE_BEGIN) : NULL;
    char *end = begin ? strstr(begin, WINO_OP_TABLE_END) : NULL;
    int ok = ops && end;
    if (ok) {
        begin += strlen(WINO_OP_TABLE_BEGIN);
        ok = (size_t)(end - begin) == strlen(ops) && !memcmp(begin, ops, strlen(ops));
    }
    if (!ok)
        printf("STALE: the op-count table in %s; regenerate with: wino gen --write-defaults .\n",
               WINO_OP_TABLE_DOC);
    test_check(&counts, ok, WINO_OP_TABLE_DOC " holds the current op-count table");
    free(doc);
    free(ops);

    struct wino_f32_transforms none = wino_f32_transforms_for(9, 2),
                               big = wino_f32_transforms_for(2, 9);
    test_check(&counts, !none.input && !none.filter && !none.output && !big.input,
               "wino_f32_transforms_for is all NULL outside the default tiles");
}

/* ---- (b), (c) numerics ---- */

/* A 2D transform under test: Y = M X M^T with M (p x n) in double. */
struct xform {
    int n, p;
    double mat[WINO_MAX_ALPHA * WINO_MAX_ALPHA];
};

/* Reference Y and the rounding bound |M| |X| |M|^T, for one tile x (n x n, row-major). */
static void reference(const struct xform *t, const double *x, double *y, double *bound)
{
    double tm[WINO_MAX_ALPHA][WINO_MAX_ALPHA], ta[WINO_MAX_ALPHA][WINO_MAX_ALPHA];
    for (int i = 0; i < t->p; i++)
        for (int b = 0; b < t->n; b++) {
            tm[i][b] = ta[i][b] = 0.0;
            for (int a = 0; a < t->n; a++) {
                tm[i][b] += t->mat[i * t->n + a] * x[a * t->n + b];
                ta[i][b] += fabs(t->mat[i * t->n + a] * x[a * t->n + b]);
            }
        }
    for (int i = 0; i < t->p; i++)
        for (int j = 0; j < t->p; j++) {
            y[i * t->p + j] = bound[i * t->p + j] = 0.0;
            for (int b = 0; b < t->n; b++) {
                y[i * t->p + j] += tm[i][b] * t->mat[j * t->n + b];
                bound[i * t->p + j] += ta[i][b] * fabs(t->mat[j * t->n + b]);
            }
        }
}

/* Whether got (one tile) is within TOL of the reference; describes the first failure. */
static int tile_close(const struct xform *t, const double *x, const double *got, char *why,
                      size_t cap)
{
    double y[WINO_MAX_ALPHA * WINO_MAX_ALPHA], bound[WINO_MAX_ALPHA * WINO_MAX_ALPHA];
    reference(t, x, y, bound);
    for (int e = 0; e < t->p * t->p; e++)
        if (!(fabs(got[e] - y[e]) <= TOL * bound[e])) {
            snprintf(why, cap, "element (%d, %d): got %.9g, want %.9g (bound %.3g)", e / t->p,
                     e % t->p, got[e], y[e], bound[e]);
            return 0;
        }
    return 1;
}

/* Row and column strides of a k x k lane-vector tile in one of three layouts. */
static void layout(int which, int k, int lanes, ptrdiff_t *row, ptrdiff_t *col)
{
    switch (which) {
    case 0: /* gathered [k][k][lanes] */
        *col = lanes;
        *row = (ptrdiff_t)k * lanes;
        break;
    case 1: /* transposed */
        *row = lanes;
        *col = (ptrdiff_t)k * lanes;
        break;
    default: /* NHWC-like with gaps between vectors and rows */
        *col = lanes + 3;
        *row = (ptrdiff_t)k * (lanes + 3) + 5;
        break;
    }
}

static size_t extent(int k, int lanes, ptrdiff_t row, ptrdiff_t col)
{
    return (size_t)((k - 1) * row + (k - 1) * col + lanes);
}

/* One call of a C transform: random input, poisoned output, every lane checked. */
static int check_c_call(wino_f32_transform_fn *fn, const struct xform *t, int lanes, int lay,
                        char *why, size_t cap)
{
    ptrdiff_t ir, ic, orow, ocol;
    layout(lay, t->n, lanes, &ir, &ic);
    layout((lay + 1) % 3, t->p, lanes, &orow, &ocol);
    const size_t ni = extent(t->n, lanes, ir, ic), no = extent(t->p, lanes, orow, ocol);
    float *in = malloc(ni * sizeof *in), *out = malloc(no * sizeof *out);
    char *mine = calloc(no, 1);
    int ok = in && out && mine;
    for (size_t e = 0; ok && e < ni; e++)
        in[e] = (float)test_rng_sym(&rng);
    for (size_t e = 0; ok && e < no; e++)
        out[e] = NAN;
    if (ok)
        fn(in, ir, ic, out, orow, ocol, lanes);
    for (int l = 0; ok && l < lanes; l++) {
        double x[WINO_MAX_ALPHA * WINO_MAX_ALPHA], y[WINO_MAX_ALPHA * WINO_MAX_ALPHA];
        for (int a = 0; a < t->n; a++)
            for (int b = 0; b < t->n; b++)
                x[a * t->n + b] = in[a * ir + b * ic + l];
        for (int i = 0; i < t->p; i++)
            for (int j = 0; j < t->p; j++) {
                y[i * t->p + j] = out[i * orow + j * ocol + l];
                mine[i * orow + j * ocol + l] = 1;
            }
        ok = tile_close(t, x, y, why, cap);
        if (!ok)
            snprintf(why + strlen(why), cap - strlen(why), " in lane %d", l);
    }
    for (size_t e = 0; ok && e < no; e++)
        if (!mine[e] && !isnan(out[e])) {
            snprintf(why, cap, "wrote float %zu, outside the output elements", e);
            ok = 0;
        }
    free(in);
    free(out);
    free(mine);
    return ok;
}

static int load_xform(const wino_tile *tile, int stage, struct xform *t)
{
    return wino_tile_matrix_shape(tile, stage_matrix[stage], &t->p, &t->n) == WINO_SUCCESS &&
           wino_tile_matrix_double(tile, stage_matrix[stage], t->mat) == WINO_SUCCESS;
}

static void check_c_transforms(void)
{
    char what[400], why[200];
    for (int r = WINO_DEFAULT_MIN_R; r <= WINO_DEFAULT_MAX_R; r++)
        for (int m = WINO_DEFAULT_MIN_M; m <= WINO_DEFAULT_MAX_M; m++) {
            if (!wino_is_default_tile(m, r))
                continue;
            const struct wino_f32_transforms fns = wino_f32_transforms_for(m, r);
            wino_f32_transform_fn *fn[3] = {fns.input, fns.filter, fns.output};
            wino_tile *tile;
            if (wino_tile_create(m, r, NULL, 0, &tile)) {
                test_check(&counts, 0, wino_last_error());
                continue;
            }
            for (int s = 0; s < 3; s++) {
                struct xform t;
                int ok = fn[s] && load_xform(tile, s, &t);
                snprintf(why, sizeof why, "missing from the table");
                for (int lc = 0; ok && lc < (int)(sizeof lane_counts / sizeof *lane_counts); lc++)
                    for (int lay = 0; ok && lay < 3; lay++) {
                        ok = check_c_call(fn[s], &t, lane_counts[lc], lay, why, sizeof why);
                        if (!ok)
                            snprintf(why + strlen(why), sizeof why - strlen(why),
                                     " (%d lanes, layout %d)", lane_counts[lc], lay);
                    }
                snprintf(what, sizeof what,
                         "C %s transform of F(%dx%d, %dx%d) matches its matrix%s%s", stage_names[s],
                         m, m, r, r, ok ? "" : ": ", ok ? "" : why);
                test_check(&counts, ok, what);
            }
            wino_tile_destroy(tile);
        }
}

/* Uniform signatures around the single-tile functions of one tile (they take fixed-size
 * arrays): SUFFIX is empty for CUDA's names, __opencl for OpenCL's. */
typedef void tile_fn(const float *in, float *out);
#define WRAP_TILE(M, R, SUFFIX)                                                                    \
    static void wrap##SUFFIX##_input_##M##_##R(const float *in, float *out)                       \
    {                                                                                              \
        wino_f32_input_transform_f##M##x##M##_##R##x##R##SUFFIX((const float(*)[M + R - 1]) in,    \
                                                                (float(*)[M + R - 1]) out);        \
    }                                                                                              \
    static void wrap##SUFFIX##_filter_##M##_##R(const float *in, float *out)                      \
    {                                                                                              \
        wino_f32_filter_transform_f##M##x##M##_##R##x##R##SUFFIX((const float(*)[R])in,            \
                                                                 (float(*)[M + R - 1]) out);       \
    }                                                                                              \
    static void wrap##SUFFIX##_output_##M##_##R(const float *in, float *out)                      \
    {                                                                                              \
        wino_f32_output_transform_f##M##x##M##_##R##x##R##SUFFIX((const float(*)[M + R - 1]) in,   \
                                                                 (float(*)[M])out);                \
    }
#define WRAP_BOTH(M, R) WRAP_TILE(M, R, ) WRAP_TILE(M, R, __opencl)
#define DEFAULT_TILES(X)                                                                           \
    X(2, 2)                                                                                        \
    X(3, 2)                                                                                        \
    X(4, 2) X(5, 2) X(6, 2) X(7, 2) X(8, 2) X(2, 3) X(3, 3) X(4, 3) X(5, 3) X(6, 3) X(7, 3)        \
        X(8, 3) X(2, 4) X(3, 4) X(4, 4) X(5, 4) X(6, 4) X(7, 4) X(2, 5) X(3, 5) X(4, 5) X(5, 5)    \
            X(6, 5) X(2, 6) X(3, 6) X(4, 6) X(5, 6) X(2, 7) X(3, 7) X(4, 7)
DEFAULT_TILES(WRAP_BOTH)
#define TILE_ENTRY(M, R)                                                                           \
    {M,                                                                                            \
     R,                                                                                            \
     {{wrap_input_##M##_##R, wrap_filter_##M##_##R, wrap_output_##M##_##R},                        \
      {wrap__opencl_input_##M##_##R, wrap__opencl_filter_##M##_##R,                                \
       wrap__opencl_output_##M##_##R}}},
static const struct {
    int m, r;
    tile_fn *fn[2][3]; /* [CUDA, OpenCL][stage] */
} single_tiles[] = {DEFAULT_TILES(TILE_ENTRY)};
static const char *const single_tile_langs[2] = {"CUDA", "OpenCL"};

static void check_single_tile_transforms(void)
{
    char what[400], why[200];
    const int n_tiles = (int)(sizeof single_tiles / sizeof single_tiles[0]);
    int listed = 0;
    for (int r = WINO_DEFAULT_MIN_R; r <= WINO_DEFAULT_MAX_R; r++)
        for (int m = WINO_DEFAULT_MIN_M; m <= WINO_DEFAULT_MAX_M; m++)
            listed += wino_is_default_tile(m, r);
    test_check(&counts, listed == n_tiles,
               "this test includes every default tile's .cuh and .cl");
    for (int k = 0; k < n_tiles; k++) {
        wino_tile *tile;
        if (wino_tile_create(single_tiles[k].m, single_tiles[k].r, NULL, 0, &tile)) {
            test_check(&counts, 0, wino_last_error());
            continue;
        }
        for (int lang = 0; lang < 2; lang++)
            for (int s = 0; s < 3; s++) {
                struct xform t;
                int ok = load_xform(tile, s, &t);
                snprintf(why, sizeof why, "no matrix");
                for (int rep = 0; ok && rep < TILES_PER_FUNCTION; rep++) {
                    float in[WINO_MAX_ALPHA * WINO_MAX_ALPHA],
                        out[WINO_MAX_ALPHA * WINO_MAX_ALPHA];
                    double x[WINO_MAX_ALPHA * WINO_MAX_ALPHA],
                        y[WINO_MAX_ALPHA * WINO_MAX_ALPHA];
                    for (int e = 0; e < t.n * t.n; e++)
                        x[e] = in[e] = (float)test_rng_sym(&rng);
                    for (int e = 0; e < WINO_MAX_ALPHA * WINO_MAX_ALPHA; e++)
                        out[e] = NAN;
                    single_tiles[k].fn[lang][s](in, out);
                    for (int e = 0; e < t.p * t.p; e++)
                        y[e] = out[e];
                    ok = tile_close(&t, x, y, why, sizeof why);
                    for (int e = t.p * t.p; ok && e < WINO_MAX_ALPHA * WINO_MAX_ALPHA; e++)
                        if (!isnan(out[e])) {
                            snprintf(why, sizeof why, "wrote float %d, past the output tile", e);
                            ok = 0;
                        }
                }
                snprintf(what, sizeof what,
                         "%s %s transform of F(%dx%d, %dx%d), compiled as C, matches its "
                         "matrix%s%s",
                         single_tile_langs[lang], stage_names[s], single_tiles[k].m,
                         single_tiles[k].m, single_tiles[k].r, single_tiles[k].r, ok ? "" : ": ",
                         ok ? "" : why);
                test_check(&counts, ok, what);
            }
        wino_tile_destroy(tile);
    }
}

/* ---- (d) literals ---- */

/* f is the float nearest to q, and its literal reads back as f. */
static int literal_ok(mpq_srcptr q, char *why, size_t cap)
{
    const float f = wino_q_to_float(q);
    char lit[40];
    wino_float_literal(f, lit, sizeof lit);
    mpq_t d, e;
    mpq_inits(d, e, NULL);
    mpq_set_d(d, f);
    mpq_sub(d, d, q);
    mpq_abs(d, d);
    int ok = strtof(lit, NULL) == f && lit[strlen(lit) - 1] == 'f';
    for (int side = 0; ok && side < 2; side++) { /* no float is closer */
        mpq_set_d(e, nextafterf(f, side ? INFINITY : -INFINITY));
        mpq_sub(e, e, q);
        mpq_abs(e, e);
        ok = mpq_cmp(d, e) <= 0;
    }
    if (!ok)
        gmp_snprintf(why, cap, "%Qd -> %s", q, lit);
    mpq_clears(d, e, NULL);
    return ok;
}

static void check_literals(void)
{
    static const struct {
        const char *q, *text; /* text NULL: only the round trip is checked */
    } fixed[] = {{"1/6", "0.16666667f"},
                 {"-1/3", "-0.33333334f"},
                 {"1/2", "0.5f"},
                 {"21/4", "5.25f"},
                 {"-5", "-5.0f"},
                 {"100", "100.0f"},
                 {"0", "0.0f"},
                 {"1/10000000", "1.0e-7f"},
                 {"1073741824", "1.0737418e9f"},
                 {"1/1024", NULL},
                 {"16777217", NULL},
                 {"3/1048576", NULL},
                 {"2/3", NULL},
                 {"1/7", NULL}};
    char why[120] = "", lit[40];
    int ok = 1;
    mpq_t q;
    mpq_init(q);
    for (size_t i = 0; ok && i < sizeof fixed / sizeof fixed[0]; i++) {
        mpq_set_str(q, fixed[i].q, 10);
        mpq_canonicalize(q);
        ok = literal_ok(q, why, sizeof why);
        wino_float_literal(wino_q_to_float(q), lit, sizeof lit);
        if (ok && fixed[i].text && strcmp(lit, fixed[i].text)) {
            snprintf(why, sizeof why, "%s -> %s, want %s", fixed[i].q, lit, fixed[i].text);
            ok = 0;
        }
    }
    for (int i = 0; ok && i < 2000; i++) {
        mpq_set_si(q, (long)(test_rng_next(&rng) % 2000001) - 1000000,
                   1 + (unsigned long)(test_rng_next(&rng) % 100000));
        mpq_canonicalize(q);
        ok = literal_ok(q, why, sizeof why);
    }
    test_check(&counts, ok,
               ok ? "float literals: nearest float, shortest text that reads back" : why);
    mpq_clear(q);
}

static void check_emit_basics(void)
{
    wino_tile *tile;
    if (wino_tile_create(4, 3, "0,1,-1,2,-2", 0, &tile)) {
        test_check(&counts, 0, wino_last_error());
        return;
    }
    char *c = emit(tile, WINO_EMIT_C), *cu = emit(tile, WINO_EMIT_CUDA),
         *cl = emit(tile, WINO_EMIT_OPENCL);
    static const char c_banner[] =
        "/* Generated by wino's transform generator: wino gen --m 4 --r 3 "
        "--points 0,1,-1,2,-2 --emit c --out FILE. Do not edit by hand. */\n";
    static const char cuda_banner[] =
        "/* Generated by wino's transform generator: wino gen --m 4 --r 3 "
        "--points 0,1,-1,2,-2 --emit cuda --out FILE. Do not edit by hand. */\n";
    static const char opencl_banner[] =
        "/* Generated by wino's transform generator: wino gen --m 4 --r 3 "
        "--points 0,1,-1,2,-2 --emit opencl --out FILE. Do not edit by hand. */\n";
    test_check(&counts,
               c && cu && cl && !strncmp(c, c_banner, strlen(c_banner)) &&
                   !strncmp(cu, cuda_banner, strlen(cuda_banner)) &&
                   !strncmp(cl, opencl_banner, strlen(opencl_banner)),
               "F(4, 3) emission: buffer rules, banner naming the command");
    struct wino_op_counts b, o;
    test_check(&counts,
               !wino_tile_op_counts(tile, WINO_TRANSFORM_INPUT, &b, &o) && b.mul == 432 &&
                   b.add == 360 && o.add + o.mul + o.fma == 144,
               "F(4x4, 3x3) input transform: 792 dense operations, 144 in the recipe");
    free(c);
    free(cu);
    free(cl);
    wino_tile_destroy(tile);
}

int main(void)
{
    rng.s = test_seed();
    check_emit_basics();
    check_literals();
    check_reproducible();
    check_c_transforms();
    check_single_tile_transforms();
    return test_report(&counts);
}
