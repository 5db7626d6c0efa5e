/*
 * flash-decode: exact attention's token-by-token decoding (MODEL.md
 * section 8), flash-decoding's order within a token: the key-value cache
 * streamed past the one query row in blocks of w rows, each block's S
 * exponentiated into O[t, B] at once (a fused mac) and dropped.
 *
 * Rows [0, R) of the cache stay resident across tokens, the same rows
 * every token, so each is loaded once: the prompt's rows among them at
 * the start, a generated row among them once computed. For token t:
 *
 *   compute Q[t], K[t], V[t] from A[t-1] (O[t-1] without normalisation),
 *   drop A[t-1], save K[t] and V[t] (the grown cache is an output);
 *   the resident rows below t, w at a time; the rows [R, t) loaded and
 *   dropped w at a time (one loop, judged whole by the block path); row
 *   t itself; K[t], V[t] dropped unless resident; Q[t] dropped; A[t]
 *   computed from O[t] and saved, and kept for the next token.
 *
 * Cost model, exact: loads d (A[P-1]) + 2d min(R, P) (the resident
 * prompt rows) + sum over t of 2d max(0, t - R) (the rows streamed);
 * saves 3d per token (A[t], K[t], V[t]). Peak: 2Rd + 3d + |B| + 2wd + w +
 * 2 (the resident rows, Q[t], K[t], V[t], O[t, B], one streamed block,
 * its S row, E and a product). The plan takes the largest R that fits
 * beside w = 1 (R alone sets the I/O), then the largest w.
 */
#include <stdio.h>

#include "pebblesim/strategy.h"
#include "tiling.h"

struct decode {
	uint64_t resident; /* R: rows [0, R) of the cache kept */
	uint64_t w;        /* rows a streamed block */
};

static uint64_t decode_peak(const struct decode *p, const struct ps_attention *att)
{
	const uint64_t d = att->d;

	return 2 * p->resident * d + 3 * d + att->nb + 2 * p->w * d + p->w + 2;
}

/* The output A (O without normalisation): what Q, K and V are made of. */
static enum ps_kind token_kind(const struct ps_attention *att)
{
	return att->normalize ? PS_KIND_A : PS_KIND_O;
}

static void decode_predict(const struct decode *p, const struct ps_attention *att,
			   struct ps_plan *plan)
{
	const uint64_t d = att->d, prompt = att->decode, tokens = att->n - prompt;
	struct ps_array_io io[PS_ARRAY_MAX] = { { 0, 0 } };
	uint64_t rows = ps_min_u64(p->resident, prompt);

	for (uint64_t t = prompt; t < att->n; t++)
		rows += t > p->resident ? t - p->resident : 0;
	io[token_kind(att)].loads = d;
	io[PS_KIND_K].loads = io[PS_KIND_V].loads = rows * d;
	io[token_kind(att)].saves = io[PS_KIND_K].saves = io[PS_KIND_V].saves = tokens * d;
	ps_plan_predicted(plan, io);
}

static uint64_t decode_min_memory(const struct ps_attention *att)
{
	const struct decode p = { 0, 1 };

	return decode_peak(&p, att);
}

static int decode_fitted(const struct ps_problem *pb, struct decode *p,
			 struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	const uint64_t least = decode_min_memory(att);

	if (pb->M < least)
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for flash-decode: it needs M >= %llu",
				    (unsigned long long)pb->M, (unsigned long long)least);
	p->w = 1;
	p->resident = ps_min_u64((pb->M - least) / (2 * att->d), att->n);
	while (p->w < att->n) {
		p->w++;
		if (decode_peak(p, att) > pb->M) {
			p->w--;
			break;
		}
	}
	return PS_OK;
}

static int decode_plan(const struct ps_problem *pb, struct ps_plan *plan,
		       struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct decode p;
	int rc = decode_fitted(pb, &p, err);

	if (rc)
		return rc;
	decode_predict(&p, att, plan);
	plan->peak_red = decode_peak(&p, att);
	plan->bounded = true;
	plan->param_name = "resident";
	plan->param = p.resident;
	snprintf(plan->summary, sizeof(plan->summary),
		 "%llu tokens one at a time; cache rows [0, %llu) resident across tokens, the rest streamed in blocks of w = %llu rows each token",
		 (unsigned long long)(att->n - att->decode), (unsigned long long)p.resident,
		 (unsigned long long)p.w);
	plan->upper.name = "flash-decode's accounting";
	plan->upper.value = (double)(plan->loads + plan->saves);
	snprintf(plan->upper.formula, sizeof(plan->upper.formula),
		 "d + 2d min(R, P) + sum over t >= P of 2d max(0, t - R) loads, 3d saves a token, R = %llu",
		 (unsigned long long)p.resident);
	return PS_OK;
}

/* S[t, js] aggregated, exponentiated into O[t, B] at once, dropped. */
static int decode_keys(const struct ps_attention *att, uint64_t t, struct ps_coordset js,
		       struct ps_sink *sink, struct ps_error *err)
{
	const struct ps_coordset feats = ps_range(0, att->d), bs = ps_range(0, att->nb);
	int rc;

	if ((rc = ps_emit_mac(sink, PS_KIND_S, false, ps_one(t), js, feats, err)) ||
	    (rc = ps_emit_mac(sink, PS_KIND_O, true, ps_one(t), js, bs, err)))
		return rc;
	return ps_emit(sink, PS_OP_DELETE, PS_KIND_S, ps_one(t), js, err);
}

/* Token t: its query, key and value from the last output, the cache, and
 * its output, kept red for the next token. */
static int decode_token(const struct decode *p, const struct ps_attention *att, uint64_t t,
			struct ps_sink *sink, struct ps_error *err)
{
	const struct ps_coordset feats = ps_range(0, att->d), row = ps_one(t);
	const enum ps_kind out = token_kind(att);
	const uint64_t kept = ps_min_u64(p->resident, t);
	int rc;

	if ((rc = ps_emit(sink, PS_OP_COMPUTE, PS_KIND_Q, row, feats, err)) ||
	    (rc = ps_emit(sink, PS_OP_COMPUTE, PS_KIND_K, row, feats, err)) ||
	    (rc = ps_emit(sink, PS_OP_COMPUTE, PS_KIND_V, row, feats, err)) ||
	    (rc = ps_emit(sink, PS_OP_DELETE, out, ps_one(t - 1), feats, err)) ||
	    (rc = ps_emit(sink, PS_OP_SAVE, PS_KIND_K, row, feats, err)) ||
	    (rc = ps_emit(sink, PS_OP_SAVE, PS_KIND_V, row, feats, err)))
		return rc;
	for (uint64_t j0 = 0; j0 < kept; j0 += p->w)
		if ((rc = decode_keys(att, t, ps_range(j0, ps_min_u64(j0 + p->w, kept)), sink, err)))
			return rc;
	if (t > p->resident &&
	    (rc = ps_emit_key_loop(sink, att, row, p->resident, t, p->w, err)))
		return rc;
	if ((rc = decode_keys(att, t, row, sink, err)))
		return rc;
	if (t >= p->resident &&
	    ((rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_K, row, feats, err)) ||
	     (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_V, row, feats, err))))
		return rc;
	if ((rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_Q, row, feats, err)))
		return rc;
	if (att->normalize &&
	    ((rc = ps_emit(sink, PS_OP_COMPUTE, PS_KIND_A, row, feats, err)) ||
	     (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_O, row, ps_range(0, att->nb), err))))
		return rc;
	return ps_emit(sink, PS_OP_SAVE, out, row, feats, err);
}

static int decode_run(const struct ps_problem *pb, struct ps_sink *sink,
		      struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	const struct ps_coordset feats = ps_range(0, att->d);
	const uint64_t prompt = att->decode;
	struct decode p;
	int rc = decode_fitted(pb, &p, err);

	if (rc)
		return rc;
	/* the last output of the prompt, and its resident cache rows */
	if ((rc = ps_emit(sink, PS_OP_LOAD, token_kind(att), ps_one(prompt - 1), feats, err)))
		return rc;
	if (p.resident &&
	    ((rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_K, ps_range(0, ps_min_u64(p.resident, prompt)),
			   feats, err)) ||
	     (rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_V, ps_range(0, ps_min_u64(p.resident, prompt)),
			   feats, err))))
		return rc;
	for (uint64_t t = prompt; !rc && t < att->n; t++)
		rc = decode_token(&p, att, t, sink, err);
	return rc;
}

const struct ps_strategy ps_strategy_flash_decode = {
	.version = PS_STRATEGY_VERSION,
	.name = "flash-decode",
	.section = "exact attention, token by token (MODEL.md section 8): flash-decoding's order, the cache streamed each token",
	.summary = "decoding: cache rows [0, R) resident across tokens, the rest streamed past each query row in blocks of w rows",
	.min_memory = decode_min_memory,
	.plan = decode_plan,
	.run = decode_run,
	.flags = PS_STRATEGY_EXACT | PS_STRATEGY_DECODE | PS_STRATEGY_BEYOND,
};
