/*
 * JSON Lines traces (MODEL.md section 3, docs/TRACE_FORMAT.md): a writer
 * sink, and a reader that replays a trace line by line in the engine.
 * Every JSON read and written goes through jansson; elementary lines, which
 * can number millions and hold only integers and fixed names, are printed
 * directly in the same compact form.
 */
#include "pebblesim/trace.h"
#include "pebblesim/run.h"

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
static enum ps_kind coord_kind(enum ps_opcode code, enum ps_kind kind, bool carry)
{
	if (code == PS_OP_MAC)
		return carry ? PS_KIND_HC : ps_attention_product_kind(kind);
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
	enum ps_kind k = coord_kind(op->code, op->kind, op->carry);
	json_t *obj = json_object();

	json_object_set_new(obj, "op", json_string(ps_opcode_name(op->code)));
	json_object_set_new(obj, op->code == PS_OP_MAC ? "into" : "kind",
			    json_string(ps_kinds[op->kind].name));
	for (unsigned p = 0; p < ps_kinds[k].arity; p++)
		json_object_set_new(obj, ps_coord_letter(ps_kinds[k].coord[p]),
				    coordset_json(&op->c[p]));
	if (op->fuse)
		json_object_set_new(obj, "fuse", json_true());
	if (op->carry)
		json_object_set_new(obj, "carry", json_true());
	return obj;
}

/* One elementary move as a single-node line. */
static int write_move(void *ctx, enum ps_move move, ps_node v)
{
	struct ps_trace_writer *w = ctx;
	uint64_t c[3];
	enum ps_kind k = ps_attention_decode(w->att, v, c);
	const struct ps_kind_info *info = &ps_kinds[k];
	int rc;

	if (move == PS_MOVE_MAC)
		rc = fprintf(w->file, "{\"op\":\"mac\",\"into\":\"%s\"%s",
			     k == PS_KIND_P2 || k == PS_KIND_HC ? "H" : k == PS_KIND_P1 ? "N" :
			     k == PS_KIND_PS ? "S" : "O", k == PS_KIND_HC ? ",\"carry\":true" : "");
	else
		rc = fprintf(w->file, "{\"op\":\"%s\",\"kind\":\"%s\"",
			     ps_opcode_name(ps_move_opcode(move)), info->name);
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
	int rc;

	if (move == PS_MOVE_MAC) {
		struct ps_product p;

		ps_dag_product(&w->xdag->dag, v, &p);
		rc = fprintf(w->file, "{\"op\":\"mac\",\"into\":%llu,\"from\":%llu}\n",
			     (unsigned long long)p.sum, (unsigned long long)p.parent[0]);
	} else {
		rc = fprintf(w->file, "{\"op\":\"%s\",\"node\":%llu}\n",
			     ps_opcode_name(ps_move_opcode(move)),
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

static bool takes_layout(const char *strategy)
{
	const struct ps_strategy *s = strategy ? ps_strategy_find(strategy) : NULL;

	return s && ps_strategy_takes(s, PS_TAKES_LAYOUT);
}

int ps_trace_open(struct ps_trace_writer *w, const char *path,
		  const struct ps_attention *att, const struct ps_explicit *xdag,
		  uint64_t M, const char *strategy, const struct ps_plan *plan,
		  const char *order, bool elementary, struct ps_error *err)
{
	return ps_trace_open_stream(w, path, stdout, att, xdag, M, strategy, plan,
				    order, elementary, err);
}

int ps_trace_open_stream(struct ps_trace_writer *w, const char *path,
			 FILE *standard_output, const struct ps_attention *att,
			 const struct ps_explicit *xdag, uint64_t M,
			 const char *strategy, const struct ps_plan *plan,
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
	w->file = w->out.file == stdout ? standard_output : w->out.file;
	if (plan && plan->param_name)
		json_object_set_new(params, plan->param_name,
				    json_integer((json_int_t)plan->param));
	/* the variant is generic's tiles, or colpass's layout */
	if (plan && plan->variant)
		json_object_set_new(params, takes_layout(strategy) ? "layout" : "tiles",
				    json_string(plan->variant));
	if (plan && plan->sizes)
		json_object_set_new(params, "sizes", json_string(plan->sizes));
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
	if (att)
		ps_trace_dag_variant(dag, att);
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
	bool causal;         /* ... causal approximate attention: "H" is the
			      * state H[j,m,b], a mac into it may carry */
	uint64_t *sorted;    /* a sorted copy of one, for check_distinct */
	size_t sorted_cap;
	uint64_t max_moves;  /* the moves a replay makes at most */
	bool default_max;    /* max_moves is the DAG's default */
	struct ps_progress progress;
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

/* obj's key as an integer >= min; where names obj in messages ("the
 * header", "the end line") */
static int get_uint(struct reader *r, json_t *obj, const char *where,
		    const char *key, uint64_t min, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return BAD(r, "%s has no \"%s\"", where, key);
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
	static const char *const dag_keys[] = {
		"kind", "n", "d", "g", "normalize", "causal", "decode", NULL
	};
	static const char *const exact_keys[] = {
		"kind", "n", "d", "normalize", "causal", "decode", NULL
	};
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
	if ((rc = get_uint(r, h, "the header", "version", 0, &version)))
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
		    (rc = get_uint(r, dag, "the header", "vertices", 0, &out->vertices)) ||
		    (rc = get_uint(r, dag, "the header", "edges", 0, &out->edges)) ||
		    (rc = get_uint(r, h, "the header", "M", 1, &out->M)))
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
	if (!out->explicit_dag && ((rc = get_uint(r, dag, "the header", "n", 1, &out->dag.n)) ||
	    (rc = get_uint(r, dag, "the header", "d", 1, &out->dag.d)) ||
	    (!out->dag.exact && (rc = get_uint(r, dag, "the header", "g", 0, &out->dag.g))) ||
	    (rc = get_uint(r, h, "the header", "M", 1, &out->M))))
		return rc;
	v = json_object_get(dag, "normalize");
	if (v && !json_is_boolean(v))
		return BAD(r, "the header's \"normalize\" must be true or false");
	out->dag.normalize = !v || json_is_true(v);
	/* MODEL.md sections 7 and 8: written only when true, and when P >= 1 */
	v = json_object_get(dag, "causal");
	if (v && !json_is_boolean(v))
		return BAD(r, "the header's \"causal\" must be true or false");
	out->dag.causal = v && json_is_true(v);
	if (json_object_get(dag, "decode") &&
	    (rc = get_uint(r, dag, "the header", "decode", 1, &out->dag.decode)))
		return rc;
	v = json_object_get(h, "strategy");
	if (v && !json_is_string(v))
		return BAD(r, "the header's \"strategy\" must be a string");
	ps_utf8_copy(out->strategy, sizeof(out->strategy),
		 v ? json_string_value(v) : "");
	v = json_object_get(h, "params");
	if (v && !json_is_object(v))
		return BAD(r, "the header's \"params\" must be an object");
	if (v && json_is_integer(json_object_get(v, "w")))
		out->w = (uint64_t)json_integer_value(json_object_get(v, "w"));
	if (v && json_is_string(json_object_get(v, "tiles")))
		ps_utf8_copy(out->tiles, sizeof(out->tiles),
			 json_string_value(json_object_get(v, "tiles")));
	if (v && json_is_string(json_object_get(v, "sizes")))
		ps_utf8_copy(out->sizes, sizeof(out->sizes),
			 json_string_value(json_object_get(v, "sizes")));
	if (v && json_is_string(json_object_get(v, "layout")))
		ps_utf8_copy(out->layout, sizeof(out->layout),
			 json_string_value(json_object_get(v, "layout")));
	if (v && json_is_string(json_object_get(v, "order")))
		ps_utf8_copy(out->order, sizeof(out->order),
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

/* Whether the len bytes at text are the string name (short names: a
 * loop is cheaper than strlen and memcmp). */
static bool same_name(const char *text, size_t len, const char *name)
{
	size_t k = 0;

	for (; k < len; k++)
		if (text[k] != name[k]) /* name's NUL differs from text's bytes */
			return false;
	return name[k] == '\0';
}

/* The operation named by the len bytes at name, or -1. */
static int opcode_lookup(const char *name, size_t len)
{
	for (int code = PS_OP_LOAD; code <= PS_OP_MAC; code++)
		if (same_name(name, len, ps_opcode_name((enum ps_opcode)code)))
			return code;
	return -1;
}

static int parse_op(struct reader *r, json_t *obj, struct ps_op *op)
{
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
	code = opcode_lookup(name, strlen(name));
	if (code < 0)
		return BAD(r, "unknown operation \"%s\"", name);
	op->code = (enum ps_opcode)code;
	allowed[count++] = "op";
	v = json_object_get(obj, op->code == PS_OP_MAC ? "into" : "kind");
	if (!json_is_string(v))
		return BAD(r, "a %s needs \"%s\"", name, op->code == PS_OP_MAC ? "into" : "kind");
	kind = ps_kind_lookup(json_string_value(v));
	if (kind < 0)
		return BAD(r, "unknown kind \"%s\"", json_string_value(v));
	if (kind == PS_KIND_H && r->causal)
		kind = PS_KIND_HJ;
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
	if (op->code == PS_OP_MAC && op->kind == PS_KIND_HJ) {
		allowed[count++] = "carry";
		v = json_object_get(obj, "carry");
		if (v && !json_is_boolean(v))
			return BAD(r, "\"carry\" must be true or false");
		op->carry = v && json_is_true(v);
	}
	k = coord_kind(op->code, op->kind, op->carry);
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

/* An explicit DAG's operation: "node" (into) for load, save, delete,
 * compute; "into" and "from" for a mac. */
struct vertex_op {
	enum ps_opcode code;
	struct ps_coordset into, from;
};

/* An explicit DAG's line from its JSON object. */
static int parse_vertex_op(struct reader *r, json_t *obj, struct vertex_op *op)
{
	static const char *const node_keys[] = { "op", "node", NULL };
	static const char *const mac_keys[] = { "op", "into", "from", NULL };
	const char *name = json_string_value(json_object_get(obj, "op"));
	int code, rc;

	if (!name)
		return BAD(r, "an operation needs \"op\": load, save, delete, compute, mac or end");
	code = opcode_lookup(name, strlen(name));
	if (code < 0)
		return BAD(r, "unknown operation \"%s\"", name);
	op->code = (enum ps_opcode)code;
	if (code != PS_OP_MAC) {
		json_t *v = json_object_get(obj, "node");

		if ((rc = only_keys(r, obj, node_keys, "this operation")))
			return rc;
		if (!v)
			return BAD(r, "a %s needs \"node\"", name);
		return parse_coord(r, v, "node", 0, &op->into);
	}
	if ((rc = only_keys(r, obj, mac_keys, "this operation")))
		return rc;
	if (!json_object_get(obj, "into") || !json_object_get(obj, "from"))
		return BAD(r, "a mac needs \"into\" and \"from\"");
	if ((rc = parse_coord(r, json_object_get(obj, "into"), "into", 0, &op->into)))
		return rc;
	return parse_coord(r, json_object_get(obj, "from"), "from", 1, &op->from);
}

/* Applies an explicit DAG's operation, move by move (into outermost). */
static int apply_vertex_op(struct reader *r, const struct vertex_op *op,
			   const struct ps_explicit *x, struct ps_engine *e)
{
	int rc;

	if (op->code != PS_OP_MAC) {
		for (uint64_t k = 0; k < ps_coordset_size(&op->into); k++) {
			uint64_t vertex = ps_coordset_at(&op->into, k);

			if (vertex >= x->vertices)
				return BAD(r, "vertex %llu is not in the DAG (it has %llu)",
					   (unsigned long long)vertex,
					   (unsigned long long)x->vertices);
			if ((rc = ps_engine_apply(e, ps_opcode_move(op->code), vertex)))
				return rc;
		}
		return PS_OK;
	}
	for (uint64_t a = 0; a < ps_coordset_size(&op->into); a++)
		for (uint64_t b = 0; b < ps_coordset_size(&op->from); b++) {
			uint64_t v = ps_coordset_at(&op->into, a), u = ps_coordset_at(&op->from, b);
			ps_node p = ps_explicit_product(x, u, v);

			if (p == UINT64_MAX)
				return BAD(r, "no edge %llu -> %llu into a sum",
					   (unsigned long long)u, (unsigned long long)v);
			if ((rc = ps_engine_mac(e, p)))
				return rc;
		}
	return PS_OK;
}

/* The trace's bytes, read a block at a time: a line is then found with
 * memchr and copied whole, not taken a character at a time. */
struct line_source {
	FILE *f;
	size_t pos, end;
	bool eof;
	char buf[16384];
};

/*
 * One line into *line (without its newline), at most PS_TRACE_MAX_LINE
 * bytes: 1 and its length in *len, 0 at the end of the file, -1 for a
 * line over the limit (the rest of it is not read) or out of memory.
 */
static int read_line(struct line_source *src, char **line, size_t *cap,
		     size_t *len, bool *too_long)
{
	size_t used = 0;

	*too_long = false;
	for (;;) {
		const char *start, *newline;
		size_t take;

		if (src->pos == src->end) {
			size_t got = src->eof ? 0 : fread(src->buf, 1, sizeof(src->buf), src->f);

			if (got == 0) {
				src->eof = true;
				if (used == 0)
					return 0;
				break;
			}
			src->pos = 0;
			src->end = got;
		}
		start = src->buf + src->pos;
		newline = memchr(start, '\n', src->end - src->pos);
		take = newline ? (size_t)(newline - start) : src->end - src->pos;
		if (used + take > PS_TRACE_MAX_LINE) {
			*too_long = true;
			return -1;
		}
		if (used + take + 1 > *cap) {
			size_t grown_cap = *cap ? *cap : 4096;
			char *grown;

			while (grown_cap < used + take + 1)
				grown_cap *= 2;
			grown = realloc(*line, grown_cap);
			if (!grown)
				return -1;
			*line = grown;
			*cap = grown_cap;
		}
		memcpy(*line + used, start, take);
		used += take;
		src->pos += take + (newline != NULL);
		if (newline)
			break;
	}
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

	if (rc || (rc = get_uint(r, obj, "the end line", "loads", 0, &loads)) ||
	    (rc = get_uint(r, obj, "the end line", "saves", 0, &saves)))
		return rc;
	ps_engine_set_position(e, r->line);
	if ((rc = ps_engine_finish(e)))
		return rc;
	if (loads != e->c.loads || saves != e->c.saves)
		return ps_engine_violate(e, PS_RULE_END_COUNTS, PS_MOVE_END, 0,
					 "the trace states %llu loads and %llu saves; the sequence made %llu loads and %llu saves",
					 (unsigned long long)loads, (unsigned long long)saves,
					 (unsigned long long)e->c.loads,
					 (unsigned long long)e->c.saves);
	return PS_OK;
}

/* ---- the fast path for single-node lines ------------------------------ */

/*
 * An elementary trace is millions of lines like
 * {"op":"mac","into":"N","i":3,"m":7,"b":2}, and parsing each into a
 * jansson object costs several times the move it stands for. A line that
 * is a flat object of at most FLAT_MAX members, each a name of letters,
 * digits or '_' and a value that is such a string, an integer from 0 to
 * 10^18 - 1 without leading zeros, true or false, with JSON's white space
 * anywhere between tokens, is read here instead; so is it only when it
 * names a valid operation of single nodes, with every key it needs and no
 * other, no key twice. Anything else (ranges, lists, escapes, negative or
 * longer numbers, unknown keys, the end line, every error) goes to
 * jansson, so that the two readers agree on every line by construction:
 * a line read here is one that jansson and parse_op read without error,
 * into the same operation. tests/test_trace.c holds them equal.
 */
#define FLAT_MAX 8

struct flat_value {
	const char *key, *text; /* text: a string's bytes */
	size_t key_len, text_len;
	enum { FLAT_STRING, FLAT_UINT, FLAT_TRUE, FLAT_FALSE } type;
	uint64_t number;
};

struct flat_line {
	struct flat_value v[FLAT_MAX];
	unsigned count;
};

static bool fast_lines_on = true;

bool ps_trace_fast_lines(bool on)
{
	bool was = fast_lines_on;

	fast_lines_on = on;
	return was;
}

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/* A string of name characters at *p ('"' opening it): its bytes. */
static bool flat_string(const char **p, const char *end, const char **text,
			size_t *len)
{
	const char *q = *p + 1;

	while (q < end && name_char(*q))
		q++;
	if (q >= end || *q != '"')
		return false;
	*text = *p + 1;
	*len = (size_t)(q - *text);
	*p = q + 1;
	return true;
}

static bool flat_word(const char **p, const char *end, const char *word)
{
	size_t len = strlen(word);

	if ((size_t)(end - *p) < len || memcmp(*p, word, len))
		return false;
	*p += len;
	return true;
}

/* Splits line into members; false for anything but the shape above. */
static bool flat_scan(const char *line, size_t len, struct flat_line *out)
{
	const char *p = line, *end = line + len;

	out->count = 0;
	p = skip_space(p, end);
	if (p >= end || *p++ != '{')
		return false;
	p = skip_space(p, end);
	if (p < end && *p == '}')
		return false; /* no members: jansson says what is missing */
	for (;;) {
		struct flat_value *v = &out->v[out->count];

		if (out->count == FLAT_MAX || p >= end || *p != '"' ||
		    !flat_string(&p, end, &v->key, &v->key_len))
			return false;
		for (unsigned k = 0; k < out->count; k++)
			if (out->v[k].key_len == v->key_len &&
			    !memcmp(out->v[k].key, v->key, v->key_len))
				return false; /* a key twice: jansson's message */
		p = skip_space(p, end);
		if (p >= end || *p++ != ':')
			return false;
		p = skip_space(p, end);
		if (p >= end)
			return false;
		if (*p == '"') {
			v->type = FLAT_STRING;
			if (!flat_string(&p, end, &v->text, &v->text_len))
				return false;
		} else if (*p >= '0' && *p <= '9') {
			const char *first = p;

			v->type = FLAT_UINT;
			v->number = 0;
			for (; p < end && *p >= '0' && *p <= '9'; p++)
				v->number = v->number * 10 + (uint64_t)(*p - '0');
			/* 18 digits stay below 2^63: jansson reads them alike */
			if ((*first == '0' && p - first > 1) || p - first > 18)
				return false;
		} else if (flat_word(&p, end, "true")) {
			v->type = FLAT_TRUE;
		} else if (flat_word(&p, end, "false")) {
			v->type = FLAT_FALSE;
		} else {
			return false;
		}
		out->count++;
		p = skip_space(p, end);
		if (p < end && *p == ',') {
			p = skip_space(p + 1, end);
			continue;
		}
		if (p >= end || *p++ != '}')
			return false;
		return skip_space(p, end) == end;
	}
}

static const struct flat_value *flat_get(const struct flat_line *fl,
					 const char *key)
{
	for (unsigned k = 0; k < fl->count; k++)
		if (same_name(fl->v[k].key, fl->v[k].key_len, key))
			return &fl->v[k];
	return NULL;
}

/* The operation a flat line names, as opcode_lookup; -1 also for "end". */
static int flat_opcode(const struct flat_line *fl)
{
	const struct flat_value *v = flat_get(fl, "op");

	return v && v->type == FLAT_STRING ? opcode_lookup(v->text, v->text_len) : -1;
}

/* The single node a flat line gives under key, as parse_coord reads it. */
static bool flat_node(const struct flat_line *fl, const char *key,
		      struct ps_coordset *out)
{
	const struct flat_value *v = flat_get(fl, key);

	if (!v || v->type != FLAT_UINT)
		return false;
	*out = ps_one(v->number);
	return true;
}

/* An attention DAG's line, as parse_op would read it without error. */
static bool flat_op(const struct reader *r, const struct flat_line *fl,
		    struct ps_op *op)
{
	const struct flat_value *v;
	unsigned used = 2;
	int code = flat_opcode(fl), kind = 0;
	enum ps_kind k;

	if (code < 0)
		return false;
	memset(op, 0, sizeof(*op));
	op->code = (enum ps_opcode)code;
	v = flat_get(fl, op->code == PS_OP_MAC ? "into" : "kind");
	if (!v || v->type != FLAT_STRING)
		return false;
	/* as ps_kind_lookup */
	while (kind < PS_KIND_COUNT && !same_name(v->text, v->text_len, ps_kinds[kind].name))
		kind++;
	if (kind == PS_KIND_COUNT || (op->code == PS_OP_MAC &&
			 (ps_kinds[kind].role != PS_ROLE_SUM ||
			  (kind == PS_KIND_S || kind == PS_KIND_O) != r->exact)))
		return false;
	if (kind == PS_KIND_H && r->causal)
		kind = PS_KIND_HJ;
	op->kind = (enum ps_kind)kind;
	if (op->code == PS_OP_MAC && kind == PS_KIND_HJ && (v = flat_get(fl, "carry"))) {
		if (v->type != FLAT_TRUE && v->type != FLAT_FALSE)
			return false;
		op->carry = v->type == FLAT_TRUE;
		used++;
	}
	if (op->code == PS_OP_MAC && (v = flat_get(fl, "fuse"))) {
		if (v->type != FLAT_TRUE && v->type != FLAT_FALSE)
			return false;
		op->fuse = v->type == FLAT_TRUE;
		used++;
	}
	k = coord_kind(op->code, op->kind, op->carry);
	for (unsigned p = 0; p < ps_kinds[k].arity; p++, used++)
		if (!flat_node(fl, ps_coord_letter(ps_kinds[k].coord[p]), &op->c[p]))
			return false;
	return used == fl->count; /* no other key */
}

/* An explicit DAG's line, as parse_vertex_op would read it without error. */
static bool flat_vertex_op(const struct flat_line *fl, struct vertex_op *op)
{
	int code = flat_opcode(fl);

	if (code < 0)
		return false;
	op->code = (enum ps_opcode)code;
	if (code != PS_OP_MAC)
		return fl->count == 2 && flat_node(fl, "node", &op->into);
	return fl->count == 3 && flat_node(fl, "into", &op->into) &&
	       flat_node(fl, "from", &op->from);
}

uint64_t ps_trace_default_max_moves(const struct ps_dag *dag)
{
	uint64_t moves;

	if (ps_mul_u64(dag->node_count, PS_TRACE_MOVES_PER_NODE, &moves))
		return UINT64_MAX;
	return moves > PS_TRACE_LEAST_MAX_MOVES ? moves : PS_TRACE_LEAST_MAX_MOVES;
}

/*
 * A line's moves against the limit, before they are played: a line of a
 * few bytes may name a set over the whole DAG, so the work a trace costs
 * is bounded by moves, not by bytes (docs/SECURITY.md, "Work limits").
 */
static int check_moves(struct reader *r, const struct ps_engine *e, uint64_t line_moves)
{
	uint64_t after = e->c.moves + line_moves;

	if (after >= e->c.moves && after <= r->max_moves)
		return PS_OK;
	if (r->default_max)
		return BAD(r, "the trace reaches %llu moves by this line, beyond the limit of %llu (%d a node of the declared DAG); raise it with --max-moves N (0 for none)",
			   (unsigned long long)after, (unsigned long long)r->max_moves,
			   PS_TRACE_MOVES_PER_NODE);
	return BAD(r, "the trace reaches %llu moves by this line, beyond --max-moves %llu",
		   (unsigned long long)after, (unsigned long long)r->max_moves);
}

/* Plays one line read by either reader: an explicit DAG's vop, or op. */
static int play_line(struct reader *r, struct ps_replay *rep,
		     const struct ps_explicit *xdag, struct ps_engine *e,
		     const struct ps_op *op, const struct vertex_op *vop)
{
	struct ps_error out_of_range;
	uint64_t line_moves = 1;
	int rc;

	/* a set out of the DAG's ranges is refused by ps_op_apply below */
	if (!rep->header.explicit_dag)
		line_moves = ps_op_check(&rep->att, op, &out_of_range) ? 0 : ps_op_moves(op);
	if ((rc = check_moves(r, e, line_moves)))
		return rc;
	ps_progress_step(&r->progress, e->c.moves, line_moves);
	ps_engine_set_position(e, r->line);
	rep->ops++;
	if (rep->header.explicit_dag)
		return apply_vertex_op(r, vop, xdag, e);
	rc = ps_op_apply(&rep->att, e, op, r->err);
	if (rc == PS_EINPUT) {
		char why[PS_ERROR_MAX];

		snprintf(why, sizeof(why), "%s", r->err->msg);
		rc = BAD(r, "%s", why);
	}
	return rc;
}

/* An accepted operation, applied to the values. */
static int values_line(struct reader *r, struct ps_values *vals, const struct ps_op *op)
{
	int rc = ps_values_apply(vals, op, r->err);

	if (rc == PS_EINPUT) {
		char why[PS_ERROR_MAX];

		snprintf(why, sizeof(why), "%s", r->err->msg);
		rc = BAD(r, "%s", why);
	}
	return rc;
}

static bool same_dag(const struct ps_attention_params *a,
		     const struct ps_attention_params *b)
{
	return a->n == b->n && a->d == b->d && a->g == b->g &&
	       a->normalize == b->normalize && a->exact == b->exact &&
	       a->causal == b->causal && a->decode == b->decode;
}

void ps_trace_dag_variant(json_t *dag, const struct ps_attention *att)
{
	if (att->causal)
		json_object_set_new(dag, "causal", json_true());
	if (att->decode)
		json_object_set_new(dag, "decode", json_integer((json_int_t)att->decode));
}

/* ", causal, decoding after P = 4096": what a DAG adds to n, d and g. */
static const char *variant_words(const struct ps_attention_params *p, char *buf,
				 size_t len)
{
	if (p->decode)
		snprintf(buf, len, ", causal, decoding after P = %llu",
			 (unsigned long long)p->decode);
	else
		snprintf(buf, len, "%s", p->causal ? ", causal" : "");
	return buf;
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
	const struct ps_replay_options o = {
		.M = M, .expect = expect, .xdag = xdag, .element_only = element_only,
		.inputs = inputs, .vals = vals,
	};

	return ps_trace_replay_with(f, name, &o, rep, err);
}

/* The moves limit once the header has declared its DAG. */
static void set_max_moves(struct reader *r, const struct ps_replay_options *o,
			  const struct ps_dag *dag)
{
	r->default_max = o->max_moves == 0;
	r->max_moves = o->max_moves ? o->max_moves : ps_trace_default_max_moves(dag);
}

int ps_trace_replay_with(FILE *f, const char *name, const struct ps_replay_options *o,
			 struct ps_replay *rep, struct ps_error *err)
{
	const uint64_t M = o->M;
	const struct ps_attention_params *expect = o->expect;
	const struct ps_explicit *xdag = o->xdag;
	const bool element_only = o->element_only;
	const struct ps_values_inputs *inputs = o->inputs;
	struct ps_values *vals = o->vals;
	struct reader r = { .name = name, .err = err };
	struct ps_engine engine;
	bool engine_ready = false, ended = false;
	char *line = NULL;
	size_t cap = 0, len;
	bool too_long;
	int got, rc = PS_OK;
	struct line_source *src = malloc(sizeof(*src));

	memset(rep, 0, sizeof(*rep));
	if (!src)
		return ps_error_set(err, PS_ENOMEM, "out of memory");
	if (inputs)
		memset(vals, 0, sizeof(*vals));
	src->f = f;
	src->pos = src->end = 0;
	src->eof = false;
	ps_progress_init(&r.progress, o->progress, 0);
	while ((got = read_line(src, &line, &cap, &len, &too_long)) != 0) {
		struct flat_line flat;
		struct vertex_op vop;
		struct ps_op op;
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
		if (r.line > 1 && fast_lines_on && flat_scan(line, len, &flat) &&
		    (rep->header.explicit_dag ? flat_vertex_op(&flat, &vop)
					      : flat_op(&r, &flat, &op))) {
			rep->fast_lines++;
			if ((rc = play_line(&r, rep, xdag, &engine, &op, &vop)) ||
			    (inputs && (rc = values_line(&r, vals, &op))))
				break;
			if (o->after_op)
				o->after_op(o->after_op_ctx, &engine, r.line);
			continue;
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
				set_max_moves(&r, o, &xdag->dag);
				continue;
			}
			if (xdag) {
				rc = BAD(&r, "this trace is of the attention DAG, not of the DAG given with --dag");
				break;
			}
			if (expect && !same_dag(expect, &rep->header.dag)) {
				char had[64], asked[64];

				rc = BAD(&r, "the header's DAG (n = %llu, d = %llu, g = %llu, %s%s) is not the one asked for (n = %llu, d = %llu, g = %llu, %s%s)",
					 (unsigned long long)rep->header.dag.n,
					 (unsigned long long)rep->header.dag.d,
					 (unsigned long long)rep->header.dag.g,
					 rep->header.dag.normalize ? "normalised" : "not normalised",
					 variant_words(&rep->header.dag, had, sizeof(had)),
					 (unsigned long long)expect->n,
					 (unsigned long long)expect->d,
					 (unsigned long long)expect->g,
					 expect->normalize ? "normalised" : "not normalised",
					 variant_words(expect, asked, sizeof(asked)));
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
			r.causal = rep->header.dag.causal && !r.exact;
			rep->header.planned_M = rep->header.M;
			if (M)
				rep->header.M = M;
			if ((rc = ps_engine_init(&engine, &rep->att.dag, rep->header.M, err)))
				break;
			engine.element_only = element_only;
			engine_ready = true;
			set_max_moves(&r, o, &rep->att.dag);
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
		} else {
			rc = rep->header.explicit_dag ? parse_vertex_op(&r, obj, &vop)
						      : parse_op(&r, obj, &op);
			json_decref(obj);
			if (!rc)
				rc = play_line(&r, rep, xdag, &engine, &op, &vop);
			/* the values follow only what the engine accepted */
			if (!rc && inputs)
				rc = values_line(&r, vals, &op);
			if (!rc && o->after_op)
				o->after_op(o->after_op_ctx, &engine, r.line);
		}
		if (rc)
			break;
	}
	ps_progress_end(&r.progress);
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
	free(src);
	for (int p = 0; p < 3; p++)
		free(r.values[p]);
	free(r.sorted);
	return rc;
}
