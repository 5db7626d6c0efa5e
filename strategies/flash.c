/*
 * flash: FlashAttention's tiling of exact attention (Dao et al. 2022), in
 * FlashAttention-2's loop order (Dao 2023): query blocks outermost.
 *
 * For each block I of Br query rows, Q[I] and the accumulators O[I, B]
 * stay in fast memory while K and V stream through in blocks J of Bc rows:
 * the tile S[I, J] is aggregated over every feature (macs into S), then
 * exponentiated and aggregated into O[I, B] at once (a fused mac: E[i,j]
 * computed, used for every column, dropped), and dropped. A finished block
 * gives A column by column. MODEL.md section 5 has no running maximum, so
 * no rescaling moves appear.
 *
 * Cost model: loads n d (Q, once) + ceil(n/Br) n 2d (K and V per query
 * block), saves n d (A; n |B| of O without normalisation). It depends on
 * Br alone, so the plan takes the largest Br that fits beside Bc = 1, then
 * the most even Br with the same number of blocks, then the largest Bc.
 * docs/EXACT.md compares this with Dao et al.'s Bc = ceil(M/4d), Br =
 * min(Bc, d) for FlashAttention-1's order.
 *
 * Causal attention (MODEL.md section 7), as FlashAttention-2 masks it:
 * query block I = [i0, i1) reads the key blocks of rows below i1 only.
 * The blocks wholly below i0 are the same loop as without the mask; a
 * block J = [j0, j1) that meets I aggregates the rows of I at or after
 * j1 as a whole tile, and each row i of I within J over [j0, i] alone
 * (the diagonal, element-wise). K and V are loaded once per query block
 * up to its last row: loads n d + sum over blocks of 2 d i1, the sizes
 * those of the unmasked run (its peak bounds the diagonal's too).
 */
#include <stdio.h>

#include "pebblesim/strategy.h"
#include "tiling.h"

struct flash {
	uint64_t br, bc; /* query rows per block, key rows per block */
};

static uint64_t flash_peak(const struct flash *f, const struct ps_attention *att)
{
	const uint64_t d = att->d, nb = att->nb;
	/* Q[I], O[I, B], K[J], V[J], S[I, J], and a mac's product or the
	 * fused mac's E with its product */
	uint64_t inner = f->br * (d + nb) + f->bc * 2 * d + f->br * f->bc + 2;
	/* Q dropped: O[I, B] and one column of A */
	uint64_t finish = f->br * nb + f->br;

	return ps_max_u64(inner, finish);
}

/* The key rows query block I reads: every n, or causal rows below its
 * last row + 1. */
static uint64_t keys_of(const struct ps_attention *att, uint64_t i1)
{
	return att->causal ? i1 : att->n;
}

/* The cost model by array (the kinds): Q once, K and V once per query
 * block (causal: up to its last row), the outputs saved once. */
static void flash_predict(const struct flash *f, const struct ps_attention *att,
			  struct ps_plan *plan)
{
	const uint64_t n = att->n, d = att->d, blocks = ps_block_count(n, f->br);
	struct ps_array_io io[PS_ARRAY_MAX] = { { 0, 0 } };
	uint64_t keys = 0;

	for (uint64_t ik = 0; ik < blocks; ik++)
		keys += keys_of(att, ps_block_hi(ik, f->br, n));
	io[PS_KIND_Q].loads = n * d;
	io[PS_KIND_K].loads = keys * d;
	io[PS_KIND_V].loads = keys * d;
	if (att->normalize)
		io[PS_KIND_A].saves = n * d;
	else
		io[PS_KIND_O].saves = n * att->nb;
	ps_plan_predicted(plan, io);
}

/* The sizes for M; the smallest (1 x 1) when nothing fits. */
static void flash_sizes(const struct ps_attention *att, uint64_t M,
			struct flash *f)
{
	const uint64_t fixed = 2 * att->d + 2, per_row = att->d + att->nb + 1;
	uint64_t blocks;

	f->br = M > fixed ? ps_min_u64((M - fixed) / per_row, att->n) : 0;
	f->br = ps_max_u64(f->br, 1);
	/* as many blocks as the largest Br needs, evened out */
	blocks = ps_block_count(att->n, f->br);
	f->br = ps_ceil_div(att->n, blocks);
	f->bc = 1;
	while (f->bc < att->n) {
		f->bc++;
		if (flash_peak(f, att) > M) {
			f->bc--;
			break;
		}
	}
}

static uint64_t flash_min_memory(const struct ps_attention *att)
{
	struct flash f = { 1, 1 };

	return flash_peak(&f, att);
}

static int flash_fitted(const struct ps_problem *pb, struct flash *f,
			struct ps_error *err)
{
	flash_sizes(pb->att, pb->M, f);
	if (flash_peak(f, pb->att) > pb->M)
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for flash: it needs M >= %llu",
				    (unsigned long long)pb->M,
				    (unsigned long long)flash_min_memory(pb->att));
	return PS_OK;
}

static int flash_plan(const struct ps_problem *pb, struct ps_plan *plan,
		      struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct flash f;
	int rc = flash_fitted(pb, &f, err);

	if (rc)
		return rc;
	flash_predict(&f, att, plan);
	plan->peak_red = flash_peak(&f, att);
	plan->bounded = true;
	plan->param_name = "br";
	plan->param = f.br;
	snprintf(plan->summary, sizeof(plan->summary),
		 "FlashAttention-2 order: %llu query blocks of Br = %llu rows (Q, O kept), K and V in blocks of Bc = %llu rows%s",
		 (unsigned long long)ps_block_count(att->n, f.br),
		 (unsigned long long)f.br, (unsigned long long)f.bc,
		 att->causal ? ", causal: the blocks above the diagonal skipped, the diagonal masked row by row" : "");
	/* on the block path, S and E are held as tiles (src/engine_state.h):
	 * the state touches the inputs, O and A only, and the page tables
	 * where they lie */
	if (!pb->element_only) {
		const uint64_t nd = att->n * att->d, plain = att->normalize ? nd : 0;
		const uint64_t sums = att->n * att->nb;

		plan->state_bytes = ps_engine_state_bytes_of(3 * nd + plain + sums, 3 * nd,
							     plain, sums, att->dag.output_count);
	}
	plan->upper.name = "flash's accounting";
	plan->upper.value = (double)(plan->loads + plan->saves);
	if (att->causal)
		snprintf(plan->upper.formula, sizeof(plan->upper.formula),
			 "n d + sum over query blocks [i0, i1) of 2 d i1 loads, the outputs saved once, Br = %llu",
			 (unsigned long long)f.br);
	else
		snprintf(plan->upper.formula, sizeof(plan->upper.formula),
			 "n d + ceil(n/Br) 2 n d loads, the outputs saved once, Br = %llu",
			 (unsigned long long)f.br);
	return PS_OK;
}

/* S[is, js] aggregated, exponentiated into O[is, B] at once, dropped. */
static int flash_tile(const struct ps_attention *att, struct ps_coordset is,
		      struct ps_coordset js, struct ps_sink *sink, struct ps_error *err)
{
	const struct ps_coordset feats = ps_range(0, att->d), bs = ps_range(0, att->nb);
	int rc;

	if ((rc = ps_emit_mac(sink, PS_KIND_S, false, is, js, feats, err)) ||
	    (rc = ps_emit_mac(sink, PS_KIND_O, true, is, js, bs, err)))
		return rc;
	return ps_emit(sink, PS_OP_DELETE, PS_KIND_S, is, js, err);
}

/*
 * Causal: the key block J = [j0, j1) that meets query block I = [i0, i1)
 * (j0 < i1, j1 > i0): K[J] and V[J] loaded, the rows of I from j1 on
 * as one tile, each row i of I within J over [j0, i], K and V dropped.
 */
static int flash_diagonal(const struct ps_attention *att, struct ps_coordset is,
			  uint64_t j0, uint64_t j1, struct ps_sink *sink,
			  struct ps_error *err)
{
	const struct ps_coordset feats = ps_range(0, att->d), js = ps_range(j0, j1);
	const uint64_t whole = ps_max_u64(is.lo, j1);
	int rc;

	if ((rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_K, js, feats, err)) ||
	    (rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_V, js, feats, err)))
		return rc;
	if (whole < is.hi && (rc = flash_tile(att, ps_range(whole, is.hi), js, sink, err)))
		return rc;
	for (uint64_t i = ps_max_u64(is.lo, j0); i < ps_min_u64(is.hi, j1); i++)
		if ((rc = flash_tile(att, ps_one(i), ps_range(j0, i + 1), sink, err)))
			return rc;
	if ((rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_K, js, feats, err)) ||
	    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_V, js, feats, err)))
		return rc;
	return PS_OK;
}

int ps_emit_key_loop(struct ps_sink *sink, const struct ps_attention *att,
		     struct ps_coordset is, uint64_t lo, uint64_t hi, uint64_t bc,
		     struct ps_error *err)
{
	const struct ps_coordset feats = ps_range(0, att->d), bs = ps_range(0, att->nb);
	const uint64_t full = (hi - lo) / bc;
	int rc;

	/* one loop (struct ps_repeat) over the full blocks, one for the rest */
	for (int part = 0; part < 2; part++) {
		const uint64_t j0 = lo + (part ? full * bc : 0), rows = part ? hi - j0 : bc;
		const struct ps_coordset js = ps_range(j0, j0 + rows), none = ps_range(0, 0);
		struct ps_op body[7];
		uint64_t step[7][3];
		size_t len = 0;
		struct ps_repeat r;

		if (!rows || (!part && !full))
			continue;
		ps_repeat_add(body, step, &len, PS_OP_LOAD, PS_KIND_K, js, feats, none, 1, rows);
		ps_repeat_add(body, step, &len, PS_OP_LOAD, PS_KIND_V, js, feats, none, 1, rows);
		ps_repeat_add(body, step, &len, PS_OP_MAC, PS_KIND_S, is, js, feats, 2, rows);
		ps_repeat_add(body, step, &len, PS_OP_MAC, PS_KIND_O, is, js, bs, 2, rows);
		body[len - 1].fuse = true;
		ps_repeat_add(body, step, &len, PS_OP_DELETE, PS_KIND_S, is, js, none, 2, rows);
		ps_repeat_add(body, step, &len, PS_OP_DELETE, PS_KIND_K, js, feats, none, 1, rows);
		ps_repeat_add(body, step, &len, PS_OP_DELETE, PS_KIND_V, js, feats, none, 1, rows);
		r.body = body;
		r.step = (const uint64_t (*)[3])step;
		r.len = len;
		r.count = part ? 1 : full;
		if ((rc = ps_sink_repeat(sink, &r, err)))
			return rc;
	}
	return PS_OK;
}

static int flash_block(const struct flash *f, const struct ps_attention *att,
		       struct ps_coordset is, struct ps_sink *sink,
		       struct ps_error *err)
{
	const struct ps_coordset feats = ps_range(0, att->d);
	/* causal: the loop covers the key blocks wholly below the query
	 * block, the diagonal blocks follow */
	const uint64_t keys = att->causal ? is.lo : att->n, full = keys / f->bc;
	int rc;

	if ((rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_Q, is, feats, err)))
		return rc;
	/* the key blocks below the query block (causal) or all of them */
	if ((rc = ps_emit_key_loop(sink, att, is, 0, att->causal ? full * f->bc : att->n, f->bc,
				   err)))
		return rc;
	for (uint64_t j0 = full * f->bc; att->causal && j0 < is.hi; j0 += f->bc)
		if ((rc = flash_diagonal(att, is, j0, ps_min_u64(j0 + f->bc, is.hi), sink, err)))
			return rc;
	if ((rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_Q, is, feats, err)) ||
	    (rc = ps_emit_finish_n(sink, att, is, 0, att->nb, err)))
		return rc;
	if (att->normalize &&
	    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_O, is, ps_one(att->d), err)))
		return rc;
	return PS_OK;
}

static int flash_run(const struct ps_problem *pb, struct ps_sink *sink,
		     struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct flash f;
	int rc = flash_fitted(pb, &f, err);

	for (uint64_t ik = 0; !rc && ik < ps_block_count(att->n, f.br); ik++)
		rc = flash_block(&f, att, ps_range(ps_block_lo(ik, f.br),
						   ps_block_hi(ik, f.br, att->n)),
				 sink, err);
	return rc;
}

const struct ps_strategy ps_strategy_flash = {
	.version = PS_STRATEGY_VERSION,
	.name = "flash",
	.section = "exact attention: FlashAttention (Dao et al. 2022), FlashAttention-2's loop order",
	.summary = "query blocks of Br rows with their O kept, K and V streamed in blocks of Bc rows, S tiles exponentiated into O at once",
	.min_memory = flash_min_memory,
	.plan = flash_plan,
	.run = flash_run,
	.flags = PS_STRATEGY_EXACT | PS_STRATEGY_CAUSAL,
};
