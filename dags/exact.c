/*
 * Exact attention (MODEL.md section 5), as Saha and Ye pebble it:
 *
 *   PS[i,j,a] = Q[i,a] K[j,a]        S[i,j] = sum_a PS[i,j,a]
 *   E[i,j] = exp(S[i,j] / sqrt d)    PO[i,j,b] = E[i,j] V[j,b] (b < d; E alone at b = d)
 *   O[i,b] = sum_j PO[i,j,b]         A[i,b] = O[i,b] / O[i,d]
 *
 * Ids by the shared arithmetic of attention.h. Causal (MODEL.md section
 * 7): PS, S, E and PO only for j <= i, so O[i,b] has i + 1 in-edges; the
 * ids keep the full n x n grid, those with j > i never named (ops.c
 * refuses them) and answered here as the grid's.
 *
 * Decoding (section 8): rows t >= P only, Q[t], K[t], V[t] plain with
 * parents A[t-1, b] for every b < d (O[t-1, b] without normalisation);
 * the cache K, V of rows j < P and A[P-1] (O[P-1] without normalisation)
 * are the inputs; the outputs A[t] (O[t]) and the grown cache K[t], V[t].
 */
#include "exact.h"

static const struct ps_attention *as_att(const struct ps_dag *dag)
{
	return (const struct ps_attention *)dag;
}

/* The sums or outputs a generated row's Q, K and V read: A, or O. */
static enum ps_kind token_kind(const struct ps_attention *att)
{
	return att->normalize ? PS_KIND_A : PS_KIND_O;
}

uint64_t ps_exact_parent_count(const struct ps_dag *dag, ps_node v)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];
	const enum ps_kind k = ps_attention_decode(att, v, c);

	/* decoding: the prompt's last output, A[P-1] (O[P-1]), is an input */
	if (v < att->dag.state_count && ps_attention_role(att, k, c[0]) == PS_ROLE_INPUT)
		return 0;
	switch (k) {
	case PS_KIND_Q:
	case PS_KIND_K:
	case PS_KIND_V:
		return att->d; /* a generated row: the inputs answered above */
	case PS_KIND_PS:
	case PS_KIND_A:
		return 2;
	case PS_KIND_E:
		return 1;
	case PS_KIND_PO:
		return c[2] < att->d ? 2 : 1;
	case PS_KIND_S:
		return att->d;
	case PS_KIND_O:
		return ps_attention_in_degree_at(att, PS_KIND_O, c[0]);
	default:
		return 0;
	}
}

ps_node ps_exact_parent(const struct ps_dag *dag, ps_node v, uint64_t k)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];

	switch (ps_attention_decode(att, v, c)) {
	case PS_KIND_Q:
	case PS_KIND_K:
	case PS_KIND_V:
		/* a generated row: the previous token's output */
		return ps_attention_id2(att, token_kind(att), c[0] - 1, k);
	case PS_KIND_PS:
		return k == 0 ? ps_attention_id2(att, PS_KIND_Q, c[0], c[2])
			      : ps_attention_id2(att, PS_KIND_K, c[1], c[2]);
	case PS_KIND_S:
		return ps_attention_id3(att, PS_KIND_PS, c[0], c[1], k);
	case PS_KIND_E:
		return ps_attention_id2(att, PS_KIND_S, c[0], c[1]);
	case PS_KIND_PO:
		return k == 0 ? ps_attention_id2(att, PS_KIND_E, c[0], c[1])
			      : ps_attention_id2(att, PS_KIND_V, c[1], c[2]);
	case PS_KIND_O:
		return ps_attention_id3(att, PS_KIND_PO, c[0], k, c[1]);
	case PS_KIND_A:
		return ps_attention_id2(att, PS_KIND_O, c[0],
					k == 0 ? c[1] : att->d);
	default:
		return UINT64_MAX;
	}
}

ps_node ps_exact_output(const struct ps_dag *dag, uint64_t k)
{
	const struct ps_attention *att = as_att(dag);
	const enum ps_kind out = token_kind(att);
	const uint64_t p = att->decode, td = (att->n - p) * att->d;

	if (!p) /* A, or O (every column) without normalisation */
		return att->base[out] + k;
	/* A[t] (O[t]: |B| = d) for t >= P, then K[t] and V[t] */
	if (k < td)
		return ps_attention_id2(att, out, p, 0) + k;
	if (k < 2 * td)
		return ps_attention_id2(att, PS_KIND_K, p, 0) + (k - td);
	return ps_attention_id2(att, PS_KIND_V, p, 0) + (k - 2 * td);
}

void ps_exact_decode_roles(struct ps_attention *att)
{
	const uint64_t p = att->decode;

	/* the generated rows: Q, K, V plain; the prompt's: the cache is the
	 * input, Q absent, and the last output A[P-1] (O[P-1]) an input */
	att->role[PS_KIND_Q] = att->role[PS_KIND_K] = att->role[PS_KIND_V] = PS_ROLE_PLAIN;
	att->prompt_role[token_kind(att)] = PS_ROLE_INPUT;
	for (unsigned k = 0; k < PS_KIND_COUNT; k++)
		att->first_row[k] = p;
	att->first_row[PS_KIND_K] = att->first_row[PS_KIND_V] = 0;
	att->first_row[token_kind(att)] = p - 1;
}

void ps_exact_product(const struct ps_dag *dag, ps_node p,
		      struct ps_product *out)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];
	enum ps_kind k = ps_attention_decode(att, p, c);

	out->id = p;
	out->transient = 1;
	out->parent_is_sum[0] = false;
	out->parent_is_sum[1] = false;
	if (k == PS_KIND_PS) {
		/* (i, j, a): edge a of S[i,j] */
		out->parent[0] = ps_attention_id2(att, PS_KIND_Q, c[0], c[2]);
		out->parent[1] = ps_attention_id2(att, PS_KIND_K, c[1], c[2]);
		out->parent_count = 2;
		out->sum = ps_attention_id2(att, PS_KIND_S, c[0], c[1]);
		out->edge = c[2];
		out->in_degree = att->d;
	} else {
		/* (i, j, b): edge j of O[i,b] */
		out->parent[0] = ps_attention_id2(att, PS_KIND_E, c[0], c[1]);
		out->parent[1] = c[2] < att->d ?
			ps_attention_id2(att, PS_KIND_V, c[1], c[2]) : UINT64_MAX;
		out->parent_count = c[2] < att->d ? 2 : 1;
		out->sum = ps_attention_id2(att, PS_KIND_O, c[0], c[2]);
		out->edge = c[1];
		out->in_degree = ps_attention_in_degree_at(att, PS_KIND_O, c[0]);
	}
}

void ps_exact_sum(const struct ps_dag *dag, ps_node v, struct ps_sum *out)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];
	enum ps_kind k = ps_attention_decode(att, v, c);

	out->in_degree = ps_attention_in_degree_at(att, k, c[0]);
}
