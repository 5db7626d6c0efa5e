/*
 * ps_script_command (include/pebblesim/script.h): the command line run
 * into memory streams, for languages that call the shared library.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "pebblesim/explicit.h"
#include "pebblesim/script.h"

const char *ps_script_version(void)
{
	return PS_VERSION;
}

void ps_script_free(char *text)
{
	free(text);
}

int ps_script_command(int argc, const char *const *argv, const char *input,
		      size_t input_len, char **out, char **errout)
{
	static const char empty[1] = "";
	size_t out_len = 0, err_len = 0;
	FILE *out_stream, *err_stream, *in_stream = NULL;
	char **args;
	int status;

	*out = *errout = NULL;
	if (argc < 1)
		return PS_EINPUT;
	/* getopt permutes the array it is given: a copy, ended by NULL */
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		return PS_ENOMEM;
	for (int k = 0; k < argc; k++)
		args[k] = (char *)argv[k];
	out_stream = open_memstream(out, &out_len);
	err_stream = open_memstream(errout, &err_len);
	if (input)
		/* fmemopen reads an empty buffer of size 1 as empty text */
		in_stream = fmemopen((void *)(input_len ? input : empty),
				     input_len ? input_len : 1, "r");
	if (!out_stream || !err_stream || (input && !in_stream)) {
		if (out_stream)
			fclose(out_stream);
		if (err_stream)
			fclose(err_stream);
		if (in_stream)
			fclose(in_stream);
		free(*out);
		free(*errout);
		*out = *errout = NULL;
		free(args);
		return PS_ENOMEM;
	}
	if (input && !input_len)
		fgetc(in_stream); /* the one byte of the empty buffer: at its end */
	/* igraph's default handler would abort the caller's process */
	ps_igraph_setup();
	status = ps_cli_main_input(argc, args, in_stream, out_stream, err_stream);
	fclose(out_stream);
	fclose(err_stream);
	if (in_stream)
		fclose(in_stream);
	free(args);
	return status;
}
