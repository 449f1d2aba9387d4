#!/usr/bin/env bash
# End-to-end tests on real Envoy: starts envoy/run.sh on free ports with a
# fresh state directory, runs the gateway tests
# (envoy/fake-llm/tests/gateway_e2e.rs, ignored by a plain `cargo test`),
# then the providers' official Python SDKs against the gateway
# (envoy/sdk-tests/, in the venv scripts/setup.sh makes), checks that every
# metric the Grafana dashboard (envoy/grafana/) queries is exported; then
# starts it once more with the control service over TLS (LATET_CONTROL_TLS=1:
# a throwaway CA, Envoy's control cluster over TLS) and runs the forget story
# there; checks that no test value reached a log, and stops everything.
#
# usage: envoy/e2e.sh   (LATET_E2E_KEEP=1 keeps the state directory)
set -euo pipefail
LATET_LOG_TAG=e2e
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

state="$(mktemp -d /tmp/latet-gateway-test.XXXXXX)"
# The second run (control service over TLS) has its own state directory.
tls_state="$state/tls-run"
export LATET_UPSTREAM=fake
# The first run: the control service in plain HTTP, whatever the caller's
# environment says (the second sets it to 1).
export LATET_CONTROL_TLS=0
# One test stops the control service on purpose and starts another.
export LATET_RUN_MAY_EXIT=control

# Build first, so that run.sh's readiness time is start time only.
t0=$SECONDS
LATET_BIN="$(build_latet_binary)"
LATET_WASM="$(build_filter_wasm)"
LATET_FAKE_LLM_BIN="$(build_fake_llm)"
export LATET_BIN LATET_WASM LATET_FAKE_LLM_BIN
latet_log "built in $((SECONDS - t0)) s"

run_pid=""
finish() {
  # The control service a test started again is not run.sh's to stop.
  if [[ -s "$state/pids/control-restarted.pid" ]]; then
    kill -TERM "$(cat "$state/pids/control-restarted.pid")" 2>/dev/null || true
  fi
  stop_gateway
  if [[ "${LATET_E2E_KEEP:-}" == 1 ]]; then
    latet_log "state kept in $state"
  else
    rm -rf "$state"
  fi
}
trap finish EXIT

# start_gateway DIR: run.sh on fresh free ports with state directory DIR;
# waits for `ready`, sets run_pid and exports the LATET_E2E_* addresses.
start_gateway() {
  local dir="$1" t1=$SECONDS scheme=http
  mkdir -p "$dir"
  export LATET_STATE_DIR="$dir"
  LATET_LISTEN_PORT="$(free_port)"
  LATET_ADMIN_PORT="$(free_port)"
  LATET_CONTROL_PORT="$(free_port)"
  LATET_FAKE_LLM_PORT="$(free_port)"
  export LATET_LISTEN_PORT LATET_ADMIN_PORT LATET_CONTROL_PORT LATET_FAKE_LLM_PORT
  "$LATET_ENVOY_DIR/run.sh" >"$dir/run.out" 2>"$dir/run.err" &
  run_pid=$!
  wait_ready_line "$dir/run.out" "$run_pid" "" "$dir/run.err" || latet_die "run.sh did not get ready"
  latet_log "gateway ready in $((SECONDS - t1)) s"
  [[ "${LATET_CONTROL_TLS:-0}" == 1 ]] && scheme=https
  export LATET_E2E_GATEWAY="http://127.0.0.1:$LATET_LISTEN_PORT"
  export LATET_E2E_ADMIN="http://127.0.0.1:$LATET_ADMIN_PORT"
  export LATET_E2E_CONTROL="$scheme://127.0.0.1:$LATET_CONTROL_PORT"
  export LATET_E2E_FAKE="http://127.0.0.1:$LATET_FAKE_LLM_PORT"
  export LATET_E2E_STATE="$dir"
  export LATET_E2E_LATET_BIN="$LATET_BIN"
}

# stop_gateway: stops the running run.sh (and so everything it started).
stop_gateway() {
  if [[ -n "$run_pid" ]] && kill -0 "$run_pid" 2>/dev/null; then
    kill -TERM "$run_pid" 2>/dev/null || true
    wait "$run_pid" 2>/dev/null || true
  fi
  run_pid=""
}

start_gateway "$state"
status=0
# The replica_story_* tests are envoy/replicas.sh's (two control replicas).
(cd "$LATET_ROOT" && cargo test -q -p latet-fake-llm --test gateway_e2e -- --ignored --test-threads 1 \
  --skip replica_story_) || status=$?

# The SDKs, unchanged, pointed at the gateway by base URL.
sdk_python="$LATET_ENVOY_DIR/sdk-tests/.venv/bin/python"
if [[ -x "$sdk_python" ]]; then
  (cd "$LATET_ENVOY_DIR/sdk-tests" && "$sdk_python" -m pytest -q -p no:cacheprovider) || status=$?
else
  latet_log "FAIL: no SDK venv at envoy/sdk-tests/.venv: run scripts/setup.sh"
  status=1
fi

# The Grafana dashboard queries only metrics this running Envoy exports.
python3 "$LATET_ENVOY_DIR/grafana/check-dashboard.py" "$LATET_E2E_ADMIN" || status=$?

if [[ -s "$state/pids/control-restarted.pid" ]]; then
  kill -TERM "$(cat "$state/pids/control-restarted.pid")" 2>/dev/null || true
fi
stop_gateway

# Once more with the control service over TLS: the forget story only (the
# snapshot, the events and the entries all go through Envoy's TLS cluster;
# run.sh's readiness already needed the snapshot). The CLI the test runs
# finds the CA in LATET_CA_CERT, as an operator's would.
latet_log "the forget story with the control service over TLS"
export LATET_CONTROL_TLS=1
start_gateway "$tls_state"
export LATET_CA_CERT="$tls_state/tls/ca.pem"
(cd "$LATET_ROOT" && cargo test -q -p latet-fake-llm --test gateway_e2e -- --ignored --exact \
  forget_gives_a_new_surrogate_and_retires_the_old) || status=$?
# Envoy did speak TLS to it: handshakes on the control cluster, none failed.
tls_stats="$(curl -fsS -G --data-urlencode 'filter=^cluster\.latet_control\.ssl\.(handshake|connection_error|fail_verify)' "$LATET_E2E_ADMIN/stats" || true)"
if [[ "$(sed -n 's/^cluster\.latet_control\.ssl\.handshake: //p' <<<"$tls_stats")" -ge 1 ]] &&
  ! grep -qE '(connection_error|fail_verify[a-z_]*): [1-9]' <<<"$tls_stats"; then
  latet_log "control over TLS: $(tr '\n' ' ' <<<"$tls_stats")"
else
  latet_log "FAIL: Envoy's control cluster shows no clean TLS handshake: $(tr '\n' ' ' <<<"$tls_stats")"
  status=1
fi
stop_gateway
unset LATET_CA_CERT LATET_CONTROL_TLS

# Every test value holds "e2e-acme" (its company domain is a value too).
# The logs of both runs.
logs=("$state/logs" "$tls_state/logs")
if grep -rl "e2e-acme" "${logs[@]}" >&2; then
  latet_log "FAIL: a test value reached the logs above"
  status=1
elif grep -rlE "Fernández|Ortuño|Müllerhoff" "${logs[@]}" >&2; then
  # The person names of gateway_e2e.rs (NAMES_TEXT).
  latet_log "FAIL: a test name reached the logs above"
  status=1
elif grep -rlE "4111 ?1111 ?1111 ?1111|DE89 ?3704 ?0044" "${logs[@]}" >&2; then
  # The card number and IBAN of sdk-tests/test_sdks.py.
  latet_log "FAIL: a test card number or IBAN reached the logs above"
  status=1
else
  latet_log "no test value in the logs of either run"
fi
exit "$status"
