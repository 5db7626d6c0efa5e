/*
 * The shared piece of the strategies for any DAG: a compute order (a
 * sequence of steps, each a compute of a plain node or a mac of one
 * product) played under capacity M by an eviction policy that inserts the
 * loads, saves and deletes itself.
 *
 * Both policies save a dirty value only when it is evicted while still
 * needed (it has a later use), and save every output; a value with no
 * later use is deleted at once (after its save, for an output).
 *   lru:    evicts the least recently used value;
 *   belady: evicts the value used furthest in the future (clairvoyant),
 *           a clean one (already in slow memory) on ties.
 */
#ifndef PEBBLESIM_CACHE_H
#define PEBBLESIM_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "pebblesim/dag.h"
#include "pebblesim/ops.h"

enum ps_step_kind { PS_STEP_COMPUTE, PS_STEP_MAC };

/* Receives the steps of a compute order, one at a time. */
typedef int (*ps_step_fn)(void *ctx, enum ps_step_kind kind, ps_node node);

/* Emits a compute order: every step, in order, to fn. */
typedef int (*ps_order_fn)(const void *order_ctx, ps_step_fn fn, void *ctx);

enum ps_policy { PS_POLICY_LRU, PS_POLICY_BELADY };

/*
 * Belady keeps the next use of every operand occurrence: at most this many
 * (8 bytes each, 16 while they are prepared) before it refuses.
 */
#define PS_BELADY_MAX_OCCURRENCES UINT64_C(30000000)

/* The smallest M the policies accept for this order: every step's operands,
 * its result and (for an attention product) the product's slot. */
int ps_cache_min_memory(const struct ps_dag *dag, ps_order_fn order,
			const void *order_ctx, uint64_t *min_m,
			uint64_t *occurrences, struct ps_error *err);

/* The bytes the policy's tables take for dag, about: --dry-run adds them
 * to the engine's state. */
uint64_t ps_cache_bytes(const struct ps_dag *dag, enum ps_policy policy);

/* Plays the order under M with the policy, emitting moves into sink. */
int ps_cache_run(const struct ps_dag *dag, ps_order_fn order,
		 const void *order_ctx, uint64_t M, enum ps_policy policy,
		 struct ps_sink *sink, struct ps_error *err);

#endif
