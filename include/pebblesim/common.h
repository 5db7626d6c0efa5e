/*
 * Shared vocabulary of pebblesim: node ids, result codes and the error
 * carrier that brings a message (and, where there is one, an input line)
 * from deep in the library up to the command line.
 */
#ifndef PEBBLESIM_COMMON_H
#define PEBBLESIM_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PS_VERSION "0.1.0"

/* A node of a DAG, by its dense id. */
typedef uint64_t ps_node;

/*
 * Result codes. Every function that can fail returns 0 or one of these;
 * the command line maps them to exit statuses (MODEL.md section 4).
 */
enum ps_result_code {
	PS_OK = 0,
	PS_EINVALID = -1, /* a pebbling move broke a rule of the game */
	PS_EINPUT = -2,   /* bad parameters, bad trace, bad usage */
	PS_ENOMEM = -3,   /* out of memory, or beyond a documented size limit */
	PS_EIO = -4,      /* the operating system refused a read or write */
};

/*
 * The largest value of a parameter (n, d, g, M, w, ...): JSON integers are
 * read and written as int64 (jansson's json_int_t), and every parameter
 * must round-trip through a trace header or a report exactly.
 */
#define PS_PARAM_MAX UINT64_C(9223372036854775807)

/* The command line's exit statuses (MODEL.md section 4). */
enum ps_exit_status {
	PS_EXIT_VALID = 0,   /* valid sequence, bounds hold */
	PS_EXIT_INVALID = 1, /* invalid sequence, or a bound contradicted */
	PS_EXIT_USAGE = 2,   /* bad usage or input */
};

#define PS_ERROR_MAX 512

/* Where a failure is described for the user. */
struct ps_error {
	int code;               /* one of enum ps_result_code */
	uint64_t line;          /* input line, 0 when there is none */
	char msg[PS_ERROR_MAX]; /* lowercase, no final full stop */
};

/* Fills err (when not NULL) and returns code. */
int ps_error_set(struct ps_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

void ps_error_clear(struct ps_error *err);

/* Is s valid UTF-8 (RFC 3629: no overlong form, no surrogate, nothing
 * above U+10FFFF)? If not, *at (when not NULL) is the offset of the first
 * byte of the first bad sequence. */
bool ps_utf8_valid(const char *s, size_t *at);

/* Copies src into dst (len > 0 bytes with the NUL) as snprintf would, but
 * cut at a character boundary: a character that does not fit whole is
 * left out, and so is one that src itself ends inside (cut before).
 * Other bytes that are not UTF-8 are copied as they are. dst may be src.
 * Returns dst. */
char *ps_utf8_copy(char *dst, size_t len, const char *src);

/* Overflow-checked arithmetic: return 0, or -1 when the result would wrap. */
int ps_mul_u64(uint64_t a, uint64_t b, uint64_t *out);
int ps_add_u64(uint64_t a, uint64_t b, uint64_t *out);

/* ceil(a / b) for b > 0 */
static inline uint64_t ps_ceil_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

static inline uint64_t ps_min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t ps_max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

#endif
