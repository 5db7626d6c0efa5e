/*
 * Plugins that misbehave, for tests/test_plugin.c: one source, a variant
 * per build (-DTEST_PLUGIN_<VARIANT>), each a shared object of its own.
 *
 *   GOOD     tp-liar (colpass's sequence, a prediction one load too many),
 *            tp-cheater (saves an output never computed), tp-old (a
 *            version 1 struct, without `takes`), tp-overbound (claims an
 *            upper bound of 1)
 *   NEWER    tp-future, of a version above this header's
 *   CLASH    a strategy named colpass
 *   CHOOSER  a strategy that says it chooses among others
 *   EMPTY    offers nothing
 *   NOSYM    does not define ps_plugin_strategies
 */
#include <stdio.h>

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
static const struct ps_strategy *const list[] = {
	&liar, &cheater, (const struct ps_strategy *)&old, &overbound,
};
#elif defined(TEST_PLUGIN_NEWER)
static const struct ps_strategy future = LIKE_COLPASS("tp-future", like_colpass_plan, like_colpass_run, PS_STRATEGY_VERSION + 1, 0);
static const struct ps_strategy *const list[] = { &future };
#elif defined(TEST_PLUGIN_CLASH)
static const struct ps_strategy clash = LIKE_COLPASS("colpass", like_colpass_plan, like_colpass_run, PS_STRATEGY_VERSION, 0);
static const struct ps_strategy *const list[] = { &clash };
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
