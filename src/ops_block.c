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

#include "bits.h"
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
	/* causal O: each row's in-degree, so each row its own record */
	const bool by_row = !ps_attention_in_degree_uniform(att, sum);
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
	if (by_row) { /* never one run: row by row */
		sums.whole = false;
		sums.cols = *sum_cols;
		sums.count = n0;
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
	rc = block.run && !by_row ? ps_rows_sums_add(e, &block, &ed, in_degree) : PS_OK;
	for (uint64_t x = 0; (!block.run || by_row) && !rc && x < sums.count; x++)
		rc = ps_row_sums_add(e, rows_first(&sums, x), &sums.cols, &ed,
				     ps_attention_in_degree_at(att, sum, ps_coordset_at(is, x)));
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

	uint64_t found = 0;

	memset(seen, 0, att->d);
	/* until every feature is found */
	for (uint64_t y = 0; y < ps_coordset_size(ms) && found < att->d; y++) {
		uint64_t m = ps_coordset_at(ms, y);
		const uint32_t *sup = ps_monomial_support(&att->mono, m);

		for (uint8_t q = 0; q < att->mono.support_size[m]; q++) {
			found += !seen[sup[q]];
			seen[sup[q]] = 1;
		}
	}
	for (uint64_t a = 0; a < att->d; a++)
		if (seen[a])
			buf[len++] = a;
	return ps_list(buf, len);
}

/* The features of a set of monomials, in a buffer of d entries of its
 * own (on the stack up to 64). */
struct features {
	uint64_t small_buf[64], *buf;
	uint8_t small_seen[64], *seen;
	struct ps_coordset set;
};

static int features_find(const struct ps_attention *att, const struct ps_coordset *ms,
			 struct features *f)
{
	f->buf = f->small_buf;
	f->seen = f->small_seen;
	if (att->d > 64) {
		f->buf = malloc(att->d * sizeof(*f->buf));
		f->seen = malloc(att->d);
		if (!f->buf || !f->seen) {
			free(f->buf);
			free(f->seen);
			f->buf = f->small_buf;
			f->seen = f->small_seen;
			return PS_ENOMEM;
		}
	}
	f->set = features_of(att, ms, f->buf, f->seen);
	return PS_OK;
}

static void features_free(struct features *f)
{
	if (f->buf != f->small_buf) {
		free(f->buf);
		free(f->seen);
	}
}

/*
 * Computes of U1[rows, M] (from Q) or U2[rows, M] (from K), rows and M
 * increasing: may they be made (every entry not red, every feature their
 * monomials read red in every row)? Then they are computed (*had counts
 * those computed before) and, red or else blue (stored: computed, saved
 * and dropped), marked. The caller checks the room and counts the moves.
 */
static int compute_u(const struct ps_attention *att, struct ps_engine *e, enum ps_kind k,
		     const struct ps_coordset *rows, const struct ps_coordset *ms, bool stored,
		     uint64_t *had)
{
	const enum ps_kind from = k == PS_KIND_U1 ? PS_KIND_Q : PS_KIND_K;
	struct features f;
	struct ps_rows entries, parents;
	int rc;

	if ((rc = features_find(att, ms, &f)))
		return rc;
	/* the computed bits held as runs of rows are written out first */
	if ((rc = ps_tiles_settle(e, att->base[k], att->base[k] + att->count[k]))) {
		features_free(&f);
		return rc;
	}
	if (ps_rows_init(&entries, row_of(att, k, 0), att->ext[k][1], rows, ms, UINT64_MAX)) {
		features_free(&f);
		return PS_ENOMEM;
	}
	if (ps_rows_init(&parents, row_of(att, from, 0), att->d, rows, &f.set, UINT64_MAX)) {
		ps_rows_free(&entries);
		features_free(&f);
		return PS_ENOMEM;
	}
	rc = PS_BLOCK_DECLINED;
	if (ps_rows_none(e, PS_PLANE_RED, &entries) &&
	    (!ps_coordset_size(&f.set) || ps_rows_all(e, PS_PLANE_RED, &parents)) &&
	    !(rc = ps_rows_add(e, PS_PLANE_COMPUTED, &entries, had)) &&
	    !(rc = ps_rows_flag(e, stored ? PS_PLANE_BLUE : PS_PLANE_RED, &entries, true)))
		rc = PS_BLOCK_APPLIED;
	ps_rows_free(&parents);
	ps_rows_free(&entries);
	features_free(&f);
	return rc;
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

/* The causal state's row j at monomials ms and columns bs, as a block of
 * rows (m, b) of |B| columns. */
static int state_rows(const struct ps_attention *att, uint64_t j, const struct ps_coordset *ms,
		      const struct ps_coordset *bs, struct ps_rows *b)
{
	return ps_rows_init(b, ps_attention_id3(att, PS_KIND_HJ, j, 0, 0), att->nb, ms, bs,
			    UINT64_MAX);
}

/* Are the state's cells of row j at ms x bs all red and complete (an
 * input, decoding's H[P-1], red)? */
static int state_ready(const struct ps_attention *att, const struct ps_engine *e, uint64_t j,
		       const struct ps_coordset *ms, const struct ps_coordset *bs)
{
	const bool input = ps_attention_role(att, PS_KIND_HJ, j) == PS_ROLE_INPUT;
	struct ps_rows b;
	bool ok;

	if (state_rows(att, j, ms, bs, &b))
		return PS_ENOMEM;
	ok = ps_rows_all(e, PS_PLANE_RED, &b) && (input || ps_rows_all(e, PS_PLANE_COMPLETE, &b));
	ps_rows_free(&b);
	return ok ? PS_BLOCK_APPLIED : PS_BLOCK_DECLINED;
}

/*
 * Causal approximate attention's macs (MODEL.md section 7), the rows one
 * at a time for the state: into H over (j, M, B) of P2[j,m,b] (in-edge 0
 * of H[j,m,b], parents U2[j,m] and V[j,b] for b < d), fused or not, or of
 * the carry HC[j,m,b] (in-edge 1, parent H[j-1,m,b] red and complete);
 * into N over (I, M, B) of P1[i,m,b] (parents U1[i,m] and the state
 * H[i,m,b], red and complete), fused or not.
 */
static int block_mac_causal(const struct ps_attention *att, struct ps_engine *e,
			    const struct ps_op *op, const struct ps_coordset *feats)
{
	const bool into_h = op->kind == PS_KIND_HJ, fuse = op->fuse, carry = op->carry;
	const struct ps_coordset *rows = &op->c[0], *ms = &op->c[1], *bs = &op->c[2];
	const uint64_t n0 = ps_coordset_size(rows), n1 = ps_coordset_size(ms);
	const uint64_t n2 = ps_coordset_size(bs), j = ps_coordset_at(rows, 0);
	const enum ps_kind plain = into_h ? PS_KIND_U2 : PS_KIND_U1;
	const enum ps_kind from = into_h ? PS_KIND_K : PS_KIND_Q;
	const uint64_t edge = carry ? 1 : 0;
	const struct ps_coordset one_edge = ps_range(edge, edge + 1);
	/* the sums: H[j, M, B] (one edge) or N[I, B] (edges M) */
	const struct ps_coordset *edges = into_h ? &one_edge : ms;
	const uint64_t in_degree = into_h ? ps_attention_in_degree_at(att, PS_KIND_HJ, j) : att->r;
	uint64_t fresh = 0, recomputed = 0, peak;
	struct ps_edges ed;
	struct ps_rows entries, features, sums;
	bool ok = true;
	int rc = PS_BLOCK_DECLINED;

	if (into_h && n0 != 1)
		return PS_BLOCK_DECLINED;
	/* the parents: H[j-1, M, B] (the carry), V[j, B] (into H), every
	 * H[i, M, B] (into N) */
	if (into_h && carry)
		rc = state_ready(att, e, j - 1, ms, bs);
	else if (into_h)
		rc = rows_red(att, e, PS_KIND_V, rows, bs, att->d) ? PS_BLOCK_APPLIED : PS_BLOCK_DECLINED;
	for (uint64_t x = 0; !into_h && x < n0 && (x == 0 || rc == PS_BLOCK_APPLIED); x++)
		rc = state_ready(att, e, ps_coordset_at(rows, x), ms, bs);
	if (rc != PS_BLOCK_APPLIED)
		return rc;
	if (ps_edges_init(&ed, edges))
		return PS_BLOCK_DECLINED;
	rc = PS_BLOCK_DECLINED;
	if (ps_rows_init(&entries, row_of(att, plain, 0), att->ext[plain][1], rows, ms, UINT64_MAX)) {
		ps_edges_free(&ed);
		return PS_BLOCK_DECLINED;
	}
	if (ps_rows_init(&features, row_of(att, from, 0), att->d, rows, feats, UINT64_MAX))
		goto free_entries;
	if (into_h ? state_rows(att, j, ms, bs, &sums) :
		     ps_rows_init(&sums, row_of(att, PS_KIND_N, 0), att->nb, rows, bs, UINT64_MAX))
		goto free_features;
	/* fused: the entries computed, none red yet, their features red;
	 * otherwise red parents; the carry has none */
	if (!carry && (fuse ? !ps_rows_all(e, PS_PLANE_RED, &features) ||
			      !ps_rows_none(e, PS_PLANE_RED, &entries) :
			      !ps_rows_all(e, PS_PLANE_RED, &entries)))
		goto done;
	/* the sums: not in slow memory only, none holding the edges */
	if (sums.run)
		ok = ps_rows_sums_open(e, &sums, &ed, &fresh);
	for (uint64_t x = 0; ok && !sums.run && x < (into_h ? n1 : n0); x++)
		ok = ps_row_sums_open(e, into_h ? ps_attention_id3(att, PS_KIND_HJ, j, ps_coordset_at(ms, x), 0) :
					 row_of(att, PS_KIND_N, ps_coordset_at(rows, x)),
				      bs, &ed, &fresh);
	peak = e->c.red + fresh + (fuse ? 2 : 1);
	if (!ok || peak > e->M)
		goto done;

	/* every move would succeed: apply the block */
	rc = sums.run ? ps_rows_sums_add(e, &sums, &ed, in_degree) : PS_OK;
	for (uint64_t x = 0; !sums.run && !rc && x < (into_h ? n1 : n0); x++)
		rc = ps_row_sums_add(e, into_h ? ps_attention_id3(att, PS_KIND_HJ, j, ps_coordset_at(ms, x), 0) :
					row_of(att, PS_KIND_N, ps_coordset_at(rows, x)),
				     bs, &ed, in_degree);
	if (fuse && !rc)
		rc = mark_entries(att, e, plain, rows, ms, &entries, &recomputed);
	if (!rc)
		rc = block_counted(e, fuse, n0, n1, n2, fresh, recomputed, peak);
done:
	ps_rows_free(&sums);
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
	struct features f;
	int rc;

	if (att->exact)
		return block_mac_exact(att, e, op);
	if (e->failed || !ps_coordset_size(&op->c[0]) || !ps_coordset_size(&op->c[1]) ||
	    !ps_coordset_size(&op->c[2]) || !increasing(&op->c[0]) ||
	    !increasing(&op->c[1]) || !increasing(&op->c[2]))
		return PS_BLOCK_DECLINED;
	if (!op->fuse) {
		const struct ps_coordset none = ps_range(0, 0);

		return att->causal ? block_mac_causal(att, e, op, &none) :
		       block_mac_approx(att, e, op, &none);
	}
	if (features_find(att, &op->c[1], &f))
		return PS_BLOCK_DECLINED;
	rc = att->causal ? block_mac_causal(att, e, op, &f.set) : block_mac_approx(att, e, op, &f.set);
	features_free(&f);
	return rc;
}

/*
 * load, save or delete of the causal state's cells over (J, M, B), a row
 * j at a time: every row's block none red and all blue (load, with room
 * for them all) or all red (save, delete); then applied row by row.
 */
static int block_move_state(const struct ps_attention *att, struct ps_engine *e,
			    const struct ps_op *op)
{
	const struct ps_coordset *js = &op->c[0];
	const uint64_t rows = ps_coordset_size(js);
	const uint64_t count = rows * ps_coordset_size(&op->c[1]) * ps_coordset_size(&op->c[2]);
	struct ps_block_counts add = { .array = ps_kind_array(PS_KIND_HJ), .moves = count };
	struct ps_rows b;
	enum ps_role role;
	bool ok = true;
	int rc = PS_OK;

	if (!count || !increasing(&op->c[1]) || !increasing(&op->c[2]) || !increasing(js) ||
	    (op->code == PS_OP_LOAD && e->c.red + count > e->M))
		return PS_BLOCK_DECLINED;
	/* the rows' one role: decoding's input H[P-1] is always blue */
	role = ps_attention_role_rows(att, PS_KIND_HJ, ps_coordset_at(js, 0),
				      ps_coordset_at(js, rows - 1) + 1);
	if (role == PS_ROLE_PRODUCT || (role == PS_ROLE_INPUT && op->code == PS_OP_SAVE))
		return PS_BLOCK_DECLINED;
	for (uint64_t x = 0; ok && x < rows; x++) {
		if (state_rows(att, ps_coordset_at(js, x), &op->c[1], &op->c[2], &b))
			return PS_BLOCK_DECLINED;
		ok = op->code == PS_OP_LOAD ? ps_rows_none(e, PS_PLANE_RED, &b) &&
					      (role == PS_ROLE_INPUT || ps_rows_all(e, PS_PLANE_BLUE, &b)) :
		     ps_rows_all(e, PS_PLANE_RED, &b);
		ps_rows_free(&b);
	}
	if (!ok)
		return PS_BLOCK_DECLINED;
	for (uint64_t x = 0; !rc && x < rows; x++) {
		if ((rc = state_rows(att, ps_coordset_at(js, x), &op->c[1], &op->c[2], &b)))
			return rc;
		if (op->code == PS_OP_DELETE && role == PS_ROLE_INPUT)
			rc = ps_rows_flag(e, PS_PLANE_RED, &b, false); /* blue: nothing is lost */
		else if (op->code == PS_OP_DELETE)
			ps_rows_delete(e, &b);
		else
			rc = ps_rows_flag(e, op->code == PS_OP_LOAD ? PS_PLANE_RED : PS_PLANE_BLUE,
					  &b, true);
		ps_rows_free(&b);
	}
	if (rc)
		return rc;
	add.loads = op->code == PS_OP_LOAD ? count : 0;
	add.saves = op->code == PS_OP_SAVE ? count : 0;
	add.red = add.loads;
	ps_engine_block_counted(e, &add, op->code == PS_OP_DELETE ? count : 0,
				e->c.red + add.red);
	return PS_BLOCK_APPLIED;
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
	enum ps_role role;
	int rc = PS_OK;

	if (!e->failed && k == PS_KIND_HJ)
		return block_move_state(att, e, op);
	if (e->failed || ps_kinds[k].arity != 2 || !count || !increasing(c0) || !increasing(c1))
		return PS_BLOCK_DECLINED;
	/* the rows' one role (decoding: the prompt's or the generated rows') */
	role = ps_attention_role_rows(att, k, ps_coordset_at(c0, 0), ps_coordset_at(c0, n0 - 1) + 1);
	if (role == PS_ROLE_PRODUCT)
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
				     (role != PS_ROLE_INPUT &&
				      !ps_rows_all(e, PS_PLANE_BLUE, &b)) :
	    !ps_rows_all(e, PS_PLANE_RED, &b)) {
		ps_rows_free(&b);
		return PS_BLOCK_DECLINED;
	}
	if (op->code == PS_OP_DELETE && role == PS_ROLE_INPUT)
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

/* A loop applied: the loads of each of its loaded kinds, then its other
 * counters (rest), all with the loop's peak. */
static void loop_counted(struct ps_engine *e, const enum ps_kind *kinds, const uint64_t *loads,
			 unsigned count, const struct ps_block_counts *rest, uint64_t peak)
{
	for (unsigned q = 0; q < count; q++) {
		const struct ps_block_counts add = { .loads = loads[q], .array = (unsigned)kinds[q] };

		ps_engine_block_counted(e, &add, 0, peak);
	}
	ps_engine_block_counted(e, rest, 0, peak);
}

/* ---- loops of operations ------------------------------------------------ */

/*
 * The loops the block path judges whole (struct ps_repeat): a stream of
 * blocks through a fixed block of sums. Each iteration loads the blocks
 * a mac reads (its parents, each a block that moves with the loop), makes
 * the mac (not fused) into sums that stay, and deletes what it loaded:
 *
 *   into H[M, B]: load U2[J, M] and V[J, B below d], mac over (J, M, B),
 *                 delete both; J moves (the edges of H are the rows)
 *   into N[I, B]: load U1[I, M] and H[M, B], mac over (I, M, B), delete
 *                 both; M moves (the edges of N are the monomials)
 *
 * The moving coordinate's windows follow each other without gap or
 * overlap, so the iterations' loaded blocks are disjoint: each iteration
 * finds its blocks as they were before the loop, loads them (none red,
 * each blue; H complete, as a mac's parent must be), and leaves them as
 * it found them (deleted, their blue copies kept). What changes is the
 * sums' in-edges, by the union of the windows, and the sums made red by
 * the first mac. So every move of the loop succeeds exactly when: every
 * loaded block over all the windows is none red and all blue (H also
 * complete), the sums may take the union of the edges (no sum in slow
 * memory only, none complete, none holding one of them), and the peak
 * (the red pebbles before, the sums made red, one iteration's loads and
 * the product) fits in M. Anything else is declined, and the engine
 * applies the loop op by op.
 */

/* A block the loop loads: kind, coordinates (the window of iteration 0)
 * and their steps. */
struct loaded {
	enum ps_kind kind;
	struct ps_coordset c[2];
	uint64_t step[2];
	bool complete; /* a sum read as a mac's parent */
};

static bool same_set(const struct ps_coordset *a, const struct ps_coordset *b)
{
	return a->list == b->list && (a->list ? a->len == b->len : a->lo == b->lo && a->hi == b->hi);
}

static int compare_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The count values, sorted into buf: false when one repeats or is not
 * below extent. Values already increasing (windows that follow each
 * other) are copied; a few are sorted in place, values below 2^16 through
 * a bitmap, others by qsort. */
static bool sorted_set(const uint64_t *values, size_t count, uint64_t extent, uint64_t *buf)
{
	bool increasing = true;

	for (size_t q = 0; q < count; q++) {
		if (values[q] >= extent)
			return false;
		increasing &= q == 0 || values[q] > values[q - 1];
	}
	if (increasing) {
		memcpy(buf, values, count * sizeof(*buf));
		return true;
	}
	if (count > 16 && extent <= (UINT64_C(1) << 16)) {
		uint64_t bits[1024];
		size_t len = 0;

		memset(bits, 0, (extent + 63) / 64 * sizeof(bits[0]));
		for (size_t q = 0; q < count; q++) {
			const uint64_t v = values[q], bit = UINT64_C(1) << (v & 63);

			if (bits[v >> 6] & bit)
				return false;
			bits[v >> 6] |= bit;
		}
		for (uint64_t w = 0; len < count; w++)
			for (uint64_t word = bits[w]; word; word &= word - 1)
				buf[len++] = (w << 6) + ps_lowest_bit64(word);
		return true;
	}
	for (size_t q = 0; q < count; q++) {
		size_t at = q;

		if (count > 16) {
			buf[q] = values[q];
			continue;
		}
		while (at && buf[at - 1] > values[q]) {
			buf[at] = buf[at - 1];
			at--;
		}
		buf[at] = values[q];
	}
	if (count > 16)
		qsort(buf, count, sizeof(*buf), compare_u64);
	for (size_t q = 1; q < count; q++)
		if (buf[q] <= buf[q - 1])
			return false;
	return true;
}

/* Does op k of the loop load (or delete) block l, as it moves? */
static bool op_is_block(const struct ps_repeat *r, size_t k, const struct loaded *l)
{
	const struct ps_op *op = &r->body[k];

	return op->kind == l->kind && same_set(&op->c[0], &l->c[0]) &&
	       same_set(&op->c[1], &l->c[1]) && r->step[k][0] == l->step[0] &&
	       r->step[k][1] == l->step[1] && r->step[k][2] == 0;
}

/* Every op of the loop passes ps_op_check: its first and last iteration
 * (ranges move linearly; lists are checked value by value elsewhere). */
static bool repeat_checked(const struct ps_attention *att, const struct ps_repeat *r)
{
	struct ps_error err;

	for (size_t k = 0; k < r->len; k++) {
		struct ps_op first, last;

		ps_repeat_op(r, 0, k, &first);
		ps_repeat_op(r, r->count - 1, k, &last);
		if (first.by_id || ps_op_check(att, &first, &err) || ps_op_check(att, &last, &err))
			return false;
	}
	return true;
}

/* The loop's blocks over every window, judged and applied (the sets in
 * the union form: the moving coordinate's union, lists sorted). */
struct stream {
	const struct ps_attention *att;
	struct loaded load[2];
	unsigned loads;
	const struct ps_op *mac;
	unsigned moving; /* the mac's moving coordinate: its edges */
	struct ps_coordset edges, fixed; /* the union of the windows; the sums' rows */
	uint64_t *buf;   /* the union sorted, then the fixed list sorted */
};

/* Block l over every window, in the union form. */
static int loaded_rows(const struct stream *st, const struct loaded *l, struct ps_rows *b)
{
	const struct ps_attention *att = st->att;
	struct ps_coordset c[2] = { l->c[0], l->c[1] };

	for (unsigned p = 0; p < 2; p++) {
		if (l->step[p])
			c[p] = st->edges;
		else if (c[p].list)
			c[p] = st->fixed; /* the one fixed list, the mac's M */
	}
	return ps_rows_init(b, row_of(att, l->kind, 0), att->ext[l->kind][1], &c[0], &c[1],
			    UINT64_MAX);
}

/*
 * The other loop the block path judges whole: U1 or U2 stored a window
 * of monomials at a time, rows I fixed (their Q or K loaded before),
 *
 *   compute U[I, M], save U[I, M], delete U[I, M]; M moves
 *
 * Each iteration computes its window (none red, their features red in
 * every row, room for the window), saves it and drops it: the windows,
 * following each other without gap or overlap, end computed and blue,
 * none red. So every move succeeds exactly when U[I, union of windows]
 * is none red, the features every monomial of the union reads are red
 * in every row, and one window fits in M.
 */
static int repeat_stored_u(const struct ps_attention *att, struct ps_engine *e,
			   const struct ps_repeat *r)
{
	const struct ps_op *op = &r->body[0];
	const enum ps_kind k = op->kind;
	const uint64_t step = r->step[0][1], window = ps_coordset_size(&op->c[1]);
	const uint64_t per = ps_coordset_size(&op->c[0]) * window;
	uint64_t *ms_buf = NULL, had = 0;
	struct ps_coordset union_ms;
	int rc = PS_BLOCK_DECLINED;

	if ((k != PS_KIND_U1 && k != PS_KIND_U2) || !window || step != window ||
	    r->count > UINT64_MAX / step || !increasing(&op->c[0]) || e->c.red + per > e->M)
		return PS_BLOCK_DECLINED;
	for (size_t q = 0; q < 3; q++) {
		static const enum ps_opcode codes[] = { PS_OP_COMPUTE, PS_OP_SAVE, PS_OP_DELETE };
		const struct ps_op *b = &r->body[q];

		if (b->code != codes[q] || b->kind != k || b->by_id || b->fuse ||
		    !same_set(&b->c[0], &op->c[0]) || !same_set(&b->c[1], &op->c[1]) ||
		    r->step[q][0] || r->step[q][1] != step || r->step[q][2])
			return PS_BLOCK_DECLINED;
	}
	if (op->c[1].list) {
		if (!(ms_buf = malloc(r->count * step * sizeof(*ms_buf))))
			return PS_ENOMEM;
		if (!sorted_set(op->c[1].list, r->count * step, att->r, ms_buf))
			goto out;
		union_ms = ps_list(ms_buf, r->count * step);
	} else {
		union_ms = ps_range(op->c[1].lo, op->c[1].lo + r->count * step);
		if (union_ms.hi > att->r)
			goto out;
	}
	if ((rc = compute_u(att, e, k, &op->c[0], &union_ms, true, &had)) == PS_BLOCK_APPLIED) {
		const struct ps_block_counts add = {
			.moves = 3 * r->count * per, .computes = r->count * per,
			.recomputations = had, .saves = r->count * per, .array = (unsigned)k,
		};

		ps_engine_block_counted(e, &add, 0, e->c.red + per);
	}
out:
	free(ms_buf);
	return rc;
}

/*
 * Exact attention's key loop (flash): for every block J of key rows,
 *
 *   load K[J, A], load V[J, A], mac into S over (I, J, A), fused mac into
 *   O over (I, J, B), delete S[I, J], delete K[J, A], delete V[J, A]
 *
 * with A every feature, B every column, J moving. Each iteration loads
 * rows no other touches and leaves them as it found them (inputs: always
 * blue); it aggregates S[I, J] whole from untouched sums and deletes it,
 * untouched again (no blue copy); it computes E[I, J] and drops it. So
 * every move succeeds exactly when K and V over the union of J are none
 * red, Q[I, A] is red, S over I x union is untouched, E over I x union
 * is none red and within done tiles or apart from every computed node
 * (ps_tile_fresh), O[I, B] may take the union of J, and the peak (the
 * red pebbles before, K and V of one J, S[I, J], the sums made red, E
 * and the product) fits; then O takes the union and E[I, union] is done.
 */
static int repeat_flash(const struct ps_attention *att, struct ps_engine *e,
			const struct ps_repeat *r)
{
	static const enum ps_opcode codes[] = { PS_OP_LOAD, PS_OP_LOAD, PS_OP_MAC, PS_OP_MAC,
						PS_OP_DELETE, PS_OP_DELETE, PS_OP_DELETE };
	static const enum ps_kind kinds[] = { PS_KIND_K, PS_KIND_V, PS_KIND_S, PS_KIND_O,
					      PS_KIND_S, PS_KIND_K, PS_KIND_V };
	/* the coordinate of each op that is J */
	static const unsigned at_j[] = { 0, 0, 1, 1, 1, 0, 0 };
	const struct ps_op *s_mac = &r->body[2];
	const struct ps_coordset *is = &s_mac->c[0], *js = &s_mac->c[1];
	const struct ps_coordset feats = ps_range(0, att->d), cols = ps_range(0, att->nb);
	uint64_t bc, n0, fresh = 0, recomputed = 0, peak, moves = 0;
	struct ps_coordset ju;
	struct ps_tile su, eu;
	struct ps_rows kv, sums;
	struct ps_edges ed;
	bool ok;
	int rc;

	if (r->len != 7 || is->list || js->list)
		return PS_BLOCK_DECLINED;
	bc = ps_coordset_size(js);
	n0 = ps_coordset_size(is);
	for (size_t k = 0; k < 7; k++) {
		const struct ps_op *op = &r->body[k];
		const struct ps_coordset *j = &op->c[at_j[k]];
		const struct ps_coordset *other = &op->c[at_j[k] ? 0 : 1];

		if (op->code != codes[k] || op->kind != kinds[k] || op->by_id ||
		    op->fuse != (k == 3) || !same_set(j, js) ||
		    !same_set(other, at_j[k] ? is : &feats) ||
		    (k == 2 && !same_set(&op->c[2], &feats)) ||
		    (k == 3 && !same_set(&op->c[2], &cols)))
			return PS_BLOCK_DECLINED;
		for (unsigned p = 0; p < 3; p++)
			if (r->step[k][p] != (p == at_j[k] ? bc : 0))
				return PS_BLOCK_DECLINED;
		moves += ps_op_moves(op);
	}
	if (!bc || !n0 || r->count > UINT64_MAX / bc || !repeat_checked(att, r))
		return PS_BLOCK_DECLINED;
	ju = ps_range(js->lo, js->lo + r->count * bc);
	su = tile_of(att, PS_KIND_S, is, &ju);
	eu = tile_of(att, PS_KIND_E, is, &ju);
	/* K and V over every J none red; Q[I, A] red; S untouched; E fresh */
	for (int q = 0; q < 2; q++) {
		if (ps_rows_init(&kv, row_of(att, q ? PS_KIND_V : PS_KIND_K, 0), att->d, &ju, &feats,
				 UINT64_MAX))
			return PS_ENOMEM;
		/* decoding: the generated rows are plain, blue once saved */
		ok = ps_rows_none(e, PS_PLANE_RED, &kv) &&
		     (!att->decode || ps_rows_all(e, PS_PLANE_BLUE, &kv));
		ps_rows_free(&kv);
		if (!ok)
			return PS_BLOCK_DECLINED;
	}
	if (!rows_red(att, e, PS_KIND_Q, is, &feats, UINT64_MAX) || !ps_tile_untouched(e, &su) ||
	    !ps_tile_fresh(e, &eu, &recomputed))
		return PS_BLOCK_DECLINED;
	/* O[I, B] takes the union of J */
	if (ps_edges_init(&ed, &ju))
		return PS_ENOMEM;
	if (ps_rows_init(&sums, row_of(att, PS_KIND_O, 0), att->ext[PS_KIND_O][1], is, &cols,
			 UINT64_MAX)) {
		ps_edges_free(&ed);
		return PS_ENOMEM;
	}
	rc = PS_BLOCK_DECLINED;
	if (!ps_rows_sums_open(e, &sums, &ed, &fresh))
		goto out;
	peak = e->c.red + 2 * bc * att->d + n0 * bc + fresh + 2;
	if (peak > e->M)
		goto out;
	if (ps_attention_in_degree_uniform(att, PS_KIND_O))
		rc = ps_rows_sums_add(e, &sums, &ed, ps_attention_in_degree(att, PS_KIND_O));
	/* causal: each row of O its own in-degree, and its own record */
	for (uint64_t i = is->lo; !ps_attention_in_degree_uniform(att, PS_KIND_O) && !rc &&
	     i < is->hi; i++)
		rc = ps_row_sums_add(e, row_of(att, PS_KIND_O, i), &cols, &ed,
				     ps_attention_in_degree_at(att, PS_KIND_O, i));
	if (rc || (rc = ps_tile_mark_computed(e, &eu)))
		goto out;
	{
		const enum ps_kind kinds[] = { PS_KIND_K, PS_KIND_V };
		const uint64_t loads[] = { r->count * bc * att->d, r->count * bc * att->d };
		const struct ps_block_counts add = {
			.moves = r->count * moves,
			.macs = r->count * n0 * bc * (att->d + att->nb),
			.computes = r->count * n0 * bc,
			.recomputations = recomputed,
			.red = fresh,
		};

		loop_counted(e, kinds, loads, 2, &add, peak);
	}
	rc = PS_BLOCK_APPLIED;
out:
	ps_rows_free(&sums);
	ps_edges_free(&ed);
	return rc;
}

/* Does op k of the loop lie on rows moving by their count, from rows? (A
 * range of rows, every other coordinate fixed.) */
static bool rows_move(const struct ps_repeat *r, size_t k, const struct ps_coordset *rows)
{
	const struct ps_op *op = &r->body[k];

	return !op->by_id && !op->c[0].list && op->c[0].lo == rows->lo &&
	       op->c[0].hi == rows->hi && r->step[k][0] == rows->hi - rows->lo &&
	       !r->step[k][1] && !r->step[k][2];
}

/* Is every value of a (increasing) among those of b (increasing)? */
static bool subset_of(const struct ps_coordset *a, const struct ps_coordset *b)
{
	const uint64_t na = ps_coordset_size(a), nb = ps_coordset_size(b);
	uint64_t y = 0;

	for (uint64_t x = 0; x < na; x++) {
		const uint64_t v = ps_coordset_at(a, x);

		while (y < nb && ps_coordset_at(b, y) < v)
			y++;
		if (y == nb || ps_coordset_at(b, y) != v)
			return false;
	}
	return true;
}

/* Do two increasing sets share no value? */
static bool apart(const struct ps_coordset *a, const struct ps_coordset *b)
{
	const uint64_t na = ps_coordset_size(a), nb = ps_coordset_size(b);

	for (uint64_t x = 0, y = 0; x < na && y < nb;) {
		const uint64_t u = ps_coordset_at(a, x), v = ps_coordset_at(b, y);

		if (u == v)
			return false;
		x += u < v;
		y += v < u;
	}
	return true;
}

/* The block of kind k at rows x cols (below limit), judged none red. */
static int none_red(const struct ps_attention *att, const struct ps_engine *e, enum ps_kind k,
		    const struct ps_coordset *rows, const struct ps_coordset *cols,
		    uint64_t limit, bool *none)
{
	struct ps_rows b;

	if (ps_rows_init(&b, row_of(att, k, 0), att->ext[k][1], rows, cols, limit))
		return PS_ENOMEM;
	*none = ps_rows_none(e, PS_PLANE_RED, &b);
	ps_rows_free(&b);
	return PS_OK;
}

/*
 * A pass of fused macs into H over blocks of key rows (colpass's phase
 * 1): for every block J,
 *
 *   load K[J, F], load V[J, W], fused macs into H over (J, M_q, B_q) for
 *   q = 1, 2, ..., delete K[J, F], delete V[J, W]
 *
 * (either load absent with its delete, the deletes in either order), J a
 * range moving by its length, everything else fixed. Each iteration loads
 * rows no other touches and leaves them as it found them (inputs: always
 * blue), regenerates U2[J, M_q] and drops it, and its macs aggregate
 * edges J into sums that stay. So every move succeeds exactly when K[., F]
 * and V[., W] over the union of J are none red, every M_q reads only
 * features of F and every column of B_q below d is in W, U2 over the
 * union and each M_q is none red, the macs' sums are apart (or an
 * iteration would aggregate an edge twice), each H[M_q, B_q] may take the
 * union of J, and the peak (the red pebbles before, one iteration's
 * loads, every sum made red, the entry and the product, at the first
 * iteration's last mac) fits; then the sums take the union and U2 over
 * it is computed.
 */
static int repeat_fused_h(const struct ps_attention *att, struct ps_engine *e,
			  const struct ps_repeat *r)
{
	const struct ps_coordset *js = &r->body[0].c[0];
	const struct ps_op *load[2] = { NULL, NULL }; /* of K, of V */
	size_t k = 0, first_mac, macs;
	unsigned deleted = 0;
	uint64_t s, fresh = 0, recomputed = 0, peak, per_load = 0, moves = 0, macs_each = 0,
		 computes_each = 0;
	struct ps_coordset ju;
	struct ps_edges ed;
	bool ok;
	int rc;

	if (js->list)
		return PS_BLOCK_DECLINED;
	s = ps_coordset_size(js);
	for (; k < r->len && r->body[k].code == PS_OP_LOAD; k++) {
		const struct ps_op *op = &r->body[k];
		const int at = op->kind == PS_KIND_K ? 0 : op->kind == PS_KIND_V ? 1 : -1;

		if (at < 0 || load[at] || !rows_move(r, k, js) || !increasing(&op->c[1]))
			return PS_BLOCK_DECLINED;
		load[at] = op;
	}
	for (first_mac = k; k < r->len && r->body[k].code == PS_OP_MAC; k++) {
		const struct ps_op *op = &r->body[k];

		if (op->kind != PS_KIND_H || !op->fuse || !rows_move(r, k, js) ||
		    !ps_coordset_size(&op->c[1]) || !increasing(&op->c[1]) || op->c[2].list ||
		    op->c[2].lo >= op->c[2].hi)
			return PS_BLOCK_DECLINED;
	}
	macs = k - first_mac;
	for (; k < r->len; k++) {
		const struct ps_op *op = &r->body[k];
		const int at = op->kind == PS_KIND_K ? 0 : op->kind == PS_KIND_V ? 1 : -1;

		if (op->code != PS_OP_DELETE || at < 0 || !load[at] || (deleted >> at & 1) ||
		    !rows_move(r, k, js) || !same_set(&op->c[1], &load[at]->c[1]))
			return PS_BLOCK_DECLINED;
		deleted |= 1u << at;
	}
	if (!s || !macs || deleted != ((load[0] ? 1u : 0) | (load[1] ? 2u : 0)) ||
	    r->count > UINT64_MAX / s || !repeat_checked(att, r))
		return PS_BLOCK_DECLINED;
	ju = ps_range(js->lo, js->lo + r->count * s);
	/* the parents each mac needs are those loaded; the sums apart */
	for (size_t q = first_mac; q < first_mac + macs; q++) {
		const struct ps_op *op = &r->body[q];
		const struct ps_coordset below_d = ps_range(op->c[2].lo, ps_min_u64(op->c[2].hi, att->d));
		struct features f;

		if ((rc = features_find(att, &op->c[1], &f)))
			return rc;
		ok = ps_coordset_size(&f.set) ? load[0] && subset_of(&f.set, &load[0]->c[1]) : true;
		features_free(&f);
		if (!ok || (below_d.lo < below_d.hi && (!load[1] || !subset_of(&below_d, &load[1]->c[1]))))
			return PS_BLOCK_DECLINED;
		for (size_t p = first_mac; p < q; p++) {
			const struct ps_op *o = &r->body[p];

			if (o->c[2].lo < op->c[2].hi && op->c[2].lo < o->c[2].hi &&
			    !apart(&o->c[1], &op->c[1]))
				return PS_BLOCK_DECLINED;
		}
		if ((rc = none_red(att, e, PS_KIND_U2, &ju, &op->c[1], UINT64_MAX, &ok)) || !ok)
			return rc ? rc : PS_BLOCK_DECLINED;
		macs_each += s * ps_coordset_size(&op->c[1]) * ps_coordset_size(&op->c[2]);
		computes_each += s * ps_coordset_size(&op->c[1]);
	}
	for (int at = 0; at < 2; at++) {
		if (!load[at])
			continue;
		if ((rc = none_red(att, e, load[at]->kind, &ju, &load[at]->c[1], UINT64_MAX, &ok)) ||
		    !ok)
			return rc ? rc : PS_BLOCK_DECLINED;
		per_load += s * ps_coordset_size(&load[at]->c[1]);
	}
	/* the sums may take the union of J */
	if (ps_edges_init(&ed, &ju))
		return PS_ENOMEM;
	for (size_t q = first_mac; q < first_mac + macs; q++) {
		const struct ps_op *op = &r->body[q];
		struct ps_rows sums;

		if (ps_rows_init(&sums, row_of(att, PS_KIND_H, 0), att->ext[PS_KIND_H][1], &op->c[1],
				 &op->c[2], UINT64_MAX)) {
			ps_edges_free(&ed);
			return PS_ENOMEM;
		}
		ok = sums.run && ps_rows_sums_open(e, &sums, &ed, &fresh);
		ps_rows_free(&sums);
		if (!ok) {
			ps_edges_free(&ed);
			return PS_BLOCK_DECLINED;
		}
	}
	peak = e->c.red + per_load + fresh + 2;
	if (peak > e->M) {
		ps_edges_free(&ed);
		return PS_BLOCK_DECLINED;
	}

	/* every move would succeed: the sums take the union, U2 over it is
	 * computed; K and V are as they were */
	rc = PS_OK;
	for (size_t q = first_mac; !rc && q < first_mac + macs; q++) {
		const struct ps_op *op = &r->body[q];
		struct ps_rows sums, entries;

		if (ps_rows_init(&sums, row_of(att, PS_KIND_H, 0), att->ext[PS_KIND_H][1], &op->c[1],
				 &op->c[2], UINT64_MAX)) {
			rc = PS_ENOMEM;
			break;
		}
		rc = ps_rows_sums_add(e, &sums, &ed, att->n);
		ps_rows_free(&sums);
		if (rc)
			break;
		if (ps_rows_init(&entries, row_of(att, PS_KIND_U2, 0), att->ext[PS_KIND_U2][1], &ju,
				 &op->c[1], UINT64_MAX)) {
			rc = PS_ENOMEM;
			break;
		}
		rc = mark_entries(att, e, PS_KIND_U2, &ju, &op->c[1], &entries, &recomputed);
		ps_rows_free(&entries);
	}
	ps_edges_free(&ed);
	if (rc)
		return rc;
	for (size_t q = 0; q < r->len; q++)
		moves += ps_op_moves(&r->body[q]);
	{
		enum ps_kind kinds[2];
		uint64_t loads[2];
		unsigned count = 0;
		const struct ps_block_counts add = {
			.moves = r->count * moves,
			.macs = r->count * macs_each,
			.computes = r->count * computes_each,
			.recomputations = recomputed,
			.red = fresh,
		};

		for (int at = 0; at < 2; at++)
			if (load[at]) {
				kinds[count] = load[at]->kind;
				loads[count++] = r->count * s * ps_coordset_size(&load[at]->c[1]);
			}
		loop_counted(e, kinds, loads, count, &add, peak);
	}
	return PS_BLOCK_APPLIED;
}

/*
 * Causal approximate attention's state update (MODEL.md section 7): row j
 * of the state, a chunk X of monomials at a time over columns C,
 *
 *   fused mac into H over (j, X, C), carry mac over (j, X, C), delete
 *   H[j-1, X, C]; X moves
 *
 * Each iteration takes untouched sums H[j, X, C] to red and complete (both
 * in-edges), computes and drops U2[j, X], and drops the previous state's
 * cells it read, which no other iteration reads. So every move succeeds
 * exactly when, over the union of the windows: K[j] at their features and
 * V[j, C below d] are red, U2[j] none red, H[j-1] red and complete, H[j]
 * untouched (none red, blue or complete, and no partial record anywhere:
 * else the element path decides), and one iteration's peak (the red
 * pebbles before, a chunk of new sums, U2 and the product) fits in M.
 * Then H[j] is red and complete over the union, H[j-1] deleted there.
 */
static int repeat_causal_state(const struct ps_attention *att, struct ps_engine *e,
			       const struct ps_repeat *r)
{
	const struct ps_op *mac = &r->body[0];
	const struct ps_coordset *rows = &mac->c[0], *xs = &mac->c[1], *cs = &mac->c[2];
	const uint64_t q = ps_coordset_size(xs), c = ps_coordset_size(cs);
	uint64_t j, cells, recomputed = 0, peak, moves = 0;
	struct ps_coordset all, prev;
	struct features f;
	struct ps_rows now, before, entries;
	int rc = PS_BLOCK_DECLINED;
	bool ok;

	if (r->len != 3 || rows->list || xs->list || !q || !c || !increasing(cs) ||
	    ps_coordset_size(rows) != 1 || (j = rows->lo) == 0 || r->count > att->r / q ||
	    e->st->partial_count || ps_attention_role(att, PS_KIND_HJ, j - 1) != PS_ROLE_SUM)
		return PS_BLOCK_DECLINED;
	prev = ps_one(j - 1);
	for (size_t k = 0; k < 3; k++) {
		const struct ps_op *op = &r->body[k];

		if (op->by_id || op->kind != PS_KIND_HJ ||
		    op->code != (k < 2 ? PS_OP_MAC : PS_OP_DELETE) || op->fuse != (k == 0) ||
		    op->carry != (k == 1) || !same_set(&op->c[0], k < 2 ? rows : &prev) ||
		    !same_set(&op->c[1], xs) || !same_set(&op->c[2], cs) ||
		    r->step[k][0] || r->step[k][1] != q || r->step[k][2])
			return PS_BLOCK_DECLINED;
		moves += ps_op_moves(op);
	}
	if (!repeat_checked(att, r))
		return PS_BLOCK_DECLINED;
	all = ps_range(xs->lo, xs->lo + r->count * q);
	cells = r->count * q * c;
	if (features_find(att, &all, &f))
		return PS_BLOCK_DECLINED;
	ok = rows_red(att, e, PS_KIND_K, rows, &f.set, UINT64_MAX) &&
	     rows_red(att, e, PS_KIND_V, rows, cs, att->d);
	features_free(&f);
	if (!ok || (rc = state_ready(att, e, j - 1, &all, cs)) != PS_BLOCK_APPLIED)
		return rc;
	peak = e->c.red + q * c + 2;
	if (peak > e->M)
		return PS_BLOCK_DECLINED;
	if (ps_rows_init(&entries, row_of(att, PS_KIND_U2, 0), att->r, rows, &all, UINT64_MAX))
		return PS_ENOMEM;
	if (state_rows(att, j, &all, cs, &now)) {
		ps_rows_free(&entries);
		return PS_ENOMEM;
	}
	if (state_rows(att, j - 1, &all, cs, &before)) {
		ps_rows_free(&now);
		ps_rows_free(&entries);
		return PS_ENOMEM;
	}
	rc = PS_BLOCK_DECLINED;
	if (!ps_rows_none(e, PS_PLANE_RED, &entries) || !ps_rows_none(e, PS_PLANE_RED, &now) ||
	    !ps_rows_none(e, PS_PLANE_BLUE, &now) || !ps_rows_none(e, PS_PLANE_COMPLETE, &now))
		goto out;
	/* every move would succeed: the new state red and complete, the old
	 * one dropped (it has no blue copy: its values are gone) */
	if ((rc = ps_rows_flag(e, PS_PLANE_RED, &now, true)) ||
	    (rc = ps_rows_flag(e, PS_PLANE_COMPLETE, &now, true)) ||
	    (rc = mark_entries(att, e, PS_KIND_U2, rows, &all, &entries, &recomputed)))
		goto out;
	ps_rows_delete(e, &before);
	{
		const struct ps_block_counts add = {
			.moves = r->count * moves, .macs = 2 * cells, .computes = r->count * q,
			.recomputations = recomputed, .red = cells,
		};

		ps_engine_block_counted(e, &add, cells, peak);
	}
	rc = PS_BLOCK_APPLIED;
out:
	ps_rows_free(&before);
	ps_rows_free(&now);
	ps_rows_free(&entries);
	return rc;
}

int ps_block_repeat(const struct ps_attention *att, struct ps_engine *e,
		    const struct ps_repeat *r)
{
	struct stream st = { .att = att };
	const struct ps_op *mac;
	size_t m = 0, loads = 0, deletes = 0;
	uint64_t step, per_load = 0, fresh = 0, peak, moves = 0, extent, *fixed_buf;
	const uint64_t *window;
	size_t window_len, fixed_len = 0;
	struct ps_rows sums;
	struct ps_edges ed;
	int rc = PS_BLOCK_DECLINED;

	if (e->failed || !r->count || !r->len)
		return PS_BLOCK_DECLINED;
	if (att->exact)
		return r->len == 7 ? repeat_flash(att, e, r) : PS_BLOCK_DECLINED;
	if (att->causal) /* the loops below are non-causal H's */
		return repeat_causal_state(att, e, r);
	for (size_t k = 0; k < r->len; k++)
		if (r->body[k].code == PS_OP_MAC && r->body[k].kind == PS_KIND_H && r->body[k].fuse)
			return repeat_fused_h(att, e, r);
	if (r->len > 8)
		return PS_BLOCK_DECLINED;
	if (r->len == 3 && r->body[0].code == PS_OP_COMPUTE)
		return repeat_checked(att, r) ? repeat_stored_u(att, e, r) : PS_BLOCK_DECLINED;
	/* loads, one mac, deletes */
	while (m < r->len && r->body[m].code == PS_OP_LOAD && !r->body[m].by_id)
		m++;
	if (m == r->len || r->body[m].code != PS_OP_MAC || r->body[m].by_id || r->body[m].fuse)
		return PS_BLOCK_DECLINED;
	for (size_t k = m + 1; k < r->len; k++)
		if (r->body[k].code != PS_OP_DELETE || r->body[k].by_id)
			return PS_BLOCK_DECLINED;
	mac = st.mac = &r->body[m];
	if ((mac->kind != PS_KIND_H && mac->kind != PS_KIND_N) || mac->c[2].list ||
	    !repeat_checked(att, r))
		return PS_BLOCK_DECLINED;
	/* the edges move, the sums stay */
	st.moving = mac->kind == PS_KIND_H ? 0 : 1;
	step = r->step[m][st.moving];
	if (!step || r->step[m][1 - st.moving] || r->step[m][2])
		return PS_BLOCK_DECLINED;
	/* the parents, each loaded and deleted */
	if (mac->kind == PS_KIND_H) {
		const struct ps_coordset vs = ps_range(mac->c[2].lo, ps_min_u64(mac->c[2].hi, att->d));
		struct loaded u = { PS_KIND_U2, { mac->c[0], mac->c[1] }, { step, 0 }, false };
		struct loaded v = { PS_KIND_V, { mac->c[0], vs }, { step, 0 }, false };

		st.load[st.loads++] = u;
		if (vs.lo < vs.hi)
			st.load[st.loads++] = v;
	} else {
		struct loaded u = { PS_KIND_U1, { mac->c[0], mac->c[1] }, { 0, step }, false };
		struct loaded h = { PS_KIND_H, { mac->c[1], mac->c[2] }, { step, 0 }, true };

		st.load[st.loads++] = u;
		st.load[st.loads++] = h;
	}
	for (unsigned l = 0; l < st.loads; l++) {
		unsigned found_load = 0, found_delete = 0;

		for (size_t k = 0; k < r->len; k++)
			if (k != m && op_is_block(r, k, &st.load[l])) {
				found_load += k < m;
				found_delete += k > m;
			}
		if (found_load != 1 || found_delete != 1)
			return PS_BLOCK_DECLINED;
		loads++;
		deletes++;
	}
	if (loads != m || deletes != r->len - m - 1)
		return PS_BLOCK_DECLINED;
	for (size_t k = 0; k < r->len; k++)
		moves += ps_op_moves(&r->body[k]);
	for (unsigned l = 0; l < st.loads; l++)
		per_load += ps_coordset_size(&st.load[l].c[0]) * ps_coordset_size(&st.load[l].c[1]);

	/* the windows of the moving coordinate follow each other: their union */
	extent = ps_attention_extent(att, ps_attention_product_kind(mac->kind), st.moving);
	window = mac->c[st.moving].list;
	window_len = ps_coordset_size(&mac->c[st.moving]);
	if (!window_len || step != window_len || r->count > UINT64_MAX / step)
		return PS_BLOCK_DECLINED;
	if (mac->c[1 - st.moving].list)
		fixed_len = mac->c[1 - st.moving].len;
	if (!(st.buf = malloc(((window ? r->count * step : 0) + fixed_len + 1) * sizeof(uint64_t))))
		return PS_ENOMEM;
	fixed_buf = st.buf + (window ? r->count * step : 0);
	if (window) {
		if (!sorted_set(window, r->count * step, extent, st.buf))
			goto out;
		st.edges = ps_list(st.buf, r->count * step);
	} else {
		if (mac->c[st.moving].lo + r->count * step > extent)
			goto out;
		st.edges = ps_range(mac->c[st.moving].lo, mac->c[st.moving].lo + r->count * step);
	}
	st.fixed = mac->c[1 - st.moving];
	if (fixed_len) {
		if (!sorted_set(st.fixed.list, fixed_len, UINT64_MAX, fixed_buf))
			goto out;
		st.fixed = ps_list(fixed_buf, fixed_len);
	}

	/* every loaded block, over every window: none red, all blue (H
	 * complete too) */
	for (unsigned l = 0; l < st.loads; l++) {
		struct ps_rows b;
		bool ok;

		if (loaded_rows(&st, &st.load[l], &b)) {
			rc = PS_ENOMEM;
			goto out;
		}
		/* an input is always blue (decoding: the rows may be of
		 * another role, and are read) */
		ok = ps_rows_none(e, PS_PLANE_RED, &b) &&
		     ((ps_kinds[st.load[l].kind].role == PS_ROLE_INPUT && !att->decode) ||
		      ps_rows_all(e, PS_PLANE_BLUE, &b)) &&
		     (!st.load[l].complete || ps_rows_all(e, PS_PLANE_COMPLETE, &b));
		ps_rows_free(&b);
		if (!ok)
			goto out;
	}
	/* the sums (H[M, B] or N[I, B]) may take the union of the edges */
	if (ps_edges_init(&ed, &st.edges)) {
		rc = PS_ENOMEM;
		goto out;
	}
	if (ps_rows_init(&sums, row_of(att, mac->kind, 0), att->ext[mac->kind][1],
			 mac->kind == PS_KIND_H ? &st.fixed : &mac->c[0], &mac->c[2], UINT64_MAX)) {
		ps_edges_free(&ed);
		rc = PS_ENOMEM;
		goto out;
	}
	if (!sums.run || (mac->kind == PS_KIND_N && mac->c[0].list && !increasing(&mac->c[0])) ||
	    !ps_rows_sums_open(e, &sums, &ed, &fresh))
		goto sums_out;
	peak = e->c.red + fresh + per_load + 1;
	if (peak > e->M)
		goto sums_out;

	/* every move would succeed: the sums take the edges; the loaded
	 * blocks are as they were */
	if ((rc = ps_rows_sums_add(e, &sums, &ed, ps_attention_in_degree(att, mac->kind))))
		goto sums_out;
	{
		enum ps_kind kinds[2];
		uint64_t loads[2];
		const struct ps_block_counts add = {
			.moves = r->count * moves,
			.macs = r->count * ps_coordset_size(&mac->c[0]) * ps_coordset_size(&mac->c[1]) *
				ps_coordset_size(&mac->c[2]),
			.red = fresh,
		};

		for (unsigned l = 0; l < st.loads; l++) {
			kinds[l] = st.load[l].kind;
			loads[l] = r->count * ps_coordset_size(&st.load[l].c[0]) *
				   ps_coordset_size(&st.load[l].c[1]);
		}
		loop_counted(e, kinds, loads, st.loads, &add, peak);
	}
	rc = PS_BLOCK_APPLIED;
sums_out:
	ps_rows_free(&sums);
	ps_edges_free(&ed);
out:
	free(st.buf);
	return rc;
}

/*
 * A compute of U1[rows, M] (from Q) or U2[rows, M] (from K), rows and M
 * increasing: every entry not red, every feature its monomials read red
 * in every row, and room for them all. Then they are red and computed
 * (those computed before counted as recomputations), as move by move.
 */
/* The count entries of a compute, none red, their parents ready: computed
 * (those computed before counted as recomputations), red. */
static int entries_computed(struct ps_engine *e, const struct ps_rows *entries, uint64_t count)
{
	uint64_t had = 0;
	int rc;

	if ((rc = ps_rows_add(e, PS_PLANE_COMPUTED, entries, &had)) ||
	    (rc = ps_rows_flag(e, PS_PLANE_RED, entries, true)))
		return rc;
	{
		const struct ps_block_counts add = {
			.moves = count, .computes = count, .recomputations = had, .red = count,
		};

		ps_engine_block_counted(e, &add, 0, e->c.red + count);
	}
	return PS_BLOCK_APPLIED;
}

/*
 * A compute of A[rows, B] (from N, or O, at rows x B and at rows x {d}):
 * every entry not red, every parent red and complete, room for them all.
 */
static int block_compute_a(const struct ps_attention *att, struct ps_engine *e,
			   const struct ps_op *op)
{
	const enum ps_kind sum = att->exact ? PS_KIND_O : PS_KIND_N;
	const struct ps_coordset *rows = &op->c[0], *bs = &op->c[1];
	const struct ps_coordset norm = ps_one(att->d);
	const uint64_t count = ps_coordset_size(rows) * ps_coordset_size(bs);
	struct ps_rows entries, parents, normalisers;
	int rc;

	/* a few entries cost less move by move than through five blocks */
	if (count < 8 || !increasing(rows) || !increasing(bs) || e->c.red + count > e->M)
		return PS_BLOCK_DECLINED;
	if ((rc = ps_tiles_settle(e, att->base[PS_KIND_A],
				  att->base[PS_KIND_A] + att->count[PS_KIND_A])))
		return rc;
	if (ps_rows_init(&entries, row_of(att, PS_KIND_A, 0), att->ext[PS_KIND_A][1], rows, bs,
			 UINT64_MAX))
		return PS_ENOMEM;
	if (ps_rows_init(&parents, row_of(att, sum, 0), att->ext[sum][1], rows, bs, UINT64_MAX)) {
		ps_rows_free(&entries);
		return PS_ENOMEM;
	}
	if (ps_rows_init(&normalisers, row_of(att, sum, 0), att->ext[sum][1], rows, &norm,
			 UINT64_MAX)) {
		ps_rows_free(&parents);
		ps_rows_free(&entries);
		return PS_ENOMEM;
	}
	rc = PS_BLOCK_DECLINED;
	if (ps_rows_none(e, PS_PLANE_RED, &entries) && ps_rows_all(e, PS_PLANE_RED, &parents) &&
	    ps_rows_all(e, PS_PLANE_COMPLETE, &parents) &&
	    ps_rows_all(e, PS_PLANE_RED, &normalisers) &&
	    ps_rows_all(e, PS_PLANE_COMPLETE, &normalisers))
		rc = entries_computed(e, &entries, count);
	ps_rows_free(&normalisers);
	ps_rows_free(&parents);
	ps_rows_free(&entries);
	return rc;
}

/*
 * Approximate decoding (MODEL.md section 8): a compute of Q[t, F], K[t,
 * F] or V[t, F] for one generated row t, from the last output A[t-1, 0..d)
 * (N[t-1, 0..d) without normalisation, complete): every entry not red,
 * every parent red (and complete), room for them all.
 */
static int block_compute_token(const struct ps_attention *att, struct ps_engine *e,
			       const struct ps_op *op)
{
	const enum ps_kind out = att->normalize ? PS_KIND_A : PS_KIND_N;
	const struct ps_coordset *rows = &op->c[0], *cols = &op->c[1];
	const struct ps_coordset feats = ps_range(0, att->d);
	const uint64_t count = ps_coordset_size(cols);
	struct ps_rows entries, parents;
	struct ps_coordset last;
	int rc;

	if (ps_coordset_size(rows) != 1 || !count || !increasing(cols) ||
	    ps_attention_role(att, op->kind, ps_coordset_at(rows, 0)) != PS_ROLE_PLAIN ||
	    e->c.red + count > e->M)
		return PS_BLOCK_DECLINED;
	last = ps_one(ps_coordset_at(rows, 0) - 1);
	if (ps_rows_init(&entries, row_of(att, op->kind, 0), att->d, rows, cols, UINT64_MAX))
		return PS_ENOMEM;
	if (ps_rows_init(&parents, row_of(att, out, 0), att->ext[out][1], &last, &feats,
			 UINT64_MAX)) {
		ps_rows_free(&entries);
		return PS_ENOMEM;
	}
	rc = PS_BLOCK_DECLINED;
	if (ps_rows_none(e, PS_PLANE_RED, &entries) && ps_rows_all(e, PS_PLANE_RED, &parents) &&
	    (att->normalize || ps_rows_all(e, PS_PLANE_COMPLETE, &parents)))
		rc = entries_computed(e, &entries, count);
	ps_rows_free(&parents);
	ps_rows_free(&entries);
	return rc;
}

int ps_block_compute(const struct ps_attention *att, struct ps_engine *e,
		     const struct ps_op *op)
{
	const enum ps_kind k = op->kind;
	const uint64_t count = ps_coordset_size(&op->c[0]) * ps_coordset_size(&op->c[1]);
	uint64_t had = 0;
	int rc;

	if (!e->failed && k == PS_KIND_A)
		return block_compute_a(att, e, op);
	if (!e->failed && att->decode && !att->exact &&
	    (k == PS_KIND_Q || k == PS_KIND_K || k == PS_KIND_V))
		return block_compute_token(att, e, op);
	if (e->failed || att->exact || (k != PS_KIND_U1 && k != PS_KIND_U2) || !count ||
	    !increasing(&op->c[0]) || !increasing(&op->c[1]) || e->c.red + count > e->M)
		return PS_BLOCK_DECLINED;
	if ((rc = compute_u(att, e, k, &op->c[0], &op->c[1], false, &had)) == PS_BLOCK_APPLIED) {
		const struct ps_block_counts add = {
			.moves = count, .computes = count, .recomputations = had, .red = count,
		};

		ps_engine_block_counted(e, &add, 0, e->c.red + count);
	}
	return rc;
}

/* ---- loops of blocks of query rows -------------------------------------- */

/* The planes whose bits decide a move's verdict (computed only counts
 * recomputations, which the moves themselves count). */
static const enum ps_plane_id verdict_planes[] = { PS_PLANE_RED, PS_PLANE_BLUE,
						   PS_PLANE_COMPLETE };

/* Are the bits of each plane of verdict_planes, at each column of cols,
 * the same in every row of rows? (The whole block all or none set, or
 * else, for rows of at most 64 nodes, column by column.) */
static int rows_alike(const struct ps_attention *att, const struct ps_engine *e, enum ps_kind k,
		      const struct ps_coordset *rows, const struct ps_coordset *cols, bool *alike)
{
	const uint64_t width = att->ext[k][1];
	struct ps_rows b;

	*alike = true;
	if (ps_rows_init(&b, row_of(att, k, 0), width, rows, cols, UINT64_MAX))
		return PS_ENOMEM;
	for (size_t p = 0; *alike && p < sizeof(verdict_planes) / sizeof(verdict_planes[0]); p++) {
		const enum ps_plane_id id = verdict_planes[p];

		if (ps_rows_none(e, id, &b) || ps_rows_all(e, id, &b))
			continue;
		*alike = width <= 64;
		for (uint64_t x = 0; *alike && x < ps_coordset_size(cols); x++) {
			const struct ps_coordset one = ps_one(ps_coordset_at(cols, x));
			struct ps_rows c;

			if (ps_rows_init(&c, row_of(att, k, 0), width, rows, &one, UINT64_MAX)) {
				ps_rows_free(&b);
				return PS_ENOMEM;
			}
			*alike = ps_rows_none(e, id, &c) || ps_rows_all(e, id, &c);
			ps_rows_free(&c);
		}
	}
	ps_rows_free(&b);
	return PS_OK;
}

/*
 * The nodes of the rows that op (on the query rows I, coordinate 0)
 * touches besides H, as blocks of kinds at columns: up to three, into
 * kinds and cols; 0 when op is of no kind a loop of query rows may hold.
 * A compute of U1 reads Q, one of A reads N (every feature, every column:
 * more than it reads, which only asks more rows to be alike); a mac into
 * N reads U1 (and, fused, Q) and aggregates into N; H, its other parent,
 * no operation of such a loop changes.
 */
static unsigned query_blocks(const struct ps_attention *att, const struct ps_op *op,
			     enum ps_kind *kinds, struct ps_coordset *cols)
{
	const struct ps_coordset every_feature = ps_range(0, att->d),
				 every_column = ps_range(0, att->nb);
	const enum ps_kind k = op->kind;

	switch (op->code) {
	case PS_OP_LOAD:
	case PS_OP_SAVE:
	case PS_OP_DELETE:
		if (k != PS_KIND_Q && k != PS_KIND_U1 && k != PS_KIND_N && k != PS_KIND_A)
			return 0;
		kinds[0] = k;
		cols[0] = op->c[1];
		return 1;
	case PS_OP_COMPUTE:
		if (k != PS_KIND_U1 && k != PS_KIND_A)
			return 0;
		kinds[0] = k;
		cols[0] = op->c[1];
		kinds[1] = k == PS_KIND_U1 ? PS_KIND_Q : PS_KIND_N;
		cols[1] = k == PS_KIND_U1 ? every_feature : every_column;
		return 2;
	case PS_OP_MAC:
		if (k != PS_KIND_N)
			return 0;
		kinds[0] = PS_KIND_N;
		cols[0] = op->c[2];
		kinds[1] = PS_KIND_U1;
		cols[1] = op->c[1];
		kinds[2] = PS_KIND_Q;
		cols[2] = every_feature;
		return op->fuse ? 3 : 2;
	default:
		return 0;
	}
}

bool ps_block_rows_loop(const struct ps_attention *att, const struct ps_engine *e,
			const struct ps_repeat *r)
{
	const struct ps_coordset *is = &r->body[0].c[0];
	uint64_t s, narrow[PS_KIND_COUNT] = { 0 }; /* the columns of rows of at most 64 */
	struct ps_coordset all;

	if (e->failed || att->exact || !r->len || r->count < 2 || is->list)
		return false;
	s = ps_coordset_size(is);
	if (!s || r->count > (att->n - is->lo) / s || !repeat_checked(att, r))
		return false;
	all = ps_range(is->lo, is->lo + r->count * s);
	for (size_t k = 0; k < r->len; k++) {
		enum ps_kind kinds[3];
		struct ps_coordset cols[3];
		const unsigned blocks = rows_move(r, k, is) ?
					query_blocks(att, &r->body[k], kinds, cols) : 0;

		if (!blocks)
			return false;
		for (unsigned q = 0; q < blocks; q++) {
			bool alike;

			if (att->ext[kinds[q]][1] <= 64) {
				for (uint64_t x = 0; x < ps_coordset_size(&cols[q]); x++)
					narrow[kinds[q]] |= UINT64_C(1) << ps_coordset_at(&cols[q], x);
				continue;
			}
			if (!increasing(&cols[q]) || rows_alike(att, e, kinds[q], &all, &cols[q], &alike) ||
			    !alike)
				return false;
		}
	}
	/* the narrow kinds column by column; every sum's record alike */
	for (unsigned k = 0; k < PS_KIND_COUNT; k++) {
		uint64_t list[64];
		size_t len = 0;
		bool alike;

		for (uint64_t w = narrow[k]; w; w &= w - 1)
			list[len++] = ps_lowest_bit64(w);
		if (!len)
			continue;
		{
			const struct ps_coordset cols = ps_list(list, len);

			if (rows_alike(att, e, (enum ps_kind)k, &all, &cols, &alike) || !alike)
				return false;
		}
		for (size_t x = 0; ps_kinds[k].role == PS_ROLE_SUM && x < len; x++)
			if (!ps_rows_same_records(e, row_of(att, (enum ps_kind)k, 0), att->ext[k][1],
						  all.lo, all.hi, list[x]))
				return false;
	}
	return true;
}

int ps_block_rows_rest(const struct ps_attention *att, struct ps_engine *e,
		       const struct ps_repeat *r, uint64_t peak, struct ps_error *err)
{
	const struct ps_coordset *is = &r->body[0].c[0];
	const uint64_t s = ps_coordset_size(is), M = e->M, before = e->c.peak_red;
	int rc = PS_OK;

	/* the rows of iterations 1 to count - 1, each operation over them
	 * all; capacity is the loop's, judged by the caller */
	e->M = UINT64_MAX;
	for (size_t k = 0; !rc && k < r->len; k++) {
		struct ps_op op = r->body[k];

		op.c[0] = ps_range(is->lo + s, is->lo + r->count * s);
		rc = ps_op_apply(att, e, &op, err);
	}
	e->M = M;
	e->c.peak_red = ps_max_u64(before, peak);
	return rc ? rc : PS_BLOCK_APPLIED;
}
