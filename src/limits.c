/*
 * The memory limit (include/pebblesim/limits.h).
 */
#include "pebblesim/limits.h"
#include "pebblesim/common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char src_physical[] = "this machine has";
static const char src_rlimit[] = "the address-space limit (ulimit -v) is";
static const char src_cgroup[] = "the cgroup's memory limit is";
static const char src_cap[] = "pebblesim's own cap is";
static uint64_t memory_cap;
static unsigned memory_share = 1;

void ps_memory_limit_cap(uint64_t bytes)
{
	memory_cap = bytes;
}

void ps_memory_limit_share(unsigned processes)
{
	memory_share = processes ? processes : 1;
}

/* A cgroup limit file's value: bytes, or UINT64_MAX for "max" or junk. */
static uint64_t cgroup_value(const char *text)
{
	unsigned long long v;
	char *end;

	if (!text || text[0] < '0' || text[0] > '9')
		return UINT64_MAX; /* "max": no limit */
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || (*end && *end != '\n'))
		return UINT64_MAX;
	return v;
}

/* The least of the three, cg already a number (UINT64_MAX: none). */
static uint64_t least_limit(uint64_t phys, uint64_t rlimit_as, uint64_t cg,
			    const char **source)
{
	uint64_t limit = phys;
	const char *why = src_physical;

	if (rlimit_as < limit)
		limit = rlimit_as, why = src_rlimit;
	if (cg < limit)
		limit = cg, why = src_cgroup;
	if (source)
		*source = why;
	return limit;
}

uint64_t ps_memory_limit_of(uint64_t phys, uint64_t rlimit_as,
			    const char *cgroup, const char **source)
{
	return least_limit(phys, rlimit_as, cgroup_value(cgroup), source);
}

static uint64_t read_limit_file(const char *path)
{
	char text[64];
	FILE *f = fopen(path, "r");
	uint64_t v = UINT64_MAX;

	if (!f)
		return v;
	if (fgets(text, sizeof(text), f))
		v = cgroup_value(text);
	fclose(f);
	return v;
}

/* The least limit in dir/file and in each parent directory up to root. */
static uint64_t hierarchy_limit(const char *root, const char *cgroup_path,
				const char *file)
{
	char path[4096];
	uint64_t least = UINT64_MAX;
	size_t len;

	if (snprintf(path, sizeof(path), "%s%s", root, cgroup_path) >= (int)sizeof(path))
		return least;
	len = strlen(path);
	while (len >= strlen(root)) {
		char full[4096 + 32];
		uint64_t v;

		path[len] = '\0';
		snprintf(full, sizeof(full), "%s/%s", path, file);
		v = read_limit_file(full);
		least = v < least ? v : least;
		while (len > strlen(root) && path[len - 1] != '/')
			len--;
		if (len == strlen(root))
			break;
		len--; /* the slash */
	}
	return least;
}

/* cgroup v2 ("0::/path") and v1 ("N:memory:/path") from /proc/self/cgroup;
 * the mount's own root file too, as a container sees it. */
static uint64_t cgroup_limit(void)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[4096];
	uint64_t least = read_limit_file("/sys/fs/cgroup/memory.max"), v;

	v = read_limit_file("/sys/fs/cgroup/memory/memory.limit_in_bytes");
	least = v < least ? v : least;
	if (!f)
		return least;
	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (!strncmp(line, "0::/", 4))
			v = hierarchy_limit("/sys/fs/cgroup", line + 3, "memory.max");
		else if (strstr(line, ":memory:/"))
			v = hierarchy_limit("/sys/fs/cgroup/memory",
					    strstr(line, ":memory:/") + 8,
					    "memory.limit_in_bytes");
		else
			continue;
		least = v < least ? v : least;
	}
	fclose(f);
	return least;
}

uint64_t ps_memory_limit(const char **source)
{
	static uint64_t phys, cg;
	static int cg_read;
	uint64_t as = UINT64_MAX;
	uint64_t limit;
	struct rlimit rl;

	/* physical memory and the cgroup's files once a process (a run does
	 * not outlive a change; a run asks for the limit a hundred times, and
	 * sysconf's is a system call); RLIMIT_AS each time, which the process
	 * may lower itself */
	if (!cg_read) {
		long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

		phys = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : UINT64_MAX;
		cg = cgroup_limit();
		cg_read = 1;
	}
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		as = (uint64_t)rl.rlim_cur;

	limit = least_limit(phys, as, cg, source);
	if (memory_cap && memory_cap < limit) {
		limit = memory_cap;
		if (source)
			*source = src_cap;
	}
	return limit == UINT64_MAX ? limit : limit / memory_share;
}

/* "1.9 GiB", "12.0 MiB", "3.5 KiB": bytes for a message, in buf. */
static const char *size_text(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB" };
	double v = (double)bytes / 1024;
	int u = 0;

	while (u < 2 && v >= 1024) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

/*
 * A request this small (times the processes sharing the limit) fits
 * nine tenths of every limit a process can run under: the dynamic loader
 * alone does not start pebblesim under `ulimit -v` of 3 MiB, nor could a
 * cgroup of less hold its resident pages. Checked without a system call:
 * a run asks about a hundred such sizes (plans, tables) before it starts.
 */
#define SMALL_REQUEST (UINT64_C(256) << 10)

int ps_memory_fits(uint64_t bytes, const char *what, struct ps_error *err)
{
	const char *source;
	uint64_t limit;
	char need[32], have[32];

	char whole[32];

	if (bytes <= SMALL_REQUEST / memory_share &&
	    (!memory_cap || bytes <= memory_cap / memory_share / 10 * 9))
		return PS_OK;
	limit = ps_memory_limit(&source);
	if (bytes <= limit / 10 * 9)
		return PS_OK;
	if (memory_share > 1)
		return ps_error_set(err, PS_ENOMEM, "%s needs about %s; %s %s, %s for each of %u processes",
				    what, size_text(bytes, need, sizeof(need)), source,
				    size_text(limit * memory_share, whole, sizeof(whole)),
				    size_text(limit, have, sizeof(have)), memory_share);
	return ps_error_set(err, PS_ENOMEM, "%s needs about %s; %s %s", what,
			    size_text(bytes, need, sizeof(need)), source,
			    size_text(limit, have, sizeof(have)));
}
