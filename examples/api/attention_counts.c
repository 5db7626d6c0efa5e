/*
 * libpebblesim from a program of one's own: build the approximate-attention
 * DAG for n, d, g, run a strategy's pebbling sequence through the engine
 * under fast memory M, and print what the engine counted.
 *
 *   cc attention_counts.c $(pkg-config --cflags --libs pebblesim) -o attention_counts
 *   ./attention_counts [STRATEGY N D G M]      (default: keylemma 64 4 2 100)
 *
 * The counts are those of `pebblesim --strategy STRATEGY -n N -d D -g G -M M`:
 * the same library, the same engine.
 */
#include <stdio.h>
#include <stdlib.h>

#include <pebblesim/attention.h>
#include <pebblesim/run.h>
#include <pebblesim/strategy.h>

int main(int argc, char **argv)
{
	struct ps_attention_params params = { .n = 64, .d = 4, .g = 2, .normalize = true };
	const char *name = argc > 1 ? argv[1] : "keylemma";
	const struct ps_strategy *strategy;
	struct ps_attention att;
	struct ps_problem problem = { .M = 100 };
	struct ps_report report;
	struct ps_error err;

	if (argc != 1 && argc != 6) {
		fprintf(stderr, "usage: attention_counts [STRATEGY N D G M]\n");
		return 2;
	}
	if (argc == 6) {
		params.n = strtoull(argv[2], NULL, 10);
		params.d = strtoull(argv[3], NULL, 10);
		params.g = strtoull(argv[4], NULL, 10);
		problem.M = strtoull(argv[5], NULL, 10);
	}
	strategy = ps_strategy_find(name);
	if (!strategy) {
		fprintf(stderr, "attention_counts: no strategy '%s'\n", name);
		return 2;
	}
	/* the implicit DAG: nothing stored but its monomials */
	ps_error_clear(&err);
	if (ps_attention_init(&att, &params, &err)) {
		fprintf(stderr, "attention_counts: %s\n", err.msg);
		return 2;
	}
	/* plan, engine, the strategy's set operations, the end condition */
	problem.att = &att;
	if (ps_run(&problem, strategy, NULL, &report, &err)) {
		fprintf(stderr, "attention_counts: %s: %s\n", name, err.msg);
		ps_attention_free(&att);
		return 2;
	}
	printf("strategy %s\n", report.strategy);
	printf("valid %s\n", report.valid ? "true" : "false");
	printf("loads %llu\n", (unsigned long long)report.counts.loads);
	printf("saves %llu\n", (unsigned long long)report.counts.saves);
	printf("peak_red %llu\n", (unsigned long long)report.counts.peak_red);
	if (!report.valid)
		printf("violation %s\n", report.violation);
	ps_attention_free(&att);
	return report.valid ? 0 : 1;
}
