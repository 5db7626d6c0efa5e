/*
 * lru and belady: any explicit DAG (a GraphML or edge-list file), pebbled
 * in a compute order under an eviction policy (cache.h). The order is
 * igraph's topological sort ("topo", the default) or the depth-first
 * post-order from the outputs ("dfs", the natural order for evaluating
 * expressions). A plain vertex is computed at its place in the order, a
 * sum aggregated there edge by edge.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "portfolio.h"
#include "pebblesim/explicit.h"
#include "pebblesim/strategy.h"

static int make_order(const struct ps_problem *pb, struct ps_vertex_order *o,
		      uint64_t **vertices, struct ps_error *err)
{
	const char *name = pb->order ? pb->order : "topo";
	int rc;

	o->x = pb->xdag;
	if (strcmp(name, "dfs") && strcmp(name, "topo"))
		return ps_error_set(err, PS_EINPUT, "unknown order '%s': topo or dfs", name);
	*vertices = malloc((pb->xdag->vertices + 1) * sizeof(uint64_t));
	if (!*vertices)
		return ps_error_set(err, PS_ENOMEM, "out of memory");
	o->count = pb->xdag->vertices;
	rc = !strcmp(name, "dfs") ? ps_dfs_order(pb->xdag, NULL, NULL, *vertices, &o->count)
				  : ps_explicit_topological_order(pb->xdag, *vertices, err);
	if (rc == PS_ENOMEM)
		ps_error_set(err, PS_ENOMEM, "out of memory");
	if (rc) {
		free(*vertices);
		*vertices = NULL;
	}
	o->vertices = *vertices;
	return rc;
}

/*
 * Computing a plain vertex holds its parents and itself; a mac holds the
 * edge's source and the sum (an explicit edge takes no slot of its own).
 */
uint64_t ps_policy_min_memory(const struct ps_problem *pb)
{
	const struct ps_explicit *x = pb->xdag;

	return ps_max_u64(x->max_plain_in + 1, x->sums ? 2 : 1);
}

int ps_policy_check_memory(const struct ps_problem *pb, struct ps_error *err)
{
	uint64_t min_m = ps_policy_min_memory(pb);

	if (pb->M < min_m)
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for this DAG: it needs M >= %llu (the largest in-degree of a plain vertex, plus one)",
				    (unsigned long long)pb->M, (unsigned long long)min_m);
	return PS_OK;
}

static int plan_with(const struct ps_problem *pb, struct ps_plan *plan,
		     const char *policy, struct ps_error *err)
{
	if (ps_policy_check_memory(pb, err))
		return PS_EINPUT;
	if (pb->order && strcmp(pb->order, "topo") && strcmp(pb->order, "dfs"))
		return ps_error_set(err, PS_EINPUT, "unknown order '%s': topo or dfs", pb->order);
	snprintf(plan->summary, sizeof(plan->summary),
		 "%s, %s eviction with lazy saves",
		 pb->order && !strcmp(pb->order, "dfs") ? "depth-first post-order"
							 : "igraph's topological order",
		 policy);
	plan->peak_red = pb->M;
	/* the cache's tables, the order (a word a vertex) and, for dfs, its
	 * search's stack, next edges and marks (17 bytes a vertex) */
	plan->work_bytes = ps_cache_bytes(&pb->xdag->dag, strcmp(policy, "LRU") ?
							   PS_POLICY_BELADY : PS_POLICY_LRU) +
			   8 * pb->xdag->vertices +
			   (pb->order && !strcmp(pb->order, "dfs") ? 17 * pb->xdag->vertices : 0);
	return PS_OK;
}

static int run_with(const struct ps_problem *pb, struct ps_sink *sink,
		    enum ps_policy policy, struct ps_error *err)
{
	struct ps_vertex_order o;
	uint64_t *vertices;
	int rc = make_order(pb, &o, &vertices, err);

	if (rc)
		return rc;
	rc = ps_cache_run(&pb->xdag->dag, ps_vertex_order_steps, &o, pb->M, policy, sink, err);
	free(vertices);
	return rc;
}

static int lru_plan(const struct ps_problem *pb, struct ps_plan *plan,
		    struct ps_error *err)
{
	return plan_with(pb, plan, "LRU", err);
}

static int belady_plan(const struct ps_problem *pb, struct ps_plan *plan,
		       struct ps_error *err)
{
	return plan_with(pb, plan, "Belady (furthest next use)", err);
}

static int lru_run(const struct ps_problem *pb, struct ps_sink *sink,
		   struct ps_error *err)
{
	return run_with(pb, sink, PS_POLICY_LRU, err);
}

static int belady_run(const struct ps_problem *pb, struct ps_sink *sink,
		      struct ps_error *err)
{
	return run_with(pb, sink, PS_POLICY_BELADY, err);
}

static uint64_t attention_never(const struct ps_attention *att)
{
	(void)att;
	return UINT64_MAX;
}

const struct ps_strategy ps_strategy_lru = {
	.version = PS_STRATEGY_VERSION,
	.name = "lru",
	.section = "any DAG: a compute order under least-recently-used eviction",
	.summary = "explicit DAGs (run --dag FILE): --order topo or dfs, LRU, lazy saves",
	.min_memory = attention_never,
	.plan = lru_plan,
	.run = lru_run,
	.flags = PS_STRATEGY_EXPLICIT,
	.min_memory_explicit = ps_policy_min_memory,
	.takes = PS_TAKES_ORDER,
};

const struct ps_strategy ps_strategy_belady = {
	.version = PS_STRATEGY_VERSION,
	.name = "belady",
	.section = "any DAG: a compute order under Belady's furthest-next-use eviction",
	.summary = "explicit DAGs (run --dag FILE): --order topo or dfs, clairvoyant eviction, clean victims on ties",
	.min_memory = attention_never,
	.plan = belady_plan,
	.run = belady_run,
	.flags = PS_STRATEGY_EXPLICIT,
	.min_memory_explicit = ps_policy_min_memory,
	.takes = PS_TAKES_ORDER,
};
