/* Loading a backend component (libwino_cuda.so.MAJOR, libwino_opencl.so.MAJOR): a shared
 * library that libwino opens at the first call that needs it, so that a program using the CPU
 * alone needs no GPU library. Each component exports one entry function that trades libwino's
 * error reporting for a table of operations whose first member is its int ABI number. */
#ifndef WINO_OP_COMPONENT_LOADER_H
#define WINO_OP_COMPONENT_LOADER_H

#include <pthread.h>

#include "component/component_error.h"

/* Every component's entry: its table, or NULL when services are of another ABI. */
typedef const void *(*wino_component_entry_fn)(const struct wino_component_services *services);

/* A component and its loading state (one static object per component). */
struct wino_component {
    const char *what;      /* the backend's name in messages: "CUDA", "OpenCL" */
    const char *env_var;   /* names a file to load instead of searching, e.g. WINO_CUDA_LIBRARY */
    const char *file_name; /* the file searched for, e.g. libwino_cuda.so.0 */
    const char *entry;     /* the exported entry's name */
    const struct wino_component_services *services; /* given to the entry; its abi is the
                                                     * ABI number the table must carry */
    pthread_once_t once;
    const void *table;     /* the component's table once loaded, or NULL */
    char failure[1024];    /* why table is NULL: each file tried and its error */
};

/* Looks the component up, in this order: the file that the environment variable env_var names
 * when it is set (then only it: a file asked for by name is reported when it fails, never
 * replaced by another); file_name in the directory of the object holding libwino's code
 * (libwino.so's, or the executable's for a static libwino); file_name through the dynamic
 * linker's search. Sets c->table to the first table of the right ABI (the library stays
 * loaded), or notes in c->failure each file tried and why. The loader's pthread_once routine
 * calls it once. */
void wino_component_load(struct wino_component *c);

/* c's table, loaded at the first call from any thread through load (which calls
 * wino_component_load(c)), or NULL with WINO_UNSUPPORTED and the reasons recorded. */
const void *wino_component_table(struct wino_component *c, void (*load)(void));

#endif
