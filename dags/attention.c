/*
 * The implicit approximate-attention DAG (MODEL.md section 1).
 */
#include "pebblesim/attention.h"
#include "pebblesim/limits.h"

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
};

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

uint64_t ps_attention_extent(const struct ps_attention *att, enum ps_kind k,
			     unsigned pos)
{
	switch (ps_kinds[k].coord[pos]) {
	case PS_C_I:
	case PS_C_J:
		return att->n;
	case PS_C_A:
		return att->d;
	case PS_C_M:
		return att->r;
	case PS_C_B:
		/* V and A have b < d; the ones column d is not a node of them */
		return (k == PS_KIND_V || k == PS_KIND_A) ? att->d : att->nb;
	}
	return 0;
}

static const struct ps_attention *as_att(const struct ps_dag *dag)
{
	return (const struct ps_attention *)dag;
}

enum ps_kind ps_attention_decode(const struct ps_attention *att, ps_node v,
				 uint64_t c[3])
{
	enum ps_kind k = PS_KIND_COUNT;
	uint64_t off, e1, e2;

	for (int t = PS_KIND_COUNT - 1; t >= 0; t--)
		if (att->count[t] && v >= att->base[t]) {
			k = (enum ps_kind)t;
			break;
		}
	off = v - att->base[k];
	if (ps_kinds[k].arity == 3) {
		e1 = att->r;
		e2 = att->nb;
		c[2] = off % e2;
		off /= e2;
		c[1] = off % e1;
		c[0] = off / e1;
	} else {
		e1 = ps_attention_extent(att, k, 1);
		c[1] = off % e1;
		c[0] = off / e1;
	}
	return k;
}

static enum ps_role att_role(const struct ps_dag *dag, ps_node v)
{
	uint64_t c[3];

	/* the products close the id range */
	if (v >= dag->state_count)
		return PS_ROLE_PRODUCT;
	return ps_kinds[ps_attention_decode(as_att(dag), v, c)].role;
}

static enum ps_role att_role_run(const struct ps_dag *dag, ps_node v,
				 ps_node *end)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];
	enum ps_kind k = ps_attention_decode(att, v, c);

	*end = att->base[k] + att->count[k];
	return ps_kinds[k].role;
}

static uint64_t att_parent_count(const struct ps_dag *dag, ps_node v)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];

	switch (ps_attention_decode(att, v, c)) {
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
	case PS_KIND_P1:
		return k == 0 ? ps_attention_id2(att, PS_KIND_U1, c[0], c[1])
			      : ps_attention_id2(att, PS_KIND_H, c[1], c[2]);
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
	uint64_t off = p - att->base[k], c[3];

	/* (row, m, b), row-major */
	c[2] = off % att->nb;
	off /= att->nb;
	c[1] = off % att->r;
	c[0] = off / att->r;
	out->id = p;
	out->transient = 1;
	out->parent_is_sum[0] = false;
	if (k == PS_KIND_P2) {
		out->parent[0] = ps_attention_id2(att, PS_KIND_U2, c[0], c[1]);
		out->parent[1] = c[2] < att->d ?
			ps_attention_id2(att, PS_KIND_V, c[0], c[2]) : UINT64_MAX;
		out->parent_count = c[2] < att->d ? 2 : 1;
		out->parent_is_sum[1] = false;
		out->sum = ps_attention_id2(att, PS_KIND_H, c[1], c[2]);
		out->sum_slot = out->sum - att->base[PS_KIND_H];
		out->edge = c[0];
		out->edge_bit = ps_attention_h_edge(att, c[1], c[2], c[0]);
		out->in_degree = att->n;
	} else {
		out->parent[0] = ps_attention_id2(att, PS_KIND_U1, c[0], c[1]);
		out->parent[1] = ps_attention_id2(att, PS_KIND_H, c[1], c[2]);
		out->parent_count = 2;
		out->parent_is_sum[1] = true;
		out->sum = ps_attention_id2(att, PS_KIND_N, c[0], c[2]);
		out->sum_slot = out->sum - att->base[PS_KIND_H];
		out->edge = c[1];
		out->edge_bit = ps_attention_n_edge(att, c[0], c[2], c[1]);
		out->in_degree = att->r;
	}
}

static void att_sum(const struct ps_dag *dag, ps_node v, struct ps_sum *out)
{
	const struct ps_attention *att = as_att(dag);
	uint64_t c[3];

	/* H and N are adjacent kinds, so slots follow the ids */
	out->slot = v - att->base[PS_KIND_H];
	if (ps_attention_decode(att, v, c) == PS_KIND_H) {
		out->edge_base = ps_attention_h_edge(att, c[0], c[1], 0);
		out->in_degree = att->n;
	} else {
		out->edge_base = ps_attention_n_edge(att, c[0], c[1], 0);
		out->in_degree = att->r;
	}
}

static ps_node att_output(const struct ps_dag *dag, uint64_t k)
{
	const struct ps_attention *att = as_att(dag);

	return att->base[att->normalize ? PS_KIND_A : PS_KIND_N] + k;
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
};

void ps_attention_free(struct ps_attention *att)
{
	ps_monomials_free(&att->mono);
	memset(att, 0, sizeof(*att));
}

int ps_attention_init(struct ps_attention *att,
		      const struct ps_attention_params *p, struct ps_error *err)
{
	static const enum ps_kind order[PS_KIND_COUNT] = {
		PS_KIND_Q, PS_KIND_K, PS_KIND_V, PS_KIND_U1, PS_KIND_U2,
		PS_KIND_H, PS_KIND_N, PS_KIND_A, PS_KIND_P2, PS_KIND_P1,
	};
	uint64_t next = 0, nd, nr, nrb, edges = 0, t;
	int rc;

	memset(att, 0, sizeof(*att));
	if (p->n == 0)
		return ps_error_set(err, PS_EINPUT, "n must be at least 1");
	if (p->d == 0)
		return ps_error_set(err, PS_EINPUT, "d must be at least 1");
	if (p->d > UINT32_MAX || p->g > UINT32_MAX)
		return ps_error_set(err, PS_ENOMEM, "d or g beyond 2^32");
	rc = ps_monomials_init(&att->mono, (uint32_t)p->d, (uint32_t)p->g, err);
	if (rc)
		return rc;
	att->n = p->n;
	att->d = p->d;
	att->g = p->g;
	att->r = att->mono.r;
	att->normalize = p->normalize;
	att->nb = p->d + (p->normalize ? 1 : 0);

	if (ps_mul_u64(p->n, p->d, &nd) || ps_mul_u64(p->n, att->r, &nr) ||
	    ps_mul_u64(nr, att->nb, &nrb) || nrb > PS_MAX_NODES / 4) {
		ps_attention_free(att);
		return ps_error_set(err, PS_ENOMEM,
				    "the DAG for n = %llu, d = %llu, g = %llu has more than 2^60 product nodes",
				    (unsigned long long)p->n,
				    (unsigned long long)p->d,
				    (unsigned long long)p->g);
	}
	att->count[PS_KIND_Q] = nd;
	att->count[PS_KIND_K] = nd;
	att->count[PS_KIND_V] = nd;
	att->count[PS_KIND_U1] = nr;
	att->count[PS_KIND_U2] = nr;
	att->count[PS_KIND_H] = att->r * att->nb;
	att->count[PS_KIND_N] = p->n * att->nb;
	att->count[PS_KIND_A] = p->normalize ? nd : 0;
	att->count[PS_KIND_P2] = nrb;
	att->count[PS_KIND_P1] = nrb;
	for (int t2 = 0; t2 < PS_KIND_COUNT; t2++) {
		att->base[order[t2]] = next;
		next += att->count[order[t2]];
		if (order[t2] == PS_KIND_A)
			att->dag.state_count = next;
	}

	for (uint64_t m = 0; m < att->r; m++)
		att->support_total += att->mono.support_size[m];
	/* in-edges: U1, U2 from supports; P2 from U2 and V (b < d); H, P1, N, A */
	edges += 2 * p->n * att->support_total;
	t = nr * (att->nb + att->d);
	edges += t;             /* P2 */
	edges += nrb;           /* H  */
	edges += 2 * nrb;       /* P1 */
	edges += nrb;           /* N  */
	edges += p->normalize ? 2 * nd : 0; /* A */

	att->dag.ops = &attention_ops;
	att->dag.node_count = next;
	att->dag.sum_count = att->count[PS_KIND_H] + att->count[PS_KIND_N];
	att->dag.sum_edge_count = 2 * nrb;
	att->dag.edge_count = edges;
	att->dag.output_count = p->normalize ? nd : p->n * att->nb;
	return PS_OK;
}

int ps_attention_estimate(const struct ps_attention_params *p,
			  uint64_t *bytes)
{
	uint64_t r, nb = p->d + (p->normalize ? 1 : 0), nr, nrb;

	if (ps_tau(p->d, p->g, &r) || ps_mul_u64(p->n, r, &nr) ||
	    ps_mul_u64(nr, nb, &nrb) || nrb > UINT64_MAX / 8)
		return -1;
	/* states: Q K V A (4nd), U1 U2 (2nr), H N with 4-byte counters;
	 * edges: 2 n r |B| bits; monomials: about 2 + 8g bytes each */
	*bytes = 4 * p->n * p->d + 2 * nr + (r + p->n) * nb * 5 + nrb / 4 +
		 r * (2 + 8 * p->g);
	return 0;
}

int ps_attention_check(const struct ps_attention_params *p,
		       struct ps_error *err)
{
	const char *source;
	uint64_t bytes, r, limit = ps_memory_limit(&source);

	if (p->g > 64)
		return ps_error_set(err, PS_ENOMEM,
				    "degree g = %llu exceeds the limit of 64",
				    (unsigned long long)p->g);
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
	/* a tenth is left for the process itself */
	if (bytes > limit / 10 * 9)
		return ps_error_set(err, PS_ENOMEM,
				    "the pebble state for n = %llu, d = %llu, g = %llu needs about %.1f GiB; %s %.1f GiB",
				    (unsigned long long)p->n, (unsigned long long)p->d,
				    (unsigned long long)p->g, (double)bytes / (1 << 30),
				    source, (double)limit / (1 << 30));
	return PS_OK;
}
