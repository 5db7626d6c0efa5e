/*
 * NumPy's .npy format (versions 1.0, 2.0 and 3.0), for the matrices of a
 * run with values (docs/VALUES.md): 2-D arrays of float64 or float32, in C
 * or Fortran order, either byte order, read into a dense row-major array
 * of doubles; written as float64, C order, little-endian, version 1.0.
 * Every file is untrusted: a header that does not parse, a shape, dtype or
 * order outside these, a file shorter or longer than its header says, is
 * refused with the reason.
 */
#ifndef PEBBLESIM_NPY_H
#define PEBBLESIM_NPY_H

#include <stdint.h>
#include <stdio.h>

#include "pebblesim/common.h"

/*
 * Reads the 2-D array in f (named name in messages) into *data (malloc'd,
 * rows x cols, row-major). With want_rows/want_cols not 0, the shape must
 * be exactly that. PS_EINPUT with the reason, PS_ENOMEM, or PS_EIO.
 */
int ps_npy_read(FILE *f, const char *name, uint64_t want_rows,
		uint64_t want_cols, double **data, uint64_t *rows,
		uint64_t *cols, struct ps_error *err);

/* The same, from a file by its path. */
int ps_npy_load(const char *path, uint64_t want_rows, uint64_t want_cols,
		double **data, uint64_t *rows, uint64_t *cols,
		struct ps_error *err);

/* Writes rows x cols doubles (row-major) as float64 .npy to f. */
int ps_npy_write(FILE *f, const double *data, uint64_t rows, uint64_t cols);

#endif
