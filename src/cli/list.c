/*
 * pebblesim list: the strategies, the paper's section each implements,
 * and the options each takes.
 */
#include "cli.h"

const struct cli_option list_options[] = {
	CLI_OPT_JSON("print the strategies as a JSON array, with the DAG each\n"
		     "pebbles and the options it takes"),
	CLI_OPT_PLUGIN,
	CLI_OPT_HELP,
	CLI_OPT_END,
};

int cmd_list(const struct cli_command *cmd, const struct cli_args *a,
	     FILE *out, FILE *errout)
{
	(void)cmd;
	(void)errout;
	cli_list_print(a->json, out);
	return PS_EXIT_VALID;
}

const struct cli_help list_help = {
	"list [--json] [--plugin FILE.so]",
	"the strategies and the paper's sections they implement",
	"Lists the strategies of the registry, each with the paper's statement\n"
	"it implements (docs/STRATEGIES.md) and a line on what it does; with\n"
	"--plugin, a plugin's strategies after them (docs/EXTENDING.md).\n",
	"  pebblesim list\n"
	"  pebblesim list --plugin ./rowfused.so\n"
	"      with the strategies of a plugin (examples/plugin/rowfused.c)\n"
	"  pebblesim list --json | jq -r '.[] | select(.options != []) | .name'\n"
	"      the strategies that take options\n",
};
