/*
 * pebblesim optimal: the exact least I/O of a small instance by search
 * (include/pebblesim/optimal.h, docs/OPTIMAL.md), set beside every
 * strategy's I/O and every lower bound that applies. A strategy below
 * the optimum, or a bound above it, is a bug, and the exit status says
 * so. With --sweep, a small grid of instances as a table.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/limits.h"
#include "pebblesim/optimal.h"
#include "pebblesim/trace.h"

/* Defaults: a search of a minute in a GiB; a grid's instance 10 s. */
#define OPTIMAL_SECONDS 60.0
#define OPTIMAL_SWEEP_SECONDS 10.0
#define OPTIMAL_BYTES (UINT64_C(1) << 30)

#define OPTIMAL_MAX_ROWS 32

const struct cli_option optimal_options[] = {
	CLI_OPT_N("rows of Q, K, V; the search takes DAGs of at most\n1024 nodes that hold pebbles (n <= 3 or so)"),
	CLI_OPT_D,
	CLI_OPT_G,
	CLI_OPT_M("fast memory capacity in words (red pebbles), M >= 1"),
	CLI_OPT_NO_NORMALIZE,
	CLI_OPT_ATTENTION,
	CLI_OPT_DAG("search a small DAG from a file instead (GraphML, GML\nor an edge list; docs/DAG_FILES.md)"),
	CLI_OPT_DAG_FORMAT,
	CLI_OPT_IGNORE_WEIGHTS,
	{ OPT_TIME_LIMIT, 0, "time-limit", CLI_REAL, offsetof(struct cli_args, time_limit), 0, 0, "S",
	  "stop the search after S seconds (default 60; 10 an\ninstance with --sweep) and report the bracket" },
	{ OPT_MEMORY_LIMIT, 0, "memory-limit", CLI_SIZE, offsetof(struct cli_args, memory_limit), 1, 0, "B",
	  "the search's tables in bytes, 1G by default (and at\nmost 90% of this machine's memory limit); beyond\nit the search stops and reports the bracket" },
	{ OPT_TRACE, 0, "trace", CLI_STRING, offsetof(struct cli_args, trace), 0, 0, "FILE",
	  "write the best sequence found as a trace (- for\nstandard output); `pebblesim validate FILE` replays it" },
	{ OPT_SWEEP, 0, "sweep", CLI_FLAG, offsetof(struct cli_args, sweep), 0, 0, NULL,
	  "search every instance of the built-in grid (approximate\nand exact attention, docs/OPTIMAL.md) and print the\ntable as CSV, or JSON with --json" },
	CLI_OPT_JSON("print the report as one JSON object (a sweep: an\narray of rows; docs/pebblesim.schema.json)"),
	CLI_OPT_HELP,
	CLI_OPT_END,
};

/* One strategy's I/O on the instance, or why it has none. */
struct optimal_row {
	const struct ps_strategy *s;
	const char *order; /* explicit DAGs: the compute order */
	uint64_t io;
	bool ran;          /* ran and valid */
	char why[PS_ERROR_MAX + 64];
};

/* An instance: its DAG, the strategies, the bounds, the search. */
struct optimal_job {
	struct ps_report head; /* the DAG, M and the lower bounds */
	const struct ps_dag *dag;
	struct optimal_row rows[OPTIMAL_MAX_ROWS];
	size_t row_count;
	int best;              /* the row of least I/O, or -1 */
	struct ps_optimal_result res;
	struct ps_counts replay; /* the search's sequence in the engine */
	char bugs[4][PS_ERROR_MAX + 128];
	size_t bug_count;
};

static const char *status_name(enum ps_optimal_status status)
{
	return status == PS_OPTIMAL_FOUND ? "optimal" :
	       status == PS_OPTIMAL_BRACKETED ? "bracketed" : "infeasible";
}

/* Runs row->s on pb; the row says why when it does not run or fails. */
static void run_row(struct optimal_row *row, const struct ps_problem *pb,
		    uint64_t min_m)
{
	struct ps_report rep;
	struct ps_error err;

	if (pb->M < min_m) {
		snprintf(row->why, sizeof(row->why), min_m == UINT64_MAX ?
			 "does not apply to these parameters" : "does not run: needs M >= %llu",
			 (unsigned long long)min_m);
		return;
	}
	ps_error_clear(&err);
	if (ps_run(pb, row->s, NULL, &rep, &err)) {
		snprintf(row->why, sizeof(row->why), "does not run: %s", err.msg);
		return;
	}
	if (!rep.valid) {
		snprintf(row->why, sizeof(row->why), "invalid sequence: %s", rep.violation);
		return;
	}
	row->io = rep.counts.loads + rep.counts.saves;
	row->ran = true;
}

/* Every strategy that serves the DAG (a DAG from a file: each policy
 * over each order), as compare runs them. */
static void run_strategies(struct optimal_job *job, const struct ps_problem *pb)
{
	static const char *const orders[] = { "topo", "dfs" };

	job->best = -1;
	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];
		bool explicit_s = s->flags & PS_STRATEGY_EXPLICIT;

		if (s->flags & PS_STRATEGY_CHOOSER)
			continue;
		if (pb->att ? !ps_strategy_serves(s, pb->att) : !explicit_s)
			continue;
		for (size_t o = 0; o < 2 && job->row_count < OPTIMAL_MAX_ROWS; o++) {
			struct optimal_row *row = &job->rows[job->row_count++];
			struct ps_problem with_order = *pb;

			memset(row, 0, sizeof(*row));
			row->s = s;
			if (pb->att) {
				run_row(row, pb, ps_strategy_min_memory(s, pb->att));
			} else {
				row->order = ps_strategy_takes(s, PS_TAKES_ORDER) ? orders[o] : NULL;
				with_order.order = row->order;
				run_row(row, &with_order, ps_strategy_min_memory_explicit(s, &with_order));
			}
			if (row->ran && (job->best < 0 || row->io < job->rows[job->best].io))
				job->best = (int)(row - job->rows);
			if (!row->order)
				break;
		}
	}
}

static void add_bug(struct optimal_job *job, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_bug(struct optimal_job *job, const char *fmt, ...)
{
	va_list ap;

	if (job->bug_count >= sizeof(job->bugs) / sizeof(job->bugs[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(job->bugs[job->bug_count++], sizeof(job->bugs[0]), fmt, ap);
	va_end(ap);
}

/*
 * The verdicts: the search's own sequence replayed in the engine with
 * the I/O it claims; no strategy below the proven lower bound; no lower
 * bound above the best I/O known (which is at least the optimum).
 */
static void judge(struct optimal_job *job)
{
	const struct ps_optimal_result *res = &job->res;
	const struct ps_lower_bounds *lb = &job->head.lower;
	uint64_t upper = res->upper;

	if (res->move_count) {
		struct ps_error err;

		ps_error_clear(&err);
		if (ps_optimal_check(job->dag, job->head.M, res->moves, res->move_count,
				     &job->replay, &err))
			add_bug(job, "the search's sequence is invalid in the engine: %s", err.msg);
		else if (job->replay.loads + job->replay.saves != upper)
			add_bug(job, "the search's sequence has %llu I/O in the engine, not %llu",
				(unsigned long long)(job->replay.loads + job->replay.saves),
				(unsigned long long)upper);
	}
	for (size_t k = 0; k < job->row_count; k++) {
		const struct optimal_row *row = &job->rows[k];

		if (row->ran && res->status != PS_OPTIMAL_INFEASIBLE && row->io < res->lower)
			add_bug(job, "%s reaches %llu I/O, below the proven %s %llu", row->s->name,
				(unsigned long long)row->io,
				res->status == PS_OPTIMAL_FOUND ? "optimum" : "lower bound",
				(unsigned long long)res->lower);
		if (row->ran && res->status == PS_OPTIMAL_INFEASIBLE)
			add_bug(job, "%s completes the DAG, which the search found infeasible",
				row->s->name);
	}
	if (upper == PS_OPTIMAL_NONE)
		return;
	for (size_t k = 0; k < lb->applied_count; k++)
		if (lb->applied[k].value > (double)upper + 1e-9)
			add_bug(job, "the lower bound %s (%.0f) is above the %s %llu", lb->applied[k].name,
				lb->applied[k].value,
				res->status == PS_OPTIMAL_FOUND ? "optimum" : "best I/O found",
				(unsigned long long)upper);
}

/* The memory the search may take: --memory-limit, or 1 GiB, within nine
 * tenths of the process's limit. */
static int search_bytes(const struct cli_command *cmd, const struct cli_args *a,
			uint64_t *bytes, FILE *errout)
{
	uint64_t limit = ps_memory_limit(NULL);
	uint64_t room = limit == UINT64_MAX ? UINT64_MAX : limit / 10 * 9;

	if (!a->given[OPT_MEMORY_LIMIT]) {
		*bytes = ps_min_u64(OPTIMAL_BYTES, room);
		return 0;
	}
	if (a->memory_limit > room) {
		struct ps_error err;

		ps_error_clear(&err);
		ps_memory_fits(a->memory_limit, "--memory-limit", &err);
		return cli_usage_error(cmd, errout, "%s", err.msg);
	}
	*bytes = a->memory_limit;
	return 0;
}

/* Strategies, bounds, search and verdicts for one instance. */
static int run_job(struct optimal_job *job, const struct ps_problem *pb,
		   const struct ps_optimal_limits *given, struct ps_error *err)
{
	struct ps_optimal_limits lim = *given;
	uint64_t bound;
	int rc;

	job->dag = pb->att ? &pb->att->dag : &pb->xdag->dag;
	/* a DAG beyond the search is refused before any strategy runs */
	if ((rc = ps_optimal_start_bound(job->dag, &bound, err)))
		return rc;
	run_strategies(job, pb);
	lim.upper = job->best >= 0 ? job->rows[job->best].io : PS_OPTIMAL_NONE;
	if ((rc = ps_optimal_search(job->dag, pb->M, &lim, &job->res, err)))
		return rc;
	judge(job);
	return PS_OK;
}

/* ---- the report ------------------------------------------------------------ */

static double over(uint64_t io, uint64_t base)
{
	return base ? (double)io / (double)base : 0.0;
}

static void print_text(const struct optimal_job *job, const char *trace, FILE *out)
{
	const struct ps_optimal_result *res = &job->res;
	const struct ps_lower_bounds *lb = &job->head.lower;
	uint64_t ref = res->upper;

	if (job->head.att) {
		const struct ps_attention *att = job->head.att;
		char g[32] = "";

		if (!att->exact)
			snprintf(g, sizeof(g), " g=%llu", (unsigned long long)att->g);
		fprintf(out, "dag                    %s n=%llu d=%llu%s %s\n",
			ps_attention_kind_name(att), (unsigned long long)att->n,
			(unsigned long long)att->d, g,
			att->normalize ? "normalized" : "not normalized");
	} else
		fprintf(out, "dag                    %s (%llu vertices, %llu edges)\n",
			job->head.dag_name, (unsigned long long)job->head.xdag->vertices,
			(unsigned long long)job->head.xdag->edges);
	fprintf(out, "M                      %llu\n", (unsigned long long)job->head.M);
	switch (res->status) {
	case PS_OPTIMAL_FOUND:
		fprintf(out, "optimal                %llu I/O%s\n", (unsigned long long)res->upper,
			res->upper_is_given ? " (a strategy's, proven optimal by the search)" : "");
		break;
	case PS_OPTIMAL_BRACKETED:
		if (res->upper == PS_OPTIMAL_NONE)
			fprintf(out, "bracketed              %llu <= optimum (no sequence found yet)\n",
				(unsigned long long)res->lower);
		else
			fprintf(out, "bracketed              %llu <= optimum <= %llu\n",
				(unsigned long long)res->lower, (unsigned long long)res->upper);
		break;
	case PS_OPTIMAL_INFEASIBLE:
		fprintf(out, "infeasible             no sequence completes the DAG with M = %llu\n",
			(unsigned long long)job->head.M);
		break;
	}
	fprintf(out, "search                 %llu states expanded, %llu stored, %.1f MiB, %.2f s%s%s\n",
		(unsigned long long)res->expanded, (unsigned long long)res->states,
		(double)res->bytes / 1048576.0, res->seconds,
		res->stopped_by ? ", stopped by the " : "", res->stopped_by ? res->stopped_by : "");
	fprintf(out, "start bound            %llu (the heuristic at the start)\n",
		(unsigned long long)res->start_bound);
	if (res->move_count)
		fprintf(out, "sequence               %zu moves, %llu loads, %llu saves, peak %llu red (validated)\n",
			res->move_count, (unsigned long long)job->replay.loads,
			(unsigned long long)job->replay.saves, (unsigned long long)job->replay.peak_red);
	if (trace)
		fprintf(out, "trace                  %s\n", trace);
	fprintf(out, "strategies             I/O over the %s\n",
		res->status == PS_OPTIMAL_FOUND ? "optimum" : "best I/O found");
	for (size_t k = 0; k < job->row_count; k++) {
		const struct optimal_row *row = &job->rows[k];
		char name[64];

		snprintf(name, sizeof(name), "%s%s%s", row->s->name, row->order ? " " : "",
			 row->order ? row->order : "");
		if (row->ran)
			fprintf(out, "  %-20s %llu  %.3f\n", name, (unsigned long long)row->io,
				over(row->io, ref == PS_OPTIMAL_NONE ? 0 : ref));
		else
			fprintf(out, "  %-20s %s\n", name, row->why);
	}
	fprintf(out, "lower bounds           value over the %s\n",
		res->status == PS_OPTIMAL_FOUND ? "optimum" : "best I/O found");
	for (size_t k = 0; k < lb->applied_count; k++)
		fprintf(out, "  %-20s %.0f  %.3f  %s\n", lb->applied[k].name, lb->applied[k].value,
			ref && ref != PS_OPTIMAL_NONE ? lb->applied[k].value / (double)ref : 0.0,
			lb->applied[k].formula);
	for (size_t k = 0; k < lb->skipped_count; k++)
		fprintf(out, "  %-20s not applied: %s\n", lb->skipped[k].name, lb->skipped[k].why);
	for (size_t k = 0; k < job->bug_count; k++)
		fprintf(out, "BUG                    %s\n", job->bugs[k]);
}

static json_t *count_json(uint64_t v)
{
	return v == PS_OPTIMAL_NONE ? json_null() : json_integer((json_int_t)v);
}

static json_t *job_json(const struct optimal_job *job, const char *trace)
{
	const struct ps_optimal_result *res = &job->res;
	json_t *rows = json_array(), *bugs = json_array(), *obj;

	for (size_t k = 0; k < job->row_count; k++) {
		const struct optimal_row *row = &job->rows[k];
		json_t *r = json_pack("{s:s}", "strategy", row->s->name);

		if (row->order)
			json_object_set_new(r, "order", json_string(row->order));
		json_object_set_new(r, "io", row->ran ? json_integer((json_int_t)row->io) : json_null());
		if (!row->ran)
			json_object_set_new(r, "why", json_string(row->why));
		json_array_append_new(rows, r);
	}
	for (size_t k = 0; k < job->bug_count; k++)
		json_array_append_new(bugs, json_string(job->bugs[k]));
	obj = json_pack("{s:o, s:I, s:s, s:o, s:o, s:o, s:I, s:b}",
			"dag", cli_dag_json(&job->head), "M", (json_int_t)job->head.M,
			"status", status_name(res->status),
			"optimum", res->status == PS_OPTIMAL_FOUND ? count_json(res->upper) : json_null(),
			"lower", count_json(res->lower), "upper", count_json(res->upper),
			"start_bound", (json_int_t)res->start_bound,
			"upper_from_strategy", res->upper_is_given);
	json_object_set_new(obj, "search", json_pack("{s:I, s:I, s:I, s:f, s:o}",
		"expanded", (json_int_t)res->expanded, "states", (json_int_t)res->states,
		"bytes", (json_int_t)res->bytes, "seconds", res->seconds,
		"stopped_by", res->stopped_by ? json_string(res->stopped_by) : json_null()));
	json_object_set_new(obj, "strategies", rows);
	json_object_set_new(obj, "bounds", cli_lower_bounds_json(&job->head.lower));
	json_object_set_new(obj, "trace", trace ? json_string(trace) : json_null());
	json_object_set_new(obj, "bugs", bugs);
	return obj;
}

static int print_json(json_t *obj, FILE *out)
{
	int rc = json_dumpf(obj, out, JSON_COMPACT);

	json_decref(obj);
	fputc('\n', out);
	return rc;
}

/* ---- the trace ------------------------------------------------------------- */

/* The best sequence as a trace: the search's moves, or, when the best is
 * a strategy's, that strategy run again into the trace. */
static int write_trace(const struct cli_args *a, struct optimal_job *job,
		       const struct ps_problem *pb, FILE *out, struct ps_error *err)
{
	struct ps_trace_writer w;
	const struct ps_optimal_result *res = &job->res;
	int rc = PS_OK;

	if (res->move_count) {
		/* "-": the command's standard output (captured in a library) */
		if ((rc = ps_trace_open_stream(&w, a->trace, out, pb->att, pb->xdag, pb->M,
					       "optimal", NULL, NULL, true, err)))
			return rc;
		for (size_t k = 0; k < res->move_count && !rc; k++) {
			struct ps_op op = {
				.code = ps_move_opcode(res->moves[k].move),
				.by_id = true,
				.node = res->moves[k].node,
			};

			rc = ps_sink_emit(&w.sink, &op, err);
		}
		return ps_trace_close(&w, rc ? NULL : &job->replay, rc == PS_OK, err) ? err->code : rc;
	}
	if (res->upper_is_given && job->best >= 0) {
		const struct optimal_row *row = &job->rows[job->best];
		struct ps_problem with_order = *pb;
		struct ps_report rep;

		with_order.order = row->order;
		if ((rc = ps_trace_open_stream(&w, a->trace, out, pb->att, pb->xdag, pb->M,
					       row->s->name, NULL, row->order, false, err)))
			return rc;
		rc = ps_run(&with_order, row->s, &w.sink, &rep, err);
		if (!rc && !rep.valid)
			rc = ps_error_set(err, PS_EINVALID, "%s", rep.violation);
		return ps_trace_close(&w, rc ? NULL : &rep.counts, rc == PS_OK, err) ? err->code : rc;
	}
	return ps_error_set(err, PS_EINPUT, "no sequence was found: no trace is written");
}

/* ---- the sweep --------------------------------------------------------------- */

/* The built-in grid: the instances of docs/OPTIMAL.md's table. */
static const struct optimal_instance {
	bool exact;
	uint64_t n, d, g, M;
} grid[] = {
	{ false, 1, 1, 1, 4 }, { false, 1, 1, 1, 5 }, { false, 1, 1, 1, 6 },
	{ false, 1, 2, 1, 7 }, { false, 1, 2, 1, 8 },
	{ false, 1, 2, 2, 9 }, { false, 1, 2, 2, 10 },
	{ false, 2, 1, 1, 6 }, { false, 2, 1, 1, 7 }, { false, 2, 1, 1, 8 },
	{ false, 2, 2, 1, 14 }, { false, 2, 2, 2, 23 }, { false, 3, 2, 2, 30 },
	{ true, 1, 1, 0, 4 }, { true, 1, 2, 0, 4 }, { true, 1, 2, 0, 5 },
	{ true, 2, 1, 0, 5 }, { true, 2, 1, 0, 6 }, { true, 2, 1, 0, 7 }, { true, 2, 1, 0, 8 },
	{ true, 2, 2, 0, 8 },
};

static void csv_row(const struct optimal_instance *in, const struct optimal_job *job,
		    FILE *out)
{
	const struct ps_optimal_result *res = &job->res;
	const struct optimal_row *best = job->best >= 0 ? &job->rows[job->best] : NULL;

	fprintf(out, "%s,%llu,%llu,", in->exact ? "exact" : "approx",
		(unsigned long long)in->n, (unsigned long long)in->d);
	if (in->exact)
		fputc(',', out);
	else
		fprintf(out, "%llu,", (unsigned long long)in->g);
	fprintf(out, "%llu,%s,", (unsigned long long)in->M, status_name(res->status));
	if (res->lower != PS_OPTIMAL_NONE)
		fprintf(out, "%llu", (unsigned long long)res->lower);
	fputc(',', out);
	if (res->upper != PS_OPTIMAL_NONE)
		fprintf(out, "%llu", (unsigned long long)res->upper);
	fprintf(out, ",%s,", best ? best->s->name : "");
	if (best)
		fprintf(out, "%llu", (unsigned long long)best->io);
	fprintf(out, ",%.0f,%s,%llu,%.2f,%zu\n", job->head.lower.best.value,
		job->head.lower.best.name, (unsigned long long)res->states, res->seconds,
		job->bug_count);
}

static int sweep(const struct cli_command *cmd, const struct cli_args *a,
		 const struct ps_optimal_limits *lim, FILE *out, FILE *errout)
{
	json_t *rows = a->json ? json_array() : NULL;
	int status = PS_EXIT_VALID;

	for (int id = OPT_N; id < CLI_OPTION_COUNT; id++)
		if (a->given[id] && id != OPT_SWEEP && id != OPT_JSON && id != OPT_TIME_LIMIT &&
		    id != OPT_MEMORY_LIMIT) {
			char name[64];

			return cli_usage_error(cmd, errout, "option '%s' does not apply with --sweep: the grid is built in",
					       cli_option_name((enum cli_option_id)id, name, sizeof(name)));
		}
	if (!a->json)
		fputs("attention,n,d,g,M,status,lower,upper,best_strategy,best_io,lower_bound,lower_bound_name,states,seconds,bugs\n", out);
	for (size_t k = 0; k < sizeof(grid) / sizeof(grid[0]); k++) {
		const struct optimal_instance *in = &grid[k];
		struct ps_attention_params p = {
			.n = in->n, .d = in->d, .g = in->g, .normalize = true, .exact = in->exact,
		};
		struct ps_attention att;
		struct optimal_job *job = calloc(1, sizeof(*job));
		struct ps_problem pb;
		struct ps_error err;

		ps_error_clear(&err);
		if (!job || ps_attention_init(&att, &p, &err)) {
			free(job);
			fprintf(errout, "pebblesim: %s\n", job ? err.msg : "out of memory");
			json_decref(rows);
			return PS_EXIT_USAGE;
		}
		memset(&pb, 0, sizeof(pb));
		pb.att = &att;
		pb.M = in->M;
		ps_report_init(&job->head, &att, in->M);
		if (run_job(job, &pb, lim, &err)) {
			fprintf(errout, "pebblesim: %s\n", err.msg);
			status = PS_EXIT_USAGE;
		} else {
			if (job->bug_count && status == PS_EXIT_VALID)
				status = PS_EXIT_INVALID;
			for (size_t b = 0; b < job->bug_count; b++)
				fprintf(errout, "pebblesim: bug: %s\n", job->bugs[b]);
			if (rows)
				json_array_append_new(rows, job_json(job, NULL));
			else
				csv_row(in, job, out);
			fflush(out);
		}
		ps_optimal_result_free(&job->res);
		ps_attention_free(&att);
		free(job);
	}
	if (rows && print_json(rows, out))
		status = PS_EXIT_USAGE;
	return status;
}

/* ---- the command ------------------------------------------------------------- */

static int check_args(const struct cli_command *cmd, const struct cli_args *a,
		      bool explicit_dag, FILE *errout)
{
	int rc;

	if ((rc = cli_check_when(cmd, a, explicit_dag, errout)))
		return rc;
	if (!explicit_dag && (rc = cli_check_attention(cmd, a, errout)))
		return rc;
	if (!a->given[OPT_M])
		return cli_usage_error(cmd, errout, "-M is required");
	if (!explicit_dag &&
	    (rc = cli_wants_exact(a) ?
		  cli_require(cmd, a, errout, "the parameters -n, -d and -M are all required",
			      (const enum cli_option_id[]){ OPT_N, OPT_D, OPT_M }, 3) :
		  cli_require(cmd, a, errout, "the parameters -n, -d, -g and -M are all required",
			      (const enum cli_option_id[]){ OPT_N, OPT_D, OPT_G, OPT_M }, 4)))
		return rc;
	return 0;
}

int cmd_optimal(const struct cli_command *cmd, const struct cli_args *a,
		FILE *out, FILE *errout)
{
	struct ps_optimal_limits lim = { 0, 0, PS_OPTIMAL_NONE };
	bool explicit_dag = a->dag_file != NULL;
	struct cli_dag_read how = { NULL, NULL };
	struct ps_attention att;
	struct ps_explicit xdag;
	struct optimal_job *job;
	struct ps_problem pb;
	struct ps_error err;
	int status, rc;

	if ((rc = search_bytes(cmd, a, &lim.bytes, errout)))
		return rc;
	lim.seconds = a->given[OPT_TIME_LIMIT] ? a->time_limit :
		      a->sweep ? OPTIMAL_SWEEP_SECONDS : OPTIMAL_SECONDS;
	if (a->sweep)
		return sweep(cmd, a, &lim, out, errout);
	if ((rc = check_args(cmd, a, explicit_dag, errout)))
		return rc;
	ps_error_clear(&err);
	/* the trace must not overwrite the DAG it pebbles (docs/SECURITY.md) */
	if (a->trace && explicit_dag && ps_output_check_inputs(a->trace, &a->dag_file, 1, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	rc = explicit_dag ? cli_read_dag(a, &xdag, &how, errout)
			  : cli_build_attention(a, &att, false, errout);
	if (rc)
		return rc;
	job = calloc(1, sizeof(*job));
	if (!job) {
		fprintf(errout, "pebblesim: out of memory\n");
		status = PS_EXIT_USAGE;
		goto out;
	}
	cli_problem(a, explicit_dag ? NULL : &att, explicit_dag ? &xdag : NULL, &pb);
	if (explicit_dag) {
		ps_report_init_explicit(&job->head, &xdag, a->dag_file, a->M);
		job->head.dag_format = how.format;
		job->head.dag_note = how.note;
	} else {
		ps_report_init(&job->head, &att, a->M);
	}
	if (run_job(job, &pb, &lim, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		status = PS_EXIT_USAGE;
		goto out;
	}
	status = job->bug_count ? PS_EXIT_INVALID : PS_EXIT_VALID;
	if (a->trace && (rc = write_trace(a, job, &pb, out, &err))) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		status = rc == PS_EINVALID ? PS_EXIT_INVALID : PS_EXIT_USAGE;
	}
	/* the trace owns standard output */
	if (!a->trace || strcmp(a->trace, "-")) {
		if (a->json) {
			if (print_json(job_json(job, a->trace), out))
				status = PS_EXIT_USAGE;
		} else {
			print_text(job, a->trace, out);
		}
	}
	for (size_t b = 0; b < job->bug_count; b++)
		fprintf(errout, "pebblesim: bug: %s\n", job->bugs[b]);
out:
	if (job)
		ps_optimal_result_free(&job->res);
	free(job);
	if (explicit_dag)
		ps_explicit_free(&xdag);
	else
		ps_attention_free(&att);
	return status;
}

const struct cli_help optimal_help = {
	"optimal -n N -d D -g G -M M [--attention approx|exact] [--no-normalize]\n"
	"       [--time-limit S] [--memory-limit B] [--trace FILE] [--json]\n"
	"       pebblesim optimal --dag FILE|- -M M [...]\n"
	"       pebblesim optimal --sweep [--time-limit S] [--memory-limit B] [--json]",
	"the exact least I/O of a small instance by search, beside every strategy and bound",
	"Finds the least I/O (loads + saves) of any valid sequence of the game of\n"
	"MODEL.md section 2, partial aggregation included, on a small DAG: A* over\n"
	"the game's states (red set, blue set, each sum's aggregated in-edges),\n"
	"move by move, or on a DAG without sums by compute steps (the evictions\n"
	"and loads one compute needs, then the compute), with a heuristic that\n"
	"never overestimates and only pruning that keeps an optimal sequence\n"
	"(docs/OPTIMAL.md proves both). The best strategy's I/O is its first\n"
	"upper bound: a search that finds nothing cheaper proves that strategy\n"
	"optimal.\n"
	"\n"
	"It prints \"optimal\" with the least I/O, or, when --time-limit or\n"
	"--memory-limit stops it first, \"bracketed\" with the proven lower bound\n"
	"(the smallest f-value still open) and the best I/O found; \"infeasible\"\n"
	"when no sequence fits in M. Beside it: every strategy's I/O and every\n"
	"lower bound that applies. A strategy below the optimum or a bound above\n"
	"it is a bug: the command says so and exits 1. --trace writes the best\n"
	"sequence, which `pebblesim validate` replays with the same count.\n"
	"\n"
	"The search takes DAGs of up to 1024 nodes that hold pebbles; in 60 s and\n"
	"1 GiB it settles DAGs of some 50 such nodes near the least M when the\n"
	"optimum is close to its heuristic, and brackets harder ones\n"
	"(docs/OPTIMAL.md has its reach). --sweep runs the built-in grid of\n"
	"docs/OPTIMAL.md's table.\n"
	"Exit status: 0 optimal, bracketed or infeasible, 1 a bug found, 2 bad usage.\n",
	"  pebblesim optimal -n 1 -d 1 -g 1 -M 4\n"
	"      the least I/O of the smallest approximate-attention DAG: 9\n"
	"  pebblesim optimal -n 2 -d 2 -g 1 -M 14 --trace best.jsonl\n"
	"  pebblesim validate best.jsonl\n"
	"      an optimal sequence, written and replayed\n"
	"  pebblesim optimal --dag examples/tree.graphml -M 4 --time-limit 10\n"
	"      a binary tree from a file, the search stopped after 10 s\n"
	"  pebblesim optimal --sweep --time-limit 5 > optimal.csv\n"
	"      the grid as CSV, 5 s an instance\n",
};
