/*
 * The engine: the red-blue pebble game with partial aggregation of
 * MODEL.md section 2, played on node ids of any struct ps_dag. It checks
 * every rule, counts, and stops at the first violation with a message that
 * names the node and the rule. It knows nothing of attention.
 */
#ifndef PEBBLESIM_ENGINE_H
#define PEBBLESIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "pebblesim/common.h"
#include "pebblesim/dag.h"

/* The rules a move can break, each with its own message. */
enum ps_rule {
	PS_RULE_NONE,
	PS_RULE_LOAD_NOT_BLUE,      /* load: not in slow memory */
	PS_RULE_LOAD_RED,           /* load: already in fast memory */
	PS_RULE_NOT_RED,            /* save, delete: not in fast memory */
	PS_RULE_PRODUCT_MOVED,      /* load, save, compute of a product */
	PS_RULE_COMPUTE_INPUT,      /* compute of an input */
	PS_RULE_COMPUTE_SUM,        /* compute of a sum */
	PS_RULE_COMPUTE_RED,        /* compute: already in fast memory */
	PS_RULE_PARENT_NOT_RED,     /* compute, mac: a parent not in fast memory */
	PS_RULE_PARENT_INCOMPLETE,  /* compute, mac: a sum parent incomplete */
	PS_RULE_MAC_NOT_PRODUCT,    /* mac of a node that is not a product */
	PS_RULE_MAC_EDGE_DONE,      /* mac: edge already aggregated */
	PS_RULE_MAC_SUM_SLOW_ONLY,  /* mac: sum in slow memory only */
	PS_RULE_CAPACITY,           /* more than M red pebbles */
	PS_RULE_END_NOT_SAVED,      /* end: an output not in slow memory */
	PS_RULE_END_INCOMPLETE,     /* end: an output saved incomplete */
	PS_RULE_END_COUNTS,         /* end: stated counts differ */
	PS_RULE_NO_SUCH_NODE,       /* a move names an id outside the DAG */
};

const char *ps_rule_name(enum ps_rule rule);

enum ps_move {
	PS_MOVE_LOAD,
	PS_MOVE_SAVE,
	PS_MOVE_DELETE,
	PS_MOVE_COMPUTE,
	PS_MOVE_MAC,         /* named by its sum: "mac into H[0,2]" */
	PS_MOVE_MAC_PRODUCT, /* a mac named by a node that is no product */
	PS_MOVE_END,
};

struct ps_counts {
	uint64_t loads, saves;
	uint64_t computes, recomputations, macs;
	uint64_t moves;    /* elementary moves applied */
	uint64_t red;      /* red pebbles now */
	uint64_t peak_red; /* the most at any time, a mac's product counted */
};

struct ps_violation {
	enum ps_rule rule;
	enum ps_move move;
	uint64_t position; /* what the caller set: an op number or a line */
	uint64_t move_number; /* 1-based count of elementary moves */
	ps_node node;      /* the node the move acts on (a mac: its sum) */
	ps_node culprit;   /* the node whose state broke the rule */
	char text[PS_ERROR_MAX]; /* "mac into N[5,2]: U1[5,17] is not in fast memory" */
};

struct ps_engine {
	const struct ps_dag *dag;
	uint64_t M;
	uint8_t *state;   /* [state_count] PS_ST_* bits */
	uint64_t *edges;  /* [sum_edge_count bits] aggregated in-edges */
	uint32_t *agg;    /* [sum_count] edges aggregated per sum */
	struct ps_counts c;
	uint64_t position;
	bool failed;
	struct ps_violation violation;
	/* set operations move by move only: the block path (src/ops_block.c)
	 * off, for differential tests and benchmarks */
	bool element_only;
};

/* Bits of a node's state byte. */
enum {
	PS_ST_RED = 1,
	PS_ST_BLUE = 2,
	PS_ST_COMPUTED = 4,   /* computed at least once: later ones recompute */
	PS_ST_INCOMPLETE = 8, /* a sum whose value misses some in-edge */
	PS_ST_SUM = 16,       /* a sum that has been aggregated into */
};

/* Bytes the engine will allocate for dag: the estimate --help speaks of. */
uint64_t ps_engine_state_bytes(const struct ps_dag *dag);

int ps_engine_init(struct ps_engine *e, const struct ps_dag *dag, uint64_t M,
		   struct ps_error *err);
void ps_engine_free(struct ps_engine *e);

/* The position reported with a violation (an op number, a line). */
static inline void ps_engine_set_position(struct ps_engine *e, uint64_t pos)
{
	e->position = pos;
}

/* Elementary moves: 0, or PS_EINVALID with e->violation filled. */
int ps_engine_load(struct ps_engine *e, ps_node v);
int ps_engine_save(struct ps_engine *e, ps_node v);
int ps_engine_delete(struct ps_engine *e, ps_node v);
int ps_engine_compute(struct ps_engine *e, ps_node v);
int ps_engine_mac(struct ps_engine *e, ps_node p);

/*
 * The same moves with what the DAG would answer already resolved, for
 * callers that know it by arithmetic (the set-operation expander).
 * Verdicts, counts and messages are exactly those of the plain forms.
 */
int ps_engine_compute_plain(struct ps_engine *e, ps_node v,
			    const ps_node *parents, uint64_t parent_count);
int ps_engine_mac_product(struct ps_engine *e, const struct ps_product *p);

/* A sum whose last copy is deleted: its edges and count start again. */
void ps_engine_forget_sum(struct ps_engine *e, ps_node v);

/* The end condition: every output in slow memory, complete. */
int ps_engine_finish(struct ps_engine *e);

static inline bool ps_engine_is_red(const struct ps_engine *e, ps_node v)
{
	return v < e->dag->state_count && (e->state[v] & PS_ST_RED);
}

static inline bool ps_engine_is_blue(const struct ps_engine *e, ps_node v)
{
	return v < e->dag->state_count && (e->state[v] & PS_ST_BLUE);
}

/* "op 12: " + text, or the caller's own prefix. */
void ps_violation_format(const struct ps_violation *v, const char *prefix,
			 char *buf, size_t len);

#endif
