/*
 * What every strategy shares: blocks of a range, support unions, emitting
 * one operation, and the tiling executor.
 *
 * All of the paper's upper bounds are tilings of the two products
 * H = U2^T [V 1] and N = U1 H. They differ in how the r monomials are cut
 * into aggregation tiles (contiguous blocks, or the Key Lemma's group
 * subsets) and in the sizes of the output tiles. A strategy describes its
 * tiling in a struct ps_tiling; the executor emits it, predicts its exact
 * loads and saves, and bounds its peak, so that no strategy writes a tile
 * loop of its own.
 */
#ifndef PEBBLESIM_TILING_H
#define PEBBLESIM_TILING_H

#include <stdbool.h>
#include <stdint.h>

#include "pebblesim/attention.h"
#include "pebblesim/ops.h"
#include "pebblesim/strategy.h"

/* The largest s with s * s <= x: the side of a square tile. */
uint64_t ps_isqrt(uint64_t x);

/* [0, total) cut into blocks of size (the last may be shorter). */
static inline uint64_t ps_block_count(uint64_t total, uint64_t size)
{
	return ps_ceil_div(total, size);
}

static inline uint64_t ps_block_lo(uint64_t k, uint64_t size)
{
	return k * size;
}

static inline uint64_t ps_block_hi(uint64_t k, uint64_t size, uint64_t total)
{
	return ps_min_u64((k + 1) * size, total);
}

/*
 * The features that monomials list[0..count) read, increasing, into cols
 * (room for d); returns how many. mark is scratch of d zero bytes, left
 * zero again.
 */
uint64_t ps_support_union(const struct ps_monomials *mono,
			  const uint64_t *list, uint64_t count, uint64_t *cols,
			  uint8_t *mark);

/* ps_support_union of the monomials of rank lo to hi - 1; a long range
 * found from its first and last tuples, without reading the rest. */
uint64_t ps_rank_range_union(const struct ps_monomials *mono, uint64_t lo,
			     uint64_t hi, uint64_t *cols, uint8_t *mark);

/* The features of the ranks [lo, hi) as a mask (lo < hi, d <= 64), in
 * time O(g), from the first and last tuples. */
uint64_t ps_rank_range_mask(const struct ps_monomials *mono, uint64_t lo,
			    uint64_t hi);

/* The same over the features [0, d) alone (d <= 64): the features of the
 * monomials of those features from first_m to last_m in the rank order
 * (both of them of those features, first_m <= last_m). The rank order of
 * the monomials of the first d features is the rank order of the table of
 * d features; ps_rank_range_mask is the case of every feature. */
uint64_t ps_tuple_range_mask(const struct ps_monomials *mono, uint64_t first_m,
			     uint64_t last_m, uint32_t d);

/* Emits load, save, delete or compute of kind over c0 x c1. */
int ps_emit(struct ps_sink *sink, enum ps_opcode code, enum ps_kind kind,
	    struct ps_coordset c0, struct ps_coordset c1, struct ps_error *err);

/* Emits a mac into H or N over its product's coordinates c0 x c1 x c2. */
int ps_emit_mac(struct ps_sink *sink, enum ps_kind into, bool fuse,
		struct ps_coordset c0, struct ps_coordset c1,
		struct ps_coordset c2, struct ps_error *err);

/* Exact attention's key loop (strategies/flash.c): for the key rows
 * [lo, hi) in blocks of bc (the last one shorter), K and V loaded, S[is,
 * J] aggregated and exponentiated into O[is, B] at once, S, K and V
 * dropped; one loop for the full blocks and one for the rest, each judged
 * whole by the block path. */
int ps_emit_key_loop(struct ps_sink *sink, const struct ps_attention *att,
		     struct ps_coordset is, uint64_t lo, uint64_t hi, uint64_t bc,
		     struct ps_error *err);

/* A finished N tile (O, for exact attention) over rows is and columns
 * [b0, b1): A column by column (N[., d] stays), or N saved without
 * normalisation. */
int ps_emit_finish_n(struct ps_sink *sink, const struct ps_attention *att,
		     struct ps_coordset is, uint64_t b0, uint64_t b1,
		     struct ps_error *err);

/* An aggregation tile: monomials aggregated together, the features read. */
struct ps_agg_tile {
	uint64_t first, count;         /* in ps_tiling.order */
	uint64_t gen_first, gen_count; /* in ps_tiling.gen */
};

struct ps_tiling {
	/* the monomials, tile after tile (NULL: the rank order, tiles being
	 * ranges of it), and each tile's features (NULL with the rank order:
	 * the tiles' gen_first and gen_count are set, and ps_tiling_run
	 * lists the features) */
	uint64_t *order;
	uint64_t *gen;
	struct ps_agg_tile *tiles;
	uint64_t tile_count;
	/* an H tile taller than chunk is cut into sub-tiles (Lemma 3.3) */
	uint64_t chunk;
	/* phase 1, H: tiles of h_width columns, aggregated h_rows rows at a time */
	uint64_t h_width, h_rows;
	/* phase 2, N: tiles of n_height rows by n_width columns */
	uint64_t n_height, n_width;
	/* phase 2 keeps a row block's Q strip (every feature read) */
	bool keep_q;
	/* Theorem 1.4: U1 and U2 computed once, saved, and loaded as inputs */
	bool stored;
	/* stored only: rows and monomials per step of computing U1, U2 */
	uint64_t u_rows, u_chunk;
	/* the features any monomial reads: all d for g >= 1, none for g = 0 */
	uint64_t all_count;
	uint64_t *all;
};

/* Whether a tiling of count tiles fits in the memory limit, before any of
 * it is allocated: PS_OK, or PS_ENOMEM and why. */
int ps_tiling_fits(const struct ps_attention *att, uint64_t count,
		   struct ps_error *err);

/* Contiguous blocks of size monomials, each with the size of its support
 * union (order and gen NULL). */
int ps_tiling_blocks(struct ps_tiling *t, const struct ps_attention *att,
		     uint64_t size, struct ps_error *err);

/*
 * Tiles from a partition: tile_of[m] < tile_count names m's tile; tiles
 * keep their numbering, empty ones are dropped, monomials stay in rank
 * order inside a tile.
 */
int ps_tiling_partition(struct ps_tiling *t, const struct ps_attention *att,
			const uint64_t *tile_of, uint64_t tile_count,
			struct ps_error *err);

/*
 * The Key Lemma's tiles (A.1): the d features cut into groups of
 * group_size (the last may be smaller), one tile per k-subset of the G
 * groups, k = min(g, G), in lexicographic order; each monomial goes to the
 * first tile whose groups hold its support. *tiles gets C(G, k).
 */
int ps_tiling_groups(struct ps_tiling *t, const struct ps_attention *att,
		     uint64_t group_size, uint64_t *tiles,
		     struct ps_error *err);

/* The groups of monomial m's first tile, as a k-subset of the G groups,
 * and that subset's rank in lexicographic order. */
uint64_t ps_group_tile_of(const struct ps_monomials *mono, uint64_t m,
			  uint64_t group_size, uint64_t groups, uint64_t k,
			  uint64_t *subset);
uint64_t ps_subset_rank(const uint64_t *subset, uint64_t k, uint64_t n);

void ps_tiling_free(struct ps_tiling *t);

/* The most red pebbles the emitted sequence can hold. */
uint64_t ps_tiling_peak(const struct ps_tiling *t,
			const struct ps_attention *att);

/* The exact loads and saves of ps_tiling_run by array (the kinds, into
 * by_array[0, PS_ARRAY_MAX)), summed tile by tile. */
void ps_tiling_predict(const struct ps_tiling *t,
		       const struct ps_attention *att, struct ps_array_io *by_array);

/* Emits the whole pebbling: (U1, U2 when stored), H, then N and A. */
int ps_tiling_run(const struct ps_tiling *t, const struct ps_attention *att,
		  struct ps_sink *sink, struct ps_error *err);

/*
 * --dry-run and the memory limit: the engine's state for pb's sequence
 * (plan.state_bytes). On the block path, a tiling's fused macs leave U1
 * and U2 out of the planes, as runs of rows per column (two regions of r
 * columns, a first and a last row each); stored (matmul), each of their
 * entries holds a computed and a blue bit, red a block at a time. On the
 * element path every U1 and U2 entry is computed and red (and blue when
 * stored) bit by bit.
 */
uint64_t ps_tiling_state_bytes(const struct ps_problem *pb, bool stored);

/* Fills plan->by_array, loads, saves and peak_red from the tiling. */
void ps_tiling_plan(const struct ps_tiling *t, const struct ps_attention *att,
		    struct ps_plan *plan);

/* The cheapest of several candidate tilings that fit M. */
struct ps_cheapest {
	struct ps_tiling best;
	struct ps_plan plan; /* the best's prediction and peak */
	bool found;
	uint64_t last_peak;  /* the peak of the last candidate offered */
};

void ps_cheapest_init(struct ps_cheapest *c);

/* Takes t over: kept as the best when it fits M and costs less, else
 * freed. Returns whether it was kept. */
bool ps_cheapest_offer(struct ps_cheapest *c, struct ps_tiling *t,
		       const struct ps_attention *att, uint64_t M);

/*
 * --sizes: "proof" (or NULL), the proof's sizes, or "tuned"; *tuned says
 * which, PS_EINPUT names an unknown value and the strategy.
 */
int ps_tiling_sizes(const struct ps_problem *pb, const char *name, bool *tuned,
		    struct ps_error *err);

/* A tuned plan: its cost model, and no upper bound (the proofs bound
 * their own sizes only). */
void ps_plan_tuned(struct ps_plan *plan);

/* What ps_tiling_tune may choose besides the widths and rows. */
enum {
	PS_TUNE_CHUNK = 1,  /* the sub-tile height (Lemma 3.3's cut) */
	PS_TUNE_KEEP_Q = 2, /* whether phase 2 keeps the Q strip */
};

/*
 * --sizes tuned: the sizes of t's loops that minimise its cost model
 * within M, its aggregation tiles kept: H tiles' width and rows, N tiles'
 * width and height, and what vary adds. Phase 1 and phase 2 are searched
 * apart, as their peaks and costs are: every width in 1..|B| with the most
 * rows that fit (bisection on the peak). Returns false, with the sizes of
 * the least peak, when nothing fits.
 */
bool ps_tiling_tune(struct ps_tiling *t, const struct ps_attention *att,
		    uint64_t M, unsigned vary);

/*
 * The planners' pruning (ps_tiling_tune_blocks, and best's candidates for
 * the report's cheapest): on by default. Each rule skips only what cannot
 * cost less than what was found, so the answers are the same without it;
 * the tests turn it off to check that they are.
 */
void ps_tiling_set_pruning(bool on);
bool ps_tiling_pruning(void);

/*
 * Floors of the cost models, for best's pruning: the least I/O a tiling of
 * count tiles can predict whatever its sizes (U stored or not), and the
 * least each strategy's plan on pb can predict, from its tile counts; 0
 * where none is known (pruning off, a causal or exact DAG, a cost model
 * that could wrap 2^64).
 */
uint64_t ps_tiling_io_floor(const struct ps_attention *att, uint64_t count, bool stored);
uint64_t ps_generic_io_floor(const struct ps_problem *pb);
uint64_t ps_keylemma_io_floor(const struct ps_problem *pb);
uint64_t ps_subtile_io_floor(const struct ps_problem *pb);
uint64_t ps_matmul_io_floor(const struct ps_problem *pb);

/* Sets up contiguous blocks of size monomials, with their loop structure:
 * the same loops (U stored or not) for every size. */
typedef int (*ps_tiling_setup_fn)(const struct ps_attention *att, uint64_t M,
				  uint64_t size, struct ps_tiling *t,
				  struct ps_error *err);

/*
 * --sizes tuned over block heights: for every count T of tiles, blocks of
 * ceil(r/T) monomials (the evenest cut into T) set up and tuned, each
 * offered to c; once ps_tiling_io_floor of the next count reaches c's
 * cheapest, the rest are not set up (none of them could be kept).
 */
int ps_tiling_tune_blocks(const struct ps_attention *att, uint64_t M,
			  ps_tiling_setup_fn setup, unsigned vary,
			  struct ps_cheapest *c, struct ps_error *err);

/* Builds a strategy's tiling for M (its sizes fitted to M when it can). */
typedef int (*ps_tiling_build_fn)(const struct ps_attention *att, uint64_t M,
				  struct ps_tiling *t, struct ps_error *err);

/* The build --sizes asks for, proof or tuned, or PS_EINPUT naming an
 * unknown value (ps_tiling_sizes). */
int ps_tiling_build_for(const struct ps_problem *pb, const char *name,
			ps_tiling_build_fn proof, ps_tiling_build_fn tuned,
			ps_tiling_build_fn *build, struct ps_error *err);

/* The least M the built tiling accepts: its peak when built for M = 1. */
uint64_t ps_tiling_least_memory(const struct ps_attention *att,
				ps_tiling_build_fn build);

/* The tiling for pb, or PS_EINPUT naming the strategy and its least M. */
int ps_tiling_fitted(const struct ps_problem *pb, const char *name,
		     ps_tiling_build_fn build, struct ps_tiling *t,
		     struct ps_error *err);

/* Builds, fits and emits the tiling: a strategy's whole run. */
int ps_tiling_emit(const struct ps_problem *pb, const char *name,
		   ps_tiling_build_fn build, struct ps_sink *sink,
		   struct ps_error *err);

#endif
