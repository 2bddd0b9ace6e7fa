/* The generated straight-line transforms of the INT8 tiles (src/cpu/generated/int8_recipes.h)
 * equal the dense products with B'^T and A'^T (src/cpu/generated/int8_tiles.h):
 *  (a) in int32 on unit vectors, on the extremes +-255 and on random values;
 *  (b) in wrapping 32-bit arithmetic on two 16-bit lanes packed as lo + 65536 hi (the CUDA
 *      input transform's pairs), where each lane's dense result fits in 16 bits.
 * Usage: test_int8_recipes (WINO_TEST_SEED=N to replay). */
#include <stdint.h>
#include <stdlib.h>

#include "cpu/generated/int8_recipes.h"
#include "cpu/generated/int8_tiles.h"
#include "test_util.h"

#define MAX_ALPHA 8

/* y = the recipe of (tile m, matrix at or bt) applied to x in type T; the rows it sets. */
#define RECIPE(name, T)                                                                            \
    static int name(int m, int at, const T *x, T *y)                                               \
    {                                                                                              \
        switch (m * 2 + at) {                                                                      \
        case 4:                                                                                    \
            WINO_S8_BT_F2(T, x, y);                                                                \
            return 4;                                                                              \
        case 5:                                                                                    \
            WINO_S8_AT_F2(T, x, y);                                                                \
            return 2;                                                                              \
        case 8:                                                                                    \
            WINO_S8_BT_F4(T, x, y);                                                                \
            return 6;                                                                              \
        case 9:                                                                                    \
            WINO_S8_AT_F4(T, x, y);                                                                \
            return 4;                                                                              \
        case 12:                                                                                   \
            WINO_S8_BT_F6(T, x, y);                                                                \
            return 8;                                                                              \
        default:                                                                                   \
            WINO_S8_AT_F6(T, x, y);                                                                \
            return 6;                                                                              \
        }                                                                                          \
    }
RECIPE(recipe, int32_t)
RECIPE(recipe_wrapping, uint32_t) /* unsigned: C's arithmetic that wraps */

static int coefficient(int m, int at, int i, int j)
{
    if (m == 2)
        return at ? wino_int8_at_f2[i][j] : wino_int8_bt_f2[i][j];
    if (m == 4)
        return at ? wino_int8_at_f4[i][j] : wino_int8_bt_f4[i][j];
    return at ? wino_int8_at_f6[i][j] : wino_int8_bt_f6[i][j];
}

/* 1 when the recipe equals the dense product on x (int32, exact). */
static int equal_on(int m, int at, const int32_t *x)
{
    int32_t y[MAX_ALPHA];
    const int rows = recipe(m, at, x, y);
    for (int i = 0; i < rows; i++) {
        int64_t dense = 0;
        for (int j = 0; j < m + 2; j++)
            dense += (int64_t)coefficient(m, at, i, j) * x[j];
        if (dense != y[i])
            return 0;
    }
    return 1;
}

/* 1 when the recipe on packed pairs lo + 65536 hi, in wrapping 32-bit arithmetic, gives each
 * lane's dense result (all within +-32767 here). */
static int pairs_equal_on(int m, int at, const int32_t *lo, const int32_t *hi)
{
    uint32_t packed[MAX_ALPHA], y[MAX_ALPHA];
    int32_t ylo[MAX_ALPHA], yhi[MAX_ALPHA];
    for (int j = 0; j < m + 2; j++)
        packed[j] = (uint32_t)lo[j] + ((uint32_t)hi[j] << 16);
    const int rows = recipe_wrapping(m, at, packed, y);
    recipe(m, at, lo, ylo);
    recipe(m, at, hi, yhi);
    for (int i = 0; i < rows; i++) {
        const int32_t low = (int16_t)(uint16_t)y[i]; /* the low half, sign-extended */
        const int32_t high = (int16_t)(uint16_t)((y[i] - (uint32_t)low) >> 16);
        if (low != ylo[i] || high != yhi[i])
            return 0;
    }
    return 1;
}

int main(void)
{
    struct test_counts tc = {0, 0};
    struct test_rng rng = {test_seed()};
    for (int m = 2; m <= 6; m += 2)
        for (int at = 0; at <= 1; at++) {
            const int alpha = m + 2;
            int ok = 1;
            int32_t x[MAX_ALPHA];
            for (int j = 0; j < alpha; j++) { /* unit vectors: the recipe's matrix itself */
                for (int u = 0; u < alpha; u++)
                    x[u] = u == j;
                ok = ok && equal_on(m, at, x);
            }
            for (int s = 0; s < 1 << alpha; s++) { /* every corner of [-255, 255]^alpha */
                for (int u = 0; u < alpha; u++)
                    x[u] = s >> u & 1 ? 255 : -255;
                ok = ok && equal_on(m, at, x);
            }
            for (int r = 0; r < 10000; r++) {
                for (int u = 0; u < alpha; u++)
                    x[u] = (int32_t)(test_rng_next(&rng) % 2000001) - 1000000;
                ok = ok && equal_on(m, at, x);
            }
            char what[96];
            snprintf(what, sizeof what, "%s of F(%d,3): the recipe is the dense product in int32",
                     at ? "A'^T" : "B'^T", m);
            test_check(&tc, ok, what);
            /* lanes small enough that every dense result fits in 16 bits */
            int bound = 0;
            for (int i = 0; i < (at ? m : alpha); i++) {
                int row = 0;
                for (int j = 0; j < alpha; j++)
                    row += abs(coefficient(m, at, i, j));
                bound = row > bound ? row : bound;
            }
            const int lane = 32767 / bound;
            ok = 1;
            for (int r = 0; r < 10000; r++) {
                int32_t lo[MAX_ALPHA], hi[MAX_ALPHA];
                for (int u = 0; u < alpha; u++) {
                    lo[u] = (int32_t)(test_rng_next(&rng) % (2 * (uint64_t)lane + 1)) - lane;
                    hi[u] = (int32_t)(test_rng_next(&rng) % (2 * (uint64_t)lane + 1)) - lane;
                }
                ok = ok && pairs_equal_on(m, at, lo, hi);
            }
            snprintf(what, sizeof what, "%s of F(%d,3): exact on packed 16-bit pairs (|x| <= %d)",
                     at ? "A'^T" : "B'^T", m, lane);
            test_check(&tc, ok, what);
        }
    printf("%d passed, %d failed\n", tc.passed, tc.failed);
    return tc.failed ? 1 : 0;
}
