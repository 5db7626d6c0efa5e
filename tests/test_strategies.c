/*
 * Every strategy on a grid of parameters: its sequence valid in the
 * engine, its loads and saves equal to its cost model's prediction, its
 * I/O within its upper bound and above every lower bound, its peak within
 * its plan's and M; refused below its minimum M. And the Key Lemma's tile
 * assignment against brute force.
 *
 * PS_TEST_GRID=small shrinks the grid (the sanitizer builds of .ci/run,
 * valgrind): DAGs of at most 20,000 products (5,000 at n = 257, whose
 * ragged tiles the smaller DAGs still reach), and the strategies whose
 * moves grow fastest (resident, colpass) to a hundredth and a tenth of
 * their default budget: the same code paths on smaller DAGs.
 * PS_TEST_GRID=full runs all of it (make check-full), where the default
 * skips the few DAGs with more than 5 million products.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/bounds.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "tests.h"
#include "tiling.h"

static const struct ps_strategy *find(const char *name)
{
	const struct ps_strategy *s = ps_strategy_find(name);

	ck_assert_ptr_nonnull(s);
	return s;
}

/* Runs s on the problem; checks everything a run must satisfy, and a
 * failure names the strategy and the parameters. Returns its I/O, or
 * UINT64_MAX when s refuses the DAG as beyond its documented size limit. */
static uint64_t check_run_problem(const struct ps_problem *problem,
				  const struct ps_strategy *s)
{
	const struct ps_attention *att = problem->att;
	const uint64_t M = problem->M;
	const char *sizes = problem->sizes;
	struct ps_problem pb = *problem;
	struct ps_plan plan;
	struct ps_report rep;
	struct ps_lower_bounds lb;
	const struct ps_strategy *ran;
	struct ps_error err;
	char what[128], why[256];
	uint64_t io;
	int rc;

	snprintf(what, sizeof(what), "%s%s n=%llu d=%llu g=%llu%s M=%llu%s", s->name,
		 att->causal ? " causal" : "",
		 (unsigned long long)att->n, (unsigned long long)att->d,
		 (unsigned long long)att->g, att->normalize ? "" : " unnormalised",
		 (unsigned long long)M, sizes ? " sizes tuned" : "");
	ps_error_clear(&err);
	ck_assert_msg(ps_strategy_plan(s, &pb, &plan, &err) == 0, "%s: %s", what, err.msg);
	rc = ps_run(&pb, s, NULL, &rep, &err);
	/* naive-belady's limit on the next uses it keeps (cache.h) */
	if (rc == PS_ENOMEM && (s->flags & PS_STRATEGY_BASELINE) &&
	    strstr(err.msg, "belady keeps the next use of every operand"))
		return UINT64_MAX;
	ck_assert_msg(rc == 0, "%s: %s", what, err.msg);
	ck_assert_msg(rep.valid, "%s: %s", what, rep.violation);
	io = rep.counts.loads + rep.counts.saves;
	ran = plan.chosen ? plan.chosen : s;
	/* only the baselines go without a cost model; they, the strategies
	 * beyond the paper and tuned sizes (whose proof is for the proof's
	 * sizes) go without a bound */
	ck_assert_msg((plan.predicted && plan.bounded == !plan.sizes) ||
		      (s->flags & PS_STRATEGY_BASELINE) ||
		      (plan.predicted && (ran->flags & PS_STRATEGY_BEYOND)),
		      "%s: no cost model, or a bound where none is proved", what);
	ck_assert_msg(!sizes || (plan.sizes && !strcmp(plan.sizes, "tuned")),
		      "%s: the plan does not say its sizes are tuned", what);
	ck_assert_msg(!plan.predicted ||
		      (rep.counts.loads == plan.loads && rep.counts.saves == plan.saves),
		      "%s: measured %llu+%llu, predicted %llu+%llu", what,
		      (unsigned long long)rep.counts.loads,
		      (unsigned long long)rep.counts.saves,
		      (unsigned long long)plan.loads, (unsigned long long)plan.saves);
	/* and array by array: the engine's counts, the cost model's breakdown */
	ck_assert_msg(!plan.predicted ||
		      test_by_array_equal(&att->dag, rep.counts.by_array, plan.by_array,
					  why, sizeof(why)),
		      "%s: by array, %s", what, why);
	ck_assert_msg(rep.counts.peak_red <= plan.peak_red && plan.peak_red <= M,
		      "%s: peak red %llu, planned %llu", what,
		      (unsigned long long)rep.counts.peak_red,
		      (unsigned long long)plan.peak_red);
	ck_assert_msg(!plan.bounded || (double)io <= plan.upper.value,
		      "%s: I/O %llu above %s = %.0f", what, (unsigned long long)io,
		      plan.upper.formula, plan.upper.value);
	/* no applied lower bound may exceed a measured count */
	ps_bounds_lower(att, M, &lb);
	for (size_t k = 0; k < lb.applied_count; k++)
		ck_assert_msg((double)io >= lb.applied[k].value,
			      "%s: I/O %llu below %s %.0f", what, (unsigned long long)io,
			      lb.applied[k].name, lb.applied[k].value);
	ck_assert_msg(!ps_report_bound_violated(&rep), "%s: a bound is violated", what);
	/* every product aggregated once (causal: the carries HC too);
	 * resident aggregates H once per block of query rows, colpass's
	 * rect-dup the ones column once per pass */
	uint64_t products = 2 * att->n * att->r * att->nb +
			    (att->causal ? (att->n - 1) * att->r * att->nb : 0);

	/* decoding: P2, HC and P1 of the generated rows alone */
	if (att->decode)
		products = 3 * (att->n - att->decode) * att->r * att->nb;
	/* causal-colpass: the ones column in each of its ceil(d/w) passes */
	if (att->causal && att->normalize && plan.param_name && !strcmp(plan.param_name, "w"))
		products += (ps_ceil_div(att->d, plan.param) - 1) * att->r * (3 * att->n - 1);

	ck_assert_msg(strcmp(ran->name, "resident") &&
		      !(plan.variant && !strcmp(plan.variant, "rect-dup")) ?
		      rep.counts.macs == products : rep.counts.macs >= products,
		      "%s: %llu macs for %llu products", what,
		      (unsigned long long)rep.counts.macs, (unsigned long long)products);
	return io;
}

static uint64_t check_run(const struct ps_attention *att,
			  const struct ps_strategy *s, uint64_t M)
{
	struct ps_problem pb = { .att = att, .M = M };

	return check_run_problem(&pb, s);
}

/* The same with --sizes (NULL: the proof's). */
static uint64_t check_sized(const struct ps_attention *att,
			    const struct ps_strategy *s, uint64_t M,
			    const char *sizes)
{
	struct ps_problem pb = { .att = att, .M = M, .sizes = sizes };

	return check_run_problem(&pb, s);
}

static int full_grid, small_grid;

/*
 * resident recomputes H for every block of query rows: at the smallest M
 * its moves grow as n^2 r d. The grid runs it where they stay within
 * 20 million moves (check-full: 400 million; the small grid: 200,000);
 * colpass, whose passes at the least M hold a few cells each, where its
 * I/O stays within 500,000 (check-full: 100 million; the small grid:
 * 50,000). Under the sanitizers, resident's runs were more than half of
 * the grid's time, and the grid took more than its 600 s there.
 */
static bool affordable(const struct ps_attention *att,
		       const struct ps_strategy *s, uint64_t M)
{
	struct ps_problem pb = { .att = att, .M = M };
	struct ps_plan plan;
	struct ps_error err;
	uint64_t blocks;

	if (ps_strategy_plan(s, &pb, &plan, &err) || !plan.chosen)
		plan.chosen = s;
	if (plan.chosen->flags & PS_STRATEGY_BEYOND)
		return plan.loads + plan.saves <=
		       (full_grid ? UINT64_C(100000000) :
			small_grid ? UINT64_C(50000) : UINT64_C(500000));
	if (strcmp(plan.chosen->name, "resident"))
		return true;
	ps_strategy_plan(plan.chosen, &pb, &plan, &err);
	blocks = ps_ceil_div(att->n, plan.param);
	return blocks * att->n * att->r * att->nb <=
	       (full_grid ? UINT64_C(400000000) :
		small_grid ? UINT64_C(200000) : UINT64_C(20000000));
}

/* The Ms of the grid: the minimum, the cases' thresholds, and beyond
 * Case I; each differs from the one before it or is 0. */
static void grid_memories(const struct ps_attention *att, uint64_t min_m,
			  uint64_t Ms[5])
{
	Ms[0] = min_m;
	Ms[1] = min_m + 1;
	Ms[2] = ps_max_u64(min_m, 4 * att->g * att->g + 4);
	Ms[3] = ps_max_u64(min_m, 64 * att->nb);
	Ms[4] = ps_max_u64(min_m, 4 * att->d * att->r + 8 * att->nb * att->nb);
	for (int q = 4; q > 0; q--)
		if (Ms[q] == Ms[q - 1])
			Ms[q] = 0;
}

static void check_params(uint64_t n, uint64_t d, uint64_t g, int norm)
{
	struct ps_attention att;

	test_attention(&att, n, d, g, norm);
	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];
		uint64_t min_m = ps_strategy_min_memory(s, &att), Ms[5];
		struct ps_problem pb = { .att = &att };
		struct ps_plan plan;
		struct ps_error err;

		if (min_m == UINT64_MAX)
			continue;
		/* the baselines replay move by move: large DAGs in check-full */
		if ((s->flags & PS_STRATEGY_BASELINE) && !full_grid &&
		    att.n * att.r * att.nb > 200000)
			continue;
		grid_memories(&att, min_m, Ms);
		for (int q = 0; q < 5; q++)
			if (Ms[q] && affordable(&att, s, Ms[q]) &&
			    check_run(&att, s, Ms[q]) == UINT64_MAX)
				break; /* beyond its size limit at every M */
		pb.M = min_m - 1;
		ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err), PS_EINPUT);
	}
	ps_attention_free(&att);
}

START_TEST(test_grid)
{
	static const uint64_t ns[] = { 1, 3, 64, 257 };
	static const uint64_t ds[] = { 1, 2, 4, 7, 16 };
	static const uint64_t gs[] = { 0, 1, 2, 3, 5 };
	const char *grid = getenv("PS_TEST_GRID");
	int small = test_grid_small();
	int full = grid && !strcmp(grid, "full");

	full_grid = full;
	small_grid = small;
	for (size_t a = 0; a < 4; a++)
		for (size_t b = 0; b < 5; b++)
			for (size_t c = 0; c < 5; c++) {
				uint64_t r, products;

				ps_tau(ds[b], gs[c], &r);
				products = ns[a] * r * (ds[b] + 1);
				if (small && products > (ns[a] > 64 ? 5000 : 20000))
					continue;
				if (!full && products > 5000000)
					continue;
				check_params(ns[a], ds[b], gs[c], 1);
				if (products <= 200000)
					check_params(ns[a], ds[b], gs[c], 0);
			}
}
END_TEST

/* ---- causal attention (MODEL.md section 7) ---------------------------- */

/* Every strategy that pebbles the causal DAG, validated on a grid at its
 * least M, one above, and where the state fits beside a row; the others
 * refuse it by name. */
START_TEST(test_causal_grid)
{
	static const uint64_t ns[] = { 1, 2, 5, 33 };
	static const uint64_t ds[] = { 1, 2, 3, 7 };
	static const uint64_t gs[] = { 0, 1, 2, 3 };

	for (size_t a = 0; a < 4; a++)
		for (size_t b = 0; b < 4; b++)
			for (size_t c = 0; c < 4; c++)
				for (int norm = 0; norm <= 1; norm++) {
					struct ps_attention att;

					test_causal_attention(&att, ns[a], ds[b], gs[c], norm);
					for (size_t k = 0; k < ps_strategy_count; k++) {
						const struct ps_strategy *s = ps_strategies[k];
						const uint64_t least = ps_strategy_min_memory(s, &att);
						struct ps_problem pb = { .att = &att, .M = least - 1 };
						struct ps_plan plan;
						struct ps_error err;

						if (!ps_strategy_serves(s, &att)) {
							pb.M = 1 << 20;
							ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err),
									 PS_EINPUT);
							ck_assert_ptr_nonnull(strstr(err.msg, s->name));
							continue;
						}
						check_run(&att, s, least);
						check_run(&att, s, least + 1);
						check_run(&att, s, att.r * att.nb + 3 * att.d + 4);
						ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err),
								 PS_EINPUT);
					}
					ps_attention_free(&att);
				}
}
END_TEST

/* recurrent-decode's planned peak is the engine's, not only above it:
 * its least M is the least M at which it runs. */
static void check_peak_exact(const struct ps_attention *att, const struct ps_strategy *s,
			     uint64_t M)
{
	struct ps_problem pb = { .att = att, .M = M };
	struct ps_plan plan;
	struct ps_report rep;
	struct ps_error err;

	ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err), 0);
	ck_assert_int_eq(ps_run(&pb, s, NULL, &rep, &err), 0);
	ck_assert_msg(rep.counts.peak_red == plan.peak_red,
		      "%s n=%llu d=%llu g=%llu P=%llu M=%llu: peak %llu, planned %llu", s->name,
		      (unsigned long long)att->n, (unsigned long long)att->d,
		      (unsigned long long)att->g, (unsigned long long)att->decode,
		      (unsigned long long)M, (unsigned long long)rep.counts.peak_red,
		      (unsigned long long)plan.peak_red);
}

/* Approximate decoding (MODEL.md section 8): recurrent-decode validated
 * on a grid of prompts and memories, its cost model equal to the count,
 * its peak the engine's, above every applied bound; the other strategies
 * refuse the decode DAG. */
START_TEST(test_decode_grid)
{
	static const uint64_t dims[][3] = { { 2, 1, 1 }, { 5, 2, 2 }, { 9, 3, 3 }, { 6, 4, 0 },
					    { 12, 2, 1 }, { 7, 3, 0 }, { 6, 1, 2 } };

	for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++)
		for (uint64_t p = 1; p < dims[k][0]; p += 1 + dims[k][0] / 3)
			for (int norm = 0; norm <= 1; norm++) {
				struct ps_attention_params par = {
					.n = dims[k][0], .d = dims[k][1], .g = dims[k][2],
					.normalize = norm != 0, .causal = true, .decode = p,
				};
				struct ps_attention att;
				struct ps_error err;
				const struct ps_strategy *s = find("recurrent-decode");
				struct ps_problem pb = { .att = &att };
				struct ps_plan plan;

				ck_assert_int_eq(ps_attention_init(&att, &par, &err), 0);
				for (uint64_t M = ps_strategy_min_memory(s, &att);
				     M <= ps_strategy_min_memory(s, &att) + att.r * att.nb + 2; M++) {
					check_run(&att, s, M);
					check_peak_exact(&att, s, M);
				}
				pb.M = ps_strategy_min_memory(s, &att) - 1;
				ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err), PS_EINPUT);
				pb.M = 1 << 20;
				for (size_t q = 0; q < ps_strategy_count; q++)
					if (ps_strategies[q] != s &&
					    !(ps_strategies[q]->flags & PS_STRATEGY_CHOOSER))
						ck_assert_int_eq(ps_strategy_plan(ps_strategies[q], &pb, &plan,
										  &err), PS_EINPUT);
				/* best chooses among the strategies that do pebble it */
				ck_assert_int_eq(ps_strategy_plan(find("best"), &pb, &plan, &err), 0);
				ck_assert_ptr_eq(plan.chosen, s);
				ps_attention_free(&att);
			}
}
END_TEST

/* The headline's decoding: 64 tokens after 4096, within a quarter of
 * the 64 (2Pd - M) words exact decoding must load, above the bounds. */
START_TEST(test_decode_headline)
{
	struct ps_attention_params par = { .n = 4160, .d = 16, .g = 3, .normalize = true,
					   .causal = true, .decode = 4096 };
	struct ps_attention att;
	struct ps_problem pb = { .att = &att, .M = 8192 };
	struct ps_lower_bounds lb;
	struct ps_plan plan;
	struct ps_error err;
	const uint64_t exact_least = 64 * (2 * 4096 * 16 - 8192);

	ck_assert_int_eq(ps_attention_init(&att, &par, &err), 0);
	ck_assert_int_eq(ps_strategy_plan(find("recurrent-decode"), &pb, &plan, &err), 0);
	ck_assert_uint_le(4 * (plan.loads + plan.saves), exact_least);
	ck_assert_uint_eq(plan.param, (8192 - 3 * 16 - 3 * 17 - 2) / 17);
	ps_bounds_lower(&att, 8192, &lb);
	ck_assert_str_eq(lb.best.name, "state crossing (decode)");
	ck_assert_double_le(lb.best.value, (double)(plan.loads + plan.saves));
	/* s = 969 x 16 + 968 cells, M - d - 1 = 8175 of them resident */
	ck_assert_double_eq(lb.best.value, 16 + 16473 + 63.0 * (16472 - 8175) + 64 * 16 + 16473);
	ps_attention_free(&att);
}
END_TEST

/* The headline's causal run: best chooses causal-colpass, three passes of
 * value columns with the ones column, 128 words a row, within 1.25 of
 * the non-causal best (483,328 by colpass). */
START_TEST(test_causal_headline)
{
	struct ps_attention att;
	struct ps_problem pb = { .att = &att, .M = 8192 };
	struct ps_plan plan;
	struct ps_error err;

	test_causal_attention(&att, 4096, 16, 3, 1);
	ck_assert_int_eq(ps_strategy_plan(find("best"), &pb, &plan, &err), 0);
	ck_assert_str_eq(plan.chosen->name, "causal-colpass");
	ck_assert_uint_eq(plan.loads + plan.saves, 4096 * (3 * 32 + 16 + 16));
	ck_assert_uint_le(4 * (plan.loads + plan.saves), 5 * 483328);
	ck_assert_uint_le(plan.peak_red, 8192);
	/* the state of every column does not fit: recurrent refuses */
	ck_assert_int_eq(ps_strategy_plan(find("recurrent"), &pb, &plan, &err), PS_EINPUT);
	ck_assert_ptr_nonnull(strstr(err.msg, "M = 8192 is too small for recurrent"));
	ps_attention_free(&att);
}
END_TEST

/* ---- --sizes tuned -------------------------------------------------- */

/* The tilings that take --sizes: every tuned plan validated, its cost
 * model equal to the count and its peak within M, never above the proof's
 * sizes where those fit. */
static void check_tuned(uint64_t n, uint64_t d, uint64_t g, int norm)
{
	struct ps_attention att;

	test_attention(&att, n, d, g, norm);
	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];
		uint64_t min_m = ps_strategy_min_memory(s, &att), Ms[5];

		if (!ps_strategy_takes(s, PS_TAKES_SIZES) || min_m == UINT64_MAX)
			continue;
		grid_memories(&att, min_m, Ms);
		for (int q = 0; q < 5; q++) {
			struct ps_problem pb = { .att = &att, .M = Ms[q] };
			struct ps_plan proof;
			struct ps_error err;

			if (!Ms[q])
				continue;
			/* the proof's own runs are checked by test_grid */
			ck_assert_int_eq(ps_strategy_plan(s, &pb, &proof, &err), 0);
			ck_assert_uint_le(check_sized(&att, s, Ms[q], "tuned"),
					  proof.loads + proof.saves);
		}
	}
	ps_attention_free(&att);
}

START_TEST(test_tuned_grid)
{
	static const uint64_t ns[] = { 1, 5, 64, 200 };
	static const uint64_t ds[] = { 1, 2, 5, 8 };
	static const uint64_t gs[] = { 0, 1, 2, 3 };
	/* the small grid (sanitizers): DAGs of at most 20,000 products;
	 * this test took 190 s under ASan on the default grid */
	const uint64_t most = test_grid_small() ? 20000 : 200000;

	for (size_t a = 0; a < 4; a++)
		for (size_t b = 0; b < 4; b++)
			for (size_t c = 0; c < 4; c++) {
				uint64_t r;

				ps_tau(ds[b], gs[c], &r);
				if (ns[a] * r * (ds[b] + 1) > most)
					continue;
				check_tuned(ns[a], ds[b], gs[c], 1);
				check_tuned(ns[a], ds[b], gs[c], 0);
			}
}
END_TEST

/* --sizes proof is the default: the same plan, bound and summary, for the
 * five tilings that take --sizes. */
START_TEST(test_sizes_proof_is_default)
{
	struct ps_attention att;
	int tilings = 0;

	test_attention(&att, 96, 5, 2, 1);
	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];
		struct ps_problem pb = { .att = &att, .M = 300 };
		struct ps_plan plain, proof;
		struct ps_error err;

		if (!ps_strategy_takes(s, PS_TAKES_SIZES))
			continue;
		ck_assert_int_eq(ps_strategy_plan(s, &pb, &plain, &err), 0);
		pb.sizes = "proof";
		ck_assert_int_eq(ps_strategy_plan(s, &pb, &proof, &err), 0);
		ck_assert_str_eq(proof.summary, plain.summary);
		ck_assert_uint_eq(proof.loads, plain.loads);
		ck_assert_uint_eq(proof.saves, plain.saves);
		ck_assert_uint_eq(proof.peak_red, plain.peak_red);
		ck_assert(proof.bounded && plain.bounded && !proof.sizes);
		ck_assert_double_eq(proof.upper.value, plain.upper.value);
		tilings++;
	}
	ck_assert_int_eq(tilings, 5);
	ps_attention_free(&att);
}
END_TEST

/* The headline: caseI's loops with tuned sizes move 590,892 (H tiles r x 6
 * over 108 rows, output tiles 401 x 1), counted by the engine. */
START_TEST(test_tuned_headline)
{
	struct ps_attention att;
	struct ps_problem pb = { .att = &att, .M = 8192, .sizes = "tuned" };
	struct ps_plan plan, proof;
	struct ps_report rep;
	struct ps_error err;

	test_attention(&att, 4096, 16, 3, 1);
	ck_assert_int_eq(ps_strategy_plan(find("caseI"), &pb, &plan, &err), 0);
	ck_assert_uint_le(plan.loads + plan.saves, 590892);
	ck_assert(!plan.bounded);
	ck_assert_int_eq(ps_run(&pb, find("caseI"), NULL, &rep, &err), 0);
	ck_assert(rep.valid);
	ck_assert_uint_eq(rep.counts.loads, plan.loads);
	ck_assert_uint_eq(rep.counts.saves, plan.saves);
	ck_assert_uint_le(rep.counts.peak_red, 8192);
	pb.sizes = "proof";
	ck_assert_int_eq(ps_strategy_plan(find("caseI"), &pb, &proof, &err), 0);
	ck_assert_uint_eq(proof.loads + proof.saves, 1330041);
	ck_assert(proof.bounded);
	pb.sizes = "tight";
	ck_assert_int_eq(ps_strategy_plan(find("caseI"), &pb, &plan, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "unknown sizes 'tight' for caseI: proof or tuned");
	ps_attention_free(&att);
}
END_TEST

/* ---- pruning ----------------------------------------------------------- */

/* A small deterministic generator for the random grids. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* s planned on pb with the planners' pruning and without: the same
 * answer, field by field. */
static void check_same_unpruned(const struct ps_strategy *s, const struct ps_problem *pb,
				const char *what)
{
	struct ps_plan with, without;
	struct ps_error e1, e2;
	int rc1, rc2;

	memset(&with, 0, sizeof(with));
	memset(&without, 0, sizeof(without));
	ps_error_clear(&e1);
	ps_error_clear(&e2);
	rc1 = ps_strategy_plan(s, pb, &with, &e1);
	ps_tiling_set_pruning(false);
	rc2 = ps_strategy_plan(s, pb, &without, &e2);
	ps_tiling_set_pruning(true);
	ck_assert_msg(rc1 == rc2, "%s %s: rc %d pruned, %d not", s->name, what, rc1, rc2);
	if (rc1) {
		ck_assert_str_eq(e1.msg, e2.msg);
		return;
	}
	ck_assert_msg(with.loads == without.loads && with.saves == without.saves,
		      "%s %s: %llu+%llu pruned, %llu+%llu not", s->name, what,
		      (unsigned long long)with.loads, (unsigned long long)with.saves,
		      (unsigned long long)without.loads, (unsigned long long)without.saves);
	ck_assert_str_eq(with.summary, without.summary);
	ck_assert_uint_eq(with.peak_red, without.peak_red);
	ck_assert(!memcmp(with.by_array, without.by_array, sizeof(with.by_array)));
}

/* Each floor best prunes by is at most the I/O its strategy plans, with
 * either sizes, and best's cheapest with the pruning is ps_best_candidates'
 * without it. */
static void check_floors(const struct ps_attention *att, uint64_t M, const char *what)
{
	static const struct {
		const char *name;
		uint64_t (*floor)(const struct ps_problem *pb);
	} floors[] = {
		{ "generic", ps_generic_io_floor }, { "keylemma", ps_keylemma_io_floor },
		{ "subtile", ps_subtile_io_floor }, { "matmul", ps_matmul_io_floor },
	};
	static const char *const sizes[] = { NULL, "tuned" };
	struct ps_problem pb = { .att = att, .M = M };
	struct ps_candidate all, second, cheapest;
	int rc;

	for (size_t k = 0; k < sizeof(floors) / sizeof(floors[0]); k++)
		for (size_t z = 0; z < 2; z++) {
			struct ps_problem with = { .att = att, .M = M, .sizes = sizes[z] };
			struct ps_plan plan;
			struct ps_error err;
			uint64_t floor = floors[k].floor(&with);

			if (ps_strategy_plan(find(floors[k].name), &with, &plan, &err) || !plan.predicted)
				continue;
			ck_assert_msg(floor <= plan.loads + plan.saves, "%s%s %s: floor %llu above %llu",
				      floors[k].name, z ? " tuned" : "", what,
				      (unsigned long long)floor,
				      (unsigned long long)(plan.loads + plan.saves));
		}
	rc = ps_best_cheapest(&pb, &cheapest);
	ps_tiling_set_pruning(false);
	ck_assert_int_eq(ps_best_candidates(&pb, &all, &second), rc);
	ps_tiling_set_pruning(true);
	if (rc)
		return;
	ck_assert_msg(all.s == cheapest.s && all.sizes == cheapest.sizes && all.io == cheapest.io,
		      "%s: %s%s %llu unpruned, %s%s %llu pruned", what, all.s->name,
		      all.sizes ? " tuned" : "", (unsigned long long)all.io, cheapest.s->name,
		      cheapest.sizes ? " tuned" : "", (unsigned long long)cheapest.io);
}

/*
 * The tuned block heights (generic, matmul), best's choice and the
 * report's cheapest (ps_best_cheapest), with the pruning and without, and
 * the floors below the plans, on a grid of random parameters: n up to 5000, d up
 * to 20, g up to 4 (r at most 3000), M from 8 to 2^15.
 */
START_TEST(test_pruned_search_same)
{
	static const char *const names[] = { "generic", "matmul", "caseI", "best" };
	uint64_t state = 0x9e3779b97f4a7c15u;
	unsigned points = test_grid_small() ? 24 : 80, done = 0;

	while (done < points) {
		uint64_t n = 1 + next_random(&state) % 5000, d = 1 + next_random(&state) % 20;
		uint64_t g = next_random(&state) % 5, r;
		uint64_t M = UINT64_C(8) << next_random(&state) % 13;
		int normalize = (int)(next_random(&state) % 2);
		struct ps_attention att;
		char what[96];

		M += next_random(&state) % M;
		if (ps_binom(d + g, g, &r) || r > 3000)
			continue;
		test_attention(&att, n, d, g, normalize);
		snprintf(what, sizeof(what), "n=%llu d=%llu g=%llu M=%llu%s",
			 (unsigned long long)n, (unsigned long long)d, (unsigned long long)g,
			 (unsigned long long)M, normalize ? "" : " unnormalised");
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			struct ps_problem pb = { .att = &att, .M = M, .sizes = "tuned" };

			if (!strcmp(names[k], "best"))
				pb.sizes = NULL;
			check_same_unpruned(find(names[k]), &pb, what);
		}
		check_floors(&att, M, what);
		ps_attention_free(&att);
		done++;
	}
}
END_TEST

/* Where best plans nothing, its cheapest says so as ps_best_candidates
 * does, computing no floor that divides by nothing: exact attention's DAG
 * (no monomials) and a --w below g (no groups). */
START_TEST(test_cheapest_where_best_plans_nothing)
{
	struct ps_candidate cheapest, all, second;
	struct ps_attention att;
	struct ps_problem pb = { .att = &att, .M = 1024 };

	test_exact_attention(&att, 64, 4, 1);
	ck_assert_int_eq(ps_best_candidates(&pb, &all, &second), PS_EINPUT);
	ck_assert_int_eq(ps_best_cheapest(&pb, &cheapest), PS_EINPUT);
	ck_assert_ptr_null(cheapest.s);
	ps_attention_free(&att);

	test_attention(&att, 64, 4, 3, 1);
	pb.w = 1;
	ck_assert_int_eq(ps_best_cheapest(&pb, &cheapest), ps_best_candidates(&pb, &all, &second));
	ck_assert_ptr_eq(cheapest.s, all.s);
	ck_assert_uint_eq(cheapest.io, all.io);
	ps_attention_free(&att);
}
END_TEST

/* ---- the Key Lemma's tiles -------------------------------------------- */

START_TEST(test_subset_rank)
{
	/* every k-subset of [0, n), enumerated in lexicographic order */
	for (uint64_t n = 1; n <= 7; n++)
		for (uint64_t k = 0; k <= n; k++) {
			uint64_t c[8], rank = 0;

			for (uint64_t i = 0; i < k; i++)
				c[i] = i;
			for (;;) {
				int i;

				ck_assert_uint_eq(ps_subset_rank(c, k, n), rank++);
				for (i = (int)k - 1; i >= 0 && c[i] == n - k + (uint64_t)i; i--)
					;
				if (i < 0)
					break;
				c[i]++;
				for (uint64_t j = (uint64_t)i + 1; j < k; j++)
					c[j] = c[j - 1] + 1;
			}
			ck_assert_uint_eq(rank, ps_binom(n, k, &c[0]) ? 0 : c[0]);
		}
}
END_TEST

/* The first k-subset in lexicographic order whose groups hold m's support. */
static uint64_t brute_first_tile(const struct ps_monomials *mono, uint64_t m,
				 uint64_t group, uint64_t groups, uint64_t k)
{
	uint64_t c[64], rank = 0;

	for (uint64_t i = 0; i < k; i++)
		c[i] = i;
	for (;;) {
		int ok = 1, i;

		for (uint8_t q = 0; q < mono->support_size[m]; q++) {
			uint64_t grp = ps_monomial_support(mono, m)[q] / group;
			int in = 0;

			for (uint64_t j = 0; j < k; j++)
				in |= c[j] == grp;
			ok &= in;
		}
		if (ok)
			return rank;
		rank++;
		for (i = (int)k - 1; i >= 0 && c[i] == groups - k + (uint64_t)i; i--)
			;
		ck_assert_int_ge(i, 0);
		c[i]++;
		for (uint64_t j = (uint64_t)i + 1; j < k; j++)
			c[j] = c[j - 1] + 1;
	}
}

START_TEST(test_keylemma_assignment)
{
	for (uint64_t d = 1; d <= 9; d++)
		for (uint64_t g = 1; g <= 4; g++)
			for (uint64_t w = g; w <= d; w++) {
				struct ps_attention att;
				struct ps_tiling t;
				struct ps_error err;
				uint64_t group = w / g, groups = (d + group - 1) / group;
				uint64_t k = g < groups ? g : groups, tiles, subset[64];
				uint64_t *seen;

				test_attention(&att, 1, d, g, 1);
				for (uint64_t m = 0; m < att.r; m++)
					ck_assert_uint_eq(ps_group_tile_of(&att.mono, m, group,
									   groups, k, subset),
							  brute_first_tile(&att.mono, m, group,
									   groups, k));
				ck_assert_int_eq(ps_tiling_groups(&t, &att, group, &tiles, &err), 0);
				/* a partition of the monomials: each generated once
				 * per output tile, by a tile that reads its support */
				seen = calloc(att.r, sizeof(uint64_t));
				for (uint64_t x = 0; x < t.tile_count; x++) {
					const struct ps_agg_tile *tile = &t.tiles[x];

					ck_assert_uint_le(tile->gen_count, w);
					for (uint64_t y = 0; y < tile->count; y++) {
						uint64_t m = t.order[tile->first + y];

						seen[m]++;
						for (uint8_t q = 0; q < att.mono.support_size[m]; q++) {
							int in = 0;

							for (uint64_t z = 0; z < tile->gen_count; z++)
								in |= t.gen[tile->gen_first + z] ==
								      ps_monomial_support(&att.mono, m)[q];
							ck_assert(in);
						}
					}
				}
				for (uint64_t m = 0; m < att.r; m++)
					ck_assert_uint_eq(seen[m], 1);
				free(seen);
				ps_tiling_free(&t);
				ps_attention_free(&att);
			}
}
END_TEST

/* ---- one strategy at a time ------------------------------------------- */

START_TEST(test_subtile_cuts_wide_tiles)
{
	/* d = 7, g = 3, M = 64: tau(3) = 20 > M/(4g) = 5, so tiles are cut */
	struct ps_attention att;
	struct ps_problem pb = { .M = 64 };
	struct ps_plan plan;
	struct ps_error err;

	test_attention(&att, 9, 7, 3, 1);
	pb.att = &att;
	ck_assert_int_eq(ps_strategy_plan(find("subtile"), &pb, &plan, &err), 0);
	ck_assert_ptr_nonnull(strstr(plan.summary, "35 aggregation tiles"));
	ck_assert_ptr_null(strstr(plan.summary, " 0 of them cut"));
	check_run(&att, find("subtile"), 64);
	ps_attention_free(&att);
}
END_TEST

START_TEST(test_matmul_stores_u_once)
{
	struct ps_attention att;
	struct ps_problem pb = { .M = 16 };
	struct ps_report rep;
	struct ps_error err;

	test_attention(&att, 20, 8, 3, 1);
	pb.att = &att;
	ck_assert_int_eq(ps_run(&pb, find("matmul"), NULL, &rep, &err), 0);
	ck_assert(rep.valid);
	/* U1 and U2 computed once each, A once: no recomputation */
	ck_assert_uint_eq(rep.counts.computes, 2 * att.n * att.r + att.n * att.d);
	ck_assert_uint_eq(rep.counts.recomputations, 0);
	ps_attention_free(&att);
}
END_TEST

START_TEST(test_case1_linear_in_nd)
{
	/* in Case I the I/O is O(n d): here within 3 times the trivial bound */
	struct ps_attention att;
	struct ps_bound lb;
	uint64_t io;

	test_attention(&att, 300, 4, 2, 1);
	ps_bound_trivial(&att, &lb);
	io = check_run(&att, find("caseI"), 4 * att.d * att.r * 4);
	ck_assert_double_le((double)io, 3 * lb.value);
	ps_attention_free(&att);
}
END_TEST

START_TEST(test_keylemma_forced_w)
{
	struct ps_attention att;
	struct ps_problem pb = { .M = 8192, .w = 10 };
	struct ps_plan plan;
	struct ps_error err;

	test_attention(&att, 64, 16, 3, 1);
	pb.att = &att;
	ck_assert_int_eq(ps_strategy_plan(find("keylemma"), &pb, &plan, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "w = 10 is not valid for keylemma: w tau(w) = 2860 > M/4 = 2048");
	pb.w = 2;
	ck_assert_int_eq(ps_strategy_plan(find("keylemma"), &pb, &plan, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "w = 2 is not valid for keylemma: it needs 3 <= w <= d = 16");
	pb.w = 6;
	ck_assert_int_eq(ps_strategy_plan(find("keylemma"), &pb, &plan, &err), 0);
	ck_assert_uint_eq(plan.param, 6);
	ck_assert_ptr_nonnull(strstr(plan.summary, "w = 6: 8 groups of size 2, 56 aggregation tiles"));
	ps_attention_free(&att);
}
END_TEST

START_TEST(test_best_takes_the_least)
{
	struct ps_attention att;
	struct ps_problem pb = { .M = 64 };
	struct ps_report rep;
	struct ps_error err;
	uint64_t least = UINT64_MAX;

	test_attention(&att, 40, 4, 2, 1);
	pb.att = &att;
	for (size_t k = 0; k < ps_strategy_count; k++)
		if (!(ps_strategies[k]->flags & (PS_STRATEGY_BASELINE | PS_STRATEGY_CHOOSER)) &&
		    ps_strategy_min_memory(ps_strategies[k], &att) <= pb.M)
			least = ps_min_u64(least, check_run(&att, ps_strategies[k], pb.M));
	ck_assert_int_eq(ps_run(&pb, find("best"), NULL, &rep, &err), 0);
	ck_assert(rep.valid);
	ck_assert_uint_eq(rep.counts.loads + rep.counts.saves, least);
	ck_assert_ptr_nonnull(rep.plan.chosen);
	ck_assert_ptr_nonnull(strstr(rep.plan.summary, "chose "));
	ps_attention_free(&att);
}
END_TEST

/* ---- colpass ------------------------------------------------------------ */

/* The least M at which colpass plans with pb's layout (from the least M of
 * any layout up). */
static uint64_t colpass_least(struct ps_problem *pb)
{
	const struct ps_strategy *s = find("colpass");
	struct ps_plan plan;
	struct ps_error err;

	for (pb->M = ps_strategy_min_memory(s, pb->att);; pb->M++)
		if (ps_strategy_plan(s, pb, &plan, &err) == 0)
			return pb->M;
}

/*
 * Every layout through the engine (check_run_problem: the counts equal the
 * cost model, the peak at most the planned one and M, every product
 * aggregated once but rect-dup's ones column): ragged row blocks, no
 * normalisation, g = 1, g = 0, d = 1, at the least M the layout accepts
 * (and one below refused), a little above, and where one pass holds all
 * of H, where the I/O is the trivial bound 4nd.
 */
START_TEST(test_colpass_layouts)
{
	static const struct {
		uint64_t n, d, g;
		int norm;
	} dags[] = {
		{ 37, 4, 2, 1 }, { 37, 4, 2, 0 }, { 20, 5, 1, 1 }, { 20, 1, 3, 1 },
		{ 9, 3, 0, 1 }, { 23, 6, 2, 1 }, { 11, 3, 3, 0 },
	};
	static const char *const layouts[] = { "rect-dup", "rect-save", "tail" };
	const struct ps_strategy *s = find("colpass");

	for (size_t k = 0; k < sizeof(dags) / sizeof(dags[0]); k++) {
		struct ps_attention att;

		test_attention(&att, dags[k].n, dags[k].d, dags[k].g, dags[k].norm);
		for (size_t l = 0; l < 3; l++) {
			struct ps_problem pb = { .att = &att, .layout = layouts[l] };
			uint64_t least = colpass_least(&pb), all = att.r * att.nb;
			uint64_t Ms[] = { least, least + 7, all + att.d + att.nb + 2 };
			struct ps_plan plan;
			struct ps_error err;

			pb.M = least - 1;
			ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err), PS_EINPUT);
			for (size_t q = 0; q < 3; q++) {
				uint64_t io;

				pb.M = ps_max_u64(Ms[q], least);
				ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err), 0);
				ck_assert_str_eq(plan.variant, layouts[l]);
				ck_assert(!plan.bounded);
				io = check_run_problem(&pb, s);
				/* one pass over all of H: Q, K, V read once, A written once */
				if (q == 2 && l < 2 && att.g > 0)
					ck_assert_uint_eq(io, 4 * att.n * att.d);
			}
		}
		ps_attention_free(&att);
	}
}
END_TEST

/* The least I/O known at each point (upper bounds colpass must meet), by
 * its cost model, and through the engine where the DAG is small. */
START_TEST(test_colpass_targets)
{
	static const struct {
		uint64_t n, d, g, M, target;
	} targets[] = {
		{ 4096, 16, 3, 8192, 483328 },
		{ 1024, 16, 3, 8192, 120832 },
		{ 4096, 16, 3, 2048, 1347584 },
		{ 4096, 16, 3, 32768, 262144 },
		{ 128, 6, 2, 100, 6144 },
		{ 256, 8, 3, 740, 16384 },
	};
	const struct ps_strategy *s = find("colpass");

	for (size_t k = 0; k < sizeof(targets) / sizeof(targets[0]); k++) {
		struct ps_attention att;
		struct ps_problem pb = { .M = targets[k].M };
		struct ps_plan plan;
		struct ps_error err;

		test_attention(&att, targets[k].n, targets[k].d, targets[k].g, 1);
		pb.att = &att;
		ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err), 0);
		ck_assert_msg(plan.loads + plan.saves <= targets[k].target,
			      "n %llu M %llu: %llu > %llu", (unsigned long long)targets[k].n,
			      (unsigned long long)targets[k].M,
			      (unsigned long long)(plan.loads + plan.saves),
			      (unsigned long long)targets[k].target);
		ck_assert_uint_le(plan.peak_red, targets[k].M);
		if (att.n * att.r * att.nb <= 1000000)
			ck_assert_uint_le(check_run(&att, s, pb.M), targets[k].target);
		ps_attention_free(&att);
	}
}
END_TEST

START_TEST(test_cases_classified)
{
	struct ps_attention att;
	char why[512];

	test_attention(&att, 4096, 16, 3, 1);
	ck_assert_str_eq(ps_classify_case(&att, 8192, why, sizeof(why)), "II");
	ck_assert_str_eq(why, "d r = 15504 > M/4 = 2048; Key Lemma 3.2 holds for w = 3..9 (w tau(w) <= M/4); Theorem 1.2's w0 = g M^(1/(g+1))/(4e) = 2.62 is below g, so only the Key Lemma applies");
	/* M >= (4e)^(g+1): w0 >= g, and M < d r: Theorem 1.2's hypotheses */
	ck_assert_str_eq(ps_classify_case(&att, 14000, why, sizeof(why)), "II");
	ck_assert_ptr_nonnull(strstr(why, "Theorem 1.2's hypotheses as pebblesim checks them hold: M = 14000 < d r, and w0 = g M^(1/(g+1))/(4e) = 3.00 is in that range"));
	/* w0 = 3.71 >= g, but M = 32768 >= d r = 15504: not Theorem 1.2 */
	ck_assert_str_eq(ps_classify_case(&att, 32768, why, sizeof(why)), "II");
	ck_assert_ptr_nonnull(strstr(why, "but the theorem assumes M = o(d r) and here M = 32768 >= d r = 15504"));
	ck_assert_str_eq(ps_classify_case(&att, 4 * 15504, why, sizeof(why)), "I");
	/* w = 3 needs 3 tau(3) = 3 x 20 = 60 <= M/4 */
	ck_assert_str_eq(ps_classify_case(&att, 240, why, sizeof(why)), "II");
	ck_assert_str_eq(ps_classify_case(&att, 239, why, sizeof(why)), "III");
	ck_assert_str_eq(ps_classify_case(&att, 36, why, sizeof(why)), "III");
	ck_assert_str_eq(ps_classify_case(&att, 35, why, sizeof(why)), "IV");
	ps_attention_free(&att);
}
END_TEST

Suite *strategies_suite(void)
{
	Suite *s = suite_create("strategies");
	TCase *tc = tcase_create("grid");
	TCase *each = tcase_create("each");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_set_timeout(each, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_grid);
	tcase_add_test(each, test_subset_rank);
	tcase_add_test(each, test_keylemma_assignment);
	tcase_add_test(each, test_subtile_cuts_wide_tiles);
	tcase_add_test(each, test_matmul_stores_u_once);
	tcase_add_test(each, test_case1_linear_in_nd);
	tcase_add_test(each, test_keylemma_forced_w);
	tcase_add_test(each, test_best_takes_the_least);
	tcase_add_test(each, test_cases_classified);
	tcase_add_test(each, test_tuned_grid);
	tcase_add_test(each, test_tuned_headline);
	tcase_add_test(each, test_pruned_search_same);
	tcase_add_test(each, test_cheapest_where_best_plans_nothing);
	tcase_add_test(each, test_sizes_proof_is_default);
	tcase_add_test(each, test_colpass_layouts);
	tcase_add_test(each, test_colpass_targets);
	tcase_add_test(each, test_causal_grid);
	tcase_add_test(each, test_causal_headline);
	tcase_add_test(each, test_decode_grid);
	tcase_add_test(each, test_decode_headline);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, each);
	return s;
}
