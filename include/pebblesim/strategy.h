/*
 * The strategy seam. A strategy knows nothing of the rules: it emits set
 * operations into a sink. Each one is a const struct ps_strategy in its own
 * file under strategies/, listed in the registry; callers go through the
 * small dispatch functions below, never through the pointers.
 *
 * The struct names its own version and grows only at the end: a member
 * added in version k is read only where `s->version >= k` (see
 * ps_strategy_takes), so a strategy built against an older header keeps
 * working. Version 2 added `takes`. A strategy of a version above
 * PS_STRATEGY_VERSION was built against a newer header, whose members
 * this pebblesim cannot read: ps_plugin_load refuses it by name.
 *
 * Strategies also come from plugins (docs/EXTENDING.md): a shared object
 * that exports ps_plugin_strategies, loaded by ps_plugin_load (the
 * command line's --plugin FILE) and registered after the built-in ones.
 */
#ifndef PEBBLESIM_STRATEGY_H
#define PEBBLESIM_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pebblesim/attention.h"
#include "pebblesim/bounds.h"
#include "pebblesim/common.h"
#include "pebblesim/ops.h"

#define PS_STRATEGY_VERSION 2

/* What a strategy is asked to pebble. */
struct ps_explicit;
struct ps_values;

struct ps_problem {
	const struct ps_attention *att; /* the attention DAG, or NULL */
	const struct ps_explicit *xdag; /* an explicit DAG, or NULL */
	uint64_t M;
	const char *tiles; /* generic: "square", "tall" or "unit"; NULL: cheapest */
	uint64_t w;        /* keylemma: the generating set size; 0: cheapest */
	const char *order; /* explicit DAGs: "topo" (default) or "dfs" */
	const char *sizes; /* tilings: "proof" (NULL) or "tuned" (--sizes) */
	const char *layout; /* colpass: "rect-dup", "rect-save", "tail"; NULL: cheapest */
	bool element_only; /* validate move by move, without the block path */
	FILE *progress;    /* where to show progress on long runs, or NULL */
	struct ps_values *values; /* run with values (values.h), or NULL */
	const char *progress_label; /* names the run in progress lines, or NULL */
	double time_limit; /* explicit DAGs' best: its search's seconds; 0: default */
};

struct ps_strategy;

/* What a strategy says of itself before it runs. */
struct ps_plan {
	char summary[256];   /* its parameters: "tall tiles 120 x 17 ..." */
	uint64_t loads;      /* predicted by its cost model, without the engine */
	uint64_t saves;
	uint64_t peak_red;   /* the most red pebbles its tiles may need */
	uint64_t work_bytes; /* memory it takes for itself while it runs
			      * (a cache policy's tables), estimated */
	uint64_t state_bytes; /* the engine's state its sequence needs,
			       * estimated; 0: as if it touched every node
			       * (ps_engine_state_bytes) */
	struct ps_bound upper; /* its I/O bound with explicit constants */
	const char *param_name; /* the parameter it chose: "w", "s", or NULL */
	uint64_t param;
	const char *variant;    /* generic: the tiles, "square", "tall", "unit" */
	const char *sizes;      /* "tuned": sizes by the cost model, no bound */
	bool predicted;         /* loads and saves come from a cost model,
				 * by_array too where it is given
				 * (ps_plan_by_array_given) */
	bool bounded;           /* upper holds the strategy's upper bound */
	const struct ps_strategy *chosen; /* auto: the strategy it runs */
	/* the prediction by array, numbered as the DAG numbers its arrays
	 * (dag.h): loads and saves are its totals (ps_plan_predicted); all
	 * zero when the cost model gives the totals alone */
	struct ps_array_io by_array[PS_ARRAY_MAX];
};

/* A cost model's prediction: by_array (PS_ARRAY_MAX entries) copied into
 * the plan, loads and saves its totals, predicted set. */
static inline void ps_plan_predicted(struct ps_plan *plan,
				     const struct ps_array_io *by_array)
{
	memcpy(plan->by_array, by_array, sizeof(plan->by_array));
	ps_array_io_total(by_array, &plan->loads, &plan->saves);
	plan->predicted = true;
}

/* Does the plan's cost model give its I/O by array? A plugin's may give
 * the totals alone: its by_array all zero while they are not. */
static inline bool ps_plan_by_array_given(const struct ps_plan *plan)
{
	if (!plan->predicted)
		return false;
	if (!plan->loads && !plan->saves)
		return true;
	for (unsigned a = 0; a < PS_ARRAY_MAX; a++)
		if (plan->by_array[a].loads || plan->by_array[a].saves)
			return true;
	return false;
}

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
	/* version 2: the options of ps_problem it reads, PS_TAKES_* bits; the
	 * front end refuses the others instead of ignoring them */
	unsigned takes;
};

enum {
	PS_STRATEGY_EXPLICIT = 1, /* explicit DAGs only */
	PS_STRATEGY_BASELINE = 2, /* not the paper's: best does not pick it */
	PS_STRATEGY_CHOOSER = 4,  /* runs another strategy (plan->chosen) */
	PS_STRATEGY_EXACT = 8,    /* the exact-attention DAG (MODEL.md section 5) */
	PS_STRATEGY_BEYOND = 16,  /* beyond the paper: its own cost model, no
				   * theorem's bound */
	PS_STRATEGY_QUADRATIC = 32, /* its moves grow as n^2 where the others'
				     * grow as n (resident: H rebuilt for
				     * every block of query rows), and its
				     * cost model is exact: compare simulates
				     * it only where that model does not show
				     * another row with less I/O */
	PS_STRATEGY_CAUSAL = 64,  /* pebbles the causal DAG (MODEL.md
				   * section 7) too; without it a strategy
				   * refuses that DAG by name */
	PS_STRATEGY_DECODE = 128, /* pebbles the decode DAG (section 8), and
				   * only it */
	PS_STRATEGY_CAUSAL_ONLY = 256, /* pebbles the causal DAG only (with
					* PS_STRATEGY_CAUSAL) */
};

/* Does s pebble the attention DAG att (approximate or exact, causal or
 * decoding, as its flags say)? */
static inline bool ps_strategy_serves(const struct ps_strategy *s,
				      const struct ps_attention *att)
{
	return !(s->flags & PS_STRATEGY_EXPLICIT) &&
	       !(s->flags & PS_STRATEGY_EXACT) == !att->exact &&
	       (!(s->flags & PS_STRATEGY_DECODE) == !att->decode ||
		(s->flags & PS_STRATEGY_CHOOSER)) && /* best: among those that do */
	       (!att->causal || (s->flags & (PS_STRATEGY_CAUSAL | PS_STRATEGY_DECODE))) &&
	       (att->causal || !(s->flags & PS_STRATEGY_CAUSAL_ONLY));
}
/* What a strategy takes from ps_problem beyond the DAG and M (version 2). */
enum {
	PS_TAKES_W = 1,     /* pb->w: the generating set size (--w) */
	PS_TAKES_TILES = 2, /* pb->tiles: the tile shape (--tiles) */
	PS_TAKES_ORDER = 4, /* pb->order: the compute order (--order) */
	PS_TAKES_SIZES = 8, /* pb->sizes: the tile sizes (--sizes) */
	PS_TAKES_LAYOUT = 16, /* pb->layout: colpass's layout (--layout) */
	PS_TAKES_TIME_LIMIT = 32, /* pb->time_limit: a search's budget (--time-limit) */
};

/* The cheapest of some candidates by their cost models. */
struct ps_choice {
	const struct ps_strategy *best, *second; /* second may be NULL */
	uint64_t best_io, second_io;
};

/* Plans each candidate that accepts pb; PS_EINPUT when none does. */
int ps_choose_cheapest(const struct ps_problem *pb,
		       const struct ps_strategy *const *candidates,
		       size_t count, struct ps_choice *out);

/*
 * The algorithm the theorem of case "I" .. "IV" runs on pb: the cheaper of
 * its algorithms that accept pb (docs/STRATEGIES.md), with why in words;
 * NULL and err when none can run.
 */
const struct ps_strategy *ps_case_algorithm(const char *case_name,
					    const struct ps_problem *pb,
					    char *why, size_t len,
					    struct ps_error *err);

/*
 * One of best's candidates: a strategy, and for one that takes --sizes
 * the sizes it is planned with (NULL: the proof's, or "tuned"), each its
 * own candidate.
 */
struct ps_candidate {
	const struct ps_strategy *s;
	const char *sizes;
	uint64_t io; /* predicted */
};

/* The cheapest of best's candidates on pb by their cost models, and the
 * runner-up (second->s NULL when none); PS_EINPUT when none accepts pb. */
int ps_best_candidates(const struct ps_problem *pb, struct ps_candidate *best,
		       struct ps_candidate *second);

/* The same cheapest as ps_best_candidates, without the runner-up, which
 * lets it skip the candidates whose cost models cannot go below it. */
int ps_best_cheapest(const struct ps_problem *pb, struct ps_candidate *best);

/* best's candidates in the order it plans them, at most max: each
 * strategy it considers, one that takes --sizes also with "tuned";
 * returns how many. */
#define PS_BEST_MAX_CANDIDATES 64
size_t ps_best_candidate_list(struct ps_candidate *out, size_t max);

/* A candidate's name: "colpass", "caseI --sizes tuned". */
const char *ps_candidate_name(const struct ps_candidate *c, char *buf,
			      size_t len);

/*
 * The registry, in the order `pebblesim list` prints it: the built-in
 * strategies, then those of the plugins loaded (ps_plugin_load). Only
 * registry.c changes these two, when a plugin is loaded or unloaded.
 */
extern const struct ps_strategy *const *ps_strategies;
extern size_t ps_strategy_count;

/* Is s one of pebblesim's own strategies (not a plugin's)? */
bool ps_strategy_builtin(const struct ps_strategy *s);

/* The plugin file s came from, or NULL for a built-in strategy. */
const char *ps_strategy_origin(const struct ps_strategy *s);

/*
 * Plugins (docs/EXTENDING.md). A plugin is a shared object that defines
 *
 *     const struct ps_strategy *const *
 *     ps_plugin_strategies(unsigned host_version, size_t *count);
 *
 * returning its strategies (and their number in *count), or NULL after
 * setting *count to 0 when it cannot serve this pebblesim. host_version
 * is the PS_STRATEGY_VERSION of the pebblesim that loads it. The structs
 * and their strings must live as long as the plugin is loaded.
 *
 * Loading a plugin runs its code inside pebblesim: its sequences and
 * cost models are judged like the built-in strategies' (the engine
 * validates every move; a prediction that differs from the count is
 * reported as such), but the code itself is trusted.
 */
#define PS_PLUGIN_SYMBOL "ps_plugin_strategies"

typedef const struct ps_strategy *const *ps_plugin_strategies_fn(unsigned host_version,
								 size_t *count);
ps_plugin_strategies_fn ps_plugin_strategies;

/*
 * Loads the plugin at path (dlopen, the file itself: a name without a
 * slash is a file in the current directory, never a search of the
 * loader's path) and registers its strategies. Refused (PS_EINPUT, nothing registered) when the file
 * cannot be loaded, lacks the symbol, returns no strategy, or when one of
 * its strategies is of a version this pebblesim cannot read, lacks a
 * name, a section, a summary or a function it needs, declares flags or
 * options unknown to this version, or has the name of a strategy already
 * registered; the message names the file and the strategy. Loading the
 * same file twice registers it once.
 */
int ps_plugin_load(const char *path, struct ps_error *err);

/* Unregisters every plugin's strategies and unloads the plugins. */
void ps_plugin_unload_all(void);

/* registry.c: adds the strategies of a plugin (origin: its file) after
 * those registered; PS_ENOMEM when the list cannot grow. */
int ps_strategy_register(const struct ps_strategy *const *list, size_t count,
			 const char *origin, struct ps_error *err);

/* registry.c: back to the built-in strategies alone. */
void ps_strategy_unregister_all(void);

const struct ps_strategy *ps_strategy_find(const char *name);

/* Writes the registered names, comma separated, into buf. */
void ps_strategy_names(char *buf, size_t len);

/* The smallest M s accepts on the attention DAG att (UINT64_MAX: never). */
static inline uint64_t ps_strategy_min_memory(const struct ps_strategy *s,
					      const struct ps_attention *att)
{
	return ps_strategy_serves(s, att) ? s->min_memory(att) : UINT64_MAX;
}

/* ps_strategy_plan and ps_strategy_min_memory, answered from the plans
 * this process already made with the same parameters (a built-in
 * strategy's plan depends on them alone): a run that plans a strategy for
 * its memory check, its run, best's choice and its report's "cheaper
 * strategy" line plans it once. err may be NULL. */
int ps_strategy_plan_kept(const struct ps_strategy *s, const struct ps_problem *pb,
			  struct ps_plan *plan, struct ps_error *err);
uint64_t ps_strategy_min_memory_kept(const struct ps_strategy *s,
				     const struct ps_attention *att);

/* The smallest M s accepts on the explicit DAG of pb (UINT64_MAX: never). */
static inline uint64_t ps_strategy_min_memory_explicit(const struct ps_strategy *s,
						       const struct ps_problem *pb)
{
	return (s->flags & PS_STRATEGY_EXPLICIT) ? s->min_memory_explicit(pb)
						: UINT64_MAX;
}

/* Whether s reads the option `what` (PS_TAKES_*); a strategy of version 1
 * declares none and takes none. */
static inline bool ps_strategy_takes(const struct ps_strategy *s, unsigned what)
{
	return s->version >= 2 && (s->takes & what) != 0;
}

/*
 * s's plan for pb. A plan is an output, read as one (a plugin's too): its
 * text ends within its buffers, and only a chooser names another
 * strategy. A plugin's plan that fails says which plugin and strategy.
 */
int ps_strategy_plan(const struct ps_strategy *s, const struct ps_problem *pb,
		     struct ps_plan *plan, struct ps_error *err);

/*
 * s's sequence for pb, into sink. A plugin's operations pass a guard
 * first: every field of each one is checked against the DAG before any
 * sink reads it (ps_op_check, the opcode, the bytes of its bools, a node
 * by id within the DAG); the first out of range stops the run with
 * PS_EINVALID, err naming the plugin, the strategy, the operation's
 * number and what is wrong, and nothing more reaches sink. A plugin's
 * run that fails by itself is named the same way, with its message or
 * the code it returned.
 */
int ps_strategy_run(const struct ps_strategy *s, const struct ps_problem *pb,
		    struct ps_sink *sink, struct ps_error *err);

#endif
