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

/* The search against the exhaustive one on dag under M; its sequence
 * replayed in the engine. Returns the start's heuristic; *optimum, when
 * not NULL, gets the exhaustive optimum. */
static uint64_t agree(const struct ps_dag *dag, uint64_t M, unsigned trial, uint64_t *optimum)
{
	struct ps_optimal_limits lim = { 0, 0, PS_OPTIMAL_NONE };
	struct ps_optimal_result res;
	struct ps_error err;
	uint64_t want = exhaustive(dag, M);

	if (optimum)
		*optimum = want;
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
	tcase_add_test(tc, test_smallest_attention);
	tcase_add_test(tc, test_given_upper_bound);
	tcase_add_test(tc, test_limits_bracket);
	tcase_add_test(tc, test_too_large);
	tcase_add_test(tc, test_command);
	tcase_add_test(tc, test_command_refuses);
	suite_add_tcase(s, tc);
	return s;
}
