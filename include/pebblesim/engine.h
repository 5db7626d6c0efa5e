/*
 * The engine: the red-blue pebble game with partial aggregation of
 * MODEL.md section 2, played on node ids of any struct ps_dag. It checks
 * every rule, counts, and stops at the first violation with a message that
 * names the node and the rule. It knows nothing of attention.
 *
 * Its state is its own (src/engine_state.h): every change of it, the
 * block path's (src/ops_block.c) and a trace's included, goes through the
 * functions of src/engine.c. It is held for what is live: pages of flags
 * for the nodes a sequence touches, a record for each sum that holds
 * some of its in-edges but not all, a few whole tiles of S and E for
 * exact attention's fused tiling, and runs of rows per column for the
 * plain nodes fused macs computed over consecutive rows; nothing for the
 * DAG's edges.
 *
 * Invariants (ps_engine_check verifies them; the tests do after every
 * block):
 *   - c.red is the number of red pebbles, and at most M while not failed;
 *     c.peak_red is at least every c.red the game has had;
 *   - c.by_array's loads add up to c.loads, its saves to c.saves;
 *   - a sum is incomplete exactly while it holds some in-edges but fewer
 *     than its in-degree: then it has a record whose count is the number
 *     of in-edges in its set; a complete sum has none;
 *   - a sum that holds in-edges, complete or not, holds a pebble, red or
 *     blue (losing its last copy, it starts again from nothing);
 *   - only a sum is complete or incomplete, only a plain node computed;
 *   - every input is blue;
 *   - the first violation is final: once failed, no move changes the
 *     state, the counters or the violation;
 *   - a block of sums known to hold one record (src/engine_state.h,
 *     struct ps_uniform) holds it: every sum of it, that record;
 *   - a node of a region's runs of computed nodes (struct ps_col_runs)
 *     is plain and has no computed bit of its own;
 *   - every node of a block known red (struct ps_red_known) is red.
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
	PS_RULE_BAD_OPERATION,      /* a plugin's operation out of range */
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

/* Loads and saves of one array of the DAG (dag.h, PS_ARRAY_MAX). */
struct ps_array_io {
	uint64_t loads, saves;
};

/* The loads and saves of by_array[0, PS_ARRAY_MAX), added up. */
static inline void ps_array_io_total(const struct ps_array_io *by_array,
				     uint64_t *loads, uint64_t *saves)
{
	*loads = *saves = 0;
	for (unsigned k = 0; k < PS_ARRAY_MAX; k++) {
		*loads += by_array[k].loads;
		*saves += by_array[k].saves;
	}
}

struct ps_counts {
	uint64_t loads, saves;
	uint64_t computes, recomputations, macs;
	uint64_t moves;    /* elementary moves applied */
	uint64_t red;      /* red pebbles now */
	uint64_t peak_red; /* the most at any time, a mac's product counted */
	/* loads and saves by the array of the node moved (ps_dag_array):
	 * they add up to loads and saves */
	struct ps_array_io by_array[PS_ARRAY_MAX];
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

struct ps_engine_state;

struct ps_engine {
	const struct ps_dag *dag;
	uint64_t M;
	struct ps_engine_state *st; /* the engine's own */
	struct ps_counts c;
	uint64_t position;
	bool failed;
	struct ps_violation violation;
	/* set operations move by move only: the block path (src/ops_block.c)
	 * off, for differential tests and benchmarks */
	bool element_only;
};

/* A node's flags, as ps_engine_flags gives them. */
enum {
	PS_ST_RED = 1,
	PS_ST_BLUE = 2,
	PS_ST_COMPUTED = 4,   /* computed at least once: later ones recompute */
	PS_ST_INCOMPLETE = 8, /* a sum whose value misses some in-edge */
	PS_ST_SUM = 16,       /* a sum that holds in-edges, complete or not */
};

/* Bytes the engine will allocate for dag when a sequence touches every
 * node: the estimate --dry-run and the memory limits use. */
uint64_t ps_engine_state_bytes(const struct ps_dag *dag);
/* The same when `untouched` of its plain nodes never hold a bit: the block
 * path keeps the plain nodes of fused macs (U1 and U2 under a tiling) as
 * runs of rows per column, outside the planes. */
uint64_t ps_engine_state_bytes_except(const struct ps_dag *dag, uint64_t untouched);
/* Beside them, for a sequence that leaves sums holding some in-edges, not
 * all, at once: records of their sets (the sums of a row aggregated
 * together share one), bitsets of those whose sets are no run of in_degree
 * in-edges, and the index over span consecutive ids where the sums lie. */
uint64_t ps_engine_partial_bytes(uint64_t records, uint64_t bitsets, uint64_t in_degree,
				 uint64_t span);
/* The same from the numbers of nodes a sequence touches: in all (the page
 * tables are resident where they lie), and of each role. */
uint64_t ps_engine_state_bytes_of(uint64_t nodes, uint64_t inputs, uint64_t plain,
				  uint64_t sums, uint64_t outputs);

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

/* The end condition: every output in slow memory, complete. */
int ps_engine_finish(struct ps_engine *e);

/* A node's PS_ST_* flags (0 for a product or an id outside the DAG). */
uint8_t ps_engine_flags(const struct ps_engine *e, ps_node v);

static inline bool ps_engine_is_red(const struct ps_engine *e, ps_node v)
{
	return ps_engine_flags(e, v) & PS_ST_RED;
}

static inline bool ps_engine_is_blue(const struct ps_engine *e, ps_node v)
{
	return ps_engine_flags(e, v) & PS_ST_BLUE;
}

/* The in-edges a sum holds now (0 untouched, its in-degree complete), and
 * whether it holds in-edge k. */
uint64_t ps_engine_sum_count(const struct ps_engine *e, ps_node v);
bool ps_engine_edge_done(const struct ps_engine *e, ps_node v, uint64_t k);

/* Records a violation found outside the moves (a trace's stated counts):
 * "<move> <node>: " + the reason, as the moves' own. Returns PS_EINVALID;
 * nothing once failed. */
int ps_engine_violate(struct ps_engine *e, enum ps_rule rule, enum ps_move move,
		      ps_node node, const char *reason, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 5, 6)))
#endif
	;

/* dst, initialised on the same DAG and M, takes src's game: PS_OK or
 * PS_ENOMEM. */
int ps_engine_copy(struct ps_engine *dst, const struct ps_engine *src);

/* Do a and b (the same DAG) hold the same game: counters, violation,
 * every node's flags and every sum's in-edges? If not, why says where. */
bool ps_engine_same(const struct ps_engine *a, const struct ps_engine *b,
		    char *why, size_t len);

/* The invariants above: true, or false with the first that fails in why.
 * It visits every node: for tests, on small DAGs. */
bool ps_engine_check(const struct ps_engine *e, char *why, size_t len);

/* "op 12: " + text, or the caller's own prefix. */
void ps_violation_format(const struct ps_violation *v, const char *prefix,
			 char *buf, size_t len);

#endif
