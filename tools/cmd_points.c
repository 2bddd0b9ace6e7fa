/* `wino points`: the interpolation-point search of src/gen/point_search.c for one tile size, the
 * measurement of a given point set, and the regeneration of the recipe database
 * (src/gen/point_db.c) for every tile size. */
#define _POSIX_C_SOURCE 200112L /* clock_gettime */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "gen/point_search.h"

#define VERB "points"

static void usage(FILE *out)
{
    const struct wino_point_search_options d = wino_point_search_defaults();
    fprintf(out,
            "usage: wino points --alpha A [--trials N] [--screen S] [--tie P] [--beam B] [--threads T]\n"
            "                   [--seed S] [--json]\n"
            "       wino points --eval --alpha A --points LIST [--trials N] [--seed S] [--json]\n"
            "       wino points --all [--trials N] [--screen S] [--tie P] [--beam B] [--threads T]\n"
            "                   [--seed S] [--json] [--write-db FILE]\n"
            "\n"
            "Searches the finite interpolation points of F(m x m, 3 x 3), m = A - 2, with the lowest\n"
            "median relative L1 error sum|Y32 - Y64| / sum|Y64| of FP32 Winograd against an FP64\n"
            "direct correlation over N random trials (inputs and filters uniform in (-1, 1)).\n"
            "Candidates are a/b with |a| <= 9, 1 <= b <= 9; sets start with 0,1,-1. Up to %ld sets\n"
            "(A <= 7) are all measured; beyond, a beam growth plus local refinement searches them\n"
            "(docs/points.md).\n"
            "\n"
            "  --alpha A        tile size, %d..%d\n"
            "  --trials N       random trials behind the reported median (default %ld, max %ld)\n"
            "  --screen S       search on the first S trials, then re-measure the best %d sets on\n"
            "                   all N (default %ld; 0 = search on all N)\n"
            "  --tie P          sets within P%% of the lowest median count as tied; the one with the\n"
            "                   cheapest transforms wins (default %.0f; 0 = lowest median only)\n"
            "  --beam B         sets kept per size while growing, each refined (default %d, max %d)\n"
            "  --threads T      threads measuring candidate sets (default %d)\n"
            "  --seed S         seed of the random trials (default %lu)\n"
            "  --json           print one JSON object (an array of them with --all)\n"
            "  --eval           measure the set given by --points (in its order) instead\n"
            "  --points LIST    A - 1 distinct finite points, e.g. 0,1,-1,1/2,-2\n"
            "  --all            search every A in %d..%d\n"
            "  --write-db FILE  with --all: write the recipe database C file (src/gen/point_db.c)\n"
            "  -h, --help       this text\n"
            "\n"
            "A progress bar is drawn on stderr when stderr is a terminal.\n",
            d.exhaustive_max, WINO_POINT_SEARCH_MIN_ALPHA, WINO_MAX_ALPHA, d.trials,
            WINO_POINT_SEARCH_MAX_TRIALS, d.rerank, d.screen_trials, 100.0 * d.tie, d.beam,
            WINO_POINT_SEARCH_MAX_BEAM, d.threads, (unsigned long)d.seed,
            WINO_POINT_SEARCH_MIN_ALPHA, WINO_MAX_ALPHA);
}

struct args {
    long alpha; /* 0 when not given */
    struct wino_point_search_options opts;
    int json, eval, all;
    const char *points, *db;
};

/* Returns 0, or the exit status (2 after one line on stderr) of a bad command line; -1 after
 * --help. */
static int parse_args(int argc, char **argv, struct args *a)
{
    memset(a, 0, sizeof *a);
    a->opts = wino_point_search_defaults();
    long trials = a->opts.trials, screen = -1, seed = (long)a->opts.seed, tie = -1,
         beam = a->opts.beam, threads = a->opts.threads;
    enum { SEARCH = 1, EVAL = 2, ALL = 4 };
    const struct cli_option options[] = {
        {"--alpha", CLI_LONG, &a->alpha, SEARCH | EVAL, WINO_POINT_SEARCH_MIN_ALPHA,
         WINO_MAX_ALPHA, NULL, NULL},
        {"--trials", CLI_LONG, &trials, 0, 1, WINO_POINT_SEARCH_MAX_TRIALS, NULL, NULL},
        {"--seed", CLI_LONG, &seed, 0, 0, LONG_MAX, NULL, NULL},
        {"--json", CLI_FLAG, &a->json, 0, 0, 0, NULL, NULL},
        {"--screen", CLI_LONG, &screen, SEARCH | ALL, 0, WINO_POINT_SEARCH_MAX_TRIALS, NULL,
         NULL},
        {"--tie", CLI_LONG, &tie, SEARCH | ALL, 0, 100, NULL, NULL},
        {"--beam", CLI_LONG, &beam, SEARCH | ALL, 1, WINO_POINT_SEARCH_MAX_BEAM, NULL, NULL},
        {"--threads", CLI_LONG, &threads, SEARCH | ALL, 1, WINO_POINT_SEARCH_MAX_THREADS, NULL,
         NULL},
        {"--eval", CLI_FLAG, &a->eval, EVAL, 0, 0, NULL, NULL},
        {"--points", CLI_STRING, &a->points, EVAL, 0, 0, NULL, NULL},
        {"--all", CLI_FLAG, &a->all, ALL, 0, 0, NULL, NULL},
        {"--write-db", CLI_STRING, &a->db, ALL, 0, 0, NULL, NULL},
        {NULL, CLI_FLAG, NULL, 0, 0, 0, NULL, NULL}};
    const enum cli_result r = cli_parse_args(VERB, options, argc, argv, NULL);
    if (r == CLI_HELP) {
        usage(stdout);
        return -1;
    }
    if (r)
        return r;
    a->opts.trials = trials;
    a->opts.seed = (uint64_t)seed;
    a->opts.beam = (int)beam;
    a->opts.threads = (int)threads;
    if (screen >= 0)
        a->opts.screen_trials = screen;
    if (tie >= 0)
        a->opts.tie = (double)tie / 100.0;
    if (!a->all && !a->alpha)
        return cli_usage_error(VERB, "--alpha is required (or --all)");
    if (a->eval && !a->points)
        return cli_usage_error(VERB, "--eval needs --points");
    if (a->points && !a->eval)
        return cli_usage_error(VERB, "--points is only for --eval");
    if (screen >= 0 && screen > trials)
        return cli_usage_error(VERB, "--screen must not exceed --trials");
    return 0;
}

/* ---- progress bar on a terminal ---- */

static void draw_bar(void *user, const struct wino_point_search_progress *p)
{
    char label[64] = "", round[24] = "", best[32] = "";
    if (!strcmp(p->stage, "beam"))
        snprintf(round, sizeof round, "%d points", p->round);
    else if (!strcmp(p->stage, "refine"))
        snprintf(round, sizeof round, "set %d pass %d", p->start, p->round);
    if (p->best > 0)
        snprintf(best, sizeof best, "best %.3e", p->best);
    snprintf(label, sizeof label, "alpha %2d  %-6s %-13s", p->alpha, p->stage, round);
    cli_progress_draw(user, label, p->done, p->total, best);
}

/* ---- output ---- */

static void print_json_points(const char *points)
{
    putchar('[');
    for (const char *p = points; *p; p++) {
        if (p == points || p[-1] == ',')
            printf("%s\"", p == points ? "" : ",");
        if (*p != ',')
            putchar(*p);
        if (p[1] == ',' || p[1] == '\0')
            putchar('"');
    }
    putchar(']');
}

/* search: print what only a search has (method, threads, measured sets). */
static void print_json(const struct wino_point_search_result *r,
                       const struct wino_point_search_options *o, int search)
{
    printf("{\"alpha\":%d,\"points\":", r->alpha);
    print_json_points(r->points);
    printf(",\"median_rel_l1\":%.6e,\"trials\":%ld,\"seconds\":%.3f,\"seed\":%lu", r->median_rel_l1,
           r->trials, r->seconds, (unsigned long)o->seed);
    if (search)
        printf(",\"method\":\"%s\",\"screen_trials\":%ld,\"beam\":%d,\"threads\":%d,"
               "\"evaluations\":%ld",
               r->exhaustive ? "exhaustive" : "beam+refine", r->screen_trials, o->beam,
               o->threads, r->evaluations);
    putchar('}');
}

static void print_text(const struct wino_point_search_result *r,
                       const struct wino_point_search_options *o, int search)
{
    printf("alpha %d: F(%dx%d, 3x3)\n", r->alpha, r->alpha - 2, r->alpha - 2);
    printf("points: %s\n", r->points);
    printf("median relative L1 error: %.4e (%ld trials, seed %lu)\n", r->median_rel_l1,
           r->trials, (unsigned long)o->seed);
    if (!search)
        return;
    if (r->exhaustive)
        printf("search: every set");
    else
        printf("search: beam %d + refinement", o->beam);
    if (r->screen_trials < r->trials)
        printf(", ranked on %ld trials", r->screen_trials);
    printf("; %ld sets measured in %.1f s on %d threads\n", r->evaluations, r->seconds,
           o->threads);
}

/* ---- the recipe database ---- */

static int write_db(FILE *f, int argc, char **argv, const struct wino_point_search_result *res,
                    const struct wino_point_search_options *o)
{
    fprintf(f, "/* Generated by `wino");
    for (int i = 0; i < argc; i++)
        fprintf(f, " %s", argv[i]);
    fprintf(f, "`\n"
               " * (tools/cmd_points.c running the point search of src/gen/point_search.c with\n"
               " * trials %ld, screen %ld, exhaustive up to %ld sets, beam %d, rerank %d, tie %g,\n"
               " * seed %lu;\n"
               " * see docs/points.md). Do not edit by hand: rerun that command. search_seconds is\n"
               " * the wall time of each alpha's search on %d threads of the machine that ran it. */\n",
            o->trials, res[0].screen_trials, o->exhaustive_max, o->beam, o->rerank, o->tie,
            (unsigned long)o->seed, o->threads);
    fprintf(f, "#include \"gen/point_db.h\"\n\n#include <stddef.h>\n\n");
    fprintf(f, "/* Below alpha 4 there is nothing to choose: prefixes of 0, 1, -1. */\n");
    fprintf(f, "static const char *const small[%d] = {NULL, \"\", \"0\", \"0,1\"};\n\n",
            WINO_POINT_SEARCH_MIN_ALPHA);
    fprintf(f, "static const struct wino_point_record records[%d] = {\n",
            WINO_MAX_ALPHA - WINO_POINT_SEARCH_MIN_ALPHA + 1);
    for (int a = WINO_POINT_SEARCH_MIN_ALPHA; a <= WINO_MAX_ALPHA; a++) {
        const struct wino_point_search_result *r = &res[a - WINO_POINT_SEARCH_MIN_ALPHA];
        fprintf(f, "    {%d, \"%s\", %.6e, %ld, %.1f},\n", r->alpha, r->points,
                r->median_rel_l1, r->trials, r->seconds);
    }
    fprintf(f, "};\n\n");
    fprintf(f, "const char *wino_point_db_points(int alpha)\n{\n"
               "    if (alpha >= 1 && alpha < %d)\n        return small[alpha];\n"
               "    const struct wino_point_record *r = wino_point_db_record(alpha);\n"
               "    return r ? r->points : NULL;\n}\n\n",
            WINO_POINT_SEARCH_MIN_ALPHA);
    fprintf(f, "const struct wino_point_record *wino_point_db_record(int alpha)\n{\n"
               "    return alpha >= %d && alpha <= %d ? &records[alpha - %d] : NULL;\n}\n",
            WINO_POINT_SEARCH_MIN_ALPHA, WINO_MAX_ALPHA, WINO_POINT_SEARCH_MIN_ALPHA);
    return ferror(f) ? -1 : 0;
}

/* ---- modes ---- */

static int run_eval(const struct args *a)
{
    struct wino_point_search_result r;
    memset(&r, 0, sizeof r);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    enum wino_status st = wino_point_eval((int)a->alpha, a->points, a->opts.trials,
                                          a->opts.seed, &r.median_rel_l1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st) {
        fprintf(stderr, "wino " VERB ": --points: %s\n", wino_last_error());
        return st == WINO_INVALID_ARGUMENT ? 2 : 1;
    }
    if (!isfinite(r.median_rel_l1)) { /* overflowing transforms: nothing to report as a number */
        fprintf(stderr, "wino " VERB ": --points %s: the measured error is not finite (%g): "
                        "these points overflow FP32\n", a->points, r.median_rel_l1);
        return 1;
    }
    r.alpha = (int)a->alpha;
    r.trials = a->opts.trials;
    r.seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    /* echo the points as given, without spaces */
    size_t n = 0;
    for (const char *p = a->points; *p && n + 1 < sizeof r.points; p++)
        if (*p != ' ')
            r.points[n++] = *p;
    r.points[n] = '\0';
    if (a->json) {
        print_json(&r, &a->opts, 0);
        putchar('\n');
    } else
        print_text(&r, &a->opts, 0);
    return 0;
}

static int search_one(const struct args *a, int alpha, struct wino_point_search_result *r)
{
    struct wino_point_search_options o = a->opts;
    struct cli_progress bar;
    cli_progress_start(&bar);
    if (bar.on) {
        o.progress = draw_bar;
        o.progress_user = &bar;
    }
    enum wino_status st = wino_point_search(alpha, &o, r);
    cli_progress_clear(&bar);
    if (st) {
        fprintf(stderr, "wino " VERB ": alpha %d: %s\n", alpha, wino_last_error());
        return st == WINO_INVALID_ARGUMENT ? 2 : 1;
    }
    return 0;
}

static int run_all(const struct args *a, int argc, char **argv)
{
    enum { N = WINO_MAX_ALPHA - WINO_POINT_SEARCH_MIN_ALPHA + 1 };
    struct wino_point_search_result res[N];
    char tmp[4096] = "";
    FILE *f = NULL;
    if (a->db) {
        /* written aside and renamed at the end: a failed search leaves the old file intact */
        if (snprintf(tmp, sizeof tmp, "%s.tmp", a->db) >= (int)sizeof tmp)
            return cli_usage_error(VERB, "--write-db: path too long: %s", a->db);
        if (!(f = fopen(tmp, "w"))) {
            fprintf(stderr, "wino " VERB ": cannot write %s: %s\n", tmp, strerror(errno));
            return 1;
        }
    }
    if (a->json)
        putchar('[');
    else
        printf("alpha  median_rel_l1  trials   seconds  points\n");
    int rc = 0;
    for (int i = 0; i < N && !rc; i++) {
        if (!(rc = search_one(a, WINO_POINT_SEARCH_MIN_ALPHA + i, &res[i]))) {
            if (a->json) {
                if (i)
                    putchar(',');
                print_json(&res[i], &a->opts, 1);
            } else
                printf("%5d  %13.4e  %6ld  %8.1f  %s\n", res[i].alpha, res[i].median_rel_l1,
                       res[i].trials, res[i].seconds, res[i].points);
            fflush(stdout);
        }
    }
    if (a->json && !rc)
        printf("]\n");
    if (f) {
        int failed = !rc && write_db(f, argc, argv, res, &a->opts);
        failed |= fclose(f) != 0;
        if (!rc && failed) {
            fprintf(stderr, "wino " VERB ": cannot write %s\n", tmp);
            rc = 1;
        }
        if (!rc && rename(tmp, a->db)) {
            fprintf(stderr, "wino " VERB ": cannot rename %s to %s: %s\n", tmp, a->db,
                    strerror(errno));
            rc = 1;
        }
        if (rc)
            remove(tmp);
    }
    return rc;
}

int wino_cmd_points(int argc, char **argv)
{
    struct args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (a.eval)
        return run_eval(&a);
    if (a.all)
        return run_all(&a, argc, argv);
    struct wino_point_search_result r;
    if ((rc = search_one(&a, (int)a.alpha, &r)))
        return rc;
    if (a.json) {
        print_json(&r, &a.opts, 1);
        putchar('\n');
    } else
        print_text(&r, &a.opts, 1);
    return 0;
}
