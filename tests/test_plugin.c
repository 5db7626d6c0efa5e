/*
 * Strategies from plugins (src/plugin.c, docs/EXTENDING.md) and the
 * entry point of other languages (script.h). The plugins are built by
 * `make check` into BUILD/plugins/, beside the binary PEBBLESIM_BIN names:
 * examples/plugin/rowfused.c, and tests/plugins/test_plugin.c in its
 * variants (test-good.so, test-newer.so, ...).
 */
#include <jansson.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/script.h"
#include "pebblesim/strategy.h"

#include "tests.h"

Suite *plugin_suite(void);

/* BUILD/plugins/NAME.so */
static const char *plugin(const char *name)
{
	static char paths[8][512];
	static int next;
	const char *bin = getenv("PEBBLESIM_BIN");
	char dir[512];
	char *path = paths[next++ % 8];

	ck_assert_msg(bin != NULL, "PEBBLESIM_BIN names build/pebblesim, beside which make check builds the plugins");
	snprintf(dir, sizeof(dir), "%s", bin);
	snprintf(path, 512, "%s/plugins/%s.so", dirname(dir), name);
	return path;
}

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *doc = json_loads(text, 0, &jerr);

	ck_assert_msg(doc != NULL, "not JSON (%s): %s", jerr.text, text);
	return doc;
}

static uint64_t field(const json_t *doc, const char *key)
{
	json_t *v = json_object_get(doc, key);

	ck_assert_msg(json_is_integer(v), "no integer '%s'", key);
	return (uint64_t)json_integer_value(v);
}

/*
 * examples/plugin/rowfused.c through the command line: valid, and its
 * counts those its comment derives: loads 3nd + (2n-1) r|B|, saves
 * n r|B| + nd, at most d + 2|B| + 2 red pebbles.
 */
static void check_rowfused(uint64_t n, uint64_t d, uint64_t g, int normalize)
{
	struct ps_attention att;
	char ns[16], ds[16], gs[16];
	json_t *doc;
	uint64_t cells;

	test_attention(&att, n, d, g, normalize);
	cells = att.r * att.nb;
	snprintf(ns, sizeof(ns), "%llu", (unsigned long long)n);
	snprintf(ds, sizeof(ds), "%llu", (unsigned long long)d);
	snprintf(gs, sizeof(gs), "%llu", (unsigned long long)g);
	ck_assert_int_eq(test_cli("run", "--plugin", plugin("rowfused"), "--strategy", "rowfused",
			     "-n", ns, "-d", ds, "-g", gs, "-M", "64", "--json",
			     normalize ? NULL : "--no-normalize", NULL), 0);
	doc = parse(test_out);
	ck_assert(json_is_true(json_object_get(doc, "valid")));
	ck_assert_str_eq(json_string_value(json_object_get(doc, "strategy")), "rowfused");
	ck_assert_uint_eq(field(doc, "loads"), 3 * n * d + (2 * n - 1) * cells);
	ck_assert_uint_eq(field(doc, "saves"), n * cells + n * d);
	ck_assert_uint_eq(field(doc, "predicted_io"), field(doc, "io"));
	ck_assert_uint_le(field(doc, "peak_red"), d + 2 * att.nb + 2);
	json_decref(doc);
	ps_attention_free(&att);
}

START_TEST(test_example_plugin)
{
	check_rowfused(16, 3, 2, 1);
	check_rowfused(9, 2, 3, 0);
	/* the words report too */
	ck_assert_int_eq(test_cli("--plugin", plugin("rowfused"), "--strategy", "rowfused",
			     "-n", "8", "-d", "2", "-g", "1", "-M", "32", NULL), 0);
	HAS(test_out, "strategy               rowfused (beyond the paper: a plugin");
	HAS(test_out, "(cost model agrees)");
	/* below its least memory, its own message */
	ck_assert_int_eq(test_cli("--plugin", plugin("rowfused"), "--strategy", "rowfused",
			     "-n", "8", "-d", "2", "-g", "1", "-M", "7", NULL), 2);
	HAS(test_err, "rowfused");
}
END_TEST

/* compare, sweep and list take --plugin; its strategies last no longer
 * than the command */
START_TEST(test_plugin_commands)
{
	json_t *doc, *rows;
	size_t k, found = 0;

	ck_assert_int_eq(test_cli("list", "--plugin", plugin("rowfused"), NULL), 0);
	HAS(test_out, "rowfused");
	HAS(test_out, "row by row, U streamed through fused macs");
	ck_assert_int_eq(test_cli("list", NULL), 0);
	ck_assert_ptr_null(strstr(test_out, "rowfused"));
	ck_assert_ptr_null(ps_strategy_find("rowfused"));

	ck_assert_int_eq(test_cli("compare", "--plugin", plugin("rowfused"), "-n", "16", "-d", "3",
			     "-g", "2", "-M", "64", "--json", NULL), 0);
	/* compare's JSON: one object a strategy */
	doc = parse(test_out);
	rows = doc;
	ck_assert(json_is_array(rows));
	for (k = 0; k < json_array_size(rows); k++) {
		json_t *row = json_array_get(rows, k);

		if (!strcmp(json_string_value(json_object_get(row, "strategy")), "rowfused")) {
			found++;
			ck_assert(json_is_true(json_object_get(row, "valid")));
		}
	}
	ck_assert_uint_eq(found, 1);
	json_decref(doc);

	ck_assert_int_eq(test_cli("sweep", "--plugin", plugin("rowfused"), "-n", "8:16:x2", "-d", "3",
			     "-g", "2", "-M", "64", "--strategies", "rowfused,colpass", "--json", NULL), 0);
	doc = parse(test_out);
	rows = json_object_get(doc, "rows");
	found = 0;
	for (k = 0; k < json_array_size(rows); k++) {
		json_t *row = json_array_get(rows, k);

		if (!strcmp(json_string_value(json_object_get(row, "strategy")), "rowfused")) {
			found++;
			ck_assert_uint_eq(field(row, "io"), field(row, "predicted_io"));
		}
	}
	ck_assert_uint_eq(found, 2);
	json_decref(doc);

	/* the commands that run no strategy refuse it by name */
	ck_assert_int_eq(test_cli("sweep", "--merge", "--plugin", plugin("rowfused"), "a.csv", NULL), 2);
	HAS(test_err, "sweep --merge takes CSV files, not the parameters of a sweep");
	ck_assert_int_eq(test_cli("dag", "--plugin", plugin("rowfused"), "-n", "4", "-d", "2",
			     "-g", "1", NULL), 2);
	HAS(test_err, "option '--plugin' does not apply to dag");
	ck_assert_int_eq(test_cli("validate", "--plugin", plugin("rowfused"), "examples/tiny.jsonl", NULL), 2);
	HAS(test_err, "option '--plugin' does not apply to validate");
}
END_TEST

/* A strategy of test-good.so on n = 16, d = 3, g = 2, M = 100, with one
 * more option (or NULL). */
static int run_test_plugin(const char *strategy, const char *option)
{
	return test_cli("--plugin", plugin("test-good"), "--strategy", strategy,
		   "-n", "16", "-d", "3", "-g", "2", "-M", "100", option, NULL);
}

/* A plugin's plan is held to its word, as a built-in strategy's. */
START_TEST(test_plugin_held_to_its_word)
{
	json_t *doc;

	/* a prediction that differs from the count is reported as such */
	ck_assert_int_eq(run_test_plugin("tp-liar", NULL), 0);
	HAS(test_out, "COST MODEL DISAGREES");
	ck_assert_int_eq(run_test_plugin("tp-liar", "--json"), 0);
	doc = parse(test_out);
	ck_assert_uint_eq(field(doc, "predicted_io"), field(doc, "io") + 1);
	json_decref(doc);

	/* a move that breaks a rule gets the engine's verdict */
	ck_assert_int_eq(run_test_plugin("tp-cheater", NULL), 1);
	HAS(test_out, "violation              op 1: save A[0,0]: A[0,0] is not in fast memory");

	/* an upper bound the count exceeds is a bound violated */
	ck_assert_int_eq(run_test_plugin("tp-overbound", "--json"), 1);
	doc = parse(test_out);
	ck_assert(json_is_true(json_object_get(doc, "valid")));
	ck_assert(json_is_true(json_object_get(doc, "bound_violated")));
	json_decref(doc);
}
END_TEST

/* Every field of a plugin's operation is checked before any sink reads
 * it: one out of range makes the run invalid, the plugin named, on the
 * block path and element by element, in the trace too. */
START_TEST(test_plugin_operations_checked)
{
	static const struct {
		const char *strategy, *why;
		int op;
	} cases[] = {
		{ "tp-bad-opcode", "opcode 99 is none of load, save, delete, compute, mac", 2 },
		{ "tp-bad-opcode-id", "opcode 99 is none of load, save, delete, compute, mac", 2 },
		{ "tp-bad-kind", "kind 77 is none of the DAG's kinds", 2 },
		{ "tp-bad-bool", "its fuse is byte 2, neither false nor true", 2 },
		{ "tp-bad-node", "node 1073741824 is not in the DAG (it has ", 2 },
		{ "tp-bad-range", "Q coordinate i range [1, 1000) is not within [0, 16)", 2 },
		{ "tp-bad-loop", "Q coordinate i = 16 is out of range [0, 16)", 3 },
		{ "tp-bad-ignored", "opcode 7 is none of load, save, delete, compute, mac", 2 },
	};
	char want[512], dir[64], trace[128];
	json_t *doc;

	test_dir_make(dir, sizeof(dir), "plugin-ops");
	snprintf(trace, sizeof(trace), "%s/t.jsonl", dir);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		snprintf(want, sizeof(want), "strategy '%s' of plugin '%s': operation %d is out of range: %s",
			 cases[k].strategy, plugin("test-good"), cases[k].op, cases[k].why);
		for (int element = 0; element < 2; element++) {
			ck_assert_int_eq(run_test_plugin(cases[k].strategy,
							 element ? "--element-path" : NULL), 1);
			HAS(test_out, "valid                  no");
			HAS(test_out, want);
		}
		ck_assert_int_eq(run_test_plugin(cases[k].strategy, "--json"), 1);
		doc = parse(test_out);
		ck_assert(json_is_false(json_object_get(doc, "valid")));
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(doc, "violation"),
								   "rule")), "operation-out-of-range");
		json_decref(doc);
		/* the trace holds the operations before it, none of it */
		ck_assert_int_eq(test_cli("--plugin", plugin("test-good"), "--strategy", cases[k].strategy,
					  "-n", "16", "-d", "3", "-g", "2", "-M", "100", "--trace", trace,
					  NULL), 1);
		ck_assert_int_eq(test_cli("validate", trace, "--json", NULL), 1);
		ck_assert_ptr_null(strstr(test_out, "\"op\":\"into\""));
	}
	test_dir_remove(dir);
	/* a plan's text that is not UTF-8 is refused, named; one cut by its
	 * buffer inside a character is cut before it */
	ck_assert_int_eq(run_test_plugin("tp-bad-summary", NULL), 2);
	snprintf(want, sizeof(want), "strategy 'tp-bad-summary' of plugin '%s': its plan's summary is not valid UTF-8 (byte 0xe9 at offset 3)",
		 plugin("test-good"));
	HAS(test_err, want);
	ck_assert_int_eq(run_test_plugin("tp-long-summary", "--json"), 0);
	doc = parse(test_out);
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(doc, "plan"))), 254);
	json_decref(doc);
	ck_assert_int_eq(test_cli("list", "--json", "--plugin", plugin("test-good"), NULL), 0);
	HAS(test_out, "\"tp-long-summary\"");
	/* a run that fails without a message is named */
	ck_assert_int_eq(run_test_plugin("tp-silent", NULL), 2);
	snprintf(want, sizeof(want), "pebblesim: strategy 'tp-silent' of plugin '%s': its run failed (returned -2) without a message",
		 plugin("test-good"));
	HAS(test_err, want);
}
END_TEST

/* A cost model without a breakdown by array gets no by-array column (it
 * printed "PREDICTS 0 + 0" for every array); the example's has one. */
START_TEST(test_plugin_breakdown)
{
	json_t *doc;

	ck_assert_int_eq(run_test_plugin("tp-totals", NULL), 0);
	HAS(test_out, "(cost model agrees)");
	HAS(test_out, "I/O by array                  loads        saves   share\n");
	ck_assert_ptr_null(strstr(test_out, "PREDICTS"));
	ck_assert_ptr_null(strstr(test_out, "cost model\n"));
	ck_assert_int_eq(run_test_plugin("tp-totals", "--json"), 0);
	doc = parse(test_out);
	ck_assert_uint_eq(field(doc, "predicted_io"), field(doc, "io"));
	ck_assert_ptr_null(json_object_get(doc, "predicted_by_array"));
	ck_assert_ptr_nonnull(json_object_get(doc, "by_array"));
	json_decref(doc);
	ck_assert_int_eq(run_test_plugin("tp-totals", "--dry-run"), 0);
	HAS(test_out, "predicted              ");
	ck_assert_ptr_null(strstr(test_out, "  Q                    "));
	ck_assert_int_eq(test_cli("compare", "--plugin", plugin("test-good"), "--strategies", "tp-totals,colpass",
				  "-n", "16", "-d", "3", "-g", "2", "-M", "100", "--predict", NULL), 0);
	HAS(test_out, "\ntp-totals                -           -");
	ck_assert_int_eq(test_cli("sweep", "--plugin", plugin("test-good"), "--strategies", "tp-totals",
				  "-n", "16:32:x2", "-d", "3", "-g", "2", "-M", "100", "--predict", "--json",
				  NULL), 0);
	ck_assert_ptr_null(strstr(test_out, "\"by_array\""));
	/* the example fills its breakdown, and it agrees with the engine */
	ck_assert_int_eq(test_cli("--plugin", plugin("rowfused"), "--strategy", "rowfused",
				  "-n", "64", "-d", "4", "-g", "2", "-M", "64", NULL), 0);
	ck_assert_ptr_null(strstr(test_out, "PREDICTS"));
	HAS(test_out, "  agrees\n");
	ck_assert_int_eq(test_cli("--plugin", plugin("rowfused"), "--strategy", "rowfused",
				  "-n", "16", "-d", "3", "-g", "2", "-M", "64", "--json", NULL), 0);
	doc = parse(test_out);
	ck_assert(json_equal(json_object_get(doc, "predicted_by_array"), json_object_get(doc, "by_array")));
	json_decref(doc);
	ck_assert_int_eq(test_cli("--plugin", plugin("rowfused"), "--strategy", "rowfused", "--no-normalize",
				  "-n", "16", "-d", "3", "-g", "2", "-M", "64", "--json", NULL), 0);
	doc = parse(test_out);
	ck_assert(json_equal(json_object_get(doc, "predicted_by_array"), json_object_get(doc, "by_array")));
	json_decref(doc);
}
END_TEST

/* A plugin built against an older header (version 1: no `takes`) works
 * and takes no option; one from a newer header is refused by name. */
START_TEST(test_plugin_versions)
{
	json_t *doc;

	ck_assert_int_eq(run_test_plugin("tp-old", "--json"), 0);
	doc = parse(test_out);
	ck_assert(json_is_true(json_object_get(doc, "valid")));
	json_decref(doc);
	ck_assert_int_eq(test_cli("--plugin", plugin("test-good"), "--strategy", "tp-old",
			     "-n", "16", "-d", "3", "-g", "2", "-M", "100", "--tiles", "square", NULL), 2);
	HAS(test_err, "--tiles is an option of generic, not of tp-old");

	ck_assert_int_eq(test_cli("list", "--plugin", plugin("test-newer"), NULL), 2);
	HAS(test_err, "strategy 'tp-future' is of version 3, newer than this pebblesim's 2");
	ck_assert_ptr_null(ps_strategy_find("tp-future"));
}
END_TEST

/* What is refused, by name, with nothing registered. */
START_TEST(test_plugin_refused)
{
	static const struct {
		const char *file, *message;
	} cases[] = {
		{ "test-clash", "strategy 'colpass' has the name of a strategy already registered" },
		{ "test-chooser", "strategy 'tp-chooser' has flags 0x4 that a plugin cannot set" },
		{ "test-badtext", "strategy 'tp-badtext' has a section that is not valid UTF-8 (byte 0xe9 at offset 5)" },
		{ "test-empty", "offers no strategy to this pebblesim" },
		{ "test-nosym", "does not define ps_plugin_strategies" },
		{ "no-such-plugin", "cannot open plugin" },
	};
	size_t builtin = ps_strategy_count;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		ck_assert_int_eq(test_cli("run", "--plugin", plugin(cases[k].file), "-n", "8", "-d", "2",
				     "-g", "1", "-M", "64", NULL), 2);
		HAS(test_err, cases[k].message);
		ck_assert_uint_eq(ps_strategy_count, builtin);
	}
	/* a file that is not a shared object: the loader's reason */
	ck_assert_int_eq(test_cli("list", "--plugin", "examples/tiny.jsonl", NULL), 2);
	HAS(test_err, "cannot load plugin 'examples/tiny.jsonl'");
	ck_assert_int_eq(test_cli("list", "--plugin", "examples", NULL), 2);
	HAS(test_err, "cannot open plugin 'examples': not a regular file");
}
END_TEST

/* The library's own entry points: loaded once, registered after the
 * built-in strategies, unloaded whole. */
START_TEST(test_plugin_load_unload)
{
	struct ps_error err;
	size_t builtin = ps_strategy_count;
	const struct ps_strategy *s;

	ps_error_clear(&err);
	/* the 16 strategies of tests/plugins/test_plugin.c's GOOD list */
	ck_assert_int_eq(ps_plugin_load(plugin("test-good"), &err), 0);
	ck_assert_uint_eq(ps_strategy_count, builtin + 16);
	ck_assert_int_eq(ps_plugin_load(plugin("test-good"), &err), 0);
	ck_assert_uint_eq(ps_strategy_count, builtin + 16);
	s = ps_strategy_find("tp-liar");
	ck_assert_ptr_nonnull(s);
	ck_assert(!ps_strategy_builtin(s));
	ck_assert(ps_strategy_builtin(ps_strategy_find("colpass")));
	ck_assert_str_eq(ps_strategy_origin(s), plugin("test-good"));
	ck_assert_ptr_null(ps_strategy_origin(ps_strategy_find("colpass")));
	ck_assert_ptr_eq(ps_strategies[builtin], s);
	ck_assert_int_eq(ps_plugin_load(plugin("rowfused"), &err), 0);
	ck_assert_uint_eq(ps_strategy_count, builtin + 17);
	ps_plugin_unload_all();
	ck_assert_uint_eq(ps_strategy_count, builtin);
	ck_assert_ptr_null(ps_strategy_find("tp-liar"));
	ck_assert_ptr_null(ps_strategy_find("rowfused"));
}
END_TEST

/* ps_script_command: a command into strings, "-" read from the text. */
START_TEST(test_script_command)
{
	const char *from_file[] = { "pebblesim", "validate", "--json", "examples/tiny.jsonl" };
	const char *from_text[] = { "pebblesim", "validate", "--json", "-" };
	const char *bad[] = { "pebblesim", "run", "-n", "0" };
	char text[8192], *out = NULL, *errout = NULL;
	FILE *f = fopen("examples/tiny.jsonl", "r");
	size_t len;
	json_t *a, *b;

	ck_assert_ptr_nonnull(f);
	len = fread(text, 1, sizeof(text), f);
	fclose(f);
	ck_assert_int_eq(ps_script_command(4, from_file, NULL, 0, &out, &errout), 0);
	a = parse(out);
	ck_assert_str_eq(errout, "");
	ps_script_free(out);
	ps_script_free(errout);
	ck_assert_int_eq(ps_script_command(4, from_text, text, len, &out, &errout), 0);
	b = parse(out);
	ps_script_free(out);
	ps_script_free(errout);
	ck_assert_uint_eq(field(a, "loads"), field(b, "loads"));
	ck_assert_uint_eq(field(a, "saves"), field(b, "saves"));
	ck_assert_uint_eq(field(a, "lines"), field(b, "lines"));
	ck_assert_str_eq(json_string_value(json_object_get(b, "trace")), "-");
	json_decref(a);
	json_decref(b);
	/* the text cut short: the engine's verdict on what it holds */
	ck_assert_int_eq(ps_script_command(4, from_text, text, 200, &out, &errout), 2);
	ck_assert_ptr_nonnull(strstr(errout, "pebblesim: -:3:21: invalid JSON: premature end of input"));
	ps_script_free(out);
	ps_script_free(errout);
	ck_assert_int_eq(ps_script_command(4, from_text, "", 0, &out, &errout), 2);
	ck_assert_ptr_nonnull(strstr(errout, "pebblesim: "));
	ps_script_free(out);
	ps_script_free(errout);
	ck_assert_int_eq(ps_script_command(4, bad, NULL, 0, &out, &errout), 2);
	ck_assert_str_eq(out, "");
	ck_assert_ptr_nonnull(strstr(errout, "invalid value '0' for -n"));
	ps_script_free(out);
	ps_script_free(errout);
	ck_assert_str_eq(ps_script_version(), PS_VERSION);
}
END_TEST

/* libpebblesim.so carries the front end for ps_script_command, and
 * exports the public ps_ names only. */
START_TEST(test_shared_library_exports)
{
	const char *bin = getenv("PEBBLESIM_BIN");
	char cmd[1024], line[256], dir[512];
	FILE *p;
	int script = 0, other = 0;

	ck_assert_ptr_nonnull(bin);
	snprintf(dir, sizeof(dir), "%s", bin);
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s/libpebblesim.so'", dirname(dir));
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char *name = strrchr(line, ' ');

		ck_assert_ptr_nonnull(name);
		script += !strcmp(name, " ps_script_command\n");
		other += strncmp(name, " ps_", 4) != 0;
	}
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_int_eq(script, 1);
	ck_assert_int_eq(other, 0);
}
END_TEST

Suite *plugin_suite(void)
{
	Suite *s = suite_create("plugin");
	TCase *tc = tcase_create("plugin");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_example_plugin);
	tcase_add_test(tc, test_plugin_commands);
	tcase_add_test(tc, test_plugin_held_to_its_word);
	tcase_add_test(tc, test_plugin_operations_checked);
	tcase_add_test(tc, test_plugin_breakdown);
	tcase_add_test(tc, test_plugin_versions);
	tcase_add_test(tc, test_plugin_refused);
	tcase_add_test(tc, test_plugin_load_unload);
	tcase_add_test(tc, test_script_command);
	tcase_add_test(tc, test_shared_library_exports);
	suite_add_tcase(s, tc);
	return s;
}
