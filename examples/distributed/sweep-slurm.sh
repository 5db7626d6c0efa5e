#!/bin/sh
# A sweep as a Slurm job array, one shard a task, each writing
# shard-ID.csv (ID: the task's array index) in the directory it was
# submitted from:
#
#   jobid=$(sbatch --parsable --array=0-7 examples/distributed/sweep-slurm.sh \
#       -n 1k:1M:x2 -d 16 -g 3 -M 8k --predict)
#   sbatch --dependency=afterok:$jobid --wrap \
#       'pebblesim sweep --merge shard-*.csv --csv all.csv --plot all.svg'
#
# Any index set works: --array=0-7, 1-8, 0-30:2 (a step), and lists
# (--array=1,3,7 or 0-3,9): the task's shard is its index's rank among
# the array's. A range, with or without a step, Slurm's variables tell
# (SLURM_ARRAY_TASK_MIN, _MAX, _STEP, _COUNT); a list they do not, so
# give it again in PEBBLESIM_ARRAY:
#
#   sbatch --array=1,3,7 --export=ALL,PEBBLESIM_ARRAY=1,3,7 examples/distributed/sweep-slurm.sh ...
#
# The merge runs once every task has succeeded, and refuses a missing or
# doubled shard by name (--partial accepts a partial result on purpose).
# --progress writes a line per run into each task's log, which is not a
# terminal. A task uses the CPUs Slurm gives it (-j).
#
#SBATCH --job-name=pebblesim-sweep
#SBATCH --output=shard-%a.log
#SBATCH --cpus-per-task=1
set -eu
: "${SLURM_ARRAY_TASK_ID:?submit with sbatch --array=...}"
: "${SLURM_ARRAY_TASK_COUNT:?submit with sbatch --array=...}"
id=$SLURM_ARRAY_TASK_ID
count=$SLURM_ARRAY_TASK_COUNT
fail() {
	echo "sweep-slurm.sh: $*" >&2
	exit 2
}

# The indices of an --array value, one a line: "0-3,9,12-20:4%2" is
# 0 1 2 3 9 12 16 20 (the %N of simultaneous tasks is not an index).
indices() {
	printf '%s\n' "${1%%\%*}" | tr ',' '\n' | while IFS= read -r part; do
		case $part in
		*-*)
			lo=${part%%-*} rest=${part#*-}
			hi=${rest%%:*} step=1
			case $rest in *:*) step=${rest#*:} ;; esac
			i=$lo
			while [ "$i" -le "$hi" ]; do
				echo "$i"
				i=$((i + step))
			done
			;;
		'') ;;
		*) echo "$part" ;;
		esac
	done | sort -n -u
}

if [ -n "${PEBBLESIM_ARRAY:-}" ]; then
	list=$(indices "$PEBBLESIM_ARRAY") || fail "PEBBLESIM_ARRAY=$PEBBLESIM_ARRAY is not an --array value"
	[ "$(printf '%s\n' "$list" | wc -l)" -eq "$count" ] ||
		fail "PEBBLESIM_ARRAY=$PEBBLESIM_ARRAY names $(printf '%s\n' "$list" | wc -l) indices, the array has $count tasks"
	shard=$(printf '%s\n' "$list" | grep -n -x "$id" | cut -d: -f1)
	[ -n "$shard" ] || fail "index $id is not in PEBBLESIM_ARRAY=$PEBBLESIM_ARRAY"
else
	min=${SLURM_ARRAY_TASK_MIN:-1}
	max=${SLURM_ARRAY_TASK_MAX:-$count}
	step=${SLURM_ARRAY_TASK_STEP:-1}
	# a range of that step has exactly count indices; a list does not
	if [ $(((max - min) / step + 1)) -ne "$count" ] || [ $(((id - min) % step)) -ne 0 ]; then
		fail "the array's indices ($min to $max, $count tasks) are a list, not a range: give it in PEBBLESIM_ARRAY (sbatch --export=ALL,PEBBLESIM_ARRAY=...)"
	fi
	shard=$(((id - min) / step + 1))
fi
pebblesim=${PEBBLESIM:-pebblesim}
exec "$pebblesim" sweep "$@" -j "${SLURM_CPUS_PER_TASK:-1}" --progress \
	--shard "$shard/$count" --csv "shard-$id.csv"
