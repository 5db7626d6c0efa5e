/*
 * Bounds on the I/O cost, each a number with the formula it comes from
 * (docs/BOUNDS.md derives them).
 */
#ifndef PEBBLESIM_BOUNDS_H
#define PEBBLESIM_BOUNDS_H

#include <stddef.h>
#include <stdint.h>

#include "pebblesim/attention.h"

struct ps_bound {
	const char *name;   /* "trivial", "generic (tall tiles)" ... */
	char formula[256];  /* how the value follows from n, d, g, r, M */
	double value;
};

/*
 * The trivial lower bound: every input that is an ancestor of an output is
 * loaded at least once and every output saved at least once. With g = 0 no
 * monomial reads Q or K, so only V counts.
 */
void ps_bound_trivial(const struct ps_attention *att, struct ps_bound *out);

/*
 * The paper's four cases with concrete constants (docs/BOUNDS.md): I when
 * d r <= M/4; else II when some w with g <= w <= d has w tau(w) <= M/4;
 * else III when M >= 4 g^2; else IV. Returns "I" .. "IV" and says why.
 */
const char *ps_classify_case(const struct ps_attention *att, uint64_t M,
			     char *why, size_t len);

#endif
