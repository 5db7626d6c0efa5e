/*
 * The exact optimum (src/optimal.c) against an exhaustive search that
 * shares none of its code: a 0-1 breadth-first search over every state
 * the engine itself reaches, every move tried in the engine, with no
 * heuristic and no pruning. They must agree on hundreds of random small
 * DAGs, with products that take a slot during a mac and without; and the
 * search's own sequence must replay in the engine with its I/O.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

#include "../src/cli/cli.h"
#include "../src/optimal_probe.h"
#include "pebblesim/explicit.h"
#include "pebblesim/ops.h"
#include "pebblesim/optimal.h"

/* An explicit DAG whose products take a slot during the mac, as the
 * attention DAG's do: the same DAG seam, one answer changed. */
struct slot_dag {
	struct ps_dag dag;
	const struct ps_explicit *x;
	struct ps_dag_ops ops;
};

static const struct ps_dag *inner(const struct ps_dag *dag)
{
	return &((const struct slot_dag *)dag)->x->dag;
}

static enum ps_role slot_role(const struct ps_dag *dag, ps_node v)
{
	return ps_dag_role(inner(dag), v);
}

static uint64_t slot_parent_count(const struct ps_dag *dag, ps_node v)
{
	return ps_dag_parent_count(inner(dag), v);
}

static ps_node slot_parent(const struct ps_dag *dag, ps_node v, uint64_t k)
{
	return ps_dag_parent(inner(dag), v, k);
}

static void slot_product(const struct ps_dag *dag, ps_node p, struct ps_product *out)
{
	ps_dag_product(inner(dag), p, out);
	out->transient = 1;
}

static void slot_sum(const struct ps_dag *dag, ps_node v, struct ps_sum *out)
{
	ps_dag_sum(inner(dag), v, out);
}

static ps_node slot_output(const struct ps_dag *dag, uint64_t k)
{
	return ps_dag_output(inner(dag), k);
}

static void slot_describe(const struct ps_dag *dag, ps_node v, char *buf, size_t len)
{
	ps_dag_describe(inner(dag), v, buf, len);
}

static void slot_dag_init(struct slot_dag *s, const struct ps_explicit *x)
{
	s->x = x;
	s->ops = (struct ps_dag_ops){
		.name = "explicit-with-slots", .role = slot_role,
		.parent_count = slot_parent_count, .parent = slot_parent,
		.product = slot_product, .sum = slot_sum, .output = slot_output,
		.describe = slot_describe,
	};
	s->dag = x->dag;
	s->dag.ops = &s->ops;
}

/* ---- the exhaustive search ------------------------------------------------ */

/* A state as the engine holds it: red and blue of each node, then each
 * sum's in-edges; the DAGs here are small enough for 64 bits. */
static uint64_t state_key(const struct ps_engine *e)
{
	const struct ps_dag *dag = e->dag;
	uint64_t key = 0;
	unsigned at = 0;

	for (ps_node v = 0; v < dag->state_count; v++) {
		uint8_t f = ps_engine_flags(e, v);

		key |= (uint64_t)((f & PS_ST_RED) != 0) << at++;
		key |= (uint64_t)((f & PS_ST_BLUE) != 0) << at++;
		if (ps_dag_role(dag, v) == PS_ROLE_SUM) {
			struct ps_sum s;

			ps_dag_sum(dag, v, &s);
			for (uint64_t k = 0; k < s.in_degree; k++)
				key |= (uint64_t)ps_engine_edge_done(e, v, k) << at++;
		}
	}
	ck_assert_uint_le(at, 64);
	return key;
}

struct seen {
	uint64_t *key;
	uint32_t *dist;
	size_t cap;
};

/* The slot of key: where it is, or the empty one it would take. */
static size_t seen_slot(const struct seen *s, uint64_t key)
{
	size_t k = (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 20) & (s->cap - 1);

	while (s->dist[k] != UINT32_MAX && s->key[k] != key)
		k = (k + 1) & (s->cap - 1);
	return k;
}

struct queued {
	struct ps_engine e;
	uint32_t dist;
};

/*
 * The least I/O over every sequence, by 0-1 BFS over the engine's states
 * (free moves to the front of the deque, loads and saves to the back),
 * or UINT64_MAX when no state passes the end condition.
 */
static uint64_t exhaustive(const struct ps_dag *dag, uint64_t M)
{
	size_t cap = 1 << 16, head, tail, ring = 1 << 15;
	struct seen seen = { calloc(cap, 8), malloc(cap * 4), cap };
	struct queued *deque = calloc(ring, sizeof(*deque));
	struct ps_engine scratch;
	struct ps_error err;
	uint64_t best = UINT64_MAX;
	uint64_t products = dag->node_count - dag->state_count;

	ck_assert_ptr_nonnull(deque);
	memset(seen.dist, 0xff, cap * 4);
	ck_assert_int_eq(ps_engine_init(&scratch, dag, M, &err), 0);
	head = 0;
	tail = 1;
	ck_assert_int_eq(ps_engine_init(&deque[0].e, dag, M, &err), 0);
	deque[0].dist = 0;
	seen.key[seen_slot(&seen, state_key(&deque[0].e))] = state_key(&deque[0].e);
	seen.dist[seen_slot(&seen, state_key(&deque[0].e))] = 0;
	while (head != tail) {
		struct queued cur = deque[head];

		head = (head + 1) & (ring - 1);
		if (cur.dist != seen.dist[seen_slot(&seen, state_key(&cur.e))] || cur.dist >= best) {
			ps_engine_free(&cur.e);
			continue;
		}
		ck_assert_int_eq(ps_engine_copy(&scratch, &cur.e), 0);
		if (ps_engine_finish(&scratch) == 0) {
			best = cur.dist;
			ps_engine_free(&cur.e);
			continue;
		}
		for (uint64_t k = 0; k < 4 * dag->state_count + products; k++) {
			static const enum ps_move moves[4] = {
				PS_MOVE_LOAD, PS_MOVE_SAVE, PS_MOVE_DELETE, PS_MOVE_COMPUTE,
			};
			bool mac = k >= 4 * dag->state_count;
			enum ps_move move = mac ? PS_MOVE_MAC : moves[k % 4];
			ps_node v = mac ? dag->state_count + (k - 4 * dag->state_count) : k / 4;
			uint32_t cost = move == PS_MOVE_LOAD || move == PS_MOVE_SAVE;
			uint64_t key;
			size_t slot;

			/* the moves MODEL.md forbids on the node's flags alone are
			 * not copied in to be refused (it only saves time) */
			if (!mac) {
				uint8_t f = ps_engine_flags(&cur.e, v);
				bool red = f & PS_ST_RED, blue = f & PS_ST_BLUE;

				if ((move == PS_MOVE_LOAD && (red || !blue)) ||
				    ((move == PS_MOVE_SAVE || move == PS_MOVE_DELETE) && !red) ||
				    (move == PS_MOVE_COMPUTE && red))
					continue;
			}
			ck_assert_int_eq(ps_engine_copy(&scratch, &cur.e), 0);
			if (ps_engine_apply(&scratch, move, v))
				continue;
			key = state_key(&scratch);
			slot = seen_slot(&seen, key);
			if (seen.dist[slot] <= cur.dist + cost)
				continue;
			seen.key[slot] = key;
			seen.dist[slot] = cur.dist + cost;
			{
				struct queued next;

				ck_assert_int_eq(ps_engine_init(&next.e, dag, M, &err), 0);
				ck_assert_int_eq(ps_engine_copy(&next.e, &scratch), 0);
				next.dist = cur.dist + cost;
				if (cost) {
					deque[tail] = next;
					tail = (tail + 1) & (ring - 1);
				} else {
					head = (head - 1) & (ring - 1);
					deque[head] = next;
				}
				ck_assert_msg(head != tail, "the deque is full");
			}
		}
		ps_engine_free(&cur.e);
	}
	ps_engine_free(&scratch);
	free(seen.key);
	free(seen.dist);
	free(deque);
	return best;
}

/* ---- random DAGs ----------------------------------------------------------- */

static uint64_t rng_state;

static uint32_t rng(uint32_t bound)
{
	rng_state = rng_state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (uint32_t)(rng_state >> 33) % bound;
}

/* An explicit DAG of n vertices and the given edges (i -> j, pairs[2k]
 * -> pairs[2k + 1]): sources are inputs; a vertex with in-edges is a sum
 * one time in two when sums is set, plain otherwise. */
static void make_dag(struct ps_explicit *x, igraph_integer_t n, const igraph_integer_t *pairs,
		     igraph_integer_t edges, bool sums)
{
	igraph_vector_int_t v;
	igraph_t graph;
	struct ps_error err;

	ps_igraph_setup();
	igraph_vector_int_init(&v, 2 * edges);
	for (igraph_integer_t k = 0; k < 2 * edges; k++)
		VECTOR(v)[k] = pairs[k];
	ck_assert_int_eq(igraph_create(&graph, &v, n, IGRAPH_DIRECTED), 0);
	igraph_vector_int_destroy(&v);
	for (igraph_integer_t k = 0; k < n; k++) {
		bool has_in = false;

		for (igraph_integer_t e = 0; e < edges; e++)
			has_in |= pairs[2 * e + 1] == k;
		SETVAS(&graph, "role", k, !has_in ? "input" : sums && rng(2) ? "sum" : "plain");
	}
	ck_assert_msg(ps_explicit_from_igraph(x, &graph, &err) == 0, "%s", err.msg);
}

/*
 * A random DAG of 3 to 5 vertices: each edge i -> j (i < j) with
 * probability 2/5, at most 7; a vertex with in-edges is a sum one time in
 * two, plain otherwise; sources are inputs. Small enough for state_key.
 */
static void random_dag(struct ps_explicit *x)
{
	igraph_integer_t n = 3 + (igraph_integer_t)rng(3);
	igraph_integer_t pairs[64];
	igraph_integer_t edges = 0;

	for (igraph_integer_t j = 1; j < n; j++)
		for (igraph_integer_t i = 0; i < j; i++)
			if (rng(5) < 2 && edges < 7) {
				pairs[2 * edges] = i;
				pairs[2 * edges + 1] = j;
				edges++;
			}
	make_dag(x, n, pairs, edges, true);
}

/*
 * A random DAG of 8 plain vertices: the first three are inputs, each
 * other vertex j reads j - 1 and one vertex drawn among those before it,
 * so that paths are long and, at M = 3, every compute with two parents
 * fills fast memory: the terms of the heuristic that count reloads
 * (docs/OPTIMAL.md) apply often. Small enough for state_key.
 */
static void random_plain_dag(struct ps_explicit *x)
{
	igraph_integer_t n = 8, pairs[64], edges = 0;

	for (igraph_integer_t j = 3; j < n; j++) {
		igraph_integer_t a = (igraph_integer_t)rng((uint32_t)j - 1);

		pairs[2 * edges] = a;
		pairs[2 * edges + 1] = j;
		pairs[2 * edges + 2] = j - 1;
		pairs[2 * edges + 3] = j;
		edges += 2;
	}
	make_dag(x, n, pairs, edges, false);
}

/* The search on dag under M against want, the least I/O found by an
 * exhaustive search (UINT64_MAX: none); its sequence replayed in the
 * engine. Returns the start's heuristic. */
static uint64_t agree_with(const struct ps_dag *dag, uint64_t M, unsigned trial, uint64_t want)
{
	struct ps_optimal_limits lim = { 0, 0, PS_OPTIMAL_NONE };
	struct ps_optimal_result res;
	struct ps_error err;

	ps_error_clear(&err);
	ck_assert_msg(ps_optimal_search(dag, M, &lim, &res, &err) == 0, "%s", err.msg);
	if (want == UINT64_MAX) {
		ck_assert_msg(res.status == PS_OPTIMAL_INFEASIBLE,
			      "trial %u, M = %llu: exhaustive search finds no sequence, the search %llu",
			      trial, (unsigned long long)M, (unsigned long long)res.upper);
	} else {
		struct ps_counts c;

		ck_assert_msg(res.status == PS_OPTIMAL_FOUND && res.upper == want,
			      "trial %u, M = %llu: exhaustive %llu, the search %llu (status %d)",
			      trial, (unsigned long long)M, (unsigned long long)want,
			      (unsigned long long)res.upper, (int)res.status);
		ck_assert_uint_le(res.start_bound, want);
		ck_assert_msg(ps_optimal_check(dag, M, res.moves, res.move_count, &c, &err) == 0,
			      "trial %u: %s", trial, err.msg);
		ck_assert_uint_eq(c.loads + c.saves, want);
		ck_assert_uint_le(c.peak_red, M);
	}
	ps_optimal_result_free(&res);
	return res.start_bound;
}

/* agree_with() the exhaustive search of this file; *optimum, when not
 * NULL, gets its optimum. */
static uint64_t agree(const struct ps_dag *dag, uint64_t M, unsigned trial, uint64_t *optimum)
{
	uint64_t want = exhaustive(dag, M);

	if (optimum)
		*optimum = want;
	return agree_with(dag, M, trial, want);
}

START_TEST(test_random_dags_agree)
{
	/* the small grid (sanitizers) draws the first 50: the 200 took about
	 * 30 s of processor under ASan */
	unsigned feasible = 0, trials = test_grid_small() ? 50 : 200;

	rng_state = 25;
	for (unsigned t = 0; t < trials; t++) {
		struct ps_explicit x;
		struct slot_dag slots;
		uint64_t M = 1 + rng(4);
		struct ps_optimal_limits lim = { 0, 0, PS_OPTIMAL_NONE };
		struct ps_optimal_result res;
		struct ps_error err;

		random_dag(&x);
		agree(&x.dag, M, t, NULL);
		slot_dag_init(&slots, &x);
		agree(&slots.dag, M + 1, t, NULL);
		ck_assert_int_eq(ps_optimal_search(&x.dag, M, &lim, &res, &err), 0);
		feasible += res.status == PS_OPTIMAL_FOUND;
		ps_optimal_result_free(&res);
		ps_explicit_free(&x);
	}
	/* the draw covers both verdicts */
	ck_assert_uint_gt(feasible, trials / 4);
	ck_assert_uint_lt(feasible, trials);
}
END_TEST

/* Plain DAGs of 8 vertices at M = 3 (and 2 and 4): where the
 * heuristic's reload terms count most, the start's heuristic stays at
 * or below the exhaustive optimum and the search finds that optimum. */
START_TEST(test_random_plain_dags_agree)
{
	unsigned trials = test_grid_small() ? 12 : 24, above = 0;

	rng_state = 39;
	for (unsigned t = 0; t < trials; t++) {
		struct ps_explicit x;
		uint64_t M = t % 4 == 3 ? 2 + 2 * rng(2) : 3;

		random_plain_dag(&x);
		/* the reload terms raise the start above the trivial bound */
		above += agree(&x.dag, M, 1000 + t, NULL) > x.inputs + x.dag.output_count;
		ps_explicit_free(&x);
	}
	ck_assert_msg(above >= trials / 10, "the reload terms count in %u of %u DAGs", above, trials);
}
END_TEST

/*
 * Term 5 of the heuristic on values that are not inputs (docs/OPTIMAL.md,
 * "The heuristic"): on three DAGs whose optimum the exhaustive search
 * gives, the start's heuristic is exactly what the term proves, and two
 * of them are built so that a wrong version of it would pass the optimum.
 */
START_TEST(test_value_paths)
{
	static const struct {
		igraph_integer_t n, edges;
		igraph_integer_t pairs[24];
		uint64_t M, optimum, start;
	} dags[] = {
		/* x = f(i) read by a = f(x, p) and, after c = f(a, q), which
		 * fills M = 3, by b = f(c, x): x or i is loaded again. Inputs
		 * i, p, q and the output b give 4; the term, 1 more */
		{ 7, 7, { 0, 3, 3, 4, 1, 4, 4, 5, 2, 5, 5, 6, 3, 6 }, 3, 5, 5 },
		/* i -> y -> x; x read by a = f(x) and by b = f(c, x) after
		 * c = f(a, y), which fills M = 3 but reads y, a node on x's
		 * only path: x is computed again from the red y, no load. A
		 * separator that reads the path would count 1 and pass the
		 * optimum, 2 */
		{ 6, 7, { 0, 1, 1, 2, 2, 3, 3, 4, 1, 4, 4, 5, 2, 5 }, 3, 2, 2 },
		/* i -> y -> x and y -> z; a = f(x, z), then c = f(a, p, q)
		 * fills M = 4; b = f(x, c) and d = f(b, z) read x and z after
		 * it. One load of i after c gives both back: x's path is x, y,
		 * i, and z's would share y and i. Counted twice, the term
		 * would pass the optimum, 5 */
		{ 10, 12, { 0, 3, 3, 4, 3, 5, 4, 6, 5, 6, 6, 7, 1, 7, 2, 7, 4, 8, 7, 8, 8, 9, 5, 9 },
		  4, 5, 5 },
		/* the second path: x = f(i, j) read by a = f(x, p) and, after
		 * c = f(a, q), by b = f(c, x): x is loaded again (after a save)
		 * or both i and j are: 2 beyond the 5 of inputs and output */
		{ 8, 8, { 0, 4, 1, 4, 4, 5, 2, 5, 5, 6, 3, 6, 6, 7, 4, 7 }, 3, 7, 7 },
		/* y = f(i), x = f(y, j), a = f(x), then c = f(a, y, q) fills
		 * M = 4 reading y, a node of x's second path i, y, x: x is
		 * computed again from the red y and a load of j. Counting the
		 * second path there would pass the optimum, 5 */
		{ 8, 9, { 0, 3, 3, 4, 1, 4, 4, 5, 5, 6, 3, 6, 2, 6, 6, 7, 4, 7 }, 4, 5, 5 },
		/* z = f(j), x = f(i, j), a = f(x, z), c = f(a, p, q) fills
		 * M = 4, b = f(x, c), d = f(b, z): z's path z, j is counted
		 * first; x's first path is x, i, and its second would end at
		 * j, whose load after c gives z back too. Counted, it would
		 * pass the optimum, 7 */
		{ 10, 12, { 1, 4, 0, 5, 1, 5, 5, 6, 4, 6, 6, 7, 2, 7, 3, 7, 7, 8, 5, 8, 8, 9, 4, 9 },
		  4, 7, 7 },
	};

	for (unsigned k = 0; k < sizeof(dags) / sizeof(dags[0]); k++) {
		struct ps_explicit x;
		uint64_t optimum;

		make_dag(&x, dags[k].n, dags[k].pairs, dags[k].edges, false);
		ck_assert_uint_eq(agree(&x.dag, dags[k].M, 2000 + k, &optimum), dags[k].start);
		ck_assert_uint_eq(optimum, dags[k].optimum);
		ps_explicit_free(&x);
	}
}
END_TEST

/* ---- the heuristic at every state ------------------------------------------ */

/*
 * The states of a DAG of at most 16 plain nodes, a node a bit: red in the
 * low 16 bits, blue in the high 16; and the least I/O that completes the
 * game from each. The rules are written anew here on bitmasks, sharing
 * nothing with src/optimal.c or the engine: load (v blue, not red, a free
 * slot; cost 1), save (v red, not blue; 1), delete (v red; 0), compute (v
 * no input, not red, its parents red, a free slot; 0); the end: every
 * output blue.
 */
struct every_state {
	uint32_t n, M, inputs, outputs, parents[16];
	uint32_t *key, *dist; /* open addressing, key + 1 (0 empty) */
	size_t cap;
	uint32_t *list;       /* the reachable states, in the order found */
	size_t count;
};

static size_t every_slot(const struct every_state *es, uint32_t key)
{
	size_t k = (size_t)(((uint64_t)key * UINT64_C(0x9e3779b97f4a7c15)) >> 17) & (es->cap - 1);

	while (es->key[k] && es->key[k] != key + 1)
		k = (k + 1) & (es->cap - 1);
	return k;
}

/* The successors of state s (forward) or its predecessors (backward),
 * each with its move's cost, to fn. */
static void every_moves(const struct every_state *es, uint32_t s, bool backward,
			void (*fn)(struct every_state *, uint32_t, uint32_t, void *), void *ctx)
{
	uint32_t red = s & 0xffff, blue = s >> 16, count = (uint32_t)__builtin_popcount(red);

	for (uint32_t v = 0; v < es->n; v++) {
		uint32_t b = UINT32_C(1) << v;
		bool input = es->inputs & b;

		if (!backward) {
			if ((blue & b) && !(red & b) && count < es->M)
				fn((struct every_state *)es, s | b, 1, ctx);
			if ((red & b) && !(blue & b))
				fn((struct every_state *)es, s | b << 16, 1, ctx);
			if (red & b)
				fn((struct every_state *)es, s & ~b, 0, ctx);
			if (!input && !(red & b) && count < es->M && (red & es->parents[v]) == es->parents[v])
				fn((struct every_state *)es, s | b, 0, ctx);
			continue;
		}
		/* the states whose move leads to s */
		if ((red & b) && (blue & b)) {
			fn((struct every_state *)es, s & ~b, 1, ctx);         /* a load */
			fn((struct every_state *)es, s & ~(b << 16), 1, ctx); /* a save */
		}
		if (!(red & b) && count + 1 <= es->M)
			fn((struct every_state *)es, s | b, 0, ctx);          /* a delete */
		if ((red & b) && !input && (red & ~b & es->parents[v]) == es->parents[v])
			fn((struct every_state *)es, s & ~b, 0, ctx);         /* a compute */
	}
}

static void every_reach(struct every_state *es, uint32_t t, uint32_t cost, void *ctx)
{
	size_t k = every_slot(es, t);

	(void)cost;
	(void)ctx;
	if (es->key[k])
		return;
	/* the table is sized for every state (every_state_check checks the
	 * count after the search: Check marks a point at each assertion) */
	es->key[k] = t + 1;
	es->list[es->count++] = t;
}

struct every_deque {
	uint32_t *q;
	size_t head, tail, mask;
	uint32_t at; /* the distance of the state whose moves are read */
	bool full;
};

static void every_back(struct every_state *es, uint32_t t, uint32_t cost, void *ctx)
{
	struct every_deque *dq = ctx;
	size_t k = every_slot(es, t);

	if (!es->key[k] || es->dist[k] <= dq->at + cost)
		return; /* not reachable, or no better */
	es->dist[k] = dq->at + cost;
	if (cost) {
		dq->q[dq->tail] = t;
		dq->tail = (dq->tail + 1) & dq->mask;
	} else {
		dq->head = (dq->head - 1) & dq->mask;
		dq->q[dq->head] = t;
	}
	/* it holds every state twice (a state's distance falls at most once,
	 * from the front's plus one to the front's); checked after the loop,
	 * where Check marks no point for each state */
	dq->full |= dq->head == dq->tail;
}

/*
 * Every state the start reaches, each held against the search's
 * heuristic: never above the least I/O that completes the game from it.
 * Returns the heuristic at the start; *optimum gets the least I/O from
 * the start (UINT64_MAX: the game cannot complete).
 */
static uint64_t every_state_check(const struct ps_explicit *x, uint64_t M, const char *what,
				  uint64_t *optimum)
{
	struct every_state es = { 0 };
	struct every_deque dq;
	struct ps_optimal_probe *probe;
	struct ps_error err;
	uint8_t red[16], blue[16];
	uint64_t start_h = 0;
	uint32_t start;

	ck_assert_uint_le(x->dag.state_count, 16);
	es.n = (uint32_t)x->dag.state_count;
	es.M = (uint32_t)M;
	for (uint32_t v = 0; v < es.n; v++) {
		ck_assert_int_ne(ps_dag_role(&x->dag, v), PS_ROLE_SUM);
		if (ps_dag_role(&x->dag, v) == PS_ROLE_INPUT)
			es.inputs |= UINT32_C(1) << v;
		for (uint64_t k = 0; k < ps_dag_parent_count(&x->dag, v); k++)
			es.parents[v] |= UINT32_C(1) << ps_dag_parent(&x->dag, v, k);
	}
	for (uint64_t k = 0; k < x->dag.output_count; k++)
		es.outputs |= UINT32_C(1) << ps_dag_output(&x->dag, k);
	/* at most M red of n, and the blue of the nodes but the inputs */
	{
		uint64_t bound = 0, choose = 1;

		for (uint32_t k = 0; k <= es.n && k <= es.M; k++) {
			bound += choose;
			choose = choose * (es.n - k) / (k + 1);
		}
		bound <<= es.n - (uint32_t)__builtin_popcount(es.inputs);
		es.cap = 1024;
		while (es.cap < 2 * bound)
			es.cap *= 2;
	}
	es.key = calloc(es.cap, 4);
	es.dist = malloc(es.cap * 4);
	es.list = malloc(es.cap / 2 * 4);
	dq.mask = es.cap - 1;
	dq.q = malloc(es.cap * 4);
	ck_assert(es.key && es.dist && es.list && dq.q);
	memset(es.dist, 0xff, es.cap * 4);
	/* forward: what the start reaches */
	start = es.inputs << 16;
	every_reach(&es, start, 0, NULL);
	for (size_t k = 0; k < es.count; k++)
		every_moves(&es, es.list[k], false, every_reach, NULL);
	/* backward from the ends: the least I/O from each */
	ck_assert_uint_le(2 * es.count, es.cap);
	dq.head = dq.tail = 0;
	dq.full = false;
	for (size_t k = 0; k < es.count; k++)
		if (((es.list[k] >> 16) & es.outputs) == es.outputs) {
			es.dist[every_slot(&es, es.list[k])] = 0;
			dq.q[dq.tail++] = es.list[k];
		}
	while (dq.head != dq.tail) {
		uint32_t s = dq.q[dq.head];

		dq.head = (dq.head + 1) & dq.mask;
		dq.at = es.dist[every_slot(&es, s)];
		every_moves(&es, s, true, every_back, &dq);
	}
	ck_assert_msg(!dq.full, "the deque is full");
	ps_error_clear(&err);
	ck_assert_msg(ps_optimal_probe_new(&x->dag, M, &probe, &err) == 0, "%s", err.msg);
	for (size_t k = 0; k < es.count; k++) {
		uint32_t s = es.list[k], exact = es.dist[every_slot(&es, s)];
		uint64_t h;

		for (uint32_t v = 0; v < es.n; v++) {
			red[v] = (s >> v) & 1;
			blue[v] = (s >> (16 + v)) & 1;
		}
		h = ps_optimal_probe_h(probe, red, blue, NULL);
		if (s == start)
			start_h = h;
		if (exact == UINT32_MAX || h <= exact)
			continue;
		ck_assert_msg(false,
			      "%s, M = %llu: the heuristic is %llu at red %#x blue %#x, "
			      "where the game completes with %u I/O",
			      what, (unsigned long long)M, (unsigned long long)h, s & 0xffff, s >> 16,
			      exact);
	}
	*optimum = es.dist[every_slot(&es, start)] == UINT32_MAX ? UINT64_MAX
							    : es.dist[every_slot(&es, start)];
	ps_optimal_probe_free(probe);
	free(es.key);
	free(es.dist);
	free(es.list);
	free(dq.q);
	return start_h;
}

/*
 * A random DAG of 7 to 11 plain vertices, two to four of them inputs:
 * each other vertex reads one of the three before it and up to two more
 * drawn among all before it, and most vertices that nothing reads feed a
 * later one, so that there are few outputs. *M gets one more than the
 * largest in-degree seven times in ten (every compute of that degree
 * fills fast memory), two more otherwise.
 */
static void random_crowded_dag(struct ps_explicit *x, uint64_t *M)
{
	igraph_integer_t n = 7 + (igraph_integer_t)rng(5), inputs = 2 + (igraph_integer_t)rng(3);
	igraph_integer_t pairs[128], edges = 0;
	uint32_t indeg[16] = { 0 }, outdeg[16] = { 0 }, most = 1;

	for (igraph_integer_t v = inputs; v < n; v++) {
		igraph_integer_t chosen[3], count = 0, want = 1 + (igraph_integer_t)rng(3);

		chosen[count++] = v - 1 - (igraph_integer_t)rng(v < 3 ? (uint32_t)v : 3);
		while (count < want) {
			igraph_integer_t p = (igraph_integer_t)rng((uint32_t)v);
			bool again = false;

			for (igraph_integer_t k = 0; k < count; k++)
				again |= chosen[k] == p;
			if (!again)
				chosen[count++] = p;
			else if (rng(4) == 0)
				break;
		}
		for (igraph_integer_t k = 0; k < count; k++) {
			pairs[2 * edges] = chosen[k];
			pairs[2 * edges + 1] = v;
			edges++;
			outdeg[chosen[k]]++;
			indeg[v]++;
		}
	}
	for (igraph_integer_t u = inputs; u + 1 < n; u++) {
		if (outdeg[u] || rng(5) == 0)
			continue;
		for (unsigned tries = 0; tries < 8; tries++) {
			igraph_integer_t w = u + 1 + (igraph_integer_t)rng((uint32_t)(n - u - 1));
			bool again = false;

			for (igraph_integer_t k = 0; k < edges; k++)
				again |= pairs[2 * k] == u && pairs[2 * k + 1] == w;
			if (!again && indeg[w] < 3) {
				pairs[2 * edges] = u;
				pairs[2 * edges + 1] = w;
				edges++;
				indeg[w]++;
				outdeg[u]++;
				break;
			}
		}
	}
	for (igraph_integer_t v = 0; v < n; v++)
		most = indeg[v] > most ? indeg[v] : most;
	*M = most + 1 + (rng(10) >= 7);
	make_dag(x, n, pairs, edges, false);
}

/*
 * The heuristic (docs/OPTIMAL.md) never passes the least I/O that
 * completes the game, at any state the start reaches, not only at the
 * start: on random crowded DAGs, and on six DAGs built so that a wrong
 * version of term 5 or 7 passes it somewhere, or a wrong R8 misses the
 * optimum. Each of these versions was run and fails here: a path
 * through a node in slow memory whose load term 4 counts; a chain
 * started by a reader of a node below one that holds a pebble; a chain
 * started at the present on a path whose input term 2 counts, or (for
 * an input alone) on such an input; a chain started at the present on a
 * path whose input term 4 claims; a second path where a node of either
 * path is in slow memory; a separator that reads the path; a member of
 * a join that is a parent of another member, counted; a member that
 * term 5's path holds, counted; R8 skipping the spill of a value when
 * any one of its live readers is in slow memory. On each DAG the
 * search, by compute steps, finds the least I/O of this game, and its
 * sequence replays in the engine.
 */
START_TEST(test_heuristic_admissible_everywhere)
{
	static const struct {
		igraph_integer_t n, edges;
		igraph_integer_t pairs[48];
		uint64_t M;
	} dags[] = {
		/* a = f(i, k), b = f(j, l), out = f(a, b) at M = 3: every
		 * compute fills fast memory */
		{ 7, 6, { 0, 4, 2, 4, 1, 5, 3, 5, 4, 6, 5, 6 }, 3 },
		{ 11, 17, { 1, 2, 0, 2, 2, 3, 1, 3, 1, 4, 2, 5, 3, 5, 4, 5, 4, 6, 6, 7, 5, 8,
			    6, 9, 7, 9, 8, 9, 9, 10, 3, 10, 0, 10 }, 4 },
		{ 11, 20, { 2, 4, 0, 4, 1, 4, 3, 5, 1, 5, 0, 5, 5, 6, 2, 6, 5, 7, 3, 7, 2, 7,
			    5, 8, 7, 8, 6, 8, 8, 9, 3, 9, 7, 9, 9, 10, 6, 10, 4, 10 }, 4 },
		/* for term 7: joins of two or three members at M = 4 */
		{ 12, 19, { 3, 4, 0, 4, 1, 4, 2, 5, 0, 5, 4, 6, 0, 6, 5, 7, 1, 7, 2, 7, 6, 8,
			    7, 9, 3, 9, 0, 9, 8, 10, 2, 10, 9, 11, 7, 11, 4, 11 }, 4 },
		{ 11, 17, { 1, 4, 3, 5, 1, 5, 2, 5, 4, 6, 0, 6, 4, 7, 0, 7, 6, 7, 7, 8, 6, 8,
			    7, 9, 5, 9, 8, 9, 7, 10, 5, 10, 9, 10 }, 4 },
		/* for R8: optimum 16, where a search that spills no value one
		 * of whose live readers is in slow memory finds 17 */
		{ 13, 24, { 0, 4, 2, 4, 3, 4, 1, 5, 3, 5, 4, 5, 1, 6, 2, 6, 5, 6, 4, 7, 6, 7,
			    0, 8, 1, 8, 4, 8, 6, 9, 8, 9, 0, 10, 5, 10, 8, 10, 0, 11, 4, 11,
			    0, 12, 1, 12, 10, 12 }, 4 },
	};
	unsigned trials = test_grid_small() ? 8 : 40, above = 0;

	for (unsigned k = 0; k < sizeof(dags) / sizeof(dags[0]); k++) {
		struct ps_explicit x;
		char what[32];
		uint64_t optimum;

		make_dag(&x, dags[k].n, dags[k].pairs, dags[k].edges, false);
		snprintf(what, sizeof(what), "built DAG %u", k);
		every_state_check(&x, dags[k].M, what, &optimum);
		agree_with(&x.dag, dags[k].M, 2000 + k, optimum);
		ps_explicit_free(&x);
	}
	rng_state = 53;
	for (unsigned t = 0; t < trials; t++) {
		struct ps_explicit x;
		char what[32];
		uint64_t M, optimum, start;

		random_crowded_dag(&x, &M);
		snprintf(what, sizeof(what), "random DAG %u", t);
		start = every_state_check(&x, M, what, &optimum);
		agree_with(&x.dag, M, 3000 + t, optimum);
		above += start > x.inputs + x.dag.output_count;
		ps_explicit_free(&x);
	}
	/* the reload terms count in some of them */
	ck_assert_msg(above >= trials / 10, "the reload terms count in %u of %u DAGs", above, trials);
}
END_TEST

/* ---- the attention DAG ------------------------------------------------------- */

static struct ps_optimal_result search_attention(uint64_t n, uint64_t d, uint64_t g,
						 uint64_t M, uint64_t upper)
{
	struct ps_attention att;
	struct ps_optimal_limits lim = { 0, 0, upper };
	struct ps_optimal_result res;
	struct ps_error err;
	struct ps_counts c;

	test_attention(&att, n, d, g, 1);
	ck_assert_msg(ps_optimal_search(&att.dag, M, &lim, &res, &err) == 0, "%s", err.msg);
	if (res.move_count) {
		ck_assert_msg(ps_optimal_check(&att.dag, M, res.moves, res.move_count, &c, &err) == 0,
			      "%s", err.msg);
		ck_assert_uint_eq(c.loads + c.saves, res.upper);
	}
	ps_attention_free(&att);
	return res;
}

/* The smallest instance of docs/OPTIMAL.md's table, and the least M. */
START_TEST(test_smallest_attention)
{
	struct ps_optimal_result res = search_attention(1, 1, 1, 4, PS_OPTIMAL_NONE);

	ck_assert_int_eq(res.status, PS_OPTIMAL_FOUND);
	ck_assert_uint_eq(res.upper, 9);
	ck_assert_uint_eq(res.start_bound, 4);
	ck_assert_uint_gt(res.move_count, 0);
	ps_optimal_result_free(&res);
	res = search_attention(1, 1, 1, 3, PS_OPTIMAL_NONE);
	ck_assert_int_eq(res.status, PS_OPTIMAL_INFEASIBLE);
	ps_optimal_result_free(&res);
}
END_TEST

/* An upper bound equal to the start's heuristic is optimal with no
 * search (resident's 16 on n = 2, d = 2, g = 2, M = 23); one equal to the
 * optimum is proven so, with no sequence of the search's own; one above
 * it is beaten. */
START_TEST(test_given_upper_bound)
{
	struct ps_optimal_result res = search_attention(2, 2, 2, 23, 16);

	ck_assert_int_eq(res.status, PS_OPTIMAL_FOUND);
	ck_assert(res.upper_is_given);
	ck_assert_uint_eq(res.lower, 16);
	ck_assert_uint_eq(res.expanded, 0);
	ps_optimal_result_free(&res);
	res = search_attention(1, 2, 1, 8, 8);
	ck_assert_int_eq(res.status, PS_OPTIMAL_FOUND);
	ck_assert(res.upper_is_given);
	ck_assert_uint_eq(res.move_count, 0);
	ps_optimal_result_free(&res);
	/* an upper bound above the optimum is beaten by the search's own */
	res = search_attention(1, 2, 1, 8, 12);
	ck_assert_int_eq(res.status, PS_OPTIMAL_FOUND);
	ck_assert(!res.upper_is_given);
	ck_assert_uint_eq(res.upper, 8);
	ck_assert_uint_gt(res.move_count, 0);
	ps_optimal_result_free(&res);
}
END_TEST

/* A limit stops the search with a bracket whose lower end is proven. */
START_TEST(test_limits_bracket)
{
	struct ps_attention att;
	struct ps_optimal_limits lim = { 0, 256 << 10, PS_OPTIMAL_NONE };
	struct ps_optimal_result res;
	struct ps_error err;

	test_attention(&att, 1, 1, 1, 1);
	ck_assert_int_eq(ps_optimal_search(&att.dag, 4, &lim, &res, &err), 0);
	ck_assert_int_eq(res.status, PS_OPTIMAL_BRACKETED);
	ck_assert_str_eq(res.stopped_by, "memory limit");
	ck_assert_uint_le(res.lower, 9);
	ck_assert_uint_ge(res.lower, res.start_bound);
	ck_assert_uint_le(res.bytes, 256 << 10);
	ps_optimal_result_free(&res);
	lim.bytes = 0;
	lim.seconds = 1e-9;
	ck_assert_int_eq(ps_optimal_search(&att.dag, 4, &lim, &res, &err), 0);
	ck_assert_int_eq(res.status, PS_OPTIMAL_BRACKETED);
	ck_assert_str_eq(res.stopped_by, "time limit");
	ps_optimal_result_free(&res);
	ps_attention_free(&att);
}
END_TEST

/* A DAG beyond the search's size is refused with the reason. */
START_TEST(test_too_large)
{
	struct ps_attention att;
	struct ps_optimal_limits lim = { 0, 0, PS_OPTIMAL_NONE };
	struct ps_optimal_result res;
	struct ps_error err;

	test_attention(&att, 64, 4, 2, 1);
	ck_assert_int_eq(ps_optimal_search(&att.dag, 100, &lim, &res, &err), PS_EINPUT);
	ck_assert_ptr_nonnull(strstr(err.msg, "the search takes at most 1024"));
	ps_attention_free(&att);
}
END_TEST

/* ---- the command --------------------------------------------------------------- */

/* Runs the command line with args (NULL-ended); its output in out. */
static int run_cli(char *out, size_t len, const char *first, ...)
{
	char *argv[32];
	int argc = 0, rc;
	FILE *o = tmpfile(), *e = tmpfile();
	va_list ap;

	ck_assert_ptr_nonnull(o);
	ck_assert_ptr_nonnull(e);
	argv[argc++] = (char *)"pebblesim";
	va_start(ap, first);
	for (const char *s = first; s && argc < 31; s = va_arg(ap, const char *))
		argv[argc++] = (char *)s;
	va_end(ap);
	argv[argc] = NULL;
	rc = ps_cli_main(argc, argv, o, e);
	test_slurp(o, out, len);
	fclose(e);
	return rc;
}

/* The optimum with its trace, which validate replays with the same count;
 * a strategy proven optimal; the JSON report. */
START_TEST(test_command)
{
	char out[16384], trace[] = "/tmp/pebblesim-optimal-XXXXXX";
	int fd = mkstemp(trace);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(run_cli(out, sizeof(out), "optimal", "--attention", "exact", "-n", "1",
				 "-d", "2", "-M", "4", "--trace", trace, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "optimal                8 I/O\n"));
	ck_assert_ptr_nonnull(strstr(out, "(validated)"));
	ck_assert_int_eq(run_cli(out, sizeof(out), "validate", trace, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "I/O                    8\n"));
	ck_assert_int_eq(run_cli(out, sizeof(out), "optimal", "--dag", "examples/tree.graphml",
				 "-M", "4", "--json", "--trace", trace, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"status\":\"optimal\",\"optimum\":11"));
	ck_assert_ptr_nonnull(strstr(out, "\"upper_from_strategy\":true"));
	ck_assert_ptr_nonnull(strstr(out, "\"bugs\":[]"));
	ck_assert_int_eq(run_cli(out, sizeof(out), "validate", "--dag", "examples/tree.graphml",
				 trace, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "I/O                    11\n"));
	ck_assert_int_eq(run_cli(out, sizeof(out), "optimal", "-n", "1", "-d", "1", "-g", "1",
				 "-M", "3", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "infeasible"));
	unlink(trace);
}
END_TEST

/* Options of other commands, the sweep's, and a DAG beyond the search. */
START_TEST(test_command_refuses)
{
	char out[4096];

	ck_assert_int_eq(run_cli(out, sizeof(out), "optimal", "-n", "1", "-d", "1", "-g", "1",
				 "-M", "4", "--strategy", "naive", NULL), 2);
	ck_assert_int_eq(run_cli(out, sizeof(out), "optimal", "--sweep", "-M", "4", NULL), 2);
	ck_assert_int_eq(run_cli(out, sizeof(out), "optimal", "-n", "1", "-d", "1", "-g", "1", NULL), 2);
	ck_assert_int_eq(run_cli(out, sizeof(out), "optimal", "-n", "64", "-d", "4", "-g", "2",
				 "-M", "100", NULL), 2);
	ck_assert_int_eq(run_cli(out, sizeof(out), "optimal", "-n", "1", "-d", "1", "-g", "1",
				 "-M", "4", "--time-limit", "-1", NULL), 2);
	ck_assert_int_eq(run_cli(out, sizeof(out), "optimal", "--attention", "exact", "-n", "1",
				 "-d", "1", "-g", "1", "-M", "4", NULL), 2);
}
END_TEST

Suite *optimal_suite(void)
{
	Suite *s = suite_create("optimal");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_random_dags_agree);
	tcase_add_test(tc, test_random_plain_dags_agree);
	tcase_add_test(tc, test_value_paths);
	tcase_add_test(tc, test_heuristic_admissible_everywhere);
	tcase_add_test(tc, test_smallest_attention);
	tcase_add_test(tc, test_given_upper_bound);
	tcase_add_test(tc, test_limits_bracket);
	tcase_add_test(tc, test_too_large);
	tcase_add_test(tc, test_command);
	tcase_add_test(tc, test_command_refuses);
	suite_add_tcase(s, tc);
	return s;
}
