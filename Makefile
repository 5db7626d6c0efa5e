# pebblesim: build, check, bench, install.
#
#   make            build build/pebblesim, libpebblesim.a, libpebblesim.so and the man page
#   make run        build and run the representative job (the README's first command)
#   make check      build and run every test (the README's second command) and
#                   the NumPy check of the polynomials (tests/numpy_polynomial.py), then
#                   check that build options are tracked (check-flags), and
#                   install into build/, build examples/api against that tree
#                   through pkg-config, run it and uninstall (check-install)
#   make bench      time representative runs; writes build/bench.json
#   make golden     regenerate tests/golden/io_counts.json (review its diff)
#   make docs-tables regenerate the tables of docs/VALUES.md and docs/EXACT.md from runs (docs/scripts/tables.py)
#   make docs-plot  regenerate docs/exact-crossover.svg (docs/EXACT.md) with gnuplot
#   make check-full the whole strategy grid (longer than make check)
#   make optimal-grid the exact optima of docs/OPTIMAL.md's table, 60 s an instance
#   make install    PREFIX=/usr/local DESTDIR=: the binary, the static and shared
#                   libraries, the headers, pebblesim.pc, the man page, the bash
#                   completion, the docs and examples
#   make uninstall  PREFIX=/usr/local DESTDIR=: removes what install installed
#   make clean      removes build/
#   SANITIZE=address,undefined make check   sanitizer build in its own directory
#   WERROR=1 make check                     warnings are errors (CI)
#
# The build options are tracked: build/flags holds CC, OPT, CFLAGS, LDFLAGS,
# WERROR, SANITIZE, DOCDIR and the effective compile and link flags; every
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
PKG_CFLAGS = $(shell pkg-config --cflags igraph jansson)
PKG_LIBS = $(shell pkg-config --libs igraph jansson)
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS = $(shell pkg-config --libs check)

# -fPIC everywhere: the same objects go into libpebblesim.a and
# libpebblesim.so (the headline run is as fast, docs/PERFORMANCE.md).
# PS_DOCDIR: where --help says the documentation is installed.
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude $(WARN) $(OPT) -fPIC $(SAN_FLAGS) \
	-DPS_DOCDIR='"$(DOCDIR)"' $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
ALL_LDFLAGS = $(SAN_FLAGS) $(LDFLAGS)

# the library; the command line (src/cli/, src/main.c) is linked into the
# binary and the test runner only
LIB_SRC := $(wildcard src/*.c dags/*.c strategies/*.c)
LIB_SRC := $(filter-out src/main.c src/cli/%,$(LIB_SRC))
CLI_SRC := $(wildcard src/cli/*.c)
TEST_SRC := $(wildcard tests/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
MAIN_OBJ := $(BUILD)/obj/src/main.o
BENCH_OBJ := $(BUILD)/obj/bench/bench.o
GOLDEN_OBJ := $(BUILD)/obj/tests/golden/generate.o

BIN := $(BUILD)/pebblesim
TESTS := $(BUILD)/pebblesim-tests
BENCH := $(BUILD)/pebblesim-bench
LIB := $(BUILD)/libpebblesim.a
SONAME := libpebblesim.so.$(MAJOR)
SHLIB := $(BUILD)/libpebblesim.so.$(MAJOR).$(MINOR)
MAN := $(BUILD)/pebblesim.1
GOLDEN := $(BUILD)/pebblesim-golden
FLAGS := $(BUILD)/flags
HEADERS := $(wildcard include/pebblesim/*.h)
DOCS := $(wildcard docs/*.md docs/*.json docs/*.svg)
EXAMPLES := $(wildcard examples/*.jsonl examples/*.graphml)
EXAMPLE_SCRIPTS := $(wildcard examples/*.sh)
API_EXAMPLES := $(wildcard examples/api/*.c)

HEADLINE := --case II -n 4096 -d 16 -g 3 -M 8192

.PHONY: docs-plot docs-tables all run check check-flags check-install check-full optimal-grid bench golden install uninstall clean deps FORCE
all: $(BIN) $(LIB) $(SHLIB) $(MAN)

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
DOCDIR = $(DOCDIR)
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

$(BUILD)/obj/tests/%.o: tests/%.c $(FLAGS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -Istrategies -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SHLIB): $(LIB_OBJ)
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(SONAME) -o $@ $^ $(PKG_LIBS) -lm -pthread
	ln -sf $(notdir $@) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/libpebblesim.so

$(BIN): $(MAIN_OBJ) $(CLI_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -pthread

$(TESTS): $(TEST_OBJ) $(CLI_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(PKG_LIBS) -lm -pthread

$(BENCH): $(BENCH_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -pthread

$(GOLDEN): $(GOLDEN_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -pthread

run: $(BIN)
	./$(BIN) $(HEADLINE)

# The man page: help2man reads `pebblesim --help` and `--version`, through a
# script that only puts the usage lines in the form it takes for a synopsis.
$(MAN): $(BIN) scripts/help2man-filter.sh | deps
	@mkdir -p $(BUILD)/man
	install -m 755 scripts/help2man-filter.sh $(BUILD)/man/pebblesim
	PEBBLESIM_BIN=$(abspath $(BIN)) help2man --no-info --section=1 \
		--name='the red-blue pebble game on the DAG of approximate attention' \
		--source='pebblesim $(VERSION)' --manual='pebblesim manual' \
		--output=$@ $(BUILD)/man/pebblesim

check: $(BIN) $(TESTS) $(SHLIB) $(MAN)
	PEBBLESIM_BIN=$(abspath $(BIN)) ./$(TESTS)
	/usr/bin/python3 tests/numpy_polynomial.py $(BIN)
	@$(MAKE) --no-print-directory check-flags
	@$(MAKE) --no-print-directory check-install

# one object made in a scratch build directory with the same options, then
# with WERROR flipped: build/flags decides what is remade (scripts/check-build-flags.sh)
check-flags:
	MAKE='$(MAKE)' WERROR='$(WERROR)' sh scripts/check-build-flags.sh $(abspath $(BUILD))

# make install into build/, examples/api built through pkg-config against
# that tree and compared with the binary, make uninstall (scripts/check-install.sh)
check-install: $(BIN) $(LIB) $(SHLIB) $(MAN)
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

# the crossover of docs/EXACT.md: approximate attention against FlashAttention
docs-plot: $(BIN)
	./$(BIN) sweep -n 1k:64k:x2 -d 16 -g 3 -M 8k --predict \
		--strategies flash,keylemma,caseI,generic,colpass --plot docs/exact-crossover.svg

bench: $(BIN) $(BENCH)
	./$(BENCH) $(abspath $(BIN)) $(BUILD)/bench.json

# pebblesim.pc: libdir and includedir relative to prefix where they lie under it
PC_LIBDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
PC_INCLUDEDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))

# README.md, docs/ and examples/ keep their places, so README's links resolve
install: $(BIN) $(LIB) $(SHLIB) $(MAN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/pebblesim $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR)/examples/api
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/pebblesim
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libpebblesim.a
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/$(notdir $(SHLIB))
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libpebblesim.so
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/pebblesim/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(PC_LIBDIR)|' \
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

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/pebblesim
	rm -f $(DESTDIR)$(LIBDIR)/libpebblesim.a $(DESTDIR)$(LIBDIR)/libpebblesim.so \
		$(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(notdir $(SHLIB))
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/pebblesim/,$(notdir $(HEADERS)))
	rmdir $(DESTDIR)$(INCLUDEDIR)/pebblesim 2>/dev/null || true
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/pebblesim.pc
	rm -f $(DESTDIR)$(MANDIR)/man1/pebblesim.1
	rm -f $(DESTDIR)$(BASHCOMPDIR)/pebblesim
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,README.md LICENSE CITATION.cff)
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/docs/,$(notdir $(DOCS)))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(EXAMPLES) $(EXAMPLE_SCRIPTS) $(API_EXAMPLES))
	rmdir $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR)/examples/api \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) 2>/dev/null || true

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)

# ---- fuzzing: libFuzzer targets of tests/fuzz/ (clang only; docs/SECURITY.md)
#   make fuzz                    build build/fuzz/fuzz-{trace,dag,cli,plot,npy}
#   make fuzz-smoke              run each for FUZZ_SMOKE_SECONDS (20) seconds
#   make fuzz FUZZ_SECONDS=600   build, then run each that long
# New inputs go to build/fuzz/corpus-TARGET; the seeds in tests/fuzz/TARGET
# are only read. A crash leaves build/fuzz/crash-* and fails the target.
FUZZ_CC ?= clang
FUZZ_BUILD := build/fuzz
FUZZ_TARGETS := trace dag cli plot npy
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Istrategies $(WARN) -O1 -g \
	$(FUZZ_SAN) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) -MMD -MP
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) $(CLI_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz-%)
FUZZ_RUN = for t in $(FUZZ_TARGETS); do \
	mkdir -p $(FUZZ_BUILD)/corpus-$$t && \
	./$(FUZZ_BUILD)/fuzz-$$t -max_total_time=$(1) $(2) -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_BUILD)/ $(FUZZ_BUILD)/corpus-$$t tests/fuzz/$$t \
		|| exit 1; done

.PHONY: fuzz fuzz-smoke fuzz-deps
fuzz-deps:
	@PEBBLESIM_FUZZ=1 sh scripts/deps.sh

$(FUZZ_BUILD)/obj/%.o: %.c | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/fuzz-%: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) -lm -pthread

fuzz: $(FUZZ_BINS)
ifneq ($(FUZZ_SECONDS),)
	$(call FUZZ_RUN,$(FUZZ_SECONDS))
endif

# the smoke run starts from a fixed seed, so that CI explores the same
# inputs from one run to the next; `make fuzz FUZZ_SECONDS=...` varies them
FUZZ_SMOKE_SEED ?= 1
fuzz-smoke: $(FUZZ_BINS)
	$(call FUZZ_RUN,$(FUZZ_SMOKE_SECONDS),-seed=$(FUZZ_SMOKE_SEED))
# the objects of the pattern rules above are kept, not rebuilt each time
.SECONDARY: $(FUZZ_LIB_OBJ) $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o)
