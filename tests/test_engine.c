/*
 * The engine: every rule of MODEL.md section 2 broken by a minimal
 * sequence, with the exact violation expected; a hand-worked complete
 * pebbling with its exact counts; capacity at M and at M - 1.
 */
#include <string.h>

#include "pebblesim/engine.h"
#include "tests.h"

static struct ps_attention att;
static struct ps_engine eng;

static void setup_dag(uint64_t n, uint64_t d, uint64_t g, int norm, uint64_t M)
{
	test_engine_setup(&att, &eng, n, d, g, norm, M);
}

static void teardown(void)
{
	test_engine_teardown(&att, &eng);
}

static ps_node id(enum ps_kind k, uint64_t a, uint64_t b)
{
	return ps_attention_id2(&att, k, a, b);
}

static ps_node pid(enum ps_kind k, uint64_t a, uint64_t b, uint64_t c)
{
	return ps_attention_id3(&att, k, a, b, c);
}

#define OK(call) ck_assert_int_eq((call), PS_OK)

#define BROKEN(call, want_rule, want_text)                                  \
	do {                                                                \
		ck_assert_int_eq((call), PS_EINVALID);                      \
		ck_assert_str_eq(ps_rule_name(eng.violation.rule),          \
				 ps_rule_name(want_rule));                  \
		ck_assert_str_eq(eng.violation.text, (want_text));          \
	} while (0)

/* d = 2, g = 2: monomials (), (0), (1), (0,0), (0,1), (1,1); |B| = 3 */
static void small(uint64_t M)
{
	setup_dag(2, 2, 2, 1, M);
}

START_TEST(test_load_rules)
{
	small(100);
	BROKEN(ps_engine_load(&eng, id(PS_KIND_U1, 0, 1)), PS_RULE_LOAD_NOT_BLUE,
	       "load U1[0,1]: U1[0,1] is not in slow memory");
	teardown();
	small(100);
	OK(ps_engine_load(&eng, id(PS_KIND_Q, 1, 0)));
	BROKEN(ps_engine_load(&eng, id(PS_KIND_Q, 1, 0)), PS_RULE_LOAD_RED,
	       "load Q[1,0]: Q[1,0] is already in fast memory");
	teardown();
	small(100);
	BROKEN(ps_engine_load(&eng, pid(PS_KIND_P1, 0, 4, 2)), PS_RULE_PRODUCT_MOVED,
	       "load P1[0,4,2]: P1[0,4,2] is a product: products exist only inside a mac");
	teardown();
	small(100);
	BROKEN(ps_engine_load(&eng, att.dag.node_count), PS_RULE_NO_SUCH_NODE,
	       "load: node 136 is not in the DAG (it has 136 nodes)");
	teardown();
}
END_TEST

START_TEST(test_save_delete_rules)
{
	small(100);
	BROKEN(ps_engine_save(&eng, id(PS_KIND_N, 1, 2)), PS_RULE_NOT_RED,
	       "save N[1,2]: N[1,2] is not in fast memory");
	teardown();
	small(100);
	/* an input is blue but not red: deleting it is deleting nothing */
	BROKEN(ps_engine_delete(&eng, id(PS_KIND_K, 0, 1)), PS_RULE_NOT_RED,
	       "delete K[0,1]: K[0,1] is not in fast memory");
	teardown();
	small(100);
	BROKEN(ps_engine_save(&eng, pid(PS_KIND_P2, 1, 0, 0)), PS_RULE_PRODUCT_MOVED,
	       "save P2[1,0,0]: P2[1,0,0] is a product: products exist only inside a mac");
	teardown();
	small(100);
	BROKEN(ps_engine_delete(&eng, pid(PS_KIND_P1, 0, 0, 0)), PS_RULE_PRODUCT_MOVED,
	       "delete P1[0,0,0]: P1[0,0,0] is a product: products exist only inside a mac");
	teardown();
}
END_TEST

START_TEST(test_compute_rules)
{
	small(100);
	BROKEN(ps_engine_compute(&eng, id(PS_KIND_Q, 0, 0)), PS_RULE_COMPUTE_INPUT,
	       "compute Q[0,0]: Q[0,0] is an input: inputs are loaded, never computed");
	teardown();
	small(100);
	BROKEN(ps_engine_compute(&eng, id(PS_KIND_H, 0, 0)), PS_RULE_COMPUTE_SUM,
	       "compute H[0,0]: H[0,0] is a sum: sums are aggregated by mac, never computed");
	teardown();
	small(100);
	BROKEN(ps_engine_compute(&eng, pid(PS_KIND_P1, 0, 0, 0)), PS_RULE_PRODUCT_MOVED,
	       "compute P1[0,0,0]: P1[0,0,0] is a product: products exist only inside a mac");
	teardown();
	small(100);
	/* U1[0,4] is (0,1): it reads Q[0,0] and Q[0,1] */
	OK(ps_engine_load(&eng, id(PS_KIND_Q, 0, 0)));
	BROKEN(ps_engine_compute(&eng, id(PS_KIND_U1, 0, 4)), PS_RULE_PARENT_NOT_RED,
	       "compute U1[0,4]: Q[0,1] is not in fast memory");
	teardown();
	small(100);
	OK(ps_engine_compute(&eng, id(PS_KIND_U1, 0, 0))); /* constant: no parents */
	BROKEN(ps_engine_compute(&eng, id(PS_KIND_U1, 0, 0)), PS_RULE_COMPUTE_RED,
	       "compute U1[0,0]: U1[0,0] is already in fast memory");
	teardown();
}
END_TEST

/* H[0,b] complete: P2[j,0,b] for both rows j, U2[j,0] the constant. */
static void aggregate_h_column0(uint64_t b)
{
	for (uint64_t j = 0; j < att.n; j++) {
		OK(ps_engine_compute(&eng, id(PS_KIND_U2, j, 0)));
		if (b < att.d)
			OK(ps_engine_load(&eng, id(PS_KIND_V, j, b)));
		OK(ps_engine_mac(&eng, pid(PS_KIND_P2, j, 0, b)));
		OK(ps_engine_delete(&eng, id(PS_KIND_U2, j, 0)));
		if (b < att.d)
			OK(ps_engine_delete(&eng, id(PS_KIND_V, j, b)));
	}
}

START_TEST(test_mac_rules)
{
	small(100);
	BROKEN(ps_engine_mac(&eng, pid(PS_KIND_P1, 1, 3, 2)), PS_RULE_PARENT_NOT_RED,
	       "mac into N[1,2]: U1[1,3] is not in fast memory");
	teardown();
	small(100);
	/* H[0,0] has one of its two in-edges: P1 may not use it yet */
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 0)));
	OK(ps_engine_load(&eng, id(PS_KIND_V, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 0)));
	OK(ps_engine_compute(&eng, id(PS_KIND_U1, 1, 0)));
	BROKEN(ps_engine_mac(&eng, pid(PS_KIND_P1, 1, 0, 0)), PS_RULE_PARENT_INCOMPLETE,
	       "mac into N[1,0]: H[0,0] is incomplete (1 of 2 in-edges aggregated)");
	teardown();
	small(100);
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 2)));
	BROKEN(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 2)), PS_RULE_MAC_EDGE_DONE,
	       "mac into H[0,2]: the in-edge from P2[0,0,2] is already aggregated");
	teardown();
	small(100);
	BROKEN(ps_engine_mac(&eng, id(PS_KIND_U1, 0, 0)), PS_RULE_MAC_NOT_PRODUCT,
	       "mac of U1[0,0]: U1[0,0] is not a product: a mac aggregates a product into its sum");
	teardown();
	small(100);
	/* saved, then deleted: the sum must be loaded before more edges join */
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 2)));
	OK(ps_engine_save(&eng, id(PS_KIND_H, 0, 2)));
	OK(ps_engine_delete(&eng, id(PS_KIND_H, 0, 2)));
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 1, 0)));
	BROKEN(ps_engine_mac(&eng, pid(PS_KIND_P2, 1, 0, 2)), PS_RULE_MAC_SUM_SLOW_ONLY,
	       "mac into H[0,2]: H[0,2] is in slow memory only: load it before aggregating into it");
	teardown();
}
END_TEST

START_TEST(test_sum_values_follow_their_edges)
{
	small(100);
	/* a loaded sum carries the edges that were saved with it */
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 2)));
	OK(ps_engine_save(&eng, id(PS_KIND_H, 0, 2)));
	OK(ps_engine_delete(&eng, id(PS_KIND_H, 0, 2)));
	OK(ps_engine_load(&eng, id(PS_KIND_H, 0, 2)));
	BROKEN(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 2)), PS_RULE_MAC_EDGE_DONE,
	       "mac into H[0,2]: the in-edge from P2[0,0,2] is already aggregated");
	teardown();

	small(100);
	/* a mac makes the blue copy stale; deleting the red one loses all */
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 2)));
	OK(ps_engine_save(&eng, id(PS_KIND_H, 0, 2)));
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 1, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 1, 0, 2)));
	ck_assert(!ps_engine_is_blue(&eng, id(PS_KIND_H, 0, 2)));
	OK(ps_engine_delete(&eng, id(PS_KIND_H, 0, 2)));
	BROKEN(ps_engine_load(&eng, id(PS_KIND_H, 0, 2)), PS_RULE_LOAD_NOT_BLUE,
	       "load H[0,2]: H[0,2] is not in slow memory");
	teardown();

	small(100);
	/* a lost sum starts again from an empty set: the same edge is new */
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 2)));
	OK(ps_engine_delete(&eng, id(PS_KIND_H, 0, 2)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 2)));
	ck_assert_uint_eq(eng.c.macs, 2);
	teardown();
}
END_TEST

START_TEST(test_compute_needs_complete_sums)
{
	small(100);
	/* A[0,0] = N[0,0] / N[0,2]: both red, N[0,0] with 1 of 6 edges */
	aggregate_h_column0(0);
	aggregate_h_column0(2);
	OK(ps_engine_compute(&eng, id(PS_KIND_U1, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P1, 0, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P1, 0, 0, 2)));
	BROKEN(ps_engine_compute(&eng, id(PS_KIND_A, 0, 0)), PS_RULE_PARENT_INCOMPLETE,
	       "compute A[0,0]: N[0,0] is incomplete (1 of 6 in-edges aggregated)");
	teardown();
}
END_TEST

START_TEST(test_capacity_rules)
{
	small(2);
	OK(ps_engine_load(&eng, id(PS_KIND_Q, 0, 0)));
	OK(ps_engine_load(&eng, id(PS_KIND_Q, 0, 1)));
	BROKEN(ps_engine_load(&eng, id(PS_KIND_Q, 1, 0)), PS_RULE_CAPACITY,
	       "load Q[1,0]: capacity exceeded: 3 red pebbles with M = 2");
	teardown();
	small(2);
	OK(ps_engine_load(&eng, id(PS_KIND_Q, 0, 0)));
	OK(ps_engine_compute(&eng, id(PS_KIND_U1, 0, 1)));
	BROKEN(ps_engine_compute(&eng, id(PS_KIND_U1, 0, 3)), PS_RULE_CAPACITY,
	       "compute U1[0,3]: capacity exceeded: 3 red pebbles with M = 2");
	teardown();
	/* the product of a mac needs a slot of its own, and so does a new sum */
	small(2);
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 0)));
	BROKEN(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 2)), PS_RULE_CAPACITY,
	       "mac into H[0,2]: capacity exceeded: 3 red pebbles with M = 2 (the product P2[0,0,2] needs a slot)");
	teardown();
	small(4);
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 2)));
	ck_assert_uint_eq(eng.c.peak_red, 3);
	ck_assert_uint_eq(eng.c.red, 2);
	OK(ps_engine_load(&eng, id(PS_KIND_K, 0, 0)));
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 1)));
	BROKEN(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 1, 2)), PS_RULE_CAPACITY,
	       "mac into H[1,2]: capacity exceeded: 6 red pebbles with M = 4 (the product P2[0,1,2] needs a slot)");
	teardown();
	small(3);
	/* a sum already red needs no new slot, but the product still does */
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 2)));
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 1, 0)));
	BROKEN(ps_engine_mac(&eng, pid(PS_KIND_P2, 1, 0, 2)), PS_RULE_CAPACITY,
	       "mac into H[0,2]: capacity exceeded: 4 red pebbles with M = 3 (the product P2[1,0,2] needs a slot)");
	teardown();
}
END_TEST

START_TEST(test_end_rules)
{
	small(100);
	BROKEN(ps_engine_finish(&eng), PS_RULE_END_NOT_SAVED,
	       "end: output A[0,0] is not in slow memory");
	teardown();
	/* without normalisation N is the output and must be saved complete */
	setup_dag(1, 1, 0, 0, 100);
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 0)));
	OK(ps_engine_load(&eng, id(PS_KIND_V, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 0)));
	OK(ps_engine_save(&eng, id(PS_KIND_H, 0, 0)));
	BROKEN(ps_engine_finish(&eng), PS_RULE_END_NOT_SAVED,
	       "end: output N[0,0] is not in slow memory");
	teardown();
	setup_dag(1, 1, 1, 0, 100);
	/* r = 2: N[0,0] saved with 1 of its 2 in-edges */
	OK(ps_engine_compute(&eng, id(PS_KIND_U2, 0, 0)));
	OK(ps_engine_load(&eng, id(PS_KIND_V, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P2, 0, 0, 0)));
	OK(ps_engine_compute(&eng, id(PS_KIND_U1, 0, 0)));
	OK(ps_engine_mac(&eng, pid(PS_KIND_P1, 0, 0, 0)));
	OK(ps_engine_save(&eng, id(PS_KIND_N, 0, 0)));
	BROKEN(ps_engine_finish(&eng), PS_RULE_END_INCOMPLETE,
	       "end: output N[0,0] is incomplete in slow memory (1 of 2 in-edges aggregated)");
	teardown();
}
END_TEST

START_TEST(test_violation_is_final)
{
	small(100);
	BROKEN(ps_engine_save(&eng, id(PS_KIND_A, 0, 0)), PS_RULE_NOT_RED,
	       "save A[0,0]: A[0,0] is not in fast memory");
	ck_assert_int_eq(ps_engine_load(&eng, id(PS_KIND_Q, 0, 0)), PS_EINVALID);
	ck_assert_str_eq(eng.violation.text, "save A[0,0]: A[0,0] is not in fast memory");
	ck_assert_uint_eq(eng.c.loads, 0);
	ck_assert_uint_eq(eng.violation.move_number, 1);
	teardown();
}
END_TEST

/*
 * n = 2, d = 1, g = 1, normalised: monomials () and (0), |B| = 2.
 * H stays in fast memory between the phases, so the pebbling costs the
 * trivial bound exactly: Q, K, V loaded once (6), A saved once (2).
 */
static int tiny_pebbling(void)
{
	for (uint64_t j = 0; j < 2; j++) {
		if (ps_engine_load(&eng, id(PS_KIND_K, j, 0)) ||
		    ps_engine_load(&eng, id(PS_KIND_V, j, 0)))
			return PS_EINVALID;
		for (uint64_t m = 0; m < 2; m++)
			if (ps_engine_compute(&eng, id(PS_KIND_U2, j, m)) ||
			    ps_engine_mac(&eng, pid(PS_KIND_P2, j, m, 0)) ||
			    ps_engine_mac(&eng, pid(PS_KIND_P2, j, m, 1)) ||
			    ps_engine_delete(&eng, id(PS_KIND_U2, j, m)))
				return PS_EINVALID;
		if (ps_engine_delete(&eng, id(PS_KIND_K, j, 0)) ||
		    ps_engine_delete(&eng, id(PS_KIND_V, j, 0)))
			return PS_EINVALID;
	}
	for (uint64_t i = 0; i < 2; i++) {
		if (ps_engine_load(&eng, id(PS_KIND_Q, i, 0)))
			return PS_EINVALID;
		for (uint64_t m = 0; m < 2; m++)
			if (ps_engine_compute(&eng, id(PS_KIND_U1, i, m)) ||
			    ps_engine_mac(&eng, pid(PS_KIND_P1, i, m, 0)) ||
			    ps_engine_mac(&eng, pid(PS_KIND_P1, i, m, 1)) ||
			    ps_engine_delete(&eng, id(PS_KIND_U1, i, m)))
				return PS_EINVALID;
		if (ps_engine_compute(&eng, id(PS_KIND_A, i, 0)) ||
		    ps_engine_save(&eng, id(PS_KIND_A, i, 0)) ||
		    ps_engine_delete(&eng, id(PS_KIND_Q, i, 0)) ||
		    ps_engine_delete(&eng, id(PS_KIND_N, i, 0)) ||
		    ps_engine_delete(&eng, id(PS_KIND_N, i, 1)) ||
		    ps_engine_delete(&eng, id(PS_KIND_A, i, 0)))
			return PS_EINVALID;
	}
	return ps_engine_finish(&eng);
}

START_TEST(test_tiny_complete_pebbling)
{
	/*
	 * Peak by hand: in row i = 0 of phase 2, H (4) + Q[0,0] + U1[0,m]
	 * + N[0,0] + N[0,1] = 8 red when the product of P1[0,1,*] takes
	 * its slot: 9.
	 */
	setup_dag(2, 1, 1, 1, 9);
	OK(tiny_pebbling());
	ck_assert_uint_eq(eng.c.loads, 6);
	ck_assert_uint_eq(eng.c.saves, 2);
	ck_assert_uint_eq(eng.c.computes, 10);
	ck_assert_uint_eq(eng.c.recomputations, 0);
	ck_assert_uint_eq(eng.c.macs, 16);
	ck_assert_uint_eq(eng.c.peak_red, 9);
	/* 2 x (2 + 2 x 4 + 2) + 2 x (1 + 2 x 4 + 6) */
	ck_assert_uint_eq(eng.c.moves, 54);
	ck_assert_uint_eq(eng.c.red, 4); /* H is left over: allowed */
	teardown();

	setup_dag(2, 1, 1, 1, 8);
	ck_assert_int_eq(tiny_pebbling(), PS_EINVALID);
	ck_assert_str_eq(eng.violation.text,
			 "mac into N[0,1]: capacity exceeded: 9 red pebbles with M = 8 (the product P1[0,0,1] needs a slot)");
	teardown();
}
END_TEST

START_TEST(test_recomputation_counted)
{
	small(100);
	OK(ps_engine_load(&eng, id(PS_KIND_Q, 0, 0)));
	OK(ps_engine_compute(&eng, id(PS_KIND_U1, 0, 1)));
	OK(ps_engine_delete(&eng, id(PS_KIND_U1, 0, 1)));
	OK(ps_engine_compute(&eng, id(PS_KIND_U1, 0, 1)));
	ck_assert_uint_eq(eng.c.computes, 2);
	ck_assert_uint_eq(eng.c.recomputations, 1);
	teardown();
}
END_TEST

Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("rules");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_load_rules);
	tcase_add_test(tc, test_save_delete_rules);
	tcase_add_test(tc, test_compute_rules);
	tcase_add_test(tc, test_mac_rules);
	tcase_add_test(tc, test_sum_values_follow_their_edges);
	tcase_add_test(tc, test_compute_needs_complete_sums);
	tcase_add_test(tc, test_capacity_rules);
	tcase_add_test(tc, test_end_rules);
	tcase_add_test(tc, test_violation_is_final);
	tcase_add_test(tc, test_tiny_complete_pebbling);
	tcase_add_test(tc, test_recomputation_counted);
	suite_add_tcase(s, tc);
	return s;
}
