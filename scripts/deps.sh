#!/bin/sh
# Installs the Debian packages pebblesim builds and checks with, when they
# are missing; clang and its runtimes when the fuzz targets or a clang
# sanitizer build need them. Called by the Makefile before every build;
# quiet and quick when all is there.
#
#   sh scripts/deps.sh          install what is missing
#   sh scripts/deps.sh --list   the packages, one a line (README.md names
#                               the same; make check compares the two)
# chromium and chromium-driver for the browser test (PEBBLESIM_BROWSER=1).
set -u

# The packages, each with how to tell it is installed: a command, a
# pkg-config module, a Python module. The one list of them.
packages='
gcc            command cc          the C compiler
libc6-dev      command cc          the C library headers
pkg-config     command pkg-config  finds igraph, jansson and Check
libigraph-dev  module  igraph      explicit DAGs
libjansson-dev module  jansson     JSON: traces, reports
check          module  check       the unit tests (make check)
gnuplot-nox    command gnuplot     sweep --plot
python3-numpy  python  numpy       make check recomputes the polynomials with NumPy
python3-setuptools python setuptools build backend of the Python package (pyproject.toml)
python3-wheel  python  wheel       pip builds the Python package as a wheel
python3-pip    python  pip         pip install --no-build-isolation . (make check-python tries it)
parallel       command parallel    GNU parallel: make check runs examples/distributed/ with it
jq             command jq          make bench times jq parsing the headline trace, beside validate
'

if [ "${1-}" = --list ]; then
	printf '%s\n' "$packages" | awk 'NF { print $1 }'
	exit 0
fi

need=""
have_module() {
	command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$1"
}
while read -r package how what _; do
	[ -n "$package" ] || continue
	case $how in
	command) command -v "$what" >/dev/null 2>&1 ;;
	module) have_module "$what" ;;
	python) /usr/bin/python3 -c "import $what" >/dev/null 2>&1 ;;
	esac || need="$need $package"
done <<EOF_PACKAGES
$packages
EOF_PACKAGES
# moreutils has a parallel of its own: GNU parallel is the one the example takes
if command -v parallel >/dev/null 2>&1 && ! parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
	case $need in *parallel*) ;; *) need="$need parallel" ;; esac
fi
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
	echo "pebblesim: cannot install them: no apt-get here; install igraph, jansson and Check (with their pkg-config files), gnuplot and GNU parallel by hand" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# one apt-get at a time: .ci/run's steps build side by side, and apt-get
# fails on the lock another holds instead of waiting for it
lock=""
command -v flock >/dev/null 2>&1 && lock="flock ${TMPDIR:-/tmp}/pebblesim-deps.lock"
$lock $sudo apt-get update -qq >&2 || echo "pebblesim: apt-get update failed; trying the package lists at hand" >&2
# shellcheck disable=SC2086
if ! $lock $sudo apt-get install -y -qq --no-install-recommends $need >&2; then
	echo "pebblesim: apt-get install$need failed" >&2
	exit 1
fi
