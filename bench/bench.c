/*
 * make bench: times representative runs of the pebblesim binary, each in a
 * child process so that its peak resident memory is its own, and prints
 * one table (medians of RUNS runs, taken in turn so that noise falls on
 * every row alike). The table is also written as JSON.
 *
 *   pebblesim-bench PEBBLESIM_BINARY OUT.json [RUNS]
 */
#define _DEFAULT_SOURCE /* wait4, for the child's own peak RSS */

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct job {
	const char *name;
	const char *args[16];
};

static const struct job jobs[] = {
	{ "headline generic n=4096",
	  { "--strategy", "generic", "-n", "4096", "-d", "16", "-g", "3", "-M", "8192", "--json", NULL } },
	{ "generic n=16384",
	  { "--strategy", "generic", "-n", "16384", "-d", "16", "-g", "3", "-M", "8192", "--json", NULL } },
};

#define JOBS (sizeof(jobs) / sizeof(jobs[0]))
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

/* Runs one job; its JSON report is read from a pipe. */
static int run_once(const char *bin, const struct job *job, struct sample *s)
{
	char *argv[20];
	int fd[2], status, argc = 0;
	struct rusage ru;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	double start;
	pid_t pid;
	json_t *root;
	json_error_t jerr;

	argv[argc++] = (char *)bin;
	for (int k = 0; job->args[k]; k++)
		argv[argc++] = (char *)job->args[k];
	argv[argc] = NULL;
	if (pipe(fd))
		return -1;
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
		fprintf(stderr, "pebblesim-bench: '%s' failed\n", job->name);
		return -1;
	}
	s->wall = now() - start;
	s->rss_kib = ru.ru_maxrss;
	buf[len] = '\0';
	root = json_loads(buf, 0, &jerr);
	free(buf);
	if (!root) {
		fprintf(stderr, "pebblesim-bench: '%s': %s\n", job->name, jerr.text);
		return -1;
	}
	s->moves = json_integer_value(json_object_get(root, "moves"));
	json_decref(root);
	return 0;
}

static int by_wall(const void *a, const void *b)
{
	double x = ((const struct sample *)a)->wall, y = ((const struct sample *)b)->wall;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static struct sample samples[JOBS][MAX_RUNS];
	int runs = argc > 3 ? atoi(argv[3]) : 5;
	json_t *table = json_array();

	if (argc < 3 || runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "usage: pebblesim-bench PEBBLESIM_BINARY OUT.json [RUNS <= %d]\n",
			MAX_RUNS);
		return 2;
	}
	for (int r = 0; r < runs; r++)
		for (size_t j = 0; j < JOBS; j++)
			if (run_once(argv[1], &jobs[j], &samples[j][r]))
				return 1;
	printf("%-26s %8s %10s %12s %14s %12s\n", "run", "n", "median s",
	       "peak RSS MiB", "moves", "Mmoves/s");
	for (size_t j = 0; j < JOBS; j++) {
		struct sample *s = samples[j];
		struct sample med;
		long rss = 0;

		for (int r = 0; r < runs; r++)
			rss = s[r].rss_kib > rss ? s[r].rss_kib : rss;
		qsort(s, (size_t)runs, sizeof(*s), by_wall);
		med = s[runs / 2];
		printf("%-26s %8s %10.3f %12.1f %14lld %12.1f\n", jobs[j].name,
		       jobs[j].args[3], med.wall, (double)rss / 1024.0,
		       (long long)med.moves, (double)med.moves / med.wall / 1e6);
		json_array_append_new(table,
			json_pack("{s:s, s:s, s:i, s:f, s:f, s:f, s:I, s:f}",
				  "run", jobs[j].name, "n", jobs[j].args[3],
				  "runs", runs, "median_seconds", med.wall,
				  "min_seconds", s[0].wall,
				  "peak_rss_mib", (double)rss / 1024.0,
				  "moves", med.moves,
				  "moves_per_second", (double)med.moves / med.wall));
	}
	if (json_dump_file(table, argv[2], JSON_INDENT(2) | JSON_PRESERVE_ORDER)) {
		fprintf(stderr, "pebblesim-bench: cannot write '%s'\n", argv[2]);
		json_decref(table);
		return 1;
	}
	printf("written to %s\n", argv[2]);
	json_decref(table);
	return 0;
}
