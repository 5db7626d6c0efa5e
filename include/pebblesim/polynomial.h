/*
 * The polynomial P that replaces exp in approximate attention (paper
 * section 2.2, MODEL.md section 6, docs/VALUES.md): P(x) = sum_{l <= g}
 * c_l x^l, of one of three kinds, with its a-priori relative error eta on
 * an interval [-beta, beta] and the attention error bound it implies.
 *
 * The DAG does not depend on P: U1's coefficient of a monomial of degree
 * l with multiplicities alpha is c_l C(l; alpha) d^(-l/2).
 */
#ifndef PEBBLESIM_POLYNOMIAL_H
#define PEBBLESIM_POLYNOMIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "pebblesim/common.h"

/* The DAG's largest degree g. */
#define PS_POLYNOMIAL_MAX_G 64

/* The largest g of chebyshev and minimax: the coefficients of the
 * Chebyshev polynomials T_j, j <= 30, are integers below 2^44, exact in
 * long double, and a monomial basis of higher degree on a wide interval
 * loses every digit to cancellation anyway. */
#define PS_POLYNOMIAL_MAX_FIT 30

/* Beyond this beta, exp(beta) overflows a double: no fit, eta infinite. */
#define PS_POLYNOMIAL_MAX_BETA 700.0

enum ps_polynomial_kind {
	PS_POLYNOMIAL_TAYLOR,    /* c_l = 1/l!: exact at 0, worst at the ends */
	PS_POLYNOMIAL_CHEBYSHEV, /* interpolant at the g+1 Chebyshev points */
	PS_POLYNOMIAL_MINIMAX,   /* best in relative error (Remez exchange) */
	PS_POLYNOMIAL_KIND_COUNT
};

struct ps_polynomial {
	enum ps_polynomial_kind kind; /* asked for */
	enum ps_polynomial_kind made; /* built: chebyshev where Remez failed */
	unsigned g;
	double beta;                  /* the interval [-beta, beta] */
	double c[PS_POLYNOMIAL_MAX_G + 1]; /* c_0 .. c_g */
	/* max over [-beta, beta] of |P(x) - e^x| / e^x, bounded from above:
	 * the grid's largest value plus what a cell can hide between its
	 * ends (docs/VALUES.md); INFINITY where exp(beta) overflows */
	double eta;
	double eta_grid;              /* the largest value on the grid */
	uint64_t cells;               /* the grid's cells */
	char note[200];               /* why minimax fell back, or "" */
};

/* "taylor", "chebyshev", "minimax". */
const char *ps_polynomial_name(enum ps_polynomial_kind kind);

/* The kind named, or -1. */
int ps_polynomial_parse(const char *name);

/* The default interval for entries of Q and K bounded by B: |q.k| /
 * sqrt d <= d B^2 / sqrt d = B^2 sqrt d. */
double ps_polynomial_interval(double entry_bound, uint64_t d);

/* Builds P of kind and degree g on [-beta, beta] and its eta: 0, or
 * PS_EINPUT (g above PS_POLYNOMIAL_MAX_FIT for a fit, beta not finite or
 * negative, or too wide for a fit), with why in err. */
int ps_polynomial_make(struct ps_polynomial *p, enum ps_polynomial_kind kind,
		       unsigned g, double beta, struct ps_error *err);

/* P(x) by Horner's rule in double, as the direct evaluation has it. */
double ps_polynomial_eval(const struct ps_polynomial *p, double x);

/*
 * The attention error bound of docs/VALUES.md: where every score x =
 * q.k / sqrt d lies in [-beta, beta] and eta < 1, max |A - softmax(Q
 * K^T / sqrt d) V| <= 2 eta / (1 + sqrt(1 - eta^2)) R in exact
 * arithmetic, R = max_b (max_j V[j,b] - min_j V[j,b]) / 2 (at most max|V|;
 * the bound is at most eta / (1 - eta) R), rounded up. INFINITY where eta
 * >= 1 (P need not be positive: no bound).
 */
double ps_polynomial_bound(double eta, double half_range);

/* R of ps_polynomial_bound: half the widest column range of the rows x
 * cols row-major V; 0 without rows. */
double ps_half_range(const double *v, uint64_t rows, uint64_t cols);

#endif
