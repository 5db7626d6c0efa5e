/*
 * The one test runner: every suite, one summary line.
 * CK_RUN_SUITE / CK_RUN_CASE select parts, as Check documents.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests.h"

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
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
