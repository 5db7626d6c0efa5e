/* The command line: exit statuses, messages, options, DAG files, traces'
 * size rule, and every JSON output against docs/pebblesim.schema.json. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/cli/cli.h"
#include "pebblesim/common.h"
#include "pebblesim/explicit.h"
#include "pebblesim/npy.h"
#include "pebblesim/strategy.h"
#include "tests.h"

static char out_text[1 << 16], err_text[1 << 14];

/* Runs pebblesim with the NULL-terminated arguments; returns the status. */
static int cli(const char *first, ...)
{
	va_list ap;
	int rc;

	va_start(ap, first);
	rc = test_cli_va(out_text, sizeof(out_text), err_text, sizeof(err_text), first, ap);
	va_end(ap);
	return rc;
}

/* A mistyped option, command or strategy: the nearest one named; the
 * missing parameters named. */
START_TEST(test_did_you_mean)
{
	static const struct {
		const char *args[12], *message;
	} cases[] = {
		{ { "--statregy", "keylemma", "-n", "64", "-d", "4", "-g", "2", "-M", "100" },
		  "pebblesim: unknown option '--statregy'; did you mean '--strategy'?\n" },
		{ { "compare", "--predcit=1" },
		  "pebblesim: unknown option '--predcit'; did you mean '--predict'?\n" },
		{ { "swep", "-n", "64" }, "pebblesim: unknown command 'swep'; did you mean 'sweep'?\n" },
		{ { "help", "frontir" },
		  "pebblesim: unknown command 'frontir'; did you mean 'frontier'?\n" },
		{ { "--strategy", "keylema", "-n", "64", "-d", "4", "-g", "2", "-M", "100" },
		  "pebblesim: unknown strategy 'keylema'; did you mean 'keylemma'? known: generic, " },
		{ { "sweep", "-n", "64:128", "-d", "4", "-g", "2", "-M", "100", "--strategies", "flash,colpas" },
		  "pebblesim: unknown strategy 'colpas' in --strategies; did you mean 'colpass'?\n" },
		{ { "sweep", "-n", "64:128", "-d", "4", "-g", "2", "-M", "100", "--strategies", "cse,flash" },
		  "pebblesim: unknown strategy 'cse' in --strategies; did you mean 'case'?\n" },
		{ { "compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100", "--strategies", "flsah" },
		  "pebblesim: unknown strategy 'flsah' in --strategies; did you mean 'flash'?\n" },
		/* nothing near: no guess */
		{ { "--bogus" }, "pebblesim: unknown option '--bogus'\n" },
		{ { "xyzzy" }, "pebblesim: unknown command 'xyzzy'\n" },
		{ { "--strategy", "nope", "-n", "64", "-d", "4", "-g", "2", "-M", "100" },
		  "pebblesim: unknown strategy 'nope'; known: generic, " },
		/* the missing parameters, by name */
		{ { "-n", "64", "-d", "4", "-M", "100" },
		  "pebblesim: the parameters -n, -d, -g and -M are all required: -g is missing\n" },
		{ { "-n", "64", "-M", "100" },
		  "pebblesim: the parameters -n, -d, -g and -M are all required: -d and -g are missing\n" },
		{ { "compare", "-d", "4" },
		  "pebblesim: the parameters -n, -d, -g and -M are all required: -n, -g and -M are missing\n" },
		{ { "--attention", "exact", "-n", "64", "-M", "100" },
		  "pebblesim: exact attention needs -n, -d and -M: -d is missing\n" },
		{ { "optimal", "-M", "9", "-n", "2", "-g", "1" },
		  "pebblesim: the parameters -n, -d, -g and -M are all required: -d is missing\n" },
		{ { "dag", "-n", "4" },
		  "pebblesim: dag needs -n, -d and -g (exact attention: -n and -d): -d and -g are missing\n" },
		{ { "frontier", "-n", "16:64:x2", "-d", "4", "-M", "256" },
		  "pebblesim: frontier needs -n, -d, -M and --epsilon: --epsilon is missing\n" },
		{ { "sweep", "-n", "64:128", "-g", "2", "-M", "100" },
		  "pebblesim: sweep needs -n, -d and -M (and -g for approximate attention): -d is missing\n" },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const char *const *v = cases[k].args;

		ck_assert_int_eq(cli(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
				     v[10], v[11], NULL), 2);
		ck_assert_msg(!strncmp(err_text, cases[k].message, strlen(cases[k].message)),
			      "case %zu: '%s', not '%s'", k, err_text, cases[k].message);
	}
	/* the distance: a swap of two letters is one edit; a tie is no guess */
	{
		const char *words[] = { "strategy", "strategies", "sizes" };
		const char *tie[] = { "abcd", "abce" };

		ck_assert_str_eq(cli_nearest("stratgey", words, 3), "strategy");
		ck_assert_str_eq(cli_nearest("strategis", words, 3), "strategies");
		ck_assert_ptr_null(cli_nearest("tiles", words, 3));
		ck_assert_ptr_null(cli_nearest("abcf", tie, 2));
		ck_assert_ptr_null(cli_nearest("", words, 3));
	}
}
END_TEST

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
	HAS(err_text, "pebblesim: unknown option '--bogus'");
	/* an abbreviation of two options names both; of one, it is that one */
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "64", "--strate=generic", NULL), 2);
	HAS(err_text, "pebblesim: ambiguous option '--strate': it abbreviates --strategy, --strategies");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "64", "--strateg", "generic",
			     "--dry-run", NULL), 2);
	HAS(err_text, "ambiguous option '--strateg'");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "64", "--strategy", "generic",
			     "--dry", NULL), 0);
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
	HAS(err_text, "pebblesim: no algorithm of Case IV runs at M = 3: generic does not run: it needs M >= 7; matmul does not run: it needs M >= 5");
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
	ck_assert(json_number_value(json_object_get(v, "value")) >= (double)(loads + saves));
	v = json_object_get(json_object_get(root, "bounds"), "lower");
	/* bounds are whole numbers, printed as integers */
	ck_assert(json_is_integer(json_object_get(v, "value")));
	ck_assert_int_eq(json_integer_value(json_object_get(v, "value")), 4 * 64 * 4);
	v = json_object_get(json_object_get(root, "bounds"), "skipped");
	ck_assert(json_is_array(v));
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
	HAS(err_text, "not Case III; running its algorithm anyway");
	/* Lemma 3.3's premise C(4,2) = 6 <= 4rg/M = 1.2 fails: generic */
	HAS(out_text, "strategy               generic (Lemma 3.1, section 3.2)");
	HAS(out_text, "subtile not considered: Lemma 3.3's premise C(d,g) = 6 > 4rg/M = 1.2 fails");
	/* Case IV where matmul cannot run: generic does */
	ck_assert_int_eq(cli("--case", "IV", "-n", "256", "-d", "16", "-g", "3", "-M", "16", NULL), 0);
	HAS(out_text, "Case IV runs Theorem 1.4's algorithm: generic; matmul does not run: it needs M >= 17");
	ck_assert_int_eq(cli("--case", "II", "-n", "8", "-d", "4", "-g", "2", "-M", "100", "--w", "2", NULL), 0);
	ck_assert_str_eq(err_text, "");
	HAS(out_text, "w = 2: 4 groups of size 1, 6 aggregation tiles (2-subsets of groups)");
	ck_assert_int_eq(cli("--case", "II", "-n", "8", "-d", "4", "-g", "2", "-M", "100", "--w", "4", NULL), 2);
	HAS(err_text, "pebblesim: w = 4 is not valid for keylemma: w tau(w) = 60 > M/4 = 25");
	ck_assert_int_eq(cli("--strategy", "generic", "-n", "8", "-d", "4", "-g", "2", "-M", "100", "--w", "3", NULL), 2);
	HAS(err_text, "pebblesim: --w is an option of keylemma, not of generic");
	ck_assert_int_eq(cli("--strategy", "best", "-n", "8", "-d", "4", "-g", "2", "-M", "100", NULL), 0);
	HAS(out_text, "  runs                 ");
	HAS(out_text, "chose ");
	/* g = 0 has no tile to cut; keylemma needs g <= d */
	ck_assert_int_eq(cli("--strategy", "subtile", "-n", "8", "-d", "4", "-g", "0", "-M", "100", NULL), 2);
	HAS(err_text, "pebblesim: subtile does not apply to these parameters at any M");
	ck_assert_int_eq(cli("--strategy", "keylemma", "-n", "8", "-d", "2", "-g", "3", "-M", "1000", NULL), 2);
	HAS(err_text, "pebblesim: keylemma does not apply to these parameters at any M");
	ck_assert_int_eq(cli("--case", "II", "-n", "8", "-d", "2", "-g", "3", "-M", "1000", NULL), 2);
	HAS(err_text, "pebblesim: no algorithm of Case II runs at M = 1000: keylemma does not apply to these parameters at any M\n");
}
END_TEST

/* colpass on the command line: its layout forced or refused, its cost
 * model instead of a bound, the optimal line where the I/O is 4nd, and
 * the line that names a cheaper strategy than the one run */
START_TEST(test_colpass_report)
{
	json_t *root;

	ck_assert_int_eq(cli("--strategy", "colpass", "-n", "64", "-d", "4", "-g", "2",
			     "-M", "200", NULL), 0);
	HAS(out_text, "strategy               colpass (beyond the paper");
	HAS(out_text, "I/O                    1024\n");
	HAS(out_text, "predicted I/O          1024 (cost model agrees)");
	HAS(out_text, "optimal                the I/O equals the lower bound: no valid pebbling moves less\n");
	ck_assert_ptr_null(strstr(out_text, "upper bound"));
	ck_assert_ptr_null(strstr(out_text, "cheaper strategy"));
	ck_assert_int_eq(cli("--strategy", "colpass", "--layout", "tail", "-n", "64", "-d", "4",
			     "-g", "2", "-M", "200", NULL), 0);
	HAS(out_text, "plan                 tail, first pass f = ");
	ck_assert_ptr_null(strstr(out_text, "optimal"));
	HAS(out_text, "cheaper strategy       colpass moves 0.");
	ck_assert_int_eq(cli("--strategy", "colpass", "--layout", "rect-dup", "-n", "64", "-d", "4",
			     "-g", "2", "-M", "20", NULL), 2);
	HAS(err_text, "pebblesim: M = 20 is too small for colpass --layout rect-dup: it needs M >= ");
	ck_assert_int_eq(cli("--strategy", "colpass", "--layout", "rows", "-n", "64", "-d", "4",
			     "-g", "2", "-M", "200", NULL), 2);
	HAS(err_text, "unknown layout 'rows': rect-dup, rect-save or tail");
	ck_assert_int_eq(cli("--strategy", "keylemma", "--layout", "tail", "-n", "64", "-d", "4",
			     "-g", "2", "-M", "200", NULL), 2);
	HAS(err_text, "pebblesim: --layout is an option of colpass, not of keylemma");
	ck_assert_int_eq(cli("--strategy", "keylemma", "-n", "64", "-d", "4", "-g", "2",
			     "-M", "100", "--json", NULL), 0);
	root = json_loads(out_text, 0, NULL);
	ck_assert_ptr_nonnull(root);
	ck_assert(json_is_false(json_object_get(root, "optimal")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(root, "cheaper"),
							   "strategy")), "colpass");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(root, "cheaper"),
							    "io")), 1024);
	json_decref(root);
	ck_assert_int_eq(cli("--strategy", "best", "-n", "64", "-d", "4", "-g", "2",
			     "-M", "100", NULL), 0);
	HAS(out_text, "chose colpass");
	ck_assert_ptr_null(strstr(out_text, "cheaper strategy"));
}
END_TEST

/* compare's rows of tilings with tuned sizes: one per strategy that
 * takes --sizes */
static size_t tuned_rows(void)
{
	size_t count = 0;

	for (size_t k = 0; k < ps_strategy_count; k++)
		count += ps_strategy_takes(ps_strategies[k], PS_TAKES_SIZES) &&
			 !(ps_strategies[k]->flags & PS_STRATEGY_CHOOSER);
	return count;
}

static json_t *out_json(void)
{
	json_error_t jerr;
	json_t *root = json_loads(out_text, 0, &jerr);

	ck_assert_msg(root != NULL, "%s in:\n%s", jerr.text, out_text);
	return root;
}

START_TEST(test_compare)
{
	json_t *root;
	json_int_t last = 0;

	ck_assert_int_eq(cli("compare", "-n", "16", "-d", "4", "-g", "2", "-M", "40", NULL), 0);
	HAS(out_text, "Case III");
	HAS(out_text, "keylemma       does not run: needs M >= 48");
	ck_assert_int_eq(cli("compare", "-n", "16", "-d", "4", "-g", "2", "-M", "40", "--json", NULL), 0);
	root = out_json();
	ck_assert(json_is_array(root));
	/* the paper's five, each that takes --sizes again tuned, colpass
	 * and the baselines */
	ck_assert_uint_eq(json_array_size(root), 9 + tuned_rows());
	/* best first: applicable rows by increasing I/O, then the others */
	for (size_t k = 0; k < json_array_size(root); k++) {
		json_t *row = json_array_get(root, k);

		if (!json_is_true(json_object_get(row, "applies"))) {
			ck_assert(json_is_string(json_object_get(row, "why_not")));
			continue;
		}
		/* resident, beaten by its exact cost model: not simulated */
		if (json_is_false(json_object_get(row, "simulated")))
			ck_assert(json_is_string(json_object_get(row, "not_simulated")));
		else
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

/* The row of compare --json for strategy (and no sizes), or NULL. */
static json_t *compare_row(json_t *root, const char *strategy)
{
	for (size_t k = 0; k < json_array_size(root); k++) {
		json_t *row = json_array_get(root, k);

		if (!strcmp(json_string_value(json_object_get(row, "strategy")), strategy) &&
		    !json_object_get(row, "sizes"))
			return row;
	}
	return NULL;
}

/* resident's row of the last compare --json, simulated and valid: its I/O. */
static json_int_t resident_simulated(void)
{
	json_t *root = out_json(), *row = compare_row(root, "resident");
	json_int_t io;

	ck_assert(row != NULL);
	ck_assert(json_is_true(json_object_get(row, "simulated")));
	ck_assert(json_is_true(json_object_get(row, "valid")));
	ck_assert(!json_object_get(row, "not_simulated"));
	io = json_integer_value(json_object_get(row, "io"));
	json_decref(root);
	return io;
}

/*
 * resident (PS_STRATEGY_QUADRATIC) is simulated only where its exact cost
 * model does not show a simulated row with less I/O: else its row is the
 * model's, says so and why, and its counts are those resident itself
 * makes when named.
 */
START_TEST(test_compare_holds_back_resident)
{
	json_t *root, *row;
	json_int_t least = -1, io;
	char why[PS_ERROR_MAX];
	const char *least_name = NULL;

	/* K and V do not fit M = 100 at n = 64: resident streams them */
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100", "--json", NULL), 0);
	root = out_json();
	for (size_t k = 0; k < json_array_size(root); k++) {
		json_t *r = json_array_get(root, k);

		if (json_is_true(json_object_get(r, "simulated")) &&
		    (least < 0 || json_integer_value(json_object_get(r, "io")) < least)) {
			least = json_integer_value(json_object_get(r, "io"));
			least_name = json_string_value(json_object_get(r, "strategy"));
		}
	}
	row = compare_row(root, "resident");
	ck_assert(row != NULL && least_name != NULL);
	io = json_integer_value(json_object_get(row, "io"));
	ck_assert(json_is_false(json_object_get(row, "simulated")));
	ck_assert(!json_object_get(row, "valid"));
	ck_assert_int_gt(io, least);
	ck_assert_int_eq(io, json_integer_value(json_object_get(row, "predicted_io")));
	snprintf(why, sizeof(why), "its cost model (exact) predicts %lld I/O, more than %s's %lld",
		 (long long)io, least_name, (long long)least);
	HAS(json_string_value(json_object_get(row, "not_simulated")), why);
	/* by array, the model's: K loaded */
	ck_assert_int_gt(json_integer_value(json_object_get(
				 json_object_get(json_object_get(row, "by_array"), "K"), "loads")), 0);
	json_decref(root);

	/* named, it is simulated: the engine's counts are the model's */
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--strategies", "resident,colpass", "--json", NULL), 0);
	ck_assert_int_eq(resident_simulated(), io);

	/* the text table says it under the rows */
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100", NULL), 0);
	HAS(out_text, "\nresident        model ");
	HAS(out_text, "\nresident: not simulated: its cost model (exact) predicts ");

	/* where K and V fit, resident moves the least I/O there is: simulated */
	ck_assert_int_eq(cli("compare", "-n", "16", "-d", "2", "-g", "1", "-M", "1000", "--json", NULL), 0);
	resident_simulated();
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
	HAS(err_text, "pebblesim: unknown format 'svg': graphml, gml, dot or edgelist");
	ck_assert_int_eq(cli("dag", "-n", "4000", "-d", "16", "-g", "3", NULL), 2);
	HAS(err_text, "materialising it is limited to 4000000 in all");
	/* run --dag: the tree example, its minimum M, and the wrong strategy */
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "5", "--order", "dfs", NULL), 0);
	HAS(out_text, "loads                  8\n");
	HAS(out_text, "saves                  1\n");
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "2", NULL), 2);
	HAS(err_text, "pebblesim: M = 2 is too small for lru on this DAG: it needs M >= 3");
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "5", "--strategy", "generic", NULL), 2);
	HAS(err_text, "pebblesim: generic pebbles the attention DAG; a DAG from a file takes lru, belady or portfolio");
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

/* Copies src to dst with the header's strategy name replaced. */
static void rename_strategy(const char *src, const char *dst, const char *from,
			    const char *to)
{
	FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
	char line[4096], *at;
	bool first = true;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	while (fgets(line, sizeof(line), in)) {
		if (first && (at = strstr(line, from))) {
			fwrite(line, 1, (size_t)(at - line), out);
			fputs(to, out);
			fputs(at + strlen(from), out);
		} else {
			fputs(line, out);
		}
		first = false;
	}
	fclose(in);
	fclose(out);
}

START_TEST(test_validate_against_the_headers_plan)
{
	char path[] = "/tmp/pebblesim-cli-XXXXXX", other[] = "/tmp/pebblesim-cli-XXXXXX";
	int fd = mkstemp(path), fd2 = mkstemp(other);

	close(fd);
	close(fd2);
	ck_assert_int_eq(cli("--case", "II", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--trace", path, NULL), 0);
	/* -M 80 still holds it: the plan is the header's, made for M = 100 */
	ck_assert_int_eq(cli("validate", path, "-M", "80", NULL), 0);
	HAS(out_text, "predicted I/O          6925 (cost model agrees)");
	HAS(out_text, "peak red pebbles       74 of 80");
	/* a strategy pebblesim does not know, or one of the other DAG kind */
	rename_strategy(path, other, "\"strategy\":\"keylemma\"", "\"strategy\":\"mine\"");
	ck_assert_int_eq(cli("validate", other, NULL), 0);
	HAS(out_text, "predicted I/O          no prediction");
	rename_strategy(path, other, "\"strategy\":\"keylemma\"", "\"strategy\":\"lru\"");
	ck_assert_int_eq(cli("validate", other, NULL), 0);
	HAS(out_text, "predicted I/O          no prediction");
	unlink(path);
	unlink(other);
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

/* list: every name padded to the longest, every summary under its section;
 * --help: the installed documentation */
START_TEST(test_list_columns_and_docdir)
{
	size_t width = 0;
	char *line;

	for (size_t k = 0; k < ps_strategy_count; k++)
		width = ps_max_u64(width, strlen(ps_strategies[k]->name));
	ck_assert_int_eq(cli("list", NULL), 0);
	line = out_text;
	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];
		char *summary = strchr(line, '\n') + 1;

		ck_assert_msg(!strncmp(line, s->name, strlen(s->name)) &&
			      line[width] == ' ' &&
			      !strncmp(line + width + 1, s->section, strlen(s->section)),
			      "%s: section not at column %zu in:\n%s", s->name, width + 1, out_text);
		ck_assert_msg(strspn(summary, " ") == width + 1 &&
			      !strncmp(summary + width + 1, s->summary, strlen(s->summary)),
			      "%s: summary not at column %zu in:\n%s", s->name, width + 1, out_text);
		line = strchr(summary, '\n') + 1;
	}
	ck_assert_str_eq(line, "");
	ck_assert_int_eq(cli("--help", NULL), 0);
	/* the documentation beside the binary: here the source tree's */
	{
		char docs[4096], readme[4200], *line = strstr(out_text, "Documentation: README.md and docs/, in ");

		ck_assert_ptr_nonnull(line);
		ck_assert_int_eq(sscanf(line, "Documentation: README.md and docs/, in %4000[^\n]", docs), 1);
		ck_assert(docs[strlen(docs) - 1] == '.');
		docs[strlen(docs) - 1] = '\0';
		snprintf(readme, sizeof(readme), "%s/README.md", docs);
		ck_assert_int_eq(access(readme, R_OK), 0);
	}
}
END_TEST

/* ---- the command line as a Unix tool ----------------------------------- */

/* A fresh temporary file name (the file exists, empty). */
static void temp_path(char *path, size_t len, const char *suffix)
{
	char base[] = "/tmp/pebblesim-cli-XXXXXX";
	int fd = mkstemp(base);

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(path, len, "%s%s", base, suffix);
	ck_assert_int_eq(rename(base, path), 0);
}

static json_int_t json_path_int(json_t *root, const char *a, const char *b)
{
	json_t *v = json_object_get(root, a);

	if (b)
		v = json_object_get(v, b);
	ck_assert_msg(json_is_integer(v), "%s.%s is not an integer", a, b ? b : "");
	return json_integer_value(v);
}

/* The front end is not in the library; strategies declare their options. */
START_TEST(test_front_end_apart)
{
	const char *bin = getenv("PEBBLESIM_BIN");
	char cmd[1024], line[256];
	FILE *p;
	int cli_symbols = 0, lib_symbols = 0;
	const struct ps_strategy *generic = ps_strategy_find("generic");
	struct ps_strategy old = *generic;

	if (bin) {
		/* build/pebblesim beside build/libpebblesim.a */
		snprintf(cmd, sizeof(cmd), "nm -g --defined-only \"$(dirname '%s')/libpebblesim.a\" 2>/dev/null", bin);
		p = popen(cmd, "r");
		ck_assert_ptr_nonnull(p);
		while (fgets(line, sizeof(line), p)) {
			cli_symbols += strstr(line, " cli_") || strstr(line, " cmd_") ||
				       strstr(line, "ps_cli_main") || strstr(line, "report_print");
			lib_symbols += strstr(line, " ps_run\n") != NULL;
		}
		pclose(p);
		ck_assert_int_eq(lib_symbols, 1);
		ck_assert_int_eq(cli_symbols, 0);
	}
	/* options as data: what each strategy takes, read through the version */
	ck_assert(ps_strategy_takes(generic, PS_TAKES_TILES));
	ck_assert(!ps_strategy_takes(generic, PS_TAKES_W));
	ck_assert(ps_strategy_takes(ps_strategy_find("keylemma"), PS_TAKES_W));
	ck_assert(ps_strategy_takes(ps_strategy_find("lru"), PS_TAKES_ORDER));
	ck_assert(!ps_strategy_takes(ps_strategy_find("subtile"), PS_TAKES_TILES));
	old.version = 1; /* a version 1 strategy declares nothing: takes nothing */
	ck_assert(!ps_strategy_takes(&old, PS_TAKES_TILES));
	/* the messages come from the registry's declarations */
	ck_assert_int_eq(cli("--strategy", "matmul", "-n", "8", "-d", "4", "-g", "2", "-M", "64", "--tiles", "tall", NULL), 2);
	HAS(err_text, "pebblesim: --tiles is an option of generic, not of matmul");
	ck_assert_int_eq(cli("--strategy", "best", "-n", "8", "-d", "4", "-g", "2", "-M", "100", "--tiles", "tall", NULL), 0);
}
END_TEST

/* Whether the run of BIN with args (a shell word list) maps igraph, as
 * the dynamic loader reports it (LD_DEBUG=libs); its status in *status. */
static bool run_loads_igraph(const char *bin, const char *args, int *status)
{
	char cmd[1024], line[1024];
	bool igraph = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "LD_DEBUG=libs '%s' %s 2>&1 >/dev/null", bin, args);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p))
		igraph |= strstr(line, "calling init:") && strstr(line, "libigraph.so");
	*status = pclose(p);
	return igraph;
}

/* igraph is opened only where an explicit DAG is read or written: the
 * binary of the build tree finds the module beside it (docs/PERFORMANCE.md) */
START_TEST(test_igraph_on_demand)
{
	const char *bin = getenv("PEBBLESIM_BIN");
	int status;

	if (!bin)
		return;
	ck_assert(!run_loads_igraph(bin, "--version", &status));
	ck_assert_int_eq(status, 0);
	ck_assert(!run_loads_igraph(bin, "-n 64 -d 4 -g 2 -M 100", &status));
	ck_assert_int_eq(status, 0);
	ck_assert(!run_loads_igraph(bin, "--attention exact -n 64 -d 4 -M 100", &status));
	ck_assert_int_eq(status, 0);
	ck_assert(run_loads_igraph(bin, "run --dag examples/tree.graphml -M 5", &status));
	ck_assert_int_eq(status, 0);
	ck_assert(run_loads_igraph(bin, "dag -n 4 -d 2 -g 1 --format edgelist", &status));
	ck_assert_int_eq(status, 0);
	/* in this process too: the module's functions reach igraph */
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "5", "--strategy", "lru",
			     "--order", "dfs", NULL), 0);
	HAS(out_text, "depth-first post-order");
}
END_TEST

/* The binary's main makes a write past `ulimit -f` a write error (exit
 * status 2, "File too large"), standard output's too, though it installs
 * no other handler before a temporary. */
START_TEST(test_binary_write_limit)
{
	const char *bin = getenv("PEBBLESIM_BIN");
	char out[64], err[64], text[4096];
	FILE *f;
	size_t got;
	int status;
	pid_t pid;

	if (!bin)
		return;
	temp_path(out, sizeof(out), ".out");
	temp_path(err, sizeof(err), ".err");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit rl = { 200, 200 };

		signal(SIGXFSZ, SIG_DFL);
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr) ||
		    setrlimit(RLIMIT_FSIZE, &rl))
			_exit(99);
		execl(bin, bin, "list", (char *)NULL);
		_exit(98);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2, "status %d", status);
	f = fopen(err, "r");
	ck_assert_ptr_nonnull(f);
	got = fread(text, 1, sizeof(text) - 1, f);
	text[got] = '\0';
	fclose(f);
	HAS(text, "File too large");
	unlink(out);
	unlink(err);
}
END_TEST

/* Item 1: getopt_long with permutation, --opt=value, -n64, --. */
START_TEST(test_gnu_habits)
{
	char trace[64], tree_trace[64], dir[] = "/tmp/pebblesim-cli-dir-XXXXXX";
	char dash[128], cwd[4096];
	FILE *f, *g;
	char buf[4096];
	size_t got;
	json_t *root;

	temp_path(trace, sizeof(trace), ".jsonl");
	temp_path(tree_trace, sizeof(tree_trace), ".jsonl");
	ck_assert_int_eq(cli("-n64", "-d", "4", "-g2", "--M", NULL), 2); /* no --M */
	ck_assert_int_eq(cli("-n64", "-d4", "-g", "2", "-M100", "--case=II", "--trace=", NULL), 2);
	ck_assert_int_eq(cli("-n64", "-d4", "-g", "2", "-M100", "--case=II", NULL), 0);
	HAS(out_text, "approximate attention  n = 64, d = 4, g = 2");
	ck_assert_int_eq(cli("--case", "II", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--trace", trace, NULL), 0);
	/* options after the file, before it, mixed */
	ck_assert_int_eq(cli("validate", "--json", trace, NULL), 0);
	root = out_json();
	ck_assert_int_eq(json_path_int(root, "M", NULL), 100);
	json_decref(root);
	ck_assert_int_eq(cli("validate", "-M", "60", trace, NULL), 1);
	HAS(out_text, "valid                  no");
	ck_assert_int_eq(cli("validate", trace, "-M60", NULL), 1);
	ck_assert_int_eq(cli("validate", "-M", "5", "examples/tiny.jsonl", NULL), 1);
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "5",
			     "--trace", tree_trace, NULL), 0);
	ck_assert_int_eq(cli("validate", "--dag", "examples/tree.graphml", tree_trace, NULL), 0);
	HAS(out_text, "explicit DAG           examples/tree.graphml: 15 vertices");
	ck_assert_int_eq(cli("validate", "--dag=examples/tree.graphml", "--json", tree_trace, NULL), 0);
	/* -- ends the options: a file named -x.jsonl */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(dash, sizeof(dash), "%s/-x.jsonl", dir);
	f = fopen(trace, "r");
	g = fopen(dash, "w");
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, got, g);
	fclose(f);
	fclose(g);
	/* into the directory and back: the suite also runs in one process */
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(cli("validate", "-x.jsonl", NULL), 2);
	HAS(err_text, "pebblesim: unknown option '-x'");
	ck_assert_int_eq(cli("validate", "--", "-x.jsonl", NULL), 0);
	HAS(out_text, "trace                  -x.jsonl");
	ck_assert_int_eq(cli("validate", "-M", "100", "--", "-x.jsonl", NULL), 0);
	ck_assert_int_eq(cli("validate", "--json=yes", "--", "-x.jsonl", NULL), 2);
	HAS(err_text, "pebblesim: option '--json' takes no value");
	ck_assert_int_eq(cli("validate", "--", "-x.jsonl", "--json", NULL), 2);
	HAS(err_text, "pebblesim: unexpected argument '--json' for validate");
	unlink(dash);
	ck_assert_int_eq(chdir(cwd), 0);
	rmdir(dir);
	unlink(trace);
	unlink(tree_trace);
}
END_TEST

/* Item 2: each command accepts its own options; others name themselves. */
START_TEST(test_strict_options)
{
	ck_assert_int_eq(cli("compare", "--trace", "c.jsonl", "-n", "8", "-d", "4", "-g", "2", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: option '--trace' does not apply to compare");
	ck_assert(access("c.jsonl", F_OK) != 0);
	ck_assert_int_eq(cli("compare", "--dry-run", "-n", "8", "-d", "4", "-g", "2", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: option '--dry-run' does not apply to compare");
	ck_assert_int_eq(cli("dag", "--json", "-M", "4", "--strategy", "foo", NULL), 2);
	HAS(err_text, "pebblesim: option '--json' does not apply to dag");
	ck_assert_int_eq(cli("dag", "-n", "2", "-d", "1", "-g", "1", "-M", "4", NULL), 2);
	HAS(err_text, "pebblesim: option '-M' does not apply to dag");
	ck_assert_int_eq(cli("validate", "--dry-run", "--trace", "x", "--tiles", "square", NULL), 2);
	HAS(err_text, "pebblesim: option '--dry-run' does not apply to validate");
	ck_assert_int_eq(cli("validate", "examples/tiny.jsonl", "--tiles", "square", NULL), 2);
	HAS(err_text, "pebblesim: option '--tiles' does not apply to validate");
	ck_assert_int_eq(cli("run", "--dag", "X", "--case", "II", "-n", "3", NULL), 2);
	HAS(err_text, "does not apply to run --dag: a DAG from a file has no attention parameters");
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "5", "--case", "II", NULL), 2);
	HAS(err_text, "pebblesim: option '--case' does not apply to run --dag");
	ck_assert_int_eq(cli("validate", "examples/tiny.jsonl", "--dag", "examples/tree.graphml", "-n", "2", "-d", "1", "-g", "1", NULL), 2);
	HAS(err_text, "pebblesim: option '-n' does not apply to validate --dag");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "64", "--dag-format", "gml", NULL), 2);
	HAS(err_text, "pebblesim: option '--dag-format' applies only with --dag FILE");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "64", "--trace-detail", "elementary", NULL), 2);
	HAS(err_text, "pebblesim: option '--trace-detail' applies only with --trace FILE");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "64", "--dry-run", "--trace", "x.jsonl", NULL), 2);
	HAS(err_text, "pebblesim: option '--trace' does not apply with --dry-run");
	ck_assert_int_eq(cli("list", "--strategy", "x", NULL), 2);
	HAS(err_text, "pebblesim: option '--strategy' does not apply to list");
	ck_assert_int_eq(cli("frobnicate", NULL), 2);
	HAS(err_text, "pebblesim: unknown command 'frobnicate'");
	/* compare --dag compares the policies for explicit DAGs, both orders */
	ck_assert_int_eq(cli("compare", "--dag", "examples/tree.graphml", "-M", "4", NULL), 0);
	HAS(out_text, "lru/topo");
	HAS(out_text, "lru/dfs");
	HAS(out_text, "belady/topo");
	HAS(out_text, "belady/dfs");
	ck_assert_int_eq(cli("compare", "--dag", "examples/tree.graphml", "-n", "8", "-M", "4", NULL), 2);
	HAS(err_text, "pebblesim: option '-n' does not apply to compare --dag");
	ck_assert_int_eq(cli("compare", "--dag", "examples/tree.graphml", NULL), 2);
	HAS(err_text, "pebblesim: -M is required");
}
END_TEST

/* Item 3: only -h and --help print help; `help` is a value or a command. */
START_TEST(test_help_only_by_flag)
{
	char dir[] = "/tmp/pebblesim-cli-dir-XXXXXX", cwd[4096];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(cli("dag", "-n", "2", "-d", "1", "-g", "1", "-o", "help", NULL), 0);
	ck_assert_str_eq(out_text, "");
	ck_assert_int_eq(access("help", F_OK), 0);
	unlink("help");
	ck_assert_int_eq(chdir(cwd), 0);
	rmdir(dir);
	ck_assert_int_eq(cli("help", NULL), 0);
	HAS(out_text, "Commands:");
	ck_assert_int_eq(cli("-h", NULL), 0);
	HAS(out_text, "Commands:");
	ck_assert_int_eq(cli("help", "validate", NULL), 0);
	HAS(out_text, "usage: pebblesim validate");
	ck_assert_int_eq(cli("compare", "--help", NULL), 0);
	HAS(out_text, "usage: pebblesim compare");
	ck_assert(strstr(out_text, "--trace") == NULL);
	ck_assert_int_eq(cli("dag", "-n", "2", "-h", NULL), 0);
	HAS(out_text, "usage: pebblesim dag");
	ck_assert_int_eq(cli("--strategy", "help", "-n", "8", "-d", "4", "-g", "2", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: unknown strategy 'help'");
}
END_TEST

/* Item 4: k, M, G as powers of 1024 and 2^k; INT64_MAX the limit. */
START_TEST(test_size_suffixes)
{
	json_t *root;
	uint64_t v;
	char why[256];

	ck_assert_int_eq(cli("-n", "64", "-d", "4", "-g", "2", "-M", "8k", "--json", NULL), 0);
	root = out_json();
	ck_assert_int_eq(json_path_int(root, "M", NULL), 8192);
	json_decref(root);
	ck_assert_int_eq(cli("-n", "64k", "-d", "16", "-g", "3", "-M", "2^13", "--dry-run", "--json", NULL), 0);
	root = out_json();
	ck_assert_int_eq(json_path_int(root, "dag", "n"), 65536);
	ck_assert_int_eq(json_path_int(root, "M", NULL), 8192);
	json_decref(root);
	ck_assert_int_eq(cli_parse_count("1M", true, 1, &v, why, sizeof(why)), 0);
	ck_assert_uint_eq(v, UINT64_C(1) << 20);
	ck_assert_int_eq(cli_parse_count("3G", true, 1, &v, why, sizeof(why)), 0);
	ck_assert_uint_eq(v, UINT64_C(3) << 30);
	ck_assert_int_eq(cli_parse_count("9223372036854775807", true, 1, &v, why, sizeof(why)), 0);
	ck_assert_int_eq(cli_parse_count("9223372036854775808", true, 1, &v, why, sizeof(why)), -1);
	ck_assert_int_eq(cli_parse_count("8589934592G", true, 1, &v, why, sizeof(why)), -1);
	ck_assert_int_eq(cli_parse_count("2^63", true, 1, &v, why, sizeof(why)), -1);
	ck_assert_int_eq(cli_parse_count("8k", false, 1, &v, why, sizeof(why)), -1);
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "8589934592G", NULL), 2);
	HAS(err_text, "invalid value '8589934592G' for -M: above the largest value, 2^63 - 1 = 9223372036854775807");
	ck_assert_int_eq(cli("-n", "2^63", "-d", "4", "-g", "2", "-M", "8", NULL), 2);
	HAS(err_text, "invalid value '2^63' for -n: 2^k needs 0 <= k <= 62");
	ck_assert_int_eq(cli("-n", "8", "-d", "4k", "-g", "2", "-M", "8", NULL), 2);
	HAS(err_text, "invalid value '4k' for -d: expected an integer >= 1");
	ck_assert_int_eq(cli("run", "--help", NULL), 0);
	HAS(out_text, "take k, M or G, powers of 1024");
}
END_TEST

/* Item 5: every format dag writes reads back as the same game, or is
 * refused with the reason; standard input; the format from the content. */
START_TEST(test_dag_files_round_trip)
{
	static const char *const formats[] = { "graphml", "gml", "edgelist", "dot" };
	json_int_t io[4] = { 0 }, inputs[4] = { 0 }, sums[4] = { 0 };
	char path[4][64], upper[80];
	json_t *root;
	FILE *f;
	char text[1 << 12];
	size_t got;

	for (int k = 0; k < 4; k++) {
		temp_path(path[k], sizeof(path[k]), "");
		ck_assert_int_eq(cli("dag", "-n", "4", "-d", "2", "-g", "2", "--format", formats[k],
				     "-o", path[k], NULL), 0);
		if (k == 3) {
			ck_assert_int_eq(cli("run", "--dag", path[k], "-M", "40", NULL), 2);
			HAS(err_text, "DOT is written for drawing and is not read back");
			continue;
		}
		ck_assert_int_eq(cli("run", "--dag", path[k], "-M", "40", "--json", NULL), 0);
		root = out_json();
		io[k] = json_path_int(root, "io", NULL);
		inputs[k] = json_path_int(root, "dag", "inputs");
		sums[k] = json_path_int(root, "dag", "sums");
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(root, "dag"), "format")),
				 formats[k]);
		ck_assert_int_eq(json_object_get(json_object_get(root, "dag"), "note") != NULL, k == 2);
		json_decref(root);
	}
	/* GML carries the roles: the same game as GraphML */
	ck_assert_int_eq(io[1], io[0]);
	ck_assert_int_eq(inputs[1], inputs[0]);
	ck_assert_int_eq(sums[1], sums[0]);
	ck_assert_int_gt(sums[0], 0);
	/* an edge list has no roles, and the report says so */
	ck_assert_int_eq(sums[2], 0);
	ck_assert_int_eq(cli("run", "--dag", path[2], "-M", "40", NULL), 0);
	HAS(out_text, "read as              edge list: no roles, sources are inputs and every other vertex plain");
	/* the content decides, not the extension's case */
	snprintf(upper, sizeof(upper), "%s.GraphML", path[0]);
	ck_assert_int_eq(rename(path[0], upper), 0);
	ck_assert_int_eq(cli("run", "--dag", upper, "-M", "40", "--json", NULL), 0);
	root = out_json();
	ck_assert_int_eq(json_path_int(root, "io", NULL), io[0]);
	json_decref(root);
	/* GraphML coordinates are integers */
	f = fopen(upper, "r");
	got = fread(text, 1, sizeof(text) - 1, f);
	text[got] = '\0';
	fclose(f);
	HAS(text, "attr.name=\"i\" attr.type=\"long\"");
	ck_assert(strstr(text, "attr.type=\"double\"") == NULL);
	/* standard input, with and without --dag-format */
	ck_assert_ptr_nonnull(freopen(path[1], "r", stdin));
	ck_assert_int_eq(cli("run", "--dag", "-", "--dag-format", "gml", "-M", "40", "--json", NULL), 0);
	root = out_json();
	ck_assert_int_eq(json_path_int(root, "io", NULL), io[0]);
	json_decref(root);
	ck_assert_ptr_nonnull(freopen(path[2], "r", stdin));
	ck_assert_int_eq(cli("run", "--dag", "-", "-M", "40", "--json", NULL), 0);
	root = out_json();
	ck_assert_int_eq(json_path_int(root, "dag", "sums"), 0);
	json_decref(root);
	ck_assert_int_eq(cli("run", "--dag", path[1], "--dag-format", "graphml", "-M", "40", NULL), 2);
	HAS(err_text, "as GraphML");
	ck_assert_int_eq(cli("run", "--dag", path[1], "--dag-format", "pajek", "-M", "40", NULL), 2);
	HAS(err_text, "pebblesim: unknown DAG format 'pajek': graphml, gml, edgelist, hdag or mtx");
	f = fopen(path[3], "w");
	fputs("hello\n", f);
	fclose(f);
	ck_assert_int_eq(cli("run", "--dag", path[3], "-M", "40", NULL), 2);
	HAS(err_text, "cannot tell the format of DAG");
	ck_assert_str_eq(ps_explicit_sniff("<?xml", 5), "graphml");
	ck_assert_str_eq(ps_explicit_sniff("Creator \"x\"\ngraph [", 19), "gml");
	ck_assert_str_eq(ps_explicit_sniff("graph\n[", 7), "gml");
	ck_assert_str_eq(ps_explicit_sniff("/* c */ digraph {", 17), "dot");
	ck_assert_str_eq(ps_explicit_sniff("0 1\n", 4), "edgelist");
	unlink(upper);
	for (int k = 1; k < 4; k++)
		unlink(path[k]);
}
END_TEST

/* Item 6: one line limit for every trace, checked before writing. */
START_TEST(test_trace_limit)
{
	char path[64];

	temp_path(path, sizeof(path), ".jsonl");
	unlink(path);
	/* a baseline's set-operation trace: 30 million lines, refused unwritten */
	ck_assert_int_eq(cli("--strategy", "naive", "-n", "256", "-d", "16", "-g", "3", "-M", "8192",
			     "--trace", path, NULL), 2);
	HAS(err_text, "pebblesim: a trace of this run would have 30531794 lines; the limit is 20000000 lines: raise it with --trace-limit N (0 for none)");
	ck_assert(access(path, F_OK) != 0);
	ck_assert_int_eq(cli("--case", "II", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--trace", path, "--trace-limit", "1000", NULL), 2);
	HAS(err_text, "a trace of this run would have 1148 lines; the limit is 1000 lines");
	ck_assert_int_eq(cli("--case", "II", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--trace", path, "--trace-limit", "1148", NULL), 0);
	ck_assert_int_eq(cli("--case", "II", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--trace", path, "--trace-detail", "elementary", "--trace-limit", "1k", NULL), 2);
	HAS(err_text, "an elementary trace of this run would have 35548 lines; the limit is 1024 lines");
	ck_assert_int_eq(cli("--case", "II", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--trace", path, "--trace-detail", "elementary", "--trace-limit", "0", NULL), 0);
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "5",
			     "--trace", path, "--trace-limit", "3", NULL), 2);
	HAS(err_text, "the limit is 3 lines");
	unlink(path);
}
END_TEST

/*
 * A validator for the subset of JSON Schema (draft 2020-12) that
 * docs/pebblesim.schema.json uses: type, properties, required,
 * additionalProperties false, items, $ref into $defs, anyOf, oneOf,
 * enum, const, minimum.
 */
static json_t *schema_root;

static bool schema_valid(json_t *schema, json_t *v, char *why, size_t len,
			 const char *at);

static bool type_is(const char *type, json_t *v)
{
	if (!strcmp(type, "object"))
		return json_is_object(v);
	if (!strcmp(type, "array"))
		return json_is_array(v);
	if (!strcmp(type, "string"))
		return json_is_string(v);
	if (!strcmp(type, "integer"))
		return json_is_integer(v);
	if (!strcmp(type, "number"))
		return json_is_number(v);
	if (!strcmp(type, "boolean"))
		return json_is_boolean(v);
	if (!strcmp(type, "null"))
		return json_is_null(v);
	ck_abort_msg("schema type '%s' outside the subset", type);
	return false;
}

static int count_valid(json_t *list, json_t *v, const char *at)
{
	char ignored[256];
	size_t k;
	json_t *s;
	int valid = 0;

	json_array_foreach(list, k, s)
		valid += schema_valid(s, v, ignored, sizeof(ignored), at);
	return valid;
}

static bool schema_valid(json_t *schema, json_t *v, char *why, size_t len,
			 const char *at)
{
	const char *key;
	json_t *sub, *t;
	char where[256];
	size_t k;

	if ((t = json_object_get(schema, "$ref"))) {
		const char *ref = json_string_value(t);

		ck_assert_msg(!strncmp(ref, "#/$defs/", 8), "ref '%s' outside the subset", ref);
		sub = json_object_get(json_object_get(schema_root, "$defs"), ref + 8);
		ck_assert_msg(sub != NULL, "no definition '%s'", ref);
		return schema_valid(sub, v, why, len, at);
	}
	json_object_foreach(schema, key, sub)
		ck_assert_msg(!strcmp(key, "type") || !strcmp(key, "properties") ||
			      !strcmp(key, "required") || !strcmp(key, "additionalProperties") ||
			      !strcmp(key, "items") || !strcmp(key, "anyOf") ||
			      !strcmp(key, "oneOf") || !strcmp(key, "enum") ||
			      !strcmp(key, "const") || !strcmp(key, "minimum") ||
			      !strcmp(key, "description") || !strcmp(key, "$defs") ||
			      !strcmp(key, "$schema") || !strcmp(key, "$id") ||
			      !strcmp(key, "title"),
			      "schema keyword '%s' outside the subset", key);
	if ((t = json_object_get(schema, "type"))) {
		bool ok = false;

		if (json_is_string(t))
			ok = type_is(json_string_value(t), v);
		json_array_foreach(t, k, sub)
			ok = ok || type_is(json_string_value(sub), v);
		if (!ok) {
			snprintf(why, len, "%s: not of type %s", at,
				 json_is_string(t) ? json_string_value(t) : "(list)");
			return false;
		}
	}
	if ((t = json_object_get(schema, "const")) && !json_equal(t, v)) {
		snprintf(why, len, "%s: not the constant", at);
		return false;
	}
	if ((t = json_object_get(schema, "enum"))) {
		bool ok = false;

		json_array_foreach(t, k, sub)
			ok = ok || json_equal(sub, v);
		if (!ok) {
			snprintf(why, len, "%s: not one of the enum", at);
			return false;
		}
	}
	if ((t = json_object_get(schema, "minimum")) && json_is_number(v) &&
	    json_number_value(v) < json_number_value(t)) {
		snprintf(why, len, "%s: below the minimum", at);
		return false;
	}
	if ((t = json_object_get(schema, "anyOf")) && count_valid(t, v, at) < 1) {
		snprintf(why, len, "%s: matches none of anyOf", at);
		return false;
	}
	if ((t = json_object_get(schema, "oneOf")) && count_valid(t, v, at) != 1) {
		snprintf(why, len, "%s: matches not exactly one of oneOf", at);
		return false;
	}
	if (json_is_object(v)) {
		json_t *props = json_object_get(schema, "properties");
		json_t *extra = json_object_get(schema, "additionalProperties");

		json_array_foreach(json_object_get(schema, "required"), k, sub)
			if (!json_object_get(v, json_string_value(sub))) {
				snprintf(why, len, "%s: no \"%s\"", at, json_string_value(sub));
				return false;
			}
		json_object_foreach(v, key, sub) {
			json_t *ps = props ? json_object_get(props, key) : NULL;

			snprintf(where, sizeof(where), "%s.%s", at, key);
			if (!ps && json_is_false(extra)) {
				snprintf(why, len, "%s: not in the schema", where);
				return false;
			}
			if (ps && !schema_valid(ps, sub, why, len, where))
				return false;
		}
	}
	if (json_is_array(v) && (t = json_object_get(schema, "items"))) {
		json_array_foreach(v, k, sub) {
			snprintf(where, sizeof(where), "%s[%zu]", at, k);
			if (!schema_valid(t, sub, why, len, where))
				return false;
		}
	}
	return true;
}

/* list --json names the DAG each strategy pebbles: every strategy's
 * "dag" agrees with its flags, and each of the three DAGs has one. */
static void list_dags(void)
{
	json_t *root = out_json(), *row;
	size_t k, seen[3] = { 0 }, named = 0;

	ck_assert_uint_eq(json_array_size(root), ps_strategy_count);
	json_array_foreach(root, k, row) {
		static const char *const names[3] = { "approx-attention", "exact-attention",
						      "explicit" };
		const char *name = json_string_value(json_object_get(row, "name"));
		const char *dag = json_string_value(json_object_get(row, "dag"));
		const struct ps_strategy *s;
		int want;

		ck_assert_ptr_nonnull(name);
		s = ps_strategy_find(name);
		ck_assert_ptr_nonnull(s);
		want = (s->flags & PS_STRATEGY_EXPLICIT) ? 2 : (s->flags & PS_STRATEGY_EXACT) ? 1 : 0;
		ck_assert_msg(dag && !strcmp(dag, names[want]), "%s: dag %s, not %s", s->name,
			      dag ? dag : "(none)", names[want]);
		seen[want]++;
	}
	for (int w = 0; w < 3; w++)
		ck_assert_uint_gt(seen[w], 0);
	/* and by name, without the flags */
	json_array_foreach(root, k, row) {
		const char *name = json_string_value(json_object_get(row, "name"));
		const char *dag = json_string_value(json_object_get(row, "dag"));

		if (!strcmp(name, "flash") || !strcmp(name, "exact-matmul"))
			ck_assert_str_eq(dag, "exact-attention");
		else if (!strcmp(name, "keylemma") || !strcmp(name, "colpass"))
			ck_assert_str_eq(dag, "approx-attention");
		else if (!strcmp(name, "lru") || !strcmp(name, "belady"))
			ck_assert_str_eq(dag, "explicit");
		else
			continue;
		named++;
	}
	ck_assert_uint_eq(named, 6);
	json_decref(root);
}

/* The output of the last cli() is valid against definition def. */
static void output_valid(const char *def)
{
	char why[512], ref[64];
	json_t *root = out_json(), *schema;

	snprintf(ref, sizeof(ref), "#/$defs/%s", def);
	schema = json_pack("{s:s}", "$ref", ref);
	ck_assert_msg(schema_valid(schema, root, why, sizeof(why), def), "%s in:\n%s", why, out_text);
	ck_assert_msg(schema_valid(schema_root, root, why, sizeof(why), "$"), "%s", why);
	json_decref(schema);
	json_decref(root);
}

/* The output of the last cli() valid against the frontier definition,
 * the schema loaded for it. */
static void output_valid_frontier(void)
{
	json_error_t jerr;

	schema_root = json_load_file("docs/pebblesim.schema.json", 0, &jerr);
	ck_assert_msg(schema_root != NULL, "%s", jerr.text);
	output_valid("frontier");
	json_decref(schema_root);
	schema_root = NULL;
}

/* Item 9: one schema, every JSON output valid against it. */
START_TEST(test_json_schema)
{
	char trace[64], why[256];
	json_error_t jerr;
	json_t *bad, *count;

	schema_root = json_load_file("docs/pebblesim.schema.json", 0, &jerr);
	ck_assert_msg(schema_root != NULL, "%s", jerr.text);
	ck_assert_str_eq(json_string_value(json_object_get(schema_root, "$schema")),
			 "https://json-schema.org/draft/2020-12/schema");
	temp_path(trace, sizeof(trace), ".jsonl");
	ck_assert_int_eq(cli("-n", "64", "-d", "4", "-g", "2", "-M", "100", "--json", "--trace", trace, NULL), 0);
	output_valid("report");
	ck_assert_int_eq(cli("--strategy", "best", "-n", "64", "-d", "4", "-g", "2", "-M", "100", "--json", NULL), 0);
	output_valid("report");
	ck_assert_int_eq(cli("--strategy", "naive", "-n", "16", "-d", "4", "-g", "2", "-M", "100", "--json", NULL), 0);
	output_valid("report");
	ck_assert_int_eq(cli("validate", "--json", trace, NULL), 0);
	output_valid("report");
	ck_assert_int_eq(cli("validate", "--json", "--values", "--seed", "3", trace, NULL), 0);
	output_valid("report");
	ck_assert_int_eq(cli("validate", "--json", "examples/tiny-broken.jsonl", NULL), 1);
	output_valid("report");
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "5", "--json", "--trace", trace, NULL), 0);
	output_valid("report");
	ck_assert_int_eq(cli("validate", "--dag", "examples/tree.graphml", "--json", trace, NULL), 0);
	output_valid("report");
	ck_assert_int_eq(cli("-n", "64", "-d", "4", "-g", "2", "-M", "100", "--json", "--dry-run", NULL), 0);
	output_valid("dry_run");
	ck_assert_int_eq(cli("--strategy", "caseI", "--sizes", "tuned", "-n", "64", "-d", "4", "-g", "2",
			     "-M", "400", "--json", NULL), 0);
	output_valid("report");
	ck_assert_int_eq(cli("--strategy", "caseI", "--sizes", "tuned", "-n", "64", "-d", "4", "-g", "2",
			     "-M", "400", "--json", "--dry-run", NULL), 0);
	output_valid("dry_run");
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "5", "--json", "--dry-run", NULL), 0);
	output_valid("dry_run");
	ck_assert_int_eq(cli("compare", "-n", "16", "-d", "4", "-g", "2", "-M", "40", "--json", NULL), 0);
	output_valid("compare");
	ck_assert_int_eq(cli("compare", "--dag", "examples/tree.graphml", "-M", "4", "--json", NULL), 0);
	output_valid("compare");
	ck_assert_int_eq(cli("list", "--json", NULL), 0);
	output_valid("list");
	list_dags();
	ck_assert_int_eq(cli("sweep", "-n", "8:16:x2", "-d", "4", "-g", "2", "-M", "60",
			     "--strategies", "flash,case,naive", "--json", NULL), 0);
	output_valid("sweep");
	ck_assert_int_eq(cli("sweep", "-M", "8:64:x8", "-n", "8", "-d", "4", "-g", "2",
			     "--predict", "--json", NULL), 0);
	output_valid("sweep");
	ck_assert_int_eq(cli("--attention", "exact", "-n", "8", "-d", "4", "-M", "60", "--json", NULL), 0);
	output_valid("report");
	ck_assert_int_eq(cli("-n", "16", "-d", "4", "-g", "2", "-M", "100", "--json", "--values", NULL), 0);
	output_valid("report");
	ck_assert_int_eq(cli("--attention", "exact", "-n", "8", "-d", "4", "-M", "60", "--json",
			     "--values", "--no-normalize", NULL), 0);
	output_valid("report");
	ck_assert_int_eq(cli("sweep", "-g", "1:2", "-n", "8", "-d", "4", "-M", "60",
			     "--strategies", "flash,case", "--values", "--json", NULL), 0);
	output_valid("sweep");
	ck_assert_int_eq(cli("sweep", "-n", "1k:4k:x2", "-d", "16", "-g", "3", "-M", "8k", "--predict",
			     "--strategies", "best,flash", "--refine", "--json", NULL), 0);
	output_valid("sweep");
	ck_assert_int_eq(cli("-n", "16", "-d", "4", "-g", "2", "-M", "100", "--json", "--values",
			     "--polynomial", "minimax", "--interval", "0.5", NULL), 0);
	output_valid("report");
	/* the validator refuses what the schema does: a count as a float */
	bad = json_pack("{s:f}", "M", 1024.0);
	count = json_pack("{s:s}", "$ref", "#/$defs/count");
	ck_assert(!schema_valid(count, json_object_get(bad, "M"), why, sizeof(why), "M"));
	json_decref(count);
	json_decref(bad);
	json_decref(schema_root);
	unlink(trace);
}
END_TEST

/* Compare's rows carry their DAG and M; counts and bounds are integers. */
START_TEST(test_compare_rows_carry_parameters)
{
	json_t *root, *row;
	size_t k;

	ck_assert_int_eq(cli("compare", "-n", "16", "-d", "4", "-g", "2", "-M", "40", "--json", NULL), 0);
	root = out_json();
	json_array_foreach(root, k, row) {
		ck_assert_int_eq(json_path_int(row, "n", NULL), 16);
		ck_assert_int_eq(json_path_int(row, "d", NULL), 4);
		ck_assert_int_eq(json_path_int(row, "g", NULL), 2);
		ck_assert_int_eq(json_path_int(row, "M", NULL), 40);
		ck_assert_int_eq(json_path_int(row, "dag", "r"), 15);
		if (json_is_true(json_object_get(row, "applies")))
			ck_assert(json_is_integer(json_object_get(row, "lower")));
	}
	json_decref(root);
}
END_TEST

/* Item 3 and the help: each command's help lists its own options. */
START_TEST(test_help_teaches)
{
	ck_assert_int_eq(cli("--help", NULL), 0);
	for (size_t k = 0; k < cli_command_count; k++) {
		char line[64];

		snprintf(line, sizeof(line), "  %-10s ", cli_commands[k].name);
		HAS(out_text, line);
	}
	for (size_t k = 0; k < cli_command_count; k++) {
		const struct cli_command *cmd = &cli_commands[k];

		ck_assert_int_eq(cli(cmd->name, "--help", NULL), 0);
		HAS(out_text, "Options:");
		HAS(out_text, "Examples:\n  pebblesim ");
		for (const struct cli_option *o = cmd->options; o->help; o++) {
			char name[64];

			if (o->long_name)
				snprintf(name, sizeof(name), "--%s", o->long_name);
			else
				snprintf(name, sizeof(name), "  -%c ", o->short_name);
			HAS(out_text, name);
		}
	}
	/* an option name means one thing: the same kind in every table */
	for (size_t a = 0; a < cli_command_count; a++)
		for (const struct cli_option *o = cli_commands[a].options; o->help; o++)
			for (size_t b = 0; b < cli_command_count; b++) {
				const struct cli_option *p = cli_find_option(&cli_commands[b], o->id);

				if (p) {
					ck_assert_int_eq(p->kind, o->kind);
					ck_assert_int_eq(p->short_name, o->short_name);
					ck_assert_int_eq(p->offset, o->offset);
				}
			}
}
END_TEST

/* Exact attention from the command line, and its refusals. */
START_TEST(test_exact_attention_cli)
{
	char path[] = "/tmp/pebblesim-cli-XXXXXX";
	int fd = mkstemp(path);
	json_t *root;

	close(fd);
	ck_assert_int_eq(cli("--attention", "exact", "-n", "32", "-d", "4", "-M", "100", NULL), 0);
	HAS(out_text, "exact attention        n = 32, d = 4, normalised");
	HAS(out_text, "strategy               flash");
	/* n d + ceil(n/Br) 2 n d + n d = 128 + 4 x 256 + 128, Br = 8 */
	HAS(out_text, "predicted I/O          1280 (cost model agrees)");
	/* naming an exact strategy picks the DAG */
	ck_assert_int_eq(cli("--strategy", "exact-matmul", "-n", "32", "-d", "4", "-M", "40",
			     "--json", NULL), 0);
	root = json_loads(out_text, 0, NULL);
	ck_assert_ptr_nonnull(root);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(root, "dag"), "kind")),
			 "exact-attention");
	json_decref(root);
	/* a trace of it replays with equal counts */
	ck_assert_int_eq(cli("--strategy", "flash", "-n", "9", "-d", "3", "-M", "60",
			     "--trace", path, NULL), 0);
	HAS(out_text, "I/O                    ");
	ck_assert_int_eq(cli("validate", path, NULL), 0);
	HAS(out_text, "exact attention        n = 9, d = 3");
	HAS(out_text, "(cost model agrees)");
	unlink(path);
	/* refusals, each with its reason */
	ck_assert_int_eq(cli("--attention", "exact", "-n", "8", "-d", "4", "-g", "2", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: -g does not apply to exact attention");
	ck_assert_int_eq(cli("--strategy", "flash", "-n", "8", "-d", "4", "-g", "2", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: -g does not apply to exact attention");
	ck_assert_int_eq(cli("--attention", "exact", "--strategy", "keylemma", "-n", "8", "-d", "4",
			     "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: keylemma pebbles approximate attention, not exact attention");
	ck_assert_int_eq(cli("--attention", "exact", "--case", "II", "-n", "8", "-d", "4", "-M", "64", NULL), 2);
	HAS(err_text, "--case does not apply to exact attention");
	ck_assert_int_eq(cli("--attention", "softmax", "-n", "8", "-d", "4", "-M", "64", NULL), 2);
	HAS(err_text, "pebblesim: unknown attention 'softmax': approx or exact");
	/* exported with igraph, and pebbled back as a DAG from a file */
	ck_assert_int_eq(cli("dag", "--attention", "exact", "-n", "3", "-d", "2", "-o", path, NULL), 0);
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "200", NULL), 0);
	HAS(out_text, "loads                  18\n"); /* Q, K, V once: 3 n d */
	unlink(path);
	/* every approximate report names its exact counterpart, a cost
	 * model's figure and said to be */
	ck_assert_int_eq(cli("-n", "64", "-d", "4", "-g", "2", "-M", "100", NULL), 0);
	HAS(out_text, "exact attention (flash) 4608 I/O by its cost model (");
	ck_assert_int_eq(cli("-n", "64", "-d", "4", "-g", "2", "-M", "100", "--json", NULL), 0);
	HAS(out_text, "\"exact_flash_io\":4608,\"exact_flash_io_by\":\"cost model\"");
}
END_TEST

/* A crossover is stated only against a baseline that ran, and an end at
 * the range's edge is never called exact: text, JSON and --merge. */
START_TEST(test_crossover_claims)
{
	char csv[] = "/tmp/pebblesim-cross-XXXXXX";
	int fd = mkstemp(csv);

	ck_assert_int_ge(fd, 0);
	close(fd);
	/* best alone: flash, the default baseline, was not swept */
	ck_assert_int_eq(cli("sweep", "-n", "256:16k:x2", "-d", "16", "-g", "3", "-M", "8k", "--predict",
			     "--strategies", "best", "--refine", NULL), 0);
	ck_assert_ptr_null(strstr(out_text, "anywhere in the range"));
	HAS(out_text, "crossover: none of best against flash: the baseline flash has no row: it was not swept");
	ck_assert_int_eq(cli("sweep", "-n", "256:16k:x2", "-d", "16", "-g", "3", "-M", "8k", "--predict",
			     "--strategies", "best", "--refine", "--json", NULL), 0);
	HAS(out_text, "\"crossovers\":[{\"strategy\":\"best\",\"baseline\":\"flash\",\"compared\":false,\"at\":null,\"intervals\":null,\"refined\":false,\"interval_count\":null,");
	ck_assert_int_eq(cli("sweep", "-n", "256:1k:x2", "-d", "16", "-g", "3", "-M", "8k", "--predict",
			     "--strategies", "best", "--csv", csv, NULL), 0);
	ck_assert_int_eq(cli("sweep", "--merge", csv, "--json", NULL), 0);
	HAS(out_text, "\"compared\":false,\"at\":null,\"intervals\":null,");
	unlink(csv);
	/* flash swept, but caseI runs at none of its points */
	ck_assert_int_eq(cli("sweep", "-n", "4:64:x2", "-d", "16", "-g", "3", "-M", "100", "--predict",
			     "--strategies", "flash,caseI", NULL), 0);
	HAS(out_text, "crossover: none of caseI against flash: no value where both flash and caseI ran\n");
	/* a strategy never below: at the values swept, not "anywhere" */
	ck_assert_int_eq(cli("sweep", "-n", "16:64:x2", "-d", "4", "-g", "2", "-M", "4k", "--predict",
			     "--strategies", "flash,resident", NULL), 0);
	HAS(out_text, "crossover: resident moves no less than flash at any value swept\n");
	/* colpass below flash over the whole range: both ends are its edges */
	ck_assert_int_eq(cli("sweep", "-n", "1k:64k:x2", "-d", "16", "-g", "3", "-M", "8k", "--predict",
			     "--strategies", "flash,colpass", "--refine", NULL), 0);
	ck_assert_ptr_null(strstr(out_text, "ends exact"));
	HAS(out_text, "crossover: colpass moves less than flash for n in [1024, 65536] (1024 and 65536 are the ends of the values compared, not crossings)\n");
	ck_assert_int_eq(cli("sweep", "-n", "1k:64k:x2", "-d", "16", "-g", "3", "-M", "8k", "--predict",
			     "--strategies", "flash,colpass", "--refine", "--json", NULL), 0);
	HAS(out_text, "\"intervals\":[{\"from\":1024,\"to\":65536,\"from_edge\":true,\"to_edge\":true}]");
	/* one inner end, exact, and one edge */
	ck_assert_int_eq(cli("sweep", "-n", "256:64k:x2", "-d", "16", "-g", "3", "-M", "8k", "--predict",
			     "--strategies", "flash,keylemma", "--refine", NULL), 0);
	HAS(out_text, "for n in [7410, 65536] (ends exact: bisection on the cost models; 65536 is an end of the values compared, not a crossing)\n");
}
END_TEST

/* A theorem is named only where the hypothesis pebblesim checks for it
 * holds: Theorem 1.2 with M < d r, Theorems 1.3 and 1.4 with d >= 5g. */
START_TEST(test_theorem_labels)
{
	/* Case II (d r = 56 > M/4 = 50) but M = 200 >= d r */
	ck_assert_int_eq(cli("run", "-n", "256", "-d", "7", "-g", "1", "-M", "200", NULL), 0);
	ck_assert_ptr_null(strstr(out_text, "Theorem 1.2 applies"));
	ck_assert_ptr_null(strstr(out_text, "Theorem 1.2's hypotheses"));
	HAS(out_text, "but the theorem assumes M = o(d r) and here M = 200 >= d r = 56, so only the Key Lemma applies");
	/* M = 14000 < d r = 15504, and w0 = 3.00 >= g = 3 */
	ck_assert_int_eq(cli("run", "-n", "4096", "-d", "16", "-g", "3", "-M", "14000", "--dry-run", NULL), 0);
	HAS(out_text, "Theorem 1.2's hypotheses as pebblesim checks them hold: M = 14000 < d r");
	/* M = 32768: w0 = 3.71 >= g, but M >= d r = 15504 */
	ck_assert_int_eq(cli("run", "-n", "4096", "-d", "16", "-g", "3", "-M", "32k", "--dry-run", NULL), 0);
	HAS(out_text, "here M = 32768 >= d r = 15504, so only the Key Lemma applies");
	/* d = 4 < 5g = 25: B.3's and C's arguments, not the theorems */
	ck_assert_int_eq(cli("run", "-n", "1024", "-d", "4", "-g", "5", "-M", "100", NULL), 0);
	ck_assert_ptr_null(strstr(out_text, "Theorem 1.3 (B.3)"));
	ck_assert_ptr_null(strstr(out_text, "Theorem 1.4 (C)"));
	HAS(out_text, "  threshold after B.3  2000: M(ceil(P) - 1)");
	HAS(out_text, "  threshold after C    1600: M(ceil(P) - 1)");
	ck_assert_int_eq(cli("run", "-n", "1024", "-d", "4", "-g", "5", "-M", "100", "--json", NULL), 0);
	HAS(out_text, "{\"name\":\"threshold after B.3\",");
	HAS(out_text, "{\"name\":\"threshold after C\",");
	ck_assert_ptr_null(strstr(out_text, "\"name\":\"Theorem 1.3"));
	ck_assert_ptr_null(strstr(out_text, "\"name\":\"Theorem 1.4"));
	/* Cases III and IV with M >= d r: the theorems' M = o(d r) fails */
	ck_assert_int_eq(cli("run", "-n", "64", "-d", "4", "-g", "4", "-M", "500", "--dry-run", NULL), 0);
	HAS(out_text, "III: no w >= g = 4 has w tau(w) <= M/4 = 125");
	HAS(out_text, "; the theorem assumes M = o(d r), and here M >= d r;");
	ck_assert_int_eq(cli("run", "-n", "64", "-d", "2", "-g", "6", "-M", "100", "--dry-run", NULL), 0);
	HAS(out_text, "Theorem 1.4 (Lemma 3.1's tiles, or section 3.6's stored U1); its lower bound as stated needs d >= 5g (pebblesim's threshold after C does not, and is named so); the theorem assumes M = o(d r), and here M >= d r\n");
	ck_assert_int_eq(cli("run", "-n", "64", "-d", "3", "-g", "4", "-M", "100", "--dry-run", NULL), 0);
	ck_assert_ptr_null(strstr(out_text, "o(d r)"));
	/* d = 16 >= 5g = 15: the theorems' names */
	ck_assert_int_eq(cli("run", "-n", "1024", "-d", "16", "-g", "3", "-M", "8k", "--dry-run", NULL), 0);
	HAS(out_text, "Theorem 1.3 (B.3)");
}
END_TEST

START_TEST(test_sweep_cli)
{
	char csv[] = "/tmp/pebblesim-cli-XXXXXX", svg[64];
	int fd = mkstemp(csv);
	json_t *root;
	FILE *f;
	char head[64] = "";

	close(fd);
	snprintf(svg, sizeof(svg), "%s.svg", csv);
	ck_assert_int_eq(cli("sweep", "-n", "8:32:x2", "-d", "4", "-g", "2", "-M", "200",
			     "--strategies", "flash,keylemma,best", "-j", "2", "--csv", csv,
			     "--plot", svg, NULL), 0);
	HAS(out_text, "crossover: ");
	f = fopen(svg, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(head, sizeof(head), f));
	fclose(f);
	HAS(head, "<?xml");
	unlink(svg);
	/* a file merged twice has every point twice: refused */
	ck_assert_int_eq(cli("sweep", "--merge", csv, csv, "--json", NULL), 2);
	HAS(err_text, "the point n = 8 of flash is in more than one row");
	ck_assert_int_eq(cli("sweep", "--merge", csv, "--json", NULL), 0);
	root = json_loads(out_text, 0, NULL);
	ck_assert_ptr_nonnull(root);
	ck_assert_uint_eq(json_array_size(json_object_get(root, "rows")), 3 * 3);
	ck_assert(json_is_array(json_object_get(root, "crossovers")));
	json_decref(root);
	unlink(csv);
	ck_assert_int_eq(cli("sweep", "-n", "8:32:x2", "-d", "4", "-g", "2", "-M", "200",
			     "--predict", "--json", NULL), 0);
	root = json_loads(out_text, 0, NULL);
	ck_assert_ptr_nonnull(root);
	ck_assert_uint_eq(json_array_size(json_object_get(root, "rows")), 3 * 3);
	json_decref(root);
	/* bad input: exit 2 with the reason */
	ck_assert_int_eq(cli("sweep", "-n", "32:8", "-d", "4", "-g", "2", "-M", "200", NULL), 2);
	HAS(err_text, "lo = 32 is above hi = 8");
	ck_assert_int_eq(cli("sweep", "-n", "8:32:x1", "-d", "4", "-g", "2", "-M", "200", NULL), 2);
	HAS(err_text, "a geometric step is x2 or more");
	ck_assert_int_eq(cli("sweep", "-n", "8:32", "-d", "4", "-g", "2", "-M", "200",
			     "--strategies", "flash,nosuch", NULL), 2);
	HAS(err_text, "unknown strategy 'nosuch'");
	ck_assert_int_eq(cli("sweep", "-n", "8", "-d", "4", "-g", "2", "-M", "200", NULL), 2);
	HAS(err_text, "sweep takes exactly one range");
	ck_assert_int_eq(cli("sweep", "-n", "8:32", "-d", "4:8", "-g", "2", "-M", "200", NULL), 2);
	ck_assert_int_eq(cli("sweep", "-n", "8:32", "-d", "4", "-g", "2", "-M", "200",
			     "--shard", "3/2", NULL), 2);
	ck_assert_int_eq(cli("sweep", "-n", "8:32", "-d", "4", "-g", "2", "-M", "200",
			     "--plot", "/tmp/x.jpg", NULL), 2);
	HAS(err_text, "the name ends in .svg, .png or .pdf");
	/* a range is a sweep's: run refuses it */
	ck_assert_int_eq(cli("-n", "8:32", "-d", "4", "-g", "2", "-M", "200", NULL), 2);
}
END_TEST

/* Writes rows x cols doubles as .npy at path. */
static void write_npy(const char *path, const double *x, uint64_t rows, uint64_t cols)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ps_npy_write(f, x, rows, cols), 0);
	fclose(f);
}

/* The report up to its time line, which differs from run to run. */
static void report_untimed(char *buf, size_t len)
{
	char *time_line;

	snprintf(buf, len, "%s", out_text);
	time_line = strstr(buf, "\ntime ");
	ck_assert_ptr_nonnull(time_line);
	time_line[1] = '\0';
}

/* --sizes: proof is the default; tuned prints its cost model, no bound,
 * in words, JSON and a trace's header; a strategy without it refuses it. */
START_TEST(test_sizes_cli)
{
	static char plain[1 << 16], given[1 << 16];
	char trace[64];
	json_t *root;

	ck_assert_int_eq(cli("--strategy", "caseI", "-n", "64", "-d", "4", "-g", "2", "-M", "400", NULL), 0);
	report_untimed(plain, sizeof(plain));
	HAS(plain, "[I/O / upper = ");
	ck_assert_int_eq(cli("--strategy", "caseI", "-n", "64", "-d", "4", "-g", "2", "-M", "400",
			     "--sizes", "proof", NULL), 0);
	report_untimed(given, sizeof(given));
	ck_assert_str_eq(given, plain);
	temp_path(trace, sizeof(trace), ".jsonl");
	ck_assert_int_eq(cli("--strategy", "caseI", "-n", "64", "-d", "4", "-g", "2", "-M", "400",
			     "--sizes", "tuned", "--trace", trace, NULL), 0);
	HAS(out_text, "whole rows, tuned sizes: ");
	HAS(out_text, "(cost model agrees)");
	HAS(out_text, "upper bound            none: tuned sizes, the cost model is the plan's figure");
	ck_assert_ptr_null(strstr(out_text, "I/O / upper"));
	ck_assert_int_eq(cli("validate", trace, NULL), 0);
	HAS(out_text, "tuned sizes");
	HAS(out_text, "(cost model agrees)");
	ck_assert_ptr_null(strstr(out_text, "I/O / upper"));
	unlink(trace);
	ck_assert_int_eq(cli("--strategy", "caseI", "-n", "64", "-d", "4", "-g", "2", "-M", "400",
			     "--sizes", "tuned", "--json", NULL), 0);
	root = out_json();
	ck_assert_str_eq(json_string_value(json_object_get(root, "sizes")), "tuned");
	ck_assert_ptr_null(json_object_get(json_object_get(root, "bounds"), "upper"));
	ck_assert_ptr_null(json_object_get(json_object_get(root, "ratios"), "io_to_upper"));
	ck_assert_int_eq(json_integer_value(json_object_get(root, "io")),
			 json_integer_value(json_object_get(root, "predicted_io")));
	json_decref(root);
	ck_assert_int_eq(cli("--strategy", "caseI", "-n", "64", "-d", "4", "-g", "2", "-M", "400",
			     "--sizes", "tuned", "--dry-run", NULL), 0);
	HAS(out_text, "upper bound            none: tuned sizes");
	ck_assert_int_eq(cli("--strategy", "naive", "-n", "8", "-d", "4", "-g", "2", "-M", "400",
			     "--sizes", "tuned", NULL), 2);
	HAS(err_text, "pebblesim: --sizes is an option of generic, caseI, keylemma, subtile and matmul, not of naive\n");
	ck_assert_int_eq(cli("--strategy", "generic", "-n", "8", "-d", "4", "-g", "2", "-M", "400",
			     "--sizes", "tuned", "--tiles", "tall", NULL), 2);
	HAS(err_text, "pebblesim: --tiles names the lemma's sizes; --sizes tuned chooses them: give one of the two");
	ck_assert_int_eq(cli("--strategy", "caseI", "-n", "8", "-d", "4", "-g", "2", "-M", "400",
			     "--sizes", "best", NULL), 2);
	HAS(err_text, "pebblesim: unknown sizes 'best' for caseI: proof or tuned");
	ck_assert_int_eq(cli("--dag", "examples/tree.graphml", "-M", "5", "--sizes", "tuned", NULL), 2);
	HAS(err_text, "--sizes");
}
END_TEST

/* Runs with values from the command line (docs/VALUES.md). */
START_TEST(test_values_cli)
{
	char q[64], k[64], v[64], out[64], trace[64];
	double x[8 * 4 + 1], *back;
	uint64_t rows, cols;
	struct ps_error err;
	json_t *root;

	temp_path(q, sizeof(q), ".npy");
	temp_path(k, sizeof(k), ".npy");
	temp_path(v, sizeof(v), ".npy");
	temp_path(out, sizeof(out), ".npy");
	temp_path(trace, sizeof(trace), ".jsonl");
	unlink(out);
	for (int t = 0; t < 33; t++)
		x[t] = 0.1 * (t % 7) - 0.3;
	write_npy(q, x, 8, 4);
	write_npy(k, x + 1, 8, 4);
	/* every option refused by name where it does not apply */
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--seed", "3", NULL), 2);
	HAS(err_text, "option '--seed' applies only with --values");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--output", out, NULL), 2);
	HAS(err_text, "option '--output' applies only with --values");
	ck_assert_int_eq(cli("run", "--dag", "examples/tree.graphml", "-M", "5", "--values", NULL), 2);
	HAS(err_text, "option '--values' does not apply to run --dag");
	ck_assert_int_eq(cli("compare", "-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", NULL), 2);
	HAS(err_text, "option '--values' does not apply to compare");
	ck_assert_int_eq(cli("sweep", "-g", "1:2", "-n", "8", "-d", "4", "-M", "60", "--values", "--q", q, NULL), 2);
	HAS(err_text, "option '--q' does not apply to sweep");
	ck_assert_int_eq(cli("sweep", "-g", "1:2", "-n", "8", "-d", "4", "-M", "60", "--entry-bound", "2", NULL), 2);
	HAS(err_text, "option '--entry-bound' applies only with --values");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--entry-bound", "-1", NULL), 2);
	HAS(err_text, "expected a finite number > 0");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--q", q, NULL), 2);
	HAS(err_text, "--q, --k and --v go together");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--dry-run", NULL), 2);
	/* bad .npy files exit 2 with the reason: shape, dtype, truncated, a lying header */
	write_npy(v, x, 8, 3);
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--q", q, "--k", k,
			     "--v", v, NULL), 2);
	HAS(err_text, "is not (8, 4)");
	test_write_npy_raw(v, "{'descr': '<i8', 'fortran_order': False, 'shape': (8, 4), }\n", x, 256);
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--q", q, "--k", k,
			     "--v", v, NULL), 2);
	HAS(err_text, "dtype '<i8' is not float64");
	test_write_npy_raw(v, "{'descr': '<f8', 'fortran_order': False, 'shape': (8, 4), }\n", x, 248);
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--q", q, "--k", k,
			     "--v", v, NULL), 2);
	HAS(err_text, "truncated");
	test_write_npy_raw(v, "{'descr': '<f8', 'fortran_order': False, 'shape': (8, 4), }\n", x, 256);
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--q", q, "--k", k,
			     "--v", v, NULL), 0);
	test_write_npy_raw(v, "{'descr': '<f8', 'fortran_order': False, 'shape': (8, 5), }\n", x, 256);
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--q", q, "--k", k,
			     "--v", v, NULL), 2);
	HAS(err_text, "is not (8, 4)");
	test_write_npy_raw(v, "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 8), }\n", x, 256);
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--q", q, "--k", k,
			     "--v", v, NULL), 2);
	HAS(err_text, "shape (4, 8) is not (8, 4)");
	{
		FILE *f = fopen(v, "wb");

		fwrite("\x93NUMPY\x01\x00\xf0\x00{'descr'", 1, 17, f);
		fclose(f);
	}
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--q", q, "--k", k,
			     "--v", v, NULL), 2);
	HAS(err_text, "truncated .npy header");
	/* good files: the outputs written, read back, the report names them */
	write_npy(v, x, 8, 4);
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--q", q, "--k", k,
			     "--v", v, "--output", q, NULL), 2);
	HAS(err_text, "is the input");
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--q", q, "--k", k,
			     "--v", v, "--output", "-", NULL), 2);
	ck_assert_int_eq(cli("-n", "8", "-d", "4", "-g", "2", "-M", "60", "--values", "--q", q, "--k", k,
			     "--v", v, "--output", out, "--trace", trace, NULL), 0);
	HAS(out_text, "error vs direct");
	HAS(out_text, "epsilon");
	HAS(out_text, out);
	ck_assert_int_eq(ps_npy_load(out, 8, 4, &back, &rows, &cols, &err), 0);
	ck_assert(isfinite(back[0]) && fabs(back[0]) < 1);
	free(back);
	/* the trace replays to the same outputs, in JSON */
	ck_assert_int_eq(cli("validate", "--values", "--q", q, "--k", k, "--v", v, "--json", trace, NULL), 0);
	root = out_json();
	ck_assert(json_is_real(json_object_get(json_object_get(root, "values"), "error_vs_softmax")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(root, "values"),
									   "inputs"), "q")), q);
	json_decref(root);
	ck_assert_int_eq(cli("validate", "--values", "--output", trace, trace, NULL), 2);
	HAS(err_text, "is the input");
	ck_assert_int_eq(cli("validate", "--values", "--seed", "2", "--q", q, "--k", k, "--v", v, trace, NULL), 2);
	HAS(err_text, "is for random inputs");
	/* the failure rule: exp overflows in the DAG (no running maximum),
	 * the direct softmax does not: exit 1 naming the output and both values */
	ck_assert_int_eq(cli("--attention", "exact", "-n", "4", "-d", "4", "-M", "60", "--values",
			     "--entry-bound", "100", NULL), 1);
	HAS(err_text, "pebblesim: values: the pebbled output A[");
	HAS(err_text, "differs from the direct evaluation");
	HAS(out_text, "FAILED");
	/* odd g, large entries: the normaliser goes negative, with a warning */
	cli("-n", "16", "-d", "4", "-g", "1", "-M", "200", "--values", "--entry-bound", "4", NULL);
	HAS(err_text, "warning: the normaliser D~");
	unlink(q);
	unlink(k);
	unlink(v);
	unlink(out);
	unlink(trace);
}
END_TEST

/* best below flash at one value of the swept parameter, alone with
 * --predict: 1, 0, or -1 where either does not run */
static int below_alone(const char *param, uint64_t value, const char *const *fixed)
{
	char range[64];
	json_t *root, *rows, *row;
	json_int_t io[2] = { -1, -1 };
	size_t k;

	snprintf(range, sizeof(range), "%llu:%llu", (unsigned long long)value,
		 (unsigned long long)value);
	ck_assert_int_eq(cli("sweep", param, range, fixed[0], fixed[1], fixed[2], fixed[3],
			     fixed[4], fixed[5], "--predict", "--strategies", "best,flash", "--json",
			     NULL), 0);
	root = out_json();
	rows = json_object_get(root, "rows");
	json_array_foreach(rows, k, row) {
		json_t *v = json_object_get(row, "io");

		if (json_is_integer(v))
			io[!strcmp(json_string_value(json_object_get(row, "label")), "flash")] =
				json_integer_value(v);
	}
	json_decref(root);
	return io[0] < 0 || io[1] < 0 ? -1 : io[0] < io[1];
}

/* sweep --refine: each end of every interval is below, its outer
 * neighbour not, each run alone with --predict; a d-sweep finds the
 * interval that starts at its first point. */
START_TEST(test_sweep_refine)
{
	static const struct {
		const char *param, *range;
		uint64_t lo, hi;
		const char *fixed[6];
	} sweeps[] = {
		{ "-n", "256:16k:x2", 256, 16384, { "-d", "16", "-g", "3", "-M", "8k" } },
		{ "-d", "4:64:x2", 4, 64, { "-n", "4k", "-g", "3", "-M", "8k" } },
	};
	/* the small grid (sanitizers) refines the n-sweep alone: a d-sweep
	 * up to d = 64 (r = 47,905) takes 41 s of processor in the default
	 * build, and the test runs two and more single points; under ASan
	 * it took more than 100 s (the whole test 7 s on the small grid) */
	const size_t count = test_grid_small() ? 1 : 2;
	unsigned ends = 0;

	for (size_t s = 0; s < count; s++) {
		json_t *root, *cross, *c, *iv;
		size_t k, t;

		ck_assert_int_eq(cli("sweep", sweeps[s].param, sweeps[s].range, sweeps[s].fixed[0],
				     sweeps[s].fixed[1], sweeps[s].fixed[2], sweeps[s].fixed[3],
				     sweeps[s].fixed[4], sweeps[s].fixed[5], "--predict", "--strategies",
				     "best,flash", "--refine", "--json", NULL), 0);
		root = out_json();
		cross = json_object_get(root, "crossovers");
		ck_assert_uint_eq(json_array_size(cross), 1);
		c = json_array_get(cross, 0);
		ck_assert(json_is_true(json_object_get(c, "refined")));
		ck_assert_uint_ge(json_array_size(json_object_get(c, "intervals")), 1);
		json_array_foreach(json_object_get(c, "intervals"), t, iv) {
			uint64_t from = (uint64_t)json_integer_value(json_object_get(iv, "from"));
			uint64_t to = (uint64_t)json_integer_value(json_object_get(iv, "to"));

			ck_assert_int_eq(below_alone(sweeps[s].param, from, sweeps[s].fixed), 1);
			ck_assert_int_eq(below_alone(sweeps[s].param, to, sweeps[s].fixed), 1);
			if (from > sweeps[s].lo)
				ck_assert_int_ne(below_alone(sweeps[s].param, from - 1, sweeps[s].fixed), 1);
			if (to < sweeps[s].hi)
				ck_assert_int_ne(below_alone(sweeps[s].param, to + 1, sweeps[s].fixed), 1);
			ends += (from > sweeps[s].lo) + (to < sweeps[s].hi);
		}
		(void)k;
		json_decref(root);
	}
	/* n's start and d's end at least lie between grid points */
	ck_assert_uint_ge(ends, count);
	/* the d-sweep of the grid alone: [4, 32], not "does not stay below" */
	if (count == 2) {
		ck_assert_int_eq(cli("sweep", "-d", "4:64:x2", "-n", "4k", "-g", "3", "-M", "8k",
				     "--predict", "--strategies", "best,flash", NULL), 0);
		HAS(out_text, "crossover: best moves less than flash for d in [4, 32] (ends on the grid; 4 is an end of the values compared, not a crossing)");
	}
	ck_assert_int_eq(cli("sweep", "--merge", "x.csv", "--refine", NULL), PS_EXIT_USAGE);
}
END_TEST

/* frontier: the least g of the a-priori bound, the interval with its end
 * confirmed by simulation and straddling with --predict alone; the honest
 * answer where no g is within epsilon; its refusals. */
START_TEST(test_frontier)
{
	static const char *const fixed[6] = { "-d", "4", "-g", "2", "-M", "128" };
	json_t *root, *iv, *conf;
	uint64_t from;

	ck_assert_int_eq(cli("frontier", "-n", "4:64:x2", "-d", "4", "-M", "128", "--epsilon", "1e-2",
			     "--entry-bound", "0.5", "--polynomial", "chebyshev", "--json", NULL), 0);
	output_valid_frontier();
	/* --progress: a line per point and per plan of the bisection, on
	 * standard error, and the same answer */
	{
		char *plain = strdup(out_text);

		ck_assert_ptr_nonnull(plain);
		ck_assert_int_eq(cli("frontier", "-n", "4:64:x2", "-d", "4", "-M", "128", "--epsilon", "1e-2",
				     "--entry-bound", "0.5", "--polynomial", "chebyshev", "--json",
				     "--progress", NULL), 0);
		ck_assert_str_eq(out_text, plain);
		HAS(err_text, "pebblesim: sweep: running best at n = 4\n");
		HAS(err_text, "pebblesim: frontier: planned flash at n = ");
		free(plain);
	}
	root = out_json();
	ck_assert_int_eq(json_path_int(root, "polynomial", "g"), 2);
	iv = json_array_get(json_object_get(root, "intervals"), 0);
	ck_assert_ptr_nonnull(iv);
	from = (uint64_t)json_integer_value(json_object_get(iv, "from"));
	ck_assert_int_eq(json_integer_value(json_object_get(iv, "to")), 64);
	ck_assert_int_eq(json_integer_value(json_object_get(iv, "g")), 2);
	conf = json_array_get(json_object_get(root, "confirmations"), 0);
	ck_assert(json_is_true(json_object_get(conf, "simulated")));
	ck_assert_int_eq(json_integer_value(json_object_get(conf, "n")), (json_int_t)from);
	json_decref(root);
	ck_assert_int_eq(below_alone("-n", from, fixed), 1);
	ck_assert_int_eq(below_alone("-n", from - 1, fixed), 0);
	/* decoding's JSON too, a priori and measured (docs/EXACT.md,
	 * "Decoding at equal accuracy") */
	ck_assert_int_eq(cli("frontier", "--causal", "--decode", "8", "-n", "9:64:x2", "-d", "4", "-M",
			     "128", "--epsilon", "1e-2", "--entry-bound", "0.5", "--json", NULL), 0);
	output_valid_frontier();
	ck_assert_int_eq(cli("frontier", "--causal", "--decode", "8", "-n", "9:64:x2", "-d", "4", "-M",
			     "128", "--epsilon", "1e-2", "--bound", "measured", "--json", NULL), 0);
	output_valid_frontier();
	/* the text */
	ck_assert_int_eq(cli("frontier", "-n", "4:64:x2", "-d", "4", "-M", "128", "--epsilon", "1e-2",
			     "--entry-bound", "0.5", "--polynomial", "chebyshev", NULL), 0);
	HAS(out_text, "answer: approximate attention (chebyshev, g = 2, bound <= 0.01) moves less data than FlashAttention for n in [");
	HAS(out_text, "simulated: best");
	/* no g of a fit reaches 1e-6 on [-64, 64] */
	ck_assert_int_eq(cli("frontier", "-n", "1k", "-d", "16", "-M", "8k", "--epsilon", "1e-6",
			     "--entry-bound", "4", "--polynomial", "minimax", NULL), 0);
	HAS(out_text, "no a-priori guarantee");
	ck_assert_int_eq(cli("frontier", "-n", "1k", "-d", "16", "-M", "8k", NULL), PS_EXIT_USAGE);
	HAS(err_text, "--epsilon");
	ck_assert_int_eq(cli("frontier", "-n", "1k", "-d", "16", "-M", "8k", "--epsilon", "1e-3",
			     "--values", NULL), PS_EXIT_USAGE);
}
END_TEST

/* frontier finds the sign changes between grid points, where every n is
 * compared (best below flash at n = 25..30 only, between the grid's 16
 * and 32), and says which n were compared where not all were. */
START_TEST(test_frontier_between_grid)
{
	static const char *const fixed[6] = { "-d", "4", "-g", "6", "-M", "256" };
	json_t *root;

	ck_assert_int_eq(cli("frontier", "-n", "16:4096:x2", "-d", "4", "-M", "256", "--epsilon", "1e-2",
			     "--entry-bound", "1", "--polynomial", "chebyshev", NULL), 0);
	HAS(out_text, "moves less data than FlashAttention for n in [25, 30], [121, 4096] (ends exact on the cost models: below at the end, not below next to it; 4096 is an end of the values compared, not a crossing)\n");
	HAS(out_text, "  examined             every n in [16, 4096], both cost models at each: every sign change is found\n");
	ck_assert_int_eq(below_alone("-n", 24, fixed), 0);
	ck_assert_int_eq(below_alone("-n", 25, fixed), 1);
	ck_assert_int_eq(below_alone("-n", 30, fixed), 1);
	ck_assert_int_eq(below_alone("-n", 31, fixed), 0);
	ck_assert_int_eq(below_alone("-n", 32, fixed), 0);
	ck_assert_int_eq(below_alone("-n", 16, fixed), 0);
	/* up to 2^22 / r values of n from the start; above, the grid's */
	ck_assert_int_eq(cli("frontier", "-n", "16:1M:x4", "-d", "4", "-M", "256", "--epsilon", "1e-2",
			     "--entry-bound", "1", "--polynomial", "chebyshev", NULL), 0);
	HAS(out_text, "for n in [25, 30], [121, 1048576] (");
	HAS(out_text, "  examined             every n in [16, 19987]; above it 3 grid points and 0 more values of n by bisection: an even number of sign changes between neighbouring values that compare alike is not seen\n");
	ck_assert_int_eq(cli("frontier", "-n", "16:1M:x4", "-d", "4", "-M", "256", "--epsilon", "1e-2",
			     "--entry-bound", "1", "--polynomial", "chebyshev", "--json", NULL), 0);
	output_valid_frontier();
	HAS(out_text, "\"intervals\":[{\"from\":25,\"to\":30,\"from_edge\":false,\"to_edge\":false,\"g\":6},{\"from\":121,\"to\":1048576,\"from_edge\":false,\"to_edge\":true,\"g\":6}]");
	root = out_json();
	ck_assert_int_eq(json_path_int(root, "examined", "grid_points_above"), 3);
	ck_assert(json_is_false(json_object_get(json_object_get(root, "examined"), "complete")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(json_object_get(root, "examined"),
									      "every_n"), "to")), 19987);
	json_decref(root);
	/* g = 0, r = 1: at most 2^15 values of n all the same */
	ck_assert_int_eq(cli("frontier", "-n", "16:1G:x4", "-d", "4", "-M", "256", "--epsilon", "2",
			     "--entry-bound", "0.1", NULL), 0);
	HAS(out_text, "least g = 0,");
	HAS(out_text, "  examined             every n in [16, 32783]; above it ");
}
END_TEST

/* The epsilon of a run with values at degree g (random inputs, d 4,
 * entries in [-0.5, 0.5], chebyshev), or of the files q, k, v. */
static double run_epsilon(unsigned g, const char *const files[3])
{
	char degree[8];
	json_t *root;
	double epsilon;

	snprintf(degree, sizeof(degree), "%u", g);
	if (files)
		ck_assert_int_eq(cli("-n", "24", "-d", "4", "-g", degree, "-M", "128", "--strategy", "best",
				     "--values", "--polynomial", "chebyshev", "--q", files[0], "--k", files[1],
				     "--v", files[2], "--json", NULL), 0);
	else
		ck_assert_int_eq(cli("-n", "64", "-d", "4", "-g", degree, "-M", "128", "--strategy", "best",
				     "--values", "--entry-bound", "0.5", "--polynomial", "chebyshev", "--json",
				     NULL), 0);
	root = out_json();
	epsilon = json_real_value(json_object_get(json_object_get(root, "values"), "error_vs_softmax"));
	json_decref(root);
	return epsilon;
}

/* frontier --bound measured: the least g whose measured epsilon is within
 * epsilon, that of a pebbled run at g and not at g - 1, on random inputs
 * and on files; the inputs' options refused without it. */
START_TEST(test_frontier_measured)
{
	char degree[8], q[64], k[64], v[64];
	const char *const fixed[6] = { "-d", "4", "-g", degree, "-M", "128" };
	const char *const files[3] = { q, k, v };
	double x[24 * 4], measured;
	json_t *root, *iv;
	json_int_t g, from;

	ck_assert_int_eq(cli("frontier", "-n", "4:64:x2", "-d", "4", "-M", "128", "--epsilon", "1e-4",
			     "--entry-bound", "0.5", "--polynomial", "chebyshev", "--bound", "measured",
			     "--json", NULL), 0);
	output_valid_frontier();
	root = out_json();
	g = json_path_int(root, "polynomial", "g");
	measured = json_real_value(json_object_get(json_object_get(root, "measured"), "epsilon"));
	ck_assert_str_eq(json_string_value(json_object_get(root, "bound")), "measured");
	ck_assert_int_eq(json_path_int(root, "measured", "n"), 64);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(root, "points"), 0),
							   "g_by")), "measured");
	iv = json_array_get(json_object_get(root, "intervals"), 0);
	ck_assert_ptr_nonnull(iv);
	from = json_integer_value(json_object_get(iv, "from"));
	ck_assert_int_eq(json_integer_value(json_object_get(iv, "g")), g);
	json_decref(root);
	/* the a-priori bound needs g = 3 here; the measured one no more */
	ck_assert_int_ge(g, 1);
	ck_assert_int_le(g, 3);
	ck_assert(measured <= 1e-4);
	ck_assert_double_eq_tol(run_epsilon((unsigned)g, NULL), measured, 1e-12);
	ck_assert(run_epsilon((unsigned)g - 1, NULL) > 1e-4);
	snprintf(degree, sizeof(degree), "%d", (int)g);
	ck_assert_int_eq(below_alone("-n", (uint64_t)from, fixed), 1);
	ck_assert_int_eq(below_alone("-n", (uint64_t)from - 1, fixed), 0);
	ck_assert_int_eq(cli("frontier", "-n", "4:64:x2", "-d", "4", "-M", "128", "--epsilon", "1e-4",
			     "--entry-bound", "0.5", "--polynomial", "chebyshev", "--bound", "measured", NULL), 0);
	HAS(out_text, "inputs                 random: n = 64 rows, entries uniform in [-0.5, 0.5], seed 1");
	HAS(out_text, "measured epsilon");
	HAS(out_text, "on these inputs) moves less data than FlashAttention for n in [");
	/* files: their 24 rows */
	temp_path(q, sizeof(q), ".npy");
	temp_path(k, sizeof(k), ".npy");
	temp_path(v, sizeof(v), ".npy");
	for (int t = 0; t < 24 * 4; t++)
		x[t] = 0.9 * sin(0.7 * t + 0.3);
	write_npy(q, x, 24, 4);
	for (int t = 0; t < 24 * 4; t++)
		x[t] = 0.8 * cos(1.3 * t);
	write_npy(k, x, 24, 4);
	for (int t = 0; t < 24 * 4; t++)
		x[t] = (t % 5) - 2.0;
	write_npy(v, x, 24, 4);
	ck_assert_int_eq(cli("frontier", "-n", "4:64:x2", "-d", "4", "-M", "128", "--epsilon", "1e-3",
			     "--polynomial", "chebyshev", "--bound", "measured", "--q", q, "--k", k, "--v", v,
			     "--json", NULL), 0);
	output_valid_frontier();
	root = out_json();
	g = json_path_int(root, "polynomial", "g");
	measured = json_real_value(json_object_get(json_object_get(root, "measured"), "epsilon"));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(root, "measured"), "inputs")), "files");
	ck_assert_int_eq(json_path_int(root, "measured", "n"), 24);
	json_decref(root);
	ck_assert_int_ge(g, 1);
	ck_assert(measured <= 1e-3);
	ck_assert_double_eq_tol(run_epsilon((unsigned)g, files), measured, 1e-12);
	ck_assert(run_epsilon((unsigned)g - 1, files) > 1e-3);
	/* no g of a fit reaches 1e-300 */
	ck_assert_int_eq(cli("frontier", "-n", "64", "-d", "4", "-M", "128", "--epsilon", "1e-300",
			     "--polynomial", "chebyshev", "--bound", "measured", NULL), 0);
	HAS(out_text, "does not reach epsilon <= 1e-300 on these inputs at any g up to 30");
	/* refusals, by name */
	ck_assert_int_eq(cli("frontier", "-n", "64", "-d", "4", "-M", "128", "--epsilon", "1e-3",
			     "--seed", "2", NULL), PS_EXIT_USAGE);
	HAS(err_text, "option '--seed' gives the inputs of --bound measured");
	ck_assert_int_eq(cli("frontier", "-n", "64", "-d", "4", "-M", "128", "--epsilon", "1e-3",
			     "--bound", "measured", "--q", q, NULL), PS_EXIT_USAGE);
	HAS(err_text, "--q, --k and --v go together");
	ck_assert_int_eq(cli("frontier", "-n", "64", "-d", "4", "-M", "128", "--epsilon", "1e-3",
			     "--bound", "measured", "--q", q, "--k", k, "--v", v, "--entry-bound", "2", NULL),
			 PS_EXIT_USAGE);
	HAS(err_text, "option '--entry-bound' is for random inputs");
	ck_assert_int_eq(cli("frontier", "-n", "64", "-d", "5", "-M", "128", "--epsilon", "1e-3",
			     "--bound", "measured", "--q", q, "--k", k, "--v", v, NULL), PS_EXIT_USAGE);
	ck_assert_int_eq(cli("frontier", "-n", "64", "-d", "4", "-M", "128", "--epsilon", "1e-3",
			     "--bound", "worst", NULL), PS_EXIT_USAGE);
	HAS(err_text, "unknown --bound 'worst': a-priori or measured");
	unlink(q);
	unlink(k);
	unlink(v);
}
END_TEST

Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("main");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_usage_errors);
	tcase_add_test(tc, test_did_you_mean);
	tcase_add_test(tc, test_too_small_and_too_large);
	tcase_add_test(tc, test_text_report);
	tcase_add_test(tc, test_colpass_report);
	tcase_add_test(tc, test_json_report);
	tcase_add_test(tc, test_cases_and_options);
	tcase_add_test(tc, test_compare);
	tcase_add_test(tc, test_compare_holds_back_resident);
	tcase_add_test(tc, test_validate_dag_and_dry_run);
	tcase_add_test(tc, test_validate_against_the_headers_plan);
	tcase_add_test(tc, test_list_help_version);
	tcase_add_test(tc, test_list_columns_and_docdir);
	tcase_add_test(tc, test_front_end_apart);
	tcase_add_test(tc, test_igraph_on_demand);
	tcase_add_test(tc, test_binary_write_limit);
	tcase_add_test(tc, test_gnu_habits);
	tcase_add_test(tc, test_strict_options);
	tcase_add_test(tc, test_help_only_by_flag);
	tcase_add_test(tc, test_size_suffixes);
	tcase_add_test(tc, test_dag_files_round_trip);
	tcase_add_test(tc, test_trace_limit);
	tcase_add_test(tc, test_json_schema);
	tcase_add_test(tc, test_compare_rows_carry_parameters);
	tcase_add_test(tc, test_help_teaches);
	tcase_add_test(tc, test_exact_attention_cli);
	tcase_add_test(tc, test_theorem_labels);
	tcase_add_test(tc, test_crossover_claims);
	tcase_add_test(tc, test_sweep_cli);
	tcase_add_test(tc, test_sweep_refine);
	tcase_add_test(tc, test_values_cli);
	tcase_add_test(tc, test_sizes_cli);
	suite_add_tcase(s, tc);
	/* the frontier's own case, to be run alone (CK_RUN_CASE=frontier) */
	tc = tcase_create("frontier");
	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_frontier);
	tcase_add_test(tc, test_frontier_measured);
	tcase_add_test(tc, test_frontier_between_grid);
	suite_add_tcase(s, tc);
	return s;
}
