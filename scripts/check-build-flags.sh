#!/bin/sh
# make check-flags (part of make check): the build options are tracked.
# In a scratch build directory, one object is made four times: the second
# make, with the same options, must compile nothing; the third, with
# WERROR flipped, must compile it again and say that the options changed;
# the fourth, the same as the third, must compile nothing.
#
#   check-build-flags.sh BUILD_DIR   (MAKE set by the Makefile)
set -eu

scratch=$1/flags-test
object=$scratch/obj/src/common.o
fail() {
	echo "check-flags: $*" >&2
	exit 1
}
make_object() {
	$MAKE --no-print-directory BUILD="$scratch" "$@" "$object" 2>&1
}
compiles() {
	grep -q -- "-c src/common.c" "$scratch.log"
}

# WERROR as the caller has it, and its opposite
case ${WERROR-} in
1) other=0 ;;
*) other=1 ;;
esac
rm -rf "$scratch"
make_object >"$scratch.log" || { cat "$scratch.log" >&2; fail "make $object failed"; }
compiles || fail "the first make did not compile $object"
make_object >"$scratch.log" || fail "make $object failed"
! compiles || fail "an identical make compiled $object again"
make_object WERROR=$other >"$scratch.log" || fail "make WERROR=$other $object failed"
compiles || fail "WERROR=$other did not recompile $object"
grep -q "build options changed" "$scratch.log" || fail "WERROR=$other: no word that the options changed"
grep -qx "WERROR = $other" "$scratch/flags" || fail "$scratch/flags does not hold WERROR = $other"
make_object WERROR=$other >"$scratch.log" || fail "make WERROR=$other $object failed"
! compiles || fail "an identical make WERROR=$other compiled $object again"
rm -rf "$scratch" "$scratch.log"
echo "check-flags: an identical make compiles nothing, WERROR flipped recompiles: ok"
