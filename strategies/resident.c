/*
 * resident: fusion without saving H. Not one of the paper's tilings: the
 * paper's proofs treat H as an input of U1 H and rule such strategies out
 * of their analysis (section 3, "fusion-based strategies"); it is here
 * because for small n it is the cheapest pebbling there is, and so the
 * sharpest test of every lower bound.
 *
 * K and V stay in fast memory. For each block of query rows I, Q[I] and
 * the output rows N[I, B] stay; the monomials are taken a chunk at a time:
 * the chunk's H[C, B] is aggregated over every row j (U2 streamed through
 * fused macs), consumed at once into N[I, B] (U1 streamed likewise), and
 * dropped. H is never saved, only recomputed per block of I, which costs
 * no I/O: the loads are Q, K and V once and the saves the outputs once,
 * the trivial bound.
 *
 * When K and V do not fit, they stream instead, in blocks of key rows, for
 * every chunk of every block of I: a FlashAttention-like loop whose I/O
 * grows as n^2; the plan takes the block sizes with the least I/O.
 */
#include <stdio.h>
#include <string.h>

#include "pebblesim/strategy.h"
#include "tiling.h"

/* The block sizes of one resident plan. */
struct resident {
	uint64_t features;   /* of each row of Q and K: d, or none for g = 0 */
	uint64_t chunk;      /* monomials per chunk of H */
	uint64_t query_rows; /* rows of Q and N per block */
	uint64_t key_rows;   /* rows of K and V per block; n: resident */
};

static bool kv_resident(const struct resident *p, const struct ps_attention *att)
{
	return p->key_rows >= att->n;
}

/* The most red pebbles the sequence can hold. */
static uint64_t resident_peak(const struct resident *p,
			      const struct ps_attention *att)
{
	const uint64_t key_row = p->features + att->d;
	uint64_t base = kv_resident(p, att) ? att->n * key_row : 0;
	uint64_t stream = kv_resident(p, att) ? 0 : p->key_rows * key_row;
	/* H[C, B] beside the streamed K, V rows and a fused mac's U and
	 * product; or, once a block is finished, one column of A */
	uint64_t inner = ps_max_u64(ps_min_u64(p->chunk, att->r) * att->nb + stream + 2,
				    p->query_rows);

	return base + p->query_rows * (p->features + att->nb) + inner;
}

/* The cost model by array (the kinds): Q once; K and V once, or once per
 * chunk of every block of query rows; the outputs saved once. */
static void resident_predict(const struct resident *p,
			     const struct ps_attention *att,
			     struct ps_array_io *io)
{
	const uint64_t n = att->n;
	const uint64_t passes = kv_resident(p, att) ? 1 :
				ps_block_count(n, p->query_rows) * ps_block_count(att->r, p->chunk);

	memset(io, 0, PS_ARRAY_MAX * sizeof(*io));
	io[PS_KIND_Q].loads = n * p->features;
	io[PS_KIND_K].loads = passes * n * p->features;
	io[PS_KIND_V].loads = passes * n * att->d;
	if (att->normalize)
		io[PS_KIND_A].saves = n * att->d;
	else
		io[PS_KIND_N].saves = n * att->nb;
}

/* The largest x in [1, hi] for which the plan fits M, or 0. The peak
 * grows with each size. */
static uint64_t largest_fitting(const struct ps_attention *att, uint64_t M,
				struct resident *p, uint64_t *field, uint64_t hi)
{
	uint64_t lo = 1, best = 0;

	while (lo <= hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		*field = mid;
		if (resident_peak(p, att) <= M) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	*field = best ? best : 1;
	return best;
}

/*
 * The plan for M: K and V resident when they fit (the most query rows, then
 * the largest chunk: the I/O is the same for every fitting size); else
 * streamed, with the query rows and chunk that give the least I/O, then
 * the most key rows. For M below every plan, the smallest sizes, so that
 * their peak is the least M resident accepts.
 */
static void resident_plan_for(const struct ps_attention *att, uint64_t M,
			      struct resident *p)
{
	struct resident trial;
	uint64_t best_io = UINT64_MAX;

	p->features = att->g > 0 ? att->d : 0;
	p->chunk = p->query_rows = 1;
	p->key_rows = att->n;
	if (resident_peak(p, att) <= M) {
		largest_fitting(att, M, p, &p->query_rows, att->n);
		largest_fitting(att, M, p, &p->chunk, att->r);
		return;
	}
	p->key_rows = 1;
	trial = *p;
	/* streamed: query rows 1, 2, 4, ..., n, each with the largest chunk */
	for (uint64_t rows = 1; rows <= att->n;
	     rows = rows == att->n ? rows + 1 : ps_min_u64(2 * rows, att->n)) {
		struct ps_array_io io[PS_ARRAY_MAX];
		uint64_t loads, saves;

		trial.query_rows = rows;
		trial.key_rows = 1;
		trial.chunk = 1;
		if (!largest_fitting(att, M, &trial, &trial.chunk, att->r))
			break; /* more query rows fit still less */
		largest_fitting(att, M, &trial, &trial.key_rows, att->n - 1);
		resident_predict(&trial, att, io);
		ps_array_io_total(io, &loads, &saves);
		if (loads + saves < best_io) {
			*p = trial;
			best_io = loads + saves;
		}
	}
}

static uint64_t resident_min_memory(const struct ps_attention *att)
{
	struct resident p;

	resident_plan_for(att, 1, &p);
	return resident_peak(&p, att);
}

static int resident_fitted(const struct ps_problem *pb, struct resident *p,
			   struct ps_error *err)
{
	resident_plan_for(pb->att, pb->M, p);
	if (resident_peak(p, pb->att) > pb->M)
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for resident: it needs M >= %llu",
				    (unsigned long long)pb->M,
				    (unsigned long long)resident_min_memory(pb->att));
	return PS_OK;
}

static int emit_h_chunk(const struct resident *p, const struct ps_attention *att,
			struct ps_coordset ms, struct ps_sink *sink,
			struct ps_error *err)
{
	struct ps_coordset feats = ps_range(0, p->features), vs = ps_range(0, att->d);
	struct ps_coordset bs = ps_range(0, att->nb);
	int rc;

	if (kv_resident(p, att))
		return ps_emit_mac(sink, PS_KIND_H, true, ps_range(0, att->n), ms, bs, err);
	for (uint64_t jk = 0; jk < ps_block_count(att->n, p->key_rows); jk++) {
		struct ps_coordset js = ps_range(ps_block_lo(jk, p->key_rows),
						 ps_block_hi(jk, p->key_rows, att->n));

		if ((p->features && (rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_K, js, feats, err))) ||
		    (rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_V, js, vs, err)) ||
		    (rc = ps_emit_mac(sink, PS_KIND_H, true, js, ms, bs, err)) ||
		    (p->features && (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_K, js, feats, err))) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_V, js, vs, err)))
			return rc;
	}
	return PS_OK;
}

static int emit_query_block(const struct resident *p,
			    const struct ps_attention *att, struct ps_coordset is,
			    struct ps_sink *sink, struct ps_error *err)
{
	struct ps_coordset feats = ps_range(0, p->features), bs = ps_range(0, att->nb);
	int rc;

	if (p->features && (rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_Q, is, feats, err)))
		return rc;
	for (uint64_t mk = 0; mk < ps_block_count(att->r, p->chunk); mk++) {
		struct ps_coordset ms = ps_range(ps_block_lo(mk, p->chunk),
						 ps_block_hi(mk, p->chunk, att->r));

		if ((rc = emit_h_chunk(p, att, ms, sink, err)) ||
		    (rc = ps_emit_mac(sink, PS_KIND_N, true, is, ms, bs, err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_H, ms, bs, err)))
			return rc;
	}
	if ((rc = ps_emit_finish_n(sink, att, is, 0, att->nb, err)))
		return rc;
	if (att->normalize &&
	    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_N, is, ps_one(att->d), err)))
		return rc;
	if (p->features && (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_Q, is, feats, err)))
		return rc;
	return PS_OK;
}

static int resident_emit(const struct resident *p, const struct ps_attention *att,
			 struct ps_sink *sink, struct ps_error *err)
{
	struct ps_coordset js = ps_range(0, att->n), feats = ps_range(0, p->features);
	struct ps_coordset vs = ps_range(0, att->d);
	bool resident = kv_resident(p, att);
	int rc;

	if (resident && ((p->features && (rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_K, js, feats, err))) ||
			 (rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_V, js, vs, err))))
		return rc;
	for (uint64_t ik = 0; ik < ps_block_count(att->n, p->query_rows); ik++)
		if ((rc = emit_query_block(p, att,
					   ps_range(ps_block_lo(ik, p->query_rows),
						    ps_block_hi(ik, p->query_rows, att->n)),
					   sink, err)))
			return rc;
	if (resident && ((p->features && (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_K, js, feats, err))) ||
			 (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_V, js, vs, err))))
		return rc;
	return PS_OK;
}

static int resident_plan(const struct ps_problem *pb, struct ps_plan *plan,
			 struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct resident p;
	struct ps_array_io io[PS_ARRAY_MAX];
	uint64_t blocks;
	int rc = resident_fitted(pb, &p, err);

	if (rc)
		return rc;
	resident_predict(&p, att, io);
	ps_plan_predicted(plan, io);
	plan->state_bytes = ps_tiling_state_bytes(pb, false);
	plan->param_name = "query_rows";
	plan->param = p.query_rows;
	plan->peak_red = resident_peak(&p, att);
	plan->bounded = true;
	blocks = ps_block_count(att->n, p.query_rows);
	if (kv_resident(&p, att))
		snprintf(plan->summary, sizeof(plan->summary),
			 "K and V resident; %llu block(s) of %llu query rows; H in chunks of %llu monomials, consumed at once and never saved",
			 (unsigned long long)blocks, (unsigned long long)p.query_rows,
			 (unsigned long long)p.chunk);
	else
		snprintf(plan->summary, sizeof(plan->summary),
			 "K and V streamed in blocks of %llu rows per chunk; %llu block(s) of %llu query rows; H in chunks of %llu monomials, never saved",
			 (unsigned long long)p.key_rows, (unsigned long long)blocks,
			 (unsigned long long)p.query_rows, (unsigned long long)p.chunk);
	/* its own accounting is exact: every load and save counted once */
	plan->upper.name = "resident's accounting";
	plan->upper.value = (double)(plan->loads + plan->saves);
	if (kv_resident(&p, att))
		snprintf(plan->upper.formula, sizeof(plan->upper.formula),
			 "n f + n (f + d) loads (Q; K, V), the outputs saved once; f = %llu features a row",
			 (unsigned long long)p.features);
	else
		snprintf(plan->upper.formula, sizeof(plan->upper.formula),
			 "n f + ceil(n/%llu) ceil(r/%llu) n (f + d) loads (Q; K, V per chunk), the outputs saved once; f = %llu",
			 (unsigned long long)p.query_rows, (unsigned long long)p.chunk,
			 (unsigned long long)p.features);
	return PS_OK;
}

static int resident_run(const struct ps_problem *pb, struct ps_sink *sink,
			struct ps_error *err)
{
	struct resident p;
	int rc = resident_fitted(pb, &p, err);

	if (rc)
		return rc;
	return resident_emit(&p, pb->att, sink, err);
}

const struct ps_strategy ps_strategy_resident = {
	.version = PS_STRATEGY_VERSION,
	.name = "resident",
	.section = "fusion outside the paper's analysis (section 3): H recomputed, never saved",
	.summary = "K, V (and blocks of Q) kept in fast memory, H built a chunk at a time and consumed at once: I/O 4nd when K and V fit",
	/* K and V stream once per chunk of every block of query rows when
	 * they do not fit: n^2 moves, in set operations that cannot be
	 * larger (each block of key rows is loaded, used and deleted before
	 * the next fits); its accounting is exact */
	.flags = PS_STRATEGY_QUADRATIC,
	.min_memory = resident_min_memory,
	.plan = resident_plan,
	.run = resident_run,
};
