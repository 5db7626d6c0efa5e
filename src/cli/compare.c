/*
 * pebblesim compare: every strategy of a DAG run through the engine on it,
 * side by side, best first. On the attention DAG the paper's strategies
 * (each that takes --sizes also tuned), colpass and the baselines; on a DAG from a file (--dag) the policies for
 * explicit DAGs, each over both compute orders.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

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
	CLI_OPT_DAG("compare the policies for a DAG from a file instead:\n"
		    "lru and belady, each over the topo and dfs orders"),
	CLI_OPT_DAG_FORMAT,
	CLI_OPT_JSON("print the rows as a JSON array, each with its DAG and M\n"
		     "(docs/pebblesim.schema.json)"),
	CLI_OPT_PLUGIN,
	CLI_OPT_HELP,
	CLI_OPT_END,
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

/* Runs row->s on pb (M checked first); false with row->why when not. */
static bool run_row(struct cli_compare_row *row, const struct ps_problem *pb,
		    uint64_t min_m)
{
	struct ps_error err;

	if (pb->M < min_m) {
		if (min_m == UINT64_MAX)
			snprintf(row->why, sizeof(row->why), "does not apply to these parameters");
		else
			snprintf(row->why, sizeof(row->why), "does not run: needs M >= %llu",
				 (unsigned long long)min_m);
		return false;
	}
	ps_error_clear(&err);
	if (ps_run(pb, row->s, NULL, &row->rep, &err)) {
		snprintf(row->why, sizeof(row->why), "does not run: %s", err.msg);
		return false;
	}
	row->ran = true;
	return true;
}

/* The rows of the attention DAG: every strategy but the choosers (best is
 * the best row) and those of explicit DAGs. */
static size_t attention_rows(const struct ps_attention *att,
			     const struct ps_problem *pb,
			     struct cli_compare_row *rows)
{
	size_t count = 0;

	for (size_t k = 0; k < ps_strategy_count && count < CLI_COMPARE_MAX_ROWS; k++) {
		const struct ps_strategy *s = ps_strategies[k];
		struct cli_compare_row *row = &rows[count];
		uint64_t products = att->n * att->r * att->nb;

		/* best is the best row; lru, belady take files, flash and
		 * exact-matmul exact attention */
		if (!ps_strategy_serves(s, att) || (s->flags & PS_STRATEGY_CHOOSER))
			continue;
		memset(row, 0, sizeof(*row));
		row->s = s;
		count++;
		if ((s->flags & PS_STRATEGY_BASELINE) &&
		    products > CLI_COMPARE_BASELINE_PRODUCTS) {
			snprintf(row->why, sizeof(row->why),
				 "not run: %llu products, beyond compare's %llu for the move-by-move baselines (run it alone with --strategy %s)",
				 (unsigned long long)products,
				 (unsigned long long)CLI_COMPARE_BASELINE_PRODUCTS, s->name);
			continue;
		}
		run_row(row, pb, ps_strategy_min_memory(s, att));
		/* a tiling with tile sizes has a row of its own tuned */
		if (ps_strategy_takes(s, PS_TAKES_SIZES) && count < CLI_COMPARE_MAX_ROWS) {
			struct ps_problem tuned = *pb;

			row = &rows[count++];
			memset(row, 0, sizeof(*row));
			row->s = s;
			row->sizes = tuned.sizes = "tuned";
			run_row(row, &tuned, ps_strategy_min_memory(s, att));
		}
	}
	return count;
}

/* The rows of a DAG from a file: each of its policies over each order. */
static size_t explicit_rows(const struct ps_problem *pb,
			    struct cli_compare_row *rows)
{
	static const char *const orders[] = { "topo", "dfs" };
	size_t count = 0;

	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];

		if (!(s->flags & PS_STRATEGY_EXPLICIT))
			continue;
		for (size_t o = 0; o < 2 && count < CLI_COMPARE_MAX_ROWS; o++) {
			struct cli_compare_row *row = &rows[count++];
			struct ps_problem with_order = *pb;

			memset(row, 0, sizeof(*row));
			row->s = s;
			row->order = ps_strategy_takes(s, PS_TAKES_ORDER) ? orders[o] : NULL;
			with_order.order = row->order;
			run_row(row, &with_order, ps_strategy_min_memory_explicit(s, &with_order));
			if (!row->order)
				break; /* one row for a policy without orders */
		}
	}
	return count;
}

int cmd_compare(const struct cli_command *cmd, const struct cli_args *a,
		FILE *out, FILE *errout)
{
	struct cli_compare_row *rows;
	struct ps_attention att;
	struct ps_explicit xdag;
	struct ps_problem pb;
	struct ps_report head;
	bool explicit_dag = a->dag_file != NULL;
	struct cli_dag_read how = { NULL, NULL };
	int status = PS_EXIT_VALID, rc;
	size_t count;

	if ((rc = cli_check_when(cmd, a, explicit_dag, errout)))
		return rc;
	if (explicit_dag && !a->given[OPT_M])
		return cli_usage_error(cmd, errout, "-M is required");
	if (!explicit_dag && !(a->given[OPT_N] && a->given[OPT_D] && a->given[OPT_G] &&
			       a->given[OPT_M]))
		return cli_usage_error(cmd, errout,
				       "the parameters -n, -d, -g and -M are all required");
	rows = calloc(CLI_COMPARE_MAX_ROWS, sizeof(*rows));
	if (!rows) {
		fprintf(errout, "pebblesim: out of memory\n");
		return PS_EXIT_USAGE;
	}
	rc = explicit_dag ? cli_read_dag(a, &xdag, &how, errout)
			  : cli_build_attention(a, &att, false, errout);
	if (rc) {
		free(rows);
		return rc;
	}
	cli_problem(a, explicit_dag ? NULL : &att, explicit_dag ? &xdag : NULL, &pb);
	pb.progress = cli_progress_stream(errout);
	if (explicit_dag) {
		ps_report_init_explicit(&head, &xdag, a->dag_file, a->M);
		head.dag_format = how.format;
		head.dag_note = how.note;
		count = explicit_rows(&pb, rows);
	} else {
		ps_report_init(&head, &att, a->M);
		count = attention_rows(&att, &pb, rows);
	}
	for (size_t k = 0; k < count; k++)
		if (rows[k].ran && (!rows[k].rep.valid || ps_report_bound_violated(&rows[k].rep)))
			status = PS_EXIT_INVALID;
	qsort(rows, count, sizeof(rows[0]), by_io);
	cli_compare_print(&head, rows, count, a->json, out);
	if (explicit_dag)
		ps_explicit_free(&xdag);
	else
		ps_attention_free(&att);
	free(rows);
	return status;
}

const struct cli_help compare_help = {
	"compare -n N -d D -g G -M M [--no-normalize] [--json]\n"
	"       pebblesim compare --dag FILE|- -M M [--json]",
	"every strategy on the same DAG through the engine, side by side, best first",
	"Runs every strategy of the attention DAG (best excepted: it is the best\n"
	"row; the move-by-move baselines only up to 20 million products), and\n"
	"each tiling that takes --sizes again with tuned sizes (NAME/tuned),\n"
	"through the engine on the same DAG and prints one row each, best first: valid,\n"
	"loads, saves, I/O, peak red pebbles, I/O over its upper bound and over the\n"
	"lower bound, run time; then those that do not run, with the reason. With\n"
	"--dag, the rows are the policies for a DAG from a file, lru and belady,\n"
	"each over the topo and dfs orders.\n",
	"  pebblesim compare -n 1024 -d 16 -g 5 -M 2048\n"
	"      every strategy side by side on a Case III instance\n"
	"  pebblesim compare -n 64 -d 4 -g 2 -M 100 --json\n"
	"      the rows as JSON, each with n, d, g and M\n"
	"  pebblesim compare --dag examples/tree.graphml -M 4\n"
	"      lru and belady in both orders on a binary tree\n",
};
