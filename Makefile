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

$(BIN): $(MAIN_OBJ) $(CLI_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

$(TESTS): $(TEST_OBJ) $(CLI_OBJ) $(LIB)
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
