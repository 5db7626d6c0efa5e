/*
 * The polynomial replacing exp (include/pebblesim/polynomial.h,
 * docs/VALUES.md "The polynomial"): known values of eta, the interpolant
 * and the equioscillation, U1 U2^T = P(Q K^T / sqrt d) for each kind, the
 * outputs of every strategy against an evaluation written here, and the
 * attention bound against the measured epsilon with random inputs and with
 * scores at the interval's ends.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/polynomial.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "pebblesim/values.h"
#include "tests.h"

static void make(struct ps_polynomial *p, enum ps_polynomial_kind kind, unsigned g, double beta)
{
	struct ps_error err;

	ps_error_clear(&err);
	ck_assert_msg(ps_polynomial_make(p, kind, g, beta, &err) == 0, "%s", err.msg);
}

/* Known values: Taylor's coefficients, the minimax constant 1 / cosh beta
 * with eta = tanh beta, Taylor's eta at -beta; eta above the grid and
 * close to it. */
START_TEST(test_known_values)
{
	struct ps_polynomial p;
	struct ps_error err;

	make(&p, PS_POLYNOMIAL_TAYLOR, 4, 1.0);
	ck_assert(p.c[0] == 1.0 && p.c[1] == 1.0 && p.c[2] == 0.5 && p.c[4] == 1.0 / 24);
	/* 1 + x on [-1, 1]: worst at -1, |0 - e^-1| / e^-1 = 1 */
	make(&p, PS_POLYNOMIAL_TAYLOR, 1, 1.0);
	ck_assert(p.eta >= 1.0 && p.eta < 1.0 + 1e-3);
	for (double beta = 0.5; beta <= 4; beta *= 2) {
		make(&p, PS_POLYNOMIAL_MINIMAX, 0, beta);
		ck_assert(p.made == PS_POLYNOMIAL_MINIMAX);
		ck_assert_msg(fabs(p.c[0] - 1 / cosh(beta)) < 1e-12, "c_0 %.17g", p.c[0]);
		ck_assert(p.eta >= tanh(beta) && p.eta < tanh(beta) * 1.01);
	}
	for (int kind = 0; kind < PS_POLYNOMIAL_KIND_COUNT; kind++)
		for (unsigned g = 0; g <= 8; g++) {
			make(&p, kind, g, 1.0);
			ck_assert(p.eta >= p.eta_grid && p.eta <= p.eta_grid * 1.02 + 1e-15);
		}
	/* the refusals */
	ck_assert_int_eq(ps_polynomial_make(&p, PS_POLYNOMIAL_CHEBYSHEV, 31, 1.0, &err), PS_EINPUT);
	ck_assert_int_eq(ps_polynomial_make(&p, PS_POLYNOMIAL_MINIMAX, 3, 800.0, &err), PS_EINPUT);
	ck_assert_int_eq(ps_polynomial_make(&p, PS_POLYNOMIAL_TAYLOR, 3, -1.0, &err), PS_EINPUT);
	ck_assert_int_eq(ps_polynomial_parse("remez"), -1);
	ck_assert_int_eq(ps_polynomial_parse("minimax"), PS_POLYNOMIAL_MINIMAX);
}
END_TEST

/* Chebyshev interpolates exp at its g + 1 points; minimax is better than
 * Chebyshev, which is better than Taylor, and its error levels at g + 2
 * alternating extrema (the Chebyshev extrema are near them). */
START_TEST(test_fits)
{
	for (unsigned g = 1; g <= 10; g++)
		for (double beta = 0.25; beta <= 8; beta *= 4) {
			struct ps_polynomial t, c, m;

			make(&t, PS_POLYNOMIAL_TAYLOR, g, beta);
			make(&c, PS_POLYNOMIAL_CHEBYSHEV, g, beta);
			make(&m, PS_POLYNOMIAL_MINIMAX, g, beta);
			for (unsigned k = 0; k <= g; k++) {
				double x = beta * cos(acos(-1.0) * (2 * k + 1) / (2 * g + 2));

				ck_assert_msg(fabs(ps_polynomial_eval(&c, x) / exp(x) - 1) < 1e-12,
					      "g %u beta %g node %u", g, beta, k);
			}
			ck_assert_msg(m.made == PS_POLYNOMIAL_MINIMAX, "g %u beta %g: %s", g, beta, m.note);
			ck_assert(m.eta_grid <= c.eta_grid);
			ck_assert(beta > 1 || c.eta_grid <= t.eta_grid);
			/* the ends are extrema of opposite sign... */
			{
				double left = ps_polynomial_eval(&m, -beta) * exp(beta) - 1;
				double right = ps_polynomial_eval(&m, beta) * exp(-beta) - 1;

				ck_assert_msg(fabs(left) >= m.eta_grid * (1 - 1e-4) - 1e-15 && fabs(left) <= m.eta + 1e-15 &&
					      fabs(right) >= m.eta_grid * (1 - 1e-4) - 1e-15 && fabs(right) <= m.eta + 1e-15,
					      "g %u beta %g: %g %g eta %g", g, beta, left, right, m.eta_grid);
				ck_assert_msg(m.eta < 1e-12 || (left > 0) == (g % 2 == 0 ? right < 0 : right > 0),
					      "g %u beta %g: %g %g", g, beta, left, right);
			}
		}
}
END_TEST

static const struct ps_values_inputs seven = { NULL, NULL, NULL, 7, 1.0, PS_POLYNOMIAL_TAYLOR, 0.0 };

/* U1 U2^T = P(Q K^T / sqrt d) to rounding, for each kind, on a grid of d
 * and g: U1's coefficients c_l C(l; alpha) d^(-l/2) times U2's monomials. */
START_TEST(test_u1_u2_is_p)
{
	for (int kind = 0; kind < PS_POLYNOMIAL_KIND_COUNT; kind++)
		for (uint64_t d = 1; d <= 5; d += 2)
			for (uint64_t g = 0; g <= 5; g++) {
				struct ps_values_inputs in = seven;
				struct ps_attention att;
				struct ps_values vals;
				struct ps_error err;

				in.polynomial = (enum ps_polynomial_kind)kind;
				in.entry_bound = 1.5;
				test_attention(&att, 3, d, g, 1);
				ck_assert_int_eq(ps_values_init(&vals, &att, &in, &err), 0);
				for (uint64_t i = 0; i < 3; i++)
					for (uint64_t j = 0; j < 3; j++) {
						double sum = 0, size = 0, x = 0;

						for (uint64_t a = 0; a < d; a++)
							x += vals.q[i * d + a] * vals.k[j * d + a];
						x /= sqrt((double)d);
						for (uint64_t m = 0; m < att.r; m++) {
							const uint32_t *idx = ps_monomial_indices(&att.mono, m);
							double u1 = vals.coef[m], u2 = 1;

							for (unsigned t = 0; t < att.mono.degree[m]; t++) {
								u1 *= vals.q[i * d + idx[t]];
								u2 *= vals.k[j * d + idx[t]];
							}
							sum += u1 * u2;
							size += fabs(u1 * u2);
						}
						ck_assert_msg(fabs(sum - ps_polynomial_eval(&vals.poly, x)) <=
							      64 * DBL_EPSILON * (size + 1),
							      "%s d %llu g %llu: %.17g against %.17g",
							      ps_polynomial_name(kind), (unsigned long long)d,
							      (unsigned long long)g, sum,
							      ps_polynomial_eval(&vals.poly, x));
					}
				ps_values_free(&vals);
				ps_attention_free(&att);
			}
}
END_TEST

/* max |A - D~^-1 P(Q K^T / sqrt d) V|, P(x) from its coefficients by
 * powers (not Horner's rule), rows one at a time. */
static double independent_gap(const struct ps_values *vals)
{
	const struct ps_attention *att = vals->att;
	const uint64_t n = att->n, d = att->d;
	double gap = 0;

	for (uint64_t i = 0; i < n; i++) {
		double num[64] = { 0 }, den = 0;

		for (uint64_t j = 0; j < n; j++) {
			double x = 0, w = 0, power = 1;

			for (uint64_t a = 0; a < d; a++)
				x += vals->q[i * d + a] * vals->k[j * d + a];
			x /= sqrt((double)d);
			for (unsigned l = 0; l <= vals->poly.g; l++, power *= x)
				w += vals->poly.c[l] * power;
			den += w;
			for (uint64_t b = 0; b < d; b++)
				num[b] += w * vals->v[j * d + b];
		}
		for (uint64_t b = 0; b < d; b++) {
			double want = att->normalize ? num[b] / den : num[b];
			double got = vals->outputs[i * d + b];

			gap = fabs(got - want) > gap ? fabs(got - want) : gap;
		}
	}
	return gap;
}

/* Every strategy of approximate attention, each kind, a small and a
 * medium instance: the outputs within 1e-9 of the evaluation above. */
START_TEST(test_every_strategy_independent)
{
	static const struct { uint64_t n, d, g, M; } sizes[] = { { 6, 2, 2, 200 }, { 64, 4, 3, 4096 } };
	unsigned runs = 0;

	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];

		if (s->flags & (PS_STRATEGY_EXACT | PS_STRATEGY_EXPLICIT))
			continue;
		for (size_t z = 0; z < 2; z++)
			for (int kind = 0; kind < PS_POLYNOMIAL_KIND_COUNT; kind++) {
				struct ps_values_inputs in = seven;
				struct ps_attention att;
				struct ps_values vals;
				struct ps_report rep;
				struct ps_problem pb = { .M = sizes[z].M };
				struct ps_plan plan;
				struct ps_error err;

				in.polynomial = (enum ps_polynomial_kind)kind;
				test_attention(&att, sizes[z].n, sizes[z].d, sizes[z].g, 1);
				pb.att = &att;
				pb.values = &vals;
				if (pb.M < ps_strategy_min_memory(s, &att) ||
				    ps_strategy_plan(s, &pb, &plan, &err)) {
					ps_attention_free(&att);
					continue;
				}
				ck_assert_int_eq(ps_values_init(&vals, &att, &in, &err), 0);
				ck_assert_msg(ps_run(&pb, s, NULL, &rep, &err) == 0, "%s: %s", s->name, err.msg);
				ck_assert(rep.valid && rep.has_values);
				ck_assert_msg(independent_gap(&vals) <= 1e-9, "%s %s n %llu: %g", s->name,
					      ps_polynomial_name(kind), (unsigned long long)sizes[z].n,
					      independent_gap(&vals));
				runs++;
				ps_values_free(&vals);
				ps_attention_free(&att);
			}
	}
	ck_assert_uint_ge(runs, 12);
}
END_TEST

/* Runs naive with values from in and returns its report. */
static struct ps_values_report measured(uint64_t n, uint64_t d, uint64_t g,
					const struct ps_values_inputs *in)
{
	const struct ps_strategy *s = ps_strategy_find("naive");
	struct ps_attention att;
	struct ps_values vals;
	struct ps_report rep;
	struct ps_problem pb = { .M = 4096 };
	struct ps_values_report v;
	struct ps_error err;

	ck_assert_ptr_nonnull(s);
	test_attention(&att, n, d, g, 1);
	pb.att = &att;
	pb.values = &vals;
	ck_assert_msg(ps_values_init(&vals, &att, in, &err) == 0, "%s", err.msg);
	ck_assert_msg(ps_run(&pb, s, NULL, &rep, &err) == 0, "%s", err.msg);
	ck_assert(rep.has_values);
	v = rep.values;
	ps_values_free(&vals);
	ps_attention_free(&att);
	return v;
}

/* Writes an n x d float64 .npy file. */
static void write_npy(const char *path, const double *x, uint64_t n, uint64_t d)
{
	char header[128];
	int len = snprintf(header, sizeof(header), "{'descr': '<f8', 'fortran_order': False, 'shape': (%llu, %llu), }",
			   (unsigned long long)n, (unsigned long long)d);

	/* padded so that the data start at a multiple of 64 */
	while ((10 + len + 1) % 64)
		header[len++] = ' ';
	header[len++] = '\n';
	header[len] = '\0';
	test_write_npy_raw(path, header, x, n * d * sizeof(double));
}

/* Q, K and V written to dir's q.npy, k.npy and v.npy, and in reading them. */
struct input_paths {
	char q[80], k[80], v[80];
};

static void write_inputs(const char *dir, const double *Q, const double *K, const double *V,
			 uint64_t n, uint64_t d, struct input_paths *paths,
			 struct ps_values_inputs *in)
{
	snprintf(paths->q, sizeof(paths->q), "%s/q.npy", dir);
	snprintf(paths->k, sizeof(paths->k), "%s/k.npy", dir);
	snprintf(paths->v, sizeof(paths->v), "%s/v.npy", dir);
	write_npy(paths->q, Q, n, d);
	write_npy(paths->k, K, n, d);
	write_npy(paths->v, V, n, d);
	in->q = paths->q, in->k = paths->k, in->v = paths->v;
}

/* Removes dir's q.npy, k.npy, v.npy and dir. */
static void remove_inputs(const char *dir)
{
	for (const char *const *name = (const char *const[]){ "q", "k", "v", NULL }; *name; name++) {
		char path[80];

		snprintf(path, sizeof(path), "%s/%s.npy", dir, *name);
		unlink(path);
	}
	rmdir(dir);
}

/*
 * The measured epsilon never above the bound 2 eta / (1 + sqrt(1 -
 * eta^2)) R:
 * random inputs on a grid of g, d and B, and inputs whose every score is
 * at an end of the interval (rows of Q and K all +B or -B) with V at +-B.
 * The slack is the rounding of the run itself.
 */
START_TEST(test_bound_holds)
{
	static const double Bs[] = { 0.5, 1, 2 };
	static const uint64_t ds[] = { 1, 4, 16 };
	char dir[] = "/tmp/pebblesim-bound-XXXXXX";
	unsigned applied = 0, at_ends = 0;
	const uint64_t n = 8;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (int kind = 0; kind < PS_POLYNOMIAL_KIND_COUNT; kind++)
		for (size_t b = 0; b < 3; b++)
			for (size_t z = 0; z < 3; z++)
				for (uint64_t g = 1; g <= 8; g++)
					for (int ends = 0; ends <= 1; ends++) {
						struct ps_values_inputs in = seven;
						struct ps_values_report v;
						struct input_paths paths;
						const uint64_t d = ds[z];
						const double B = Bs[b];

						/* r = C(d+g, g) kept below a thousand; the
						 * small grid (sanitizers) leaves out d = 16,
						 * g = 3 (r = 969), which took more than half
						 * of this test's time */
						if (d == 16 && g > (test_grid_small() ? 2 : 3))
							continue;
						in.polynomial = (enum ps_polynomial_kind)kind;
						in.entry_bound = B;
						if (ends) {
							double Q[8 * 16], K[8 * 16], V[8 * 16];

							for (uint64_t i = 0; i < n; i++)
								for (uint64_t a = 0; a < d; a++) {
									Q[i * d + a] = i % 2 ? -B : B;
									K[i * d + a] = i % 3 ? B : -B;
									V[i * d + a] = (i + a) % 2 ? -B : B;
								}
							write_inputs(dir, Q, K, V, n, d, &paths, &in);
						}
						v = measured(n, d, g, &in);
						ck_assert(v.has_polynomial);
						if (ends && v.polynomial.beta == v.max_score)
							at_ends++;
						/* without a bound, P may be negative on the
						 * interval and a normaliser not positive:
						 * the run then fails, as outputs that are
						 * not finite do */
						if (!v.has_bound)
							continue;
						applied++;
						ck_assert_msg(!v.failed, "%s g %llu d %llu B %g%s: the run failed within the bound",
							      ps_polynomial_name(kind), (unsigned long long)g,
							      (unsigned long long)d, B, ends ? " (ends)" : "");
						ck_assert_msg(v.error_vs_softmax <= v.bound + 1e-13 * v.max_v,
							      "%s g %llu d %llu B %g%s: epsilon %.6g above the bound %.6g",
							      ps_polynomial_name(kind), (unsigned long long)g,
							      (unsigned long long)d, B, ends ? " (ends)" : "",
							      v.error_vs_softmax, v.bound);
					}
	remove_inputs(dir);
	ck_assert_uint_ge(applied, 60);
	ck_assert_uint_ge(at_ends, 80);
}
END_TEST

/* The scores in [-beta, beta] where P's relative error r(x) = P(x) e^-x
 * - 1 is largest and least, on a fine sample. */
static void error_extremes(const struct ps_polynomial *p, double *x_hi, double *x_lo)
{
	double hi = -INFINITY, lo = INFINITY;

	for (int k = 0; k <= 20000; k++) {
		const double x = p->beta * (k / 10000.0 - 1.0);
		const double r = ps_polynomial_eval(p, x) * exp(-x) - 1.0;

		if (r > hi)
			hi = r, *x_hi = x;
		if (r < lo)
			lo = r, *x_lo = x;
	}
}

/*
 * The bound against inputs built to reach it (docs/VALUES.md, "The
 * attention bound"): every query row the same, the keys at the two
 * scores where P's relative error is largest and least (d = 1), or q and
 * k aligned with every entry at +-B so that each score is an end of the
 * interval (d = 4); as many keys at each score as makes their softmax
 * weights about equal; V = +B on the keys where P overweighs, -B where it
 * underweighs. The measured epsilon stays within the bound, and for
 * minimax, whose error reaches +eta and -eta, it comes within 10% of it
 * (it is then eta R to first order, the bound's value): the bound cannot
 * be halved, as 2 eta / (1 - eta) max|V| could.
 */
START_TEST(test_bound_adversarial)
{
	static const double Bs[] = { 0.5, 1 };
	char dir[] = "/tmp/pebblesim-adversary-XXXXXX";
	const uint64_t n = 64;
	unsigned applied = 0, tight = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (int kind = 0; kind < PS_POLYNOMIAL_KIND_COUNT; kind++)
		for (size_t b = 0; b < 2; b++)
			for (uint64_t d = 1; d <= 4; d += 3)
				for (uint64_t g = 1; g <= (d == 1 ? 8u : 4u); g++) {
					struct ps_values_inputs in = seven;
					struct ps_polynomial p;
					struct ps_values_report v;
					double Q[64 * 4], K[64 * 4], V[64 * 4], x_hi = 0, x_lo = 0, w;
					struct input_paths paths;
					const double B = Bs[b];
					uint64_t n_hi;

					make(&p, (enum ps_polynomial_kind)kind, (unsigned)g,
					     ps_polynomial_interval(B, d));
					if (d == 1) {
						error_extremes(&p, &x_hi, &x_lo);
					} else {
						const double r_end = ps_polynomial_eval(&p, p.beta) * exp(-p.beta);
						const double r_start = ps_polynomial_eval(&p, -p.beta) * exp(p.beta);

						x_hi = r_end >= r_start ? p.beta : -p.beta;
						x_lo = -x_hi;
					}
					/* equal weights: n_hi e^x_hi = (n - n_hi) e^x_lo */
					w = (double)n / (1.0 + exp(x_hi - x_lo));
					n_hi = w < 1 ? 1 : w > (double)n - 1 ? n - 1 : (uint64_t)(w + 0.5);
					for (uint64_t j = 0; j < n; j++) {
						const double x = j < n_hi ? x_hi : x_lo;

						for (uint64_t a = 0; a < d; a++) {
							Q[j * d + a] = B;
							/* d = 1: q k = x; d = 4: k = +-B, q.k / 2 = +-beta */
							K[j * d + a] = d == 1 ? x / B : x > 0 ? B : -B;
							V[j * d + a] = j < n_hi ? B : -B;
						}
					}
					write_inputs(dir, Q, K, V, n, d, &paths, &in);
					in.polynomial = (enum ps_polynomial_kind)kind;
					/* the interval B^2 sqrt d of the entry bound */
					in.interval = p.beta;
					v = measured(n, d, g, &in);
					if (!v.has_bound)
						continue;
					applied++;
					ck_assert(v.v_half_range == B);
					ck_assert_msg(v.error_vs_softmax <= v.bound + 1e-13 * v.max_v,
						      "%s g %llu d %llu B %g: epsilon %.6g above the bound %.6g",
						      ps_polynomial_name(kind), (unsigned long long)g,
						      (unsigned long long)d, B, v.error_vs_softmax, v.bound);
					if (kind == PS_POLYNOMIAL_MINIMAX && d == 1 && v.polynomial.eta < 0.1) {
						ck_assert_msg(v.error_vs_softmax >= 0.9 * v.bound,
							      "minimax g %llu B %g: epsilon %.6g, bound %.6g",
							      (unsigned long long)g, B, v.error_vs_softmax, v.bound);
						tight++;
					}
				}
	remove_inputs(dir);
	ck_assert_uint_ge(applied, 40);
	ck_assert_uint_ge(tight, 8);
}
END_TEST

/* The bound's value: 2 eta / (1 + sqrt(1 - eta^2)) R, at most eta / (1 -
 * eta) R and about eta R for small eta; none at eta >= 1. */
START_TEST(test_bound_value)
{
	static const double etas[] = { 0.0, 1e-8, 1e-3, 0.1, 0.5, 0.9, 0.999999 };
	const double v[] = { 1, -3, 0.5, 2 }; /* 2 rows, 2 columns: ranges 0.5, 5 */

	for (size_t k = 0; k < sizeof(etas) / sizeof(etas[0]); k++) {
		const double eta = etas[k], bound = ps_polynomial_bound(eta, 2.0);
		const double exact = 2.0 * (1.0 - sqrt(1.0 - eta * eta)) / eta * 2.0;

		ck_assert(bound <= eta / (1.0 - eta) * 2.0 * (1 + 1e-15));
		ck_assert(bound >= 2.0 * eta * (1 - 1e-15));
		if (eta > 1e-3)
			ck_assert_msg(fabs(bound - exact) <= 1e-12 * exact, "eta %g: %.17g, %.17g", eta, bound, exact);
	}
	ck_assert(isinf(ps_polynomial_bound(1.0, 1.0)) && isinf(ps_polynomial_bound(NAN, 1.0)));
	ck_assert(ps_half_range(v, 2, 2) == 2.5);
	ck_assert(ps_half_range(v, 0, 2) == 0.0);
}
END_TEST

/* A score outside an interval given by --interval: no bound, and why. */
START_TEST(test_no_bound_outside)
{
	struct ps_values_inputs in = seven;
	struct ps_values_report v;

	in.polynomial = PS_POLYNOMIAL_CHEBYSHEV;
	in.interval = 0.01;
	v = measured(16, 4, 3, &in);
	ck_assert(v.max_score > 0.01 && !v.has_bound);
	ck_assert_ptr_nonnull(strstr(v.no_bound, "outside the interval"));
	in.interval = 0.0;
	in.entry_bound = 4;
	v = measured(16, 4, 3, &in);
	ck_assert(!v.has_bound && v.polynomial.eta >= 1);
}
END_TEST

Suite *polynomial_suite(void)
{
	Suite *s = suite_create("polynomial");
	TCase *tc = tcase_create("polynomial");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_known_values);
	tcase_add_test(tc, test_fits);
	tcase_add_test(tc, test_u1_u2_is_p);
	tcase_add_test(tc, test_every_strategy_independent);
	tcase_add_test(tc, test_bound_holds);
	tcase_add_test(tc, test_bound_adversarial);
	tcase_add_test(tc, test_bound_value);
	tcase_add_test(tc, test_no_bound_outside);
	suite_add_tcase(s, tc);
	return s;
}
