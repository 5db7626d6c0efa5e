/*
 * The .npy format (NumPy's numpy.lib.format, NEP 1): the magic "\x93NUMPY",
 * a major and a minor version byte, the header's length (2 bytes
 * little-endian in 1.0, 4 in 2.0 and 3.0), the header, a Python dict
 * literal {'descr': '<f8', 'fortran_order': False, 'shape': (n, d), }
 * padded with spaces and ended by a newline so that the data starts on a
 * multiple of 64 bytes, then the data.
 */
#include "pebblesim/npy.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A header longer than this is no header of a 2-D float array. */
#define NPY_MAX_HEADER 65536

struct header {
	char descr[16];
	bool fortran;
	uint64_t shape[3];
	unsigned dims;
	bool has_descr, has_fortran, has_shape;
};

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* A quoted Python string into buf; NULL when it is not one. */
static const char *parse_string(const char *p, const char *end, char *buf,
				size_t len)
{
	char quote;
	size_t used = 0;

	if (p >= end || (*p != '\'' && *p != '"'))
		return NULL;
	quote = *p++;
	while (p < end && *p != quote) {
		if (*p == '\\' || used + 1 >= len)
			return NULL;
		buf[used++] = *p++;
	}
	if (p >= end)
		return NULL;
	buf[used] = '\0';
	return p + 1;
}

/* A header string for a message: bytes outside printable ASCII, and the
 * backslash, as \xNN, so that a message never carries raw bytes. */
static const char *printable(const char *text, char *buf, size_t len)
{
	size_t used = 0;

	for (const unsigned char *p = (const unsigned char *)text; *p && used + 5 < len; p++)
		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			buf[used++] = (char)*p;
		else
			used += (size_t)snprintf(buf + used, len - used, "\\x%02x", *p);
	buf[used] = '\0';
	return buf;
}

static bool word_at(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(end - p) >= n && !memcmp(p, word, n);
}

/* (a, b, ...) of non-negative integers, at most 3 of them read */
static const char *parse_shape(const char *p, const char *end, struct header *h)
{
	if (p >= end || *p != '(')
		return NULL;
	p = skip_space(p + 1, end);
	h->dims = 0;
	while (p < end && *p != ')') {
		uint64_t v = 0;

		if (*p < '0' || *p > '9')
			return NULL;
		for (; p < end && *p >= '0' && *p <= '9'; p++) {
			if (v > (PS_PARAM_MAX - (uint64_t)(*p - '0')) / 10)
				return NULL;
			v = v * 10 + (uint64_t)(*p - '0');
		}
		if (p < end && *p == 'L') /* Python 2's long */
			p++;
		if (h->dims < 3)
			h->shape[h->dims] = v;
		h->dims++;
		p = skip_space(p, end);
		if (p < end && *p == ',')
			p = skip_space(p + 1, end);
		else if (p < end && *p != ')')
			return NULL;
	}
	return p < end ? p + 1 : NULL;
}

static int parse_header(const char *text, size_t len, const char *name,
			struct header *h, struct ps_error *err)
{
	const char *p = text, *end = text + len;

	memset(h, 0, sizeof(*h));
	if (!len || text[len - 1] != '\n')
		return ps_error_set(err, PS_EINPUT, "%s: the .npy header does not end with a newline", name);
	p = skip_space(p, end);
	if (p >= end || *p != '{')
		return ps_error_set(err, PS_EINPUT, "%s: the .npy header is not a dictionary", name);
	p = skip_space(p + 1, end);
	while (p < end && *p != '}') {
		char key[32], shown[4 * sizeof(key) + 1];

		if (!(p = parse_string(p, end, key, sizeof(key))))
			return ps_error_set(err, PS_EINPUT, "%s: the .npy header has a key that is not a short string", name);
		p = skip_space(p, end);
		if (p >= end || *p != ':')
			return ps_error_set(err, PS_EINPUT, "%s: the .npy header misses ':' after '%s'", name,
					    printable(key, shown, sizeof(shown)));
		p = skip_space(p + 1, end);
		if (!strcmp(key, "descr") && !h->has_descr) {
			h->has_descr = true;
			if (!(p = parse_string(p, end, h->descr, sizeof(h->descr))))
				return ps_error_set(err, PS_EINPUT, "%s: the .npy header's descr is not a simple type string (a structured dtype is not a matrix of numbers)", name);
		} else if (!strcmp(key, "fortran_order") && !h->has_fortran) {
			h->has_fortran = true;
			if (word_at(p, end, "True")) {
				h->fortran = true;
				p += 4;
			} else if (word_at(p, end, "False")) {
				p += 5;
			} else {
				return ps_error_set(err, PS_EINPUT, "%s: the .npy header's fortran_order is not True or False", name);
			}
		} else if (!strcmp(key, "shape") && !h->has_shape) {
			h->has_shape = true;
			if (!(p = parse_shape(p, end, h)))
				return ps_error_set(err, PS_EINPUT, "%s: the .npy header's shape is not a tuple of integers", name);
		} else {
			return ps_error_set(err, PS_EINPUT, "%s: the .npy header has an unknown or repeated key '%s'",
					    name, printable(key, shown, sizeof(shown)));
		}
		p = skip_space(p, end);
		if (p < end && *p == ',')
			p = skip_space(p + 1, end);
		else if (p < end && *p != '}')
			return ps_error_set(err, PS_EINPUT, "%s: the .npy header misses ',' between its entries", name);
	}
	if (p >= end)
		return ps_error_set(err, PS_EINPUT, "%s: the .npy header's dictionary is not closed", name);
	p = skip_space(p + 1, end);
	if (p != end)
		return ps_error_set(err, PS_EINPUT, "%s: the .npy header has text after its dictionary", name);
	if (!h->has_descr || !h->has_fortran || !h->has_shape)
		return ps_error_set(err, PS_EINPUT, "%s: the .npy header lacks '%s'", name,
				    !h->has_descr ? "descr" : !h->has_fortran ? "fortran_order" : "shape");
	return PS_OK;
}

static uint64_t read_le(const unsigned char *b, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned k = bytes; k-- > 0;)
		v = v << 8 | b[k];
	return v;
}

/* One element at raw (size bytes, swapped when swap) as a double. */
static double element(const unsigned char *raw, unsigned size, bool swap)
{
	unsigned char b[8];

	for (unsigned k = 0; k < size; k++)
		b[k] = swap ? raw[size - 1 - k] : raw[k];
	if (size == 8) {
		double x;

		memcpy(&x, b, 8);
		return x;
	} else {
		float x;

		memcpy(&x, b, 4);
		return (double)x;
	}
}

static bool host_little_endian(void)
{
	const uint16_t one = 1;
	unsigned char b;

	memcpy(&b, &one, 1);
	return b == 1;
}

int ps_npy_read(FILE *f, const char *name, uint64_t want_rows,
		uint64_t want_cols, double **data, uint64_t *rows,
		uint64_t *cols, struct ps_error *err)
{
	unsigned char pre[12];
	unsigned len_bytes, size;
	uint64_t header_len, count, bytes;
	struct header h;
	char *text;
	unsigned char *raw;
	double *out;
	bool swap, little;
	int rc;

	*data = NULL;
	if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6))
		return ferror(f) ? ps_error_set(err, PS_EIO, "cannot read '%s': %s", name, strerror(errno))
				 : ps_error_set(err, PS_EINPUT, "%s: not a .npy file (no \\x93NUMPY magic)", name);
	if ((pre[6] != 1 && pre[6] != 2 && pre[6] != 3) || pre[7] != 0)
		return ps_error_set(err, PS_EINPUT, "%s: .npy format version %u.%u is not 1.0, 2.0 or 3.0",
				    name, pre[6], pre[7]);
	len_bytes = pre[6] == 1 ? 2 : 4;
	if (fread(pre + 8, 1, len_bytes, f) != len_bytes)
		return ps_error_set(err, PS_EINPUT, "%s: truncated .npy header", name);
	header_len = read_le(pre + 8, len_bytes);
	if (header_len > NPY_MAX_HEADER)
		return ps_error_set(err, PS_EINPUT, "%s: the .npy header claims %llu bytes; a 2-D array's takes far less",
				    name, (unsigned long long)header_len);
	if (!(text = malloc(header_len + 1)))
		return ps_error_set(err, PS_ENOMEM, "out of memory");
	if (fread(text, 1, header_len, f) != header_len) {
		free(text);
		return ps_error_set(err, PS_EINPUT, "%s: truncated .npy header (it claims %llu bytes)",
				    name, (unsigned long long)header_len);
	}
	text[header_len] = '\0';
	if (memchr(text, '\0', header_len)) {
		free(text);
		return ps_error_set(err, PS_EINPUT, "%s: the .npy header holds a NUL byte", name);
	}
	rc = parse_header(text, header_len, name, &h, err);
	free(text);
	if (rc)
		return rc;
	if (h.dims != 2)
		return ps_error_set(err, PS_EINPUT, "%s: the array has %u dimensions; a matrix has 2", name, h.dims);
	little = host_little_endian();
	if (!strcmp(h.descr + 1, "f8"))
		size = 8;
	else if (!strcmp(h.descr + 1, "f4"))
		size = 4;
	else
		size = 0;
	if (!size || (h.descr[0] != '<' && h.descr[0] != '>' && h.descr[0] != '=')) {
		char shown[4 * sizeof(h.descr) + 1];

		return ps_error_set(err, PS_EINPUT, "%s: dtype '%s' is not float64 ('<f8') or float32 ('<f4')",
				    name, printable(h.descr, shown, sizeof(shown)));
	}
	swap = h.descr[0] == '=' ? false : (h.descr[0] == '<') != little;
	if ((want_rows && h.shape[0] != want_rows) || (want_cols && h.shape[1] != want_cols))
		return ps_error_set(err, PS_EINPUT, "%s: shape (%llu, %llu) is not (%llu, %llu), n x d",
				    name, (unsigned long long)h.shape[0],
				    (unsigned long long)h.shape[1],
				    (unsigned long long)want_rows, (unsigned long long)want_cols);
	if (ps_mul_u64(h.shape[0], h.shape[1], &count) || ps_mul_u64(count, 8, &bytes) ||
	    bytes > (uint64_t)SIZE_MAX / 2)
		return ps_error_set(err, PS_EINPUT, "%s: shape (%llu, %llu) is beyond this machine's sizes",
				    name, (unsigned long long)h.shape[0], (unsigned long long)h.shape[1]);
	raw = malloc(count ? count * size : 1);
	out = malloc(count ? count * sizeof(double) : 1);
	if (!raw || !out) {
		free(raw);
		free(out);
		return ps_error_set(err, PS_ENOMEM, "out of memory for '%s' (%llu x %llu)", name,
				    (unsigned long long)h.shape[0], (unsigned long long)h.shape[1]);
	}
	if (fread(raw, size, count, f) != count) {
		free(raw);
		free(out);
		return ferror(f) ? ps_error_set(err, PS_EIO, "cannot read '%s': %s", name, strerror(errno))
				 : ps_error_set(err, PS_EINPUT, "%s: truncated: the header promises %llu x %llu values of %u bytes",
						name, (unsigned long long)h.shape[0],
						(unsigned long long)h.shape[1], size);
	}
	if (fgetc(f) != EOF) {
		free(raw);
		free(out);
		return ps_error_set(err, PS_EINPUT, "%s: bytes after the %llu x %llu values the header promises",
				    name, (unsigned long long)h.shape[0], (unsigned long long)h.shape[1]);
	}
	for (uint64_t r = 0; r < h.shape[0]; r++)
		for (uint64_t c = 0; c < h.shape[1]; c++) {
			uint64_t at = h.fortran ? c * h.shape[0] + r : r * h.shape[1] + c;

			out[r * h.shape[1] + c] = element(raw + at * size, size, swap);
		}
	free(raw);
	/* a NaN or an infinity has no place in attention's inputs: it would
	 * make every output it reaches NaN, and NaN compares as no error */
	for (uint64_t k = 0; k < count; k++)
		if (!isfinite(out[k])) {
			rc = ps_error_set(err, PS_EINPUT, "%s: entry [%llu, %llu] is %s: the values are finite numbers",
					  name, (unsigned long long)(k / h.shape[1]),
					  (unsigned long long)(k % h.shape[1]),
					  isnan(out[k]) ? "NaN" : out[k] > 0 ? "+inf" : "-inf");
			free(out);
			return rc;
		}
	*data = out;
	*rows = h.shape[0];
	*cols = h.shape[1];
	return PS_OK;
}

int ps_npy_load(const char *path, uint64_t want_rows, uint64_t want_cols,
		double **data, uint64_t *rows, uint64_t *cols,
		struct ps_error *err)
{
	FILE *f = fopen(path, "rb");
	int rc;

	*data = NULL;
	if (!f)
		return ps_error_set(err, PS_EINPUT, "cannot open '%s': %s", path, strerror(errno));
	rc = ps_npy_read(f, path, want_rows, want_cols, data, rows, cols, err);
	fclose(f);
	return rc;
}

int ps_npy_write(FILE *f, const double *data, uint64_t rows, uint64_t cols)
{
	char header[128];
	unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0 };
	int len = snprintf(header, sizeof(header),
			   "{'descr': '<f8', 'fortran_order': False, 'shape': (%llu, %llu), }",
			   (unsigned long long)rows, (unsigned long long)cols);
	/* spaces and a newline up to a multiple of 64 bytes */
	size_t total = ((size_t)len + 1 + sizeof(pre) + 63) / 64 * 64;
	size_t padded = total - sizeof(pre);
	bool little = host_little_endian();

	memset(header + len, ' ', padded - (size_t)len - 1);
	header[padded - 1] = '\n';
	pre[8] = (unsigned char)(padded & 0xff);
	pre[9] = (unsigned char)(padded >> 8);
	fwrite(pre, 1, sizeof(pre), f);
	fwrite(header, 1, padded, f);
	for (uint64_t k = 0; k < rows * cols; k++) {
		unsigned char b[8];

		memcpy(b, &data[k], 8);
		if (!little)
			for (unsigned q = 0; q < 4; q++) {
				unsigned char t = b[q];

				b[q] = b[7 - q];
				b[7 - q] = t;
			}
		fwrite(b, 1, 8, f);
	}
	return ferror(f) ? PS_EIO : PS_OK;
}
