/*
 * Choosing among strategies by their cost models: `--strategy best` (the
 * least predicted I/O among the paper's strategies and resident, not the
 * baselines), and the algorithm each case of the paper runs (`--case`).
 * Candidates are planned, not run: every candidate has an exact cost model.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pebblesim/bounds.h"
#include "pebblesim/limits.h"
#include "pebblesim/strategy.h"
#include "tiling.h"

extern const struct ps_strategy ps_strategy_generic;
extern const struct ps_strategy ps_strategy_case1;
extern const struct ps_strategy ps_strategy_keylemma;
extern const struct ps_strategy ps_strategy_subtile;
extern const struct ps_strategy ps_strategy_matmul;

/*
 * Plans kept by their parameters: a run plans its strategy for the check
 * of its memory and again to run it, best plans its candidates for its
 * plan, its check and its run, and the report plans every candidate for
 * its "cheaper strategy" line; each of them is planned once. A built-in
 * strategy's plan depends on its problem's parameters alone (the DAG's n,
 * d, g, normalisation and kind, causal or decoding with its prompt, M, w, the tiles, sizes and layout asked
 * for, the path) and on the memory limit, which may refuse it, so an
 * entry answers any later request with the same ones; the oldest entry
 * goes first. Shared by threads, under a lock.
 */
#define KEPT_SIZE 32
#define KEPT_TEXT 24

struct kept_key {
	const struct ps_strategy *s;
	uint64_t n, d, g, M, w;
	uint64_t decode; /* MODEL.md section 8: the prompt's length, or 0 */
	uint64_t limit; /* the memory limit: a plan may be refused by it */
	bool normalize, exact, causal, element_only;
	bool pruned; /* the same answers either way: kept apart for the tests */
	char sizes[KEPT_TEXT], tiles[KEPT_TEXT], layout[KEPT_TEXT];
};

static struct kept {
	struct kept_key key;
	int rc;
	struct ps_plan plan;
	struct ps_error err;
} kept[KEPT_SIZE];

static struct kept_least {
	struct kept_key key;
	uint64_t least;
} kept_least[KEPT_SIZE];

static unsigned kept_next, kept_used, least_next, least_used;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

/* The key of s on pb (M and the options left 0 for min_memory's); false
 * when it is not to be kept: a plugin's strategy (its code may be
 * unloaded, another's loaded at its address), an explicit DAG, a text
 * parameter too long to hold. */
static bool kept_key(const struct ps_strategy *s, const struct ps_attention *att,
		     const struct ps_problem *pb, struct kept_key *k)
{
	const char *texts[3] = { pb ? pb->sizes : NULL, pb ? pb->tiles : NULL,
				 pb ? pb->layout : NULL };
	char *into[3];

	memset(k, 0, sizeof(*k));
	if (!att || !ps_strategy_builtin(s))
		return false;
	k->s = s;
	k->n = att->n;
	k->d = att->d;
	k->g = att->g;
	k->normalize = att->normalize;
	k->exact = att->exact;
	k->causal = att->causal;
	k->decode = att->decode;
	k->limit = ps_memory_limit(NULL);
	k->pruned = ps_tiling_pruning();
	if (pb) {
		k->M = pb->M;
		k->w = pb->w;
		k->element_only = pb->element_only;
	}
	into[0] = k->sizes;
	into[1] = k->tiles;
	into[2] = k->layout;
	for (int q = 0; q < 3; q++) {
		if (texts[q] && strlen(texts[q]) >= KEPT_TEXT)
			return false;
		/* NULL and "" differ: "\1" stands for NULL */
		snprintf(into[q], KEPT_TEXT, "%s", texts[q] ? texts[q] : "\1");
	}
	return true;
}

static bool kept_same(const struct kept_key *a, const struct kept_key *b)
{
	return a->s == b->s && a->n == b->n && a->d == b->d && a->g == b->g && a->M == b->M &&
	       a->w == b->w && a->limit == b->limit && a->normalize == b->normalize &&
	       a->exact == b->exact && a->causal == b->causal && a->decode == b->decode &&
	       a->element_only == b->element_only && a->pruned == b->pruned &&
	       !strcmp(a->sizes, b->sizes) && !strcmp(a->tiles, b->tiles) &&
	       !strcmp(a->layout, b->layout);
}

int ps_strategy_plan_kept(const struct ps_strategy *s, const struct ps_problem *pb,
			  struct ps_plan *plan, struct ps_error *err)
{
	struct kept_key key;
	int rc;

	if (pb->xdag || !kept_key(s, pb->att, pb, &key))
		return ps_strategy_plan(s, pb, plan, err);
	pthread_mutex_lock(&kept_lock);
	for (unsigned q = 0; q < kept_used; q++)
		if (kept_same(&kept[q].key, &key)) {
			*plan = kept[q].plan;
			rc = kept[q].rc;
			if (rc && err)
				*err = kept[q].err;
			pthread_mutex_unlock(&kept_lock);
			return rc;
		}
	pthread_mutex_unlock(&kept_lock);
	{
		struct ps_error mine;

		ps_error_clear(&mine);
		rc = ps_strategy_plan(s, pb, plan, &mine);
		if (rc && err)
			*err = mine;
		pthread_mutex_lock(&kept_lock);
		kept[kept_next] = (struct kept){ key, rc, *plan, mine };
		kept_next = (kept_next + 1) % KEPT_SIZE;
		kept_used = kept_used < KEPT_SIZE ? kept_used + 1 : KEPT_SIZE;
		pthread_mutex_unlock(&kept_lock);
	}
	return rc;
}

uint64_t ps_strategy_min_memory_kept(const struct ps_strategy *s, const struct ps_attention *att)
{
	struct kept_key key;
	uint64_t least;

	if (!kept_key(s, att, NULL, &key))
		return ps_strategy_min_memory(s, att);
	pthread_mutex_lock(&kept_lock);
	for (unsigned q = 0; q < least_used; q++)
		if (kept_same(&kept_least[q].key, &key)) {
			least = kept_least[q].least;
			pthread_mutex_unlock(&kept_lock);
			return least;
		}
	pthread_mutex_unlock(&kept_lock);
	least = ps_strategy_min_memory(s, att);
	pthread_mutex_lock(&kept_lock);
	kept_least[least_next] = (struct kept_least){ key, least };
	least_next = (least_next + 1) % KEPT_SIZE;
	least_used = least_used < KEPT_SIZE ? least_used + 1 : KEPT_SIZE;
	pthread_mutex_unlock(&kept_lock);
	return least;
}

/* The predicted I/O of s on pb, or false when s does not accept pb. */
static bool predicted_io(const struct ps_strategy *s,
			 const struct ps_problem *pb, uint64_t *io)
{
	struct ps_plan plan;

	if (pb->M < ps_strategy_min_memory_kept(s, pb->att) ||
	    ps_strategy_plan_kept(s, pb, &plan, NULL) || !plan.predicted)
		return false;
	*io = plan.loads + plan.saves;
	return true;
}

int ps_choose_cheapest(const struct ps_problem *pb,
		       const struct ps_strategy *const *candidates,
		       size_t count, struct ps_choice *out)
{
	memset(out, 0, sizeof(*out));
	out->best_io = out->second_io = UINT64_MAX;
	for (size_t k = 0; k < count; k++) {
		const struct ps_strategy *s = candidates[k];
		uint64_t io;

		if (!predicted_io(s, pb, &io))
			continue;
		if (io < out->best_io) {
			out->second = out->best;
			out->second_io = out->best_io;
			out->best = s;
			out->best_io = io;
		} else if (io < out->second_io) {
			out->second = s;
			out->second_io = io;
		}
	}
	return out->best ? PS_OK : PS_EINPUT;
}

/* Whether s is one of best's candidates: every strategy of the attention
 * DAG but the baselines and the choosers. */
static bool best_considers(const struct ps_strategy *s)
{
	return !(s->flags & (PS_STRATEGY_BASELINE | PS_STRATEGY_EXPLICIT |
			     PS_STRATEGY_CHOOSER | PS_STRATEGY_EXACT));
}

const char *ps_candidate_name(const struct ps_candidate *c, char *buf,
			      size_t len)
{
	snprintf(buf, len, "%s%s%s", c->s->name, c->sizes ? " --sizes " : "",
		 c->sizes ? c->sizes : "");
	return buf;
}

/* Keeps c among the two cheapest: ties keep the earlier. */
static void rank(const struct ps_candidate *c, struct ps_candidate *best,
		 struct ps_candidate *second)
{
	if (!best->s || c->io < best->io) {
		*second = *best;
		*best = *c;
	} else if (!second->s || c->io < second->io) {
		*second = *c;
	}
}

size_t ps_best_candidate_list(struct ps_candidate *out, size_t max)
{
	static const char *const sizes[] = { NULL, "tuned" };
	size_t count = 0;

	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];
		size_t variants = ps_strategy_takes(s, PS_TAKES_SIZES) ? 2 : 1;

		if (!best_considers(s))
			continue;
		/* a strategy with tile sizes is planned with the proof's and
		 * with tuned ones: two candidates */
		for (size_t v = 0; v < variants && count < max; v++)
			out[count++] = (struct ps_candidate){ s, sizes[v], 0 };
	}
	return count;
}

int ps_best_candidates(const struct ps_problem *pb, struct ps_candidate *best,
		       struct ps_candidate *second)
{
	struct ps_candidate all[PS_BEST_MAX_CANDIDATES];
	size_t count = ps_best_candidate_list(all, PS_BEST_MAX_CANDIDATES);

	memset(best, 0, sizeof(*best));
	memset(second, 0, sizeof(*second));
	for (size_t k = 0; k < count; k++) {
		struct ps_problem with_sizes = *pb;

		with_sizes.sizes = all[k].sizes;
		if (predicted_io(all[k].s, &with_sizes, &all[k].io))
			rank(&all[k], best, second);
	}
	return best->s ? PS_OK : PS_EINPUT;
}

/* The least I/O c's cost model can predict on pb (with its sizes), from
 * what its planner knows before it searches; 0 where none is known. */
static uint64_t candidate_floor(const struct ps_candidate *c, const struct ps_problem *pb)
{
	if (c->s == &ps_strategy_generic)
		return ps_generic_io_floor(pb);
	if (c->s == &ps_strategy_keylemma)
		return ps_keylemma_io_floor(pb);
	if (c->s == &ps_strategy_subtile)
		return ps_subtile_io_floor(pb);
	if (c->s == &ps_strategy_matmul)
		return ps_matmul_io_floor(pb);
	return 0;
}

/*
 * ps_best_candidates' cheapest without its runner-up, planning fewer
 * candidates. The cheapest is the least (I/O, place in the list) among
 * the candidates that plan (rank keeps the earlier of a tie). Candidates
 * are planned by increasing floor, and one is skipped when its floor is
 * above the cheapest's I/O so far, or equal to it from a later place: its
 * (I/O, place) is then above the cheapest's, and the cheapest only gets
 * cheaper. So the answer is the same, and only its runner-up is lost.
 */
int ps_best_cheapest(const struct ps_problem *pb, struct ps_candidate *best)
{
	struct ps_candidate all[PS_BEST_MAX_CANDIDATES];
	uint64_t floor[PS_BEST_MAX_CANDIDATES];
	size_t order[PS_BEST_MAX_CANDIDATES], at = 0;
	size_t count = ps_best_candidate_list(all, PS_BEST_MAX_CANDIDATES);

	memset(best, 0, sizeof(*best));
	for (size_t k = 0; k < count; k++) {
		struct ps_problem with_sizes = *pb;
		size_t j = k;

		with_sizes.sizes = all[k].sizes;
		floor[k] = candidate_floor(&all[k], &with_sizes);
		/* insertion by floor, a stable order */
		for (; j > 0 && floor[order[j - 1]] > floor[k]; j--)
			order[j] = order[j - 1];
		order[j] = k;
	}
	for (size_t q = 0; q < count; q++) {
		size_t k = order[q];
		struct ps_problem with_sizes = *pb;

		if (best->s && (floor[k] > best->io || (floor[k] == best->io && k > at)))
			continue;
		with_sizes.sizes = all[k].sizes;
		if (!predicted_io(all[k].s, &with_sizes, &all[k].io))
			continue;
		if (!best->s || all[k].io < best->io || (all[k].io == best->io && k < at)) {
			*best = all[k];
			at = k;
		}
	}
	return best->s ? PS_OK : PS_EINPUT;
}

static int best_pick(const struct ps_problem *pb, struct ps_candidate *best,
		     struct ps_candidate *second, struct ps_error *err)
{
	if (ps_best_candidates(pb, best, second))
		return ps_error_set(err, PS_EINPUT,
				    "no strategy accepts M = %llu for these parameters",
				    (unsigned long long)pb->M);
	return PS_OK;
}

static uint64_t best_min_memory(const struct ps_attention *att)
{
	uint64_t least = UINT64_MAX;

	for (size_t k = 0; k < ps_strategy_count; k++)
		if (best_considers(ps_strategies[k]))
			least = ps_min_u64(least, ps_strategy_min_memory_kept(ps_strategies[k], att));
	return least;
}

static int best_plan(const struct ps_problem *pb, struct ps_plan *plan,
		     struct ps_error *err)
{
	struct ps_candidate best, second;
	struct ps_problem chosen_pb = *pb;
	char chosen[sizeof(plan->summary)], name[32], runner_up[32];
	int rc = best_pick(pb, &best, &second, err);

	if (rc)
		return rc;
	chosen_pb.sizes = best.sizes;
	if ((rc = ps_strategy_plan_kept(best.s, &chosen_pb, plan, err)))
		return rc;
	memcpy(chosen, plan->summary, sizeof(chosen));
	ps_candidate_name(&best, name, sizeof(name));
	if (second.s)
		snprintf(plan->summary, sizeof(plan->summary),
			 "chose %s, I/O %llu, %.1f%% below the runner-up %s (%llu): %.120s",
			 name, (unsigned long long)best.io,
			 100.0 * (double)(second.io - best.io) / (double)second.io,
			 ps_candidate_name(&second, runner_up, sizeof(runner_up)),
			 (unsigned long long)second.io, chosen);
	else
		snprintf(plan->summary, sizeof(plan->summary),
			 "chose %s, the only one that applies: %.180s", name, chosen);
	plan->chosen = best.s;
	return PS_OK;
}

static int best_run(const struct ps_problem *pb, struct ps_sink *sink,
		    struct ps_error *err)
{
	struct ps_candidate best, second;
	struct ps_problem chosen_pb = *pb;
	int rc = best_pick(pb, &best, &second, err);

	if (rc)
		return rc;
	chosen_pb.sizes = best.sizes;
	return ps_strategy_run(best.s, &chosen_pb, sink, err);
}

const struct ps_strategy ps_strategy_best = {
	.version = PS_STRATEGY_VERSION,
	.name = "best",
	.section = "the least predicted I/O of the strategies above",
	.summary = "plans every applicable strategy but the baselines (cost models, no engine), tilings also with tuned sizes, and runs the cheapest",
	.min_memory = best_min_memory,
	.plan = best_plan,
	.run = best_run,
	/* on a causal DAG its candidates are the causal strategies */
	.flags = PS_STRATEGY_CHOOSER | PS_STRATEGY_CAUSAL,
	.takes = PS_TAKES_W | PS_TAKES_TILES, /* passed to keylemma, generic */
};

/* ---- the algorithm of each case ------------------------------------- */

/*
 * Each case runs the algorithm of its theorem: I Theorem 1.1's whole rows,
 * II the Key Lemma's groups, III Lemma 3.1 (generic) or, where Lemma 3.3's
 * premise C(d,g) <= 4rg/M holds, the cheaper of it and subtile, IV Lemma
 * 3.1 or section 3.6's stored U1, the cheaper.
 */
const struct ps_strategy *ps_case_algorithm(const char *case_name,
					    const struct ps_problem *pb,
					    char *why, size_t len,
					    struct ps_error *err)
{
	static const struct {
		const char *case_name, *theorem;
		const struct ps_strategy *candidates[2];
		bool premised; /* the second candidate needs Lemma 3.3's premise */
	} cases[] = {
		{ "I", "Theorem 1.1", { &ps_strategy_case1, NULL }, false },
		{ "II", "Key Lemma 3.2", { &ps_strategy_keylemma, NULL }, false },
		{ "III", "Theorem 1.3", { &ps_strategy_generic, &ps_strategy_subtile }, true },
		{ "IV", "Theorem 1.4", { &ps_strategy_generic, &ps_strategy_matmul }, false },
	};
	const struct ps_strategy *usable[2];
	char notes[2][160];
	size_t count = 0, noted = 0;
	struct ps_choice c;

	if (pb->att && pb->att->causal) {
		ps_error_set(err, PS_EINPUT,
			     "the paper's cases are of non-causal attention: the causal DAG has no Case %s (its strategies: --strategy best)",
			     case_name);
		return NULL;
	}

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		if (strcmp(cases[k].case_name, case_name))
			continue;
		for (size_t q = 0; q < 2 && cases[k].candidates[q]; q++) {
			const struct ps_strategy *s = cases[k].candidates[q];
			uint64_t least = ps_strategy_min_memory_kept(s, pb->att);
			char premise[96];

			if (q == 1 && cases[k].premised &&
			    !ps_subtile_premise(pb->att, pb->M, premise, sizeof(premise)))
				snprintf(notes[noted++], sizeof(notes[0]),
					 "%s not considered: Lemma 3.3's premise %s fails",
					 s->name, premise);
			else if (least == UINT64_MAX)
				snprintf(notes[noted++], sizeof(notes[0]),
					 "%s does not apply to these parameters at any M",
					 s->name);
			else if (pb->M < least)
				snprintf(notes[noted++], sizeof(notes[0]),
					 "%s does not run: it needs M >= %llu",
					 s->name, (unsigned long long)least);
			else
				usable[count++] = s;
		}
		/* a case of one algorithm runs it: its own errors speak */
		if (count == 1 && noted == 0 && !cases[k].candidates[1]) {
			snprintf(why, len, "Case %s runs %s's algorithm: %s", case_name,
				 cases[k].theorem, usable[0]->name);
			return usable[0];
		}
		if (ps_choose_cheapest(pb, usable, count, &c)) {
			ps_error_set(err, PS_EINPUT,
				     "no algorithm of Case %s runs at M = %llu: %s%s%s",
				     case_name, (unsigned long long)pb->M,
				     noted ? notes[0] : "", noted > 1 ? "; " : "",
				     noted > 1 ? notes[1] : "");
			return NULL;
		}
		if (c.second)
			snprintf(why, len,
				 "Case %s runs %s's algorithm: %s, predicted I/O %llu, the cheaper of it and %s (%llu)",
				 case_name, cases[k].theorem, c.best->name,
				 (unsigned long long)c.best_io, c.second->name,
				 (unsigned long long)c.second_io);
		else
			snprintf(why, len, "Case %s runs %s's algorithm: %s%s%s",
				 case_name, cases[k].theorem, c.best->name,
				 noted ? "; " : "", noted ? notes[0] : "");
		return c.best;
	}
	ps_error_set(err, PS_EINPUT, "unknown case '%s': I, II, III, IV or auto",
		     case_name);
	return NULL;
}
