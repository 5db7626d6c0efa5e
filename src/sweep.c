/*
 * Parameter sweeps (include/pebblesim/sweep.h). Each (point, label) is one
 * run, computed by one function whatever process runs it, so that any
 * number of jobs gives the same rows; children send their rows to the
 * parent through pipes, whole structs, and the parent puts each at its
 * index.
 */
#define _DEFAULT_SOURCE /* for sysconf's _SC_NPROCESSORS_ONLN */
#include "pebblesim/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "pebblesim/attention.h"
#include "pebblesim/bounds.h"
#include "pebblesim/limits.h"
#include "pebblesim/output.h"
#include "pebblesim/polynomial.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"

int ps_parse_size(const char *text, uint64_t *out)
{
	char *end;
	unsigned long long v, shift = 0;

	if (!text || *text < '0' || *text > '9')
		return -1;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno)
		return -1;
	if (end[0] == '^' && v == 2) {
		/* 2^k */
		const char *k = end + 1;

		if (*k < '0' || *k > '9')
			return -1;
		v = strtoull(k, &end, 10);
		if (errno || *end || v > 62)
			return -1;
		*out = UINT64_C(1) << v;
		return 0;
	}
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'M')
		shift = 20;
	else if (*end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > (unsigned long long)(PS_PARAM_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static uint64_t least_value(char param)
{
	return param == 'g' ? 0 : 1;
}

int ps_sweep_range_parse(char param, const char *text,
			 struct ps_sweep_range *out, struct ps_error *err)
{
	char buf[128], *colon, *second;
	const char *step = NULL;

	memset(out, 0, sizeof(*out));
	out->param = param;
	out->step = 1;
	if (strlen(text) >= sizeof(buf))
		return ps_error_set(err, PS_EINPUT, "range '%s' is too long", text);
	strcpy(buf, text);
	colon = strchr(buf, ':');
	if (!colon)
		return ps_error_set(err, PS_EINPUT,
				    "-%c %s is not a range: LO:HI, LO:HI:xK or LO:HI:+K", param, text);
	*colon = '\0';
	second = strchr(colon + 1, ':');
	if (second) {
		*second = '\0';
		step = second + 1;
	}
	if (ps_parse_size(buf, &out->lo) || ps_parse_size(colon + 1, &out->hi))
		return ps_error_set(err, PS_EINPUT,
				    "-%c %s: the bounds are whole numbers (k, M, G and 2^k allowed)",
				    param, text);
	if (out->lo > out->hi)
		return ps_error_set(err, PS_EINPUT, "-%c %s: lo = %llu is above hi = %llu",
				    param, text, (unsigned long long)out->lo,
				    (unsigned long long)out->hi);
	if (out->lo < least_value(param))
		return ps_error_set(err, PS_EINPUT, "-%c %s: %c starts at %llu", param,
				    text, param, (unsigned long long)least_value(param));
	if (step) {
		if ((*step != 'x' && *step != '+') || ps_parse_size(step + 1, &out->step))
			return ps_error_set(err, PS_EINPUT,
					    "-%c %s: the step is xK (geometric) or +K (arithmetic)",
					    param, text);
		out->geometric = *step == 'x';
		if (out->geometric && out->step < 2)
			return ps_error_set(err, PS_EINPUT,
					    "-%c %s: a geometric step is x2 or more", param, text);
		if (!out->geometric && out->step < 1)
			return ps_error_set(err, PS_EINPUT,
					    "-%c %s: an arithmetic step is +1 or more", param, text);
		if (out->geometric && out->lo == 0)
			return ps_error_set(err, PS_EINPUT,
					    "-%c %s: a geometric range starts above 0", param, text);
	}
	if (ps_sweep_points(out, NULL, 0) > PS_SWEEP_MAX_POINTS)
		return ps_error_set(err, PS_EINPUT, "-%c %s: more than %d points", param,
				    text, PS_SWEEP_MAX_POINTS);
	return PS_OK;
}

size_t ps_sweep_points(const struct ps_sweep_range *r, uint64_t *out, size_t max)
{
	size_t count = 0;
	uint64_t v = r->lo;

	for (;;) {
		if (out && count < max)
			out[count] = v;
		count++;
		if (count > PS_SWEEP_MAX_POINTS)
			return count;
		if (r->geometric ? v > r->hi / r->step : r->hi - v < r->step)
			break;
		v = r->geometric ? v * r->step : v + r->step;
		if (v > r->hi)
			break;
	}
	return count;
}

/* ---- one run ----------------------------------------------------------- */

int ps_sweep_check(const struct ps_sweep_spec *spec, struct ps_error *err)
{
	if (!spec->label_count)
		return ps_error_set(err, PS_EINPUT, "no strategies to sweep");
	for (size_t k = 0; k < spec->label_count; k++) {
		const char *label = spec->labels[k];
		const struct ps_strategy *s = ps_strategy_find(label);

		if (strcmp(label, "case") && !s) {
			char names[256];

			ps_strategy_names(names, sizeof(names));
			return ps_error_set(err, PS_EINPUT,
					    "unknown strategy '%s'; known: case, %s", label, names);
		}
		if (s && (s->flags & PS_STRATEGY_EXPLICIT))
			return ps_error_set(err, PS_EINPUT,
					    "%s pebbles DAGs from files; a sweep runs the attention DAGs",
					    label);
		for (size_t q = 0; q < k; q++)
			if (!strcmp(spec->labels[q], label))
				return ps_error_set(err, PS_EINPUT, "strategy '%s' is listed twice", label);
	}
	if (spec->shards && spec->shard >= spec->shards)
		return ps_error_set(err, PS_EINPUT, "shard %u of %u does not exist",
				    spec->shard + 1, spec->shards);
	return PS_OK;
}

/* The row's loads and saves by array: io of each array of dag. */
static void row_by_array(struct ps_sweep_row *row, const struct ps_dag *dag,
			 const struct ps_array_io *io)
{
	unsigned a;

	memcpy(row->by_array, io, sizeof(row->by_array));
	row->arrays = 0;
	for (unsigned k = 0; ps_dag_array_at(dag, k, &a); k++)
		row->arrays |= UINT32_C(1) << a;
}

static void not_run(struct ps_sweep_row *row, const char *why)
{
	row->ran = false;
	snprintf(row->why, sizeof(row->why), "%.*s", (int)sizeof(row->why) - 1, why);
}

/* The row of label at the point where the swept parameter is value. */
static void run_one(const struct ps_sweep_spec *spec, uint64_t value,
		    const char *label, struct ps_sweep_row *row)
{
	const struct ps_strategy *s = strcmp(label, "case") ? ps_strategy_find(label) : NULL;
	struct ps_attention_params p = {
		.n = spec->n, .d = spec->d, .g = spec->g, .normalize = spec->normalize,
		.causal = spec->causal, .decode = spec->decode,
	};
	struct ps_attention att;
	struct ps_problem pb;
	struct ps_error err;
	char why[384];
	uint64_t M = spec->M, least;

	memset(row, 0, sizeof(*row));
	switch (spec->range.param) {
	case 'n': p.n = value; break;
	case 'd': p.d = value; break;
	case 'g': p.g = value; break;
	case 'P': p.decode = value; break; /* decoding: the prompt's length */
	default: M = value; break;
	}
	p.exact = s && (s->flags & PS_STRATEGY_EXACT);
	if (p.exact)
		p.g = 0;
	snprintf(row->label, sizeof(row->label), "%s", label);
	snprintf(row->strategy, sizeof(row->strategy), "%s", s ? s->name : label);
	snprintf(row->dag, sizeof(row->dag), "%s", p.exact ? "exact-attention" : "approx-attention");
	row->n = p.n;
	row->d = p.d;
	row->g = p.g;
	row->M = M;
	row->value = value;
	row->swept = spec->range.param;
	row->causal = p.causal;
	row->decode = p.decode;
	row->upper = -1;
	ps_error_clear(&err);
	/* the monomial table and a plan's tables within the memory limit
	 * before they are built; the pebble state before a simulation */
	if (ps_attention_check_dag(&p, &err) || ps_attention_init(&att, &p, &err)) {
		not_run(row, err.msg);
		return;
	}
	memset(&pb, 0, sizeof(pb));
	pb.att = &att;
	pb.M = M;
	if (!s) {
		const char *c = ps_classify_case(&att, M, why, sizeof(why));

		s = ps_case_algorithm(c, &pb, why, sizeof(why), &err);
		if (!s) {
			not_run(row, err.msg);
			ps_attention_free(&att);
			return;
		}
	}
	snprintf(row->strategy, sizeof(row->strategy), "%s", s->name);
	least = ps_strategy_min_memory(s, &att);
	if (least == UINT64_MAX) {
		not_run(row, "does not apply to these parameters at any M");
	} else if (M < least) {
		snprintf(why, sizeof(why), "needs M >= %llu", (unsigned long long)least);
		not_run(row, why);
	} else if (spec->predict) {
		struct ps_lower_bounds lb;
		struct ps_plan plan;

		if (ps_strategy_plan(s, &pb, &plan, &err) || !plan.predicted) {
			not_run(row, plan.predicted ? err.msg : "no cost model: run without --predict");
		} else {
			row->ran = true;
			row->loads = plan.loads;
			row->saves = plan.saves;
			row->io = row->predicted_io = plan.loads + plan.saves;
			if (ps_plan_by_array_given(&plan))
				row_by_array(row, &att.dag, plan.by_array);
			row->peak_red = plan.peak_red;
			row->upper = plan.bounded ? plan.upper.value : -1;
			ps_bounds_lower(&att, M, &lb);
			row->lower = lb.best.value;
			if (plan.chosen)
				snprintf(row->strategy, sizeof(row->strategy), "%s", plan.chosen->name);
		}
	} else if (ps_run_fits(&pb, s, spec->values, &err) == PS_ENOMEM) {
		snprintf(why, sizeof(why), "too large to simulate (%.300s): use --predict", err.msg);
		not_run(row, why);
	} else {
		struct ps_report rep;
		struct ps_values vals;
		bool values = false;

		if (spec->values) {
			if (ps_values_init(&vals, &att, &spec->inputs, &err)) {
				not_run(row, err.msg);
				ps_attention_free(&att);
				return;
			}
			pb.values = &vals;
			values = true;
		}
		if (ps_run(&pb, s, NULL, &rep, &err)) {
			not_run(row, err.msg);
		} else {
			row->ran = row->simulated = true;
			row->valid = rep.valid;
			row->loads = rep.counts.loads;
			row->saves = rep.counts.saves;
			row->io = rep.counts.loads + rep.counts.saves;
			row_by_array(row, &att.dag, rep.counts.by_array);
			row->predicted_io = rep.plan.predicted ? rep.plan.loads + rep.plan.saves : 0;
			row->peak_red = rep.counts.peak_red;
			row->upper = rep.plan.bounded ? rep.plan.upper.value : -1;
			row->lower = rep.lower.best.value;
			row->seconds = rep.seconds;
			if (rep.plan.chosen)
				snprintf(row->strategy, sizeof(row->strategy), "%s", rep.plan.chosen->name);
			if (!rep.valid)
				snprintf(row->why, sizeof(row->why), "%.*s",
					 (int)sizeof(row->why) - 1, rep.violation);
			if (rep.has_values) {
				row->has_values = true;
				row->values_failed = rep.values.failed;
				row->error_vs_direct = rep.values.error_vs_direct;
				row->epsilon = rep.values.has_softmax ? rep.values.error_vs_softmax : -1;
				row->eta = rep.values.has_polynomial ? rep.values.polynomial.eta : -1;
				row->bound = rep.values.has_bound ? rep.values.bound : -1;
				if (rep.values.failed)
					snprintf(row->why, sizeof(row->why),
						 "values: %s pebbled %.17g, direct %.17g",
						 rep.values.worst, rep.values.worst_pebbled,
						 rep.values.worst_direct);
			}
		}
		if (values)
			ps_values_free(&vals);
	}
	ps_attention_free(&att);
}

/* ---- running every point ---------------------------------------------- */

struct job {
	const struct ps_sweep_spec *spec;
	const uint64_t *values;
	size_t *indices; /* the runs of this sweep (shard), by row index */
	size_t run_count;
	size_t total;    /* rows allocated: points x labels */
	struct ps_sweep_row *rows;
};

static void compute(const struct job *j, size_t k)
{
	size_t idx = j->indices[k], labels = j->spec->label_count;

	/* a log (not a terminal) is told the point as it starts */
	if (j->spec->progress && ps_progress_lines(j->spec->progress)) {
		fprintf(j->spec->progress, "pebblesim: sweep: running %s at %c = %llu\n",
			j->spec->labels[idx % labels], j->spec->range.param,
			(unsigned long long)j->values[idx / labels]);
		fflush(j->spec->progress);
	}
	run_one(j->spec, j->values[idx / labels], j->spec->labels[idx % labels],
		&j->rows[idx]);
}

/* A message of one child: the row index, then the row. */
struct message {
	uint64_t index;
	struct ps_sweep_row row;
};

static void show_progress(const struct ps_sweep_spec *spec, size_t done, size_t total,
			  const struct ps_sweep_row *row)
{
	if (spec->progress && ps_progress_lines(spec->progress)) {
		fprintf(spec->progress, "pebblesim: sweep: %zu of %zu runs done (%s at %c = %llu, %.2f s)\n",
			done, total, row->label, row->swept, (unsigned long long)row->value,
			row->seconds);
		fflush(spec->progress);
	} else if (spec->progress) {
		fprintf(spec->progress, "\rsweep: %zu of %zu runs", done, total);
		if (done == total)
			fprintf(spec->progress, "\r%*s\r", 40, "");
		fflush(spec->progress);
	}
}

/*
 * In a worker, first: it dies with the sweep that started it (SIGTERM,
 * SIGKILL or a crash of the parent leaves no process running; the
 * parent's death before prctl is seen in getppid), and the memory limit
 * is shared among the workers, so that N of them never ask for N times
 * the limit (docs/SECURITY.md, "Work limits").
 */
static void worker_start(pid_t parent, unsigned jobs)
{
#ifdef __linux__
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(3);
#else
	(void)parent;
#endif
	ps_memory_limit_share(jobs);
}

static int run_parallel(const struct job *j, unsigned jobs, struct ps_error *err)
{
	const pid_t parent = getpid();
	pid_t pids[64];
	struct pollfd fds[64];
	size_t filled[64], done = 0;
	struct message msg[64];
	unsigned started = 0, open_count;
	int rc = PS_OK;

	fflush(NULL); /* the children leave through _exit */
	for (unsigned c = 0; c < jobs; c++) {
		int pipefd[2];

		if (pipe(pipefd)) {
			rc = ps_error_set(err, PS_EIO, "cannot start sweep jobs: %s", strerror(errno));
			break;
		}
		pids[c] = fork();
		if (pids[c] < 0) {
			close(pipefd[0]);
			close(pipefd[1]);
			rc = ps_error_set(err, PS_EIO, "cannot start sweep jobs: %s", strerror(errno));
			break;
		}
		if (pids[c] == 0) {
			worker_start(parent, jobs);
			close(pipefd[0]);
			for (unsigned q = 0; q < c; q++)
				close(fds[q].fd);
			for (size_t k = c; k < j->run_count; k += jobs) {
				struct message m;
				const char *p = (const char *)&m;
				size_t left = sizeof(m);

				compute(j, k);
				memset(&m, 0, sizeof(m));
				m.index = j->indices[k];
				m.row = j->rows[j->indices[k]];
				while (left) {
					ssize_t w = write(pipefd[1], p, left);

					if (w < 0 && errno == EINTR)
						continue;
					if (w <= 0)
						_exit(3);
					p += w;
					left -= (size_t)w;
				}
			}
			_exit(0);
		}
		close(pipefd[1]);
		fds[c].fd = pipefd[0];
		fds[c].events = POLLIN;
		filled[c] = 0;
		started++;
	}
	open_count = started;
	while (open_count) {
		if (poll(fds, started, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = ps_error_set(err, PS_EIO, "sweep: %s", strerror(errno));
			break;
		}
		for (unsigned c = 0; c < started; c++) {
			ssize_t got;

			if (fds[c].fd < 0 || !(fds[c].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(fds[c].fd, (char *)&msg[c] + filled[c], sizeof(msg[c]) - filled[c]);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(fds[c].fd);
				fds[c].fd = -1;
				open_count--;
				continue;
			}
			filled[c] += (size_t)got;
			if (filled[c] == sizeof(msg[c])) {
				if (msg[c].index < j->total)
					j->rows[msg[c].index] = msg[c].row;
				filled[c] = 0;
				show_progress(j->spec, ++done, j->run_count, &msg[c].row);
			}
		}
	}
	for (unsigned c = 0; c < started; c++) {
		int status;

		while (waitpid(pids[c], &status, 0) < 0 && errno == EINTR)
			;
		if (!rc && (!WIFEXITED(status) || WEXITSTATUS(status)))
			rc = ps_error_set(err, PS_EIO, "a sweep job failed (status %d)", status);
	}
	if (!rc && done != j->run_count)
		rc = ps_error_set(err, PS_EIO, "a sweep job ended early: %zu of %zu runs came back",
				  done, j->run_count);
	return rc;
}

int ps_sweep_run(const struct ps_sweep_spec *spec, struct ps_sweep_row **rows,
		 size_t *count, struct ps_error *err)
{
	uint64_t values[PS_SWEEP_MAX_POINTS];
	size_t points = ps_sweep_points(&spec->range, values, PS_SWEEP_MAX_POINTS);
	size_t total = points * spec->label_count, kept = 0;
	struct job j = { .spec = spec, .values = values };
	unsigned jobs = spec->jobs;
	int rc = ps_sweep_check(spec, err);

	*rows = NULL;
	*count = 0;
	if (rc)
		return rc;
	j.rows = calloc(total ? total : 1, sizeof(*j.rows));
	j.indices = calloc(total ? total : 1, sizeof(*j.indices));
	if (!j.rows || !j.indices) {
		free(j.rows);
		free(j.indices);
		return ps_error_set(err, PS_ENOMEM, "out of memory for the sweep");
	}
	for (size_t k = 0; k < total; k++)
		if (!spec->shards || (k / spec->label_count) % spec->shards == spec->shard)
			j.indices[kept++] = k;
	j.run_count = kept;
	j.total = total;
	if (!jobs) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);

		jobs = cores > 0 ? (unsigned)cores : 1;
	}
	jobs = (unsigned)ps_min_u64(ps_min_u64(jobs, 64), kept ? kept : 1);
	if (jobs <= 1) {
		for (size_t k = 0; k < kept; k++) {
			compute(&j, k);
			show_progress(spec, k + 1, kept, &j.rows[j.indices[k]]);
		}
	} else if ((rc = run_parallel(&j, jobs, err))) {
		free(j.rows);
		free(j.indices);
		return rc;
	}
	/* the shard's rows only, in order */
	for (size_t k = 0; k < kept; k++)
		j.rows[k] = j.rows[j.indices[k]];
	free(j.indices);
	*rows = j.rows;
	*count = kept;
	return PS_OK;
}

/* ---- CSV ---------------------------------------------------------------- */

static const char csv_header[] =
	"dag,n,d,g,M,strategy,valid,loads,saves,io,predicted_io,peak_red,lower,upper,seconds,label,simulated,swept,value,why";

/* Four columns after the first twenty, empty without values; a CSV of
 * twenty columns (written before them) is read as without values, one of
 * twenty-two (before eta and the bound) as without those two. */
static const char csv_values_header[] = ",error_vs_direct,epsilon";
static const char csv_bound_header[] = ",eta,bound";

/* A number of the values' columns: empty where negative (none). */
static void csv_optional(FILE *out, double v)
{
	fputc(',', out);
	if (v >= 0)
		fprintf(out, "%.6e", v);
}

/*
 * Then two columns for each array, its loads and saves (from the engine,
 * or from the cost model in a row that was not simulated), in this order
 * of kinds; empty for an array that is not in the row's DAG, or in a row
 * that did not run. A CSV without them (written before them) is read as
 * without a breakdown.
 */
static const char csv_arrays_header[] =
	",Q_loads,Q_saves,K_loads,K_saves,V_loads,V_saves,U1_loads,U1_saves,"
	"U2_loads,U2_saves,H_loads,H_saves,N_loads,N_saves,S_loads,S_saves,"
	"E_loads,E_saves,O_loads,O_saves,A_loads,A_saves";
static const enum ps_kind csv_arrays[] = {
	PS_KIND_Q, PS_KIND_K, PS_KIND_V, PS_KIND_U1, PS_KIND_U2, PS_KIND_H,
	PS_KIND_N, PS_KIND_S, PS_KIND_E, PS_KIND_O, PS_KIND_A,
};
#define CSV_ARRAYS (sizeof(csv_arrays) / sizeof(csv_arrays[0]))

/*
 * Then two columns, the sweep the row is of (its identity, below, with
 * semicolons for commas) and its shard, "K/N" or "partial"; both empty for
 * a row of no known sweep. A CSV without them (written before them) has
 * its identity on a line before its header, or none.
 */
static const char csv_identity_header[] = ",sweep,shard";

/* Decoding (MODEL.md section 8), before the sweep and shard and only in a
 * sweep that decodes: the prompt's length, the tokens generated and the
 * I/O per token. */
static const char csv_decode_header[] = ",decode,tokens,io_per_token";

/* Text in one field that no reader must unquote: no field is quoted, so
 * that even a reader that splits every line at its commas (numpy's
 * genfromtxt) reads it. Commas become semicolons, double quotes single
 * ones, line ends spaces. */
static void csv_text(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ',' ? ';' : *s == '"' ? '\'' : *s == '\n' || *s == '\r' ? ' ' : *s, out);
}

/* ---- the identity of a sweep, and the checks of --merge ------------------ */

static const char identity_prefix[] = "# pebblesim sweep: ";

void ps_sweep_identity_of(const struct ps_sweep_spec *spec,
			  struct ps_sweep_identity *id)
{
	const struct ps_sweep_range *r = &spec->range;
	const struct {
		char letter;
		uint64_t value;
	} fixed[] = { { 'n', spec->n }, { 'd', spec->d }, { 'g', spec->g }, { 'M', spec->M } };
	char *p = id->sweep;
	size_t left = sizeof(id->sweep);
	int used;

#define IDENTITY_ADD(...) \
	do { \
		used = snprintf(p, left, __VA_ARGS__); \
		if (used > 0 && (size_t)used < left) { \
			p += used; \
			left -= (size_t)used; \
		} \
	} while (0)
	memset(id, 0, sizeof(*id));
	p = id->sweep;
	IDENTITY_ADD("param=%c range=%llu:%llu:%c%llu", r->param, (unsigned long long)r->lo,
		     (unsigned long long)r->hi, r->geometric ? 'x' : '+',
		     (unsigned long long)r->step);
	for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++)
		if (fixed[k].letter != r->param)
			IDENTITY_ADD(" %c=%llu", fixed[k].letter, (unsigned long long)fixed[k].value);
	IDENTITY_ADD(" normalize=%s", spec->normalize ? "true" : "false");
	/* only when set: the identity of every other sweep stays as it was */
	if (spec->causal)
		IDENTITY_ADD(" causal=true");
	if (spec->decode && r->param != 'P')
		IDENTITY_ADD(" decode=%llu", (unsigned long long)spec->decode);
	IDENTITY_ADD(" strategies=");
	for (size_t k = 0; k < spec->label_count; k++)
		IDENTITY_ADD("%s%s", k ? "," : "", spec->labels[k]);
	IDENTITY_ADD(" predict=%s", spec->predict ? "true" : "false");
	if (spec->values)
		IDENTITY_ADD(" values=true seed=%llu entry_bound=%.17g polynomial=%s interval=%.17g",
			     (unsigned long long)spec->inputs.seed, spec->inputs.entry_bound,
			     ps_polynomial_name(spec->inputs.polynomial), spec->inputs.interval);
	else
		IDENTITY_ADD(" values=false");
#undef IDENTITY_ADD
	id->present = true;
	id->shard = spec->shards ? spec->shard : 0;
	id->shards = spec->shards ? spec->shards : 1;
}

/* Reads "... shard=K/N" after the prefix; false when it is not one. */
static bool identity_parse(const char *line, struct ps_sweep_identity *id)
{
	const char *shard = strstr(line, " shard=");
	size_t len = shard ? (size_t)(shard - line) : 0;
	unsigned k, n;

	memset(id, 0, sizeof(*id));
	if (!shard || len >= sizeof(id->sweep))
		return false;
	for (const char *c = line; c < shard; c++)
		if ((unsigned char)*c < ' ' || *c == 0x7f)
			return false;
	memcpy(id->sweep, line, len);
	id->sweep[len] = '\0';
	shard += strlen(" shard=");
	if (!strncmp(shard, "partial", 7) && strspn(shard + 7, "\r\n") == strlen(shard + 7)) {
		id->shards = 0;
	} else {
		int end = 0;

		if (sscanf(shard, "%u/%u%n", &k, &n, &end) != 2 || k < 1 || k > n || n > 65536 ||
		    strspn(shard + end, "\r\n") != strlen(shard + end))
			return false;
		id->shard = k - 1;
		id->shards = n;
	}
	id->present = true;
	return true;
}

/* "shard 3/4" or "a partial merge": what a file holds of its sweep. */
static void identity_part(const struct ps_sweep_identity *id, char *buf, size_t len)
{
	if (id->shards)
		snprintf(buf, len, "shard %u/%u", id->shard + 1, id->shards);
	else
		snprintf(buf, len, "a partial merge");
}

/*
 * The grid a sweep's identity declares: its swept parameter and points,
 * its fixed parameters and its labels, every row of it checked against
 * them, and every point of it looked for by --merge.
 */
struct sweep_grid {
	struct ps_sweep_range range;
	uint64_t values[PS_SWEEP_MAX_POINTS];
	size_t points;
	uint64_t fixed[5]; /* n, d, g, M and decoding's P; the swept one unused */
	bool causal;
	char text[PS_SWEEP_IDENTITY_MAX];
	const char *labels[PS_SWEEP_MAX_STRATEGIES];
	size_t label_count;
};

/* the swept parameter's letters; P, decoding's prompt length, is the word
 * "decode=" where it is fixed */
static const char grid_letters[] = "ndgMP";

/* The grid of an identity's text (its words "param=", "range=", "n=", ...,
 * "strategies="); false when it has none this pebblesim reads. */
static bool grid_parse(const char *sweep, struct sweep_grid *g)
{
	char *save = NULL, *strategies = NULL, range[128] = "";
	char param = 0;
	unsigned have = 0;
	struct ps_error ignored;

	memset(g, 0, sizeof(*g));
	snprintf(g->text, sizeof(g->text), "%s", sweep);
	for (char *w = strtok_r(g->text, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		const char *letter = w[0] && w[1] == '=' ? strchr(grid_letters, w[0]) : NULL;

		if (!strncmp(w, "param=", 6) && strlen(w) == 7 && strchr(grid_letters, w[6]))
			param = w[6];
		else if (!strncmp(w, "range=", 6))
			snprintf(range, sizeof(range), "%s", w + 6);
		else if (!strncmp(w, "strategies=", 11))
			strategies = w + 11;
		else if (!strcmp(w, "causal=true"))
			g->causal = true;
		else if (!strncmp(w, "decode=", 7) && !ps_parse_size(w + 7, &g->fixed[4]))
			have |= 1u << 4;
		else if (letter && *letter && !ps_parse_size(w + 2, &g->fixed[letter - grid_letters]))
			have |= 1u << (letter - grid_letters);
	}
	if (!param || !strategies || ps_sweep_range_parse(param, range, &g->range, &ignored) ||
	    ((have | 1u << (strchr(grid_letters, param) - grid_letters)) & 15) != 15)
		return false;
	g->points = ps_sweep_points(&g->range, g->values, PS_SWEEP_MAX_POINTS);
	for (char *l = strtok_r(strategies, ",", &save); l; l = strtok_r(NULL, ",", &save)) {
		if (g->label_count == PS_SWEEP_MAX_STRATEGIES)
			return false;
		g->labels[g->label_count++] = l;
	}
	return g->label_count > 0;
}

/* The index of value among the grid's points, or SIZE_MAX. */
static size_t grid_point(const struct sweep_grid *g, uint64_t value)
{
	size_t lo = 0, hi = g->points;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->values[mid] < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->points && g->values[lo] == value ? lo : SIZE_MAX;
}

static size_t grid_label(const struct sweep_grid *g, const char *label)
{
	for (size_t k = 0; k < g->label_count; k++)
		if (!strcmp(g->labels[k], label))
			return k;
	return SIZE_MAX;
}

/* Is row r one of the grid's, in the shard id names? PS_EINPUT naming the
 * line when not. */
static int grid_check_row(const struct sweep_grid *g, const struct ps_sweep_identity *id,
			  const struct ps_sweep_row *r, const char *name, size_t lineno,
			  struct ps_error *err)
{
	size_t point = grid_point(g, r->value);

	if (r->swept != g->range.param)
		return ps_error_set(err, PS_EINPUT, "%s:%zu: the row sweeps %c, its sweep %c",
				    name, lineno, r->swept, g->range.param);
	if (point == SIZE_MAX)
		return ps_error_set(err, PS_EINPUT,
				    "%s:%zu: %c = %llu is not a point of its sweep's range %llu:%llu:%c%llu",
				    name, lineno, r->swept, (unsigned long long)r->value,
				    (unsigned long long)g->range.lo, (unsigned long long)g->range.hi,
				    g->range.geometric ? 'x' : '+', (unsigned long long)g->range.step);
	if (grid_label(g, r->label) == SIZE_MAX)
		return ps_error_set(err, PS_EINPUT, "%s:%zu: the label '%s' is not among its sweep's strategies",
				    name, lineno, r->label);
	if (id->shards > 1 && point % id->shards != id->shard)
		return ps_error_set(err, PS_EINPUT, "%s:%zu: %c = %llu is a point of shard %zu/%u, not of this file's %u/%u",
				    name, lineno, r->swept, (unsigned long long)r->value,
				    point % id->shards + 1, id->shards, id->shard + 1, id->shards);
	return PS_OK;
}

/* Marks in seen (points x labels) the grid's (point, label) of each row;
 * returns how many of the grid's are not seen. */
static size_t grid_missing(const struct sweep_grid *g, const struct ps_sweep_row *rows,
			   size_t count, unsigned char *seen)
{
	size_t missing = g->points * g->label_count;

	for (size_t k = 0; k < count; k++) {
		size_t p = rows[k].swept == g->range.param ? grid_point(g, rows[k].value) : SIZE_MAX;
		size_t l = p == SIZE_MAX ? SIZE_MAX : grid_label(g, rows[k].label);

		if (l != SIZE_MAX && !seen[p * g->label_count + l]) {
			seen[p * g->label_count + l] = 1;
			missing--;
		}
	}
	return missing;
}

static int points_missing(const struct sweep_grid *g, const struct ps_sweep_row *rows,
			  size_t count, bool partial, struct ps_error *err);

/* The why of a row that a partial merge adds for a point no file held
 * (ps_sweep_merge_fill); read back, such a row is left out, and added
 * again if the point is still missing. */
static const char merge_missing_why[] = "in none of the files merged (--partial)";

int ps_sweep_merge_check(const char *const *files, const struct ps_sweep_identity *ids,
			 size_t file_count, const struct ps_sweep_row *rows,
			 size_t count, bool partial, struct ps_sweep_identity *merged,
			 struct ps_error *err)
{
	const struct ps_sweep_identity *first = NULL, *split = NULL;
	size_t first_file = 0, split_file = 0, missing = 0, expected_points = SIZE_MAX;
	struct sweep_grid *grid = NULL;
	int rc = 0;
	unsigned char *seen = NULL;
	char missing_text[128] = "";
	bool partial_input = false;

	memset(merged, 0, sizeof(*merged));
	for (size_t k = 0; k < file_count; k++) {
		if (!ids[k].present) {
			/* a header with the identity's columns and no row: a shard
			 * of no point, or one cut to its header, brings nothing
			 * (the shards and points missing are found below) */
			if (file_count > 1 && !partial && !ids[k].rowless)
				return ps_error_set(err, PS_EINPUT,
						    "%s records no sweep (no sweep and shard in its rows, no '# pebblesim sweep:' line: an older pebblesim or a hand-written CSV): its rows cannot be checked against the others' (--partial merges it anyway)",
						    files[k]);
			continue;
		}
		if (!ids[k].shards) {
			if (!partial)
				return ps_error_set(err, PS_EINPUT,
						    "%s is a partial merge: --partial merges it again", files[k]);
			partial_input = true;
		}
		if (!first) {
			first = &ids[k];
			first_file = k;
		} else if (strcmp(ids[k].sweep, first->sweep)) {
			const char *x = first->sweep, *y = ids[k].sweep;
			size_t at = 0;

			while (x[at] && x[at] == y[at])
				at++;
			while (at && x[at - 1] != ' ')
				at--;
			return ps_error_set(err, PS_EINPUT,
					    "%s and %s are different sweeps: '%.*s' against '%.*s'",
					    files[first_file], files[k], (int)strcspn(x + at, " "), x + at,
					    (int)strcspn(y + at, " "), y + at);
		}
		if (!ids[k].shards)
			continue;
		if (!split) {
			split = &ids[k];
			split_file = k;
		} else if (ids[k].shards != split->shards) {
			return ps_error_set(err, PS_EINPUT,
					    "%s and %s split the sweep differently: %u shards against %u",
					    files[split_file], files[k], split->shards, ids[k].shards);
		}
	}
	if (first) {
		*merged = *first;
		merged->shard = 0;
		merged->shards = partial_input ? 0 : 1;
		grid = malloc(sizeof(*grid));
		if (!grid)
			return ps_error_set(err, PS_ENOMEM, "out of memory for the merge");
		if (!grid_parse(first->sweep, grid)) {
			free(grid);
			return ps_error_set(err, PS_EINPUT, "%s: its sweep's identity names no grid this pebblesim reads (param, range, n, d, g, M, strategies)",
					    files[first_file]);
		}
		expected_points = grid->points;
	}
	if (split && split->shards > 1) {
		seen = calloc(split->shards, sizeof(*seen));
		if (!seen) {
			free(grid);
			return ps_error_set(err, PS_ENOMEM, "out of memory for the merge");
		}
		for (size_t k = 0; k < file_count; k++) {
			if (!ids[k].present || !ids[k].shards)
				continue;
			if (seen[ids[k].shard]) {
				size_t other = 0;
				char part[48];

				while (!ids[other].present || ids[other].shard != ids[k].shard ||
				       !ids[other].shards)
					other++;
				free(seen);
				free(grid);
				identity_part(&ids[k], part, sizeof(part));
				return ps_error_set(err, PS_EINPUT, "%s is given twice: %s and %s",
						    part, files[other], files[k]);
			}
			seen[ids[k].shard] = 1;
		}
		/* a shard of no point (more shards than points) holds no row,
		 * and its file none to name it by */
		for (unsigned s = 0; s < split->shards; s++)
			if (!seen[s] && s < expected_points && missing++ < 8) {
				size_t used = strlen(missing_text);

				snprintf(missing_text + used, sizeof(missing_text) - used, "%s%u/%u",
					 used ? ", " : "", s + 1, split->shards);
			}
		free(seen);
		/* with a partial merge among the files, the rows tell */
		if (missing && !partial) {
			free(grid);
			return ps_error_set(err, PS_EINPUT,
					    "shard%s %s%s of the sweep %s missing: merge %s too, or --partial for a partial merge",
					    missing > 1 ? "s" : "", missing_text, missing > 8 ? ", ..." : "",
					    missing > 1 ? "are" : "is", missing > 1 ? "them" : "it");
		}
		if (missing && !partial_input)
			merged->shards = 0;
	}
	/* sorted: the rows of one point and label are neighbours */
	for (size_t k = 1; k < count; k++)
		if (rows[k].value == rows[k - 1].value && rows[k].swept == rows[k - 1].swept &&
		    !strcmp(rows[k].label, rows[k - 1].label)) {
			free(grid);
			return ps_error_set(err, PS_EINPUT,
					    "the point %c = %llu of %s is in more than one row (a file given twice?)",
					    rows[k].swept, (unsigned long long)rows[k].value, rows[k].label);
		}
	/* every point of the grid, of every label, in some row: a shard cut
	 * short (head -n 2) holds the identity and fewer rows */
	if (grid && (rc = points_missing(grid, rows, count, partial, err)) > 0)
		merged->shards = 0;
	free(grid);
	return rc < 0 ? rc : PS_OK;
}

/* How many of the grid's (point, label) no row holds: PS_EINPUT without
 * partial, naming the first of them. */
static int points_missing(const struct sweep_grid *g, const struct ps_sweep_row *rows,
			  size_t count, bool partial, struct ps_error *err)
{
	unsigned char *seen = calloc(g->points * g->label_count + 1, 1);
	char text[256] = "";
	size_t missing, named = 0;

	if (!seen)
		return ps_error_set(err, PS_ENOMEM, "out of memory for the merge");
	missing = grid_missing(g, rows, count, seen);
	for (size_t p = 0; missing && !partial && p < g->points && named < 4; p++)
		for (size_t l = 0; l < g->label_count && named < 4; l++)
			if (!seen[p * g->label_count + l]) {
				size_t used = strlen(text);

				snprintf(text + used, sizeof(text) - used, "%s%c = %llu of %s",
					 named++ ? ", " : "", g->range.param,
					 (unsigned long long)g->values[p], g->labels[l]);
			}
	free(seen);
	if (missing && !partial)
		return ps_error_set(err, PS_EINPUT,
				    "%zu of the sweep's %zu rows (%zu points x %zu strategies) are in no file (%s%s): a shard missing or cut short; merge all of it, or --partial marks them not run",
				    missing, g->points * g->label_count, g->points, g->label_count, text,
				    missing > named ? ", ..." : "");
	return missing > (size_t)INT32_MAX ? INT32_MAX : (int)missing;
}

int ps_sweep_merge_fill(struct ps_sweep_row **rows, size_t *count,
			const struct ps_sweep_identity *merged, struct ps_error *err)
{
	struct sweep_grid *g;
	unsigned char *seen;
	struct ps_sweep_row *grown;
	size_t missing, used = *count;

	if (!merged->present)
		return PS_OK;
	g = malloc(sizeof(*g));
	if (!g || !grid_parse(merged->sweep, g)) {
		free(g);
		return g ? PS_OK : ps_error_set(err, PS_ENOMEM, "out of memory for the merge");
	}
	seen = calloc(g->points * g->label_count + 1, 1);
	missing = seen ? grid_missing(g, *rows, *count, seen) : 0;
	grown = seen && missing ? realloc(*rows, (*count + missing) * sizeof(**rows)) : *rows;
	if (!seen || !grown) {
		free(seen);
		free(g);
		return ps_error_set(err, PS_ENOMEM, "out of memory for the merge");
	}
	*rows = grown;
	for (size_t p = 0; missing && p < g->points; p++)
		for (size_t l = 0; l < g->label_count; l++) {
			const struct ps_strategy *s = ps_strategy_find(g->labels[l]);
			bool exact = s && (s->flags & PS_STRATEGY_EXACT);
			struct ps_sweep_row *r = &grown[used];
			uint64_t *at[5];

			if (seen[p * g->label_count + l])
				continue;
			memset(r, 0, sizeof(*r));
			snprintf(r->label, sizeof(r->label), "%s", g->labels[l]);
			snprintf(r->strategy, sizeof(r->strategy), "%s", g->labels[l]);
			snprintf(r->dag, sizeof(r->dag), "%s", exact ? "exact-attention" : "approx-attention");
			at[0] = &r->n;
			at[1] = &r->d;
			at[2] = &r->g;
			at[3] = &r->M;
			at[4] = &r->decode;
			for (size_t q = 0; q < 5; q++)
				*at[q] = grid_letters[q] == g->range.param ? g->values[p] : g->fixed[q];
			if (exact)
				r->g = 0;
			r->causal = g->causal;
			r->swept = g->range.param;
			r->value = g->values[p];
			r->upper = -1;
			snprintf(r->why, sizeof(r->why), "%s", merge_missing_why);
			used++;
		}
	*count = used;
	free(seen);
	free(g);
	ps_sweep_sort(*rows, *count);
	return PS_OK;
}

/* "K/N", or "partial" for a partial merge: the shard column. */
static void shard_value(const struct ps_sweep_identity *id, char *buf, size_t len)
{
	if (id->shards)
		snprintf(buf, len, "%u/%u", id->shard + 1, id->shards);
	else
		snprintf(buf, len, "partial");
}

int ps_sweep_write_csv(FILE *out, const struct ps_sweep_row *rows, size_t count)
{
	return ps_sweep_write_csv_identity(out, NULL, rows, count);
}

int ps_sweep_write_csv_identity(FILE *out, const struct ps_sweep_identity *id,
				const struct ps_sweep_row *rows, size_t count)
{
	char shard[32] = "";
	bool decoding = false;

	if (id && id->present)
		shard_value(id, shard, sizeof(shard));
	for (size_t k = 0; k < count; k++)
		decoding |= rows[k].decode > 0;
	fprintf(out, "%s%s%s%s%s%s\n", csv_header, csv_values_header, csv_bound_header,
		csv_arrays_header, decoding ? csv_decode_header : "", csv_identity_header);
	for (size_t k = 0; k < count; k++) {
		const struct ps_sweep_row *r = &rows[k];

		fprintf(out, "%s,%llu,%llu,%llu,%llu,%s,", r->dag, (unsigned long long)r->n,
			(unsigned long long)r->d, (unsigned long long)r->g,
			(unsigned long long)r->M, r->strategy);
		if (r->ran)
			fprintf(out, "%s,%llu,%llu,%llu,%llu,%llu,%.0f,", r->simulated ?
				(r->valid ? "true" : "false") : "",
				(unsigned long long)r->loads, (unsigned long long)r->saves,
				(unsigned long long)r->io, (unsigned long long)r->predicted_io,
				(unsigned long long)r->peak_red, r->lower);
		else
			fputs(",,,,,,,", out);
		if (r->ran && r->upper >= 0)
			fprintf(out, "%.0f", r->upper);
		fprintf(out, ",%.3f,%s,%s,", r->seconds, r->label, r->simulated ? "true" : "false");
		fprintf(out, "%c,%llu,", r->swept, (unsigned long long)r->value);
		csv_text(out, r->why);
		if (r->has_values) {
			fprintf(out, ",%.6e", r->error_vs_direct);
			csv_optional(out, r->epsilon);
			csv_optional(out, r->eta);
			csv_optional(out, r->bound);
		} else {
			fputs(",,,,", out);
		}
		for (size_t q = 0; q < CSV_ARRAYS; q++)
			if (r->ran && (r->arrays >> csv_arrays[q] & 1))
				fprintf(out, ",%llu,%llu",
					(unsigned long long)r->by_array[csv_arrays[q]].loads,
					(unsigned long long)r->by_array[csv_arrays[q]].saves);
			else
				fputs(",,", out);
		if (decoding && r->decode && r->n > r->decode)
			fprintf(out, ",%llu,%llu,%.2f", (unsigned long long)r->decode,
				(unsigned long long)(r->n - r->decode),
				r->ran ? (double)r->io / (double)(r->n - r->decode) : 0.0);
		else if (decoding)
			fputs(",,,", out);
		fputc(',', out);
		if (id && id->present)
			csv_text(out, id->sweep);
		fprintf(out, ",%s\n", shard);
	}
	return ferror(out) ? PS_EIO : PS_OK;
}

/* Splits one CSV line into at most max fields, in place. */
static size_t csv_split(char *line, char **fields, size_t max)
{
	size_t count = 0;
	char *w = line, *r = line;

	while (count < max) {
		fields[count++] = w;
		if (*r == '"') {
			r++;
			while (*r && !(*r == '"' && r[1] != '"'))
				*w++ = *r == '"' ? (r++, '"') : *r, r++;
			if (*r == '"')
				r++;
		} else {
			while (*r && *r != ',' && *r != '\n')
				*w++ = *r++;
		}
		if (*r != ',') {
			*w = '\0';
			break;
		}
		*w++ = '\0';
		r++;
	}
	return count;
}

static bool csv_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && !*end;
}

/*
 * The grammar of a row's names: a label or a strategy is a name of
 * [A-Za-z0-9_.+-], as pebblesim writes them; the DAG one of the two
 * kinds. No other text of a CSV reaches a plot, and no field holds a
 * control character (the table prints them). 0, or PS_EINPUT naming the
 * line, the column and the byte.
 */
static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("_.+-", c));
}

static int check_names(char *const *f, size_t nf, const char *name, size_t lineno,
		       struct ps_error *err)
{
	static const struct {
		size_t column;
		const char *what;
	} names[] = { { 5, "strategy" }, { 15, "label" } };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		const char *text = f[names[k].column];

		if (!*text)
			return ps_error_set(err, PS_EINPUT, "%s:%zu: the %s (column %zu) is empty",
					    name, lineno, names[k].what, names[k].column + 1);
		for (const char *c = text; *c; c++)
			if (!name_char(*c))
				return ps_error_set(err, PS_EINPUT,
						    "%s:%zu: the %s (column %zu) has byte 0x%02x, outside A-Z a-z 0-9 _ . + -",
						    name, lineno, names[k].what, names[k].column + 1,
						    (unsigned char)*c);
	}
	if (strcmp(f[0], "approx-attention") && strcmp(f[0], "exact-attention"))
		return ps_error_set(err, PS_EINPUT,
				    "%s:%zu: the dag (column 1) is approx-attention or exact-attention",
				    name, lineno);
	for (size_t k = 0; k < nf; k++)
		for (const char *c = f[k]; *c; c++)
			/* a carriage return may end the line (a CSV saved on Windows) */
			if (((unsigned char)*c < ' ' || *c == 0x7f) &&
			    !(*c == '\r' && k + 1 == nf && !c[1]))
				return ps_error_set(err, PS_EINPUT,
						    "%s:%zu: column %zu has the control character 0x%02x",
						    name, lineno, k + 1, (unsigned char)*c);
	return PS_OK;
}

/*
 * The loads and saves by array of a row from fields f (two a kind, in the
 * order of csv_arrays): both empty, or both counts; they add up to the
 * row's loads and saves. 0, or PS_EINPUT naming the line.
 */
static int csv_by_array(char *const *f, struct ps_sweep_row *r, const char *name,
			size_t lineno, struct ps_error *err)
{
	uint64_t loads = 0, saves = 0;

	for (size_t q = 0; q < CSV_ARRAYS; q++) {
		struct ps_array_io *io = &r->by_array[csv_arrays[q]];

		if (!*f[2 * q] && !*f[2 * q + 1])
			continue;
		if (!r->ran || !csv_u64(f[2 * q], &io->loads) || !csv_u64(f[2 * q + 1], &io->saves) ||
		    io->loads > UINT64_MAX - loads || io->saves > UINT64_MAX - saves)
			return ps_error_set(err, PS_EINPUT, "%s:%zu: the %s loads and saves (columns %zu and %zu) are not two counts of a row that ran",
					    name, lineno, ps_kinds[csv_arrays[q]].name,
					    23 + 2 * q, 24 + 2 * q);
		r->arrays |= UINT32_C(1) << csv_arrays[q];
		loads += io->loads;
		saves += io->saves;
	}
	if (r->arrays && (loads != r->loads || saves != r->saves))
		return ps_error_set(err, PS_EINPUT, "%s:%zu: the loads and saves by array add up to %llu and %llu, not to the row's %llu and %llu",
				    name, lineno, (unsigned long long)loads, (unsigned long long)saves,
				    (unsigned long long)r->loads, (unsigned long long)r->saves);
	return PS_OK;
}

int ps_sweep_read_csv(FILE *in, const char *name, struct ps_sweep_row **rows,
		      size_t *count, char *param, struct ps_error *err)
{
	return ps_sweep_read_csv_identity(in, name, rows, count, param, NULL, err);
}

enum { LINE_OK, LINE_END, LINE_LONG, LINE_NUL };

/* One line of at most size - 1 bytes into buf, its newline kept; *nul
 * the offset of its first NUL byte. LINE_END at the end of the file. */
static int csv_getline(FILE *in, char *buf, size_t size, size_t *nul)
{
	size_t len = 0;
	int c = EOF;

	*nul = SIZE_MAX;
	flockfile(in);
	while ((c = getc_unlocked(in)) != EOF) {
		if (len + 1 >= size) {
			funlockfile(in);
			return LINE_LONG;
		}
		if (!c && *nul == SIZE_MAX)
			*nul = len;
		buf[len++] = (char)c;
		if (c == '\n')
			break;
	}
	funlockfile(in);
	buf[len] = '\0';
	if (!len)
		return LINE_END;
	return *nul == SIZE_MAX ? LINE_OK : LINE_NUL;
}

/* Line lineno of the file, or why not: PS_OK, 1 at its end (an error
 * when the file could not be read), PS_EINPUT. */
static int csv_next(FILE *in, char *buf, size_t size, const char *name, size_t lineno,
		    struct ps_error *err)
{
	size_t nul;

	switch (csv_getline(in, buf, size, &nul)) {
	case LINE_OK:
		return PS_OK;
	case LINE_LONG:
		return ps_error_set(err, PS_EINPUT, "%s:%zu: the line is longer than %zu bytes", name,
				    lineno, size - 2);
	case LINE_NUL:
		return ps_error_set(err, PS_EINPUT, "%s:%zu: the line has a NUL byte (byte %zu): not a CSV of text",
				    name, lineno, nul + 1);
	default:
		if (ferror(in))
			return ps_error_set(err, PS_EIO, "cannot read '%s': %s", name, strerror(errno));
		return 1;
	}
}

/* A real number of column k: finite, the whole field (an empty one is
 * dflt). 0, or PS_EINPUT naming the line and the column. */
static int csv_real(char *const *f, size_t k, const char *what, double dflt, double *out,
		    const char *name, size_t lineno, struct ps_error *err)
{
	char *end;

	if (!*f[k]) {
		*out = dflt;
		return PS_OK;
	}
	errno = 0;
	*out = strtod(f[k], &end);
	if (end == f[k] || *end || !isfinite(*out) || (errno == ERANGE && *out != 0))
		return ps_error_set(err, PS_EINPUT, "%s:%zu: the %s (column %zu) is '%.40s', not a finite number",
				    name, lineno, what, k + 1, f[k]);
	return PS_OK;
}

/* The identity of a row from its columns sweep and shard (commas written
 * as semicolons): false when they are not one. */
static bool row_identity(const char *sweep, const char *shard, struct ps_sweep_identity *id)
{
	char text[PS_SWEEP_IDENTITY_MAX + 64];
	int used = snprintf(text, sizeof(text), "%s shard=%s", sweep, shard);

	if (used < 0 || (size_t)used >= sizeof(text))
		return false;
	for (char *c = text; *c; c++)
		if (*c == ';')
			*c = ',';
	return identity_parse(text, id);
}

static bool same_identity(const struct ps_sweep_identity *x, const struct ps_sweep_identity *y)
{
	return x->present == y->present && !strcmp(x->sweep, y->sweep) && x->shard == y->shard &&
	       x->shards == y->shards;
}

int ps_sweep_read_csv_identity(FILE *in, const char *name, struct ps_sweep_row **rows,
			       size_t *count, char *param,
			       struct ps_sweep_identity *id, struct ps_error *err)
{
	char line[4096], *f[54];
	bool values_columns, bound_columns, arrays_columns, decode_columns, identity_columns;
	size_t cap = *count, used = *count, lineno = 1, columns, at, id_line = 0, decode_at;
	struct ps_sweep_identity ignored, row_id;
	struct sweep_grid *grid = NULL;
	int rc;

	if (!id)
		id = &ignored;
	memset(id, 0, sizeof(*id));
	if ((rc = csv_next(in, line, sizeof(line), name, lineno, err)))
		return rc > 0 ? ps_error_set(err, PS_EINPUT, "%s: not a pebblesim sweep CSV (it is empty)", name) : rc;
	if (!strncmp(line, identity_prefix, strlen(identity_prefix))) {
		/* the format before the identity's columns: read as it was */
		if (!strchr(line, '\n') || !identity_parse(line + strlen(identity_prefix), id))
			return ps_error_set(err, PS_EINPUT,
					    "%s:1: not a sweep's identity ('# pebblesim sweep: ... shard=K/N')", name);
		id->legacy = true;
		id_line = lineno++;
		if ((rc = csv_next(in, line, sizeof(line), name, lineno, err)) < 0)
			return rc;
		if (rc)
			line[0] = '\0';
	}
	if (strncmp(line, csv_header, strlen(csv_header)))
		return ps_error_set(err, PS_EINPUT, "%s:%zu: not a pebblesim sweep CSV (its header differs)",
				    name, lineno);
	/* the values' columns, then eta and bound, then the arrays', then
	 * decoding's (only in a sweep that decodes), then the identity's: a
	 * CSV written before a group of them has none of that group */
	at = strlen(csv_header);
	values_columns = !strncmp(line + at, csv_values_header, strlen(csv_values_header));
	at += values_columns ? strlen(csv_values_header) : 0;
	bound_columns = values_columns && !strncmp(line + at, csv_bound_header, strlen(csv_bound_header));
	at += bound_columns ? strlen(csv_bound_header) : 0;
	arrays_columns = values_columns && !strncmp(line + at, csv_arrays_header, strlen(csv_arrays_header));
	at += arrays_columns ? strlen(csv_arrays_header) : 0;
	decode_columns = arrays_columns && !strncmp(line + at, csv_decode_header,
						    strlen(csv_decode_header));
	at += decode_columns ? strlen(csv_decode_header) : 0;
	identity_columns = arrays_columns && !strncmp(line + at, csv_identity_header,
						       strlen(csv_identity_header));
	columns = 20 + (values_columns ? 2 : 0) + (bound_columns ? 2 : 0) +
		  (arrays_columns ? 2 * CSV_ARRAYS : 0) + (decode_columns ? 3 : 0) +
		  (identity_columns ? 2 : 0);
	decode_at = columns - 3 - (identity_columns ? 2 : 0);
	while (!(rc = csv_next(in, line, sizeof(line), name, ++lineno, err))) {
		struct ps_sweep_row r;
		size_t nf;

		nf = csv_split(line, f, 54);
		memset(&r, 0, sizeof(r));
		if (nf != columns || !csv_u64(f[1], &r.n) || !csv_u64(f[2], &r.d) ||
		    !csv_u64(f[3], &r.g) || !csv_u64(f[4], &r.M) || !csv_u64(f[18], &r.value) ||
		    strlen(f[0]) >= sizeof(r.dag) || strlen(f[5]) >= sizeof(r.strategy) ||
		    strlen(f[15]) >= sizeof(r.label)) {
			rc = ps_error_set(err, PS_EINPUT, "%s:%zu: not a sweep row", name, lineno);
			break;
		}
		if ((rc = check_names(f, nf, name, lineno, err)))
			break;
		strcpy(r.dag, f[0]);
		strcpy(r.strategy, f[5]);
		strcpy(r.label, f[15]);
		snprintf(r.why, sizeof(r.why), "%s", f[19]);
		r.simulated = !strcmp(f[16], "true");
		r.ran = csv_u64(f[9], &r.io);
		if (r.ran && (!csv_u64(f[7], &r.loads) || !csv_u64(f[8], &r.saves) ||
			      !csv_u64(f[10], &r.predicted_io) || !csv_u64(f[11], &r.peak_red))) {
			rc = ps_error_set(err, PS_EINPUT, "%s:%zu: not a sweep row", name, lineno);
			break;
		}
		r.valid = !strcmp(f[6], "true");
		if ((rc = csv_real(f, 12, "lower", 0, &r.lower, name, lineno, err)) ||
		    (rc = csv_real(f, 13, "upper", -1, &r.upper, name, lineno, err)) ||
		    (rc = csv_real(f, 14, "seconds", 0, &r.seconds, name, lineno, err)))
			break;
		if (arrays_columns &&
		    (rc = csv_by_array(f + 22 + (bound_columns ? 2 : 0), &r, name, lineno, err)))
			break;
		if (decode_columns && *f[decode_at] && !csv_u64(f[decode_at], &r.decode)) {
			rc = ps_error_set(err, PS_EINPUT, "%s:%zu: not a sweep row", name, lineno);
			break;
		}
		if (values_columns && *f[20]) {
			r.has_values = true;
			if ((rc = csv_real(f, 20, "error_vs_direct", 0, &r.error_vs_direct, name, lineno, err)) ||
			    (rc = csv_real(f, 21, "epsilon", -1, &r.epsilon, name, lineno, err)))
				break;
			/* a CSV from before the columns eta and bound has neither */
			r.eta = r.bound = -1;
			if (bound_columns &&
			    ((rc = csv_real(f, 22, "eta", -1, &r.eta, name, lineno, err)) ||
			     (rc = csv_real(f, 23, "bound", -1, &r.bound, name, lineno, err))))
				break;
		}
		if (strlen(f[17]) != 1 || !strchr("ndgMP", f[17][0])) {
			rc = ps_error_set(err, PS_EINPUT, "%s:%zu: the swept parameter is n, d, g, M or P", name, lineno);
			break;
		}
		r.swept = f[17][0];
		if (*param && *param != r.swept) {
			rc = ps_error_set(err, PS_EINPUT, "%s:%zu: this row sweeps %c, the others %c",
					  name, lineno, r.swept, *param);
			break;
		}
		*param = r.swept;
		/* the row's sweep: the same on every row of the file */
		if (identity_columns) {
			memset(&row_id, 0, sizeof(row_id));
			if ((*f[columns - 2] || *f[columns - 1]) &&
			    !row_identity(f[columns - 2], f[columns - 1], &row_id)) {
				rc = ps_error_set(err, PS_EINPUT, "%s:%zu: the sweep and shard (columns %zu and %zu) are not a sweep's identity",
						  name, lineno, columns - 1, columns);
				break;
			}
			row_id.legacy = id->legacy;
			if (!id_line) {
				*id = row_id;
				id_line = lineno;
			} else if (!same_identity(&row_id, id)) {
				rc = ps_error_set(err, PS_EINPUT, "%s:%zu: the row's sweep or shard (columns %zu and %zu) differs from line %zu's: one file, one sweep",
						  name, lineno, columns - 1, columns, id_line);
				break;
			}
		}
		/* and a row of its grid */
		if (id->present && !grid) {
			grid = malloc(sizeof(*grid));
			if (!grid) {
				rc = ps_error_set(err, PS_ENOMEM, "out of memory for the sweep");
				break;
			}
			if (!grid_parse(id->sweep, grid)) {
				rc = ps_error_set(err, PS_EINPUT, "%s:%zu: its sweep's identity names no grid this pebblesim reads (param, range, n, d, g, M, strategies)",
						  name, id_line);
				break;
			}
		}
		if (grid && (rc = grid_check_row(grid, id, &r, name, lineno, err)))
			break;
		if (grid)
			r.causal = grid->causal;
		if (!r.ran && !strcmp(r.why, merge_missing_why))
			continue;
		if (used == cap) {
			struct ps_sweep_row *grown;

			cap = cap * 2 + 64;
			grown = realloc(*rows, cap * sizeof(**rows));
			if (!grown) {
				rc = ps_error_set(err, PS_ENOMEM, "out of memory for the sweep");
				break;
			}
			*rows = grown;
		}
		(*rows)[used++] = r;
		*count = used;
	}
	free(grid);
	id->rowless = identity_columns && !id_line;
	return rc < 0 ? rc : PS_OK;
}

/* ---- order, crossovers, output ---------------------------------------- */

/*
 * Sorting and the crossovers' look-ups take O(rows log rows): a merge
 * reads rows from files of any length (docs/SECURITY.md, "Work limits").
 * Both go through an array of keys, one a row, sorted by qsort; ties fall
 * to the row's index, so that equal rows keep their order.
 */
struct row_key {
	uint64_t value;
	size_t rank;  /* the index of the first row of this label */
	size_t index; /* the row's own index */
	const char *label;
};

static int by_label_then_index(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;
	int c = strcmp(x->label, y->label);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int by_value_then_rank(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

void ps_sweep_sort(struct ps_sweep_row *rows, size_t count)
{
	struct row_key *keys = malloc((count ? count : 1) * sizeof(*keys));
	size_t *where = malloc((count ? count : 1) * sizeof(*where));

	if (!keys || !where) {
		free(keys);
		free(where);
		return;
	}
	for (size_t k = 0; k < count; k++)
		keys[k] = (struct row_key){ rows[k].value, 0, k, rows[k].label };
	/* a label's rank: the first index at which it appears, before sorting */
	qsort(keys, count, sizeof(*keys), by_label_then_index);
	for (size_t k = 0; k < count; k++)
		keys[k].rank = k && !strcmp(keys[k].label, keys[k - 1].label) ?
			       keys[k - 1].rank : keys[k].index;
	qsort(keys, count, sizeof(*keys), by_value_then_rank);
	/* row k goes to place k in the sorted order: move each cycle of the
	 * permutation through one spare row */
	for (size_t k = 0; k < count; k++)
		where[keys[k].index] = k;
	for (size_t k = 0; k < count; k++) {
		while (where[k] != k) {
			size_t to = where[k];
			struct ps_sweep_row spare = rows[to];
			size_t spare_to = where[to];

			rows[to] = rows[k];
			where[to] = to;
			rows[k] = spare;
			where[k] = spare_to;
		}
	}
	free(keys);
	free(where);
}

/* The baseline's rows by swept value, for find_row's binary search. */
struct baseline_index {
	struct row_key *keys;
	size_t count;
};

static int by_value_then_index(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static int baseline_index_init(struct baseline_index *bi, const struct ps_sweep_row *rows,
			       size_t count, const char *baseline)
{
	bi->count = 0;
	bi->keys = malloc((count ? count : 1) * sizeof(*bi->keys));
	if (!bi->keys)
		return PS_ENOMEM;
	for (size_t k = 0; k < count; k++)
		if (!strcmp(rows[k].label, baseline))
			bi->keys[bi->count++] = (struct row_key){ rows[k].value, 0, k, rows[k].label };
	qsort(bi->keys, bi->count, sizeof(*bi->keys), by_value_then_index);
	return PS_OK;
}

/* The first row of the baseline at this value, or NULL. */
static const struct ps_sweep_row *find_row(const struct baseline_index *bi,
					   const struct ps_sweep_row *rows,
					   uint64_t value)
{
	size_t lo = 0, hi = bi->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bi->keys[mid].value < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < bi->count && bi->keys[lo].value == value ? &rows[bi->keys[lo].index] : NULL;
}

/* The label below the baseline at a swept value where both ran. */
static int below_at(const struct baseline_index *bi, const struct ps_sweep_row *rows,
		    const struct ps_sweep_row *r)
{
	const struct ps_sweep_row *b = find_row(bi, rows, r->value);

	if (!r->ran || !b || !b->ran)
		return -1; /* not compared */
	return r->io < b->io;
}

/* The ends of c's intervals at the first or last value swept. */
static void mark_edges(struct ps_crossover *c, uint64_t first, uint64_t last)
{
	for (size_t t = 0; t < c->interval_count && t < PS_SWEEP_MAX_INTERVALS; t++) {
		c->intervals[t].from_edge = c->intervals[t].from == first;
		c->intervals[t].to_edge = c->intervals[t].to == last;
	}
}

size_t ps_sweep_crossovers(const struct ps_sweep_row *rows, size_t count,
			   const char *baseline, struct ps_crossover *out,
			   size_t max)
{
	struct baseline_index bi;
	size_t found = 0;

	if (baseline_index_init(&bi, rows, count, baseline))
		return 0;
	for (size_t k = 0; k < count && found < max; k++) {
		const char *label = rows[k].label;
		struct ps_crossover *c = &out[found];
		bool seen = false, open = false, any = false;
		uint64_t last = 0, first_value = 0, last_value = 0;
		size_t compared = 0;

		if (!strcmp(label, baseline))
			continue;
		for (size_t q = 0; q < found; q++)
			seen |= !strcmp(out[q].label, label);
		if (seen)
			continue;
		memset(c, 0, sizeof(*c));
		snprintf(c->label, sizeof(c->label), "%s", label);
		snprintf(c->baseline, sizeof(c->baseline), "%s", baseline);
		/* the compared values in increasing order (rows sorted by
		 * value, ps_sweep_sort); a point not compared ends a run */
		for (size_t q = 0; q < count; q++) {
			const struct ps_sweep_row *r = &rows[q];
			int below;

			if (strcmp(r->label, label))
				continue;
			if (!any)
				first_value = r->value, any = true;
			c->points++;
			last_value = r->value;
			below = below_at(&bi, rows, r);
			compared += below >= 0;
			if (below == 1 && !open) {
				if (c->interval_count < PS_SWEEP_MAX_INTERVALS)
					c->intervals[c->interval_count].from = r->value;
				c->interval_count++;
				open = true;
			}
			if (below == 1 && c->interval_count <= PS_SWEEP_MAX_INTERVALS)
				c->intervals[c->interval_count - 1].to = r->value;
			if (below != 1)
				open = false;
			if (below >= 0)
				last = r->value;
		}
		c->compared = compared > 0;
		c->compared_points = compared;
		if (!c->compared)
			snprintf(c->note, sizeof(c->note), bi.count ?
				 "no value where both %s and %s ran" :
				 "the baseline %s%.0s has no row: it was not swept (add it to --strategies, or name a swept one with --baseline)",
				 baseline, label);
		mark_edges(c, first_value, last_value);
		/* from some value on: the last interval reaches the last
		 * value compared */
		if (c->interval_count && c->interval_count <= PS_SWEEP_MAX_INTERVALS &&
		    c->intervals[c->interval_count - 1].to == last) {
			c->found = true;
			c->at = c->intervals[c->interval_count - 1].from;
		}
		found++;
	}
	free(bi.keys);
	return found;
}

void ps_sweep_point(const struct ps_sweep_spec *spec, uint64_t value,
		    const char *label, struct ps_sweep_row *row)
{
	run_one(spec, value, label, row);
}

/* 1 where label's predicted I/O is below the baseline's at value, 0
 * where not (or where either does not run: it does not move less). */
static int predicted_below(const struct ps_sweep_spec *spec, uint64_t value,
			   const char *label, const char *baseline)
{
	struct ps_sweep_row r, b;

	run_one(spec, value, label, &r);
	run_one(spec, value, baseline, &b);
	return r.ran && b.ran && r.io < b.io;
}

/* Where the comparison flips between lo and hi (it differs there): the
 * least x in (lo, hi] that compares as hi does, by bisection. */
static uint64_t flip(const struct ps_sweep_spec *model, const struct ps_crossover *c,
		     uint64_t lo, uint64_t hi)
{
	const int at_hi = predicted_below(model, hi, c->label, c->baseline);

	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (predicted_below(model, mid, c->label, c->baseline) == at_hi)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* The compared grid values of the spec, increasing; how many. */
static size_t grid_values(const struct ps_sweep_spec *spec, uint64_t *values)
{
	return ps_sweep_points(&spec->range, values, PS_SWEEP_MAX_POINTS);
}

void ps_sweep_neighbours(const uint64_t *values, size_t points,
			 const struct ps_sweep_interval *iv,
			 struct ps_sweep_neighbours *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t p = 0; p < points; p++) {
		if (values[p] < iv->from)
			out->before = values[p], out->has_before = true;
		if (values[p] > iv->to && !out->has_after)
			out->after = values[p], out->has_after = true;
	}
}

void ps_sweep_refine(const struct ps_sweep_spec *spec, struct ps_crossover *cross,
		     size_t count)
{
	struct ps_sweep_spec model = *spec;
	uint64_t values[PS_SWEEP_MAX_POINTS];
	size_t points = grid_values(spec, values);

	model.predict = true;
	model.values = false;
	for (size_t k = 0; k < count; k++) {
		struct ps_crossover *c = &cross[k];
		size_t kept = c->interval_count < PS_SWEEP_MAX_INTERVALS ? c->interval_count
									  : PS_SWEEP_MAX_INTERVALS;

		if (!c->compared)
			continue; /* nothing to refine, and the note says why */
		if (spec->range.param == 'M') {
			snprintf(c->note, sizeof(c->note),
				 "ends on the grid: a plan's I/O need not be monotone in M");
			continue;
		}
		c->refined = true;
		for (size_t t = 0; t < kept; t++) {
			struct ps_sweep_interval *iv = &c->intervals[t];
			struct ps_sweep_neighbours around;

			ps_sweep_neighbours(values, points, iv, &around);
			/* the model must agree with the grid at the ends it
			 * starts from (a simulated sweep could differ) */
			if (!predicted_below(&model, iv->from, c->label, c->baseline) ||
			    !predicted_below(&model, iv->to, c->label, c->baseline)) {
				c->refined = false;
				snprintf(c->note, sizeof(c->note),
					 "no cost model below the baseline at %llu or %llu: ends on the grid",
					 (unsigned long long)iv->from, (unsigned long long)iv->to);
				continue;
			}
			if (around.has_before &&
			    !predicted_below(&model, around.before, c->label, c->baseline))
				iv->from = flip(&model, c, around.before, iv->from);
			if (around.has_after &&
			    !predicted_below(&model, around.after, c->label, c->baseline))
				iv->to = flip(&model, c, iv->to, around.after) - 1;
		}
		if (c->found)
			c->at = c->intervals[kept - 1].from;
	}
}

static bool any_values(const struct ps_sweep_row *rows, size_t count)
{
	for (size_t k = 0; k < count; k++)
		if (rows[k].has_values)
			return true;
	return false;
}

/* Whether an end of c's kept intervals is inner (not at the range's
 * edge), and the edges in order, at most two. */
static bool inner_end(const struct ps_crossover *c, uint64_t edges[2], size_t *edge_count)
{
	const size_t kept = c->interval_count < PS_SWEEP_MAX_INTERVALS ? c->interval_count
								      : PS_SWEEP_MAX_INTERVALS;
	bool inner = false;

	*edge_count = 0;
	for (size_t t = 0; t < kept; t++) {
		const struct ps_sweep_interval *iv = &c->intervals[t];

		inner |= !iv->from_edge || !iv->to_edge;
		if (iv->from_edge && *edge_count < 2)
			edges[(*edge_count)++] = iv->from;
		if (iv->to_edge && *edge_count < 2 && (!iv->from_edge || iv->to != iv->from))
			edges[(*edge_count)++] = iv->to;
	}
	return inner;
}

void ps_sweep_print_ends(FILE *out, const struct ps_crossover *c, const char *inner_how)
{
	uint64_t edges[2];
	size_t edge_count;
	const bool inner = inner_end(c, edges, &edge_count);

	if (inner && !inner_how)
		inner_how = c->refined ? "ends exact: bisection on the cost models" : "ends on the grid";
	if (inner)
		fputs(inner_how, out);
	if (edge_count == 1)
		fprintf(out, "%s%llu is an end of the values compared, not a crossing",
			inner ? "; " : "", (unsigned long long)edges[0]);
	else if (edge_count == 2)
		fprintf(out, "%s%llu and %llu are the ends of the values compared, not crossings",
			inner ? "; " : "", (unsigned long long)edges[0], (unsigned long long)edges[1]);
}

/* "crossover: a moves less than b for n in [x, y], [z, w] (ends ...)" */
static void crossover_print(FILE *out, char param, const struct ps_crossover *c)
{
	const size_t kept = c->interval_count < PS_SWEEP_MAX_INTERVALS ? c->interval_count
								      : PS_SWEEP_MAX_INTERVALS;

	if (!c->compared) {
		fprintf(out, "crossover: none of %s against %s: %s\n", c->label, c->baseline, c->note);
		return;
	}
	if (!c->interval_count) {
		if (c->compared_points < c->points)
			fprintf(out, "crossover: %s moves no less than %s at the %zu of its %zu values where both ran\n",
				c->label, c->baseline, c->compared_points, c->points);
		else
			fprintf(out, "crossover: %s moves no less than %s at any value swept\n",
				c->label, c->baseline);
		return;
	}
	fprintf(out, "crossover: %s moves less than %s for %c in ", c->label, c->baseline, param);
	for (size_t t = 0; t < kept; t++)
		fprintf(out, "%s[%llu, %llu]", t ? ", " : "",
			(unsigned long long)c->intervals[t].from,
			(unsigned long long)c->intervals[t].to);
	if (c->interval_count > kept)
		fprintf(out, " and %zu more", c->interval_count - kept);
	fputs(" (", out);
	ps_sweep_print_ends(out, c, NULL);
	fprintf(out, "%s%s)\n", c->note[0] ? "; " : "", c->note);
}

void ps_sweep_print(FILE *out, char param, const struct ps_sweep_row *rows,
		    size_t count, const struct ps_crossover *cross,
		    size_t cross_count)
{
	const bool values = any_values(rows, count);

	fprintf(out, "%10c  %-10s %-12s %-6s %14s %14s %12s %9s  %s%s\n", param, "label",
		"strategy", "valid", "I/O", "predicted", "lower", "seconds", "how",
		values ? "       epsilon           eta         bound  error_vs_direct" : "");
	for (size_t k = 0; k < count; k++) {
		const struct ps_sweep_row *r = &rows[k];

		if (!r->ran) {
			fprintf(out, "%10llu  %-10s %-12s not run: %s\n",
				(unsigned long long)r->value, r->label, r->strategy, r->why);
			continue;
		}
		fprintf(out, "%10llu  %-10s %-12s %-6s %14llu %14llu %12.0f %9.2f  %s",
			(unsigned long long)r->value, r->label, r->strategy,
			r->simulated ? (r->valid ? "yes" : "NO") : "-",
			(unsigned long long)r->io, (unsigned long long)r->predicted_io,
			r->lower, r->seconds, r->simulated ? "simulated" : "predicted");
		if (r->has_values && r->epsilon >= 0)
			fprintf(out, "  %12.3e", r->epsilon);
		else if (r->has_values)
			fprintf(out, "  %12s", "-");
		for (size_t t = 0; r->has_values && t < 2; t++) {
			const double v = t ? r->bound : r->eta;

			if (v >= 0)
				fprintf(out, "  %12.3e", v);
			else
				fprintf(out, "  %12s", "-");
		}
		if (r->has_values)
			fprintf(out, "  %15.3e%s", r->error_vs_direct,
				r->values_failed ? "  VALUES FAILED" : "");
		fputc('\n', out);
	}
	for (size_t k = 0; k < cross_count; k++)
		crossover_print(out, param, &cross[k]);
}

/* {"from", "to", "from_edge", "to_edge"} of one interval. */
static json_t *interval_json(const struct ps_sweep_interval *iv)
{
	return json_pack("{s:I, s:I, s:b, s:b}", "from", (json_int_t)iv->from, "to",
			 (json_int_t)iv->to, "from_edge", iv->from_edge, "to_edge", iv->to_edge);
}

/* A bound: an integer while it is a whole number (docs/CLI.md), or null. */
static json_t *bound_or_null(double v)
{
	if (v < 0)
		return json_null();
	if (v == floor(v) && v < 9.0e18)
		return json_integer((json_int_t)v);
	return json_real(v);
}

int ps_sweep_print_json(FILE *out, const struct ps_sweep_row *rows,
			size_t count, const struct ps_crossover *cross,
			size_t cross_count)
{
	json_t *root = json_object(), *list = json_array(), *cl = json_array();
	int rc;

	for (size_t k = 0; k < count; k++) {
		const struct ps_sweep_row *r = &rows[k];
		json_t *row = json_pack("{s:s, s:I, s:I, s:I, s:I, s:s, s:s, s:s, s:I}",
					"dag", r->dag, "n", (json_int_t)r->n, "d",
					(json_int_t)r->d, "g", (json_int_t)r->g, "M",
					(json_int_t)r->M, "label", r->label, "strategy",
					r->strategy, "swept", (char[2]){ r->swept, 0 },
					"value", (json_int_t)r->value);

		if (r->causal)
			json_object_set_new(row, "causal", json_true());
		if (r->decode)
			json_object_set_new(row, "decode", json_integer((json_int_t)r->decode));
		json_object_set_new(row, "ran", json_boolean(r->ran));
		if (r->ran) {
			json_object_set_new(row, "simulated", json_boolean(r->simulated));
			json_object_set_new(row, "valid", r->simulated ? json_boolean(r->valid) : json_null());
			json_object_set_new(row, "loads", json_integer((json_int_t)r->loads));
			json_object_set_new(row, "saves", json_integer((json_int_t)r->saves));
			json_object_set_new(row, "io", json_integer((json_int_t)r->io));
			if (r->decode && r->n > r->decode)
				json_object_set_new(row, "io_per_token",
						    json_real((double)r->io / (double)(r->n - r->decode)));
			if (r->arrays) {
				json_t *by = json_object();

				for (size_t q = 0; q < CSV_ARRAYS; q++)
					if (r->arrays >> csv_arrays[q] & 1)
						json_object_set_new(by, ps_kinds[csv_arrays[q]].name,
							json_pack("{s:I, s:I}", "loads",
								  (json_int_t)r->by_array[csv_arrays[q]].loads,
								  "saves",
								  (json_int_t)r->by_array[csv_arrays[q]].saves));
				json_object_set_new(row, "by_array", by);
			}
			json_object_set_new(row, "predicted_io", r->predicted_io ?
					    json_integer((json_int_t)r->predicted_io) : json_null());
			json_object_set_new(row, "peak_red", json_integer((json_int_t)r->peak_red));
			json_object_set_new(row, "lower", bound_or_null(r->lower));
			json_object_set_new(row, "upper", bound_or_null(r->upper));
			json_object_set_new(row, "seconds", json_real(r->seconds));
		}
		if (r->has_values) {
			json_object_set_new(row, "error_vs_direct", isfinite(r->error_vs_direct) ?
					    json_real(r->error_vs_direct) : json_null());
			json_object_set_new(row, "epsilon", r->epsilon >= 0 && isfinite(r->epsilon) ?
					    json_real(r->epsilon) : json_null());
			json_object_set_new(row, "eta", r->eta >= 0 && isfinite(r->eta) ?
					    json_real(r->eta) : json_null());
			json_object_set_new(row, "bound", r->bound >= 0 && isfinite(r->bound) ?
					    json_real(r->bound) : json_null());
			json_object_set_new(row, "values_failed", json_boolean(r->values_failed));
		}
		if (r->why[0])
			json_object_set_new(row, "why", json_string(r->why));
		json_array_append_new(list, row);
	}
	for (size_t k = 0; k < cross_count; k++) {
		json_t *iv = json_array();
		size_t kept = cross[k].interval_count < PS_SWEEP_MAX_INTERVALS
				      ? cross[k].interval_count : PS_SWEEP_MAX_INTERVALS;

		for (size_t t = 0; t < kept; t++)
			json_array_append_new(iv, interval_json(&cross[k].intervals[t]));
		if (!cross[k].compared) {
			json_decref(iv);
			iv = json_null();
		}
		json_array_append_new(cl, json_pack("{s:s, s:s, s:b, s:o, s:o, s:b, s:o, s:o}", "strategy",
						    cross[k].label, "baseline", cross[k].baseline,
						    "compared", cross[k].compared,
						    "at", cross[k].found ?
						    json_integer((json_int_t)cross[k].at) : json_null(),
						    "intervals", iv, "refined", cross[k].refined,
						    "interval_count", cross[k].compared ?
						    json_integer((json_int_t)cross[k].interval_count) : json_null(),
						    "note", cross[k].note[0] ? json_string(cross[k].note) : json_null()));
	}
	json_object_set_new(root, "rows", list);
	json_object_set_new(root, "crossovers", cl);
	rc = json_dumpf(root, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(root);
	return rc || ferror(out) ? PS_EIO : PS_OK;
}
