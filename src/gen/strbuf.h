/* A growing text buffer for the code and table generators. */
#ifndef WINO_GEN_STRBUF_H
#define WINO_GEN_STRBUF_H

#include <stddef.h>

#include "base/error.h"

struct wino_strbuf {
    char *text; /* NUL terminated (NULL until the first append) */
    size_t len; /* characters, without the NUL */
    size_t cap;
    int failed; /* an allocation failed: the text is incomplete */
};

/* Appends printf-style text; on allocation failure sets sb->failed and appends nothing more.
 * Only %d, %s, %c, %zu, %ld style conversions are used, which do not depend on the locale. */
void wino_strbuf_printf(struct wino_strbuf *sb, const char *fmt, ...) WINO_PRINTF(2, 3);
void wino_strbuf_free(struct wino_strbuf *sb); /* back to the zeroed state */

#endif
