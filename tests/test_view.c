/*
 * pebblesim view (docs/VIEWER.md): the page holds the trace the engine
 * accepted and its verdict, nothing from the trace can end its script
 * element or fetch anything, a broken trace gets a page and exit status 1,
 * and the command refuses what it does not take. The page's script is
 * tested in a browser (tests/browser/view_test.py, `make check-browser`).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../src/cli/cli.h"
#include "tests.h"

static char out_text[1 << 16], err_text[1 << 14];
static char dir[64], cwd[4096];
static char page[1 << 21];

/* Runs pebblesim with the arguments, NULL last; returns the status. */
#define cli(...) test_cli_capture(out_text, sizeof(out_text), err_text, sizeof(err_text), __VA_ARGS__)

static void setup(void)
{
	test_dir_make(dir, sizeof(dir), "view");
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
}

static void teardown(void)
{
	ck_assert_int_eq(chdir(cwd), 0);
	test_dir_remove(dir);
}

/* The file at path into page. */
static void read_page(const char *path)
{
	FILE *f = fopen(path, "r");

	ck_assert_msg(f != NULL, "no page '%s'", path);
	test_slurp(f, page, sizeof(page));
}

/* The data the page embeds, parsed. */
static json_t *page_data(void)
{
	const char *open = "<script type=\"application/json\" id=\"pebblesim-data\">\n";
	const char *start = strstr(page, open), *end;
	json_error_t jerr;
	json_t *data;

	ck_assert_ptr_nonnull(start);
	start += strlen(open);
	end = strstr(start, "\n</script>");
	ck_assert_ptr_nonnull(end);
	data = json_loadb(start, (size_t)(end - start), 0, &jerr);
	ck_assert_msg(data != NULL, "the page's data is not JSON: %s", jerr.text);
	return data;
}

static size_t occurrences(const char *text, const char *needle)
{
	size_t count = 0;

	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		count++;
	return count;
}

/* A copy of examples/tiny.jsonl whose header names strategy instead. */
static void tiny_named(const char *path, const char *strategy)
{
	char src[4200], line[4096];
	FILE *in, *out;
	bool first = true;

	snprintf(src, sizeof(src), "%s/examples/tiny.jsonl", cwd);
	in = fopen(src, "r");
	out = fopen(path, "w");
	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	while (fgets(line, sizeof(line), in)) {
		if (first) {
			char *at = strstr(line, "\"strategy\":\"hand-written\"");

			ck_assert_ptr_nonnull(at);
			fprintf(out, "%.*s\"strategy\":\"%s\"}\n", (int)(at - line), line, strategy);
			first = false;
		} else {
			fputs(line, out);
		}
	}
	fclose(in);
	fclose(out);
}

/* A valid trace: the page holds every operation, the engine's counts,
 * the header, and fetches nothing. */
START_TEST(test_view_valid_page)
{
	json_t *data, *verdict;
	char trace[4200];

	snprintf(trace, sizeof(trace), "%s/examples/tiny.jsonl", cwd);
	ck_assert_int_eq(cli("view", trace, "-o", "tiny.html", NULL), 0);
	read_page("tiny.html");
	HAS(page, "Content-Security-Policy");
	HAS(page, "default-src 'none'");
	/* nothing fetched: no address, no source attribute */
	ck_assert_ptr_null(strstr(page, "http://"));
	ck_assert_ptr_null(strstr(page, "https://"));
	ck_assert_ptr_null(strstr(page, " src="));
	ck_assert_ptr_null(strstr(page, "@DATA@"));
	ck_assert_ptr_null(strstr(page, "@SCRIPT@"));
	ck_assert_uint_eq(occurrences(page, "</script>"), 2);
	data = page_data();
	/* 26 lines: the header, 24 operations, the end line */
	ck_assert_uint_eq(json_array_size(json_object_get(data, "ops")), 24);
	ck_assert_str_eq(json_string_value(json_object_get(data, "strategy")), "hand-written");
	ck_assert_int_eq(json_integer_value(json_object_get(data, "M")), 9);
	verdict = json_object_get(data, "verdict");
	ck_assert(json_is_true(json_object_get(verdict, "valid")));
	ck_assert_int_eq(json_integer_value(json_object_get(verdict, "loads")), 6);
	ck_assert_int_eq(json_integer_value(json_object_get(verdict, "saves")), 2);
	/* the arrays that hold pebbles, no products */
	ck_assert_uint_eq(json_array_size(json_object_get(data, "arrays")), 8);
	json_decref(data);
}
END_TEST

/* Text from the trace cannot close the script element or open markup. */
START_TEST(test_view_escapes_trace_text)
{
	json_t *data;

	tiny_named("evil.jsonl", "</script><script>alert(1)</script><!--&");
	ck_assert_int_eq(cli("view", "evil.jsonl", "-o", "evil.html", NULL), 0);
	read_page("evil.html");
	ck_assert_ptr_null(strstr(page, "<script>alert"));
	ck_assert_ptr_null(strstr(page, "<!--&"));
	ck_assert_uint_eq(occurrences(page, "</script>"), 2);
	HAS(page, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)");
	/* and it reads back as the same text */
	data = page_data();
	ck_assert_str_eq(json_string_value(json_object_get(data, "strategy")),
			 "</script><script>alert(1)</script><!--&");
	json_decref(data);
}
END_TEST

/* A broken trace: a page that stops before the broken line and says it,
 * and exit status 1. */
START_TEST(test_view_invalid_page)
{
	json_t *data, *verdict;
	char trace[4200];

	snprintf(trace, sizeof(trace), "%s/examples/tiny-broken.jsonl", cwd);
	ck_assert_int_eq(cli("view", trace, "-o", "broken.html", NULL), 1);
	HAS(err_text, "tiny-broken.jsonl:25: end: output A[0,0] is not in slow memory");
	read_page("broken.html");
	data = page_data();
	verdict = json_object_get(data, "verdict");
	ck_assert(json_is_false(json_object_get(verdict, "valid")));
	ck_assert_int_eq(json_integer_value(json_object_get(verdict, "line")), 25);
	HAS(json_string_value(json_object_get(verdict, "violation")),
	    "end: output A[0,0] is not in slow memory");
	/* every operation before the end line: 23 of them */
	ck_assert_uint_eq(json_array_size(json_object_get(data, "ops")), 23);
	json_decref(data);

	/* capacity broken at line 4: the two operations before it */
	snprintf(trace, sizeof(trace), "%s/examples/tiny.jsonl", cwd);
	ck_assert_int_eq(cli("view", "-M", "2", trace, "-o", "small.html", NULL), 1);
	read_page("small.html");
	data = page_data();
	verdict = json_object_get(data, "verdict");
	ck_assert_str_eq(json_string_value(json_object_get(verdict, "rule")), "capacity");
	ck_assert_uint_eq(json_array_size(json_object_get(data, "ops")),
			  (size_t)json_integer_value(json_object_get(verdict, "line")) - 2);
	ck_assert_int_eq(json_integer_value(json_object_get(data, "M")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(data, "header_M")), 9);
	json_decref(data);
}
END_TEST

/* What view refuses: no -o, another command's option, an output that is
 * its input, a trace that cannot be read, a DAG from a file. */
/* The arrays of a causal and of a decoding page, as the DAG has them
 * (MODEL.md sections 7 and 8): H[j,m,b] as rows j of (m, b) pairs, its
 * in-degree by row (1 at j = 0, else 2), causal exact S and E only for
 * j <= i and O[i] of i + 1, decoding's first rows and the prompt's
 * inputs. */
static json_t *page_array(json_t *data, const char *name)
{
	size_t k;
	json_t *a;

	json_array_foreach(json_object_get(data, "arrays"), k, a)
		if (!strcmp(json_string_value(json_object_get(a, "name")), name))
			return a;
	ck_abort_msg("no array %s on the page", name);
	return NULL;
}

static json_int_t page_int(json_t *data, const char *name, const char *field)
{
	json_t *v = json_object_get(page_array(data, name), field);

	ck_assert_msg(json_is_integer(v), "%s has no %s", name, field);
	return json_integer_value(v);
}

START_TEST(test_view_causal_and_decode)
{
	json_t *data, *deg, *prompt;

	ck_assert_int_eq(cli("--causal", "-n", "16", "-d", "2", "-g", "2", "-M", "100", "--trace", "c.jsonl", NULL), 0);
	ck_assert_int_eq(cli("view", "c.jsonl", "-o", "c.html", NULL), 0);
	read_page("c.html");
	data = page_data();
	ck_assert(json_is_true(json_object_get(json_object_get(data, "dag"), "causal")));
	/* r = C(4, 2) = 6 monomials, |B| = 3 */
	ck_assert_int_eq(page_int(data, "H", "rows"), 16);
	ck_assert_int_eq(page_int(data, "H", "cols"), 6 * 3);
	ck_assert_int_eq(page_int(data, "H", "depth"), 3);
	deg = json_object_get(page_array(data, "H"), "in_degrees");
	ck_assert_uint_eq(json_array_size(deg), 16);
	ck_assert_int_eq(json_integer_value(json_array_get(deg, 0)), 1);
	ck_assert_int_eq(json_integer_value(json_array_get(deg, 15)), 2);
	ck_assert_ptr_null(json_object_get(page_array(data, "N"), "in_degrees"));
	json_decref(data);

	ck_assert_int_eq(cli("--attention", "exact", "--causal", "-n", "16", "-d", "2", "-M", "100",
			     "--trace", "e.jsonl", NULL), 0);
	ck_assert_int_eq(cli("view", "e.jsonl", "-o", "e.html", NULL), 0);
	read_page("e.html");
	data = page_data();
	ck_assert(json_is_true(json_object_get(page_array(data, "S"), "lower_triangle")));
	ck_assert(json_is_true(json_object_get(page_array(data, "E"), "lower_triangle")));
	ck_assert_ptr_null(json_object_get(page_array(data, "O"), "lower_triangle"));
	deg = json_object_get(page_array(data, "O"), "in_degrees");
	for (size_t i = 0; i < 16; i++)
		ck_assert_int_eq(json_integer_value(json_array_get(deg, i)), (json_int_t)i + 1);
	json_decref(data);

	ck_assert_int_eq(cli("--attention", "exact", "--causal", "--decode", "10", "-n", "16", "-d", "2", "-M", "100",
			     "--trace", "d.jsonl", NULL), 0);
	ck_assert_int_eq(cli("view", "d.jsonl", "-o", "d.html", NULL), 0);
	read_page("d.html");
	data = page_data();
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(data, "dag"), "decode")), 10);
	ck_assert_int_eq(page_int(data, "Q", "first_row"), 10);
	ck_assert_int_eq(page_int(data, "A", "first_row"), 9);
	ck_assert_ptr_null(json_object_get(page_array(data, "K"), "first_row"));
	/* the cache K, V of the prompt and A[P-1] are inputs; Q's prompt
	 * rows are no node's */
	prompt = json_object_get(page_array(data, "K"), "prompt");
	ck_assert_int_eq(json_integer_value(json_object_get(prompt, "rows")), 10);
	ck_assert_str_eq(json_string_value(json_object_get(prompt, "role")), "input");
	ck_assert_str_eq(json_string_value(json_object_get(page_array(data, "K"), "role")), "plain");
	ck_assert_ptr_nonnull(json_object_get(page_array(data, "A"), "prompt"));
	ck_assert_ptr_null(json_object_get(page_array(data, "Q"), "prompt"));
	json_decref(data);
}
END_TEST

START_TEST(test_view_refuses)
{
	char trace[4200];

	snprintf(trace, sizeof(trace), "%s/examples/tiny.jsonl", cwd);
	ck_assert_int_eq(cli("view", trace, NULL), 2);
	HAS(err_text, "view needs -o PAGE");
	ck_assert_int_eq(cli("view", trace, "-o", "x.html", "--json", NULL), 2);
	HAS(err_text, "'--json' does not apply to view");
	tiny_named("self.jsonl", "self");
	ck_assert_int_eq(cli("view", "self.jsonl", "-o", "self.jsonl", NULL), 2);
	HAS(err_text, "self.jsonl");
	ck_assert_int_eq(access("x.html", F_OK), -1);
	ck_assert_int_eq(cli("view", "missing.jsonl", "-o", "x.html", NULL), 2);
	HAS(err_text, "cannot open trace 'missing.jsonl'");
	{
		FILE *f = fopen("bad.jsonl", "w");

		ck_assert_ptr_nonnull(f);
		fputs("{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\",\"n\":2,\"d\":1,\"g\":1},\"M\":9}\n"
		      "{\"op\":\"load\",\"kind\":\"Q\",\"i\":7,\"a\":0}\n", f);
		fclose(f);
		f = fopen("explicit.jsonl", "w");
		ck_assert_ptr_nonnull(f);
		fputs("{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"explicit\",\"vertices\":3,\"edges\":2},\"M\":2}\n", f);
		fclose(f);
	}
	ck_assert_int_eq(cli("view", "bad.jsonl", "-o", "x.html", NULL), 2);
	HAS(err_text, "bad.jsonl:2: Q coordinate i = 7 is out of range [0, 2)");
	ck_assert_int_eq(cli("view", "explicit.jsonl", "-o", "x.html", NULL), 2);
	HAS(err_text, "view shows the attention DAGs only");
	/* past the page's state: n = 65536, d = 16, g = 3 (docs/VIEWER.md):
	 * 3nd + 2nr + r(d+1) + n(d+1) + nd nodes hold pebbles, r = 969 */
	{
		FILE *f = fopen("big.jsonl", "w");

		ck_assert_ptr_nonnull(f);
		fputs("{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\",\"n\":65536,\"d\":16,\"g\":3},\"M\":9}\n", f);
		fclose(f);
	}
	ck_assert_int_eq(cli("view", "big.jsonl", "-o", "x.html", NULL), 2);
	HAS(err_text, "has 132333657 nodes that hold pebbles, more than a page holds (67108864");
	/* no page for a trace that cannot be read */
	ck_assert_int_eq(access("x.html", F_OK), -1);
}
END_TEST

Suite *view_suite(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("view");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_view_valid_page);
	tcase_add_test(tc, test_view_causal_and_decode);
	tcase_add_test(tc, test_view_escapes_trace_text);
	tcase_add_test(tc, test_view_invalid_page);
	tcase_add_test(tc, test_view_refuses);
	suite_add_tcase(s, tc);
	return s;
}
