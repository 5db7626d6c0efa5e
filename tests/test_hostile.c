/*
 * Hostile inputs and the work they cost (docs/SECURITY.md, "Work limits"):
 * numbers that are not numbers, small files that would make igraph or the
 * validator work for minutes, merges of many rows, sweep workers. Each
 * test is small: limits are lowered rather than inputs made large.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/cli/cli.h"
#include "pebblesim/explicit.h"
#include "pebblesim/limits.h"
#include "pebblesim/npy.h"
#include "pebblesim/run.h"
#include "pebblesim/sweep.h"
#include "pebblesim/trace.h"
#include "tests.h"

static char dir[64]; /* a fresh directory per test */
static char out_text[1 << 16], err_text[1 << 14];

static void setup(void)
{
	test_dir_make(dir, sizeof(dir), "hostile");
}

static void teardown(void)
{
	test_dir_remove(dir);
}

/* dir/name, in one of 16 static buffers used in turn: an argv may hold
 * a few while files are written through others */
static const char *at(const char *name)
{
	static char paths[16][512];
	static unsigned next;
	char *p = paths[next++ % 16];

	snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
	return p;
}

/* Runs pebblesim on the NULL-terminated args (argv[0] added). */
static int run(const char *const *args)
{
	char *argv[40];
	int argc = 0;

	argv[argc++] = "pebblesim";
	while (*args && argc < 39)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	return test_cli_run(argv, out_text, sizeof(out_text), err_text, sizeof(err_text));
}

#define HAS(text, needle) \
	ck_assert_msg(strstr((text), (needle)) != NULL, "'%s' not in:\n%s", (needle), (text))

/* ---- merge: O(rows log rows) ------------------------------------------ */

/*
 * Sorting looked each label's first row up in every comparison, and the
 * crossovers looked the baseline's row up by a scan: 80,000 merged rows
 * took 10 s, 400,000 did not finish. Here 100,000 distinct labels (the
 * sort) and 2 x 150,000 rows (the crossovers): minutes then, a second now.
 */
START_TEST(test_merge_in_rows_log_rows)
{
	const size_t labels = 100000, values = 150000;
	struct ps_sweep_row *rows = malloc(2 * values * sizeof(*rows));
	struct ps_crossover c[2];
	double start = ps_now_seconds();

	ck_assert_ptr_nonnull(rows);
	/* labels first seen in decreasing value order */
	for (size_t k = 0; k < labels; k++) {
		char label[24];

		snprintf(label, sizeof(label), "s%zu", k);
		test_sweep_row(&rows[k], label, labels - k, 1);
	}
	ps_sweep_sort(rows, labels);
	for (size_t k = 0; k < labels; k++) {
		char label[24];

		snprintf(label, sizeof(label), "s%zu", labels - 1 - k);
		ck_assert_uint_eq(rows[k].value, k + 1);
		ck_assert_str_eq(rows[k].label, label);
	}
	/* "a" below flash from value 10 on; rows in reverse order */
	for (size_t k = 0; k < values; k++) {
		test_sweep_row(&rows[2 * k], "a", values - k, values - k < 10 ? 1000 : 10);
		test_sweep_row(&rows[2 * k + 1], "flash", values - k, 100);
	}
	ps_sweep_sort(rows, 2 * values);
	ck_assert_uint_eq(rows[0].value, 1);
	ck_assert_str_eq(rows[0].label, "a"); /* "a" was seen first */
	ck_assert_str_eq(rows[1].label, "flash");
	ck_assert_uint_eq(ps_sweep_crossovers(rows, 2 * values, "flash", c, 2), 1);
	ck_assert(c[0].found);
	ck_assert_uint_eq(c[0].at, 10);
	ck_assert_msg(ps_now_seconds() - start < 20, "%.1f s", ps_now_seconds() - start);
	free(rows);
}
END_TEST

/* ---- numbers that are not numbers ---------------------------------- */

static const char npy_2x1[] =
	"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }      \n";

/* A NaN in Q made every output NaN, and NaN against NaN counted as an
 * error of 0: "error vs direct 0", exit 0. */
START_TEST(test_npy_nan_refused)
{
	const double nan_q[2] = { 1.0, NAN }, inf_q[2] = { -INFINITY, 1.0 }, kv[2] = { 1.0, 2.0 };
	const char *args[] = { "-n", "2", "-d", "1", "-g", "1", "-M", "20", "--values",
			       "--q", at("q.npy"), "--k", at("k.npy"), "--v", at("v.npy"), NULL };

	test_write_npy_raw(at("q.npy"), npy_2x1, nan_q, sizeof(nan_q));
	test_write_npy_raw(at("k.npy"), npy_2x1, kv, sizeof(kv));
	test_write_npy_raw(at("v.npy"), npy_2x1, kv, sizeof(kv));
	ck_assert_int_eq(run(args), 2);
	HAS(err_text, "q.npy: entry [1, 0] is NaN: the values are finite numbers");
	test_write_npy_raw(at("q.npy"), npy_2x1, inf_q, sizeof(inf_q));
	ck_assert_int_eq(run(args), 2);
	HAS(err_text, "q.npy: entry [0, 0] is -inf");
}
END_TEST

/* Finite inputs whose scores overflow: every output and every direct
 * value is NaN, which compared as equal (exit 0, error 0). */
START_TEST(test_outputs_not_finite_fail)
{
	const double huge[2] = { 1e300, 1e300 }, v[2] = { 1.0, 2.0 };
	const char *args[] = { "-n", "2", "-d", "1", "-g", "1", "-M", "20", "--values",
			       "--q", at("q.npy"), "--k", at("k.npy"), "--v", at("v.npy"), NULL };
	const char *json[] = { "-n", "2", "-d", "1", "-g", "1", "-M", "20", "--values", "--json",
			       "--q", at("q.npy"), "--k", at("k.npy"), "--v", at("v.npy"), NULL };

	test_write_npy_raw(at("q.npy"), npy_2x1, huge, sizeof(huge));
	test_write_npy_raw(at("k.npy"), npy_2x1, huge, sizeof(huge));
	test_write_npy_raw(at("v.npy"), npy_2x1, v, sizeof(v));
	ck_assert_int_eq(run(args), 1);
	HAS(err_text, "the pebbled output A[0,0] = ");
	HAS(err_text, "by inf, above the tolerance");
	HAS(out_text, "error vs direct      inf");
	HAS(out_text, "FAILED");
	ck_assert_int_eq(run(json), 1);
	HAS(out_text, "\"error_vs_direct\":null");
	HAS(out_text, "\"failed\":true");
}
END_TEST

/* A key of bytes outside ASCII reached the terminal as they were. */
START_TEST(test_npy_key_escaped)
{
	const double x[2] = { 1.0, 2.0 };
	double *data;
	uint64_t rows, cols;
	struct ps_error err;

	test_write_npy_raw(at("k.npy"), "{'\xe2\x80\xae\x1b[31m': 1}\n", x, sizeof(x));
	ps_error_clear(&err);
	ck_assert_int_eq(ps_npy_load(at("k.npy"), 2, 1, &data, &rows, &cols, &err), PS_EINPUT);
	HAS(err.msg, "unknown or repeated key '\\xe2\\x80\\xae\\x1b[31m'");
	test_write_npy_raw(at("k.npy"), "{'descr': '\xff<f8', 'fortran_order': False, 'shape': (2, 1), }\n",
			   x, sizeof(x));
	ck_assert_int_eq(ps_npy_load(at("k.npy"), 2, 1, &data, &rows, &cols, &err), PS_EINPUT);
	HAS(err.msg, "dtype '\\xff<f8'");
}
END_TEST

/* ---- the work of a trace ---------------------------------------------- */

/* A trace of n = 16384, d = 1, g = 1 that computes and deletes U1[., 0]
 * lines times, each line 16384 moves. */
static void write_repeating_trace(const char *path, unsigned lines)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs("{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\","
	      "\"n\":16384,\"d\":1,\"g\":1,\"normalize\":true},\"M\":100000}\n", f);
	for (unsigned k = 0; k < lines; k++)
		fprintf(f, "{\"op\":\"%s\",\"kind\":\"U1\",\"i\":{\"lo\":0,\"hi\":16384},\"m\":0}\n",
			k % 2 ? "delete" : "compute");
	ck_assert_int_eq(fclose(f), 0);
}

/*
 * A line of a few bytes may act on the whole declared DAG, and nothing
 * bounded the work per byte: a 937-byte trace cost 14 s. Past --max-moves,
 * or the default of 64 moves a node of the declared DAG, the trace is
 * refused with the count.
 */
START_TEST(test_validate_max_moves)
{
	const char *path = at("t.jsonl");
	struct ps_attention att;
	char text[256];
	uint64_t limit;

	test_attention(&att, 16384, 1, 1, 1);
	limit = ps_trace_default_max_moves(&att.dag);
	ck_assert_uint_eq(limit, 64 * att.dag.node_count);
	ck_assert_uint_gt(limit, PS_TRACE_LEAST_MAX_MOVES);
	ps_attention_free(&att);
	/* the default: the line that goes past it, with its count */
	write_repeating_trace(path, (unsigned)(limit / 16384) + 2);
	ck_assert_int_eq(run((const char *[]){ "validate", path, NULL }), 2);
	snprintf(text, sizeof(text), "t.jsonl:%llu: the trace reaches %llu moves by this line, beyond the limit of %llu (64 a node of the declared DAG)",
		 (unsigned long long)(limit / 16384 + 2), (unsigned long long)(limit / 16384 + 1) * 16384,
		 (unsigned long long)limit);
	HAS(err_text, text);
	/* none: the verdict (no end line, no output saved) */
	ck_assert_int_eq(run((const char *[]){ "validate", "--max-moves", "0", path, NULL }), 1);
	HAS(out_text, "valid                  no");
	/* lowered: refused at line 4, with 3 x 16384 moves */
	ck_assert_int_eq(run((const char *[]){ "validate", "--max-moves", "40000", path, NULL }), 2);
	HAS(err_text, "t.jsonl:4: the trace reaches 49152 moves by this line, beyond --max-moves 40000");
	ck_assert_int_eq(run((const char *[]){ "validate", "--max-moves", "49152", path, NULL }), 2);
	HAS(err_text, "t.jsonl:5: the trace reaches 65536 moves");
	/* an option of validate only */
	ck_assert_int_eq(run((const char *[]){ "run", "-n", "4", "-d", "1", "-g", "1", "-M", "40",
					       "--max-moves", "5", NULL }), 2);
	HAS(err_text, "option '--max-moves' does not apply to run");
}
END_TEST

/* ---- DAG files that cost igraph more than their size ------------------- */

/* A GraphML chain of nodes vertices under keys unused <key>s. */
static void write_keyed_graphml(const char *path, unsigned keys, unsigned nodes)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	      "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n", f);
	for (unsigned k = 0; k < keys; k++)
		fprintf(f, "<key id=\"k%u\" for=\"node\" attr.name=\"a%u\" attr.type=\"string\"/>\n", k, k);
	fputs("<graph id=\"G\" edgedefault=\"directed\">\n", f);
	for (unsigned v = 0; v < nodes; v++)
		fprintf(f, "<node id=\"v%u\"/>\n", v);
	for (unsigned v = 1; v < nodes; v++)
		fprintf(f, "<edge source=\"v%u\" target=\"v%u\"/>\n", v - 1, v);
	fputs("</graph>\n</graphml>\n", f);
	ck_assert_int_eq(fclose(f), 0);
}

/* 20,000 unused keys on 2,000 nodes (1.35 MB) took 3.1 GB: igraph builds
 * a table of every key for every node. */
START_TEST(test_graphml_unused_keys)
{
	struct ps_explicit x;
	struct ps_error err;

	write_keyed_graphml(at("k.graphml"), PS_EXPLICIT_MAX_KEYS + 1, 10);
	ck_assert_int_eq(run((const char *[]){ "run", "--dag", at("k.graphml"), "-M", "4", NULL }), 2);
	HAS(err_text, "k.graphml:67: more than 64 <key> elements: pebblesim reads two (role and label)");
	/* within the count, the tables' size against the memory limit: 64
	 * keys x 3999 nodes and edges need 20 MB */
	write_keyed_graphml(at("k.graphml"), PS_EXPLICIT_MAX_KEYS, 2000);
	ps_memory_limit_cap(UINT64_C(8) << 20);
	ck_assert_int_eq(ps_explicit_read(&x, at("k.graphml"), &err), PS_ENOMEM);
	ps_memory_limit_cap(0);
	HAS(err.msg, "igraph's tables of its 64 keys for 3999 nodes and edges needs about 19.5 MiB; pebblesim's own cap is 8.0 MiB");
	ck_assert_int_eq(ps_explicit_read(&x, at("k.graphml"), &err), 0);
	ck_assert_uint_eq(x.vertices, 2000);
	ps_explicit_free(&x);
}
END_TEST

/* 5 M GML vertices took 2.3 GB before the vertex limit refused them, and
 * under ulimit -v igraph said "Parse error". Counted first, and the
 * parser's tree set against the memory limit, here lowered. */
START_TEST(test_gml_counted_before_igraph)
{
	FILE *f = fopen(at("g.gml"), "w");
	struct ps_explicit x;
	struct ps_error err;

	ck_assert_ptr_nonnull(f);
	fputs("graph [ directed 1\n", f);
	for (unsigned v = 0; v < 20000; v++)
		fprintf(f, "node [ id %u ]\n", v);
	fputs("]\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ps_memory_limit_cap(UINT64_C(8) << 20);
	ck_assert_int_eq(ps_explicit_read(&x, at("g.gml"), &err), PS_ENOMEM);
	ps_memory_limit_cap(0);
	HAS(err.msg, "g.gml': igraph's GML parser, for its 40002 keys, needs about 9.8 MiB; pebblesim's own cap is 8.0 MiB");
	ck_assert_int_eq(ps_explicit_read(&x, at("g.gml"), &err), 0);
	ck_assert_uint_eq(x.vertices, 20000);
	ps_explicit_free(&x);
}
END_TEST

/* A 3.2 MB GML label took 7.8 s in igraph's lexer, 10 MB 70 s; and as
 * GraphML's keys, every attribute name of a node makes a table. */
START_TEST(test_gml_string_cap)
{
	FILE *f = fopen(at("s.gml"), "w");

	ck_assert_ptr_nonnull(f);
	fputs("graph [\n directed 1\n node [ id 0 label \"", f);
	for (unsigned k = 0; k <= PS_EXPLICIT_MAX_GML_TOKEN; k++)
		fputc('x', f);
	fputs("\" ]\n]\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(run((const char *[]){ "run", "--dag", at("s.gml"), "-M", "4", NULL }), 2);
	HAS(err_text, "s.gml:3: a string longer than 65536 bytes");
	/* 65 attribute names on one node: a table of each for every node */
	f = fopen(at("s.gml"), "w");
	ck_assert_ptr_nonnull(f);
	fputs("graph [\n directed 1\n node [ id 0\n", f);
	for (unsigned k = 0; k <= PS_EXPLICIT_MAX_KEYS; k++)
		fprintf(f, "  a%u %u\n", k / 2, k); /* each name twice, 33 names */
	for (unsigned k = 0; k <= PS_EXPLICIT_MAX_KEYS; k++)
		fprintf(f, "  b%u \"x\"\n", k);
	fputs(" ]\n node [ id 1 ]\n]\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(run((const char *[]){ "run", "--dag", at("s.gml"), "-M", "4", NULL }), 2);
	/* id, a0..a32 and b0..b29 are 64 names: the 65th is b30, on line 99 */
	HAS(err_text, "s.gml:99: more than 64 attribute names among the nodes and edges");
}
END_TEST

/* Messages that named neither file nor reason, or the wrong line. */
START_TEST(test_messages_name_file_and_place)
{
	FILE *f = fopen(at("c.gml"), "w");

	ck_assert_ptr_nonnull(f);
	fputs("graph [ directed 1 node [ id 0 ] node [ id 1 ]\n"
	      "edge [ source 0 target 1 ] edge [ source 1 target 0 ] ]\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(run((const char *[]){ "run", "--dag", at("c.gml"), "-M", "4", NULL }), 2);
	HAS(err_text, "c.gml': the graph has a cycle: it is not a DAG");
	/* igraph drops a hyperedge without a word */
	f = fopen(at("h.graphml"), "w");
	ck_assert_ptr_nonnull(f);
	fputs("<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
	      "<graph edgedefault=\"directed\"><node id=\"a\"/><node id=\"b\"/>\n"
	      "<hyperedge><endpoint node=\"a\"/><endpoint node=\"b\"/></hyperedge>\n"
	      "</graph></graphml>\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(run((const char *[]){ "run", "--dag", at("h.graphml"), "-M", "4", NULL }), 2);
	HAS(err_text, "h.graphml:4: a <hyperedge>: the edges of a DAG join two nodes");
	/* an end line without its counts is not the header */
	f = fopen(at("e.jsonl"), "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\","
	      "\"n\":2,\"d\":1,\"g\":1,\"normalize\":true},\"M\":9}\n{\"op\":\"end\",\"loads\":0}\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(run((const char *[]){ "validate", at("e.jsonl"), NULL }), 2);
	HAS(err_text, "e.jsonl:2: the end line has no \"saves\"");
}
END_TEST

/* ---- sweep workers ---------------------------------------------------- */

static void sweep_spec(struct ps_sweep_spec *spec, const char *range, uint64_t d,
		       uint64_t g, uint64_t M, const char *label, unsigned jobs)
{
	memset(spec, 0, sizeof(*spec));
	spec->d = d;
	spec->g = g;
	spec->M = M;
	spec->normalize = true;
	spec->labels[0] = label;
	spec->label_count = 1;
	spec->jobs = jobs;
	ck_assert_int_eq(ps_sweep_range_parse('n', range, &spec->range, NULL), 0);
}

/* The row of the last point, run or not. */
static struct ps_sweep_row last_row(const struct ps_sweep_spec *spec)
{
	struct ps_sweep_row *rows, last;
	size_t count;
	struct ps_error err;

	ck_assert_int_eq(ps_sweep_run(spec, &rows, &count, &err), 0);
	ck_assert_uint_eq(count, 2);
	last = rows[1];
	free(rows);
	return last;
}

/* Each worker checked its memory against the whole limit, so that N
 * workers could together ask for N times the limit. */
START_TEST(test_sweep_workers_share_the_memory_limit)
{
	struct ps_sweep_spec spec;
	struct ps_sweep_row row;
	uint64_t cap = 64;

	/* the least power of 2 under which the point n = 8192 runs alone */
	sweep_spec(&spec, "4096:8192:x2", 4, 2, 200, "generic", 1);
	do {
		cap *= 2;
		ps_memory_limit_cap(cap);
		row = last_row(&spec);
	} while (!row.ran && cap < (UINT64_C(1) << 32));
	ck_assert(row.ran);
	spec.jobs = 2;
	row = last_row(&spec);
	ps_memory_limit_cap(0);
	ck_assert(!row.ran);
	HAS(row.why, "too large to simulate");
	HAS(row.why, "for each of 2 processes");
}
END_TEST

/* The pids of pid's children, from /proc; how many (at most max). */
static void pause_10ms(void)
{
	const struct timespec ten_ms = { 0, 10000000 };

	nanosleep(&ten_ms, NULL);
}

static size_t children_of(pid_t pid, pid_t *out, size_t max)
{
	char path[64];
	FILE *f;
	size_t count = 0;
	long child;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", (long)pid, (long)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (count < max && fscanf(f, "%ld", &child) == 1)
		out[count++] = (pid_t)child;
	fclose(f);
	return count;
}

/* Killed, a sweep left its workers running, reparented to init, until
 * their points were done. Here the points take seconds each; the test
 * process adopts the orphans (a subreaper) to see them end. */
START_TEST(test_sweep_workers_die_with_the_parent)
{
	struct ps_sweep_spec spec;
	pid_t sweep, workers[2];
	size_t count = 0;
	int status;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		return; /* not Linux 3.4 or later: nothing to observe */
	sweep_spec(&spec, "2^18:2^19:x2", 16, 3, 8192, "keylemma", 2);
	sweep = fork();
	ck_assert_int_ge(sweep, 0);
	if (sweep == 0) {
		struct ps_sweep_row *rows;
		size_t n;

		_exit(ps_sweep_run(&spec, &rows, &n, NULL) ? 3 : 0);
	}
	for (int tries = 0; tries < 1000 && count < 2; tries++) {
		pause_10ms();
		count = children_of(sweep, workers, 2);
	}
	kill(sweep, SIGKILL);
	ck_assert_int_eq(waitpid(sweep, &status, 0), sweep);
	if (count < 2)
		return; /* /proc without children lists: nothing to observe */
	for (size_t k = 0; k < count; k++) {
		pid_t gone = 0;

		for (int tries = 0; tries < 300 && gone == 0; tries++) {
			gone = waitpid(workers[k], &status, WNOHANG);
			if (gone == 0)
				pause_10ms();
		}
		if (gone == 0) {
			kill(workers[k], SIGKILL);
			waitpid(workers[k], &status, 0);
		}
		ck_assert_msg(gone == workers[k], "worker %ld outlived its sweep by 3 s", (long)workers[k]);
		/* killed with the parent, or left at once (killed before prctl) */
		ck_assert((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
			  (WIFEXITED(status) && WEXITSTATUS(status) == 3));
	}
}
END_TEST

Suite *hostile_suite(void)
{
	Suite *s = suite_create("hostile");
	TCase *tc = tcase_create("hostile");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_merge_in_rows_log_rows);
	tcase_add_test(tc, test_npy_nan_refused);
	tcase_add_test(tc, test_outputs_not_finite_fail);
	tcase_add_test(tc, test_npy_key_escaped);
	tcase_add_test(tc, test_validate_max_moves);
	tcase_add_test(tc, test_graphml_unused_keys);
	tcase_add_test(tc, test_gml_counted_before_igraph);
	tcase_add_test(tc, test_gml_string_cap);
	tcase_add_test(tc, test_messages_name_file_and_place);
	tcase_add_test(tc, test_sweep_workers_share_the_memory_limit);
	tcase_add_test(tc, test_sweep_workers_die_with_the_parent);
	suite_add_tcase(s, tc);
	return s;
}
