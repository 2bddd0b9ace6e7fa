/* Error measures of a computed tensor against a double-precision reference. */
#ifndef WINO_REF_ERROR_METRICS_H
#define WINO_REF_ERROR_METRICS_H

#include <stddef.h>

/* sum|got - ref| / sum|ref| (elementwise relative L1); NaN in got gives NaN. 0 when both are 0. */
double wino_rel_l1_f32(const float *got, const double *ref, size_t n);
/* Mean absolute relative error, the mean of |got - ref| / |ref| over the elements with a nonzero
 * reference (Zhang et al., ICPP'25, section 6.3: the WinRS paper's MARE); INFINITY when got is
 * nonzero where ref is 0, NaN in got gives NaN, 0 when every ref is 0. */
double wino_mare_f32(const float *got, const double *ref, size_t n);
/* max |got - ref| (NaN if any element of got is NaN). */
double wino_max_abs_err_f32(const float *got, const double *ref, size_t n);

#endif
