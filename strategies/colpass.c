/*
 * colpass: passes over the cells of H, a strategy beyond the paper.
 *
 * The cells (m, b) of H = U2^T [V 1] are split into passes. Pass k keeps
 * its cells T_k red from start to end, and H is never saved:
 *
 *   phase 1: for each block J of key rows, load K[J, F_k] (F_k: the
 *     features T_k's monomials read) and V[J, T_k's columns below d];
 *     fused macs into H over T_k (U2 regenerated); delete K and V;
 *   phase 2: for each block I of query rows, load Q[I, F_k], the partial
 *     sums N[I, b] an earlier pass saved, and the complete normaliser
 *     N[I, d] when this pass finishes a column without finishing column d;
 *     fused macs into N over T_k (U1 regenerated); delete Q; then each
 *     column b of the pass that is now complete gives A[I, b] (saved), and
 *     each that is not is saved as a partial sum for a later pass;
 *   then T_k is deleted.
 *
 * A column's cells may be split between passes (its partial N travels
 * through slow memory) or repeated in several (its sums start again from
 * nothing, as rect-dup does with the ones column). The I/O does not depend
 * on the row blocks:
 *
 *   loads = sum_k n (2 |F_k| + v_k + pi_k + delta_k)
 *   saves = sum_k n (c_k + sigma_k + eps_k)
 *
 * with v_k the V columns of pass k, pi_k and sigma_k the partial N columns
 * it loads and saves, delta_k and eps_k the normaliser's load and save, c_k
 * the columns it finishes (A, or N without normalisation). The layouts:
 *
 *   rect-dup:  passes of all r monomials by w value columns, each pass
 *              rebuilding the ones column: n (2 d p + 2 d), p = ceil(d/w);
 *   rect-save: whole columns packed into passes as full as M allows, the
 *              ones column first; N[., d] saved once and reloaded;
 *   tail:      a first pass over the monomials of the first f features for
 *              the last c columns of B, then every remaining cell packed
 *              column by column into passes as full as M allows.
 *
 * The plan takes the layout and parameters with the least predicted I/O
 * among those that fit M (every w; every f and c up to four columns), or
 * the layout --layout forces. Row blocks are the largest that fit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/limits.h"
#include "pebblesim/engine.h"
#include "pebblesim/strategy.h"
#include "colpass.h"
#include "tiling.h"

/* The cells order[lo, hi) x {b} of one pass, in the rank order or the
 * tail's order (the head's monomials first, then the rest: each part
 * increasing, and the operations cut at the head's end, so that the
 * engine judges their macs a block at a time). */
struct cp_seg {
	uint64_t b, lo, hi;
	bool head_first;
};

struct cp_pass {
	uint64_t seg_first, seg_count;
	uint64_t cells;              /* |T_k| */
	uint64_t feat_first, feat_count; /* F_k in the schedule's feats */
	uint64_t ncols, v;           /* its columns, those below d */
	uint64_t pi, sigma;          /* partial N columns loaded, saved */
	uint64_t delta, eps;         /* the normaliser loaded, saved */
	uint64_t finished;           /* columns finished (A, or N) */
	bool any_a;                  /* computes some column of A */
	uint64_t key_rows, query_rows; /* the row blocks of phase 1, 2 */
	uint64_t peak;
};

/* Where each feature occurs in an order of the monomials: feature a at
 * the positions at[start[a] .. start[a + 1]), increasing. */
struct cp_occurrences {
	uint64_t *start;
	uint32_t *at; /* positions < r <= PS_MAX_MONOMIALS < 2^32 */
};

enum cp_layout { CP_RECT_DUP, CP_RECT_SAVE, CP_TAIL, CP_LAYOUTS };

static const char *const layout_names[CP_LAYOUTS] = {
	"rect-dup", "rect-save", "tail",
};

struct cp_schedule {
	enum cp_layout layout;
	uint64_t w, f, c;     /* rect-dup: w; tail: f and c */
	uint64_t *order;      /* the monomials in rank order */
	uint64_t *head_order; /* tail: the head's monomials, then the rest */
	/* while the search builds it, order and head_order are the plan's
	 * (struct cp_orders), not its own: the kept one takes copies */
	bool shared;
	uint64_t index_from; /* use_index's threshold, of the DAG */
	uint64_t head;        /* tail: how many the head has */
	const struct cp_occurrences *occ;      /* of order (not owned) */
	const struct cp_occurrences *head_occ; /* tail: of head_order (not owned) */
	struct cp_seg *segs;
	uint64_t seg_count, seg_cap;
	struct cp_pass *passes;
	uint64_t pass_count, pass_cap;
	uint64_t *feats;      /* each pass's F_k, pass after pass */
	uint64_t loads, saves, peak;
	struct ps_array_io by_array[PS_ARRAY_MAX]; /* loads, saves by kind */
};

/* The orders a plan's layouts share, each with its index: the rank
 * order, and the tail's order for the last f it was made for. */
struct cp_orders {
	uint64_t *identity; /* the rank order itself */
	struct cp_occurrences rank;
	bool has_tail;
	uint64_t f, head;
	uint64_t *tail;
	struct cp_occurrences tail_occ;
};

static void occurrences_free(struct cp_occurrences *occ)
{
	free(occ->start);
	free(occ->at);
	memset(occ, 0, sizeof(*occ));
}

static void orders_free(struct cp_orders *o)
{
	free(o->identity);
	occurrences_free(&o->rank);
	free(o->tail);
	occurrences_free(&o->tail_occ);
	memset(o, 0, sizeof(*o));
}

static void schedule_free(struct cp_schedule *s)
{
	if (!s->shared) {
		free(s->order);
		free(s->head_order);
	}
	free(s->segs);
	free(s->passes);
	free(s->feats);
	memset(s, 0, sizeof(*s));
}

/* Grows an array of *cap items of size to hold need, within the memory
 * limit. */
static int grow(void **items, uint64_t *cap, uint64_t need, size_t size,
		struct ps_error *err)
{
	uint64_t want = *cap ? *cap : 16;
	void *grown;

	if (need <= *cap)
		return PS_OK;
	while (want < need)
		want *= 2;
	if (ps_memory_fits(want * size, "colpass's passes", err))
		return PS_ENOMEM;
	grown = realloc(*items, want * size);
	if (!grown)
		return ps_error_set(err, PS_ENOMEM, "out of memory for colpass's passes");
	*items = grown;
	*cap = want;
	return PS_OK;
}

static int open_pass(struct cp_schedule *s, struct ps_error *err)
{
	struct cp_pass *p;

	if (grow((void **)&s->passes, &s->pass_cap, s->pass_count + 1,
		 sizeof(*s->passes), err))
		return PS_ENOMEM;
	p = &s->passes[s->pass_count++];
	memset(p, 0, sizeof(*p));
	p->seg_first = s->seg_count;
	return PS_OK;
}

static const uint64_t *seg_order(const struct cp_schedule *s,
				 const struct cp_seg *g)
{
	return g->head_first ? s->head_order : s->order;
}

static int add_seg(struct cp_schedule *s, uint64_t b, uint64_t lo, uint64_t hi,
		   bool head_first, struct ps_error *err)
{
	struct cp_pass *p = &s->passes[s->pass_count - 1];

	if (hi <= lo)
		return PS_OK;
	if (grow((void **)&s->segs, &s->seg_cap, s->seg_count + 1,
		 sizeof(*s->segs), err))
		return PS_ENOMEM;
	s->segs[s->seg_count++] = (struct cp_seg){ b, lo, hi, head_first };
	p->seg_count++;
	p->cells += hi - lo;
	return PS_OK;
}

/* Marks the features of order[lo, hi) in mark, *count the features
 * marked; stops once all of them are. */
static void mark_features(const struct ps_attention *att, const uint64_t *order,
			  uint64_t lo, uint64_t hi, uint8_t *mark,
			  uint64_t *count, uint64_t all)
{
	for (uint64_t x = lo; x < hi && *count < all; x++) {
		const uint32_t *sup = ps_monomial_support(&att->mono, order[x]);

		for (uint8_t q = 0; q < att->mono.support_size[order[x]]; q++)
			if (!mark[sup[q]]) {
				mark[sup[q]] = 1;
				++*count;
			}
	}
}

/*
 * Whether the head's positions from lo read no feature beyond those of
 * [lo, end): in the tail's order the head is the rank order of the
 * monomials of the first f features, (), (0), ..., (f-1) first, so a range
 * from lo <= 1 past position f has read every feature the head has.
 */
static bool head_read(const struct ps_attention *att, const struct cp_schedule *s,
		      bool head_first, uint64_t lo, uint64_t end)
{
	return head_first && att->g && lo <= 1 && end > s->f && end < s->head;
}

/* mark_features over positions [lo, hi) of the order head_first names,
 * the head's part past its features skipped. */
static void mark_range_scan(const struct ps_attention *att, const struct cp_schedule *s,
			    bool head_first, uint64_t lo, uint64_t hi, uint8_t *mark,
			    uint64_t *count, uint64_t all)
{
	const uint64_t *order = head_first ? s->head_order : s->order;

	if (head_read(att, s, head_first, lo, ps_min_u64(hi, s->f + 1))) {
		mark_features(att, order, lo, s->f + 1, mark, count, all);
		lo = ps_min_u64(hi, s->head);
	}
	mark_features(att, order, lo, hi, mark, count, all);
}

/* ---- the index of occurrences ----------------------------------------- */

static enum ps_colpass_features features_how = PS_COLPASS_FEATURES_AUTO;

void ps_colpass_set_features(enum ps_colpass_features how)
{
	features_how = how;
}

/* The index of order[0, r): each feature's positions, counted, then
 * filled in increasing order. */
static int occurrences_build(const struct ps_attention *att, const uint64_t *order,
			     struct cp_occurrences *occ, struct ps_error *err)
{
	uint64_t total = 0;

	memset(occ, 0, sizeof(*occ));
	for (uint64_t x = 0; x < att->r; x++)
		total += att->mono.support_size[order[x]];
	if (ps_memory_fits(total * sizeof(uint32_t), "colpass's index of features", err))
		return PS_ENOMEM;
	occ->start = calloc(att->d + 1, sizeof(uint64_t));
	occ->at = malloc((total ? total : 1) * sizeof(uint32_t));
	if (!occ->start || !occ->at) {
		occurrences_free(occ);
		return ps_error_set(err, PS_ENOMEM, "out of memory for colpass's index of features");
	}
	for (uint64_t x = 0; x < att->r; x++) {
		const uint32_t *sup = ps_monomial_support(&att->mono, order[x]);

		for (uint8_t q = 0; q < att->mono.support_size[order[x]]; q++)
			occ->start[sup[q] + 1]++;
	}
	for (uint64_t a = 0; a < att->d; a++)
		occ->start[a + 1] += occ->start[a];
	/* start[a] walks to start[a + 1] as a's positions go in, then
	 * moves back */
	for (uint64_t x = 0; x < att->r; x++) {
		const uint32_t *sup = ps_monomial_support(&att->mono, order[x]);

		for (uint8_t q = 0; q < att->mono.support_size[order[x]]; q++)
			occ->at[occ->start[sup[q]]++] = (uint32_t)x;
	}
	for (uint64_t a = att->d; a > 0; a--)
		occ->start[a] = occ->start[a - 1];
	occ->start[0] = 0;
	return PS_OK;
}

/*
 * The index of order[0, r), a stable split of the rank order (the head's
 * head monomials, then the rest), from the rank order's: each feature
 * occurs as often, and its rank positions, taken in turn, give its head
 * positions increasing, then its rest positions increasing (the split
 * keeps the order within each part). The same index as occurrences_build
 * would make, without reading the supports again.
 */
static int occurrences_split(const struct ps_attention *att, const struct cp_occurrences *rank,
			     const uint64_t *order, uint64_t head,
			     struct cp_occurrences *occ, struct ps_error *err)
{
	uint64_t total = rank->start[att->d];
	uint32_t *pos;

	memset(occ, 0, sizeof(*occ));
	if (ps_memory_fits(total * sizeof(uint32_t), "colpass's index of features", err))
		return PS_ENOMEM;
	occ->start = malloc((att->d + 1) * sizeof(uint64_t));
	occ->at = malloc((total ? total : 1) * sizeof(uint32_t));
	pos = malloc((att->r ? att->r : 1) * sizeof(uint32_t));
	if (!occ->start || !occ->at || !pos) {
		free(pos);
		occurrences_free(occ);
		return ps_error_set(err, PS_ENOMEM, "out of memory for colpass's index of features");
	}
	memcpy(occ->start, rank->start, (att->d + 1) * sizeof(uint64_t));
	for (uint64_t x = 0; x < att->r; x++)
		pos[order[x]] = (uint32_t)x;
	/* the head's positions from the front, the rest's from the back
	 * (decreasing), then turned round */
	for (uint64_t a = 0; a < att->d; a++) {
		uint64_t w = occ->start[a], back = occ->start[a + 1];

		for (uint64_t q = rank->start[a]; q < rank->start[a + 1]; q++) {
			uint32_t p = pos[rank->at[q]];

			if (p < head)
				occ->at[w++] = p;
			else
				occ->at[--back] = p;
		}
		for (uint64_t e = occ->start[a + 1]; back + 1 < e; back++, e--) {
			uint32_t t = occ->at[back];

			occ->at[back] = occ->at[e - 1];
			occ->at[e - 1] = t;
		}
	}
	free(pos);
	return PS_OK;
}

/* The first position >= lo where feature a occurs, UINT64_MAX if none. */
static uint64_t first_at(const struct cp_occurrences *occ, uint64_t a, uint64_t lo)
{
	uint64_t left = occ->start[a], right = occ->start[a + 1];

	while (left < right) {
		uint64_t mid = left + (right - left) / 2;

		if (occ->at[mid] < lo)
			left = mid + 1;
		else
			right = mid;
	}
	return left < occ->start[a + 1] ? occ->at[left] : UINT64_MAX;
}

/* Whether a range of length positions is cheaper to answer from the
 * index (a search for each of the d features) than by reading it. */
static bool use_index(const struct ps_attention *att, const struct cp_schedule *s,
		      uint64_t length)
{
	if (features_how != PS_COLPASS_FEATURES_AUTO)
		return features_how == PS_COLPASS_FEATURES_INDEX;
	return length / att->d >= s->index_from;
}

/* use_index's threshold: a search's steps over a monomial's features */
static uint64_t index_from(const struct ps_attention *att)
{
	uint64_t search = 1, per_monomial = att->g ? att->g : 1;

	for (uint64_t r = att->r; r > 1; r /= 2)
		search++;
	return search / per_monomial;
}

static const struct cp_occurrences *seg_occurrences(const struct cp_schedule *s,
						    bool head_first)
{
	return head_first ? s->head_occ : s->occ;
}

/* Marks the features of positions [lo, hi) of the order head_first
 * names in mark, *count the features marked. */
static void mark_range(const struct ps_attention *att, const struct cp_schedule *s,
		       bool head_first, uint64_t lo, uint64_t hi, uint8_t *mark,
		       uint64_t *count, uint64_t all)
{
	const struct cp_occurrences *occ = seg_occurrences(s, head_first);
	uint64_t searched = att->d; /* the features the index is asked for */

	if (hi <= lo || *count == all)
		return;
	/*
	 * A range of the rank order, or of the tail's head (the rank order of
	 * the monomials of the first f features): its features from its
	 * ends, in time O(g); the part of a range past the head as below.
	 */
	if (att->d <= 64 && features_how == PS_COLPASS_FEATURES_AUTO &&
	    (!head_first || lo < s->head)) {
		uint64_t end = head_first ? ps_min_u64(hi, s->head) : hi;
		uint64_t m = head_first ? ps_tuple_range_mask(&att->mono, s->head_order[lo],
							      s->head_order[end - 1], (uint32_t)s->f)
					: ps_rank_range_mask(&att->mono, lo, hi);

		for (uint64_t a = 0; a < att->d; a++)
			if (m >> a & 1 && !mark[a]) {
				mark[a] = 1;
				++*count;
			}
		if (end == hi || *count == all)
			return;
		lo = end;
	}
	if (!use_index(att, s, hi - lo)) {
		mark_range_scan(att, s, head_first, lo, hi, mark, count, all);
		return;
	}
	/* past the tail's head: the rank order's monomials between the ends
	 * that read a feature a >= f are the rest's between them, so those
	 * features come from the ends too; the index answers for the others */
	if (att->d <= 64 && features_how == PS_COLPASS_FEATURES_AUTO && head_first) {
		uint64_t m = ps_rank_range_mask(&att->mono, s->head_order[lo],
						s->head_order[hi - 1] + 1);

		for (uint64_t a = s->f; a < att->d; a++)
			if (m >> a & 1 && !mark[a]) {
				mark[a] = 1;
				++*count;
			}
		searched = s->f;
	}
	for (uint64_t a = 0; a < searched; a++)
		if (!mark[a] && first_at(occ, a, lo) < hi) {
			mark[a] = 1;
			++*count;
		}
}

/* The features any monomial reads: all d for g >= 1, none for g = 0. */
static uint64_t all_features(const struct ps_attention *att)
{
	return att->g ? att->d : 0;
}

/* ---- packing cells into passes as full as M allows ---------------------- */

/* The pass being filled, with blocks of one row: its peak is then
 * cells + |F| + columns + normaliser + the fused mac's two slots. */
struct cp_packer {
	const struct ps_attention *att;
	struct cp_schedule *s;
	uint64_t M, all;
	uint8_t *mark, *scratch; /* F of the open pass; a trial copy */
	uint64_t *first; /* where each feature new to the pass first occurs */
	uint64_t features, finished_below_d;
	bool open, finishes_d;
	bool head_first; /* the pieces index the tail's order */
};

static uint64_t packer_cost(const struct cp_packer *pk, uint64_t cells,
			    uint64_t features, uint64_t ncols,
			    uint64_t finished_below_d, bool finishes_d)
{
	bool delta = pk->att->normalize && finished_below_d && !finishes_d;

	return cells + features + ncols + delta + 2;
}

static int packer_open(struct cp_packer *pk, struct ps_error *err)
{
	memset(pk->mark, 0, pk->att->d);
	pk->features = 0;
	pk->finished_below_d = 0;
	pk->finishes_d = false;
	pk->open = true;
	return open_pass(pk->s, err);
}

/* packer_fit by reading the order's monomials one by one. */
static uint64_t packer_fit_scan(struct cp_packer *pk, uint64_t b, uint64_t lo,
				uint64_t hi)
{
	const struct ps_attention *att = pk->att;
	const struct cp_pass *p = &pk->s->passes[pk->s->pass_count - 1];
	const uint64_t *order = pk->head_first ? pk->s->head_order : pk->s->order;
	bool finishes = hi == att->r, is_d = att->normalize && b == att->d;
	uint64_t ncols = p->ncols + 1, features = pk->features, best = 0;

	memcpy(pk->scratch, pk->mark, att->d);
	/* the prefix that does not finish b: F grows with it, so the first
	 * prefix that does not fit ends the search */
	for (uint64_t x = 1; x < hi - lo; x++) {
		mark_features(att, order, lo + x - 1, lo + x, pk->scratch,
			      &features, pk->all);
		if (packer_cost(pk, p->cells + x, features, ncols,
				pk->finished_below_d, pk->finishes_d) > pk->M)
			return best;
		best = x;
		if (features == pk->all || head_read(att, pk->s, pk->head_first, lo, lo + x)) {
			/* no feature new up to the end (or the head's end): the
			 * cost grows by one a cell */
			uint64_t fixed = packer_cost(pk, p->cells, features, ncols,
						     pk->finished_below_d,
						     pk->finishes_d);
			uint64_t end = features == pk->all ? hi - lo - 1 :
				       ps_min_u64(pk->s->head - lo, hi - lo - 1);

			best = ps_min_u64(end, pk->M - fixed);
			if (best < hi - lo - 1 && (best < end || features == pk->all))
				return best;
			if (features == pk->all)
				break;
			x = best; /* on from the head's end */
		}
	}
	mark_range(att, pk->s, pk->head_first, lo, hi, pk->scratch, &features, pk->all);
	if (packer_cost(pk, p->cells + hi - lo, features, ncols,
			pk->finished_below_d + (finishes && !is_d && att->normalize),
			pk->finishes_d || (finishes && is_d)) <= pk->M)
		return hi - lo;
	return best;
}

/* Sorts the positions x[0, count), increasing: at most d of them, most
 * often a few, where qsort's calls through a comparison cost more than
 * the moves of an insertion sort. */
static void sort_positions(uint64_t *x, uint64_t count)
{
	for (uint64_t k = 1; k < count; k++) {
		uint64_t v = x[k], j = k;

		for (; j > 0 && x[j - 1] > v; j--)
			x[j] = x[j - 1];
		x[j] = v;
	}
}

/*
 * How many cells of order[lo, hi) x {b} fit in the open pass; all of
 * them finish column b. The prefix of x cells that does not finish b
 * costs fixed + x + (the new features first read before lo + x), which
 * grows with x: from the index, the new features sorted by where they
 * first occur give the longest prefix that fits at once.
 */
static uint64_t packer_fit(struct cp_packer *pk, uint64_t b, uint64_t lo,
			   uint64_t hi)
{
	const struct ps_attention *att = pk->att;
	const struct cp_pass *p = &pk->s->passes[pk->s->pass_count - 1];
	const struct cp_occurrences *occ = seg_occurrences(pk->s, pk->head_first);
	bool finishes = hi == att->r, is_d = att->normalize && b == att->d;
	uint64_t ncols = p->ncols + 1, fixed, budget, best, count = 0, k;

	if (!use_index(att, pk->s, ps_min_u64(hi - lo, pk->M)))
		return packer_fit_scan(pk, b, lo, hi);
	if (pk->features < pk->all)
		for (uint64_t a = 0; a < att->d; a++)
			if (!pk->mark[a] && (pk->first[count] = first_at(occ, a, lo)) < hi)
				count++;
	sort_positions(pk->first, count);
	fixed = packer_cost(pk, p->cells, pk->features, ncols,
			    pk->finished_below_d, pk->finishes_d);
	budget = fixed < pk->M ? pk->M - fixed : 0;
	/* the k-th new feature (from 0) counts from x = first[k] - lo + 1:
	 * the longest prefix holds k of them for the least k where
	 * budget - k falls short of that */
	for (k = 0; k < count && budget - k >= pk->first[k] - lo + 1; k++)
		;
	best = ps_min_u64(budget - k, hi - lo - 1);
	if (best < hi - lo - 1)
		return best;
	if (packer_cost(pk, p->cells + hi - lo, pk->features + count, ncols,
			pk->finished_below_d + (finishes && !is_d && att->normalize),
			pk->finishes_d || (finishes && is_d)) <= pk->M)
		return hi - lo;
	return best;
}

static int packer_take(struct cp_packer *pk, uint64_t b, uint64_t lo,
		       uint64_t hi, struct ps_error *err)
{
	const struct ps_attention *att = pk->att;
	struct cp_pass *p;
	int rc = add_seg(pk->s, b, lo, hi, pk->head_first, err);

	if (rc)
		return rc;
	p = &pk->s->passes[pk->s->pass_count - 1];
	p->ncols++;
	mark_range(att, pk->s, pk->head_first, lo, hi, pk->mark, &pk->features, pk->all);
	if (hi == att->r && att->normalize) {
		if (b == att->d)
			pk->finishes_d = true;
		else
			pk->finished_below_d++;
	}
	return PS_OK;
}

/*
 * Packs the cells order[lo, hi) x {b} into passes after the open one:
 * split between passes when split, else whole columns. 1 when a pass
 * cannot hold even one cell (or, without split, the piece).
 */
static int packer_piece(struct cp_packer *pk, uint64_t b, uint64_t lo,
			uint64_t hi, bool split, struct ps_error *err)
{
	int rc;

	while (lo < hi) {
		uint64_t fit = 0;

		if (pk->open)
			fit = packer_fit(pk, b, lo, hi);
		if (fit < hi - lo && (!split || !fit)) {
			bool empty = pk->open &&
				     pk->s->passes[pk->s->pass_count - 1].cells == 0;

			if (empty)
				return 1;
			if ((rc = packer_open(pk, err)))
				return rc;
			continue;
		}
		if ((rc = packer_take(pk, b, lo, lo + fit, err)))
			return rc;
		lo += fit;
	}
	return PS_OK;
}

/* ---- the layouts ------------------------------------------------------ */

/* The monomials in rank order into *order. */
static int rank_order(const struct ps_attention *att, uint64_t **order,
		      struct ps_error *err)
{
	char what[96];

	snprintf(what, sizeof(what), "colpass's order of r = %llu monomials",
		 (unsigned long long)att->r);
	if (ps_memory_fits(att->r * sizeof(uint64_t), what, err))
		return PS_ENOMEM;
	*order = malloc((att->r ? att->r : 1) * sizeof(uint64_t));
	if (!*order)
		return ps_error_set(err, PS_ENOMEM, "out of memory for colpass's order");
	for (uint64_t m = 0; m < att->r; m++)
		(*order)[m] = m;
	return PS_OK;
}

/* The schedule's rank order: the plan's, shared while it searches. */
static void order_identity(struct cp_schedule *s, struct cp_orders *orders)
{
	s->order = orders->identity;
	s->shared = true;
}

/* rect-dup: all monomials by w value columns a pass, the ones column in
 * every pass. */
static int layout_rect_dup(struct cp_schedule *s, const struct ps_attention *att,
			   uint64_t w, struct cp_orders *orders, struct ps_error *err)
{
	int rc = PS_OK;

	order_identity(s, orders);
	s->layout = CP_RECT_DUP;
	s->w = w;
	for (uint64_t k = 0; !rc && k < ps_block_count(att->d, w); k++) {
		if ((rc = open_pass(s, err)))
			break;
		for (uint64_t b = ps_block_lo(k, w); !rc && b < ps_block_hi(k, w, att->d); b++)
			rc = add_seg(s, b, 0, att->r, false, err);
		if (!rc && att->normalize)
			rc = add_seg(s, att->d, 0, att->r, false, err);
	}
	return rc;
}

static int packer_init(struct cp_packer *pk, const struct ps_attention *att,
		       struct cp_schedule *s, uint64_t M, struct ps_error *err)
{
	memset(pk, 0, sizeof(*pk));
	pk->att = att;
	pk->s = s;
	pk->M = M;
	pk->all = all_features(att);
	pk->mark = calloc(att->d ? att->d : 1, 1);
	pk->scratch = calloc(att->d ? att->d : 1, 1);
	pk->first = malloc((att->d ? att->d : 1) * sizeof(uint64_t));
	if (!pk->mark || !pk->scratch || !pk->first)
		return ps_error_set(err, PS_ENOMEM, "out of memory for colpass's packing");
	return PS_OK;
}

static void packer_free(struct cp_packer *pk)
{
	free(pk->mark);
	free(pk->scratch);
	free(pk->first);
}

/* rect-save: whole columns, the ones column first, as many a pass as M
 * allows. */
static int layout_rect_save(struct cp_schedule *s, const struct ps_attention *att,
			    uint64_t M, struct cp_orders *orders, struct ps_error *err)
{
	struct cp_packer pk;
	int rc;

	order_identity(s, orders);
	s->layout = CP_RECT_SAVE;
	if ((rc = packer_init(&pk, att, s, M, err)))
		return rc;
	if (att->normalize)
		rc = packer_piece(&pk, att->d, 0, att->r, false, err);
	for (uint64_t b = 0; !rc && b < att->d; b++)
		rc = packer_piece(&pk, b, 0, att->r, false, err);
	packer_free(&pk);
	return rc;
}

/* The column of B that is k-th in the tail's first pass: the ones column,
 * then the value columns from the last. */
static uint64_t tail_column(const struct ps_attention *att, uint64_t k)
{
	return att->nb - 1 - k;
}

/*
 * tail: the monomials of the first f features put first in the order; a
 * first pass over them for the last c columns of B, then every remaining
 * cell, those columns' rests first, packed column by column.
 */
static int tail_order(const struct ps_attention *att, uint64_t f,
		      struct cp_orders *o, struct ps_error *err)
{
	uint64_t head = 0, rest;

	if (o->has_tail && o->f == f)
		return PS_OK;
	free(o->tail);
	occurrences_free(&o->tail_occ);
	o->has_tail = false;
	o->tail = malloc((att->r ? att->r : 1) * sizeof(uint64_t));
	if (!o->tail)
		return ps_error_set(err, PS_ENOMEM, "out of memory for colpass's order");
	/* a stable split of the rank order: the head's monomials from the
	 * front, the rest's from the back, then turned round */
	rest = att->r;
	for (uint64_t m = 0; m < att->r; m++) {
		const uint32_t *sup = ps_monomial_support(&att->mono, m);
		uint8_t size = att->mono.support_size[m];

		if (!size || sup[size - 1] < f)
			o->tail[head++] = m;
		else
			o->tail[--rest] = m;
	}
	o->head = head;
	for (uint64_t lo = head, hi = att->r; lo + 1 < hi; lo++, hi--) {
		uint64_t m = o->tail[lo];

		o->tail[lo] = o->tail[hi - 1];
		o->tail[hi - 1] = m;
	}
	if (occurrences_split(att, &o->rank, o->tail, head, &o->tail_occ, err))
		return PS_ENOMEM;
	o->f = f;
	o->has_tail = true;
	return PS_OK;
}

static int layout_tail(struct cp_schedule *s, const struct ps_attention *att,
		       uint64_t M, uint64_t f, uint64_t c, struct cp_orders *orders,
		       struct ps_error *err)
{
	struct cp_packer pk;
	uint64_t head;
	int rc;

	order_identity(s, orders);
	s->layout = CP_TAIL;
	s->f = f;
	s->c = c;
	if ((rc = tail_order(att, f, orders, err)))
		return rc;
	s->head_order = orders->tail;
	head = s->head = orders->head;
	s->head_occ = &orders->tail_occ;
	if ((rc = packer_init(&pk, att, s, M, err)))
		return rc;
	pk.head_first = true;
	for (uint64_t k = 0; !rc && k < c; k++)
		rc = packer_piece(&pk, tail_column(att, k), 0, head, true, err);
	pk.open = false; /* the rest starts a pass of its own */
	for (uint64_t k = 0; !rc && k < c; k++)
		rc = packer_piece(&pk, tail_column(att, k), head, att->r, true, err);
	for (uint64_t b = 0; !rc && b + c < att->nb; b++)
		rc = packer_piece(&pk, b, 0, att->r, true, err);
	packer_free(&pk);
	return rc;
}

/* ---- the schedule's cost model and peak ------------------------------ */

/* The largest block of rows with cells + rows * per_row + extra <= M. */
static uint64_t rows_that_fit(uint64_t n, uint64_t M, uint64_t cells,
			      uint64_t per_row, uint64_t extra)
{
	if (cells + extra > M)
		return 0;
	if (!per_row)
		return n;
	return ps_min_u64(n, (M - cells - extra) / per_row);
}

/*
 * Fills each pass's features, columns, partial sums, normaliser, row
 * blocks and peak, and the loads and saves; 1 when a pass does not fit M
 * (or a column finishes before the normaliser can divide it).
 */
static int schedule_finish(struct cp_schedule *s, const struct ps_attention *att,
			   uint64_t M, struct ps_error *err)
{
	const uint64_t n = att->n, all = all_features(att);
	uint64_t *done = calloc(att->nb, sizeof(uint64_t)); /* cells summed */
	uint8_t *mark = calloc(att->d ? att->d : 1, 1);
	uint8_t *seen = calloc(att->nb, 1);
	uint64_t d_saved_at = UINT64_MAX;
	uint64_t feat_total = 0, feat_cap = 0;
	int rc = PS_OK;

	if (!done || !mark || !seen) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory for colpass's passes");
		goto out;
	}
	s->peak = 0;
	for (uint64_t k = 0; k < s->pass_count; k++) {
		struct cp_pass *p = &s->passes[k];
		const struct cp_seg *seg = s->segs + p->seg_first;
		uint64_t features = 0, a_rows;
		bool finishes_d = false;

		p->ncols = p->v = p->pi = p->sigma = p->delta = p->eps = 0;
		p->finished = 0;
		p->any_a = false;
		for (uint64_t q = 0; q < p->seg_count; q++) {
			const struct cp_seg *g = &seg[q];
			bool is_d = att->normalize && g->b == att->d;

			mark_range(att, s, g->head_first, g->lo, g->hi, mark, &features, all);
			if (seen[g->b]) { /* one segment per column and pass */
				rc = 1;
				goto out;
			}
			seen[g->b] = 1;
			p->ncols++;
			p->v += !is_d;
			if (done[g->b])
				p->pi++;
			done[g->b] += g->hi - g->lo;
			if (done[g->b] < att->r) {
				p->sigma++;
				continue;
			}
			done[g->b] = 0; /* finished: a later pass starts it again */
			if (is_d) {
				finishes_d = true;
			} else {
				p->finished++;
				p->any_a = att->normalize;
			}
		}
		for (uint64_t q = 0; q < p->seg_count; q++)
			seen[seg[q].b] = 0;
		p->feat_first = feat_total;
		p->feat_count = features;
		feat_total += features;
		if ((rc = grow((void **)&s->feats, &feat_cap, feat_total + 1,
			       sizeof(uint64_t), err)))
			goto out;
		features = 0;
		for (uint64_t a = 0; a < att->d; a++)
			if (mark[a]) {
				s->feats[p->feat_first + features++] = a;
				mark[a] = 0;
			}
		features = p->feat_count;
		if (p->any_a && !finishes_d) {
			/* the normaliser complete in an earlier pass */
			if (d_saved_at == UINT64_MAX || done[att->d]) {
				rc = 1;
				goto out;
			}
			p->delta = 1;
			s->passes[d_saved_at].eps = 1;
		}
		if (finishes_d)
			d_saved_at = k;
		/* phase 1: K and V rows beside the cells, U2 and a product;
		 * phase 2: Q and the N columns, U1 and a product, then A a
		 * column at a time once Q is gone */
		p->key_rows = rows_that_fit(n, M, p->cells, features + p->v, 2);
		a_rows = p->any_a ? rows_that_fit(n, M, p->cells,
						  p->ncols + p->delta + 1, 0) : n;
		p->query_rows = ps_min_u64(a_rows,
			rows_that_fit(n, M, p->cells,
				      features + p->ncols + p->delta, 2));
		if (!p->key_rows || !p->query_rows) {
			rc = 1;
			goto out;
		}
		p->peak = ps_max_u64(p->cells + p->key_rows * (features + p->v) + 2,
				     p->cells + p->query_rows * (p->ncols + p->delta) +
				     ps_max_u64(p->query_rows * features + 2,
						p->any_a ? p->query_rows : 0));
		s->peak = ps_max_u64(s->peak, p->peak);
	}
	/* every column finished */
	for (uint64_t b = 0; b < att->nb; b++)
		if (done[b]) {
			rc = 1;
			goto out;
		}
	/* by array: Q and K n |F_k|, V n v_k, the partial N and the
	 * normaliser; the finished columns are A (N without normalisation) */
	memset(s->by_array, 0, sizeof(s->by_array));
	for (uint64_t k = 0; k < s->pass_count; k++) {
		const struct cp_pass *p = &s->passes[k];

		s->by_array[PS_KIND_Q].loads += n * p->feat_count;
		s->by_array[PS_KIND_K].loads += n * p->feat_count;
		s->by_array[PS_KIND_V].loads += n * p->v;
		s->by_array[PS_KIND_N].loads += n * (p->pi + p->delta);
		s->by_array[PS_KIND_N].saves += n * (p->sigma + p->eps);
		s->by_array[att->normalize ? PS_KIND_A : PS_KIND_N].saves += n * p->finished;
	}
	ps_array_io_total(s->by_array, &s->loads, &s->saves);
out:
	free(done);
	free(mark);
	free(seen);
	return rc;
}

/*
 * --dry-run: the engine's records of the N sums that passes leave partial
 * and save for a later pass, at the most at once. Every row holds one
 * record per class of its partial columns: the columns of a pass that took
 * the same cells' monomials after the same earlier ones, aggregated
 * together. A class's set is a run of in-edges while its monomials are one
 * range of the rank order, else a bitset of r bits. Live classes are
 * counted after each pass and, while a pass runs, with the classes it
 * loads; the rows of the block in progress hold one more record each. On
 * the block path the rows of a class share its records: one for the first
 * block of a phase's loop, one for the others, taken at once, and one for
 * the last, shorter block.
 */
struct cp_class {
	uint64_t from, lo, hi; /* the class it extends (0: none), the range */
	bool head_first;
	bool run;              /* its monomials one range of the rank order */
	uint64_t rank_lo, rank_hi;
	uint64_t seen;         /* the last count that met it */
};

static uint64_t partial_state_bytes(const struct cp_schedule *s, const struct ps_attention *att,
				    bool element_only)
{
	uint64_t *cls = calloc(att->nb, sizeof(uint64_t)); /* 1 + class, 0: none */
	uint64_t *done = calloc(att->nb, sizeof(uint64_t));
	struct cp_class *c = NULL;
	uint64_t classes = 0, cap = 0, most = 0, most_bits = 0, block = 0;
	bool counted = false;

	if (!cls || !done)
		goto out;
	for (uint64_t k = 0; k < s->pass_count; k++) {
		const struct cp_pass *p = &s->passes[k];
		const struct cp_seg *seg = s->segs + p->seg_first;
		const uint64_t first = classes;

		block = ps_max_u64(block, p->query_rows);
		for (int when = 0; when < 2; when++) {
			/* live classes: before the pass ends (when 0, the
			 * classes it loads still held), then after it */
			const uint64_t stamp = 2 * k + (uint64_t)when + 1;
			uint64_t live = 0, bits = 0;

			for (uint64_t b = 0; b < att->nb; b++) {
				struct cp_class *held = cls[b] ? &c[cls[b] - 1] : NULL;

				if (!held || held->seen == stamp)
					continue;
				held->seen = stamp;
				live++;
				bits += !held->run;
			}
			if (live > most || (live == most && bits > most_bits)) {
				most = live;
				most_bits = bits;
			}
			if (when)
				break;
			for (uint64_t q = 0; q < p->seg_count; q++) {
				const struct cp_seg *g = &seg[q];
				const uint64_t from = done[g->b] ? cls[g->b] : 0;
				uint64_t at = first;

				while (at < classes && !(c[at].from == from && c[at].lo == g->lo &&
							 c[at].hi == g->hi &&
							 c[at].head_first == g->head_first))
					at++;
				if (at == classes) {
					struct cp_class *grown;

					if (classes == cap) {
						cap = cap ? 2 * cap : 16;
						if (!(grown = realloc(c, cap * sizeof(*c))))
							goto out;
						c = grown;
					}
					c[at] = (struct cp_class){ .from = from, .lo = g->lo, .hi = g->hi,
								   .head_first = g->head_first };
					/* the rank order's range [lo, hi) extends a run
					 * that ends at lo or starts at hi */
					c[at].run = !g->head_first &&
						    (!from || (c[from - 1].run &&
							       (c[from - 1].rank_hi == g->lo ||
								c[from - 1].rank_lo == g->hi)));
					c[at].rank_lo = from ? ps_min_u64(c[from - 1].rank_lo, g->lo) : g->lo;
					c[at].rank_hi = from ? ps_max_u64(c[from - 1].rank_hi, g->hi) : g->hi;
					classes++;
				}
				done[g->b] += g->hi - g->lo;
				cls[g->b] = done[g->b] < att->r ? at + 1 : 0;
				if (!cls[g->b])
					done[g->b] = 0;
			}
		}
	}
	counted = true;
out:
	free(cls);
	free(done);
	free(c);
	/* out of memory to count them: every sum of N with a bitset */
	if (!counted)
		return ps_engine_partial_bytes(att->n * att->nb, att->n * att->nb, att->r,
					       att->n * att->nb);
	if (!most)
		return 0;
	/* the block path: a phase's loop over its blocks of rows takes the
	 * first block, the others at once and the last, shorter one: three
	 * records a class */
	if (!element_only)
		return ps_engine_partial_bytes(3 * most, 3 * most_bits, att->r, att->n * att->nb);
	/* move by move, a record a row, and one for each row of the block in
	 * progress */
	return ps_engine_partial_bytes(att->n * most + block, att->n * most_bits, att->r,
				       att->n * att->nb);
}

/* ---- choosing the layout ---------------------------------------------- */

/* The least M each layout accepts: a pass of one cell (tail), of one whole
 * column beside the ones column (rect-dup), of one whole column (rect-save),
 * with blocks of one row, |F| features, the columns, the normaliser
 * loaded and the fused mac's two slots. */
static uint64_t layout_least_memory(const struct ps_attention *att,
				    enum cp_layout layout)
{
	uint64_t all = all_features(att), norm = att->normalize;

	switch (layout) {
	case CP_RECT_DUP:
		return (1 + norm) * att->r + all + 1 + norm + 2;
	case CP_RECT_SAVE:
		return att->r + all + 1 + norm + 2;
	default:
		return 1 + ps_min_u64(att->g, att->d) + 1 + norm + 2;
	}
}

static uint64_t colpass_min_memory(const struct ps_attention *att)
{
	uint64_t least = UINT64_MAX;

	for (int l = 0; l < CP_LAYOUTS; l++)
		least = ps_min_u64(least, layout_least_memory(att, (enum cp_layout)l));
	return least;
}

/* Builds one layout with its parameters for M: 0 and the schedule when it
 * fits, 1 when it does not, or an error. */
static int build(const struct ps_attention *att, struct cp_orders *orders,
		 uint64_t M, enum cp_layout layout, uint64_t p1, uint64_t p2,
		 struct cp_schedule *s, struct ps_error *err)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->occ = &orders->rank;
	s->index_from = index_from(att);
	if (layout == CP_RECT_DUP)
		rc = layout_rect_dup(s, att, p1, orders, err);
	else if (layout == CP_RECT_SAVE)
		rc = layout_rect_save(s, att, M, orders, err);
	else
		rc = layout_tail(s, att, M, p1, p2, orders, err);
	if (!rc)
		rc = schedule_finish(s, att, M, err);
	/* the indexes serve the planning only */
	s->occ = s->head_occ = NULL;
	if (rc)
		schedule_free(s);
	return rc;
}

/* Keeps s as *best when it costs less, with orders of its own (those it
 * shares change with the search); frees the other. */
static int keep_cheaper(const struct ps_attention *att, struct cp_schedule *best,
			bool *found, struct cp_schedule *s, struct ps_error *err)
{
	const size_t bytes = (att->r ? att->r : 1) * sizeof(uint64_t);
	uint64_t *order, *head_order = NULL;

	if (*found && s->loads + s->saves >= best->loads + best->saves) {
		schedule_free(s);
		return PS_OK;
	}
	order = malloc(bytes);
	if (s->head_order && (head_order = malloc(bytes)))
		memcpy(head_order, s->head_order, bytes);
	if (!order || (s->head_order && !head_order)) {
		free(order);
		free(head_order);
		schedule_free(s);
		return ps_error_set(err, PS_ENOMEM, "out of memory for colpass's order");
	}
	memcpy(order, s->order, bytes);
	s->order = order;
	s->head_order = head_order;
	s->shared = false;
	if (*found)
		schedule_free(best);
	*best = *s;
	*found = true;
	return PS_OK;
}

static int layout_from_name(const char *name, enum cp_layout *out,
			    struct ps_error *err)
{
	for (int l = 0; l < CP_LAYOUTS; l++)
		if (!strcmp(name, layout_names[l])) {
			*out = (enum cp_layout)l;
			return PS_OK;
		}
	return ps_error_set(err, PS_EINPUT,
			    "unknown layout '%s' for colpass: rect-dup, rect-save or tail",
			    name);
}

/* The tail's first pass takes at most this many columns of B. */
#define TAIL_COLUMNS_MAX 4
/* A plan makes at most about this many passes, and its search stops
 * trying the tail's f and c once its layouts have this many in all (and
 * samples them where even the fewest passes would exceed it). */
#define CP_PASSES_MAX (UINT64_C(1) << 20)
#define CP_SEARCH_PASSES (UINT64_C(1) << 16)

static int too_small(uint64_t M, enum cp_layout forced, uint64_t least,
		     struct ps_error *err)
{
	return ps_error_set(err, PS_EINPUT,
			    "M = %llu is too small for colpass%s%s: it needs M >= %llu",
			    (unsigned long long)M,
			    forced < CP_LAYOUTS ? " --layout " : "",
			    forced < CP_LAYOUTS ? layout_names[forced] : "",
			    (unsigned long long)least);
}

/* The schedule of least predicted I/O (of the forced layout, if any). */
static int choose(const struct ps_problem *pb, struct cp_schedule *best,
		  struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	enum cp_layout forced = CP_LAYOUTS;
	bool found = false;
	uint64_t least, fewest, stride, built = 0;
	struct cp_orders orders = { 0 };
	int rc;

	if (pb->layout && (rc = layout_from_name(pb->layout, &forced, err)))
		return rc;
	least = forced < CP_LAYOUTS ? layout_least_memory(att, forced)
				    : colpass_min_memory(att);
	if (pb->M < least)
		return too_small(pb->M, forced, least, err);
	/* a pass holds at most M - 3 cells (a column, the fused mac's slots) */
	if (ps_mul_u64(att->r, att->nb, &fewest))
		fewest = UINT64_MAX;
	fewest = ps_ceil_div(fewest, pb->M - 3);
	if (fewest > CP_PASSES_MAX)
		return ps_error_set(err, PS_EINPUT,
				    "colpass would make at least %llu passes at M = %llu, more than its %llu: raise M",
				    (unsigned long long)fewest, (unsigned long long)pb->M,
				    (unsigned long long)CP_PASSES_MAX);
	stride = ps_max_u64(1, fewest * (att->d + 1) * TAIL_COLUMNS_MAX / CP_SEARCH_PASSES);
	/* the rank order and where each feature occurs in it, for every
	 * layout */
	if ((rc = rank_order(att, &orders.identity, err)) ||
	    (rc = occurrences_build(att, orders.identity, &orders.rank, err))) {
		orders_free(&orders);
		return rc;
	}
	for (int l = 0; l < CP_LAYOUTS; l++) {
		uint64_t p1_lo = 0, p1_hi = 0, p2_hi = 0, tried = 0;

		if (forced < CP_LAYOUTS && (enum cp_layout)l != forced)
			continue;
		if (pb->M < layout_least_memory(att, (enum cp_layout)l))
			continue;
		if (l == CP_RECT_DUP) {
			p1_lo = 1;
			p1_hi = att->d;
		} else if (l == CP_TAIL) {
			p1_hi = att->d;
			p2_hi = ps_min_u64(att->nb, TAIL_COLUMNS_MAX);
		}
		for (uint64_t p1 = p1_lo; p1 <= p1_hi; p1++)
			for (uint64_t p2 = l == CP_TAIL ? 1 : 0; p2 <= p2_hi; p2++) {
				struct cp_schedule s;

				if (l == CP_TAIL && (tried++ % stride ||
						     (found && built > CP_SEARCH_PASSES)))
					continue;
				rc = build(att, &orders, pb->M, (enum cp_layout)l, p1, p2, &s, err);
				if (rc < 0) {
					if (found)
						schedule_free(best);
					orders_free(&orders);
					return rc;
				}
				if (!rc) {
					built += s.pass_count;
					rc = keep_cheaper(att, best, &found, &s, err);
				}
				if (rc < 0) {
					if (found)
						schedule_free(best);
					orders_free(&orders);
					return rc;
				}
			}
	}
	orders_free(&orders);
	if (!found)
		return too_small(pb->M, forced, least, err);
	return PS_OK;
}

/* ---- emission --------------------------------------------------------- */

/*
 * A block of rows of a phase is emitted into a body (struct cp_body, a
 * sink that keeps the operations), and the phase's blocks of the same
 * size are one loop of that body (struct ps_repeat), every operation's
 * rows moving by the block: the engine judges a pass's phase as a unit
 * (src/ops_block.c), and every other sink sees the same operations one by
 * one. The last block, when shorter, follows on its own.
 */
struct cp_body {
	struct ps_sink sink;
	struct ps_op *ops;
	uint64_t (*step)[3];
	size_t len, cap;
};

static int body_emit(struct ps_sink *sink, const struct ps_op *op, struct ps_error *err)
{
	struct cp_body *b = (struct cp_body *)sink;

	if (b->len == b->cap)
		return ps_error_set(err, PS_ENOMEM, "colpass: a block of rows has more operations than its body holds");
	b->ops[b->len++] = *op;
	return PS_OK;
}

struct cp_emitter {
	const struct cp_schedule *s;
	const struct ps_attention *att;
	struct ps_sink *sink; /* the operations go here: the run's sink or a body */
	struct ps_error *err;
	uint64_t *cols[4];    /* the V, loaded, finished and partial columns */
	bool finishes_d;
};

/* Part 0 or 1 of a segment's positions [lo, hi): in the tail's order
 * before and after the head's end, each an increasing list; false when
 * empty. */
static bool monomial_part(const struct cp_schedule *s, const struct cp_seg *g,
			  int part, uint64_t *lo, uint64_t *hi)
{
	uint64_t cut = g->head_first ? ps_min_u64(ps_max_u64(g->lo, s->head), g->hi)
				     : g->hi;

	*lo = part ? cut : g->lo;
	*hi = part ? g->hi : cut;
	return *lo < *hi;
}

/* The pass's segments merged into rectangles: consecutive columns over
 * the same monomials. Calls mac for each, into H over rows x monomials x
 * columns, or N. */
static int emit_macs(const struct cp_emitter *e, const struct cp_pass *p,
		     enum ps_kind into, struct ps_coordset rows)
{
	const struct cp_seg *seg = e->s->segs + p->seg_first;

	for (uint64_t q = 0; q < p->seg_count;) {
		uint64_t end = q + 1;
		int rc;

		while (end < p->seg_count && seg[end].lo == seg[q].lo &&
		       seg[end].hi == seg[q].hi && seg[end].b == seg[end - 1].b + 1 &&
		       seg[end].head_first == seg[q].head_first)
			end++;
		for (int part = 0; part < 2; part++) {
			uint64_t lo, hi;

			if (!monomial_part(e->s, &seg[q], part, &lo, &hi))
				continue;
			rc = ps_emit_mac(e->sink, into, true, rows,
					 ps_list(seg_order(e->s, &seg[q]) + lo, hi - lo),
					 ps_range(seg[q].b, seg[end - 1].b + 1), e->err);
			if (rc)
				return rc;
		}
		q = end;
	}
	return PS_OK;
}

/* The columns of pass p that pick(e, p, segment, done before) selects. */
static size_t pass_columns(const struct cp_emitter *e, const struct cp_pass *p,
			   const uint64_t *done, int which, uint64_t *cols)
{
	const struct ps_attention *att = e->att;
	const struct cp_seg *seg = e->s->segs + p->seg_first;
	size_t count = 0;

	for (uint64_t q = 0; q < p->seg_count; q++) {
		bool is_d = att->normalize && seg[q].b == att->d;
		uint64_t after = done[seg[q].b] + seg[q].hi - seg[q].lo;

		if ((which == 'V' && !is_d) ||
		    (which == 'L' && done[seg[q].b]) ||
		    (which == 'P' && after < att->r) ||
		    (which == 'F' && after == att->r && !is_d)) {
			/* increasing, for the block path: insertion */
			size_t at = count++;

			for (; at > 0 && cols[at - 1] > seg[q].b; at--)
				cols[at] = cols[at - 1];
			cols[at] = seg[q].b;
		}
	}
	return count;
}

#define EMIT(code, kind, c0, c1) \
	if ((rc = ps_emit(e->sink, (code), (kind), (c0), (c1), e->err))) \
		return rc

/* Phase 1 over the key rows js: H over the pass's cells. */
static int emit_key_rows(const struct cp_emitter *e, const struct cp_pass *p,
			 const uint64_t *done, struct ps_coordset js)
{
	const struct ps_coordset feats = ps_list(e->s->feats + p->feat_first, p->feat_count);
	const size_t v = pass_columns(e, p, done, 'V', e->cols[0]);
	const struct ps_coordset vs = ps_list(e->cols[0], v);
	int rc;

	if (p->feat_count)
		EMIT(PS_OP_LOAD, PS_KIND_K, js, feats);
	if (v)
		EMIT(PS_OP_LOAD, PS_KIND_V, js, vs);
	if ((rc = emit_macs(e, p, PS_KIND_H, js)))
		return rc;
	if (p->feat_count)
		EMIT(PS_OP_DELETE, PS_KIND_K, js, feats);
	if (v)
		EMIT(PS_OP_DELETE, PS_KIND_V, js, vs);
	return PS_OK;
}

/* Phase 2 over the query rows is: N over the pass's cells, then the
 * columns it finishes and the partial sums it saves. */
static int emit_query_rows(const struct cp_emitter *e, const struct cp_pass *p,
			   const uint64_t *done, struct ps_coordset is)
{
	const struct ps_attention *att = e->att;
	const struct ps_coordset feats = ps_list(e->s->feats + p->feat_first, p->feat_count);
	size_t count;
	int rc;

	if (p->feat_count)
		EMIT(PS_OP_LOAD, PS_KIND_Q, is, feats);
	if ((count = pass_columns(e, p, done, 'L', e->cols[1])))
		EMIT(PS_OP_LOAD, PS_KIND_N, is, ps_list(e->cols[1], count));
	if (p->delta)
		EMIT(PS_OP_LOAD, PS_KIND_N, is, ps_one(att->d));
	if ((rc = emit_macs(e, p, PS_KIND_N, is)))
		return rc;
	if (p->feat_count)
		EMIT(PS_OP_DELETE, PS_KIND_Q, is, feats);
	count = pass_columns(e, p, done, 'F', e->cols[2]);
	for (size_t q = 0; q < count; q++)
		if ((rc = ps_emit_finish_n(e->sink, att, is, e->cols[2][q], e->cols[2][q] + 1,
					   e->err)))
			return rc;
	if ((count = pass_columns(e, p, done, 'P', e->cols[3]))) {
		EMIT(PS_OP_SAVE, PS_KIND_N, is, ps_list(e->cols[3], count));
		EMIT(PS_OP_DELETE, PS_KIND_N, is, ps_list(e->cols[3], count));
	}
	if (e->finishes_d && p->eps)
		EMIT(PS_OP_SAVE, PS_KIND_N, is, ps_one(att->d));
	if (e->finishes_d || p->delta)
		EMIT(PS_OP_DELETE, PS_KIND_N, is, ps_one(att->d));
	return PS_OK;
}

#undef EMIT

typedef int (*cp_rows_fn)(const struct cp_emitter *e, const struct cp_pass *p,
			  const uint64_t *done, struct ps_coordset rows);

/* A phase over every block of rows: the blocks of `rows` rows one loop of
 * the body of the first, the last block after it when shorter. */
static int emit_phase(const struct cp_emitter *e, const struct cp_pass *p, const uint64_t *done,
		      uint64_t rows, cp_rows_fn fn, struct cp_body *body)
{
	const uint64_t n = e->att->n, full = n / rows;
	struct cp_emitter into = *e;
	struct ps_repeat r;
	int rc;

	if (full) {
		body->len = 0;
		into.sink = &body->sink;
		if ((rc = fn(&into, p, done, ps_range(0, rows))))
			return rc;
		for (size_t k = 0; k < body->len; k++) {
			body->step[k][0] = rows;
			body->step[k][1] = body->step[k][2] = 0;
		}
		r.body = body->ops;
		r.step = (const uint64_t (*)[3])body->step;
		r.len = body->len;
		r.count = full;
		if ((rc = ps_sink_repeat(e->sink, &r, e->err)))
			return rc;
	}
	return full * rows < n ? fn(e, p, done, ps_range(full * rows, n)) : PS_OK;
}

static int emit_pass(struct cp_emitter *e, const struct cp_pass *p, uint64_t *done,
		     struct cp_body *body)
{
	const struct ps_attention *att = e->att;
	const struct cp_seg *seg = e->s->segs + p->seg_first;
	int rc;

	e->finishes_d = false;
	for (uint64_t q = 0; q < p->seg_count; q++)
		if (att->normalize && seg[q].b == att->d &&
		    done[att->d] + seg[q].hi - seg[q].lo == att->r)
			e->finishes_d = true;
	/* phase 1: H over the pass's cells, key rows a block at a time;
	 * phase 2: N over them, query rows a block at a time */
	if ((rc = emit_phase(e, p, done, p->key_rows, emit_key_rows, body)) ||
	    (rc = emit_phase(e, p, done, p->query_rows, emit_query_rows, body)))
		return rc;
	/* H is never saved: the pass's cells go */
	for (uint64_t q = 0; q < p->seg_count; q++) {
		for (int part = 0; part < 2; part++) {
			uint64_t lo, hi;

			if (!monomial_part(e->s, &seg[q], part, &lo, &hi))
				continue;
			rc = ps_emit(e->sink, PS_OP_DELETE, PS_KIND_H,
				     ps_list(seg_order(e->s, &seg[q]) + lo, hi - lo),
				     ps_one(seg[q].b), e->err);
			if (rc)
				return rc;
		}
		done[seg[q].b] += seg[q].hi - seg[q].lo;
		if (done[seg[q].b] == att->r)
			done[seg[q].b] = 0;
	}
	return PS_OK;
}

static int schedule_run(const struct cp_schedule *s, const struct ps_attention *att,
			struct ps_sink *sink, struct ps_error *err)
{
	struct cp_emitter e = { s, att, sink, err, { NULL }, false };
	/* a block's operations: three loads, two macs a column, Q's delete,
	 * four a finished column, and the partial sums' and the
	 * normaliser's saves and deletes */
	struct cp_body body = { .sink = { body_emit }, .cap = 6 * att->nb + 16 };
	uint64_t *done = calloc(att->nb, sizeof(uint64_t));
	uint64_t *cols = malloc(4 * att->nb * sizeof(uint64_t));
	int rc = PS_OK;

	body.ops = malloc(body.cap * sizeof(*body.ops));
	body.step = malloc(body.cap * sizeof(*body.step));
	if (!done || !cols || !body.ops || !body.step)
		rc = ps_error_set(err, PS_ENOMEM, "out of memory for colpass's passes");
	for (int k = 0; k < 4 && cols; k++)
		e.cols[k] = cols + (size_t)k * att->nb;
	for (uint64_t k = 0; !rc && k < s->pass_count; k++)
		rc = emit_pass(&e, &s->passes[k], done, &body);
	free(done);
	free(cols);
	free(body.ops);
	free(body.step);
	return rc;
}

/* ---- the strategy ------------------------------------------------------ */

static int colpass_plan(const struct ps_problem *pb, struct ps_plan *plan,
			struct ps_error *err)
{
	const struct ps_attention *att = pb->att;
	struct cp_schedule s;
	char sizes[96] = "";
	size_t used = 0;
	int rc = choose(pb, &s, err);

	if (rc)
		return rc;
	for (uint64_t k = 0; k < s.pass_count && k < 4 && used < sizeof(sizes); k++)
		used += (size_t)snprintf(sizes + used, sizeof(sizes) - used, "%s%llu",
					 k ? ", " : "",
					 (unsigned long long)s.passes[k].cells);
	if (s.pass_count > 4 && used < sizeof(sizes))
		snprintf(sizes + used, sizeof(sizes) - used, ", ...");
	if (s.layout == CP_RECT_DUP)
		snprintf(plan->summary, sizeof(plan->summary),
			 "rect-dup, w = %llu value columns a pass: %llu pass%s of %s cells; %llu I/O per row",
			 (unsigned long long)s.w, (unsigned long long)s.pass_count,
			 s.pass_count == 1 ? "" : "es", sizes, (unsigned long long)((s.loads + s.saves) / att->n));
	else if (s.layout == CP_RECT_SAVE)
		snprintf(plan->summary, sizeof(plan->summary),
			 "rect-save, whole columns: %llu pass%s of %s cells; %llu I/O per row",
			 (unsigned long long)s.pass_count, s.pass_count == 1 ? "" : "es", sizes,
			 (unsigned long long)((s.loads + s.saves) / att->n));
	else
		snprintf(plan->summary, sizeof(plan->summary),
			 "tail, first pass f = %llu features by c = %llu column%s: %llu pass%s of %s cells; %llu I/O per row",
			 (unsigned long long)s.f, (unsigned long long)s.c,
			 s.c == 1 ? "" : "s", (unsigned long long)s.pass_count,
			 s.pass_count == 1 ? "" : "es", sizes,
			 (unsigned long long)((s.loads + s.saves) / att->n));
	ps_plan_predicted(plan, s.by_array);
	plan->peak_red = s.peak;
	plan->bounded = false; /* its cost model, not a theorem's bound */
	plan->variant = layout_names[s.layout];
	if (ps_add_u64(ps_tiling_state_bytes(pb, false), partial_state_bytes(&s, att, pb->element_only),
		       &plan->state_bytes))
		plan->state_bytes = UINT64_MAX;
	schedule_free(&s);
	return PS_OK;
}

static int colpass_run(const struct ps_problem *pb, struct ps_sink *sink,
		       struct ps_error *err)
{
	struct cp_schedule s;
	int rc = choose(pb, &s, err);

	if (rc)
		return rc;
	rc = schedule_run(&s, pb->att, sink, err);
	schedule_free(&s);
	return rc;
}

const struct ps_strategy ps_strategy_colpass = {
	.version = PS_STRATEGY_VERSION,
	.name = "colpass",
	.section = "beyond the paper: passes over H's cells, H never saved (docs/STRATEGIES.md)",
	.summary = "H's cells in passes kept in fast memory, K, V then Q streamed; layouts rect-dup, rect-save, tail; its own cost model",
	.min_memory = colpass_min_memory,
	.plan = colpass_plan,
	.run = colpass_run,
	.flags = PS_STRATEGY_BEYOND,
	.takes = PS_TAKES_LAYOUT,
};
