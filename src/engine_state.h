/*
 * Internal to the engine (src/engine.c) and the block path
 * (src/ops_block.c): the pebble state, held for what is live, and the
 * operations on rows of nodes through which the block path changes it.
 * Not part of the public API.
 *
 * Flags are bit planes over node ids, each allocated a page at a time when
 * a bit of the page is first set: red, blue, computed (a plain node
 * computed at least once) and complete (a sum holding every in-edge). A
 * sum that holds some in-edges but not all has a record of them
 * (struct ps_partial): a run [lo, hi) while they are contiguous, a bitset
 * once they are not. An untouched sum has neither record nor complete bit.
 * So the state grows with the pages of nodes the sequence touches and with
 * the partial sums, not with the DAG's edges.
 *
 * Exact attention's fused tiling has one more form: whole rectangles of
 * nodes (struct ps_tile) instead of bits. A tile of S aggregated whole is
 * held (red, complete sums) until it is deleted whole; the tiles of E a
 * fused mac computes are done (computed before), merged as they grow. So
 * flash's state does not grow with n^2, and a key block costs the same at
 * any n. A tile's nodes have no bits of their own in those planes; any
 * other move or row operation on S or E first writes the tiles it meets
 * into the planes (ps_tiles_settle).
 */
#ifndef PEBBLESIM_SRC_ENGINE_STATE_H
#define PEBBLESIM_SRC_ENGINE_STATE_H

#include "pebblesim/engine.h"
#include "pebblesim/ops.h"

/* A plane's page: 2^15 bits, 4 KiB. */
#define PS_PAGE_SHIFT 15
#define PS_PAGE_BITS (UINT64_C(1) << PS_PAGE_SHIFT)
#define PS_PAGE_WORDS (PS_PAGE_BITS / 64)

/* A zone: 2^20 nodes, 32 pages. A plane marks the zones where it has ever
 * allocated a page, so a clear zone has every bit clear. */
#define PS_ZONE_SHIFT 20

struct ps_plane {
	uint64_t **page; /* [pages]; NULL: every bit clear */
	uint64_t pages;
	uint64_t *zone;  /* a bit per zone: a page allocated there */
};

/*
 * A tile: the nodes first + r stride + c of the rows r in [r0, r1) and the
 * columns c in [c0, c1), first the id of row 0, column 0 of a kind with
 * stride columns. Tiles of different firsts are of different kinds, so
 * disjoint.
 */
struct ps_tile {
	ps_node first;
	uint64_t stride, r0, r1, c0, c1;
};

/* Tiles held whole: a fused pebbling's transient state kept as a few
 * rectangles instead of bits. */
#define PS_TILES_MAX 4

struct ps_tiles {
	struct ps_tile t[PS_TILES_MAX];
	unsigned len;
};

/*
 * Plain nodes computed by fused macs over ranges of rows, held as one run
 * of rows per column instead of bits: the nodes first + r width + c, c in
 * [0, width), r in [lo[c], hi[c]). A fused mac over rows [r0, r1) and a
 * few columns of a row of r monomials then marks its entries in time
 * proportional to its columns, not to its rows times the words of a row.
 * While a region holds runs, the computed plane has no bit in it: any
 * other reader or writer of those bits settles first (the runs written
 * into the plane, which alone holds them from then on: written).
 */
struct ps_col_runs {
	ps_node first;
	uint64_t width, height;
	uint64_t *lo, *hi; /* [width]; lo == hi: none */
	bool written;
};

#define PS_COL_RUNS_MAX 2

/* A sum that holds some of its in-edges, not all. Sums whose sets are
 * equal, a row's aggregated together, may share one. */
struct ps_partial {
	uint64_t count;     /* in-edges aggregated, 0 < count < in_degree */
	uint64_t in_degree;
	uint64_t refs;      /* sums holding it */
	uint64_t lo, hi;    /* the in-edges [lo, hi), while bits is NULL */
	uint64_t *bits;     /* in_degree bits, once they are no single run */
};

/*
 * The sums first + r width + c of the rows r in [r0, r1) and the columns c
 * in [c0, c1) (r0 == r1: no block) all hold record at. A block's sums
 * aggregated together take the same in-edges op after op, so their one
 * record is known without reading their index entries again; a few
 * blocks are kept, for strategies that alternate between blocks of rows.
 * open: moreover every one of them is red without a blue pebble (and,
 * holding a record, not complete), so that the block may take any edges
 * its record does not hold without its flags being read again; cleared
 * when a red pebble among them is taken or a blue one placed.
 */
struct ps_uniform {
	ps_node first;
	uint64_t width, r0, r1, c0, c1;
	uint32_t at;
	bool open;
};

#define PS_UNIFORM_MAX 4

/* A block of rows (struct ps_rows, below) all red: rows [r0, r1) (r0 ==
 * r1: none), the columns [lo, hi) (run) or the mask word at first_word;
 * its nodes lie in [node_lo, node_hi). */
struct ps_red_known {
	ps_node first, node_lo, node_hi;
	uint64_t width, r0, r1;
	bool run;
	uint64_t lo, hi, first_word, mask;
};

#define PS_KNOWN_RED_MAX 4

/* Node id -> 1 + its partial record, a page of 2^12 ids at a time. */
#define PS_INDEX_SHIFT 12
#define PS_INDEX_SIZE (UINT64_C(1) << PS_INDEX_SHIFT)

struct ps_engine_state {
	struct ps_plane red, blue, computed, complete;
	/* sums red and complete (held) and plain nodes computed before
	 * (done), a tile at a time: none of their nodes has a bit of that
	 * plane or a record, and held sums no blue pebble. [tiles_lo,
	 * tiles_hi) bounds every tile's nodes (empty: none). */
	struct ps_tiles held, done;
	/* regions of plain nodes computed as runs of rows per column */
	struct ps_col_runs runs[PS_COL_RUNS_MAX];
	unsigned runs_len;
	ps_node tiles_lo, tiles_hi; /* bounds the runs' regions too */
	uint32_t **index; /* [index_pages] */
	uint64_t *index_zone; /* a bit per zone: an index page allocated there */
	/* blocks of sums that all hold one record (a block's, extended in
	 * place): known since no entry of theirs changed */
	struct ps_uniform uniform[PS_UNIFORM_MAX];
	unsigned uniform_next; /* the slot to take next */
	uint32_t *index_live; /* [index_pages] records in each page */
	uint32_t *index_spare; /* an emptied page (all zero), or NULL */
	/* blocks of rows found or made all red, kept until a red pebble
	 * among their nodes is taken (ps_rows_all answers them at once) */
	struct ps_red_known known_red[PS_KNOWN_RED_MAX];
	unsigned known_red_next;
	uint64_t index_pages;
	struct ps_partial *rec; /* [rec_cap]; free ones chained by count */
	uint32_t rec_used, rec_cap, rec_free;
	uint64_t partial_count; /* sums holding a record */
};

/* What the state holds now, counted as ps_engine_state_bytes estimates it:
 * the planes' pages and directories, the index's pages and directory, the
 * partial records and the unwritten runs (tests of the estimate). */
uint64_t ps_engine_state_held(const struct ps_engine *e);

enum ps_plane_id { PS_PLANE_RED, PS_PLANE_BLUE, PS_PLANE_COMPUTED, PS_PLANE_COMPLETE };

static inline const struct ps_plane *ps_engine_plane(const struct ps_engine *e,
						     enum ps_plane_id id)
{
	const struct ps_engine_state *s = e->st;

	return id == PS_PLANE_RED ? &s->red : id == PS_PLANE_BLUE ? &s->blue :
	       id == PS_PLANE_COMPUTED ? &s->computed : &s->complete;
}

static inline bool ps_plane_test(const struct ps_plane *p, uint64_t k)
{
	const uint64_t *pg = p->page[k >> PS_PAGE_SHIFT];

	return pg && ((pg[(k & (PS_PAGE_BITS - 1)) >> 6] >> (k & 63)) & 1);
}

/* The partial record of sum v, or NULL. */
static inline struct ps_partial *ps_engine_partial(const struct ps_engine *e, ps_node v)
{
	const struct ps_engine_state *s = e->st;
	const uint32_t *pg = s->index[v >> PS_INDEX_SHIFT];
	uint32_t at = pg ? pg[v & (PS_INDEX_SIZE - 1)] : 0;

	return at ? &s->rec[at - 1] : NULL;
}

/*
 * Rows: the nodes first + c for the columns c of cols (a range or an
 * increasing list) below limit. Judging reads, and changes go through the
 * engine's functions; each returns PS_OK, or PS_ENOMEM when a page or a
 * record cannot be allocated.
 */

/* Does every node of the row have the flag (all), or none of them? */
bool ps_row_all(const struct ps_engine *e, enum ps_plane_id id, ps_node first,
		const struct ps_coordset *cols, uint64_t limit);
bool ps_row_none(const struct ps_engine *e, enum ps_plane_id id, ps_node first,
		 const struct ps_coordset *cols, uint64_t limit);
/* How many have it? */
uint64_t ps_row_count(const struct ps_engine *e, enum ps_plane_id id, ps_node first,
		      const struct ps_coordset *cols, uint64_t limit);
/* Are the row's sums all red and complete? */
bool ps_row_complete(const struct ps_engine *e, ps_node first,
		     const struct ps_coordset *cols);

/* Sets (set) or clears the flag on every node of the row. */
int ps_row_flag(struct ps_engine *e, enum ps_plane_id id, ps_node first,
		const struct ps_coordset *cols, uint64_t limit, bool set);

/*
 * A block of rows of one kind: the nodes first + r width + c for the rows
 * r of rows and the columns c of cols below limit, both increasing, the
 * columns below width. Made once for a set operation (the columns as a
 * mask of words), it is judged and changed a word of a plane at a time:
 * the rows that share a word are read and written together, so its cost
 * is the words its nodes span plus a few steps a row, not a call a row.
 * Rows consecutive and covered whole are one run of nodes.
 */
struct ps_rows {
	ps_node first;
	uint64_t width;
	struct ps_coordset rows;
	bool run;               /* the columns [lo, hi); else the mask */
	uint64_t lo, hi;
	uint64_t first_word, words; /* mask word k: columns 64 (first_word + k) + [0, 64) */
	uint64_t *heap, small[4];   /* the mask: small when words <= 4 */
	/* rows of at most 64 nodes: their columns repeated every width
	 * bits, 128 of them, so that a word of consecutive rows is read off
	 * at once, whatever its phase */
	bool periodic;
	uint64_t repeated[2];
	uint64_t step; /* the phase a word on: 64 mod width */
};

/* PS_OK, or PS_ENOMEM (the mask not allocated). */
int ps_rows_init(struct ps_rows *b, ps_node first, uint64_t width,
		 const struct ps_coordset *rows, const struct ps_coordset *cols, uint64_t limit);
void ps_rows_free(struct ps_rows *b);

/* Has every node of the block the flag (all), or none of them? How many
 * have it? */
bool ps_rows_all(const struct ps_engine *e, enum ps_plane_id id, const struct ps_rows *b);
bool ps_rows_none(const struct ps_engine *e, enum ps_plane_id id, const struct ps_rows *b);
uint64_t ps_rows_count(const struct ps_engine *e, enum ps_plane_id id, const struct ps_rows *b);
/* Sets (set) or clears the flag on every node of the block. */
int ps_rows_flag(struct ps_engine *e, enum ps_plane_id id, const struct ps_rows *b, bool set);
/* Sets it, and *had counts the nodes that had it already. */
int ps_rows_add(struct ps_engine *e, enum ps_plane_id id, const struct ps_rows *b,
		uint64_t *had);
/* Deletes the red pebbles of the block; a sum whose only copy this was
 * starts again from nothing. */
void ps_rows_delete(struct ps_engine *e, const struct ps_rows *b);

/* A block's in-edges (an increasing set): a long list also as a mask of
 * words, word k of it word first_word + k of a record's bitset. */
struct ps_edges {
	const struct ps_coordset *set;
	uint64_t lo, hi, count; /* the first, the last + 1, how many */
	bool run;           /* consecutive edges: [lo, hi) */
	uint64_t first_word, words;
	uint64_t *mask;     /* NULL: no mask */
};

int ps_edges_init(struct ps_edges *ed, const struct ps_coordset *set);
void ps_edges_free(struct ps_edges *ed);

/*
 * The sums of a row, each to take the in-edges ed: may they (none in slow
 * memory only, none complete, none holding one of them)? *fresh counts
 * those not red.
 */
bool ps_row_sums_open(const struct ps_engine *e, ps_node first,
		      const struct ps_coordset *cols, const struct ps_edges *ed,
		      uint64_t *fresh);
/* ... and then they take them: red, their blue copies stale, complete
 * when they hold all in_degree. */
int ps_row_sums_add(struct ps_engine *e, ps_node first, const struct ps_coordset *cols,
		    const struct ps_edges *ed, uint64_t in_degree);

/* The sums of a block of columns a range, each to take the in-edges ed:
 * may they, and then they take them, as ps_row_sums_open and
 * ps_row_sums_add for each row, a block's one record judged and extended
 * once. */
bool ps_rows_sums_open(const struct ps_engine *e, const struct ps_rows *b,
		       const struct ps_edges *ed, uint64_t *fresh);
int ps_rows_sums_add(struct ps_engine *e, const struct ps_rows *b, const struct ps_edges *ed,
		     uint64_t in_degree);

/* Do the sums first + r width + c of the rows [r0, r1), at column c,
 * hold equal sets: no record at all, or records in the same form (a run,
 * or a bitset) with the same in-edges? (false may also answer equal sets
 * held in different forms.) */
bool ps_rows_same_records(const struct ps_engine *e, ps_node first, uint64_t width,
			  uint64_t r0, uint64_t r1, uint64_t c);

/*
 * Tiles, for the block path on exact attention (MODEL.md section 5): a
 * tile of S aggregated whole is held as red, complete sums; the tile of E
 * a fused mac computes is marked done; deleting the held tile drops it.
 * Each answer is exact: when a zone holds pages, the rows are read.
 */

/* Are the tile's nodes untouched: no flag, no record, in no tile? */
bool ps_tile_untouched(const struct ps_engine *e, const struct ps_tile *t);
/* ... then they become red, complete sums. false: no room for the tile
 * (nothing changed). */
bool ps_tile_hold(struct ps_engine *e, const struct ps_tile *t);
/* Is t within a held tile? */
bool ps_tile_held(const struct ps_engine *e, const struct ps_tile *t);
/* Deletes the red pebbles of t, a held tile exactly: true, or false with
 * nothing changed. */
bool ps_tile_release(struct ps_engine *e, const struct ps_tile *t);
/* The plain nodes of t, to be computed by a fused mac and dropped: are
 * none red, and is t either inside a done tile or apart from every
 * computed node? Then *computed counts those computed before. false also
 * when t meets computed nodes otherwise (the rows decide). */
bool ps_tile_fresh(const struct ps_engine *e, const struct ps_tile *t, uint64_t *computed);
/* ... and then computed: PS_OK or PS_ENOMEM. */
int ps_tile_mark_computed(struct ps_engine *e, const struct ps_tile *t);
/* Writes every tile into the planes when one meets the nodes [lo, hi):
 * before anything reads or changes them row by row or move by move.
 * PS_OK or PS_ENOMEM. */
int ps_tiles_settle(struct ps_engine *e, ps_node lo, ps_node hi);

/*
 * The plain nodes first + r width + c of the rows rows of a region of
 * height rows and the columns cols (both increasing), none red, computed
 * by a fused mac and dropped: marked as runs of rows per column when the
 * rows are consecutive and every column's run is empty or meets them;
 * *had adds those computed before. PS_OK; 1 when declined, the region's
 * runs then written into the computed plane so that the caller marks the
 * bits; or PS_ENOMEM.
 */
int ps_runs_mark_computed(struct ps_engine *e, ps_node first, uint64_t width,
			  uint64_t height, const struct ps_coordset *rows,
			  const struct ps_coordset *cols, uint64_t *had);

/* A block applied: its counters (moves, macs, computes, recomputations,
 * red pebbles added, loads and saves, all of one array) and its peak. */
struct ps_block_counts {
	uint64_t moves, macs, computes, recomputations, red, loads, saves;
	unsigned array; /* the array loaded or saved (ps_dag_array) */
};

void ps_engine_block_counted(struct ps_engine *e, const struct ps_block_counts *add,
			     uint64_t red_removed, uint64_t peak);

#endif
