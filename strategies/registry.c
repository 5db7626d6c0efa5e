#include <stdio.h>
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
extern const struct ps_strategy ps_strategy_best;
extern const struct ps_strategy ps_strategy_flash;
extern const struct ps_strategy ps_strategy_exact_matmul;
extern const struct ps_strategy ps_strategy_naive_exact;
extern const struct ps_strategy ps_strategy_naive_exact_belady;
extern const struct ps_strategy ps_strategy_lru;
extern const struct ps_strategy ps_strategy_belady;

const struct ps_strategy *const ps_strategies[] = {
	&ps_strategy_generic,
	&ps_strategy_case1,
	&ps_strategy_keylemma,
	&ps_strategy_subtile,
	&ps_strategy_matmul,
	&ps_strategy_colpass,
	&ps_strategy_resident,
	&ps_strategy_naive,
	&ps_strategy_naive_belady,
	&ps_strategy_best,
	&ps_strategy_flash,
	&ps_strategy_exact_matmul,
	&ps_strategy_naive_exact,
	&ps_strategy_naive_exact_belady,
	&ps_strategy_lru,
	&ps_strategy_belady,
};

const size_t ps_strategy_count = sizeof(ps_strategies) / sizeof(ps_strategies[0]);

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
