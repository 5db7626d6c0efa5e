#include "pebblesim/monomial.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t binom_table[PS_BINOM_ROWS][PS_BINOM_ROWS];
static pthread_once_t binom_once = PTHREAD_ONCE_INIT;

static void binom_fill(void)
{
	for (unsigned n = 0; n < PS_BINOM_ROWS; n++) {
		binom_table[n][0] = binom_table[n][n] = 1;
		for (unsigned k = 1; k < n; k++)
			binom_table[n][k] = binom_table[n - 1][k - 1] + binom_table[n - 1][k];
	}
}

const uint64_t (*ps_binom_rows(void))[PS_BINOM_ROWS]
{
	pthread_once(&binom_once, binom_fill);
	return (const uint64_t (*)[PS_BINOM_ROWS])binom_table;
}

int ps_binom(uint64_t n, uint64_t k, uint64_t *out)
{
	uint64_t result = 1;

	if (k > n) {
		*out = 0;
		return 0;
	}
	if (n < PS_BINOM_ROWS) {
		*out = ps_binom_rows()[n][k];
		return 0;
	}
	if (k > n - k)
		k = n - k;
	/*
	 * result * (n - k + i) / i stays an integer at every step; divide
	 * through the gcd first so that only a true overflow is reported.
	 */
	for (uint64_t i = 1; i <= k; i++) {
		uint64_t num = n - k + i, den = i, a = result, b = den, t;

		while (b) {
			t = a % b;
			a = b;
			b = t;
		}
		result /= a;
		den /= a;
		num /= den; /* den divides num now: C(..) is an integer */
		if (ps_mul_u64(result, num, &result))
			return -1;
	}
	*out = result;
	return 0;
}

int ps_tau(uint64_t w, uint64_t g, uint64_t *out)
{
	uint64_t top;

	if (ps_add_u64(w, g, &top))
		return -1;
	return ps_binom(top, g, out);
}

void ps_monomials_free(struct ps_monomials *mono)
{
	free(mono->degree);
	free(mono->index);
	free(mono->support_size);
	free(mono->support);
	free(mono->degree_start);
	memset(mono, 0, sizeof(*mono));
}

int ps_monomials_init(struct ps_monomials *mono, uint32_t d, uint32_t g,
		      struct ps_error *err)
{
	uint64_t r, stride = g ? g : 1, m = 0;
	uint32_t tuple[64];

	memset(mono, 0, sizeof(*mono));
	if (d == 0)
		return ps_error_set(err, PS_EINPUT, "d must be at least 1");
	if (ps_tau(d, g, &r) || r > PS_MAX_MONOMIALS)
		return ps_error_set(err, PS_ENOMEM,
				    "r = C(d+g, g) for d = %u, g = %u exceeds the limit of %llu monomials",
				    d, g, (unsigned long long)PS_MAX_MONOMIALS);
	/* r <= 2^26 with d >= 1 forces g < 2^26; tuples stay short in practice */
	if (g > 64)
		return ps_error_set(err, PS_ENOMEM,
				    "degree g = %u exceeds the limit of 64", g);

	mono->d = d;
	mono->g = g;
	mono->r = r;
	mono->degree = malloc(r);
	mono->support_size = malloc(r);
	mono->index = malloc(r * stride * sizeof(uint32_t));
	mono->support = malloc(r * stride * sizeof(uint32_t));
	mono->degree_start = malloc((g + 2) * sizeof(uint64_t));
	if (!mono->degree || !mono->support_size || !mono->index ||
	    !mono->support || !mono->degree_start) {
		ps_monomials_free(mono);
		return ps_error_set(err, PS_ENOMEM,
				    "out of memory for %llu monomials",
				    (unsigned long long)r);
	}

	/* Degree by degree, each degree's tuples in lexicographic order. */
	for (uint32_t l = 0; l <= g; l++) {
		mono->degree_start[l] = m;
		for (uint32_t p = 0; p < l; p++)
			tuple[p] = 0;
		for (;;) {
			uint32_t *idx = mono->index + m * stride;
			uint32_t *sup = mono->support + m * stride;
			uint8_t s = 0;

			for (uint32_t p = 0; p < stride; p++) {
				idx[p] = p < l ? tuple[p] : UINT32_MAX;
				sup[p] = UINT32_MAX;
			}
			for (uint32_t p = 0; p < l; p++)
				if (p == 0 || tuple[p] != tuple[p - 1])
					sup[s++] = tuple[p];
			mono->degree[m] = (uint8_t)l;
			mono->support_size[m] = s;
			m++;

			/* next non-decreasing tuple: bump the last entry below d-1 */
			int p = (int)l - 1;
			while (p >= 0 && tuple[p] == d - 1)
				p--;
			if (p < 0)
				break;
			tuple[p]++;
			for (uint32_t q = (uint32_t)p + 1; q < l; q++)
				tuple[q] = tuple[p];
		}
	}
	mono->degree_start[g + 1] = m;
	if (m != r) { /* cannot happen unless the enumeration is wrong */
		ps_monomials_free(mono);
		return ps_error_set(err, PS_EINPUT,
				    "monomial enumeration found %llu of %llu",
				    (unsigned long long)m, (unsigned long long)r);
	}
	return PS_OK;
}

/* Non-decreasing tuples of length k over the d - lo indices lo..d-1. */
static uint64_t tuples_from(uint32_t d, uint32_t lo, uint32_t k)
{
	uint64_t c = 0;

	if (k == 0)
		return 1;
	ps_binom(d - lo + k - 1, k, &c);
	return c;
}

uint64_t ps_monomial_rank(const struct ps_monomials *mono,
			  const uint32_t *idx, uint32_t len)
{
	uint64_t rank = mono->degree_start[len];
	uint32_t prev = 0;

	for (uint32_t p = 0; p < len; p++) {
		/* tuples equal so far whose entry p is smaller than idx[p] */
		for (uint32_t v = prev; v < idx[p]; v++)
			rank += tuples_from(mono->d, v, len - p - 1);
		prev = idx[p];
	}
	return rank;
}

void ps_monomial_format(const struct ps_monomials *mono, uint64_t m,
			char *buf, size_t len)
{
	const uint32_t *idx = ps_monomial_indices(mono, m);
	size_t used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	used += (size_t)snprintf(buf, len, "(");
	for (uint32_t p = 0; p < mono->degree[m] && used < len; p++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u",
					 p ? "," : "", idx[p]);
	if (used < len)
		snprintf(buf + used, len - used, ")");
}
