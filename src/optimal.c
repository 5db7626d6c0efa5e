/*
 * The exact optimum of small instances by A* (include/pebblesim/optimal.h,
 * docs/OPTIMAL.md). A state is one bitset: a red bit and a blue bit for
 * every node that holds pebbles, then a bit for every in-edge of every
 * sum (in the sum's set or not). States are stored once, in an arena,
 * found again through an open-addressing hash table, and opened in
 * buckets by f = g + h, the last one pushed first within a bucket. The
 * search moves by the game's moves, or, on a DAG without sums, by compute
 * steps: the evictions and loads one compute needs, then the compute.
 */
#include "pebblesim/optimal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "optimal_probe.h"
#include "pebblesim/ops.h"
#include "pebblesim/run.h"

/* The DAG as the search reads it: built once from the DAG seam. */
struct graph {
	uint32_t nodes;       /* ids [0, nodes) hold pebbles */
	uint32_t most_parents; /* the largest count of a plain node's parents */
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
	/* separations(): bitsets of bare_words words: each bare node's bare
	 * descendants along bare paths (desc, [nodes]), the bare nodes
	 * with M - 1 parents, and four sets of the level pass */
	uint32_t bare_words;
	uint64_t *desc, *separators, *set_r, *set_c, *set_n, *set_a;
	uint64_t *late; /* the bare nodes after some separator */
	uint8_t *before_sep; /* [nodes] a bare node before some separator */
	uint32_t *kept, kept_stamp;   /* the paths of values counted */
	uint32_t *owner;              /* the value whose path keeps a node */
	uint32_t *path_nodes, path_len; /* separations(): the value's path,
					 * its input first */
	uint32_t path_eligible;         /* its first nodes that start a chain */
	bool path_blue;                 /* a node of it but the input is blue */
	const uint64_t *state;          /* the state the heuristic reads */
	uint32_t *value_x, *value_end;  /* the values counted, their inputs */
	uint32_t *join_mark, join_stamp; /* joins(): the paths of one join */
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
	free(gr->desc);
	free(gr->separators);
	free(gr->late);
	free(gr->before_sep);
	free(gr->set_r);
	free(gr->set_c);
	free(gr->set_n);
	free(gr->set_a);
	free(gr->kept);
	free(gr->owner);
	free(gr->path_nodes);
	free(gr->value_x);
	free(gr->value_end);
	free(gr->join_mark);
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
	gr->bare_words = S ? (S + 63) / 64 : 1;
	gr->desc = calloc((size_t)S * gr->bare_words + 1, 8);
	gr->separators = calloc(gr->bare_words, 8);
	gr->late = calloc(gr->bare_words, 8);
	gr->before_sep = calloc(S + 1, 1);
	gr->set_r = calloc(gr->bare_words, 8);
	gr->set_c = calloc(gr->bare_words, 8);
	gr->set_n = calloc(gr->bare_words, 8);
	gr->set_a = calloc(gr->bare_words, 8);
	gr->kept = calloc(S + 1, sizeof(uint32_t));
	gr->owner = calloc(S + 1, sizeof(uint32_t));
	gr->path_nodes = calloc(S + 1, sizeof(uint32_t));
	gr->value_x = calloc(S + 1, sizeof(uint32_t));
	gr->value_end = calloc(S + 1, sizeof(uint32_t));
	gr->join_mark = calloc(S + 1, sizeof(uint32_t));
	gr->is_bare = calloc(S + 1, 1);
	gr->pos = calloc(S + 1, sizeof(uint32_t));
	gr->reads_mask = calloc(S + 1, sizeof(uint64_t));
	gr->anc_mask = calloc(S + 1, sizeof(uint64_t));
	gr->desc_mask = calloc(S + 1, sizeof(uint64_t));
	if (!gr->role || !gr->first || !gr->end || !gr->par || !gr->edge_sum || !gr->edge_par ||
	    !gr->edge_par_count || !gr->edge_transient || !gr->edge_product ||
	    !gr->outputs || !gr->stack || !gr->seen || !gr->stopped || !gr->claimed ||
	    !gr->reached || !gr->via || !gr->path_stack || !gr->desc || !gr->separators || !gr->late || !gr->before_sep ||
	    !gr->set_r || !gr->set_c || !gr->set_n || !gr->set_a ||
	    !gr->kept || !gr->owner || !gr->path_nodes || !gr->value_x || !gr->value_end ||
	    !gr->join_mark ||
	    !gr->is_bare || !gr->pos ||
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
			if (role == PS_ROLE_PLAIN && count > gr->most_parents)
				gr->most_parents = (uint32_t)count;
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

/* Each bare node's bare descendants along bare paths, children first. */
static void bare_descendants(struct graph *gr)
{
	uint32_t bw = gr->bare_words;

	for (uint32_t k = gr->nodes; k-- > 0;) {
		uint32_t v = gr->order[k];
		uint64_t *d = gr->desc + (size_t)v * bw;

		if (!gr->is_bare[v])
			continue;
		memset(d, 0, bw * 8);
		for (uint32_t u = gr->use_start[v]; u < gr->use_start[v + 1]; u++) {
			uint32_t c = gr->use[u];
			const uint64_t *e = gr->desc + (size_t)c * bw;

			if (!gr->is_bare[c])
				continue;
			d[c >> 6] |= UINT64_C(1) << (c & 63);
			for (uint32_t w = 0; w < bw; w++)
				d[w] |= e[w];
		}
	}
}

/* out = the bare nodes after some node of from along bare paths. */
static void after(const struct graph *gr, const uint64_t *from, uint64_t *out)
{
	uint32_t bw = gr->bare_words;

	if (bw == 1) {
		uint64_t o = 0;

		for (uint64_t bits = from[0]; bits; bits &= bits - 1)
			o |= gr->desc[ps_lowest_bit64(bits)];
		out[0] = o;
		return;
	}
	memset(out, 0, bw * 8);
	for (uint32_t w = 0; w < bw; w++)
		for (uint64_t bits = from[w]; bits; bits &= bits - 1) {
			const uint64_t *d = gr->desc + (size_t)(w * 64 + ps_lowest_bit64(bits)) * bw;

			for (uint32_t k = 0; k < bw; k++)
				out[k] |= d[k];
		}
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
 * "The heuristic", term 5). The path, path_nodes[0..path_len) from an
 * input j = path_nodes[0] down to the value, is j alone or j and plain
 * nodes that no claim of terms 2 to 4 holds. A plain node c with M - 1
 * parents fills fast memory when it is computed: nothing else is red
 * then. When c reads no node of the path, none is red at c's first
 * compute; when a bare node a after c reads one, one is red at a's first
 * compute, so a node of the path is loaded between the two (the input
 * at the top cannot be computed). Along a chain a0 -> c1 -> a1 -> ... ->
 * cm -> am of bare nodes linked by bare paths, those loads are m
 * distinct ones, and none is the input's first load when j is red
 * before c1's first compute: a0 reads j, or a node of the path from
 * which every node up to j holds no pebble (path_nodes[0..eligible)),
 * or j is red now (`now`: the chain starts at the present, with no a0).
 * The longest such chain, level by level: the separators after the
 * readers of the last level, then the readers after them.
 */
static uint32_t separations(struct graph *gr, bool now)
{
	uint32_t bw = gr->bare_words, m = 0;
	uint64_t *readers = gr->set_r, *seps = gr->set_c, *level = gr->set_a, *next = gr->set_n;
	bool found = false;

	memset(readers, 0, bw * 8);
	memset(level, 0, bw * 8);
	memcpy(seps, gr->separators, bw * 8);
	/* the bare readers of the path's nodes, which are no separators of
	 * it; those of the eligible nodes start a chain */
	for (uint32_t j = 0; j < gr->path_len; j++) {
		uint32_t q = gr->path_nodes[j];

		for (uint32_t k = gr->use_start[q]; k < gr->use_start[q + 1]; k++) {
			uint32_t c = gr->use[k];
			uint64_t bit = UINT64_C(1) << (c & 63);

			seps[c >> 6] &= ~bit;
			if (gr->is_bare[c]) {
				readers[c >> 6] |= bit;
				if (j < gr->path_eligible)
					level[c >> 6] |= bit;
			}
		}
	}
	if (now)
		memcpy(next, seps, bw * 8);
	else
		after(gr, level, next);
	for (uint32_t w = 0; w < bw; w++)
		found |= (next[w] &= seps[w]) != 0;
	while (found) {
		/* next: the separators of level m + 1 */
		after(gr, next, level);
		found = false;
		for (uint32_t w = 0; w < bw; w++)
			found |= (level[w] &= readers[w]) != 0;
		if (!found)
			break;
		m++;
		after(gr, level, next);
		found = false;
		for (uint32_t w = 0; w < bw; w++)
			found |= (next[w] &= seps[w]) != 0;
	}
	return m;
}

/* An input no load of which terms 2 to 4 count (red now, or neither
 * required nor on a claim of term 4): a chain on a path up to it needs
 * no reader before its first separator. */
static bool free_input(const struct graph *gr, uint32_t j)
{
	return gr->claimed[j] != gr->claim_stamp;
}

/* A free input, or one read by a bare node before some separator: a
 * chain on a path up to it can start. */
static bool good_input(const struct graph *gr, uint32_t j)
{
	if (free_input(gr, j))
		return true;
	for (uint32_t k = gr->use_start[j]; k < gr->use_start[j + 1]; k++)
		if (gr->before_sep[gr->use[k]])
			return true;
	return false;
}

/* A plain node a value's path may hold: no output, and no node whose
 * load the walk or term 4 counts (those are blue and not red). */
static bool path_node(const struct graph *gr, uint32_t q)
{
	return gr->role[q] == PS_ROLE_PLAIN && !gr->is_output[q] &&
	       gr->claimed[q] != gr->claim_stamp;
}

/*
 * The path of term 5 for x: x, then plain nodes that path_node()
 * accepts, each a parent of the one before, up to an input; none of
 * them kept by a value counted before, and not ending
 * at the input `other`. With `other` an input (the end of x's first
 * path), the second path may share the nodes that x's first path keeps.
 * The shortest such path to an input that good_input() accepts, else the
 * shortest to any input. Lists it in path_nodes from the input down,
 * sets path_eligible and path_blue, and returns its input, or
 * UINT32_MAX when there is none.
 */
static uint32_t value_path(struct graph *gr, uint32_t x, uint32_t other)
{
	uint32_t head = 0, tail = 0, mark = new_mark(&gr->reach_mark, gr->reached, gr->nodes);
	uint32_t end = UINT32_MAX;

	/* breadth first: the shortest path, which the fewest separators read */
	gr->reached[x] = mark;
	gr->via[x] = UINT32_MAX;
	gr->path_stack[tail++] = x;
	while (head < tail) {
		uint32_t v = gr->path_stack[head++];

		if (gr->role[v] == PS_ROLE_INPUT) {
			if (good_input(gr, v)) {
				end = v;
				break;
			}
			if (end == UINT32_MAX)
				end = v;
			continue;
		}
		for (uint32_t p = gr->first[v]; p < gr->end[v]; p++) {
			uint32_t q = gr->par[p];

			if (gr->reached[q] == mark || q == other ||
			    (gr->kept[q] == gr->kept_stamp &&
			     (other == UINT32_MAX || gr->owner[q] != x)) ||
			    (gr->role[q] != PS_ROLE_INPUT && !path_node(gr, q)))
				continue;
			gr->reached[q] = mark;
			gr->via[q] = v;
			gr->path_stack[tail++] = q;
		}
	}
	if (end == UINT32_MAX)
		return end;
	gr->path_len = 0;
	gr->path_eligible = 0;
	gr->path_blue = false;
	for (uint32_t w = end; w != UINT32_MAX; w = gr->via[w]) {
		bool pebble = is_red(gr, gr->state, w) || is_blue(gr, gr->state, w);

		/* from the input down, the nodes with no pebble */
		if (gr->path_eligible == gr->path_len && (w == end || !pebble))
			gr->path_eligible++;
		if (w != end && is_blue(gr, gr->state, w))
			gr->path_blue = true;
		gr->path_nodes[gr->path_len++] = w;
	}
	return end;
}

/* Keeps the nodes of the path just found for the value x. */
static void keep_path(struct graph *gr, uint32_t x)
{
	for (uint32_t j = 0; j < gr->path_len; j++) {
		gr->kept[gr->path_nodes[j]] = gr->kept_stamp;
		gr->owner[gr->path_nodes[j]] = x;
	}
}

/* Whether a bare node after some separator reads x. */
static bool late_reader(const struct graph *gr, uint32_t x)
{
	for (uint32_t k = gr->use_start[x]; k < gr->use_start[x + 1]; k++) {
		uint32_t c = gr->use[k];

		if (gr->is_bare[c] && (gr->late[c >> 6] >> (c & 63) & 1))
			return true;
	}
	return false;
}

/*
 * Term 5 summed over values whose paths share no node: first each input
 * that a bare node reads, its path itself; then each bare node, and each
 * plain node in fast memory only, in topological order, along a path
 * that no value counted before keeps, its chains running through the
 * readers of any node of the path. A value whose chain counts keeps its
 * path. Last, for each value so counted, a second path to another input,
 * kept too with one I/O more when it has a chain of its own (docs/
 * OPTIMAL.md: either a node of the two paths is saved, or the first
 * path's loads are all of its input and the second's of another).
 */
static uint32_t all_separations(struct graph *gr)
{
	uint32_t total = 0, values = 0;

	new_mark(&gr->kept_stamp, gr->kept, gr->nodes);
	for (uint32_t v = 0; v < gr->nodes; v++) {
		uint32_t c;

		if (gr->role[v] != PS_ROLE_INPUT || gr->seen[v] != gr->stamp)
			continue;
		gr->path_nodes[0] = v;
		gr->path_len = 1;
		gr->path_eligible = 1;
		if ((c = separations(gr, free_input(gr, v)))) {
			keep_path(gr, v);
			total += c;
		}
	}
	for (uint32_t k = 0; k < gr->nodes; k++) {
		uint32_t x = gr->order[k], end, c;

		if (!path_node(gr, x) || gr->kept[x] == gr->kept_stamp || !late_reader(gr, x) ||
		    (end = value_path(gr, x, UINT32_MAX)) == UINT32_MAX)
			continue;
		if (!(c = separations(gr, free_input(gr, end))))
			continue;
		keep_path(gr, x);
		total += c;
		/* a second path needs the first to hold no value in slow memory */
		if (!gr->path_blue) {
			gr->value_x[values] = x;
			gr->value_end[values++] = end;
		}
	}
	for (uint32_t k = 0; k < values; k++) {
		uint32_t x = gr->value_x[k], end;

		if ((end = value_path(gr, x, gr->value_end[k])) == UINT32_MAX || gr->path_blue ||
		    !separations(gr, free_input(gr, end)))
			continue;
		keep_path(gr, x);
		total++;
	}
	return total;
}

/* Whether u is a member of the join v (a bare parent of the bare v)
 * other than w. */
static bool other_member(const struct graph *gr, uint32_t v, uint32_t w, uint32_t u)
{
	return u != w && gr->is_bare[u] && reads(gr, v, u);
}

/*
 * The path of term 7 for the member w of the join v: w, then plain nodes
 * that path_node() accepts, each a parent of the one before, up to an
 * input; none kept by a value or a join counted before, none on the path
 * of another member of v (join_mark), none another member or a parent of
 * one; and either its input is free or no node of it but the input holds
 * a pebble. Marks it in join_mark: true, or false when there is none.
 */
static bool join_path(struct graph *gr, uint32_t v, uint32_t w)
{
	uint32_t head = 0, tail = 0, mark = new_mark(&gr->reach_mark, gr->reached, gr->nodes);

	gr->reached[w] = mark;
	gr->via[w] = UINT32_MAX;
	gr->path_stack[tail++] = w;
	while (head < tail) {
		uint32_t u = gr->path_stack[head++];

		if (gr->role[u] == PS_ROLE_INPUT) {
			bool eligible = free_input(gr, u);

			/* else its first load comes before w's first compute */
			if (!eligible) {
				eligible = true;
				for (uint32_t x = gr->via[u]; x != UINT32_MAX; x = gr->via[x])
					eligible &= !is_red(gr, gr->state, x) && !is_blue(gr, gr->state, x);
			}
			if (!eligible)
				continue;
			for (uint32_t x = u; x != UINT32_MAX; x = gr->via[x])
				gr->join_mark[x] = gr->join_stamp;
			return true;
		}
		for (uint32_t p = gr->first[u]; p < gr->end[u]; p++) {
			uint32_t q = gr->par[p];
			bool shut = gr->reached[q] == mark || gr->kept[q] == gr->kept_stamp ||
				    gr->join_mark[q] == gr->join_stamp ||
				    (gr->role[q] != PS_ROLE_INPUT && !path_node(gr, q));

			for (uint32_t e = gr->first[v]; e < gr->end[v] && !shut; e++)
				shut = other_member(gr, v, w, gr->par[e]) &&
				       (q == gr->par[e] || reads(gr, gr->par[e], q));
			if (shut)
				continue;
			gr->reached[q] = mark;
			gr->via[q] = u;
			gr->path_stack[tail++] = q;
		}
	}
	return false;
}

/*
 * Reloads that a crowded join forces (docs/OPTIMAL.md, "The heuristic",
 * term 7). A bare node v reads its members, its bare parents, all red at
 * its first compute. When the last of them, u, is first computed, only
 * its parents, itself and M - 1 - |par(u)| other values are red; every
 * other member is red again at v's compute. A member w with a path to an
 * input that holds no node red for free then (no other member, no parent
 * of one), disjoint from the paths of the other members, keeps a node of
 * it red only in one of those slots: the others load a node of their
 * paths in between. The least over u of the members with a path, but u,
 * less u's free slots; summed over joins whose paths share no node with
 * each other or with term 5's, in topological order.
 */
static uint32_t joins(struct graph *gr)
{
	uint32_t total = 0;

	for (uint32_t k = 0; k < gr->nodes; k++) {
		uint32_t v = gr->order[k], members = 0, fewest = UINT32_MAX, paths = 0;
		uint64_t least = UINT64_MAX;

		if (!gr->is_bare[v])
			continue;
		for (uint32_t e = gr->first[v]; e < gr->end[v]; e++) {
			uint32_t m = gr->par[e], count = gr->end[m] - gr->first[m];

			if (gr->is_bare[m]) {
				members++;
				fewest = fewest < count ? fewest : count;
			}
		}
		/* k members and the fewest parents f: at most k + f - M loads */
		if (members < 2 || (uint64_t)members + fewest <= gr->M)
			continue;
		new_mark(&gr->join_stamp, gr->join_mark, gr->nodes);
		for (uint32_t e = gr->first[v]; e < gr->end[v]; e++) {
			uint32_t w = gr->par[e];
			bool feeds = false;

			if (!gr->is_bare[w] || gr->kept[w] == gr->kept_stamp)
				continue;
			/* a parent of another member is red when that one is computed */
			for (uint32_t f = gr->first[v]; f < gr->end[v] && !feeds; f++)
				feeds = other_member(gr, v, w, gr->par[f]) && reads(gr, gr->par[f], w);
			if (!feeds && join_path(gr, v, w))
				paths++;
		}
		for (uint32_t e = gr->first[v]; e < gr->end[v]; e++) {
			uint32_t u = gr->par[e];
			uint64_t others, slots, loads;

			if (!gr->is_bare[u])
				continue;
			others = paths - (gr->join_mark[u] == gr->join_stamp);
			/* a member that fits in no fast memory: no state completes */
			slots = (uint64_t)(gr->end[u] - gr->first[u]) + 1 <= gr->M
					? gr->M - 1 - (gr->end[u] - gr->first[u]) : 0;
			loads = others > slots ? others - slots : 0;
			least = least < loads ? least : loads;
		}
		if (!least)
			continue;
		/* the paths kept, the join their owner */
		for (uint32_t q = 0; q < gr->nodes; q++)
			if (gr->join_mark[q] == gr->join_stamp) {
				gr->kept[q] = gr->kept_stamp;
				gr->owner[q] = v;
			}
		total += (uint32_t)least;
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

	gr->state = s;
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
	/* terms 5 and 7, and 6, count reloads after a first load: the larger */
	{
		uint32_t chains, crowd;
		bool separator = false;

		memset(gr->separators, 0, gr->bare_words * 8);
		for (uint32_t v = 0; v < gr->nodes; v++) {
			gr->is_bare[v] = bare(gr, s, v);
			if (gr->is_bare[v] && (uint64_t)(gr->end[v] - gr->first[v]) + 1 == gr->M) {
				gr->separators[v >> 6] |= UINT64_C(1) << (v & 63);
				separator = true;
			}
		}
		if (separator) {
			bare_descendants(gr);
			after(gr, gr->separators, gr->late);
			for (uint32_t v = 0; v < gr->nodes; v++) {
				const uint64_t *d = gr->desc + (size_t)v * gr->bare_words;
				bool before = false;

				for (uint32_t w = 0; gr->is_bare[v] && w < gr->bare_words; w++)
					before |= (d[w] & gr->separators[w]) != 0;
				gr->before_sep[v] = before;
			}
		}
		chains = separator ? all_separations(gr) + joins(gr) : 0;
		crowd = gr->M ? crowding(gr) : 0;

		h += chains > crowd ? chains : crowd;
	}
	return h;
}

/* ---- the store: states, their hash table, the open buckets --------------- */

#define NO_STATE UINT32_MAX

/* expand_steps(): the time limit passed before every successor was
 * made (no PS_ code has this value) */
#define TIME_UP (-1000)

/* MV_SPILL: a save and the delete that follows it, one step (R7);
 * MV_STEP: on a DAG without sums, a compute step: the evictions and
 * loads that a compute needs, the compute, R4's save and R5's deletes */
enum move_code { MV_LOAD, MV_SAVE, MV_DELETE, MV_COMPUTE, MV_MAC, MV_SPILL, MV_STEP };

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
		const uint64_t *t = st->bits + (uint64_t)id * st->words;
		uint32_t w = 0;

		/* states are a few words: a loop, not memcmp's call */
		while (w < st->words && t[w] == s[w])
			w++;
		if (w == st->words)
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
	bool steps;           /* no sums: the search moves by compute steps */
	double t0, seconds;   /* the time limit, checked within a step's
			       * successors too: they may be many */
	uint32_t since_check;
	uint32_t *cand, *pick, *spillable; /* expand_steps()'s evictions */
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
	case MV_STEP: /* expand_steps() makes its own */
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

/*
 * Whether a spill of the red node v can pay (docs/OPTIMAL.md, R8): v is
 * not in slow memory, and it does not feed just one node that is
 * not dead, that one in slow memory already: then every later load of v
 * can be a load of that node instead, held while v would have been,
 * which takes no more slots and costs no more, and the spill is saved.
 */
static bool spill_useful(const struct graph *gr, const uint64_t *s, uint32_t v)
{
	uint32_t live = 0, child = 0;

	if (is_blue(gr, s, v))
		return false;
	for (uint32_t k = gr->use_start[v]; k < gr->use_start[v + 1]; k++)
		if (!gr->dead[gr->use[k]]) {
			live++;
			child = gr->use[k];
		}
	return !(live == 1 && is_blue(gr, s, child));
}

/* The evictions of one compute step: e of the ne red nodes that the
 * compute does not read, chosen as pick[0..e), in lexicographic order. */
static bool next_eviction(uint32_t *pick, uint32_t e, uint32_t ne)
{
	uint32_t k = e;

	while (k > 0 && pick[k - 1] == ne - e + k - 1)
		k--;
	if (k == 0)
		return false;
	pick[k - 1]++;
	for (uint32_t j = k; j < e; j++)
		pick[j] = pick[j - 1] + 1;
	return true;
}

/*
 * One successor of the compute step of c from state s (id, at I/O g):
 * the e nodes of cand[] that pick[] names evicted, those of spillable[]
 * that mask selects spilled, c's missing parents loaded (missing of
 * them), c computed, and an output saved with what is then dead deleted.
 */
static int step_successor(struct search *sr, const uint64_t *s, uint32_t id, uint32_t g,
			  uint32_t c, uint32_t e, uint32_t missing, uint32_t nb, uint64_t mask)
{
	struct graph *gr = &sr->gr;
	uint64_t *t = sr->scratch + 2 * (size_t)gr->words;
	uint32_t cost = missing;
	int rc;

	memcpy(t, s, (size_t)gr->words * 8);
	for (uint32_t k = 0; k < e; k++)
		bit_clear(t, sr->cand[sr->pick[k]]);
	for (uint32_t k = 0; k < nb; k++)
		if (mask >> k & 1) {
			bit_set(t, gr->nodes + sr->spillable[k]);
			cost++;
		}
	for (uint32_t p = gr->first[c]; p < gr->end[c]; p++)
		bit_set(t, gr->par[p]);
	bit_set(t, c);
	if (!gr->is_output[c])
		return reach(sr, t, id, MOVE(MV_STEP, c), g + cost);
	/* R4, then R5 on what the save leaves dead; s's dead marks back */
	bit_set(t, gr->nodes + c);
	mark_dead(gr, t);
	for (uint32_t v = 0; v < gr->nodes; v++)
		if (gr->dead[v])
			bit_clear(t, v);
	rc = reach(sr, t, id, MOVE(MV_STEP, c), g + cost + 1);
	mark_dead(gr, s);
	return rc;
}

/*
 * The successors of state id on a DAG without sums (docs/OPTIMAL.md,
 * "Compute steps"): for each plain node c that is not red and not dead,
 * whose parents are red or in slow memory, the least evictions that make
 * room for its missing parents and itself, each a delete or, for a value
 * not in slow memory whose spill can pay (R8), a spill; the loads of the
 * missing parents; the compute of c; and, when c is an output, its save
 * and the deletes of what is then dead. Every choice of evictions and
 * spills is a successor.
 */
static int expand_steps(struct search *sr, uint32_t id)
{
	struct graph *gr = &sr->gr;
	uint32_t g = sr->st.g[id], red;
	uint64_t *s = sr->scratch + gr->words;
	int rc;

	memcpy(s, sr->st.bits + (uint64_t)id * gr->words, (size_t)gr->words * 8);
	red = red_count(gr, s);
	mark_dead(gr, s);
	for (uint32_t c = 0; c < gr->nodes; c++) {
		uint32_t missing = 0, parents = gr->end[c] - gr->first[c], e, ne = 0;
		bool can = gr->role[c] == PS_ROLE_PLAIN && !is_red(gr, s, c) && !gr->dead[c] &&
			   (uint64_t)parents + 1 <= sr->M;

		for (uint32_t p = gr->first[c]; can && p < gr->end[c]; p++)
			if (!is_red(gr, s, gr->par[p])) {
				can = is_blue(gr, s, gr->par[p]);
				missing++;
			}
		if (!can)
			continue;
		e = red + missing + 1 > sr->M ? (uint32_t)(red + missing + 1 - sr->M) : 0;
		/* parents + 1 <= M leaves at least e red nodes that c does not read */
		for (uint32_t v = 0; v < gr->nodes; v++)
			if (is_red(gr, s, v) && !reads(gr, c, v))
				sr->cand[ne++] = v;
		for (uint32_t k = 0; k < e; k++)
			sr->pick[k] = k;
		do {
			uint32_t nb = 0;

			for (uint32_t k = 0; k < e; k++)
				if (spill_useful(gr, s, sr->cand[sr->pick[k]]))
					sr->spillable[nb++] = sr->cand[sr->pick[k]];
			for (uint64_t mask = 0; mask < (UINT64_C(1) << nb); mask++) {
				if ((rc = step_successor(sr, s, id, g, c, e, missing, nb, mask)))
					return rc;
				if (++sr->since_check == 4096) {
					sr->since_check = 0;
					if (sr->seconds > 0 && ps_now_seconds() - sr->t0 > sr->seconds)
						return TIME_UP;
				}
			}
		} while (next_eviction(sr->pick, e, ne));
	}
	return PS_OK;
}

/* Writes one elementary move at out[*n] when out is not NULL; counts it. */
static void put_move(struct ps_optimal_move *out, size_t *n, enum ps_move move, uint32_t v)
{
	if (out) {
		out[*n].move = move;
		out[*n].node = v;
	}
	(*n)++;
}

/*
 * The elementary moves of the compute step that leads from state a to
 * state b by computing c, in the order the engine plays them: the spills
 * and deletes of the evicted values, the loads of c's missing parents,
 * the compute, c's save when it is an output, and the deletes of what is
 * then dead. Writes them to out when it is not NULL; returns how many.
 */
static size_t step_moves(const struct graph *gr, const uint64_t *a, const uint64_t *b,
			 uint32_t c, struct ps_optimal_move *out)
{
	size_t n = 0;

	for (uint32_t v = 0; v < gr->nodes; v++)
		if (is_red(gr, a, v) && !is_red(gr, b, v) && !reads(gr, c, v)) {
			if (!is_blue(gr, a, v) && is_blue(gr, b, v))
				put_move(out, &n, PS_MOVE_SAVE, v);
			put_move(out, &n, PS_MOVE_DELETE, v);
		}
	for (uint32_t p = gr->first[c]; p < gr->end[c]; p++)
		if (!is_red(gr, a, gr->par[p]))
			put_move(out, &n, PS_MOVE_LOAD, gr->par[p]);
	put_move(out, &n, PS_MOVE_COMPUTE, c);
	if (!is_blue(gr, a, c) && is_blue(gr, b, c))
		put_move(out, &n, PS_MOVE_SAVE, c);
	for (uint32_t p = gr->first[c]; p < gr->end[c]; p++)
		if (!is_red(gr, b, gr->par[p]))
			put_move(out, &n, PS_MOVE_DELETE, gr->par[p]);
	if (!is_red(gr, b, c))
		put_move(out, &n, PS_MOVE_DELETE, c);
	return n;
}

/* The moves from the start to state id, in order. */
static int path_of(const struct search *sr, uint32_t id,
		   struct ps_optimal_result *res)
{
	const struct graph *gr = &sr->gr;
	size_t count = 0;

	for (uint32_t k = id; sr->st.parent[k] != NO_STATE; k = sr->st.parent[k])
		count += MOVE_CODE(sr->st.move[k]) == MV_STEP
				 ? step_moves(gr, sr->st.bits + (uint64_t)sr->st.parent[k] * gr->words,
					       sr->st.bits + (uint64_t)k * gr->words,
					       MOVE_ARG(sr->st.move[k]), NULL)
				 : 1 + (MOVE_CODE(sr->st.move[k]) == MV_SPILL);
	res->moves = calloc(count + 1, sizeof(*res->moves));
	if (!res->moves)
		return PS_ENOMEM;
	res->move_count = count;
	for (uint32_t k = id; sr->st.parent[k] != NO_STATE; k = sr->st.parent[k]) {
		uint32_t m = sr->st.move[k], arg = MOVE_ARG(m);
		struct ps_optimal_move *out;

		if (MOVE_CODE(m) == MV_STEP) {
			const uint64_t *a = sr->st.bits + (uint64_t)sr->st.parent[k] * gr->words;
			const uint64_t *b = sr->st.bits + (uint64_t)k * gr->words;

			count -= step_moves(gr, a, b, arg, NULL);
			step_moves(gr, a, b, arg, res->moves + count);
			continue;
		}
		out = &res->moves[--count];

		switch (MOVE_CODE(m)) {
		case MV_LOAD: out->move = PS_MOVE_LOAD; out->node = arg; break;
		case MV_SAVE: out->move = PS_MOVE_SAVE; out->node = arg; break;
		case MV_DELETE: out->move = PS_MOVE_DELETE; out->node = arg; break;
		case MV_COMPUTE: out->move = PS_MOVE_COMPUTE; out->node = arg; break;
		case MV_MAC: out->move = PS_MOVE_MAC; out->node = gr->edge_product[arg]; break;
		case MV_STEP: /* written above */
			break;
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

struct ps_optimal_probe {
	struct graph gr;
	uint64_t *s;
};

int ps_optimal_probe_new(const struct ps_dag *dag, uint64_t M,
			 struct ps_optimal_probe **out, struct ps_error *err)
{
	struct ps_optimal_probe *p = calloc(1, sizeof(*p));
	int rc;

	*out = NULL;
	if (!p)
		return ps_error_set(err, PS_ENOMEM, "out of memory");
	if ((rc = graph_build(&p->gr, dag, err))) {
		free(p);
		return rc;
	}
	p->gr.M = M;
	p->s = calloc(p->gr.words + 1, 8);
	if (!p->s) {
		ps_optimal_probe_free(p);
		return ps_error_set(err, PS_ENOMEM, "out of memory");
	}
	*out = p;
	return PS_OK;
}

uint64_t ps_optimal_probe_h(struct ps_optimal_probe *p, const uint8_t *red,
			    const uint8_t *blue, const uint8_t *edge)
{
	struct graph *gr = &p->gr;

	memset(p->s, 0, (size_t)gr->words * 8);
	for (uint32_t v = 0; v < gr->nodes; v++) {
		if (red[v])
			bit_set(p->s, v);
		if (blue[v])
			bit_set(p->s, gr->nodes + v);
	}
	for (uint32_t e = 0; edge && e < gr->edges; e++)
		if (edge[e])
			bit_set(p->s, 2 * gr->nodes + e);
	return heuristic(gr, p->s);
}

void ps_optimal_probe_free(struct ps_optimal_probe *p)
{
	if (!p)
		return;
	free(p->s);
	graph_free(&p->gr);
	free(p);
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
		rc = sr->steps ? expand_steps(sr, top.state) : expand(sr, top.state);
		if (rc == PS_ENOMEM || rc == TIME_UP) {
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
			res->stopped_by = res->status == PS_OPTIMAL_FOUND ? NULL
					  : rc == TIME_UP ? "time limit" : "memory limit";
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
	sr.scratch = calloc(3 * (size_t)sr.gr.words + 1, 8);
	s = calloc(sr.gr.words + 1, 8);
	/* a DAG without sums is searched by compute steps, whose spills, at
	 * most one more than a node's parents, fit a mask */
	sr.steps = sr.gr.edges == 0 && sr.gr.most_parents < 63;
	sr.t0 = t0;
	sr.seconds = limits->seconds;
	sr.cand = calloc(sr.gr.nodes + 1, sizeof(uint32_t));
	sr.pick = calloc(sr.gr.nodes + 1, sizeof(uint32_t));
	sr.spillable = calloc(sr.gr.nodes + 1, sizeof(uint32_t));
	if (!sr.scratch || !s || !sr.cand || !sr.pick || !sr.spillable) {
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
	free(sr.cand);
	free(sr.pick);
	free(sr.spillable);
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
