/* WinRS configuration (Zhang et al., ICPP'25, section 4): the fastest pair of kernels, the
 * baseline segment count and the segment shape, for the CPU. */
#include <limits.h>

#include "base/error.h"
#include "cpu/backward_filter_f32.h"
#include "cpu/winrs_f32.h"

/* The kernels Omega_alpha(n, r) wino chooses from: the paper's twelve Winograd ones (Figure 6:
 * alpha 4, 8 and 16), the alpha 16 ones for filter-gradient widths beyond its 9, and the direct
 * unit F(1, 1) that completes any row. A filter row that no n divides takes one narrower tile
 * F(S mod n, r) besides (e.g. S = 31 as 3 x F(8, 9) + F(7, 9)). */
static const int catalog[][2] = {
    {2, 3},  {3, 2},  {3, 6},  {6, 3},  {4, 5},  {5, 4},  {7, 2},  {5, 12}, {6, 11},
    {7, 10}, {8, 9},  {9, 8},  {10, 7}, {11, 6}, {12, 5}, {13, 4}, {1, 1}};
#define CATALOG_SIZE ((int)(sizeof catalog / sizeof catalog[0]))

/* Cost of one unit of F(n, r) over a filter row of s taps: the multiplications of its tiles
 * (alpha each) per (k, c) pair, plus one for the unit's transforms and bookkeeping. */
static long unit_cost(int n, int r, int s)
{
    const int full = s / n, rest = s % n;
    return (long)full * (n + r - 1) + (rest ? rest + r - 1 : 0) + 1;
}

long wino_winrs_plan_cost(const struct wino_winrs_plan *plan, int s)
{
    long cost = 0;
    for (int k = 0; k < plan->kinds; k++)
        cost += plan->units[k] * (unit_cost(plan->n[k], plan->r[k], s) - 1);
    return cost;
}

/* The fewest units of width r1 (< r0) that leave a multiple of r0 in q columns, or -1. */
static int residual_units(int q, int r0, int r1)
{
    for (int k1 = 0; k1 < r0 && (long)k1 * r1 <= q; k1++)
        if ((q - k1 * r1) % r0 == 0)
            return k1;
    return -1;
}

/* Section 4.1: over pairs of kernels (the bulk one of width r0, the residual one narrower),
 * the one of least cost for a row of q columns; the request may fix either. */
static enum wino_status choose_pair(int s, int q, const struct wino_winrs_request *req,
                                    struct wino_winrs_plan *plan)
{
    long best = LONG_MAX;
    const int max_alpha = req->max_alpha ? req->max_alpha : WINO_MAX_ALPHA;
    for (int a = -1; a < CATALOG_SIZE; a++) { /* a = -1: the requested bulk kernel */
        const int n0 = a < 0 ? req->n[0] : catalog[a][0], r0 = a < 0 ? req->r[0] : catalog[a][1];
        if ((a < 0) != (req->r[0] > 0) || n0 < 1 || n0 > s || n0 + r0 - 1 > max_alpha)
            continue;
        for (int b = -2; b < CATALOG_SIZE; b++) { /* b = -2: none; b = -1: the requested one */
            int n1 = 0, r1 = 0;
            if (b >= 0) {
                n1 = catalog[b][0];
                r1 = catalog[b][1];
            } else if (b == -1) {
                n1 = req->n[1];
                r1 = req->r[1];
            }
            if ((b == -1) != (req->r[1] > 0) || (b >= 0 && r1 >= r0) || n1 > s ||
                (b == -1 && n1 < 1) || n1 + r1 - 1 > max_alpha)
                continue;
            const int k1 = b == -2 ? (q % r0 ? -1 : 0) : residual_units(q, r0, r1);
            if (k1 < 0 || (b != -2 && k1 == 0 && req->r[1] == 0))
                continue;
            const int k0 = (q - k1 * (b == -2 ? 0 : r1)) / r0;
            const long cost =
                k0 * unit_cost(n0, r0, s) + (k1 ? k1 * unit_cost(n1, r1, s) : 0);
            if (cost < best) {
                best = cost;
                plan->kinds = k1 ? 2 : 1;
                plan->n[0] = n0, plan->r[0] = r0, plan->units[0] = k0;
                plan->n[1] = k1 ? n1 : 0, plan->r[1] = k1 ? r1 : 0, plan->units[1] = k1;
            }
        }
    }
    if (best == LONG_MAX)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "no WinRS kernel pair covers a row of %d columns and a filter row of %d "
                         "taps as requested", q, s);
    if (!plan->units[0]) { /* only residual units fit: they become the bulk */
        plan->kinds = 1;
        plan->n[0] = plan->n[1], plan->r[0] = plan->r[1], plan->units[0] = plan->units[1];
        plan->n[1] = plan->r[1] = plan->units[1] = 0;
    }
    return WINO_SUCCESS;
}

/* The most segments a plan has, far more than threads need: a huge request or map gets wider
 * columns and taller bands instead (bands x columns an int, the segments' array sane). */
#define WINRS_MAX_SEGMENTS 65536L

/* Algorithm 2: the segment shape for a baseline count z over the r0-wide part of the rows
 * (w_max units of r0) and p rows, no band shorter than the height padding. */
static void segment_shape(int z, int p, int pad_h, int r0, int w_max, int *sh, int *sw)
{
    const int h_max = pad_h ? (p / pad_h > 0 ? p / pad_h : 1) : p;
    if ((long)z > (long)h_max * w_max)
        z = h_max * w_max;
    *sh = p;
    *sw = r0 * w_max;
    if (z <= 1)
        return;
    if (z >= w_max) {
        *sw = r0;
        *sh = (int)((long)p * w_max / z);
    } else if (w_max % z == 0) {
        *sw = r0 * (w_max / z);
    } else {
        int x = w_max / z;
        while (x <= (long)h_max * w_max / z && w_max % x)
            x++;
        if (x <= (long)h_max * w_max / z) {
            *sh = (int)((long)p * w_max / ((long)z * x));
            *sw = x * r0;
        }
    }
    *sh = *sh < 1 ? 1 : *sh > p ? p : *sh;
}

/* The request's ragged plan: one kernel (the requested one, or of the catalog within
 * max_alpha) over ceil(q / r) units a row, the fewest units x tiles of a filter row (a tile of
 * the rest counts as one more), the smaller alpha on a tie. */
static enum wino_status choose_ragged(int s, int q, const struct wino_winrs_request *req,
                                      struct wino_winrs_plan *plan)
{
    long best = LONG_MAX;
    const int max_alpha = req->max_alpha ? req->max_alpha : WINO_MAX_ALPHA;
    for (int a = req->r[0] > 0 ? -1 : 0; a < (req->r[0] > 0 ? 0 : CATALOG_SIZE); a++) {
        const int n = a < 0 ? req->n[0] : catalog[a][0], r = a < 0 ? req->r[0] : catalog[a][1];
        if (n < 1 || n > s || n + r - 1 > max_alpha)
            continue;
        const long units = (q + r - 1) / r, tiles = s / n + (s % n != 0);
        const long cost = units * tiles;
        if (cost < best || (cost == best && n + r < plan->n[0] + plan->r[0])) {
            best = cost;
            plan->kinds = 1;
            plan->n[0] = n, plan->r[0] = r, plan->units[0] = (int)units;
        }
    }
    if (best == LONG_MAX)
        return wino_fail(WINO_INVALID_ARGUMENT, "no WinRS kernel within alpha %d serves a filter "
                                                "row of %d taps as requested", max_alpha, s);
    return WINO_SUCCESS;
}

enum wino_status wino_winrs_plan_kernels(const struct wino_conv2d_desc *d, int q,
                                         const struct wino_winrs_request *req,
                                         struct wino_winrs_plan *plan)
{
    static const struct wino_winrs_request none;
    const struct wino_winrs_plan zero = {0};
    *plan = zero;
    if (req && req->ragged)
        return choose_ragged(d->s, q, req, plan);
    return choose_pair(d->s, q, req ? req : &none, plan);
}

void wino_winrs_plan_segments(const struct wino_conv2d_desc *d, int p, int q,
                              long items_per_segment, int threads,
                              const struct wino_winrs_request *req, struct wino_winrs_plan *plan)
{
    /* Algorithm 1, for threads instead of SMs: enough items to share out, no segment under
     * 512 pixels of dy, the buckets within the data size */
    const double pixels = (double)d->n * p * q;
    const long by_work = pixels / 512 > (double)INT_MAX ? INT_MAX : (long)(pixels / 512);
    const size_t dw = (size_t)d->k * d->c * d->r * d->s;
    const size_t data = (size_t)d->n * d->c * d->h * d->w + (size_t)pixels * d->k + dw;
    const int z = req && req->segments
                      ? req->segments
                      : wino_backward_filter_segments(items_per_segment, threads,
                                                      by_work > 1 ? by_work : 1, dw, data);
    segment_shape(z, p, d->pad_h, plan->r[0], plan->units[0], &plan->segment_h,
                  &plan->segment_w);
    const long units = plan->units[0];
    if (units * plan->r[0] / plan->segment_w > WINRS_MAX_SEGMENTS)
        plan->segment_w = (int)((units + WINRS_MAX_SEGMENTS - 1) / WINRS_MAX_SEGMENTS) * plan->r[0];
    plan->columns = (int)((units * plan->r[0] + plan->segment_w - 1) / plan->segment_w);
    const long most_bands = WINRS_MAX_SEGMENTS / (plan->columns > 0 ? plan->columns : 1);
    if (p / plan->segment_h > most_bands)
        plan->segment_h = (int)((p + most_bands - 1) / most_bands);
    plan->bands = p / plan->segment_h;
}
