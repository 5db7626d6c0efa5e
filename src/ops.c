/*
 * Expansion of set operations into elementary moves (MODEL.md section 3).
 *
 * The expander knows the attention DAG's arithmetic, so it hands the
 * engine moves with parents and edges already resolved; the engine's
 * verdicts and messages are the same as for moves resolved through the DAG.
 */
#include "pebblesim/ops.h"

#include <stdio.h>
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

enum ps_opcode ps_move_opcode(enum ps_move move)
{
	for (enum ps_opcode code = PS_OP_LOAD; code <= PS_OP_MAC; code++)
		if (ps_opcode_move(code) == move)
			return code;
	return PS_OP_MAC; /* a mac named by its product */
}

/* The kind whose coordinates the operation carries. */
static enum ps_kind coord_kind(const struct ps_op *op)
{
	if (op->code == PS_OP_MAC)
		return op->carry ? PS_KIND_HC : ps_attention_product_kind(op->kind);
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

/* Is every value of the list below extent? */
static bool list_below(const struct ps_coordset *s, uint64_t extent)
{
	for (size_t q = 0; q < s->len; q++)
		if (s->list[q] >= extent)
			return false;
	return true;
}

/* The message for coordinate p of kind k, its set s not within [0,
 * extent). */
static int coord_error(enum ps_kind k, unsigned p, const struct ps_coordset *s,
		       uint64_t extent, struct ps_error *err)
{
	const char *letter = ps_coord_letter(ps_kinds[k].coord[p]);

	if (s->list) {
		for (size_t q = 0; q < s->len; q++)
			if (s->list[q] >= extent)
				return ps_error_set(err, PS_EINPUT,
						    "%s coordinate %s = %llu is out of range [0, %llu)",
						    ps_kinds[k].name, letter,
						    (unsigned long long)s->list[q],
						    (unsigned long long)extent);
		return PS_OK;
	}
	if (s->hi == s->lo + 1 && s->lo >= extent)
		return ps_error_set(err, PS_EINPUT,
				    "%s coordinate %s = %llu is out of range [0, %llu)",
				    ps_kinds[k].name, letter, (unsigned long long)s->lo,
				    (unsigned long long)extent);
	return ps_error_set(err, PS_EINPUT,
			    "%s coordinate %s range [%llu, %llu) is not within [0, %llu)",
			    ps_kinds[k].name, letter, (unsigned long long)s->lo,
			    (unsigned long long)s->hi, (unsigned long long)extent);
}

static uint64_t set_min(const struct ps_coordset *s)
{
	uint64_t v = ps_coordset_at(s, 0);

	for (size_t q = 1; s->list && q < s->len; q++)
		v = ps_min_u64(v, s->list[q]);
	return v;
}

static uint64_t set_max(const struct ps_coordset *s)
{
	uint64_t v = ps_coordset_at(s, ps_coordset_size(s) - 1);

	for (size_t q = 0; s->list && q < s->len; q++)
		v = ps_max_u64(v, s->list[q]);
	return v;
}

/*
 * The nodes of kind k at rows rows and second coordinates cols (both not
 * empty) exist (ps_attention_exists): the rows from the kind's first, and
 * in causal exact attention every j <= i. The message names the first
 * node that does not.
 */
static int check_exist(const struct ps_attention *att, enum ps_kind k,
		       const struct ps_coordset *rows, const struct ps_coordset *cols,
		       struct ps_error *err)
{
	const uint64_t lo = set_min(rows);
	uint64_t c[3] = { lo, set_max(cols), 0 };

	if (lo < att->first_row[k] && k == PS_KIND_HC)
		return ps_error_set(err, PS_EINPUT,
				    "HC row j = %llu is not in the causal DAG: the carry HC[j,m,b] exists for j >= 1 (MODEL.md section 7)",
				    (unsigned long long)lo);
	if (lo < att->first_row[k])
		return ps_error_set(err, PS_EINPUT,
				    "%s row %s = %llu is not in the decode DAG: its rows begin at %llu (MODEL.md section 8)",
				    ps_kinds[k].name, ps_coord_letter(ps_kinds[k].coord[0]),
				    (unsigned long long)lo, (unsigned long long)att->first_row[k]);
	if (!ps_attention_exists(att, k, c))
		return ps_error_set(err, PS_EINPUT,
				    "%s[%llu,%llu] is above the diagonal: causal attention has S, E, PS and PO only for j <= i (MODEL.md section 7)",
				    ps_kinds[k].name, (unsigned long long)c[0],
				    (unsigned long long)c[1]);
	return PS_OK;
}

int ps_op_check(const struct ps_attention *att, const struct ps_op *op,
		struct ps_error *err)
{
	enum ps_kind k;

	if ((unsigned)op->code > PS_OP_MAC)
		return ps_error_set(err, PS_EINPUT,
				    "opcode %u is none of load, save, delete, compute, mac",
				    (unsigned)op->code);
	if (op->by_id) {
		uint64_t c[3];

		if (att && op->node >= att->dag.node_count)
			return ps_error_set(err, PS_EINPUT, "node %llu is not in the DAG (it has %llu nodes)",
					    (unsigned long long)op->node,
					    (unsigned long long)att->dag.node_count);
		if (att && (att->causal || att->decode) &&
		    !ps_attention_exists(att, ps_attention_decode(att, op->node, c), c))
			return ps_error_set(err, PS_EINPUT, "node %llu is not in the %s DAG",
					    (unsigned long long)op->node,
					    att->decode ? "decode" : "causal");
		return PS_OK;
	}
	if ((unsigned)op->kind >= PS_KIND_COUNT)
		return ps_error_set(err, PS_EINPUT, "kind %u is none of the DAG's kinds",
				    (unsigned)op->kind);
	if (op->code == PS_OP_MAC &&
	    (ps_kinds[op->kind].role != PS_ROLE_SUM || !ps_attention_has(att, op->kind)))
		return ps_error_set(err, PS_EINPUT,
				    "a mac aggregates into %s, not into %s",
				    att->exact ? "S or O" : "H or N",
				    ps_kinds[op->kind].name);
	if (op->fuse && op->code != PS_OP_MAC)
		return ps_error_set(err, PS_EINPUT,
				    "\"fuse\" belongs to a mac, not to a %s",
				    ps_opcode_name(op->code));
	if (op->fuse && ps_attention_fused_kind(op->kind) == PS_KIND_COUNT)
		return ps_error_set(err, PS_EINPUT,
				    "\"fuse\" is defined for macs into O only: the products of S have inputs for parents");
	if (op->carry && (op->code != PS_OP_MAC || op->kind != PS_KIND_HJ))
		return ps_error_set(err, PS_EINPUT,
				    "\"carry\" belongs to a mac into the causal state H, not to a %s%s%s",
				    ps_opcode_name(op->code), op->code == PS_OP_MAC ? " into " : "",
				    op->code == PS_OP_MAC ? ps_kinds[op->kind].name : "");
	if (op->carry && op->fuse)
		return ps_error_set(err, PS_EINPUT,
				    "\"fuse\" and \"carry\" do not go together: the carry's parent is the previous state, a sum, with nothing to regenerate");
	if (op->kind == PS_KIND_A && !att->normalize)
		return ps_error_set(err, PS_EINPUT,
				    "there is no A without normalisation");
	if (!ps_attention_has(att, op->kind))
		return ps_error_set(err, PS_EINPUT, "%s is no kind of the %s DAG",
				    ps_kinds[op->kind].name, ps_attention_kind_name(att));
	k = coord_kind(op);
	for (unsigned p = 0; p < ps_kinds[k].arity; p++) {
		const struct ps_coordset *s = &op->c[p];
		const uint64_t extent = ps_attention_extent(att, k, p);

		if (!s->list ? s->lo > s->hi || s->hi > extent : !list_below(s, extent))
			return coord_error(k, p, s, extent, err);
	}
	if ((att->causal || att->decode) && ps_coordset_size(&op->c[0]) &&
	    ps_coordset_size(&op->c[1]))
		return check_exist(att, k, &op->c[0], &op->c[1], err);
	return PS_OK;
}

/* compute of U1[i,m], U2[j,m], E[i,j] or A[i,b], with parents by arithmetic */
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
	case PS_KIND_E:
		parents[0] = ps_attention_id2(att, PS_KIND_S, c0, c1);
		count = 1;
		break;
	case PS_KIND_A: {
		enum ps_kind sum = att->exact ? PS_KIND_O : PS_KIND_N;

		parents[0] = ps_attention_id2(att, sum, c0, c1);
		parents[1] = ps_attention_id2(att, sum, c0, att->d);
		count = 2;
		break;
	}
	default:
		/* inputs, sums, products: the engine names the broken rule */
		return ps_engine_compute(e, v);
	}
	return ps_engine_compute_plain(e, v, parents, count);
}

/* The product of a mac into `into` at product coordinates (c0, c1, c2). */
static void resolve_product(const struct ps_attention *att, enum ps_kind into,
			    bool carry, ps_node plain, uint64_t c0, uint64_t c1,
			    uint64_t c2, struct ps_product *p)
{
	switch (into) {
	case PS_KIND_HJ: /* causal: P2[j,m,b] edge 0 of H[j,m,b], HC edge 1 */
		p->id = ps_attention_id3(att, carry ? PS_KIND_HC : PS_KIND_P2, c0, c1, c2);
		p->parent[0] = carry ? ps_attention_id3(att, PS_KIND_HJ, c0 - 1, c1, c2) : plain;
		p->parent_is_sum[0] = carry;
		p->parent_count = carry || c2 >= att->d ? 1 : 2;
		p->parent[1] = !carry && c2 < att->d ? ps_attention_id2(att, PS_KIND_V, c0, c2) : 0;
		p->parent_is_sum[1] = false;
		p->sum = ps_attention_id3(att, PS_KIND_HJ, c0, c1, c2);
		p->edge = carry ? 1 : 0;
		p->in_degree = ps_attention_in_degree_at(att, PS_KIND_HJ, c0);
		break;
	case PS_KIND_H: /* P2[j,m,b]: edge j of H[m,b] */
		p->id = ps_attention_id3(att, PS_KIND_P2, c0, c1, c2);
		p->parent[0] = plain;
		p->parent_count = c2 < att->d ? 2 : 1;
		p->parent[1] = c2 < att->d ? ps_attention_id2(att, PS_KIND_V, c0, c2) : 0;
		p->parent_is_sum[1] = false;
		p->sum = ps_attention_id2(att, PS_KIND_H, c1, c2);
		p->edge = c0;
		break;
	case PS_KIND_N: /* P1[i,m,b]: edge m of N[i,b] */
		p->id = ps_attention_id3(att, PS_KIND_P1, c0, c1, c2);
		p->parent[0] = plain;
		p->parent_count = 2;
		p->parent[1] = att->causal ? ps_attention_id3(att, PS_KIND_HJ, c0, c1, c2) :
			       ps_attention_id2(att, PS_KIND_H, c1, c2);
		p->parent_is_sum[1] = true;
		p->sum = ps_attention_id2(att, PS_KIND_N, c0, c2);
		p->edge = c1;
		break;
	case PS_KIND_S: /* PS[i,j,a]: edge a of S[i,j] */
		p->id = ps_attention_id3(att, PS_KIND_PS, c0, c1, c2);
		p->parent[0] = ps_attention_id2(att, PS_KIND_Q, c0, c2);
		p->parent_count = 2;
		p->parent[1] = ps_attention_id2(att, PS_KIND_K, c1, c2);
		p->parent_is_sum[1] = false;
		p->sum = ps_attention_id2(att, PS_KIND_S, c0, c1);
		p->edge = c2;
		break;
	default: /* PO[i,j,b]: edge j of O[i,b] */
		p->id = ps_attention_id3(att, PS_KIND_PO, c0, c1, c2);
		p->parent[0] = plain;
		p->parent_count = c2 < att->d ? 2 : 1;
		p->parent[1] = c2 < att->d ? ps_attention_id2(att, PS_KIND_V, c1, c2) : 0;
		p->parent_is_sum[1] = false;
		p->sum = ps_attention_id2(att, PS_KIND_O, c0, c2);
		p->edge = c1;
		break;
	}
}

static int apply_mac(const struct ps_attention *att, struct ps_engine *e,
		     const struct ps_op *op)
{
	const enum ps_kind plain = ps_attention_fused_kind(op->kind);
	const uint64_t n0 = ps_coordset_size(&op->c[0]);
	const uint64_t n1 = ps_coordset_size(&op->c[1]);
	const uint64_t n2 = ps_coordset_size(&op->c[2]);
	struct ps_product p;

	p.transient = 1;
	p.parent_is_sum[0] = false;
	for (uint64_t x0 = 0; x0 < n0; x0++) {
		const uint64_t c0 = ps_coordset_at(&op->c[0], x0);

		/* the sums' first coordinate is the product's: their row */
		p.in_degree = ps_attention_in_degree_at(att, op->kind, c0);
		for (uint64_t x1 = 0; x1 < n1; x1++) {
			const uint64_t c1 = ps_coordset_at(&op->c[1], x1);
			/* the fused mac's plain parent: U2[j,m], U1[i,m] or E[i,j] */
			const ps_node u = plain == PS_KIND_COUNT ? 0 :
					  ps_attention_id2(att, plain, c0, c1);

			int rc;

			if (op->fuse && (rc = compute_node(att, e, plain, c0, c1)))
				return rc;
			for (uint64_t x2 = 0; x2 < n2; x2++) {
				resolve_product(att, op->kind, op->carry, u, c0, c1,
						ps_coordset_at(&op->c[2], x2), &p);
				if ((rc = ps_engine_mac_product(e, &p)))
					return rc;
			}
			if (op->fuse && (rc = ps_engine_delete(e, u)))
				return rc;
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
	if (!e->element_only) {
		rc = op->code == PS_OP_MAC ? ps_block_mac(att, e, op) :
		     op->code != PS_OP_COMPUTE ? ps_block_move(att, e, op) :
		     ps_block_compute(att, e, op);
		if (rc == PS_BLOCK_APPLIED)
			return PS_OK;
		if (rc < 0)
			return rc; /* out of memory */
	}
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
	const enum ps_kind plain = ps_attention_fused_kind(op->kind);
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

void ps_repeat_add(struct ps_op *body, uint64_t (*step)[3], size_t *len, enum ps_opcode code,
		   enum ps_kind kind, struct ps_coordset c0, struct ps_coordset c1,
		   struct ps_coordset c2, unsigned moves, uint64_t by)
{
	const struct ps_op op = { .code = code, .kind = kind, .c = { c0, c1, c2 } };

	body[*len] = op;
	for (unsigned p = 0; p < 3; p++)
		step[*len][p] = (moves >> p) & 1 ? by : 0;
	(*len)++;
}

void ps_repeat_op(const struct ps_repeat *r, uint64_t t, size_t k, struct ps_op *op)
{
	*op = r->body[k];
	for (unsigned p = 0; p < 3; p++) {
		const uint64_t by = t * r->step[k][p];

		if (op->c[p].list) {
			op->c[p].list += by;
		} else {
			op->c[p].lo += by;
			op->c[p].hi += by;
		}
	}
}

/* The loop on the engine's sink: as one unit, or op by op. */
static int engine_repeat(struct ps_engine_sink *s, const struct ps_repeat *r,
			 struct ps_error *err)
{
	struct ps_engine *e = s->engine;
	uint64_t t = 0;
	int rc;

	if (!e->element_only && s->att) {
		rc = ps_block_repeat(s->att, e, r);
		if (rc < 0)
			return rc; /* out of memory */
		if (rc == PS_BLOCK_APPLIED) {
			s->ops += r->count * r->len;
			ps_engine_set_position(e, s->ops);
			return PS_OK;
		}
		if (ps_block_rows_loop(s->att, e, r)) {
			/* the first iteration op by op, its own peak noted; the
			 * others alike, shifted by its net change each */
			const uint64_t red0 = e->c.red, before = e->c.peak_red;
			uint64_t first_peak, grow, peak;

			e->c.peak_red = red0;
			for (size_t k = 0; k < r->len; k++) {
				struct ps_op op;

				ps_repeat_op(r, 0, k, &op);
				if ((rc = engine_emit(&s->sink, &op, err))) {
					e->c.peak_red = ps_max_u64(e->c.peak_red, before);
					return rc;
				}
			}
			first_peak = e->c.peak_red;
			e->c.peak_red = ps_max_u64(first_peak, before);
			t = 1;
			grow = e->c.red > red0 ? e->c.red - red0 : 0;
			if (ps_mul_u64(grow, r->count - 1, &peak) || ps_add_u64(peak, first_peak, &peak))
				peak = UINT64_MAX;
			if (peak <= e->M) {
				rc = ps_block_rows_rest(s->att, e, r, peak, err);
				if (rc != PS_BLOCK_APPLIED)
					return rc;
				s->ops += (r->count - 1) * r->len;
				ps_engine_set_position(e, s->ops);
				return PS_OK;
			}
		}
	}
	for (; t < r->count; t++)
		for (size_t k = 0; k < r->len; k++) {
			struct ps_op op;

			ps_repeat_op(r, t, k, &op);
			if ((rc = engine_emit(&s->sink, &op, err)))
				return rc;
		}
	return PS_OK;
}

static int forward_emit(struct ps_sink *sink, const struct ps_op *op, struct ps_error *err)
{
	struct ps_forward_sink *s = (struct ps_forward_sink *)sink;
	int rc = ps_sink_emit(s->next, op, err);

	s->after(s->ctx, ps_op_moves(op));
	return rc;
}

void ps_forward_sink_init(struct ps_forward_sink *s, struct ps_sink *next,
			  void (*after)(void *ctx, uint64_t moves), void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->sink.emit = forward_emit;
	s->next = next;
	s->after = after;
	s->ctx = ctx;
}

/* Is the byte of a bool 0 or 1? (A plugin may store any byte there.) */
static bool bool_byte(const bool *b, unsigned *value)
{
	unsigned char byte;

	memcpy(&byte, b, 1);
	*value = byte;
	return byte <= 1;
}

static int guard_check(struct ps_guard_sink *g, const struct ps_op *op)
{
	unsigned byte;

	if (!bool_byte(&op->by_id, &byte))
		return ps_error_set(&g->why, PS_EINVALID, "its by_id is byte %u, neither false nor true", byte);
	if (!bool_byte(&op->fuse, &byte))
		return ps_error_set(&g->why, PS_EINVALID, "its fuse is byte %u, neither false nor true", byte);
	if (op->by_id) {
		if ((unsigned)op->code > PS_OP_MAC)
			return ps_op_check(NULL, op, &g->why);
		if (op->node >= g->node_count)
			return ps_error_set(&g->why, PS_EINVALID,
					    "node %llu is not in the DAG (it has %llu nodes)",
					    (unsigned long long)op->node,
					    (unsigned long long)g->node_count);
		return PS_OK;
	}
	if (!g->att)
		return ps_error_set(&g->why, PS_EINVALID,
				    "an operation by kind and coordinates on a DAG that has none (a DAG from a file)");
	return ps_op_check(g->att, op, &g->why);
}

/* Checks operation number g->ops + 1; on failure ends the guard. */
static int guard_one(struct ps_guard_sink *g, const struct ps_op *op)
{
	char why[PS_ERROR_MAX];

	if (g->failed || g->next_failed)
		return PS_EINVALID;
	g->ops++;
	if (!guard_check(g, op))
		return PS_OK;
	snprintf(why, sizeof(why), "%s", g->why.msg);
	ps_error_set(&g->why, PS_EINVALID, "operation %llu is out of range: %s",
		     (unsigned long long)g->ops, why);
	g->failed = true;
	return PS_EINVALID;
}

static int guard_next(struct ps_guard_sink *g, int rc)
{
	if (rc && !g->next_failed) {
		g->next_failed = true;
		g->next_rc = rc;
	}
	return rc;
}

static int guard_emit(struct ps_sink *sink, const struct ps_op *op, struct ps_error *err)
{
	struct ps_guard_sink *g = (struct ps_guard_sink *)sink;
	int rc = guard_one(g, op);

	return rc ? rc : guard_next(g, ps_sink_emit(g->next, op, err));
}

/* A loop through the guard: every operation of every iteration checked,
 * then the loop passed whole; up to the first that fails when one does,
 * so that an earlier violation of the engine's is still the one found. */
static int guard_repeat(struct ps_guard_sink *g, const struct ps_repeat *r, struct ps_error *err)
{
	const uint64_t first = g->ops;
	struct ps_repeat head = *r;
	struct ps_op op;
	int rc;

	for (uint64_t t = 0; t < r->count; t++)
		for (size_t k = 0; k < r->len; k++) {
			ps_repeat_op(r, t, k, &op);
			if (!guard_one(g, &op))
				continue;
			/* the iterations before t whole, then t's ops before
			 * k: a failure there comes first */
			head.count = t;
			rc = t ? ps_sink_repeat(g->next, &head, err) : PS_OK;
			for (size_t q = 0; !rc && q < k; q++) {
				ps_repeat_op(r, t, q, &op);
				rc = ps_sink_emit(g->next, &op, err);
			}
			if (rc) {
				g->failed = false;
				g->ops = first + t * r->len + k;
				return guard_next(g, rc);
			}
			return PS_EINVALID;
		}
	return guard_next(g, ps_sink_repeat(g->next, r, err));
}

void ps_guard_sink_init(struct ps_guard_sink *g, struct ps_sink *next,
			const struct ps_attention *att, uint64_t node_count)
{
	memset(g, 0, sizeof(*g));
	g->sink.emit = guard_emit;
	g->next = next;
	g->att = att;
	g->node_count = node_count;
}

int ps_sink_repeat(struct ps_sink *sink, const struct ps_repeat *r, struct ps_error *err)
{
	int rc;

	if (sink->emit == guard_emit)
		return guard_repeat((struct ps_guard_sink *)sink, r, err);
	if (sink->emit == engine_emit)
		return engine_repeat((struct ps_engine_sink *)sink, r, err);
	if (sink->emit == forward_emit) {
		struct ps_forward_sink *s = (struct ps_forward_sink *)sink;
		uint64_t moves = 0;

		rc = ps_sink_repeat(s->next, r, err);
		for (size_t k = 0; k < r->len; k++)
			moves += ps_op_moves(&r->body[k]);
		s->after(s->ctx, r->count * moves);
		return rc;
	}
	for (uint64_t t = 0; t < r->count; t++)
		for (size_t k = 0; k < r->len; k++) {
			struct ps_op op;

			ps_repeat_op(r, t, k, &op);
			if ((rc = ps_sink_emit(sink, &op, err)))
				return rc;
		}
	return PS_OK;
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
