/*
 * exact-matmul: exact attention without fusion, as two I/O-optimal matrix
 * products with square tiles of side s (Saha and Ye's small-cache regime,
 * M < d^2, where it beats FlashAttention).
 *
 *   phase 1, S = Q K^T: each s x s tile of S aggregated over the features
 *     s at a time (Q[I, F] and K[J, F] loaded per step); the finished tile
 *     exponentiated into E[I, J], which is saved; S is never saved;
 *   phase 2, O = E [V 1]: each s x s tile of O aggregated over the key
 *     rows s at a time (E[I, J] and V[J, columns] loaded per step); per row
 *     block the column block holding the ones column d first, O[I, d] kept
 *     while the others give A column by column.
 *
 * Cost model (exact, ragged edges included):
 *   loads  2 n d ceil(n/s) (Q, K) + n^2 ceil(|B|/s) (E) + n d ceil(n/s) (V)
 *   saves  n^2 (E) + n d (A; n |B| of O without normalisation)
 * Peak: 3 s^2 + s + 1 (three tiles, a product, and O[I, d] or a column of A).
 */
#include <stdio.h>

#include "pebblesim/engine.h"
#include "pebblesim/strategy.h"
#include "tiling.h"

static uint64_t matmul_peak(uint64_t s)
{
	return 3 * s * s + s + 1;
}

static uint64_t side_for(uint64_t M, const struct ps_attention *att)
{
	uint64_t s = 1, most = ps_max_u64(att->n, att->nb);

	while (s < most && matmul_peak(s + 1) <= M)
		s++;
	return s;
}

/* The cost model of the header, by array (the kinds). */
static void matmul_predict(uint64_t s, const struct ps_attention *att,
			   struct ps_plan *plan)
{
	const uint64_t n = att->n, d = att->d, blocks = ps_block_count(n, s);
	struct ps_array_io io[PS_ARRAY_MAX] = { { 0, 0 } };

	io[PS_KIND_Q].loads = n * d * blocks;
	io[PS_KIND_K].loads = n * d * blocks;
	io[PS_KIND_E].loads = n * n * ps_block_count(att->nb, s);
	io[PS_KIND_V].loads = n * d * blocks;
	io[PS_KIND_E].saves = n * n;
	if (att->normalize)
		io[PS_KIND_A].saves = n * d;
	else
		io[PS_KIND_O].saves = n * att->nb;
	ps_plan_predicted(plan, io);
}

static uint64_t matmul_min_memory(const struct ps_attention *att)
{
	(void)att;
	return matmul_peak(1);
}

static int too_small(const struct ps_problem *pb, struct ps_error *err)
{
	return ps_error_set(err, PS_EINPUT,
			    "M = %llu is too small for exact-matmul: it needs M >= %llu",
			    (unsigned long long)pb->M, (unsigned long long)matmul_peak(1));
}

static int matmul_plan(const struct ps_problem *pb, struct ps_plan *plan,
		       struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	uint64_t s;

	if (pb->M < matmul_peak(1))
		return too_small(pb, err);
	s = side_for(pb->M, att);
	matmul_predict(s, att, plan);
	plan->peak_red = matmul_peak(s);
	plan->bounded = true;
	plan->param_name = "s";
	plan->param = s;
	snprintf(plan->summary, sizeof(plan->summary),
		 "S = Q K^T then O = E [V 1], square tiles of side s = %llu; E saved, S never",
		 (unsigned long long)s);
	/* --dry-run: E is saved, so each of its n^2 entries holds red and
	 * blue bits beside the computed bit that the engine's estimate counts
	 * for a plain node */
	plan->state_bytes = ps_engine_state_bytes(&att->dag) + 2 * att->n * att->n / 8;
	plan->upper.name = "exact-matmul's accounting";
	plan->upper.value = (double)(plan->loads + plan->saves);
	snprintf(plan->upper.formula, sizeof(plan->upper.formula),
		 "3 n d ceil(n/s) + n^2 ceil(|B|/s) loads + n^2 + the outputs saves, s = %llu",
		 (unsigned long long)s);
	return PS_OK;
}

static struct ps_coordset block(uint64_t k, uint64_t s, uint64_t total)
{
	return ps_range(ps_block_lo(k, s), ps_block_hi(k, s, total));
}

/* phase 1: the tile S[I, J], then E[I, J] saved */
static int s_tile(const struct ps_attention *att, uint64_t s,
		  struct ps_coordset is, struct ps_coordset js,
		  struct ps_sink *sink, struct ps_error *err)
{
	int rc;

	for (uint64_t fk = 0; fk < ps_block_count(att->d, s); fk++) {
		struct ps_coordset fs = block(fk, s, att->d);

		if ((rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_Q, is, fs, err)) ||
		    (rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_K, js, fs, err)) ||
		    (rc = ps_emit_mac(sink, PS_KIND_S, false, is, js, fs, err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_Q, is, fs, err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_K, js, fs, err)))
			return rc;
	}
	if ((rc = ps_emit(sink, PS_OP_COMPUTE, PS_KIND_E, is, js, err)) ||
	    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_S, is, js, err)) ||
	    (rc = ps_emit(sink, PS_OP_SAVE, PS_KIND_E, is, js, err)) ||
	    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_E, is, js, err)))
		return rc;
	return PS_OK;
}

/* phase 2: the tile O[I, b0..b1), aggregated over the key rows */
static int o_tile(const struct ps_attention *att, uint64_t s,
		  struct ps_coordset is, uint64_t b0, uint64_t b1,
		  struct ps_sink *sink, struct ps_error *err)
{
	struct ps_coordset bs = ps_range(b0, b1), vs = ps_range(b0, ps_min_u64(b1, att->d));
	bool has_v = b0 < att->d;
	int rc;

	for (uint64_t jk = 0; jk < ps_block_count(att->n, s); jk++) {
		struct ps_coordset js = block(jk, s, att->n);

		if ((rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_E, is, js, err)) ||
		    (has_v && (rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_V, js, vs, err))) ||
		    (rc = ps_emit_mac(sink, PS_KIND_O, false, is, js, bs, err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_E, is, js, err)) ||
		    (has_v && (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_V, js, vs, err))))
			return rc;
	}
	return ps_emit_finish_n(sink, att, is, b0, b1, err);
}

static int matmul_run(const struct ps_problem *pb, struct ps_sink *sink,
		      struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	const uint64_t n = att->n;
	uint64_t s, blocks;
	int rc;

	if (pb->M < matmul_peak(1))
		return too_small(pb, err);
	s = side_for(pb->M, att);
	blocks = ps_block_count(n, s);
	for (uint64_t ik = 0; ik < blocks; ik++)
		for (uint64_t jk = 0; jk < blocks; jk++)
			if ((rc = s_tile(att, s, block(ik, s, n), block(jk, s, n), sink, err)))
				return rc;
	for (uint64_t ik = 0; ik < blocks; ik++) {
		struct ps_coordset is = block(ik, s, n);
		uint64_t bblocks = ps_block_count(att->nb, s);

		for (uint64_t step = 0; step < bblocks; step++) {
			/* with normalisation the block holding column d first */
			uint64_t bk = att->normalize ?
				(step == 0 ? bblocks - 1 : step - 1) : step;

			if ((rc = o_tile(att, s, is, ps_block_lo(bk, s),
					 ps_block_hi(bk, s, att->nb), sink, err)))
				return rc;
		}
		if (att->normalize &&
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_O, is, ps_one(att->d), err)))
			return rc;
	}
	return PS_OK;
}

const struct ps_strategy ps_strategy_exact_matmul = {
	.version = PS_STRATEGY_VERSION,
	.name = "exact-matmul",
	.section = "exact attention unfused: two square-tile matrix products (Saha and Ye's M < d^2 regime)",
	.summary = "S = Q K^T with square tiles, E saved to slow memory, then O = E [V 1] with square tiles",
	.min_memory = matmul_min_memory,
	.plan = matmul_plan,
	.run = matmul_run,
	.flags = PS_STRATEGY_EXACT,
};
