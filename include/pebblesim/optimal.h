/*
 * The exact optimum of small instances (docs/OPTIMAL.md): the least I/O
 * of the game of MODEL.md section 2, partial aggregation included, found
 * by A* over the game's states (red set, blue set, each sum's set of
 * aggregated in-edges) held as hashed bitsets.
 *
 * The search reads its DAG through the DAG seam (dag.h) alone, the same
 * struct ps_dag the engine plays on: nodes, roles, parents, products and
 * outputs, so that the search and the engine cannot disagree on the DAG.
 * Its moves are the engine's elementary moves; the sequence it returns
 * is meant to be replayed in the engine (ps_optimal_check).
 */
#ifndef PEBBLESIM_OPTIMAL_H
#define PEBBLESIM_OPTIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pebblesim/common.h"
#include "pebblesim/dag.h"
#include "pebblesim/engine.h"

/* The largest DAG searched: nodes that hold pebbles, and sums' in-edges. */
#define PS_OPTIMAL_MAX_NODES 1024
#define PS_OPTIMAL_MAX_EDGES 8192

/* No upper bound known. */
#define PS_OPTIMAL_NONE UINT64_MAX

struct ps_optimal_limits {
	double seconds;  /* wall time, 0: none */
	uint64_t bytes;  /* the search's tables, 0: none */
	uint64_t upper;  /* an I/O known to be reachable (a strategy's), or
			  * PS_OPTIMAL_NONE: the search proves or beats it */
};

enum ps_optimal_status {
	PS_OPTIMAL_FOUND,      /* lower == upper; moves hold a sequence of that
				* I/O unless upper_is_given */
	PS_OPTIMAL_BRACKETED,  /* a limit stopped it: lower <= optimum <= upper */
	PS_OPTIMAL_INFEASIBLE, /* no sequence completes the DAG under M */
};

/* One elementary move: for a mac, node is the product. */
struct ps_optimal_move {
	enum ps_move move;
	ps_node node;
};

struct ps_optimal_result {
	enum ps_optimal_status status;
	uint64_t lower;        /* proven: the smallest f-value still open */
	uint64_t upper;        /* the best I/O known, or PS_OPTIMAL_NONE */
	bool upper_is_given;   /* upper is limits.upper: the search found
				* nothing below it, and moves is empty */
	uint64_t start_bound;  /* the heuristic at the start */
	struct ps_optimal_move *moves; /* the best sequence the search found */
	size_t move_count;
	uint64_t states, expanded; /* states stored, states expanded */
	uint64_t bytes;        /* the tables' size at the end */
	double seconds;
	const char *stopped_by; /* "time limit", "memory limit", or NULL */
};

/* A* with the heuristic and the pruning rules of docs/OPTIMAL.md. Returns
 * PS_OK with res filled (free it with ps_optimal_result_free), or
 * PS_EINPUT for a DAG beyond the limits above, PS_ENOMEM. */
int ps_optimal_search(const struct ps_dag *dag, uint64_t M,
		      const struct ps_optimal_limits *limits,
		      struct ps_optimal_result *res, struct ps_error *err);

void ps_optimal_result_free(struct ps_optimal_result *res);

/* The heuristic of the start state: a lower bound on every sequence's
 * I/O (docs/OPTIMAL.md), with no search. PS_EINPUT beyond the limits. */
int ps_optimal_start_bound(const struct ps_dag *dag, uint64_t *bound,
			   struct ps_error *err);

/* Replays moves in a fresh engine on dag under M and ends the game:
 * PS_OK with the counts, or PS_EINVALID with the violation's text. */
int ps_optimal_check(const struct ps_dag *dag, uint64_t M,
		     const struct ps_optimal_move *moves, size_t count,
		     struct ps_counts *counts, struct ps_error *err);

#endif
