/* The on-disk tuning cache: one measured choice per (ISA, threads, layer). A text file:
 *   wino-tuning-cache 1
 *   ISA THREADS DTYPE LAYOUT N C H W K R S PAD_H PAD_W STRIDE_H STRIDE_W DIL_H DIL_W ALGO M VARIANT MS
 * (all integers but MS). Written whole to a temporary file renamed over the old one, so readers
 * never see half a file; a missing, malformed or non-regular file is not used, and neither is
 * an entry that wino_tune could not have written (a stale one). */
#ifndef WINO_OP_TUNING_CACHE_H
#define WINO_OP_TUNING_CACHE_H

#include <stdio.h>

#include "wino.h"

/* The Winograd tiles wino_tune times: m in [WINO_TUNE_MIN_M, WINO_TUNE_MAX_M] with generated
 * transforms, each NON_FUSED and FUSED. */
#define WINO_TUNE_MIN_M 2
#define WINO_TUNE_MAX_M 6

/* Why wino_tune never chooses *choice for desc (a valid descriptor), or NULL when it may. */
const char *wino_tuning_choice_refusal(const struct wino_conv2d_desc *desc,
                                       const struct wino_tuning_choice *choice);

/* 1 with *choice filled when path holds an entry for (isa, threads, desc) that wino_tune could
 * have written, else 0. */
int wino_tuning_lookup(const char *path, int isa, int threads,
                       const struct wino_conv2d_desc *desc, struct wino_tuning_choice *choice);

/* Adds or replaces the entry of (isa, threads, desc) in path, keeping the other valid entries (a
 * malformed file is started afresh). Returns WINO_SUCCESS, or WINO_INVALID_ARGUMENT when path
 * is not a regular file or cannot be written. */
enum wino_status wino_tuning_store(const char *path, int isa, int threads,
                                   const struct wino_conv2d_desc *desc,
                                   const struct wino_tuning_choice *choice);

/* Shared with the OpenCL tuning database (src/op/opencl_tuning.h). */

/* What opening or reading a cache file found besides entries. */
enum {
    CACHE_MISSING = -1,     /* no such file */
    CACHE_MALFORMED = -2,   /* not the file's format */
    CACHE_NO_MEMORY = -3,
    CACHE_NOT_REGULAR = -4, /* a FIFO, device or directory: never read (a FIFO would block) */
    CACHE_UNREADABLE = -5   /* it exists but cannot be opened */
};

/* Opens path for reading if it is a regular file (O_NONBLOCK: opening a FIFO must not wait for
 * a writer); NULL with *why set to a CACHE_ value otherwise. */
FILE *wino_cache_open(const char *path, int *why);

/* Reads path's lines after its first, which must be header (with its newline), into a malloc'ed
 * array at *out of entries of entry_size bytes, parse(line without its newline, entry) filling
 * each (nonzero: malformed; so is a line of line_cap bytes or more, newline included, line_cap
 * at most WINO_CACHE_LINE_MAX). Returns the count, or a CACHE_ value with *out NULL; *bad_line
 * (may be NULL) is the last line read (1-based). */
#define WINO_CACHE_LINE_MAX 1024
int wino_cache_read(const char *path, const char *header, int line_cap, size_t entry_size,
                    int (*parse)(const char *line, void *entry), void **out, int *bad_line);

/* Writes path anew: write(f, arg) fills a temporary file (returning 1 when all went well),
 * which is then renamed over path, so that readers never see half a file. WINO_SUCCESS, or
 * WINO_INVALID_ARGUMENT when it cannot be written (path untouched). */
enum wino_status wino_cache_replace(const char *path, int (*write)(FILE *f, void *arg),
                                    void *arg);

#endif
