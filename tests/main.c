/*
 * The one test runner: every suite, in worker processes side by side
 * (PS_TEST_JOBS), each suite's output as one block, and a total line.
 * CK_RUN_SUITE / CK_RUN_CASE select parts, as Check documents.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/cli/cli.h"

#include "tests.h"

/* tests/test_optimal.c: the exact optimum against exhaustive search */
Suite *optimal_suite(void);
/* tests/test_plot.c: the plots' formats, legends, and map */
Suite *plot_suite(void);
/* tests/test_plugin.c: plugins and the entry point of other languages */
Suite *plugin_suite(void);

void test_attention(struct ps_attention *att, uint64_t n, uint64_t d,
		    uint64_t g, int normalize)
{
	struct ps_attention_params p = {
		.n = n, .d = d, .g = g, .normalize = normalize != 0,
	};
	struct ps_error err;

	ps_error_clear(&err);
	ck_assert_msg(ps_attention_init(att, &p, &err) == 0, "%s", err.msg);
}

void test_causal_attention(struct ps_attention *att, uint64_t n, uint64_t d,
			   uint64_t g, int normalize)
{
	struct ps_attention_params p = {
		.n = n, .d = d, .g = g, .normalize = normalize != 0, .causal = true,
	};
	struct ps_error err;

	ps_error_clear(&err);
	ck_assert_msg(ps_attention_init(att, &p, &err) == 0, "%s", err.msg);
}

void test_write_npy_raw(const char *path, const char *header, const void *data,
			size_t bytes)
{
	FILE *f = fopen(path, "wb");
	size_t len = strlen(header);
	unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
				  (unsigned char)(len & 0xff), (unsigned char)(len >> 8) };

	ck_assert_ptr_nonnull(f);
	fwrite(pre, 1, sizeof(pre), f);
	fwrite(header, 1, len, f);
	fwrite(data, 1, bytes, f);
	fclose(f);
}

void test_slurp(FILE *f, char *buf, size_t len)
{
	size_t got;

	rewind(f);
	got = fread(buf, 1, len - 1, f);
	buf[got] = '\0';
	fclose(f);
}

int test_cli_va(char *out_text, size_t out_len, char *err_text, size_t err_len,
		const char *first, va_list ap)
{
	char *argv[40];
	int argc = 0;

	argv[argc++] = "pebblesim";
	for (const char *a = first; a; a = va_arg(ap, const char *)) {
		ck_assert_int_lt(argc, 39);
		argv[argc++] = (char *)a;
	}
	argv[argc] = NULL;
	return test_cli_run(argv, out_text, out_len, err_text, err_len);
}

int test_cli_capture(char *out_text, size_t out_len, char *err_text, size_t err_len,
		     const char *first, ...)
{
	va_list ap;
	int rc;

	va_start(ap, first);
	rc = test_cli_va(out_text, out_len, err_text, err_len, first, ap);
	va_end(ap);
	return rc;
}

char test_out[1 << 17], test_err[1 << 14];

int test_cli(const char *first, ...)
{
	va_list ap;
	int rc;

	va_start(ap, first);
	rc = test_cli_va(test_out, sizeof(test_out), test_err, sizeof(test_err), first, ap);
	va_end(ap);
	return rc;
}

void test_exact_attention(struct ps_attention *att, uint64_t n, uint64_t d,
			  int normalize)
{
	struct ps_attention_params p = {
		.n = n, .d = d, .normalize = normalize != 0, .exact = true,
	};
	struct ps_error err;

	ps_error_clear(&err);
	ck_assert_msg(ps_attention_init(att, &p, &err) == 0, "%s", err.msg);
}

void test_engine_setup(struct ps_attention *att, struct ps_engine *eng,
		       uint64_t n, uint64_t d, uint64_t g, int normalize,
		       uint64_t M)
{
	struct ps_error err;

	test_attention(att, n, d, g, normalize);
	ck_assert_msg(ps_engine_init(eng, &att->dag, M, &err) == 0, "%s", err.msg);
}

void test_engine_teardown(struct ps_attention *att, struct ps_engine *eng)
{
	ps_engine_free(eng);
	ps_attention_free(att);
}

bool test_grid_small(void)
{
	const char *grid = getenv("PS_TEST_GRID");

	return grid && !strcmp(grid, "small");
}

void test_dir_make(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "/tmp/pebblesim-%s-XXXXXX", name);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

void test_dir_enter(char *dir, size_t len, char *cwd, size_t cwd_len, const char *name)
{
	test_dir_make(dir, len, name);
	ck_assert_ptr_nonnull(getcwd(cwd, cwd_len));
	/* the tests run in it, and so do gnuplot's private directories */
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
}

void test_dir_leave(const char *dir, const char *cwd)
{
	ck_assert_int_eq(chdir(cwd), 0);
	test_dir_remove(dir);
}

void test_dir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (unlink(path))
				rmdir(path); /* an empty directory, a fake gnuplot's bin */
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

bool test_by_array_equal(const struct ps_dag *dag, const struct ps_array_io *measured,
			 const struct ps_array_io *predicted, char *why, size_t len)
{
	for (unsigned a = 0; a < PS_ARRAY_MAX; a++) {
		const char *name, *found = "an array the DAG does not list";
		unsigned at;

		if (measured[a].loads == predicted[a].loads &&
		    measured[a].saves == predicted[a].saves)
			continue;
		for (unsigned k = 0; (name = ps_dag_array_at(dag, k, &at)); k++)
			if (at == a)
				found = name;
		snprintf(why, len, "%s: measured %llu loads + %llu saves, predicted %llu + %llu",
			 found,
			 (unsigned long long)measured[a].loads,
			 (unsigned long long)measured[a].saves,
			 (unsigned long long)predicted[a].loads,
			 (unsigned long long)predicted[a].saves);
		return false;
	}
	return true;
}

void test_sweep_row(struct ps_sweep_row *r, const char *label, uint64_t value, uint64_t io)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->label, sizeof(r->label), "%s", label);
	r->value = value;
	r->io = io;
	r->ran = true;
}

int test_cli_run(char **argv, char *out_text, size_t out_len, char *err_text,
		 size_t err_len)
{
	FILE *out = tmpfile(), *err = tmpfile();
	int argc = 0, rc;

	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(err);
	while (argv[argc])
		argc++;
	rc = ps_cli_main(argc, argv, out, err);
	test_slurp(out, out_text, out_len);
	test_slurp(err, err_text, err_len);
	return rc;
}

/*
 * The suites, the slowest first (processor seconds of make check on two
 * cores, which the runner prints): the workers take them in this order,
 * each the next one left, so that the long ones start at once and the
 * short ones fill the gaps (longest-processing-time first).
 */
static const struct test_suite {
	const char *name; /* as its suite_create names it */
	Suite *(*make)(void);
} test_suites[] = {
	{ "strategies", strategies_suite },
	{ "generic", generic_suite },
	{ "cli", cli_suite },
	{ "plot", plot_suite },
	{ "golden", golden_suite },
	{ "optimal", optimal_suite },
	{ "polynomial", polynomial_suite },
	{ "colpass", colpass_suite },
	{ "block", block_suite },
	{ "hostile", hostile_suite },
	{ "untrusted", untrusted_suite },
	{ "outputs", outputs_suite },
	{ "exact", exact_suite },
	{ "bounds", bounds_suite },
	{ "trace", trace_suite },
	{ "tools", tools_suite },
	{ "explicit", explicit_suite },
	{ "values", values_suite },
	{ "dag", dag_suite },
	{ "plugin", plugin_suite },
	{ "sweep", sweep_suite },
	{ "by_array", by_array_suite },
	{ "view", view_suite },
	{ "ops", ops_suite },
	{ "monomial", monomial_suite },
	{ "engine", engine_suite },
	{ "causal", causal_suite },
};
#define TEST_SUITES (sizeof(test_suites) / sizeof(test_suites[0]))

/* What a worker reports of its suite through its pipe. */
struct test_count {
	int run, failed;
};

/* One worker: its suite, its output and its report. */
struct test_worker {
	pid_t pid;
	const struct test_suite *suite;
	FILE *log;
	int report; /* the read end of its pipe */
	double start;
};

static double test_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* User and system seconds of a getrusage. */
static double test_seconds(const struct rusage *ru)
{
	return ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
	       ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

/* Runs suites [0, count) in one runner, in this process; the failures. */
static int test_run_serial(const struct test_suite *suites, size_t count,
			   struct test_count *c)
{
	SRunner *sr = srunner_create(suites[0].make());

	for (size_t k = 1; k < count; k++)
		srunner_add_suite(sr, suites[k].make());
	srunner_run_all(sr, CK_ENV);
	c->run = srunner_ntests_run(sr);
	c->failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return c->failed;
}

/* Check's log files of a worker: each name with ".SUITE" appended. */
static void test_log_names(const char *suite)
{
	static const char *const vars[] = {
		"CK_LOG_FILE_NAME", "CK_XML_LOG_FILE_NAME", "CK_TAP_LOG_FILE_NAME",
	};
	char name[4096];

	for (size_t k = 0; k < sizeof(vars) / sizeof(vars[0]); k++) {
		const char *given = getenv(vars[k]);

		if (given && *given) {
			snprintf(name, sizeof(name), "%s.%s", given, suite);
			setenv(vars[k], name, 1);
		}
	}
}

/* Starts a worker on suite: its standard output and error go to its log,
 * its counts to its pipe. 0, or -1 with errno. */
static int test_worker_start(struct test_worker *w, const struct test_suite *suite)
{
	int fds[2];

	w->suite = suite;
	w->log = tmpfile();
	if (!w->log)
		return -1;
	if (pipe(fds)) {
		fclose(w->log);
		return -1;
	}
	fflush(NULL); /* nothing buffered is written twice */
	w->start = test_now();
	w->pid = fork();
	if (w->pid < 0) {
		fclose(w->log);
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (w->pid == 0) {
		struct test_count c;

		close(fds[0]);
		test_log_names(suite->name);
		if (dup2(fileno(w->log), STDOUT_FILENO) < 0 ||
		    dup2(fileno(w->log), STDERR_FILENO) < 0)
			_exit(3);
		test_run_serial(suite, 1, &c);
		fflush(NULL);
		if (write(fds[1], &c, sizeof(c)) != (ssize_t)sizeof(c))
			_exit(3);
		_exit(c.failed ? EXIT_FAILURE : EXIT_SUCCESS);
	}
	close(fds[1]);
	w->report = fds[0];
	return 0;
}

/* The worker that ended with status and usage: its output as one block,
 * its counts added to total. 0, or 1 if it failed or did not report. */
static int test_worker_end(struct test_worker *w, int status, double processor,
			   struct test_count *total)
{
	struct test_count c = { 0, 0 };
	char buf[4096];
	size_t got;
	bool reported = read(w->report, &c, sizeof(c)) == (ssize_t)sizeof(c);

	close(w->report);
	/* a suite that CK_RUN_CASE left without a test is not shown */
	if (!reported || c.run > 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("---- %s: %.1f s, %.1f s of processor\n", w->suite->name,
		       test_now() - w->start, processor);
		rewind(w->log);
		while ((got = fread(buf, 1, sizeof(buf), w->log)) > 0)
			fwrite(buf, 1, got, stdout);
	}
	fclose(w->log);
	if (WIFSIGNALED(status))
		printf("%s: the worker was killed by signal %d\n", w->suite->name,
		       WTERMSIG(status));
	else if (!reported)
		printf("%s: the worker exited with status %d without its counts\n",
		       w->suite->name, WEXITSTATUS(status));
	fflush(stdout);
	if (!reported)
		return 1;
	total->run += c.run;
	total->failed += c.failed;
	return c.failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/*
 * PS_TEST_JOBS=N: the suites run in N worker processes at a time, one
 * suite a worker (default: the processors online); a worker writes
 * Check's log files (CK_LOG_FILE_NAME, CK_XML_LOG_FILE_NAME,
 * CK_TAP_LOG_FILE_NAME) with ".SUITE" appended to their names. With
 * N = 1 or with CK_RUN_SUITE they run in one runner in this process, as
 * srunner_run_all runs them.
 */
static int test_jobs(void)
{
	const char *text = getenv("PS_TEST_JOBS");
	char *end;
	long jobs;

	if (getenv("CK_RUN_SUITE"))
		return 1;
	if (!text || !*text) {
		jobs = sysconf(_SC_NPROCESSORS_ONLN);
		return jobs < 1 ? 1 : jobs > (long)TEST_SUITES ? (int)TEST_SUITES : (int)jobs;
	}
	errno = 0;
	jobs = strtol(text, &end, 10);
	if (errno || *end || jobs < 1 || jobs > 256)
		return -1;
	return jobs > (long)TEST_SUITES ? (int)TEST_SUITES : (int)jobs;
}

int main(void)
{
	struct test_worker workers[TEST_SUITES];
	struct test_count total = { 0, 0 };
	struct rusage before, after;
	int jobs = test_jobs(), running = 0, failed = 0;
	size_t next = 0, workers_failed = 0;
	double start = test_now();

	memset(workers, 0, sizeof(workers));
	getrusage(RUSAGE_CHILDREN, &before);
	if (jobs < 0) {
		fprintf(stderr, "pebblesim-tests: PS_TEST_JOBS '%s' is not a number of workers from 1 to 256\n",
			getenv("PS_TEST_JOBS"));
		return 2;
	}
	if (jobs == 1)
		return test_run_serial(test_suites, TEST_SUITES, &total) ? EXIT_FAILURE : EXIT_SUCCESS;
	while (next < TEST_SUITES || running > 0) {
		int status;
		pid_t pid;

		while (running < jobs && next < TEST_SUITES) {
			struct test_worker *w = NULL;

			for (int k = 0; k < jobs && !w; k++)
				if (!workers[k].suite)
					w = &workers[k];
			if (test_worker_start(w, &test_suites[next])) {
				fprintf(stderr, "pebblesim-tests: cannot start a worker for %s: %s\n",
					test_suites[next].name, strerror(errno));
				w->suite = NULL;
				failed = 1;
				next = TEST_SUITES; /* the others that run are waited for */
				break;
			}
			next++;
			running++;
		}
		if (running == 0)
			break;
		pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "pebblesim-tests: wait: %s\n", strerror(errno));
			return EXIT_FAILURE;
		}
		/* the processor time of the children reaped so far: this one's is
		 * the difference (its own children's included) */
		getrusage(RUSAGE_CHILDREN, &after);
		for (int k = 0; k < jobs; k++)
			if (workers[k].suite && workers[k].pid == pid) {
				if (test_worker_end(&workers[k], status,
						    test_seconds(&after) - test_seconds(&before), &total)) {
					failed = 1;
					workers_failed++;
				}
				workers[k].suite = NULL;
				running--;
			}
		before = after;
	}
	printf("pebblesim-tests: %d checks on %d workers, %d of them failed, %zu of %zu suites failed; %.1f s\n",
	       total.run, jobs, total.failed, workers_failed, TEST_SUITES, test_now() - start);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
