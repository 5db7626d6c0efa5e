#!/bin/sh
# A sweep run in shards by GNU parallel, then joined into one CSV:
#
#   examples/distributed/sweep-parallel.sh SHARDS OUT.csv SWEEP-OPTIONS...
#   examples/distributed/sweep-parallel.sh 3 all.csv -n 1k:64k:x2 -d 16 -g 3 -M 8k --predict
#
# Each shard is one `pebblesim sweep ... --shard K/SHARDS --csv FILE`, one
# process (-j 1: the shards are the parallelism); `pebblesim sweep --merge`
# then joins them, and refuses unless every shard came back once. GNU
# parallel runs them on this machine, JOBS at once (default: one a core);
# its --sshlogin spreads them over machines that share the directory.
# The options are passed as words (parallel -q), never read by a shell.
#
#   PEBBLESIM   the binary (default: pebblesim on PATH)
#   JOBS        shards at once (default 0: as many as GNU parallel sees cores)
set -eu
if [ $# -lt 3 ]; then
	echo "usage: $0 SHARDS OUT.csv SWEEP-OPTIONS..." >&2
	exit 2
fi
shards=$1
out=$2
shift 2
case $shards in
'' | *[!0-9]*) echo "$0: SHARDS is a count, not '$shards'" >&2; exit 2 ;;
esac
pebblesim=${PEBBLESIM:-pebblesim}
dir=$(mktemp -d "${TMPDIR:-/tmp}/pebblesim-shards-XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
# the shards' tables go nowhere: their CSV files are the result
parallel -q --halt now,fail=1 --jobs "${JOBS:-0}" \
	"$pebblesim" sweep "$@" -j 1 --shard '{}'/"$shards" --csv "$dir/shard-{}.csv" \
	::: $(seq 1 "$shards") >/dev/null
"$pebblesim" sweep --merge "$dir"/shard-*.csv --csv "$out"
