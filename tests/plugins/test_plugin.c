/*
 * Plugins that misbehave, for tests/test_plugin.c: one source, a variant
 * per build (-DTEST_PLUGIN_<VARIANT>), each a shared object of its own.
 *
 *   GOOD     tp-liar (colpass's sequence, a prediction one load too many),
 *            tp-cheater (saves an output never computed), tp-old (a
 *            version 1 struct, without `takes`), tp-overbound (claims an
 *            upper bound of 1), tp-bad-* (an operation out of range,
 *            each in one field), tp-silent (a run that fails without a
 *            message), tp-bad-summary (a plan's summary in Latin-1),
 *            tp-long-summary (a UTF-8 summary cut by its buffer),
 *            tp-totals (a cost model of the totals, no breakdown by array)
 *   BADTEXT  a section in Latin-1
 *   NEWER    tp-future, of a version above this header's
 *   CLASH    a strategy named colpass
 *   CHOOSER  a strategy that says it chooses among others
 *   EMPTY    offers nothing
 *   NOSYM    does not define ps_plugin_strategies
 */
#include <stdio.h>
#include <string.h>

#include <pebblesim/strategy.h>

#ifndef TEST_PLUGIN_NOSYM

/* each variant uses some of the functions below */
#define MAYBE_UNUSED __attribute__((unused))

MAYBE_UNUSED static const struct ps_strategy *colpass(void)
{
	return ps_strategy_find("colpass");
}

MAYBE_UNUSED static uint64_t like_colpass_min_memory(const struct ps_attention *att)
{
	return ps_strategy_min_memory(colpass(), att);
}

MAYBE_UNUSED static int like_colpass_run(const struct ps_problem *pb, struct ps_sink *sink,
			    struct ps_error *err)
{
	return ps_strategy_run(colpass(), pb, sink, err);
}

MAYBE_UNUSED static int like_colpass_plan(const struct ps_problem *pb, struct ps_plan *plan,
			     struct ps_error *err)
{
	return ps_strategy_plan(colpass(), pb, plan, err);
}

/* colpass's plan, one load more than colpass makes */
MAYBE_UNUSED static int liar_plan(const struct ps_problem *pb, struct ps_plan *plan,
		     struct ps_error *err)
{
	int rc = like_colpass_plan(pb, plan, err);

	plan->loads++;
	return rc;
}

/* colpass's plan, claiming an upper bound below any pebbling */
MAYBE_UNUSED static int overbound_plan(const struct ps_problem *pb, struct ps_plan *plan,
			  struct ps_error *err)
{
	int rc = like_colpass_plan(pb, plan, err);

	plan->bounded = true;
	plan->upper.name = "tp-overbound's claim";
	snprintf(plan->upper.formula, sizeof(plan->upper.formula), "1");
	plan->upper.value = 1;
	return rc;
}

MAYBE_UNUSED static int cheater_plan(const struct ps_problem *pb, struct ps_plan *plan,
			struct ps_error *err)
{
	(void)pb;
	(void)err;
	snprintf(plan->summary, sizeof(plan->summary), "saves A[0,0] at once");
	plan->saves = 1;
	plan->predicted = true;
	return PS_OK;
}

/* save A[0,0]: A has no red pebble (MODEL.md section 2, save) */
MAYBE_UNUSED static int cheater_run(const struct ps_problem *pb, struct ps_sink *sink,
		       struct ps_error *err)
{
	struct ps_op op = { .code = PS_OP_SAVE, .kind = PS_KIND_A,
			    .c = { ps_one(0), ps_one(0) } };

	(void)pb;
	return ps_sink_emit(sink, &op, err);
}

/* Operations out of range, one strategy each (tp-bad-*): the run invalid,
 * the plugin named, nothing of the operation read. */
MAYBE_UNUSED static int emit_bad(struct ps_sink *sink, struct ps_op *op, struct ps_error *err)
{
	/* a valid operation first, so that the bad one is number 2 */
	struct ps_op load = { .code = PS_OP_LOAD, .kind = PS_KIND_Q,
			      .c = { ps_one(0), ps_one(0) } };
	int rc = ps_sink_emit(sink, &load, err);

	return rc ? rc : ps_sink_emit(sink, op, err);
}

MAYBE_UNUSED static int bad_opcode_run(const struct ps_problem *pb, struct ps_sink *sink,
				       struct ps_error *err)
{
	struct ps_op op = { .code = (enum ps_opcode)99, .kind = PS_KIND_U1,
			    .c = { ps_range(0, 2), ps_range(0, 2) } };

	(void)pb;
	return emit_bad(sink, &op, err);
}

MAYBE_UNUSED static int bad_opcode_id_run(const struct ps_problem *pb, struct ps_sink *sink,
					  struct ps_error *err)
{
	struct ps_op op = { .code = (enum ps_opcode)99, .by_id = true, .node = 0 };

	(void)pb;
	return emit_bad(sink, &op, err);
}

MAYBE_UNUSED static int bad_kind_run(const struct ps_problem *pb, struct ps_sink *sink,
				     struct ps_error *err)
{
	struct ps_op op = { .code = PS_OP_LOAD, .kind = (enum ps_kind)77,
			    .c = { ps_one(0), ps_one(0) } };

	(void)pb;
	return emit_bad(sink, &op, err);
}

MAYBE_UNUSED static int bad_bool_run(const struct ps_problem *pb, struct ps_sink *sink,
				     struct ps_error *err)
{
	struct ps_op op = { .code = PS_OP_MAC, .kind = PS_KIND_N,
			    .c = { ps_one(0), ps_one(0), ps_one(0) } };
	const unsigned char two = 2;

	(void)pb;
	memcpy(&op.fuse, &two, 1);
	return emit_bad(sink, &op, err);
}

MAYBE_UNUSED static int bad_node_run(const struct ps_problem *pb, struct ps_sink *sink,
				     struct ps_error *err)
{
	struct ps_op op = { .code = PS_OP_LOAD, .by_id = true, .node = 1u << 30 };

	(void)pb;
	return emit_bad(sink, &op, err);
}

MAYBE_UNUSED static int bad_range_run(const struct ps_problem *pb, struct ps_sink *sink,
				      struct ps_error *err)
{
	struct ps_op op = { .code = PS_OP_LOAD, .kind = PS_KIND_Q,
			    .c = { ps_range(1, 1000), ps_one(0) } };

	(void)pb;
	return emit_bad(sink, &op, err);
}

/* a loop of loads of Q[i, 0], i = 0, 8, 16, ...: its third out of range
 * at n = 16, after two that the engine applies */
MAYBE_UNUSED static int bad_loop_run(const struct ps_problem *pb, struct ps_sink *sink,
				     struct ps_error *err)
{
	struct ps_op body[1];
	uint64_t step[1][3];
	size_t len = 0;
	struct ps_repeat r = { body, (const uint64_t (*)[3])step, 1, 3 };

	(void)pb;
	ps_repeat_add(body, step, &len, PS_OP_LOAD, PS_KIND_Q, ps_one(0), ps_one(0), ps_one(0),
		      1, 8);
	return ps_sink_repeat(sink, &r, err);
}

/* a bad operation whose answer it ignores, then more, then success */
MAYBE_UNUSED static int bad_ignored_run(const struct ps_problem *pb, struct ps_sink *sink,
					struct ps_error *err)
{
	struct ps_op op = { .code = (enum ps_opcode)7, .kind = PS_KIND_Q,
			    .c = { ps_one(0), ps_one(0) } };

	emit_bad(sink, &op, err);
	like_colpass_run(pb, sink, err);
	return PS_OK;
}

/* a run that fails without a word */
MAYBE_UNUSED static int silent_run(const struct ps_problem *pb, struct ps_sink *sink,
				   struct ps_error *err)
{
	(void)pb;
	(void)sink;
	(void)err;
	return PS_EINPUT;
}

/* colpass's plan with a summary that is not UTF-8 (Latin-1's e acute) */
MAYBE_UNUSED static int bad_summary_plan(const struct ps_problem *pb, struct ps_plan *plan,
					 struct ps_error *err)
{
	int rc = like_colpass_plan(pb, plan, err);

	snprintf(plan->summary, sizeof(plan->summary), "caf\xe9 au lait");
	return rc;
}

/* colpass's plan with a summary of 300 e acutes in UTF-8, cut by the
 * buffer inside the 128th */
MAYBE_UNUSED static int long_summary_plan(const struct ps_problem *pb, struct ps_plan *plan,
					  struct ps_error *err)
{
	int rc = like_colpass_plan(pb, plan, err);
	size_t k;

	for (k = 0; k + 1 < sizeof(plan->summary); k++)
		plan->summary[k] = (char)(k % 2 ? 0xa9 : 0xc3);
	plan->summary[k - 1] = (char)0xc3;
	plan->summary[k] = '\0';
	return rc;
}

/* colpass's plan with its totals alone, no breakdown by array */
MAYBE_UNUSED static int totals_plan(const struct ps_problem *pb, struct ps_plan *plan,
				    struct ps_error *err)
{
	int rc = like_colpass_plan(pb, plan, err);

	memset(plan->by_array, 0, sizeof(plan->by_array));
	return rc;
}

#define LIKE_COLPASS(NAME, PLAN, RUN, VERSION, FLAGS) { \
	.version = (VERSION), .name = (NAME), .section = "a test plugin", \
	.summary = "tests/plugins/test_plugin.c", .min_memory = like_colpass_min_memory, \
	.plan = (PLAN), .run = (RUN), .flags = (FLAGS) }

/* The struct as version 1 of the header had it: no `takes`. */
struct ps_strategy_v1 {
	unsigned version;
	const char *name, *section, *summary;
	uint64_t (*min_memory)(const struct ps_attention *att);
	int (*plan)(const struct ps_problem *pb, struct ps_plan *plan, struct ps_error *err);
	int (*run)(const struct ps_problem *pb, struct ps_sink *sink, struct ps_error *err);
	unsigned flags;
	uint64_t (*min_memory_explicit)(const struct ps_problem *pb);
};

#if defined(TEST_PLUGIN_GOOD)
static const struct ps_strategy liar = LIKE_COLPASS("tp-liar", liar_plan, like_colpass_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND);
static const struct ps_strategy cheater = LIKE_COLPASS("tp-cheater", cheater_plan, cheater_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND);
static const struct ps_strategy overbound = LIKE_COLPASS("tp-overbound", overbound_plan, like_colpass_run, PS_STRATEGY_VERSION, 0);
static const struct ps_strategy_v1 old = LIKE_COLPASS("tp-old", like_colpass_plan, like_colpass_run, 1, PS_STRATEGY_BEYOND);
static const struct ps_strategy bad[] = {
	LIKE_COLPASS("tp-bad-opcode", like_colpass_plan, bad_opcode_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
	LIKE_COLPASS("tp-bad-opcode-id", like_colpass_plan, bad_opcode_id_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
	LIKE_COLPASS("tp-bad-kind", like_colpass_plan, bad_kind_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
	LIKE_COLPASS("tp-bad-bool", like_colpass_plan, bad_bool_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
	LIKE_COLPASS("tp-bad-node", like_colpass_plan, bad_node_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
	LIKE_COLPASS("tp-bad-range", like_colpass_plan, bad_range_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
	LIKE_COLPASS("tp-bad-loop", like_colpass_plan, bad_loop_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
	LIKE_COLPASS("tp-bad-ignored", like_colpass_plan, bad_ignored_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
	LIKE_COLPASS("tp-silent", like_colpass_plan, silent_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
	LIKE_COLPASS("tp-bad-summary", bad_summary_plan, like_colpass_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
	LIKE_COLPASS("tp-long-summary", long_summary_plan, like_colpass_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
	LIKE_COLPASS("tp-totals", totals_plan, like_colpass_run, PS_STRATEGY_VERSION, PS_STRATEGY_BEYOND),
};
static const struct ps_strategy *const list[] = {
	&liar, &cheater, (const struct ps_strategy *)&old, &overbound,
	&bad[0], &bad[1], &bad[2], &bad[3], &bad[4], &bad[5], &bad[6], &bad[7], &bad[8],
	&bad[9], &bad[10], &bad[11],
};
#elif defined(TEST_PLUGIN_NEWER)
static const struct ps_strategy future = LIKE_COLPASS("tp-future", like_colpass_plan, like_colpass_run, PS_STRATEGY_VERSION + 1, 0);
static const struct ps_strategy *const list[] = { &future };
#elif defined(TEST_PLUGIN_CLASH)
static const struct ps_strategy clash = LIKE_COLPASS("colpass", like_colpass_plan, like_colpass_run, PS_STRATEGY_VERSION, 0);
static const struct ps_strategy *const list[] = { &clash };
#elif defined(TEST_PLUGIN_BADTEXT)
static const struct ps_strategy badtext = {
	.version = PS_STRATEGY_VERSION, .name = "tp-badtext", .section = "a caf\xe9 plugin",
	.summary = "tests/plugins/test_plugin.c", .min_memory = like_colpass_min_memory,
	.plan = like_colpass_plan, .run = like_colpass_run,
};
static const struct ps_strategy *const list[] = { &badtext };
#elif defined(TEST_PLUGIN_CHOOSER)
static const struct ps_strategy chooser = LIKE_COLPASS("tp-chooser", like_colpass_plan, like_colpass_run, PS_STRATEGY_VERSION, PS_STRATEGY_CHOOSER);
static const struct ps_strategy *const list[] = { &chooser };
#endif

const struct ps_strategy *const *ps_plugin_strategies(unsigned host_version, size_t *count)
{
	(void)host_version;
#ifdef TEST_PLUGIN_EMPTY
	*count = 0;
	return NULL;
#else
	*count = sizeof(list) / sizeof(list[0]);
	return list;
#endif
}

#else
/* a shared object of strategies that forgot to say where they are */
const char *test_plugin_nothing = "no ps_plugin_strategies here";
#endif
