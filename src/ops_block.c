/*
 * The block path: a whole set operation judged and applied at once.
 *
 * For the operations that dominate every run (macs over blocks, and loads,
 * saves and deletes of blocks) the rules are checked for the whole block
 * before anything changes: every parent in fast memory, every sum
 * aggregated into neither in slow memory only nor holding one of the
 * block's edges, no list with a repeated value, and the capacity at the
 * block's peak. When all hold, every elementary move of the block would
 * succeed in order, and the block's effect (the same pebbles, edge bits,
 * counters and peak) is applied with word-wide operations. When any fails,
 * nothing has changed and the element path replays the block move by move,
 * so the first violation, its position and its message are exactly those
 * of the element path. tests/test_block.c compares both paths.
 */
#include "ops_block.h"

#include "bits.h"

#include <stdlib.h>
#include <string.h>

/* A list that is not strictly increasing may repeat a value: element path. */
static bool increasing(const struct ps_coordset *s)
{
	for (size_t k = 1; s->list && k < s->len; k++)
		if (s->list[k] <= s->list[k - 1])
			return false;
	return true;
}

/*
 * The edges of a block within one sum: a range of bits, or a list. A long
 * list is also kept as a mask of words (bit m - first), so that each sum
 * takes a few word operations instead of one per edge.
 */
struct edges {
	const struct ps_coordset *set;
	uint64_t first, words;
	uint64_t *mask; /* NULL: bit by bit */
};

static void edges_init(struct edges *ed, const struct ps_coordset *s)
{
	ed->set = s;
	ed->mask = NULL;
	ed->first = ed->words = 0;
	if (!s->list || s->len < 16)
		return;
	ed->first = s->list[0];
	ed->words = (s->list[s->len - 1] - ed->first) / 64 + 1;
	if (ed->words * 4 > s->len || !(ed->mask = calloc(ed->words, 8)))
		return;
	for (size_t k = 0; k < s->len; k++)
		ed->mask[(s->list[k] - ed->first) / 64] |=
			UINT64_C(1) << ((s->list[k] - ed->first) % 64);
}

static void edges_free(struct edges *ed)
{
	free(ed->mask);
}

/* The mask's word k placed at bit offset o: its parts in words w, w + 1. */
#define MASK_LO(ed, k, sh) ((ed)->mask[k] << (sh))
#define MASK_HI(ed, k, sh) ((sh) ? (ed)->mask[k] >> (64 - (sh)) : 0)

static bool edges_clear(const uint64_t *bits, uint64_t base,
			const struct edges *ed)
{
	const struct ps_coordset *s = ed->set;

	if (ed->mask) {
		uint64_t o = base + ed->first, w = o / 64, sh = o % 64;

		for (uint64_t k = 0; k < ed->words; k++)
			if ((bits[w + k] & MASK_LO(ed, k, sh)) ||
			    (MASK_HI(ed, k, sh) && (bits[w + k + 1] & MASK_HI(ed, k, sh))))
				return false;
		return true;
	}
	if (!s->list)
		return ps_bits_none(bits, base + s->lo, base + s->hi);
	for (size_t k = 0; k < s->len; k++)
		if (ps_bits_test(bits, base + s->list[k]))
			return false;
	return true;
}

static void edges_set(uint64_t *bits, uint64_t base, const struct edges *ed)
{
	const struct ps_coordset *s = ed->set;

	if (ed->mask) {
		uint64_t o = base + ed->first, w = o / 64, sh = o % 64;

		for (uint64_t k = 0; k < ed->words; k++) {
			bits[w + k] |= MASK_LO(ed, k, sh);
			if (MASK_HI(ed, k, sh))
				bits[w + k + 1] |= MASK_HI(ed, k, sh);
		}
		return;
	}
	if (!s->list) {
		ps_bits_fill(bits, base + s->lo, base + s->hi, true);
		return;
	}
	for (size_t k = 0; k < s->len; k++)
		bits[(base + s->list[k]) / 64] |= UINT64_C(1) << ((base + s->list[k]) % 64);
}

/* Clears the run's bits: a sum forgotten. */
static void edges_unset(uint64_t *bits, uint64_t base, const struct edges *ed)
{
	const struct ps_coordset *s = ed->set;

	if (!s->list) {
		ps_bits_fill(bits, base + s->lo, base + s->hi, false);
		return;
	}
	for (size_t k = 0; k < s->len; k++)
		bits[(base + s->list[k]) / 64] &= ~(UINT64_C(1) << ((base + s->list[k]) % 64));
}

/* One sum of an applied block, its edge bits set apart: red, its blue copy
 * now stale, added more edges aggregated, complete or not. */
static void sum_counted(struct ps_engine *e, ps_node v, uint64_t slot,
			uint64_t added, uint64_t in_degree)
{
	uint8_t s = (uint8_t)((e->state[v] | PS_ST_RED | PS_ST_SUM) & ~PS_ST_BLUE);

	e->agg[slot] += (uint32_t)added;
	if (e->agg[slot] < in_degree)
		s |= PS_ST_INCOMPLETE;
	else
		s &= (uint8_t)~PS_ST_INCOMPLETE;
	e->state[v] = s;
}

/* The same with the block's edges (ed, a run from edge_base) set. */
static void aggregate_sum(struct ps_engine *e, ps_node v, uint64_t slot,
			  uint64_t edge_base, const struct edges *ed,
			  uint64_t added, uint64_t in_degree)
{
	edges_set(e->edges, edge_base, ed);
	sum_counted(e, v, slot, added, in_degree);
}

/* The rest of an applied block of n0 x n1 x n2 macs: the fused entries
 * plain[rows, cols] marked computed, and the counters. */
static int block_applied(const struct ps_attention *att, struct ps_engine *e,
			 const struct ps_op *op, enum ps_kind plain,
			 uint64_t recomputed, uint64_t fresh, uint64_t peak,
			 struct edges *ed)
{
	const uint64_t n0 = ps_coordset_size(&op->c[0]), n1 = ps_coordset_size(&op->c[1]);
	const uint64_t n2 = ps_coordset_size(&op->c[2]);

	if (op->fuse) {
		for (uint64_t x = 0; x < n0; x++)
			for (uint64_t y = 0; y < n1; y++)
				e->state[ps_attention_id2(att, plain, ps_coordset_at(&op->c[0], x),
							  ps_coordset_at(&op->c[1], y))] |= PS_ST_COMPUTED;
		e->c.computes += n0 * n1;
		e->c.recomputations += recomputed;
	}
	edges_free(ed);
	e->c.red += fresh;
	e->c.macs += n0 * n1 * n2;
	e->c.moves += n0 * n1 * (n2 + (op->fuse ? 2 : 0));
	if (peak > e->c.peak_red)
		e->c.peak_red = peak;
	return PS_BLOCK_APPLIED;
}

/*
 * Rows of states, for exact attention's blocks: row points at a row's
 * first state (kind[i, 0]) and s picks its columns. A range is a run of
 * bytes, scanned without branches; a list goes entry by entry.
 */
#define ROW_EACH(s, k, col, body)                                          \
	do {                                                                \
		if (!(s)->list) {                                           \
			for (uint64_t col = (s)->lo; col < (s)->hi; col++)  \
				body;                                       \
		} else {                                                    \
			for (size_t k = 0; k < (s)->len; k++) {             \
				const uint64_t col = (s)->list[k];          \
				body;                                       \
			}                                                   \
		}                                                           \
	} while (0)

/* Is every column of s below limit red? */
static bool row_red(const uint8_t *row, const struct ps_coordset *s, uint64_t limit)
{
	uint8_t bad = 0;
	const struct ps_coordset cut = s->list ? *s : ps_range(s->lo, ps_min_u64(s->hi, limit));

	ROW_EACH(&cut, k, c, if (c < limit) bad |= (uint8_t)~row[c]);
	return !(bad & PS_ST_RED);
}

/* Can a fused mac compute E[i, J] from S[i, J]: S red and complete, E not
 * red? Counts the recomputations. */
static bool row_fusable(const uint8_t *s_row, const uint8_t *e_row,
			const struct ps_coordset *js, uint64_t *recomputed)
{
	uint8_t bad = 0;
	uint64_t again = 0;

	ROW_EACH(js, k, j, {
		bad |= (uint8_t)(e_row[j] | ~s_row[j]) & PS_ST_RED;
		bad |= s_row[j] & PS_ST_INCOMPLETE;
		again += (e_row[j] & PS_ST_COMPUTED) != 0;
	});
	*recomputed += again;
	return !bad;
}

/* May macs aggregate into the sums of s: none in slow memory only? Counts
 * the new ones (not red). */
static bool row_sums_open(const uint8_t *row, const struct ps_coordset *s,
			  uint64_t *fresh)
{
	uint8_t slow_only = 0;
	uint64_t count = 0;

	ROW_EACH(s, k, c, {
		uint8_t not_red = (uint8_t)~row[c] & PS_ST_RED;

		slow_only |= not_red & (row[c] >> 1);
		count += not_red;
	});
	*fresh += count;
	return !slow_only;
}

/* The sums of s each take added edges (their bits set apart): red, their
 * blue copy stale, complete or not. agg is the row's first count. */
static void row_sums_counted(uint8_t *row, uint32_t *agg, const struct ps_coordset *s,
			     uint64_t added, uint64_t in_degree)
{
	ROW_EACH(s, k, c, {
		uint32_t a = agg[c] + (uint32_t)added;
		uint8_t st = (uint8_t)((row[c] | PS_ST_RED | PS_ST_SUM) &
				       ~(PS_ST_BLUE | PS_ST_INCOMPLETE));

		agg[c] = a;
		row[c] = (uint8_t)(st | (a < in_degree ? PS_ST_INCOMPLETE : 0));
	});
}

/*
 * The first bit of a run of an exact block's edges: into S, the edges A of
 * S[I[x], J[y]]; into O, the edge J[x] of O[I, B[y]] for every row of I
 * (ps_attention_sum_edge's layout).
 */
static uint64_t exact_edge_run(const struct ps_attention *att, bool into_s,
			       const struct ps_coordset *is,
			       const struct ps_coordset *js,
			       const struct ps_coordset *sum_cols, uint64_t x,
			       uint64_t y)
{
	if (into_s)
		return ps_attention_sum_edge(att, PS_KIND_S, ps_coordset_at(is, x),
					     ps_coordset_at(sum_cols, y), 0);
	return ps_attention_sum_edge(att, PS_KIND_O, 0, ps_coordset_at(sum_cols, y),
				     ps_coordset_at(js, x));
}

/*
 * Exact attention's macs (MODEL.md section 5): into S (products PS[i,j,a]:
 * edge a of S[i,j], parents Q[i,a] and K[j,a]) over rows I, J and features
 * A; into O (PO[i,j,b]: edge j of O[i,b], parents E[i,j] and V[j,b] for
 * b < d) over rows I, J and columns B, fused (E[i,j] computed from a red,
 * complete S[i,j] and dropped) or not (E red).
 */
static int block_mac_exact(const struct ps_attention *att, struct ps_engine *e,
			   const struct ps_op *op)
{
	const bool into_s = op->kind == PS_KIND_S, fuse = op->fuse;
	const struct ps_coordset *is = &op->c[0], *js = &op->c[1], *cs = &op->c[2];
	const uint64_t n0 = ps_coordset_size(is), n1 = ps_coordset_size(js);
	const uint64_t n2 = ps_coordset_size(cs);
	const uint64_t sum_base = att->base[PS_KIND_S];
	/* the sums are S[I, J] (edges A) or O[I, B] (edges J) */
	const struct ps_coordset *sum_cols = into_s ? js : cs;
	const uint64_t sum_col_count = into_s ? n1 : n2;
	const enum ps_kind sum_kind = into_s ? PS_KIND_S : PS_KIND_O;
	const uint64_t sum_kind_base = att->base[sum_kind];
	const uint64_t sum_stride = att->ext[sum_kind][1];
	const uint64_t in_degree = ps_attention_in_degree(att, sum_kind);
	uint8_t *st = e->state;
	uint64_t fresh = 0, recomputed = 0, peak, runs;
	struct ps_coordset whole;
	bool whole_rows;
	struct edges ed;

	if (e->failed || !n0 || !n1 || !n2 || !increasing(is) || !increasing(js) ||
	    !increasing(cs))
		return PS_BLOCK_DECLINED;
	/* the parents: Q[I, A] and K[J, A]; or E[I, J] (or S[I, J] to compute
	 * it from) and V[J, B] */
	for (uint64_t x = 0; x < n0; x++) {
		uint64_t i = ps_coordset_at(is, x);

		if (into_s ? !row_red(st + ps_attention_id2(att, PS_KIND_Q, i, 0), cs, UINT64_MAX) :
		    fuse ? !row_fusable(st + ps_attention_id2(att, PS_KIND_S, i, 0),
					st + ps_attention_id2(att, PS_KIND_E, i, 0), js, &recomputed) :
			   !row_red(st + ps_attention_id2(att, PS_KIND_E, i, 0), js, UINT64_MAX))
			return PS_BLOCK_DECLINED;
	}
	for (uint64_t y = 0; y < n1; y++) {
		uint64_t j = ps_coordset_at(js, y);

		if (into_s ? !row_red(st + ps_attention_id2(att, PS_KIND_K, j, 0), cs, UINT64_MAX) :
		    !row_red(st + ps_attention_id2(att, PS_KIND_V, j, 0), cs, att->d))
			return PS_BLOCK_DECLINED;
	}
	/* the sums: not in slow memory only */
	for (uint64_t x = 0; x < n0; x++)
		if (!row_sums_open(st + sum_kind_base + ps_coordset_at(is, x) * sum_stride,
				   sum_cols, &fresh))
			return PS_BLOCK_DECLINED;
	/* ... and none of the block's edges: S[i,j]'s edges A are a run of
	 * its own bits (S[i, J]'s all features one run, J a range), O's edge j
	 * of the rows I one run for each column b */
	whole_rows = into_s && !js->list && !cs->list && cs->lo == 0 && cs->hi == att->d;
	whole = ps_range(0, n1 * att->d);
	runs = whole_rows ? 1 : sum_col_count;
	edges_init(&ed, whole_rows ? &whole : into_s ? cs : is);
	for (uint64_t x = 0; x < (into_s ? n0 : n1); x++)
		for (uint64_t y = 0; y < runs; y++)
			if (!edges_clear(e->edges, exact_edge_run(att, into_s, is, js, sum_cols, x, y), &ed))
				goto decline;
	/* the peak is reached at the block's last mac: every new sum, E
	 * (fused) and the product */
	peak = e->c.red + fresh + (fuse ? 2 : 1);
	if (peak > e->M)
		goto decline;

	/* every move would succeed: apply the block */
	for (uint64_t x = 0; x < (into_s ? n0 : n1); x++)
		for (uint64_t y = 0; y < runs; y++)
			edges_set(e->edges, exact_edge_run(att, into_s, is, js, sum_cols, x, y), &ed);
	for (uint64_t x = 0; x < n0; x++) {
		const uint64_t at = ps_coordset_at(is, x) * sum_stride;

		row_sums_counted(st + sum_kind_base + at,
				 e->agg + (sum_kind_base - sum_base) + at, sum_cols,
				 into_s ? n2 : n1, in_degree);
	}
	return block_applied(att, e, op, PS_KIND_E, recomputed, fresh, peak, &ed);
decline:
	edges_free(&ed);
	return PS_BLOCK_DECLINED;
}

/*
 * A mac into N (products P1[i,m,b]: edge m of N[i,b], parents U1[i,m] and
 * H[m,b]) or into H (P2[j,m,b]: edge j of H[m,b], parents U2[j,m] and
 * V[j,b] for b < d), fused or not.
 */
int ps_block_mac(const struct ps_attention *att, struct ps_engine *e,
		 const struct ps_op *op)
{
	const bool into_h = op->kind == PS_KIND_H, fuse = op->fuse;
	const struct ps_coordset *rows = &op->c[0], *ms = &op->c[1], *bs = &op->c[2];
	const uint64_t n0 = ps_coordset_size(rows), n1 = ps_coordset_size(ms);
	const uint64_t n2 = ps_coordset_size(bs);
	const enum ps_kind plain = into_h ? PS_KIND_U2 : PS_KIND_U1;
	const enum ps_kind from = into_h ? PS_KIND_K : PS_KIND_Q;
	const enum ps_kind sum = into_h ? PS_KIND_H : PS_KIND_N;
	const uint64_t sum_base = att->base[PS_KIND_H];
	uint8_t *st = e->state;
	uint64_t fresh = 0, recomputed = 0, peak;
	struct edges ed;
	uint8_t features[256];

	if (att->exact)
		return block_mac_exact(att, e, op);
	if (e->failed || !n0 || !n1 || !n2 || !increasing(rows) ||
	    !increasing(ms) || !increasing(bs) || att->d > sizeof(features))
		return PS_BLOCK_DECLINED;
	/* the features the regenerated entries read, for every row */
	if (fuse) {
		memset(features, 0, att->d);
		for (uint64_t y = 0; y < n1; y++) {
			uint64_t m = ps_coordset_at(ms, y);
			const uint32_t *sup = ps_monomial_support(&att->mono, m);

			for (uint8_t q = 0; q < att->mono.support_size[m]; q++)
				features[sup[q]] = 1;
		}
	}
	for (uint64_t x = 0; x < n0; x++) {
		uint64_t row = ps_coordset_at(rows, x);

		if (fuse) {
			for (uint64_t a = 0; a < att->d; a++)
				if (features[a] && !(st[ps_attention_id2(att, from, row, a)] & PS_ST_RED))
					return PS_BLOCK_DECLINED;
		}
		for (uint64_t y = 0; y < n1; y++) {
			uint8_t s = st[ps_attention_id2(att, plain, row, ps_coordset_at(ms, y))];

			/* fused: the entry is computed, so it may not be red yet;
			 * otherwise it is a parent and must be red */
			if (fuse ? (s & PS_ST_RED) : !(s & PS_ST_RED))
				return PS_BLOCK_DECLINED;
			recomputed += (s & PS_ST_COMPUTED) != 0;
		}
		if (into_h)
			for (uint64_t z = 0; z < n2; z++) {
				uint64_t b = ps_coordset_at(bs, z);

				if (b < att->d &&
				    !(st[ps_attention_id2(att, PS_KIND_V, row, b)] & PS_ST_RED))
					return PS_BLOCK_DECLINED;
			}
	}
	/* into N: every H[m,b] a red, complete parent */
	if (!into_h)
		for (uint64_t y = 0; y < n1; y++)
			for (uint64_t z = 0; z < n2; z++) {
				uint8_t s = st[ps_attention_id2(att, PS_KIND_H, ps_coordset_at(ms, y),
								ps_coordset_at(bs, z))];

				if (!(s & PS_ST_RED) || (s & PS_ST_INCOMPLETE))
					return PS_BLOCK_DECLINED;
			}
	/* the sums: not in slow memory only, and none of the block's edges */
	edges_init(&ed, into_h ? rows : ms);
	{
		const uint64_t s0 = into_h ? n1 : n0;
		const struct ps_coordset *outer = into_h ? ms : rows;

		for (uint64_t x = 0; x < s0; x++)
			for (uint64_t z = 0; z < n2; z++) {
				uint64_t o = ps_coordset_at(outer, x), b = ps_coordset_at(bs, z);
				uint8_t s = st[ps_attention_id2(att, sum, o, b)];
				uint64_t base = into_h ? ps_attention_h_edge(att, o, b, 0)
						       : ps_attention_n_edge(att, o, b, 0);

				if (!(s & PS_ST_RED)) {
					if (s & PS_ST_BLUE)
						goto decline;
					fresh++;
				}
				if (!edges_clear(e->edges, base, &ed))
					goto decline;
			}
	}
	/* the peak is reached at the block's last mac: every new sum, the
	 * regenerated entry (fused) and the product */
	peak = e->c.red + fresh + (fuse ? 2 : 1);
	if (peak > e->M)
		goto decline;

	/* every move would succeed: apply the block */
	{
		const uint64_t s0 = into_h ? n1 : n0;
		const struct ps_coordset *outer = into_h ? ms : rows;
		const uint64_t in_degree = into_h ? att->n : att->r;
		const uint64_t added = into_h ? n0 : n1;

		for (uint64_t x = 0; x < s0; x++)
			for (uint64_t z = 0; z < n2; z++) {
				uint64_t o = ps_coordset_at(outer, x), b = ps_coordset_at(bs, z);
				ps_node v = ps_attention_id2(att, sum, o, b);
				uint64_t base = into_h ? ps_attention_h_edge(att, o, b, 0)
						       : ps_attention_n_edge(att, o, b, 0);
				aggregate_sum(e, v, v - sum_base, base, &ed, added, in_degree);
			}
	}
	return block_applied(att, e, op, plain, recomputed, fresh, peak, &ed);
decline:
	edges_free(&ed);
	return PS_BLOCK_DECLINED;
}

/* Ids of a two-coordinate kind: base + c0 * stride + c1. */
static uint64_t stride_of(const struct ps_attention *att, enum ps_kind k)
{
	return ps_attention_id2(att, k, 1, 0) - ps_attention_id2(att, k, 0, 0);
}

/* Will deleting v drop the only copy of a sum that holds edges? */
static bool forgets(const struct ps_engine *e, ps_node v, uint64_t slot)
{
	return (e->state[v] & PS_ST_SUM) && !(e->state[v] & PS_ST_BLUE) && e->agg[slot];
}

/*
 * Deleting S[rows, cols] or O[rows, cols] of exact attention where every
 * sum goes with its only copy: the edges are cleared a run at a time, and
 * not sum by sum as ps_engine_forget_sum does. S[i, J]'s edges are one
 * run when J is a range; O's edge j of the rows is one run for each column
 * (ps_attention_sum_edge). Declined (false) when some sum keeps a copy or
 * has no edges: then each is forgotten on its own.
 */
static bool forget_exact_block(const struct ps_attention *att,
			       struct ps_engine *e, enum ps_kind k,
			       const struct ps_coordset *rows,
			       const struct ps_coordset *cols)
{
	const uint64_t n0 = ps_coordset_size(rows), n1 = ps_coordset_size(cols);
	const uint64_t base = att->base[k], stride = att->ext[k][1];
	const uint64_t slot_base = base - att->base[PS_KIND_S];
	struct edges ed;

	for (uint64_t x = 0; x < n0; x++)
		for (uint64_t y = 0; y < n1; y++) {
			uint64_t at = ps_coordset_at(rows, x) * stride + ps_coordset_at(cols, y);

			if (!forgets(e, base + at, slot_base + at))
				return false;
		}
	if (k == PS_KIND_S) {
		for (uint64_t x = 0; x < n0; x++) {
			uint64_t i = ps_coordset_at(rows, x);

			if (!cols->list) {
				uint64_t lo = ps_attention_sum_edge(att, k, i, cols->lo, 0);

				ps_bits_fill(e->edges, lo, lo + n1 * att->d, false);
				continue;
			}
			for (uint64_t y = 0; y < n1; y++) {
				uint64_t lo = ps_attention_sum_edge(att, k, i, cols->list[y], 0);

				ps_bits_fill(e->edges, lo, lo + att->d, false);
			}
		}
	} else {
		edges_init(&ed, rows);
		for (uint64_t j = 0; j < att->n; j++)
			for (uint64_t y = 0; y < n1; y++)
				edges_unset(e->edges, ps_attention_sum_edge(att, k, 0, ps_coordset_at(cols, y), j),
					    &ed);
		edges_free(&ed);
	}
	for (uint64_t x = 0; x < n0; x++)
		for (uint64_t y = 0; y < n1; y++) {
			uint64_t at = ps_coordset_at(rows, x) * stride + ps_coordset_at(cols, y);

			e->agg[slot_base + at] = 0;
			e->state[base + at] &= (uint8_t)~PS_ST_INCOMPLETE;
		}
	return true;
}

/*
 * load, save or delete of a block of nodes that hold pebbles (not products,
 * not computes: those take the element path).
 */
int ps_block_move(const struct ps_attention *att, struct ps_engine *e,
		  const struct ps_op *op)
{
	const enum ps_kind k = op->kind;
	const struct ps_coordset *c0 = &op->c[0], *c1 = &op->c[1];
	const uint64_t n0 = ps_coordset_size(c0), n1 = ps_coordset_size(c1);
	const uint64_t count = n0 * n1;
	uint8_t *st = e->state;
	uint64_t stride, base;
	uint8_t bad_if_set, bad_if_clear;
	bool forgotten;

	if (e->failed || ps_kinds[k].arity != 2 || ps_kinds[k].role == PS_ROLE_PRODUCT ||
	    !count || !increasing(c0) || !increasing(c1))
		return PS_BLOCK_DECLINED;
	if (op->code == PS_OP_LOAD && e->c.red + count > e->M)
		return PS_BLOCK_DECLINED;
	stride = stride_of(att, k);
	base = att->base[k];
	/* load: neither red nor not blue; save, delete: red */
	bad_if_set = op->code == PS_OP_LOAD ? PS_ST_RED : 0;
	bad_if_clear = op->code == PS_OP_LOAD ? PS_ST_BLUE : PS_ST_RED;
	for (uint64_t x = 0; x < n0; x++) {
		const uint8_t *row = st + base + ps_coordset_at(c0, x) * stride;
		uint8_t bad = 0;

		ROW_EACH(c1, q, c, bad |= (uint8_t)((row[c] & bad_if_set) | (~row[c] & bad_if_clear)));
		if (bad)
			return PS_BLOCK_DECLINED;
	}
	/* the block applies: the sums that go are forgotten now, or one by
	 * one below */
	forgotten = op->code != PS_OP_DELETE || ps_kinds[k].role != PS_ROLE_SUM ||
		    (att->exact && forget_exact_block(att, e, k, c0, c1));
	for (uint64_t x = 0; x < n0; x++) {
		const uint64_t first = base + ps_coordset_at(c0, x) * stride;
		uint8_t *row = st + first;

		switch (op->code) {
		case PS_OP_LOAD:
			ROW_EACH(c1, q, c, row[c] |= PS_ST_RED);
			break;
		case PS_OP_SAVE:
			ROW_EACH(c1, q, c, row[c] |= PS_ST_BLUE);
			break;
		default:
			/* a sum whose only copy goes starts again from nothing */
			if (!forgotten)
				ROW_EACH(c1, q, c, {
					if ((row[c] & PS_ST_SUM) && !(row[c] & PS_ST_BLUE))
						ps_engine_forget_sum(e, first + c);
				});
			ROW_EACH(c1, q, c, row[c] &= (uint8_t)~PS_ST_RED);
			break;
		}
	}
	switch (op->code) {
	case PS_OP_LOAD:
		e->c.red += count;
		e->c.loads += count;
		if (e->c.red > e->c.peak_red)
			e->c.peak_red = e->c.red;
		break;
	case PS_OP_SAVE:
		e->c.saves += count;
		break;
	default:
		e->c.red -= count;
		break;
	}
	e->c.moves += count;
	return PS_BLOCK_APPLIED;
}
