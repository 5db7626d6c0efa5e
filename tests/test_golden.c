/*
 * Regression: every entry of tests/golden/io_counts.json recomputed and
 * compared exactly; every entry that moved is printed with how much, then
 * the test fails. `make golden` regenerates the file for a deliberate
 * change.
 *
 * PS_TEST_GRID=small (the sanitizer builds of .ci/run) recomputes the
 * entries of at most 200,000 products, which cover the four cases: the
 * 28 larger ones (n = 1024 and 4096, g = 5, the move-by-move baselines
 * at n = 64, d = 16) were five sixths of its time, and more than 300 s
 * under AddressSanitizer. make check recomputes every entry.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "tests.h"

static const char *golden_path(void)
{
	const char *path = getenv("PS_GOLDEN");

	return path ? path : "tests/golden/io_counts.json";
}

/* Prints a moved count; returns 1 when it moved. */
static int compare(const char *what, json_t *entry, const char *key,
		   uint64_t now)
{
	json_int_t was = json_integer_value(json_object_get(entry, key));

	if ((uint64_t)was == now)
		return 0;
	fprintf(stderr, "golden: %s: %s %lld -> %llu (%+lld)\n", what, key,
		(long long)was, (unsigned long long)now,
		(long long)now - (long long)was);
	return 1;
}

/* The same for the loads and saves of each array of dag; how many moved. */
static int compare_by_array(const char *what, const struct ps_dag *dag, json_t *by_array,
			    const struct ps_array_io *now)
{
	char where[192];
	const char *name;
	unsigned a;
	int moved = 0;

	for (unsigned k = 0; (name = ps_dag_array_at(dag, k, &a)); k++) {
		json_t *io = json_object_get(by_array, name);

		snprintf(where, sizeof(where), "%s, %s", what, name);
		moved += compare(where, io, "loads", now[a].loads);
		moved += compare(where, io, "saves", now[a].saves);
	}
	return moved;
}

START_TEST(test_golden_counts)
{
	static const char *const case_names[] = { "I", "II", "III", "IV" };
	json_error_t jerr;
	json_t *entries = json_load_file(golden_path(), 0, &jerr), *entry;
	size_t index;
	int moved = 0, cases[4] = { 0 };
	bool small = test_grid_small();
	size_t skipped = 0;

	ck_assert_msg(entries != NULL, "%s: %s", golden_path(), jerr.text);
	ck_assert_uint_ge(json_array_size(entries), 40);
	json_array_foreach(entries, index, entry) {
		struct ps_attention att;
		const struct ps_strategy *s =
			ps_strategy_find(json_string_value(json_object_get(entry, "strategy")));
		struct ps_problem pb;
		struct ps_report rep;
		struct ps_error err;
		char what[160];

		ck_assert_ptr_nonnull(s);
		test_attention(&att, json_integer_value(json_object_get(entry, "n")),
			       json_integer_value(json_object_get(entry, "d")),
			       json_integer_value(json_object_get(entry, "g")),
			       json_is_true(json_object_get(entry, "normalize")));
		if (small && att.n * att.r * att.nb > 200000) {
			ps_attention_free(&att);
			skipped++;
			continue;
		}
		memset(&pb, 0, sizeof(pb));
		pb.att = &att;
		pb.M = json_integer_value(json_object_get(entry, "M"));
		pb.sizes = json_string_value(json_object_get(entry, "sizes"));
		snprintf(what, sizeof(what), "%s n=%llu d=%llu g=%llu%s M=%llu%s",
			 s->name, (unsigned long long)att.n, (unsigned long long)att.d,
			 (unsigned long long)att.g, att.normalize ? "" : " unnormalised",
			 (unsigned long long)pb.M, pb.sizes ? " sizes tuned" : "");
		ck_assert_int_eq(ps_run(&pb, s, NULL, &rep, &err), 0);
		ck_assert_msg(rep.valid, "%s: %s", what, rep.violation);
		moved += compare(what, entry, "loads", rep.counts.loads);
		moved += compare(what, entry, "saves", rep.counts.saves);
		moved += compare(what, entry, "peak_red", rep.counts.peak_red);
		moved += compare(what, entry, "macs", rep.counts.macs);
		moved += compare_by_array(what, &att.dag, json_object_get(entry, "by_array"),
					  rep.counts.by_array);
		for (int c = 0; c < 4; c++)
			cases[c] += !strcmp(rep.case_name, case_names[c]);
		ps_attention_free(&att);
	}
	/* the small grid leaves out a few large entries, not most of them */
	ck_assert_uint_lt(skipped, index / 4);
	json_decref(entries);
	ck_assert_msg(moved == 0, "%d golden counts moved (listed above); if the change is deliberate, run make golden and review the diff",
		      moved);
	/* the grid covers the four cases */
	for (int c = 0; c < 4; c++)
		ck_assert_int_gt(cases[c], 0);
}
END_TEST

Suite *golden_suite(void)
{
	Suite *s = suite_create("golden");
	TCase *tc = tcase_create("io_counts");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_golden_counts);
	suite_add_tcase(s, tc);
	return s;
}
