/*
 * The exact optimum of small instances by A* (include/pebblesim/optimal.h,
 * docs/OPTIMAL.md). A state is one bitset: a red bit and a blue bit for
 * every node that holds pebbles, then a bit for every in-edge of every
 * sum (in the sum's set or not). States are stored once, in an arena,
 * found again through an open-addressing hash table, and opened in
 * buckets by f = g + h, the last one pushed first within a bucket.
 */
#include "pebblesim/optimal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "pebblesim/ops.h"
#include "pebblesim/run.h"

/* The DAG as the search reads it: built once from the DAG seam. */
struct graph {
	uint32_t nodes;       /* ids [0, nodes) hold pebbles */
	uint32_t edges;       /* sums' in-edges, sum after sum */
	uint32_t words;       /* 64-bit words a state takes */
	uint8_t *role;        /* [nodes] enum ps_role */
	uint32_t *first, *end; /* [nodes]: a plain node's parents in par[],
				* a sum's in-edges as edge numbers */
	uint32_t *par;        /* plain nodes' parents */
	uint32_t *edge_sum;   /* [edges] the sum an in-edge feeds */
	uint32_t *edge_par;   /* [2 edges] its product's parents */
	uint8_t *edge_par_count;
	uint8_t *edge_transient; /* the product takes a slot during the mac */
	ps_node *edge_product;   /* the product's id, for the trace */
	uint32_t *outputs;
	uint32_t output_count;
	unsigned transient;   /* 1 when some product takes a slot */
	/* the heuristic's scratch: its walk; the nodes in slow memory only
	 * where it stopped; the loads claimed, and a search for more */
	uint32_t *stack, *seen, stamp;
	uint32_t *stopped, *claimed, *reached, *via, *path_stack, claim_stamp, reach_mark;
	int32_t *chain_a, *chain_c; /* separations(): the longest chains */
	uint32_t *on_path, path_mark; /* separations(): the value's path */
	uint32_t *kept, kept_stamp;   /* the paths of values counted */
	uint8_t *is_bare;             /* bare(), for terms 5 and 6 */
	uint32_t *pos;                /* each node's place in order[] */
	uint64_t *reads_mask, *anc_mask, *desc_mask; /* crowding(): inputs */
	uint64_t M;                 /* capacity, for the separations */
	/* the uses of each node, for rule R5: the nodes that read it (a
	 * plain child, or the sum of a product it is a parent of), and the
	 * nodes in an order where every node comes after its parents */
	uint32_t *use_start, *use, *order;
	uint8_t *is_output, *dead;
};

static void graph_free(struct graph *gr)
{
	free(gr->role);
	free(gr->first);
	free(gr->end);
	free(gr->par);
	free(gr->edge_sum);
	free(gr->edge_par);
	free(gr->edge_par_count);
	free(gr->edge_transient);
	free(gr->edge_product);
	free(gr->outputs);
	free(gr->stack);
	free(gr->seen);
	free(gr->stopped);
	free(gr->claimed);
	free(gr->reached);
	free(gr->via);
	free(gr->path_stack);
	free(gr->chain_a);
	free(gr->chain_c);
	free(gr->on_path);
	free(gr->kept);
	free(gr->is_bare);
	free(gr->pos);
	free(gr->reads_mask);
	free(gr->anc_mask);
	free(gr->desc_mask);
	free(gr->use_start);
	free(gr->use);
	free(gr->order);
	free(gr->is_output);
	free(gr->dead);
	memset(gr, 0, sizeof(*gr));
}

/* A product's parents and its slot, checked against the node range. */
static int read_edge(struct graph *gr, const struct ps_dag *dag, ps_node sum,
		     uint64_t k, uint32_t e, struct ps_error *err)
{
	struct ps_product p;

	ps_dag_product(dag, ps_dag_parent(dag, sum, k), &p);
	if (p.parent_count > 2 || p.sum != sum || p.edge != k)
		return ps_error_set(err, PS_EINPUT, "in-edge %llu of node %llu is no product of it",
				    (unsigned long long)k, (unsigned long long)sum);
	for (unsigned q = 0; q < p.parent_count; q++) {
		if (p.parent[q] >= gr->nodes)
			return ps_error_set(err, PS_EINPUT, "a parent of node %llu holds no pebble",
					    (unsigned long long)sum);
		gr->edge_par[2 * e + q] = (uint32_t)p.parent[q];
	}
	gr->edge_sum[e] = (uint32_t)sum;
	gr->edge_par_count[e] = (uint8_t)p.parent_count;
	gr->edge_transient[e] = p.transient ? 1 : 0;
	gr->edge_product[e] = p.id;
	if (p.transient)
		gr->transient = 1;
	return PS_OK;
}

/* Calls fn(gr, parent, child, ctx) for every pair where child reads parent. */
static void each_use(struct graph *gr, void (*fn)(struct graph *, uint32_t, uint32_t, void *),
		     void *ctx)
{
	for (uint32_t v = 0; v < gr->nodes; v++) {
		if (gr->role[v] == PS_ROLE_PLAIN)
			for (uint32_t p = gr->first[v]; p < gr->end[v]; p++)
				fn(gr, gr->par[p], v, ctx);
		if (gr->role[v] == PS_ROLE_SUM)
			for (uint32_t e = gr->first[v]; e < gr->end[v]; e++)
				for (unsigned q = 0; q < gr->edge_par_count[e]; q++)
					fn(gr, gr->edge_par[2 * e + q], v, ctx);
	}
}

static void count_use(struct graph *gr, uint32_t parent, uint32_t child, void *ctx)
{
	uint32_t *indegree = ctx;

	gr->use_start[parent + 1]++;
	indegree[child]++;
}

static void put_use(struct graph *gr, uint32_t parent, uint32_t child, void *ctx)
{
	uint32_t *next = ctx;

	gr->use[next[parent]++] = child;
}

/* The uses of every node and an order with parents first (Kahn's). */
static int graph_uses(struct graph *gr, struct ps_error *err)
{
	uint32_t S = gr->nodes, head = 0, tail = 0;
	uint32_t *indegree = calloc(S + 1, sizeof(uint32_t));
	uint32_t *next = calloc(S + 1, sizeof(uint32_t));
	int rc = PS_OK;

	gr->use_start = calloc(S + 2, sizeof(uint32_t));
	gr->order = calloc(S + 1, sizeof(uint32_t));
	gr->is_output = calloc(S + 1, 1);
	gr->dead = calloc(S + 1, 1);
	if (!indegree || !next || !gr->use_start || !gr->order || !gr->is_output || !gr->dead) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory");
		goto out;
	}
	each_use(gr, count_use, indegree);
	for (uint32_t v = 0; v < S; v++)
		gr->use_start[v + 1] += gr->use_start[v];
	gr->use = calloc((size_t)gr->use_start[S] + 1, sizeof(uint32_t));
	if (!gr->use) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory");
		goto out;
	}
	memcpy(next, gr->use_start, S * sizeof(uint32_t));
	each_use(gr, put_use, next);
	for (uint32_t v = 0; v < S; v++)
		if (!indegree[v])
			gr->order[tail++] = v;
	while (head < tail) {
		uint32_t v = gr->order[head++];

		for (uint32_t k = gr->use_start[v]; k < gr->use_start[v + 1]; k++)
			if (--indegree[gr->use[k]] == 0)
				gr->order[tail++] = gr->use[k];
	}
	if (tail != S)
		rc = ps_error_set(err, PS_EINPUT, "the DAG has a cycle");
	for (uint32_t k = 0; k < tail; k++)
		gr->pos[gr->order[k]] = k;
	for (uint32_t k = 0; k < gr->output_count; k++)
		gr->is_output[gr->outputs[k]] = 1;
	/* the first 64 inputs by id, a bit each, in the masks of their
	 * plain readers (crowding() looks at those alone) */
	for (uint32_t v = 0, bit = 0; v < S && bit < 64; v++) {
		if (gr->role[v] != PS_ROLE_INPUT)
			continue;
		for (uint32_t k = gr->use_start[v]; k < gr->use_start[v + 1]; k++)
			if (gr->role[gr->use[k]] == PS_ROLE_PLAIN)
				gr->reads_mask[gr->use[k]] |= UINT64_C(1) << bit;
		bit++;
	}
out:
	free(indegree);
	free(next);
	if (rc)
		graph_free(gr);
	return rc;
}

static int graph_build(struct graph *gr, const struct ps_dag *dag,
		       struct ps_error *err)
{
	uint64_t plain_parents = 0, edges = 0;
	uint32_t S;

	memset(gr, 0, sizeof(*gr));
	if (dag->state_count > PS_OPTIMAL_MAX_NODES)
		return ps_error_set(err, PS_EINPUT,
				    "the DAG has %llu nodes that hold pebbles; the search takes at most %d",
				    (unsigned long long)dag->state_count, PS_OPTIMAL_MAX_NODES);
	S = (uint32_t)dag->state_count;
	for (uint32_t v = 0; v < S; v++) {
		enum ps_role role = ps_dag_role(dag, v);
		uint64_t count = ps_dag_parent_count(dag, v);

		if (role == PS_ROLE_PRODUCT)
			return ps_error_set(err, PS_EINPUT, "node %u is a product among the nodes that hold pebbles", v);
		if (role == PS_ROLE_PLAIN)
			plain_parents += count;
		else if (role == PS_ROLE_SUM)
			edges += count;
		if (edges > PS_OPTIMAL_MAX_EDGES || plain_parents > PS_OPTIMAL_MAX_EDGES)
			return ps_error_set(err, PS_EINPUT,
					    "the DAG has more than %d in-edges of sums (or parents of plain nodes); the search takes at most that many",
					    PS_OPTIMAL_MAX_EDGES);
	}
	gr->nodes = S;
	gr->edges = (uint32_t)edges;
	gr->words = (uint32_t)((2 * (uint64_t)S + edges + 63) / 64);
	gr->role = calloc(S + 1, 1);
	gr->first = calloc(S + 1, sizeof(uint32_t));
	gr->end = calloc(S + 1, sizeof(uint32_t));
	gr->par = calloc(plain_parents + 1, sizeof(uint32_t));
	gr->edge_sum = calloc(edges + 1, sizeof(uint32_t));
	gr->edge_par = calloc(2 * edges + 2, sizeof(uint32_t));
	gr->edge_par_count = calloc(edges + 1, 1);
	gr->edge_transient = calloc(edges + 1, 1);
	gr->edge_product = calloc(edges + 1, sizeof(ps_node));
	gr->outputs = calloc(dag->output_count + 1, sizeof(uint32_t));
	gr->stack = calloc(S + 1, sizeof(uint32_t));
	gr->seen = calloc(S + 1, sizeof(uint32_t));
	gr->stopped = calloc(S + 1, sizeof(uint32_t));
	gr->claimed = calloc(S + 1, sizeof(uint32_t));
	gr->reached = calloc(S + 1, sizeof(uint32_t));
	gr->via = calloc(S + 1, sizeof(uint32_t));
	gr->path_stack = calloc(S + 1, sizeof(uint32_t));
	gr->chain_a = calloc(S + 1, sizeof(int32_t));
	gr->chain_c = calloc(S + 1, sizeof(int32_t));
	gr->on_path = calloc(S + 1, sizeof(uint32_t));
	gr->kept = calloc(S + 1, sizeof(uint32_t));
	gr->is_bare = calloc(S + 1, 1);
	gr->pos = calloc(S + 1, sizeof(uint32_t));
	gr->reads_mask = calloc(S + 1, sizeof(uint64_t));
	gr->anc_mask = calloc(S + 1, sizeof(uint64_t));
	gr->desc_mask = calloc(S + 1, sizeof(uint64_t));
	if (!gr->role || !gr->first || !gr->end || !gr->par || !gr->edge_sum || !gr->edge_par ||
	    !gr->edge_par_count || !gr->edge_transient || !gr->edge_product ||
	    !gr->outputs || !gr->stack || !gr->seen || !gr->stopped || !gr->claimed ||
	    !gr->reached || !gr->via || !gr->path_stack || !gr->chain_a || !gr->chain_c ||
	    !gr->on_path || !gr->kept || !gr->is_bare || !gr->pos ||
	    !gr->reads_mask || !gr->anc_mask || !gr->desc_mask) {
		graph_free(gr);
		return ps_error_set(err, PS_ENOMEM, "out of memory");
	}
	{
		uint32_t p = 0, e = 0;

		for (uint32_t v = 0; v < S; v++) {
			enum ps_role role = ps_dag_role(dag, v);
			uint64_t count = ps_dag_parent_count(dag, v);

			gr->role[v] = (uint8_t)role;
			gr->first[v] = role == PS_ROLE_SUM ? e : p;
			for (uint64_t k = 0; k < count && role == PS_ROLE_PLAIN; k++) {
				ps_node u = ps_dag_parent(dag, v, k);

				if (u >= S) {
					graph_free(gr);
					return ps_error_set(err, PS_EINPUT, "a parent of node %u holds no pebble", v);
				}
				gr->par[p++] = (uint32_t)u;
			}
			for (uint64_t k = 0; k < count && role == PS_ROLE_SUM; k++, e++)
				if (read_edge(gr, dag, v, k, e, err)) {
					graph_free(gr);
					return err->code;
				}
			gr->end[v] = role == PS_ROLE_SUM ? e : p;
		}
	}
	for (uint64_t k = 0; k < dag->output_count; k++) {
		ps_node o = ps_dag_output(dag, k);

		if (o >= S) {
			graph_free(gr);
			return ps_error_set(err, PS_EINPUT, "output %llu holds no pebble", (unsigned long long)o);
		}
		gr->outputs[gr->output_count++] = (uint32_t)o;
	}
	return graph_uses(gr, err);
}

/* ---- states --------------------------------------------------------------- */

static inline void bit_set(uint64_t *s, uint32_t k)
{
	s[k >> 6] |= UINT64_C(1) << (k & 63);
}

static inline void bit_clear(uint64_t *s, uint32_t k)
{
	s[k >> 6] &= ~(UINT64_C(1) << (k & 63));
}

/* The layout of a state: red bits, blue bits, then the in-edges' bits. */
static inline bool is_red(const struct graph *gr, const uint64_t *s, uint32_t v)
{
	(void)gr;
	return ps_bits_test(s, v);
}

static inline bool is_blue(const struct graph *gr, const uint64_t *s, uint32_t v)
{
	return ps_bits_test(s, gr->nodes + v);
}

static inline bool has_edge(const struct graph *gr, const uint64_t *s, uint32_t e)
{
	return ps_bits_test(s, 2 * (uint64_t)gr->nodes + e);
}

static uint32_t red_count(const struct graph *gr, const uint64_t *s)
{
	return (uint32_t)ps_bits_count(s, 0, gr->nodes);
}

static bool complete(const struct graph *gr, const uint64_t *s, uint32_t v)
{
	uint64_t at = 2 * (uint64_t)gr->nodes;

	return ps_bits_count(s, at + gr->first[v], at + gr->end[v]) == gr->end[v] - gr->first[v];
}

/* A value a move may read: red, and complete if it is a sum. */
static bool ready(const struct graph *gr, const uint64_t *s, uint32_t v)
{
	return is_red(gr, s, v) && (gr->role[v] != PS_ROLE_SUM || complete(gr, s, v));
}

static bool output_done(const struct graph *gr, const uint64_t *s, uint32_t o)
{
	return is_blue(gr, s, o) && (gr->role[o] != PS_ROLE_SUM || complete(gr, s, o));
}

/*
 * R5's dead nodes: an output done, or a node that is no output and whose
 * every use is dead (docs/OPTIMAL.md). Done is for good (a blue pebble of
 * a plain node, or of a complete sum, is never removed), so dead is too.
 */
static void mark_dead(struct graph *gr, const uint64_t *s)
{
	for (uint32_t k = gr->nodes; k-- > 0;) {
		uint32_t v = gr->order[k];
		bool dead = true;

		if (gr->is_output[v]) {
			gr->dead[v] = output_done(gr, s, v);
			continue;
		}
		for (uint32_t u = gr->use_start[v]; u < gr->use_start[v + 1] && dead; u++)
			dead = gr->dead[gr->use[u]];
		gr->dead[v] = dead;
	}
}

/* Pushes u on the heuristic's walk, once a state. */
static inline void visit(struct graph *gr, uint32_t *top, uint32_t u)
{
	if (gr->seen[u] != gr->stamp) {
		gr->seen[u] = gr->stamp;
		gr->stack[(*top)++] = u;
	}
}

/*
 * Forced loads beyond the walk's (docs/OPTIMAL.md, "The heuristic", term
 * 4): a plain node u in slow memory only, that the walk requires, is made
 * red either by a load of itself or by a compute, which needs its parents
 * red, and so on down. Along any path of nodes without a red pebble from
 * u to an input that is not red, the first of them to turn red does so by
 * a load, of a node that is blue now. So every completion loads one of
 * the blue nodes of such a path: when the paths of several such u share
 * no blue node with each other nor with a load already counted, each
 * needs a load of its own. Finds such a path for u among the nodes not
 * yet claimed, and claims its blue nodes: true, or false when there is
 * none.
 */
static bool claim_path(struct graph *gr, const uint64_t *s, uint32_t u, uint32_t mark)
{
	uint32_t top = 0;

	gr->reached[u] = mark;
	gr->via[u] = UINT32_MAX;
	gr->path_stack[top++] = u;
	while (top) {
		uint32_t v = gr->path_stack[--top];

		if (gr->role[v] == PS_ROLE_INPUT) {
			/* a path to an input not red: claim its blue nodes */
			for (uint32_t w = v; w != UINT32_MAX; w = gr->via[w])
				if (is_blue(gr, s, w))
					gr->claimed[w] = gr->claim_stamp;
			return true;
		}
		for (uint32_t p = gr->first[v]; p < gr->end[v]; p++) {
			uint32_t q = gr->par[p];

			/* through nodes without a red pebble, blue ones unclaimed;
			 * a sum ends the path (not followed) */
			if (gr->reached[q] == mark || is_red(gr, s, q) ||
			    gr->role[q] == PS_ROLE_SUM ||
			    (is_blue(gr, s, q) && gr->claimed[q] == gr->claim_stamp))
				continue;
			gr->reached[q] = mark;
			gr->via[q] = v;
			gr->path_stack[top++] = q;
		}
	}
	return false;
}

/* A plain node the walk requires that holds no pebble: it is computed
 * before anything it feeds is. */
static inline bool bare(const struct graph *gr, const uint64_t *s, uint32_t v)
{
	return gr->role[v] == PS_ROLE_PLAIN && gr->seen[v] == gr->stamp &&
	       !is_red(gr, s, v) && !is_blue(gr, s, v);
}

static bool reads(const struct graph *gr, uint32_t v, uint32_t i)
{
	for (uint32_t p = gr->first[v]; p < gr->end[v]; p++)
		if (gr->par[p] == i)
			return true;
	return false;
}

/* Any parent of v on the path of the value separations() follows. */
static bool reads_path(const struct graph *gr, uint32_t v)
{
	for (uint32_t p = gr->first[v]; p < gr->end[v]; p++)
		if (gr->on_path[gr->par[p]] == gr->path_mark)
			return true;
	return false;
}

/* A fresh mark for one of the heuristic's stamped arrays. */
static uint32_t new_mark(uint32_t *mark, uint32_t *marks, uint32_t n)
{
	if (++*mark == 0) {
		memset(marks, 0, n * sizeof(uint32_t));
		*mark = 1;
	}
	return *mark;
}

/*
 * Reloads that capacity forces along a value's path (docs/OPTIMAL.md,
 * "The heuristic", term 5). The value x is an input, or a bare node; its
 * path (on_path, marked path_mark) is x alone for an input, else x and
 * bare nodes up to an input. A plain node c with M - 1 parents fills
 * fast memory when it is computed: nothing else is red then. When a bare
 * node a reading x leads to c through bare nodes, and c to a bare node b
 * reading x, and c reads no node of the path, then x is red at a's first
 * compute, no node of the path is red at c's first, and x is red again
 * at b's first, after c's: a load of a node of the path lies between c's
 * first compute and b's. Along a chain a0 -> c1 -> a1 -> ... -> cm ->
 * am, those loads are m distinct ones, after the path's input was first
 * red. The longest such chain, by a pass in topological order.
 */
static uint32_t separations(struct graph *gr, uint32_t x)
{
	int32_t best = 0;
	uint32_t lo = UINT32_MAX, hi = 0, readers = 0;

	/* a chain runs from a bare reader of x to another: only the nodes
	 * between the first and the last in order[] can be on one, and those
	 * before the first have no chain (-1) */
	for (uint32_t k = gr->use_start[x]; k < gr->use_start[x + 1]; k++) {
		uint32_t c = gr->use[k];

		if (gr->is_bare[c]) {
			readers++;
			lo = lo < gr->pos[c] ? lo : gr->pos[c];
			hi = hi > gr->pos[c] ? hi : gr->pos[c];
		}
	}
	if (readers < 2)
		return 0;
	for (uint32_t k = lo; k <= hi; k++) {
		uint32_t v = gr->order[k];
		int32_t in_a = -1, in_c = -1;
		bool reader;

		if (!gr->is_bare[v])
			continue;
		for (uint32_t p = gr->first[v]; p < gr->end[v]; p++) {
			uint32_t u = gr->par[p];

			if (gr->is_bare[u] && gr->pos[u] >= lo) {
				in_a = in_a > gr->chain_a[u] ? in_a : gr->chain_a[u];
				in_c = in_c > gr->chain_c[u] ? in_c : gr->chain_c[u];
			}
		}
		reader = reads(gr, v, x);
		/* chain_a, chain_c: the longest chain ending at v or before it on
		 * a bare path, at a reader of x and at a separator */
		gr->chain_a[v] = in_a;
		gr->chain_c[v] = in_c;
		if (reader) {
			int32_t a = in_c > 0 ? in_c : 0;

			gr->chain_a[v] = gr->chain_a[v] > a ? gr->chain_a[v] : a;
			best = best > a ? best : a;
		}
		if (!reads_path(gr, v) && in_a >= 0 &&
		    (uint64_t)(gr->end[v] - gr->first[v]) + 1 == gr->M)
			gr->chain_c[v] = gr->chain_c[v] > in_a + 1 ? gr->chain_c[v] : in_a + 1;
	}
	return (uint32_t)best;
}

/*
 * The path of term 5 for a bare node x: x, then bare nodes, each a
 * parent of the one before, up to an input; none of them kept by a value
 * counted before, and not ending at the input `other`; the shortest
 * such. With `other` an input (the end of x's first path), the second
 * path may share the nodes of the first, still marked on_path. Marks it on_path and returns its input, or UINT32_MAX when there
 * is none (via[] links it back to x).
 */
static uint32_t value_path(struct graph *gr, uint32_t x, uint32_t other)
{
	uint32_t head = 0, tail = 0, mark = new_mark(&gr->reach_mark, gr->reached, gr->nodes);

	/* breadth first: the shortest path, which the fewest separators read */
	gr->reached[x] = mark;
	gr->via[x] = UINT32_MAX;
	gr->path_stack[tail++] = x;
	while (head < tail) {
		uint32_t v = gr->path_stack[head++];

		if (gr->role[v] == PS_ROLE_INPUT) {
			new_mark(&gr->path_mark, gr->on_path, gr->nodes);
			for (uint32_t w = v; w != UINT32_MAX; w = gr->via[w])
				gr->on_path[w] = gr->path_mark;
			return v;
		}
		for (uint32_t p = gr->first[v]; p < gr->end[v]; p++) {
			uint32_t q = gr->par[p];

			if (gr->reached[q] == mark || q == other ||
			    (gr->kept[q] == gr->kept_stamp &&
			     (other == UINT32_MAX || gr->on_path[q] != gr->path_mark)) ||
			    (gr->role[q] != PS_ROLE_INPUT && !gr->is_bare[q]))
				continue;
			gr->reached[q] = mark;
			gr->via[q] = v;
			gr->path_stack[tail++] = q;
		}
	}
	return UINT32_MAX;
}

/*
 * Term 5 summed over values whose paths share no node: first each input
 * that two or more nodes read, its path itself; then each bare node that
 * two or more nodes read, in topological order, along a path that no
 * value counted before keeps. A value whose chain counts keeps its path.
 */
static uint32_t all_separations(struct graph *gr)
{
	uint32_t total = 0;

	new_mark(&gr->kept_stamp, gr->kept, gr->nodes);
	for (uint32_t v = 0; v < gr->nodes; v++) {
		uint32_t c;

		if (gr->role[v] != PS_ROLE_INPUT || gr->seen[v] != gr->stamp ||
		    gr->use_start[v + 1] - gr->use_start[v] < 2)
			continue;
		new_mark(&gr->path_mark, gr->on_path, gr->nodes);
		gr->on_path[v] = gr->path_mark;
		if ((c = separations(gr, v))) {
			gr->kept[v] = gr->kept_stamp;
			total += c;
		}
	}
	for (uint32_t k = 0; k < gr->nodes; k++) {
		uint32_t x = gr->order[k], end, c;

		if (!gr->is_bare[x] || gr->use_start[x + 1] - gr->use_start[x] < 2 ||
		    (end = value_path(gr, x, UINT32_MAX)) == UINT32_MAX)
			continue;
		if (!(c = separations(gr, x)))
			continue;
		/* x's path, kept; then a second path to another input, kept too
		 * with one I/O more when a separator between x's readers reads
		 * none of its nodes */
		for (uint32_t w = end; w != UINT32_MAX; w = gr->via[w])
			gr->kept[w] = gr->kept_stamp;
		if ((end = value_path(gr, x, end)) != UINT32_MAX && separations(gr, x)) {
			for (uint32_t w = end; w != UINT32_MAX; w = gr->via[w])
				gr->kept[w] = gr->kept_stamp;
			c++;
		}
		total += c;
	}
	return total;
}

/*
 * Reloads that one crowded compute forces (docs/OPTIMAL.md, "The
 * heuristic", term 6). When a bare plain node c with P parents is first
 * computed, at most M - 1 - P other values are red. Each input that c
 * does not read, read by a bare node before c (a bare path leads from it
 * to c) and by one after c (a bare path from c), is red before c's first
 * compute and after it: all but M - 1 - P of them are loaded again after
 * it. The most over every such c, for the first 64 inputs.
 */
static uint32_t crowding(struct graph *gr)
{
	uint32_t best = 0;

	/* anc_mask: the inputs read by v and the bare nodes before it */
	for (uint32_t k = 0; k < gr->nodes; k++) {
		uint32_t v = gr->order[k];
		uint64_t m = 0;

		if (!gr->is_bare[v])
			continue;
		for (uint32_t p = gr->first[v]; p < gr->end[v]; p++)
			if (gr->is_bare[gr->par[p]])
				m |= gr->anc_mask[gr->par[p]];
		gr->anc_mask[v] = m | gr->reads_mask[v];
	}
	/* desc_mask: the same after it; then each v as the crowded compute */
	for (uint32_t k = gr->nodes; k-- > 0;) {
		uint32_t v = gr->order[k], parents = gr->end[v] - gr->first[v];
		uint64_t before = 0, after = 0, live;

		if (!gr->is_bare[v])
			continue;
		for (uint32_t u = gr->use_start[v]; u < gr->use_start[v + 1]; u++)
			if (gr->is_bare[gr->use[u]])
				after |= gr->desc_mask[gr->use[u]];
		gr->desc_mask[v] = after | gr->reads_mask[v];
		for (uint32_t p = gr->first[v]; p < gr->end[v]; p++)
			if (gr->is_bare[gr->par[p]])
				before |= gr->anc_mask[gr->par[p]];
		live = before & after & ~gr->reads_mask[v];
		if (parents + 1 <= gr->M) {
			uint32_t count = (uint32_t)ps_popcount64(live);
			uint32_t room = (uint32_t)(gr->M - 1 - parents);

			if (count > room && count - room > best)
				best = count - room;
		}
	}
	return best;
}

/*
 * The heuristic (docs/OPTIMAL.md, proved there): one save for every
 * output not yet in slow memory complete, and one load for every input,
 * and every sum in slow memory only, that the unfinished outputs still
 * require and that is not red. A node
 * is required when an output that is not done needs it, through plain
 * nodes that hold no pebble and through the in-edges a sum still lacks.
 * Then one load more for each plain node in slow memory only that the
 * walk requires and that claim_path shows needs a load of its own.
 */
static uint32_t heuristic(struct graph *gr, const uint64_t *s)
{
	uint32_t h = 0, top = 0, stopped = 0;

	if (++gr->stamp == 0) {
		memset(gr->seen, 0, gr->nodes * sizeof(uint32_t));
		gr->stamp = 1;
	}
	if (++gr->claim_stamp == 0) {
		memset(gr->claimed, 0, gr->nodes * sizeof(uint32_t));
		memset(gr->reached, 0, gr->nodes * sizeof(uint32_t));
		gr->claim_stamp = 1;
	}
	for (uint32_t k = 0; k < gr->output_count; k++) {
		uint32_t o = gr->outputs[k];

		if (output_done(gr, s, o) || gr->seen[o] == gr->stamp)
			continue;
		h++;
		gr->seen[o] = gr->stamp;
		gr->stack[top++] = o;
	}
	while (top) {
		uint32_t v = gr->stack[--top];

		switch (gr->role[v]) {
		case PS_ROLE_INPUT:
			if (!is_red(gr, s, v)) {
				h++;
				gr->claimed[v] = gr->claim_stamp;
			}
			break;
		case PS_ROLE_PLAIN:
			if (is_red(gr, s, v))
				break;
			if (is_blue(gr, s, v)) {
				gr->stopped[stopped++] = v;
				break;
			}
			for (uint32_t p = gr->first[v]; p < gr->end[v]; p++)
				visit(gr, &top, gr->par[p]);
			break;
		case PS_ROLE_SUM:
			/* only a load makes a sum with a blue pebble red again */
			if (is_blue(gr, s, v) && !is_red(gr, s, v)) {
				h++;
				gr->claimed[v] = gr->claim_stamp;
			}
			for (uint32_t e = gr->first[v]; e < gr->end[v]; e++) {
				if (has_edge(gr, s, e))
					continue;
				for (unsigned q = 0; q < gr->edge_par_count[e]; q++)
					visit(gr, &top, gr->edge_par[2 * e + q]);
			}
			break;
		default:
			break;
		}
	}
	/* the reached marks of each search: claim_stamp * nodes + k would
	 * overflow, so a search's mark is its own counter, reset with them */
	for (uint32_t k = 0; k < stopped; k++) {
		uint32_t u = gr->stopped[k];

		if (gr->claimed[u] == gr->claim_stamp)
			continue;
		if (++gr->reach_mark == 0) {
			memset(gr->reached, 0, gr->nodes * sizeof(uint32_t));
			gr->reach_mark = 1;
		}
		h += claim_path(gr, s, u, gr->reach_mark);
	}
	/* terms 5 and 6 count reloads after a first load: the larger */
	{
		uint32_t chains, crowd;
		bool separator = false;

		for (uint32_t v = 0; v < gr->nodes; v++) {
			gr->is_bare[v] = bare(gr, s, v);
			separator |= gr->is_bare[v] && (uint64_t)(gr->end[v] - gr->first[v]) + 1 == gr->M;
		}
		chains = separator ? all_separations(gr) : 0;
		crowd = gr->M ? crowding(gr) : 0;

		h += chains > crowd ? chains : crowd;
	}
	return h;
}

/* ---- the store: states, their hash table, the open buckets --------------- */

#define NO_STATE UINT32_MAX

/* MV_SPILL: a save and the delete that follows it, one step (R7) */
enum move_code { MV_LOAD, MV_SAVE, MV_DELETE, MV_COMPUTE, MV_MAC, MV_SPILL };

/* A move as stored: its code in the top 3 bits, a node or an in-edge. */
#define MOVE(code, arg) (((uint32_t)(code) << 29) | (arg))
#define MOVE_CODE(m) ((enum move_code)((m) >> 29))
#define MOVE_ARG(m) ((m) & ((UINT32_C(1) << 29) - 1))

struct open_entry {
	uint32_t state, g;
};

struct bucket {
	struct open_entry *e;
	size_t len, cap;
};

struct store {
	uint32_t words;
	uint64_t *bits;      /* [cap * words] */
	uint32_t *parent;    /* [cap] the state it was reached from */
	uint32_t *move;      /* [cap] the move that reached it */
	uint32_t *g;         /* [cap] I/O so far, the least known */
	uint8_t *closed;     /* [cap] expanded with its g */
	uint32_t count, cap;
	uint32_t *slot;      /* [slots] state + 1, 0 empty */
	uint64_t slots;
	/* open states by f, and within an f by h, fewest first: of two
	 * states equally promising the one nearer the end is opened first */
	struct bucket *open; /* [fcap] by f * span + h */
	uint32_t fcap, span;
	uint32_t low;        /* no bucket below it holds an entry */
	uint64_t open_bytes;
	uint64_t limit;      /* bytes, 0 none */
};

/* A state's bytes: bits, parent, move, g, closed; hash slots apart. */
static uint64_t state_bytes(uint32_t words)
{
	return (uint64_t)words * 8 + 4 + 4 + 4 + 1;
}

static uint64_t store_bytes(const struct store *st)
{
	return (uint64_t)st->cap * state_bytes(st->words) + st->slots * 4 +
	       st->open_bytes;
}

static void store_free(struct store *st)
{
	free(st->bits);
	free(st->parent);
	free(st->move);
	free(st->g);
	free(st->closed);
	free(st->slot);
	for (uint32_t f = 0; f < st->fcap; f++)
		free(st->open[f].e);
	free(st->open);
	memset(st, 0, sizeof(*st));
}

static uint64_t hash_state(const uint64_t *s, uint32_t words)
{
	uint64_t h = UINT64_C(0x9e3779b97f4a7c15);

	for (uint32_t w = 0; w < words; w++) {
		h ^= s[w];
		h *= UINT64_C(0xff51afd7ed558ccd);
		h ^= h >> 32;
	}
	return h;
}

static bool fits(const struct store *st, uint64_t more)
{
	return !st->limit || store_bytes(st) + more <= st->limit;
}

/* Room for one more state: PS_OK, or PS_ENOMEM when the arrays cannot
 * grow within the limit or the machine's memory. */
/* realloc in place of *p: PS_OK, or PS_ENOMEM with *p unchanged. */
static int resize(void **p, uint64_t bytes)
{
	void *q = realloc(*p, (size_t)bytes);

	if (!q)
		return PS_ENOMEM;
	*p = q;
	return PS_OK;
}

static uint64_t slots_for(uint64_t cap)
{
	uint64_t slots = 2048;

	/* at most three quarters full */
	while (slots / 4 * 3 < cap)
		slots *= 2;
	return slots;
}

static int store_grow(struct store *st)
{
	uint64_t cap = st->cap ? 2 * (uint64_t)st->cap : 1024;

	if (st->count < st->cap)
		return PS_OK;
	if (cap > NO_STATE - 1)
		cap = NO_STATE - 1;
	/* within the limit: the arrays and the hash table they need */
	while (st->limit && cap > st->cap &&
	       cap * state_bytes(st->words) + slots_for(cap) * 4 + st->open_bytes > st->limit)
		cap = st->cap + (cap - st->cap) / 2;
	if (cap <= st->cap)
		return PS_ENOMEM;
	if (resize((void **)&st->bits, cap * st->words * 8) ||
	    resize((void **)&st->parent, cap * 4) || resize((void **)&st->move, cap * 4) ||
	    resize((void **)&st->g, cap * 4) || resize((void **)&st->closed, cap))
		return PS_ENOMEM;
	st->cap = (uint32_t)cap;
	if (st->slots < slots_for(cap)) {
		uint64_t slots = slots_for(cap);
		uint32_t *slot = calloc(slots, 4);

		if (!slot)
			return PS_ENOMEM;
		for (uint32_t k = 0; k < st->count; k++) {
			uint64_t at = hash_state(st->bits + (uint64_t)k * st->words, st->words) & (slots - 1);

			while (slot[at])
				at = (at + 1) & (slots - 1);
			slot[at] = k + 1;
		}
		free(st->slot);
		st->slot = slot;
		st->slots = slots;
	}
	return PS_OK;
}

/* The state equal to s, or NO_STATE; *at gets the slot to fill. */
static uint32_t store_find(const struct store *st, const uint64_t *s, uint64_t *at)
{
	uint64_t k = hash_state(s, st->words) & (st->slots - 1);

	for (; st->slot[k]; k = (k + 1) & (st->slots - 1)) {
		uint32_t id = st->slot[k] - 1;

		if (!memcmp(st->bits + (uint64_t)id * st->words, s, (size_t)st->words * 8))
			return id;
	}
	*at = k;
	return NO_STATE;
}

static int open_push(struct store *st, uint32_t g, uint32_t h, uint32_t state)
{
	/* within one f, fewest h first; an h beyond the span shares the last
	 * place (it only orders the ties) */
	uint64_t key = ((uint64_t)g + h) * st->span + (h < st->span ? h : st->span - 1);
	uint32_t f;
	struct bucket *b;

	if (key >= UINT32_MAX)
		return PS_ENOMEM;
	f = (uint32_t)key;

	if (f >= st->fcap) {
		uint32_t cap = st->fcap ? st->fcap : 64;
		struct bucket *open;

		while (cap <= f)
			cap *= 2;
		open = realloc(st->open, cap * sizeof(*open));
		if (!open)
			return PS_ENOMEM;
		memset(open + st->fcap, 0, (cap - st->fcap) * sizeof(*open));
		st->open = open;
		st->fcap = cap;
	}
	b = &st->open[f];
	if (f < st->low)
		st->low = f;
	if (b->len == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		struct open_entry *e;

		if (!fits(st, (cap - b->cap) * sizeof(*e)))
			return PS_ENOMEM;
		e = realloc(b->e, cap * sizeof(*e));
		if (!e)
			return PS_ENOMEM;
		st->open_bytes += (cap - b->cap) * sizeof(*e);
		b->e = e;
		b->cap = cap;
	}
	b->e[b->len++] = (struct open_entry){ state, g };
	return PS_OK;
}

/* ---- the search ------------------------------------------------------------ */

struct search {
	struct graph gr;
	struct store st;
	uint64_t M;
	uint32_t delete_from; /* deletes only from this many red pebbles */
	uint64_t upper;       /* best I/O known */
	uint32_t goal;        /* the state that reached it, or NO_STATE */
	uint64_t *scratch;
};

/*
 * Stores the successor s (reached from `from` by move at I/O g): new, or
 * reached again more cheaply. A state whose f cannot beat the best known
 * I/O is dropped: it leads to nothing better than what is known.
 */
static int reach(struct search *sr, const uint64_t *s, uint32_t from,
		 uint32_t move, uint32_t g)
{
	struct store *st = &sr->st;
	uint64_t at = 0;
	uint32_t id = store_find(st, s, &at), h;
	int rc;

	if (id != NO_STATE && st->g[id] <= g)
		return PS_OK;
	h = heuristic(&sr->gr, s);
	if (sr->upper != PS_OPTIMAL_NONE && (uint64_t)g + h >= sr->upper)
		return PS_OK;
	if (id == NO_STATE) {
		if ((rc = store_grow(st)))
			return rc;
		/* the table may have been rebuilt: find the slot again */
		store_find(st, s, &at);
		id = st->count++;
		memcpy(st->bits + (uint64_t)id * st->words, s, (size_t)st->words * 8);
		st->slot[at] = id + 1;
	}
	st->parent[id] = from;
	st->move[id] = move;
	st->g[id] = g;
	st->closed[id] = 0;
	if (h == 0) {
		/* every output is done: a complete sequence */
		sr->upper = g;
		sr->goal = id;
		return PS_OK;
	}
	return open_push(st, g, h, id);
}

/* Applies move to a copy of state and reaches the result. */
static int try_move(struct search *sr, const uint64_t *state, uint32_t from,
		    uint32_t g, enum move_code code, uint32_t arg)
{
	const struct graph *gr = &sr->gr;
	uint64_t *s = sr->scratch;

	memcpy(s, state, (size_t)gr->words * 8);
	switch (code) {
	case MV_LOAD:
	case MV_COMPUTE:
		bit_set(s, arg);
		break;
	case MV_SAVE:
		bit_set(s, gr->nodes + arg);
		break;
	case MV_SPILL:
		bit_set(s, gr->nodes + arg);
		bit_clear(s, arg);
		break;
	case MV_DELETE:
		bit_clear(s, arg);
		/* a sum without a copy in slow memory loses its set */
		if (gr->role[arg] == PS_ROLE_SUM && !is_blue(gr, s, arg))
			ps_bits_fill(s, 2 * (uint64_t)gr->nodes + gr->first[arg],
				     2 * (uint64_t)gr->nodes + gr->end[arg], false);
		break;
	case MV_MAC: {
		uint32_t v = gr->edge_sum[arg];

		bit_set(s, 2 * gr->nodes + arg);
		bit_set(s, v);
		bit_clear(s, gr->nodes + v); /* the copy in slow memory is stale */
		break;
	}
	}
	return reach(sr, s, from, MOVE(code, arg),
		     g + (code == MV_LOAD || code == MV_SAVE || code == MV_SPILL));
}

/*
 * R6: a load of v only toward a use that could follow it: a plain node
 * reading v, not red and not dead, whose every parent is red or in slow
 * memory (loads alone can make them ready), or any sum v feeds or is
 * (macs are not looked at further). docs/OPTIMAL.md proves it keeps an
 * optimal sequence: a load can always wait until just before its next
 * use.
 */
static bool load_wanted(const struct graph *gr, const uint64_t *s, uint32_t v)
{
	if (gr->role[v] == PS_ROLE_SUM)
		return true;
	for (uint32_t k = gr->use_start[v]; k < gr->use_start[v + 1]; k++) {
		uint32_t c = gr->use[k];
		bool can = true;

		if (gr->role[c] != PS_ROLE_PLAIN)
			return true;
		if (is_red(gr, s, c) || gr->dead[c])
			continue;
		for (uint32_t p = gr->first[c]; p < gr->end[c] && can; p++)
			can = is_red(gr, s, gr->par[p]) || is_blue(gr, s, gr->par[p]);
		if (can)
			return true;
	}
	return false;
}

/*
 * Every move of MODEL.md section 2 that is legal in state and that the
 * pruning rules keep (docs/OPTIMAL.md): R1, no save of a node already in
 * slow memory; R2, deletes only with at least delete_from red pebbles;
 * R3, R4 and R5 make one move at once where they apply; and no move
 * gives a dead node a pebble.
 * Pushed in the reverse of the order they are wanted, deletes first.
 */
static int expand(struct search *sr, uint32_t id)
{
	struct graph *gr = &sr->gr;
	const uint64_t *s = sr->st.bits + (uint64_t)id * gr->words;
	uint32_t g = sr->st.g[id], red = red_count(gr, s);
	uint64_t M = sr->M;
	int rc;

	/* the store may move while successors are added: work on a copy */
	memcpy(sr->scratch + gr->words, s, (size_t)gr->words * 8);
	s = sr->scratch + gr->words;
	/* R5: a red node that nothing can use any more is deleted at once */
	mark_dead(gr, s);
	for (uint32_t v = 0; v < gr->nodes; v++)
		if (gr->dead[v] && is_red(gr, s, v))
			return try_move(sr, s, id, g, MV_DELETE, v);
	/* R3: a mac into a sum that is red and not in slow memory, of an
	 * in-edge whose product can be formed now, is made at once */
	for (uint32_t e = 0; e < gr->edges; e++) {
		uint32_t v = gr->edge_sum[e];
		bool can = !has_edge(gr, s, e) && is_red(gr, s, v) && !is_blue(gr, s, v) &&
			   red + gr->edge_transient[e] <= M;

		for (unsigned q = 0; can && q < gr->edge_par_count[e]; q++)
			can = ready(gr, s, gr->edge_par[2 * e + q]);
		if (can)
			return try_move(sr, s, id, g, MV_MAC, e);
	}
	/* R4: an output that is red and complete, with no blue pebble, is
	 * saved at once (outputs are sinks: nothing else reads them) */
	for (uint32_t k = 0; k < gr->output_count; k++) {
		uint32_t o = gr->outputs[k];

		if (is_red(gr, s, o) && !is_blue(gr, s, o) &&
		    (gr->role[o] != PS_ROLE_SUM || complete(gr, s, o)))
			return try_move(sr, s, id, g, MV_SAVE, o);
	}
	if (red >= sr->delete_from)
		for (uint32_t v = 0; v < gr->nodes; v++)
			if (is_red(gr, s, v) && (rc = try_move(sr, s, id, g, MV_DELETE, v)))
				return rc;
	for (uint32_t v = 0; v < gr->nodes && red + 1 <= M; v++)
		if (is_blue(gr, s, v) && !is_red(gr, s, v) && !gr->dead[v] && load_wanted(gr, s, v) &&
		    (rc = try_move(sr, s, id, g, MV_LOAD, v)))
			return rc;
	/* R7: a plain node that is no output is saved only to be deleted at
	 * once, as one step, where R2 allows the delete */
	for (uint32_t v = 0; v < gr->nodes; v++) {
		bool spill = gr->role[v] == PS_ROLE_PLAIN && !gr->is_output[v];

		if (!is_red(gr, s, v) || is_blue(gr, s, v) || (spill && red < sr->delete_from))
			continue;
		if ((rc = try_move(sr, s, id, g, spill ? MV_SPILL : MV_SAVE, v)))
			return rc;
	}
	for (uint32_t v = 0; v < gr->nodes && red + 1 <= M; v++) {
		bool can = gr->role[v] == PS_ROLE_PLAIN && !is_red(gr, s, v) && !gr->dead[v];

		for (uint32_t p = gr->first[v]; can && p < gr->end[v]; p++)
			can = ready(gr, s, gr->par[p]);
		if (can && (rc = try_move(sr, s, id, g, MV_COMPUTE, v)))
			return rc;
	}
	for (uint32_t e = 0; e < gr->edges; e++) {
		uint32_t v = gr->edge_sum[e];
		bool can = !has_edge(gr, s, e) && (is_red(gr, s, v) || !is_blue(gr, s, v)) &&
			   !gr->dead[v];
		uint64_t need = red + gr->edge_transient[e] + !is_red(gr, s, v);

		for (unsigned q = 0; can && q < gr->edge_par_count[e]; q++)
			can = ready(gr, s, gr->edge_par[2 * e + q]);
		if (can && need <= M && (rc = try_move(sr, s, id, g, MV_MAC, e)))
			return rc;
	}
	return PS_OK;
}

/* The moves from the start to state id, in order. */
static int path_of(const struct search *sr, uint32_t id,
		   struct ps_optimal_result *res)
{
	const struct graph *gr = &sr->gr;
	size_t count = 0;

	for (uint32_t k = id; sr->st.parent[k] != NO_STATE; k = sr->st.parent[k])
		count += 1 + (MOVE_CODE(sr->st.move[k]) == MV_SPILL);
	res->moves = calloc(count + 1, sizeof(*res->moves));
	if (!res->moves)
		return PS_ENOMEM;
	res->move_count = count;
	for (uint32_t k = id; sr->st.parent[k] != NO_STATE; k = sr->st.parent[k]) {
		uint32_t m = sr->st.move[k], arg = MOVE_ARG(m);
		struct ps_optimal_move *out = &res->moves[--count];

		switch (MOVE_CODE(m)) {
		case MV_LOAD: out->move = PS_MOVE_LOAD; out->node = arg; break;
		case MV_SAVE: out->move = PS_MOVE_SAVE; out->node = arg; break;
		case MV_DELETE: out->move = PS_MOVE_DELETE; out->node = arg; break;
		case MV_COMPUTE: out->move = PS_MOVE_COMPUTE; out->node = arg; break;
		case MV_MAC: out->move = PS_MOVE_MAC; out->node = gr->edge_product[arg]; break;
		case MV_SPILL:
			out->move = PS_MOVE_DELETE;
			out->node = arg;
			out = &res->moves[--count];
			out->move = PS_MOVE_SAVE;
			out->node = arg;
			break;
		}
	}
	return PS_OK;
}

static void start_state(const struct graph *gr, uint64_t *s)
{
	memset(s, 0, (size_t)gr->words * 8);
	for (uint32_t v = 0; v < gr->nodes; v++)
		if (gr->role[v] == PS_ROLE_INPUT)
			bit_set(s, gr->nodes + v);
}

int ps_optimal_start_bound(const struct ps_dag *dag, uint64_t *bound,
			   struct ps_error *err)
{
	struct graph gr;
	uint64_t *s;
	int rc;

	if ((rc = graph_build(&gr, dag, err)))
		return rc;
	s = calloc(gr.words + 1, 8);
	if (!s) {
		graph_free(&gr);
		return ps_error_set(err, PS_ENOMEM, "out of memory");
	}
	start_state(&gr, s);
	*bound = heuristic(&gr, s);
	free(s);
	graph_free(&gr);
	return PS_OK;
}

/* The smallest key (f * span + h) with an entry still to expand, or
 * UINT64_MAX. */
static uint64_t open_min(struct search *sr)
{
	struct store *st = &sr->st;

	for (uint32_t f = st->low; f < st->fcap; f++) {
		struct bucket *b = &st->open[f];

		/* drop the entries made stale by a cheaper path */
		while (b->len && (st->closed[b->e[b->len - 1].state] ||
				  st->g[b->e[b->len - 1].state] != b->e[b->len - 1].g))
			b->len--;
		if (b->len)
			return st->low = f;
	}
	st->low = st->fcap;
	return UINT64_MAX;
}

static int run_search(struct search *sr, const struct ps_optimal_limits *lim,
		      struct ps_optimal_result *res, double t0)
{
	struct store *st = &sr->st;
	uint64_t f = 0;
	int rc;

	for (;;) {
		struct open_entry top;
		uint64_t key = open_min(sr);

		f = key == UINT64_MAX ? key : key / st->span;
		if (f == UINT64_MAX || (sr->upper != PS_OPTIMAL_NONE && f >= sr->upper)) {
			res->lower = sr->upper;
			res->status = sr->upper == PS_OPTIMAL_NONE ? PS_OPTIMAL_INFEASIBLE
								   : PS_OPTIMAL_FOUND;
			return PS_OK;
		}
		res->lower = f;
		/* an expansion of a DAG of 1024 nodes takes milliseconds */
		if ((res->expanded & 15) == 0 && lim->seconds > 0 &&
		    ps_now_seconds() - t0 > lim->seconds) {
			res->status = PS_OPTIMAL_BRACKETED;
			res->stopped_by = "time limit";
			return PS_OK;
		}
		top = st->open[key].e[--st->open[key].len];
		st->closed[top.state] = 1;
		res->expanded++;
		rc = expand(sr, top.state);
		if (rc == PS_ENOMEM) {
			/* what is open still brackets the optimum */
			key = open_min(sr);
			f = key == UINT64_MAX ? key : key / st->span;
			if (top.state < st->count) {
				/* the state not fully expanded stays open */
				st->closed[top.state] = 0;
				f = ps_min_u64(f, top.g + heuristic(&sr->gr, st->bits + (uint64_t)top.state * st->words));
			}
			res->lower = ps_min_u64(f, sr->upper);
			res->status = res->lower == sr->upper ? PS_OPTIMAL_FOUND : PS_OPTIMAL_BRACKETED;
			res->stopped_by = res->status == PS_OPTIMAL_FOUND ? NULL : "memory limit";
			return PS_OK;
		}
		if (rc)
			return rc;
	}
}

int ps_optimal_search(const struct ps_dag *dag, uint64_t M,
		      const struct ps_optimal_limits *limits,
		      struct ps_optimal_result *res, struct ps_error *err)
{
	struct search sr;
	double t0 = ps_now_seconds();
	uint64_t *s;
	uint32_t h;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&sr, 0, sizeof(sr));
	if ((rc = graph_build(&sr.gr, dag, err)))
		return rc;
	sr.M = M;
	sr.gr.M = M;
	sr.upper = limits->upper;
	sr.goal = NO_STATE;
	/* R2: a delete only where the next move may lack room, that is with
	 * at least M - 1 red pebbles (M when no product takes a slot) */
	sr.delete_from = (uint32_t)ps_min_u64(M > sr.gr.transient ? M - sr.gr.transient : 0,
					      UINT32_MAX);
	sr.st.words = sr.gr.words;
	/* h counts outputs and loads: more than this only orders ties */
	sr.st.span = sr.gr.output_count + sr.gr.nodes + 1;
	sr.st.limit = limits->bytes;
	sr.scratch = calloc(2 * (size_t)sr.gr.words + 1, 8);
	s = calloc(sr.gr.words + 1, 8);
	if (!sr.scratch || !s) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory");
		goto out;
	}
	start_state(&sr.gr, s);
	h = heuristic(&sr.gr, s);
	res->start_bound = h;
	res->lower = h;
	if (store_grow(&sr.st)) {
		rc = ps_error_set(err, PS_ENOMEM, "the memory limit leaves no room for the search");
		goto out;
	}
	{
		uint64_t at = 0;

		store_find(&sr.st, s, &at);
		sr.st.slot[at] = 1;
		memcpy(sr.st.bits, s, (size_t)sr.gr.words * 8);
		sr.st.parent[0] = NO_STATE;
		sr.st.move[0] = 0;
		sr.st.g[0] = 0;
		sr.st.closed[0] = 0;
		sr.st.count = 1;
	}
	if (h == 0) {
		sr.upper = 0;
		sr.goal = 0;
	} else if (sr.upper == PS_OPTIMAL_NONE || h < sr.upper) {
		if (open_push(&sr.st, 0, h, 0)) {
			rc = ps_error_set(err, PS_ENOMEM, "the memory limit leaves no room for the search");
			goto out;
		}
	}
	if ((rc = run_search(&sr, limits, res, t0))) {
		ps_error_set(err, rc, "out of memory");
		goto out;
	}
	res->upper = sr.upper;
	res->upper_is_given = sr.goal == NO_STATE && sr.upper != PS_OPTIMAL_NONE;
	if (res->status == PS_OPTIMAL_INFEASIBLE)
		res->lower = PS_OPTIMAL_NONE;
	if (sr.goal != NO_STATE && (rc = path_of(&sr, sr.goal, res)))
		ps_error_set(err, rc, "out of memory");
out:
	res->states = sr.st.count;
	res->bytes = store_bytes(&sr.st);
	res->seconds = ps_now_seconds() - t0;
	free(s);
	free(sr.scratch);
	store_free(&sr.st);
	graph_free(&sr.gr);
	return rc;
}

void ps_optimal_result_free(struct ps_optimal_result *res)
{
	free(res->moves);
	res->moves = NULL;
	res->move_count = 0;
}

int ps_optimal_check(const struct ps_dag *dag, uint64_t M,
		     const struct ps_optimal_move *moves, size_t count,
		     struct ps_counts *counts, struct ps_error *err)
{
	struct ps_engine e;
	int rc;

	if ((rc = ps_engine_init(&e, dag, M, err)))
		return rc;
	for (size_t k = 0; k < count && !rc; k++) {
		ps_engine_set_position(&e, k + 1);
		rc = ps_engine_apply(&e, moves[k].move, moves[k].node);
	}
	if (!rc)
		rc = ps_engine_finish(&e);
	if (rc == PS_EINVALID) {
		char text[PS_ERROR_MAX], prefix[40];

		snprintf(prefix, sizeof(prefix), "move %llu: ",
			 (unsigned long long)e.violation.position);
		ps_violation_format(&e.violation, prefix, text, sizeof(text));
		ps_error_set(err, PS_EINVALID, "%s", text);
	}
	*counts = e.c;
	ps_engine_free(&e);
	return rc;
}
