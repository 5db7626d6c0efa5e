/*
 * Entry points for other languages (the Python module `pebblesim`, through
 * ctypes; docs/EXTENDING.md): a command of the command line run inside the
 * calling process, its output and diagnostics returned as strings. With
 * --json the output is the document `pebblesim ... --json` prints
 * (docs/pebblesim.schema.json), so a script reads exactly what the
 * command line reports.
 */
#ifndef PEBBLESIM_SCRIPT_H
#define PEBBLESIM_SCRIPT_H

#include <stddef.h>

#include "pebblesim/common.h"

/*
 * Runs `pebblesim argv[1] ... argv[argc-1]` (argv[0] is the program's
 * name, as main has it; the array is copied, the strings are not
 * changed). input, when not NULL, is the text an operand "-" reads
 * (validate's trace) in place of standard input: input_len bytes, no
 * file involved. *out and *errout receive what the command wrote on
 * standard output and standard error, each a NUL-terminated string to
 * release with ps_script_free. Returns the exit status (MODEL.md section
 * 4: 0 valid, 1 invalid or a bound contradicted, 2 bad usage or input),
 * or PS_ENOMEM with *out and *errout NULL when no stream could be made.
 *
 * Calls are not reentrant (the command line's option parser is not):
 * callers from several threads hold a lock around them.
 */
int ps_script_command(int argc, const char *const *argv, const char *input,
		      size_t input_len, char **out, char **errout);

void ps_script_free(char *text);

/* The library's version, PS_VERSION ("0.1.0"). */
const char *ps_script_version(void);

#endif
