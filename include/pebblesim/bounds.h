/*
 * Bounds on the I/O cost, each a number with the formula it comes from.
 * docs/BOUNDS.md derives every one; the tests assert that no measured
 * count falls outside them.
 */
#ifndef PEBBLESIM_BOUNDS_H
#define PEBBLESIM_BOUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pebblesim/attention.h"

struct ps_bound {
	const char *name;  /* "trivial", "Key Lemma 3.2 (A.2)" ... */
	char formula[256]; /* how the value follows from n, d, g, r, M */
	double value;
};

/* ---- upper bounds: the proofs' tile accounting with their constants ---- */

/* Lemma 3.1 with blocks of t monomials, row blocks of rows, width w. */
void ps_bound_generic(const struct ps_attention *att, uint64_t t,
		      uint64_t rows, uint64_t w, bool keep_q,
		      struct ps_bound *out);

/* Theorem 1.1: row blocks of h, H tiles r x tw. */
void ps_bound_case1(const struct ps_attention *att, uint64_t h, uint64_t tw,
		    struct ps_bound *out);

/* Key Lemma 3.2 (A.1): width w, height h, T aggregation tiles. */
void ps_bound_keylemma(const struct ps_attention *att, uint64_t w,
		       uint64_t h, uint64_t tiles, struct ps_bound *out);

/* Lemma 3.3 (B.2): height h, width g, T tiles, sub-tiles of h. */
void ps_bound_subtile(const struct ps_attention *att, uint64_t h,
		      uint64_t tiles, struct ps_bound *out);

/* Theorem 1.4 (C): U1, U2 stored, square tiles of side s. */
void ps_bound_matmul(const struct ps_attention *att, uint64_t s,
		     struct ps_bound *out);

/* ---- lower bounds ------------------------------------------------------ */

/*
 * The trivial lower bound: every input that is an ancestor of an output is
 * loaded at least once and every output saved at least once. With g = 0 no
 * monomial reads Q or K, so only V counts.
 */
void ps_bound_trivial(const struct ps_attention *att, struct ps_bound *out);

struct ps_explicit;

/* The trivial lower bound of an explicit DAG: each input with a path to an
 * output that is not an input loaded once, each such output saved once. */
void ps_bound_trivial_explicit(const struct ps_explicit *x,
			       struct ps_bound *out);

/* Key Lemma 3.2's, A.2: M (ceil(P) - 1), P = n r d / (4M + 4M^2/w +
 * M^2/(2w)), for the largest w <= d with w tau(w) <= M/4; false when none. */
bool ps_bound_keylemma_lower(const struct ps_attention *att, uint64_t M,
			     struct ps_bound *out);

/* Theorems 1.3 and 1.4's (B.3, C) with an explicit threshold t <= g on the
 * support of the columns counted; the best t; false when g = 0. */
bool ps_bound_partition_lower(const struct ps_attention *att, uint64_t M,
			      struct ps_bound *out);

/* The largest lower bound that applies, named. */
void ps_bound_lower(const struct ps_attention *att, uint64_t M,
		    struct ps_bound *out);

/*
 * The paper's four cases with concrete constants (docs/BOUNDS.md): I when
 * d r <= M/4; else II when some w with g <= w <= d has w tau(w) <= M/4;
 * else III when M >= 4 g^2; else IV. Returns "I" .. "IV" and says why.
 */
const char *ps_classify_case(const struct ps_attention *att, uint64_t M,
			     char *why, size_t len);

/* The largest w <= d with max(g,1) <= w and w tau(w) <= M/4, or 0. */
uint64_t ps_keylemma_w_max(const struct ps_attention *att, uint64_t M);

#endif
