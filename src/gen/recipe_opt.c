/* The recipe optimizer (Mazaheri et al. (EuroSys'20) section 3.1.2, Fig. 3; WinRS (Zhang et al., ICPP'25) "transform simplification").
 *
 * A matrix becomes one linear form per row, sum_j c_j s_j over symbols s: the inputs, then
 * temporaries that the passes introduce (each itself a linear form). Passes (a), (c), (d) rewrite
 * the forms; lowering turns them into instructions, applying (a) and the factoring of (b); pass
 * (e) then works on the instructions (recipe.c). Every choice is deterministic, so the recipe is a
 * pure function of the matrix and the passes. */
#include "gen/recipe.h"

#include <stdlib.h>
#include <string.h>

struct term {
    int sym;
    mpq_t c;
};

/* A pair of terms (sym a < sym b) of one form, keyed by the ratio c_b / c_a (interned). */
struct pair_key {
    int a, b, ratio;
};

struct form {
    int n, cap;
    struct term *t; /* by increasing symbol: every pass appends new (larger) symbols last */
    int npairs, pcap;
    struct pair_key *pairs; /* CSE cache of all pair keys */
    int stale;              /* pairs must be recomputed */
};

#define RATIO_BUCKETS 1024
#define UNLOWERED (-2) /* value[] of a temporary not lowered yet */

struct opt {
    unsigned passes;
    int oom;
    int n_in, n_rows;
    int n_forms, cap_forms;
    struct form *f; /* rows, then temporaries: form n_rows + k defines symbol n_in + k */
    /* interned ratios: ratio[0] = 1 and ratio[1] = -1 (the cheapest pairs: one addition) */
    int n_ratios, cap_ratios;
    mpq_t *ratio;
    int *ratio_next, ratio_head[RATIO_BUCKETS];
    /* lowering: per symbol, the value computing it up to the factor scale[] left to its users */
    int *value;
    mpq_t *scale;
    int n_scales;
};

static int n_syms(const struct opt *o) { return o->n_in + o->n_forms - o->n_rows; }
static int sym_form(const struct opt *o, int sym) { return o->n_rows + sym - o->n_in; }

/* Pass (a), second half: a +-1 coefficient needs no multiplication (only when (a) is on). */
static int is_unit(const struct opt *o, mpq_srcptr q)
{
    return (o->passes & WINO_PASS_TRIVIAL) && !mpz_cmpabs_ui(mpq_numref(q), 1) &&
           !mpz_cmp_ui(mpq_denref(q), 1);
}

static int same_magnitude(mpq_srcptr a, mpq_srcptr b)
{
    return !mpz_cmpabs(mpq_numref(a), mpq_numref(b)) && !mpz_cmp(mpq_denref(a), mpq_denref(b));
}

/* ---- forms ---- */

static void form_append(struct opt *o, struct form *f, int sym, mpq_srcptr c)
{
    if (o->oom)
        return;
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 8;
        struct term *t = realloc(f->t, (size_t)cap * sizeof *t);
        if (!t) {
            o->oom = 1;
            return;
        }
        f->t = t;
        f->cap = cap;
    }
    f->t[f->n].sym = sym;
    mpq_init(f->t[f->n].c);
    mpq_set(f->t[f->n].c, c);
    f->n++;
    f->stale = 1;
}

static void form_remove(struct form *f, int idx)
{
    mpq_clear(f->t[idx].c);
    memmove(&f->t[idx], &f->t[idx + 1], (size_t)(f->n - idx - 1) * sizeof *f->t);
    f->n--;
    f->stale = 1;
}

static void form_clear(struct form *f)
{
    for (int j = 0; j < f->n; j++)
        mpq_clear(f->t[j].c);
    free(f->t);
    free(f->pairs);
    memset(f, 0, sizeof *f);
}

/* Appends an empty form (a row or a new temporary); NULL when out of memory. */
static struct form *new_form(struct opt *o)
{
    if (o->oom)
        return NULL;
    if (o->n_forms == o->cap_forms) {
        int cap = o->cap_forms ? 2 * o->cap_forms : 32;
        struct form *f = realloc(o->f, (size_t)cap * sizeof *f);
        if (!f) {
            o->oom = 1;
            return NULL;
        }
        o->f = f;
        o->cap_forms = cap;
    }
    struct form *f = &o->f[o->n_forms++];
    memset(f, 0, sizeof *f);
    return f;
}

/* Pass (a), first half: without it, zero coefficients stay as terms (and cost a multiplication). */
static void forms_from_matrix(struct opt *o, const wino_qmat *m)
{
    for (int i = 0; i < m->rows; i++) {
        struct form *f = new_form(o);
        for (int j = 0; f && j < m->cols; j++)
            if (mpq_sgn(wino_qmat_at(m, i, j)) || !(o->passes & WINO_PASS_TRIVIAL))
                form_append(o, f, j, wino_qmat_at(m, i, j));
    }
}

/* ---- pass (d): symmetric row pairs ---- */

/* Rows i and k pair when row k = lambda (E - O) for row i = E + O, lambda = +-1, E and O both
 * non-empty and one of them of two terms or more (else there is nothing to share). in_o[j] says
 * which part term j belongs to. (For other lambda, as for G with an unpaired point, the extra
 * multiplication makes pairing no better than pass (c), which finds the shared pairs anyway.) */
static int split_pair(const struct form *ri, const struct form *rk, char *in_o, mpq_t lambda)
{
    if (ri->n != rk->n || ri->n < 3)
        return 0;
    int have_lambda = 0, n_o = 0;
    mpq_t r;
    mpq_init(r);
    int ok = 1;
    for (int j = 0; ok && j < ri->n; j++) {
        in_o[j] = 0;
        if (ri->t[j].sym != rk->t[j].sym || !mpq_sgn(ri->t[j].c) != !mpq_sgn(rk->t[j].c)) {
            ok = 0;
        } else if (mpq_sgn(ri->t[j].c)) { /* a zero term (pass (a) off) goes with E */
            mpq_div(r, rk->t[j].c, ri->t[j].c);
            if (!have_lambda) {
                mpq_set(lambda, r);
                have_lambda = 1;
            } else if (!mpq_equal(r, lambda)) {
                mpq_neg(r, r);
                ok = mpq_equal(r, lambda);
                in_o[j] = 1;
                n_o++;
            }
        }
    }
    mpq_clear(r);
    return ok && n_o > 0 && (n_o >= 2 || ri->n - n_o >= 2) &&
           !mpz_cmpabs_ui(mpq_numref(lambda), 1) && !mpz_cmp_ui(mpq_denref(lambda), 1);
}

static void pair_rows(struct opt *o, int i, int k, const char *in_o, mpq_srcptr lambda)
{
    const int se = n_syms(o), so = se + 1, fe = o->n_forms;
    if (!new_form(o) || !new_form(o))
        return;
    struct form *ri = &o->f[i], *rk = &o->f[k];
    for (int j = 0; j < ri->n; j++)
        form_append(o, &o->f[fe + in_o[j]], ri->t[j].sym, ri->t[j].c);
    while (ri->n)
        form_remove(ri, ri->n - 1);
    while (rk->n)
        form_remove(rk, rk->n - 1);

    mpq_t c;
    mpq_init(c);
    mpq_set_ui(c, 1, 1);
    form_append(o, ri, se, c); /* row i = E + O */
    form_append(o, ri, so, c);
    form_append(o, rk, se, lambda); /* row k = lambda E - lambda O */
    mpq_neg(c, lambda);
    form_append(o, rk, so, c);
    mpq_clear(c);
}

static void pair_symmetric_rows(struct opt *o)
{
    char *paired = calloc((size_t)o->n_rows + 1, 1), *in_o = malloc((size_t)o->n_in + 1);
    mpq_t lambda;
    mpq_init(lambda);
    if (!paired || !in_o)
        o->oom = 1;
    for (int i = 0; !o->oom && i < o->n_rows; i++)
        for (int k = i + 1; !paired[i] && k < o->n_rows; k++)
            if (!paired[k] && split_pair(&o->f[i], &o->f[k], in_o, lambda)) {
                pair_rows(o, i, k, in_o, lambda);
                paired[i] = paired[k] = 1;
            }
    mpq_clear(lambda);
    free(paired);
    free(in_o);
}

/* ---- pass (c): common pairs of terms ---- */

static size_t ratio_hash(mpq_srcptr q)
{
    size_t h = (size_t)mpz_get_ui(mpq_numref(q)) * 0x9e3779b1u;
    h ^= (size_t)mpz_get_ui(mpq_denref(q)) + 0x7f4a7c15u + (h << 6) + (h >> 2);
    return (h + (size_t)(mpq_sgn(q) + 1)) % RATIO_BUCKETS;
}

/* The number of q in the ratio table (added if new), or -1 when out of memory. */
static int intern_ratio(struct opt *o, mpq_srcptr q)
{
    const size_t h = ratio_hash(q);
    for (int id = o->ratio_head[h]; id >= 0; id = o->ratio_next[id])
        if (mpq_equal(o->ratio[id], q))
            return id;
    if (o->n_ratios == o->cap_ratios) {
        int cap = o->cap_ratios ? 2 * o->cap_ratios : 64;
        mpq_t *r = realloc(o->ratio, (size_t)cap * sizeof *r);
        if (r)
            o->ratio = r;
        int *n = r ? realloc(o->ratio_next, (size_t)cap * sizeof *n) : NULL;
        if (!n) {
            o->oom = 1;
            return -1;
        }
        o->ratio_next = n;
        o->cap_ratios = cap;
    }
    const int id = o->n_ratios++;
    mpq_init(o->ratio[id]);
    mpq_set(o->ratio[id], q);
    o->ratio_next[id] = o->ratio_head[h];
    o->ratio_head[h] = id;
    return id;
}

static void refresh_pairs(struct opt *o, struct form *f)
{
    if (!f->stale || o->oom)
        return;
    const int need = f->n * (f->n - 1) / 2;
    if (need > f->pcap) {
        struct pair_key *p = realloc(f->pairs, (size_t)need * sizeof *p);
        if (!p) {
            o->oom = 1;
            return;
        }
        f->pairs = p;
        f->pcap = need;
    }
    mpq_t r;
    mpq_init(r);
    f->npairs = 0;
    for (int x = 0; x < f->n; x++)
        for (int y = x + 1; y < f->n; y++) {
            if (!mpq_sgn(f->t[x].c) || !mpq_sgn(f->t[y].c))
                continue;
            mpq_div(r, f->t[y].c, f->t[x].c);
            struct pair_key *k = &f->pairs[f->npairs++];
            k->a = f->t[x].sym;
            k->b = f->t[y].sym;
            k->ratio = intern_ratio(o, r);
        }
    mpq_clear(r);
    f->stale = 0;
}

static int key_cmp(const void *pa, const void *pb)
{
    const struct pair_key *a = pa, *b = pb;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    if (a->b != b->b)
        return a->b < b->b ? -1 : 1;
    return (a->ratio > b->ratio) - (a->ratio < b->ratio);
}

static int key_equal(const struct pair_key *a, const struct pair_key *b) { return !key_cmp(a, b); }

/* The pair of terms occurring in the most forms (at least two; ties: ratio +-1 first, then the
 * smallest key), or 0 when every pair is unique. */
static int most_common_pair(struct opt *o, struct pair_key *best)
{
    size_t total = 0;
    for (int i = 0; i < o->n_forms; i++) {
        refresh_pairs(o, &o->f[i]);
        total += (size_t)o->f[i].npairs;
    }
    struct pair_key *all = malloc((total ? total : 1) * sizeof *all);
    if (!all || o->oom) {
        o->oom = 1;
        free(all);
        return 0;
    }
    size_t n = 0;
    for (int i = 0; i < o->n_forms; i++) {
        for (int p = 0; p < o->f[i].npairs; p++)
            all[n++] = o->f[i].pairs[p];
    }
    qsort(all, n, sizeof *all, key_cmp);
    int best_count = 1, best_unit = 0;
    for (size_t s = 0, e; s < n; s = e) {
        for (e = s + 1; e < n && key_equal(&all[e], &all[s]);)
            e++;
        const int count = (int)(e - s), unit = all[s].ratio <= 1;
        if (count > best_count || (count == best_count && count > 1 && unit && !best_unit)) {
            best_count = count;
            best_unit = unit;
            *best = all[s];
        }
    }
    free(all);
    return best_count > 1;
}

static int holds_pair(const struct form *f, const struct pair_key *key)
{
    for (int p = 0; p < f->npairs; p++)
        if (key_equal(&f->pairs[p], key))
            return 1;
    return 0;
}

/* Replaces c_a s_a + c_b s_b by (sign c_a) t in every form holding the pair, with the temporary
 * t = sign (s_a + ratio s_b). The sign follows most users, so that a row like -(s_a - s_b) reads
 * s_b - s_a = t rather than needing a negation. */
static void extract_pair(struct opt *o, const struct pair_key *key)
{
    const int n_old = o->n_forms, t = n_syms(o);
    int sign = 0;
    for (int i = 0; i < n_old; i++)
        if (holds_pair(&o->f[i], key)) {
            int ja = 0;
            while (o->f[i].t[ja].sym != key->a)
                ja++;
            sign += mpq_sgn(o->f[i].t[ja].c);
        }
    mpq_t c;
    mpq_init(c);
    mpq_set_si(c, sign < 0 ? -1 : 1, 1);
    struct form *tf = new_form(o);
    if (tf) {
        form_append(o, tf, key->a, c);
        mpq_mul(c, c, o->ratio[key->ratio]);
        form_append(o, tf, key->b, c);
    }
    for (int i = 0; !o->oom && i < n_old; i++) {
        struct form *f = &o->f[i];
        if (!holds_pair(f, key))
            continue;
        int ja = 0, jb;
        while (f->t[ja].sym != key->a)
            ja++;
        for (jb = ja + 1; f->t[jb].sym != key->b;)
            jb++;
        mpq_set(c, f->t[ja].c);
        if (sign < 0)
            mpq_neg(c, c);
        form_remove(f, jb);
        form_remove(f, ja);
        form_append(o, f, t, c);
    }
    mpq_clear(c);
}

static void eliminate_common_pairs(struct opt *o)
{
    mpq_t q;
    mpq_init(q);
    mpq_set_si(q, 1, 1);
    intern_ratio(o, q); /* ids 0 and 1: see struct opt */
    mpq_set_si(q, -1, 1);
    intern_ratio(o, q);
    mpq_clear(q);
    struct pair_key key = {0, 0, 0};
    while (!o->oom && most_common_pair(o, &key))
        extract_pair(o, &key);
}

/* ---- lowering, with pass (b): factoring ---- */

/* One term of a form being lowered: its value and its coefficient relative to the factor. */
struct lterm {
    int v;
    mpq_t q;
    int group; /* pass (b): terms with equal |q| share one multiplication; -1 for +-1 terms */
};

/* Pass (b): the factor f pulled out of a whole form, form = f * sum (q/f) s. With a +-1
 * coefficient present there is nothing to gain (f = 1); else f is the coefficient shared (up to
 * sign) by the most terms, which leaves the most +-1 coefficients. */
static void choose_factor(const struct opt *o, struct lterm *lt, int n, mpq_t f)
{
    mpq_set_ui(f, 1, 1);
    if (!(o->passes & WINO_PASS_FACTOR))
        return;
    int best = -1, best_count = 0;
    for (int j = 0; j < n; j++) {
        if (is_unit(o, lt[j].q))
            return;
        if (!mpq_sgn(lt[j].q))
            continue;
        int count = 0;
        for (int k = 0; k < n; k++)
            count += same_magnitude(lt[j].q, lt[k].q);
        if (count > best_count) {
            best_count = count;
            best = j;
        }
    }
    if (best >= 0)
        mpq_set(f, lt[best].q);
}

/* Pass (b) within a form: terms with the same |coefficient| are summed first and multiplied
 * once (4*x1 - 4*x2 = 4*(x1 - x2)); without it every such term has its own multiplication. */
static int assign_groups(const struct opt *o, struct lterm *lt, int n)
{
    int groups = 0;
    for (int j = 0; j < n; j++) {
        lt[j].group = -1;
        if (is_unit(o, lt[j].q))
            continue;
        for (int k = 0; k < j && (o->passes & WINO_PASS_FACTOR); k++)
            if (lt[k].group >= 0 && same_magnitude(lt[j].q, lt[k].q)) {
                lt[j].group = lt[k].group;
                break;
            }
        if (lt[j].group < 0)
            lt[j].group = groups++;
    }
    return groups;
}

static int push(struct opt *o, wino_recipe *rc, enum wino_rop op, int a, int b, int sb,
                mpq_srcptr c)
{
    if (o->oom)
        return -1;
    int v = wino_recipe_push(rc, op, a, b, sb, c);
    if (v < 0)
        o->oom = 1;
    return v;
}

/* acc + sign * v, or sign * v when acc is still empty (-1); a negative start is deferred. */
static int accumulate(struct opt *o, wino_recipe *rc, int acc, int v, int sign)
{
    return acc < 0 ? v : push(o, rc, WINO_ROP_ADD, acc, v, sign, NULL);
}

/* Emits sum_j lt[j].q * value_j (each q already divided by the form's factor). */
static int emit_sum(struct opt *o, wino_recipe *rc, struct lterm *lt, int n)
{
    const int groups = assign_groups(o, lt, n);
    int acc = -1, negatives = 0;
    for (int j = 0; j < n; j++) /* +-1 terms, starting from a positive one */
        if (lt[j].group < 0 && mpq_sgn(lt[j].q) > 0)
            acc = accumulate(o, rc, acc, lt[j].v, 1);
    for (int j = 0; j < n; j++)
        if (lt[j].group < 0 && mpq_sgn(lt[j].q) < 0) {
            if (acc >= 0)
                acc = push(o, rc, WINO_ROP_ADD, acc, lt[j].v, -1, NULL);
            else
                negatives++; /* handled after the multiplied groups */
        }
    for (int g = 0; g < groups; g++) {
        int first = -1, sum = -1;
        for (int j = 0; j < n; j++) {
            if (lt[j].group != g)
                continue;
            if (first < 0)
                first = j;
            sum = accumulate(o, rc, sum, lt[j].v,
                             mpq_sgn(lt[j].q) * mpq_sgn(lt[first].q) < 0 ? -1 : 1);
        }
        const int term = push(o, rc, WINO_ROP_MUL, sum, 0, 1, lt[first].q);
        acc = accumulate(o, rc, acc, term, 1);
    }
    if (negatives) { /* only -1 terms before the groups: subtract them now, or negate a sum */
        const int none_before = acc < 0;
        for (int j = 0; j < n; j++)
            if (lt[j].group < 0 && mpq_sgn(lt[j].q) < 0)
                acc = accumulate(o, rc, acc, lt[j].v, none_before ? 1 : -1);
        if (none_before)
            acc = push(o, rc, WINO_ROP_NEG, acc, 0, 1, NULL);
    }
    return acc;
}

/* Whether a temporary computed up to the factor f should leave f to its users: yes unless more
 * users would lose their only +-1 coefficient (and so need a multiplication) than gain one. */
static int leave_factor_to_users(const struct opt *o, int sym, mpq_srcptr f)
{
    int lose = 0, gain = 0;
    mpq_t q;
    mpq_init(q);
    for (int i = 0; i < o->n_forms; i++) {
        const struct form *u = &o->f[i];
        int mine = -1, other_unit = 0;
        for (int j = 0; j < u->n; j++) {
            const int s = u->t[j].sym;
            if (s == sym) {
                mine = j;
                continue;
            }
            mpq_set(q, u->t[j].c);
            if (s >= o->n_in && o->value[s] != UNLOWERED)
                mpq_mul(q, q, o->scale[s]);
            other_unit |= is_unit(o, q);
        }
        if (mine < 0 || other_unit)
            continue;
        mpq_mul(q, u->t[mine].c, f);
        const int before = is_unit(o, u->t[mine].c), after = is_unit(o, q);
        lose += before && !after;
        gain += after && !before;
    }
    mpq_clear(q);
    return lose <= gain;
}

static void lower_temp(struct opt *o, wino_recipe *rc, int sym);

/* Emits form fi up to a factor: returns the value v (-1 for an empty form) with form = f * v. */
static int lower_form(struct opt *o, wino_recipe *rc, int fi, int is_temp, mpq_t f)
{
    const int n = o->f[fi].n;
    for (int j = 0; j < n; j++) {
        const int s = o->f[fi].t[j].sym;
        if (s >= o->n_in && o->value[s] == UNLOWERED)
            lower_temp(o, rc, s);
    }
    mpq_set_ui(f, 1, 1);
    if (!n || o->oom)
        return -1;
    struct lterm *lt = malloc((size_t)n * sizeof *lt);
    if (!lt) {
        o->oom = 1;
        return -1;
    }
    const struct form *fm = &o->f[fi];
    for (int j = 0; j < n; j++) {
        const int s = fm->t[j].sym;
        mpq_init(lt[j].q);
        mpq_set(lt[j].q, fm->t[j].c);
        lt[j].v = s;
        if (s >= o->n_in) {
            lt[j].v = o->value[s];
            mpq_mul(lt[j].q, lt[j].q, o->scale[s]);
        }
    }
    choose_factor(o, lt, n, f);
    int plus = 0, minus = 0;
    for (int j = 0; j < n; j++) {
        mpq_div(lt[j].q, lt[j].q, f);
        plus += is_unit(o, lt[j].q) && mpq_sgn(lt[j].q) > 0;
        minus += is_unit(o, lt[j].q) && mpq_sgn(lt[j].q) < 0;
    }
    if (is_temp && !plus && minus) { /* leave the sign to the users rather than negate */
        mpq_neg(f, f);
        for (int j = 0; j < n; j++)
            mpq_neg(lt[j].q, lt[j].q);
    }
    const int v = emit_sum(o, rc, lt, n);
    for (int j = 0; j < n; j++)
        mpq_clear(lt[j].q);
    free(lt);
    return v;
}

/* Multiplies value v by f (a negation for -1 when pass (a) knows it). */
static int apply_factor(struct opt *o, wino_recipe *rc, int v, mpq_srcptr f)
{
    if (!mpq_cmp_ui(f, 1, 1) || v < 0)
        return v;
    mpq_t m1;
    mpq_init(m1);
    mpq_set_si(m1, -1, 1);
    const int neg = mpq_equal(f, m1) && (o->passes & WINO_PASS_TRIVIAL);
    mpq_clear(m1);
    return push(o, rc, neg ? WINO_ROP_NEG : WINO_ROP_MUL, v, 0, 1, neg ? NULL : f);
}

static void lower_temp(struct opt *o, wino_recipe *rc, int sym)
{
    mpq_t f;
    mpq_init(f);
    int v = lower_form(o, rc, sym_form(o, sym), 1, f);
    if (!leave_factor_to_users(o, sym, f)) {
        v = apply_factor(o, rc, v, f);
        mpq_set_ui(f, 1, 1);
    }
    o->value[sym] = v;
    mpq_set(o->scale[sym], f);
    mpq_clear(f);
}

static void lower_rows(struct opt *o, wino_recipe *rc)
{
    const int ns = n_syms(o);
    o->value = malloc((size_t)ns * sizeof *o->value);
    o->scale = malloc((size_t)ns * sizeof *o->scale);
    if (!o->value || !o->scale) {
        free(o->value);
        free(o->scale);
        o->value = NULL;
        o->scale = NULL;
        o->oom = 1;
        return;
    }
    for (o->n_scales = 0; o->n_scales < ns; o->n_scales++) {
        const int s = o->n_scales;
        o->value[s] = s < o->n_in ? s : UNLOWERED;
        mpq_init(o->scale[s]);
        mpq_set_ui(o->scale[s], 1, 1);
    }
    mpq_t f;
    mpq_init(f);
    for (int i = 0; i < o->n_rows && !o->oom; i++) {
        const int v = lower_form(o, rc, i, 0, f);
        rc->out[i] = apply_factor(o, rc, v, f);
    }
    mpq_clear(f);
}

/* ---- driver ---- */

static void opt_clear(struct opt *o)
{
    for (int i = 0; i < o->n_forms; i++)
        form_clear(&o->f[i]);
    free(o->f);
    for (int i = 0; i < o->n_ratios; i++)
        mpq_clear(o->ratio[i]);
    free(o->ratio);
    free(o->ratio_next);
    for (int s = 0; s < o->n_scales; s++)
        mpq_clear(o->scale[s]);
    free(o->scale);
    free(o->value);
}

int wino_recipe_build(wino_recipe *rc, const wino_qmat *m, unsigned passes)
{
    struct opt o;
    memset(&o, 0, sizeof o);
    for (int b = 0; b < RATIO_BUCKETS; b++)
        o.ratio_head[b] = -1;
    o.passes = passes;
    o.n_in = m->cols;
    o.n_rows = m->rows;
    if (wino_recipe_init(rc, m->cols, m->rows))
        return -1;
    forms_from_matrix(&o, m);
    if (passes & WINO_PASS_SYMMETRIC)
        pair_symmetric_rows(&o);
    if (passes & WINO_PASS_CSE)
        eliminate_common_pairs(&o);
    lower_rows(&o, rc);
    if (!o.oom && (passes & WINO_PASS_FMA) && wino_recipe_contract_fma(rc))
        o.oom = 1;
    opt_clear(&o);
    if (o.oom) {
        wino_recipe_clear(rc);
        return -1;
    }
    return 0;
}
