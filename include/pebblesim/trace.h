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
#include "pebblesim/ops.h"
#include "pebblesim/strategy.h"

/*
 * Elementary traces have one line per move; pebblesim refuses to write one
 * of more lines than this (about 60 bytes each).
 */
#define PS_TRACE_ELEMENTARY_MAX_LINES UINT64_C(20000000)

/* What a trace's header says. */
struct ps_trace_header {
	struct ps_attention_params dag;
	uint64_t M;
	char strategy[64];
	uint64_t w;      /* params.w, or 0 */
	char tiles[16];  /* params.tiles, or "" */
};

/* A sink that writes each operation as a line (or its moves, one a line). */
struct ps_trace_writer {
	struct ps_sink sink;
	const struct ps_attention *att;
	FILE *file;
	bool elementary;
	bool failed;
	uint64_t lines;
	char *path;     /* the target, NULL for standard output */
	char *tmp_path; /* written beside it and renamed by ps_trace_close */
};

/* Opens path ("-" for standard output) and writes the header. */
int ps_trace_open(struct ps_trace_writer *w, const char *path,
		  const struct ps_attention *att, uint64_t M,
		  const char *strategy, const struct ps_plan *plan,
		  bool elementary, struct ps_error *err);

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
};

/*
 * Replays the trace in f (named name in messages) in the engine. M, when
 * not 0, overrides the header's. expect, when not NULL, is the DAG the
 * header must name. Returns 0 with rep->valid telling the verdict, or
 * PS_EINPUT/PS_EIO/PS_ENOMEM with err (its line set) for a trace that
 * cannot be read. ps_replay_free releases rep->att.
 */
int ps_trace_replay(FILE *f, const char *name, uint64_t M,
		    const struct ps_attention_params *expect,
		    struct ps_replay *rep, struct ps_error *err);
void ps_replay_free(struct ps_replay *rep);

#endif
