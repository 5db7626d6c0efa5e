/*
 * generic: the tilings of Lemma 3.1 (section 3.2), for both products.
 *
 * The monomials are cut into contiguous blocks of t (each block reads the
 * features of its supports). Phase 1 keeps an H tile of t monomials by tw
 * columns while t rows j at a time stream through it; phase 2 keeps an N
 * tile of t rows by tw columns while blocks of t monomials load their H
 * tile, and keeps the row block's Q strip when it fits M/4.
 *
 * The lemma's two shapes, with its M/4 budget for each matrix: square
 * tiles of side s = floor(sqrt(M/4)), and tall tiles of height
 * floor(M / (4|B|)) by the whole width |B| (the lemma's M/(4d) x d, the
 * ones column counted). A third shape, 1 x 1 tiles, serves the smallest M.
 * The plan takes the shape with the least predicted I/O among those that
 * fit in M, or the one --tiles names.
 *
 * --sizes tuned keeps the loops and frees the sizes: blocks of every
 * height ceil(r/T) (and the shapes' own), each with its H and N tiles'
 * widths and rows and the Q strip chosen by the cost model
 * (ps_tiling_tune); the lemma's bound is then not claimed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pebblesim/strategy.h"
#include "tiling.h"

enum generic_shape { SHAPE_SQUARE, SHAPE_TALL, SHAPE_UNIT, SHAPE_COUNT };

static const char *const shape_names[SHAPE_COUNT] = {
	[SHAPE_SQUARE] = "square",
	[SHAPE_TALL] = "tall",
	[SHAPE_UNIT] = "unit",
};

/* The shape's side: its blocks' height before it is cut at r. */
static uint64_t shape_side(const struct ps_attention *att, uint64_t M,
			   enum generic_shape shape)
{
	uint64_t side = 1;

	if (shape == SHAPE_SQUARE)
		side = ps_isqrt(M / 4);
	else if (shape == SHAPE_TALL)
		side = M / (4 * att->nb);
	return ps_max_u64(side, 1);
}

static int shape_tiling(const struct ps_attention *att, uint64_t M,
			enum generic_shape shape, struct ps_tiling *t,
			struct ps_error *err)
{
	uint64_t side = shape_side(att, M, shape), width;
	int rc;

	width = shape == SHAPE_TALL ? att->nb : ps_min_u64(side, att->nb);
	rc = ps_tiling_blocks(t, att, ps_min_u64(side, att->r), err);
	if (rc)
		return rc;
	t->h_width = width;
	t->h_rows = ps_min_u64(side, att->n);
	t->n_height = ps_min_u64(side, att->n);
	t->n_width = width;
	/* the Q strip of a row block stays when it fits the lemma's M/4 */
	t->keep_q = shape != SHAPE_UNIT && t->n_height * att->d <= M / 4;
	return PS_OK;
}

static uint64_t generic_min_memory(const struct ps_attention *att)
{
	struct ps_tiling t;
	uint64_t peak;

	if (shape_tiling(att, 1, SHAPE_UNIT, &t, NULL))
		return UINT64_MAX;
	peak = ps_tiling_peak(&t, att);
	ps_tiling_free(&t);
	return peak;
}

/* --sizes tuned: blocks of size monomials, every size then tuned */
static int block_tiling(const struct ps_attention *att, uint64_t M,
			uint64_t size, struct ps_tiling *t, struct ps_error *err)
{
	(void)M;
	return ps_tiling_blocks(t, att, size, err);
}

/*
 * The shape with the least predicted I/O among those that fit in M, or the
 * one pb->tiles names, or with --sizes tuned the tuned blocks of least
 * predicted I/O (*tuned set); its tiling stays in *best.
 */
static int choose(const struct ps_problem *pb, struct ps_tiling *best,
		  enum generic_shape *best_shape, bool *tuned,
		  struct ps_plan *plan, struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct ps_cheapest c;
	int forced = -1, rc;

	if ((rc = ps_tiling_sizes(pb, "generic", tuned, err)))
		return rc;
	if (*tuned && pb->tiles)
		return ps_error_set(err, PS_EINPUT,
				    "--tiles names the lemma's sizes; --sizes tuned chooses them: give one of the two");
	if (pb->tiles) {
		for (int shape = 0; shape < SHAPE_COUNT; shape++)
			if (!strcmp(pb->tiles, shape_names[shape]))
				forced = shape;
		if (forced < 0)
			return ps_error_set(err, PS_EINPUT,
					    "unknown tiles '%s' for generic: square, tall or unit",
					    pb->tiles);
	}
	ps_cheapest_init(&c);
	for (int shape = 0; shape < SHAPE_COUNT; shape++) {
		uint64_t count = ps_block_count(att->r, ps_min_u64(shape_side(att, pb->M,
									     (enum generic_shape)shape),
								  att->r));
		uint64_t floor = ps_tiling_io_floor(att, count, false);
		struct ps_tiling t;

		if (forced >= 0 && shape != forced)
			continue;
		/* pruning: a shape whose floor reaches the cheapest found would
		 * not be kept (ps_cheapest_offer keeps a cheaper one only);
		 * only the memory check of its tiles is left of it */
		if (c.found && floor && floor >= c.plan.loads + c.plan.saves) {
			if ((rc = ps_tiling_fits(att, count, err))) {
				ps_tiling_free(&c.best);
				return rc;
			}
			continue;
		}
		if ((rc = shape_tiling(att, pb->M, (enum generic_shape)shape, &t, err))) {
			if (c.found)
				ps_tiling_free(&c.best);
			return rc;
		}
		if (*tuned)
			ps_tiling_tune(&t, att, pb->M, PS_TUNE_KEEP_Q);
		if (ps_cheapest_offer(&c, &t, att, pb->M))
			*best_shape = (enum generic_shape)shape;
	}
	if (*tuned && (rc = ps_tiling_tune_blocks(att, pb->M, block_tiling,
						  PS_TUNE_KEEP_Q, &c, err))) {
		if (c.found)
			ps_tiling_free(&c.best);
		return rc;
	}
	if (!c.found && forced >= 0)
		return ps_error_set(err, PS_EINPUT,
				    "the %s tiles for M = %llu need %llu red pebbles",
				    shape_names[forced], (unsigned long long)pb->M,
				    (unsigned long long)c.last_peak);
	if (!c.found)
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for generic: it needs M >= %llu",
				    (unsigned long long)pb->M,
				    (unsigned long long)generic_min_memory(att));
	*best = c.best;
	*plan = c.plan;
	return PS_OK;
}

/* The least a plan can predict: the proof's shapes (or the one --tiles
 * names) each cut r into blocks of their side, whose count ps_tiling_io_floor
 * takes; tuned sizes may take any height, down to one block. */
uint64_t ps_generic_io_floor(const struct ps_problem *pb)
{
	const struct ps_attention *att = pb->att;
	uint64_t least = UINT64_MAX;

	/* no monomials (exact attention's DAG): no tiling, no floor */
	if (att->r == 0)
		return 0;
	if (pb->sizes && !strcmp(pb->sizes, "tuned"))
		return ps_tiling_io_floor(att, 1, false);
	for (int shape = 0; shape < SHAPE_COUNT; shape++) {
		uint64_t size = ps_min_u64(shape_side(att, pb->M, (enum generic_shape)shape), att->r);

		if (!pb->tiles || !strcmp(pb->tiles, shape_names[shape]))
			least = ps_min_u64(least, ps_tiling_io_floor(att, ps_block_count(att->r, size),
								     false));
	}
	/* an unknown --tiles: the plan says so */
	return least == UINT64_MAX ? 0 : least;
}

static int generic_plan(const struct ps_problem *pb, struct ps_plan *plan,
			struct ps_error *err)
{
	struct ps_tiling t;
	enum generic_shape shape;
	bool tuned;
	int rc = choose(pb, &t, &shape, &tuned, plan, err);

	if (rc)
		return rc;
	plan->state_bytes = ps_tiling_state_bytes(pb, false);
	if (tuned) {
		snprintf(plan->summary, sizeof(plan->summary),
			 "tuned sizes: blocks of t = %llu monomials; H tiles t x %llu over %llu rows of K and V, N tiles %llu x %llu%s",
			 (unsigned long long)t.tiles[0].count,
			 (unsigned long long)t.h_width, (unsigned long long)t.h_rows,
			 (unsigned long long)t.n_height, (unsigned long long)t.n_width,
			 t.keep_q ? "; Q strip kept per row block" : "");
		ps_plan_tuned(plan);
		ps_tiling_free(&t);
		return PS_OK;
	}
	snprintf(plan->summary, sizeof(plan->summary),
		 "%s tiles: blocks of t = %llu monomials; H tiles t x %llu, N tiles %llu x %llu%s",
		 shape_names[shape], (unsigned long long)t.tiles[0].count,
		 (unsigned long long)t.h_width, (unsigned long long)t.n_height,
		 (unsigned long long)t.n_width,
		 t.keep_q ? "; Q strip kept per row block" : "");
	plan->variant = shape_names[shape];
	ps_bound_generic(pb->att, t.tiles[0].count, t.n_height, t.n_width,
			 t.keep_q, &plan->upper);
	ps_tiling_free(&t);
	return PS_OK;
}

static int generic_run(const struct ps_problem *pb, struct ps_sink *sink,
		       struct ps_error *err)
{
	struct ps_tiling t;
	struct ps_plan plan;
	enum generic_shape shape;
	bool tuned;
	int rc = choose(pb, &t, &shape, &tuned, &plan, err);

	if (rc)
		return rc;
	rc = ps_tiling_run(&t, pb->att, sink, err);
	ps_tiling_free(&t);
	return rc;
}

const struct ps_strategy ps_strategy_generic = {
	.version = PS_STRATEGY_VERSION,
	.name = "generic",
	.section = "Lemma 3.1, section 3.2",
	.summary = "square or tall tiles of the generic upper bound, U1 and U2 regenerated through fused macs",
	.min_memory = generic_min_memory,
	.plan = generic_plan,
	.run = generic_run,
	.takes = PS_TAKES_TILES | PS_TAKES_SIZES,
};
