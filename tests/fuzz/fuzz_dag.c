/*
 * libFuzzer target: the DAG file readers (dags/explicit.c), GraphML and
 * edge list, and the runs of lru and belady on what they read, validated
 * in the engine.
 *
 * Input: one byte of options, then the file.
 *   bit 0: GraphML (else an edge list); bit 1: belady (else lru);
 *   bit 2: order dfs (else topo); bits 3-7: M above the least M.
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
	rc = ps_explicit_read_stream(&x, f, "fuzz", data[0] & 1, &err);
	fclose(f);
	if (rc)
		return 0;
	s = ps_strategy_find(data[0] & 2 ? "belady" : "lru");
	pb.xdag = &x;
	pb.order = data[0] & 4 ? "dfs" : "topo";
	min_m = ps_strategy_min_memory_explicit(s, &pb);
	pb.M = min_m + (data[0] >> 3);
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
