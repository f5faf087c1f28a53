#!/usr/bin/env bash
# Runs iolab on every job file of a directory (fio's own examples/, from a
# fio source tree) and prints one Markdown table row a file: what fio says
# of it (`fio --parse-only`, when fio is installed) and what iolab does:
# runs (with its wall time) or refuses (with the first reason it gives).
#
#   scripts/fio-examples.sh DIR [DEVICE] [SECONDS]
#
# DEVICE is an `iolab devices` preset or a TOML file (default nvme);
# SECONDS bounds each run (default 240). The files are read where they
# are; runs happen in a temporary directory that is removed at the end.
set -euo pipefail

dir=${1:?usage: scripts/fio-examples.sh DIR [DEVICE] [SECONDS]}
device=${2:-nvme}
limit=${3:-240}
iolab=${IOLAB:-$(dirname "$0")/../target/release/iolab}
if [ ! -x "$iolab" ]; then
  echo "fio-examples: $iolab not built (cargo build --release -p iolab)" >&2
  exit 2
fi
iolab=$(cd "$(dirname "$iolab")" && pwd)/$(basename "$iolab")
dir=$(cd "$dir" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "| file | fio --parse-only | iolab | wall s | iolab's reason |"
echo "|---|---|---|---|---|"
for path in "$dir"/*.fio; do
  name=$(basename "$path")
  fio_says="(no fio)"
  if command -v fio >/dev/null; then
    if timeout 20 fio --parse-only "$path" >/dev/null 2>&1; then
      fio_says=accepted
    else
      fio_says=refused
    fi
  fi
  start=$(date +%s%N)
  set +e
  err=$(cd "$work" && timeout "$limit" "$iolab" run --device "$device" "$path" 2>&1 >/dev/null)
  rc=$?
  set -e
  secs=$(( ($(date +%s%N) - start) / 100000000 ))
  secs="$((secs / 10)).$((secs % 10))"
  case $rc in
    0) verdict=runs; reason="" ;;
    124) verdict="still running at ${limit} s"; reason="" ;;
    *)
      verdict=refused
      # The error comes after the notes on the job's options.
      reason=$(printf '%s\n' "$err" | grep '^iolab:' | grep -v 'iolab: note:' | tail -1 |
        cut -c1-200 | sed 's/|/\\|/g' || true)
      ;;
  esac
  echo "| $name | $fio_says | $verdict | $secs | ${reason#iolab: } |"
  rm -rf "${work:?}"/*
done
