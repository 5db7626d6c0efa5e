/*
 * Internal to dags/: the table through which libpebblesim reaches the
 * explicit-DAG module (dags/explicit.c, built as its own shared object,
 * libpebblesim-explicit.so.MAJOR, linked with igraph). The library opens
 * it with dlopen the first time an explicit DAG is read, built or written
 * (dags/explicit_load.c), so that a run of the attention DAGs never loads
 * igraph and the libraries igraph needs (docs/PERFORMANCE.md, start-up).
 *
 * The module exports one symbol, ps_explicit_module; everything else in
 * it is local. It grows only at the end: a loader reads the members its
 * size says are there.
 */
#ifndef PEBBLESIM_EXPLICIT_MODULE_H
#define PEBBLESIM_EXPLICIT_MODULE_H

#include "pebblesim/explicit.h"

#define PS_EXPLICIT_MODULE_VERSION 1

/* What the module takes from the process that loads it: the state it
 * must share (the memory limit, which a sweep divides among workers). */
struct ps_explicit_host {
	int (*memory_fits)(uint64_t bytes, const char *what, struct ps_error *err);
};

struct ps_explicit_module {
	unsigned version; /* PS_EXPLICIT_MODULE_VERSION */
	size_t size;      /* sizeof(struct ps_explicit_module) where built */
	/* once, after loading: the host's functions, igraph's handlers */
	void (*init)(const struct ps_explicit_host *host);
	void (*free)(struct ps_explicit *x);
	int (*from_igraph)(struct ps_explicit *x, igraph_t *graph,
			   struct ps_error *err);
	int (*read_as)(struct ps_explicit *x, const char *path,
		       const char *format, const char **read_as,
		       struct ps_error *err);
	int (*read_stream)(struct ps_explicit *x, FILE *f, const char *name,
			   bool graphml, struct ps_error *err);
	const char *(*sniff)(const char *head, size_t len);
	const char *(*format_note)(const char *format);
	bool (*fast_graphml)(bool on);
	ps_node (*product)(const struct ps_explicit *x, uint64_t from,
			   uint64_t into);
	int (*attention_to_igraph)(const struct ps_attention *att,
				   igraph_t *graph, struct ps_error *err);
	int (*igraph_write)(const igraph_t *graph, const char *format,
			    FILE *out, struct ps_error *err);
	void (*igraph_free)(igraph_t *graph);
	int (*topological_order)(const struct ps_explicit *x, uint64_t *order,
				 struct ps_error *err);
	int (*read_with)(struct ps_explicit *x, const char *path,
			 const char *format, unsigned flags,
			 const char **read_as, struct ps_error *err);
	int (*read_stream_as)(struct ps_explicit *x, FILE *f, const char *name,
			      const char *format, unsigned flags,
			      struct ps_error *err);
};

/* The module's one exported symbol, which the loader reads by name. */
#define PS_EXPLICIT_MODULE_SYMBOL "ps_explicit_module"
extern const struct ps_explicit_module ps_explicit_module;

#endif
