/*
 * caseI: the strategy of Theorem 1.1 (section 3.3), Case I.
 *
 * When d r <= M/4 a tile of H with all r monomials fits: rows of Q are
 * loaded whole (M/(4d) rows, M/4 values) and all r entries of U1 are
 * generated per row; the output is cut into tiles of height M/(4d) and
 * width c0 d = M/(4r) (at most |B|), each computed in one step from the
 * r x (c0 d) tile of H. H = U2^T [V 1] is built the same way: tiles of H
 * of r x (c0 d), aggregated over M/(4d) rows of K and V at a time.
 * I/O O(n d). When the fused mac's slots do not fit beside the three M/4
 * tiles, the height shrinks, then the width.
 */
#include <stdio.h>

#include "pebblesim/strategy.h"
#include "tiling.h"

static void set_sizes(struct ps_tiling *t, const struct ps_attention *att,
		      uint64_t h, uint64_t tw)
{
	t->h_rows = ps_min_u64(h, att->n);
	t->n_height = ps_min_u64(h, att->n);
	t->h_width = tw;
	t->n_width = tw;
}

static int case1_tiling(const struct ps_attention *att, uint64_t M,
			struct ps_tiling *t, struct ps_error *err)
{
	uint64_t h = ps_max_u64(M / (4 * att->d), 1);
	uint64_t tw = ps_min_u64(ps_max_u64(M / (4 * att->r), 1), att->nb);
	int rc = ps_tiling_blocks(t, att, att->r, err);

	if (rc)
		return rc;
	t->keep_q = true;
	set_sizes(t, att, h, tw);
	while (ps_tiling_peak(t, att) > M && (h > 1 || tw > 1)) {
		if (h > 1)
			h--;
		else
			tw--;
		set_sizes(t, att, h, tw);
	}
	return PS_OK;
}

/* --sizes tuned: the same tile of all r monomials, its sizes by the cost
 * model */
static int case1_tuned(const struct ps_attention *att, uint64_t M,
		       struct ps_tiling *t, struct ps_error *err)
{
	int rc = ps_tiling_blocks(t, att, att->r, err);

	if (rc)
		return rc;
	t->keep_q = true;
	ps_tiling_tune(t, att, M, 0);
	return PS_OK;
}

static uint64_t case1_min_memory(const struct ps_attention *att)
{
	return ps_tiling_least_memory(att, case1_tiling);
}

static int case1_plan(const struct ps_problem *pb, struct ps_plan *plan,
		      struct ps_error *err)
{
	struct ps_tiling t;
	ps_tiling_build_fn build;
	int rc;

	if ((rc = ps_tiling_build_for(pb, "caseI", case1_tiling, case1_tuned, &build, err)) ||
	    (rc = ps_tiling_fitted(pb, "caseI", build, &t, err)))
		return rc;
	ps_tiling_plan(&t, pb->att, plan);
	plan->state_bytes = ps_tiling_state_bytes(pb, false);
	if (build == case1_tuned) {
		snprintf(plan->summary, sizeof(plan->summary),
			 "whole rows, tuned sizes: all r = %llu monomials per tile; H tiles r x %llu over %llu rows of K and V, output tiles %llu x %llu",
			 (unsigned long long)pb->att->r, (unsigned long long)t.h_width,
			 (unsigned long long)t.h_rows, (unsigned long long)t.n_height,
			 (unsigned long long)t.n_width);
		ps_plan_tuned(plan);
	} else {
		snprintf(plan->summary, sizeof(plan->summary),
			 "whole rows: %llu rows of Q per block, all r = %llu monomials per tile; H tiles r x %llu, output tiles %llu x %llu",
			 (unsigned long long)t.n_height, (unsigned long long)pb->att->r,
			 (unsigned long long)t.h_width, (unsigned long long)t.n_height,
			 (unsigned long long)t.n_width);
		ps_bound_case1(pb->att, t.n_height, t.n_width, &plan->upper);
	}
	ps_tiling_free(&t);
	return PS_OK;
}

static int case1_run(const struct ps_problem *pb, struct ps_sink *sink,
		     struct ps_error *err)
{
	ps_tiling_build_fn build;
	int rc = ps_tiling_build_for(pb, "caseI", case1_tiling, case1_tuned, &build, err);

	return rc ? rc : ps_tiling_emit(pb, "caseI", build, sink, err);
}

const struct ps_strategy ps_strategy_case1 = {
	.version = PS_STRATEGY_VERSION,
	.name = "caseI",
	.section = "Theorem 1.1, section 3.3 (Case I)",
	.summary = "whole rows of Q, all r monomials per tile, output tiles M/(4d) x M/(4r): I/O O(n d)",
	.min_memory = case1_min_memory,
	.plan = case1_plan,
	.run = case1_run,
	.takes = PS_TAKES_SIZES,
};
