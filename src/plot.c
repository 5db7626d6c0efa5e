/*
 * The plots: gnuplot run apart from every input. The data and the script
 * go to files of a private directory (mkdtemp); gnuplot runs there by
 * fork and execvp, without a shell, its standard output a pipe back to
 * pebblesim, which writes the plot through the one output writer
 * (src/output.c) and checks that it is complete. No text of an input
 * reaches gnuplot's script but as a single-quoted string of printable
 * ASCII (gnuplot_string).
 */
#include "pebblesim/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pebblesim/output.h"
#include "pebblesim/sweep.h"

static bool any_values(const struct ps_sweep_row *rows, size_t count)
{
	for (size_t k = 0; k < count; k++)
		if (rows[k].has_values)
			return true;
	return false;
}

/* ---- the plot: gnuplot, run apart from every input ------------------- */

/*
 * A string for gnuplot's script, single-quoted: inside single quotes
 * gnuplot substitutes nothing (no backquote, no @macro, no backslash
 * escape). A quote, which gnuplot's scanner does not take doubled at a
 * string's start, and bytes outside printable ASCII become '?'. The
 * labels it quotes have passed the CSV's grammar (or are strategy names)
 * already: this holds even if they had not.
 */
static void gnuplot_string(FILE *script, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void gnuplot_string(FILE *script, const char *fmt, ...)
{
	char text[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fputc('\'', script);
	for (const char *c = text; *c; c++)
		fputc(*c >= ' ' && *c <= '~' && *c != '\'' ? *c : '?', script);
	fputc('\'', script);
}

/* A file of the scratch directory as a stream; NULL with err. */
static FILE *scratch_stream(struct ps_scratch *dir, const char *name, struct ps_error *err)
{
	int fd = ps_scratch_create(dir, name, err);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (!(f = fdopen(fd, "w"))) {
		ps_error_set(err, PS_EIO, "cannot write '%s/%s': %s", dir->dir, name, strerror(errno));
		close(fd);
	}
	return f;
}

/*
 * The data file: a block per label with points, blocks apart by two blank
 * lines (gnuplot's `index`): value, I/O, lower bound, epsilon (or NaN,
 * which gnuplot leaves out; 0 cannot go on a log axis). Returns the
 * number of blocks; block[q] is label q's, or -1.
 */
static size_t write_plot_data(FILE *data, const struct ps_sweep_row *rows, size_t count,
			      char labels[][24], size_t label_count, int *block)
{
	size_t blocks = 0;

	for (size_t q = 0; q < label_count; q++) {
		block[q] = -1;
		for (size_t k = 0; k < count; k++) {
			const struct ps_sweep_row *r = &rows[k];

			if (!r->ran || strcmp(r->label, labels[q]))
				continue;
			if (block[q] < 0) {
				fputs(blocks ? "\n\n" : "", data);
				block[q] = (int)blocks++;
			}
			fprintf(data, "%llu %llu %.0f ", (unsigned long long)r->value,
				(unsigned long long)r->io, r->lower > 0 ? r->lower : 1);
			if (r->has_values && r->epsilon > 0 && isfinite(r->epsilon))
				fprintf(data, "%.6e\n", r->epsilon);
			else
				fputs("NaN\n", data);
		}
	}
	return blocks;
}

/* The script: fixed text, numbers, and labels as quoted strings only. */
static void write_plot_script(FILE *gp, bool svg, char param, bool values,
			      char labels[][24], size_t label_count, const int *block,
			      const struct ps_crossover *cross, size_t cross_count)
{
	bool first = true;

	/* no `set output`: the plot goes to gnuplot's standard output */
	fprintf(gp, "set terminal %s size 900,600\n", svg ? "svg dynamic" : "png");
	fprintf(gp, "set logscale xy\nset xlabel '%c'\nset ylabel 'I/O (loads + saves)'\n"
		"set key outside right\nset grid\n", param);
	if (values)
		fprintf(gp, "set logscale y2\nset y2label 'epsilon = max |A - softmax(Q K^T / sqrt d) V|'\n"
			"set y2tics\nset ytics nomirror\nset format y2 '%%.0e'\n");
	for (size_t k = 0; k < cross_count; k++) {
		if (!cross[k].found)
			continue;
		fprintf(gp, "set arrow from %llu, graph 0 to %llu, graph 1 nohead dt 3 lc rgb 'gray40'\n"
			"set label ", (unsigned long long)cross[k].at,
			(unsigned long long)cross[k].at);
		gnuplot_string(gp, "%s < %s", cross[k].label, cross[k].baseline);
		fprintf(gp, " at %llu, graph %.2f left offset 0.5,0 font ',9'\n",
			(unsigned long long)cross[k].at, 0.95 - 0.05 * (double)(k % 10));
	}
	fputs("plot ", gp);
	for (size_t q = 0; q < label_count; q++) {
		if (block[q] < 0)
			continue;
		fprintf(gp, "%s'data' index %d using 1:2 with linespoints lw 2 title ",
			first ? "" : ", ", block[q]);
		gnuplot_string(gp, "%s", labels[q]);
		first = false;
	}
	/* the lower bounds of each DAG kind, dashed */
	first = true;
	for (size_t q = 0; q < label_count; q++)
		if (block[q] >= 0) {
			fprintf(gp, ", 'data' index %d using 1:3 with lines dt 2 lc rgb 'gray50' title '%s'",
				block[q], first ? "lower bounds (dashed)" : "");
			first = false;
		}
	/* epsilon of each label on the right axis, dotted */
	for (size_t q = 0; values && q < label_count; q++)
		if (block[q] >= 0) {
			fprintf(gp, ", 'data' index %d using 1:4 axes x1y2 with linespoints dt 3 pt 6 title ",
				block[q]);
			gnuplot_string(gp, "%s epsilon", labels[q]);
		}
	fputc('\n', gp);
}

/*
 * The last line of gnuplot's standard error that is not blank, printable,
 * in buf: gnuplot ends an error with `"plot.gp" line N: what`, after the
 * line it echoes.
 */
static void last_error_line(const char *dir, char *buf, size_t len)
{
	char path[600], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/gnuplot.err", dir);
	buf[0] = '\0';
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		size_t used = 0;
		char *c = line + strspn(line, " \t");

		if (*c == '\n' || !*c)
			continue;
		for (; *c && *c != '\n' && used + 1 < len; c++)
			buf[used++] = *c >= ' ' && *c <= '~' ? *c : '?';
		buf[used] = '\0';
	}
	fclose(f);
}

/*
 * gnuplot, without a shell: in the scratch directory, its script a file
 * there, standard input /dev/null, standard output a pipe back to
 * pebblesim and standard error a file there. Returns its pid, or -1.
 */
static pid_t start_gnuplot(const char *dir, int out_fd, int err_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);

		if (in < 0 || dup2(in, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0 ||
		    chdir(dir))
			_exit(126);
		execvp("gnuplot", (char *const[]){ "gnuplot", "plot.gp", NULL });
		_exit(127);
	}
	return pid;
}

/*
 * The end of a complete plot: an SVG's closing tag, a PNG's IEND chunk
 * (its length 0, its name, its CRC). gnuplot may exit 0 having written
 * part of one.
 */
static bool plot_complete(bool svg, const unsigned char *tail, size_t len)
{
	static const unsigned char iend[] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82 };

	if (!svg)
		return len >= sizeof(iend) && !memcmp(tail + len - sizeof(iend), iend, sizeof(iend));
	while (len && (tail[len - 1] == '\n' || tail[len - 1] == ' '))
		len--;
	return len >= 6 && !memcmp(tail + len - 6, "</svg>", 6);
}

/*
 * Copies gnuplot's standard output into out, keeping its last bytes in
 * tail; waits for gnuplot. Returns its wait status, or -1.
 */
static int copy_plot(int from, pid_t pid, FILE *out, unsigned char *tail, size_t *tail_len)
{
	unsigned char buf[8192];
	int status;

	*tail_len = 0;
	for (;;) {
		ssize_t got = read(from, buf, sizeof(buf));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		fwrite(buf, 1, (size_t)got, out);
		if ((size_t)got >= 16) {
			memcpy(tail, buf + got - 16, 16);
			*tail_len = 16;
		} else {
			size_t keep = ps_min_u64(*tail_len, 16 - (size_t)got);

			memmove(tail, tail + *tail_len - keep, keep);
			memcpy(tail + keep, buf, (size_t)got);
			*tail_len = keep + (size_t)got;
		}
	}
	close(from);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

int ps_sweep_plot(const char *path, char param, const struct ps_sweep_row *rows,
		  size_t count, const struct ps_crossover *cross,
		  size_t cross_count, struct ps_error *err)
{
	const char *dot = strrchr(path, '.');
	bool svg = dot && !strcmp(dot, ".svg"), png = dot && !strcmp(dot, ".png");
	char labels[PS_SWEEP_MAX_STRATEGIES][24], why[200];
	int block[PS_SWEEP_MAX_STRATEGIES], pipefd[2], err_fd = -1, status;
	unsigned char tail[16];
	size_t label_count = 0, tail_len;
	struct ps_scratch dir;
	struct ps_output out;
	FILE *data = NULL, *script = NULL;
	pid_t pid;
	int rc;

	if (!svg && !png)
		return ps_error_set(err, PS_EINPUT, "cannot plot to '%s': the name ends in .svg or .png", path);
	for (size_t k = 0; k < count; k++) {
		bool seen = false;

		for (size_t q = 0; q < label_count; q++)
			seen |= !strcmp(labels[q], rows[k].label);
		if (!seen && label_count < PS_SWEEP_MAX_STRATEGIES)
			snprintf(labels[label_count++], sizeof(labels[0]), "%s", rows[k].label);
	}
	if ((rc = ps_scratch_open(&dir, "plot", err)))
		return rc;
	/* the data and the script in files of the private directory */
	if (!(data = scratch_stream(&dir, "data", err))) {
		rc = PS_EIO;
		goto done;
	}
	if (!write_plot_data(data, rows, count, labels, label_count, block)) {
		rc = ps_error_set(err, PS_EINPUT, "cannot plot to '%s': no run of the sweep has a result", path);
		goto done;
	}
	if (!(script = scratch_stream(&dir, "plot.gp", err))) {
		rc = PS_EIO;
		goto done;
	}
	write_plot_script(script, svg, param, any_values(rows, count), labels, label_count,
			  block, cross, cross_count);
	rc = ferror(data) || ferror(script);
	rc |= fclose(data);
	rc |= fclose(script);
	data = script = NULL;
	if (rc) {
		rc = ps_error_set(err, PS_EIO, "cannot write gnuplot's script and data in '%s': %s",
				  dir.dir, strerror(errno));
		goto done;
	}
	if ((err_fd = ps_scratch_create(&dir, "gnuplot.err", err)) < 0) {
		rc = err_fd;
		goto done;
	}
	/* gnuplot writes to pebblesim, which writes the file as any output */
	if ((rc = ps_output_open(&out, path, "plot", err)))
		goto done;
	if (pipe(pipefd)) {
		rc = ps_error_set(err, PS_EIO, "cannot run gnuplot: %s", strerror(errno));
		ps_output_close(&out, false, "plot", NULL);
		goto done;
	}
	fcntl(pipefd[0], F_SETFD, FD_CLOEXEC);
	pid = start_gnuplot(dir.dir, pipefd[1], err_fd);
	close(pipefd[1]);
	if (pid < 0) {
		rc = ps_error_set(err, PS_EIO, "cannot run gnuplot: %s", strerror(errno));
		close(pipefd[0]);
		ps_output_close(&out, false, "plot", NULL);
		goto done;
	}
	status = copy_plot(pipefd[0], pid, out.file, tail, &tail_len);
	last_error_line(dir.dir, why, sizeof(why));
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 127)
		rc = ps_error_set(err, PS_EIO, "cannot plot: gnuplot is not installed (Debian's gnuplot-nox)");
	else if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status))
		rc = ps_error_set(err, PS_EIO, "gnuplot could not draw '%s': %s", path,
				  why[0] ? why : "it failed without a message");
	else if (!plot_complete(svg, tail, tail_len))
		rc = ps_error_set(err, PS_EIO, "gnuplot could not draw '%s': its %s is incomplete%s%s",
				  path, svg ? "SVG" : "PNG", why[0] ? ": " : "", why);
	if (rc)
		ps_output_close(&out, false, "plot", NULL);
	else
		rc = ps_output_close(&out, true, "plot", err);
done:
	if (data)
		fclose(data);
	if (script)
		fclose(script);
	if (err_fd >= 0)
		close(err_fd);
	ps_scratch_remove(&dir);
	return rc;
}
