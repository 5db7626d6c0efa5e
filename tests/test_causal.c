/*
 * Causal attention and token-by-token decoding (MODEL.md sections 7 and
 * 8): the options, the trace header's "causal" and "decode", and the
 * exact DAGs, strategies, values and bounds of docs/EXACT.md.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/trace.h"
#include "tests.h"

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

Suite *causal_suite(void)
{
	Suite *s = suite_create("causal");
	TCase *tc = tcase_create("causal");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_options_by_name);
	tcase_add_test(tc, test_header_keys);
	suite_add_tcase(s, tc);
	return s;
}
