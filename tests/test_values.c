/*
 * Runs with values (MODEL.md section 6, docs/VALUES.md): every strategy of
 * both DAGs against the direct evaluation on small grids, a 2 x 1 case
 * computed by hand, foreign traces written by a generator of this file
 * (set operations and elementary moves, a sum saved, dropped and resumed),
 * and .npy files read back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/npy.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "pebblesim/trace.h"
#include "pebblesim/values.h"
#include "tests.h"

static const struct ps_values_inputs random_inputs = { NULL, NULL, NULL, 7, 1.0, PS_POLYNOMIAL_TAYLOR, 0.0 };

/* Runs s with values; false when s does not apply to (att, M). */
static bool run_with_values(const struct ps_attention *att, uint64_t M,
			    const struct ps_strategy *s,
			    const struct ps_values_inputs *in,
			    struct ps_values *vals, struct ps_report *rep)
{
	struct ps_problem pb = { .att = att, .M = M, .values = vals };
	struct ps_plan plan;
	struct ps_error err;

	if (M < ps_strategy_min_memory(s, att) || ps_strategy_plan(s, &pb, &plan, &err))
		return false;
	ck_assert_int_eq(ps_values_init(vals, att, in, &err), 0);
	ck_assert_msg(ps_run(&pb, s, NULL, rep, &err) == 0, "%s: %s", s->name, err.msg);
	return true;
}

/* Every strategy of both DAGs, small grids: outputs at rounding level
 * from the direct evaluation. */
START_TEST(test_every_strategy_matches_direct)
{
	static const uint64_t ns[] = { 1, 5, 12 }, ds[] = { 1, 3 }, Ms[] = { 24, 60, 400 };
	unsigned runs = 0;

	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];
		const bool exact = s->flags & PS_STRATEGY_EXACT;

		if (s->flags & PS_STRATEGY_EXPLICIT)
			continue;
		for (size_t a = 0; a < 3; a++)
			for (size_t b = 0; b < 2; b++)
				for (uint64_t g = 0; g <= (exact ? 0 : 3); g++)
					for (int norm = 0; norm <= 1; norm++)
						for (size_t c = 0; c < 3; c++) {
							struct ps_attention att;
							struct ps_values vals;
							struct ps_report rep;

							if (exact)
								test_exact_attention(&att, ns[a], ds[b], norm);
							else
								test_attention(&att, ns[a], ds[b], g, norm);
							if (run_with_values(&att, Ms[c], s, &random_inputs, &vals, &rep)) {
								ck_assert_msg(rep.valid && rep.has_values,
									      "%s n=%llu d=%llu g=%llu M=%llu: %s", s->name,
									      (unsigned long long)ns[a], (unsigned long long)ds[b],
									      (unsigned long long)g, (unsigned long long)Ms[c],
									      rep.violation);
								ck_assert_msg(rep.values.error_vs_direct <= 1e-13 * (1 + rep.values.scale) &&
									      !rep.values.failed,
									      "%s n=%llu d=%llu g=%llu M=%llu: %s %.17g vs %.17g",
									      s->name, (unsigned long long)ns[a],
									      (unsigned long long)ds[b], (unsigned long long)g,
									      (unsigned long long)Ms[c], rep.values.worst,
									      rep.values.worst_pebbled, rep.values.worst_direct);
								ck_assert(rep.values.has_softmax == (norm != 0));
								if (exact && norm)
									ck_assert(rep.values.error_vs_softmax < 1e-13);
								runs++;
								ps_values_free(&vals);
							}
							ps_attention_free(&att);
						}
	}
	ck_assert_uint_gt(runs, 200);
}
END_TEST

/* Rows enough for the direct evaluation's two threads (n >= 256), both
 * DAGs: every row of either half at rounding level from the pebbled one,
 * and epsilon where the outputs are exact. */
START_TEST(test_direct_evaluation_in_two_halves)
{
	for (int exact = 0; exact <= 1; exact++) {
		struct ps_attention att;
		struct ps_values vals;
		struct ps_report rep;
		const struct ps_strategy *s = ps_strategy_find(exact ? "flash" : "keylemma");

		if (exact)
			test_exact_attention(&att, 301, 3, 1);
		else
			test_attention(&att, 301, 3, 2, 1);
		ck_assert(run_with_values(&att, 4096, s, &random_inputs, &vals, &rep));
		ck_assert(rep.valid && rep.has_values && !rep.values.failed);
		ck_assert_double_le(rep.values.error_vs_direct, 1e-13 * (1 + rep.values.scale));
		if (exact)
			ck_assert_double_lt(rep.values.error_vs_softmax, 1e-13);
		ps_values_free(&vals);
		ps_attention_free(&att);
	}
}
END_TEST

static char *temp_file(const char *suffix)
{
	char base[] = "/tmp/pebblesim-values-XXXXXX";
	char *path = malloc(64);
	int fd = mkstemp(base);

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(path, 64, "%s%s", base, suffix);
	ck_assert_int_eq(rename(base, path), 0);
	return path;
}

static char *write_matrix(const double *x, uint64_t rows, uint64_t cols)
{
	char *path = temp_file(".npy");
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ps_npy_write(f, x, rows, cols), 0);
	fclose(f);
	return path;
}

/*
 * n = 2, d = 1, g = 2 by hand: x = q k (sqrt d = 1), P(x) = 1 + x + x^2/2,
 * U1[i,(0,0)] = q^2 / 2! and U2[j,(0,0)] = k^2.
 *   q = (1, 2), k = (1, 0.5), v = (3, 6):
 *   row 0: P(1) = 2.5, P(0.5) = 1.625: A = (7.5 + 9.75) / 4.125 = 46/11
 *   row 1: P(2) = 5, P(1) = 2.5:       A = (15 + 15) / 7.5 = 4
 */
START_TEST(test_two_by_one_by_hand)
{
	const double q[2] = { 1, 2 }, k[2] = { 1, 0.5 }, v[2] = { 3, 6 };
	char *qp = write_matrix(q, 2, 1), *kp = write_matrix(k, 2, 1), *vp = write_matrix(v, 2, 1);
	struct ps_values_inputs in = { qp, kp, vp, 0, 0, PS_POLYNOMIAL_TAYLOR, 0.0 };
	const struct ps_strategy *s = ps_strategy_find("naive");
	struct ps_attention att;
	struct ps_values vals;
	struct ps_report rep;
	double soft0, soft1;

	test_attention(&att, 2, 1, 2, 1);
	ck_assert(run_with_values(&att, 16, s, &in, &vals, &rep));
	ck_assert(rep.valid && rep.has_values);
	ck_assert_double_eq_tol(vals.outputs[0], 46.0 / 11.0, 1e-15);
	ck_assert_double_eq_tol(vals.outputs[1], 4.0, 1e-15);
	/* the coefficients of U1: 1, q, q^2 / 2 */
	ck_assert_double_eq(vals.coef[0], 1.0);
	ck_assert_double_eq(vals.coef[1], 1.0);
	ck_assert_double_eq(vals.coef[2], 0.5);
	/* epsilon against softmax(x) v by hand */
	soft0 = (3 * exp(1.0) + 6 * exp(0.5)) / (exp(1.0) + exp(0.5));
	soft1 = (3 * exp(2.0) + 6 * exp(1.0)) / (exp(2.0) + exp(1.0));
	ck_assert_double_eq_tol(rep.values.error_vs_softmax,
				fmax(fabs(46.0 / 11.0 - soft0), fabs(4.0 - soft1)), 1e-14);
	ps_values_free(&vals);
	ps_attention_free(&att);
	unlink(qp);
	unlink(kp);
	unlink(vp);
	free(qp);
	free(kp);
	free(vp);
}
END_TEST

/* The multinomial split for d = 2, g = 3: U1 U2^T = P(q.k / sqrt 2). */
START_TEST(test_coefficients_split)
{
	struct ps_attention att;
	struct ps_values vals;
	struct ps_error err;
	const double q[2] = { 0.3, -0.7 }, k[2] = { 0.9, 0.4 };
	double x = (q[0] * k[0] + q[1] * k[1]) / sqrt(2.0), p = 1 + x + x * x / 2 + x * x * x / 6;
	double dot = 0;

	test_attention(&att, 1, 2, 3, 1);
	ck_assert_int_eq(ps_values_init(&vals, &att, &random_inputs, &err), 0);
	for (uint64_t m = 0; m < att.r; m++) {
		const uint32_t *idx = ps_monomial_indices(&att.mono, m);
		double qm = 1, km = 1;

		for (unsigned t = 0; t < att.mono.degree[m]; t++) {
			qm *= q[idx[t]];
			km *= k[idx[t]];
		}
		dot += vals.coef[m] * qm * km;
	}
	ck_assert_double_eq_tol(dot, p, 1e-15);
	ps_values_free(&vals);
	ps_attention_free(&att);
}
END_TEST

/* ---- a foreign trace, written here -------------------------------------- */

static void line(FILE *f, const char *text)
{
	fprintf(f, "%s\n", text);
}

/*
 * Approximate attention n = 3, d = 2, g = 2 (r = 6), normalised, by plain
 * loops: everything loaded, H by set operations with a partial H saved,
 * dropped and resumed, N by elementary macs, A computed and saved.
 */
static void write_approx_trace(FILE *f, bool elementary)
{
	const int n = 3, d = 2, r = 6, nb = 3;

	line(f, "{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\",\"n\":3,\"d\":2,\"g\":2,\"normalize\":true},\"M\":1000,\"strategy\":\"hand\"}");
	line(f, "{\"op\":\"load\",\"kind\":\"Q\",\"i\":{\"lo\":0,\"hi\":3},\"a\":{\"lo\":0,\"hi\":2}}");
	line(f, "{\"op\":\"load\",\"kind\":\"K\",\"j\":[0,1,2],\"a\":{\"lo\":0,\"hi\":2}}");
	line(f, "{\"op\":\"load\",\"kind\":\"V\",\"j\":{\"lo\":0,\"hi\":3},\"b\":{\"lo\":0,\"hi\":2}}");
	line(f, "{\"op\":\"compute\",\"kind\":\"U2\",\"j\":{\"lo\":0,\"hi\":3},\"m\":{\"lo\":0,\"hi\":6}}");
	/* H over j = 0, 1; saved partial, dropped, loaded, then j = 2 */
	line(f, "{\"op\":\"mac\",\"into\":\"H\",\"j\":[0,1],\"m\":{\"lo\":0,\"hi\":6},\"b\":{\"lo\":0,\"hi\":3}}");
	line(f, "{\"op\":\"save\",\"kind\":\"H\",\"m\":{\"lo\":0,\"hi\":6},\"b\":{\"lo\":0,\"hi\":3}}");
	line(f, "{\"op\":\"delete\",\"kind\":\"H\",\"m\":{\"lo\":0,\"hi\":6},\"b\":{\"lo\":0,\"hi\":3}}");
	line(f, "{\"op\":\"load\",\"kind\":\"H\",\"m\":{\"lo\":0,\"hi\":6},\"b\":{\"lo\":0,\"hi\":3}}");
	line(f, "{\"op\":\"mac\",\"into\":\"H\",\"j\":2,\"m\":{\"lo\":0,\"hi\":6},\"b\":{\"lo\":0,\"hi\":3}}");
	/* empty blocks change nothing */
	line(f, "{\"op\":\"mac\",\"into\":\"H\",\"j\":{\"lo\":0,\"hi\":0},\"m\":{\"lo\":0,\"hi\":6},\"b\":{\"lo\":0,\"hi\":3}}");
	line(f, "{\"op\":\"mac\",\"into\":\"N\",\"i\":0,\"m\":{\"lo\":0,\"hi\":6},\"b\":[]}");
	line(f, "{\"op\":\"delete\",\"kind\":\"U2\",\"j\":{\"lo\":0,\"hi\":3},\"m\":{\"lo\":0,\"hi\":6}}");
	for (int i = 0; i < n; i++) {
		if (elementary) {
			/* monomials backwards: the order of a sum is the trace's */
			for (int m = r - 1; m >= 0; m--) {
				fprintf(f, "{\"op\":\"compute\",\"kind\":\"U1\",\"i\":%d,\"m\":%d}\n", i, m);
				for (int b = 0; b < nb; b++)
					fprintf(f, "{\"op\":\"mac\",\"into\":\"N\",\"i\":%d,\"m\":%d,\"b\":%d}\n", i, m, b);
				fprintf(f, "{\"op\":\"delete\",\"kind\":\"U1\",\"i\":%d,\"m\":%d}\n", i, m);
			}
		} else {
			fprintf(f, "{\"op\":\"mac\",\"into\":\"N\",\"i\":%d,\"m\":[5,0,3,1,4,2],\"b\":{\"lo\":0,\"hi\":3},\"fuse\":true}\n", i);
		}
		for (int b = 0; b < d; b++) {
			fprintf(f, "{\"op\":\"compute\",\"kind\":\"A\",\"i\":%d,\"b\":%d}\n", i, b);
			fprintf(f, "{\"op\":\"save\",\"kind\":\"A\",\"i\":%d,\"b\":%d}\n", i, b);
			fprintf(f, "{\"op\":\"delete\",\"kind\":\"A\",\"i\":%d,\"b\":%d}\n", i, b);
		}
		fprintf(f, "{\"op\":\"delete\",\"kind\":\"N\",\"i\":%d,\"b\":{\"lo\":0,\"hi\":3}}\n", i);
	}
}

/* Exact attention n = 2, d = 2, normalised, move by move. */
static void write_exact_trace(FILE *f)
{
	line(f, "{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"exact-attention\",\"n\":2,\"d\":2,\"normalize\":true},\"M\":100,\"strategy\":\"hand\"}");
	for (int i = 0; i < 2; i++)
		for (int a = 0; a < 2; a++) {
			fprintf(f, "{\"op\":\"load\",\"kind\":\"Q\",\"i\":%d,\"a\":%d}\n", i, a);
			fprintf(f, "{\"op\":\"load\",\"kind\":\"K\",\"j\":%d,\"a\":%d}\n", i, a);
			fprintf(f, "{\"op\":\"load\",\"kind\":\"V\",\"j\":%d,\"b\":%d}\n", i, a);
		}
	for (int i = 0; i < 2; i++) {
		for (int j = 1; j >= 0; j--) {
			for (int a = 0; a < 2; a++)
				fprintf(f, "{\"op\":\"mac\",\"into\":\"S\",\"i\":%d,\"j\":%d,\"a\":%d}\n", i, j, a);
			fprintf(f, "{\"op\":\"compute\",\"kind\":\"E\",\"i\":%d,\"j\":%d}\n", i, j);
			for (int b = 0; b < 3; b++)
				fprintf(f, "{\"op\":\"mac\",\"into\":\"O\",\"i\":%d,\"j\":%d,\"b\":%d}\n", i, j, b);
			fprintf(f, "{\"op\":\"delete\",\"kind\":\"E\",\"i\":%d,\"j\":%d}\n", i, j);
			fprintf(f, "{\"op\":\"delete\",\"kind\":\"S\",\"i\":%d,\"j\":%d}\n", i, j);
		}
		for (int b = 0; b < 2; b++) {
			fprintf(f, "{\"op\":\"compute\",\"kind\":\"A\",\"i\":%d,\"b\":%d}\n", i, b);
			fprintf(f, "{\"op\":\"save\",\"kind\":\"A\",\"i\":%d,\"b\":%d}\n", i, b);
		}
	}
}

static void replay_values(FILE *f, struct ps_replay *rep, struct ps_values *vals)
{
	struct ps_error err;

	rewind(f);
	ck_assert_msg(ps_trace_replay_values(f, "hand.jsonl", 0, NULL, NULL, false, &random_inputs,
					     vals, rep, &err) == 0, "%s", err.msg);
	ck_assert_msg(rep->valid, "%s", rep->violation);
	ck_assert(rep->has_values);
	ck_assert_msg(rep->values.error_vs_direct <= 1e-14, "%s: %.17g vs %.17g", rep->values.worst,
		      rep->values.worst_pebbled, rep->values.worst_direct);
	ck_assert(!rep->values.failed);
}

START_TEST(test_foreign_traces)
{
	double set_outputs[6];

	for (int elementary = 0; elementary <= 1; elementary++) {
		struct ps_replay rep;
		struct ps_values vals;
		FILE *f = tmpfile();

		write_approx_trace(f, elementary);
		replay_values(f, &rep, &vals);
		ck_assert(rep.values.has_softmax);
		/* the same numbers up to rounding, whichever order of m */
		for (int k = 0; k < 6; k++) {
			if (elementary)
				ck_assert_double_eq_tol(vals.outputs[k], set_outputs[k], 1e-14);
			else
				set_outputs[k] = vals.outputs[k];
		}
		ps_values_free(&vals);
		ps_replay_free(&rep);
		fclose(f);
	}
	{
		struct ps_replay rep;
		struct ps_values vals;
		FILE *f = tmpfile();

		write_exact_trace(f);
		replay_values(f, &rep, &vals);
		ck_assert(rep.values.error_vs_softmax <= 1e-14);
		ps_values_free(&vals);
		ps_replay_free(&rep);
		fclose(f);
	}
}
END_TEST

/* A trace that breaks a rule stops the values there: no report. */
START_TEST(test_invalid_trace_has_no_values)
{
	struct ps_replay rep;
	struct ps_values vals;
	struct ps_error err;
	FILE *f = tmpfile();

	line(f, "{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"exact-attention\",\"n\":2,\"d\":2,\"normalize\":true},\"M\":100}");
	line(f, "{\"op\":\"compute\",\"kind\":\"E\",\"i\":0,\"j\":0}");
	rewind(f);
	ck_assert_int_eq(ps_trace_replay_values(f, "bad.jsonl", 0, NULL, NULL, false, &random_inputs,
						&vals, &rep, &err), 0);
	ck_assert(!rep.valid);
	ck_assert(!rep.has_values);
	ps_values_free(&vals);
	ps_replay_free(&rep);
	fclose(f);
}
END_TEST

/* .npy: float32 and Fortran order read as the same matrix; refusals. */
static void expect_refused(const char *path, const char *why)
{
	struct ps_error err;
	double *x;
	uint64_t rows, cols;

	ck_assert_int_eq(ps_npy_load(path, 2, 3, &x, &rows, &cols, &err), PS_EINPUT);
	ck_assert_msg(strstr(err.msg, why) != NULL, "'%s' not in '%s'", why, err.msg);
	ck_assert_ptr_null(x);
}

START_TEST(test_npy_read)
{
	char *path = temp_file(".npy");
	const double c_order[6] = { 1, 2, 3, 4, 5, 6 };
	const double f_order[6] = { 1, 4, 2, 5, 3, 6 };
	const float f32[6] = { 1, 2, 3, 4, 5, 6 };
	struct ps_error err;
	double *x;
	uint64_t rows, cols;

	test_write_npy_raw(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }\n", c_order, 48);
	ck_assert_int_eq(ps_npy_load(path, 2, 3, &x, &rows, &cols, &err), 0);
	ck_assert(rows == 2 && cols == 3 && !memcmp(x, c_order, 48));
	free(x);
	test_write_npy_raw(path, "{\"shape\": (2, 3), \"fortran_order\": True, \"descr\": \"<f8\"}  \n", f_order, 48);
	ck_assert_int_eq(ps_npy_load(path, 2, 3, &x, &rows, &cols, &err), 0);
	ck_assert(!memcmp(x, c_order, 48));
	free(x);
	test_write_npy_raw(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", f32, 24);
	ck_assert_int_eq(ps_npy_load(path, 2, 3, &x, &rows, &cols, &err), 0);
	ck_assert(!memcmp(x, c_order, 48));
	free(x);
	/* refusals, each with its reason */
	test_write_npy_raw(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }\n", c_order, 48);
	expect_refused(path, "shape (3, 2) is not (2, 3)");
	test_write_npy_raw(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }\n", c_order, 48);
	expect_refused(path, "1 dimensions");
	test_write_npy_raw(path, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }\n", c_order, 48);
	expect_refused(path, "dtype '<i8'");
	test_write_npy_raw(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }\n", c_order, 40);
	expect_refused(path, "truncated");
	test_write_npy_raw(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }\n", f32, 24);
	expect_refused(path, "truncated");
	test_write_npy_raw(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", c_order, 48);
	expect_refused(path, "bytes after");
	test_write_npy_raw(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), 'x': 1}\n", c_order, 48);
	expect_refused(path, "unknown or repeated key 'x'");
	test_write_npy_raw(path, "{'descr': '<f8', 'fortran_order': False}\n", c_order, 48);
	expect_refused(path, "lacks 'shape'");
	test_write_npy_raw(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", c_order, 48);
	expect_refused(path, "newline");
	test_write_npy_raw(path, "not a header at all\n", c_order, 48);
	expect_refused(path, "not a dictionary");
	{
		/* a header length beyond the file */
		FILE *f = fopen(path, "wb");

		fwrite("\x93NUMPY\x01\x00\xff\x7f{'descr'", 1, 18, f);
		fclose(f);
		expect_refused(path, "truncated .npy header");
		f = fopen(path, "wb");
		fwrite("\x93NUMPX\x01\x00", 1, 8, f);
		fclose(f);
		expect_refused(path, "not a .npy file");
	}
	unlink(path);
	free(path);
}
END_TEST

Suite *values_suite(void)
{
	Suite *s = suite_create("values");
	TCase *tc = tcase_create("values");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_every_strategy_matches_direct);
	tcase_add_test(tc, test_direct_evaluation_in_two_halves);
	tcase_add_test(tc, test_two_by_one_by_hand);
	tcase_add_test(tc, test_coefficients_split);
	tcase_add_test(tc, test_foreign_traces);
	tcase_add_test(tc, test_invalid_trace_has_no_values);
	tcase_add_test(tc, test_npy_read);
	suite_add_tcase(s, tc);
	return s;
}
