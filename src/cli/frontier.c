/*
 * pebblesim frontier: the least I/O at a given accuracy, approximate
 * attention against FlashAttention (docs/EXACT.md "The frontier"). The
 * degree g is the least whose a-priori bound 2 eta / (1 + sqrt(1 -
 * eta^2)) R (docs/VALUES.md; R <= B) is within epsilon, or with --bound measured the least
 * whose epsilon measured on inputs (files or random) is; approximate
 * attention's I/O is best's at that g, flash's at the same n, d and M,
 * both by their cost models over a range of n; the intervals of n where
 * best moves less: every n compared from the range's start while the
 * plans are cheap, above that the grid's points with each end found by
 * bisection, and where the size allows each end confirmed by simulated
 * runs at n* and its outer neighbour. With --decode P (MODEL.md section
 * 8) the DAGs are the decode DAGs, flash-decode stands for flash, and
 * epsilon is the per-step error of the decode recurrence
 * (ps_values_measure_decode, docs/VALUES.md "The per-step epsilon").
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/limits.h"
#include "pebblesim/npy.h"
#include "pebblesim/polynomial.h"
#include "pebblesim/plot.h"
#include "pebblesim/strategy.h"
#include "pebblesim/sweep.h"
#include "pebblesim/values.h"

/* The largest n, and n x r, at which an end is confirmed by simulation:
 * a run of seconds, not hours. */
#define FRONTIER_SIMULATE_MAX_N 16384
#define FRONTIER_SIMULATE_MAX_NR (UINT64_C(1) << 26)

const struct cli_option frontier_options[] = {
	{ OPT_N, 'n', NULL, CLI_SIZE, offsetof(struct cli_args, n), 1, CLI_RANGE, "N",
	  "rows: a range LO:HI, LO:HI:xK or LO:HI:+K (k, M, G, 2^k)" },
	CLI_OPT_D,
	CLI_OPT_M("fast memory, words"),
	CLI_OPT_CAUSAL,
	{ OPT_DECODE, 0, "decode", CLI_SIZE, offsetof(struct cli_args, decode), 1, CLI_ATTENTION_ONLY, "P",
	  "token-by-token decoding after a prompt of P rows (MODEL.md\nsection 8, with --causal; every n of the range above P):\n"
	  "best among the decode strategies against flash-decode,\nI/O also per generated token; epsilon is per step" },
	{ OPT_EPSILON, 0, "epsilon", CLI_REAL, offsetof(struct cli_args, epsilon), 0, 0, "E",
	  "the accuracy: max |A - softmax(Q K^T / sqrt d) V| <= E;\n--decode: at every generated row t, |A[t] - softmax of\nthe same q_t over the same keys and values j <= t|" },
	{ OPT_BOUND, 0, "bound", CLI_STRING, offsetof(struct cli_args, bound), 0, 0, "HOW",
	  "a-priori (the default): the least g whose bound\n2 eta / (1 + sqrt(1 - eta^2)) B on the interval is\nwithin E;\n"
	  "measured: the least g whose epsilon measured on the\ninputs (--q, --k, --v, or random ones) is within E" },
	{ OPT_ENTRY_BOUND, 0, "entry-bound", CLI_REAL, offsetof(struct cli_args, entry_bound), 0, 0, "B",
	  "entries of Q, K and V in [-B, B] (default 1); measured:\nrandom inputs uniform in [-B, B]" },
	{ OPT_Q, 0, "q", CLI_STRING, offsetof(struct cli_args, q_file), 0, 0, "Q.npy",
	  "--bound measured: Q (rows x d) from a .npy file;\n--q, --k and --v go together, not with --decode" },
	{ OPT_K, 0, "k", CLI_STRING, offsetof(struct cli_args, k_file), 0, 0, "K.npy",
	  "--bound measured: K from a .npy file" },
	{ OPT_V, 0, "v", CLI_STRING, offsetof(struct cli_args, v_file), 0, 0, "V.npy",
	  "--bound measured: V from a .npy file" },
	{ OPT_SEED, 0, "seed", CLI_COUNT, offsetof(struct cli_args, seed), 0, 0, "S",
	  "--bound measured: random inputs from seed S (default 1),\nmin(the largest n, 4096) rows; --decode: a prompt of\nmin(P, 4096) rows, min(HI - P, 1024) generated rows" },
	CLI_OPT_POLYNOMIAL_WHEN(0),
	CLI_OPT_INTERVAL_WHEN(0),
	CLI_OPT_CSV("write best's and flash's rows as sweep's CSV"),
	CLI_OPT_PLOT("draw I/O against n into FILE.svg, FILE.png or FILE.pdf\n(gnuplot), best's points marked with the chosen g"),
	CLI_OPT_PLOT_SCRIPT,
	CLI_OPT_JSON("print {\"points\":[...],\"intervals\":[...],...} on one line"),
	CLI_OPT_PROGRESS("per point and per plan of the\nbisection"),
	CLI_OPT_HELP,
	CLI_OPT_END,
};

/* The I/O of label at n, by the engine (simulated) or the cost model. */
static bool io_at(const struct ps_sweep_spec *spec, uint64_t n, const char *label,
		  bool simulate, uint64_t *io)
{
	struct ps_sweep_spec s = *spec;
	struct ps_sweep_row row;

	s.predict = !simulate;
	ps_sweep_point(&s, n, label, &row);
	*io = row.io;
	return row.ran && (!simulate || (row.simulated && row.valid));
}

/* An end n* confirmed: best below flash at n* and not below at its
 * outer neighbour, both simulated; false where too large or not so. */
static bool confirm(const struct ps_sweep_spec *spec, uint64_t end, uint64_t outer,
		    uint64_t io[4])
{
	uint64_t r = 1, top = end > outer ? end : outer;

	/* r = C(d + g, g), built so that it stops growing past the limit */
	for (uint64_t l = 1; l <= spec->g && r <= FRONTIER_SIMULATE_MAX_NR; l++)
		r = r * (spec->d + l) / l;
	if (top > FRONTIER_SIMULATE_MAX_N || r > FRONTIER_SIMULATE_MAX_NR / top)
		return false;
	return io_at(spec, end, "best", true, &io[0]) && io_at(spec, end, spec->labels[1], true, &io[1]) &&
	       io_at(spec, outer, "best", true, &io[2]) && io_at(spec, outer, spec->labels[1], true, &io[3]) &&
	       io[0] < io[1] && io[2] >= io[3];
}

/*
 * The ends of the intervals by bisection, planning only what can win.
 * best is below flash at n exactly when one of its candidates is, so a
 * step plans candidates until one is below (cheapest at the last point
 * first) and all of them only where none is. While an interval's first
 * end is sought between lo (not below) and hi (below), a candidate whose
 * I/O at lo is already flash's at hi or more is set aside: the cost
 * models grow with n, so it cannot be below flash in between. That is
 * an assumption about the models, so the end found is checked with every
 * candidate at its outer neighbour, and sought again with all of them
 * where the check fails. Every plan is made once per n (the cache).
 */
#define FLASH SIZE_MAX

struct planned {
	uint64_t n;
	size_t candidate; /* an index into the list, or FLASH */
	bool accepts;     /* the candidate accepts n (else io is 0) */
	uint64_t io;
};

struct planner {
	const struct ps_sweep_spec *spec;
	struct ps_candidate candidates[PS_BEST_MAX_CANDIDATES];
	size_t count;
	struct planned *cache;
	size_t used, cap;
	uint64_t plans;   /* plans made, flash's included */
	/* the DAG of the last n planned: the candidates at one n share it */
	struct ps_attention att;
	bool has_att;
};

static void planner_free(struct planner *pl)
{
	if (pl->has_att)
		ps_attention_free(&pl->att);
	free(pl->cache);
	memset(pl, 0, sizeof(*pl));
}

/* The DAG at n, built once for the candidates planned there; NULL where
 * it cannot be built. */
static const struct ps_attention *planner_dag(struct planner *pl, uint64_t n)
{
	struct ps_attention_params params = {
		.n = n, .d = pl->spec->d, .g = pl->spec->g, .normalize = pl->spec->normalize,
		.causal = pl->spec->causal, .decode = pl->spec->decode,
	};
	struct ps_error ignored;

	if (pl->has_att && pl->att.n == n)
		return &pl->att;
	if (pl->has_att)
		ps_attention_free(&pl->att);
	pl->has_att = !ps_attention_init(&pl->att, &params, &ignored);
	return pl->has_att ? &pl->att : NULL;
}

static const struct planned *cached(const struct planner *pl, uint64_t n, size_t candidate)
{
	for (size_t k = pl->used; k-- > 0;)
		if (pl->cache[k].n == n && pl->cache[k].candidate == candidate)
			return &pl->cache[k];
	return NULL;
}

/* A candidate's (or flash's) predicted I/O at n, planned now: false
 * where it does not accept n or memory runs out. */
static bool plan_once(struct planner *pl, uint64_t n, size_t candidate, uint64_t *io)
{
	struct planned made = { n, candidate, false, 0 };

	if (candidate == FLASH) {
		made.accepts = io_at(pl->spec, n, pl->spec->labels[1], false, &made.io);
	} else {
		const struct ps_candidate *c = &pl->candidates[candidate];
		const struct ps_attention *att = planner_dag(pl, n);
		struct ps_problem pb;
		struct ps_plan plan;
		struct ps_error ignored;

		if (att) {
			memset(&pb, 0, sizeof(pb));
			pb.att = att;
			pb.M = pl->spec->M;
			pb.sizes = c->sizes;
			made.accepts = pb.M >= ps_strategy_min_memory(c->s, att) &&
				       !ps_strategy_plan(c->s, &pb, &plan, &ignored) && plan.predicted;
			made.io = made.accepts ? plan.loads + plan.saves : 0;
		}
	}
	pl->plans++;
	if (pl->spec->progress) {
		char name[32];

		snprintf(name, sizeof(name), "%s", pl->spec->labels[1]);
		if (candidate != FLASH)
			ps_candidate_name(&pl->candidates[candidate], name, sizeof(name));
		fprintf(pl->spec->progress, "%sfrontier: planned %s at n = %llu (%llu plans)%s",
			ps_progress_lines(pl->spec->progress) ? "pebblesim: " : "\r",
			name, (unsigned long long)n, (unsigned long long)pl->plans,
			ps_progress_lines(pl->spec->progress) ? "\n" : "   ");
		fflush(pl->spec->progress);
	}
	*io = made.io;
	return made.accepts;
}

/* plan_once, each (n, candidate) planned once (the cache). */
static bool plan_at(struct planner *pl, uint64_t n, size_t candidate, uint64_t *io)
{
	const struct planned *hit = cached(pl, n, candidate);
	struct planned made = { n, candidate, false, 0 };

	if (hit) {
		*io = hit->io;
		return hit->accepts;
	}
	made.accepts = plan_once(pl, n, candidate, &made.io);
	if (pl->used == pl->cap) {
		size_t cap = pl->cap * 2 + 64;
		struct planned *grown = realloc(pl->cache, cap * sizeof(*grown));

		if (!grown) { /* out of memory: planned again when asked again */
			*io = made.io;
			return made.accepts;
		}
		pl->cache = grown;
		pl->cap = cap;
	}
	pl->cache[pl->used++] = made;
	*io = made.io;
	return made.accepts;
}

/* Whether best is below flash at n among the kept candidates, tried
 * cheapest at ref first. */
static bool below_at(struct planner *pl, uint64_t n, const bool *kept, uint64_t ref)
{
	size_t order[PS_BEST_MAX_CANDIDATES];
	uint64_t flash, io;

	if (!plan_at(pl, n, FLASH, &flash))
		return false;
	for (size_t k = 0; k < pl->count; k++)
		order[k] = k;
	/* insertion sort by the I/O at ref where known: a handful of names */
	for (size_t k = 1; k < pl->count; k++) {
		for (size_t t = k; t > 0; t--) {
			const struct planned *a = cached(pl, ref, order[t - 1]);
			const struct planned *b = cached(pl, ref, order[t]);
			uint64_t ka = a && a->accepts ? a->io : UINT64_MAX;
			uint64_t kb = b && b->accepts ? b->io : UINT64_MAX;
			size_t swap;

			if (ka <= kb)
				break;
			swap = order[t - 1];
			order[t - 1] = order[t];
			order[t] = swap;
		}
	}
	for (size_t k = 0; k < pl->count; k++)
		if (kept[order[k]] && plan_at(pl, n, order[k], &io) && io < flash)
			return true;
	return false;
}

/* Sets aside the candidates whose I/O at lo is flash's at hi or more. */
static void set_aside(struct planner *pl, uint64_t lo, uint64_t hi, bool *kept)
{
	uint64_t flash;

	if (!plan_at(pl, hi, FLASH, &flash))
		return;
	for (size_t k = 0; k < pl->count; k++) {
		const struct planned *at = cached(pl, lo, k);

		if (kept[k] && at && at->accepts && at->io >= flash)
			kept[k] = false;
	}
}

/* The least x in (lo, hi] that compares as hi does (best below flash at
 * exactly one of lo and hi), by bisection; prune: set candidates aside
 * (hi below, lo not). */
static uint64_t flip_at(struct planner *pl, uint64_t lo, uint64_t hi, bool below_hi, bool prune)
{
	bool kept[PS_BEST_MAX_CANDIDATES];

	for (size_t k = 0; k < pl->count; k++)
		kept[k] = true;
	while (hi - lo > 1) {
		const uint64_t mid = lo + (hi - lo) / 2;

		if (below_at(pl, mid, kept, below_hi ? hi : lo) == below_hi)
			hi = mid;
		else
			lo = mid;
		if (prune)
			set_aside(pl, lo, hi, kept);
	}
	return hi;
}

/* Where best starts to be below flash between lo (not below) and hi
 * (below): n*, with best not below at n* - 1 over every candidate. */
static uint64_t first_below(struct planner *pl, uint64_t lo, uint64_t hi)
{
	bool all[PS_BEST_MAX_CANDIDATES];
	uint64_t end = flip_at(pl, lo, hi, true, true);

	for (size_t k = 0; k < pl->count; k++)
		all[k] = true;
	if (below_at(pl, end - 1, all, end - 1))
		end = flip_at(pl, lo, hi, true, false);
	return end;
}

/*
 * Every n of the range is compared where the plans are cheap: from the
 * range's start while the values scanned times r stay within this (at d =
 * 4, g = 6, r = 210, about 20,000 values of n; at r = 735,471, g = 8 and
 * d = 16, five). Above, the grid's points and the bisection between
 * them are all that is compared.
 */
#define FRONTIER_SCAN_WORK (UINT64_C(1) << 22)
/* and at most this many values, whatever r (the samples' memory, and
 * best's candidates planned at each) */
#define FRONTIER_SCAN_MAX_N (UINT64_C(1) << 15)

/* One comparison: best below flash at n or not (not also where either is
 * not planned). */
struct sample {
	uint64_t n;
	bool below;
};

/* Which n were compared. */
struct examined {
	bool scanned;       /* every n in [lo, every_to] compared */
	uint64_t every_to;
	size_t grid_above;  /* the grid's points above every_to */
	size_t bisected;    /* values of n above every_to planned by bisection */
	bool complete;      /* every n of the range compared */
};

/* Whether best is below flash at n, every candidate planned once
 * (not cached: a scan asks each n once); *first is tried first and
 * becomes the one below. */
static bool scan_below(struct planner *pl, uint64_t n, size_t *first)
{
	uint64_t flash, io;

	if (!plan_once(pl, n, FLASH, &flash))
		return false;
	if (*first < pl->count && plan_once(pl, n, *first, &io) && io < flash)
		return true;
	for (size_t k = 0; k < pl->count; k++)
		if (k != *first && plan_once(pl, n, k, &io) && io < flash) {
			*first = k;
			return true;
		}
	return false;
}

/* The last n of the scan from lo: lo - 1 where not even lo fits. */
static uint64_t scan_end(const struct ps_sweep_spec *spec)
{
	uint64_t r = 1, values;

	for (uint64_t l = 1; l <= spec->g && r <= FRONTIER_SCAN_WORK; l++)
		r = r * (spec->d + l) / l;
	values = FRONTIER_SCAN_WORK / r;
	values = values < FRONTIER_SCAN_MAX_N ? values : FRONTIER_SCAN_MAX_N;
	if (!values)
		return spec->range.lo - 1;
	return spec->range.hi - spec->range.lo < values ? spec->range.hi : spec->range.lo + values - 1;
}

/* The comparisons, increasing in n: every n of the scan, then best's and
 * flash's rows (rows sorted, best's before flash's) above it. */
static struct sample *samples_make(struct planner *pl, const struct ps_sweep_row *rows,
				   size_t count, struct examined *ex, size_t *made)
{
	const struct ps_sweep_spec *spec = pl->spec;
	const uint64_t lo = spec->range.lo, to = scan_end(spec);
	const size_t scanned = to >= lo ? (size_t)(to - lo + 1) : 0;
	struct sample *out = malloc((scanned + count / 2 + 1) * sizeof(*out));
	size_t used = 0, first = SIZE_MAX;

	if (!out)
		return NULL;
	memset(ex, 0, sizeof(*ex));
	ex->scanned = scanned > 0;
	ex->every_to = to;
	for (uint64_t n = lo; scanned && n <= to; n++)
		out[used++] = (struct sample){ n, scan_below(pl, n, &first) };
	for (size_t k = 0; k + 1 < count; k += 2) {
		const struct ps_sweep_row *best = &rows[k], *flash = &rows[k + 1];

		if (scanned && best->n <= to)
			continue;
		out[used++] = (struct sample){ best->n, best->ran && flash->ran && best->io < flash->io };
		ex->grid_above++;
	}
	ex->complete = scanned && to >= spec->range.hi;
	*made = used;
	return out;
}

static int by_n(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* How many values of n above every_to the bisection planned. */
static size_t bisected(const struct planner *pl, uint64_t above)
{
	uint64_t *n = malloc((pl->used ? pl->used : 1) * sizeof(*n));
	size_t count = 0, distinct = 0;

	if (!n)
		return 0;
	for (size_t k = 0; k < pl->used; k++)
		if (pl->cache[k].n > above)
			n[count++] = pl->cache[k].n;
	qsort(n, count, sizeof(*n), by_n);
	for (size_t k = 0; k < count; k++)
		distinct += !k || n[k] != n[k - 1];
	free(n);
	return distinct;
}

/*
 * The intervals of n where best is below flash: the maximal runs of the
 * comparisons, each end between two compared values more than 1 apart
 * found by bisection (below at the end, not below at its outer
 * neighbour). Between the grid's points above the scan there may be
 * sign changes that neither the grid nor the bisection straddles: ex
 * says which n were compared.
 */
static void intervals_make(struct planner *pl, const struct sample *sm, size_t count,
			   struct ps_crossover *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->label, sizeof(c->label), "best");
	snprintf(c->baseline, sizeof(c->baseline), "%s", pl->spec->labels[1]);
	c->compared = count > 0;
	c->refined = true;
	for (size_t k = 0; k < count; k++) {
		struct ps_sweep_interval *iv;
		size_t end = k;

		if (!sm[k].below)
			continue;
		while (end + 1 < count && sm[end + 1].below)
			end++;
		if (c->interval_count++ >= PS_SWEEP_MAX_INTERVALS) {
			k = end;
			continue;
		}
		iv = &c->intervals[c->interval_count - 1];
		iv->from = sm[k].n;
		iv->to = sm[end].n;
		iv->from_edge = k == 0;
		iv->to_edge = end + 1 == count;
		if (k > 0 && sm[k - 1].n + 1 < iv->from)
			iv->from = first_below(pl, sm[k - 1].n, iv->from);
		if (end + 1 < count && sm[end + 1].n > iv->to + 1)
			iv->to = flip_at(pl, iv->to, sm[end + 1].n, false, false) - 1;
		k = end;
	}
	if (c->interval_count && c->interval_count <= PS_SWEEP_MAX_INTERVALS &&
	    c->intervals[c->interval_count - 1].to_edge) {
		c->found = true;
		c->at = c->intervals[c->interval_count - 1].from;
	}
}

/* The intervals where best moves less than flash over spec's range, and
 * which n were compared; PS_ENOMEM where memory runs out. */
static int compare(const struct ps_sweep_spec *spec, const struct ps_sweep_row *rows, size_t count,
		   struct ps_crossover *c, struct examined *ex)
{
	struct planner pl;
	struct sample *sm;
	size_t used;

	memset(&pl, 0, sizeof(pl));
	pl.spec = spec;
	pl.count = ps_best_candidate_list(pl.candidates, PS_BEST_MAX_CANDIDATES);
	sm = samples_make(&pl, rows, count, ex, &used);
	if (!sm) {
		planner_free(&pl);
		return PS_ENOMEM;
	}
	intervals_make(&pl, sm, used, c);
	ex->bisected = bisected(&pl, ex->scanned ? ex->every_to : 0);
	if (pl.plans && spec->progress && !ps_progress_lines(spec->progress))
		fprintf(spec->progress, "\r%*s\r", 72, "");
	free(sm);
	planner_free(&pl);
	return PS_OK;
}

struct frontier_end {
	uint64_t n, outer;
	bool confirmed;
	uint64_t io[4]; /* best and flash at n, then at outer */
};

/* How g was chosen, and what it gives. */
struct choice {
	struct ps_polynomial p;  /* at the chosen g, or the last tried */
	bool has_g;
	bool measured;           /* --bound measured (else a-priori) */
	double beta;             /* the interval */
	double entry_bound;      /* B, or the largest |entry| of the files */
	double max_v;            /* max |V|: B, or the inputs' */
	double half_range;       /* R of the bound: B, or the inputs' */
	double epsilon;          /* measured at the chosen g (or the last) */
	bool files;              /* measured on --q, --k, --v */
	uint64_t sample_n, seed; /* the inputs' rows; random: their seed */
	bool causal;             /* --causal: epsilon of causal attention */
	/* --decode P: epsilon per step of the decode recurrence; measured on
	 * a prompt of sample_n rows and tokens generated rows, with drift,
	 * max |A_poly-run[t] - A_softmax-run[t]| (reported, not used for g) */
	uint64_t decode, tokens;
	double drift;
};

/* The least g <= the kind's largest whose bound is within epsilon: 0 and
 * ch->p, or -1 when none is (p then the last tried). */
static int least_degree(enum ps_polynomial_kind kind, double epsilon, struct choice *ch,
			struct ps_error *err)
{
	const unsigned top = kind == PS_POLYNOMIAL_TAYLOR ? PS_POLYNOMIAL_MAX_G : PS_POLYNOMIAL_MAX_FIT;

	for (unsigned g = 0; g <= top; g++) {
		if (ps_polynomial_make(&ch->p, kind, g, ch->beta, err))
			return PS_EINPUT;
		if (ps_polynomial_bound(ch->p.eta, ch->half_range) <= epsilon)
			return 0;
	}
	return -1;
}

/* The rows of the random inputs of --bound measured: the range's largest
 * n up to this, so that each degree's direct evaluation (n^2 d) takes
 * well under a second; decoding, the prompt's rows up to this and the
 * generated rows up to the next (each degree's two recurrences, about
 * 2 T (P + T / 2) d). */
#define FRONTIER_MEASURE_MAX_N 4096
#define FRONTIER_MEASURE_MAX_TOKENS 1024

/* The largest |entry| of count doubles. */
static double largest(const double *x, uint64_t count)
{
	double top = 0.0;

	for (uint64_t k = 0; k < count; k++)
		top = fabs(x[k]) > top ? fabs(x[k]) : top;
	return top;
}

/*
 * --bound measured: the least g whose epsilon = max |A - softmax(Q K^T /
 * sqrt d) V|, measured on the inputs by the direct evaluation, is within
 * epsilon. The inputs: the files (their n rows), or ch->sample_n random
 * rows. 0 and ch->p, -1 when no g up to the kind's largest meets it, or
 * PS_EINPUT / PS_ENOMEM with err.
 */
static int least_measured_degree(enum ps_polynomial_kind kind, uint64_t d, double epsilon,
				 const struct ps_values_inputs *in, struct choice *ch,
				 struct ps_error *err)
{
	const unsigned top = kind == PS_POLYNOMIAL_TAYLOR ? PS_POLYNOMIAL_MAX_G : PS_POLYNOMIAL_MAX_FIT;
	/* g = 0: the DAG only holds the inputs; each degree's P is made here */
	struct ps_attention_params params = { .n = ch->sample_n + ch->tokens, .d = d, .g = 0,
					      .normalize = true, .causal = ch->causal,
					      .decode = ch->decode ? ch->sample_n : 0 };
	struct ps_attention att;
	struct ps_values vals;
	int rc;

	if (in->q) {
		double *q;
		uint64_t rows, cols;

		if ((rc = ps_npy_load(in->q, 0, d, &q, &rows, &cols, err)))
			return rc;
		free(q);
		params.n = ch->sample_n = rows;
	}
	if ((rc = ps_attention_init(&att, &params, err)))
		return rc;
	/* the inputs, the stand-in (decoding: 3 d^2) and the direct
	 * evaluation's rows, within the memory limit; 3 d^2 wraps past 2^26 */
	if ((rc = ps_memory_fits(d > (UINT64_C(1) << 26) ? UINT64_MAX : ps_values_bytes(&att, 0),
				 "the inputs and the direct evaluation of --bound measured", err))) {
		ps_attention_free(&att);
		return rc;
	}
	if ((rc = ps_values_init(&vals, &att, in, err))) {
		ps_attention_free(&att);
		return rc;
	}
	ch->beta = vals.poly.beta;
	/* decoding: the generated rows' V lie in (-B, B), so R = B covers
	 * them; else the inputs' own */
	if (!ch->decode) {
		ch->max_v = largest(vals.v, att.n * d);
		ch->half_range = ps_half_range(vals.v, att.n, d);
	}
	if (in->q) {
		double q = largest(vals.q, att.n * d), k = largest(vals.k, att.n * d);

		ch->entry_bound = q > k ? q : k;
	}
	rc = -1;
	for (unsigned g = 0; g <= top && rc == -1; g++) {
		if (ps_polynomial_make(&ch->p, kind, g, ch->beta, err) ||
		    (ch->decode ? ps_values_measure_decode(&vals, &ch->p, &ch->epsilon, &ch->drift, err)
				: ps_values_measure(&vals, &ch->p, &ch->epsilon, err)))
			rc = PS_EINPUT;
		else if (ch->epsilon <= epsilon)
			rc = 0;
	}
	ps_values_free(&vals);
	ps_attention_free(&att);
	return rc;
}

static json_t *frontier_json(const struct choice *ch, double epsilon,
			     const struct ps_sweep_row *rows, size_t count,
			     const struct ps_crossover *c, const struct examined *ex, uint64_t lo,
			     const struct frontier_end *ends, size_t end_count)
{
	json_t *points = json_array(), *intervals = json_array(), *confirmations = json_array();
	json_t *coef = json_array(), *root;
	const char *by = ch->measured ? "measured" : "a-priori";
	const double bound = ps_polynomial_bound(ch->p.eta, ch->half_range);

	for (unsigned l = 0; ch->has_g && l <= ch->p.g; l++)
		json_array_append_new(coef, json_real(ch->p.c[l]));
	for (size_t k = 0; k + 1 < count; k += 2) {
		const struct ps_sweep_row *best = &rows[k], *flash = &rows[k + 1];
		json_t *point = json_pack("{s:I, s:I, s:s, s:s, s:o, s:o}", "n",
					  (json_int_t)best->n, "g", (json_int_t)ch->p.g,
					  "g_by", by, "strategy", best->strategy,
					  "io", best->ran ? json_integer((json_int_t)best->io) : json_null(),
					  "flash_io", flash->ran ? json_integer((json_int_t)flash->io)
								 : json_null());

		if (ch->decode) { /* per generated token, n - P of them */
			const double tokens = (double)(best->n - ch->decode);

			json_object_set_new(point, "tokens", json_integer((json_int_t)(best->n - ch->decode)));
			json_object_set_new(point, "io_per_token", best->ran ? json_real((double)best->io / tokens)
									      : json_null());
			json_object_set_new(point, "flash_io_per_token",
					    flash->ran ? json_real((double)flash->io / tokens) : json_null());
		}
		json_array_append_new(points, point);
	}
	for (size_t t = 0; c && t < c->interval_count && t < PS_SWEEP_MAX_INTERVALS; t++)
		json_array_append_new(intervals, json_pack("{s:I, s:I, s:b, s:b, s:I}", "from",
							   (json_int_t)c->intervals[t].from, "to",
							   (json_int_t)c->intervals[t].to, "from_edge",
							   c->intervals[t].from_edge, "to_edge",
							   c->intervals[t].to_edge, "g", (json_int_t)ch->p.g));
	for (size_t t = 0; t < end_count; t++)
		json_array_append_new(confirmations,
				      json_pack("{s:I, s:I, s:b, s:[I,I], s:[I,I]}", "n", (json_int_t)ends[t].n,
						"outer", (json_int_t)ends[t].outer, "simulated",
						ends[t].confirmed, "at_n", (json_int_t)ends[t].io[0],
						(json_int_t)ends[t].io[1], "at_outer",
						(json_int_t)ends[t].io[2], (json_int_t)ends[t].io[3]));
	root = json_pack("{s:f, s:s, s:{s:s, s:o, s:f, s:o, s:o, s:o, s:f, s:f}, s:o, s:o, s:o, s:b}",
			 "epsilon", epsilon, "bound", by, "polynomial", "name",
			 ps_polynomial_name(ch->p.made), "g",
			 ch->has_g ? json_integer((json_int_t)ch->p.g) : json_null(),
			 "interval", ch->beta, "coefficients", coef, "eta",
			 isfinite(ch->p.eta) ? json_real(ch->p.eta) : json_null(), "bound",
			 isfinite(bound) ? json_real(bound) : json_null(), "max_v", ch->max_v,
			 "v_half_range", ch->half_range,
			 "points", points, "intervals", intervals, "confirmations", confirmations,
			 "refined", c ? c->refined : false);
	json_object_set_new(root, "examined", !c ? json_null() :
			    json_pack("{s:o, s:I, s:I, s:b}", "every_n", ex->scanned ?
				      json_pack("{s:I, s:I}", "from", (json_int_t)lo, "to",
						(json_int_t)ex->every_to) : json_null(),
				      "grid_points_above", (json_int_t)ex->grid_above,
				      "bisection_points", (json_int_t)ex->bisected,
				      "complete", ex->complete));
	if (ch->measured) {
		json_t *measured = json_pack("{s:o, s:s, s:I, s:o}", "epsilon",
					     isfinite(ch->epsilon) ? json_real(ch->epsilon) : json_null(),
					     "inputs", ch->files ? "files" : "random", "n",
					     (json_int_t)(ch->sample_n + ch->tokens), "seed",
					     ch->files ? json_null() : json_integer((json_int_t)ch->seed));

		if (ch->decode) /* the rows measured on, and the drift beside */
			json_object_update_new(measured, json_pack("{s:I, s:I, s:o}", "prompt_rows",
								   (json_int_t)ch->sample_n, "tokens",
								   (json_int_t)ch->tokens, "drift",
								   isfinite(ch->drift) ? json_real(ch->drift)
										       : json_null()));
		json_object_set_new(root, "measured", measured);
	}
	if (ch->causal) /* MODEL.md section 7: only then, as every report */
		json_object_set_new(root, "causal", json_true());
	if (ch->decode) /* section 8: the prompt, and exact decoding's strategy */
		json_object_update_new(root, json_pack("{s:I, s:s, s:s}", "decode", (json_int_t)ch->decode,
						       "baseline", "flash-decode", "epsilon_per",
						       "step"));
	return root;
}

/* Whether best was planned at some point (rows: best's, then flash's). */
static bool any_best_ran(const struct ps_sweep_row *rows, size_t count)
{
	for (size_t k = 0; k < count; k += 2)
		if (rows[k].ran)
			return true;
	return false;
}

/* Which n were compared: every n of the range, or every n up to some,
 * and above it the grid's points and the bisection's. */
static void examined_print(FILE *out, const struct examined *ex, uint64_t lo, uint64_t hi)
{
	if (ex->complete) {
		fprintf(out, "  examined             every n in [%llu, %llu], both cost models at each: every sign change is found\n",
			(unsigned long long)lo, (unsigned long long)hi);
		return;
	}
	fputs("  examined             ", out);
	if (ex->scanned)
		fprintf(out, "every n in [%llu, %llu]; above it ", (unsigned long long)lo,
			(unsigned long long)ex->every_to);
	fprintf(out, "%zu grid points and %zu more values of n by bisection: an even number of sign changes between neighbouring values that compare alike is not seen\n",
		ex->grid_above, ex->bisected);
}

/* "minimax, g = 3, bound <= 0.001" or "..., measured epsilon 4.1e-04 <= 0.001 on these inputs";
 * an --interval narrower than B^2 sqrt d bounds only the inputs whose
 * scores stay within it, and the sentence says so. */
static void accuracy_print(FILE *out, const struct choice *ch, double epsilon, uint64_t d)
{
	if (ch->measured)
		fprintf(out, "%s, g = %u, measured %sepsilon %.2g <= %g on these inputs",
			ps_polynomial_name(ch->p.made), ch->p.g, ch->decode ? "per-step " : "", ch->epsilon,
			epsilon);
	else
		fprintf(out, "%s, g = %u, bound <= %g%s%s", ps_polynomial_name(ch->p.made), ch->p.g, epsilon,
			ch->decode ? " at every step" : "",
			ch->beta < ps_polynomial_interval(ch->entry_bound, d) ?
				" for inputs whose scores stay within the interval" : "");
}

/* Decoding's points: I/O in total and per generated token, n - P. */
static void points_print_decode(FILE *out, const struct ps_sweep_row *rows, size_t count, unsigned g)
{
	fprintf(out, "%12s %8s %3s  %-16s %14s %12s %14s %12s %10s\n", "n", "tokens", "g", "best", "I/O",
		"per token", "flash-decode", "per token", "best/exact");
	for (size_t k = 0; k + 1 < count; k += 2) {
		const struct ps_sweep_row *best = &rows[k], *flash = &rows[k + 1];
		const double tokens = (double)(best->n - best->decode);

		if (!best->ran || !flash->ran) {
			fprintf(out, "%12llu %8llu %3u  not run: %s\n", (unsigned long long)best->n,
				(unsigned long long)(best->n - best->decode), g, best->ran ? flash->why : best->why);
			continue;
		}
		fprintf(out, "%12llu %8llu %3u  %-16s %14llu %12.2f %14llu %12.2f %10.4g\n",
			(unsigned long long)best->n, (unsigned long long)(best->n - best->decode), g,
			best->strategy, (unsigned long long)best->io, (double)best->io / tokens,
			(unsigned long long)flash->io, (double)flash->io / tokens,
			(double)best->io / (double)flash->io);
	}
}

/* The options of the inputs of --bound measured, refused without it. */
static int check_inputs(const struct cli_command *cmd, const struct cli_args *a, bool measured,
			FILE *errout)
{
	static const struct {
		enum cli_option_id id;
		const char *name;
	} only_measured[] = { { OPT_Q, "--q" }, { OPT_K, "--k" }, { OPT_V, "--v" }, { OPT_SEED, "--seed" } };

	if (a->given[OPT_DECODE] && !a->causal) /* as run says it */
		return cli_usage_error(cmd, errout, "decoding (--decode) is causal: it needs --causal");

	for (size_t k = 0; k < sizeof(only_measured) / sizeof(only_measured[0]); k++)
		if (!measured && a->given[only_measured[k].id])
			return cli_usage_error(cmd, errout, "option '%s' gives the inputs of --bound measured, not of the a-priori bound",
					       only_measured[k].name);
	if ((a->q_file || a->k_file || a->v_file) && !(a->q_file && a->k_file && a->v_file))
		return cli_usage_error(cmd, errout, "--q, --k and --v go together: the three inputs from files, or none");
	if (a->q_file && a->given[OPT_DECODE])
		return cli_usage_error(cmd, errout, "--q, --k and --v are not taken with --decode: its prompt is random (--seed, --entry-bound)");
	if (a->q_file && (a->given[OPT_SEED] || a->given[OPT_ENTRY_BOUND]))
		return cli_usage_error(cmd, errout, "option '%s' is for random inputs, not with --q, --k and --v",
				       a->given[OPT_SEED] ? "--seed" : "--entry-bound");
	return 0;
}

int cmd_frontier(const struct cli_command *cmd, const struct cli_args *a,
		 FILE *out, FILE *errout)
{
	const double B = a->given[OPT_ENTRY_BOUND] ? a->entry_bound : 1.0;
	struct ps_sweep_spec spec;
	struct ps_sweep_row *rows = NULL;
	struct ps_crossover cross[2];
	struct frontier_end ends[2 * PS_SWEEP_MAX_INTERVALS];
	struct choice ch;
	struct examined ex = { 0 };
	struct ps_error err;
	enum ps_polynomial_kind kind = PS_POLYNOMIAL_TAYLOR;
	const struct ps_crossover *c = NULL;
	const char *approximate = a->decode ? "approximate decoding" : "approximate attention";
	const char *exact = a->decode ? "exact decoding (flash-decode)" : "FlashAttention";
	size_t count = 0, end_count = 0;
	char plot_title[96];
	int rc;

	if ((rc = cli_require(cmd, a, errout, "frontier needs -n, -d, -M and --epsilon",
			      (const enum cli_option_id[]){ OPT_N, OPT_D, OPT_M, OPT_EPSILON }, 4)))
		return rc;
	if (a->bound && strcmp(a->bound, "a-priori") && strcmp(a->bound, "measured"))
		return cli_usage_error(cmd, errout, "unknown --bound '%s': a-priori or measured", a->bound);
	memset(&ch, 0, sizeof(ch));
	ch.measured = a->bound && !strcmp(a->bound, "measured");
	if ((rc = check_inputs(cmd, a, ch.measured, errout)))
		return rc;
	if (a->polynomial) {
		int k = ps_polynomial_parse(a->polynomial);

		if (k < 0)
			return cli_usage_error(cmd, errout, "unknown polynomial '%s': taylor, chebyshev or minimax",
					       a->polynomial);
		kind = (enum ps_polynomial_kind)k;
	}
	memset(&spec, 0, sizeof(spec));
	spec.d = a->d;
	spec.M = a->M;
	spec.normalize = true;
	spec.causal = a->causal;
	spec.decode = a->decode;
	spec.predict = true;
	spec.jobs = 1;
	spec.progress = cli_progress_stream(a, errout);
	spec.labels[0] = "best";
	/* exact attention's strategy of the same DAG (MODEL.md section 8) */
	spec.labels[1] = a->decode ? "flash-decode" : "flash";
	spec.label_count = 2;
	ps_error_clear(&err);
	if (strchr(a->text[OPT_N], ':')) {
		if (ps_sweep_range_parse('n', a->text[OPT_N], &spec.range, &err))
			return cli_usage_error(cmd, errout, "%s", err.msg);
	} else {
		spec.range = (struct ps_sweep_range){ 'n', a->n, a->n, 1, false };
	}
	if (a->decode && spec.range.lo <= a->decode)
		return cli_usage_error(cmd, errout, "frontier --decode %llu compares n above the prompt (rows P..n-1 are generated): -n starts at %llu",
				       (unsigned long long)a->decode, (unsigned long long)spec.range.lo);
	ch.causal = a->causal;
	ch.decode = a->decode;
	ch.entry_bound = ch.max_v = ch.half_range = B;
	ch.beta = a->given[OPT_INTERVAL] ? a->interval : ps_polynomial_interval(B, a->d);
	if (ch.measured) {
		struct ps_values_inputs in = {
			.q = a->q_file, .k = a->k_file, .v = a->v_file,
			.seed = a->given[OPT_SEED] ? a->seed : PS_VALUES_DEFAULT_SEED,
			.entry_bound = B, .polynomial = kind,
			.interval = a->given[OPT_INTERVAL] ? a->interval : 0.0,
		};

		ch.files = a->q_file != NULL;
		ch.seed = in.seed;
		ch.sample_n = spec.range.hi < FRONTIER_MEASURE_MAX_N ? spec.range.hi : FRONTIER_MEASURE_MAX_N;
		if (ch.decode) { /* the prompt's rows, and the rows generated */
			ch.sample_n = ch.decode < FRONTIER_MEASURE_MAX_N ? ch.decode : FRONTIER_MEASURE_MAX_N;
			ch.tokens = spec.range.hi - ch.decode;
			ch.tokens = ch.tokens < FRONTIER_MEASURE_MAX_TOKENS ? ch.tokens : FRONTIER_MEASURE_MAX_TOKENS;
		}
		rc = least_measured_degree(kind, a->d, a->epsilon, &in, &ch, &err);
	} else {
		rc = least_degree(kind, a->epsilon, &ch, &err);
	}
	if (rc == PS_ENOMEM) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	if (rc > 0 || rc == PS_EINPUT)
		return cli_usage_error(cmd, errout, "%s", err.msg);
	ch.has_g = rc == 0;
	if (ch.has_g) {
		spec.g = ch.p.g;
		if (ps_sweep_run(&spec, &rows, &count, &err)) {
			fprintf(errout, "pebblesim: %s\n", err.msg);
			return PS_EXIT_USAGE;
		}
		ps_sweep_sort(rows, count);
		if (compare(&spec, rows, count, &cross[0], &ex)) {
			fprintf(errout, "pebblesim: out of memory for the comparisons of frontier\n");
			free(rows);
			return PS_EXIT_USAGE;
		}
		c = &cross[0];
		for (size_t t = 0; t < c->interval_count && t < PS_SWEEP_MAX_INTERVALS; t++) {
			const struct ps_sweep_interval *iv = &c->intervals[t];

			if (!iv->from_edge)
				ends[end_count++] = (struct frontier_end){ iv->from, iv->from - 1, false, { 0 } };
			if (!iv->to_edge)
				ends[end_count++] = (struct frontier_end){ iv->to, iv->to + 1, false, { 0 } };
		}
		for (size_t t = 0; t < end_count; t++)
			ends[t].confirmed = confirm(&spec, ends[t].n, ends[t].outer, ends[t].io);
	}
	if (a->csv) {
		/* sweep's CSV of best's and flash's rows */
		if ((rc = cli_sweep_write_csv(a->csv, rows, count, out, errout))) {
			free(rows);
			return rc;
		}
	}
	snprintf(plot_title, sizeof(plot_title), "best at the least g whose %s%s is <= %g",
		 ch.measured ? "measured epsilon" : "a-priori bound", a->decode ? " per step" : "",
		 a->epsilon);
	if ((a->plot || a->plot_script) && ch.has_g &&
	    ps_sweep_plot(a->plot, 'n', rows, count, cross, 1,
			  &(struct ps_plot_options){ .polynomial = ps_polynomial_name(ch.p.made), .title = plot_title,
						     .script = a->plot_script }, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		free(rows);
		return PS_EXIT_USAGE;
	}
	if (a->json) {
		json_t *root = frontier_json(&ch, a->epsilon, rows, count, c, &ex, spec.range.lo,
					     ends, end_count);

		json_dumpf(root, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		json_decref(root);
		free(rows);
		return PS_EXIT_VALID;
	}
	fprintf(out, "frontier               d = %llu, M = %llu, epsilon <= %g, %s%s\n",
		(unsigned long long)a->d, (unsigned long long)a->M, a->epsilon,
		ch.measured ? "g by the measured epsilon" : "g by the a-priori bound",
		a->decode ? "" : a->causal ? "; causal: flash with the mask against causal approximate attention, epsilon of causal softmax" : "");
	if (a->decode)
		fprintf(out, "decoding               rows %llu..n-1 generated after a prompt of P = %llu (MODEL.md section 8): best among the decode strategies against flash-decode, I/O per generated token (n - P tokens); epsilon per step: at each row t, |A[t] - softmax of the same q_t over the same keys and values j <= t|\n",
			(unsigned long long)a->decode, (unsigned long long)a->decode);
	if (ch.measured && ch.files)
		fprintf(out, "inputs                 Q, K, V from the files: n = %llu rows, largest |entry| of Q and K %g, max |V| %g\n",
			(unsigned long long)ch.sample_n, ch.entry_bound, ch.max_v);
	else if (ch.measured && ch.decode)
		fprintf(out, "inputs                 random prompt: %llu row%s (min(P, %d))%s, entries uniform in [-%g, %g], seed %llu; %llu row%s generated (min(the largest n - P, %d)) by the stand-in B tanh(W a), W seeded seed ^ 0xD3C0DE\n",
			(unsigned long long)ch.sample_n, ch.sample_n == 1 ? "" : "s", FRONTIER_MEASURE_MAX_N,
			ch.sample_n < ch.decode ? ", not P" : "", B, B, (unsigned long long)ch.seed,
			(unsigned long long)ch.tokens, ch.tokens == 1 ? "" : "s", FRONTIER_MEASURE_MAX_TOKENS);
	else if (ch.measured)
		fprintf(out, "inputs                 random: n = %llu rows, entries uniform in [-%g, %g], seed %llu\n",
			(unsigned long long)ch.sample_n, B, B, (unsigned long long)ch.seed);
	if (!ch.measured && ch.beta < ps_polynomial_interval(B, a->d))
		fprintf(out, "  note                 the interval is narrower than B^2 sqrt d = %g: the bound holds only for inputs whose scores |q.k| / sqrt d stay within it\n",
			ps_polynomial_interval(B, a->d));
	if (!ch.has_g && ch.measured) {
		fprintf(out, "polynomial             %s on [-%g, %g]: no g up to %u gives a measured epsilon <= %g (at g = %u: %.3g)\n",
			ps_polynomial_name(kind), ch.beta, ch.beta, ch.p.g, a->epsilon, ch.p.g, ch.epsilon);
		fprintf(out, "answer: %s does not reach epsilon <= %g on these inputs at any g up to %u, so it does not win at any n at this accuracy\n",
			approximate, a->epsilon, ch.p.g);
		free(rows);
		return PS_EXIT_VALID;
	}
	if (!ch.has_g) {
		fprintf(out, "polynomial             %s on [-%g, %g] (entries in [-%g, %g]): no g up to %u gives 2 eta / (1 + sqrt(1 - eta^2)) B <= %g\n",
			ps_polynomial_name(kind), ch.beta, ch.beta, B, B, ch.p.g, a->epsilon);
		fprintf(out, "answer: %s has no a-priori guarantee of epsilon <= %g here, so it does not win at any n at this accuracy\n",
			approximate, a->epsilon);
		free(rows);
		return PS_EXIT_VALID;
	}
	if (ch.measured && !(ch.p.eta < 1.0))
		fprintf(out, "polynomial             %s on [-%g, %g]: least g = %u, measured %sepsilon %.3g; eta = %.3g, no a-priori bound (eta >= 1)\n",
			ps_polynomial_name(ch.p.made), ch.beta, ch.beta, ch.p.g, ch.decode ? "per-step " : "",
			ch.epsilon, ch.p.eta);
	else if (ch.measured)
		fprintf(out, "polynomial             %s on [-%g, %g]: least g = %u, measured %sepsilon %.3g; eta = %.3g, a-priori bound %.3g\n",
			ps_polynomial_name(ch.p.made), ch.beta, ch.beta, ch.p.g, ch.decode ? "per-step " : "",
			ch.epsilon, ch.p.eta, ps_polynomial_bound(ch.p.eta, ch.half_range));
	else
		fprintf(out, "polynomial             %s on [-%g, %g] (entries in [-%g, %g]): least g = %u, eta = %.3g, bound %.3g\n",
			ps_polynomial_name(ch.p.made), ch.beta, ch.beta, B, B, ch.p.g, ch.p.eta,
			ps_polynomial_bound(ch.p.eta, ch.half_range));
	if (ch.measured && ch.decode)
		fprintf(out, "  drift                %.3g: max |A[t] - A_softmax[t]| over the %llu row%s generated, each recurrence feeding its own outputs forward (reported, not used for g)\n",
			ch.drift, (unsigned long long)ch.tokens, ch.tokens == 1 ? "" : "s");
	if (a->decode)
		points_print_decode(out, rows, count, ch.p.g);
	else
		fprintf(out, "%12s  %3s  %-10s %16s %16s %10s\n", "n", "g", "best", "I/O", "flash I/O", "flash/best");
	/* decoding's points are printed above */
	for (size_t k = 0; !a->decode && k + 1 < count; k += 2) {
		const struct ps_sweep_row *best = &rows[k], *flash = &rows[k + 1];

		if (!best->ran || !flash->ran) {
			fprintf(out, "%12llu  %3u  not run: %s\n", (unsigned long long)best->n, ch.p.g,
				best->ran ? flash->why : best->why);
			continue;
		}
		fprintf(out, "%12llu  %3u  %-10s %16llu %16llu %10.2f\n", (unsigned long long)best->n, ch.p.g,
			best->strategy, (unsigned long long)best->io, (unsigned long long)flash->io,
			(double)flash->io / (double)best->io);
	}
	fprintf(out, "answer: %s (", approximate);
	accuracy_print(out, &ch, a->epsilon, a->d);
	if (!any_best_ran(rows, count)) {
		fprintf(out, ") is not planned at any n in [%llu, %llu]: %s\n",
			(unsigned long long)spec.range.lo, (unsigned long long)spec.range.hi,
			count ? rows[0].why : "no point");
	} else if (!c->interval_count) {
		fprintf(out, ") does not move less data%s than %s at any n %s [%llu, %llu]\n",
			a->decode ? " per generated token" : "", exact, ex.complete ? "in" : "examined in",
			(unsigned long long)spec.range.lo,
			(unsigned long long)spec.range.hi);
	} else {
		fprintf(out, ") moves less data%s than %s for n in ", a->decode ? " per generated token" : "",
			exact);
		for (size_t t = 0; t < c->interval_count && t < PS_SWEEP_MAX_INTERVALS; t++)
			fprintf(out, "%s[%llu, %llu]", t ? ", " : "", (unsigned long long)c->intervals[t].from,
				(unsigned long long)c->intervals[t].to);
		if (c->interval_count > PS_SWEEP_MAX_INTERVALS)
			fprintf(out, " and %zu more", c->interval_count - PS_SWEEP_MAX_INTERVALS);
		fputs(" (", out);
		ps_sweep_print_ends(out, c, "ends exact on the cost models: below at the end, not below next to it");
		fputs(")\n", out);
	}
	if (any_best_ran(rows, count))
		examined_print(out, &ex, spec.range.lo, spec.range.hi);
	for (size_t t = 0; t < end_count; t++) {
		if (ends[t].confirmed)
			fprintf(out, "  end n = %llu        simulated: best %llu < %s %llu; at n = %llu best %llu >= %s %llu\n",
				(unsigned long long)ends[t].n, (unsigned long long)ends[t].io[0], spec.labels[1],
				(unsigned long long)ends[t].io[1], (unsigned long long)ends[t].outer,
				(unsigned long long)ends[t].io[2], spec.labels[1], (unsigned long long)ends[t].io[3]);
		else
			fprintf(out, "  end n = %llu        not confirmed by simulation (n above %d, n r above 2^26, or a run that differs)\n",
				(unsigned long long)ends[t].n, FRONTIER_SIMULATE_MAX_N);
	}
	free(rows);
	return PS_EXIT_VALID;
}

const struct cli_help frontier_help = {
	"frontier -n LO:HI[:STEP] -d D -M M --epsilon E [--causal [--decode P]] [--entry-bound B] [--polynomial P]\n"
	"                   [--interval BETA]\n"
	"                   [--bound a-priori|measured [--q Q.npy --k K.npy --v V.npy | --seed S]]\n"
	"                   [--json] [--csv FILE] [--plot FILE] [--plot-script FILE.gp] [--progress]",
	"the least I/O at an accuracy: approximate attention against FlashAttention",
	"Picks the least degree g whose a-priori bound 2 eta / (1 + sqrt(1 -\n"
	"eta^2)) B (docs/VALUES.md) is within E for every input with entries in\n"
	"[-B, B], then sets best's predicted I/O at that g beside FlashAttention's\n"
	"over the range of n, and answers with the intervals of n where\n"
	"approximate attention moves less. Both cost models are compared at every\n"
	"n from the range's start while the plans are cheap (n values times r up\n"
	"to 2^22, at most 32768 values), so every sign change there is found;\n"
	"above, at the grid's points, each end found by bisection; the answer\n"
	"says which n were examined. Ends are confirmed by simulated runs at the\n"
	"end and its outer neighbour where n <= 16384; an end at the first or\n"
	"last n compared is named so, not a crossing. Where no g meets E, it\n"
	"says so: approximate attention has no a-priori guarantee at that\n"
	"accuracy. With --bound measured, g is instead the least whose epsilon\n"
	"measured on the inputs (the files, or random ones) is within E: a\n"
	"statement about those inputs, not a guarantee. With --causal, causal\n"
	"flash against causal approximate attention. With --causal --decode P,\n"
	"approximate decoding (best among the decode strategies) against exact\n"
	"decoding (flash-decode) after a prompt of P rows, every n of the range\n"
	"above P, I/O also per generated token (n - P tokens); epsilon is then\n"
	"per step: at each generated row t, |A[t] - softmax of the same q_t over\n"
	"the same keys and values j <= t|. Its a-priori bound is the prefill's\n"
	"(R = B) at every step, since the stand-in keeps every generated q, k, v\n"
	"in (-B, B); --bound measured measures it on the decode recurrence's own\n"
	"values (a random prompt of min(P, 4096) rows, min(HI - P, 1024) rows\n"
	"generated) and reports beside it the drift of the two recurrences,\n"
	"each feeding its own outputs forward, not used for g.\n",
	"  pebblesim frontier -n 1k:1M:x2 -d 16 -M 8k --epsilon 1e-3 --entry-bound 0.5 --polynomial minimax\n"
	"      where approximate attention with a guaranteed error <= 1e-3 moves less\n"
	"  pebblesim frontier -n 1k:64k:x2 -d 16 -M 8k --epsilon 1e-3 --bound measured\n"
	"      the same with g chosen by the error on random inputs in [-1, 1]\n"
	"  pebblesim frontier --causal --decode 4096 -n 4160 -d 16 -M 8k --epsilon 1e-2 --polynomial minimax\n"
	"      64 tokens after a prompt of 4096: approximate against exact decoding, per token\n",
};
