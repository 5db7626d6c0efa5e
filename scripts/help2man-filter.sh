#!/bin/sh
# Stands in for pebblesim when help2man writes the man page (make): runs the
# binary named by PEBBLESIM_BIN and passes its --help and --version through,
# with one change of form: the usage lines become the GNU synopsis that
# help2man recognises,
#
#   Usage: pebblesim [run] ...
#     or:  pebblesim compare ...
#
# each synopsis on one line. The words are the binary's: --help stays the
# one source of the man page.
set -eu
bin=${PEBBLESIM_BIN:?PEBBLESIM_BIN names the pebblesim binary}
[ "${1-}" = --help ] || exec "$bin" "$@"
"$bin" --help | awk '
	function flush() { if (line != "") print (count++ ? "  or:  " : "Usage: ") line; line = "" }
	NR == 1 && sub(/^usage: +/, "") { line = $0; synopsis = 1; next }
	synopsis && /^ +pebblesim / { flush(); sub(/^ +/, ""); line = $0; next }
	synopsis && /^ +[[]/ { sub(/^ +/, " "); line = line $0; next }
	synopsis { flush(); synopsis = 0 }
	{ print }
	END { flush() }'
