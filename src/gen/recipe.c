/* Recipe storage, counting, exact and double evaluation, and FMA contraction. */
#include "gen/recipe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int wino_recipe_init(wino_recipe *rc, int n_in, int n_out)
{
    memset(rc, 0, sizeof *rc);
    rc->n_in = n_in;
    rc->n_out = n_out;
    rc->out = malloc((size_t)(n_out ? n_out : 1) * sizeof *rc->out);
    if (!rc->out)
        return -1;
    for (int i = 0; i < n_out; i++)
        rc->out[i] = -1;
    return 0;
}

void wino_recipe_clear(wino_recipe *rc)
{
    for (int k = 0; k < rc->n_inst; k++)
        mpq_clear(rc->inst[k].c);
    free(rc->inst);
    free(rc->out);
    memset(rc, 0, sizeof *rc);
}

int wino_recipe_push(wino_recipe *rc, enum wino_rop op, int a, int b, int sb, mpq_srcptr c)
{
    if (rc->n_inst == rc->cap_inst) {
        int cap = rc->cap_inst ? 2 * rc->cap_inst : 32;
        struct wino_rinst *p = realloc(rc->inst, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        rc->inst = p;
        rc->cap_inst = cap;
    }
    struct wino_rinst *in = &rc->inst[rc->n_inst];
    in->op = op;
    in->a = a;
    in->b = b;
    in->sb = sb;
    mpq_init(in->c);
    if (c)
        mpq_set(in->c, c);
    in->cd = mpq_get_d(in->c);
    return rc->n_in + rc->n_inst++;
}

/* The instruction defining value v, or NULL for an input. */
static struct wino_rinst *def(const wino_recipe *rc, int v)
{
    return v >= rc->n_in ? &rc->inst[v - rc->n_in] : NULL;
}

int wino_recipe_contract_fma(wino_recipe *rc)
{
    const int nv = rc->n_in + rc->n_inst;
    int *uses = calloc((size_t)nv, sizeof *uses);
    int *map = malloc((size_t)nv * sizeof *map);
    if (!uses || !map) {
        free(uses);
        free(map);
        return -1;
    }
    for (int k = 0; k < rc->n_inst; k++) {
        uses[rc->inst[k].a]++;
        if (rc->inst[k].op == WINO_ROP_ADD || rc->inst[k].op == WINO_ROP_FMA)
            uses[rc->inst[k].b]++;
    }
    for (int i = 0; i < rc->n_out; i++)
        if (rc->out[i] >= 0)
            uses[rc->out[i]]++;

    /* map[v] == -1 marks a MUL folded into its user. */
    for (int v = 0; v < nv; v++)
        map[v] = v;
    for (int k = 0; k < rc->n_inst; k++) {
        struct wino_rinst *add = &rc->inst[k];
        if (add->op != WINO_ROP_ADD)
            continue;
        struct wino_rinst *mb = def(rc, add->b), *ma = def(rc, add->a);
        if (mb && mb->op == WINO_ROP_MUL && uses[add->b] == 1) { /* a + sb*(c*x) */
            map[add->b] = -1;
            mpq_set(add->c, mb->c);
            if (add->sb < 0)
                mpq_neg(add->c, add->c);
            add->b = add->a;
            add->a = mb->a;
            add->sb = 1;
        } else if (ma && ma->op == WINO_ROP_MUL && uses[add->a] == 1) { /* c*x + sb*b */
            map[add->a] = -1;
            mpq_set(add->c, ma->c);
            add->a = ma->a;
        } else {
            continue;
        }
        add->op = WINO_ROP_FMA;
        add->cd = mpq_get_d(add->c);
    }

    /* Compact: drop folded MULs and renumber (moving a struct moves its mpq_t, whose old slot
     * is then abandoned, not cleared). */
    int kept = 0;
    for (int k = 0; k < rc->n_inst; k++) {
        const int v = rc->n_in + k;
        if (map[v] < 0) {
            mpq_clear(rc->inst[k].c);
            continue;
        }
        struct wino_rinst in = rc->inst[k];
        in.a = map[in.a];
        if (in.op == WINO_ROP_ADD || in.op == WINO_ROP_FMA)
            in.b = map[in.b];
        map[v] = rc->n_in + kept;
        rc->inst[kept++] = in;
    }
    rc->n_inst = kept;
    for (int i = 0; i < rc->n_out; i++)
        if (rc->out[i] >= 0)
            rc->out[i] = map[rc->out[i]];
    free(uses);
    free(map);
    return 0;
}

void wino_recipe_counts(const wino_recipe *rc, struct wino_op_counts *counts)
{
    memset(counts, 0, sizeof *counts);
    for (int k = 0; k < rc->n_inst; k++)
        switch (rc->inst[k].op) {
        case WINO_ROP_ADD:
        case WINO_ROP_NEG:
            counts->add++;
            break;
        case WINO_ROP_MUL:
            counts->mul++;
            break;
        case WINO_ROP_FMA:
            counts->fma++;
            break;
        }
}

void wino_recipe_counts_2d(const wino_recipe *rc, struct wino_op_counts *counts)
{
    wino_recipe_counts(rc, counts);
    const long passes = (long)rc->n_in + rc->n_out;
    counts->add *= passes;
    counts->mul *= passes;
    counts->fma *= passes;
}

/* Value v of an evaluation: input x[v] or instruction result t[v - n_in]. */
static mpq_ptr qval(const wino_recipe *rc, mpq_t *x, mpq_t *t, int v)
{
    return v < rc->n_in ? x[v] : t[v - rc->n_in];
}

static double dval(const wino_recipe *rc, const double *x, const double *t, int v)
{
    return v < rc->n_in ? x[v] : t[v - rc->n_in];
}

int wino_recipe_eval_q(const wino_recipe *rc, mpq_t *x, mpq_t *y)
{
    mpq_t *t = malloc((size_t)(rc->n_inst ? rc->n_inst : 1) * sizeof *t);
    if (!t)
        return -1;
#define VAL(v) qval(rc, x, t, v)
    for (int k = 0; k < rc->n_inst; k++) {
        const struct wino_rinst *in = &rc->inst[k];
        mpq_init(t[k]);
        switch (in->op) {
        case WINO_ROP_ADD:
            (in->sb > 0 ? mpq_add : mpq_sub)(t[k], VAL(in->a), VAL(in->b));
            break;
        case WINO_ROP_MUL:
            mpq_mul(t[k], in->c, VAL(in->a));
            break;
        case WINO_ROP_FMA:
            mpq_mul(t[k], in->c, VAL(in->a));
            (in->sb > 0 ? mpq_add : mpq_sub)(t[k], t[k], VAL(in->b));
            break;
        case WINO_ROP_NEG:
            mpq_neg(t[k], VAL(in->a));
            break;
        }
    }
    for (int i = 0; i < rc->n_out; i++) {
        if (rc->out[i] < 0)
            mpq_set_ui(y[i], 0, 1);
        else
            mpq_set(y[i], VAL(rc->out[i]));
    }
#undef VAL
    for (int k = 0; k < rc->n_inst; k++)
        mpq_clear(t[k]);
    free(t);
    return 0;
}

int wino_recipe_eval_d(const wino_recipe *rc, const double *x, double *y)
{
    double *t = malloc((size_t)(rc->n_inst ? rc->n_inst : 1) * sizeof *t);
    if (!t)
        return -1;
#define VAL(v) dval(rc, x, t, v)
    for (int k = 0; k < rc->n_inst; k++) {
        const struct wino_rinst *in = &rc->inst[k];
        switch (in->op) {
        case WINO_ROP_ADD:
            t[k] = VAL(in->a) + in->sb * VAL(in->b);
            break;
        case WINO_ROP_MUL:
            t[k] = in->cd * VAL(in->a);
            break;
        case WINO_ROP_FMA:
            t[k] = fma(in->cd, VAL(in->a), in->sb * VAL(in->b));
            break;
        case WINO_ROP_NEG:
            t[k] = -VAL(in->a);
            break;
        }
    }
    for (int i = 0; i < rc->n_out; i++)
        y[i] = rc->out[i] < 0 ? 0.0 : VAL(rc->out[i]);
#undef VAL
    free(t);
    return 0;
}
