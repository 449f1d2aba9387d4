#!/usr/bin/env bash
# The forget story on real Envoy with two control replicas, one killed
# mid-run. Starts, on free ports and in a fresh state directory:
#   - a throwaway PostgreSQL cluster (scripts/pg-test-cluster.sh),
#   - two `latet serve --db postgres://…` replicas, A and B, sharing it, the
#     master key (--master-key-file) and the admin token (A makes it, B
#     reads the same file),
#   - the fake LLM, and Envoy from envoy/gateway.yaml.in with both replicas
#     in its control cluster (round-robin, health checks, outlier detection).
# Then runs the story (envoy/fake-llm/tests/gateway_e2e.rs, replica_story_*):
#   1. a value masked through Envoy and restored;
#   2. SIGKILL to the replica the sync service's feed long-poll is parked on
#      (Envoy's admin /clusters shows that request active on it: the kill
#      cuts it), checked gone from Envoy's rotation;
#   3. the value forgotten with the CLI through the survivor: gone from its
#      snapshot, the gateway stops restoring the old surrogate and masks the
#      value with a new-generation one within 15 s, in every API.
# Fails if a test value reached a log. Stops everything it started (by pid)
# and removes the state directory and the cluster on exit, failure included.
#
# usage: envoy/replicas.sh   (LATET_REPLICAS_KEEP=1 keeps the state directory)
set -euo pipefail
LATET_LOG_TAG=replicas
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

state="$(mktemp -d /tmp/latet-replicas.XXXXXX)"
pg_dir="$(mktemp -u /tmp/latet-replicas-pg.XXXXXX)"
mkdir -p "$state/logs" "$state/pids"
logs="$state/logs"
LATET_PID_DIR="$state/pids"

finish() {
  local status=$?
  trap '' INT TERM
  set +e
  latet_stop_all
  bash "$LATET_ROOT/scripts/pg-test-cluster.sh" stop "$pg_dir"
  if ((status != 0)); then
    for log in "$logs"/*.log; do
      [[ -f "$log" ]] || continue
      latet_log "--- $log (last lines)"
      tail -n 15 "$log" >&2
    done
  fi
  if [[ "${LATET_REPLICAS_KEEP:-}" == 1 ]]; then
    latet_log "state kept in $state"
  else
    rm -rf "$state"
  fi
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- build (cargo is a no-op when current) ------------------------------------
t0=$SECONDS
envoy="$(envoy_binary)"
latet="$(build_latet_binary)"
fake_llm="$(build_fake_llm)"
LATET_WASM="$(build_filter_wasm)"
(cd "$LATET_ROOT" && cargo test -q -p latet-fake-llm --test gateway_e2e --no-run) >&2
latet_log "built in $((SECONDS - t0)) s"
t_run=$SECONDS

# --- the database and the two replicas ---------------------------------------
db_url="$(bash "$LATET_ROOT/scripts/pg-test-cluster.sh" start "$pg_dir")"
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$state/master.key")
port_a="$(free_port)"
port_b="$(free_port)"

# start_replica NAME PORT: `latet serve` on the shared database; waits until
# it answers.
start_replica() {
  local name="$1" port="$2"
  latet_start "$name" "$logs/$name.log" "$latet" serve --db "$db_url" \
    --listen "127.0.0.1:$port" --master-key-file "$state/master.key" \
    --admin-token-file "$state/admin.token"
  wait_http "http://127.0.0.1:$port/" 60 "${LATET_PIDS[-1]}" || latet_die "$name did not start"
}
# A first: it makes the admin token; B then reads the same file.
start_replica control-a "$port_a"
start_replica control-b "$port_b"
latet_log "replicas: control-a on $port_a, control-b on $port_b"
"$latet" server --server "http://127.0.0.1:$port_a" --admin-token-file "$state/admin.token" \
  keys create demo --out "$state/demo.gateway.token" --force >>"$logs/control-cli.log" 2>&1 ||
  latet_die "could not create key demo"

# --- the fake LLM and Envoy -----------------------------------------------------
fake_port="$(free_port)"
latet_start fake-llm "$logs/fake-llm.log" "$fake_llm" --listen "127.0.0.1:$fake_port" \
  --chunk-delay-ms 1
wait_http "http://127.0.0.1:$fake_port/_fake/health" 30 "${LATET_PIDS[-1]}" ||
  latet_die "the fake LLM did not start"

LATET_LISTEN_PORT="$(free_port)"
LATET_ADMIN_PORT="$(free_port)"
LATET_CONTROL_PORT="$port_a"
LATET_BODY_LIMIT_BYTES=4194304
LATET_UPSTREAM_HOST=127.0.0.1
LATET_UPSTREAM_PORT="$fake_port"
LATET_UPSTREAM_TRANSPORT_SOCKET="$(upstream_transport_socket plain)"
LATET_CONTROL_TRANSPORT_SOCKET="$(control_transport_socket plain)"
LATET_CONTROL_ENDPOINTS="$(control_endpoints "$port_a" "$port_b")"
export LATET_LISTEN_PORT LATET_ADMIN_PORT LATET_CONTROL_PORT LATET_BODY_LIMIT_BYTES \
  LATET_UPSTREAM_HOST LATET_UPSTREAM_PORT LATET_UPSTREAM_TRANSPORT_SOCKET \
  LATET_CONTROL_TRANSPORT_SOCKET LATET_CONTROL_ENDPOINTS LATET_WASM
render_template "$LATET_ENVOY_DIR/gateway.yaml.in" "$state/envoy.yaml"
admin="http://127.0.0.1:$LATET_ADMIN_PORT"
gateway="http://127.0.0.1:$LATET_LISTEN_PORT"
LATET_GATEWAY_TOKEN="$(cat "$state/demo.gateway.token")" \
  latet_start envoy "$logs/envoy.log" "$envoy" -c "$state/envoy.yaml" \
  --concurrency 2 --disable-hot-restart -l info
envoy_pid="${LATET_PIDS[-1]}"
wait_http "$admin/ready" 60 "$envoy_pid" || latet_die "Envoy did not get ready"

# cluster_stat PORT STAT: a stat of replica PORT in Envoy's control cluster.
cluster_stat() {
  curl -fsS --max-time 2 "$admin/clusters" |
    sed -n "s/^latet_control::127\\.0\\.0\\.1:$1::$2:://p"
}

# The filter holds its vault once a request without a value answers 200.
round_trip() {
  curl -fsS -o /dev/null --max-time 5 "$gateway/v1/chat/completions" \
    -H 'content-type: application/json' \
    -d '{"model":"probe","messages":[{"role":"user","content":"ready?"}]}' 2>/dev/null
}
wait_for 60 round_trip || latet_die "the gateway did not load its vault"
latet_log "gateway ready in $((SECONDS - t_run)) s"

export LATET_E2E_GATEWAY="$gateway" LATET_E2E_ADMIN="$admin"
export LATET_E2E_FAKE="http://127.0.0.1:$fake_port"
export LATET_E2E_STATE="$state" LATET_E2E_LATET_BIN="$latet"
story() {
  (cd "$LATET_ROOT" && cargo test -q -p latet-fake-llm --test gateway_e2e -- \
    --ignored --exact "$1" --nocapture)
}

# 1. Masked and restored with both replicas up.
export LATET_E2E_CONTROL="http://127.0.0.1:$port_a"
story replica_story_1_mask_and_restore

# 2. Kill the replica the feed long-poll is parked on. Both serve the feed
# in turn (round-robin); the one holding it now is the one with a request
# in flight when no agent request is (what the gateway sends on its own is
# only the feed's long-poll; the health checks are not requests here).
parked=""
parked_on() {
  local port
  for port in "$port_a" "$port_b"; do
    if [[ "$(cluster_stat "$port" rq_active)" == 1 ]]; then
      parked="$port"
      return 0
    fi
  done
  return 1
}
wait_for 30 parked_on || latet_die "no feed long-poll parked on either replica"
if [[ "$parked" == "$port_a" ]]; then
  victim=control-a survivor_port="$port_b"
else
  victim=control-b survivor_port="$port_a"
fi
# feed_errors: the sync service's failed feed calls so far.
feed_errors() {
  curl -fsS --max-time 2 "$admin/stats?filter=^wasmcustom\.latet_feed_errors_total\$" |
    sed -n 's/^wasmcustom\.latet_feed_errors_total: //p'
}
errors_before="$(feed_errors)"
victim_pid="$(cat "$LATET_PID_DIR/$victim.pid")"
latet_log "the feed long-poll is parked on $victim (port $parked): SIGKILL to it (pid $victim_pid)"
t_kill=$SECONDS
kill -KILL "$victim_pid"
latet_stop_pid "$victim_pid" "$victim"
for i in "${!LATET_PIDS[@]}"; do
  [[ "${LATET_PIDS[$i]}" != "$victim_pid" ]] || LATET_PIDS[i]=""
done
# Envoy takes it out of the rotation (outlier detection on the cut
# long-poll, or the health check): bounded.
out_of_rotation() {
  [[ "$(cluster_stat "$parked" health_flags)" == *failed* ]]
}
wait_for 10 out_of_rotation || latet_die "Envoy still sends to the killed replica after 10 s"
latet_log "Envoy took $victim out of rotation ($(cluster_stat "$parked" health_flags)) within $((SECONDS - t_kill)) s"
# The kill cut the parked long-poll: the sync service counts a failed feed call.
feed_call_cut() {
  local now
  now="$(feed_errors)"
  ((${now:-0} > ${errors_before:-0}))
}
wait_for 5 feed_call_cut || latet_die "no feed call failed: the long-poll was not on $victim"

# 3. Forgotten through the survivor; the gateway hears of it from there.
export LATET_E2E_CONTROL="http://127.0.0.1:$survivor_port"
t_forget=$SECONDS
story replica_story_2_forget_through_the_survivor
latet_log "forget story through the survivor passed in $((SECONDS - t_forget)) s"
latet_log "feed calls failed: ${errors_before:-0} before the kill, $(feed_errors) after"

# Every test value holds "e2e-acme".
if grep -rl "e2e-acme" "$logs" "$pg_dir/server.log" >&2; then
  latet_die "FAIL: a test value reached the logs above"
fi
latet_log "passed in $((SECONDS - t_run)) s (builds aside); no test value in the logs"
