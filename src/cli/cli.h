/*
 * Internal to the command line (src/cli/): the command table, the option
 * tables and their parser, the report printers. libpebblesim does not
 * include this file, and nothing outside src/cli/ and tests/ should.
 */
#ifndef PEBBLESIM_CLI_INTERNAL_H
#define PEBBLESIM_CLI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "pebblesim/attention.h"
#include "pebblesim/bounds.h"
#include "pebblesim/explicit.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "pebblesim/values.h"

/* The command line, callable from tests: output and diagnostics go to the
 * given streams and the exit status is returned. */
int ps_cli_main(int argc, char **argv, FILE *out, FILE *errout);

/* The same with in as what an operand "-" reads (NULL: standard input):
 * ps_script_command's text. */
int ps_cli_main_input(int argc, char **argv, FILE *in, FILE *out, FILE *errout);

/* What an operand "-" reads: standard input, or ps_cli_main_input's in. */
FILE *cli_stdin(void);

/* Every option any command knows; each command's table lists its own. */
enum cli_option_id {
	OPT_N, OPT_D, OPT_G, OPT_M, OPT_NO_NORMALIZE,
	OPT_CASE, OPT_STRATEGY, OPT_W, OPT_TILES, OPT_SIZES, OPT_ORDER,
	OPT_LAYOUT,
	OPT_DAG, OPT_DAG_FORMAT, OPT_IGNORE_WEIGHTS,
	OPT_JSON, OPT_DRY_RUN, OPT_ELEMENT_PATH,
	OPT_TRACE, OPT_TRACE_DETAIL, OPT_TRACE_LIMIT, OPT_MAX_MOVES,
	OPT_FORMAT, OPT_OUTPUT,
	OPT_ATTENTION,
	OPT_STRATEGIES, OPT_PREDICT, OPT_CSV, OPT_PLOT, OPT_PLOT_SCRIPT, OPT_JOBS, OPT_SHARD,
	OPT_MERGE, OPT_BASELINE,
	OPT_VALUES, OPT_Q, OPT_K, OPT_V, OPT_SEED, OPT_ENTRY_BOUND, OPT_VALUES_OUTPUT,
	OPT_TIME_LIMIT, OPT_MEMORY_LIMIT, OPT_SWEEP, /* optimal */
	OPT_POLYNOMIAL, OPT_INTERVAL, OPT_REFINE, OPT_EPSILON, OPT_BOUND,
	OPT_PROGRESS, OPT_PARTIAL,
	OPT_PLUGIN,
	OPT_CAUSAL, OPT_DECODE,
	OPT_HELP,
	CLI_OPTION_COUNT
};

/* How a value is read. */
enum cli_kind {
	CLI_FLAG,   /* no value: sets a bool */
	CLI_STRING, /* any text */
	CLI_COUNT,  /* a decimal integer <= INT64_MAX */
	CLI_SIZE,   /* a count with k, M, G (powers of 1024) or 2^k */
	CLI_REAL,   /* a finite number > 0: sets a double */
};

/* When an option applies within its command: with --dag or without it. */
enum {
	CLI_ATTENTION_ONLY = 1, /* the attention DAG's parameters */
	CLI_DAG_ONLY = 2,       /* a DAG from a file */
	CLI_RANGE = 4,          /* a number, or a range LO:HI[:STEP] (sweep) */
	CLI_VALUES_ONLY = 8,    /* a run with values (--values) */
};

struct cli_option {
	enum cli_option_id id;
	int short_name;        /* 'n', or 0 */
	const char *long_name; /* "strategy", or NULL */
	enum cli_kind kind;
	size_t offset;         /* of the value in struct cli_args */
	uint64_t min;          /* numbers: the smallest accepted */
	unsigned when;         /* CLI_ATTENTION_ONLY, CLI_DAG_ONLY or 0 */
	const char *arg;       /* the value's name in help: "N" */
	const char *help;      /* its meaning, for --help */
};

/* The values of every option; each command reads those of its table. */
struct cli_args {
	uint64_t n, d, g, M, w, trace_limit, max_moves;
	const char *case_name, *strategy, *tiles, *sizes, *order;
	const char *layout; /* colpass: its layout */
	const char *dag_file, *dag_format;
	const char *trace, *trace_detail;
	const char *format, *output;
	const char *attention; /* "approx" or "exact" */
	const char *strategies, *csv, *plot, *shard, *baseline; /* sweep */
	const char *plot_script; /* --plot-script FILE.gp */
	uint64_t jobs;
	bool predict, merge, refine;
	bool values;                               /* --values */
	const char *q_file, *k_file, *v_file, *values_output;
	uint64_t seed;
	double entry_bound;
	double time_limit;     /* optimal: seconds */
	uint64_t memory_limit; /* optimal: bytes */
	bool sweep;            /* optimal: the grid */
	const char *polynomial; /* taylor, chebyshev or minimax */
	double interval;        /* --interval BETA */
	double epsilon;         /* frontier: the accuracy */
	const char *bound;      /* frontier: a-priori */
	const char *plugin;     /* --plugin: a shared object of strategies */
	const char *text[CLI_OPTION_COUNT]; /* a number's text as given */
	bool no_normalize, json, dry_run, element_path, help;
	bool ignore_weights;    /* --ignore-weights: a .hdag file's weights as 1 */
	bool progress;          /* --progress: lines even off a terminal */
	bool partial;           /* sweep --merge --partial */
	bool causal;            /* --causal: row i sees keys j <= i (MODEL.md section 7) */
	uint64_t decode;        /* --decode P: generate rows P..n-1 (section 8), 0: none */
	bool given[CLI_OPTION_COUNT];
	char **operands; /* what is left once the options are taken */
	int operand_count;
};

struct cli_command;

/* What a command's --help says, and the top-level help's line for it. */
struct cli_help {
	const char *usage;       /* after "usage: pebblesim " */
	const char *summary;     /* one line for the top-level help */
	const char *description; /* paragraphs for the command's --help */
	const char *examples;
};

typedef int cli_fn(const struct cli_command *cmd, const struct cli_args *a,
		   FILE *out, FILE *errout);

/* A command, in the manner of git.c's table: name, function, options. */
struct cli_command {
	const char *name;
	cli_fn *fn;
	const struct cli_option *options; /* ended by an entry of NULL help */
	const struct cli_help *help;
	int min_operands, max_operands;   /* files after the options */
};

/* The commands, in the order the top-level help lists them. */
extern const struct cli_command cli_commands[];
extern const size_t cli_command_count;

/* One file per command: its function, option table and help. */
cli_fn cmd_run, cmd_compare, cmd_validate, cmd_dag, cmd_list, cmd_help,
	cmd_sweep, cmd_frontier, cmd_optimal, cmd_map, cmd_view;
extern const struct cli_option run_options[], compare_options[],
	validate_options[], dag_options[], list_options[], help_options[],
	sweep_options[], frontier_options[], optimal_options[], map_options[],
	view_options[];
extern const struct cli_help run_help, compare_help, validate_help,
	dag_help, list_help, help_help, sweep_help, frontier_help, optimal_help,
	map_help, view_help;

struct ps_sweep_row;

/* sweep.c: a sweep's rows as CSV to path (docs/SECURITY.md: atomic for a
 * file, `-` standard output); 0 or PS_EXIT_USAGE after a message. */
int cli_sweep_write_csv(const char *path, const struct ps_sweep_row *rows,
			size_t count, FILE *out, FILE *errout);

/* map.c: the polynomial a plot's title names: --polynomial's, or
 * Taylor's; NULL when not known (a merge of CSV files). */
const char *cli_plot_polynomial(const struct cli_args *a, bool known);

/* Default of --trace-limit: lines of any trace, set or elementary. */
#define CLI_TRACE_MAX_LINES UINT64_C(20000000)

/* The table entries every command of the attention DAG shares. */
#define CLI_OPT_N(help) { OPT_N, 'n', NULL, CLI_SIZE, offsetof(struct cli_args, n), 1, CLI_ATTENTION_ONLY, "N", help }
#define CLI_OPT_M(help) { OPT_M, 'M', NULL, CLI_SIZE, offsetof(struct cli_args, M), 1, 0, "M", help }
#define CLI_OPT_D { OPT_D, 'd', NULL, CLI_COUNT, offsetof(struct cli_args, d), 1, CLI_ATTENTION_ONLY, "D", \
	"features (columns of Q, K, V), D >= 1" }
#define CLI_OPT_G { OPT_G, 'g', NULL, CLI_COUNT, offsetof(struct cli_args, g), 0, CLI_ATTENTION_ONLY, "G", \
	"degree of the polynomial replacing exp, 0 <= G <= 64;\nU1 and U2 have r = C(D+G, G) columns" }
#define CLI_OPT_NO_NORMALIZE { OPT_NO_NORMALIZE, 0, "no-normalize", CLI_FLAG, offsetof(struct cli_args, no_normalize), 0, \
	CLI_ATTENTION_ONLY, NULL, "compute U1 (U2^T V) without the normaliser column\nand D^-1: the outputs are N instead of A" }
/* Causal attention and token-by-token decoding (MODEL.md sections 7, 8). */
#define CLI_OPT_CAUSAL { OPT_CAUSAL, 0, "causal", CLI_FLAG, offsetof(struct cli_args, causal), 0, CLI_ATTENTION_ONLY, NULL, \
	"causal attention (MODEL.md section 7): row i sees keys\nj <= i only, as in a decoder model's prefill" }
#define CLI_OPT_DECODE_WHEN(when) { OPT_DECODE, 0, "decode", CLI_SIZE, offsetof(struct cli_args, decode), 1, \
	CLI_ATTENTION_ONLY | (when), "P", "token-by-token decoding (MODEL.md section 8, with\n--causal): rows P..n-1 generated one at a time after a\nprompt of P rows, 1 <= P < n; a run's I/O is also given\nper token" }
#define CLI_OPT_DECODE CLI_OPT_DECODE_WHEN(0)
#define CLI_OPT_JSON(help) { OPT_JSON, 0, "json", CLI_FLAG, offsetof(struct cli_args, json), 0, 0, NULL, help }
#define CLI_OPT_DAG(help) { OPT_DAG, 0, "dag", CLI_STRING, offsetof(struct cli_args, dag_file), 0, 0, "FILE", help }
#define CLI_OPT_DAG_FORMAT { OPT_DAG_FORMAT, 0, "dag-format", CLI_STRING, offsetof(struct cli_args, dag_format), 0, \
	CLI_DAG_ONLY, "F", "graphml, gml, edgelist, hdag (HyperdagDB) or mtx\n(a lower-triangular Matrix Market matrix): the format\nof --dag FILE; without it the content tells (standard\ninput too)" }
#define CLI_OPT_IGNORE_WEIGHTS { OPT_IGNORE_WEIGHTS, 0, "ignore-weights", CLI_FLAG, offsetof(struct cli_args, ignore_weights), 0, \
	CLI_DAG_ONLY, NULL, "read a HyperdagDB file's comm and mem weights as 1\n(the game is unit-weight; without it other weights\nare refused); the report says so" }
#define CLI_OPT_ELEMENT_PATH { OPT_ELEMENT_PATH, 0, "element-path", CLI_FLAG, offsetof(struct cli_args, element_path), 0, 0, NULL, \
	"validate move by move, without the block path (the\nsame verdicts, slower: for cross-checks)" }
#define CLI_OPT_ATTENTION { OPT_ATTENTION, 0, "attention", CLI_STRING, offsetof(struct cli_args, attention), 0, \
	CLI_ATTENTION_ONLY, "KIND", "approx (the default): approximate attention, n, d, g;\n" \
	"exact: exact attention (MODEL.md section 5), n and d,\nno -g; flash by default. Naming a strategy of\nexact attention (flash, exact-matmul) implies it" }
/* A run with values (docs/VALUES.md): run and validate take them all,
 * sweep --values, --seed and --entry-bound. */
#define CLI_OPT_VALUES(help) { OPT_VALUES, 0, "values", CLI_FLAG, offsetof(struct cli_args, values), 0, CLI_ATTENTION_ONLY, NULL, help }
#define CLI_OPT_INPUT(id, name, field, what) { id, 0, name, CLI_STRING, offsetof(struct cli_args, field), 0, \
	CLI_ATTENTION_ONLY | CLI_VALUES_ONLY, what ".npy", "read " what " (n x d, float64 or float32) from a .npy file;\n" \
	"--q, --k and --v go together; run takes -n and -d from\ntheir shape when they are not given" }
#define CLI_OPT_SEED { OPT_SEED, 0, "seed", CLI_COUNT, offsetof(struct cli_args, seed), 0, CLI_ATTENTION_ONLY | CLI_VALUES_ONLY, "S", \
	"random inputs from seed S (default 1)" }
#define CLI_OPT_ENTRY_BOUND { OPT_ENTRY_BOUND, 0, "entry-bound", CLI_REAL, offsetof(struct cli_args, entry_bound), 0, \
	CLI_ATTENTION_ONLY | CLI_VALUES_ONLY, "B", "random inputs uniform in [-B, B] (default 1)" }
#define CLI_OPT_VALUES_OUTPUT { OPT_VALUES_OUTPUT, 0, "output", CLI_STRING, offsetof(struct cli_args, values_output), 0, \
	CLI_ATTENTION_ONLY | CLI_VALUES_ONLY, "A.npy", "write the outputs (A, or N or O without normalisation)\nas an n x d float64 .npy file (--decode P: the n - P\ngenerated rows)" }
/* The polynomial replacing exp (docs/VALUES.md "The polynomial"). */
#define CLI_OPT_POLYNOMIAL_WHEN(when) { OPT_POLYNOMIAL, 0, "polynomial", CLI_STRING, offsetof(struct cli_args, polynomial), 0, \
	when, "P", "taylor (the default), chebyshev or minimax: the\npolynomial P of degree g replacing exp" }
#define CLI_OPT_INTERVAL_WHEN(when) { OPT_INTERVAL, 0, "interval", CLI_REAL, offsetof(struct cli_args, interval), 0, \
	when, "BETA", "P approximates exp on [-BETA, BETA] (default B^2 sqrt d,\nB the entry bound or the largest |entry| of Q and K)" }
#define CLI_OPT_POLYNOMIAL CLI_OPT_POLYNOMIAL_WHEN(CLI_ATTENTION_ONLY | CLI_VALUES_ONLY)
#define CLI_OPT_INTERVAL CLI_OPT_INTERVAL_WHEN(CLI_ATTENTION_ONLY | CLI_VALUES_ONLY)
/* A sweep's outputs, sweep and frontier. */
#define CLI_OPT_CSV(help) { OPT_CSV, 0, "csv", CLI_STRING, offsetof(struct cli_args, csv), 0, 0, "FILE", help }
#define CLI_OPT_PLOT(help) { OPT_PLOT, 0, "plot", CLI_STRING, offsetof(struct cli_args, plot), 0, 0, "FILE", help }
#define CLI_OPT_PLOT_SCRIPT { OPT_PLOT_SCRIPT, 0, "plot-script", CLI_STRING, offsetof(struct cli_args, plot_script), 0, 0, \
	"FILE.gp", "write the plot's gnuplot script and its data (FILE.dat)\nbeside it, to restyle: `gnuplot FILE.gp` in that\ndirectory draws the plot's name (or FILE.svg)" }
#define CLI_OPT_VALUES_ALL(help) CLI_OPT_VALUES(help), CLI_OPT_INPUT(OPT_Q, "q", q_file, "Q"), \
	CLI_OPT_INPUT(OPT_K, "k", k_file, "K"), CLI_OPT_INPUT(OPT_V, "v", v_file, "V"), \
	CLI_OPT_SEED, CLI_OPT_ENTRY_BOUND, CLI_OPT_POLYNOMIAL, CLI_OPT_INTERVAL, CLI_OPT_VALUES_OUTPUT

/* Progress lines on standard error off a terminal too (a batch job's log). */
#define CLI_OPT_PROGRESS(what) { OPT_PROGRESS, 0, "progress", CLI_FLAG, offsetof(struct cli_args, progress), 0, 0, NULL, \
	"progress on standard error even when it is not a terminal\n(a batch job's log): a line " what }

/* Strategies from a shared object (docs/EXTENDING.md): run, compare,
 * sweep and list take it; cli.c loads it before the command runs. */
#define CLI_OPT_PLUGIN { OPT_PLUGIN, 0, "plugin", CLI_STRING, offsetof(struct cli_args, plugin), 0, 0, "FILE.so", \
	"load strategies from a plugin (docs/EXTENDING.md); its\ncode runs in pebblesim, its moves are validated" }

#define CLI_OPT_HELP { OPT_HELP, 'h', "help", CLI_FLAG, offsetof(struct cli_args, help), 0, 0, NULL, "this help" }
#define CLI_OPT_END { CLI_OPTION_COUNT, 0, NULL, CLI_FLAG, 0, 0, 0, NULL, NULL }

/* options.c: the parser, and the help it prints. */

/* Parses argv[first..argc) against cmd's table (getopt_long, arguments
 * permuted, -- ends the options); 0, or PS_EXIT_USAGE after a message. */
int cli_parse(const struct cli_command *cmd, int argc, char **argv,
	      struct cli_args *a, FILE *errout);

/* A decimal count, with k, M, G (x 1024^1..3) or 2^k when sizes is true,
 * between min and INT64_MAX; 0, or -1 with why in buf. */
int cli_parse_count(const char *text, bool sizes, uint64_t min, uint64_t *out,
		    char *why, size_t len);

/* "-n" or "--strategy": the option as users write it. */
const char *cli_option_name(enum cli_option_id id, char *buf, size_t len);

/* The entry of id in cmd's table, or NULL. */
const struct cli_option *cli_find_option(const struct cli_command *cmd,
					 enum cli_option_id id);

/* Refuses the options given that do not apply with (dag) or without a
 * DAG file: 0, or PS_EXIT_USAGE after a message. */
int cli_check_when(const struct cli_command *cmd, const struct cli_args *a,
		   bool dag, FILE *errout);

/* 0 when every option of ids[0..count) is given; else PS_EXIT_USAGE
 * after "RULE: -g is missing" ("-d and -g are missing"). */
int cli_require(const struct cli_command *cmd, const struct cli_args *a,
		FILE *errout, const char *rule, const enum cli_option_id *ids,
		size_t count);

/* The word of words[0..count) nearest to word, as git's "did you mean":
 * within an edit distance of about a third of its length (a swap of two
 * letters is one edit); NULL when none is that near. */
const char *cli_nearest(const char *word, const char *const *words, size_t count);

/* The strategy name nearest to name (cli_nearest over the registry's,
 * and "case" when with_case), or NULL. */
const char *cli_nearest_strategy(const char *name, bool with_case);

/* 0 when each of labels[0..count) is a strategy or "case"; else, for the
 * first that is not and has a near name, PS_EXIT_USAGE after "unknown
 * strategy 'X' in OPTION; did you mean 'Y'?" (the others are left to
 * ps_sweep_check's message). */
int cli_check_labels(const struct cli_command *cmd, const char *option,
		     const char *const *labels, size_t count, FILE *errout);

/* The command named name, or NULL; near: the command nearest to name
 * when none is, or NULL. */
const struct cli_command *cli_find_command(const char *name, const char **near);

/* "pebblesim: " fmt, the command's usage line, and where help is; returns
 * PS_EXIT_USAGE. */
int cli_usage_error(const struct cli_command *cmd, FILE *errout,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void cli_print_command_help(const struct cli_command *cmd, FILE *out);
void cli_print_help(FILE *out);

/* Where README.md and docs/ are: beside the running binary, installed
 * (BINDIR/../share/doc/pebblesim) or in the source tree (build/..);
 * false when neither holds README.md. */
bool cli_doc_dir(char *buf, size_t len);

/* man.c: the man page (`pebblesim __man`) and the words of bash
 * completion (`pebblesim __complete ...`), from the command table. */
int cli_man(FILE *out);
int cli_complete(int argc, char **argv, FILE *out, FILE *errout);

/* job.c: what run, compare and validate share. */

/* The attention DAG of -n -d -g after checking every limit (but the
 * pebble state's when state_later: a run checks it against its
 * strategy's plan): exact attention with --attention exact or a strategy
 * of it. */
int cli_build_attention(const struct cli_args *a, struct ps_attention *att,
			bool state_later, FILE *errout);

/* Exact attention asked for: --attention exact, or --strategy flash or
 * exact-matmul. */
bool cli_wants_exact(const struct cli_args *a);

/* The checks of --attention against -g, --case and --strategy; 0 or
 * PS_EXIT_USAGE after a message. */
int cli_check_attention(const struct cli_command *cmd, const struct cli_args *a,
			FILE *errout);

/* What reading --dag told: the format read, and what it lost or NULL. */
struct cli_dag_read {
	const char *format, *note;
};

/* The DAG of --dag, in --dag-format or the format its content shows. */
int cli_read_dag(const struct cli_args *a, struct ps_explicit *x,
		 struct cli_dag_read *how, FILE *errout);

void cli_problem(const struct cli_args *a, const struct ps_attention *att,
		 const struct ps_explicit *xdag, struct ps_problem *pb);

/* The inputs of --values (files, or --seed and --entry-bound); 0 or
 * PS_EXIT_USAGE after a message. */
int cli_values_inputs(const struct cli_command *cmd, const struct cli_args *a,
		      struct ps_values_inputs *in, FILE *errout);

/* run --values with --q, --k and --v: -n and -d from Q's shape when not
 * given; -n or -d that differs from it is refused by name, and so is K or
 * V of another shape (the reader names the file and both shapes). 0 or
 * PS_EXIT_USAGE after a message. */
int cli_infer_shape(const struct cli_command *cmd, struct cli_args *a, FILE *errout);

/* Writes the outputs of a run with values to --output, unless the run
 * failed (exit status 1: nothing written, the old file kept, a note on
 * errout); 0 or PS_EXIT_USAGE after a message. */
int cli_write_outputs(const struct cli_args *a, const struct ps_values *vals,
		      bool failed, FILE *errout);

/* The warning of a normaliser D~ <= 0, and the failure of a run with
 * values, on errout. */
void cli_values_warn(const struct ps_report *rep, FILE *errout);

/* Where progress goes: errout when it is a terminal or --progress is
 * given (then as whole lines, ps_progress_lines), else NULL. */
FILE *cli_progress_stream(const struct cli_args *a, FILE *errout);

/* "keylemma at n = 4096, d = 16, g = 3, M = 8192": a run in progress
 * lines (sizes NULL or "tuned"). */
const char *cli_progress_label(const struct ps_strategy *s, const char *sizes,
			       const struct ps_attention *att, uint64_t M,
			       char *buf, size_t len);

struct ps_replay;

/* The plan of the strategy a replayed trace's header names, for the
 * header's own M and parameters, into rep (section, has_plan, plan);
 * nothing for a strategy pebblesim does not know or of the other DAG
 * kind (xdag: the trace's DAG file, or NULL). */
void cli_replay_plan(const struct ps_replay *replay, const struct ps_explicit *xdag,
		     struct ps_report *rep);


/* Refuses the options s does not take (its `takes`), and a strategy of
 * the other DAG kind; 0 or PS_EXIT_USAGE after a message. */
int cli_check_strategy(const struct cli_args *a, const struct ps_strategy *s,
		       bool explicit_dag, FILE *errout);

/* report.c: every report printed, in words or as JSON. */

void cli_report_print(const struct ps_report *rep, FILE *out);
int cli_report_print_json(const struct ps_report *rep, FILE *out);

/* The lower bounds in words: the largest (beside io when measured), the
 * others that apply, and those not applied with why. */
void cli_lower_bounds_print(const struct ps_lower_bounds *lb, uint64_t io,
			    bool measured, FILE *out);

/* A bound's value in JSON: an integer while it is a whole number. */
json_t *cli_bound_value_json(double value);

/* {"lower": the largest, "applied": [...], "skipped": [{"name","why"}]} */
json_t *cli_lower_bounds_json(const struct ps_lower_bounds *lb);

/* The "dag" object of every JSON report. */
json_t *cli_dag_json(const struct ps_report *rep);

/* --dry-run: what a run would take, predict and bound, without running. */
struct cli_dry_run {
	const struct ps_report *rep; /* plan, case and lower bounds filled */
	const struct ps_strategy *s;
	const struct ps_dag *dag;
	const char *algorithm;       /* why --case chose s, or "" */
	uint64_t state_bytes, rss_bytes;
};

void cli_dry_run_print(const struct cli_dry_run *dr, bool json, FILE *out);

/* One row of compare: a report, or why the strategy does not apply. */
struct cli_compare_row {
	const struct ps_strategy *s;
	const char *order; /* explicit DAGs: the compute order */
	const char *sizes; /* a tiling's tile sizes: NULL (the proof's) or "tuned" */
	struct ps_report rep;
	char why[PS_ERROR_MAX + 64];
	bool pending;   /* to be run: M suffices and the row is asked for */
	bool ran;
	bool predicted; /* --predict: the cost model's counts, not judged */
	/* predicted without --predict: why the engine did not run it */
	char not_simulated[PS_ERROR_MAX];
};

/* A row's name: the strategy, with "/ORDER" or "/tuned" where it has one. */
const char *cli_compare_row_name(const struct cli_compare_row *row, char *buf,
				 size_t len);

/* compare's table, or its JSON array; head gives the DAG, M, the case. */
void cli_compare_print(const struct ps_report *head,
		       const struct cli_compare_row *rows, size_t count,
		       bool json, FILE *out);

void cli_list_print(bool json, FILE *out);

#endif
