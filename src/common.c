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
