#include <igraph.h>
#include <stdio.h>

#include "pebblesim/cli.h"

int main(int argc, char **argv)
{
	/* igraph's default handler aborts; errors come back as codes instead */
	igraph_set_error_handler(igraph_error_handler_printignore);
	return ps_cli_main(argc, argv, stdout, stderr);
}
