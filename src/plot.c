/*
 * The plots: gnuplot run apart from every input. The data and the script
 * go to files of a private directory (mkdtemp); gnuplot runs there by
 * fork and execvp, without a shell, its standard output a pipe back to
 * pebblesim, which writes the plot through the one output writer
 * (src/output.c) and checks that it is complete. No text of an input
 * reaches gnuplot's script but as a single-quoted string of printable
 * ASCII (gnuplot_string). --plot-script writes the same script and data,
 * through the same writer, for a user to restyle.
 */
#include "pebblesim/plot.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "pebblesim/attention.h"
#include "pebblesim/bounds.h"
#include "pebblesim/output.h"
#include "pebblesim/sweep.h"

/* ---- the driver: any plot, gnuplot run apart from every input -------- */

enum plot_format { PLOT_SVG, PLOT_PNG, PLOT_PDF };

static const struct {
	const char *ext, *name;
} formats[] = {
	{ ".svg", "SVG" }, { ".png", "PNG" }, { ".pdf", "PDF" },
};

/* The format a file name asks for by its ending; -1 if none. */
static int format_of(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;

	for (size_t k = 0; dot && k < sizeof(formats) / sizeof(formats[0]); k++)
		if (!strcmp(dot, formats[k].ext))
			return (int)k;
	return -1;
}

/* How a script is written: for gnuplot here (its data 'data', the plot
 * on standard output) or for the user (names beside the script). */
struct plot_form {
	enum plot_format format;
	const char *data;   /* the data file as the script names it */
	const char *output; /* NULL: standard output */
};

/* A plot: its data, and its script, which reads that data. */
struct plot_job {
	void (*data)(FILE *out, void *ctx);
	void (*script)(FILE *out, const struct plot_form *form, void *ctx);
	void *ctx;
};

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
	char text[256];
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
 * pebblesim and standard error a file there, killed if pebblesim dies
 * first. Returns its pid, or -1.
 */
static pid_t start_gnuplot(const char *dir, int out_fd, int err_fd)
{
	const pid_t parent = getpid();
	pid_t pid = fork();

	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);

		/* it dies with pebblesim (a SIGTERM, a crash), as a sweep's
		 * workers do, and leaves at once if pebblesim is gone already */
#ifdef __linux__
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(126);
#else
		(void)parent;
#endif
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
 * (its length 0, its name, its CRC), a PDF's %%EOF. gnuplot may exit 0
 * having written part of one.
 */
static bool plot_complete(enum plot_format format, const unsigned char *tail, size_t len)
{
	static const unsigned char iend[] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82 };

	if (format == PLOT_PNG)
		return len >= sizeof(iend) && !memcmp(tail + len - sizeof(iend), iend, sizeof(iend));
	while (len && (tail[len - 1] == '\n' || tail[len - 1] == '\r' || tail[len - 1] == ' '))
		len--;
	if (format == PLOT_PDF)
		return len >= 5 && !memcmp(tail + len - 5, "%%EOF", 5);
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

/*
 * The terminal and the output: the script's first lines. Fonts, lines
 * and markers scale with the picture: the PNG is the SVG at twice the
 * resolution, in true colour (pngcairo writes 8-bit RGB), the PDF the
 * SVG's size at 100 pixels an inch. Enhanced text draws the tics' powers
 * (10^{6}) as exponents; every text that names something (a title, a
 * label, a key entry) is set noenhanced, so that its _ and ^ stay
 * letters.
 */
static void script_head(FILE *gp, const struct plot_form *form, int w, int h)
{
	if (form->format == PLOT_SVG)
		fprintf(gp, "set terminal svg size %d,%d dynamic enhanced font 'Sans,12' background '#ffffff'\n", w, h);
	else if (form->format == PLOT_PNG)
		fprintf(gp, "set terminal pngcairo size %d,%d enhanced font 'Sans,12' fontscale 2 linewidth 2 pointscale 2 background '#ffffff'\n",
			2 * w, 2 * h);
	else
		fprintf(gp, "set terminal pdfcairo size %.2fin,%.2fin enhanced font 'Sans,12'\n", w / 100.0, h / 100.0);
	if (form->output) {
		fputs("set output ", gp);
		gnuplot_string(gp, "%s", form->output);
		fputc('\n', gp);
	}
}

/* The name of a file as a script beside it names it: its last component,
 * of [A-Za-z0-9_.+-] (it goes into the script as text); NULL if not so. */
static const char *script_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return NULL;
	for (const char *c = base; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		      (*c >= '0' && *c <= '9') || strchr("_.+-", *c)))
			return NULL;
	return base;
}

int ps_plot_script_data_path(const char *script, char *buf, size_t len,
			     struct ps_error *err)
{
	size_t stem;

	if (!script_name(script) || strlen(script) < 4 || strcmp(script + strlen(script) - 3, ".gp"))
		return ps_error_set(err, PS_EINPUT,
				    "cannot write the plot script '%s': its name ends in .gp and has only A-Z a-z 0-9 _ . + - (the script names its data file)",
				    script);
	stem = strlen(script) - 3;
	if (stem + 5 > len)
		return ps_error_set(err, PS_EINPUT, "cannot write the plot script '%s': the name is too long", script);
	snprintf(buf, len, "%.*s.dat", (int)stem, script);
	return PS_OK;
}

/* Writes one output through the writer: the data, or the script. */
static int write_output(const char *path, const char *what, const struct plot_job *job,
			const struct plot_form *form, struct ps_error *err)
{
	struct ps_output out;
	int rc;

	if ((rc = ps_output_open(&out, path, what, err)))
		return rc;
	if (form)
		job->script(out.file, form, job->ctx);
	else
		job->data(out.file, job->ctx);
	return ps_output_close(&out, true, what, err);
}

/* --plot-script FILE.gp: FILE.gp and FILE.dat, the script drawing into
 * the plot's name (or FILE.svg) beside itself. */
static int write_user_script(const char *script, const char *plot, const struct plot_job *job,
			     struct ps_error *err)
{
	char data[4096], output[4096];
	struct plot_form form;
	int rc, format = plot ? format_of(plot) : PLOT_SVG;

	if ((rc = ps_plot_script_data_path(script, data, sizeof(data), err)))
		return rc;
	if (plot && !script_name(plot))
		return ps_error_set(err, PS_EINPUT,
				    "cannot write the plot script '%s': the plot's name '%s' has a byte outside A-Z a-z 0-9 _ . + - (the script names it)",
				    script, plot);
	if (plot)
		snprintf(output, sizeof(output), "%s", script_name(plot));
	else
		snprintf(output, sizeof(output), "%.*s.svg", (int)(strlen(script_name(script)) - 3),
			 script_name(script));
	form = (struct plot_form){ (enum plot_format)format, script_name(data), output };
	if ((rc = write_output(data, "plot data", job, NULL, err)))
		return rc;
	return write_output(script, "plot script", job, &form, err);
}

/* Draws job into path with gnuplot (see the top of this file). */
static int draw(const char *path, const struct plot_job *job, struct ps_error *err)
{
	int format = format_of(path);
	struct plot_form form = { (enum plot_format)format, "data", NULL };
	int pipefd[2], err_fd = -1, status, rc;
	unsigned char tail[16];
	size_t tail_len;
	struct ps_scratch dir;
	struct ps_output out;
	FILE *data = NULL, *script = NULL;
	char why[200];
	pid_t pid;

	if ((rc = ps_scratch_open(&dir, "plot", err)))
		return rc;
	/* the data and the script in files of the private directory */
	if (!(data = scratch_stream(&dir, "data", err)) ||
	    !(script = scratch_stream(&dir, "plot.gp", err))) {
		rc = PS_EIO;
		goto done;
	}
	job->data(data, job->ctx);
	job->script(script, &form, job->ctx);
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
	else if (!plot_complete((enum plot_format)format, tail, tail_len))
		rc = ps_error_set(err, PS_EIO, "gnuplot could not draw '%s': its %s is incomplete%s%s",
				  path, formats[format].name, why[0] ? ": " : "", why);
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

/* The plot into path and the script into script, each when not NULL. */
static int plot_run(const char *path, const char *script, const struct plot_job *job,
		    struct ps_error *err)
{
	int rc;

	if (path && format_of(path) < 0)
		return ps_error_set(err, PS_EINPUT, "cannot plot to '%s': the name ends in .svg, .png or .pdf", path);
	if (script && (rc = write_user_script(script, path, job, err)))
		return rc;
	return path ? draw(path, job, err) : PS_OK;
}

/* ---- a sweep: I/O against the swept parameter ------------------------ */

/* A colour and a filled marker per label, in order; the marker's open
 * form is one less (gnuplot's cairo and SVG point types). */
static const char *const colours[] = {
	"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9",
	"#8c564b", "#9467bd", "#bcbd22", "#17becf",
};
static const int markers[] = { 7, 5, 9, 13, 11, 15 };
#define COLOUR(q) colours[(q) % (sizeof(colours) / sizeof(colours[0]))]
#define MARKER(q) markers[(q) % (sizeof(markers) / sizeof(markers[0]))]

enum { BOUND_APPROX, BOUND_EXACT, BOUND_KINDS };

struct sweep_plot {
	char param;
	const struct ps_sweep_row *rows;
	size_t count;
	const struct ps_crossover *cross;
	size_t cross_count;
	const struct ps_plot_options *opt;
	char labels[PS_SWEEP_MAX_STRATEGIES][24];
	size_t label_count;
	int block[PS_SWEEP_MAX_STRATEGIES];   /* its data block, or -1 */
	int same_as[PS_SWEEP_MAX_STRATEGIES]; /* an earlier label with the same points, or -1 */
	bool exact[PS_SWEEP_MAX_STRATEGIES];  /* of exact attention */
	bool has_epsilon[PS_SWEEP_MAX_STRATEGIES];
	int epsilon_same_as[PS_SWEEP_MAX_STRATEGIES]; /* the same, for epsilon */
	int bound_block[BOUND_KINDS];         /* -1: none */
	char bound_names[BOUND_KINDS][128];   /* the bounds that are largest somewhere */
	bool model[PS_SWEEP_MAX_STRATEGIES];  /* some point of it from its cost model */
	bool simulated[PS_SWEEP_MAX_STRATEGIES]; /* some point of it simulated */
	uint64_t xmin, xmax;
	bool per_token;                       /* decoding: I/O over the tokens generated */
	char title[256], subtitle[160];
};

static bool row_is(const struct ps_sweep_row *r, const char *label)
{
	return r->ran && !strcmp(r->label, label);
}

/* Labels q and p have the same points: the same swept values, the same
 * I/O (or epsilon) at each (rows sorted by value, as ps_sweep_sort
 * leaves them). */
static bool same_series(const struct sweep_plot *sp, size_t p, size_t q, bool epsilon)
{
	size_t a = 0, b = 0;

	for (;;) {
		while (a < sp->count && !row_is(&sp->rows[a], sp->labels[p]))
			a++;
		while (b < sp->count && !row_is(&sp->rows[b], sp->labels[q]))
			b++;
		if (a == sp->count || b == sp->count)
			return a == sp->count && b == sp->count;
		if (sp->rows[a].value != sp->rows[b].value ||
		    (epsilon ? sp->rows[a].epsilon != sp->rows[b].epsilon : sp->rows[a].io != sp->rows[b].io))
			return false;
		a++;
		b++;
	}
}

/* Past this many monomials a bound's name is not worked out again. */
#define PLOT_NAME_MAX_MONOMIALS (UINT64_C(1) << 22)

/* The name of the lower bound a row carries: the trivial one when it is
 * that large, else the largest that applies there (docs/BOUNDS.md). */
static const char *bound_name(const struct ps_sweep_row *r, bool exact)
{
	double trivial = (double)r->n * (double)r->d * (exact || r->g ? 4 : 2);
	struct ps_attention_params p = { .n = r->n, .d = r->d, .g = exact ? 0 : r->g, .normalize = true,
					 .exact = exact, .causal = r->causal || r->decode, .decode = r->decode };
	struct ps_attention att;
	struct ps_lower_bounds lb;
	struct ps_error err;
	static char name[64];
	uint64_t monomials = 1;

	/* a causal or decode DAG's bounds are its own (docs/BOUNDS.md): named
	 * by working them out again */
	if (!r->causal && !r->decode) {
		if (r->lower <= trivial)
			return "trivial";
		if (exact)
			return "segments";
	}
	/* r = C(d+g, g), stopping past the size worth building for a name
	 * (the row may come from a CSV file of any content) */
	if (r->d > PLOT_NAME_MAX_MONOMIALS)
		return "the largest that applies";
	for (uint64_t l = 1; l <= r->g && monomials <= PLOT_NAME_MAX_MONOMIALS; l++)
		monomials = monomials * (r->d + l) / l;
	ps_error_clear(&err);
	if (monomials > PLOT_NAME_MAX_MONOMIALS || ps_attention_init(&att, &p, &err))
		return "the largest that applies";
	ps_bounds_lower(&att, r->M, &lb);
	snprintf(name, sizeof(name), "%s", lb.best.value == r->lower ? lb.best.name : "the largest that applies");
	ps_attention_free(&att);
	return name;
}

/* A row's value as drawn: its I/O or bound v, over the tokens generated
 * where the sweep is of decoding (MODEL.md section 8). */
static double drawn(const struct sweep_plot *sp, const struct ps_sweep_row *r, double v)
{
	return sp->per_token ? v / (double)(r->n - r->decode) : v;
}

/* Every label that has points has them from its cost model only. */
static bool sweep_all_models(const struct sweep_plot *sp)
{
	bool any = false;

	for (size_t q = 0; q < sp->label_count; q++) {
		if (sp->simulated[q])
			return false;
		any |= sp->model[q];
	}
	return any;
}

static void sweep_prepare(struct sweep_plot *sp)
{
	const struct ps_sweep_row *fixed = NULL;
	int blocks = 0;
	size_t used;

	sp->xmin = UINT64_MAX;
	sp->xmax = 0;
	/* per token where every row that ran is of decoding */
	sp->per_token = false;
	for (size_t k = 0; k < sp->count; k++) {
		const struct ps_sweep_row *r = &sp->rows[k];

		if (r->ran) {
			sp->per_token = r->decode && r->n > r->decode;
			if (!sp->per_token)
				break;
		}
	}
	for (size_t k = 0; k < sp->count; k++) {
		const struct ps_sweep_row *r = &sp->rows[k];
		bool seen = false;

		for (size_t q = 0; q < sp->label_count; q++)
			seen |= !strcmp(sp->labels[q], r->label);
		if (!seen && sp->label_count < PS_SWEEP_MAX_STRATEGIES) {
			snprintf(sp->labels[sp->label_count], sizeof(sp->labels[0]), "%s", r->label);
			sp->block[sp->label_count] = -1;
			sp->has_epsilon[sp->label_count] = false;
			sp->model[sp->label_count] = sp->simulated[sp->label_count] = false;
			sp->exact[sp->label_count++] = !strcmp(r->dag, "exact-attention");
		}
		if (!r->ran)
			continue;
		sp->xmin = r->value < sp->xmin ? r->value : sp->xmin;
		sp->xmax = r->value > sp->xmax ? r->value : sp->xmax;
		if (!fixed || (fixed->g == 0 && strcmp(r->dag, "exact-attention")))
			fixed = r;
	}
	for (size_t q = 0; q < sp->label_count; q++) {
		sp->same_as[q] = -1;
		for (size_t k = 0; k < sp->count; k++)
			if (row_is(&sp->rows[k], sp->labels[q])) {
				if (sp->block[q] < 0)
					sp->block[q] = blocks++;
				if (sp->rows[k].simulated)
					sp->simulated[q] = true;
				else
					sp->model[q] = true;
				if (sp->rows[k].has_values && sp->rows[k].epsilon > 0 &&
				    isfinite(sp->rows[k].epsilon))
					sp->has_epsilon[q] = true;
			}
		sp->epsilon_same_as[q] = -1;
		for (size_t p = 0; p < q && sp->block[q] >= 0 && sp->same_as[q] < 0; p++)
			if (sp->block[p] >= 0 && sp->same_as[p] < 0 && same_series(sp, p, q, false))
				sp->same_as[q] = (int)p;
		for (size_t p = 0; p < q && sp->has_epsilon[q] && sp->epsilon_same_as[q] < 0; p++)
			if (sp->has_epsilon[p] && sp->epsilon_same_as[p] < 0 && same_series(sp, p, q, true))
				sp->epsilon_same_as[q] = (int)p;
	}
	/* a lower bound per problem: its points, and the names of the bounds
	 * that are the largest somewhere along the sweep */
	for (int b = 0; b < BOUND_KINDS; b++) {
		sp->bound_block[b] = -1;
		sp->bound_names[b][0] = '\0';
		for (size_t k = 0; k < sp->count; k++) {
			const struct ps_sweep_row *r = &sp->rows[k];
			const char *name;

			if (!r->ran || r->lower <= 0 || !strcmp(r->dag, "exact-attention") != (b == BOUND_EXACT))
				continue;
			if (sp->bound_block[b] < 0)
				sp->bound_block[b] = blocks++;
			name = bound_name(r, b == BOUND_EXACT);
			if (!strstr(sp->bound_names[b], name)) {
				used = strlen(sp->bound_names[b]);
				snprintf(sp->bound_names[b] + used, sizeof(sp->bound_names[b]) - used, "%s%s",
					 used ? ", " : "", name);
			}
		}
	}
	/* the title: what is swept, whether the I/O is the cost models', and
	 * the parameters held fixed */
	used = (size_t)snprintf(sp->title, sizeof(sp->title), "%s against %c%s%s",
				sp->per_token ? "I/O per generated token" : "I/O", sp->param,
				sweep_all_models(sp) ? " (cost models)" : "",
				!fixed ? "" : fixed->decode ? ", decoding" : fixed->causal ? ", causal" : "");
	if (fixed) {
		const struct {
			char name;
			uint64_t value;
		} params[] = { { 'n', fixed->n }, { 'P', fixed->decode }, { 'd', fixed->d }, { 'g', fixed->g },
			       { 'M', fixed->M } };

		const char *sep = ": ";

		for (size_t k = 0; k < 5 && used < sizeof(sp->title); k++)
			if (params[k].name != sp->param && (params[k].name != 'P' || fixed->decode) &&
			    (params[k].name != 'g' || strcmp(fixed->dag, "exact-attention"))) {
				used += (size_t)snprintf(sp->title + used, sizeof(sp->title) - used, "%s%c = %llu",
							 sep, params[k].name, (unsigned long long)params[k].value);
				sep = ", ";
			}
	}
	if (sp->opt && sp->opt->polynomial && sp->opt->polynomial[0] && used < sizeof(sp->title))
		used += (size_t)snprintf(sp->title + used, sizeof(sp->title) - used, ", %c%s polynomial",
					 toupper((unsigned char)sp->opt->polynomial[0]), sp->opt->polynomial + 1);
	if (sp->opt && sp->opt->title) {
		snprintf(sp->subtitle, sizeof(sp->subtitle), "%s", sp->opt->title);
	} else if (used > 80 && strstr(sp->title, ": ")) {
		/* too long for one line above the plot: the parameters held
		 * fixed go to the second */
		char *colon = strstr(sp->title, ": ");

		snprintf(sp->subtitle, sizeof(sp->subtitle), "%s", colon + 2);
		*colon = '\0';
	}
}

/*
 * The data file: a block per label with points, then a block per
 * problem's lower bound, blocks apart by two blank lines (gnuplot's
 * `index`). A label's columns: value, I/O, lower bound, epsilon (NaN where
 * there is none: gnuplot leaves it out), g. A bound's: value, bound.
 */
static void sweep_data(FILE *data, void *ctx)
{
	const struct sweep_plot *sp = ctx;
	bool first = true;

	for (size_t q = 0; q < sp->label_count; q++) {
		if (sp->block[q] < 0)
			continue;
		fputs(first ? "" : "\n\n", data);
		first = false;
		fprintf(data, "# %s: value io lower epsilon g\n", sp->labels[q]);
		for (size_t k = 0; k < sp->count; k++) {
			const struct ps_sweep_row *r = &sp->rows[k];

			if (!row_is(r, sp->labels[q]))
				continue;
			fprintf(data, "%llu %.17g %.17g ", (unsigned long long)r->value,
				drawn(sp, r, (double)r->io), drawn(sp, r, r->lower > 0 ? r->lower : 1));
			if (r->has_values && r->epsilon > 0 && isfinite(r->epsilon))
				fprintf(data, "%.6e", r->epsilon);
			else
				fputs("NaN", data);
			fprintf(data, " %llu\n", (unsigned long long)r->g);
		}
	}
	for (int b = 0; b < BOUND_KINDS; b++) {
		uint64_t last = 0;
		bool any = false;

		if (sp->bound_block[b] < 0)
			continue;
		fprintf(data, "\n\n# lower bound, %s attention: value bound\n",
			b == BOUND_APPROX ? "approximate" : "exact");
		for (size_t k = 0; k < sp->count; k++) {
			const struct ps_sweep_row *r = &sp->rows[k];

			if (!r->ran || r->lower <= 0 || !strcmp(r->dag, "exact-attention") != (b == BOUND_EXACT) ||
			    (any && r->value == last))
				continue;
			fprintf(data, "%llu %.17g\n", (unsigned long long)r->value, drawn(sp, r, r->lower));
			last = r->value;
			any = true;
		}
	}
}

/* The x axis: log for n, M and P, linear for d and g, ending at the data. */
static void x_axis(FILE *gp, char param, uint64_t lo, uint64_t hi)
{
	bool log_axis = param == 'n' || param == 'M' || param == 'P';
	double a = (double)lo, b = (double)hi;

	if (log_axis)
		fputs("set logscale x 2\nset format x '% .0f'\n", gp);
	if (a == b) {
		a = log_axis ? a / 2 : a - 1;
		b = log_axis ? b * 2 : b + 1;
	}
	fprintf(gp, "set xrange [%.17g:%.17g]\n", a, b);
	if (!log_axis && b - a <= 24)
		fputs("set xtics 1\n", gp);
}

/* A title of one line, or two: the second the words a command adds, as
 * a label between the title and the plot (a script holds no double-quoted
 * string: no "\n"); raised by rows of text (the marks' labels below). */
static void plot_title(FILE *gp, const char *title, const char *subtitle, double rows)
{
	bool two = subtitle && subtitle[0];

	fputs("set title ", gp);
	gnuplot_string(gp, "%s", title);
	fprintf(gp, " offset 0,%.1f noenhanced\n", rows + (two ? 1.1 : 0));
	if (two) {
		fputs("set label ", gp);
		gnuplot_string(gp, "%s", subtitle);
		fprintf(gp, " at graph 0.5, graph 1 offset 0,%.1f center noenhanced\n", rows + 0.9);
	}
}

/*
 * A crossover's end inside the range: a line at its value (the refined
 * n, where the sweep refined it; else the grid point, and the label says
 * "on the grid") and a label above the plot. Labels of
 * ends at the same value join; each goes to the first row above the
 * plot where it meets no other, so that none overlaps another or a
 * curve. An end at the range's edge is no crossing: not marked.
 */
#define PLOT_MAX_MARKS 16
#define PLOT_MARK_ROWS 4

struct plot_mark {
	uint64_t at;
	bool up_to;           /* the last value below the baseline, else the first */
	bool refined;         /* exact (ps_sweep_refine), else a grid point */
	char baseline[24];
	char labels[96];
	double x0, x1;        /* its extent, in fractions of the plot's width */
	int row;
};

/* Where value stands along the x axis, from 0 to 1. */
static double axis_fraction(const struct sweep_plot *sp, uint64_t value)
{
	double lo = (double)sp->xmin, hi = (double)sp->xmax, v = (double)value;

	if (hi <= lo)
		return 0.5;
	if (sp->param == 'n' || sp->param == 'M' || sp->param == 'P')
		return log(v / lo) / log(hi / lo);
	return (v - lo) / (hi - lo);
}

static void add_mark(struct plot_mark *m, size_t *count, uint64_t at, bool up_to,
		     const struct ps_crossover *c)
{
	size_t k;

	for (k = 0; k < *count; k++)
		if (m[k].at == at && m[k].up_to == up_to && m[k].refined == c->refined &&
		    !strcmp(m[k].baseline, c->baseline))
			break;
	if (k == *count) {
		if (*count == PLOT_MAX_MARKS)
			return;
		m[k] = (struct plot_mark){ .at = at, .up_to = up_to, .refined = c->refined };
		snprintf(m[k].baseline, sizeof(m[k].baseline), "%s", c->baseline);
		(*count)++;
	}
	if (!strstr(m[k].labels, c->label) && strlen(m[k].labels) + strlen(c->label) + 3 < sizeof(m[k].labels))
		snprintf(m[k].labels + strlen(m[k].labels), sizeof(m[k].labels) - strlen(m[k].labels),
			 "%s%s", m[k].labels[0] ? ", " : "", c->label);
}

/* The marks and their rows; returns how many, *rows the rows used. */
static size_t sweep_marks(const struct sweep_plot *sp, struct plot_mark *m, int *rows)
{
	/* a label's width: 5.5 px a character of the 9-point font, in a plot
	 * about 560 px wide (the canvas less the margins and the key) */
	const double per_char = 5.5 / 560;
	size_t count = 0;

	*rows = 0;
	for (size_t k = 0; k < sp->cross_count; k++) {
		const struct ps_crossover *c = &sp->cross[k];

		for (size_t t = 0; c->found && t < c->interval_count && t < PS_SWEEP_MAX_INTERVALS; t++) {
			if (c->intervals[t].from > sp->xmin)
				add_mark(m, &count, c->intervals[t].from, false, c);
			if (c->intervals[t].to < sp->xmax)
				add_mark(m, &count, c->intervals[t].to, true, c);
		}
	}
	for (size_t k = 0; k < count; k++) {
		double f = axis_fraction(sp, m[k].at);
		double w = per_char * (double)(strlen(m[k].labels) + strlen(m[k].baseline) + 24 +
					       (m[k].refined ? 0 : 14));

		m[k].x0 = f - w / 2;
		m[k].x1 = f + w / 2;
		if (m[k].x0 < 0) {
			m[k].x0 = f;
			m[k].x1 = f + w;
		} else if (m[k].x1 > 1) {
			m[k].x0 = f - w;
			m[k].x1 = f;
		}
		for (m[k].row = 0; m[k].row < PLOT_MARK_ROWS - 1; m[k].row++) {
			bool clear = true;

			for (size_t p = 0; p < k; p++)
				if (m[p].row == m[k].row && m[p].x0 < m[k].x1 + 0.01 && m[k].x0 < m[p].x1 + 0.01)
					clear = false;
			if (clear)
				break;
		}
		*rows = m[k].row + 1 > *rows ? m[k].row + 1 : *rows;
	}
	return count;
}

/* The marks: a dashed line at each, its label above the plot. */
static void sweep_marks_script(FILE *gp, const struct sweep_plot *sp, const struct plot_mark *m,
			       size_t count)
{
	for (size_t k = 0; k < count; k++) {
		double f = axis_fraction(sp, m[k].at);
		const char *anchor = m[k].x0 >= f ? "left" : m[k].x1 <= f ? "right" : "center";

		fprintf(gp, "set arrow from %llu, graph 0 to %llu, graph 1 nohead back dt 2 lw 1 lc rgb '#555555'\n"
			"set label ", (unsigned long long)m[k].at, (unsigned long long)m[k].at);
		gnuplot_string(gp, "%s < %s %s %c = %llu%s", m[k].labels, m[k].baseline,
			       m[k].up_to ? "up to" : "from", sp->param, (unsigned long long)m[k].at,
			       m[k].refined ? "" : " (on the grid)");
		fprintf(gp, " at %llu, graph 1 offset 0,%.1f %s font ',9' tc rgb '#333333' noenhanced\n",
			(unsigned long long)m[k].at, 0.6 + 1.1 * m[k].row, anchor);
	}
}

/* A label's key entry: its name, the earlier label its points equal,
 * and where its points are cost models while others are simulated, that
 * it is a cost model. */
static void series_text(const struct sweep_plot *sp, size_t q, char *buf, size_t len)
{
	const char *model = "";
	int used = 0;

	if (!sweep_all_models(sp) && sp->model[q])
		model = sp->simulated[q] ? " (cost model in part)" : " (cost model)";
	if (sp->same_as[q] >= 0)
		used = snprintf(buf, len, "%s (= %s)", sp->labels[q], sp->labels[sp->same_as[q]]);
	else
		used = snprintf(buf, len, "%s", sp->labels[q]);
	if (used >= 0 && (size_t)used < len)
		snprintf(buf + used, len - (size_t)used, "%s", model);
}

/* A problem's lower bound's key entry. */
static void bound_text(const struct sweep_plot *sp, int b, char *buf, size_t len)
{
	snprintf(buf, len, "lower bound, %s (%s)", b == BOUND_APPROX ? "approximate" : "exact",
		 sp->bound_names[b]);
}

/* A label's epsilon's key entry. */
static void epsilon_text(const struct sweep_plot *sp, size_t q, char *buf, size_t len)
{
	if (sp->epsilon_same_as[q] < 0)
		snprintf(buf, len, "%s epsilon", sp->labels[q]);
	else
		snprintf(buf, len, "%s epsilon (= %s epsilon)", sp->labels[q],
			 sp->labels[sp->epsilon_same_as[q]]);
}

/*
 * The key beside the plot, one entry a row, at a place computed from its
 * longest entry (gnuplot's own estimate of an outside key's width leaves
 * the plot half the canvas): the plot ends where the key begins, less
 * the right axis's room when epsilon is drawn.
 */
static void sweep_key(FILE *gp, const struct sweep_plot *sp, bool values)
{
	size_t longest = 0;
	double key_width, plot_right;
	char text[256];

	for (size_t q = 0; q < sp->label_count; q++) {
		if (sp->block[q] >= 0) {
			series_text(sp, q, text, sizeof(text));
			longest = ps_max_u64(longest, strlen(text));
		}
		if (sp->has_epsilon[q]) {
			epsilon_text(sp, q, text, sizeof(text));
			longest = ps_max_u64(longest, strlen(text));
		}
	}
	for (int b = 0; b < BOUND_KINDS; b++)
		if (sp->bound_block[b] >= 0) {
			bound_text(sp, b, text, sizeof(text));
			longest = ps_max_u64(longest, strlen(text));
		}
	/* 6.8 px a character of the 10-point font, the sample and gaps 60 px,
	 * of 960; at most half the canvas */
	key_width = fmin(480, 60 + 6.8 * (double)longest) / 960;
	plot_right = 1 - key_width - (values ? 0.09 : 0.01);
	fprintf(gp, "set rmargin at screen %.3f\n"
		"set key at screen %.3f, graph 1 top left Left reverse samplen 2.5 spacing 1.15 font ',10'\n",
		plot_right, plot_right + (values ? 0.09 : 0.01) + 0.005);
}

/* The script: fixed text, numbers, and labels as quoted strings only. */
static void sweep_script(FILE *gp, const struct plot_form *form, void *ctx)
{
	const struct sweep_plot *sp = ctx;
	struct plot_mark marks[PLOT_MAX_MARKS];
	char text[256];
	bool values = false, first = true;
	int exact_colour = -1, rows;
	size_t mark_count = sweep_marks(sp, marks, &rows);

	for (size_t q = 0; q < sp->label_count; q++) {
		values |= sp->has_epsilon[q];
		if (sp->exact[q] && sp->block[q] >= 0 && exact_colour < 0)
			exact_colour = (int)q;
	}
	script_head(gp, form, 960, 600);
	plot_title(gp, sp->title, sp->subtitle, 1.1 * rows);
	/* room above the plot for the title and the marks' rows */
	fprintf(gp, "set tmargin %.1f\n", 2.5 + (sp->subtitle[0] ? 1 : 0) + 1.1 * rows);
	sweep_key(gp, sp, values);
	fprintf(gp, "set xlabel '%s'\nset ylabel '%s'\n",
		sp->param == 'P' ? "P (prompt length)" : (char[]){ sp->param, '\0' },
		sp->per_token ? "I/O per generated token ((loads + saves) / (n - P))" : "I/O (loads + saves)");
	x_axis(gp, sp->param, sp->xmin, sp->xmax);
	/* powers of ten as exponents; the key beside the plot, one entry a row */
	fputs("set logscale y 10\nset format y '10^{%L}'\nset grid back lc rgb '#dddddd'\n", gp);
	if (values)
		fputs("set logscale y2 10\nset y2label 'epsilon = max |A - softmax(Q K^T / sqrt d) V| (dotted)'\n"
		      "set y2tics\nset ytics nomirror\nset format y2 '10^{%L}'\n", gp);
	sweep_marks_script(gp, sp, marks, mark_count);
	fputs("plot ", gp);
	/* every label's I/O; a label whose points equal an earlier one's is
	 * drawn dashed with larger open markers, so that both stay visible */
	for (size_t q = 0; q < sp->label_count; q++) {
		if (sp->block[q] < 0)
			continue;
		fprintf(gp, "%s'%s' index %d using 1:2 with linespoints ", first ? "" : ", \\\n     ",
			form->data, sp->block[q]);
		first = false;
		if (sp->same_as[q] < 0)
			fprintf(gp, "lw 2 lc rgb '%s' pt %d ps 1.1 title ", COLOUR(q), MARKER(q));
		else
			fprintf(gp, "lw 2 dt 2 lc rgb '%s' pt %d ps 2.2 title ", COLOUR(q), MARKER(q) - 1);
		series_text(sp, q, text, sizeof(text));
		gnuplot_string(gp, "%s", text);
		fputs(" noenhanced", gp);
	}
	/* a lower bound per problem, each dashed and in its own entry: the
	 * approximate strategies stand against approximate attention's
	 * (black), flash against exact attention's (in flash's colour) */
	for (int b = 0; b < BOUND_KINDS; b++) {
		if (sp->bound_block[b] < 0)
			continue;
		fprintf(gp, ", \\\n     '%s' index %d using 1:2 with lines lw 1.5 dt %d lc rgb '%s' title ",
			form->data, sp->bound_block[b], b == BOUND_APPROX ? 2 : 4,
			b == BOUND_APPROX ? "#000000" : exact_colour >= 0 ? COLOUR(exact_colour) : "#666666");
		bound_text(sp, b, text, sizeof(text));
		gnuplot_string(gp, "%s", text);
		fputs(" noenhanced", gp);
	}
	/* epsilon on the right axis, dotted, in its I/O series' colour; an
	 * epsilon equal to an earlier label's with a larger marker, so that
	 * both stay visible (strategies compute the same values) */
	for (size_t q = 0; q < sp->label_count; q++)
		if (sp->has_epsilon[q]) {
			int under = 0;

			for (int p = sp->epsilon_same_as[q]; p >= 0; p = sp->epsilon_same_as[p])
				under++;
			for (size_t p = 0; p < q; p++)
				under += sp->epsilon_same_as[q] >= 0 && sp->epsilon_same_as[p] == sp->epsilon_same_as[q];
			fprintf(gp, ", \\\n     '%s' index %d using 1:4 axes x1y2 with linespoints lw 1.5 dt 3 lc rgb '%s' pt %d ps %.1f title ",
				form->data, sp->block[q], COLOUR(q), MARKER(q) - 1, 0.8 + 0.7 * under);
			epsilon_text(sp, q, text, sizeof(text));
			gnuplot_string(gp, "%s", text);
			fputs(" noenhanced", gp);
		}
	fputc('\n', gp);
}

int ps_sweep_plot(const char *path, char param, const struct ps_sweep_row *rows,
		  size_t count, const struct ps_crossover *cross,
		  size_t cross_count, const struct ps_plot_options *opt,
		  struct ps_error *err)
{
	struct sweep_plot *sp = calloc(1, sizeof(*sp));
	struct plot_job job = { sweep_data, sweep_script, sp };
	int rc;

	if (!sp)
		return ps_error_set(err, PS_ENOMEM, "cannot plot: out of memory");
	*sp = (struct sweep_plot){ .param = param, .rows = rows, .count = count, .cross = cross,
				   .cross_count = cross_count, .opt = opt };
	sweep_prepare(sp);
	if (sp->xmax < sp->xmin)
		rc = ps_error_set(err, PS_EINPUT, "cannot plot to '%s': no run of the sweep has a result",
				  path ? path : opt->script);
	else
		rc = plot_run(path, opt ? opt->script : NULL, &job, err);
	free(sp);
	return rc;
}

/* ---- a map: the case and the cheapest strategy over two parameters --- */

static const char *const case_names[] = { "I", "II", "III", "IV" };
static const char *const case_colours[] = { "#a6cee3", "#b2df8a", "#fdbf6f", "#fb9a99" };
static const char *const case_words[] = {
	"Case I: d r <= M/4 (Theorem 1.1)",
	"Case II: some w >= g with w tau(w) <= M/4 (Key Lemma 3.2)",
	"Case III: M >= 4 g^2 (Theorem 1.3)",
	"Case IV: M < 4 g^2 (Theorem 1.4)",
};

static bool log_param(char param)
{
	return param == 'n' || param == 'M';
}

void ps_map_cell_edges(const uint64_t *v, size_t count, size_t k, char param,
		       double *lo, double *hi)
{
	const bool log_axis = log_param(param);
	double here = (double)v[k], prev = k ? (double)v[k - 1] : here,
	       next = k + 1 < count ? (double)v[k + 1] : here;

	if (count == 1) {
		*lo = log_axis ? here / 2 : here - 0.5;
		*hi = log_axis ? here * 2 : here + 0.5;
	} else if (log_axis) {
		*lo = k ? sqrt(prev * here) : here * sqrt(here / next);
		*hi = k + 1 < count ? sqrt(here * next) : here * sqrt(here / prev);
	} else {
		*lo = k ? (prev + here) / 2 : here - (next - here) / 2;
		*hi = k + 1 < count ? (here + next) / 2 : here + (here - prev) / 2;
	}
}

/* The right panel's title names every strategy compared, for the key
 * shows only those that are cheapest somewhere: "the cheapest of generic,
 * caseI, ... (cost models)", or their number where the names do not fit. */
static void map_cheapest_title(FILE *gp, const struct ps_map *map)
{
	char names[200];
	size_t used = 0;
	bool fits = true;

	names[0] = '\0';
	for (size_t q = 0; q < map->strategy_count && fits; q++) {
		int k = snprintf(names + used, sizeof(names) - used, "%s%s", q ? ", " : "",
				 map->strategies[q]);

		fits = k >= 0 && (size_t)k < sizeof(names) - used;
		used += fits ? (size_t)k : 0;
	}
	if (fits)
		gnuplot_string(gp, "the cheapest of %s (cost models)", names);
	else
		gnuplot_string(gp, "the cheapest of the %zu strategies compared (cost models; --json lists them)",
			       map->strategy_count);
}

/* The category of a cell in one panel: its case, or its cheapest
 * strategy (strategy_count: none applies); -1 for a case not known. */
static int cell_category(const struct ps_map *map, const struct ps_map_cell *c, bool cases)
{
	if (cases) {
		for (int k = 0; k < 4; k++)
			if (c->case_name && !strcmp(c->case_name, case_names[k]))
				return k;
		return -1;
	}
	for (size_t q = 0; q < map->strategy_count; q++)
		if (!strcmp(c->cheapest, map->strategies[q]))
			return (int)q;
	return (int)map->strategy_count;
}

/* Blocks: the cells of each case, of each strategy, then each line. */
struct map_blocks {
	int cases[4];
	int strategies[PS_SWEEP_MAX_STRATEGIES + 1];
	int lines[2];
};

static void map_block_layout(const struct ps_map *map, struct map_blocks *b)
{
	int next = 0;

	for (int panel = 0; panel < 2; panel++) {
		size_t kinds = panel ? map->strategy_count + 1 : 4;

		for (size_t k = 0; k < kinds; k++) {
			int *slot = panel ? &b->strategies[k] : &b->cases[k];

			*slot = -1;
			for (size_t c = 0; c < map->nx * map->ny && *slot < 0; c++)
				if (cell_category(map, &map->cells[c], !panel) == (int)k)
					*slot = next++;
		}
	}
	for (size_t l = 0; l < 2; l++)
		b->lines[l] = l < map->line_count ? next++ : -1;
}

/* The data: per category, each cell's x y xlow xhigh ylow yhigh; per
 * line, its points (a blank line where it breaks). */
static void map_data(FILE *data, void *ctx)
{
	const struct ps_map *map = ctx;
	struct map_blocks b;
	bool first = true;

	map_block_layout(map, &b);
	for (int panel = 0; panel < 2; panel++) {
		size_t kinds = panel ? map->strategy_count + 1 : 4;

		for (size_t k = 0; k < kinds; k++) {
			if ((panel ? b.strategies[k] : b.cases[k]) < 0)
				continue;
			fputs(first ? "" : "\n\n", data);
			first = false;
			fprintf(data, "# %s: x y xlow xhigh ylow yhigh\n",
				panel ? (k < map->strategy_count ? map->strategies[k] : "none applies")
				      : case_words[k]);
			for (size_t c = 0; c < map->nx * map->ny; c++) {
				size_t ix = c % map->nx, iy = c / map->nx;
				double xl, xh, yl, yh;

				if (cell_category(map, &map->cells[c], !panel) != (int)k)
					continue;
				ps_map_cell_edges(map->xs, map->nx, ix, map->x, &xl, &xh);
				ps_map_cell_edges(map->ys, map->ny, iy, map->y, &yl, &yh);
				fprintf(data, "%llu %llu %.10g %.10g %.10g %.10g\n",
					(unsigned long long)map->xs[ix], (unsigned long long)map->ys[iy],
					xl, xh, yl, yh);
			}
		}
	}
	for (size_t l = 0; l < map->line_count; l++) {
		fprintf(data, "\n\n# %s\n", map->lines[l].formula);
		for (size_t k = 0; k < map->lines[l].count; k++) {
			if (isnan(map->lines[l].points[k][0]))
				fputc('\n', data);
			else
				fprintf(data, "%.10g %.10g\n", map->lines[l].points[k][0],
					map->lines[l].points[k][1]);
		}
	}
}

void ps_map_axis_span(const uint64_t *v, size_t count, char param, double *lo, double *hi)
{
	double unused;

	ps_map_cell_edges(v, count, 0, param, lo, &unused);
	ps_map_cell_edges(v, count, count - 1, param, &unused, hi);
}

static void map_axes(FILE *gp, const struct ps_map *map)
{
	double lo, hi;

	ps_map_axis_span(map->xs, map->nx, map->x, &lo, &hi);
	fprintf(gp, "set xrange [%.10g:%.10g]\n", lo, hi);
	ps_map_axis_span(map->ys, map->ny, map->y, &lo, &hi);
	fprintf(gp, "set yrange [%.10g:%.10g]\n", lo, hi);
	/* a log axis's tics as powers of 2 (2^{10}), a linear one's as numbers */
	fprintf(gp, "%sset xlabel '%c'\n%sset ylabel '%c'\nset format x '%s'\nset format y '%s'\n",
		log_param(map->x) ? "set logscale x 2\n" : "", map->x,
		log_param(map->y) ? "set logscale y 2\n" : "", map->y,
		log_param(map->x) ? "2^{%L}" : "%.0f", log_param(map->y) ? "2^{%L}" : "%.0f");
	if (!log_param(map->x) && map->xs[map->nx - 1] - map->xs[0] <= 24)
		fputs("set xtics 1\n", gp);
	if (!log_param(map->y) && map->ys[map->ny - 1] - map->ys[0] <= 24)
		fputs("set ytics 1\n", gp);
}

/* The lines over a panel, after its cells. */
static void map_lines_plot(FILE *gp, const struct ps_map *map, const struct plot_form *form,
			   const struct map_blocks *b)
{
	static const char *const styles[] = { "lw 2.5 dt 2 lc rgb '#000000'", "lw 2.5 dt 4 lc rgb '#7f0000'" };

	for (size_t l = 0; l < map->line_count; l++) {
		fprintf(gp, ", \\\n     '%s' index %d using 1:2 with lines %s title ", form->data,
			b->lines[l], styles[map->lines[l].formula[0] == 'M' && strstr(map->lines[l].formula, "g^2") ? 1 : 0]);
		gnuplot_string(gp, "%s", map->lines[l].name);
		fputs(" noenhanced", gp);
	}
}

static void map_script(FILE *gp, const struct plot_form *form, void *ctx)
{
	const struct ps_map *map = ctx;
	struct map_blocks b;
	size_t entries;
	bool first;

	map_block_layout(map, &b);
	script_head(gp, form, 1200, 660);
	fputs("set multiplot layout 1,2 title ", gp);
	gnuplot_string(gp, "pebblesim map: %s", map->fixed ? map->fixed : "");
	/* the key below each panel, under the x label: room for the longer
	 * of the two (an entry a row of the 10-point font) */
	entries = 0;
	for (int k = 0; k < 4; k++)
		entries += b.cases[k] >= 0;
	for (size_t q = 0, right = 0; q <= map->strategy_count; q++)
		if ((right += b.strategies[q] >= 0) > entries)
			entries = right;
	fprintf(gp, " noenhanced\nset key outside below left vertical Left reverse spacing 1.1 font ',10'\n"
		"set bmargin %.1f\n", 3.5 + 1.0 * (double)(entries + map->line_count));
	map_axes(gp, map);
	/* the left panel: the case at each cell, named in it when there is room */
	fputs("set title 'the case (docs/BOUNDS.md)' noenhanced\nplot ", gp);
	first = true;
	for (int k = 0; k < 4; k++) {
		if (b.cases[k] < 0)
			continue;
		fprintf(gp, "%s'%s' index %d using 1:2:3:4:5:6 with boxxyerror fs solid 1.0 noborder lc rgb '%s' title ",
			first ? "" : ", \\\n     ", form->data, b.cases[k], case_colours[k]);
		gnuplot_string(gp, "%s", case_words[k]);
		fputs(" noenhanced", gp);
		if (map->nx * map->ny <= 400)
			fprintf(gp, ", \\\n     '%s' index %d using 1:2:('%s') with labels font ',9' notitle",
				form->data, b.cases[k], case_names[k]);
		first = false;
	}
	if (first)
		fputs("NaN notitle", gp);
	map_lines_plot(gp, map, form, &b);
	/* the right panel: the cheapest strategy, of the set compared */
	fputs("\nset title ", gp);
	map_cheapest_title(gp, map);
	fputs(" noenhanced\nplot ", gp);
	first = true;
	for (size_t q = 0; q <= map->strategy_count; q++) {
		if (b.strategies[q] < 0)
			continue;
		fprintf(gp, "%s'%s' index %d using 1:2:3:4:5:6 with boxxyerror fs solid 0.55 noborder lc rgb '%s' title ",
			first ? "" : ", \\\n     ", form->data, b.strategies[q],
			q < map->strategy_count ? COLOUR(q) : "#dddddd");
		if (q < map->strategy_count)
			gnuplot_string(gp, "%s", map->strategies[q]);
		else
			gnuplot_string(gp, "none of them applies");
		fputs(" noenhanced", gp);
		first = false;
	}
	map_lines_plot(gp, map, form, &b);
	fputs("\nunset multiplot\n", gp);
}

int ps_map_plot(const char *path, const struct ps_map *map,
		const struct ps_plot_options *opt, struct ps_error *err)
{
	struct plot_job job = { map_data, map_script, (void *)map };

	if (!map->nx || !map->ny)
		return ps_error_set(err, PS_EINPUT, "cannot plot an empty map");
	return plot_run(path, opt ? opt->script : NULL, &job, err);
}
