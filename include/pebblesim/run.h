/*
 * One job end to end: a strategy's operations validated in the engine,
 * its counts set beside its prediction and the bounds, in a report. The
 * command line prints reports (src/cli/report.c); the library does not.
 */
#ifndef PEBBLESIM_RUN_H
#define PEBBLESIM_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "pebblesim/attention.h"
#include "pebblesim/bounds.h"
#include "pebblesim/engine.h"
#include "pebblesim/explicit.h"
#include "pebblesim/strategy.h"
#include "pebblesim/values.h"

struct ps_report {
	const struct ps_attention *att;   /* the attention DAG, or NULL */
	const struct ps_explicit *xdag;   /* an explicit DAG, or NULL */
	const char *dag_name;             /* the explicit DAG's file */
	uint64_t M;
	const char *case_name;      /* "I" .. "IV" */
	char case_reason[512];
	char algorithm[384];        /* why --case ran this strategy, or empty */
	const char *strategy;
	const char *section;
	struct ps_plan plan;        /* summary, prediction, upper bound */
	bool has_plan;              /* false for a trace of no known strategy */
	struct ps_lower_bounds lower; /* every lower bound, applied or not */
	uint64_t exact_flash_io;    /* approximate attention: flash's predicted
				     * I/O on exact attention at the same n, d, M */
	bool has_exact_flash;
	char cheapest[32];          /* ps_report_cheapest: the cheapest of
				     * best's candidates ("colpass") ... */
	uint64_t cheapest_io;       /* ... and its predicted I/O */
	bool has_cheapest;
	bool valid;
	struct ps_counts counts;
	uint64_t ops;               /* set operations emitted */
	char violation[PS_ERROR_MAX]; /* "op 118: ..." when not valid */
	enum ps_rule rule;
	double seconds;
	const char *source;         /* a replayed trace's name, or NULL */
	uint64_t lines;             /* its lines */
	bool has_end;               /* it had an end line, and it matched */
	const char *dag_format;     /* the explicit DAG's format, or NULL */
	const char *dag_note;       /* what that format lost, or NULL */
	bool has_values;            /* a run with values (values.h) */
	struct ps_values_report values;
	const struct ps_values_inputs *inputs; /* where its inputs came from */
	const char *values_output;  /* the .npy file the outputs went to */
};

double ps_now_seconds(void);

/*
 * Progress on a stream for long runs and replays: moves validated, the
 * percent when the total is known beforehand, the rate, after the label
 * that names the run. Quiet for the first two seconds; then on a terminal
 * a line every half second, rewritten in place (ps_progress_end clears it
 * for the report), and elsewhere (a batch job's log) a line of its own
 * every PS_PROGRESS_LINE_SECONDS. out NULL: nothing shown.
 */
#define PS_PROGRESS_LINE_SECONDS 10.0
struct ps_progress {
	FILE *out;
	uint64_t total, ops; /* total: moves expected, 0 if not known */
	double start, last;
	bool shown;
	bool lines;          /* out is not a terminal: whole lines */
	const char *label;   /* "keylemma at n = 4096, ...", or NULL */
};

/* Whether progress on out is written as whole lines (not a terminal). */
bool ps_progress_lines(FILE *out);

void ps_progress_init(struct ps_progress *p, FILE *out, uint64_t total);
/* After an operation of op_moves moves, moves validated in all. */
void ps_progress_step(struct ps_progress *p, uint64_t moves, uint64_t op_moves);
void ps_progress_end(struct ps_progress *p);

/* The largest resident set of this process so far, in bytes. On Linux it
 * counts the memory of the process that forked this one, up to exec. */
uint64_t ps_peak_rss_bytes(void);

/* The resident set of this process now, in bytes (/proc/self/statm; the
 * peak where that cannot be read): what a run starts from, whatever
 * process started it. */
uint64_t ps_resident_bytes(void);

/* FlashAttention's I/O on exact attention with att's n, d and
 * normalisation under M, by flash's cost model; false when flash cannot
 * run there. */
bool ps_exact_flash_io(const struct ps_attention *att, uint64_t M,
		       uint64_t *io);

/* Fills the report's cheapest strategy (approximate attention): the one
 * best would run on its DAG and M, by the cost models. */
void ps_report_cheapest(struct ps_report *rep);

/* Empty report for att under M: its case and lower bound filled (and, for
 * approximate attention, its exact counterpart's I/O). */
void ps_report_init(struct ps_report *rep, const struct ps_attention *att,
		    uint64_t M);

/* Empty report for an explicit DAG (read from name) under M. */
void ps_report_init_explicit(struct ps_report *rep,
			     const struct ps_explicit *x, const char *name,
			     uint64_t M);

/* The engine's state a run of the plan on dag needs: the strategy's
 * estimate, or the DAG's whole (ps_engine_state_bytes). */
uint64_t ps_plan_state_bytes(const struct ps_plan *plan, const struct ps_dag *dag);

/* Does a run of s on pb fit in 90% of the memory limit (limits.h): its
 * pebble state, the tables its strategy keeps while it runs
 * (plan.work_bytes) and, with values, their arrays (ps_values_bytes)? PS_OK,
 * PS_ENOMEM with what it needs, or the plan's error. A caller that
 * allocates values checks it first. */
int ps_run_fits(const struct ps_problem *pb, const struct ps_strategy *s, bool values,
		struct ps_error *err);

/* Runs strategy s on the problem; tap, when not NULL, sees every operation
 * before the engine (a trace writer). PS_EINPUT etc. only for failures that
 * are not a verdict (an invalid sequence is a report with valid false).
 * It checks ps_run_fits before the engine allocates anything. */
int ps_run(const struct ps_problem *pb, const struct ps_strategy *s,
	   struct ps_sink *tap, struct ps_report *rep, struct ps_error *err);

/* 1 when a run with values computed outputs further from the direct
 * evaluation than the tolerance. */
bool ps_report_values_failed(const struct ps_report *rep);

/* 1 when the counts contradict a bound: measured I/O above the strategy's
 * upper bound or below an applied lower bound. */
bool ps_report_bound_violated(const struct ps_report *rep);

/* 1 when the run or replay fails, exit status 1: an invalid sequence, a
 * bound contradicted, or values beyond the tolerance. */
bool ps_report_failed(const struct ps_report *rep);

#endif
