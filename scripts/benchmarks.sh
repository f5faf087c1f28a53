#!/usr/bin/env bash
# Runs the variant microbenchmarks (every variant of wbt, iocost, flush,
# and every allocator and read policy; the threaded faces beside tokio's
# Semaphore) under criterion, saved as the baseline `benchmarks-page`,
# and writes docs/benchmarks.md from those estimates.
#
#   scripts/benchmarks.sh [WARM-UP-SECONDS MEASUREMENT-SECONDS]
#
# Defaults: 1 s of warm-up and 3 s of measurement a benchmark (about
# 6 minutes in all on two cores). Run it on an otherwise idle machine.
# Other baselines under target/criterion are left as they are.
set -euo pipefail

warm=${1:-1}
measure=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
# Only this page's baseline is replaced: a benchmark removed since the
# last run does not linger on the page.
if [ -d "$target/criterion" ]; then
  find "$target/criterion" -type d -name benchmarks-page -prune -exec rm -rf {} +
fi
cargo bench -p iolab-benches --bench wbt --bench iocost --bench flush \
  --bench tiering --bench faces -- \
  --warm-up-time "$warm" --measurement-time "$measure" \
  --save-baseline benchmarks-page --noplot
cargo run -q --release -p iolab-benches --bin benchmarks-page -- \
  "$target/criterion" docs/benchmarks.md
