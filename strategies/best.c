/*
 * Choosing among strategies by their cost models: `--strategy best` (the
 * least predicted I/O among the paper's strategies and resident, not the
 * baselines), and the algorithm each case of the paper runs (`--case`).
 * Candidates are planned, not run: every candidate has an exact cost model.
 */
#include <stdio.h>
#include <string.h>

#include "pebblesim/bounds.h"
#include "pebblesim/strategy.h"

extern const struct ps_strategy ps_strategy_generic;
extern const struct ps_strategy ps_strategy_case1;
extern const struct ps_strategy ps_strategy_keylemma;
extern const struct ps_strategy ps_strategy_subtile;
extern const struct ps_strategy ps_strategy_matmul;

/* The predicted I/O of s on pb, or false when s does not accept pb. */
static bool predicted_io(const struct ps_strategy *s,
			 const struct ps_problem *pb, uint64_t *io)
{
	struct ps_plan plan;
	struct ps_error ignored;

	if (pb->M < ps_strategy_min_memory(s, pb->att) ||
	    ps_strategy_plan(s, pb, &plan, &ignored) || !plan.predicted)
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

/* best's candidates: every strategy of the attention DAG but the
 * baselines and the choosers. */
static size_t best_candidates(const struct ps_strategy **out)
{
	size_t count = 0;

	for (size_t k = 0; k < ps_strategy_count; k++) {
		const struct ps_strategy *s = ps_strategies[k];

		if (!(s->flags & (PS_STRATEGY_BASELINE | PS_STRATEGY_EXPLICIT |
				  PS_STRATEGY_CHOOSER | PS_STRATEGY_EXACT)))
			out[count++] = s;
	}
	return count;
}

static int best_pick(const struct ps_problem *pb, struct ps_choice *choice,
		     struct ps_error *err)
{
	const struct ps_strategy *candidates[32];
	size_t count = best_candidates(candidates);

	if (ps_choose_cheapest(pb, candidates, count, choice))
		return ps_error_set(err, PS_EINPUT,
				    "no strategy accepts M = %llu for these parameters",
				    (unsigned long long)pb->M);
	return PS_OK;
}

static uint64_t best_min_memory(const struct ps_attention *att)
{
	const struct ps_strategy *candidates[32];
	size_t count = best_candidates(candidates);
	uint64_t least = UINT64_MAX;

	for (size_t k = 0; k < count; k++)
		least = ps_min_u64(least, ps_strategy_min_memory(candidates[k], att));
	return least;
}

static int best_plan(const struct ps_problem *pb, struct ps_plan *plan,
		     struct ps_error *err)
{
	struct ps_choice c;
	char chosen[sizeof(plan->summary)];
	int rc = best_pick(pb, &c, err);

	if (rc || (rc = ps_strategy_plan(c.best, pb, plan, err)))
		return rc;
	memcpy(chosen, plan->summary, sizeof(chosen));
	if (c.second)
		snprintf(plan->summary, sizeof(plan->summary),
			 "chose %s, I/O %llu, %.1f%% below the runner-up %s (%llu): %.150s",
			 c.best->name, (unsigned long long)c.best_io,
			 100.0 * (double)(c.second_io - c.best_io) / (double)c.second_io,
			 c.second->name, (unsigned long long)c.second_io, chosen);
	else
		snprintf(plan->summary, sizeof(plan->summary),
			 "chose %s, the only one that applies: %.180s",
			 c.best->name, chosen);
	plan->chosen = c.best;
	return PS_OK;
}

static int best_run(const struct ps_problem *pb, struct ps_sink *sink,
		    struct ps_error *err)
{
	struct ps_choice c;
	int rc = best_pick(pb, &c, err);

	return rc ? rc : ps_strategy_run(c.best, pb, sink, err);
}

const struct ps_strategy ps_strategy_best = {
	.version = PS_STRATEGY_VERSION,
	.name = "best",
	.section = "the least predicted I/O of the strategies above",
	.summary = "plans every applicable strategy but the baselines (cost models, no engine) and runs the cheapest",
	.min_memory = best_min_memory,
	.plan = best_plan,
	.run = best_run,
	.flags = PS_STRATEGY_CHOOSER,
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

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		if (strcmp(cases[k].case_name, case_name))
			continue;
		for (size_t q = 0; q < 2 && cases[k].candidates[q]; q++) {
			const struct ps_strategy *s = cases[k].candidates[q];
			uint64_t least = ps_strategy_min_memory(s, pb->att);
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
