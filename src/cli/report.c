/*
 * Every report the command line prints, in one place: a run's or a
 * replayed trace's report in words and as JSON (MODEL.md's command-line
 * contract; docs/pebblesim.schema.json), --dry-run, compare's table and
 * rows, and list.
 */
#include "cli.h"

#include "pebblesim/trace.h"

#include <math.h>
#include <string.h>

static bool has_upper(const struct ps_report *rep)
{
	return rep->has_plan && rep->plan.bounded;
}

static double ratio(uint64_t io, double bound)
{
	return bound > 0 ? (double)io / bound : 0.0;
}

/* A valid run that moves no more than a lower bound moves the least any
 * valid pebbling can. */
static bool is_optimal(const struct ps_report *rep)
{
	uint64_t io = rep->counts.loads + rep->counts.saves;

	return rep->valid && (double)io <= rep->lower.best.value;
}

/* A cheaper strategy by its cost model than this valid run. */
static bool has_cheaper(const struct ps_report *rep)
{
	return rep->valid && rep->has_cheapest &&
	       rep->cheapest_io < rep->counts.loads + rep->counts.saves;
}

/* P, its eta and the bound beside the measured epsilon (docs/VALUES.md
 * "The polynomial"). */
static void polynomial_print(const struct ps_values_report *v, FILE *out)
{
	const struct ps_polynomial *p = &v->polynomial;

	fprintf(out, "  polynomial           %s of degree %u on [-%.6g, %.6g] (largest |q.k| / sqrt d: %.6g)\n",
		ps_polynomial_name(p->made), p->g, p->beta, p->beta, v->max_score);
	if (p->note[0])
		fprintf(out, "    note               %s\n", p->note);
	fprintf(out, "  eta                  %.3g = max |P(x) - e^x| / e^x on the interval, a-priori (grid of %llu cells)\n",
		p->eta, (unsigned long long)p->cells);
	if (v->has_bound)
		fprintf(out, "  bound                %.3g = 2 eta / (1 + sqrt(1 - eta^2)) R <= eta / (1 - eta) R, R = max_b (max V[.,b] - min V[.,b]) / 2 = %.6g%s\n",
			v->bound, v->v_half_range, v->has_softmax ? (v->error_vs_softmax <= v->bound ? ": epsilon is within it" : ": epsilon is ABOVE it") : "");
	else
		fprintf(out, "  bound                none: %s\n", v->no_bound);
}

/* The lines of a run with values (docs/VALUES.md). */
static void values_print(const struct ps_report *rep, FILE *out)
{
	const struct ps_values_report *v = &rep->values;
	const struct ps_values_inputs *in = rep->inputs;
	const char *kind = rep->att->normalize ? "A" : rep->att->exact ? "O" : "N";

	if (in && in->q)
		fprintf(out, "values                 inputs Q = %s, K = %s, V = %s\n", in->q, in->k, in->v);
	else if (in)
		fprintf(out, "values                 random inputs, seed %llu, uniform in [-%g, %g]\n",
			(unsigned long long)in->seed, in->entry_bound, in->entry_bound);
	fprintf(out, "  error vs direct      %.3g = max |%s - %s| (tolerance %.3g)%s\n",
		v->error_vs_direct, kind,
		rep->att->exact ? (rep->att->normalize ? "softmax(Q K^T / sqrt d) V" : "exp(Q K^T / sqrt d) V")
				: (rep->att->normalize ? "D~^-1 P(Q K^T / sqrt d) V" : "P(Q K^T / sqrt d) V"),
		v->tolerance, v->failed ? "  FAILED" : "");
	if (rep->att->decode && !rep->att->exact)
		fprintf(out, "  decoding             q, k, v of row t = B tanh(W A[t-1]) (docs/VALUES.md); A of the\n"
			"                       generated rows and the last state H beside the same recurrence, directly\n");
	else if (rep->att->decode)
		fprintf(out, "  decoding             q, k, v of row t = B tanh(W A[t-1]) (docs/VALUES.md); A, K and V\n"
			"                       of the generated rows beside the same recurrence, directly\n");
	else if (rep->att->causal)
		fprintf(out, "  causal               every sum over the keys j <= i of row i only\n");
	if (v->failed)
		fprintf(out, "  worst output         %s: pebbled %.17g, direct %.17g\n", v->worst,
			v->worst_pebbled, v->worst_direct);
	if (v->has_softmax)
		fprintf(out, "  epsilon              %.3g = max |A - softmax(Q K^T / sqrt d) V|\n",
			v->error_vs_softmax);
	if (v->has_polynomial)
		polynomial_print(v, out);
	if (v->nonpositive_rows)
		fprintf(out, "  normaliser D~ <= 0   in %llu rows (first: row %llu)\n",
			(unsigned long long)v->nonpositive_rows,
			(unsigned long long)v->first_nonpositive_row);
	fprintf(out, "  values held          at most %llu (besides Q, K, V)\n",
		(unsigned long long)v->peak_values);
	if (rep->values_output)
		fprintf(out, "  outputs              %s (%llu x %llu float64)\n", rep->values_output,
			(unsigned long long)rep->att->n, (unsigned long long)rep->att->d);
}

/* A number in JSON, or null where JSON has none (infinities, NaN). */
static json_t *real_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* values.polynomial: enough to recompute P and its bound. */
static json_t *polynomial_json(const struct ps_values_report *v)
{
	const struct ps_polynomial *p = &v->polynomial;
	json_t *c = json_array();

	for (unsigned l = 0; l <= p->g; l++)
		json_array_append_new(c, real_or_null(p->c[l]));
	return json_pack("{s:s, s:s, s:I, s:f, s:o, s:o, s:o, s:I, s:f, s:f, s:f, s:o, s:o, s:o}",
			 "name", ps_polynomial_name(p->made), "requested", ps_polynomial_name(p->kind),
			 "g", (json_int_t)p->g, "interval", p->beta, "coefficients", c,
			 "eta", real_or_null(p->eta), "eta_grid", real_or_null(p->eta_grid),
			 "grid_cells", (json_int_t)p->cells, "max_v", v->max_v,
			 "v_half_range", v->v_half_range, "max_score", v->max_score,
			 "bound", v->has_bound ? real_or_null(v->bound) : json_null(),
			 "no_bound", v->has_bound ? json_null() : json_string(v->no_bound),
			 "note", p->note[0] ? json_string(p->note) : json_null());
}

static json_t *values_json(const struct ps_report *rep)
{
	const struct ps_values_report *v = &rep->values;
	const struct ps_values_inputs *in = rep->inputs;
	json_t *obj = json_object();

	json_object_set_new(obj, "error_vs_direct", real_or_null(v->error_vs_direct));
	json_object_set_new(obj, "error_vs_softmax",
			    v->has_softmax ? real_or_null(v->error_vs_softmax) : json_null());
	json_object_set_new(obj, "tolerance", real_or_null(v->tolerance));
	json_object_set_new(obj, "failed", json_boolean(v->failed));
	json_object_set_new(obj, "worst", json_pack("{s:s, s:o, s:o}", "output", v->worst,
						    "pebbled", real_or_null(v->worst_pebbled),
						    "direct", real_or_null(v->worst_direct)));
	json_object_set_new(obj, "nonpositive_normaliser_rows",
			    json_integer((json_int_t)v->nonpositive_rows));
	json_object_set_new(obj, "peak_values", json_integer((json_int_t)v->peak_values));
	if (v->has_polynomial)
		json_object_set_new(obj, "polynomial", polynomial_json(v));
	if (in && in->q)
		json_object_set_new(obj, "inputs", json_pack("{s:s, s:s, s:s}", "q", in->q,
							     "k", in->k, "v", in->v));
	else if (in)
		json_object_set_new(obj, "inputs", json_pack("{s:I, s:f}", "seed",
							     (json_int_t)in->seed,
							     "entry_bound", in->entry_bound));
	if (rep->values_output)
		json_object_set_new(obj, "output", json_string(rep->values_output));
	return obj;
}

/* The DAG a report is of: the attention DAG or the explicit one. */
static const struct ps_dag *report_dag(const struct ps_report *rep)
{
	return rep->att ? &rep->att->dag : &rep->xdag->dag;
}

static bool same_io(const struct ps_array_io *a, const struct ps_array_io *b)
{
	return a->loads == b->loads && a->saves == b->saves;
}

/*
 * The I/O by array of a valid run (ps_counts.by_array, counted by the
 * engine): each array of the DAG with its loads, saves and share of the
 * I/O, and beside it whether the cost model predicted the same.
 */
static void by_array_print(const struct ps_report *rep, FILE *out)
{
	const struct ps_dag *dag = report_dag(rep);
	const struct ps_counts *c = &rep->counts;
	const uint64_t io = c->loads + c->saves;
	/* a cost model that gives no breakdown gets no column */
	const bool predicted = rep->has_plan && ps_plan_by_array_given(&rep->plan);
	const char *name;
	unsigned a;

	fprintf(out, "I/O by array           %12s %12s %7s%s\n", "loads", "saves", "share",
		predicted ? "  cost model" : "");
	for (unsigned k = 0; (name = ps_dag_array_at(dag, k, &a)); k++) {
		const struct ps_array_io *m = &c->by_array[a], *p = &rep->plan.by_array[a];

		fprintf(out, "  %-20s %12llu %12llu %6.1f%%", name, (unsigned long long)m->loads,
			(unsigned long long)m->saves,
			io ? 100.0 * (double)(m->loads + m->saves) / (double)io : 0.0);
		if (predicted && same_io(m, p))
			fputs("  agrees", out);
		else if (predicted)
			fprintf(out, "  PREDICTS %llu + %llu", (unsigned long long)p->loads,
				(unsigned long long)p->saves);
		fputc('\n', out);
	}
}

/* {"Q": {"loads": .., "saves": ..}, ...}: io of each array of dag, in its
 * order; the values add up to the totals. */
static json_t *by_array_json(const struct ps_dag *dag, const struct ps_array_io *io)
{
	json_t *obj = json_object();
	const char *name;
	unsigned a;

	for (unsigned k = 0; (name = ps_dag_array_at(dag, k, &a)); k++)
		json_object_set_new(obj, name, json_pack("{s:I, s:I}",
			"loads", (json_int_t)io[a].loads, "saves", (json_int_t)io[a].saves));
	return obj;
}

/* In place of the upper bound: a tuned plan has its cost model only. */
static void tuned_print(FILE *out)
{
	fprintf(out, "upper bound            none: tuned sizes, the cost model is the plan's figure\n"
		     "                       (the theorem's bound is proved for the proof's sizes)\n");
}

void cli_report_print(const struct ps_report *rep, FILE *out)
{
	const struct ps_attention *att = rep->att;
	const struct ps_counts *c = &rep->counts;
	uint64_t io = c->loads + c->saves;
	uint64_t predicted = rep->plan.loads + rep->plan.saves;

	if (att && att->exact)
		fprintf(out, "exact attention        n = %llu, d = %llu, %s\n",
			(unsigned long long)att->n, (unsigned long long)att->d,
			att->normalize ? "normalised (|B| = d+1)" : "not normalised (|B| = d)");
	else if (att)
		fprintf(out, "approximate attention  n = %llu, d = %llu, g = %llu, r = C(d+g,g) = %llu, %s\n",
			(unsigned long long)att->n, (unsigned long long)att->d,
			(unsigned long long)att->g, (unsigned long long)att->r,
			att->normalize ? "normalised (|B| = d+1)" : "not normalised (|B| = d)");
	else
		fprintf(out, "explicit DAG           %s%s%llu vertices, %llu edges (%llu inputs, %llu sums, %llu outputs)\n",
			rep->dag_name ? rep->dag_name : "", rep->dag_name ? ": " : "",
			(unsigned long long)rep->xdag->vertices,
			(unsigned long long)rep->xdag->edges,
			(unsigned long long)rep->xdag->inputs,
			(unsigned long long)rep->xdag->sums,
			(unsigned long long)rep->xdag->dag.output_count);
	if (att && att->decode)
		fprintf(out, "  decoding             rows %llu..%llu one at a time after a prompt of P = %llu\n"
			"                       rows (MODEL.md section 8): T = %llu tokens, causal\n",
			(unsigned long long)att->decode, (unsigned long long)(att->n - 1),
			(unsigned long long)att->decode,
			(unsigned long long)(att->n - att->decode));
	else if (att && att->causal)
		fprintf(out, "  causal               row i sees keys j <= i only (MODEL.md section 7)\n");
	if (!att && rep->dag_note)
		fprintf(out, "  read as              %s\n", rep->dag_note);
	fprintf(out, "fast memory            M = %llu\n", (unsigned long long)rep->M);
	if (rep->case_name)
		fprintf(out, "case                   %s: %s\n", rep->case_name, rep->case_reason);
	if (rep->source)
		fprintf(out, "trace                  %s, %llu lines%s\n", rep->source,
			(unsigned long long)rep->lines,
			rep->has_end ? ", end line matches" : "");
	fprintf(out, "strategy               %s%s%s%s\n", rep->strategy,
		rep->section ? " (" : "", rep->section ? rep->section : "",
		rep->section ? ")" : "");
	if (rep->algorithm[0])
		fprintf(out, "  why this one         %s\n", rep->algorithm);
	if (rep->plan.chosen)
		fprintf(out, "  runs                 %s (%s)\n", rep->plan.chosen->name,
			rep->plan.chosen->section);
	if (rep->has_plan)
		fprintf(out, "  plan                 %s\n", rep->plan.summary);
	if (!rep->valid) {
		fprintf(out, "valid                  no\n");
		fprintf(out, "violation              %s\n", rep->violation);
		fprintf(out, "moves before it        %llu\n",
			(unsigned long long)c->moves);
		return;
	}
	fprintf(out, "valid                  yes, %llu elementary moves checked (%llu set operations)\n",
		(unsigned long long)c->moves, (unsigned long long)rep->ops);
	fprintf(out, "loads                  %llu\n", (unsigned long long)c->loads);
	fprintf(out, "saves                  %llu\n", (unsigned long long)c->saves);
	fprintf(out, "I/O                    %llu\n", (unsigned long long)io);
	if (att && att->decode)
		fprintf(out, "I/O per token          %.2f (of T = %llu generated)\n",
			(double)io / (double)(att->n - att->decode),
			(unsigned long long)(att->n - att->decode));
	if (rep->has_plan && rep->plan.predicted)
		fprintf(out, "predicted I/O          %llu (%s)\n", (unsigned long long)predicted,
			predicted == io ? "cost model agrees" : "COST MODEL DISAGREES");
	else if (rep->source)
		fprintf(out, "predicted I/O          no prediction (the header names no plan pebblesim can reproduce)\n");
	by_array_print(rep, out);
	fprintf(out, "peak red pebbles       %llu of %llu\n",
		(unsigned long long)c->peak_red, (unsigned long long)rep->M);
	fprintf(out, "computes               %llu (%llu recomputations)\n",
		(unsigned long long)c->computes,
		(unsigned long long)c->recomputations);
	fprintf(out, "macs                   %llu\n", (unsigned long long)c->macs);
	if (has_upper(rep)) {
		fprintf(out, "upper bound            %.0f  [I/O / upper = %.3f]\n",
			rep->plan.upper.value, ratio(io, rep->plan.upper.value));
		fprintf(out, "  %-20s %s\n", rep->plan.upper.name, rep->plan.upper.formula);
	} else if (rep->has_plan && rep->plan.sizes) {
		tuned_print(out);
	}
	cli_lower_bounds_print(&rep->lower, io, rep->valid, out);
	if (ps_report_bound_violated(rep))
		fprintf(out, "BOUND VIOLATED         the measured I/O contradicts a bound\n");
	if (is_optimal(rep))
		fprintf(out, "optimal                the I/O equals the lower bound: no valid pebbling moves less\n");
	if (has_cheaper(rep))
		fprintf(out, "cheaper strategy       %s moves %.2fx this run's I/O (%llu, by its cost model)\n",
			rep->cheapest, ratio(rep->cheapest_io, (double)io),
			(unsigned long long)rep->cheapest_io);
	/* on the same DAG: masked where this run's is causal */
	if (rep->has_exact_flash)
		fprintf(out, "exact attention (%s) %llu I/O by its cost model (%.2fx this run)\n",
			rep->att && rep->att->causal ? "causal flash" : "flash",
			(unsigned long long)rep->exact_flash_io,
			io ? (double)rep->exact_flash_io / (double)io : 0.0);
	if (rep->has_values)
		values_print(rep, out);
	fprintf(out, "time                   %.3f s (%.1f M moves/s)\n", rep->seconds,
		rep->seconds > 0 ? (double)c->moves / rep->seconds / 1e6 : 0.0);
}

void cli_lower_bounds_print(const struct ps_lower_bounds *lb, uint64_t io,
			   bool measured, FILE *out)
{
	if (measured)
		fprintf(out, "lower bound            %.0f  [I/O / lower = %.3f]\n",
			lb->best.value, ratio(io, lb->best.value));
	else
		fprintf(out, "lower bound            %.0f\n", lb->best.value);
	/* the largest first, then the others that apply, then those that do not */
	fprintf(out, "  %-20s %s\n", lb->best.name, lb->best.formula);
	for (size_t k = 0; k < lb->applied_count; k++)
		if (strcmp(lb->applied[k].name, lb->best.name))
			fprintf(out, "  %-20s %.0f: %s\n", lb->applied[k].name,
				lb->applied[k].value, lb->applied[k].formula);
	for (size_t k = 0; k < lb->skipped_count; k++)
		fprintf(out, "  %-20s not applied: %s\n", lb->skipped[k].name,
			lb->skipped[k].why);
}

json_t *cli_bound_value_json(double value)
{
	/* bounds are whole numbers of moves: integers, while they fit */
	if (value == floor(value) && fabs(value) < 9.0e18)
		return json_integer((json_int_t)value);
	return json_real(value);
}

static json_t *bound_json(const struct ps_bound *b)
{
	return json_pack("{s:s, s:s, s:o}", "name", b->name, "formula",
			 b->formula, "value", cli_bound_value_json(b->value));
}

json_t *cli_dag_json(const struct ps_report *rep)
{
	const struct ps_attention *att = rep->att;
	json_t *dag;

	if (att) {
		if (att->exact)
			dag = json_pack("{s:s, s:I, s:I, s:b}", "kind", "exact-attention",
					"n", (json_int_t)att->n, "d", (json_int_t)att->d,
					"normalize", att->normalize);
		else
			dag = json_pack("{s:s, s:I, s:I, s:I, s:b, s:I}", "kind",
					"approx-attention", "n", (json_int_t)att->n, "d",
					(json_int_t)att->d, "g", (json_int_t)att->g, "normalize",
					att->normalize, "r", (json_int_t)att->r);
		ps_trace_dag_variant(dag, att);
		return dag;
	}
	dag = json_pack("{s:s, s:s?, s:I, s:I, s:I, s:I, s:I}", "kind", "explicit",
			"file", rep->dag_name, "vertices", (json_int_t)rep->xdag->vertices,
			"edges", (json_int_t)rep->xdag->edges,
			"inputs", (json_int_t)rep->xdag->inputs,
			"sums", (json_int_t)rep->xdag->sums,
			"outputs", (json_int_t)rep->xdag->dag.output_count);
	if (rep->dag_format)
		json_object_set_new(dag, "format", json_string(rep->dag_format));
	if (rep->dag_note)
		json_object_set_new(dag, "note", json_string(rep->dag_note));
	return dag;
}

json_t *cli_lower_bounds_json(const struct ps_lower_bounds *lb)
{
	json_t *applied = json_array(), *skipped = json_array();

	for (size_t k = 0; k < lb->applied_count; k++)
		json_array_append_new(applied, bound_json(&lb->applied[k]));
	for (size_t k = 0; k < lb->skipped_count; k++)
		json_array_append_new(skipped, json_pack("{s:s, s:s}", "name",
							 lb->skipped[k].name, "why",
							 lb->skipped[k].why));
	return json_pack("{s:o, s:o, s:o}", "lower", bound_json(&lb->best),
			 "applied", applied, "skipped", skipped);
}

int cli_report_print_json(const struct ps_report *rep, FILE *out)
{
	const struct ps_counts *c = &rep->counts;
	uint64_t io = c->loads + c->saves;
	json_t *root, *dag, *bounds;
	int rc;

	dag = cli_dag_json(rep);
	root = json_pack("{s:o, s:I}", "dag", dag, "M", (json_int_t)rep->M);
	if (!root)
		return PS_ENOMEM;
	if (rep->case_name) {
		json_object_set_new(root, "case", json_string(rep->case_name));
		json_object_set_new(root, "case_reason", json_string(rep->case_reason));
	}
	json_object_set_new(root, "strategy", json_string(rep->strategy));
	if (rep->algorithm[0])
		json_object_set_new(root, "case_algorithm", json_string(rep->algorithm));
	if (rep->plan.chosen)
		json_object_set_new(root, "chosen", json_string(rep->plan.chosen->name));
	if (rep->has_plan)
		json_object_set_new(root, "plan", json_string(rep->plan.summary));
	if (rep->has_plan && rep->plan.sizes)
		json_object_set_new(root, "sizes", json_string(rep->plan.sizes));
	if (rep->source) {
		json_object_set_new(root, "trace", json_string(rep->source));
		json_object_set_new(root, "lines", json_integer((json_int_t)rep->lines));
	}
	json_object_set_new(root, "valid", json_boolean(rep->valid));
	if (rep->valid) {
		json_object_set_new(root, "loads", json_integer((json_int_t)c->loads));
		json_object_set_new(root, "saves", json_integer((json_int_t)c->saves));
		json_object_set_new(root, "io", json_integer((json_int_t)io));
		if (rep->att && rep->att->decode) {
			const uint64_t tokens = rep->att->n - rep->att->decode;

			json_object_set_new(root, "tokens", json_integer((json_int_t)tokens));
			json_object_set_new(root, "io_per_token",
					    json_real((double)io / (double)tokens));
		}
		json_object_set_new(root, "by_array", by_array_json(report_dag(rep), c->by_array));
		if (rep->has_plan && rep->plan.predicted) {
			json_object_set_new(root, "predicted_io",
					    json_integer((json_int_t)(rep->plan.loads + rep->plan.saves)));
			if (ps_plan_by_array_given(&rep->plan))
				json_object_set_new(root, "predicted_by_array",
						    by_array_json(report_dag(rep), rep->plan.by_array));
		}
	} else {
		json_object_set_new(root, "violation",
				    json_pack("{s:s, s:s}", "message", rep->violation,
					      "rule", ps_rule_name(rep->rule)));
	}
	json_object_set_new(root, "peak_red", json_integer((json_int_t)c->peak_red));
	json_object_set_new(root, "computes", json_integer((json_int_t)c->computes));
	json_object_set_new(root, "recomputations",
			    json_integer((json_int_t)c->recomputations));
	json_object_set_new(root, "macs", json_integer((json_int_t)c->macs));
	json_object_set_new(root, "moves", json_integer((json_int_t)c->moves));
	json_object_set_new(root, "ops", json_integer((json_int_t)rep->ops));
	bounds = cli_lower_bounds_json(&rep->lower);
	if (has_upper(rep))
		json_object_set_new(bounds, "upper", bound_json(&rep->plan.upper));
	json_object_set_new(root, "bounds", bounds);
	if (rep->has_exact_flash) {
		json_object_set_new(root, "exact_flash_io",
				    json_integer((json_int_t)rep->exact_flash_io));
		/* flash is planned, not run: the figure is its cost model's */
		json_object_set_new(root, "exact_flash_io_by", json_string("cost model"));
	}
	if (rep->valid) {
		json_t *ratios = json_pack("{s:f}", "io_to_lower",
					   ratio(io, rep->lower.best.value));

		if (has_upper(rep))
			json_object_set_new(ratios, "io_to_upper",
					    json_real(ratio(io, rep->plan.upper.value)));
		json_object_set_new(root, "ratios", ratios);
	}
	json_object_set_new(root, "bound_violated",
			    json_boolean(ps_report_bound_violated(rep)));
	if (rep->valid)
		json_object_set_new(root, "optimal", json_boolean(is_optimal(rep)));
	if (has_cheaper(rep))
		json_object_set_new(root, "cheaper", json_pack("{s:s, s:I, s:f}",
			"strategy", rep->cheapest, "io", (json_int_t)rep->cheapest_io,
			"ratio", ratio(rep->cheapest_io, (double)io)));
	if (rep->has_values)
		json_object_set_new(root, "values", values_json(rep));
	json_object_set_new(root, "seconds", json_real(rep->seconds));
	rc = json_dumpf(root, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(root);
	return rc ? PS_EIO : PS_OK;
}

/* Prints root on one line and frees it. */
static void print_json_line(json_t *root, FILE *out)
{
	json_dumpf(root, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(root);
}

void cli_dry_run_print(const struct cli_dry_run *dr, bool json, FILE *out)
{
	const struct ps_report *rep = dr->rep;
	const struct ps_dag *dag = dr->dag;
	uint64_t io = rep->plan.loads + rep->plan.saves;

	if (json) {
		json_t *bounds = cli_lower_bounds_json(&rep->lower);
		json_t *root = json_pack("{s:b, s:o, s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I}",
			"dry_run", 1, "dag", cli_dag_json(rep), "M", (json_int_t)rep->M,
			"strategy", dr->s->name, "plan", rep->plan.summary,
			"nodes", (json_int_t)dag->node_count,
			"state_nodes", (json_int_t)dag->state_count,
			"edges", (json_int_t)dag->edge_count,
			"state_bytes", (json_int_t)dr->state_bytes,
			"estimated_peak_rss_bytes", (json_int_t)dr->rss_bytes);

		json_object_set_new(root, "strategy_bytes", json_integer((json_int_t)rep->plan.work_bytes));

		if (rep->case_name)
			json_object_set_new(root, "case", json_string(rep->case_name));
		if (dr->algorithm[0])
			json_object_set_new(root, "case_algorithm", json_string(dr->algorithm));
		if (rep->plan.predicted) {
			json_t *predicted = json_pack("{s:I, s:I, s:I}",
				"loads", (json_int_t)rep->plan.loads, "saves",
				(json_int_t)rep->plan.saves, "io", (json_int_t)io);

			if (ps_plan_by_array_given(&rep->plan))
				json_object_set_new(predicted, "by_array",
						    by_array_json(dag, rep->plan.by_array));
			json_object_set_new(root, "predicted", predicted);
		}
		if (rep->plan.bounded)
			json_object_set_new(bounds, "upper", bound_json(&rep->plan.upper));
		if (rep->plan.sizes)
			json_object_set_new(root, "sizes", json_string(rep->plan.sizes));
		json_object_set_new(root, "bounds", bounds);
		print_json_line(root, out);
		return;
	}
	fprintf(out, "dry run                nothing validated\n");
	if (!rep->att && rep->dag_note)
		fprintf(out, "DAG read as            %s\n", rep->dag_note);
	fprintf(out, "nodes                  %llu (%llu hold pebbles), %llu edges\n",
		(unsigned long long)dag->node_count,
		(unsigned long long)dag->state_count,
		(unsigned long long)dag->edge_count);
	fprintf(out, "pebble state           %.1f MiB (bit planes over the nodes a pebbling touches)\n",
		(double)dr->state_bytes / (1 << 20));
	if (rep->plan.work_bytes)
		fprintf(out, "strategy's tables      %.1f MiB\n",
			(double)rep->plan.work_bytes / (1 << 20));
	fprintf(out, "estimated peak memory  %.1f MiB resident\n", (double)dr->rss_bytes / (1 << 20));
	fprintf(out, "fast memory            M = %llu\n", (unsigned long long)rep->M);
	if (rep->case_name)
		fprintf(out, "case                   %s: %s\n", rep->case_name, rep->case_reason);
	fprintf(out, "strategy               %s (%s)\n", dr->s->name, dr->s->section);
	if (dr->algorithm[0])
		fprintf(out, "  why this one         %s\n", dr->algorithm);
	fprintf(out, "  plan                 %s\n", rep->plan.summary);
	if (rep->plan.predicted) {
		const char *name;
		unsigned a;

		fprintf(out, "predicted              %llu loads + %llu saves = %llu I/O\n",
			(unsigned long long)rep->plan.loads,
			(unsigned long long)rep->plan.saves, (unsigned long long)io);
		for (unsigned k = 0; ps_plan_by_array_given(&rep->plan) &&
				     (name = ps_dag_array_at(dag, k, &a)); k++)
			fprintf(out, "  %-20s %llu loads + %llu saves\n", name,
				(unsigned long long)rep->plan.by_array[a].loads,
				(unsigned long long)rep->plan.by_array[a].saves);
	}
	if (rep->plan.bounded)
		fprintf(out, "upper bound            %.0f (%s)\n", rep->plan.upper.value,
			rep->plan.upper.name);
	else if (rep->plan.sizes)
		tuned_print(out);
	cli_lower_bounds_print(&rep->lower, 0, false, out);
}

/* A compare row's name: the strategy, and on explicit DAGs its order or
 * with tuned tile sizes "/tuned". */
const char *cli_compare_row_name(const struct cli_compare_row *row, char *buf,
				 size_t len)
{
	if (row->order || row->sizes)
		snprintf(buf, len, "%s/%s", row->s->name,
			 row->order ? row->order : row->sizes);
	else
		snprintf(buf, len, "%s", row->s->name);
	return buf;
}

static json_t *compare_row_json(const struct ps_report *head,
				const struct cli_compare_row *row)
{
	const struct ps_report *rep = &row->rep;
	uint64_t io = rep->counts.loads + rep->counts.saves;
	json_t *obj = json_pack("{s:s}", "strategy", row->s->name);

	if (row->order)
		json_object_set_new(obj, "order", json_string(row->order));
	if (row->sizes)
		json_object_set_new(obj, "sizes", json_string(row->sizes));
	json_object_set_new(obj, "dag", cli_dag_json(head));
	if (head->att) {
		json_object_set_new(obj, "n", json_integer((json_int_t)head->att->n));
		json_object_set_new(obj, "d", json_integer((json_int_t)head->att->d));
		json_object_set_new(obj, "g", json_integer((json_int_t)head->att->g));
	}
	json_object_set_new(obj, "M", json_integer((json_int_t)head->M));
	if (!row->ran) {
		json_object_set_new(obj, "applies", json_false());
		json_object_set_new(obj, "why_not", json_string(row->why));
		return obj;
	}
	json_object_set_new(obj, "applies", json_true());
	/* --predict: the cost model's counts, not judged by the engine */
	json_object_set_new(obj, "simulated", json_boolean(!row->predicted));
	if (row->not_simulated[0])
		json_object_set_new(obj, "not_simulated", json_string(row->not_simulated));
	if (!row->predicted)
		json_object_set_new(obj, "valid", json_boolean(rep->valid));
	json_object_set_new(obj, "loads", json_integer((json_int_t)rep->counts.loads));
	json_object_set_new(obj, "saves", json_integer((json_int_t)rep->counts.saves));
	json_object_set_new(obj, "io", json_integer((json_int_t)io));
	if (head->att && head->att->decode)
		json_object_set_new(obj, "io_per_token",
				    json_real((double)io / (double)(head->att->n - head->att->decode)));
	if (!row->predicted || ps_plan_by_array_given(&rep->plan))
		json_object_set_new(obj, "by_array", by_array_json(report_dag(head), rep->counts.by_array));
	json_object_set_new(obj, "peak_red", json_integer((json_int_t)rep->counts.peak_red));
	json_object_set_new(obj, "lower", cli_bound_value_json(rep->lower.best.value));
	json_object_set_new(obj, "lower_name", json_string(rep->lower.best.name));
	/* the baselines have neither a cost model nor a bound */
	if (rep->plan.predicted)
		json_object_set_new(obj, "predicted_io",
				    json_integer((json_int_t)(rep->plan.loads + rep->plan.saves)));
	if (rep->plan.bounded) {
		json_object_set_new(obj, "upper", cli_bound_value_json(rep->plan.upper.value));
		json_object_set_new(obj, "upper_name", json_string(rep->plan.upper.name));
	}
	json_object_set_new(obj, "bound_violated", json_boolean(ps_report_bound_violated(rep)));
	json_object_set_new(obj, "seconds", json_real(rep->seconds));
	json_object_set_new(obj, "plan", json_string(rep->plan.summary));
	return obj;
}

/* compare's second table: the I/O (loads + saves) of each array, a row for
 * each valid run; --json has loads and saves apart. */
static void compare_by_array_print(const struct ps_report *head,
				   const struct cli_compare_row *rows, size_t count,
				   FILE *out)
{
	const struct ps_dag *dag = report_dag(head);
	const char *name;
	char label[64];
	unsigned a;

	fprintf(out, "\nI/O by array (loads + saves)\n%-14s", "strategy");
	for (unsigned k = 0; (name = ps_dag_array_at(dag, k, &a)); k++)
		fprintf(out, " %11s", name);
	fputc('\n', out);
	for (size_t r = 0; r < count; r++) {
		const struct ps_counts *c = &rows[r].rep.counts;

		if (!rows[r].ran || !rows[r].rep.valid)
			continue;
		fprintf(out, "%-14s", cli_compare_row_name(&rows[r], label, sizeof(label)));
		/* a cost model that gives no breakdown: none */
		for (unsigned k = 0; ps_dag_array_at(dag, k, &a); k++)
			if (rows[r].predicted && !ps_plan_by_array_given(&rows[r].rep.plan))
				fprintf(out, " %11s", "-");
			else
				fprintf(out, " %11llu",
					(unsigned long long)(c->by_array[a].loads + c->by_array[a].saves));
		fputc('\n', out);
	}
}

void cli_compare_print(const struct ps_report *head,
		       const struct cli_compare_row *rows, size_t count,
		       bool json, FILE *out)
{
	const struct ps_attention *att = head->att;

	if (json) {
		json_t *list = json_array();

		for (size_t k = 0; k < count; k++)
			json_array_append_new(list, compare_row_json(head, &rows[k]));
		print_json_line(list, out);
		return;
	}
	/* the paper's cases are of the non-causal DAG: none for a causal one */
	if (att)
		fprintf(out, "n = %llu, d = %llu, g = %llu, r = %llu, M = %llu%s%s%s%s%s\n",
			(unsigned long long)att->n, (unsigned long long)att->d,
			(unsigned long long)att->g, (unsigned long long)att->r,
			(unsigned long long)head->M, head->case_name ? ": Case " : "",
			head->case_name ? head->case_name : "", head->case_name ? " (" : "",
			head->case_name ? head->case_reason : "", head->case_name ? ")" : "");
	else
		fprintf(out, "explicit DAG %s: %llu vertices, %llu edges (%llu inputs, %llu sums, %llu outputs), M = %llu%s%s\n",
			head->dag_name, (unsigned long long)head->xdag->vertices,
			(unsigned long long)head->xdag->edges,
			(unsigned long long)head->xdag->inputs,
			(unsigned long long)head->xdag->sums,
			(unsigned long long)head->xdag->dag.output_count,
			(unsigned long long)head->M, head->dag_note ? "; " : "",
			head->dag_note ? head->dag_note : "");
	if (att && att->decode)
		fprintf(out, "causal, decoding rows %llu..%llu after a prompt of P = %llu: I/O per token is I/O / %llu\n",
			(unsigned long long)att->decode, (unsigned long long)(att->n - 1),
			(unsigned long long)att->decode,
			(unsigned long long)(att->n - att->decode));
	else if (att && att->causal)
		fprintf(out, "causal: row i sees keys j <= i only (MODEL.md section 7)\n");
	cli_lower_bounds_print(&head->lower, 0, false, out);
	fputc('\n', out);
	fprintf(out, "%-14s %6s %12s %12s %12s %9s %9s %9s %8s\n", "strategy",
		"valid", "loads", "saves", "I/O", "peak red", "I/O/upper",
		"I/O/lower", "seconds");
	for (size_t k = 0; k < count; k++) {
		const struct ps_report *rep = &rows[k].rep;
		uint64_t io = rep->counts.loads + rep->counts.saves;
		char upper[16] = "-", name[64];

		cli_compare_row_name(&rows[k], name, sizeof(name));
		if (!rows[k].ran) {
			fprintf(out, "%-14s %s\n", name, rows[k].why);
			continue;
		}
		if (rep->plan.bounded)
			snprintf(upper, sizeof(upper), "%.3f",
				 (double)io / rep->plan.upper.value);
		fprintf(out, "%-14s %6s %12llu %12llu %12llu %9llu %9s %9.3f %8.2f\n",
			name, rows[k].predicted ? "model" : rep->valid ? "yes" : "NO",
			(unsigned long long)rep->counts.loads,
			(unsigned long long)rep->counts.saves,
			(unsigned long long)io,
			(unsigned long long)rep->counts.peak_red, upper,
			ratio(io, head->lower.best.value), rep->seconds);
	}
	for (size_t k = 0; k < count; k++) {
		char name[64];

		if (rows[k].not_simulated[0])
			fprintf(out, "%s: not simulated: %s\n",
				cli_compare_row_name(&rows[k], name, sizeof(name)),
				rows[k].not_simulated);
	}
	compare_by_array_print(head, rows, count, out);
}

void cli_list_print(bool json, FILE *out)
{
	static const struct {
		unsigned takes;
		const char *option;
	} options[] = {
		{ PS_TAKES_W, "w" }, { PS_TAKES_TILES, "tiles" }, { PS_TAKES_SIZES, "sizes" },
		{ PS_TAKES_ORDER, "order" }, { PS_TAKES_LAYOUT, "layout" },
	};
	int width = 0;

	if (json) {
		json_t *list = json_array();

		for (size_t k = 0; k < ps_strategy_count; k++) {
			const struct ps_strategy *s = ps_strategies[k];
			json_t *takes = json_array();

			for (size_t q = 0; q < sizeof(options) / sizeof(options[0]); q++)
				if (ps_strategy_takes(s, options[q].takes))
					json_array_append_new(takes, json_string(options[q].option));
			json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:o}",
				"name", s->name, "section", s->section, "summary", s->summary,
				"dag", (s->flags & PS_STRATEGY_EXPLICIT) ? "explicit"
				       : (s->flags & PS_STRATEGY_EXACT) ? "exact-attention"
									 : "approx-attention",
				"baseline", (s->flags & PS_STRATEGY_BASELINE) != 0,
				"chooser", (s->flags & PS_STRATEGY_CHOOSER) != 0,
				"options", takes));
		}
		print_json_line(list, out);
		return;
	}
	for (size_t k = 0; k < ps_strategy_count; k++)
		if ((int)strlen(ps_strategies[k]->name) > width)
			width = (int)strlen(ps_strategies[k]->name);
	for (size_t k = 0; k < ps_strategy_count; k++)
		fprintf(out, "%-*s %s\n%*s %s\n", width, ps_strategies[k]->name,
			ps_strategies[k]->section, width, "", ps_strategies[k]->summary);
}
