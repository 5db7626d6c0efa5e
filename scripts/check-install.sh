#!/bin/sh
# make check-install (part of make check): the installed tree, used as a
# user of the library would use it.
#
#   1. make install DESTDIR=BUILD/install-test/root, and every file in its place:
#      the binary, libpebblesim.a, libpebblesim.so.MAJOR.MINOR with its soname
#      and links, the explicit-DAG module libpebblesim-explicit.so.MAJOR
#      (the binary does not load igraph, and reads and writes explicit
#      DAGs through the module all the same), the headers, pebblesim.pc, the man page, the bash
#      completion, README.md, docs/ and examples/ with every relative link
#      of the documentation resolving;
#   2. examples/api/attention_counts.c compiled with the flags pkg-config gives
#      for pebblesim from that tree (PKG_CONFIG_PATH, and PKG_CONFIG_SYSROOT_DIR
#      as when building against a staged root), linked with the shared library,
#      run, and its counts compared with the installed binary's --json; a
#      program of the same build reads an explicit DAG through the shared
#      library, which finds the module beside it;
#   3. the completion asked for commands, options and strategy names;
#   4. make install PREFIX=... into a prefix of its own remakes nothing under
#      build/ and leaves build/pebblesim --help as it was, and the example
#      built with pkg-config's flags alone runs without LD_LIBRARY_PATH;
#   5. make uninstall leaves no file behind.
#
#   check-install.sh BUILD_DIR   (run by the Makefile, which sets MAKE, CC,
#   EXAMPLE_CFLAGS, EXAMPLE_LDFLAGS and the installation directories)
set -eu

build=$1
stage=$build/install-test
root=$stage/root
fail() {
	echo "check-install: $*" >&2
	exit 1
}

rm -rf "$stage"
mkdir -p "$stage"
$MAKE --no-print-directory install DESTDIR="$root" >"$stage/install.log" 2>&1 ||
	{ cat "$stage/install.log" >&2; fail "make install DESTDIR=$root failed"; }

# ---- 1. the layout --------------------------------------------------------
version=$(sed -n 's/^.define PS_VERSION "\(.*\)"$/\1/p' include/pebblesim/common.h)
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
[ -x "$root$BINDIR/pebblesim" ] || fail "no executable $BINDIR/pebblesim"
for f in "$LIBDIR/libpebblesim.a" "$LIBDIR/libpebblesim.so.$major.$minor" \
	"$PKGCONFIGDIR/pebblesim.pc" "$MANDIR/man1/pebblesim.1" \
	"$BASHCOMPDIR/pebblesim" "$DOCDIR/README.md" "$DOCDIR/LICENSE" \
	"$DOCDIR/CITATION.cff"; do
	[ -f "$root$f" ] || fail "$f not installed"
done
for h in include/pebblesim/*.h; do
	[ -f "$root$INCLUDEDIR/pebblesim/${h##*/}" ] || fail "$INCLUDEDIR/pebblesim/${h##*/} not installed"
done
for d in docs/*.md examples/*.* examples/api/*.c; do
	[ -f "$root$DOCDIR/$d" ] || fail "$DOCDIR/$d not installed"
done
[ "$(readlink "$root$LIBDIR/libpebblesim.so.$major")" = "libpebblesim.so.$major.$minor" ] ||
	fail "$LIBDIR/libpebblesim.so.$major does not point to libpebblesim.so.$major.$minor"
[ "$(readlink "$root$LIBDIR/libpebblesim.so")" = "libpebblesim.so.$major" ] ||
	fail "$LIBDIR/libpebblesim.so does not point to libpebblesim.so.$major"
soname=$(readelf -d "$root$LIBDIR/libpebblesim.so.$major.$minor" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libpebblesim.so.$major" ] || fail "soname is '$soname', not libpebblesim.so.$major"
# igraph only in the module, which the binary opens where it is installed
[ -f "$root$LIBDIR/libpebblesim-explicit.so.$major" ] || fail "$LIBDIR/libpebblesim-explicit.so.$major not installed"
! readelf -d "$root$BINDIR/pebblesim" | grep -q 'NEEDED.*igraph' || fail "$BINDIR/pebblesim is linked with igraph"
readelf -d "$root$LIBDIR/libpebblesim-explicit.so.$major" | grep -q 'NEEDED.*igraph' ||
	fail "the explicit-DAG module is not linked with igraph"
"$root$BINDIR/pebblesim" run --dag "$root$DOCDIR/examples/tree.graphml" -M 5 >"$stage/tree.txt" ||
	fail "the installed pebblesim cannot run examples/tree.graphml"
grep -q '^valid  *yes' "$stage/tree.txt" || fail "run --dag examples/tree.graphml: not valid"
"$root$BINDIR/pebblesim" dag -n 4 -d 2 -g 1 --format edgelist >"$stage/dag.txt" ||
	fail "the installed pebblesim cannot write a DAG"
[ -s "$stage/dag.txt" ] || fail "the installed pebblesim wrote an empty DAG"
grep -qx "prefix=$PREFIX" "$root$PKGCONFIGDIR/pebblesim.pc" || fail "pebblesim.pc: prefix is not $PREFIX"
grep -qx "Version: $version" "$root$PKGCONFIGDIR/pebblesim.pc" || fail "pebblesim.pc: version is not $version"
grep -qx "version: $version" "$root$DOCDIR/CITATION.cff" || fail "CITATION.cff: version is not PS_VERSION = $version"
grep -q '^\.SH SYNOPSIS' "$root$MANDIR/man1/pebblesim.1" || fail "the man page has no SYNOPSIS"
grep -q 'strategy' "$root$MANDIR/man1/pebblesim.1" || fail "the man page lacks the options"
# every relative link of the installed documentation resolves
for page in "$root$DOCDIR/README.md" "$root$DOCDIR"/docs/*.md; do
	for link in $(grep -o '](\([^)#]*\)' "$page" | sed 's/^](//' | grep -v '^[a-z]*:'); do
		[ -e "$(dirname "$page")/$link" ] || fail "${page#"$root"}: link '$link' does not resolve"
	done
done
# the documentation line of --help names the directory installed beside it
docs=$(cd "$root$DOCDIR" && pwd -P)
"$root$BINDIR/pebblesim" --help | grep -qF "Documentation: README.md and docs/, in $docs." ||
	fail "pebblesim --help does not name $docs"

# ---- 2. a program of one's own, through pkg-config --------------------------
# A staged root holds the package; the dependencies it needs from the
# system are linked into it at their own paths, as a sysroot would hold them.
links=""
for dir in $(pkg-config --cflags-only-I --libs-only-L igraph jansson | tr ' ' '\n' |
	sed -n 's/^-[IL]//p'); do
	if [ ! -e "$root$dir" ]; then
		mkdir -p "$(dirname "$root$dir")"
		ln -s "$dir" "$root$dir"
		links="$links $root$dir"
	fi
done
flags=$(PKG_CONFIG_PATH="$root$PKGCONFIGDIR" PKG_CONFIG_SYSROOT_DIR="$root" \
	pkg-config --cflags --libs pebblesim) || fail "pkg-config does not find pebblesim in $root$PKGCONFIGDIR"
example=$stage/attention_counts
# shellcheck disable=SC2086
$CC $EXAMPLE_CFLAGS -o "$example" examples/api/attention_counts.c $flags \
	$EXAMPLE_LDFLAGS -Wl,-rpath,"$root$LIBDIR" ||
	fail "examples/api/attention_counts.c does not build with: $flags"
ldd "$example" | grep -q "libpebblesim.so.$major => $root$LIBDIR/" ||
	fail "the example is not linked with the installed libpebblesim.so.$major"
for strategy in keylemma generic; do
	set -- "$strategy" 64 4 2 100
	"$example" "$@" >"$stage/counts.txt" || fail "attention_counts $* failed"
	"$root$BINDIR/pebblesim" --strategy "$1" -n "$2" -d "$3" -g "$4" -M "$5" --json >"$stage/run.json" ||
		fail "pebblesim --strategy $1 -n $2 -d $3 -g $4 -M $5 --json failed"
	grep -qx 'valid true' "$stage/counts.txt" || fail "attention_counts $*: not valid"
	for key in loads saves peak_red; do
		# the first: loads and saves come again inside by_array
		want=$(grep -o "\"$key\":[0-9]*" "$stage/run.json" | head -n 1 | cut -d: -f2)
		[ -n "$want" ] || fail "no $key in pebblesim's --json"
		grep -qx "$key $want" "$stage/counts.txt" ||
			fail "attention_counts $*: $(grep "^$key " "$stage/counts.txt"), pebblesim --json: $want"
	done
done
# the explicit-DAG module found beside the installed shared library
cat >"$stage/read_dag.c" <<'EOF'
#include <stdio.h>
#include <pebblesim/explicit.h>
int main(int argc, char **argv)
{
	struct ps_explicit x;
	struct ps_error err;

	(void)argc;
	ps_error_clear(&err);
	if (ps_explicit_read(&x, argv[1], &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	printf("vertices %llu\n", (unsigned long long)x.vertices);
	ps_explicit_free(&x);
	return 0;
}
EOF
# shellcheck disable=SC2086
$CC $EXAMPLE_CFLAGS -o "$stage/read_dag" "$stage/read_dag.c" $flags \
	$EXAMPLE_LDFLAGS -Wl,-rpath,"$root$LIBDIR" || fail "a program reading a DAG does not build with: $flags"
"$stage/read_dag" "$root$DOCDIR/examples/tree.graphml" >"$stage/read_dag.txt" ||
	fail "a program linked with libpebblesim.so.$major cannot read examples/tree.graphml"
grep -qx 'vertices 15' "$stage/read_dag.txt" || fail "read_dag: $(cat "$stage/read_dag.txt")"

# ---- 3. the bash completion -------------------------------------------------
complete_words() {
	# the words after "pebblesim" on the line, the last being completed
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _pebblesim; echo "${COMPREPLY[*]}"' \
		completion "$root$BASHCOMPDIR/pebblesim" "$root$BINDIR/pebblesim" "$@"
}
# the commands as --help lists them
commands=$("$root$BINDIR/pebblesim" --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on { printf "%s%s", sep, $1; sep = " " }')
[ -n "$commands" ] || fail "no commands in pebblesim --help"
[ "$(complete_words '')" = "$commands" ] || fail "completion of commands: '$(complete_words '')', --help lists '$commands'"
[ "$(complete_words --strat)" = "--strategy" ] || fail "completion of --strat: '$(complete_words --strat)'"
[ "$(complete_words --strategy naive-b)" = "naive-belady" ] ||
	fail "completion of --strategy naive-b: '$(complete_words --strategy naive-b)'"
[ "$(complete_words --attention e)" = "exact" ] ||
	fail "completion of --attention e: '$(complete_words --attention e)'"
[ "$(complete_words run --case I)" = "I II III IV" ] || fail "completion of --case I: '$(complete_words run --case I)'"

# ---- 4. make install PREFIX=... as a user runs it ---------------------------
# into a prefix of its own (no DESTDIR): nothing under build/ is made again,
# build/pebblesim --help says what it said, and the example built with
# pkg-config's flags alone finds the installed library (its rpath).
prefix=$stage/prefix
help_before=$("$build/pebblesim" --help)
touch "$stage/stamp"
sleep 1
$MAKE --no-print-directory install PREFIX="$prefix" BINDIR="$prefix/bin" LIBDIR="$prefix/lib" \
	INCLUDEDIR="$prefix/include" PKGCONFIGDIR="$prefix/lib/pkgconfig" MANDIR="$prefix/share/man" \
	BASHCOMPDIR="$prefix/share/bash-completion/completions" DOCDIR="$prefix/share/doc/pebblesim" \
	>"$stage/install-prefix.log" 2>&1 ||
	{ cat "$stage/install-prefix.log" >&2; fail "make install PREFIX=$prefix failed"; }
# this build's own files: the other build directories under build/ (the
# sanitizer and fuzz builds) may be building beside it (.ci/run)
remade=$(find "$build/obj" "$build/plugins" -newer "$stage/stamp" \( -name '*.o' -o -name '*.so' \) -print 2>/dev/null
	find "$build" -maxdepth 1 -newer "$stage/stamp" \( -name pebblesim -o -name '*.a' -o -name '*.so*' \) -print)
[ -z "$remade" ] || fail "make install PREFIX=$prefix made again: $remade"
[ "$("$build/pebblesim" --help)" = "$help_before" ] || fail "make install PREFIX=$prefix changed build/pebblesim --help"
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs pebblesim)
# shellcheck disable=SC2086
$CC $EXAMPLE_CFLAGS -o "$stage/counts-prefix" examples/api/attention_counts.c $flags $EXAMPLE_LDFLAGS ||
	fail "examples/api/attention_counts.c does not build with: $flags"
env -u LD_LIBRARY_PATH "$stage/counts-prefix" >"$stage/counts.txt" ||
	fail "the example built with pkg-config's flags does not run without LD_LIBRARY_PATH (flags: $flags)"
ldd "$stage/counts-prefix" | grep -q "libpebblesim.so.$major => $prefix/lib/" ||
	fail "the example does not find $prefix/lib/libpebblesim.so.$major"
"$prefix/bin/pebblesim" --help | grep -qF "in $(cd "$prefix/share/doc/pebblesim" && pwd -P)." ||
	fail "the installed pebblesim --help does not name $prefix/share/doc/pebblesim"

[ -x "$prefix/share/doc/pebblesim/examples/distributed/sweep-parallel.sh" ] ||
	fail "examples/distributed/sweep-parallel.sh not installed"
$MAKE --no-print-directory uninstall PREFIX="$prefix" BINDIR="$prefix/bin" LIBDIR="$prefix/lib" \
	INCLUDEDIR="$prefix/include" PKGCONFIGDIR="$prefix/lib/pkgconfig" MANDIR="$prefix/share/man" \
	BASHCOMPDIR="$prefix/share/bash-completion/completions" DOCDIR="$prefix/share/doc/pebblesim" \
	>"$stage/uninstall-prefix.log" 2>&1 || fail "make uninstall PREFIX=$prefix failed"

# ---- 5. make uninstall ------------------------------------------------------
# shellcheck disable=SC2086
[ -z "$links" ] || rm -f $links
$MAKE --no-print-directory uninstall DESTDIR="$root" >"$stage/uninstall.log" 2>&1 ||
	{ cat "$stage/uninstall.log" >&2; fail "make uninstall DESTDIR=$root failed"; }
left=$(find "$root" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
rm -rf "$stage"
echo "check-install: install, pkg-config, examples/api, completion, uninstall: ok"
