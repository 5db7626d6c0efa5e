/*
 * Parameter sweeps: one parameter (n, d, g or M) over a range, the others
 * fixed, every listed strategy at every point, on the DAG each strategy
 * pebbles (flash and exact-matmul exact attention, the others approximate
 * attention). Points run through the engine, or through the cost models
 * alone (predict), in parallel processes with results identical to one;
 * rows go to CSV and JSON, and the crossovers are found; pebblesim/plot.h
 * draws them. docs/EXACT.md shows the crossover this answers.
 */
#ifndef PEBBLESIM_SWEEP_H
#define PEBBLESIM_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pebblesim/common.h"
#include "pebblesim/engine.h"
#include "pebblesim/values.h"

/* The swept parameter's letter: 'n', 'd', 'g' or 'M'. */
struct ps_sweep_range {
	char param;
	uint64_t lo, hi, step;
	bool geometric; /* x step (lo, lo step, ...) rather than + step */
};

/*
 * "LO:HI" (step +1), "LO:HI:xK" or "LO:HI:+K"; values take the size
 * suffixes k, M, G (powers of 1024) and 2^k. Refuses lo > hi, x1 and +0,
 * and ranges of more than PS_SWEEP_MAX_POINTS points.
 */
#define PS_SWEEP_MAX_POINTS 4096
int ps_sweep_range_parse(char param, const char *text,
			 struct ps_sweep_range *out, struct ps_error *err);

/* A value with the size suffixes k, M, G (powers of 1024) or 2^k. */
int ps_parse_size(const char *text, uint64_t *out);

/* The range's points, increasing; returns how many (at most max). */
size_t ps_sweep_points(const struct ps_sweep_range *r, uint64_t *out,
		       size_t max);

#define PS_SWEEP_MAX_STRATEGIES 16

struct ps_sweep_spec {
	uint64_t n, d, g, M;      /* the fixed values (the swept one ignored) */
	bool normalize;
	bool causal;              /* MODEL.md section 7 */
	uint64_t decode;          /* section 8: the prompt length P, or 0 */
	struct ps_sweep_range range;
	/* names: a strategy, "case" (the case's algorithm at each point) or
	 * "best" */
	const char *labels[PS_SWEEP_MAX_STRATEGIES];
	size_t label_count;
	bool predict;             /* cost models only, no engine */
	unsigned jobs;            /* processes; 0: the number of cores */
	unsigned shard, shards;   /* run points with index % shards == shard */
	FILE *progress;           /* or NULL */
	bool values;              /* run with values (random inputs) */
	struct ps_values_inputs inputs;
};

/* One (point, strategy) of a sweep. */
struct ps_sweep_row {
	char label[24];      /* as asked: "case", "best", "flash", ... */
	char strategy[24];   /* the one that ran */
	char dag[20];        /* "approx-attention" or "exact-attention" */
	uint64_t n, d, g, M;
	uint64_t value;      /* the swept parameter's value */
	char swept;          /* which: 'n', 'd', 'g' or 'M' */
	bool causal;         /* MODEL.md section 7 */
	uint64_t decode;     /* section 8: P, or 0 */
	bool ran;            /* false: why says why not */
	bool simulated;      /* the engine ran it (else: the cost model) */
	bool valid;
	uint64_t loads, saves, io, predicted_io, peak_red;
	double lower, upper; /* upper < 0: none */
	double seconds;
	bool has_values;     /* a run with values: */
	bool values_failed;  /* error_vs_direct above the tolerance */
	double error_vs_direct, epsilon; /* epsilon < 0: none (no normalisation) */
	/* approximate attention: P's a-priori relative error eta, and the
	 * bound 2 eta / (1 + sqrt(1 - eta^2)) R on epsilon (docs/VALUES.md);
	 * eta < 0 (exact attention) or bound < 0 (its hypotheses fail): none */
	double eta, bound;
	char why[160];
	/* loads and saves by array (the kinds, enum ps_kind), from the
	 * engine or, predicted, the cost model; bit k of arrays: by_array[k]
	 * is known (an array of the row's DAG, of a row that ran) */
	struct ps_array_io by_array[PS_ARRAY_MAX];
	uint32_t arrays;
};

/* Checks the spec (labels known, sizes sane) before anything runs. */
int ps_sweep_check(const struct ps_sweep_spec *spec, struct ps_error *err);

/* Runs the sweep; *rows (to free) gets points x labels rows, point-major. */
int ps_sweep_run(const struct ps_sweep_spec *spec, struct ps_sweep_row **rows,
		 size_t *count, struct ps_error *err);

/*
 * What sweep a CSV holds, so that --merge joins only shards of one sweep,
 * and checks every row against the grid it declares: the last two columns
 * of every row, sweep and shard,
 *
 *   param=n range=1024:65536:x2 d=16 g=3 M=8192 normalize=true
 *   strategies=case;best;flash predict=false values=false      1/3
 *
 * (the strategies' commas written as semicolons, so that no field is
 * quoted). A CSV of the format before them has the same text on a comment
 * line before its header, "# pebblesim sweep: ... shard=1/3", and is read
 * as such. `sweep` is the text without the shard; shards is 0 for a
 * partial merge (some points missing).
 */
#define PS_SWEEP_IDENTITY_MAX 512
struct ps_sweep_identity {
	bool present;                      /* the file records its sweep */
	char sweep[PS_SWEEP_IDENTITY_MAX]; /* "param=n range=... values=false" */
	unsigned shard, shards;            /* K - 1 and N; 0 and 1: the whole */
	bool legacy;  /* read from the line before the header (the format
		       * before the columns sweep and shard) */
	bool rowless; /* the columns, but no row to read them from */
};

/* The identity of spec's sweep (its shard, or the whole). */
void ps_sweep_identity_of(const struct ps_sweep_spec *spec,
			  struct ps_sweep_identity *id);

/* CSV: a header line, then one line per row; and back. */
int ps_sweep_write_csv(FILE *out, const struct ps_sweep_row *rows, size_t count);
/* The same with the identity in every row (id NULL or not present: the
 * columns empty). */
int ps_sweep_write_csv_identity(FILE *out, const struct ps_sweep_identity *id,
				const struct ps_sweep_row *rows, size_t count);
int ps_sweep_read_csv(FILE *in, const char *name, struct ps_sweep_row **rows,
		      size_t *count, char *param, struct ps_error *err);
/* The same, and the identity when id is not NULL (present false when the
 * file has none); a row off its grid is refused by line. */
int ps_sweep_read_csv_identity(FILE *in, const char *name, struct ps_sweep_row **rows,
			       size_t *count, char *param,
			       struct ps_sweep_identity *id, struct ps_error *err);

/*
 * The checks of --merge over files[0..file_count) (their names, their
 * identities) and the rows read from them, sorted (ps_sweep_sort): every
 * file of one sweep, the shards of one split each once, none missing
 * unless partial, no point twice, and every point and strategy of the
 * grid the identity declares in some row unless partial (a row off the
 * grid, or of another shard, is refused as it is read). A file without the identity line (a CSV
 * of an older pebblesim, or written by hand) is merged only alone or with
 * partial. PS_OK, or PS_EINPUT naming the files, the shard or the point;
 * *merged gets the identity of the result (shards 0 when partial and a
 * shard is missing).
 */
int ps_sweep_merge_check(const char *const *files, const struct ps_sweep_identity *ids,
			 size_t file_count, const struct ps_sweep_row *rows,
			 size_t count, bool partial, struct ps_sweep_identity *merged,
			 struct ps_error *err);

/*
 * After ps_sweep_merge_check with partial: a row "not run" for every point
 * and strategy of the merged sweep's grid that no row holds, so that no
 * crossover spans a point that was not computed and the table says which
 * are missing; the rows sorted again. PS_OK, or PS_ENOMEM.
 */
int ps_sweep_merge_fill(struct ps_sweep_row **rows, size_t *count,
			const struct ps_sweep_identity *merged, struct ps_error *err);

/* The intervals kept of a crossover; more are counted, not kept. */
#define PS_SWEEP_MAX_INTERVALS 32

/* A maximal interval of the swept parameter, ends inclusive. */
struct ps_sweep_interval {
	uint64_t from, to;
	/* an end at the first or last value swept: the range stops there,
	 * so it is no crossing, and the interval may go on beyond it */
	bool from_edge, to_edge;
};

/* The grid values next to an interval: the last before its start and the
 * first after its end, where there are (values increasing). */
struct ps_sweep_neighbours {
	uint64_t before, after;
	bool has_before, has_after;
};

void ps_sweep_neighbours(const uint64_t *values, size_t points,
			 const struct ps_sweep_interval *iv,
			 struct ps_sweep_neighbours *out);

/*
 * Where a label's I/O is below the baseline's: every maximal interval of
 * the swept values compared (both ran), and whether it stays below from
 * some value to the end of the range (found, at).
 */
struct ps_crossover {
	char label[24], baseline[24];
	/* false: no value where both ran (the baseline not swept, say), so
	 * no crossover is stated; note says why */
	bool compared;
	size_t compared_points, points; /* values where both ran, of the label's */
	bool found;
	uint64_t at; /* the smallest such swept value */
	size_t interval_count;  /* intervals found (kept: the first 32) */
	struct ps_sweep_interval intervals[PS_SWEEP_MAX_INTERVALS];
	bool refined;           /* every end exact (ps_sweep_refine) */
	char note[160];         /* why not compared, or why an end was not
				 * refined, or "" */
};

/* One crossover per label other than the baseline; returns how many (0
 * when memory for the baseline's index runs out). O(rows log rows). */
size_t ps_sweep_crossovers(const struct ps_sweep_row *rows, size_t count,
			   const char *baseline, struct ps_crossover *out,
			   size_t max);

/* The row of label at one swept value, as a sweep of spec computes it. */
void ps_sweep_point(const struct ps_sweep_spec *spec, uint64_t value,
		    const char *label, struct ps_sweep_row *row);

/*
 * Makes each end of the crossovers' intervals exact by bisection on the
 * cost models between the grid points around it: afterwards the label is
 * below the baseline at an end and not below at its outer neighbour
 * (where the neighbour is within the range). n, d and g only: a plan's
 * I/O need not be monotone in M, so M's ends stay on the grid, with a
 * note. Between grid points there may be crossings the grid does not
 * show; the ends found are exact for the intervals it shows.
 */
void ps_sweep_refine(const struct ps_sweep_spec *spec, struct ps_crossover *cross,
		     size_t count);

/* Sorts rows by swept value, then by the order labels first appear, rows
 * of the same value and label in their order; O(rows log rows), and left
 * as they were when memory for the keys runs out. */
void ps_sweep_sort(struct ps_sweep_row *rows, size_t count);

/* The table for a terminal. */
void ps_sweep_print(FILE *out, char param, const struct ps_sweep_row *rows,
		    size_t count, const struct ps_crossover *cross,
		    size_t cross_count);

/* What the ends of c's intervals are, for the parenthesis after them:
 * inner_how where an end is inner (NULL: "ends exact: bisection on the
 * cost models", or "ends on the grid" where not refined), and the ends at
 * the range's edges named as such. */
void ps_sweep_print_ends(FILE *out, const struct ps_crossover *c, const char *inner_how);

/* {"rows":[...],"crossovers":[...]} on one line. */
int ps_sweep_print_json(FILE *out, const struct ps_sweep_row *rows,
			size_t count, const struct ps_crossover *cross,
			size_t cross_count);

#endif
