#include <stdio.h>

#include "cli/cli.h"
#include "pebblesim/explicit.h"

int main(int argc, char **argv)
{
	/* igraph's default handler aborts; errors come back as codes instead */
	ps_igraph_setup();
	return ps_cli_main(argc, argv, stdout, stderr);
}
