#include "pebblesim/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ps_error_set(struct ps_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void ps_error_clear(struct ps_error *err)
{
	if (!err)
		return;
	err->code = PS_OK;
	err->line = 0;
	err->msg[0] = '\0';
}

int ps_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	if (a != 0 && b > UINT64_MAX / a)
		return -1;
	*out = a * b;
	return 0;
}

int ps_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	if (b > UINT64_MAX - a)
		return -1;
	*out = a + b;
	return 0;
}

/* The length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_sequence(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0; /* the NUL too */
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* Is s the start of a character cut by the end of the string? */
static bool utf8_cut(const unsigned char *s)
{
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	size_t k = 1;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return false;
	while (s[k] && (s[k] & 0xc0) == 0x80)
		k++;
	return !s[k] && k < len;
}

bool ps_utf8_valid(const char *s, size_t *at)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t len = utf8_sequence(p);

		if (!len) {
			if (at)
				*at = (size_t)(p - (const unsigned char *)s);
			return false;
		}
		p += len;
	}
	return true;
}

char *ps_utf8_copy(char *dst, size_t len, const char *src)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t used = 0;

	while (*p) {
		size_t n = utf8_sequence(p);

		if (!n && utf8_cut(p))
			break; /* a character cut before: left out too */
		if (!n)
			n = 1; /* a bad byte is copied as it is, alone */
		if (used + n >= len)
			break;
		memmove(dst + used, p, n);
		used += n;
		p += n;
	}
	dst[used] = '\0';
	return dst;
}
