/*
 * The implicit attention DAGs: approximate attention (MODEL.md section 1)
 * here, exact attention's parents and products in dags/exact.c; the kinds,
 * the id layout and the decoding are shared.
 */
#include "pebblesim/attention.h"
#include "pebblesim/engine.h"
#include "pebblesim/limits.h"

#include "exact.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

const struct ps_kind_info ps_kinds[PS_KIND_COUNT] = {
	[PS_KIND_Q] = { "Q", 2, { PS_C_I, PS_C_A }, PS_ROLE_INPUT },
	[PS_KIND_K] = { "K", 2, { PS_C_J, PS_C_A }, PS_ROLE_INPUT },
	[PS_KIND_V] = { "V", 2, { PS_C_J, PS_C_B }, PS_ROLE_INPUT },
	[PS_KIND_U1] = { "U1", 2, { PS_C_I, PS_C_M }, PS_ROLE_PLAIN },
	[PS_KIND_U2] = { "U2", 2, { PS_C_J, PS_C_M }, PS_ROLE_PLAIN },
	[PS_KIND_H] = { "H", 2, { PS_C_M, PS_C_B }, PS_ROLE_SUM },
	[PS_KIND_N] = { "N", 2, { PS_C_I, PS_C_B }, PS_ROLE_SUM },
	[PS_KIND_A] = { "A", 2, { PS_C_I, PS_C_B }, PS_ROLE_PLAIN },
	[PS_KIND_P2] = { "P2", 3, { PS_C_J, PS_C_M, PS_C_B }, PS_ROLE_PRODUCT },
	[PS_KIND_P1] = { "P1", 3, { PS_C_I, PS_C_M, PS_C_B }, PS_ROLE_PRODUCT },
	[PS_KIND_S] = { "S", 2, { PS_C_I, PS_C_J }, PS_ROLE_SUM },
	[PS_KIND_E] = { "E", 2, { PS_C_I, PS_C_J }, PS_ROLE_PLAIN },
	[PS_KIND_O] = { "O", 2, { PS_C_I, PS_C_B }, PS_ROLE_SUM },
	[PS_KIND_PS] = { "PS", 3, { PS_C_I, PS_C_J, PS_C_A }, PS_ROLE_PRODUCT },
	[PS_KIND_PO] = { "PO", 3, { PS_C_I, PS_C_J, PS_C_B }, PS_ROLE_PRODUCT },
	[PS_KIND_HJ] = { "H", 3, { PS_C_J, PS_C_M, PS_C_B }, PS_ROLE_SUM },
	[PS_KIND_HC] = { "HC", 3, { PS_C_J, PS_C_M, PS_C_B }, PS_ROLE_PRODUCT },
};

enum ps_kind ps_attention_product_kind(enum ps_kind into)
{
	switch (into) {
	case PS_KIND_H:
	case PS_KIND_HJ:
		return PS_KIND_P2;
	case PS_KIND_N:
		return PS_KIND_P1;
	case PS_KIND_S:
		return PS_KIND_PS;
	case PS_KIND_O:
		return PS_KIND_PO;
	default:
		return PS_KIND_COUNT;
	}
}

enum ps_kind ps_attention_fused_kind(enum ps_kind into)
{
	switch (into) {
	case PS_KIND_H:
	case PS_KIND_HJ:
		return PS_KIND_U2;
	case PS_KIND_N:
		return PS_KIND_U1;
	case PS_KIND_O:
		return PS_KIND_E;
	default:
		return PS_KIND_COUNT; /* S: its products' parents are inputs */
	}
}

int ps_kind_lookup(const char *name)
{
	for (int k = 0; k < PS_KIND_COUNT; k++)
		if (!strcmp(ps_kinds[k].name, name))
			return k;
	return -1;
}

const char *ps_coord_letter(enum ps_coord_name c)
{
	static const char *const letters[] = { "i", "j", "a", "b", "m" };

	return letters[c];
}

static const struct ps_attention *as_att(const struct ps_dag *dag)
{
	return (const struct ps_attention *)dag;
}

/* The kind of node v: the last in id order whose first id is at most v. */
static enum ps_kind kind_of(const struct ps_attention *att, ps_node v)
{
	for (unsigned t = att->layout_count; t-- > 0;)
		if (v >= att->base[att->layout[t]])
			return att->layout[t];
	return att->layout[0];
}

enum ps_kind ps_attention_decode(const struct ps_attention *att, ps_node v,
				 uint64_t c[3])
{
	enum ps_kind k = kind_of(att, v);
	uint64_t off;

	off = v - att->base[k];
	if (ps_kinds[k].arity == 3) {
		c[2] = off % att->ext[k][2];
		off /= att->ext[k][2];
	}
	c[1] = off % att->ext[k][1];
	c[0] = off / att->ext[k][1];
	return k;
}

static enum ps_role att_role(const struct ps_dag *dag, ps_node v)
{
	uint64_t c[3];
	enum ps_kind k;

	/* the products close the id range */
	if (v >= dag->state_count)
		return PS_ROLE_PRODUCT;
	k = ps_attention_decode(as_att(dag), v, c);
	return ps_attention_role(as_att(dag), k, c[0]);
}

static enum ps_role att_role_run(const struct ps_dag *dag, ps_node v,
				 ps_node *end)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];
	enum ps_kind k = ps_attention_decode(att, v, c);

	*end = att->base[k] + att->count[k];
	/* decoding: the prompt's rows end the run where the generated begin */
	if (att->decode && c[0] < att->decode && ps_kinds[k].arity == 2)
		*end = ps_attention_id2(att, k, att->decode, 0);
	else if (att->decode && c[0] < att->decode && k == PS_KIND_HJ)
		*end = ps_attention_id3(att, k, att->decode, 0, 0);
	return ps_attention_role(att, k, c[0]);
}

bool ps_attention_exists(const struct ps_attention *att, enum ps_kind k,
			 const uint64_t *c)
{
	if (!ps_attention_has(att, k) || c[0] < att->first_row[k])
		return false;
	/* MODEL.md section 7: row i sees keys j <= i */
	if (att->causal && att->exact && c[1] > c[0] &&
	    (k == PS_KIND_S || k == PS_KIND_E || k == PS_KIND_PS || k == PS_KIND_PO))
		return false;
	return true;
}

/* The output a generated row's Q, K and V read (MODEL.md section 8): A,
 * or N without normalisation. */
static enum ps_kind token_kind(const struct ps_attention *att)
{
	return att->normalize ? PS_KIND_A : PS_KIND_N;
}

static uint64_t att_parent_count(const struct ps_dag *dag, ps_node v)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];
	const enum ps_kind k = ps_attention_decode(att, v, c);

	/* rows that are no node's; decoding's inputs: the state H[P-1] and
	 * the last output A[P-1] (N[P-1]) */
	if (c[0] < att->first_row[k] ||
	    (v < att->dag.state_count && ps_attention_role(att, k, c[0]) == PS_ROLE_INPUT))
		return 0;
	switch (k) {
	case PS_KIND_Q:
	case PS_KIND_K:
	case PS_KIND_V: /* a generated row: the inputs answered above */
		return att->d;
	case PS_KIND_U1:
	case PS_KIND_U2:
		return att->mono.support_size[c[1]];
	case PS_KIND_P2:
		return c[2] < att->d ? 2 : 1;
	case PS_KIND_P1:
	case PS_KIND_A:
		return 2;
	case PS_KIND_H:
		return att->n;
	case PS_KIND_HJ:
		return ps_attention_in_degree_at(att, PS_KIND_HJ, c[0]);
	case PS_KIND_HC:
		return 1;
	case PS_KIND_N:
		return att->r;
	default:
		return 0;
	}
}

static ps_node att_parent(const struct ps_dag *dag, ps_node v, uint64_t k)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];

	switch (ps_attention_decode(att, v, c)) {
	case PS_KIND_Q:
	case PS_KIND_K:
	case PS_KIND_V: /* decoding: the previous token's output */
		return ps_attention_id2(att, token_kind(att), c[0] - 1, k);
	case PS_KIND_U1:
		return ps_attention_id2(att, PS_KIND_Q, c[0],
					ps_monomial_support(&att->mono, c[1])[k]);
	case PS_KIND_U2:
		return ps_attention_id2(att, PS_KIND_K, c[0],
					ps_monomial_support(&att->mono, c[1])[k]);
	case PS_KIND_P2:
		return k == 0 ? ps_attention_id2(att, PS_KIND_U2, c[0], c[1])
			      : ps_attention_id2(att, PS_KIND_V, c[0], c[2]);
	case PS_KIND_H:
		return ps_attention_id3(att, PS_KIND_P2, k, c[0], c[1]);
	case PS_KIND_HJ: /* in-edge 0 the new term, 1 the carry */
		return ps_attention_id3(att, k == 0 ? PS_KIND_P2 : PS_KIND_HC, c[0], c[1], c[2]);
	case PS_KIND_HC:
		return ps_attention_id3(att, PS_KIND_HJ, c[0] - 1, c[1], c[2]);
	case PS_KIND_P1:
		return k == 0 ? ps_attention_id2(att, PS_KIND_U1, c[0], c[1]) :
		       att->causal ? ps_attention_id3(att, PS_KIND_HJ, c[0], c[1], c[2]) :
		       ps_attention_id2(att, PS_KIND_H, c[1], c[2]);
	case PS_KIND_N:
		return ps_attention_id3(att, PS_KIND_P1, c[0], k, c[1]);
	case PS_KIND_A:
		return ps_attention_id2(att, PS_KIND_N, c[0],
					k == 0 ? c[1] : att->d);
	default:
		return UINT64_MAX;
	}
}

static void att_product(const struct ps_dag *dag, ps_node p,
			struct ps_product *out)
{
	const struct ps_attention *att = as_att(dag);
	enum ps_kind k = p >= att->base[PS_KIND_P1] ? PS_KIND_P1 : PS_KIND_P2;
	uint64_t off, c[3];

	if (att->causal && p >= att->base[PS_KIND_HC])
		k = PS_KIND_HC;
	off = p - att->base[k];

	/*
	 * (row, m, b), row-major. The two divisions are nearly all of the
	 * cost (the move-by-move baselines decode tens of millions of
	 * products): in 32 bits, about half as slow, whenever the offset
	 * fits, as it does in every DAG those baselines can run.
	 */
	if (off <= UINT32_MAX && att->nb <= UINT32_MAX) {
		uint32_t off32 = (uint32_t)off, nb = (uint32_t)att->nb,
			 r = (uint32_t)att->r, row_m = off32 / nb;

		c[2] = off32 - row_m * nb;
		c[1] = row_m % r;
		c[0] = row_m / r;
	} else {
		c[2] = off % att->nb;
		off /= att->nb;
		c[1] = off % att->r;
		c[0] = off / att->r;
	}
	out->id = p;
	out->transient = 1;
	out->parent_is_sum[0] = false;
	if (k == PS_KIND_HC) {
		/* the previous state as one term: in-edge 1 of H[j,m,b] */
		out->parent[0] = ps_attention_id3(att, PS_KIND_HJ, c[0] - 1, c[1], c[2]);
		out->parent_is_sum[0] = true;
		out->parent[1] = UINT64_MAX;
		out->parent_count = 1;
		out->parent_is_sum[1] = false;
		out->sum = ps_attention_id3(att, PS_KIND_HJ, c[0], c[1], c[2]);
		out->edge = 1;
		out->in_degree = 2;
	} else if (k == PS_KIND_P2) {
		out->parent[0] = ps_attention_id2(att, PS_KIND_U2, c[0], c[1]);
		out->parent[1] = c[2] < att->d ?
			ps_attention_id2(att, PS_KIND_V, c[0], c[2]) : UINT64_MAX;
		out->parent_count = c[2] < att->d ? 2 : 1;
		out->parent_is_sum[1] = false;
		if (att->causal) { /* in-edge 0 of H[j,m,b] */
			out->sum = ps_attention_id3(att, PS_KIND_HJ, c[0], c[1], c[2]);
			out->edge = 0;
			out->in_degree = ps_attention_in_degree_at(att, PS_KIND_HJ, c[0]);
		} else {
			out->sum = ps_attention_id2(att, PS_KIND_H, c[1], c[2]);
			out->edge = c[0];
			out->in_degree = att->n;
		}
	} else {
		out->parent[0] = ps_attention_id2(att, PS_KIND_U1, c[0], c[1]);
		out->parent[1] = att->causal ?
			ps_attention_id3(att, PS_KIND_HJ, c[0], c[1], c[2]) :
			ps_attention_id2(att, PS_KIND_H, c[1], c[2]);
		out->parent_count = 2;
		out->parent_is_sum[1] = true;
		out->sum = ps_attention_id2(att, PS_KIND_N, c[0], c[2]);
		out->edge = c[1];
		out->in_degree = att->r;
	}
}

static void att_sum(const struct ps_dag *dag, ps_node v, struct ps_sum *out)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];

	/* H and N are adjacent kinds, so slots follow the ids */
	enum ps_kind k = ps_attention_decode(att, v, c);

	if (k == PS_KIND_H) {
		out->in_degree = att->n;
	} else if (k == PS_KIND_HJ) {
		out->in_degree = ps_attention_in_degree_at(att, k, c[0]);
	} else {
		out->in_degree = att->r;
	}
}

static ps_node att_output(const struct ps_dag *dag, uint64_t k)
{
	const struct ps_attention *att = as_att(dag);
	const uint64_t p = att->decode, td = (att->n - p) * att->d;

	/* decoding: A[t] (N[t]) for t >= P, then the last state H[n-1] */
	if (p && !att->exact)
		return k < td ? ps_attention_id2(att, token_kind(att), p, 0) + k :
		       ps_attention_id3(att, PS_KIND_HJ, att->n - 1, 0, 0) + (k - td);
	return att->base[att->normalize ? PS_KIND_A :
			 att->exact ? PS_KIND_O : PS_KIND_N] + k;
}

static void att_describe(const struct ps_dag *dag, ps_node v, char *buf,
			 size_t len)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];
	enum ps_kind k;
	size_t used;

	if (v >= att->dag.node_count) {
		snprintf(buf, len, "node %llu", (unsigned long long)v);
		return;
	}
	k = ps_attention_decode(att, v, c);
	used = (size_t)snprintf(buf, len, "%s[", ps_kinds[k].name);
	for (unsigned p = 0; p < ps_kinds[k].arity && used < len; p++) {
		used += (size_t)snprintf(buf + used, len - used, "%s%llu",
					 p ? "," : "", (unsigned long long)c[p]);
	}
	if (used < len)
		snprintf(buf + used, len - used, "]");
}

/* I/O by array: an array is a kind, numbered as enum ps_kind (the block
 * path counts a block's loads and saves by its kind), listed in the order
 * of MODEL.md's tables, the output A last. */
_Static_assert(PS_KIND_PO < PS_ARRAY_MAX, "a kind is an array");

static unsigned att_array(const struct ps_dag *dag, ps_node v)
{
	return ps_kind_array(kind_of(as_att(dag), v));
}

static const char *att_array_at(const struct ps_dag *dag, unsigned k,
				unsigned *array)
{
	static const enum ps_kind approx[] = {
		PS_KIND_Q, PS_KIND_K, PS_KIND_V, PS_KIND_U1, PS_KIND_U2,
		PS_KIND_H, PS_KIND_N, PS_KIND_A,
	};
	static const enum ps_kind exact[] = {
		PS_KIND_Q, PS_KIND_K, PS_KIND_V, PS_KIND_S, PS_KIND_E,
		PS_KIND_O, PS_KIND_A,
	};
	const struct ps_attention *att = as_att(dag);
	const enum ps_kind *order = att->exact ? exact : approx;
	unsigned count = att->exact ? sizeof(exact) / sizeof(exact[0]) :
			 sizeof(approx) / sizeof(approx[0]);

	/* A is last, and absent without normalisation; H is the causal
	 * state's array too */
	if (k >= count || !ps_attention_has(att, (enum ps_kind)ps_attention_kind(att, order[k])))
		return NULL;
	*array = (unsigned)order[k];
	return ps_kinds[order[k]].name;
}

static const struct ps_dag_ops attention_ops = {
	.name = "approx-attention",
	.role = att_role,
	.role_run = att_role_run,
	.parent_count = att_parent_count,
	.parent = att_parent,
	.product = att_product,
	.sum = att_sum,
	.output = att_output,
	.describe = att_describe,
	.array = att_array,
	.array_at = att_array_at,
};

static const struct ps_dag_ops exact_ops = {
	.name = "exact-attention",
	.role = att_role,
	.role_run = att_role_run,
	.parent_count = ps_exact_parent_count,
	.parent = ps_exact_parent,
	.product = ps_exact_product,
	.sum = ps_exact_sum,
	.output = ps_exact_output,
	.describe = att_describe,
	.array = att_array,
	.array_at = att_array_at,
};

void ps_attention_free(struct ps_attention *att)
{
	ps_monomials_free(&att->mono);
	memset(att, 0, sizeof(*att));
}

/* Kind k has coordinates of extents e0 x e1 (x e2 when e2). */
static void set_kind(struct ps_attention *att, enum ps_kind k, uint64_t e0,
		     uint64_t e1, uint64_t e2)
{
	att->ext[k][0] = e0;
	att->ext[k][1] = e1;
	att->ext[k][2] = e2;
	att->count[k] = e0 * e1 * (e2 ? e2 : 1);
	att->layout[att->layout_count++] = k;
}

/* Bases in layout order; the state ends after A (or the last sum). */
static void lay_out(struct ps_attention *att, enum ps_kind last_state)
{
	uint64_t next = 0;

	for (unsigned t = 0; t < att->layout_count; t++) {
		att->base[att->layout[t]] = next;
		next += att->count[att->layout[t]];
		if (att->layout[t] == last_state)
			att->dag.state_count = next;
	}
	att->dag.node_count = next;
}

/*
 * Decoding (MODEL.md section 8) of approximate attention: rows t >= P,
 * their Q, K and V plain with parents A[t-1, b] (N[t-1, b] without
 * normalisation) for every b < d; the prompt's state H[P-1] and its last
 * output A[P-1] (N[P-1]) are the inputs, nothing below them exists; the
 * outputs are A[t] (N[t]) for t >= P and the last state H[n-1]. The ids
 * keep the grid of the causal DAG.
 */
static void decode_approx(struct ps_attention *att)
{
	const uint64_t p = att->decode, t = att->n - p, d = att->d, nb = att->nb;
	const uint64_t rows = t * att->r * nb;

	att->role[PS_KIND_Q] = att->role[PS_KIND_K] = att->role[PS_KIND_V] = PS_ROLE_PLAIN;
	att->prompt_role[PS_KIND_HJ] = att->prompt_role[token_kind(att)] = PS_ROLE_INPUT;
	for (unsigned k = 0; k < PS_KIND_COUNT; k++)
		att->first_row[k] = p;
	att->first_row[PS_KIND_HJ] = att->first_row[token_kind(att)] = p - 1;
	/* Q, K, V from the last output; U1, U2 from supports; P2 from U2 and
	 * V; H from P2 and HC; HC from H; P1; N; A */
	att->dag.edge_count = 3 * t * d * d + 2 * t * att->support_total +
			      t * att->r * (nb + d) + 2 * rows + rows + 2 * rows + rows +
			      (att->normalize ? 2 * t * d : 0);
	att->dag.sum_count = rows + t * nb;
	att->dag.output_count = t * d + att->r * nb;
}

static int init_approx(struct ps_attention *att,
		       const struct ps_attention_params *p, struct ps_error *err)
{
	uint64_t nd, nr, nrb, edges = 0;
	int rc = ps_monomials_init(&att->mono, (uint32_t)p->d, (uint32_t)p->g, err);

	if (rc)
		return rc;
	att->r = att->mono.r;
	if (ps_mul_u64(p->n, p->d, &nd) || ps_mul_u64(p->n, att->r, &nr) ||
	    ps_mul_u64(nr, att->nb, &nrb) || nrb > PS_MAX_NODES / 4)
		return ps_error_set(err, PS_ENOMEM,
				    "the DAG for n = %llu, d = %llu, g = %llu has more than 2^60 product nodes",
				    (unsigned long long)p->n,
				    (unsigned long long)p->d,
				    (unsigned long long)p->g);
	if (p->causal && nrb > PS_MAX_NODES / 8)
		return ps_error_set(err, PS_ENOMEM,
				    "the causal DAG for n = %llu, d = %llu, g = %llu has more than 2^59 state nodes",
				    (unsigned long long)p->n,
				    (unsigned long long)p->d,
				    (unsigned long long)p->g);
	set_kind(att, PS_KIND_Q, p->n, p->d, 0);
	set_kind(att, PS_KIND_K, p->n, p->d, 0);
	set_kind(att, PS_KIND_V, p->n, p->d, 0);
	set_kind(att, PS_KIND_U1, p->n, att->r, 0);
	set_kind(att, PS_KIND_U2, p->n, att->r, 0);
	/* the state: H[m,b], or causal H[j,m,b] (MODEL.md section 7) */
	if (p->causal)
		set_kind(att, PS_KIND_HJ, p->n, att->r, att->nb);
	else
		set_kind(att, PS_KIND_H, att->r, att->nb, 0);
	set_kind(att, PS_KIND_N, p->n, att->nb, 0);
	if (p->normalize)
		set_kind(att, PS_KIND_A, p->n, p->d, 0);
	set_kind(att, PS_KIND_P2, p->n, att->r, att->nb);
	set_kind(att, PS_KIND_P1, p->n, att->r, att->nb);
	if (p->causal) { /* the carry HC[j,m,b], j >= 1 */
		set_kind(att, PS_KIND_HC, p->n, att->r, att->nb);
		att->first_row[PS_KIND_HC] = 1;
	}
	lay_out(att, p->normalize ? PS_KIND_A : PS_KIND_N);

	for (uint64_t m = 0; m < att->r; m++)
		att->support_total += att->mono.support_size[m];
	/* in-edges: U1, U2 from supports; P2 from U2 and V (b < d); H, P1, N, A */
	edges += 2 * p->n * att->support_total;
	edges += nr * (att->nb + att->d); /* P2 */
	edges += nrb;           /* H: P2 (and HC, causal) */
	edges += 2 * nrb;       /* P1 */
	edges += nrb;           /* N  */
	edges += p->normalize ? 2 * nd : 0; /* A */
	if (p->causal) /* HC from H[j-1], and into H[j] */
		edges += 2 * (nrb - att->r * att->nb);

	att->dag.ops = &attention_ops;
	att->dag.sum_count = att->count[PS_KIND_H] + att->count[PS_KIND_HJ] +
			     att->count[PS_KIND_N];
	att->dag.edge_count = edges;
	att->dag.output_count = p->normalize ? nd : p->n * att->nb;
	if (p->decode)
		decode_approx(att);
	return PS_OK;
}

/* Exact attention: Q, K, V, E, S, O, A, then the products PS and PO. */
static int init_exact(struct ps_attention *att, struct ps_error *err)
{
	const uint64_t n = att->n, d = att->d, nb = att->nb, p = att->decode;
	uint64_t nn, nnb, pairs;

	if (ps_mul_u64(n, n, &nn) || ps_mul_u64(nn, nb, &nnb) ||
	    nnb > PS_MAX_NODES / 4)
		return ps_error_set(err, PS_ENOMEM,
				    "the exact-attention DAG for n = %llu, d = %llu has more than 2^60 product nodes",
				    (unsigned long long)n, (unsigned long long)d);
	set_kind(att, PS_KIND_Q, n, d, 0);
	set_kind(att, PS_KIND_K, n, d, 0);
	set_kind(att, PS_KIND_V, n, d, 0);
	set_kind(att, PS_KIND_E, n, n, 0);
	set_kind(att, PS_KIND_S, n, n, 0);
	set_kind(att, PS_KIND_O, n, nb, 0);
	if (att->normalize)
		set_kind(att, PS_KIND_A, n, d, 0);
	set_kind(att, PS_KIND_PS, n, n, d);
	set_kind(att, PS_KIND_PO, n, n, nb);
	lay_out(att, att->normalize ? PS_KIND_A : PS_KIND_O);
	att->dag.ops = &exact_ops;
	/* causal: the pairs j <= i, n (n + 1) / 2 of them; decoding, those
	 * of the generated rows t >= P alone */
	pairs = att->causal ? n * (n + 1) / 2 - p * (p + 1) / 2 : nn;
	att->dag.sum_count = pairs + (n - p) * nb;
	/* PS (2 each), S, E, PO (E, and V for b < d), O, A; decoding, Q, K
	 * and V of each generated row read d entries of the last output */
	att->dag.edge_count = 2 * pairs * d + pairs * d + pairs + pairs * (nb + d) +
			      pairs * nb + (att->normalize ? 2 * (n - p) * d : 0) +
			      (p ? 3 * (n - p) * d * d : 0);
	att->dag.output_count = att->normalize ? n * d : n * nb;
	if (p) {
		/* A[t] (O[t]) and the grown cache K[t], V[t] */
		att->dag.output_count = 3 * (n - p) * d;
		ps_exact_decode_roles(att);
	}
	return PS_OK;
}

int ps_attention_init(struct ps_attention *att,
		      const struct ps_attention_params *p, struct ps_error *err)
{
	int rc;

	memset(att, 0, sizeof(*att));
	if (p->n == 0)
		return ps_error_set(err, PS_EINPUT, "n must be at least 1");
	if (p->d == 0)
		return ps_error_set(err, PS_EINPUT, "d must be at least 1");
	if (p->d > UINT32_MAX || p->g > UINT32_MAX)
		return ps_error_set(err, PS_ENOMEM, "d or g beyond 2^32");
	if (p->exact && p->g)
		return ps_error_set(err, PS_EINPUT,
				    "g does not apply to exact attention");
	if (p->decode && !p->causal)
		return ps_error_set(err, PS_EINPUT,
				    "decoding (--decode) is causal: it needs --causal");
	if (p->decode && p->decode >= p->n)
		return ps_error_set(err, PS_EINPUT,
				    "the prompt length P = %llu of --decode must be below n = %llu",
				    (unsigned long long)p->decode,
				    (unsigned long long)p->n);
	att->n = p->n;
	att->d = p->d;
	att->g = p->g;
	att->normalize = p->normalize;
	att->exact = p->exact;
	att->causal = p->causal;
	att->decode = p->decode;
	att->nb = p->d + (p->normalize ? 1 : 0);
	for (unsigned k = 0; k < PS_KIND_COUNT; k++)
		att->role[k] = att->prompt_role[k] = ps_kinds[k].role;
	rc = p->exact ? init_exact(att, err) : init_approx(att, p, err);
	if (rc)
		ps_attention_free(att);
	return rc;
}

int ps_attention_estimate(const struct ps_attention_params *p,
			  uint64_t *bytes)
{
	uint64_t r, nb = p->d + (p->normalize ? 1 : 0), nr, nn, nd, states;

	if (ps_mul_u64(p->n, p->d, &nd) || nd > UINT64_MAX / 8)
		return -1;
	if (p->exact) {
		/* plain: E (n^2) and A; sums: S (n^2) and O */
		if (ps_mul_u64(p->n, p->n, &nn) || nn > UINT64_MAX / 8)
			return -1;
		*bytes = ps_engine_state_bytes_of(3 * nd + 2 * nn + p->n * nb +
						  (p->normalize ? nd : 0),
						  3 * nd, nn + (p->normalize ? nd : 0),
						  nn + p->n * nb, nd);
		return 0;
	}
	if (ps_tau(p->d, p->g, &r) || ps_mul_u64(p->n, r, &nr) || nr > UINT64_MAX / 8 ||
	    r > UINT64_MAX / (2 + 8 * 64))
		return -1;
	/* plain: U1, U2 and A; sums: H (causal: a state a row) and N; and
	 * the monomials, about 2 + 8g bytes each */
	if (p->causal && (ps_mul_u64(nr, nb, &states) || states > UINT64_MAX / 64))
		return -1;
	if (!p->causal)
		states = r * nb;
	*bytes = ps_engine_state_bytes_of(3 * nd + 2 * nr + (p->normalize ? nd : 0) +
					  states + p->n * nb,
					  3 * nd, 2 * nr + (p->normalize ? nd : 0),
					  states + p->n * nb, nd) +
		 r * (2 + 8 * p->g);
	return 0;
}

uint64_t ps_attention_plan_bytes(uint64_t d, uint64_t r, uint64_t g,
				 uint64_t tiles)
{
	/* the tiles' features: at most g a monomial and d a tile */
	uint64_t features = g * r;

	if (tiles && d < features / tiles)
		features = d * tiles;
	/* the monomials' tile numbers, their order and the counting sort's
	 * starts; the tiles (four words each); a mark and two lists of
	 * features; the tiles' features, doubled while they grow */
	return 8 * (2 * r + tiles + 1) + 32 * tiles + 17 * d + 16 * features;
}

static int check(const struct ps_attention_params *p, bool state,
		 struct ps_error *err)
{
	uint64_t bytes, r;
	char what[160];

	if (p->g > 64)
		return ps_error_set(err, PS_ENOMEM,
				    "degree g = %llu exceeds the limit of 64",
				    (unsigned long long)p->g);
	if (p->d > UINT32_MAX)
		return ps_error_set(err, PS_ENOMEM, "d or g beyond 2^32");
	if (ps_tau(p->d, p->g, &r) || r > PS_MAX_MONOMIALS)
		return ps_error_set(err, PS_ENOMEM,
				    "r = C(d+g, g) for d = %llu, g = %llu exceeds the limit of %llu monomials",
				    (unsigned long long)p->d, (unsigned long long)p->g,
				    (unsigned long long)PS_MAX_MONOMIALS);
	if (ps_attention_estimate(p, &bytes))
		return ps_error_set(err, PS_ENOMEM,
				    "the DAG for n = %llu, d = %llu, g = %llu is beyond 64-bit sizes",
				    (unsigned long long)p->n, (unsigned long long)p->d,
				    (unsigned long long)p->g);
	if (!state) /* the monomials only: a run checks its state later */
		bytes = p->exact ? 0 : r * (2 + 8 * p->g);
	if (!p->exact) /* and the largest tables a tiling plan builds */
		bytes += ps_attention_plan_bytes(p->d, r, p->g, r);
	snprintf(what, sizeof(what), "the %s for n = %llu, d = %llu, g = %llu",
		 state ? "pebble state" : "monomial table with the plan's tiles",
		 (unsigned long long)p->n, (unsigned long long)p->d,
		 (unsigned long long)p->g);
	return ps_memory_fits(bytes, what, err);
}

int ps_attention_check(const struct ps_attention_params *p,
		       struct ps_error *err)
{
	return check(p, true, err);
}

int ps_attention_check_dag(const struct ps_attention_params *p,
			   struct ps_error *err)
{
	return check(p, false, err);
}
