/*
 * What run, compare, validate and view share: building or reading the DAG, the
 * problem a strategy is given, and the check of a strategy's options
 * against what it declares it takes (struct ps_strategy's `takes`).
 */
#include "cli.h"

#include <string.h>
#include <unistd.h>

#include "pebblesim/trace.h"

bool cli_wants_exact(const struct cli_args *a)
{
	const struct ps_strategy *s = a->strategy ? ps_strategy_find(a->strategy) : NULL;

	if (a->attention)
		return !strcmp(a->attention, "exact");
	return s && (s->flags & PS_STRATEGY_EXACT);
}

int cli_check_attention(const struct cli_command *cmd, const struct cli_args *a,
			FILE *errout)
{
	const struct ps_strategy *s = a->strategy ? ps_strategy_find(a->strategy) : NULL;
	bool exact = cli_wants_exact(a);

	if (a->attention && strcmp(a->attention, "approx") && strcmp(a->attention, "exact"))
		return cli_usage_error(cmd, errout, "unknown attention '%s': approx or exact",
				       a->attention);
	if (!exact)
		return 0;
	if (a->given[OPT_G] || a->polynomial || a->given[OPT_INTERVAL])
		return cli_usage_error(cmd, errout,
				       "%s does not apply to exact attention (MODEL.md section 5): it has no polynomial",
				       a->given[OPT_G] ? "-g" : a->polynomial ? "--polynomial" : "--interval");
	if (a->given[OPT_CASE])
		return cli_usage_error(cmd, errout,
				       "--case does not apply to exact attention: the paper's cases are of approximate attention");
	if (s && !(s->flags & PS_STRATEGY_EXACT))
		return cli_usage_error(cmd, errout,
				       "%s pebbles approximate attention, not exact attention", s->name);
	return 0;
}

int cli_build_attention(const struct cli_args *a, struct ps_attention *att,
			bool state_later, FILE *errout)
{
	struct ps_attention_params p = {
		.n = a->n, .d = a->d, .g = a->g, .normalize = !a->no_normalize,
		.exact = cli_wants_exact(a), .causal = a->causal, .decode = a->decode,
	};
	struct ps_error err;

	ps_error_clear(&err);
	if ((state_later ? ps_attention_check_dag(&p, &err) : ps_attention_check(&p, &err)) ||
	    ps_attention_init(att, &p, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	return 0;
}

int cli_read_dag(const struct cli_args *a, struct ps_explicit *x,
		 struct cli_dag_read *how, FILE *errout)
{
	const char *format = NULL;
	struct ps_error err;

	ps_error_clear(&err);
	if (ps_explicit_read_with(x, a->dag_file, a->dag_format,
				  a->ignore_weights ? PS_EXPLICIT_IGNORE_WEIGHTS : 0,
				  &format, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	if (a->ignore_weights && strcmp(format, "hdag")) {
		fprintf(errout, "pebblesim: --ignore-weights applies to a HyperdagDB file; '%s' is read as %s, which carries no weights\n",
			a->dag_file, format);
		ps_explicit_free(x);
		return PS_EXIT_USAGE;
	}
	how->format = format;
	how->note = x->note[0] ? x->note : ps_explicit_format_note(format);
	return 0;
}

void cli_problem(const struct cli_args *a, const struct ps_attention *att,
		 const struct ps_explicit *xdag, struct ps_problem *pb)
{
	memset(pb, 0, sizeof(*pb));
	pb->att = att;
	pb->xdag = xdag;
	pb->M = a->M;
	pb->tiles = a->tiles;
	pb->sizes = a->sizes;
	pb->w = a->w;
	pb->order = a->order;
	pb->layout = a->layout;
	pb->element_only = a->element_path;
}

FILE *cli_progress_stream(const struct cli_args *a, FILE *errout)
{
	int fd = fileno(errout);

	return a->progress || (fd >= 0 && isatty(fd)) ? errout : NULL;
}

const char *cli_progress_label(const struct ps_strategy *s, const char *sizes,
			       const struct ps_attention *att, uint64_t M,
			       char *buf, size_t len)
{
	char g[32] = "";

	if (att && !att->exact)
		snprintf(g, sizeof(g), ", g = %llu", (unsigned long long)att->g);
	if (att)
		snprintf(buf, len, "%s%s%s at n = %llu, d = %llu%s, M = %llu", s->name,
			 sizes ? "/" : "", sizes ? sizes : "", (unsigned long long)att->n,
			 (unsigned long long)att->d, g, (unsigned long long)M);
	else
		snprintf(buf, len, "%s%s%s at M = %llu", s->name, sizes ? "/" : "",
			 sizes ? sizes : "", (unsigned long long)M);
	return buf;
}

/* The strategy options and the bit a strategy declares for each. */
static const struct {
	enum cli_option_id id;
	unsigned takes;
} strategy_options[] = {
	{ OPT_TILES, PS_TAKES_TILES },
	{ OPT_SIZES, PS_TAKES_SIZES },
	{ OPT_W, PS_TAKES_W },
	{ OPT_ORDER, PS_TAKES_ORDER },
	{ OPT_LAYOUT, PS_TAKES_LAYOUT },
	{ OPT_TIME_LIMIT, PS_TAKES_TIME_LIMIT },
};

/* A strategy that takes option bit `takes` itself (choosers pass it on),
 * or with takes 0 one of explicit DAGs. */
static bool picks(const struct ps_strategy *s, unsigned takes)
{
	if (!takes)
		return s->flags & PS_STRATEGY_EXPLICIT;
	return ps_strategy_takes(s, takes) && !(s->flags & PS_STRATEGY_CHOOSER);
}

/* Their names from the registry: "generic", "lru and belady". */
static void names_of(unsigned takes, const char *last, char *buf, size_t len)
{
	size_t count = 0, used = 0, total = 0;

	for (size_t k = 0; k < ps_strategy_count; k++)
		total += picks(ps_strategies[k], takes);
	buf[0] = '\0';
	for (size_t k = 0; k < ps_strategy_count && used < len; k++) {
		if (!picks(ps_strategies[k], takes))
			continue;
		count++;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 count == 1 ? "" : count == total ? last : ", ",
					 ps_strategies[k]->name);
	}
}

/* Does a strategy of the causal or decode DAGs, not a chooser, take
 * option bit `takes`? (A chooser passes an option on to its candidates:
 * on those DAGs, to theirs alone.) */
static bool causal_takes(unsigned takes)
{
	for (size_t k = 0; k < ps_strategy_count; k++)
		if ((ps_strategies[k]->flags & (PS_STRATEGY_CAUSAL | PS_STRATEGY_DECODE)) &&
		    picks(ps_strategies[k], takes))
			return true;
	return false;
}

int cli_check_strategy(const struct cli_args *a, const struct ps_strategy *s,
		       bool explicit_dag, FILE *errout)
{
	for (size_t k = 0; k < sizeof(strategy_options) / sizeof(strategy_options[0]); k++) {
		char name[32], who[128];

		if (!a->given[strategy_options[k].id] ||
		    ps_strategy_takes(s, strategy_options[k].takes))
			continue;
		names_of(strategy_options[k].takes, " and ", who, sizeof(who));
		fprintf(errout, "pebblesim: %s is an option of %s, not of %s\n",
			cli_option_name(strategy_options[k].id, name, sizeof(name)),
			who, s->name);
		return PS_EXIT_USAGE;
	}
	if (a->causal && (s->flags & PS_STRATEGY_CHOOSER))
		for (size_t k = 0; k < sizeof(strategy_options) / sizeof(strategy_options[0]); k++) {
			char name[32], who[128];

			if (!a->given[strategy_options[k].id] ||
			    causal_takes(strategy_options[k].takes))
				continue;
			names_of(strategy_options[k].takes, " and ", who, sizeof(who));
			fprintf(errout, "pebblesim: %s is an option of %s, not of %s on the causal DAG (MODEL.md section 7), whose candidates take no %s\n",
				cli_option_name(strategy_options[k].id, name, sizeof(name)),
				who, s->name, name);
			return PS_EXIT_USAGE;
		}
	if (explicit_dag != !!(s->flags & PS_STRATEGY_EXPLICIT)) {
		char who[128];

		names_of(0, " or ", who, sizeof(who));
		if (explicit_dag)
			fprintf(errout, "pebblesim: %s pebbles the attention DAG; a DAG from a file takes %s\n",
				s->name, who);
		else
			fprintf(errout, "pebblesim: %s pebbles a DAG from a file (run --dag FILE), not the attention DAG\n",
				s->name);
		return PS_EXIT_USAGE;
	}
	return 0;
}

/*
 * A trace of a known strategy is set beside that strategy's plan, made
 * for the header's own M and parameters (not for -M). A name of the
 * other DAG kind, a plan that cannot be made, or one that a time budget
 * ends (best on a DAG file), gives no prediction.
 */
void cli_replay_plan(const struct ps_replay *replay, const struct ps_explicit *xdag,
		     struct ps_report *rep)
{
	const struct ps_strategy *s = ps_strategy_find(replay->header.strategy);

	/* a search within a time budget (best on a DAG file) may end
	 * elsewhere when made again: no plan is set beside its trace */
	if (s && !(s->flags & PS_STRATEGY_EXPLICIT) == !xdag &&
	    !ps_strategy_takes(s, PS_TAKES_TIME_LIMIT)) {
		struct ps_problem pb = {
			.att = xdag ? NULL : &replay->att,
			.xdag = xdag, .M = replay->header.planned_M,
			.tiles = replay->header.tiles[0] ? replay->header.tiles : NULL,
			.w = replay->header.w,
			.sizes = replay->header.sizes[0] ? replay->header.sizes : NULL,
			.order = replay->header.order[0] ? replay->header.order : NULL,
			.layout = replay->header.layout[0] ? replay->header.layout : NULL,
		};
		struct ps_error ignored;

		rep->section = s->section;
		rep->has_plan = ps_strategy_plan(s, &pb, &rep->plan, &ignored) == 0;
	}
}
