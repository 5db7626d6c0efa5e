/*
 * colpass's planning (strategies/colpass.c): the features of a range of
 * its monomial order found from the index of occurrences make the same
 * plan, operation for operation, as reading the range's monomials, on a
 * grid of d, g, M and every layout; and the plan runs valid with the I/O
 * it predicts. Beside it, the features of a range of the rank order that
 * the block tilings take from the range's ends (tiling.c), against
 * reading the range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "colpass.h"
#include "tests.h"
#include "tiling.h"

/* Folds every operation into a hash (FNV-1a over its fields and
 * coordinates): two runs that emit the same operations hash alike. */
struct hash_sink {
	struct ps_sink sink;
	uint64_t hash, ops;
};

static void fold(struct hash_sink *h, uint64_t v)
{
	for (int k = 0; k < 8; k++) {
		h->hash ^= (v >> (8 * k)) & 0xff;
		h->hash *= UINT64_C(1099511628211);
	}
}

static int hash_emit(struct ps_sink *sink, const struct ps_op *op,
		     struct ps_error *err)
{
	struct hash_sink *h = (struct hash_sink *)sink;

	(void)err;
	h->ops++;
	fold(h, (uint64_t)op->code);
	fold(h, (uint64_t)op->kind);
	fold(h, op->fuse);
	for (int q = 0; q < 3; q++) {
		uint64_t size = ps_coordset_size(&op->c[q]);

		fold(h, size);
		for (uint64_t k = 0; k < size; k++)
			fold(h, ps_coordset_at(&op->c[q], k));
	}
	return PS_OK;
}

struct outcome {
	int rc;
	struct ps_plan plan;
	uint64_t hash, ops;
};

static void plan_and_hash(const struct ps_problem *pb, enum ps_colpass_features how,
			  bool emit, struct outcome *out)
{
	const struct ps_strategy *colpass = ps_strategy_find("colpass");
	struct hash_sink h = { { hash_emit }, UINT64_C(14695981039346656037), 0 };
	struct ps_error err;

	memset(out, 0, sizeof(*out));
	ps_colpass_set_features(how);
	out->rc = ps_strategy_plan(colpass, pb, &out->plan, &err);
	if (!out->rc && emit)
		ck_assert_int_eq(ps_strategy_run(colpass, pb, &h.sink, &err), 0);
	ps_colpass_set_features(PS_COLPASS_FEATURES_AUTO);
	out->hash = h.hash;
	out->ops = h.ops;
}

static void same_outcome(const struct outcome *a, const struct outcome *b,
			 const char *what)
{
	ck_assert_msg(a->rc == b->rc, "%s: rc %d, %d", what, a->rc, b->rc);
	if (a->rc)
		return;
	ck_assert_msg(!strcmp(a->plan.summary, b->plan.summary), "%s: '%s' against '%s'",
		      what, a->plan.summary, b->plan.summary);
	ck_assert_msg(a->plan.loads == b->plan.loads && a->plan.saves == b->plan.saves &&
		      a->plan.peak_red == b->plan.peak_red,
		      "%s: %llu + %llu, peak %llu against %llu + %llu, peak %llu", what,
		      (unsigned long long)a->plan.loads, (unsigned long long)a->plan.saves,
		      (unsigned long long)a->plan.peak_red, (unsigned long long)b->plan.loads,
		      (unsigned long long)b->plan.saves, (unsigned long long)b->plan.peak_red);
	ck_assert(!memcmp(a->plan.by_array, b->plan.by_array, sizeof(a->plan.by_array)));
	ck_assert_str_eq(a->plan.variant, b->plan.variant);
	ck_assert_msg(a->hash == b->hash && a->ops == b->ops,
		      "%s: the operations differ (%llu against %llu)", what,
		      (unsigned long long)a->ops, (unsigned long long)b->ops);
}

/* Index, scan and the cheaper of both: one plan, one sequence of
 * operations, for every layout and M from the least that fits up. */
START_TEST(test_colpass_index_equals_scan)
{
	static const struct { uint64_t d, g; } shapes[] = {
		{ 1, 3 }, { 2, 2 }, { 3, 1 }, { 3, 4 }, { 4, 3 }, { 5, 2 },
		{ 6, 3 }, { 8, 2 }, { 7, 0 }, { 12, 1 },
	};
	static const char *const layouts[] = { NULL, "rect-dup", "rect-save", "tail" };
	bool small = test_grid_small();
	uint64_t compared = 0;

	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
		for (int norm = 0; norm <= 1; norm++) {
			struct ps_attention att;

			if (small && k % 3)
				continue;
			test_attention(&att, 6, shapes[k].d, shapes[k].g, norm);
			for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++)
				for (uint64_t M = 6; M <= 3 * att.r * att.nb; M += M / 3 + 1) {
					struct ps_problem pb = { .att = &att, .M = M, .layout = layouts[l] };
					struct outcome scan, index, cheaper;
					char what[128];

					snprintf(what, sizeof(what), "d=%llu g=%llu%s M=%llu layout %s",
						 (unsigned long long)att.d, (unsigned long long)att.g,
						 norm ? "" : " unnormalised", (unsigned long long)M,
						 layouts[l] ? layouts[l] : "cheapest");
					plan_and_hash(&pb, PS_COLPASS_FEATURES_SCAN, true, &scan);
					plan_and_hash(&pb, PS_COLPASS_FEATURES_INDEX, true, &index);
					plan_and_hash(&pb, PS_COLPASS_FEATURES_AUTO, true, &cheaper);
					same_outcome(&scan, &index, what);
					same_outcome(&scan, &cheaper, what);
					compared += !scan.rc;
				}
			ps_attention_free(&att);
		}
	ck_assert_uint_gt(compared, 100);
}
END_TEST

/* At the sizes the frontier plans (d = 16, g up to 5, M = 8k and 64k),
 * the plans alike; n is small since the plan does not depend on it
 * beyond its row blocks. */
START_TEST(test_colpass_index_equals_scan_large)
{
	uint64_t g_max = test_grid_small() ? 3 : 5;

	for (uint64_t g = 2; g <= g_max; g++)
		for (uint64_t M = 8192; M <= 65536; M *= 8) {
			struct ps_attention att;
			struct ps_problem pb = { .M = M };
			struct outcome scan, index;
			char what[64];

			test_attention(&att, 64, 16, g, 1);
			pb.att = &att;
			snprintf(what, sizeof(what), "d=16 g=%llu M=%llu",
				 (unsigned long long)g, (unsigned long long)M);
			plan_and_hash(&pb, PS_COLPASS_FEATURES_SCAN, false, &scan);
			plan_and_hash(&pb, PS_COLPASS_FEATURES_INDEX, false, &index);
			ck_assert_int_eq(scan.rc, 0);
			same_outcome(&scan, &index, what);
			ps_attention_free(&att);
		}
}
END_TEST

/* The plan the index makes runs valid, with the I/O it predicts. */
START_TEST(test_colpass_index_runs_as_predicted)
{
	struct ps_attention att;
	static const char *const layouts[] = { "rect-dup", "rect-save", "tail" };

	test_attention(&att, 24, 4, 3, 1);
	for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		struct ps_problem pb = { .att = &att, .M = 160, .layout = layouts[l] };
		struct ps_plan plan;
		struct ps_report rep;
		struct ps_error err;

		ps_colpass_set_features(PS_COLPASS_FEATURES_INDEX);
		ck_assert_int_eq(ps_strategy_plan(ps_strategy_find("colpass"), &pb, &plan, &err), 0);
		ck_assert_msg(ps_run(&pb, ps_strategy_find("colpass"), NULL, &rep, &err) == 0,
			      "%s", err.msg);
		ps_colpass_set_features(PS_COLPASS_FEATURES_AUTO);
		ck_assert_msg(rep.valid, "%s: %s", layouts[l], rep.violation);
		ck_assert_uint_eq(rep.counts.loads, plan.loads);
		ck_assert_uint_eq(rep.counts.saves, plan.saves);
	}
	ps_attention_free(&att);
}
END_TEST

/* Every range of ranks, for d up to 6 and g up to 5: its features from
 * its ends as from reading it. */
START_TEST(test_rank_range_union)
{
	uint64_t cols[6], want_cols[6], ranks[512], long_ranges = 0;
	uint8_t mark[6] = { 0 };

	for (uint32_t d = 1; d <= 6; d++)
		for (uint32_t g = 0; g <= 5; g++) {
			struct ps_monomials mono;
			struct ps_error err;

			ck_assert_int_eq(ps_monomials_init(&mono, d, g, &err), 0);
			ck_assert_uint_le(mono.r, 512);
			for (uint64_t m = 0; m < mono.r; m++)
				ranks[m] = m;
			for (uint64_t lo = 0; lo <= mono.r; lo++)
				for (uint64_t hi = lo; hi <= mono.r; hi++) {
					uint64_t want = ps_support_union(&mono, ranks + lo, hi - lo,
									 want_cols, mark);
					uint64_t got = ps_rank_range_union(&mono, lo, hi, cols, mark);

					ck_assert_msg(got == want && !memcmp(cols, want_cols, got * sizeof(*cols)),
						      "d=%u g=%u ranks [%llu, %llu): %llu features, not %llu",
						      d, g, (unsigned long long)lo, (unsigned long long)hi,
						      (unsigned long long)got, (unsigned long long)want);
					for (uint32_t a = 0; a < d; a++)
						ck_assert_int_eq(mark[a], 0);
					long_ranges += hi - lo >= (uint64_t)d * (g ? g : 1);
				}
			ps_monomials_free(&mono);
		}
	ck_assert_uint_gt(long_ranges, 10000);
}
END_TEST

/* Ranges of ranks around 64 features, where the features are a word's
 * bits (d <= 64) or marks (d > 64): random ranges, and ranges that end
 * at or next to a degree's first rank, each against reading it. */
START_TEST(test_rank_range_union_wide)
{
	static const uint32_t dims[][2] = { { 63, 2 }, { 64, 2 }, { 64, 3 }, { 65, 2 }, { 80, 2 } };
	uint64_t cols[80], want_cols[80], state = 12345, checked = 0;
	uint8_t mark[80] = { 0 };

	for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++) {
		struct ps_monomials mono;
		struct ps_error err;
		uint64_t *ranks;

		ck_assert_int_eq(ps_monomials_init(&mono, dims[k][0], dims[k][1], &err), 0);
		ranks = malloc(mono.r * sizeof(*ranks));
		ck_assert_ptr_nonnull(ranks);
		for (uint64_t m = 0; m < mono.r; m++)
			ranks[m] = m;
		for (int q = 0; q < 3000; q++) {
			uint64_t lo, hi, want, got;

			state = state * 6364136223846793005ULL + 1442695040888963407ULL;
			lo = (state >> 33) % mono.r;
			state = state * 6364136223846793005ULL + 1442695040888963407ULL;
			hi = lo + 1 + (state >> 33) % (q % 2 ? 200 : mono.r - lo);
			hi = ps_min_u64(hi, mono.r);
			if (q < 6 * (int)(dims[k][1] + 1)) {
				/* from or to a degree's first rank, or a rank next to it */
				uint64_t at = mono.degree_start[q / 6] + (uint64_t)(q % 3);
				uint64_t b = ps_min_u64(at ? at - 1 : 0, mono.r);

				if (q % 6 < 3)
					lo = b, hi = ps_max_u64(hi, b);
				else
					hi = b, lo = ps_min_u64(lo, b);
			}
			want = ps_support_union(&mono, ranks + lo, hi - lo, want_cols, mark);
			got = ps_rank_range_union(&mono, lo, hi, cols, mark);
			ck_assert_msg(got == want && !memcmp(cols, want_cols, got * sizeof(*cols)),
				      "d=%u g=%u ranks [%llu, %llu): %llu features, not %llu",
				      dims[k][0], dims[k][1], (unsigned long long)lo,
				      (unsigned long long)hi, (unsigned long long)got,
				      (unsigned long long)want);
			for (uint32_t a = 0; a < dims[k][0]; a++)
				ck_assert_int_eq(mark[a], 0);
			checked++;
		}
		free(ranks);
		ps_monomials_free(&mono);
	}
	ck_assert_uint_eq(checked, 15000);
}
END_TEST

Suite *colpass_suite(void)
{
	Suite *s = suite_create("colpass");
	TCase *tc = tcase_create("planning");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_colpass_index_equals_scan);
	tcase_add_test(tc, test_colpass_index_equals_scan_large);
	tcase_add_test(tc, test_colpass_index_runs_as_predicted);
	tcase_add_test(tc, test_rank_range_union);
	tcase_add_test(tc, test_rank_range_union_wide);
	suite_add_tcase(s, tc);
	return s;
}
