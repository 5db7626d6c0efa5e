/*
 * pebblesim's command line: parse, build the DAG, run, report.
 *
 * A command table in the manner of git: `run` (the default), `compare`,
 * `list`; every command parses the same options.
 */
#include "pebblesim/cli.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/attention.h"
#include "pebblesim/bounds.h"
#include "pebblesim/engine.h"
#include "pebblesim/explicit.h"
#include "pebblesim/output.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "pebblesim/trace.h"

static const char usage_text[] =
	"usage: pebblesim [--case I|II|III|IV|auto | --strategy NAME] -n N -d D -g G -M M\n"
	"                 [--w W] [--tiles SHAPE] [--no-normalize] [--json] [--dry-run]\n"
	"                 [--trace FILE|-] [--trace-detail set|elementary]\n"
	"       pebblesim compare -n N -d D -g G -M M [--no-normalize] [--json]\n"
	"       pebblesim validate FILE|- [-M M] [-n N -d D -g G [--no-normalize]] [--json]\n"
	"       pebblesim run --dag FILE -M M [--strategy lru|belady] [--order topo|dfs]\n"
	"                 [--trace FILE|-] [--json]\n"
	"       pebblesim validate FILE --dag DAGFILE [-M M] [--json]\n"
	"       pebblesim dag -n N -d D -g G [--no-normalize] [--format graphml|dot|edgelist] [-o FILE]\n"
	"       pebblesim list\n"
	"       pebblesim --help | --version\n";

static const char help_text[] =
	"pebblesim plays the red-blue pebble game (Hong and Kung; with partial\n"
	"aggregation) on the DAG of approximate attention, A = D^-1 U1 (U2^T V)\n"
	"(Alman and Song), runs a tiling strategy from \"Approaching I/O-optimality\n"
	"for Approximate Attention\", validates every move of its sequence, and sets\n"
	"the loads and saves beside the paper's bounds.\n"
	"\n"
	"Parameters:\n"
	"  -n N              rows of Q, K, V (sequence length), N >= 1\n"
	"  -d D              features (columns of Q, K, V), D >= 1\n"
	"  -g G              degree of the polynomial replacing exp, 0 <= G <= 64;\n"
	"                    U1 and U2 have r = C(D+G, G) columns\n"
	"  -M M              fast memory capacity in words (red pebbles)\n"
	"  --no-normalize    compute U1 (U2^T V) without the normaliser column\n"
	"                    and D^-1: the outputs are N instead of A\n"
	"\n"
	"Choosing the strategy:\n"
	"  --case C          the strategy of the paper's case C: I caseI, II keylemma,\n"
	"                    III subtile, IV matmul; auto (the default) classifies\n"
	"                    the parameters first. Outside its case's condition a\n"
	"                    strategy still runs, with a warning.\n"
	"  --strategy NAME   a strategy by name, overriding --case; `pebblesim list`\n"
	"                    shows them with the paper's section each implements;\n"
	"                    auto runs the one with the least I/O\n"
	"  --w W             keylemma: the generating set size (g <= W <= D,\n"
	"                    W tau(W) <= M/4) instead of the cheapest\n"
	"  --tiles SHAPE     generic: square, tall or unit instead of the cheapest\n"
	"  --json            print the report as one JSON object (compare: an array)\n"
	"  --dry-run         print the sizes, the memory a run would take, the case,\n"
	"                    the plan and its predicted I/O, without validating\n"
	"  --element-path    validate move by move, without the block path (the same\n"
	"                    verdicts, slower: for cross-checks and benchmarks)\n"
	"\n"
	"Traces (JSON Lines, docs/TRACE_FORMAT.md):\n"
	"  --trace FILE      write the sequence, one set operation a line, as it is\n"
	"                    emitted; - for standard output (the report then goes\n"
	"                    to standard error)\n"
	"  --trace-detail elementary\n"
	"                    one line per elementary move instead (small runs only)\n"
	"  validate FILE     replay any trace in the engine and report its counts,\n"
	"                    or the first broken rule as FILE:LINE: ...; -M tries it\n"
	"                    under another capacity, -n -d -g insist on a DAG\n"
	"\n"
	"Any DAG (GraphML or edge list, docs/DAG_FILES.md):\n"
	"  run --dag FILE    pebble it with lru (default) or belady eviction over\n"
	"                    --order topo (igraph's topological sort) or dfs\n"
	"  dag               write the attention DAG with igraph (graphml, dot,\n"
	"                    edgelist) to -o FILE or standard output\n"
	"\n"
	"Examples:\n"
	"  pebblesim --case II -n 4096 -d 16 -g 3 -M 8192\n"
	"      Case II's group tiling (Key Lemma 3.2) on 4096 tokens, 16 features\n"
	"  pebblesim compare -n 1024 -d 16 -g 5 -M 2048\n"
	"      every strategy side by side, best first, on a Case III instance\n"
	"  pebblesim --strategy generic --tiles square -n 64 -d 4 -g 2 -M 100 --json\n"
	"      Lemma 3.1's square tiles, the report as JSON\n"
	"  pebblesim --case II -n 64 -d 4 -g 2 -M 100 --trace run.jsonl\n"
	"  pebblesim validate run.jsonl -M 60\n"
	"      write a trace, then try it under a smaller fast memory\n"
	"  pebblesim run --dag examples/tree.graphml -M 5 --strategy belady --order dfs\n"
	"      a binary tree from a GraphML file, clairvoyant eviction\n"
	"\n"
	"Exit status: 0 valid and within the bounds, 1 an invalid sequence or a\n"
	"bound contradicted, 2 bad usage or input.\n"
	"Documentation: docs/ (MODEL.md, BOUNDS.md, STRATEGIES.md, CLI.md).\n";

struct options {
	const char *strategy;
	const char *case_name;
	const char *tiles;
	const char *trace;
	const char *trace_detail;
	const char *dag_file;  /* run, validate: an explicit DAG */
	const char *order;     /* lru, belady: topo or dfs */
	const char *format;    /* dag: graphml, dot, edgelist */
	const char *output;    /* dag: the file, - for standard output */
	uint64_t n, d, g, M, w;
	bool has_n, has_d, has_g, has_M;
	bool normalize, json;
	bool element_only, dry_run;
};

static int usage_error(FILE *errout, const char *fmt, const char *arg)
{
	fputs("pebblesim: ", errout);
	fprintf(errout, fmt, arg);
	fputs("\n", errout);
	fputs(usage_text, errout);
	return PS_EXIT_USAGE;
}

/* A decimal integer from min to PS_PARAM_MAX, without sign or trailing
 * garbage: every parameter must round-trip through JSON's integers. */
static int parse_u64(const char *s, uint64_t min, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > PS_PARAM_MAX)
		return -1;
	*out = v;
	return 0;
}

/* The value of an option: "--opt=V" or the next argument. */
static const char *option_value(int argc, char **argv, int *k, const char *name)
{
	size_t len = strlen(name);

	if (!strncmp(argv[*k], name, len) && argv[*k][len] == '=')
		return argv[*k] + len + 1;
	if (*k + 1 < argc)
		return argv[++*k];
	return NULL;
}

static bool is_option(const char *arg, const char *name)
{
	size_t len = strlen(name);

	return !strncmp(arg, name, len) && (arg[len] == '\0' || arg[len] == '=');
}

static int parse_number(FILE *errout, int argc, char **argv, int *k,
			const char *name, uint64_t min, uint64_t *out, bool *has)
{
	const char *flag = argv[*k];
	const char *v = option_value(argc, argv, k, name);

	if (!v) {
		fprintf(errout, "pebblesim: option '%s' needs a value\n%s", flag,
			usage_text);
		return PS_EXIT_USAGE;
	}
	if (parse_u64(v, min, out)) {
		fprintf(errout, "pebblesim: invalid value '%s' for %s: expected an integer >= %llu and <= %llu\n",
			v, name, (unsigned long long)min, (unsigned long long)PS_PARAM_MAX);
		return PS_EXIT_USAGE;
	}
	if (has)
		*has = true;
	return 0;
}

static int parse_string(FILE *errout, int argc, char **argv, int *k,
			const char *name, const char **out)
{
	const char *flag = argv[*k];

	*out = option_value(argc, argv, k, name);
	return *out ? 0 : usage_error(errout, "option '%s' needs a value", flag);
}

static int set_flag(bool *flag, bool value)
{
	*flag = value;
	return 0;
}

static int parse_options(int argc, char **argv, int first, struct options *o,
			 bool need_dag, FILE *errout)
{
	for (int k = first; k < argc; k++) {
		const char *a = argv[k];
		int rc;

		if (is_option(a, "-n"))
			rc = parse_number(errout, argc, argv, &k, "-n", 1, &o->n, &o->has_n);
		else if (is_option(a, "-d"))
			rc = parse_number(errout, argc, argv, &k, "-d", 1, &o->d, &o->has_d);
		else if (is_option(a, "-g"))
			rc = parse_number(errout, argc, argv, &k, "-g", 0, &o->g, &o->has_g);
		else if (is_option(a, "-M"))
			rc = parse_number(errout, argc, argv, &k, "-M", 1, &o->M, &o->has_M);
		else if (is_option(a, "--w"))
			rc = parse_number(errout, argc, argv, &k, "--w", 1, &o->w, NULL);
		else if (is_option(a, "--strategy"))
			rc = parse_string(errout, argc, argv, &k, "--strategy", &o->strategy);
		else if (is_option(a, "--case"))
			rc = parse_string(errout, argc, argv, &k, "--case", &o->case_name);
		else if (is_option(a, "--tiles"))
			rc = parse_string(errout, argc, argv, &k, "--tiles", &o->tiles);
		else if (is_option(a, "--dag"))
			rc = parse_string(errout, argc, argv, &k, "--dag", &o->dag_file);
		else if (is_option(a, "--order"))
			rc = parse_string(errout, argc, argv, &k, "--order", &o->order);
		else if (is_option(a, "--format"))
			rc = parse_string(errout, argc, argv, &k, "--format", &o->format);
		else if (is_option(a, "-o"))
			rc = parse_string(errout, argc, argv, &k, "-o", &o->output);
		else if (is_option(a, "--trace-detail"))
			rc = parse_string(errout, argc, argv, &k, "--trace-detail", &o->trace_detail);
		else if (is_option(a, "--trace"))
			rc = parse_string(errout, argc, argv, &k, "--trace", &o->trace);
		else if (!strcmp(a, "--no-normalize"))
			rc = set_flag(&o->normalize, false);
		else if (!strcmp(a, "--json"))
			rc = set_flag(&o->json, true);
		else if (!strcmp(a, "--element-path"))
			rc = set_flag(&o->element_only, true);
		else if (!strcmp(a, "--dry-run"))
			rc = set_flag(&o->dry_run, true);
		else
			return usage_error(errout, "unknown argument '%s'", a);
		if (rc)
			return rc;
	}
	if (need_dag && o->dag_file && !o->has_M)
		return usage_error(errout, "%s", "-M is required");
	if (need_dag && !o->dag_file && (!o->has_n || !o->has_d || !o->has_g || !o->has_M))
		return usage_error(errout, "%s", "the parameters -n, -d, -g and -M are all required");
	if (!need_dag && (o->has_n || o->has_d || o->has_g) &&
	    !(o->has_n && o->has_d && o->has_g))
		return usage_error(errout, "%s", "-n, -d and -g go together: the DAG the trace must name");
	if (o->trace_detail && strcmp(o->trace_detail, "set") &&
	    strcmp(o->trace_detail, "elementary"))
		return usage_error(errout, "unknown trace detail '%s': set or elementary",
				   o->trace_detail);
	if (o->case_name && strcmp(o->case_name, "auto") &&
	    !ps_strategy_for_case(o->case_name))
		return usage_error(errout, "unknown case '%s': I, II, III, IV or auto",
				   o->case_name);
	return 0;
}

/* Builds the DAG after checking every limit; prints why not. */
static int build_dag(const struct options *o, struct ps_attention *att,
		     FILE *errout)
{
	struct ps_attention_params p = {
		.n = o->n, .d = o->d, .g = o->g, .normalize = o->normalize,
	};
	struct ps_error err;

	ps_error_clear(&err);
	if (ps_attention_check(&p, &err) || ps_attention_init(att, &p, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	return 0;
}

static void problem_of(const struct options *o, const struct ps_attention *att,
		       const struct ps_explicit *xdag, struct ps_problem *pb)
{
	memset(pb, 0, sizeof(*pb));
	pb->att = att;
	pb->xdag = xdag;
	pb->M = o->M;
	pb->tiles = o->tiles;
	pb->w = o->w;
	pb->order = o->order;
	pb->element_only = o->element_only;
}

/* Progress goes to standard error when it is a terminal, else nowhere. */
static FILE *progress_stream(FILE *errout)
{
	int fd = fileno(errout);

	return fd >= 0 && isatty(fd) ? errout : NULL;
}

/*
 * --dry-run: what a run would take and predict, without validating: the
 * DAG's sizes, the pebble state the engine would allocate, the peak
 * resident memory that makes (this process so far plus that state), the
 * case, the strategy's plan and prediction, the bounds.
 */
static int dry_run(const struct ps_problem *pb, const struct ps_strategy *s,
		   bool json, FILE *out, FILE *errout)
{
	const struct ps_dag *dag = pb->att ? &pb->att->dag : &pb->xdag->dag;
	uint64_t state = ps_engine_state_bytes(dag);
	uint64_t rss = ps_peak_rss_bytes() + state;
	struct ps_report rep;
	struct ps_error err;
	uint64_t io;

	if (pb->att)
		ps_report_init(&rep, pb->att, pb->M);
	else
		ps_report_init_explicit(&rep, pb->xdag, NULL, pb->M);
	ps_error_clear(&err);
	if (ps_strategy_plan(s, pb, &rep.plan, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	io = rep.plan.loads + rep.plan.saves;
	if (json) {
		json_t *root = json_pack("{s:b, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
			"dry_run", 1, "strategy", s->name, "plan", rep.plan.summary,
			"M", (json_int_t)pb->M, "nodes", (json_int_t)dag->node_count,
			"state_nodes", (json_int_t)dag->state_count,
			"edges", (json_int_t)dag->edge_count,
			"state_bytes", (json_int_t)state,
			"estimated_peak_rss_bytes", (json_int_t)rss,
			"lower", json_pack("{s:s, s:f}", "name", rep.lower.name,
					   "value", rep.lower.value));

		if (rep.case_name)
			json_object_set_new(root, "case", json_string(rep.case_name));
		if (rep.plan.predicted)
			json_object_set_new(root, "predicted", json_pack("{s:I, s:I, s:I}",
				"loads", (json_int_t)rep.plan.loads, "saves",
				(json_int_t)rep.plan.saves, "io", (json_int_t)io));
		if (rep.plan.bounded)
			json_object_set_new(root, "upper", json_pack("{s:s, s:f}", "name",
				rep.plan.upper.name, "value", rep.plan.upper.value));
		json_dumpf(root, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		json_decref(root);
		return PS_EXIT_VALID;
	}
	fprintf(out, "dry run                nothing validated\n");
	fprintf(out, "nodes                  %llu (%llu hold pebbles), %llu edges\n",
		(unsigned long long)dag->node_count,
		(unsigned long long)dag->state_count,
		(unsigned long long)dag->edge_count);
	fprintf(out, "pebble state           %.1f MiB (a byte per node, a bit per in-edge of a sum, a counter per sum)\n",
		(double)state / (1 << 20));
	fprintf(out, "estimated peak memory  %.1f MiB resident\n", (double)rss / (1 << 20));
	fprintf(out, "fast memory            M = %llu\n", (unsigned long long)pb->M);
	if (rep.case_name)
		fprintf(out, "case                   %s: %s\n", rep.case_name, rep.case_reason);
	fprintf(out, "strategy               %s (%s)\n", s->name, s->section);
	fprintf(out, "  plan                 %s\n", rep.plan.summary);
	if (rep.plan.predicted)
		fprintf(out, "predicted              %llu loads + %llu saves = %llu I/O\n",
			(unsigned long long)rep.plan.loads,
			(unsigned long long)rep.plan.saves, (unsigned long long)io);
	if (rep.plan.bounded)
		fprintf(out, "upper bound            %.0f (%s)\n", rep.plan.upper.value,
			rep.plan.upper.name);
	fprintf(out, "lower bound            %.0f (%s)\n", rep.lower.value, rep.lower.name);
	return PS_EXIT_VALID;
}

/* The strategy --strategy or --case asks for; NULL after a message. */
static const struct ps_strategy *select_strategy(const struct options *o,
						 const struct ps_attention *att,
						 FILE *errout)
{
	char why[256], names[256];
	const char *actual;
	const struct ps_strategy *s;

	if (o->strategy) {
		s = ps_strategy_find(o->strategy);
		if (!s) {
			ps_strategy_names(names, sizeof(names));
			fprintf(errout, "pebblesim: unknown strategy '%s'; known: %s\n",
				o->strategy, names);
		}
		return s;
	}
	if (!att) /* an explicit DAG */
		return ps_strategy_find("lru");
	actual = ps_classify_case(att, o->M, why, sizeof(why));
	if (!o->case_name || !strcmp(o->case_name, "auto"))
		return ps_strategy_for_case(actual);
	if (strcmp(o->case_name, actual))
		fprintf(errout, "pebblesim: warning: the parameters are in Case %s (%s), not Case %s; running its strategy anyway\n",
			actual, why, o->case_name);
	return ps_strategy_for_case(o->case_name);
}

/* The options a strategy does not take are errors, not silently ignored. */
static int check_strategy_options(const struct options *o,
				  const struct ps_strategy *s, bool explicit_dag,
				  FILE *errout)
{
	const char *option = NULL, *owner = NULL;

	if (o->tiles && strcmp(s->name, "generic") && strcmp(s->name, "auto"))
		option = "--tiles", owner = "generic";
	else if (o->w && strcmp(s->name, "keylemma") && strcmp(s->name, "auto"))
		option = "--w", owner = "keylemma";
	else if (o->order && !(s->flags & PS_STRATEGY_EXPLICIT))
		option = "--order", owner = "lru and belady";
	if (option) {
		fprintf(errout, "pebblesim: %s is an option of %s, not of %s\n",
			option, owner, s->name);
		return PS_EXIT_USAGE;
	}
	if (explicit_dag != !!(s->flags & PS_STRATEGY_EXPLICIT)) {
		fprintf(errout, explicit_dag ?
			"pebblesim: %s pebbles the attention DAG; a DAG from a file takes lru or belady\n" :
			"pebblesim: %s pebbles a DAG from a file (run --dag FILE), not the attention DAG\n",
			s->name);
		return PS_EXIT_USAGE;
	}
	return 0;
}

/* Opens the trace --trace asks for, after checking an elementary one's
 * size; the header names the strategy that runs, with its parameters. */
static int open_trace(const struct options *o, const struct ps_problem *pb,
		      const struct ps_strategy *s, struct ps_trace_writer *writer,
		      FILE *errout)
{
	bool elementary = o->trace_detail && !strcmp(o->trace_detail, "elementary");
	struct ps_plan plan;
	struct ps_error err;

	ps_error_clear(&err);
	if (ps_strategy_plan(s, pb, &plan, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	if (elementary) {
		struct ps_count_sink counter;

		ps_count_sink_init(&counter);
		if (ps_strategy_run(s, pb, &counter.sink, &err) == 0 &&
		    counter.moves + 2 > PS_TRACE_ELEMENTARY_MAX_LINES) {
			fprintf(errout, "pebblesim: an elementary trace of this run would have %llu lines (about %.1f GiB); the limit is %llu lines: write the set-operation trace (the default) or choose smaller parameters\n",
				(unsigned long long)(counter.moves + 2),
				(double)(counter.moves + 2) * 60.0 / (1 << 30),
				(unsigned long long)PS_TRACE_ELEMENTARY_MAX_LINES);
			return PS_EXIT_USAGE;
		}
	}
	if (ps_trace_open(writer, o->trace, pb->att, pb->xdag, pb->M,
			  plan.chosen ? plan.chosen->name : s->name, &plan,
			  pb->xdag ? (pb->order ? pb->order : "topo") : NULL,
			  elementary, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	return 0;
}

static int cmd_run(const struct options *o, FILE *out, FILE *errout)
{
	const struct ps_strategy *s;
	struct ps_trace_writer writer;
	struct ps_attention att;
	struct ps_explicit xdag;
	struct ps_problem pb;
	struct ps_report rep;
	struct ps_error err;
	bool explicit_dag = o->dag_file != NULL;
	uint64_t min_m;
	int rc, status;

	ps_error_clear(&err);
	if (explicit_dag) {
		if (ps_explicit_read(&xdag, o->dag_file, &err)) {
			fprintf(errout, "pebblesim: %s\n", err.msg);
			return PS_EXIT_USAGE;
		}
	} else if ((rc = build_dag(o, &att, errout))) {
		return rc;
	}
	problem_of(o, explicit_dag ? NULL : &att, explicit_dag ? &xdag : NULL, &pb);
	status = PS_EXIT_USAGE;
	s = select_strategy(o, pb.att, errout);
	if (!s || check_strategy_options(o, s, explicit_dag, errout))
		goto done;
	min_m = explicit_dag ? ps_strategy_min_memory_explicit(s, &pb)
			     : ps_strategy_min_memory(s, &att);
	if (o->M < min_m) {
		if (min_m == UINT64_MAX)
			fprintf(errout, "pebblesim: %s does not apply to these parameters at any M\n",
				s->name);
		else
			fprintf(errout, "pebblesim: M = %llu is too small for %s on this DAG: it needs M >= %llu\n",
				(unsigned long long)o->M, s->name,
				(unsigned long long)min_m);
		goto done;
	}
	if (o->dry_run) {
		status = dry_run(&pb, s, o->json, out, errout);
		goto done;
	}
	if (o->trace && ps_output_check_inputs(o->trace, &o->dag_file, 1, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		goto done;
	}
	if (o->trace && open_trace(o, &pb, s, &writer, errout))
		goto done;
	pb.progress = progress_stream(errout);
	rc = ps_run(&pb, s, o->trace ? &writer.sink : NULL, &rep, &err);
	if (o->trace) {
		struct ps_error werr;

		/* the end line states the counts of a valid sequence only */
		if (ps_trace_close(&writer, rc == 0 && rep.valid ? &rep.counts : NULL,
				   rc == 0, &werr) && rc == 0) {
			fprintf(errout, "pebblesim: %s\n", werr.msg);
			goto done;
		}
		/* the trace owns standard output */
		if (!strcmp(o->trace, "-"))
			out = errout;
	}
	if (rc) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		status = rc == PS_EINVALID ? PS_EXIT_INVALID : PS_EXIT_USAGE;
		goto done;
	}
	rep.dag_name = o->dag_file;
	if (o->json)
		ps_report_print_json(&rep, out);
	else
		ps_report_print(&rep, out);
	status = !rep.valid || ps_report_bound_violated(&rep) ? PS_EXIT_INVALID
							      : PS_EXIT_VALID;
done:
	if (explicit_dag)
		ps_explicit_free(&xdag);
	else
		ps_attention_free(&att);
	return status;
}

/* pebblesim dag: the attention DAG written with igraph's writers. */
static int cmd_dag(const struct options *o, FILE *out, FILE *errout)
{
	struct ps_attention att;
	struct ps_error err;
	struct ps_output file;
	igraph_t graph;
	int rc = build_dag(o, &att, errout);

	if (rc)
		return rc;
	if (ps_attention_to_igraph(&att, &graph, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		ps_attention_free(&att);
		return PS_EXIT_USAGE;
	}
	if (ps_output_open(&file, o->output ? o->output : "-", "DAG file", &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		rc = PS_EXIT_USAGE;
	} else if (ps_igraph_write(&graph, o->format ? o->format : "graphml",
				   file.file == stdout ? out : file.file, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		ps_output_close(&file, false, "DAG file", NULL);
		rc = PS_EXIT_USAGE;
	} else if (ps_output_close(&file, true, "DAG file", &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		rc = PS_EXIT_USAGE;
	}
	igraph_destroy(&graph);
	ps_attention_free(&att);
	return rc;
}

/*
 * The baselines replay their loops move by move through an eviction
 * policy, some 20 million moves a second: compare runs them up to this
 * many products (a few seconds each).
 */
#define PS_COMPARE_BASELINE_PRODUCTS UINT64_C(20000000)

/* One row of compare: a report, or why the strategy does not apply. */
struct compare_row {
	const struct ps_strategy *s;
	struct ps_report rep;
	char why[PS_ERROR_MAX + 64];
	bool ran;
};

static int by_io(const void *a, const void *b)
{
	const struct compare_row *x = a, *y = b;
	uint64_t u, v;

	if (x->ran != y->ran)
		return x->ran ? -1 : 1;
	if (!x->ran)
		return 0;
	u = x->rep.counts.loads + x->rep.counts.saves;
	v = y->rep.counts.loads + y->rep.counts.saves;
	return (u > v) - (u < v);
}

static int cmd_compare(const struct options *o, FILE *out, FILE *errout)
{
	struct compare_row rows[16];
	struct ps_attention att;
	struct ps_problem pb;
	struct ps_bound lower;
	char why[256];
	const char *case_name;
	size_t count = 0;
	int status = PS_EXIT_VALID;
	int rc = build_dag(o, &att, errout);

	if (rc)
		return rc;
	problem_of(o, &att, NULL, &pb);
	pb.progress = progress_stream(errout);
	ps_bound_lower(&att, o->M, &lower);
	case_name = ps_classify_case(&att, o->M, why, sizeof(why));
	for (size_t k = 0; k < ps_strategy_count && count < 16; k++) {
		struct compare_row *row = &rows[count++];
		struct ps_error err;
		uint64_t min_m;

		memset(row, 0, sizeof(*row));
		row->s = ps_strategies[k];
		if (!strcmp(row->s->name, "auto") ||
		    (row->s->flags & PS_STRATEGY_EXPLICIT)) {
			count--; /* auto is the best row; lru, belady take files */
			continue;
		}
		if ((row->s->flags & PS_STRATEGY_BASELINE) &&
		    att.n * att.r * att.nb > PS_COMPARE_BASELINE_PRODUCTS) {
			snprintf(row->why, sizeof(row->why),
				 "not run: %llu products, beyond compare's %llu for the move-by-move baselines (run it alone with --strategy %s)",
				 (unsigned long long)(att.n * att.r * att.nb),
				 (unsigned long long)PS_COMPARE_BASELINE_PRODUCTS,
				 row->s->name);
			continue;
		}
		min_m = ps_strategy_min_memory(row->s, &att);
		if (o->M < min_m) {
			if (min_m == UINT64_MAX)
				snprintf(row->why, sizeof(row->why),
					 "does not apply to these parameters");
			else
				snprintf(row->why, sizeof(row->why),
					 "does not run: needs M >= %llu", (unsigned long long)min_m);
			continue;
		}
		ps_error_clear(&err);
		if (ps_run(&pb, row->s, NULL, &row->rep, &err)) {
			snprintf(row->why, sizeof(row->why), "does not run: %s", err.msg);
			continue;
		}
		row->ran = true;
		if (!row->rep.valid || ps_report_bound_violated(&row->rep))
			status = PS_EXIT_INVALID;
	}
	qsort(rows, count, sizeof(rows[0]), by_io);
	if (o->json) {
		json_t *list = json_array();

		for (size_t k = 0; k < count; k++) {
			const struct ps_report *rep = &rows[k].rep;
			uint64_t io = rep->counts.loads + rep->counts.saves;

			if (!rows[k].ran) {
				json_array_append_new(list, json_pack("{s:s, s:b, s:s}",
					"strategy", rows[k].s->name, "applies", 0,
					"why_not", rows[k].why));
				continue;
			}
			{
				json_t *row = json_pack(
					"{s:s, s:b, s:b, s:I, s:I, s:I, s:I, s:f, s:s, s:f, s:s}",
					"strategy", rows[k].s->name, "applies", 1,
					"valid", rep->valid, "loads", (json_int_t)rep->counts.loads,
					"saves", (json_int_t)rep->counts.saves, "io", (json_int_t)io,
					"peak_red", (json_int_t)rep->counts.peak_red,
					"lower", rep->lower.value, "lower_name", rep->lower.name,
					"seconds", rep->seconds, "plan", rep->plan.summary);

				/* the baselines have neither a cost model nor a bound */
				if (rep->plan.predicted)
					json_object_set_new(row, "predicted_io",
							    json_integer((json_int_t)(rep->plan.loads + rep->plan.saves)));
				if (rep->plan.bounded) {
					json_object_set_new(row, "upper", json_real(rep->plan.upper.value));
					json_object_set_new(row, "upper_name", json_string(rep->plan.upper.name));
				}
				json_array_append_new(list, row);
			}
		}
		json_dumpf(list, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		json_decref(list);
	} else {
		fprintf(out, "n = %llu, d = %llu, g = %llu, r = %llu, M = %llu: Case %s (%s)\n",
			(unsigned long long)att.n, (unsigned long long)att.d,
			(unsigned long long)att.g, (unsigned long long)att.r,
			(unsigned long long)o->M, case_name, why);
		fprintf(out, "lower bound %.0f (%s)\n\n", lower.value, lower.name);
		fprintf(out, "%-12s %6s %12s %12s %12s %9s %9s %9s %8s\n", "strategy",
			"valid", "loads", "saves", "I/O", "peak red", "I/O/upper",
			"I/O/lower", "seconds");
		for (size_t k = 0; k < count; k++) {
			const struct ps_report *rep = &rows[k].rep;
			uint64_t io = rep->counts.loads + rep->counts.saves;

			char upper[16] = "-";

			if (!rows[k].ran) {
				fprintf(out, "%-12s %s\n", rows[k].s->name, rows[k].why);
				continue;
			}
			if (rep->plan.bounded)
				snprintf(upper, sizeof(upper), "%.3f",
					 (double)io / rep->plan.upper.value);
			fprintf(out, "%-12s %6s %12llu %12llu %12llu %9llu %9s %9.3f %8.2f\n",
				rows[k].s->name, rep->valid ? "yes" : "NO",
				(unsigned long long)rep->counts.loads,
				(unsigned long long)rep->counts.saves,
				(unsigned long long)io,
				(unsigned long long)rep->counts.peak_red, upper,
				lower.value > 0 ? (double)io / lower.value : 0.0,
				rep->seconds);
		}
	}
	ps_attention_free(&att);
	return status;
}

static int cmd_validate(const struct options *o, const char *path, FILE *out,
			FILE *errout)
{
	struct ps_attention_params expect = {
		.n = o->n, .d = o->d, .g = o->g, .normalize = o->normalize,
	};
	struct ps_replay replay;
	struct ps_report rep;
	struct ps_error err;
	struct ps_explicit xdag;
	const struct ps_strategy *s;
	FILE *f;
	double start = ps_now_seconds();
	int rc;

	ps_error_clear(&err);
	if (o->dag_file && ps_explicit_read(&xdag, o->dag_file, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!f) {
		if (o->dag_file)
			ps_explicit_free(&xdag);
		fprintf(errout, "pebblesim: cannot open trace '%s': %s\n", path,
			strerror(errno));
		return PS_EXIT_USAGE;
	}
	rc = ps_trace_replay(f, path, o->has_M ? o->M : 0,
			     o->has_n ? &expect : NULL, o->dag_file ? &xdag : NULL,
			     o->element_only, &replay, &err);
	if (f != stdin)
		fclose(f);
	if (rc) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		ps_replay_free(&replay);
		if (o->dag_file)
			ps_explicit_free(&xdag);
		return PS_EXIT_USAGE;
	}
	if (o->dag_file)
		ps_report_init_explicit(&rep, &xdag, o->dag_file, replay.header.M);
	else
		ps_report_init(&rep, &replay.att, replay.header.M);
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
	/* a trace of a known strategy is set beside that strategy's plan */
	s = ps_strategy_find_for(replay.header.strategy, o->dag_file != NULL);
	if (s) {
		struct ps_problem pb = {
			.att = o->dag_file ? NULL : &replay.att,
			.xdag = o->dag_file ? &xdag : NULL, .M = replay.header.M,
			.tiles = replay.header.tiles[0] ? replay.header.tiles : NULL,
			.w = replay.header.w,
			.order = replay.header.order[0] ? replay.header.order : NULL,
		};
		struct ps_error ignored;

		rep.section = s->section;
		rep.has_plan = ps_strategy_plan(s, &pb, &rep.plan, &ignored) == 0;
	}
	if (o->json)
		ps_report_print_json(&rep, out);
	else
		ps_report_print(&rep, out);
	ps_replay_free(&replay);
	if (o->dag_file)
		ps_explicit_free(&xdag);
	if (!rep.valid || ps_report_bound_violated(&rep))
		return PS_EXIT_INVALID;
	return PS_EXIT_VALID;
}

static int cmd_list(FILE *out)
{
	for (size_t k = 0; k < ps_strategy_count; k++)
		fprintf(out, "%-10s %s\n           %s\n", ps_strategies[k]->name,
			ps_strategies[k]->section, ps_strategies[k]->summary);
	return PS_EXIT_VALID;
}

static int cli_dispatch(int argc, char **argv, FILE *out, FILE *errout);

/* A command whose output could not be written fails (exit status 2). */
int ps_cli_main(int argc, char **argv, FILE *out, FILE *errout)
{
	return ps_output_finish_stream(out, cli_dispatch(argc, argv, out, errout),
				       errout);
}

static int cli_dispatch(int argc, char **argv, FILE *out, FILE *errout)
{
	struct options o = { .normalize = true };
	int first = 1, rc;
	bool compare = false;

	if (argc >= 2 && !strcmp(argv[1], "list"))
		return argc == 2 ? cmd_list(out)
				 : usage_error(errout, "'list' takes no arguments%s", "");
	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h") ||
		    !strcmp(argv[k], "help")) {
			fputs(usage_text, out);
			fputs("\n", out);
			fputs(help_text, out);
			return PS_EXIT_VALID;
		}
		if (!strcmp(argv[k], "--version")) {
			fprintf(out, "pebblesim %s\n", PS_VERSION);
			return PS_EXIT_VALID;
		}
	}
	if (argc >= 2 && !strcmp(argv[1], "validate")) {
		if (argc < 3 || (argv[2][0] == '-' && argv[2][1] != '\0'))
			return usage_error(errout, "%s", "validate needs a trace file (or - for standard input)");
		rc = parse_options(argc, argv, 3, &o, false, errout);
		return rc ? rc : cmd_validate(&o, argv[2], out, errout);
	}
	if (argc >= 2 && !strcmp(argv[1], "dag")) {
		rc = parse_options(argc, argv, 2, &o, false, errout);
		if (!rc && !(o.has_n && o.has_d && o.has_g))
			rc = usage_error(errout, "%s", "dag needs -n, -d and -g");
		return rc ? rc : cmd_dag(&o, out, errout);
	}
	if (argc >= 2 && !strcmp(argv[1], "compare")) {
		compare = true;
		first = 2;
	} else if (argc >= 2 && !strcmp(argv[1], "run")) {
		first = 2;
	}
	rc = parse_options(argc, argv, first, &o, true, errout);
	if (rc)
		return rc;
	return compare ? cmd_compare(&o, out, errout) : cmd_run(&o, out, errout);
}
