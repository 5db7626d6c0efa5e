/*
 * libFuzzer target: the trace reader and validator (src/trace.c) on any
 * bytes, as `pebblesim validate` reads them: once on its own and once
 * beside a small explicit DAG (for traces whose header says "explicit").
 */
#include <stdint.h>
#include <stdio.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ps_replay rep;
	struct ps_error err;
	FILE *f;

	if (!ready)
		setup();
	if (!size) /* fmemopen wants a size; an empty trace is a unit test */
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 && ready != 1)
			break;
		f = fmemopen((void *)data, size, "r");
		if (!f)
			return 0;
		ps_error_clear(&err);
		ps_trace_replay(f, "fuzz.jsonl", 0, NULL, pass ? &xdag : NULL,
				size % 2 == 0, &rep, &err);
		ps_replay_free(&rep);
		fclose(f);
	}
	return 0;
}
