#!/usr/bin/env bash
# Does a real run leave the machine as it found it, however it ends?
# Root only, run by hand (CI has no root): for each way a capture ends
# (complete, SIGINT to its PID, SIGTERM to its PID, SIGHUP to its process
# group, SIGKILL then `iolab kernel cleanup`), the machine's state before
# and after: loop devices, mounts, tracefs (events, tracer, ring size,
# clock, filters, instances, readers of trace_pipe), the loop devices'
# queue knobs, /dev/shm, fio processes, journals. Prints one table row a
# way; exits 1 if any state differs (the difference is printed).
#
#   sudo kernel/left-as-found.sh [path/to/iolab]
set -uo pipefail
cd "$(dirname "$0")/.."
IOLAB=${1:-./target/release/iolab}
T=/sys/kernel/tracing
WORK=$(mktemp -d /tmp/iolab-left-as-found.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

state() {
  echo "## loop devices"; losetup -a -O NAME,BACK-FILE 2>/dev/null | sort
  echo "## mounts"; awk '{print $1, $2, $3}' /proc/mounts | sort
  echo "## tracefs"
  if [ -d "$T/events" ] && grep -q " $T tracefs" /proc/mounts; then
    for f in set_event current_tracer tracing_on buffer_size_kb trace_clock; do
      echo "$f: $(tr '\n' ' ' < "$T/$f")"
    done
    echo "filters set: $(grep -lvx none "$T"/events/*/*/filter 2>/dev/null | wc -l)"
    echo "instances: $(ls "$T/instances" | tr '\n' ' ')"
  else
    echo "not mounted"
  fi
  echo "## trace_pipe readers"
  ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -c trace_pipe
  echo "## loop queue knobs"
  for q in /sys/block/loop*/queue; do
    echo "$q: $(cat "$q/scheduler") nr_requests=$(cat "$q/nr_requests") wbt_lat_usec=$(cat "$q/wbt_lat_usec")"
  done
  echo "## /dev/shm"; ls -A /dev/shm
  # Zombies hold nothing and go when their new parent reaps them.
  echo "## fio and cat processes (not zombies)"
  ps -eo stat=,comm=,args= | awk '$1 !~ /^Z/ && ($2 == "fio" || $2 == "cat") {$1=""; print}'
  echo "## journals"; ls -A /run/iolab 2>/dev/null
  echo "## capture directories"; ls -d /tmp/iolab-capture-* 2>/dev/null
}

cat > "$WORK/writer.fio" <<'EOF'
# A buffered writer with fsync and a reader, long enough to be stopped.
[global]
runtime=30
time_based
size=256m
[writer]
rw=write
bs=64k
fsync=16
[reader]
rw=randread
bs=4k
EOF
cat > "$WORK/short.fio" <<'EOF'
[writer]
rw=write
bs=64k
size=64m
fsync=16
EOF

# way, seconds before the signal, signal target
run_way() {
  local way=$1 out="$WORK/out-$1" job="$WORK/writer.fio"
  [ "$way" = complete ] && job="$WORK/short.fio"
  state > "$WORK/before-$way"
  local t0=$SECONDS
  setsid timeout 120 "$IOLAB" kernel capture "$job" --out "$out" \
    --loop 1g@/dev/shm --wbt-lat-usec 300 --scheduler none \
    > "$WORK/log-$way" 2>&1 &
  local pid=$!
  # setsid execs timeout in place: $pid is the group; iolab is its child.
  sleep 0.5
  local iolab
  iolab=$(pgrep -P "$pid" -x iolab || echo "")
  if [ "$way" != complete ]; then
    # Wait until fio runs, then stop the run as a user or a job runner would.
    for _ in $(seq 100); do pgrep -x fio >/dev/null && break; sleep 0.1; done
    sleep 2
    case $way in
      sigint) kill -INT "$iolab" ;;
      sigterm) kill -TERM "$iolab" ;;
      sighup-group) kill -HUP -- "-$pid" ;;
      sigkill) kill -KILL "$iolab" ;;
    esac
  fi
  wait "$pid"; local rc=$?
  echo "-- $way: $(tail -1 "$WORK/log-$way")" >> "$WORK/said"
  local cleanup=""
  if [ "$way" = sigkill ]; then
    sleep 0.5
    state > "$WORK/killed"
    timeout 60 "$IOLAB" kernel cleanup > "$WORK/cleanup" 2>&1
    cleanup=" cleanup rc=$? ($(grep -c '^  ' "$WORK/cleanup") changes put back)"
  fi
  state > "$WORK/after-$way"
  local same=same
  if ! diff -u "$WORK/before-$way" "$WORK/after-$way" > "$WORK/diff-$way"; then
    same=DIFFERENT; status=1
  fi
  printf '| %-13s | iolab rc=%-3s%s | %3ss | %s |\n' "$way" "$rc" "$cleanup" "$((SECONDS - t0))" "$same"
}

status=0
echo "| way the run ends | exit | time | state after vs before |"
echo "|---|---|---|---|"
for way in complete sigint sigterm sighup-group sigkill; do
  run_way "$way"
done
for way in complete sigint sigterm sighup-group sigkill; do
  if [ -s "$WORK/diff-$way" ]; then
    echo "== $way: state differs"; cat "$WORK/diff-$way"; echo "-- iolab said:"; cat "$WORK/log-$way"
  fi
done
if [ -f "$WORK/killed" ]; then
  echo "== left by SIGKILL, before cleanup (against the state before):"
  diff "$WORK/before-sigkill" "$WORK/killed" | grep '^[<>]'
  echo "== iolab kernel cleanup said:"; cat "$WORK/cleanup"
fi
echo "== what iolab said last, each way:"; cat "$WORK/said"
echo "== the state each way was compared on (before the complete run):"
cat "$WORK/before-complete"
exit $status
