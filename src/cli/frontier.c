/*
 * pebblesim frontier: the least I/O at a given accuracy, approximate
 * attention against FlashAttention (docs/EXACT.md "The frontier"). The
 * degree g is the least whose a-priori bound 2 eta / (1 - eta) max|V|
 * (docs/VALUES.md) is within epsilon; approximate attention's I/O is
 * best's at that g, flash's at the same n, d and M, both by their cost
 * models over a range of n; the intervals of n where best moves less
 * have their ends found by bisection and, where the size allows,
 * confirmed by simulated runs at n* and its outer neighbour.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/polynomial.h"
#include "pebblesim/plot.h"
#include "pebblesim/sweep.h"

/* The largest n, and n x r, at which an end is confirmed by simulation:
 * a run of seconds, not hours. */
#define FRONTIER_SIMULATE_MAX_N 16384
#define FRONTIER_SIMULATE_MAX_NR (UINT64_C(1) << 26)

const struct cli_option frontier_options[] = {
	{ OPT_N, 'n', NULL, CLI_SIZE, offsetof(struct cli_args, n), 1, CLI_RANGE, "N",
	  "rows: a range LO:HI, LO:HI:xK or LO:HI:+K (k, M, G, 2^k)" },
	CLI_OPT_D,
	CLI_OPT_M("fast memory, words"),
	{ OPT_EPSILON, 0, "epsilon", CLI_REAL, offsetof(struct cli_args, epsilon), 0, 0, "E",
	  "the accuracy: max |A - softmax(Q K^T / sqrt d) V| <= E" },
	{ OPT_BOUND, 0, "bound", CLI_STRING, offsetof(struct cli_args, bound), 0, 0, "HOW",
	  "a-priori (the default): the least g whose bound\n2 eta / (1 - eta) max|V| on the interval is within E" },
	{ OPT_ENTRY_BOUND, 0, "entry-bound", CLI_REAL, offsetof(struct cli_args, entry_bound), 0, 0, "B",
	  "entries of Q, K and V in [-B, B] (default 1)" },
	CLI_OPT_POLYNOMIAL_WHEN(0),
	CLI_OPT_INTERVAL_WHEN(0),
	CLI_OPT_CSV("write best's and flash's rows as sweep's CSV"),
	CLI_OPT_PLOT("draw I/O against n into FILE.svg, FILE.png or FILE.pdf\n(gnuplot), best's points marked with the chosen g"),
	CLI_OPT_PLOT_SCRIPT,
	CLI_OPT_JSON("print {\"points\":[...],\"intervals\":[...],...} on one line"),
	CLI_OPT_HELP,
	CLI_OPT_END,
};

/* The least g <= the kind's largest whose bound is within epsilon: 0 and
 * *p, or -1 when none is (p then the last tried). */
static int least_degree(enum ps_polynomial_kind kind, double beta, double max_v,
			double epsilon, struct ps_polynomial *p, struct ps_error *err)
{
	const unsigned top = kind == PS_POLYNOMIAL_TAYLOR ? PS_POLYNOMIAL_MAX_G : PS_POLYNOMIAL_MAX_FIT;

	for (unsigned g = 0; g <= top; g++) {
		if (ps_polynomial_make(p, kind, g, beta, err))
			return PS_EINPUT;
		if (ps_polynomial_bound(p->eta, max_v) <= epsilon)
			return 0;
	}
	return -1;
}

/* The I/O of label at n, by the engine (simulated) or the cost model. */
static bool io_at(const struct ps_sweep_spec *spec, uint64_t n, const char *label,
		  bool simulate, uint64_t *io)
{
	struct ps_sweep_spec s = *spec;
	struct ps_sweep_row row;

	s.predict = !simulate;
	ps_sweep_point(&s, n, label, &row);
	*io = row.io;
	return row.ran && (!simulate || (row.simulated && row.valid));
}

/* An end n* confirmed: best below flash at n* and not below at its
 * outer neighbour, both simulated; false where too large or not so. */
static bool confirm(const struct ps_sweep_spec *spec, uint64_t end, uint64_t outer,
		    uint64_t io[4])
{
	uint64_t r = 1, top = end > outer ? end : outer;

	/* r = C(d + g, g), built so that it stops growing past the limit */
	for (uint64_t l = 1; l <= spec->g && r <= FRONTIER_SIMULATE_MAX_NR; l++)
		r = r * (spec->d + l) / l;
	if (top > FRONTIER_SIMULATE_MAX_N || r > FRONTIER_SIMULATE_MAX_NR / top)
		return false;
	return io_at(spec, end, "best", true, &io[0]) && io_at(spec, end, "flash", true, &io[1]) &&
	       io_at(spec, outer, "best", true, &io[2]) && io_at(spec, outer, "flash", true, &io[3]) &&
	       io[0] < io[1] && io[2] >= io[3];
}

struct frontier_end {
	uint64_t n, outer;
	bool confirmed;
	uint64_t io[4]; /* best and flash at n, then at outer */
};

static json_t *frontier_json(const struct ps_polynomial *p, double epsilon, double max_v,
			     bool has_g, const struct ps_sweep_row *rows, size_t count,
			     const struct ps_crossover *c, const struct frontier_end *ends,
			     size_t end_count)
{
	json_t *points = json_array(), *intervals = json_array(), *confirmations = json_array();
	json_t *coef = json_array();

	for (unsigned l = 0; has_g && l <= p->g; l++)
		json_array_append_new(coef, json_real(p->c[l]));
	for (size_t k = 0; k + 1 < count; k += 2) {
		const struct ps_sweep_row *best = &rows[k], *flash = &rows[k + 1];

		json_array_append_new(points, json_pack("{s:I, s:I, s:s, s:o, s:o}", "n",
							(json_int_t)best->n, "g", (json_int_t)p->g,
							"strategy", best->strategy,
							"io", best->ran ? json_integer((json_int_t)best->io) : json_null(),
							"flash_io", flash->ran ? json_integer((json_int_t)flash->io)
									       : json_null()));
	}
	for (size_t t = 0; c && t < c->interval_count && t < PS_SWEEP_MAX_INTERVALS; t++)
		json_array_append_new(intervals, json_pack("{s:I, s:I, s:I}", "from",
							   (json_int_t)c->intervals[t].from, "to",
							   (json_int_t)c->intervals[t].to, "g", (json_int_t)p->g));
	for (size_t t = 0; t < end_count; t++)
		json_array_append_new(confirmations,
				      json_pack("{s:I, s:I, s:b, s:[I,I], s:[I,I]}", "n", (json_int_t)ends[t].n,
						"outer", (json_int_t)ends[t].outer, "simulated",
						ends[t].confirmed, "at_n", (json_int_t)ends[t].io[0],
						(json_int_t)ends[t].io[1], "at_outer",
						(json_int_t)ends[t].io[2], (json_int_t)ends[t].io[3]));
	return json_pack("{s:f, s:s, s:{s:s, s:o, s:f, s:o, s:o, s:f}, s:o, s:o, s:o, s:b}",
			 "epsilon", epsilon, "bound", "a-priori", "polynomial", "name",
			 ps_polynomial_name(p->made), "g", has_g ? json_integer((json_int_t)p->g) : json_null(),
			 "interval", p->beta, "coefficients", coef, "eta",
			 isfinite(p->eta) ? json_real(p->eta) : json_null(), "max_v", max_v, "points",
			 points, "intervals", intervals, "confirmations", confirmations, "refined",
			 c ? c->refined : false);
}

int cmd_frontier(const struct cli_command *cmd, const struct cli_args *a,
		 FILE *out, FILE *errout)
{
	const double B = a->given[OPT_ENTRY_BOUND] ? a->entry_bound : 1.0;
	struct ps_sweep_spec spec;
	struct ps_sweep_row *rows = NULL;
	struct ps_crossover cross[2];
	struct frontier_end ends[2 * PS_SWEEP_MAX_INTERVALS];
	struct ps_polynomial p;
	struct ps_error err;
	enum ps_polynomial_kind kind = PS_POLYNOMIAL_TAYLOR;
	const struct ps_crossover *c = NULL;
	size_t count = 0, end_count = 0;
	double beta;
	bool has_g;
	char plot_title[96];
	int rc;

	if (!a->given[OPT_N] || !a->given[OPT_D] || !a->given[OPT_M] || !a->given[OPT_EPSILON])
		return cli_usage_error(cmd, errout, "frontier needs -n, -d, -M and --epsilon");
	if (a->bound && strcmp(a->bound, "a-priori"))
		return cli_usage_error(cmd, errout, strcmp(a->bound, "measured")
					       ? "unknown --bound '%s': a-priori"
					       : "--bound %s is not built: the frontier picks g by the a-priori bound only",
				       a->bound);
	if (a->polynomial) {
		int k = ps_polynomial_parse(a->polynomial);

		if (k < 0)
			return cli_usage_error(cmd, errout, "unknown polynomial '%s': taylor, chebyshev or minimax",
					       a->polynomial);
		kind = (enum ps_polynomial_kind)k;
	}
	memset(&spec, 0, sizeof(spec));
	spec.d = a->d;
	spec.M = a->M;
	spec.normalize = true;
	spec.predict = true;
	spec.jobs = 1;
	spec.labels[0] = "best";
	spec.labels[1] = "flash";
	spec.label_count = 2;
	ps_error_clear(&err);
	if (strchr(a->text[OPT_N], ':')) {
		if (ps_sweep_range_parse('n', a->text[OPT_N], &spec.range, &err))
			return cli_usage_error(cmd, errout, "%s", err.msg);
	} else {
		spec.range = (struct ps_sweep_range){ 'n', a->n, a->n, 1, false };
	}
	beta = a->given[OPT_INTERVAL] ? a->interval : ps_polynomial_interval(B, a->d);
	rc = least_degree(kind, beta, B, a->epsilon, &p, &err);
	if (rc > 0 || rc == PS_EINPUT)
		return cli_usage_error(cmd, errout, "%s", err.msg);
	has_g = rc == 0;
	if (has_g) {
		spec.g = p.g;
		if (ps_sweep_run(&spec, &rows, &count, &err)) {
			fprintf(errout, "pebblesim: %s\n", err.msg);
			return PS_EXIT_USAGE;
		}
		ps_sweep_sort(rows, count);
		ps_sweep_crossovers(rows, count, "flash", cross, 2);
		ps_sweep_refine(&spec, cross, 1);
		c = &cross[0];
		for (size_t t = 0; t < c->interval_count && t < PS_SWEEP_MAX_INTERVALS; t++) {
			const struct ps_sweep_interval *iv = &c->intervals[t];

			if (iv->from > spec.range.lo)
				ends[end_count++] = (struct frontier_end){ iv->from, iv->from - 1, false, { 0 } };
			if (iv->to < spec.range.hi)
				ends[end_count++] = (struct frontier_end){ iv->to, iv->to + 1, false, { 0 } };
		}
		for (size_t t = 0; t < end_count; t++)
			ends[t].confirmed = confirm(&spec, ends[t].n, ends[t].outer, ends[t].io);
	}
	if (a->csv) {
		/* sweep's CSV of best's and flash's rows */
		if ((rc = cli_sweep_write_csv(a->csv, rows, count, out, errout))) {
			free(rows);
			return rc;
		}
	}
	snprintf(plot_title, sizeof(plot_title), "best at the least g whose a-priori bound is <= %g", a->epsilon);
	if ((a->plot || a->plot_script) && has_g &&
	    ps_sweep_plot(a->plot, 'n', rows, count, cross, 1,
			  &(struct ps_plot_options){ .polynomial = ps_polynomial_name(p.made), .title = plot_title,
						     .script = a->plot_script, .mark_label = "best" }, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		free(rows);
		return PS_EXIT_USAGE;
	}
	if (a->json) {
		json_t *root = frontier_json(&p, a->epsilon, B, has_g, rows, count, c, ends, end_count);

		json_dumpf(root, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		json_decref(root);
		free(rows);
		return PS_EXIT_VALID;
	}
	fprintf(out, "frontier               d = %llu, M = %llu, epsilon <= %g, the a-priori bound\n",
		(unsigned long long)a->d, (unsigned long long)a->M, a->epsilon);
	if (beta < ps_polynomial_interval(B, a->d))
		fprintf(out, "  note                 the interval is narrower than B^2 sqrt d = %g: the bound holds only for inputs whose scores |q.k| / sqrt d stay within it\n",
			ps_polynomial_interval(B, a->d));
	if (!has_g) {
		fprintf(out, "polynomial             %s on [-%g, %g] (entries in [-%g, %g]): no g up to %u gives 2 eta / (1 - eta) max|V| <= %g\n",
			ps_polynomial_name(kind), beta, beta, B, B, p.g, a->epsilon);
		fprintf(out, "answer: approximate attention has no a-priori guarantee of epsilon <= %g here, so it does not win at any n at this accuracy\n",
			a->epsilon);
		free(rows);
		return PS_EXIT_VALID;
	}
	fprintf(out, "polynomial             %s on [-%g, %g] (entries in [-%g, %g]): least g = %u, eta = %.3g, bound %.3g\n",
		ps_polynomial_name(p.made), beta, beta, B, B, p.g, p.eta, ps_polynomial_bound(p.eta, B));
	fprintf(out, "%12s  %3s  %-10s %16s %16s %10s\n", "n", "g", "best", "I/O", "flash I/O", "flash/best");
	for (size_t k = 0; k + 1 < count; k += 2) {
		const struct ps_sweep_row *best = &rows[k], *flash = &rows[k + 1];

		if (!best->ran || !flash->ran) {
			fprintf(out, "%12llu  %3u  not run: %s\n", (unsigned long long)best->n, p.g,
				best->ran ? flash->why : best->why);
			continue;
		}
		fprintf(out, "%12llu  %3u  %-10s %16llu %16llu %10.2f\n", (unsigned long long)best->n, p.g,
			best->strategy, (unsigned long long)best->io, (unsigned long long)flash->io,
			(double)flash->io / (double)best->io);
	}
	if (!c->interval_count) {
		fprintf(out, "answer: approximate attention (%s, g = %u, bound <= %g) does not move less data than FlashAttention for any n in [%llu, %llu]\n",
			ps_polynomial_name(p.made), p.g, a->epsilon, (unsigned long long)spec.range.lo,
			(unsigned long long)spec.range.hi);
	} else {
		fprintf(out, "answer: approximate attention (%s, g = %u, bound <= %g) moves less data than FlashAttention for n in ",
			ps_polynomial_name(p.made), p.g, a->epsilon);
		for (size_t t = 0; t < c->interval_count && t < PS_SWEEP_MAX_INTERVALS; t++)
			fprintf(out, "%s[%llu, %llu]", t ? ", " : "", (unsigned long long)c->intervals[t].from,
				(unsigned long long)c->intervals[t].to);
		fprintf(out, " (%s)\n", c->refined ? "ends exact: bisection on the cost models" : c->note);
	}
	for (size_t t = 0; t < end_count; t++) {
		if (ends[t].confirmed)
			fprintf(out, "  end n = %llu        simulated: best %llu < flash %llu; at n = %llu best %llu >= flash %llu\n",
				(unsigned long long)ends[t].n, (unsigned long long)ends[t].io[0],
				(unsigned long long)ends[t].io[1], (unsigned long long)ends[t].outer,
				(unsigned long long)ends[t].io[2], (unsigned long long)ends[t].io[3]);
		else
			fprintf(out, "  end n = %llu        not confirmed by simulation (n above %d, n r above 2^26, or a run that differs)\n",
				(unsigned long long)ends[t].n, FRONTIER_SIMULATE_MAX_N);
	}
	free(rows);
	return PS_EXIT_VALID;
}

const struct cli_help frontier_help = {
	"frontier -n LO:HI[:STEP] -d D -M M --epsilon E [--entry-bound B] [--polynomial P] [--interval BETA] [--json] [--csv FILE] [--plot FILE]",
	"the least I/O at an accuracy: approximate attention against FlashAttention",
	"Picks the least degree g whose a-priori bound 2 eta / (1 - eta) max|V|\n"
	"(docs/VALUES.md) is within E for every input with entries in [-B, B],\n"
	"then sets best's predicted I/O at that g beside FlashAttention's over the\n"
	"range of n, and answers with the intervals of n where approximate\n"
	"attention moves less, each end exact by bisection on the cost models and\n"
	"confirmed by simulated runs at the end and its outer neighbour where n <=\n"
	"16384. Where no g meets E, it says so: approximate attention has no\n"
	"a-priori guarantee at that accuracy.\n",
	"  pebblesim frontier -n 1k:1M:x2 -d 16 -M 8k --epsilon 1e-3 --entry-bound 0.5 --polynomial minimax\n"
	"      where approximate attention with a guaranteed error <= 1e-3 moves less\n",
};
