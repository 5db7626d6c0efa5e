/*
 * subtile: the tiling of Lemma 3.3 (appendix B.2), Case III.
 *
 * The Key Lemma's tiling with w = g: groups of one feature, one
 * aggregation tile per g-subset of the d features (each monomial to the
 * first that can generate it), output tiles of M/(4g) rows by g columns.
 * In Case III a tile of U1 may be wider than it is tall (tau(g) > M/(4g)),
 * so its tile of H would not fit: it is cut into sub-tiles of at most
 * M/(4g) monomials. In N = U1 H the Q values and the output tile stay while
 * the sub-tiles of H are loaded in turn; in H = U2^T [V 1] the tiles of K
 * and V stay while the sub-tiles of H are loaded (after the first rows),
 * aggregated and saved in turn ("in H, we save different sub-tiles each
 * time"). When the fused mac's slots do not fit beside the three M/4
 * tiles, the height shrinks until they do.
 *
 * --sizes tuned keeps the tiles and frees the sizes: the sub-tile height
 * (1 or a tile's height: between two, the same tiles are cut), the H and
 * N tiles' widths and rows, all by the cost model (ps_tiling_tune); the
 * lemma's bound is then not claimed.
 */
#include <stdio.h>

#include "pebblesim/strategy.h"
#include "tiling.h"

static void set_height(struct ps_tiling *t, const struct ps_attention *att,
		       uint64_t h)
{
	t->h_rows = ps_min_u64(h, att->n);
	t->n_height = ps_min_u64(h, att->n);
	t->chunk = h;
}

/* One tile per g-subset of the features. */
static int subtile_groups(const struct ps_attention *att, struct ps_tiling *t,
			  struct ps_error *err)
{
	uint64_t tiles;

	if (att->g == 0)
		return ps_error_set(err, PS_EINPUT,
				    "subtile needs g >= 1: with g = 0 there is one monomial and no tile to cut");
	return ps_tiling_groups(t, att, 1, &tiles, err);
}

static int subtile_tiling(const struct ps_attention *att, uint64_t M,
			  struct ps_tiling *t, struct ps_error *err)
{
	int rc = subtile_groups(att, t, err); /* refuses g = 0 first */
	uint64_t h;

	if (rc)
		return rc;
	h = ps_max_u64(M / (4 * att->g), 1);
	t->h_width = ps_min_u64(att->g, att->nb);
	t->n_width = ps_min_u64(att->g, att->nb);
	set_height(t, att, h);
	while (ps_tiling_peak(t, att) > M && h > 1)
		set_height(t, att, --h);
	return PS_OK;
}

/* --sizes tuned: the same tiles, the sizes by the cost model */
static int subtile_tuned(const struct ps_attention *att, uint64_t M,
			 struct ps_tiling *t, struct ps_error *err)
{
	int rc = subtile_groups(att, t, err);

	if (rc)
		return rc;
	ps_tiling_tune(t, att, M, PS_TUNE_CHUNK);
	return PS_OK;
}

static uint64_t subtile_min_memory(const struct ps_attention *att)
{
	return att->g ? ps_tiling_least_memory(att, subtile_tiling) : UINT64_MAX;
}

/* The least a plan can predict: its C(d, g) tiles (C(d, d) = 1 when g >
 * d), none of them empty (ps_keylemma_io_floor's argument, groups of one
 * feature), whatever the sub-tiles and sizes. */
uint64_t ps_subtile_io_floor(const struct ps_problem *pb)
{
	const struct ps_attention *att = pb->att;
	uint64_t count;

	if (att->g == 0 || ps_binom(att->d, ps_min_u64(att->g, att->d), &count))
		return 0;
	return ps_tiling_io_floor(att, count, false);
}

static int subtile_plan(const struct ps_problem *pb, struct ps_plan *plan,
			struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct ps_tiling t;
	uint64_t tiles = 0, split = 0;
	ps_tiling_build_fn build;
	int rc;

	if ((rc = ps_tiling_build_for(pb, "subtile", subtile_tiling, subtile_tuned, &build, err)) ||
	    (rc = ps_tiling_fitted(pb, "subtile", build, &t, err)))
		return rc;
	/* one tile per g-subset of the features (all of them when d < g) */
	ps_binom(att->d, ps_min_u64(att->g, att->d), &tiles);
	for (uint64_t k = 0; k < t.tile_count; k++)
		split += t.tiles[k].count > t.chunk;
	ps_tiling_plan(&t, att, plan);
	plan->state_bytes = ps_tiling_state_bytes(pb, false);
	if (build == subtile_tuned) {
		snprintf(plan->summary, sizeof(plan->summary),
			 "w = g = %llu: %llu aggregation tiles (g-subsets of features), %llu of them cut into sub-tiles of %llu; tuned sizes: H tiles %llu wide over %llu rows, output tiles %llu x %llu",
			 (unsigned long long)att->g, (unsigned long long)tiles,
			 (unsigned long long)split, (unsigned long long)t.chunk,
			 (unsigned long long)t.h_width, (unsigned long long)t.h_rows,
			 (unsigned long long)t.n_height, (unsigned long long)t.n_width);
		ps_plan_tuned(plan);
	} else {
		snprintf(plan->summary, sizeof(plan->summary),
			 "w = g = %llu: %llu aggregation tiles (g-subsets of features), %llu of them cut into sub-tiles of %llu; output tiles %llu x %llu",
			 (unsigned long long)att->g, (unsigned long long)tiles,
			 (unsigned long long)split, (unsigned long long)t.chunk,
			 (unsigned long long)t.n_height, (unsigned long long)t.n_width);
		ps_bound_subtile(att, t.chunk, tiles, &plan->upper);
	}
	ps_tiling_free(&t);
	return PS_OK;
}

static int subtile_run(const struct ps_problem *pb, struct ps_sink *sink,
		       struct ps_error *err)
{
	ps_tiling_build_fn build;
	int rc = ps_tiling_build_for(pb, "subtile", subtile_tiling, subtile_tuned, &build, err);

	return rc ? rc : ps_tiling_emit(pb, "subtile", build, sink, err);
}

const struct ps_strategy ps_strategy_subtile = {
	.version = PS_STRATEGY_VERSION,
	.name = "subtile",
	.section = "Lemma 3.3, appendix B.2 (Case III)",
	.summary = "the group tiling with w = g, tiles of U1 wider than tall cut into sub-tiles of M/(4g)",
	.min_memory = subtile_min_memory,
	.plan = subtile_plan,
	.run = subtile_run,
	.takes = PS_TAKES_SIZES,
};
