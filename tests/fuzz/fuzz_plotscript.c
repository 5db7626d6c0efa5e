/*
 * libFuzzer target: fuzz-plot's path up to the gnuplot script, which
 * --plot-script writes and tests/gnuplot_check.c checks in process: only
 * pebblesim's own code may stand in it, whatever the merged CSV holds.
 */
#define FUZZ_PLOT_SCRIPT 1
#include "../gnuplot_check.c"
#include "fuzz_plot.c"
