/*
 * The command line (MODEL.md section 4), callable from tests: output and
 * diagnostics go to the given streams and the exit status is returned.
 */
#ifndef PEBBLESIM_CLI_H
#define PEBBLESIM_CLI_H

#include <stdio.h>

/* Exit statuses. */
enum {
	PS_EXIT_VALID = 0,   /* valid sequence, bounds hold */
	PS_EXIT_INVALID = 1, /* invalid sequence, or a bound contradicted */
	PS_EXIT_USAGE = 2,   /* bad usage or input */
};

int ps_cli_main(int argc, char **argv, FILE *out, FILE *errout);

#endif
