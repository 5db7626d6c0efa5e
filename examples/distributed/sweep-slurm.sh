#!/bin/sh
# A sweep as a Slurm job array, one shard a task, each writing
# shard-K.csv in the directory it was submitted from:
#
#   jobid=$(sbatch --parsable --array=1-8 examples/distributed/sweep-slurm.sh \
#       -n 1k:1M:x2 -d 16 -g 3 -M 8k --predict)
#   sbatch --dependency=afterok:$jobid --wrap \
#       'pebblesim sweep --merge shard-*.csv --csv all.csv --plot all.svg'
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
: "${SLURM_ARRAY_TASK_ID:?submit with sbatch --array=1-N}"
: "${SLURM_ARRAY_TASK_COUNT:?submit with sbatch --array=1-N}"
pebblesim=${PEBBLESIM:-pebblesim}
exec "$pebblesim" sweep "$@" -j "${SLURM_CPUS_PER_TASK:-1}" --progress \
	--shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" \
	--csv "shard-$SLURM_ARRAY_TASK_ID.csv"
