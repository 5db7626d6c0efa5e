#!/bin/sh
# Installs the Debian packages pebblesim builds with, when they are missing:
# a C compiler, pkg-config, the igraph, jansson and Check libraries,
# help2man (the man page is generated from `pebblesim --help`), and
# gnuplot-nox (`pebblesim sweep --plot` draws with it), python3-numpy
# (`make check` recomputes the polynomials with NumPy); clang and its
# runtimes when the fuzz targets or a clang sanitizer build need them;
# chromium and chromium-driver for the browser test (PEBBLESIM_BROWSER=1).
# Called by the Makefile before every build; quiet and quick when all is there.
set -u

need=""
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v help2man >/dev/null 2>&1 || need="$need help2man"
command -v gnuplot >/dev/null 2>&1 || need="$need gnuplot-nox"
/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 || need="$need python3-numpy"
for pair in igraph:libigraph-dev jansson:libjansson-dev check:check; do
	module=${pair%%:*}
	package=${pair#*:}
	if ! command -v pkg-config >/dev/null 2>&1 ||
	   ! pkg-config --exists "$module"; then
		need="$need $package"
	fi
done
# clang and its runtimes (sanitizers, libFuzzer): for the fuzz targets
# (PEBBLESIM_FUZZ=1, from `make fuzz`) and a sanitizer build with CC=clang
want_clang=""
[ "${PEBBLESIM_FUZZ:-}" = 1 ] && want_clang=1
case "${CC:-}" in
*clang*) [ -n "${SANITIZE:-}" ] && want_clang=1 ;;
esac
# chromium and chromedriver: for the browser test of `pebblesim view` and
# its screenshot (PEBBLESIM_BROWSER=1, from `make check-browser` and
# `make docs-view`)
if [ "${PEBBLESIM_BROWSER:-}" = 1 ]; then
	command -v chromium >/dev/null 2>&1 || need="$need chromium"
	command -v chromedriver >/dev/null 2>&1 || need="$need chromium-driver"
fi
if [ -n "$want_clang" ]; then
	command -v clang >/dev/null 2>&1 || need="$need clang"
	if ! printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' |
	   clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - >/dev/null 2>&1; then
		need="$need libclang-rt-14-dev"
	fi
fi
[ -z "$need" ] && exit 0

echo "pebblesim: missing build dependencies; installing Debian packages:$need" >&2
if [ "$(id -u)" -eq 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1; then
	sudo="sudo"
else
	echo "pebblesim: cannot install them: not root and no sudo; as root run: apt-get install$need" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "pebblesim: cannot install them: no apt-get here; install igraph, jansson and Check (with their pkg-config files) and help2man by hand" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2 || echo "pebblesim: apt-get update failed; trying the package lists at hand" >&2
# shellcheck disable=SC2086
if ! $sudo apt-get install -y -qq --no-install-recommends $need >&2; then
	echo "pebblesim: apt-get install$need failed" >&2
	exit 1
fi
