/*
 * libFuzzer target: `sweep --merge` (src/sweep.c) and `--plot` (src/plot.c), the path
 * where text of a CSV once reached gnuplot as code.
 *
 * The input's first byte chooses the plot's format (bit 2: PDF, else bit
 * 0: PNG, else SVG) and --json (bit 1); the rest is the CSV that --merge reads. The target
 * works in a directory of its own with $TMPDIR beside it, and the CSV,
 * the plot and the CSV written back lie in a third. After each run the
 * first two must be empty and the third hold only those files: anything
 * else (a file that gnuplot was made to create, a temporary left behind)
 * stops the fuzzer.
 *
 * Built as fuzz-plotscript (tests/fuzz/fuzz_plotscript.c, FUZZ_PLOT_SCRIPT),
 * it writes --plot-script instead of drawing, and holds the script to
 * tests/gnuplot_check.c: no gnuplot runs, so it goes thousands of times
 * faster over the same path up to the script.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/cli/cli.h"
#include "pebblesim/explicit.h"

#ifdef FUZZ_PLOT_SCRIPT
#include "../gnuplot_check.h"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[] = "/tmp/pebblesim-fuzz-plot-XXXXXX";
static char work[64], tmp[64], io[64], csv[96], svg[96], png[96], pdf[96], back[96];
static char script[96];
static FILE *sink;

/* The names in path other than the allowed ones (NULL-ended), removed;
 * whether there was one. */
static bool clean(const char *path, const char *const *allowed)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool other = false;
	char name[512];

	while (d && (e = readdir(d))) {
		bool ok = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");

		for (size_t k = 0; allowed[k] && !ok; k++)
			ok = !strcmp(allowed[k], e->d_name);
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		other |= !ok;
		snprintf(name, sizeof(name), "%s/%s", path, e->d_name);
		if (unlink(name))
			rmdir(name);
	}
	if (d)
		closedir(d);
	return other;
}

static void remove_root(void)
{
	static const char *const none[] = { NULL };

	clean(work, none);
	clean(tmp, none);
	clean(io, none);
	rmdir(work);
	rmdir(tmp);
	rmdir(io);
	rmdir(root);
}

/* libFuzzer's relative paths made absolute before the directory changes. */
static void absolute_paths(int argc, char **argv, const char *cwd)
{
	static const char prefix[] = "-artifact_prefix=";

	for (int k = 1; k < argc; k++) {
		const char *path = argv[k];
		size_t skip = 0;
		char *abs;

		if (!strncmp(path, prefix, sizeof(prefix) - 1))
			skip = sizeof(prefix) - 1;
		else if (path[0] == '-')
			continue;
		if (path[skip] == '/' || !(abs = malloc(strlen(path) + strlen(cwd) + 2)))
			continue;
		sprintf(abs, "%.*s%s/%s", (int)skip, path, cwd, path + skip);
		argv[k] = abs; /* kept for the process's life */
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char cwd[4096];

	if (!getcwd(cwd, sizeof(cwd)))
		__builtin_trap();
	absolute_paths(*argc, *argv, cwd);
	ps_igraph_setup();
	if (!mkdtemp(root))
		__builtin_trap();
	snprintf(work, sizeof(work), "%s/work", root);
	snprintf(tmp, sizeof(tmp), "%s/tmp", root);
	snprintf(io, sizeof(io), "%s/io", root);
	snprintf(csv, sizeof(csv), "%s/in.csv", io);
	snprintf(svg, sizeof(svg), "%s/p.svg", io);
	snprintf(png, sizeof(png), "%s/p.png", io);
	snprintf(pdf, sizeof(pdf), "%s/p.pdf", io);
	snprintf(back, sizeof(back), "%s/out.csv", io);
	snprintf(script, sizeof(script), "%s/p.gp", io);
	if (mkdir(work, 0700) || mkdir(tmp, 0700) || mkdir(io, 0700) || chdir(work) ||
	    setenv("TMPDIR", tmp, 1))
		__builtin_trap();
	atexit(remove_root);
	if (!freopen("/dev/null", "r", stdin) || !freopen("/dev/null", "w", stdout))
		__builtin_trap();
	sink = fopen("/dev/null", "w");
	return 0;
}

#ifdef FUZZ_PLOT_SCRIPT
/* The script written, if any, holds only pebblesim's own gnuplot code. */
static void check_script(void)
{
	static char text[1 << 20];
	char why[160];
	FILE *f = fopen(script, "r");
	size_t n;

	if (!f)
		return;
	n = fread(text, 1, sizeof(text), f);
	fclose(f);
	if (n == sizeof(text) || gnuplot_check(text, n, why, sizeof(why))) {
		fprintf(stderr, "fuzz-plotscript: %s\n", n == sizeof(text) ? "a script of 1 MiB" : why);
		__builtin_trap();
	}
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const none[] = { NULL };
	static const char *const outputs[] = { "in.csv", "p.svg", "p.png", "p.pdf", "out.csv",
					       "p.gp", "p.dat", NULL };
	char *argv[12];
	int argc = 0;
	bool stray;
	FILE *f;

	if (size < 1 || size > 65536)
		return 0;
	if (!(f = fopen(csv, "w")))
		__builtin_trap();
	fwrite(data + 1, 1, size - 1, f);
	fclose(f);
	argv[argc++] = "pebblesim";
	argv[argc++] = "sweep";
	argv[argc++] = "--merge";
	argv[argc++] = csv;
#ifdef FUZZ_PLOT_SCRIPT
	argv[argc++] = "--plot-script";
	argv[argc++] = script;
#else
	argv[argc++] = "--plot";
	argv[argc++] = data[0] & 4 ? pdf : data[0] & 1 ? png : svg;
#endif
	argv[argc++] = "--csv";
	argv[argc++] = back;
	if (data[0] & 2)
		argv[argc++] = "--json";
	argv[argc] = NULL;
	ps_cli_main(argc, argv, sink, sink);
	clearerr(sink);
#ifdef FUZZ_PLOT_SCRIPT
	check_script();
#endif
	/* nothing in the working directory or $TMPDIR, nothing else beside
	 * the outputs */
	stray = clean(work, none);
	stray |= clean(tmp, none);
	stray |= clean(io, outputs);
	if (stray)
		__builtin_trap();
	return 0;
}
