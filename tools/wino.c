/* `wino`: command-line front of the library. Each verb lives in tools/cmd_<verb>.c. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "wino.h"

struct verb {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct verb verbs[] = {
    {"bench", wino_cmd_bench, "time wino against oneDNN, OpenBLAS or cuDNN on a named layer set"},
    {"calibrate", wino_cmd_calibrate, "INT8 Winograd clipping factors from data; error study"},
    {"demo", wino_cmd_demo, "generate F(4,3), convolve a default layer, report the error"},
    {"info", wino_cmd_info, "Winograd tile table: range enlargement, memory, MAC reduction"},
    {"gen", wino_cmd_gen, "print the exact transforms of F(m, r), op counts, emitted code"},
    {"points", wino_cmd_points, "search the most accurate interpolation points for a tile size"},
    {"tune", wino_cmd_tune, "measure the best choice per layer (OpenCL: kernel parameters)"},
};

static void usage(void)
{
    printf("usage: wino VERB [options]   (wino help VERB, or wino VERB --help, for its options)\n"
           "       wino help | --help | --version\n\n");
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        printf("  %-10s %s\n", verbs[i].name, verbs[i].summary);
    printf("\nOptions are written --name value or --name=value. Layer sets (--set NAME) are\n"
           "found beside the binary: <dir>/sets in a build tree, <dir>/../share/wino/sets when\n"
           "installed; --set also takes a file, --layer one layer.\n"
           "\nwino %s: Winograd convolution with exact generated transforms.\n",
           wino_version());
}

static const struct verb *find_verb(const char *name)
{
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (!strcmp(name, verbs[i].name))
            return &verbs[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "wino: no verb given (wino help lists them)\n");
        return 2;
    }
    const char *first = argv[1];
    if (!strcmp(first, "--version")) {
        printf("wino %s\n", wino_version());
        return 0;
    }
    if (!strcmp(first, "-h") || !strcmp(first, "--help") || (!strcmp(first, "help") && argc == 2)) {
        usage();
        return 0;
    }
    if (!strcmp(first, "help")) { /* wino help VERB: that verb's --help */
        const struct verb *v = find_verb(argv[2]);
        char help[] = "--help", *args[3] = {argv[2], help, NULL};
        if (v && argc == 3)
            return v->run(2, args);
        if (argc > 3)
            fprintf(stderr, "wino help: one verb at a time (wino help VERB)\n");
        else
            fprintf(stderr, "wino help: unknown verb \"%s\" (wino help lists them)\n", argv[2]);
        return 2;
    }
    const struct verb *v = find_verb(first);
    if (v)
        return v->run(argc - 1, argv + 1);
    fprintf(stderr, "wino: unknown verb \"%s\" (wino help lists them)\n", first);
    return 2;
}
