/*
 * What run, validate and sweep share for runs with values (docs/VALUES.md):
 * the inputs asked for, the outputs written, the warnings.
 */
#include "cli.h"

#include <string.h>

#include "pebblesim/npy.h"
#include "pebblesim/output.h"

int cli_values_inputs(const struct cli_command *cmd, const struct cli_args *a,
		      const char *const *reads, size_t read_count,
		      struct ps_values_inputs *in, FILE *errout)
{
	const char *files[3] = { a->q_file, a->k_file, a->v_file };
	const char *inputs[8];
	size_t count = 0;
	struct ps_error err;

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
	if (!a->values_output)
		return 0;
	if (!strcmp(a->values_output, "-"))
		return cli_usage_error(cmd, errout, "--output needs a file name: the report goes to standard output");
	for (int t = 0; t < 3; t++)
		if (files[t])
			inputs[count++] = files[t];
	for (size_t t = 0; t < read_count && count < 8; t++)
		if (reads[t])
			inputs[count++] = reads[t];
	for (size_t t = 0; t < count; t++)
		if (!strcmp(inputs[t], a->values_output))
			return cli_usage_error(cmd, errout, "--output '%s' names an input of this run", a->values_output);
	ps_error_clear(&err);
	if (ps_output_check_inputs(a->values_output, inputs, count, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	return 0;
}

int cli_write_outputs(const struct cli_args *a, const struct ps_values *vals,
		      FILE *errout)
{
	struct ps_output file;
	struct ps_error err;
	int bad;

	if (!a->values_output || !vals->outputs)
		return 0;
	ps_error_clear(&err);
	if (ps_output_open(&file, a->values_output, "outputs", &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	bad = ps_npy_write(file.file, vals->outputs, vals->att->n, vals->att->d) != 0;
	if (ps_output_close(&file, !bad, "outputs", &err) || bad) {
		fprintf(errout, "pebblesim: %s\n", bad ? "cannot write the outputs" : err.msg);
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
