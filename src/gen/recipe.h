/* Transform recipes: straight-line programs computing y = M x for an exact rational matrix M,
 * built by the optimizer of Mazaheri et al. (EuroSys'20) section 3.1.2 (plus WinRS (Zhang et al., ICPP'25)'s symmetric row pairs).
 *
 * Values are numbered: 0..n_in-1 are the inputs x_j, n_in + k is the result of instruction k.
 * Every instruction is linear in its operands, so evaluating a recipe exactly on the unit vectors
 * e_j proves that it equals M for every input. */
#ifndef WINO_GEN_RECIPE_H
#define WINO_GEN_RECIPE_H

#include "gen/qmat.h"
#include "wino_gen.h"

enum wino_rop {
    WINO_ROP_ADD, /* a + sb * b             (sb = +1 or -1: an addition or a subtraction) */
    WINO_ROP_MUL, /* c * a */
    WINO_ROP_FMA, /* c * a + sb * b, one rounding */
    WINO_ROP_NEG  /* -a */
};

struct wino_rinst {
    enum wino_rop op;
    int a, b;  /* operand values (b only for ADD and FMA) */
    int sb;    /* sign of b: +1 or -1 */
    mpq_t c;   /* constant of MUL and FMA, exact (0 otherwise) */
    double cd; /* c rounded to double */
};

typedef struct wino_recipe {
    int n_in, n_out;
    int n_inst, cap_inst;
    struct wino_rinst *inst;
    int *out; /* n_out value numbers; -1 for an output that is identically zero */
} wino_recipe;

/* Optimizer passes, each of which can be switched off (tests show what each contributes). */
enum wino_recipe_pass {
    WINO_PASS_TRIVIAL = 1u,   /* (a) drop zero terms and multiplications by +-1 */
    WINO_PASS_FACTOR = 2u,    /* (b) factor common coefficients: 1/2*(x0+x1+x2) */
    WINO_PASS_CSE = 4u,       /* (c) extract pairs of terms shared by several rows */
    WINO_PASS_SYMMETRIC = 8u, /* (d) rows E+O and +-(E-O) share their even and odd parts */
    WINO_PASS_FMA = 16u,      /* (e) contract a multiplication feeding one addition into an fma */
    WINO_PASS_ALL = 31u
};

/* ---- The optimizer (recipe_opt.c) ---- */

/* Builds the recipe of m with the given passes (a combination of enum wino_recipe_pass; with
 * none, the recipe is the dense matrix-vector product). Returns 0, or -1 when out of memory
 * (rc is then cleared). */
int wino_recipe_build(wino_recipe *rc, const wino_qmat *m, unsigned passes);
void wino_recipe_clear(wino_recipe *rc); /* safe on a zeroed or cleared recipe */

/* Instruction counts: add = ADD and NEG (a negation is counted as an addition), mul = MUL,
 * fma = FMA. */
void wino_recipe_counts(const wino_recipe *rc, struct wino_op_counts *counts);
/* Counts of the 2D transform Y = M X M^T built from the recipe of M (p x n): the recipe runs on
 * the n columns of X, then on the p rows of M X, n + p times in all. */
void wino_recipe_counts_2d(const wino_recipe *rc, struct wino_op_counts *counts);

/* y = recipe(x) exactly: x holds n_in, y n_out initialised rationals. Returns 0 or -1 (OOM). */
int wino_recipe_eval_q(const wino_recipe *rc, mpq_t *x, mpq_t *y);
/* y = recipe(x) in double with the double constants. Returns 0 or -1 (OOM). */
int wino_recipe_eval_d(const wino_recipe *rc, const double *x, double *y);

/* ---- Building blocks used by the optimizer (recipe.c) ---- */

/* Starts an empty recipe with n_in inputs and n_out outputs (all zero). Returns 0 or -1. */
int wino_recipe_init(wino_recipe *rc, int n_in, int n_out);
/* Appends an instruction (c may be NULL where op has no constant) and returns its value number,
 * or -1 when out of memory. */
int wino_recipe_push(wino_recipe *rc, enum wino_rop op, int a, int b, int sb, mpq_srcptr c);
/* Pass (e): each MUL whose only use is an ADD becomes part of an FMA. Returns 0 or -1. */
int wino_recipe_contract_fma(wino_recipe *rc);

#endif
