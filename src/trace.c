/*
 * JSON Lines traces (MODEL.md section 3, docs/TRACE_FORMAT.md): a writer
 * sink, and a reader that replays a trace line by line in the engine.
 * Every JSON read and written goes through jansson; elementary lines, which
 * can number millions and hold only integers and fixed names, are printed
 * directly in the same compact form.
 */
#include "pebblesim/trace.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- writing ---------------------------------------------------------- */

static json_t *coordset_json(const struct ps_coordset *s)
{
	json_t *list;

	if (s->list) {
		if (s->len == 1)
			return json_integer((json_int_t)s->list[0]);
		list = json_array();
		for (size_t k = 0; k < s->len; k++)
			json_array_append_new(list, json_integer((json_int_t)s->list[k]));
		return list;
	}
	if (s->hi == s->lo + 1)
		return json_integer((json_int_t)s->lo);
	return json_pack("{s:I, s:I}", "lo", (json_int_t)s->lo, "hi",
			 (json_int_t)s->hi);
}

/* The kind whose coordinates an operation carries (a mac: its product). */
static enum ps_kind coord_kind(enum ps_opcode code, enum ps_kind kind)
{
	if (code == PS_OP_MAC)
		return ps_attention_product_kind(kind);
	return kind;
}

static int write_line(struct ps_trace_writer *w, json_t *obj)
{
	int rc = obj ? json_dumpf(obj, w->file, JSON_COMPACT | JSON_PRESERVE_ORDER) : -1;

	json_decref(obj);
	if (rc || fputc('\n', w->file) == EOF) {
		w->failed = true;
		return -1;
	}
	w->lines++;
	return 0;
}

static json_t *op_json(const struct ps_op *op)
{
	enum ps_kind k = coord_kind(op->code, op->kind);
	json_t *obj = json_object();

	json_object_set_new(obj, "op", json_string(ps_opcode_name(op->code)));
	json_object_set_new(obj, op->code == PS_OP_MAC ? "into" : "kind",
			    json_string(ps_kinds[op->kind].name));
	for (unsigned p = 0; p < ps_kinds[k].arity; p++)
		json_object_set_new(obj, ps_coord_letter(ps_kinds[k].coord[p]),
				    coordset_json(&op->c[p]));
	if (op->fuse)
		json_object_set_new(obj, "fuse", json_true());
	return obj;
}

/* One elementary move as a single-node line. */
static int write_move(void *ctx, enum ps_move move, ps_node v)
{
	static const char *const names[] = {
		[PS_MOVE_LOAD] = "load", [PS_MOVE_SAVE] = "save",
		[PS_MOVE_DELETE] = "delete", [PS_MOVE_COMPUTE] = "compute",
		[PS_MOVE_MAC] = "mac",
	};
	struct ps_trace_writer *w = ctx;
	uint64_t c[3];
	enum ps_kind k = ps_attention_decode(w->att, v, c);
	const struct ps_kind_info *info = &ps_kinds[k];
	int rc;

	if (move == PS_MOVE_MAC)
		rc = fprintf(w->file, "{\"op\":\"mac\",\"into\":\"%s\"",
			     k == PS_KIND_P2 ? "H" : k == PS_KIND_P1 ? "N" :
			     k == PS_KIND_PS ? "S" : "O");
	else
		rc = fprintf(w->file, "{\"op\":\"%s\",\"kind\":\"%s\"", names[move],
			     info->name);
	for (unsigned p = 0; p < info->arity && rc >= 0; p++)
		rc = fprintf(w->file, ",\"%s\":%llu", ps_coord_letter(info->coord[p]),
			     (unsigned long long)c[p]);
	if (rc < 0 || fputs("}\n", w->file) == EOF) {
		w->failed = true;
		return PS_EIO;
	}
	w->lines++;
	return 0;
}

/* One move of an explicit DAG: vertices by id, a mac by its edge. */
static int write_vertex_move(struct ps_trace_writer *w, enum ps_move move,
			     ps_node v)
{
	static const char *const names[] = {
		[PS_MOVE_LOAD] = "load", [PS_MOVE_SAVE] = "save",
		[PS_MOVE_DELETE] = "delete", [PS_MOVE_COMPUTE] = "compute",
	};
	int rc;

	if (move == PS_MOVE_MAC) {
		struct ps_product p;

		ps_dag_product(&w->xdag->dag, v, &p);
		rc = fprintf(w->file, "{\"op\":\"mac\",\"into\":%llu,\"from\":%llu}\n",
			     (unsigned long long)p.sum, (unsigned long long)p.parent[0]);
	} else {
		rc = fprintf(w->file, "{\"op\":\"%s\",\"node\":%llu}\n", names[move],
			     (unsigned long long)v);
	}
	if (rc < 0) {
		w->failed = true;
		return PS_EIO;
	}
	w->lines++;
	return 0;
}

static int trace_emit(struct ps_sink *sink, const struct ps_op *op,
		      struct ps_error *err)
{
	struct ps_trace_writer *w = (struct ps_trace_writer *)sink;
	int rc;

	if (w->xdag) {
		rc = op->by_id ? write_vertex_move(w, ps_opcode_move(op->code), op->node)
			       : ps_error_set(err, PS_EINPUT, "an explicit DAG's trace takes moves by vertex");
	} else if (op->by_id) {
		rc = write_move(w, ps_opcode_move(op->code), op->node);
	} else if (w->elementary) {
		rc = ps_op_check(w->att, op, err);
		if (!rc)
			rc = ps_op_foreach(w->att, op, write_move, w);
	} else {
		rc = write_line(w, op_json(op));
	}
	if (rc && w->failed)
		return ps_error_set(err, PS_EIO, "cannot write the trace '%s': %s",
				    w->out.path ? w->out.path : "-", strerror(errno));
	return rc;
}

int ps_trace_open(struct ps_trace_writer *w, const char *path,
		  const struct ps_attention *att, const struct ps_explicit *xdag,
		  uint64_t M, const char *strategy, const struct ps_plan *plan,
		  const char *order, bool elementary, struct ps_error *err)
{
	json_t *header, *params = json_object(), *dag;
	int rc;

	memset(w, 0, sizeof(*w));
	w->sink.emit = trace_emit;
	w->att = att;
	w->xdag = xdag;
	w->elementary = elementary;
	if ((rc = ps_output_open(&w->out, path, "trace", err))) {
		json_decref(params);
		return rc;
	}
	w->file = w->out.file;
	if (plan && plan->param_name)
		json_object_set_new(params, plan->param_name,
				    json_integer((json_int_t)plan->param));
	if (plan && plan->variant)
		json_object_set_new(params, "tiles", json_string(plan->variant));
	if (order)
		json_object_set_new(params, "order", json_string(order));
	if (att && att->exact)
		dag = json_pack("{s:s, s:I, s:I, s:b}", "kind", "exact-attention",
				"n", (json_int_t)att->n, "d", (json_int_t)att->d,
				"normalize", att->normalize);
	else if (att)
		dag = json_pack("{s:s, s:I, s:I, s:I, s:b}", "kind", "approx-attention",
				"n", (json_int_t)att->n, "d", (json_int_t)att->d,
				"g", (json_int_t)att->g, "normalize", att->normalize);
	else
		dag = json_pack("{s:s, s:I, s:I}", "kind", "explicit", "vertices",
				(json_int_t)xdag->vertices, "edges", (json_int_t)xdag->edges);
	header = json_pack("{s:s, s:i, s:o, s:I, s:s, s:o}",
			   "format", "pebblesim-trace", "version", 1, "dag", dag,
			   "M", (json_int_t)M, "strategy", strategy, "params", params);
	if (write_line(w, header))
		return ps_trace_close(w, NULL, false, err) ? err->code :
			ps_error_set(err, PS_EIO, "cannot write the trace '%s'", path);
	return PS_OK;
}

int ps_trace_close(struct ps_trace_writer *w, const struct ps_counts *counts,
		   bool keep, struct ps_error *err)
{
	int rc = PS_OK, closed;

	if (counts && !w->failed)
		write_line(w, json_pack("{s:s, s:I, s:I}", "op", "end", "loads",
					(json_int_t)counts->loads, "saves",
					(json_int_t)counts->saves));
	if (w->failed && keep)
		rc = ps_error_set(err, PS_EIO, "cannot write the trace '%s': %s",
				  w->out.path ? w->out.path : "-", strerror(errno));
	closed = ps_output_close(&w->out, keep && !w->failed, "trace", err);
	if (closed && !rc)
		rc = closed;
	w->file = NULL;
	return rc;
}

static int tee_emit(struct ps_sink *sink, const struct ps_op *op,
		    struct ps_error *err)
{
	struct ps_tee_sink *t = (struct ps_tee_sink *)sink;
	int rc = ps_sink_emit(t->first, op, err);

	return rc ? rc : ps_sink_emit(t->second, op, err);
}

void ps_tee_sink_init(struct ps_tee_sink *t, struct ps_sink *first,
		      struct ps_sink *second)
{
	t->sink.emit = tee_emit;
	t->first = first;
	t->second = second;
}

/* ---- reading ---------------------------------------------------------- */

struct reader {
	const char *name;
	uint64_t line;
	struct ps_error *err;
	uint64_t *values[3]; /* storage for the listed coordinates */
	size_t cap[3];
	bool exact;          /* the header's DAG is exact attention */
	uint64_t *sorted;    /* a sorted copy of one, for check_distinct */
	size_t sorted_cap;
};

#define BAD(r, ...) bad_input((r), __VA_ARGS__)

static int bad_input(struct reader *r, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

static int bad_input(struct reader *r, const char *fmt, ...)
{
	char what[PS_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	r->err->line = r->line;
	return ps_error_set(r->err, PS_EINPUT, "%s:%llu: %s", r->name,
			    (unsigned long long)r->line, what);
}

static int get_uint(struct reader *r, json_t *obj, const char *key,
		    uint64_t min, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return BAD(r, "the header has no \"%s\"", key);
	if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)min)
		return BAD(r, "\"%s\" must be an integer >= %llu", key,
			   (unsigned long long)min);
	*out = (uint64_t)json_integer_value(v);
	return PS_OK;
}

/* Every key of obj must be one of allowed (a NULL-terminated list). */
static int only_keys(struct reader *r, json_t *obj, const char *const *allowed,
		     const char *where)
{
	const char *key;
	json_t *value;

	json_object_foreach(obj, key, value) {
		bool known = false;

		(void)value;
		for (size_t k = 0; allowed[k]; k++)
			known |= !strcmp(key, allowed[k]);
		if (!known)
			return BAD(r, "unknown key \"%s\" in %s", key, where);
	}
	return PS_OK;
}

static int parse_header(struct reader *r, json_t *h, struct ps_trace_header *out)
{
	static const char *const keys[] = {
		"format", "version", "dag", "M", "strategy", "params", NULL
	};
	static const char *const dag_keys[] = { "kind", "n", "d", "g", "normalize", NULL };
	static const char *const exact_keys[] = { "kind", "n", "d", "normalize", NULL };
	static const char *const explicit_keys[] = { "kind", "vertices", "edges", NULL };
	json_t *dag, *v;
	uint64_t version;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(h))
		return BAD(r, "the header must be a JSON object");
	if ((rc = only_keys(r, h, keys, "the header")))
		return rc;
	v = json_object_get(h, "format");
	if (!json_is_string(v) || strcmp(json_string_value(v), "pebblesim-trace"))
		return BAD(r, "not a pebblesim trace: the header's \"format\" must be \"pebblesim-trace\"");
	if ((rc = get_uint(r, h, "version", 0, &version)))
		return rc;
	if (version != 1)
		return BAD(r, "trace version %llu is not supported (this pebblesim reads version 1)",
			   (unsigned long long)version);
	dag = json_object_get(h, "dag");
	if (!json_is_object(dag))
		return BAD(r, "the header needs \"dag\": {\"kind\":\"approx-attention\", \"n\", \"d\", \"g\", \"normalize\"}");
	v = json_object_get(dag, "kind");
	if (json_is_string(v) && !strcmp(json_string_value(v), "explicit")) {
		out->explicit_dag = true;
		if ((rc = only_keys(r, dag, explicit_keys, "the header's dag")) ||
		    (rc = get_uint(r, dag, "vertices", 0, &out->vertices)) ||
		    (rc = get_uint(r, dag, "edges", 0, &out->edges)) ||
		    (rc = get_uint(r, h, "M", 1, &out->M)))
			return rc;
	} else if (json_is_string(v) && !strcmp(json_string_value(v), "exact-attention")) {
		/* MODEL.md section 5: no g */
		out->dag.exact = true;
		if ((rc = only_keys(r, dag, exact_keys, "the header's exact-attention dag")))
			return rc;
	} else {
		if ((rc = only_keys(r, dag, dag_keys, "the header's dag")))
			return rc;
		if (!json_is_string(v) || strcmp(json_string_value(v), "approx-attention"))
			return BAD(r, "the header's dag kind must be \"approx-attention\", \"exact-attention\" or \"explicit\"");
	}
	if (!out->explicit_dag && ((rc = get_uint(r, dag, "n", 1, &out->dag.n)) ||
	    (rc = get_uint(r, dag, "d", 1, &out->dag.d)) ||
	    (!out->dag.exact && (rc = get_uint(r, dag, "g", 0, &out->dag.g))) ||
	    (rc = get_uint(r, h, "M", 1, &out->M))))
		return rc;
	v = json_object_get(dag, "normalize");
	if (v && !json_is_boolean(v))
		return BAD(r, "the header's \"normalize\" must be true or false");
	out->dag.normalize = !v || json_is_true(v);
	v = json_object_get(h, "strategy");
	if (v && !json_is_string(v))
		return BAD(r, "the header's \"strategy\" must be a string");
	snprintf(out->strategy, sizeof(out->strategy), "%s",
		 v ? json_string_value(v) : "");
	v = json_object_get(h, "params");
	if (v && !json_is_object(v))
		return BAD(r, "the header's \"params\" must be an object");
	if (v && json_is_integer(json_object_get(v, "w")))
		out->w = (uint64_t)json_integer_value(json_object_get(v, "w"));
	if (v && json_is_string(json_object_get(v, "tiles")))
		snprintf(out->tiles, sizeof(out->tiles), "%s",
			 json_string_value(json_object_get(v, "tiles")));
	if (v && json_is_string(json_object_get(v, "order")))
		snprintf(out->order, sizeof(out->order), "%s",
			 json_string_value(json_object_get(v, "order")));
	return PS_OK;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * A list names each value once (docs/TRACE_FORMAT.md): a value listed twice
 * would only repeat moves that cannot both be valid, and a set operation
 * over lists with repeats costs the product of their lengths. Checked on a
 * sorted copy, in O(len log len).
 */
static int check_distinct(struct reader *r, const uint64_t *values, size_t len,
			  const char *letter)
{
	if (len < 2)
		return PS_OK;
	if (len > r->sorted_cap) {
		uint64_t *grown = realloc(r->sorted, len * sizeof(uint64_t));

		if (!grown)
			return ps_error_set(r->err, PS_ENOMEM, "out of memory");
		r->sorted = grown;
		r->sorted_cap = len;
	}
	memcpy(r->sorted, values, len * sizeof(uint64_t));
	qsort(r->sorted, len, sizeof(uint64_t), cmp_u64);
	for (size_t k = 1; k < len; k++)
		if (r->sorted[k] == r->sorted[k - 1])
			return BAD(r, "coordinate '%s' lists %llu twice", letter,
				   (unsigned long long)r->sorted[k]);
	return PS_OK;
}

/* A coordinate: an integer, an array of integers, or {"lo":L,"hi":H}. */
static int parse_coord(struct reader *r, json_t *v, const char *letter,
		       unsigned pos, struct ps_coordset *out)
{
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0)
			return BAD(r, "coordinate %s = %lld is negative", letter,
				   (long long)json_integer_value(v));
		*out = ps_one((uint64_t)json_integer_value(v));
		return PS_OK;
	}
	if (json_is_array(v)) {
		size_t len = json_array_size(v);

		if (len > r->cap[pos]) {
			uint64_t *grown = realloc(r->values[pos], len * sizeof(uint64_t));

			if (!grown)
				return ps_error_set(r->err, PS_ENOMEM, "out of memory");
			r->values[pos] = grown;
			r->cap[pos] = len;
		}
		for (size_t k = 0; k < len; k++) {
			json_t *x = json_array_get(v, k);

			if (!json_is_integer(x) || json_integer_value(x) < 0)
				return BAD(r, "coordinate %s: entry %zu is not an integer >= 0",
					   letter, k);
			r->values[pos][k] = (uint64_t)json_integer_value(x);
		}
		*out = ps_list(r->values[pos], len);
		return check_distinct(r, r->values[pos], len, letter);
	}
	if (json_is_object(v)) {
		static const char *const keys[] = { "lo", "hi", NULL };
		json_t *lo = json_object_get(v, "lo"), *hi = json_object_get(v, "hi");
		int rc = only_keys(r, v, keys, "a range");

		if (rc)
			return rc;
		if (!json_is_integer(lo) || !json_is_integer(hi) ||
		    json_integer_value(lo) < 0 ||
		    json_integer_value(hi) < json_integer_value(lo))
			return BAD(r, "coordinate %s: a range needs integers 0 <= lo <= hi", letter);
		*out = ps_range((uint64_t)json_integer_value(lo),
				(uint64_t)json_integer_value(hi));
		return PS_OK;
	}
	return BAD(r, "coordinate %s must be an integer, an array of integers or {\"lo\":L,\"hi\":H}",
		   letter);
}

static int parse_op(struct reader *r, json_t *obj, struct ps_op *op)
{
	static const char *const codes[] = { "load", "save", "delete", "compute", "mac" };
	const char *allowed[8];
	json_t *v = json_object_get(obj, "op");
	const char *name;
	enum ps_kind k;
	size_t count = 0;
	int kind, code, rc;

	memset(op, 0, sizeof(*op));
	if (!json_is_string(v))
		return BAD(r, "an operation needs \"op\": load, save, delete, compute, mac or end");
	name = json_string_value(v);
	for (code = PS_OP_LOAD; code <= PS_OP_MAC; code++)
		if (!strcmp(name, codes[code]))
			break;
	if (code > PS_OP_MAC)
		return BAD(r, "unknown operation \"%s\"", name);
	op->code = (enum ps_opcode)code;
	allowed[count++] = "op";
	v = json_object_get(obj, op->code == PS_OP_MAC ? "into" : "kind");
	if (!json_is_string(v))
		return BAD(r, "a %s needs \"%s\"", name, op->code == PS_OP_MAC ? "into" : "kind");
	kind = ps_kind_lookup(json_string_value(v));
	if (kind < 0)
		return BAD(r, "unknown kind \"%s\"", json_string_value(v));
	if (op->code == PS_OP_MAC &&
	    (ps_kinds[kind].role != PS_ROLE_SUM ||
	     (kind == PS_KIND_S || kind == PS_KIND_O) != r->exact))
		return BAD(r, "a mac aggregates into %s, not into %s",
			   r->exact ? "S or O" : "H or N", json_string_value(v));
	op->kind = (enum ps_kind)kind;
	allowed[count++] = op->code == PS_OP_MAC ? "into" : "kind";
	if (op->code == PS_OP_MAC) {
		allowed[count++] = "fuse";
		v = json_object_get(obj, "fuse");
		if (v && !json_is_boolean(v))
			return BAD(r, "\"fuse\" must be true or false");
		op->fuse = v && json_is_true(v);
	}
	k = coord_kind(op->code, op->kind);
	for (unsigned p = 0; p < ps_kinds[k].arity; p++) {
		const char *letter = ps_coord_letter(ps_kinds[k].coord[p]);

		allowed[count++] = letter;
		v = json_object_get(obj, letter);
		if (!v)
			return BAD(r, "a %s of %s needs coordinate \"%s\"", name,
				   ps_kinds[op->kind].name, letter);
		if ((rc = parse_coord(r, v, letter, p, &op->c[p])))
			return rc;
	}
	allowed[count] = NULL;
	return only_keys(r, obj, allowed, "this operation");
}

/* An explicit DAG's line: "node" for load, save, delete, compute; "into"
 * and "from" (nested, into outermost) for a mac. Applies it at once. */
static int replay_vertex_op(struct reader *r, json_t *obj,
			    const struct ps_explicit *x, struct ps_engine *e)
{
	static const char *const codes[] = { "load", "save", "delete", "compute", "mac" };
	static const char *const node_keys[] = { "op", "node", NULL };
	static const char *const mac_keys[] = { "op", "into", "from", NULL };
	const char *name = json_string_value(json_object_get(obj, "op"));
	struct ps_coordset into, from;
	int code, rc;

	if (!name)
		return BAD(r, "an operation needs \"op\": load, save, delete, compute, mac or end");
	for (code = PS_OP_LOAD; code <= PS_OP_MAC; code++)
		if (!strcmp(name, codes[code]))
			break;
	if (code > PS_OP_MAC)
		return BAD(r, "unknown operation \"%s\"", name);
	if (code != PS_OP_MAC) {
		json_t *v = json_object_get(obj, "node");

		if ((rc = only_keys(r, obj, node_keys, "this operation")))
			return rc;
		if (!v)
			return BAD(r, "a %s needs \"node\"", name);
		if ((rc = parse_coord(r, v, "node", 0, &into)))
			return rc;
		for (uint64_t k = 0; k < ps_coordset_size(&into); k++) {
			uint64_t vertex = ps_coordset_at(&into, k);

			if (vertex >= x->vertices)
				return BAD(r, "vertex %llu is not in the DAG (it has %llu)",
					   (unsigned long long)vertex,
					   (unsigned long long)x->vertices);
			if (ps_engine_apply(e, ps_opcode_move((enum ps_opcode)code), vertex))
				return PS_EINVALID;
		}
		return PS_OK;
	}
	if ((rc = only_keys(r, obj, mac_keys, "this operation")))
		return rc;
	if (!json_object_get(obj, "into") || !json_object_get(obj, "from"))
		return BAD(r, "a mac needs \"into\" and \"from\"");
	if ((rc = parse_coord(r, json_object_get(obj, "into"), "into", 0, &into)) ||
	    (rc = parse_coord(r, json_object_get(obj, "from"), "from", 1, &from)))
		return rc;
	for (uint64_t a = 0; a < ps_coordset_size(&into); a++)
		for (uint64_t b = 0; b < ps_coordset_size(&from); b++) {
			uint64_t v = ps_coordset_at(&into, a), u = ps_coordset_at(&from, b);
			ps_node p = ps_explicit_product(x, u, v);

			if (p == UINT64_MAX)
				return BAD(r, "no edge %llu -> %llu into a sum",
					   (unsigned long long)u, (unsigned long long)v);
			if (ps_engine_mac(e, p))
				return PS_EINVALID;
		}
	return PS_OK;
}

/*
 * One line into *line (without its newline), at most PS_TRACE_MAX_LINE
 * bytes: 1 and its length in *len, 0 at the end of the file, -1 for a
 * line over the limit (the rest of it is not read) or out of memory.
 */
static int read_line(FILE *f, char **line, size_t *cap, size_t *len,
		     bool *too_long)
{
	size_t used = 0;
	int c;

	*too_long = false;
	while ((c = getc_unlocked(f)) != EOF && c != '\n') {
		if (used >= PS_TRACE_MAX_LINE) {
			*too_long = true;
			return -1;
		}
		if (used + 1 >= *cap) {
			size_t grown_cap = *cap ? *cap * 2 : 4096;
			char *grown;

			grown = realloc(*line, grown_cap);
			if (!grown)
				return -1;
			*line = grown;
			*cap = grown_cap;
		}
		(*line)[used++] = (char)c;
	}
	if (c == EOF && used == 0)
		return 0;
	if (!*line && !(*line = malloc(*cap = 1)))
		return -1;
	(*line)[used] = '\0';
	*len = used;
	return 1;
}

void ps_replay_free(struct ps_replay *rep)
{
	if (rep->has_att)
		ps_attention_free(&rep->att);
	rep->has_att = false;
}

/* The verdict of a violation at the current line. */
static void record_violation(struct ps_replay *rep, struct ps_engine *e,
			     const char *name)
{
	char prefix[PS_ERROR_MAX / 2];

	snprintf(prefix, sizeof(prefix), "%s:%llu: ", name,
		 (unsigned long long)e->violation.position);
	ps_violation_format(&e->violation, prefix, rep->violation,
			    sizeof(rep->violation));
	rep->rule = e->violation.rule;
	rep->violation_line = e->violation.position;
}

/* The end line: the end condition, then the stated counts. */
static int replay_end(struct reader *r, json_t *obj, struct ps_engine *e)
{
	static const char *const keys[] = { "op", "loads", "saves", NULL };
	uint64_t loads, saves;
	int rc = only_keys(r, obj, keys, "the end line");

	if (rc || (rc = get_uint(r, obj, "loads", 0, &loads)) ||
	    (rc = get_uint(r, obj, "saves", 0, &saves)))
		return rc;
	ps_engine_set_position(e, r->line);
	if (ps_engine_finish(e))
		return PS_EINVALID;
	if (loads != e->c.loads || saves != e->c.saves) {
		e->failed = true;
		e->violation.rule = PS_RULE_END_COUNTS;
		e->violation.position = r->line;
		snprintf(e->violation.text, sizeof(e->violation.text),
			 "end: the trace states %llu loads and %llu saves; the sequence made %llu loads and %llu saves",
			 (unsigned long long)loads, (unsigned long long)saves,
			 (unsigned long long)e->c.loads,
			 (unsigned long long)e->c.saves);
		return PS_EINVALID;
	}
	return PS_OK;
}

static bool same_dag(const struct ps_attention_params *a,
		     const struct ps_attention_params *b)
{
	return a->n == b->n && a->d == b->d && a->g == b->g &&
	       a->normalize == b->normalize && a->exact == b->exact;
}

int ps_trace_replay(FILE *f, const char *name, uint64_t M,
		    const struct ps_attention_params *expect,
		    const struct ps_explicit *xdag, bool element_only,
		    struct ps_replay *rep, struct ps_error *err)
{
	return ps_trace_replay_values(f, name, M, expect, xdag, element_only,
				      NULL, NULL, rep, err);
}

int ps_trace_replay_values(FILE *f, const char *name, uint64_t M,
			   const struct ps_attention_params *expect,
			   const struct ps_explicit *xdag, bool element_only,
			   const struct ps_values_inputs *inputs,
			   struct ps_values *vals, struct ps_replay *rep,
			   struct ps_error *err)
{
	struct reader r = { .name = name, .err = err };
	struct ps_engine engine;
	bool engine_ready = false, ended = false;
	char *line = NULL;
	size_t cap = 0, len;
	bool too_long;
	int got, rc = PS_OK;

	memset(rep, 0, sizeof(*rep));
	if (inputs)
		memset(vals, 0, sizeof(*vals));
	while ((got = read_line(f, &line, &cap, &len, &too_long)) != 0) {
		json_error_t jerr;
		json_t *obj;

		r.line++;
		if (got < 0) {
			rc = too_long ? ps_error_set(err, PS_EINPUT,
					"%s:%llu: the line is longer than the limit of %llu bytes",
					name, (unsigned long long)r.line,
					(unsigned long long)PS_TRACE_MAX_LINE)
				      : ps_error_set(err, PS_ENOMEM, "out of memory");
			err->line = r.line;
			break;
		}
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (ended) {
			rc = BAD(&r, "a line after the end line");
			break;
		}
		if (len == 0) {
			rc = BAD(&r, "empty line");
			break;
		}
		/* a key given twice is an error, not the last one silently kept */
		obj = json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &jerr);
		if (!obj) {
			err->line = r.line;
			rc = ps_error_set(err, PS_EINPUT, "%s:%llu:%d: invalid JSON: %s",
					  name, (unsigned long long)r.line,
					  jerr.column, jerr.text);
			break;
		}
		if (r.line == 1) {
			rc = parse_header(&r, obj, &rep->header);
			json_decref(obj);
			if (rc)
				break;
			if (rep->header.explicit_dag) {
				if (inputs) {
					rc = BAD(&r, "values are defined on the attention DAGs, not on a DAG from a file");
					break;
				}
				if (!xdag) {
					rc = BAD(&r, "this trace is of an explicit DAG: name its file with --dag");
					break;
				}
				if (xdag->vertices != rep->header.vertices ||
				    xdag->edges != rep->header.edges) {
					rc = BAD(&r, "the header's DAG (%llu vertices, %llu edges) is not the one given (%llu vertices, %llu edges)",
						 (unsigned long long)rep->header.vertices,
						 (unsigned long long)rep->header.edges,
						 (unsigned long long)xdag->vertices,
						 (unsigned long long)xdag->edges);
					break;
				}
				rep->header.planned_M = rep->header.M;
				if (M)
					rep->header.M = M;
				if ((rc = ps_engine_init(&engine, &xdag->dag, rep->header.M, err)))
					break;
				engine.element_only = element_only;
				engine_ready = true;
				continue;
			}
			if (xdag) {
				rc = BAD(&r, "this trace is of the attention DAG, not of the DAG given with --dag");
				break;
			}
			if (expect && !same_dag(expect, &rep->header.dag)) {
				rc = BAD(&r, "the header's DAG (n = %llu, d = %llu, g = %llu, %s) is not the one asked for (n = %llu, d = %llu, g = %llu, %s)",
					 (unsigned long long)rep->header.dag.n,
					 (unsigned long long)rep->header.dag.d,
					 (unsigned long long)rep->header.dag.g,
					 rep->header.dag.normalize ? "normalised" : "not normalised",
					 (unsigned long long)expect->n,
					 (unsigned long long)expect->d,
					 (unsigned long long)expect->g,
					 expect->normalize ? "normalised" : "not normalised");
				break;
			}
			if ((rc = ps_attention_check(&rep->header.dag, err)) ||
			    (rc = ps_attention_init(&rep->att, &rep->header.dag, err))) {
				err->line = 1;
				break;
			}
			rep->has_att = true;
			if (inputs && (rc = ps_values_init(vals, &rep->att, inputs, err)))
				break;
			r.exact = rep->header.dag.exact;
			rep->header.planned_M = rep->header.M;
			if (M)
				rep->header.M = M;
			if ((rc = ps_engine_init(&engine, &rep->att.dag, rep->header.M, err)))
				break;
			engine.element_only = element_only;
			engine_ready = true;
			continue;
		}
		if (!json_is_object(obj)) {
			json_decref(obj);
			rc = BAD(&r, "an operation must be a JSON object");
			break;
		}
		if (json_is_string(json_object_get(obj, "op")) &&
		    !strcmp(json_string_value(json_object_get(obj, "op")), "end")) {
			rc = replay_end(&r, obj, &engine);
			json_decref(obj);
			ended = true;
			rep->has_end = rc == PS_OK;
		} else if (rep->header.explicit_dag) {
			ps_engine_set_position(&engine, r.line);
			rc = replay_vertex_op(&r, obj, xdag, &engine);
			rep->ops++;
			json_decref(obj);
		} else {
			struct ps_op op;

			rc = parse_op(&r, obj, &op);
			if (!rc) {
				ps_engine_set_position(&engine, r.line);
				rc = ps_op_apply(&rep->att, &engine, &op, err);
				/* the values follow only what the engine accepted */
				if (!rc && inputs)
					rc = ps_values_apply(vals, &op, err);
				if (rc == PS_EINPUT) {
					char why[PS_ERROR_MAX];

					snprintf(why, sizeof(why), "%s", err->msg);
					rc = BAD(&r, "%s", why);
				}
				rep->ops++;
			}
			json_decref(obj);
		}
		if (rc)
			break;
	}
	if (!rc && ferror(f))
		rc = ps_error_set(err, PS_EIO, "cannot read '%s': %s", name,
				  strerror(errno));
	if (!rc && r.line == 0)
		rc = ps_error_set(err, PS_EINPUT, "%s: empty trace: no header", name);
	if (!rc && !ended) {
		/* no end line: the end condition is checked after the last line */
		ps_engine_set_position(&engine, r.line + 1);
		rc = ps_engine_finish(&engine);
	}
	rep->lines = r.line;
	if (engine_ready) {
		rep->counts = engine.c;
		if (rc == PS_EINVALID) {
			record_violation(rep, &engine, name);
			rc = PS_OK;
		} else if (rc == PS_OK) {
			rep->valid = true;
			if (inputs && !(rc = ps_values_finish(vals, err))) {
				rep->has_values = true;
				rep->values = vals->report;
			}
		}
		ps_engine_free(&engine);
	}
	free(line);
	for (int p = 0; p < 3; p++)
		free(r.values[p]);
	free(r.sorted);
	return rc;
}
