/*
 * rowfused: a complete strategy in a plugin (docs/EXTENDING.md).
 *
 * The straightforward pebbling, one row at a time, every U entry streamed
 * through one slot by fused macs (MODEL.md section 3, "fuse"):
 *
 *   for j:  load K[j,:] and V[j,:]
 *           for m:  H[m,B] += U2[j,m] [V[j,:] 1]  (loaded after row 0, saved)
 *   for i:  load Q[i,:]
 *           for m:  load H[m,B];  N[i,B] += U1[i,m] H[m,B];  delete H[m,B]
 *           A[i,:] = N[i,:] / N[i,d], saved (or N[i,:] saved, unnormalised)
 *
 * Its cost model counts those loads and saves exactly; it claims no
 * bound of the paper. Build and run it:
 *
 *   cc -shared -fPIC -o rowfused.so rowfused.c $(pkg-config --cflags --libs pebblesim)
 *   pebblesim --plugin ./rowfused.so --strategy rowfused -n 64 -d 4 -g 2 -M 64
 */
#include <stdio.h>

#include <pebblesim/strategy.h>

/* One set operation: a kind and its coordinate sets. */
static int emit(struct ps_sink *sink, enum ps_opcode code, enum ps_kind kind,
		bool fuse, struct ps_coordset c0, struct ps_coordset c1,
		struct ps_coordset c2, struct ps_error *err)
{
	struct ps_op op = { .code = code, .kind = kind, .fuse = fuse, .c = { c0, c1, c2 } };

	return ps_sink_emit(sink, &op, err);
}

/* The operation of a kind of two coordinates. */
static int emit2(struct ps_sink *sink, enum ps_opcode code, enum ps_kind kind,
		 struct ps_coordset c0, struct ps_coordset c1, struct ps_error *err)
{
	return emit(sink, code, kind, false, c0, c1, ps_range(0, 0), err);
}

/*
 * Phase H holds K[j,:], V[j,:], H[m,B], U2[j,m] and the product:
 * 2d + |B| + 2; phase N holds Q[i,:], N[i,B], H[m,B], U1[i,m] and the
 * product: d + 2|B| + 2, the larger since |B| >= d.
 */
static uint64_t rowfused_min_memory(const struct ps_attention *att)
{
	return att->d + 2 * att->nb + 2;
}

static int rowfused_plan(const struct ps_problem *pb, struct ps_plan *plan,
			 struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	uint64_t n = att->n, d = att->d, cells = att->r * att->nb;
	struct ps_array_io by_array[PS_ARRAY_MAX] = { { 0, 0 } };

	if (pb->M < rowfused_min_memory(att))
		return ps_error_set(err, PS_EINPUT, "rowfused needs M >= d + 2|B| + 2 = %llu",
				    (unsigned long long)rowfused_min_memory(att));
	snprintf(plan->summary, sizeof(plan->summary),
		 "rows one at a time: H's %llu cells re-read for each key row after the first, and once for each query row",
		 (unsigned long long)cells);
	/* by array, numbered by kind (docs/EXTENDING.md, by_array): K and V
	 * rows, H after row 0; Q rows and H for each query row; H after each
	 * key row, and the outputs. ps_plan_predicted sets the totals. */
	by_array[PS_KIND_K].loads = n * d;
	by_array[PS_KIND_V].loads = n * d;
	by_array[PS_KIND_Q].loads = n * d;
	by_array[PS_KIND_H].loads = (n - 1) * cells + n * cells;
	by_array[PS_KIND_H].saves = n * cells;
	by_array[att->normalize ? PS_KIND_A : PS_KIND_N].saves = n * d;
	ps_plan_predicted(plan, by_array);
	plan->peak_red = rowfused_min_memory(att);
	return PS_OK;
}

static int rowfused_run(const struct ps_problem *pb, struct ps_sink *sink,
			struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct ps_coordset feats = ps_range(0, att->d), cols = ps_range(0, att->nb);
	int rc;

	for (uint64_t j = 0; j < att->n; j++) {
		if ((rc = emit2(sink, PS_OP_LOAD, PS_KIND_K, ps_one(j), feats, err)) ||
		    (rc = emit2(sink, PS_OP_LOAD, PS_KIND_V, ps_one(j), feats, err)))
			return rc;
		for (uint64_t m = 0; m < att->r; m++)
			if ((j > 0 && (rc = emit2(sink, PS_OP_LOAD, PS_KIND_H, ps_one(m), cols, err))) ||
			    (rc = emit(sink, PS_OP_MAC, PS_KIND_H, true, ps_one(j), ps_one(m), cols, err)) ||
			    (rc = emit2(sink, PS_OP_SAVE, PS_KIND_H, ps_one(m), cols, err)) ||
			    (rc = emit2(sink, PS_OP_DELETE, PS_KIND_H, ps_one(m), cols, err)))
				return rc;
		if ((rc = emit2(sink, PS_OP_DELETE, PS_KIND_K, ps_one(j), feats, err)) ||
		    (rc = emit2(sink, PS_OP_DELETE, PS_KIND_V, ps_one(j), feats, err)))
			return rc;
	}
	for (uint64_t i = 0; i < att->n; i++) {
		enum ps_kind out = att->normalize ? PS_KIND_A : PS_KIND_N;

		if ((rc = emit2(sink, PS_OP_LOAD, PS_KIND_Q, ps_one(i), feats, err)))
			return rc;
		for (uint64_t m = 0; m < att->r; m++)
			if ((rc = emit2(sink, PS_OP_LOAD, PS_KIND_H, ps_one(m), cols, err)) ||
			    (rc = emit(sink, PS_OP_MAC, PS_KIND_N, true, ps_one(i), ps_one(m), cols, err)) ||
			    (rc = emit2(sink, PS_OP_DELETE, PS_KIND_H, ps_one(m), cols, err)))
				return rc;
		if ((att->normalize &&
		     (rc = emit2(sink, PS_OP_COMPUTE, PS_KIND_A, ps_one(i), feats, err))) ||
		    (rc = emit2(sink, PS_OP_SAVE, out, ps_one(i), feats, err)) ||
		    (att->normalize &&
		     (rc = emit2(sink, PS_OP_DELETE, PS_KIND_A, ps_one(i), feats, err))) ||
		    (rc = emit2(sink, PS_OP_DELETE, PS_KIND_N, ps_one(i), cols, err)) ||
		    (rc = emit2(sink, PS_OP_DELETE, PS_KIND_Q, ps_one(i), feats, err)))
			return rc;
	}
	return PS_OK;
}

static const struct ps_strategy rowfused = {
	.version = PS_STRATEGY_VERSION,
	.name = "rowfused",
	.section = "beyond the paper: a plugin (examples/plugin/rowfused.c)",
	.summary = "row by row, U streamed through fused macs; H re-read for every row",
	.min_memory = rowfused_min_memory,
	.plan = rowfused_plan,
	.run = rowfused_run,
	.flags = PS_STRATEGY_BEYOND, /* its own cost model, no theorem's bound */
	.takes = 0,
};

static const struct ps_strategy *const strategies[] = { &rowfused };

/* The one symbol pebblesim reads (PS_PLUGIN_SYMBOL). */
const struct ps_strategy *const *ps_plugin_strategies(unsigned host_version, size_t *count)
{
	/* a pebblesim older than this header reads version 1 structs only,
	 * and refuses ours by name: offer it nothing instead */
	if (host_version < PS_STRATEGY_VERSION) {
		*count = 0;
		return NULL;
	}
	*count = sizeof(strategies) / sizeof(strategies[0]);
	return strategies;
}
