/*
 * The monomials of degree at most g over d features (MODEL.md section 1):
 * multisets written as non-decreasing index tuples, ranked by degree first
 * and then lexicographically. There are r = C(d+g, g) of them; tau(w) =
 * C(w+g, g) counts those over w features (the paper's Definition 2.1).
 */
#ifndef PEBBLESIM_MONOMIAL_H
#define PEBBLESIM_MONOMIAL_H

#include <stdint.h>

#include "pebblesim/common.h"

/*
 * Largest r (columns of U1 and U2) pebblesim enumerates. The table of
 * monomials costs about 9 g bytes per monomial; beyond this limit the DAG's
 * pebble state would not fit this tool's machines anyway.
 */
#define PS_MAX_MONOMIALS (UINT64_C(1) << 26)

struct ps_monomials {
	uint32_t d, g;
	uint64_t r;
	uint8_t *degree;        /* [r] degree l of monomial m */
	uint32_t *index;        /* [r * g] the tuple, padded with UINT32_MAX */
	uint8_t *support_size;  /* [r] number of distinct indices */
	uint32_t *support;      /* [r * g] distinct indices, increasing */
	uint64_t *degree_start; /* [g + 2] first rank of each degree */
};

/* C(n, k) into *out; -1 when it overflows 64 bits. */
int ps_binom(uint64_t n, uint64_t k, uint64_t *out);

/* Pascal's triangle to the last row whose every entry fits 64 bits
 * (C(67, 33) < 2^64 < C(68, 34)): ps_binom_rows()[n][k] = C(n, k) for
 * n < PS_BINOM_ROWS (0 for k > n), for the planners' inner loops. Filled
 * once, by the first caller of either function. */
#define PS_BINOM_ROWS 68
const uint64_t (*ps_binom_rows(void))[PS_BINOM_ROWS];

/* tau(w) = C(w + g, g); -1 on overflow. */
int ps_tau(uint64_t w, uint64_t g, uint64_t *out);

/* Builds the table for d >= 1, g >= 0; refuses r > PS_MAX_MONOMIALS. */
int ps_monomials_init(struct ps_monomials *mono, uint32_t d, uint32_t g,
		      struct ps_error *err);
void ps_monomials_free(struct ps_monomials *mono);

/* Rank of the non-decreasing tuple idx[0..len) (len <= g, entries < d). */
uint64_t ps_monomial_rank(const struct ps_monomials *mono,
			  const uint32_t *idx, uint32_t len);

static inline const uint32_t *ps_monomial_indices(const struct ps_monomials *mono,
						  uint64_t m)
{
	return mono->index + m * mono->g;
}

static inline const uint32_t *ps_monomial_support(const struct ps_monomials *mono,
						  uint64_t m)
{
	return mono->support + m * mono->g;
}

/* Writes "(0,2,2)" (or "()" for the constant) into buf. */
void ps_monomial_format(const struct ps_monomials *mono, uint64_t m,
			char *buf, size_t len);

#endif
