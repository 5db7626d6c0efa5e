/*
 * The red-blue pebble game with partial aggregation (MODEL.md section 2).
 *
 * One edge bitset per sum serves both its red and its blue value: a mac
 * removes the blue pebble and a save copies red to blue, so whenever a sum
 * has both pebbles they hold the same set, and whichever exists owns the
 * bits. Losing the last copy (deleting a red sum without a blue one) clears
 * them: the sum starts again from an empty set.
 */
#include "pebblesim/engine.h"

#include "bits.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const rule_names[] = {
	[PS_RULE_NONE] = "none",
	[PS_RULE_LOAD_NOT_BLUE] = "load-not-in-slow-memory",
	[PS_RULE_LOAD_RED] = "load-already-in-fast-memory",
	[PS_RULE_NOT_RED] = "not-in-fast-memory",
	[PS_RULE_PRODUCT_MOVED] = "product-moved",
	[PS_RULE_COMPUTE_INPUT] = "compute-input",
	[PS_RULE_COMPUTE_SUM] = "compute-sum",
	[PS_RULE_COMPUTE_RED] = "compute-already-in-fast-memory",
	[PS_RULE_PARENT_NOT_RED] = "parent-not-in-fast-memory",
	[PS_RULE_PARENT_INCOMPLETE] = "parent-incomplete",
	[PS_RULE_MAC_NOT_PRODUCT] = "mac-not-a-product",
	[PS_RULE_MAC_EDGE_DONE] = "mac-edge-already-aggregated",
	[PS_RULE_MAC_SUM_SLOW_ONLY] = "mac-sum-in-slow-memory-only",
	[PS_RULE_CAPACITY] = "capacity",
	[PS_RULE_END_NOT_SAVED] = "output-not-saved",
	[PS_RULE_END_INCOMPLETE] = "output-incomplete",
	[PS_RULE_END_COUNTS] = "end-counts-differ",
	[PS_RULE_NO_SUCH_NODE] = "no-such-node",
};

static const char *const move_names[] = {
	[PS_MOVE_LOAD] = "load",
	[PS_MOVE_SAVE] = "save",
	[PS_MOVE_DELETE] = "delete",
	[PS_MOVE_COMPUTE] = "compute",
	[PS_MOVE_MAC] = "mac into",
	[PS_MOVE_MAC_PRODUCT] = "mac of",
	[PS_MOVE_END] = "end",
};

const char *ps_rule_name(enum ps_rule rule)
{
	return rule_names[rule];
}

uint64_t ps_engine_state_bytes(const struct ps_dag *dag)
{
	return dag->state_count + (dag->sum_edge_count + 63) / 64 * 8 +
	       dag->sum_count * sizeof(uint32_t);
}

int ps_engine_init(struct ps_engine *e, const struct ps_dag *dag, uint64_t M,
		   struct ps_error *err)
{
	uint64_t words = (dag->sum_edge_count + 63) / 64;

	memset(e, 0, sizeof(*e));
	e->dag = dag;
	e->M = M;
	if (dag->state_count > SIZE_MAX || words > SIZE_MAX / 8 ||
	    dag->sum_count > SIZE_MAX / sizeof(uint32_t))
		return ps_error_set(err, PS_ENOMEM,
				    "pebble state of %llu bytes does not fit this address space",
				    (unsigned long long)ps_engine_state_bytes(dag));
	e->state = calloc(dag->state_count ? dag->state_count : 1, 1);
	e->edges = calloc(words ? words : 1, sizeof(uint64_t));
	e->agg = calloc(dag->sum_count ? dag->sum_count : 1, sizeof(uint32_t));
	if (!e->state || !e->edges || !e->agg) {
		ps_engine_free(e);
		return ps_error_set(err, PS_ENOMEM,
				    "out of memory for a pebble state of %llu bytes",
				    (unsigned long long)ps_engine_state_bytes(dag));
	}
	/* Start: every input has a blue pebble. */
	for (ps_node v = 0, end; v < dag->state_count; v = end)
		if (ps_dag_role_run(dag, v, &end) == PS_ROLE_INPUT)
			memset(e->state + v, PS_ST_BLUE,
			       ps_min_u64(end, dag->state_count) - v);
	return PS_OK;
}

void ps_engine_free(struct ps_engine *e)
{
	free(e->state);
	free(e->edges);
	free(e->agg);
	e->state = NULL;
	e->edges = NULL;
	e->agg = NULL;
}

void ps_violation_format(const struct ps_violation *v, const char *prefix,
			 char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", prefix ? prefix : "", v->text);
}

/*
 * Records the first violation. The message reads
 * "<move> <node>: <culprit> <reason>" with the culprit's name substituted
 * for %s in reason (or the node's when culprit is the node itself).
 */
static int violate(struct ps_engine *e, enum ps_rule rule, enum ps_move move,
		   ps_node node, ps_node culprit, const char *reason, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 6, 7)))
#endif
	;

static int violate(struct ps_engine *e, enum ps_rule rule, enum ps_move move,
		   ps_node node, ps_node culprit, const char *reason, ...)
{
	struct ps_violation *v = &e->violation;
	char what[128] = "";
	size_t used;
	va_list ap;

	e->failed = true;
	v->rule = rule;
	v->move = move;
	v->position = e->position;
	v->move_number = e->c.moves;
	v->node = node;
	v->culprit = culprit;
	if (move != PS_MOVE_END && node < e->dag->node_count)
		ps_dag_describe(e->dag, node, what, sizeof(what));
	used = (size_t)snprintf(v->text, sizeof(v->text), "%s%s%s: ",
				move_names[move], what[0] ? " " : "", what);
	if (used < sizeof(v->text)) {
		va_start(ap, reason);
		vsnprintf(v->text + used, sizeof(v->text) - used, reason, ap);
		va_end(ap);
	}
	return PS_EINVALID;
}

/* The culprit's name, for messages. */
static const char *name_of(const struct ps_engine *e, ps_node v, char *buf,
			   size_t len)
{
	ps_dag_describe(e->dag, v, buf, len);
	return buf;
}

#define NAME(v) name_of(e, (v), namebuf, sizeof(namebuf))

static int check_id(struct ps_engine *e, enum ps_move move, ps_node v)
{
	if (v < e->dag->node_count)
		return PS_OK;
	return violate(e, PS_RULE_NO_SUCH_NODE, move, v, v,
		       "node %llu is not in the DAG (it has %llu nodes)",
		       (unsigned long long)v,
		       (unsigned long long)e->dag->node_count);
}

static int add_red(struct ps_engine *e, enum ps_move move, ps_node v,
		   uint64_t transient)
{
	uint64_t need = e->c.red + 1 + transient;

	if (need > e->M)
		return violate(e, PS_RULE_CAPACITY, move, v, v,
			       "capacity exceeded: %llu red pebbles with M = %llu",
			       (unsigned long long)need,
			       (unsigned long long)e->M);
	return PS_OK;
}

static void note_peak(struct ps_engine *e, uint64_t red)
{
	if (red > e->c.peak_red)
		e->c.peak_red = red;
}

int ps_engine_load(struct ps_engine *e, ps_node v)
{
	char namebuf[128];
	uint8_t st;

	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	if (check_id(e, PS_MOVE_LOAD, v))
		return PS_EINVALID;
	if (v >= e->dag->state_count)
		return violate(e, PS_RULE_PRODUCT_MOVED, PS_MOVE_LOAD, v, v,
			       "%s is a product: products exist only inside a mac",
			       NAME(v));
	st = e->state[v];
	if (st & PS_ST_RED)
		return violate(e, PS_RULE_LOAD_RED, PS_MOVE_LOAD, v, v,
			       "%s is already in fast memory", NAME(v));
	if (!(st & PS_ST_BLUE))
		return violate(e, PS_RULE_LOAD_NOT_BLUE, PS_MOVE_LOAD, v, v,
			       "%s is not in slow memory", NAME(v));
	if (add_red(e, PS_MOVE_LOAD, v, 0))
		return PS_EINVALID;
	e->state[v] = st | PS_ST_RED;
	e->c.red++;
	note_peak(e, e->c.red);
	e->c.loads++;
	return PS_OK;
}

int ps_engine_save(struct ps_engine *e, ps_node v)
{
	char namebuf[128];

	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	if (check_id(e, PS_MOVE_SAVE, v))
		return PS_EINVALID;
	if (v >= e->dag->state_count)
		return violate(e, PS_RULE_PRODUCT_MOVED, PS_MOVE_SAVE, v, v,
			       "%s is a product: products exist only inside a mac",
			       NAME(v));
	if (!(e->state[v] & PS_ST_RED))
		return violate(e, PS_RULE_NOT_RED, PS_MOVE_SAVE, v, v,
			       "%s is not in fast memory", NAME(v));
	/* the blue pebble now holds the red value (and its edge set) */
	e->state[v] |= PS_ST_BLUE;
	e->c.saves++;
	return PS_OK;
}

void ps_engine_forget_sum(struct ps_engine *e, ps_node v)
{
	/* the only copy is gone: the sum starts again from nothing */
	struct ps_sum s;

	ps_dag_sum(e->dag, v, &s);
	if (s.edge_stride == 1)
		ps_bits_fill(e->edges, s.edge_base, s.edge_base + s.in_degree, false);
	else if (e->agg[s.slot])
		for (uint64_t k = 0, bit = s.edge_base; k < s.in_degree; k++, bit += s.edge_stride)
			e->edges[bit / 64] &= ~(UINT64_C(1) << (bit % 64));
	e->agg[s.slot] = 0;
	e->state[v] &= (uint8_t)~PS_ST_INCOMPLETE;
}

int ps_engine_delete(struct ps_engine *e, ps_node v)
{
	char namebuf[128];
	uint8_t st;

	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	if (check_id(e, PS_MOVE_DELETE, v))
		return PS_EINVALID;
	if (v >= e->dag->state_count)
		return violate(e, PS_RULE_PRODUCT_MOVED, PS_MOVE_DELETE, v, v,
			       "%s is a product: products exist only inside a mac",
			       NAME(v));
	if (!((st = e->state[v]) & PS_ST_RED))
		return violate(e, PS_RULE_NOT_RED, PS_MOVE_DELETE, v, v,
			       "%s is not in fast memory", NAME(v));
	e->state[v] = st & (uint8_t)~PS_ST_RED;
	e->c.red--;
	if ((st & PS_ST_SUM) && !(st & PS_ST_BLUE))
		ps_engine_forget_sum(e, v);
	return PS_OK;
}

static int check_parent(struct ps_engine *e, enum ps_move move, ps_node v,
			ps_node parent)
{
	char namebuf[128];
	uint8_t st = e->state[parent];

	if (!(st & PS_ST_RED))
		return violate(e, PS_RULE_PARENT_NOT_RED, move, v, parent,
			       "%s is not in fast memory", NAME(parent));
	if (st & PS_ST_INCOMPLETE) {
		struct ps_sum s;

		ps_dag_sum(e->dag, parent, &s);
		return violate(e, PS_RULE_PARENT_INCOMPLETE, move, v, parent,
			       "%s is incomplete (%llu of %llu in-edges aggregated)",
			       NAME(parent),
			       (unsigned long long)e->agg[s.slot],
			       (unsigned long long)s.in_degree);
	}
	return PS_OK;
}

/* compute v once its move is counted; parents resolved by the caller */
static int compute_counted(struct ps_engine *e, ps_node v,
			   const ps_node *parents, uint64_t parent_count)
{
	uint8_t st = e->state[v];

	if (st & PS_ST_RED) {
		char namebuf[128];

		return violate(e, PS_RULE_COMPUTE_RED, PS_MOVE_COMPUTE, v, v,
			       "%s is already in fast memory", NAME(v));
	}
	for (uint64_t k = 0; k < parent_count; k++)
		if (check_parent(e, PS_MOVE_COMPUTE, v, parents[k]))
			return PS_EINVALID;
	if (add_red(e, PS_MOVE_COMPUTE, v, 0))
		return PS_EINVALID;
	if (st & PS_ST_COMPUTED)
		e->c.recomputations++;
	e->state[v] = st | PS_ST_RED | PS_ST_COMPUTED;
	e->c.red++;
	note_peak(e, e->c.red);
	e->c.computes++;
	return PS_OK;
}

int ps_engine_compute_plain(struct ps_engine *e, ps_node v,
			    const ps_node *parents, uint64_t parent_count)
{
	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	return compute_counted(e, v, parents, parent_count);
}

int ps_engine_compute(struct ps_engine *e, ps_node v)
{
	char namebuf[128];
	ps_node parents[64];
	uint64_t count;
	enum ps_role role;

	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	if (check_id(e, PS_MOVE_COMPUTE, v))
		return PS_EINVALID;
	role = ps_dag_role(e->dag, v);
	if (role == PS_ROLE_INPUT)
		return violate(e, PS_RULE_COMPUTE_INPUT, PS_MOVE_COMPUTE, v, v,
			       "%s is an input: inputs are loaded, never computed",
			       NAME(v));
	if (role == PS_ROLE_SUM)
		return violate(e, PS_RULE_COMPUTE_SUM, PS_MOVE_COMPUTE, v, v,
			       "%s is a sum: sums are aggregated by mac, never computed",
			       NAME(v));
	if (role == PS_ROLE_PRODUCT)
		return violate(e, PS_RULE_PRODUCT_MOVED, PS_MOVE_COMPUTE, v, v,
			       "%s is a product: products exist only inside a mac",
			       NAME(v));
	count = ps_dag_parent_count(e->dag, v);
	if (count <= 64) {
		for (uint64_t k = 0; k < count; k++)
			parents[k] = ps_dag_parent(e->dag, v, k);
		return compute_counted(e, v, parents, count);
	}
	/* a plain node of a large in-degree: check its parents in place */
	for (uint64_t k = 0; k < count; k++)
		if (check_parent(e, PS_MOVE_COMPUTE, v, ps_dag_parent(e->dag, v, k)))
			return PS_EINVALID;
	return compute_counted(e, v, NULL, 0);
}

/* a mac once its move is counted */
static int mac_counted(struct ps_engine *e, const struct ps_product *p)
{
	char namebuf[128];
	ps_node v = p->sum;
	uint8_t st;
	uint64_t fresh;
	uint64_t word = p->edge_bit / 64, mask = UINT64_C(1) << (p->edge_bit % 64);

	for (unsigned k = 0; k < p->parent_count; k++)
		if (check_parent(e, PS_MOVE_MAC, v, p->parent[k]))
			return PS_EINVALID;
	st = e->state[v];
	if (!(st & PS_ST_RED) && (st & PS_ST_BLUE))
		return violate(e, PS_RULE_MAC_SUM_SLOW_ONLY, PS_MOVE_MAC, v, v,
			       "%s is in slow memory only: load it before aggregating into it",
			       NAME(v));
	if (e->edges[word] & mask)
		return violate(e, PS_RULE_MAC_EDGE_DONE, PS_MOVE_MAC, v, p->id,
			       "the in-edge from %s is already aggregated",
			       NAME(p->id));
	/* a product holds a red pebble during the move; a new sum one more */
	fresh = (st & PS_ST_RED) ? 0 : 1;
	if (e->c.red + p->transient + fresh > e->M) {
		if (p->transient)
			return violate(e, PS_RULE_CAPACITY, PS_MOVE_MAC, v, p->id,
				       "capacity exceeded: %llu red pebbles with M = %llu (the product %s needs a slot)",
				       (unsigned long long)(e->c.red + 1 + fresh),
				       (unsigned long long)e->M, NAME(p->id));
		return violate(e, PS_RULE_CAPACITY, PS_MOVE_MAC, v, v,
			       "capacity exceeded: %llu red pebbles with M = %llu",
			       (unsigned long long)(e->c.red + fresh),
			       (unsigned long long)e->M);
	}
	note_peak(e, e->c.red + p->transient + fresh);
	e->edges[word] |= mask;
	e->c.red += fresh;
	st = (uint8_t)((st | PS_ST_RED | PS_ST_SUM) & ~PS_ST_BLUE);
	if (++e->agg[p->sum_slot] < p->in_degree)
		st |= PS_ST_INCOMPLETE;
	else
		st &= (uint8_t)~PS_ST_INCOMPLETE;
	e->state[v] = st;
	e->c.macs++;
	return PS_OK;
}

int ps_engine_mac_product(struct ps_engine *e, const struct ps_product *p)
{
	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	return mac_counted(e, p);
}

int ps_engine_mac(struct ps_engine *e, ps_node p)
{
	char namebuf[128];
	struct ps_product prod;

	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	if (check_id(e, PS_MOVE_MAC_PRODUCT, p))
		return PS_EINVALID;
	if (ps_dag_role(e->dag, p) != PS_ROLE_PRODUCT)
		return violate(e, PS_RULE_MAC_NOT_PRODUCT, PS_MOVE_MAC_PRODUCT, p, p,
			       "%s is not a product: a mac aggregates a product into its sum",
			       NAME(p));
	ps_dag_product(e->dag, p, &prod);
	return mac_counted(e, &prod);
}

int ps_engine_finish(struct ps_engine *e)
{
	char namebuf[128];

	if (e->failed)
		return PS_EINVALID;
	for (uint64_t k = 0; k < e->dag->output_count; k++) {
		ps_node v = ps_dag_output(e->dag, k);
		uint8_t st = e->state[v];

		if (!(st & PS_ST_BLUE))
			return violate(e, PS_RULE_END_NOT_SAVED, PS_MOVE_END, v,
				       v, "output %s is not in slow memory",
				       NAME(v));
		if (st & PS_ST_INCOMPLETE) {
			struct ps_sum s;

			ps_dag_sum(e->dag, v, &s);
			return violate(e, PS_RULE_END_INCOMPLETE, PS_MOVE_END,
				       v, v, "output %s is incomplete in slow memory (%llu of %llu in-edges aggregated)",
				       NAME(v), (unsigned long long)e->agg[s.slot],
				       (unsigned long long)s.in_degree);
		}
	}
	return PS_OK;
}
