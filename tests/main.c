/*
 * The one test runner: every suite, one summary line.
 * CK_RUN_SUITE / CK_RUN_CASE select parts, as Check documents.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/cli/cli.h"

#include "tests.h"

/* tests/test_optimal.c: the exact optimum against exhaustive search */
Suite *optimal_suite(void);
/* tests/test_plot.c: the plots' formats, legends, and map */
Suite *plot_suite(void);
/* tests/test_plugin.c: plugins and the entry point of other languages */
Suite *plugin_suite(void);

void test_attention(struct ps_attention *att, uint64_t n, uint64_t d,
		    uint64_t g, int normalize)
{
	struct ps_attention_params p = {
		.n = n, .d = d, .g = g, .normalize = normalize != 0,
	};
	struct ps_error err;

	ps_error_clear(&err);
	ck_assert_msg(ps_attention_init(att, &p, &err) == 0, "%s", err.msg);
}

void test_write_npy_raw(const char *path, const char *header, const void *data,
			size_t bytes)
{
	FILE *f = fopen(path, "wb");
	size_t len = strlen(header);
	unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
				  (unsigned char)(len & 0xff), (unsigned char)(len >> 8) };

	ck_assert_ptr_nonnull(f);
	fwrite(pre, 1, sizeof(pre), f);
	fwrite(header, 1, len, f);
	fwrite(data, 1, bytes, f);
	fclose(f);
}

void test_slurp(FILE *f, char *buf, size_t len)
{
	size_t got;

	rewind(f);
	got = fread(buf, 1, len - 1, f);
	buf[got] = '\0';
	fclose(f);
}

int test_cli_va(char *out_text, size_t out_len, char *err_text, size_t err_len,
		const char *first, va_list ap)
{
	char *argv[40];
	int argc = 0;

	argv[argc++] = "pebblesim";
	for (const char *a = first; a; a = va_arg(ap, const char *)) {
		ck_assert_int_lt(argc, 39);
		argv[argc++] = (char *)a;
	}
	argv[argc] = NULL;
	return test_cli_run(argv, out_text, out_len, err_text, err_len);
}

int test_cli_capture(char *out_text, size_t out_len, char *err_text, size_t err_len,
		     const char *first, ...)
{
	va_list ap;
	int rc;

	va_start(ap, first);
	rc = test_cli_va(out_text, out_len, err_text, err_len, first, ap);
	va_end(ap);
	return rc;
}

char test_out[1 << 17], test_err[1 << 14];

int test_cli(const char *first, ...)
{
	va_list ap;
	int rc;

	va_start(ap, first);
	rc = test_cli_va(test_out, sizeof(test_out), test_err, sizeof(test_err), first, ap);
	va_end(ap);
	return rc;
}

void test_exact_attention(struct ps_attention *att, uint64_t n, uint64_t d,
			  int normalize)
{
	struct ps_attention_params p = {
		.n = n, .d = d, .normalize = normalize != 0, .exact = true,
	};
	struct ps_error err;

	ps_error_clear(&err);
	ck_assert_msg(ps_attention_init(att, &p, &err) == 0, "%s", err.msg);
}

void test_engine_setup(struct ps_attention *att, struct ps_engine *eng,
		       uint64_t n, uint64_t d, uint64_t g, int normalize,
		       uint64_t M)
{
	struct ps_error err;

	test_attention(att, n, d, g, normalize);
	ck_assert_msg(ps_engine_init(eng, &att->dag, M, &err) == 0, "%s", err.msg);
}

void test_engine_teardown(struct ps_attention *att, struct ps_engine *eng)
{
	ps_engine_free(eng);
	ps_attention_free(att);
}

bool test_grid_small(void)
{
	const char *grid = getenv("PS_TEST_GRID");

	return grid && !strcmp(grid, "small");
}

void test_dir_make(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "/tmp/pebblesim-%s-XXXXXX", name);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

void test_dir_enter(char *dir, size_t len, char *cwd, size_t cwd_len, const char *name)
{
	test_dir_make(dir, len, name);
	ck_assert_ptr_nonnull(getcwd(cwd, cwd_len));
	/* the tests run in it, and so do gnuplot's private directories */
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
}

void test_dir_leave(const char *dir, const char *cwd)
{
	ck_assert_int_eq(chdir(cwd), 0);
	test_dir_remove(dir);
}

void test_dir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (unlink(path))
				rmdir(path); /* an empty directory, a fake gnuplot's bin */
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

bool test_by_array_equal(const struct ps_dag *dag, const struct ps_array_io *measured,
			 const struct ps_array_io *predicted, char *why, size_t len)
{
	for (unsigned a = 0; a < PS_ARRAY_MAX; a++) {
		const char *name, *found = "an array the DAG does not list";
		unsigned at;

		if (measured[a].loads == predicted[a].loads &&
		    measured[a].saves == predicted[a].saves)
			continue;
		for (unsigned k = 0; (name = ps_dag_array_at(dag, k, &at)); k++)
			if (at == a)
				found = name;
		snprintf(why, len, "%s: measured %llu loads + %llu saves, predicted %llu + %llu",
			 found,
			 (unsigned long long)measured[a].loads,
			 (unsigned long long)measured[a].saves,
			 (unsigned long long)predicted[a].loads,
			 (unsigned long long)predicted[a].saves);
		return false;
	}
	return true;
}

void test_sweep_row(struct ps_sweep_row *r, const char *label, uint64_t value, uint64_t io)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->label, sizeof(r->label), "%s", label);
	r->value = value;
	r->io = io;
	r->ran = true;
}

int test_cli_run(char **argv, char *out_text, size_t out_len, char *err_text,
		 size_t err_len)
{
	FILE *out = tmpfile(), *err = tmpfile();
	int argc = 0, rc;

	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(err);
	while (argv[argc])
		argc++;
	rc = ps_cli_main(argc, argv, out, err);
	test_slurp(out, out_text, out_len);
	test_slurp(err, err_text, err_len);
	return rc;
}

int main(void)
{
	SRunner *sr = srunner_create(monomial_suite());
	int failed;

	srunner_add_suite(sr, dag_suite());
	srunner_add_suite(sr, engine_suite());
	srunner_add_suite(sr, ops_suite());
	srunner_add_suite(sr, generic_suite());
	srunner_add_suite(sr, strategies_suite());
	srunner_add_suite(sr, bounds_suite());
	srunner_add_suite(sr, exact_suite());
	srunner_add_suite(sr, sweep_suite());
	srunner_add_suite(sr, values_suite());
	srunner_add_suite(sr, polynomial_suite());
	srunner_add_suite(sr, golden_suite());
	srunner_add_suite(sr, trace_suite());
	srunner_add_suite(sr, explicit_suite());
	srunner_add_suite(sr, block_suite());
	srunner_add_suite(sr, cli_suite());
	srunner_add_suite(sr, untrusted_suite());
	srunner_add_suite(sr, outputs_suite());
	srunner_add_suite(sr, hostile_suite());
	srunner_add_suite(sr, optimal_suite());
	srunner_add_suite(sr, plot_suite());
	srunner_add_suite(sr, by_array_suite());
	srunner_add_suite(sr, tools_suite());
	srunner_add_suite(sr, plugin_suite());
	srunner_add_suite(sr, view_suite());
	srunner_add_suite(sr, colpass_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
