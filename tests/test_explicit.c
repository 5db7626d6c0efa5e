/*
 * Explicit DAGs with igraph: the attention DAG materialised and checked
 * against the implicit one; GraphML round trips; classic DAGs built with
 * igraph and pebbled by lru and belady in both orders.
 */
#include <igraph.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "pebblesim/explicit.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "pebblesim/trace.h"
#include "tests.h"

static int cmp_int(const void *a, const void *b)
{
	igraph_integer_t x = *(const igraph_integer_t *)a, y = *(const igraph_integer_t *)b;

	return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void check_materialised(uint64_t n, uint64_t d, uint64_t g, int norm)
{
	struct ps_attention att;
	struct ps_error err;
	igraph_t graph;
	igraph_bool_t dag;
	igraph_vector_int_t in;
	uint64_t parents[256];

	test_attention(&att, n, d, g, norm);
	ck_assert_int_eq(ps_attention_to_igraph(&att, &graph, &err), 0);
	ck_assert_int_eq(igraph_is_dag(&graph, &dag), 0);
	ck_assert(dag);
	ck_assert_uint_eq((uint64_t)igraph_vcount(&graph), att.dag.node_count);
	ck_assert_uint_eq((uint64_t)igraph_ecount(&graph), att.dag.edge_count);
	igraph_vector_int_init(&in, 0);
	for (ps_node v = 0; v < att.dag.node_count; v++) {
		uint64_t count = ps_dag_parent_count(&att.dag, v);

		ck_assert_int_eq(igraph_neighbors(&graph, &in, (igraph_integer_t)v, IGRAPH_IN), 0);
		ck_assert_uint_eq((uint64_t)igraph_vector_int_size(&in), count);
		ck_assert_uint_le(count, 256);
		for (uint64_t k = 0; k < count; k++)
			parents[k] = ps_dag_parent(&att.dag, v, k);
		qsort(parents, count, sizeof(uint64_t), cmp_u64);
		qsort(VECTOR(in), (size_t)count, sizeof(igraph_integer_t), cmp_int);
		for (uint64_t k = 0; k < count; k++)
			ck_assert_uint_eq((uint64_t)VECTOR(in)[k], parents[k]);
	}
	igraph_vector_int_destroy(&in);
	igraph_destroy(&graph);
	ps_attention_free(&att);
}

START_TEST(test_materialised_equals_implicit)
{
	ps_igraph_setup();
	for (uint64_t n = 1; n <= 3; n++)
		for (uint64_t d = 1; d <= 3; d++)
			for (uint64_t g = 0; g <= 3; g++) {
				check_materialised(n, d, g, 1);
				check_materialised(n, d, g, 0);
			}
}
END_TEST

START_TEST(test_graphml_round_trip)
{
	struct ps_attention att;
	struct ps_error err;
	igraph_t written, read;
	igraph_bool_t same;
	char path[] = "/tmp/pebblesim-dag-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w+");

	ps_igraph_setup();
	test_attention(&att, 3, 2, 2, 1);
	ck_assert_int_eq(ps_attention_to_igraph(&att, &written, &err), 0);
	ck_assert_int_eq(ps_igraph_write(&written, "graphml", f, &err), 0);
	rewind(f);
	ck_assert_int_eq(igraph_read_graph_graphml(&read, f, 0), 0);
	fclose(f);
	unlink(path);
	ck_assert_int_eq(igraph_is_same_graph(&written, &read, &same), 0);
	ck_assert(same);
	for (igraph_integer_t v = 0; v < igraph_vcount(&read); v++) {
		ck_assert_str_eq(VAS(&read, "label", v), VAS(&written, "label", v));
		ck_assert_str_eq(VAS(&read, "role", v), VAS(&written, "role", v));
		ck_assert_double_eq(VAN(&read, "m", v), VAN(&written, "m", v));
	}
	/* U1[1,(0,1)] is named by its monomial */
	{
		uint32_t tuple[] = { 0, 1 };
		igraph_integer_t v = (igraph_integer_t)ps_attention_id2(
			&att, PS_KIND_U1, 1, ps_monomial_rank(&att.mono, tuple, 2));

		ck_assert_str_eq(VAS(&read, "label", v), "U1[1,(0,1)]");
	}
	igraph_destroy(&written);
	igraph_destroy(&read);
	ps_attention_free(&att);
}
END_TEST

/* ---- classic DAGs -------------------------------------------------------- */

/* Builds a ps_explicit from edges (pairs) over n vertices; sums listed. */
static void build(struct ps_explicit *x, const igraph_integer_t *pairs,
		  igraph_integer_t edges, igraph_integer_t n,
		  const igraph_integer_t *sums, size_t sum_count)
{
	igraph_vector_int_t v;
	igraph_t graph;
	struct ps_error err;

	ps_igraph_setup();
	igraph_vector_int_init(&v, 2 * edges);
	for (igraph_integer_t k = 0; k < 2 * edges; k++)
		VECTOR(v)[k] = pairs[k];
	ck_assert_int_eq(igraph_create(&graph, &v, n, IGRAPH_DIRECTED), 0);
	igraph_vector_int_destroy(&v);
	if (sum_count) {
		for (igraph_integer_t k = 0; k < n; k++)
			SETVAS(&graph, "role", k, "");
		for (size_t k = 0; k < sum_count; k++)
			SETVAS(&graph, "role", sums[k], "sum");
	}
	ck_assert_msg(ps_explicit_from_igraph(x, &graph, &err) == 0, "%s", err.msg);
}

/* A complete binary tree with 2^k leaves: vertex i has children 2i+1, 2i+2. */
static void binary_tree(struct ps_explicit *x, unsigned k)
{
	igraph_integer_t n = ((igraph_integer_t)1 << (k + 1)) - 1, e = 0;
	igraph_integer_t *pairs = malloc((size_t)(2 * n) * sizeof(*pairs));

	for (igraph_integer_t i = 1; i < n; i++) {
		pairs[e++] = i;
		pairs[e++] = (i - 1) / 2;
	}
	build(x, pairs, e / 2, n, NULL, 0);
	free(pairs);
}

/* A pyramid of height h: level l has l + 1 vertices, each reading the two
 * below it; the bottom level holds the inputs. */
static void pyramid(struct ps_explicit *x, unsigned h)
{
	igraph_integer_t n = (igraph_integer_t)((h + 1) * (h + 2) / 2), e = 0;
	igraph_integer_t *pairs = malloc((size_t)(4 * n) * sizeof(*pairs));

	/* vertex of (l, p): l (l + 1) / 2 + p, level 0 the apex */
	for (unsigned l = 0; l < h; l++)
		for (unsigned p = 0; p <= l; p++) {
			igraph_integer_t v = l * (l + 1) / 2 + p;
			igraph_integer_t below = (l + 1) * (l + 2) / 2 + p;

			pairs[e++] = below;
			pairs[e++] = v;
			pairs[e++] = below + 1;
			pairs[e++] = v;
		}
	build(x, pairs, e / 2, n, NULL, 0);
	free(pairs);
}

/* The FFT butterfly on 2^k points: k + 1 levels, (l+1, p) reads (l, p)
 * and (l, p xor 2^l). */
static void butterfly(struct ps_explicit *x, unsigned k)
{
	igraph_integer_t w = (igraph_integer_t)1 << k, n = (k + 1) * w, e = 0;
	igraph_integer_t *pairs = malloc((size_t)(4 * n) * sizeof(*pairs));

	for (unsigned l = 0; l < k; l++)
		for (igraph_integer_t p = 0; p < w; p++) {
			pairs[e++] = l * w + p;
			pairs[e++] = (l + 1) * w + p;
			pairs[e++] = l * w + (p ^ ((igraph_integer_t)1 << l));
			pairs[e++] = (l + 1) * w + p;
		}
	build(x, pairs, e / 2, n, NULL, 0);
	free(pairs);
}

/* C = A B for s x s matrices: products P[i][j][k] (plain), C[i][j] sums. */
static void matmul(struct ps_explicit *x, igraph_integer_t s)
{
	igraph_integer_t a = 0, b = s * s, p = 2 * s * s, c = p + s * s * s;
	igraph_integer_t n = c + s * s, e = 0;
	igraph_integer_t *pairs = malloc((size_t)(6 * s * s * s) * sizeof(*pairs));
	igraph_integer_t *sums = malloc((size_t)(s * s) * sizeof(*sums));

	for (igraph_integer_t i = 0; i < s; i++)
		for (igraph_integer_t j = 0; j < s; j++) {
			sums[i * s + j] = c + i * s + j;
			for (igraph_integer_t k = 0; k < s; k++) {
				igraph_integer_t prod = p + (i * s + j) * s + k;

				pairs[e++] = a + i * s + k;
				pairs[e++] = prod;
				pairs[e++] = b + k * s + j;
				pairs[e++] = prod;
				pairs[e++] = prod;
				pairs[e++] = c + i * s + j;
			}
		}
	build(x, pairs, e / 2, n, sums, (size_t)(s * s));
	free(pairs);
	free(sums);
}

/* Runs a policy; returns the report (valid asserted). */
static struct ps_report pebble(const struct ps_explicit *x, const char *policy,
			       const char *order, uint64_t M)
{
	struct ps_problem pb;
	struct ps_report rep;
	struct ps_error err;

	memset(&pb, 0, sizeof(pb));
	pb.xdag = x;
	pb.M = M;
	pb.order = order;
	ck_assert_msg(ps_run(&pb, ps_strategy_find(policy), NULL, &rep, &err) == 0,
		      "%s %s M=%llu: %s", policy, order, (unsigned long long)M, err.msg);
	ck_assert_msg(rep.valid, "%s %s M=%llu: %s", policy, order,
		      (unsigned long long)M, rep.violation);
	return rep;
}

static uint64_t io_of(const struct ps_report *rep)
{
	return rep->counts.loads + rep->counts.saves;
}

/* Both policies, both orders, M from the minimum to the whole DAG. */
static void check_classic(struct ps_explicit *x)
{
	static const char *const orders[] = { "topo", "dfs" };
	struct ps_problem pb = { .xdag = x };
	uint64_t min_m = ps_strategy_min_memory_explicit(ps_strategy_find("lru"), &pb);
	struct ps_bound trivial;

	ps_bound_trivial_explicit(x, &trivial);
	for (int o = 0; o < 2; o++) {
		for (uint64_t M = min_m; M <= x->vertices + 1; M += 1 + M / 4) {
			struct ps_report lru = pebble(x, "lru", orders[o], M);
			struct ps_report belady = pebble(x, "belady", orders[o], M);

			ck_assert_uint_le(belady.counts.loads, lru.counts.loads);
			ck_assert((double)io_of(&lru) >= trivial.value);
			ck_assert((double)io_of(&belady) >= trivial.value);
			ck_assert_uint_le(lru.counts.peak_red, M);
		}
		/* with room for everything, exactly the trivial I/O */
		{
			struct ps_report lru = pebble(x, "lru", orders[o], x->vertices);
			struct ps_report belady = pebble(x, "belady", orders[o], x->vertices);

			ck_assert_double_eq((double)io_of(&lru), trivial.value);
			ck_assert_double_eq((double)io_of(&belady), trivial.value);
		}
	}
	/* below the minimum: refused, with the minimum */
	{
		struct ps_problem below = { .xdag = x, .M = min_m - 1 };
		struct ps_plan plan;
		struct ps_error err;

		if (min_m > 1) {
			ck_assert_int_eq(ps_strategy_plan(ps_strategy_find("lru"), &below, &plan, &err), PS_EINPUT);
			ck_assert_ptr_nonnull(strstr(err.msg, "it needs M >= "));
		}
	}
	ps_explicit_free(x);
}

START_TEST(test_classic_dags)
{
	struct ps_explicit x;

	binary_tree(&x, 4);
	check_classic(&x);
	pyramid(&x, 6);
	check_classic(&x);
	butterfly(&x, 3);
	check_classic(&x);
	matmul(&x, 3);
	check_classic(&x);
}
END_TEST

START_TEST(test_tree_needs_k_plus_2)
{
	/*
	 * A complete binary tree with 2^k leaves reaches the trivial I/O
	 * (each leaf loaded once, the root saved once) in depth-first order
	 * with M = k + 2 and not with k + 1: computing a vertex holds its two
	 * children and itself, while the finished left siblings along the path
	 * wait (the black pebble game on the tree, without sliding).
	 */
	for (unsigned k = 2; k <= 6; k++) {
		struct ps_explicit x;
		struct ps_report rep;
		double trivial = (double)((1u << k) + 1);

		binary_tree(&x, k);
		rep = pebble(&x, "lru", "dfs", k + 2);
		ck_assert_double_eq((double)io_of(&rep), trivial);
		ck_assert_uint_eq(rep.counts.peak_red, k + 2);
		rep = pebble(&x, "belady", "dfs", k + 2);
		ck_assert_double_eq((double)io_of(&rep), trivial);
		rep = pebble(&x, "lru", "dfs", k + 1);
		ck_assert((double)io_of(&rep) > trivial);
		rep = pebble(&x, "belady", "dfs", k + 1);
		ck_assert((double)io_of(&rep) > trivial);
		ps_explicit_free(&x);
	}
}
END_TEST

START_TEST(test_bad_dag_files)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
		{ "0 1\n1 2\n2 0\n", "the graph has a cycle: it is not a DAG" },
		{ "0 1\n0 1\n", "the graph has an edge twice: a DAG file names each edge once" },
		{ "0 0\n", "the graph has a cycle: it is not a DAG" },
	};
	struct ps_explicit x;
	struct ps_error err;
	char path[] = "/tmp/pebblesim-dag-XXXXXX";

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");
		char want[256];

		fputs(cases[k].text, f);
		fclose(f);
		ck_assert_int_eq(ps_explicit_read(&x, path, &err), PS_EINPUT);
		snprintf(want, sizeof(want), "DAG '%s': %s", path, cases[k].want);
		ck_assert_str_eq(err.msg, want);
		unlink(path);
		strcpy(path, "/tmp/pebblesim-dag-XXXXXX");
	}
	ck_assert_int_eq(ps_explicit_read(&x, "/nonexistent.graphml", &err), PS_EIO);
	ck_assert_str_eq(err.msg, "cannot open DAG '/nonexistent.graphml': No such file or directory");
}
END_TEST

START_TEST(test_explicit_trace_round_trip)
{
	struct ps_explicit x;
	struct ps_problem pb;
	struct ps_trace_writer w;
	struct ps_report run;
	struct ps_replay rep;
	struct ps_plan plan;
	struct ps_error err;
	char path[] = "/tmp/pebblesim-xtrace-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	close(fd);
	matmul(&x, 2);
	memset(&pb, 0, sizeof(pb));
	pb.xdag = &x;
	pb.M = 5;
	pb.order = "dfs";
	ck_assert_int_eq(ps_strategy_plan(ps_strategy_find("belady"), &pb, &plan, &err), 0);
	ck_assert_int_eq(ps_trace_open(&w, path, NULL, &x, 5, "belady", &plan, "dfs",
				       false, &err), 0);
	ck_assert_int_eq(ps_run(&pb, ps_strategy_find("belady"), &w.sink, &run, &err), 0);
	ck_assert(run.valid);
	ck_assert_int_eq(ps_trace_close(&w, &run.counts, true, &err), 0);
	f = fopen(path, "r");
	ck_assert_int_eq(ps_trace_replay(f, "x.jsonl", 0, NULL, &x, false, &rep, &err), 0);
	fclose(f);
	ck_assert_msg(rep.valid, "%s", rep.violation);
	ck_assert(rep.has_end);
	ck_assert_mem_eq(&rep.counts, &run.counts, sizeof(run.counts));
	ck_assert_str_eq(rep.header.order, "dfs");
	ps_replay_free(&rep);
	/* without the DAG file the trace cannot be replayed */
	f = fopen(path, "r");
	ck_assert_int_eq(ps_trace_replay(f, "x.jsonl", 0, NULL, NULL, false, &rep, &err), PS_EINPUT);
	fclose(f);
	ck_assert_str_eq(err.msg, "x.jsonl:1: this trace is of an explicit DAG: name its file with --dag");
	ps_replay_free(&rep);
	/* a mac along an edge that is not there */
	f = fopen(path, "w");
	fprintf(f, "{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"explicit\",\"vertices\":%llu,\"edges\":%llu},\"M\":5}\n"
		   "{\"op\":\"load\",\"node\":[0,1]}\n{\"op\":\"mac\",\"into\":20,\"from\":0}\n",
		(unsigned long long)x.vertices, (unsigned long long)x.edges);
	fclose(f);
	f = fopen(path, "r");
	ck_assert_int_eq(ps_trace_replay(f, "x.jsonl", 0, NULL, &x, false, &rep, &err), PS_EINPUT);
	fclose(f);
	ck_assert_str_eq(err.msg, "x.jsonl:3: no edge 0 -> 20 into a sum");
	ps_replay_free(&rep);
	unlink(path);
	ps_explicit_free(&x);
}
END_TEST

/* ---- GraphML: pebblesim's reader against igraph's --------------------- */

/* Reads text as GraphML, through the subset reader first or igraph only. */
static int read_graphml_text(const char *text, size_t len, bool fast,
			     struct ps_explicit *x, struct ps_error *err)
{
	FILE *f = fmemopen((void *)text, len, "r");
	bool was = ps_explicit_fast_graphml(fast);
	int rc;

	ck_assert_ptr_nonnull(f);
	ps_error_clear(err);
	rc = ps_explicit_read_stream(x, f, "g.graphml", true, err);
	ps_explicit_fast_graphml(was);
	fclose(f);
	return rc;
}

/* Both readers on text: the same status and message, or the same DAG:
 * roles, labels, in-edges, outputs and igraph's topological order. Returns
 * whether the subset reader read it (igraph's keeps the node ids as an
 * "id" attribute; the subset reader has no use for them). */
static bool same_either_way(const char *text, size_t len)
{
	struct ps_explicit a, b;
	struct ps_error a_err, b_err;
	int a_rc = read_graphml_text(text, len, true, &a, &a_err);
	int b_rc = read_graphml_text(text, len, false, &b, &b_err);
	igraph_vector_int_t a_order, b_order;
	bool subset;

	ck_assert_msg(a_rc == b_rc, "status %d against %d (%s) on\n%.*s", a_rc, b_rc,
		      a_rc ? a_err.msg : b_err.msg, (int)len, text);
	if (a_rc) {
		ck_assert_str_eq(a_err.msg, b_err.msg);
		return false;
	}
	subset = !igraph_cattribute_has_attr(&a.graph, IGRAPH_ATTRIBUTE_VERTEX, "id");
	ck_assert(igraph_cattribute_has_attr(&b.graph, IGRAPH_ATTRIBUTE_VERTEX, "id"));
	ck_assert_uint_eq(a.vertices, b.vertices);
	ck_assert_uint_eq(a.edges, b.edges);
	ck_assert_uint_eq(a.sums, b.sums);
	ck_assert_uint_eq(a.inputs, b.inputs);
	ck_assert_uint_eq(a.products, b.products);
	ck_assert_uint_eq(a.max_plain_in, b.max_plain_in);
	ck_assert_uint_eq(a.dag.output_count, b.dag.output_count);
	ck_assert_mem_eq(a.role, b.role, a.vertices);
	ck_assert_mem_eq(a.in_start, b.in_start, (a.vertices + 1) * sizeof(uint64_t));
	ck_assert_mem_eq(a.in_from, b.in_from, a.edges * sizeof(uint64_t));
	ck_assert_mem_eq(a.outputs, b.outputs, a.dag.output_count * sizeof(uint64_t));
	ck_assert_int_eq(!a.labels, !b.labels);
	for (uint64_t v = 0; a.labels && v < a.vertices; v++)
		ck_assert_str_eq(a.labels[v] ? a.labels[v] : "(none)",
				 b.labels[v] ? b.labels[v] : "(none)");
	igraph_vector_int_init(&a_order, 0);
	igraph_vector_int_init(&b_order, 0);
	ck_assert_int_eq(igraph_topological_sorting(&a.graph, &a_order, IGRAPH_OUT), 0);
	ck_assert_int_eq(igraph_topological_sorting(&b.graph, &b_order, IGRAPH_OUT), 0);
	ck_assert(igraph_vector_int_all_e(&a_order, &b_order));
	igraph_vector_int_destroy(&a_order);
	igraph_vector_int_destroy(&b_order);
	ps_explicit_free(&a);
	ps_explicit_free(&b);
	return subset;
}

static uint64_t graphml_state = 0x2545f4914f6cdd1du;

static size_t graphml_below(size_t n)
{
	/* xorshift64: the same sequence on every run */
	graphml_state ^= graphml_state << 13;
	graphml_state ^= graphml_state >> 7;
	graphml_state ^= graphml_state << 17;
	return (size_t)(graphml_state % n);
}

/* One random change: a byte replaced, inserted or removed, a line
 * removed or repeated, a word of the format replaced by a near one. */
static size_t mutate_graphml(char *text, size_t len, size_t cap)
{
	static const char bytes[] = "<>/=\"' \t\n!-?&;:#[]abdeilnorstxyz0123456789";
	static const char *const words[][2] = {
		{ "directed", "undirected" }, { "\"n1\"", "\"n01\"" }, { "\"n2\"", "\"n9\"" },
		{ "string", "long" }, { "long", "boolean" }, { "node\"", "edge\"" },
		{ "input", "sum" }, { "plain", "" }, { "<node", "<hyperedge" },
		{ "key=\"role\"", "key=\"nokey\"" }, { "-1", "x" }, { "label", "role" },
		{ "<data", "<!-- c --><data" }, { "</node>", "</node >" }, { "UTF-8", "UTF-16" },
		{ "/>", "></key>" }, { "\"", "'" }, { "source", "id" },
	};
	size_t at = graphml_below(len), cut = 0;
	const char *insert = "";
	char one[2] = { bytes[graphml_below(sizeof(bytes) - 1)], '\0' };
	char *line, *end;

	switch (graphml_below(6)) {
	case 0:
		cut = 1;
		insert = one;
		break;
	case 1:
		insert = one;
		break;
	case 2:
		cut = 1;
		break;
	case 3: { /* a line removed or repeated */
		line = memchr(text + at, '\n', len - at);
		if (!line)
			return len;
		end = memchr(line + 1, '\n', len - (size_t)(line + 1 - text));
		if (!end)
			return len;
		at = (size_t)(line + 1 - text);
		if (graphml_below(2)) {
			cut = (size_t)(end - line);
		} else {
			static char copy[512];

			if ((size_t)(end - line) >= sizeof(copy))
				return len;
			memcpy(copy, line + 1, (size_t)(end - line));
			copy[end - line] = '\0';
			insert = copy;
		}
		break;
	}
	default: {
		size_t w = graphml_below(sizeof(words) / sizeof(words[0]));
		char *found;

		text[len] = '\0';
		found = strstr(text + at, words[w][0]);
		if (!found)
			found = strstr(text, words[w][0]);
		if (!found)
			return len;
		at = (size_t)(found - text);
		cut = strlen(words[w][0]);
		insert = words[w][1];
		break;
	}
	}
	if (len - cut + strlen(insert) >= cap)
		return len;
	memmove(text + at + strlen(insert), text + at + cut, len - at - cut);
	memcpy(text + at, insert, strlen(insert));
	return len - cut + strlen(insert);
}

START_TEST(test_graphml_readers_agree)
{
	static char base[2][1 << 16], text[1 << 16];
	size_t base_len[2];
	struct ps_attention att;
	struct ps_error err;
	igraph_t graph;
	uint64_t subset_reads = 0;
	FILE *f;

	/* the attention DAG as `pebblesim dag` writes it, and the example */
	ps_igraph_setup();
	test_attention(&att, 2, 2, 1, 1);
	ck_assert_int_eq(ps_attention_to_igraph(&att, &graph, &err), 0);
	f = fmemopen(base[0], sizeof(base[0]), "w");
	ck_assert_int_eq(ps_igraph_write(&graph, "graphml", f, &err), 0);
	base_len[0] = (size_t)ftell(f);
	fclose(f);
	igraph_destroy(&graph);
	ps_attention_free(&att);
	f = fopen("examples/tree.graphml", "r");
	ck_assert_ptr_nonnull(f);
	base_len[1] = fread(base[1], 1, sizeof(base[1]), f);
	fclose(f);
	/* both are in the subset, and read alike */
	for (int k = 0; k < 2; k++)
		ck_assert(same_either_way(base[k], base_len[k]));
	/* mutated: sometimes in the subset still, mostly not; alike always */
	for (int round = 0; round < 1200; round++) {
		int k = round % 2;
		size_t len = base_len[k];

		memcpy(text, base[k], len);
		for (size_t c = 0, changes = 1 + graphml_below(3); c < changes; c++)
			len = mutate_graphml(text, len, sizeof(text) - 1);
		subset_reads += same_either_way(text, len);
	}
	ck_assert_uint_gt(subset_reads, 50);
}
END_TEST


/* ---- HyperdagDB, Matrix Market and edge lines ------------------------ */

/* text into a fresh temporary file, its name into path (a template). */
static void write_temp(char *path, const char *text)
{
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* A small HyperdagDB file as OneStopParallel writes one: a diamond
 * 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3 and a second source 4 -> 3, 4 -> 5. */
static const char diamond_hdag[] =
	"%% HyperdagDB format written by OneStopParallel\n"
	"4 6 10\n"
	"%% Hyperedges: ID comm_weight mem_weight\n"
	"0 1 1\n1 1 1\n2 1 1\n3 1 1\n"
	"%% Vertices: ID work_weight type\n"
	"0 1 0\n1 2 0\n2 1 0\n3 3 0\n4 1 0\n5 1 0\n"
	"%% Pins: HyperedgeID NodeID\n"
	"0 0\n0 1\n0 2\n1 1\n1 3\n2 2\n2 3\n3 4\n3 3\n3 5\n";

/* The lower triangle of a 5 x 5 matrix: row 3 (1-based) reads rows 1
 * and 2, row 4 row 3, row 5 rows 1 and 4; every diagonal entry. */
static const char triangle_mtx[] =
	"%%MatrixMarket matrix coordinate real symmetric\n"
	"% a comment\n"
	"5 5 10\n"
	"1 1 2.0\n2 2 1\n3 1 -0.5\n3 2 1e-3\n3 3 4\n4 3 1\n4 4 1\n5 1 2\n5 4 3\n5 5 1\n";

/* The in-edges of v, sorted, as "a,b". */
static void parents_of(const struct ps_explicit *x, uint64_t v, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (uint64_t k = x->in_start[v]; k < x->in_start[v + 1] && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, "%s%llu",
					 k == x->in_start[v] ? "" : ",",
					 (unsigned long long)x->in_from[k]);
}

/* The least I/O of belady and lru in both orders at M, each valid. */
static uint64_t policies_io(const struct ps_explicit *x, uint64_t M, uint64_t io[4])
{
	static const char *const policies[] = { "belady", "lru" }, *const orders[] = { "topo", "dfs" };
	uint64_t least = UINT64_MAX;

	for (int p = 0; p < 2; p++)
		for (int o = 0; o < 2; o++) {
			struct ps_report rep = pebble(x, policies[p], orders[o], M);

			io[2 * p + o] = io_of(&rep);
			least = ps_min_u64(least, io[2 * p + o]);
		}
	return least;
}

/* x written as GraphML by igraph and read back gives the same game:
 * the same parents, outputs and, for each policy and order, the same I/O. */
static void same_as_graphml(const struct ps_explicit *x, uint64_t M)
{
	char path[] = "/tmp/pebblesim-conv-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct ps_explicit back;
	struct ps_error err;
	uint64_t a[4], b[4];
	const char *format = NULL;

	ck_assert_int_eq(ps_igraph_write(&x->graph, "graphml", f, &err), 0);
	fclose(f);
	ck_assert_int_eq(ps_explicit_read_as(&back, path, NULL, &format, &err), 0);
	ck_assert_str_eq(format, "graphml");
	ck_assert_uint_eq(back.vertices, x->vertices);
	ck_assert_uint_eq(back.edges, x->edges);
	ck_assert_uint_eq(back.dag.output_count, x->dag.output_count);
	ck_assert_mem_eq(back.in_start, x->in_start, (x->vertices + 1) * sizeof(uint64_t));
	ck_assert_mem_eq(back.in_from, x->in_from, x->edges * sizeof(uint64_t));
	policies_io(x, M, a);
	policies_io(&back, M, b);
	ck_assert_mem_eq(a, b, sizeof(a));
	ps_explicit_free(&back);
	unlink(path);
}

START_TEST(test_hdag_and_mtx_read)
{
	char path[] = "/tmp/pebblesim-hdag-XXXXXX", buf[64];
	struct ps_explicit x;
	struct ps_error err;
	const char *format = NULL;

	/* by content, and by --dag-format */
	write_temp(path, diamond_hdag);
	ck_assert_int_eq(ps_explicit_read_as(&x, path, NULL, &format, &err), 0);
	ck_assert_str_eq(format, "hdag");
	ck_assert_uint_eq(x.vertices, 6);
	ck_assert_uint_eq(x.edges, 6);
	ck_assert_uint_eq(x.inputs, 2);
	ck_assert_uint_eq(x.dag.output_count, 2); /* 3 and 5 */
	parents_of(&x, 3, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1,2,4");
	parents_of(&x, 5, buf, sizeof(buf));
	ck_assert_str_eq(buf, "4");
	ck_assert_str_eq(x.note, "HyperdagDB: no roles, sources are inputs and every other vertex plain; work weights 1 to 3 not used (the game counts I/O only)");
	same_as_graphml(&x, 4);
	ps_explicit_free(&x);
	ck_assert_int_eq(ps_explicit_read_as(&x, path, "hdag", &format, &err), 0);
	ck_assert_uint_eq(x.edges, 6);
	ps_explicit_free(&x);
	unlink(path);

	strcpy(path, "/tmp/pebblesim-mtx-XXXXXX");
	write_temp(path, triangle_mtx);
	ck_assert_int_eq(ps_explicit_read_as(&x, path, NULL, &format, &err), 0);
	ck_assert_str_eq(format, "mtx");
	ck_assert_uint_eq(x.vertices, 5);
	ck_assert_uint_eq(x.edges, 5);
	ck_assert_uint_eq(x.inputs, 2); /* rows 1 and 2 */
	parents_of(&x, 2, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0,1");
	parents_of(&x, 4, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0,3");
	ck_assert_ptr_nonnull(strstr(x.note, "triangular-solve DAG"));
	same_as_graphml(&x, 3);
	ps_explicit_free(&x);
	ck_assert_int_eq(ps_explicit_read_as(&x, path, "mtx", NULL, &err), 0);
	ps_explicit_free(&x);
	unlink(path);

	ck_assert_str_eq(ps_explicit_sniff("%%MatrixMarket matrix", 21), "mtx");
	ck_assert_str_eq(ps_explicit_sniff("%% c\n31 40 76\n", 14), "hdag");
	ck_assert_str_eq(ps_explicit_sniff("31 40 76", 8), "hdag");
	ck_assert_str_eq(ps_explicit_sniff("# c\n0 1\n", 8), "edgelist");
	ck_assert_str_eq(ps_explicit_sniff("0 2 7\n", 6), "edgelist");
}
END_TEST

/* The same game from a .hdag file and from its GraphML, on DAGs of every
 * shape the generator makes: random hyperedges over a topological order. */
START_TEST(test_hdag_random_same_as_graphml)
{
	uint64_t seed = 7;

	for (int round = 0; round < 12; round++) {
		char path[] = "/tmp/pebblesim-hdag-XXXXXX";
		char *text = malloc(65536);
		size_t used = 0;
		unsigned n = 8 + (unsigned)(round * 3), H = 0, pins = 0;
		unsigned pin_from[600], pin_to[600];
		struct ps_explicit x;
		struct ps_error err;

		for (unsigned u = 0; u + 1 < n; u++) {
			unsigned children = 0;

			for (unsigned v = u + 1; v < n && pins < 590; v++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				if ((seed >> 33) % 4 == 0) {
					if (!children++) {
						pin_from[pins] = H;
						pin_to[pins++] = u;
					}
					pin_from[pins] = H;
					pin_to[pins++] = v;
				}
			}
			H += children > 0;
		}
		used += (size_t)snprintf(text + used, 65536 - used, "%u %u %u\n", H ? H : 1, n, pins);
		for (unsigned h = 0; h < (H ? H : 1); h++)
			used += (size_t)snprintf(text + used, 65536 - used, "%u 1 1\n", h);
		for (unsigned v = 0; v < n; v++)
			used += (size_t)snprintf(text + used, 65536 - used, "%u %u 0\n", v, 1 + v % 3);
		for (unsigned p = 0; p < pins; p++)
			used += (size_t)snprintf(text + used, 65536 - used, "%u %u\n", pin_from[p], pin_to[p]);
		write_temp(path, text);
		free(text);
		ck_assert_int_eq(ps_explicit_read_as(&x, path, NULL, NULL, &err), 0);
		ck_assert_uint_eq(x.edges, pins - H);
		same_as_graphml(&x, ps_max_u64(x.max_plain_in + 1, 2) + (uint64_t)(round % 3));
		ps_explicit_free(&x);
		unlink(path);
	}
}
END_TEST

START_TEST(test_bad_hdag_mtx_edgelist)
{
	static const struct {
		const char *format, *text, *want; /* want: after "FILE:" */
	} cases[] = {
		/* an edge-list line holds exactly one pair */
		{ NULL, "0 2 7\n1 2 7\n", "1: an edge-list line holds exactly one pair of vertex ids (from to); this one holds more than two" },
		{ "edgelist", "0 1\n2\n", "2: an edge-list line holds exactly one pair of vertex ids (from to); this one holds one id" },
		{ "edgelist", "0 /* a\n */ 1\n", "1: an edge-list line holds exactly one pair of vertex ids (from to); this one holds one id" },
		{ "edgelist", "0 1 /* open\n", "1: a comment opened by /* is not closed" },
		{ NULL, "# c\n0 1\n1 x\n", "3: an edge list holds vertex ids, integers >= 0 (found 'x')" },
		/* HyperdagDB */
		{ "hdag", "2 3\n", "1: a HyperdagDB header holds three counts: hyperedges >= 0, vertices >= 1, pins >= 0" },
		{ NULL, "1 2 2\n0 1 1\n0\n", "3: the file ends before the last vertex" },
		{ NULL, "1 2 2\n0 1 1\n0\n0\n0 0\n0 1\n", "4: vertex 0 is declared twice" },
		{ NULL, "1 2 2\n0 1 1\n0\n1\n0 0\n0 2\n", "6: a pin line holds a hyperedge (0 to 0) and a vertex (0 to 1)" },
		{ NULL, "1 2 2\n1 1 1\n0\n1\n0 0\n0 1\n", "2: a hyperedge line holds its id (0 to 0) and, optionally, its comm and mem weights (integers >= 0)" },
		{ NULL, "1 2 2\n0 1 1\n0\n1\n0 0\n0 0\n", "6: vertex 0 is the source of hyperedge 0 and also its child: a loop" },
		{ NULL, "2 2 4\n0\n1\n0\n1\n0 0\n0 1\n1 1\n1 0\n", "the graph has a cycle: it is not a DAG" },
		{ NULL, "2 3 4\n0\n1\n0\n1\n2\n0 0\n0 1\n1 0\n1 1\n", "10: the pins make the edge 0 -> 1 again (line 8): a DAG names each edge once" },
		{ NULL, "1 2 2\n0 1 1\n0\n1\n0 0\n0 1\n0 1\n", "7: data after the 2 pins the header declares" },
		{ NULL, "1 2 2\n0 2 1\n0\n1\n0 0\n0 1\n", "2: hyperedge 0 has comm weight 2: pebblesim's game is unit-weight (a value takes one slot, a load or save costs one); give --ignore-weights to read every weight as 1" },
		{ NULL, "1 2 2\n0 1 3\n0\n1\n0 0\n0 1\n", "2: hyperedge 0 has mem weight 3: pebblesim's game is unit-weight (a value takes one slot, a load or save costs one); give --ignore-weights to read every weight as 1" },
		{ NULL, "1 2 2\n0 -1 1\n0\n1\n0 0\n0 1\n", "2: a hyperedge line holds its id (0 to 0) and, optionally, its comm and mem weights (integers >= 0)" },
		/* Matrix Market */
		{ "mtx", "3 3 1\n1 1 1\n", "1: a Matrix Market file starts with its banner, %%MatrixMarket matrix coordinate FIELD SYMMETRY" },
		{ NULL, "%%MatrixMarket matrix array real general\n2 2\n", "1: the matrix is stored as 'array': pebblesim reads the coordinate format, a nonzero a line" },
		{ NULL, "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n", "2: the matrix is 2 x 3: a triangular solve needs a square one" },
		{ NULL, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 2 1\n", "4: A[1,2] lies above the diagonal: a triangular-solve DAG is read from a lower-triangular matrix" },
		{ NULL, "%%MatrixMarket matrix coordinate real general\n2 2 2\n2 1 1\n2 1 5\n", "4: a nonzero repeats the edge 0 -> 1 again (line 3): a DAG names each edge once" },
		{ NULL, "%%MatrixMarket matrix coordinate real general\n2 2 2\n2 1 1\n", "3: the file ends before the last nonzero the size line declares" },
		{ NULL, "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 x\n", "3: the value 'x' is not a number" },
		{ NULL, "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1 1\n", "3: a nonzero's line holds its row and column (1 to 2) and no value (pattern)" },
		{ NULL, "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", "3: a nonzero's line holds its row and column (1 to 2) and one value" },
		{ NULL, "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 1\n1 1 1\n", "4: data after the 1 nonzeros the size line declares" },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char path[] = "/tmp/pebblesim-bad-XXXXXX", want[512];
		struct ps_explicit x;
		struct ps_error err;

		write_temp(path, cases[k].text);
		ck_assert_int_eq(ps_explicit_read_as(&x, path, cases[k].format, NULL, &err), PS_EINPUT);
		/* a line's fault after "FILE:", the graph's after "DAG 'FILE': " */
		if (cases[k].want[0] >= '0' && cases[k].want[0] <= '9')
			snprintf(want, sizeof(want), "%s:%s", path, cases[k].want);
		else
			snprintf(want, sizeof(want), "DAG '%s': %s", path, cases[k].want);
		ck_assert_str_eq(err.msg, want);
		unlink(path);
	}
}
END_TEST

START_TEST(test_edgelist_comments_and_weights)
{
	char path[] = "/tmp/pebblesim-el-XXXXXX";
	struct ps_explicit x;
	struct ps_error err;
	const char *format;

	/* comments wherever detection skips them: before, between, after a pair */
	write_temp(path, "# a comment\n% another\n// and\n/* a\nblock */\n0 1 # after\n1 2 // after\n\n2 3 /* x */\n");
	ck_assert_int_eq(ps_explicit_read_as(&x, path, NULL, &format, &err), 0);
	ck_assert_str_eq(format, "edgelist");
	ck_assert_uint_eq(x.vertices, 4);
	ck_assert_uint_eq(x.edges, 3);
	ps_explicit_free(&x);
	unlink(path);

	/* weights other than 1: refused, or read as 1 and said */
	strcpy(path, "/tmp/pebblesim-w-XXXXXX");
	write_temp(path, "2 3 4\n0 2 1\n1 1 5\n0\n1 4\n2\n0 0\n0 2\n1 1\n1 2\n");
	ck_assert_int_eq(ps_explicit_read_as(&x, path, NULL, NULL, &err), PS_EINPUT);
	ck_assert_ptr_nonnull(strstr(err.msg, ":2: hyperedge 0 has comm weight 2"));
	ck_assert_int_eq(ps_explicit_read_with(&x, path, NULL, PS_EXPLICIT_IGNORE_WEIGHTS, &format, &err), 0);
	ck_assert_uint_eq(x.edges, 2);
	ck_assert_str_eq(x.note, "HyperdagDB: no roles, sources are inputs and every other vertex plain; work weights 1 to 4 not used (the game counts I/O only); comm weights 1 to 2 and mem weights 1 to 5 read as 1 (--ignore-weights)");
	ps_explicit_free(&x);
	unlink(path);
}
END_TEST

/* The portfolio (best on a DAG file) at M: valid in the engine, its I/O
 * the one its plan names, no more than any policy over topo or dfs, at
 * least the trivial bound. */
static uint64_t check_portfolio(const struct ps_explicit *x, uint64_t M)
{
	const struct ps_strategy *s = ps_strategy_find("portfolio");
	struct ps_problem pb = { .xdag = x, .M = M, .time_limit = 0.2 };
	struct ps_plan plan;
	struct ps_report rep;
	struct ps_error err;
	struct ps_bound trivial;
	uint64_t io[4], least = policies_io(x, M, io);
	char want[64];

	ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err), 0);
	ck_assert_msg(ps_run(&pb, s, NULL, &rep, &err) == 0, "%s", err.msg);
	ck_assert_msg(rep.valid, "portfolio M=%llu: %s", (unsigned long long)M, rep.violation);
	ck_assert_uint_le(rep.counts.peak_red, M);
	ck_assert_uint_le(io_of(&rep), least);
	ps_bound_trivial_explicit(x, &trivial);
	ck_assert((double)io_of(&rep) >= trivial.value);
	snprintf(want, sizeof(want), ", I/O %llu, the least of 19 members", (unsigned long long)io_of(&rep));
	ck_assert_msg(strstr(plan.summary, want) && !strncmp(plan.summary, "won: ", 5),
		      "%s (want '%s')", plan.summary, want);
	return io_of(&rep);
}

START_TEST(test_portfolio)
{
	struct ps_explicit x;
	struct ps_bound trivial;
	struct ps_problem pb = { .M = 2 };
	struct ps_plan plan;
	struct ps_error err;
	char path[] = "/tmp/pebblesim-pf-XXXXXX";

	for (int shape = 0; shape < 5; shape++) {
		uint64_t min_m;

		switch (shape) {
		case 0: binary_tree(&x, 4); break;
		case 1: pyramid(&x, 6); break;
		case 2: butterfly(&x, 3); break;
		case 3: matmul(&x, 3); break;
		default:
			write_temp(path, diamond_hdag);
			ck_assert_int_eq(ps_explicit_read(&x, path, &err), 0);
			unlink(path);
			strcpy(path, "/tmp/pebblesim-pf-XXXXXX");
			break;
		}
		pb.xdag = &x;
		min_m = ps_strategy_min_memory_explicit(ps_strategy_find("portfolio"), &pb);
		for (uint64_t M = min_m; M <= x.vertices; M += 1 + M / 3)
			check_portfolio(&x, M);
		/* room for everything: the trivial I/O */
		ps_bound_trivial_explicit(&x, &trivial);
		ck_assert_double_eq((double)check_portfolio(&x, x.vertices + 1), trivial.value);
		/* below the least M: refused with it */
		pb.M = min_m - 1;
		if (min_m > 1) {
			ck_assert_int_eq(ps_strategy_plan(ps_strategy_find("portfolio"), &pb, &plan, &err), PS_EINPUT);
			ck_assert_ptr_nonnull(strstr(err.msg, "it needs M >= "));
		}
		ps_explicit_free(&x);
	}
	/* the tree of 8 leaves at M = 3 and 4: the optima that `optimal`
	 * proves (docs/OPTIMAL.md), 15 and 11 */
	binary_tree(&x, 3);
	ck_assert_uint_eq(check_portfolio(&x, 3), 15);
	ck_assert_uint_eq(check_portfolio(&x, 4), 11);
	ps_explicit_free(&x);
}
END_TEST

START_TEST(test_portfolio_cli)
{
	char path[] = "/tmp/pebblesim-pfc-XXXXXX", trace[64], cmd[512];
	FILE *p;
	char line[512];
	bool won = false, valid = false;
	int rc;

	write_temp(path, diamond_hdag);
	snprintf(trace, sizeof(trace), "%s.jsonl", path);
	snprintf(cmd, sizeof(cmd),
		 "%s run --dag %s -M 4 --strategy best --time-limit 0.1 --trace %s && %s validate %s --dag %s",
		 getenv("PEBBLESIM_BIN") ? getenv("PEBBLESIM_BIN") : "build/pebblesim", path, trace,
		 getenv("PEBBLESIM_BIN") ? getenv("PEBBLESIM_BIN") : "build/pebblesim", trace, path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		won |= strstr(line, "  plan                 won: ") != NULL;
		valid |= !strncmp(line, "valid                  yes", 26);
	}
	rc = pclose(p);
	ck_assert_int_eq(rc, 0);
	ck_assert(won);
	ck_assert(valid);
	/* --time-limit is the portfolio's, refused by name for lru */
	snprintf(cmd, sizeof(cmd), "%s run --dag %s -M 4 --strategy lru --time-limit 1 2>&1",
		 getenv("PEBBLESIM_BIN") ? getenv("PEBBLESIM_BIN") : "build/pebblesim", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	ck_assert_int_eq(WEXITSTATUS(pclose(p)), 2);
	ck_assert_str_eq(line, "pebblesim: --time-limit is an option of portfolio, not of lru\n");
	/* --ignore-weights is a HyperdagDB file's: refused with one that has none */
	snprintf(cmd, sizeof(cmd), "%s run --dag examples/tree.graphml -M 4 --ignore-weights 2>&1",
		 getenv("PEBBLESIM_BIN") ? getenv("PEBBLESIM_BIN") : "build/pebblesim");
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	ck_assert_int_eq(WEXITSTATUS(pclose(p)), 2);
	ck_assert_str_eq(line, "pebblesim: --ignore-weights applies to a HyperdagDB file; 'examples/tree.graphml' is read as graphml, which carries no weights\n");
	/* optimal takes the portfolio's I/O as its first upper end */
	{
		char out[65536];
		size_t got;
		json_t *root, *rows;
		json_error_t jerr;
		uint64_t least = UINT64_MAX, portfolio = UINT64_MAX;

		snprintf(cmd, sizeof(cmd), "%s optimal --dag %s -M 4 --time-limit 1 --json",
			 getenv("PEBBLESIM_BIN") ? getenv("PEBBLESIM_BIN") : "build/pebblesim", path);
		p = popen(cmd, "r");
		got = fread(out, 1, sizeof(out) - 1, p);
		out[got] = '\0';
		ck_assert_int_eq(WEXITSTATUS(pclose(p)), 0);
		root = json_loads(out, 0, &jerr);
		ck_assert_ptr_nonnull(root);
		rows = json_object_get(root, "strategies");
		for (size_t k = 0; k < json_array_size(rows); k++) {
			json_t *row = json_array_get(rows, k);
			uint64_t io = (uint64_t)json_integer_value(json_object_get(row, "io"));

			if (!strcmp(json_string_value(json_object_get(row, "strategy")), "portfolio"))
				portfolio = io;
			least = ps_min_u64(least, io);
		}
		ck_assert_uint_eq(portfolio, least);
		ck_assert_uint_le((uint64_t)json_integer_value(json_object_get(root, "upper")), portfolio);
		json_decref(root);
	}
	unlink(trace);
	unlink(path);
}
END_TEST

Suite *explicit_suite(void)
{
	Suite *s = suite_create("explicit");
	TCase *tc = tcase_create("igraph");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_materialised_equals_implicit);
	tcase_add_test(tc, test_graphml_round_trip);
	tcase_add_test(tc, test_classic_dags);
	tcase_add_test(tc, test_tree_needs_k_plus_2);
	tcase_add_test(tc, test_bad_dag_files);
	tcase_add_test(tc, test_explicit_trace_round_trip);
	tcase_add_test(tc, test_graphml_readers_agree);
	tcase_add_test(tc, test_hdag_and_mtx_read);
	tcase_add_test(tc, test_hdag_random_same_as_graphml);
	tcase_add_test(tc, test_bad_hdag_mtx_edgelist);
	tcase_add_test(tc, test_edgelist_comments_and_weights);
	tcase_add_test(tc, test_portfolio);
	tcase_add_test(tc, test_portfolio_cli);
	suite_add_tcase(s, tc);
	return s;
}
