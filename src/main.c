#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "pebblesim/output.h"

int main(int argc, char **argv)
{
	int status;

	/* igraph is not loaded here: the explicit-DAG module, opened on
	 * first use, installs its handlers (dags/explicit_load.c) */
	/* a write past `ulimit -f` an error, standard output's too; the
	 * handlers that remove temporaries are installed with the first
	 * temporary (output.h), not here: 90 system calls at every start */
	ps_output_catch_write_limit();
	status = ps_cli_main(argc, argv, stdout, stderr);
	/* ps_cli_main flushed and checked standard output; closing it can
	 * still fail (a file system that reports errors at close) */
	if (fclose(stdout) == EOF && status != PS_EXIT_USAGE) {
		fprintf(stderr, "pebblesim: cannot write the output: %s\n",
			strerror(errno));
		status = PS_EXIT_USAGE;
	}
	return status;
}
