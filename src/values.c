/*
 * Runs with values (include/pebblesim/values.h, MODEL.md section 6).
 *
 * A block operation is executed with dense temporaries: its operands are
 * gathered once (a lookup per node on its boundary), the products are
 * added in tight loops, and the sums are scattered back. Within each sum
 * the terms are added in the order of the sequence (nested-loop order,
 * the first coordinate outermost), so that a block and its elementary
 * moves give the same bits.
 */
#include "pebblesim/values.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pebblesim/npy.h"
#include "pebblesim/run.h"

/* The direct evaluation's block of rows. */
#define SCORE_ROWS 4

/* A node's value and which copies of it exist: key = id << 2 | flags, and
 * 0 marks an empty slot (a live node has a red or a blue copy). */
struct ps_values_entry {
	uint64_t key;
	double value;
};

enum { VAL_RED = 1, VAL_BLUE = 2 };

/* ---- the map ------------------------------------------------------------ */

static uint64_t slot_of(const struct ps_values *vals, ps_node v)
{
	/* Fibonacci hashing: the product's top bits */
	return (v * UINT64_C(0x9E3779B97F4A7C15)) >> vals->shift;
}

static struct ps_values_entry *find(const struct ps_values *vals, ps_node v)
{
	for (uint64_t s = slot_of(vals, v);; s = (s + 1) & vals->mask) {
		struct ps_values_entry *e = &vals->slots[s];

		if (!e->key)
			return NULL;
		if (e->key >> 2 == v)
			return e;
	}
}

static int grow(struct ps_values *vals)
{
	struct ps_values_entry *old = vals->slots;
	uint64_t old_size = vals->mask + 1, size = old_size * 2;

	vals->slots = calloc(size, sizeof(*vals->slots));
	if (!vals->slots) {
		vals->slots = old;
		return PS_ENOMEM;
	}
	vals->mask = size - 1;
	vals->shift--;
	for (uint64_t k = 0; k < old_size; k++)
		if (old[k].key) {
			uint64_t s = slot_of(vals, old[k].key >> 2);

			while (vals->slots[s].key)
				s = (s + 1) & vals->mask;
			vals->slots[s] = old[k];
		}
	free(old);
	return PS_OK;
}

/* The entry of v, made (holding 0, no copy yet) when it has none. */
static struct ps_values_entry *find_or_add(struct ps_values *vals, ps_node v)
{
	struct ps_values_entry *e = find(vals, v);
	uint64_t s;

	if (e)
		return e;
	if ((vals->used + 1) * 2 > vals->mask + 1 && grow(vals))
		return NULL;
	for (s = slot_of(vals, v); vals->slots[s].key; s = (s + 1) & vals->mask)
		;
	vals->slots[s].key = v << 2;
	vals->slots[s].value = 0.0;
	if (++vals->used > vals->peak)
		vals->peak = vals->used;
	return &vals->slots[s];
}

/* Removes e, shifting back the entries that probed past it. */
static void remove_entry(struct ps_values *vals, struct ps_values_entry *e)
{
	uint64_t hole = (uint64_t)(e - vals->slots), s = hole;

	for (;;) {
		uint64_t home;

		s = (s + 1) & vals->mask;
		if (!vals->slots[s].key)
			break;
		home = slot_of(vals, vals->slots[s].key >> 2);
		/* the entry at s may fill the hole when its home is not
		 * cyclically within (hole, s] */
		if (((s - home) & vals->mask) >= ((s - hole) & vals->mask)) {
			vals->slots[hole] = vals->slots[s];
			hole = s;
		}
	}
	vals->slots[hole].key = 0;
	vals->used--;
}

static void set_flags(struct ps_values *vals, struct ps_values_entry *e,
		      unsigned flags)
{
	if (!flags)
		remove_entry(vals, e);
	else
		e->key = (e->key & ~UINT64_C(3)) | flags;
}

bool ps_values_get(const struct ps_values *vals, ps_node v, double *value)
{
	const struct ps_values_entry *e = find(vals, v);

	if (!e)
		return false;
	*value = e->value;
	return true;
}

static double lookup(const struct ps_values *vals, ps_node v)
{
	const struct ps_values_entry *e = find(vals, v);

	/* the engine accepted the move: the node has a value */
	return e ? e->value : NAN;
}

/* ---- inputs -------------------------------------------------------------- */

/* splitmix64: a small generator whose stream docs/VALUES.md fixes */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static void draw(double *x, uint64_t count, uint64_t *state, double bound)
{
	for (uint64_t k = 0; k < count; k++) {
		/* 53 random bits: uniform in [0, 1), then [-bound, bound) */
		double u = (double)(next_random(state) >> 11) * 0x1.0p-53;

		x[k] = (2.0 * u - 1.0) * bound;
	}
}

/* U1's coefficient of monomial m: c_l C(l; alpha) d^(-l/2) (MODEL.md
 * section 6). Taylor's c_l C(l; alpha) = 1 / prod_a alpha_a!, taken so. */
static double u1_coefficient(const struct ps_values *vals, uint64_t m)
{
	const struct ps_attention *att = vals->att;
	const uint32_t *idx = ps_monomial_indices(&att->mono, m);
	unsigned l = att->mono.degree[m];
	double denominator = pow((double)att->d, 0.5 * l), factorial = 1.0;
	unsigned run = 0;

	for (unsigned t = 0; t < l; t++) {
		run = t > 0 && idx[t] == idx[t - 1] ? run + 1 : 1;
		denominator *= run; /* alpha_a! built one factor at a time */
		factorial *= t + 1;
	}
	if (vals->poly.kind == PS_POLYNOMIAL_TAYLOR)
		return 1.0 / denominator;
	return vals->poly.c[l] * factorial / denominator;
}

/* The largest |entry| of a row-major n x d array. */
static double largest_entry(const double *x, uint64_t count)
{
	double top = 0.0;

	for (uint64_t k = 0; k < count; k++)
		top = fabs(x[k]) > top ? fabs(x[k]) : top;
	return top;
}

/* P of the inputs' kind on [-beta, beta]: beta as given, or B^2 sqrt d
 * with B the entry bound, or the largest |entry| of the files' Q and K. */
static int make_polynomial(struct ps_values *vals, struct ps_error *err)
{
	const struct ps_attention *att = vals->att;
	const uint64_t nd = att->n * att->d;
	double B = vals->in.entry_bound, beta;

	if (vals->in.q) {
		double q = largest_entry(vals->q, nd), k = largest_entry(vals->k, nd);

		B = q > k ? q : k;
	}
	beta = vals->in.interval > 0 ? vals->in.interval : ps_polynomial_interval(B, att->d);
	return ps_polynomial_make(&vals->poly, vals->in.polynomial, (unsigned)att->g, beta, err);
}

/*
 * Decoding's stand-in for the layers between two tokens (MODEL.md section
 * 8, docs/VALUES.md "Decoding"): W_q, W_k and W_v, d x d each, uniform in
 * [-1/sqrt d, 1/sqrt d) from splitmix64 seeded with seed XOR
 * PS_VALUES_STAND_IN_SEED (whatever the inputs came from).
 */
#define PS_VALUES_STAND_IN_SEED UINT64_C(0xD3C0DE)

static int stand_in_init(struct ps_values *vals, struct ps_error *err)
{
	const uint64_t d = vals->att->d;
	uint64_t state = vals->in.seed ^ PS_VALUES_STAND_IN_SEED;

	if (!(vals->stand_in = malloc(3 * d * d * sizeof(double))))
		return ps_error_set(err, PS_ENOMEM, "out of memory for the stand-in");
	draw(vals->stand_in, 3 * d * d, &state, 1.0 / sqrt((double)d));
	return PS_OK;
}

/* Row t's q, k or v (which: 0, 1, 2) entry a from the last output x (d
 * entries): B tanh(sum_b W[a,b] x[b]), within (-B, B). */
static double stand_in(const struct ps_values *vals, unsigned which, uint64_t a,
		       const double *x)
{
	const uint64_t d = vals->att->d;
	const double *w = vals->stand_in + (which * d + a) * d;
	double s = 0.0;

	for (uint64_t b = 0; b < d; b++)
		s += w[b] * x[b];
	return vals->in.entry_bound * tanh(s);
}

/* The output a generated row's q, k, v read: A, or O (exact) or N. */
static enum ps_kind token_kind(const struct ps_attention *att)
{
	return att->normalize ? PS_KIND_A : att->exact ? PS_KIND_O : PS_KIND_N;
}

/* prod_a x[a]^alpha_a over monomial m's tuple, in the tuple's order */
static double monomial(const struct ps_attention *att, const double *x, uint64_t m);

/*
 * Approximate decoding's input state (MODEL.md section 8), in slow memory:
 * H[P-1,m,b] = sum over the prompt's rows j < P of U2[j,m] V[j,b] (V[j,d]
 * = 1), from the inputs' K and V rows, j in order.
 */
static int prompt_state(struct ps_values *vals, struct ps_error *err)
{
	const struct ps_attention *att = vals->att;
	const uint64_t p = att->decode, d = att->d;

	for (uint64_t m = 0; m < att->r; m++)
		for (uint64_t b = 0; b < att->nb; b++) {
			struct ps_values_entry *e =
				find_or_add(vals, ps_attention_id3(att, PS_KIND_HJ, p - 1, m, b));
			double s = 0.0;

			if (!e)
				return ps_error_set(err, PS_ENOMEM, "out of memory for the values");
			for (uint64_t j = 0; j < p; j++)
				s += monomial(att, vals->k + j * d, m) * (b < d ? vals->v[j * d + b] : 1.0);
			e->value = s;
			set_flags(vals, e, VAL_BLUE);
		}
	return PS_OK;
}

int ps_values_init(struct ps_values *vals, const struct ps_attention *att,
		   const struct ps_values_inputs *in, struct ps_error *err)
{
	uint64_t nd = att->n * att->d, rows, cols;
	int rc = PS_OK;

	memset(vals, 0, sizeof(*vals));
	vals->att = att;
	vals->in = *in;
	if (in->q || in->k || in->v) {
		const char *paths[3] = { in->q, in->k, in->v };
		double **into[3] = { &vals->q, &vals->k, &vals->v };

		for (int t = 0; t < 3 && !rc; t++)
			rc = paths[t] ? ps_npy_load(paths[t], att->n, att->d, into[t], &rows, &cols, err)
				      : ps_error_set(err, PS_EINPUT, "--q, --k and --v go together");
	} else {
		uint64_t state = in->seed;

		vals->q = malloc(nd * sizeof(double));
		vals->k = malloc(nd * sizeof(double));
		vals->v = malloc(nd * sizeof(double));
		if (vals->q && vals->k && vals->v) {
			draw(vals->q, nd, &state, in->entry_bound);
			draw(vals->k, nd, &state, in->entry_bound);
			draw(vals->v, nd, &state, in->entry_bound);
		} else {
			rc = ps_error_set(err, PS_ENOMEM, "out of memory for the inputs");
		}
	}
	if (!rc && att->decode)
		rc = stand_in_init(vals, err);
	if (!rc && !att->exact)
		rc = make_polynomial(vals, err);
	if (!rc && !att->exact) {
		vals->coef = malloc(att->r * sizeof(double));
		if (!vals->coef)
			rc = ps_error_set(err, PS_ENOMEM, "out of memory for the coefficients");
		for (uint64_t m = 0; !rc && m < att->r; m++)
			vals->coef[m] = u1_coefficient(vals, m);
	}
	if (!rc) {
		vals->mask = 1023;
		vals->shift = 64 - 10;
		vals->slots = calloc(vals->mask + 1, sizeof(*vals->slots));
		if (!vals->slots)
			rc = ps_error_set(err, PS_ENOMEM, "out of memory for the values");
	}
	/* decoding: the prompt's last output is an input, in slow memory;
	 * approximate attention's prompt state too */
	if (!rc && att->decode && !att->exact)
		rc = prompt_state(vals, err);
	if (!rc && att->decode) {
		const enum ps_kind out = token_kind(att);

		for (uint64_t b = 0; !rc && b < att->d; b++) {
			struct ps_values_entry *e =
				find_or_add(vals, ps_attention_id2(att, out, att->decode - 1, b));

			if (!e) {
				rc = ps_error_set(err, PS_ENOMEM, "out of memory for the values");
				break;
			}
			e->value = vals->q[(att->decode - 1) * att->d + b];
			set_flags(vals, e, VAL_BLUE);
		}
	}
	if (rc)
		ps_values_free(vals);
	return rc;
}

uint64_t ps_values_bytes(const struct ps_attention *att, uint64_t M)
{
	const uint64_t n = att->n, nd = att->n * att->d;
	/* Q, K, V, the outputs, the direct and softmax results, and each
	 * thread's K^T and 3 + SCORE_ROWS rows of scores */
	const uint64_t doubles = 3 * nd + nd + (nd + n) + nd + 2 * (nd + (3 + SCORE_ROWS) * n) +
				 (att->exact ? 0 : att->r) +
				 (att->decode ? 3 * att->d * att->d + 2 * nd + n : 0);
	/* an entry a value, the map at most half full, and the old map
	 * beside the new while it grows */
	const uint64_t entries = M + n * att->nb;

	return doubles * sizeof(double) + entries * sizeof(struct ps_values_entry) * 2 * 2;
}

void ps_values_free(struct ps_values *vals)
{
	free(vals->q);
	free(vals->k);
	free(vals->v);
	free(vals->coef);
	free(vals->slots);
	free(vals->scratch);
	free(vals->outputs);
	free(vals->stand_in);
	vals->q = vals->k = vals->v = vals->coef = vals->scratch = vals->outputs = NULL;
	vals->stand_in = NULL;
	vals->slots = NULL;
}

/* ---- evaluating nodes ---------------------------------------------------- */

/* prod_a x[a]^alpha_a over monomial m's tuple, in the tuple's order */
static double monomial(const struct ps_attention *att, const double *x,
		       uint64_t m)
{
	const uint32_t *idx = ps_monomial_indices(&att->mono, m);
	unsigned l = att->mono.degree[m];
	double p = 1.0;

	for (unsigned t = 0; t < l; t++)
		p *= x[idx[t]];
	return p;
}

/* The value compute gives the plain node of kind k at (c0, c1). */
static double evaluate(const struct ps_values *vals, enum ps_kind k,
		       uint64_t c0, uint64_t c1)
{
	const struct ps_attention *att = vals->att;
	const double *row;

	switch (k) {
	case PS_KIND_U1:
		row = vals->q + c0 * att->d;
		return vals->coef[c1] * monomial(att, row, c1);
	case PS_KIND_U2:
		return monomial(att, vals->k + c0 * att->d, c1);
	case PS_KIND_E:
		return exp(lookup(vals, ps_attention_id2(att, PS_KIND_S, c0, c1)) /
			   sqrt((double)att->d));
	case PS_KIND_A: {
		enum ps_kind sum = att->exact ? PS_KIND_O : PS_KIND_N;

		return lookup(vals, ps_attention_id2(att, sum, c0, c1)) /
		       lookup(vals, ps_attention_id2(att, sum, c0, att->d));
	}
	default:
		return NAN;
	}
}

static bool is_input(enum ps_kind k)
{
	return k == PS_KIND_Q || k == PS_KIND_K || k == PS_KIND_V;
}

/* ---- operations ---------------------------------------------------------- */

/* At least len doubles (an empty block gets a non-NULL pointer too). */
static double *scratch(struct ps_values *vals, uint64_t len)
{
	if (!len)
		len = 1;
	if (len > vals->scratch_len) {
		double *grown = realloc(vals->scratch, len * sizeof(double));

		if (!grown)
			return NULL;
		vals->scratch = grown;
		vals->scratch_len = len;
	}
	return vals->scratch;
}

/* out[x * cols + y] = input[rows[x], cols[y]] of Q, K or V; V's column d
 * is the ones column. */
static void gather_input(const struct ps_values *vals, const double *input,
			 const struct ps_coordset *rows,
			 const struct ps_coordset *cols, double *out)
{
	const uint64_t nr = ps_coordset_size(rows), nc = ps_coordset_size(cols);
	const uint64_t d = vals->att->d;

	for (uint64_t x = 0; x < nr; x++) {
		const double *row = input + ps_coordset_at(rows, x) * d;

		for (uint64_t y = 0; y < nc; y++) {
			uint64_t c = ps_coordset_at(cols, y);

			out[x * nc + y] = c < d ? row[c] : 1.0;
		}
	}
}

/* out[x * cols + y] = the value of kind k at (rows[x], cols[y]), 0 where
 * there is none (a sum not yet aggregated into). */
static void gather(const struct ps_values *vals, enum ps_kind k,
		   const struct ps_coordset *rows,
		   const struct ps_coordset *cols, double *out)
{
	const uint64_t nr = ps_coordset_size(rows), nc = ps_coordset_size(cols);

	for (uint64_t x = 0; x < nr; x++)
		for (uint64_t y = 0; y < nc; y++) {
			const struct ps_values_entry *e =
				find(vals, ps_attention_id2(vals->att, k, ps_coordset_at(rows, x),
							    ps_coordset_at(cols, y)));

			out[x * nc + y] = e ? e->value : 0.0;
		}
}

/* The sums of kind k at rows x cols take the values in, red, their blue
 * copies stale (MODEL.md section 2: a mac removes the blue pebble). */
static int scatter_sums(struct ps_values *vals, enum ps_kind k,
			const struct ps_coordset *rows,
			const struct ps_coordset *cols, const double *in)
{
	const uint64_t nr = ps_coordset_size(rows), nc = ps_coordset_size(cols);

	for (uint64_t x = 0; x < nr; x++)
		for (uint64_t y = 0; y < nc; y++) {
			struct ps_values_entry *e =
				find_or_add(vals, ps_attention_id2(vals->att, k, ps_coordset_at(rows, x),
								   ps_coordset_at(cols, y)));

			if (!e)
				return PS_ENOMEM;
			e->value = in[x * nc + y];
			set_flags(vals, e, VAL_RED);
		}
	return PS_OK;
}

/*
 * A mac into H, N or O: sum[..] += left[c0, c1] * right[..] over the
 * block in nested-loop order. left is the plain parent (U2, U1, E),
 * regenerated when fused; right is V's rows (H: by j = c0; O: by j = c1)
 * or H (N: by m = c1). The sums are indexed (c1, c2) for H, (c0, c2)
 * otherwise.
 */
static int mac_plain(struct ps_values *vals, const struct ps_op *op)
{
	const struct ps_attention *att = vals->att;
	const struct ps_coordset *c = op->c;
	const uint64_t n0 = ps_coordset_size(&c[0]), n1 = ps_coordset_size(&c[1]);
	const uint64_t n2 = ps_coordset_size(&c[2]);
	const enum ps_kind plain = ps_attention_fused_kind(op->kind);
	const bool into_h = op->kind == PS_KIND_H;
	const struct ps_coordset *sum_rows = into_h ? &c[1] : &c[0];
	const struct ps_coordset *right_rows = into_h ? &c[0] : &c[1];
	const uint64_t sum_len = ps_coordset_size(sum_rows) * n2;
	const uint64_t right_len = ps_coordset_size(right_rows) * n2;
	double *sums = scratch(vals, sum_len + right_len), *right;

	if (!sums)
		return PS_ENOMEM;
	right = sums + sum_len;
	gather(vals, op->kind, sum_rows, &c[2], sums);
	if (op->kind == PS_KIND_N)
		gather(vals, PS_KIND_H, right_rows, &c[2], right);
	else
		gather_input(vals, vals->v, right_rows, &c[2], right);
	/* a fused U1 or U2: its monomials' indices and coefficients found
	 * once for the block, not once an entry */
	const bool monomials = op->fuse && (plain == PS_KIND_U1 || plain == PS_KIND_U2);
	const double *features = plain == PS_KIND_U1 ? vals->q : vals->k;

	for (uint64_t x0 = 0; x0 < n0; x0++) {
		const uint64_t c0 = ps_coordset_at(&c[0], x0);
		const double *row = features + c0 * att->d;

		for (uint64_t x1 = 0; x1 < n1; x1++) {
			const uint64_t c1 = ps_coordset_at(&c[1], x1);
			double u;
			double *s = sums + (into_h ? x1 : x0) * n2;
			const double *r = right + (into_h ? x0 : x1) * n2;

			if (monomials) {
				const uint32_t *idx = ps_monomial_indices(&att->mono, c1);
				const unsigned l = att->mono.degree[c1];

				/* as evaluate() has it: the product, then the coefficient */
				u = 1.0;
				for (unsigned t = 0; t < l; t++)
					u *= row[idx[t]];
				if (plain == PS_KIND_U1)
					u = vals->coef[c1] * u;
			} else {
				u = op->fuse ? evaluate(vals, plain, c0, c1)
					     : lookup(vals, ps_attention_id2(att, plain, c0, c1));
			}
			for (uint64_t x2 = 0; x2 < n2; x2++)
				s[x2] += u * r[x2];
		}
	}
	return scatter_sums(vals, op->kind, sum_rows, &c[2], sums);
}

/*
 * Causal approximate attention's macs (MODEL.md section 7), in the
 * sequence's order: into H[j,m,b] of P2 (U2[j,m] V[j,b], V[j,d] = 1) or of
 * the carry (H[j-1,m,b]); into N[i,b] of P1 (U1[i,m] H[i,m,b]). Sum by
 * sum through the map: each sum takes its terms in nested-loop order, as
 * its elementary moves do.
 */
static int mac_causal(struct ps_values *vals, const struct ps_op *op)
{
	const struct ps_attention *att = vals->att;
	const struct ps_coordset *c = op->c;
	const uint64_t n0 = ps_coordset_size(&c[0]), n1 = ps_coordset_size(&c[1]);
	const uint64_t n2 = ps_coordset_size(&c[2]), d = att->d;
	const bool into_h = op->kind == PS_KIND_HJ;
	const enum ps_kind plain = into_h ? PS_KIND_U2 : PS_KIND_U1;

	for (uint64_t x0 = 0; x0 < n0; x0++) {
		const uint64_t c0 = ps_coordset_at(&c[0], x0);

		for (uint64_t x1 = 0; x1 < n1; x1++) {
			const uint64_t c1 = ps_coordset_at(&c[1], x1);
			const double u = op->carry ? 1.0 : op->fuse ? evaluate(vals, plain, c0, c1) :
					 lookup(vals, ps_attention_id2(att, plain, c0, c1));

			for (uint64_t x2 = 0; x2 < n2; x2++) {
				const uint64_t b = ps_coordset_at(&c[2], x2);
				const ps_node sum = into_h ? ps_attention_id3(att, PS_KIND_HJ, c0, c1, b) :
						    ps_attention_id2(att, PS_KIND_N, c0, b);
				double term;
				struct ps_values_entry *e;

				if (op->carry)
					term = lookup(vals, ps_attention_id3(att, PS_KIND_HJ, c0 - 1, c1, b));
				else if (into_h)
					term = u * (b < d ? vals->v[c0 * d + b] : 1.0);
				else
					term = u * lookup(vals, ps_attention_id3(att, PS_KIND_HJ, c0, c1, b));
				if (!(e = find(vals, sum))) {
					if (!(e = find_or_add(vals, sum)))
						return PS_ENOMEM;
					e->value = 0.0;
				}
				e->value += term;
				set_flags(vals, e, VAL_RED);
			}
		}
	}
	return PS_OK;
}

/* A mac into S: S[i,j] += Q[i,a] K[j,a], a innermost. */
static int mac_scores(struct ps_values *vals, const struct ps_op *op)
{
	const struct ps_coordset *c = op->c;
	const uint64_t n0 = ps_coordset_size(&c[0]), n1 = ps_coordset_size(&c[1]);
	const uint64_t n2 = ps_coordset_size(&c[2]);
	double *sums = scratch(vals, n0 * n1 + (n0 + n1) * n2), *q, *k;

	if (!sums)
		return PS_ENOMEM;
	q = sums + n0 * n1;
	k = q + n0 * n2;
	gather(vals, PS_KIND_S, &c[0], &c[1], sums);
	gather_input(vals, vals->q, &c[0], &c[2], q);
	gather_input(vals, vals->k, &c[1], &c[2], k);
	for (uint64_t x0 = 0; x0 < n0; x0++)
		for (uint64_t x1 = 0; x1 < n1; x1++) {
			double s = sums[x0 * n1 + x1];

			for (uint64_t x2 = 0; x2 < n2; x2++)
				s += q[x0 * n2 + x2] * k[x1 * n2 + x2];
			sums[x0 * n1 + x1] = s;
		}
	return scatter_sums(vals, PS_KIND_S, &c[0], &c[1], sums);
}

/* A load, save, delete or compute of one node, v of kind k at (c0, c1)
 * (the causal state's: at (c0, c1, c2), never computed). */
static int move(struct ps_values *vals, enum ps_opcode code, enum ps_kind k,
		uint64_t c0, uint64_t c1, ps_node v)
{
	struct ps_values_entry *e;
	unsigned flags;

	if (is_input(k) && code == PS_OP_COMPUTE) {
		/* decoding: a generated row, written where the inputs are */
		const struct ps_attention *att = vals->att;
		const enum ps_kind out = token_kind(att);
		double *dense = k == PS_KIND_Q ? vals->q : k == PS_KIND_K ? vals->k : vals->v;
		double *x = scratch(vals, att->d);

		if (!x)
			return PS_ENOMEM;
		for (uint64_t b = 0; b < att->d; b++)
			x[b] = lookup(vals, ps_attention_id2(att, out, c0 - 1, b));
		dense[c0 * att->d + c1] = stand_in(vals, (unsigned)(k - PS_KIND_Q), c1, x);
		return PS_OK;
	}
	if (is_input(k)) /* always in the dense arrays */
		return PS_OK;
	if (code == PS_OP_COMPUTE) {
		double value = evaluate(vals, k, c0, c1);

		if (!(e = find_or_add(vals, v)))
			return PS_ENOMEM;
		e->value = value;
		set_flags(vals, e, (unsigned)(e->key & 3) | VAL_RED);
		return PS_OK;
	}
	if (!(e = find(vals, v)))
		return PS_OK;
	flags = (unsigned)(e->key & 3);
	switch (code) {
	case PS_OP_LOAD:
		flags |= VAL_RED;
		break;
	case PS_OP_SAVE:
		flags |= VAL_BLUE;
		break;
	default: /* delete: the value goes with its last copy */
		flags &= ~(unsigned)VAL_RED;
		break;
	}
	set_flags(vals, e, flags);
	return PS_OK;
}

/* An operation by id (one move) as the same operation by coordinates. */
static void by_coordinates(const struct ps_attention *att,
			   const struct ps_op *op, struct ps_op *out)
{
	uint64_t c[3];
	enum ps_kind k = ps_attention_decode(att, op->node, c);

	memset(out, 0, sizeof(*out));
	out->code = op->code;
	out->kind = k;
	if (op->code == PS_OP_MAC)
		out->kind = k == PS_KIND_P2 ? (att->causal ? PS_KIND_HJ : PS_KIND_H) :
			    k == PS_KIND_HC ? PS_KIND_HJ : k == PS_KIND_P1 ? PS_KIND_N :
			    k == PS_KIND_PS ? PS_KIND_S : PS_KIND_O;
	out->carry = op->code == PS_OP_MAC && k == PS_KIND_HC;
	for (unsigned p = 0; p < ps_kinds[k].arity; p++)
		out->c[p] = ps_one(c[p]);
}

int ps_values_apply(struct ps_values *vals, const struct ps_op *op,
		    struct ps_error *err)
{
	struct ps_op one;
	uint64_t n0, n1;
	int rc = PS_OK;

	if (op->by_id) {
		by_coordinates(vals->att, op, &one);
		op = &one;
	}
	if (op->code == PS_OP_MAC)
		rc = op->kind == PS_KIND_S ? mac_scores(vals, op) :
		     vals->att->causal && !vals->att->exact ? mac_causal(vals, op) :
		     mac_plain(vals, op);
	else if (ps_kinds[op->kind].arity == 2 || op->kind == PS_KIND_HJ) {
		/* a product (arity 3) is never loaded, saved or computed; the
		 * causal state is a sum of three coordinates */
		const bool three = ps_kinds[op->kind].arity == 3;
		const uint64_t n2 = three ? ps_coordset_size(&op->c[2]) : 1;

		n0 = ps_coordset_size(&op->c[0]);
		n1 = ps_coordset_size(&op->c[1]);
		for (uint64_t x0 = 0; x0 < n0 && !rc; x0++)
			for (uint64_t x1 = 0; x1 < n1 && !rc; x1++)
				for (uint64_t x2 = 0; x2 < n2 && !rc; x2++) {
					const uint64_t c0 = ps_coordset_at(&op->c[0], x0);
					const uint64_t c1 = ps_coordset_at(&op->c[1], x1);
					const ps_node v = three ?
						ps_attention_id3(vals->att, op->kind, c0, c1,
								 ps_coordset_at(&op->c[2], x2)) :
						ps_attention_id2(vals->att, op->kind, c0, c1);

					rc = move(vals, op->code, op->kind, c0, c1, v);
				}
	}
	return rc ? ps_error_set(err, rc, "out of memory for the values") : PS_OK;
}

/* ---- the direct evaluation and the report --------------------------------- */

/* sum_j x[j] in four interleaved partial sums (they vectorise) */
static double sum_lanes(const double *restrict x, uint64_t n)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0, sum;
	uint64_t j = 0;

	for (; j + 4 <= n; j += 4) {
		s0 += x[j];
		s1 += x[j + 1];
		s2 += x[j + 2];
		s3 += x[j + 3];
	}
	sum = (s0 + s1) + (s2 + s3);
	for (; j < n; j++)
		sum += x[j];
	return sum;
}

/* Scratch of the direct evaluation: K transposed, and three rows of n. */
struct direct {
	double *kt;             /* d x n */
	double *x, *weight, *e; /* n each */
	double *scores;         /* SCORE_ROWS x n: q_i.k_j, a block of rows */
	uint64_t first;         /* the block's first row */
	const double *c;        /* P's coefficients, c_0 .. c_g */
	uint64_t g;             /* P's degree */
	double max_score;       /* the largest |x| so far */
};

/*
 * q_i.k_j for the rows [first, first + rows) of the block, rows <=
 * SCORE_ROWS: four features a pass over K, each pass serving every row,
 * so that K is read d/4 times a block rather than a row.
 */
static void scores_block(const struct ps_values *vals, struct direct *dr,
			 uint64_t first, uint64_t rows)
{
	const uint64_t n = vals->att->n, d = vals->att->d;

	dr->first = first;
	for (uint64_t t = 0; t < rows * n; t++)
		dr->scores[t] = 0.0;
	for (uint64_t a = 0; a < d; a += 4) {
		const uint64_t width = d - a < 4 ? d - a : 4;
		const double *restrict k0 = dr->kt + a * n;

		for (uint64_t r = 0; r < rows; r++) {
			const double *q = vals->q + (first + r) * d + a;
			double *restrict x = dr->scores + r * n;

			if (width == 4) {
				const double q0 = q[0], q1 = q[1], q2 = q[2], q3 = q[3];
				const double *restrict k1 = k0 + n, *restrict k2 = k1 + n;
				const double *restrict k3 = k2 + n;

				for (uint64_t j = 0; j < n; j++)
					x[j] += q0 * k0[j] + q1 * k1[j] + q2 * k2[j] + q3 * k3[j];
				continue;
			}
			for (uint64_t b = 0; b < width; b++)
				for (uint64_t j = 0; j < n; j++)
					x[j] += q[b] * k0[b * n + j];
		}
	}
}

/*
 * Row i of the direct evaluation, without the DAG: direct[0..|B|) gets
 * P(x) V and D~ = sum_j P(x_j) in column d (approximate attention) or
 * exp(x) V and its sum (exact attention, only without softmax), and
 * with_softmax softmax(x) V in softmax[0..d), where x_j = q_i.k_j /
 * sqrt d. The loops run over j innermost or over b of a row of V, so
 * that they vectorise.
 */
static void direct_row(const struct ps_values *vals, struct direct *dr,
		       uint64_t i, double *restrict direct,
		       double *restrict softmax, bool with_softmax)
{
	const struct ps_attention *att = vals->att;
	const uint64_t n = att->n, d = att->d, g = dr->g;
	/* causal (MODEL.md section 7): row i sees keys j <= i */
	const uint64_t keys = att->causal ? i + 1 : n;
	const double root = sqrt((double)d);
	double *restrict x = dr->x, *restrict weight = dr->weight;
	double *restrict e = dr->e;
	const bool weights = !(att->exact && with_softmax);
	double largest = -INFINITY, total;

	for (uint64_t j = 0; j < keys; j++)
		x[j] = dr->scores[(i - dr->first) * n + j];
	for (uint64_t j = 0; j < keys; j++)
		x[j] /= root;
	for (uint64_t j = 0; j < keys; j++)
		dr->max_score = fabs(x[j]) > dr->max_score ? fabs(x[j]) : dr->max_score;
	{
		/* four lanes, so that the comparisons do not wait on each other */
		double lane[4] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY };
		uint64_t j = 0;

		for (; j + 4 <= keys; j += 4)
			for (unsigned t = 0; t < 4; t++)
				lane[t] = x[j + t] > lane[t] ? x[j + t] : lane[t];
		for (; j < keys; j++)
			lane[0] = x[j] > lane[0] ? x[j] : lane[0];
		for (unsigned t = 0; t < 4; t++)
			largest = lane[t] > largest ? lane[t] : largest;
	}
	if (weights && att->exact) {
		for (uint64_t j = 0; j < keys; j++)
			weight[j] = exp(x[j]);
	} else if (weights) {
		/* P(x) = sum_{l <= g} c_l x^l, by Horner's rule */
		for (uint64_t j = 0; j < keys; j++)
			weight[j] = dr->c[g];
		for (uint64_t l = g; l-- > 0;)
			for (uint64_t j = 0; j < keys; j++)
				weight[j] = weight[j] * x[j] + dr->c[l];
	}
	for (uint64_t j = 0; j < keys; j++)
		e[j] = with_softmax ? exp(x[j] - largest) : 0.0;
	for (uint64_t j = 0; !weights && j < keys; j++)
		weight[j] = 0.0;
	total = sum_lanes(e, keys);
	direct[d] = sum_lanes(weight, keys);
	/* eight columns of V at a time, their sums in registers */
	for (uint64_t b0 = 0; b0 < d; b0 += 8) {
		double dw[8] = { 0 }, ds[8] = { 0 };

		if (d - b0 >= 8) {
			/* pairs of columns in vector registers (GNU C's vector
			 * extension: plain C where it is absent) */
#if defined(__GNUC__)
			typedef double pair __attribute__((vector_size(16)));
			pair w01 = { 0, 0 }, w23 = w01, w45 = w01, w67 = w01;
			pair s01 = w01, s23 = w01, s45 = w01, s67 = w01;

			for (uint64_t j = 0; j < keys; j++) {
				const double *restrict v = vals->v + j * d + b0;
				const pair w = { weight[j], weight[j] }, s = { e[j], e[j] };
				pair v01, v23, v45, v67;

				memcpy(&v01, v, 16);
				memcpy(&v23, v + 2, 16);
				memcpy(&v45, v + 4, 16);
				memcpy(&v67, v + 6, 16);
				w01 += w * v01, w23 += w * v23, w45 += w * v45, w67 += w * v67;
				s01 += s * v01, s23 += s * v23, s45 += s * v45, s67 += s * v67;
			}
			memcpy(dw, &w01, 16), memcpy(dw + 2, &w23, 16);
			memcpy(dw + 4, &w45, 16), memcpy(dw + 6, &w67, 16);
			memcpy(ds, &s01, 16), memcpy(ds + 2, &s23, 16);
			memcpy(ds + 4, &s45, 16), memcpy(ds + 6, &s67, 16);
#else
			for (uint64_t j = 0; j < keys; j++) {
				const double *restrict v = vals->v + j * d + b0;

				for (unsigned t = 0; t < 8; t++) {
					dw[t] += weight[j] * v[t];
					ds[t] += e[j] * v[t];
				}
			}
#endif
		} else {
			for (uint64_t j = 0; j < keys; j++) {
				const double *restrict v = vals->v + j * d + b0;
				const double w = weight[j], s = e[j];

				for (unsigned t = 0; t < d - b0; t++) {
					dw[t] += w * v[t];
					ds[t] += s * v[t];
				}
			}
		}
		for (unsigned t = 0; t < 8 && b0 + t < d; t++) {
			direct[b0 + t] = dw[t];
			softmax[b0 + t] = ds[t];
		}
	}
	for (uint64_t b = 0; b < d; b++)
		softmax[b] /= total;
}

/* |a - b|, and infinitely far apart where either is NaN or an infinity:
 * an output that is not a finite number is never an error of 0, even
 * beside a direct evaluation that overflows the same way */
static double distance(double a, double b)
{
	if (!isfinite(a) || !isfinite(b))
		return INFINITY;
	return fabs(a - b);
}

/* One thread's share of the direct evaluation: rows [first, last), into
 * direct (n x |B|: the weighted sums and D~) and softmax (n x d). */
struct direct_share {
	const struct ps_values *vals;
	uint64_t first, last;
	double *direct, *softmax;
	const struct ps_polynomial *poly; /* approximate attention: P */
	double max_score; /* the largest |q_i.k_j| / sqrt d of its rows */
	bool failed; /* out of memory */
};

static void *direct_rows(void *arg)
{
	struct direct_share *sh = arg;
	const struct ps_attention *att = sh->vals->att;
	const uint64_t n = att->n, d = att->d;
	struct direct dr;

	dr.kt = malloc(n * d * sizeof(double));
	dr.x = malloc((3 + SCORE_ROWS) * n * sizeof(double));
	if (!dr.kt || !dr.x) {
		free(dr.kt);
		free(dr.x);
		sh->failed = true;
		return NULL;
	}
	dr.weight = dr.x + n;
	dr.e = dr.weight + n;
	dr.scores = dr.x + 3 * n;
	for (uint64_t j = 0; j < n; j++)
		for (uint64_t a = 0; a < d; a++)
			dr.kt[a * n + j] = sh->vals->k[j * d + a];
	dr.c = sh->poly->c;
	dr.g = sh->poly->g;
	dr.max_score = 0.0;
	dr.first = 0;
	for (uint64_t i = sh->first; i < sh->last; i++) {
		if ((i - sh->first) % SCORE_ROWS == 0)
			scores_block(sh->vals, &dr, i,
				     sh->last - i < SCORE_ROWS ? sh->last - i : SCORE_ROWS);
		direct_row(sh->vals, &dr, i, sh->direct + i * (d + 1), sh->softmax + i * d,
			   att->normalize);
	}
	sh->max_score = dr.max_score;
	free(dr.kt);
	free(dr.x);
	return NULL;
}

/*
 * The direct evaluation of every row, in two threads where the machine
 * has two processors and the rows are many: each row is computed alone,
 * the same way whoever computes it, so the results do not depend on the
 * split.
 */
static int direct_all(const struct ps_values *vals, const struct ps_polynomial *poly,
		      double *direct, double *softmax, double *max_score)
{
	const uint64_t n = vals->att->n;
	struct direct_share sh[2] = {
		{ vals, 0, n, direct, softmax, poly, 0.0, false },
		{ vals, n, n, direct, softmax, poly, 0.0, false },
	};
	pthread_t helper;
	bool two = n >= 256 && sysconf(_SC_NPROCESSORS_ONLN) > 1;

	if (two) {
		sh[0].last = sh[1].first = n / 2;
		if (pthread_create(&helper, NULL, direct_rows, &sh[1])) {
			two = false;
			sh[0].last = n;
		}
	}
	direct_rows(&sh[0]);
	if (two)
		pthread_join(helper, NULL);
	*max_score = sh[0].max_score > sh[1].max_score ? sh[0].max_score : sh[1].max_score;
	return sh[0].failed || sh[1].failed ? PS_ENOMEM : PS_OK;
}

/* P and the bound it gives, where every hypothesis of docs/VALUES.md's
 * proof holds. */
static void polynomial_bound(struct ps_values *vals)
{
	struct ps_values_report *rep = &vals->report;
	const struct ps_polynomial *p = &vals->poly;

	rep->has_polynomial = true;
	rep->polynomial = *p;
	rep->max_v = largest_entry(vals->v, vals->att->n * vals->att->d);
	rep->v_half_range = ps_half_range(vals->v, vals->att->n, vals->att->d);
	rep->bound = ps_polynomial_bound(p->eta, rep->v_half_range);
	if (!vals->att->normalize)
		rep->no_bound = "no A without normalisation";
	else if (!(rep->max_score <= p->beta))
		rep->no_bound = "a score q.k / sqrt d lies outside the interval";
	else if (!(p->eta < 1.0))
		rep->no_bound = "eta >= 1: P need not be positive on the interval";
	rep->has_bound = !rep->no_bound;
}

/* The report's worst output, when pebbled is further from direct than
 * any before it (or it is the first). */
static void judge(struct ps_values_report *rep, const char *kind, uint64_t i, uint64_t b,
		  double pebbled, double direct, bool first)
{
	const double gap = distance(pebbled, direct);

	if (isfinite(direct) && fabs(direct) > rep->scale)
		rep->scale = fabs(direct);
	if (gap > rep->error_vs_direct || first) {
		rep->error_vs_direct = gap;
		snprintf(rep->worst, sizeof(rep->worst), "%s[%llu,%llu]", kind,
			 (unsigned long long)i, (unsigned long long)b);
		rep->worst_pebbled = pebbled;
		rep->worst_direct = direct;
	}
}

/*
 * One generated row t of the decode recurrence (MODEL.md section 8), from
 * the last output last[0..d) and the cache's rows j < t in kc, vc: the
 * stand-in's q (into q) and row t of kc and vc, the scores x_j = q.k_j /
 * sqrt d for j <= t (into x), and into out[0..d) the weighted V over j <=
 * t: by P (poly) or exp (poly NULL), over the weights' sum where normalize.
 * exp is taken of x_j - max x where normalize. softmax, where not NULL,
 * gets softmax over the same scores times V. w and e: t + 1 doubles
 * each. Returns the largest |x_j|; *total the weights' sum.
 */
static double decode_step(const struct ps_values *vals, const struct ps_polynomial *poly,
			  bool normalize, uint64_t t, const double *last, double *restrict q,
			  double *restrict kc, double *restrict vc, double *restrict x,
			  double *restrict w, double *restrict e, double *out,
			  double *restrict softmax, double *total)
{
	const uint64_t d = vals->att->d;
	double largest = -INFINITY, top = 0.0, sum = 0.0, esum = 0.0;

	for (uint64_t a = 0; a < d; a++) {
		q[a] = stand_in(vals, 0, a, last);
		kc[t * d + a] = stand_in(vals, 1, a, last);
		vc[t * d + a] = stand_in(vals, 2, a, last);
	}
	for (uint64_t j = 0; j <= t; j++) {
		double s = 0.0;

		for (uint64_t a = 0; a < d; a++)
			s += q[a] * kc[j * d + a];
		x[j] = s / sqrt((double)d);
		largest = x[j] > largest ? x[j] : largest;
		top = fabs(x[j]) > top ? fabs(x[j]) : top;
	}
	for (uint64_t j = 0; j <= t; j++) {
		/* approximate attention: P(x), by Horner's rule */
		double v = poly ? poly->c[poly->g] : exp(x[j] - (normalize ? largest : 0.0));

		for (unsigned l = poly ? poly->g : 0; l-- > 0;)
			v = v * x[j] + poly->c[l];
		w[j] = v;
		sum += v;
		if (softmax) {
			e[j] = exp(x[j] - largest);
			esum += e[j];
		}
	}
	for (uint64_t b = 0; b < d; b++) {
		double s = 0.0, se = 0.0;

		for (uint64_t j = 0; j <= t; j++) {
			s += w[j] * vc[j * d + b];
			se += softmax ? e[j] * vc[j * d + b] : 0.0;
		}
		out[b] = normalize ? s / sum : s;
		if (softmax)
			softmax[b] = se / esum;
	}
	*total = sum;
	return top;
}

/* The scratch of a decode recurrence over the rows of vals: the cache
 * kc, vc (n x d, the prompt's rows copied from the inputs), the last
 * output (A[P-1] from Q's row P-1), q, and the rows x, w, e (n each). */
struct recurrence {
	double *kc, *vc, *last, *q, *x, *w, *e;
};

static void recurrence_free(struct recurrence *rc)
{
	free(rc->kc);
	free(rc->vc);
	free(rc->last);
	free(rc->x);
	memset(rc, 0, sizeof(*rc));
}

static int recurrence_init(const struct ps_values *vals, struct recurrence *rc)
{
	const uint64_t n = vals->att->n, d = vals->att->d, prompt = vals->att->decode;

	memset(rc, 0, sizeof(*rc));
	rc->kc = malloc(n * d * sizeof(double));
	rc->vc = malloc(n * d * sizeof(double));
	rc->last = malloc(2 * d * sizeof(double));
	rc->x = malloc(3 * n * sizeof(double));
	if (!rc->kc || !rc->vc || !rc->last || !rc->x) {
		recurrence_free(rc);
		return PS_ENOMEM;
	}
	rc->q = rc->last + d;
	rc->w = rc->x + n;
	rc->e = rc->w + n;
	/* the prompt's cache and last output, as the inputs hold them */
	memcpy(rc->kc, vals->k, prompt * d * sizeof(double));
	memcpy(rc->vc, vals->v, prompt * d * sizeof(double));
	memcpy(rc->last, vals->q + (prompt - 1) * d, d * sizeof(double));
	return PS_OK;
}

/* Row t of rc's recurrence: its output into rc->last (softmax beside it
 * where not NULL); the largest |score|, *total the weights' sum. */
static double recurrence_step(const struct ps_values *vals, struct recurrence *rc,
			      const struct ps_polynomial *poly, bool normalize, uint64_t t,
			      double *softmax, double *total)
{
	return decode_step(vals, poly, normalize, t, rc->last, rc->q, rc->kc, rc->vc, rc->x,
			   rc->w, rc->e, rc->last, softmax, total);
}

/*
 * Decoding (MODEL.md section 8): the same recurrence evaluated directly,
 * without the DAG: from A[P-1] and the prompt's cache, for each t the
 * stand-in's q, k, v, then softmax over j <= t (exp without
 * normalisation) times V. Every output is set beside it: A[t] (O[t]),
 * K[t] and V[t] for t >= P.
 */
static int finish_decode(struct ps_values *vals, struct ps_error *err)
{
	const struct ps_attention *att = vals->att;
	const uint64_t n = att->n, d = att->d, prompt = att->decode, tokens = n - prompt;
	const enum ps_kind out = token_kind(att);
	struct ps_values_report *rep = &vals->report;
	struct recurrence rc;

	memset(rep, 0, sizeof(*rep));
	free(vals->outputs);
	vals->outputs = malloc(tokens * d * sizeof(double));
	vals->output_rows = tokens;
	if (!vals->outputs || recurrence_init(vals, &rc))
		return ps_error_set(err, PS_ENOMEM, "out of memory for the direct evaluation");
	rep->computed = true;
	/* approximate decoding's recurrence is its own: no softmax beside it */
	rep->has_softmax = att->normalize && att->exact;
	rep->peak_values = vals->peak;
	for (uint64_t t = prompt; t < n; t++) {
		double total, top = recurrence_step(vals, &rc, att->exact ? NULL : &vals->poly,
						    att->normalize, t, NULL, &total);

		rep->max_score = top > rep->max_score ? top : rep->max_score;
		for (uint64_t b = 0; b < d; b++) {
			const double pebbled = lookup(vals, ps_attention_id2(att, out, t, b));

			vals->outputs[(t - prompt) * d + b] = pebbled;
			judge(rep, ps_kinds[out].name, t, b, pebbled, rc.last[b], t == prompt && b == 0);
			if (att->exact) { /* the grown cache */
				judge(rep, "K", t, b, vals->k[t * d + b], rc.kc[t * d + b], false);
				judge(rep, "V", t, b, vals->v[t * d + b], rc.vc[t * d + b], false);
			}
			if (rep->has_softmax && distance(pebbled, rc.last[b]) > rep->error_vs_softmax)
				rep->error_vs_softmax = distance(pebbled, rc.last[b]);
		}
	}
	/* approximate attention: P, but no attention bound of the run
	 * (docs/VALUES.md): each token's error feeds the next token's q, k
	 * and v */
	if (!att->exact) {
		polynomial_bound(vals);
		rep->has_bound = false;
		rep->no_bound = "decoding: each token's error feeds the next token's q, k and v, which the bound does not cover";
	}
	/* ... and the last state, sum over j < n of U2[j] V[j] */
	for (uint64_t m = 0; !att->exact && m < att->r; m++)
		for (uint64_t b = 0; b < att->nb; b++) {
			double s = 0.0;

			for (uint64_t j = 0; j < n; j++)
				s += monomial(att, rc.kc + j * d, m) * (b < d ? rc.vc[j * d + b] : 1.0);
			judge(rep, "H", n - 1, m * att->nb + b,
			      lookup(vals, ps_attention_id3(att, PS_KIND_HJ, n - 1, m, b)), s, false);
		}
	rep->tolerance = PS_VALUES_TOLERANCE * rep->scale;
	rep->failed = !(rep->error_vs_direct <= rep->tolerance);
	recurrence_free(&rc);
	return PS_OK;
}

int ps_values_measure_decode(const struct ps_values *vals, const struct ps_polynomial *p,
			     double *per_step, double *drift, struct ps_error *err)
{
	const struct ps_attention *att = vals->att;
	const uint64_t n = att->n, d = att->d;
	struct recurrence approx, exact;
	double *softmax = malloc(d * sizeof(double));

	if (!att->decode || att->exact || !att->normalize) {
		free(softmax);
		return ps_error_set(err, PS_EINPUT, "the per-step epsilon is measured on normalised approximate decoding");
	}
	if (!softmax || recurrence_init(vals, &approx)) {
		free(softmax);
		return ps_error_set(err, PS_ENOMEM, "out of memory for the direct evaluation");
	}
	if (recurrence_init(vals, &exact)) {
		recurrence_free(&approx);
		free(softmax);
		return ps_error_set(err, PS_ENOMEM, "out of memory for the direct evaluation");
	}
	*per_step = *drift = 0.0;
	for (uint64_t t = att->decode; t < n; t++) {
		double total, ignored;

		recurrence_step(vals, &approx, p, true, t, softmax, &total);
		recurrence_step(vals, &exact, NULL, true, t, NULL, &ignored);
		/* a normaliser of 0 or below gives no number: infinitely far,
		 * and the rows after it follow from none */
		if (!(total > 0.0)) {
			*per_step = *drift = INFINITY;
			break;
		}
		for (uint64_t b = 0; b < d; b++) {
			const double step = distance(approx.last[b], softmax[b]);
			const double apart = distance(approx.last[b], exact.last[b]);

			*per_step = step > *per_step ? step : *per_step;
			*drift = apart > *drift ? apart : *drift;
		}
	}
	recurrence_free(&approx);
	recurrence_free(&exact);
	free(softmax);
	return PS_OK;
}

int ps_values_finish(struct ps_values *vals, struct ps_error *err)
{
	const struct ps_attention *att = vals->att;
	const uint64_t n = att->n, d = att->d;
	const enum ps_kind out_kind = att->normalize ? PS_KIND_A : att->exact ? PS_KIND_O : PS_KIND_N;
	struct ps_values_report *rep = &vals->report;
	double *directs, *softmaxes;
	double start;

	if (att->decode)
		return finish_decode(vals, err);
	directs = malloc(n * (d + 1) * sizeof(double));
	softmaxes = malloc(n * d * sizeof(double));
	memset(rep, 0, sizeof(*rep));
	free(vals->outputs);
	vals->outputs = malloc(n * d * sizeof(double));
	vals->output_rows = n;
	if (!directs || !softmaxes || !vals->outputs) {
		free(directs);
		free(softmaxes);
		return ps_error_set(err, PS_ENOMEM, "out of memory for the direct evaluation");
	}
	rep->computed = true;
	rep->has_softmax = att->normalize;
	rep->peak_values = vals->peak;
	for (uint64_t i = 0; i < n; i++)
		for (uint64_t b = 0; b < d; b++)
			vals->outputs[i * d + b] = lookup(vals, ps_attention_id2(att, out_kind, i, b));
	start = ps_now_seconds();
	if (direct_all(vals, &vals->poly, directs, softmaxes, &rep->max_score)) {
		free(directs);
		free(softmaxes);
		return ps_error_set(err, PS_ENOMEM, "out of memory for the direct evaluation");
	}
	rep->direct_seconds = ps_now_seconds() - start;
	for (uint64_t i = 0; i < n; i++) {
		double *direct = directs + i * (d + 1), *softmax = softmaxes + i * d;

		if (att->normalize) {
			if (!att->exact && !(direct[d] > 0.0) && rep->nonpositive_rows++ == 0) {
				rep->first_nonpositive_row = i;
				rep->first_normaliser = direct[d];
			}
			for (uint64_t b = 0; b < d; b++)
				direct[b] = att->exact ? softmax[b] : direct[b] / direct[d];
		}
		for (uint64_t b = 0; b < d; b++) {
			double pebbled = vals->outputs[i * d + b];

			judge(rep, ps_kinds[out_kind].name, i, b, pebbled, direct[b], i == 0 && b == 0);
			if (att->normalize && distance(pebbled, softmax[b]) > rep->error_vs_softmax)
				rep->error_vs_softmax = distance(pebbled, softmax[b]);
		}
	}
	rep->tolerance = PS_VALUES_TOLERANCE * rep->scale;
	rep->failed = !(rep->error_vs_direct <= rep->tolerance);
	if (!att->exact)
		polynomial_bound(vals);
	free(directs);
	free(softmaxes);
	return PS_OK;
}

int ps_values_measure(const struct ps_values *vals, const struct ps_polynomial *p,
		      double *epsilon, struct ps_error *err)
{
	const struct ps_attention *att = vals->att;
	const uint64_t n = att->n, d = att->d;
	double *directs = malloc(n * (d + 1) * sizeof(double));
	double *softmaxes = malloc(n * d * sizeof(double));
	double max_score;
	int rc = PS_OK;

	if (att->exact || !att->normalize) {
		rc = ps_error_set(err, PS_EINPUT, "epsilon is measured on normalised approximate attention");
	} else if (!directs || !softmaxes ||
		   direct_all(vals, p, directs, softmaxes, &max_score)) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory for the direct evaluation");
	} else {
		*epsilon = 0.0;
		for (uint64_t i = 0; i < n; i++) {
			const double *direct = directs + i * (d + 1), *softmax = softmaxes + i * d;

			/* a normaliser of 0 or below gives no number: infinitely far */
			for (uint64_t b = 0; b < d; b++) {
				double gap = direct[d] > 0.0 ? distance(direct[b] / direct[d], softmax[b])
							     : INFINITY;

				*epsilon = gap > *epsilon ? gap : *epsilon;
			}
		}
	}
	free(directs);
	free(softmaxes);
	return rc;
}

/* ---- the sink ------------------------------------------------------------ */

static int values_emit(struct ps_sink *sink, const struct ps_op *op,
		       struct ps_error *err)
{
	struct ps_values_sink *s = (struct ps_values_sink *)sink;
	int rc = ps_sink_emit(s->next, op, err);

	/* the values follow only what the engine accepted */
	return rc ? rc : ps_values_apply(s->vals, op, err);
}

void ps_values_sink_init(struct ps_values_sink *s, struct ps_sink *next,
			 struct ps_values *vals)
{
	memset(s, 0, sizeof(*s));
	s->sink.emit = values_emit;
	s->next = next;
	s->vals = vals;
}
