/*
 * Sweeps: ranges and their refusals, rows identical whatever the number
 * of jobs, shards that merge back into the whole, crossovers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/polynomial.h"
#include "pebblesim/sweep.h"
#include "tests.h"

START_TEST(test_ranges)
{
	struct ps_sweep_range r;
	struct ps_error err;
	uint64_t v[16];

	ck_assert_int_eq(ps_sweep_range_parse('n', "1k:64k:x2", &r, &err), 0);
	ck_assert_uint_eq(ps_sweep_points(&r, v, 16), 7);
	ck_assert_uint_eq(v[0], 1024);
	ck_assert_uint_eq(v[6], 65536);
	ck_assert_int_eq(ps_sweep_range_parse('g', "1:6", &r, &err), 0);
	ck_assert_uint_eq(ps_sweep_points(&r, v, 16), 6);
	ck_assert_int_eq(ps_sweep_range_parse('d', "8:20:+5", &r, &err), 0);
	ck_assert_uint_eq(ps_sweep_points(&r, v, 16), 3); /* 8, 13, 18 */
	ck_assert_uint_eq(v[2], 18);
	ck_assert_int_eq(ps_sweep_range_parse('M', "2^10:2^12:x2", &r, &err), 0);
	ck_assert_uint_eq(ps_sweep_points(&r, v, 16), 3);
	/* refusals */
	ck_assert_int_eq(ps_sweep_range_parse('n', "64:8", &r, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "-n 64:8: lo = 64 is above hi = 8");
	ck_assert_int_eq(ps_sweep_range_parse('n', "8:64:x1", &r, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "-n 8:64:x1: a geometric step is x2 or more");
	ck_assert_int_eq(ps_sweep_range_parse('n', "8:64:+0", &r, &err), PS_EINPUT);
	ck_assert_int_eq(ps_sweep_range_parse('n', "0:64", &r, &err), PS_EINPUT);
	ck_assert_int_eq(ps_sweep_range_parse('n', "1:100000", &r, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "-n 1:100000: more than 4096 points");
	ck_assert_int_eq(ps_sweep_range_parse('n', "a:b", &r, &err), PS_EINPUT);
	ck_assert_int_eq(ps_sweep_range_parse('n', "8", &r, &err), PS_EINPUT);
	ck_assert_int_eq(ps_sweep_range_parse('n', "8:9223372036854775808", &r, &err), PS_EINPUT);
}
END_TEST

static void spec_of(struct ps_sweep_spec *spec, bool predict, unsigned jobs)
{
	memset(spec, 0, sizeof(*spec));
	spec->n = 0;
	spec->d = 4;
	spec->g = 2;
	spec->M = 200;
	spec->normalize = true;
	spec->labels[0] = "flash";
	spec->labels[1] = "case";
	spec->labels[2] = "best";
	spec->labels[3] = "generic";
	spec->label_count = 4;
	spec->predict = predict;
	spec->jobs = jobs;
	ck_assert_int_eq(ps_sweep_range_parse('n', "4:64:x2", &spec->range, NULL), 0);
}

/* Rows without their run times, which differ from run to run. */
static void strip_times(struct ps_sweep_row *rows, size_t count)
{
	for (size_t k = 0; k < count; k++)
		rows[k].seconds = 0;
}

START_TEST(test_jobs_give_the_same_rows)
{
	for (int predict = 0; predict <= 1; predict++) {
		struct ps_sweep_spec one, two;
		struct ps_sweep_row *a, *b;
		size_t na, nb;
		struct ps_error err;

		spec_of(&one, predict, 1);
		spec_of(&two, predict, 3);
		ck_assert_int_eq(ps_sweep_run(&one, &a, &na, &err), 0);
		ck_assert_int_eq(ps_sweep_run(&two, &b, &nb, &err), 0);
		ck_assert_uint_eq(na, 5 * 4);
		ck_assert_uint_eq(na, nb);
		strip_times(a, na);
		strip_times(b, nb);
		ck_assert_mem_eq(a, b, na * sizeof(*a));
		for (size_t k = 0; k < na; k++) {
			ck_assert_msg(a[k].ran, "%s n=%llu: %s", a[k].label,
				      (unsigned long long)a[k].n, a[k].why);
			ck_assert(a[k].simulated == !predict);
			ck_assert(predict || a[k].valid);
			ck_assert_uint_eq(a[k].io, a[k].predicted_io);
			ck_assert_str_eq(a[k].dag, strcmp(a[k].label, "flash") ?
					 "approx-attention" : "exact-attention");
		}
		free(a);
		free(b);
	}
}
END_TEST

START_TEST(test_shards_merge_into_the_whole)
{
	struct ps_sweep_spec spec;
	struct ps_sweep_row *whole, *part, *merged = NULL;
	size_t nw, np, nm = 0;
	struct ps_error err;
	char param = 0;

	spec_of(&spec, true, 1);
	ck_assert_int_eq(ps_sweep_run(&spec, &whole, &nw, &err), 0);
	for (unsigned k = 0; k < 2; k++) {
		FILE *f = tmpfile();

		spec.shard = k;
		spec.shards = 2;
		ck_assert_int_eq(ps_sweep_run(&spec, &part, &np, &err), 0);
		ck_assert_int_eq(ps_sweep_write_csv(f, part, np), 0);
		rewind(f);
		ck_assert_int_eq(ps_sweep_read_csv(f, "shard.csv", &merged, &nm, &param, &err), 0);
		fclose(f);
		free(part);
	}
	ck_assert_int_eq(param, 'n');
	ck_assert_uint_eq(nm, nw);
	ps_sweep_sort(merged, nm);
	ps_sweep_sort(whole, nw);
	for (size_t k = 0; k < nw; k++) {
		ck_assert_str_eq(merged[k].label, whole[k].label);
		ck_assert_str_eq(merged[k].strategy, whole[k].strategy);
		ck_assert_uint_eq(merged[k].n, whole[k].n);
		ck_assert_uint_eq(merged[k].io, whole[k].io);
		ck_assert_double_eq(merged[k].lower, whole[k].lower);
	}
	free(whole);
	free(merged);
}
END_TEST

START_TEST(test_crossovers)
{
	struct ps_sweep_row rows[8];
	struct ps_crossover c[4];

	/* a dips below at 2, rises above at 4, stays below from 8 on */
	test_sweep_row(&rows[0], "flash", 2, 100);
	test_sweep_row(&rows[1], "a", 2, 90);
	test_sweep_row(&rows[2], "flash", 4, 200);
	test_sweep_row(&rows[3], "a", 4, 250);
	test_sweep_row(&rows[4], "flash", 8, 400);
	test_sweep_row(&rows[5], "a", 8, 300);
	test_sweep_row(&rows[6], "b", 8, 500);
	test_sweep_row(&rows[7], "flash", 16, 800);
	ck_assert_uint_eq(ps_sweep_crossovers(rows, 8, "flash", c, 4), 2);
	ck_assert_str_eq(c[0].label, "a");
	ck_assert(c[0].found);
	ck_assert_uint_eq(c[0].at, 8);
	/* every maximal interval: [2, 2] and [8, 8], 4 between them above */
	ck_assert_uint_eq(c[0].interval_count, 2);
	ck_assert_uint_eq(c[0].intervals[0].from, 2);
	ck_assert_uint_eq(c[0].intervals[0].to, 2);
	ck_assert_uint_eq(c[0].intervals[1].from, 8);
	ck_assert_uint_eq(c[0].intervals[1].to, 8);
	ck_assert(!c[0].refined);
	ck_assert_str_eq(c[1].label, "b");
	ck_assert(!c[1].found);
	ck_assert_uint_eq(c[1].interval_count, 0);
}
END_TEST

/* sweep --values: each approximate row carries P's eta on its interval,
 * the bound it implies beside the measured epsilon and never below it,
 * through the CSV and back; a CSV written before the columns eta and
 * bound reads without them. */
START_TEST(test_values_eta_and_bound)
{
	struct ps_sweep_spec spec;
	struct ps_sweep_row *rows, *back = NULL;
	size_t count, nb = 0, bounded = 0;
	struct ps_error err;
	char param = 0, line[1024];
	FILE *f = tmpfile(), *old = tmpfile();

	memset(&spec, 0, sizeof(spec));
	spec.n = 16;
	spec.d = 4;
	spec.M = 200;
	spec.normalize = true;
	spec.jobs = 1;
	spec.labels[0] = "resident";
	spec.labels[1] = "flash";
	spec.label_count = 2;
	spec.values = true;
	spec.inputs.seed = 1;
	spec.inputs.entry_bound = 0.5;
	spec.inputs.polynomial = PS_POLYNOMIAL_CHEBYSHEV;
	ck_assert_int_eq(ps_sweep_range_parse('g', "1:4", &spec.range, &err), 0);
	ck_assert_int_eq(ps_sweep_run(&spec, &rows, &count, &err), 0);
	ck_assert_uint_eq(count, 8);
	for (size_t k = 0; k < count; k++) {
		const struct ps_sweep_row *r = &rows[k];
		struct ps_polynomial p;

		ck_assert(r->ran && r->has_values);
		if (!strcmp(r->label, "flash")) {
			ck_assert(r->eta < 0 && r->bound < 0);
			continue;
		}
		/* beta = B^2 sqrt d = 0.5 */
		ck_assert_int_eq(ps_polynomial_make(&p, PS_POLYNOMIAL_CHEBYSHEV, (unsigned)r->g, 0.5, &err), 0);
		ck_assert_double_eq(r->eta, p.eta);
		if (r->bound >= 0) {
			ck_assert(r->epsilon <= r->bound);
			bounded++;
		}
	}
	ck_assert_uint_ge(bounded, 3);
	ck_assert_int_eq(ps_sweep_write_csv(f, rows, count), 0);
	rewind(f);
	ck_assert_int_eq(ps_sweep_read_csv(f, "values.csv", &back, &nb, &param, &err), 0);
	ck_assert_uint_eq(nb, count);
	for (size_t k = 0; k < count; k++) {
		ck_assert_double_eq_tol(back[k].eta, rows[k].eta, 1e-6 * fabs(rows[k].eta) + 1e-300);
		ck_assert_double_eq_tol(back[k].bound, rows[k].bound, 1e-6 * fabs(rows[k].bound) + 1e-300);
	}
	free(back);
	/* the same CSV without eta and bound (its 23rd and 24th columns) and
	 * what follows them, as written before them */
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		char *end = line;

		for (int c = 0; c < 22; c++)
			end = strchr(end, ',') + 1;
		end[-1] = '\0';
		fprintf(old, "%s\n", line);
	}
	rewind(old);
	back = NULL;
	nb = 0;
	param = 0;
	ck_assert_int_eq(ps_sweep_read_csv(old, "old.csv", &back, &nb, &param, &err), 0);
	ck_assert_uint_eq(nb, count);
	for (size_t k = 0; k < count; k++) {
		ck_assert(back[k].has_values);
		ck_assert_double_eq_tol(back[k].epsilon, rows[k].epsilon, 1e-6 * rows[k].epsilon + 1e-300);
		ck_assert(back[k].eta < 0 && back[k].bound < 0);
	}
	free(back);
	free(rows);
	fclose(f);
	fclose(old);
}
END_TEST

Suite *sweep_suite(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc = tcase_create("sweep");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_jobs_give_the_same_rows);
	tcase_add_test(tc, test_shards_merge_into_the_whole);
	tcase_add_test(tc, test_crossovers);
	tcase_add_test(tc, test_values_eta_and_bound);
	suite_add_tcase(s, tc);
	return s;
}
