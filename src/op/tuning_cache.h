/* The on-disk tuning cache, one file for every backend's measured choices but OpenCL's: the
 * CPU's (written by wino_tune) and CUDA AUTO's (written by create). A text file, one entry a
 * line, of two kinds:
 *   wino-tuning-cache 1
 *   ISA THREADS DTYPE LAYOUT N C H W K R S PAD_H PAD_W STRIDE_H STRIDE_W DIL_H DIL_W ALGO M VARIANT MS
 *   cuda<TAB>DEVICE<TAB>KIND DTYPE LAYOUT N C H W K R S PAD_H PAD_W STRIDE_H STRIDE_W DIL_H DIL_W
 *       TF32 ACCUMULATE BIAS RELU VENDOR M WINO_MS VENDOR_MS
 * (all integers but the times; a CUDA entry is one line). A CPU line is keyed by the ISA and
 * thread count: for FP32 layers (DTYPE 0) wino_cpu_isa() (0 scalar, 1 AVX2, 2 AVX-512), for
 * INT8 layers (DTYPE 2 S8 or 3 U8, LAYOUT 1 NHWC) that of the INT8 kernels, wino_s8_isa() (0
 * scalar, 1 AVX2, 2 AVX-512 VNNI, 3 AMX). Its choice is ALGO (1 direct, 2 Winograd), M and
 * VARIANT: direct with M 0 and VARIANT 0; FP32 Winograd with m = 2..6 of generated transforms,
 * VARIANT 1 (NON_FUSED) or 2 (FUSED); INT8 Winograd with m = 2, 4 or 6 and VARIANT 0, for 3 x 3
 * filters of stride 1 and dilation 1 only (INT8 lines since 0.3; older versions take them for
 * stale ones). A CUDA line is keyed by DEVICE, "GPU NAME / cuDNN X.Y.Z" ("/ no cuDNN" where it
 * is not to be had), the kind (0 forward, 1 backward-data, 2 backward-filter) and the options
 * that change the choice (0 or 1; BIAS: one was given); its choice is VENDOR (1: the vendor's
 * engine, 0: wino's own operator), M wino's fastest candidate (a 2D tile's m, 100 + m for the
 * ROWS variant's F(m, s); 0 for backward-filter's WinRS, or when none ran) and the medians
 * timed (-1: not timed). Files of CPU lines only are those that
 * wino wrote before CUDA lines existed (older versions take a file with CUDA lines for a corrupt
 * one). Every store rewrites the whole file to a temporary file renamed over the old one, so
 * that readers never see half a file, keeping the valid entries of both kinds (wino_tune starts
 * a malformed file afresh, a CUDA create leaves it alone). A missing,
 * malformed or non-regular file is not used, and neither is an entry that its writer could not
 * have written (a stale one); of entries of one key the first counts. */
#ifndef WINO_OP_TUNING_CACHE_H
#define WINO_OP_TUNING_CACHE_H

#include <stdio.h>

#include "wino.h"

/* The Winograd tiles wino_tune times: m in [WINO_TUNE_MIN_M, WINO_TUNE_MAX_M], for FP32 those
 * with generated transforms, each NON_FUSED and FUSED, for INT8 the tiles of the INT8 engine
 * (2, 4, 6) with variant AUTO. */
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

/* A CUDA layer as AUTO keys its choice. */
#define WINO_CUDA_DEVICE_CAP 320
struct wino_cuda_layer {
    char device[WINO_CUDA_DEVICE_CAP]; /* "GPU NAME / cuDNN X.Y.Z": no tab or line break */
    enum wino_conv2d_kind kind;
    struct wino_conv2d_desc desc;
    int tf32, accumulate, bias, relu; /* as the options give them (bias: 1 when given) */
};

/* What CUDA's AUTO chose for a layer. */
struct wino_cuda_choice {
    int vendor;               /* 1: the vendor's engine, 0: wino's own operator */
    int tile_m;               /* wino's fastest candidate (WINO_CUDA_ROWS_CANDIDATE + m for the
                               * ROWS variant); 0 for WinRS, or when none ran */
    double wino_ms, vendor_ms; /* the medians timed, -1 where not timed */
};

/* 1 with *choice filled when path holds an entry for layer that AUTO could have written, else
 * 0. */
int wino_cuda_choice_lookup(const char *path, const struct wino_cuda_layer *layer,
                            struct wino_cuda_choice *choice);

/* Adds or replaces the entry of layer in path, as wino_tuning_store does, but leaves a
 * malformed file as it is (WINO_INVALID_ARGUMENT): a create does not overwrite what may be
 * another program's file. */
enum wino_status wino_cuda_choice_store(const char *path, const struct wino_cuda_layer *layer,
                                        const struct wino_cuda_choice *choice);

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
