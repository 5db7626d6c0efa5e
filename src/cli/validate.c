/*
 * pebblesim validate FILE: replay any trace in the engine and report its
 * counts, or the first rule it breaks.
 */
#include "cli.h"

#include <errno.h>
#include <string.h>

#include "pebblesim/trace.h"

const struct cli_option validate_options[] = {
	CLI_OPT_M("validate under this fast memory instead of the header's"),
	CLI_OPT_N("with -d and -g: insist that the header names this DAG"),
	CLI_OPT_D,
	CLI_OPT_G,
	CLI_OPT_NO_NORMALIZE,
	CLI_OPT_CAUSAL,
	CLI_OPT_DECODE,
	CLI_OPT_DAG("the trace pebbles this DAG file (GraphML, GML or an\n"
		    "edge list), its moves naming vertex ids"),
	CLI_OPT_DAG_FORMAT,
	CLI_OPT_IGNORE_WEIGHTS,
	CLI_OPT_JSON("print the report as one JSON object\n"
		     "(docs/pebblesim.schema.json)"),
	CLI_OPT_ELEMENT_PATH,
	{ OPT_MAX_MOVES, 0, "max-moves", CLI_SIZE, offsetof(struct cli_args, max_moves), 0, 0, "N",
	  "refuse a trace once it makes more than N elementary\n"
	  "moves (default 64 a node of the declared DAG, at least\n"
	  "16M = 16777216); 0 for no limit" },
	CLI_OPT_VALUES_ALL("replay with numbers (docs/VALUES.md): the outputs,\n"
			   "their distance to a direct evaluation, and epsilon"),
	CLI_OPT_PROGRESS("every 10 s of a long replay"),
	CLI_OPT_HELP,
	CLI_OPT_END,
};

int cmd_validate(const struct cli_command *cmd, const struct cli_args *a,
		 FILE *out, FILE *errout)
{
	const char *path = a->operands[0];
	struct cli_dag_read how = { NULL, NULL };
	struct ps_attention_params expect = {
		.n = a->n, .d = a->d, .g = a->g, .normalize = !a->no_normalize,
		.causal = a->causal, .decode = a->decode,
	};
	bool insist = a->given[OPT_N] || a->given[OPT_D] || a->given[OPT_G] ||
		      a->causal || a->given[OPT_DECODE];
	struct ps_replay replay;
	struct ps_report rep;
	struct ps_error err;
	struct ps_explicit xdag;
	struct ps_values vals;
	struct ps_values_inputs inputs;
	FILE *f;
	double start = ps_now_seconds();
	bool failed;
	int rc;

	if ((rc = cli_check_when(cmd, a, a->dag_file != NULL, errout)))
		return rc;
	if (insist && !(a->given[OPT_N] && a->given[OPT_D] && a->given[OPT_G]))
		return cli_usage_error(cmd, errout,
				       "-n, -d and -g go together (with --causal and --decode): the DAG the trace must name");
	if (a->dag_file && !strcmp(a->dag_file, "-") && !strcmp(path, "-"))
		return cli_usage_error(cmd, errout,
				       "the trace and the DAG cannot both come from standard input");
	if (a->values && cli_values_inputs(cmd, a, &inputs, errout))
		return PS_EXIT_USAGE;
	ps_error_clear(&err);
	if (a->dag_file && cli_read_dag(a, &xdag, &how, errout))
		return PS_EXIT_USAGE;
	f = strcmp(path, "-") ? fopen(path, "r") : cli_stdin();
	if (!f) {
		if (a->dag_file)
			ps_explicit_free(&xdag);
		fprintf(errout, "pebblesim: cannot open trace '%s': %s\n", path,
			strerror(errno));
		return PS_EXIT_USAGE;
	}
	rc = ps_trace_replay_with(f, path, &(const struct ps_replay_options){
					  .M = a->given[OPT_M] ? a->M : 0,
					  .expect = insist ? &expect : NULL,
					  .xdag = a->dag_file ? &xdag : NULL,
					  .element_only = a->element_path,
					  .inputs = a->values ? &inputs : NULL, .vals = &vals,
					  .max_moves = !a->given[OPT_MAX_MOVES] ? 0 :
						       a->max_moves ? a->max_moves : UINT64_MAX,
					  .progress = cli_progress_stream(a, errout),
				  }, &replay, &err);
	if (f != cli_stdin())
		fclose(f);
	if (rc) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		if (a->values)
			ps_values_free(&vals);
		ps_replay_free(&replay);
		if (a->dag_file)
			ps_explicit_free(&xdag);
		return PS_EXIT_USAGE;
	}
	if (a->dag_file)
		ps_report_init_explicit(&rep, &xdag, a->dag_file, replay.header.M);
	else
		ps_report_init(&rep, &replay.att, replay.header.M);
	rep.dag_format = how.format;
	rep.dag_note = how.note;
	rep.seconds = ps_now_seconds() - start;
	rep.source = path;
	rep.lines = replay.lines;
	rep.has_end = replay.has_end;
	rep.strategy = replay.header.strategy[0] ? replay.header.strategy : "(not named)";
	rep.counts = replay.counts;
	rep.ops = replay.ops;
	rep.valid = replay.valid;
	rep.rule = replay.rule;
	snprintf(rep.violation, sizeof(rep.violation), "%s", replay.violation);
	if (replay.has_values) {
		rep.has_values = true;
		rep.values = replay.values;
		rep.inputs = &inputs;
	}
	cli_replay_plan(&replay, a->dag_file ? &xdag : NULL, &rep);
	ps_report_cheapest(&rep);
	failed = ps_report_failed(&rep);
	if (replay.has_values && cli_write_outputs(a, &vals, failed, errout)) {
		rc = PS_EXIT_USAGE;
		goto done;
	}
	if (replay.has_values && !failed)
		rep.values_output = a->values_output;
	if (a->json)
		cli_report_print_json(&rep, out);
	else
		cli_report_print(&rep, out);
	cli_values_warn(&rep, errout);
	rc = failed ? PS_EXIT_INVALID : PS_EXIT_VALID;
done:
	if (a->values)
		ps_values_free(&vals);
	ps_replay_free(&replay);
	if (a->dag_file)
		ps_explicit_free(&xdag);
	return rc;
}

const struct cli_help validate_help = {
	"validate [-M M] [-n N -d D -g G [--no-normalize]] [--dag FILE] [--json] [--max-moves N]\n"
	"                 [--values [--q Q.npy --k K.npy --v V.npy | --seed S --entry-bound B] [--output A.npy]] TRACE|-",
	"replay a trace (any program's) in the engine: its counts, or the first broken rule",
	"Replays a trace (JSON Lines, docs/TRACE_FORMAT.md; - for standard input)\n"
	"in the engine, one line at a time, and prints the same report as a run:\n"
	"its counts, or the first broken rule as TRACE:LINE: move node: rule. When\n"
	"the header names a strategy pebblesim knows, the report adds its plan,\n"
	"prediction and upper bound for the header's parameters. A line may name\n"
	"a set over the whole DAG: past --max-moves elementary moves (by default\n"
	"64 a node of the DAG the header declares) the trace is refused.\n",
	"  pebblesim validate run.jsonl\n"
	"      the counts of a trace, checked move by move\n"
	"  pebblesim validate -M 60 run.jsonl\n"
	"      the first rule it breaks with less fast memory\n"
	"  pebblesim validate --dag examples/tree.graphml --json tree.jsonl\n"
	"      a trace of a DAG from a file, the report as JSON\n"
	"  pebblesim validate --values --q Q.npy --k K.npy --v V.npy --output A.npy run.jsonl\n"
	"      replay with numbers from files, and write the outputs\n"
	"  pebblesim validate -- -odd-name.jsonl\n"
	"      a file whose name starts with a dash\n",
};
