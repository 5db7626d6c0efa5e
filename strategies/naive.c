/*
 * naive and naive-belady: the baselines a hardware cache would reach on the
 * straightforward program, the textbook loop order under an eviction
 * policy (cache.h):
 *
 *   for j, m, b:  H[m,b] += U2[j,m] V'[j,b]     (U2[j,m] computed at b = 0)
 *   for i, b, m:  N[i,b] += U1[i,m] H[m,b]      (U1[i,m] computed at b = 0)
 *   for i, b:     A[i,b] = N[i,b] / N[i,d]
 *
 * naive evicts the least recently used value, naive-belady the one used
 * furthest in the future. On exact attention (naive-exact and
 * naive-exact-belady) the loops are row by row:
 *
 *   for i, j:  S[i,j] += Q[i,a] K[j,a] over a;  E[i,j];  O[i,b] += E[i,j] V'[j,b] over b
 *   for i, b:  A[i,b] = O[i,b] / O[i,d]
 * Neither has a cost model: their counts are what
 * the policy happens to do, measured by the engine.
 */
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "pebblesim/engine.h"
#include "pebblesim/strategy.h"

/* the last loop of both: A[i,b] = N[i,b] / N[i,d] (or O's) */
static int outputs(const struct ps_attention *att, ps_step_fn fn, void *ctx)
{
	int rc;

	if (att->normalize)
		for (uint64_t i = 0; i < att->n; i++)
			for (uint64_t b = 0; b < att->d; b++)
				if ((rc = fn(ctx, PS_STEP_COMPUTE,
					     ps_attention_id2(att, PS_KIND_A, i, b))))
					return rc;
	return 0;
}

static int naive_order(const void *order_ctx, ps_step_fn fn, void *ctx)
{
	const struct ps_attention *att = order_ctx;
	int rc;

	for (uint64_t j = 0; j < att->n; j++)
		for (uint64_t m = 0; m < att->r; m++) {
			if ((rc = fn(ctx, PS_STEP_COMPUTE,
				     ps_attention_id2(att, PS_KIND_U2, j, m))))
				return rc;
			for (uint64_t b = 0; b < att->nb; b++)
				if ((rc = fn(ctx, PS_STEP_MAC,
					     ps_attention_id3(att, PS_KIND_P2, j, m, b))))
					return rc;
		}
	for (uint64_t i = 0; i < att->n; i++)
		for (uint64_t b = 0; b < att->nb; b++)
			for (uint64_t m = 0; m < att->r; m++) {
				if (b == 0 && (rc = fn(ctx, PS_STEP_COMPUTE,
						       ps_attention_id2(att, PS_KIND_U1, i, m))))
					return rc;
				if ((rc = fn(ctx, PS_STEP_MAC,
					     ps_attention_id3(att, PS_KIND_P1, i, m, b))))
					return rc;
			}
	return outputs(att, fn, ctx);
}

static int naive_exact_order(const void *order_ctx, ps_step_fn fn, void *ctx)
{
	const struct ps_attention *att = order_ctx;
	int rc;

	for (uint64_t i = 0; i < att->n; i++)
		for (uint64_t j = 0; j < att->n; j++) {
			for (uint64_t a = 0; a < att->d; a++)
				if ((rc = fn(ctx, PS_STEP_MAC,
					     ps_attention_id3(att, PS_KIND_PS, i, j, a))))
					return rc;
			if ((rc = fn(ctx, PS_STEP_COMPUTE,
				     ps_attention_id2(att, PS_KIND_E, i, j))))
				return rc;
			for (uint64_t b = 0; b < att->nb; b++)
				if ((rc = fn(ctx, PS_STEP_MAC,
					     ps_attention_id3(att, PS_KIND_PO, i, j, b))))
					return rc;
		}
	return outputs(att, fn, ctx);
}

/*
 * A mac holds U (or H), V (or H), the sum and the product: 4; computing U
 * holds its support and itself; A holds two N and itself.
 */
static uint64_t naive_min_memory(const struct ps_attention *att)
{
	/* exact attention: a mac holds Q, K (or E, V), the sum and the product */
	return att->exact ? 4 : ps_max_u64(4, ps_min_u64(att->g, att->d) + 1);
}

static int plan_with(const struct ps_problem *pb, struct ps_plan *plan,
		     const char *policy, struct ps_error *err)
{
	const struct ps_attention *att = pb->att;

	plan->work_bytes = ps_cache_bytes(&att->dag, strcmp(policy, "LRU") ?
						     PS_POLICY_BELADY : PS_POLICY_LRU);
	/* the key loop is the outer one: every sum of H holds the in-edges
	 * of the keys so far, a run of them, until the last key */
	if (!att->exact &&
	    ps_add_u64(ps_engine_state_bytes(&att->dag),
		       ps_engine_partial_bytes(att->r * att->nb, 0, att->n, att->r * att->nb),
		       &plan->state_bytes))
		plan->state_bytes = UINT64_MAX;
	if (pb->M < naive_min_memory(pb->att))
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for the textbook loops: they need M >= %llu",
				    (unsigned long long)pb->M,
				    (unsigned long long)naive_min_memory(pb->att));
	snprintf(plan->summary, sizeof(plan->summary), pb->att->exact ?
		 "textbook loops (i,j): S[i,j] over a, E[i,j], O[i,.] over b; then A, under %s eviction with lazy saves" :
		 "textbook loops (j,m,b) for H, (i,b,m) for N, then A, under %s eviction with lazy saves",
		 policy);
	plan->peak_red = pb->M;
	return PS_OK;
}

static int naive_plan(const struct ps_problem *pb, struct ps_plan *plan,
		      struct ps_error *err)
{
	return plan_with(pb, plan, "LRU", err);
}

static int naive_belady_plan(const struct ps_problem *pb, struct ps_plan *plan,
			     struct ps_error *err)
{
	return plan_with(pb, plan, "Belady (furthest next use)", err);
}

static int naive_run(const struct ps_problem *pb, struct ps_sink *sink,
		     struct ps_error *err)
{
	return ps_cache_run(&pb->att->dag, pb->att->exact ? naive_exact_order : naive_order,
			    pb->att, pb->M, PS_POLICY_LRU, sink, err);
}

static int naive_belady_run(const struct ps_problem *pb, struct ps_sink *sink,
			    struct ps_error *err)
{
	return ps_cache_run(&pb->att->dag, pb->att->exact ? naive_exact_order : naive_order,
			    pb->att, pb->M, PS_POLICY_BELADY, sink, err);
}

const struct ps_strategy ps_strategy_naive = {
	.version = PS_STRATEGY_VERSION,
	.name = "naive",
	.section = "baseline: the textbook loops under LRU",
	.summary = "what a hardware cache reaches on the straightforward program: loops (j,m,b), (i,b,m), LRU",
	.min_memory = naive_min_memory,
	.plan = naive_plan,
	.run = naive_run,
	.flags = PS_STRATEGY_BASELINE,
};

const struct ps_strategy ps_strategy_naive_belady = {
	.version = PS_STRATEGY_VERSION,
	.name = "naive-belady",
	.section = "baseline: the textbook loops under Belady's clairvoyant policy",
	.summary = "the same loops, evicting the value used furthest in the future (small and medium n)",
	.min_memory = naive_min_memory,
	.plan = naive_belady_plan,
	.run = naive_belady_run,
	.flags = PS_STRATEGY_BASELINE,
};

const struct ps_strategy ps_strategy_naive_exact = {
	.version = PS_STRATEGY_VERSION,
	.name = "naive-exact",
	.section = "baseline on exact attention: the textbook loops under LRU",
	.summary = "what a hardware cache reaches on the straightforward exact attention: row by row, LRU",
	.min_memory = naive_min_memory,
	.plan = naive_plan,
	.run = naive_run,
	.flags = PS_STRATEGY_BASELINE | PS_STRATEGY_EXACT,
};

const struct ps_strategy ps_strategy_naive_exact_belady = {
	.version = PS_STRATEGY_VERSION,
	.name = "naive-exact-belady",
	.section = "baseline on exact attention: the textbook loops under Belady's policy",
	.summary = "the same loops on exact attention, evicting the value used furthest in the future",
	.min_memory = naive_min_memory,
	.plan = naive_belady_plan,
	.run = naive_belady_run,
	.flags = PS_STRATEGY_BASELINE | PS_STRATEGY_EXACT,
};
