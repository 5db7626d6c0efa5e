/*
 * The strategy seam. A strategy knows nothing of the rules: it emits set
 * operations into a sink. Each one is a const struct ps_strategy in its own
 * file under strategies/, listed in the registry; callers go through the
 * small dispatch functions below, never through the pointers.
 *
 * The struct names its own version and grows only at the end.
 */
#ifndef PEBBLESIM_STRATEGY_H
#define PEBBLESIM_STRATEGY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pebblesim/attention.h"
#include "pebblesim/bounds.h"
#include "pebblesim/common.h"
#include "pebblesim/ops.h"

#define PS_STRATEGY_VERSION 1

/* What a strategy is asked to pebble. */
struct ps_explicit;

struct ps_problem {
	const struct ps_attention *att; /* the attention DAG, or NULL */
	const struct ps_explicit *xdag; /* an explicit DAG, or NULL */
	uint64_t M;
	const char *tiles; /* generic: "square", "tall" or "unit"; NULL: cheapest */
	uint64_t w;        /* keylemma: the generating set size; 0: cheapest */
	const char *order; /* explicit DAGs: "topo" (default) or "dfs" */
	bool element_only; /* validate move by move, without the block path */
	FILE *progress;    /* where to show progress on long runs, or NULL */
};

struct ps_strategy;

/* What a strategy says of itself before it runs. */
struct ps_plan {
	char summary[256];   /* its parameters: "tall tiles 120 x 17 ..." */
	uint64_t loads;      /* predicted by its cost model, without the engine */
	uint64_t saves;
	uint64_t peak_red;   /* the most red pebbles its tiles may need */
	struct ps_bound upper; /* its I/O bound with explicit constants */
	const char *param_name; /* the parameter it chose: "w", "s", or NULL */
	uint64_t param;
	const char *variant;    /* generic: the tiles, "square", "tall", "unit" */
	bool predicted;         /* loads and saves come from a cost model */
	bool bounded;           /* upper holds the strategy's upper bound */
	const struct ps_strategy *chosen; /* auto: the strategy it runs */
};

struct ps_strategy {
	unsigned version;
	const char *name;
	const char *section; /* the paper's statement and where it is proved */
	const char *summary; /* one line for `pebblesim list` */
	/* smallest M it accepts for this DAG */
	uint64_t (*min_memory)(const struct ps_attention *att);
	/* 0 and a filled plan, or PS_EINPUT with the reason it cannot run */
	int (*plan)(const struct ps_problem *pb, struct ps_plan *plan,
		    struct ps_error *err);
	/* emits the pebbling sequence */
	int (*run)(const struct ps_problem *pb, struct ps_sink *sink,
		   struct ps_error *err);
	/* PS_STRATEGY_EXPLICIT: runs on explicit DAGs (pb->xdag), not on the
	 * attention DAG; its min_memory is then min_memory_explicit */
	unsigned flags;
	uint64_t (*min_memory_explicit)(const struct ps_problem *pb);
};

enum {
	PS_STRATEGY_EXPLICIT = 1, /* explicit DAGs only */
	PS_STRATEGY_BASELINE = 2, /* not the paper's: auto does not pick it */
};

/* The strategy that implements each case of the paper: I .. IV. */
const struct ps_strategy *ps_strategy_for_case(const char *case_name);

/* The registry, in the order `pebblesim list` prints it. */
extern const struct ps_strategy *const ps_strategies[];
extern const size_t ps_strategy_count;

const struct ps_strategy *ps_strategy_find(const char *name);

/* The strategy of that name when it serves the DAG's kind (explicit or the
 * attention DAG), else NULL: a name read from a file selects nothing else. */
const struct ps_strategy *ps_strategy_find_for(const char *name,
					       bool explicit_dag);

/* Writes the registered names, comma separated, into buf. */
void ps_strategy_names(char *buf, size_t len);

/* The smallest M s accepts on the attention DAG att (UINT64_MAX: never). */
static inline uint64_t ps_strategy_min_memory(const struct ps_strategy *s,
					      const struct ps_attention *att)
{
	return (s->flags & PS_STRATEGY_EXPLICIT) ? UINT64_MAX : s->min_memory(att);
}

/* The smallest M s accepts on the explicit DAG of pb (UINT64_MAX: never). */
static inline uint64_t ps_strategy_min_memory_explicit(const struct ps_strategy *s,
						       const struct ps_problem *pb)
{
	return (s->flags & PS_STRATEGY_EXPLICIT) ? s->min_memory_explicit(pb)
						: UINT64_MAX;
}

static inline int ps_strategy_plan(const struct ps_strategy *s,
				   const struct ps_problem *pb,
				   struct ps_plan *plan, struct ps_error *err)
{
	memset(plan, 0, sizeof(*plan));
	return s->plan(pb, plan, err);
}

static inline int ps_strategy_run(const struct ps_strategy *s,
				  const struct ps_problem *pb,
				  struct ps_sink *sink, struct ps_error *err)
{
	return s->run(pb, sink, err);
}

#endif
