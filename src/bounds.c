#include "pebblesim/bounds.h"

#include <stdio.h>

#include "pebblesim/monomial.h"

void ps_bound_trivial(const struct ps_attention *att, struct ps_bound *out)
{
	uint64_t nd = att->n * att->d;
	uint64_t inputs = att->g > 0 ? 3 * nd : nd;
	/* outputs: A (n x d) with normalisation, N (n x d) without */
	uint64_t outputs = nd;

	out->name = "trivial";
	snprintf(out->formula, sizeof(out->formula), "%s",
		 att->g > 0 ? "3nd loads (Q, K, V) + nd saves (outputs)"
			    : "nd loads (V; g = 0 reads no Q, K) + nd saves (outputs)");
	out->value = (double)(inputs + outputs);
}

const char *ps_classify_case(const struct ps_attention *att, uint64_t M,
			     char *why, size_t len)
{
	uint64_t dr, quarter = M / 4, w_lo = att->g > 0 ? att->g : 1;

	if (!ps_mul_u64(att->d, att->r, &dr) && dr <= quarter) {
		snprintf(why, len, "d r = %llu <= M/4 = %llu",
			 (unsigned long long)dr, (unsigned long long)quarter);
		return "I";
	}
	/* w tau(w) grows with w: the smallest admissible w decides */
	if (w_lo <= att->d) {
		uint64_t tau, wt;

		if (!ps_tau(w_lo, att->g, &tau) && !ps_mul_u64(w_lo, tau, &wt) &&
		    wt <= quarter) {
			uint64_t w = w_lo;

			while (w + 1 <= att->d && !ps_tau(w + 1, att->g, &tau) &&
			       !ps_mul_u64(w + 1, tau, &wt) && wt <= quarter)
				w++;
			snprintf(why, len,
				 "d r = %llu > M/4 = %llu, and w = %llu..%llu has w tau(w) <= M/4",
				 (unsigned long long)dr, (unsigned long long)quarter,
				 (unsigned long long)w_lo, (unsigned long long)w);
			return "II";
		}
	}
	if (M / 4 >= att->g * att->g) {
		snprintf(why, len,
			 "no w >= g = %llu has w tau(w) <= M/4 = %llu, and M >= 4 g^2 = %llu",
			 (unsigned long long)att->g, (unsigned long long)quarter,
			 (unsigned long long)(4 * att->g * att->g));
		return "III";
	}
	snprintf(why, len, "no w >= g = %llu has w tau(w) <= M/4, and M < 4 g^2 = %llu",
		 (unsigned long long)att->g,
		 (unsigned long long)(4 * att->g * att->g));
	return "IV";
}
