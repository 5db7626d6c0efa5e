/*
 * One job end to end: the report's numbers. The command line prints them
 * (src/cli/report.c).
 */
#include "pebblesim/run.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "pebblesim/limits.h"
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
		.causal = att->causal, .decode = att->decode,
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

void ps_report_cheapest(struct ps_report *rep)
{
	struct ps_problem pb = { .att = rep->att, .M = rep->M };
	struct ps_candidate best;

	/* the line names the cheapest and its I/O, not the runner-up */
	if (!rep->att || rep->att->exact || ps_best_cheapest(&pb, &best))
		return;
	ps_candidate_name(&best, rep->cheapest, sizeof(rep->cheapest));
	rep->cheapest_io = best.io;
	rep->has_cheapest = true;
}

void ps_report_init(struct ps_report *rep, const struct ps_attention *att,
		    uint64_t M)
{
	memset(rep, 0, sizeof(*rep));
	rep->att = att;
	rep->M = M;
	/* the paper's cases are of approximate attention */
	if (!att->exact) {
		/* ... of the non-causal DAG */
		if (!att->causal)
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

bool ps_progress_lines(FILE *out)
{
	int fd = out ? fileno(out) : -1;

	return fd < 0 || !isatty(fd);
}

void ps_progress_init(struct ps_progress *p, FILE *out, uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->total = total;
	p->lines = out && ps_progress_lines(out);
	p->start = p->last = ps_now_seconds();
}

void ps_progress_step(struct ps_progress *p, uint64_t moves, uint64_t op_moves)
{
	double now;

	/* the clock is read every 4096 operations, or after a large one */
	if (!p->out || ((++p->ops & 4095) && op_moves < 100000))
		return;
	now = ps_now_seconds();
	if (now - p->start < 2.0 ||
	    now - p->last < (p->lines && p->shown ? PS_PROGRESS_LINE_SECONDS : 0.5))
		return;
	p->last = now;
	p->shown = true;
	fputs(p->lines ? "pebblesim: " : "\r  ", p->out);
	if (p->label)
		fprintf(p->out, "%s: ", p->label);
	if (p->total)
		fprintf(p->out, "%llu of %llu moves validated (%.0f%%), %.0f M moves/s",
			(unsigned long long)moves, (unsigned long long)p->total,
			100.0 * (double)moves / (double)p->total,
			(double)moves / (now - p->start) / 1e6);
	else
		fprintf(p->out, "%llu moves validated, %.0f M moves/s",
			(unsigned long long)moves, (double)moves / (now - p->start) / 1e6);
	fputs(p->lines ? "\n" : "   ", p->out);
	fflush(p->out);
}

void ps_progress_end(struct ps_progress *p)
{
	/* a terminal's line is cleared for the report; a log keeps its lines */
	if (p->shown && !p->lines)
		fprintf(p->out, "\r%*s\r", 132, "");
}

/* A sink that shows the engine's moves after each operation (or loop of
 * them, passed whole to the engine). */
struct progress_sink {
	struct ps_forward_sink forward;
	const struct ps_engine *engine;
	struct ps_progress progress;
};

static void progress_after(void *ctx, uint64_t moves)
{
	struct progress_sink *p = ctx;

	ps_progress_step(&p->progress, p->engine->c.moves, moves);
}

uint64_t ps_resident_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long long size, resident;
	long page = sysconf(_SC_PAGESIZE);
	int got = f ? fscanf(f, "%llu %llu", &size, &resident) : 0;

	if (f)
		fclose(f);
	return got == 2 && page > 0 ? (uint64_t)resident * (uint64_t)page : ps_peak_rss_bytes();
}

uint64_t ps_peak_rss_bytes(void)
{
	struct rusage ru;

	/* Linux reports kibibytes */
	return getrusage(RUSAGE_SELF, &ru) ? 0 : (uint64_t)ru.ru_maxrss * 1024;
}

uint64_t ps_plan_state_bytes(const struct ps_plan *plan, const struct ps_dag *dag)
{
	return plan->state_bytes ? plan->state_bytes : ps_engine_state_bytes(dag);
}

/* ps_run_fits for s's plan, already made */
static int plan_fits(const struct ps_problem *pb, const struct ps_strategy *s,
		     const struct ps_plan *plan, bool values, struct ps_error *err)
{
	const struct ps_dag *dag = pb->att ? &pb->att->dag : &pb->xdag->dag;
	uint64_t bytes;
	char what[160];

	/* saturated: a sum that wraps is refused as the largest */
	if (ps_add_u64(ps_plan_state_bytes(plan, dag), plan->work_bytes, &bytes) ||
	    (values && pb->att && ps_add_u64(bytes, ps_values_bytes(pb->att, pb->M), &bytes)))
		bytes = UINT64_MAX;
	snprintf(what, sizeof(what), "the pebble state of %s's sequence%s%s",
		 plan->chosen ? plan->chosen->name : s->name,
		 values ? " with values" : "",
		 plan->work_bytes ? " with the strategy's tables" : "");
	return ps_memory_fits(bytes, what, err);
}

int ps_run_fits(const struct ps_problem *pb, const struct ps_strategy *s, bool values,
		struct ps_error *err)
{
	struct ps_plan plan;
	int rc = ps_strategy_plan_kept(s, pb, &plan, err);

	return rc ? rc : plan_fits(pb, s, &plan, values, err);
}

int ps_run(const struct ps_problem *pb, const struct ps_strategy *s,
	   struct ps_sink *tap, struct ps_report *rep, struct ps_error *err)
{
	struct progress_sink progress;
	const struct ps_attention *att = pb->att;
	const struct ps_dag *dag = att ? &att->dag : &pb->xdag->dag;
	struct ps_engine engine;
	struct ps_engine_sink sink;
	struct ps_values_sink values;
	struct ps_sink *judge; /* the engine, and the values behind it */
	struct ps_tee_sink tee;
	double start;
	bool guarded;
	int rc;

	if (att)
		ps_report_init(rep, att, pb->M);
	else
		ps_report_init_explicit(rep, pb->xdag, NULL, pb->M);
	rep->strategy = s->name;
	rep->section = s->section;
	rc = ps_strategy_plan_kept(s, pb, &rep->plan, err);
	if (rc)
		return rc;
	rep->has_plan = true;
	if ((rc = plan_fits(pb, s, &rep->plan, pb->values != NULL, err)))
		return rc;
	rc = ps_engine_init(&engine, dag, pb->M, err);
	if (rc)
		return rc;
	engine.element_only = pb->element_only;
	ps_engine_sink_init(&sink, att, &engine);
	judge = &sink.sink;
	if (pb->values) {
		ps_values_sink_init(&values, &sink.sink, pb->values);
		judge = &values.sink;
	}
	/* a trace sees each operation before the engine judges it */
	if (tap)
		ps_tee_sink_init(&tee, tap, judge);

	start = ps_now_seconds();
	memset(&progress, 0, sizeof(progress));
	if (pb->progress) {
		ps_forward_sink_init(&progress.forward, tap ? &tee.sink : judge, progress_after,
				     &progress);
		progress.engine = &engine;
		if (rep->plan.predicted) {
			/* cheap for tiling strategies: a few thousand operations */
			struct ps_count_sink counter;
			struct ps_error ignored;

			ps_count_sink_init(&counter);
			if (!ps_strategy_run(s, pb, &counter.sink, &ignored))
				progress.progress.total = counter.moves;
		}
	}
	ps_progress_init(&progress.progress, pb->progress, progress.progress.total);
	progress.progress.label = pb->progress_label;
	ps_error_clear(err);
	rc = ps_strategy_run(s, pb, pb->progress ? &progress.forward.sink :
				    tap ? &tee.sink : judge, err);
	ps_progress_end(&progress.progress);
	/* a plugin's operation out of range (ps_strategy_run) has a message,
	 * the engine's verdict none; the plugin may be a chooser's choice */
	guarded = rc == PS_EINVALID && err && err->msg[0] &&
		  ps_strategy_origin(rep->plan.chosen ? rep->plan.chosen : s);
	if (rc == PS_OK) {
		ps_engine_set_position(&engine, sink.ops + 1);
		rc = ps_engine_finish(&engine);
	}
	rep->seconds = ps_now_seconds() - start;
	rep->counts = engine.c;
	rep->ops = sink.ops;
	if (guarded) {
		snprintf(rep->violation, sizeof(rep->violation), "%s", err->msg);
		rep->rule = PS_RULE_BAD_OPERATION;
		ps_error_clear(err);
		rc = PS_OK;
	} else if (rc == PS_EINVALID) {
		char prefix[48];

		snprintf(prefix, sizeof(prefix), "op %llu: ",
			 (unsigned long long)engine.violation.position);
		ps_violation_format(&engine.violation, prefix, rep->violation,
				    sizeof(rep->violation));
		rep->rule = engine.violation.rule;
		rc = PS_OK;
	} else if (rc == PS_OK) {
		rep->valid = true;
		if (pb->values && !(rc = ps_values_finish(pb->values, err))) {
			rep->has_values = true;
			rep->values = pb->values->report;
			rep->inputs = &pb->values->in;
		}
	}
	ps_engine_free(&engine);
	return rc;
}

static bool has_upper(const struct ps_report *rep)
{
	return rep->has_plan && rep->plan.bounded;
}

bool ps_report_values_failed(const struct ps_report *rep)
{
	return rep->valid && rep->has_values && rep->values.failed;
}

bool ps_report_bound_violated(const struct ps_report *rep)
{
	double io = (double)(rep->counts.loads + rep->counts.saves);

	return rep->valid &&
	       ((has_upper(rep) && io > rep->plan.upper.value) ||
		io < rep->lower.best.value);
}

bool ps_report_failed(const struct ps_report *rep)
{
	return !rep->valid || ps_report_bound_violated(rep) || ps_report_values_failed(rep);
}
