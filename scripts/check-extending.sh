#!/bin/sh
# make check-extending (part of make check): a strategy of one's own, as
# a user of the installed tree writes one (docs/EXTENDING.md).
#
#   1. make install DESTDIR=BUILD/extending-test/root;
#   2. the installed examples/plugin built with its Makefile, through
#      pkg-config for pebblesim in that tree, and run by the installed
#      binary through run, compare and list: valid, its cost model agreeing;
#   3. the installed Python module (PYTHONDIR) over the installed
#      libpebblesim.so: tests/test_python.py, and the installed
#      examples/python script (not in a sanitizer build: python3 cannot
#      load the sanitizer's runtime first);
#   4. make uninstall.
#
#   check-extending.sh BUILD_DIR   (run by the Makefile, which sets MAKE, CC,
#   PYTHON, SANITIZE and the installation directories)
set -eu

build=$1
stage=$build/extending-test
root=$stage/root
fail() {
	echo "check-extending: $*" >&2
	exit 1
}

rm -rf "$stage"
mkdir -p "$stage"
$MAKE --no-print-directory install DESTDIR="$root" >"$stage/install.log" 2>&1 ||
	{ cat "$stage/install.log" >&2; fail "make install DESTDIR=$root failed"; }
bin=$root$BINDIR/pebblesim

# ---- 2. the plugin, built as its Makefile says ------------------------------
cp -r "$root$DOCDIR/examples/plugin" "$stage/plugin"
PKG_CONFIG_PATH="$root$PKGCONFIGDIR" PKG_CONFIG_SYSROOT_DIR="$root" \
	$MAKE --no-print-directory -C "$stage/plugin" CC="$CC" CFLAGS="-O2 -Werror" >"$stage/plugin.log" 2>&1 ||
	{ cat "$stage/plugin.log" >&2; fail "examples/plugin does not build with its Makefile"; }
plugin=$stage/plugin/rowfused.so
"$bin" --plugin "$plugin" --strategy rowfused -n 64 -d 4 -g 2 -M 64 >"$stage/run.txt" ||
	fail "pebblesim --plugin rowfused.so --strategy rowfused failed: $(cat "$stage/run.txt")"
grep -q '^valid  *yes' "$stage/run.txt" || fail "rowfused: not valid"
grep -q '(cost model agrees)' "$stage/run.txt" || fail "rowfused: its cost model disagrees"
"$bin" compare --plugin "$plugin" -n 32 -d 4 -g 2 -M 64 >"$stage/compare.txt" ||
	fail "pebblesim compare --plugin failed"
grep -q '^rowfused ' "$stage/compare.txt" || fail "compare --plugin has no rowfused row"
"$bin" list --plugin "$plugin" | grep -q '^rowfused ' || fail "list --plugin does not list rowfused"

# ---- 3. the Python module, installed ----------------------------------------
grep -qx "LIBDIR = '$LIBDIR'" "$root$PYTHONDIR/pebblesim/_install.py" ||
	fail "$PYTHONDIR/pebblesim/_install.py does not name $LIBDIR"
if [ -z "$SANITIZE" ]; then
	PYTHONPATH="$root$PYTHONDIR" PEBBLESIM_LIBRARY="$root$LIBDIR/libpebblesim.so" \
		PEBBLESIM_BIN="$bin" PEBBLESIM_TEST_PLUGIN="$plugin" PYTHONDONTWRITEBYTECODE=1 \
		"$PYTHON" tests/test_python.py >"$stage/python.log" 2>&1 ||
		{ cat "$stage/python.log" >&2; fail "tests/test_python.py fails on the installed module"; }
	grep -q "^OK" "$stage/python.log" || fail "tests/test_python.py: no OK"
	PYTHONPATH="$root$PYTHONDIR" PEBBLESIM_LIBRARY="$root$LIBDIR/libpebblesim.so" \
		PYTHONDONTWRITEBYTECODE=1 "$PYTHON" -c \
		'import pebblesim, sys; sys.exit(not pebblesim.__file__.startswith(sys.argv[1]))' \
		"$root$PYTHONDIR/" || fail "python3 does not import pebblesim from $PYTHONDIR"
	PYTHONPATH="$root$PYTHONDIR" PEBBLESIM_LIBRARY="$root$LIBDIR/libpebblesim.so" \
		PYTHONDONTWRITEBYTECODE=1 "$PYTHON" "$root$DOCDIR/examples/python/row_blocks.py" \
		-n 64 -d 4 -g 2 -M 128 >"$stage/example.txt" ||
		fail "examples/python/row_blocks.py failed: $(cat "$stage/example.txt")"
	grep -q '(agrees)' "$stage/example.txt" || fail "row_blocks.py: its cost model disagrees"
fi

# ---- 4. make uninstall ------------------------------------------------------
$MAKE --no-print-directory uninstall DESTDIR="$root" >"$stage/uninstall.log" 2>&1 ||
	{ cat "$stage/uninstall.log" >&2; fail "make uninstall DESTDIR=$root failed"; }
left=$(find "$root" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
rm -rf "$stage"
echo "check-extending: examples/plugin through pkg-config, the Python module installed, uninstall: ok"
