/* The on-disk tuning cache: one measured choice per (ISA, threads, layer). A text file:
 *   wino-tuning-cache 1
 *   ISA THREADS DTYPE LAYOUT N C H W K R S PAD_H PAD_W STRIDE_H STRIDE_W DIL_H DIL_W ALGO M VARIANT MS
 * (all integers but MS). Written whole to a temporary file renamed over the old one, so readers
 * never see half a file; a missing, stale or malformed file is simply not used. */
#ifndef WINO_CORE_TUNING_CACHE_H
#define WINO_CORE_TUNING_CACHE_H

#include "wino.h"

/* 1 with *choice filled when path holds a valid entry for (isa, threads, desc), else 0. */
int wino_tuning_lookup(const char *path, int isa, int threads,
                       const struct wino_conv2d_desc *desc, struct wino_tuning_choice *choice);

/* Adds or replaces the entry of (isa, threads, desc) in path (a corrupt or stale file is started
 * afresh). Returns WINO_SUCCESS, or WINO_INVALID_ARGUMENT when the file cannot be written. */
enum wino_status wino_tuning_store(const char *path, int isa, int threads,
                                   const struct wino_conv2d_desc *desc,
                                   const struct wino_tuning_choice *choice);

#endif
