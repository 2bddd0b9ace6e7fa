#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_parse_long(const char *verb, const char *name, const char *value, long min, long max,
                   long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (!*value || *end || errno) {
        fprintf(stderr, "wino %s: --%s: \"%s\" is not an integer\n", verb, name, value);
        return -1;
    }
    if (v < min || v > max) {
        fprintf(stderr, "wino %s: --%s: %ld is outside [%ld, %ld]\n", verb, name, v, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

const char *cli_value(const char *verb, int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "wino %s: %s needs a value\n", verb, argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int cli_is_help(const char *arg)
{
    return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}
