/* The option parser shared by every verb (see tools/cli.h). It runs over argv twice: first for
 * the CLI_MODE options alone, whose values decide which of the others apply, then for everything.
 * cli_parse prints nothing, allocates nothing and leaves errno alone: its message goes into
 * struct cli_parsed (cli_parse_args prints it). */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define QUOTE_MAX 64 /* characters of the user's text that one message repeats */

static enum cli_result fail(struct cli_parsed *out, const char *verb, const char *fmt, ...)
{
    const int n = snprintf(out->error, sizeof out->error, "wino %.20s: ", verb);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->error + n, sizeof out->error - (size_t)n, fmt, ap);
    va_end(ap);
    for (char *c = out->error; *c; c++) /* one line, whatever the user's text holds */
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return CLI_USAGE;
}

/* How much of the user's text of length len one message repeats. */
static int quoted(size_t len)
{
    return len < QUOTE_MAX ? (int)len : QUOTE_MAX;
}

int cli_to_long(const char *s, long *out)
{
    const int negative = *s == '-';
    unsigned long v = 0;
    s += negative;
    if (!*s)
        return -1;
    for (; *s; s++) {
        const unsigned digit = (unsigned)(*s - '0');
        if (digit > 9 || v > ((unsigned long)LONG_MAX - digit) / 10)
            return -1;
        v = 10 * v + digit;
    }
    *out = negative ? -(long)v : (long)v;
    return 0;
}

/* The index of value in choices ("a|b|c"), or -1. */
static int choice_index(const char *choices, const char *value)
{
    const size_t len = strlen(value);
    for (int i = 0;; i++) {
        const size_t n = strcspn(choices, "|");
        if (n == len && !strncmp(choices, value, n))
            return i;
        if (!choices[n])
            return -1;
        choices += n + 1;
    }
}

/* The modes an option given restricts the verb to (a CLI_MODE option: the one its value picks). */
static unsigned modes_of(const struct cli_option *o)
{
    const int index = o->kind == CLI_MODE ? *(const int *)o->dest : -1;
    if (index >= 0 && index < 32)
        return 1u << index;
    return o->modes ? o->modes : ~0u;
}

/* Finds the option at argv[*i] and its value, advancing *i past a separate value. Returns
 * CLI_HELP for -h and --help (*opt NULL), CLI_USAGE for anything that is not an option of table. */
static enum cli_result next_option(const char *verb, const struct cli_option *table, int argc,
                                   char **argv, int *i, const struct cli_option **opt,
                                   const char **value, struct cli_parsed *out)
{
    const char *arg = argv[*i];
    *opt = NULL;
    *value = NULL;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
        return CLI_HELP;
    if (arg[0] != '-')
        return fail(out, verb, "unexpected argument \"%.*s\"", quoted(strlen(arg)), arg);
    const char *eq = strncmp(arg, "--", 2) ? NULL : strchr(arg, '=');
    const size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    for (const struct cli_option *o = table; o->name && !*opt; o++)
        if (strlen(o->name) == len && !strncmp(o->name, arg, len))
            *opt = o;
    if (!*opt)
        return fail(out, verb, "unknown option \"%.*s\" (wino %s --help lists them)",
                    quoted(len), arg, verb);
    if ((*opt)->kind == CLI_FLAG) {
        if (eq)
            return fail(out, verb, "%s takes no value", (*opt)->name);
        return CLI_OK;
    }
    if (eq)
        *value = eq + 1;
    else if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2)) /* "--x" is the next option */
        *value = argv[++*i];
    else
        return fail(out, verb, "%s needs a value", (*opt)->name);
    return CLI_OK;
}

/* Checks value and stores it through o->dest. */
static enum cli_result store(const char *verb, const struct cli_option *o, const char *value,
                             struct cli_parsed *out)
{
    char why[160] = "";
    long v = 0;
    int index;
    switch (o->kind) {
    case CLI_FLAG:
        *(int *)o->dest = 1;
        return CLI_OK;
    case CLI_STRING:
        *(const char **)o->dest = value;
        return CLI_OK;
    case CLI_LONG:
        if (cli_to_long(value, &v))
            return fail(out, verb, "%s: \"%.*s\" is not an integer", o->name,
                        quoted(strlen(value)), value);
        if (v < o->min || v > o->max)
            return fail(out, verb, "%s: %ld is outside [%ld, %ld]", o->name, v, o->min, o->max);
        *(long *)o->dest = v;
        return CLI_OK;
    case CLI_CHOICE:
    case CLI_MODE:
        if ((index = choice_index(o->choices, value)) < 0)
            return fail(out, verb, "%s: \"%.*s\" is not one of %s", o->name,
                        quoted(strlen(value)), value, o->choices);
        *(int *)o->dest = index;
        return CLI_OK;
    case CLI_CALL:
        if (o->call(o->dest, value, why, sizeof why))
            return fail(out, verb, "%s: %s", o->name, why);
        return CLI_OK;
    }
    return fail(out, verb, "%s: unknown kind of option", o->name);
}

/* The message for option o, whose modes exclude those of the options given before it. */
static enum cli_result conflict(const char *verb, const struct cli_option *table,
                                unsigned long given, const struct cli_option *o,
                                struct cli_parsed *out)
{
    for (int j = 0; table[j].name; j++) {
        const struct cli_option *p = &table[j];
        const int was_given = (int)(given >> j & 1);
        if ((!was_given && p->kind != CLI_MODE) || (modes_of(p) & modes_of(o)))
            continue;
        if (p->kind != CLI_MODE)
            return fail(out, verb, "%s cannot be combined with %s", o->name, p->name);
        const char *c = p->choices; /* its value: choice number *dest */
        for (int k = *(const int *)p->dest; k > 0 && c[strcspn(c, "|")]; k--)
            c += strcspn(c, "|") + 1;
        return fail(out, verb, "%s cannot be combined with %s %.*s%s", o->name, p->name,
                    (int)strcspn(c, "|"), c, was_given ? "" : " (the default)");
    }
    return fail(out, verb, "%s cannot be combined with the options before it", o->name);
}

enum cli_result cli_parse(const char *verb, const struct cli_option *table, int argc,
                          char **argv, struct cli_parsed *out)
{
    unsigned long given = 0; /* bit j: table[j] was given */
    const struct cli_option *o;
    const char *value;
    enum cli_result r;
    int count = 0;
    out->modes = ~0u;
    out->error[0] = '\0';
    while (table[count].name)
        count++;
    if (count > CLI_MAX_OPTIONS)
        return fail(out, verb, "more than %d options in one table", CLI_MAX_OPTIONS);
    /* pass 1: the modes chosen by value, up to the first error (which pass 2 reports) */
    for (int i = 1; i < argc; i++) {
        if ((r = next_option(verb, table, argc, argv, &i, &o, &value, out)) == CLI_USAGE)
            break;
        if (!o || o->kind != CLI_MODE)
            continue;
        if (store(verb, o, value, out) != CLI_OK)
            break;
        given |= 1ul << (o - table);
    }
    out->error[0] = '\0';
    for (o = table; o->name; o++)
        if (o->kind == CLI_MODE)
            out->modes &= modes_of(o);
    /* pass 2: everything else, the modes checked before a value is stored */
    for (int i = 1; i < argc; i++) {
        if ((r = next_option(verb, table, argc, argv, &i, &o, &value, out)) != CLI_OK)
            return r;
        if (o->kind == CLI_MODE) { /* stored by pass 1 */
            if (choice_index(o->choices, value) < 0)
                return store(verb, o, value, out); /* its message */
            continue;
        }
        if (!(out->modes & modes_of(o)))
            return conflict(verb, table, given, o, out);
        out->modes &= modes_of(o);
        if ((r = store(verb, o, value, out)) != CLI_OK)
            return r;
        given |= 1ul << (o - table);
    }
    return CLI_OK;
}

enum cli_result cli_parse_args(const char *verb, const struct cli_option *table, int argc,
                               char **argv, unsigned *modes)
{
    struct cli_parsed parsed;
    const enum cli_result r = cli_parse(verb, table, argc, argv, &parsed);
    if (r == CLI_USAGE)
        fprintf(stderr, "%s\n", parsed.error);
    if (modes)
        *modes = parsed.modes;
    return r;
}

int cli_parse_verb(const char *verb, const struct cli_option *table, int argc, char **argv,
                   const char *usage)
{
    const enum cli_result r = cli_parse_args(verb, table, argc, argv, NULL);
    if (r == CLI_HELP)
        fputs(usage, stdout);
    return r == CLI_OK ? -1 : r == CLI_HELP ? 0 : (int)r;
}

int cli_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "wino %s: ", verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 2;
}
