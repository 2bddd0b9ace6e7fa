#include "gen/op_table.h"

#include <stdlib.h>

#include "base/error.h"
#include "gen/recipe.h"
#include "gen/strbuf.h"
#include "gen/tile.h"

#define N_R 3
static const int table_r[N_R] = {3, 5, 7};
#define MIN_M 2
#define MAX_M 10

static const char *const titles[3] = {"input transform V = B^T d B", "filter transform U = G g G^T",
                                      "output transform Y = A^T M A"};

/* 100 * (1 - part / whole) rounded to one decimal, as "81.8" (integer arithmetic: no locale). */
static void put_reduction(struct wino_strbuf *sb, long part, long whole)
{
    const long tenths = (2000 * (whole - part) + whole) / (2 * whole);
    wino_strbuf_printf(sb, "%ld.%ld", tenths / 10, tenths % 10);
}

static long ops(const struct wino_op_counts *c) { return c->add + c->mul + c->fma; }

/* One table per transform: baseline and optimized counts of every tile, and the best tile. */
static enum wino_status put_transform(struct wino_strbuf *sb, enum wino_transform which)
{
    long best_ops = 1, best_base = 1; /* the smallest ops / base so far */
    int best_m = 0, best_r = 0;
    wino_strbuf_printf(sb,
                       "\n### %s\n\n"
                       "| tile | alpha | base add | base mul | add | mul | fma |"
                       " fewer ops (%%) | fewer flops (%%) |\n"
                       "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
                       titles[which]);
    for (int k = 0; k < N_R; k++)
        for (int m = MIN_M; m <= MAX_M; m++) {
            const int r = table_r[k];
            wino_tile *tile;
            struct wino_op_counts b, o;
            enum wino_status st = wino_tile_create(m, r, NULL, 0, &tile);
            if (!st)
                st = wino_tile_op_counts(tile, which, &b, &o);
            wino_tile_destroy(tile);
            if (st)
                return st;
            const long base = b.add + b.mul;
            wino_strbuf_printf(sb, "| F(%dx%d, %dx%d) | %d | %ld | %ld | %ld | %ld | %ld | ", m, m,
                               r, r, m + r - 1, b.add, b.mul, o.add, o.mul, o.fma);
            put_reduction(sb, ops(&o), base);
            wino_strbuf_printf(sb, " | ");
            put_reduction(sb, ops(&o) + o.fma, base); /* an fma counted as two flops */
            wino_strbuf_printf(sb, " |\n");
            if (ops(&o) * best_base < best_ops * base) {
                best_ops = ops(&o);
                best_base = base;
                best_m = m;
                best_r = r;
            }
        }
    wino_strbuf_printf(sb, "\nLargest reduction of the %s: ", titles[which]);
    put_reduction(sb, best_ops, best_base);
    wino_strbuf_printf(sb, "%% fewer operations, for F(%dx%d, %dx%d).\n", best_m, best_m, best_r,
                       best_r);
    return WINO_SUCCESS;
}

/* Operations of all tiles of the table for each transform, with each pass switched off in turn:
 * what each pass contributes. */
static enum wino_status put_pass_effects(struct wino_strbuf *sb)
{
    static const unsigned configs[] = {WINO_PASS_ALL,
                                       WINO_PASS_ALL & ~WINO_PASS_TRIVIAL,
                                       WINO_PASS_ALL & ~WINO_PASS_FACTOR,
                                       WINO_PASS_ALL & ~WINO_PASS_CSE,
                                       WINO_PASS_ALL & ~WINO_PASS_SYMMETRIC,
                                       WINO_PASS_ALL & ~WINO_PASS_FMA,
                                       0};
    static const char *const names[] = {"all passes",
                                        "without (a) 0 and +-1",
                                        "without (b) factoring",
                                        "without (c) CSE",
                                        "without (d) symmetric rows",
                                        "without (e) FMA",
                                        "no pass (dense products)"};
    wino_strbuf_printf(sb,
                       "\n### What each pass contributes\n\n"
                       "Operations (an fma counts as one) summed over the %d tiles above.\n\n"
                       "| recipe | input | filter | output |\n| --- | ---: | ---: | ---: |\n",
                       N_R * (MAX_M - MIN_M + 1));
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        long sum[3] = {0, 0, 0};
        for (int k = 0; k < N_R; k++)
            for (int m = MIN_M; m <= MAX_M; m++) {
                wino_tile *tile;
                enum wino_status st = wino_tile_create(m, table_r[k], NULL, 0, &tile);
                if (st)
                    return st;
                const wino_qmat *mats[3] = {&tile->toom.BT, &tile->toom.G, &tile->toom.AT};
                for (int w = 0; w < 3 && !st; w++) {
                    wino_recipe rc;
                    struct wino_op_counts n;
                    if (wino_recipe_build(&rc, mats[w], configs[c])) {
                        st = wino_fail(WINO_OUT_OF_MEMORY, "wino_gen_op_table: out of memory");
                        break;
                    }
                    wino_recipe_counts_2d(&rc, &n);
                    wino_recipe_clear(&rc);
                    sum[w] += ops(&n);
                }
                wino_tile_destroy(tile);
                if (st)
                    return st;
            }
        wino_strbuf_printf(sb, "| %s | %ld | %ld | %ld |\n", names[c], sum[0], sum[1], sum[2]);
    }
    return WINO_SUCCESS;
}

char *wino_gen_op_table(void)
{
    struct wino_strbuf sb = {0};
    enum wino_status st = WINO_SUCCESS;
    for (int w = WINO_TRANSFORM_INPUT; w <= WINO_TRANSFORM_OUTPUT && !st; w++)
        st = put_transform(&sb, (enum wino_transform)w);
    if (!st)
        st = put_pass_effects(&sb);
    if (!st && sb.failed)
        st = wino_fail(WINO_OUT_OF_MEMORY, "wino_gen_op_table: out of memory");
    if (st)
        wino_strbuf_free(&sb);
    return sb.text;
}
