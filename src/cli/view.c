/*
 * pebblesim view TRACE -o PAGE: a trace validated in the engine, then
 * written into one self-contained HTML page that replays it (docs/VIEWER.md).
 * The page's template, script and style (src/viewer/) are compiled into
 * the binary; the trace goes in as JSON inside a script element of type
 * application/json, every '<', '>' and '&' escaped, so that no text of
 * the trace can end that element or be read as markup. Nothing is
 * fetched: the page's Content-Security-Policy allows no connection.
 */
#include "cli.h"

#include <errno.h>
#include <string.h>

#include "pebblesim/output.h"
#include "pebblesim/trace.h"

/* The page's parts, from src/viewer/ by the Makefile (scripts/embed.sh). */
extern const unsigned char ps_viewer_page[], ps_viewer_script[], ps_viewer_style[];
extern const size_t ps_viewer_page_len, ps_viewer_script_len, ps_viewer_style_len;

/*
 * What a page holds at most (docs/VIEWER.md, "Size"): the page keeps a
 * byte of state for every node that can hold a pebble, and the trace's
 * set operations; beyond these it is refused.
 */
#define VIEW_MAX_BYTES ((size_t)64 << 20)
#define VIEW_MAX_OPS UINT64_C(1000000)
#define VIEW_MAX_NODES (UINT64_C(1) << 26)

const struct cli_option view_options[] = {
	{ OPT_OUTPUT, 'o', NULL, CLI_STRING, offsetof(struct cli_args, output), 0, 0, "PAGE",
	  "write the page to PAGE (- for standard output)" },
	CLI_OPT_M("validate and show under this fast memory instead of\nthe header's"),
	CLI_OPT_HELP,
	CLI_OPT_END,
};

/* The whole trace in memory: it is read twice, and may be standard input. */
static int read_all(const char *path, char **text, size_t *len, FILE *errout)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t cap = 1 << 16, used = 0;
	char *buf;

	if (!f) {
		fprintf(errout, "pebblesim: cannot open trace '%s': %s\n", path, strerror(errno));
		return PS_EXIT_USAGE;
	}
	buf = malloc(cap);
	while (buf) {
		size_t got;

		if (used == cap) {
			char *grown = cap < VIEW_MAX_BYTES + 1 ? realloc(buf, cap * 2) : NULL;

			if (!grown) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = grown;
			cap *= 2;
		}
		got = fread(buf + used, 1, cap - used, f);
		used += got;
		if (used > VIEW_MAX_BYTES) {
			fprintf(errout, "pebblesim: trace '%s' is larger than a page holds (%zu MiB; docs/VIEWER.md, \"Size\")\n",
				path, VIEW_MAX_BYTES >> 20);
			free(buf);
			if (f != stdin)
				fclose(f);
			return PS_EXIT_USAGE;
		}
		if (got == 0)
			break;
	}
	if (!buf || ferror(f)) {
		fprintf(errout, "pebblesim: cannot read trace '%s': %s\n", path,
			buf ? strerror(errno) : "out of memory");
		free(buf);
		if (f != stdin)
			fclose(f);
		return PS_EXIT_USAGE;
	}
	if (f != stdin)
		fclose(f);
	*text = buf;
	*len = used;
	return 0;
}

/* JSON text written so that it cannot close the script element it
 * stands in, nor open markup: '<', '>' and '&' only occur inside
 * strings in jansson's output, where \u escapes mean the same. */
static void write_escaped(FILE *f, const char *text)
{
	for (const char *p = text; *p; p++) {
		if (*p == '<')
			fputs("\\u003c", f);
		else if (*p == '>')
			fputs("\\u003e", f);
		else if (*p == '&')
			fputs("\\u0026", f);
		else
			putc(*p, f);
	}
}

static void write_json(FILE *f, json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);

	write_escaped(f, text ? text : "null");
	free(text);
}

static const char *role_name(enum ps_role role)
{
	return role == PS_ROLE_INPUT ? "input" : role == PS_ROLE_SUM ? "sum" : "plain";
}

/* The output kind: A, or the sums without normalisation (N, or O). */
static enum ps_kind output_kind(const struct ps_attention *att)
{
	return ps_attention_has(att, PS_KIND_A) ? PS_KIND_A :
	       att->exact ? PS_KIND_O : PS_KIND_N;
}

static json_t *coord_names(enum ps_kind k)
{
	json_t *names = json_array();

	for (unsigned c = 0; c < ps_kinds[k].arity; c++)
		json_array_append_new(names, json_string(ps_coord_letter(ps_kinds[k].coord[c])));
	return names;
}

/*
 * The arrays that hold pebbles, with their shapes, and for each sum how
 * a mac names it: which of its product's coordinates are the sum's, and
 * which one runs over its in-edges.
 */
static json_t *arrays_json(const struct ps_attention *att)
{
	json_t *arrays = json_array();

	for (unsigned l = 0; l < att->layout_count; l++) {
		enum ps_kind k = att->layout[l];
		json_t *o;

		if (ps_kinds[k].role == PS_ROLE_PRODUCT)
			continue;
		/* a three-coordinate array (the causal state H[j,m,b]) is
		 * drawn rows x cells: its columns are its (m, b) pairs, b
		 * innermost, depth of them a value of m */
		o = json_pack("{s:s, s:o, s:I, s:I, s:s, s:b}", "name", ps_kinds[k].name,
			      "coords", coord_names(k),
			      "rows", (json_int_t)att->ext[k][0],
			      "cols", (json_int_t)(att->ext[k][1] * (ps_kinds[k].arity == 3 ? att->ext[k][2] : 1)),
			      "role", role_name(att->role[k]), "output", k == output_kind(att));
		if (ps_kinds[k].arity == 3)
			json_object_set_new(o, "depth", json_integer((json_int_t)att->ext[k][2]));
		/* decoding (MODEL.md section 8): rows below first_row are no
		 * node's, rows of the prompt have the prompt's role (the
		 * cache, the state and the last output are inputs) */
		if (att->first_row[k])
			json_object_set_new(o, "first_row", json_integer((json_int_t)att->first_row[k]));
		if (att->decode && att->first_row[k] < att->decode && att->prompt_role[k] != att->role[k])
			json_object_set_new(o, "prompt", json_pack("{s:I, s:s}", "rows", (json_int_t)att->decode,
								   "role", role_name(att->prompt_role[k])));
		/* causal exact attention (section 7): S and E only for j <= i */
		if (att->causal && att->exact && (k == PS_KIND_S || k == PS_KIND_E))
			json_object_set_new(o, "lower_triangle", json_true());
		if (ps_kinds[k].role == PS_ROLE_SUM) {
			enum ps_kind p = ps_attention_product_kind(k);
			enum ps_kind fused = ps_attention_fused_kind(k);
			json_t *target = json_array();
			int counted = 0;

			for (unsigned c = 0; c < ps_kinds[p].arity; c++) {
				bool own = false;

				for (unsigned s = 0; s < ps_kinds[k].arity; s++)
					own |= ps_kinds[k].coord[s] == ps_kinds[p].coord[c];
				if (own)
					json_array_append_new(target, json_integer(c));
				else
					counted = (int)c;
			}
			json_object_set_new(o, "in_degree",
					    json_integer((json_int_t)ps_attention_in_degree(att, k)));
			if (!ps_attention_in_degree_uniform(att, k)) {
				json_t *rows = json_array();

				for (uint64_t row = 0; row < att->ext[k][0]; row++)
					json_array_append_new(rows, json_integer(
						(json_int_t)ps_attention_in_degree_at(att, k, row)));
				json_object_set_new(o, "in_degrees", rows);
			}
			json_object_set_new(o, "mac", json_pack("{s:s, s:o, s:o, s:i, s:s?}",
				"product", ps_kinds[p].name, "coords", coord_names(p),
				"target", target, "counted", counted,
				"fused", fused < PS_KIND_COUNT ? ps_kinds[fused].name : NULL));
		}
		json_array_append_new(arrays, o);
	}
	return arrays;
}

static uint64_t pebble_nodes(const struct ps_attention *att)
{
	uint64_t nodes = 0;

	for (unsigned l = 0; l < att->layout_count; l++)
		if (ps_kinds[att->layout[l]].role != PS_ROLE_PRODUCT)
			nodes += att->count[att->layout[l]];
	return nodes;
}

/* Everything but the operations: the DAG, the header, the engine's verdict. */
static json_t *page_json(const char *path, const struct ps_replay *replay,
			 const struct ps_report *rep)
{
	const struct ps_attention *att = &replay->att;
	const struct ps_counts *c = &replay->counts;
	json_t *dag = json_pack("{s:s, s:I, s:I, s:b}", "kind", ps_attention_kind_name(att),
				"n", (json_int_t)att->n, "d", (json_int_t)att->d,
				"normalize", att->normalize);
	json_t *verdict = json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
				    "valid", replay->valid,
				    "loads", (json_int_t)c->loads, "saves", (json_int_t)c->saves,
				    "io", (json_int_t)(c->loads + c->saves),
				    "peak_red", (json_int_t)c->peak_red, "red", (json_int_t)c->red,
				    "moves", (json_int_t)c->moves, "macs", (json_int_t)c->macs,
				    "computes", (json_int_t)c->computes);

	if (!att->exact) {
		json_object_set_new(dag, "g", json_integer((json_int_t)att->g));
		json_object_set_new(dag, "r", json_integer((json_int_t)att->r));
	}
	json_object_set_new(dag, "nb", json_integer((json_int_t)att->nb));
	ps_trace_dag_variant(dag, att);
	if (!replay->valid) {
		json_object_set_new(verdict, "violation", json_string(replay->violation));
		json_object_set_new(verdict, "line", json_integer((json_int_t)replay->violation_line));
		json_object_set_new(verdict, "rule", json_string(ps_rule_name(replay->rule)));
	}
	return json_pack("{s:s, s:s, s:o, s:o, s:I, s:I, s:s, s:s?, s:s?, s:o, s:o}",
			 "format", "pebblesim-view", "source", path, "dag", dag,
			 "arrays", arrays_json(att),
			 "M", (json_int_t)replay->header.M,
			 "header_M", (json_int_t)replay->header.planned_M,
			 "strategy", replay->header.strategy,
			 "section", rep->section,
			 "plan", rep->has_plan ? rep->plan.summary : NULL,
			 "verdict", verdict, "ops", json_array());
}

/* The page: the template's text around its three places, each of which
 * is a line of its own: @STYLE@, @DATA@ and @SCRIPT@. */
static void write_template_until(FILE *f, const char **at, const char *place)
{
	const char *end = (const char *)ps_viewer_page + ps_viewer_page_len;
	const char *hit = strstr(*at, place);

	if (!hit)
		hit = end;
	fwrite(*at, 1, (size_t)(hit - *at), f);
	*at = hit < end ? hit + strlen(place) : end;
}

/*
 * The operations the page plays: every line after the header, up to the
 * line that broke a rule (not included) or the end line. The lines were
 * read by the engine already, so each is a JSON object.
 */
static void write_ops(FILE *f, const char *text, size_t len, uint64_t last_line)
{
	const char *p = text, *end = text + len;
	uint64_t line = 0;
	bool first = true;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end;
		const char *name;
		json_t *op;

		if (++line > last_line)
			break;
		op = line > 1 ? json_loadb(p, (size_t)(stop - p), 0, NULL) : NULL;
		name = json_string_value(json_object_get(op, "op"));
		if (json_is_object(op) && name && strcmp(name, "end")) {
			if (!first)
				putc(',', f);
			write_json(f, op);
			first = false;
		}
		json_decref(op);
		p = nl ? nl + 1 : end;
	}
}

static int write_page(const char *path, const char *source, const char *text,
		      size_t len, const struct ps_replay *replay,
		      const struct ps_report *rep, FILE *out, FILE *errout)
{
	const char *at = (const char *)ps_viewer_page;
	struct ps_output page;
	struct ps_error err;
	json_t *data = page_json(source, replay, rep);
	char *head;
	size_t head_len;
	int rc = 0;

	if (!data) {
		fprintf(errout, "pebblesim: out of memory\n");
		return PS_EXIT_USAGE;
	}
	if (ps_output_open(&page, path, "page", &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		json_decref(data);
		return PS_EXIT_USAGE;
	}
	FILE *f = page.file == stdout ? out : page.file;

	write_template_until(f, &at, "@STYLE@");
	fwrite(ps_viewer_style, 1, ps_viewer_style_len, f);
	write_template_until(f, &at, "@DATA@");
	/* the data object with its empty "ops" array left open: the
	 * operations are streamed into it */
	head = json_dumps(data, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	json_decref(data);
	head_len = head ? strlen(head) : 0;
	if (head_len < 3 || strcmp(head + head_len - 3, "[]}")) {
		free(head);
		ps_output_close(&page, false, "page", NULL);
		fprintf(errout, "pebblesim: out of memory\n");
		return PS_EXIT_USAGE;
	}
	head[head_len - 2] = '\0';
	write_escaped(f, head);
	free(head);
	write_ops(f, text, len, replay->valid ? UINT64_MAX : replay->violation_line - 1);
	fputs("]}", f);
	write_template_until(f, &at, "@SCRIPT@");
	fwrite(ps_viewer_script, 1, ps_viewer_script_len, f);
	write_template_until(f, &at, "@END@");
	if (ps_output_close(&page, true, "page", &err)) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		rc = PS_EXIT_USAGE;
	}
	return rc;
}

/* An explicit DAG's trace: refused by name, before the engine says
 * "--dag", an option view does not take. */
static bool explicit_header(const char *text, size_t len)
{
	const char *nl = memchr(text, '\n', len);
	json_t *h = json_loadb(text, nl ? (size_t)(nl - text) : len, 0, NULL);
	const char *kind = json_string_value(json_object_get(json_object_get(h, "dag"), "kind"));
	bool explicit_dag = kind && !strcmp(kind, "explicit");

	json_decref(h);
	return explicit_dag;
}

int cmd_view(const struct cli_command *cmd, const struct cli_args *a,
	     FILE *out, FILE *errout)
{
	const char *path = a->operands[0];
	struct ps_replay replay;
	struct ps_report rep;
	struct ps_error err;
	uint64_t lines = 0;
	char *text;
	size_t len;
	FILE *f;
	int rc;

	if (!a->output)
		return cli_usage_error(cmd, errout, "view needs -o PAGE (- for standard output)");
	if ((rc = read_all(path, &text, &len, errout)))
		return rc;
	for (size_t k = 0; k < len; k++)
		lines += text[k] == '\n';
	if (lines > VIEW_MAX_OPS + 2) {
		fprintf(errout, "pebblesim: trace '%s' has %llu lines, more than a page holds (%llu operations; docs/VIEWER.md, \"Size\")\n",
			path, (unsigned long long)lines, (unsigned long long)VIEW_MAX_OPS);
		free(text);
		return PS_EXIT_USAGE;
	}
	if (len && explicit_header(text, len)) {
		fprintf(errout, "pebblesim: '%s' is a trace of a DAG from a file: view shows the attention DAGs only\n", path);
		free(text);
		return PS_EXIT_USAGE;
	}
	f = len ? fmemopen(text, len, "r") : fopen("/dev/null", "r");
	if (!f) {
		fprintf(errout, "pebblesim: cannot read trace '%s': %s\n", path, strerror(errno));
		free(text);
		return PS_EXIT_USAGE;
	}
	ps_error_clear(&err);
	rc = ps_trace_replay_with(f, path, &(const struct ps_replay_options){
					  .M = a->given[OPT_M] ? a->M : 0,
					  .progress = cli_progress_stream(a, errout),
				  }, &replay, &err);
	fclose(f);
	if (rc) {
		fprintf(errout, "pebblesim: %s\n", err.msg);
		ps_replay_free(&replay);
		free(text);
		return PS_EXIT_USAGE;
	}
	if (pebble_nodes(&replay.att) > VIEW_MAX_NODES) {
		fprintf(errout, "pebblesim: the DAG of '%s' has %llu nodes that hold pebbles, more than a page holds (%llu; docs/VIEWER.md, \"Size\")\n",
			path, (unsigned long long)pebble_nodes(&replay.att),
			(unsigned long long)VIEW_MAX_NODES);
		ps_replay_free(&replay);
		free(text);
		return PS_EXIT_USAGE;
	}
	ps_report_init(&rep, &replay.att, replay.header.M);
	cli_replay_plan(&replay, NULL, &rep);
	rc = write_page(a->output, path, text, len, &replay, &rep, out, errout);
	if (!rc && !replay.valid) {
		fprintf(errout, "pebblesim: %s\n", replay.violation);
		rc = PS_EXIT_INVALID;
	}
	ps_replay_free(&replay);
	free(text);
	return rc;
}

const struct cli_help view_help = {
	"view -o PAGE [-M M] TRACE|-",
	"write a trace as one HTML page that plays it: the arrays, the I/O, the memory",
	"Validates a trace of the attention DAGs in the engine, then writes one\n"
	"self-contained HTML page (its data, script and style inside; nothing is\n"
	"fetched) that plays it set operation by set operation: Q, K, V, U1, U2,\n"
	"H, N and A (exact attention: S, E, O) as grids of cells coloured red,\n"
	"blue, both or neither, partial sums apart; the operation and its ranges;\n"
	"the loads, saves and I/O by array so far; fast-memory occupancy with M\n"
	"drawn. Large arrays are drawn coarser than a cell a node, as the page\n"
	"says. A trace that breaks a rule still gets its page, which stops before\n"
	"that line and shows the violation (exit status 1). Traces beyond 64 MiB,\n"
	"a million operations, or DAGs beyond 2^26 nodes that hold pebbles, are\n"
	"refused (docs/VIEWER.md).\n",
	"  pebblesim --case II -n 4096 -d 16 -g 3 -M 8192 --trace t.jsonl\n"
	"  pebblesim view t.jsonl -o view.html\n"
	"      the headline's pebbling, 8,915 operations, in a browser\n"
	"  pebblesim view -M 6000 t.jsonl -o broken.html\n"
	"      where the same trace breaks the capacity rule with less memory\n",
};
