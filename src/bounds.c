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
#include <string.h>

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

/* Approximate decoding's trivial bound (docs/BOUNDS.md, "Approximate
 * decoding"): the inputs A[P-1] (N[P-1]) and H[P-1] loaded, the outputs
 * A[t] (N[t]) for t >= P and H[n-1] saved, once each. */
static void trivial_decode(const struct ps_attention *att, struct ps_bound *out)
{
	const uint64_t t = att->n - att->decode, state = att->r * att->nb;

	out->name = "trivial";
	snprintf(out->formula, sizeof(out->formula),
		 "d + r|B| loads (the last output, the state) + (n - P) d + r|B| saves (the outputs, the last state)");
	out->value = (double)(att->d + state + t * att->d + state);
}

void ps_bound_decode_state(const struct ps_attention *att, uint64_t M, struct ps_bound *out)
{
	const uint64_t t = att->n - att->decode, d = att->d, state = att->r * att->nb;
	/* the cells whose next value needs the token's q, k or v: all but
	 * H[., 0, d], which adds the constant U2[t,0] alone */
	const uint64_t s = att->r * d + (att->normalize ? att->r - 1 : 0);
	const uint64_t room = M > d + 1 ? M - d - 1 : 0;
	const uint64_t crossing = s > room ? s - room : 0;

	out->name = "state crossing (decode)";
	snprintf(out->formula, sizeof(out->formula),
		 "d + r|B| + (n - P - 1) max(0, s - (M - d - 1)) loads, s = %llu cells needing each token, + (n - P) d + r|B| saves",
		 (unsigned long long)s);
	out->value = (double)(d + state) + (double)(t - 1) * (double)crossing +
		     (double)(t * d + state);
}

void ps_bound_trivial(const struct ps_attention *att, struct ps_bound *out)
{
	uint64_t nd = att->n * att->d;

	if (att->decode && !att->exact) {
		trivial_decode(att, out);
		return;
	}
	bool reads_qk = att->g > 0 || att->exact;
	uint64_t inputs = reads_qk ? 3 * nd : nd;
	/* outputs: A (n x d) with normalisation, N (n x d) without */
	uint64_t outputs = nd;

	out->name = "trivial";
	snprintf(out->formula, sizeof(out->formula), "%s",
		 reads_qk ? "3nd loads (Q, K, V) + nd saves (outputs)"
			    : "nd loads (V; g = 0 reads no Q, K) + nd saves (outputs)");
	out->value = (double)(inputs + outputs);
}

void ps_bound_exact_lower(const struct ps_attention *att, uint64_t M,
			  struct ps_bound *out)
{
	/* segments of M I/Os carry at most W = M^2/d + 3M(d - 1) macs of the
	 * chosen S values (docs/BOUNDS.md), and all n^2 d must happen:
	 * segments >= n^2 d / W = n^2 d^2 / (M (M + 3d(d - 1))); causal, the
	 * n (n + 1) / 2 pairs j <= i alone (the same proof, fewer pairs) */
	const uint64_t n = att->n, d = att->d;
	uint64_t num, den, nn, dd, three_d, inner, segments, value;
	bool pairs_fit;

	out->name = "S segments (exact)";
	if (att->causal)
		snprintf(out->formula, sizeof(out->formula),
			 "M (ceil(P) - 1), P = n(n+1)/2 d^2 / (M (M + 3d(d - 1))): a segment of M I/Os holds at most M^2/d + 3M(d - 1) of the n(n+1)/2 d macs into S (causal: the pairs j <= i)");
	else
		snprintf(out->formula, sizeof(out->formula),
			 "M (ceil(P) - 1), P = n^2 d^2 / (M (M + 3d(d - 1))): a segment of M I/Os holds at most M^2/d + 3M(d - 1) of the n^2 d macs into S");
	out->value = 0;
	if (M == 0 || d == 0)
		return;
	/* the pairs: n^2, or causal n (n + 1) / 2 (n or n + 1 is even) */
	pairs_fit = !ps_mul_u64(n, att->causal ? n + 1 : n, &nn);
	if (pairs_fit && att->causal)
		nn /= 2;
	if (pairs_fit && !ps_mul_u64(d, d, &dd) && !ps_mul_u64(nn, dd, &num) &&
	    !ps_mul_u64(3, d, &three_d) && !ps_mul_u64(three_d, d ? d - 1 : 0, &inner) &&
	    inner <= UINT64_MAX - M &&
	    !ps_mul_u64(M, M + inner, &den)) {
		segments = ps_ceil_div(num, den);
	} else {
		/* beyond 64 bits: rounded down a little, never up; P < 2^62,
		 * since PS_MAX_NODES keeps n^2 d below it */
		double pairs = att->causal ? (double)n * ((double)n + 1) / 2 : (double)n * (double)n;
		double p = pairs * (double)d * (double)d /
			   ((double)M * ((double)M + 3.0 * (double)d * (double)(d - 1)));

		segments = (uint64_t)ceil(p * (1.0 - 1e-9));
	}
	/* in integers, converted rounding down (the low bits of a value past
	 * 2^53 dropped, which leaves it exact), so never above the proof's */
	if (segments > 1 && !ps_mul_u64(segments - 1, M, &value))
		out->value = value >> 53 ? (double)(value & ~UINT64_C(0x7ff)) : (double)value;
	else if (segments > 1)
		out->value = nextafter((double)(segments - 1) * (double)M, 0.0);
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

/*
 * The hypothesis every partition bound needs on the whole DAG (A.2's last
 * paragraph, made exact in docs/BOUNDS.md): a class's dominator set, of at
 * most 2M nodes, can cut H off only through H, P2 or V nodes, and a whole
 * column of V (n nodes) cuts off r nodes of H. With n >= r that is no
 * cheaper than putting the H nodes in the set; with n > 2M it cannot
 * happen. Otherwise the proofs' "at most 2M nodes of H" fails.
 */
static bool h_not_cut_off(const struct ps_attention *att, uint64_t M,
			  char *why, size_t len)
{
	/* n > 2M, without overflow: n - 1 >= 2M */
	if (att->n >= att->r || (att->n - 1) / 2 >= M)
		return true;
	snprintf(why, len,
		 "needs n >= r = %llu or n > 2M = %llu (else a class may cut H off through V), here n = %llu",
		 (unsigned long long)att->r, (unsigned long long)(2 * M),
		 (unsigned long long)att->n);
	return false;
}

/* g = 0: no monomial reads Q, U1 is constant and the partition arguments
 * have nothing to count. */
static bool has_degree(const struct ps_attention *att, char *why, size_t len)
{
	if (att->g > 0)
		return true;
	snprintf(why, len, "needs g >= 1, here g = 0");
	return false;
}

bool ps_bound_keylemma_lower(const struct ps_attention *att, uint64_t M,
			     struct ps_bound *out, char *why, size_t len)
{
	double m = (double)M, w, per_class;
	uint64_t w_max, tau, wt;

	if (!has_degree(att, why, len))
		return false;
	/* A.2 needs only w tau(w) <= M/4, not w >= g: the largest w <= d */
	w_max = 0;
	for (uint64_t x = 1; x <= att->d; x++) {
		if (ps_tau(x, att->g, &tau) || ps_mul_u64(x, tau, &wt) || wt > M / 4)
			break;
		w_max = x;
	}
	if (!w_max) {
		snprintf(why, len,
			 "needs some w >= 1 with w tau(w) <= M/4 = %llu; w = 1 has tau(1) = g + 1 = %llu",
			 (unsigned long long)(M / 4), (unsigned long long)(att->g + 1));
		return false;
	}
	if (!h_not_cut_off(att, M, why, len))
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

/*
 * B.3 and C with an explicit threshold t <= min(g, d) on the support of the
 * columns counted; the best t. C differs only in the term for the rows
 * with fewer than t dominators: 6 M sqrt M instead of 2 M (t - 1).
 */
static bool threshold_lower(const struct ps_attention *att, uint64_t M,
			    bool sqrt_split, struct ps_bound *out, char *why,
			    size_t len)
{
	const double m = (double)M, root = sqrt(m);
	double best = -1;
	uint64_t best_t = 0;

	if (!has_degree(att, why, len) || !h_not_cut_off(att, M, why, len))
		return false;
	for (uint64_t t = 1; t <= att->g && t <= att->d; t++) {
		/* columns of U1 with at least t distinct features */
		uint64_t columns = 0;
		double rows_b, value;

		for (uint64_t k = 0; k < att->r; k++)
			columns += att->mono.support_size[k] >= t;
		rows_b = sqrt_split ? 6 * m * root : (double)(t - 1) * 2 * m;
		value = partition_bound(M, (double)att->n * (double)columns *
						   (double)att->d,
					4 * m + 4 * m * m / (double)t + rows_b);
		if (value > best) {
			best = value;
			best_t = t;
		}
	}
	out->name = ps_threshold_bound_name(att, sqrt_split);
	out->value = best;
	snprintf(out->formula, sizeof(out->formula),
		 sqrt_split ? "M(ceil(P) - 1), P = n r_t d / (4M + 4M^2/t + 6M sqrt M), r_t columns of support >= t = %llu"
			    : "M(ceil(P) - 1), P = n r_t d / (4M + 4M^2/t + 2M(t-1)), r_t columns of support >= t = %llu",
		 (unsigned long long)best_t);
	return true;
}

/*
 * Theorems 1.3 and 1.4 state their lower bounds for d >= 5g (Lemma B.1
 * makes r_{g/2} a constant fraction of r there). The bounds computed here
 * follow the proofs of B.3 and C with a threshold t and r_t counted
 * exactly, which needs no such premise; below d = 5g they are not the
 * theorems' bounds and are named after the proof they follow.
 */
const char *ps_threshold_bound_name(const struct ps_attention *att, bool sqrt_split)
{
	if (att->d >= 5 * att->g)
		return sqrt_split ? "Theorem 1.4 (C)" : "Theorem 1.3 (B.3)";
	return sqrt_split ? "threshold after C" : "threshold after B.3";
}

bool ps_bound_b3_lower(const struct ps_attention *att, uint64_t M,
		       struct ps_bound *out, char *why, size_t len)
{
	return threshold_lower(att, M, false, out, why, len);
}

bool ps_bound_c_lower(const struct ps_attention *att, uint64_t M,
		      struct ps_bound *out, char *why, size_t len)
{
	return threshold_lower(att, M, true, out, why, len);
}

static void lower_add(struct ps_lower_bounds *lb, const struct ps_bound *b)
{
	lb->applied[lb->applied_count++] = *b;
	if (b->value > lb->best.value)
		lb->best = *b;
}

/*
 * Exact decoding (MODEL.md section 8, docs/BOUNDS.md "Exact decoding"):
 * the trivial bound of the decode DAG, and the steps bound: token t's
 * query needs token t-1's output, so the steps follow each other, and
 * each needs all 2Pd entries of the prompt's cache red at some time, at
 * most M of them red when it begins. The segment bound's proof counts Q
 * and K as inputs, which the generated rows' are not: not applied.
 */
static void decode_exact_lower(const struct ps_attention *att, uint64_t M,
			       struct ps_lower_bounds *out)
{
	const uint64_t d = att->d, prompt = att->decode, tokens = att->n - prompt;
	const double cache = 2.0 * (double)prompt * (double)d, saves = 3.0 * (double)tokens * (double)d;
	struct ps_bound steps = { .name = "decode steps" };
	struct ps_skipped_bound *skip;

	out->best.name = "trivial (decode)";
	snprintf(out->best.formula, sizeof(out->best.formula),
		 "2Pd + d loads (the cache, A[P-1]) + 3Td saves (A, K, V of the T generated rows)");
	out->best.value = cache + (double)d + saves;
	out->applied[out->applied_count++] = out->best;
	steps.value = (double)tokens * (cache > (double)M ? cache - (double)M : 0.0) + (double)d + saves;
	snprintf(steps.formula, sizeof(steps.formula),
		 "T max(0, 2Pd - M) + d loads (each step reads the whole cache, at most M of it red when it begins) + 3Td saves");
	lower_add(out, &steps);
	skip = &out->skipped[out->skipped_count++];
	skip->name = "S segments (exact)";
	snprintf(skip->why, sizeof(skip->why),
		 "its proof counts Q and K as inputs, loaded to be red; the generated rows' are computed");
}

void ps_bounds_lower(const struct ps_attention *att, uint64_t M,
		     struct ps_lower_bounds *out)
{
	const struct {
		const char *name;
		bool (*fn)(const struct ps_attention *, uint64_t,
			   struct ps_bound *, char *, size_t);
	} partition[] = {
		{ "Key Lemma 3.2 (A.2)", ps_bound_keylemma_lower },
		{ ps_threshold_bound_name(att, false), ps_bound_b3_lower },
		{ ps_threshold_bound_name(att, true), ps_bound_c_lower },
	};
	struct ps_bound b;

	memset(out, 0, sizeof(*out));
	if (att->decode && att->exact) {
		decode_exact_lower(att, M, out);
		return;
	}
	ps_bound_trivial(att, &out->best);
	out->applied[out->applied_count++] = out->best;
	if (att->exact) {
		/* docs/EXACT.md: Saha and Ye's bound has no explicit constants */
		struct ps_skipped_bound *ref = &out->skipped[out->skipped_count++];

		ps_bound_exact_lower(att, M, &b);
		lower_add(out, &b);
		ref->name = "Saha and Ye";
		if (att->causal)
			snprintf(ref->why, sizeof(ref->why),
				 "asymptotic, no explicit constants, and proved for every query seeing every key (MODEL.md section 5), not for the causal DAG");
		else if ((double)M < (double)att->d * (double)att->d)
			/* the small-memory regime: their Theta(n^2 d / sqrt M) */
			snprintf(ref->why, sizeof(ref->why),
				 "asymptotic, no explicit constants: for M < d^2 their small-memory order Theta(n^2 d / sqrt M) = Theta(%.4g) applies; a reference, never a verdict",
				 (double)att->n * (double)att->n * (double)att->d / sqrt((double)M));
		else
			snprintf(ref->why, sizeof(ref->why),
				 "asymptotic, no explicit constants: Omega(n^2 d^2 / M) = Omega(%.4g) for M >= d^2; a reference, never a verdict",
				 (double)att->n * (double)att->n * (double)att->d *
					 (double)att->d / (double)M);
		return;
	}
	if (att->decode) {
		ps_bound_decode_state(att, M, &b);
		lower_add(out, &b);
	}
	for (size_t k = 0; k < sizeof(partition) / sizeof(partition[0]); k++) {
		struct ps_skipped_bound *skip = &out->skipped[out->skipped_count];

		/* docs/BOUNDS.md, "Causal attention": their proofs count the
		 * products into the one state H[m,b] of n in-edges, which the
		 * causal DAG does not have */
		if (att->causal) {
			skip->name = partition[k].name;
			snprintf(skip->why, sizeof(skip->why),
				 "not for the causal DAG: its proof counts the macs into H[m,b], one sum of n in-edges each, and the causal state H[j,m,b] has a row of sums of two in-edges each");
			out->skipped_count++;
			continue;
		}
		if (partition[k].fn(att, M, &b, skip->why, sizeof(skip->why))) {
			lower_add(out, &b);
		} else {
			skip->name = partition[k].name;
			out->skipped_count++;
		}
	}
}

void ps_bounds_lower_explicit(const struct ps_explicit *x,
			      struct ps_lower_bounds *out)
{
	memset(out, 0, sizeof(*out));
	ps_bound_trivial_explicit(x, &out->best);
	out->applied[out->applied_count++] = out->best;
}

bool ps_subtile_premise(const struct ps_attention *att, uint64_t M,
			char *why, size_t len)
{
	uint64_t dg;
	double limit = 4.0 * (double)att->r * (double)att->g / (double)M;
	bool holds;

	/* C(d, g) = 0 when d < g; an overflow is far beyond any limit */
	if (ps_binom(att->d, att->g, &dg))
		dg = UINT64_MAX;
	holds = att->g > 0 && (double)dg <= limit;
	if (why)
		snprintf(why, len, "C(d,g) = %llu %s 4rg/M = %.1f",
			 (unsigned long long)dg, holds ? "<=" : ">", limit);
	return holds;
}

double ps_theorem12_w0(const struct ps_attention *att, uint64_t M)
{
	return (double)att->g * pow((double)M, 1.0 / (double)(att->g + 1)) /
	       (4.0 * exp(1.0));
}

/* Case II: the Key Lemma's range of w, and whether Theorem 1.2's w0 is in it. */
static void case2_reason(const struct ps_attention *att, uint64_t M,
			 uint64_t w_lo, uint64_t w_hi, char *why, size_t len)
{
	double w0 = ps_theorem12_w0(att, M);
	int used = snprintf(why, len,
			    "d r = %llu > M/4 = %llu; Key Lemma 3.2 holds for w = %llu..%llu (w tau(w) <= M/4); ",
			    (unsigned long long)(att->d * att->r),
			    (unsigned long long)(M / 4), (unsigned long long)w_lo,
			    (unsigned long long)w_hi);

	if (used < 0 || (size_t)used >= len)
		return;
	if (att->g == 0)
		snprintf(why + used, len - (size_t)used,
			 "Theorem 1.2 needs g >= 1, so only the Key Lemma applies");
	else if (floor(w0) < (double)att->g || floor(w0) > (double)w_hi)
		snprintf(why + used, len - (size_t)used,
			 "Theorem 1.2's w0 = g M^(1/(g+1))/(4e) = %.2f is %s, so only the Key Lemma applies",
			 w0, floor(w0) < (double)att->g ? "below g" : "beyond that range");
	else if ((double)M >= (double)att->d * (double)att->r)
		/* the theorem assumes M = o(d r): at least M below d r */
		snprintf(why + used, len - (size_t)used,
			 "Theorem 1.2's w0 = g M^(1/(g+1))/(4e) = %.2f is in it, but the theorem assumes M = o(d r) and here M = %llu >= d r = %llu, so only the Key Lemma applies",
			 w0, (unsigned long long)M,
			 (unsigned long long)(att->d * att->r));
	else
		snprintf(why + used, len - (size_t)used,
			 "Theorem 1.2's hypotheses as pebblesim checks them hold: M = %llu < d r, and w0 = g M^(1/(g+1))/(4e) = %.2f is in that range (so M >= (4e)^(g+1), its g = o(log M))",
			 (unsigned long long)M, w0);
}

/* Theorems 1.2 to 1.4 assume M = o(d r); where M >= d r (Case II, III or
 * IV allow M up to 4 d r) a case's reason says that this fails. */
static const char *below_dr(const struct ps_attention *att, uint64_t M)
{
	return (double)M >= (double)att->d * (double)att->r
		       ? "; the theorem assumes M = o(d r), and here M >= d r" : "";
}

const char *ps_classify_case(const struct ps_attention *att, uint64_t M,
			     char *why, size_t len)
{
	uint64_t dr, quarter = M / 4, w_lo = att->g > 0 ? att->g : 1, w;
	char premise[96];

	if (!ps_mul_u64(att->d, att->r, &dr) && dr <= quarter) {
		snprintf(why, len, "d r = %llu <= M/4 = %llu: Theorem 1.1 applies (a tile of H with all r monomials fits M/4)",
			 (unsigned long long)dr, (unsigned long long)quarter);
		return "I";
	}
	w = ps_keylemma_w_max(att, M);
	if (w) {
		case2_reason(att, M, w_lo, w, why, len);
		return "II";
	}
	if (quarter >= att->g * att->g) {
		bool sub = ps_subtile_premise(att, M, premise, sizeof(premise));

		snprintf(why, len,
			 "no w >= g = %llu has w tau(w) <= M/4 = %llu, and M >= 4 g^2 = %llu: Theorem 1.3 (Lemma 3.1's tiles)%s%s; Lemma 3.3's premise %s %s",
			 (unsigned long long)att->g, (unsigned long long)quarter,
			 (unsigned long long)(4 * att->g * att->g),
			 att->d >= 5 * att->g ? "" : "; its lower bound as stated needs d >= 5g (pebblesim's threshold after B.3 does not, and is named so)",
			 below_dr(att, M), premise, sub ? "holds" : "does not hold");
		return "III";
	}
	snprintf(why, len, "no w >= g = %llu has w tau(w) <= M/4, and M < 4 g^2 = %llu: Theorem 1.4 (Lemma 3.1's tiles, or section 3.6's stored U1)%s%s",
		 (unsigned long long)att->g,
		 (unsigned long long)(4 * att->g * att->g),
		 att->d >= 5 * att->g ? "" : "; its lower bound as stated needs d >= 5g (pebblesim's threshold after C does not, and is named so)",
		 below_dr(att, M));
	return "IV";
}
