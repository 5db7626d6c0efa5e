/* The implicit attention DAG: counts, parents, ids, edge bits. */
#include <stdlib.h>
#include <string.h>

#include "pebblesim/attention.h"
#include "tests.h"

static uint64_t binom(uint64_t n, uint64_t k)
{
	uint64_t v;

	ck_assert_int_eq(ps_binom(n, k, &v), 0);
	return v;
}

/* sum over monomials of |support| = sum_s s C(d,s) C(g,s): a support of
 * size s carries exponents >= 1 summing to at most g, C(g,s) ways */
static uint64_t support_total(uint64_t d, uint64_t g)
{
	uint64_t t = 0;

	for (uint64_t s = 1; s <= d && s <= g; s++)
		t += s * binom(d, s) * binom(g, s);
	return t;
}

static void check_counts(uint64_t n, uint64_t d, uint64_t g, int norm)
{
	struct ps_attention att;
	uint64_t r = binom(d + g, g), nb = d + (norm ? 1 : 0);
	uint64_t want_nodes, want_edges;

	test_attention(&att, n, d, g, norm);
	ck_assert_uint_eq(att.r, r);
	ck_assert_uint_eq(att.count[PS_KIND_Q], n * d);
	ck_assert_uint_eq(att.count[PS_KIND_K], n * d);
	ck_assert_uint_eq(att.count[PS_KIND_V], n * d);
	ck_assert_uint_eq(att.count[PS_KIND_U1], n * r);
	ck_assert_uint_eq(att.count[PS_KIND_U2], n * r);
	ck_assert_uint_eq(att.count[PS_KIND_P2], n * r * nb);
	ck_assert_uint_eq(att.count[PS_KIND_H], r * nb);
	ck_assert_uint_eq(att.count[PS_KIND_P1], n * r * nb);
	ck_assert_uint_eq(att.count[PS_KIND_N], n * nb);
	ck_assert_uint_eq(att.count[PS_KIND_A], norm ? n * d : 0);
	want_nodes = 3 * n * d + 2 * n * r + 2 * n * r * nb + r * nb + n * nb +
		     (norm ? n * d : 0);
	ck_assert_uint_eq(att.dag.node_count, want_nodes);
	ck_assert_uint_eq(att.dag.state_count, want_nodes - 2 * n * r * nb);
	/* U1, U2: supports; P2: U2 and V for b < d; H: n each; P1: 2; N: r
	 * each; A: 2 */
	want_edges = 2 * n * support_total(d, g) + n * r * (nb + d) +
		     r * nb * n + 2 * n * r * nb + n * nb * r +
		     (norm ? 2 * n * d : 0);
	ck_assert_uint_eq(att.dag.edge_count, want_edges);
	ck_assert_uint_eq(att.dag.sum_count, r * nb + n * nb);
	ck_assert_uint_eq(att.dag.output_count, n * d);
	ps_attention_free(&att);
}

START_TEST(test_counts_closed_forms)
{
	static const uint64_t ns[] = { 1, 3, 17 };

	for (size_t k = 0; k < 3; k++)
		for (uint64_t d = 1; d <= 5; d++)
			for (uint64_t g = 0; g <= 4; g++) {
				check_counts(ns[k], d, g, 1);
				check_counts(ns[k], d, g, 0);
			}
}
END_TEST

/* Sum v's in-degree is its pc parents, the products of in-edges 0 ..
 * pc - 1 in order; returns pc. */
static uint64_t check_sum_edges(const struct ps_dag *dag, ps_node v, uint64_t pc)
{
	struct ps_sum s;

	ps_dag_sum(dag, v, &s);
	ck_assert_uint_eq(s.in_degree, pc);
	for (uint64_t q = 0; q < pc; q++) {
		struct ps_product pr;

		ps_dag_product(dag, ps_dag_parent(dag, v, q), &pr);
		ck_assert_uint_eq(pr.sum, v);
		ck_assert_uint_eq(pr.edge, q);
		ck_assert_uint_eq(pr.in_degree, s.in_degree);
	}
	return pc;
}

/* Every node: id round trip, parents in range and consistent with the
 * product and sum views; each sum's in-edges numbered 0 .. in_degree - 1
 * by its products. */
void test_check_every_node(const struct ps_attention *a)
{
	const struct ps_attention att = *a;
	uint64_t edges = 0, sum_edges = 0;
	for (ps_node v = 0; v < att.dag.node_count; v++) {
		uint64_t c[3];
		enum ps_kind k = ps_attention_decode(&att, v, c);
		uint64_t pc = ps_dag_parent_count(&att.dag, v);

		ck_assert_uint_eq(ps_attention_id(&att, k, c), v);
		for (unsigned p = 0; p < ps_kinds[k].arity; p++)
			ck_assert_uint_lt(c[p], ps_attention_extent(&att, k, p));
		ck_assert_int_eq(ps_dag_role(&att.dag, v), ps_kinds[k].role);
		ck_assert_int_eq(v < att.dag.state_count,
				 ps_kinds[k].role != PS_ROLE_PRODUCT);
		edges += pc;
		for (uint64_t q = 0; q < pc; q++)
			ck_assert_uint_lt(ps_dag_parent(&att.dag, v, q), att.dag.node_count);
		if (ps_kinds[k].role == PS_ROLE_SUM) {
			sum_edges += check_sum_edges(&att.dag, v, pc);
		}
		if (ps_kinds[k].role == PS_ROLE_PRODUCT) {
			struct ps_product pr;

			ps_dag_product(&att.dag, v, &pr);
			ck_assert_uint_eq(pr.parent_count, pc);
			for (unsigned q = 0; q < pr.parent_count; q++) {
				ck_assert_uint_eq(pr.parent[q], ps_dag_parent(&att.dag, v, q));
				ck_assert_int_eq(pr.parent_is_sum[q],
						 ps_dag_role(&att.dag, pr.parent[q]) == PS_ROLE_SUM);
			}
		}
	}
	ck_assert_uint_eq(edges, att.dag.edge_count);
	/* H and N, n r |B| in-edges each; S and O, n^2 d and n^2 |B| */
	ck_assert_uint_eq(sum_edges, att.exact ? att.n * att.n * (att.d + att.nb)
					       : 2 * att.n * att.r * att.nb);
	for (uint64_t k = 0; k < att.dag.output_count; k++) {
		uint64_t c[3];
		enum ps_kind kind = ps_attention_decode(&att, ps_dag_output(&att.dag, k), c);

		ck_assert_int_eq(kind, att.normalize ? PS_KIND_A :
				       att.exact ? PS_KIND_O : PS_KIND_N);
	}
}

static void check_every_node(uint64_t n, uint64_t d, uint64_t g, int norm)
{
	struct ps_attention att;

	test_attention(&att, n, d, g, norm);
	test_check_every_node(&att);
	ps_attention_free(&att);
}

/*
 * The causal approximate DAG and its decode DAG (MODEL.md sections 7, 8):
 * every node that exists round trips, has its row's role, and parents
 * that exist; each sum's in-edges are its products', numbered 0 .. its
 * in-degree - 1 (H[j]: P2 then the carry HC, H[0] P2 alone); the edges
 * add up to edge_count and the sums' to P2, HC and P1; the outputs are
 * A[t] (N[t]) and, decoding, the last state.
 */
static void check_causal_nodes(const struct ps_attention *att)
{
	const uint64_t first = att->decode, rows = att->n - first, rnb = att->r * att->nb;
	uint64_t edges = 0, sum_edges = 0, sums = 0;

	for (ps_node v = 0; v < att->dag.node_count; v++) {
		uint64_t c[3];
		enum ps_kind k = ps_attention_decode(att, v, c);
		uint64_t pc = ps_dag_parent_count(&att->dag, v);
		enum ps_role role = ps_attention_role(att, k, c[0]);

		ck_assert_uint_eq(ps_attention_id(att, k, c), v);
		edges += pc;
		if (!ps_attention_exists(att, k, c)) {
			ck_assert_uint_eq(pc, 0);
			continue;
		}
		ck_assert_int_eq(ps_dag_role(&att->dag, v), role);
		for (uint64_t q = 0; q < pc; q++) {
			uint64_t pcs[3];
			ps_node parent = ps_dag_parent(&att->dag, v, q);
			enum ps_kind pk = ps_attention_decode(att, parent, pcs);

			ck_assert_msg(ps_attention_exists(att, pk, pcs), "a parent of node %llu does not exist",
				      (unsigned long long)v);
		}
		if (role == PS_ROLE_SUM) {
			sums++;
			ck_assert_uint_eq(pc, k == PS_KIND_N ? att->r : c[0] == 0 ? 1 : 2);
			sum_edges += check_sum_edges(&att->dag, v, pc);
		}
		if (ps_kinds[k].role == PS_ROLE_PRODUCT) {
			struct ps_product pr;

			ps_dag_product(&att->dag, v, &pr);
			ck_assert_uint_eq(pr.parent_count, pc);
			for (unsigned q = 0; q < pr.parent_count; q++) {
				ck_assert_uint_eq(pr.parent[q], ps_dag_parent(&att->dag, v, q));
				ck_assert_int_eq(pr.parent_is_sum[q],
						 ps_dag_role(&att->dag, pr.parent[q]) == PS_ROLE_SUM ||
						 (k == PS_KIND_HC && att->decode && c[0] == att->decode));
			}
		}
	}
	ck_assert_uint_eq(edges, att->dag.edge_count);
	ck_assert_uint_eq(sums, att->dag.sum_count);
	/* P2 and P1 of every row that exists, HC of all but row 0 */
	ck_assert_uint_eq(sum_edges, 3 * rows * rnb - (att->decode ? 0 : rnb));
	for (uint64_t k = 0; k < att->dag.output_count; k++) {
		uint64_t c[3];
		enum ps_kind kind = ps_attention_decode(att, ps_dag_output(&att->dag, k), c);

		ck_assert(ps_attention_exists(att, kind, c));
		if (k < rows * att->d) {
			ck_assert_int_eq(kind, att->normalize ? PS_KIND_A : PS_KIND_N);
			ck_assert_uint_ge(c[0], first);
		} else {
			ck_assert_int_eq(kind, PS_KIND_HJ);
			ck_assert_uint_eq(c[0], att->n - 1);
		}
	}
	ck_assert_uint_eq(att->dag.output_count, rows * att->d + (att->decode ? rnb : 0));
}

START_TEST(test_causal_every_node)
{
	for (uint64_t n = 1; n <= 6; n += 5)
		for (uint64_t d = 1; d <= 3; d++)
			for (uint64_t g = 0; g <= 2; g++)
				for (int norm = 0; norm <= 1; norm++)
					for (uint64_t p = 0; p < n; p++) {
						struct ps_attention_params par = {
							.n = n, .d = d, .g = g, .normalize = norm != 0,
							.causal = true, .decode = p,
						};
						struct ps_attention att;
						struct ps_error err;

						ck_assert_int_eq(ps_attention_init(&att, &par, &err), 0);
						check_causal_nodes(&att);
						ps_attention_free(&att);
					}
}
END_TEST

START_TEST(test_every_node_small)
{
	for (uint64_t n = 1; n <= 3; n++)
		for (uint64_t d = 1; d <= 4; d++)
			for (uint64_t g = 0; g <= 3; g++) {
				check_every_node(n, d, g, 1);
				check_every_node(n, d, g, 0);
			}
}
END_TEST

START_TEST(test_chosen_parents)
{
	struct ps_attention att;
	uint32_t tuple[] = { 0, 2, 2 };
	uint64_t m;
	char name[64];
	ps_node v;

	test_attention(&att, 4, 3, 3, 1);
	m = ps_monomial_rank(&att.mono, tuple, 3);
	/* U1[1,(0,2,2)] reads Q[1,0] and Q[1,2], once each */
	v = ps_attention_id2(&att, PS_KIND_U1, 1, m);
	ck_assert_uint_eq(ps_dag_parent_count(&att.dag, v), 2);
	ck_assert_uint_eq(ps_dag_parent(&att.dag, v, 0), ps_attention_id2(&att, PS_KIND_Q, 1, 0));
	ck_assert_uint_eq(ps_dag_parent(&att.dag, v, 1), ps_attention_id2(&att, PS_KIND_Q, 1, 2));
	/* the constant monomial has no parents */
	ck_assert_uint_eq(ps_dag_parent_count(&att.dag, ps_attention_id2(&att, PS_KIND_U2, 3, 0)), 0);
	/* P2 of the ones column reads only U2 */
	v = ps_attention_id3(&att, PS_KIND_P2, 2, m, 3);
	ck_assert_uint_eq(ps_dag_parent_count(&att.dag, v), 1);
	ck_assert_uint_eq(ps_dag_parent(&att.dag, v, 0), ps_attention_id2(&att, PS_KIND_U2, 2, m));
	/* A[2,1] = N[2,1] / N[2,3] */
	v = ps_attention_id2(&att, PS_KIND_A, 2, 1);
	ck_assert_uint_eq(ps_dag_parent(&att.dag, v, 0), ps_attention_id2(&att, PS_KIND_N, 2, 1));
	ck_assert_uint_eq(ps_dag_parent(&att.dag, v, 1), ps_attention_id2(&att, PS_KIND_N, 2, 3));
	/* H[m,1] sums P2[j,m,1] over j; N[2,1] sums P1[2,m,1] over m */
	v = ps_attention_id2(&att, PS_KIND_H, m, 1);
	ck_assert_uint_eq(ps_dag_parent_count(&att.dag, v), 4);
	ck_assert_uint_eq(ps_dag_parent(&att.dag, v, 3), ps_attention_id3(&att, PS_KIND_P2, 3, m, 1));
	v = ps_attention_id2(&att, PS_KIND_N, 2, 1);
	ck_assert_uint_eq(ps_dag_parent_count(&att.dag, v), att.r);
	ck_assert_uint_eq(ps_dag_parent(&att.dag, v, m), ps_attention_id3(&att, PS_KIND_P1, 2, m, 1));
	ps_dag_describe(&att.dag, ps_attention_id2(&att, PS_KIND_U1, 1, m), name, sizeof(name));
	ck_assert_str_eq(name, "U1[1,15]");
	ps_dag_describe(&att.dag, ps_attention_id3(&att, PS_KIND_P1, 2, 5, 3), name, sizeof(name));
	ck_assert_str_eq(name, "P1[2,5,3]");
	ps_attention_free(&att);
}
END_TEST

START_TEST(test_refuses_bad_parameters)
{
	struct ps_attention att;
	struct ps_attention_params p = { .n = 0, .d = 4, .g = 2, .normalize = true };
	struct ps_error err;

	ck_assert_int_eq(ps_attention_init(&att, &p, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "n must be at least 1");
	p.n = 4;
	p.d = 0;
	ck_assert_int_eq(ps_attention_init(&att, &p, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "d must be at least 1");
	p.n = UINT64_C(1) << 50;
	p.d = 16;
	p.g = 3;
	ck_assert_int_eq(ps_attention_init(&att, &p, &err), PS_ENOMEM);
	ck_assert_str_eq(err.msg,
			 "the DAG for n = 1125899906842624, d = 16, g = 3 has more than 2^60 product nodes");
}
END_TEST

Suite *dag_suite(void)
{
	Suite *s = suite_create("dag");
	TCase *tc = tcase_create("attention");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_counts_closed_forms);
	tcase_add_test(tc, test_every_node_small);
	tcase_add_test(tc, test_causal_every_node);
	tcase_add_test(tc, test_chosen_parents);
	tcase_add_test(tc, test_refuses_bad_parameters);
	suite_add_tcase(s, tc);
	return s;
}
