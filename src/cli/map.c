/*
 * pebblesim map: the paper's case (I to IV, as ps_classify_case decides
 * it) and the cheapest of a list of strategies (by their cost models) at
 * every point of a grid over two of n, d, g and M, the others fixed; with
 * Theorem 1.2's line w0 = g (M = (4e)^(g+1)) and the line M = 4 g^2
 * (Case III above it, IV below) where they apply (docs/MAP.md).
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pebblesim/monomial.h"
#include "pebblesim/plot.h"
#include "pebblesim/polynomial.h"
#include "pebblesim/sweep.h"

/* At most this many points a side: a map of 64 x 64 cells. */
#define MAP_MAX_SIDE 64
/* Samples of a line per unit of g, where g is an axis. */
#define MAP_LINE_STEPS 16

#define MAP_PARAM(id, letter, field, kind, least, what) \
	{ id, letter, NULL, kind, offsetof(struct cli_args, field), least, CLI_RANGE, "V", what }

const struct cli_option map_options[] = {
	MAP_PARAM(OPT_N, 'n', n, CLI_SIZE, 1, "rows, or a range LO:HI, LO:HI:xK, LO:HI:+K (k, M, G,\n2^k allowed)"),
	MAP_PARAM(OPT_D, 'd', d, CLI_COUNT, 1, "features, or a range"),
	MAP_PARAM(OPT_G, 'g', g, CLI_COUNT, 0, "degree, or a range"),
	MAP_PARAM(OPT_M, 'M', M, CLI_SIZE, 1, "fast memory, or a range"),
	CLI_OPT_NO_NORMALIZE,
	CLI_OPT_CAUSAL,
	{ OPT_STRATEGIES, 0, "strategies", CLI_STRING, offsetof(struct cli_args, strategies), 0, 0, "LIST",
	  "the strategies compared at each point (comma-separated;\n"
	  "default the paper's: generic,caseI,keylemma,subtile,matmul;\n"
	  "colpass, best, flash ... may be added)" },
	CLI_OPT_PLOT("draw the map into FILE.svg, FILE.png or FILE.pdf\n(gnuplot): the case on the left, the cheapest on the right"),
	CLI_OPT_PLOT_SCRIPT,
	CLI_OPT_JSON("print {\"map\":{...,\"cells\":[...],\"lines\":[...]}} on one line"),
	CLI_OPT_HELP,
	CLI_OPT_END,
};

const char *cli_plot_polynomial(const struct cli_args *a, bool known)
{
	int kind = a->polynomial ? ps_polynomial_parse(a->polynomial) : PS_POLYNOMIAL_TAYLOR;

	return known && kind >= 0 ? ps_polynomial_name((enum ps_polynomial_kind)kind) : NULL;
}

/* The order axes are chosen in: x is the first range of g, d, n, M, y
 * the other, so that M, when swept, is always y. */
static const char axis_order[] = { 'g', 'd', 'n', 'M' };

static enum cli_option_id option_of(char param)
{
	return param == 'n' ? OPT_N : param == 'd' ? OPT_D : param == 'g' ? OPT_G : OPT_M;
}

static void set_param(struct ps_attention_params *p, uint64_t *M, char param, uint64_t v)
{
	switch (param) {
	case 'n': p->n = v; break;
	case 'd': p->d = v; break;
	case 'g': p->g = v; break;
	default: *M = v; break;
	}
}

/* The case at one point, as `run --dry-run` classifies it, or NULL with
 * why (a DAG beyond the limits). */
static const char *case_at(const struct ps_attention_params *p, uint64_t M, char *why, size_t len)
{
	struct ps_attention att;
	struct ps_error err;
	const char *c;

	ps_error_clear(&err);
	if (p->causal) { /* as run and sweep say it */
		snprintf(why, len, "the paper's cases are of non-causal attention: the causal DAG has none");
		return NULL;
	}
	if (ps_attention_check_dag(p, &err) || ps_attention_init(&att, p, &err)) {
		snprintf(why, len, "%s", err.msg);
		return NULL;
	}
	c = ps_classify_case(&att, M, why, len);
	ps_attention_free(&att);
	return c;
}

struct map_run {
	struct ps_map map;
	struct ps_attention_params base;
	uint64_t M;
	uint64_t xs[MAP_MAX_SIDE], ys[MAP_MAX_SIDE];
	struct ps_map_cell *cells;
	const char *labels[PS_SWEEP_MAX_STRATEGIES];
	size_t label_count;
	double (*points)[2];
	size_t point_count, point_max;
};

static void add_point(struct map_run *m, double x, double y)
{
	if (m->point_count < m->point_max) {
		m->points[m->point_count][0] = x;
		m->points[m->point_count][1] = y;
		m->point_count++;
	}
}

/* The two lines, as functions of g: M on the line, and g on it for a
 * given M. Theorem 1.2 (section 3.4) needs w0 = g M^(1/(g+1)) / (4e) >= g,
 * i.e. M >= (4e)^(g+1); ps_classify_case puts a point of neither Case I
 * nor II in Case III when M/4 >= g^2, i.e. M >= 4 g^2 (up to M's rounding
 * down to a multiple of 4). */
static double line_M(int line, double g)
{
	return line == 0 ? pow(4 * exp(1.0), g + 1) : 4 * g * g;
}

static double line_g(int line, double M)
{
	return line == 0 ? log(M) / log(4 * exp(1.0)) - 1 : sqrt(M) / 2;
}

/* The case on the side of the line where it matters: II just above
 * Theorem 1.2's line (w0 >= g), III just above M = 4 g^2. */
static const char *const line_case[2] = { "II", "III" };

/* Whether line applies at params p: the case at (p, M) is line_case,
 * and for Theorem 1.2's line its M = o(d r) as pebblesim checks it, M <
 * d r (docs/BOUNDS.md). */
static bool line_applies(int line, const struct ps_attention_params *p, uint64_t M)
{
	char why[512];
	const char *c = case_at(p, M, why, sizeof(why));
	uint64_t r;

	/* an r that overflows is far above any M */
	if (line == 0 && !ps_binom(p->d + p->g, p->g, &r) && (double)M >= (double)p->d * (double)r)
		return false;
	return c && !strcmp(c, line_case[line]);
}

/* The points of each line, broken (a NaN) where it does not apply. */
static void map_lines(struct map_run *m)
{
	struct ps_map *map = &m->map;
	const bool x_g = map->x == 'g', y_M = map->y == 'M';

	for (int line = 0; line < 2; line++) {
		struct ps_map_line *l = &map->lines[map->line_count];
		size_t start = m->point_count;

		if (!x_g && !y_M)
			break; /* both fixed: the lines are nowhere or everywhere */
		for (size_t k = 0; k < (x_g ? map->nx : map->ny); k++) {
			struct ps_attention_params p = m->base;
			uint64_t M = m->M;
			double lo, hi;

			if (x_g && y_M) {
				/* a curve: the column of g = xs[k], from one edge to the other */
				double g = (double)m->xs[k], top, bottom;

				ps_map_cell_edges(m->xs, map->nx, k, 'g', &lo, &hi);
				ps_map_axis_span(m->ys, map->ny, 'M', &bottom, &top);
				p.g = m->xs[k];
				if ((line == 0 && p.g == 0) || line_M(line, g) > 9e18 ||
				    !line_applies(line, &p, (uint64_t)ceil(line_M(line, g))))
					continue;
				for (int s = 0, in = 0; s <= MAP_LINE_STEPS; s++) {
					double gs = lo + (hi - lo) * s / MAP_LINE_STEPS, y = line_M(line, gs);

					if (gs > 0 && y >= bottom && y <= top) {
						add_point(m, gs, y);
						in++;
					}
					if (s == MAP_LINE_STEPS && in)
						add_point(m, NAN, NAN);
				}
			} else if (y_M) {
				/* horizontal, at M on the line for the fixed g, across
				 * the columns where it applies */
				double y = line_M(line, (double)p.g), bottom, top;

				ps_map_axis_span(m->ys, map->ny, 'M', &bottom, &top);
				if (y < bottom || y > top)
					continue;

				set_param(&p, &M, map->x, m->xs[k]);
				ps_map_cell_edges(m->xs, map->nx, k, map->x, &lo, &hi);
				if ((line == 0 && p.g == 0) || y > 9e18 ||
				    !line_applies(line, &p, (uint64_t)ceil(y)))
					continue;
				add_point(m, lo, y);
				add_point(m, hi, y);
				add_point(m, NAN, NAN);
			} else {
				/* vertical, at g on the line for the fixed M, across the
				 * rows where the largest g left of it is in line_case */
				double g = line_g(line, (double)M), left, right;

				ps_map_axis_span(m->xs, map->nx, 'g', &left, &right);
				if (g < left || g > right)
					continue;

				set_param(&p, &M, map->y, m->ys[k]);
				ps_map_cell_edges(m->ys, map->ny, k, map->y, &lo, &hi);
				if (g < 0 || (line == 0 && g < 1))
					continue;
				p.g = (uint64_t)floor(g);
				if (!line_applies(line, &p, M))
					continue;
				add_point(m, g, lo);
				add_point(m, g, hi);
				add_point(m, NAN, NAN);
			}
		}
		if (m->point_count == start)
			continue;
		l->name = line == 0 ? "Theorem 1.2, w0 = g: M = (4e)^(g+1), Case II above"
				    : "M = 4 g^2: Case III above, IV below";
		l->formula = line == 0 ? "M = (4e)^(g+1)" : "M = 4 g^2";
		l->applies = line_case[line];
		l->points = m->points + start;
		l->count = m->point_count - start;
		map->line_count++;
	}
}

/* Each cell: the case, and the cheapest strategy by its cost model. */
static void map_cells(struct map_run *m, const struct cli_args *a)
{
	struct ps_map *map = &m->map;

	for (size_t iy = 0; iy < map->ny; iy++)
		for (size_t ix = 0; ix < map->nx; ix++) {
			struct ps_map_cell *c = &m->cells[iy * map->nx + ix];
			struct ps_attention_params p = m->base;
			struct ps_sweep_spec spec;
			uint64_t M = m->M;

			set_param(&p, &M, map->x, m->xs[ix]);
			set_param(&p, &M, map->y, m->ys[iy]);
			c->x = m->xs[ix];
			c->y = m->ys[iy];
			c->case_name = case_at(&p, M, c->why, sizeof(c->why));
			c->cheapest[0] = '\0';
			memset(&spec, 0, sizeof(spec));
			spec.n = p.n;
			spec.d = p.d;
			spec.g = p.g;
			spec.M = M;
			spec.normalize = !a->no_normalize;
			spec.causal = a->causal;
			spec.predict = true;
			spec.range = (struct ps_sweep_range){ 'n', p.n, p.n, 1, false };
			for (size_t q = 0; q < m->label_count; q++) {
				struct ps_sweep_row row;

				ps_sweep_point(&spec, p.n, m->labels[q], &row);
				if (row.ran && (!c->cheapest[0] || row.io < c->io)) {
					snprintf(c->cheapest, sizeof(c->cheapest), "%s", m->labels[q]);
					c->io = row.io;
				}
			}
		}
}

static void print_grid(const struct map_run *m, bool cases, FILE *out)
{
	const struct ps_map *map = &m->map;

	fprintf(out, "%-22s %c:", cases ? "case" : "cheapest", map->x);
	for (size_t ix = 0; ix < map->nx; ix++)
		fprintf(out, " %9llu", (unsigned long long)m->xs[ix]);
	fputc('\n', out);
	for (size_t iy = map->ny; iy-- > 0;) {
		fprintf(out, "  %c = %-17llu  ", map->y, (unsigned long long)m->ys[iy]);
		for (size_t ix = 0; ix < map->nx; ix++) {
			const struct ps_map_cell *c = &m->cells[iy * map->nx + ix];

			fprintf(out, " %9s", cases ? (c->case_name ? c->case_name : "-")
						   : (c->cheapest[0] ? c->cheapest : "-"));
		}
		fputc('\n', out);
	}
}

static void fixed_text(const struct map_run *m, char *buf, size_t len)
{
	const struct {
		char name;
		uint64_t value;
	} params[] = { { 'n', m->base.n }, { 'd', m->base.d }, { 'g', m->base.g }, { 'M', m->M } };
	size_t used = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < 4 && used < len; k++)
		if (params[k].name != m->map.x && params[k].name != m->map.y)
			used += (size_t)snprintf(buf + used, len - used, "%s%c = %llu", used ? ", " : "",
						 params[k].name, (unsigned long long)params[k].value);
}

static void map_print(const struct map_run *m, FILE *out)
{
	const struct ps_map *map = &m->map;
	char fixed[128];

	fixed_text(m, fixed, sizeof(fixed));
	fprintf(out, "map                    the case and the cheapest strategy over %c (x) and %c (y); %s%s%s\n",
		map->x, map->y, fixed, m->base.normalize ? "" : ", not normalised",
		m->base.causal ? ", causal" : "");
	fprintf(out, "strategies             ");
	for (size_t q = 0; q < m->label_count; q++)
		fprintf(out, "%s%s", q ? ", " : "", m->labels[q]);
	fprintf(out, " (the cheapest by their cost models; ties go to the first listed)\n");
	if (m->base.causal)
		fprintf(out, "case                   none: the paper's cases are of non-causal attention: the causal DAG has none\n");
	else
		print_grid(m, true, out);
	print_grid(m, false, out);
	for (size_t l = 0; l < map->line_count; l++) {
		const struct ps_map_line *line = &map->lines[l];
		size_t segments = 0;

		for (size_t k = 0; k < line->count; k++)
			segments += isnan(line->points[k][0]);
		fprintf(out, "line                   %s: drawn over %zu %s%s where the case beside it is %s\n",
			line->formula, segments, map->x == 'g' && map->y == 'M' ? "column" : "cell",
			segments == 1 ? "" : "s", line->applies);
	}
	if (map->x != 'g' && map->y != 'M')
		fprintf(out, "lines                  none: Theorem 1.2's w0 = g and M = 4 g^2 depend on g and M only, both fixed here\n");
}

static int map_print_json(const struct map_run *m, FILE *out)
{
	const struct ps_map *map = &m->map;
	json_t *cells = json_array(), *lines = json_array(), *labels = json_array();
	json_t *fixed = json_object(), *xs = json_array(), *ys = json_array(), *root;
	char xname[2] = { map->x, 0 }, yname[2] = { map->y, 0 };
	const struct {
		const char *name;
		uint64_t value;
	} params[] = { { "n", m->base.n }, { "d", m->base.d }, { "g", m->base.g }, { "M", m->M } };
	int rc;

	for (size_t k = 0; k < 4; k++)
		if (params[k].name[0] != map->x && params[k].name[0] != map->y)
			json_object_set_new(fixed, params[k].name, json_integer((json_int_t)params[k].value));
	for (size_t q = 0; q < m->label_count; q++)
		json_array_append_new(labels, json_string(m->labels[q]));
	for (size_t k = 0; k < map->nx; k++)
		json_array_append_new(xs, json_integer((json_int_t)m->xs[k]));
	for (size_t k = 0; k < map->ny; k++)
		json_array_append_new(ys, json_integer((json_int_t)m->ys[k]));
	for (size_t k = 0; k < map->nx * map->ny; k++) {
		const struct ps_map_cell *c = &m->cells[k];
		json_t *cell = json_object();

		json_object_set_new(cell, xname, json_integer((json_int_t)c->x));
		json_object_set_new(cell, yname, json_integer((json_int_t)c->y));
		json_object_set_new(cell, "case", c->case_name ? json_string(c->case_name) : json_null());
		if (!c->case_name)
			json_object_set_new(cell, "why", json_string(c->why));
		json_object_set_new(cell, "cheapest", c->cheapest[0] ? json_string(c->cheapest) : json_null());
		json_object_set_new(cell, "io", c->cheapest[0] ? json_integer((json_int_t)c->io) : json_null());
		json_array_append_new(cells, cell);
	}
	for (size_t l = 0; l < map->line_count; l++) {
		const struct ps_map_line *line = &map->lines[l];
		json_t *points = json_array();

		for (size_t k = 0; k < line->count; k++)
			if (!isnan(line->points[k][0]))
				json_array_append_new(points, json_pack("[f,f]", line->points[k][0], line->points[k][1]));
		json_array_append_new(lines, json_pack("{s:s, s:s, s:s, s:o}", "name", line->name, "formula",
						       line->formula, "applies_beside", line->applies, "points", points));
	}
	root = json_pack("{s:{s:s, s:s, s:o, s:b, s:o, s:o, s:o, s:o, s:o}}", "map", "x", xname, "y", yname,
			 "fixed", fixed, "normalize", m->base.normalize, "strategies", labels, "xs", xs, "ys", ys,
			 "cells", cells, "lines", lines);
	if (m->base.causal)
		json_object_set_new(json_object_get(root, "map"), "causal", json_true());
	rc = json_dumpf(root, out, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	fputc('\n', out);
	json_decref(root);
	return rc;
}

/* The axes: exactly two of -n -d -g -M as ranges, x and y in the order
 * of axis_order; 0 or PS_EXIT_USAGE. */
static int read_axes(const struct cli_command *cmd, const struct cli_args *a, struct map_run *m,
		     FILE *errout)
{
	struct ps_sweep_range range;
	struct ps_error err;
	size_t axes = 0;

	for (size_t k = 0; k < sizeof(axis_order); k++) {
		const char *text = a->text[option_of(axis_order[k])];
		uint64_t *values;
		size_t count;

		if (!a->given[option_of(axis_order[k])])
			return cli_usage_error(cmd, errout, "map needs -n, -d, -g and -M, two of them ranges");
		if (!strchr(text, ':'))
			continue;
		ps_error_clear(&err);
		if (ps_sweep_range_parse(axis_order[k], text, &range, &err))
			return cli_usage_error(cmd, errout, "%s", err.msg);
		if (axes == 2)
			return cli_usage_error(cmd, errout, "map takes exactly two ranges, here three or more");
		values = axes ? m->ys : m->xs;
		count = ps_sweep_points(&range, values, MAP_MAX_SIDE);
		if (count > MAP_MAX_SIDE)
			return cli_usage_error(cmd, errout, "-%c %s: at most %d points a side", axis_order[k],
					       text, MAP_MAX_SIDE);
		if (axes) {
			m->map.y = axis_order[k];
			m->map.ny = count;
		} else {
			m->map.x = axis_order[k];
			m->map.nx = count;
		}
		axes++;
	}
	if (axes != 2)
		return cli_usage_error(cmd, errout, "map takes exactly two ranges (of -n, -d, -g, -M), here %zu", axes);
	return 0;
}

int cmd_map(const struct cli_command *cmd, const struct cli_args *a,
	    FILE *out, FILE *errout)
{
	struct map_run *m = calloc(1, sizeof(*m));
	struct ps_sweep_spec check;
	struct ps_error err;
	char labels[512], *save = NULL, title[160];
	int rc = PS_EXIT_VALID;

	if (!m) {
		fprintf(errout, "pebblesim: out of memory\n");
		return PS_EXIT_USAGE;
	}
	if ((rc = cli_check_when(cmd, a, false, errout)) || (rc = read_axes(cmd, a, m, errout)))
		goto done;
	if (a->operand_count) {
		rc = cli_usage_error(cmd, errout, "unexpected argument '%s' for map", a->operands[0]);
		goto done;
	}
	m->base = (struct ps_attention_params){ .n = a->n, .d = a->d, .g = a->g, .normalize = !a->no_normalize,
					       .causal = a->causal };
	m->M = a->M;
	/* the paper's tilings; on the causal DAG, the strategies of its
	 * recurrent form (MODEL.md section 7) */
	snprintf(labels, sizeof(labels), "%s", a->strategies ? a->strategies :
		 a->causal ? "recurrent,causal-colpass" : "generic,caseI,keylemma,subtile,matmul");
	for (char *tok = strtok_r(labels, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (m->label_count == PS_SWEEP_MAX_STRATEGIES) {
			rc = cli_usage_error(cmd, errout, "at most %d strategies", PS_SWEEP_MAX_STRATEGIES);
			goto done;
		}
		m->labels[m->label_count++] = tok;
	}
	if ((rc = cli_check_labels(cmd, "--strategies", m->labels, m->label_count, errout)))
		goto done;
	/* the strategies known, the sizes sane: as a sweep checks them */
	memset(&check, 0, sizeof(check));
	check.n = m->base.n;
	check.d = m->base.d;
	check.g = m->base.g;
	check.M = m->M;
	check.range = (struct ps_sweep_range){ 'n', m->base.n, m->base.n, 1, false };
	memcpy(check.labels, m->labels, sizeof(m->labels));
	check.label_count = m->label_count;
	ps_error_clear(&err);
	if (ps_sweep_check(&check, &err)) {
		rc = cli_usage_error(cmd, errout, "%s", err.msg);
		goto done;
	}
	m->cells = calloc(m->map.nx * m->map.ny, sizeof(*m->cells));
	m->point_max = 2 * (MAP_MAX_SIDE * (MAP_LINE_STEPS + 2) + 2);
	m->points = calloc(m->point_max, sizeof(*m->points));
	if (!m->cells || !m->points) {
		fprintf(errout, "pebblesim: out of memory\n");
		rc = PS_EXIT_USAGE;
		goto done;
	}
	m->map.xs = m->xs;
	m->map.ys = m->ys;
	m->map.cells = m->cells;
	m->map.strategies = m->labels;
	m->map.strategy_count = m->label_count;
	map_cells(m, a);
	map_lines(m);
	if (a->plot || a->plot_script) {
		fixed_text(m, title, sizeof(title));
		m->map.fixed = title;
		if (ps_map_plot(a->plot, &m->map, &(struct ps_plot_options){ .script = a->plot_script }, &err)) {
			fprintf(errout, "pebblesim: %s\n", err.msg);
			rc = PS_EXIT_USAGE;
			goto done;
		}
	}
	if (a->json)
		map_print_json(m, out);
	else
		map_print(m, out);
done:
	free(m->cells);
	free(m->points);
	free(m);
	return rc;
}

const struct cli_help map_help = {
	"map -n N -d D -g G -M M (two of them ranges LO:HI[:xK|:+K]) [--strategies LIST] [--json] [--plot FILE]",
	"the paper's case and the cheapest strategy over two parameters",
	"Classifies every point of a grid over two of n, d, g and M (the others\n"
	"fixed) into the paper's Cases I to IV, with the constants of\n"
	"docs/BOUNDS.md (as `run --dry-run` prints them), and names the cheapest of\n"
	"the listed strategies there by their cost models. x is the first range of\n"
	"g, d, n, M and y the other. Prints both grids (y growing upwards), or\n"
	"JSON; --plot draws them side by side, with Theorem 1.2's line w0 = g\n"
	"(M = (4e)^(g+1): Case II above it runs the theorem's w0) and the line\n"
	"M = 4 g^2 (Case III above, IV below), each where the case beside it is\n"
	"II or III; both depend on g and M only (docs/MAP.md).\n",
	"  pebblesim map -n 4096 -d 16 -g 1:6 -M 64:1M:x2 --plot map.svg\n"
	"      the cases and the cheapest of the paper's strategies over g and M\n"
	"  pebblesim map -n 1k:64k:x2 -d 16 -g 3 -M 256:64k:x4 --strategies caseI,keylemma,colpass,flash\n"
	"      which strategy moves least over n and M, flash included\n",
};
