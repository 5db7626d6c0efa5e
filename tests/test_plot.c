/*
 * The plots (src/plot.c) and `pebblesim map` (src/cli/map.c): each format
 * is made and complete, the legend names a lower bound per problem,
 * series that coincide are both named, --plot-script draws the same plot
 * again, and every cell of a map has the case that `run --dry-run` gives.
 * gnuplot runs for real (scripts/deps.sh installs gnuplot-nox).
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "../src/cli/cli.h"
#include "gnuplot_check.h"
#include "pebblesim/plot.h"
#include "pebblesim/sweep.h"
#include "tests.h"

static char out_text[1 << 17], err_text[1 << 14];
static char dir[64], cwd[4096];

static void setup(void)
{
	test_dir_enter(dir, sizeof(dir), cwd, sizeof(cwd), "plot");
}

static void teardown(void)
{
	test_dir_leave(dir, cwd);
}

/* Runs pebblesim with the NULL-terminated arguments; returns the status. */
#define cli(...) test_cli_capture(out_text, sizeof(out_text), err_text, sizeof(err_text), __VA_ARGS__)

/* The whole of a file, NUL-ended (binary files too: len says how long). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long size;

	ck_assert_msg(f != NULL, "no file '%s'", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	ck_assert_int_gt(size, 0);
	rewind(f);
	buf = malloc((size_t)size + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
	buf[size] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)size;
	return buf;
}

static size_t occurrences(const char *text, const char *needle)
{
	size_t count = 0;

	for (const char *p = text; (p = strstr(p, needle)); p++)
		count++;
	return count;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A sweep of n by the cost models over [lo, hi] (x2) at d, g, M. */
static void predict_spec(struct ps_sweep_spec *spec, uint64_t lo, uint64_t hi, uint64_t d,
			 uint64_t g, uint64_t M)
{
	memset(spec, 0, sizeof(*spec));
	spec->d = d;
	spec->g = g;
	spec->M = M;
	spec->normalize = true;
	spec->predict = true;
	spec->jobs = 1;
	spec->range = (struct ps_sweep_range){ 'n', lo, hi, 2, true };
}

#define SMALL_SWEEP "sweep", "-n", "1k:4k:x2", "-d", "16", "-g", "3", "-M", "8k", "--predict", \
	"--strategies", "flash,caseI,keylemma"

/* Each format, whole: an SVG that closes, a PNG of 1920 x 1200 in true
 * colour ending in IEND, a PDF ending in %%EOF; another ending refused. */
START_TEST(test_plot_formats)
{
	static const unsigned char png_sig[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	size_t len;
	char *svg, *png, *pdf;

	ck_assert_int_eq(cli(SMALL_SWEEP, "--plot", "p.svg", NULL), 0);
	svg = slurp("p.svg", &len);
	HAS(svg, "<svg");
	HAS(svg, "width=\"960\"");
	HAS(svg + len - 8, "</svg>");
	free(svg);
	ck_assert_int_eq(cli(SMALL_SWEEP, "--plot", "p.png", NULL), 0);
	png = slurp("p.png", &len);
	ck_assert_int_eq(memcmp(png, png_sig, sizeof(png_sig)), 0);
	ck_assert_int_eq(memcmp(png + 12, "IHDR", 4), 0);
	ck_assert_uint_eq(be32((unsigned char *)png + 16), 1920);
	ck_assert_uint_eq(be32((unsigned char *)png + 20), 1200);
	ck_assert_int_eq(png[24], 8);                   /* bits a sample */
	ck_assert_msg(png[25] == 2 || png[25] == 6, "colour type %d is not true colour", png[25]);
	ck_assert_int_eq(memcmp(png + len - 8, "IEND", 4), 0);
	free(png);
	ck_assert_int_eq(cli(SMALL_SWEEP, "--plot", "p.pdf", NULL), 0);
	pdf = slurp("p.pdf", &len);
	ck_assert_int_eq(memcmp(pdf, "%PDF-", 5), 0);
	HAS(pdf + len - 8, "%%EOF");
	free(pdf);
	ck_assert_int_eq(cli(SMALL_SWEEP, "--plot", "p.jpg", NULL), 2);
	HAS(err_text, "cannot plot to 'p.jpg': the name ends in .svg, .png or .pdf");
	ck_assert_int_ne(access("p.jpg", F_OK), 0);
}
END_TEST

/* The legend: one entry per problem's lower bound, named by problem and
 * by the bounds it is made of, as ps_bounds_lower names them; the title
 * gives the parameters held fixed; the x range ends at the data. */
START_TEST(test_plot_legend)
{
	struct ps_sweep_spec spec;
	struct ps_sweep_row row;
	char *svg, *gp, label[160];

	ck_assert_int_eq(cli(SMALL_SWEEP, "--plot", "p.svg", "--plot-script", "p.gp", NULL), 0);
	svg = slurp("p.svg", NULL);
	gp = slurp("p.gp", NULL);
	/* the approximate strategies' bound, at these points the trivial one
	 * (3nd + nd) as the sweep's own rows say */
	predict_spec(&spec, 1024, 4096, 16, 3, 8192);
	for (uint64_t n = 1024; n <= 4096; n *= 2) {
		ps_sweep_point(&spec, n, "caseI", &row);
		ck_assert(row.ran);
		ck_assert_double_eq(row.lower, 4.0 * (double)n * 16);
	}
	/* each key entry once as text (the SVG names its series again in a
	 * <title>) */
	snprintf(label, sizeof(label), "<text>lower bound, approximate (trivial)</text>");
	ck_assert_uint_eq(occurrences(svg, label), 1);
	ck_assert_uint_eq(occurrences(svg, "<text>lower bound, exact ("), 1);
	ck_assert_uint_eq(occurrences(svg, "lower bounds"), 0);
	/* both dashed, each in its own style */
	HAS(gp, "with lines lw 1.5 dt 2 lc rgb '#000000' title 'lower bound, approximate (trivial)' noenhanced");
	HAS(gp, "with lines lw 1.5 dt 4");
	/* drawn from the cost models (--predict): the title says so */
	HAS(svg, "I/O against n (cost models): d = 16, g = 3, M = 8192, Taylor polynomial");
	HAS(gp, "set xrange [1024:4096]");
	HAS(gp, "set logscale x 2");
	free(svg);
	free(gp);
	/* where a partition bound is the largest, the legend names it as
	 * `run --dry-run` does at every point */
	ck_assert_int_eq(cli("sweep", "-n", "1k:2k:x2", "-d", "16", "-g", "4", "-M", "64", "--predict",
			     "--strategies", "generic", "--plot", "k.svg", NULL), 0);
	svg = slurp("k.svg", NULL);
	label[0] = '\0';
	for (const char *const *n = (const char *const[]){ "1024", "2048", NULL }; *n; n++) {
		json_error_t jerr;
		json_t *dry;
		const char *name;

		ck_assert_int_eq(cli("run", "--dry-run", "--json", "-n", *n, "-d", "16", "-g", "4", "-M", "64",
				     "--strategy", "generic", NULL), 0);
		dry = json_loads(out_text, 0, &jerr);
		ck_assert_ptr_nonnull(dry);
		name = json_string_value(json_object_get(json_object_get(json_object_get(dry, "bounds"), "lower"), "name"));
		ck_assert_ptr_nonnull(name);
		ck_assert_str_ne(name, "trivial");
		if (!strstr(label, name))
			snprintf(label + strlen(label), sizeof(label) - strlen(label), "%s%s",
				 label[0] ? ", " : "<text>lower bound, approximate (", name);
		json_decref(dry);
	}
	snprintf(label + strlen(label), sizeof(label) - strlen(label), ")</text>");
	ck_assert_uint_eq(occurrences(svg, label), 1);
	free(svg);
	/* g and d on linear axes */
	ck_assert_int_eq(cli("sweep", "-g", "1:3", "-n", "64", "-d", "4", "-M", "1k", "--predict",
			     "--strategies", "caseI", "--plot-script", "g.gp", NULL), 0);
	gp = slurp("g.gp", NULL);
	ck_assert_ptr_null(strstr(gp, "set logscale x"));
	HAS(gp, "set xrange [1:3]");
	free(gp);
}
END_TEST

/* A sweep of decoding's prompt length P (MODEL.md section 8) draws I/O
 * per generated token, (loads + saves) / (n - P), against P on a log
 * axis: the axis, the title (cost models, decoding, n held fixed) and each
 * point, the bounds too, as the sweep's own rows over their tokens; the
 * exact bound named as the report names it. A causal sweep of n says
 * causal in its title and draws total I/O. */
START_TEST(test_plot_decode)
{
	struct ps_sweep_spec spec;
	struct ps_sweep_row row;
	char *gp, *dat, line[128];
	const char *labels[] = { "recurrent-decode", "flash-decode" };

	ck_assert_int_eq(cli("sweep", "--causal", "--decode", "64:256:x2", "-n", "320", "-d", "4", "-g", "2",
			     "-M", "1k", "--predict", "--strategies", "recurrent-decode,flash-decode",
			     "--baseline", "flash-decode", "--plot-script", "d.gp", NULL), 0);
	gp = slurp("d.gp", NULL);
	dat = slurp("d.dat", NULL);
	HAS(gp, "set ylabel 'I/O per generated token ((loads + saves) / (n - P))'\n");
	HAS(gp, "set xlabel 'P (prompt length)'\n");
	HAS(gp, "set logscale x 2\n");
	HAS(gp, "set title 'I/O per generated token against P (cost models), decoding' ");
	HAS(gp, "set label 'n = 320, d = 4, g = 2, M = 1024, Taylor polynomial' ");
	HAS(gp, "title 'lower bound, exact (trivial (decode), decode steps)'");
	memset(&spec, 0, sizeof(spec));
	spec = (struct ps_sweep_spec){ .n = 320, .d = 4, .g = 2, .M = 1024, .normalize = true, .causal = true,
				       .decode = 64, .predict = true, .jobs = 1,
				       .range = { 'P', 64, 256, 2, true } };
	for (size_t q = 0; q < 2; q++)
		for (uint64_t P = 64; P <= 256; P *= 2) {
			ps_sweep_point(&spec, P, labels[q], &row);
			ck_assert(row.ran);
			ck_assert_uint_eq(row.decode, P);
			/* not the total: a point of 320 - P tokens */
			ck_assert_uint_gt(row.io, 2 * (row.n - P));
			snprintf(line, sizeof(line), "\n%llu %.17g %.17g ", (unsigned long long)P,
				 (double)row.io / (double)(row.n - P), row.lower / (double)(row.n - P));
			HAS(dat, line);
		}
	free(gp);
	free(dat);
	ck_assert_int_eq(cli("sweep", "--causal", "-n", "1k:2k:x2", "-d", "16", "-g", "2", "-M", "8k",
			     "--predict", "--strategies", "recurrent,flash", "--plot-script", "c.gp", NULL), 0);
	gp = slurp("c.gp", NULL);
	HAS(gp, "set title 'I/O against n (cost models), causal: d = 16, g = 2, M = 8192, Taylor polynomial' ");
	HAS(gp, "set ylabel 'I/O (loads + saves)'\n");
	free(gp);
}
END_TEST

/* Two labels whose points are equal (case runs caseI in Case I): the
 * second is drawn dashed with open markers and named "case (= caseI)". */
START_TEST(test_plot_coincide)
{
	struct ps_sweep_spec spec;
	struct ps_sweep_row *rows;
	struct ps_error err;
	size_t count;
	char *svg;

	predict_spec(&spec, 64, 256, 4, 2, 1024);
	spec.labels[0] = "caseI";
	spec.labels[1] = "case";
	spec.label_count = 2;
	ps_error_clear(&err);
	ck_assert_int_eq(ps_sweep_run(&spec, &rows, &count, &err), 0);
	ck_assert_uint_eq(count, 6);
	for (size_t k = 0; k < count; k += 2) {
		ck_assert(rows[k].ran && rows[k + 1].ran);
		ck_assert_uint_eq(rows[k].io, rows[k + 1].io);
	}
	ck_assert_int_eq(ps_sweep_plot("c.svg", 'n', rows, count, NULL, 0, NULL, &err), 0);
	svg = slurp("c.svg", NULL);
	ck_assert_uint_eq(occurrences(svg, "<text>case (= caseI)</text>"), 1);
	HAS(svg, ">caseI<");
	free(svg);
	/* one point apart: no longer the same series */
	rows[count - 1].io++;
	ck_assert_int_eq(ps_sweep_plot("d.svg", 'n', rows, count, NULL, 0, NULL, &err), 0);
	svg = slurp("d.svg", NULL);
	ck_assert_ptr_null(strstr(svg, "(= caseI)"));
	free(svg);
	free(rows);
}
END_TEST

/* --plot-script: the script and its data, which gnuplot draws into the
 * plot's name again; a name the script cannot hold is refused. */
START_TEST(test_plot_script)
{
	char *gp, *dat, *svg, *again;
	int status;

	ck_assert_int_eq(cli(SMALL_SWEEP, "--plot", "p.svg", "--plot-script", "s.gp", NULL), 0);
	gp = slurp("s.gp", NULL);
	dat = slurp("s.dat", NULL);
	HAS(gp, "set output 'p.svg'\n");
	HAS(gp, "'s.dat' index 0 using 1:2");
	HAS(dat, "# flash: value io lower epsilon g\n1024 ");
	svg = slurp("p.svg", NULL);
	ck_assert_int_eq(rename("p.svg", "first.svg"), 0);
	status = system("gnuplot s.gp 2>/dev/null");
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "gnuplot s.gp failed");
	again = slurp("p.svg", NULL);
	ck_assert_str_eq(again, svg);
	free(gp);
	free(dat);
	free(svg);
	free(again);
	ck_assert_int_eq(cli(SMALL_SWEEP, "--plot-script", "s.txt", NULL), 2);
	HAS(err_text, "its name ends in .gp");
	ck_assert_int_eq(cli(SMALL_SWEEP, "--plot-script", "s'x.gp", NULL), 2);
	ck_assert_int_eq(cli(SMALL_SWEEP, "--plot", "p q.svg", "--plot-script", "s.gp", NULL), 2);
	HAS(err_text, "the plot's name 'p q.svg' has a byte outside");
	/* an output that is an input: the data file over a merged CSV */
	ck_assert_int_eq(cli(SMALL_SWEEP, "--csv", "in.dat", NULL), 0);
	ck_assert_int_eq(cli("sweep", "--merge", "in.dat", "--plot-script", "in.gp", NULL), 2);
	HAS(err_text, "in.dat");
	/* an option of the plots refused where it does not apply */
	ck_assert_int_eq(cli("compare", "-n", "16", "-d", "4", "-g", "2", "-M", "40", "--plot-script", "x.gp", NULL), 2);
	HAS(err_text, "'--plot-script' does not apply to compare");
}
END_TEST

/* With values, each epsilon series takes its I/O series' colour, on the
 * right axis; frontier's points carry no "g = G" (the title names g). */
START_TEST(test_plot_epsilon_and_marks)
{
	/* the small grid (sanitizers) stops the frontier at n = 2k: its
	 * n = 4k took 15 s of processor in the default build, about 60 s
	 * under ASan, and the labels are drawn all the same */
	const char *ns = test_grid_small() ? "1k:2k:x2" : "1k:4k:x2";
	char *gp;

	ck_assert_int_eq(cli("sweep", "-g", "1:2", "-n", "16", "-d", "4", "-M", "200", "--values",
			     "--strategies", "caseI,generic", "--plot-script", "e.gp", NULL), 0);
	gp = slurp("e.gp", NULL);
	HAS(gp, "set y2label 'epsilon = max |A - softmax(Q K^T / sqrt d) V| (dotted)'");
	HAS(gp, "index 0 using 1:2 with linespoints lw 2 lc rgb '#0072b2'");
	HAS(gp, "index 0 using 1:4 axes x1y2 with linespoints lw 1.5 dt 3 lc rgb '#0072b2'");
	HAS(gp, "index 1 using 1:2 with linespoints lw 2 lc rgb '#d55e00'");
	HAS(gp, "index 1 using 1:4 axes x1y2 with linespoints lw 1.5 dt 3 lc rgb '#d55e00'");
	/* both compute the same values: the second epsilon is named equal,
	 * its marker larger */
	HAS(gp, "pt 4 ps 1.5 title 'generic epsilon (= caseI epsilon)'");
	free(gp);
	ck_assert_int_eq(cli("frontier", "-n", ns, "-d", "16", "-M", "8k", "--epsilon", "1e-1", "--entry-bound", "0.5",
			     "--plot", "f.svg", "--plot-script", "f.gp", NULL), 0);
	gp = slurp("f.gp", NULL);
	ck_assert_ptr_null(strstr(gp, "with labels"));
	/* its two-line title: a label for the second line, no double quote */
	ck_assert_int_eq(gnuplot_check(gp, strlen(gp), NULL, 0), 0);
	free(gp);
	gp = slurp("f.svg", NULL);
	ck_assert_ptr_null(strstr(gp, ">g = "));
	HAS(gp, "best at the least g whose a-priori bound is &lt;= 0.1");
	free(gp);
}
END_TEST

/* The tics of a log axis are powers as exponents: in the SVG, "10" then
 * its power raised in a smaller tspan; never the text "10^". */
static void exponents(const char *svg, const char *base, const char *power)
{
	char want[128];

	snprintf(want, sizeof(want), "<text><tspan font-family=\"Sans\" >%s</tspan><tspan font-family=\"Sans\"  font-size=\"9.6\" dy=\"-6.00px\">%s</tspan>",
		 base, power);
	ck_assert_msg(strstr(svg, want) != NULL, "no tic %s^%s in the SVG", base, power);
	snprintf(want, sizeof(want), "%s^", base);
	ck_assert_ptr_null(strstr(svg, want));
}

/* A paper's figure: exponents on the log axes, crossovers marked by a
 * line at the refined n and labelled above the plot in rows that do not
 * overlap, the cost models said in the title or each key entry. */
START_TEST(test_plot_for_a_paper)
{
	struct ps_sweep_spec spec;
	struct ps_sweep_row *rows;
	struct ps_crossover cross[4];
	struct ps_error err;
	size_t count, marks = 0;
	char *svg, *gp;
	const char *p;
	double offsets[8];

	ck_assert_int_eq(cli("sweep", "-n", "1k:64k:x2", "-d", "16", "-g", "3", "-M", "8k", "--predict",
			     "--strategies", "flash,keylemma,caseI,generic", "--refine", "--json",
			     "--plot", "r.svg", "--plot-script", "r.gp", NULL), 0);
	svg = slurp("r.svg", NULL);
	gp = slurp("r.gp", NULL);
	exponents(svg, "10", "4");
	exponents(svg, "10", "9");
	/* the refined ends, as the sweep's JSON gives them: 7410, 2152, 2869 */
	for (const char *const *t = (const char *const[]){ "<text>keylemma &lt; flash from n = 7410</text>",
							   "<text>caseI &lt; flash from n = 2152</text>",
							   "<text>generic &lt; flash from n = 2869</text>", NULL }; *t; t++) {
		char line[96], at[8];

		ck_assert_uint_eq(occurrences(svg, *t), 1);
		snprintf(at, sizeof(at), "%.4s", strrchr(*t, ' ') + 1);
		snprintf(line, sizeof(line), "set arrow from %s, graph 0 to %s, graph 1 nohead", at, at);
		HAS(gp, line);
	}
	HAS(out_text, "\"from\":7410");
	HAS(out_text, "\"from\":2152");
	/* an end at the range's edge is no crossing: 65536 is not marked */
	ck_assert_ptr_null(strstr(gp, "set arrow from 65536"));
	ck_assert_ptr_null(strstr(svg, "up to n = 65536"));
	/* 2152 and 2869 are too near for one row: the labels' rows differ */
	for (p = gp; (p = strstr(p, "graph 1 offset 0,")) && marks < 8; p++)
		offsets[marks++] = atof(p + strlen("graph 1 offset 0,"));
	ck_assert_uint_eq(marks, 3);
	ck_assert(offsets[1] != offsets[2]);
	/* no "g = 2" or other label on the curves, the title says cost models */
	ck_assert_ptr_null(strstr(gp, "with labels"));
	HAS(svg, "I/O against n (cost models)");
	/* the marks' and the exponents' script holds no code but pebblesim's */
	{
		char why[160];

		ck_assert_msg(gnuplot_check(gp, strlen(gp), why, sizeof(why)) == 0, "%s", why);
	}
	free(svg);
	free(gp);
	/* simulated: no such words; one label of cost models among simulated
	 * ones: its key entry says so */
	predict_spec(&spec, 64, 256, 4, 2, 1024);
	spec.labels[0] = "caseI";
	spec.labels[1] = "flash";
	spec.label_count = 2;
	ps_error_clear(&err);
	ck_assert_int_eq(ps_sweep_run(&spec, &rows, &count, &err), 0);
	for (size_t k = 0; k < count; k++)
		rows[k].simulated = !strcmp(rows[k].label, "caseI");
	ck_assert_uint_eq(ps_sweep_crossovers(rows, count, "flash", cross, 4), 1);
	ck_assert_int_eq(ps_sweep_plot("m.svg", 'n', rows, count, cross, 1, NULL, &err), 0);
	svg = slurp("m.svg", NULL);
	/* not refined: the mark is a grid point's and says so */
	ck_assert(cross[0].found && !cross[0].refined && cross[0].intervals[0].from > 64);
	HAS(svg, "caseI &lt; flash from n = 128 (on the grid)</text>");
	HAS(svg, ">flash (cost model)<");
	HAS(svg, ">caseI<");
	ck_assert_ptr_null(strstr(svg, "(cost models)"));
	free(svg);
	for (size_t k = 0; k < count; k++)
		rows[k].simulated = true;
	ck_assert_int_eq(ps_sweep_plot("s.svg", 'n', rows, count, cross, 1, NULL, &err), 0);
	svg = slurp("s.svg", NULL);
	ck_assert_ptr_null(strstr(svg, "cost model"));
	free(svg);
	free(rows);
	/* a map's log axis: powers of 2 as exponents */
	ck_assert_int_eq(cli("map", "-n", "256", "-d", "4", "-g", "1:3", "-M", "64:1k:x4", "--plot", "m.svg", NULL), 0);
	svg = slurp("m.svg", NULL);
	exponents(svg, "2", "6");
	exponents(svg, "2", "10");
	HAS(svg, "the cheapest of generic, caseI, keylemma, subtile, matmul (cost models)");
	free(svg);
}
END_TEST

/* Every cell of a map has the case that `run --dry-run` prints at that
 * point; the plot is made. */
START_TEST(test_map_cases)
{
	json_error_t jerr;
	json_t *root, *cells, *cell;
	size_t k, seen[4] = { 0 };
	char n[16], g[16], M[16], *gp;

	ck_assert_int_eq(cli("map", "-n", "256", "-d", "4", "-g", "1:5", "-M", "16:16k:x4", "--json", NULL), 0);
	root = json_loads(out_text, 0, &jerr);
	ck_assert_msg(root != NULL, "%s", jerr.text);
	cells = json_object_get(json_object_get(root, "map"), "cells");
	ck_assert_uint_eq(json_array_size(cells), 5 * 6);
	json_array_foreach(cells, k, cell) {
		const char *c = json_string_value(json_object_get(cell, "case"));
		json_t *dry;

		ck_assert_ptr_nonnull(c);
		snprintf(n, sizeof(n), "256");
		snprintf(g, sizeof(g), "%lld", json_integer_value(json_object_get(cell, "g")));
		snprintf(M, sizeof(M), "%lld", json_integer_value(json_object_get(cell, "M")));
		ck_assert_int_eq(cli("run", "--dry-run", "--json", "-n", n, "-d", "4", "-g", g, "-M", M,
				     "--strategy", "generic", NULL), 0);
		dry = json_loads(out_text, 0, &jerr);
		ck_assert_msg(dry != NULL, "%s", jerr.text);
		ck_assert_msg(!strcmp(json_string_value(json_object_get(dry, "case")), c),
			      "g = %s, M = %s: map says %s, run --dry-run %s", g, M, c,
			      json_string_value(json_object_get(dry, "case")));
		json_decref(dry);
		for (int q = 0; q < 4; q++)
			seen[q] += !strcmp(c, (const char *[]){ "I", "II", "III", "IV" }[q]);
	}
	/* the grid crosses every case */
	for (int q = 0; q < 4; q++)
		ck_assert_uint_gt(seen[q], 0);
	json_decref(root);
	ck_assert_int_eq(cli("map", "-n", "256", "-d", "4", "-g", "1:5", "-M", "16:16k:x4",
			     "--plot", "m.svg", "--plot-script", "m.gp", NULL), 0);
	HAS(out_text, "case                   g:");
	free(slurp("m.svg", NULL));
	/* the right panel names the set it compares, not "the cheapest strategy" */
	gp = slurp("m.gp", NULL);
	HAS(gp, "set title 'the cheapest of generic, caseI, keylemma, subtile, matmul (cost models)' noenhanced\n");
	free(gp);
	ck_assert_int_eq(cli("map", "-n", "256", "-d", "4", "-g", "1:2", "-M", "64:256:x4",
			     "--strategies", "colpass,best", "--plot-script", "m.gp", NULL), 0);
	gp = slurp("m.gp", NULL);
	HAS(gp, "set title 'the cheapest of colpass, best (cost models)' noenhanced\n");
	free(gp);
	ck_assert_int_eq(cli("map", "-n", "256", "-d", "4", "-g", "1:5", "-M", "16", NULL), 2);
	HAS(err_text, "map takes exactly two ranges");
}
END_TEST

Suite *plot_suite(void)
{
	Suite *s = suite_create("plot");
	TCase *tc = tcase_create("plot");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_plot_formats);
	tcase_add_test(tc, test_plot_legend);
	tcase_add_test(tc, test_plot_coincide);
	tcase_add_test(tc, test_plot_decode);
	tcase_add_test(tc, test_plot_script);
	tcase_add_test(tc, test_plot_epsilon_and_marks);
	tcase_add_test(tc, test_plot_for_a_paper);
	tcase_add_test(tc, test_map_cases);
	suite_add_tcase(s, tc);
	return s;
}
