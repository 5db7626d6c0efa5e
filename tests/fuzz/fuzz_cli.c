/*
 * libFuzzer target: the command line (src/cli/) through ps_cli_main, on
 * an argv cut from the input at NUL bytes and newlines.
 *
 * Files: the target works in a directory of its own and refuses
 * arguments with a '/', so that every file the command line reads or
 * writes is there; it empties the directory after each run. Standard input
 * reads as empty and standard output (`--trace -`) goes nowhere. The
 * memory cap keeps every DAG small, and so every run short.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/cli/cli.h"
#include "pebblesim/explicit.h"
#include "pebblesim/limits.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 24

static FILE *sink;

/* libFuzzer's own paths (corpus directories, inputs, the artifact prefix,
 * the dictionary)
 * made absolute before the target changes its directory. */
static void absolute_paths(int argc, char **argv)
{
	static const char *const prefixes[] = { "-artifact_prefix=", "-dict=" };

	for (int k = 1; k < argc; k++) {
		const char *path = argv[k];
		char cwd[4096], *abs;
		size_t skip = 0;

		for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++)
			if (!strncmp(path, prefixes[p], strlen(prefixes[p])))
				skip = strlen(prefixes[p]);
		if (!skip && path[0] == '-')
			continue;
		if (path[skip] == '/' || !getcwd(cwd, sizeof(cwd)))
			continue;
		abs = malloc(strlen(path) + strlen(cwd) + 2);
		if (!abs)
			continue;
		sprintf(abs, "%.*s%s/%s", (int)skip, path, cwd, path + skip);
		argv[k] = abs; /* kept for the process's life */
	}
}

static void empty_directory(void)
{
	DIR *d = opendir(".");
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlink(e->d_name);
	if (d)
		closedir(d);
}

static char scratch[] = "/tmp/pebblesim-fuzz-cli-XXXXXX";

static void remove_scratch(void)
{
	empty_directory();
	rmdir(scratch);
}

/*
 * The memory cap: small, so that every DAG is small and every run short
 * (the engine's state grows with the DAG, and so do the moves that fill
 * it). PS_FUZZ_CLI_CAP (bytes) overrides it.
 */
static uint64_t memory_cap(void)
{
	const char *text = getenv("PS_FUZZ_CLI_CAP");
	char *end;
	unsigned long long v;

	if (text && *text) {
		v = strtoull(text, &end, 10);
		if (!*end && v)
			return v;
	}
	return 512;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	absolute_paths(*argc, *argv);

	ps_igraph_setup();
	ps_memory_limit_cap(memory_cap());
	if (!mkdtemp(scratch) || chdir(scratch))
		__builtin_trap();
	atexit(remove_scratch);
	if (!freopen("/dev/null", "r", stdin) || !freopen("/dev/null", "w", stdout))
		__builtin_trap();
	sink = fopen("/dev/null", "w");
	return 0;
}

/* A DAG file to name, the same before every run (a run may overwrite it). */
static void write_dag(void)
{
	FILE *f = fopen("d.txt", "w");

	if (f) {
		fputs("0 2\n1 2\n2 3\n", f);
		fclose(f);
	}
}

/*
 * sweep forks its jobs (two by default) and runs gnuplot for --plot: here
 * it runs in this process, with -j 1 put first and the input's own -j,
 * --jobs and --plot (and any option that might abbreviate them) skipped,
 * so that its ranges, its checks and its CSV and JSON are fuzzed too.
 * --plot-script runs no gnuplot, and --plugin is no --plot.
 */
static bool sweep_in_process(int *count, char **argv)
{
	static char jobs[] = "-j1";
	const int argc = *count;

	for (int k = 2; k < argc; k++) {
		const char *a = argv[k];

		if (!strcmp(a, "--"))
			break;
		if (!strncmp(a, "-j", 2) || !strncmp(a, "--j", 3) ||
		    (!strncmp(a, "--pl", 4) && strncmp(a, "--plot-", 7) && strncmp(a, "--plu", 5)))
			return false;
	}
	if (argc > MAX_ARGS)
		return false;
	memmove(argv + 3, argv + 2, (size_t)(argc - 1) * sizeof(*argv)); /* the NULL too */
	argv[2] = jobs;
	(*count)++;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *argv[MAX_ARGS + 2];
	int argc = 0;

	if (size > 4096 || memchr(data, '/', size))
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	argv[argc++] = "pebblesim";
	for (char *a = text, *end = text + size; a < end && argc <= MAX_ARGS;) {
		char *stop = a;

		while (stop < end && *stop && *stop != '\n')
			stop++;
		*stop = '\0';
		argv[argc++] = a;
		a = stop + 1;
	}
	argv[argc] = NULL;
	if (argc > 1 && !strcmp(argv[1], "sweep") && !sweep_in_process(&argc, argv)) {
		free(text);
		return 0;
	}
	write_dag();
	ps_cli_main(argc, argv, sink, sink);
	clearerr(sink);
	empty_directory();
	free(text);
	return 0;
}
