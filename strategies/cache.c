/*
 * The eviction policies over a compute order (cache.h).
 *
 * A first pass over the order counts each node's uses (its occurrences as
 * an operand: parents of a compute, parents of a product, and a sum in
 * every mac into it after the first); Belady also records, for every
 * occurrence, the step of the same node's next one. Then the order is
 * played: operands are made red (loaded when needed), room is made by
 * evicting, the step is emitted, and values with no use left retire.
 * The policy's view of the pebbles is its own; the engine behind the sink
 * judges every move it emits.
 */
#include "cache.h"

#include <stdlib.h>
#include <string.h>

enum {
	ST_RED = 1,
	ST_BLUE = 2,
	ST_VALUE = 4,   /* a sum with a value (red or blue), or started */
	ST_OUTPUT = 8,
	ST_PINNED = 16, /* an operand of the step being played */
};

#define NIL UINT32_MAX
#define NEVER (UINT64_MAX / 4)

struct cache {
	const struct ps_dag *dag;
	uint64_t M;
	enum ps_policy policy;
	struct ps_sink *sink;
	struct ps_error *err;
	uint8_t *st;
	uint32_t *uses;
	uint64_t red;
	/* lru: red nodes from least to most recently used */
	uint32_t *prev, *next, head, tail;
	/* belady: next use of each node, occurrences' next uses, a max-heap */
	uint64_t *next_use, *first_use, *occ_next, cursor;
	uint32_t *heap, *pos;
	uint64_t heap_len;
	/* the operands of the step being played */
	ps_node *pins;
	uint64_t pin_count, pin_cap;
	/* counting pass */
	uint64_t steps, occurrences, min_m, max_operands;
	uint64_t *occ_node; /* belady preparation only */
};

/* ---- operands ---------------------------------------------------------- */

/*
 * Calls fn for each operand of a step, in the order the passes share. A
 * mac's product is decoded by the caller, once per step: decoding divides
 * twice, and a step visits its operands up to twice.
 */
static int each_operand(struct cache *c, enum ps_step_kind kind, ps_node v,
			const struct ps_product *p,
			int (*fn)(struct cache *, ps_node, bool sum),
			uint64_t *need)
{
	const struct ps_dag *dag = c->dag;
	int rc;

	if (kind == PS_STEP_COMPUTE) {
		uint64_t count = ps_dag_parent_count(dag, v);

		for (uint64_t k = 0; k < count; k++)
			if ((rc = fn(c, ps_dag_parent(dag, v, k), false)))
				return rc;
		*need = count + 1;
	} else {
		for (unsigned k = 0; k < p->parent_count; k++)
			if ((rc = fn(c, p->parent[k], false)))
				return rc;
		if ((rc = fn(c, p->sum, true)))
			return rc;
		*need = p->parent_count + 1 + p->transient;
	}
	return 0;
}

/* ---- pass 1: uses, the minimum M, and (belady) the occurrences --------- */

static int count_operand(struct cache *c, ps_node u, bool sum)
{
	if (sum && !(c->st[u] & ST_VALUE)) {
		c->st[u] |= ST_VALUE; /* its first mac starts it */
		return 0;
	}
	if (c->uses[u] == UINT32_MAX)
		return ps_error_set(c->err, PS_ENOMEM, "a node is used more than 2^32 times");
	c->uses[u]++;
	if (c->occ_node) {
		c->occ_node[c->occurrences] = u;
		c->occ_next[c->occurrences] = c->steps;
		if (c->first_use[u] == NEVER)
			c->first_use[u] = c->steps;
	}
	c->occurrences++;
	return 0;
}

static int count_step(void *ctx, enum ps_step_kind kind, ps_node v)
{
	struct cache *c = ctx;
	uint64_t need = 0, before = c->occurrences;
	struct ps_product p = { .id = v }; /* read for a mac only */
	int rc;

	if (kind != PS_STEP_COMPUTE)
		ps_dag_product(c->dag, v, &p);
	rc = each_operand(c, kind, v, &p, count_operand, &need);

	c->min_m = ps_max_u64(c->min_m, need);
	c->max_operands = ps_max_u64(c->max_operands, c->occurrences - before + 1);
	c->steps++;
	return rc;
}

/* ---- the policies' bookkeeping ---------------------------------------- */

static uint64_t heap_key(const struct cache *c, uint32_t v)
{
	/* furthest next use first; on ties a clean value (no save needed);
	 * an operand of the step being played sinks to the bottom */
	if (c->st[v] & ST_PINNED)
		return 0;
	return c->next_use[v] * 2 + 2 + ((c->st[v] & ST_BLUE) ? 1 : 0);
}

static void heap_swap(struct cache *c, uint64_t a, uint64_t b)
{
	uint32_t t = c->heap[a];

	c->heap[a] = c->heap[b];
	c->heap[b] = t;
	c->pos[c->heap[a]] = (uint32_t)a;
	c->pos[c->heap[b]] = (uint32_t)b;
}

static void heap_fix(struct cache *c, uint64_t i)
{
	while (i > 0 && heap_key(c, c->heap[(i - 1) / 2]) < heap_key(c, c->heap[i])) {
		heap_swap(c, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	for (;;) {
		uint64_t l = 2 * i + 1, r = l + 1, best = i;

		if (l < c->heap_len && heap_key(c, c->heap[l]) > heap_key(c, c->heap[best]))
			best = l;
		if (r < c->heap_len && heap_key(c, c->heap[r]) > heap_key(c, c->heap[best]))
			best = r;
		if (best == i)
			return;
		heap_swap(c, i, best);
		i = best;
	}
}

/* Takes v out of the LRU list. */
static void unlink_lru(struct cache *c, uint32_t v)
{
	if (c->prev[v] != NIL)
		c->next[c->prev[v]] = c->next[v];
	else
		c->head = c->next[v];
	if (c->next[v] != NIL)
		c->prev[c->next[v]] = c->prev[v];
	else
		c->tail = c->prev[v];
}

/* A node turned red, or was just used. */
static void touched(struct cache *c, uint32_t v, bool fresh)
{
	if (c->policy == PS_POLICY_LRU) {
		if (!fresh)
			unlink_lru(c, v);
		c->prev[v] = c->tail;
		c->next[v] = NIL;
		if (c->tail != NIL)
			c->next[c->tail] = v;
		else
			c->head = v;
		c->tail = v;
	} else if (fresh) {
		c->heap[c->heap_len] = v;
		c->pos[v] = (uint32_t)c->heap_len++;
		heap_fix(c, c->heap_len - 1);
	} else {
		heap_fix(c, c->pos[v]);
	}
}

static void forget(struct cache *c, uint32_t v)
{
	if (c->policy == PS_POLICY_LRU) {
		unlink_lru(c, v);
	} else {
		uint64_t i = c->pos[v];

		heap_swap(c, i, --c->heap_len);
		if (i < c->heap_len)
			heap_fix(c, i);
	}
}

/* ---- moves -------------------------------------------------------------- */

static int emit(struct cache *c, enum ps_opcode code, ps_node v)
{
	struct ps_op op;

	memset(&op, 0, sizeof(op));
	op.code = code;
	op.by_id = true;
	op.node = v;
	return ps_sink_emit(c->sink, &op, c->err);
}

static int drop(struct cache *c, uint32_t v)
{
	int rc;

	/* lazy saves: a dirty value still needed, and every output */
	if (!(c->st[v] & ST_BLUE) && (c->uses[v] || (c->st[v] & ST_OUTPUT))) {
		if ((rc = emit(c, PS_OP_SAVE, v)))
			return rc;
		c->st[v] |= ST_BLUE;
	}
	if ((rc = emit(c, PS_OP_DELETE, v)))
		return rc;
	forget(c, v);
	c->st[v] &= (uint8_t)~ST_RED;
	c->red--;
	return 0;
}

static uint32_t victim(struct cache *c)
{
	uint32_t v;

	if (c->policy == PS_POLICY_LRU) {
		for (v = c->head; v != NIL && (c->st[v] & ST_PINNED); v = c->next[v])
			;
		return v;
	}
	/* pinned values have the lowest key: a pinned top means all are */
	if (!c->heap_len || (c->st[c->heap[0]] & ST_PINNED))
		return NIL;
	return c->heap[0];
}

/* Pins or unpins a red value (its heap key changes with it). */
static void set_pinned(struct cache *c, ps_node u, bool pinned)
{
	if (pinned)
		c->st[u] |= ST_PINNED;
	else
		c->st[u] &= (uint8_t)~ST_PINNED;
	if (c->policy == PS_POLICY_BELADY && (c->st[u] & ST_RED))
		heap_fix(c, c->pos[u]);
}

static int make_room(struct cache *c, uint64_t slots)
{
	while (c->red + slots > c->M) {
		uint32_t v = victim(c);
		int rc;

		if (v == NIL)
			return ps_error_set(c->err, PS_EINPUT,
					    "M = %llu cannot hold the operands of a step",
					    (unsigned long long)c->M);
		if ((rc = drop(c, v)))
			return rc;
	}
	return 0;
}

static int pin_operand(struct cache *c, ps_node u, bool sum)
{
	int rc;

	if (sum && !(c->st[u] & ST_VALUE))
		return 0; /* the first mac starts the sum: no operand yet */
	if (!(c->st[u] & ST_RED)) {
		if (!(c->st[u] & ST_BLUE)) {
			char name[128];

			ps_dag_describe(c->dag, u, name, sizeof(name));
			return ps_error_set(c->err, PS_EINPUT,
					    "the order uses %s before it is computed", name);
		}
		if ((rc = make_room(c, 1)) || (rc = emit(c, PS_OP_LOAD, u)))
			return rc;
		c->st[u] |= ST_RED;
		c->red++;
		if (c->policy == PS_POLICY_BELADY)
			c->next_use[u] = c->occ_next[c->cursor];
		touched(c, (uint32_t)u, true);
	} else {
		if (c->policy == PS_POLICY_BELADY)
			c->next_use[u] = c->occ_next[c->cursor];
		touched(c, (uint32_t)u, false);
	}
	c->cursor++;
	c->uses[u]--;
	if (!(c->st[u] & ST_PINNED))
		set_pinned(c, u, true);
	c->pins[c->pin_count++] = u;
	return 0;
}

/* A value with no use left goes at once (saved first when an output). */
static int retire(struct cache *c, ps_node v)
{
	if ((c->st[v] & ST_RED) && !(c->st[v] & ST_PINNED) && c->uses[v] == 0)
		return drop(c, (uint32_t)v);
	return 0;
}

/* Operands already red are pinned before any is loaded, so that making
 * room for one never evicts another. */
static int prepin(struct cache *c, ps_node u, bool sum)
{
	(void)sum;
	if ((c->st[u] & ST_RED) && !(c->st[u] & ST_PINNED))
		set_pinned(c, u, true);
	return 0;
}

static int play_step(void *ctx, enum ps_step_kind kind, ps_node v)
{
	struct cache *c = ctx;
	uint64_t need = 0, made;
	ps_node made_node = v;
	bool fresh = false;
	struct ps_product p = { .id = v }; /* read for a mac only */
	int rc;

	if (kind != PS_STEP_COMPUTE)
		ps_dag_product(c->dag, v, &p);
	c->pin_count = 0;
	each_operand(c, kind, v, &p, prepin, &need);
	if ((rc = each_operand(c, kind, v, &p, pin_operand, &need)))
		return rc;
	if (kind == PS_STEP_COMPUTE) {
		made = 1;
	} else {
		made_node = p.sum;
		fresh = !(c->st[p.sum] & ST_VALUE);
		made = p.transient + (fresh ? 1 : 0);
	}
	if ((rc = make_room(c, made)) ||
	    (rc = emit(c, kind == PS_STEP_COMPUTE ? PS_OP_COMPUTE : PS_OP_MAC, v)))
		return rc;
	if (kind == PS_STEP_COMPUTE || fresh) {
		c->st[made_node] |= ST_RED | ST_VALUE;
		c->red++;
		if (c->policy == PS_POLICY_BELADY)
			c->next_use[made_node] = c->first_use[made_node];
	}
	/* a computed value, or an aggregated sum, is newer than slow memory */
	c->st[made_node] &= (uint8_t)~ST_BLUE;
	touched(c, (uint32_t)made_node, kind == PS_STEP_COMPUTE || fresh);
	for (uint64_t k = 0; k < c->pin_count; k++)
		if (c->st[c->pins[k]] & ST_PINNED)
			set_pinned(c, c->pins[k], false);
	for (uint64_t k = 0; k < c->pin_count; k++)
		if ((rc = retire(c, c->pins[k])))
			return rc;
	return retire(c, made_node);
}

/* ---- set-up ------------------------------------------------------------ */

static void cache_free(struct cache *c)
{
	free(c->st);
	free(c->uses);
	free(c->prev);
	free(c->next);
	free(c->next_use);
	free(c->first_use);
	free(c->occ_next);
	free(c->occ_node);
	free(c->heap);
	free(c->pos);
	free(c->pins);
}

uint64_t ps_cache_bytes(const struct ps_dag *dag, enum ps_policy policy)
{
	const uint64_t n = dag->state_count;

	/* a state byte and a use count per node; LRU's list links; Belady's
	 * first and next uses, heap positions, and two words per operand
	 * occurrence (about one per edge and one per node) */
	if (policy == PS_POLICY_LRU)
		return 13 * n;
	return 25 * n + 16 * (dag->edge_count + n);
}

/* Pass 1 (and for belady, with record, the pass that fills the
 * occurrences): uses, the minimum M, the operand occurrences. */
static int cache_count(struct cache *c, const struct ps_dag *dag,
		       ps_order_fn order, const void *order_ctx, bool record)
{
	uint64_t n = dag->state_count ? dag->state_count : 1;
	int rc;

	c->dag = dag;
	if (dag->state_count >= NIL)
		return ps_error_set(c->err, PS_ENOMEM, "the DAG has too many nodes for a cache policy");
	if (!c->st)
		c->st = calloc(n, 1);
	if (!c->uses)
		c->uses = calloc(n, sizeof(uint32_t));
	if (!c->st || !c->uses)
		return ps_error_set(c->err, PS_ENOMEM, "out of memory");
	memset(c->st, 0, n);
	memset(c->uses, 0, n * sizeof(uint32_t));
	if (record) {
		c->first_use = malloc(n * sizeof(uint64_t));
		c->occ_node = malloc((c->occurrences ? c->occurrences : 1) * sizeof(uint64_t));
		c->occ_next = malloc((c->occurrences ? c->occurrences : 1) * sizeof(uint64_t));
		if (!c->first_use || !c->occ_node || !c->occ_next)
			return ps_error_set(c->err, PS_ENOMEM, "out of memory for Belady's next uses");
		for (uint64_t v = 0; v < n; v++)
			c->first_use[v] = NEVER;
	}
	c->steps = c->occurrences = 0;
	rc = order(order_ctx, count_step, c);
	for (uint64_t v = 0; v < dag->state_count; v++)
		c->st[v] &= (uint8_t)~ST_VALUE;
	return rc;
}

int ps_cache_min_memory(const struct ps_dag *dag, ps_order_fn order,
			const void *order_ctx, uint64_t *min_m,
			uint64_t *occurrences, struct ps_error *err)
{
	struct cache c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.err = err;
	rc = cache_count(&c, dag, order, order_ctx, false);
	*min_m = ps_max_u64(c.min_m, 1);
	*occurrences = c.occurrences;
	cache_free(&c);
	return rc;
}

int ps_cache_run(const struct ps_dag *dag, ps_order_fn order,
		 const void *order_ctx, uint64_t M, enum ps_policy policy,
		 struct ps_sink *sink, struct ps_error *err)
{
	struct cache c;
	uint64_t n = dag->state_count ? dag->state_count : 1;
	int rc;

	memset(&c, 0, sizeof(c));
	c.err = err;
	c.M = M;
	c.policy = policy;
	c.sink = sink;
	rc = cache_count(&c, dag, order, order_ctx, false);
	if (!rc && policy == PS_POLICY_BELADY) {
		if (c.occurrences > PS_BELADY_MAX_OCCURRENCES)
			rc = ps_error_set(err, PS_ENOMEM,
					  "belady keeps the next use of every operand: %llu here (%.1f GiB to prepare); it is limited to %llu",
					  (unsigned long long)c.occurrences,
					  (double)c.occurrences * 16 / (1 << 30),
					  (unsigned long long)PS_BELADY_MAX_OCCURRENCES);
		else
			rc = cache_count(&c, dag, order, order_ctx, true);
	}
	if (rc)
		goto done;
	if (M < c.min_m) {
		rc = ps_error_set(err, PS_EINPUT,
				  "M = %llu is too small for this order: it needs M >= %llu",
				  (unsigned long long)M, (unsigned long long)c.min_m);
		goto done;
	}
	if (policy == PS_POLICY_BELADY) {
		/* each occurrence's next use: the step of the node's next one */
		uint64_t *last = malloc(n * sizeof(uint64_t));

		if (!last) {
			rc = ps_error_set(err, PS_ENOMEM, "out of memory");
			goto done;
		}
		for (uint64_t v = 0; v < n; v++)
			last[v] = NEVER;
		for (uint64_t k = c.occurrences; k-- > 0;) {
			uint64_t v = c.occ_node[k], step = c.occ_next[k];

			c.occ_next[k] = last[v];
			last[v] = step;
		}
		free(last);
		free(c.occ_node);
		c.occ_node = NULL;
		c.next_use = malloc(n * sizeof(uint64_t));
		/* the red values, at most M and at most every node: M itself
		 * may be far larger than the DAG */
		c.heap = malloc((ps_min_u64(M, n) + 1) * sizeof(uint32_t));
		c.pos = malloc(n * sizeof(uint32_t));
		if (!c.next_use || !c.heap || !c.pos) {
			rc = ps_error_set(err, PS_ENOMEM, "out of memory");
			goto done;
		}
	} else {
		c.prev = malloc(n * sizeof(uint32_t));
		c.next = malloc(n * sizeof(uint32_t));
		if (!c.prev || !c.next) {
			rc = ps_error_set(err, PS_ENOMEM, "out of memory");
			goto done;
		}
		c.head = c.tail = NIL;
	}
	c.pin_cap = c.max_operands + 1;
	c.pins = malloc(c.pin_cap * sizeof(ps_node));
	if (!c.pins) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory");
		goto done;
	}
	for (ps_node v = 0, end; v < dag->state_count; v = end)
		if (ps_dag_role_run(dag, v, &end) == PS_ROLE_INPUT)
			for (ps_node u = v; u < end && u < dag->state_count; u++)
				c.st[u] |= ST_BLUE;
	for (uint64_t k = 0; k < dag->output_count; k++)
		c.st[ps_dag_output(dag, k)] |= ST_OUTPUT;
	c.steps = 0;
	rc = order(order_ctx, play_step, &c);
done:
	cache_free(&c);
	return rc;
}
