/*
 * libFuzzer target: the trace reader and validator (src/trace.c) on any
 * bytes, as `pebblesim validate` reads them: once on its own and once
 * beside a small explicit DAG (for traces whose header says "explicit").
 * Each replay runs twice, with the fast line reader and with jansson
 * alone, and stops the fuzzer when the two disagree.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pebblesim/explicit.h"
#include "pebblesim/limits.h"
#include "pebblesim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a sum of two products of inputs: every role, every move */
static const char dag_text[] = "0 2\n1 2\n2 4\n3 4\n";
static struct ps_explicit xdag;
static int ready;

static void setup(void)
{
	static char text[sizeof(dag_text)];
	struct ps_error err;
	FILE *f;

	ready = 1;
	/* a header may name any DAG: far below libFuzzer's 2 GiB */
	ps_memory_limit_cap(UINT64_C(8) << 20);
	snprintf(text, sizeof(text), "%s", dag_text);
	f = fmemopen(text, sizeof(text) - 1, "r");
	if (!f || ps_explicit_read_stream(&xdag, f, "fuzz.txt", false, &err))
		ready = 2;
	if (f)
		fclose(f);
}

/* One replay, with the fast line reader on or off. */
static int replay(const uint8_t *data, size_t size, bool with_dag, bool fast,
		  struct ps_replay *rep, struct ps_error *err)
{
	FILE *f = fmemopen((void *)data, size, "r");
	bool was;
	int rc;

	if (!f)
		return -1000;
	was = ps_trace_fast_lines(fast);
	ps_error_clear(err);
	rc = ps_trace_replay(f, "fuzz.jsonl", 0, NULL, with_dag ? &xdag : NULL,
			     size % 2 == 0, rep, err);
	ps_trace_fast_lines(was);
	fclose(f);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready)
		setup();
	if (!size) /* fmemopen wants a size; an empty trace is a unit test */
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		struct ps_replay fast, slow;
		struct ps_error fast_err, slow_err;
		int fast_rc, slow_rc;

		if (pass == 1 && ready != 1)
			break;
		fast_rc = replay(data, size, pass == 1, true, &fast, &fast_err);
		slow_rc = replay(data, size, pass == 1, false, &slow, &slow_err);
		if (fast_rc == -1000 || slow_rc == -1000)
			return 0;
		if (fast_rc != slow_rc ||
		    (fast_rc && strcmp(fast_err.msg, slow_err.msg)) ||
		    (!fast_rc && (fast.valid != slow.valid ||
				  strcmp(fast.violation, slow.violation) ||
				  memcmp(&fast.counts, &slow.counts, sizeof(fast.counts)) ||
				  fast.lines != slow.lines || fast.ops != slow.ops)))
			__builtin_trap(); /* the two line readers disagree */
		ps_replay_free(&fast);
		ps_replay_free(&slow);
	}
	return 0;
}
