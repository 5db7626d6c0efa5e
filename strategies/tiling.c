/*
 * The tiling executor shared by every strategy (see tiling.h). It emits,
 * predicts and bounds the same loops:
 *
 *   phase 0 (stored only): U2 then U1, computed from K (Q) block by block,
 *     saved and deleted;
 *   phase 1, H = U2^T [V 1]: for each aggregation tile T and each block of
 *     h_width columns, an H tile that stays in fast memory while h_rows
 *     rows j at a time load K[J, features of T] and V[J, columns] and
 *     stream U2 through fused macs. A tile taller than chunk is cut into
 *     sub-tiles; then K and V stay, and the sub-tiles of H take turns:
 *     loaded (after the first rows), aggregated, saved (Lemma 3.3);
 *   phase 2, N = U1 H and A: for each block of n_height rows, its column
 *     blocks (the one holding the ones column d first, with normalisation),
 *     each N tile aggregated over the tiles T: Q[I, features of T] loaded
 *     (or the whole Q strip kept), H[T, columns] loaded chunk by chunk, U1
 *     streamed through fused macs. A finished tile gives A column by
 *     column while N[., d] stays; without normalisation N is saved.
 */
#include "tiling.h"

#include "pebblesim/limits.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t ps_isqrt(uint64_t x)
{
	uint64_t s = (uint64_t)sqrt((double)x);

	while (s * s > x)
		s--;
	while ((s + 1) * (s + 1) <= x)
		s++;
	return s;
}

uint64_t ps_support_union(const struct ps_monomials *mono,
			  const uint64_t *list, uint64_t count, uint64_t *cols,
			  uint8_t *mark)
{
	uint64_t found = 0;

	for (uint64_t k = 0; k < count; k++) {
		const uint32_t *sup = ps_monomial_support(mono, list[k]);

		for (uint8_t q = 0; q < mono->support_size[list[k]]; q++)
			mark[sup[q]] = 1;
	}
	for (uint32_t a = 0; a < mono->d; a++)
		if (mark[a]) {
			cols[found++] = a;
			mark[a] = 0;
		}
	return found;
}

/*
 * The least tuple of degree l from u on (lexicographically) that holds
 * feature a, into t; false when none does. It keeps the longest prefix of
 * u it can: past the prefix, the next entry one above u's and the rest
 * as low as they go, a last.
 */
static bool next_holding(const uint32_t *u, uint32_t l, uint32_t d, uint32_t a,
			 uint32_t *t)
{
	for (uint32_t k = l + 1; k-- > 0;) {
		bool held = false;

		for (uint32_t p = 0; p < k; p++)
			held |= u[p] == a;
		if (k == l) {
			if (!held)
				continue;
			memcpy(t, u, l * sizeof(*t));
			return true;
		}
		if (u[k] + 1 >= d || (!held && a < u[k] + 1))
			continue;
		memcpy(t, u, k * sizeof(*t));
		for (uint32_t p = k; p < l; p++)
			t[p] = u[k] + 1;
		if (!held)
			t[l - 1] = a;
		return true;
	}
	return false;
}

static bool lex_at_most(const uint32_t *t, const uint32_t *v, uint32_t l)
{
	for (uint32_t p = 0; p < l; p++)
		if (t[p] != v[p])
			return t[p] < v[p];
	return true;
}

/* Marks the features of the tuples of degree l from u to v. */
static void mark_between(const uint32_t *u, const uint32_t *v, uint32_t l,
			 uint32_t d, uint8_t *mark)
{
	uint32_t t[64];

	for (uint32_t a = 0; a < d; a++)
		if (!mark[a] && next_holding(u, l, d, a, t) && lex_at_most(t, v, l))
			mark[a] = 1;
}

/* The features [a, d) as a mask (d <= 64). */
static uint64_t features_from(uint32_t a, uint32_t d)
{
	uint64_t below_d = d == 64 ? ~UINT64_C(0) : (UINT64_C(1) << d) - 1;

	return a >= d ? 0 : below_d & ~((UINT64_C(1) << a) - 1);
}

static uint64_t tuple_features(const uint32_t *u, uint32_t l)
{
	uint64_t m = 0;

	for (uint32_t p = 0; p < l; p++)
		m |= UINT64_C(1) << u[p];
	return m;
}

/*
 * The features of the tuples of degree l from u to v (lexicographically,
 * u <= v; d <= 64) as a mask, from the ends alone. With p the first
 * position where u and v differ, the tuples between them are u and v,
 * and those that leave one of three paths at some position q:
 *   above u: u[0..q), then c > u[q] (q > p), then anything from c on:
 *     the features [u[q] + 1, d), largest at q = p + 1;
 *   between: u[0..p), then u[p] < c < v[p], then anything from c on:
 *     [u[p] + 1, d), or only the c themselves when p is the last position;
 *   below v: v[0..q), then v[q-1] <= c < v[q] (q > p), then anything from
 *     c on: [v[q-1], d), or [v[q-1], v[q]) at the last position.
 * The prefixes' features are u's and v's own.
 */
static uint64_t features_between(const uint32_t *u, const uint32_t *v,
				 uint32_t l, uint32_t d)
{
	uint64_t m = tuple_features(u, l) | tuple_features(v, l);
	uint32_t p = 0;

	while (p < l && u[p] == v[p])
		p++;
	if (p == l)
		return m;
	if (p + 1 < l)
		m |= features_from(u[p + 1] + 1, d);
	if (u[p] + 1 < v[p])
		m |= features_from(u[p] + 1, d) &
		     ~(p + 1 < l ? 0 : features_from(v[p], d));
	for (uint32_t q = p + 1; q < l; q++)
		if (v[q - 1] < v[q])
			m |= features_from(v[q - 1], d) &
			     ~(q + 1 < l ? 0 : features_from(v[q], d));
	return m;
}

uint64_t ps_tuple_range_mask(const struct ps_monomials *mono, uint64_t first_m,
			     uint64_t last_m, uint32_t d)
{
	uint32_t low = mono->degree[first_m], high = mono->degree[last_m];
	uint32_t first[64] = { 0 }, last[64];

	if (high > low + 1) /* a whole degree l >= 1: every feature */
		return features_from(0, d);
	if (high == low)
		return features_between(ps_monomial_indices(mono, first_m),
					ps_monomial_indices(mono, last_m), low, d);
	for (uint32_t p = 0; p < low; p++)
		last[p] = d - 1;
	return features_between(ps_monomial_indices(mono, first_m), last, low, d) |
	       features_between(first, ps_monomial_indices(mono, last_m), high, d);
}

uint64_t ps_rank_range_mask(const struct ps_monomials *mono, uint64_t lo,
			    uint64_t hi)
{
	return ps_tuple_range_mask(mono, lo, hi - 1, mono->d);
}

/* How many features the ranks [lo, hi) read. */
static uint64_t rank_range_count(const struct ps_monomials *mono, uint64_t lo,
				 uint64_t hi, uint64_t *cols, uint8_t *mark)
{
	uint64_t m, count = 0;

	if (mono->d > 64)
		return ps_rank_range_union(mono, lo, hi, cols, mark);
	if (hi <= lo)
		return 0;
	for (m = ps_rank_range_mask(mono, lo, hi); m; m &= m - 1)
		count++;
	return count;
}

uint64_t ps_rank_range_union(const struct ps_monomials *mono, uint64_t lo,
			     uint64_t hi, uint64_t *cols, uint8_t *mark)
{
	uint64_t found = 0;
	uint32_t low, high, first[64] = { 0 }, last[64];

	if (hi <= lo)
		return 0;
	if (mono->d <= 64) {
		uint64_t m = ps_rank_range_mask(mono, lo, hi);

		for (uint32_t a = 0; a < mono->d; a++)
			if (m >> a & 1)
				cols[found++] = a;
		return found;
	}
	/* a short range is cheaper read than searched for each feature */
	if (hi - lo < (uint64_t)mono->d * (mono->g ? mono->g : 1)) {
		for (uint64_t m = lo; m < hi; m++) {
			const uint32_t *sup = ps_monomial_support(mono, m);

			for (uint8_t q = 0; q < mono->support_size[m]; q++)
				mark[sup[q]] = 1;
		}
	} else {
		low = mono->degree[lo];
		high = mono->degree[hi - 1];
		for (uint32_t p = 0; p < mono->g; p++)
			last[p] = mono->d - 1;
		if (high > low + 1) /* a whole degree l >= 1: every feature */
			memset(mark, 1, mono->d);
		else if (high == low)
			mark_between(ps_monomial_indices(mono, lo),
				     ps_monomial_indices(mono, hi - 1), low, mono->d, mark);
		else {
			mark_between(ps_monomial_indices(mono, lo), last, low, mono->d, mark);
			mark_between(first, ps_monomial_indices(mono, hi - 1), high,
				     mono->d, mark);
		}
	}
	for (uint32_t a = 0; a < mono->d; a++)
		if (mark[a]) {
			cols[found++] = a;
			mark[a] = 0;
		}
	return found;
}

int ps_emit(struct ps_sink *sink, enum ps_opcode code, enum ps_kind kind,
	    struct ps_coordset c0, struct ps_coordset c1, struct ps_error *err)
{
	struct ps_op op = { .code = code, .kind = kind, .c = { c0, c1 } };

	return ps_sink_emit(sink, &op, err);
}

int ps_emit_mac(struct ps_sink *sink, enum ps_kind into, bool fuse,
		struct ps_coordset c0, struct ps_coordset c1,
		struct ps_coordset c2, struct ps_error *err)
{
	struct ps_op op = {
		.code = PS_OP_MAC, .kind = into, .fuse = fuse,
		.c = { c0, c1, c2 },
	};

	return ps_sink_emit(sink, &op, err);
}

void ps_tiling_free(struct ps_tiling *t)
{
	free(t->order);
	free(t->gen);
	free(t->tiles);
	free(t->all);
	memset(t, 0, sizeof(*t));
}

/* ps_attention_plan_bytes counts four words a tile */
_Static_assert(sizeof(struct ps_agg_tile) == 32, "a tile is four words");

int ps_tiling_fits(const struct ps_attention *att, uint64_t count,
		       struct ps_error *err)
{
	const uint64_t bytes = ps_attention_plan_bytes(att->d, att->r, att->g, count);
	char what[128];

	/* the message only for a refusal: the searches ask often */
	if (!ps_memory_fits(bytes, "", NULL))
		return PS_OK;
	snprintf(what, sizeof(what), "the plan's tiles for d = %llu and r = %llu monomials",
		 (unsigned long long)att->d, (unsigned long long)att->r);
	return ps_memory_fits(bytes, what, err);
}

/* Each tile's features into gen, from order and tiles (both set); cols
 * and mark: room for d features. */
static int fill_gen(struct ps_tiling *t, const struct ps_attention *att,
		    uint64_t *cols, uint8_t *mark)
{
	uint64_t used = 0, cap = 0;

	for (uint64_t k = 0; k < t->tile_count; k++) {
		struct ps_agg_tile *tile = &t->tiles[k];
		uint64_t count = ps_support_union(&att->mono, t->order + tile->first,
						  tile->count, cols, mark);

		if (used + count > cap) {
			uint64_t *grown;

			cap = (used + count) * 2 + 16;
			grown = realloc(t->gen, cap * sizeof(uint64_t));
			if (!grown)
				return PS_ENOMEM;
			t->gen = grown;
		}
		if (count)
			memcpy(t->gen + used, cols, count * sizeof(uint64_t));
		tile->gen_first = used;
		tile->gen_count = count;
		used += count;
	}
	/* gen is never NULL, even without features (g = 0): the executors
	 * point into it at gen_first, and NULL + 0 is undefined in C */
	if (!t->gen && !(t->gen = malloc(sizeof(uint64_t))))
		return PS_ENOMEM;
	return PS_OK;
}

/* Blocks of the rank order: each tile's place and count in gen, from its
 * ends; gen stays NULL until a run asks for the features themselves
 * (rank_gen). */
static void count_rank_features(struct ps_tiling *t,
				const struct ps_attention *att, uint64_t *cols,
				uint8_t *mark)
{
	uint64_t used = 0;

	for (uint64_t k = 0; k < t->tile_count; k++) {
		struct ps_agg_tile *tile = &t->tiles[k];

		tile->gen_first = used;
		/* one monomial reads its support, distinct features */
		tile->gen_count = tile->count == 1 ? att->mono.support_size[tile->first] :
				  rank_range_count(&att->mono, tile->first,
						   tile->first + tile->count, cols, mark);
		used += tile->gen_count;
	}
}

/* The features of a tiling of rank blocks, where count_rank_features
 * placed them; NULL when out of memory. */
static uint64_t *rank_gen(const struct ps_tiling *t,
			  const struct ps_attention *att)
{
	const struct ps_agg_tile *end = t->tile_count ? &t->tiles[t->tile_count - 1] : NULL;
	uint64_t size = end ? end->gen_first + end->gen_count : 0;
	uint64_t *gen = malloc((size ? size : 1) * sizeof(uint64_t));
	uint8_t *mark = calloc(att->d ? att->d : 1, 1);

	if (!gen || !mark) {
		free(gen);
		free(mark);
		return NULL;
	}
	for (uint64_t k = 0; k < t->tile_count; k++)
		ps_rank_range_union(&att->mono, t->tiles[k].first,
				    t->tiles[k].first + t->tiles[k].count,
				    gen + t->tiles[k].gen_first, mark);
	free(mark);
	return gen;
}

/* Each tile's features (gen, or with the rank order only their counts)
 * and all of them; order and tiles are set. */
static int fill_features(struct ps_tiling *t, const struct ps_attention *att,
			 struct ps_error *err)
{
	uint8_t *mark = calloc(att->d, 1);
	uint64_t *cols = malloc(att->d * sizeof(uint64_t));
	int rc = PS_OK;

	if (!mark || !cols)
		goto oom;
	if (!t->order)
		count_rank_features(t, att, cols, mark);
	else if (fill_gen(t, att, cols, mark))
		goto oom;
	/* the order holds every monomial: the rank order's features */
	t->all_count = ps_rank_range_union(&att->mono, 0, att->r, cols, mark);
	t->all = malloc((t->all_count ? t->all_count : 1) * sizeof(uint64_t));
	if (!t->all)
		goto oom;
	memcpy(t->all, cols, t->all_count * sizeof(uint64_t));
	goto done;
oom:
	rc = ps_error_set(err, PS_ENOMEM, "out of memory for the tiles");
done:
	free(mark);
	free(cols);
	return rc;
}

int ps_tiling_blocks(struct ps_tiling *t, const struct ps_attention *att,
		     uint64_t size, struct ps_error *err)
{
	uint64_t count = ps_block_count(att->r, size);

	memset(t, 0, sizeof(*t));
	if (ps_tiling_fits(att, count, err))
		return PS_ENOMEM;
	/* the order is the rank order itself (order NULL): a plan that tries
	 * many sizes takes time in the tiles, not in the r monomials */
	t->tiles = calloc(count, sizeof(*t->tiles));
	if (!t->tiles) {
		ps_tiling_free(t);
		return ps_error_set(err, PS_ENOMEM, "out of memory for the tiles");
	}
	for (uint64_t k = 0; k < count; k++) {
		t->tiles[k].first = ps_block_lo(k, size);
		t->tiles[k].count = ps_block_hi(k, size, att->r) - t->tiles[k].first;
	}
	t->tile_count = count;
	t->chunk = att->r;
	if (fill_features(t, att, err)) {
		ps_tiling_free(t);
		return PS_ENOMEM;
	}
	return PS_OK;
}

int ps_tiling_partition(struct ps_tiling *t, const struct ps_attention *att,
			const uint64_t *tile_of, uint64_t tile_count,
			struct ps_error *err)
{
	uint64_t *start;
	uint64_t kept = 0;

	memset(t, 0, sizeof(*t));
	if (ps_tiling_fits(att, tile_count, err))
		return PS_ENOMEM;
	start = calloc(tile_count + 1, sizeof(uint64_t));
	t->order = malloc(att->r * sizeof(uint64_t));
	t->tiles = calloc(tile_count ? tile_count : 1, sizeof(*t->tiles));
	if (!start || !t->order || !t->tiles) {
		free(start);
		ps_tiling_free(t);
		return ps_error_set(err, PS_ENOMEM, "out of memory for the tiles");
	}
	/* counting sort: monomials stay in rank order inside a tile */
	for (uint64_t m = 0; m < att->r; m++)
		start[tile_of[m] + 1]++;
	for (uint64_t k = 0; k < tile_count; k++)
		start[k + 1] += start[k];
	for (uint64_t k = 0; k < tile_count; k++)
		if (start[k + 1] > start[k]) {
			t->tiles[kept].first = start[k];
			t->tiles[kept].count = start[k + 1] - start[k];
			kept++;
		}
	for (uint64_t m = 0; m < att->r; m++)
		t->order[start[tile_of[m]]++] = m;
	free(start);
	t->tile_count = kept;
	t->chunk = att->r;
	if (fill_features(t, att, err)) {
		ps_tiling_free(t);
		return PS_ENOMEM;
	}
	return PS_OK;
}

uint64_t ps_subset_rank(const uint64_t *subset, uint64_t k, uint64_t n)
{
	uint64_t rank = 0, next = 0, from, to;

	/*
	 * The subsets that agree before position i and have a smaller entry
	 * v there, next <= v < subset[i]: C(n - 1 - v, k - 1 - i) of each v.
	 * By the hockey stick, sum_{j < J} C(j, m) = C(J, m + 1), so they are
	 * C(n - next, k - i) - C(n - subset[i], k - i), two binomials a
	 * position instead of one a skipped value. Neither overflows: as
	 * next >= i, C(n - next, k - i) <= C(n - i, k - i) <= C(n, k).
	 */
	if (n < PS_BINOM_ROWS) {
		const uint64_t (*c)[PS_BINOM_ROWS] = ps_binom_rows();

		for (uint64_t i = 0; i < k; i++) {
			rank += c[n - next][k - i] - c[n - subset[i]][k - i];
			next = subset[i] + 1;
		}
		return rank;
	}
	for (uint64_t i = 0; i < k; i++) {
		ps_binom(n - next, k - i, &from);
		ps_binom(n - subset[i], k - i, &to);
		rank += from - to;
		next = subset[i] + 1;
	}
	return rank;
}

uint64_t ps_group_tile_of(const struct ps_monomials *mono, uint64_t m,
			  uint64_t group_size, uint64_t groups, uint64_t k,
			  uint64_t *subset)
{
	const uint32_t *sup = ps_monomial_support(mono, m);
	uint64_t have = 0, chosen[64], c = 0, a = 0;

	/* the groups holding the support, increasing (the support is sorted) */
	for (uint8_t q = 0; q < mono->support_size[m]; q++) {
		uint64_t grp = sup[q] / group_size;

		if (!have || subset[have - 1] != grp)
			subset[have++] = grp;
	}
	/* A.1: "if the number of groups is smaller than g, we use the smallest
	 * non-included group indices for the rest of the groups" */
	for (uint64_t v = 0; c < k; v++) {
		if (a < have && subset[a] == v)
			chosen[c++] = subset[a++];
		else if (c - a < k - have)
			chosen[c++] = v;
	}
	for (uint64_t i = 0; i < k; i++)
		subset[i] = chosen[i];
	return ps_subset_rank(subset, k, groups);
}

int ps_tiling_groups(struct ps_tiling *t, const struct ps_attention *att,
		     uint64_t group_size, uint64_t *tiles,
		     struct ps_error *err)
{
	uint64_t groups = ps_ceil_div(att->d, group_size);
	uint64_t k = ps_min_u64(att->g, groups), count, subset[64];
	uint64_t *tile_of;
	int rc;

	if (ps_binom(groups, k, &count) || count > att->r)
		return ps_error_set(err, PS_ENOMEM, "too many aggregation tiles");
	if (ps_tiling_fits(att, count, err))
		return PS_ENOMEM;
	tile_of = malloc(att->r * sizeof(uint64_t));
	if (!tile_of)
		return ps_error_set(err, PS_ENOMEM, "out of memory for the tiles");
	for (uint64_t m = 0; m < att->r; m++)
		tile_of[m] = ps_group_tile_of(&att->mono, m, group_size, groups,
					      k, subset);
	rc = ps_tiling_partition(t, att, tile_of, count, err);
	free(tile_of);
	*tiles = count;
	return rc;
}

/* ---- the bound on red pebbles ---------------------------------------- */

/* phase 0 (stored only): a block of rows of K or Q and its U */
static uint64_t peak_u(const struct ps_tiling *t)
{
	return t->stored ? t->u_rows * (t->all_count + t->u_chunk) : 0;
}

/* the fused mac's slots: the product, and U regenerated when not stored */
static uint64_t mac_slots(const struct ps_tiling *t)
{
	return t->stored ? 1 : 2;
}

/* phase 1: an H tile (or sub-tile), its rows of K (or U2) and V */
static uint64_t peak_h(const struct ps_tiling *t, const struct ps_attention *att)
{
	const uint64_t v_cols = ps_min_u64(t->h_width, att->d);
	uint64_t phase1 = 0;

	for (uint64_t k = 0; k < t->tile_count; k++) {
		const struct ps_agg_tile *tile = &t->tiles[k];
		uint64_t c = ps_min_u64(tile->count, t->chunk);
		uint64_t src1 = t->stored ? t->h_rows * c
					  : t->h_rows * tile->gen_count;

		phase1 = ps_max_u64(phase1, c * t->h_width + src1 +
						t->h_rows * v_cols + mac_slots(t));
	}
	return phase1;
}

/* phase 2: an N tile, the Q strip or a tile's Q (or U1), an H tile */
static uint64_t peak_n(const struct ps_tiling *t, const struct ps_attention *att)
{
	uint64_t inner = 0;

	for (uint64_t k = 0; k < t->tile_count; k++) {
		const struct ps_agg_tile *tile = &t->tiles[k];
		uint64_t c = ps_min_u64(tile->count, t->chunk);
		uint64_t src2 = t->stored ? t->n_height * c :
				t->keep_q ? 0 : t->n_height * tile->gen_count;

		inner = ps_max_u64(inner, src2 + c * t->n_width + mac_slots(t));
	}
	/* a finished tile computes one column of A at a time */
	if (att->normalize)
		inner = ps_max_u64(inner, t->n_height);
	return (t->keep_q ? t->n_height * t->all_count : 0) +
	       t->n_height * t->n_width +
	       (att->normalize && t->n_width < att->nb ? t->n_height : 0) +
	       inner;
}

uint64_t ps_tiling_peak(const struct ps_tiling *t,
			const struct ps_attention *att)
{
	return ps_max_u64(peak_u(t), ps_max_u64(peak_h(t, att), peak_n(t, att)));
}

/* ---- the cost model -------------------------------------------------- */

/*
 * What the cost model reads of the tiles: their count and four sums. Each
 * tile's term is a product of the loop sizes by one of its own figures,
 * so the sums give the same totals (also modulo 2^64: multiplication
 * distributes over a wrapping sum), and ps_tiling_tune, which changes the
 * sizes alone, costs a candidate in O(1) instead of O(tiles).
 */
struct tile_sums {
	uint64_t tiles;
	uint64_t src;   /* phase 1's source per row: monomials (stored) or features */
	uint64_t whole; /* monomials of the tiles of one chunk */
	uint64_t cut;   /* monomials of the tiles cut into sub-tiles */
	uint64_t gen;   /* the features of all tiles */
};

static void tile_sums(const struct ps_tiling *t, struct tile_sums *s)
{
	memset(s, 0, sizeof(*s));
	s->tiles = t->tile_count;
	for (uint64_t k = 0; k < t->tile_count; k++) {
		const struct ps_agg_tile *tile = &t->tiles[k];

		s->src += t->stored ? tile->count : tile->gen_count;
		if (tile->count <= t->chunk)
			s->whole += tile->count;
		else
			s->cut += tile->count;
		s->gen += tile->gen_count;
	}
}

/* Phases 0 and 1 of the cost model: U stored, then H tile by tile; added
 * into io by array (the kinds). */
static void predict_h(const struct ps_tiling *t, const struct tile_sums *s,
		      const struct ps_attention *att, struct ps_array_io *io)
{
	const uint64_t n = att->n, d = att->d, r = att->r, nb = att->nb;
	const uint64_t row_steps = ps_block_count(n, t->h_rows);
	const uint64_t h_blocks = ps_block_count(nb, t->h_width);
	/* phase 1 reads U2 (stored) or K (regenerating U2) */
	struct ps_array_io *src = &io[t->stored ? PS_KIND_U2 : PS_KIND_K];

	/* phase 0: each row of K and Q read once, U2 and U1 saved once */
	if (t->stored) {
		io[PS_KIND_K].loads += n * t->all_count;
		io[PS_KIND_Q].loads += n * t->all_count;
		io[PS_KIND_U2].saves += n * r;
		io[PS_KIND_U1].saves += n * r;
	}
	/* phase 1, tile by tile (the sums of struct tile_sums); over the
	 * column blocks V's columns sum to d and H's to |B| */
	src->loads += h_blocks * n * s->src;
	io[PS_KIND_V].loads += s->tiles * n * d;
	io[PS_KIND_H].saves += s->whole * nb;
	/* sub-tiles of H: reloaded after the first rows, saved after every
	 * step */
	io[PS_KIND_H].loads += (row_steps - 1) * s->cut * nb;
	io[PS_KIND_H].saves += row_steps * s->cut * nb;
}

/* Phase 2 of the cost model: N and A, added into io. */
static void predict_n(const struct ps_tiling *t, const struct tile_sums *s,
		      const struct ps_attention *att, struct ps_array_io *io)
{
	const uint64_t n = att->n, d = att->d, r = att->r, nb = att->nb;
	const uint64_t row_blocks = ps_block_count(n, t->n_height);
	const uint64_t n_blocks = ps_block_count(nb, t->n_width);

	/* Q (strip or per tile), H once per row block, U1 when stored */
	if (t->keep_q)
		io[PS_KIND_Q].loads += n * t->all_count;
	else if (!t->stored)
		io[PS_KIND_Q].loads += n_blocks * n * s->gen;
	io[PS_KIND_H].loads += row_blocks * r * nb;
	if (t->stored)
		io[PS_KIND_U1].loads += n_blocks * n * r;
	if (att->normalize)
		io[PS_KIND_A].saves += n * d;
	else
		io[PS_KIND_N].saves += n * nb;
}

void ps_tiling_predict(const struct ps_tiling *t,
		       const struct ps_attention *att, struct ps_array_io *by_array)
{
	struct tile_sums s;

	tile_sums(t, &s);
	memset(by_array, 0, PS_ARRAY_MAX * sizeof(*by_array));
	predict_h(t, &s, att, by_array);
	predict_n(t, &s, att, by_array);
}

uint64_t ps_tiling_state_bytes(const struct ps_problem *pb, bool stored)
{
	const struct ps_attention *att = pb->att;
	const uint64_t u = att->count[PS_KIND_U1] + att->count[PS_KIND_U2];

	if (pb->element_only)
		return ps_engine_state_bytes(&att->dag) + (stored ? 2 : 1) * u / 8;
	if (stored)
		return ps_engine_state_bytes(&att->dag) + u / 8;
	return ps_engine_state_bytes_except(&att->dag, u) + 2 * 2 * att->r * sizeof(uint64_t);
}

void ps_tiling_plan(const struct ps_tiling *t, const struct ps_attention *att,
		    struct ps_plan *plan)
{
	struct ps_array_io by_array[PS_ARRAY_MAX];

	ps_tiling_predict(t, att, by_array);
	ps_plan_predicted(plan, by_array);
	plan->peak_red = ps_tiling_peak(t, att);
	plan->bounded = true;
}

void ps_cheapest_init(struct ps_cheapest *c)
{
	memset(c, 0, sizeof(*c));
}

bool ps_cheapest_offer(struct ps_cheapest *c, struct ps_tiling *t,
		       const struct ps_attention *att, uint64_t M)
{
	struct ps_plan p;

	memset(&p, 0, sizeof(p));
	ps_tiling_plan(t, att, &p);
	c->last_peak = p.peak_red;
	if (p.peak_red > M ||
	    (c->found && p.loads + p.saves >= c->plan.loads + c->plan.saves)) {
		ps_tiling_free(t);
		return false;
	}
	if (c->found)
		ps_tiling_free(&c->best);
	c->best = *t;
	c->plan = p;
	c->found = true;
	return true;
}

/* ---- --sizes tuned: the loop sizes chosen by the cost model ---------- */

int ps_tiling_sizes(const struct ps_problem *pb, const char *name, bool *tuned,
		    struct ps_error *err)
{
	*tuned = pb->sizes && !strcmp(pb->sizes, "tuned");
	if (!pb->sizes || *tuned || !strcmp(pb->sizes, "proof"))
		return PS_OK;
	return ps_error_set(err, PS_EINPUT, "unknown sizes '%s' for %s: proof or tuned",
			    pb->sizes, name);
}

int ps_tiling_build_for(const struct ps_problem *pb, const char *name,
			ps_tiling_build_fn proof, ps_tiling_build_fn tuned,
			ps_tiling_build_fn *build, struct ps_error *err)
{
	bool is_tuned;
	int rc = ps_tiling_sizes(pb, name, &is_tuned, err);

	*build = is_tuned ? tuned : proof;
	return rc;
}

void ps_plan_tuned(struct ps_plan *plan)
{
	plan->bounded = false;
	plan->sizes = "tuned";
}

/* The two phases that ps_tiling_tune sizes apart. */
enum phase { PHASE_H, PHASE_N };

static void phase_set(struct ps_tiling *t, enum phase ph, uint64_t width,
		      uint64_t rows)
{
	if (ph == PHASE_H) {
		t->h_width = width;
		t->h_rows = rows;
	} else {
		t->n_width = width;
		t->n_height = rows;
	}
}

static uint64_t phase_io(const struct ps_tiling *t, const struct tile_sums *s,
			 const struct ps_attention *att, enum phase ph)
{
	struct ps_array_io io[PS_ARRAY_MAX] = { { 0, 0 } };
	uint64_t loads, saves;

	if (ph == PHASE_H)
		predict_h(t, s, att, io);
	else
		predict_n(t, s, att, io);
	ps_array_io_total(io, &loads, &saves);
	return loads + saves;
}

/*
 * The most rows in [1, n] with the phase's peak within M at this width, by
 * bisection (the peak grows with the rows); 0 when one row does not fit.
 * bound is the tiling or its peak tiles (peak_tiles).
 */
static uint64_t most_rows(struct ps_tiling *bound, const struct ps_attention *att,
			  uint64_t M, enum phase ph, uint64_t width)
{
	uint64_t lo = 0, hi = att->n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;

		phase_set(bound, ph, width, mid);
		if ((ph == PHASE_H ? peak_h(bound, att) : peak_n(bound, att)) <= M)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * One phase's sizes: for every width in 1..|B| the most rows that fit M
 * (the phase's I/O never grows with its rows), the cheapest by the phase's
 * cost model, the narrowest among equals; set in t and bound. Returns its
 * I/O, UINT64_MAX (and width and rows 1) when nothing fits.
 */
static uint64_t tune_phase(struct ps_tiling *t, struct ps_tiling *bound,
			   const struct ps_attention *att, uint64_t M,
			   enum phase ph)
{
	uint64_t best = UINT64_MAX, best_width = 1, best_rows = 1;
	struct tile_sums s;

	/* the sizes change, the tiles and the chunk do not */
	tile_sums(t, &s);
	for (uint64_t w = 1; w <= att->nb; w++) {
		uint64_t rows = most_rows(bound, att, M, ph, w), io;

		/* the peak grows with the width too: no wider tile fits */
		if (!rows)
			break;
		phase_set(t, ph, w, rows);
		io = phase_io(t, &s, att, ph);
		if (io < best) {
			best = io;
			best_width = w;
			best_rows = rows;
		}
	}
	phase_set(t, ph, best_width, best_rows);
	phase_set(bound, ph, best_width, best_rows);
	return best;
}

/* Tiles by height, cut at chunk, tallest first, then by features. */
static int taller_first(const void *a, const void *b)
{
	const struct ps_agg_tile *x = a, *y = b;

	if (x->count != y->count)
		return (x->count < y->count) - (x->count > y->count);
	return (x->gen_count < y->gen_count) - (x->gen_count > y->gen_count);
}

/*
 * The tiles that bound t's peak, into bound (a copy of t whose tiles are
 * out, room for t's): each tile's share of the peak grows with its height
 * (cut at chunk) and its features, so only the tiles that no other one
 * matches in both count. A tiling of many equal blocks keeps one or two.
 */
static void peak_tiles(const struct ps_tiling *t, struct ps_tiling *bound,
		       struct ps_agg_tile *out)
{
	/* tallest: the most features among the tallest tiles; widest: the
	 * tallest among those with the most features. A tile that neither
	 * passes is matched by one of them, so only the others are sorted. */
	struct ps_agg_tile tallest = { 0 }, widest = { 0 };
	uint64_t kept = 0, most_gen = 0, count = 0;

	for (uint64_t k = 0; k < t->tile_count; k++) {
		struct ps_agg_tile x = t->tiles[k];

		x.count = ps_min_u64(x.count, t->chunk);
		if (k == 0 || taller_first(&x, &tallest) < 0)
			tallest = x;
		if (k == 0 || x.gen_count > widest.gen_count ||
		    (x.gen_count == widest.gen_count && x.count > widest.count))
			widest = x;
	}
	if (t->tile_count) {
		out[count++] = tallest;
		out[count++] = widest;
	}
	for (uint64_t k = 0; k < t->tile_count; k++) {
		struct ps_agg_tile x = t->tiles[k];

		x.count = ps_min_u64(x.count, t->chunk);
		if (x.gen_count > tallest.gen_count && x.count > widest.count)
			out[count++] = x;
	}
	qsort(out, count, sizeof(*out), taller_first);
	for (uint64_t k = 0; k < count; k++)
		if (kept == 0 || out[k].gen_count > most_gen) {
			most_gen = out[k].gen_count;
			out[kept++] = out[k];
		}
	*bound = *t;
	bound->tiles = out;
	bound->tile_count = kept;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The sub-tile heights worth trying: 1 and each tile's height; between
 * two of them the same tiles are cut, and the lower peaks less. */
static uint64_t chunk_candidates(const struct ps_tiling *t, uint64_t *out)
{
	uint64_t count = 1, kept = 1;

	out[0] = 1;
	for (uint64_t k = 0; k < t->tile_count; k++)
		out[count++] = t->tiles[k].count;
	qsort(out, count, sizeof(uint64_t), compare_u64);
	for (uint64_t k = 1; k < count; k++)
		if (out[k] != out[kept - 1])
			out[kept++] = out[k];
	return kept;
}

/* The loop sizes of a tuned tiling. */
struct tuned_sizes {
	uint64_t chunk, h_width, h_rows, n_width, n_height;
	bool keep_q;
};

static void sizes_set(struct ps_tiling *t, const struct tuned_sizes *z)
{
	t->chunk = z->chunk;
	t->h_width = z->h_width;
	t->h_rows = z->h_rows;
	t->n_width = z->n_width;
	t->n_height = z->n_height;
	t->keep_q = z->keep_q;
}

/* Nothing fits: the sizes of the least peak, for the message that says
 * which M the tiling needs. */
static void least_sizes(struct ps_tiling *t, const struct ps_attention *att,
			unsigned vary)
{
	struct tuned_sizes z = { t->chunk, 1, 1, 1, 1, t->keep_q };

	if (vary & PS_TUNE_CHUNK)
		z.chunk = 1;
	sizes_set(t, &z);
	if (vary & PS_TUNE_KEEP_Q) {
		uint64_t with = (t->keep_q = true, ps_tiling_peak(t, att));

		t->keep_q = false;
		t->keep_q = with < ps_tiling_peak(t, att);
	}
}

bool ps_tiling_tune(struct ps_tiling *t, const struct ps_attention *att,
		    uint64_t M, unsigned vary)
{
	uint64_t *chunks = malloc((t->tile_count + 1) * sizeof(uint64_t));
	struct ps_agg_tile *tops = malloc((t->tile_count + 1) * sizeof(*tops));
	uint64_t chunk_count = 1, best_io = UINT64_MAX;
	struct tuned_sizes best, z = { .keep_q = t->keep_q };
	struct ps_tiling bound;

	if (!chunks || !tops || peak_u(t) > M) {
		free(chunks);
		free(tops);
		least_sizes(t, att, vary);
		return false;
	}
	if (vary & PS_TUNE_CHUNK)
		chunk_count = chunk_candidates(t, chunks);
	else
		chunks[0] = t->chunk;
	/* phase 1 and phase 2 peak and cost apart; the sub-tile height and
	 * the Q strip are tried whole */
	for (uint64_t c = 0; c < chunk_count; c++) {
		uint64_t io_h;

		t->chunk = z.chunk = chunks[c];
		peak_tiles(t, &bound, tops);
		io_h = tune_phase(t, &bound, att, M, PHASE_H);
		if (io_h == UINT64_MAX)
			continue;
		z.h_width = t->h_width;
		z.h_rows = t->h_rows;
		for (int q = 0; q < ((vary & PS_TUNE_KEEP_Q) ? 2 : 1); q++) {
			uint64_t io_n;

			if (vary & PS_TUNE_KEEP_Q)
				t->keep_q = bound.keep_q = q;
			io_n = tune_phase(t, &bound, att, M, PHASE_N);
			if (io_n == UINT64_MAX || io_h + io_n >= best_io)
				continue;
			best_io = io_h + io_n;
			z.n_width = t->n_width;
			z.n_height = t->n_height;
			z.keep_q = t->keep_q;
			best = z;
		}
	}
	free(chunks);
	free(tops);
	if (best_io == UINT64_MAX) {
		least_sizes(t, att, vary);
		return false;
	}
	sizes_set(t, &best);
	return true;
}

static bool pruning = true;

void ps_tiling_set_pruning(bool on)
{
	pruning = on;
}

bool ps_tiling_pruning(void)
{
	return pruning;
}

/*
 * Whether no tiling of att's monomials (at most r tiles, each of at most
 * d features) can make the cost model wrap: with every size at least 1,
 * each term of predict_h and predict_n is at most n |B| r times its
 * factor (the sources (d + 1), Q d, V, H's whole tiles 1, cut ones 2,
 * phase 2's H 1, U1 1, phase 0 2 + 2, the outputs 1), 2d + 12 in all.
 */
static bool io_exact(const struct ps_attention *att)
{
	uint64_t cap;

	return !ps_mul_u64(att->n, att->nb, &cap) && !ps_mul_u64(cap, att->r, &cap) &&
	       !ps_mul_u64(cap, 2 * (uint64_t)att->d + 12, &cap);
}

/*
 * The least I/O the cost model can give a tiling of att's r monomials in
 * count tiles, U stored or not, whatever its sizes (every block count at
 * least 1): V[., columns below d] loaded once a tile, count n d; the
 * features every tile reads, at least the all_count any monomial reads,
 * loaded from K in phase 1 and Q in phase 2 (the strip or per tile), or
 * stored, K and Q read once in phase 0: 2 n all_count either way; stored,
 * U1 and U2 saved once (2 n r) and loaded at least once (2 n r); H's r |B|
 * saved at least once and loaded at least once in phase 2; the outputs.
 * With io_exact, nothing here or in the model wraps.
 */
static uint64_t io_floor(const struct ps_attention *att, uint64_t count, bool stored)
{
	const uint64_t n = att->n, all = att->g ? att->d : 0;

	return count * n * att->d + 2 * n * all + (stored ? 4 * n * att->r : 0) +
	       2 * att->r * att->nb + n * (att->normalize ? att->d : att->nb);
}

uint64_t ps_tiling_io_floor(const struct ps_attention *att, uint64_t count, bool stored)
{
	/* a tiling has at most r tiles: io_exact's bound */
	if (!pruning || att->causal || att->exact || !io_exact(att))
		return 0;
	return io_floor(att, ps_min_u64(count, att->r), stored);
}

int ps_tiling_tune_blocks(const struct ps_attention *att, uint64_t M,
			  ps_tiling_setup_fn setup, unsigned vary,
			  struct ps_cheapest *c, struct ps_error *err)
{
	uint64_t last = 0;
	bool exact = pruning && io_exact(att), pruned = false, set_up = false, stored = false;

	for (uint64_t tiles = 1; tiles <= att->r; tiles++) {
		uint64_t size = ps_ceil_div(att->r, tiles), count;
		struct ps_tiling t;
		int rc;

		/* an H tile of size monomials needs size red pebbles */
		if (size == last || size > M)
			continue;
		last = size;
		count = ps_block_count(att->r, size);
		/*
		 * Pruning. The tilings from here on have sizes no larger and
		 * tile counts no smaller, and io_floor grows with the count:
		 * once the floor reaches the cheapest I/O found, no later
		 * tiling costs less, and ps_cheapest_offer keeps only one that
		 * costs less. The floor needs the loops (stored or not), the
		 * same for every size of one setup: it is taken from the first
		 * tiling set up. What the skipped setups could still do is
		 * refuse their tiles for memory: that check alone is kept, so
		 * that the search fails where it failed unpruned.
		 */
		if (!pruned && exact && set_up && c->found &&
		    io_floor(att, count, stored) >= c->plan.loads + c->plan.saves)
			pruned = true;
		if (pruned) {
			if (ps_tiling_fits(att, count, err))
				return PS_ENOMEM;
			continue;
		}
		if ((rc = setup(att, M, size, &t, err)))
			return rc;
		set_up = true;
		stored = t.stored;
		ps_tiling_tune(&t, att, M, vary);
		ps_cheapest_offer(c, &t, att, M);
	}
	return PS_OK;
}

uint64_t ps_tiling_least_memory(const struct ps_attention *att,
				ps_tiling_build_fn build)
{
	struct ps_tiling t;
	uint64_t peak;

	if (build(att, 1, &t, NULL))
		return UINT64_MAX;
	peak = ps_tiling_peak(&t, att);
	ps_tiling_free(&t);
	return peak;
}

int ps_tiling_fitted(const struct ps_problem *pb, const char *name,
		     ps_tiling_build_fn build, struct ps_tiling *t,
		     struct ps_error *err)
{
	int rc = build(pb->att, pb->M, t, err);

	if (rc)
		return rc;
	if (ps_tiling_peak(t, pb->att) > pb->M) {
		ps_tiling_free(t);
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for %s: it needs M >= %llu",
				    (unsigned long long)pb->M, name,
				    (unsigned long long)ps_tiling_least_memory(pb->att, build));
	}
	return PS_OK;
}

int ps_tiling_emit(const struct ps_problem *pb, const char *name,
		   ps_tiling_build_fn build, struct ps_sink *sink,
		   struct ps_error *err)
{
	struct ps_tiling t;
	int rc = ps_tiling_fitted(pb, name, build, &t, err);

	if (rc)
		return rc;
	rc = ps_tiling_run(&t, pb->att, sink, err);
	ps_tiling_free(&t);
	return rc;
}

/* ---- emission --------------------------------------------------------- */

struct emitter {
	const struct ps_tiling *t;
	const struct ps_attention *att;
	struct ps_sink *sink;
	struct ps_error *err;
};

#define EMIT(opcode, kind, c0, c1) \
	if (ps_emit(e->sink, (opcode), (kind), (c0), (c1), e->err)) \
		return e->err->code

#define EMIT_MAC(into, fuse, c0, c1, c2) \
	if (ps_emit_mac(e->sink, (into), (fuse), (c0), (c1), (c2), e->err)) \
		return e->err->code

/* Emits the loop of count iterations of the body. */
static int emit_loop(const struct emitter *e, const struct ps_op *body, uint64_t (*step)[3],
		     size_t len, uint64_t count)
{
	struct ps_repeat r;

	r.body = body;
	r.step = (const uint64_t (*)[3])step;
	r.len = len;
	r.count = count;
	return ps_sink_repeat(e->sink, &r, e->err);
}

/* phase 0: U (U2 from K, or U1 from Q) computed, saved and deleted */
static int emit_stored_u(const struct emitter *e, enum ps_kind u,
			 enum ps_kind from)
{
	const struct ps_tiling *t = e->t;
	const struct ps_attention *att = e->att;
	struct ps_coordset feats = ps_list(t->all, t->all_count);

	for (uint64_t jk = 0; jk < ps_block_count(att->n, t->u_rows); jk++) {
		struct ps_coordset rows = ps_range(ps_block_lo(jk, t->u_rows),
						   ps_block_hi(jk, t->u_rows, att->n));

		if (t->all_count)
			EMIT(PS_OP_LOAD, from, rows, feats);
		/* the full chunks of monomials, then the rest: a loop each
		 * (struct ps_repeat) */
		for (int part = 0; part < 2; part++) {
			const uint64_t c = t->u_chunk, full = att->r / c;
			const uint64_t lo = part ? full * c : 0, width = part ? att->r - lo : c;
			const struct ps_coordset ms = ps_range(lo, lo + width), none = ps_range(0, 0);
			struct ps_op body[3];
			uint64_t step[3][3];
			size_t len = 0;
			int rc;

			if (!(part ? (width ? 1 : 0) : full))
				continue;
			ps_repeat_add(body, step, &len, PS_OP_COMPUTE, u, rows, ms, none, 2, width);
			ps_repeat_add(body, step, &len, PS_OP_SAVE, u, rows, ms, none, 2, width);
			ps_repeat_add(body, step, &len, PS_OP_DELETE, u, rows, ms, none, 2, width);
			if ((rc = emit_loop(e, body, step, len, part ? 1 : full)))
				return rc;
		}
		if (t->all_count)
			EMIT(PS_OP_DELETE, from, rows, feats);
	}
	return PS_OK;
}

/*
 * Phase 1 with U stored and a tile of one chunk: V[J, B below d] and
 * U2[J, M] stream through the tile's sums H[M, B] for every block J of
 * rows, one loop (struct ps_repeat) for the full blocks and one for the
 * rest: the engine judges each as a unit.
 */
static int emit_h_stream(const struct emitter *e, struct ps_coordset ms, struct ps_coordset bs,
			 struct ps_coordset vs, bool has_v)
{
	const uint64_t n = e->att->n, h = e->t->h_rows, full = n / h;

	for (int part = 0; part < 2; part++) {
		const uint64_t lo = part ? full * h : 0, rows = part ? n - lo : h;
		const uint64_t count = part ? (rows ? 1 : 0) : full;
		const struct ps_coordset js = ps_range(lo, lo + rows), none = ps_range(0, 0);
		struct ps_op body[5];
		uint64_t step[5][3];
		size_t len = 0;
		int rc;

		if (!count)
			continue;
		if (has_v)
			ps_repeat_add(body, step, &len, PS_OP_LOAD, PS_KIND_V, js, vs, none, 1, rows);
		ps_repeat_add(body, step, &len, PS_OP_LOAD, PS_KIND_U2, js, ms, none, 1, rows);
		ps_repeat_add(body, step, &len, PS_OP_MAC, PS_KIND_H, js, ms, bs, 1, rows);
		ps_repeat_add(body, step, &len, PS_OP_DELETE, PS_KIND_U2, js, ms, none, 1, rows);
		if (has_v)
			ps_repeat_add(body, step, &len, PS_OP_DELETE, PS_KIND_V, js, vs, none, 1, rows);
		if ((rc = emit_loop(e, body, step, len, count)))
			return rc;
	}
	return PS_OK;
}

/* phase 1 for one tile and one column block [b0, b1) */
static int emit_h_tile(const struct emitter *e, const struct ps_agg_tile *tile,
		       uint64_t b0, uint64_t b1)
{
	const struct ps_tiling *t = e->t;
	const struct ps_attention *att = e->att;
	const uint64_t *mono = t->order + tile->first;
	struct ps_coordset feats = ps_list(t->gen + tile->gen_first, tile->gen_count);
	struct ps_coordset bs = ps_range(b0, b1);
	struct ps_coordset vs = ps_range(b0, ps_min_u64(b1, att->d));
	bool has_v = b0 < att->d, has_k = !t->stored && tile->gen_count;
	uint64_t chunks = ps_block_count(tile->count, t->chunk);
	int rc;

	if (t->stored && chunks == 1) {
		struct ps_coordset ms = ps_list(mono, tile->count);

		if ((rc = emit_h_stream(e, ms, bs, vs, has_v)))
			return rc;
		EMIT(PS_OP_SAVE, PS_KIND_H, ms, bs);
		EMIT(PS_OP_DELETE, PS_KIND_H, ms, bs);
		return PS_OK;
	}
	for (uint64_t jk = 0; jk < ps_block_count(att->n, t->h_rows); jk++) {
		struct ps_coordset js = ps_range(ps_block_lo(jk, t->h_rows),
						 ps_block_hi(jk, t->h_rows, att->n));

		if (has_k)
			EMIT(PS_OP_LOAD, PS_KIND_K, js, feats);
		if (has_v)
			EMIT(PS_OP_LOAD, PS_KIND_V, js, vs);
		for (uint64_t ck = 0; ck < chunks; ck++) {
			uint64_t lo = ps_block_lo(ck, t->chunk);
			struct ps_coordset ms = ps_list(mono + lo,
				ps_block_hi(ck, t->chunk, tile->count) - lo);

			if (t->stored)
				EMIT(PS_OP_LOAD, PS_KIND_U2, js, ms);
			if (chunks > 1 && jk > 0)
				EMIT(PS_OP_LOAD, PS_KIND_H, ms, bs);
			EMIT_MAC(PS_KIND_H, !t->stored, js, ms, bs);
			if (chunks > 1) {
				EMIT(PS_OP_SAVE, PS_KIND_H, ms, bs);
				EMIT(PS_OP_DELETE, PS_KIND_H, ms, bs);
			}
			if (t->stored)
				EMIT(PS_OP_DELETE, PS_KIND_U2, js, ms);
		}
		if (has_k)
			EMIT(PS_OP_DELETE, PS_KIND_K, js, feats);
		if (has_v)
			EMIT(PS_OP_DELETE, PS_KIND_V, js, vs);
	}
	if (chunks == 1) {
		struct ps_coordset ms = ps_list(mono, tile->count);

		EMIT(PS_OP_SAVE, PS_KIND_H, ms, bs);
		EMIT(PS_OP_DELETE, PS_KIND_H, ms, bs);
	}
	return PS_OK;
}

int ps_emit_finish_n(struct ps_sink *sink, const struct ps_attention *att,
		     struct ps_coordset is, uint64_t b0, uint64_t b1,
		     struct ps_error *err)
{
	const enum ps_kind sum = att->exact ? PS_KIND_O : PS_KIND_N;
	int rc;

	if (!att->normalize) {
		if ((rc = ps_emit(sink, PS_OP_SAVE, sum, is, ps_range(b0, b1), err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, sum, is, ps_range(b0, b1), err)))
			return rc;
		return PS_OK;
	}
	for (uint64_t b = b0; b < b1; b++) {
		if (b == att->d)
			continue;
		if ((rc = ps_emit(sink, PS_OP_COMPUTE, PS_KIND_A, is, ps_one(b), err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, sum, is, ps_one(b), err)) ||
		    (rc = ps_emit(sink, PS_OP_SAVE, PS_KIND_A, is, ps_one(b), err)) ||
		    (rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_A, is, ps_one(b), err)))
			return rc;
	}
	return PS_OK;
}

/*
 * Phase 2 with U stored: the tiles [k, *k1), each of one chunk of the
 * same count of monomials and each following the last in the group
 * order, stream U1[I, M] and H[M, B] through the sums N[I, B], one loop
 * (struct ps_repeat) that the engine judges as a unit.
 */
static int emit_n_stream(const struct emitter *e, struct ps_coordset is, struct ps_coordset bs,
			 uint64_t k, uint64_t *k1)
{
	const struct ps_tiling *t = e->t;
	const uint64_t count = t->tiles[k].count;
	const struct ps_coordset ms = ps_list(t->order + t->tiles[k].first, count);
	const struct ps_coordset none = ps_range(0, 0);
	struct ps_op body[5];
	uint64_t step[5][3];
	size_t len = 0;

	for (*k1 = k + 1; *k1 < t->tile_count && t->tiles[*k1].count == count &&
			  t->tiles[*k1].first == t->tiles[*k1 - 1].first + count;
	     (*k1)++)
		;
	ps_repeat_add(body, step, &len, PS_OP_LOAD, PS_KIND_U1, is, ms, none, 2, count);
	ps_repeat_add(body, step, &len, PS_OP_LOAD, PS_KIND_H, ms, bs, none, 1, count);
	ps_repeat_add(body, step, &len, PS_OP_MAC, PS_KIND_N, is, ms, bs, 2, count);
	ps_repeat_add(body, step, &len, PS_OP_DELETE, PS_KIND_H, ms, bs, none, 1, count);
	ps_repeat_add(body, step, &len, PS_OP_DELETE, PS_KIND_U1, is, ms, none, 2, count);
	return emit_loop(e, body, step, len, *k1 - k);
}

/* phase 2 for one row block and one column block */
static int emit_n_tile(const struct emitter *e, struct ps_coordset is,
		       uint64_t b0, uint64_t b1)
{
	const struct ps_tiling *t = e->t;
	struct ps_coordset bs = ps_range(b0, b1);

	for (uint64_t k = 0; k < t->tile_count; k++) {
		const struct ps_agg_tile *tile = &t->tiles[k];
		const uint64_t *mono = t->order + tile->first;
		struct ps_coordset feats = ps_list(t->gen + tile->gen_first,
						   tile->gen_count);
		bool has_q = !t->keep_q && !t->stored && tile->gen_count;
		uint64_t k1;
		int rc;

		if (t->stored && ps_block_count(tile->count, t->chunk) == 1) {
			/* the tiles of one chunk that follow it too */
			if ((rc = emit_n_stream(e, is, bs, k, &k1)))
				return rc;
			k = k1 - 1;
			continue;
		}
		if (has_q)
			EMIT(PS_OP_LOAD, PS_KIND_Q, is, feats);
		for (uint64_t ck = 0; ck < ps_block_count(tile->count, t->chunk); ck++) {
			uint64_t lo = ps_block_lo(ck, t->chunk);
			struct ps_coordset ms = ps_list(mono + lo,
				ps_block_hi(ck, t->chunk, tile->count) - lo);

			if (t->stored)
				EMIT(PS_OP_LOAD, PS_KIND_U1, is, ms);
			EMIT(PS_OP_LOAD, PS_KIND_H, ms, bs);
			EMIT_MAC(PS_KIND_N, !t->stored, is, ms, bs);
			EMIT(PS_OP_DELETE, PS_KIND_H, ms, bs);
			if (t->stored)
				EMIT(PS_OP_DELETE, PS_KIND_U1, is, ms);
		}
		if (has_q)
			EMIT(PS_OP_DELETE, PS_KIND_Q, is, feats);
	}
	return ps_emit_finish_n(e->sink, e->att, is, b0, b1, e->err);
}

static int tiling_run(const struct ps_tiling *t, const struct ps_attention *att,
		      struct ps_sink *sink, struct ps_error *err);

int ps_tiling_run(const struct ps_tiling *t, const struct ps_attention *att,
		  struct ps_sink *sink, struct ps_error *err)
{
	struct ps_tiling view;
	int rc;

	if (t->order)
		return tiling_run(t, att, sink, err);
	/* blocks of the rank order: the emitters read the order itself and
	 * each tile's features */
	view = *t;
	view.gen = rank_gen(t, att);
	view.order = malloc((att->r ? att->r : 1) * sizeof(uint64_t));
	if (!view.gen || !view.order) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory for the tiles");
		goto done;
	}
	for (uint64_t m = 0; m < att->r; m++)
		view.order[m] = m;
	rc = tiling_run(&view, att, sink, err);
done:
	free(view.gen);
	free(view.order);
	return rc;
}

static int tiling_run(const struct ps_tiling *t, const struct ps_attention *att,
		      struct ps_sink *sink, struct ps_error *err)
{
	const struct emitter em = { t, att, sink, err }, *e = &em;
	const uint64_t n_blocks = ps_block_count(att->nb, t->n_width);
	struct ps_coordset all = ps_list(t->all, t->all_count);
	int rc;

	if (t->stored && ((rc = emit_stored_u(e, PS_KIND_U2, PS_KIND_K)) ||
			  (rc = emit_stored_u(e, PS_KIND_U1, PS_KIND_Q))))
		return rc;
	for (uint64_t k = 0; k < t->tile_count; k++)
		for (uint64_t bk = 0; bk < ps_block_count(att->nb, t->h_width); bk++)
			if ((rc = emit_h_tile(e, &t->tiles[k],
					      ps_block_lo(bk, t->h_width),
					      ps_block_hi(bk, t->h_width, att->nb))))
				return rc;
	for (uint64_t ik = 0; ik < ps_block_count(att->n, t->n_height); ik++) {
		struct ps_coordset is = ps_range(ps_block_lo(ik, t->n_height),
						 ps_block_hi(ik, t->n_height, att->n));
		bool strip = t->keep_q && t->all_count;

		if (strip)
			EMIT(PS_OP_LOAD, PS_KIND_Q, is, all);
		for (uint64_t step = 0; step < n_blocks; step++) {
			/* with normalisation the block holding column d first */
			uint64_t bk = att->normalize ?
				(step == 0 ? n_blocks - 1 : step - 1) : step;

			if ((rc = emit_n_tile(e, is, ps_block_lo(bk, t->n_width),
					      ps_block_hi(bk, t->n_width, att->nb))))
				return rc;
		}
		if (att->normalize)
			EMIT(PS_OP_DELETE, PS_KIND_N, is, ps_one(att->d));
		if (strip)
			EMIT(PS_OP_DELETE, PS_KIND_Q, is, all);
	}
	return PS_OK;
}
