/*
 * Traces: pebbling sequences as JSON Lines (MODEL.md section 3,
 * docs/TRACE_FORMAT.md), written as a strategy emits them and read back
 * one line at a time, so that memory stays constant in the trace's length.
 */
#ifndef PEBBLESIM_TRACE_H
#define PEBBLESIM_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pebblesim/attention.h"
#include "pebblesim/common.h"
#include "pebblesim/engine.h"
#include "pebblesim/explicit.h"
#include "pebblesim/ops.h"
#include "pebblesim/output.h"
#include "pebblesim/strategy.h"
#include "pebblesim/values.h"

/*
 * The longest line a trace may have, in bytes without its newline: a
 * longer one is refused before it is all read (docs/SECURITY.md).
 */
#define PS_TRACE_MAX_LINE ((size_t)16 << 20)

/* What a trace's header says. */
struct ps_trace_header {
	bool explicit_dag;      /* "kind":"explicit": vertices and edges */
	uint64_t vertices, edges;
	struct ps_attention_params dag;
	uint64_t M;             /* the capacity validated: the header's, or -M */
	uint64_t planned_M;     /* the header's own M, which its plan was made for */
	char strategy[64];
	uint64_t w;      /* params.w, or 0 */
	char tiles[16];  /* params.tiles, or "" */
	char sizes[8];   /* params.sizes, or "" */
	char order[8];   /* params.order, or "" */
	char layout[16]; /* params.layout, or "" */
};

/* Adds what MODEL.md sections 7 and 8 add to an attention DAG's JSON
 * object: "causal":true when causal, "decode":P when decoding; nothing
 * otherwise, so that the other DAGs' headers and reports stay as they
 * were, byte for byte. */
struct json_t;
void ps_trace_dag_variant(struct json_t *dag, const struct ps_attention *att);

/* A sink that writes each operation as a line (or its moves, one a line). */
struct ps_trace_writer {
	struct ps_sink sink;
	const struct ps_attention *att;   /* one of these two */
	const struct ps_explicit *xdag;
	FILE *file;
	bool elementary;
	bool failed;
	uint64_t lines;
	struct ps_output out; /* file is out.file (output.h: how it is written) */
};

/* Opens path ("-" for standard output) and writes the header; the DAG is
 * att, or the explicit xdag (its moves by vertex id). */
int ps_trace_open(struct ps_trace_writer *w, const char *path,
		  const struct ps_attention *att, const struct ps_explicit *xdag,
		  uint64_t M, const char *strategy, const struct ps_plan *plan,
		  const char *order, bool elementary, struct ps_error *err);

/* As ps_trace_open, with "-" written to standard_output: the stream a
 * command's report goes to (a memory stream under ps_script_command). */
int ps_trace_open_stream(struct ps_trace_writer *w, const char *path,
			 FILE *standard_output, const struct ps_attention *att,
			 const struct ps_explicit *xdag, uint64_t M,
			 const char *strategy, const struct ps_plan *plan,
			 const char *order, bool elementary, struct ps_error *err);

/*
 * Writes the end line (when counts is not NULL) and makes the file appear
 * under its name; with keep false, or after a failed write, removes it.
 */
int ps_trace_close(struct ps_trace_writer *w, const struct ps_counts *counts,
		   bool keep, struct ps_error *err);

/* A sink that passes each operation to two others, first to second. */
struct ps_tee_sink {
	struct ps_sink sink;
	struct ps_sink *first, *second;
};

void ps_tee_sink_init(struct ps_tee_sink *t, struct ps_sink *first,
		      struct ps_sink *second);

/* The outcome of replaying a trace. */
struct ps_replay {
	struct ps_trace_header header;
	struct ps_attention att; /* the header's DAG, built by ps_trace_replay */
	bool has_att;
	struct ps_counts counts;
	uint64_t lines, ops;
	bool valid;
	bool has_end;                /* an end line was read (and matched) */
	char violation[PS_ERROR_MAX]; /* "FILE:LINE: ..." when not valid */
	enum ps_rule rule;
	uint64_t violation_line;
	uint64_t fast_lines; /* lines read without jansson (ps_trace_fast_lines) */
	bool has_values;             /* replayed with values, the outputs read */
	struct ps_values_report values;
};

/*
 * Replays the trace in f (named name in messages) in the engine. M, when
 * not 0, overrides the header's. expect, when not NULL, is the attention
 * DAG the header must name; xdag, when not NULL, the explicit DAG a trace
 * of an explicit DAG is played on (its header must agree). Returns 0 with
 * rep->valid telling the verdict, or PS_EINPUT/PS_EIO/PS_ENOMEM with err
 * (its line set) for a trace that cannot be read. element_only turns the
 * block path off. ps_replay_free releases rep->att.
 */
int ps_trace_replay(FILE *f, const char *name, uint64_t M,
		    const struct ps_attention_params *expect,
		    const struct ps_explicit *xdag, bool element_only,
		    struct ps_replay *rep, struct ps_error *err);
void ps_replay_free(struct ps_replay *rep);

/*
 * The same with values (values.h): once the header has built the DAG,
 * vals is initialised from inputs (a trace of an explicit DAG is refused,
 * as are inputs of the wrong shape), every operation the engine accepts
 * is applied to it, and after a valid trace rep->values holds the report.
 * The caller frees vals (ps_values_free) afterwards, whatever the result,
 * and before ps_replay_free.
 */
int ps_trace_replay_values(FILE *f, const char *name, uint64_t M,
			   const struct ps_attention_params *expect,
			   const struct ps_explicit *xdag, bool element_only,
			   const struct ps_values_inputs *inputs,
			   struct ps_values *vals, struct ps_replay *rep,
			   struct ps_error *err);

/*
 * The elementary moves a replay makes at most unless told otherwise
 * (docs/SECURITY.md, "Work limits"): PS_TRACE_MOVES_PER_NODE for each
 * node of the declared DAG (products included), and never fewer than
 * PS_TRACE_LEAST_MAX_MOVES. Every pebbling of pebblesim's strategies
 * takes under 5 moves a node, but resident, which recomputes H for each
 * block of query rows, takes more at small M.
 */
#define PS_TRACE_MOVES_PER_NODE 64
#define PS_TRACE_LEAST_MAX_MOVES (UINT64_C(1) << 24)
uint64_t ps_trace_default_max_moves(const struct ps_dag *dag);

/* Everything a replay may be told; zero-initialised, the defaults. */
struct ps_replay_options {
	uint64_t M;                               /* 0: the header's */
	const struct ps_attention_params *expect; /* the DAG the header must name */
	const struct ps_explicit *xdag;           /* a DAG from a file */
	bool element_only;                        /* the block path off */
	const struct ps_values_inputs *inputs;    /* replay with values, into vals */
	struct ps_values *vals;
	/* moves at most: 0 the default of the declared DAG
	 * (ps_trace_default_max_moves), UINT64_MAX none; a line that would
	 * go past it is refused (PS_EINPUT) before it is played */
	uint64_t max_moves;
	FILE *progress;                           /* ps_progress on long replays */
	/* called after each operation the engine accepted, with the engine
	 * as that operation left it and the operation's line: what a viewer
	 * compares with a prefix of the trace */
	void (*after_op)(void *ctx, const struct ps_engine *e, uint64_t line);
	void *after_op_ctx;
};

/* ps_trace_replay_values with every option. */
int ps_trace_replay_with(FILE *f, const char *name, const struct ps_replay_options *o,
			 struct ps_replay *rep, struct ps_error *err);

/*
 * Lines of single nodes in the common shape ({"op":"load","kind":"Q",
 * "i":3,"a":1}, {"op":"mac","into":12,"from":3}) are read by a reader of
 * pebblesim's own, every other line by jansson; both give the same
 * operation, verdict and message (docs/PERFORMANCE.md). false sends every
 * line through jansson, as the tests that hold the two equal do. Returns
 * the previous setting; the default is true.
 */
bool ps_trace_fast_lines(bool on);

#endif
