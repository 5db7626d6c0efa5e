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

/* Approximate decoding (MODEL.md section 8; docs/BOUNDS.md): every token
 * after the first loads all but M - d - 1 of the state's cells its q, k
 * or v changes, besides the trivial bound's inputs and outputs. */
void ps_bound_decode_state(const struct ps_attention *att, uint64_t M, struct ps_bound *out);

/*
 * Exact attention's segment bound (docs/BOUNDS.md): M (ceil(P) - 1),
 * P = n^2 d^2 / (M (M + 3d(d - 1))). It needs no hypothesis: every
 * S[i,j] is complete at some time, and a segment of M I/Os can finish at
 * most (M/d)^2 of them from its inputs and touch at most 3M others.
 */
void ps_bound_exact_lower(const struct ps_attention *att, uint64_t M,
			  struct ps_bound *out);

struct ps_explicit;

/* The trivial lower bound of an explicit DAG: each input with a path to an
 * output that is not an input loaded once, each such output saved once. */
void ps_bound_trivial_explicit(const struct ps_explicit *x,
			       struct ps_bound *out);

/*
 * The partition lower bounds (A.2, B.3, C). Each returns true and fills out
 * when every hypothesis of its proof holds (docs/BOUNDS.md lists them);
 * otherwise false, and why names the hypothesis that fails.
 */

/* Key Lemma 3.2's, A.2: M (ceil(P) - 1), P = n r d / (4M + 4M^2/w +
 * M^2/(2w)), for the largest w <= d with w tau(w) <= M/4. */
bool ps_bound_keylemma_lower(const struct ps_attention *att, uint64_t M,
			     struct ps_bound *out, char *why, size_t len);

/* Theorem 1.3's, B.3, with an explicit threshold t <= g on the support of
 * the columns counted (the best t). */
bool ps_bound_b3_lower(const struct ps_attention *att, uint64_t M,
		       struct ps_bound *out, char *why, size_t len);

/* Theorem 1.4's, C: B.3 with the light rows split again at sqrt M. */
bool ps_bound_c_lower(const struct ps_attention *att, uint64_t M,
		      struct ps_bound *out, char *why, size_t len);

/* The name of B.3's (sqrt_split false) or C's bound: the theorem's where
 * its premise d >= 5g holds, else "threshold after B.3" (or C). */
const char *ps_threshold_bound_name(const struct ps_attention *att, bool sqrt_split);

/* A lower bound that was not applied, and the hypothesis that fails. */
struct ps_skipped_bound {
	const char *name;
	char why[192];
};

#define PS_LOWER_BOUND_COUNT 4 /* trivial, A.2, B.3, C */

/* Every lower bound for one DAG and M: those applied, and those not. */
struct ps_lower_bounds {
	struct ps_bound best; /* the largest applied: the one verdicts use */
	struct ps_bound applied[PS_LOWER_BOUND_COUNT];
	size_t applied_count;
	struct ps_skipped_bound skipped[PS_LOWER_BOUND_COUNT];
	size_t skipped_count;
};

void ps_bounds_lower(const struct ps_attention *att, uint64_t M,
		     struct ps_lower_bounds *out);

/* An explicit DAG's: the trivial bound alone. */
void ps_bounds_lower_explicit(const struct ps_explicit *x,
			      struct ps_lower_bounds *out);

/*
 * The paper's four cases with concrete constants (docs/BOUNDS.md): I when
 * d r <= M/4; else II when some w with g <= w <= d has w tau(w) <= M/4;
 * else III when M >= 4 g^2; else IV. Returns "I" .. "IV" and says why.
 */
const char *ps_classify_case(const struct ps_attention *att, uint64_t M,
			     char *why, size_t len);

/* Lemma 3.3's premise (B.2): C(d, g) <= 4 r g / M; why gets the numbers
 * when not NULL. */
bool ps_subtile_premise(const struct ps_attention *att, uint64_t M,
			char *why, size_t len);

/* Theorem 1.2's choice of w (section 3.4): w0 = g M^(1/(g+1)) / (4e). */
double ps_theorem12_w0(const struct ps_attention *att, uint64_t M);

/* The largest w <= d with max(g,1) <= w and w tau(w) <= M/4, or 0. */
uint64_t ps_keylemma_w_max(const struct ps_attention *att, uint64_t M);

#endif
