#!/bin/sh
# A grid of iolab runs as a Slurm job array: task I runs slice I of 16 of
# the (variant, seed) runs and writes its shard document. Submit with
# `sbatch slurm-array.sh`; once every task is done, `iolab merge
# shard-*.json` prints what the unsharded command prints.
#SBATCH --job-name=iolab-grid
#SBATCH --array=0-15
#SBATCH --cpus-per-task=2
set -eu
N=16
IOLAB=${IOLAB:-iolab}
JOB=${JOB:-job.fio}
OUT=${OUT:-.}
"$IOLAB" compare "$JOB" --device sata-ssd \
    --policies 'none,wbt:lat={1,2,5,10,20}ms' --seeds 10 \
    --jobs "${SLURM_CPUS_PER_TASK:-1}" \
    --shard "$SLURM_ARRAY_TASK_ID/$N" \
    --output "$OUT/shard-$SLURM_ARRAY_TASK_ID.json"
