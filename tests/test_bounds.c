/*
 * The lower bounds against pebblings built to beat them. The generator
 * here shares no code with the strategies: it loads Q, K and V once, and
 * for each chunk of monomials aggregates H[chunk, B] over every row j,
 * consumes it at once into N over every row i, and drops it; then it
 * computes, saves and drops A. Its I/O is the trivial 4nd, and at the
 * least M that holds it (its measured peak) no applied lower bound may
 * exceed that. n runs from 1 past each hypothesis's threshold (n >= r).
 *
 * Also: each bound's hypotheses, skipped with the reason; the case
 * algorithms; and resident, the strategy that runs this pebbling.
 */
#include <stdio.h>
#include <string.h>

#include "pebblesim/bounds.h"
#include "pebblesim/ops.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "tests.h"

static int emit(struct ps_sink *sink, enum ps_opcode code, enum ps_kind kind,
		struct ps_coordset c0, struct ps_coordset c1)
{
	struct ps_op op = { .code = code, .kind = kind, .c = { c0, c1 } };
	struct ps_error err;

	return ps_sink_emit(sink, &op, &err);
}

static int emit_mac(struct ps_sink *sink, enum ps_kind into,
		    struct ps_coordset c0, struct ps_coordset c1,
		    struct ps_coordset c2)
{
	struct ps_op op = {
		.code = PS_OP_MAC, .kind = into, .fuse = true, .c = { c0, c1, c2 },
	};
	struct ps_error err;

	return ps_sink_emit(sink, &op, &err);
}

/* The pebbling of the file's comment, chunks of chunk monomials, into an
 * engine under M. Returns the engine's verdict (0 valid). */
static int fused_pebbling(const struct ps_attention *att, uint64_t chunk,
			  struct ps_engine *eng)
{
	struct ps_engine_sink sink;
	struct ps_coordset rows = ps_range(0, att->n), bs = ps_range(0, att->nb);
	struct ps_coordset feats = ps_range(0, att->d);
	int rc = 0;

	ps_engine_sink_init(&sink, att, eng);
	rc = rc ? rc : emit(&sink.sink, PS_OP_LOAD, PS_KIND_Q, rows, feats);
	rc = rc ? rc : emit(&sink.sink, PS_OP_LOAD, PS_KIND_K, rows, feats);
	rc = rc ? rc : emit(&sink.sink, PS_OP_LOAD, PS_KIND_V, rows, feats);
	for (uint64_t m = 0; m < att->r && !rc; m += chunk) {
		struct ps_coordset ms = ps_range(m, m + chunk < att->r ? m + chunk : att->r);

		rc = rc ? rc : emit_mac(&sink.sink, PS_KIND_H, rows, ms, bs);
		rc = rc ? rc : emit_mac(&sink.sink, PS_KIND_N, rows, ms, bs);
		rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, PS_KIND_H, ms, bs);
	}
	for (uint64_t b = 0; b < att->d && !rc; b++) {
		rc = rc ? rc : emit(&sink.sink, PS_OP_COMPUTE, PS_KIND_A, rows, ps_one(b));
		rc = rc ? rc : emit(&sink.sink, PS_OP_SAVE, PS_KIND_A, rows, ps_one(b));
		rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, PS_KIND_A, rows, ps_one(b));
	}
	return rc ? rc : ps_engine_finish(eng);
}

/* Runs the pebbling under M; its counts in *c, its verdict returned. */
static int run_fused(const struct ps_attention *att, uint64_t chunk,
		     uint64_t M, struct ps_counts *c)
{
	struct ps_engine eng;
	struct ps_error err;
	int rc;

	ck_assert_int_eq(ps_engine_init(&eng, &att->dag, M, &err), 0);
	rc = fused_pebbling(att, chunk, &eng);
	*c = eng.c;
	ps_engine_free(&eng);
	return rc;
}

/* Every applied lower bound at M lies at or below io; returns how many
 * partition bounds (not the trivial one) were applied. */
static int check_lower(const struct ps_attention *att, uint64_t M, uint64_t io)
{
	struct ps_lower_bounds lb;
	int partition = 0;

	ps_bounds_lower(att, M, &lb);
	ck_assert_uint_eq(lb.applied_count + lb.skipped_count, PS_LOWER_BOUND_COUNT);
	for (size_t k = 0; k < lb.applied_count; k++) {
		ck_assert_msg(lb.applied[k].value <= (double)io,
			      "n=%llu d=%llu g=%llu M=%llu: a valid pebbling of I/O %llu, yet %s claims %.0f",
			      (unsigned long long)att->n, (unsigned long long)att->d,
			      (unsigned long long)att->g, (unsigned long long)M,
			      (unsigned long long)io, lb.applied[k].name,
			      lb.applied[k].value);
		partition += strcmp(lb.applied[k].name, "trivial") != 0;
	}
	ck_assert_double_le(lb.best.value, (double)io);
	return partition;
}

/* The pebbling at its least M, and at a few larger M; returns whether any
 * partition bound applied. */
static int beat_bounds(uint64_t n, uint64_t d, uint64_t g, uint64_t chunk)
{
	struct ps_attention att;
	struct ps_counts c;
	uint64_t least, io;
	int applied = 0;

	test_attention(&att, n, d, g, 1);
	ck_assert_int_eq(run_fused(&att, chunk, UINT64_C(1) << 40, &c), 0);
	least = c.peak_red;
	io = c.loads + c.saves;
	ck_assert_uint_eq(io, 4 * n * d); /* the trivial bound, exactly */
	/* the least M that holds it, and one less that does not */
	ck_assert_int_eq(run_fused(&att, chunk, least, &c), 0);
	ck_assert_uint_eq(c.loads + c.saves, io);
	ck_assert_int_eq(run_fused(&att, chunk, least - 1, &c), PS_EINVALID);
	for (uint64_t M = least; M <= 8 * least; M *= 2)
		applied |= check_lower(&att, M, io);
	ps_attention_free(&att);
	return applied;
}

START_TEST(test_the_five_reported_pebblings)
{
	/* valid pebblings that were once said to violate A.2 or B.3 */
	static const struct {
		uint64_t n, M, io;
	} rows[] = {
		{ 1, 300, 64 }, { 4, 300, 256 }, { 8, 600, 512 },
		{ 16, 1200, 1024 }, { 32, 2400, 2048 },
	};

	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct ps_attention att;
		struct ps_counts c;
		uint64_t chunk;

		test_attention(&att, rows[k].n, 16, 5, 1);
		/* the largest chunk that fits M: Q, K, V, N and H[chunk, B]
		 * with a fused mac's two slots */
		chunk = (rows[k].M - 3 * rows[k].n * 16 - rows[k].n * 17 - 2) / 17;
		ck_assert_int_eq(run_fused(&att, chunk, rows[k].M, &c), 0);
		ck_assert_uint_le(c.peak_red, rows[k].M);
		ck_assert_uint_eq(c.loads + c.saves, rows[k].io);
		check_lower(&att, rows[k].M, rows[k].io);
		ps_attention_free(&att);
	}
}
END_TEST

START_TEST(test_fused_pebblings_past_the_threshold)
{
	/* small r, so that n goes past n >= r where the partition bounds apply */
	static const struct {
		uint64_t d, g;
	} dags[] = {
		{ 1, 1 }, { 2, 1 }, { 4, 2 }, { 3, 3 }, { 2, 5 }, { 8, 2 }, { 16, 1 },
	};

	for (size_t k = 0; k < sizeof(dags) / sizeof(dags[0]); k++) {
		uint64_t r;
		int applied = 0;

		ps_tau(dags[k].d, dags[k].g, &r);
		for (uint64_t n = 1; n <= 2 * r + 2; n = n < 4 ? n + 1 : n * 2) {
			applied |= beat_bounds(n, dags[k].d, dags[k].g, 1);
			applied |= beat_bounds(n, dags[k].d, dags[k].g, r);
		}
		/* past the threshold the partition bounds are in force */
		ck_assert_msg(applied, "d=%llu g=%llu: no partition bound applied",
			      (unsigned long long)dags[k].d, (unsigned long long)dags[k].g);
	}
}
END_TEST

/* The skip reasons, word for word. */
/*
 * Exact attention without normalisation (the outputs are O): pebblings of
 * the test's own, in blocks of a query rows and c key rows, either order.
 * Query blocks outermost keep Q[I] and O[I, B] in fast memory over every
 * key block; key blocks outermost keep K[J] and V[J], and load and save
 * O[I, B] around each visit. Each S tile is aggregated, consumed into O at
 * once and dropped.
 */
static int exact_pebbling(const struct ps_attention *att, uint64_t a, uint64_t c,
			  bool key_outer, struct ps_engine *eng)
{
	struct ps_engine_sink sink;
	struct ps_coordset feats = ps_range(0, att->d), bs = ps_range(0, att->nb);
	const uint64_t outer = key_outer ? c : a, inner = key_outer ? a : c;
	const enum ps_kind kept[2] = { key_outer ? PS_KIND_K : PS_KIND_Q,
				       key_outer ? PS_KIND_V : PS_KIND_Q };
	int rc = 0;

	ps_engine_sink_init(&sink, att, eng);
	for (uint64_t x = 0; x < att->n && !rc; x += outer) {
		struct ps_coordset xs = ps_range(x, x + outer < att->n ? x + outer : att->n);

		for (int k = 0; k < (key_outer ? 2 : 1) && !rc; k++)
			rc = emit(&sink.sink, PS_OP_LOAD, kept[k], xs, feats);
		for (uint64_t y = 0; y < att->n && !rc; y += inner) {
			struct ps_coordset ys = ps_range(y, y + inner < att->n ? y + inner : att->n);
			struct ps_coordset is = key_outer ? ys : xs, js = key_outer ? xs : ys;
			struct ps_op s_mac = { .code = PS_OP_MAC, .kind = PS_KIND_S,
					       .c = { is, js, feats } };
			struct ps_error err;

			if (key_outer) {
				rc = emit(&sink.sink, PS_OP_LOAD, PS_KIND_Q, is, feats);
				if (!rc && x > 0)
					rc = emit(&sink.sink, PS_OP_LOAD, PS_KIND_O, is, bs);
			} else {
				rc = emit(&sink.sink, PS_OP_LOAD, PS_KIND_K, js, feats);
				rc = rc ? rc : emit(&sink.sink, PS_OP_LOAD, PS_KIND_V, js, feats);
			}
			rc = rc ? rc : ps_sink_emit(&sink.sink, &s_mac, &err);
			rc = rc ? rc : emit_mac(&sink.sink, PS_KIND_O, is, js, bs);
			rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, PS_KIND_S, is, js);
			rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, key_outer ? PS_KIND_Q : PS_KIND_K,
					    key_outer ? is : js, feats);
			if (key_outer) {
				rc = rc ? rc : emit(&sink.sink, PS_OP_SAVE, PS_KIND_O, is, bs);
				rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, PS_KIND_O, is, bs);
			} else {
				rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, PS_KIND_V, js, feats);
			}
		}
		for (int k = 0; k < (key_outer ? 2 : 1) && !rc; k++)
			rc = emit(&sink.sink, PS_OP_DELETE, kept[k], xs, feats);
		if (!key_outer) {
			rc = rc ? rc : emit(&sink.sink, PS_OP_SAVE, PS_KIND_O, xs, bs);
			rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, PS_KIND_O, xs, bs);
		}
	}
	return rc ? rc : ps_engine_finish(eng);
}

/* The pebbling under M: its verdict, its counts in *c. */
static int run_exact(test_pebbling_fn *pebbling, const struct ps_attention *att, uint64_t a,
		     uint64_t c, bool key_outer, uint64_t M, struct ps_counts *counts)
{
	struct ps_engine eng;
	struct ps_error err;
	int rc;

	ck_assert_int_eq(ps_engine_init(&eng, &att->dag, M, &err), 0);
	rc = pebbling(att, a, c, key_outer, &eng);
	*counts = eng.c;
	ps_engine_free(&eng);
	return rc;
}

/* test_pebblings_against_bounds on one DAG. */
static void pebblings_on(test_pebbling_fn *pebbling, const struct ps_attention *att,
			 int *above_trivial, double *closest)
{
	static const uint64_t blocks[] = { 1, 2, 5, 64 };

	for (size_t x = 0; x < 4; x++)
		for (size_t y = 0; y < 4; y++)
			for (int order = 0; order <= 1; order++) {
				struct ps_counts c;
				struct ps_lower_bounds lb;
				uint64_t least, io;

				ck_assert_int_eq(run_exact(pebbling, att, blocks[x], blocks[y], order,
							   UINT64_C(1) << 40, &c), 0);
				least = c.peak_red;
				io = c.loads + c.saves;
				ck_assert_int_eq(run_exact(pebbling, att, blocks[x], blocks[y], order,
							   least, &c), 0);
				ck_assert_uint_eq(c.loads + c.saves, io);
				ck_assert_int_eq(run_exact(pebbling, att, blocks[x], blocks[y], order,
							   least - 1, &c), PS_EINVALID);
				for (uint64_t M = least; M <= 2 * least; M += least) {
					ps_bounds_lower(att, M, &lb);
					for (size_t k = 0; k < lb.applied_count; k++)
						ck_assert_msg(lb.applied[k].value <= (double)io,
							      "n=%llu d=%llu M=%llu: a valid pebbling of I/O %llu, yet %s claims %.0f",
							      (unsigned long long)att->n,
							      (unsigned long long)att->d,
							      (unsigned long long)M,
							      (unsigned long long)io,
							      lb.applied[k].name, lb.applied[k].value);
					if (strcmp(lb.best.name, "S segments (exact)"))
						continue;
					(*above_trivial)++;
					if (lb.best.value / (double)io > *closest)
						*closest = lb.best.value / (double)io;
				}
			}
}

/*
 * The segment bound against those pebblings, each at the least M that
 * holds it (one less fails) and at twice that: no applied bound exceeds
 * the I/O. The bound must also have teeth: above the trivial one on part
 * of the grid (22 points of it), and there within a factor 12 of some
 * pebbling (10.6 at best here).
 */
void test_pebblings_against_bounds(test_pebbling_fn *pebbling, bool causal,
				   int *above_trivial, double *closest)
{
	static const uint64_t ns[] = { 3, 8, 17, 33, 64 }, ds[] = { 1, 2, 5 };

	*above_trivial = 0;
	*closest = 0;
	for (size_t p = 0; p < 5; p++)
		for (size_t q = 0; q < 3; q++) {
			const struct ps_attention_params params = {
				.n = ns[p], .d = ds[q], .exact = true, .causal = causal,
			};
			struct ps_attention att;
			struct ps_error err;

			ck_assert_int_eq(ps_attention_init(&att, &params, &err), 0);
			pebblings_on(pebbling, &att, above_trivial, closest);
			ps_attention_free(&att);
		}
}

START_TEST(test_exact_pebblings_against_segments)
{
	int above_trivial;
	double closest;

	test_pebblings_against_bounds(exact_pebbling, false, &above_trivial, &closest);
	ck_assert_int_gt(above_trivial, 0);
	ck_assert_double_gt(closest, 1.0 / 12);
}
END_TEST

START_TEST(test_hypotheses_named)
{
	struct ps_attention att;
	struct ps_lower_bounds lb;

	test_attention(&att, 1024, 16, 5, 1);
	ps_bounds_lower(&att, 2048, &lb);
	ck_assert_uint_eq(lb.applied_count, 1);
	ck_assert_str_eq(lb.best.name, "trivial");
	ck_assert_uint_eq(lb.skipped_count, 3);
	ck_assert_str_eq(lb.skipped[0].name, "Key Lemma 3.2 (A.2)");
	ck_assert_str_eq(lb.skipped[0].why,
			 "needs n >= r = 20349 or n > 2M = 4096 (else a class may cut H off through V), here n = 1024");
	ps_attention_free(&att);

	/* n > 2M is enough, below r */
	test_attention(&att, 4097, 16, 5, 1);
	ps_bounds_lower(&att, 2048, &lb);
	ck_assert_uint_eq(lb.applied_count, 4);
	ck_assert_str_eq(lb.best.name, "Key Lemma 3.2 (A.2)");
	ps_attention_free(&att);
	test_attention(&att, 4096, 16, 5, 1);
	ps_bounds_lower(&att, 2048, &lb);
	ck_assert_uint_eq(lb.applied_count, 1);
	ps_attention_free(&att);

	/* g = 0, and no w with w tau(w) <= M/4 */
	test_attention(&att, 64, 4, 0, 1);
	ps_bounds_lower(&att, 64, &lb);
	ck_assert_uint_eq(lb.skipped_count, 3);
	ck_assert_str_eq(lb.skipped[1].why, "needs g >= 1, here g = 0");
	ps_attention_free(&att);
	test_attention(&att, 64, 4, 2, 1);
	ps_bounds_lower(&att, 8, &lb);
	ck_assert_str_eq(lb.skipped[0].why,
			 "needs some w >= 1 with w tau(w) <= M/4 = 2; w = 1 has tau(1) = g + 1 = 3");
	ps_attention_free(&att);
}
END_TEST

/*
 * Causal attention (MODEL.md section 7): a pebbling of the causal DAG of
 * its own, built to beat the bounds. It loads Q, K and V once, and for
 * each row j: the state H[j] from U2[j] V[j] and the carry of H[j-1]
 * (then dropped), N[j] from U1[j] and H[j]; then it computes, saves and
 * drops A. Its I/O is the trivial 4nd (3nd + nd, g >= 1; nd + nd, g =
 * 0): at its least M and above, no applied bound exceeds it, and the
 * partition bounds, whose proofs count the non-causal H, are skipped.
 */
static int causal_pebbling(const struct ps_attention *att, struct ps_engine *eng)
{
	struct ps_engine_sink sink;
	struct ps_coordset rows = ps_range(0, att->n), all = ps_range(0, att->r);
	struct ps_coordset bs = ps_range(0, att->nb), feats = ps_range(0, att->g ? att->d : 0);
	struct ps_error err;
	int rc = 0;

	ps_engine_sink_init(&sink, att, eng);
	rc = rc ? rc : emit(&sink.sink, PS_OP_LOAD, PS_KIND_Q, rows, feats);
	rc = rc ? rc : emit(&sink.sink, PS_OP_LOAD, PS_KIND_K, rows, feats);
	rc = rc ? rc : emit(&sink.sink, PS_OP_LOAD, PS_KIND_V, rows, ps_range(0, att->d));
	for (uint64_t j = 0; j < att->n && !rc; j++) {
		struct ps_op carry = { .code = PS_OP_MAC, .kind = PS_KIND_HJ, .carry = true,
				       .c = { ps_one(j), all, bs } };
		struct ps_op drop = { .code = PS_OP_DELETE, .kind = PS_KIND_HJ,
				      .c = { ps_one(j - 1), all, bs } };

		rc = rc ? rc : emit_mac(&sink.sink, PS_KIND_HJ, ps_one(j), all, bs);
		rc = rc || !j ? rc : ps_sink_emit(&sink.sink, &carry, &err);
		rc = rc || !j ? rc : ps_sink_emit(&sink.sink, &drop, &err);
		rc = rc ? rc : emit_mac(&sink.sink, PS_KIND_N, ps_one(j), all, bs);
	}
	for (uint64_t b = 0; b < att->d && !rc; b++) {
		enum ps_kind out = att->normalize ? PS_KIND_A : PS_KIND_N;

		if (att->normalize)
			rc = rc ? rc : emit(&sink.sink, PS_OP_COMPUTE, PS_KIND_A, rows, ps_one(b));
		rc = rc ? rc : emit(&sink.sink, PS_OP_SAVE, out, rows, ps_one(b));
		rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, out, rows, ps_one(b));
	}
	return rc ? rc : ps_engine_finish(eng);
}

START_TEST(test_causal_pebblings_against_bounds)
{
	static const uint64_t dags[][3] = {
		{ 1, 1, 1 }, { 7, 2, 2 }, { 40, 3, 3 }, { 300, 4, 2 }, { 5, 3, 0 }, { 64, 16, 1 },
	};

	for (size_t k = 0; k < sizeof(dags) / sizeof(dags[0]); k++)
		for (int norm = 0; norm <= 1; norm++) {
			const uint64_t n = dags[k][0], d = dags[k][1], g = dags[k][2];
			struct ps_attention att;
			struct ps_engine eng;
			struct ps_lower_bounds lb;
			struct ps_error err;
			uint64_t least, io;

			test_causal_attention(&att, n, d, g, norm);
			ck_assert_int_eq(ps_engine_init(&eng, &att.dag, UINT64_C(1) << 40, &err), 0);
			ck_assert_int_eq(causal_pebbling(&att, &eng), 0);
			least = eng.c.peak_red;
			io = eng.c.loads + eng.c.saves;
			ps_engine_free(&eng);
			/* the trivial bound, exactly */
			ck_assert_uint_eq(io, (g ? 3 : 1) * n * d + n * d);
			ck_assert_int_eq(ps_engine_init(&eng, &att.dag, least - 1, &err), 0);
			ck_assert_int_eq(causal_pebbling(&att, &eng), PS_EINVALID);
			ps_engine_free(&eng);
			for (uint64_t M = least; M <= 8 * least; M *= 2) {
				ck_assert_uint_eq(check_lower(&att, M, io), 0);
				ps_bounds_lower(&att, M, &lb);
				ck_assert_uint_eq(lb.applied_count, 1);
				ck_assert_double_eq(lb.best.value, (double)io);
				ck_assert_uint_eq(lb.skipped_count, 3);
				for (size_t q = 0; q < 3; q++)
					ck_assert_ptr_nonnull(strstr(lb.skipped[q].why,
								     "not for the causal DAG"));
			}
			ps_attention_free(&att);
		}
}
END_TEST

/*
 * Approximate decoding (MODEL.md section 8): pebblings of the decode DAG
 * of their own, built to beat the state-crossing bound. Token after
 * token, Q, K, V computed from the last output; the state in chunks of
 * q monomials, those of [r - kept, r) kept red from token to token (the
 * end of the order, where recurrent-decode keeps the start), the others
 * loaded, updated, consumed into N[t] and saved; A[t] saved. At the
 * least M that holds each (one less fails) and above, no applied bound
 * exceeds its I/O.
 */
static int decode_pebbling(const struct ps_attention *att, uint64_t kept, uint64_t q,
			   struct ps_engine *eng)
{
	const enum ps_kind out = att->normalize ? PS_KIND_A : PS_KIND_N;
	const struct ps_coordset feats = ps_range(0, att->d), bs = ps_range(0, att->nb);
	const uint64_t p = att->decode, r = att->r;
	struct ps_engine_sink sink;
	struct ps_error err;
	int rc;

	ps_engine_sink_init(&sink, att, eng);
	rc = emit(&sink.sink, PS_OP_LOAD, out, ps_one(p - 1), feats);
	for (uint64_t t = p; t < att->n && !rc; t++) {
		const struct ps_coordset row = ps_one(t);

		rc = rc ? rc : emit(&sink.sink, PS_OP_COMPUTE, PS_KIND_V, row, feats);
		rc = rc ? rc : emit(&sink.sink, PS_OP_COMPUTE, PS_KIND_K, row, feats);
		rc = rc ? rc : emit(&sink.sink, PS_OP_COMPUTE, PS_KIND_Q, row, feats);
		rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, out, ps_one(t - 1), feats);
		for (uint64_t m = 0; m < r && !rc; m += q) {
			const struct ps_coordset xs = ps_range(m, m + q < r ? m + q : r);
			const bool stays = m >= r - kept && t > p;
			struct ps_op ld = { .code = PS_OP_LOAD, .kind = PS_KIND_HJ, .c = { ps_one(t - 1), xs, bs } };
			struct ps_op carry = { .code = PS_OP_MAC, .kind = PS_KIND_HJ, .carry = true,
					       .c = { row, xs, bs } };
			struct ps_op drop = ld, sv = ld, drop_new = ld;

			drop.code = PS_OP_DELETE;
			sv.code = PS_OP_SAVE;
			sv.c[0] = row;
			drop_new.code = PS_OP_DELETE;
			drop_new.c[0] = row;
			rc = rc || stays ? rc : ps_sink_emit(&sink.sink, &ld, &err);
			rc = rc ? rc : emit_mac(&sink.sink, PS_KIND_HJ, row, xs, bs);
			rc = rc ? rc : ps_sink_emit(&sink.sink, &carry, &err);
			rc = rc ? rc : ps_sink_emit(&sink.sink, &drop, &err);
			rc = rc ? rc : emit_mac(&sink.sink, PS_KIND_N, row, xs, bs);
			if (m >= r - kept && t + 1 < att->n)
				continue; /* kept red for the next token */
			rc = rc ? rc : ps_sink_emit(&sink.sink, &sv, &err);
			rc = rc ? rc : ps_sink_emit(&sink.sink, &drop_new, &err);
		}
		rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, PS_KIND_Q, row, feats);
		rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, PS_KIND_K, row, feats);
		rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, PS_KIND_V, row, feats);
		if (att->normalize) {
			rc = rc ? rc : emit(&sink.sink, PS_OP_COMPUTE, PS_KIND_A, row, feats);
			rc = rc ? rc : emit(&sink.sink, PS_OP_DELETE, PS_KIND_N, row, bs);
		}
		rc = rc ? rc : emit(&sink.sink, PS_OP_SAVE, out, row, feats);
	}
	return rc ? rc : ps_engine_finish(eng);
}

START_TEST(test_approx_decode_pebblings_against_bounds)
{
	static const uint64_t dags[][4] = {
		/* n, P, d, g */
		{ 2, 1, 1, 1 }, { 6, 2, 2, 2 }, { 9, 4, 3, 2 }, { 12, 3, 2, 3 }, { 7, 5, 4, 0 },
	};
	unsigned above = 0;

	for (size_t k = 0; k < sizeof(dags) / sizeof(dags[0]); k++)
		for (int norm = 0; norm <= 1; norm++) {
			struct ps_attention_params par = {
				.n = dags[k][0], .decode = dags[k][1], .d = dags[k][2], .g = dags[k][3],
				.normalize = norm != 0, .causal = true,
			};
			struct ps_attention att;
			struct ps_error err;

			ck_assert_int_eq(ps_attention_init(&att, &par, &err), 0);
			for (uint64_t kept = 0; kept <= att.r; kept += 1 + att.r / 4)
				for (uint64_t q = 1; q <= 3; q++) {
					struct ps_engine eng;
					struct ps_lower_bounds lb;
					uint64_t least, io;

					ck_assert_int_eq(ps_engine_init(&eng, &att.dag, UINT64_C(1) << 30, &err), 0);
					ck_assert_int_eq(decode_pebbling(&att, kept, q, &eng), 0);
					least = eng.c.peak_red;
					io = eng.c.loads + eng.c.saves;
					ps_engine_free(&eng);
					ck_assert_int_eq(ps_engine_init(&eng, &att.dag, least - 1, &err), 0);
					ck_assert_int_eq(decode_pebbling(&att, kept, q, &eng), PS_EINVALID);
					ps_engine_free(&eng);
					for (uint64_t M = least; M <= 4 * least; M *= 2) {
						ps_bounds_lower(&att, M, &lb);
						ck_assert_uint_eq(lb.applied_count, 2);
						for (size_t a = 0; a < lb.applied_count; a++)
							ck_assert_msg(lb.applied[a].value <= (double)io,
								      "decode n=%llu P=%llu d=%llu g=%llu kept %llu q %llu M=%llu: I/O %llu, yet %s claims %.0f",
								      (unsigned long long)att.n,
								      (unsigned long long)att.decode,
								      (unsigned long long)att.d,
								      (unsigned long long)att.g,
								      (unsigned long long)kept,
								      (unsigned long long)q,
								      (unsigned long long)M,
								      (unsigned long long)io,
								      lb.applied[a].name, lb.applied[a].value);
						/* the crossing above the trivial bound: the
						 * state does not fit */
						above += lb.applied[0].value < lb.best.value;
					}
				}
			ps_attention_free(&att);
		}
	ck_assert_uint_gt(above, 20);
}
END_TEST

/* resident runs the fused pebbling, at the trivial I/O, cheapest for small n. */
START_TEST(test_resident_is_trivial_when_kv_fit)
{
	struct ps_attention att;
	struct ps_problem pb = { .M = 300 };
	struct ps_report rep;
	struct ps_plan plan;
	struct ps_error err;

	test_attention(&att, 4, 16, 5, 1);
	pb.att = &att;
	ck_assert_int_eq(ps_run(&pb, ps_strategy_find("resident"), NULL, &rep, &err), 0);
	ck_assert(rep.valid);
	ck_assert_uint_eq(rep.counts.loads + rep.counts.saves, 4 * 4 * 16);
	ck_assert(!ps_report_bound_violated(&rep));
	ck_assert_int_eq(ps_strategy_plan(ps_strategy_find("best"), &pb, &plan, &err), 0);
	ck_assert_str_eq(plan.chosen->name, "resident");
	ck_assert_ptr_nonnull(strstr(plan.summary, "below the runner-up"));
	ps_attention_free(&att);
}
END_TEST

START_TEST(test_case_algorithms)
{
	struct ps_attention att;
	struct ps_problem pb;
	struct ps_error err;
	char why[384];
	const struct ps_strategy *s;

	memset(&pb, 0, sizeof(pb));
	/* Case IV at M = 16: matmul needs 17, generic runs */
	test_attention(&att, 256, 16, 3, 1);
	pb.att = &att;
	pb.M = 16;
	s = ps_case_algorithm("IV", &pb, why, sizeof(why), &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "generic");
	ck_assert_str_eq(why, "Case IV runs Theorem 1.4's algorithm: generic; matmul does not run: it needs M >= 17");
	pb.M = 64;
	s = ps_case_algorithm("IV", &pb, why, sizeof(why), &err);
	ck_assert_ptr_nonnull(strstr(why, "the cheaper of it and"));
	/* Case II's keylemma alone: refused where it cannot run */
	pb.M = 16;
	ck_assert_ptr_null(ps_case_algorithm("II", &pb, why, sizeof(why), &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "no algorithm of Case II runs at M = 16: keylemma does not run"));
	ck_assert_ptr_null(ps_case_algorithm("V", &pb, why, sizeof(why), &err));
	ck_assert_str_eq(err.msg, "unknown case 'V': I, II, III, IV or auto");
	pb.M = 8192;
	ck_assert_str_eq(ps_case_algorithm("II", &pb, why, sizeof(why), &err)->name, "keylemma");
	pb.M = 4 * 16 * 969;
	ck_assert_str_eq(ps_case_algorithm("I", &pb, why, sizeof(why), &err)->name, "caseI");
	ps_attention_free(&att);

	/* Case III: subtile only where C(d,g) <= 4rg/M */
	test_attention(&att, 64, 16, 5, 1);
	pb.att = &att;
	pb.M = 2048;
	ck_assert_str_eq(ps_case_algorithm("III", &pb, why, sizeof(why), &err)->name, "generic");
	ck_assert_ptr_nonnull(strstr(why, "subtile not considered: Lemma 3.3's premise C(d,g) = 4368 > 4rg/M = 198.7 fails"));
	ps_attention_free(&att);
	test_attention(&att, 64, 5, 4, 1);
	pb.att = &att;
	pb.M = 100;
	ck_assert(ps_subtile_premise(&att, 100, NULL, 0));
	s = ps_case_algorithm("III", &pb, why, sizeof(why), &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(strstr(why, "the cheaper of it and"));
	ps_attention_free(&att);
}
END_TEST

Suite *bounds_suite(void)
{
	Suite *s = suite_create("bounds");
	TCase *tc = tcase_create("adversarial");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_the_five_reported_pebblings);
	tcase_add_test(tc, test_fused_pebblings_past_the_threshold);
	tcase_add_test(tc, test_hypotheses_named);
	tcase_add_test(tc, test_causal_pebblings_against_bounds);
	tcase_add_test(tc, test_approx_decode_pebblings_against_bounds);
	tcase_add_test(tc, test_exact_pebblings_against_segments);
	tcase_add_test(tc, test_resident_is_trivial_when_kv_fit);
	tcase_add_test(tc, test_case_algorithms);
	suite_add_tcase(s, tc);
	return s;
}
