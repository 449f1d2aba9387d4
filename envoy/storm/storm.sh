#!/usr/bin/env bash
# Load with a forget storm through real Envoy (2 workers): starts envoy/run.sh
# on free ports with its own state dir, runs storm.py, stops what it started.
#
#   envoy/storm/storm.sh          60 s of load (the issue's mode)
#   envoy/storm/storm.sh --ci     a short run (10 s) for CI
#   envoy/storm/storm.sh SECONDS  any length
#
# Prints requests, forgets and violations; exits 1 on any violation.
set -euo pipefail
LATET_LOG_TAG=storm
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds=60
case "${1:-}" in
  --ci) seconds=10 ;;
  "") ;;
  *) seconds="$1" ;;
esac

state="$(mktemp -d /tmp/latet-storm.XXXXXX)"
export LATET_STATE_DIR="$state"
export LATET_LISTEN_PORT="$(free_port)" LATET_ADMIN_PORT="$(free_port)"
export LATET_CONTROL_PORT="$(free_port)" LATET_FAKE_LLM_PORT="$(free_port)"

run_pid=""
cleanup() {
  if [[ -n "$run_pid" ]]; then
    kill -TERM "$run_pid" 2>/dev/null || true
    wait "$run_pid" 2>/dev/null || true
  fi
  rm -rf "$state"
}
trap cleanup EXIT

"$root/envoy/run.sh" >"$state/run.out" 2>"$state/run.err" &
run_pid=$!
wait_ready_line "$state/run.out" "$run_pid" "${LATET_READY_TIMEOUT:-600}" "$state/run.err" ||
  latet_die "run.sh did not get ready"

python3 "$here/storm.py" --gateway "$LATET_LISTEN_PORT" --control "$LATET_CONTROL_PORT" \
  --fake "$LATET_FAKE_LLM_PORT" --admin-token "$(cat "$state/admin.token")" --seconds "$seconds"
