/*
 * Helpers every strategy shares: blocks of a range, the Q (K) columns a
 * run of monomials needs, and emitting set operations in one line.
 */
#ifndef PEBBLESIM_TILING_H
#define PEBBLESIM_TILING_H

#include <stdbool.h>
#include <stdint.h>

#include "pebblesim/attention.h"
#include "pebblesim/ops.h"

/* [0, total) cut into blocks of size (the last may be shorter). */
static inline uint64_t ps_block_count(uint64_t total, uint64_t size)
{
	return ps_ceil_div(total, size);
}

static inline uint64_t ps_block_lo(uint64_t k, uint64_t size)
{
	return k * size;
}

static inline uint64_t ps_block_hi(uint64_t k, uint64_t size, uint64_t total)
{
	return ps_min_u64((k + 1) * size, total);
}

/*
 * The features that monomials m_lo .. m_hi-1 read, increasing, into cols
 * (room for d); returns how many. mark is scratch of d zero bytes, left
 * zero again.
 */
uint64_t ps_support_union(const struct ps_monomials *mono, uint64_t m_lo,
			  uint64_t m_hi, uint64_t *cols, uint8_t *mark);

/* Largest support union over the blocks of size monomials. */
uint64_t ps_support_union_max(const struct ps_monomials *mono, uint64_t size,
			      uint64_t *cols, uint8_t *mark);

/* Sum of support unions over the blocks of size monomials. */
uint64_t ps_support_union_sum(const struct ps_monomials *mono, uint64_t size,
			      uint64_t *cols, uint8_t *mark);

/* Emits load, save, delete or compute of kind over c0 x c1. */
int ps_emit(struct ps_sink *sink, enum ps_opcode code, enum ps_kind kind,
	    struct ps_coordset c0, struct ps_coordset c1, struct ps_error *err);

/* Emits a mac into H or N over its product's coordinates c0 x c1 x c2. */
int ps_emit_mac(struct ps_sink *sink, enum ps_kind into, bool fuse,
		struct ps_coordset c0, struct ps_coordset c1,
		struct ps_coordset c2, struct ps_error *err);

#endif
