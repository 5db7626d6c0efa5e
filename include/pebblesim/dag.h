/*
 * The DAG seam: what the engine may ask of a graph, and nothing more.
 *
 * Ids are dense in [0, node_count). Nodes that can hold pebbles come first,
 * in [0, state_count); products (which exist only during a mac, MODEL.md
 * section 2) follow, so the engine sizes its state by state_count alone.
 * A sum's in-edges are numbered 0 .. in_degree-1: the engine keeps the
 * set a sum holds by those numbers.
 */
#ifndef PEBBLESIM_DAG_H
#define PEBBLESIM_DAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pebblesim/common.h"

enum ps_role {
	PS_ROLE_INPUT,   /* starts with a blue pebble; never computed */
	PS_ROLE_PLAIN,   /* computed when all its parents are red */
	PS_ROLE_PRODUCT, /* exists only inside a mac into its one child */
	PS_ROLE_SUM,     /* aggregated edge by edge through macs */
};

/*
 * A product resolved for a mac: its parents and the edge it feeds. In the
 * attention DAG products are nodes (P1, P2); in an explicit DAG each in-edge
 * of a sum is a product whose only parent is the edge's source.
 */
struct ps_product {
	ps_node id;
	ps_node parent[2];
	bool parent_is_sum[2];
	unsigned parent_count;
	ps_node sum;        /* its only child */
	uint64_t edge;      /* its in-edge number in sum */
	uint64_t in_degree; /* of sum */
	unsigned transient; /* 1: a node of its own that holds a red pebble
			     * during the mac (attention's P1, P2); 0: an edge
			     * of an explicit DAG, aggregated from its parent */
};

/* What the engine asks of a sum node. */
struct ps_sum {
	uint64_t in_degree;
};

/*
 * The arrays by which the engine counts loads and saves (I/O by array):
 * each node that holds pebbles belongs to one, numbered below
 * PS_ARRAY_MAX by its DAG. The attention DAGs number them by kind (enum
 * ps_kind: Q, K, V, U1, ..., S, E, O), an explicit DAG by role.
 */
#define PS_ARRAY_MAX 16

struct ps_dag;

struct ps_dag_ops {
	const char *name;
	enum ps_role (*role)(const struct ps_dag *dag, ps_node v);
	/* optional: v's role, and in *end the first id after v's run of ids
	 * that share it (a DAG whose kinds are id ranges answers in bulk) */
	enum ps_role (*role_run)(const struct ps_dag *dag, ps_node v,
				 ps_node *end);
	uint64_t (*parent_count)(const struct ps_dag *dag, ps_node v);
	/* the k-th parent; for a sum, the product of in-edge k */
	ps_node (*parent)(const struct ps_dag *dag, ps_node v, uint64_t k);
	void (*product)(const struct ps_dag *dag, ps_node p,
			struct ps_product *out);
	void (*sum)(const struct ps_dag *dag, ps_node v, struct ps_sum *out);
	/* the k-th output, k < output_count */
	ps_node (*output)(const struct ps_dag *dag, uint64_t k);
	/* a readable name such as "U1[5,(0,3)]" */
	void (*describe)(const struct ps_dag *dag, ps_node v, char *buf,
			 size_t len);
	/* optional, both or neither: the array node v (one that holds
	 * pebbles) belongs to, below PS_ARRAY_MAX; and the k-th array in
	 * the order reports list them, its number in *array and its name
	 * ("K"), or NULL past the last. Without them: the role, and the
	 * roles input, plain and sum */
	unsigned (*array)(const struct ps_dag *dag, ps_node v);
	const char *(*array_at)(const struct ps_dag *dag, unsigned k,
				unsigned *array);
};

struct ps_dag {
	const struct ps_dag_ops *ops;
	uint64_t node_count;
	uint64_t state_count; /* ids below this can hold pebbles */
	uint64_t sum_count;
	uint64_t edge_count;     /* all edges, products' included */
	uint64_t output_count;
};

/* Small dispatch wrappers: callers never touch the function pointers. */
static inline enum ps_role ps_dag_role(const struct ps_dag *dag, ps_node v)
{
	return dag->ops->role(dag, v);
}

static inline enum ps_role ps_dag_role_run(const struct ps_dag *dag,
					   ps_node v, ps_node *end)
{
	if (dag->ops->role_run)
		return dag->ops->role_run(dag, v, end);
	*end = v + 1;
	return dag->ops->role(dag, v);
}

static inline uint64_t ps_dag_parent_count(const struct ps_dag *dag, ps_node v)
{
	return dag->ops->parent_count(dag, v);
}

static inline ps_node ps_dag_parent(const struct ps_dag *dag, ps_node v,
				    uint64_t k)
{
	return dag->ops->parent(dag, v, k);
}

static inline void ps_dag_product(const struct ps_dag *dag, ps_node p,
				  struct ps_product *out)
{
	dag->ops->product(dag, p, out);
}

static inline void ps_dag_sum(const struct ps_dag *dag, ps_node v,
			      struct ps_sum *out)
{
	dag->ops->sum(dag, v, out);
}

static inline ps_node ps_dag_output(const struct ps_dag *dag, uint64_t k)
{
	return dag->ops->output(dag, k);
}

static inline void ps_dag_describe(const struct ps_dag *dag, ps_node v,
				   char *buf, size_t len)
{
	dag->ops->describe(dag, v, buf, len);
}

/* The array v belongs to (the engine counts its loads and saves there). */
static inline unsigned ps_dag_array(const struct ps_dag *dag, ps_node v)
{
	if (dag->ops->array)
		return dag->ops->array(dag, v);
	return (unsigned)dag->ops->role(dag, v);
}

/* The k-th array of dag in report order: its name, and its number in
 * *array; NULL past the last. */
static inline const char *ps_dag_array_at(const struct ps_dag *dag, unsigned k,
					  unsigned *array)
{
	static const enum ps_role roles[] = { PS_ROLE_INPUT, PS_ROLE_PLAIN, PS_ROLE_SUM };
	static const char *const names[] = { "input", "plain", "sum" };

	if (dag->ops->array_at)
		return dag->ops->array_at(dag, k, array);
	if (k >= sizeof(roles) / sizeof(roles[0]))
		return NULL;
	*array = (unsigned)roles[k];
	return names[k];
}

#endif
