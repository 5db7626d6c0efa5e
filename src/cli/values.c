/*
 * What run, validate and sweep share for runs with values (docs/VALUES.md):
 * the inputs asked for, the outputs written, the warnings.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "pebblesim/npy.h"
#include "pebblesim/output.h"

int cli_values_inputs(const struct cli_command *cmd, const struct cli_args *a,
		      struct ps_values_inputs *in, FILE *errout)
{
	memset(in, 0, sizeof(*in));
	in->seed = a->given[OPT_SEED] ? a->seed : PS_VALUES_DEFAULT_SEED;
	in->entry_bound = a->given[OPT_ENTRY_BOUND] ? a->entry_bound : 1.0;
	in->interval = a->given[OPT_INTERVAL] ? a->interval : 0.0;
	in->polynomial = PS_POLYNOMIAL_TAYLOR;
	if (a->polynomial) {
		int kind = ps_polynomial_parse(a->polynomial);

		if (kind < 0)
			return cli_usage_error(cmd, errout, "unknown polynomial '%s': taylor, chebyshev or minimax",
					       a->polynomial);
		in->polynomial = (enum ps_polynomial_kind)kind;
	}
	if (!a->values)
		return 0;
	if ((a->q_file || a->k_file || a->v_file) && !(a->q_file && a->k_file && a->v_file))
		return cli_usage_error(cmd, errout, "--q, --k and --v go together: the three inputs from files, or none");
	if (a->q_file && (a->given[OPT_SEED] || a->given[OPT_ENTRY_BOUND]))
		return cli_usage_error(cmd, errout, "option '%s' is for random inputs, not with --q, --k and --v",
				       a->given[OPT_SEED] ? "--seed" : "--entry-bound");
	in->q = a->q_file;
	in->k = a->k_file;
	in->v = a->v_file;
	/* an --output that is an input is refused for every command (cli.c) */
	if (a->values_output && !strcmp(a->values_output, "-"))
		return cli_usage_error(cmd, errout, "--output needs a file name: the report goes to standard output");
	return 0;
}

int cli_infer_shape(const struct cli_command *cmd, struct cli_args *a, FILE *errout)
{
	const char *const files[] = { a->q_file, a->k_file, a->v_file };
	uint64_t rows = 0, cols = 0;

	if (!a->values || !a->q_file || !a->k_file || !a->v_file)
		return 0;
	/* Q's shape is n x d; K and V are held to it by the reader, which
	 * names the file and both shapes */
	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		struct ps_error err;
		double *data = NULL;

		ps_error_clear(&err);
		if (ps_npy_load(files[k], rows, cols, &data, &rows, &cols, &err)) {
			fprintf(errout, "pebblesim: %s\n", err.msg);
			return PS_EXIT_USAGE;
		}
		free(data);
		if (k)
			continue;
		if (a->given[OPT_N] && a->n != rows)
			return cli_usage_error(cmd, errout, "-n %llu, but --q '%s' has %llu rows (n)",
					       (unsigned long long)a->n, a->q_file,
					       (unsigned long long)rows);
		if (a->given[OPT_D] && a->d != cols)
			return cli_usage_error(cmd, errout, "-d %llu, but --q '%s' has %llu columns (d)",
					       (unsigned long long)a->d, a->q_file,
					       (unsigned long long)cols);
	}
	a->n = rows;
	a->d = cols;
	a->given[OPT_N] = a->given[OPT_D] = true;
	return 0;
}

int cli_write_outputs(const struct cli_args *a, const struct ps_values *vals,
		      bool failed, FILE *errout)
{
	struct ps_output file;
	struct ps_error err;

	if (!a->values_output || !vals->outputs)
		return 0;
	/* the outputs of a failed run are not results: the old file stays */
	if (failed) {
		fprintf(errout, "pebblesim: the outputs are not written to '%s': the run failed\n",
			a->values_output);
		return 0;
	}
	ps_error_clear(&err);
	if (ps_output_open(&file, a->values_output, "outputs", &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	/* a failed write leaves the stream's error set: the close removes
	 * the temporary and names the file and the reason */
	ps_npy_write(file.file, vals->outputs, vals->output_rows, vals->att->d);
	if (ps_output_close(&file, true, "outputs", &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	return 0;
}

void cli_values_warn(const struct ps_report *rep, FILE *errout)
{
	const struct ps_values_report *v = &rep->values;

	if (!rep->has_values)
		return;
	if (v->nonpositive_rows)
		fprintf(errout, "pebblesim: warning: the normaliser D~ = N[i,d] is <= 0 in %llu of %llu rows (first: row %llu, D~ = %.6g); the polynomial of odd degree g goes negative for large entries, and A = N / D~ means nothing there\n",
			(unsigned long long)v->nonpositive_rows,
			(unsigned long long)rep->att->n,
			(unsigned long long)v->first_nonpositive_row, v->first_normaliser);
	if (v->has_polynomial && v->polynomial.note[0])
		fprintf(errout, "pebblesim: warning: %s\n", v->polynomial.note);
	if (v->failed)
		fprintf(errout, "pebblesim: values: the pebbled output %s = %.17g differs from the direct evaluation %.17g by %.3g, above the tolerance %.3g (1e-9 of the largest output, %.6g)\n",
			v->worst, v->worst_pebbled, v->worst_direct, v->error_vs_direct,
			v->tolerance, v->scale);
}
