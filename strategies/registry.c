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
