/*
 * auto: every other strategy of the paper that accepts the parameters (the
 * baselines are not candidates) is run into a counting sink (no engine, no trace: its operations are only summed),
 * and the one with the least I/O is kept; the plan says which and by how
 * much it beats the next best. The chosen one then runs as itself.
 */
#include <stdio.h>
#include <string.h>

#include "pebblesim/strategy.h"

/* The cheapest applicable strategy, its I/O, and the runner-up's. */
static const struct ps_strategy *pick(const struct ps_problem *pb,
				      uint64_t *io, const struct ps_strategy **second,
				      uint64_t *second_io, struct ps_error *err)
{
	const struct ps_strategy *best = NULL;

	*io = *second_io = UINT64_MAX;
	*second = NULL;
	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];
		struct ps_count_sink counter;
		struct ps_plan plan;
		struct ps_error ignored;
		uint64_t cost;

		if (!strcmp(s->name, "auto") || (s->flags & PS_STRATEGY_BASELINE) ||
		    pb->M < ps_strategy_min_memory(s, pb->att))
			continue;
		if (ps_strategy_plan(s, pb, &plan, &ignored))
			continue;
		ps_count_sink_init(&counter);
		if (ps_strategy_run(s, pb, &counter.sink, &ignored))
			continue;
		cost = counter.loads + counter.saves;
		if (cost < *io) {
			*second = best;
			*second_io = *io;
			best = s;
			*io = cost;
		} else if (cost < *second_io) {
			*second = s;
			*second_io = cost;
		}
	}
	if (!best)
		ps_error_set(err, PS_EINPUT,
			     "no strategy accepts M = %llu for these parameters",
			     (unsigned long long)pb->M);
	return best;
}

static uint64_t auto_min_memory(const struct ps_attention *att)
{
	uint64_t least = UINT64_MAX;

	for (size_t k = 0; k < ps_strategy_count; k++)
		if (strcmp(ps_strategies[k]->name, "auto") &&
		    !(ps_strategies[k]->flags & PS_STRATEGY_BASELINE))
			least = ps_min_u64(least, ps_strategy_min_memory(ps_strategies[k], att));
	return least;
}

static int auto_plan(const struct ps_problem *pb, struct ps_plan *plan,
		     struct ps_error *err)
{
	const struct ps_strategy *second;
	uint64_t io, second_io;
	const struct ps_strategy *best = pick(pb, &io, &second, &second_io, err);
	char chosen[sizeof(plan->summary)];
	int rc;

	if (!best)
		return PS_EINPUT;
	rc = ps_strategy_plan(best, pb, plan, err);
	if (rc)
		return rc;
	memcpy(chosen, plan->summary, sizeof(chosen));
	if (second)
		snprintf(plan->summary, sizeof(plan->summary),
			 "chose %s, I/O %llu, %.1f%% below %s (%llu): %.150s",
			 best->name, (unsigned long long)io,
			 100.0 * (double)(second_io - io) / (double)second_io,
			 second->name, (unsigned long long)second_io, chosen);
	else
		snprintf(plan->summary, sizeof(plan->summary),
			 "chose %s, the only one that applies: %.180s",
			 best->name, chosen);
	plan->chosen = best;
	return PS_OK;
}

static int auto_run(const struct ps_problem *pb, struct ps_sink *sink,
		    struct ps_error *err)
{
	const struct ps_strategy *second;
	uint64_t io, second_io;
	const struct ps_strategy *best = pick(pb, &io, &second, &second_io, err);

	return best ? ps_strategy_run(best, pb, sink, err) : PS_EINPUT;
}

const struct ps_strategy ps_strategy_auto = {
	.version = PS_STRATEGY_VERSION,
	.name = "auto",
	.section = "the cheapest of the strategies above",
	.summary = "counts every applicable strategy's I/O (without the engine) and runs the least",
	.min_memory = auto_min_memory,
	.plan = auto_plan,
	.run = auto_run,
};
