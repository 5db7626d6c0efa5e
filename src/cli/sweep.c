/*
 * pebblesim sweep: one parameter over a range, the others fixed, every
 * listed strategy at every point (src/sweep.c does the work); a table,
 * CSV, JSON, crossovers and a plot. `sweep --merge A.csv B.csv ...` joins
 * the CSV of shards run apart (--shard K/N).
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pebblesim/output.h"
#include "pebblesim/plot.h"
#include "pebblesim/sweep.h"

#define SWEEP_SIZE(id, letter, field, least, what) \
	{ id, letter, NULL, CLI_SIZE, offsetof(struct cli_args, field), least, CLI_RANGE, "V", what }

const struct cli_option sweep_options[] = {
	SWEEP_SIZE(OPT_N, 'n', n, 1, "rows, or a range of them: LO:HI, LO:HI:xK, LO:HI:+K\n(k, M, G and 2^k allowed)"),
	{ OPT_D, 'd', NULL, CLI_COUNT, offsetof(struct cli_args, d), 1, CLI_RANGE, "V",
	  "features, or a range" },
	{ OPT_G, 'g', NULL, CLI_COUNT, offsetof(struct cli_args, g), 0, CLI_RANGE, "V",
	  "degree, or a range (approximate attention; exact\nattention has none)" },
	SWEEP_SIZE(OPT_M, 'M', M, 1, "fast memory, or a range"),
	CLI_OPT_NO_NORMALIZE,
	CLI_OPT_CAUSAL,
	CLI_OPT_DECODE_WHEN(CLI_RANGE),
	{ OPT_STRATEGIES, 0, "strategies", CLI_STRING, offsetof(struct cli_args, strategies), 0, 0, "LIST",
	  "comma-separated names across both DAGs: case (the case's\n"
	  "algorithm at each point), best, flash, keylemma, ...;\n"
	  "default case,best,flash" },
	{ OPT_BASELINE, 0, "baseline", CLI_STRING, offsetof(struct cli_args, baseline), 0, 0, "NAME",
	  "the strategy crossovers are measured against (default flash;\ndecoding, flash-decode)" },
	{ OPT_PREDICT, 0, "predict", CLI_FLAG, offsetof(struct cli_args, predict), 0, 0, NULL,
	  "cost models only, no engine: for sizes too big to simulate" },
	{ OPT_REFINE, 0, "refine", CLI_FLAG, offsetof(struct cli_args, refine), 0, 0, NULL,
	  "find each end of a crossover's intervals exactly, by\nbisection on the cost models between grid points\n(n, d, g; M's ends stay on the grid)" },
	{ OPT_JOBS, 'j', NULL, CLI_COUNT, offsetof(struct cli_args, jobs), 1, 0, "N",
	  "points in N parallel processes (default: the cores);\nthe results are those of -j 1" },
	{ OPT_SHARD, 0, "shard", CLI_STRING, offsetof(struct cli_args, shard), 0, 0, "K/N",
	  "run every N-th point, from the K-th (1 <= K <= N)" },
	CLI_OPT_CSV("write one row per (point, strategy) as CSV, ending\n"
		    "with the loads and saves of each array (Q_loads, ...)"),
	CLI_OPT_PLOT("draw I/O against the swept parameter into FILE.svg,\nFILE.png or FILE.pdf, with gnuplot (log axes for n, M,\nP and I/O, linear for d and g; I/O per generated token\nwhere the sweep is of decoding)"),
	CLI_OPT_PLOT_SCRIPT,
	{ OPT_MERGE, 0, "merge", CLI_FLAG, offsetof(struct cli_args, merge), 0, 0, NULL,
	  "join the CSV files given as arguments (shards) instead\n"
	  "of running: refuses files of different sweeps, a shard\n"
	  "twice, a point twice and a missing shard, by name" },
	{ OPT_PARTIAL, 0, "partial", CLI_FLAG, offsetof(struct cli_args, partial), 0, 0, NULL,
	  "with --merge: a partial merge is intended (shards may\n"
	  "be missing; the CSV written records it as partial)" },
	CLI_OPT_PROGRESS("per run done, naming the strategy and\nthe point"),
	CLI_OPT_VALUES("run every simulated point with numbers (random inputs,\n"
		       "docs/VALUES.md): epsilon = max |A - softmax(Q K^T/sqrt d) V|\n"
		       "beside the I/O in the table, CSV, JSON and plot"),
	CLI_OPT_SEED,
	CLI_OPT_ENTRY_BOUND,
	CLI_OPT_POLYNOMIAL,
	CLI_OPT_INTERVAL,
	CLI_OPT_JSON("print {\"rows\":[...],\"crossovers\":[...]} on one line"),
	CLI_OPT_PLUGIN,
	CLI_OPT_HELP,
	CLI_OPT_END,
};

static int write_csv(const char *path, const struct ps_sweep_identity *id,
		     const struct ps_sweep_row *rows, size_t count, FILE *out,
		     FILE *errout);

int cli_sweep_write_csv(const char *path, const struct ps_sweep_row *rows,
			size_t count, FILE *out, FILE *errout)
{
	return write_csv(path, NULL, rows, count, out, errout);
}

/* The CSV after the line of its sweep's identity (id NULL: none). */
static int write_csv(const char *path, const struct ps_sweep_identity *id,
		     const struct ps_sweep_row *rows, size_t count, FILE *out,
		     FILE *errout)
{
	struct ps_output file;
	struct ps_error err;

	ps_error_clear(&err);
	if (ps_output_open(&file, path, "CSV file", &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	/* a failed write leaves the stream's error set: the close removes
	 * the temporary and names the file and the reason */
	ps_sweep_write_csv_identity(file.file == stdout ? out : file.file, id, rows, count);
	if (ps_output_close(&file, true, "CSV file", &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	return 0;
}

/* The swept parameter and the fixed ones; 0 or PS_EXIT_USAGE. */
static int read_spec(const struct cli_command *cmd, const struct cli_args *a,
		     struct ps_sweep_spec *spec, FILE *errout)
{
	static const struct {
		enum cli_option_id id;
		char letter;
	} params[] = { { OPT_N, 'n' }, { OPT_D, 'd' }, { OPT_G, 'g' }, { OPT_M, 'M' },
		       { OPT_DECODE, 'P' } };
	struct ps_error err;
	int ranges = 0;

	spec->n = a->n;
	spec->d = a->d;
	spec->g = a->g;
	spec->M = a->M;
	spec->normalize = !a->no_normalize;
	spec->causal = a->causal;
	spec->decode = a->decode;
	for (size_t k = 0; k < 5; k++) {
		const char *text = a->text[params[k].id];

		if (!a->given[params[k].id] && params[k].id != OPT_G && params[k].id != OPT_DECODE)
			return cli_require(cmd, a, errout, "sweep needs -n, -d and -M (and -g for approximate attention)",
					   (const enum cli_option_id[]){ OPT_N, OPT_D, OPT_M }, 3);
		if (!text || !strchr(text, ':'))
			continue;
		ranges++;
		ps_error_clear(&err);
		if (ps_sweep_range_parse(params[k].letter, text, &spec->range, &err))
			return cli_usage_error(cmd, errout, "%s", err.msg);
	}
	if (ranges != 1)
		return cli_usage_error(cmd, errout,
				       "sweep takes exactly one range (-n, -d, -g, -M or --decode as LO:HI[:STEP]), here %d",
				       ranges);
	return 0;
}

/* --strategies a,b,c into spec->labels (pointing into buf). */
static int read_labels(const struct cli_command *cmd, const struct cli_args *a,
		       struct ps_sweep_spec *spec, char *buf, size_t len,
		       FILE *errout)
{
	char *save = NULL;

	snprintf(buf, len, "%s", a->strategies ? a->strategies : "case,best,flash");
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (spec->label_count == PS_SWEEP_MAX_STRATEGIES)
			return cli_usage_error(cmd, errout, "at most %d strategies", PS_SWEEP_MAX_STRATEGIES);
		spec->labels[spec->label_count++] = tok;
	}
	return 0;
}

static int finish(const struct cli_args *a, const struct ps_sweep_spec *spec,
		  const struct ps_sweep_identity *id, char param,
		  struct ps_sweep_row *rows, size_t count, FILE *out, FILE *errout)
{
	struct ps_crossover cross[PS_SWEEP_MAX_STRATEGIES];
	const char *baseline = a->baseline;
	size_t cross_count;
	struct ps_error err;
	int status = PS_EXIT_VALID;
	bool decoding = false;

	/* exact attention's strategy of the same DAG: flash-decode where the
	 * rows decode (MODEL.md section 8), flash elsewhere */
	for (size_t k = 0; k < count; k++)
		decoding |= rows[k].decode > 0;
	if (!baseline)
		baseline = decoding ? "flash-decode" : "flash";

	cross_count = ps_sweep_crossovers(rows, count, baseline, cross,
					  PS_SWEEP_MAX_STRATEGIES);
	if (spec && a->refine)
		ps_sweep_refine(spec, cross, cross_count);
	if (a->csv && write_csv(a->csv, id, rows, count, out, errout))
		return PS_EXIT_USAGE;
	ps_error_clear(&err);
	if ((a->plot || a->plot_script) &&
	    ps_sweep_plot(a->plot, param, rows, count, cross, cross_count,
			  &(struct ps_plot_options){ .polynomial = cli_plot_polynomial(a, spec != NULL),
						     .script = a->plot_script }, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	if (a->json)
		ps_sweep_print_json(out, rows, count, cross, cross_count);
	else if (!a->csv || strcmp(a->csv, "-"))
		ps_sweep_print(out, param, rows, count, cross, cross_count);
	/* an invalid sequence anywhere is a failed sweep, and so are values
	 * further from the direct evaluation than the tolerance */
	for (size_t k = 0; k < count; k++)
		if ((rows[k].ran && rows[k].simulated && !rows[k].valid) || rows[k].values_failed)
			status = PS_EXIT_INVALID;
	return status;
}

/* Joins the CSV of shards, after ps_sweep_merge_check's checks. */
static int merge(const struct cli_command *cmd, const struct cli_args *a,
		 FILE *out, FILE *errout)
{
	struct ps_sweep_identity ids[64], merged;
	struct ps_sweep_row *rows = NULL;
	size_t count = 0;
	char param = 0;
	struct ps_error err;
	int status;

	if (a->operand_count < 1)
		return cli_usage_error(cmd, errout, "sweep --merge needs CSV files");
	for (int k = 0; k < a->operand_count; k++) {
		FILE *f = fopen(a->operands[k], "r");
		struct stat st;
		struct ps_error err;
		int rc;

		if (f && !fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
			fclose(f);
			f = NULL;
			errno = EISDIR;
		}
		if (!f) {
			fprintf(errout, "pebblesim: cannot open '%s': %s\n", a->operands[k],
				strerror(errno));
			free(rows);
			return PS_EXIT_USAGE;
		}
		ps_error_clear(&err);
		rc = ps_sweep_read_csv_identity(f, a->operands[k], &rows, &count, &param,
						&ids[k], &err);
		fclose(f);
		if (rc) {
			fprintf(errout, "pebblesim: %s\n", err.msg);
			free(rows);
			return PS_EXIT_USAGE;
		}
		if (ids[k].legacy)
			fprintf(errout, "pebblesim: note: %s has its sweep on a line before its header, as pebblesim 0.1.0 wrote it; read as such (a CSV written now has its header first and the sweep in its columns sweep and shard)\n",
				a->operands[k]);
	}
	/* a merge of CSV files without rows has none to sort (rows is NULL) */
	if (count)
		ps_sweep_sort(rows, count);
	ps_error_clear(&err);
	if (ps_sweep_merge_check((const char *const *)a->operands, ids, (size_t)a->operand_count,
				 rows, count, a->partial, &merged, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		free(rows);
		return PS_EXIT_USAGE;
	}
	/* --partial: each point missing a row "not run", so that no
	 * crossover spans it */
	if (a->partial && ps_sweep_merge_fill(&rows, &count, &merged, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		free(rows);
		return PS_EXIT_USAGE;
	}
	status = finish(a, NULL, &merged, param ? param : 'n', rows, count, out, errout);
	free(rows);
	return status;
}

int cmd_sweep(const struct cli_command *cmd, const struct cli_args *a,
	      FILE *out, FILE *errout)
{
	struct ps_sweep_spec spec;
	struct ps_sweep_identity id;
	struct ps_sweep_row *rows;
	struct ps_error err;
	char labels[512];
	size_t count;
	int rc;

	if ((rc = cli_check_when(cmd, a, false, errout)))
		return rc;
	if (a->merge) {
		if (a->given[OPT_N] || a->given[OPT_D] || a->given[OPT_G] || a->given[OPT_M] ||
		    a->strategies || a->predict || a->shard || a->given[OPT_JOBS] || a->values ||
		    a->refine || a->plugin)
			return cli_usage_error(cmd, errout,
					       "sweep --merge takes CSV files, not the parameters of a sweep");
		return merge(cmd, a, out, errout);
	}
	if (a->partial)
		return cli_usage_error(cmd, errout, "--partial applies only with --merge");
	if (a->operand_count)
		return cli_usage_error(cmd, errout, "unexpected argument '%s' for sweep (--merge joins CSV files)",
				       a->operands[0]);
	memset(&spec, 0, sizeof(spec));
	if ((rc = read_spec(cmd, a, &spec, errout)) ||
	    (rc = read_labels(cmd, a, &spec, labels, sizeof(labels), errout)))
		return rc;
	if (a->shard) {
		unsigned k, n;
		char tail;

		if (sscanf(a->shard, "%u/%u%c", &k, &n, &tail) != 2 || k < 1 || k > n || n > 65536)
			return cli_usage_error(cmd, errout, "--shard %s: K/N with 1 <= K <= N", a->shard);
		spec.shard = k - 1;
		spec.shards = n;
	}
	spec.predict = a->predict;
	if (a->values && a->predict)
		return cli_usage_error(cmd, errout, "--values needs the engine: not with --predict");
	spec.values = a->values;
	if ((rc = cli_values_inputs(cmd, a, &spec.inputs, errout)))
		return rc;
	spec.jobs = a->given[OPT_JOBS] ? (unsigned)ps_min_u64(a->jobs, 64) : 0;
	spec.progress = cli_progress_stream(a, errout);
	if ((rc = cli_check_labels(cmd, "--strategies", spec.labels, spec.label_count, errout)) ||
	    (a->baseline && (rc = cli_check_labels(cmd, "--baseline", &a->baseline, 1, errout))))
		return rc;
	ps_error_clear(&err);
	if (ps_sweep_check(&spec, &err))
		return cli_usage_error(cmd, errout, "%s", err.msg);
	if (a->baseline) {
		bool listed = false;

		for (size_t k = 0; k < spec.label_count; k++)
			listed |= !strcmp(spec.labels[k], a->baseline);
		if (!listed)
			return cli_usage_error(cmd, errout, "the baseline '%s' is not among the strategies swept",
					       a->baseline);
	}
	if (ps_sweep_run(&spec, &rows, &count, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	ps_sweep_identity_of(&spec, &id);
	if (count)
		ps_sweep_sort(rows, count);
	rc = finish(a, &spec, &id, spec.range.param, rows, count, out, errout);
	free(rows);
	return rc;
}

const struct cli_help sweep_help = {
	"sweep (-n|-d|-g|-M|--decode) LO:HI[:xK|:+K] [the others fixed] [--strategies LIST] [OPTIONS]\n"
	"       pebblesim sweep --merge A.csv B.csv ... [--partial] [--csv FILE] [--json] [--plot FILE]",
	"one parameter over a range, every listed strategy at every point",
	"Sweeps one parameter over a range and holds the others fixed; runs every\n"
	"listed strategy (of either DAG: flash and exact-matmul pebble exact\n"
	"attention, the others approximate attention) at every point, validating\n"
	"every move, or with --predict only its cost model. Prints a table, the\n"
	"crossovers (every maximal interval of the swept values where a strategy's\n"
	"I/O is below the baseline's; with --refine, each end exact by bisection on\n"
	"the cost models, except an end at the range's edge, which is said to be\n"
	"one; none where the baseline was not swept), and writes CSV, JSON and a\n"
	"gnuplot plot on request.\n"
	"A sweep too large for one machine runs in shards (--shard K/N, one per\n"
	"job of GNU parallel or a Slurm array) joined by --merge: each CSV row\n"
	"records its sweep and shard in its last two columns, and --merge joins\n"
	"only the shards of one sweep, each once, every point of its grid\n"
	"(--partial: some may be missing, each marked not run). examples/distributed/\n"
	"has the scripts (docs/CLI.md, \"Distributed sweeps\").\n",
	"  pebblesim sweep -n 1024:16384:x2 -d 16 -g 3 -M 8k --strategies flash,keylemma,caseI,generic\n"
	"      where approximate attention starts to move less data than FlashAttention\n"
	"  pebblesim sweep -n 1k:64k:x2 -d 16 -g 3 -M 8k --predict --plot crossover.svg\n"
	"      the cost models only, drawn with gnuplot\n"
	"  pebblesim sweep -M 1k:64k:x2 -n 4096 -d 16 -g 3 --csv m.csv\n"
	"      the I/O against the fast memory, as CSV\n"
	"  pebblesim sweep -g 1:8 -n 64 -d 16 -M 8k --values --plot eps.svg\n"
	"      epsilon and I/O against g: the least g with epsilon below a target\n"
	"  pebblesim sweep -n 1k:64k:x2 -d 16 -g 3 -M 8k --predict --shard 2/3 --csv s2.csv\n"
	"  pebblesim sweep --merge s1.csv s2.csv s3.csv --csv all.csv\n"
	"      the second of three shards, then the three joined (all present)\n",
};
