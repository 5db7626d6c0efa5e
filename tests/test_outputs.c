/*
 * Outputs (docs/SECURITY.md, "How outputs are written"): no input reaches
 * gnuplot as code; an output never destroys an input, a file the user
 * cannot write, or what stands at its path; temporaries never outlive the
 * process, whatever ends it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/cli/cli.h"
#include "pebblesim/output.h"
#include "pebblesim/sweep.h"
#include "pebblesim/trace.h"
#include "tests.h"

static char out_text[1 << 16], err_text[1 << 14];
static char dir[64], cwd[4096]; /* a fresh directory per test, the runner's */

static void setup(void)
{
	strcpy(dir, "/tmp/pebblesim-outputs-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	/* the tests run in it, and so do gnuplot's private directories */
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
}

static void teardown(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			chmod(path, 0600);
			unlink(path);
		}
	if (d)
		closedir(d);
	ck_assert_int_eq(chdir(cwd), 0);
	rmdir(dir);
}

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

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_msg(f != NULL, "cannot create '%s'", path);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* The first bytes of path, or "" when it cannot be read. */
static const char *get(const char *path)
{
	static char text[256];
	FILE *f = fopen(path, "r");
	size_t got = 0;

	if (f) {
		got = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
	}
	text[got] = '\0';
	return text;
}

/* Names in the test's directory other than those listed (NULL-ended). */
static int others(const char *first, ...)
{
	DIR *d = opendir(".");
	struct dirent *e;
	int count = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		bool listed = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
		va_list ap;

		va_start(ap, first);
		for (const char *n = first; n && !listed; n = va_arg(ap, const char *))
			listed = !strcmp(n, e->d_name);
		va_end(ap);
		if (!listed)
			fprintf(stderr, "unexpected file '%s' in %s\n", e->d_name, dir);
		count += !listed;
	}
	closedir(d);
	return count;
}

static const char csv_head[] =
	"dag,n,d,g,M,strategy,valid,loads,saves,io,predicted_io,peak_red,lower,upper,"
	"seconds,label,simulated,swept,value,why\n";

/* A sweep CSV of two labels at n = 8, 16, the second label as given. */
static void put_csv(const char *path, const char *label)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "%sapprox-attention,8,4,2,200,keylemma,,651,107,758,758,68,128,1632,0.000,case,false,n,8,\n"
		 "approx-attention,16,4,2,200,keylemma,,1200,166,1366,1366,68,256,3000,0.000,case,false,n,16,\n"
		 "exact-attention,8,4,0,200,flash,,96,32,128,128,68,128,128,0.000,%s,false,n,8,\n"
		 "exact-attention,16,4,0,200,flash,,192,64,256,256,68,256,256,0.000,%s,false,n,16,\n",
		 csv_head, label, label);
	put(path, text);
}

/* 1. No text of an input reaches gnuplot as code: the reproducer's label
 * is refused by the CSV's grammar, with its line; a label that did get
 * into the rows is drawn as a title, not run. */
START_TEST(test_plot_injection)
{
	struct ps_sweep_row rows[2];
	struct ps_crossover cross;
	struct ps_error err;

	put_csv("evil.csv", "';system'touch PWNED'#");
	ck_assert_int_eq(cli("sweep", "--merge", "evil.csv", "--plot", "p.svg", NULL), 2);
	HAS(err_text, "pebblesim: evil.csv:4: the label (column 16) has byte 0x27, outside A-Z a-z 0-9 _ . + -");
	ck_assert_int_eq(others("evil.csv", NULL), 0);
	put_csv("evil.csv", "x\x1b[2J");
	ck_assert_int_eq(cli("sweep", "--merge", "evil.csv", NULL), 2);
	HAS(err_text, "evil.csv:4: the label (column 16) has byte 0x1b");
	put_csv("evil.csv", "flash");
	ck_assert_int_eq(cli("sweep", "--merge", "evil.csv", "--plot", "p.svg", NULL), 0);
	HAS(get("p.svg"), "<?xml");
	/* the script quotes what it is given, grammar or not */
	memset(rows, 0, sizeof(rows));
	for (int k = 0; k < 2; k++) {
		rows[k].ran = true;
		rows[k].value = 8u << k;
		rows[k].io = 100u << k;
		rows[k].lower = 10;
		rows[k].swept = 'n';
	}
	strcpy(rows[0].label, "';system('touch PWNED')");
	strcpy(rows[1].label, "\";`touch PWNED`\n!touch X");
	memset(&cross, 0, sizeof(cross));
	cross.found = true;
	cross.at = 16;
	strcpy(cross.label, rows[0].label);
	strcpy(cross.baseline, "'\\");
	ps_error_clear(&err);
	ck_assert_msg(ps_sweep_plot("q.svg", 'n', rows, 2, &cross, 1, &err) == 0, "%s", err.msg);
	HAS(get("q.svg"), "<?xml");
	ck_assert_int_eq(others("evil.csv", "p.svg", "q.svg", NULL), 0);
}
END_TEST

Suite *outputs_suite(void)
{
	Suite *s = suite_create("outputs");
	TCase *tc = tcase_create("outputs");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_plot_injection);
	suite_add_tcase(s, tc);
	return s;
}
