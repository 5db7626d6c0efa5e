/* What a researcher scripts with: the man page and bash completion from
 * the command table, compare narrowed (--strategies, --predict, -j),
 * progress lines off a terminal, sweep --merge's checks, -V, and -n and
 * -d from the .npy shapes. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../src/cli/cli.h"
#include "pebblesim/run.h"
#include "tests.h"

static char out_text[1 << 18], err_text[1 << 15];
static char dir[64], cwd[4096]; /* a fresh directory per test, the runner's */

static void setup(void)
{
	test_dir_make(dir, sizeof(dir), "tools");
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
}

static void teardown(void)
{
	ck_assert_int_eq(chdir(cwd), 0);
	test_dir_remove(dir);
}

/* Runs pebblesim with the NULL-terminated arguments; returns the status. */
#define cli(...) test_cli_capture(out_text, sizeof(out_text), err_text, sizeof(err_text), __VA_ARGS__)

/* The page's text of a command: from its .SS to the next section. */
static const char *command_section(const char *page, const char *name, size_t *len)
{
	char head[64];
	const char *at, *end;

	snprintf(head, sizeof(head), ".SS \"%s\"\n", name);
	at = strstr(page, head);
	ck_assert_msg(at != NULL, "no section for %s in the man page", name);
	end = strstr(at + 1, "\n.S");
	*len = end ? (size_t)(end - at) : strlen(at);
	return at;
}

/* "\fB\-\-strategy\fR" or "\fB\-n\fR": the option as the page writes it. */
static void man_name(const struct cli_option *o, char *buf, size_t len)
{
	if (o->long_name) {
		size_t used = (size_t)snprintf(buf, len, "\\fB\\-\\-");

		for (const char *c = o->long_name; *c && used + 3 < len; c++) {
			if (*c == '-')
				buf[used++] = '\\';
			buf[used++] = *c;
		}
		snprintf(buf + used, len - used, "\\fR");
	} else {
		snprintf(buf, len, "\\fB\\-%c\\fR", o->short_name);
	}
}

START_TEST(test_man_page_has_every_option)
{
	static const char *const sections[] = {
		".SH NAME\n", ".SH SYNOPSIS\n", ".SH COMMANDS\n", ".SH EXIT STATUS\n",
		".SH FILES\n", ".SH ENVIRONMENT\n", ".SH EXAMPLES\n", ".SH SEE ALSO\n",
	};
	size_t options = 0;

	ck_assert_int_eq(cli("__man", NULL), 0);
	for (size_t k = 0; k < sizeof(sections) / sizeof(sections[0]); k++)
		HAS(out_text, sections[k]);
	HAS(out_text, "\\fBpebblesim\\fR \\fB\\-\\-version\\fR | \\fB\\-V\\fR");
	for (size_t c = 0; c < cli_command_count; c++) {
		size_t len;
		const char *at = command_section(out_text, cli_commands[c].name, &len);

		for (const struct cli_option *o = cli_commands[c].options; o->help; o++) {
			char name[64], *section = strndup(at, len);

			man_name(o, name, sizeof(name));
			ck_assert_msg(strstr(section, name) != NULL,
				      "the man page's section of %s lacks %s", cli_commands[c].name, name);
			free(section);
			options++;
		}
	}
	/* sweep's own options, the ones the top-level --help never listed */
	ck_assert_uint_gt(options, cli_command_count);
	{
		size_t len;
		const char *at = command_section(out_text, "sweep", &len);
		char *sweep = strndup(at, len);

		HAS(sweep, "\\fB\\-\\-shard\\fR \\fIK/N\\fR");
		HAS(sweep, "\\fB\\-\\-partial\\fR");
		free(sweep);
	}
	/* no line of text starts as a roff request by accident */
	for (const char *line = out_text; line; line = strchr(line, '\n')) {
		line += *line == '\n';
		if (*line == '.')
			ck_assert_msg(strchr("STPfnI\\", line[1]) != NULL && line[1],
				      "a stray request: %.40s", line);
	}
}
END_TEST

/* The words the completion offers for the line (the last word being
 * completed), from the script in the source tree and the built binary. */
static void complete(char *buf, size_t len, const char *line)
{
	const char *bin = getenv("PEBBLESIM_BIN");
	char cmd[8192];
	FILE *p;
	size_t got;

	snprintf(cmd, sizeof(cmd),
		 "bash -c '. \"$0\"; COMP_WORDS=(\"$1\" %s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
		 "_pebblesim; printf \"%%s \" \"${COMPREPLY[@]}\"' '%s/scripts/pebblesim.bash-completion' '%s'",
		 line, cwd, bin);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	got = fread(buf, 1, len - 1, p);
	buf[got] = '\0';
	ck_assert_int_eq(pclose(p), 0);
}

START_TEST(test_completion_from_the_tables)
{
	char words[8192], want[8192] = "";
	const struct cli_command *sweep = NULL;

	if (!getenv("PEBBLESIM_BIN"))
		return; /* the completion runs the binary */
	for (size_t c = 0; c < cli_command_count; c++)
		if (!strcmp(cli_commands[c].name, "sweep"))
			sweep = &cli_commands[c];
	ck_assert_ptr_nonnull(sweep);
	/* sweep --<TAB>: exactly sweep's table, in its order */
	for (const struct cli_option *o = sweep->options; o->help; o++)
		if (o->long_name)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "--%s ", o->long_name);
	complete(words, sizeof(words), "sweep --");
	ck_assert_str_eq(words, want);
	ck_assert_ptr_null(strstr(words, "--strategy "));
	ck_assert_ptr_null(strstr(words, "--opt "));
	/* a line, and the words offered: options, values, file names */
	static const struct {
		const char *line, *words;
	} cases[] = {
		{ "sweep --p", "--predict --plot --plot-script --partial --progress --polynomial --plugin " },
		{ "sweep --strategies key", "keylemma " },
		{ "sweep --strategies flash,ca", "flash,case flash,caseI flash,causal-colpass " },
		{ "--strategy = naive-b", "naive-belady " },
		{ "compare --strategies be", "belady " },
		{ "dag --format g", "graphml gml " },
		{ "run --layout rect", "rect-dup rect-save " },
		{ "run --tiles t", "tall " },
		{ "run --sizes \"\"", "proof tuned " },
		{ "sweep --polynomial \"\"", "taylor chebyshev minimax " },
		{ "sweep -n \"\"", " " }, /* printf's one empty word: nothing offered */
		{ "sweep --csv shard", "shard-1.csv " },
		{ "sweep --merge sh", "shard-1.csv " },
		{ "help sw", "sweep " },
	};

	fclose(fopen("shard-1.csv", "w"));
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		complete(words, sizeof(words), cases[k].line);
		ck_assert_msg(!strcmp(words, cases[k].words), "completing '%s': '%s', not '%s'",
			      cases[k].line, words, cases[k].words);
	}
	/* the values of every option the table has offered come back */
	ck_assert_int_eq(cli("__complete", "values", "sweep", "--bogus", NULL), 0);
	ck_assert_str_eq(out_text, "__flag\n");
	ck_assert_int_eq(cli("__complete", "values", "run", "--trace", NULL), 0);
	ck_assert_str_eq(out_text, "__files\n");
	ck_assert_int_eq(cli("__complete", "bogus", NULL), 2);
}
END_TEST

/* compare's rows as JSON: strategy(/sizes) -> the row. */
static json_t *compare_json(void)
{
	json_error_t jerr;
	json_t *rows = json_loads(out_text, 0, &jerr);

	ck_assert_msg(rows != NULL, "%s", jerr.text);
	return rows;
}

/* Both rows of the proof's sizes (no "sizes"), or both tuned. */
static bool same_sizes(const json_t *x, const json_t *y)
{
	return (!x && !y) || (x && y && json_equal(x, y));
}

START_TEST(test_compare_narrowed)
{
	json_t *rows, *serial, *row;
	size_t k;

	/* --strategies: their rows only, a tiling's tuned row with it */
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--strategies", "generic,colpass", "--json", NULL), 0);
	rows = compare_json();
	ck_assert_uint_eq(json_array_size(rows), 3);
	json_array_foreach(rows, k, row) {
		const char *name = json_string_value(json_object_get(row, "strategy"));

		ck_assert_msg(!strcmp(name, "generic") || !strcmp(name, "colpass"), "%s", name);
	}
	/* -j 2: the counts of -j 1 */
	serial = rows;
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--strategies", "generic,colpass", "--json", "-j", "2", NULL), 0);
	rows = compare_json();
	ck_assert_uint_eq(json_array_size(rows), json_array_size(serial));
	json_array_foreach(rows, k, row) {
		json_t *one = json_array_get(serial, k);

		ck_assert_str_eq(json_string_value(json_object_get(row, "strategy")),
				 json_string_value(json_object_get(one, "strategy")));
		ck_assert_int_eq(json_integer_value(json_object_get(row, "loads")),
				 json_integer_value(json_object_get(one, "loads")));
		ck_assert_int_eq(json_integer_value(json_object_get(row, "saves")),
				 json_integer_value(json_object_get(one, "saves")));
		ck_assert(json_is_true(json_object_get(row, "valid")));
	}
	json_decref(rows);
	/* --predict: the cost models' counts, equal to the engine's here */
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--strategies", "generic,colpass,naive", "--json", "--predict", NULL), 0);
	rows = compare_json();
	json_array_foreach(rows, k, row) {
		const char *name = json_string_value(json_object_get(row, "strategy"));
		json_t *same = NULL, *s;
		size_t q;

		if (!strcmp(name, "naive")) {
			ck_assert(json_is_false(json_object_get(row, "applies")));
			HAS(json_string_value(json_object_get(row, "why_not")), "no cost model");
			continue;
		}
		ck_assert(json_is_false(json_object_get(row, "simulated")));
		ck_assert_ptr_null(json_object_get(row, "valid"));
		json_array_foreach(serial, q, s)
			if (!strcmp(json_string_value(json_object_get(s, "strategy")), name) &&
			    same_sizes(json_object_get(s, "sizes"), json_object_get(row, "sizes")))
				same = s;
		ck_assert_ptr_nonnull(same);
		ck_assert_int_eq(json_integer_value(json_object_get(row, "io")),
				 json_integer_value(json_object_get(same, "io")));
	}
	json_decref(rows);
	json_decref(serial);
	/* refused by name */
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--strategies", "generic,nope", NULL), 2);
	HAS(err_text, "pebblesim: unknown strategy 'nope' in --strategies: compare's rows of the attention DAG are generic, caseI");
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--strategies", "flash", NULL), 2);
	HAS(err_text, "no row for 'flash' in --strategies");
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--strategies", "best", NULL), 2);
	ck_assert_int_eq(cli("compare", "--dag", "x.graphml", "-M", "4", "--predict", NULL), 2);
	HAS(err_text, "--predict does not apply to compare --dag");
	/* the text table says which rows are the cost model's */
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--strategies", "colpass", "--predict", NULL), 0);
	HAS(out_text, "\ncolpass ");
	ck_assert_ptr_nonnull(strstr(strstr(out_text, "\ncolpass "), " model "));
}
END_TEST

START_TEST(test_progress_lines)
{
	struct ps_progress p;
	FILE *f = tmpfile();
	char text[512];

	/* off a terminal: whole lines, the run named, every 10 s */
	ck_assert(ps_progress_lines(f));
	ps_progress_init(&p, f, 1000000);
	ck_assert(p.lines);
	p.label = "keylemma at n = 4096, d = 16, g = 3, M = 8192";
	p.start -= 3.0;
	p.last -= 3.0;
	ps_progress_step(&p, 250000, 200000);
	ps_progress_step(&p, 500000, 200000); /* within 10 s: no line */
	ps_progress_end(&p);
	test_slurp(f, text, sizeof(text));
	HAS(text, "pebblesim: keylemma at n = 4096, d = 16, g = 3, M = 8192: 250000 of 1000000 moves validated (25%)");
	ck_assert_ptr_null(strchr(text, '\r'));
	ck_assert_ptr_null(strstr(text, "500000 of"));
	/* compare names each row as it starts; not without --progress */
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--strategies", "generic", "--progress", NULL), 0);
	HAS(err_text, "pebblesim: compare: generic at n = 64, d = 4, g = 2, M = 100\n");
	HAS(err_text, "pebblesim: compare: generic/tuned at n = 64, d = 4, g = 2, M = 100\n");
	ck_assert_int_eq(cli("compare", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
			     "--strategies", "generic", NULL), 0);
	ck_assert_ptr_null(strstr(err_text, "pebblesim: compare:"));
	/* sweep: each run as it starts, and as it is done */
	ck_assert_int_eq(cli("sweep", "-n", "8:16:x2", "-d", "4", "-g", "2", "-M", "200",
			     "--strategies", "generic", "-j", "1", "--progress", NULL), 0);
	HAS(err_text, "pebblesim: sweep: running generic at n = 16\n");
	HAS(err_text, "pebblesim: sweep: 2 of 2 runs done (generic at n = 16,");
	/* --progress is an option of the commands that run long */
	ck_assert_int_eq(cli("list", "--progress", NULL), 2);
	HAS(err_text, "option '--progress' does not apply to list");
}
END_TEST

/* Writes one shard (k of n, 0 for the whole) of a small sweep as CSV. */
static void shard(const char *path, const char *d, int k, int n)
{
	char spec[16];

	snprintf(spec, sizeof(spec), "%d/%d", k, n);
	if (n)
		ck_assert_int_eq(cli("sweep", "-n", "8:64:x2", "-d", d, "-g", "2", "-M", "200",
				     "--strategies", "generic,flash", "--predict", "--shard", spec,
				     "--csv", path, NULL), 0);
	else
		ck_assert_int_eq(cli("sweep", "-n", "8:64:x2", "-d", d, "-g", "2", "-M", "200",
				     "--strategies", "generic,flash", "--predict", "--csv", path, NULL), 0);
}

/* A file's text without its seconds column (the 15th). */
static void rows_of(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	size_t used = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) && used + sizeof(line) < len) {
		char *c = line;

		for (int comma = 0; *c && comma < 14; c++)
			comma += *c == ',';
		if (line[0] != '#' && *c) {
			char *end = strchr(c, ',');

			memmove(c, end ? end + 1 : c, strlen(end ? end + 1 : c) + 1);
		}
		used += (size_t)snprintf(buf + used, len - used, "%s", line);
	}
	fclose(f);
}

START_TEST(test_merge_checks)
{
	static char whole[1 << 14], merged[1 << 14];
	FILE *f;

	for (int k = 1; k <= 3; k++) {
		char path[32];

		snprintf(path, sizeof(path), "s%d.csv", k);
		shard(path, "4", k, 3);
	}
	shard("whole.csv", "4", 0, 0);
	shard("other3.csv", "8", 3, 3);
	/* the CSV records its sweep on its first line */
	rows_of("s2.csv", whole, sizeof(whole));
	HAS(whole, "# pebblesim sweep: param=n range=8:64:x2 d=4 g=2 M=200 normalize=true strategies=generic,flash predict=true values=false shard=2/3\ndag,n,d");
	/* all three: the whole sweep, but the seconds */
	ck_assert_int_eq(cli("sweep", "--merge", "s3.csv", "s1.csv", "s2.csv", "--csv", "merged.csv", NULL), 0);
	rows_of("merged.csv", merged, sizeof(merged));
	rows_of("whole.csv", whole, sizeof(whole));
	ck_assert_str_eq(merged, whole);
	/* a shard missing, a shard twice, another sweep, a point twice */
	ck_assert_int_eq(cli("sweep", "--merge", "s1.csv", "s2.csv", NULL), 2);
	HAS(err_text, "pebblesim: shard 3/3 of the sweep is missing: merge it too, or --partial for a partial merge");
	ck_assert_int_eq(cli("sweep", "--merge", "s1.csv", "s2.csv", "s2.csv", "s3.csv", NULL), 2);
	HAS(err_text, "pebblesim: shard 2/3 is given twice: s2.csv and s2.csv");
	ck_assert_int_eq(cli("sweep", "--merge", "s1.csv", "s2.csv", "other3.csv", NULL), 2);
	HAS(err_text, "pebblesim: s1.csv and other3.csv are different sweeps: 'd=4' against 'd=8'");
	ck_assert_int_eq(cli("sweep", "--merge", "s1.csv", "whole.csv", NULL), 2);
	HAS(err_text, "split the sweep differently: 3 shards against 1");
	ck_assert_int_eq(cli("sweep", "--merge", "merged.csv", "merged.csv", NULL), 2);
	HAS(err_text, "the point n = 8 of generic is in more than one row");
	/* --partial: intended, and recorded */
	ck_assert_int_eq(cli("sweep", "--merge", "s1.csv", "s2.csv", "--partial", "--csv", "part.csv", NULL), 0);
	rows_of("part.csv", merged, sizeof(merged));
	HAS(merged, "values=false shard=partial\n");
	ck_assert_int_eq(cli("sweep", "--merge", "part.csv", "s3.csv", NULL), 2);
	HAS(err_text, "part.csv is a partial merge: --partial merges it again");
	/* and merged with the shard it lacked, the whole sweep again */
	ck_assert_int_eq(cli("sweep", "--merge", "part.csv", "s3.csv", "--partial", "--csv", "again.csv", NULL), 0);
	rows_of("again.csv", merged, sizeof(merged));
	HAS(merged, "values=false shard=partial\n");
	ck_assert_str_eq(strchr(merged, '\n'), strchr(whole, '\n'));
	ck_assert_int_eq(cli("sweep", "--merge", "part.csv", "s1.csv", "--partial", NULL), 2);
	HAS(err_text, "the point n = 8 of generic is in more than one row");
	ck_assert_int_eq(cli("sweep", "-n", "8:64:x2", "-d", "4", "-g", "2", "-M", "200", "--partial", NULL), 2);
	HAS(err_text, "--partial applies only with --merge");
	/* a CSV that records no sweep: alone, or with --partial */
	f = fopen("s1.csv", "r");
	ck_assert_ptr_nonnull(f);
	test_slurp(f, merged, sizeof(merged));
	f = fopen("old.csv", "w");
	ck_assert_ptr_nonnull(f);
	fputs(strchr(merged, '\n') + 1, f);
	fclose(f);
	ck_assert_int_eq(cli("sweep", "--merge", "old.csv", NULL), 0);
	ck_assert_int_eq(cli("sweep", "--merge", "old.csv", "s2.csv", NULL), 2);
	HAS(err_text, "old.csv records no sweep");
	/* a damaged identity line is refused with its line */
	f = fopen("bad.csv", "w");
	fputs("# pebblesim sweep: param=n shard=4/3\n", f);
	fclose(f);
	ck_assert_int_eq(cli("sweep", "--merge", "bad.csv", NULL), 2);
	HAS(err_text, "bad.csv:1: not a sweep's identity");
}
END_TEST

START_TEST(test_version_and_shapes)
{
	char version[256];
	double q[8 * 3], k5[8 * 4];

	ck_assert_int_eq(cli("--version", NULL), 0);
	ck_assert_uint_lt(strlen(out_text), sizeof(version));
	memcpy(version, out_text, strlen(out_text) + 1);
	ck_assert_int_eq(cli("-V", NULL), 0);
	ck_assert_str_eq(out_text, version);
	HAS(version, PS_VERSION);
	/* -n and -d from the shapes of --q, --k and --v */
	for (size_t k = 0; k < 8 * 3; k++)
		q[k] = (double)k / 24.0 - 0.5;
	for (size_t k = 0; k < 8 * 4; k++)
		k5[k] = 0.25;
	test_write_npy_raw("q.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (8, 3), }\n", q, sizeof(q));
	test_write_npy_raw("k4.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (8, 4), }\n", k5, sizeof(k5));
	ck_assert_int_eq(cli("--values", "--q", "q.npy", "--k", "q.npy", "--v", "q.npy", "-g", "2",
			     "-M", "200", "--json", NULL), 0);
	HAS(out_text, "\"n\":8");
	HAS(out_text, "\"d\":3");
	ck_assert_int_eq(cli("--values", "--q", "q.npy", "--k", "k4.npy", "--v", "q.npy", "-g", "2",
			     "-M", "200", NULL), 2);
	HAS(err_text, "pebblesim: k4.npy: shape (8, 4) is not (8, 3), n x d");
	ck_assert_int_eq(cli("--values", "--q", "q.npy", "--k", "q.npy", "--v", "q.npy", "-g", "2",
			     "-M", "200", "-n", "16", NULL), 2);
	HAS(err_text, "pebblesim: -n 16, but --q 'q.npy' has 8 rows (n)");
	ck_assert_int_eq(cli("--values", "--q", "q.npy", "--k", "q.npy", "--v", "q.npy", "-g", "2",
			     "-M", "200", "-d", "4", NULL), 2);
	HAS(err_text, "pebblesim: -d 4, but --q 'q.npy' has 3 columns (d)");
}
END_TEST

Suite *tools_suite(void)
{
	Suite *s = suite_create("tools");
	TCase *tc = tcase_create("main");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_man_page_has_every_option);
	tcase_add_test(tc, test_completion_from_the_tables);
	tcase_add_test(tc, test_compare_narrowed);
	tcase_add_test(tc, test_progress_lines);
	tcase_add_test(tc, test_merge_checks);
	tcase_add_test(tc, test_version_and_shapes);
	suite_add_tcase(s, tc);
	return s;
}
