/*
 * The attention DAGs of MODEL.md, implicit: ids are computed from (kind,
 * coordinates) by arithmetic and parents enumerated on demand, so no
 * adjacency is ever stored. One struct serves both: approximate attention
 * (section 1) and exact attention (section 5, `exact`), whose kinds share
 * one enumeration and one coordinate scheme.
 *
 * Id layout, kind after kind (row-major inside a kind, coordinates in the
 * order of MODEL.md's tables):
 *   approximate: Q, K, V, U1, U2, H, N, A, then the products P2 and P1;
 *   exact:       Q, K, V, E, S, O, A, then the products PS and PO;
 *   causal approximate (MODEL.md section 7): Q, K, V, U1, U2, H (the
 *   kind HJ, written "H", with the row j), N, A, then P2, P1 and HC.
 * Products hold no pebble state; the two sum kinds are adjacent. HC's
 * row j = 0 keeps its ids, as every kind's rows below its first_row do,
 * but no node of it exists.
 */
#ifndef PEBBLESIM_ATTENTION_H
#define PEBBLESIM_ATTENTION_H

#include <stdbool.h>
#include <stdint.h>

#include "pebblesim/common.h"
#include "pebblesim/dag.h"
#include "pebblesim/monomial.h"

enum ps_kind {
	PS_KIND_Q,
	PS_KIND_K,
	PS_KIND_V,
	PS_KIND_U1,
	PS_KIND_U2,
	PS_KIND_H,
	PS_KIND_N,
	PS_KIND_A,
	PS_KIND_P2,
	PS_KIND_P1,
	/* exact attention (MODEL.md section 5) */
	PS_KIND_S,
	PS_KIND_E,
	PS_KIND_O,
	PS_KIND_PS,
	PS_KIND_PO,
	/* causal approximate attention (MODEL.md section 7) */
	PS_KIND_HJ, /* the state H[j,m,b], written "H" */
	PS_KIND_HC, /* the carry product HC[j,m,b], j >= 1 */
	PS_KIND_COUNT
};

/* Coordinate letters, in table order: i j a b m. */
enum ps_coord_name { PS_C_I, PS_C_J, PS_C_A, PS_C_B, PS_C_M };

struct ps_kind_info {
	const char *name;
	unsigned arity;                     /* 2 or 3 coordinates */
	enum ps_coord_name coord[3];        /* in nested-loop order */
	enum ps_role role;
};

extern const struct ps_kind_info ps_kinds[PS_KIND_COUNT];

/* "Q" .. "P1" -> kind, or -1 ("H" is PS_KIND_H: see ps_attention_kind) */
int ps_kind_lookup(const char *name);
const char *ps_coord_letter(enum ps_coord_name c);

/* The parameters that fix the DAG. */
struct ps_attention_params {
	uint64_t n, d, g; /* g: approximate attention only (0 for exact) */
	bool normalize;
	bool exact;       /* exact attention (MODEL.md section 5) */
	bool causal;      /* row i sees keys j <= i only (MODEL.md section 7) */
	uint64_t decode;  /* P >= 1: rows P..n-1 generated one at a time after
			   * a prompt of P rows (section 8); 0: no decoding */
};

struct ps_attention {
	struct ps_dag dag; /* first: a ps_attention is a ps_dag */
	uint64_t n, d, g, r; /* exact: g = 0 and r = 0 (no monomials) */
	uint64_t nb; /* |B|: d + 1 with normalisation, d without */
	bool normalize;
	bool exact;
	bool causal;     /* MODEL.md section 7 */
	uint64_t decode; /* MODEL.md section 8: the prompt length P, or 0 */
	struct ps_monomials mono;
	uint64_t base[PS_KIND_COUNT];  /* first id of each kind */
	uint64_t count[PS_KIND_COUNT]; /* nodes of each kind (0: not in this DAG) */
	uint64_t ext[PS_KIND_COUNT][3]; /* extent of each coordinate of a kind */
	enum ps_kind layout[PS_KIND_COUNT]; /* the kinds of this DAG, in id order */
	unsigned layout_count;
	uint64_t support_total;        /* sum over m of |support(m)| */
	/*
	 * Roles are the DAG's, not the kind's: decoding (MODEL.md section 8)
	 * makes Q, K and V of the generated rows plain, and leaves the
	 * prompt's cache or state an input. A node of kind k whose first
	 * coordinate (its row) is below decode has prompt_role[k], any other
	 * role[k]; first_row[k] is k's first row that exists (the rows
	 * below it keep their ids, which no query answers and no operation
	 * may name). Without decoding role[k] = ps_kinds[k].role, and every
	 * row exists.
	 */
	enum ps_role role[PS_KIND_COUNT];
	enum ps_role prompt_role[PS_KIND_COUNT];
	uint64_t first_row[PS_KIND_COUNT];
};

/* Does this DAG have nodes of kind k ("S" is no kind of the approximate
 * DAG, nor "A" of one without normalisation)? */
static inline bool ps_attention_has(const struct ps_attention *att,
				    enum ps_kind k)
{
	return (unsigned)k < PS_KIND_COUNT && att->count[k] > 0;
}

/* The kind a name of MODEL.md's tables stands for in this DAG: "H" is
 * the causal state HJ in a causal DAG. -1 for no kind. */
static inline int ps_attention_kind(const struct ps_attention *att, int kind)
{
	return kind == PS_KIND_H && att->causal && !att->exact ? PS_KIND_HJ : kind;
}

/* The array a kind's loads and saves count in (the causal state's is H). */
static inline unsigned ps_kind_array(enum ps_kind k)
{
	return (unsigned)(k == PS_KIND_HJ ? PS_KIND_H : k);
}

/* The header name of the DAG: "approx-attention" or "exact-attention". */
static inline const char *ps_attention_kind_name(const struct ps_attention *att)
{
	return att->exact ? "exact-attention" : "approx-attention";
}

/*
 * Largest node count accepted: ids and edge numbers stay far from 2^64 and
 * every per-kind product of coordinates fits in 63 bits.
 */
#define PS_MAX_NODES (UINT64_C(1) << 62)

/*
 * Checks, before anything is allocated, that the DAG stays within the
 * limits (g <= 64, d <= 2^32, r <= PS_MAX_MONOMIALS, 64-bit sizes) and
 * that the engine's pebble state for it, with the largest tables a tiling
 * plan builds, fits in 90% of the memory limit (limits.h); the message
 * gives the estimate.
 */
int ps_attention_check(const struct ps_attention_params *p,
		       struct ps_error *err);
/* The same but for the pebble state, which a run checks once its
 * strategy has said what it needs (ps_run): the monomial table and the
 * tables of a plan (ps_attention_plan_bytes) only. */
int ps_attention_check_dag(const struct ps_attention_params *p,
			   struct ps_error *err);

/*
 * Bytes the tables of a tiling plan take (strategies/tiling.c): for r
 * monomials of degree at most g over d features, cut into tiles
 * aggregation tiles. They are checked, with tiles = r, before any
 * strategy plans on the approximate DAG. d <= 2^32, g <= 64 and
 * r <= PS_MAX_MONOMIALS keep it within 64 bits.
 */
uint64_t ps_attention_plan_bytes(uint64_t d, uint64_t r, uint64_t g,
				 uint64_t tiles);

/* Bytes of pebble state (and monomial table) a run on p needs; -1 when
 * it is beyond 64-bit sizes. */
int ps_attention_estimate(const struct ps_attention_params *p,
			  uint64_t *bytes);

int ps_attention_init(struct ps_attention *att,
		      const struct ps_attention_params *p, struct ps_error *err);
void ps_attention_free(struct ps_attention *att);

/* Extent of coordinate c of kind k (n, d, |B|, or r); V's b is < d. */
static inline uint64_t ps_attention_extent(const struct ps_attention *att,
					   enum ps_kind k, unsigned pos)
{
	return att->ext[k][pos];
}

/* The in-degree of every sum of kind k: H n, N r, S d, O n, the causal
 * state 2. In a causal DAG some sums have in-degrees of their own:
 * ps_attention_in_degree_at. */
static inline uint64_t ps_attention_in_degree(const struct ps_attention *att,
					      enum ps_kind k)
{
	return k == PS_KIND_N ? att->r : k == PS_KIND_S ? att->d :
	       k == PS_KIND_HJ ? 2 : att->n;
}

/* The in-degree of the sums of kind k in row c0 (their first coordinate):
 * causal exact attention's O[i,b] has i + 1, the causal state H[0,m,b] 1
 * (MODEL.md section 7). */
static inline uint64_t ps_attention_in_degree_at(const struct ps_attention *att,
						 enum ps_kind k, uint64_t c0)
{
	if (att->causal && att->exact && k == PS_KIND_O)
		return c0 + 1;
	if (k == PS_KIND_HJ && c0 == 0)
		return 1;
	return ps_attention_in_degree(att, k);
}

/* Do the sums of kind k have one in-degree in every row? */
static inline bool ps_attention_in_degree_uniform(const struct ps_attention *att,
						  enum ps_kind k)
{
	return !(att->causal && att->exact && k == PS_KIND_O) && k != PS_KIND_HJ;
}

/* The role of kind k's nodes in row c0 (struct ps_attention's role). */
static inline enum ps_role ps_attention_role(const struct ps_attention *att,
					     enum ps_kind k, uint64_t c0)
{
	return att->decode && c0 < att->decode ? att->prompt_role[k] : att->role[k];
}

/*
 * The role of kind k's nodes in every row of [lo, hi) (lo < hi), or
 * PS_ROLE_PRODUCT for a kind that holds no pebbles and for rows of two
 * roles: the block path then leaves them to the moves one at a time.
 */
static inline enum ps_role ps_attention_role_rows(const struct ps_attention *att,
						  enum ps_kind k, uint64_t lo, uint64_t hi)
{
	enum ps_role r = ps_attention_role(att, k, lo);

	return r == ps_attention_role(att, k, hi - 1) ? r : PS_ROLE_PRODUCT;
}

/*
 * Does the node of kind k at coordinates c exist? Every id of a kind is
 * laid out (the arithmetic stays that of a full grid), but causal exact
 * attention has S, E, PS and PO only for j <= i (MODEL.md section 7), and
 * decoding only the rows from first_row (section 8).
 */
bool ps_attention_exists(const struct ps_attention *att, enum ps_kind k,
			 const uint64_t *c);

/* The sum a mac into kind k aggregates through which product kind, and the
 * plain parent a fused mac regenerates (PS_KIND_COUNT: none, for S). A
 * mac into the causal state takes P2, or HC when it carries (struct
 * ps_op's carry). */
enum ps_kind ps_attention_product_kind(enum ps_kind into);
enum ps_kind ps_attention_fused_kind(enum ps_kind into);

/* (kind, coordinates) -> id; coordinates must be in range. The row
 * stride of a two-coordinate kind is the extent of its second coordinate
 * (V and A: d, the ones column being no node of theirs). */
static inline ps_node ps_attention_id2(const struct ps_attention *att,
				       enum ps_kind k, uint64_t c0, uint64_t c1)
{
	return att->base[k] + c0 * att->ext[k][1] + c1;
}

static inline ps_node ps_attention_id3(const struct ps_attention *att,
				       enum ps_kind k, uint64_t c0, uint64_t c1,
				       uint64_t c2)
{
	return att->base[k] + (c0 * att->ext[k][1] + c1) * att->ext[k][2] + c2;
}

static inline ps_node ps_attention_id(const struct ps_attention *att,
				      enum ps_kind k, const uint64_t *c)
{
	return ps_kinds[k].arity == 3 ? ps_attention_id3(att, k, c[0], c[1], c[2])
				      : ps_attention_id2(att, k, c[0], c[1]);
}

/* id -> kind and coordinates (c gets ps_kinds[kind].arity values). */
enum ps_kind ps_attention_decode(const struct ps_attention *att, ps_node v,
				 uint64_t c[3]);

#endif
