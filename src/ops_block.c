/*
 * The block path: a whole set operation judged and applied at once.
 *
 * For the operations that dominate every run (macs over blocks, and loads,
 * saves and deletes of blocks) the rules are checked for the whole block
 * before anything changes: every parent in fast memory, every sum
 * aggregated into neither in slow memory only nor complete nor holding one
 * of the block's edges, no list with a repeated value, and the capacity at
 * the block's peak. When all hold, every elementary move of the block
 * would succeed in order, and the block's effect (the same pebbles, edge
 * sets, counters and peak) is applied through the engine's operations on
 * blocks of rows (src/engine_state.h, struct ps_rows), a word of a plane
 * at a time and a block's sums with one record: its judging and its
 * changes take time in proportion to the words the block's nodes span,
 * its rows and its records, not to its macs. Exact attention's fused tiling goes further
 * (block_mac_exact): a tile of S aggregated whole, the tile of E computed
 * from it and its deletion are each a few operations on whole tiles, and
 * consecutive rows covered whole (Q[I, features], O[I, B]) are judged as
 * one run of nodes. When any check fails, nothing has changed and the
 * element path replays the block move by move, so the first violation,
 * its position and its message are exactly those of the element path.
 * tests/test_block.c compares both paths.
 */
#include "ops_block.h"

#include "engine_state.h"

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

/* The first id of row c0 of a two-coordinate kind. */
static ps_node row_of(const struct ps_attention *att, enum ps_kind k, uint64_t c0)
{
	return ps_attention_id2(att, k, c0, 0);
}

/* An applied block's counters: n0 x n1 x n2 macs, fused (n0 x n1 entries
 * computed and dropped around them) or not. */
static int block_counted(struct ps_engine *e, bool fuse, uint64_t n0, uint64_t n1,
			 uint64_t n2, uint64_t fresh, uint64_t recomputed, uint64_t peak)
{
	const struct ps_block_counts add = {
		.macs = n0 * n1 * n2,
		.moves = n0 * n1 * (n2 + (fuse ? 2 : 0)),
		.computes = fuse ? n0 * n1 : 0,
		.recomputations = recomputed,
		.red = fresh,
	};

	ps_engine_block_counted(e, &add, 0, peak);
	return PS_BLOCK_APPLIED;
}

/*
 * The rows rs of two-coordinate kind k, each at the columns cs below
 * limit: visited as one row when they are consecutive and the columns
 * cover them whole, for their nodes are then consecutive too.
 */
struct rows {
	const struct ps_attention *att;
	enum ps_kind k;
	const struct ps_coordset *rs;
	struct ps_coordset cols;
	uint64_t limit, count; /* count: the rows to visit */
	bool whole;
};

static struct rows rows_of(const struct ps_attention *att, enum ps_kind k,
			   const struct ps_coordset *rs, const struct ps_coordset *cs,
			   uint64_t limit)
{
	const uint64_t width = att->ext[k][1];
	struct rows r = { att, k, rs, *cs, limit, ps_coordset_size(rs), false };

	if (!rs->list && !cs->list && cs->lo == 0 && ps_min_u64(cs->hi, limit) == width) {
		r.whole = true;
		r.cols = ps_range(0, r.count * width);
		r.limit = UINT64_MAX;
		r.count = 1;
	}
	return r;
}

static ps_node rows_first(const struct rows *r, uint64_t x)
{
	return row_of(r->att, r->k, r->whole ? r->rs->lo : ps_coordset_at(r->rs, x));
}

/* Are all the nodes of the rows red? (A block of them, a word of the
 * plane at a time.) */
static bool rows_red(const struct ps_attention *att, const struct ps_engine *e,
		     enum ps_kind k, const struct ps_coordset *rs,
		     const struct ps_coordset *cs, uint64_t limit)
{
	struct ps_rows b;
	bool red;

	if (ps_rows_init(&b, row_of(att, k, 0), att->ext[k][1], rs, cs, limit))
		return false;
	red = ps_rows_all(e, PS_PLANE_RED, &b);
	ps_rows_free(&b);
	return red;
}

/* The tile of kind k (S or E) at rows rs and columns cs, both ranges. */
static struct ps_tile tile_of(const struct ps_attention *att, enum ps_kind k,
			      const struct ps_coordset *rs, const struct ps_coordset *cs)
{
	struct ps_tile t = { att->base[k], att->ext[k][1], rs->lo, rs->hi, cs->lo, cs->hi };

	return t;
}

/* Exact attention's tiles lie in S and E: written into the planes before
 * anything reads those rows or changes them row by row. */
static int settle_tiles(const struct ps_attention *att, struct ps_engine *e)
{
	int rc = ps_tiles_settle(e, att->base[PS_KIND_S],
				 att->base[PS_KIND_S] + att->count[PS_KIND_S]);

	return rc ? rc : ps_tiles_settle(e, att->base[PS_KIND_E],
					 att->base[PS_KIND_E] + att->count[PS_KIND_E]);
}

/*
 * A mac into S over ranges I, J and every feature, taking untouched sums
 * S[I, J] to red, complete ones: held as a tile (src/engine_state.h), in
 * time that does not grow with the tile. Declined otherwise: the rows
 * decide then.
 */
static int block_hold_s(const struct ps_attention *att, struct ps_engine *e,
			const struct ps_op *op)
{
	const struct ps_coordset *is = &op->c[0], *js = &op->c[1], *cs = &op->c[2];
	const uint64_t n0 = ps_coordset_size(is), n1 = ps_coordset_size(js);
	const struct ps_tile t = tile_of(att, PS_KIND_S, is, js);
	uint64_t peak;

	if (op->kind != PS_KIND_S || op->fuse || is->list || js->list || cs->list ||
	    cs->lo != 0 || cs->hi != att->d ||
	    !rows_red(att, e, PS_KIND_Q, is, cs, UINT64_MAX) ||
	    !rows_red(att, e, PS_KIND_K, js, cs, UINT64_MAX) || !ps_tile_untouched(e, &t))
		return PS_BLOCK_DECLINED;
	peak = e->c.red + n0 * n1 + 1;
	if (peak > e->M || !ps_tile_hold(e, &t))
		return PS_BLOCK_DECLINED;
	return block_counted(e, false, n0, n1, att->d, n0 * n1, 0, peak);
}

/*
 * Exact attention's macs (MODEL.md section 5): into S (products PS[i,j,a]:
 * edge a of S[i,j], parents Q[i,a] and K[j,a]) over rows I, J and features
 * A; into O (PO[i,j,b]: edge j of O[i,b], parents E[i,j] and V[j,b] for
 * b < d) over rows I, J and columns B, fused (E[i,j] computed from a red,
 * complete S[i,j] and dropped) or not (E red). S aggregated whole is held
 * as a tile; a fused mac over ranges takes S[I, J] from a held tile and
 * marks E[I, J] done as a tile (src/engine_state.h); anything else reads
 * the rows, once the tiles are written into them.
 */
static int block_mac_exact(const struct ps_attention *att, struct ps_engine *e,
			   const struct ps_op *op)
{
	const bool into_s = op->kind == PS_KIND_S, fuse = op->fuse;
	const struct ps_coordset *is = &op->c[0], *js = &op->c[1], *cs = &op->c[2];
	const uint64_t n0 = ps_coordset_size(is), n1 = ps_coordset_size(js);
	const uint64_t n2 = ps_coordset_size(cs);
	/* the sums are S[I, J] (edges A) or O[I, B] (edges J) */
	const enum ps_kind sum = into_s ? PS_KIND_S : PS_KIND_O;
	const struct ps_coordset *sum_cols = into_s ? js : cs, *edges = into_s ? cs : js;
	const uint64_t in_degree = ps_attention_in_degree(att, sum);
	const struct ps_tile s_tile = tile_of(att, PS_KIND_S, is, js);
	const struct ps_tile e_tile = tile_of(att, PS_KIND_E, is, js);
	uint64_t fresh = 0, recomputed = 0, peak;
	struct rows sums;
	struct ps_rows block; /* the sums, when their columns are a range */
	struct ps_edges ed;
	bool tiled; /* E[I, J] by tiles */
	int rc;

	if (e->failed || !n0 || !n1 || !n2 || !increasing(is) || !increasing(js) ||
	    !increasing(cs))
		return PS_BLOCK_DECLINED;
	if ((rc = block_hold_s(att, e, op)) != PS_BLOCK_DECLINED)
		return rc;
	tiled = fuse && !is->list && !js->list && ps_tile_held(e, &s_tile) &&
		ps_tile_fresh(e, &e_tile, &recomputed);
	if (!tiled && (rc = settle_tiles(att, e)))
		return rc;
	/* the parents: Q[I, A] and K[J, A]; or E[I, J] (or S[I, J] to compute
	 * it from) and V[J, B] */
	if (into_s ? !rows_red(att, e, PS_KIND_Q, is, cs, UINT64_MAX) ||
		     !rows_red(att, e, PS_KIND_K, js, cs, UINT64_MAX) :
	    !rows_red(att, e, PS_KIND_V, js, cs, att->d))
		return PS_BLOCK_DECLINED;
	for (uint64_t x = 0; !into_s && !tiled && x < n0; x++) {
		uint64_t i = ps_coordset_at(is, x);

		if (fuse ? !ps_row_none(e, PS_PLANE_RED, row_of(att, PS_KIND_E, i), js, UINT64_MAX) ||
			   !ps_row_complete(e, row_of(att, PS_KIND_S, i), js) :
			   !ps_row_all(e, PS_PLANE_RED, row_of(att, PS_KIND_E, i), js, UINT64_MAX))
			return PS_BLOCK_DECLINED;
		if (fuse)
			recomputed += ps_row_count(e, PS_PLANE_COMPUTED, row_of(att, PS_KIND_E, i),
						   js, UINT64_MAX);
	}
	/* the sums: not in slow memory only, none holding one of the edges */
	sums = rows_of(att, sum, is, sum_cols, UINT64_MAX);
	if (ps_edges_init(&ed, edges))
		return PS_BLOCK_DECLINED;
	if (ps_rows_init(&block, row_of(att, sum, 0), att->ext[sum][1], is, sum_cols, UINT64_MAX)) {
		ps_edges_free(&ed);
		return PS_BLOCK_DECLINED;
	}
	if (block.run && !ps_rows_sums_open(e, &block, &ed, &fresh))
		goto decline;
	for (uint64_t x = 0; !block.run && x < sums.count; x++)
		if (!ps_row_sums_open(e, rows_first(&sums, x), &sums.cols, &ed, &fresh))
			goto decline;
	/* the peak is reached at the block's last mac: every new sum, E
	 * (fused) and the product */
	peak = e->c.red + fresh + (fuse ? 2 : 1);
	if (peak > e->M)
		goto decline;

	/* every move would succeed: apply the block */
	rc = block.run ? ps_rows_sums_add(e, &block, &ed, in_degree) : PS_OK;
	for (uint64_t x = 0; !block.run && !rc && x < sums.count; x++)
		rc = ps_row_sums_add(e, rows_first(&sums, x), &sums.cols, &ed, in_degree);
	ps_rows_free(&block);
	if (rc) {
		ps_edges_free(&ed);
		return rc;
	}
	for (uint64_t x = 0; fuse && !tiled && x < n0; x++)
		if ((rc = ps_row_flag(e, PS_PLANE_COMPUTED,
				      row_of(att, PS_KIND_E, ps_coordset_at(is, x)), js,
				      UINT64_MAX, true))) {
			ps_edges_free(&ed);
			return rc;
		}
	ps_edges_free(&ed);
	if (tiled && (rc = ps_tile_mark_computed(e, &e_tile)))
		return rc;
	return block_counted(e, fuse, n0, n1, n2, fresh, recomputed, peak);
decline:
	ps_rows_free(&block);
	ps_edges_free(&ed);
	return PS_BLOCK_DECLINED;
}

/* The features the monomials ms read (the union of their supports), as an
 * increasing list in buf (d entries). */
static struct ps_coordset features_of(const struct ps_attention *att,
				      const struct ps_coordset *ms, uint64_t *buf,
				      uint8_t *seen)
{
	size_t len = 0;

	memset(seen, 0, att->d);
	for (uint64_t y = 0; y < ps_coordset_size(ms); y++) {
		uint64_t m = ps_coordset_at(ms, y);
		const uint32_t *sup = ps_monomial_support(&att->mono, m);

		for (uint8_t q = 0; q < att->mono.support_size[m]; q++)
			seen[sup[q]] = 1;
	}
	for (uint64_t a = 0; a < att->d; a++)
		if (seen[a])
			buf[len++] = a;
	return ps_list(buf, len);
}

/*
 * A fused mac's entries U[rows, M], none red, computed: as runs of rows
 * per monomial when the rows are consecutive (their cost is then the
 * monomials', not the rows'), else bit by bit; *recomputed adds those
 * computed before.
 */
static int mark_entries(const struct ps_attention *att, struct ps_engine *e, enum ps_kind plain,
			const struct ps_coordset *rows, const struct ps_coordset *ms,
			const struct ps_rows *entries, uint64_t *recomputed)
{
	int rc = ps_runs_mark_computed(e, row_of(att, plain, 0), att->ext[plain][1],
				       att->ext[plain][0], rows, ms, recomputed);

	return rc == 1 ? ps_rows_add(e, PS_PLANE_COMPUTED, entries, recomputed) : rc;
}

/*
 * A mac into N (products P1[i,m,b]: edge m of N[i,b], parents U1[i,m] and
 * H[m,b]) or into H (P2[j,m,b]: edge j of H[m,b], parents U2[j,m] and
 * V[j,b] for b < d), fused or not.
 */
static int block_mac_approx(const struct ps_attention *att, struct ps_engine *e,
			    const struct ps_op *op, const struct ps_coordset *feats)
{
	const bool into_h = op->kind == PS_KIND_H, fuse = op->fuse;
	const struct ps_coordset *rows = &op->c[0], *ms = &op->c[1], *bs = &op->c[2];
	const uint64_t n0 = ps_coordset_size(rows), n1 = ps_coordset_size(ms);
	const uint64_t n2 = ps_coordset_size(bs);
	const enum ps_kind plain = into_h ? PS_KIND_U2 : PS_KIND_U1;
	const enum ps_kind from = into_h ? PS_KIND_K : PS_KIND_Q;
	const enum ps_kind sum = into_h ? PS_KIND_H : PS_KIND_N;
	/* the sums are H[M, B] (edges: the rows) or N[I, B] (edges: M) */
	const struct ps_coordset *outer = into_h ? ms : rows, *edges = into_h ? rows : ms;
	const uint64_t in_degree = into_h ? att->n : att->r;
	uint64_t fresh = 0, recomputed = 0, peak;
	struct ps_edges ed;
	/* the entries U[rows, M]; the parents Q or K[rows, features] (fused),
	 * and V[rows, B] (into H) or H[M, B] (into N) */
	struct ps_rows entries, features, other, sums;
	int rc = PS_BLOCK_DECLINED;

	if (ps_edges_init(&ed, edges))
		return PS_BLOCK_DECLINED;
	if (ps_rows_init(&entries, row_of(att, plain, 0), att->ext[plain][1], rows, ms, UINT64_MAX)) {
		ps_edges_free(&ed);
		return PS_BLOCK_DECLINED;
	}
	if (ps_rows_init(&features, row_of(att, from, 0), att->d, rows, feats, UINT64_MAX))
		goto free_entries;
	if (into_h ? ps_rows_init(&other, row_of(att, PS_KIND_V, 0), att->d, rows, bs, att->d) :
		     ps_rows_init(&other, row_of(att, PS_KIND_H, 0), att->ext[PS_KIND_H][1], ms, bs,
				  UINT64_MAX))
		goto free_features;
	if (ps_rows_init(&sums, row_of(att, sum, 0), att->ext[sum][1], outer, bs, UINT64_MAX))
		goto free_other;
	/* fused: the entries are computed, so none red yet, and their
	 * features red; otherwise they are red parents. Into H, V red; into
	 * N, every H[m,b] a red, complete parent */
	if ((fuse ? !ps_rows_all(e, PS_PLANE_RED, &features) ||
		    !ps_rows_none(e, PS_PLANE_RED, &entries) :
		    !ps_rows_all(e, PS_PLANE_RED, &entries)) ||
	    !ps_rows_all(e, PS_PLANE_RED, &other) ||
	    (!into_h && !ps_rows_all(e, PS_PLANE_COMPLETE, &other)))
		goto done;
	/* the sums: not in slow memory only, none holding one of the edges;
	 * a block of them at once when their columns are a range */
	if (sums.run && !ps_rows_sums_open(e, &sums, &ed, &fresh))
		goto done;
	for (uint64_t x = 0; !sums.run && x < ps_coordset_size(outer); x++)
		if (!ps_row_sums_open(e, row_of(att, sum, ps_coordset_at(outer, x)), bs, &ed,
				      &fresh))
			goto done;
	/* the peak is reached at the block's last mac: every new sum, the
	 * regenerated entry (fused) and the product */
	peak = e->c.red + fresh + (fuse ? 2 : 1);
	if (peak > e->M)
		goto done;

	/* every move would succeed: apply the block (a failure now is out of
	 * memory, not a verdict) */
	rc = sums.run ? ps_rows_sums_add(e, &sums, &ed, in_degree) : PS_OK;
	for (uint64_t x = 0; !sums.run && x < ps_coordset_size(outer) && !rc; x++)
		rc = ps_row_sums_add(e, row_of(att, sum, ps_coordset_at(outer, x)), bs, &ed,
				     in_degree);
	if (fuse && !rc)
		rc = mark_entries(att, e, plain, rows, ms, &entries, &recomputed);
	if (!rc)
		rc = block_counted(e, fuse, n0, n1, n2, fresh, recomputed, peak);
done:
	ps_rows_free(&sums);
free_other:
	ps_rows_free(&other);
free_features:
	ps_rows_free(&features);
free_entries:
	ps_rows_free(&entries);
	ps_edges_free(&ed);
	return rc;
}

int ps_block_mac(const struct ps_attention *att, struct ps_engine *e,
		 const struct ps_op *op)
{
	uint64_t small_buf[64], *buf = small_buf;
	uint8_t small_seen[64], *seen = small_seen;
	struct ps_coordset feats;
	int rc;

	if (att->exact)
		return block_mac_exact(att, e, op);
	if (e->failed || !ps_coordset_size(&op->c[0]) || !ps_coordset_size(&op->c[1]) ||
	    !ps_coordset_size(&op->c[2]) || !increasing(&op->c[0]) ||
	    !increasing(&op->c[1]) || !increasing(&op->c[2]))
		return PS_BLOCK_DECLINED;
	if (att->d > 64) {
		buf = malloc(att->d * sizeof(*buf));
		seen = malloc(att->d);
		if (!buf || !seen) {
			free(buf);
			free(seen);
			return PS_BLOCK_DECLINED;
		}
	}
	feats = op->fuse ? features_of(att, &op->c[1], buf, seen) : ps_range(0, 0);
	rc = block_mac_approx(att, e, op, &feats);
	if (buf != small_buf) {
		free(buf);
		free(seen);
	}
	return rc;
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
	struct ps_block_counts add = { .array = (unsigned)k };
	struct ps_rows b;
	int rc = PS_OK;

	if (e->failed || ps_kinds[k].arity != 2 || ps_kinds[k].role == PS_ROLE_PRODUCT ||
	    !count || !increasing(c0) || !increasing(c1))
		return PS_BLOCK_DECLINED;
	if (k == PS_KIND_S || k == PS_KIND_E) {
		/* a held tile deleted whole, or the tiles written out */
		if (op->code == PS_OP_DELETE && k == PS_KIND_S && !c0->list && !c1->list) {
			const struct ps_tile t = tile_of(att, k, c0, c1);

			if (ps_tile_release(e, &t)) {
				add.moves = count;
				ps_engine_block_counted(e, &add, count, e->c.red);
				return PS_BLOCK_APPLIED;
			}
		}
		if ((rc = settle_tiles(att, e)))
			return rc;
	}
	if (op->code == PS_OP_LOAD && e->c.red + count > e->M)
		return PS_BLOCK_DECLINED;
	if (ps_rows_init(&b, row_of(att, k, 0), att->ext[k][1], c0, c1, UINT64_MAX))
		return PS_BLOCK_DECLINED;
	/* load: neither red nor not blue (an input is always blue: nothing
	 * takes its blue pebble); save, delete: red */
	if (op->code == PS_OP_LOAD ? !ps_rows_none(e, PS_PLANE_RED, &b) ||
				     (ps_kinds[k].role != PS_ROLE_INPUT &&
				      !ps_rows_all(e, PS_PLANE_BLUE, &b)) :
	    !ps_rows_all(e, PS_PLANE_RED, &b)) {
		ps_rows_free(&b);
		return PS_BLOCK_DECLINED;
	}
	if (op->code == PS_OP_DELETE && ps_kinds[k].role == PS_ROLE_INPUT)
		rc = ps_rows_flag(e, PS_PLANE_RED, &b, false); /* blue: nothing is lost */
	else if (op->code == PS_OP_DELETE)
		ps_rows_delete(e, &b);
	else
		rc = ps_rows_flag(e, op->code == PS_OP_LOAD ? PS_PLANE_RED : PS_PLANE_BLUE, &b, true);
	ps_rows_free(&b);
	if (rc)
		return rc;
	add.moves = count;
	add.loads = op->code == PS_OP_LOAD ? count : 0;
	add.saves = op->code == PS_OP_SAVE ? count : 0;
	/* the attention DAGs number their arrays by kind (add.array) */
	add.red = op->code == PS_OP_LOAD ? count : 0;
	ps_engine_block_counted(e, &add, op->code == PS_OP_DELETE ? count : 0,
				e->c.red + add.red);
	return PS_BLOCK_APPLIED;
}
