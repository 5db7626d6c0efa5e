/*
 * Traces: round trips (written, replayed, the same counts), elementary and
 * set-operation traces of one run agreeing, and mutations of a valid trace
 * (examples/tiny.jsonl), each with the exact violation and line expected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/run.h"
#include "pebblesim/strategy.h"
#include "pebblesim/trace.h"
#include "tests.h"

/* ---- helpers ----------------------------------------------------------- */

static char tmpdir[] = "/tmp/pebblesim-trace-XXXXXX";

static void make_tmpdir(void)
{
	if (tmpdir[sizeof(tmpdir) - 2] == 'X')
		ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

/* Removes a test's file and its directory (a later test makes another). */
static void drop_tmp(const char *path)
{
	unlink(path);
	ck_assert_int_eq(rmdir(tmpdir), 0);
	strcpy(tmpdir, "/tmp/pebblesim-trace-XXXXXX");
}

static void tmp_path(char *buf, size_t len, const char *name)
{
	make_tmpdir();
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static int replay_with(const char *path, uint64_t M, bool element_only,
		       bool fast, struct ps_replay *rep, struct ps_error *err)
{
	FILE *f = fopen(path, "r");
	bool was = ps_trace_fast_lines(fast);
	int rc;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	ps_error_clear(err);
	rc = ps_trace_replay(f, path, M, NULL, NULL, element_only, rep, err);
	ps_trace_fast_lines(was);
	fclose(f);
	return rc;
}

/* Two replays of one trace agree: status, message and line, verdict,
 * violation, counts, lines and operations. */
static void expect_same_replay(const char *what, int rc, const struct ps_replay *a,
			       const struct ps_error *a_err, int other_rc,
			       const struct ps_replay *b, const struct ps_error *b_err)
{
	ck_assert_msg(rc == other_rc, "%s: status %d against %d (%s)", what, rc,
		      other_rc, rc ? a_err->msg : b_err->msg);
	if (rc) {
		ck_assert_str_eq(a_err->msg, b_err->msg);
		ck_assert_uint_eq(a_err->line, b_err->line);
		return;
	}
	ck_assert_msg(a->valid == b->valid, "%s: verdicts differ", what);
	ck_assert_str_eq(a->violation, b->violation);
	ck_assert_int_eq(a->rule, b->rule);
	ck_assert_uint_eq(a->violation_line, b->violation_line);
	ck_assert_mem_eq(&a->counts, &b->counts, sizeof(b->counts));
	ck_assert_uint_eq(a->lines, b->lines);
	ck_assert_uint_eq(a->ops, b->ops);
	ck_assert_int_eq(a->has_end, b->has_end);
}

/*
 * Replays path with the block path and the fast line reader; replays it
 * again move by move, and again with every line through jansson, and
 * requires the same verdict, message, line and counts (the differential
 * test of the block path and of the line reader on every trace of this
 * suite).
 */
static int replay(const char *path, uint64_t M, struct ps_replay *rep,
		  struct ps_error *err)
{
	struct ps_replay other;
	struct ps_error other_err;
	int rc = replay_with(path, M, false, true, rep, err);
	int other_rc = replay_with(path, M, true, true, &other, &other_err);

	expect_same_replay("block path against element path", rc, rep, err,
			   other_rc, &other, &other_err);
	ps_replay_free(&other);
	other_rc = replay_with(path, M, false, false, &other, &other_err);
	expect_same_replay("fast lines against jansson", rc, rep, err, other_rc,
			   &other, &other_err);
	ck_assert_uint_eq(other.fast_lines, 0);
	ps_replay_free(&other);
	return rc;
}

/* The lines of examples/tiny.jsonl, to mutate. */
static char lines[32][256];
static int line_count;

static void load_tiny(void)
{
	FILE *f = fopen("examples/tiny.jsonl", "r");

	ck_assert_ptr_nonnull(f);
	line_count = 0;
	while (line_count < 32 && fgets(lines[line_count], sizeof(lines[0]), f))
		line_count++;
	fclose(f);
	ck_assert_int_eq(line_count, 26);
}

/* Writes lines[first..last] (1-based) with the given line replaced. */
static void write_lines(const char *path, int skip, int swap_a, int swap_b,
			int dup)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	for (int k = 1; k <= line_count; k++) {
		int src = k == swap_a ? swap_b : k == swap_b ? swap_a : k;

		if (k == skip)
			continue;
		fputs(lines[src - 1], f);
		if (k == dup)
			fputs(lines[src - 1], f);
	}
	fclose(f);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

#define EXPECT_VIOLATION(path, M, want_rule, want)                          \
	do {                                                                \
		struct ps_replay rep_;                                      \
		struct ps_error err_;                                       \
		ck_assert_int_eq(replay((path), (M), &rep_, &err_), 0);     \
		ck_assert_msg(!rep_.valid, "%s is valid", (path));          \
		ck_assert_str_eq(ps_rule_name(rep_.rule), ps_rule_name(want_rule)); \
		ck_assert_str_eq(strrchr(rep_.violation, '/') + 1, (want)); \
		ps_replay_free(&rep_);                                      \
	} while (0)

#define EXPECT_INPUT_ERROR(path, want)                                     \
	do {                                                                \
		struct ps_replay rep_;                                      \
		struct ps_error err_;                                       \
		ck_assert_int_eq(replay((path), 0, &rep_, &err_), PS_EINPUT); \
		ck_assert_str_eq(strrchr(err_.msg, '/') + 1, (want));       \
		ps_replay_free(&rep_);                                      \
	} while (0)

/* ---- the example, and its mutations ------------------------------------ */

START_TEST(test_tiny_is_valid_and_optimal)
{
	struct ps_replay rep;
	struct ps_error err;

	ck_assert_int_eq(replay("examples/tiny.jsonl", 0, &rep, &err), 0);
	ck_assert(rep.valid);
	ck_assert(rep.has_end);
	ck_assert_uint_eq(rep.counts.loads, 6);
	ck_assert_uint_eq(rep.counts.saves, 2);
	ck_assert_uint_eq(rep.counts.peak_red, 9);
	ck_assert_uint_eq(rep.counts.macs, 16);
	ck_assert_uint_eq(rep.counts.moves, 54);
	ck_assert_uint_eq(rep.lines, 26);
	ps_replay_free(&rep);
	/* the shipped broken variant: the save of A[0,0] is gone */
	EXPECT_VIOLATION("examples/tiny-broken.jsonl", 0, PS_RULE_END_NOT_SAVED,
			 "tiny-broken.jsonl:25: end: output A[0,0] is not in slow memory");
}
END_TEST

START_TEST(test_mutations)
{
	char path[256];

	load_tiny();
	tmp_path(path, sizeof(path), "m.jsonl");
	/* drop a load: Q[0,0] is missing when U1[0,1] = (0) is regenerated */
	write_lines(path, 12, 0, 0, 0);
	EXPECT_VIOLATION(path, 0, PS_RULE_PARENT_NOT_RED,
			 "m.jsonl:12: compute U1[0,1]: Q[0,0] is not in fast memory");
	/* drop a save: A[0,0] never reaches slow memory */
	write_lines(path, 15, 0, 0, 0);
	EXPECT_VIOLATION(path, 0, PS_RULE_END_NOT_SAVED,
			 "m.jsonl:25: end: output A[0,0] is not in slow memory");
	/* swap two lines: the mac into N comes before its Q is loaded */
	write_lines(path, 0, 12, 13, 0);
	EXPECT_VIOLATION(path, 0, PS_RULE_PARENT_NOT_RED,
			 "m.jsonl:12: compute U1[0,1]: Q[0,0] is not in fast memory");
	/* M one below the peak */
	write_lines(path, 0, 0, 0, 0);
	EXPECT_VIOLATION(path, 8, PS_RULE_CAPACITY,
			 "m.jsonl:13: mac into N[0,1]: capacity exceeded: 9 red pebbles with M = 8 (the product P1[0,0,1] needs a slot)");
	/* duplicate a mac: its edges are aggregated already */
	write_lines(path, 0, 0, 0, 4);
	EXPECT_VIOLATION(path, 0, PS_RULE_MAC_EDGE_DONE,
			 "m.jsonl:5: mac into H[0,0]: the in-edge from P2[0,0,0] is already aggregated");
	/* truncated at a line boundary: no end line, outputs missing */
	write_lines(path, 0, 0, 0, 0);
	{
		FILE *f = fopen(path, "w");

		for (int k = 0; k < 20; k++)
			fputs(lines[k], f);
		fclose(f);
	}
	EXPECT_VIOLATION(path, 0, PS_RULE_END_NOT_SAVED,
			 "m.jsonl:21: end: output A[1,0] is not in slow memory");
	drop_tmp(path);
}
END_TEST

START_TEST(test_incomplete_h)
{
	char path[256], text[4096] = "";

	load_tiny();
	tmp_path(path, sizeof(path), "h.jsonl");
	/* phase 2 for row 0 right after the first row of phase 1 */
	for (int k = 1; k <= 6; k++)
		strcat(text, lines[k - 1]);
	strcat(text, lines[11]);
	strcat(text, lines[12]);
	write_text(path, text);
	EXPECT_VIOLATION(path, 0, PS_RULE_PARENT_INCOMPLETE,
			 "h.jsonl:8: mac into N[0,0]: H[0,0] is incomplete (1 of 2 in-edges aggregated)");
	drop_tmp(path);
}
END_TEST

START_TEST(test_input_errors)
{
	char path[256], text[4096];

	load_tiny();
	tmp_path(path, sizeof(path), "e.jsonl");
	/* a coordinate out of range */
	snprintf(text, sizeof(text), "%s{\"op\":\"load\",\"kind\":\"K\",\"j\":5,\"a\":0}\n", lines[0]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:2: K coordinate j = 5 is out of range [0, 2)");
	/* corrupt JSON: line and column */
	snprintf(text, sizeof(text), "%s%s{\"op\":\"load\",\"kind\":\"V\",\"j\":0,\"b\":0]\n",
		 lines[0], lines[1]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:3:36: invalid JSON: '}' expected near ']'");
	/* truncated inside a line */
	snprintf(text, sizeof(text), "%s%s{\"op\":\"load\",\"ki", lines[0], lines[1]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:3:16: invalid JSON: premature end of input near '\"ki'");
	/* unknown keys, kinds, operations */
	snprintf(text, sizeof(text), "%s{\"op\":\"load\",\"kind\":\"K\",\"j\":0,\"a\":0,\"x\":1}\n", lines[0]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:2: unknown key \"x\" in this operation");
	snprintf(text, sizeof(text), "%s{\"op\":\"load\",\"kind\":\"V\",\"j\":0,\"b\":3,\"b\":0}\n", lines[0]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:2:39: invalid JSON: duplicate object key near '\"b\"'");
	snprintf(text, sizeof(text), "%s{\"op\":\"load\",\"kind\":\"W\",\"j\":0,\"a\":0}\n", lines[0]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:2: unknown kind \"W\"");
	snprintf(text, sizeof(text), "%s{\"op\":\"fetch\",\"kind\":\"K\"}\n", lines[0]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:2: unknown operation \"fetch\"");
	snprintf(text, sizeof(text), "%s{\"op\":\"load\",\"kind\":\"K\",\"j\":0}\n", lines[0]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:2: a load of K needs coordinate \"a\"");
	snprintf(text, sizeof(text), "%s{\"op\":\"mac\",\"into\":\"A\",\"i\":0,\"m\":0,\"b\":0}\n", lines[0]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:2: a mac aggregates into H or N, not into A");
	snprintf(text, sizeof(text), "%s{\"op\":\"load\",\"kind\":\"K\",\"j\":-1,\"a\":0}\n", lines[0]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:2: coordinate j = -1 is negative");
	snprintf(text, sizeof(text), "%s{\"op\":\"load\",\"kind\":\"K\",\"j\":{\"lo\":1,\"hi\":0},\"a\":0}\n", lines[0]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:2: coordinate j: a range needs integers 0 <= lo <= hi");
	/* the header */
	write_text(path, "{\"format\":\"other\",\"version\":1}\n");
	EXPECT_INPUT_ERROR(path, "e.jsonl:1: not a pebblesim trace: the header's \"format\" must be \"pebblesim-trace\"");
	write_text(path, "{\"format\":\"pebblesim-trace\",\"version\":2}\n");
	EXPECT_INPUT_ERROR(path, "e.jsonl:1: trace version 2 is not supported (this pebblesim reads version 1)");
	write_text(path, "{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\",\"n\":2,\"d\":1,\"g\":1},\"M\":9,\"colour\":1}\n");
	EXPECT_INPUT_ERROR(path, "e.jsonl:1: unknown key \"colour\" in the header");
	write_text(path, "");
	{
		struct ps_replay rep;
		struct ps_error err;

		ck_assert_int_eq(replay(path, 0, &rep, &err), PS_EINPUT);
		ck_assert_str_eq(strrchr(err.msg, '/') + 1, "e.jsonl: empty trace: no header");
	}
	/* an empty line, a line after the end, counts that differ */
	snprintf(text, sizeof(text), "%s\n%s", lines[0], lines[1]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:2: empty line");
	text[0] = '\0';
	for (int k = 0; k < 26; k++)
		strcat(text, lines[k]);
	strcat(text, lines[1]);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "e.jsonl:27: a line after the end line");
	text[0] = '\0';
	for (int k = 0; k < 25; k++)
		strcat(text, lines[k]);
	strcat(text, "{\"op\":\"end\",\"loads\":6,\"saves\":3}\n");
	write_text(path, text);
	EXPECT_VIOLATION(path, 0, PS_RULE_END_COUNTS,
			 "e.jsonl:26: end: the trace states 6 loads and 3 saves; the sequence made 6 loads and 2 saves");
	drop_tmp(path);
}
END_TEST

START_TEST(test_header_must_match)
{
	struct ps_attention_params want = { .n = 2, .d = 1, .g = 2, .normalize = true };
	struct ps_replay rep;
	struct ps_error err;
	FILE *f = fopen("examples/tiny.jsonl", "r");

	ck_assert_int_eq(ps_trace_replay(f, "tiny.jsonl", 0, &want, NULL, false, &rep, &err), PS_EINPUT);
	fclose(f);
	ck_assert_str_eq(err.msg, "tiny.jsonl:1: the header's DAG (n = 2, d = 1, g = 1, normalised) is not the one asked for (n = 2, d = 1, g = 2, normalised)");
	ck_assert_uint_eq(err.line, 1);
	ps_replay_free(&rep);
}
END_TEST

/* ---- round trips -------------------------------------------------------- */

/* Runs s with a trace; replays it; both agree. Returns the run's counts. */
static void round_trip(const struct ps_attention *att, const struct ps_strategy *s,
		       uint64_t M, bool elementary)
{
	struct ps_problem pb = { .att = att, .M = M };
	struct ps_trace_writer w;
	struct ps_report run;
	struct ps_replay rep;
	struct ps_plan plan;
	struct ps_error err;
	char path[256];

	tmp_path(path, sizeof(path), elementary ? "rt-e.jsonl" : "rt.jsonl");
	ck_assert_int_eq(ps_strategy_plan(s, &pb, &plan, &err), 0);
	ck_assert_int_eq(ps_trace_open(&w, path, att, NULL, M, plan.chosen ? plan.chosen->name : s->name,
				       &plan, NULL, elementary, &err), 0);
	ck_assert_int_eq(ps_run(&pb, s, &w.sink, &run, &err), 0);
	ck_assert(run.valid);
	ck_assert_int_eq(ps_trace_close(&w, &run.counts, true, &err), 0);
	ck_assert_int_eq(access(path, R_OK), 0);
	ck_assert_int_eq(replay(path, 0, &rep, &err), 0);
	ck_assert_msg(rep.valid, "%s", rep.violation);
	ck_assert(rep.has_end);
	ck_assert_mem_eq(&rep.counts, &run.counts, sizeof(run.counts));
	ck_assert_uint_eq(rep.ops, elementary ? run.counts.moves : run.ops);
	/* every line of single moves but the header and the end, without jansson */
	if (elementary)
		ck_assert_uint_eq(rep.fast_lines, rep.lines - 2);
	ck_assert_str_eq(rep.header.strategy, plan.chosen ? plan.chosen->name : s->name);
	if (plan.param_name && !strcmp(plan.param_name, "w"))
		ck_assert_uint_eq(rep.header.w, plan.param);
	ps_replay_free(&rep);
	/* the same trace under M = its peak is valid, one less is not */
	ck_assert_int_eq(replay(path, run.counts.peak_red, &rep, &err), 0);
	ck_assert(rep.valid);
	ps_replay_free(&rep);
	ck_assert_int_eq(replay(path, run.counts.peak_red - 1, &rep, &err), 0);
	ck_assert(!rep.valid);
	ck_assert_int_eq(rep.rule, PS_RULE_CAPACITY);
	ps_replay_free(&rep);
	drop_tmp(path);
}

START_TEST(test_round_trips)
{
	struct ps_attention att;

	test_attention(&att, 9, 4, 2, 1);
	for (size_t k = 0; k < ps_strategy_count; k++) {
		uint64_t M = ps_max_u64(ps_strategy_min_memory(ps_strategies[k], &att), 40);

		if (M == UINT64_MAX)
			continue;
		round_trip(&att, ps_strategies[k], M, false);
		round_trip(&att, ps_strategies[k], M, true);
	}
	ps_attention_free(&att);
	test_attention(&att, 5, 3, 1, 0);
	round_trip(&att, ps_strategy_find("generic"), 30, false);
	round_trip(&att, ps_strategy_find("generic"), 30, true);
	ps_attention_free(&att);
}
END_TEST

/* Causal traces (MODEL.md section 7): every causal strategy's, set
 * operations and single moves, round trips to the run's counts; the
 * carry's syntax and rules. */
START_TEST(test_causal_traces)
{
	static const char *const header =
		"{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\",\"n\":2,\"d\":1,\"g\":1,\"normalize\":true,\"causal\":true},\"M\":64}\n";
	static const char *const row0 =
		"{\"op\":\"load\",\"kind\":\"K\",\"j\":0,\"a\":0}\n"
		"{\"op\":\"load\",\"kind\":\"V\",\"j\":0,\"b\":0}\n"
		"{\"op\":\"mac\",\"into\":\"H\",\"j\":0,\"m\":{\"lo\":0,\"hi\":2},\"b\":{\"lo\":0,\"hi\":2},\"fuse\":true}\n";
	struct ps_attention att;
	struct ps_error err;
	char path[256], text[4096];

	test_causal_attention(&att, 9, 4, 2, 1);
	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];

		if (!ps_strategy_serves(s, &att))
			continue;
		round_trip(&att, s, ps_strategy_min_memory(s, &att), false);
		round_trip(&att, s, ps_strategy_min_memory(s, &att), true);
	}
	ps_attention_free(&att);
	/* decoding (MODEL.md section 8): 5 tokens after a prompt of 4 */
	for (int norm = 0; norm <= 1; norm++) {
		struct ps_attention_params p = { .n = 9, .d = 3, .g = 2, .normalize = norm != 0,
						 .causal = true, .decode = 4 };
		const struct ps_strategy *s = ps_strategy_find("recurrent-decode");

		ck_assert_int_eq(ps_attention_init(&att, &p, &err), 0);
		round_trip(&att, s, ps_strategy_min_memory(s, &att) + 7, false);
		round_trip(&att, s, ps_strategy_min_memory(s, &att), true);
		ps_attention_free(&att);
	}

	tmp_path(path, sizeof(path), "c.jsonl");
	/* the carry and its rules */
	snprintf(text, sizeof(text), "%s%s{\"op\":\"mac\",\"into\":\"H\",\"j\":1,\"m\":0,\"b\":0,\"carry\":true}\n"
		 "{\"op\":\"delete\",\"kind\":\"H\",\"j\":0,\"m\":0,\"b\":0}\n"
		 "{\"op\":\"mac\",\"into\":\"H\",\"j\":1,\"m\":1,\"b\":0,\"carry\":true}\n",
		 header, row0);
	write_text(path, text);
	{
		struct ps_replay rep;

		ck_assert_int_eq(replay(path, 0, &rep, &err), 0);
		ck_assert(!rep.valid); /* no end: the outputs are not saved */
		ps_replay_free(&rep);
	}
	snprintf(text, sizeof(text), "%s%s{\"op\":\"delete\",\"kind\":\"H\",\"j\":0,\"m\":1,\"b\":1}\n"
		 "{\"op\":\"mac\",\"into\":\"H\",\"j\":1,\"m\":1,\"b\":1,\"carry\":true}\n",
		 header, row0);
	write_text(path, text);
	EXPECT_VIOLATION(path, 0, PS_RULE_PARENT_NOT_RED,
			 "c.jsonl:6: mac into H[1,1,1]: H[0,1,1] is not in fast memory");
	snprintf(text, sizeof(text), "%s%s{\"op\":\"mac\",\"into\":\"H\",\"j\":1,\"m\":1,\"b\":1,\"carry\":true}\n"
		 "{\"op\":\"mac\",\"into\":\"H\",\"j\":1,\"m\":1,\"b\":1,\"carry\":true}\n",
		 header, row0);
	write_text(path, text);
	EXPECT_VIOLATION(path, 0, PS_RULE_MAC_EDGE_DONE,
			 "c.jsonl:6: mac into H[1,1,1]: the in-edge from HC[1,1,1] is already aggregated");
	/* N[1] reads H[1], which holds the carry only */
	snprintf(text, sizeof(text), "%s%s{\"op\":\"mac\",\"into\":\"H\",\"j\":1,\"m\":0,\"b\":0,\"carry\":true}\n"
		 "{\"op\":\"load\",\"kind\":\"Q\",\"i\":1,\"a\":0}\n"
		 "{\"op\":\"mac\",\"into\":\"N\",\"i\":1,\"m\":0,\"b\":0,\"fuse\":true}\n",
		 header, row0);
	write_text(path, text);
	EXPECT_VIOLATION(path, 0, PS_RULE_PARENT_INCOMPLETE,
			 "c.jsonl:7: mac into N[1,0]: H[1,0,0] is incomplete (1 of 2 in-edges aggregated)");
	/* the syntax */
	snprintf(text, sizeof(text), "%s{\"op\":\"mac\",\"into\":\"H\",\"j\":0,\"m\":0,\"b\":0,\"carry\":true}\n", header);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "c.jsonl:2: HC row j = 0 is not in the causal DAG: the carry HC[j,m,b] exists for j >= 1 (MODEL.md section 7)");
	snprintf(text, sizeof(text), "%s{\"op\":\"mac\",\"into\":\"H\",\"j\":1,\"m\":0,\"b\":0,\"carry\":1}\n", header);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "c.jsonl:2: \"carry\" must be true or false");
	snprintf(text, sizeof(text), "%s{\"op\":\"mac\",\"into\":\"N\",\"i\":1,\"m\":0,\"b\":0,\"carry\":true}\n", header);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "c.jsonl:2: unknown key \"carry\" in this operation");
	snprintf(text, sizeof(text), "%s{\"op\":\"mac\",\"into\":\"H\",\"j\":1,\"m\":0,\"b\":0,\"carry\":true,\"fuse\":true}\n", header);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "c.jsonl:2: \"fuse\" and \"carry\" do not go together: the carry's parent is the previous state, a sum, with nothing to regenerate");
	snprintf(text, sizeof(text), "%s{\"op\":\"load\",\"kind\":\"H\",\"m\":0,\"b\":0}\n", header);
	write_text(path, text);
	EXPECT_INPUT_ERROR(path, "c.jsonl:2: a load of H needs coordinate \"j\"");
	/* without "causal" the state has no row, and nothing carries */
	write_text(path, "{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"approx-attention\",\"n\":2,\"d\":1,\"g\":1},\"M\":9}\n"
		   "{\"op\":\"mac\",\"into\":\"H\",\"j\":1,\"m\":0,\"b\":0,\"carry\":true}\n");
	EXPECT_INPUT_ERROR(path, "c.jsonl:2: unknown key \"carry\" in this operation");
	drop_tmp(path);
}
END_TEST

START_TEST(test_failed_write_leaves_nothing)
{
	struct ps_attention att;
	struct ps_trace_writer w;
	struct ps_error err;
	char path[256];

	test_attention(&att, 2, 1, 1, 1);
	ck_assert_int_eq(ps_trace_open(&w, "/nonexistent-dir/t.jsonl", &att, NULL, 9, "x",
				       NULL, NULL, false, &err), PS_EIO);
	ck_assert_str_eq(err.msg, "cannot write the trace '/nonexistent-dir/t.jsonl': No such file or directory");
	/* closed without keeping: neither the file nor its temporary remain */
	tmp_path(path, sizeof(path), "gone.jsonl");
	ck_assert_int_eq(ps_trace_open(&w, path, &att, NULL, 9, "x", NULL, NULL, false, &err), 0);
	ck_assert_int_eq(ps_trace_close(&w, NULL, false, &err), 0);
	ck_assert_int_ne(access(path, F_OK), 0);
	ps_attention_free(&att);
	/* the directory held only this trace: removing it fails otherwise */
	drop_tmp(path);
}
END_TEST

/* ---- the fast line reader against jansson: a differential fuzz ------- */

static uint64_t fuzz_state = 0x9e3779b97f4a7c15u;

static uint64_t fuzz_next(void)
{
	/* xorshift64: the same sequence on every run */
	fuzz_state ^= fuzz_state << 13;
	fuzz_state ^= fuzz_state >> 7;
	fuzz_state ^= fuzz_state << 17;
	return fuzz_state;
}

static size_t fuzz_below(size_t n)
{
	return (size_t)(fuzz_next() % n);
}

#define FUZZ_LINE 256

/* Replaces cut bytes of line at at by insert, within FUZZ_LINE bytes. */
static void splice(char *line, size_t at, size_t cut, const char *insert)
{
	char out[2 * FUZZ_LINE];
	size_t len = strlen(line), ins = strlen(insert);

	memcpy(out, line, at);
	memcpy(out + at, insert, ins);
	memcpy(out + at + ins, line + at + cut, len - at - cut + 1);
	out[FUZZ_LINE - 1] = '\0';
	memcpy(line, out, FUZZ_LINE);
}

/* One random change to a line: a byte replaced, inserted or removed, a
 * number replaced by an edge case, a member repeated or added, white
 * space between tokens. */
static void mutate(char *line)
{
	static const char bytes[] = "{}[]\":, \t\r-+.0123456789eEaAbBijmnotrufslKQVUHNPSOx_\\\xc3";
	static const char *const numbers[] = {
		"0", "00", "-0", "-1", "1e3", "1.0", "007", "999999999999999999",
		"1000000000000000000", "9223372036854775807", "9223372036854775808",
		"18446744073709551616", "[0]", "[0,0]", "{\"lo\":0,\"hi\":1}", "true",
		"null", "\"0\"", "1 ", " 1",
	};
	static const char *const members[] = {
		"\"fuse\":true,", "\"fuse\":false,", "\"x\":1,", "\"node\":1,",
		"\"from\":0,", "\"i\":0,", "\"op\":\"end\",", "\"kind\":\"Q\",",
	};
	size_t len = strlen(line), at = len ? fuzz_below(len) : 0;
	char one[2] = { bytes[fuzz_below(sizeof(bytes) - 1)], '\0' };
	const char *digit, *comma = strchr(line, ',');

	switch (fuzz_below(6)) {
	case 0:
		splice(line, at, len ? 1 : 0, one);
		break;
	case 1:
		splice(line, at, 0, one);
		break;
	case 2:
		splice(line, at, len ? 1 : 0, "");
		break;
	case 3:
		digit = strpbrk(line + at, "0123456789");
		if (digit)
			splice(line, (size_t)(digit - line), strspn(digit, "0123456789"),
			       numbers[fuzz_below(sizeof(numbers) / sizeof(numbers[0]))]);
		break;
	case 4:
		if (comma && line[0] == '{' && fuzz_below(2)) {
			char member[FUZZ_LINE];

			memcpy(member, line + 1, (size_t)(comma - line));
			member[comma - line] = '\0';
			splice(line, 1, 0, member); /* the first member twice */
		} else if (line[0] == '{') {
			splice(line, 1, 0, members[fuzz_below(sizeof(members) / sizeof(members[0]))]);
		}
		break;
	default:
		if (at && strchr("{}:,", line[at - 1]))
			splice(line, at, 0, (const char *[]){ " ", "\t", "\r" }[fuzz_below(3)]);
		break;
	}
}

/*
 * Traces made of a valid trace's first lines, some of them mutated, are
 * replayed with the fast reader and with jansson alone: the same status,
 * message and line, verdict, violation and counts, every time.
 */
static void fuzz_lines(char (*lines_in)[FUZZ_LINE], int count,
		       const struct ps_explicit *xdag, int rounds)
{
	static char text[64 * FUZZ_LINE + 1];
	uint64_t fast = 0;

	for (int round = 0; round < rounds; round++) {
		int keep = 1 + (int)fuzz_below((size_t)count), changes = 1 + (int)fuzz_below(3);
		char lines_out[64][FUZZ_LINE];
		struct ps_replay a, b;
		struct ps_error a_err, b_err;
		size_t len = 0;
		int a_rc, b_rc;
		FILE *f;

		for (int k = 0; k < keep; k++)
			memcpy(lines_out[k], lines_in[k], FUZZ_LINE);
		for (int c = 0; c < changes && keep > 1; c++)
			mutate(lines_out[1 + fuzz_below((size_t)keep - 1)]);
		for (int k = 0; k < keep; k++) {
			size_t l = strlen(lines_out[k]);

			memcpy(text + len, lines_out[k], l);
			len += l;
			text[len++] = '\n';
		}
		for (int pass = 0; pass < 2; pass++) {
			bool was = ps_trace_fast_lines(pass == 0);
			struct ps_replay *rep = pass ? &b : &a;
			struct ps_error *err = pass ? &b_err : &a_err;
			int *rc = pass ? &b_rc : &a_rc;

			f = fmemopen(text, len, "r");
			ck_assert_ptr_nonnull(f);
			ps_error_clear(err);
			*rc = ps_trace_replay(f, "f.jsonl", 0, NULL, xdag, false, rep, err);
			fclose(f);
			ps_trace_fast_lines(was);
		}
		text[len] = '\0';
		ck_assert_msg(a_rc == b_rc, "status %d against %d on\n%s", a_rc, b_rc, text);
		expect_same_replay(text, a_rc, &a, &a_err, b_rc, &b, &b_err);
		fast += a.fast_lines;
		ps_replay_free(&a);
		ps_replay_free(&b);
	}
	/* the fast reader took part: most lines are left as they were */
	ck_assert_uint_gt(fast, (uint64_t)rounds);
}

START_TEST(test_fast_lines_against_jansson)
{
	static char pool[64][FUZZ_LINE];
	static const char *const explicit_lines[] = {
		"{\"format\":\"pebblesim-trace\",\"version\":1,\"dag\":{\"kind\":\"explicit\",\"vertices\":5,\"edges\":4},\"M\":5}",
		"{\"op\":\"load\",\"node\":0}", "{\"op\":\"load\",\"node\":1}",
		"{\"op\":\"compute\",\"node\":2}", "{\"op\":\"delete\",\"node\":0}",
		"{\"op\":\"load\",\"node\":3}", "{ \"op\" : \"compute\" , \"node\" : 4 }",
		"{\"op\":\"save\",\"node\":4}", "{\"op\":\"mac\",\"into\":4,\"from\":3}",
		"{\"op\":\"end\",\"loads\":3,\"saves\":1}",
	};
	static char dag_text[] = "0 2\n1 2\n2 4\n3 4\n";
	struct ps_attention att;
	struct ps_trace_writer w;
	struct ps_problem pb;
	struct ps_explicit x;
	struct ps_report run;
	struct ps_plan plan;
	struct ps_error err;
	char path[256];
	int count = 0;
	FILE *f;

	/* the elementary trace of keylemma on the walk-through's DAG */
	test_attention(&att, 2, 1, 1, 1);
	pb = (struct ps_problem){ .att = &att, .M = 9 };
	tmp_path(path, sizeof(path), "fuzz.jsonl");
	ck_assert_int_eq(ps_strategy_plan(ps_strategy_find("keylemma"), &pb, &plan, &err), 0);
	ck_assert_int_eq(ps_trace_open(&w, path, &att, NULL, 9, "keylemma", &plan, NULL,
				       true, &err), 0);
	ck_assert_int_eq(ps_run(&pb, ps_strategy_find("keylemma"), &w.sink, &run, &err), 0);
	ck_assert_int_eq(ps_trace_close(&w, &run.counts, true, &err), 0);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (count < 64 && fgets(pool[count], FUZZ_LINE, f)) {
		pool[count][strcspn(pool[count], "\n")] = '\0';
		count++;
	}
	fclose(f);
	drop_tmp(path);
	ck_assert_int_gt(count, 20);
	fuzz_lines(pool, count, NULL, 3000);
	/* the same on an explicit DAG: lines by vertex id */
	count = 0;
	for (size_t k = 0; k < sizeof(explicit_lines) / sizeof(explicit_lines[0]); k++)
		snprintf(pool[count++], FUZZ_LINE, "%s", explicit_lines[k]);
	f = fmemopen(dag_text, sizeof(dag_text) - 1, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ps_explicit_read_stream(&x, f, "x.txt", false, &err), 0);
	fclose(f);
	fuzz_lines(pool, count, &x, 1500);
	ps_explicit_free(&x);
	ps_attention_free(&att);
}
END_TEST

Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("trace");

	tcase_set_timeout(tc, PS_TEST_TIMEOUT);
	tcase_add_test(tc, test_tiny_is_valid_and_optimal);
	tcase_add_test(tc, test_mutations);
	tcase_add_test(tc, test_incomplete_h);
	tcase_add_test(tc, test_input_errors);
	tcase_add_test(tc, test_header_must_match);
	tcase_add_test(tc, test_round_trips);
	tcase_add_test(tc, test_causal_traces);
	tcase_add_test(tc, test_failed_write_leaves_nothing);
	tcase_add_test(tc, test_fast_lines_against_jansson);
	suite_add_tcase(s, tc);
	return s;
}
