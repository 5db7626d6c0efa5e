/*
 * Compute orders of explicit DAGs, shared by lru and belady (policies.c)
 * and by the portfolio that `--strategy best` runs on a DAG from a file
 * (portfolio.c).
 */
#ifndef PEBBLESIM_PORTFOLIO_H
#define PEBBLESIM_PORTFOLIO_H

#include <stdint.h>

#include "cache.h"
#include "pebblesim/explicit.h"
#include "pebblesim/strategy.h"

/* A compute order: vertices[count], each after its parents. */
struct ps_vertex_order {
	const struct ps_explicit *x;
	const uint64_t *vertices;
	uint64_t count;
};

/* The steps of an order (ps_order_fn): each plain vertex computed, each
 * sum aggregated edge by edge in the order of its sources. */
int ps_vertex_order_steps(const void *order_ctx, ps_step_fn fn, void *ctx);

/*
 * The post-order of a depth-first search from each output in turn
 * (outputs in x's order, or in that of sinks[] when not NULL), the
 * parents of a vertex visited in their order, or by decreasing rank[]
 * when rank is not NULL (ties in their order). PS_OK or PS_ENOMEM.
 */
int ps_dfs_order(const struct ps_explicit *x, const uint64_t *sinks,
		 const uint64_t *rank, uint64_t *out, uint64_t *count);

/* The I/O (loads + saves) of an order under a policy at M, as ps_cache_run
 * plays it, without the engine; UINT64_MAX when the order cannot be
 * played at M. */
uint64_t ps_order_io(const struct ps_explicit *x, const uint64_t *order,
		     uint64_t count, uint64_t M, enum ps_policy policy);

/* The least M the policies accept on pb->xdag: the largest in-degree of a
 * plain vertex plus one, and 2 when there are sums. */
uint64_t ps_policy_min_memory(const struct ps_problem *pb);

/* PS_OK, or PS_EINPUT with that least M when pb->M is below it. */
int ps_policy_check_memory(const struct ps_problem *pb, struct ps_error *err);

/* The local search's budget when ps_problem.time_limit is 0, seconds. */
#define PS_PORTFOLIO_SECONDS 3.0

/* What the portfolio found: its least I/O and the member that gave it. */
struct ps_portfolio_result {
	uint64_t io;
	const char *policy; /* "belady" or "lru" */
	const char *member; /* its order's name, or "local" */
};

/* The portfolio's search on pb (pb->xdag, pb->M, pb->time_limit), kept
 * for the run that follows. */
int ps_portfolio_best(const struct ps_problem *pb, struct ps_portfolio_result *out,
		      struct ps_error *err);

#endif
