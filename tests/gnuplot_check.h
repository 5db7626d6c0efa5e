#ifndef PEBBLESIM_TESTS_GNUPLOT_CHECK_H
#define PEBBLESIM_TESTS_GNUPLOT_CHECK_H

#include <stddef.h>

/*
 * 0 when the script s[0..n) holds only pebblesim's own gnuplot code:
 * single-quoted strings (none starting with a pipe's < or |), numbers,
 * punctuation and the words its plot writers use. Otherwise -1, with the
 * first offence in why (may be NULL).
 */
int gnuplot_check(const char *s, size_t n, char *why, size_t why_len);

#endif
