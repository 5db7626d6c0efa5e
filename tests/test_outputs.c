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
#include "pebblesim/npy.h"
#include "pebblesim/output.h"
#include "pebblesim/plot.h"
#include "pebblesim/sweep.h"
#include "gnuplot_check.h"
#include "tests.h"

static char out_text[1 << 16], err_text[1 << 14];
static char dir[64], cwd[4096]; /* a fresh directory per test, the runner's */

static void setup(void)
{
	test_dir_enter(dir, sizeof(dir), cwd, sizeof(cwd), "outputs");
}

static void teardown(void)
{
	test_dir_leave(dir, cwd);
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

/* Two rows of a sweep over n with labels no CSV could hold: a quote and
 * system(), a double quote, back quotes, a newline and a shell line. */
static void hostile_rows(struct ps_sweep_row rows[2])
{
	memset(rows, 0, 2 * sizeof(*rows));
	for (int k = 0; k < 2; k++) {
		rows[k].ran = true;
		rows[k].value = 8u << k;
		rows[k].io = 100u << k;
		rows[k].lower = 10;
		rows[k].swept = 'n';
	}
	strcpy(rows[0].label, "';system('touch PWNED')");
	strcpy(rows[1].label, "\";`touch PWNED`\n!touch X");
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
	hostile_rows(rows);
	memset(&cross, 0, sizeof(cross));
	cross.found = true;
	cross.at = 16;
	strcpy(cross.label, rows[0].label);
	strcpy(cross.baseline, "'\\");
	ps_error_clear(&err);
	ck_assert_msg(ps_sweep_plot("q.svg", 'n', rows, 2, &cross, 1, NULL, &err) == 0, "%s", err.msg);
	HAS(get("q.svg"), "<?xml");
	ck_assert_int_eq(others("evil.csv", "p.svg", "q.svg", NULL), 0);
}
END_TEST

/* Q, K and V of n = 2, d = 1 as .npy files. */
static void put_qkv(void)
{
	static const double x[2] = { 0.25, -0.5 };
	static const char *const names[] = { "Q.npy", "K.npy", "V.npy" };

	for (int k = 0; k < 3; k++) {
		FILE *f = fopen(names[k], "wb");

		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(ps_npy_write(f, x, 2, 1), 0);
		ck_assert_int_eq(fclose(f), 0);
	}
}

/* Standard input from path, as `< path` gives it. */
static void stdin_from(const char *path)
{
	ck_assert_ptr_nonnull(freopen(path, "r", stdin));
}

/* 2-4. Every output against every input, by device and inode, standard
 * input included: refused with exit status 2 naming both, the input
 * untouched. */
START_TEST(test_output_is_input)
{
	char before[256];

	put_qkv();
	snprintf(before, sizeof(before), "%s", get("Q.npy"));
	/* 2. --trace over a --q input */
	ck_assert_int_eq(cli("-n", "2", "-d", "1", "-g", "1", "-M", "20", "--values", "--q", "Q.npy",
			     "--k", "K.npy", "--v", "V.npy", "--trace", "Q.npy", NULL), 2);
	HAS(err_text, "pebblesim: the output 'Q.npy' is the input 'Q.npy': refusing to overwrite it");
	ck_assert_str_eq(get("Q.npy"), before);
	ck_assert_int_eq(cli("-n", "2", "-d", "1", "-g", "1", "-M", "20", "--values", "--q", "Q.npy",
			     "--k", "K.npy", "--v", "V.npy", "--output", "V.npy", NULL), 2);
	HAS(err_text, "the output 'V.npy' is the input 'V.npy'");
	/* 3. --plot or --csv naming a --merge input */
	put_csv("a.csv", "flash");
	ck_assert_int_eq(symlink("a.csv", "in.svg"), 0);
	ck_assert_int_eq(cli("sweep", "--merge", "in.svg", "--plot", "in.svg", NULL), 2);
	HAS(err_text, "the output 'in.svg' is the input 'in.svg'");
	ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--csv", "a.csv", NULL), 2);
	HAS(err_text, "the output 'a.csv' is the input 'a.csv'");
	ck_assert_int_eq(link("a.csv", "b.csv"), 0);
	ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--csv", "b.csv", NULL), 2);
	HAS(err_text, "the output 'b.csv' is the input 'a.csv'");
	HAS(get("a.csv"), "dag,n,d,g,M,strategy");
	/* 4. an input given as '-' and named as an output */
	ck_assert_int_eq(cli("dag", "-n", "2", "-d", "1", "-g", "1", "-o", "d.graphml", NULL), 0);
	snprintf(before, sizeof(before), "%s", get("d.graphml"));
	stdin_from("d.graphml");
	ck_assert_int_eq(cli("run", "--dag", "-", "-M", "20", "--trace", "d.graphml", NULL), 2);
	HAS(err_text, "pebblesim: the output 'd.graphml' is the input '-' (standard input): refusing to overwrite it");
	ck_assert_str_eq(get("d.graphml"), before);
	ck_assert_int_eq(cli("-n", "2", "-d", "1", "-g", "1", "-M", "20", "--trace", "t.jsonl", NULL), 0);
	snprintf(before, sizeof(before), "%s", get("t.jsonl"));
	stdin_from("t.jsonl");
	ck_assert_int_eq(cli("validate", "--values", "--output", "t.jsonl", "-", NULL), 2);
	HAS(err_text, "the output 't.jsonl' is the input '-' (standard input)");
	ck_assert_str_eq(get("t.jsonl"), before);
	/* standard input that is not read is no input; a special file is
	 * both read and written in place */
	stdin_from("t.jsonl");
	ck_assert_int_eq(cli("-n", "2", "-d", "1", "-g", "1", "-M", "20", "--trace", "t.jsonl", NULL), 0);
	stdin_from("/dev/null");
	ck_assert_int_eq(cli("run", "--dag", "-", "-M", "20", "--trace", "/dev/null", NULL), 2);
	ck_assert_ptr_null(strstr(err_text, "is the input"));
}
END_TEST

/* 5. The plot goes through the output writer: a symbolic link is
 * followed and stays a link, a FIFO is written in place, and no
 * predictable temporary is opened (links planted at PATH.tmp.PID, the
 * old temporary's name, stay unfollowed). */
START_TEST(test_plot_through_writer)
{
	char planted[64], text[64];
	struct stat st;
	int fd;

	put_csv("a.csv", "flash");
	put("victim", "precious\n");
	snprintf(planted, sizeof(planted), "p.svg.tmp.%ld", (long)getpid());
	ck_assert_int_eq(symlink("victim", planted), 0);
	ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--plot", "p.svg", NULL), 0);
	ck_assert_str_eq(get("victim"), "precious\n");
	ck_assert_int_eq(lstat("p.svg", &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	HAS(get("p.svg"), "<?xml");
	ck_assert_int_eq(symlink("target.svg", "link.svg"), 0);
	ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--plot", "link.svg", NULL), 0);
	ck_assert_int_eq(lstat("link.svg", &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	HAS(get("target.svg"), "<?xml");
	ck_assert_int_eq(mkfifo("fifo.svg", 0600), 0);
	fd = open("fifo.svg", O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--plot", "fifo.svg", NULL), 0);
	ck_assert_int_eq(lstat("fifo.svg", &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	memset(text, 0, sizeof(text));
	ck_assert_int_gt(read(fd, text, sizeof(text) - 1), 0);
	HAS(text, "<?xml");
	close(fd);
	ck_assert_int_eq(others("a.csv", "victim", planted, "p.svg", "link.svg", "target.svg",
				"fifo.svg", NULL), 0);
}
END_TEST

/* Runs the command line in a child whose files may be at most limit bytes
 * (ulimit -f); the status the child exits with, or 100 + a signal. Its
 * standard error goes to err_text. */
static int cli_limited(rlim_t limit, const char *const *args)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit rl = { limit, limit };
		char *argv[24];
		int argc = 0;
		FILE *err = fopen("child.err", "w");

		argv[argc++] = "pebblesim";
		for (; *args && argc < 23; args++)
			argv[argc++] = (char *)*args;
		argv[argc] = NULL;
		/* the runner's SIGXFSZ is the default; pebblesim's main sets it */
		signal(SIGXFSZ, SIG_DFL);
		ps_output_catch_signals();
		if (!err || setrlimit(RLIMIT_FSIZE, &rl))
			_exit(99);
		status = ps_cli_main(argc, argv, fopen("/dev/null", "w"), err);
		fclose(err);
		_exit(status);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	snprintf(err_text, sizeof(err_text), "%s", get("child.err"));
	unlink("child.err");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

/* 6. A full disk: exit status 2 with the reason, the old plot kept, no
 * temporary left; gnuplot's exit status alone is not trusted (a plot
 * cut short is refused). */
START_TEST(test_plot_full_disk)
{
	static const char *const plot[] = { "sweep", "--merge", "a.csv", "--plot", "p.svg", NULL };

	put_csv("a.csv", "flash");
	put("p.svg", "old plot\n");
	ck_assert_int_eq(cli_limited(4096, plot), 2);
	HAS(err_text, "pebblesim: cannot write the plot 'p.svg': File too large");
	ck_assert_str_eq(get("p.svg"), "old plot\n");
	ck_assert_int_eq(others("a.csv", "p.svg", NULL), 0);
	ck_assert_int_eq(symlink("/dev/full", "full.svg"), 0);
	ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--plot", "full.svg", NULL), 2);
	HAS(err_text, "pebblesim: cannot write the plot 'full.svg': No space left on device");
	ck_assert_int_eq(others("a.csv", "p.svg", "full.svg", NULL), 0);
}
END_TEST

/* A gnuplot of the test's making first in PATH (dir/bin): the script's
 * text. */
static void fake_gnuplot(const char *script)
{
	char path[128];

	ck_assert_int_eq(mkdir("bin", 0700), 0);
	put("bin/gnuplot", script);
	ck_assert_int_eq(chmod("bin/gnuplot", 0700), 0);
	snprintf(path, sizeof(path), "%s/bin:/usr/bin:/bin", dir);
	ck_assert_int_eq(setenv("PATH", path, 1), 0);
}

/* No gnuplot in PATH: dir/bin, empty. */
static void remove_fake_gnuplot(void)
{
	char path[128];

	unlink("bin/gnuplot");
	snprintf(path, sizeof(path), "%s/bin", dir);
	ck_assert_int_eq(setenv("PATH", path, 1), 0);
}

/* 6. gnuplot that exits 0 with part of an SVG, and no gnuplot at all. */
START_TEST(test_plot_incomplete)
{
	put_csv("a.csv", "flash");
	put("p.svg", "old plot\n");
	fake_gnuplot("#!/bin/sh\nprintf '<?xml version=\"1.0\"?>\\n<svg width=\"900\">\\n<g>'\necho 'a warning' >&2\n");
	ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--plot", "p.svg", NULL), 2);
	HAS(err_text, "pebblesim: gnuplot could not draw 'p.svg': its SVG is incomplete: a warning");
	ck_assert_str_eq(get("p.svg"), "old plot\n");
	/* a failure: its last line of error, which names the script's line */
	put("bin/gnuplot", "#!/bin/sh\nprintf '\\nplot x\\n     ^\\n\"plot.gp\" line 9: oops\\n\\n' >&2\nexit 1\n");
	ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--plot", "p.svg", NULL), 2);
	HAS(err_text, "pebblesim: gnuplot could not draw 'p.svg': \"plot.gp\" line 9: oops\n");
	ck_assert_str_eq(get("p.svg"), "old plot\n");
	remove_fake_gnuplot();
	ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--plot", "p.svg", NULL), 2);
	HAS(err_text, "pebblesim: cannot plot: gnuplot is not installed");
	ck_assert_str_eq(get("p.svg"), "old plot\n");
	ck_assert_int_eq(others("a.csv", "p.svg", "bin", NULL), 0);
}
END_TEST

/* The script in captured.gp holds only pebblesim's own gnuplot code
 * (tests/gnuplot_check.c); removed after. */
static void check_captured_script(void)
{
	static char text[1 << 16];
	char why[160];
	FILE *f = fopen("captured.gp", "r");
	size_t n;

	ck_assert_msg(f != NULL, "gnuplot was not run");
	n = fread(text, 1, sizeof(text), f);
	fclose(f);
	ck_assert_uint_gt(n, 0);
	ck_assert_msg(gnuplot_check(text, n, why, sizeof(why)) == 0, "%s", why);
	ck_assert_int_eq(unlink("captured.gp"), 0);
}

static int script_check(const char *text)
{
	return gnuplot_check(text, strlen(text), NULL, 0);
}

/* 1, by the script itself: a gnuplot that keeps each script it is given
 * sees only pebblesim's code, for a sweep with crossovers, one with
 * values, a map, a merge whose labels are gnuplot's command words, and rows
 * whose labels no CSV could hold. The check is shown to refuse what an
 * injection would leave. */
START_TEST(test_plot_script_is_ours)
{
	char capture[4200];
	struct ps_sweep_row rows[2];
	struct ps_error err;

	ck_assert_int_lt(script_check("plot 'd' title 'x'; system('touch P')\n"), 0);
	ck_assert_int_lt(script_check("plot 'd' title 'x'\n!touch P\n"), 0);
	ck_assert_int_lt(script_check("plot '<touch P' title 'x'\n"), 0);
	ck_assert_int_lt(script_check("plot 'd' title `touch P`\n"), 0);
	ck_assert_int_lt(script_check("load 'x'\n"), 0);
	ck_assert_int_lt(script_check("plot 'd' title 'x\n"), 0);
	ck_assert_int_eq(script_check("plot 'd' title 'it''s ;system'\n"), 0);
	ck_assert_ptr_nonnull(getcwd(capture, sizeof(capture) - 16));
	strcat(capture, "/captured.gp");
	ck_assert_int_eq(setenv("CAPTURE", capture, 1), 0);
	fake_gnuplot("#!/bin/sh\ncp \"$1\" \"$CAPTURE\"\n"
		     "printf '<?xml version=\"1.0\"?>\\n<svg>\\n</svg>\\n'\n");
	ck_assert_int_eq(cli("sweep", "-n", "64:1024:x2", "-d", "16", "-g", "3", "-M", "8192",
			     "--predict", "--strategies", "keylemma,flash,best", "--plot", "p.svg",
			     NULL), 0);
	check_captured_script();
	ck_assert_int_eq(cli("sweep", "-g", "1:3", "-n", "16", "-d", "4", "-M", "200", "--values",
			     "--strategies", "keylemma,flash", "--plot", "p.svg", NULL), 0);
	check_captured_script();
	put_csv("a.csv", "system");
	ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--plot", "p.svg", NULL), 0);
	check_captured_script();
	ck_assert_int_eq(cli("map", "-n", "256", "-d", "4", "-g", "1:3", "-M", "64:4096:x4", "--plot",
			     "p.svg", NULL), 0);
	check_captured_script();
	hostile_rows(rows);
	ps_error_clear(&err);
	ck_assert_msg(ps_sweep_plot("q.svg", 'n', rows, 2, NULL, 0, NULL, &err) == 0, "%s", err.msg);
	check_captured_script();
	unsetenv("CAPTURE");
	ck_assert_int_eq(others("a.csv", "p.svg", "q.svg", "bin", NULL), 0);
}
END_TEST

/* 7. SIGTERM while gnuplot draws: the plot's temporary and gnuplot's
 * private directory are removed. The fake gnuplot opens what a script's
 * `set output` names, as gnuplot would, writes part of an SVG, and waits. */
START_TEST(test_plot_signal)
{
	char mark[128];
	int status;
	pid_t pid;

	put_csv("a.csv", "flash");
	snprintf(mark, sizeof(mark), "%s/bin/started", dir);
	ck_assert_int_eq(setenv("MARK", mark, 1), 0);
	fake_gnuplot("#!/bin/sh\n"
		     "out=$(sed -n \"s/^set output '\\(.*\\)'$/\\1/p\" ${1:--})\n"
		     "[ -n \"$out\" ] && : > \"$out\"\n"
		     "printf '<?xml'\n"
		     ": > \"$MARK\"\n"
		     "exec sleep 10\n");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGTERM, SIG_DFL);
		_exit(cli("sweep", "--merge", "a.csv", "--plot", "p.svg", NULL));
	}
	for (int k = 0; k < 1000 && access(mark, F_OK); k++)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	ck_assert_int_eq(access(mark, F_OK), 0);
	ck_assert_int_eq(kill(-pid, SIGTERM), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %d", status);
	unlink(mark);
	remove_fake_gnuplot();
	ck_assert_int_eq(others("a.csv", "bin", NULL), 0);
}
END_TEST

/* 7. ulimit -f: SIGXFSZ is a write error, exit status 2 with the reason,
 * for --trace, dag -o and --output; the old file kept, no temporary. */
START_TEST(test_file_size_limit)
{
	static const char *const trace[] = { "-n", "8", "-d", "2", "-g", "1", "-M", "64",
					     "--trace", "out", NULL };
	static const char *const dag[] = { "dag", "-n", "8", "-d", "2", "-g", "1", "-o", "out", NULL };
	static const char *const values[] = { "-n", "64", "-d", "2", "-g", "1", "-M", "200",
					      "--values", "--output", "out", NULL };
	static const char *const *const commands[] = { trace, dag, values };
	static const char *const what[] = { "trace", "DAG file", "outputs" };

	for (size_t k = 0; k < 3; k++) {
		char message[128];

		put("out", "old\n");
		ck_assert_int_eq(cli_limited(512, commands[k]), 2);
		snprintf(message, sizeof(message), "pebblesim: cannot write the %s 'out': File too large",
			 what[k]);
		HAS(err_text, message);
		ck_assert_str_eq(get("out"), "old\n");
		ck_assert_int_eq(others("out", NULL), 0);
	}
}
END_TEST

/* 8. A file the user cannot write is not replaced, though its directory
 * lets the rename through. Root may write any file: as root the test
 * runs in a child that drops to the user and group nobody (65534), and
 * says so when it cannot. */
START_TEST(test_read_only_file)
{
	int status;
	pid_t pid;

	put("ro.jsonl", "read only\n");
	ck_assert_int_eq(chmod("ro.jsonl", 0444), 0);
	ck_assert_int_eq(chmod(".", 0777), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(77);
		if (cli("-n", "2", "-d", "1", "-g", "1", "-M", "9", "--trace", "ro.jsonl", NULL) != 2)
			_exit(1);
		_exit(strstr(err_text, "cannot write the trace 'ro.jsonl': Permission denied") ? 0 : 2);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		fprintf(stderr, "test_read_only_file: skipped: running as root and cannot drop to uid 65534\n");
		return;
	}
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
	ck_assert_str_eq(get("ro.jsonl"), "read only\n");
	ck_assert_int_eq(others("ro.jsonl", NULL), 0);
}
END_TEST

/* 9. A run that fails (exit status 1) writes no outputs: the old file
 * stays, and the report does not name it. */
START_TEST(test_failed_run_keeps_outputs)
{
	put("A.npy", "old outputs\n");
	ck_assert_int_eq(cli("--attention", "exact", "-n", "4", "-d", "4", "-M", "60", "--values",
			     "--entry-bound", "100", "--output", "A.npy", NULL), 1);
	HAS(err_text, "pebblesim: the outputs are not written to 'A.npy': the run failed");
	ck_assert_str_eq(get("A.npy"), "old outputs\n");
	ck_assert_ptr_null(strstr(out_text, "A.npy"));
	ck_assert_int_eq(cli("--attention", "exact", "-n", "4", "-d", "4", "-M", "60", "--values",
			     "--entry-bound", "100", "--trace", "t.jsonl", NULL), 1);
	ck_assert_int_eq(cli("validate", "--values", "--entry-bound", "100", "--output", "A.npy",
			     "t.jsonl", NULL), 1);
	ck_assert_str_eq(get("A.npy"), "old outputs\n");
	ck_assert_int_eq(others("A.npy", "t.jsonl", NULL), 0);
}
END_TEST

/* Messages: a failed write of the outputs or the CSV names the file and
 * the reason; a name of 240 to 255 bytes is written (the temporary's name
 * is short). */
START_TEST(test_output_messages_and_long_names)
{
	char name[300];

	ck_assert_int_eq(symlink("/dev/full", "full"), 0);
	ck_assert_int_eq(cli("-n", "8", "-d", "2", "-g", "1", "-M", "64", "--values", "--output", "full",
			     NULL), 2);
	HAS(err_text, "pebblesim: cannot write the outputs 'full': No space left on device");
	put_csv("a.csv", "flash");
	ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--csv", "full", NULL), 2);
	HAS(err_text, "pebblesim: cannot write the CSV file 'full': No space left on device");
	for (size_t len = 240; len <= 255; len += 15) {
		memset(name, 'x', len);
		strcpy(name + len - 4, ".svg");
		ck_assert_int_eq(cli("-n", "2", "-d", "1", "-g", "1", "-M", "9", "--trace", name, NULL), 0);
		HAS(get(name), "pebblesim-trace");
		ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--plot", name, NULL), 0);
		HAS(get(name), "<?xml");
		ck_assert_int_eq(cli("sweep", "--merge", "a.csv", "--csv", name, NULL), 0);
		HAS(get(name), "dag,n,d");
		unlink(name);
	}
	ck_assert_int_eq(others("full", "a.csv", NULL), 0);
}
END_TEST

Suite *outputs_suite(void)
{
	Suite *s = suite_create("outputs");
	TCase *tc = tcase_create("outputs");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_plot_injection);
	tcase_add_test(tc, test_output_is_input);
	tcase_add_test(tc, test_plot_through_writer);
	tcase_add_test(tc, test_plot_full_disk);
	tcase_add_test(tc, test_plot_incomplete);
	tcase_add_test(tc, test_plot_script_is_ours);
	tcase_add_test(tc, test_plot_signal);
	tcase_add_test(tc, test_file_size_limit);
	tcase_add_test(tc, test_read_only_file);
	tcase_add_test(tc, test_failed_run_keeps_outputs);
	tcase_add_test(tc, test_output_messages_and_long_names);
	suite_add_tcase(s, tc);
	return s;
}
