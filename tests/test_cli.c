/* The command line: exit statuses, messages, the JSON report. */
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/cli.h"
#include "pebblesim/common.h"
#include "tests.h"

static char out_text[1 << 16], err_text[1 << 14];

static void slurp(FILE *f, char *buf, size_t len)
{
	size_t got;

	rewind(f);
	got = fread(buf, 1, len - 1, f);
	buf[got] = '\0';
	fclose(f);
}

/* Runs pebblesim with the NULL-terminated arguments; returns the status. */
static int cli(const char *first, ...)
{
	char *argv[32];
	int argc = 0, rc;
	FILE *out = tmpfile(), *err = tmpfile();
	va_list ap;

	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(err);
	argv[argc++] = "pebblesim";
	va_start(ap, first);
	for (const char *a = first; a; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	rc = ps_cli_main(argc, argv, out, err);
	slurp(out, out_text, sizeof(out_text));
	slurp(err, err_text, sizeof(err_text));
	return rc;
}

#define HAS(text, needle) \
	ck_assert_msg(strstr((text), (needle)) != NULL, "'%s' not in:\n%s", (needle), (text))

START_TEST(test_usage_errors)
{
	ck_assert_int_eq(cli(NULL), 2);
	HAS(err_text, "pebblesim: the parameters -n, -d, -g and -M are all required");
	HAS(err_text, "usage: pebblesim");
	ck_assert_int_eq(cli("-n", "abc", "-d", "4", "-g", "2", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: invalid value 'abc' for -n: expected an integer >= 1");
	ck_assert_int_eq(cli("-n", "0", "-d", "4", "-g", "2", "-M", "64", NULL), 2);
	HAS(err_text, "invalid value '0' for -n: expected an integer >= 1");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "-1", "-M", "64", NULL), 2);
	HAS(err_text, "invalid value '-1' for -g: expected an integer >= 0");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "12x", NULL), 2);
	HAS(err_text, "invalid value '12x' for -M");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "99999999999999999999", NULL), 2);
	HAS(err_text, "invalid value '99999999999999999999' for -M");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", NULL), 2);
	HAS(err_text, "pebblesim: option '-M' needs a value");
	ck_assert_int_eq(cli("-n", "8", "--bogus", NULL), 2);
	HAS(err_text, "pebblesim: unknown argument '--bogus'");
	ck_assert_int_eq(cli("--strategy", "nope", "-n", "8", "-d", "4", "-g", "2", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: unknown strategy 'nope'; known: generic");
	ck_assert_int_eq(cli("list", "extra", NULL), 2);
}
END_TEST

START_TEST(test_too_small_and_too_large)
{
	ck_assert_int_eq(cli("--strategy", "generic", "-n", "8", "-d", "4", "-g", "2", "-M", "3", NULL), 2);
	HAS(err_text, "pebblesim: M = 3 is too small for generic on this DAG: it needs M >= 7");
	/* M = 3 is Case IV: matmul needs the product, U1, H, N and N[.,d] */
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "3", NULL), 2);
	HAS(err_text, "pebblesim: M = 3 is too small for matmul on this DAG: it needs M >= 5");
	/* s = 2: phase 2 holds a Q chunk 2 x 3, N 2 x 2, N[.,d] 2, H 2 x 2, 2 */
	ck_assert_int_eq(cli("--strategy", "generic", "-n", "8", "-d", "4", "-g", "2", "-M", "16", "--tiles", "square", NULL), 2);
	HAS(err_text, "pebblesim: the square tiles for M = 16 need 18 red pebbles");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "16", "--tiles", "square", NULL), 2);
	HAS(err_text, "pebblesim: --tiles is an option of generic, not of subtile");
	ck_assert_int_eq(cli("-n", "100000000000", "-d", "16", "-g", "3", "-M", "64", NULL), 2);
	HAS(err_text, "GiB; this machine has");
	ck_assert_int_eq(cli("-n", "8", "-d", "64", "-g", "9", "-M", "64", NULL), 2);
	HAS(err_text, "exceeds the limit of 67108864 monomials");
	ck_assert_int_eq(cli("-n", "8", "-d", "2", "-g", "1000", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: degree g = 1000 exceeds the limit of 64");
	ck_assert_int_eq(cli("-n", "9223372036854775807", "-d", "3", "-g", "2", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: the DAG for n = 9223372036854775807, d = 3, g = 2 is beyond 64-bit sizes");
}
END_TEST

START_TEST(test_text_report)
{
	ck_assert_int_eq(cli("--strategy", "generic", "-n", "64", "-d", "4", "-g", "2", "-M", "64", NULL), 0);
	HAS(out_text, "strategy               generic (Lemma 3.1, section 3.2)");
	HAS(out_text, "valid                  yes");
	HAS(out_text, "cost model agrees");
	HAS(out_text, "lower bound");
	ck_assert_str_eq(err_text, "");
}
END_TEST

START_TEST(test_json_report)
{
	json_t *root, *v;
	json_error_t jerr;
	json_int_t loads, saves;

	ck_assert_int_eq(cli("-n", "64", "-d", "4", "-g", "2", "-M", "100", "--json", NULL), 0);
	root = json_loads(out_text, 0, &jerr);
	ck_assert_msg(root != NULL, "%s", jerr.text);
	v = json_object_get(root, "dag");
	ck_assert_str_eq(json_string_value(json_object_get(v, "kind")), "approx-attention");
	ck_assert_int_eq(json_integer_value(json_object_get(v, "n")), 64);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "r")), 15);
	ck_assert(json_is_true(json_object_get(v, "normalize")));
	ck_assert_int_eq(json_integer_value(json_object_get(root, "M")), 100);
	ck_assert_str_eq(json_string_value(json_object_get(root, "case")), "II");
	/* Case II by default runs the Key Lemma's strategy */
	ck_assert_str_eq(json_string_value(json_object_get(root, "strategy")), "keylemma");
	ck_assert(json_is_true(json_object_get(root, "valid")));
	loads = json_integer_value(json_object_get(root, "loads"));
	saves = json_integer_value(json_object_get(root, "saves"));
	ck_assert_int_gt(loads, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(root, "io")), loads + saves);
	ck_assert_int_eq(json_integer_value(json_object_get(root, "predicted_io")), loads + saves);
	ck_assert_int_le(json_integer_value(json_object_get(root, "peak_red")), 100);
	v = json_object_get(json_object_get(root, "bounds"), "upper");
	ck_assert(json_is_string(json_object_get(v, "formula")));
	ck_assert(json_real_value(json_object_get(v, "value")) >= (double)(loads + saves));
	v = json_object_get(json_object_get(root, "bounds"), "lower");
	ck_assert_double_eq(json_real_value(json_object_get(v, "value")), 4.0 * 64 * 4);
	json_decref(root);
}
END_TEST

START_TEST(test_cases_and_options)
{
	ck_assert_int_eq(cli("--case", "V", "-n", "8", "-d", "4", "-g", "2", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: unknown case 'V': I, II, III, IV or auto");
	/* d r = 60 > M/4 = 25, w = 2 has 2 tau(2) = 12 <= 25: Case II */
	ck_assert_int_eq(cli("--case", "III", "-n", "8", "-d", "4", "-g", "2", "-M", "100", NULL), 0);
	HAS(err_text, "pebblesim: warning: the parameters are in Case II (");
	HAS(err_text, "not Case III; running its strategy anyway");
	HAS(out_text, "strategy               subtile (Lemma 3.3, appendix B.2 (Case III))");
	ck_assert_int_eq(cli("--case", "II", "-n", "8", "-d", "4", "-g", "2", "-M", "100", "--w", "2", NULL), 0);
	ck_assert_str_eq(err_text, "");
	HAS(out_text, "w = 2: 4 groups of size 1, 6 aggregation tiles (2-subsets of groups)");
	ck_assert_int_eq(cli("--case", "II", "-n", "8", "-d", "4", "-g", "2", "-M", "100", "--w", "4", NULL), 2);
	HAS(err_text, "pebblesim: w = 4 is not valid for keylemma: w tau(w) = 60 > M/4 = 25");
	ck_assert_int_eq(cli("--strategy", "generic", "-n", "8", "-d", "4", "-g", "2", "-M", "100", "--w", "3", NULL), 2);
	HAS(err_text, "pebblesim: --w is an option of keylemma, not of generic");
	ck_assert_int_eq(cli("--strategy", "auto", "-n", "8", "-d", "4", "-g", "2", "-M", "100", NULL), 0);
	HAS(out_text, "  runs                 ");
	HAS(out_text, "chose ");
	/* g = 0 has no tile to cut; keylemma needs g <= d */
	ck_assert_int_eq(cli("--strategy", "subtile", "-n", "8", "-d", "4", "-g", "0", "-M", "100", NULL), 2);
	HAS(err_text, "pebblesim: subtile does not apply to these parameters at any M");
	ck_assert_int_eq(cli("--strategy", "keylemma", "-n", "8", "-d", "2", "-g", "3", "-M", "1000", NULL), 2);
	HAS(err_text, "pebblesim: keylemma does not apply to these parameters at any M");
}
END_TEST

START_TEST(test_compare)
{
	json_t *root;
	json_error_t jerr;
	json_int_t last = 0;

	ck_assert_int_eq(cli("compare", "-n", "16", "-d", "4", "-g", "2", "-M", "40", NULL), 0);
	HAS(out_text, "Case III");
	HAS(out_text, "keylemma     does not run: needs M >= 48");
	ck_assert_int_eq(cli("compare", "-n", "16", "-d", "4", "-g", "2", "-M", "40", "--json", NULL), 0);
	root = json_loads(out_text, 0, &jerr);
	ck_assert_msg(root != NULL, "%s", jerr.text);
	ck_assert(json_is_array(root));
	/* the paper's five and the two baselines */
	ck_assert_uint_eq(json_array_size(root), 7);
	/* best first: applicable rows by increasing I/O, then the others */
	for (size_t k = 0; k < json_array_size(root); k++) {
		json_t *row = json_array_get(root, k);

		if (!json_is_true(json_object_get(row, "applies"))) {
			ck_assert(json_is_string(json_object_get(row, "why_not")));
			continue;
		}
		ck_assert(json_is_true(json_object_get(row, "valid")));
		ck_assert_int_ge(json_integer_value(json_object_get(row, "io")), last);
		last = json_integer_value(json_object_get(row, "io"));
		if (json_object_get(row, "predicted_io"))
			ck_assert_int_eq(last, json_integer_value(json_object_get(row, "predicted_io")));
		else /* the baselines */
			ck_assert(!json_object_get(row, "upper"));
	}
	json_decref(root);
}
END_TEST

START_TEST(test_validate_dag_and_dry_run)
{
	char path[] = "/tmp/pebblesim-cli-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	char line[256];
	int lines = 0;

	close(fd);
	/* validate: valid, broken, missing */
	ck_assert_int_eq(cli("validate", "examples/tiny.jsonl", NULL), 0);
	HAS(out_text, "trace                  examples/tiny.jsonl, 26 lines, end line matches");
	ck_assert_int_eq(cli("validate", "examples/tiny-broken.jsonl", NULL), 1);
	HAS(out_text, "violation              examples/tiny-broken.jsonl:25: end: output A[0,0] is not in slow memory");
	ck_assert_int_eq(cli("validate", "examples/tiny.jsonl", "-M", "8", NULL), 1);
	ck_assert_int_eq(cli("validate", "examples/tiny.jsonl", "-n", "2", "-d", "1", "-g", "2", NULL), 2);
	HAS(err_text, "is not the one asked for");
	ck_assert_int_eq(cli("validate", "/nonexistent.jsonl", NULL), 2);
	HAS(err_text, "pebblesim: cannot open trace '/nonexistent.jsonl': No such file or directory");
	ck_assert_int_eq(cli("validate", NULL), 2);
	/* dag: the attention DAG as an edge list, one edge a line */
	ck_assert_int_eq(cli("dag", "-n", "2", "-d", "1", "-g", "1", "--format", "edgelist",
			     "-o", path, NULL), 0);
	f = fopen(path, "r");
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	ck_assert_int_eq(lines, 52); /* the DAG's edge count, by the closed form */
	ck_assert_int_eq(cli("dag", "-n", "2", "-d", "1", "-g", "1", "--format", "svg", NULL), 2);
	HAS(err_text, "pebblesim: unknown format 'svg': graphml, dot or edgelist");
	ck_assert_int_eq(cli("dag", "-n", "4000", "-d", "16", "-g", "3", NULL), 2);
	HAS(err_text, "materialising it is limited to 4000000 in all");
	/* run --dag: the tree example, its minimum M, and the wrong strategy */
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "5", "--order", "dfs", NULL), 0);
	HAS(out_text, "loads                  8\n");
	HAS(out_text, "saves                  1\n");
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "2", NULL), 2);
	HAS(err_text, "pebblesim: M = 2 is too small for lru on this DAG: it needs M >= 3");
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "5", "--strategy", "generic", NULL), 2);
	HAS(err_text, "pebblesim: generic pebbles the attention DAG; a DAG from a file takes lru or belady");
	ck_assert_int_eq(cli("--strategy", "lru", "-n", "8", "-d", "4", "-g", "2", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: lru pebbles a DAG from a file (run --dag FILE), not the attention DAG");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "64", "--order", "dfs", NULL), 2);
	HAS(err_text, "--order is an option of lru and belady");
	/* --dry-run validates nothing; an elementary trace of the headline is refused */
	ck_assert_int_eq(cli("--case", "II", "-n", "4096", "-d", "16", "-g", "3", "-M", "8192", "--dry-run", NULL), 0);
	HAS(out_text, "predicted              4245147 loads + 82009 saves = 4327156 I/O");
	HAS(out_text, "estimated peak memory");
	ck_assert_int_eq(cli("--case", "II", "-n", "4096", "-d", "16", "-g", "3", "-M", "8192",
			     "--trace", path, "--trace-detail", "elementary", NULL), 2);
	HAS(err_text, "an elementary trace of this run would have 175488490 lines");
	unlink(path);
}
END_TEST

START_TEST(test_list_help_version)
{
	ck_assert_int_eq(cli("list", NULL), 0);
	HAS(out_text, "generic");
	HAS(out_text, "Lemma 3.1");
	ck_assert_int_eq(cli("--help", NULL), 0);
	HAS(out_text, "Examples:");
	HAS(out_text, "Exit status");
	ck_assert_int_eq(cli("--version", NULL), 0);
	ck_assert_str_eq(out_text, "pebblesim " PS_VERSION "\n");
}
END_TEST

Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("main");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_usage_errors);
	tcase_add_test(tc, test_too_small_and_too_large);
	tcase_add_test(tc, test_text_report);
	tcase_add_test(tc, test_json_report);
	tcase_add_test(tc, test_cases_and_options);
	tcase_add_test(tc, test_compare);
	tcase_add_test(tc, test_validate_dag_and_dry_run);
	tcase_add_test(tc, test_list_help_version);
	suite_add_tcase(s, tc);
	return s;
}
