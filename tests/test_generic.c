/*
 * The generic strategy (Lemma 3.1) on a grid: every sequence valid in the
 * engine, its I/O equal to the cost model's prediction, within its upper
 * bound and above the trivial lower bound; refused below its minimum M.
 * PS_TEST_GRID=small shrinks the grid for the sanitizer and valgrind
 * runs: n <= 64, d <= 7, and unit tiles (one operation a move) on DAGs of
 * at most 20,000 products instead of 200,000.
 */
#include <stdlib.h>
#include <string.h>

#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "tests.h"

static const struct ps_strategy *generic(void)
{
	const struct ps_strategy *s = ps_strategy_find("generic");

	ck_assert_ptr_nonnull(s);
	return s;
}

static void check_one(const struct ps_attention *att, uint64_t M)
{
	struct ps_problem pb = { .att = att, .M = M, .tiles = NULL, .w = 0 };
	struct ps_plan plan;
	struct ps_report rep;
	struct ps_error err;
	uint64_t io;

	ps_error_clear(&err);
	ck_assert_msg(ps_strategy_plan(generic(), &pb, &plan, &err) == 0,
		      "n=%llu d=%llu g=%llu M=%llu: %s", (unsigned long long)att->n,
		      (unsigned long long)att->d, (unsigned long long)att->g,
		      (unsigned long long)M, err.msg);
	ck_assert_int_eq(ps_run(&pb, generic(), NULL, &rep, &err), 0);
	ck_assert_msg(rep.valid, "n=%llu d=%llu g=%llu M=%llu: %s",
		      (unsigned long long)att->n, (unsigned long long)att->d,
		      (unsigned long long)att->g, (unsigned long long)M,
		      rep.violation);
	io = rep.counts.loads + rep.counts.saves;
	ck_assert_uint_eq(rep.counts.loads, plan.loads);
	ck_assert_uint_eq(rep.counts.saves, plan.saves);
	ck_assert_uint_le(rep.counts.peak_red, plan.peak_red);
	ck_assert_uint_le(plan.peak_red, M);
	ck_assert_msg((double)io <= plan.upper.value, "io %llu above %s = %.0f",
		      (unsigned long long)io, plan.upper.formula, plan.upper.value);
	ck_assert((double)io >= rep.lower.best.value);
	ck_assert(!ps_report_bound_violated(&rep));
	/* every product is aggregated exactly once */
	ck_assert_uint_eq(rep.counts.macs, 2 * att->n * att->r * att->nb);
}

/* A forced shape, run through a plain engine sink; its peak red, or 0
 * when the shape does not fit M. */
static uint64_t check_shape(const struct ps_attention *att, uint64_t M,
			    const char *tiles)
{
	struct ps_problem pb = { .att = att, .M = M, .tiles = tiles };
	struct ps_plan plan;
	struct ps_engine e;
	struct ps_engine_sink sink;
	struct ps_error err;

	uint64_t peak;

	if (ps_strategy_plan(generic(), &pb, &plan, &err)) {
		ck_assert_ptr_nonnull(strstr(err.msg, "need"));
		return 0;
	}
	ck_assert_int_eq(ps_engine_init(&e, &att->dag, M, &err), 0);
	ps_engine_sink_init(&sink, att, &e);
	ck_assert_int_eq(ps_strategy_run(generic(), &pb, &sink.sink, &err), 0);
	ck_assert_int_eq(ps_engine_finish(&e), 0);
	ck_assert_uint_eq(e.c.loads, plan.loads);
	ck_assert_uint_eq(e.c.saves, plan.saves);
	ck_assert_uint_le(e.c.peak_red, plan.peak_red);
	ck_assert((double)(e.c.loads + e.c.saves) <= plan.upper.value);
	peak = e.c.peak_red;
	ps_engine_free(&e);
	return peak;
}

static void check_params(uint64_t n, uint64_t d, uint64_t g, int norm)
{
	struct ps_attention att;
	struct ps_problem pb = { 0 };
	struct ps_plan plan;
	struct ps_error err;
	uint64_t min_m, Ms[6];

	test_attention(&att, n, d, g, norm);
	min_m = ps_strategy_min_memory(generic(), &att);
	/* from the smallest M through the tiles' thresholds to beyond Case I */
	Ms[0] = min_m;
	Ms[1] = min_m + 1;
	Ms[2] = 4 * min_m;
	Ms[3] = 64 * att.nb;
	Ms[4] = 1000;
	Ms[5] = 8 * att.d * att.r + 4 * att.nb * att.nb + 64;
	for (int k = 0; k < 6; k++) {
		if (Ms[k] < min_m)
			continue;
		check_one(&att, Ms[k]);
		check_shape(&att, Ms[k], "square");
		check_shape(&att, Ms[k], "tall");
		/* unit tiles are one operation per move: small DAGs suffice */
		if (att.n * att.r * att.nb <= (test_grid_small() ? 20000 : 200000))
			check_shape(&att, Ms[k], "unit");
	}
	pb.att = &att;
	pb.M = min_m - 1;
	pb.tiles = NULL;
	ck_assert_int_eq(ps_strategy_plan(generic(), &pb, &plan, &err), PS_EINPUT);
	ck_assert_ptr_nonnull(strstr(err.msg, "it needs M >= "));
	ps_attention_free(&att);
}

START_TEST(test_grid)
{
	static const uint64_t ns[] = { 1, 5, 64, 300 };
	static const uint64_t ds[] = { 1, 2, 3, 7, 16 };
	int small = test_grid_small();

	for (size_t a = 0; a < 4; a++)
		for (size_t b = 0; b < 5; b++)
			for (uint64_t g = 0; g <= 3; g++) {
				if (small && (ns[a] > 64 || ds[b] > 7))
					continue;
				check_params(ns[a], ds[b], g, 1);
				if (ns[a] <= 64)
					check_params(ns[a], ds[b], g, 0);
			}
}
END_TEST

/* min M = the unit tiles' peak, and the engine reaches it */
static void check_minimum(uint64_t n, uint64_t d, uint64_t g, int norm,
			  uint64_t want)
{
	struct ps_attention att;

	test_attention(&att, n, d, g, norm);
	ck_assert_uint_eq(ps_strategy_min_memory(generic(), &att), want);
	ck_assert_uint_eq(check_shape(&att, want, "unit"), want);
	ck_assert_uint_eq(check_shape(&att, want - 1, "unit"), 0);
	ps_attention_free(&att);
}

START_TEST(test_minimum_memory_is_tight)
{
	/*
	 * Phase 1 holds H, a K chunk of s = min(g, d) columns, V, U2 and the
	 * product: s + 4. Phase 2 holds a Q chunk (s), N, the kept N[.,d]
	 * (with normalisation), H, U1 and the product: s + 4 + 1.
	 */
	check_minimum(8, 5, 3, 1, 3 + 5);
	check_minimum(8, 5, 3, 0, 3 + 4);
	check_minimum(8, 2, 4, 1, 2 + 5);
	check_minimum(3, 1, 0, 1, 0 + 5);
}
END_TEST

START_TEST(test_headline_shape)
{
	/* n = 4096, d = 16, g = 3, M = 8192: tall tiles of M/(4|B|) = 120 rows */
	struct ps_attention att;
	struct ps_problem pb = { 0 };
	struct ps_plan plan;
	struct ps_error err;

	test_attention(&att, 4096, 16, 3, 1);
	pb.att = &att;
	pb.M = 8192;
	pb.tiles = NULL;
	ck_assert_int_eq(ps_strategy_plan(generic(), &pb, &plan, &err), 0);
	ck_assert_ptr_nonnull(strstr(plan.summary, "tall tiles: blocks of t = 120 monomials; H tiles t x 17, N tiles 120 x 17"));
	/*
	 * By hand: r = 969 monomials in m-blocks of 120 (8 full, one of 9);
	 * their K columns are 16, 16, 16, 15, 14, 13, 11, 9, 3 (113 in all).
	 * Loads: K 4096 x 113 = 462848, V 9 x 4096 x 16 = 589824, Q 4096 x
	 * 16 = 65536, H 35 row blocks x 969 x 17 = 576555: 1694763.
	 * Saves: H 969 x 17 = 16473, A 4096 x 16 = 65536: 82009.
	 */
	ck_assert_uint_eq(plan.loads, 1694763);
	ck_assert_uint_eq(plan.saves, 82009);
	pb.tiles = "unit";
	ck_assert_int_eq(ps_strategy_plan(generic(), &pb, &plan, &err), 0);
	pb.M = 7;
	ck_assert_int_eq(ps_strategy_plan(generic(), &pb, &plan, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "the unit tiles for M = 7 need 8 red pebbles");
	pb.tiles = "round";
	ck_assert_int_eq(ps_strategy_plan(generic(), &pb, &plan, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "unknown tiles 'round' for generic: square, tall or unit");
	ps_attention_free(&att);
}
END_TEST

Suite *generic_suite(void)
{
	Suite *s = suite_create("generic");
	TCase *tc = tcase_create("grid");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_grid);
	tcase_add_test(tc, test_minimum_memory_is_tight);
	tcase_add_test(tc, test_headline_shape);
	suite_add_tcase(s, tc);
	return s;
}
