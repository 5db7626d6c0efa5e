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

#include "cache.h"
#include "pebblesim/explicit.h"
#include "pebblesim/strategy.h"

struct vertex_order {
	const struct ps_explicit *x;
	uint64_t *vertices, count; /* the order, count <= x->vertices */
};

static int order_steps(const void *order_ctx, ps_step_fn fn, void *ctx)
{
	const struct vertex_order *o = order_ctx;
	const struct ps_explicit *x = o->x;
	int rc;

	for (uint64_t k = 0; k < o->count; k++) {
		uint64_t v = o->vertices[k];

		if (x->role[v] == PS_ROLE_PLAIN) {
			if ((rc = fn(ctx, PS_STEP_COMPUTE, v)))
				return rc;
		} else if (x->role[v] == PS_ROLE_SUM) {
			uint64_t first = x->vertices + x->edge_base[x->slot[v]];

			for (uint64_t e = 0; e < x->in_start[v + 1] - x->in_start[v]; e++)
				if ((rc = fn(ctx, PS_STEP_MAC, first + e)))
					return rc;
		}
	}
	return 0;
}

/* Post-order of a depth-first search from each output, parents in order. */
static int dfs_order(const struct ps_explicit *x, uint64_t *out, uint64_t *count)
{
	uint64_t *stack = malloc((x->vertices + 1) * sizeof(uint64_t));
	uint64_t *next = calloc(x->vertices + 1, sizeof(uint64_t));
	uint8_t *seen = calloc(x->vertices + 1, 1);
	uint64_t done = 0;

	if (!stack || !next || !seen) {
		free(stack);
		free(next);
		free(seen);
		return PS_ENOMEM;
	}
	for (uint64_t k = 0; k < x->dag.output_count; k++) {
		uint64_t top = 0;

		if (seen[x->outputs[k]])
			continue;
		stack[top++] = x->outputs[k];
		seen[x->outputs[k]] = 1;
		while (top) {
			uint64_t v = stack[top - 1];

			if (next[v] < x->in_start[v + 1] - x->in_start[v]) {
				uint64_t u = x->in_from[x->in_start[v] + next[v]++];

				if (!seen[u]) {
					seen[u] = 1;
					stack[top++] = u;
				}
				continue;
			}
			top--;
			out[done++] = v;
		}
	}
	*count = done;
	free(stack);
	free(next);
	free(seen);
	return PS_OK;
}

static int make_order(const struct ps_problem *pb, struct vertex_order *o,
		      struct ps_error *err)
{
	const char *name = pb->order ? pb->order : "topo";

	int rc;

	o->x = pb->xdag;
	if (strcmp(name, "dfs") && strcmp(name, "topo"))
		return ps_error_set(err, PS_EINPUT, "unknown order '%s': topo or dfs", name);
	o->vertices = malloc((pb->xdag->vertices + 1) * sizeof(uint64_t));
	if (!o->vertices)
		return ps_error_set(err, PS_ENOMEM, "out of memory");
	o->count = pb->xdag->vertices;
	rc = !strcmp(name, "dfs") ? dfs_order(pb->xdag, o->vertices, &o->count)
				  : ps_explicit_topological_order(pb->xdag, o->vertices, err);
	if (rc == PS_ENOMEM)
		ps_error_set(err, PS_ENOMEM, "out of memory");
	if (rc) {
		free(o->vertices);
		o->vertices = NULL;
	}
	return rc;
}

/*
 * Computing a plain vertex holds its parents and itself; a mac holds the
 * edge's source and the sum (an explicit edge takes no slot of its own).
 */
static uint64_t policy_min_memory(const struct ps_problem *pb)
{
	const struct ps_explicit *x = pb->xdag;

	return ps_max_u64(x->max_plain_in + 1, x->sums ? 2 : 1);
}

static int plan_with(const struct ps_problem *pb, struct ps_plan *plan,
		     const char *policy, struct ps_error *err)
{
	uint64_t min_m = policy_min_memory(pb);

	if (pb->M < min_m)
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for this DAG: it needs M >= %llu (the largest in-degree of a plain vertex, plus one)",
				    (unsigned long long)pb->M, (unsigned long long)min_m);
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
	struct vertex_order o;
	int rc = make_order(pb, &o, err);

	if (rc)
		return rc;
	rc = ps_cache_run(&pb->xdag->dag, order_steps, &o, pb->M, policy, sink, err);
	free(o.vertices);
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
	.min_memory_explicit = policy_min_memory,
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
	.min_memory_explicit = policy_min_memory,
	.takes = PS_TAKES_ORDER,
};
