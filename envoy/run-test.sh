#!/usr/bin/env bash
# Tests envoy/run.sh as a tool people keep running, on free ports with a
# fresh state directory:
#   1. `run.sh 2>&1 | tee run.log`, then SIGINT to its process group (what
#      Ctrl-C in a terminal does: tee ends too): the control service, the
#      fake LLM and Envoy are gone; while it ran, a second run.sh on the
#      same state directory was refused with a message naming the first;
#   2. the same with SIGTERM to run.sh alone (what a supervisor sends);
#   3. a second build of the filter does not run wasm-opt again.
# Prebuilt binaries are used when LATET_BIN, LATET_WASM and
# LATET_FAKE_LLM_BIN are set (the test command's debug builds); otherwise
# they are built first.
#
# usage: envoy/run-test.sh   (LATET_RUN_TEST_KEEP=1 keeps the state directories)
set -euo pipefail
LATET_LOG_TAG=run-test
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LATET_BIN="${LATET_BIN:-$(build_latet_binary)}"
LATET_WASM="${LATET_WASM:-$(build_filter_wasm)}"
LATET_FAKE_LLM_BIN="${LATET_FAKE_LLM_BIN:-$(build_fake_llm)}"
export LATET_BIN LATET_WASM LATET_FAKE_LLM_BIN
export LATET_UPSTREAM=fake

work="$(mktemp -d /tmp/latet-run-test.XXXXXX)"
# Whatever a failed case left running: its parts, by their recorded pids.
leftover_pids=()
finish() {
  local status=$?
  local pid
  for pid in "${leftover_pids[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
  done
  if ((status != 0)); then
    for log in "$work"/*/run.log "$work"/*/logs/*.log; do
      [[ -f "$log" ]] || continue
      latet_log "--- $log (last lines)"
      tail -n 20 "$log" >&2 || true
    done
  fi
  if [[ -z "${LATET_RUN_TEST_KEEP:-}" ]]; then
    rm -rf "$work"
  else
    latet_log "kept $work"
  fi
}
trap finish EXIT

# Background jobs get their own process group (as a terminal's jobs do),
# so that a signal can go to the whole pipeline.
set -m

# start_piped NAME: starts `run.sh 2>&1 | tee $work/NAME/run.log` on free
# ports, in its own process group, SIGINT at its default (a background job
# of a script would ignore it, and run.sh could not undo that); sets
# `group` (the pipeline's process group) and `state`.
start_piped() {
  state="$work/$1"
  mkdir -p "$state"
  LATET_STATE_DIR="$state" LATET_LISTEN_PORT="$(free_port)" LATET_ADMIN_PORT="$(free_port)" \
    LATET_CONTROL_PORT="$(free_port)" LATET_FAKE_LLM_PORT="$(free_port)" \
    python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp("bash", ["bash", "-c", sys.argv[1]])' \
    "'$LATET_ENVOY_DIR/run.sh' 2>&1 | tee '$state/run.log' >/dev/null" &
  group=$!
}

# wait_ready: until run.log says `ready` (fails if the pipeline ended).
wait_ready() {
  wait_ready_line "$state/run.log" "$group" || latet_die "run.sh did not get ready"
}

# part_pids: sets `pids` to the parts now running (pids/<part>.pid).
part_pids() {
  local file
  pids=()
  for file in "$state"/pids/*.pid; do
    [[ -f "$file" ]] && pids+=("$(cat "$file")")
  done
  ((${#pids[@]} == 3)) || latet_die "expected 3 parts running, found ${#pids[@]}"
  leftover_pids+=("${pids[@]}")
}

# all_gone PID...: every PID has exited within 20 s.
all_gone() {
  local deadline=$((SECONDS + 20)) pid alive
  while true; do
    alive=()
    for pid in "$@"; do
      kill -0 "$pid" 2>/dev/null && alive+=("$pid")
    done
    ((${#alive[@]} == 0)) && return 0
    if ((SECONDS >= deadline)); then
      latet_log "still running: ${alive[*]} ($(ps -o comm= -p "${alive[*]// /,}" | tr '\n' ' '))"
      return 1
    fi
    sleep 0.1
  done
}

# --- 1. piped into tee, SIGINT to the process group ------------------------
start_piped int
wait_ready
part_pids
run_pid="$(tr -cd '0-9' <"$state/run.lock")"
[[ -n "$run_pid" ]] || latet_die "run.lock holds no pid"

# A second run on the same state directory is refused, naming the first,
# and leaves the first running.
set +e
second="$(LATET_STATE_DIR="$state" "$LATET_ENVOY_DIR/run.sh" 2>&1 >/dev/null)"
second_status=$?
set -e
((second_status != 0)) || latet_die "a second run.sh on one state directory was not refused"
[[ "$second" == *"another run.sh (pid $run_pid) is running on $state"* ]] ||
  latet_die "the second run.sh did not name the first: $second"
for pid in "${pids[@]}"; do
  kill -0 "$pid" 2>/dev/null || latet_die "the refused second run stopped part $pid"
done
latet_log "a second run.sh on the same state directory: refused"

kill -INT -- "-$group"
all_gone "${pids[@]}" "$run_pid" || latet_die "SIGINT to run.sh | tee left processes running"
latet_log "run.sh | tee, SIGINT to the group: control, fake LLM and Envoy stopped"

# --- 2. piped into tee, SIGTERM to run.sh alone -------------------------------
start_piped term
wait_ready
part_pids
run_pid="$(tr -cd '0-9' <"$state/run.lock")"
kill -TERM "$run_pid"
all_gone "${pids[@]}" "$run_pid" || latet_die "SIGTERM to run.sh left processes running"
# The lock went with them: the directory can be run again at once.
flock -n "$state/run.lock" true || latet_die "run.lock still held after the stop"
latet_log "run.sh | tee, SIGTERM to run.sh: everything stopped, the lock released"
wait "$group" 2>/dev/null || true

# --- 3. an unchanged filter is not optimised again --------------------------
if [[ -f "$LATET_ROOT/plugin/build.sh" ]]; then
  opt="$(bash "$LATET_ROOT/plugin/build.sh" 2>/dev/null | tail -n 1)"
  before="$(date -r "$opt" +%s%N)"
  again="$(bash "$LATET_ROOT/plugin/build.sh" 2>&1)"
  [[ "$again" == *"wasm-opt not run"* ]] || latet_die "wasm-opt ran again on an unchanged .wasm: $again"
  [[ "$(date -r "$opt" +%s%N)" == "$before" ]] ||
    latet_die "the optimised .wasm was rewritten"
  latet_log "an unchanged .wasm: wasm-opt not run again"
fi
latet_log "ok"
