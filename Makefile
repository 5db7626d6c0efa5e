# pebblesim: build, check, bench, install.
#
#   make            build build/pebblesim, libpebblesim.a, libpebblesim.so and the man page
#   make run        build and run the representative job (the README's first command)
#   make check      build and run every test (the README's second command;
#                   PS_TEST_JOBS=N suites side by side, default the processors) and
#                   the NumPy checks of the polynomials and of causal attention
#                   (tests/numpy_polynomial.py, tests/numpy_causal.py),
#                   the sweep CSV through csv, NumPy and pandas (tests/csv_readers.py),
#                   README's package list against scripts/deps.sh (check-deps-list.sh),
#                   examples/distributed/ with 3 shards (check-distributed.sh), then
#                   check that build options are tracked (check-flags), and
#                   install into build/, build examples/api against that tree
#                   through pkg-config, run it and uninstall (check-install);
#                   the Python module's tests (check-python), and examples/plugin
#                   and the Python module used from an installed tree (check-extending)
#   make check-code the part of make check that runs the code: the unit tests,
#                   the NumPy check, examples/distributed/ (.ci/run's sanitizer runs)
#   make bench      time representative runs; writes build/bench.json
#   make golden     regenerate tests/golden/io_counts.json (review its diff)
#   make docs-tables regenerate the tables of docs/VALUES.md and docs/EXACT.md from runs (docs/scripts/tables.py)
#   make docs-plot  regenerate the figures of docs/ with gnuplot: exact-crossover.svg
#                   (README.md, docs/EXACT.md), causal-crossover.svg and
#                   decode-per-token.svg (docs/EXACT.md), map.svg (docs/MAP.md)
#   make check-docs-plot  draw the figures into build/docs-plot and compare them
#                   with docs/ (make check runs it)
#   make docs-view  regenerate docs/viewer.png (docs/VIEWER.md) with chromium
#   make check-browser the page of `pebblesim view` tested in headless chromium
#   make check-full the whole strategy grid (longer than make check)
#   make optimal-grid the exact optima of docs/OPTIMAL.md's table, 60 s an instance
#   make install    PREFIX=/usr/local DESTDIR=: the binary, the static and shared
#                   libraries, the headers, pebblesim.pc, the man page, the bash
#                   completion, the docs and examples, the Python module in
#                   PYTHONDIR (PREFIX/lib/python3.X/dist-packages)
#   make uninstall  PREFIX=/usr/local DESTDIR=: removes what install installed
#   make clean      removes build/
#   SANITIZE=address,undefined make check   sanitizer build in its own directory
#   WERROR=1 make check                     warnings are errors (CI)
#
# The build options are tracked: build/flags holds CC, OPT, CFLAGS, LDFLAGS,
# WERROR, SANITIZE and the effective compile and link flags; every
# object depends on it, and it is rewritten only when its content changes.
#
# Missing Debian packages are installed by scripts/deps.sh before building.

VERSION := $(shell sed -n 's/^.define PS_VERSION "\(.*\)"$$/\1/p' include/pebblesim/common.h)
MAJOR := $(word 1,$(subst ., ,$(VERSION)))
MINOR := $(word 2,$(subst ., ,$(VERSION)))

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DOCDIR ?= $(PREFIX)/share/doc/pebblesim
# The Python module (src/python/pebblesim): where Debian's python3 finds
# the modules of a prefix (/usr/local/lib/python3.X/dist-packages)
PYTHON ?= /usr/bin/python3
PYTHON_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYTHONDIR ?= $(PREFIX)/lib/python$(PYTHON_VERSION)/dist-packages

comma := ,
BUILD := build
ifneq ($(SANITIZE),)
BUILD := build/san-$(subst $(comma),-,$(SANITIZE))
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

CC ?= cc
OPT ?= -O2 -g
WARN := -Wall -Wextra -Wpedantic
ifeq ($(WERROR),1)
WARN += -Werror
endif

# pkg-config runs when a recipe needs it, after deps has installed what is missing.
# igraph is linked into the explicit-DAG module alone (XMOD below), which
# the library opens on demand: the binary loads libm and libc.
PKG_CFLAGS = $(shell pkg-config --cflags igraph jansson)
PKG_LIBS = $(shell pkg-config --libs jansson)
IGRAPH_LIBS = $(shell pkg-config --libs igraph)
# The binary links jansson's archive when it is installed: one shared
# library fewer for the dynamic loader at every start (docs/PERFORMANCE.md,
# "Start-up"). libpebblesim.so and the explicit-DAG module keep the shared
# jansson; no JSON value passes between them and the binary.
JANSSON_ARCHIVE = $(shell pkg-config --variable=libdir jansson)/libjansson.a
BIN_LIBS = $(if $(wildcard $(JANSSON_ARCHIVE)),$(JANSSON_ARCHIVE),$(PKG_LIBS))
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS = $(shell pkg-config --libs check)

# -fPIC everywhere: the same objects go into libpebblesim.a and
# libpebblesim.so (the headline run is as fast, docs/PERFORMANCE.md).
# No installation path is compiled in: --help finds the documentation
# from the binary's place, and dags/explicit_load.c the explicit-DAG
# module beside the binary or libpebblesim.so, so make install copies
# build/ as it is.
XMOD_NAME = libpebblesim-explicit.so.$(MAJOR)
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude $(WARN) $(OPT) -fPIC $(SAN_FLAGS) \
	-DPS_EXPLICIT_MODULE_FILE='"$(XMOD_NAME)"' $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
ALL_LDFLAGS = $(SAN_FLAGS) $(LDFLAGS)

# the library; the command line (src/cli/) is linked into the binary, the
# test runner, the fuzz targets and libpebblesim.so, not libpebblesim.a
LIB_SRC := $(wildcard src/*.c dags/*.c strategies/*.c)
LIB_SRC := $(filter-out src/main.c src/cli/% dags/explicit.c,$(LIB_SRC))
CLI_SRC := $(wildcard src/cli/*.c)
TEST_SRC := $(wildcard tests/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
# the page of `pebblesim view` (src/viewer/), compiled into the command line
VIEWER_FILES := src/viewer/page.html src/viewer/viewer.js src/viewer/viewer.css
VIEWER_EMBED = ps_viewer_page=src/viewer/page.html ps_viewer_script=src/viewer/viewer.js \
	ps_viewer_style=src/viewer/viewer.css
VIEWER_OBJ := $(BUILD)/obj/gen/viewer_assets.o
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o) $(VIEWER_OBJ)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
MAIN_OBJ := $(BUILD)/obj/src/main.o
BENCH_OBJ := $(BUILD)/obj/bench/bench.o
XMOD_OBJ := $(BUILD)/obj/dags/explicit.o
GOLDEN_OBJ := $(BUILD)/obj/tests/golden/generate.o
PREFIX_STATE_OBJ := $(BUILD)/obj/tests/browser/prefix_state.o

BIN := $(BUILD)/pebblesim
TESTS := $(BUILD)/pebblesim-tests
BENCH := $(BUILD)/pebblesim-bench
LIB := $(BUILD)/libpebblesim.a
SONAME := libpebblesim.so.$(MAJOR)
SHLIB := $(BUILD)/libpebblesim.so.$(MAJOR).$(MINOR)
XMOD := $(BUILD)/$(XMOD_NAME)
MAN := $(BUILD)/pebblesim.1
GOLDEN := $(BUILD)/pebblesim-golden
PREFIX_STATE := $(BUILD)/pebblesim-prefix-state
FLAGS := $(BUILD)/flags
HEADERS := $(wildcard include/pebblesim/*.h)
DOCS := $(wildcard docs/*.md docs/*.json docs/*.svg docs/*.png)
EXAMPLES := $(wildcard examples/*.jsonl examples/*.graphml)
EXAMPLE_SCRIPTS := $(wildcard examples/*.sh)
API_EXAMPLES := $(wildcard examples/api/*.c)
DIST_EXAMPLES := $(wildcard examples/distributed/*.sh)
PLUGIN_EXAMPLES := examples/plugin/rowfused.c examples/plugin/Makefile
PYTHON_EXAMPLES := $(wildcard examples/python/*.py)
PYTHON_MODULE := $(wildcard src/python/pebblesim/*.py)

HEADLINE := --case II -n 4096 -d 16 -g 3 -M 8192

.PHONY: check-browser browser-deps docs-view docs-plot check-docs-plot docs-tables all run check check-code check-flags check-install check-python check-extending check-full optimal-grid bench golden install uninstall clean deps FORCE
all: $(BIN) $(LIB) $(SHLIB) $(XMOD) $(MAN)

deps:
	@sh scripts/deps.sh

define newline


endef

# The options a build was made with, one per line; rewritten only when they
# change, so that objects are remade exactly when their flags differ.
define FLAGS_TEXT
CC = $(CC)
OPT = $(OPT)
CFLAGS = $(CFLAGS)
LDFLAGS = $(LDFLAGS)
WERROR = $(WERROR)
SANITIZE = $(SANITIZE)
compile = $(ALL_CFLAGS)
link = $(ALL_LDFLAGS)
endef

$(FLAGS): FORCE | deps $(BUILD)
	@printf '%s\n' '$(subst $(newline),' ',$(subst ','\'',$(FLAGS_TEXT)))' > $@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; echo "pebblesim: build options changed: $@"; fi

$(BUILD):
	@mkdir -p $@

$(BUILD)/obj/%.o: %.c $(FLAGS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Istrategies -c $< -o $@

# The numeric loops of runs with values (the direct evaluation, a block's
# products) are written to vectorise: -ftree-vectorize with the dynamic
# cost model, as -O3 has it; IEEE semantics are kept (no -ffast-math), so
# every sum is still added in the order the code states.
# (clang has no -fvect-cost-model: it vectorises at -O2 with its own model).
VECTORIZE := $(if $(findstring clang,$(shell $(CC) --version 2>/dev/null)),-fvectorize,-ftree-vectorize -fvect-cost-model=dynamic)
$(BUILD)/obj/src/values.o: ALL_CFLAGS += $(VECTORIZE) -pthread
# The engine's scans of a block's records (index_uniform) are written the
# same way.
$(BUILD)/obj/src/engine.o: ALL_CFLAGS += $(VECTORIZE)

# the viewer's files as byte arrays (scripts/embed.sh), for any build directory
%/gen/viewer_assets.c: $(VIEWER_FILES) scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh $@ $(VIEWER_EMBED)

$(VIEWER_OBJ): $(BUILD)/gen/viewer_assets.c $(FLAGS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c $(FLAGS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -Istrategies -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The shared library also carries the front end, for ps_script_command
# (script.h: languages that load it, the Python module); it exports the
# ps_ names only (src/libpebblesim.map). libpebblesim.a holds the library
# alone.
$(SHLIB): $(LIB_OBJ) $(CLI_OBJ) src/libpebblesim.map
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=src/libpebblesim.map \
		-o $@ $(LIB_OBJ) $(CLI_OBJ) $(PKG_LIBS) -lm -pthread
	ln -sf $(notdir $@) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/libpebblesim.so

# A plugin (docs/EXTENDING.md) calls the library's ps_ functions from
# the program that loads it: the binary and the test runner export them.
EXPORT_API := '-Wl,--export-dynamic-symbol=ps_*'

# The explicit-DAG module: dags/explicit.c and igraph, the parts of the
# library it calls copied in; it exports its table alone
# (dags/explicit.map), and the library opens it where it lies
# (dags/explicit_load.c). Every program below needs it at run time.
$(XMOD): $(XMOD_OBJ) $(LIB) dags/explicit.map
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(XMOD_NAME) -Wl,--version-script=dags/explicit.map \
		-o $@ $(XMOD_OBJ) $(LIB) $(IGRAPH_LIBS) $(PKG_LIBS) -lm -pthread

$(BIN): $(MAIN_OBJ) $(CLI_OBJ) $(LIB) | $(XMOD)
	$(CC) $(ALL_LDFLAGS) $(EXPORT_API) -o $@ $(MAIN_OBJ) $(CLI_OBJ) $(LIB) $(BIN_LIBS) -lm -pthread

# the tests build igraph graphs of their own (tests/test_explicit.c)
$(TESTS): $(TEST_OBJ) $(CLI_OBJ) $(LIB) | $(XMOD)
	$(CC) $(ALL_LDFLAGS) $(EXPORT_API) -o $@ $(TEST_OBJ) $(CLI_OBJ) $(LIB) $(CHECK_LIBS) $(IGRAPH_LIBS) $(PKG_LIBS) -lm -pthread

$(BENCH): $(BENCH_OBJ) $(LIB) | $(XMOD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(BENCH_OBJ) $(LIB) $(PKG_LIBS) -lm -pthread

$(GOLDEN): $(GOLDEN_OBJ) $(LIB) | $(XMOD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(GOLDEN_OBJ) $(LIB) $(PKG_LIBS) -lm -pthread

$(PREFIX_STATE): $(PREFIX_STATE_OBJ) $(LIB) | $(XMOD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(PREFIX_STATE_OBJ) $(LIB) $(PKG_LIBS) -lm -pthread

run: $(BIN)
	./$(BIN) $(HEADLINE)

# The man page, written by the binary from its command table (src/cli/man.c):
# every command with every option, exit status, files, environment, examples.
$(MAN): $(BIN)
	./$(BIN) __man > $@.new && mv -f $@.new $@

# The plugins tests/test_plugin.c loads: the example, and the test plugin
# in each of its variants (tests/plugins/test_plugin.c). A plugin takes the
# ps_ functions from the program that loads it: no -lpebblesim.
TEST_PLUGIN_VARIANTS := good newer clash chooser empty nosym badtext
TEST_PLUGINS := $(BUILD)/plugins/rowfused.so $(TEST_PLUGIN_VARIANTS:%=$(BUILD)/plugins/test-%.so)
PLUGIN_CFLAGS = -std=c11 $(WARN) $(OPT) -fPIC -shared -Iinclude $(CFLAGS)

$(BUILD)/plugins/rowfused.so: examples/plugin/rowfused.c $(HEADERS) $(FLAGS)
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -o $@ $<

$(BUILD)/plugins/test-%.so: tests/plugins/test_plugin.c $(HEADERS) $(FLAGS)
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -DTEST_PLUGIN_$(shell echo $* | tr a-z A-Z) -o $@ $<

check: check-code
	sh scripts/check-deps-list.sh
	@$(MAKE) --no-print-directory check-python
	@$(MAKE) --no-print-directory check-flags
	@$(MAKE) --no-print-directory check-install
	@$(MAKE) --no-print-directory check-extending
	@$(MAKE) --no-print-directory check-docs-plot

# The part of make check that runs the code: the unit tests (in worker
# processes side by side, PS_TEST_JOBS: tests/main.c), the polynomials
# against NumPy, the sweep CSV read by csv, NumPy and pandas (where
# installed), examples/distributed/. The sanitizer runs of .ci/run run
# this part alone; the rest of make check tests the packaging.
check-code: $(BIN) $(TESTS) $(SHLIB) $(XMOD) $(MAN) $(TEST_PLUGINS)
	PEBBLESIM_BIN=$(abspath $(BIN)) ./$(TESTS)
	/usr/bin/python3 tests/numpy_polynomial.py $(BIN)
	/usr/bin/python3 tests/numpy_causal.py $(BIN)
	/usr/bin/python3 tests/csv_readers.py $(BIN)
	sh scripts/check-distributed.sh $(abspath $(BUILD))

# The Python module from the sources, over this build's libpebblesim.so
# (tests/test_python.py). A sanitizer build's library needs its runtime
# loaded first, which python3 does not: there the module is not tested.
check-python: $(BIN) $(SHLIB) $(TEST_PLUGINS)
ifeq ($(SANITIZE),)
	PEBBLESIM_BIN=$(abspath $(BIN)) PEBBLESIM_LIBRARY=$(abspath $(BUILD))/libpebblesim.so \
		PYTHONPATH=src/python PYTHONDONTWRITEBYTECODE=1 $(PYTHON) tests/test_python.py
else
	@echo "check-python: skipped in a sanitizer build (python3 would load libpebblesim.so before the sanitizer's runtime)"
endif

# make install into build/, examples/plugin built through its Makefile and
# pkg-config and run by the installed binary, the installed Python module
# tested over the installed library, make uninstall (scripts/check-extending.sh)
check-extending: $(BIN) $(LIB) $(SHLIB) $(MAN)
	MAKE='$(MAKE)' CC='$(CC)' PYTHON='$(PYTHON)' SANITIZE='$(SANITIZE)' PREFIX='$(PREFIX)' \
		BINDIR='$(BINDIR)' LIBDIR='$(LIBDIR)' PKGCONFIGDIR='$(PKGCONFIGDIR)' \
		PYTHONDIR='$(PYTHONDIR)' DOCDIR='$(DOCDIR)' \
		sh scripts/check-extending.sh $(abspath $(BUILD))

# one object made in a scratch build directory with the same options, then
# with WERROR flipped: build/flags decides what is remade (scripts/check-build-flags.sh)
check-flags:
	MAKE='$(MAKE)' WERROR='$(WERROR)' sh scripts/check-build-flags.sh $(abspath $(BUILD))

# make install into build/, examples/api built through pkg-config against
# that tree and compared with the binary, make uninstall (scripts/check-install.sh)
check-install: $(BIN) $(LIB) $(SHLIB) $(XMOD) $(MAN)
	MAKE='$(MAKE)' CC='$(CC)' EXAMPLE_CFLAGS='-std=c11 $(WARN) $(OPT) $(SAN_FLAGS) $(CFLAGS)' \
		EXAMPLE_LDFLAGS='$(ALL_LDFLAGS)' PREFIX='$(PREFIX)' BINDIR='$(BINDIR)' \
		LIBDIR='$(LIBDIR)' INCLUDEDIR='$(INCLUDEDIR)' PKGCONFIGDIR='$(PKGCONFIGDIR)' \
		MANDIR='$(MANDIR)' BASHCOMPDIR='$(BASHCOMPDIR)' DOCDIR='$(DOCDIR)' \
		sh scripts/check-install.sh $(abspath $(BUILD))

# the whole strategy grid, DAGs of up to 90 million products included
# the whole grid takes longer than a test's 600 s on two busy cores: Check's
# timeouts are multiplied for it
check-full: $(BIN) $(TESTS)
	CK_TIMEOUT_MULTIPLIER=6 PS_TEST_GRID=full PEBBLESIM_BIN=$(abspath $(BIN)) ./$(TESTS)

# the table of docs/OPTIMAL.md: the built-in grid of attention instances and
# the DAG files, each searched for 60 s in at most 1 GiB (make check runs the
# small cases: tests/test_optimal.c)
optimal-grid: $(BIN)
	./$(BIN) optimal --sweep --time-limit 60 --memory-limit 1G > $(BUILD)/optimal-grid.csv
	for M in 3 4 5; do ./$(BIN) optimal --dag examples/tree.graphml -M $$M --time-limit 60 --memory-limit 1G; done > $(BUILD)/optimal-dags.txt
	for M in 4 5 6; do ./$(BIN) optimal --dag examples/matmul2.graphml -M $$M --time-limit 60 --memory-limit 1G; done >> $(BUILD)/optimal-dags.txt
	@cat $(BUILD)/optimal-grid.csv

# regenerates the golden counts: a deliberate change, reviewed as a diff
golden: $(GOLDEN)
	./$(GOLDEN) tests/golden/io_counts.json

# the tables of the docs that come from runs (docs/scripts/tables.py):
# regenerate them after a change of strategies or of the polynomial
docs-tables: $(BIN)
	/usr/bin/python3 docs/scripts/tables.py ./$(BIN)

# every figure of docs/, by the cost models: the crossover of README.md and
# docs/EXACT.md (approximate attention against FlashAttention), the causal
# crossover at equal accuracy and the I/O per token of decoding against the
# prompt's length (docs/EXACT.md), and the map of the cases of docs/MAP.md. The same pebblesim and gnuplot give the same
# bytes (docs/MAP.md, "Reproducing the figures").
DOCS_PLOT_DIR ?= docs
DOCS_FIGURES := exact-crossover.svg causal-crossover.svg decode-per-token.svg map.svg
docs-plot: $(BIN)
	./$(BIN) sweep -n 1k:64k:x2 -d 16 -g 3 -M 8k --predict -j 1 \
		--strategies flash,keylemma,caseI,generic,colpass,best --refine --plot $(DOCS_PLOT_DIR)/exact-crossover.svg
	./$(BIN) frontier --causal -n 1k:1M:x4 -d 16 -M 8k --epsilon 1e-2 --bound measured \
		--plot $(DOCS_PLOT_DIR)/causal-crossover.svg
	./$(BIN) sweep --causal --decode 1k:1M:x2 -n 1048640 -d 16 -g 3 -M 8k --predict -j 1 \
		--strategies recurrent-decode,flash-decode --baseline flash-decode --plot $(DOCS_PLOT_DIR)/decode-per-token.svg
	./$(BIN) map -n 4096 -d 16 -g 1:6 -M 64:1M:x4 --plot $(DOCS_PLOT_DIR)/map.svg

# the figures drawn again into build/, each equal to docs/'s but for the
# line naming gnuplot's version
check-docs-plot: $(BIN)
	rm -rf $(BUILD)/docs-plot && mkdir -p $(BUILD)/docs-plot
	@$(MAKE) --no-print-directory docs-plot DOCS_PLOT_DIR=$(BUILD)/docs-plot >/dev/null
	@for f in $(DOCS_FIGURES); do \
		diff -q -I '^<desc>Produced by GNUPLOT' docs/$$f $(BUILD)/docs-plot/$$f >/dev/null || \
		{ echo "docs/$$f is not what make docs-plot draws (run it and review the diff)"; exit 1; }; done
	@echo "check-docs-plot: $(DOCS_FIGURES) as make docs-plot draws them"

# The page of `pebblesim view` in a real browser (tests/browser/view_test.py):
# Debian's chromium and chromedriver, headless, installed by scripts/deps.sh
# for this target only; .ci/run runs it
check-browser: $(BIN) $(PREFIX_STATE) | browser-deps
	/usr/bin/python3 tests/browser/view_test.py $(abspath $(BIN)) $(abspath $(PREFIX_STATE)) \
		$(abspath $(BUILD))/browser

browser-deps:
	@PEBBLESIM_BROWSER=1 sh scripts/deps.sh

# docs/viewer.png: the headline's page at step 6013, in the middle of
# accumulating N (docs/VIEWER.md); chromium's --screenshot of the page
VIEWER_STEP := 6013
docs-view: $(BIN) | browser-deps
	@mkdir -p $(BUILD)/docs-view
	cd $(BUILD)/docs-view && ../pebblesim $(HEADLINE) --trace t.jsonl > /dev/null && \
		../pebblesim view t.jsonl -o view.html
	chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=1400,1260 --virtual-time-budget=30000 \
		--screenshot=$(abspath docs/viewer.png) \
		'file://$(abspath $(BUILD))/docs-view/view.html#step=$(VIEWER_STEP)'

# make bench BASELINE=path/to/pebblesim: rows marked for it also timed
# with that binary, in the same rounds (bench/bench.c)
BENCH_RUNS ?= 5
# beside it: jq parsing the headline's trace, NumPy evaluating its values,
# and an empty dynamically linked program starting; valgrind's callgrind
# counting the instructions of the headline's "cheaper strategy" line
# (alone: PS_BENCH_VALGRIND=$(command -v valgrind) build/pebblesim-bench
# --report-cost build/pebblesim); every table stamped
# with the commit measured (-dirty: with changes not committed)
BENCH_EMPTY := $(BUILD)/bench-empty
BENCH_COMMIT = $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
$(BENCH_EMPTY): bench/empty.c | $(BUILD)
	$(CC) -O2 -o $@ bench/empty.c
bench: $(BIN) $(BENCH) $(BENCH_EMPTY)
	PS_BENCH_COMMIT='$(BENCH_COMMIT)' PS_BENCH_JQ='$(shell command -v jq)' \
	PS_BENCH_PYTHON=/usr/bin/python3 PS_BENCH_EMPTY='$(abspath $(BENCH_EMPTY))' \
	PS_BENCH_VALGRIND='$(shell command -v valgrind)' \
	./$(BENCH) $(abspath $(BIN)) $(BUILD)/bench.json $(BENCH_RUNS) $(BASELINE)

# pebblesim.pc: libdir and includedir relative to prefix where they lie under it
PC_LIBDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
PC_INCLUDEDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))

# README.md, docs/ and examples/ keep their places, so README's links resolve
install: $(BIN) $(LIB) $(SHLIB) $(XMOD) $(MAN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/pebblesim $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR)/examples/api \
		$(DESTDIR)$(DOCDIR)/examples/distributed
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/pebblesim
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libpebblesim.a
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/$(notdir $(SHLIB))
	install -m 755 $(XMOD) $(DESTDIR)$(LIBDIR)/$(XMOD_NAME)
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libpebblesim.so
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/pebblesim/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(PC_LIBDIR)|' -e 's|@RPATH@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(PC_INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		pebblesim.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/pebblesim.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/pebblesim.pc
	install -m 644 $(MAN) $(DESTDIR)$(MANDIR)/man1/pebblesim.1
	install -m 644 scripts/pebblesim.bash-completion $(DESTDIR)$(BASHCOMPDIR)/pebblesim
	install -m 644 README.md LICENSE CITATION.cff $(DESTDIR)$(DOCDIR)/
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/docs/
	install -m 644 $(EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/
	install -m 755 $(EXAMPLE_SCRIPTS) $(DESTDIR)$(DOCDIR)/examples/
	install -m 644 $(API_EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/api/
	install -m 755 $(DIST_EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/distributed/
	install -d $(DESTDIR)$(DOCDIR)/examples/plugin $(DESTDIR)$(DOCDIR)/examples/python \
		$(DESTDIR)$(PYTHONDIR)/pebblesim
	install -m 644 $(PLUGIN_EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/plugin/
	install -m 755 $(PYTHON_EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/python/
	install -m 644 $(PYTHON_MODULE) $(DESTDIR)$(PYTHONDIR)/pebblesim/
	$(PYTHON) -c 'import sys; print("# written by make install: the directory of libpebblesim.so\nLIBDIR = %r" % sys.argv[1])' \
		'$(LIBDIR)' > $(DESTDIR)$(PYTHONDIR)/pebblesim/_install.py
	chmod 644 $(DESTDIR)$(PYTHONDIR)/pebblesim/_install.py

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/pebblesim
	rm -f $(DESTDIR)$(LIBDIR)/libpebblesim.a $(DESTDIR)$(LIBDIR)/libpebblesim.so \
		$(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(notdir $(SHLIB)) \
		$(DESTDIR)$(LIBDIR)/$(XMOD_NAME)
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/pebblesim/,$(notdir $(HEADERS)))
	rmdir $(DESTDIR)$(INCLUDEDIR)/pebblesim 2>/dev/null || true
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/pebblesim.pc
	rm -f $(DESTDIR)$(MANDIR)/man1/pebblesim.1
	rm -f $(DESTDIR)$(BASHCOMPDIR)/pebblesim
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,README.md LICENSE CITATION.cff)
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/docs/,$(notdir $(DOCS)))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(EXAMPLES) $(EXAMPLE_SCRIPTS) $(API_EXAMPLES) $(DIST_EXAMPLES))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(PLUGIN_EXAMPLES) $(PYTHON_EXAMPLES))
	rm -f $(addprefix $(DESTDIR)$(PYTHONDIR)/pebblesim/,$(notdir $(PYTHON_MODULE)) _install.py)
	rm -rf $(DESTDIR)$(PYTHONDIR)/pebblesim/__pycache__
	rmdir $(DESTDIR)$(PYTHONDIR)/pebblesim 2>/dev/null || true
	rmdir $(DESTDIR)$(DOCDIR)/examples/plugin $(DESTDIR)$(DOCDIR)/examples/python 2>/dev/null || true
	rmdir $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR)/examples/api \
		$(DESTDIR)$(DOCDIR)/examples/distributed \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) 2>/dev/null || true

clean:
	rm -rf build

# this build directory's dependencies only: another build directory may be
# half-way through writing its own (.ci/run builds them side by side)
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---- fuzzing: libFuzzer targets of tests/fuzz/ (clang only; docs/SECURITY.md)
#   make fuzz                    build build/fuzz/fuzz-{trace,dag,cli,plot,plotscript,npy}
#   make fuzz-smoke              run each for FUZZ_SMOKE_SECONDS (20) seconds
#   make fuzz FUZZ_SECONDS=600   build, then run each that long
# New inputs go to build/fuzz/corpus-TARGET; the seeds in tests/fuzz/TARGET
# are only read, with the words of tests/fuzz/TARGET.dict where there is one. A crash leaves build/fuzz/crash-* and fails the target.
FUZZ_CC ?= clang
FUZZ_BUILD := build/fuzz
FUZZ_TARGETS := trace dag cli plot plotscript npy
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Istrategies $(WARN) -O1 -g \
	$(FUZZ_SAN) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) -MMD -MP
# the fuzz targets link the explicit-DAG module's code and igraph in,
# instead of its loader
FUZZ_SRC := $(filter-out dags/explicit_load.c,$(LIB_SRC)) dags/explicit.c $(CLI_SRC)
FUZZ_LIB_OBJ := $(FUZZ_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) $(FUZZ_BUILD)/obj/gen/viewer_assets.o
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz-%)
FUZZ_RUN = for t in $(FUZZ_TARGETS); do \
	mkdir -p $(FUZZ_BUILD)/corpus-$$t && dict= && \
	if [ -f tests/fuzz/$$t.dict ]; then dict=-dict=tests/fuzz/$$t.dict; fi && \
	./$(FUZZ_BUILD)/fuzz-$$t -max_total_time=$(1) $(2) $$dict -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_BUILD)/ $(FUZZ_BUILD)/corpus-$$t tests/fuzz/$$t \
		|| exit 1; done

.PHONY: fuzz fuzz-smoke fuzz-deps
fuzz-deps:
	@PEBBLESIM_FUZZ=1 sh scripts/deps.sh

$(FUZZ_BUILD)/obj/%.o: %.c | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/obj/gen/viewer_assets.o: $(FUZZ_BUILD)/gen/viewer_assets.c | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/fuzz-%: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(IGRAPH_LIBS) $(PKG_LIBS) -lm -pthread

fuzz: $(FUZZ_BINS)
ifneq ($(FUZZ_SECONDS),)
	$(call FUZZ_RUN,$(FUZZ_SECONDS))
endif

# the smoke run starts from a fixed seed, so that CI explores the same
# inputs from one run to the next; `make fuzz FUZZ_SECONDS=...` varies them
FUZZ_SMOKE_SEED ?= 1
fuzz-smoke: $(FUZZ_BINS)
	$(call FUZZ_RUN,$(FUZZ_SMOKE_SECONDS),-seed=$(FUZZ_SMOKE_SEED))
# the fuzz build's dependency files, when it is the one being made
ifneq ($(filter fuzz% $(FUZZ_BUILD)/%,$(MAKECMDGOALS)),)
-include $(shell find $(FUZZ_BUILD)/obj -name '*.d' 2>/dev/null)
endif
# the objects of the pattern rules above are kept, not rebuilt each time
.SECONDARY: $(FUZZ_LIB_OBJ) $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o)
