/*
 * Plots drawn with gnuplot (Debian's gnuplot-nox): a sweep's I/O against
 * the swept parameter, and the map of the paper's cases over two
 * parameters. gnuplot runs without a shell in a private directory; the
 * picture goes through the output writer (output.h) and is checked
 * complete before it replaces the file (docs/SECURITY.md). A plot's name
 * ends in .svg, .png (pngcairo, 1800 x 1200, true colour) or .pdf
 * (pdfcairo).
 */
#ifndef PEBBLESIM_PLOT_H
#define PEBBLESIM_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pebblesim/common.h"
#include "pebblesim/sweep.h"

struct ps_plot_options {
	const char *polynomial; /* named in the title ("taylor"), or NULL */
	const char *title;      /* words added to the title, or NULL */
	const char *script;     /* also write FILE.gp and FILE.dat, or NULL */
};

/*
 * The data file a --plot-script FILE.gp writes beside it: FILE.dat. The
 * script names its data file and its plot by their last components,
 * which must be of [A-Za-z0-9_.+-]; PS_EINPUT with err otherwise.
 */
int ps_plot_script_data_path(const char *script, char *buf, size_t len,
			     struct ps_error *err);

/*
 * Draws I/O against the swept value with gnuplot into path (or only the
 * script, when path is NULL and opt->script is not): a line per label
 * (a label whose points equal an earlier label's is drawn dashed with
 * open markers and named "label (= earlier)"), a dashed lower bound per
 * problem with the names of the bounds it is made of, crossovers marked;
 * the title gives the parameters held fixed; x on a log axis for n and M,
 * linear for d and g, ending at the data; I/O on a log axis; with values,
 * each epsilon on a second axis (right), dotted, in its I/O's colour.
 */
int ps_sweep_plot(const char *path, char param, const struct ps_sweep_row *rows,
		  size_t count, const struct ps_crossover *cross,
		  size_t cross_count, const struct ps_plot_options *opt,
		  struct ps_error *err);

/* A map (pebblesim map): at each point of a grid over two parameters,
 * the paper's case and the cheapest strategy. */
struct ps_map_cell {
	uint64_t x, y;
	const char *case_name; /* "I" .. "IV", or NULL (why) */
	char cheapest[24];     /* "": none of the strategies applies */
	uint64_t io;           /* the cheapest's, by its cost model */
	char why[256];
};

/* A line of the map, as points (x, y); a NaN x breaks it. */
struct ps_map_line {
	const char *name;    /* the legend's words */
	const char *formula; /* "M = 4 g^2" */
	const char *applies; /* the case beside it where it is drawn */
	double (*points)[2];
	size_t count;
};

struct ps_map {
	char x, y;                 /* the parameters of the axes: n, d, g or M */
	const char *fixed;         /* "n = 4096, d = 16": the title's */
	size_t nx, ny;
	const uint64_t *xs, *ys;   /* increasing */
	const struct ps_map_cell *cells; /* ny rows of nx, y outermost */
	const char *const *strategies;
	size_t strategy_count;
	struct ps_map_line lines[2];
	size_t line_count;
};

/* The edges of cell k of axis values v[0..count) (increasing) of
 * parameter param: midpoints, geometric on the log axes of n and M,
 * the ends mirrored. */
void ps_map_cell_edges(const uint64_t *v, size_t count, size_t k, char param,
		       double *lo, double *hi);

/* From the first cell's lower edge to the last cell's upper edge. */
void ps_map_axis_span(const uint64_t *v, size_t count, char param, double *lo,
		      double *hi);

/* Draws the map: the case on the left, the cheapest strategy on the
 * right, each cell a rectangle (log axes for n and M), the lines on
 * both. */
int ps_map_plot(const char *path, const struct ps_map *map,
		const struct ps_plot_options *opt, struct ps_error *err);

#endif
