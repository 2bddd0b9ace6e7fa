/* The search and checks of src/op/component_loader.h, shared by the CUDA and OpenCL loaders. */
#define _GNU_SOURCE /* dladdr1 and struct link_map */
#include "op/component_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"

/* Appends printf-style text to failure, separated by "; ". */
static void note_failure(char *failure, size_t cap, const char *fmt, ...)
{
    size_t used = strlen(failure);
    if (used && used + 2 < cap) {
        memcpy(failure + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(failure + used, cap - used, fmt, ap);
    va_end(ap);
}

/* dlopen(path), then its table: the table, or NULL with the reason noted. */
static const void *try_component(const struct wino_component *spec, const char *path,
                                 char *failure, size_t cap)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        note_failure(failure, cap, "%s", why ? why : path);
        return NULL;
    }
    void *symbol = dlsym(lib, spec->entry);
    wino_component_entry_fn entry = NULL;
    memcpy(&entry, &symbol, sizeof entry); /* ISO C has no object-to-function pointer cast */
    const void *table = entry ? entry(spec->services) : NULL;
    const int abi = table ? *(const int *)table : -1; /* the table's first member */
    if (!symbol)
        note_failure(failure, cap, "%s: not a wino %s component (no %s)", path, spec->what,
                     spec->entry);
    else if (abi != spec->services->abi)
        note_failure(failure, cap, "%s: a component of another build (ABI %d, this libwino's "
                     "is %d)", path, abi, spec->services->abi);
    if (abi != spec->services->abi) {
        dlclose(lib);
        return NULL;
    }
    return table;
}

/* The directory of the file that holds this code into dir (without the final '/'): 1, or 0
 * when it cannot be told. The main program's name in the link map is empty (a static libwino),
 * so its file is read from /proc/self/exe. */
static int own_directory(char *dir, size_t cap)
{
    Dl_info info;
    struct link_map *map = NULL;
    void *self = NULL;
    enum wino_status (*here)(void) = wino_ok;
    memcpy(&self, &here, sizeof self);
    if (!dladdr1(self, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return 0;
    if (map->l_name && map->l_name[0]) {
        if (strlen(map->l_name) >= cap)
            return 0;
        strcpy(dir, map->l_name);
    } else {
        const ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
        if (n <= 0)
            return 0;
        dir[n] = '\0';
    }
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return 1;
}

void wino_component_load(struct wino_component *c)
{
    const size_t cap = sizeof c->failure;
    c->failure[0] = '\0';
    const char *named = getenv(c->env_var);
    if (named && named[0]) {
        c->table = try_component(c, named, c->failure, cap);
        return;
    }
    char path[PATH_MAX + 64];
    if (strlen(c->file_name) < 63 && own_directory(path, PATH_MAX)) {
        strcat(path, "/");
        strcat(path, c->file_name);
        if ((c->table = try_component(c, path, c->failure, cap)))
            return;
    }
    c->table = try_component(c, c->file_name, c->failure, cap);
}

const void *wino_component_table(struct wino_component *c, void (*load)(void))
{
    pthread_once(&c->once, load);
    if (!c->table)
        wino_fail(WINO_UNSUPPORTED, "the %s backend is not available: %s", c->what, c->failure);
    return c->table;
}
