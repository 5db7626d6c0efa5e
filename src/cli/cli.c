/*
 * pebblesim's command line: a table of commands in the manner of git.c,
 * each with its own option table (a file per command under src/cli/),
 * looked up by name; `run` when the first argument names none.
 */
#include "cli.h"

#include <string.h>

#include "pebblesim/output.h"
#include "pebblesim/plot.h"

const struct cli_option help_options[] = {
	CLI_OPT_HELP,
	CLI_OPT_END,
};

const struct cli_command cli_commands[] = {
	{ "run", cmd_run, run_options, &run_help, 0, 0 },
	{ "compare", cmd_compare, compare_options, &compare_help, 0, 0 },
	{ "validate", cmd_validate, validate_options, &validate_help, 1, 1 },
	{ "dag", cmd_dag, dag_options, &dag_help, 0, 0 },
	{ "sweep", cmd_sweep, sweep_options, &sweep_help, 0, 64 },
	{ "frontier", cmd_frontier, frontier_options, &frontier_help, 0, 0 },
	{ "optimal", cmd_optimal, optimal_options, &optimal_help, 0, 0 },
	{ "map", cmd_map, map_options, &map_help, 0, 0 },
	{ "view", cmd_view, view_options, &view_help, 1, 1 },
	{ "list", cmd_list, list_options, &list_help, 0, 0 },
	{ "help", cmd_help, help_options, &help_help, 0, 1 },
};

const size_t cli_command_count = sizeof(cli_commands) / sizeof(cli_commands[0]);

/* pebblesim help [COMMAND]: the top-level help, or a command's. */
int cmd_help(const struct cli_command *cmd, const struct cli_args *a,
	     FILE *out, FILE *errout)
{
	const struct cli_command *of;
	const char *near;

	if (!a->operand_count) {
		cli_print_help(out);
		return PS_EXIT_VALID;
	}
	of = cli_find_command(a->operands[0], &near);
	if (!of && near)
		return cli_usage_error(cmd, errout, "unknown command '%s'; did you mean '%s'?",
				       a->operands[0], near);
	if (!of)
		return cli_usage_error(cmd, errout, "unknown command '%s'", a->operands[0]);
	cli_print_command_help(of, out);
	return PS_EXIT_VALID;
}

const struct cli_help help_help = {
	"help [COMMAND]",
	"this help, or a command's (as `pebblesim COMMAND --help`)",
	"Prints the list of commands, or the options of one command with their\n"
	"meaning and examples.\n",
	"  pebblesim help validate\n",
};

/*
 * Every output of the command against every input (docs/SECURITY.md),
 * once for all commands, before anything is read or written: an output
 * that is an input, by device and inode after links or as standard input
 * redirected from it, is refused naming both.
 */
static int check_outputs(const struct cli_args *a, FILE *errout)
{
	const char *outputs[] = { a->trace, a->values_output, a->csv, a->plot, a->output,
				  a->plot_script, NULL };
	const char *inputs[4 + 64] = { a->dag_file, a->q_file, a->k_file, a->v_file };
	char plot_data[4096];
	size_t count = 4;
	struct ps_error err;

	/* --plot-script FILE.gp writes FILE.dat beside it */
	ps_error_clear(&err);
	if (a->plot_script) {
		if (ps_plot_script_data_path(a->plot_script, plot_data, sizeof(plot_data), &err)) {
			fprintf(errout, "pebblesim: %s\n", err.msg);
			return PS_EXIT_USAGE;
		}
		outputs[sizeof(outputs) / sizeof(outputs[0]) - 1] = plot_data;
	}

	/* the files validate replays and sweep --merge joins */
	for (int k = 0; k < a->operand_count && count < sizeof(inputs) / sizeof(inputs[0]); k++)
		inputs[count++] = a->operands[k];
	ps_error_clear(&err);
	for (size_t k = 0; k < sizeof(outputs) / sizeof(outputs[0]); k++)
		if (ps_output_check_inputs(outputs[k], inputs, count, &err)) {
			fprintf(errout, "pebblesim: %s\n", err.msg);
			return PS_EXIT_USAGE;
		}
	return 0;
}

/* --plugin FILE: its strategies are registered for the one command. */
static int run_with_plugin(const struct cli_command *cmd, const struct cli_args *a,
			   FILE *out, FILE *errout)
{
	struct ps_error err;
	int rc;

	ps_error_clear(&err);
	if (ps_plugin_load(a->plugin, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		return PS_EXIT_USAGE;
	}
	rc = cmd->fn(cmd, a, out, errout);
	fflush(out);
	ps_plugin_unload_all();
	return rc;
}

static int dispatch(int argc, char **argv, FILE *out, FILE *errout)
{
	const struct cli_command *cmd = NULL;
	struct cli_args a;
	int rc;

	memset(&a, 0, sizeof(a));
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		cli_print_help(out);
		return PS_EXIT_VALID;
	}
	/* the build's man page and the completion script (man.c) */
	if (argc >= 2 && !strcmp(argv[1], "__man")) {
		if (argc == 2)
			return cli_man(out);
		fprintf(errout, "pebblesim: __man takes no arguments\n");
		return PS_EXIT_USAGE;
	}
	if (argc >= 2 && !strcmp(argv[1], "__complete"))
		return cli_complete(argc - 2, argv + 2, out, errout);
	if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
		fprintf(out, "pebblesim %s\n", PS_VERSION);
		return PS_EXIT_VALID;
	}
	if (argc >= 2 && argv[1][0] != '-') {
		const char *near;

		cmd = cli_find_command(argv[1], &near);
		if (!cmd) {
			fprintf(errout, "pebblesim: unknown command '%s'", argv[1]);
			if (near)
				fprintf(errout, "; did you mean '%s'?", near);
			fputc('\n', errout);
			fprintf(errout, "Try 'pebblesim --help' for the list of commands.\n");
			return PS_EXIT_USAGE;
		}
		/* the command's name stands where getopt expects the program's */
		argc--;
		argv++;
	} else {
		cmd = &cli_commands[0]; /* run */
	}
	rc = cli_parse(cmd, argc, argv, &a, errout);
	if (rc)
		return rc;
	if (a.help) {
		cli_print_command_help(cmd, out);
		return PS_EXIT_VALID;
	}
	if ((rc = check_outputs(&a, errout)))
		return rc;
	/* run: -n and -d from the shapes of --q, --k and --v (validate
	 * takes them from the trace's header) */
	if (cmd->fn == cmd_run && (rc = cli_infer_shape(cmd, &a, errout)))
		return rc;
	if (a.plugin)
		return run_with_plugin(cmd, &a, out, errout);
	return cmd->fn(cmd, &a, out, errout);
}

/* A command whose output could not be written fails (exit status 2). */
int ps_cli_main(int argc, char **argv, FILE *out, FILE *errout)
{
	return ps_output_finish_stream(out, dispatch(argc, argv, out, errout), errout);
}

/* What "-" reads while a command runs: NULL for standard input. */
static FILE *cli_input;

FILE *cli_stdin(void)
{
	return cli_input ? cli_input : stdin;
}

int ps_cli_main_input(int argc, char **argv, FILE *in, FILE *out, FILE *errout)
{
	FILE *saved = cli_input;
	int status;

	cli_input = in;
	status = ps_cli_main(argc, argv, out, errout);
	cli_input = saved;
	return status;
}
