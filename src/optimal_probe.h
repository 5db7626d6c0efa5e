/*
 * Internal to src/optimal.c and its tests: the search's heuristic at any
 * state of a DAG, so that a test can hold it against the exact cost of
 * completing the game from every state an exhaustive search reaches
 * (docs/OPTIMAL.md, "The heuristic"). Not part of the public API.
 */
#ifndef PEBBLESIM_SRC_OPTIMAL_PROBE_H
#define PEBBLESIM_SRC_OPTIMAL_PROBE_H

#include <stdint.h>

#include "pebblesim/common.h"
#include "pebblesim/dag.h"

struct ps_optimal_probe;

/* The search's tables for dag under M: PS_OK, or PS_EINPUT beyond the
 * search's limits, or PS_ENOMEM. */
int ps_optimal_probe_new(const struct ps_dag *dag, uint64_t M,
			 struct ps_optimal_probe **out, struct ps_error *err);

/* The heuristic at the state where node v (of those that hold pebbles)
 * is red when red[v] and blue when blue[v], and the k-th in-edge of the
 * sums, sum after sum in the order of their ids, is in its sum's set
 * when edge[k] (edge may be NULL on a DAG without sums). */
uint64_t ps_optimal_probe_h(struct ps_optimal_probe *p, const uint8_t *red,
			    const uint8_t *blue, const uint8_t *edge);

void ps_optimal_probe_free(struct ps_optimal_probe *p);

#endif
