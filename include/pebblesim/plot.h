/*
 * Plots drawn with gnuplot (Debian's gnuplot-nox): a sweep's I/O against
 * the swept parameter. gnuplot runs without a shell in a private
 * directory; the picture goes through the output writer (output.h) and is
 * checked complete before it replaces the file (docs/SECURITY.md).
 */
#ifndef PEBBLESIM_PLOT_H
#define PEBBLESIM_PLOT_H

#include <stddef.h>

#include "pebblesim/common.h"
#include "pebblesim/sweep.h"

/* Draws I/O against the swept value on log-log axes with gnuplot, into
 * path (.svg or .png): a line per label, lower bounds dashed, crossovers
 * marked; with values, epsilon on a second axis (right), dotted. */
int ps_sweep_plot(const char *path, char param, const struct ps_sweep_row *rows,
		  size_t count, const struct ps_crossover *cross,
		  size_t cross_count, struct ps_error *err);

#endif
