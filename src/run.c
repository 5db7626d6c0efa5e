/*
 * One job end to end, and its report in words or as JSON.
 */
#include "pebblesim/run.h"

#include <jansson.h>
#include <math.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "pebblesim/ops.h"
#include "pebblesim/strategy.h"
#include "pebblesim/trace.h"

double ps_now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool ps_exact_flash_io(const struct ps_attention *att, uint64_t M,
		       uint64_t *io)
{
	struct ps_attention_params p = {
		.n = att->n, .d = att->d, .normalize = att->normalize, .exact = true,
	};
	const struct ps_strategy *flash = ps_strategy_find("flash");
	struct ps_attention exact;
	struct ps_problem pb = { .att = &exact, .M = M };
	struct ps_plan plan;
	struct ps_error err;
	bool ok;

	/* the exact DAG's arithmetic only: nothing of size n^2 is allocated */
	if (!flash || ps_attention_init(&exact, &p, &err))
		return false;
	ok = ps_strategy_plan(flash, &pb, &plan, &err) == 0 && plan.predicted;
	if (ok)
		*io = plan.loads + plan.saves;
	ps_attention_free(&exact);
	return ok;
}

void ps_report_init(struct ps_report *rep, const struct ps_attention *att,
		    uint64_t M)
{
	memset(rep, 0, sizeof(*rep));
	rep->att = att;
	rep->M = M;
	/* the paper's cases are of approximate attention */
	if (!att->exact) {
		rep->case_name = ps_classify_case(att, M, rep->case_reason,
						  sizeof(rep->case_reason));
		rep->has_exact_flash = ps_exact_flash_io(att, M, &rep->exact_flash_io);
	}
	ps_bounds_lower(att, M, &rep->lower);
}

void ps_report_init_explicit(struct ps_report *rep,
			     const struct ps_explicit *x, const char *name,
			     uint64_t M)
{
	memset(rep, 0, sizeof(*rep));
	rep->xdag = x;
	rep->dag_name = name;
	rep->M = M;
	ps_bounds_lower_explicit(x, &rep->lower);
}

/*
 * Progress on standard error for long runs: moves validated, percent (when
 * the strategy's count is known beforehand), rate. Quiet for the first two
 * seconds, then a line every half second, rewritten in place.
 */
struct progress_sink {
	struct ps_sink sink;
	struct ps_sink *next;
	const struct ps_engine *engine;
	FILE *out;
	uint64_t total, ops;
	double start, last;
	bool shown;
};

static int progress_emit(struct ps_sink *sink, const struct ps_op *op,
			 struct ps_error *err)
{
	struct progress_sink *p = (struct progress_sink *)sink;
	int rc = ps_sink_emit(p->next, op, err);
	double now;

	/* the clock is read every 4096 operations, or after a large one */
	if ((++p->ops & 4095) && ps_op_moves(op) < 100000)
		return rc;
	now = ps_now_seconds();
	if (now - p->start < 2.0 || now - p->last < 0.5)
		return rc;
	p->last = now;
	p->shown = true;
	if (p->total)
		fprintf(p->out, "\r  %llu of %llu moves validated (%.0f%%), %.0f M moves/s   ",
			(unsigned long long)p->engine->c.moves,
			(unsigned long long)p->total,
			100.0 * (double)p->engine->c.moves / (double)p->total,
			(double)p->engine->c.moves / (now - p->start) / 1e6);
	else
		fprintf(p->out, "\r  %llu moves validated, %.0f M moves/s   ",
			(unsigned long long)p->engine->c.moves,
			(double)p->engine->c.moves / (now - p->start) / 1e6);
	fflush(p->out);
	return rc;
}

uint64_t ps_peak_rss_bytes(void)
{
	struct rusage ru;

	/* Linux reports kibibytes */
	return getrusage(RUSAGE_SELF, &ru) ? 0 : (uint64_t)ru.ru_maxrss * 1024;
}

int ps_run(const struct ps_problem *pb, const struct ps_strategy *s,
	   struct ps_sink *tap, struct ps_report *rep, struct ps_error *err)
{
	struct progress_sink progress;
	const struct ps_attention *att = pb->att;
	const struct ps_dag *dag = att ? &att->dag : &pb->xdag->dag;
	struct ps_engine engine;
	struct ps_engine_sink sink;
	struct ps_tee_sink tee;
	double start;
	int rc;

	if (att)
		ps_report_init(rep, att, pb->M);
	else
		ps_report_init_explicit(rep, pb->xdag, NULL, pb->M);
	rep->strategy = s->name;
	rep->section = s->section;
	rc = ps_strategy_plan(s, pb, &rep->plan, err);
	if (rc)
		return rc;
	rep->has_plan = true;
	rc = ps_engine_init(&engine, dag, pb->M, err);
	if (rc)
		return rc;
	engine.element_only = pb->element_only;
	ps_engine_sink_init(&sink, att, &engine);
	/* a trace sees each operation before the engine judges it */
	if (tap)
		ps_tee_sink_init(&tee, tap, &sink.sink);

	start = ps_now_seconds();
	memset(&progress, 0, sizeof(progress));
	if (pb->progress) {
		progress.sink.emit = progress_emit;
		progress.next = tap ? &tee.sink : &sink.sink;
		progress.engine = &engine;
		progress.out = pb->progress;
		progress.start = start;
		if (rep->plan.predicted) {
			/* cheap for tiling strategies: a few thousand operations */
			struct ps_count_sink counter;
			struct ps_error ignored;

			ps_count_sink_init(&counter);
			if (!ps_strategy_run(s, pb, &counter.sink, &ignored))
				progress.total = counter.moves;
		}
	}
	rc = ps_strategy_run(s, pb, pb->progress ? &progress.sink :
				    tap ? &tee.sink : &sink.sink, err);
	if (progress.shown) /* the line is cleared for the report */
		fprintf(pb->progress, "\r%*s\r", 72, "");
	if (rc == PS_OK) {
		ps_engine_set_position(&engine, sink.ops + 1);
		rc = ps_engine_finish(&engine);
	}
	rep->seconds = ps_now_seconds() - start;
	rep->counts = engine.c;
	rep->ops = sink.ops;
	if (rc == PS_EINVALID) {
		char prefix[48];

		snprintf(prefix, sizeof(prefix), "op %llu: ",
			 (unsigned long long)engine.violation.position);
		ps_violation_format(&engine.violation, prefix, rep->violation,
				    sizeof(rep->violation));
		rep->rule = engine.violation.rule;
		rc = PS_OK;
	} else if (rc == PS_OK) {
		rep->valid = true;
	}
	ps_engine_free(&engine);
	return rc;
}

static bool has_upper(const struct ps_report *rep)
{
	return rep->has_plan && rep->plan.bounded;
}

bool ps_report_bound_violated(const struct ps_report *rep)
{
	double io = (double)(rep->counts.loads + rep->counts.saves);

	return rep->valid &&
	       ((has_upper(rep) && io > rep->plan.upper.value) ||
		io < rep->lower.best.value);
}

static double ratio(uint64_t io, double bound)
{
	return bound > 0 ? (double)io / bound : 0.0;
}

void ps_report_print(const struct ps_report *rep, FILE *out)
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
	if (rep->has_plan && rep->plan.predicted)
		fprintf(out, "predicted I/O          %llu (%s)\n", (unsigned long long)predicted,
			predicted == io ? "cost model agrees" : "COST MODEL DISAGREES");
	else if (rep->source)
		fprintf(out, "predicted I/O          no prediction (the header names no plan pebblesim can reproduce)\n");
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
	}
	ps_report_print_lower(&rep->lower, io, rep->valid, out);
	if (rep->has_exact_flash)
		fprintf(out, "exact attention (flash) %llu I/O (%.2fx this run)\n",
			(unsigned long long)rep->exact_flash_io,
			io ? (double)rep->exact_flash_io / (double)io : 0.0);
	if (ps_report_bound_violated(rep))
		fprintf(out, "BOUND VIOLATED         the measured I/O contradicts a bound\n");
	fprintf(out, "time                   %.3f s (%.1f M moves/s)\n", rep->seconds,
		rep->seconds > 0 ? (double)c->moves / rep->seconds / 1e6 : 0.0);
}

void ps_report_print_lower(const struct ps_lower_bounds *lb, uint64_t io,
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

json_t *ps_bound_value_json(double value)
{
	/* bounds are whole numbers of moves: integers, while they fit */
	if (value == floor(value) && fabs(value) < 9.0e18)
		return json_integer((json_int_t)value);
	return json_real(value);
}

static json_t *bound_json(const struct ps_bound *b)
{
	return json_pack("{s:s, s:s, s:o}", "name", b->name, "formula",
			 b->formula, "value", ps_bound_value_json(b->value));
}

json_t *ps_lower_bounds_json(const struct ps_lower_bounds *lb)
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

int ps_report_print_json(const struct ps_report *rep, FILE *out)
{
	const struct ps_attention *att = rep->att;
	const struct ps_counts *c = &rep->counts;
	uint64_t io = c->loads + c->saves;
	json_t *root, *dag, *bounds;
	int rc;

	if (att && att->exact)
		dag = json_pack("{s:s, s:I, s:I, s:b}", "kind", "exact-attention",
				"n", (json_int_t)att->n, "d", (json_int_t)att->d,
				"normalize", att->normalize);
	else if (att)
		dag = json_pack("{s:s, s:I, s:I, s:I, s:b, s:I}", "kind",
				"approx-attention", "n", (json_int_t)att->n, "d",
				(json_int_t)att->d, "g", (json_int_t)att->g, "normalize",
				att->normalize, "r", (json_int_t)att->r);
	else
		dag = json_pack("{s:s, s:s?, s:I, s:I}", "kind", "explicit", "file",
				rep->dag_name, "vertices", (json_int_t)rep->xdag->vertices,
				"edges", (json_int_t)rep->xdag->edges);
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
	if (rep->source) {
		json_object_set_new(root, "trace", json_string(rep->source));
		json_object_set_new(root, "lines", json_integer((json_int_t)rep->lines));
	}
	json_object_set_new(root, "valid", json_boolean(rep->valid));
	if (rep->valid) {
		json_object_set_new(root, "loads", json_integer((json_int_t)c->loads));
		json_object_set_new(root, "saves", json_integer((json_int_t)c->saves));
		json_object_set_new(root, "io", json_integer((json_int_t)io));
		if (rep->has_plan && rep->plan.predicted)
			json_object_set_new(root, "predicted_io",
					    json_integer((json_int_t)(rep->plan.loads + rep->plan.saves)));
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
	bounds = ps_lower_bounds_json(&rep->lower);
	if (has_upper(rep))
		json_object_set_new(bounds, "upper", bound_json(&rep->plan.upper));
	json_object_set_new(root, "bounds", bounds);
	if (rep->has_exact_flash)
		json_object_set_new(root, "exact_flash_io",
				    json_integer((json_int_t)rep->exact_flash_io));
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
	json_object_set_new(root, "seconds", json_real(rep->seconds));
	rc = json_dumpf(root, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(root);
	return rc ? PS_EIO : PS_OK;
}
