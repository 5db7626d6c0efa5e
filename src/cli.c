/*
 * pebblesim's command line: parse, build the DAG, run, report.
 */
#include "pebblesim/cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/attention.h"
#include "pebblesim/engine.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"

static const char usage_text[] =
	"usage: pebblesim [--strategy NAME] [--tiles SHAPE] -n N -d D -g G -M M\n"
	"                 [--no-normalize] [--json]\n"
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
	"  -g G              degree of the polynomial replacing exp, G >= 0;\n"
	"                    U1 and U2 have r = C(D+G, G) columns\n"
	"  -M M              fast memory capacity in words (red pebbles)\n"
	"  --no-normalize    compute U1 (U2^T V) without the normaliser column\n"
	"                    and D^-1: the outputs are N instead of A\n"
	"\n"
	"Choosing and reporting:\n"
	"  --strategy NAME   the strategy to run (default: generic); `pebblesim list`\n"
	"                    shows them with the paper's section each implements\n"
	"  --tiles SHAPE     generic only: force the square, tall or unit tiles\n"
	"                    instead of the cheapest that fits\n"
	"  --json            print the report as one JSON object\n"
	"\n"
	"Examples:\n"
	"  pebblesim --strategy generic -n 4096 -d 16 -g 3 -M 8192\n"
	"      the generic tiling of Lemma 3.1 on a 4096-token, 16-feature DAG\n"
	"  pebblesim --strategy generic -n 64 -d 4 -g 2 -M 9 --json\n"
	"      a small M: the report says which tiles fit, as JSON\n"
	"  pebblesim list\n"
	"\n"
	"Exit status: 0 valid and within the bounds, 1 an invalid sequence or a\n"
	"bound contradicted, 2 bad usage or input.\n"
	"Documentation: docs/ (MODEL.md, BOUNDS.md, STRATEGIES.md, CLI.md).\n";

struct options {
	const char *strategy;
	const char *tiles;
	uint64_t n, d, g, M;
	bool has_n, has_d, has_g, has_M;
	bool normalize, json;
};

static int usage_error(FILE *errout, const char *fmt, const char *arg)
{
	fputs("pebblesim: ", errout);
	fprintf(errout, fmt, arg);
	fputs("\n", errout);
	fputs(usage_text, errout);
	return PS_EXIT_USAGE;
}

/* A decimal integer >= min, without sign or trailing garbage. */
static int parse_u64(const char *s, uint64_t min, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min)
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
		fprintf(errout, "pebblesim: invalid value '%s' for %s: expected an integer >= %llu\n",
			v, name, (unsigned long long)min);
		return PS_EXIT_USAGE;
	}
	*has = true;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o,
			 FILE *errout)
{
	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		int rc = 0;

		if (is_option(a, "-n"))
			rc = parse_number(errout, argc, argv, &k, "-n", 1, &o->n, &o->has_n);
		else if (is_option(a, "-d"))
			rc = parse_number(errout, argc, argv, &k, "-d", 1, &o->d, &o->has_d);
		else if (is_option(a, "-g"))
			rc = parse_number(errout, argc, argv, &k, "-g", 0, &o->g, &o->has_g);
		else if (is_option(a, "-M"))
			rc = parse_number(errout, argc, argv, &k, "-M", 1, &o->M, &o->has_M);
		else if (is_option(a, "--strategy")) {
			o->strategy = option_value(argc, argv, &k, "--strategy");
			if (!o->strategy)
				return usage_error(errout, "option '%s' needs a value", a);
		} else if (is_option(a, "--tiles")) {
			o->tiles = option_value(argc, argv, &k, "--tiles");
			if (!o->tiles)
				return usage_error(errout, "option '%s' needs a value", a);
		} else if (!strcmp(a, "--no-normalize"))
			o->normalize = false;
		else if (!strcmp(a, "--json"))
			o->json = true;
		else
			return usage_error(errout, "unknown argument '%s'", a);
		if (rc)
			return rc;
	}
	if (!o->has_n || !o->has_d || !o->has_g || !o->has_M)
		return usage_error(errout, "%s", "the parameters -n, -d, -g and -M are all required");
	return 0;
}

static int cmd_list(FILE *out)
{
	for (size_t k = 0; k < ps_strategy_count; k++)
		fprintf(out, "%-10s %s\n           %s\n", ps_strategies[k]->name,
			ps_strategies[k]->section, ps_strategies[k]->summary);
	return PS_EXIT_VALID;
}

/* Physical memory, to refuse a DAG whose state cannot fit. */
static uint64_t physical_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : UINT64_MAX;
}

/* Bytes a run needs before the DAG exists: the pebble state and the
 * monomial table (see ps_engine_state_bytes and ps_monomials_init). */
static int estimate_bytes(const struct options *o, uint64_t *bytes)
{
	uint64_t r, nb = o->d + (o->normalize ? 1 : 0), nr, nrb, t;

	if (ps_tau(o->d, o->g, &r) || ps_mul_u64(o->n, r, &nr) ||
	    ps_mul_u64(nr, nb, &nrb))
		return -1;
	/* states: Q K V A (4nd), U1 U2 (2nr), H N; edges: 2 n r |B| bits;
	 * counters: 4 bytes per sum; monomials: about 2 + 8g bytes each */
	t = 4 * o->n * o->d + 2 * nr + (r + o->n) * nb * 5 + nrb / 4 +
	    r * (2 + 8 * o->g);
	*bytes = t;
	return 0;
}

static int cmd_run(const struct options *o, FILE *out, FILE *errout)
{
	struct ps_attention_params p = {
		.n = o->n, .d = o->d, .g = o->g, .normalize = o->normalize,
	};
	const struct ps_strategy *s = ps_strategy_find(o->strategy);
	struct ps_attention att;
	struct ps_report rep;
	struct ps_error err;
	uint64_t bytes, r, phys = physical_memory(), min_m;
	int rc;

	ps_error_clear(&err);
	if (!s) {
		char names[256];

		ps_strategy_names(names, sizeof(names));
		fprintf(errout, "pebblesim: unknown strategy '%s'; known: %s\n",
			o->strategy, names);
		return PS_EXIT_USAGE;
	}
	if (o->g > 64) {
		fprintf(errout, "pebblesim: degree g = %llu exceeds the limit of 64\n",
			(unsigned long long)o->g);
		return PS_EXIT_USAGE;
	}
	if (estimate_bytes(o, &bytes)) {
		fprintf(errout, "pebblesim: the DAG for n = %llu, d = %llu, g = %llu is beyond 64-bit sizes\n",
			(unsigned long long)o->n, (unsigned long long)o->d,
			(unsigned long long)o->g);
		return PS_EXIT_USAGE;
	}
	if (ps_tau(o->d, o->g, &r) || r > PS_MAX_MONOMIALS) {
		fprintf(errout, "pebblesim: r = C(d+g, g) for d = %llu, g = %llu exceeds the limit of %llu monomials\n",
			(unsigned long long)o->d, (unsigned long long)o->g,
			(unsigned long long)PS_MAX_MONOMIALS);
		return PS_EXIT_USAGE;
	}
	if (bytes > phys / 10 * 9) {
		fprintf(errout, "pebblesim: the pebble state for n = %llu, d = %llu, g = %llu needs about %.1f GiB; this machine has %.1f GiB\n",
			(unsigned long long)o->n, (unsigned long long)o->d,
			(unsigned long long)o->g, (double)bytes / (1 << 30),
			(double)phys / (1 << 30));
		return PS_EXIT_USAGE;
	}
	rc = ps_attention_init(&att, &p, &err);
	if (rc) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	min_m = ps_strategy_min_memory(s, &att);
	if (o->M < min_m) {
		fprintf(errout, "pebblesim: M = %llu is too small for %s on this DAG: it needs M >= %llu\n",
			(unsigned long long)o->M, s->name, (unsigned long long)min_m);
		ps_attention_free(&att);
		return PS_EXIT_USAGE;
	}
	rc = ps_run(&att, s, o->M, o->tiles, &rep, &err);
	if (rc) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		ps_attention_free(&att);
		return rc == PS_EINVALID ? PS_EXIT_INVALID : PS_EXIT_USAGE;
	}
	if (o->json)
		ps_report_print_json(&rep, out);
	else
		ps_report_print(&rep, out);
	ps_attention_free(&att);
	if (!rep.valid || ps_report_bound_violated(&rep))
		return PS_EXIT_INVALID;
	return PS_EXIT_VALID;
}

int ps_cli_main(int argc, char **argv, FILE *out, FILE *errout)
{
	struct options o = { .strategy = "generic", .normalize = true };
	int rc;

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
	rc = parse_options(argc, argv, &o, errout);
	if (rc)
		return rc;
	return cmd_run(&o, out, errout);
}
