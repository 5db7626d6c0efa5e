/*
 * generic: the tilings of Lemma 3.1 (section 3.2), for both products.
 *
 * Phase 1 computes H = U2^T [V 1]: H is cut into tiles of h_height
 * monomials by h_width columns, each kept in fast memory while it is
 * aggregated over chunks of h_depth rows j; a chunk loads the K columns its
 * monomials read and its V columns, and streams U2 through fused macs.
 *
 * Phase 2 computes N = U1 H and A: N is cut into tiles of n_height rows by
 * n_width columns, each aggregated over chunks of n_depth monomials that
 * load their H tile; U1 is regenerated from Q through fused macs. With
 * normalisation the tile holding the ones column d goes first and its
 * column N[.,d] stays while the row block's other tiles are finished, so
 * each A[i,b] = N[i,b] / N[i,d] is computed and saved as soon as its tile
 * is complete; N itself is never saved.
 *
 * Two shapes follow the lemma: square tiles of side s = floor(sqrt(M/4)),
 * and tall tiles of height floor(M / (4|B|)) by the whole width |B|; a
 * third, 1 x 1 tiles, serves the smallest M. The plan takes the shape with
 * the least predicted I/O among those that fit in M.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/strategy.h"
#include "tiling.h"

enum generic_shape { SHAPE_SQUARE, SHAPE_TALL, SHAPE_UNIT, SHAPE_COUNT };

static const char *const shape_names[SHAPE_COUNT] = {
	[SHAPE_SQUARE] = "square",
	[SHAPE_TALL] = "tall",
	[SHAPE_UNIT] = "unit",
};

struct generic_tiles {
	enum generic_shape shape;
	uint64_t h_height, h_width, h_depth; /* phase 1: H tile, j chunk */
	uint64_t n_height, n_width, n_depth; /* phase 2: N tile, m chunk */
	bool keep_q; /* phase 2 keeps the row block's Q strip throughout */
};

/* Scratch for support unions: room for d columns and d marks. */
struct scratch {
	uint64_t *cols;
	uint8_t *mark;
};

static int scratch_init(struct scratch *s, uint64_t d, struct ps_error *err)
{
	s->cols = malloc(d * sizeof(uint64_t));
	s->mark = calloc(d, 1);
	if (!s->cols || !s->mark) {
		free(s->cols);
		free(s->mark);
		return ps_error_set(err, PS_ENOMEM, "out of memory");
	}
	return PS_OK;
}

static void scratch_free(struct scratch *s)
{
	free(s->cols);
	free(s->mark);
}

static void tiles_for(const struct ps_attention *att, uint64_t M,
		      enum generic_shape shape, struct generic_tiles *t)
{
	uint64_t side = 1;

	switch (shape) {
	case SHAPE_SQUARE:
		side = (uint64_t)floor(sqrt((double)(M / 4)));
		while ((side + 1) * (side + 1) <= M / 4)
			side++;
		while (side > 1 && side * side > M / 4)
			side--;
		break;
	case SHAPE_TALL:
		side = M / (4 * att->nb);
		break;
	default:
		break;
	}
	side = ps_max_u64(side, 1);
	t->shape = shape;
	t->h_height = ps_min_u64(side, att->r);
	t->h_depth = ps_min_u64(side, att->n);
	t->n_height = ps_min_u64(side, att->n);
	t->n_depth = ps_min_u64(side, att->r);
	if (shape == SHAPE_TALL) {
		t->h_width = att->nb;
		t->n_width = att->nb;
	} else {
		t->h_width = ps_min_u64(side, att->nb);
		t->n_width = ps_min_u64(side, att->nb);
	}
	/* the Q strip of a row block stays when it fits the lemma's M/4 */
	t->keep_q = shape != SHAPE_UNIT && t->n_height * att->d <= M / 4;
}

/* Columns of Q that any monomial reads: all d when g >= 1, none for g = 0. */
static uint64_t q_columns_all(const struct ps_attention *att)
{
	return att->g > 0 ? att->d : 0;
}

/*
 * The most red pebbles the emitted sequence can hold (run() below, block
 * by block): phase 1 holds an H tile, a K chunk, a V chunk, and U2 and the
 * product inside a fused mac; phase 2 holds the Q strip (or chunk), an N
 * tile, the kept column N[.,d], and an H chunk with U1 and the product, or
 * later one column of A.
 */
static uint64_t tiles_peak(const struct ps_attention *att,
			   const struct generic_tiles *t, struct scratch *s)
{
	uint64_t s1 = ps_support_union_max(&att->mono, t->h_height, s->cols,
					   s->mark);
	uint64_t v1 = ps_min_u64(t->h_width, att->d);
	uint64_t phase1 = t->h_height * t->h_width + t->h_depth * (s1 + v1) + 2;
	uint64_t q = t->keep_q ? t->n_height * q_columns_all(att) : 0;
	uint64_t q_chunk = t->keep_q ? 0 :
		t->n_height * ps_support_union_max(&att->mono, t->n_depth,
						   s->cols, s->mark);
	uint64_t kept_d = att->normalize && t->n_width < att->nb ? t->n_height : 0;
	uint64_t inner = ps_max_u64(q_chunk + t->n_depth * t->n_width + 2,
				    att->normalize ? t->n_height : 0);
	uint64_t phase2 = q + t->n_height * t->n_width + kept_d + inner;

	return ps_max_u64(phase1, phase2);
}

/* The exact loads and saves of run(), summed tile by tile. */
static void tiles_predict(const struct ps_attention *att,
			  const struct generic_tiles *t, struct scratch *s,
			  uint64_t *loads, uint64_t *saves)
{
	const uint64_t n = att->n, d = att->d, r = att->r, nb = att->nb;
	uint64_t h_blocks = ps_block_count(nb, t->h_width);
	uint64_t k_cols = ps_support_union_sum(&att->mono, t->h_height,
					       s->cols, s->mark);
	uint64_t m_blocks = ps_block_count(r, t->h_height);
	uint64_t i_blocks = ps_block_count(n, t->n_height);
	uint64_t n_blocks = ps_block_count(nb, t->n_width);
	uint64_t q_loads;

	/* phase 1: K per m-block and b-block, V once per m-block, H saved */
	*loads = h_blocks * n * k_cols + m_blocks * n * d;
	*saves = r * nb;
	/* phase 2: Q per row block (or per chunk), H per row block */
	if (t->keep_q)
		q_loads = n * q_columns_all(att);
	else
		q_loads = n * n_blocks *
			  ps_support_union_sum(&att->mono, t->n_depth, s->cols,
					       s->mark);
	*loads += q_loads + i_blocks * r * nb;
	*saves += att->normalize ? n * d : n * nb;
}

/* The bound of docs/BOUNDS.md: every support union counted as d columns. */
static void tiles_bound(const struct ps_attention *att,
			const struct generic_tiles *t, struct ps_bound *b)
{
	const double n = (double)att->n, d = (double)att->d,
		     r = (double)att->r, nb = (double)att->nb;
	double mb = (double)ps_block_count(att->r, t->h_height);
	double hb = (double)ps_block_count(att->nb, t->h_width);
	double ib = (double)ps_block_count(att->n, t->n_height);
	double nbk = (double)ps_block_count(att->nb, t->n_width);
	double cb = (double)ps_block_count(att->r, t->n_depth);
	double q = t->keep_q ? n * d : nbk * cb * n * d;

	b->name = "generic";
	b->value = mb * (hb + 1) * n * d + r * nb + q + ib * r * nb + n * nb;
	snprintf(b->formula, sizeof(b->formula),
		 "ceil(r/%llu)(ceil(|B|/%llu)+1)nd + r|B| + %s + ceil(n/%llu)r|B| + n|B|",
		 (unsigned long long)t->h_height,
		 (unsigned long long)t->h_width,
		 t->keep_q ? "nd" : "ceil(|B|/tw)ceil(r/tm)nd",
		 (unsigned long long)t->n_height);
}

static uint64_t generic_min_memory(const struct ps_attention *att)
{
	struct generic_tiles t;
	struct scratch s;
	uint64_t peak;

	if (scratch_init(&s, att->d, NULL))
		return UINT64_MAX;
	tiles_for(att, 1, SHAPE_UNIT, &t);
	peak = tiles_peak(att, &t, &s);
	scratch_free(&s);
	return peak;
}

/* The shape with the least predicted I/O among those that fit in M, or the
 * one pb->tiles names. */
static int choose(const struct ps_problem *pb, struct generic_tiles *best,
		  struct ps_plan *plan, struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct scratch s;
	bool found = false;
	uint64_t best_io = UINT64_MAX, forced_peak = 0;
	int forced = -1;
	int rc;

	if (pb->tiles) {
		for (int shape = 0; shape < SHAPE_COUNT; shape++)
			if (!strcmp(pb->tiles, shape_names[shape]))
				forced = shape;
		if (forced < 0)
			return ps_error_set(err, PS_EINPUT,
					    "unknown tiles '%s' for generic: square, tall or unit",
					    pb->tiles);
	}
	rc = scratch_init(&s, att->d, err);
	if (rc)
		return rc;
	for (int shape = 0; shape < SHAPE_COUNT; shape++) {
		struct generic_tiles t;
		uint64_t loads, saves, peak;

		if (forced >= 0 && shape != forced)
			continue;
		tiles_for(att, pb->M, (enum generic_shape)shape, &t);
		peak = tiles_peak(att, &t, &s);
		forced_peak = peak;
		if (peak > pb->M)
			continue;
		tiles_predict(att, &t, &s, &loads, &saves);
		if (loads + saves < best_io) {
			best_io = loads + saves;
			*best = t;
			found = true;
			if (plan) {
				plan->loads = loads;
				plan->saves = saves;
				plan->peak_red = peak;
			}
		}
	}
	scratch_free(&s);
	if (!found && forced >= 0)
		return ps_error_set(err, PS_EINPUT,
				    "the %s tiles for M = %llu need %llu red pebbles",
				    shape_names[forced], (unsigned long long)pb->M,
				    (unsigned long long)forced_peak);
	if (!found)
		return ps_error_set(err, PS_EINPUT,
				    "M = %llu is too small for generic: it needs M >= %llu",
				    (unsigned long long)pb->M,
				    (unsigned long long)generic_min_memory(att));
	return PS_OK;
}

static int generic_plan(const struct ps_problem *pb, struct ps_plan *plan,
			struct ps_error *err)
{
	struct generic_tiles t;
	int rc = choose(pb, &t, plan, err);

	if (rc)
		return rc;
	snprintf(plan->summary, sizeof(plan->summary),
		 "%s tiles: H %llux%llu over j-chunks of %llu; N %llux%llu over m-chunks of %llu%s",
		 shape_names[t.shape], (unsigned long long)t.h_height,
		 (unsigned long long)t.h_width, (unsigned long long)t.h_depth,
		 (unsigned long long)t.n_height, (unsigned long long)t.n_width,
		 (unsigned long long)t.n_depth,
		 t.keep_q ? "; Q strip kept per row block" : "");
	tiles_bound(pb->att, &t, &plan->upper);
	return PS_OK;
}

/* Phase 1: H = U2^T [V 1], tile by tile. */
static int run_h(const struct ps_attention *att, const struct generic_tiles *t,
		 struct scratch *s, struct ps_sink *sink, struct ps_error *err)
{
	for (uint64_t mk = 0; mk < ps_block_count(att->r, t->h_height); mk++) {
		uint64_t m0 = ps_block_lo(mk, t->h_height);
		uint64_t m1 = ps_block_hi(mk, t->h_height, att->r);
		uint64_t ncols = ps_support_union(&att->mono, m0, m1, s->cols,
						  s->mark);
		struct ps_coordset cols = ps_list(s->cols, ncols);

		for (uint64_t bk = 0; bk < ps_block_count(att->nb, t->h_width); bk++) {
			uint64_t b0 = ps_block_lo(bk, t->h_width);
			uint64_t b1 = ps_block_hi(bk, t->h_width, att->nb);
			uint64_t v1 = ps_min_u64(b1, att->d);

			for (uint64_t jk = 0; jk < ps_block_count(att->n, t->h_depth); jk++) {
				struct ps_coordset js = ps_range(
					ps_block_lo(jk, t->h_depth),
					ps_block_hi(jk, t->h_depth, att->n));
				int rc = 0;

				if (ncols)
					rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_K, js, cols, err);
				if (!rc && b0 < v1)
					rc = ps_emit(sink, PS_OP_LOAD, PS_KIND_V, js,
						     ps_range(b0, v1), err);
				if (!rc)
					rc = ps_emit_mac(sink, PS_KIND_H, true, js,
							 ps_range(m0, m1),
							 ps_range(b0, b1), err);
				if (!rc && ncols)
					rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_K, js, cols, err);
				if (!rc && b0 < v1)
					rc = ps_emit(sink, PS_OP_DELETE, PS_KIND_V, js,
						     ps_range(b0, v1), err);
				if (rc)
					return rc;
			}
			if (ps_emit(sink, PS_OP_SAVE, PS_KIND_H, ps_range(m0, m1),
				    ps_range(b0, b1), err) ||
			    ps_emit(sink, PS_OP_DELETE, PS_KIND_H, ps_range(m0, m1),
				    ps_range(b0, b1), err))
				return err->code;
		}
	}
	return PS_OK;
}

/* Finishes an N tile: A column by column (N[.,d] stays), or N saved. */
static int finish_n_tile(const struct ps_attention *att, struct ps_coordset is,
			 uint64_t b0, uint64_t b1, struct ps_sink *sink,
			 struct ps_error *err)
{
	if (!att->normalize)
		return ps_emit(sink, PS_OP_SAVE, PS_KIND_N, is, ps_range(b0, b1), err) ||
		       ps_emit(sink, PS_OP_DELETE, PS_KIND_N, is, ps_range(b0, b1), err)
		       ? err->code : PS_OK;
	for (uint64_t b = b0; b < b1; b++) {
		if (b == att->d)
			continue;
		if (ps_emit(sink, PS_OP_COMPUTE, PS_KIND_A, is, ps_one(b), err) ||
		    ps_emit(sink, PS_OP_DELETE, PS_KIND_N, is, ps_one(b), err) ||
		    ps_emit(sink, PS_OP_SAVE, PS_KIND_A, is, ps_one(b), err) ||
		    ps_emit(sink, PS_OP_DELETE, PS_KIND_A, is, ps_one(b), err))
			return err->code;
	}
	return PS_OK;
}

/* Phase 2: N = U1 H and A, row block by row block. */
static int run_n(const struct ps_attention *att, const struct generic_tiles *t,
		 struct scratch *s, struct ps_sink *sink, struct ps_error *err)
{
	uint64_t n_blocks = ps_block_count(att->nb, t->n_width);
	uint64_t all_cols = ps_support_union(&att->mono, 0, att->r, s->cols,
					     s->mark);
	uint64_t *strip = NULL;

	/* the whole support list outlives the chunk unions computed below */
	if (t->keep_q && all_cols) {
		strip = malloc(all_cols * sizeof(uint64_t));
		if (!strip)
			return ps_error_set(err, PS_ENOMEM, "out of memory");
		memcpy(strip, s->cols, all_cols * sizeof(uint64_t));
	}
	for (uint64_t ik = 0; ik < ps_block_count(att->n, t->n_height); ik++) {
		struct ps_coordset is = ps_range(ps_block_lo(ik, t->n_height),
						 ps_block_hi(ik, t->n_height, att->n));
		struct ps_coordset qs = ps_list(strip, all_cols);

		if (strip && ps_emit(sink, PS_OP_LOAD, PS_KIND_Q, is, qs, err))
			goto fail;
		for (uint64_t step = 0; step < n_blocks; step++) {
			/* with normalisation the block holding column d goes first */
			uint64_t bk = att->normalize ?
				(step == 0 ? n_blocks - 1 : step - 1) : step;
			uint64_t b0 = ps_block_lo(bk, t->n_width);
			uint64_t b1 = ps_block_hi(bk, t->n_width, att->nb);

			for (uint64_t mk = 0; mk < ps_block_count(att->r, t->n_depth); mk++) {
				uint64_t m0 = ps_block_lo(mk, t->n_depth);
				uint64_t m1 = ps_block_hi(mk, t->n_depth, att->r);
				uint64_t ncols = t->keep_q ? 0 :
					ps_support_union(&att->mono, m0, m1,
							 s->cols, s->mark);
				struct ps_coordset cols = ps_list(s->cols, ncols);

				if ((ncols && ps_emit(sink, PS_OP_LOAD, PS_KIND_Q, is, cols, err)) ||
				    ps_emit(sink, PS_OP_LOAD, PS_KIND_H, ps_range(m0, m1),
					    ps_range(b0, b1), err) ||
				    ps_emit_mac(sink, PS_KIND_N, true, is, ps_range(m0, m1),
						ps_range(b0, b1), err) ||
				    ps_emit(sink, PS_OP_DELETE, PS_KIND_H, ps_range(m0, m1),
					    ps_range(b0, b1), err) ||
				    (ncols && ps_emit(sink, PS_OP_DELETE, PS_KIND_Q, is, cols, err)))
					goto fail;
			}
			if (finish_n_tile(att, is, b0, b1, sink, err))
				goto fail;
		}
		if (att->normalize &&
		    ps_emit(sink, PS_OP_DELETE, PS_KIND_N, is, ps_one(att->d), err))
			goto fail;
		if (strip && ps_emit(sink, PS_OP_DELETE, PS_KIND_Q, is, qs, err))
			goto fail;
	}
	free(strip);
	return PS_OK;
fail:
	free(strip);
	return err->code;
}

static int generic_run(const struct ps_problem *pb, struct ps_sink *sink,
		       struct ps_error *err)
{
	struct generic_tiles t;
	struct scratch s;
	int rc = choose(pb, &t, NULL, err);

	if (rc)
		return rc;
	rc = scratch_init(&s, pb->att->d, err);
	if (rc)
		return rc;
	rc = run_h(pb->att, &t, &s, sink, err);
	if (!rc)
		rc = run_n(pb->att, &t, &s, sink, err);
	scratch_free(&s);
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
};
