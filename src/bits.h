/*
 * Internal to the engine and the block path (src/): ranges of bits in a
 * bitset, a word at a time. Not part of the public API.
 */
#ifndef PEBBLESIM_SRC_BITS_H
#define PEBBLESIM_SRC_BITS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* For the small steps of a loop that the compiler would rather call:
 * inlined, so that what a caller fixes (an operation) is known inside. */
#if defined(__GNUC__)
#define PS_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define PS_ALWAYS_INLINE inline
#endif

/* Bits [lo, hi) of one word, 0 <= lo < hi <= 64. */
static inline uint64_t ps_bits_word_mask(unsigned lo, unsigned hi)
{
	uint64_t upto = hi == 64 ? ~UINT64_C(0) : (UINT64_C(1) << hi) - 1;

	return upto & ~((UINT64_C(1) << lo) - 1);
}

/* Sets (set) or clears bits [lo, hi). */
static inline void ps_bits_fill(uint64_t *bits, uint64_t lo, uint64_t hi, bool set)
{
	/* the common case: a few edges within one word */
	if (lo < hi && lo / 64 == (hi - 1) / 64) {
		uint64_t mask = ps_bits_word_mask((unsigned)(lo % 64),
						  (unsigned)((hi - 1) % 64) + 1);

		if (set)
			bits[lo / 64] |= mask;
		else
			bits[lo / 64] &= ~mask;
		return;
	}
	while (lo < hi) {
		uint64_t w = lo / 64, word_end = (w + 1) * 64;
		unsigned a = (unsigned)(lo % 64);

		if (a == 0 && hi >= word_end) {
			/* whole words */
			uint64_t words = (hi - lo) / 64;

			memset(bits + w, set ? 0xff : 0, words * 8);
			lo += words * 64;
			continue;
		}
		{
			unsigned b = hi < word_end ? (unsigned)(hi - w * 64) : 64;
			uint64_t mask = ps_bits_word_mask(a, b);

			if (set)
				bits[w] |= mask;
			else
				bits[w] &= ~mask;
			lo = w * 64 + b;
		}
	}
}

/* Are bits [lo, hi) all clear? */
static inline bool ps_bits_none(const uint64_t *bits, uint64_t lo, uint64_t hi)
{
	if (lo < hi && lo / 64 == (hi - 1) / 64)
		return !(bits[lo / 64] & ps_bits_word_mask((unsigned)(lo % 64),
							   (unsigned)((hi - 1) % 64) + 1));
	while (lo < hi) {
		uint64_t w = lo / 64, word_end = (w + 1) * 64;
		unsigned a = (unsigned)(lo % 64);
		unsigned b = hi < word_end ? (unsigned)(hi - w * 64) : 64;

		if (bits[w] & ps_bits_word_mask(a, b))
			return false;
		lo = w * 64 + b;
	}
	return true;
}

/* Bit k. */
static inline bool ps_bits_test(const uint64_t *bits, uint64_t k)
{
	return bits[k / 64] & (UINT64_C(1) << (k % 64));
}

/* Bits set in a word, without the compiler's library call. */
static inline unsigned ps_popcount64(uint64_t x)
{
	x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
	x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}

/* The lowest bit set in x, not 0. */
static inline unsigned ps_lowest_bit64(uint64_t x)
{
#if defined(__GNUC__)
	return (unsigned)__builtin_ctzll(x);
#else
	return ps_popcount64((x & -x) - 1);
#endif
}

/* Bits set in [lo, hi). */
static inline uint64_t ps_bits_count(const uint64_t *bits, uint64_t lo, uint64_t hi)
{
	uint64_t n = 0;

	while (lo < hi) {
		uint64_t w = lo / 64, word_end = (w + 1) * 64;
		unsigned a = (unsigned)(lo % 64);
		unsigned b = hi < word_end ? (unsigned)(hi - w * 64) : 64;

		n += ps_popcount64(bits[w] & ps_bits_word_mask(a, b));
		lo = w * 64 + b;
	}
	return n;
}

#endif
