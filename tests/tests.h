/* The suites of the one test runner. */
#ifndef PEBBLESIM_TESTS_H
#define PEBBLESIM_TESTS_H

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pebblesim/attention.h"
#include "pebblesim/engine.h"
#include "pebblesim/sweep.h"

Suite *monomial_suite(void);
Suite *dag_suite(void);
Suite *engine_suite(void);
Suite *ops_suite(void);
Suite *generic_suite(void);
Suite *strategies_suite(void);
Suite *golden_suite(void);
Suite *trace_suite(void);
Suite *explicit_suite(void);
Suite *block_suite(void);
Suite *cli_suite(void);
Suite *bounds_suite(void);
Suite *exact_suite(void);
Suite *sweep_suite(void);
Suite *untrusted_suite(void);
Suite *outputs_suite(void);
Suite *values_suite(void);
Suite *hostile_suite(void);
Suite *polynomial_suite(void);
Suite *by_array_suite(void);
Suite *tools_suite(void);
Suite *view_suite(void);
Suite *colpass_suite(void);
Suite *causal_suite(void);

/* Builds the attention DAG for (n, d, g, normalize) or fails the test. */
void test_attention(struct ps_attention *att, uint64_t n, uint64_t d,
		    uint64_t g, int normalize);
/* ... the causal DAG (MODEL.md section 7) */
void test_causal_attention(struct ps_attention *att, uint64_t n, uint64_t d,
			   uint64_t g, int normalize);

/* The contents of f (from its start) into buf, NUL-terminated; f closed. */
void test_slurp(FILE *f, char *buf, size_t len);

/* Runs the command line on the NULL-terminated arguments after first
 * (argv[0] is "pebblesim"), its standard output and error captured into
 * the buffers; returns the exit status. */
int test_cli_va(char *out_text, size_t out_len, char *err_text, size_t err_len,
		const char *first, va_list ap);

/* test_cli_va into test_out and test_err, shared by the suites that need
 * no buffers of their own. */
extern char test_out[1 << 17], test_err[1 << 14];
int test_cli(const char *first, ...);

/* The same with the arguments after first, NULL last. */
int test_cli_capture(char *out_text, size_t out_len, char *err_text, size_t err_len,
		     const char *first, ...);

#define HAS(text, needle) \
	ck_assert_msg(strstr((text), (needle)) != NULL, "'%s' not in:\n%s", (needle), (text))

/* Writes a .npy file of version 1.0 with this header and these data bytes. */
void test_write_npy_raw(const char *path, const char *header, const void *data,
			size_t bytes);

/* The exact-attention DAG (MODEL.md section 5) for (n, d, normalize). */
void test_exact_attention(struct ps_attention *att, uint64_t n, uint64_t d,
			  int normalize);

/* Runs s (of exact attention) on att at M: valid, measured equal to
 * predicted in total and by array, peaks within plan and M, I/O at or
 * above every lower bound, the block path's counts those of the element
 * path. Returns the I/O. */
struct ps_strategy;
uint64_t test_check_exact_run(const struct ps_attention *att,
			      const struct ps_strategy *s, uint64_t M);

/* A pebbling of exact attention in blocks of a query and c key rows,
 * query or key blocks outermost, into eng: 0 or the engine's code. */
typedef int test_pebbling_fn(const struct ps_attention *att, uint64_t a, uint64_t c,
			     bool key_outer, struct ps_engine *eng);

/* The pebbling on exact attention without normalisation (causal or not),
 * n from 3 to 64, d from 1 to 5, over blocks of 1, 2, 5 and 64 rows in
 * both orders, each at the least M that holds it (one less fails) and
 * twice that: no applied bound exceeds its I/O. Where the S segment bound
 * is the largest, *above_trivial counts the point and *closest keeps the
 * largest ratio of the bound to the I/O. */
void test_pebblings_against_bounds(test_pebbling_fn *pebbling, bool causal,
				   int *above_trivial, double *closest);

/* Every node of att: ids round trip, parents, products and sums agree,
 * edge bits disjoint and covering, outputs of the output kind. */
void test_check_every_node(const struct ps_attention *att);

/* The attention DAG and an engine on it under M; and both freed. */
void test_engine_setup(struct ps_attention *att, struct ps_engine *eng,
		       uint64_t n, uint64_t d, uint64_t g, int normalize,
		       uint64_t M);
void test_engine_teardown(struct ps_attention *att, struct ps_engine *eng);

/* A fresh directory /tmp/pebblesim-NAME-XXXXXX into dir; and removed
 * with the files in it. */
void test_dir_make(char *dir, size_t len, const char *name);
void test_dir_remove(const char *dir);

/* test_dir_make, then into it with $TMPDIR there (cwd gets the runner's
 * directory); and back to cwd, the directory removed. */
void test_dir_enter(char *dir, size_t len, char *cwd, size_t cwd_len, const char *name);
void test_dir_leave(const char *dir, const char *cwd);

/* Do the engine's loads and saves by array (measured) equal a cost
 * model's (predicted), for every one of the PS_ARRAY_MAX arrays? If not,
 * why names the first that differs. */
bool test_by_array_equal(const struct ps_dag *dag, const struct ps_array_io *measured,
			 const struct ps_array_io *predicted, char *why, size_t len);

/* A sweep row of label at value with this I/O, ran. */
void test_sweep_row(struct ps_sweep_row *r, const char *label, uint64_t value, uint64_t io);

/* Runs ps_cli_main on the NULL-terminated argv (argv[0] the program's
 * name); its standard output and error into the buffers; the status. */
int test_cli_run(char **argv, char *out_text, size_t out_len, char *err_text,
		 size_t err_len);

/* Seconds a test may take: generous, for sanitizer and valgrind builds. */
#define PS_TEST_TIMEOUT 600

/*
 * PS_TEST_GRID=small: the sanitizer builds of .ci/run (and valgrind) run
 * the tests that are slow there on smaller grids, which reach the same
 * code paths; make check runs the default grids, make check-full
 * (PS_TEST_GRID=full) the largest. A test slow under the sanitizers (the
 * runner prints each suite's processor seconds; CK_XML_LOG_FILE_NAME
 * gives each test's) says so where it shrinks, with its time there.
 */
bool test_grid_small(void);

#endif
