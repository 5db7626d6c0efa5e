#include <stdio.h>
#include <string.h>

#include "pebblesim/strategy.h"

extern const struct ps_strategy ps_strategy_generic;

const struct ps_strategy *const ps_strategies[] = {
	&ps_strategy_generic,
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
