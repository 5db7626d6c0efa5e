/*
 * pebblesim run (the default command): build the attention DAG or read
 * one, run a strategy, validate every move in the engine, report.
 */
#include "cli.h"

#include <string.h>

#include "pebblesim/engine.h"
#include "pebblesim/output.h"
#include "pebblesim/trace.h"

const struct cli_option run_options[] = {
	CLI_OPT_N("rows of Q, K, V (the sequence length), N >= 1"),
	CLI_OPT_D,
	CLI_OPT_G,
	CLI_OPT_M("fast memory capacity in words (red pebbles), M >= 1"),
	CLI_OPT_NO_NORMALIZE,
	CLI_OPT_CAUSAL,
	CLI_OPT_DECODE,
	CLI_OPT_ATTENTION,
	{ OPT_CASE, 0, "case", CLI_STRING, offsetof(struct cli_args, case_name), 0, CLI_ATTENTION_ONLY, "C",
	  "I, II, III, IV or auto (the default): the algorithm of the\n"
	  "theorem of the paper's case C: I caseI, II keylemma, III\n"
	  "generic (or subtile where Lemma 3.3's premise holds, the\n"
	  "cheaper), IV generic or matmul, the cheaper; auto classifies\n"
	  "the parameters first. Outside its case's condition the\n"
	  "algorithm still runs, with a warning. The cases are of the\n"
	  "non-causal DAG: with --causal, best runs (auto only)" },
	{ OPT_STRATEGY, 0, "strategy", CLI_STRING, offsetof(struct cli_args, strategy), 0, 0, "NAME",
	  "a strategy by name, overriding --case (`pebblesim list`);\n"
	  "best runs the one with the least predicted I/O; with --dag,\n"
	  "lru (the default), belady, or best (or portfolio): the\n"
	  "least I/O of belady and lru over nine orders and a local\n"
	  "search, naming the member that won" },
	{ OPT_W, 0, "w", CLI_COUNT, offsetof(struct cli_args, w), 1, CLI_ATTENTION_ONLY, "W",
	  "keylemma, best: the generating set size (g <= W <= D,\n"
	  "W tau(W) <= M/4; with --sizes tuned any W from g to D)\n"
	  "instead of the cheapest" },
	{ OPT_TILES, 0, "tiles", CLI_STRING, offsetof(struct cli_args, tiles), 0, CLI_ATTENTION_ONLY, "SHAPE",
	  "generic, best: square, tall or unit instead of the cheapest" },
	{ OPT_SIZES, 0, "sizes", CLI_STRING, offsetof(struct cli_args, sizes), 0, CLI_ATTENTION_ONLY, "S",
	  "caseI, generic, keylemma, subtile, matmul: proof (the\n"
	  "default: the proof's M/4 sizes and its upper bound) or\n"
	  "tuned (each tile size chosen by the cost model within M;\n"
	  "no bound is claimed)" },
	{ OPT_LAYOUT, 0, "layout", CLI_STRING, offsetof(struct cli_args, layout), 0, CLI_ATTENTION_ONLY, "L",
	  "colpass: rect-dup, rect-save or tail instead of the\n"
	  "cheapest that fits M" },
	CLI_OPT_DAG("a DAG from a file (GraphML, GML, an edge list, .hdag\n"
		    "or a lower-triangular .mtx;\n"
		    "- for standard input) instead of the attention DAG:\n"
		    "-n, -d, -g, --case, --w, --tiles, --sizes, --layout\n"
		    "do not apply"),
	CLI_OPT_DAG_FORMAT,
	CLI_OPT_IGNORE_WEIGHTS,
	{ OPT_TIME_LIMIT, 0, "time-limit", CLI_REAL, offsetof(struct cli_args, time_limit), 0, CLI_DAG_ONLY, "S",
	  "best on a DAG from a file: the local search's budget in\n"
	  "seconds (default 3)" },
	{ OPT_ORDER, 0, "order", CLI_STRING, offsetof(struct cli_args, order), 0, 0, "O",
	  "lru, belady: topo (igraph's topological sort, the default)\n"
	  "or dfs (depth-first post-order from the outputs)" },
	CLI_OPT_JSON("print the report as one JSON object\n"
		     "(docs/pebblesim.schema.json)"),
	{ OPT_DRY_RUN, 0, "dry-run", CLI_FLAG, offsetof(struct cli_args, dry_run), 0, 0, NULL,
	  "print the sizes, the memory a run would take, the case,\n"
	  "the plan and its predicted I/O, without validating" },
	CLI_OPT_ELEMENT_PATH,
	{ OPT_TRACE, 0, "trace", CLI_STRING, offsetof(struct cli_args, trace), 0, 0, "FILE",
	  "write the sequence as JSON Lines, one set operation a\n"
	  "line (docs/TRACE_FORMAT.md); - for standard output (the\n"
	  "report then goes to standard error)" },
	{ OPT_TRACE_DETAIL, 0, "trace-detail", CLI_STRING, offsetof(struct cli_args, trace_detail), 0, 0, "D",
	  "set (the default) or elementary: one line per move" },
	CLI_OPT_VALUES_ALL("run with numbers (docs/VALUES.md): the outputs, their\n"
			   "distance to a direct evaluation, and epsilon =\n"
			   "max |A - softmax(Q K^T / sqrt d) V|"),
	{ OPT_TRACE_LIMIT, 0, "trace-limit", CLI_SIZE, offsetof(struct cli_args, trace_limit), 0, 0, "N",
	  "refuse a trace of more than N lines, counted before\n"
	  "anything is written (default 20000000 lines, a\n"
	  "gigabyte or two); 0 for no limit" },
	CLI_OPT_PROGRESS("naming the strategy and the point every 10 s\nof a long run"),
	CLI_OPT_PLUGIN,
	CLI_OPT_HELP,
	CLI_OPT_END,
};

/* The strategy --strategy or --case asks for; NULL after a message. With
 * --case, why says which of the case's algorithms runs and why. */
static const struct ps_strategy *select_strategy(const struct cli_args *a,
						 const struct ps_problem *pb,
						 char *why, size_t len,
						 FILE *errout)
{
	char reason[512], names[256];
	const char *actual, *wanted;
	const struct ps_strategy *s;
	struct ps_error err;

	why[0] = '\0';
	if (a->strategy) {
		/* best on a DAG from a file is the portfolio of its policies */
		s = ps_strategy_find(!pb->att && !strcmp(a->strategy, "best") ? "portfolio"
									: a->strategy);
		if (!s) {
			const char *near = cli_nearest_strategy(a->strategy, false);

			ps_strategy_names(names, sizeof(names));
			fprintf(errout, "pebblesim: unknown strategy '%s'; %s%s%sknown: %s\n",
				a->strategy, near ? "did you mean '" : "", near ? near : "",
				near ? "'? " : "", names);
		}
		return s;
	}
	if (!pb->att) {
		/* an explicit DAG: the first strategy of the registry for one */
		for (size_t k = 0; k < ps_strategy_count; k++)
			if (ps_strategies[k]->flags & PS_STRATEGY_EXPLICIT)
				return ps_strategies[k];
		fprintf(errout, "pebblesim: no strategy pebbles a DAG from a file\n");
		return NULL;
	}
	if (pb->att->exact) /* FlashAttention, by default; flash-decoding's order */
		return ps_strategy_find(pb->att->decode ? "flash-decode" : "flash");
	/* the paper's cases are of the non-causal DAG: the causal one runs
	 * the cheapest of its strategies */
	if (pb->att->causal && a->case_name && strcmp(a->case_name, "auto")) {
		fprintf(errout, "pebblesim: --case %s: the paper's cases are of non-causal attention; the causal DAG runs --strategy best by default\n",
			a->case_name);
		return NULL;
	}
	if (pb->att->decode) /* approximate decoding: its one strategy */
		return ps_strategy_find("recurrent-decode");
	if (pb->att->causal)
		return ps_strategy_find("best");
	actual = ps_classify_case(pb->att, a->M, reason, sizeof(reason));
	wanted = !a->case_name || !strcmp(a->case_name, "auto") ? actual : a->case_name;
	if (strcmp(wanted, actual))
		fprintf(errout, "pebblesim: warning: the parameters are in Case %s (%s), not Case %s; running its algorithm anyway\n",
			actual, reason, wanted);
	ps_error_clear(&err);
	s = ps_case_algorithm(wanted, pb, why, len, &err);
	if (!s)
		fprintf(errout, "pebblesim: %s\n", err.msg);
	return s;
}

/*
 * Opens the trace --trace asks for. One rule for every trace, set or
 * elementary, of the attention DAG or a file's: its lines are counted by
 * running the strategy into a counter first, and more than --trace-limit
 * are refused before anything is written. The header names the strategy
 * that runs, with its parameters.
 */
static int open_trace(const struct cli_args *a, const struct ps_problem *pb,
		      const struct ps_strategy *s, struct ps_trace_writer *writer,
		      FILE *out, FILE *errout)
{
	bool elementary = a->trace_detail && !strcmp(a->trace_detail, "elementary");
	uint64_t limit = a->given[OPT_TRACE_LIMIT] ? a->trace_limit : CLI_TRACE_MAX_LINES;
	struct ps_plan plan;
	struct ps_error err;

	ps_error_clear(&err);
	if (ps_strategy_plan(s, pb, &plan, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	if (limit) {
		struct ps_count_sink counter;
		uint64_t lines;

		ps_count_sink_init(&counter);
		/* the header and the end line besides the operations */
		if (ps_strategy_run(s, pb, &counter.sink, &err) == 0 &&
		    (lines = (elementary ? counter.moves : counter.ops) + 2) > limit) {
			fprintf(errout, "pebblesim: %s trace of this run would have %llu lines; the limit is %llu lines: raise it with --trace-limit N (0 for none)%s, or choose smaller parameters\n",
				elementary ? "an elementary" : "a",
				(unsigned long long)lines, (unsigned long long)limit,
				elementary ? ", write the set-operation trace (the default)" : "");
			return PS_EXIT_USAGE;
		}
	}
	/* "-" is the command's standard output: captured under ps_script_command */
	if (ps_trace_open_stream(writer, a->trace, out, pb->att, pb->xdag, pb->M,
				 plan.chosen ? plan.chosen->name : s->name, &plan,
				 pb->xdag && ps_strategy_takes(s, PS_TAKES_ORDER) ?
				 (pb->order ? pb->order : "topo") : NULL,
				 elementary, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	return 0;
}

static int dry_run(const struct cli_args *a, const struct ps_problem *pb,
		   const struct ps_strategy *s, const char *algorithm,
		   const struct cli_dag_read *how, FILE *out, FILE *errout)
{
	const struct ps_dag *dag = pb->att ? &pb->att->dag : &pb->xdag->dag;
	struct cli_dry_run dr = {
		.s = s, .dag = dag, .algorithm = algorithm,
	};
	struct ps_report rep;
	struct ps_error err;

	if (pb->att)
		ps_report_init(&rep, pb->att, pb->M);
	else
		ps_report_init_explicit(&rep, pb->xdag, a->dag_file, pb->M);
	rep.dag_format = how->format;
	rep.dag_note = how->note;
	ps_error_clear(&err);
	if (ps_strategy_plan(s, pb, &rep.plan, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	/* a chooser's plan is its choice's: its tables and state too */
	dr.state_bytes = ps_plan_state_bytes(&rep.plan, dag);
	/* what this process holds now, not its peak: the peak counts the
	 * parent's memory up to exec (a dry run started from Python) */
	if (ps_add_u64(ps_resident_bytes(), dr.state_bytes, &dr.rss_bytes) ||
	    ps_add_u64(dr.rss_bytes, rep.plan.work_bytes, &dr.rss_bytes))
		dr.rss_bytes = UINT64_MAX;
	dr.rep = &rep;
	cli_dry_run_print(&dr, a->json, out);
	return PS_EXIT_VALID;
}

/* What run refuses before it builds anything. */
static int check_args(const struct cli_command *cmd, const struct cli_args *a,
		      FILE *errout)
{
	bool dag = a->dag_file != NULL;
	int rc = cli_check_when(cmd, a, dag, errout);

	if (rc)
		return rc;
	if (dag && !a->given[OPT_M])
		return cli_usage_error(cmd, errout, "-M is required");
	if ((rc = cli_check_attention(cmd, a, errout)))
		return rc;
	if (!dag && cli_wants_exact(a) &&
	    (rc = cli_require(cmd, a, errout, "exact attention needs -n, -d and -M",
			      (const enum cli_option_id[]){ OPT_N, OPT_D, OPT_M }, 3)))
		return rc;
	if (!dag && !cli_wants_exact(a) &&
	    (rc = cli_require(cmd, a, errout, "the parameters -n, -d, -g and -M are all required",
			      (const enum cli_option_id[]){ OPT_N, OPT_D, OPT_G, OPT_M }, 4)))
		return rc;
	if (!a->trace && (a->given[OPT_TRACE_DETAIL] || a->given[OPT_TRACE_LIMIT]))
		return cli_usage_error(cmd, errout, "option '%s' applies only with --trace FILE",
				       a->given[OPT_TRACE_DETAIL] ? "--trace-detail" : "--trace-limit");
	if (a->dry_run && a->trace)
		return cli_usage_error(cmd, errout,
				       "option '--trace' does not apply with --dry-run: a dry run emits no sequence");
	if (a->dry_run && a->values)
		return cli_usage_error(cmd, errout,
				       "option '--values' does not apply with --dry-run: a dry run computes nothing");
	if (a->trace && a->values_output && !strcmp(a->trace, a->values_output))
		return cli_usage_error(cmd, errout, "--trace and --output name the same file");
	if (a->trace_detail && strcmp(a->trace_detail, "set") &&
	    strcmp(a->trace_detail, "elementary"))
		return cli_usage_error(cmd, errout, "unknown trace detail '%s': set or elementary",
				       a->trace_detail);
	if (a->case_name && strcmp(a->case_name, "auto") && strcmp(a->case_name, "I") &&
	    strcmp(a->case_name, "II") && strcmp(a->case_name, "III") &&
	    strcmp(a->case_name, "IV"))
		return cli_usage_error(cmd, errout, "unknown case '%s': I, II, III, IV or auto",
				       a->case_name);
	if (a->order && strcmp(a->order, "topo") && strcmp(a->order, "dfs"))
		return cli_usage_error(cmd, errout, "unknown order '%s': topo or dfs", a->order);
	if (a->layout && strcmp(a->layout, "rect-dup") && strcmp(a->layout, "rect-save") &&
	    strcmp(a->layout, "tail"))
		return cli_usage_error(cmd, errout, "unknown layout '%s': rect-dup, rect-save or tail",
				       a->layout);
	return 0;
}

int cmd_run(const struct cli_command *cmd, const struct cli_args *a,
		   FILE *out, FILE *errout)
{
	const struct ps_strategy *s;
	struct ps_trace_writer writer;
	struct ps_attention att;
	struct ps_explicit xdag;
	char label[160];
	struct ps_problem pb;
	struct ps_report rep;
	struct ps_error err;
	struct ps_values vals;
	struct ps_values_inputs inputs;
	bool explicit_dag = a->dag_file != NULL, has_values = false, failed;
	char algorithm[sizeof(rep.algorithm)];
	struct cli_dag_read how = { NULL, NULL };
	uint64_t min_m;
	int rc, status;

	if ((rc = check_args(cmd, a, errout)))
		return rc;
	ps_error_clear(&err);
	if (explicit_dag)
		rc = cli_read_dag(a, &xdag, &how, errout);
	else
		rc = cli_build_attention(a, &att, true, errout);
	if (rc)
		return rc;
	cli_problem(a, explicit_dag ? NULL : &att, explicit_dag ? &xdag : NULL, &pb);
	if (a->given[OPT_TIME_LIMIT])
		pb.time_limit = a->time_limit;
	status = PS_EXIT_USAGE;
	s = select_strategy(a, &pb, algorithm, sizeof(algorithm), errout);
	if (!s || cli_check_strategy(a, s, explicit_dag, errout))
		goto done;
	min_m = explicit_dag ? ps_strategy_min_memory_explicit(s, &pb)
			     : ps_strategy_min_memory_kept(s, &att);
	if (a->M < min_m) {
		struct ps_plan why;
		struct ps_error not_served;

		/* a strategy of another DAG (causal, decoding) says which */
		if (!explicit_dag && !ps_strategy_serves(s, &att) &&
		    ps_strategy_plan(s, &pb, &why, &not_served))
			fprintf(errout, "pebblesim: %s\n", not_served.msg);
		else if (min_m == UINT64_MAX)
			fprintf(errout, "pebblesim: %s does not apply to these parameters at any M\n",
				s->name);
		else
			fprintf(errout, "pebblesim: M = %llu is too small for %s on this DAG: it needs M >= %llu\n",
				(unsigned long long)a->M, s->name,
				(unsigned long long)min_m);
		goto done;
	}
	if (a->dry_run) {
		status = dry_run(a, &pb, s, algorithm, &how, out, errout);
		goto done;
	}
	/* before the trace's count and the values' arrays: the cheap check
	 * first, so that a run too large is refused at once */
	if (ps_run_fits(&pb, s, a->values, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		goto done;
	}
	if (a->values) {
		if (cli_values_inputs(cmd, a, &inputs, errout))
			goto done;
		if (ps_values_init(&vals, &att, &inputs, &err)) {
			fprintf(errout, "pebblesim: %s\n", err.msg);
			goto done;
		}
		has_values = true;
		pb.values = &vals;
	}
	if (a->trace && open_trace(a, &pb, s, &writer, out, errout))
		goto done;
	pb.progress = cli_progress_stream(a, errout);
	pb.progress_label = cli_progress_label(s, a->sizes, a->dag_file ? NULL : &att, a->M,
					       label, sizeof(label));
	rc = ps_run(&pb, s, a->trace ? &writer.sink : NULL, &rep, &err);
	if (a->trace) {
		struct ps_error werr;

		/* the end line states the counts of a valid sequence only */
		if (ps_trace_close(&writer, rc == 0 && rep.valid ? &rep.counts : NULL,
				   rc == 0, &werr) && rc == 0) {
			fprintf(errout, "pebblesim: %s\n", werr.msg);
			goto done;
		}
		/* the trace owns standard output */
		if (!strcmp(a->trace, "-"))
			out = errout;
	}
	if (rc) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		status = rc == PS_EINVALID ? PS_EXIT_INVALID : PS_EXIT_USAGE;
		goto done;
	}
	rep.dag_name = a->dag_file;
	rep.dag_format = how.format;
	rep.dag_note = how.note;
	snprintf(rep.algorithm, sizeof(rep.algorithm), "%s", algorithm);
	failed = ps_report_failed(&rep);
	ps_report_cheapest(&rep);
	if (rep.has_values && cli_write_outputs(a, &vals, failed, errout))
		goto done;
	if (rep.has_values && !failed)
		rep.values_output = a->values_output;
	if (a->json)
		cli_report_print_json(&rep, out);
	else
		cli_report_print(&rep, out);
	cli_values_warn(&rep, errout);
	status = failed ? PS_EXIT_INVALID : PS_EXIT_VALID;
done:
	if (has_values)
		ps_values_free(&vals);
	if (explicit_dag)
		ps_explicit_free(&xdag);
	else
		ps_attention_free(&att);
	return status;
}

const struct cli_help run_help = {
	"[run] -n N -d D -g G -M M [--case C | --strategy NAME] [OPTIONS]\n"
	"       pebblesim [run] --attention exact -n N -d D -M M [--strategy flash|exact-matmul] [OPTIONS]\n"
	"       pebblesim run --dag FILE|- -M M [--strategy lru|belady|best] [--order topo|dfs] [--time-limit S] [OPTIONS]",
	"build the DAG, run a strategy, validate every move, report (the default)",
	"Builds the approximate-attention DAG for n, d, g (or reads a DAG with\n"
	"--dag), runs the strategy of the paper's case (or the one named), validates\n"
	"every move of its sequence in the engine, and prints the case, the\n"
	"strategy and its plan, loads, saves, I/O, the cost model's prediction,\n"
	"the loads and saves of each array (Q, K, V, U1, U2, H, N, A: where the\n"
	"I/O goes, beside the cost model's breakdown), peak red pebbles, and the\n"
	"paper's bounds with their ratios.\n",
	"  pebblesim --case II -n 4096 -d 16 -g 3 -M 8k\n"
	"      Case II's group tiling (Key Lemma 3.2) on 4096 tokens, 16 features\n"
	"  pebblesim --strategy generic --tiles square -n 64 -d 4 -g 2 -M 100 --json\n"
	"      Lemma 3.1's square tiles, the report as JSON\n"
	"  pebblesim -n 64k -d 16 -g 3 -M 2^13 --dry-run\n"
	"      what a long context would take and predict, without running it\n"
	"  pebblesim --case II -n 64 -d 4 -g 2 -M 100 --trace run.jsonl\n"
	"      write the pebbling sequence as JSON Lines\n"
	"  pebblesim dag -n 8 -d 3 -g 2 | pebblesim run --dag - -M 64 --strategy belady\n"
	"      a DAG from standard input, its format told by its content\n"
	"  pebblesim run --dag instance_k-means.hdag -M 4 --strategy best\n"
	"      OneStopParallel's k-means DAG, the best of the portfolio\n"
	"  pebblesim --attention exact -n 4096 -d 16 -M 8k\n"
	"      FlashAttention on exact attention, the same n, d and M\n"
	"  pebblesim --case II -n 4096 -d 16 -g 3 -M 8k --values --output A.npy\n"
	"      the same run with numbers: epsilon, and the outputs as .npy\n",
};
