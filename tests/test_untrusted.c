/*
 * Untrusted files and hostile parameters (docs/SECURITY.md): never a crash,
 * memory within the limits, outputs that never destroy what stands at
 * their path. One test per defect, named after it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/cli/cli.h"
#include "pebblesim/common.h"
#include "pebblesim/explicit.h"
#include "pebblesim/limits.h"
#include "pebblesim/output.h"
#include "pebblesim/run.h"
#include "pebblesim/trace.h"
#include "pebblesim/values.h"
#include "tests.h"

#if defined(__SANITIZE_ADDRESS__)
#define PS_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PS_TEST_ASAN 1
#endif
#endif

static char out_text[1 << 16], err_text[1 << 14];
static char dir[64]; /* a fresh directory per test */

static void setup(void)
{
	test_dir_make(dir, sizeof(dir), "untrusted");
}

static void teardown(void)
{
	test_dir_remove(dir);
}

/* dir/name in buf */
static char *in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t got;

	ck_assert_msg(f != NULL, "cannot open '%s'", path);
	got = fread(buf, 1, len - 1, f);
	buf[got] = '\0';
	fclose(f);
}

/* Runs pebblesim with the NULL-terminated arguments, its output into out
 * (a temporary file when NULL); returns the status. */
static int cli_to(FILE *out, const char *first, ...)
{
	char *argv[32];
	int argc = 0, rc;
	FILE *err = tmpfile(), *own = out ? NULL : tmpfile();
	va_list ap;

	ck_assert_ptr_nonnull(err);
	argv[argc++] = "pebblesim";
	va_start(ap, first);
	for (const char *a = first; a; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	rc = ps_cli_main(argc, argv, out ? out : own, err);
	out_text[0] = '\0';
	if (own)
		test_slurp(own, out_text, sizeof(out_text));
	test_slurp(err, err_text, sizeof(err_text));
	return rc;
}

#define cli(...) cli_to(NULL, __VA_ARGS__)

#define HAS(text, needle) \
	ck_assert_msg(strstr((text), (needle)) != NULL, "'%s' not in:\n%s", (needle), (text))

static const char tree_graphml[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
	"  <key id=\"role\" for=\"node\" attr.name=\"role\" attr.type=\"%s\"/>\n"
	"  <key id=\"label\" for=\"node\" attr.name=\"label\" attr.type=\"%s\"/>\n"
	"  <graph id=\"t\" edgedefault=\"directed\">\n"
	"    <node id=\"a\"><data key=\"role\">%s</data><data key=\"label\">%s</data></node>\n"
	"    <node id=\"b\"><data key=\"role\">%s</data></node>\n"
	"    <node id=\"c\"/>\n"
	"    <edge source=\"a\" target=\"c\"/>\n"
	"    <edge source=\"b\" target=\"%s\"/>\n"
	"  </graph>\n"
	"</graphml>\n";

/* A small GraphML DAG a, b -> c, with the types and values given. */
static void write_graphml(const char *path, const char *role_type,
			  const char *label_type, const char *role_a,
			  const char *label_a, const char *role_b,
			  const char *target_b)
{
	char text[2048];

	snprintf(text, sizeof(text), tree_graphml, role_type, label_type, role_a,
		 label_a, role_b, target_b);
	write_text(path, text);
}

/* 1. A header's strategy name selects nothing that cannot serve the DAG. */
START_TEST(test_header_strategy_of_other_kind)
{
	char trace[256], graphml[256], text[1 << 14], *at;
	FILE *f;

	/* the attention trace of examples/tiny.jsonl, its header naming lru */
	in_dir(trace, sizeof(trace), "t.jsonl");
	ck_assert_int_eq(cli("-n", "2", "-d", "1", "-g", "1", "-M", "9", "--strategy",
			     "naive", "--trace", trace, NULL), 0);
	read_text(trace, text, sizeof(text));
	at = strstr(text, "\"strategy\":\"naive\"");
	ck_assert_ptr_nonnull(at);
	memcpy(at + strlen("\"strategy\":\""), "lru\",  ", 7);
	write_text(trace, text);
	ck_assert_int_eq(cli("validate", trace, NULL), 0);
	HAS(out_text, "valid                  yes");
	/* an explicit DAG's trace whose header names generic, then caseI */
	in_dir(graphml, sizeof(graphml), "dag.graphml");
	write_graphml(graphml, "string", "string", "input", "x", "input", "c");
	ck_assert_int_eq(cli("run", "--dag", graphml, "-M", "3", "--trace", trace, NULL), 0);
	for (int k = 0; k < 2; k++) {
		read_text(trace, text, sizeof(text));
		at = strstr(text, k ? "\"strategy\":\"generic\"" : "\"strategy\":\"lru\"");
		ck_assert_ptr_nonnull(at);
		f = fopen(trace, "w");
		fwrite(text, 1, (size_t)(at - text), f);
		fprintf(f, "\"strategy\":\"%s\"%s", k ? "caseI" : "generic",
			at + strlen(k ? "\"strategy\":\"generic\"" : "\"strategy\":\"lru\""));
		fclose(f);
		ck_assert_int_eq(cli("validate", trace, "--dag", graphml, NULL), 0);
		HAS(out_text, "valid                  yes");
	}
}
END_TEST

/* 2. A role or label of another type than string is refused. */
START_TEST(test_graphml_attribute_types)
{
	static const struct {
		const char *role_type, *label_type, *role, *label, *want;
	} cases[] = {
		{ "double", "string", "1.5", "x", "the \"role\" attribute must be a string" },
		{ "boolean", "string", "true", "x", "the \"role\" attribute must be a string" },
		{ "string", "double", "input", "2", "the \"label\" attribute must be a string" },
		{ "string", "boolean", "input", "false", "the \"label\" attribute must be a string" },
	};
	char path[256];

	in_dir(path, sizeof(path), "typed.graphml");
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		write_graphml(path, cases[k].role_type, cases[k].label_type,
			      cases[k].role, cases[k].label, cases[k].role, "c");
		ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 2);
		HAS(err_text, cases[k].want);
	}
}
END_TEST

/* 3. An edge list's size is checked before igraph allocates anything. */
START_TEST(test_edgelist_size_before_igraph)
{
	char path[256];
	clock_t start = clock();

	in_dir(path, sizeof(path), "big.txt");
	write_text(path, "0 200000000\n");
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 2);
	HAS(err_text, "big.txt:1: vertex id beyond the limit of 4000000 vertices and edges in all");
	write_text(path, "0 2305843009213693951\n");
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 2);
	HAS(err_text, "vertex id beyond the limit");
	write_text(path, "0 99999999999999999999999999999\n");
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 2);
	HAS(err_text, "vertex id beyond the limit");
	/* refused at once, not after building a graph */
	ck_assert_msg(clock() - start < CLOCKS_PER_SEC, "took %.1f s",
		      (double)(clock() - start) / CLOCKS_PER_SEC);
	write_text(path, "0 -1\n");
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 2);
	HAS(err_text, "big.txt:1: an edge list holds vertex ids, integers >= 0 (found '-')");
	write_text(path, "0 1\n2\n");
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 2);
	HAS(err_text, "big.txt:2: an edge-list line holds exactly one pair of vertex ids (from to); this one holds one id");
	write_text(path, "0 1\n1 2\n");
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 0);
}
END_TEST

/* 4. The memory limit is the least of RAM, RLIMIT_AS and the cgroup's. */
START_TEST(test_memory_limit_honours_rlimit_and_cgroup)
{
	const char *source;
	uint64_t G = UINT64_C(1) << 30;

	ck_assert_uint_eq(ps_memory_limit_of(16 * G, UINT64_MAX, NULL, &source), 16 * G);
	ck_assert_str_eq(source, "this machine has");
	ck_assert_uint_eq(ps_memory_limit_of(16 * G, 2 * G, "max\n", &source), 2 * G);
	ck_assert_str_eq(source, "the address-space limit (ulimit -v) is");
	ck_assert_uint_eq(ps_memory_limit_of(16 * G, 2 * G, "1073741824\n", &source), G);
	ck_assert_str_eq(source, "the cgroup's memory limit is");
	ck_assert_uint_eq(ps_memory_limit_of(16 * G, UINT64_MAX, "junk", &source), 16 * G);
#ifndef PS_TEST_ASAN
	{
		/* a header of n = 2^30 under ulimit -v of 1 GiB (the sanitizer's
		 * shadow memory needs more address space than that) */
		struct rlimit saved, low;
		char path[256];

		ck_assert_int_eq(getrlimit(RLIMIT_AS, &saved), 0);
		low = saved;
		low.rlim_cur = G;
		in_dir(path, sizeof(path), "huge.jsonl");
		write_text(path, "{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\",\"n\":1073741824,\"d\":1,\"g\":0,\"normalize\":true},\"M\":9}\n");
		ck_assert_int_eq(setrlimit(RLIMIT_AS, &low), 0);
		ck_assert_uint_eq(ps_memory_limit(&source), G);
		ck_assert_int_eq(cli("validate", path, NULL), 2);
		ck_assert_int_eq(setrlimit(RLIMIT_AS, &saved), 0);
		HAS(err_text, "GiB; the address-space limit (ulimit -v) is 1.0 GiB");
	}
#endif
	{
		/* the small requests checked without a system call still meet
		 * a cap and its share among processes */
		struct ps_error err;

		ps_memory_limit_cap(UINT64_C(100) << 10);
		ck_assert_int_eq(ps_memory_fits(UINT64_C(50) << 10, "a table", &err), PS_OK);
		ck_assert_int_eq(ps_memory_fits(UINT64_C(95) << 10, "a table", &err), PS_ENOMEM);
		ck_assert_str_eq(err.msg, "a table needs about 95.0 KiB; pebblesim's own cap is 100.0 KiB");
		ps_memory_limit_share(2);
		ck_assert_int_eq(ps_memory_fits(UINT64_C(40) << 10, "a table", &err), PS_OK);
		ck_assert_int_eq(ps_memory_fits(UINT64_C(50) << 10, "a table", &err), PS_ENOMEM);
		ps_memory_limit_share(1);
		ps_memory_limit_cap(0);
		ck_assert_int_eq(ps_memory_fits(UINT64_C(95) << 10, "a table", &err), PS_OK);
	}
}
END_TEST

/* A run's state is checked against its strategy's estimate: flash holds
 * S and E as tiles and runs under a cap that refuses exact-matmul, which
 * touches every node, with the message naming it; and a run with values
 * counts their arrays. */
START_TEST(test_memory_limit_by_strategy)
{
	struct ps_attention att;
	struct ps_problem pb;
	struct ps_report rep;
	struct ps_plan plan;
	struct ps_error err;
	const struct ps_strategy *flash = ps_strategy_find("flash");
	const struct ps_strategy *matmul = ps_strategy_find("exact-matmul");
	uint64_t tiled, whole;

	test_exact_attention(&att, 512, 4, true);
	memset(&pb, 0, sizeof(pb));
	pb.att = &att;
	pb.M = 400;
	ck_assert_int_eq(ps_strategy_plan(flash, &pb, &plan, &err), 0);
	tiled = ps_plan_state_bytes(&plan, &att.dag);
	whole = ps_engine_state_bytes(&att.dag);
	ck_assert_uint_lt(4 * tiled, whole);
	/* a limit between them: 90% of it is the state's */
	ps_memory_limit_cap((tiled + whole) / 2 * 10 / 9);
	ck_assert_int_eq(ps_run(&pb, flash, NULL, &rep, &err), 0);
	ck_assert(rep.valid);
	ck_assert_int_eq(ps_run(&pb, matmul, NULL, &rep, &err), PS_ENOMEM);
	ck_assert_msg(strstr(err.msg, "the pebble state of exact-matmul's sequence needs about"),
		      "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "KiB; pebblesim's own cap is"), "%s", err.msg);
	/* the command line alike: exit 0, then 2 */
	ck_assert_int_eq(cli("--attention", "exact", "-n", "512", "-d", "4", "-M", "400", NULL), 0);
	ck_assert_int_eq(cli("--attention", "exact", "-n", "512", "-d", "4", "-M", "400",
			     "--strategy", "exact-matmul", NULL), 2);
	HAS(err_text, "exact-matmul's sequence needs about");
	/* on the element path flash touches S and E too */
	ck_assert_int_eq(cli("--attention", "exact", "-n", "512", "-d", "4", "-M", "400",
			     "--element-path", NULL), 2);
	HAS(err_text, "flash's sequence needs about");
	/* values count too, checked before they are drawn */
	ps_memory_limit_cap((tiled + ps_values_bytes(&att, 400) / 2) * 10 / 9);
	ck_assert_int_eq(cli("--attention", "exact", "-n", "512", "-d", "4", "-M", "400", NULL), 0);
	ck_assert_int_eq(cli("--attention", "exact", "-n", "512", "-d", "4", "-M", "400",
			     "--values", NULL), 2);
	HAS(err_text, "flash's sequence with values needs about");
	ps_memory_limit_cap(0);
	ps_attention_free(&att);
}
END_TEST

/*
 * What a strategy allocates before the pebble state is checked: the tables
 * of its plan (d = 2332387903 once allocated 2.3 GB for them before any
 * check, under a cap of 512 bytes) and the tables of a cache policy.
 */
START_TEST(test_memory_limit_before_plans)
{
	struct ps_attention att;
	struct ps_attention_params p = { .n = 8, .d = 600, .g = 1 };
	struct ps_problem pb;
	struct ps_report rep;
	struct ps_plan plan;
	struct ps_error err;
	const struct ps_strategy *keylemma = ps_strategy_find("keylemma");
	const struct ps_strategy *naive = ps_strategy_find("naive");
	uint64_t tables, state;
	char path[256];

	/* the command line refuses before any strategy plans */
	ps_memory_limit_cap(UINT64_C(64) << 20);
	ck_assert_int_eq(cli("-n", "1", "-d", "2332387903", "-g", "0", "-M", "92", NULL), 2);
	HAS(err_text, "pebblesim: the monomial table with the plan's tiles for n = 1, d = 2332387903, g = 0 needs about 36.9 GiB; pebblesim's own cap is 64.0 MiB");
	ck_assert_int_eq(cli("--strategy", "generic", "-n", "1", "-d", "2332387903", "-g", "0",
			     "-M", "92", "--dry-run", NULL), 2);
	HAS(err_text, "plan's tiles for n = 1, d = 2332387903");
	ck_assert_int_eq(cli("compare", "-n", "1", "-d", "2332387903", "-g", "0", "-M", "92", NULL), 2);
	HAS(err_text, "needs about");
	/* and before a trace's lines are counted, a pass of the whole run
	 * (6 s here): its state, 23 MiB, is refused at once */
	ps_memory_limit_cap(UINT64_C(8) << 20);
	in_dir(path, sizeof(path), "large.jsonl");
	ck_assert_int_eq(cli("-n", "6m", "-d", "2", "-g", "1", "-M", "9", "--trace", path, NULL), 2);
	HAS(err_text, "the pebble state of keylemma's sequence needs about");
	ck_assert_int_eq(access(path, F_OK), -1);
	ps_memory_limit_cap(0);

	/* the library: a plan checks its tiles before it allocates them */
	ck_assert_int_eq(ps_attention_init(&att, &p, &err), 0);
	memset(&pb, 0, sizeof(pb));
	pb.att = &att;
	pb.M = 100000;
	tables = ps_attention_plan_bytes(att.d, att.r, att.g, att.r);
	ps_memory_limit_cap(tables / 2);
	ck_assert_int_eq(ps_attention_check_dag(&p, &err), PS_ENOMEM);
	ck_assert_int_eq(ps_strategy_plan(keylemma, &pb, &plan, &err), PS_ENOMEM);
	ck_assert_msg(strstr(err.msg, "the plan's tiles for d = 600 and r = 601 monomials needs about"),
		      "%s", err.msg);
	/* the worst case of any tiling fits: every plan runs */
	ps_memory_limit_cap(tables * 10 / 9 + 10);
	ck_assert_int_eq(ps_strategy_plan(keylemma, &pb, &plan, &err), 0);
	ck_assert_int_eq(ps_strategy_plan(ps_strategy_find("generic"), &pb, &plan, &err), 0);
	/* the DAG's check counts the monomial table too (r words here) */
	ps_memory_limit_cap(2 * tables);
	ck_assert_int_eq(ps_attention_check_dag(&p, &err), 0);
	ps_memory_limit_cap(0);

	/* a cache policy's tables count with the pebble state */
	ck_assert_int_eq(ps_strategy_plan(naive, &pb, &plan, &err), 0);
	state = ps_plan_state_bytes(&plan, &att.dag);
	ck_assert_uint_gt(plan.work_bytes, 0);
	ps_memory_limit_cap((state + plan.work_bytes / 2) * 10 / 9);
	ck_assert_int_eq(ps_run(&pb, naive, NULL, &rep, &err), PS_ENOMEM);
	ck_assert_msg(strstr(err.msg, "the pebble state of naive's sequence with the strategy's tables needs about"),
		      "%s", err.msg);
	ps_memory_limit_cap((state + plan.work_bytes) * 10 / 9 + 10);
	ck_assert_int_eq(ps_run(&pb, naive, NULL, &rep, &err), 0);
	ck_assert(rep.valid);
	ps_memory_limit_cap(0);
	ps_attention_free(&att);
}
END_TEST

/* 5. Symbolic links are followed, special files written in place, and a
 * failed write leaves what stood at the path. */
START_TEST(test_output_special_files)
{
	char link[256], target[256], fifo[256], dag[256], text[1 << 14];
	struct stat st;
	int fd;

	/* a symlink: its target is written, the link stays a link */
	in_dir(target, sizeof(target), "target.jsonl");
	in_dir(link, sizeof(link), "link.jsonl");
	write_text(target, "old\n");
	ck_assert_int_eq(symlink("target.jsonl", link), 0);
	ck_assert_int_eq(cli("-n", "2", "-d", "1", "-g", "1", "-M", "9", "--trace", link, NULL), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	read_text(target, text, sizeof(text));
	HAS(text, "pebblesim-trace");
	/* a dangling symlink: its target is created */
	unlink(target);
	ck_assert_int_eq(cli("dag", "-n", "2", "-d", "1", "-g", "1", "-o", link, NULL), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	read_text(target, text, sizeof(text));
	HAS(text, "<graphml");
	/* a FIFO stays a FIFO: written in place (held open for reading here,
	 * so that opening it does not wait; the pipe's buffer holds the trace) */
	in_dir(fifo, sizeof(fifo), "fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	fd = open(fifo, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cli("-n", "1", "-d", "1", "-g", "0", "-M", "9", "--trace", fifo, NULL), 0);
	ck_assert_int_eq(lstat(fifo, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	memset(text, 0, sizeof(text));
	ck_assert_int_gt(read(fd, text, sizeof(text) - 1), 0);
	HAS(text, "pebblesim-trace");
	close(fd);
	/* /dev/stdout into a pipe: its link ends in "pipe:[N]", no path, and
	 * the pipe is written in place (standard output made the pipe's end
	 * here; the trace fits the pipe's buffer) */
	{
		int ends[2], saved = dup(1);

		ck_assert_int_eq(pipe(ends), 0);
		ck_assert_int_ge(saved, 0);
		ck_assert_int_eq(dup2(ends[1], 1), 1);
		close(ends[1]);
		ck_assert_int_eq(cli("-n", "1", "-d", "1", "-g", "0", "-M", "9", "--trace", "/dev/stdout",
				     NULL), 0);
		ck_assert_int_eq(dup2(saved, 1), 1);
		close(saved);
		memset(text, 0, sizeof(text));
		ck_assert_int_gt(read(ends[0], text, sizeof(text) - 1), 0);
		HAS(text, "{\"format\":\"pebblesim-trace\"");
		HAS(text, "{\"op\":\"end\"");
		close(ends[0]);
	}
	/* dag -o is atomic: a failure leaves the old file whole */
	in_dir(dag, sizeof(dag), "old.graphml");
	write_text(dag, "old contents\n");
	ck_assert_int_eq(cli("dag", "-n", "2", "-d", "1", "-g", "1", "--format", "nope",
			     "-o", dag, NULL), 2);
	read_text(dag, text, sizeof(text));
	ck_assert_str_eq(text, "old contents\n");
	ck_assert_int_eq(cli("dag", "-n", "2", "-d", "1", "-g", "1", "-o", "/dev/full", NULL), 2);
	HAS(err_text, "pebblesim: cannot write the ");
	ck_assert_int_eq(stat("/dev/full", &st), 0);
	ck_assert(S_ISCHR(st.st_mode));
}
END_TEST

/* 6. A failed write of the report is exit status 2. */
START_TEST(test_output_errors)
{
	static const char *const commands[][12] = {
		{ "-n", "8", "-d", "2", "-g", "1", "-M", "64", NULL },
		{ "-n", "8", "-d", "2", "-g", "1", "-M", "64", "--json", NULL },
		{ "compare", "-n", "8", "-d", "2", "-g", "1", "-M", "64", NULL },
		{ "list", NULL },
		{ "--help", NULL },
		{ "dag", "-n", "2", "-d", "1", "-g", "1", NULL },
	};
	char trace[256];

	for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++) {
		FILE *full = fopen("/dev/full", "w");
		const char *const *a = commands[k];

		ck_assert_ptr_nonnull(full);
		ck_assert_int_eq(cli_to(full, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
					a[7], a[8], a[9], a[10], NULL), 2);
		fclose(full);
		HAS(err_text, "pebblesim: cannot write the");
	}
	in_dir(trace, sizeof(trace), "t.jsonl");
	ck_assert_int_eq(cli("-n", "2", "-d", "1", "-g", "1", "-M", "9", "--trace", trace, NULL), 0);
	{
		FILE *full = fopen("/dev/full", "w");

		ck_assert_int_eq(cli_to(full, "validate", trace, NULL), 2);
		fclose(full);
		HAS(err_text, "pebblesim: cannot write the output: No space left on device");
	}
}
END_TEST

static int count_temporaries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int count = 0;

	while (d && (e = readdir(d)))
		count += !strncmp(e->d_name, ".pebblesim-", 11);
	if (d)
		closedir(d);
	return count;
}

/* 7. Every signal that ends the run from outside removes the temporary
 * trace (docs/SECURITY.md lists them). */
START_TEST(test_signal_removes_temporary)
{
	const int signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
				SIGPIPE, SIGVTALRM, SIGPROF, SIGXCPU, SIGRTMIN, SIGRTMAX };
	char path[256];

	in_dir(path, sizeof(path), "t.jsonl");
	for (size_t k = 0; k < sizeof(signals) / sizeof(signals[0]); k++) {
		int status;
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct ps_attention att;
			struct ps_trace_writer w;
			struct ps_error err;
			struct ps_attention_params p = { .n = 2, .d = 1, .g = 1, .normalize = true };

			/* the runner's own handlers (Check's kill the process
			 * group) and an ignored SIGHUP (nohup) give way to the
			 * default action, which pebblesim then takes over */
			signal(signals[k], SIG_DFL);
			if (ps_attention_init(&att, &p, &err) ||
			    ps_trace_open(&w, path, &att, NULL, 9, "x", NULL, NULL, false, &err))
				_exit(3);
			if (count_temporaries() != 1)
				_exit(4);
			raise(signals[k]);
			_exit(5);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == signals[k],
			      "signal %d: status %d", signals[k], status);
		ck_assert_int_eq(count_temporaries(), 0);
		ck_assert_int_ne(access(path, F_OK), 0);
	}
}
END_TEST

/* 8. An output that is an input is refused. */
START_TEST(test_output_names_input)
{
	char dag[256], sym[256], hard[256], text[256];

	in_dir(dag, sizeof(dag), "dag.txt");
	in_dir(sym, sizeof(sym), "link.txt");
	in_dir(hard, sizeof(hard), "hard.txt");
	write_text(dag, "0 1\n1 2\n");
	ck_assert_int_eq(symlink(dag, sym), 0);
	ck_assert_int_eq(link(dag, hard), 0);
	ck_assert_int_eq(cli("run", "--dag", dag, "-M", "3", "--trace", dag, NULL), 2);
	HAS(err_text, "is the input");
	ck_assert_int_eq(cli("run", "--dag", dag, "-M", "3", "--trace", sym, NULL), 2);
	HAS(err_text, "is the input");
	ck_assert_int_eq(cli("run", "--dag", sym, "-M", "3", "--trace", hard, NULL), 2);
	HAS(err_text, "is the input");
	read_text(dag, text, sizeof(text));
	ck_assert_str_eq(text, "0 1\n1 2\n");
}
END_TEST

/* 9. Every parameter round-trips through JSON, or is refused. */
START_TEST(test_parameters_round_trip)
{
	ck_assert_int_eq(cli("-n", "8", "-d", "2", "-g", "1", "-M", "18446744073709551615", NULL), 2);
	HAS(err_text, "invalid value '18446744073709551615' for -M: above the largest value, 2^63 - 1 = 9223372036854775807");
	ck_assert_int_eq(cli("-n", "8", "-d", "2", "-g", "1", "-M", "9223372036854775808", NULL), 2);
	ck_assert_int_eq(cli("-n", "8", "-d", "2", "-g", "1", "-M", "64", "--w", "9223372036854775808", NULL), 2);
	ck_assert_int_eq(cli("--json", "-n", "8", "-d", "2", "-g", "1", "-M",
			     "9223372036854775807", NULL), 0);
	HAS(out_text, "\"M\":9223372036854775807");
}
END_TEST

/* 10. A line over the limit is refused, by its number. */
START_TEST(test_line_length_limit)
{
	char path[256];
	FILE *f;

	ck_assert_int_eq(cli("validate", "/dev/zero", NULL), 2);
	HAS(err_text, "pebblesim: /dev/zero:1: the line is longer than the limit of 16777216 bytes");
	in_dir(path, sizeof(path), "long.jsonl");
	f = fopen(path, "w");
	fputs("{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\",\"n\":2,\"d\":1,\"g\":1},\"M\":9}\n", f);
	for (size_t k = 0; k <= PS_TRACE_MAX_LINE; k++)
		putc(' ', f);
	fputs("{}\n", f);
	fclose(f);
	ck_assert_int_eq(cli("validate", path, NULL), 2);
	HAS(err_text, "long.jsonl:2: the line is longer than the limit of 16777216 bytes");
}
END_TEST

/* 11. A list names each coordinate once: no quadratic expansion. */
START_TEST(test_duplicate_coordinates)
{
	char path[256];
	clock_t start = clock();
	FILE *f;

	in_dir(path, sizeof(path), "dup.jsonl");
	f = fopen(path, "w");
	fputs("{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\",\"n\":2,\"d\":1,\"g\":1},\"M\":9}\n"
	      "{\"op\":\"load\",\"kind\":\"Q\",\"i\":0,\"a\":0}\n"
	      "{\"op\":\"mac\",\"into\":\"N\",\"fuse\":true,\"b\":0,\"i\":[0", f);
	for (int k = 0; k < 40000; k++)
		fputs(",0", f);
	fputs("],\"m\":[0", f);
	for (int k = 0; k < 40000; k++)
		fputs(",0", f);
	fputs("]}\n", f);
	fclose(f);
	ck_assert_int_eq(cli("validate", path, NULL), 2);
	HAS(err_text, "dup.jsonl:3: coordinate 'i' lists 0 twice");
	ck_assert_msg(clock() - start < 2 * CLOCKS_PER_SEC, "took %.1f s",
		      (double)(clock() - start) / CLOCKS_PER_SEC);
	write_text(path, "{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\",\"n\":2,\"d\":1,\"g\":1},\"M\":9}\n"
			 "{\"op\":\"load\",\"kind\":\"Q\",\"i\":[1,0,1],\"a\":0}\n");
	ck_assert_int_eq(cli("validate", path, NULL), 2);
	HAS(err_text, "dup.jsonl:2: coordinate 'i' lists 1 twice");
}
END_TEST

/* 12. The tiling executors at g = 0 (no features): clang's UBSan saw
 * NULL + 0 here. */
START_TEST(test_tiling_without_features)
{
	ck_assert_int_eq(cli("--strategy", "generic", "-n", "1", "-d", "1", "-g", "0", "-M", "9", NULL), 0);
	ck_assert_int_eq(cli("--strategy", "generic", "-n", "3", "-d", "2", "-g", "0", "-M", "9",
			     "--tiles", "square", NULL), 0);
	ck_assert_int_eq(cli("--strategy", "keylemma", "-n", "3", "-d", "2", "-g", "0", "-M", "40", NULL), 0);
}
END_TEST

/* 13. GraphML entities and edges to undeclared nodes are refused. */
START_TEST(test_graphml_entities_and_undeclared_nodes)
{
	char path[256], text[2048];

	in_dir(path, sizeof(path), "odd.graphml");
	/* an internal entity, which libxml2 drops */
	snprintf(text, sizeof(text), tree_graphml, "string", "string", "input", "x", "input", "c");
	{
		char odd[2300], *at = strstr(text, "<graphml");

		snprintf(odd, sizeof(odd), "%.*s<!DOCTYPE graphml [<!ENTITY r \"sum\">]>\n%s",
			 (int)(at - text), text, at);
		write_text(path, odd);
	}
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 2);
	HAS(err_text, "odd.graphml:2: a document type or entity declaration");
	/* an entity without its declaration */
	write_graphml(path, "string", "string", "&r;", "x", "input", "c");
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 2);
	HAS(err_text, "odd.graphml:6: an entity reference other than");
	/* the five of XML and character references are read */
	write_graphml(path, "string", "string", "in&#112;ut", "&lt;x&amp;y&gt;", "input", "c");
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 0);
	/* an edge to a node that is not declared */
	write_graphml(path, "string", "string", "input", "x", "input", "zz");
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 2);
	HAS(err_text, "an edge names a node that is not declared (3 <node> elements, 4 vertices)");
	/* comments and CDATA hold no nodes */
	write_graphml(path, "string", "string", "input", "<![CDATA[<node id=\"q\"/>]]>",
		      "input<!-- <node id=\"p\"/> &nope; -->", "c");
	ck_assert_int_eq(cli("run", "--dag", path, "-M", "3", NULL), 0);
}
END_TEST

/* Found by fuzz-cli: a fast memory far beyond the DAG made Belady's heap
 * as large as M. Every strategy's state is sized by the DAG, whatever M. */
START_TEST(test_huge_m_allocates_by_the_dag)
{
	ck_assert_int_eq(cli("compare", "-n", "5", "-d", "1", "-g", "2", "-M", "55555555555530", NULL), 0);
	ck_assert_int_eq(cli("--strategy", "naive-belady", "-n", "5", "-d", "1", "-g", "2",
			     "-M", "2^62", NULL), 0);
	ck_assert_int_eq(cli("--strategy", "naive-exact-belady", "-n", "5", "-d", "2",
			     "-M", "2^62", NULL), 0);
	ck_assert_int_eq(cli("--strategy", "resident", "-n", "5", "-d", "1", "-g", "2",
			     "-M", "2^62", NULL), 0);
}
END_TEST

/* map's axis of more than 64 points is refused before a 65th value is
 * stored: it overwrote the cells' pointer, which the error path freed. */
START_TEST(test_map_axis_beyond_its_side)
{
	ck_assert_int_eq(cli("map", "-n", "64", "-d", "4", "-g", "2:3", "-M", "256:512", NULL), 2);
	HAS(err_text, "-M 256:512: at most 64 points a side");
	ck_assert_int_eq(cli("map", "-n", "64:128:x2", "-d", "4", "-g", "2", "-M", "1:65", NULL), 2);
	HAS(err_text, "-M 1:65: at most 64 points a side");
	ck_assert_int_eq(cli("map", "-n", "1:65", "-d", "4", "-g", "2", "-M", "256:512:x2", NULL), 2);
	HAS(err_text, "-n 1:65: at most 64 points a side");
	/* 64 a side is the most there is, and all 64 are mapped */
	ck_assert_int_eq(cli("map", "-n", "64", "-d", "4", "-g", "1:2", "-M", "193:256", "--json",
			     NULL), 0);
	HAS(out_text, "\"y\":\"M\"");
	HAS(out_text, "254,255,256],\"cells\"");
}
END_TEST

/* Found by fuzz-cli: a sweep's point (here frontier's) built its monomial
 * table, 2.2 GB at d = 13, g = 15 (g = 14 under the tighter a-priori bound), before
 * checking it against the limit
 * (a cap of 512 bytes). It is checked first, and the point not run. */
START_TEST(test_sweep_point_checked_before_its_tables)
{
	ps_memory_limit_cap(1 << 20);
	ck_assert_int_eq(cli("frontier", "-n", "18:64:x2", "-d", "13", "-M", "64", "--epsilon", "1e-2",
			     "--entry-bound", "1", NULL), 0);
	HAS(out_text, "18   14  not run: the monomial table with the plan's tiles for n = 18, d = 13, g = 14 needs about 7.1 GiB");
	ck_assert_int_eq(cli("sweep", "-j", "1", "-n", "18:18", "-d", "13", "-g", "15", "-M", "64",
			     "--strategies", "colpass", "--predict", NULL), 0);
	HAS(out_text, "not run: the monomial table with the plan's tiles for n = 18");
	ps_memory_limit_cap(0);
}
END_TEST

/* A header's strategy cut inside a UTF-8 character (62 bytes and an
 * e acute, cut at 64) was no UTF-8 any more: view said "out of memory",
 * validate --json dropped it. Names are cut at a character's end. */
START_TEST(test_trace_name_cut_at_a_character)
{
	char trace[256], page[256], text[1 << 14], name[80], *at;
	FILE *f;

	in_dir(trace, sizeof(trace), "t.jsonl");
	in_dir(page, sizeof(page), "v.html");
	ck_assert_int_eq(cli("-n", "2", "-d", "1", "-g", "1", "-M", "9", "--strategy", "naive",
			     "--trace", trace, NULL), 0);
	read_text(trace, text, sizeof(text));
	at = strstr(text, "\"strategy\":\"naive\"");
	ck_assert_ptr_nonnull(at);
	memset(name, 'a', 62);
	name[62] = '\0';
	f = fopen(trace, "w");
	fwrite(text, 1, (size_t)(at - text), f);
	fprintf(f, "\"strategy\":\"%s\xc3\xa9\"%s", name, at + strlen("\"strategy\":\"naive\""));
	fclose(f);
	ck_assert_int_eq(cli("validate", trace, "--json", NULL), 0);
	snprintf(text, sizeof(text), "\"strategy\":\"%s\",", name);
	HAS(out_text, text);
	ck_assert_int_eq(cli("view", trace, "-o", page, NULL), 0);
	read_text(page, text, sizeof(text));
	HAS(text, name);
}
END_TEST

/* Is process pid gone (or a zombie no one reaped)? */
static bool process_gone(pid_t pid)
{
	char path[64], stat_text[256];
	FILE *f;
	char *close_paren;

	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	stat_text[fread(stat_text, 1, sizeof(stat_text) - 1, f)] = '\0';
	fclose(f);
	close_paren = strrchr(stat_text, ')');
	return close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

/* gnuplot outlived a SIGTERM'd sweep --plot: it dies with pebblesim. A
 * gnuplot of the test's own (first on PATH) writes its pid and sleeps. */
START_TEST(test_gnuplot_dies_with_pebblesim)
{
	const char *bin = getenv("PEBBLESIM_BIN");
	char fake[256], pid_file[256], plot[256], path[4096], text[64] = "";
	pid_t child, gnuplot = 0;
	int status;

	ck_assert_msg(bin != NULL, "PEBBLESIM_BIN names the binary");
	in_dir(fake, sizeof(fake), "gnuplot");
	in_dir(pid_file, sizeof(pid_file), "gnuplot.pid");
	in_dir(plot, sizeof(plot), "p.svg");
	write_text(fake, "#!/bin/sh\necho $$ > \"$PS_TEST_GNUPLOT_PID\"\nexec sleep 30\n");
	ck_assert_int_eq(chmod(fake, 0755), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		snprintf(path, sizeof(path), "%s:%s", dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
		setenv("PATH", path, 1);
		setenv("PS_TEST_GNUPLOT_PID", pid_file, 1);
		execl(bin, "pebblesim", "sweep", "-n", "8:16:x2", "-d", "4", "-g", "2", "-M", "200",
		      "--predict", "--strategies", "generic", "--plot", plot, (char *)NULL);
		_exit(127);
	}
	for (int k = 0; k < 1000 && !gnuplot; k++) {
		FILE *f = fopen(pid_file, "r");

		if (f) {
			if (fgets(text, sizeof(text), f) && strchr(text, '\n'))
				gnuplot = (pid_t)atoi(text);
			fclose(f);
		}
		if (!gnuplot)
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	ck_assert_msg(gnuplot > 0, "the sweep started no gnuplot");
	ck_assert_int_eq(kill(child, SIGTERM), 0);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	for (int k = 0; k < 200 && !process_gone(gnuplot); k++)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	if (!process_gone(gnuplot)) {
		kill(gnuplot, SIGKILL);
		ck_abort_msg("gnuplot (pid %d) outlived the sweep by 2 s", (int)gnuplot);
	}
}
END_TEST

Suite *untrusted_suite(void)
{
	Suite *s = suite_create("untrusted");
	TCase *tc = tcase_create("untrusted");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_header_strategy_of_other_kind);
	tcase_add_test(tc, test_graphml_attribute_types);
	tcase_add_test(tc, test_edgelist_size_before_igraph);
	tcase_add_test(tc, test_memory_limit_honours_rlimit_and_cgroup);
	tcase_add_test(tc, test_memory_limit_by_strategy);
	tcase_add_test(tc, test_memory_limit_before_plans);
	tcase_add_test(tc, test_output_special_files);
	tcase_add_test(tc, test_output_errors);
	tcase_add_test(tc, test_signal_removes_temporary);
	tcase_add_test(tc, test_output_names_input);
	tcase_add_test(tc, test_parameters_round_trip);
	tcase_add_test(tc, test_line_length_limit);
	tcase_add_test(tc, test_duplicate_coordinates);
	tcase_add_test(tc, test_tiling_without_features);
	tcase_add_test(tc, test_graphml_entities_and_undeclared_nodes);
	tcase_add_test(tc, test_huge_m_allocates_by_the_dag);
	tcase_add_test(tc, test_map_axis_beyond_its_side);
	tcase_add_test(tc, test_sweep_point_checked_before_its_tables);
	tcase_add_test(tc, test_trace_name_cut_at_a_character);
	tcase_add_test(tc, test_gnuplot_dies_with_pebblesim);
	suite_add_tcase(s, tc);
	return s;
}
