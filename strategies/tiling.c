#include "tiling.h"

uint64_t ps_support_union(const struct ps_monomials *mono, uint64_t m_lo,
			  uint64_t m_hi, uint64_t *cols, uint8_t *mark)
{
	uint64_t count = 0;

	for (uint64_t m = m_lo; m < m_hi; m++) {
		const uint32_t *sup = ps_monomial_support(mono, m);

		for (uint8_t q = 0; q < mono->support_size[m]; q++)
			mark[sup[q]] = 1;
	}
	for (uint32_t a = 0; a < mono->d; a++)
		if (mark[a]) {
			cols[count++] = a;
			mark[a] = 0;
		}
	return count;
}

uint64_t ps_support_union_max(const struct ps_monomials *mono, uint64_t size,
			      uint64_t *cols, uint8_t *mark)
{
	uint64_t best = 0;

	for (uint64_t k = 0; k < ps_block_count(mono->r, size); k++)
		best = ps_max_u64(best, ps_support_union(mono, ps_block_lo(k, size),
							 ps_block_hi(k, size, mono->r),
							 cols, mark));
	return best;
}

uint64_t ps_support_union_sum(const struct ps_monomials *mono, uint64_t size,
			      uint64_t *cols, uint8_t *mark)
{
	uint64_t sum = 0;

	for (uint64_t k = 0; k < ps_block_count(mono->r, size); k++)
		sum += ps_support_union(mono, ps_block_lo(k, size),
					ps_block_hi(k, size, mono->r), cols,
					mark);
	return sum;
}

int ps_emit(struct ps_sink *sink, enum ps_opcode code, enum ps_kind kind,
	    struct ps_coordset c0, struct ps_coordset c1, struct ps_error *err)
{
	struct ps_op op = { .code = code, .kind = kind, .c = { c0, c1 } };

	return ps_sink_emit(sink, &op, err);
}

int ps_emit_mac(struct ps_sink *sink, enum ps_kind into, bool fuse,
		struct ps_coordset c0, struct ps_coordset c1,
		struct ps_coordset c2, struct ps_error *err)
{
	struct ps_op op = {
		.code = PS_OP_MAC, .kind = into, .fuse = fuse,
		.c = { c0, c1, c2 },
	};

	return ps_sink_emit(sink, &op, err);
}
