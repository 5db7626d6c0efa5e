/*
 * Runs with values (MODEL.md section 6, docs/VALUES.md): the numbers a
 * pebbling computes. A layer beside the engine, told of each operation
 * after the engine has accepted it, so that it trusts every rule and only
 * keeps numbers: every red and blue pebble of a plain node or sum holds a
 * double, loads and saves copy it, compute evaluates the node, a mac adds
 * its product into the sum in the order of the sequence. The inputs Q, K,
 * V are dense n x d arrays; every other value lives in a hash map keyed by
 * node id while a red or blue copy of it exists, so memory follows the
 * values in fast and slow memory, not the DAG.
 *
 * A red and a blue copy never differ under the rules of MODEL.md section
 * 2 (a save makes them equal, a load too, and a mac removes the blue copy
 * it makes stale), so a node holds one number and two flags.
 *
 * At the end the outputs (A, or N or O without normalisation) are set
 * beside a direct evaluation of the same formula without the DAG, and, with
 * normalisation, beside softmax(Q K^T / sqrt d) V: the error of the
 * approximation itself, epsilon.
 */
#ifndef PEBBLESIM_VALUES_H
#define PEBBLESIM_VALUES_H

#include <stdbool.h>
#include <stdint.h>

#include "pebblesim/attention.h"
#include "pebblesim/common.h"
#include "pebblesim/ops.h"
#include "pebblesim/polynomial.h"

/* The seed of random inputs when none is given. */
#define PS_VALUES_DEFAULT_SEED UINT64_C(1)

/* A pebbled output further from the direct one than this, relative to
 * the largest direct output, is a failure. */
#define PS_VALUES_TOLERANCE 1e-9

/* Where the inputs come from: three .npy files, or random numbers. */
struct ps_values_inputs {
	const char *q, *k, *v; /* n x d each; all NULL: random */
	uint64_t seed;         /* random: uniform in [-entry_bound, entry_bound] */
	double entry_bound;
	/* approximate attention: P's kind, and its interval [-interval,
	 * interval] (0: B^2 sqrt d, B the entry bound or the largest |entry|
	 * of the files' Q and K) */
	enum ps_polynomial_kind polynomial;
	double interval;
};

/* What a run with values found. */
struct ps_values_report {
	bool computed;          /* the outputs were read (a valid sequence) */
	bool failed;            /* error_vs_direct above the tolerance */
	double error_vs_direct; /* max |pebbled - direct| over the outputs */
	double scale;           /* max |direct| over the outputs */
	double tolerance;       /* PS_VALUES_TOLERANCE x scale */
	bool has_softmax;       /* with normalisation */
	double error_vs_softmax; /* epsilon = max |A - softmax(Q K^T/sqrt d) V| */
	char worst[48];         /* the output furthest from the direct one */
	double worst_pebbled, worst_direct;
	uint64_t nonpositive_rows; /* rows whose normaliser D~ <= 0 */
	uint64_t first_nonpositive_row;
	double first_normaliser;
	uint64_t peak_values;   /* values held at most (not counting inputs) */
	double direct_seconds;  /* the direct evaluation's time */
	/* approximate attention: P, and the bound it gives on epsilon */
	bool has_polynomial;
	struct ps_polynomial polynomial;
	double max_v;           /* max |V| */
	double v_half_range;    /* R = max_b (max_j V[j,b] - min_j V[j,b]) / 2 */
	double max_score;       /* max |q_i.k_j| / sqrt d over the inputs */
	/* the bound 2 eta / (1 + sqrt(1 - eta^2)) R holds: normalised, eta <
	 * 1 and max_score <= beta (docs/VALUES.md); else why not */
	bool has_bound;
	double bound;
	const char *no_bound;
};

struct ps_values_entry; /* private to src/values.c */

struct ps_values {
	const struct ps_attention *att;
	struct ps_values_inputs in;
	double *q, *k, *v;      /* n x d, row-major */
	double *coef;           /* approximate attention: U1's coefficient of m */
	struct ps_polynomial poly; /* approximate attention: P */
	struct ps_values_entry *slots; /* the map: open addressing, linear probing */
	uint64_t mask, used, peak;
	unsigned shift;         /* 64 - log2(slots) */
	double *scratch;        /* a block's dense temporaries */
	uint64_t scratch_len;
	double *outputs;        /* output_rows x d once finished */
	uint64_t output_rows;   /* n; decoding, the n - P generated rows */
	double *stand_in;       /* decoding: W_q, W_k, W_v (d x d each,
				 * row-major; docs/VALUES.md "Decoding") */
	struct ps_values_report report;
};

/* Reads or draws the inputs for att; PS_EINPUT (a bad .npy file, with the
 * reason), PS_ENOMEM. */
int ps_values_init(struct ps_values *vals, const struct ps_attention *att,
		   const struct ps_values_inputs *in, struct ps_error *err);
void ps_values_free(struct ps_values *vals);

/* Bytes a run with values on att under M takes at its peak, estimated:
 * the inputs, the outputs, the direct evaluation's rows in two threads,
 * the coefficients, and the map of the values of pebbled nodes (the red
 * ones and the saved outputs). */
uint64_t ps_values_bytes(const struct ps_attention *att, uint64_t M);

/* Applies op, which the engine has accepted whole, to the values: 0 or
 * PS_ENOMEM. */
int ps_values_apply(struct ps_values *vals, const struct ps_op *op,
		    struct ps_error *err);

/* After a valid sequence: reads the outputs from slow memory into
 * vals->outputs and fills vals->report. */
int ps_values_finish(struct ps_values *vals, struct ps_error *err);

/*
 * epsilon = max |A - softmax(Q K^T / sqrt d) V| where A is the direct
 * evaluation (no pebbling) of the approximation with the polynomial p
 * in place of vals's own, on vals's inputs: how `frontier --bound
 * measured` picks g. Normalised approximate attention only; the DAG's g
 * need not be p's (a DAG of g = 0 holds the inputs at no cost). A row
 * whose normaliser is not positive counts as infinitely far. 0, PS_EINPUT
 * or PS_ENOMEM.
 */
int ps_values_measure(const struct ps_values *vals, const struct ps_polynomial *p,
		      double *epsilon, struct ps_error *err);

/*
 * Decoding (docs/VALUES.md "The per-step epsilon"): the decode
 * recurrence of vals's DAG (att->decode, normalised approximate
 * attention) run directly with the polynomial p from the prompt's cache
 * and A[P-1], each row's output feeding the next row's q, k and v. Into
 * per_step, max over the generated rows t and columns b of |A_p[t,b] -
 * softmax(q_t . k_j / sqrt d over j <= t) V[b]|, softmax of the same
 * row's q over the same keys and values; into drift, max |A_p[t,b] -
 * A_exp[t,b]|, A_exp the recurrence run with softmax, feeding its own
 * outputs forward. A row whose normaliser is not positive makes both
 * infinite. 0, PS_EINPUT or PS_ENOMEM.
 */
int ps_values_measure_decode(const struct ps_values *vals, const struct ps_polynomial *p,
			     double *per_step, double *drift, struct ps_error *err);

/* The value a node holds now (red or blue), or false. */
bool ps_values_get(const struct ps_values *vals, ps_node v, double *value);

/* A sink that passes each operation to next and, once next has accepted
 * it, to the values. */
struct ps_values_sink {
	struct ps_sink sink;
	struct ps_sink *next;
	struct ps_values *vals;
};

void ps_values_sink_init(struct ps_values_sink *s, struct ps_sink *next,
			 struct ps_values *vals);

#endif
