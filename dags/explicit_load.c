/*
 * The explicit-DAG functions of include/pebblesim/explicit.h, as
 * libpebblesim holds them: each opens the module that implements them
 * (dags/explicit.c, libpebblesim-explicit.so.MAJOR, linked with igraph)
 * the first time it is needed, and calls through its table
 * (explicit_module.h). A run of the attention DAGs never gets here, so
 * it never maps igraph, BLAS, LAPACK, GLPK, libxml2 or ICU.
 *
 * The module is looked for where pebblesim itself lies, never in the
 * current directory; no installation path is compiled in, so that make
 * install copies the build as it is:
 *   1. beside the shared object that holds this code (libpebblesim.so, in
 *      the build directory or LIBDIR);
 *   2. beside the program that holds it (a program linked with
 *      libpebblesim.a: build/pebblesim, the tests), and in ../lib from
 *      it (BINDIR/../lib, as make install lays it out, staged under
 *      DESTDIR or not);
 *   3. by its name alone, as the dynamic linker finds libraries (the
 *      program's run path, LD_LIBRARY_PATH, the ldconfig cache): a LIBDIR
 *      elsewhere than BINDIR/../lib, once ldconfig knows it.
 */
#define _GNU_SOURCE /* dladdr1, struct link_map: the object this code is in */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/limits.h"

#include "explicit_module.h"

/* set by the Makefile from the version's major */
#ifndef PS_EXPLICIT_MODULE_FILE
#define PS_EXPLICIT_MODULE_FILE "libpebblesim-explicit.so.0"
#endif
#define MODULE_FILE PS_EXPLICIT_MODULE_FILE

static const struct ps_explicit_module *module;
static char load_failure[PS_ERROR_MAX / 2];

/* The directory part of path into dir (empty when path has none). */
static void directory_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (slash && n == 0)
		n = 1; /* "/" */
	if (n >= len)
		n = 0;
	memcpy(dir, path, n);
	dir[n] = '\0';
}

/* dlopen of dir/MODULE_FILE, or of MODULE_FILE by the dynamic linker's
 * search where dir is NULL: the module's table, or NULL with the reason
 * kept in load_failure. */
static const struct ps_explicit_module *open_in(const char *dir)
{
	char path[PATH_MAX];
	const struct ps_explicit_module *m;
	void *handle;

	if (!dir)
		snprintf(path, sizeof(path), "%s", MODULE_FILE);
	else if (!dir[0] || snprintf(path, sizeof(path), "%s/%s", dir, MODULE_FILE) >= (int)sizeof(path) ||
		 access(path, F_OK))
		return NULL;
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		/* not found by name: the message below says where it was sought */
		if (dir)
			snprintf(load_failure, sizeof(load_failure), "%s", dlerror());
		return NULL;
	}
	m = dlsym(handle, PS_EXPLICIT_MODULE_SYMBOL);
	if (!m || m->version != PS_EXPLICIT_MODULE_VERSION ||
	    m->size < sizeof(struct ps_explicit_module)) {
		snprintf(load_failure, sizeof(load_failure),
			 "'%.150s' is not a module of pebblesim " PS_VERSION, path);
		dlclose(handle);
		return NULL;
	}
	return m; /* kept open for the life of the process */
}

static const struct ps_explicit_module *find_module(void)
{
	static const struct ps_explicit_host host = { .memory_fits = ps_memory_fits };
	char dir[PATH_MAX], exe[PATH_MAX], rel[PATH_MAX];
	struct link_map *map = NULL;
	const struct ps_explicit_module *m = NULL;
	Dl_info info;
	ssize_t n;

	/* 1. the shared object holding this code; the program has no name
	 * in its link map (and dladdr's name for it is argv[0]: not used) */
	if (dladdr1((const void *)&module, &info, (void **)&map, RTLD_DL_LINKMAP) &&
	    map && map->l_name && map->l_name[0]) {
		directory_of(map->l_name, dir, sizeof(dir));
		m = open_in(dir);
	}
	/* 2. the program holding it, and ../lib from it */
	if (!m && (n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		directory_of(exe, dir, sizeof(dir));
		m = open_in(dir);
		if (!m && snprintf(rel, sizeof(rel), "%s/../lib", dir) < (int)sizeof(rel))
			m = open_in(rel);
	}
	/* 3. the dynamic linker's search */
	if (!m && !load_failure[0])
		m = open_in(NULL);
	if (m)
		m->init(&host);
	else if (!load_failure[0])
		snprintf(load_failure, sizeof(load_failure),
			 "no %s beside pebblesim, in ../lib from it, or where the dynamic linker looks",
			 MODULE_FILE);
	return m;
}

/* The module, loaded on first use; NULL with the reason in err. */
static const struct ps_explicit_module *explicit_module(struct ps_error *err)
{
	if (!module)
		module = find_module();
	if (!module && err)
		ps_error_set(err, PS_EINPUT,
			     "explicit DAGs need pebblesim's igraph module, which cannot be loaded: %s",
			     load_failure);
	return module;
}

void ps_igraph_setup(void)
{
	explicit_module(NULL);
}

void ps_explicit_free(struct ps_explicit *x)
{
	/* without the module, nothing of x was ever allocated */
	if (module)
		module->free(x);
	else
		memset(x, 0, sizeof(*x));
}

int ps_explicit_from_igraph(struct ps_explicit *x, igraph_t *graph,
			    struct ps_error *err)
{
	const struct ps_explicit_module *m = explicit_module(err);

	if (!m) {
		memset(x, 0, sizeof(*x));
		return PS_EINPUT;
	}
	return m->from_igraph(x, graph, err);
}

int ps_explicit_read(struct ps_explicit *x, const char *path,
		     struct ps_error *err)
{
	return ps_explicit_read_as(x, path, NULL, NULL, err);
}

int ps_explicit_read_as(struct ps_explicit *x, const char *path,
			const char *format, const char **read_as,
			struct ps_error *err)
{
	return ps_explicit_read_with(x, path, format, 0, read_as, err);
}

int ps_explicit_read_with(struct ps_explicit *x, const char *path,
			  const char *format, unsigned flags,
			  const char **read_as, struct ps_error *err)
{
	const struct ps_explicit_module *m = explicit_module(err);

	if (!m) {
		memset(x, 0, sizeof(*x));
		return PS_EINPUT;
	}
	return m->read_with(x, path, format, flags, read_as, err);
}

int ps_explicit_read_stream_as(struct ps_explicit *x, FILE *f, const char *name,
			       const char *format, unsigned flags,
			       struct ps_error *err)
{
	const struct ps_explicit_module *m = explicit_module(err);

	if (!m) {
		memset(x, 0, sizeof(*x));
		return PS_EINPUT;
	}
	return m->read_stream_as(x, f, name, format, flags, err);
}

int ps_explicit_read_stream(struct ps_explicit *x, FILE *f, const char *name,
			    bool graphml, struct ps_error *err)
{
	const struct ps_explicit_module *m = explicit_module(err);

	if (!m) {
		memset(x, 0, sizeof(*x));
		return PS_EINPUT;
	}
	return m->read_stream(x, f, name, graphml, err);
}

const char *ps_explicit_sniff(const char *head, size_t len)
{
	const struct ps_explicit_module *m = explicit_module(NULL);

	return m ? m->sniff(head, len) : NULL;
}

const char *ps_explicit_format_note(const char *format)
{
	const struct ps_explicit_module *m = explicit_module(NULL);

	return m ? m->format_note(format) : NULL;
}

bool ps_explicit_fast_graphml(bool on)
{
	const struct ps_explicit_module *m = explicit_module(NULL);

	return m ? m->fast_graphml(on) : on;
}

ps_node ps_explicit_product(const struct ps_explicit *x, uint64_t from,
			    uint64_t into)
{
	/* x came from the module, which is therefore loaded */
	return module ? module->product(x, from, into) : UINT64_MAX;
}

int ps_attention_to_igraph(const struct ps_attention *att, igraph_t *graph,
			   struct ps_error *err)
{
	const struct ps_explicit_module *m = explicit_module(err);

	return m ? m->attention_to_igraph(att, graph, err) : PS_EINPUT;
}

int ps_igraph_write(const igraph_t *graph, const char *format, FILE *out,
		    struct ps_error *err)
{
	const struct ps_explicit_module *m = explicit_module(err);

	return m ? m->igraph_write(graph, format, out, err) : PS_EINPUT;
}

void ps_igraph_free(igraph_t *graph)
{
	if (module)
		module->igraph_free(graph);
}

int ps_explicit_topological_order(const struct ps_explicit *x, uint64_t *order,
				  struct ps_error *err)
{
	const struct ps_explicit_module *m = explicit_module(err);

	return m ? m->topological_order(x, order, err) : PS_EINPUT;
}
