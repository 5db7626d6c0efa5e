/*
 * Explicit DAGs backed by igraph (include/pebblesim/explicit.h).
 */
#include "pebblesim/explicit.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pebblesim/limits.h"
#include "pebblesim/monomial.h"

#include "explicit_module.h"

/* The memory limit of the process that loaded the module (explicit_init):
 * a sweep's worker divides it with the others. */
static int (*memory_fits)(uint64_t bytes, const char *what,
			  struct ps_error *err) = ps_memory_fits;

/* igraph's last error, kept by our handler for the messages we print. */
static char igraph_reason[256];

static void keep_reason(const char *reason, const char *file, int line,
			igraph_error_t code)
{
	(void)file;
	(void)line;
	/* igraph's parsers may give no reason: the code's text alone, then */
	if (reason && reason[0])
		snprintf(igraph_reason, sizeof(igraph_reason), "%s (%s)", reason,
			 igraph_strerror(code));
	else
		snprintf(igraph_reason, sizeof(igraph_reason), "%s",
			 igraph_strerror(code));
	/* the handler frees igraph's temporaries, as igraph asks */
	IGRAPH_FINALLY_FREE();
}

void ps_igraph_setup(void)
{
	igraph_set_attribute_table(&igraph_cattribute_table);
	igraph_set_error_handler(keep_reason);
	igraph_set_warning_handler(igraph_warning_handler_ignore);
}

static int igraph_failed(struct ps_error *err, const char *what)
{
	return ps_error_set(err, PS_EINPUT, "%s: %s", what,
			    igraph_reason[0] ? igraph_reason : "igraph failed");
}

void ps_explicit_free(struct ps_explicit *x)
{
	if (x->labels)
		for (uint64_t v = 0; v < x->vertices; v++)
			free(x->labels[v]);
	free(x->labels);
	free(x->role);
	free(x->in_start);
	free(x->in_from);
	free(x->slot);
	free(x->edge_base);
	free(x->sum_of);
	free(x->outputs);
	free(x->prod_slot);
	if (x->dag.ops)
		igraph_destroy(&x->graph);
	memset(x, 0, sizeof(*x));
}

static const struct ps_explicit *as_x(const struct ps_dag *dag)
{
	return (const struct ps_explicit *)dag;
}

static enum ps_role x_role(const struct ps_dag *dag, ps_node v)
{
	const struct ps_explicit *x = as_x(dag);

	return v < x->vertices ? (enum ps_role)x->role[v] : PS_ROLE_PRODUCT;
}

static uint64_t x_parent_count(const struct ps_dag *dag, ps_node v)
{
	const struct ps_explicit *x = as_x(dag);

	return v < x->vertices ? x->in_start[v + 1] - x->in_start[v] : 1;
}

static void x_product(const struct ps_dag *dag, ps_node p,
		      struct ps_product *out)
{
	const struct ps_explicit *x = as_x(dag);
	uint64_t e = p - x->vertices, slot = x->prod_slot[e];
	uint64_t v = x->sum_of[slot], k = e - x->edge_base[slot];

	out->id = p;
	out->parent[0] = x->in_from[x->in_start[v] + k];
	out->parent_is_sum[0] = x->role[out->parent[0]] == PS_ROLE_SUM;
	out->parent_count = 1;
	out->sum = v;
	out->edge = k;
	out->in_degree = x->in_start[v + 1] - x->in_start[v];
	out->transient = 0;
}

static ps_node x_parent(const struct ps_dag *dag, ps_node v, uint64_t k)
{
	const struct ps_explicit *x = as_x(dag);

	if (v >= x->vertices) {
		struct ps_product pr;

		x_product(dag, v, &pr);
		return pr.parent[0];
	}
	if (x->role[v] == PS_ROLE_SUM)
		return x->vertices + x->edge_base[x->slot[v]] + k;
	return x->in_from[x->in_start[v] + k];
}

static void x_sum(const struct ps_dag *dag, ps_node v, struct ps_sum *out)
{
	const struct ps_explicit *x = as_x(dag);

	out->in_degree = x->in_start[v + 1] - x->in_start[v];
}

static ps_node x_output(const struct ps_dag *dag, uint64_t k)
{
	return as_x(dag)->outputs[k];
}

static void x_describe(const struct ps_dag *dag, ps_node v, char *buf,
		       size_t len)
{
	const struct ps_explicit *x = as_x(dag);

	if (v >= x->dag.node_count) {
		snprintf(buf, len, "node %llu", (unsigned long long)v);
	} else if (v >= x->vertices) {
		struct ps_product pr;

		x_product(dag, v, &pr);
		snprintf(buf, len, "edge %llu->%llu", (unsigned long long)pr.parent[0],
			 (unsigned long long)pr.sum);
	} else if (x->labels && x->labels[v]) {
		snprintf(buf, len, "%s", x->labels[v]);
	} else {
		snprintf(buf, len, "v%llu", (unsigned long long)v);
	}
}

static const struct ps_dag_ops explicit_ops = {
	.name = "explicit",
	.role = x_role,
	.parent_count = x_parent_count,
	.parent = x_parent,
	.product = x_product,
	.sum = x_sum,
	.output = x_output,
	.describe = x_describe,
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The role attribute of v, or the default; -1 for an unknown name. */
static int read_role(const igraph_t *g, bool has_role, uint64_t v,
		     uint64_t in_degree)
{
	static const struct {
		const char *name;
		enum ps_role role;
	} names[] = {
		{ "input", PS_ROLE_INPUT },
		{ "sum", PS_ROLE_SUM },
		{ "plain", PS_ROLE_PLAIN },
		{ "product", PS_ROLE_PLAIN },
	};
	const char *name = has_role ? VAS(g, "role", (igraph_integer_t)v) : "";

	if (!name || !name[0])
		return in_degree ? PS_ROLE_PLAIN : PS_ROLE_INPUT;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (!strcmp(name, names[k].name))
			return (int)names[k].role;
	return -1;
}

/*
 * Whether the vertex attribute name exists, after checking through
 * igraph's attribute table that it holds strings: VAS() on a numeric or
 * boolean attribute reads the wrong type.
 */
static int string_attribute(const igraph_t *graph, const char *name,
			    bool *has, struct ps_error *err)
{
	igraph_strvector_t names;
	igraph_vector_int_t types;
	int rc = PS_OK;

	*has = igraph_cattribute_has_attr(graph, IGRAPH_ATTRIBUTE_VERTEX, name);
	if (!*has)
		return PS_OK;
	if (igraph_strvector_init(&names, 0))
		return ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
	if (igraph_vector_int_init(&types, 0)) {
		igraph_strvector_destroy(&names);
		return ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
	}
	if (igraph_cattribute_list(graph, NULL, NULL, &names, &types, NULL, NULL)) {
		rc = igraph_failed(err, "cannot list the attributes");
	} else {
		for (igraph_integer_t k = 0; k < igraph_strvector_size(&names); k++)
			if (!strcmp(igraph_strvector_get(&names, k), name) &&
			    VECTOR(types)[k] != IGRAPH_ATTRIBUTE_STRING)
				rc = ps_error_set(err, PS_EINPUT,
						  "the \"%s\" attribute must be a string",
						  name);
	}
	igraph_vector_int_destroy(&types);
	igraph_strvector_destroy(&names);
	return rc;
}

int ps_explicit_from_igraph(struct ps_explicit *x, igraph_t *graph,
			    struct ps_error *err)
{
	uint64_t V = (uint64_t)igraph_vcount(graph), E = (uint64_t)igraph_ecount(graph);
	igraph_bool_t is_dag = false, loops = true, multiple = true;
	bool has_role, has_label;
	uint64_t *fill = NULL, *out_degree = NULL;
	int rc = PS_OK;

	memset(x, 0, sizeof(*x));
	if (V + E > PS_EXPLICIT_MAX_ELEMENTS) {
		igraph_destroy(graph);
		return ps_error_set(err, PS_ENOMEM,
				    "the graph has %llu vertices and %llu edges; the limit is %llu in all",
				    (unsigned long long)V, (unsigned long long)E,
				    (unsigned long long)PS_EXPLICIT_MAX_ELEMENTS);
	}
	x->graph = *graph;
	x->dag.ops = &explicit_ops; /* from here ps_explicit_free destroys it */
	if (!igraph_is_directed(graph)) {
		rc = ps_error_set(err, PS_EINPUT, "the graph is undirected: a DAG needs directed edges");
		goto fail;
	}
	if (igraph_is_dag(graph, &is_dag) || igraph_has_loop(graph, &loops) ||
	    igraph_has_multiple(graph, &multiple)) {
		rc = igraph_failed(err, "cannot analyse the graph");
		goto fail;
	}
	if (loops || !is_dag) {
		rc = ps_error_set(err, PS_EINPUT, "the graph has a cycle: it is not a DAG");
		goto fail;
	}
	if (multiple) {
		rc = ps_error_set(err, PS_EINPUT,
				  "the graph has an edge twice: a DAG file names each edge once");
		goto fail;
	}
	x->vertices = V;
	x->edges = E;
	x->role = malloc(V ? V : 1);
	x->in_start = calloc(V + 1, sizeof(uint64_t));
	x->in_from = malloc((E ? E : 1) * sizeof(uint64_t));
	x->slot = malloc((V ? V : 1) * sizeof(uint64_t));
	fill = calloc(V + 1, sizeof(uint64_t));
	out_degree = calloc(V + 1, sizeof(uint64_t));
	if (!x->role || !x->in_start || !x->in_from || !x->slot || !fill || !out_degree)
		goto oom;
	/* in-edges by target, sources increasing: a sum's products follow them */
	for (uint64_t e = 0; e < E; e++) {
		igraph_integer_t from, to;

		igraph_edge(graph, (igraph_integer_t)e, &from, &to);
		x->in_start[to + 1]++;
		out_degree[from]++;
	}
	for (uint64_t v = 0; v < V; v++)
		x->in_start[v + 1] += x->in_start[v];
	for (uint64_t e = 0; e < E; e++) {
		igraph_integer_t from, to;

		igraph_edge(graph, (igraph_integer_t)e, &from, &to);
		x->in_from[x->in_start[to] + fill[to]++] = (uint64_t)from;
	}
	if ((rc = string_attribute(graph, "role", &has_role, err)) ||
	    (rc = string_attribute(graph, "label", &has_label, err)))
		goto fail;
	for (uint64_t v = 0; v < V; v++) {
		uint64_t deg = x->in_start[v + 1] - x->in_start[v];
		int role = read_role(graph, has_role, v, deg);

		qsort(x->in_from + x->in_start[v], deg, sizeof(uint64_t), cmp_u64);
		if (role < 0) {
			rc = ps_error_set(err, PS_EINPUT,
					  "vertex %llu: unknown role '%s' (input, sum, plain)",
					  (unsigned long long)v,
					  VAS(graph, "role", (igraph_integer_t)v));
			goto fail;
		}
		if (role == PS_ROLE_INPUT && deg) {
			rc = ps_error_set(err, PS_EINPUT,
					  "vertex %llu is an input but has %llu parents",
					  (unsigned long long)v, (unsigned long long)deg);
			goto fail;
		}
		if (role == PS_ROLE_SUM && !deg) {
			rc = ps_error_set(err, PS_EINPUT,
					  "vertex %llu is a sum without in-edges",
					  (unsigned long long)v);
			goto fail;
		}
		x->role[v] = (uint8_t)role;
		x->slot[v] = UINT64_MAX;
		if (role == PS_ROLE_SUM) {
			x->slot[v] = x->sums++;
			x->products += deg;
		} else if (role == PS_ROLE_PLAIN) {
			x->max_plain_in = ps_max_u64(x->max_plain_in, deg);
		} else {
			x->inputs++;
		}
		x->dag.output_count += out_degree[v] == 0;
	}
	x->edge_base = malloc((x->sums + 1) * sizeof(uint64_t));
	x->sum_of = malloc((x->sums + 1) * sizeof(uint64_t));
	x->prod_slot = malloc((x->products + 1) * sizeof(uint64_t));
	x->outputs = malloc((x->dag.output_count + 1) * sizeof(uint64_t));
	if (!x->edge_base || !x->sum_of || !x->prod_slot || !x->outputs)
		goto oom;
	for (uint64_t v = 0, base = 0, k = 0; v < V; v++) {
		if (x->slot[v] != UINT64_MAX) {
			uint64_t s = x->slot[v], deg = x->in_start[v + 1] - x->in_start[v];

			x->edge_base[s] = base;
			x->sum_of[s] = v;
			for (uint64_t q = 0; q < deg; q++)
				x->prod_slot[base + q] = s;
			base += deg;
		}
		if (out_degree[v] == 0)
			x->outputs[k++] = v;
	}
	if (has_label) {
		x->labels = calloc(V ? V : 1, sizeof(char *));
		if (!x->labels)
			goto oom;
		for (uint64_t v = 0; v < V; v++) {
			const char *label = VAS(graph, "label", (igraph_integer_t)v);

			if (label && label[0] && !(x->labels[v] = strdup(label)))
				goto oom;
		}
	}
	x->dag.node_count = V + x->products;
	x->dag.state_count = V;
	x->dag.sum_count = x->sums;
	x->dag.edge_count = E;
	free(fill);
	free(out_degree);
	return PS_OK;
oom:
	rc = ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
fail:
	free(fill);
	free(out_degree);
	ps_explicit_free(x);
	return rc;
}

static bool too_many(uint64_t vertices, uint64_t edges)
{
	return vertices > PS_EXPLICIT_MAX_ELEMENTS || edges > PS_EXPLICIT_MAX_ELEMENTS ||
	       vertices + edges > PS_EXPLICIT_MAX_ELEMENTS;
}

static int size_refused(struct ps_error *err, const char *name,
			uint64_t vertices, uint64_t edges)
{
	return ps_error_set(err, PS_ENOMEM,
			    "DAG '%s' has more than %llu vertices and edges in all (%llu vertices, %llu edges so far): the limit is %llu",
			    name, (unsigned long long)PS_EXPLICIT_MAX_ELEMENTS,
			    (unsigned long long)vertices, (unsigned long long)edges,
			    (unsigned long long)PS_EXPLICIT_MAX_ELEMENTS);
}

/*
 * An edge list (docs/DAG_FILES.md): one pair of vertex ids a line, decimal
 * integers separated by white space; the vertices are 0 .. the largest id.
 * Comments are those format detection skips (ps_explicit_sniff): '#', '%'
 * and '//' to the end of the line, and '/' '*' ... '*' '/', on any line
 * and after a pair. Read here rather than by igraph so that the size limit
 * holds before anything is allocated for the graph: a single pair
 * "0 2000000000" names two billion vertices.
 */
static bool edgelist_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static int edgelist_line_refused(struct ps_error *err, const char *name,
				 uint64_t line, unsigned ids)
{
	return ps_error_set(err, PS_EINPUT,
			    "%s:%llu: an edge-list line holds exactly one pair of vertex ids (from to); this one holds %s",
			    name, (unsigned long long)line,
			    ids == 1 ? "one id" : "more than two");
}

static int read_edgelist(FILE *f, const char *name, igraph_t *graph,
			 struct ps_error *err)
{
	igraph_vector_int_t edges;
	uint64_t vertices = 0, count = 0, line = 1;
	unsigned on_line = 0; /* ids on this line so far */
	int c = getc_unlocked(f), rc = PS_OK;
	igraph_error_t irc;

	if (igraph_vector_int_init(&edges, 0))
		return ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
	for (;;) {
		uint64_t id = 0;

		while (edgelist_space(c))
			c = getc_unlocked(f);
		if (c == '/') {
			c = getc_unlocked(f);
			if (c == '*') {
				uint64_t opened = line;
				int prev = 0;

				/* a block comment: its newlines end lines */
				for (c = getc_unlocked(f); c != EOF && !(prev == '*' && c == '/');
				     c = getc_unlocked(f)) {
					if (c == '\n') {
						if (on_line == 1) {
							rc = edgelist_line_refused(err, name, line, 1);
							goto out;
						}
						on_line = 0;
						line++;
					}
					prev = c;
				}
				if (c == EOF) {
					rc = ps_error_set(err, PS_EINPUT,
							  "%s:%llu: a comment opened by /* is not closed",
							  name, (unsigned long long)opened);
					goto out;
				}
				c = getc_unlocked(f);
				continue;
			}
			if (c != '/') {
				rc = ps_error_set(err, PS_EINPUT,
						  "%s:%llu: an edge list holds vertex ids, integers >= 0 (found '/')",
						  name, (unsigned long long)line);
				goto out;
			}
			c = '#'; /* a // comment: to the end of the line */
		}
		if (c == '#' || c == '%') {
			while (c != EOF && c != '\n')
				c = getc_unlocked(f);
		}
		if (c == '\n' || c == EOF) {
			if (on_line == 1) {
				rc = edgelist_line_refused(err, name, line, 1);
				goto out;
			}
			if (c == EOF)
				break;
			on_line = 0;
			line++;
			c = getc_unlocked(f);
			continue;
		}
		if (c < '0' || c > '9') {
			rc = ps_error_set(err, PS_EINPUT,
					  "%s:%llu: an edge list holds vertex ids, integers >= 0 (found '%c')",
					  name, (unsigned long long)line,
					  c >= 32 && c < 127 ? c : '?');
			goto out;
		}
		for (; c >= '0' && c <= '9'; c = getc_unlocked(f)) {
			id = id * 10 + (uint64_t)(c - '0');
			if (id >= PS_EXPLICIT_MAX_ELEMENTS) {
				rc = ps_error_set(err, PS_ENOMEM,
						  "%s:%llu: vertex id beyond the limit of %llu vertices and edges in all",
						  name, (unsigned long long)line,
						  (unsigned long long)PS_EXPLICIT_MAX_ELEMENTS);
				goto out;
			}
		}
		if (c != EOF && c != '\n' && c != '#' && c != '%' && c != '/' &&
		    !edgelist_space(c)) {
			rc = ps_error_set(err, PS_EINPUT,
					  "%s:%llu: an edge list holds vertex ids, integers >= 0 (found '%c')",
					  name, (unsigned long long)line,
					  c >= 32 && c < 127 ? c : '?');
			goto out;
		}
		if (++on_line > 2) {
			rc = edgelist_line_refused(err, name, line, 3);
			goto out;
		}
		vertices = ps_max_u64(vertices, id + 1);
		count++;
		if (too_many(vertices, count / 2)) {
			rc = size_refused(err, name, vertices, count / 2);
			goto out;
		}
		if (igraph_vector_int_push_back(&edges, (igraph_integer_t)id)) {
			rc = ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
			goto out;
		}
	}
	if (ferror(f)) {
		rc = ps_error_set(err, PS_EIO, "cannot read DAG '%s': %s", name,
				  strerror(errno));
		goto out;
	}
	irc = igraph_create(graph, &edges, (igraph_integer_t)vertices, IGRAPH_DIRECTED);
	if (irc) {
		char what[PS_ERROR_MAX / 2];

		snprintf(what, sizeof(what), "cannot read DAG '%s' as an edge list", name);
		rc = igraph_failed(err, what);
	}
out:
	igraph_vector_int_destroy(&edges);
	return rc;
}

/* ---- HyperdagDB (.hdag) and Matrix Market (.mtx): line by line ------- */

/* Longest line of either format, in bytes. */
#define TEXT_LINE_MAX 4096
/* Most fields read from one line; more are counted, not kept. */
#define TEXT_FIELDS 8

struct text_reader {
	FILE *f;
	const char *name;
	uint64_t line;           /* of the line last read */
	char buf[TEXT_LINE_MAX + 2];
	char *field[TEXT_FIELDS];
	unsigned fields;         /* on the line, up to TEXT_FIELDS + 1 */
	char comment;            /* the character that opens a comment line */
};

/*
 * The next line that is neither blank nor a comment (its first character,
 * after white space, r->comment), split at white space: 1, or 0 at the
 * end of the file, or a negative status with err set.
 */
static int text_next(struct text_reader *r, struct ps_error *err)
{
	for (;;) {
		size_t len = 0;
		int c;
		char *p;

		while ((c = getc_unlocked(r->f)) != EOF && c != '\n') {
			if (len > TEXT_LINE_MAX)
				continue;
			if (c == '\0') {
				ps_error_set(err, PS_EINPUT, "%s:%llu: a NUL byte in a text file",
					     r->name, (unsigned long long)r->line + 1);
				return PS_EINPUT;
			}
			r->buf[len++] = (char)c;
		}
		if (ferror(r->f)) {
			ps_error_set(err, PS_EIO, "cannot read DAG '%s': %s", r->name,
				     strerror(errno));
			return PS_EIO;
		}
		if (c == EOF && len == 0)
			return 0;
		r->line++;
		if (len > TEXT_LINE_MAX) {
			ps_error_set(err, PS_EINPUT, "%s:%llu: a line longer than %d bytes",
				     r->name, (unsigned long long)r->line, TEXT_LINE_MAX);
			return PS_EINPUT;
		}
		r->buf[len] = '\0';
		r->fields = 0;
		for (p = r->buf; *p;) {
			while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v')
				*p++ = '\0';
			if (!*p)
				break;
			if (r->fields == 0 && *p == r->comment)
				break;
			if (r->fields < TEXT_FIELDS)
				r->field[r->fields] = p;
			if (r->fields <= TEXT_FIELDS)
				r->fields++;
			while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\f' && *p != '\v')
				p++;
		}
		if (r->fields)
			return 1;
		if (c == EOF)
			return 0;
	}
}

/* Field k of the line as a decimal integer in [lo, hi]: true, or false. */
static bool text_integer(const struct text_reader *r, unsigned k, int64_t lo,
			 int64_t hi, int64_t *out)
{
	const char *p = r->field[k];
	bool negative = *p == '-';
	int64_t v = 0;

	if (*p == '-' || *p == '+')
		p++;
	if (!*p)
		return false;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	v = negative ? -v : v;
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static int text_refused(const struct text_reader *r, struct ps_error *err,
			const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int text_refused(const struct text_reader *r, struct ps_error *err,
			const char *fmt, ...)
{
	char why[PS_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return ps_error_set(err, PS_EINPUT, "%s:%llu: %s", r->name,
			    (unsigned long long)r->line, why);
}

/* The next line that holds data, which the file must have: 1, or a
 * negative status with err set. */
static int text_expect(struct text_reader *r, const char *what,
		       struct ps_error *err)
{
	int got = text_next(r, err);

	if (got == 0) {
		ps_error_set(err, PS_EINPUT, "%s:%llu: the file ends before %s",
			     r->name, (unsigned long long)r->line, what);
		return PS_EINPUT;
	}
	return got;
}

/* An edge read from a line, kept with it until repeats are sought. */
struct text_edge {
	uint64_t from, to, line;
};

static int cmp_text_edge(const void *a, const void *b)
{
	const struct text_edge *x = a, *y = b;

	if (x->from != y->from)
		return (x->from > y->from) - (x->from < y->from);
	if (x->to != y->to)
		return (x->to > y->to) - (x->to < y->to);
	return (x->line > y->line) - (x->line < y->line);
}

/*
 * The graph of vertices and edges[count], refusing an edge named twice
 * with the lines of both ("line 9 repeats line 4"): what a line-numbered
 * format says where igraph would say only that some edge repeats.
 */
static int text_graph(const char *name, uint64_t vertices,
		      struct text_edge *edges, uint64_t count, const char *what,
		      igraph_t *graph, struct ps_error *err)
{
	igraph_vector_int_t list;
	int rc = PS_OK;

	qsort(edges, count, sizeof(*edges), cmp_text_edge);
	for (uint64_t k = 1; k < count; k++)
		if (edges[k].from == edges[k - 1].from && edges[k].to == edges[k - 1].to)
			return ps_error_set(err, PS_EINPUT,
					    "%s:%llu: %s %llu -> %llu again (line %llu): a DAG names each edge once",
					    name, (unsigned long long)edges[k].line, what,
					    (unsigned long long)edges[k].from,
					    (unsigned long long)edges[k].to,
					    (unsigned long long)edges[k - 1].line);
	/* back in the file's order: igraph's topological sort follows it */
	for (uint64_t k = 0; k < count; k++) {
		uint64_t t = edges[k].from;

		edges[k].from = edges[k].line;
		edges[k].line = t;
	}
	qsort(edges, count, sizeof(*edges), cmp_text_edge);
	if (igraph_vector_int_init(&list, (igraph_integer_t)(2 * count)))
		return ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
	for (uint64_t k = 0; k < count; k++) {
		VECTOR(list)[2 * k] = (igraph_integer_t)edges[k].line;
		VECTOR(list)[2 * k + 1] = (igraph_integer_t)edges[k].to;
	}
	if (igraph_create(graph, &list, (igraph_integer_t)vertices, IGRAPH_DIRECTED)) {
		char why[PS_ERROR_MAX / 2];

		snprintf(why, sizeof(why), "cannot build the graph of DAG '%s'", name);
		rc = igraph_failed(err, why);
	}
	igraph_vector_int_destroy(&list);
	return rc;
}

/* Room for the edges of a file before they are read: within the size
 * limit (checked by the caller) and the memory limit. */
static int text_edges(const char *name, uint64_t count,
		      struct text_edge **edges, struct ps_error *err)
{
	char what[PS_ERROR_MAX / 2];
	int rc;

	*edges = NULL;
	snprintf(what, sizeof(what), "DAG '%s': its %llu edges", name,
		 (unsigned long long)count);
	if ((rc = memory_fits((count + 1) * (sizeof(struct text_edge) + 64), what, err)))
		return rc;
	*edges = malloc((count + 1) * sizeof(**edges));
	return *edges ? PS_OK : ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
}

/* The smallest and largest of a weight, and where it first is not 1. */
struct weight_range {
	int64_t lo, hi;
	uint64_t line, id; /* the first entry whose weight is not 1, or 0 */
	int64_t value;     /* its weight */
	bool seen;
};

static void weight_seen(struct weight_range *w, int64_t value, uint64_t line,
			uint64_t id)
{
	if (!w->line && value != 1) {
		w->line = line;
		w->id = id;
		w->value = value;
	}
	if (!w->seen || w->lo > value)
		w->lo = value;
	if (!w->seen || w->hi < value)
		w->hi = value;
	w->seen = true;
}

/*
 * HyperdagDB, as OneStopParallel writes it (docs/DAG_FILES.md): '%'
 * comment lines; a header "H N P" (hyperedges, vertices, pins); H lines
 * "hyperedge [comm [mem]]"; N lines "vertex [work [type]]"; P lines
 * "hyperedge vertex". The first pin of a hyperedge is its source, each
 * later one a child: an edge source -> child. The game is unit-weight: a
 * comm or mem weight other than 1 is refused unless ignore_weights; work
 * weights and types are read and not used (the game counts I/O alone).
 */
static int read_hdag(FILE *f, const char *name, bool ignore_weights,
		     igraph_t *graph, char *note, size_t note_len,
		     struct ps_error *err)
{
	struct text_reader r = { .f = f, .name = name, .comment = '%' };
	struct weight_range comm = { 0 }, mem = { 0 }, work = { 0 };
	int64_t H, N, P, v;
	uint64_t *source = NULL, count = 0;
	uint8_t *seen_edge = NULL, *seen_vertex = NULL;
	struct text_edge *edges = NULL;
	uint64_t types = 0;
	int got, rc = PS_OK;

	if ((got = text_expect(&r, "the header (hyperedges, vertices, pins)", err)) < 0)
		return got;
	if (r.fields != 3 ||
	    !text_integer(&r, 0, 0, INT64_MAX, &H) || !text_integer(&r, 1, 1, INT64_MAX, &N) ||
	    !text_integer(&r, 2, 0, INT64_MAX, &P))
		return text_refused(&r, err,
				    "a HyperdagDB header holds three counts: hyperedges >= 0, vertices >= 1, pins >= 0");
	if (too_many((uint64_t)N, (uint64_t)P) || (uint64_t)H > PS_EXPLICIT_MAX_ELEMENTS)
		return ps_error_set(err, PS_ENOMEM,
				    "DAG '%s' declares %lld hyperedges, %lld vertices and %lld pins: the limit is %llu vertices and edges in all",
				    name, (long long)H, (long long)N, (long long)P,
				    (unsigned long long)PS_EXPLICIT_MAX_ELEMENTS);
	{
		char what[PS_ERROR_MAX / 2];

		snprintf(what, sizeof(what), "DAG '%s': the tables of its %lld hyperedges and %lld vertices",
			 name, (long long)H, (long long)N);
		if ((rc = memory_fits(9 * ((uint64_t)H + 1) + (uint64_t)N + 1, what, err)))
			return rc;
	}
	source = malloc(((uint64_t)H + 1) * sizeof(uint64_t));
	seen_edge = calloc((uint64_t)H + 1, 1);
	seen_vertex = calloc((uint64_t)N + 1, 1);
	if ((rc = text_edges(name, (uint64_t)P, &edges, err)))
		goto out;
	if (!source || !seen_edge || !seen_vertex) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
		goto out;
	}
	for (int64_t k = 0; k < H; k++) {
		int64_t c = 1, m = 1;

		if ((got = text_expect(&r, "the last hyperedge", err)) < 0) {
			rc = got;
			goto out;
		}
		if (r.fields > 3 || !text_integer(&r, 0, 0, H - 1, &v) ||
		    (r.fields > 1 && !text_integer(&r, 1, 0, INT64_MAX, &c)) ||
		    (r.fields > 2 && !text_integer(&r, 2, 0, INT64_MAX, &m))) {
			rc = text_refused(&r, err,
					  "a hyperedge line holds its id (0 to %lld) and, optionally, its comm and mem weights (integers >= 0)",
					  (long long)H - 1);
			goto out;
		}
		if (seen_edge[v]) {
			rc = text_refused(&r, err, "hyperedge %lld is declared twice", (long long)v);
			goto out;
		}
		seen_edge[v] = 1;
		source[v] = UINT64_MAX;
		weight_seen(&comm, c, r.line, (uint64_t)v);
		weight_seen(&mem, m, r.line, (uint64_t)v);
	}
	for (int64_t k = 0; k < N; k++) {
		int64_t w = 1, t = 0;

		if ((got = text_expect(&r, "the last vertex", err)) < 0) {
			rc = got;
			goto out;
		}
		if (r.fields > 3 || !text_integer(&r, 0, 0, N - 1, &v) ||
		    (r.fields > 1 && !text_integer(&r, 1, 0, INT64_MAX, &w)) ||
		    (r.fields > 2 && !text_integer(&r, 2, 0, INT64_MAX, &t))) {
			rc = text_refused(&r, err,
					  "a vertex line holds its id (0 to %lld) and, optionally, its work weight and type (integers >= 0)",
					  (long long)N - 1);
			goto out;
		}
		if (seen_vertex[v]) {
			rc = text_refused(&r, err, "vertex %lld is declared twice", (long long)v);
			goto out;
		}
		seen_vertex[v] = 1;
		weight_seen(&work, w, r.line, (uint64_t)v);
		types |= t ? 2 : 1;
	}
	for (int64_t k = 0; k < P; k++) {
		int64_t h;

		if ((got = text_expect(&r, "the last pin", err)) < 0) {
			rc = got;
			goto out;
		}
		if (r.fields != 2 || !text_integer(&r, 0, 0, H - 1, &h) ||
		    !text_integer(&r, 1, 0, N - 1, &v)) {
			rc = text_refused(&r, err,
					  "a pin line holds a hyperedge (0 to %lld) and a vertex (0 to %lld)",
					  (long long)H - 1, (long long)N - 1);
			goto out;
		}
		if (source[h] == UINT64_MAX) {
			source[h] = (uint64_t)v; /* the first pin: the source */
			continue;
		}
		if (source[h] == (uint64_t)v) {
			rc = text_refused(&r, err,
					  "vertex %lld is the source of hyperedge %lld and also its child: a loop",
					  (long long)v, (long long)h);
			goto out;
		}
		edges[count++] = (struct text_edge){ source[h], (uint64_t)v, r.line };
	}
	if ((got = text_next(&r, err)) != 0) {
		rc = got < 0 ? got
			     : text_refused(&r, err,
					    "data after the %lld pins the header declares",
					    (long long)P);
		goto out;
	}
	if ((comm.line || mem.line) && !ignore_weights) {
		struct weight_range *w = comm.line ? &comm : &mem;

		rc = ps_error_set(err, PS_EINPUT,
				  "%s:%llu: hyperedge %llu has %s weight %lld: pebblesim's game is unit-weight (a value takes one slot, a load or save costs one); give --ignore-weights to read every weight as 1",
				  name, (unsigned long long)w->line, (unsigned long long)w->id,
				  comm.line ? "comm" : "mem", (long long)w->value);
		goto out;
	}
	{
		size_t used = (size_t)snprintf(note, note_len,
					       "HyperdagDB: no roles, sources are inputs and every other vertex plain");

		if (work.line && used < note_len)
			used += (size_t)snprintf(note + used, note_len - used,
						 "; work weights %lld to %lld%s not used (the game counts I/O only)",
						 (long long)work.lo, (long long)work.hi,
						 types & 2 ? " and vertex types" : "");
		else if ((types & 2) && used < note_len)
			used += (size_t)snprintf(note + used, note_len - used,
						 "; vertex types not used");
		if ((comm.line || mem.line) && used < note_len)
			snprintf(note + used, note_len - used,
				 "; comm weights %lld to %lld and mem weights %lld to %lld read as 1 (--ignore-weights)",
				 (long long)comm.lo, (long long)comm.hi,
				 (long long)mem.lo, (long long)mem.hi);
	}
	rc = text_graph(name, (uint64_t)N, edges, count, "the pins make the edge", graph, err);
out:
	free(source);
	free(seen_edge);
	free(seen_vertex);
	free(edges);
	return rc;
}

static bool text_word_is(const char *field, const char *word)
{
	return !strcasecmp(field, word);
}

/*
 * Matrix Market coordinate, lower triangular, read as OneStopParallel
 * reads it: the triangular-solve DAG, a vertex per row, an edge j -> i
 * for each nonzero A[i,j] with j < i (1-based in the file, 0-based as
 * vertices); diagonal entries give no edge; the values are not used.
 */
static int read_mtx(FILE *f, const char *name, igraph_t *graph, char *note,
		    size_t note_len, struct ps_error *err)
{
	struct text_reader r = { .f = f, .name = name, .comment = '%' };
	struct text_edge *edges = NULL;
	int64_t rows, cols, entries;
	uint64_t count = 0;
	unsigned values;
	int c, got, rc = PS_OK;

	/* the banner, before the comments are skipped */
	c = getc_unlocked(f);
	if (c == EOF || ungetc(c, f) == EOF || c != '%')
		return ps_error_set(err, PS_EINPUT,
				    "%s:1: a Matrix Market file starts with its banner, %%%%MatrixMarket matrix coordinate FIELD SYMMETRY",
				    name);
	r.comment = '\0';
	if ((got = text_expect(&r, "the banner", err)) < 0)
		return got;
	r.comment = '%';
	if (r.fields != 5 || !text_word_is(r.field[0], "%%MatrixMarket") ||
	    !text_word_is(r.field[1], "matrix"))
		return text_refused(&r, err,
				    "a Matrix Market file starts with its banner, %%%%MatrixMarket matrix coordinate FIELD SYMMETRY");
	if (!text_word_is(r.field[2], "coordinate"))
		return text_refused(&r, err,
				    "the matrix is stored as '%.40s': pebblesim reads the coordinate format, a nonzero a line",
				    r.field[2]);
	if (text_word_is(r.field[3], "pattern"))
		values = 0;
	else if (text_word_is(r.field[3], "real") || text_word_is(r.field[3], "integer"))
		values = 1;
	else if (text_word_is(r.field[3], "complex"))
		values = 2;
	else
		return text_refused(&r, err,
				    "unknown field '%.40s': real, integer, complex or pattern",
				    r.field[3]);
	if (!text_word_is(r.field[4], "general") && !text_word_is(r.field[4], "symmetric") &&
	    !text_word_is(r.field[4], "skew-symmetric") && !text_word_is(r.field[4], "hermitian"))
		return text_refused(&r, err,
				    "unknown symmetry '%.40s': general, symmetric, skew-symmetric or hermitian",
				    r.field[4]);
	if ((got = text_expect(&r, "the size line (rows, columns, nonzeros)", err)) < 0)
		return got;
	if (r.fields != 3 || !text_integer(&r, 0, 1, INT64_MAX, &rows) ||
	    !text_integer(&r, 1, 1, INT64_MAX, &cols) ||
	    !text_integer(&r, 2, 0, INT64_MAX, &entries))
		return text_refused(&r, err,
				    "the size line holds rows >= 1, columns >= 1 and nonzeros >= 0");
	if (rows != cols)
		return text_refused(&r, err,
				    "the matrix is %lld x %lld: a triangular solve needs a square one",
				    (long long)rows, (long long)cols);
	if (too_many((uint64_t)rows, (uint64_t)entries))
		return ps_error_set(err, PS_ENOMEM,
				    "DAG '%s' declares %lld rows and %lld nonzeros: the limit is %llu vertices and edges in all",
				    name, (long long)rows, (long long)entries,
				    (unsigned long long)PS_EXPLICIT_MAX_ELEMENTS);
	if ((rc = text_edges(name, (uint64_t)entries, &edges, err)))
		return rc;
	for (int64_t k = 0; k < entries; k++) {
		int64_t i, j;

		if ((got = text_expect(&r, "the last nonzero the size line declares", err)) < 0) {
			rc = got;
			goto out;
		}
		if (r.fields != 2 + values || !text_integer(&r, 0, 1, rows, &i) ||
		    !text_integer(&r, 1, 1, cols, &j)) {
			rc = text_refused(&r, err,
					  "a nonzero's line holds its row and column (1 to %lld)%s",
					  (long long)rows,
					  values == 0 ? " and no value (pattern)" :
					  values == 1 ? " and one value" : " and two values (complex)");
			goto out;
		}
		for (unsigned q = 0; q < values; q++) {
			char *end;

			errno = 0;
			(void)strtod(r.field[2 + q], &end);
			if (*end || end == r.field[2 + q]) {
				rc = text_refused(&r, err, "the value '%.40s' is not a number",
						  r.field[2 + q]);
				goto out;
			}
		}
		if (j > i) {
			rc = text_refused(&r, err,
					  "A[%lld,%lld] lies above the diagonal: a triangular-solve DAG is read from a lower-triangular matrix",
					  (long long)i, (long long)j);
			goto out;
		}
		if (j < i)
			edges[count++] = (struct text_edge){ (uint64_t)(j - 1), (uint64_t)(i - 1), r.line };
	}
	if ((got = text_next(&r, err)) != 0) {
		rc = got < 0 ? got
			     : text_refused(&r, err, "data after the %lld nonzeros the size line declares",
					    (long long)entries);
		goto out;
	}
	snprintf(note, note_len,
		 "Matrix Market: the triangular-solve DAG of a lower-triangular matrix, a vertex per row, an edge j -> i per nonzero A[i,j], j < i; sources are inputs, every other vertex plain; the values are not used");
	/* vertices as OSP numbers them, 0-based; edges named again repeat a nonzero */
	rc = text_graph(name, (uint64_t)rows, edges, count, "a nonzero repeats the edge", graph, err);
out:
	free(edges);
	return rc;
}

/* What the GraphML pre-scan finds. */
struct graphml_scan {
	uint64_t nodes, edges; /* <node> and <edge> elements */
	uint64_t keys;         /* <key> elements */
};

/*
 * Bytes igraph takes, measured on igraph 0.10: an entry of an attribute
 * table (a string attribute's; a number's takes less), and a key of a GML
 * file in the tree its parser builds before the graph.
 */
#define IGRAPH_ATTRIBUTE_ENTRY_BYTES 80
#define IGRAPH_GML_KEY_BYTES 256

static int scan_refused(struct ps_error *err, const char *name, uint64_t line,
			const char *what)
{
	return ps_error_set(err, PS_EINPUT, "%s:%llu: %s", name,
			    (unsigned long long)line, what);
}

/*
 * GraphML is read by igraph through libxml2, which drops what it does not
 * understand without a word. Before it runs, one pass over the text
 * refuses a document type declaration (internal entities, which libxml2
 * drops, and external ones), any entity but the five of XML and character
 * references, and more elements than the size limit; and counts the
 * <node> elements, to be set against the vertices igraph makes (an edge to
 * an undeclared node makes one). Comments, CDATA and processing
 * instructions are skipped; '<' cannot occur raw anywhere else but in
 * markup.
 */
static int scan_graphml(FILE *f, const char *name, struct graphml_scan *scan,
			struct ps_error *err)
{
	static const char *const entities[] = { "lt", "gt", "amp", "quot", "apos" };
	uint64_t line = 1;
	int c;

	memset(scan, 0, sizeof(*scan));
	while ((c = getc_unlocked(f)) != EOF) {
		char word[16];
		size_t len = 0;

		if (c == '\n') {
			line++;
			continue;
		}
		if (c == '&') {
			bool known = false;

			while ((c = getc_unlocked(f)) != EOF && c != ';' && len < sizeof(word) - 1)
				word[len++] = (char)c;
			word[len] = '\0';
			for (size_t k = 0; k < sizeof(entities) / sizeof(entities[0]); k++)
				known |= !strcmp(word, entities[k]);
			if (c != ';' || (!known && word[0] != '#'))
				return scan_refused(err, name, line,
						    "an entity reference other than &lt; &gt; &amp; &quot; &apos; or a character reference: pebblesim reads no entities");
			continue;
		}
		if (c != '<')
			continue;
		c = getc_unlocked(f);
		if (c == '!') {
			/* a comment, CDATA, or a declaration */
			int a = 0, b = 0;

			c = getc_unlocked(f);
			if (c == '-' && (c = getc_unlocked(f)) == '-') {
				/* to "-->" */
				while ((c = getc_unlocked(f)) != EOF &&
				       !(a == '-' && b == '-' && c == '>')) {
					line += c == '\n';
					a = b;
					b = c;
				}
				continue;
			}
			while (c != EOF && len < 7) {
				word[len++] = (char)c;
				if (len < 7)
					c = getc_unlocked(f);
			}
			if (len == 7 && !strncmp(word, "[CDATA[", 7)) {
				/* to "]]>" */
				while ((c = getc_unlocked(f)) != EOF &&
				       !(a == ']' && b == ']' && c == '>')) {
					line += c == '\n';
					a = b;
					b = c;
				}
				continue;
			}
			return scan_refused(err, name, line,
					    "a document type or entity declaration: pebblesim reads GraphML without DTDs or entities");
		}
		if (c == '?') {
			int a = 0;

			while ((c = getc_unlocked(f)) != EOF && !(a == '?' && c == '>')) {
				line += c == '\n';
				a = c;
			}
			continue;
		}
		/* an element: its name, after a namespace prefix */
		for (; c != EOF && c != '>' && c != '/' && c != ' ' && c != '\t' &&
		       c != '\n' && c != '\r'; c = getc_unlocked(f)) {
			if (c == ':')
				len = 0;
			else if (len < sizeof(word) - 1)
				word[len++] = (char)c;
		}
		word[len] = '\0';
		if (c == '\n')
			line++;
		if (!strcmp(word, "hyperedge"))
			return scan_refused(err, name, line,
					    "a <hyperedge>: the edges of a DAG join two nodes, and igraph would drop it");
		scan->nodes += !strcmp(word, "node");
		scan->edges += !strcmp(word, "edge");
		scan->keys += !strcmp(word, "key");
		if (too_many(scan->nodes, scan->edges))
			return size_refused(err, name, scan->nodes, scan->edges);
		if (scan->keys > PS_EXPLICIT_MAX_KEYS) {
			char what[160];

			snprintf(what, sizeof(what), "more than %d <key> elements: pebblesim reads two (role and label), and igraph would build a table of each for every node or edge",
				 PS_EXPLICIT_MAX_KEYS);
			return scan_refused(err, name, line, what);
		}
	}
	if (ferror(f))
		return ps_error_set(err, PS_EIO, "cannot read DAG '%s': %s", name,
				    strerror(errno));
	return PS_OK;
}

/* ---- GraphML as pebblesim writes it, without libxml2 ------------------ */

/*
 * libxml2, through igraph, spends nearly all of `run --dag FILE.graphml`
 * (docs/PERFORMANCE.md). The GraphML that `pebblesim dag` writes (igraph's
 * writer) is a narrow subset, read here in one pass into the same igraph
 * graph: the vertices in the order of their <node> elements, the edges in
 * file order, the "role" and "label" vertex attributes as the same
 * strings. Whatever lies outside the subset, invalid files included, is
 * declined, and the caller reads the file through igraph's path as
 * before: messages, limits and refusals are that path's by construction.
 * The subset:
 *
 * - an optional <?xml version="1.0" encoding="UTF-8"?>, then <graphml>
 *   with xmlns="http://graphml.graphdrawing.org/xmlns" (xmlns:xsi and
 *   xsi:schemaLocation allowed), comments without "--" between elements;
 * - <key id for="node" attr.name attr.type/>, each name once, typed
 *   string, or long, int, double, float (whose values must then be
 *   decimal integers); "role" and "label" typed string;
 * - one <graph edgedefault="directed"> (and an id), holding first every
 *   <node id="nK"> (K its index: n0, n1, ...) with <data key> children,
 *   each key once, then every <edge source="nA" target="nB"> (declared
 *   nodes), empty;
 * - attribute values in double quotes; data text of printable ASCII
 *   without white space, '<', '>' or '&' (no entity, no CDATA).
 *
 * The size limit is counted as it reads; beyond it, declined too.
 */
#define SUBSET_KEYS 32
#define SUBSET_ROLES 16

struct subset_key {
	char id[64], name[64];
	bool numeric;
};

struct subset_reader {
	FILE *f;
	size_t pos, end;
	int c;                        /* the current byte, or EOF */
	unsigned char buf[65536];
	struct subset_key keys[SUBSET_KEYS];
	unsigned key_count;
	int role_key, label_key;      /* index in keys, or -1 */
	unsigned last_key;            /* of the last <data> */
	igraph_vector_int_t edges;
	uint64_t nodes;
	/* per vertex: the role as an index into roles (+1; 0 none), the label */
	uint8_t *role;
	char **label;
	uint64_t vertex_cap;
	char roles[SUBSET_ROLES][64];
	unsigned role_count;
};

static int subset_refill(struct subset_reader *in)
{
	in->end = fread(in->buf, 1, sizeof(in->buf), in->f);
	in->pos = 0;
	if (in->end == 0)
		return in->c = EOF;
	return in->c = in->buf[in->pos++];
}

/* The next byte, in in->c too (the reader looks one byte ahead). */
static inline int subset_next(struct subset_reader *in)
{
	return in->pos < in->end ? (in->c = in->buf[in->pos++]) : subset_refill(in);
}

static bool xml_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void subset_skip_space(struct subset_reader *in)
{
	while (xml_space(in->c))
		subset_next(in);
}

/* The bytes of word, exactly, from the current one. */
static bool subset_word(struct subset_reader *in, const char *word)
{
	for (; *word; word++, subset_next(in))
		if (in->c != (unsigned char)*word)
			return false;
	return true;
}

/* A name, its bytes letters, digits, '.', ':', '_' or '-'. */
static bool subset_name(struct subset_reader *in, char *out, size_t len)
{
	size_t used = 0;

	while ((in->c >= 'a' && in->c <= 'z') || (in->c >= 'A' && in->c <= 'Z') ||
	       (in->c >= '0' && in->c <= '9') || in->c == '.' || in->c == ':' ||
	       in->c == '_' || in->c == '-') {
		if (used + 1 >= len)
			return false;
		out[used++] = (char)in->c;
		subset_next(in);
	}
	out[used] = '\0';
	return used > 0;
}

/*
 * The attributes of a start tag, up to its end: each name="value" in
 * names/values (at most SUBSET_ATTRS, each name once, white space before
 * each); *empty tells "/>". On the root, the xsi attributes may hold any
 * text: their values are not kept.
 */
#define SUBSET_ATTRS 4

static bool subset_attributes(struct subset_reader *in, bool root,
			      char names[][32], char values[][256],
			      unsigned *count, bool *empty)
{
	*count = 0;
	for (;;) {
		bool spaced = xml_space(in->c), keep;
		size_t used = 0;

		subset_skip_space(in);
		if (in->c == '>' || in->c == '/') {
			*empty = in->c == '/';
			if (*empty && subset_next(in) != '>')
				return false;
			subset_next(in);
			return true;
		}
		if (!spaced || *count == SUBSET_ATTRS || !subset_name(in, names[*count], 32))
			return false;
		for (unsigned k = 0; k < *count; k++)
			if (!strcmp(names[k], names[*count]))
				return false;
		keep = !root || (strncmp(names[*count], "xsi:", 4) &&
				 strcmp(names[*count], "xmlns:xsi"));
		subset_skip_space(in);
		if (in->c != '=')
			return false;
		subset_next(in);
		subset_skip_space(in);
		if (in->c != '"')
			return false;
		while (subset_next(in) != '"') {
			if (in->c == EOF || in->c == '<' || in->c == '&' ||
			    (keep && (in->c < 0x21 || in->c > 0x7e || in->c == '>' ||
				      in->c == '\'')))
				return false;
			if (keep) {
				if (used + 1 >= 256)
					return false;
				values[*count][used++] = (char)in->c;
			}
		}
		values[*count][used] = '\0';
		subset_next(in);
		(*count)++;
	}
}

/* White space and comments between elements, then '<' and the tag's
 * name ("/name" for an end tag). */
static bool subset_tag(struct subset_reader *in, char *name, size_t len)
{
	for (;;) {
		subset_skip_space(in);
		if (in->c != '<')
			return false;
		subset_next(in);
		if (in->c != '!')
			break;
		/* a comment: "<!--", no "--" inside, "-->" */
		if (subset_next(in) != '-' || subset_next(in) != '-')
			return false;
		for (int a = 0;;) {
			int c = subset_next(in);

			if (c == EOF)
				return false;
			if (a == '-' && c == '-') {
				if (subset_next(in) != '>')
					return false;
				subset_next(in);
				break;
			}
			a = c;
		}
	}
	if (in->c == '/') {
		name[0] = '/';
		subset_next(in);
		return subset_name(in, name + 1, len - 1);
	}
	return subset_name(in, name, len);
}

/* The end tag </name>, after white space and comments. */
static bool subset_end_tag(struct subset_reader *in, const char *name)
{
	char tag[32];

	if (!subset_tag(in, tag, sizeof(tag)) || tag[0] != '/' || strcmp(tag + 1, name))
		return false;
	subset_skip_space(in);
	if (in->c != '>')
		return false;
	subset_next(in);
	return true;
}

static const char *subset_get(char names[][32], char values[][256],
			      unsigned count, const char *name)
{
	for (unsigned k = 0; k < count; k++)
		if (!strcmp(names[k], name))
			return values[k];
	return NULL;
}

/* "nK": K, a decimal without leading zeros, below limit. */
static bool subset_node_id(const char *id, uint64_t limit, uint64_t *out)
{
	uint64_t k = 0;

	if (id[0] != 'n' || !id[1] || (id[1] == '0' && id[2]))
		return false;
	for (const char *p = id + 1; *p; p++) {
		if (*p < '0' || *p > '9' || k > PS_EXPLICIT_MAX_ELEMENTS)
			return false;
		k = k * 10 + (uint64_t)(*p - '0');
	}
	*out = k;
	return k < limit;
}

static bool subset_key(struct subset_reader *in)
{
	char names[SUBSET_ATTRS][32], values[SUBSET_ATTRS][256];
	const char *id, *domain, *attr_name, *type;
	struct subset_key *key = &in->keys[in->key_count];
	unsigned count;
	bool empty;

	if (in->key_count == SUBSET_KEYS ||
	    !subset_attributes(in, false, names, values, &count, &empty) || !empty || count != 4)
		return false;
	id = subset_get(names, values, count, "id");
	domain = subset_get(names, values, count, "for");
	attr_name = subset_get(names, values, count, "attr.name");
	type = subset_get(names, values, count, "attr.type");
	if (!id || !domain || !attr_name || !type || strcmp(domain, "node") ||
	    strlen(id) >= sizeof(key->id) || strlen(attr_name) >= sizeof(key->name))
		return false;
	for (unsigned k = 0; k < in->key_count; k++)
		if (!strcmp(in->keys[k].id, id) || !strcmp(in->keys[k].name, attr_name))
			return false;
	key->numeric = !strcmp(type, "long") || !strcmp(type, "int") ||
		       !strcmp(type, "double") || !strcmp(type, "float");
	if (!key->numeric && strcmp(type, "string"))
		return false;
	if (!strcmp(attr_name, "role") || !strcmp(attr_name, "label")) {
		if (key->numeric)
			return false; /* igraph's path says it must be a string */
		*(!strcmp(attr_name, "role") ? &in->role_key : &in->label_key) =
			(int)in->key_count;
	}
	strcpy(key->id, id);
	strcpy(key->name, attr_name);
	in->key_count++;
	return true;
}

/* A <data key="...">text</data> of node v, after its name. */
static bool subset_data(struct subset_reader *in, uint64_t v, bool *seen)
{
	char names[SUBSET_ATTRS][32], values[SUBSET_ATTRS][256], text[256];
	const char *id;
	unsigned count, k;
	size_t used = 0;
	bool empty;

	if (!subset_attributes(in, false, names, values, &count, &empty) || empty ||
	    count != 1 || !(id = subset_get(names, values, count, "key")))
		return false;
	/* data follow their keys' order, as igraph writes them: the key
	 * after the last one found is tried first */
	for (k = 0; k < in->key_count; k++)
		if (!strcmp(in->keys[(in->last_key + 1 + k) % in->key_count].id, id))
			break;
	if (k == in->key_count)
		return false;
	k = in->last_key = (in->last_key + 1 + k) % in->key_count;
	if (seen[k])
		return false;
	seen[k] = true;
	for (; in->c != '<'; subset_next(in)) {
		if (in->c < 0x21 || in->c > 0x7e || in->c == '>' || in->c == '&' ||
		    used + 1 >= sizeof(text))
			return false;
		text[used++] = (char)in->c;
	}
	text[used] = '\0';
	if (in->keys[k].numeric) {
		size_t digits = strspn(text + (text[0] == '-'), "0123456789");

		if (!digits || text[(text[0] == '-') + digits])
			return false;
	} else if ((int)k == in->role_key && used) {
		unsigned r;

		for (r = 0; r < in->role_count && strcmp(in->roles[r], text); r++)
			;
		if (r == in->role_count) {
			if (r == SUBSET_ROLES || used >= sizeof(in->roles[0]))
				return false;
			strcpy(in->roles[in->role_count++], text);
		}
		in->role[v] = (uint8_t)(r + 1);
	} else if ((int)k == in->label_key && used) {
		if (!(in->label[v] = strdup(text)))
			return false;
	}
	return subset_end_tag(in, "data");
}

/* A <node>, after its name: vertex in->nodes. */
static bool subset_node(struct subset_reader *in)
{
	char names[SUBSET_ATTRS][32], values[SUBSET_ATTRS][256], tag[32];
	bool seen[SUBSET_KEYS] = { false }, empty;
	unsigned count;
	uint64_t v = in->nodes, k;

	if (!subset_attributes(in, false, names, values, &count, &empty) || count != 1 ||
	    !subset_get(names, values, count, "id") ||
	    !subset_node_id(subset_get(names, values, count, "id"), v + 1, &k) || k != v)
		return false;
	if (v == in->vertex_cap) {
		uint64_t cap = in->vertex_cap ? 2 * in->vertex_cap : 1024;
		uint8_t *role = realloc(in->role, cap);
		char **label;

		if (role)
			in->role = role;
		label = role ? realloc(in->label, cap * sizeof(char *)) : NULL;
		if (!label)
			return false;
		in->label = label;
		in->vertex_cap = cap;
	}
	in->role[v] = 0;
	in->label[v] = NULL;
	in->nodes++;
	if (empty)
		return true;
	for (;;) {
		if (!subset_tag(in, tag, sizeof(tag)))
			return false;
		if (!strcmp(tag, "/node")) {
			subset_skip_space(in);
			if (in->c != '>')
				return false;
			subset_next(in);
			return true;
		}
		if (strcmp(tag, "data") || !subset_data(in, v, seen))
			return false;
	}
}

/* An <edge>, after its name. */
static bool subset_edge(struct subset_reader *in)
{
	char names[SUBSET_ATTRS][32], values[SUBSET_ATTRS][256];
	const char *source, *target;
	uint64_t from, to;
	unsigned count;
	bool empty;

	if (!subset_attributes(in, false, names, values, &count, &empty) || count != 2 ||
	    !(source = subset_get(names, values, count, "source")) ||
	    !(target = subset_get(names, values, count, "target")) ||
	    !subset_node_id(source, in->nodes, &from) ||
	    !subset_node_id(target, in->nodes, &to))
		return false;
	if (!empty && !subset_end_tag(in, "edge"))
		return false;
	return !igraph_vector_int_push_back(&in->edges, (igraph_integer_t)from) &&
	       !igraph_vector_int_push_back(&in->edges, (igraph_integer_t)to);
}

/* The document, up to the end of the file. */
static bool subset_document(struct subset_reader *in)
{
	char names[SUBSET_ATTRS][32], values[SUBSET_ATTRS][256], tag[32];
	const char *value;
	unsigned count;
	bool empty, edges_begun = false;

	subset_next(in);
	if (in->c == '<') {
		subset_next(in);
		if (in->c == '?') {
			if (!subset_word(in, "?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
				return false;
		} else if (in->c != EOF) {
			/* no declaration: the '<' is the root's, taken back
			 * (both bytes lie in the first block read) */
			in->pos--;
			in->c = '<';
		}
	}
	if (!subset_tag(in, tag, sizeof(tag)) || strcmp(tag, "graphml") ||
	    !subset_attributes(in, true, names, values, &count, &empty) || empty ||
	    !(value = subset_get(names, values, count, "xmlns")) ||
	    strcmp(value, "http://graphml.graphdrawing.org/xmlns"))
		return false;
	for (unsigned k = 0; k < count; k++)
		if (strcmp(names[k], "xmlns") && strcmp(names[k], "xmlns:xsi") &&
		    strcmp(names[k], "xsi:schemaLocation"))
			return false;
	while (subset_tag(in, tag, sizeof(tag)) && !strcmp(tag, "key"))
		if (!subset_key(in))
			return false;
	if (strcmp(tag, "graph") ||
	    !subset_attributes(in, false, names, values, &count, &empty) || empty ||
	    !(value = subset_get(names, values, count, "edgedefault")) ||
	    strcmp(value, "directed") ||
	    count != 1 + (subset_get(names, values, count, "id") != NULL))
		return false;
	for (;;) {
		if (!subset_tag(in, tag, sizeof(tag)))
			return false;
		if (!strcmp(tag, "node") && !edges_begun) {
			if (!subset_node(in))
				return false;
		} else if (!strcmp(tag, "edge")) {
			edges_begun = true;
			if (!subset_edge(in))
				return false;
		} else if (!strcmp(tag, "/graph")) {
			break;
		} else {
			return false;
		}
		if (too_many(in->nodes, (uint64_t)igraph_vector_int_size(&in->edges) / 2))
			return false;
	}
	subset_skip_space(in);
	if (in->c != '>')
		return false;
	subset_next(in);
	if (!subset_end_tag(in, "graphml"))
		return false;
	/* only white space and comments may follow */
	return !subset_tag(in, tag, sizeof(tag)) && in->c == EOF && !ferror(in->f);
}

/* Which reader takes GraphML first (ps_explicit_fast_graphml). */
static bool fast_graphml_on = true;

bool ps_explicit_fast_graphml(bool on)
{
	bool was = fast_graphml_on;

	fast_graphml_on = on;
	return was;
}

/* The attribute name of v's strings, set as igraph's reader sets them. */
static bool subset_set_strings(igraph_t *graph, const char *name, uint64_t V,
			       const char *(*value)(const struct subset_reader *, uint64_t),
			       const struct subset_reader *in)
{
	igraph_strvector_t strings;
	bool ok;

	if (igraph_strvector_init(&strings, (igraph_integer_t)V))
		return false;
	ok = true;
	for (uint64_t v = 0; v < V && ok; v++)
		ok = !igraph_strvector_set(&strings, (igraph_integer_t)v, value(in, v));
	ok = ok && !SETVASV(graph, name, &strings);
	igraph_strvector_destroy(&strings);
	return ok;
}

static const char *subset_role(const struct subset_reader *in, uint64_t v)
{
	return in->role[v] ? in->roles[in->role[v] - 1] : "";
}

static const char *subset_label(const struct subset_reader *in, uint64_t v)
{
	return in->label[v] ? in->label[v] : "";
}

/*
 * GraphML of the subset above into graph: true when read, false when the
 * file lies outside it (or memory ran out), with nothing left allocated
 * and the stream to be rewound.
 */
static bool read_graphml_subset(FILE *f, igraph_t *graph)
{
	struct subset_reader *in = calloc(1, sizeof(*in));
	bool ok = false, built = false;

	if (!in)
		return false;
	in->f = f;
	in->role_key = in->label_key = -1;
	if (igraph_vector_int_init(&in->edges, 0)) {
		free(in);
		return false;
	}
	if (subset_document(in) &&
	    !igraph_create(graph, &in->edges, (igraph_integer_t)in->nodes, IGRAPH_DIRECTED)) {
		built = true;
		ok = (in->role_key < 0 || subset_set_strings(graph, "role", in->nodes, subset_role, in)) &&
		     (in->label_key < 0 || subset_set_strings(graph, "label", in->nodes, subset_label, in));
	}
	if (built && !ok)
		igraph_destroy(graph);
	for (uint64_t v = 0; v < in->nodes; v++)
		free(in->label[v]);
	free(in->label);
	free(in->role);
	igraph_vector_int_destroy(&in->edges);
	free(in);
	return ok;
}

/* igraph's attribute tables, keys for each of elements, in the memory
 * limit (an upper bound: a key serves nodes, edges or the graph). */
static int attribute_tables_fit(const char *name, uint64_t keys, uint64_t elements,
				struct ps_error *err)
{
	char what[PS_ERROR_MAX / 2];

	snprintf(what, sizeof(what), "DAG '%s': igraph's tables of its %llu keys for %llu nodes and edges",
		 name, (unsigned long long)keys, (unsigned long long)elements - 1);
	return memory_fits(keys * elements * IGRAPH_ATTRIBUTE_ENTRY_BYTES, what, err);
}

static int read_graphml(FILE *f, const char *name, igraph_t *graph,
			struct ps_error *err)
{
	struct graphml_scan scan;
	uint64_t vertices;
	int rc;

	if (fast_graphml_on) {
		if (read_graphml_subset(f, graph))
			return PS_OK;
		igraph_reason[0] = '\0';
		if (fseek(f, 0, SEEK_SET))
			return ps_error_set(err, PS_EIO,
					    "cannot read DAG '%s': a GraphML file is read twice, and this one cannot be rewound (%s)",
					    name, strerror(errno));
	}
	if ((rc = scan_graphml(f, name, &scan, err)) ||
	    (rc = attribute_tables_fit(name, scan.keys, scan.nodes + scan.edges + 1, err)))
		return rc;
	if (fseek(f, 0, SEEK_SET))
		return ps_error_set(err, PS_EIO,
				    "cannot read DAG '%s': a GraphML file is read twice, and this one cannot be rewound (%s)",
				    name, strerror(errno));
	if (igraph_read_graph_graphml(graph, f, 0)) {
		char what[PS_ERROR_MAX / 2];

		snprintf(what, sizeof(what), "cannot read DAG '%s' as GraphML", name);
		return igraph_failed(err, what);
	}
	vertices = (uint64_t)igraph_vcount(graph);
	if (vertices != scan.nodes) {
		igraph_destroy(graph);
		return ps_error_set(err, PS_EINPUT, vertices > scan.nodes ?
				    "DAG '%s': an edge names a node that is not declared (%llu <node> elements, %llu vertices)" :
				    "DAG '%s': a node is declared twice, or inside a nested graph (%llu <node> elements, %llu vertices)",
				    name, (unsigned long long)scan.nodes,
				    (unsigned long long)vertices);
	}
	return PS_OK;
}

/* ps_explicit_from_igraph, its refusals said of the file the graph came
 * from: "DAG 'g.gml': the graph has a cycle: it is not a DAG". */
static int from_igraph_named(struct ps_explicit *x, igraph_t *graph, const char *name,
			     struct ps_error *err)
{
	int rc = ps_explicit_from_igraph(x, graph, err);

	if (rc && err) {
		char why[PS_ERROR_MAX];

		snprintf(why, sizeof(why), "%s", err->msg);
		ps_error_set(err, rc, "DAG '%s': %s", name, why);
	}
	return rc;
}

/*
 * The graph of a file in a known format that is not GML (read through
 * igraph after its own scan): GraphML, an edge list, HyperdagDB or Matrix
 * Market; what reading it left out goes to note.
 */
static int read_text_format(FILE *f, const char *name, const char *format,
			    unsigned flags, igraph_t *graph, char *note,
			    size_t note_len, struct ps_error *err)
{
	if (!strcmp(format, "graphml"))
		return read_graphml(f, name, graph, err);
	if (!strcmp(format, "hdag"))
		return read_hdag(f, name, flags & PS_EXPLICIT_IGNORE_WEIGHTS, graph,
				 note, note_len, err);
	if (!strcmp(format, "mtx"))
		return read_mtx(f, name, graph, note, note_len, err);
	return read_edgelist(f, name, graph, err);
}

int ps_explicit_read_stream_as(struct ps_explicit *x, FILE *f, const char *name,
			       const char *format, unsigned flags,
			       struct ps_error *err)
{
	char note[sizeof(x->note)] = "";
	igraph_t graph;
	int rc;

	memset(x, 0, sizeof(*x));
	ps_igraph_setup();
	igraph_reason[0] = '\0';
	rc = read_text_format(f, name, format, flags, &graph, note, sizeof(note), err);
	if (!rc && !(rc = from_igraph_named(x, &graph, name, err)))
		memcpy(x->note, note, sizeof(note));
	return rc;
}

int ps_explicit_read_stream(struct ps_explicit *x, FILE *f, const char *name,
			    bool graphml, struct ps_error *err)
{
	return ps_explicit_read_stream_as(x, f, name, graphml ? "graphml" : "edgelist",
					  0, err);
}

int ps_explicit_read(struct ps_explicit *x, const char *path,
		     struct ps_error *err)
{
	return ps_explicit_read_as(x, path, NULL, NULL, err);
}

ps_node ps_explicit_product(const struct ps_explicit *x, uint64_t from,
			    uint64_t into)
{
	const uint64_t *lo, *hi, *at;

	if (into >= x->vertices || x->role[into] != PS_ROLE_SUM)
		return UINT64_MAX;
	lo = x->in_from + x->in_start[into];
	hi = x->in_from + x->in_start[into + 1];
	at = bsearch(&from, lo, (size_t)(hi - lo), sizeof(uint64_t), cmp_u64);
	return at ? x->vertices + x->edge_base[x->slot[into]] + (uint64_t)(at - lo)
		  : UINT64_MAX;
}

/* "U1[3,(0,2)]": a node with its monomial written out. */
static void attention_label(const struct ps_attention *att, ps_node v,
			    char *buf, size_t len)
{
	uint64_t c[3];
	enum ps_kind k = ps_attention_decode(att, v, c);
	size_t used = (size_t)snprintf(buf, len, "%s[", ps_kinds[k].name);

	for (unsigned p = 0; p < ps_kinds[k].arity && used < len; p++) {
		if (p)
			used += (size_t)snprintf(buf + used, len - used, ",");
		if (ps_kinds[k].coord[p] == PS_C_M)
			ps_monomial_format(&att->mono, c[p], buf + used, len - used);
		else
			snprintf(buf + used, len - used, "%llu", (unsigned long long)c[p]);
		used = strlen(buf);
	}
	if (used < len)
		snprintf(buf + used, len - used, "]");
}

int ps_attention_to_igraph(const struct ps_attention *att, igraph_t *graph,
			   struct ps_error *err)
{
	static const char *const roles[] = {
		[PS_ROLE_INPUT] = "input", [PS_ROLE_PLAIN] = "plain",
		[PS_ROLE_PRODUCT] = "product", [PS_ROLE_SUM] = "sum",
	};
	static const char *const letters[] = { "i", "j", "a", "b", "m" };
	const struct ps_dag *dag = &att->dag;
	igraph_vector_int_t edges;
	uint64_t e = 0, vertices = dag->node_count;
	/* causal and decode DAGs: the ids of nodes that exist, numbered
	 * densely (the others are no vertices); NULL: every id is one */
	uint64_t *vertex = NULL;

	if (dag->node_count + dag->edge_count > PS_EXPLICIT_MAX_ELEMENTS)
		return ps_error_set(err, PS_ENOMEM,
				    "the DAG has %llu nodes and %llu edges; materialising it is limited to %llu in all",
				    (unsigned long long)dag->node_count,
				    (unsigned long long)dag->edge_count,
				    (unsigned long long)PS_EXPLICIT_MAX_ELEMENTS);
	ps_igraph_setup();
	if (att->causal || att->decode) {
		if (!(vertex = malloc(dag->node_count * sizeof(*vertex))))
			return ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
		vertices = 0;
		for (ps_node v = 0; v < dag->node_count; v++) {
			uint64_t c[3];
			enum ps_kind k = ps_attention_decode(att, v, c);

			vertex[v] = ps_attention_exists(att, k, c) ? vertices++ : UINT64_MAX;
		}
	}
	if (igraph_vector_int_init(&edges, (igraph_integer_t)(2 * dag->edge_count))) {
		free(vertex);
		return ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
	}
	for (ps_node v = 0; v < dag->node_count; v++)
		for (uint64_t k = 0; (!vertex || vertex[v] != UINT64_MAX) &&
				     k < ps_dag_parent_count(dag, v); k++) {
			ps_node u = ps_dag_parent(dag, v, k);

			VECTOR(edges)[e++] = (igraph_integer_t)(vertex ? vertex[u] : u);
			VECTOR(edges)[e++] = (igraph_integer_t)(vertex ? vertex[v] : v);
		}
	if (igraph_create(graph, &edges, (igraph_integer_t)vertices, IGRAPH_DIRECTED)) {
		igraph_vector_int_destroy(&edges);
		free(vertex);
		return igraph_failed(err, "cannot build the graph");
	}
	igraph_vector_int_destroy(&edges);
	for (ps_node v = 0; v < dag->node_count; v++) {
		char label[256];
		uint64_t c[3];
		enum ps_kind k = ps_attention_decode(att, v, c);
		igraph_integer_t id = (igraph_integer_t)(vertex ? vertex[v] : v);

		if (vertex && vertex[v] == UINT64_MAX)
			continue;

		attention_label(att, v, label, sizeof(label));
		if (SETVAS(graph, "kind", id, ps_kinds[k].name) ||
		    SETVAS(graph, "label", id, label) ||
		    SETVAS(graph, "role", id, roles[ps_attention_role(att, k, c[0])])) {
			igraph_destroy(graph);
			free(vertex);
			return igraph_failed(err, "cannot set the attributes");
		}
		for (unsigned q = 0; q < 5; q++) {
			double value = -1;

			for (unsigned p = 0; p < ps_kinds[k].arity; p++)
				if ((unsigned)ps_kinds[k].coord[p] == q)
					value = (double)c[p];
			if (SETVAN(graph, letters[q], id, value)) {
				igraph_destroy(graph);
				free(vertex);
				return igraph_failed(err, "cannot set the attributes");
			}
		}
	}
	free(vertex);
	return PS_OK;
}

/*
 * GraphML through igraph, with its numeric attributes typed "long": igraph
 * declares every numeric attribute "double", while the coordinates are
 * integers and igraph prints them as such.
 */
static int write_graphml_integers(const igraph_t *graph, FILE *out,
				  struct ps_error *err)
{
	static const char from[] = "attr.type=\"double\"";
	static const char to[] = "attr.type=\"long\"";
	char *text = NULL, *at, *rest;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	igraph_error_t rc;

	if (!mem)
		return ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
	rc = igraph_write_graph_graphml(graph, mem, false);
	if (fclose(mem) || rc) {
		free(text);
		return rc ? igraph_failed(err, "cannot write the graph")
			  : ps_error_set(err, PS_ENOMEM, "out of memory for the graph");
	}
	/* the declarations come first, before the first <graph> */
	for (rest = text; (at = strstr(rest, from)) && at < strstr(text, "<graph "); rest = at + strlen(from)) {
		fwrite(rest, 1, (size_t)(at - rest), out);
		fputs(to, out);
	}
	fputs(rest, out);
	free(text);
	return ferror(out) ? ps_error_set(err, PS_EIO, "cannot write the graph: %s",
					  strerror(errno))
			   : PS_OK;
}

int ps_igraph_write(const igraph_t *graph, const char *format, FILE *out,
		    struct ps_error *err)
{
	igraph_error_t rc;

	if (!strcmp(format, "graphml"))
		return write_graphml_integers(graph, out, err);
	else if (!strcmp(format, "gml"))
		rc = igraph_write_graph_gml(graph, out, IGRAPH_WRITE_GML_DEFAULT_SW,
					    NULL, "pebblesim " PS_VERSION);
	else if (!strcmp(format, "dot"))
		rc = igraph_write_graph_dot(graph, out);
	else if (!strcmp(format, "edgelist"))
		rc = igraph_write_graph_edgelist(graph, out);
	else
		return ps_error_set(err, PS_EINPUT,
				    "unknown format '%s': graphml, gml, dot or edgelist", format);
	return rc ? igraph_failed(err, "cannot write the graph") : PS_OK;
}

/* ---- reading by content: --dag-format, standard input ---------------- */

static const char edgelist_note[] =
	"edge list: no roles, sources are inputs and every other vertex plain";

/* Skips white space and the comments that may open a file of each format. */
static const char *skip_preamble(const char *p, const char *end)
{
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
			p++;
		if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
			const char *close = p + 2;

			while (end - close >= 2 && !(close[0] == '*' && close[1] == '/'))
				close++;
			p = end - close >= 2 ? close + 2 : end;
		} else if (p < end && (*p == '#' || *p == '%' ||
				       (end - p >= 2 && p[0] == '/' && p[1] == '/'))) {
			while (p < end && *p != '\n')
				p++;
		} else {
			return p;
		}
	}
}

static bool starts_word(const char *p, const char *end, const char *word)
{
	size_t len = strlen(word);

	return (size_t)(end - p) >= len && !strncmp(p, word, len) &&
	       ((size_t)(end - p) == len || !((p[len] >= 'a' && p[len] <= 'z') ||
					      (p[len] >= 'A' && p[len] <= 'Z')));
}

/* Whether p starts a line of three integers > 0 (a HyperdagDB header). */
static bool three_counts(const char *p, const char *end)
{
	for (int k = 0; k < 3; k++) {
		bool positive = false;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end || *p < '0' || *p > '9')
			return false;
		for (; p < end && *p >= '0' && *p <= '9'; p++)
			positive |= *p != '0';
		if (!positive || (p < end && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n'))
			return false;
	}
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p == end || *p == '\n';
}

const char *ps_explicit_sniff(const char *head, size_t len)
{
	const char *end = head + len, *p = head;

	if (len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
		p += 3; /* a UTF-8 byte order mark */
	if ((size_t)(end - p) >= 14 && !strncasecmp(p, "%%MatrixMarket", 14))
		return "mtx";
	p = skip_preamble(p, end);
	if (p < end && *p == '<')
		return "graphml"; /* <?xml or <graphml */
	if (starts_word(p, end, "Creator") || starts_word(p, end, "Version"))
		return "gml";
	if (starts_word(p, end, "digraph") || starts_word(p, end, "strict"))
		return "dot";
	if (starts_word(p, end, "graph")) {
		for (p += 5; p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'); p++)
			;
		return p < end && *p == '[' ? "gml" : "dot";
	}
	if (three_counts(p, end))
		return "hdag";
	if (p < end && *p >= '0' && *p <= '9')
		return "edgelist";
	return NULL;
}

const char *ps_explicit_format_note(const char *format)
{
	return format && !strcmp(format, "edgelist") ? edgelist_note : NULL;
}

/* A stream that can be read twice: the file, or standard input copied. */
static bool gml_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int gml_token_refused(struct ps_error *err, const char *name, uint64_t line,
			     const char *token)
{
	char what[160];

	snprintf(what, sizeof(what), "a %s longer than %d bytes: igraph's GML reader takes time quadratic in its length",
		 token, PS_EXPLICIT_MAX_GML_TOKEN);
	return scan_refused(err, name, line, what);
}

/* What the GML pre-scan keeps of the structure read so far. */
struct gml_scan {
	uint64_t line, nodes, edges, keys;
	unsigned depth;        /* lists open */
	bool want_key;         /* the next token is a key (else a value) */
	bool element_key;      /* the last key was node or edge, in the graph */
	bool in_element;       /* the innermost list is a node's or an edge's */
	uint64_t names[PS_EXPLICIT_MAX_KEYS + 1]; /* its attributes, hashed */
	unsigned name_count;
};

/* A key's name among the attributes of nodes and edges: igraph makes a
 * table of each for every node and edge. false past the limit. */
static bool gml_attribute(struct gml_scan *g, uint64_t hash)
{
	for (unsigned k = 0; k < g->name_count; k++)
		if (g->names[k] == hash)
			return true;
	if (g->name_count == PS_EXPLICIT_MAX_KEYS)
		return false;
	g->names[g->name_count++] = hash;
	return true;
}

/*
 * GML is read by igraph, whose parser builds a tree of every key and
 * value before the graph, whose lexer takes time quadratic in the length
 * of a string, and whose reader makes a table of every attribute name of
 * a node or edge for every node and edge. One pass before it refuses a
 * string or other token longer than PS_EXPLICIT_MAX_GML_TOKEN, more node
 * and edge keys than the size limit, more attribute names than
 * PS_EXPLICIT_MAX_KEYS, and a parser's tree (IGRAPH_GML_KEY_BYTES a key)
 * or attribute tables beyond the memory limit, so that igraph's "Parse
 * error" under `ulimit -v` is never the message.
 */
static int scan_gml(FILE *f, const char *name, struct ps_error *err)
{
	struct gml_scan g = { .line = 1, .want_key = true };
	int c = getc_unlocked(f), rc;
	char what[PS_ERROR_MAX / 2];

	while (c != EOF) {
		uint64_t start = g.line, len = 0, hash = UINT64_C(14695981039346656037);
		char word[8];

		if (c == '[' || c == ']') {
			/* a list is a value; a key follows it, and starts it */
			if (c == '[')
				g.in_element = ++g.depth == 2 && g.element_key;
			else if (g.depth && --g.depth < 2)
				g.in_element = false;
			g.want_key = true;
			c = getc_unlocked(f);
			continue;
		}
		if (gml_space(c)) {
			g.line += c == '\n';
			c = getc_unlocked(f);
			continue;
		}
		if (c == '#') { /* a comment, to the end of the line */
			while (c != EOF && c != '\n')
				c = getc_unlocked(f);
			continue;
		}
		if (c == '"') {
			while ((c = getc_unlocked(f)) != EOF && c != '"') {
				g.line += c == '\n';
				if (++len > PS_EXPLICIT_MAX_GML_TOKEN)
					return gml_token_refused(err, name, start, "string");
			}
			c = getc_unlocked(f);
			g.want_key = true;
			continue;
		}
		/* a key or a number (or igraph's error) */
		for (; c != EOF && !gml_space(c) && c != '[' && c != ']' && c != '"';
		     c = getc_unlocked(f)) {
			if (len < sizeof(word) - 1)
				word[len] = (char)c;
			hash = (hash ^ (uint8_t)c) * UINT64_C(1099511628211); /* FNV-1a */
			if (++len > PS_EXPLICIT_MAX_GML_TOKEN)
				return gml_token_refused(err, name, start, "key or number");
		}
		word[len < sizeof(word) ? len : sizeof(word) - 1] = '\0';
		if (!g.want_key) {
			g.want_key = true;
			continue;
		}
		g.want_key = false;
		g.keys++;
		g.element_key = g.depth == 1 && len == 4 &&
				(!strcmp(word, "node") || !strcmp(word, "edge"));
		g.nodes += len == 4 && !strcmp(word, "node");
		g.edges += len == 4 && !strcmp(word, "edge");
		if (too_many(g.nodes, g.edges))
			return size_refused(err, name, g.nodes, g.edges);
		if (g.in_element && g.depth == 2 && !gml_attribute(&g, hash)) {
			snprintf(what, sizeof(what), "more than %d attribute names among the nodes and edges: pebblesim reads two (role and label), and igraph would build a table of each for every node and edge",
				 PS_EXPLICIT_MAX_KEYS);
			return scan_refused(err, name, start, what);
		}
	}
	if (ferror(f))
		return ps_error_set(err, PS_EIO, "cannot read DAG '%s': %s", name, strerror(errno));
	snprintf(what, sizeof(what), "DAG '%s': igraph's GML parser, for its %llu keys,",
		 name, (unsigned long long)g.keys);
	if ((rc = memory_fits(g.keys * IGRAPH_GML_KEY_BYTES, what, err)))
		return rc;
	return attribute_tables_fit(name, g.name_count, g.nodes + g.edges + 1, err);
}

static FILE *open_rewindable(const char *path, struct ps_error *err)
{
	FILE *copy, *f;
	char buf[65536];
	size_t got;

	if (strcmp(path, "-")) {
		f = fopen(path, "r");
		if (!f)
			ps_error_set(err, PS_EIO, "cannot open DAG '%s': %s", path,
				     strerror(errno));
		return f;
	}
	copy = tmpfile();
	if (!copy) {
		ps_error_set(err, PS_EIO, "cannot buffer the DAG from standard input: %s",
			     strerror(errno));
		return NULL;
	}
	while ((got = fread(buf, 1, sizeof(buf), stdin)) > 0)
		if (fwrite(buf, 1, got, copy) != got)
			break;
	if (ferror(stdin) || ferror(copy)) {
		ps_error_set(err, PS_EIO, "cannot read the DAG from standard input: %s",
			     strerror(errno));
		fclose(copy);
		return NULL;
	}
	rewind(copy);
	return copy;
}

static bool known_format(const char *format)
{
	static const char *const formats[] = { "graphml", "gml", "edgelist", "hdag", "mtx", "dot" };

	for (size_t k = 0; k < sizeof(formats) / sizeof(formats[0]); k++)
		if (!strcmp(format, formats[k]))
			return true;
	return false;
}

int ps_explicit_read_with(struct ps_explicit *x, const char *path,
			  const char *format, unsigned flags,
			  const char **read_as, struct ps_error *err)
{
	const char *name = strcmp(path, "-") ? path : "(standard input)";
	char head[4096], what[PS_ERROR_MAX / 2], note[sizeof(x->note)] = "";
	size_t got;
	igraph_t graph;
	igraph_error_t rc;
	int prc;
	FILE *f;

	memset(x, 0, sizeof(*x));
	if (format && !known_format(format))
		return ps_error_set(err, PS_EINPUT,
				    "unknown DAG format '%s': graphml, gml, edgelist, hdag or mtx", format);
	f = open_rewindable(path, err);
	if (!f)
		return PS_EIO;
	if (!format) {
		got = fread(head, 1, sizeof(head), f);
		rewind(f);
		format = ps_explicit_sniff(head, got);
		if (!format) {
			fclose(f);
			return ps_error_set(err, PS_EINPUT,
					    "cannot tell the format of DAG '%s' from its content: give --dag-format graphml, gml, edgelist, hdag or mtx",
					    name);
		}
	}
	if (!strcmp(format, "dot")) {
		fclose(f);
		return ps_error_set(err, PS_EINPUT,
				    "cannot read DAG '%s': DOT is written for drawing and is not read back (igraph has no DOT reader); write the DAG as GraphML or GML",
				    name);
	}
	ps_igraph_setup();
	igraph_reason[0] = '\0';
	/* GraphML, edge lists, HyperdagDB and Matrix Market through the
	 * readers that check the sizes and the oddities first; GML through
	 * igraph */
	if (strcmp(format, "gml")) {
		prc = read_text_format(f, name, format, flags, &graph, note, sizeof(note), err);
		fclose(f);
		if (prc)
			return prc;
	} else {
		prc = scan_gml(f, name, err);
		if (prc) {
			fclose(f);
			return prc;
		}
		rewind(f);
		rc = igraph_read_graph_gml(&graph, f);
		fclose(f);
		if (rc) {
			snprintf(what, sizeof(what), "cannot read DAG '%s' as GML", name);
			return igraph_failed(err, what);
		}
	}
	if (read_as)
		*read_as = format;
	if ((prc = from_igraph_named(x, &graph, name, err)))
		return prc;
	memcpy(x->note, note, sizeof(note));
	return PS_OK;
}

int ps_explicit_read_as(struct ps_explicit *x, const char *path,
			const char *format, const char **read_as,
			struct ps_error *err)
{
	return ps_explicit_read_with(x, path, format, 0, read_as, err);
}

void ps_igraph_free(igraph_t *graph)
{
	igraph_destroy(graph);
}

int ps_explicit_topological_order(const struct ps_explicit *x, uint64_t *order,
				  struct ps_error *err)
{
	igraph_vector_int_t vertices;

	if (igraph_vector_int_init(&vertices, 0))
		return ps_error_set(err, PS_ENOMEM, "out of memory");
	if (igraph_topological_sorting(&x->graph, &vertices, IGRAPH_OUT) ||
	    (uint64_t)igraph_vector_int_size(&vertices) != x->vertices) {
		igraph_vector_int_destroy(&vertices);
		return ps_error_set(err, PS_EINPUT, "igraph cannot sort the DAG");
	}
	for (uint64_t k = 0; k < x->vertices; k++)
		order[k] = (uint64_t)VECTOR(vertices)[k];
	igraph_vector_int_destroy(&vertices);
	return PS_OK;
}

/* ---- the module's table (explicit_module.h) -------------------------- */

static void explicit_init(const struct ps_explicit_host *host)
{
	if (host && host->memory_fits)
		memory_fits = host->memory_fits;
	ps_igraph_setup();
}

const struct ps_explicit_module ps_explicit_module = {
	.version = PS_EXPLICIT_MODULE_VERSION,
	.size = sizeof(struct ps_explicit_module),
	.init = explicit_init,
	.free = ps_explicit_free,
	.from_igraph = ps_explicit_from_igraph,
	.read_as = ps_explicit_read_as,
	.read_stream = ps_explicit_read_stream,
	.sniff = ps_explicit_sniff,
	.format_note = ps_explicit_format_note,
	.fast_graphml = ps_explicit_fast_graphml,
	.product = ps_explicit_product,
	.attention_to_igraph = ps_attention_to_igraph,
	.igraph_write = ps_igraph_write,
	.igraph_free = ps_igraph_free,
	.topological_order = ps_explicit_topological_order,
	.read_with = ps_explicit_read_with,
	.read_stream_as = ps_explicit_read_stream_as,
};
