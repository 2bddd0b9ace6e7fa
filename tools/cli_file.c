/* Opening the files a user names: regular files only, so that a FIFO or a device given by
 * mistake is refused at once instead of blocking the tool or feeding it endless data. */
#define _POSIX_C_SOURCE 200112L /* open, fstat, fdopen */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

FILE *cli_open_regular(const char *path, const char *mode, char *why, size_t cap)
{
    /* O_NONBLOCK: opening a FIFO without a writer returns at once; reads of a regular file
     * ignore it */
    const int fd = open(path, O_RDONLY | O_NONBLOCK);
    struct stat st;
    if (fd < 0) {
        snprintf(why, cap, "%s", strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        snprintf(why, cap, "not a regular file");
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, mode);
    if (!f) {
        snprintf(why, cap, "%s", strerror(errno));
        close(fd);
    }
    return f;
}
