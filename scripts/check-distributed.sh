#!/bin/sh
# make check: examples/distributed/ run here. sweep-parallel.sh with GNU
# parallel and 3 shards, and sweep-slurm.sh as 3 array tasks (Slurm's
# variables set by hand) of the arrays 1-3, 0-4:2 and the list 0,2,5
# (PEBBLESIM_ARRAY), each merge compared with the same sweep run whole:
# the same rows (but the seconds), their sweep and shard columns included.
#
#   check-distributed.sh BUILD_DIR
set -eu
build=$1
bin=$build/pebblesim
dir=$build/distributed-test
fail() {
	echo "check-distributed: $*" >&2
	exit 1
}
rm -rf "$dir"
mkdir -p "$dir/slurm"
set -- -n 64:1k:x2 -d 4 -g 2 -M 200 --strategies case,best,flash,generic
"$bin" sweep "$@" -j 1 --csv "$dir/whole.csv" >/dev/null
# the rows but their seconds (column 15)
rows() {
	cut -d, -f1-14,16- "$1"
}
PEBBLESIM=$bin TMPDIR=$dir sh examples/distributed/sweep-parallel.sh 3 "$dir/parallel.csv" "$@" >/dev/null ||
	fail "sweep-parallel.sh failed"
rows "$dir/whole.csv" >"$dir/whole.rows"
rows "$dir/parallel.csv" >"$dir/parallel.rows"
cmp -s "$dir/whole.rows" "$dir/parallel.rows" ||
	fail "sweep-parallel.sh with 3 shards differs from the sweep run whole: $(diff "$dir/whole.rows" "$dir/parallel.rows" | head -5)"
[ "$(wc -l <"$dir/whole.rows")" -gt 10 ] || fail "the sweep has too few rows to tell"
for task in 1 2 3; do
	(cd "$dir/slurm" && SLURM_ARRAY_TASK_ID=$task SLURM_ARRAY_TASK_COUNT=3 PEBBLESIM=$bin \
		sh "$OLDPWD/examples/distributed/sweep-slurm.sh" "$@" >/dev/null 2>"shard-$task.log") ||
		fail "sweep-slurm.sh as task $task of 3 failed: $(cat "$dir/slurm/shard-$task.log")"
	grep -q '^pebblesim: sweep: [0-9]* of [0-9]* runs done' "$dir/slurm/shard-$task.log" ||
		fail "task $task's log has no progress lines"
done
# another index set: a range from 0 with a step (Slurm's variables), a
# list (PEBBLESIM_ARRAY); each merges into the whole sweep
slurm_array() { # NAME MIN MAX STEP ARRAY TASKS...
	name=$1 min=$2 max=$3 step=$4 array=$5
	shift 5
	mkdir -p "$dir/$name"
	for task in "$@"; do
		(cd "$dir/$name" && SLURM_ARRAY_TASK_ID=$task SLURM_ARRAY_TASK_COUNT=3 \
			SLURM_ARRAY_TASK_MIN=$min SLURM_ARRAY_TASK_MAX=$max SLURM_ARRAY_TASK_STEP=$step \
			PEBBLESIM_ARRAY=$array PEBBLESIM=$bin \
			sh "$OLDPWD/examples/distributed/sweep-slurm.sh" $sweep >/dev/null 2>"shard-$task.log") ||
			fail "sweep-slurm.sh as task $task of the array $name failed: $(cat "$dir/$name/shard-$task.log")"
	done
	"$bin" sweep --merge "$dir/$name"/shard-*.csv --csv "$dir/$name.csv" >/dev/null ||
		fail "the array $name's shards do not merge"
	rows "$dir/$name.csv" >"$dir/$name.rows"
	cmp -s "$dir/whole.rows" "$dir/$name.rows" || fail "the array $name merged differs from the sweep run whole"
}
sweep="$*"
slurm_array stepped 0 4 2 "" 0 2 4
slurm_array list 0 5 1 0,2,5 0 2 5
# a list without PEBBLESIM_ARRAY is refused, not run as the wrong shard
(cd "$dir/list" && SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=0 \
	SLURM_ARRAY_TASK_MAX=5 PEBBLESIM=$bin sh "$OLDPWD/examples/distributed/sweep-slurm.sh" $sweep \
	>/dev/null 2>"$dir/list.txt") && fail "a list of indices without PEBBLESIM_ARRAY ran"
grep -q 'are a list, not a range: give it in PEBBLESIM_ARRAY' "$dir/list.txt" ||
	fail "a list of indices without PEBBLESIM_ARRAY: $(cat "$dir/list.txt")"
"$bin" sweep --merge "$dir/slurm/shard-2.csv" "$dir/slurm/shard-3.csv" >/dev/null 2>"$dir/missing.txt" &&
	fail "a merge without shard 1 of 3 passed"
grep -q 'shard 1/3 of the sweep is missing' "$dir/missing.txt" || fail "a missing shard is not named: $(cat "$dir/missing.txt")"
"$bin" sweep --merge "$dir"/slurm/shard-*.csv --csv "$dir/slurm.csv" >/dev/null
rows "$dir/slurm.csv" >"$dir/slurm.rows"
cmp -s "$dir/whole.rows" "$dir/slurm.rows" || fail "sweep-slurm.sh's 3 tasks merged differ from the sweep run whole"
rm -rf "$dir"
echo "check-distributed: GNU parallel (3 shards) and Slurm arrays (1-3, 0-4:2, the list 0,2,5) merge into the whole sweep: ok"
