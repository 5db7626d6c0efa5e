/*
 * matmul: the strategy of Theorem 1.4 (appendix C), Case IV.
 *
 * For tiny M (M = O(g^2)) regenerating U1 costs more than storing it: U2
 * and U1 are computed once, row block by row block from K and Q, and saved;
 * then H = U2^T [V 1] and N = U1 H are standard matrix multiplications with
 * square tiles of side s = floor(sqrt(M/3)) (three s x s tiles: two inputs
 * and the output), the tiles of U2 and U1 loaded as inputs. When the mac's
 * product and the kept normaliser column do not fit beside the three
 * tiles, s shrinks until they do.
 *
 * --sizes tuned keeps the loops (U stored, blocks of monomials, products
 * by tiles) and frees the sizes: blocks of every height ceil(r/T) and the
 * proof's s, each with its H and N tiles' widths and rows chosen by the
 * cost model (ps_tiling_tune); the theorem's bound is then not claimed.
 */
#include <math.h>
#include <stdio.h>

#include "pebblesim/engine.h"
#include "pebblesim/strategy.h"
#include "tiling.h"

static void set_side(struct ps_tiling *t, const struct ps_attention *att,
		     uint64_t s)
{
	t->h_width = ps_min_u64(s, att->nb);
	t->n_width = ps_min_u64(s, att->nb);
	t->h_rows = ps_min_u64(s, att->n);
	t->n_height = ps_min_u64(s, att->n);
}

/* Square tiles of side s; U rows computed u_rows at a time, u_chunk
 * monomials per step, within M. */
static int side_tiling(const struct ps_attention *att, uint64_t M, uint64_t s,
		       struct ps_tiling *t, struct ps_error *err)
{
	int rc = ps_tiling_blocks(t, att, ps_min_u64(s, att->r), err);
	uint64_t room;

	if (rc)
		return rc;
	t->stored = true;
	set_side(t, att, s);
	t->u_rows = ps_max_u64(1, ps_min_u64(att->n, M / (t->all_count + att->r)));
	room = M > t->u_rows * t->all_count ? M - t->u_rows * t->all_count : 0;
	t->u_chunk = ps_max_u64(1, ps_min_u64(att->r, room / t->u_rows));
	return PS_OK;
}

static int matmul_tiling(const struct ps_attention *att, uint64_t M,
			 struct ps_tiling *t, struct ps_error *err)
{
	uint64_t s = ps_max_u64(ps_isqrt(M / 3), 1);
	int rc = side_tiling(att, M, s, t, err);

	while (!rc && ps_tiling_peak(t, att) > M && s > 1) {
		ps_tiling_free(t);
		rc = side_tiling(att, M, --s, t, err);
	}
	return rc;
}

/* 1 x 1 tiles, U computed one row and one monomial at a time */
static int least_tiling(const struct ps_attention *att, uint64_t M,
			struct ps_tiling *t, struct ps_error *err)
{
	(void)M;
	return side_tiling(att, 1, 1, t, err);
}

/* --sizes tuned: the cheapest tuned block height, or the least tiling
 * when none fits (ps_tiling_fitted then says which M it needs) */
static int matmul_tuned(const struct ps_attention *att, uint64_t M,
			struct ps_tiling *t, struct ps_error *err)
{
	struct ps_cheapest c;
	int rc;

	ps_cheapest_init(&c);
	if ((rc = matmul_tiling(att, M, t, err)))
		return rc;
	ps_tiling_tune(t, att, M, 0);
	ps_cheapest_offer(&c, t, att, M);
	if ((rc = ps_tiling_tune_blocks(att, M, side_tiling, 0, &c, err))) {
		if (c.found)
			ps_tiling_free(&c.best);
		return rc;
	}
	if (!c.found)
		return least_tiling(att, M, t, err);
	*t = c.best;
	return PS_OK;
}

static uint64_t matmul_min_memory(const struct ps_attention *att)
{
	return ps_tiling_least_memory(att, least_tiling);
}

/* The least a plan can predict: U stored, at least one block. */
uint64_t ps_matmul_io_floor(const struct ps_problem *pb)
{
	return ps_tiling_io_floor(pb->att, 1, true);
}

static int matmul_plan(const struct ps_problem *pb, struct ps_plan *plan,
		       struct ps_error *err)
{
	struct ps_tiling t;
	ps_tiling_build_fn build;
	int rc;

	if ((rc = ps_tiling_build_for(pb, "matmul", matmul_tiling, matmul_tuned, &build, err)) ||
	    (rc = ps_tiling_fitted(pb, "matmul", build, &t, err)))
		return rc;
	ps_tiling_plan(&t, pb->att, plan);
	if (build == matmul_tuned) {
		snprintf(plan->summary, sizeof(plan->summary),
			 "U1, U2 stored (%llu rows x %llu monomials per step), then tuned sizes: blocks of %llu monomials, H tiles %llu wide over %llu rows, N tiles %llu x %llu",
			 (unsigned long long)t.u_rows, (unsigned long long)t.u_chunk,
			 (unsigned long long)t.tiles[0].count,
			 (unsigned long long)t.h_width, (unsigned long long)t.h_rows,
			 (unsigned long long)t.n_height, (unsigned long long)t.n_width);
		ps_plan_tuned(plan);
	} else {
		snprintf(plan->summary, sizeof(plan->summary),
			 "U1, U2 stored (%llu rows x %llu monomials per step), then square tiles of side s = %llu",
			 (unsigned long long)t.u_rows, (unsigned long long)t.u_chunk,
			 (unsigned long long)t.tiles[0].count);
		plan->param_name = "s";
		plan->param = t.tiles[0].count;
		ps_bound_matmul(pb->att, t.tiles[0].count, &plan->upper);
	}
	plan->state_bytes = ps_tiling_state_bytes(pb, true);
	ps_tiling_free(&t);
	return PS_OK;
}

static int matmul_run(const struct ps_problem *pb, struct ps_sink *sink,
		      struct ps_error *err)
{
	ps_tiling_build_fn build;
	int rc = ps_tiling_build_for(pb, "matmul", matmul_tiling, matmul_tuned, &build, err);

	return rc ? rc : ps_tiling_emit(pb, "matmul", build, sink, err);
}

const struct ps_strategy ps_strategy_matmul = {
	.version = PS_STRATEGY_VERSION,
	.name = "matmul",
	.section = "Theorem 1.4, appendix C (Case IV)",
	.summary = "U1 and U2 computed once and stored, then square-tile matrix products with side sqrt(M/3)",
	.min_memory = matmul_min_memory,
	.plan = matmul_plan,
	.run = matmul_run,
	.takes = PS_TAKES_SIZES,
};
