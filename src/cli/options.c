/*
 * Option parsing for every command: glibc's getopt_long over the options
 * of all commands, so that an option of another command is recognised,
 * takes its value, and is refused by name; each command accepts only the
 * entries of its own table. Arguments are permuted (options may follow
 * the operands), `--` ends the options, `--opt=value` and `-n64` work.
 */
#define _GNU_SOURCE /* getopt_long */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* JSON integers are signed 64-bit: every parameter must round-trip. */
#define CLI_VALUE_MAX PS_PARAM_MAX

const struct cli_option *cli_find_option(const struct cli_command *cmd,
					 enum cli_option_id id)
{
	for (const struct cli_option *o = cmd->options; o->help; o++)
		if (o->id == id)
			return o;
	return NULL;
}

/* The first entry of id in any command's table: its name and kind. */
static const struct cli_option *any_option(enum cli_option_id id)
{
	for (size_t c = 0; c < cli_command_count; c++) {
		const struct cli_option *o = cli_find_option(&cli_commands[c], id);

		if (o)
			return o;
	}
	return NULL;
}

const char *cli_option_name(enum cli_option_id id, char *buf, size_t len)
{
	const struct cli_option *o = any_option(id);

	if (!o)
		snprintf(buf, len, "?");
	else if (o->long_name)
		snprintf(buf, len, "--%s", o->long_name);
	else
		snprintf(buf, len, "-%c", o->short_name);
	return buf;
}

int cli_usage_error(const struct cli_command *cmd, FILE *errout,
		    const char *fmt, ...)
{
	va_list ap;

	fputs("pebblesim: ", errout);
	va_start(ap, fmt);
	vfprintf(errout, fmt, ap);
	va_end(ap);
	fprintf(errout, "\nusage: pebblesim %s\n", cmd->help->usage);
	fprintf(errout, "Try 'pebblesim %s --help' for more information.\n",
		cmd->name);
	return PS_EXIT_USAGE;
}

int cli_require(const struct cli_command *cmd, const struct cli_args *a,
		FILE *errout, const char *rule, const enum cli_option_id *ids,
		size_t count)
{
	char missing[128] = "", name[64];
	size_t used = 0, absent = 0, left = 0;

	for (size_t k = 0; k < count; k++)
		left += !a->given[ids[k]];
	for (size_t k = 0; k < count; k++) {
		if (a->given[ids[k]])
			continue;
		absent++;
		used += (size_t)snprintf(missing + used, sizeof(missing) - used, "%s%s",
					 absent == 1 ? "" : absent == left ? " and " : ", ",
					 cli_option_name(ids[k], name, sizeof(name)));
		if (used >= sizeof(missing))
			used = sizeof(missing) - 1;
	}
	if (!absent)
		return 0;
	return cli_usage_error(cmd, errout, "%s: %s %s missing", rule, missing,
			       absent == 1 ? "is" : "are");
}

/* The optimal string alignment distance of a and b (insertions,
 * deletions, substitutions, and swaps of two neighbours, one each),
 * counted up to limit + 1. */
static size_t edit_distance(const char *a, const char *b, size_t limit)
{
	enum { LONGEST = 63 };
	size_t la = strlen(a), lb = strlen(b);
	size_t row[3][LONGEST + 2];

	if (la > LONGEST || lb > LONGEST)
		return limit + 1;
	if ((la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	for (size_t j = 0; j <= lb; j++)
		row[1][j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *cur = row[(i + 1) % 3], *prev = row[i % 3], *prev2 = row[(i + 2) % 3];

		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t best = prev[j - 1] + cost;

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
	}
	return row[(la + 1) % 3][lb];
}

const char *cli_nearest(const char *word, const char *const *words, size_t count)
{
	/* a third of the word's length, at least 1, at most 3 */
	size_t len = strlen(word), limit = len / 3 < 1 ? 1 : len / 3 > 3 ? 3 : len / 3;
	size_t best = limit + 1;
	const char *nearest = NULL;
	bool tie = false;

	if (!len)
		return NULL;
	for (size_t k = 0; k < count; k++) {
		size_t dist = edit_distance(word, words[k], limit);

		if (dist < best) {
			best = dist;
			nearest = words[k];
			tie = false;
		} else if (dist == best && nearest && strcmp(nearest, words[k])) {
			tie = true;
		}
	}
	/* two words as near: no guess */
	return tie ? NULL : nearest;
}

const char *cli_nearest_strategy(const char *name, bool with_case)
{
	const char *names[256];
	size_t count = 0;

	if (with_case)
		names[count++] = "case";
	for (size_t k = 0; k < ps_strategy_count && count < sizeof(names) / sizeof(names[0]); k++)
		names[count++] = ps_strategies[k]->name;
	return cli_nearest(name, names, count);
}

int cli_check_labels(const struct cli_command *cmd, const char *option,
		     const char *const *labels, size_t count, FILE *errout)
{
	for (size_t k = 0; k < count; k++) {
		const char *near;

		if (!strcmp(labels[k], "case") || ps_strategy_find(labels[k]))
			continue;
		if ((near = cli_nearest_strategy(labels[k], true)))
			return cli_usage_error(cmd, errout, "unknown strategy '%.64s' in %s; did you mean '%s'?",
					       labels[k], option, near);
	}
	return 0;
}

const struct cli_command *cli_find_command(const char *name, const char **near)
{
	const char *names[32];
	size_t count = 0;

	*near = NULL;
	for (size_t k = 0; k < cli_command_count; k++) {
		if (!strcmp(cli_commands[k].name, name))
			return &cli_commands[k];
		if (count < sizeof(names) / sizeof(names[0]))
			names[count++] = cli_commands[k].name;
	}
	*near = cli_nearest(name, names, count);
	return NULL;
}

/* The long option of cmd nearest to "--word" (up to any '='). */
static const char *nearest_option(const struct cli_command *cmd, const char *arg)
{
	const char *names[CLI_OPTION_COUNT + 1];
	char word[64];
	size_t count = 0;

	for (const struct cli_option *o = cmd->options; o->help && count < CLI_OPTION_COUNT; o++)
		if (o->long_name)
			names[count++] = o->long_name;
	snprintf(word, sizeof(word), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
	return cli_nearest(word, names, count);
}

int cli_parse_count(const char *text, bool sizes, uint64_t min, uint64_t *out,
		    char *why, size_t len)
{
	const char *p = text;
	uint64_t value = 0, scale = 1;
	unsigned shift = 0;

	if (*p < '0' || *p > '9') {
		snprintf(why, len, "expected an integer >= %llu", (unsigned long long)min);
		return -1;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		if (value > (CLI_VALUE_MAX - (uint64_t)(*p - '0')) / 10)
			goto too_large;
		value = value * 10 + (uint64_t)(*p - '0');
	}
	if (sizes && *p == '^' && value == 2) {
		/* 2^k */
		uint64_t k;
		char inner[64];

		if (cli_parse_count(p + 1, false, 0, &k, inner, sizeof(inner)) || k > 62) {
			snprintf(why, len, "2^k needs 0 <= k <= 62 (the largest value is 2^63 - 1 = 9223372036854775807)");
			return -1;
		}
		value = UINT64_C(1) << k;
		p = "";
	} else if (sizes && *p && !p[1]) {
		switch (*p) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: break;
		}
		if (shift)
			p++;
	}
	if (*p) {
		snprintf(why, len, sizes ? "expected an integer >= %llu, with k, M or G (x 1024, 1024^2, 1024^3) or as 2^k"
					 : "expected an integer >= %llu",
			 (unsigned long long)min);
		return -1;
	}
	scale = UINT64_C(1) << shift;
	if (value > CLI_VALUE_MAX / scale)
		goto too_large;
	value *= scale;
	if (value < min) {
		snprintf(why, len, "expected an integer >= %llu", (unsigned long long)min);
		return -1;
	}
	*out = value;
	return 0;
too_large:
	snprintf(why, len, "above the largest value, 2^63 - 1 = 9223372036854775807 (JSON's integers are signed 64-bit)");
	return -1;
}

/* getopt_long's table: the options of every command, each once. */
static size_t all_options(struct option *longs, size_t max, char *shorts,
			  size_t shorts_len)
{
	size_t count = 0, used = 0;
	bool seen[CLI_OPTION_COUNT] = { false };

	/* ':' first: a missing value is told apart from an unknown option */
	shorts[used++] = ':';
	for (size_t c = 0; c < cli_command_count; c++)
		for (const struct cli_option *o = cli_commands[c].options; o->help; o++) {
			if (seen[o->id])
				continue;
			seen[o->id] = true;
			if (o->long_name && count + 1 < max)
				longs[count++] = (struct option){
					o->long_name,
					o->kind == CLI_FLAG ? no_argument : required_argument,
					NULL, 256 + (int)o->id,
				};
			if (o->short_name && used + 3 < shorts_len) {
				shorts[used++] = (char)o->short_name;
				if (o->kind != CLI_FLAG)
					shorts[used++] = ':';
			}
		}
	shorts[used] = '\0';
	longs[count] = (struct option){ NULL, 0, NULL, 0 };
	return count;
}

static enum cli_option_id id_of(int c)
{
	if (c >= 256)
		return (enum cli_option_id)(c - 256);
	for (size_t k = 0; k < cli_command_count; k++)
		for (const struct cli_option *o = cli_commands[k].options; o->help; o++)
			if (o->short_name == c)
				return o->id;
	return CLI_OPTION_COUNT;
}

/* The long options that "--ab..." (up to any '=') abbreviates, as
 * "--abc, --abd" into buf (len >= 8; names that do not fit end it in
 * ", ..."); how many there are. */
static size_t expansions(const struct option *longs, const char *arg, char *buf, size_t len)
{
	const size_t n = strcspn(arg + 2, "=");
	size_t count = 0, used = 0;
	bool full = false;

	buf[0] = '\0';
	if (n == 0)
		return 0;
	for (const struct option *l = longs; l->name; l++) {
		if (strncmp(l->name, arg + 2, n))
			continue;
		if (!full) {
			/* room is kept for ", ..." */
			const size_t room = len - used - 6;
			int w = snprintf(buf + used, room, "%s--%s", count ? ", " : "", l->name);

			if (w > 0 && (size_t)w < room) {
				used += (size_t)w;
			} else {
				buf[used] = '\0';
				strcat(buf + used, ", ...");
				full = true;
			}
		}
		count++;
	}
	return count;
}

/* The option as the user wrote it, without its value: "--trace". */
static const char *as_written(const char *arg, char *buf, size_t len)
{
	size_t n = strcspn(arg, "=");

	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), arg);
	return buf;
}

static int set_value(const struct cli_command *cmd, const struct cli_option *o,
		     const char *value, struct cli_args *a, FILE *errout)
{
	char *base = (char *)a;
	char name[64], why[160];

	switch (o->kind) {
	case CLI_FLAG:
		*(bool *)(base + o->offset) = true;
		break;
	case CLI_STRING:
		*(const char **)(base + o->offset) = value;
		break;
	case CLI_REAL: {
		char *end;
		double x;

		errno = 0;
		x = strtod(value, &end);
		if (end == value || *end || errno || !isfinite(x) || !(x > 0))
			return cli_usage_error(cmd, errout, "invalid value '%s' for %s: expected a finite number > 0",
					       value, cli_option_name(o->id, name, sizeof(name)));
		*(double *)(base + o->offset) = x;
		break;
	}
	case CLI_COUNT:
	case CLI_SIZE:
		a->text[o->id] = value;
		/* sweep: a range, read by the command */
		if ((o->when & CLI_RANGE) && strchr(value, ':'))
			break;
		if (cli_parse_count(value, o->kind == CLI_SIZE, o->min,
				    (uint64_t *)(base + o->offset), why, sizeof(why)))
			return cli_usage_error(cmd, errout, "invalid value '%s' for %s: %s",
					       value, cli_option_name(o->id, name, sizeof(name)),
					       why);
		break;
	}
	a->given[o->id] = true;
	return 0;
}

int cli_parse(const struct cli_command *cmd, int argc, char **argv,
	      struct cli_args *a, FILE *errout)
{
	struct option longs[CLI_OPTION_COUNT + 1];
	char shorts[2 * CLI_OPTION_COUNT + 4], name[64], names[512];
	int c;

	all_options(longs, CLI_OPTION_COUNT + 1, shorts, sizeof(shorts));
	/* argv[0] is the command (or the program): getopt starts after it;
	 * optind = 0 makes glibc start afresh, as each call must */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct cli_option *o;
		const char *arg = argv[optind - 1], *near;
		enum cli_option_id id;
		int rc;

		if (c == '?') {
			if (optopt >= 256) /* --flag=value */
				return cli_usage_error(cmd, errout, "option '%s' takes no value",
						       cli_option_name(id_of(optopt), name, sizeof(name)));
			if (optopt && optopt < 256)
				return cli_usage_error(cmd, errout, "unknown option '-%c'", optopt);
			if (!strncmp(arg, "--", 2) &&
			    expansions(longs, arg, names, sizeof(names)) > 1)
				return cli_usage_error(cmd, errout,
						       "ambiguous option '%s': it abbreviates %s",
						       as_written(arg, name, sizeof(name)), names);
			if (!strncmp(arg, "--", 2) && (near = nearest_option(cmd, arg)))
				return cli_usage_error(cmd, errout, "unknown option '%s'; did you mean '--%s'?",
						       as_written(arg, name, sizeof(name)), near);
			return cli_usage_error(cmd, errout, "unknown option '%s'",
					       as_written(arg, name, sizeof(name)));
		}
		if (c == ':')
			return cli_usage_error(cmd, errout, "option '%s' needs a value",
					       cli_option_name(id_of(optopt), name, sizeof(name)));
		id = id_of(c);
		o = cli_find_option(cmd, id);
		if (!o)
			return cli_usage_error(cmd, errout, "option '%s' does not apply to %s",
					       cli_option_name(id, name, sizeof(name)), cmd->name);
		rc = set_value(cmd, o, optarg, a, errout);
		if (rc)
			return rc;
	}
	a->operands = argv + optind;
	a->operand_count = argc - optind;
	if (a->help)
		return 0;
	if (a->operand_count < cmd->min_operands)
		return cli_usage_error(cmd, errout, "%s needs %s", cmd->name,
				       cmd->min_operands == 1 ? "a file (or - for standard input)"
							      : "more arguments");
	if (a->operand_count > cmd->max_operands)
		return cli_usage_error(cmd, errout, "unexpected argument '%s' for %s",
				       a->operands[cmd->max_operands], cmd->name);
	return 0;
}

int cli_check_when(const struct cli_command *cmd, const struct cli_args *a,
		   bool dag, FILE *errout)
{
	for (const struct cli_option *o = cmd->options; o->help; o++) {
		char name[64];

		if (!a->given[o->id])
			continue;
		if (dag && (o->when & CLI_ATTENTION_ONLY))
			return cli_usage_error(cmd, errout,
					       "option '%s' does not apply to %s --dag: a DAG from a file has no attention parameters",
					       cli_option_name(o->id, name, sizeof(name)), cmd->name);
		if (!dag && (o->when & CLI_DAG_ONLY))
			return cli_usage_error(cmd, errout,
					       "option '%s' applies only with --dag FILE",
					       cli_option_name(o->id, name, sizeof(name)));
		if (!a->values && (o->when & CLI_VALUES_ONLY))
			return cli_usage_error(cmd, errout,
					       "option '%s' applies only with --values",
					       cli_option_name(o->id, name, sizeof(name)));
	}
	return 0;
}

/* Prints text indented by indent, continuing at its newlines. */
static void print_indented(const char *text, int indent, FILE *out)
{
	for (const char *p = text; *p; p++) {
		fputc(*p, out);
		if (*p == '\n' && p[1])
			fprintf(out, "%*s", indent, "");
	}
	fputc('\n', out);
}

void cli_print_command_help(const struct cli_command *cmd, FILE *out)
{
	char sizes[128];

	fprintf(out, "usage: pebblesim %s\n\n", cmd->help->usage);
	fputs(cmd->help->description, out);
	fputs("\nOptions:\n", out);
	for (const struct cli_option *o = cmd->options; o->help; o++) {
		char head[64];
		int used;

		if (o->short_name && o->long_name)
			used = snprintf(head, sizeof(head), "  -%c, --%s", o->short_name, o->long_name);
		else if (o->short_name)
			used = snprintf(head, sizeof(head), "  -%c", o->short_name);
		else
			used = snprintf(head, sizeof(head), "  --%s", o->long_name);
		if (o->arg)
			used += snprintf(head + used, sizeof(head) - (size_t)used, " %s", o->arg);
		if (used >= 20)
			fprintf(out, "%s\n%20s", head, "");
		else
			fprintf(out, "%-20s", head);
		print_indented(o->help, 20, out);
	}
	sizes[0] = '\0';
	for (const struct cli_option *o = cmd->options; o->help; o++)
		if (o->kind == CLI_SIZE) {
			char name[32];

			snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), "%s%s",
				 sizes[0] ? ", " : "", cli_option_name(o->id, name, sizeof(name)));
		}
	if (sizes[0])
		fprintf(out, "\nSizes (%s) take k, M or G, powers of 1024 (8k = 8192,\n"
			"64k = 65536, 1M = 1048576), or 2^k (2^13 = 8192); every value is at most\n"
			"2^63 - 1, the largest integer JSON reports carry.\n", sizes);
	fputs("\nExamples:\n", out);
	fputs(cmd->help->examples, out);
}

/*
 * The documentation is found from the binary, not from a path compiled
 * in: `make install PREFIX=...` then copies the build's binary as it is,
 * and --help names the directory that holds README.md.
 */
bool cli_doc_dir(char *buf, size_t len)
{
	static const char *const beside[] = {
		"../share/doc/pebblesim", /* installed: BINDIR/../share/doc/pebblesim */
		"..", "../..",            /* the source tree: build/ and build/san-x/ */
	};
	char exe[PATH_MAX], path[PATH_MAX + 64], *slash;
	ssize_t got = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (got <= 0)
		return false;
	exe[got] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	for (size_t k = 0; k < sizeof(beside) / sizeof(beside[0]); k++) {
		char real[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s/README.md", exe, beside[k]);
		if (access(path, R_OK))
			continue;
		snprintf(path, sizeof(path), "%s/%s", exe, beside[k]);
		if (!realpath(path, real) || strlen(real) >= len)
			continue;
		snprintf(buf, len, "%s", real);
		return true;
	}
	return false;
}

void cli_print_help(FILE *out)
{
	char docs[PATH_MAX];

	fputs("usage: pebblesim [COMMAND] [OPTIONS] [FILE]\n"
	      "       pebblesim COMMAND --help\n"
	      "       pebblesim --version (or -V)\n"
	      "\n"
	      "pebblesim plays the red-blue pebble game (Hong and Kung; with partial\n"
	      "aggregation) on the DAG of approximate attention, A = D^-1 U1 (U2^T V)\n"
	      "(Alman and Song), runs a tiling strategy from \"Approaching I/O-optimality\n"
	      "for Approximate Attention\", validates every move of its sequence, and sets\n"
	      "the loads and saves beside the paper's bounds.\n"
	      "\n"
	      "Commands:\n", out);
	for (size_t k = 0; k < cli_command_count; k++)
		fprintf(out, "  %-10s %s\n", cli_commands[k].name, cli_commands[k].help->summary);
	fputs("\n"
	      "Without a command, pebblesim runs `run`. Each command takes its own\n"
	      "options, and refuses the others; `pebblesim COMMAND --help` lists them\n"
	      "with their meaning. Options may come before or after the operands; --\n"
	      "ends them; --opt=VALUE and -n64 work. Sizes (-n, -M) take k, M, G\n"
	      "(powers of 1024: -M 8k) or 2^k.\n"
	      "\n"
	      "Examples:\n"
	      "  pebblesim --case II -n 4096 -d 16 -g 3 -M 8k\n"
	      "      Case II's group tiling (Key Lemma 3.2) on 4096 tokens, 16 features\n"
	      "  pebblesim compare -n 1024 -d 16 -g 5 -M 2048 --predict\n"
	      "      every strategy's cost model side by side, best first, on a Case III\n"
	      "      instance (without --predict, each simulated: --strategies narrows)\n"
	      "  pebblesim --case II -n 64 -d 4 -g 2 -M 100 --trace run.jsonl\n"
	      "  pebblesim validate -M 60 run.jsonl\n"
	      "      write a trace, then try it under a smaller fast memory\n"
	      "  pebblesim run --dag examples/tree.graphml -M 5 --strategy belady\n"
	      "      a binary tree from a GraphML file, clairvoyant eviction\n"
	      "\n"
	      "Exit status: 0 valid and within the bounds, 1 an invalid sequence, a\n"
	      "bound contradicted or values further from the direct evaluation than\n"
	      "the tolerance (optimal: a bug found), 2 bad usage or input.\n", out);
	if (cli_doc_dir(docs, sizeof(docs)))
		fprintf(out, "Documentation: README.md and docs/, in %s.\n", docs);
	else
		fputs("Documentation: README.md and docs/, installed in share/doc/pebblesim\n"
		      "under the installation prefix; `man pebblesim` has every option.\n", out);
	fputs("docs/ has the model (MODEL.md), bounds (BOUNDS.md), strategies\n"
	      "(STRATEGIES.md), exact attention (EXACT.md), runs with values and\n"
	      "epsilon (VALUES.md), the exact optimum of small instances (OPTIMAL.md),\n"
	      "commands and JSON schema\n"
	      "(CLI.md, pebblesim.schema.json), traces (TRACE_FORMAT.md), DAG files\n"
	      "(DAG_FILES.md), maps of the cheapest strategy (MAP.md), the viewer\n"
	      "(VIEWER.md), untrusted inputs and outputs (SECURITY.md), strategies\n"
	      "of one's own (EXTENDING.md), performance (PERFORMANCE.md),\n"
	      "architecture (ARCHITECTURE.md).\n", out);
}
