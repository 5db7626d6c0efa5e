/*
 * Set operations: checks of their shape, the documented expansion order,
 * and the resolved fast path against moves resolved through the DAG.
 */
#include <string.h>

#include "pebblesim/ops.h"
#include "pebblesim/strategy.h"
#include "tests.h"

static struct ps_attention att;
static struct ps_engine eng;

static void setup(uint64_t n, uint64_t d, uint64_t g, int norm, uint64_t M)
{
	test_engine_setup(&att, &eng, n, d, g, norm, M);
}

static void teardown(void)
{
	test_engine_teardown(&att, &eng);
}

static int apply(const struct ps_op *op, struct ps_error *err)
{
	return ps_op_apply(&att, &eng, op, err);
}

START_TEST(test_order_first_coordinate_outermost)
{
	static const uint64_t a_list[] = { 1, 0 };
	struct ps_op op = {
		.code = PS_OP_LOAD, .kind = PS_KIND_Q,
		.c = { ps_range(0, 2), ps_list(a_list, 2) },
	};
	struct ps_error err;

	setup(2, 2, 2, 1, 3);
	ck_assert_uint_eq(ps_op_moves(&op), 4);
	/* Q[0,1], Q[0,0], Q[1,1] fit; the fourth, Q[1,0], does not */
	ck_assert_int_eq(apply(&op, &err), PS_EINVALID);
	ck_assert_str_eq(eng.violation.text,
			 "load Q[1,0]: capacity exceeded: 4 red pebbles with M = 3");
	ck_assert_uint_eq(eng.violation.move_number, 4);
	ck_assert(ps_engine_is_red(&eng, ps_attention_id2(&att, PS_KIND_Q, 1, 1)));
	teardown();
}
END_TEST

START_TEST(test_fused_mac_order)
{
	/* U2[j,0] is the constant; U2[0,1] = (0) needs K[0,0], never loaded */
	struct ps_op op = {
		.code = PS_OP_MAC, .kind = PS_KIND_H, .fuse = true,
		.c = { ps_range(0, 1), ps_range(0, 2), ps_one(2) },
	};
	struct ps_error err;

	setup(2, 2, 2, 1, 100);
	ck_assert_uint_eq(ps_op_moves(&op), 6);
	ck_assert_int_eq(apply(&op, &err), PS_EINVALID);
	/* compute U2[0,0], mac, delete U2[0,0], then compute U2[0,1] fails */
	ck_assert_uint_eq(eng.violation.move_number, 4);
	ck_assert_str_eq(eng.violation.text,
			 "compute U2[0,1]: K[0,0] is not in fast memory");
	ck_assert_uint_eq(eng.c.macs, 1);
	ck_assert_uint_eq(eng.c.red, 1); /* H[0,2] */
	teardown();

	setup(2, 2, 2, 1, 100);
	op.c[0] = ps_range(0, 2);
	op.c[1] = ps_one(0);
	ck_assert_int_eq(apply(&op, &err), PS_OK);
	ck_assert_uint_eq(eng.c.moves, 6);
	ck_assert_uint_eq(eng.c.computes, 2);
	ck_assert_uint_eq(eng.c.macs, 2);
	ck_assert_uint_eq(eng.c.peak_red, 3); /* H, U2 and the product */
	teardown();
}
END_TEST

START_TEST(test_shape_errors)
{
	static const uint64_t far[] = { 0, 7 };
	struct ps_op op = {
		.code = PS_OP_LOAD, .kind = PS_KIND_Q,
		.c = { ps_range(0, 5), ps_range(0, 1) },
	};
	struct ps_error err;

	setup(2, 2, 2, 1, 100);
	ck_assert_int_eq(apply(&op, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "Q coordinate i range [0, 5) is not within [0, 2)");
	op.c[0] = ps_one(0);
	op.c[1] = ps_list(far, 2);
	ck_assert_int_eq(apply(&op, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "Q coordinate a = 7 is out of range [0, 2)");
	op.kind = PS_KIND_V;
	op.c[1] = ps_one(2); /* the ones column is no node of V */
	ck_assert_int_eq(apply(&op, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "V coordinate b = 2 is out of range [0, 2)");
	op.code = PS_OP_MAC;
	op.kind = PS_KIND_Q;
	ck_assert_int_eq(apply(&op, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "a mac aggregates into H or N, not into Q");
	op.code = PS_OP_LOAD;
	op.fuse = true;
	ck_assert_int_eq(apply(&op, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "\"fuse\" belongs to a mac, not to a load");
	ck_assert_uint_eq(eng.c.moves, 0);
	teardown();

	setup(2, 2, 2, 0, 100);
	op.fuse = false;
	op.kind = PS_KIND_A;
	op.c[1] = ps_one(0);
	ck_assert_int_eq(apply(&op, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "there is no A without normalisation");
	teardown();
}
END_TEST

START_TEST(test_empty_sets)
{
	struct ps_op op = {
		.code = PS_OP_MAC, .kind = PS_KIND_H, .fuse = true,
		.c = { ps_range(0, 2), ps_range(0, 1), ps_range(1, 1) },
	};
	struct ps_op load = {
		.code = PS_OP_LOAD, .kind = PS_KIND_Q,
		.c = { ps_range(0, 2), ps_range(1, 1) },
	};
	struct ps_error err;

	setup(2, 2, 2, 1, 100);
	/* an empty set stands for no moves */
	ck_assert_uint_eq(ps_op_moves(&load), 0);
	ck_assert_int_eq(apply(&load, &err), PS_OK);
	ck_assert_uint_eq(eng.c.moves, 0);
	/* but a fused mac computes and deletes its plain parent for each
	 * (row, m) even around no columns, as MODEL.md's expansion reads */
	ck_assert_uint_eq(ps_op_moves(&op), 4);
	ck_assert_int_eq(apply(&op, &err), PS_OK);
	ck_assert_uint_eq(eng.c.moves, 4);
	ck_assert_uint_eq(eng.c.computes, 2);
	ck_assert_uint_eq(eng.c.macs, 0);
	/* so a fused mac over U2[0,0] while it is red breaks the rule */
	ck_assert_int_eq(ps_engine_compute(&eng, ps_attention_id2(&att, PS_KIND_U2, 0, 0)), 0);
	ck_assert_int_eq(apply(&op, &err), PS_EINVALID);
	ck_assert_str_eq(eng.violation.text, "compute U2[0,0]: U2[0,0] is already in fast memory");
	teardown();
}
END_TEST

struct recorder {
	ps_node moves[16];
	enum ps_move kinds[16];
	int count;
};

static int record(void *ctx, enum ps_move move, ps_node v)
{
	struct recorder *r = ctx;

	r->kinds[r->count] = move;
	r->moves[r->count++] = v;
	return 0;
}

START_TEST(test_foreach_matches_the_documented_expansion)
{
	struct ps_op op = {
		.code = PS_OP_MAC, .kind = PS_KIND_N, .fuse = true,
		.c = { ps_one(1), ps_range(2, 4), ps_range(0, 2) },
	};
	struct recorder r = { .count = 0 };
	int k = 0;

	test_attention(&att, 2, 2, 2, 1);
	ck_assert_int_eq(ps_op_foreach(&att, &op, record, &r), 0);
	ck_assert_int_eq(r.count, (int)ps_op_moves(&op));
	for (uint64_t m = 2; m < 4; m++) {
		ck_assert_int_eq(r.kinds[k], PS_MOVE_COMPUTE);
		ck_assert_uint_eq(r.moves[k++], ps_attention_id2(&att, PS_KIND_U1, 1, m));
		for (uint64_t b = 0; b < 2; b++) {
			ck_assert_int_eq(r.kinds[k], PS_MOVE_MAC);
			ck_assert_uint_eq(r.moves[k++], ps_attention_id3(&att, PS_KIND_P1, 1, m, b));
		}
		ck_assert_int_eq(r.kinds[k], PS_MOVE_DELETE);
		ck_assert_uint_eq(r.moves[k++], ps_attention_id2(&att, PS_KIND_U1, 1, m));
	}
	ps_attention_free(&att);
}
END_TEST

/* A sink that replays each operation move by move through the DAG. */
struct dag_sink {
	struct ps_sink sink;
	const struct ps_attention *att;
	struct ps_engine *engine;
};

static int apply_move(void *ctx, enum ps_move move, ps_node v)
{
	return ps_engine_apply(ctx, move, v);
}

static int dag_emit(struct ps_sink *sink, const struct ps_op *op,
		    struct ps_error *err)
{
	struct dag_sink *s = (struct dag_sink *)sink;
	int rc = ps_op_check(s->att, op, err);

	return rc ? rc : ps_op_foreach(s->att, op, apply_move, s->engine);
}

/* The resolved fast path and the DAG path agree on every count. */
static void differential(uint64_t n, uint64_t d, uint64_t g, int norm,
			 uint64_t M, const char *tiles)
{
	const struct ps_strategy *s = ps_strategy_find("generic");
	struct ps_problem pb = { .M = M, .tiles = tiles };
	struct ps_engine fast, slow;
	struct ps_engine_sink fs;
	struct dag_sink ds = { .sink.emit = dag_emit };
	struct ps_error err;

	test_attention(&att, n, d, g, norm);
	pb.att = &att;
	ck_assert_int_eq(ps_engine_init(&fast, &att.dag, M, &err), 0);
	ck_assert_int_eq(ps_engine_init(&slow, &att.dag, M, &err), 0);
	ps_engine_sink_init(&fs, &att, &fast);
	ds.att = &att;
	ds.engine = &slow;
	ck_assert_int_eq(ps_strategy_run(s, &pb, &fs.sink, &err), 0);
	ck_assert_int_eq(ps_strategy_run(s, &pb, &ds.sink, &err), 0);
	ck_assert_int_eq(ps_engine_finish(&fast), 0);
	ck_assert_int_eq(ps_engine_finish(&slow), 0);
	ck_assert_mem_eq(&fast.c, &slow.c, sizeof(fast.c));
	{
		char why[256];

		ck_assert_msg(ps_engine_same(&fast, &slow, why, sizeof(why)), "%s", why);
	}
	ps_engine_free(&fast);
	ps_engine_free(&slow);
	ps_attention_free(&att);
}

START_TEST(test_fast_path_equals_dag_path)
{
	differential(5, 3, 2, 1, 64, NULL);
	differential(5, 3, 2, 0, 64, "square");
	differential(7, 2, 3, 1, 40, "tall");
	differential(3, 4, 1, 1, 10, "unit");
	differential(4, 2, 0, 1, 16, NULL);
}
END_TEST

START_TEST(test_count_sink)
{
	struct ps_count_sink cs;
	struct ps_op op = {
		.code = PS_OP_SAVE, .kind = PS_KIND_N,
		.c = { ps_range(0, 3), ps_range(1, 3) },
	};
	struct ps_error err;

	ps_count_sink_init(&cs);
	ck_assert_int_eq(ps_sink_emit(&cs.sink, &op, &err), 0);
	op.code = PS_OP_LOAD;
	op.kind = PS_KIND_Q;
	ck_assert_int_eq(ps_sink_emit(&cs.sink, &op, &err), 0);
	ck_assert_uint_eq(cs.saves, 6);
	ck_assert_uint_eq(cs.loads, 6);
	ck_assert_uint_eq(cs.ops, 2);
}
END_TEST

Suite *ops_suite(void)
{
	Suite *s = suite_create("ops");
	TCase *tc = tcase_create("expansion");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_order_first_coordinate_outermost);
	tcase_add_test(tc, test_fused_mac_order);
	tcase_add_test(tc, test_shape_errors);
	tcase_add_test(tc, test_empty_sets);
	tcase_add_test(tc, test_foreach_matches_the_documented_expansion);
	tcase_add_test(tc, test_fast_path_equals_dag_path);
	tcase_add_test(tc, test_count_sink);
	suite_add_tcase(s, tc);
	return s;
}
