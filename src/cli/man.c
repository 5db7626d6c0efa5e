/*
 * What the command table teaches outside --help: the man page and the
 * words bash completion offers. Both are read from the tables themselves
 * (each command's options, usage, description and examples), so that a
 * new option reaches them without another edit:
 *
 *   pebblesim __man                        pebblesim(1) in roff (make writes build/pebblesim.1)
 *   pebblesim __complete commands          the commands, one a line
 *   pebblesim __complete options COMMAND   COMMAND's options
 *   pebblesim __complete operands COMMAND  __files if COMMAND takes files (help: the commands)
 *   pebblesim __complete values COMMAND OPTION
 *                                          what follows OPTION: its values, or
 *                                          __files, __number, __flag
 *   pebblesim __complete table             every command's options as JSON
 *
 * __files may name the files' extension ("__files .so"): the script then
 * offers those files and directories. None is listed in --help: they
 * serve the build, the completion script (scripts/pebblesim.bash-completion)
 * and the Python module's signatures (src/python/gen_commands.py).
 */
#include "cli.h"

#include <string.h>

/* The values of the options that take a word (not a file, not a number),
 * as the commands accept them. --strategy and --strategies come from the
 * registry. */
static const struct {
	enum cli_option_id id;
	const char *values;
} option_values[] = {
	{ OPT_CASE, "I II III IV auto" },
	{ OPT_TILES, "square tall unit" },
	{ OPT_SIZES, "proof tuned" },
	{ OPT_LAYOUT, "rect-dup rect-save tail" },
	{ OPT_TRACE_DETAIL, "set elementary" },
	{ OPT_ORDER, "topo dfs" },
	{ OPT_FORMAT, "graphml gml edgelist dot" },
	{ OPT_DAG_FORMAT, "graphml gml edgelist hdag mtx" },
	{ OPT_ATTENTION, "approx exact" },
	{ OPT_POLYNOMIAL, "taylor chebyshev minimax" },
	{ OPT_BOUND, "a-priori measured" },
};

/* An option whose value is a file: its value's name says so. */
static bool takes_file(const struct cli_option *o)
{
	return o->kind == CLI_STRING && o->arg &&
	       (strstr(o->arg, "FILE") || strstr(o->arg, ".npy"));
}

/* The extension its value's name gives a file option ("FILE.so": ".so"),
 * or "". */
static const char *file_extension(const struct cli_option *o)
{
	const char *dot = takes_file(o) ? strrchr(o->arg, '.') : NULL;

	return dot ? dot : "";
}

/* The extension of a command's operands: validate's and view's traces,
 * sweep --merge's CSV files. */
static const char *operand_extension(const struct cli_command *cmd)
{
	if (!strcmp(cmd->name, "validate") || !strcmp(cmd->name, "view"))
		return ".jsonl";
	if (!strcmp(cmd->name, "sweep"))
		return ".csv";
	return "";
}

static const struct cli_command *command_named(const char *name)
{
	for (size_t k = 0; k < cli_command_count; k++)
		if (!strcmp(cli_commands[k].name, name))
			return &cli_commands[k];
	return NULL;
}

/* "-n" or "--strategy" names o in cmd's table (or -n as "-n64" cut). */
static const struct cli_option *option_named(const struct cli_command *cmd,
					     const char *word)
{
	for (const struct cli_option *o = cmd->options; o->help; o++) {
		if (o->long_name && word[0] == '-' && word[1] == '-' &&
		    !strcmp(word + 2, o->long_name))
			return o;
		if (o->short_name && word[0] == '-' && word[1] == o->short_name && !word[2])
			return o;
	}
	return NULL;
}

/* The strategies a command's --strategy or --strategies names. */
static void print_strategies(const struct cli_command *cmd, enum cli_option_id id,
			     FILE *out)
{
	/* sweep's and frontier's labels: the case's algorithm at each point */
	if (id == OPT_STRATEGIES && strcmp(cmd->name, "compare"))
		fputs("case\n", out);
	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];

		/* compare's rows: best is the best row */
		if (!strcmp(cmd->name, "compare") && (s->flags & PS_STRATEGY_CHOOSER))
			continue;
		/* sweeps run the attention DAGs, not DAG files */
		if (id == OPT_STRATEGIES && strcmp(cmd->name, "compare") &&
		    (s->flags & PS_STRATEGY_EXPLICIT))
			continue;
		fprintf(out, "%s\n", s->name);
	}
}

static int complete_values(const struct cli_command *cmd, const char *word, FILE *out)
{
	const struct cli_option *o = option_named(cmd, word);

	if (!o || o->kind == CLI_FLAG) {
		fputs("__flag\n", out);
		return PS_EXIT_VALID;
	}
	if (o->id == OPT_STRATEGY || o->id == OPT_STRATEGIES || o->id == OPT_BASELINE) {
		print_strategies(cmd, o->id, out);
		return PS_EXIT_VALID;
	}
	for (size_t k = 0; k < sizeof(option_values) / sizeof(option_values[0]); k++)
		if (option_values[k].id == o->id) {
			for (const char *p = option_values[k].values; *p; p++)
				fputc(*p == ' ' ? '\n' : *p, out);
			fputc('\n', out);
			return PS_EXIT_VALID;
		}
	if (takes_file(o))
		fprintf(out, "__files%s%s\n", *file_extension(o) ? " " : "", file_extension(o));
	else
		fputs("__number\n", out);
	return PS_EXIT_VALID;
}

static const char *const kind_names[] = {
	[CLI_FLAG] = "flag", [CLI_STRING] = "string", [CLI_COUNT] = "count",
	[CLI_SIZE] = "size", [CLI_REAL] = "real",
};

/* One option as JSON: its names, kind, value's name, help, and the words
 * its value takes where the table knows them. */
static json_t *option_json(const struct cli_option *o)
{
	char letter[2] = { (char)o->short_name, '\0' };
	json_t *values = json_null();

	for (size_t k = 0; k < sizeof(option_values) / sizeof(option_values[0]); k++)
		if (option_values[k].id == o->id) {
			char words[128], *save = NULL;

			values = json_array();
			snprintf(words, sizeof(words), "%s", option_values[k].values);
			for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
				json_array_append_new(values, json_string(w));
		}
	return json_pack("{s:s?, s:s?, s:s, s:s?, s:s, s:o, s:b, s:s?, s:b}",
			 "short", o->short_name ? letter : NULL, "long", o->long_name,
			 "kind", kind_names[o->kind], "arg", o->arg, "help", o->help,
			 "values", values, "file", takes_file(o),
			 "extension", *file_extension(o) ? file_extension(o) : NULL,
			 "range", (o->when & CLI_RANGE) != 0);
}

/* Every command, its usage, summary and options. */
static int print_table(FILE *out)
{
	json_t *commands = json_array();
	int rc;

	for (size_t k = 0; k < cli_command_count; k++) {
		const struct cli_command *cmd = &cli_commands[k];
		json_t *options = json_array();

		for (const struct cli_option *o = cmd->options; o->help; o++)
			json_array_append_new(options, option_json(o));
		json_array_append_new(commands,
				      json_pack("{s:s, s:s, s:s, s:i, s:i, s:o}", "name", cmd->name,
						"usage", cmd->help->usage, "summary", cmd->help->summary,
						"min_operands", cmd->min_operands,
						"max_operands", cmd->max_operands, "options", options));
	}
	rc = json_dumpf(commands, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(commands);
	fputc('\n', out);
	return rc ? PS_EXIT_USAGE : PS_EXIT_VALID;
}

int cli_complete(int argc, char **argv, FILE *out, FILE *errout)
{
	const struct cli_command *cmd = argc >= 2 ? command_named(argv[1]) : NULL;

	if (argc == 1 && !strcmp(argv[0], "commands")) {
		for (size_t k = 0; k < cli_command_count; k++)
			fprintf(out, "%s\n", cli_commands[k].name);
		return PS_EXIT_VALID;
	}
	if (argc == 2 && cmd && !strcmp(argv[0], "options")) {
		for (const struct cli_option *o = cmd->options; o->help; o++) {
			if (o->short_name)
				fprintf(out, "-%c\n", o->short_name);
			if (o->long_name)
				fprintf(out, "--%s\n", o->long_name);
		}
		return PS_EXIT_VALID;
	}
	if (argc == 1 && !strcmp(argv[0], "table"))
		return print_table(out);
	if (argc == 3 && cmd && !strcmp(argv[0], "values"))
		return complete_values(cmd, argv[2], out);
	if (argc == 2 && cmd && !strcmp(argv[0], "operands")) {
		/* validate's trace, sweep --merge's CSV files */
		if (cmd->max_operands && strcmp(cmd->name, "help"))
			fprintf(out, "__files%s%s\n", *operand_extension(cmd) ? " " : "",
				operand_extension(cmd));
		if (!strcmp(cmd->name, "help"))
			for (size_t k = 0; k < cli_command_count; k++)
				fprintf(out, "%s\n", cli_commands[k].name);
		return PS_EXIT_VALID;
	}
	fputs("pebblesim: __complete commands | options COMMAND | operands COMMAND | values COMMAND OPTION | table\n",
	      errout);
	return PS_EXIT_USAGE;
}

/* Text in roff: a backslash as \e, a line's leading dot or quote kept as
 * text, and every hyphen of an option an ASCII hyphen (\-). fill: the
 * text's line breaks are spaces (roff fills); else kept. */
static void roff_text(const char *text, bool fill, FILE *out)
{
	bool line_start = true;

	for (const char *p = text; *p; p++) {
		if (line_start && (*p == '.' || *p == '\''))
			fputs("\\&", out);
		line_start = false;
		if (*p == '\\')
			fputs("\\e", out);
		else if (*p == '-')
			fputs("\\-", out);
		else if (*p == '\n') {
			fputc(fill && p[1] ? ' ' : '\n', out);
			line_start = !fill || !p[1];
			if (fill && p[1] && (p[1] == '.' || p[1] == '\''))
				fputs("\\&", out);
		} else
			fputc(*p, out);
	}
}

/* A command's description: its paragraphs filled, one .PP each. */
static void roff_paragraphs(const char *text, FILE *out)
{
	const char *p = text;

	while (*p) {
		const char *end = strstr(p, "\n\n");
		size_t len = end ? (size_t)(end - p) + 1 : strlen(p);
		char buf[4096];

		snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), p);
		fputs(".PP\n", out);
		roff_text(buf, true, out);
		fputc('\n', out);
		p += len;
		while (*p == '\n')
			p++;
	}
}

static void roff_option(const struct cli_option *o, FILE *out)
{
	fputs(".TP\n", out);
	if (o->short_name)
		fprintf(out, "\\fB\\-%c\\fR%s", o->short_name, o->long_name ? ", " : "");
	if (o->long_name) {
		fputs("\\fB", out);
		roff_text("--", false, out);
		roff_text(o->long_name, false, out);
		fputs("\\fR", out);
	}
	if (o->arg) {
		fputs(" \\fI", out);
		roff_text(o->arg, false, out);
		fputs("\\fR", out);
	}
	fputc('\n', out);
	roff_text(o->help, true, out);
	fputc('\n', out);
}

static void roff_command(const struct cli_command *cmd, FILE *out)
{
	fputs(".SS \"", out);
	roff_text(cmd->name, false, out);
	fputs("\"\n.nf\n\\fBpebblesim ", out);
	roff_text(cmd->help->usage, false, out);
	fputs("\\fR\n.fi\n", out);
	roff_paragraphs(cmd->help->description, out);
	fputs(".PP\nOptions of ", out);
	roff_text(cmd->name, false, out);
	fputs(":\n", out);
	for (const struct cli_option *o = cmd->options; o->help; o++)
		roff_option(o, out);
	fputs(".PP\nExamples:\n.PP\n.nf\n", out);
	roff_text(cmd->help->examples, false, out);
	fputs(".fi\n", out);
}

int cli_man(FILE *out)
{
	fprintf(out, ".\\\" pebblesim(1), written by `pebblesim __man` from the command table\n"
		".TH PEBBLESIM 1 \"\" \"pebblesim %s\" \"pebblesim manual\"\n", PS_VERSION);
	fputs(".SH NAME\npebblesim \\- the red-blue pebble game on the DAG of approximate attention\n"
	      ".SH SYNOPSIS\n.nf\n", out);
	for (size_t k = 0; k < cli_command_count; k++) {
		fputs("\\fBpebblesim ", out);
		roff_text(cli_commands[k].help->usage, false, out);
		fputs("\\fR\n", out);
	}
	fputs("\\fBpebblesim\\fR \\fB\\-\\-version\\fR | \\fB\\-V\\fR\n.fi\n", out);
	fputs(".SH DESCRIPTION\n"
	      ".PP\n"
	      "pebblesim plays the red\\-blue pebble game (Hong and Kung; with partial\n"
	      "aggregation) on the DAG of approximate attention, A = D^\\-1 U1 (U2^T V)\n"
	      "(Alman and Song), runs a tiling strategy from \"Approaching I/O\\-optimality\n"
	      "for Approximate Attention\", validates every move of its sequence, and sets\n"
	      "the loads and saves beside the paper's bounds.\n"
	      ".PP\n"
	      "Without a command, pebblesim runs \\fBrun\\fR. Each command takes its own\n"
	      "options and refuses the others by name. Options may come before or after\n"
	      "the operands; \\fB\\-\\-\\fR ends them; \\fB\\-\\-opt=VALUE\\fR and \\fB\\-n64\\fR work.\n"
	      "Sizes (\\fB\\-n\\fR, \\fB\\-M\\fR) take k, M, G (powers of 1024: \\fB\\-M 8k\\fR) or 2^k;\n"
	      "every value is at most 2^63 \\- 1, the largest integer JSON reports carry.\n"
	      ".SH COMMANDS\n", out);
	for (size_t k = 0; k < cli_command_count; k++)
		roff_command(&cli_commands[k], out);
	fputs(".SH EXIT STATUS\n"
	      ".TP\n0\nvalid, and within the bounds\n"
	      ".TP\n1\nan invalid sequence, a bound contradicted, or values further from the\n"
	      "direct evaluation than the tolerance; for \\fBoptimal\\fR, a bug found (a\n"
	      "strategy's valid sequence below the optimum, or a lower bound above it)\n"
	      ".TP\n2\nbad usage or input: the message names the option, the file and its line\n"
	      ".SH FILES\n"
	      ".TP\n\\fIshare/doc/pebblesim/\\fR\n"
	      "README.md and docs/ under the installation prefix: the model (MODEL.md), the\n"
	      "bounds (BOUNDS.md), the strategies (STRATEGIES.md), the commands and the JSON\n"
	      "schema (CLI.md, pebblesim.schema.json), traces (TRACE_FORMAT.md), DAG files\n"
	      "(DAG_FILES.md), exact attention (EXACT.md), values (VALUES.md), the exact\n"
	      "optimum (OPTIMAL.md), maps (MAP.md), the viewer (VIEWER.md), untrusted inputs\n"
	      "and outputs (SECURITY.md), strategies of one's own (EXTENDING.md),\n"
	      "performance (PERFORMANCE.md), architecture (ARCHITECTURE.md);\n"
	      "\\fBpebblesim \\-\\-help\\fR names the directory it finds.\n"
	      ".TP\n\\fIshare/doc/pebblesim/examples/\\fR\n"
	      "traces, DAG files, a program of one's own against libpebblesim (api/), and\n"
	      "the scripts of a sweep in shards with GNU parallel or a Slurm array\n"
	      "(distributed/).\n"
	      ".SH ENVIRONMENT\n"
	      ".TP\n\\fBTMPDIR\\fR\n"
	      "where the temporaries of a run go (an absolute path; else /tmp): output files\n"
	      "are written beside their target and renamed into place.\n"
	      ".SH EXAMPLES\n.nf\n", out);
	roff_text("pebblesim --case II -n 4096 -d 16 -g 3 -M 8k\n"
		  "    Case II's group tiling (Key Lemma 3.2) on 4096 tokens, 16 features\n"
		  "pebblesim compare -n 1024 -d 16 -g 5 -M 2048 --strategies colpass,generic -j 2\n"
		  "    two strategies side by side, in two processes\n"
		  "pebblesim --case II -n 64 -d 4 -g 2 -M 100 --trace run.jsonl\n"
		  "pebblesim validate -M 60 run.jsonl\n"
		  "    write a trace, then try it under a smaller fast memory\n"
		  "pebblesim sweep -n 1k:64k:x2 -d 16 -g 3 -M 8k --predict --shard 1/3 --csv s1.csv\n"
		  "pebblesim sweep --merge s1.csv s2.csv s3.csv --plot crossover.svg\n"
		  "    a sweep in three shards, joined\n", false, out);
	fputs(".fi\n"
	      ".SH SEE ALSO\n"
	      "\\fBgnuplot\\fR(1), \\fBparallel\\fR(1), \\fBsbatch\\fR(1), \\fBpkg\\-config\\fR(1);\n"
	      "README.md and docs/CLI.md in the documentation directory.\n", out);
	return PS_EXIT_VALID;
}
