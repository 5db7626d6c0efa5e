/* Monomials: enumeration, ranking and supports against brute force. */
#include <stdlib.h>
#include <string.h>

#include "pebblesim/monomial.h"
#include "tests.h"

/* Every tuple of length l over [0, d) in lexicographic order, kept when
 * non-decreasing: the definition of MODEL.md section 1, by brute force. */
static void brute_force_check(uint32_t d, uint32_t g)
{
	struct ps_monomials mono;
	struct ps_error err;
	uint64_t m = 0, r;

	ck_assert_int_eq(ps_monomials_init(&mono, d, g, &err), 0);
	ck_assert_int_eq(ps_binom(d + g, g, &r), 0);
	ck_assert_uint_eq(mono.r, r);
	for (uint32_t l = 0; l <= g; l++) {
		uint64_t total = 1;
		uint32_t t[8];

		for (uint32_t p = 0; p < l; p++)
			total *= d;
		for (uint64_t code = 0; code < total; code++) {
			uint64_t c = code;
			int sorted = 1;
			uint32_t distinct = 0;

			/* most significant digit first: lexicographic order */
			for (int p = (int)l - 1; p >= 0; p--) {
				t[p] = (uint32_t)(c % d);
				c /= d;
			}
			for (uint32_t p = 1; p < l; p++)
				if (t[p] < t[p - 1])
					sorted = 0;
			if (!sorted)
				continue;
			ck_assert_uint_lt(m, mono.r);
			ck_assert_uint_eq(mono.degree[m], l);
			for (uint32_t p = 0; p < l; p++)
				ck_assert_uint_eq(ps_monomial_indices(&mono, m)[p], t[p]);
			for (uint32_t p = 0; p < l; p++)
				if (p == 0 || t[p] != t[p - 1]) {
					ck_assert_uint_eq(ps_monomial_support(&mono, m)[distinct],
							  t[p]);
					distinct++;
				}
			ck_assert_uint_eq(mono.support_size[m], distinct);
			ck_assert_uint_eq(ps_monomial_rank(&mono, t, l), m);
			m++;
		}
	}
	ck_assert_uint_eq(m, mono.r);
	ps_monomials_free(&mono);
}

START_TEST(test_brute_force_small)
{
	for (uint32_t d = 1; d <= 6; d++)
		for (uint32_t g = 0; g <= 4; g++)
			brute_force_check(d, g);
}
END_TEST

START_TEST(test_documented_order)
{
	/* MODEL.md: for d = 2, g = 2 the order is (), (0), (1), (0,0), (0,1), (1,1) */
	static const char *const want[] = { "()", "(0)", "(1)", "(0,0)", "(0,1)", "(1,1)" };
	struct ps_monomials mono;
	char buf[32];

	ck_assert_int_eq(ps_monomials_init(&mono, 2, 2, NULL), 0);
	ck_assert_uint_eq(mono.r, 6);
	for (uint64_t m = 0; m < 6; m++) {
		ps_monomial_format(&mono, m, buf, sizeof(buf));
		ck_assert_str_eq(buf, want[m]);
	}
	ps_monomials_free(&mono);
}
END_TEST

START_TEST(test_binom_and_tau)
{
	uint64_t v;

	ck_assert_int_eq(ps_binom(19, 3, &v), 0);
	ck_assert_uint_eq(v, 969); /* r for d = 16, g = 3 */
	ck_assert_int_eq(ps_binom(5, 7, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(ps_binom(62, 31, &v), 0);
	ck_assert_uint_eq(v, UINT64_C(465428353255261088));
	ck_assert_int_eq(ps_binom(68, 34, &v), -1); /* 2.8e19 > 2^64 */
	ck_assert_int_eq(ps_binom(67, 33, &v), 0);
	ck_assert_uint_eq(v, UINT64_C(14226520737620288370)); /* the table's largest */
	/* Pascal's rule across the table's last row and the product formula
	 * beyond it, where nothing overflows */
	for (uint64_t n = 1; n <= 80; n++)
		for (uint64_t k = 1; k <= n; k++) {
			uint64_t here, left, up;

			if (ps_binom(n, k, &here) || ps_binom(n - 1, k - 1, &left) ||
			    ps_binom(n - 1, k, &up))
				continue;
			ck_assert_msg(here == left + up, "C(%llu, %llu)", (unsigned long long)n,
				      (unsigned long long)k);
		}
	ck_assert_int_eq(ps_binom(80, 2, &v), 0);
	ck_assert_uint_eq(v, 3160);
	ck_assert_int_eq(ps_binom(70, 69, &v), 0);
	ck_assert_uint_eq(v, 70);
	ck_assert_int_eq(ps_tau(9, 3, &v), 0);
	ck_assert_uint_eq(v, 220);
	ck_assert_int_eq(ps_tau(0, 4, &v), 0);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(ps_tau(UINT64_MAX, 1, &v), -1);
}
END_TEST

START_TEST(test_limits)
{
	struct ps_monomials mono;
	struct ps_error err;

	ck_assert_int_eq(ps_monomials_init(&mono, 0, 2, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "d must be at least 1");
	ck_assert_int_eq(ps_monomials_init(&mono, 64, 8, &err), PS_ENOMEM);
	ck_assert_str_eq(err.msg,
			 "r = C(d+g, g) for d = 64, g = 8 exceeds the limit of 67108864 monomials");
	/* large d with g = 1 is cheap: r = d + 1 */
	ck_assert_int_eq(ps_monomials_init(&mono, 100000, 1, &err), 0);
	ck_assert_uint_eq(mono.r, 100001);
	ps_monomials_free(&mono);
}
END_TEST

Suite *monomial_suite(void)
{
	Suite *s = suite_create("monomial");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_brute_force_small);
	tcase_add_test(tc, test_documented_order);
	tcase_add_test(tc, test_binom_and_tau);
	tcase_add_test(tc, test_limits);
	suite_add_tcase(s, tc);
	return s;
}
