/*
 * pebblesim-prefix-state TRACE K: the engine's state after the first K
 * operations of a trace of the attention DAGs, as JSON, for the browser
 * test of `pebblesim view` (tests/browser/view_test.py), which compares
 * it with what the page shows at step K:
 *
 *   {"ops":K,"red":..,"loads":..,"saves":..,"arrays":{"Q":"2222..",..}}
 *
 * Each array is a string of digits, one a node row by row: 1 red, 2
 * blue, 4 a sum that holds some in-edges but not all (added).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pebblesim/trace.h"

struct prefix {
	const struct ps_replay *replay;
	uint64_t want, seen;
	json_t *state;
};

static void after_op(void *ctx, const struct ps_engine *e, uint64_t line)
{
	struct prefix *p = ctx;
	const struct ps_attention *att = &p->replay->att;
	json_t *arrays;

	(void)line;
	if (++p->seen != p->want)
		return;
	arrays = json_object();
	for (unsigned l = 0; l < att->layout_count; l++) {
		enum ps_kind k = att->layout[l];
		char *codes;

		if (ps_kinds[k].role == PS_ROLE_PRODUCT)
			continue;
		codes = malloc(att->count[k] + 1);
		if (!codes)
			break;
		for (uint64_t v = 0; v < att->count[k]; v++) {
			uint8_t f = ps_engine_flags(e, att->base[k] + v);

			codes[v] = (char)('0' + ((f & PS_ST_RED) ? 1 : 0) + ((f & PS_ST_BLUE) ? 2 : 0) +
					  ((f & PS_ST_INCOMPLETE) ? 4 : 0));
		}
		codes[att->count[k]] = '\0';
		json_object_set_new(arrays, ps_kinds[k].name, json_string(codes));
		free(codes);
	}
	p->state = json_pack("{s:I, s:I, s:I, s:I, s:o}", "ops", (json_int_t)p->want,
			     "red", (json_int_t)e->c.red, "loads", (json_int_t)e->c.loads,
			     "saves", (json_int_t)e->c.saves, "arrays", arrays);
}

int main(int argc, char **argv)
{
	struct ps_replay replay;
	struct ps_error err;
	struct prefix p = { .replay = &replay };
	FILE *f;
	int rc;

	if (argc != 3 || (p.want = strtoull(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: pebblesim-prefix-state TRACE K (K >= 1 operations)\n");
		return 2;
	}
	f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	ps_error_clear(&err);
	rc = ps_trace_replay_with(f, argv[1], &(const struct ps_replay_options){
					  .after_op = after_op, .after_op_ctx = &p,
				  }, &replay, &err);
	fclose(f);
	if (rc || !p.state) {
		fprintf(stderr, "pebblesim-prefix-state: %s\n",
			rc ? err.msg : "the trace has fewer operations than asked for");
		ps_replay_free(&replay);
		return 2;
	}
	json_dumpf(p.state, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(p.state);
	ps_replay_free(&replay);
	return 0;
}
