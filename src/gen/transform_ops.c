/* Op counts and C / CUDA / OpenCL source of the 2D transforms of a tile.
 *
 * All three 2D transforms have the form Y = M X M^T with the 1D matrix M (p x n): the input
 * transform V = B^T d B (M = B^T), the filter transform U = G g G^T (M = G) and the output
 * transform Y = A^T M A (M = A^T). Both passes use M's recipe: first on the n columns of X
 * (T = M X, p x n), then on the p rows of T. */
#include "gen/transform_ops.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gen/float_literal.h"
#include "gen/points.h"
#include "gen/q_range.h"
#include "gen/recipe.h"
#include "gen/strbuf.h"

struct transform {
    const char *stage;   /* in the function name: wino_f32_<stage>_transform_<tile> */
    const char *formula; /* for the comments */
    const char *matrix;  /* M's name, for messages */
    const char *in, *in_stride, *out, *out_stride; /* parameter names */
    const wino_qmat *mat;                          /* the 1D matrix M */
};

static void describe(const wino_toom *t, enum wino_transform which, struct transform *x)
{
    static const struct transform forms[3] = {
        {"input", "V = B^T d B", "B^T", "d", "d", "v", "v", NULL},
        {"filter", "U = G g G^T", "G", "g", "g", "u", "u", NULL},
        {"output", "Y = A^T M A", "A^T", "mm", "m", "y", "y", NULL},
    };
    *x = forms[which];
    x->mat = which == WINO_TRANSFORM_INPUT    ? &t->BT
             : which == WINO_TRANSFORM_FILTER ? &t->G
                                              : &t->AT;
}

enum wino_status wino_gen_op_counts(const wino_toom *t, enum wino_transform which,
                                    struct wino_op_counts *baseline,
                                    struct wino_op_counts *optimized)
{
    struct transform x;
    describe(t, which, &x);
    const long n = x.mat->cols, p = x.mat->rows;
    if (baseline) { /* (p x n)(n x n), then (p x n)(n x p), every product and sum counted */
        baseline->mul = p * n * (n + p);
        baseline->add = p * (n - 1) * (n + p);
        baseline->fma = 0;
    }
    if (optimized) {
        wino_recipe rc;
        if (wino_recipe_build(&rc, x.mat, WINO_PASS_ALL))
            return wino_fail(WINO_OUT_OF_MEMORY, "wino_tile_op_counts: out of memory");
        wino_recipe_counts_2d(&rc, optimized);
        wino_recipe_clear(&rc);
    }
    return WINO_SUCCESS;
}

/* ---- emission ---- */

#define NAME_CAP 64 /* one operand expression such as "wino_load(d + 2 * d_row + 3 * d_col)" */

/* WINO_SUCCESS when every constant of the recipe is zero or a normal float, so that its literal
 * keeps the constant's meaning; else WINO_UNSUPPORTED naming the first one that is not. */
static enum wino_status check_constants(const wino_toom *t, const struct transform *x,
                                        const wino_recipe *rc)
{
    for (int k = 0; k < rc->n_inst; k++) {
        const int range = wino_q_range(rc->inst[k].c, FLT_MIN, FLT_MAX);
        if (!range)
            continue;
        char value[96], words[64];
        wino_q_describe(rc->inst[k].c, value, sizeof value);
        wino_q_range_words(range, "FP32", FLT_MIN, FLT_MAX, words, sizeof words);
        return wino_fail(WINO_UNSUPPORTED,
                         "wino_tile_emit: F(%d, %d) %s transform, constant of t%d in the recipe "
                         "of %s: %s %s",
                         t->m, t->r, x->stage, k, x->matrix, value, words);
    }
    return WINO_SUCCESS;
}

/* The constant c as a float literal, with the exact value in a comment when it is rounded. */
static void put_constant(struct wino_strbuf *sb, mpq_srcptr c)
{
    char lit[40];
    const float f = wino_q_to_float(c);
    wino_float_literal(f, lit, sizeof lit);
    mpq_t back;
    mpq_init(back);
    mpq_set_d(back, f);
    if (mpq_equal(back, c)) {
        wino_strbuf_printf(sb, "%s", lit);
    } else {
        char *exact =
            malloc(mpz_sizeinbase(mpq_numref(c), 10) + mpz_sizeinbase(mpq_denref(c), 10) + 3);
        if (exact)
            wino_strbuf_printf(sb, "%s /* %s */", lit, mpq_get_str(exact, 10, c));
        else
            sb->failed = 1;
        free(exact);
    }
    mpq_clear(back);
}

static void put_value(struct wino_strbuf *sb, const wino_recipe *rc, int v)
{
    if (v < 0)
        wino_strbuf_printf(sb, "0.0f");
    else if (v < rc->n_in)
        wino_strbuf_printf(sb, "x%d", v);
    else
        wino_strbuf_printf(sb, "t%d", v - rc->n_in);
}

/* The straight-line code of one recipe application: loads in[k], computes in values of type
 * `type` ("float", or "wino_lanes" for 16 lanes at once), then writes each output i as
 * out[i] <value> close. */
static void emit_recipe(struct wino_strbuf *sb, const wino_recipe *rc, enum wino_emit_lang lang,
                        const char *type, const char *ind, char (*in)[NAME_CAP],
                        char (*out)[NAME_CAP], const char *close)
{
    char *used = calloc((size_t)rc->n_in + 1, 1);
    if (!used) {
        sb->failed = 1;
        return;
    }
    for (int k = 0; k < rc->n_inst; k++) {
        const struct wino_rinst *x = &rc->inst[k];
        if (x->a < rc->n_in)
            used[x->a] = 1;
        if ((x->op == WINO_ROP_ADD || x->op == WINO_ROP_FMA) && x->b < rc->n_in)
            used[x->b] = 1;
    }
    for (int i = 0; i < rc->n_out; i++)
        if (rc->out[i] >= 0 && rc->out[i] < rc->n_in)
            used[rc->out[i]] = 1;
    for (int k = 0; k < rc->n_in; k++)
        if (used[k])
            wino_strbuf_printf(sb, "%sconst %s x%d = %s;\n", ind, type, k, in[k]);
    free(used);

    /* CUDA and OpenCL round each fma once (__fmaf_rn, fma); the C lanes write c * a + b, which
     * the build contracts to one fma where the ISA has it (-ffp-contract=fast). */
    const char *fma_fn = lang == WINO_EMIT_CUDA     ? "__fmaf_rn"
                         : lang == WINO_EMIT_OPENCL ? "fma"
                                                    : NULL;
    for (int k = 0; k < rc->n_inst; k++) {
        const struct wino_rinst *x = &rc->inst[k];
        wino_strbuf_printf(sb, "%sconst %s t%d = ", ind, type, k);
        switch (x->op) {
        case WINO_ROP_ADD:
            put_value(sb, rc, x->a);
            wino_strbuf_printf(sb, " %c ", x->sb > 0 ? '+' : '-');
            put_value(sb, rc, x->b);
            break;
        case WINO_ROP_MUL:
            put_constant(sb, x->c);
            wino_strbuf_printf(sb, " * ");
            put_value(sb, rc, x->a);
            break;
        case WINO_ROP_FMA:
            if (fma_fn)
                wino_strbuf_printf(sb, "%s(", fma_fn);
            put_constant(sb, x->c);
            wino_strbuf_printf(sb, fma_fn ? ", " : " * ");
            put_value(sb, rc, x->a);
            if (fma_fn)
                wino_strbuf_printf(sb, ", %s", x->sb > 0 ? "" : "-");
            else
                wino_strbuf_printf(sb, " %c ", x->sb > 0 ? '+' : '-');
            put_value(sb, rc, x->b);
            if (fma_fn)
                wino_strbuf_printf(sb, ")");
            break;
        case WINO_ROP_NEG:
            wino_strbuf_printf(sb, "-");
            put_value(sb, rc, x->a);
            break;
        }
        wino_strbuf_printf(sb, ";\n");
    }
    for (int i = 0; i < rc->n_out; i++) {
        wino_strbuf_printf(sb, "%s%s", ind, out[i]);
        put_value(sb, rc, rc->out[i]);
        wino_strbuf_printf(sb, "%s;\n", close);
    }
}

/* The recipe's counts and the totals, as a comment above each function. */
static void emit_summary(struct wino_strbuf *sb, const struct transform *x, const wino_recipe *rc)
{
    struct wino_op_counts one, all;
    wino_recipe_counts(rc, &one);
    wino_recipe_counts_2d(rc, &all);
    wino_strbuf_printf(sb,
                       "/* %s: %d x %d -> %d x %d. Each of the %d passes runs a %ld add, %ld mul,"
                       " %ld fma recipe\n * (%ld add, %ld mul, %ld fma per tile). */\n",
                       x->formula, x->mat->cols, x->mat->cols, x->mat->rows, x->mat->rows,
                       x->mat->cols + x->mat->rows, one.add, one.mul, one.fma, all.add, all.mul,
                       all.fma);
}

/* Above this many vectors T = M X goes through a stack buffer, one column or row of it live at a
 * time: all of it in named values spills (F(6x6, 3x3): 64 against 32 AVX-512 registers). At 36
 * (F(4x4, 3x3)'s input) both forms ran equally fast on a Zen 4. */
#define C_REGISTER_T_MAX 36

/* The two passes in straight-line code, every intermediate a named value the compiler can keep
 * in registers. */
static void emit_c_registers(struct wino_strbuf *sb, const struct transform *x,
                             const wino_recipe *rc, char (*in)[NAME_CAP], char (*out)[NAME_CAP])
{
    const int n = x->mat->cols, p = x->mat->rows;
    const char *i_ = x->in, *is = x->in_stride, *o_ = x->out, *os = x->out_stride;
    for (int i = 0; i < p; i++) { /* T = M X, p x n */
        wino_strbuf_printf(sb, "    wino_lanes");
        for (int j = 0; j < n; j++)
            wino_strbuf_printf(sb, "%s c%d_%d", j ? "," : "", i, j);
        wino_strbuf_printf(sb, ";\n");
    }
    for (int j = 0; j < n; j++) {
        wino_strbuf_printf(sb, "    { /* column %d of X */\n", j);
        for (int k = 0; k < n; k++)
            snprintf(in[k], NAME_CAP, "wino_load(%s + %d * %s_row + %d * %s_col)", i_, k, is, j,
                     is);
        for (int i = 0; i < p; i++)
            snprintf(out[i], NAME_CAP, "c%d_%d = ", i, j);
        emit_recipe(sb, rc, WINO_EMIT_C, "wino_lanes", "        ", in, out, "");
        wino_strbuf_printf(sb, "    }\n");
    }
    for (int i = 0; i < p; i++) {
        wino_strbuf_printf(sb, "    { /* row %d of T */\n", i);
        for (int k = 0; k < n; k++)
            snprintf(in[k], NAME_CAP, "c%d_%d", i, k);
        for (int c = 0; c < p; c++)
            snprintf(out[c], NAME_CAP, "wino_store(%s + %d * %s_row + %d * %s_col, ", o_, i, os, c,
                     os);
        emit_recipe(sb, rc, WINO_EMIT_C, "wino_lanes", "        ", in, out, ")");
        wino_strbuf_printf(sb, "    }\n");
    }
}

/* The two passes as loops over the columns of X and the rows of T, with T in a stack buffer (L1)
 * in between: one column or row live at a time. */
static void emit_c_buffered(struct wino_strbuf *sb, const struct transform *x,
                            const wino_recipe *rc, char (*in)[NAME_CAP], char (*out)[NAME_CAP])
{
    const int n = x->mat->cols, p = x->mat->rows;
    const char *i_ = x->in, *is = x->in_stride, *o_ = x->out, *os = x->out_stride;
    wino_strbuf_printf(sb, "    wino_lanes tmp[%d][%d]; /* T = M X */\n", p, n);
    wino_strbuf_printf(sb, "    for (int j = 0; j < %d; j++) { /* column j of X */\n", n);
    for (int k = 0; k < n; k++)
        snprintf(in[k], NAME_CAP, "wino_load(%s + %d * %s_row + j * %s_col)", i_, k, is, is);
    for (int i = 0; i < p; i++)
        snprintf(out[i], NAME_CAP, "tmp[%d][j] = ", i);
    emit_recipe(sb, rc, WINO_EMIT_C, "wino_lanes", "        ", in, out, "");
    wino_strbuf_printf(sb, "    }\n");
    wino_strbuf_printf(sb, "    for (int i = 0; i < %d; i++) { /* row i of T */\n", p);
    for (int k = 0; k < n; k++)
        snprintf(in[k], NAME_CAP, "tmp[i][%d]", k);
    for (int c = 0; c < p; c++)
        snprintf(out[c], NAME_CAP, "wino_store(%s + i * %s_row + %d * %s_col, ", o_, os, c, os);
    emit_recipe(sb, rc, WINO_EMIT_C, "wino_lanes", "        ", in, out, ")");
    wino_strbuf_printf(sb, "    }\n");
}

/* C: WINO_LANES lanes of tiles side by side (16 with GCC and Clang, as one vector value; 1
 * elsewhere). A static block function runs both passes, inlined into each target clone so that
 * it runs the clone's instructions; the exported function walks the lanes in blocks and takes a
 * last partial block through zero-padded copies. */
static void emit_c(struct wino_strbuf *sb, const struct transform *x, const wino_recipe *rc,
                   const char *tile, char (*in)[NAME_CAP], char (*out)[NAME_CAP])
{
    const int n = x->mat->cols, p = x->mat->rows;
    const char *i_ = x->in, *is = x->in_stride, *o_ = x->out, *os = x->out_stride;
    wino_strbuf_printf(sb,
                       "WINO_BLOCK void %s_block_%s(const float *restrict %s, ptrdiff_t %s_row,"
                       " ptrdiff_t %s_col,\n        float *restrict %s, ptrdiff_t %s_row,"
                       " ptrdiff_t %s_col)\n{\n",
                       x->stage, tile, i_, is, is, o_, os, os);
    if (n == 1) /* a single input row, e.g. F(m, 1): its stride is never used */
        wino_strbuf_printf(sb, "    (void)%s_row;\n", is);
    if (p == 1)
        wino_strbuf_printf(sb, "    (void)%s_col;\n", os);
    if (p * n > C_REGISTER_T_MAX)
        emit_c_buffered(sb, x, rc, in, out);
    else
        emit_c_registers(sb, x, rc, in, out);
    wino_strbuf_printf(sb, "}\n\n");
    emit_summary(sb, x, rc);
    wino_strbuf_printf(
        sb,
        "WINO_TARGET_CLONES\n"
        "void wino_f32_%s_transform_%s(const float *restrict %s, ptrdiff_t %s_row,"
        " ptrdiff_t %s_col,\n        float *restrict %s, ptrdiff_t %s_row,"
        " ptrdiff_t %s_col, int lanes)\n{\n"
        "    int l0 = 0;\n"
        "    for (; l0 + WINO_LANES <= lanes; l0 += WINO_LANES)\n"
        "        %s_block_%s(%s + l0, %s_row, %s_col, %s + l0, %s_row, %s_col);\n"
        "    if (l0 < lanes) {\n"
        "        const size_t bytes = sizeof(float) * (size_t)(lanes - l0);\n"
        "        float a[%d][%d][WINO_LANES], b[%d][%d][WINO_LANES];\n"
        "        memset(a, 0, sizeof a);\n"
        "        for (int i = 0; i < %d; i++)\n"
        "            for (int j = 0; j < %d; j++)\n"
        "                memcpy(a[i][j], %s + i * %s_row + j * %s_col + l0, bytes);\n"
        "        %s_block_%s(&a[0][0][0], %d * WINO_LANES, WINO_LANES, &b[0][0][0],"
        " %d * WINO_LANES, WINO_LANES);\n"
        "        for (int i = 0; i < %d; i++)\n"
        "            for (int j = 0; j < %d; j++)\n"
        "                memcpy(%s + i * %s_row + j * %s_col + l0, b[i][j], bytes);\n"
        "    }\n"
        "}\n",
        x->stage, tile, i_, is, is, o_, os, os, x->stage, tile, i_, is, is, o_, os, os, n, n, p, p,
        n, n, i_, is, is, x->stage, tile, n, p, p, p, o_, os, os);
}

/* CUDA and OpenCL: one tile in registers (private memory), both passes unrolled. The OpenCL
 * names end in __opencl so that both emissions compile as C side by side (tests/test_emit.c). */
static void emit_one_tile(struct wino_strbuf *sb, const struct transform *x,
                          const wino_recipe *rc, const char *tile, char (*in)[NAME_CAP],
                          char (*out)[NAME_CAP], enum wino_emit_lang lang)
{
    const int n = x->mat->cols, p = x->mat->rows;
    const int cuda = lang == WINO_EMIT_CUDA;
    emit_summary(sb, x, rc);
    wino_strbuf_printf(sb,
                       "%svoid wino_f32_%s_transform_%s%s(const float "
                       "%s[%d][%d], float %s[%d][%d])\n{\n    float tmp[%d][%d]; /* M X */\n",
                       cuda ? "__device__ __forceinline__ " : "", x->stage, tile,
                       cuda ? "" : "__opencl", x->in, n, n, x->out, p, p, p, n);
    for (int j = 0; j < n; j++) {
        wino_strbuf_printf(sb, "    { /* column %d of X */\n", j);
        for (int k = 0; k < n; k++)
            snprintf(in[k], NAME_CAP, "%s[%d][%d]", x->in, k, j);
        for (int i = 0; i < p; i++)
            snprintf(out[i], NAME_CAP, "tmp[%d][%d] = ", i, j);
        emit_recipe(sb, rc, lang, "float", "        ", in, out, "");
        wino_strbuf_printf(sb, "    }\n");
    }
    for (int i = 0; i < p; i++) {
        wino_strbuf_printf(sb, "    { /* row %d of T */\n", i);
        for (int k = 0; k < n; k++)
            snprintf(in[k], NAME_CAP, "tmp[%d][%d]", i, k);
        for (int c = 0; c < p; c++)
            snprintf(out[c], NAME_CAP, "%s[%d][%d] = ", x->out, i, c);
        emit_recipe(sb, rc, lang, "float", "        ", in, out, "");
        wino_strbuf_printf(sb, "    }\n");
    }
    wino_strbuf_printf(sb, "}\n");
}

/* The banner naming the command that reproduces the text; "FILE" stays a placeholder so that the
 * text depends on the tile only. */
static void emit_banner(struct wino_strbuf *sb, const wino_toom *t, enum wino_emit_lang lang)
{
    char *points = wino_points_format(t->points, t->npoints);
    if (!points) {
        sb->failed = 1;
        return;
    }
    static const char *const lang_names[3] = {"c", "cuda", "opencl"};
    wino_strbuf_printf(sb,
                       "/* Generated by wino's transform generator: wino gen --m %d --r %d%s%s"
                       " --emit %s --out FILE. Do not edit by hand. */\n",
                       t->m, t->r, t->npoints ? " --points " : "", points, lang_names[lang]);
    free(points);
    wino_strbuf_printf(sb, "/* The 2D transforms of Winograd F(%dx%d, %dx%d), alpha = %d", t->m,
                       t->m, t->r, t->r, t->alpha);
    if (lang == WINO_EMIT_OPENCL)
        wino_strbuf_printf(sb,
                           ", for one tile in private memory.\n"
                           " * OpenCL C 1.2; they compile as C too, with fma defined as fmaf. */\n"
                           "#ifndef WINO_F32_TRANSFORMS_F%dX%d_%dX%d_CL\n"
                           "#define WINO_F32_TRANSFORMS_F%dX%d_%dX%d_CL\n",
                           t->m, t->m, t->r, t->r, t->m, t->m, t->r, t->r);
    else if (lang == WINO_EMIT_CUDA)
        wino_strbuf_printf(sb,
                           ", for one tile in registers.\n"
                           " * They compile as C too, with __device__ defined empty,"
                           " __forceinline__ as static inline\n"
                           " * and __fmaf_rn as fmaf. */\n"
                           "#ifndef WINO_F32_TRANSFORMS_F%dX%d_%dX%d_CUH\n"
                           "#define WINO_F32_TRANSFORMS_F%dX%d_%dX%d_CUH\n",
                           t->m, t->m, t->r, t->r, t->m, t->m, t->r, t->r);
    else
        wino_strbuf_printf(
            sb,
            ", over a lane dimension.\n"
            " * Element (i, j) of the tile of lane l is read at in[i * in_row + j * in_col + l] and\n"
            " * written at out[i * out_row + j * out_col + l]: NHWC channel vectors and gathered\n"
            " * [rows][cols][lanes] buffers both work. Build with -ffp-contract=fast (GCC) so that\n"
            " * c * a + b becomes one fma where the ISA has it. */\n"
            "#include <stddef.h>\n#include <string.h>\n\n"
            "#ifndef WINO_LANES\n"
            "/* GCC and Clang hold 16 lanes in one vector value (one AVX-512 register, two AVX2\n"
            " * registers); other compilers run one lane at a time. */\n"
            "#if defined(__GNUC__)\n"
            "#define WINO_LANES 16\n"
            "typedef float wino_lanes __attribute__((vector_size(64)));\n"
            "typedef float wino_lanes_unaligned __attribute__((vector_size(64), aligned(4),"
            " may_alias));\n"
            "#define wino_load(p) (*(const wino_lanes_unaligned *)(p))\n"
            "#define wino_store(p, v) (*(wino_lanes_unaligned *)(p) = (v))\n"
            "#else\n"
            "#define WINO_LANES 1\n"
            "typedef float wino_lanes;\n"
            "#define wino_load(p) (*(p))\n"
            "#define wino_store(p, v) (*(p) = (v))\n"
            "#endif\n"
            "#endif\n\n"
            "/* On x86-64 with GCC or Clang each transform is built for AVX-512, AVX2+FMA and\n"
            " * the baseline, and the loader picks the best the CPU runs. */\n"
            "#if defined(__GNUC__) && defined(__x86_64__) && !defined(WINO_NO_TARGET_CLONES)\n"
            "#define WINO_TARGET_CLONES __attribute__((target_clones(\"avx512f\", \"avx2,fma\","
            " \"default\")))\n"
            "#else\n#define WINO_TARGET_CLONES\n#endif\n\n"
            "/* A block function left out of line would be built for the baseline only, whichever\n"
            " * clone calls it. */\n"
            "#if defined(__GNUC__)\n"
            "#define WINO_BLOCK static inline __attribute__((always_inline))\n"
            "#else\n#define WINO_BLOCK static inline\n#endif\n");
}

enum wino_status wino_gen_emit(const wino_toom *t, enum wino_emit_lang lang, char *buf, size_t cap,
                               size_t *needed)
{
    char tile[32];
    snprintf(tile, sizeof tile, "f%dx%d_%dx%d", t->m, t->m, t->r, t->r);
    char(*in)[NAME_CAP] = malloc((size_t)t->alpha * sizeof *in);
    char(*out)[NAME_CAP] = malloc((size_t)t->alpha * sizeof *out);
    struct wino_strbuf sb = {0};
    sb.failed = !in || !out;
    emit_banner(&sb, t, lang);
    enum wino_status st = WINO_SUCCESS;
    for (int w = WINO_TRANSFORM_INPUT; w <= WINO_TRANSFORM_OUTPUT && !sb.failed && !st; w++) {
        struct transform x;
        describe(t, (enum wino_transform)w, &x);
        wino_recipe rc;
        if (wino_recipe_build(&rc, x.mat, WINO_PASS_ALL)) {
            sb.failed = 1;
            break;
        }
        wino_strbuf_printf(&sb, "\n");
        if (!(st = check_constants(t, &x, &rc))) {
            if (lang == WINO_EMIT_C)
                emit_c(&sb, &x, &rc, tile, in, out);
            else
                emit_one_tile(&sb, &x, &rc, tile, in, out, lang);
        }
        wino_recipe_clear(&rc);
    }
    if (lang != WINO_EMIT_C)
        wino_strbuf_printf(&sb, "\n#endif\n");
    free(in);
    free(out);
    if (st || sb.failed) {
        wino_strbuf_free(&sb);
        return st ? st : wino_fail(WINO_OUT_OF_MEMORY, "wino_tile_emit: out of memory");
    }
    const size_t n = sb.len + 1;
    if (needed)
        *needed = n;
    if (buf && cap < n)
        st = wino_fail(WINO_INVALID_ARGUMENT,
                       "wino_tile_emit: buffer of %zu bytes too small for %zu", cap, n);
    else if (buf)
        memcpy(buf, sb.text, n);
    wino_strbuf_free(&sb);
    return st;
}
