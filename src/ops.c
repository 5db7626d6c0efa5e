/*
 * Expansion of set operations into elementary moves (MODEL.md section 3).
 *
 * The expander knows the attention DAG's arithmetic, so it hands the
 * engine moves with parents and edges already resolved; the engine's
 * verdicts and messages are the same as for moves resolved through the DAG.
 */
#include "pebblesim/ops.h"

#include <string.h>

#include "ops_block.h"

static const char *const opcode_names[] = {
	[PS_OP_LOAD] = "load",
	[PS_OP_SAVE] = "save",
	[PS_OP_DELETE] = "delete",
	[PS_OP_COMPUTE] = "compute",
	[PS_OP_MAC] = "mac",
};

const char *ps_opcode_name(enum ps_opcode code)
{
	return opcode_names[code];
}

enum ps_move ps_opcode_move(enum ps_opcode code)
{
	static const enum ps_move moves[] = {
		[PS_OP_LOAD] = PS_MOVE_LOAD,
		[PS_OP_SAVE] = PS_MOVE_SAVE,
		[PS_OP_DELETE] = PS_MOVE_DELETE,
		[PS_OP_COMPUTE] = PS_MOVE_COMPUTE,
		[PS_OP_MAC] = PS_MOVE_MAC,
	};

	return moves[code];
}

/* The kind whose coordinates the operation carries. */
static enum ps_kind coord_kind(const struct ps_op *op)
{
	if (op->code == PS_OP_MAC)
		return op->kind == PS_KIND_H ? PS_KIND_P2 : PS_KIND_P1;
	return op->kind;
}

uint64_t ps_op_moves(const struct ps_op *op)
{
	unsigned arity;
	uint64_t outer = 1, inner;

	if (op->by_id)
		return 1;
	arity = ps_kinds[coord_kind(op)].arity;
	for (unsigned p = 0; p + 1 < arity; p++)
		outer *= ps_coordset_size(&op->c[p]);
	inner = ps_coordset_size(&op->c[arity - 1]);
	/* a fused mac adds a compute and a delete around each (row, m), even
	 * around no columns at all (MODEL.md section 3, read as written) */
	if (op->fuse)
		inner += 2;
	return outer * inner;
}

int ps_op_check(const struct ps_attention *att, const struct ps_op *op,
		struct ps_error *err)
{
	enum ps_kind k;

	if (op->by_id)
		return att && op->node >= att->dag.node_count ?
			ps_error_set(err, PS_EINPUT, "node %llu is not in the DAG (it has %llu nodes)",
				     (unsigned long long)op->node,
				     (unsigned long long)att->dag.node_count) : PS_OK;
	if ((unsigned)op->kind >= PS_KIND_COUNT)
		return ps_error_set(err, PS_EINPUT, "unknown kind");
	if (op->code == PS_OP_MAC && op->kind != PS_KIND_H &&
	    op->kind != PS_KIND_N)
		return ps_error_set(err, PS_EINPUT,
				    "a mac aggregates into H or N, not into %s",
				    ps_kinds[op->kind].name);
	if (op->fuse && op->code != PS_OP_MAC)
		return ps_error_set(err, PS_EINPUT,
				    "\"fuse\" belongs to a mac, not to a %s",
				    ps_opcode_name(op->code));
	if (op->kind == PS_KIND_A && !att->normalize)
		return ps_error_set(err, PS_EINPUT,
				    "there is no A without normalisation");
	k = coord_kind(op);
	for (unsigned p = 0; p < ps_kinds[k].arity; p++) {
		const struct ps_coordset *s = &op->c[p];
		uint64_t extent = ps_attention_extent(att, k, p);
		const char *letter = ps_coord_letter(ps_kinds[k].coord[p]);

		if (s->list) {
			for (size_t q = 0; q < s->len; q++)
				if (s->list[q] >= extent)
					return ps_error_set(err, PS_EINPUT,
							    "%s coordinate %s = %llu is out of range [0, %llu)",
							    ps_kinds[k].name, letter,
							    (unsigned long long)s->list[q],
							    (unsigned long long)extent);
		} else if (s->hi == s->lo + 1 && s->lo >= extent) {
			return ps_error_set(err, PS_EINPUT,
					    "%s coordinate %s = %llu is out of range [0, %llu)",
					    ps_kinds[k].name, letter,
					    (unsigned long long)s->lo,
					    (unsigned long long)extent);
		} else if (s->lo > s->hi || s->hi > extent) {
			return ps_error_set(err, PS_EINPUT,
					    "%s coordinate %s range [%llu, %llu) is not within [0, %llu)",
					    ps_kinds[k].name, letter,
					    (unsigned long long)s->lo,
					    (unsigned long long)s->hi,
					    (unsigned long long)extent);
		}
	}
	return PS_OK;
}

/* compute of U1[i,m], U2[j,m] or A[i,b], with parents by arithmetic */
static int compute_node(const struct ps_attention *att, struct ps_engine *e,
			enum ps_kind k, uint64_t c0, uint64_t c1)
{
	ps_node parents[64];
	ps_node v = ps_attention_id2(att, k, c0, c1);
	uint64_t count = 0;

	switch (k) {
	case PS_KIND_U1:
	case PS_KIND_U2: {
		enum ps_kind from = k == PS_KIND_U1 ? PS_KIND_Q : PS_KIND_K;
		const uint32_t *sup = ps_monomial_support(&att->mono, c1);

		count = att->mono.support_size[c1];
		for (uint64_t q = 0; q < count; q++)
			parents[q] = ps_attention_id2(att, from, c0, sup[q]);
		break;
	}
	case PS_KIND_A:
		parents[0] = ps_attention_id2(att, PS_KIND_N, c0, c1);
		parents[1] = ps_attention_id2(att, PS_KIND_N, c0, att->d);
		count = 2;
		break;
	default:
		/* inputs, sums, products: the engine names the broken rule */
		return ps_engine_compute(e, v);
	}
	return ps_engine_compute_plain(e, v, parents, count);
}

static int apply_mac(const struct ps_attention *att, struct ps_engine *e,
		     const struct ps_op *op)
{
	const bool into_h = op->kind == PS_KIND_H;
	const enum ps_kind plain = into_h ? PS_KIND_U2 : PS_KIND_U1;
	const uint64_t n0 = ps_coordset_size(&op->c[0]);
	const uint64_t n1 = ps_coordset_size(&op->c[1]);
	const uint64_t n2 = ps_coordset_size(&op->c[2]);
	struct ps_product p;

	p.transient = 1;
	p.parent_is_sum[0] = false;
	p.parent_is_sum[1] = !into_h;
	p.in_degree = into_h ? att->n : att->r;
	for (uint64_t x0 = 0; x0 < n0; x0++) {
		/* (j or i) */
		const uint64_t row = ps_coordset_at(&op->c[0], x0);

		for (uint64_t x1 = 0; x1 < n1; x1++) {
			const uint64_t m = ps_coordset_at(&op->c[1], x1);
			const ps_node u = ps_attention_id2(att, plain, row, m);

			if (op->fuse && compute_node(att, e, plain, row, m))
				return PS_EINVALID;
			for (uint64_t x2 = 0; x2 < n2; x2++) {
				const uint64_t b = ps_coordset_at(&op->c[2], x2);

				p.parent[0] = u;
				if (into_h) {
					p.id = ps_attention_id3(att, PS_KIND_P2, row, m, b);
					p.parent_count = b < att->d ? 2 : 1;
					p.parent[1] = b < att->d ?
						ps_attention_id2(att, PS_KIND_V, row, b) : 0;
					p.sum = ps_attention_id2(att, PS_KIND_H, m, b);
					p.edge = row;
					p.edge_bit = ps_attention_h_edge(att, m, b, row);
				} else {
					p.id = ps_attention_id3(att, PS_KIND_P1, row, m, b);
					p.parent_count = 2;
					p.parent[1] = ps_attention_id2(att, PS_KIND_H, m, b);
					p.sum = ps_attention_id2(att, PS_KIND_N, row, b);
					p.edge = m;
					p.edge_bit = ps_attention_n_edge(att, row, b, m);
				}
				p.sum_slot = p.sum - att->base[PS_KIND_H];
				if (ps_engine_mac_product(e, &p))
					return PS_EINVALID;
			}
			if (op->fuse && ps_engine_delete(e, u))
				return PS_EINVALID;
		}
	}
	return PS_OK;
}

int ps_op_apply(const struct ps_attention *att, struct ps_engine *e,
		const struct ps_op *op, struct ps_error *err)
{
	enum ps_kind k = op->kind;
	uint64_t n0, n1, n2;
	int rc;

	if (op->by_id)
		return ps_engine_apply(e, ps_opcode_move(op->code), op->node);
	if (!att)
		return ps_error_set(err, PS_EINPUT,
				    "an operation by kind and coordinates needs the attention DAG");
	rc = ps_op_check(att, op, err);
	if (rc)
		return rc;
	/* the block path first: it applies the operation only when every
	 * move would succeed, and otherwise leaves it to the moves below */
	if (!e->element_only &&
	    (op->code == PS_OP_MAC ? ps_block_mac(att, e, op) :
	     op->code != PS_OP_COMPUTE ? ps_block_move(att, e, op) :
	     PS_BLOCK_DECLINED) == PS_BLOCK_APPLIED)
		return PS_OK;
	if (op->code == PS_OP_MAC)
		return apply_mac(att, e, op);

	n0 = ps_coordset_size(&op->c[0]);
	n1 = ps_coordset_size(&op->c[1]);
	n2 = ps_kinds[k].arity == 3 ? ps_coordset_size(&op->c[2]) : 1;
	for (uint64_t x0 = 0; x0 < n0; x0++) {
		uint64_t c[3];

		c[0] = ps_coordset_at(&op->c[0], x0);
		for (uint64_t x1 = 0; x1 < n1; x1++) {
			c[1] = ps_coordset_at(&op->c[1], x1);
			for (uint64_t x2 = 0; x2 < n2; x2++) {
				ps_node v;

				if (ps_kinds[k].arity == 3)
					c[2] = ps_coordset_at(&op->c[2], x2);
				v = ps_attention_id(att, k, c);
				switch (op->code) {
				case PS_OP_LOAD:
					rc = ps_engine_load(e, v);
					break;
				case PS_OP_SAVE:
					rc = ps_engine_save(e, v);
					break;
				case PS_OP_DELETE:
					rc = ps_engine_delete(e, v);
					break;
				case PS_OP_COMPUTE:
					rc = ps_kinds[k].arity == 3 ?
						ps_engine_compute(e, v) :
						compute_node(att, e, k, c[0], c[1]);
					break;
				case PS_OP_MAC:
					break;
				}
				if (rc)
					return rc;
			}
		}
	}
	return PS_OK;
}

int ps_op_foreach(const struct ps_attention *att, const struct ps_op *op,
		  ps_move_fn fn, void *ctx)
{
	if (op->by_id)
		return fn(ctx, ps_opcode_move(op->code), op->node);
	const enum ps_kind k = coord_kind(op);
	const bool three = ps_kinds[k].arity == 3;
	const uint64_t n0 = ps_coordset_size(&op->c[0]);
	const uint64_t n1 = ps_coordset_size(&op->c[1]);
	const uint64_t n2 = three ? ps_coordset_size(&op->c[2]) : 1;
	const enum ps_kind plain = op->kind == PS_KIND_H ? PS_KIND_U2 : PS_KIND_U1;
	int rc;

	for (uint64_t x0 = 0; x0 < n0; x0++) {
		uint64_t c[3];

		c[0] = ps_coordset_at(&op->c[0], x0);
		for (uint64_t x1 = 0; x1 < n1; x1++) {
			const bool fused = op->fuse;
			ps_node u;

			c[1] = ps_coordset_at(&op->c[1], x1);
			u = fused ? ps_attention_id2(att, plain, c[0], c[1]) : 0;
			if (fused && (rc = fn(ctx, PS_MOVE_COMPUTE, u)))
				return rc;
			for (uint64_t x2 = 0; x2 < n2; x2++) {
				if (three)
					c[2] = ps_coordset_at(&op->c[2], x2);
				rc = fn(ctx, ps_opcode_move(op->code),
					ps_attention_id(att, k, c));
				if (rc)
					return rc;
			}
			if (fused && (rc = fn(ctx, PS_MOVE_DELETE, u)))
				return rc;
		}
	}
	return PS_OK;
}

int ps_engine_apply(struct ps_engine *e, enum ps_move move, ps_node v)
{
	switch (move) {
	case PS_MOVE_LOAD:
		return ps_engine_load(e, v);
	case PS_MOVE_SAVE:
		return ps_engine_save(e, v);
	case PS_MOVE_DELETE:
		return ps_engine_delete(e, v);
	case PS_MOVE_COMPUTE:
		return ps_engine_compute(e, v);
	case PS_MOVE_MAC:
	case PS_MOVE_MAC_PRODUCT:
		return ps_engine_mac(e, v);
	case PS_MOVE_END:
		return ps_engine_finish(e);
	}
	return PS_EINPUT;
}

static int engine_emit(struct ps_sink *sink, const struct ps_op *op,
		       struct ps_error *err)
{
	struct ps_engine_sink *s = (struct ps_engine_sink *)sink;

	s->ops++;
	ps_engine_set_position(s->engine, s->ops);
	return ps_op_apply(s->att, s->engine, op, err);
}

void ps_engine_sink_init(struct ps_engine_sink *s,
			 const struct ps_attention *att, struct ps_engine *e)
{
	memset(s, 0, sizeof(*s));
	s->sink.emit = engine_emit;
	s->att = att;
	s->engine = e;
}

static int count_emit(struct ps_sink *sink, const struct ps_op *op,
		      struct ps_error *err)
{
	struct ps_count_sink *s = (struct ps_count_sink *)sink;
	uint64_t moves = ps_op_moves(op);

	(void)err;
	s->ops++;
	s->moves += moves;
	if (op->code == PS_OP_LOAD)
		s->loads += moves;
	else if (op->code == PS_OP_SAVE)
		s->saves += moves;
	return PS_OK;
}

void ps_count_sink_init(struct ps_count_sink *s)
{
	memset(s, 0, sizeof(*s));
	s->sink.emit = count_emit;
}
