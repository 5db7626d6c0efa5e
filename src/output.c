/*
 * Output files written without destroying what stands at their path
 * (include/pebblesim/output.h, docs/SECURITY.md).
 */
#include "pebblesim/output.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pebblesim/common.h"

/*
 * The temporaries the signal handlers remove: files, then the private
 * directories that held them. A handler may only call async-signal-safe
 * functions: it reads these fixed buffers, unlinks, removes directories
 * and re-raises. A slot is filled before its flag is set, and its flag
 * cleared before the buffer is reused. A child forked before it execs
 * (gnuplot) shares the slots but not the process id, and removes nothing.
 */
#define PS_OUTPUT_SLOTS 8
#define PS_OUTPUT_PATH_MAX 4096

enum { SLOT_FREE, SLOT_FILE, SLOT_DIRECTORY };

static char tmp_slots[PS_OUTPUT_SLOTS][PS_OUTPUT_PATH_MAX];
static volatile sig_atomic_t tmp_used[PS_OUTPUT_SLOTS];
static volatile pid_t tmp_owner;

/*
 * Every signal whose default action ends the process and that arrives
 * from outside it (kill, a terminal, a timer, a closed pipe, a limit of
 * CPU time). A fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) is a crash
 * of pebblesim itself, left to its default action and the sanitizers.
 * SIGXFSZ is not among them: it is ignored, so that a write past the file
 * size limit (ulimit -f) fails with EFBIG and is reported as any other
 * write error.
 */
static const int cleanup_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE,
	SIGVTALRM, SIGPROF, SIGXCPU,
#ifdef SIGPOLL
	SIGPOLL,
#endif
#ifdef SIGPWR
	SIGPWR,
#endif
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};

static void remove_temporaries(int sig)
{
	int saved = errno;

	if (getpid() == tmp_owner) {
		for (int k = 0; k < PS_OUTPUT_SLOTS; k++)
			if (tmp_used[k] == SLOT_FILE)
				unlink(tmp_slots[k]);
		for (int k = 0; k < PS_OUTPUT_SLOTS; k++)
			if (tmp_used[k] == SLOT_DIRECTORY)
				rmdir(tmp_slots[k]);
	}
	/* then the signal's own action: the process ends as it would have */
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

/* Installs the handler for sig where its action is the default: a signal
 * ignored by the caller (nohup) stays ignored, and a handler of the
 * caller's own stays in place. */
static void catch_signal(int sig, void (*handler)(int))
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
		sigaction(sig, &sa, NULL);
}

void ps_output_catch_write_limit(void)
{
	catch_signal(SIGXFSZ, SIG_IGN);
}

void ps_output_catch_signals(void)
{
	for (size_t k = 0; k < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); k++)
		catch_signal(cleanup_signals[k], remove_temporaries);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		catch_signal(sig, remove_temporaries);
	ps_output_catch_write_limit();
}

/* Checked at every temporary: a caller may have reset a handler since. */
static int register_temporary(const char *path, int kind)
{
	if (strlen(path) >= PS_OUTPUT_PATH_MAX)
		return -1;
	for (int k = 0; k < PS_OUTPUT_SLOTS; k++)
		if (!tmp_used[k]) {
			ps_output_catch_signals();
			tmp_owner = getpid();
			memcpy(tmp_slots[k], path, strlen(path) + 1);
			tmp_used[k] = kind;
			return k;
		}
	return -1;
}

static void unregister_temporary(int slot)
{
	if (slot >= 0)
		tmp_used[slot] = SLOT_FREE;
}

/* The directory part of path, with a final slash, or "" (malloc'd). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) + 1 : 0;
	char *dir = malloc(len + 1);

	if (dir) {
		memcpy(dir, path, len);
		dir[len] = '\0';
	}
	return dir;
}

/*
 * The file that writing path writes: path itself, or where its chain of
 * symbolic links ends (possibly a path where nothing stands yet); a link
 * that ends in a special file stands for it.
 */
static int resolve_target(const char *path, char **target)
{
	char *cur = strdup(path);

	for (int hops = 0; cur; hops++) {
		struct stat st;
		char link[PS_OUTPUT_PATH_MAX], *dir, *next;
		ssize_t len;

		/* a link to a device, FIFO or pipe is written through the link,
		 * as open follows it: /dev/stdout ends in /proc/self/fd/1,
		 * whose "target" of a pipe, "pipe:[N]", is no path */
		if ((!stat(cur, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) ||
		    lstat(cur, &st) || !S_ISLNK(st.st_mode)) {
			*target = cur;
			return 0;
		}
		if (hops == 40) {
			free(cur);
			errno = ELOOP;
			return -1;
		}
		len = readlink(cur, link, sizeof(link) - 1);
		if (len < 0) {
			free(cur);
			return -1;
		}
		link[len] = '\0';
		/* a relative link is relative to the directory it lies in */
		dir = link[0] == '/' ? strdup("") : dir_of(cur);
		next = dir ? malloc(strlen(dir) + (size_t)len + 1) : NULL;
		if (next)
			sprintf(next, "%s%s", dir, link);
		free(dir);
		free(cur);
		cur = next;
	}
	errno = ENOMEM;
	return -1;
}

static int open_failed(struct ps_output *o, const char *path, const char *what,
		       struct ps_error *err)
{
	int saved = errno;

	free(o->target);
	free(o->tmp_path);
	free(o->path);
	memset(o, 0, sizeof(*o));
	o->slot = -1;
	return ps_error_set(err, PS_EIO, "cannot write the %s '%s': %s", what,
			    path, strerror(saved));
}

/*
 * Whether the user may replace the file at target: rename needs only the
 * directory's permission, but a file the user cannot write is not theirs
 * to replace (cp and sort -o refuse it too). The effective ids decide, as
 * for open; root may write any file.
 */
static int check_writable(const char *target)
{
	return faccessat(AT_FDCWD, target, W_OK, AT_EACCESS);
}

int ps_output_open(struct ps_output *o, const char *path, const char *what,
		   struct ps_error *err)
{
	static const char tmp_name[] = ".pebblesim-XXXXXX";
	struct stat st;
	bool exists;
	char *dir;
	int fd;

	memset(o, 0, sizeof(*o));
	o->slot = -1;
	if (!strcmp(path, "-")) {
		o->file = stdout;
		return PS_OK;
	}
	if (!(o->path = strdup(path)) || resolve_target(path, &o->target))
		return open_failed(o, path, what, err);
	exists = stat(o->target, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return open_failed(o, path, what, err);
		}
		/* a device, FIFO or socket: written in place, never replaced */
		fd = open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 || !(o->file = fdopen(fd, "w"))) {
			if (fd >= 0)
				close(fd);
			return open_failed(o, path, what, err);
		}
		return PS_OK;
	}
	if (exists && check_writable(o->target))
		return open_failed(o, path, what, err);
	/*
	 * A regular file or a new path: a temporary beside it, renamed. Its
	 * name is short, so that any name the directory takes can be
	 * written, and unpredictable (mkstemp creates it, O_EXCL).
	 */
	if (!(dir = dir_of(o->target)) ||
	    !(o->tmp_path = malloc(strlen(dir) + sizeof(tmp_name)))) {
		free(dir);
		return open_failed(o, path, what, err);
	}
	sprintf(o->tmp_path, "%s%s", dir, tmp_name);
	free(dir);
	fd = mkstemp(o->tmp_path);
	if (fd < 0)
		return open_failed(o, path, what, err);
	o->slot = register_temporary(o->tmp_path, SLOT_FILE);
	{
		/* mkstemp makes it private: it takes the file's mode, or the
		 * usual mode of a new file */
		mode_t mask = umask(0);

		umask(mask);
		if (fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask)) {
			/* the file stays private: not a reason to fail */
		}
	}
	/* a helper that pebblesim runs (gnuplot) does not inherit it */
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (!(o->file = fdopen(fd, "w"))) {
		int saved = errno;

		close(fd);
		unlink(o->tmp_path);
		unregister_temporary(o->slot);
		errno = saved;
		return open_failed(o, path, what, err);
	}
	return PS_OK;
}

int ps_output_close(struct ps_output *o, bool keep, const char *what,
		    struct ps_error *err)
{
	bool failed = false;
	int saved = 0, rc = PS_OK;

	if (!o->file)
		return PS_OK;
	if (fflush(o->file) == EOF || ferror(o->file)) {
		failed = true;
		saved = errno;
	}
	if (o->file != stdout && fclose(o->file) == EOF && !failed) {
		failed = true;
		saved = errno;
	}
	if (o->tmp_path) {
		if (keep && !failed && rename(o->tmp_path, o->target)) {
			failed = true;
			saved = errno;
		}
		if (!keep || failed)
			unlink(o->tmp_path);
		unregister_temporary(o->slot);
	}
	if (keep && failed)
		rc = o->path ? ps_error_set(err, PS_EIO, "cannot write the %s '%s': %s",
					    what, o->path, strerror(saved))
			     : ps_error_set(err, PS_EIO, "cannot write the %s to standard output: %s",
					    what, strerror(saved));
	free(o->path);
	free(o->target);
	free(o->tmp_path);
	memset(o, 0, sizeof(*o));
	o->slot = -1;
	return rc;
}

int ps_scratch_open(struct ps_scratch *s, const char *what, struct ps_error *err)
{
	const char *tmpdir = getenv("TMPDIR");

	memset(s, 0, sizeof(*s));
	s->slot = -1;
	/* TMPDIR as the environment names it, if it is absolute and short */
	if (!tmpdir || tmpdir[0] != '/' || strlen(tmpdir) > sizeof(s->dir) - 32)
		tmpdir = "/tmp";
	snprintf(s->dir, sizeof(s->dir), "%s/pebblesim-%s-XXXXXX", tmpdir, what);
	if (!mkdtemp(s->dir))
		return ps_error_set(err, PS_EIO, "cannot make a directory for the %s in '%s': %s",
				    what, tmpdir, strerror(errno));
	s->slot = register_temporary(s->dir, SLOT_DIRECTORY);
	return PS_OK;
}

int ps_scratch_create(struct ps_scratch *s, const char *name, struct ps_error *err)
{
	char path[sizeof(s->dir) + 32];
	int fd;

	if (s->count == PS_SCRATCH_FILES || strlen(name) >= sizeof(s->names[0]) || strchr(name, '/'))
		return ps_error_set(err, PS_EINPUT, "no room for '%s' in '%s'", name, s->dir);
	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return ps_error_set(err, PS_EIO, "cannot create '%s': %s", path, strerror(errno));
	snprintf(s->names[s->count], sizeof(s->names[0]), "%s", name);
	s->slots[s->count++] = register_temporary(path, SLOT_FILE);
	return fd;
}

void ps_scratch_remove(struct ps_scratch *s)
{
	char path[sizeof(s->dir) + 32];

	for (size_t k = 0; k < s->count; k++) {
		snprintf(path, sizeof(path), "%s/%s", s->dir, s->names[k]);
		unlink(path);
		unregister_temporary(s->slots[k]);
	}
	if (s->dir[0])
		rmdir(s->dir);
	unregister_temporary(s->slot);
	memset(s, 0, sizeof(*s));
	s->slot = -1;
}

/*
 * The output is compared with each input after links, by device and
 * inode; "-" is standard input, compared by what it was opened from
 * (`run --dag - --trace d.graphml < d.graphml`). Only a regular file is
 * destroyed by writing: a device, FIFO or terminal is both read and
 * written in place (a terminal is standard input and output at once). An
 * output where nothing stands yet cannot be an input that exists, and an
 * input that does not exist cannot be read: neither needs more.
 */
int ps_output_check_inputs(const char *path, const char *const *inputs,
			   size_t count, struct ps_error *err)
{
	struct stat out;

	if (!path || !strcmp(path, "-") || stat(path, &out) || !S_ISREG(out.st_mode))
		return PS_OK;
	for (size_t k = 0; k < count; k++) {
		bool piped = inputs[k] && !strcmp(inputs[k], "-");
		struct stat in;

		if (!inputs[k] || (piped ? fstat(STDIN_FILENO, &in) : stat(inputs[k], &in)))
			continue;
		if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
			return ps_error_set(err, PS_EINPUT,
					    "the output '%s' is the input '%s'%s: refusing to overwrite it",
					    path, inputs[k], piped ? " (standard input)" : "");
	}
	return PS_OK;
}

/*
 * Why a stream failed, where its errno is gone: a write that failed while
 * the command ran (a full buffer) left ferror set, and the system calls
 * since have changed errno. A regular file grown to the file size limit
 * (ulimit -f) is the one cause that can still be told: the write past it
 * failed with EFBIG.
 */
static int stream_error(FILE *out, int saved)
{
	struct stat st;
	struct rlimit rl;
	int fd = fileno(out);

	if (saved || fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    getrlimit(RLIMIT_FSIZE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return saved;
	return (rlim_t)st.st_size >= rl.rlim_cur ? EFBIG : 0;
}

int ps_output_finish_stream(FILE *out, int status, FILE *errout)
{
	errno = 0;
	if (fflush(out) == EOF || ferror(out)) {
		int saved = stream_error(out, errno);

		/* a command that failed has said why already */
		if (status == PS_EXIT_USAGE)
			return status;
		fprintf(errout, "pebblesim: cannot write the output: %s\n",
			saved ? strerror(saved) : "write error");
		return PS_EXIT_USAGE;
	}
	return status;
}
