/*
 * Strategies from plugins (docs/EXTENDING.md): a shared object loaded with
 * dlopen, whose ps_plugin_strategies returns its strategies. Each one is
 * checked before it is registered: a version this pebblesim can read, the
 * members it needs, flags and options this version knows, a name of its
 * own. A plugin with one strategy that fails is refused whole, by name.
 *
 * Its code is trusted (it runs inside pebblesim); what it produces is not:
 * its sequences go through the engine and its predictions are set beside
 * the counts, as the built-in strategies' are.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pebblesim/strategy.h"

/* A plugin offers at most this many strategies. */
#define PS_PLUGIN_MAX_STRATEGIES 64
/* A strategy's name goes into trace headers (64 bytes) and file names. */
#define PS_PLUGIN_MAX_NAME 63
/* Its section and summary are printed on one line each. */
#define PS_PLUGIN_MAX_TEXT 400

#define KNOWN_FLAGS (PS_STRATEGY_EXPLICIT | PS_STRATEGY_BASELINE | \
		     PS_STRATEGY_EXACT | PS_STRATEGY_BEYOND | PS_STRATEGY_QUADRATIC | \
		     PS_STRATEGY_CAUSAL | PS_STRATEGY_DECODE)
#define KNOWN_TAKES (PS_TAKES_W | PS_TAKES_TILES | PS_TAKES_ORDER | \
		     PS_TAKES_SIZES | PS_TAKES_LAYOUT | PS_TAKES_TIME_LIMIT)

struct plugin {
	void *handle;
	char *path;
};

static struct plugin *plugins;
static size_t plugin_count;

/* Letters, digits, '-', '_', '.' and '+': a name that is safe in a
 * command line, a file name, a CSV cell and a plot's title. */
static bool valid_name(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > PS_PLUGIN_MAX_NAME || name[0] == '-')
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("-_.+", *p)))
			return false;
	return true;
}

/* One line of printable text (UTF-8 is checked apart, to be named). */
static bool valid_text(const char *text)
{
	size_t len = strlen(text);

	if (!len || len > PS_PLUGIN_MAX_TEXT)
		return false;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* Why the text the strategy calls what is not UTF-8, or PS_OK. */
static int utf8_text(const char *path, const char *name, const char *what, const char *text,
		     struct ps_error *err)
{
	size_t at;

	if (ps_utf8_valid(text, &at))
		return PS_OK;
	return ps_error_set(err, PS_EINPUT,
			    "plugin '%s': strategy '%s' has a %s that is not valid UTF-8 (byte 0x%02x at offset %zu)",
			    path, name, what, (unsigned)(unsigned char)text[at], at);
}

static bool registered_name(const char *name, const struct ps_strategy *const *list,
			    size_t before)
{
	if (ps_strategy_find(name))
		return true;
	for (size_t k = 0; k < before; k++)
		if (!strcmp(list[k]->name, name))
			return true;
	return false;
}

/* Why strategy number k of the plugin at path cannot be registered. */
static int check_strategy(const char *path, const struct ps_strategy *const *list,
			  size_t k, struct ps_error *err)
{
	const struct ps_strategy *s = list[k];
	const char *name;
	int rc;

	if (!s)
		return ps_error_set(err, PS_EINPUT, "plugin '%s': strategy %zu is NULL", path, k);
	/* name is a member of every version: readable before the version is */
	if (!s->name || !valid_name(s->name))
		return ps_error_set(err, PS_EINPUT,
				    "plugin '%s': strategy %zu has no valid name (1 to %d letters, digits, '-', '_', '.' or '+', not starting with '-')",
				    path, k, PS_PLUGIN_MAX_NAME);
	name = s->name;
	if (s->version > PS_STRATEGY_VERSION)
		return ps_error_set(err, PS_EINPUT,
				    "plugin '%s': strategy '%s' is of version %u, newer than this pebblesim's %u: build it against this pebblesim's headers",
				    path, name, s->version, PS_STRATEGY_VERSION);
	if (s->version < 1)
		return ps_error_set(err, PS_EINPUT,
				    "plugin '%s': strategy '%s' is of version 0: set .version = PS_STRATEGY_VERSION",
				    path, name);
	if (registered_name(name, list, k))
		return ps_error_set(err, PS_EINPUT,
				    "plugin '%s': strategy '%s' has the name of a strategy already registered",
				    path, name);
	if (!s->section || !valid_text(s->section) || !s->summary || !valid_text(s->summary))
		return ps_error_set(err, PS_EINPUT,
				    "plugin '%s': strategy '%s' needs a section and a summary, each one line of 1 to %d printable characters",
				    path, name, PS_PLUGIN_MAX_TEXT);
	if ((rc = utf8_text(path, name, "section", s->section, err)) ||
	    (rc = utf8_text(path, name, "summary", s->summary, err)))
		return rc;
	if (!s->plan || !s->run)
		return ps_error_set(err, PS_EINPUT, "plugin '%s': strategy '%s' has no %s function",
				    path, name, !s->plan ? "plan" : "run");
	if (s->flags & ~(unsigned)KNOWN_FLAGS)
		return ps_error_set(err, PS_EINPUT,
				    "plugin '%s': strategy '%s' has flags 0x%x that a plugin cannot set (PS_STRATEGY_CHOOSER is pebblesim's own, others unknown to version %u)",
				    path, name, s->flags & ~(unsigned)KNOWN_FLAGS, PS_STRATEGY_VERSION);
	if ((s->flags & PS_STRATEGY_EXPLICIT) && (s->flags & PS_STRATEGY_EXACT))
		return ps_error_set(err, PS_EINPUT,
				    "plugin '%s': strategy '%s' cannot pebble both explicit DAGs and exact attention",
				    path, name);
	if ((s->flags & PS_STRATEGY_EXPLICIT) ? !s->min_memory_explicit : !s->min_memory)
		return ps_error_set(err, PS_EINPUT, "plugin '%s': strategy '%s' has no %s function",
				    path, name, (s->flags & PS_STRATEGY_EXPLICIT) ?
				    "min_memory_explicit" : "min_memory");
	if (s->version >= 2 && (s->takes & ~(unsigned)KNOWN_TAKES))
		return ps_error_set(err, PS_EINPUT,
				    "plugin '%s': strategy '%s' takes options 0x%x unknown to this pebblesim",
				    path, name, s->takes & ~(unsigned)KNOWN_TAKES);
	return PS_OK;
}

static void close_handle(void *handle)
{
	dlclose(handle);
}

int ps_plugin_load(const char *path, struct ps_error *err)
{
	const struct ps_strategy *const *list;
	ps_plugin_strategies_fn *entry;
	struct plugin *grown;
	struct stat st;
	size_t count = 0;
	char *open_path;
	void *handle;
	int rc;

	if (!*path)
		return ps_error_set(err, PS_EINPUT, "plugin: empty file name");
	/* a name without a slash is a file here, never a search of the
	 * loader's path (dlopen(3) would search it) */
	open_path = malloc(strlen(path) + 3);
	if (!open_path)
		return ps_error_set(err, PS_ENOMEM, "out of memory loading plugin '%s'", path);
	sprintf(open_path, "%s%s", strchr(path, '/') ? "" : "./", path);
	if (stat(open_path, &st)) {
		rc = ps_error_set(err, PS_EINPUT, "cannot open plugin '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = ps_error_set(err, PS_EINPUT, "cannot open plugin '%s': not a regular file", path);
		goto fail;
	}
	handle = dlopen(open_path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		const char *why = dlerror();

		rc = ps_error_set(err, PS_EINPUT, "cannot load plugin '%s': %s", path,
				  why ? why : "unknown error");
		goto fail;
	}
	for (size_t k = 0; k < plugin_count; k++)
		if (plugins[k].handle == handle) {
			/* the same file again: dlopen counted a reference */
			close_handle(handle);
			free(open_path);
			return PS_OK;
		}
	/* POSIX: a function pointer read through a void * */
	*(void **)&entry = dlsym(handle, PS_PLUGIN_SYMBOL);
	if (!entry) {
		rc = ps_error_set(err, PS_EINPUT,
				  "plugin '%s' does not define " PS_PLUGIN_SYMBOL " (docs/EXTENDING.md)",
				  path);
		goto fail_handle;
	}
	list = entry(PS_STRATEGY_VERSION, &count);
	if (!list || !count) {
		rc = ps_error_set(err, PS_EINPUT,
				  "plugin '%s' offers no strategy to this pebblesim (strategy version %u)",
				  path, PS_STRATEGY_VERSION);
		goto fail_handle;
	}
	if (count > PS_PLUGIN_MAX_STRATEGIES) {
		rc = ps_error_set(err, PS_EINPUT, "plugin '%s' offers %zu strategies, more than %d",
				  path, count, PS_PLUGIN_MAX_STRATEGIES);
		goto fail_handle;
	}
	for (size_t k = 0; k < count; k++)
		if ((rc = check_strategy(path, list, k, err)))
			goto fail_handle;
	grown = realloc(plugins, (plugin_count + 1) * sizeof(*plugins));
	if (!grown) {
		rc = ps_error_set(err, PS_ENOMEM, "out of memory loading plugin '%s'", path);
		goto fail_handle;
	}
	plugins = grown;
	if ((rc = ps_strategy_register(list, count, open_path, err)))
		goto fail_handle;
	plugins[plugin_count].handle = handle;
	plugins[plugin_count].path = open_path;
	plugin_count++;
	return PS_OK;
fail_handle:
	close_handle(handle);
fail:
	free(open_path);
	return rc;
}

void ps_plugin_unload_all(void)
{
	ps_strategy_unregister_all();
	for (size_t k = 0; k < plugin_count; k++) {
		close_handle(plugins[k].handle);
		free(plugins[k].path);
	}
	free(plugins);
	plugins = NULL;
	plugin_count = 0;
}
