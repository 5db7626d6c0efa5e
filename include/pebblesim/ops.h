/*
 * Set operations (MODEL.md section 3): the unit that strategies emit and
 * the engine consumes. An operation names a kind and one set per
 * coordinate; it stands for its elementary moves in nested-loop order, the
 * first coordinate outermost. Sinks receive operations one at a time.
 */
#ifndef PEBBLESIM_OPS_H
#define PEBBLESIM_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pebblesim/attention.h"
#include "pebblesim/common.h"
#include "pebblesim/engine.h"

/* A coordinate set: the half-open range [lo, hi), or a list when list is set. */
struct ps_coordset {
	uint64_t lo, hi;
	const uint64_t *list;
	size_t len;
};

static inline struct ps_coordset ps_range(uint64_t lo, uint64_t hi)
{
	struct ps_coordset s = { lo, hi, NULL, 0 };

	return s;
}

static inline struct ps_coordset ps_one(uint64_t v)
{
	return ps_range(v, v + 1);
}

static inline struct ps_coordset ps_list(const uint64_t *values, size_t len)
{
	struct ps_coordset s = { 0, 0, values, len };

	return s;
}

static inline uint64_t ps_coordset_size(const struct ps_coordset *s)
{
	return s->list ? s->len : (s->hi > s->lo ? s->hi - s->lo : 0);
}

static inline uint64_t ps_coordset_at(const struct ps_coordset *s, uint64_t k)
{
	return s->list ? s->list[k] : s->lo + k;
}

enum ps_opcode {
	PS_OP_LOAD,
	PS_OP_SAVE,
	PS_OP_DELETE,
	PS_OP_COMPUTE,
	PS_OP_MAC,
};

const char *ps_opcode_name(enum ps_opcode code);

struct ps_op {
	enum ps_opcode code;
	enum ps_kind kind; /* for a mac: the sum aggregated into, H or N */
	bool fuse;         /* a mac that regenerates U1 (U2) around each use */
	bool carry;        /* a mac into the causal state H[j,m,b] of its
			    * carry HC[j,m,b] (MODEL.md section 7), not P2 */
	struct ps_coordset c[3]; /* the kind's coordinates; a mac: its product's */
	/* one move on one node by its id (a mac: on the product), for any
	 * DAG; kind, fuse and c are then unused */
	bool by_id;
	ps_node node;
};

/* The elementary move an opcode makes. */
enum ps_move ps_opcode_move(enum ps_opcode code);
/* ... and the opcode of a move on one node (a mac, a load, ...). */
enum ps_opcode ps_move_opcode(enum ps_move move);

/* Number of elementary moves the operation stands for. */
uint64_t ps_op_moves(const struct ps_op *op);

/* Checks kind, coordinate count and ranges against the DAG (att may be
 * NULL for an operation by id). */
int ps_op_check(const struct ps_attention *att, const struct ps_op *op,
		struct ps_error *err);

/*
 * Expands op into elementary moves applied to e, in the documented order.
 * Returns 0, PS_EINVALID (e->violation says why) or PS_EINPUT (err). att
 * may be NULL (an explicit DAG) for operations by id.
 */
int ps_op_apply(const struct ps_attention *att, struct ps_engine *e,
		const struct ps_op *op, struct ps_error *err);

/*
 * Calls fn for each elementary move of op in order, with the node it acts
 * on (for a mac, the product); stops at the first non-zero return. The op
 * must have passed ps_op_check.
 */
typedef int (*ps_move_fn)(void *ctx, enum ps_move move, ps_node v);
int ps_op_foreach(const struct ps_attention *att, const struct ps_op *op,
		  ps_move_fn fn, void *ctx);

/* One elementary move resolved through the DAG (the engine's plain forms). */
int ps_engine_apply(struct ps_engine *e, enum ps_move move, ps_node v);

/* Where operations go: the engine, a trace writer, a counter, a tee. */
struct ps_sink {
	int (*emit)(struct ps_sink *sink, const struct ps_op *op,
		    struct ps_error *err);
};

static inline int ps_sink_emit(struct ps_sink *sink, const struct ps_op *op,
			       struct ps_error *err)
{
	return sink->emit(sink, op, err);
}

/*
 * A loop of set operations: count iterations of the body's len operations,
 * iteration t's operation k being body[k] with each coordinate p moved by
 * t step[k][p] (a range by that many values, a list by that many entries:
 * its window advancing in the same array). It stands for its operations
 * in that order, and every sink sees them so, one by one, except the
 * engine's, which judges a loop of a form it knows (src/ops_block.c) as
 * one unit where it proves that every move of it would succeed, and
 * otherwise applies the operations one by one: the verdict, the counters
 * and any violation, with its position, are the same either way.
 */
struct ps_repeat {
	const struct ps_op *body;
	const uint64_t (*step)[3];
	size_t len;
	uint64_t count;
};

/* Appends to a loop's body (*len operations so far) the operation code on
 * kind at c0, c1, c2, its coordinates p whose bit 1 << p is set in moves
 * moving by `by` each iteration, the others staying. */
void ps_repeat_add(struct ps_op *body, uint64_t (*step)[3], size_t *len, enum ps_opcode code,
		   enum ps_kind kind, struct ps_coordset c0, struct ps_coordset c1,
		   struct ps_coordset c2, unsigned moves, uint64_t by);

/* Iteration t's operation k of the loop. */
void ps_repeat_op(const struct ps_repeat *r, uint64_t t, size_t k, struct ps_op *op);

/* Emits the loop to sink (as one unit to the engine's sink). */
int ps_sink_repeat(struct ps_sink *sink, const struct ps_repeat *r, struct ps_error *err);

/* A sink that validates every operation in an engine. */
struct ps_engine_sink {
	struct ps_sink sink;
	const struct ps_attention *att;
	struct ps_engine *engine;
	uint64_t ops; /* operations received: the position of violations */
};

void ps_engine_sink_init(struct ps_engine_sink *s,
			 const struct ps_attention *att, struct ps_engine *e);

/*
 * A sink that passes every operation to next, and every loop whole (so
 * that the engine's sink behind it still judges loops as units), then
 * calls after(ctx, moves) with the moves the operation or loop stood
 * for: a progress line, say.
 */
struct ps_forward_sink {
	struct ps_sink sink;
	struct ps_sink *next;
	void (*after)(void *ctx, uint64_t moves);
	void *ctx;
};

void ps_forward_sink_init(struct ps_forward_sink *s, struct ps_sink *next,
			  void (*after)(void *ctx, uint64_t moves), void *ctx);

/*
 * A sink that checks every field of each operation before next sees it:
 * the opcode, the bytes of fuse and by_id (0 or 1), a node by id below
 * node_count, and the rest by ps_op_check against att (an operation by
 * kind needs att). The first that fails is kept in why, with its number
 * (from 1, as the engine counts), and ends the guard: it and everything
 * after it return PS_EINVALID and reach no sink, as does everything after
 * an error of next's. Loops pass to next whole.
 * It stands before every sink of a plugin's strategy (ps_strategy_run).
 */
struct ps_guard_sink {
	struct ps_sink sink;
	struct ps_sink *next;
	const struct ps_attention *att;
	uint64_t node_count;
	uint64_t ops;      /* operations checked */
	bool failed;       /* an operation out of range: why says which */
	bool next_failed;  /* next returned an error of its own, */
	int next_rc;       /* this one */
	struct ps_error why;
};

void ps_guard_sink_init(struct ps_guard_sink *g, struct ps_sink *next,
			const struct ps_attention *att, uint64_t node_count);

/* A sink that only adds up what the operations would cost. */
struct ps_count_sink {
	struct ps_sink sink;
	uint64_t ops, loads, saves, moves;
};

void ps_count_sink_init(struct ps_count_sink *s);

#endif
