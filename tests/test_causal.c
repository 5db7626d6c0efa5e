/*
 * Causal attention and token-by-token decoding (MODEL.md sections 7 and
 * 8): the options, the trace header's "causal" and "decode", and the
 * exact DAGs, strategies, values and bounds of docs/EXACT.md.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/bounds.h"
#include "pebblesim/limits.h"
#include "pebblesim/ops.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "pebblesim/trace.h"
#include "tests.h"

/* The causal exact-attention DAG (MODEL.md section 7) or the test fails. */
static void causal_exact(struct ps_attention *att, uint64_t n, uint64_t d, int normalize)
{
	struct ps_attention_params p = {
		.n = n, .d = d, .normalize = normalize != 0, .exact = true, .causal = true,
	};
	struct ps_error err;

	ps_error_clear(&err);
	ck_assert_msg(ps_attention_init(att, &p, &err) == 0, "%s", err.msg);
}

/* A trace file of these lines in a fresh temporary file; its path. */
static void write_file(char *path, size_t len, const char *text)
{
	int fd;
	FILE *f;

	snprintf(path, len, "/tmp/pebblesim-causal-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* What the causal paths print claims only what was computed: no case of
 * the paper in the map, flash's line names the mask, an option of the
 * paper's tilings is refused where best's candidates take none, and dag
 * names the outputs of the decode DAG that are no sinks. */
START_TEST(test_causal_sentences)
{
	ck_assert_int_eq(test_cli("map", "--causal", "-n", "64:128:x2", "-d", "2:3", "-g", "2", "-M", "200",
				  NULL), 0);
	HAS(test_out, "case                   none: the paper's cases are of non-causal attention");
	HAS(test_out, "strategies             recurrent, causal-colpass");
	ck_assert_int_eq(test_cli("--causal", "-n", "64", "-d", "4", "-g", "2", "-M", "200", NULL), 0);
	HAS(test_out, "exact attention (causal flash) ");
	ck_assert_int_eq(test_cli("--causal", "--w", "2", "-n", "64", "-d", "4", "-g", "2", "-M", "200",
				  NULL), 2);
	HAS(test_err, "--w is an option of keylemma, not of best on the causal DAG");
	ck_assert_int_eq(test_cli("--causal", "--tiles", "square", "-n", "64", "-d", "4", "-g", "2",
				  "-M", "200", NULL), 2);
	HAS(test_err, "--tiles is an option of generic, not of best on the causal DAG");
	ck_assert_int_eq(test_cli("dag", "--causal", "--decode", "2", "-n", "4", "-d", "2", "-g", "1",
				  "-o", "-", NULL), 0);
	HAS(test_err, "outputs the last state H[n-1,m,b] and A[t] (t < n - 1) are no sinks");
	ck_assert_int_eq(test_cli("dag", "--attention", "exact", "--causal", "--decode", "2", "-n", "4",
				  "-d", "2", "-o", "-", NULL), 0);
	HAS(test_err, "outputs K[t], V[t] and A[t] (t < n - 1) are no sinks");
}
END_TEST

START_TEST(test_options_by_name)
{
	/* view takes the DAG from the trace's header: the option is refused */
	ck_assert_int_eq(test_cli("view", "--causal", "-o", "-", "x.jsonl", NULL), 2);
	HAS(test_err, "option '--causal' does not apply to view");
	ck_assert_int_eq(test_cli("view", "--decode", "4", "-o", "-", "x.jsonl", NULL), 2);
	HAS(test_err, "option '--decode' does not apply to view");
	ck_assert_int_eq(test_cli("map", "--causal", "--decode", "4", "-n", "64:128", "-d", "4",
				  "-g", "2", "-M", "1k", NULL), 2);
	HAS(test_err, "option '--decode' does not apply to map");
	/* decoding is causal, and its prompt is shorter than n */
	ck_assert_int_eq(test_cli("--attention", "exact", "--decode", "4", "-n", "8", "-d", "2",
				  "-M", "64", NULL), 2);
	HAS(test_err, "decoding (--decode) is causal: it needs --causal");
	ck_assert_int_eq(test_cli("--attention", "exact", "--causal", "--decode", "8", "-n", "8",
				  "-d", "2", "-M", "64", NULL), 2);
	HAS(test_err, "the prompt length P = 8 of --decode must be below n = 8");
	ck_assert_int_eq(test_cli("--attention", "exact", "--causal", "--decode", "0", "-n", "8",
				  "-d", "2", "-M", "64", NULL), 2);
	HAS(test_err, "invalid value '0' for --decode");
	/* with a DAG file there are no attention parameters */
	ck_assert_int_eq(test_cli("run", "--dag", "x.graphml", "--causal", "-M", "4", NULL), 2);
	HAS(test_err, "option '--causal' does not apply to run --dag");
	/* validate insists on the whole DAG */
	ck_assert_int_eq(test_cli("validate", "--causal", "x.jsonl", NULL), 2);
	HAS(test_err, "-n, -d and -g go together (with --causal and --decode)");
}
END_TEST

START_TEST(test_header_keys)
{
	static const struct {
		const char *dag, *message;
	} bad[] = {
		{ "\"kind\":\"exact-attention\",\"n\":4,\"d\":2,\"normalize\":true,\"causal\":1",
		  "the header's \"causal\" must be true or false" },
		{ "\"kind\":\"exact-attention\",\"n\":4,\"d\":2,\"normalize\":true,\"causal\":true,\"decode\":0",
		  "\"decode\" must be an integer >= 1" },
		{ "\"kind\":\"approx-attention\",\"n\":4,\"d\":2,\"g\":1,\"normalize\":true,\"decode\":\"2\"",
		  "\"decode\" must be an integer >= 1" },
	};

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char path[64], text[512];

		snprintf(text, sizeof(text),
			 "{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{%s},\"M\":64}\n",
			 bad[k].dag);
		write_file(path, sizeof(path), text);
		ck_assert_int_eq(test_cli("validate", path, NULL), 2);
		HAS(test_err, ":1:");
		HAS(test_err, bad[k].message);
		unlink(path);
	}
}
END_TEST

/*
 * The masked DAG: S, E, PS, PO exist for j <= i alone, O[i,b] sums i + 1
 * products, and the edges of the nodes that exist add up to edge_count.
 */
START_TEST(test_causal_exact_dag)
{
	for (uint64_t n = 1; n <= 6; n++)
		for (uint64_t d = 1; d <= 3; d++)
			for (int norm = 0; norm <= 1; norm++) {
				struct ps_attention att;
				uint64_t edges = 0, existing = 0;

				causal_exact(&att, n, d, norm);
				for (ps_node v = 0; v < att.dag.node_count; v++) {
					uint64_t c[3];
					enum ps_kind k = ps_attention_decode(&att, v, c);
					const bool pair = k == PS_KIND_S || k == PS_KIND_E ||
							  k == PS_KIND_PS || k == PS_KIND_PO;

					ck_assert(ps_attention_exists(&att, k, c) == (!pair || c[1] <= c[0]));
					if (!ps_attention_exists(&att, k, c))
						continue;
					existing++;
					edges += ps_dag_parent_count(&att.dag, v);
					if (k == PS_KIND_O) {
						struct ps_sum sum;

						ck_assert_uint_eq(ps_dag_parent_count(&att.dag, v), c[0] + 1);
						ps_dag_sum(&att.dag, v, &sum);
						ck_assert_uint_eq(sum.in_degree, c[0] + 1);
					}
					if (k == PS_KIND_PO) {
						struct ps_product p;

						ps_dag_product(&att.dag, v, &p);
						ck_assert_uint_eq(p.in_degree, c[0] + 1);
						ck_assert_uint_eq(p.edge, c[1]);
					}
				}
				ck_assert_uint_eq(edges, att.dag.edge_count);
				ck_assert_uint_eq(existing, att.dag.node_count -
						  (att.n * att.n - att.n * (att.n + 1) / 2) *
						  (2 + att.d + att.nb));
				ps_attention_free(&att);
			}
}
END_TEST

/* An operation that names a node above the diagonal is refused before any
 * move, with the node named; in the same place a node below it is not. */
START_TEST(test_causal_mask_refused)
{
	struct ps_attention att;
	struct ps_engine eng;
	struct ps_error err;
	struct ps_op s_mac = { .code = PS_OP_MAC, .kind = PS_KIND_S,
			       .c = { ps_range(2, 4), ps_range(0, 4), ps_range(0, 2) } };
	struct ps_op e_one = { .code = PS_OP_COMPUTE, .kind = PS_KIND_E,
			       .c = { ps_one(1), ps_one(2) } };

	causal_exact(&att, 6, 2, 1);
	ck_assert_int_eq(ps_engine_init(&eng, &att.dag, 100, &err), 0);
	ck_assert_int_eq(ps_op_apply(&att, &eng, &s_mac, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "PS[2,3] is above the diagonal: causal attention has S, E, PS and PO only for j <= i (MODEL.md section 7)");
	ck_assert_int_eq(ps_op_apply(&att, &eng, &e_one, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "E[1,2] is above the diagonal: causal attention has S, E, PS and PO only for j <= i (MODEL.md section 7)");
	ck_assert_uint_eq(eng.c.moves, 0);
	/* j <= i: the engine judges it (K is not red) */
	s_mac.c[1] = ps_range(0, 3);
	ck_assert_int_eq(ps_op_apply(&att, &eng, &s_mac, &err), PS_EINVALID);
	ps_engine_free(&eng);
	ps_attention_free(&att);
}
END_TEST

/* Causal flash on a grid: valid, its cost model the engine's count in
 * total and by array, within M, above every applied bound, the block path
 * counting as the element path (test_check_exact_run); and the strategies
 * without a mask refuse the DAG by name. */
START_TEST(test_causal_flash_grid)
{
	static const uint64_t ns[] = { 1, 2, 3, 7, 16, 33 }, ds[] = { 1, 3, 8 };
	const size_t n_count = test_grid_small() ? 5 : 6;
	const struct ps_strategy *flash = ps_strategy_find("flash");

	for (size_t a = 0; a < n_count; a++)
		for (size_t b = 0; b < 3; b++)
			for (int norm = 0; norm <= 1; norm++) {
				struct ps_attention att;
				const uint64_t least = ps_strategy_min_memory(flash, &(struct ps_attention){
					.exact = true, .causal = true, .d = ds[b], .nb = ds[b] + (uint64_t)norm });
				const uint64_t Ms[] = { least, least + 1, 3 * least, 64, 500, 5000 };
				const char *others[] = { "exact-matmul", "naive-exact", "naive-exact-belady" };

				causal_exact(&att, ns[a], ds[b], norm);
				ck_assert_uint_eq(ps_strategy_min_memory(flash, &att), least);
				for (int q = 0; q < 6; q++)
					if (Ms[q] >= least)
						test_check_exact_run(&att, flash, Ms[q]);
				for (int k = 0; k < 3; k++) {
					const struct ps_strategy *s = ps_strategy_find(others[k]);
					struct ps_problem pb = { .att = &att, .M = 5000 };
					struct ps_plan plan;
					struct ps_error err;
					char want[128];

					ck_assert_uint_eq(ps_strategy_min_memory(s, &att), UINT64_MAX);
					ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err), PS_EINPUT);
					snprintf(want, sizeof(want),
						 "%s does not pebble the causal DAG (MODEL.md section 7)", s->name);
					ck_assert_str_eq(err.msg, want);
				}
				ps_attention_free(&att);
			}
}
END_TEST

/* The headline: n = 4096, d = 16, M = 8192, causal flash moves at most
 * 0.6 of what flash moves without the mask, on the block path. */
START_TEST(test_causal_flash_headline)
{
	struct ps_attention att, full;
	const struct ps_strategy *flash = ps_strategy_find("flash");
	struct ps_problem pb = { .att = &att, .M = 8192 };
	struct ps_report rep;
	struct ps_plan plan;
	struct ps_error err;
	uint64_t io;

	causal_exact(&att, 4096, 16, 1);
	test_exact_attention(&full, 4096, 16, 1);
	ck_assert_int_eq(ps_run(&pb, flash, NULL, &rep, &err), 0);
	ck_assert_msg(rep.valid, "%s", rep.violation);
	io = rep.counts.loads + rep.counts.saves;
	ck_assert_uint_eq(io, rep.plan.loads + rep.plan.saves);
	ck_assert_uint_le(rep.counts.peak_red, 8192);
	pb.att = &full;
	ck_assert_int_eq(ps_strategy_plan(flash, &pb, &plan, &err), 0);
	ck_assert_msg((double)io <= 0.6 * (double)(plan.loads + plan.saves),
		      "causal %llu against %llu", (unsigned long long)io,
		      (unsigned long long)(plan.loads + plan.saves));
	ck_assert_double_le(rep.lower.best.value, (double)io);
	ps_attention_free(&att);
	ps_attention_free(&full);
}
END_TEST

/* Values: the pebbled outputs equal the direct evaluation of causal
 * softmax; a DAG without the mask on the same inputs gives others.
 * (tests/numpy_causal.py checks them against NumPy.) */
START_TEST(test_causal_values)
{
	for (int norm = 0; norm <= 1; norm++) {
		struct ps_attention att;
		struct ps_values_inputs in = { .seed = 3, .entry_bound = 1.0 };
		struct ps_values vals;
		struct ps_problem pb = { .att = &att, .M = 300 };
		struct ps_report rep;
		struct ps_error err;

		causal_exact(&att, 29, 3, norm);
		ck_assert_int_eq(ps_values_init(&vals, &att, &in, &err), 0);
		pb.values = &vals;
		ck_assert_int_eq(ps_run(&pb, ps_strategy_find("flash"), NULL, &rep, &err), 0);
		ck_assert(rep.valid);
		ck_assert(rep.has_values);
		ck_assert_msg(!rep.values.failed && rep.values.error_vs_direct <= 1e-12,
			      "error %g", rep.values.error_vs_direct);
		/* row 0 sees key 0 alone: its output is V[0] */
		if (norm)
			for (uint64_t b = 0; b < 3; b++)
				ck_assert_double_eq_tol(vals.outputs[b], vals.v[b], 1e-15);
		ps_values_free(&vals);
		ps_attention_free(&att);
	}
}
END_TEST

/* A causal trace records "causal":true and validates to the run's own
 * count; validate insisting on the DAG without --causal refuses it. */
START_TEST(test_causal_trace)
{
	char path[64], count[32];
	json_t *header;
	json_error_t jerr;
	FILE *f;
	char line[512];

	write_file(path, sizeof(path), "");
	ck_assert_int_eq(test_cli("--attention", "exact", "--causal", "-n", "40", "-d", "3",
				  "-M", "120", "--trace", path, "--json", NULL), 0);
	{
		json_t *rep = json_loads(test_out, 0, &jerr);

		ck_assert_ptr_nonnull(rep);
		ck_assert(json_is_true(json_object_get(json_object_get(rep, "dag"), "causal")));
		snprintf(count, sizeof(count), "\"io\":%lld",
			 (long long)json_integer_value(json_object_get(rep, "io")));
		json_decref(rep);
	}
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	fclose(f);
	header = json_loads(line, 0, &jerr);
	ck_assert_ptr_nonnull(header);
	ck_assert(json_is_true(json_object_get(json_object_get(header, "dag"), "causal")));
	json_decref(header);
	ck_assert_int_eq(test_cli("validate", "--json", path, NULL), 0);
	HAS(test_out, count);
	HAS(test_out, "\"causal\":true");
	ck_assert_int_eq(test_cli("validate", "--element-path", "--json", path, NULL), 0);
	HAS(test_out, count);
	unlink(path);
}
END_TEST

/* One operation into the engine's sink: 0 or the engine's code. */
static int put(struct ps_sink *sink, enum ps_opcode code, enum ps_kind kind, bool fuse,
	       struct ps_coordset c0, struct ps_coordset c1, struct ps_coordset c2)
{
	struct ps_op op = { .code = code, .kind = kind, .fuse = fuse, .c = { c0, c1, c2 } };
	struct ps_error err;

	return ps_sink_emit(sink, &op, &err);
}

/* The pairs of I x J with j <= i (K[J], V[J], Q[I] and O[I, B] red):
 * S tiles aggregated, consumed into O at once, dropped; the rows that see
 * all of J as one tile, the others row by row. */
static int masked_tile(struct ps_sink *sink, const struct ps_attention *att,
		       struct ps_coordset is, struct ps_coordset js)
{
	const struct ps_coordset feats = ps_range(0, att->d), bs = ps_range(0, att->nb);
	const uint64_t whole = is.lo > js.hi - 1 ? is.lo : js.hi - 1;
	int rc = 0;

	for (uint64_t i = is.lo; i < is.hi && !rc; i++) {
		struct ps_coordset rows = i == whole ? ps_range(whole, is.hi) : ps_one(i);
		struct ps_coordset cols = i == whole ? js : ps_range(js.lo, i + 1);

		if (i < js.lo)
			continue;
		rc = put(sink, PS_OP_MAC, PS_KIND_S, false, rows, cols, feats);
		rc = rc ? rc : put(sink, PS_OP_MAC, PS_KIND_O, true, rows, cols, bs);
		rc = rc ? rc : put(sink, PS_OP_DELETE, PS_KIND_S, false, rows, cols, ps_range(0, 0));
		if (i == whole)
			break;
	}
	return rc;
}

/*
 * Causal exact attention without normalisation (the outputs are O):
 * pebblings of the test's own, in blocks of a query rows and c key rows,
 * either order, the pairs above the diagonal skipped. Query blocks
 * outermost keep Q[I] and O[I, B] over the key blocks J with j0 <= i1 - 1;
 * key blocks outermost keep K[J] and V[J], and load and save O[I, B]
 * around each visit.
 */
static int causal_pebbling(const struct ps_attention *att, uint64_t a, uint64_t c,
			   bool key_outer, struct ps_engine *eng)
{
	struct ps_engine_sink sink;
	const struct ps_coordset feats = ps_range(0, att->d), bs = ps_range(0, att->nb);
	const struct ps_coordset none = ps_range(0, 0);
	const uint64_t outer = key_outer ? c : a, inner = key_outer ? a : c, n = att->n;
	int rc = 0;

	ps_engine_sink_init(&sink, att, eng);
	for (uint64_t x = 0; x < n && !rc; x += outer) {
		struct ps_coordset xs = ps_range(x, x + outer < n ? x + outer : n);

		rc = put(&sink.sink, PS_OP_LOAD, key_outer ? PS_KIND_K : PS_KIND_Q, false, xs, feats, none);
		if (key_outer)
			rc = rc ? rc : put(&sink.sink, PS_OP_LOAD, PS_KIND_V, false, xs, feats, none);
		for (uint64_t y = 0; y < n && !rc; y += inner) {
			struct ps_coordset ys = ps_range(y, y + inner < n ? y + inner : n);
			struct ps_coordset is = key_outer ? ys : xs, js = key_outer ? xs : ys;

			if (js.lo > is.hi - 1)
				continue; /* above the diagonal: skipped */
			if (key_outer) {
				rc = put(&sink.sink, PS_OP_LOAD, PS_KIND_Q, false, is, feats, none);
				if (!rc && x > 0)
					rc = put(&sink.sink, PS_OP_LOAD, PS_KIND_O, false, is, bs, none);
			} else {
				rc = put(&sink.sink, PS_OP_LOAD, PS_KIND_K, false, js, feats, none);
				rc = rc ? rc : put(&sink.sink, PS_OP_LOAD, PS_KIND_V, false, js, feats, none);
			}
			rc = rc ? rc : masked_tile(&sink.sink, att, is, js);
			if (key_outer) {
				rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_Q, false, is, feats, none);
				rc = rc ? rc : put(&sink.sink, PS_OP_SAVE, PS_KIND_O, false, is, bs, none);
				rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_O, false, is, bs, none);
			} else {
				rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_K, false, js, feats, none);
				rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_V, false, js, feats, none);
			}
		}
		rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, key_outer ? PS_KIND_K : PS_KIND_Q, false,
				   xs, feats, none);
		if (key_outer) {
			rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_V, false, xs, feats, none);
		} else {
			rc = rc ? rc : put(&sink.sink, PS_OP_SAVE, PS_KIND_O, false, xs, bs, none);
			rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_O, false, xs, bs, none);
		}
	}
	return rc ? rc : ps_engine_finish(eng);
}

/*
 * The causal segment bound (docs/BOUNDS.md) against those pebblings, each
 * at the least M that holds it (one less fails) and at twice that: no
 * applied bound exceeds the I/O; the bound has teeth (above the trivial
 * one somewhere: 2 points of this grid, and there within a factor 16 of
 * some pebbling, 14.6 at best).
 */
START_TEST(test_causal_pebblings_against_segments)
{
	int above_trivial;
	double closest;

	test_pebblings_against_bounds(causal_pebbling, true, &above_trivial, &closest);
	ck_assert_int_gt(above_trivial, 0);
	ck_assert_double_gt(closest, 1.0 / 16);
}
END_TEST

/* The decode DAG of exact attention (MODEL.md section 8) or the test fails. */
static void decode_exact(struct ps_attention *att, uint64_t n, uint64_t prompt, uint64_t d,
			 int normalize)
{
	struct ps_attention_params p = {
		.n = n, .d = d, .normalize = normalize != 0, .exact = true, .causal = true,
		.decode = prompt,
	};
	struct ps_error err;

	ps_error_clear(&err);
	ck_assert_msg(ps_attention_init(att, &p, &err) == 0, "%s", err.msg);
}

/*
 * The decode DAG: the cache K, V of the prompt's rows and its last output
 * are inputs, every generated row's Q, K, V plain with the d entries of
 * the last output as parents; rows of the prompt exist for nothing else;
 * the outputs are A, K and V of the generated rows; the edges of the nodes
 * that exist add up to edge_count.
 */
START_TEST(test_decode_exact_dag)
{
	for (uint64_t n = 2; n <= 6; n++)
		for (uint64_t prompt = 1; prompt < n; prompt++)
			for (int norm = 0; norm <= 1; norm++) {
				struct ps_attention att;
				const uint64_t d = 2;
				const enum ps_kind out = norm ? PS_KIND_A : PS_KIND_O;
				uint64_t edges = 0;

				decode_exact(&att, n, prompt, d, norm);
				for (ps_node v = 0; v < att.dag.state_count; v++) {
					uint64_t c[3];
					enum ps_kind k = ps_attention_decode(&att, v, c);
					const bool generated = c[0] >= prompt;
					const bool pair = k == PS_KIND_S || k == PS_KIND_E;
					const bool exists = (generated && (!pair || c[1] <= c[0])) ||
							    k == PS_KIND_K || k == PS_KIND_V ||
							    (k == out && c[0] == prompt - 1);

					ck_assert_msg(ps_attention_exists(&att, k, c) == exists, "%s[%llu]",
						      ps_kinds[k].name, (unsigned long long)c[0]);
					if (!exists)
						continue;
					edges += ps_dag_parent_count(&att.dag, v);
					if (k == PS_KIND_Q || k == PS_KIND_K || k == PS_KIND_V) {
						ck_assert_int_eq(ps_dag_role(&att.dag, v),
								 generated ? PS_ROLE_PLAIN : PS_ROLE_INPUT);
						ck_assert_uint_eq(ps_dag_parent_count(&att.dag, v), generated ? d : 0);
						if (generated)
							ck_assert_uint_eq(ps_dag_parent(&att.dag, v, 1),
									  ps_attention_id2(&att, out, c[0] - 1, 1));
					}
					if (k == out && c[0] == prompt - 1)
						ck_assert_int_eq(ps_dag_role(&att.dag, v), PS_ROLE_INPUT);
				}
				for (ps_node v = att.dag.state_count; v < att.dag.node_count; v++) {
					uint64_t c[3];
					enum ps_kind k = ps_attention_decode(&att, v, c);

					if (ps_attention_exists(&att, k, c))
						edges += ps_dag_parent_count(&att.dag, v);
				}
				ck_assert_uint_eq(edges, att.dag.edge_count);
				ck_assert_uint_eq(att.dag.output_count, 3 * (n - prompt) * d);
				for (uint64_t k = 0; k < att.dag.output_count; k++) {
					uint64_t c[3];
					enum ps_kind kind = ps_attention_decode(&att, ps_dag_output(&att.dag, k), c);

					ck_assert(kind == out || kind == PS_KIND_K || kind == PS_KIND_V);
					ck_assert_uint_ge(c[0], prompt);
				}
				ps_attention_free(&att);
			}
}
END_TEST

/* The decode DAG's nodes that do not exist, and the strategies of the
 * other DAGs, are refused by name. */
START_TEST(test_decode_refused)
{
	struct ps_attention att, prefill;
	struct ps_engine eng;
	struct ps_error err;
	struct ps_problem pb = { .att = &att, .M = 1000 };
	struct ps_plan plan;
	struct ps_op q_load = { .code = PS_OP_LOAD, .kind = PS_KIND_Q, .c = { ps_range(2, 6), ps_range(0, 2) } };

	decode_exact(&att, 8, 5, 2, 1);
	causal_exact(&prefill, 8, 2, 1);
	ck_assert_int_eq(ps_engine_init(&eng, &att.dag, 100, &err), 0);
	ck_assert_int_eq(ps_op_apply(&att, &eng, &q_load, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "Q row i = 2 is not in the decode DAG: its rows begin at 5 (MODEL.md section 8)");
	ps_engine_free(&eng);
	ck_assert_int_eq(ps_strategy_plan(ps_strategy_find("flash"), &pb, &plan, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "flash does not pebble the decode DAG (MODEL.md section 8)");
	pb.att = &prefill;
	ck_assert_int_eq(ps_strategy_plan(ps_strategy_find("flash-decode"), &pb, &plan, &err), PS_EINPUT);
	ck_assert_str_eq(err.msg, "flash-decode pebbles the decode DAG (--causal --decode P, MODEL.md section 8) only");
	ps_attention_free(&att);
	ps_attention_free(&prefill);
}
END_TEST

/* flash-decode on a grid of n, P, d, M, both normalisations (as
 * test_check_exact_run checks every exact strategy). */
START_TEST(test_decode_grid)
{
	static const uint64_t ns[] = { 2, 5, 17, 40 }, ds[] = { 1, 3 };
	const struct ps_strategy *s = ps_strategy_find("flash-decode");

	for (size_t a = 0; a < 4; a++)
		for (size_t b = 0; b < 2; b++)
			for (int norm = 0; norm <= 1; norm++) {
				const uint64_t n = ns[a], prompts[] = { 1, n / 2, n - 1 };

				for (int p = 0; p < 3; p++) {
					struct ps_attention att;
					uint64_t least;

					if (!prompts[p] || (p && prompts[p] == prompts[p - 1]))
						continue;
					decode_exact(&att, n, prompts[p], ds[b], norm);
					least = ps_strategy_min_memory(s, &att);
					ck_assert_uint_eq(least, 5 * ds[b] + att.nb + 3);
					for (uint64_t M = least; M <= least + 8 * ds[b] * n; M += 1 + 2 * ds[b] * 3)
						test_check_exact_run(&att, s, M);
					test_check_exact_run(&att, s, 1u << 16);
					ps_attention_free(&att);
				}
			}
}
END_TEST

/* The headline: 64 tokens after a prompt of 4096, d = 16, M = 8192: valid
 * on the block path, at least 64 (2Pd - M), and not below any bound. */
START_TEST(test_decode_headline)
{
	struct ps_attention att;
	struct ps_problem pb = { .att = &att, .M = 8192 };
	struct ps_report rep;
	struct ps_error err;
	uint64_t io;

	decode_exact(&att, 4160, 4096, 16, 1);
	ck_assert_int_eq(ps_run(&pb, ps_strategy_find("flash-decode"), NULL, &rep, &err), 0);
	ck_assert_msg(rep.valid, "%s", rep.violation);
	io = rep.counts.loads + rep.counts.saves;
	ck_assert_uint_eq(io, rep.plan.loads + rep.plan.saves);
	ck_assert_uint_ge(io, 64 * (2 * 4096 * 16 - 8192));
	for (size_t k = 0; k < rep.lower.applied_count; k++)
		ck_assert_double_le(rep.lower.applied[k].value, (double)io);
	ck_assert_str_eq(rep.lower.best.name, "decode steps");
	ck_assert_uint_le(rep.counts.peak_red, 8192);
	ps_attention_free(&att);
}
END_TEST

/* Decoding with values: the outputs (A, K, V of the generated rows) equal
 * the direct evaluation of the same recurrence (tests/numpy_causal.py
 * checks it against NumPy too). */
START_TEST(test_decode_values)
{
	for (int norm = 0; norm <= 1; norm++) {
		struct ps_attention att;
		struct ps_values_inputs in = { .seed = 5, .entry_bound = 1.0 };
		struct ps_values vals;
		struct ps_problem pb = { .att = &att, .M = 60 };
		struct ps_report rep;
		struct ps_error err;

		decode_exact(&att, 30, 11, 3, norm);
		ck_assert_int_eq(ps_values_init(&vals, &att, &in, &err), 0);
		pb.values = &vals;
		ck_assert_int_eq(ps_run(&pb, ps_strategy_find("flash-decode"), NULL, &rep, &err), 0);
		ck_assert(rep.valid);
		ck_assert(rep.has_values);
		ck_assert_msg(!rep.values.failed && rep.values.error_vs_direct <= 1e-12,
			      "error %g at %s", rep.values.error_vs_direct, rep.values.worst);
		ck_assert_uint_eq(vals.output_rows, 19);
		/* the stand-in keeps the generated rows within (-B, B) */
		for (uint64_t t = 11; t < 30; t++)
			for (uint64_t a = 0; a < 3; a++)
				ck_assert(fabs(vals.q[t * 3 + a]) < 1.0 && fabs(vals.k[t * 3 + a]) < 1.0);
		ps_values_free(&vals);
		ps_attention_free(&att);
	}
}
END_TEST

/*
 * Pebblings of the test's own to beat the decode bounds: per token, the
 * cache rows [lo, hi) kept resident (loaded once, before the first token),
 * the others streamed in blocks of w, forwards or backwards; every one at
 * the least M that holds it (one less fails) and at twice that.
 */
static int decode_pebbling(const struct ps_attention *att, uint64_t lo, uint64_t hi, uint64_t w,
			   bool backwards, struct ps_engine *eng)
{
	struct ps_engine_sink sink;
	const struct ps_coordset feats = ps_range(0, att->d), bs = ps_range(0, att->nb);
	const struct ps_coordset none = ps_range(0, 0), kept = ps_range(lo, hi);
	const uint64_t prompt = att->decode;
	int rc;

	ps_engine_sink_init(&sink, att, eng);
	rc = put(&sink.sink, PS_OP_LOAD, PS_KIND_A, false, ps_one(prompt - 1), feats, none);
	if (lo < hi) {
		rc = rc ? rc : put(&sink.sink, PS_OP_LOAD, PS_KIND_K, false, kept, feats, none);
		rc = rc ? rc : put(&sink.sink, PS_OP_LOAD, PS_KIND_V, false, kept, feats, none);
	}
	for (uint64_t t = prompt; t < att->n && !rc; t++) {
		const struct ps_coordset row = ps_one(t);

		rc = put(&sink.sink, PS_OP_COMPUTE, PS_KIND_Q, false, row, feats, none);
		rc = rc ? rc : put(&sink.sink, PS_OP_COMPUTE, PS_KIND_K, false, row, feats, none);
		rc = rc ? rc : put(&sink.sink, PS_OP_COMPUTE, PS_KIND_V, false, row, feats, none);
		rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_A, false, ps_one(t - 1), feats, none);
		rc = rc ? rc : put(&sink.sink, PS_OP_SAVE, PS_KIND_K, false, row, feats, none);
		rc = rc ? rc : put(&sink.sink, PS_OP_SAVE, PS_KIND_V, false, row, feats, none);
		for (uint64_t x = 0; x < t && !rc; x += w) {
			const uint64_t j0 = backwards ? (t > x + w ? t - x - w : 0) : x;
			const uint64_t j1 = backwards ? t - x : (x + w < t ? x + w : t);

			for (uint64_t j = j0; j < j1 && !rc; j++) {
				const bool resident = j >= lo && j < hi;

				if (!resident) {
					rc = put(&sink.sink, PS_OP_LOAD, PS_KIND_K, false, ps_one(j), feats, none);
					rc = rc ? rc : put(&sink.sink, PS_OP_LOAD, PS_KIND_V, false, ps_one(j), feats, none);
				}
			}
			rc = rc ? rc : masked_tile(&sink.sink, att, row, ps_range(j0, j1));
			for (uint64_t j = j0; j < j1 && !rc; j++)
				if (!(j >= lo && j < hi)) {
					rc = put(&sink.sink, PS_OP_DELETE, PS_KIND_K, false, ps_one(j), feats, none);
					rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_V, false, ps_one(j), feats, none);
				}
		}
		rc = rc ? rc : masked_tile(&sink.sink, att, row, row);
		rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_K, false, row, feats, none);
		rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_V, false, row, feats, none);
		rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_Q, false, row, feats, none);
		rc = rc ? rc : put(&sink.sink, PS_OP_COMPUTE, PS_KIND_A, false, row, feats, none);
		rc = rc ? rc : put(&sink.sink, PS_OP_DELETE, PS_KIND_O, false, row, bs, none);
		rc = rc ? rc : put(&sink.sink, PS_OP_SAVE, PS_KIND_A, false, row, feats, none);
	}
	return rc ? rc : ps_engine_finish(eng);
}

static int run_decode(const struct ps_attention *att, uint64_t lo, uint64_t hi, uint64_t w,
		      bool backwards, uint64_t M, struct ps_counts *counts)
{
	struct ps_engine eng;
	struct ps_error err;
	int rc;

	ck_assert_int_eq(ps_engine_init(&eng, &att->dag, M, &err), 0);
	rc = decode_pebbling(att, lo, hi, w, backwards, &eng);
	*counts = eng.c;
	ps_engine_free(&eng);
	return rc;
}

/* The decode bounds (docs/BOUNDS.md "Exact decoding") against them: no
 * applied bound exceeds the I/O; the steps bound has teeth, within 10% of
 * some pebbling where the cache does not fit. */
START_TEST(test_decode_pebblings_against_bounds)
{
	static const uint64_t ns[] = { 6, 20, 48 }, ds[] = { 1, 4 };
	double closest = 0;

	for (size_t a = 0; a < 3; a++)
		for (size_t b = 0; b < 2; b++) {
			const uint64_t n = ns[a], prompts[] = { 1, n / 2, n - 2 };

			for (int p = 0; p < 3; p++) {
				struct ps_attention att;
				const uint64_t P = prompts[p];
				const uint64_t ranges[][2] = { { 0, 0 }, { 0, P / 3 }, { P / 2, P }, { 0, P } };

				decode_exact(&att, n, P, ds[b], 1);
				for (int r = 0; r < 4; r++)
					for (uint64_t w = 1; w <= 3; w += 2)
						for (int back = 0; back <= 1; back++) {
							struct ps_counts c;
							uint64_t least, io;

							ck_assert_int_eq(run_decode(&att, ranges[r][0], ranges[r][1], w,
										    back, UINT64_C(1) << 40, &c), 0);
							least = c.peak_red;
							io = c.loads + c.saves;
							ck_assert_int_eq(run_decode(&att, ranges[r][0], ranges[r][1], w,
										    back, least, &c), 0);
							ck_assert_int_eq(run_decode(&att, ranges[r][0], ranges[r][1], w,
										    back, least - 1, &c), PS_EINVALID);
							for (uint64_t M = least; M <= 2 * least; M += least) {
								struct ps_lower_bounds lb;

								ps_bounds_lower(&att, M, &lb);
								for (size_t k = 0; k < lb.applied_count; k++)
									ck_assert_msg(lb.applied[k].value <= (double)io,
										      "n=%llu P=%llu d=%llu M=%llu: a valid pebbling of I/O %llu, yet %s claims %.0f",
										      (unsigned long long)n, (unsigned long long)P,
										      (unsigned long long)ds[b], (unsigned long long)M,
										      (unsigned long long)io, lb.applied[k].name,
										      lb.applied[k].value);
								if (!strcmp(lb.best.name, "decode steps") &&
								    lb.best.value / (double)io > closest)
									closest = lb.best.value / (double)io;
							}
						}
				ps_attention_free(&att);
			}
		}
	ck_assert_double_gt(closest, 0.9);
}
END_TEST

/* A decode trace records "decode":P and validates to the run's count, with
 * the I/O per token in the report. */
START_TEST(test_decode_trace)
{
	char path[64], count[32];
	json_t *rep;
	json_error_t jerr;

	write_file(path, sizeof(path), "");
	ck_assert_int_eq(test_cli("--attention", "exact", "--causal", "--decode", "30", "-n", "40",
				  "-d", "3", "-M", "80", "--trace", path, "--json", NULL), 0);
	rep = json_loads(test_out, 0, &jerr);
	ck_assert_ptr_nonnull(rep);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(rep, "dag"), "decode")), 30);
	ck_assert_int_eq(json_integer_value(json_object_get(rep, "tokens")), 10);
	ck_assert_double_eq_tol(json_real_value(json_object_get(rep, "io_per_token")),
				(double)json_integer_value(json_object_get(rep, "io")) / 10, 1e-9);
	snprintf(count, sizeof(count), "\"io\":%lld",
		 (long long)json_integer_value(json_object_get(rep, "io")));
	json_decref(rep);
	ck_assert_int_eq(test_cli("validate", "--json", path, NULL), 0);
	HAS(test_out, count);
	HAS(test_out, "\"decode\":30");
	ck_assert_int_eq(test_cli("validate", "-n", "40", "-d", "3", "-g", "0", "--causal", path, NULL), 2);
	HAS(test_err, "is not the one asked for");
	ck_assert_int_eq(test_cli("--attention", "exact", "--causal", "--decode", "30", "-n", "40",
				  "-d", "3", "-M", "80", NULL), 0);
	HAS(test_out, "I/O per token");
	unlink(path);
}
END_TEST

/* sweep --decode LO:HI sweeps the prompt's length; its CSV ends with the
 * decode columns, which a merge reads back, and its JSON rows carry the
 * I/O per token. */
START_TEST(test_decode_sweep)
{
	char path[64];
	json_t *root, *rows;
	json_error_t jerr;

	write_file(path, sizeof(path), "");
	ck_assert_int_eq(test_cli("sweep", "--causal", "--decode", "16:64:x2", "-n", "80", "-d", "4",
				  "-M", "200", "--strategies", "flash-decode", "-j", "1", "--csv", path,
				  NULL), 0);
	HAS(test_out, "flash-decode");
	ck_assert_int_eq(test_cli("sweep", "--merge", path, "--json", NULL), 0);
	root = json_loads(test_out, 0, &jerr);
	ck_assert_ptr_nonnull(root);
	rows = json_object_get(root, "rows");
	ck_assert_uint_eq(json_array_size(rows), 3);
	for (size_t k = 0; k < 3; k++) {
		json_t *r = json_array_get(rows, k);
		const json_int_t P = (json_int_t)16 << k;

		ck_assert_str_eq(json_string_value(json_object_get(r, "swept")), "P");
		ck_assert_int_eq(json_integer_value(json_object_get(r, "decode")), P);
		ck_assert(json_is_true(json_object_get(r, "valid")));
		ck_assert_double_eq_tol(json_real_value(json_object_get(r, "io_per_token")),
					(double)json_integer_value(json_object_get(r, "io")) / (double)(80 - P),
					1e-9);
	}
	json_decref(root);
	/* a decoding sweep is measured against flash-decode, the exact
	 * strategy of its DAG, unless told otherwise */
	ck_assert_int_eq(test_cli("sweep", "--causal", "--decode", "16:64:x2", "-n", "80", "-d", "4",
				  "-g", "1", "-M", "200", "--strategies", "best,flash-decode", "--predict",
				  "-j", "1", NULL), 0);
	HAS(test_out, "crossover: best moves less than flash-decode for P in");
	/* without decoding the CSV has no decode columns */
	ck_assert_int_eq(test_cli("sweep", "--attention", "exact", NULL), 2);
	ck_assert_int_eq(test_cli("sweep", "-n", "16:32:x2", "-d", "2", "-M", "100", "--strategies",
				  "flash", "-j", "1", "--csv", "-", NULL), 0);
	ck_assert_ptr_null(strstr(test_out, "io_per_token"));
	unlink(path);
}
END_TEST

/* The rows of sweep --causal --decode P -n RANGE --strategies
 * best,flash-decode by the cost models (best's, then flash-decode's, at
 * each n). */
static json_t *decode_sweep(const char *P, const char *range, const char *g)
{
	json_t *root;
	json_error_t jerr;

	ck_assert_int_eq(test_cli("sweep", "--causal", "--decode", P, "-n", range, "-d", "4", "-g", g,
				  "-M", "64", "--strategies", "best,flash-decode", "--predict", "-j", "1",
				  "--json", NULL), 0);
	root = json_loads(test_out, 0, &jerr);
	ck_assert_ptr_nonnull(root);
	return root;
}

/* The I/O of the row k of a sweep, of decoding after P rows at n. */
static json_int_t decode_row_io(const json_t *root, size_t k, json_int_t P, json_int_t n,
				const char *label)
{
	const json_t *row = json_array_get(json_object_get(root, "rows"), k);

	ck_assert_ptr_nonnull(row);
	ck_assert_int_eq(json_integer_value(json_object_get(row, "decode")), P);
	ck_assert_int_eq(json_integer_value(json_object_get(row, "n")), n);
	ck_assert_str_eq(json_string_value(json_object_get(row, "label")), label);
	ck_assert_int_gt(json_integer_value(json_object_get(row, "io")), 0);
	return json_integer_value(json_object_get(row, "io"));
}

/*
 * frontier --decode P: best among the decode strategies against
 * flash-decode over n > P. Its crossover is where sweep --causal --decode
 * of the same strategies crosses: best below flash-decode at the end,
 * not below next to it; every point is sweep's, per token too; the
 * per-step epsilon it measures stays within the a-priori bound of the
 * same g where that bound exists; and every combination it refuses is
 * refused by name.
 */
START_TEST(test_decode_frontier)
{
	json_t *root, *points, *iv, *measured, *sweep;
	json_error_t jerr;
	json_int_t from, g;
	char gs[8], range[48];
	double bound;

	ck_assert_int_eq(test_cli("frontier", "--causal", "--decode", "8", "-n", "9:300:+13", "-d", "4",
				  "-M", "64", "--epsilon", "1e-2", "--entry-bound", "0.5", "--json", NULL), 0);
	root = json_loads(test_out, 0, &jerr);
	ck_assert_ptr_nonnull(root);
	ck_assert_int_eq(json_integer_value(json_object_get(root, "decode")), 8);
	ck_assert_str_eq(json_string_value(json_object_get(root, "baseline")), "flash-decode");
	g = json_integer_value(json_object_get(json_object_get(root, "polynomial"), "g"));
	snprintf(gs, sizeof(gs), "%lld", (long long)g);
	ck_assert_uint_eq(json_array_size(json_object_get(root, "intervals")), 1);
	iv = json_array_get(json_object_get(root, "intervals"), 0);
	ck_assert(json_is_false(json_object_get(iv, "from_edge")));
	from = json_integer_value(json_object_get(iv, "from"));
	ck_assert_int_gt(from, 9);
	snprintf(range, sizeof(range), "%lld:%lld", (long long)from - 1, (long long)from);
	sweep = decode_sweep("8", range, gs);
	ck_assert_int_ge(decode_row_io(sweep, 0, 8, from - 1, "best"),
			 decode_row_io(sweep, 1, 8, from - 1, "flash-decode"));
	ck_assert_int_lt(decode_row_io(sweep, 2, 8, from, "best"),
			 decode_row_io(sweep, 3, 8, from, "flash-decode"));
	json_decref(sweep);
	/* the grid's points, every one sweep's */
	points = json_object_get(root, "points");
	sweep = decode_sweep("8", "9:300:+13", gs);
	ck_assert_uint_gt(json_array_size(points), 20);
	ck_assert_uint_eq(json_array_size(json_object_get(sweep, "rows")), 2 * json_array_size(points));
	for (size_t k = 0; k < json_array_size(points); k++) {
		json_t *pt = json_array_get(points, k);
		const json_int_t n = json_integer_value(json_object_get(pt, "n"));
		const json_int_t io = json_integer_value(json_object_get(pt, "io"));
		const json_int_t flash = json_integer_value(json_object_get(pt, "flash_io"));

		ck_assert_str_eq(json_string_value(json_object_get(pt, "strategy")), "recurrent-decode");
		ck_assert_int_eq(json_integer_value(json_object_get(pt, "tokens")), n - 8);
		ck_assert_double_eq_tol(json_real_value(json_object_get(pt, "io_per_token")),
					(double)io / (double)(n - 8), 1e-9);
		ck_assert_double_eq_tol(json_real_value(json_object_get(pt, "flash_io_per_token")),
					(double)flash / (double)(n - 8), 1e-9);
		ck_assert_int_eq(io, decode_row_io(sweep, 2 * k, 8, n, "best"));
		ck_assert_int_eq(flash, decode_row_io(sweep, 2 * k + 1, 8, n, "flash-decode"));
	}
	json_decref(sweep);
	json_decref(root);
	/* the text says per token, and confirms the end by simulation */
	ck_assert_int_eq(test_cli("frontier", "--causal", "--decode", "8", "-n", "9:300", "-d", "4",
				  "-M", "64", "--epsilon", "1e-2", "--entry-bound", "0.5", NULL), 0);
	HAS(test_out, "moves less data per generated token than exact decoding (flash-decode) for n in [");
	HAS(test_out, "bound <= 0.01 at every step");
	HAS(test_out, "simulated: best ");
	HAS(test_out, " per token ");
	/* the CSV is sweep's with its decode columns, per token; the plot
	 * draws I/O per generated token against n */
	ck_assert_int_eq(test_cli("frontier", "--causal", "--decode", "8", "-n", "9:16", "-d", "4",
				  "-M", "64", "--epsilon", "1e-2", "--entry-bound", "0.5", "--csv", "-", NULL), 0);
	HAS(test_out, ",decode,tokens,io_per_token,");
	HAS(test_out, ",flash-decode,");
	HAS(test_out, ",8,8,");
	{
		char dir[] = "/tmp/pebblesim-causal-XXXXXX", gp[64], dat[64];
		FILE *f;

		ck_assert_ptr_nonnull(mkdtemp(dir));
		snprintf(gp, sizeof(gp), "%s/f.gp", dir);
		snprintf(dat, sizeof(dat), "%s/f.dat", dir);
		ck_assert_int_eq(test_cli("frontier", "--causal", "--decode", "8", "-n", "9:16", "-d", "4",
					  "-M", "64", "--epsilon", "1e-2", "--entry-bound", "0.5",
					  "--plot-script", gp, NULL), 0);
		f = fopen(gp, "r");
		ck_assert_ptr_nonnull(f);
		test_slurp(f, test_out, sizeof(test_out));
		HAS(test_out, "set ylabel 'I/O per generated token ((loads + saves) / (n - P))'");
		HAS(test_out, "decoding: P = 8, d = 4, g = 3, M = 64");
		HAS(test_out, "best at the least g whose a-priori bound per step is <= 0.01");
		HAS(test_out, "title 'flash-decode'");
		unlink(gp);
		unlink(dat);
		ck_assert_int_eq(rmdir(dir), 0);
	}

	/* measured: per step, on a prompt of min(P, 4096) rows, within the
	 * a-priori bound of the same g (entries in [-B, B], the stand-in's
	 * rows in (-B, B)) */
	ck_assert_int_eq(test_cli("frontier", "--causal", "--decode", "32", "-n", "33:96", "-d", "4",
				  "-M", "256", "--epsilon", "1e-3", "--entry-bound", "0.5", "--polynomial",
				  "minimax", "--bound", "measured", "--json", NULL), 0);
	root = json_loads(test_out, 0, &jerr);
	ck_assert_ptr_nonnull(root);
	measured = json_object_get(root, "measured");
	ck_assert_int_eq(json_integer_value(json_object_get(measured, "prompt_rows")), 32);
	ck_assert_int_eq(json_integer_value(json_object_get(measured, "tokens")), 64);
	ck_assert_int_eq(json_integer_value(json_object_get(measured, "n")), 96);
	bound = json_real_value(json_object_get(json_object_get(root, "polynomial"), "bound"));
	ck_assert(json_real_value(json_object_get(measured, "epsilon")) <= 1e-3);
	ck_assert(json_real_value(json_object_get(measured, "epsilon")) > 0.0);
	ck_assert(json_real_value(json_object_get(measured, "epsilon")) <= bound);
	ck_assert(json_is_real(json_object_get(measured, "drift")));
	json_decref(root);
	ck_assert_int_eq(test_cli("frontier", "--causal", "--decode", "5000", "-n", "5001:5064", "-d",
				  "4", "-M", "256", "--epsilon", "1e-2", "--bound", "measured", NULL), 0);
	HAS(test_out, "random prompt: 4096 rows (min(P, 4096)), not P,");
	HAS(test_out, "64 rows generated");
	HAS(test_out, "measured per-step epsilon");
	HAS(test_out, "each recurrence feeding its own outputs forward (reported, not used for g)");
	ck_assert_int_eq(test_cli("frontier", "--causal", "--decode", "64", "-n", "65", "-d", "4", "-M",
				  "256", "--epsilon", "1e-2", "--bound", "measured", NULL), 0);
	HAS(test_out, "; 1 row generated (");
	HAS(test_out, "over the 1 row generated,");
	ck_assert_int_eq(test_cli("frontier", "--causal", "--decode", "1", "-n", "2", "-d", "4", "-M",
				  "256", "--epsilon", "1e-2", "--bound", "measured", NULL), 0);
	HAS(test_out, "random prompt: 1 row (min(P, 4096)),");
	/* an interval narrower than B^2 sqrt d bounds only the scores within it */
	ck_assert_int_eq(test_cli("frontier", "--causal", "--decode", "100", "-n", "101:200", "-d", "16",
				  "-M", "8k", "--epsilon", "1e-2", "--interval", "0.01", NULL), 0);
	HAS(test_out, "at every step for inputs whose scores stay within the interval");
	ck_assert_int_eq(test_cli("frontier", "--causal", "--decode", "100", "-n", "101:200", "-d", "16",
				  "-M", "8k", "--epsilon", "1e-2", "--polynomial", "minimax", NULL), 0);
	ck_assert_ptr_null(strstr(test_out, "stay within the interval"));
	/* the measurement's memory (the stand-in's 3 d^2 at d = 1024: 24
	 * MiB) is held to the limit before it is taken */
	ps_memory_limit_cap(UINT64_C(8) << 20);
	ck_assert_int_eq(test_cli("frontier", "--causal", "--decode", "8", "-n", "9", "-d", "1024",
				  "-M", "64k", "--epsilon", "1e-2", "--bound", "measured", NULL), 2);
	ps_memory_limit_cap(0);
	HAS(test_err, "the inputs and the direct evaluation of --bound measured needs about ");
	HAS(test_err, "pebblesim's own cap is 8.0 MiB");

	/* refused by name: each line a command (after "frontier", common
	 * options "-d 4 -M 1k --epsilon 0.1"), then the message */
	{
		static const char *const refused[][16] = {
			{ "--decode", "4", "-n", "64:128", NULL,
			  "decoding (--decode) is causal: it needs --causal" },
			{ "--causal", "--decode", "64", "-n", "64:128", NULL,
			  "frontier --decode 64 compares n above the prompt (rows P..n-1 are generated): -n starts at 64" },
			{ "--causal", "--decode", "64", "-n", "32", NULL, "-n starts at 32" },
			{ "--causal", "--decode", "4", "-n", "64:128", "--bound", "measured", "--q", "q.npy",
			  "--k", "k.npy", "--v", "v.npy", NULL,
			  "--q, --k and --v are not taken with --decode: its prompt is random (--seed, --entry-bound)" },
			{ "--causal", "--decode", "0", "-n", "64:128", NULL, "invalid value '0' for --decode" },
		};

		for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
			char *argv[24] = { "pebblesim", "frontier", "-d", "4", "-M", "1k", "--epsilon", "0.1" };
			size_t argc = 8, t = 0;

			for (; refused[k][t]; t++)
				argv[argc++] = (char *)refused[k][t];
			argv[argc] = NULL;
			ck_assert_int_eq(test_cli_run(argv, test_out, sizeof(test_out), test_err,
						      sizeof(test_err)), 2);
			HAS(test_err, refused[k][t + 1]);
		}
	}
}
END_TEST

/* frontier --causal measures the epsilon of causal softmax (its rows of
 * few keys need a higher degree than the unmasked ones here) and says so. */
START_TEST(test_causal_frontier)
{
	json_t *root;
	json_error_t jerr;
	json_int_t g[2];

	for (int causal = 0; causal <= 1; causal++) {
		ck_assert_int_eq(test_cli("frontier", "-n", "1k", "-d", "16", "-M", "16k", "--epsilon", "1e-3",
					  "--bound", "measured", "--json", causal ? "--causal" : NULL, NULL), 0);
		root = json_loads(test_out, 0, &jerr);
		ck_assert_ptr_nonnull(root);
		g[causal] = json_integer_value(json_object_get(json_object_get(root, "polynomial"), "g"));
		ck_assert(json_is_true(json_object_get(root, "causal")) == (causal == 1));
		json_decref(root);
	}
	ck_assert_int_eq(g[0], 3);
	ck_assert_int_eq(g[1], 4);
	ck_assert_int_eq(test_cli("frontier", "--causal", "-n", "1k", "-d", "16", "-M", "16k",
				  "--epsilon", "1e-3", "--bound", "measured", NULL), 0);
	HAS(test_out, "causal: flash with the mask against causal approximate attention");
}
END_TEST

/* dag --causal writes the nodes that exist (48 and 60 edges at n = 3,
 * d = 1, normalised: Q, K, V 9, S, E 6 each, O 6, A 3, PS 6, PO 12), and
 * reads back as a DAG of the same size; --decode says what it loses. */
START_TEST(test_causal_export)
{
	char path[64];

	write_file(path, sizeof(path), "");
	ck_assert_int_eq(test_cli("dag", "--attention", "exact", "--causal", "-n", "3", "-d", "1",
				  "--format", "gml", "-o", path, NULL), 0);
	ck_assert_int_eq(test_cli("run", "--dag", path, "-M", "20", NULL), 0);
	HAS(test_out, "48 vertices, 60 edges (9 inputs, 12 sums, 3 outputs)");
	ck_assert_int_eq(test_cli("dag", "--attention", "exact", "--causal", "--decode", "3", "-n", "5",
				  "-d", "2", "--format", "gml", "-o", path, NULL), 0);
	HAS(test_err, "the decode DAG's outputs K[t], V[t] and A[t] (t < n - 1) are no sinks");
	unlink(path);
}
END_TEST

Suite *causal_suite(void)
{
	Suite *s = suite_create("causal");
	TCase *tc = tcase_create("causal");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_options_by_name);
	tcase_add_test(tc, test_causal_sentences);
	tcase_add_test(tc, test_header_keys);
	tcase_add_test(tc, test_causal_exact_dag);
	tcase_add_test(tc, test_causal_mask_refused);
	tcase_add_test(tc, test_causal_flash_grid);
	tcase_add_test(tc, test_causal_flash_headline);
	tcase_add_test(tc, test_causal_values);
	tcase_add_test(tc, test_causal_trace);
	tcase_add_test(tc, test_causal_pebblings_against_segments);
	tcase_add_test(tc, test_decode_exact_dag);
	tcase_add_test(tc, test_decode_refused);
	tcase_add_test(tc, test_decode_grid);
	tcase_add_test(tc, test_decode_headline);
	tcase_add_test(tc, test_decode_values);
	tcase_add_test(tc, test_decode_pebblings_against_bounds);
	tcase_add_test(tc, test_decode_trace);
	tcase_add_test(tc, test_decode_sweep);
	tcase_add_test(tc, test_causal_frontier);
	tcase_add_test(tc, test_decode_frontier);
	tcase_add_test(tc, test_causal_export);
	suite_add_tcase(s, tc);
	return s;
}
