#!/bin/sh
# make check-install (part of make check): the installed tree, used as a
# user of the library would use it.
#
#   1. make install DESTDIR=BUILD/install-test/root, and every file in its place:
#      the binary, libpebblesim.a, libpebblesim.so.MAJOR.MINOR with its soname
#      and links, the headers, pebblesim.pc, the man page, the bash
#      completion, README.md, docs/ and examples/ with every relative link
#      of the documentation resolving;
#   2. examples/api/attention_counts.c compiled with the flags pkg-config gives
#      for pebblesim from that tree (PKG_CONFIG_PATH, and PKG_CONFIG_SYSROOT_DIR
#      as when building against a staged root), linked with the shared library,
#      run, and its counts compared with the installed binary's --json;
#   3. the completion asked for commands, options and strategy names;
#   4. make uninstall leaves no file behind.
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
# the documentation line of --help names the installed directory
"$root$BINDIR/pebblesim" --help | grep -q "installed in $DOCDIR\\.\$" ||
	fail "pebblesim --help does not name $DOCDIR"

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

# ---- 3. the bash completion -------------------------------------------------
complete_words() {
	# the words after "pebblesim" on the line, the last being completed
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _pebblesim; echo "${COMPREPLY[*]}"' \
		completion "$root$BASHCOMPDIR/pebblesim" "$root$BINDIR/pebblesim" "$@"
}
[ "$(complete_words '')" = "run validate compare dag sweep frontier optimal list help" ] || fail "completion of commands: '$(complete_words '')'"
[ "$(complete_words --strat)" = "--strategy" ] || fail "completion of --strat: '$(complete_words --strat)'"
[ "$(complete_words --strategy naive-b)" = "naive-belady" ] ||
	fail "completion of --strategy naive-b: '$(complete_words --strategy naive-b)'"
[ "$(complete_words --attention e)" = "exact" ] ||
	fail "completion of --attention e: '$(complete_words --attention e)'"
[ "$(complete_words run --case I)" = "I II III IV" ] || fail "completion of --case I: '$(complete_words run --case I)'"

# ---- 4. make uninstall ------------------------------------------------------
# shellcheck disable=SC2086
[ -z "$links" ] || rm -f $links
$MAKE --no-print-directory uninstall DESTDIR="$root" >"$stage/uninstall.log" 2>&1 ||
	{ cat "$stage/uninstall.log" >&2; fail "make uninstall DESTDIR=$root failed"; }
left=$(find "$root" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
rm -rf "$stage"
echo "check-install: install, pkg-config, examples/api, completion, uninstall: ok"
