/*
 * best on a DAG from a file (`run --dag FILE --strategy best`): the least
 * I/O of a portfolio of compute orders, each played under belady and lru
 * (cache.h), and a local search over the order of the best of them.
 *
 * The members:
 *   topo         igraph's topological order;
 *   dfs          the depth-first post-order from the outputs, parents in
 *                order (what lru and belady play with --order dfs);
 *   dfs-reverse  the same, parents in reverse order;
 *   dfs-deepest  the same, the deepest parent first (the one with the
 *                longest path from a source: Sethi and Ullman's rule of
 *                evaluating the larger operand first);
 *   sink-cones   the outputs one by one, smallest ancestor cone first,
 *                each with the depth-first post-order of what it still
 *                needs (grouped by sink);
 *   level        by depth from the sources (as soon as possible), then
 *                topological position;
 *   alap         by level from the outputs (as late as possible);
 *   greedy-red   a list scheduler that picks, among the vertices whose
 *                parents are computed, the one that needs the fewest
 *                loads of parents not red net of the parents it frees
 *                (their last use), the most recent red parent on ties,
 *                keeping its own picture of fast memory (LRU, M slots):
 *                the idea of OneStopParallel's greedy schedulers, choosing
 *                by what is red;
 *   greedy-frees the same, the parents it frees first, then loads;
 *   local        local search over the best order found: a vertex moved
 *                to another place between its last parent and its first
 *                child, kept when the I/O does not grow, until the time
 *                budget (--time-limit, default 3 s) or 200 moves per
 *                vertex without a gain.
 * Every member is played without the engine to rank it (ps_order_io);
 * the winner is then played into the run's sink, and the engine judges
 * every move. The search is kept for the DAG and M it was made for, so
 * that a plan, a trace's count and the run itself see the same order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "portfolio.h"
#include "pebblesim/strategy.h"

/* ---- orders ------------------------------------------------------------ */

int ps_vertex_order_steps(const void *order_ctx, ps_step_fn fn, void *ctx)
{
	const struct ps_vertex_order *o = order_ctx;
	const struct ps_explicit *x = o->x;
	int rc;

	for (uint64_t k = 0; k < o->count; k++) {
		uint64_t v = o->vertices[k];

		if (x->role[v] == PS_ROLE_PLAIN) {
			if ((rc = fn(ctx, PS_STEP_COMPUTE, v)))
				return rc;
		} else if (x->role[v] == PS_ROLE_SUM) {
			uint64_t first = x->vertices + x->edge_base[x->slot[v]];

			for (uint64_t e = 0; e < x->in_start[v + 1] - x->in_start[v]; e++)
				if ((rc = fn(ctx, PS_STEP_MAC, first + e)))
					return rc;
		}
	}
	return 0;
}

/* Sorting vertices by a key, then by their place in a reference order. */
struct keyed {
	uint64_t key, place, v;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *p = a, *q = b;

	if (p->key != q->key)
		return (p->key > q->key) - (p->key < q->key);
	return (p->place > q->place) - (p->place < q->place);
}

int ps_dfs_order(const struct ps_explicit *x, const uint64_t *sinks,
		 const uint64_t *rank, uint64_t *out, uint64_t *count)
{
	uint64_t V = x->vertices, E = x->edges;
	uint64_t *stack = malloc((V + 1) * sizeof(uint64_t));
	uint64_t *next = calloc(V + 1, sizeof(uint64_t));
	uint64_t *parents = rank ? malloc((E + 1) * sizeof(uint64_t)) : NULL;
	struct keyed *by_rank = rank ? malloc((E + 1) * sizeof(struct keyed)) : NULL;
	uint8_t *seen = calloc(V + 1, 1);
	uint64_t done = 0;

	if (!stack || !next || !seen || (rank && (!parents || !by_rank))) {
		free(stack);
		free(next);
		free(seen);
		free(parents);
		free(by_rank);
		return PS_ENOMEM;
	}
	if (rank) {
		/* each vertex's parents by decreasing rank, ties in their order */
		for (uint64_t e = 0; e < E; e++)
			by_rank[e] = (struct keyed){ UINT64_MAX - rank[x->in_from[e]], e, x->in_from[e] };
		for (uint64_t v = 0; v < V; v++)
			qsort(by_rank + x->in_start[v], x->in_start[v + 1] - x->in_start[v],
			      sizeof(*by_rank), cmp_keyed);
		for (uint64_t e = 0; e < E; e++)
			parents[e] = by_rank[e].v;
		free(by_rank);
	}
	for (uint64_t k = 0; k < x->dag.output_count; k++) {
		uint64_t root = sinks ? sinks[k] : x->outputs[k], top = 0;

		if (seen[root])
			continue;
		stack[top++] = root;
		seen[root] = 1;
		while (top) {
			uint64_t v = stack[top - 1];

			if (next[v] < x->in_start[v + 1] - x->in_start[v]) {
				uint64_t at = x->in_start[v] + next[v]++;
				uint64_t u = rank ? parents[at] : x->in_from[at];

				if (!seen[u]) {
					seen[u] = 1;
					stack[top++] = u;
				}
				continue;
			}
			top--;
			out[done++] = v;
		}
	}
	*count = done;
	free(stack);
	free(next);
	free(seen);
	free(parents);
	return PS_OK;
}

uint64_t ps_order_io(const struct ps_explicit *x, const uint64_t *order,
		     uint64_t count, uint64_t M, enum ps_policy policy)
{
	struct ps_vertex_order o = { x, order, count };
	struct ps_count_sink counter;
	struct ps_error ignored;

	ps_count_sink_init(&counter);
	if (ps_cache_run(&x->dag, ps_vertex_order_steps, &o, M, policy,
			 &counter.sink, &ignored))
		return UINT64_MAX;
	return counter.loads + counter.saves;
}

/* The longest path from a source to each vertex, in topological order. */
static void depths(const struct ps_explicit *x, const uint64_t *topo,
		   uint64_t *depth)
{
	for (uint64_t k = 0; k < x->vertices; k++) {
		uint64_t v = topo[k], d = 0;

		for (uint64_t e = x->in_start[v]; e < x->in_start[v + 1]; e++)
			d = ps_max_u64(d, depth[x->in_from[e]] + 1);
		depth[v] = d;
	}
}

/* The vertices by key[], ties by their place in topo: out[V]. */
static int order_by_key(const struct ps_explicit *x, const uint64_t *topo,
			const uint64_t *key, uint64_t *out)
{
	struct keyed *k = malloc((x->vertices + 1) * sizeof(*k));

	if (!k)
		return PS_ENOMEM;
	for (uint64_t i = 0; i < x->vertices; i++)
		k[i] = (struct keyed){ key[topo[i]], i, topo[i] };
	qsort(k, x->vertices, sizeof(*k), cmp_keyed);
	for (uint64_t i = 0; i < x->vertices; i++)
		out[i] = k[i].v;
	free(k);
	return PS_OK;
}

/* The outputs by the size of their ancestor cones, smallest first. */
static int sinks_by_cone(const struct ps_explicit *x, uint64_t *sinks)
{
	uint64_t V = x->vertices, S = x->dag.output_count;
	struct keyed *k = malloc((S + 1) * sizeof(*k));
	uint64_t *stamp = calloc(V + 1, sizeof(uint64_t));
	uint64_t *stack = malloc((V + 1) * sizeof(uint64_t));

	if (!k || !stamp || !stack) {
		free(k);
		free(stamp);
		free(stack);
		return PS_ENOMEM;
	}
	for (uint64_t s = 0; s < S; s++) {
		uint64_t top = 0, size = 0, root = x->outputs[s];

		/* beyond 2^26 vertex visits in all, the cones are not counted */
		if (V * S <= (UINT64_C(1) << 26)) {
			stack[top++] = root;
			stamp[root] = s + 1;
			while (top) {
				uint64_t v = stack[--top];

				size++;
				for (uint64_t e = x->in_start[v]; e < x->in_start[v + 1]; e++)
					if (stamp[x->in_from[e]] != s + 1) {
						stamp[x->in_from[e]] = s + 1;
						stack[top++] = x->in_from[e];
					}
			}
		}
		k[s] = (struct keyed){ size, s, root };
	}
	qsort(k, S, sizeof(*k), cmp_keyed);
	for (uint64_t s = 0; s < S; s++)
		sinks[s] = k[s].v;
	free(k);
	free(stamp);
	free(stack);
	return PS_OK;
}

/* The out-edges of x: the children of v are child[child_start[v] ..
 * child_start[v + 1]), increasing. PS_OK or PS_ENOMEM. */
static int children_of(const struct ps_explicit *x, uint64_t **child_start,
		       uint64_t **child)
{
	uint64_t V = x->vertices, E = x->edges;

	*child_start = calloc(V + 2, sizeof(uint64_t));
	*child = malloc((E + 1) * sizeof(uint64_t));
	if (!*child_start || !*child) {
		free(*child_start);
		free(*child);
		*child_start = *child = NULL;
		return PS_ENOMEM;
	}
	for (uint64_t e = 0; e < E; e++)
		(*child_start)[x->in_from[e] + 2]++;
	for (uint64_t v = 0; v < V; v++)
		(*child_start)[v + 2] += (*child_start)[v + 1];
	for (uint64_t v = 0; v < V; v++)
		for (uint64_t e = x->in_start[v]; e < x->in_start[v + 1]; e++)
			(*child)[(*child_start)[x->in_from[e] + 1]++] = v;
	return PS_OK;
}

/* ---- the greedy list scheduler ----------------------------------------- */

struct greedy {
	const struct ps_explicit *x;
	uint64_t M;
	bool frees_first;
	uint64_t *child_start, *child; /* out-edges */
	uint64_t *uses;                /* children not yet scheduled */
	uint64_t *pending;             /* parents not yet computed */
	uint64_t *stamp;               /* last use, 0: not red */
	uint64_t *ready, ready_count;
	uint64_t *red_list, *red_at;   /* the red vertices, and where each is */
	uint64_t red, clock;
};

static void greedy_free(struct greedy *g)
{
	free(g->child_start);
	free(g->child);
	free(g->uses);
	free(g->pending);
	free(g->stamp);
	free(g->ready);
	free(g->red_list);
	free(g->red_at);
}

/* v turns red (used now), or is red and used again. */
static void greedy_touch(struct greedy *g, uint64_t v)
{
	if (!g->stamp[v]) {
		g->red_at[v] = g->red;
		g->red_list[g->red++] = v;
	}
	g->stamp[v] = ++g->clock;
}

static void greedy_drop(struct greedy *g, uint64_t v)
{
	uint64_t at = g->red_at[v], last = g->red_list[--g->red];

	g->red_list[at] = last;
	g->red_at[last] = at;
	g->stamp[v] = 0;
}

/* Evicts the least recently used red value that v does not read. */
static void greedy_evict(struct greedy *g, uint64_t v)
{
	const struct ps_explicit *x = g->x;
	uint64_t victim = UINT64_MAX, oldest = UINT64_MAX;

	for (uint64_t k = 0; k < g->red; k++) {
		uint64_t u = g->red_list[k];
		bool operand = false;

		if (g->stamp[u] >= oldest)
			continue;
		for (uint64_t e = x->in_start[v]; e < x->in_start[v + 1] && !operand; e++)
			operand = x->in_from[e] == u;
		if (!operand) {
			victim = u;
			oldest = g->stamp[u];
		}
	}
	if (victim != UINT64_MAX)
		greedy_drop(g, victim);
}

/* The score of scheduling v now, smaller first. */
static void greedy_score(const struct greedy *g, uint64_t v, int64_t *a,
			 int64_t *b, uint64_t *recent)
{
	const struct ps_explicit *x = g->x;
	int64_t loads = 0, frees = 0;

	*recent = 0;
	for (uint64_t e = x->in_start[v]; e < x->in_start[v + 1]; e++) {
		uint64_t u = x->in_from[e];

		if (!g->stamp[u])
			loads++;
		else
			*recent = ps_max_u64(*recent, g->stamp[u]);
		frees += g->uses[u] == 1;
	}
	if (g->frees_first) {
		*a = -frees;
		*b = loads;
	} else {
		*a = loads - frees;
		*b = loads;
	}
}

static int greedy_order(const struct ps_explicit *x, uint64_t M, bool frees_first,
			uint64_t *out, uint64_t *count)
{
	uint64_t V = x->vertices, done = 0;
	struct greedy g = { .x = x, .M = M, .frees_first = frees_first };
	int rc = PS_OK;

	g.uses = calloc(V + 1, sizeof(uint64_t));
	g.pending = calloc(V + 1, sizeof(uint64_t));
	g.stamp = calloc(V + 1, sizeof(uint64_t));
	g.ready = malloc((V + 1) * sizeof(uint64_t));
	g.red_list = malloc((V + 1) * sizeof(uint64_t));
	g.red_at = malloc((V + 1) * sizeof(uint64_t));
	if (children_of(x, &g.child_start, &g.child) || !g.uses || !g.pending ||
	    !g.stamp || !g.ready || !g.red_list || !g.red_at) {
		greedy_free(&g);
		return PS_ENOMEM;
	}
	for (uint64_t v = 0; v < V; v++) {
		g.uses[v] = g.child_start[v + 1] - g.child_start[v];
		if (x->role[v] == PS_ROLE_INPUT)
			continue;
		for (uint64_t e = x->in_start[v]; e < x->in_start[v + 1]; e++)
			g.pending[v] += x->role[x->in_from[e]] != PS_ROLE_INPUT;
		if (!g.pending[v])
			g.ready[g.ready_count++] = v;
	}
	while (g.ready_count) {
		uint64_t pick = 0, v, best_recent = 0;
		int64_t best_a = INT64_MAX, best_b = INT64_MAX;

		for (uint64_t k = 0; k < g.ready_count; k++) {
			int64_t a, b;
			uint64_t recent;

			greedy_score(&g, g.ready[k], &a, &b, &recent);
			if (a < best_a || (a == best_a && (b < best_b ||
			    (b == best_b && recent > best_recent)))) {
				pick = k;
				best_a = a;
				best_b = b;
				best_recent = recent;
			}
		}
		v = g.ready[pick];
		g.ready[pick] = g.ready[--g.ready_count];
		out[done++] = v;
		/* its parents red, then itself; the last uses retire */
		for (uint64_t e = x->in_start[v]; e < x->in_start[v + 1]; e++) {
			uint64_t u = x->in_from[e];

			if (!g.stamp[u] && g.red + 1 > M)
				greedy_evict(&g, v);
			greedy_touch(&g, u);
		}
		if (g.red + 1 > M)
			greedy_evict(&g, v);
		greedy_touch(&g, v);
		for (uint64_t e = x->in_start[v]; e < x->in_start[v + 1]; e++) {
			uint64_t u = x->in_from[e];

			if (--g.uses[u] == 0 && g.stamp[u])
				greedy_drop(&g, u);
		}
		if (!g.uses[v])
			greedy_drop(&g, v); /* an output, saved and deleted */
		for (uint64_t e = g.child_start[v]; e < g.child_start[v + 1]; e++)
			if (--g.pending[g.child[e]] == 0)
				g.ready[g.ready_count++] = g.child[e];
	}
	*count = done;
	greedy_free(&g);
	return rc;
}

/* ---- local search ------------------------------------------------------ */

static double seconds_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Moves the vertex at place from to place to, shifting those between. */
static void move_vertex(uint64_t *order, uint64_t *place, uint64_t from, uint64_t to)
{
	uint64_t v = order[from];

	if (from < to) {
		memmove(order + from, order + from + 1, (to - from) * sizeof(uint64_t));
		for (uint64_t k = from; k < to; k++)
			place[order[k]] = k;
	} else {
		memmove(order + to + 1, order + to, (from - to) * sizeof(uint64_t));
		for (uint64_t k = to + 1; k <= from; k++)
			place[order[k]] = k;
	}
	order[to] = v;
	place[v] = to;
}

/* Restarts of the local search from its best order, shaken. */
#define PORTFOLIO_KICKS 200

struct search_stats {
	uint64_t tried, kept, improved, kicks;
	double seconds;
};

/*
 * Improves order[count] (every vertex but the inputs) under policy at M
 * from its I/O *io, within the budget. Children are found through the
 * out-edges child_start/child. PS_OK or PS_ENOMEM.
 */
static int local_search(const struct ps_explicit *x, uint64_t *order, uint64_t count,
			uint64_t M, enum ps_policy policy, double budget,
			uint64_t *io, struct search_stats *stats)
{
	uint64_t V = x->vertices, seed = UINT64_C(0x9E3779B97F4A7C15);
	uint64_t *place = malloc((V + 1) * sizeof(uint64_t));
	uint64_t *best = malloc((count + 1) * sizeof(uint64_t));
	uint64_t *child_start = NULL, *child = NULL;
	uint64_t current = *io, best_io = *io, stale = 0, stale_limit = 200 * count + 2000;
	uint64_t kicks = 0;
	double start = seconds_now();

	memset(stats, 0, sizeof(*stats));
	if (children_of(x, &child_start, &child) || !place || !best) {
		free(place);
		free(best);
		free(child_start);
		free(child);
		return PS_ENOMEM;
	}
	for (uint64_t v = 0; v < V; v++)
		place[v] = UINT64_MAX; /* inputs have no place */
	for (uint64_t k = 0; k < count; k++)
		place[order[k]] = k;
	memcpy(best, order, count * sizeof(uint64_t));
	while (count > 1) {
		uint64_t from = next_random(&seed) % count, v = order[from];
		uint64_t lo = 0, hi = count - 1, to, got;

		if (seconds_now() - start >= budget)
			break;
		if (stale >= stale_limit) {
			/* a local optimum: start again from the best order, shaken
			 * by a few moves kept whatever they cost */
			if (++kicks > PORTFOLIO_KICKS)
				break;
			memcpy(order, best, count * sizeof(uint64_t));
			for (uint64_t k = 0; k < count; k++)
				place[order[k]] = k;
			for (uint64_t m = 0; m < 2 + count / 16; m++) {
				uint64_t f = next_random(&seed) % count, w = order[f], a = 0, b = count - 1;

				for (uint64_t e = x->in_start[w]; e < x->in_start[w + 1]; e++)
					if (place[x->in_from[e]] != UINT64_MAX)
						a = ps_max_u64(a, place[x->in_from[e]] + 1);
				for (uint64_t e = child_start[w]; e < child_start[w + 1]; e++)
					b = ps_min_u64(b, place[child[e]] - 1);
				if (a < b)
					move_vertex(order, place, f, a + next_random(&seed) % (b - a + 1));
			}
			current = ps_order_io(x, order, count, M, policy);
			stale = 0;
			continue;
		}
		for (uint64_t e = x->in_start[v]; e < x->in_start[v + 1]; e++)
			if (place[x->in_from[e]] != UINT64_MAX)
				lo = ps_max_u64(lo, place[x->in_from[e]] + 1);
		for (uint64_t e = child_start[v]; e < child_start[v + 1]; e++)
			hi = ps_min_u64(hi, place[child[e]] - 1);
		if (lo >= hi) {
			stale++;
			continue;
		}
		/* half the moves near where it is, half anywhere it may go */
		if (next_random(&seed) & 1) {
			uint64_t a = from > lo + 4 ? from - 4 : lo, b = ps_min_u64(hi, from + 4);

			to = a + next_random(&seed) % (b - a + 1);
		} else {
			to = lo + next_random(&seed) % (hi - lo + 1);
		}
		if (to == from) {
			stale++;
			continue;
		}
		stats->tried++;
		move_vertex(order, place, from, to);
		got = ps_order_io(x, order, count, M, policy);
		if (got <= current) {
			stats->kept++;
			stale = got < current ? 0 : stale + 1;
			current = got;
			if (got < best_io) {
				stats->improved++;
				best_io = got;
				memcpy(best, order, count * sizeof(uint64_t));
			}
		} else {
			move_vertex(order, place, to, from);
			stale++;
		}
	}
	memcpy(order, best, count * sizeof(uint64_t));
	*io = best_io;
	stats->kicks = kicks > PORTFOLIO_KICKS ? PORTFOLIO_KICKS : kicks;
	stats->seconds = seconds_now() - start;
	free(place);
	free(best);
	free(child_start);
	free(child);
	return PS_OK;
}

/* ---- the portfolio ----------------------------------------------------- */

/* The greedy schedulers take time quadratic in the vertices: beyond this
 * many they are not run (and not counted among the members). */
#define PORTFOLIO_GREEDY_MAX 20000

enum { ORDER_COUNT = 9 };

static const char *const order_names[ORDER_COUNT] = {
	"topo", "dfs", "dfs-reverse", "dfs-deepest", "sink-cones", "level", "alap",
	"greedy-red", "greedy-frees",
};

/* What the search found: the winning order and member, and the runner-up. */
struct portfolio {
	const struct ps_explicit *x;
	uint64_t M, vertices, edges, fingerprint;
	double budget;
	uint64_t *order, count, io;
	enum ps_policy policy;
	const char *member;          /* the winner's order, or "local" */
	const char *from;            /* local: the order it started from */
	enum ps_policy second_policy;
	const char *second;
	uint64_t second_io;
	unsigned members;
	struct search_stats search;
};

static struct portfolio last; /* the latest search, for plan and run */

static uint64_t fingerprint(const struct ps_explicit *x)
{
	uint64_t h = UINT64_C(1469598103934665603);

	for (uint64_t e = 0; e < x->edges; e++)
		h = (h ^ x->in_from[e]) * UINT64_C(1099511628211);
	for (uint64_t v = 0; v <= x->vertices; v++)
		h = (h ^ x->in_start[v]) * UINT64_C(1099511628211);
	return h;
}

/* Order number k of the portfolio into out; *count its length. */
static int make_member(const struct ps_explicit *x, uint64_t M, int k,
		       const uint64_t *topo, const uint64_t *depth,
		       const uint64_t *height, const uint64_t *sinks,
		       uint64_t *out, uint64_t *count, struct ps_error *err)
{
	uint64_t *rank = NULL;
	int rc = PS_OK;

	*count = x->vertices;
	switch (k) {
	case 0:
		memcpy(out, topo, x->vertices * sizeof(uint64_t));
		break;
	case 1:
		rc = ps_dfs_order(x, NULL, NULL, out, count);
		break;
	case 2:
		/* parents by decreasing id: the reverse of their order */
		if (!(rank = malloc((x->vertices + 1) * sizeof(uint64_t))))
			return ps_error_set(err, PS_ENOMEM, "out of memory");
		for (uint64_t v = 0; v < x->vertices; v++)
			rank[v] = v;
		rc = ps_dfs_order(x, NULL, rank, out, count);
		break;
	case 3:
		rc = ps_dfs_order(x, NULL, depth, out, count);
		break;
	case 4:
		rc = ps_dfs_order(x, sinks, NULL, out, count);
		break;
	case 5:
		rc = order_by_key(x, topo, depth, out);
		break;
	case 6:
		rc = order_by_key(x, topo, height, out);
		break;
	default:
		/* a list scheduler's pick looks at every ready vertex */
		if (x->vertices > PORTFOLIO_GREEDY_MAX) {
			*count = 0;
			return PS_OK;
		}
		rc = greedy_order(x, M, k == 8, out, count);
		break;
	}
	free(rank);
	return rc ? ps_error_set(err, PS_ENOMEM, "out of memory") : PS_OK;
}

static void portfolio_forget(void)
{
	free(last.order);
	memset(&last, 0, sizeof(last));
}

/* The search for pb, or the one kept when it was made for the same DAG,
 * M and budget. */
static int portfolio_search(const struct ps_problem *pb, struct ps_error *err)
{
	const struct ps_explicit *x = pb->xdag;
	uint64_t V = x->vertices, print = fingerprint(x), max_depth = 0;
	double budget = pb->time_limit > 0 ? pb->time_limit : PS_PORTFOLIO_SECONDS;
	uint64_t *topo = NULL, *depth = NULL, *height = NULL, *sinks = NULL, *work = NULL;
	uint64_t *inner = NULL, inner_count = 0;
	int rc = PS_OK;

	if (last.x == x && last.M == pb->M && last.vertices == V && last.edges == x->edges &&
	    last.fingerprint == print && last.budget == budget && last.order)
		return PS_OK;
	portfolio_forget();
	topo = malloc((V + 1) * sizeof(uint64_t));
	depth = calloc(V + 1, sizeof(uint64_t));
	height = calloc(V + 1, sizeof(uint64_t));
	sinks = malloc((x->dag.output_count + 1) * sizeof(uint64_t));
	work = malloc((V + 1) * sizeof(uint64_t));
	last.order = malloc((V + 1) * sizeof(uint64_t));
	if (!topo || !depth || !height || !sinks || !work || !last.order) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory");
		goto done;
	}
	if ((rc = ps_explicit_topological_order(x, topo, err)))
		goto done;
	depths(x, topo, depth);
	/* the level from the outputs, as late as possible: the largest depth
	 * less the longest path to a sink */
	for (uint64_t k = V; k-- > 0;) {
		uint64_t v = topo[k];

		for (uint64_t e = x->in_start[v]; e < x->in_start[v + 1]; e++)
			height[x->in_from[e]] = ps_max_u64(height[x->in_from[e]], height[v] + 1);
		max_depth = ps_max_u64(max_depth, depth[v]);
	}
	for (uint64_t v = 0; v < V; v++)
		height[v] = max_depth - height[v];
	if (sinks_by_cone(x, sinks)) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory");
		goto done;
	}
	last.io = last.second_io = UINT64_MAX;
	for (int k = 0; k < ORDER_COUNT; k++) {
		uint64_t count;

		if ((rc = make_member(x, pb->M, k, topo, depth, height, sinks, work, &count, err)))
			goto done;
		if (!count && x->vertices)
			continue; /* not run on a DAG this large */
		for (int p = 0; p < 2; p++) {
			enum ps_policy policy = p ? PS_POLICY_LRU : PS_POLICY_BELADY;
			uint64_t io = ps_order_io(x, work, count, pb->M, policy);

			last.members++;
			if (io < last.io) {
				last.second = last.member;
				last.second_policy = last.policy;
				last.second_io = last.io;
				last.io = io;
				last.member = order_names[k];
				last.policy = policy;
				last.count = count;
				memcpy(last.order, work, count * sizeof(uint64_t));
			} else if (io < last.second_io) {
				last.second = order_names[k];
				last.second_policy = policy;
				last.second_io = io;
			}
		}
	}
	if (last.io == UINT64_MAX) {
		rc = ps_error_set(err, PS_EINPUT, "no order of the portfolio can be played at M = %llu",
				  (unsigned long long)pb->M);
		goto done;
	}
	/* the local search moves computed vertices only: the inputs out */
	inner = malloc((last.count + 1) * sizeof(uint64_t));
	if (!inner) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory");
		goto done;
	}
	for (uint64_t k = 0; k < last.count; k++)
		if (x->role[last.order[k]] != PS_ROLE_INPUT)
			inner[inner_count++] = last.order[k];
	{
		uint64_t io = last.io;

		if (local_search(x, inner, inner_count, pb->M, last.policy, budget, &io,
				 &last.search)) {
			rc = ps_error_set(err, PS_ENOMEM, "out of memory");
			goto done;
		}
		last.members++;
		if (io < last.io) {
			last.second = last.member;
			last.second_policy = last.policy;
			last.second_io = last.io;
			last.from = last.member;
			last.member = "local";
			last.io = io;
			last.count = inner_count;
			memcpy(last.order, inner, inner_count * sizeof(uint64_t));
		}
	}
	last.x = x;
	last.M = pb->M;
	last.vertices = V;
	last.edges = x->edges;
	last.fingerprint = print;
	last.budget = budget;
done:
	if (rc)
		portfolio_forget();
	free(topo);
	free(depth);
	free(height);
	free(sinks);
	free(work);
	free(inner);
	return rc;
}

static const char *policy_name(enum ps_policy p)
{
	return p == PS_POLICY_LRU ? "lru" : "belady";
}

static int portfolio_plan(const struct ps_problem *pb, struct ps_plan *plan,
			  struct ps_error *err)
{
	char won[96];
	int rc;

	if ((rc = ps_policy_check_memory(pb, err)) || (rc = portfolio_search(pb, err)))
		return rc;
	if (last.from)
		snprintf(won, sizeof(won), "%s over a local search from %s", policy_name(last.policy),
			 last.from);
	else
		snprintf(won, sizeof(won), "%s over %s", policy_name(last.policy), last.member);
	snprintf(plan->summary, sizeof(plan->summary),
		 "won: %s, I/O %llu, the least of %u members (local search: %llu moves tried, %llu kept, %llu restarts, %.1f s); runner-up %s over %s, %llu",
		 won, (unsigned long long)last.io, last.members,
		 (unsigned long long)last.search.tried, (unsigned long long)last.search.kept,
		 (unsigned long long)last.search.kicks, last.search.seconds,
		 last.second ? policy_name(last.second_policy) : "none",
		 last.second ? last.second : "-",
		 (unsigned long long)(last.second ? last.second_io : 0));
	plan->peak_red = pb->M;
	plan->param_name = NULL;
	/* the cache's tables, seven orders and depths, the greedy's or the
	 * local search's tables (a dozen words a vertex, two an edge) */
	plan->work_bytes = ps_cache_bytes(&pb->xdag->dag, PS_POLICY_BELADY) +
			   160 * pb->xdag->vertices + 32 * pb->xdag->edges;
	return PS_OK;
}

static int portfolio_run(const struct ps_problem *pb, struct ps_sink *sink,
			 struct ps_error *err)
{
	struct ps_vertex_order o;
	int rc = portfolio_search(pb, err);

	if (rc)
		return rc;
	o = (struct ps_vertex_order){ pb->xdag, last.order, last.count };
	return ps_cache_run(&pb->xdag->dag, ps_vertex_order_steps, &o, pb->M, last.policy,
			    sink, err);
}

int ps_portfolio_best(const struct ps_problem *pb, struct ps_portfolio_result *out,
		      struct ps_error *err)
{
	int rc = portfolio_search(pb, err);

	if (rc)
		return rc;
	out->io = last.io;
	out->policy = policy_name(last.policy);
	out->member = last.member;
	return PS_OK;
}

static uint64_t attention_never(const struct ps_attention *att)
{
	(void)att;
	return UINT64_MAX;
}

const struct ps_strategy ps_strategy_portfolio = {
	.version = PS_STRATEGY_VERSION,
	.name = "portfolio",
	.section = "any DAG: the least I/O of belady and lru over nine orders and a local search (run --dag FILE --strategy best)",
	.summary = "explicit DAGs: belady and lru over topo, dfs, sink and level orders and two greedy schedulers, then a local search over the best order within --time-limit (default 3 s); prints the member that won",
	.min_memory = attention_never,
	.plan = portfolio_plan,
	.run = portfolio_run,
	.flags = PS_STRATEGY_EXPLICIT,
	.min_memory_explicit = ps_policy_min_memory,
	.takes = PS_TAKES_TIME_LIMIT,
};
