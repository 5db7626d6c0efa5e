/*
 * libFuzzer target: the .npy reader (src/npy.c), as --q, --k and --v read
 * a file: the shape asked for is (n, d), so that what is allocated stays
 * small, then the data. What it accepts must be finite, and must read back
 * the same after ps_npy_write.
 *
 * Input: one byte of rows and one of columns asked for (each 1 to 16),
 * then the file.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t want_rows, want_cols, rows, cols, again_rows, again_cols;
	double *values, *again;
	struct ps_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (size < 3)
		return 0; /* fmemopen takes no empty buffer */
	want_rows = (uint64_t)(data[0] & 15) + 1;
	want_cols = (uint64_t)(data[1] & 15) + 1;
	f = fmemopen((void *)(data + 2), size - 2, "rb");
	if (!f)
		return 0;
	ps_error_clear(&err);
	rc = ps_npy_read(f, "fuzz.npy", want_rows, want_cols, &values, &rows, &cols, &err);
	fclose(f);
	if (rc) {
		if (!err.msg[0] || values)
			__builtin_trap(); /* a refusal says why, and keeps nothing */
		return 0;
	}
	if (rows != want_rows || cols != want_cols)
		__builtin_trap();
	for (uint64_t k = 0; k < rows * cols; k++)
		if (!isfinite(values[k]))
			__builtin_trap(); /* NaN and infinities are refused */
	/* what was accepted reads back the same, bit for bit */
	f = open_memstream(&text, &len);
	if (!f || ps_npy_write(f, values, rows, cols) || fclose(f))
		__builtin_trap();
	f = fmemopen(text, len, "rb");
	if (!f || ps_npy_read(f, "again.npy", rows, cols, &again, &again_rows, &again_cols, &err) ||
	    memcmp(values, again, rows * cols * sizeof(double)))
		__builtin_trap();
	fclose(f);
	free(text);
	free(values);
	free(again);
	return 0;
}
