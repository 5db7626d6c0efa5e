/*
 * The bounds of docs/BOUNDS.md. Upper bounds count every tile of a
 * strategy's proof at its full size (the proof's own accounting, with the
 * tile sizes the strategy chose); lower bounds are the paper's partition
 * arguments with their constants made explicit.
 */
#include "pebblesim/bounds.h"

#include <math.h>
#include <stdio.h>

#include "pebblesim/explicit.h"
#include "pebblesim/monomial.h"
#include <stdlib.h>

static double cdiv(uint64_t a, uint64_t b)
{
	return (double)ps_ceil_div(a, b);
}

void ps_bound_generic(const struct ps_attention *att, uint64_t t,
		      uint64_t rows, uint64_t w, bool keep_q,
		      struct ps_bound *out)
{
	const double d = (double)att->d;
	/* features a block of t monomials reads, and V columns of a tile */
	double q = (double)ps_min_u64(att->d, att->g * t);
	double v = (double)ps_min_u64(w, att->d);
	double qa = att->g > 0 ? d : 0;
	double mb = cdiv(att->r, t), bb = cdiv(att->nb, w), ib = cdiv(att->n, rows);
	double T = (double)t, R = (double)rows, W = (double)w;
	double phase1 = mb * bb * cdiv(att->n, rows) * R * (q + v) + mb * bb * T * W;
	double phase2 = ib * bb * mb * (T * W + (keep_q ? 0 : R * q)) +
			(keep_q ? ib * R * qa : 0) + ib * bb * R * W;

	out->name = "Lemma 3.1 tiles";
	out->value = phase1 + phase2;
	snprintf(out->formula, sizeof(out->formula),
		 "steps x tiles: H %.0f steps x %llu(%.0f+%.0f) + %.0f tiles x %llux%llu; N %.0f steps x (%llux%llu%s) + %.0f tiles",
		 mb * bb * cdiv(att->n, rows), (unsigned long long)rows, q, v,
		 mb * bb, (unsigned long long)t, (unsigned long long)w,
		 ib * bb * mb, (unsigned long long)t, (unsigned long long)w,
		 keep_q ? " + Q strip per row block" : " + Q tile", ib * bb);
}

void ps_bound_case1(const struct ps_attention *att, uint64_t h, uint64_t tw,
		    struct ps_bound *out)
{
	const double d = (double)att->d, r = (double)att->r;
	double qa = att->g > 0 ? d : 0;
	double ib = cdiv(att->n, h), bb = cdiv(att->nb, tw);
	double H = (double)h, TW = (double)tw, v = (double)ps_min_u64(tw, att->d);
	/* phase 1: per column block, every row step loads K (h x d) and V;
	 * the H tile r x tw saved; phase 2: per row block Q once, then per
	 * column block H (r x tw) and the output tile */
	double phase1 = bb * (ib * H * (qa + v) + r * TW);
	double phase2 = ib * (H * qa + bb * (r * TW + H * TW));

	out->name = "Theorem 1.1 tiles";
	out->value = phase1 + phase2;
	snprintf(out->formula, sizeof(out->formula),
		 "ceil(|B|/tw)(ceil(n/h) h (d + min(tw,d)) + r tw) + ceil(n/h)(h d + ceil(|B|/tw)(r tw + h tw)), h = %llu, tw = %llu",
		 (unsigned long long)h, (unsigned long long)tw);
}

void ps_bound_keylemma(const struct ps_attention *att, uint64_t w,
		       uint64_t h, uint64_t tiles, struct ps_bound *out)
{
	uint64_t tau = 0;
	double ib = cdiv(att->n, h), bb = cdiv(att->nb, w), T = (double)tiles;
	double hw = (double)(h * w), tw;

	ps_tau(w, att->g, &tau);
	tw = (double)tau * (double)w;
	/* every aggregation step loads a Q tile (h x w) and an H tile (at most
	 * tau(w) x w); every output tile is saved once (A.1) */
	out->name = "Key Lemma 3.2 tiles";
	out->value = ib * bb * (T * (hw + tw) + hw) + T * bb * (ib * 2 * hw + tw);
	snprintf(out->formula, sizeof(out->formula),
		 "ceil(n/h)ceil(|B|/w)(T(hw + tau(w)w) + hw) + T ceil(|B|/w)(2 ceil(n/h) hw + tau(w)w), w = %llu, h = %llu, T = %llu",
		 (unsigned long long)w, (unsigned long long)h,
		 (unsigned long long)tiles);
}

void ps_bound_subtile(const struct ps_attention *att, uint64_t h,
		      uint64_t tiles, struct ps_bound *out)
{
	const uint64_t g = att->g;
	double ib = cdiv(att->n, h), bb = cdiv(att->nb, g), T = (double)tiles;
	double hg = (double)(h * g), sub = T + cdiv(att->r, h);

	/* B.2: at most T + ceil(r/h) sub-tiles, each an H tile of h x g; phase
	 * 2 loads a Q tile per tile and an H sub-tile per sub-tile; phase 1
	 * loads K and V per row step of a tile, and loads and saves each of
	 * its sub-tiles per row step */
	out->name = "Lemma 3.3 tiles";
	out->value = ib * bb * hg * (T + sub + 1) + bb * ib * 2 * hg * (T + sub);
	snprintf(out->formula, sizeof(out->formula),
		 "ceil(n/h)ceil(|B|/g) hg (2T + ceil(r/h) + 1) + ceil(|B|/g)ceil(n/h) 2hg (2T + ceil(r/h)), h = %llu, T = %llu",
		 (unsigned long long)h, (unsigned long long)tiles);
}

void ps_bound_matmul(const struct ps_attention *att, uint64_t s,
		     struct ps_bound *out)
{
	const double n = (double)att->n, d = (double)att->d, r = (double)att->r;
	double qa = att->g > 0 ? d : 0, ss = (double)(s * s);
	double mb = cdiv(att->r, s), bb = cdiv(att->nb, s), ib = cdiv(att->n, s);

	/* C: U1 and U2 written once (their inputs read once); then standard
	 * square-tile products, each step loading two s x s tiles, each output
	 * tile saved once */
	out->name = "Theorem 1.4 tiles";
	out->value = 2 * (n * qa + n * r) + mb * bb * (ib * 2 * ss + ss) +
		     ib * bb * (mb * 2 * ss + ss);
	snprintf(out->formula, sizeof(out->formula),
		 "2(nd + nr) + ceil(r/s)ceil(|B|/s)(2 ceil(n/s) s^2 + s^2) + ceil(n/s)ceil(|B|/s)(2 ceil(r/s) s^2 + s^2), s = %llu",
		 (unsigned long long)s);
}

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

void ps_bound_trivial_explicit(const struct ps_explicit *x,
			       struct ps_bound *out)
{
	uint8_t *needed = calloc(x->vertices + 1, 1);
	uint64_t *stack = malloc((x->vertices + 1) * sizeof(uint64_t));
	uint64_t loads = 0, saves = 0, top = 0;

	out->name = "trivial";
	snprintf(out->formula, sizeof(out->formula),
		 "inputs that reach an output, loaded once + outputs that are not inputs, saved once");
	out->value = 0;
	if (!needed || !stack) {
		free(needed);
		free(stack);
		return; /* 0 is still a lower bound */
	}
	/* walk back from every output that must be produced */
	for (uint64_t k = 0; k < x->dag.output_count; k++) {
		uint64_t v = x->outputs[k];

		if (x->role[v] == PS_ROLE_INPUT || needed[v])
			continue;
		saves++;
		needed[v] = 1;
		stack[top++] = v;
		while (top) {
			uint64_t u = stack[--top];

			for (uint64_t e = x->in_start[u]; e < x->in_start[u + 1]; e++)
				if (!needed[x->in_from[e]]) {
					needed[x->in_from[e]] = 1;
					stack[top++] = x->in_from[e];
				}
		}
	}
	for (uint64_t v = 0; v < x->vertices; v++)
		loads += needed[v] && x->role[v] == PS_ROLE_INPUT;
	out->value = (double)(loads + saves);
	free(needed);
	free(stack);
}

uint64_t ps_keylemma_w_max(const struct ps_attention *att, uint64_t M)
{
	uint64_t best = 0, tau, wt;

	for (uint64_t w = att->g > 0 ? att->g : 1; w <= att->d; w++) {
		if (ps_tau(w, att->g, &tau) || ps_mul_u64(w, tau, &wt) ||
		    wt > M / 4)
			break; /* w tau(w) grows with w */
		best = w;
	}
	return best;
}

/* Hong and Kung's Lemma A.1: I/O >= M (P - 1), P classes at least. */
static double partition_bound(uint64_t M, double internal, double per_class)
{
	double classes = ceil(internal / per_class);

	return classes > 1 ? (double)M * (classes - 1) : 0;
}

bool ps_bound_keylemma_lower(const struct ps_attention *att, uint64_t M,
			     struct ps_bound *out)
{
	double m = (double)M, w, per_class;
	uint64_t w_max, tau, wt;

	if (att->g == 0)
		return false;
	/* A.2 needs only w tau(w) <= M/4, not w >= g: the largest w <= d */
	w_max = 0;
	for (uint64_t x = 1; x <= att->d; x++) {
		if (ps_tau(x, att->g, &tau) || ps_mul_u64(x, tau, &wt) || wt > M / 4)
			break;
		w_max = x;
	}
	if (!w_max)
		return false;
	w = (double)w_max;
	per_class = 4 * m + 4 * m * m / w + m * m / (2 * w);
	out->name = "Key Lemma 3.2 (A.2)";
	out->value = partition_bound(M, (double)att->n * (double)att->r *
					     (double)att->d, per_class);
	snprintf(out->formula, sizeof(out->formula),
		 "M(ceil(P) - 1), P = n r d / (4M + 4M^2/w + M^2/(2w)), w = %llu",
		 (unsigned long long)w_max);
	return true;
}

bool ps_bound_partition_lower(const struct ps_attention *att, uint64_t M,
			      struct ps_bound *out)
{
	const double m = (double)M, root = sqrt(m);
	double best = -1;
	uint64_t best_t = 0;
	bool best_split = false;

	if (att->g == 0)
		return false;
	for (uint64_t t = 1; t <= att->g && t <= att->d; t++) {
		/* columns of U1 with at least t distinct features */
		uint64_t columns = 0;
		double rows_b, per_class, value;
		bool split;

		for (uint64_t k = 0; k < att->r; k++)
			columns += att->mono.support_size[k] >= t;
		/* rows with fewer than t dominators: t - 1 useful U1 nodes for
		 * each of the 2M sinks of a class (B.3), or C's split at sqrt M */
		rows_b = (double)(t - 1) * 2 * m;
		split = 6 * m * root < rows_b;
		if (split)
			rows_b = 6 * m * root;
		per_class = 4 * m + 4 * m * m / (double)t + rows_b;
		value = partition_bound(M, (double)att->n * (double)columns *
						   (double)att->d, per_class);
		if (value > best) {
			best = value;
			best_t = t;
			best_split = split;
		}
	}
	if (best < 0)
		return false;
	out->name = best_split ? "Theorem 1.4 (C)" : "Theorem 1.3 (B.3)";
	out->value = best;
	snprintf(out->formula, sizeof(out->formula),
		 best_split ? "M(ceil(P) - 1), P = n r_t d / (4M + 4M^2/t + 6M sqrt M), r_t columns of support >= t = %llu"
			    : "M(ceil(P) - 1), P = n r_t d / (4M + 4M^2/t + 2M(t-1)), r_t columns of support >= t = %llu",
		 (unsigned long long)best_t);
	return true;
}

void ps_bound_lower(const struct ps_attention *att, uint64_t M,
		    struct ps_bound *out)
{
	struct ps_bound b;

	ps_bound_trivial(att, out);
	if (ps_bound_keylemma_lower(att, M, &b) && b.value > out->value)
		*out = b;
	if (ps_bound_partition_lower(att, M, &b) && b.value > out->value)
		*out = b;
}

const char *ps_classify_case(const struct ps_attention *att, uint64_t M,
			     char *why, size_t len)
{
	uint64_t dr, quarter = M / 4, w_lo = att->g > 0 ? att->g : 1, w;

	if (!ps_mul_u64(att->d, att->r, &dr) && dr <= quarter) {
		snprintf(why, len, "d r = %llu <= M/4 = %llu",
			 (unsigned long long)dr, (unsigned long long)quarter);
		return "I";
	}
	w = ps_keylemma_w_max(att, M);
	if (w) {
		snprintf(why, len,
			 "d r = %llu > M/4 = %llu, and w = %llu..%llu has w tau(w) <= M/4",
			 (unsigned long long)dr, (unsigned long long)quarter,
			 (unsigned long long)w_lo, (unsigned long long)w);
		return "II";
	}
	if (quarter >= att->g * att->g) {
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
