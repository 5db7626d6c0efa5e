/*
 * The red-blue pebble game with partial aggregation (MODEL.md section 2).
 *
 * The state (src/engine_state.h) is bit planes of flags, a page at a time,
 * and a record for each partial sum. One record serves a sum's red and
 * blue value alike: a mac removes the blue pebble and a save copies red to
 * blue, so whenever a sum has both pebbles they hold the same set. Losing
 * the last copy (deleting a red sum without a blue one) drops the record
 * or the complete bit: the sum starts again from an empty set.
 */
#include "engine_state.h"

#include "bits.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const rule_names[] = {
	[PS_RULE_NONE] = "none",
	[PS_RULE_LOAD_NOT_BLUE] = "load-not-in-slow-memory",
	[PS_RULE_LOAD_RED] = "load-already-in-fast-memory",
	[PS_RULE_NOT_RED] = "not-in-fast-memory",
	[PS_RULE_PRODUCT_MOVED] = "product-moved",
	[PS_RULE_COMPUTE_INPUT] = "compute-input",
	[PS_RULE_COMPUTE_SUM] = "compute-sum",
	[PS_RULE_COMPUTE_RED] = "compute-already-in-fast-memory",
	[PS_RULE_PARENT_NOT_RED] = "parent-not-in-fast-memory",
	[PS_RULE_PARENT_INCOMPLETE] = "parent-incomplete",
	[PS_RULE_MAC_NOT_PRODUCT] = "mac-not-a-product",
	[PS_RULE_MAC_EDGE_DONE] = "mac-edge-already-aggregated",
	[PS_RULE_MAC_SUM_SLOW_ONLY] = "mac-sum-in-slow-memory-only",
	[PS_RULE_CAPACITY] = "capacity",
	[PS_RULE_END_NOT_SAVED] = "output-not-saved",
	[PS_RULE_END_INCOMPLETE] = "output-incomplete",
	[PS_RULE_END_COUNTS] = "end-counts-differ",
	[PS_RULE_NO_SUCH_NODE] = "no-such-node",
	[PS_RULE_BAD_OPERATION] = "operation-out-of-range",
};

static const char *const move_names[] = {
	[PS_MOVE_LOAD] = "load",
	[PS_MOVE_SAVE] = "save",
	[PS_MOVE_DELETE] = "delete",
	[PS_MOVE_COMPUTE] = "compute",
	[PS_MOVE_MAC] = "mac into",
	[PS_MOVE_MAC_PRODUCT] = "mac of",
	[PS_MOVE_END] = "end",
};

/* ---- planes: a bit per node, a page at a time ---------------------------- */

/* Words of a bitmap over the zones of nodes ids. */
static uint64_t zone_words(uint64_t nodes)
{
	return (nodes >> PS_ZONE_SHIFT) / 64 + 1;
}

static void zone_mark(uint64_t *zone, uint64_t k)
{
	zone[k >> PS_ZONE_SHIFT >> 6] |= UINT64_C(1) << ((k >> PS_ZONE_SHIFT) & 63);
}

/* Has no page ever been allocated for the nodes [lo, hi)? */
static bool zone_clear(const uint64_t *zone, uint64_t lo, uint64_t hi)
{
	return lo >= hi || ps_bits_none(zone, lo >> PS_ZONE_SHIFT, ((hi - 1) >> PS_ZONE_SHIFT) + 1);
}

static int plane_init(struct ps_plane *p, uint64_t nodes)
{
	p->pages = (nodes + PS_PAGE_BITS - 1) >> PS_PAGE_SHIFT;
	p->page = calloc(p->pages ? p->pages : 1, sizeof(*p->page));
	p->zone = calloc(zone_words(nodes), sizeof(uint64_t));
	return p->page && p->zone ? PS_OK : PS_ENOMEM;
}

/*
 * The slots [*lo, *hi) of a directory of `slots` slots, each over 2^shift
 * nodes, that lie in the first zone at or after zone *lo's with a page;
 * false when none is left. Teardown walks only these, so it takes time and
 * touches memory in proportion to the zones ever used, not to the
 * directory, whose untouched pages the kernel never maps.
 */
static bool zone_slots_next(const uint64_t *zone, uint64_t slots, unsigned shift,
			    uint64_t *lo, uint64_t *hi)
{
	const uint64_t per_zone = UINT64_C(1) << (PS_ZONE_SHIFT - shift);
	const uint64_t zones = (slots + per_zone - 1) / per_zone;

	for (uint64_t z = (*lo + per_zone - 1) / per_zone; zone && z < zones; z++) {
		const uint64_t word = zone[z >> 6] >> (z & 63);

		if (!word)
			z |= 63; /* no zone with a page in the rest of this word */
		if (!(word & 1))
			continue;
		*lo = z * per_zone;
		*hi = ps_min_u64(*lo + per_zone, slots);
		return true;
	}
	return false;
}

static void plane_free(struct ps_plane *p)
{
	for (uint64_t lo = 0, hi; p->page && zone_slots_next(p->zone, p->pages, PS_PAGE_SHIFT, &lo, &hi);
	     lo = hi)
		for (uint64_t k = lo; k < hi; k++)
			free(p->page[k]);
	free(p->page);
	free(p->zone);
	p->page = NULL;
	p->zone = NULL;
}

static uint64_t *plane_page(struct ps_plane *p, uint64_t k)
{
	uint64_t **slot = &p->page[k >> PS_PAGE_SHIFT];

	if (!*slot && (*slot = calloc(PS_PAGE_WORDS, sizeof(uint64_t))))
		zone_mark(p->zone, k);
	return *slot;
}

/* Sets or clears bits [lo, hi); a clear never allocates. */
static int plane_fill(struct ps_plane *p, uint64_t lo, uint64_t hi, bool set)
{
	if (lo < hi && lo >> 6 == (hi - 1) >> 6) {
		/* within one word, the common case */
		uint64_t *pg = set ? plane_page(p, lo) : p->page[lo >> PS_PAGE_SHIFT];
		uint64_t mask = ps_bits_word_mask((unsigned)(lo & 63), (unsigned)((hi - 1) & 63) + 1);

		if (!pg)
			return set ? PS_ENOMEM : PS_OK;
		if (set)
			pg[(lo & (PS_PAGE_BITS - 1)) >> 6] |= mask;
		else
			pg[(lo & (PS_PAGE_BITS - 1)) >> 6] &= ~mask;
		return PS_OK;
	}
	while (lo < hi) {
		uint64_t page_end = ((lo >> PS_PAGE_SHIFT) + 1) << PS_PAGE_SHIFT;
		uint64_t stop = hi < page_end ? hi : page_end;
		uint64_t *pg = set ? plane_page(p, lo) : p->page[lo >> PS_PAGE_SHIFT];
		uint64_t base = (lo >> PS_PAGE_SHIFT) << PS_PAGE_SHIFT;

		if (set && !pg)
			return PS_ENOMEM;
		if (pg)
			ps_bits_fill(pg, lo - base, stop - base, set);
		lo = stop;
	}
	return PS_OK;
}

static int plane_set(struct ps_plane *p, uint64_t k)
{
	uint64_t *pg = plane_page(p, k);

	if (!pg)
		return PS_ENOMEM;
	pg[(k & (PS_PAGE_BITS - 1)) >> 6] |= UINT64_C(1) << (k & 63);
	return PS_OK;
}

static void plane_clear(struct ps_plane *p, uint64_t k)
{
	uint64_t *pg = p->page[k >> PS_PAGE_SHIFT];

	if (pg)
		pg[(k & (PS_PAGE_BITS - 1)) >> 6] &= ~(UINT64_C(1) << (k & 63));
}

/* Bits set in [lo, hi). */
static uint64_t plane_count(const struct ps_plane *p, uint64_t lo, uint64_t hi)
{
	uint64_t n = 0;

	while (lo < hi) {
		uint64_t page_end = ((lo >> PS_PAGE_SHIFT) + 1) << PS_PAGE_SHIFT;
		uint64_t stop = hi < page_end ? hi : page_end;
		const uint64_t *pg = p->page[lo >> PS_PAGE_SHIFT];
		uint64_t base = (lo >> PS_PAGE_SHIFT) << PS_PAGE_SHIFT;

		if (pg)
			n += ps_bits_count(pg, lo - base, stop - base);
		lo = stop;
	}
	return n;
}

static int plane_copy(struct ps_plane *dst, const struct ps_plane *src)
{
	for (uint64_t k = 0; k < src->pages; k++) {
		if (!src->page[k]) {
			if (dst->page[k])
				memset(dst->page[k], 0, PS_PAGE_WORDS * 8);
			continue;
		}
		if (!dst->page[k] && !(dst->page[k] = malloc(PS_PAGE_WORDS * 8)))
			return PS_ENOMEM;
		zone_mark(dst->zone, k << PS_PAGE_SHIFT);
		memcpy(dst->page[k], src->page[k], PS_PAGE_WORDS * 8);
	}
	return PS_OK;
}

/* ---- partial sums ---------------------------------------------------------- */

static uint32_t *index_slot(struct ps_engine_state *s, ps_node v, bool make)
{
	uint32_t **pg = &s->index[v >> PS_INDEX_SHIFT];

	if (!*pg) {
		if (!make)
			return NULL;
		/* the page last emptied, all zero, serves again */
		if (s->index_spare) {
			*pg = s->index_spare;
			s->index_spare = NULL;
		} else if (!(*pg = calloc(PS_INDEX_SIZE, sizeof(uint32_t)))) {
			return NULL;
		}
		zone_mark(s->index_zone, v);
	}
	return &(*pg)[v & (PS_INDEX_SIZE - 1)];
}

/* The record number of sum v (0: none). */
static uint32_t index_first(const struct ps_engine_state *s, ps_node v)
{
	const uint32_t *pg = s->index[v >> PS_INDEX_SHIFT];

	return pg ? pg[v & (PS_INDEX_SIZE - 1)] : 0;
}

/* A new, empty record, unheld: its number (1-based), or 0 when out of
 * memory. Free records are chained through their count. */
static uint32_t rec_alloc(struct ps_engine_state *s, uint64_t in_degree)
{
	uint32_t at;

	if (s->rec_free) {
		at = s->rec_free;
		s->rec_free = (uint32_t)s->rec[at - 1].count;
	} else {
		if (s->rec_used == s->rec_cap) {
			uint32_t cap = s->rec_cap ? s->rec_cap * 2 : 64;
			struct ps_partial *grown;

			if (cap <= s->rec_cap || !(grown = realloc(s->rec, cap * sizeof(*grown))))
				return 0;
			s->rec = grown;
			s->rec_cap = cap;
		}
		at = ++s->rec_used;
	}
	memset(&s->rec[at - 1], 0, sizeof(s->rec[at - 1]));
	s->rec[at - 1].in_degree = in_degree;
	return at;
}

/* Do the sums first + r width + c (r in [r0, r1), c in [c0, c1)) lie in a
 * block known to hold one record (and, when open is asked for, known
 * open)? Then *at is its number. One row is looked up wherever it lies in
 * a block; more rows, in a block of the same rows' layout. */
static bool uniform_known(const struct ps_engine_state *s, ps_node first, uint64_t width,
			  uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1, bool open,
			  uint32_t *at)
{
	const ps_node lo = first + r0 * width + c0;

	for (unsigned k = 0; k < PS_UNIFORM_MAX; k++) {
		const struct ps_uniform *u = &s->uniform[k];
		uint64_t row, c;

		if (u->r0 >= u->r1 || lo < u->first || (open && !u->open))
			continue;
		if (r1 - r0 != 1) {
			if (first != u->first || width != u->width || r0 < u->r0 || r1 > u->r1 ||
			    c0 < u->c0 || c1 > u->c1)
				continue;
		} else {
			row = (lo - u->first) / u->width;
			c = (lo - u->first) % u->width;
			if (row < u->r0 || row >= u->r1 || c < u->c0 || c + (c1 - c0) > u->c1)
				continue;
		}
		*at = u->at;
		return true;
	}
	return false;
}

/* The block's sums all hold record at, found now (open: and are open, as
 * struct ps_uniform says). The same block known before is updated in
 * place, so that a block taken again and again keeps one slot. */
static void uniform_note(struct ps_engine_state *s, ps_node first, uint64_t width, uint64_t r0,
			 uint64_t r1, uint64_t c0, uint64_t c1, uint32_t at, bool open)
{
	struct ps_uniform *u = NULL;

	for (unsigned k = 0; k < PS_UNIFORM_MAX && !u; k++)
		if (s->uniform[k].r0 < s->uniform[k].r1 && s->uniform[k].first == first &&
		    s->uniform[k].width == width && s->uniform[k].r0 == r0 &&
		    s->uniform[k].r1 == r1 && s->uniform[k].c0 == c0 && s->uniform[k].c1 == c1)
			u = &s->uniform[k];
	if (!u) {
		u = &s->uniform[s->uniform_next];
		s->uniform_next = (s->uniform_next + 1) % PS_UNIFORM_MAX;
	}
	u->first = first;
	u->width = width;
	u->r0 = r0;
	u->r1 = r1;
	u->c0 = c0;
	u->c1 = c1;
	u->at = at;
	u->open = open;
}

/* Does block u's span of nodes meet [lo, hi)? */
static bool uniform_meets(const struct ps_uniform *u, ps_node lo, ps_node hi)
{
	return u->r0 < u->r1 && lo < u->first + (u->r1 - 1) * u->width + u->c1 &&
	       hi > u->first + u->r0 * u->width + u->c0;
}

/* Sum v's entry of the index changes: no block that has v is known
 * uniform any more. */
static void index_changed(struct ps_engine_state *s, ps_node v)
{
	for (unsigned k = 0; k < PS_UNIFORM_MAX; k++) {
		struct ps_uniform *u = &s->uniform[k];

		if (uniform_meets(u, v, v + 1) &&
		    (v - u->first) % u->width >= u->c0 && (v - u->first) % u->width < u->c1)
			u->r0 = u->r1 = 0;
	}
}

/* A red pebble among the nodes [lo, hi) taken, or a blue one placed: no
 * block that meets them is known open any more. */
static void uniform_unopen(struct ps_engine_state *s, ps_node lo, ps_node hi)
{
	for (unsigned k = 0; k < PS_UNIFORM_MAX; k++)
		if (s->uniform[k].open && uniform_meets(&s->uniform[k], lo, hi))
			s->uniform[k].open = false;
}

/* Sum v (holding no record) holds record at, shared or not. */
static int rec_hold(struct ps_engine_state *s, ps_node v, uint32_t at)
{
	uint32_t *slot = index_slot(s, v, true);

	if (!slot)
		return PS_ENOMEM;
	index_changed(s, v);
	*slot = at;
	s->rec[at - 1].refs++;
	s->index_live[v >> PS_INDEX_SHIFT]++;
	s->partial_count++;
	return PS_OK;
}

/* A new, empty record for sum v alone; NULL when out of memory. */
static struct ps_partial *partial_new(struct ps_engine_state *s, ps_node v,
				      uint64_t in_degree)
{
	uint32_t at = rec_alloc(s, in_degree);

	if (!at || rec_hold(s, v, at)) {
		if (at) {
			s->rec[at - 1].count = s->rec_free;
			s->rec_free = at;
		}
		return NULL;
	}
	return &s->rec[at - 1];
}

/* Drops sum v's hold on its record, if it has one; the last holder frees
 * it. */
static void partial_drop(struct ps_engine_state *s, ps_node v)
{
	uint32_t *slot = index_slot(s, v, false), at;
	uint64_t page = v >> PS_INDEX_SHIFT;
	struct ps_partial *r;

	if (!slot || !(at = *slot))
		return;
	index_changed(s, v);
	*slot = 0;
	s->partial_count--;
	r = &s->rec[at - 1];
	if (!--r->refs) {
		free(r->bits);
		r->bits = NULL;
		r->count = s->rec_free;
		s->rec_free = at;
	}
	if (!--s->index_live[page]) {
		/* kept for the next page to open: sums that complete and
		 * start again would otherwise free and clear a page each time */
		free(s->index_spare);
		s->index_spare = s->index[page];
		s->index[page] = NULL;
	}
}

/* Sum v's record, its own: a shared one is copied first. NULL when out of
 * memory. */
static struct ps_partial *partial_own(struct ps_engine_state *s, ps_node v)
{
	uint32_t *slot = index_slot(s, v, false), at = *slot, mine;
	struct ps_partial *r = &s->rec[at - 1], *q;

	if (r->refs == 1)
		return r;
	if (!(mine = rec_alloc(s, r->in_degree)))
		return NULL;
	r = &s->rec[at - 1]; /* the pool may have moved */
	q = &s->rec[mine - 1];
	*q = *r;
	q->refs = 1;
	if (r->bits) {
		size_t bytes = (r->in_degree + 63) / 64 * 8;

		if (!(q->bits = malloc(bytes))) {
			q->count = s->rec_free;
			s->rec_free = mine;
			return NULL;
		}
		memcpy(q->bits, r->bits, bytes);
	}
	r->refs--;
	index_changed(s, v);
	*slot = mine;
	return q;
}

/* Is edge k in the record? */
static bool partial_has(const struct ps_partial *r, uint64_t k)
{
	return r->bits ? ps_bits_test(r->bits, k) : (k >= r->lo && k < r->hi);
}

/* Does the record hold none of edges (increasing)? */
static bool partial_disjoint(const struct ps_partial *r, const struct ps_coordset *edges)
{
	if (!edges->list) {
		if (r->bits)
			return ps_bits_none(r->bits, edges->lo, edges->hi);
		return edges->hi <= r->lo || edges->lo >= r->hi;
	}
	if (!r->bits) {
		/* the first edge at or past lo lies past hi */
		size_t a = 0, b = edges->len;

		while (a < b) {
			size_t mid = a + (b - a) / 2;

			if (edges->list[mid] < r->lo)
				a = mid + 1;
			else
				b = mid;
		}
		return a == edges->len || edges->list[a] >= r->hi;
	}
	for (size_t q = 0; q < edges->len; q++)
		if (ps_bits_test(r->bits, edges->list[q]))
			return false;
	return true;
}

/* Is the list a run of consecutive edges? */
static bool list_is_run(const struct ps_coordset *edges)
{
	return !edges->list ||
	       edges->list[edges->len - 1] - edges->list[0] + 1 == edges->len;
}

/* The record takes edges (disjoint from it, increasing, not empty). */
static int partial_add(struct ps_partial *r, const struct ps_coordset *edges)
{
	const uint64_t n = ps_coordset_size(edges);
	const uint64_t a = ps_coordset_at(edges, 0), b = ps_coordset_at(edges, n - 1) + 1;

	if (!r->bits && list_is_run(edges)) {
		if (!r->count) {
			r->lo = a;
			r->hi = b;
			r->count = n;
			return PS_OK;
		}
		if (a == r->hi || b == r->lo) {
			r->lo = a < r->lo ? a : r->lo;
			r->hi = b > r->hi ? b : r->hi;
			r->count += n;
			return PS_OK;
		}
	}
	if (!r->bits) {
		r->bits = calloc((r->in_degree + 63) / 64, sizeof(uint64_t));
		if (!r->bits)
			return PS_ENOMEM;
		if (r->count)
			ps_bits_fill(r->bits, r->lo, r->hi, true);
	}
	if (!edges->list)
		ps_bits_fill(r->bits, edges->lo, edges->hi, true);
	else
		for (size_t q = 0; q < edges->len; q++)
			r->bits[edges->list[q] / 64] |= UINT64_C(1) << (edges->list[q] % 64);
	r->count += n;
	return PS_OK;
}

/* ---- the engine's state ------------------------------------------------------ */

static void col_runs_free(struct ps_engine_state *s);
static void known_red_drop(struct ps_engine_state *s, ps_node lo, ps_node hi);

static void state_free(struct ps_engine_state *s)
{
	if (!s)
		return;
	plane_free(&s->red);
	plane_free(&s->blue);
	plane_free(&s->computed);
	plane_free(&s->complete);
	col_runs_free(s);
	for (uint64_t lo = 0, hi; s->index &&
	     zone_slots_next(s->index_zone, s->index_pages, PS_INDEX_SHIFT, &lo, &hi); lo = hi)
		for (uint64_t k = lo; k < hi; k++)
			free(s->index[k]);
	for (uint32_t k = 0; s->rec && k < s->rec_used; k++)
		free(s->rec[k].bits); /* free records hold NULL */
	free(s->index_spare);
	free(s->index);
	free(s->index_live);
	free(s->index_zone);
	free(s->rec);
	free(s);
}

static struct ps_engine_state *state_new(uint64_t nodes)
{
	struct ps_engine_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->index_pages = (nodes + PS_INDEX_SIZE - 1) >> PS_INDEX_SHIFT;
	s->index = calloc(s->index_pages ? s->index_pages : 1, sizeof(*s->index));
	s->index_live = calloc(s->index_pages ? s->index_pages : 1, sizeof(*s->index_live));
	s->index_zone = calloc(zone_words(nodes), sizeof(uint64_t));
	if (!s->index || !s->index_live || !s->index_zone || plane_init(&s->red, nodes) ||
	    plane_init(&s->blue, nodes) || plane_init(&s->computed, nodes) ||
	    plane_init(&s->complete, nodes)) {
		state_free(s);
		return NULL;
	}
	return s;
}

/* ---- tiles: whole rectangles of nodes instead of bits ------------------------ */

static uint64_t tile_size(const struct ps_tile *t)
{
	return (t->r1 - t->r0) * (t->c1 - t->c0);
}

/* The first node of row r of the tile. */
static ps_node tile_row(const struct ps_tile *t, uint64_t r)
{
	return t->first + r * t->stride + t->c0;
}

/* Every node of the tile lies in [tile_lo, tile_hi). */
static ps_node tile_lo(const struct ps_tile *t)
{
	return tile_row(t, t->r0);
}

static ps_node tile_hi(const struct ps_tile *t)
{
	return tile_row(t, t->r1 - 1) + (t->c1 - t->c0);
}

static bool tile_has(const struct ps_tile *t, ps_node v)
{
	uint64_t r, c;

	if (v < tile_lo(t) || v >= tile_hi(t))
		return false;
	r = (v - t->first) / t->stride;
	c = (v - t->first) % t->stride;
	return r >= t->r0 && r < t->r1 && c >= t->c0 && c < t->c1;
}

/* How many nodes t and u share. */
static uint64_t tile_common(const struct ps_tile *t, const struct ps_tile *u)
{
	uint64_t r0 = ps_max_u64(t->r0, u->r0), r1 = ps_min_u64(t->r1, u->r1);
	uint64_t c0 = ps_max_u64(t->c0, u->c0), c1 = ps_min_u64(t->c1, u->c1);

	if (t->first != u->first || t->stride != u->stride || r0 >= r1 || c0 >= c1)
		return 0;
	return (r1 - r0) * (c1 - c0);
}

static bool tile_same(const struct ps_tile *t, const struct ps_tile *u)
{
	return t->first == u->first && t->stride == u->stride && t->r0 == u->r0 &&
	       t->r1 == u->r1 && t->c0 == u->c0 && t->c1 == u->c1;
}

static bool tiles_have(const struct ps_tiles *ts, ps_node v)
{
	for (unsigned k = 0; k < ts->len; k++)
		if (tile_has(&ts->t[k], v))
			return true;
	return false;
}

/* The nodes of the tiles ts shares with t. */
static uint64_t tiles_common(const struct ps_tiles *ts, const struct ps_tile *t)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < ts->len; k++)
		n += tile_common(&ts->t[k], t);
	return n;
}

/* [tiles_lo, tiles_hi) takes the nodes [lo, hi) in. */
static void bound_add(struct ps_engine_state *s, ps_node lo, ps_node hi)
{
	if (s->tiles_lo == s->tiles_hi) {
		s->tiles_lo = lo;
		s->tiles_hi = hi;
	} else {
		s->tiles_lo = ps_min_u64(s->tiles_lo, lo);
		s->tiles_hi = ps_max_u64(s->tiles_hi, hi);
	}
}

/* Bounds the held and done tiles and the regions holding runs. */
static void tiles_bound(struct ps_engine_state *s)
{
	const struct ps_tiles *lists[2] = { &s->held, &s->done };

	s->tiles_lo = s->tiles_hi = 0;
	for (int l = 0; l < 2; l++)
		for (unsigned k = 0; k < lists[l]->len; k++) {
			const struct ps_tile *t = &lists[l]->t[k];

			bound_add(s, tile_lo(t), tile_hi(t));
		}
	for (unsigned k = 0; k < s->runs_len; k++)
		if (!s->runs[k].written)
			bound_add(s, s->runs[k].first,
				  s->runs[k].first + s->runs[k].width * s->runs[k].height);
}

static void tiles_remove(struct ps_tiles *ts, unsigned k)
{
	ts->t[k] = ts->t[--ts->len];
}

/* Tile k takes its neighbours of the same rows or the same columns. */
static void tiles_merge(struct ps_tiles *ts, unsigned k)
{
	for (unsigned u = 0; u < ts->len;) {
		struct ps_tile *a = &ts->t[k];
		const struct ps_tile *b = &ts->t[u];

		if (u == k || a->first != b->first || a->stride != b->stride) {
			u++;
			continue;
		}
		if (a->r0 == b->r0 && a->r1 == b->r1 && (a->c1 == b->c0 || b->c1 == a->c0)) {
			a->c0 = ps_min_u64(a->c0, b->c0);
			a->c1 = ps_max_u64(a->c1, b->c1);
		} else if (a->c0 == b->c0 && a->c1 == b->c1 && (a->r1 == b->r0 || b->r1 == a->r0)) {
			a->r0 = ps_min_u64(a->r0, b->r0);
			a->r1 = ps_max_u64(a->r1, b->r1);
		} else {
			u++;
			continue;
		}
		tiles_remove(ts, u);
		if (k == ts->len)
			k = u;
		u = 0;
	}
}

/* Are the bits of the tile's nodes in plane p all clear? */
static bool tile_plane_clear(const struct ps_plane *p, const struct ps_tile *t)
{
	const uint64_t width = t->c1 - t->c0;

	if (zone_clear(p->zone, tile_lo(t), tile_hi(t)))
		return true;
	for (uint64_t r = t->r0; r < t->r1; r++) {
		const ps_node a = tile_row(t, r), page = a >> PS_PAGE_SHIFT;

		if (!p->page[page] && (a + width - 1) >> PS_PAGE_SHIFT == page) {
			/* rows within this missing page: on to the first that
			 * reaches the next (first + r' stride + c1 > next) */
			const ps_node next = (page + 1) << PS_PAGE_SHIFT;
			const uint64_t reach = (next - t->first - t->c1) / t->stride + 1;

			if (reach > r + 1)
				r = ps_min_u64(reach, t->r1) - 1;
			continue;
		}
		if (plane_count(p, a, a + width))
			return false;
	}
	return true;
}

bool ps_tile_untouched(const struct ps_engine *e, const struct ps_tile *t)
{
	const struct ps_engine_state *s = e->st;

	/* a sum that holds in-edges holds a pebble (engine.h): without
	 * either, it has no record and no complete bit */
	return !tiles_common(&s->held, t) && !tiles_common(&s->done, t) &&
	       tile_plane_clear(&s->red, t) && tile_plane_clear(&s->blue, t);
}

bool ps_tile_hold(struct ps_engine *e, const struct ps_tile *t)
{
	struct ps_engine_state *s = e->st;

	if (s->held.len == PS_TILES_MAX)
		return false;
	s->held.t[s->held.len++] = *t;
	tiles_bound(s);
	return true;
}

bool ps_tile_held(const struct ps_engine *e, const struct ps_tile *t)
{
	return tiles_common(&e->st->held, t) == tile_size(t);
}

bool ps_tile_release(struct ps_engine *e, const struct ps_tile *t)
{
	struct ps_engine_state *s = e->st;

	for (unsigned k = 0; k < s->held.len; k++)
		if (tile_same(&s->held.t[k], t)) {
			/* held sums have no blue pebble: they start again
			 * from nothing */
			tiles_remove(&s->held, k);
			tiles_bound(s);
			return true;
		}
	return false;
}

bool ps_tile_fresh(const struct ps_engine *e, const struct ps_tile *t, uint64_t *computed)
{
	const struct ps_engine_state *s = e->st;
	uint64_t again = tiles_common(&s->done, t);

	/* done tiles are disjoint: t is within them, or apart from them */
	if (!tile_plane_clear(&s->red, t) ||
	    !tile_plane_clear(&s->computed, t) || (again && again != tile_size(t)))
		return false;
	*computed += again;
	return true;
}

int ps_tile_mark_computed(struct ps_engine *e, const struct ps_tile *t)
{
	struct ps_engine_state *s = e->st;

	if (tiles_common(&s->done, t))
		return PS_OK; /* within done tiles (ps_tile_fresh): computed before */
	if (s->done.len == PS_TILES_MAX) {
		for (uint64_t r = t->r0; r < t->r1; r++)
			if (plane_fill(&s->computed, tile_row(t, r), tile_row(t, r) + (t->c1 - t->c0), true))
				return PS_ENOMEM;
		return PS_OK;
	}
	s->done.t[s->done.len++] = *t;
	tiles_merge(&s->done, s->done.len - 1);
	tiles_bound(s);
	return PS_OK;
}

/* ---- runs of rows per column: plain nodes computed by fused macs ----------- */

static void col_runs_free(struct ps_engine_state *s)
{
	for (unsigned k = 0; k < s->runs_len; k++) {
		free(s->runs[k].lo);
		free(s->runs[k].hi);
		s->runs[k].lo = s->runs[k].hi = NULL;
	}
	s->runs_len = 0;
}

/* Is node v computed by a region's runs? */
static bool col_runs_have(const struct ps_engine_state *s, ps_node v)
{
	for (unsigned k = 0; k < s->runs_len; k++) {
		const struct ps_col_runs *R = &s->runs[k];
		uint64_t r, c;

		if (R->written || v < R->first || v >= R->first + R->width * R->height)
			continue;
		r = (v - R->first) / R->width;
		c = (v - R->first) % R->width;
		return r >= R->lo[c] && r < R->hi[c];
	}
	return false;
}

/* The region's runs written into the computed plane, which alone holds
 * them from now on. */
static int col_runs_write(struct ps_engine_state *s, struct ps_col_runs *R)
{
	for (uint64_t c = 0; c < R->width; c++)
		for (uint64_t r = R->lo[c]; r < R->hi[c]; r++)
			if (plane_set(&s->computed, R->first + r * R->width + c))
				return PS_ENOMEM;
	free(R->lo);
	free(R->hi);
	R->lo = R->hi = NULL;
	R->written = true;
	return PS_OK;
}

int ps_runs_mark_computed(struct ps_engine *e, ps_node first, uint64_t width,
			  uint64_t height, const struct ps_coordset *rows,
			  const struct ps_coordset *cols, uint64_t *had)
{
	struct ps_engine_state *s = e->st;
	const uint64_t n = ps_coordset_size(cols), count = ps_coordset_size(rows);
	const uint64_t r0 = ps_coordset_at(rows, 0), r1 = ps_coordset_at(rows, count - 1) + 1;
	struct ps_col_runs *R = NULL;
	uint64_t again = 0;

	for (unsigned k = 0; k < s->runs_len && !R; k++)
		if (s->runs[k].first == first && s->runs[k].width == width)
			R = &s->runs[k];
	if (!R) {
		if (s->runs_len == PS_COL_RUNS_MAX)
			return 1;
		R = &s->runs[s->runs_len++];
		memset(R, 0, sizeof(*R));
		R->first = first;
		R->width = width;
		R->height = height;
		/* the plane holds no bit here, or the runs could not be told
		 * apart from its bits: the plane keeps the region */
		R->written = plane_count(&s->computed, first, first + width * height) ||
			     !(R->lo = calloc(width, sizeof(uint64_t))) ||
			     !(R->hi = calloc(width, sizeof(uint64_t)));
		if (R->written) {
			free(R->lo);
			R->lo = NULL;
			return 1;
		}
		tiles_bound(s);
	}
	if (R->written)
		return 1;
	/* each column's run takes [r0, r1) where it is empty or meets it;
	 * rows with gaps go to the plane */
	bool meets = r1 - r0 == count;

	for (uint64_t q = 0; q < n && meets; q++) {
		const uint64_t c = cols->list ? cols->list[q] : cols->lo + q;

		meets = R->lo[c] >= R->hi[c] || (r1 >= R->lo[c] && r0 <= R->hi[c]);
	}
	if (!meets) {
		if (col_runs_write(s, R))
			return PS_ENOMEM;
		tiles_bound(s);
		return 1;
	}
	for (uint64_t q = 0; q < n; q++) {
		const uint64_t c = cols->list ? cols->list[q] : cols->lo + q;
		const uint64_t lo = R->lo[c], hi = R->hi[c];

		if (lo == hi) {
			R->lo[c] = r0;
			R->hi[c] = r1;
			continue;
		}
		/* they meet: the overlap is [max lo, min hi), maybe empty */
		again += ps_min_u64(hi, r1) - ps_min_u64(ps_max_u64(lo, r0), ps_min_u64(hi, r1));
		R->lo[c] = ps_min_u64(lo, r0);
		R->hi[c] = ps_max_u64(hi, r1);
	}
	*had += again;
	return PS_OK;
}

/* Writes tile t into the planes: red and complete (held) or computed. */
static int tile_write(struct ps_engine_state *s, const struct ps_tile *t, bool held)
{
	for (uint64_t r = t->r0; r < t->r1; r++) {
		ps_node a = tile_row(t, r), b = a + (t->c1 - t->c0);

		if (held ? plane_fill(&s->red, a, b, true) || plane_fill(&s->complete, a, b, true) :
			   plane_fill(&s->computed, a, b, true))
			return PS_ENOMEM;
	}
	return PS_OK;
}

int ps_tiles_settle(struct ps_engine *e, ps_node lo, ps_node hi)
{
	struct ps_engine_state *s = e->st;
	struct ps_tiles *lists[2] = { &s->held, &s->done };

	if (hi <= s->tiles_lo || lo >= s->tiles_hi)
		return PS_OK;
	for (int l = 0; l < 2; l++)
		for (unsigned k = 0; k < lists[l]->len;) {
			const struct ps_tile *t = &lists[l]->t[k];

			if (hi <= tile_lo(t) || lo >= tile_hi(t)) {
				k++;
				continue;
			}
			if (tile_write(s, t, l == 0))
				return PS_ENOMEM;
			tiles_remove(lists[l], k);
		}
	for (unsigned k = 0; k < s->runs_len; k++) {
		struct ps_col_runs *R = &s->runs[k];

		if (!R->written && hi > R->first && lo < R->first + R->width * R->height &&
		    col_runs_write(s, R))
			return PS_ENOMEM;
	}
	tiles_bound(s);
	return PS_OK;
}

/* Before a move reads or changes node v. */
static inline int settle_node(struct ps_engine *e, ps_node v)
{
	if (v < e->st->tiles_lo || v >= e->st->tiles_hi)
		return PS_OK;
	return ps_tiles_settle(e, v, v + 1);
}

/* A page table's bytes resident: all of one the heap holds (below
 * DIRECTORY_MAPPED), else the system's pages of it that entries in use
 * lie on: of used entries, spread over a few runs of node ids (kinds). */
#define DIRECTORY_MAPPED (UINT64_C(128) << 10)
#define SYSTEM_PAGE UINT64_C(4096)
#define DIRECTORY_RUNS 8

static uint64_t directory_bytes(uint64_t entries, uint64_t used, uint64_t size)
{
	const uint64_t all = entries * size;

	if (all < DIRECTORY_MAPPED)
		return all;
	return ps_min_u64(all, (used * size + SYSTEM_PAGE - 1) / SYSTEM_PAGE * SYSTEM_PAGE +
				       DIRECTORY_RUNS * SYSTEM_PAGE);
}

/* The same of a page table in the state: its system pages with an entry
 * in use. */
static uint64_t directory_held(const void *table, uint64_t entries, uint64_t size)
{
	const unsigned char *bytes = table;
	const uint64_t all = entries * size;
	uint64_t held = 0;

	if (all < DIRECTORY_MAPPED)
		return all;
	for (uint64_t at = 0; at < all; at += SYSTEM_PAGE) {
		const uint64_t end = ps_min_u64(all, at + SYSTEM_PAGE);

		for (uint64_t b = at; b < end; b++)
			if (bytes[b]) {
				held += end - at;
				break;
			}
	}
	return held;
}

uint64_t ps_engine_state_bytes_of(uint64_t nodes, uint64_t inputs, uint64_t plain,
				  uint64_t sums, uint64_t outputs)
{
	/* a complete pebbling computes every plain node once (its computed
	 * bit) and completes every sum (its complete bit); inputs, sums and
	 * outputs are red at some time (plain nodes other than outputs need
	 * not be: a fused mac computes and drops them within its block); the
	 * inputs and outputs are blue; partial sums are few at any time. Each
	 * plane's page table covers every node. */
	const uint64_t pages = (nodes + PS_PAGE_BITS - 1) >> PS_PAGE_SHIFT;
	const uint64_t bits = plain + (inputs + sums + outputs) + (inputs + outputs) + sums;
	const uint64_t touched = inputs + plain + sums + outputs;
	const uint64_t index = (nodes >> PS_INDEX_SHIFT) + 1;

	/* the page tables: resident where the nodes a pebbling touches lie
	 * (the sums, for the index), once they are too large to come from
	 * the heap */
	return bits / 8 +
	       4 * directory_bytes(pages, (touched >> PS_PAGE_SHIFT) + 1, sizeof(uint64_t *)) +
	       directory_bytes(index, (sums >> PS_INDEX_SHIFT) + 1, sizeof(uint32_t *)) +
	       directory_bytes(index, (sums >> PS_INDEX_SHIFT) + 1, sizeof(uint32_t)) +
	       5 * zone_words(nodes) * sizeof(uint64_t);
}

uint64_t ps_engine_state_bytes(const struct ps_dag *dag)
{
	return ps_engine_state_bytes_except(dag, 0);
}

uint64_t ps_engine_state_bytes_except(const struct ps_dag *dag, uint64_t untouched)
{
	uint64_t count[4] = { 0 };

	for (ps_node v = 0, end; v < dag->state_count; v = end) {
		enum ps_role role = ps_dag_role_run(dag, v, &end);

		end = ps_min_u64(end, dag->state_count);
		if ((unsigned)role < 4)
			count[role] += end - v;
	}
	return ps_engine_state_bytes_of(dag->state_count, count[PS_ROLE_INPUT],
					count[PS_ROLE_PLAIN] - ps_min_u64(untouched, count[PS_ROLE_PLAIN]),
					count[PS_ROLE_SUM], dag->output_count);
}

uint64_t ps_engine_partial_bytes(uint64_t records, uint64_t bitsets, uint64_t in_degree,
				 uint64_t span)
{
	uint64_t cap = 64, pool, bits, index, sum;

	if (!records)
		return 0;
	while (cap < records && cap <= UINT64_MAX / 2)
		cap *= 2;
	/* saturated: an estimate that overflows is refused by any limit */
	if (ps_mul_u64(cap, sizeof(struct ps_partial), &pool) ||
	    ps_mul_u64(bitsets, (in_degree / 64 + (in_degree % 64 != 0)) * sizeof(uint64_t), &bits) ||
	    ps_mul_u64(span / PS_INDEX_SIZE + (span % PS_INDEX_SIZE != 0),
		       PS_INDEX_SIZE * sizeof(uint32_t), &index) ||
	    ps_add_u64(pool, bits, &sum) || ps_add_u64(sum, index, &sum))
		return UINT64_MAX;
	return sum;
}

uint64_t ps_engine_state_held(const struct ps_engine *e)
{
	const struct ps_engine_state *s = e->st;
	const struct ps_plane *planes[4] = { &s->red, &s->blue, &s->computed, &s->complete };
	const uint64_t nodes = e->dag->state_count;
	uint64_t bytes = directory_held(s->index, s->index_pages, sizeof(*s->index)) +
			 directory_held(s->index_live, s->index_pages, sizeof(*s->index_live)) +
			 (uint64_t)s->rec_cap * sizeof(struct ps_partial);

	for (int k = 0; k < 4; k++) {
		bytes += directory_held(planes[k]->page, planes[k]->pages, sizeof(uint64_t *)) +
			 zone_words(nodes) * sizeof(uint64_t);
		for (uint64_t pg = 0; pg < planes[k]->pages; pg++)
			bytes += planes[k]->page[pg] ? PS_PAGE_WORDS * sizeof(uint64_t) : 0;
	}
	bytes += zone_words(nodes) * sizeof(uint64_t);
	for (uint64_t pg = 0; pg < s->index_pages; pg++)
		bytes += s->index[pg] ? PS_INDEX_SIZE * sizeof(uint32_t) : 0;
	for (unsigned k = 0; k < s->runs_len; k++)
		bytes += s->runs[k].written ? 0 : 2 * s->runs[k].width * sizeof(uint64_t);
	/* records of sums that took in-edges in more than one run */
	for (uint32_t k = 0; k < s->rec_used; k++)
		bytes += s->rec[k].refs && s->rec[k].bits ?
			 (s->rec[k].in_degree + 63) / 64 * sizeof(uint64_t) : 0;
	return bytes;
}

const char *ps_rule_name(enum ps_rule rule)
{
	return rule_names[rule];
}

int ps_engine_init(struct ps_engine *e, const struct ps_dag *dag, uint64_t M,
		   struct ps_error *err)
{
	memset(e, 0, sizeof(*e));
	e->dag = dag;
	e->M = M;
	if (dag->state_count > SIZE_MAX / 2 ||
	    ps_engine_state_bytes(dag) > SIZE_MAX / 2 ||
	    !(e->st = state_new(dag->state_count)))
		return ps_error_set(err, PS_ENOMEM,
				    "out of memory for a pebble state of up to %llu bytes",
				    (unsigned long long)ps_engine_state_bytes(dag));
	/* Start: every input has a blue pebble. */
	for (ps_node v = 0, end; v < dag->state_count; v = end)
		if (ps_dag_role_run(dag, v, &end) == PS_ROLE_INPUT &&
		    plane_fill(&e->st->blue, v, ps_min_u64(end, dag->state_count), true)) {
			ps_engine_free(e);
			return ps_error_set(err, PS_ENOMEM, "out of memory for the inputs' pebbles");
		}
	return PS_OK;
}

void ps_engine_free(struct ps_engine *e)
{
	state_free(e->st);
	e->st = NULL;
}

void ps_violation_format(const struct ps_violation *v, const char *prefix,
			 char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", prefix ? prefix : "", v->text);
}

/*
 * Records the first violation. The message reads
 * "<move> <node>: <culprit> <reason>" with the culprit's name substituted
 * for %s in reason (or the node's when culprit is the node itself).
 */
static int violate_ap(struct ps_engine *e, enum ps_rule rule, enum ps_move move,
		      ps_node node, ps_node culprit, const char *reason, va_list ap)
{
	struct ps_violation *v = &e->violation;
	char what[128] = "";
	size_t used;

	if (e->failed)
		return PS_EINVALID;
	e->failed = true;
	v->rule = rule;
	v->move = move;
	v->position = e->position;
	v->move_number = e->c.moves;
	v->node = node;
	v->culprit = culprit;
	if (move != PS_MOVE_END && node < e->dag->node_count)
		ps_dag_describe(e->dag, node, what, sizeof(what));
	used = (size_t)snprintf(v->text, sizeof(v->text), "%s%s%s: ",
				move_names[move], what[0] ? " " : "", what);
	if (used < sizeof(v->text))
		vsnprintf(v->text + used, sizeof(v->text) - used, reason, ap);
	return PS_EINVALID;
}

static int violate(struct ps_engine *e, enum ps_rule rule, enum ps_move move,
		   ps_node node, ps_node culprit, const char *reason, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 6, 7)))
#endif
	;

static int violate(struct ps_engine *e, enum ps_rule rule, enum ps_move move,
		   ps_node node, ps_node culprit, const char *reason, ...)
{
	va_list ap;
	int rc;

	va_start(ap, reason);
	rc = violate_ap(e, rule, move, node, culprit, reason, ap);
	va_end(ap);
	return rc;
}

int ps_engine_violate(struct ps_engine *e, enum ps_rule rule, enum ps_move move,
		      ps_node node, const char *reason, ...)
{
	va_list ap;
	int rc;

	va_start(ap, reason);
	rc = violate_ap(e, rule, move, node, node, reason, ap);
	va_end(ap);
	return rc;
}

/* The culprit's name, for messages. */
static const char *name_of(const struct ps_engine *e, ps_node v, char *buf,
			   size_t len)
{
	ps_dag_describe(e->dag, v, buf, len);
	return buf;
}

#define NAME(v) name_of(e, (v), namebuf, sizeof(namebuf))

/* The planes, by name. */
#define RED(v) ps_plane_test(&e->st->red, (v))
#define BLUE(v) ps_plane_test(&e->st->blue, (v))
#define COMPUTED(v) ps_plane_test(&e->st->computed, (v))
#define COMPLETE(v) ps_plane_test(&e->st->complete, (v))

uint8_t ps_engine_flags(const struct ps_engine *e, ps_node v)
{
	uint8_t f = 0;
	bool partial;

	if (!e->st || v >= e->dag->state_count)
		return 0;
	partial = ps_engine_partial(e, v) != NULL;
	f |= RED(v) ? PS_ST_RED : 0;
	f |= BLUE(v) ? PS_ST_BLUE : 0;
	f |= COMPUTED(v) ? PS_ST_COMPUTED : 0;
	f |= partial ? PS_ST_INCOMPLETE | PS_ST_SUM : 0;
	f |= COMPLETE(v) ? PS_ST_SUM : 0;
	if (v >= e->st->tiles_lo && v < e->st->tiles_hi) {
		f |= tiles_have(&e->st->held, v) ? PS_ST_RED | PS_ST_SUM : 0;
		f |= tiles_have(&e->st->done, v) || col_runs_have(e->st, v) ? PS_ST_COMPUTED : 0;
	}
	return f;
}

uint64_t ps_engine_sum_count(const struct ps_engine *e, ps_node v)
{
	const struct ps_partial *r;
	struct ps_sum s;

	if (v >= e->dag->state_count)
		return 0;
	if ((r = ps_engine_partial(e, v)))
		return r->count;
	if (!COMPLETE(v) && !tiles_have(&e->st->held, v))
		return 0;
	ps_dag_sum(e->dag, v, &s);
	return s.in_degree;
}

bool ps_engine_edge_done(const struct ps_engine *e, ps_node v, uint64_t k)
{
	const struct ps_partial *r;

	if (v >= e->dag->state_count)
		return false;
	if ((r = ps_engine_partial(e, v)))
		return partial_has(r, k);
	return COMPLETE(v) || tiles_have(&e->st->held, v);
}

static int check_id(struct ps_engine *e, enum ps_move move, ps_node v)
{
	if (v < e->dag->node_count)
		return PS_OK;
	return violate(e, PS_RULE_NO_SUCH_NODE, move, v, v,
		       "node %llu is not in the DAG (it has %llu nodes)",
		       (unsigned long long)v,
		       (unsigned long long)e->dag->node_count);
}

static int add_red(struct ps_engine *e, enum ps_move move, ps_node v,
		   uint64_t transient)
{
	uint64_t need = e->c.red + 1 + transient;

	if (need > e->M)
		return violate(e, PS_RULE_CAPACITY, move, v, v,
			       "capacity exceeded: %llu red pebbles with M = %llu",
			       (unsigned long long)need,
			       (unsigned long long)e->M);
	return PS_OK;
}

static void note_peak(struct ps_engine *e, uint64_t red)
{
	if (red > e->c.peak_red)
		e->c.peak_red = red;
}

int ps_engine_load(struct ps_engine *e, ps_node v)
{
	char namebuf[128];

	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	if (check_id(e, PS_MOVE_LOAD, v))
		return PS_EINVALID;
	if (v >= e->dag->state_count)
		return violate(e, PS_RULE_PRODUCT_MOVED, PS_MOVE_LOAD, v, v,
			       "%s is a product: products exist only inside a mac",
			       NAME(v));
	if (settle_node(e, v))
		return PS_ENOMEM;
	if (RED(v))
		return violate(e, PS_RULE_LOAD_RED, PS_MOVE_LOAD, v, v,
			       "%s is already in fast memory", NAME(v));
	if (!BLUE(v))
		return violate(e, PS_RULE_LOAD_NOT_BLUE, PS_MOVE_LOAD, v, v,
			       "%s is not in slow memory", NAME(v));
	if (add_red(e, PS_MOVE_LOAD, v, 0))
		return PS_EINVALID;
	if (plane_set(&e->st->red, v))
		return PS_ENOMEM;
	e->c.red++;
	note_peak(e, e->c.red);
	e->c.loads++;
	e->c.by_array[ps_dag_array(e->dag, v)].loads++;
	return PS_OK;
}

int ps_engine_save(struct ps_engine *e, ps_node v)
{
	char namebuf[128];

	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	if (check_id(e, PS_MOVE_SAVE, v))
		return PS_EINVALID;
	if (v >= e->dag->state_count)
		return violate(e, PS_RULE_PRODUCT_MOVED, PS_MOVE_SAVE, v, v,
			       "%s is a product: products exist only inside a mac",
			       NAME(v));
	if (settle_node(e, v))
		return PS_ENOMEM;
	if (!RED(v))
		return violate(e, PS_RULE_NOT_RED, PS_MOVE_SAVE, v, v,
			       "%s is not in fast memory", NAME(v));
	/* the blue pebble now holds the red value (and its edge set) */
	uniform_unopen(e->st, v, v + 1);
	if (plane_set(&e->st->blue, v))
		return PS_ENOMEM;
	e->c.saves++;
	e->c.by_array[ps_dag_array(e->dag, v)].saves++;
	return PS_OK;
}

/* The only copy of sum v is gone: it starts again from nothing. */
static void forget_sum(struct ps_engine *e, ps_node v)
{
	partial_drop(e->st, v);
	plane_clear(&e->st->complete, v);
}

int ps_engine_delete(struct ps_engine *e, ps_node v)
{
	char namebuf[128];

	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	if (check_id(e, PS_MOVE_DELETE, v))
		return PS_EINVALID;
	if (v >= e->dag->state_count)
		return violate(e, PS_RULE_PRODUCT_MOVED, PS_MOVE_DELETE, v, v,
			       "%s is a product: products exist only inside a mac",
			       NAME(v));
	if (settle_node(e, v))
		return PS_ENOMEM;
	if (!RED(v))
		return violate(e, PS_RULE_NOT_RED, PS_MOVE_DELETE, v, v,
			       "%s is not in fast memory", NAME(v));
	plane_clear(&e->st->red, v);
	known_red_drop(e->st, v, v + 1);
	e->c.red--;
	if (!BLUE(v))
		forget_sum(e, v);
	return PS_OK;
}

static int check_parent(struct ps_engine *e, enum ps_move move, ps_node v,
			ps_node parent)
{
	char namebuf[128];
	const struct ps_partial *r;

	if (!RED(parent))
		return violate(e, PS_RULE_PARENT_NOT_RED, move, v, parent,
			       "%s is not in fast memory", NAME(parent));
	if ((r = ps_engine_partial(e, parent)))
		return violate(e, PS_RULE_PARENT_INCOMPLETE, move, v, parent,
			       "%s is incomplete (%llu of %llu in-edges aggregated)",
			       NAME(parent), (unsigned long long)r->count,
			       (unsigned long long)r->in_degree);
	return PS_OK;
}

/* compute v once its move is counted; parents resolved by the caller */
static int compute_counted(struct ps_engine *e, ps_node v,
			   const ps_node *parents, uint64_t parent_count)
{
	if (settle_node(e, v))
		return PS_ENOMEM;
	for (uint64_t k = 0; k < parent_count; k++)
		if (settle_node(e, parents[k]))
			return PS_ENOMEM;
	if (RED(v)) {
		char namebuf[128];

		return violate(e, PS_RULE_COMPUTE_RED, PS_MOVE_COMPUTE, v, v,
			       "%s is already in fast memory", NAME(v));
	}
	for (uint64_t k = 0; k < parent_count; k++)
		if (check_parent(e, PS_MOVE_COMPUTE, v, parents[k]))
			return PS_EINVALID;
	if (add_red(e, PS_MOVE_COMPUTE, v, 0))
		return PS_EINVALID;
	if (COMPUTED(v))
		e->c.recomputations++;
	else if (plane_set(&e->st->computed, v))
		return PS_ENOMEM;
	if (plane_set(&e->st->red, v))
		return PS_ENOMEM;
	e->c.red++;
	note_peak(e, e->c.red);
	e->c.computes++;
	return PS_OK;
}

int ps_engine_compute_plain(struct ps_engine *e, ps_node v,
			    const ps_node *parents, uint64_t parent_count)
{
	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	return compute_counted(e, v, parents, parent_count);
}

int ps_engine_compute(struct ps_engine *e, ps_node v)
{
	char namebuf[128];
	ps_node parents[64];
	uint64_t count;
	enum ps_role role;

	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	if (check_id(e, PS_MOVE_COMPUTE, v))
		return PS_EINVALID;
	role = ps_dag_role(e->dag, v);
	if (role == PS_ROLE_INPUT)
		return violate(e, PS_RULE_COMPUTE_INPUT, PS_MOVE_COMPUTE, v, v,
			       "%s is an input: inputs are loaded, never computed",
			       NAME(v));
	if (role == PS_ROLE_SUM)
		return violate(e, PS_RULE_COMPUTE_SUM, PS_MOVE_COMPUTE, v, v,
			       "%s is a sum: sums are aggregated by mac, never computed",
			       NAME(v));
	if (role == PS_ROLE_PRODUCT)
		return violate(e, PS_RULE_PRODUCT_MOVED, PS_MOVE_COMPUTE, v, v,
			       "%s is a product: products exist only inside a mac",
			       NAME(v));
	count = ps_dag_parent_count(e->dag, v);
	if (count <= 64) {
		for (uint64_t k = 0; k < count; k++)
			parents[k] = ps_dag_parent(e->dag, v, k);
		return compute_counted(e, v, parents, count);
	}
	/* a plain node of a large in-degree: check its parents in place */
	for (uint64_t k = 0; k < count; k++) {
		ps_node parent = ps_dag_parent(e->dag, v, k);

		if (settle_node(e, parent))
			return PS_ENOMEM;
		if (check_parent(e, PS_MOVE_COMPUTE, v, parent))
			return PS_EINVALID;
	}
	return compute_counted(e, v, NULL, 0);
}

/* a mac once its move is counted */
static int mac_counted(struct ps_engine *e, const struct ps_product *p)
{
	char namebuf[128];
	ps_node v = p->sum;
	struct ps_partial *r;
	bool red;
	uint64_t fresh;

	if (settle_node(e, v))
		return PS_ENOMEM;
	for (unsigned k = 0; k < p->parent_count; k++)
		if (settle_node(e, p->parent[k]))
			return PS_ENOMEM;
	for (unsigned k = 0; k < p->parent_count; k++)
		if (check_parent(e, PS_MOVE_MAC, v, p->parent[k]))
			return PS_EINVALID;
	red = RED(v);
	if (!red && BLUE(v))
		return violate(e, PS_RULE_MAC_SUM_SLOW_ONLY, PS_MOVE_MAC, v, v,
			       "%s is in slow memory only: load it before aggregating into it",
			       NAME(v));
	r = ps_engine_partial(e, v);
	if (r ? partial_has(r, p->edge) : COMPLETE(v))
		return violate(e, PS_RULE_MAC_EDGE_DONE, PS_MOVE_MAC, v, p->id,
			       "the in-edge from %s is already aggregated",
			       NAME(p->id));
	/* a product holds a red pebble during the move; a new sum one more */
	fresh = red ? 0 : 1;
	if (e->c.red + p->transient + fresh > e->M) {
		if (p->transient)
			return violate(e, PS_RULE_CAPACITY, PS_MOVE_MAC, v, p->id,
				       "capacity exceeded: %llu red pebbles with M = %llu (the product %s needs a slot)",
				       (unsigned long long)(e->c.red + 1 + fresh),
				       (unsigned long long)e->M, NAME(p->id));
		return violate(e, PS_RULE_CAPACITY, PS_MOVE_MAC, v, v,
			       "capacity exceeded: %llu red pebbles with M = %llu",
			       (unsigned long long)(e->c.red + fresh),
			       (unsigned long long)e->M);
	}
	{
		const struct ps_coordset edge = ps_range(p->edge, p->edge + 1);

		if (p->in_degree == 1 && !r) {
			if (plane_set(&e->st->complete, v))
				return PS_ENOMEM;
		} else if (!(r = r ? partial_own(e->st, v) : partial_new(e->st, v, p->in_degree)) ||
			   partial_add(r, &edge)) {
			return PS_ENOMEM;
		} else if (r->count == r->in_degree) {
			partial_drop(e->st, v);
			if (plane_set(&e->st->complete, v))
				return PS_ENOMEM;
		}
	}
	if (!red && plane_set(&e->st->red, v))
		return PS_ENOMEM;
	plane_clear(&e->st->blue, v);
	note_peak(e, e->c.red + p->transient + fresh);
	e->c.red += fresh;
	e->c.macs++;
	return PS_OK;
}

int ps_engine_mac_product(struct ps_engine *e, const struct ps_product *p)
{
	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	return mac_counted(e, p);
}

int ps_engine_mac(struct ps_engine *e, ps_node p)
{
	char namebuf[128];
	struct ps_product prod;

	if (e->failed)
		return PS_EINVALID;
	e->c.moves++;
	if (check_id(e, PS_MOVE_MAC_PRODUCT, p))
		return PS_EINVALID;
	if (ps_dag_role(e->dag, p) != PS_ROLE_PRODUCT)
		return violate(e, PS_RULE_MAC_NOT_PRODUCT, PS_MOVE_MAC_PRODUCT, p, p,
			       "%s is not a product: a mac aggregates a product into its sum",
			       NAME(p));
	ps_dag_product(e->dag, p, &prod);
	return mac_counted(e, &prod);
}

int ps_engine_finish(struct ps_engine *e)
{
	char namebuf[128];

	if (e->failed)
		return PS_EINVALID;
	for (uint64_t k = 0; k < e->dag->output_count; k++) {
		ps_node v = ps_dag_output(e->dag, k);
		const struct ps_partial *r;

		if (!BLUE(v))
			return violate(e, PS_RULE_END_NOT_SAVED, PS_MOVE_END, v,
				       v, "output %s is not in slow memory",
				       NAME(v));
		if ((r = ps_engine_partial(e, v)))
			return violate(e, PS_RULE_END_INCOMPLETE, PS_MOVE_END,
				       v, v, "output %s is incomplete in slow memory (%llu of %llu in-edges aggregated)",
				       NAME(v), (unsigned long long)r->count,
				       (unsigned long long)r->in_degree);
	}
	return PS_OK;
}

/* ---- copies, comparisons, invariants ------------------------------------------ */

int ps_engine_copy(struct ps_engine *dst, const struct ps_engine *src)
{
	struct ps_engine_state *d = dst->st;
	const struct ps_engine_state *s = src->st;

	if (plane_copy(&d->red, &s->red) || plane_copy(&d->blue, &s->blue) ||
	    plane_copy(&d->computed, &s->computed) || plane_copy(&d->complete, &s->complete))
		return PS_ENOMEM;
	for (ps_node v = 0; v < dst->dag->state_count; v++) {
		const struct ps_partial *r = ps_engine_partial(src, v);
		struct ps_partial *q;

		partial_drop(d, v);
		if (!r)
			continue;
		if (!(q = partial_new(d, v, r->in_degree)))
			return PS_ENOMEM;
		q->count = r->count;
		q->lo = r->lo;
		q->hi = r->hi;
		if (r->bits) {
			size_t bytes = (r->in_degree + 63) / 64 * 8;

			if (!(q->bits = malloc(bytes)))
				return PS_ENOMEM;
			memcpy(q->bits, r->bits, bytes);
		}
	}
	col_runs_free(d);
	for (unsigned k = 0; k < s->runs_len; k++) {
		struct ps_col_runs *R = &d->runs[k];

		*R = s->runs[k];
		R->lo = R->hi = NULL;
		d->runs_len = k + 1;
		if (R->written)
			continue;
		if (!(R->lo = malloc(R->width * sizeof(uint64_t))) ||
		    !(R->hi = malloc(R->width * sizeof(uint64_t))))
			return PS_ENOMEM;
		memcpy(R->lo, s->runs[k].lo, R->width * sizeof(uint64_t));
		memcpy(R->hi, s->runs[k].hi, R->width * sizeof(uint64_t));
	}
	d->held = s->held;
	d->done = s->done;
	d->tiles_lo = s->tiles_lo;
	d->tiles_hi = s->tiles_hi;
	memset(d->uniform, 0, sizeof(d->uniform));
	memset(d->known_red, 0, sizeof(d->known_red));
	dst->c = src->c;
	dst->position = src->position;
	dst->failed = src->failed;
	dst->violation = src->violation;
	return PS_OK;
}

bool ps_engine_same(const struct ps_engine *a, const struct ps_engine *b,
		    char *why, size_t len)
{
	char namebuf[128];
	const struct ps_engine *e = a;

	if (memcmp(&a->c, &b->c, sizeof(a->c))) {
		snprintf(why, len, "counters differ");
		return false;
	}
	if (a->failed != b->failed || strcmp(a->violation.text, b->violation.text) ||
	    a->violation.move_number != b->violation.move_number) {
		snprintf(why, len, "violations differ: '%s' and '%s'", a->violation.text,
			 b->violation.text);
		return false;
	}
	for (ps_node v = 0; v < a->dag->state_count; v++) {
		uint64_t count = ps_engine_sum_count(a, v);

		if (ps_engine_flags(a, v) != ps_engine_flags(b, v) ||
		    count != ps_engine_sum_count(b, v)) {
			snprintf(why, len, "%s: flags %u and %u, in-edges %llu and %llu", NAME(v),
				 ps_engine_flags(a, v), ps_engine_flags(b, v),
				 (unsigned long long)count,
				 (unsigned long long)ps_engine_sum_count(b, v));
			return false;
		}
		if (ps_engine_partial(a, v))
			for (uint64_t k = 0; k < ps_engine_partial(a, v)->in_degree; k++)
				if (ps_engine_edge_done(a, v, k) != ps_engine_edge_done(b, v, k)) {
					snprintf(why, len, "%s: in-edge %llu differs", NAME(v),
						 (unsigned long long)k);
					return false;
				}
	}
	return true;
}

bool ps_engine_check(const struct ps_engine *e, char *why, size_t len)
{
	char namebuf[128];
	uint64_t red = 0, partial = 0, loads, saves;

	if (e->failed && e->violation.rule == PS_RULE_NONE) {
		snprintf(why, len, "failed without a violation");
		return false;
	}
	if (!e->failed && e->c.red > e->M) {
		snprintf(why, len, "%llu red pebbles with M = %llu", (unsigned long long)e->c.red,
			 (unsigned long long)e->M);
		return false;
	}
	if (e->c.peak_red < e->c.red) {
		snprintf(why, len, "peak %llu below the %llu red pebbles",
			 (unsigned long long)e->c.peak_red, (unsigned long long)e->c.red);
		return false;
	}
	ps_array_io_total(e->c.by_array, &loads, &saves);
	if (loads != e->c.loads || saves != e->c.saves) {
		snprintf(why, len, "%llu loads and %llu saves by array for %llu and %llu",
			 (unsigned long long)loads, (unsigned long long)saves,
			 (unsigned long long)e->c.loads, (unsigned long long)e->c.saves);
		return false;
	}
	for (int l = 0; l < 2; l++) {
		const struct ps_tiles *ts = l ? &e->st->done : &e->st->held;

		for (unsigned a = 0; a < ts->len; a++)
			for (unsigned b = a + 1; b < ts->len; b++)
				if (tile_common(&ts->t[a], &ts->t[b])) {
					snprintf(why, len, "%s tiles %u and %u meet",
						 l ? "done" : "held", a, b);
					return false;
				}
	}
	for (ps_node v = 0; v < e->dag->state_count; v++) {
		enum ps_role role = ps_dag_role(e->dag, v);
		const struct ps_partial *r = ps_engine_partial(e, v);
		bool held = tiles_have(&e->st->held, v);
		bool done = tiles_have(&e->st->done, v) || col_runs_have(e->st, v);

		if ((held && (RED(v) || BLUE(v) || COMPLETE(v) || r || role != PS_ROLE_SUM)) ||
		    (done && (COMPUTED(v) || role != PS_ROLE_PLAIN)) ||
		    ((held || done) && (v < e->st->tiles_lo || v >= e->st->tiles_hi))) {
			snprintf(why, len, "%s: a %s tile's node has flags %u of its own", NAME(v),
				 held ? "held" : "done", ps_engine_flags(e, v));
			return false;
		}
		red += RED(v) || held;
		if (r) {
			uint64_t held = r->bits ? ps_bits_count(r->bits, 0, r->in_degree) : r->hi - r->lo;
			struct ps_sum s;

			partial++;
			if (role != PS_ROLE_SUM || COMPLETE(v)) {
				snprintf(why, len, "%s has a partial record but is %s", NAME(v),
					 role != PS_ROLE_SUM ? "no sum" : "complete");
				return false;
			}
			ps_dag_sum(e->dag, v, &s);
			if (!r->count || r->count >= r->in_degree || r->count != held ||
			    r->in_degree != s.in_degree) {
				snprintf(why, len, "%s: record of %llu in-edges holds %llu of %llu",
					 NAME(v), (unsigned long long)r->count,
					 (unsigned long long)held, (unsigned long long)s.in_degree);
				return false;
			}
		}
		if ((r || COMPLETE(v)) && !RED(v) && !BLUE(v)) {
			snprintf(why, len, "%s holds in-edges without a pebble", NAME(v));
			return false;
		}
		if ((COMPLETE(v) && role != PS_ROLE_SUM) || (COMPUTED(v) && role != PS_ROLE_PLAIN) ||
		    (role == PS_ROLE_INPUT && !BLUE(v))) {
			snprintf(why, len, "%s: flags %u do not fit its role", NAME(v),
				 ps_engine_flags(e, v));
			return false;
		}
	}
	for (unsigned k = 0; k < PS_UNIFORM_MAX; k++) {
		const struct ps_uniform *u = &e->st->uniform[k];

		for (uint64_t r = u->r0; r < u->r1; r++)
			for (uint64_t c = u->c0; c < u->c1; c++)
				if (index_first(e->st, u->first + r * u->width + c) != u->at) {
					snprintf(why, len, "%s: not of record %u, its block's",
						 NAME(u->first + r * u->width + c), (unsigned)u->at);
					return false;
				} else if (u->open && (!RED(u->first + r * u->width + c) ||
						       BLUE(u->first + r * u->width + c))) {
					snprintf(why, len, "%s: not red or blue, in a block known open",
						 NAME(u->first + r * u->width + c));
					return false;
				}
	}
	for (unsigned k = 0; k < PS_KNOWN_RED_MAX; k++) {
		const struct ps_red_known *b = &e->st->known_red[k];

		for (uint64_t r = b->r0; r < b->r1; r++)
			for (uint64_t c = 0; c < (b->run ? b->hi : 64); c++) {
				const ps_node v = b->first + r * b->width +
						  (b->run ? c : (b->first_word << 6) + c);

				if (b->run ? c >= b->lo && !RED(v) : ((b->mask >> c) & 1) && !RED(v)) {
					snprintf(why, len, "%s: not red, in a block known red", NAME(v));
					return false;
				}
			}
	}
	if (red != e->c.red || partial != e->st->partial_count) {
		snprintf(why, len, "%llu red flags for a count of %llu; %llu records for %llu",
			 (unsigned long long)red, (unsigned long long)e->c.red,
			 (unsigned long long)partial, (unsigned long long)e->st->partial_count);
		return false;
	}
	return true;
}

/* ---- rows, for the block path ---------------------------------------------------- */

/* The columns of cols below limit: a range cut short, or the list. */
static struct ps_coordset below(const struct ps_coordset *cols, uint64_t limit)
{
	if (cols->list)
		return *cols;
	return ps_range(cols->lo, cols->hi < limit ? cols->hi : (cols->lo < limit ? limit : cols->lo));
}

/* A plane read along a row: the page of the last bit asked for kept. */
struct cursor {
	const struct ps_plane *p;
	uint64_t page_no;
	const uint64_t *page;
};

static struct cursor cursor_of(const struct ps_plane *p)
{
	struct cursor c = { p, UINT64_MAX, NULL };

	return c;
}

static inline bool cursor_test(struct cursor *c, uint64_t k)
{
	if (k >> PS_PAGE_SHIFT != c->page_no) {
		c->page_no = k >> PS_PAGE_SHIFT;
		c->page = c->p->page[c->page_no];
	}
	return c->page && ((c->page[(k & (PS_PAGE_BITS - 1)) >> 6] >> (k & 63)) & 1);
}

/* The 64-bit word of the plane that holds bit k (0 where no page). */
static inline uint64_t cursor_word(struct cursor *c, uint64_t k)
{
	if (k >> PS_PAGE_SHIFT != c->page_no) {
		c->page_no = k >> PS_PAGE_SHIFT;
		c->page = c->p->page[c->page_no];
	}
	return c->page ? c->page[(k & (PS_PAGE_BITS - 1)) >> 6] : 0;
}

/*
 * A run [lo, hi) of nodes a word at a time: fn(ctx, first bit, mask) for
 * each word it meets, the mask selecting the run's bits; stops at a
 * non-zero return.
 */
#define RUN_WORDS(lo, hi, at, mask, body)                                             \
	for (uint64_t at = (lo); at < (hi);) {                                            \
		const uint64_t word_end_ = (at | 63) + 1;                                 \
		const uint64_t stop_ = (hi) < word_end_ ? (hi) : word_end_;               \
		const uint64_t mask = ps_bits_word_mask((unsigned)(at & 63),              \
							(unsigned)((stop_ - 1) & 63) + 1); \
		body;                                                                     \
		at = stop_;                                                               \
	}

/* Has every node of the row the flag (set), or none of them (!set)? */
static inline bool row_uniform(const struct ps_engine *e, enum ps_plane_id id, ps_node first,
			       const struct ps_coordset *cols, uint64_t limit, bool set)
{
	struct cursor c = cursor_of(ps_engine_plane(e, id));
	const struct ps_coordset run = below(cols, limit);

	if (!run.list) {
		RUN_WORDS(first + run.lo, first + run.hi, k, mask,
			  if ((cursor_word(&c, k) & mask) != (set ? mask : 0)) return false);
		return true;
	}
	for (size_t q = 0; q < run.len; q++)
		if (run.list[q] < limit && cursor_test(&c, first + run.list[q]) != set)
			return false;
	return true;
}

bool ps_row_all(const struct ps_engine *e, enum ps_plane_id id, ps_node first,
		const struct ps_coordset *cols, uint64_t limit)
{
	return row_uniform(e, id, first, cols, limit, true);
}

bool ps_row_none(const struct ps_engine *e, enum ps_plane_id id, ps_node first,
		 const struct ps_coordset *cols, uint64_t limit)
{
	return row_uniform(e, id, first, cols, limit, false);
}

uint64_t ps_row_count(const struct ps_engine *e, enum ps_plane_id id, ps_node first,
		      const struct ps_coordset *cols, uint64_t limit)
{
	struct cursor c = cursor_of(ps_engine_plane(e, id));
	const struct ps_coordset run = below(cols, limit);
	uint64_t n = 0;

	if (!run.list)
		return plane_count(c.p, first + run.lo, first + run.hi);
	for (size_t q = 0; q < run.len; q++)
		n += run.list[q] < limit && cursor_test(&c, first + run.list[q]);
	return n;
}

bool ps_row_complete(const struct ps_engine *e, ps_node first,
		     const struct ps_coordset *cols)
{
	return ps_row_all(e, PS_PLANE_RED, first, cols, UINT64_MAX) &&
	       ps_row_all(e, PS_PLANE_COMPLETE, first, cols, UINT64_MAX);
}

int ps_row_flag(struct ps_engine *e, enum ps_plane_id id, ps_node first,
		const struct ps_coordset *cols, uint64_t limit, bool set)
{
	struct ps_plane *p = (struct ps_plane *)ps_engine_plane(e, id);
	const struct ps_coordset run = below(cols, limit);
	uint64_t page_no = UINT64_MAX, *page = NULL;

	const ps_node lo = first + (run.list ? (run.len ? run.list[0] : 0) : run.lo);
	const ps_node hi = first + (run.list ? (run.len ? run.list[run.len - 1] + 1 : 0) : run.hi);

	if (id == PS_PLANE_RED && !set)
		known_red_drop(e->st, lo, hi);
	if (id == PS_PLANE_BLUE && set)
		uniform_unopen(e->st, lo, hi);
	if (!run.list)
		return plane_fill(p, first + run.lo, first + run.hi, set);
	for (size_t q = 0; q < run.len; q++) {
		uint64_t k = first + run.list[q];

		if (run.list[q] >= limit)
			continue;
		if (k >> PS_PAGE_SHIFT != page_no) {
			page_no = k >> PS_PAGE_SHIFT;
			page = set ? plane_page(p, k) : p->page[page_no];
			if (set && !page)
				return PS_ENOMEM;
		}
		if (!page)
			continue;
		if (set)
			page[(k & (PS_PAGE_BITS - 1)) >> 6] |= UINT64_C(1) << (k & 63);
		else
			page[(k & (PS_PAGE_BITS - 1)) >> 6] &= ~(UINT64_C(1) << (k & 63));
	}
	return PS_OK;
}

int ps_edges_init(struct ps_edges *ed, const struct ps_coordset *set)
{
	ed->set = set;
	ed->mask = NULL;
	ed->first_word = ed->words = 0;
	ed->run = list_is_run(set);
	ed->count = ps_coordset_size(set);
	ed->lo = ps_coordset_at(set, 0);
	ed->hi = ps_coordset_at(set, ed->count - 1) + 1;
	if (ed->run || set->len < 16)
		return PS_OK;
	ed->first_word = set->list[0] / 64;
	ed->words = set->list[set->len - 1] / 64 - ed->first_word + 1;
	if (!(ed->mask = calloc(ed->words, sizeof(uint64_t))))
		return PS_ENOMEM;
	for (size_t q = 0; q < set->len; q++)
		ed->mask[set->list[q] / 64 - ed->first_word] |= UINT64_C(1) << (set->list[q] % 64);
	return PS_OK;
}

void ps_edges_free(struct ps_edges *ed)
{
	free(ed->mask);
	ed->mask = NULL;
}

/* The page word of plane p that holds plane word w, or NULL (no page,
 * and make false). */
static inline uint64_t *plane_word(struct ps_plane *p, uint64_t w, bool make)
{
	uint64_t k = w << 6, *pg = p->page[k >> PS_PAGE_SHIFT];

	if (!pg && make)
		pg = plane_page(p, k);
	return pg ? &pg[(k & (PS_PAGE_BITS - 1)) >> 6] : NULL;
}

/* ---- blocks of rows, a word at a time ------------------------------------------ */

/* The block's rows, of width at most 64, have the columns of one word:
 * repeated every width bits. */
static void rows_repeat(struct ps_rows *b, uint64_t columns)
{
	uint64_t lo = columns, hi = 0;

	/* the first span bits repeat: twice as many, 128 bits at a time */
	for (uint64_t span = b->width; span < 128; span *= 2) {
		if (span >= 64) {
			hi |= lo << (span - 64);
		} else {
			hi |= (hi << span) | (lo >> (64 - span));
			lo |= lo << span;
		}
	}
	b->periodic = true;
	b->step = 64 % b->width;
	b->repeated[0] = lo;
	b->repeated[1] = hi;
}

/* Bits [phase, phase + 64) of the repeated columns, phase < 64. */
static inline uint64_t rows_phase(const struct ps_rows *b, uint64_t phase)
{
	return phase ? (b->repeated[0] >> phase) | (b->repeated[1] << (64 - phase)) :
		       b->repeated[0];
}

int ps_rows_init(struct ps_rows *b, ps_node first, uint64_t width,
		 const struct ps_coordset *rows, const struct ps_coordset *cols, uint64_t limit)
{
	const struct ps_coordset c = below(cols, limit);
	size_t len = c.len;

	/* what a block of one run of columns reads; the mask and the
	 * repeated columns are set where they are used */
	b->first = first;
	b->width = width;
	b->rows = *rows;
	b->lo = b->hi = b->first_word = b->words = b->step = 0;
	b->heap = NULL;
	b->periodic = false;
	if (rows->list && rows->len && rows->list[rows->len - 1] - rows->list[0] + 1 == rows->len)
		b->rows = ps_range(rows->list[0], rows->list[rows->len - 1] + 1); /* increasing */
	b->run = true;
	while (c.list && len && c.list[len - 1] >= limit)
		len--;
	if (c.list && !len)
		b->rows = ps_range(0, 0); /* no column below limit */
	if (!c.list || !len || c.list[len - 1] - c.list[0] + 1 == len) {
		b->lo = c.list ? (len ? c.list[0] : 0) : c.lo;
		b->hi = c.list ? (len ? c.list[len - 1] + 1 : 0) : c.hi;
		if (!b->rows.list && b->lo == 0 && b->hi == width && ps_coordset_size(&b->rows)) {
			/* consecutive rows covered whole: one run of nodes */
			b->first += b->rows.lo * width;
			b->hi = ps_coordset_size(&b->rows) * width;
			b->rows = ps_range(0, 1);
			return PS_OK;
		}
		if (b->lo < b->hi && width <= 64 && ps_coordset_size(&b->rows) > 1)
			rows_repeat(b, ps_bits_word_mask((unsigned)b->lo, (unsigned)b->hi));
		return PS_OK;
	}
	b->run = false;
	b->first_word = c.list[0] / 64;
	b->words = c.list[len - 1] / 64 - b->first_word + 1;
	memset(b->small, 0, sizeof(b->small));
	if (b->words > sizeof(b->small) / sizeof(b->small[0]) &&
	    !(b->heap = calloc(b->words, sizeof(uint64_t))))
		return PS_ENOMEM;
	for (size_t q = 0; q < len; q++)
		(b->heap ? b->heap : b->small)[c.list[q] / 64 - b->first_word] |=
			UINT64_C(1) << (c.list[q] % 64);
	if (width <= 64 && ps_coordset_size(&b->rows) > 1)
		rows_repeat(b, b->small[0]);
	return PS_OK;
}

void ps_rows_free(struct ps_rows *b)
{
	free(b->heap);
	b->heap = NULL;
}

enum rows_do {
	ROWS_ALL, ROWS_NONE, ROWS_COUNT, ROWS_SET, ROWS_ADD, ROWS_CLEAR, ROWS_DELETE,
	ROWS_OPEN, /* sums: none in slow memory only, none complete; count the not red */
	ROWS_TAKE, /* sums: red, their blue copies stale */
};

/* Deletes the red pebbles of the nodes mask of plane word w: the sums
 * among them without a blue copy start again from nothing. */
static void word_delete(struct ps_engine_state *s, uint64_t w, uint64_t mask)
{
	uint64_t *red = plane_word(&s->red, w, false), *complete;
	const uint64_t *blue = plane_word(&s->blue, w, false);
	uint64_t gone = mask & ~(blue ? *blue : 0);

	if (red)
		*red &= ~mask;
	if (gone && (complete = plane_word(&s->complete, w, false)))
		*complete &= ~gone;
	for (; gone && s->partial_count; gone &= gone - 1)
		partial_drop(s, (w << 6) + ps_lowest_bit64(gone));
}

/* what the open sums of a word are: none in slow memory only, none
 * complete; *count adds those not red */
static PS_ALWAYS_INLINE int word_open(struct ps_engine_state *s, uint64_t w, uint64_t mask,
				      uint64_t *count)
{
	const uint64_t *red = plane_word(&s->red, w, false);
	const uint64_t *blue = plane_word(&s->blue, w, false);
	const uint64_t *complete = plane_word(&s->complete, w, false);
	const uint64_t r = red ? *red & mask : 0;

	if ((blue && (*blue & mask & ~r)) || (complete && (*complete & mask)))
		return 1;
	*count += ps_popcount64(mask & ~r);
	return PS_OK;
}

/* what, on the nodes mask of plane word w of p: PS_OK to go on, 1 to stop
 * (all: a node without the flag; none: one with it), or PS_ENOMEM. */
static PS_ALWAYS_INLINE int word_do(struct ps_engine_state *s, struct ps_plane *p, enum rows_do what,
			  uint64_t w, uint64_t mask, uint64_t *count)
{
	uint64_t *word;

	switch (what) {
	case ROWS_ALL:
		word = plane_word(p, w, false);
		return !word || (*word & mask) != mask;
	case ROWS_NONE:
		word = plane_word(p, w, false);
		return word && (*word & mask);
	case ROWS_COUNT:
		if ((word = plane_word(p, w, false)))
			*count += ps_popcount64(*word & mask);
		return PS_OK;
	case ROWS_SET:
		if (!(word = plane_word(p, w, true)))
			return PS_ENOMEM;
		*word |= mask;
		return PS_OK;
	case ROWS_ADD:
		if (!(word = plane_word(p, w, true)))
			return PS_ENOMEM;
		if (*word & mask)
			*count += ps_popcount64(*word & mask);
		*word |= mask;
		return PS_OK;
	case ROWS_CLEAR:
		if ((word = plane_word(p, w, false)))
			*word &= ~mask;
		return PS_OK;
	case ROWS_DELETE:
		word_delete(s, w, mask);
		return PS_OK;
	case ROWS_OPEN:
		return word_open(s, w, mask, count);
	case ROWS_TAKE:
		if (!(word = plane_word(&s->red, w, true)))
			return PS_ENOMEM;
		*word |= mask;
		if ((word = plane_word(&s->blue, w, false)))
			*word &= ~mask;
		return PS_OK;
	}
	return PS_OK;
}

/* The words a block's rows meet, in increasing order: the bits of word w
 * are gathered into *at_mask while the rows stay in it, and what is done
 * on the word once they leave it. */
static PS_ALWAYS_INLINE int gather(struct ps_engine_state *s, struct ps_plane *p, enum rows_do what,
			 uint64_t *at_word, uint64_t *at_mask, uint64_t w, uint64_t mask,
			 uint64_t *count)
{
	int rc = PS_OK;

	if (w == *at_word) {
		*at_mask |= mask;
		return PS_OK;
	}
	if (*at_mask)
		rc = word_do(s, p, what, *at_word, *at_mask, count);
	*at_word = w;
	*at_mask = mask;
	return rc;
}

/* A page's words, for the planes an operation reads or writes: NULL
 * where the plane has no page. */
struct page_words {
	uint64_t *one, *red, *blue, *complete;
};

/* what on a word of a page (at offset k) with the block's bits: PS_OK,
 * 1 to stop (all: a node without the flag; none: one with it; open: a sum
 * that may not take the edges). */
static PS_ALWAYS_INLINE int page_word_do(const struct page_words *pw, enum rows_do what,
					 uint64_t k, uint64_t bits, uint64_t *count)
{
	uint64_t r;

	switch (what) {
	case ROWS_ALL:
		return (pw->one[k] & bits) != bits;
	case ROWS_NONE:
		return (pw->one[k] & bits) != 0;
	case ROWS_COUNT:
		*count += ps_popcount64(pw->one[k] & bits);
		return PS_OK;
	case ROWS_SET:
		pw->one[k] |= bits;
		return PS_OK;
	case ROWS_ADD:
		if (pw->one[k] & bits)
			*count += ps_popcount64(pw->one[k] & bits);
		pw->one[k] |= bits;
		return PS_OK;
	case ROWS_CLEAR:
		pw->one[k] &= ~bits;
		return PS_OK;
	case ROWS_OPEN:
		r = pw->red ? pw->red[k] & bits : 0;
		if ((pw->blue && (pw->blue[k] & bits & ~r)) ||
		    (pw->complete && (pw->complete[k] & bits)))
			return 1;
		if (bits & ~r)
			*count += ps_popcount64(bits & ~r);
		return PS_OK;
	case ROWS_TAKE:
		pw->red[k] |= bits;
		if (pw->blue)
			pw->blue[k] &= ~bits;
		return PS_OK;
	case ROWS_DELETE:
		break;
	}
	return PS_OK;
}

/*
 * The whole words [w, w1) of a periodic block's run of consecutive rows,
 * *phase the columns' phase at word w (advanced past w1): the pages of
 * the planes found once for their words, each word's bits read off the
 * repeated columns (the same bits every word when the rows' width
 * divides 64). Any 64 consecutive nodes of rows of at most 64 columns
 * hold one of the block's, so every word has bits: a missing page answers
 * all at once. Deletes go word by word. whole: every bit of the words
 * (a run of nodes), whatever b.
 */
static PS_ALWAYS_INLINE int words_periodic(struct ps_engine_state *s, struct ps_plane *p,
					   const struct ps_rows *b, bool whole, enum rows_do what,
					   uint64_t w, uint64_t w1, uint64_t *phase,
					   uint64_t *count)
{
	const bool one_plane = what != ROWS_DELETE && what != ROWS_OPEN && what != ROWS_TAKE;
	const bool make = what == ROWS_SET || what == ROWS_ADD;
	uint64_t ph = *phase;
	int rc;

	while (w < w1) {
		const uint64_t stop = ps_min_u64(w1, (w / PS_PAGE_WORDS + 1) * PS_PAGE_WORDS);
		struct page_words pw = { NULL, NULL, NULL, NULL };

		if (what == ROWS_DELETE) {
			for (; w < stop; w++) {
				word_delete(s, w, whole ? ~UINT64_C(0) : rows_phase(b, ph));
				ph += b->step;
				if (ph >= b->width)
					ph -= b->width;
			}
			continue;
		}
		if (one_plane) {
			pw.one = plane_word(p, w, make);
		} else {
			pw.red = plane_word(&s->red, w, what == ROWS_TAKE);
			pw.blue = plane_word(&s->blue, w, false);
			pw.complete = what == ROWS_OPEN ? plane_word(&s->complete, w, false) : NULL;
		}
		if ((one_plane && !pw.one) || (what == ROWS_TAKE && !pw.red)) {
			if (make || what == ROWS_TAKE)
				return PS_ENOMEM;
			if (what == ROWS_ALL)
				return 1;
			if (what != ROWS_OPEN) {
				/* none here: step the phase past the page's words */
				if (!whole)
					ph = (ph + (stop - w) % b->width * b->step) % b->width;
				w = stop;
				continue;
			}
		}
		/* the words of the page from w on, at offsets 0, 1, ... */
		if (whole || !b->step) {
			const uint64_t bits = whole ? ~UINT64_C(0) : rows_phase(b, ph);

			for (uint64_t k = 0; k < stop - w; k++)
				if ((rc = page_word_do(&pw, what, k, bits, count)))
					return rc;
		} else {
			for (uint64_t k = 0; k < stop - w; k++) {
				const uint64_t bits = rows_phase(b, ph);

				ph += b->step;
				if (ph >= b->width)
					ph -= b->width;
				if ((rc = page_word_do(&pw, what, k, bits, count)))
					return rc;
			}
		}
		w = stop;
	}
	*phase = ph;
	return PS_OK;
}

/* Has plane p no page where the block's nodes lie? Then none of them has
 * the flag, whatever the rows. */
static bool rows_pageless(const struct ps_plane *p, const struct ps_rows *b)
{
	const uint64_t n = ps_coordset_size(&b->rows);
	const uint64_t lo = b->run ? b->lo : b->first_word * 64;
	const uint64_t hi = b->run ? b->hi : (b->first_word + b->words) * 64;
	uint64_t page, last;

	if (!n)
		return true;
	page = (b->first + ps_coordset_at(&b->rows, 0) * b->width + lo) >> PS_PAGE_SHIFT;
	last = (b->first + ps_coordset_at(&b->rows, n - 1) * b->width + hi - 1) >> PS_PAGE_SHIFT;
	for (last = ps_min_u64(last, p->pages - 1); page <= last; page++)
		if (p->page[page])
			return false;
	return true;
}

static PS_ALWAYS_INLINE int rows_visit(struct ps_engine_state *s, struct ps_plane *p,
			     const struct ps_rows *b, enum rows_do what, uint64_t *count)
{
	const uint64_t *mask = b->heap ? b->heap : b->small;
	const uint64_t n = ps_coordset_size(&b->rows);
	uint64_t at_word = UINT64_MAX, at_mask = 0;
	int rc;

	if (b->run && !b->rows.list && b->rows.hi - b->rows.lo == 1 && b->hi - b->lo <= 256) {
		/* one short run of nodes (a few rows of an input, say): its
		 * few words one after the other */
		const ps_node row = b->first + b->rows.lo * b->width;

		RUN_WORDS(row + b->lo, row + b->hi, a, bits,
			  if ((rc = word_do(s, p, what, a >> 6, bits, count))) return rc);
		return PS_OK;
	}
	if ((what == ROWS_NONE || what == ROWS_COUNT) && rows_pageless(p, b))
		return PS_OK;

	for (uint64_t x = 0, y; b->periodic && x < n; x = y) {
		/* consecutive rows [x, y): their nodes a word at a time, the
		 * columns read off the repeated ones at the word's phase */
		const uint64_t r0 = ps_coordset_at(&b->rows, x);
		uint64_t a = b->first + r0 * b->width, end, phase = 0;

		if (!b->rows.list)
			y = n;
		else
			for (y = x + 1; y < n && ps_coordset_at(&b->rows, y) == r0 + (y - x); y++)
				;
		for (end = a + (y - x) * b->width; a < end;) {
			const uint64_t w = a >> 6, next = (w + 1) << 6;
			uint64_t bits = rows_phase(b, phase) << (a & 63);

			if (!(a & 63) && next < end) {
				/* the whole words: no other run meets them */
				const uint64_t whole = (end >> 6) - w;

				if (at_mask && (rc = word_do(s, p, what, at_word, at_mask, count)))
					return rc;
				at_mask = 0;
				if ((rc = words_periodic(s, p, b, false, what, w, w + whole, &phase, count)))
					return rc;
				a = (w + whole) << 6;
				continue;
			}
			if (end < next)
				bits &= (UINT64_C(1) << (end & 63)) - 1;
			if (bits && (rc = gather(s, p, what, &at_word, &at_mask, w, bits, count)))
				return rc;
			/* past the row's first word, a word's step: no division */
			phase = next - a == 64 ? phase + b->step : (phase + (next - a)) % b->width;
			if (phase >= b->width)
				phase -= b->width;
			a = next;
		}
	}
	for (uint64_t x = 0; !b->periodic && x < n; x++) {
		const ps_node row = b->first + ps_coordset_at(&b->rows, x) * b->width;
		const uint64_t end_off = b->run ? b->hi : (b->first_word + b->words) << 6;
		const uint64_t page = (row + (b->run ? b->lo : b->first_word << 6)) >> PS_PAGE_SHIFT;

		/* a row within a page the plane lacks has no node with the
		 * flag; of consecutive rows, every one up to the first that
		 * reaches the next page is passed over at once */
		if ((what == ROWS_NONE || what == ROWS_COUNT) && !p->page[page] &&
		    (row + end_off - 1) >> PS_PAGE_SHIFT == page) {
			const ps_node next = (page + 1) << PS_PAGE_SHIFT;
			const uint64_t r = ps_coordset_at(&b->rows, x);
			uint64_t reach;

			if (b->rows.list)
				continue;
			/* the first row r' with first + r' width + end_off > next */
			reach = (next - b->first - end_off) / b->width + 1;
			if (reach > r + 1)
				x += ps_min_u64(reach - r, n - x) - 1;
			continue;
		}

		for (uint64_t a = row + b->lo, end = row + b->hi; b->run && a < end;) {
			const uint64_t w = a >> 6, stop = ps_min_u64(end, (w + 1) << 6);

			if (!(a & 63) && stop < end) {
				/* whole words: no other row meets them */
				uint64_t phase = 0;

				if (at_mask && (rc = word_do(s, p, what, at_word, at_mask, count)))
					return rc;
				at_mask = 0;
				if ((rc = words_periodic(s, p, b, true, what, w, end >> 6, &phase, count)))
					return rc;
				a = end & ~UINT64_C(63);
				continue;
			}
			if ((rc = gather(s, p, what, &at_word, &at_mask, w,
					 ps_bits_word_mask((unsigned)(a & 63), (unsigned)((stop - 1) & 63) + 1),
					 count)))
				return rc;
			a = stop;
		}
		for (uint64_t k = 0; k < b->words; k++) {
			const uint64_t o = row + ((b->first_word + k) << 6);
			const unsigned sh = (unsigned)(o & 63);

			if (!mask[k])
				continue;
			if ((rc = gather(s, p, what, &at_word, &at_mask, o >> 6, mask[k] << sh, count)) ||
			    (sh && (mask[k] >> (64 - sh)) &&
			     (rc = gather(s, p, what, &at_word, &at_mask, (o >> 6) + 1,
					  mask[k] >> (64 - sh), count))))
				return rc;
		}
	}
	return at_mask ? word_do(s, p, what, at_word, at_mask, count) : PS_OK;
}

/* ---- blocks known red ------------------------------------------------------------ */

/* The nodes of block b lie in [*lo, *hi); false when it cannot be kept as
 * known (rows a list, a mask of more than a word, no rows). */
static bool known_span(const struct ps_rows *b, ps_node *lo, ps_node *hi)
{
	const uint64_t n = ps_coordset_size(&b->rows);

	if (b->rows.list || !n || (!b->run && b->words != 1))
		return false;
	*lo = b->first + b->rows.lo * b->width + (b->run ? b->lo : b->first_word << 6);
	*hi = b->first + (b->rows.hi - 1) * b->width + (b->run ? b->hi : (b->first_word + 1) << 6);
	return true;
}

/* Block b is all red now: kept, in a free place or else the oldest. */
static void known_red_note(struct ps_engine_state *s, const struct ps_rows *b)
{
	struct ps_red_known *k = NULL;
	ps_node lo, hi;

	if (!known_span(b, &lo, &hi))
		return;
	for (unsigned x = 0; x < PS_KNOWN_RED_MAX && !k; x++)
		if (s->known_red[x].r0 >= s->known_red[x].r1)
			k = &s->known_red[x];
	if (!k) {
		k = &s->known_red[s->known_red_next];
		s->known_red_next = (s->known_red_next + 1) % PS_KNOWN_RED_MAX;
	}
	k->first = b->first;
	k->width = b->width;
	k->r0 = b->rows.lo;
	k->r1 = b->rows.hi;
	k->run = b->run;
	k->lo = b->lo;
	k->hi = b->hi;
	k->first_word = b->first_word;
	k->mask = b->run ? 0 : b->small[0];
	k->node_lo = lo;
	k->node_hi = hi;
}

/* Is every node of b in a block known red? */
static bool known_red_covers(const struct ps_engine_state *s, const struct ps_rows *b)
{
	ps_node lo, hi;

	if (!known_span(b, &lo, &hi))
		return false;
	for (unsigned x = 0; x < PS_KNOWN_RED_MAX; x++) {
		const struct ps_red_known *k = &s->known_red[x];

		if (k->r0 >= k->r1 || k->first != b->first || k->width != b->width ||
		    b->rows.lo < k->r0 || b->rows.hi > k->r1)
			continue;
		if (b->run && k->run ? b->lo >= k->lo && b->hi <= k->hi :
		    !b->run && !k->run ? b->first_word == k->first_word && !(b->small[0] & ~k->mask) :
		    b->run && b->lo < b->hi && b->lo >> 6 == k->first_word &&
		    (b->hi - 1) >> 6 == k->first_word &&
		    !(ps_bits_word_mask((unsigned)(b->lo & 63), (unsigned)((b->hi - 1) & 63) + 1) &
		      ~k->mask))
			return true;
	}
	return false;
}

/* Red pebbles among the nodes [lo, hi) may go: no block that meets them
 * is known red, nor known open, any more. */
static void known_red_drop(struct ps_engine_state *s, ps_node lo, ps_node hi)
{
	uniform_unopen(s, lo, hi);
	for (unsigned x = 0; x < PS_KNOWN_RED_MAX; x++) {
		struct ps_red_known *k = &s->known_red[x];

		if (k->r0 < k->r1 && lo < k->node_hi && hi > k->node_lo)
			k->r0 = k->r1 = 0;
	}
}

/* The nodes of block b lie in [*lo, *hi); false: it has none. */
static bool rows_span(const struct ps_rows *b, ps_node *lo, ps_node *hi)
{
	const uint64_t n = ps_coordset_size(&b->rows);

	if (!n)
		return false;
	*lo = b->first + ps_coordset_at(&b->rows, 0) * b->width +
	      (b->run ? b->lo : b->first_word << 6);
	*hi = b->first + ps_coordset_at(&b->rows, n - 1) * b->width +
	      (b->run ? b->hi : (b->first_word + b->words) << 6);
	return true;
}

/* known_red_drop for a block of rows. */
static void known_red_drop_rows(struct ps_engine_state *s, const struct ps_rows *b)
{
	ps_node lo, hi;

	if (rows_span(b, &lo, &hi))
		known_red_drop(s, lo, hi);
}

bool ps_rows_all(const struct ps_engine *e, enum ps_plane_id id, const struct ps_rows *b)
{
	if (id == PS_PLANE_RED && known_red_covers(e->st, b))
		return true;
	if (rows_visit(e->st, (struct ps_plane *)ps_engine_plane(e, id), b, ROWS_ALL, NULL))
		return false;
	if (id == PS_PLANE_RED)
		known_red_note(e->st, b);
	return true;
}

bool ps_rows_none(const struct ps_engine *e, enum ps_plane_id id, const struct ps_rows *b)
{
	return !rows_visit(e->st, (struct ps_plane *)ps_engine_plane(e, id), b, ROWS_NONE, NULL);
}

uint64_t ps_rows_count(const struct ps_engine *e, enum ps_plane_id id, const struct ps_rows *b)
{
	uint64_t n = 0;

	rows_visit(e->st, (struct ps_plane *)ps_engine_plane(e, id), b, ROWS_COUNT, &n);
	return n;
}

int ps_rows_flag(struct ps_engine *e, enum ps_plane_id id, const struct ps_rows *b, bool set)
{
	struct ps_plane *p = (struct ps_plane *)ps_engine_plane(e, id);
	ps_node lo, hi;
	int rc;

	if (id == PS_PLANE_RED && !set)
		known_red_drop_rows(e->st, b);
	if (id == PS_PLANE_BLUE && set && rows_span(b, &lo, &hi))
		uniform_unopen(e->st, lo, hi);
	rc = set ? rows_visit(e->st, p, b, ROWS_SET, NULL) : rows_visit(e->st, p, b, ROWS_CLEAR, NULL);
	if (!rc && id == PS_PLANE_RED && set)
		known_red_note(e->st, b);
	return rc;
}

int ps_rows_add(struct ps_engine *e, enum ps_plane_id id, const struct ps_rows *b,
		uint64_t *had)
{
	return rows_visit(e->st, (struct ps_plane *)ps_engine_plane(e, id), b, ROWS_ADD, had);
}

void ps_rows_delete(struct ps_engine *e, const struct ps_rows *b)
{
	known_red_drop_rows(e->st, b);
	rows_visit(e->st, &e->st->red, b, ROWS_DELETE, NULL);
}

/* Does the record hold none of the block's edges? */
static inline bool record_open(const struct ps_partial *r, const struct ps_edges *ed)
{
	if (!r->bits && ed->run)
		return ed->hi <= r->lo || ed->lo >= r->hi;
	if (!ed->mask || !r->bits)
		return partial_disjoint(r, ed->set);
	for (uint64_t w = 0; w < ed->words; w++)
		if (r->bits[ed->first_word + w] & ed->mask[w])
			return false;
	return true;
}

/* The record takes the block's edges (none of which it holds). */
static inline int record_add(struct ps_partial *r, const struct ps_edges *ed)
{
	if (!r->bits && ed->run && r->count && (ed->lo == r->hi || ed->hi == r->lo)) {
		r->lo = ed->lo < r->lo ? ed->lo : r->lo;
		r->hi = ed->hi > r->hi ? ed->hi : r->hi;
		r->count += ed->count;
		return PS_OK;
	}
	if (!ed->mask || !r->bits)
		return partial_add(r, ed->set);
	for (uint64_t w = 0; w < ed->words; w++)
		r->bits[ed->first_word + w] |= ed->mask[w];
	r->count += ed->set->len;
	return PS_OK;
}

/* The record of sum v through a cursor over the index's pages. */
struct index_cursor {
	const struct ps_engine_state *s;
	uint64_t page_no;
	const uint32_t *page;
};

static inline struct ps_partial *index_find(struct index_cursor *c, ps_node v)
{
	uint32_t at;

	if (v >> PS_INDEX_SHIFT != c->page_no) {
		c->page_no = v >> PS_INDEX_SHIFT;
		c->page = c->s->index[c->page_no];
	}
	at = c->page ? c->page[v & (PS_INDEX_SIZE - 1)] : 0;
	return at ? &c->s->rec[at - 1] : NULL;
}

/* Do the sums [lo, hi) all hold record want (0: none)? Read sixteen
 * entries at a step, so that it vectorises. */
static bool index_same(const struct ps_engine_state *s, ps_node lo, ps_node hi, uint32_t want)
{
	while (lo < hi) {
		const uint64_t end = ps_min_u64(hi, ((lo >> PS_INDEX_SHIFT) + 1) << PS_INDEX_SHIFT);
		const uint32_t *pg = s->index[lo >> PS_INDEX_SHIFT], *a;
		uint32_t diff = 0;
		uint64_t k = 0, n = end - lo;

		if (!pg) {
			if (want)
				return false;
			lo = end;
			continue;
		}
		a = pg + (lo & (PS_INDEX_SIZE - 1));
		for (; k + 16 <= n; k += 16) {
			for (unsigned q = 0; q < 16; q++)
				diff |= a[k + q] ^ want;
			if (diff)
				return false;
		}
		for (; k < n; k++)
			diff |= a[k] ^ want;
		if (diff)
			return false;
		lo = end;
	}
	return true;
}

/* Do the sums [lo, hi) all hold one record (*at its number), or none (*at
 * 0)? A block known to (uniform_known) answers at once; else the entries
 * are read. */
static bool index_uniform(const struct ps_engine_state *s, ps_node lo, ps_node hi,
			  uint32_t *at)
{
	const uint32_t want = index_first(s, lo);

	if (uniform_known(s, lo, hi - lo, 0, 1, 0, hi - lo, false, at))
		return true;
	if (!index_same(s, lo, hi, want))
		return false;
	*at = want;
	return true;
}

bool ps_row_sums_open(const struct ps_engine *e, ps_node first,
		      const struct ps_coordset *cols, const struct ps_edges *ed,
		      uint64_t *fresh)
{
	struct cursor red = cursor_of(&e->st->red), blue = cursor_of(&e->st->blue);
	struct cursor complete = cursor_of(&e->st->complete);
	struct index_cursor ix = { e->st, UINT64_MAX, NULL };
	uint64_t not_red = 0;

	if (!cols->list) {
		uint32_t at;

		/* known open: only the record to judge */
		if (uniform_known(e->st, first + cols->lo, cols->hi - cols->lo, 0, 1, 0,
				  cols->hi - cols->lo, true, &at))
			return record_open(&e->st->rec[at - 1], ed);
		/* a run: in slow memory only, complete, or red, a word at a time */
		RUN_WORDS(first + cols->lo, first + cols->hi, k, mask, {
			const uint64_t r = cursor_word(&red, k) & mask;

			if ((cursor_word(&blue, k) & mask & ~r) || (cursor_word(&complete, k) & mask))
				return false;
			not_red += (uint64_t)ps_popcount64(mask & ~r);
		});
		if (e->st->partial_count) {
			const struct ps_partial *seen = NULL;

			if (index_uniform(e->st, first + cols->lo, first + cols->hi, &at)) {
				if (at && !record_open(&e->st->rec[at - 1], ed))
					return false;
				*fresh += not_red;
				return true;
			}
			for (uint64_t c = cols->lo; c < cols->hi; c++) {
				const struct ps_partial *r = index_find(&ix, first + c);

				if (r && r != seen && !record_open(r, ed))
					return false;
				seen = r;
			}
		}
		*fresh += not_red;
		return true;
	}
	for (size_t q = 0; q < cols->len; q++) {
		ps_node v = first + cols->list[q];
		const struct ps_partial *r;
		bool is_red = cursor_test(&red, v);

		if (!is_red && cursor_test(&blue, v))
			return false;
		not_red += !is_red;
		if ((r = index_find(&ix, v)) ? !record_open(r, ed) : cursor_test(&complete, v))
			return false;
	}
	*fresh += not_red;
	return true;
}

/* Sum v, open, takes the edges ed: its record, its own, extended; complete
 * when it holds all in_degree. */
static int sum_take(struct ps_engine_state *s, ps_node v, const struct ps_edges *ed,
		    uint64_t in_degree)
{
	struct ps_partial *r;

	if (!(r = index_first(s, v) ? partial_own(s, v) : partial_new(s, v, in_degree)))
		return PS_ENOMEM;
	if (record_add(r, ed))
		return PS_ENOMEM;
	if (r->count == in_degree) {
		partial_drop(s, v);
		return plane_set(&s->complete, v);
	}
	return PS_OK;
}

/* The row's sums, untouched (at 0) or all the holders of record at, take
 * the edges ed together. */
static int row_record_add(struct ps_engine *e, ps_node first, const struct ps_coordset *cols,
			  uint32_t at, const struct ps_edges *ed, uint64_t in_degree)
{
	const uint64_t n = ps_coordset_size(cols);
	struct ps_partial *r;

	if (!at) {
		if (!(at = rec_alloc(e->st, in_degree)))
			return PS_ENOMEM;
		for (uint64_t q = 0; q < n; q++)
			if (rec_hold(e->st, first + ps_coordset_at(cols, q), at))
				return PS_ENOMEM;
	}
	r = &e->st->rec[at - 1];
	if (record_add(r, ed))
		return PS_ENOMEM;
	if (r->count < in_degree)
		return PS_OK;
	for (uint64_t q = 0; q < n; q++)
		partial_drop(e->st, first + ps_coordset_at(cols, q));
	return ps_row_flag(e, PS_PLANE_COMPLETE, first, cols, UINT64_MAX, true);
}

int ps_row_sums_add(struct ps_engine *e, ps_node first, const struct ps_coordset *cols,
		    const struct ps_edges *ed, uint64_t in_degree)
{
	const uint64_t n = ps_coordset_size(cols), added = ps_coordset_size(ed->set);
	struct index_cursor ix = { e->st, UINT64_MAX, NULL };
	uint32_t known;
	int rc;

	/* red, their blue copies stale (known open: so they are) */
	if (cols->list || !uniform_known(e->st, first + cols->lo, cols->hi - cols->lo, 0, 1, 0,
					 cols->hi - cols->lo, true, &known)) {
		if ((rc = ps_row_flag(e, PS_PLANE_RED, first, cols, UINT64_MAX, true)))
			return rc;
		ps_row_flag(e, PS_PLANE_BLUE, first, cols, UINT64_MAX, false);
	}
	if (added == in_degree) {
		/* open sums hold none of these edges, so they are untouched:
		 * now complete */
		return ps_row_flag(e, PS_PLANE_COMPLETE, first, cols, UINT64_MAX, true);
	}
	/* the row's sums all untouched, or all holding one record that no
	 * other sum holds: one record serves them, changed once */
	if (!cols->list) {
		uint32_t at;

		if (index_uniform(e->st, first + cols->lo, first + cols->hi, &at) &&
		    (!at || e->st->rec[at - 1].refs == n)) {
			if ((rc = row_record_add(e, first, cols, at, ed, in_degree)))
				return rc;
			/* the next block over these sums need not read them */
			if ((at = index_first(e->st, first + cols->lo))) {
				uniform_note(e->st, first + cols->lo, cols->hi - cols->lo, 0, 1, 0,
					     cols->hi - cols->lo, at, true);
			}
			return PS_OK;
		}
	} else {
		uint32_t at = 0;
		uint64_t q;

		for (q = 0; q < n; q++) {
			ps_node v = first + ps_coordset_at(cols, q);
			const uint32_t *pg;
			uint32_t here;

			if (v >> PS_INDEX_SHIFT != ix.page_no) {
				ix.page_no = v >> PS_INDEX_SHIFT;
				ix.page = e->st->index[ix.page_no];
			}
			pg = ix.page;
			here = pg ? pg[v & (PS_INDEX_SIZE - 1)] : 0;
			if (q == 0)
				at = here;
			else if (here != at)
				break;
		}
		if (q == n && (!at || e->st->rec[at - 1].refs == n))
			return row_record_add(e, first, cols, at, ed, in_degree);
	}
	for (uint64_t q = 0; q < n; q++)
		if ((rc = sum_take(e->st, first + ps_coordset_at(cols, q), ed, in_degree)))
			return rc;
	return PS_OK;
}

/* The sums of the block, one after the other. */
static ps_node block_sum(const struct ps_rows *b, uint64_t x, uint64_t c)
{
	return b->first + ps_coordset_at(&b->rows, x) * b->width + c;
}

/* Do the block's sums all hold one record (*at), or none (*at 0)? */
static bool block_uniform(const struct ps_engine_state *s, const struct ps_rows *b,
			  uint32_t *at)
{
	const uint64_t n = ps_coordset_size(&b->rows);

	if (!b->rows.list &&
	    uniform_known(s, b->first, b->width, b->rows.lo, b->rows.hi, b->lo, b->hi, false, at))
		return true;
	/* row by row, each against the first sum's record: a block known to
	 * hold one lies in a range of rows, looked up once above */
	*at = index_first(s, block_sum(b, 0, b->lo));
	if (b->hi - b->lo <= 16) {
		/* a few columns a row: their entries read in place, the page
		 * kept while it serves */
		const uint32_t *pg = NULL;
		uint64_t page_no = UINT64_MAX;

		for (uint64_t x = 0; x < n; x++)
			for (ps_node v = block_sum(b, x, b->lo), end = v + (b->hi - b->lo); v < end;
			     v++) {
				if (v >> PS_INDEX_SHIFT != page_no) {
					page_no = v >> PS_INDEX_SHIFT;
					pg = s->index[page_no];
				}
				if ((pg ? pg[v & (PS_INDEX_SIZE - 1)] : 0) != *at)
					return false;
			}
		return true;
	}
	for (uint64_t x = 0; x < n; x++)
		if (!index_same(s, block_sum(b, x, b->lo), block_sum(b, x, b->hi), *at))
			return false;
	return true;
}

bool ps_rows_sums_open(const struct ps_engine *e, const struct ps_rows *b,
		       const struct ps_edges *ed, uint64_t *fresh)
{
	const struct ps_engine_state *s = e->st;
	const uint64_t n = ps_coordset_size(&b->rows);
	uint64_t not_red = 0;
	uint32_t at;

	/* known open: every sum red, none blue, none complete; only their
	 * one record to judge */
	if (!b->rows.list && uniform_known(s, b->first, b->width, b->rows.lo, b->rows.hi, b->lo,
					   b->hi, true, &at))
		return record_open(&s->rec[at - 1], ed);
	if (rows_visit(e->st, NULL, b, ROWS_OPEN, &not_red))
		return false;
	if (s->partial_count && block_uniform(s, b, &at)) {
		if (at && !record_open(&s->rec[at - 1], ed))
			return false;
	} else if (s->partial_count) {
		struct index_cursor ix = { s, UINT64_MAX, NULL };
		const struct ps_partial *seen = NULL;

		for (uint64_t x = 0; x < n; x++)
			for (uint64_t c = b->lo; c < b->hi; c++) {
				const struct ps_partial *r = index_find(&ix, block_sum(b, x, c));

				if (r && r != seen && !record_open(r, ed))
					return false;
				seen = r;
			}
	}
	*fresh += not_red;
	return true;
}

int ps_rows_sums_add(struct ps_engine *e, const struct ps_rows *b, const struct ps_edges *ed,
		     uint64_t in_degree)
{
	struct ps_engine_state *s = e->st;
	const uint64_t n = ps_coordset_size(&b->rows), sums = n * (b->hi - b->lo);
	struct ps_partial *r;
	uint32_t at;
	int rc;

	/* red, their blue copies stale (known open: so they are) */
	if ((b->rows.list || !uniform_known(s, b->first, b->width, b->rows.lo, b->rows.hi, b->lo,
					    b->hi, true, &at)) &&
	    (rc = rows_visit(s, NULL, b, ROWS_TAKE, NULL)))
		return rc;
	if (ed->count == in_degree) {
		/* open sums hold none of these edges, so they are untouched:
		 * now complete */
		return ps_rows_flag(e, PS_PLANE_COMPLETE, b, true);
	}
	if (!block_uniform(s, b, &at) || (at && s->rec[at - 1].refs != sums)) {
		/* records of their own: one sum at a time */
		for (uint64_t x = 0; x < n; x++)
			for (uint64_t c = b->lo; c < b->hi; c++)
				if ((rc = sum_take(s, block_sum(b, x, c), ed, in_degree)))
					return rc;
		return PS_OK;
	}
	/* untouched, or all the holders of record at: one record serves
	 * them, changed once */
	if (!at) {
		if (!(at = rec_alloc(s, in_degree)))
			return PS_ENOMEM;
		for (uint64_t x = 0; x < n; x++)
			for (uint64_t c = b->lo; c < b->hi; c++)
				if (rec_hold(s, block_sum(b, x, c), at))
					return PS_ENOMEM;
	}
	r = &s->rec[at - 1];
	if (record_add(r, ed))
		return PS_ENOMEM;
	if (r->count < in_degree) {
		/* the next block over these sums need not read them */
		if (!b->rows.list)
			uniform_note(s, b->first, b->width, b->rows.lo, b->rows.hi, b->lo, b->hi, at, true);
		return PS_OK;
	}
	for (uint64_t x = 0; x < n; x++)
		for (uint64_t c = b->lo; c < b->hi; c++)
			partial_drop(s, block_sum(b, x, c));
	return ps_rows_flag(e, PS_PLANE_COMPLETE, b, true);
}

void ps_engine_block_counted(struct ps_engine *e, const struct ps_block_counts *add,
			     uint64_t red_removed, uint64_t peak)
{
	e->c.loads += add->loads;
	e->c.saves += add->saves;
	e->c.by_array[add->array].loads += add->loads;
	e->c.by_array[add->array].saves += add->saves;
	e->c.computes += add->computes;
	e->c.recomputations += add->recomputations;
	e->c.macs += add->macs;
	e->c.moves += add->moves;
	e->c.red = e->c.red + add->red - red_removed;
	note_peak(e, peak);
}

/* Two records of the same set, each NULL (none) or held in the same form. */
static bool records_equal(const struct ps_partial *a, const struct ps_partial *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->count != b->count || a->in_degree != b->in_degree ||
	    !a->bits != !b->bits)
		return false;
	if (!a->bits)
		return a->lo == b->lo && a->hi == b->hi;
	return !memcmp(a->bits, b->bits, (a->in_degree + 63) / 64 * sizeof(uint64_t));
}

bool ps_rows_same_records(const struct ps_engine *e, ps_node first, uint64_t width,
			  uint64_t r0, uint64_t r1, uint64_t c)
{
	struct index_cursor ix = { e->st, UINT64_MAX, NULL };
	const struct ps_partial *want, *last;

	if (r0 >= r1 || !e->st->partial_count)
		return true;
	want = last = index_find(&ix, first + r0 * width + c);
	for (uint64_t r = r0 + 1; r < r1; r++) {
		const struct ps_partial *p = index_find(&ix, first + r * width + c);

		if (p != last && !records_equal(p, want))
			return false;
		last = p;
	}
	return true;
}
