/*
 * make bench: times representative runs of the pebblesim binary, each in a
 * child process so that its peak resident memory is its own, and prints
 * one table (medians of RUNS runs, the jobs taken in turn so that noise
 * falls on every row alike). The table is also written as JSON.
 *
 *   pebblesim-bench PEBBLESIM_BINARY OUT.json [RUNS [BASELINE_BINARY]]
 *   pebblesim-bench --startup [-r RUNS] PEBBLESIM_BINARY [OTHER_BINARY...]
 *       (the start-up table alone, other binaries side by side)
 *   pebblesim-bench --dry-run-check PEBBLESIM_BINARY   (the memory check alone)
 *   pebblesim-bench --report-cost PEBBLESIM_BINARY   (the cheaper strategy line alone)
 *
 * Rows: the headline run (Case II) with the block path and move by move
 * (their ratio is the block path's speed-up); replaying the headline's
 * trace; the headline with values (--values, docs/VALUES.md: the outputs
 * computed and set beside a direct evaluation), whose ratio to the first
 * row is the overhead of values; n from 1024 to 262144 with d, g, M of the
 * headline, for the time per move; flash (exact attention) at n = 4096,
 * 16384 and 65536; generic, caseI, matmul and colpass at n = 65536;
 * subtile (Lemma 3.3) and Case IV's matmul at n = 16384 and 65536, set
 * beside Case II's rate per move; every rate at n = 65536 in moves a
 * second; and for each, the memory
 * --dry-run predicted. With a baseline binary (make bench
 * BASELINE=path), the rows marked for it are also timed with that binary,
 * in the same rounds, and the ratios printed. Then the
 * other paths: a DAG read from GraphML and pebbled, and the GraphML read
 * alone by pebblesim's reader and by igraph's; an
 * elementary trace replayed with the fast line reader and with jansson
 * alone; the naive baseline; colpass at the four points of n >= 1024 of
 * least known I/O, each run failing the bench when it moves more. The rows that compare two readers run this
 * program itself (pebblesim-bench --reader ...), which times the
 * library's call alone. Then, once, the sweep of docs/EXACT.md (flash
 * beside the approximate strategies, n from 1024 to 16384, two jobs at a
 * time). Then the memory check: each strategy once on a grid of n from
 * 4096 to 131072 (DRY_RUN_GRID), its --dry-run estimate against the peak
 * resident set its run reached (teardown included), failing the bench
 * when one is off by more than 20%. Then the headline's "cheaper strategy"
 * line: callgrind's instructions inside ps_report_cheapest over the rest
 * of the run's, failing the bench above 5% (with valgrind,
 * PS_BENCH_VALGRIND). Last, the start-up: `--version`, two
 * small runs of the approximate DAG and one of exact attention, and a
 * small explicit DAG (which opens igraph), STARTUP_RUNS times each, in
 * turn, with the median wall time and the median processor time (user
 * and system, from wait4: the figure that other jobs on the machine
 * disturb least), beside an empty dynamically linked program
 * (PS_BENCH_EMPTY), with the ratio of the two. --startup sets other
 * binaries beside one (an earlier build, empty C programs for the
 * machine's floor). Beside validate and values, in the same rounds: jq
 * parsing the headline's trace (`jq empty`, PS_BENCH_JQ) and NumPy
 * evaluating the headline's values (bench/values_numpy.py, with
 * PS_BENCH_PYTHON: the DAG's macs and the two direct evaluations
 * --values sets them beside), each set as a ratio to pebblesim doing the
 * same work (the trace's bytes parsed; the same values, --values' time
 * over the run without them). Every table names the commit measured
 * (PS_BENCH_COMMIT).
 */
#define _DEFAULT_SOURCE /* wait4, for the child's own peak RSS */

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pebblesim/explicit.h"
#include "pebblesim/trace.h"

#define TRACE_PATH "build/bench-headline.jsonl"
#define DAG_PATH "build/bench-dag.graphml"
#define ELEMENTARY_PATH "build/bench-elementary.jsonl"
#define HDAG_PATH "build/bench-dag.hdag"

struct job {
	const char *name;
	const char *n;
	const char *args[20]; /* after the binary */
	bool self;            /* args go to this program: --reader ... */
	uint64_t io_max;      /* the least I/O known there: the run must not
			       * move more (0: none) */
	bool baseline;        /* also timed with the baseline binary, if any */
};

#define COLPASS(n, M) { "--strategy", "colpass", "-n", n, "-d", "16", "-g", "3", "-M", M, \
			"--json", NULL }
#define RUN(n) { "--case", "II", "-n", n, "-d", "16", "-g", "3", "-M", "8192", "--json", NULL }
#define STRATEGY(s, n) { "--strategy", s, "-n", n, "-d", "16", "-g", "3", "-M", "8192", \
			"--json", NULL }
#define SUBTILE(n) STRATEGY("subtile", n)
#define CASE_IV(n) { "--case", "IV", "-n", n, "-d", "8", "-g", "3", "-M", "16", "--json", NULL }

/*
 * A HyperdagDB file of n vertices, as OneStopParallel writes one: the
 * first 50 sources, every other vertex reading one to three of the 200
 * before it (a fixed random sequence), so that it looks like the sparse
 * kernels of OneStopParallel's data set. 0, or -1 when it cannot be written.
 */
static int write_hdag(const char *path, unsigned n)
{
	unsigned *par = calloc((size_t)n * 3, sizeof(unsigned)), *deg = calloc(n, sizeof(unsigned));
	unsigned *children = calloc(n, sizeof(unsigned)), hyperedges = 0, pins = 0;
	uint64_t seed = 12345;
	FILE *f = fopen(path, "w");
	int rc = 0;

	if (!par || !deg || !children || !f) {
		rc = -1;
		goto out;
	}
	for (unsigned v = 50; v < n; v++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		for (unsigned k = 0, want = 1 + (unsigned)((seed >> 33) % 3); k < want; k++) {
			unsigned u;

			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			u = v - 1 - (unsigned)((seed >> 33) % (v < 200 ? v : 200));
			for (unsigned q = 0; q < deg[v]; q++)
				if (par[3 * v + q] == u)
					u = n;
			if (u < n) {
				par[3 * v + deg[v]++] = u;
				children[u]++;
			}
		}
	}
	for (unsigned v = 0; v < n; v++)
		if (children[v]) {
			hyperedges++;
			pins += 1 + children[v];
		}
	fprintf(f, "%%%% HyperdagDB format written by pebblesim-bench\n%u %u %u\n", hyperedges, n, pins);
	for (unsigned h = 0; h < hyperedges; h++)
		fprintf(f, "%u 1 1\n", h);
	for (unsigned v = 0; v < n; v++)
		fprintf(f, "%u 1 0\n", v);
	/* hyperedge h: the h-th vertex with children, its source first */
	for (unsigned v = 0, h = 0; v < n; v++) {
		if (!children[v])
			continue;
		fprintf(f, "%u %u\n", h, v);
		for (unsigned w = v + 1; w < n; w++)
			for (unsigned q = 0; q < deg[w]; q++)
				if (par[3 * w + q] == v)
					fprintf(f, "%u %u\n", h, w);
		h++;
	}
	if (ferror(f))
		rc = -1;
out:
	if (f && fclose(f))
		rc = -1;
	free(par);
	free(deg);
	free(children);
	return rc;
}

static const struct job jobs[] = {
	{ "headline (block path)", "4096", RUN("4096"), false, 0, true },
	{ "headline (element path)", "4096",
	  { "--case", "II", "-n", "4096", "-d", "16", "-g", "3", "-M", "8192", "--json",
	    "--element-path", NULL }, false, 0, false },
	{ "validate headline trace", "4096", { "validate", TRACE_PATH, "--json", NULL }, false, 0, false },
	{ "headline with values", "4096",
	  { "--case", "II", "-n", "4096", "-d", "16", "-g", "3", "-M", "8192", "--json",
	    "--values", NULL }, false, 0, false },
	{ "Case II", "1024", RUN("1024"), false, 0, false },
	{ "Case II", "16384", RUN("16384"), false, 0, false },
	{ "Case II", "65536", RUN("65536"), false, 0, false },
	{ "Case II", "262144", RUN("262144"), false, 0, false },
	/* exact attention, FlashAttention's tiling (docs/EXACT.md) */
	{ "flash", "4096", { "--attention", "exact", "-n", "4096", "-d", "16", "-M", "8192",
			     "--json", NULL }, false, 0, false },
	{ "flash", "16384", { "--attention", "exact", "-n", "16384", "-d", "16", "-M", "8192",
			      "--json", NULL }, false, 0, false },
	{ "flash", "65536", { "--attention", "exact", "-n", "65536", "-d", "16", "-M", "8192",
			      "--json", NULL }, false, 0, true },
	/* the other tilings of the paper: Lemma 3.3's sub-tiles (Case III)
	 * and Theorem 1.4's matrix products (Case IV) */
	/* every strategy of approximate attention that is no cache policy at
	 * n = 65536, for its rate (keylemma is Case II's; resident's moves
	 * grow as n^2: docs/PERFORMANCE.md) */
	{ "generic", "65536", STRATEGY("generic", "65536"), false, 0, false },
	{ "caseI", "65536", STRATEGY("caseI", "65536"), false, 0, false },
	{ "matmul", "65536", STRATEGY("matmul", "65536"), false, 0, false },
	{ "colpass", "65536", COLPASS("65536", "8192"), false, 0, false },
	{ "subtile", "16384", SUBTILE("16384"), false, 0, true },
	{ "subtile", "65536", SUBTILE("65536"), false, 0, false },
	{ "Case IV (matmul)", "16384", CASE_IV("16384"), false, 0, true },
	{ "Case IV (matmul)", "65536", CASE_IV("65536"), false, 0, false },
	/* DAG files: -n 64 -d 8 -g 2 written as GraphML, 27 MB */
	{ "run --dag GraphML (lru)", "64", { "run", "--dag", DAG_PATH, "-M", "64", "--json", NULL }, false, 0, false },
	{ "read GraphML: pebblesim", "64", { "--reader", "dag", DAG_PATH, "fast", NULL }, true, 0, false },
	{ "read GraphML: igraph", "64", { "--reader", "dag", DAG_PATH, "igraph", NULL }, true, 0, false },
	/* a HyperdagDB file of 5000 vertices (write_hdag), the portfolio of
	 * best at M = 100 with a 3 s search: the size of OneStopParallel's
	 * large instances */
	{ "run --dag .hdag --strategy best", "5000",
	  { "run", "--dag", HDAG_PATH, "-M", "100", "--strategy", "best", "--time-limit", "3",
	    "--json", NULL }, false, 0, false },
	/* Case II at n = 32, one line per move */
	{ "elementary: fast lines", "32", { "--reader", "trace", ELEMENTARY_PATH, "fast", NULL }, true, 0, false },
	{ "elementary: jansson", "32", { "--reader", "trace", ELEMENTARY_PATH, "jansson", NULL }, true, 0, false },
	{ "naive", "256", { "-n", "256", "-d", "16", "-g", "3", "-M", "8192", "--strategy", "naive",
			    "--json", NULL }, false, 0, false },
	/* colpass (docs/STRATEGIES.md, beyond the paper) at the points of
	 * least known I/O: it must meet each */
	{ "colpass", "4096", COLPASS("4096", "8192"), false, 483328, false },
	{ "colpass", "1024", COLPASS("1024", "8192"), false, 120832, false },
	{ "colpass M 2048", "4096", COLPASS("4096", "2048"), false, 1347584, false },
	{ "colpass M 32768 (4nd)", "4096", COLPASS("4096", "32768"), false, 262144, false },
};

#define JOBS (sizeof(jobs) / sizeof(jobs[0]))
#define VALUES_ROW 3 /* its time over row 0's: the overhead of values */
#define MAX_RUNS 31

struct sample {
	double wall;
	long rss_kib;
	json_int_t moves;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The commit measured, as make bench names it (PS_BENCH_COMMIT). */
static const char *commit(void)
{
	const char *c = getenv("PS_BENCH_COMMIT");

	return c && *c ? c : "unknown";
}

/* A tool make bench passes by its environment (its path), or NULL. */
static const char *tool(const char *name)
{
	const char *t = getenv(name);

	return t && *t ? t : NULL;
}

/* Runs bin with args (plus extra, if any); its JSON output in *out. */
static int run(const char *bin, bool self, const char *const *args,
	       const char *extra, struct sample *s, json_t **out)
{
	char *argv[24];
	int fd[2], status, argc = 0;
	struct rusage ru;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	double start;
	pid_t pid;
	json_error_t jerr;

	argv[argc++] = (char *)bin;
	if (self)
		bin = "/proc/self/exe";
	for (int k = 0; args[k]; k++)
		argv[argc++] = (char *)args[k];
	if (extra)
		argv[argc++] = (char *)extra;
	argv[argc] = NULL;
	if (pipe(fd))
		return -1;
	/* a child must not write what the parent has not flushed yet */
	fflush(NULL);
	start = now();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		execv(bin, argv);
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		ssize_t got;

		if (len + 4096 > cap) {
			char *grown = realloc(buf, cap = cap * 2 + 8192);

			if (!grown)
				break;
			buf = grown;
		}
		got = read(fd[0], buf + len, cap - len - 1);
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(fd[0]);
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || !buf) {
		free(buf);
		return -1;
	}
	if (s) {
		s->wall = now() - start;
		s->rss_kib = ru.ru_maxrss;
	}
	buf[len] = '\0';
	*out = json_loads(buf, 0, &jerr);
	free(buf);
	return *out ? 0 : -1;
}

/*
 * pebblesim-bench --reader dag FILE fast|igraph: reads a DAG file;
 * --reader trace FILE fast|jansson: replays a trace. Prints {"moves": ...}
 * (0 for a DAG), as the binary's report would.
 */
static int reader(int argc, char **argv)
{
	struct ps_error err;
	int rc;

	if (argc != 5)
		return 2;
	if (!strcmp(argv[2], "dag")) {
		struct ps_explicit x;

		ps_explicit_fast_graphml(!strcmp(argv[4], "fast"));
		rc = ps_explicit_read(&x, argv[3], &err);
		if (!rc)
			ps_explicit_free(&x);
		printf("{\"moves\": 0}\n");
	} else {
		struct ps_replay rep;
		FILE *f = fopen(argv[3], "r");

		if (!f)
			return 2;
		ps_trace_fast_lines(!strcmp(argv[4], "fast"));
		rc = ps_trace_replay(f, argv[3], 0, NULL, NULL, false, &rep, &err);
		fclose(f);
		if (!rc && !rep.valid)
			rc = 1;
		printf("{\"moves\": %llu}\n", (unsigned long long)rep.counts.moves);
		ps_replay_free(&rep);
	}
	if (rc)
		fprintf(stderr, "pebblesim-bench: %s\n", err.msg);
	return rc ? 1 : 0;
}

/* The row of the job named name (at n, when n is given). */
static size_t job_index(const char *name)
{
	size_t j = 0;

	while (j < JOBS && strcmp(jobs[j].name, name))
		j++;
	return j;
}

/* --dry-run against the measured peak: every strategy but the move-by-move
 * baselines (whose tables exceed memory from n = 4096 on: they run at
 * n = 1024) from n = 4096 to 131072, where its run takes at most about a
 * minute (resident's moves grow as n^2, subtile's and Case IV's set
 * operations are the slowest per move; exact-matmul stores n^2 E), and
 * colpass and Case II further, to n = 2^20, in a few seconds each. */
#define APPROX(s, n) { "--strategy", s, "-n", n, "-d", "16", "-g", "3", "-M", "8192", "--json", NULL }
#define EXACT(s, n) { "--attention", "exact", "--strategy", s, "-n", n, "-d", "16", "-M", "8192", \
		      "--json", NULL }

static const struct job dry_run_grid[] = {
	{ "generic", "4096", APPROX("generic", "4096"), false, 0, false },
	{ "generic", "131072", APPROX("generic", "131072"), false, 0, false },
	{ "caseI", "4096", APPROX("caseI", "4096"), false, 0, false },
	{ "caseI", "131072", APPROX("caseI", "131072"), false, 0, false },
	{ "keylemma", "4096", APPROX("keylemma", "4096"), false, 0, false },
	{ "keylemma", "16384", APPROX("keylemma", "16384"), false, 0, false },
	{ "keylemma", "65536", APPROX("keylemma", "65536"), false, 0, false },
	{ "keylemma", "131072", APPROX("keylemma", "131072"), false, 0, false },
	{ "subtile", "4096", APPROX("subtile", "4096"), false, 0, false },
	{ "subtile", "16384", APPROX("subtile", "16384"), false, 0, false },
	{ "matmul", "4096", APPROX("matmul", "4096"), false, 0, false },
	{ "matmul", "16384", APPROX("matmul", "16384"), false, 0, false },
	{ "matmul", "65536", APPROX("matmul", "65536"), false, 0, false },
	{ "matmul", "131072", APPROX("matmul", "131072"), false, 0, false },
	{ "colpass", "4096", APPROX("colpass", "4096"), false, 0, false },
	{ "colpass", "65536", APPROX("colpass", "65536"), false, 0, false },
	{ "colpass", "262144", APPROX("colpass", "262144"), false, 0, false },
	{ "colpass", "1048576", APPROX("colpass", "1048576"), false, 0, false },
	{ "Case II (keylemma)", "1048576",
	  { "--case", "II", "-n", "1048576", "-d", "16", "-g", "3", "-M", "8192", "--json", NULL },
	  false, 0, false },
	{ "best", "4096", APPROX("best", "4096"), false, 0, false },
	{ "best", "131072", APPROX("best", "131072"), false, 0, false },
	{ "resident", "4096", APPROX("resident", "4096"), false, 0, false },
	{ "Case IV (matmul)", "4096", CASE_IV("4096"), false, 0, false },
	{ "Case IV (matmul)", "16384", CASE_IV("16384"), false, 0, false },
	{ "flash", "4096", EXACT("flash", "4096"), false, 0, false },
	{ "flash", "16384", EXACT("flash", "16384"), false, 0, false },
	{ "flash", "131072", EXACT("flash", "131072"), false, 0, false },
	{ "exact-matmul", "4096", EXACT("exact-matmul", "4096"), false, 0, false },
	{ "exact-matmul", "16384", EXACT("exact-matmul", "16384"), false, 0, false },
	{ "naive", "1024", APPROX("naive", "1024"), false, 0, false },
	{ "naive-exact", "1024", EXACT("naive-exact", "1024"), false, 0, false },
};

#define DRY_RUN_JOBS (sizeof(dry_run_grid) / sizeof(dry_run_grid[0]))

/* Each job of the grid once: its estimate and its peak; the rows appended
 * to rows; the number off by more than 20%, or -1 if a run failed. */
static int dry_run_check(const char *bin, json_t *rows)
{
	int off = 0;

	printf("--dry-run against the peak, commit %s\n", commit());
	printf("                                 n   est. MiB   RSS MiB    error\n");
	for (size_t j = 0; j < DRY_RUN_JOBS; j++) {
		const struct job *job = &dry_run_grid[j];
		struct sample s;
		double est, rss, error;
		json_t *doc;

		if (run(bin, false, job->args, "--dry-run", NULL, &doc)) {
			fprintf(stderr, "pebblesim-bench: --dry-run of '%s' n = %s failed\n",
				job->name, job->n);
			return -1;
		}
		est = (double)json_integer_value(json_object_get(doc, "estimated_peak_rss_bytes")) /
		      (1 << 20);
		json_decref(doc);
		if (run(bin, false, job->args, NULL, &s, &doc)) {
			fprintf(stderr, "pebblesim-bench: '%s' n = %s failed\n", job->name, job->n);
			return -1;
		}
		json_decref(doc);
		rss = (double)s.rss_kib / 1024.0;
		error = (est - rss) / rss;
		off += error > 0.2 || error < -0.2;
		printf("  %-24s %7s %10.1f %9.1f %+7.1f%%%s\n", job->name, job->n, est, rss,
		       100.0 * error, error > 0.2 || error < -0.2 ? "  beyond 20%" : "");
		json_array_append_new(rows, json_pack("{s:s, s:s, s:f, s:f, s:f}", "run", job->name,
						      "n", job->n, "estimated_rss_mib", est,
						      "peak_rss_mib", rss, "error", error));
	}
	return off;
}

/*
 * The headline's "cheaper strategy" line: the instructions inside
 * ps_report_cheapest (callgrind --toggle-collect) over those of the rest of
 * the run, by callgrind's counts (exact, unlike times on a shared
 * machine). Fails the bench above 5%. Needs valgrind (PS_BENCH_VALGRIND);
 * the row is skipped without it. 1 when above, 0 when within, -1 when a
 * run failed.
 */
#define REPORT_COST_MAX 0.05
#define CALLGRIND_OUT "build/bench-callgrind.out"

/* The instructions callgrind counts running bin with args (those inside
 * function alone if not NULL), or 0 when it fails. */
static unsigned long long callgrind_count(const char *valgrind, const char *bin,
					  const char *function, const char *const *args)
{
	char toggle[96], *argv[32];
	unsigned long long count = 0;
	int argc = 0, status;
	char line[256];
	FILE *f;
	pid_t pid;

	argv[argc++] = (char *)valgrind;
	argv[argc++] = "--tool=callgrind";
	argv[argc++] = "--callgrind-out-file=" CALLGRIND_OUT;
	if (function) {
		snprintf(toggle, sizeof(toggle), "--toggle-collect=%s", function);
		argv[argc++] = toggle;
	}
	argv[argc++] = (char *)bin;
	for (int k = 0; args[k] && argc < 31; k++)
		argv[argc++] = (char *)args[k];
	argv[argc] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execv(valgrind, argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return 0;
	if (!(f = fopen(CALLGRIND_OUT, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "summary: %llu", &count) == 1)
			break;
	fclose(f);
	remove(CALLGRIND_OUT);
	return count;
}

static int report_cost(const char *bin, json_t *rows)
{
	static const char *const headline[] = {
		"--case", "II", "-n", "4096", "-d", "16", "-g", "3", "-M", "8192", NULL
	};
	const char *valgrind = tool("PS_BENCH_VALGRIND");
	unsigned long long total, line;
	double ratio;

	printf("the headline's cheaper strategy line, callgrind's instructions, commit %s\n",
	       commit());
	if (!valgrind) {
		printf("  skipped: no valgrind (PS_BENCH_VALGRIND)\n");
		return 0;
	}
	total = callgrind_count(valgrind, bin, NULL, headline);
	line = callgrind_count(valgrind, bin, "ps_report_cheapest", headline);
	if (!total || !line || line >= total) {
		fprintf(stderr, "pebblesim-bench: callgrind of the headline failed\n");
		return -1;
	}
	ratio = (double)line / (double)(total - line);
	printf("  run %llu, of which the line %llu: %.2f%% of the run without it (at most %.0f%%)%s\n",
	       total, line, 100.0 * ratio, 100.0 * REPORT_COST_MAX,
	       ratio > REPORT_COST_MAX ? "  beyond" : "");
	json_object_set_new(rows, "total_instructions", json_integer((json_int_t)total));
	json_object_set_new(rows, "line_instructions", json_integer((json_int_t)line));
	json_object_set_new(rows, "ratio", json_real(ratio));
	return ratio > REPORT_COST_MAX;
}

#define STARTUP_RUNS 101
#define STARTUP_MAX_RUNS 1001
#define STARTUP_BINARIES 8

static const struct {
	const char *name;
	const char *args[14];
} startup_jobs[] = {
	{ "--version", { "--version", NULL } },
	{ "approximate attention, n = 16", { "-n", "16", "-d", "2", "-g", "1", "-M", "100", NULL } },
	{ "approximate attention, n = 64", { "-n", "64", "-d", "4", "-g", "2", "-M", "64", NULL } },
	{ "exact attention, n = 16", { "--attention", "exact", "-n", "16", "-d", "2", "-M", "100", NULL } },
	{ "explicit DAG (igraph)", { "run", "--dag", "examples/tree.graphml", "-M", "5", NULL } },
};

#define STARTUP_JOBS (sizeof(startup_jobs) / sizeof(startup_jobs[0]))

/* One run of bin with args, its output discarded: wall and processor
 * seconds in *wall and *cpu; -1 if it failed. */
static int run_quiet(const char *bin, const char *const *args, double *wall, double *cpu)
{
	char *argv[16];
	int status, argc = 0;
	struct rusage ru;
	double start = now();
	pid_t pid;

	argv[argc++] = (char *)bin;
	for (int k = 0; args[k]; k++)
		argv[argc++] = (char *)args[k];
	argv[argc] = NULL;
	/* freopen in the child would flush the parent's pending output
	 * once more: flushed here, before the fork */
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execv(bin, argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	*wall = now() - start;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	return 0;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The start-up table of bins[0] and, beside it, of each other binary
 * (an earlier build, or an empty C program, which ignores its arguments:
 * the machine's own floor). Each round runs every job with every binary
 * in turn, so that the machine's load falls on all alike. The rows are
 * appended to rows as JSON.
 */
static int startup(const char *const *bins, int count, int runs, json_t *rows)
{
	const size_t cells = STARTUP_JOBS * (size_t)count;
	double *wall = calloc(cells * (size_t)runs, sizeof(double));
	double *cpu = calloc(cells * (size_t)runs, sizeof(double));
	int rc = 0;

	if (!wall || !cpu) {
		free(wall);
		free(cpu);
		return -1;
	}
	for (int r = 0; r < runs && !rc; r++)
		for (size_t j = 0; j < STARTUP_JOBS && !rc; j++)
			for (int b = 0; b < count && !rc; b++) {
				size_t at = ((size_t)j * (size_t)count + (size_t)b) * (size_t)runs +
					    (size_t)r;

				if (run_quiet(bins[b], startup_jobs[j].args, &wall[at], &cpu[at])) {
					fprintf(stderr, "pebblesim-bench: start-up '%s' of %s failed\n",
						startup_jobs[j].name, bins[b]);
					rc = -1;
				}
			}
	if (!rc) {
		printf("start-up on commit %s, median of %d runs each: wall ms / cpu ms%s\n", commit(),
		       runs, count > 1 ? "; then [1] over the last, wall / cpu" : "");
		for (int b = 0; b < count; b++)
			printf("  [%d] %s\n", b + 1, bins[b]);
		printf("  %-32s", "");
		for (int b = 0; b < count; b++)
			printf("  %13s%-2d", "[", b + 1);
		printf("\n");
		for (size_t j = 0; j < STARTUP_JOBS; j++) {
			double first_w = 0, first_c = 0, w = 0, c = 0;

			printf("  %-32s", startup_jobs[j].name);
			for (int b = 0; b < count; b++) {
				size_t at = ((size_t)j * (size_t)count + (size_t)b) * (size_t)runs;

				qsort(wall + at, (size_t)runs, sizeof(double), by_double);
				qsort(cpu + at, (size_t)runs, sizeof(double), by_double);
				w = wall[at + (size_t)runs / 2] * 1e3;
				c = cpu[at + (size_t)runs / 2] * 1e3;
				if (!b) {
					first_w = w;
					first_c = c;
				}
				printf("  %7.2f / %5.2f", w, c);
				json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:i, s:f, s:f}", "run",
								      startup_jobs[j].name, "binary", bins[b],
								      "commit", commit(), "runs", runs,
								      "median_wall_ms", w, "median_cpu_ms", c));
			}
			if (count > 1 && w > 0 && c > 0)
				printf("  %5.2f / %4.2f", first_w / w, first_c / c);
			printf("\n");
		}
	}
	free(wall);
	free(cpu);
	return rc;
}

/* pebblesim-bench --startup [-r RUNS] BINARY [OTHER_BINARY...] */
static int startup_command(int argc, char **argv)
{
	json_t *rows = json_array();
	int runs = STARTUP_RUNS, first = 2, rc;

	if (argc > 3 && !strcmp(argv[2], "-r")) {
		runs = atoi(argv[3]);
		first = 4;
	}
	if (runs < 1 || runs > STARTUP_MAX_RUNS || argc - first < 1 ||
	    argc - first > STARTUP_BINARIES) {
		fprintf(stderr,
			"usage: pebblesim-bench --startup [-r RUNS <= %d] BINARY [OTHER_BINARY...] (at most %d)\n",
			STARTUP_MAX_RUNS, STARTUP_BINARIES);
		json_decref(rows);
		return 2;
	}
	rc = startup((const char *const *)argv + first, argc - first, runs, rows);
	json_decref(rows);
	return rc ? 1 : 0;
}

static size_t job_at(const char *name, const char *n)
{
	size_t j = 0;

	while (j < JOBS && (strcmp(jobs[j].name, name) || strcmp(jobs[j].n, n)))
		j++;
	return j;
}

/* Moves a second of row j, from its median sample. */
static double rate(const struct sample *s, int runs)
{
	return (double)s[runs / 2].moves / s[runs / 2].wall;
}

static int by_wall(const void *a, const void *b)
{
	double x = ((const struct sample *)a)->wall, y = ((const struct sample *)b)->wall;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static struct sample samples[JOBS][MAX_RUNS], before[JOBS][MAX_RUNS];
	const char *baseline = argc > 4 ? argv[4] : NULL;
	static const char *const trace_args[] = {
		"--case", "II", "-n", "4096", "-d", "16", "-g", "3", "-M", "8192", "--json",
		"--trace", TRACE_PATH, NULL
	};
	static const char *const sweep_args[] = {
		"sweep", "-n", "1024:16384:x2", "-d", "16", "-g", "3", "-M", "8192",
		"--strategies", "flash,keylemma,caseI,generic", "-j", "2", "--json", NULL
	};
	double estimate[JOBS] = { 0 }, median[JOBS], sweep_seconds;
	int runs = argc > 3 ? atoi(argv[3]) : 5;
	json_t *table = json_array(), *startup_rows = json_array(), *dry_rows = json_array(), *doc;
	json_t *cost = json_object();
	int dry_off, cost_over = 0;
	const char *jq = tool("PS_BENCH_JQ"), *python = tool("PS_BENCH_PYTHON");
	static const char *const jq_args[] = { "empty", TRACE_PATH, NULL };
	static const char *const numpy_args[] = { "bench/values_numpy.py", "4096", "16", "3", NULL };
	static double jq_wall[MAX_RUNS], numpy_seconds[MAX_RUNS];
	json_int_t numpy_macs = 0, values_macs = 0;
	double validate_over_jq, values_seconds, values_over_numpy;

	static const char *const dag_args[] = {
		"dag", "-n", "64", "-d", "8", "-g", "2", "-o", DAG_PATH, NULL
	};
	static const char *const elementary_args[] = {
		"--case", "II", "-n", "32", "-d", "16", "-g", "3", "-M", "8192", "--json",
		"--trace-detail", "elementary", "--trace", ELEMENTARY_PATH, NULL
	};

	if (argc > 1 && !strcmp(argv[1], "--reader"))
		return reader(argc, argv);
	/* pebblesim-bench --startup BINARY: the start-up table alone, of any
	 * binary (an earlier build's, to compare) */
	if (argc == 3 && !strcmp(argv[1], "--dry-run-check")) {
		int off = dry_run_check(argv[2], dry_rows);

		json_decref(dry_rows);
		json_decref(startup_rows);
		json_decref(table);
		return off ? 1 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--report-cost")) {
		json_t *cost = json_object();
		int over = report_cost(argv[2], cost);

		json_decref(cost);
		json_decref(dry_rows);
		json_decref(startup_rows);
		json_decref(table);
		return over ? 1 : 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "--startup")) {
		json_decref(dry_rows);
		json_decref(startup_rows);
		json_decref(table);
		return startup_command(argc, argv);
	}
	if (argc < 3 || runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr,
			"usage: pebblesim-bench PEBBLESIM_BINARY OUT.json [RUNS <= %d [BASELINE_BINARY]]\n",
			MAX_RUNS);
		return 2;
	}
	if (run(argv[1], false, trace_args, NULL, NULL, &doc)) {
		fprintf(stderr, "pebblesim-bench: cannot write the headline trace\n");
		return 1;
	}
	json_decref(doc);
	if (run(argv[1], false, elementary_args, NULL, NULL, &doc)) {
		fprintf(stderr, "pebblesim-bench: cannot write the elementary trace\n");
		return 1;
	}
	json_decref(doc);
	/* dag -o prints no JSON: its file is checked by the rows that read it */
	run(argv[1], false, dag_args, NULL, NULL, &doc);
	if (write_hdag(HDAG_PATH, 5000)) {
		fprintf(stderr, "pebblesim-bench: cannot write %s\n", HDAG_PATH);
		return 1;
	}
	/* the memory each run should take, by --dry-run */
	for (size_t j = 0; j < JOBS; j++) {
		if (jobs[j].self || !strcmp(jobs[j].args[0], "validate") ||
		    !strcmp(jobs[j].args[0], "run") || j == VALUES_ROW)
			continue;
		if (run(argv[1], false, jobs[j].args, "--dry-run", NULL, &doc)) {
			fprintf(stderr, "pebblesim-bench: --dry-run of '%s' failed\n", jobs[j].name);
			return 1;
		}
		estimate[j] = (double)json_integer_value(
			json_object_get(doc, "estimated_peak_rss_bytes")) / (1 << 20);
		json_decref(doc);
	}
	if (!jq || !python) {
		fprintf(stderr, "pebblesim-bench: %s is missing (make bench passes PS_BENCH_JQ and PS_BENCH_PYTHON; apt-get install jq python3-numpy)\n",
			!jq ? "jq" : "Python");
		return 1;
	}
	fprintf(stderr, "pebblesim-bench: %d runs of %zu jobs...\n", runs, JOBS);
	for (int r = 0; r < runs; r++) {
		double cpu;

		/* beside validate and values, in the same rounds: jq parsing the
		 * same trace, NumPy evaluating the same values */
		if (run_quiet(jq, jq_args, &jq_wall[r], &cpu)) {
			fprintf(stderr, "pebblesim-bench: '%s empty %s' failed\n", jq, TRACE_PATH);
			return 1;
		}
		if (run(python, false, numpy_args, NULL, NULL, &doc)) {
			fprintf(stderr, "pebblesim-bench: bench/values_numpy.py failed (NumPy: apt-get install python3-numpy)\n");
			return 1;
		}
		numpy_seconds[r] = json_real_value(json_object_get(doc, "seconds"));
		numpy_macs = json_integer_value(json_object_get(doc, "macs"));
		json_decref(doc);
		for (size_t j = 0; j < JOBS; j++) {
			if (run(argv[1], jobs[j].self, jobs[j].args, NULL, &samples[j][r], &doc)) {
				fprintf(stderr, "pebblesim-bench: '%s' n = %s failed\n",
					jobs[j].name, jobs[j].n);
				return 1;
			}
			samples[j][r].moves = json_integer_value(json_object_get(doc, "moves"));
			if (baseline && jobs[j].baseline) {
				json_t *was;

				if (run(baseline, false, jobs[j].args, NULL, &before[j][r], &was)) {
					fprintf(stderr, "pebblesim-bench: '%s' n = %s failed with '%s'\n",
						jobs[j].name, jobs[j].n, baseline);
					return 1;
				}
				before[j][r].moves =
					json_integer_value(json_object_get(was, "moves"));
				json_decref(was);
			}
			if (jobs[j].io_max &&
			    (uint64_t)json_integer_value(json_object_get(doc, "io")) > jobs[j].io_max) {
				fprintf(stderr, "pebblesim-bench: '%s' n = %s moves %lld, more than %llu\n",
					jobs[j].name, jobs[j].n,
					(long long)json_integer_value(json_object_get(doc, "io")),
					(unsigned long long)jobs[j].io_max);
				return 1;
			}
			if (j == VALUES_ROW)
				values_macs = json_integer_value(json_object_get(doc, "macs"));
			json_decref(doc);
		}
	}
	printf("make bench on commit %s, %d runs, medians\n", commit(), runs);
	printf("%-26s %7s %9s %9s %9s %12s %9s %8s\n", "run", "n", "median s",
	       "RSS MiB", "est. MiB", "moves", "Mmoves/s", "ns/move");
	for (size_t j = 0; j < JOBS; j++) {
		struct sample *s = samples[j];
		long rss = 0;
		json_t *row;

		for (int r = 0; r < runs; r++)
			rss = s[r].rss_kib > rss ? s[r].rss_kib : rss;
		qsort(s, (size_t)runs, sizeof(*s), by_wall);
		median[j] = s[runs / 2].wall;
		printf("%-26s %7s %9.3f %9.1f %9.1f", jobs[j].name, jobs[j].n, median[j],
		       (double)rss / 1024.0, estimate[j]);
		if (s[runs / 2].moves) /* reading a DAG makes none */
			printf(" %12lld %9.1f %8.2f", (long long)s[runs / 2].moves,
			       (double)s[runs / 2].moves / median[j] / 1e6,
			       median[j] * 1e9 / (double)s[runs / 2].moves);
		printf("\n");
		/* n is a number in the JSON, as in every report */
		row = json_pack("{s:s, s:I, s:i, s:f, s:f, s:f, s:f, s:I, s:f}",
				"run", jobs[j].name,
				"n", (json_int_t)strtoll(jobs[j].n, NULL, 10), "runs", runs,
				"median_seconds", median[j], "min_seconds", s[0].wall,
				"peak_rss_mib", (double)rss / 1024.0,
				"estimated_rss_mib", estimate[j],
				"moves", s[runs / 2].moves,
				"moves_per_second", (double)s[runs / 2].moves / median[j]);
		json_array_append_new(table, row);
	}
	printf("block path / element path, headline: %.1f times faster\n",
	       median[1] / median[0]);
	{
		const size_t keylemma = job_at("Case II", "65536");

		for (size_t j = 0; j < JOBS; j++)
			if (!strcmp(jobs[j].n, "65536") &&
			    (!strcmp(jobs[j].name, "subtile") ||
			     !strcmp(jobs[j].name, "Case IV (matmul)")))
				printf("Case II / %s, rate per move, n = 65536: %.2f\n", jobs[j].name,
				       rate(samples[keylemma], runs) / rate(samples[j], runs));
		/* against the floor of docs/PERFORMANCE.md: 500 M moves a
		 * second for every strategy that is no cache policy */
		for (size_t j = 0; j < JOBS; j++)
			if (!strcmp(jobs[j].n, "65536") && !jobs[j].self)
				printf("%s, n = 65536: %.0f M moves/s\n", jobs[j].name,
				       rate(samples[j], runs) / 1e6);
	}
	for (size_t j = 0; baseline && j < JOBS; j++) {
		if (!jobs[j].baseline)
			continue;
		qsort(before[j], (size_t)runs, sizeof(before[j][0]), by_wall);
		printf("%s n = %s: baseline %.3f s, now %.3f s, %.2f times faster%s\n",
		       jobs[j].name, jobs[j].n, before[j][runs / 2].wall, median[j],
		       before[j][runs / 2].wall / median[j],
		       before[j][runs / 2].moves == samples[j][runs / 2].moves ? "" :
		       " (moves differ)");
	}
	{
		struct sample sw;

		if (run(argv[1], false, sweep_args, NULL, &sw, &doc)) {
			fprintf(stderr, "pebblesim-bench: the sweep failed\n");
			return 1;
		}
		json_decref(doc);
		sweep_seconds = sw.wall;
		printf("sweep -n 1024:16384:x2 (flash, keylemma, caseI, generic), -j 2: %.1f s\n",
		       sweep_seconds);
	}
	printf("validate / direct run, headline:     %.2f\n", median[2] / median[0]);
	printf("with values / without, headline:     %.2f\n", median[VALUES_ROW] / median[0]);
	{
		FILE *f = fopen(TRACE_PATH, "rb");
		long bytes = f && !fseek(f, 0, SEEK_END) ? ftell(f) : 0;

		if (f)
			fclose(f);
		qsort(jq_wall, (size_t)runs, sizeof(double), by_double);
		qsort(numpy_seconds, (size_t)runs, sizeof(double), by_double);
		validate_over_jq = median[2] / jq_wall[runs / 2];
		values_seconds = median[VALUES_ROW] - median[0];
		values_over_numpy = values_macs == numpy_macs && values_seconds > 0 ?
				    values_seconds / numpy_seconds[runs / 2] : 0;
		printf("validate / jq, parsing the headline's trace (%ld bytes), commit %s: %.2f (validate %.3f s, %.1f MB/s; jq empty %.3f s, %.1f MB/s)\n",
		       bytes, commit(), validate_over_jq, median[2], (double)bytes / median[2] / 1e6,
		       jq_wall[runs / 2], (double)bytes / jq_wall[runs / 2] / 1e6);
		printf("values / NumPy, the headline's values (the DAG's %lld macs and both direct evaluations), commit %s: %.2f (--values adds %.3f s to the run; NumPy %.3f s)\n",
		       (long long)values_macs, commit(), values_over_numpy, values_seconds,
		       numpy_seconds[runs / 2]);
	}
	printf("GraphML, pebblesim's reader / igraph: %.1f times faster\n",
	       median[job_index("read GraphML: igraph")] /
	       median[job_index("read GraphML: pebblesim")]);
	printf("elementary trace, fast lines / jansson: %.1f times faster\n",
	       median[job_index("elementary: jansson")] /
	       median[job_index("elementary: fast lines")]);
	{
		const char *bins[2] = { argv[1], tool("PS_BENCH_EMPTY") };

		if ((dry_off = dry_run_check(argv[1], dry_rows)) < 0 ||
		    (cost_over = report_cost(argv[1], cost)) < 0 ||
		    startup(bins, bins[1] ? 2 : 1, STARTUP_RUNS, startup_rows))
			return 1;
	}
	doc = json_pack("{s:s, s:o, s:o, s:o, s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "commit",
			commit(), "rows", table, "dry_run", dry_rows, "report_cost", cost,
			"startup", startup_rows,
			"validate_over_jq", validate_over_jq, "values_over_numpy", values_over_numpy,
			"block_speedup",
			median[1] / median[0], "validate_over_run", median[2] / median[0],
			"values_overhead", median[VALUES_ROW] / median[0],
			"sweep_seconds", sweep_seconds,
			"graphml_reader_speedup",
			median[job_index("read GraphML: igraph")] /
			median[job_index("read GraphML: pebblesim")],
			"trace_lines_speedup",
			median[job_index("elementary: jansson")] /
			median[job_index("elementary: fast lines")]);
	if (json_dump_file(doc, argv[2], JSON_INDENT(2) | JSON_PRESERVE_ORDER)) {
		fprintf(stderr, "pebblesim-bench: cannot write '%s'\n", argv[2]);
		json_decref(doc);
		return 1;
	}
	printf("written to %s\n", argv[2]);
	json_decref(doc);
	if (dry_off) {
		fprintf(stderr, "pebblesim-bench: %d --dry-run estimates off by more than 20%% (above)\n",
			dry_off);
		return 1;
	}
	if (cost_over) {
		fprintf(stderr, "pebblesim-bench: the cheaper strategy line costs more than 5%% of the headline (above)\n");
		return 1;
	}
	return 0;
}
