#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/strategy.h"

extern const struct ps_strategy ps_strategy_generic;
extern const struct ps_strategy ps_strategy_case1;
extern const struct ps_strategy ps_strategy_keylemma;
extern const struct ps_strategy ps_strategy_subtile;
extern const struct ps_strategy ps_strategy_matmul;
extern const struct ps_strategy ps_strategy_colpass;
extern const struct ps_strategy ps_strategy_naive;
extern const struct ps_strategy ps_strategy_naive_belady;
extern const struct ps_strategy ps_strategy_resident;
extern const struct ps_strategy ps_strategy_recurrent;
extern const struct ps_strategy ps_strategy_causal_colpass;
extern const struct ps_strategy ps_strategy_recurrent_decode;
extern const struct ps_strategy ps_strategy_best;
extern const struct ps_strategy ps_strategy_flash;
extern const struct ps_strategy ps_strategy_flash_decode;
extern const struct ps_strategy ps_strategy_exact_matmul;
extern const struct ps_strategy ps_strategy_naive_exact;
extern const struct ps_strategy ps_strategy_naive_exact_belady;
extern const struct ps_strategy ps_strategy_lru;
extern const struct ps_strategy ps_strategy_belady;
extern const struct ps_strategy ps_strategy_portfolio;

static const struct ps_strategy *const builtin[] = {
	&ps_strategy_generic,
	&ps_strategy_case1,
	&ps_strategy_keylemma,
	&ps_strategy_subtile,
	&ps_strategy_matmul,
	&ps_strategy_colpass,
	&ps_strategy_resident,
	&ps_strategy_recurrent,
	&ps_strategy_causal_colpass,
	&ps_strategy_recurrent_decode,
	&ps_strategy_naive,
	&ps_strategy_naive_belady,
	&ps_strategy_best,
	&ps_strategy_flash,
	&ps_strategy_flash_decode,
	&ps_strategy_exact_matmul,
	&ps_strategy_naive_exact,
	&ps_strategy_naive_exact_belady,
	&ps_strategy_lru,
	&ps_strategy_belady,
	&ps_strategy_portfolio,
};

#define BUILTIN_COUNT (sizeof(builtin) / sizeof(builtin[0]))

/*
 * The registry: the built-in strategies, then the plugins' (with the file
 * each came from). While no plugin is loaded it is the built-in array
 * itself; a plugin's strategies make it a copy grown at the end.
 */
const struct ps_strategy *const *ps_strategies = builtin;
size_t ps_strategy_count = BUILTIN_COUNT;

static const struct ps_strategy **registered; /* the copy, or NULL */
static const char **origins;                  /* a plugin's file, by index */

bool ps_strategy_builtin(const struct ps_strategy *s)
{
	for (size_t k = 0; k < BUILTIN_COUNT; k++)
		if (builtin[k] == s)
			return true;
	return false;
}

const char *ps_strategy_origin(const struct ps_strategy *s)
{
	for (size_t k = BUILTIN_COUNT; k < ps_strategy_count; k++)
		if (ps_strategies[k] == s)
			return origins[k];
	return NULL;
}

int ps_strategy_register(const struct ps_strategy *const *list, size_t count,
			 const char *origin, struct ps_error *err)
{
	size_t total = ps_strategy_count + count;
	const struct ps_strategy **grown;
	const char **grown_origins;

	if (!count)
		return PS_OK;
	grown = realloc(registered, total * sizeof(*grown));
	if (!grown)
		return ps_error_set(err, PS_ENOMEM, "out of memory registering the strategies of '%s'", origin);
	registered = grown;
	grown_origins = realloc(origins, total * sizeof(*grown_origins));
	if (!grown_origins)
		return ps_error_set(err, PS_ENOMEM, "out of memory registering the strategies of '%s'", origin);
	origins = grown_origins;
	if (ps_strategies == builtin) {
		memcpy(registered, builtin, sizeof(builtin));
		for (size_t k = 0; k < BUILTIN_COUNT; k++)
			origins[k] = NULL;
	}
	for (size_t k = 0; k < count; k++) {
		registered[ps_strategy_count + k] = list[k];
		origins[ps_strategy_count + k] = origin;
	}
	ps_strategies = registered;
	ps_strategy_count = total;
	return PS_OK;
}

void ps_strategy_unregister_all(void)
{
	ps_strategies = builtin;
	ps_strategy_count = BUILTIN_COUNT;
	free(registered);
	free(origins);
	registered = NULL;
	origins = NULL;
}

const struct ps_strategy *ps_strategy_find(const char *name)
{
	for (size_t k = 0; k < ps_strategy_count; k++)
		if (!strcmp(ps_strategies[k]->name, name))
			return ps_strategies[k];
	return NULL;
}

void ps_strategy_names(char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t k = 0; k < ps_strategy_count && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 k ? ", " : "", ps_strategies[k]->name);
}

/* "strategy 'S' of plugin 'F'" */
static void plugin_named(const struct ps_strategy *s, const char *origin, char *buf, size_t len)
{
	snprintf(buf, len, "strategy '%s' of plugin '%s'", s->name, origin);
}

/* A plugin's failure, named: its message, or the code it returned. */
static int plugin_failed(const struct ps_strategy *s, const char *origin, const char *what,
			 int rc, struct ps_error *err)
{
	char who[PS_ERROR_MAX], why[PS_ERROR_MAX];

	plugin_named(s, origin, who, sizeof(who));
	if (err && err->msg[0]) {
		snprintf(why, sizeof(why), "%s", err->msg);
		return ps_error_set(err, rc, "%s: %s", who, why);
	}
	return ps_error_set(err, rc, "%s: its %s failed (returned %d) without a message", who,
			    what, rc);
}

/* A plugin's plan whose text is not UTF-8 is refused, the text named
 * (JSON holds only UTF-8). */
static int plan_text(const struct ps_strategy *s, const char *origin, const struct ps_plan *plan,
		     struct ps_error *err)
{
	const struct {
		const char *what, *text;
	} texts[] = {
		{ "summary", plan->summary },
		{ "bound's formula", plan->upper.formula },
		{ "bound's name", plan->upper.name },
		{ "parameter's name", plan->param_name },
		{ "variant", plan->variant },
		{ "sizes", plan->sizes },
	};
	char who[PS_ERROR_MAX];
	size_t at;

	for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++)
		if (texts[k].text && !ps_utf8_valid(texts[k].text, &at)) {
			plugin_named(s, origin, who, sizeof(who));
			return ps_error_set(err, PS_EINPUT,
					    "%s: its plan's %s is not valid UTF-8 (byte 0x%02x at offset %zu)",
					    who, texts[k].what,
					    (unsigned)(unsigned char)texts[k].text[at], at);
		}
	return PS_OK;
}

/* Why s does not pebble att, by name: the kind of DAG, or causal and
 * decoding (MODEL.md sections 7 and 8). */
static int not_served(const struct ps_strategy *s, const struct ps_attention *att,
		      struct ps_error *err)
{
	if ((s->flags & PS_STRATEGY_EXPLICIT) ||
	    !(s->flags & PS_STRATEGY_EXACT) != !att->exact)
		return ps_error_set(err, PS_EINPUT, "%s pebbles %s, not the %s DAG",
				    s->name,
				    (s->flags & PS_STRATEGY_EXPLICIT) ? "a DAG from a file" :
				    (s->flags & PS_STRATEGY_EXACT) ? "exact attention" :
				    "approximate attention",
				    ps_attention_kind_name(att));
	if ((s->flags & PS_STRATEGY_CAUSAL_ONLY) && !att->causal)
		return ps_error_set(err, PS_EINPUT,
				    "%s pebbles the causal DAG (--causal, MODEL.md section 7) only",
				    s->name);
	if (s->flags & PS_STRATEGY_DECODE)
		return ps_error_set(err, PS_EINPUT,
				    "%s pebbles the decode DAG (--causal --decode P, MODEL.md section 8) only",
				    s->name);
	return ps_error_set(err, PS_EINPUT, "%s does not pebble the %s DAG (MODEL.md section %s)",
			    s->name, att->decode ? "decode" : "causal",
			    att->decode ? "8" : "7");
}

int ps_strategy_plan(const struct ps_strategy *s, const struct ps_problem *pb,
		     struct ps_plan *plan, struct ps_error *err)
{
	const char *origin = ps_strategy_origin(s);
	int rc;

	memset(plan, 0, sizeof(*plan));
	if (pb->att && !ps_strategy_serves(s, pb->att))
		return not_served(s, pb->att, err);
	if (origin)
		ps_error_clear(err);
	rc = s->plan(pb, plan, err);
	if (rc && origin)
		rc = plugin_failed(s, origin, "plan", rc, err);
	/* a plan is an output, read as one (a plugin's too): its text ends
	 * within its buffers, at a character's end, and only a chooser names
	 * another strategy */
	plan->summary[sizeof(plan->summary) - 1] = '\0';
	plan->upper.formula[sizeof(plan->upper.formula) - 1] = '\0';
	ps_utf8_copy(plan->summary, sizeof(plan->summary), plan->summary);
	ps_utf8_copy(plan->upper.formula, sizeof(plan->upper.formula), plan->upper.formula);
	if (!(s->flags & PS_STRATEGY_CHOOSER))
		plan->chosen = NULL;
	if (plan->bounded && !plan->upper.name)
		plan->upper.name = "upper bound";
	if (!rc && origin)
		rc = plan_text(s, origin, plan, err);
	return rc;
}

int ps_strategy_run(const struct ps_strategy *s, const struct ps_problem *pb,
		    struct ps_sink *sink, struct ps_error *err)
{
	const char *origin = ps_strategy_origin(s);
	struct ps_guard_sink guard;
	int rc;

	if (pb->att && !ps_strategy_serves(s, pb->att))
		return ps_error_set(err, PS_EINPUT, "%s does not pebble the %s DAG",
				    s->name, ps_attention_kind_name(pb->att));
	if (!origin)
		return s->run(pb, sink, err);
	ps_guard_sink_init(&guard, sink, pb->att,
			   pb->att ? pb->att->dag.node_count :
			   ((const struct ps_dag *)pb->xdag)->node_count); /* its first member */
	ps_error_clear(err);
	rc = s->run(pb, &guard.sink, err);
	if (guard.failed) {
		/* whatever the plugin did with the guard's answer */
		char who[PS_ERROR_MAX];

		plugin_named(s, origin, who, sizeof(who));
		return ps_error_set(err, PS_EINVALID, "%s: %s", who, guard.why.msg);
	}
	if (guard.next_failed)
		rc = guard.next_rc; /* a sink's error, even one the plugin let pass */
	else if (rc)
		return plugin_failed(s, origin, "run", rc, err);
	if (rc == PS_EINVALID)
		ps_error_clear(err); /* the engine's verdict, which it keeps */
	return rc;
}
