/*
 * recurrent and causal-colpass: causal approximate attention (MODEL.md
 * section 7) in its recurrent form, strategies beyond the paper.
 *
 * The state after key row j is H[j,m,b] = H[j-1,m,b] + U2[j,m] V[j,b]
 * (V[j,d] = 1), and row i's output reads the state of its own row: N[i,b]
 * = sum_m U1[i,m] H[i,m,b]. Both strategies stream the rows once per pass
 * and keep a pass's state red from row to row; nothing of H is ever saved.
 *
 * A pass takes value columns [b0, b1) and, with normalisation, the ones
 * column d (the normaliser N[i,d], which every A[i,b] needs): its columns
 * C, c = |C|, its state H[., all r monomials, C], r c cells. For each row j
 * in order:
 *
 *   load K[j, all], V[j, b0..b1); for each chunk X of q monomials: fused
 *   mac into H over (j, X, C) (U2[j,m] regenerated), the carry mac over
 *   (j, X, C) (j >= 1: H[j-1] into H[j]) and delete H[j-1, X, C]; delete
 *   K[j], V[j]; load Q[j, all]; fused mac into N over (j, all, C) (U1
 *   regenerated); delete Q[j]; then A[j, b0..b1) computed, saved, deleted
 *   (without normalisation N[j, C] saved) and N[j, C] deleted.
 *
 * After the last row the pass's state is deleted. The chunks let the old
 * and the new state share M: the peak is r c + d + w + q c + 2 (the state,
 * K[j], V[j], the new chunk, U2 and the product), w = b1 - b0.
 *
 * recurrent is one pass over every column: loads 3 n d, saves n d (A;
 * n |B| of N without normalisation), the least any pebbling reads and
 * writes (docs/BOUNDS.md). causal-colpass cuts the value columns into p
 * passes of at most w columns each, w the most that fits M, the ones
 * column in every pass so that each pass finishes its columns of A (no
 * partial N carried): loads n (2 d p + d), saves n d. Passes over subsets
 * of the monomials instead read only their monomials' features but carry
 * partial sums of N from pass to pass (2 |B| words a row and pass) and need
 * as many passes; docs/STRATEGIES.md compares the two.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pebblesim/strategy.h"
#include "tiling.h"

struct rec {
	uint64_t w;      /* value columns a pass */
	uint64_t passes; /* ceil(d / w) */
	uint64_t q;      /* monomials a chunk */
};

/* The columns of the widest pass: w, and the ones column. */
static uint64_t rec_cols(const struct ps_attention *att, uint64_t w)
{
	return w + (att->normalize ? 1 : 0);
}

/* The peak of passes of w value columns with chunks of q monomials. */
static uint64_t rec_peak(const struct ps_attention *att, uint64_t w, uint64_t q)
{
	const uint64_t c = rec_cols(att, w);

	return att->r * c + att->d + w + q * c + 2;
}

/* The widest passes (the fewest) that fit M, evened out, with the largest
 * chunks; single: one pass only. False when none fits. */
static bool rec_fit(const struct ps_attention *att, uint64_t M, bool single, struct rec *f)
{
	uint64_t w = att->d;

	while (w > (single ? att->d - 1 : 0) && rec_peak(att, w, 1) > M)
		w--;
	if (w == 0 || (single && w < att->d))
		return false;
	f->passes = ps_ceil_div(att->d, w);
	f->w = ps_ceil_div(att->d, f->passes);
	f->q = ps_min_u64(att->r, (M - rec_peak(att, f->w, 0)) / rec_cols(att, f->w));
	return true;
}

static uint64_t rec_min_memory(const struct ps_attention *att)
{
	return rec_peak(att, att->d, 1);
}

static uint64_t colpass_min_memory(const struct ps_attention *att)
{
	return rec_peak(att, 1, 1);
}

/* The cost model by array: Q and K once a pass, V and the outputs once. */
static void rec_predict(const struct rec *f, const struct ps_attention *att,
			struct ps_plan *plan)
{
	const uint64_t n = att->n, d = att->d;
	struct ps_array_io io[PS_ARRAY_MAX] = { { 0, 0 } };

	/* g = 0: U1 and U2 are constants, Q and K never read */
	io[PS_KIND_Q].loads = att->g ? f->passes * n * d : 0;
	io[PS_KIND_K].loads = att->g ? f->passes * n * d : 0;
	io[PS_KIND_V].loads = n * d;
	if (att->normalize)
		io[PS_KIND_A].saves = n * d;
	else
		io[PS_KIND_N].saves = n * att->nb;
	ps_plan_predicted(plan, io);
}

static int rec_fitted(const struct ps_problem *pb, bool single, struct rec *f,
		      struct ps_error *err)
{
	if (!rec_fit(pb->att, pb->M, single, f))
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for %s: it needs M >= %llu%s",
				    (unsigned long long)pb->M, single ? "recurrent" : "causal-colpass",
				    (unsigned long long)(single ? rec_min_memory(pb->att) :
							 colpass_min_memory(pb->att)),
				    single ? " (the state of every column beside a row)" : "");
	return PS_OK;
}

static int plan_either(const struct ps_problem *pb, bool single, struct ps_plan *plan,
		       struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct rec f;
	int rc = rec_fitted(pb, single, &f, err);

	if (rc)
		return rc;
	rec_predict(&f, att, plan);
	plan->peak_red = rec_peak(att, f.w, f.q);
	plan->param_name = "w";
	plan->param = f.w;
	snprintf(plan->summary, sizeof(plan->summary),
		 "recurrent state over %llu pass%s of %llu value column%s%s (%llu state cells), rows streamed once a pass, chunks of %llu monomials",
		 (unsigned long long)f.passes, f.passes == 1 ? "" : "es",
		 (unsigned long long)f.w, f.w == 1 ? "" : "s",
		 att->normalize ? " and the ones column" : "",
		 (unsigned long long)(att->r * rec_cols(att, f.w)), (unsigned long long)f.q);
	return PS_OK;
}

static int rec_plan(const struct ps_problem *pb, struct ps_plan *plan, struct ps_error *err)
{
	return plan_either(pb, true, plan, err);
}

static int colpass_plan(const struct ps_problem *pb, struct ps_plan *plan,
			struct ps_error *err)
{
	return plan_either(pb, false, plan, err);
}

/* Row j >= 1 of the state at monomials [m0, m1) over columns cs: for
 * each chunk X of q monomials, the fused mac into H[j, X, cs], the carry
 * from H[j-1, X, cs] and its deletion. A loop (struct ps_repeat) over the
 * full chunks, one over the rest: the engine judges each whole. */
static int rec_state(uint64_t q, uint64_t m0, uint64_t m1, uint64_t j, struct ps_coordset cs,
		     struct ps_sink *sink, struct ps_error *err)
{
	const uint64_t full = (m1 - m0) / q;
	int rc = PS_OK;

	for (int part = 0; !rc && part < 2; part++) {
		const uint64_t lo = m0 + (part ? full * q : 0), count = part ? m1 - lo : q;
		const struct ps_coordset xs = ps_range(lo, lo + count);
		struct ps_op body[3];
		uint64_t step[3][3];
		size_t len = 0;
		struct ps_repeat r;

		if (!count || (!part && !full))
			continue;
		ps_repeat_add(body, step, &len, PS_OP_MAC, PS_KIND_HJ, ps_one(j), xs, cs, 2, count);
		body[0].fuse = true;
		ps_repeat_add(body, step, &len, PS_OP_MAC, PS_KIND_HJ, ps_one(j), xs, cs, 2, count);
		body[1].carry = true;
		ps_repeat_add(body, step, &len, PS_OP_DELETE, PS_KIND_HJ, ps_one(j - 1), xs, cs, 2,
			      count);
		r.body = body;
		r.step = (const uint64_t (*)[3])step;
		r.len = len;
		r.count = part ? 1 : full;
		rc = ps_sink_repeat(sink, &r, err);
	}
	return rc;
}

/* One pass: value columns [b0, b1), its columns cs (with the ones). */
static int rec_pass(const struct rec *f, const struct ps_attention *att, uint64_t b0,
		    uint64_t b1, struct ps_coordset cs, struct ps_sink *sink,
		    struct ps_error *err)
{
	/* g = 0: no monomial reads a feature */
	const struct ps_coordset feats = ps_range(0, att->g ? att->d : 0), vs = ps_range(b0, b1);
	const struct ps_coordset all = ps_range(0, att->r);
	int rc = PS_OK;

	for (uint64_t j = 0; !rc && j < att->n; j++) {
		const struct ps_coordset row = ps_one(j);

		if ((rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_K, row, feats, err)) ||
		    (rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_V, row, vs, err)))
			return rc;
		if ((rc = j ? rec_state(f->q, 0, att->r, j, cs, sink, err) :
			      ps_emit_mac(sink, PS_KIND_HJ, true, row, all, cs, err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_K, row, feats, err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_V, row, vs, err)) ||
		    (rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_Q, row, feats, err)) ||
		    (rc = ps_emit_mac(sink, PS_KIND_N, true, row, all, cs, err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_Q, row, feats, err)) ||
		    (rc = ps_emit_finish_n(sink, att, row, b0, b1, err)))
			return rc;
		if (att->normalize)
			rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_N, row, ps_one(att->d), err);
	}
	if (!rc) {
		struct ps_op drop = { .code = PS_OP_DELETE, .kind = PS_KIND_HJ,
				      .c = { ps_one(att->n - 1), all, cs } };

		rc = ps_sink_emit(sink, &drop, err);
	}
	return rc;
}

static int run_either(const struct ps_problem *pb, bool single, struct ps_sink *sink,
		      struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	uint64_t *cols;
	struct rec f;
	int rc = rec_fitted(pb, single, &f, err);

	if (rc)
		return rc;
	if (!(cols = malloc((f.w + 1) * sizeof(*cols))))
		return ps_error_set(err, PS_ENOMEM, "out of memory for a pass's columns");

	for (uint64_t b0 = 0; !rc && b0 < att->d; b0 += f.w) {
		const uint64_t b1 = ps_min_u64(b0 + f.w, att->d);
		struct ps_coordset cs = ps_range(b0, att->normalize && b1 == att->d ? att->nb : b1);

		/* the pass's columns and the ones column apart from them */
		if (att->normalize && b1 < att->d) {
			for (uint64_t b = b0; b < b1; b++)
				cols[b - b0] = b;
			cols[b1 - b0] = att->d;
			cs = ps_list(cols, b1 - b0 + 1);
		}
		rc = rec_pass(&f, att, b0, b1, cs, sink, err);
	}
	free(cols);
	return rc;
}

static int rec_run(const struct ps_problem *pb, struct ps_sink *sink, struct ps_error *err)
{
	return run_either(pb, true, sink, err);
}

static int colpass_run(const struct ps_problem *pb, struct ps_sink *sink,
		       struct ps_error *err)
{
	return run_either(pb, false, sink, err);
}

/* ---- decoding (MODEL.md section 8) ------------------------------------- */

/*
 * recurrent-decode: tokens P .. n-1 one at a time, the state streamed.
 *
 * The state H[t-1, m, b] of the monomials [0, mr) stays red from token to
 * token (loaded once from the prompt's, saved once at the end); the
 * others are streamed a monomial at a time, every token: load H[t-1, m,
 * B], the fused mac into H[t, m, B] and the carry, delete H[t-1, m, B],
 * the fused mac into N[t, B] over m, save and delete H[t, m, B]. Token t:
 *
 *   compute Q[t], K[t], V[t] from A[t-1] (loaded for t = P), delete A[t-1];
 *   the resident state in chunks of 2q + 1 monomials (one loop), then N[t]
 *   over [0, mr) at once; the streamed monomials; delete Q[t], K[t], V[t];
 *   A[t] computed and saved (kept red for the next token), N[t] deleted
 *   (without normalisation N[t, b < d] saved and kept).
 *
 * Peak, exact: mr |B| + 3d + 2 + max(c |B|, s |B|) (the resident state,
 * Q, K, V, U and the product; c = min(3, mr) for a chunk of new resident
 * monomials before N[t] is red; s = 3 where a monomial streams beside
 * N[t] and its old and new cells, 2 where the one streamed monomial has
 * no N[t] beside it, mr = 0 and r = 1, and 0 where none streams, mr = r),
 * mr the most that fits. Cost, T = n - P tokens, R = mr |B|:
 *
 *   loads  = d (A[P-1]) + R + T (r - mr) |B|     (H: the resident state
 *   saves  = T d + T (r - mr) |B| + R             once, the rest every token)
 */
struct dec {
	uint64_t mr; /* resident monomials */
};

/* The resident state of mr monomials, Q, K, V, U and the product, and
 * the most of these at once: a chunk of min(3, mr) new resident
 * monomials before N[t] is red; a streamed monomial's old and new cells
 * beside N[t] (without N[t] where it is the only one and nothing is
 * resident: mr = 0, r = 1). Exact: tests/test_strategies.c's decode grid
 * sets it beside the engine's peak. */
static uint64_t dec_peak(const struct ps_attention *att, uint64_t mr)
{
	const uint64_t nb = att->nb, chunk = ps_min_u64(3, mr) * nb;
	const uint64_t stream = mr == att->r ? 0 : mr == 0 && att->r == 1 ? 2 * nb : 3 * nb;

	return mr * nb + 3 * att->d + 2 + (chunk > stream ? chunk : stream);
}

static uint64_t dec_min_memory(const struct ps_attention *att)
{
	return dec_peak(att, 0);
}

static int dec_fitted(const struct ps_problem *pb, struct dec *f, struct ps_error *err)
{
	const struct ps_attention *att = pb->att;

	if (pb->M < dec_min_memory(att))
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for recurrent-decode: it needs M >= %llu",
				    (unsigned long long)pb->M,
				    (unsigned long long)dec_min_memory(att));
	/* the peak grows with mr (by |B| a monomial, by 0 from mr = r - 1 to r
	 * where r <= 2): the whole state where it fits, else the most below
	 * r, each of which streams beside N[t] */
	if (dec_peak(att, att->r) <= pb->M)
		f->mr = att->r;
	else if (pb->M >= dec_peak(att, 1))
		f->mr = ps_min_u64(att->r - 1, 1 + (pb->M - dec_peak(att, 1)) / att->nb);
	else
		f->mr = 0;
	return PS_OK;
}

static void dec_predict(const struct dec *f, const struct ps_attention *att, struct ps_plan *plan)
{
	const uint64_t t = att->n - att->decode, nb = att->nb, d = att->d;
	const uint64_t resident = f->mr * nb, streamed = t * (att->r - f->mr) * nb;
	const unsigned out = att->normalize ? PS_KIND_A : PS_KIND_N;
	struct ps_array_io io[PS_ARRAY_MAX] = { { 0, 0 } };

	io[out].loads = d;
	io[out].saves = t * d;
	io[PS_KIND_H].loads = resident + streamed;
	io[PS_KIND_H].saves = streamed + resident;
	ps_plan_predicted(plan, io);
}

static int dec_plan(const struct ps_problem *pb, struct ps_plan *plan, struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct dec f;
	int rc = dec_fitted(pb, &f, err);

	if (rc)
		return rc;
	dec_predict(&f, att, plan);
	plan->peak_red = dec_peak(att, f.mr);
	plan->param_name = "mr";
	plan->param = f.mr;
	snprintf(plan->summary, sizeof(plan->summary),
		 "%llu tokens; the state of %llu of %llu monomials resident (%llu cells), the other %llu streamed each token",
		 (unsigned long long)(att->n - att->decode), (unsigned long long)f.mr,
		 (unsigned long long)att->r, (unsigned long long)(f.mr * att->nb),
		 (unsigned long long)((att->r - f.mr) * att->nb));
	return PS_OK;
}

static int emit_state_op(struct ps_sink *sink, enum ps_opcode code, bool fuse, bool carry,
			 uint64_t j, struct ps_coordset ms, struct ps_coordset bs,
			 struct ps_error *err)
{
	struct ps_op op = { .code = code, .kind = PS_KIND_HJ, .fuse = fuse, .carry = carry,
			    .c = { ps_one(j), ms, bs } };

	return ps_sink_emit(sink, &op, err);
}

/* Token t's state and N[t] (Q[t], K[t], V[t] red). */
static int dec_state(const struct dec *f, const struct ps_attention *att, uint64_t t,
		     struct ps_sink *sink, struct ps_error *err)
{
	const struct ps_coordset bs = ps_range(0, att->nb), row = ps_one(t);
	const bool first = t == att->decode;
	int rc = PS_OK;

	/* the resident state: after the prompt's, a loop judged whole */
	if (f->mr && !first)
		rc = rec_state(3, 0, f->mr, t, bs, sink, err);
	for (uint64_t m = 0; first && !rc && m < f->mr; m += 3) {
		const struct ps_coordset xs = ps_range(m, ps_min_u64(m + 3, f->mr));

		if (!(rc = emit_state_op(sink, PS_OP_MAC, true, false, t, xs, bs, err)) &&
		    !(rc = emit_state_op(sink, PS_OP_MAC, false, true, t, xs, bs, err)))
			rc = emit_state_op(sink, PS_OP_DELETE, false, false, t - 1, xs, bs, err);
	}
	if (!rc && f->mr)
		rc = ps_emit_mac(sink, PS_KIND_N, true, row, ps_range(0, f->mr), bs, err);
	/* the streamed state, a monomial at a time */
	for (uint64_t m = f->mr; !rc && m < att->r; m++) {
		const struct ps_coordset xs = ps_one(m);

		if (!(rc = emit_state_op(sink, PS_OP_LOAD, false, false, t - 1, xs, bs, err)) &&
		    !(rc = emit_state_op(sink, PS_OP_MAC, true, false, t, xs, bs, err)) &&
		    !(rc = emit_state_op(sink, PS_OP_MAC, false, true, t, xs, bs, err)) &&
		    !(rc = emit_state_op(sink, PS_OP_DELETE, false, false, t - 1, xs, bs, err)) &&
		    !(rc = ps_emit_mac(sink, PS_KIND_N, true, row, xs, bs, err)) &&
		    !(rc = emit_state_op(sink, PS_OP_SAVE, false, false, t, xs, bs, err)))
			rc = emit_state_op(sink, PS_OP_DELETE, false, false, t, xs, bs, err);
	}
	return rc;
}

static int dec_run(const struct ps_problem *pb, struct ps_sink *sink, struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	const enum ps_kind out = att->normalize ? PS_KIND_A : PS_KIND_N;
	const struct ps_coordset feats = ps_range(0, att->d), bs = ps_range(0, att->nb);
	const uint64_t p = att->decode;
	struct dec f;
	int rc = dec_fitted(pb, &f, err);

	if (!rc)
		rc = ps_emit(sink, PS_OP_LOAD, out, ps_one(p - 1), feats, err);
	if (!rc && f.mr)
		rc = emit_state_op(sink, PS_OP_LOAD, false, false, p - 1, ps_range(0, f.mr), bs, err);
	for (uint64_t t = p; !rc && t < att->n; t++) {
		const struct ps_coordset row = ps_one(t);

		if ((rc = ps_emit(sink, PS_OP_COMPUTE, PS_KIND_Q, row, feats, err)) ||
		    (rc = ps_emit(sink, PS_OP_COMPUTE, PS_KIND_K, row, feats, err)) ||
		    (rc = ps_emit(sink, PS_OP_COMPUTE, PS_KIND_V, row, feats, err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, out, ps_one(t - 1), feats, err)) ||
		    (rc = dec_state(&f, att, t, sink, err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_Q, row, feats, err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_K, row, feats, err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_V, row, feats, err)))
			break;
		if (att->normalize &&
		    (!(rc = ps_emit(sink, PS_OP_COMPUTE, PS_KIND_A, row, feats, err)) &&
		     !(rc = ps_emit(sink, PS_OP_SAVE, PS_KIND_A, row, feats, err))))
			rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_N, row, bs, err);
		else if (!att->normalize)
			rc = ps_emit(sink, PS_OP_SAVE, PS_KIND_N, row, feats, err);
	}
	/* the last state: its resident part saved; and the last output dropped */
	if (!rc && f.mr)
		rc = emit_state_op(sink, PS_OP_SAVE, false, false, att->n - 1, ps_range(0, f.mr), bs,
				   err);
	if (!rc)
		rc = ps_emit(sink, PS_OP_DELETE, out, ps_one(att->n - 1), feats, err);
	return rc;
}

const struct ps_strategy ps_strategy_recurrent_decode = {
	.version = PS_STRATEGY_VERSION,
	.name = "recurrent-decode",
	.section = "beyond the paper: approximate decoding, the recurrent state streamed each token",
	.summary = "decoding: token after token, the state H[t] of the monomials that fit kept red, the others loaded and saved each token",
	.min_memory = dec_min_memory,
	.plan = dec_plan,
	.run = dec_run,
	.flags = PS_STRATEGY_BEYOND | PS_STRATEGY_DECODE,
};

const struct ps_strategy ps_strategy_recurrent = {
	.version = PS_STRATEGY_VERSION,
	.name = "recurrent",
	.section = "beyond the paper: causal attention's recurrent form (linear attention as an RNN), one pass",
	.summary = "causal: every row once, the state H[j] of every column carried from row to row beside it",
	.min_memory = rec_min_memory,
	.plan = rec_plan,
	.run = rec_run,
	.flags = PS_STRATEGY_BEYOND | PS_STRATEGY_CAUSAL | PS_STRATEGY_CAUSAL_ONLY,
};

const struct ps_strategy ps_strategy_causal_colpass = {
	.version = PS_STRATEGY_VERSION,
	.name = "causal-colpass",
	.section = "beyond the paper: causal attention's recurrent form in passes over value columns",
	.summary = "causal: passes over value columns (each with the ones column), the rows streamed once a pass with that pass's state carried",
	.min_memory = colpass_min_memory,
	.plan = colpass_plan,
	.run = colpass_run,
	.flags = PS_STRATEGY_BEYOND | PS_STRATEGY_CAUSAL | PS_STRATEGY_CAUSAL_ONLY,
};
