#include "gen/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wino_strbuf_printf(struct wino_strbuf *sb, const char *fmt, ...)
{
    if (sb->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        sb->failed = 1;
        return;
    }
    size_t need = sb->len + (size_t)n + 1;
    if (need > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 4096;
        while (cap < need)
            cap *= 2;
        char *p = realloc(sb->text, cap);
        if (!p) {
            sb->failed = 1;
            return;
        }
        sb->text = p;
        sb->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(sb->text + sb->len, sb->cap - sb->len, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void wino_strbuf_free(struct wino_strbuf *sb)
{
    free(sb->text);
    memset(sb, 0, sizeof *sb);
}
