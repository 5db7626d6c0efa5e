/*
 * The polynomial that replaces exp (include/pebblesim/polynomial.h,
 * docs/VALUES.md "The polynomial"): Taylor, Chebyshev interpolation and
 * the minimax polynomial in relative error, each with its eta bounded
 * from above on a grid.
 *
 * The fits work in the Chebyshev basis on t = x / beta in [-1, 1], in long
 * double, and convert to the monomial basis once at the end: T_j's
 * coefficients are integers, exact in long double for j <= 30, so the
 * conversion rounds only in its sums (docs/VALUES.md bounds it).
 */
#include "pebblesim/polynomial.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef long double real;

#define PI_L 3.141592653589793238462643383279502884L

/* The grid of eta: from this many cells, doubled until a cell hides at
 * most 1% more than the grid shows, up to the largest. */
#define ETA_FIRST_CELLS 1024
#define ETA_MAX_CELLS (UINT64_C(1) << 20)

/* Remez: the reference's search grid a point of the reference, its
 * iterations at most, and when the levelled error is level enough. */
#define REMEZ_GRID_PER_POINT 256
#define REMEZ_MAX_ITERATIONS 100
#define REMEZ_LEVEL 1e-8L

static const char *const kind_names[PS_POLYNOMIAL_KIND_COUNT] = {
	"taylor", "chebyshev", "minimax",
};

const char *ps_polynomial_name(enum ps_polynomial_kind kind)
{
	return (unsigned)kind < PS_POLYNOMIAL_KIND_COUNT ? kind_names[kind] : "?";
}

int ps_polynomial_parse(const char *name)
{
	for (int k = 0; k < PS_POLYNOMIAL_KIND_COUNT; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -1;
}

double ps_polynomial_interval(double entry_bound, uint64_t d)
{
	return entry_bound * entry_bound * sqrt((double)d);
}

double ps_polynomial_eval(const struct ps_polynomial *p, double x)
{
	double y = p->c[p->g];

	for (unsigned l = p->g; l-- > 0;)
		y = y * x + p->c[l];
	return y;
}

/*
 * docs/VALUES.md, "The attention bound": epsilon <= 2 eta / (1 + sqrt(1 -
 * eta^2)) R, R half the widest column range of V; no cancellation in this
 * form. The last factor covers the rounding of the few operations, so
 * that the double is at least the real number.
 */
double ps_polynomial_bound(double eta, double half_range)
{
	if (!(eta < 1.0))
		return INFINITY;
	return 2.0 * eta / (1.0 + sqrt(1.0 - eta * eta)) * half_range * (1.0 + 8.0 * DBL_EPSILON);
}

double ps_half_range(const double *v, uint64_t rows, uint64_t cols)
{
	double widest = 0.0;

	for (uint64_t b = 0; b < cols; b++) {
		double lo = INFINITY, hi = -INFINITY;

		for (uint64_t j = 0; j < rows; j++) {
			const double x = v[j * cols + b];

			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
		if (rows && (hi - lo) / 2.0 > widest)
			widest = (hi - lo) / 2.0;
	}
	return widest;
}

/* ---- the Chebyshev basis ------------------------------------------------- */

/* sum_{j <= g} a_j T_j(t), by Clenshaw's recurrence */
static real chebyshev_sum(const real *a, unsigned g, real t)
{
	real b1 = 0, b2 = 0;

	for (unsigned j = g; j > 0; j--) {
		real b0 = 2 * t * b1 - b2 + a[j];

		b2 = b1;
		b1 = b0;
	}
	return t * b1 - b2 + a[0];
}

/*
 * c_l of P(x) = sum_j a_j T_j(x / beta): T_j's integer coefficients by
 * T_{j+1} = 2t T_j - T_{j-1}, then c_l = (sum_j a_j T_j[l]) / beta^l.
 */
static void to_monomial(const real *a, unsigned g, double beta, double *c)
{
	real before[PS_POLYNOMIAL_MAX_FIT + 2] = { 0 }, now[PS_POLYNOMIAL_MAX_FIT + 2] = { 0 };
	real b[PS_POLYNOMIAL_MAX_FIT + 1] = { 0 };

	now[0] = 1; /* T_0 */
	for (unsigned j = 0; j <= g; j++) {
		real next[PS_POLYNOMIAL_MAX_FIT + 2] = { 0 };

		for (unsigned l = 0; l <= j; l++)
			b[l] += a[j] * now[l];
		for (unsigned l = 0; l <= j; l++)
			next[l + 1] += (j ? 2 : 1) * now[l];
		for (unsigned l = 0; j && l < j; l++)
			next[l] -= before[l];
		memcpy(before, now, sizeof(now));
		memcpy(now, next, sizeof(next));
	}
	for (unsigned l = 0; l <= g; l++)
		c[l] = (double)(b[l] / powl((real)beta, (real)l));
}

/* The interpolant of exp(beta t) at the g + 1 Chebyshev points of the
 * first kind, t_k = cos((2k + 1) pi / (2g + 2)), in the Chebyshev basis:
 * a_j = (2 / (g + 1)) sum_k f(t_k) T_j(t_k), a_0 halved. */
static void chebyshev_fit(unsigned g, double beta, real *a)
{
	const unsigned points = g + 1;

	for (unsigned j = 0; j <= g; j++)
		a[j] = 0;
	for (unsigned k = 0; k < points; k++) {
		real theta = PI_L * (2 * k + 1) / (2 * points);
		real f = expl((real)beta * cosl(theta));

		for (unsigned j = 0; j <= g; j++)
			a[j] += f * cosl(j * theta);
	}
	for (unsigned j = 0; j <= g; j++)
		a[j] *= (real)2 / points;
	a[0] /= 2;
}

/* ---- minimax: the Remez exchange in relative error ----------------------- */

/* p(t) e^(-beta t) - 1: the relative error at x = beta t */
static real relative_error(const real *a, unsigned g, double beta, real t)
{
	return chebyshev_sum(a, g, t) * expl(-(real)beta * t) - 1;
}

/* Solves the (size x size) system m z = rhs in place by Gaussian
 * elimination with partial pivoting; false where it is singular. */
static bool solve(real m[][PS_POLYNOMIAL_MAX_FIT + 3], real *rhs, unsigned size)
{
	for (unsigned col = 0; col < size; col++) {
		unsigned pivot = col;

		for (unsigned row = col + 1; row < size; row++)
			if (fabsl(m[row][col]) > fabsl(m[pivot][col]))
				pivot = row;
		if (!(fabsl(m[pivot][col]) > 0))
			return false;
		if (pivot != col) {
			real tmp;

			for (unsigned k = 0; k < size; k++) {
				tmp = m[col][k], m[col][k] = m[pivot][k], m[pivot][k] = tmp;
			}
			tmp = rhs[col], rhs[col] = rhs[pivot], rhs[pivot] = tmp;
		}
		for (unsigned row = col + 1; row < size; row++) {
			real f = m[row][col] / m[col][col];

			for (unsigned k = col; k < size; k++)
				m[row][k] -= f * m[col][k];
			rhs[row] -= f * rhs[col];
		}
	}
	for (unsigned row = size; row-- > 0;) {
		for (unsigned k = row + 1; k < size; k++)
			rhs[row] -= m[row][k] * rhs[k];
		rhs[row] /= m[row][row];
	}
	return true;
}

/* The point of [lo, hi] where sign * relative_error is largest, by golden
 * section (the error is smooth and has one extremum there). */
static real polish(const real *a, unsigned g, double beta, real lo, real hi, real sign)
{
	const real ratio = 0.6180339887498948482L;

	for (int it = 0; it < 60; it++) {
		real x1 = hi - ratio * (hi - lo), x2 = lo + ratio * (hi - lo);

		if (sign * relative_error(a, g, beta, x1) < sign * relative_error(a, g, beta, x2))
			lo = x1;
		else
			hi = x2;
	}
	return (lo + hi) / 2;
}

/*
 * The new reference: the extremum of each maximal run of one sign of the
 * error on a grid denser at the ends (t = -cos(pi s / S)), polished; the
 * g + 2 consecutive ones kept by dropping the smaller end. False where the
 * error changes sign fewer than g + 1 times.
 */
static bool exchange(const real *a, unsigned g, double beta, real *ref)
{
	const unsigned S = REMEZ_GRID_PER_POINT * (g + 2);
	real found[REMEZ_GRID_PER_POINT * (PS_POLYNOMIAL_MAX_FIT + 2) / 2 + 2];
	unsigned count = 0, first = 0, best = 0;
	real best_value = -1, sign = 0;

	for (unsigned s = 0; s <= S; s++) {
		real t = -cosl(PI_L * s / S), r = relative_error(a, g, beta, t);
		real here = r >= 0 ? 1 : -1;

		if (isnan(r))
			return false;
		if (here != sign) {
			if (count == sizeof(found) / sizeof(found[0]))
				return false;
			sign = here;
			count++;
			best_value = -1;
		}
		if (fabsl(r) > best_value) {
			best_value = fabsl(r);
			best = s;
			found[count - 1] = t;
		}
		/* the run's extremum polished once the run ends */
		if (s == S || ((relative_error(a, g, beta, -cosl(PI_L * (s + 1) / S)) >= 0 ? 1 : -1) != sign)) {
			real lo = -cosl(PI_L * (best ? best - 1 : 0) / S);
			real hi = -cosl(PI_L * (best < S ? best + 1 : S) / S);
			real t1 = polish(a, g, beta, lo, hi, sign);

			if (sign * relative_error(a, g, beta, t1) > best_value)
				found[count - 1] = t1;
		}
	}
	if (count < g + 2)
		return false;
	while (count - first > g + 2) {
		real lo = fabsl(relative_error(a, g, beta, found[first]));
		real hi = fabsl(relative_error(a, g, beta, found[count - 1]));

		if (lo < hi)
			first++;
		else
			count--;
	}
	memcpy(ref, found + first, (g + 2) * sizeof(real));
	return true;
}

/* The Remez exchange: false where a system is singular, the error does
 * not alternate, or it does not level within the iterations. */
static bool remez_fit(unsigned g, double beta, real *a)
{
	real ref[PS_POLYNOMIAL_MAX_FIT + 2];

	/* the Chebyshev extrema, ascending */
	for (unsigned i = 0; i < g + 2; i++)
		ref[i] = -cosl(PI_L * i / (g + 1));
	for (int it = 0; it < REMEZ_MAX_ITERATIONS; it++) {
		real m[PS_POLYNOMIAL_MAX_FIT + 2][PS_POLYNOMIAL_MAX_FIT + 3];
		real z[PS_POLYNOMIAL_MAX_FIT + 2];
		real top = 0, bottom = INFINITY;

		/* p(t_i) e^(-beta t_i) - (-1)^i E = 1 */
		for (unsigned i = 0; i < g + 2; i++) {
			real w = expl(-(real)beta * ref[i]), before = 1, now = ref[i];

			for (unsigned j = 0; j <= g; j++) {
				real T = j == 0 ? 1 : j == 1 ? ref[i] : 2 * ref[i] * now - before;

				if (j >= 2) {
					before = now;
					now = T;
				}
				m[i][j] = T * w;
			}
			m[i][g + 1] = i % 2 ? 1 : -1;
			z[i] = 1;
		}
		if (!solve(m, z, g + 2))
			return false;
		memcpy(a, z, (g + 1) * sizeof(real));
		if (!exchange(a, g, beta, ref))
			return false;
		for (unsigned i = 0; i < g + 2; i++) {
			real r = fabsl(relative_error(a, g, beta, ref[i]));

			top = r > top ? r : top;
			bottom = r < bottom ? r : bottom;
		}
		if (!isfinite(top))
			return false;
		if (top - bottom <= REMEZ_LEVEL * top + 64 * LDBL_EPSILON)
			return true;
	}
	return false;
}

/* ---- eta ----------------------------------------------------------------- */

/*
 * eta bounded from above (docs/VALUES.md, "What the grid misses"). With
 * r(x) = P(x) e^-x - 1, r' = (P' - P) e^-x and r'' = (P'' - 2P' + P)
 * e^-x, Taylor's theorem at a cell's middle x_c gives, on the cell of
 * width h, |r(x)| <= |r(x_c)| + |r'(x_c)| h/2 + h^2/8 max |r''|, and
 * max |r''| <= e^-x0 sum_l |c_l - 2(l+1) c_{l+1} + (l+1)(l+2) c_{l+2}|
 * m^l, with x0 the cell's left end and m = max(|x0|, |x1|); plus an
 * allowance for evaluating r and r' in long double.
 */
static void certify(struct ps_polynomial *p)
{
	const unsigned g = p->g;
	real curve[PS_POLYNOMIAL_MAX_G + 1], size[PS_POLYNOMIAL_MAX_G + 1];
	real c[PS_POLYNOMIAL_MAX_G + 3] = { 0 };
	const real beta = p->beta;
	real top = 0, grid = 0, spread = 0;

	if (p->beta > PS_POLYNOMIAL_MAX_BETA) {
		p->eta = p->eta_grid = INFINITY;
		p->cells = 0;
		return;
	}
	for (unsigned l = 0; l <= g; l++)
		c[l] = p->c[l];
	for (unsigned l = 0; l <= g; l++) {
		curve[l] = fabsl(c[l] - 2 * (real)(l + 1) * c[l + 1] +
				 (real)(l + 1) * (l + 2) * c[l + 2]);
		size[l] = fabsl(c[l]) * (l + 1);
	}
	for (p->cells = ETA_FIRST_CELLS;; p->cells *= 2) {
		const real h = 2 * beta / p->cells, half = expl(h / 2);

		top = grid = spread = 0;
		for (uint64_t k = 0; k < p->cells; k++) {
			real x0 = -beta + k * h, x1 = k + 1 == p->cells ? beta : -beta + (k + 1) * h;
			real xc = (x0 + x1) / 2, m = fabsl(x0) > fabsl(x1) ? fabsl(x0) : fabsl(x1);
			/* e^-x0 from e^-xc: one more rounding, covered by the
			 * allowance's factor */
			real wc = expl(-xc), w0 = wc * (k + 1 == p->cells ? expl((x1 - x0) / 2) : half) *
						(1 + 4 * LDBL_EPSILON);
			real y = c[g], dy = 0, bend = 0, magnitude = 0;
			real r, slope, between, cell;

			for (unsigned l = g; l-- > 0;) {
				dy = dy * xc + y;
				y = y * xc + c[l];
			}
			for (unsigned l = g + 1; l-- > 0;) {
				bend = bend * m + curve[l];
				magnitude = magnitude * m + size[l];
			}
			r = fabsl(y * wc - 1);
			slope = fabsl((dy - y) * wc);
			between = slope * ((x1 - x0) / 2) + (x1 - x0) * (x1 - x0) / 8 * bend * w0;
			cell = r + between + (4 * g + 16) * LDBL_EPSILON * (magnitude * w0 + 1);
			spread = between > spread ? between : spread;
			grid = r > grid ? r : grid;
			top = cell > top ? cell : top;
		}
		/* finer cells shrink what lies between points, not the
		 * rounding; and an eta of 1 or more gives no bound anyway */
		if (spread <= grid / 100 || top <= 1e-15L || grid >= 1 ||
		    (top >= 1 && p->cells >= ETA_MAX_CELLS / 16) || p->cells >= ETA_MAX_CELLS)
			break;
	}
	p->eta_grid = (double)grid;
	/* rounded up, so that the double still bounds */
	p->eta = nextafter((double)top, INFINITY);
	if (!isfinite(p->eta))
		p->eta = INFINITY;
}

/* ---- making one ---------------------------------------------------------- */

int ps_polynomial_make(struct ps_polynomial *p, enum ps_polynomial_kind kind,
		       unsigned g, double beta, struct ps_error *err)
{
	real a[PS_POLYNOMIAL_MAX_FIT + 2];

	memset(p, 0, sizeof(*p));
	p->kind = p->made = kind;
	p->g = g;
	p->beta = beta;
	if ((unsigned)kind >= PS_POLYNOMIAL_KIND_COUNT)
		return ps_error_set(err, PS_EINPUT, "unknown polynomial");
	if (g > PS_POLYNOMIAL_MAX_G)
		return ps_error_set(err, PS_EINPUT, "the degree g = %u is above %d", g,
				    PS_POLYNOMIAL_MAX_G);
	/* an infinite beta (inputs whose entries square past DBL_MAX) leaves
	 * Taylor's coefficients as they are and its eta infinite; the fits
	 * refuse it below */
	if (!(beta >= 0))
		return ps_error_set(err, PS_EINPUT, "the interval [-%g, %g] is not one", beta, beta);
	if (kind != PS_POLYNOMIAL_TAYLOR && g > PS_POLYNOMIAL_MAX_FIT)
		return ps_error_set(err, PS_EINPUT, "%s needs g <= %d, not %u", kind_names[kind],
				    PS_POLYNOMIAL_MAX_FIT, g);
	if (kind != PS_POLYNOMIAL_TAYLOR && beta > PS_POLYNOMIAL_MAX_BETA)
		return ps_error_set(err, PS_EINPUT, "%s on [-%g, %g]: exp(%g) overflows; the interval must be at most %g wide on each side",
				    kind_names[kind], beta, beta, beta, PS_POLYNOMIAL_MAX_BETA);
	if (kind == PS_POLYNOMIAL_TAYLOR) {
		/* 1/l! one division at a time, as the direct evaluation always had it */
		p->c[0] = 1.0;
		for (unsigned l = 1; l <= g; l++)
			p->c[l] = p->c[l - 1] / (double)l;
	} else if (beta == 0) {
		/* the interval is the point 0: P = 1 is exp there */
		p->c[0] = 1.0;
	} else if (kind == PS_POLYNOMIAL_MINIMAX && remez_fit(g, beta, a)) {
		to_monomial(a, g, beta, p->c);
	} else {
		if (kind == PS_POLYNOMIAL_MINIMAX) {
			p->made = PS_POLYNOMIAL_CHEBYSHEV;
			snprintf(p->note, sizeof(p->note),
				 "the Remez exchange did not converge at g = %u on [-%g, %g]; chebyshev instead",
				 g, beta, beta);
		}
		chebyshev_fit(g, beta, a);
		to_monomial(a, g, beta, p->c);
	}
	certify(p);
	if (p->made == PS_POLYNOMIAL_MINIMAX) {
		/* a fit that is worse than the interpolant has not converged to
		 * the minimax polynomial, whatever the levelling said */
		struct ps_polynomial cheb;

		ps_polynomial_make(&cheb, PS_POLYNOMIAL_CHEBYSHEV, g, beta, err);
		if (cheb.eta < p->eta) {
			*p = cheb;
			p->kind = PS_POLYNOMIAL_MINIMAX;
			snprintf(p->note, sizeof(p->note),
				 "the Remez exchange at g = %u on [-%g, %g] did worse than chebyshev; chebyshev instead",
				 g, beta, beta);
		}
	}
	return PS_OK;
}
