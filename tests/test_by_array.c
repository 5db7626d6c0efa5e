/*
 * I/O by array: the engine's loads and saves by the array of the node
 * moved, on the element path and the block path, on the attention DAGs
 * (by kind) and on an explicit DAG (by role); the same breakdown counted
 * apart from the engine, from the operations a run emits; and in every
 * output: the report's table, --json (run, validate, dry run, compare),
 * sweeps' JSON and CSV, and the CSV read back. The cost models'
 * breakdowns are held equal to the engine's on the strategy grids
 * (test_strategies.c, test_exact.c).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/explicit.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "tests.h"

static char out_text[1 << 16], err_text[1 << 14];

/* Runs pebblesim with these arguments into out_text and err_text; its
 * exit status. */
#define cli(...) test_cli_run((char *[]){ "pebblesim", __VA_ARGS__ }, out_text, \
			      sizeof(out_text), err_text, sizeof(err_text))

static json_t *out_json(void)
{
	json_error_t jerr;
	json_t *root = json_loads(out_text, 0, &jerr);

	ck_assert_msg(root != NULL, "%s in:\n%s", jerr.text, out_text);
	return root;
}

/* The element path counts each load and save by the kind of its node. */
START_TEST(test_element_path_by_kind)
{
	struct ps_attention att;
	struct ps_engine eng;
	char why[256];

	test_engine_setup(&att, &eng, 2, 2, 1, 1, 16);
	ck_assert_int_eq(ps_engine_load(&eng, ps_attention_id2(&att, PS_KIND_Q, 0, 0)), 0);
	ck_assert_int_eq(ps_engine_load(&eng, ps_attention_id2(&att, PS_KIND_Q, 1, 1)), 0);
	ck_assert_int_eq(ps_engine_load(&eng, ps_attention_id2(&att, PS_KIND_K, 1, 0)), 0);
	ck_assert_int_eq(ps_engine_load(&eng, ps_attention_id2(&att, PS_KIND_V, 0, 1)), 0);
	/* U1[0,0] is a constant: computed, saved, deleted, loaded back */
	ck_assert_int_eq(ps_engine_compute(&eng, ps_attention_id2(&att, PS_KIND_U1, 0, 0)), 0);
	ck_assert_int_eq(ps_engine_save(&eng, ps_attention_id2(&att, PS_KIND_U1, 0, 0)), 0);
	ck_assert_int_eq(ps_engine_delete(&eng, ps_attention_id2(&att, PS_KIND_U1, 0, 0)), 0);
	ck_assert_int_eq(ps_engine_load(&eng, ps_attention_id2(&att, PS_KIND_U1, 0, 0)), 0);
	ck_assert_int_eq(ps_engine_save(&eng, ps_attention_id2(&att, PS_KIND_Q, 0, 0)), 0);
	ck_assert_uint_eq(eng.c.by_array[PS_KIND_Q].loads, 2);
	ck_assert_uint_eq(eng.c.by_array[PS_KIND_Q].saves, 1);
	ck_assert_uint_eq(eng.c.by_array[PS_KIND_K].loads, 1);
	ck_assert_uint_eq(eng.c.by_array[PS_KIND_V].loads, 1);
	ck_assert_uint_eq(eng.c.by_array[PS_KIND_U1].loads, 1);
	ck_assert_uint_eq(eng.c.by_array[PS_KIND_U1].saves, 1);
	ck_assert_uint_eq(eng.c.by_array[PS_KIND_U2].loads + eng.c.by_array[PS_KIND_H].loads +
			  eng.c.by_array[PS_KIND_N].loads + eng.c.by_array[PS_KIND_A].loads, 0);
	ck_assert_uint_eq(eng.c.loads, 5);
	ck_assert_uint_eq(eng.c.saves, 2);
	ck_assert_msg(ps_engine_check(&eng, why, sizeof(why)), "%s", why);
	/* a move that breaks a rule counts nothing */
	ck_assert_int_eq(ps_engine_load(&eng, ps_attention_id2(&att, PS_KIND_K, 1, 0)), PS_EINVALID);
	ck_assert_uint_eq(eng.c.by_array[PS_KIND_K].loads, 1);
	/* the invariant: the arrays add up to the totals */
	eng.c.by_array[PS_KIND_K].loads++;
	ck_assert(!ps_engine_check(&eng, why, sizeof(why)));
	ck_assert_str_eq(why, "6 loads and 2 saves by array for 5 and 2");
	test_engine_teardown(&att, &eng);
}
END_TEST

/* The loads and saves of the operations a run emits, by the array of
 * their nodes, counted apart from the engine. */
struct array_tap {
	struct ps_sink sink;
	const struct ps_attention *att; /* or NULL: dag is explicit */
	const struct ps_dag *dag;
	struct ps_array_io by_array[PS_ARRAY_MAX];
};

static int tap_emit(struct ps_sink *sink, const struct ps_op *op, struct ps_error *err)
{
	struct array_tap *t = (struct array_tap *)sink;
	uint64_t moves = ps_op_moves(op), c[3];
	unsigned a;

	(void)err;
	if (op->code != PS_OP_LOAD && op->code != PS_OP_SAVE)
		return PS_OK;
	/* by kind (a node by id decoded), or an explicit DAG's node by role */
	if (!op->by_id)
		a = (unsigned)op->kind;
	else if (t->att)
		a = (unsigned)ps_attention_decode(t->att, op->node, c);
	else
		a = (unsigned)ps_dag_role(t->dag, op->node);
	if (op->code == PS_OP_LOAD)
		t->by_array[a].loads += moves;
	else
		t->by_array[a].saves += moves;
	return PS_OK;
}

static void tap_run(const struct ps_problem *pb, const char *name, bool element_only,
		    struct ps_report *rep, struct array_tap *tap)
{
	struct ps_problem p = *pb;
	struct ps_error err;

	memset(tap, 0, sizeof(*tap));
	tap->sink.emit = tap_emit;
	tap->att = pb->att;
	tap->dag = pb->att ? &pb->att->dag : &pb->xdag->dag;
	p.element_only = element_only;
	ps_error_clear(&err);
	ck_assert_msg(ps_run(&p, ps_strategy_find(name), &tap->sink, rep, &err) == 0, "%s: %s",
		      name, err.msg);
	ck_assert_msg(rep->valid, "%s: %s", name, rep->violation);
}

/*
 * The block path and the element path count the same by array, and both
 * what the operations say: subtile reloads and saves sub-tiles of H, the
 * baselines load and save H, N and U; on exact attention exact-matmul
 * saves and reloads E.
 */
START_TEST(test_paths_and_operations_agree)
{
	static const struct {
		const char *name;
		bool exact;
		uint64_t n, d, g, M;
		enum ps_kind reloaded; /* an array both loaded and saved */
	} runs[] = {
		{ "subtile", false, 16, 6, 2, 40, PS_KIND_H },
		{ "naive", false, 8, 3, 2, 30, PS_KIND_H },
		{ "matmul", false, 8, 3, 2, 30, PS_KIND_U1 },
		{ "exact-matmul", true, 8, 3, 0, 20, PS_KIND_E },
		{ "naive-exact", true, 6, 2, 0, 12, PS_KIND_O },
	};
	char why[256];

	for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		struct ps_attention att;
		struct ps_problem pb;
		struct ps_report block, element;
		struct array_tap tb, te;
		uint64_t loads, saves;

		if (runs[k].exact)
			test_exact_attention(&att, runs[k].n, runs[k].d, 1);
		else
			test_attention(&att, runs[k].n, runs[k].d, runs[k].g, 1);
		memset(&pb, 0, sizeof(pb));
		pb.att = &att;
		pb.M = runs[k].M;
		tap_run(&pb, runs[k].name, false, &block, &tb);
		tap_run(&pb, runs[k].name, true, &element, &te);
		ck_assert_mem_eq(block.counts.by_array, element.counts.by_array,
				 sizeof(block.counts.by_array));
		ck_assert_msg(test_by_array_equal(&att.dag, block.counts.by_array, tb.by_array,
						  why, sizeof(why)),
			      "%s: the engine against the operations, %s", runs[k].name, why);
		ps_array_io_total(block.counts.by_array, &loads, &saves);
		ck_assert_uint_eq(loads, block.counts.loads);
		ck_assert_uint_eq(saves, block.counts.saves);
		ck_assert_msg(block.counts.by_array[runs[k].reloaded].loads > 0 &&
			      block.counts.by_array[runs[k].reloaded].saves > 0,
			      "%s: %s neither loaded nor saved", runs[k].name,
			      ps_kinds[runs[k].reloaded].name);
		ps_attention_free(&att);
	}
}
END_TEST

/* An explicit DAG counts by role: input, plain, sum. */
START_TEST(test_explicit_by_role)
{
	static const char *const roles[] = { "input", "plain", "sum" };
	struct ps_explicit x;
	struct ps_problem pb;
	struct ps_report rep;
	struct array_tap tap;
	struct ps_error err;
	const char *name;
	char why[256];
	unsigned a, k;

	ps_error_clear(&err);
	ck_assert_msg(ps_explicit_read(&x, "examples/matmul2.graphml", &err) == 0, "%s", err.msg);
	memset(&pb, 0, sizeof(pb));
	pb.xdag = &x;
	pb.M = 4;
	tap_run(&pb, "lru", false, &rep, &tap);
	ck_assert_msg(test_by_array_equal(&x.dag, rep.counts.by_array, tap.by_array,
					  why, sizeof(why)), "%s", why);
	/* the inputs are only loaded; at M = 4 some sums go to slow memory */
	ck_assert_uint_gt(rep.counts.by_array[PS_ROLE_INPUT].loads, 0);
	ck_assert_uint_eq(rep.counts.by_array[PS_ROLE_INPUT].saves, 0);
	ck_assert_uint_gt(rep.counts.by_array[PS_ROLE_SUM].saves, 0);
	for (k = 0; (name = ps_dag_array_at(&x.dag, k, &a)); k++) {
		ck_assert_uint_lt(k, 3);
		ck_assert_str_eq(name, roles[k]);
	}
	ck_assert_uint_eq(k, 3);
	ps_explicit_free(&x);
}
END_TEST

/* The "by_array" object: keys in order, each {loads, saves}, adding up to
 * the totals given. */
static void check_by_array(json_t *by, const char *const *keys, json_int_t loads,
			   json_int_t saves)
{
	const char *key;
	json_t *io;
	json_int_t l = 0, s = 0;
	size_t k = 0;

	ck_assert_msg(json_is_object(by), "no by_array in:\n%s", out_text);
	json_object_foreach(by, key, io) {
		ck_assert_msg(keys[k] != NULL, "extra array %s", key);
		ck_assert_str_eq(key, keys[k]);
		ck_assert_uint_eq(json_object_size(io), 2);
		l += json_integer_value(json_object_get(io, "loads"));
		s += json_integer_value(json_object_get(io, "saves"));
		k++;
	}
	ck_assert_msg(keys[k] == NULL, "no array %s", keys[k]);
	ck_assert_int_eq(l, loads);
	ck_assert_int_eq(s, saves);
}

static const char *const approx_keys[] = { "Q", "K", "V", "U1", "U2", "H", "N", "A", NULL };

/* run, validate, dry run: by_array in --json, and the report's table. */
START_TEST(test_report_json_and_table)
{
	static const char *const exact_keys[] = { "Q", "K", "V", "S", "E", "O", NULL };
	static const char *const role_keys[] = { "input", "plain", "sum", NULL };
	char dir[64], trace[96], line[128];
	json_t *run, *other, *h;

	test_dir_make(dir, sizeof(dir), "by-array");
	snprintf(trace, sizeof(trace), "%s/t.jsonl", dir);
	ck_assert_int_eq(cli("--strategy", "subtile", "-n", "16", "-d", "6", "-g", "2", "-M", "40",
			     "--json", "--trace", trace, NULL), 0);
	run = out_json();
	check_by_array(json_object_get(run, "by_array"), approx_keys,
		       json_integer_value(json_object_get(run, "loads")),
		       json_integer_value(json_object_get(run, "saves")));
	/* the cost model's breakdown beside the engine's, equal */
	ck_assert(json_equal(json_object_get(run, "by_array"),
			     json_object_get(run, "predicted_by_array")));
	h = json_object_get(json_object_get(run, "by_array"), "H");
	ck_assert_int_gt(json_integer_value(json_object_get(h, "loads")), 0);

	/* validate replays the trace to the same breakdown */
	ck_assert_int_eq(cli("validate", "--json", trace, NULL), 0);
	other = out_json();
	ck_assert(json_equal(json_object_get(run, "by_array"), json_object_get(other, "by_array")));
	json_decref(other);

	/* the dry run predicts it */
	ck_assert_int_eq(cli("--strategy", "subtile", "-n", "16", "-d", "6", "-g", "2", "-M", "40",
			     "--json", "--dry-run", NULL), 0);
	other = out_json();
	ck_assert(json_equal(json_object_get(run, "by_array"),
			     json_object_get(json_object_get(other, "predicted"), "by_array")));
	json_decref(other);

	/* the text report: H's row with the loads and saves of the JSON */
	ck_assert_int_eq(cli("--strategy", "subtile", "-n", "16", "-d", "6", "-g", "2", "-M", "40",
			     NULL), 0);
	HAS(out_text, "I/O by array                  loads        saves   share  cost model\n");
	snprintf(line, sizeof(line), "\n  H                    %12lld %12lld ",
		 (long long)json_integer_value(json_object_get(h, "loads")),
		 (long long)json_integer_value(json_object_get(h, "saves")));
	HAS(out_text, line);
	ck_assert_ptr_null(strstr(out_text, "PREDICTS"));
	json_decref(run);

	/* exact attention without normalisation: no A, the outputs are O */
	ck_assert_int_eq(cli("--attention", "exact", "-n", "8", "-d", "4", "-M", "60",
			     "--no-normalize", "--json", NULL), 0);
	run = out_json();
	check_by_array(json_object_get(run, "by_array"), exact_keys,
		       json_integer_value(json_object_get(run, "loads")),
		       json_integer_value(json_object_get(run, "saves")));
	ck_assert_int_eq(json_integer_value(json_object_get(
		json_object_get(json_object_get(run, "by_array"), "O"), "saves")), 8 * 4);
	json_decref(run);

	/* a DAG from a file, by role, with no cost model to set beside it */
	ck_assert_int_eq(cli("run", "--dag", "examples/matmul2.graphml", "-M", "4", "--json", NULL), 0);
	run = out_json();
	check_by_array(json_object_get(run, "by_array"), role_keys,
		       json_integer_value(json_object_get(run, "loads")),
		       json_integer_value(json_object_get(run, "saves")));
	ck_assert_ptr_null(json_object_get(run, "predicted_by_array"));
	json_decref(run);
	ck_assert_int_eq(cli("run", "--dag", "examples/matmul2.graphml", "-M", "4", NULL), 0);
	HAS(out_text, "I/O by array                  loads        saves   share\n  input ");
	test_dir_remove(dir);
}
END_TEST

/* compare: each row's by_array in --json, and the table in words. */
START_TEST(test_compare_by_array)
{
	json_t *rows, *row;
	size_t k, valid = 0;

	ck_assert_int_eq(cli("compare", "-n", "16", "-d", "4", "-g", "2", "-M", "40", "--json", NULL), 0);
	rows = out_json();
	json_array_foreach(rows, k, row) {
		if (!json_is_true(json_object_get(row, "valid")))
			continue;
		check_by_array(json_object_get(row, "by_array"), approx_keys,
			       json_integer_value(json_object_get(row, "loads")),
			       json_integer_value(json_object_get(row, "saves")));
		valid++;
	}
	ck_assert_uint_gt(valid, 3);
	json_decref(rows);
	ck_assert_int_eq(cli("compare", "-n", "16", "-d", "4", "-g", "2", "-M", "40", NULL), 0);
	HAS(out_text, "\nI/O by array (loads + saves)\nstrategy                 Q           K           V          U1          U2           H           N           A\n");
}
END_TEST

/* sweep: by_array in --json; the CSV's columns, read back (--merge). */
START_TEST(test_sweep_by_array)
{
	char dir[64], csv[96], bad[96];
	struct ps_sweep_row *rows = NULL;
	struct ps_error err;
	size_t count = 0, exact = 0;
	char param = 0, text[4096], *p;
	json_t *root, *row;
	size_t k;
	FILE *f;

	ck_assert_int_eq(cli("sweep", "-n", "8:16:x2", "-d", "4", "-g", "2", "-M", "60",
			     "--strategies", "flash,case,naive", "--json", NULL), 0);
	root = out_json();
	json_array_foreach(json_object_get(root, "rows"), k, row) {
		bool is_exact = !strcmp(json_string_value(json_object_get(row, "dag")),
					"exact-attention");
		static const char *const exact_keys[] = { "Q", "K", "V", "S", "E", "O", "A", NULL };

		check_by_array(json_object_get(row, "by_array"), is_exact ? exact_keys : approx_keys,
			       json_integer_value(json_object_get(row, "loads")),
			       json_integer_value(json_object_get(row, "saves")));
	}
	ck_assert_uint_eq(json_array_size(json_object_get(root, "rows")), 6);
	json_decref(root);

	test_dir_make(dir, sizeof(dir), "by-array-csv");
	snprintf(csv, sizeof(csv), "%s/s.csv", dir);
	ck_assert_int_eq(cli("sweep", "-n", "8:16:x2", "-d", "4", "-g", "2", "-M", "60",
			     "--strategies", "flash,case,naive", "--csv", csv, NULL), 0);
	f = fopen(csv, "r");
	ck_assert_ptr_nonnull(f);
	ps_error_clear(&err);
	ck_assert_msg(ps_sweep_read_csv(f, csv, &rows, &count, &param, &err) == 0, "%s", err.msg);
	fclose(f);
	ck_assert_uint_eq(count, 6);
	for (k = 0; k < count; k++) {
		uint64_t loads, saves;
		bool is_exact = !strcmp(rows[k].dag, "exact-attention");

		ps_array_io_total(rows[k].by_array, &loads, &saves);
		ck_assert_uint_eq(loads, rows[k].loads);
		ck_assert_uint_eq(saves, rows[k].saves);
		/* the arrays of the row's DAG, no others */
		ck_assert_uint_eq(rows[k].arrays >> PS_KIND_S & 1, is_exact);
		ck_assert_uint_eq(rows[k].arrays >> PS_KIND_U1 & 1, !is_exact);
		ck_assert_uint_eq(rows[k].arrays >> PS_KIND_A & 1, 1);
		exact += is_exact;
	}
	ck_assert_uint_eq(exact, 2);
	free(rows);

	/* a breakdown that does not add up to the row's totals is refused */
	f = fopen(csv, "r");
	ck_assert_ptr_nonnull(f);
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	p = strstr(text, "\nexact-attention,8,");
	ck_assert_ptr_nonnull(p);
	/* flash at n = 8 loads Q n d = 32 times: make it 33 */
	p = strstr(p, ",32,0,64,0,64,0,");
	ck_assert_ptr_nonnull(p);
	memcpy(p, ",33", 3);
	snprintf(bad, sizeof(bad), "%s/bad.csv", dir);
	f = fopen(bad, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	/* line 1 is the header */
	ck_assert_int_eq(cli("sweep", "--merge", bad, NULL), 2);
	HAS(err_text, "bad.csv:2: the loads and saves by array add up to 161 and 32, not to the row's 160 and 32");
	ck_assert_int_eq(cli("sweep", "--merge", csv, "--json", NULL), 0);
	HAS(out_text, "\"by_array\":{\"Q\":{\"loads\":32,\"saves\":0},\"K\":{\"loads\":64,\"saves\":0}");
	test_dir_remove(dir);
}
END_TEST

Suite *by_array_suite(void)
{
	Suite *s = suite_create("by_array");
	TCase *tc = tcase_create("by_array");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_element_path_by_kind);
	tcase_add_test(tc, test_paths_and_operations_agree);
	tcase_add_test(tc, test_explicit_by_role);
	tcase_add_test(tc, test_report_json_and_table);
	tcase_add_test(tc, test_compare_by_array);
	tcase_add_test(tc, test_sweep_by_array);
	suite_add_tcase(s, tc);
	return s;
}
