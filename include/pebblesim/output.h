/*
 * Output files (docs/SECURITY.md): what stands at an output's path is
 * never destroyed by writing it.
 *
 * - A regular file, or a path where nothing stands, is written to a
 *   temporary file beside it and renamed over it when complete: readers
 *   see the old file or the new one, never a partial one.
 * - A symbolic link is followed; its target is written the same way.
 * - A device, FIFO, socket or other special file is written in place,
 *   streaming, and never replaced.
 * - "-" is standard output.
 *
 * A regular file the user cannot write is not replaced (PS_EIO,
 * "Permission denied"), as cp and sort -o refuse it.
 *
 * A temporary file is removed on every signal that ends the process from
 * outside (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, ...; the
 * signal then takes its default action); SIGXFSZ is ignored, so that a
 * file past `ulimit -f` is a write error. SIGKILL cannot be caught and
 * leaves the temporary.
 */
#ifndef PEBBLESIM_OUTPUT_H
#define PEBBLESIM_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "pebblesim/common.h"

struct ps_output {
	FILE *file;     /* write here */
	char *path;     /* as given, for messages; NULL for standard output */
	char *target;   /* the file that appears: path with links resolved */
	char *tmp_path; /* the temporary beside target, or NULL (in place) */
	int slot;       /* where the signal handlers find tmp_path, or -1 */
};

/* Opens path for writing ("-": standard output); what the message calls it
 * is `what` ("trace", "DAG file"). */
int ps_output_open(struct ps_output *o, const char *path, const char *what,
		   struct ps_error *err);

/*
 * Flushes and closes; with keep, makes the file appear under its name
 * (renames the temporary), else removes the temporary. Returns PS_EIO with
 * a message when a write, the flush, the close or the rename failed (the
 * temporary is then removed).
 */
int ps_output_close(struct ps_output *o, bool keep, const char *what,
		    struct ps_error *err);

/*
 * Installs the signal handlers above where the caller left the default
 * action (a signal ignored, by nohup, stays ignored), SIGXFSZ's among
 * them. ps_output_open and the ps_scratch functions below do it for
 * every temporary they make, so that a process that makes none spends no
 * system call on them.
 */
void ps_output_catch_signals(void);

/*
 * SIGXFSZ alone ignored (where its action is the default): a write past
 * `ulimit -f` then fails with EFBIG, reported as any write error. main
 * does it at start-up, for standard output too.
 */
void ps_output_catch_write_limit(void);

/*
 * A private directory (mkdtemp, mode 0700) for the files a helper program
 * reads (gnuplot's script and data): in $TMPDIR when it is absolute, else
 * /tmp, named pebblesim-WHAT-XXXXXX. Its files and itself are removed by
 * ps_scratch_remove, or by the signal handlers above.
 */
#define PS_SCRATCH_FILES 4

struct ps_scratch {
	char dir[512];
	char names[PS_SCRATCH_FILES][16];
	int slots[PS_SCRATCH_FILES], slot;
	size_t count;
};

int ps_scratch_open(struct ps_scratch *s, const char *what, struct ps_error *err);

/* Creates name in the directory (O_EXCL, mode 0600): a descriptor to
 * write, or a negative code with err. */
int ps_scratch_create(struct ps_scratch *s, const char *name, struct ps_error *err);

void ps_scratch_remove(struct ps_scratch *s);

/*
 * Refuses (PS_EINPUT) an output path that is one of the inputs: the same
 * regular file after links (device and inode), "-" meaning standard
 * input as it was opened. NULL entries are skipped. A special file
 * (device, FIFO) is not destroyed by writing and is not refused.
 */
int ps_output_check_inputs(const char *path, const char *const *inputs,
			   size_t count, struct ps_error *err);

/*
 * Standard output at the end of a command: flushed and checked. Returns
 * status, or PS_EXIT_USAGE (2) after a message on errout when a write
 * to out failed.
 */
int ps_output_finish_stream(FILE *out, int status, FILE *errout);

#endif
