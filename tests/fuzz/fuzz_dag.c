/*
 * libFuzzer target: the DAG file readers (dags/explicit.c), GraphML, edge
 * list, HyperdagDB and Matrix Market, and the runs of lru and belady on
 * what they read, validated in the engine.
 *
 * Input: one byte of options, then the file.
 *   bit 0: GraphML (else bits 6-7: 0 an edge list, 1 HyperdagDB, 2 Matrix
 *   Market, 3 HyperdagDB with --ignore-weights); bit 1: belady (else lru);
 *   bit 2: order dfs (else topo); bits 3-5: M above the least M.
 * Seeds in tests/fuzz/dag, words in tests/fuzz/dag.dict.
 */
#include <stdint.h>
#include <stdio.h>

#include "pebblesim/explicit.h"
#include "pebblesim/limits.h"
#include "pebblesim/run.h"
#include "pebblesim/strategy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	const struct ps_strategy *s;
	struct ps_explicit x;
	struct ps_problem pb = { 0 };
	struct ps_report rep;
	struct ps_error err;
	uint64_t min_m;
	FILE *f;
	int rc;

	if (!ready) {
		ready = 1;
		ps_memory_limit_cap(UINT64_C(8) << 20);
	}
	if (size < 2)
		return 0;
	f = fmemopen((void *)(data + 1), size - 1, "r");
	if (!f)
		return 0;
	ps_error_clear(&err);
	{
		static const char *const formats[] = { "edgelist", "hdag", "mtx", "hdag" };
		unsigned which = data[0] >> 6;

		rc = ps_explicit_read_stream_as(&x, f, "fuzz", data[0] & 1 ? "graphml" : formats[which],
						which == 3 ? PS_EXPLICIT_IGNORE_WEIGHTS : 0, &err);
	}
	fclose(f);
	if (rc)
		return 0;
	s = ps_strategy_find(data[0] & 2 ? "belady" : "lru");
	pb.xdag = &x;
	pb.order = data[0] & 4 ? "dfs" : "topo";
	min_m = ps_strategy_min_memory_explicit(s, &pb);
	pb.M = min_m + ((data[0] >> 3) & 7);
	ps_report_init_explicit(&rep, &x, "fuzz", pb.M);
	if (ps_run(&pb, s, NULL, &rep, &err) == 0 && !rep.valid) {
		/* lru and belady are valid at any M from their least one */
		fprintf(stderr, "invalid sequence at M = %llu: %s\n",
			(unsigned long long)pb.M, rep.violation);
		__builtin_trap();
	}
	ps_explicit_free(&x);
	return 0;
}
