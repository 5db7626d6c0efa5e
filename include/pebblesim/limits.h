/*
 * The memory pebblesim lets itself use (docs/SECURITY.md): the least of
 * physical memory, the address-space limit (RLIMIT_AS, `ulimit -v`) and
 * the memory limit of the process's cgroup (memory.max in cgroup v2,
 * memory.limit_in_bytes in v1), of its cgroup and every parent.
 */
#ifndef PEBBLESIM_LIMITS_H
#define PEBBLESIM_LIMITS_H

#include <stdint.h>

struct ps_error;

/* The limit in bytes (UINT64_MAX: none known); *source, when not NULL,
 * says which one it is, for messages ("this machine has", ...). */
uint64_t ps_memory_limit(const char **source);

/*
 * Whether bytes fit in nine tenths of the limit (a tenth is left for the
 * process itself): PS_OK, or PS_ENOMEM with "<what> needs about 1.9 GiB;
 * the address-space limit (ulimit -v) is 1.0 GiB" in err.
 */
int ps_memory_fits(uint64_t bytes, const char *what, struct ps_error *err);

/*
 * Lowers the limit further for this process (0: no cap), as the fuzz
 * targets do so that a large DAG is refused before libFuzzer's own memory
 * limit is reached. The cap is then the source ("the cap is").
 */
void ps_memory_limit_cap(uint64_t bytes);

/*
 * Shares the limit among processes that run at once (a sweep's workers):
 * this process then takes its limit divided by processes, and messages
 * say so. 1 (or 0): the whole limit.
 */
void ps_memory_limit_share(unsigned processes);

/*
 * The same from given values, for tests: phys and rlimit_as in bytes
 * (UINT64_MAX for none), cgroup the text of a memory.max file ("max\n",
 * a number) or NULL.
 */
uint64_t ps_memory_limit_of(uint64_t phys, uint64_t rlimit_as,
			    const char *cgroup, const char **source);

#endif
