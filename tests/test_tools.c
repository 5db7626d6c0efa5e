/* What a researcher scripts with: the man page and bash completion from
 * the command table, compare narrowed (--strategies, --predict, -j),
 * progress lines off a terminal, sweep --merge's checks, -V, and -n and
 * -d from the .npy shapes. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "../src/cli/cli.h"
#include "pebblesim/run.h"
#include "pebblesim/sweep.h"
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
		/* the files of an option's or the command's extension, and directories */
		{ "run --plugin ext-", "ext-dir ext-2.so " },
		{ "validate ext-", "ext-dir ext-3.jsonl " },
		{ "view ext-", "ext-dir ext-3.jsonl " },
		{ "run --trace ext-3", "ext-3.jsonl " },
	};

	fclose(fopen("shard-1.csv", "w"));
	fclose(fopen("ext-2.so", "w"));
	fclose(fopen("ext-3.jsonl", "w"));
	ck_assert(mkdir("ext-dir", 0700) == 0 || errno == EEXIST);
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
	ck_assert_int_eq(cli("__complete", "values", "run", "--plugin", NULL), 0);
	ck_assert_str_eq(out_text, "__files .so\n");
	ck_assert_int_eq(cli("__complete", "operands", "validate", NULL), 0);
	ck_assert_str_eq(out_text, "__files .jsonl\n");
	ck_assert_int_eq(cli("__complete", "bogus", NULL), 2);
	{
		/* the table as JSON (the Python module's signatures): sweep's
		 * options in its order, --plugin's extension */
		json_error_t jerr;
		json_t *table, *command, *option;
		size_t c, k = 0;

		ck_assert_int_eq(cli("__complete", "table", NULL), 0);
		table = json_loads(out_text, 0, &jerr);
		ck_assert_msg(table != NULL, "%s", jerr.text);
		ck_assert_uint_eq(json_array_size(table), cli_command_count);
		json_array_foreach(table, c, command) {
			if (strcmp(json_string_value(json_object_get(command, "name")), "sweep"))
				continue;
			json_array_foreach(json_object_get(command, "options"), k, option) {
				const struct cli_option *o = &sweep->options[k];
				json_t *name = json_object_get(option, "long");

				ck_assert(o->help != NULL);
				ck_assert_str_eq(json_string_value(json_object_get(option, "help")), o->help);
				ck_assert(o->long_name ? !strcmp(json_string_value(name), o->long_name)
						       : json_is_null(name));
				if (o->id == OPT_PLUGIN)
					ck_assert_str_eq(json_string_value(json_object_get(option, "extension")),
							 ".so");
			}
			ck_assert_ptr_null(sweep->options[json_array_size(json_object_get(command, "options"))].help);
		}
		json_decref(table);
	}
	unlink("ext-2.so");
	unlink("ext-3.jsonl");
	rmdir("ext-dir");
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

/* Copies the first keep lines of from into to (all: 0), line k (from 1)
 * replaced by with when with is not NULL. */
static void copy_lines(const char *from, const char *to, size_t keep, size_t k, const char *with)
{
	FILE *in = fopen(from, "r"), *out = fopen(to, "w");
	char line[4096];

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	for (size_t at = 1; fgets(line, sizeof(line), in) && (!keep || at <= keep); at++)
		fputs(at == k && with ? with : line, out);
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
}

/*
 * to: from without its identity's columns; with legacy, its identity on a
 * line before the header instead, as the format before the columns had it.
 */
static void strip_identity(const char *from, const char *to, bool legacy)
{
	FILE *in = fopen(from, "r"), *out = fopen(to, "w");
	char line[4096], header[4096] = "";

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	while (fgets(line, sizeof(line), in)) {
		char *shard = strrchr(line, ','), *sweep;

		ck_assert_ptr_nonnull(shard);
		*shard++ = '\0';
		shard[strcspn(shard, "\r\n")] = '\0';
		sweep = strrchr(line, ',');
		ck_assert_ptr_nonnull(sweep);
		*sweep++ = '\0';
		if (!header[0]) {
			snprintf(header, sizeof(header), "%s", line);
			continue;
		}
		/* the header after the identity, known from the first row */
		if (strcmp(header, "-")) {
			for (char *c = sweep; legacy && *c; c++)
				*c = *c == ';' ? ',' : *c;
			if (legacy)
				fprintf(out, "# pebblesim sweep: %s shard=%s\n", sweep, shard);
			fprintf(out, "%s\n", header);
			strcpy(header, "-");
		}
		fprintf(out, "%s\n", line);
	}
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
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
	/* the CSV's first line is its header; every row records its sweep */
	rows_of("s2.csv", whole, sizeof(whole));
	ck_assert_int_eq(strncmp(whole, "dag,n,d,g,M,strategy,", 21), 0);
	HAS(whole, ",A_loads,A_saves,sweep,shard\n");
	HAS(whole, ",param=n range=8:64:x2 d=4 g=2 M=200 normalize=true strategies=generic;flash predict=true values=false,2/3\n");
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
	HAS(merged, "values=false,partial\n");
	HAS(merged, ",n,32,in none of the files merged (--partial),");
	ck_assert_int_eq(cli("sweep", "--merge", "part.csv", "s3.csv", NULL), 2);
	HAS(err_text, "part.csv is a partial merge: --partial merges it again");
	/* and merged with the shard it lacked, the whole sweep again */
	ck_assert_int_eq(cli("sweep", "--merge", "part.csv", "s3.csv", "--partial", "--csv", "again.csv", NULL), 0);
	rows_of("again.csv", merged, sizeof(merged));
	HAS(merged, "values=false,partial\n");
	ck_assert_ptr_null(strstr(merged, "in none of the files merged"));
	for (char *at; (at = strstr(merged, ",partial\n"));)
		memcpy(at, ",1/1\n\0\0\0", 9), memmove(at + 5, at + 9, strlen(at + 9) + 1);
	ck_assert_str_eq(merged, whole);
	ck_assert_int_eq(cli("sweep", "--merge", "part.csv", "s1.csv", "--partial", NULL), 2);
	HAS(err_text, "the point n = 8 of generic is in more than one row");
	ck_assert_int_eq(cli("sweep", "-n", "8:64:x2", "-d", "4", "-g", "2", "-M", "200", "--partial", NULL), 2);
	HAS(err_text, "--partial applies only with --merge");
	/* a CSV that records no sweep (its columns sweep and shard empty, or
	 * none): alone, or with --partial */
	strip_identity("s1.csv", "old.csv", false);
	ck_assert_int_eq(cli("sweep", "--merge", "old.csv", NULL), 0);
	ck_assert_int_eq(cli("sweep", "--merge", "old.csv", "s2.csv", NULL), 2);
	HAS(err_text, "old.csv records no sweep");
	/* the columns there but empty: the same; a header alone brings nothing */
	f = fopen("s1.csv", "r");
	ck_assert_ptr_nonnull(f);
	test_slurp(f, merged, sizeof(merged));
	for (char *at = strstr(merged, ",param=n"); at; at = strstr(at, ",param=n")) {
		char *end = strchr(at, '\n');

		memmove(at + 2, end, strlen(end) + 1);
		at[1] = ',';
	}
	f = fopen("blank.csv", "w");
	ck_assert_ptr_nonnull(f);
	fputs(merged, f);
	fclose(f);
	ck_assert_int_eq(cli("sweep", "--merge", "blank.csv", "s2.csv", "s3.csv", NULL), 2);
	HAS(err_text, "blank.csv records no sweep");
	copy_lines("s1.csv", "header.csv", 1, 0, NULL);
	ck_assert_int_eq(cli("sweep", "--merge", "header.csv", "s2.csv", "s3.csv", NULL), 2);
	HAS(err_text, "pebblesim: shard 1/3 of the sweep is missing");
	/* the format before the columns: the identity on a line before the
	 * header, still read, with a note */
	for (int k = 1; k <= 3; k++) {
		char from[32], to[32];

		snprintf(from, sizeof(from), "s%d.csv", k);
		snprintf(to, sizeof(to), "l%d.csv", k);
		strip_identity(from, to, true);
	}
	ck_assert_int_eq(cli("sweep", "--merge", "l3.csv", "l1.csv", "l2.csv", "--csv", "merged.csv", NULL), 0);
	HAS(err_text, "pebblesim: note: l3.csv has its sweep on a line before its header, as pebblesim 0.1.0 wrote it; read as such");
	rows_of("merged.csv", merged, sizeof(merged));
	ck_assert_str_eq(merged, whole);
	ck_assert_int_eq(cli("sweep", "--merge", "l1.csv", "l2.csv", NULL), 2);
	HAS(err_text, "pebblesim: shard 3/3 of the sweep is missing");
	ck_assert_int_eq(cli("sweep", "--merge", "l1.csv", "s2.csv", "s3.csv", NULL), 0);
	/* a damaged identity line is refused with its line */
	f = fopen("bad.csv", "w");
	fputs("# pebblesim sweep: param=n shard=4/3\n", f);
	fclose(f);
	ck_assert_int_eq(cli("sweep", "--merge", "bad.csv", NULL), 2);
	HAS(err_text, "bad.csv:1: not a sweep's identity");
}
END_TEST

/* Line k (from 1) of path, into buf. */
static void line_of(const char *path, size_t k, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	for (size_t at = 1; at <= k; at++)
		ck_assert_ptr_nonnull(fgets(buf, (int)len, f));
	fclose(f);
}

/* buf with its first field after `after` commas set to text. */
static void set_field(char *buf, size_t len, int after, const char *text)
{
	char rest[4096], *c = buf;

	for (int comma = 0; comma < after; c++)
		comma += *c == ',';
	snprintf(rest, sizeof(rest), "%s", strchr(c, ','));
	snprintf(c, len - (size_t)(c - buf), "%s%s", text, rest);
}

/* s1.csv with line k's fields after a and b commas set to x and y (y
 * NULL: only x), merged with s2.csv and s3.csv: refused with want. */
static void merge_edited(size_t k, int a, const char *x, int b, const char *y, const char *want)
{
	char row[4096];

	line_of("s1.csv", k, row, sizeof(row));
	set_field(row, sizeof(row), a, x);
	if (y)
		set_field(row, sizeof(row), b, y);
	copy_lines("s1.csv", "edited.csv", 0, k, row);
	ck_assert_int_eq(cli("sweep", "--merge", "edited.csv", "s2.csv", "s3.csv", NULL), 2);
	HAS(err_text, want);
}

/*
 * --merge checks every row against the grid its sweep declares: a shard
 * cut short, a row off the grid or of another shard are refused; with
 * --partial each point missing is a row "not run", and no crossover
 * spans it.
 */
START_TEST(test_merge_grid)
{
	for (int k = 1; k <= 3; k++) {
		char path[32], spec[8];

		snprintf(path, sizeof(path), "s%d.csv", k);
		snprintf(spec, sizeof(spec), "%d/3", k);
		ck_assert_int_eq(cli("sweep", "-n", "1k:64k:x2", "-d", "16", "-g", "3", "-M", "8k",
				     "--predict", "--strategies", "colpass,flash", "--shard", spec,
				     "--csv", path, NULL), 0);
	}
	ck_assert_int_eq(cli("sweep", "--merge", "s1.csv", "s2.csv", "s3.csv", NULL), 0);
	HAS(out_text, "crossover: colpass moves less than flash for n in [1024, 65536]");
	/* shard 2 (n = 2048, 16384) cut to its header and one row */
	copy_lines("s2.csv", "c2.csv", 2, 0, NULL);
	ck_assert_int_eq(cli("sweep", "--merge", "s1.csv", "c2.csv", "s3.csv", NULL), 2);
	HAS(err_text, "pebblesim: 3 of the sweep's 14 rows (7 points x 2 strategies) are in no file (n = 2048 of flash, n = 16384 of colpass, n = 16384 of flash): a shard missing or cut short");
	/* and to its header: the shard missing */
	copy_lines("s2.csv", "h2.csv", 1, 0, NULL);
	ck_assert_int_eq(cli("sweep", "--merge", "s1.csv", "h2.csv", "s3.csv", NULL), 2);
	HAS(err_text, "pebblesim: shard 2/3 of the sweep is missing");
	/* --partial: the missing points not run, the crossover cut at them */
	ck_assert_int_eq(cli("sweep", "--merge", "s1.csv", "c2.csv", "s3.csv", "--partial", NULL), 0);
	HAS(out_text, "16384  colpass    colpass      not run: in none of the files merged (--partial)");
	HAS(out_text, "crossover: colpass moves less than flash for n in [1024, 1024], [4096, 8192], [32768, 65536]");
	ck_assert_int_eq(cli("sweep", "--merge", "s1.csv", "c2.csv", "s3.csv", "--partial", "--json", NULL), 0);
	HAS(out_text, "\"intervals\":[{\"from\":1024,\"to\":1024");
	/* a row off the grid: n = 1000 */
	merge_edited(2, 1, "1000", 18, "1000",
		     "pebblesim: edited.csv:2: n = 1000 is not a point of its sweep's range 1024:65536:x2");
	/* a row of shard 2 in shard 1's file */
	merge_edited(2, 1, "2048", 18, "2048",
		     "pebblesim: edited.csv:2: n = 2048 is a point of shard 2/3, not of this file's 1/3");
	/* a label the sweep does not have */
	merge_edited(2, 15, "generic", 15, "generic",
		     "pebblesim: edited.csv:2: the label 'generic' is not among its sweep's strategies");
	/* two sweeps in one file */
	merge_edited(3, 46, "param=n range=1024:65536:x2 d=16 g=3 M=8192 normalize=true strategies=colpass;flash predict=false values=false",
		     46, NULL, "pebblesim: edited.csv:3: the row's sweep or shard (columns 47 and 48) differs from line 2's");
}
END_TEST

/* What --merge refuses by line: a NUL byte, a directory, a seconds that
 * is no finite number. */
START_TEST(test_merge_refusals)
{
	static const char *const seconds[] = { "nan", "inf", "-inf", "1e999999", "0x", "" };
	char row[4096];
	FILE *f;

	ck_assert_int_eq(cli("sweep", "-n", "8:16:x2", "-d", "4", "-g", "2", "-M", "200",
			     "--predict", "--strategies", "generic", "--csv", "s.csv", NULL), 0);
	line_of("s.csv", 2, row, sizeof(row));
	/* a NUL byte, not "line too long" */
	f = fopen("nul.csv", "w");
	ck_assert_ptr_nonnull(f);
	line_of("s.csv", 1, row, sizeof(row));
	fputs(row, f);
	line_of("s.csv", 2, row, sizeof(row));
	fwrite(row, 1, 10, f);
	fputc('\0', f);
	fputs(row + 10, f);
	fclose(f);
	ck_assert_int_eq(cli("sweep", "--merge", "nul.csv", NULL), 2);
	HAS(err_text, "pebblesim: nul.csv:2: the line has a NUL byte (byte 11): not a CSV of text");
	/* a directory, not "it is empty" */
	ck_assert_int_eq(mkdir("adir", 0700), 0);
	ck_assert_int_eq(cli("sweep", "--merge", "adir", NULL), 2);
	HAS(err_text, "pebblesim: cannot open 'adir': Is a directory");
	/* the seconds: finite, or refused by line and column */
	for (size_t k = 0; k < sizeof(seconds) / sizeof(seconds[0]); k++) {
		char want[160];

		line_of("s.csv", 2, row, sizeof(row));
		set_field(row, sizeof(row), 14, seconds[k]);
		copy_lines("s.csv", "sec.csv", 0, 2, row);
		if (!*seconds[k]) {
			/* empty: none measured, as before */
			ck_assert_int_eq(cli("sweep", "--merge", "sec.csv", "--json", NULL), 0);
			continue;
		}
		ck_assert_int_eq(cli("sweep", "--merge", "sec.csv", "--json", NULL), 2);
		snprintf(want, sizeof(want), "pebblesim: sec.csv:2: the seconds (column 15) is '%s', not a finite number",
			 seconds[k]);
		HAS(err_text, want);
	}
	/* no field is quoted: a reason's commas, quotes and line ends are
	 * written so that a reader splitting at every comma reads it */
	{
		struct ps_sweep_row r;
		char text[4096];

		test_sweep_row(&r, "generic", 8, 0);
		r.ran = false;
		r.swept = 'n';
		snprintf(r.why, sizeof(r.why), "for n = 8, d = 4: \"no\"\nmore");
		f = fopen("why.csv", "w");
		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(ps_sweep_write_csv(f, &r, 1), 0);
		ck_assert_int_eq(fclose(f), 0);
		line_of("why.csv", 2, text, sizeof(text));
		HAS(text, ",n,8,for n = 8; d = 4: 'no' more,");
		ck_assert_ptr_null(strchr(text, '"'));
	}
	/* the other numbers alike */
	line_of("s.csv", 2, row, sizeof(row));
	set_field(row, sizeof(row), 12, "nan");
	copy_lines("s.csv", "low.csv", 0, 2, row);
	ck_assert_int_eq(cli("sweep", "--merge", "low.csv", NULL), 2);
	HAS(err_text, "pebblesim: low.csv:2: the lower (column 13) is 'nan', not a finite number");
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
	tcase_add_test(tc, test_merge_grid);
	tcase_add_test(tc, test_merge_refusals);
	tcase_add_test(tc, test_version_and_shapes);
	suite_add_tcase(s, tc);
	return s;
}
