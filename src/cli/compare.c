/*
 * pebblesim compare: every strategy of a DAG run through the engine on it
 * (or, --predict, through its cost model), side by side, best first. On
 * the attention DAG the paper's strategies (each that takes --sizes also
 * tuned), colpass and the baselines; on a DAG from a file (--dag) the
 * policies for explicit DAGs, each over both compute orders. --strategies
 * narrows the rows, -j runs them in parallel processes.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The baselines replay their loops move by move through an eviction
 * policy, some 20 million moves a second: compare runs them up to this
 * many products (a few seconds each).
 */
#define CLI_COMPARE_BASELINE_PRODUCTS UINT64_C(20000000)

#define CLI_COMPARE_MAX_ROWS 32

const struct cli_option compare_options[] = {
	CLI_OPT_N("rows of Q, K, V (the sequence length), N >= 1"),
	CLI_OPT_D,
	CLI_OPT_G,
	CLI_OPT_M("fast memory capacity in words (red pebbles), M >= 1"),
	CLI_OPT_NO_NORMALIZE,
	CLI_OPT_CAUSAL,
	CLI_OPT_DECODE,
	CLI_OPT_DAG("compare the policies for a DAG from a file instead:\n"
		    "lru and belady, each over the topo and dfs orders,\n"
		    "and portfolio (best's, a 3 s search)"),
	CLI_OPT_DAG_FORMAT,
	CLI_OPT_IGNORE_WEIGHTS,
	{ OPT_STRATEGIES, 0, "strategies", CLI_STRING, offsetof(struct cli_args, strategies), 0, 0, "LIST",
	  "only these rows: comma-separated names (a tiling's\n"
	  "name gives its row and its tuned row); a baseline named\n"
	  "here runs at any size. Default: every row" },
	{ OPT_PREDICT, 0, "predict", CLI_FLAG, offsetof(struct cli_args, predict), 0, 0, NULL,
	  "cost models only, no engine (rows without one say so):\n"
	  "for sizes too big to simulate" },
	{ OPT_JOBS, 'j', NULL, CLI_COUNT, offsetof(struct cli_args, jobs), 1, 0, "N",
	  "rows in N parallel processes (default 1: a row's\n"
	  "seconds are then its own); the counts are those of -j 1" },
	CLI_OPT_PROGRESS("naming each row as it starts, and\nevery 10 s of a long one"),
	CLI_OPT_JSON("print the rows as a JSON array, each with its DAG and M\n"
		     "(docs/pebblesim.schema.json)"),
	CLI_OPT_PLUGIN,
	CLI_OPT_HELP,
	CLI_OPT_END,
};

/* What every row shares while it runs. */
struct compare_job {
	const struct ps_problem *pb;
	const struct ps_report *head;
	bool predict;
	FILE *progress; /* or NULL */
};

static int by_io(const void *x_, const void *y_)
{
	const struct cli_compare_row *x = x_, *y = y_;
	uint64_t u, v;

	if (x->ran != y->ran)
		return x->ran ? -1 : 1;
	if (!x->ran)
		return 0;
	u = x->rep.counts.loads + x->rep.counts.saves;
	v = y->rep.counts.loads + y->rep.counts.saves;
	return (u > v) - (u < v);
}

/* A row to run on pb with M checked first; why set when it cannot. */
static void add_row(struct cli_compare_row *row, const struct ps_strategy *s,
		    const char *order, const char *sizes, uint64_t min_m,
		    const struct ps_problem *pb)
{
	memset(row, 0, sizeof(*row));
	row->s = s;
	row->order = order;
	row->sizes = sizes;
	if (min_m == UINT64_MAX)
		snprintf(row->why, sizeof(row->why), "does not apply to these parameters");
	else if (pb->M < min_m)
		snprintf(row->why, sizeof(row->why), "does not run: needs M >= %llu",
			 (unsigned long long)min_m);
	else
		row->pending = true;
}

/* A row from its strategy's cost model: not judged by the engine. */
static void row_from_plan(struct cli_compare_row *row, const struct ps_report *head,
			  const struct ps_plan *plan)
{
	row->rep = *head;
	row->rep.strategy = row->s->name;
	row->rep.section = row->s->section;
	row->rep.plan = *plan;
	row->rep.has_plan = true;
	row->rep.valid = true; /* not judged: printed as the cost model's */
	row->rep.counts.loads = plan->loads;
	row->rep.counts.saves = plan->saves;
	row->rep.counts.peak_red = plan->peak_red;
	memcpy(row->rep.counts.by_array, plan->by_array, sizeof(plan->by_array));
	row->predicted = row->ran = true;
}

/* Runs a pending row, through the engine or (predict) its cost model. */
static void run_row(struct cli_compare_row *row, const struct compare_job *job)
{
	struct ps_problem pb = *job->pb;
	struct ps_error err;
	struct ps_plan plan;
	char label[160];

	if (!row->pending)
		return;
	pb.order = row->order;
	pb.sizes = row->sizes;
	pb.progress = job->progress;
	pb.progress_label = cli_progress_label(row->s, row->sizes, pb.att, pb.M,
					       label, sizeof(label));
	if (job->progress && ps_progress_lines(job->progress))
		fprintf(job->progress, "pebblesim: compare: %s%s\n", label,
			job->predict ? " (cost model)" : "");
	ps_error_clear(&err);
	if (!job->predict) {
		if (ps_run(&pb, row->s, NULL, &row->rep, &err))
			snprintf(row->why, sizeof(row->why), "does not run: %s", err.msg);
		else
			row->ran = true;
		return;
	}
	memset(&plan, 0, sizeof(plan));
	if (ps_strategy_plan(row->s, &pb, &plan, &err) || !plan.predicted) {
		snprintf(row->why, sizeof(row->why), "%s%s",
			 plan.predicted ? "does not run: " : "no cost model: run without --predict",
			 plan.predicted ? err.msg : "");
		return;
	}
	row_from_plan(row, job->head, &plan);
}

/*
 * The rows of strategies whose moves grow as n^2 (PS_STRATEGY_QUADRATIC),
 * held back until the others have run: each is simulated only where its
 * cost model, exact, predicts no more I/O than the least a simulated row
 * moved; else its row is its cost model's, marked not simulated, with the
 * reason (not_simulated). Named in --strategies, they are always run.
 */
static void run_held_back(struct cli_compare_row *rows, size_t count, const bool *held,
			  const struct compare_job *job)
{
	const struct cli_compare_row *least = NULL;

	for (size_t k = 0; k < count; k++) {
		const struct ps_counts *c = &rows[k].rep.counts;

		if (!held[k] && rows[k].ran && !rows[k].predicted && rows[k].rep.valid &&
		    (!least || c->loads + c->saves <
				       least->rep.counts.loads + least->rep.counts.saves))
			least = &rows[k];
	}
	for (size_t k = 0; k < count; k++) {
		struct ps_problem pb = *job->pb;
		struct ps_plan plan;
		struct ps_error err;
		uint64_t io, least_io;
		char name[64];

		if (!held[k])
			continue;
		rows[k].pending = true;
		memset(&plan, 0, sizeof(plan));
		ps_error_clear(&err);
		pb.sizes = rows[k].sizes;
		if (!least || ps_strategy_plan(rows[k].s, &pb, &plan, &err) || !plan.predicted ||
		    (io = plan.loads + plan.saves) <=
			    (least_io = least->rep.counts.loads + least->rep.counts.saves)) {
			run_row(&rows[k], job);
			continue;
		}
		row_from_plan(&rows[k], job->head, &plan);
		snprintf(rows[k].not_simulated, sizeof(rows[k].not_simulated),
			 "its cost model (exact) predicts %llu I/O, more than %s's %llu: it cannot have the least; its moves grow as n^2 (name it in --strategies to simulate it)",
			 (unsigned long long)io,
			 cli_compare_row_name(least, name, sizeof(name)),
			 (unsigned long long)least_io);
	}
}

/* A row as it travels from a worker: its index, then the row. Its
 * pointers name the registry, string literals and the DAG built before
 * the fork: the same addresses in the parent. */
struct compare_message {
	uint64_t index;
	struct cli_compare_row row;
};

/* Writes all of len bytes; false when the pipe fails. */
static bool write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		len -= (size_t)w;
	}
	return true;
}

/* Rows k, k + jobs, k + 2 jobs, ... in each of jobs processes; 0, or
 * PS_EXIT_USAGE after a message when a worker fails. */
static int run_parallel(struct cli_compare_row *rows, size_t count,
			const struct compare_job *job, unsigned jobs, FILE *errout)
{
	pid_t pids[64];
	int fds[64];
	unsigned started = 0;
	size_t came = 0, pending = 0;
	int status = 0;

	for (size_t k = 0; k < count; k++)
		pending += rows[k].pending;
	fflush(NULL); /* the workers leave through _exit */
	for (unsigned c = 0; c < jobs; c++) {
		int pipefd[2];

		if (pipe(pipefd)) {
			fprintf(errout, "pebblesim: cannot start compare jobs: %s\n", strerror(errno));
			status = PS_EXIT_USAGE;
			break;
		}
		pids[c] = fork();
		if (pids[c] < 0) {
			fprintf(errout, "pebblesim: cannot start compare jobs: %s\n", strerror(errno));
			close(pipefd[0]);
			close(pipefd[1]);
			status = PS_EXIT_USAGE;
			break;
		}
		if (pids[c] == 0) {
			close(pipefd[0]);
			for (unsigned q = 0; q < c; q++)
				close(fds[q]);
			for (size_t k = c; k < count; k += jobs) {
				struct compare_message m;

				if (!rows[k].pending)
					continue;
				run_row(&rows[k], job);
				memset(&m, 0, sizeof(m));
				m.index = k;
				m.row = rows[k];
				if (!write_all(pipefd[1], &m, sizeof(m)))
					_exit(3);
			}
			_exit(0);
		}
		close(pipefd[1]);
		fds[c] = pipefd[0];
		started++;
	}
	/* each worker's rows in turn: a pipe holds what a worker writes
	 * ahead, and the worker waits while it is full */
	for (unsigned c = 0; c < started; c++) {
		struct compare_message m;
		size_t filled = 0;
		ssize_t got;

		while ((got = read(fds[c], (char *)&m + filled, sizeof(m) - filled)) != 0) {
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				break;
			filled += (size_t)got;
			if (filled == sizeof(m)) {
				if (m.index < count && rows[m.index].pending) {
					rows[m.index] = m.row;
					came++;
				}
				filled = 0;
			}
		}
		close(fds[c]);
	}
	for (unsigned c = 0; c < started; c++) {
		int ws;

		while (waitpid(pids[c], &ws, 0) < 0 && errno == EINTR)
			;
		if (!status && (!WIFEXITED(ws) || WEXITSTATUS(ws))) {
			fprintf(errout, "pebblesim: a compare job failed (status %d)\n", ws);
			status = PS_EXIT_USAGE;
		}
	}
	if (!status && came != pending) {
		fprintf(errout, "pebblesim: a compare job ended early: %zu of %zu rows came back\n",
			came, pending);
		status = PS_EXIT_USAGE;
	}
	return status;
}

/* --strategies: the names asked for, each a strategy with rows here. */
struct compare_pick {
	const struct ps_strategy *s[CLI_COMPARE_MAX_ROWS];
	size_t count; /* 0: every row */
};

static bool picked(const struct compare_pick *pick, const struct ps_strategy *s)
{
	if (!pick->count)
		return true;
	for (size_t k = 0; k < pick->count; k++)
		if (pick->s[k] == s)
			return true;
	return false;
}

/* The strategies with rows on this DAG: of the attention DAG all but the
 * choosers (best is the best row), or the policies of explicit DAGs. */
static bool has_rows(const struct ps_strategy *s, const struct ps_attention *att)
{
	if (!att)
		return s->flags & PS_STRATEGY_EXPLICIT;
	return ps_strategy_serves(s, att) && !(s->flags & PS_STRATEGY_CHOOSER);
}

static int read_pick(const struct cli_command *cmd, const struct cli_args *a,
		     const struct ps_attention *att, struct compare_pick *pick,
		     FILE *errout)
{
	char buf[512], *save = NULL;

	pick->count = 0;
	if (!a->strategies)
		return 0;
	if (strlen(a->strategies) >= sizeof(buf))
		return cli_usage_error(cmd, errout, "--strategies: the list is too long");
	snprintf(buf, sizeof(buf), "%s", a->strategies);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct ps_strategy *s = ps_strategy_find(tok);
		const char *near;
		char known[512];
		size_t used = 0;

		if (s && has_rows(s, att)) {
			if (!picked(pick, s) || !pick->count)
				pick->s[pick->count++] = s;
			continue;
		}
		if (!s && (near = cli_nearest_strategy(tok, false)))
			return cli_usage_error(cmd, errout, "unknown strategy '%.64s' in --strategies; did you mean '%s'?",
					       tok, near);
		known[0] = '\0';
		for (size_t k = 0; k < ps_strategy_count && used < sizeof(known); k++)
			if (has_rows(ps_strategies[k], att))
				used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s",
							 used ? ", " : "", ps_strategies[k]->name);
		return cli_usage_error(cmd, errout, "%s '%.64s' in --strategies: compare's rows %s are %s",
				       s ? "no row for" : "unknown strategy", tok,
				       att ? "of the attention DAG" : "of a DAG file", known);
	}
	if (!pick->count)
		return cli_usage_error(cmd, errout, "--strategies names no strategy");
	return 0;
}

/* The rows of the attention DAG: each picked strategy (the move-by-move
 * baselines only up to CLI_COMPARE_BASELINE_PRODUCTS unless named or
 * predicted: they have no cost model to say so cheaply), and a tiling
 * with tile sizes again tuned. held[k]: row k waits for the others
 * (run_held_back). */
static size_t attention_rows(const struct ps_attention *att,
			     const struct ps_problem *pb,
			     const struct compare_pick *pick, bool predict,
			     struct cli_compare_row *rows, bool *held)
{
	size_t count = 0;

	for (size_t k = 0; k < ps_strategy_count && count < CLI_COMPARE_MAX_ROWS; k++) {
		const struct ps_strategy *s = ps_strategies[k];
		uint64_t products = att->n * att->r * att->nb;
		uint64_t min_m = ps_strategy_min_memory(s, att);

		if (!has_rows(s, att) || !picked(pick, s))
			continue;
		add_row(&rows[count++], s, NULL, NULL, min_m, pb);
		if ((s->flags & PS_STRATEGY_BASELINE) && !pick->count && !predict &&
		    products > CLI_COMPARE_BASELINE_PRODUCTS) {
			rows[count - 1].pending = false;
			snprintf(rows[count - 1].why, sizeof(rows[count - 1].why),
				 "not run: %llu products, beyond compare's %llu for the move-by-move baselines (name it in --strategies, or run it alone with --strategy %s)",
				 (unsigned long long)products,
				 (unsigned long long)CLI_COMPARE_BASELINE_PRODUCTS, s->name);
		}
		if ((s->flags & PS_STRATEGY_QUADRATIC) && !pick->count && !predict &&
		    rows[count - 1].pending) {
			rows[count - 1].pending = false;
			held[count - 1] = true;
		}
		if (ps_strategy_takes(s, PS_TAKES_SIZES) && count < CLI_COMPARE_MAX_ROWS)
			add_row(&rows[count++], s, NULL, "tuned", min_m, pb);
	}
	return count;
}

/* The rows of a DAG from a file: each picked policy over each order. */
static size_t explicit_rows(const struct ps_problem *pb,
			    const struct compare_pick *pick,
			    struct cli_compare_row *rows)
{
	static const char *const orders[] = { "topo", "dfs" };
	size_t count = 0;

	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];

		if (!has_rows(s, NULL) || !picked(pick, s))
			continue;
		for (size_t o = 0; o < 2 && count < CLI_COMPARE_MAX_ROWS; o++) {
			struct ps_problem with_order = *pb;
			const char *order = ps_strategy_takes(s, PS_TAKES_ORDER) ? orders[o] : NULL;

			with_order.order = order;
			add_row(&rows[count++], s, order, NULL,
				ps_strategy_min_memory_explicit(s, &with_order), pb);
			if (!order)
				break; /* one row for a policy without orders */
		}
	}
	return count;
}

int cmd_compare(const struct cli_command *cmd, const struct cli_args *a,
		FILE *out, FILE *errout)
{
	struct cli_compare_row *rows;
	bool held[CLI_COMPARE_MAX_ROWS] = { false };
	struct ps_attention att;
	struct ps_explicit xdag;
	struct ps_problem pb;
	struct ps_report head;
	struct compare_pick pick;
	struct compare_job job;
	bool explicit_dag = a->dag_file != NULL;
	struct cli_dag_read how = { NULL, NULL };
	int status = PS_EXIT_VALID, rc;
	unsigned jobs = a->given[OPT_JOBS] ? (unsigned)ps_min_u64(a->jobs, 64) : 1;
	size_t count;

	if ((rc = cli_check_when(cmd, a, explicit_dag, errout)))
		return rc;
	if (explicit_dag && !a->given[OPT_M])
		return cli_usage_error(cmd, errout, "-M is required");
	if (!explicit_dag &&
	    (rc = cli_require(cmd, a, errout, "the parameters -n, -d, -g and -M are all required",
			      (const enum cli_option_id[]){ OPT_N, OPT_D, OPT_G, OPT_M }, 4)))
		return rc;
	if (explicit_dag && a->predict)
		return cli_usage_error(cmd, errout,
				       "--predict does not apply to compare --dag: the policies for DAG files have no cost model");
	rows = calloc(CLI_COMPARE_MAX_ROWS, sizeof(*rows));
	if (!rows) {
		fprintf(errout, "pebblesim: out of memory\n");
		return PS_EXIT_USAGE;
	}
	rc = explicit_dag ? cli_read_dag(a, &xdag, &how, errout)
			  : cli_build_attention(a, &att, a->predict, errout);
	if (rc) {
		free(rows);
		return rc;
	}
	if ((rc = read_pick(cmd, a, explicit_dag ? NULL : &att, &pick, errout)))
		goto done;
	cli_problem(a, explicit_dag ? NULL : &att, explicit_dag ? &xdag : NULL, &pb);
	if (explicit_dag) {
		ps_report_init_explicit(&head, &xdag, a->dag_file, a->M);
		head.dag_format = how.format;
		head.dag_note = how.note;
		count = explicit_rows(&pb, &pick, rows);
	} else {
		ps_report_init(&head, &att, a->M);
		count = attention_rows(&att, &pb, &pick, a->predict, rows, held);
	}
	job = (struct compare_job){ &pb, &head, a->predict, cli_progress_stream(a, errout) };
	if (jobs > 1 && count > 1) {
		if ((rc = run_parallel(rows, count, &job, (unsigned)ps_min_u64(jobs, count), errout)))
			goto done;
	} else {
		for (size_t k = 0; k < count; k++)
			run_row(&rows[k], &job);
	}
	run_held_back(rows, count, held, &job);
	for (size_t k = 0; k < count; k++)
		if (rows[k].ran && (!rows[k].rep.valid || ps_report_bound_violated(&rows[k].rep)))
			status = PS_EXIT_INVALID;
	qsort(rows, count, sizeof(rows[0]), by_io);
	cli_compare_print(&head, rows, count, a->json, out);
	rc = status;
done:
	if (explicit_dag)
		ps_explicit_free(&xdag);
	else
		ps_attention_free(&att);
	free(rows);
	return rc;
}

const struct cli_help compare_help = {
	"compare -n N -d D -g G -M M [--strategies LIST] [--predict] [-j N] [OPTIONS]\n"
	"       pebblesim compare --dag FILE|- -M M [--strategies LIST] [-j N] [--json]",
	"every strategy on the same DAG through the engine, side by side, best first",
	"Runs every strategy of the attention DAG (best excepted: it is the best\n"
	"row; the move-by-move baselines only up to 20 million products), and\n"
	"each tiling that takes --sizes again with tuned sizes (NAME/tuned),\n"
	"through the engine on the same DAG and prints one row each, best first: valid,\n"
	"loads, saves, I/O, peak red pebbles, I/O over its upper bound and over the\n"
	"lower bound, run time; then those that do not run, with the reason; then\n"
	"the I/O of each array (Q, K, V, ...) for each valid row. With\n"
	"--dag, the rows are the policies for a DAG from a file, lru and belady,\n"
	"each over the topo and dfs orders, and portfolio (what run --dag\n"
	"--strategy best runs, with its 3 s budget).\n"
	"\n"
	"--strategies keeps the rows named, --predict fills them from the cost\n"
	"models without the engine, -j runs them in parallel processes.\n"
	"\n"
	"resident's moves grow as n^2 (H rebuilt for each block of Q rows: 13.8\n"
	"billion on the first example below, 16 times the others' macs), so it\n"
	"runs last and is simulated only where its cost model, exact, predicts\n"
	"no more I/O than the least a simulated row moved; elsewhere its row is\n"
	"the cost model's (valid: model), and a line under the table says why\n"
	"(JSON: not_simulated). Named in --strategies, it is simulated.\n",
	"  pebblesim compare -n 1024 -d 16 -g 5 -M 2048 --predict\n"
	"      every strategy's cost model side by side on a Case III instance\n"
	"  pebblesim compare -n 1024 -d 16 -g 5 -M 2048 --strategies colpass,generic,subtile -j 2\n"
	"      three of them simulated, two at a time\n"
	"  pebblesim compare -n 64 -d 4 -g 2 -M 100 --json\n"
	"      the rows as JSON, each with n, d, g and M\n"
	"  pebblesim compare --dag examples/tree.graphml -M 4\n"
	"      lru and belady in both orders on a binary tree\n",
};
