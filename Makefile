# pebblesim: build, check, bench, install.
#
#   make            build build/pebblesim
#   make run        build and run the representative job (the README's first command)
#   make check      build and run every test (the README's second command)
#   make bench      time representative runs; writes build/bench.json
#   make golden     regenerate tests/golden/io_counts.json (review its diff)
#   make check-full the whole strategy grid (longer than make check)
#   make install    PREFIX=/usr/local DESTDIR=
#   SANITIZE=address,undefined make check   sanitizer build in its own directory
#   WERROR=1 make check                     warnings are errors (CI)
#
# Missing Debian packages are installed by scripts/deps.sh before building.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
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

ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude $(WARN) $(OPT) $(SAN_FLAGS) $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
ALL_LDFLAGS = $(SAN_FLAGS) $(LDFLAGS)

LIB_SRC := $(wildcard src/*.c dags/*.c strategies/*.c)
LIB_SRC := $(filter-out src/main.c,$(LIB_SRC))
TEST_SRC := $(wildcard tests/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
MAIN_OBJ := $(BUILD)/obj/src/main.o
BENCH_OBJ := $(BUILD)/obj/bench/bench.o
GOLDEN_OBJ := $(BUILD)/obj/tests/golden/generate.o

BIN := $(BUILD)/pebblesim
TESTS := $(BUILD)/pebblesim-tests
BENCH := $(BUILD)/pebblesim-bench
LIB := $(BUILD)/libpebblesim.a
GOLDEN := $(BUILD)/pebblesim-golden

HEADLINE := --case II -n 4096 -d 16 -g 3 -M 8192

.PHONY: all run check check-full bench golden install clean deps
all: $(BIN)

deps:
	@sh scripts/deps.sh

$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Istrategies -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -Istrategies -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(MAIN_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

$(TESTS): $(TEST_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(PKG_LIBS) -lm

$(BENCH): $(BENCH_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

$(GOLDEN): $(GOLDEN_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

run: $(BIN)
	./$(BIN) $(HEADLINE)

check: $(BIN) $(TESTS)
	PEBBLESIM_BIN=$(abspath $(BIN)) ./$(TESTS)

# the whole strategy grid, DAGs of up to 90 million products included
check-full: $(BIN) $(TESTS)
	PS_TEST_GRID=full PEBBLESIM_BIN=$(abspath $(BIN)) ./$(TESTS)

# regenerates the golden counts: a deliberate change, reviewed as a diff
golden: $(GOLDEN)
	./$(GOLDEN) tests/golden/io_counts.json

bench: $(BIN) $(BENCH)
	./$(BENCH) $(abspath $(BIN)) $(BUILD)/bench.json

install: $(BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DOCDIR)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/pebblesim
	install -m 644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)

# ---- fuzzing: libFuzzer targets of tests/fuzz/ (clang only; docs/SECURITY.md)
#   make fuzz                    build build/fuzz/fuzz-{trace,dag,cli}
#   make fuzz-smoke              run each for FUZZ_SMOKE_SECONDS (20) seconds
#   make fuzz FUZZ_SECONDS=600   build, then run each that long
# New inputs go to build/fuzz/corpus-TARGET; the seeds in tests/fuzz/TARGET
# are only read. A crash leaves build/fuzz/crash-* and fails the target.
FUZZ_CC ?= clang
FUZZ_BUILD := build/fuzz
FUZZ_TARGETS := trace dag cli
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Istrategies $(WARN) -O1 -g \
	$(FUZZ_SAN) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) -MMD -MP
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz-%)
FUZZ_RUN = for t in $(FUZZ_TARGETS); do \
	mkdir -p $(FUZZ_BUILD)/corpus-$$t && \
	./$(FUZZ_BUILD)/fuzz-$$t -max_total_time=$(1) -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_BUILD)/ $(FUZZ_BUILD)/corpus-$$t tests/fuzz/$$t \
		|| exit 1; done

.PHONY: fuzz fuzz-smoke fuzz-deps
fuzz-deps:
	@PEBBLESIM_FUZZ=1 sh scripts/deps.sh

$(FUZZ_BUILD)/obj/%.o: %.c | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/fuzz-%: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) -lm

fuzz: $(FUZZ_BINS)
ifneq ($(FUZZ_SECONDS),)
	$(call FUZZ_RUN,$(FUZZ_SECONDS))
endif

fuzz-smoke: $(FUZZ_BINS)
	$(call FUZZ_RUN,$(FUZZ_SMOKE_SECONDS))
# the objects of the pattern rules above are kept, not rebuilt each time
.SECONDARY: $(FUZZ_LIB_OBJ) $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o)
