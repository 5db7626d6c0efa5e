/*
 * make golden: recomputes tests/golden/io_counts.json, the exact counts of
 * every strategy on a grid of parameters across the four cases, and of
 * the tilings with --sizes tuned ("sizes": "tuned"), loads and saves
 * also by array ("by_array", the report's breakdown). The file
 * is data the tests compare with exactly; regenerate it only for a
 * deliberate change, and review its diff like code.
 *
 *   pebblesim-golden OUT.json
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pebblesim/attention.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"

struct point {
	uint64_t n, d, g, M;
	int normalize;
};

static const struct point grid[] = {
	/* Case I: d r <= M/4 */
	{ 32, 4, 2, 256, 1 },
	{ 16, 3, 3, 512, 1 },
	{ 20, 2, 1, 64, 1 },
	/* Case II: some w >= g with w tau(w) <= M/4 */
	{ 64, 4, 2, 100, 1 },
	{ 48, 8, 2, 256, 1 },
	{ 64, 16, 3, 8192, 1 },
	{ 32, 4, 2, 100, 0 },
	/* Case III: M >= 4 g^2 */
	{ 16, 16, 5, 2048, 1 },
	{ 32, 7, 3, 64, 1 },
	/* Case IV */
	{ 64, 8, 3, 16, 1 },
	{ 32, 6, 4, 24, 1 },
	{ 64, 8, 3, 16, 0 },
};

/* Runs st on att with --sizes (NULL: the proof's) and appends its counts;
 * 0, or 1 after saying why it failed. */
static int add_entry(json_t *entries, const struct ps_attention *att,
		     uint64_t M, const struct ps_strategy *st, const char *sizes)
{
	struct ps_problem pb = { .att = att, .M = M, .sizes = sizes };
	struct ps_report rep;
	struct ps_error err;
	json_t *entry, *by_array;
	const char *name;
	unsigned a;
	int rc;

	if (M < ps_strategy_min_memory(st, att))
		return 0;
	ps_error_clear(&err);
	rc = ps_run(&pb, st, NULL, &rep, &err);
	/* naive-belady's limit on the next uses it keeps (cache.h): the
	 * entry is left out, as the tests leave it out */
	if (rc == PS_ENOMEM && (st->flags & PS_STRATEGY_BASELINE)) {
		fprintf(stderr, "pebblesim-golden: %s on n = %llu, d = %llu, g = %llu left out: %s\n",
			st->name, (unsigned long long)att->n,
			(unsigned long long)att->d, (unsigned long long)att->g,
			err.msg);
		return 0;
	}
	if (rc || !rep.valid) {
		fprintf(stderr, "pebblesim-golden: %s on n = %llu: %s%s\n",
			st->name, (unsigned long long)att->n, err.msg,
			rep.violation);
		return 1;
	}
	/* the loads and saves of each array, the cache policies' included */
	by_array = json_object();
	for (unsigned k = 0; (name = ps_dag_array_at(&att->dag, k, &a)); k++)
		json_object_set_new(by_array, name, json_pack("{s:I, s:I}",
			"loads", (json_int_t)rep.counts.by_array[a].loads,
			"saves", (json_int_t)rep.counts.by_array[a].saves));
	entry = json_pack("{s:s, s:I, s:I, s:I, s:b, s:I, s:s, s:I, s:I, s:I, s:I}",
			  "strategy", st->name, "n", (json_int_t)att->n,
			  "d", (json_int_t)att->d, "g", (json_int_t)att->g,
			  "normalize", att->normalize, "M", (json_int_t)M,
			  "case", rep.case_name,
			  "loads", (json_int_t)rep.counts.loads,
			  "saves", (json_int_t)rep.counts.saves,
			  "peak_red", (json_int_t)rep.counts.peak_red,
			  "macs", (json_int_t)rep.counts.macs);
	if (sizes)
		json_object_set_new(entry, "sizes", json_string(sizes));
	json_object_set_new(entry, "by_array", by_array);
	json_array_append_new(entries, entry);
	return 0;
}

/* colpass alone at the points of least known I/O that stay quick (the
 * others are in make bench): at most 6,144, 16,384, 120,832, 483,328 */
static const struct point targets[] = {
	{ 128, 6, 2, 100, 1 },
	{ 256, 8, 3, 740, 1 },
	{ 1024, 16, 3, 8192, 1 },
	{ 4096, 16, 3, 8192, 1 },
};

#define GRID (sizeof(grid) / sizeof(grid[0]))
#define TARGETS (sizeof(targets) / sizeof(targets[0]))

int main(int argc, char **argv)
{
	json_t *entries = json_array();

	if (argc != 2) {
		fprintf(stderr, "usage: pebblesim-golden OUT.json\n");
		return 2;
	}
	/* the proof's sizes for every strategy, then the tuned sizes of the
	 * tilings that take --sizes, then colpass alone at its targets */
	for (int pass = 0; pass < 3; pass++) {
		const struct point *points = pass == 2 ? targets : grid;
		const size_t count = pass == 2 ? TARGETS : GRID;

		for (size_t k = 0; k < count; k++) {
			struct ps_attention_params p = {
				.n = points[k].n, .d = points[k].d, .g = points[k].g,
				.normalize = points[k].normalize != 0,
			};
			struct ps_attention att;
			struct ps_error err;

			if (ps_attention_init(&att, &p, &err)) {
				fprintf(stderr, "pebblesim-golden: %s\n", err.msg);
				return 1;
			}
			for (size_t s = 0; s < ps_strategy_count; s++) {
				const struct ps_strategy *st = ps_strategies[s];

				if ((pass == 1 && !ps_strategy_takes(st, PS_TAKES_SIZES)) ||
				    (pass == 2 && strcmp(st->name, "colpass")))
					continue;
				if (add_entry(entries, &att, points[k].M, st,
					      pass == 1 ? "tuned" : NULL))
					return 1;
			}
			ps_attention_free(&att);
		}
	}
	if (json_dump_file(entries, argv[1], JSON_INDENT(1) | JSON_PRESERVE_ORDER)) {
		fprintf(stderr, "pebblesim-golden: cannot write '%s'\n", argv[1]);
		return 1;
	}
	printf("%zu entries written to %s\n", json_array_size(entries), argv[1]);
	json_decref(entries);
	return 0;
}
