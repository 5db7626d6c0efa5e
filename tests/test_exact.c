/*
 * Exact attention (MODEL.md section 5): the DAG against closed forms, the
 * rules on its kinds, flash and exact-matmul on a grid (valid, cost model
 * equal to the engine, ragged blocks included), and traces that replay.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/bounds.h"
#include "pebblesim/ops.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "pebblesim/trace.h"
#include "tests.h"

START_TEST(test_exact_counts)
{
	for (uint64_t n = 1; n <= 5; n++)
		for (uint64_t d = 1; d <= 4; d++)
			for (int norm = 0; norm <= 1; norm++) {
				struct ps_attention att;
				uint64_t nb = d + (uint64_t)norm, nn = n * n;

				test_exact_attention(&att, n, d, norm);
				ck_assert(att.exact);
				ck_assert_uint_eq(att.count[PS_KIND_S], nn);
				ck_assert_uint_eq(att.count[PS_KIND_E], nn);
				ck_assert_uint_eq(att.count[PS_KIND_O], n * nb);
				ck_assert_uint_eq(att.count[PS_KIND_PS], nn * d);
				ck_assert_uint_eq(att.count[PS_KIND_PO], nn * nb);
				ck_assert_uint_eq(att.count[PS_KIND_U1], 0);
				ck_assert_uint_eq(att.count[PS_KIND_H], 0);
				ck_assert_uint_eq(att.dag.node_count,
						  3 * n * d + 2 * nn + n * nb + nn * d + nn * nb +
						  (norm ? n * d : 0));
				ck_assert_uint_eq(att.dag.state_count,
						  att.dag.node_count - nn * d - nn * nb);
				/* PS 2, S d, E 1, PO |B| + d, O n, A 2 */
				ck_assert_uint_eq(att.dag.edge_count,
						  2 * nn * d + nn * d + nn + nn * (nb + d) +
						  n * nb * n + (norm ? 2 * n * d : 0));
				test_check_every_node(&att);
				ps_attention_free(&att);
			}
}
END_TEST

START_TEST(test_exact_parents)
{
	struct ps_attention att;
	char name[64];
	ps_node v;

	test_exact_attention(&att, 4, 3, 1);
	/* PS[1,2,0] = Q[1,0] K[2,0], edge 0 of S[1,2] */
	v = ps_attention_id3(&att, PS_KIND_PS, 1, 2, 0);
	ck_assert_uint_eq(ps_dag_parent(&att.dag, v, 0), ps_attention_id2(&att, PS_KIND_Q, 1, 0));
	ck_assert_uint_eq(ps_dag_parent(&att.dag, v, 1), ps_attention_id2(&att, PS_KIND_K, 2, 0));
	/* E[1,2] = exp(S[1,2] / sqrt d) */
	v = ps_attention_id2(&att, PS_KIND_E, 1, 2);
	ck_assert_uint_eq(ps_dag_parent_count(&att.dag, v), 1);
	ck_assert_uint_eq(ps_dag_parent(&att.dag, v, 0), ps_attention_id2(&att, PS_KIND_S, 1, 2));
	/* PO of the ones column reads E alone */
	v = ps_attention_id3(&att, PS_KIND_PO, 1, 2, 3);
	ck_assert_uint_eq(ps_dag_parent_count(&att.dag, v), 1);
	/* O[1,3] sums PO[1,j,3] over the 4 rows j; A[1,0] = O[1,0] / O[1,3] */
	v = ps_attention_id2(&att, PS_KIND_O, 1, 3);
	ck_assert_uint_eq(ps_dag_parent_count(&att.dag, v), 4);
	v = ps_attention_id2(&att, PS_KIND_A, 1, 0);
	ck_assert_uint_eq(ps_dag_parent(&att.dag, v, 1), ps_attention_id2(&att, PS_KIND_O, 1, 3));
	ps_dag_describe(&att.dag, ps_attention_id3(&att, PS_KIND_PO, 2, 1, 0), name, sizeof(name));
	ck_assert_str_eq(name, "PO[2,1,0]");
	ps_attention_free(&att);
}
END_TEST

/* Applies op to an engine on the exact DAG; returns the code. */
static int apply(const struct ps_attention *att, struct ps_engine *eng,
		 enum ps_opcode code, enum ps_kind kind, bool fuse,
		 struct ps_coordset c0, struct ps_coordset c1,
		 struct ps_coordset c2, struct ps_error *err)
{
	struct ps_op op = { .code = code, .kind = kind, .fuse = fuse, .c = { c0, c1, c2 } };

	return ps_op_apply(att, eng, &op, err);
}

START_TEST(test_exact_rules)
{
	struct ps_attention att;
	struct ps_engine eng;
	struct ps_error err;
	struct ps_coordset none = ps_range(0, 0);

	test_exact_attention(&att, 2, 2, 1);
	ck_assert_int_eq(ps_engine_init(&eng, &att.dag, 100, &err), 0);
	/* a mac into S needs Q and K red */
	ck_assert_int_eq(apply(&att, &eng, PS_OP_LOAD, PS_KIND_Q, false, ps_one(0),
			       ps_range(0, 2), none, &err), 0);
	ck_assert_int_eq(apply(&att, &eng, PS_OP_MAC, PS_KIND_S, false, ps_one(0),
			       ps_one(1), ps_range(0, 2), &err), PS_EINVALID);
	ck_assert_str_eq(eng.violation.text,
			 "mac into S[0,1]: K[1,0] is not in fast memory");
	ps_engine_free(&eng);

	/* E of an incomplete S */
	ck_assert_int_eq(ps_engine_init(&eng, &att.dag, 100, &err), 0);
	ck_assert_int_eq(apply(&att, &eng, PS_OP_LOAD, PS_KIND_Q, false, ps_one(0),
			       ps_range(0, 2), none, &err), 0);
	ck_assert_int_eq(apply(&att, &eng, PS_OP_LOAD, PS_KIND_K, false, ps_one(1),
			       ps_range(0, 1), none, &err), 0);
	ck_assert_int_eq(apply(&att, &eng, PS_OP_MAC, PS_KIND_S, false, ps_one(0),
			       ps_one(1), ps_one(0), &err), 0);
	ck_assert_int_eq(apply(&att, &eng, PS_OP_COMPUTE, PS_KIND_E, false, ps_one(0),
			       ps_one(1), none, &err), PS_EINVALID);
	ck_assert_str_eq(eng.violation.text, "compute E[0,1]: S[0,1] is incomplete (1 of 2 in-edges aggregated)");
	ps_engine_free(&eng);

	/* fuse is for macs into O only; H is no kind of exact attention */
	ck_assert_int_eq(ps_engine_init(&eng, &att.dag, 100, &err), 0);
	ck_assert_int_eq(apply(&att, &eng, PS_OP_MAC, PS_KIND_S, true, ps_one(0),
			       ps_one(1), ps_one(0), &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "\"fuse\" is defined for macs into O only: the products of S have inputs for parents");
	ck_assert_int_eq(apply(&att, &eng, PS_OP_MAC, PS_KIND_H, false, ps_one(0),
			       ps_one(0), ps_one(0), &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "a mac aggregates into S or O, not into H");
	ck_assert_int_eq(apply(&att, &eng, PS_OP_LOAD, PS_KIND_U1, false, ps_one(0),
			       ps_one(0), none, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "U1 is no kind of the exact-attention DAG");
	ps_engine_free(&eng);
	ps_attention_free(&att);
}
END_TEST

uint64_t test_check_exact_run(const struct ps_attention *att,
				const struct ps_strategy *s, uint64_t M)
{
	struct ps_problem pb = { .att = att, .M = M };
	struct ps_report rep;
	struct ps_error err;
	char why[256];
	uint64_t io;

	ps_error_clear(&err);
	ck_assert_msg(ps_run(&pb, s, NULL, &rep, &err) == 0, "%s n=%llu d=%llu M=%llu: %s",
		      s->name, (unsigned long long)att->n, (unsigned long long)att->d,
		      (unsigned long long)M, err.msg);
	ck_assert_msg(rep.valid, "%s n=%llu d=%llu M=%llu: %s", s->name,
		      (unsigned long long)att->n, (unsigned long long)att->d,
		      (unsigned long long)M, rep.violation);
	io = rep.counts.loads + rep.counts.saves;
	ck_assert_msg((s->flags & PS_STRATEGY_BASELINE) ||
		      (rep.counts.loads == rep.plan.loads && rep.counts.saves == rep.plan.saves),
		      "%s n=%llu d=%llu M=%llu: measured %llu+%llu, predicted %llu+%llu",
		      s->name, (unsigned long long)att->n, (unsigned long long)att->d,
		      (unsigned long long)M, (unsigned long long)rep.counts.loads,
		      (unsigned long long)rep.counts.saves,
		      (unsigned long long)rep.plan.loads, (unsigned long long)rep.plan.saves);
	ck_assert_msg((s->flags & PS_STRATEGY_BASELINE) ||
		      test_by_array_equal(&att->dag, rep.counts.by_array, rep.plan.by_array,
					  why, sizeof(why)),
		      "%s n=%llu d=%llu M=%llu: by array, %s", s->name, (unsigned long long)att->n,
		      (unsigned long long)att->d, (unsigned long long)M, why);
	ck_assert_uint_le(rep.counts.peak_red, (s->flags & PS_STRATEGY_BASELINE) ? M : rep.plan.peak_red);
	ck_assert_uint_le(rep.plan.peak_red, M);
	ck_assert_double_ge((double)io, rep.lower.best.value);
	ck_assert(!ps_report_bound_violated(&rep));
	ck_assert(rep.case_name == NULL);
	/* the block path against the element path, the reference */
	{
		struct ps_report ref;

		pb.element_only = true;
		ck_assert_int_eq(ps_run(&pb, s, NULL, &ref, &err), 0);
		ck_assert(ref.valid);
		ck_assert_mem_eq(&ref.counts, &rep.counts, sizeof(rep.counts));
	}
	return io;
}

START_TEST(test_exact_strategies_grid)
{
	static const uint64_t ns[] = { 1, 2, 7, 16, 33 };
	static const uint64_t ds[] = { 1, 3, 8 };
	/* the small grid (sanitizers) stops at n = 16, leaving out the
	 * grid's largest DAGs (47 s under ASan on the default grid) */
	const size_t n_count = test_grid_small() ? 4 : 5;

	for (size_t a = 0; a < n_count; a++)
		for (size_t b = 0; b < 3; b++)
			for (int norm = 0; norm <= 1; norm++) {
				struct ps_attention att;
				const char *names[] = { "flash", "exact-matmul", "naive-exact",
							 "naive-exact-belady" };

				test_exact_attention(&att, ns[a], ds[b], norm);
				for (int k = 0; k < 4; k++) {
					const struct ps_strategy *s = ps_strategy_find(names[k]);
					uint64_t least = ps_strategy_min_memory(s, &att);
					uint64_t Ms[] = { least, least + 1, 3 * least, 64, 500, 5000 };
					struct ps_problem pb = { .att = &att, .M = least - 1 };
					struct ps_plan plan;
					struct ps_error err;

					for (int q = 0; q < 6; q++)
						if (Ms[q] >= least)
							test_check_exact_run(&att, s, Ms[q]);
					ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err), PS_EINPUT);
				}
				ps_attention_free(&att);
			}
}
END_TEST

START_TEST(test_flash_trivial_when_everything_fits)
{
	struct ps_attention att;

	/* Br = n: K and V read once, I/O 4nd */
	test_exact_attention(&att, 16, 4, 1);
	ck_assert_uint_eq(test_check_exact_run(&att, ps_strategy_find("flash"), 4096), 4 * 16 * 4);
	ps_attention_free(&att);
}
END_TEST

START_TEST(test_strategies_keep_to_their_dag)
{
	struct ps_attention att, exact;
	struct ps_problem pb = { .M = 1000 };
	struct ps_plan plan;
	struct ps_error err;

	test_attention(&att, 8, 4, 2, 1);
	test_exact_attention(&exact, 8, 4, 1);
	ck_assert_uint_eq(ps_strategy_min_memory(ps_strategy_find("flash"), &att), UINT64_MAX);
	ck_assert_uint_eq(ps_strategy_min_memory(ps_strategy_find("generic"), &exact), UINT64_MAX);
	pb.att = &exact;
	ck_assert_int_eq(ps_strategy_plan(ps_strategy_find("keylemma"), &pb, &plan, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "keylemma pebbles approximate attention, not the exact-attention DAG");
	pb.att = &att;
	ck_assert_int_eq(ps_strategy_plan(ps_strategy_find("flash"), &pb, &plan, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "flash pebbles exact attention, not the approx-attention DAG");
	ps_attention_free(&att);
	ps_attention_free(&exact);
}
END_TEST

START_TEST(test_exact_traces_replay)
{
	char path[] = "/tmp/pebblesim-exact-XXXXXX";
	int fd = mkstemp(path);
	const char *names[] = { "flash", "exact-matmul" };
	struct ps_attention att;

	close(fd);
	test_exact_attention(&att, 9, 3, 1);
	for (int k = 0; k < 2; k++)
		for (int elementary = 0; elementary <= 1; elementary++) {
			const struct ps_strategy *s = ps_strategy_find(names[k]);
			struct ps_problem pb = { .att = &att, .M = 60 };
			struct ps_trace_writer w;
			struct ps_report run;
			struct ps_replay rep;
			struct ps_plan plan;
			struct ps_error err;
			FILE *f;

			ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err), 0);
			ck_assert_int_eq(ps_trace_open(&w, path, &att, NULL, pb.M, s->name, &plan,
						       NULL, elementary, &err), 0);
			ck_assert_int_eq(ps_run(&pb, s, &w.sink, &run, &err), 0);
			ck_assert(run.valid);
			ck_assert_int_eq(ps_trace_close(&w, &run.counts, true, &err), 0);
			f = fopen(path, "r");
			ck_assert_ptr_nonnull(f);
			ck_assert_int_eq(ps_trace_replay(f, path, 0, NULL, NULL, false, &rep, &err), 0);
			fclose(f);
			ck_assert_msg(rep.valid, "%s", rep.violation);
			ck_assert(rep.header.dag.exact);
			ck_assert_mem_eq(&rep.counts, &run.counts, sizeof(run.counts));
			ps_replay_free(&rep);
		}
	unlink(path);
	ps_attention_free(&att);
}
END_TEST

/* Saha and Ye as a reference: Omega(n^2 d^2 / M) for M >= d^2, their
 * small-memory Theta(n^2 d / sqrt M) below it; never applied. */
START_TEST(test_saha_ye_reference)
{
	struct ps_attention att;
	struct ps_lower_bounds lb;

	test_exact_attention(&att, 64, 8, 1);
	ps_bounds_lower(&att, 40, &lb);
	ck_assert_uint_eq(lb.skipped_count, 1);
	ck_assert_str_eq(lb.skipped[0].name, "Saha and Ye");
	ck_assert_ptr_nonnull(strstr(lb.skipped[0].why, "Theta(n^2 d / sqrt M) = Theta(5181)"));
	ps_bounds_lower(&att, 64, &lb);
	ck_assert_ptr_nonnull(strstr(lb.skipped[0].why, "Omega(n^2 d^2 / M) = Omega(4096) for M >= d^2"));
	ps_attention_free(&att);
}
END_TEST

Suite *exact_suite(void)
{
	Suite *s = suite_create("exact");
	TCase *tc = tcase_create("exact");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_exact_counts);
	tcase_add_test(tc, test_exact_parents);
	tcase_add_test(tc, test_exact_rules);
	tcase_add_test(tc, test_exact_strategies_grid);
	tcase_add_test(tc, test_flash_trivial_when_everything_fits);
	tcase_add_test(tc, test_strategies_keep_to_their_dag);
	tcase_add_test(tc, test_exact_traces_replay);
	tcase_add_test(tc, test_saha_ye_reference);
	suite_add_tcase(s, tc);
	return s;
}
