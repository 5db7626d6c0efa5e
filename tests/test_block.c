/*
 * The block path against the element path: every strategy, on a grid of
 * parameters and memories, validated both ways; the counters, every
 * pebble, every aggregated edge and every sum's count must agree. (The
 * trace suite replays each of its traces, valid and broken, both ways.)
 */
#include <string.h>

#include "pebblesim/ops.h"
#include "pebblesim/strategy.h"
#include "tests.h"

static void both_paths(const struct ps_attention *att,
		       const struct ps_strategy *s, uint64_t M, const char *tiles)
{
	struct ps_problem pb = { .att = att, .M = M, .tiles = tiles };
	struct ps_engine fast, slow;
	struct ps_engine_sink fs, ss;
	struct ps_error err;
	int frc, src;

	ck_assert_int_eq(ps_engine_init(&fast, &att->dag, M, &err), 0);
	ck_assert_int_eq(ps_engine_init(&slow, &att->dag, M, &err), 0);
	slow.element_only = true;
	ps_engine_sink_init(&fs, att, &fast);
	ps_engine_sink_init(&ss, att, &slow);
	frc = ps_strategy_run(s, &pb, &fs.sink, &err);
	src = ps_strategy_run(s, &pb, &ss.sink, &err);
	ck_assert_int_eq(frc, src);
	if (!frc) {
		frc = ps_engine_finish(&fast);
		src = ps_engine_finish(&slow);
		ck_assert_int_eq(frc, src);
	}
	ck_assert_int_eq(fast.failed, slow.failed);
	ck_assert_str_eq(fast.violation.text, slow.violation.text);
	ck_assert_mem_eq(&fast.c, &slow.c, sizeof(fast.c));
	ck_assert_mem_eq(fast.state, slow.state, att->dag.state_count);
	ck_assert_mem_eq(fast.edges, slow.edges, (att->dag.sum_edge_count + 63) / 64 * 8);
	ck_assert_mem_eq(fast.agg, slow.agg, att->dag.sum_count * sizeof(uint32_t));
	ps_engine_free(&fast);
	ps_engine_free(&slow);
}

START_TEST(test_strategies_both_paths)
{
	static const uint64_t params[][3] = {
		{ 5, 2, 1 }, { 9, 4, 2 }, { 17, 3, 3 }, { 12, 7, 2 }, { 3, 6, 4 }, { 8, 1, 0 },
	};

	for (size_t k = 0; k < sizeof(params) / sizeof(params[0]); k++)
		for (int norm = 0; norm <= 1; norm++) {
			struct ps_attention att;

			test_attention(&att, params[k][0], params[k][1], params[k][2], norm);
			for (size_t q = 0; q < ps_strategy_count; q++) {
				const struct ps_strategy *s = ps_strategies[q];
				uint64_t min_m = ps_strategy_min_memory(s, &att);

				if (min_m == UINT64_MAX)
					continue;
				both_paths(&att, s, min_m, NULL);
				both_paths(&att, s, min_m + 3, NULL);
				both_paths(&att, s, 4 * att.d * att.r + 64, NULL);
			}
			both_paths(&att, ps_strategy_find("generic"), 200, "square");
			both_paths(&att, ps_strategy_find("generic"), 200, "unit");
			ps_attention_free(&att);
		}
}
END_TEST

/* Blocks that break a rule: the block path declines, the element path
 * names the first broken move, both agree. */
START_TEST(test_broken_blocks_both_paths)
{
	struct ps_attention att;
	struct ps_engine fast, slow;
	struct ps_error err;
	static const uint64_t repeated[] = { 1, 1 };
	struct ps_op ops[] = {
		/* load Q twice over */
		{ .code = PS_OP_LOAD, .kind = PS_KIND_Q, .c = { ps_range(0, 2), ps_range(0, 2) } },
		{ .code = PS_OP_LOAD, .kind = PS_KIND_Q, .c = { ps_range(1, 3), ps_range(0, 1) } },
	};
	struct ps_op macs[] = {
		/* H into N while H is incomplete */
		{ .code = PS_OP_MAC, .kind = PS_KIND_H, .fuse = true,
		  .c = { ps_range(0, 1), ps_range(0, 3), ps_range(0, 3) } },
		{ .code = PS_OP_MAC, .kind = PS_KIND_N, .fuse = true,
		  .c = { ps_range(0, 2), ps_range(0, 3), ps_range(0, 3) } },
		/* a list that repeats an m */
		{ .code = PS_OP_MAC, .kind = PS_KIND_H, .fuse = true,
		  .c = { ps_range(1, 2), ps_list(repeated, 2), ps_range(0, 1) } },
	};

	for (size_t k = 0; k < 3; k++) {
		test_attention(&att, 3, 2, 1, 1);
		ck_assert_int_eq(ps_engine_init(&fast, &att.dag, k == 2 ? 6 : 40, &err), 0);
		ck_assert_int_eq(ps_engine_init(&slow, &att.dag, k == 2 ? 6 : 40, &err), 0);
		slow.element_only = true;
		for (size_t q = 0; q < 2; q++) {
			int a = ps_op_apply(&att, &fast, &ops[q], &err);
			int b = ps_op_apply(&att, &slow, &ops[q], &err);

			ck_assert_int_eq(a, b);
		}
		for (size_t q = 0; q <= k; q++) {
			int a = ps_op_apply(&att, &fast, &macs[q], &err);
			int b = ps_op_apply(&att, &slow, &macs[q], &err);

			ck_assert_int_eq(a, b);
		}
		ck_assert(fast.failed);
		ck_assert_str_eq(fast.violation.text, slow.violation.text);
		ck_assert_uint_eq(fast.violation.move_number, slow.violation.move_number);
		ck_assert_mem_eq(&fast.c, &slow.c, sizeof(fast.c));
		ck_assert_mem_eq(fast.state, slow.state, att.dag.state_count);
		ps_engine_free(&fast);
		ps_engine_free(&slow);
		ps_attention_free(&att);
	}
}
END_TEST

Suite *block_suite(void)
{
	Suite *s = suite_create("block");
	TCase *tc = tcase_create("paths");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_strategies_both_paths);
	tcase_add_test(tc, test_broken_blocks_both_paths);
	suite_add_tcase(s, tc);
	return s;
}
