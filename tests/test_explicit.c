/*
 * Explicit DAGs with igraph: the attention DAG materialised and checked
 * against the implicit one; GraphML round trips; classic DAGs built with
 * igraph and pebbled by lru and belady in both orders.
 */
#include <igraph.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	suite_add_tcase(s, tc);
	return s;
}
