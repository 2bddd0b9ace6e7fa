/* A one-line progress bar on stderr for the verbs that run long (point search, calibration
 * study), drawn only on a terminal so that logs and pipes stay clean. */
#define _POSIX_C_SOURCE 200112L /* isatty, fileno */

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define CELLS 20

void cli_progress_start(struct cli_progress *p)
{
    memset(p, 0, sizeof *p);
    p->on = isatty(fileno(stderr));
    p->percent = -1;
}

void cli_progress_draw(struct cli_progress *p, const char *label, long done, long total,
                       const char *extra)
{
    if (!p->on)
        return;
    const int percent = total > 0 ? (int)(100 * done / total) : 100;
    if (p->percent == percent && !strncmp(p->label, label, sizeof p->label - 1))
        return; /* redraw only when something shown changes */
    p->percent = percent;
    snprintf(p->label, sizeof p->label, "%s", label);
    char cells[CELLS + 1];
    for (int i = 0; i < CELLS; i++)
        cells[i] = i < percent * CELLS / 100 ? '#' : '.';
    cells[CELLS] = '\0';
    p->width = fprintf(stderr, "\r%s [%s] %3d%%  %-16s", p->label, cells, percent,
                       extra ? extra : "") - 1;
    fflush(stderr);
}

void cli_progress_clear(struct cli_progress *p)
{
    if (!p->on || p->percent < 0)
        return;
    fprintf(stderr, "\r%*s\r", p->width > 0 ? p->width : 1, "");
    fflush(stderr);
    p->percent = -1;
    p->label[0] = '\0';
}
