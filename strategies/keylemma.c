/*
 * keylemma: the group tiling of Key Lemma 3.2 (appendix A.1), Case II.
 *
 * Choose w with g <= w <= d and w tau(w) <= M/4. The d features are cut
 * into groups of w/g (the last group smaller when the division is not
 * exact); each aggregation tile is a g-subset of the groups (all groups
 * when there are fewer than g), in lexicographic order, and generates the
 * monomials whose support its groups hold, each monomial going to the
 * first tile that can generate it. Output tiles are M/(4w) rows by w
 * columns: an aggregation step loads the tile's w columns of Q for those
 * rows (at most M/4 values) and its tau(w) x w tile of H (at most M/4, as
 * w tau(w) <= M/4), while the output tile (M/4) stays. H = U2^T [V 1] uses
 * the same tiling transposed (end of A.1): H tiles of a tile's monomials
 * by w columns, aggregated M/(4w) rows of K and V at a time.
 *
 * The plan takes the valid w with the least predicted I/O (or the one
 * --w forces); when the fused mac's two slots and the kept normaliser
 * column do not fit beside the three M/4 tiles, the tile height shrinks
 * until they do.
 *
 * --sizes tuned keeps the group tiling and frees its sizes: every w from
 * g to d (w tau(w) <= M/4 no longer bounds it), each with its H and N
 * tiles' widths and rows chosen by the cost model (ps_tiling_tune); the
 * lemma's bound is then not claimed.
 */
#include <stdio.h>
#include <string.h>

#include "pebblesim/strategy.h"
#include "tiling.h"

static uint64_t w_lowest(const struct ps_attention *att)
{
	return att->g > 0 ? att->g : 1;
}

/* 0 when w is admissible for the lemma (tuned: whatever its tau(w)), else
 * PS_EINPUT with why. */
static int check_w(const struct ps_attention *att, uint64_t M, uint64_t w,
		   bool tuned, struct ps_error *err)
{
	uint64_t tau = 0, wt = UINT64_MAX;

	if (w < w_lowest(att) || w > att->d)
		return ps_error_set(err, PS_EINPUT,
				    "w = %llu is not valid for keylemma: it needs %llu <= w <= d = %llu",
				    (unsigned long long)w,
				    (unsigned long long)w_lowest(att),
				    (unsigned long long)att->d);
	if (tuned)
		return PS_OK;
	if (ps_tau(w, att->g, &tau) || ps_mul_u64(w, tau, &wt) || wt > M / 4)
		return ps_error_set(err, PS_EINPUT,
				    "w = %llu is not valid for keylemma: w tau(w) = %llu > M/4 = %llu",
				    (unsigned long long)w, (unsigned long long)wt,
				    (unsigned long long)(M / 4));
	return PS_OK;
}

/* the features per group: w/g */
static uint64_t group_size(const struct ps_attention *att, uint64_t w)
{
	return att->g > 0 ? w / att->g : w;
}

static void set_height(struct ps_tiling *t, const struct ps_attention *att,
		       uint64_t h)
{
	t->h_rows = ps_min_u64(h, att->n);
	t->n_height = ps_min_u64(h, att->n);
}

/* The lemma's tiling for w, fitted to M; *tiles gets C(G, k). */
static int w_tiling(const struct ps_attention *att, uint64_t M, uint64_t w,
		    struct ps_tiling *t, uint64_t *tiles, struct ps_error *err)
{
	uint64_t group = group_size(att, w);
	uint64_t h = ps_max_u64(M / (4 * w), 1);
	int rc = ps_tiling_groups(t, att, group, tiles, err);

	if (rc)
		return rc;
	t->h_width = ps_min_u64(w, att->nb);
	t->n_width = ps_min_u64(w, att->nb);
	set_height(t, att, h);
	while (ps_tiling_peak(t, att) > M && h > 1)
		set_height(t, att, --h);
	return PS_OK;
}

static uint64_t keylemma_min_memory(const struct ps_attention *att)
{
	uint64_t w = w_lowest(att), tau, tiles, peak;
	struct ps_tiling t;

	if (w > att->d || ps_tau(w, att->g, &tau))
		return UINT64_MAX;
	if (w_tiling(att, 1, w, &t, &tiles, NULL))
		return UINT64_MAX;
	peak = ps_tiling_peak(&t, att);
	ps_tiling_free(&t);
	return ps_max_u64(4 * w * tau, peak);
}

/* The w to run (forced or cheapest) and its tiling, fitted to M, or with
 * --sizes tuned (*tuned set) its sizes tuned. */
static int choose(const struct ps_problem *pb, struct ps_tiling *best,
		  uint64_t *best_w, uint64_t *best_tiles, bool *tuned,
		  struct ps_plan *plan, struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	uint64_t lo = pb->w ? pb->w : w_lowest(att), hi;
	struct ps_cheapest c;
	int rc;

	if ((rc = ps_tiling_sizes(pb, "keylemma", tuned, err)) ||
	    (pb->w && (rc = check_w(att, pb->M, pb->w, *tuned, err))))
		return rc;
	hi = pb->w ? pb->w : *tuned ? att->d : ps_keylemma_w_max(att, pb->M);
	if (!hi)
		return ps_error_set(err, PS_EINPUT,
				    "keylemma needs some w with %llu <= w <= d and w tau(w) <= M/4: M >= %llu",
				    (unsigned long long)w_lowest(att),
				    (unsigned long long)keylemma_min_memory(att));
	ps_cheapest_init(&c);
	for (uint64_t w = lo; w <= hi; w++) {
		struct ps_tiling t;
		uint64_t tiles;

		/* tuned, the tiling depends on w through its groups alone */
		if (*tuned && w > lo && group_size(att, w) == group_size(att, w - 1))
			continue;
		if ((rc = w_tiling(att, pb->M, w, &t, &tiles, err))) {
			if (c.found)
				ps_tiling_free(&c.best);
			return rc;
		}
		if (*tuned)
			ps_tiling_tune(&t, att, pb->M, 0);
		if (ps_cheapest_offer(&c, &t, att, pb->M)) {
			*best_w = w;
			*best_tiles = tiles;
		}
	}
	if (!c.found)
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for keylemma: it needs M >= %llu",
				    (unsigned long long)pb->M,
				    (unsigned long long)keylemma_min_memory(att));
	*best = c.best;
	*plan = c.plan;
	return PS_OK;
}

/*
 * The least a plan can predict: the least over the w it tries of
 * ps_tiling_io_floor for C(G, k) tiles, G = ceil(d / (w/g)) groups, k =
 * min(g, G). No tile of the partition is empty, none dropped: the k-subset
 * S of groups is the first tile of the monomial of one feature from each
 * group of S (degree k <= g), whose groups are S itself.
 */
uint64_t ps_keylemma_io_floor(const struct ps_problem *pb)
{
	const struct ps_attention *att = pb->att;
	bool tuned = pb->sizes && !strcmp(pb->sizes, "tuned");
	uint64_t lo = pb->w ? pb->w : w_lowest(att), least = UINT64_MAX;
	uint64_t hi = pb->w ? pb->w : tuned ? att->d : ps_keylemma_w_max(att, pb->M);

	for (uint64_t w = lo; w <= hi && w <= att->d; w++) {
		uint64_t size = group_size(att, w), groups, count;

		/* a w below g (refused by the plan) has no groups */
		if (size == 0)
			return 0;
		groups = ps_ceil_div(att->d, size);
		if (ps_binom(groups, ps_min_u64(att->g, groups), &count))
			return 0;
		least = ps_min_u64(least, ps_tiling_io_floor(att, count, false));
	}
	/* no w to try: the plan says why */
	return least == UINT64_MAX ? 0 : least;
}

static int keylemma_plan(const struct ps_problem *pb, struct ps_plan *plan,
			 struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct ps_tiling t;
	uint64_t w, tiles, group;
	bool tuned;
	int rc = choose(pb, &t, &w, &tiles, &tuned, plan, err);
	int used;

	if (rc)
		return rc;
	plan->state_bytes = ps_tiling_state_bytes(pb, false);
	group = group_size(att, w);
	used = snprintf(plan->summary, sizeof(plan->summary),
			"w = %llu: %llu groups of size %llu, %llu aggregation tiles (%llu-subsets of groups); ",
			(unsigned long long)w, (unsigned long long)ps_ceil_div(att->d, group),
			(unsigned long long)group, (unsigned long long)tiles,
			(unsigned long long)ps_min_u64(att->g, ps_ceil_div(att->d, group)));
	used = ps_min_u64((uint64_t)used, sizeof(plan->summary) - 1);
	if (tuned)
		snprintf(plan->summary + used, sizeof(plan->summary) - (size_t)used,
			 "tuned sizes: H tiles %llu wide over %llu rows, output tiles %llu x %llu",
			 (unsigned long long)t.h_width, (unsigned long long)t.h_rows,
			 (unsigned long long)t.n_height, (unsigned long long)t.n_width);
	else
		snprintf(plan->summary + used, sizeof(plan->summary) - (size_t)used,
			 "output tiles %llu x %llu",
			 (unsigned long long)t.n_height, (unsigned long long)t.n_width);
	plan->param_name = "w";
	plan->param = w;
	if (tuned) {
		ps_plan_tuned(plan);
	} else {
		ps_bound_keylemma(att, w, t.n_height, tiles, &plan->upper);
	}
	ps_tiling_free(&t);
	return PS_OK;
}

static int keylemma_run(const struct ps_problem *pb, struct ps_sink *sink,
			struct ps_error *err)
{
	struct ps_tiling t;
	struct ps_plan plan;
	uint64_t w, tiles;
	bool tuned;
	int rc = choose(pb, &t, &w, &tiles, &tuned, &plan, err);

	if (rc)
		return rc;
	rc = ps_tiling_run(&t, pb->att, sink, err);
	ps_tiling_free(&t);
	return rc;
}

const struct ps_strategy ps_strategy_keylemma = {
	.version = PS_STRATEGY_VERSION,
	.name = "keylemma",
	.section = "Key Lemma 3.2, appendix A.1 (Case II)",
	.summary = "group tiling: g-subsets of feature groups generate disjoint monomials; output tiles M/(4w) x w",
	.min_memory = keylemma_min_memory,
	.plan = keylemma_plan,
	.run = keylemma_run,
	.takes = PS_TAKES_W | PS_TAKES_SIZES,
};
