/*
 * Explicit DAGs, backed by igraph: any DAG read from GraphML, GML or an
 * edge list, and the attention DAG materialised for export and cross-checks.
 *
 * These functions live in a module of their own, libpebblesim-explicit.so,
 * installed beside libpebblesim and linked with igraph; the library opens
 * it the first time one of them is called, so that a program that never
 * reads, builds or writes an explicit DAG never loads igraph. When the
 * module cannot be loaded, the functions that take an error say why
 * (PS_EINPUT); ps_explicit_sniff and ps_explicit_format_note return NULL.
 *
 * Vertices keep their igraph ids [0, V). Each vertex has a role: input
 * (starts in slow memory), sum (aggregated edge by edge through macs) or
 * plain (computed when all its parents are red). The in-edges of a sum are
 * its products, with ids V + k: a mac aggregates one such edge from its
 * source, which must be red; unlike the attention DAG's products they take
 * no slot of their own. Sinks are the outputs.
 */
#ifndef PEBBLESIM_EXPLICIT_H
#define PEBBLESIM_EXPLICIT_H

#include <igraph.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pebblesim/attention.h"
#include "pebblesim/common.h"
#include "pebblesim/dag.h"

/* Largest vertices + edges materialised or read. */
#define PS_EXPLICIT_MAX_ELEMENTS UINT64_C(4000000)

/* Most <key> elements a GraphML file read through igraph may declare:
 * pebblesim reads two (role and label), and igraph builds a table of
 * every key for every node or edge. */
#define PS_EXPLICIT_MAX_KEYS 64

/* Longest string or other token of a GML file, in bytes: igraph's lexer
 * takes time quadratic in a string's length. */
#define PS_EXPLICIT_MAX_GML_TOKEN 65536

struct ps_explicit {
	struct ps_dag dag; /* first: a ps_explicit is a ps_dag */
	igraph_t graph;
	uint64_t vertices, edges, products, sums, inputs;
	uint8_t *role;       /* [V] enum ps_role */
	uint64_t *in_start;  /* [V + 1] in-edges of v: in_from[in_start[v]..] */
	uint64_t *in_from;   /* [E] their sources, increasing per vertex */
	uint64_t *slot;      /* [V] a sum's slot, or UINT64_MAX */
	uint64_t *edge_base; /* [sums] first product (and edge bit) of a slot */
	uint64_t *sum_of;    /* [sums] the vertex of a slot */
	uint64_t *prod_slot; /* [products] the slot of the sum it feeds */
	uint64_t *outputs;   /* [output_count] the sinks */
	char **labels;       /* [V] from the "label" attribute, or NULL */
	uint64_t max_plain_in; /* the largest in-degree of a plain vertex */
	/* what reading the file left out, in words for the report ("" when
	 * nothing): a HyperdagDB file's work weights, a matrix's values */
	char note[384];
};

/* Installs igraph's C attribute handler and a non-aborting error handler;
 * idempotent. */
void ps_igraph_setup(void);

/*
 * Takes over graph (a ps_explicit owns it after success): checks that it
 * is a directed acyclic graph without multiple edges or loops, reads the
 * "role" and "label" vertex attributes (by default sources are inputs and
 * the rest plain; "product" is read as plain), and builds the tables.
 */
int ps_explicit_from_igraph(struct ps_explicit *x, igraph_t *graph,
			    struct ps_error *err);

/* Reads a DAG file whose format is told by its content:
 * ps_explicit_read_as(x, path, NULL, NULL, err). */
int ps_explicit_read(struct ps_explicit *x, const char *path,
		     struct ps_error *err);

/*
 * Reads path ("-": standard input) as format, "graphml", "gml",
 * "edgelist", "hdag" (HyperdagDB, as OneStopParallel writes it) or "mtx"
 * (a lower-triangular Matrix Market matrix, read as its triangular-solve
 * DAG), or, when format is NULL, as the format its content shows
 * (ps_explicit_sniff). DOT is refused with the reason. *read_as, when not
 * NULL, receives the format read: ps_explicit_read_with(..., 0, ...).
 */
int ps_explicit_read_as(struct ps_explicit *x, const char *path,
			const char *format, const char **read_as,
			struct ps_error *err);

/* Flags of ps_explicit_read_with. */
enum {
	/* a HyperdagDB file's comm and mem weights read as 1 (noted in
	 * x->note) instead of refused */
	PS_EXPLICIT_IGNORE_WEIGHTS = 1,
};

int ps_explicit_read_with(struct ps_explicit *x, const char *path,
			  const char *format, unsigned flags,
			  const char **read_as, struct ps_error *err);

/* The format a file's first bytes show: "mtx" (%%MatrixMarket, first),
 * "graphml" (<?xml, <graphml), "gml" (Creator, graph [), "dot" (digraph,
 * strict, graph {), "hdag" (a first line of three integers > 0, a
 * HyperdagDB header), "edgelist" (another digit), or NULL. Comments ('#',
 * '%', '//' lines, slash-star blocks) and white space before them are
 * skipped. */
const char *ps_explicit_sniff(const char *head, size_t len);

/* What reading a format loses, in words for the report, or NULL: an edge
 * list carries no roles. */
const char *ps_explicit_format_note(const char *format);
/* The same from an open stream, named name in messages: GraphML (which it
 * reads twice: f must be seekable) or an edge list. */
int ps_explicit_read_stream(struct ps_explicit *x, FILE *f, const char *name,
			    bool graphml, struct ps_error *err);

/* The same in format: "graphml", "edgelist", "hdag" or "mtx" (not GML). */
int ps_explicit_read_stream_as(struct ps_explicit *x, FILE *f, const char *name,
			       const char *format, unsigned flags,
			       struct ps_error *err);

void ps_explicit_free(struct ps_explicit *x);

/*
 * GraphML as `pebblesim dag` writes it is read by a reader of pebblesim's
 * own, anything else through igraph and libxml2; both give the same graph,
 * and the same messages (docs/PERFORMANCE.md). false sends every file
 * through igraph, as the tests that hold the two equal do. Returns the
 * previous setting; the default is true.
 */
bool ps_explicit_fast_graphml(bool on);

/* The product (a sum's in-edge) from u into v, or UINT64_MAX. */
ps_node ps_explicit_product(const struct ps_explicit *x, uint64_t from,
			    uint64_t into);

/*
 * The attention DAG as an igraph graph, vertex v for node v, an edge from
 * each parent, with the vertex attributes kind, label ("U1[3,(0,2)]"),
 * role, and the coordinates i, j, a, b, m (-1 where a kind has none).
 * Refused, before anything is allocated, beyond PS_EXPLICIT_MAX_ELEMENTS.
 */
int ps_attention_to_igraph(const struct ps_attention *att, igraph_t *graph,
			   struct ps_error *err);

/* Frees a graph that ps_attention_to_igraph made. */
void ps_igraph_free(igraph_t *graph);

/* igraph's topological order of x's vertices into order[x->vertices]. */
int ps_explicit_topological_order(const struct ps_explicit *x, uint64_t *order,
				  struct ps_error *err);

/* Writes graph as "graphml" (numeric attributes typed long: they must hold
 * integers), "gml", "dot" or "edgelist". */
int ps_igraph_write(const igraph_t *graph, const char *format, FILE *out,
		    struct ps_error *err);

#endif
