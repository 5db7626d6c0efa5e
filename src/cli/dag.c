/*
 * pebblesim dag: the attention DAG materialised and written with igraph.
 */
#include "cli.h"

#include <errno.h>
#include <string.h>

#include "pebblesim/output.h"

const struct cli_option dag_options[] = {
	CLI_OPT_N("rows of Q, K, V (the sequence length), N >= 1"),
	CLI_OPT_D,
	CLI_OPT_G,
	CLI_OPT_NO_NORMALIZE,
	CLI_OPT_CAUSAL,
	CLI_OPT_DECODE,
	CLI_OPT_ATTENTION,
	{ OPT_FORMAT, 0, "format", CLI_STRING, offsetof(struct cli_args, format), 0, 0, "F",
	  "graphml (the default) or gml, which `run --dag` reads\n"
	  "back as the same game; edgelist, read back without\n"
	  "roles (every vertex but the inputs plain); dot, for\n"
	  "drawing only" },
	{ OPT_OUTPUT, 'o', NULL, CLI_STRING, offsetof(struct cli_args, output), 0, 0, "FILE",
	  "write to FILE instead of standard output (- for it)" },
	CLI_OPT_HELP,
	CLI_OPT_END,
};

int cmd_dag(const struct cli_command *cmd, const struct cli_args *a,
	    FILE *out, FILE *errout)
{
	const char *format = a->format ? a->format : "graphml";
	struct ps_attention att;
	struct ps_error err;
	struct ps_output file;
	igraph_t graph;
	int rc;

	if ((rc = cli_check_attention(cmd, a, errout)))
		return rc;
	if ((rc = cli_require(cmd, a, errout, "dag needs -n, -d and -g (exact attention: -n and -d)",
			      (const enum cli_option_id[]){ OPT_N, OPT_D, OPT_G },
			      cli_wants_exact(a) ? 2 : 3)))
		return rc;
	if (strcmp(format, "graphml") && strcmp(format, "gml") &&
	    strcmp(format, "dot") && strcmp(format, "edgelist"))
		return cli_usage_error(cmd, errout,
				       "unknown format '%s': graphml, gml, dot or edgelist", format);
	if ((rc = cli_build_attention(a, &att, false, errout)))
		return rc;
	/* MODEL.md section 8: the outputs that feed later rows */
	if (att.decode)
		fprintf(errout, "pebblesim: note: the decode DAG's outputs %s and %s[t] (t < n - 1) are no sinks; read back with --dag, only the sinks are outputs (docs/DAG_FILES.md)\n",
			att.exact ? "K[t], V[t]" : "the last state H[n-1,m,b]",
			att.normalize ? "A" : att.exact ? "O" : "N");
	ps_error_clear(&err);
	if (ps_attention_to_igraph(&att, &graph, &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		ps_attention_free(&att);
		return PS_EXIT_USAGE;
	}
	/* atomic for a file, in place for a special file (docs/SECURITY.md) */
	if (ps_output_open(&file, a->output ? a->output : "-", "DAG file", &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		rc = PS_EXIT_USAGE;
	} else if (ps_igraph_write(&graph, format, file.file == stdout ? out : file.file, &err)) {
		/* a write that failed in the file is told by its close, which
		 * names the file and the reason */
		if (file.file != stdout && ferror(file.file))
			ps_output_close(&file, true, "DAG file", &err);
		else
			ps_output_close(&file, false, "DAG file", NULL);
		fprintf(errout, "pebblesim: %s\n", err.msg);
		rc = PS_EXIT_USAGE;
	} else if (ps_output_close(&file, true, "DAG file", &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		rc = PS_EXIT_USAGE;
	}
	ps_igraph_free(&graph);
	ps_attention_free(&att);
	return rc;
}

const struct cli_help dag_help = {
	"dag -n N -d D (-g G | --attention exact) [--no-normalize] [--format graphml|gml|edgelist|dot] [-o FILE]",
	"write the attention DAG with igraph (GraphML, GML, edge list, DOT)",
	"Materialises the approximate-attention DAG, or exact attention's with\n"
	"--attention exact (vertex v is node v, an edge\n"
	"from each parent) with the vertex attributes kind, label, role and the\n"
	"coordinates i, j, a, b, m (integers, -1 where a kind has none), and\n"
	"writes it with igraph (docs/DAG_FILES.md). GraphML and GML read back with\n"
	"`run --dag` as the same game.\n",
	"  pebblesim dag -n 8 -d 3 -g 2 -o attention.graphml\n"
	"      the DAG as GraphML, coordinates typed long\n"
	"  pebblesim dag -n 2 -d 1 -g 1 --format gml | pebblesim run --dag - -M 16\n"
	"      written as GML and pebbled from standard input\n",
};
