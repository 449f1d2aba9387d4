#!/usr/bin/env bash
# Fault tests on real Envoy, each outcome asserted (rule H1,
# docs/product-rules.md#h1):
#
# 1. A VM crash under FAIL_CLOSED. The filter is built with the test-only
#    cargo feature `fault-probe` (plugin/src/fault_probe.rs) into its own
#    target directory (never the .wasm plugin/build.sh ships): a request
#    carrying `x-latet-fault: crash` aborts the VM. Envoy runs one worker
#    (--concurrency 1). Then: the crash request gets 503 and the fake LLM
#    records nothing; the next requests, carrying a vault value, get 503 and
#    nothing reaches the fake LLM (never an unmasked forward); Envoy's log
#    names the crash and holds no value.
# 2. Envoy restarted while the control service holds a new forget. A value
#    is masked (surrogate S1); Envoy is stopped; the value is forgotten
#    through the apps API; Envoy is started again and, at once (no wait for
#    the feed), an answer echoing S1 is asked for until one is served:
#    every answer is either 503 `latet_vault_not_ready` (the vault is still
#    loading: plugin/README.md) or S1 left as written — never the value.
#    The value sent again gets a new surrogate S2 != S1, which restores.
#
# usage: envoy/faults.sh   (LATET_FAULTS_KEEP=1 keeps the state directory)
# Every value here holds "e2e-acme"; the script fails if one reached a log.
set -euo pipefail
LATET_LOG_TAG=faults
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

state="$(mktemp -d /tmp/latet-faults.XXXXXX)"
mkdir -p "$state/logs" "$state/pids"
logs="$state/logs"
LATET_LISTEN_PORT="$(free_port)"
LATET_ADMIN_PORT="$(free_port)"
LATET_CONTROL_PORT="$(free_port)"
fake_port="$(free_port)"
export LATET_LISTEN_PORT LATET_ADMIN_PORT LATET_CONTROL_PORT
export LATET_BODY_LIMIT_BYTES=1048576
export LATET_UPSTREAM_HOST=127.0.0.1 LATET_UPSTREAM_PORT="$fake_port"
LATET_UPSTREAM_TRANSPORT_SOCKET="$(upstream_transport_socket plain)"
LATET_CONTROL_TRANSPORT_SOCKET="$(control_transport_socket plain)"
LATET_CONTROL_ENDPOINTS="$(control_endpoints "$LATET_CONTROL_PORT")"
export LATET_UPSTREAM_TRANSPORT_SOCKET LATET_CONTROL_TRANSPORT_SOCKET LATET_CONTROL_ENDPOINTS
gateway="http://127.0.0.1:$LATET_LISTEN_PORT"
admin="http://127.0.0.1:$LATET_ADMIN_PORT"
control="http://127.0.0.1:$LATET_CONTROL_PORT"
fake="http://127.0.0.1:$fake_port"
LATET_PID_DIR="$state/pids"

failures=0
fail() {
  latet_log "FAIL: $*"
  failures=$((failures + 1))
}
pass() { latet_log "ok: $*"; }

finish() {
  latet_stop_all
  if [[ "${LATET_FAULTS_KEEP:-}" == 1 ]]; then
    latet_log "state kept in $state"
  else
    rm -rf "$state"
  fi
}
trap finish EXIT

# --- build -----------------------------------------------------------------
t0=$SECONDS
envoy="$(envoy_binary)"
latet="$(build_latet_binary)"
fake_llm="$(build_fake_llm)"
ensure_wasm_target
probe_dir="$(latet_target_dir)/fault-probe"
(cd "$LATET_ROOT" && cargo build -q -p latet-filter --release --target wasm32-wasip1 \
  --features fault-probe --target-dir "$probe_dir") >&2
export LATET_WASM="$probe_dir/wasm32-wasip1/release/latet_filter.wasm"
latet_log "built in $((SECONDS - t0)) s (probe filter: $LATET_WASM)"
t_tests=$SECONDS

# --- helpers -----------------------------------------------------------------
# answers URL: any HTTP answer at all within 2 s.
answers() {
  local code
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1" 2>/dev/null || true)"
  [[ -n "$code" && "$code" != 000 ]]
}

# json FILE PYTHON-EXPR: evaluates EXPR with `d` the parsed JSON of FILE
# (prints "" when the file is not JSON or the expression fails).
json() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    v = eval(sys.argv[2])
except Exception:
    v = ""
print(v if isinstance(v, str) else json.dumps(v))
EOF
}

prefix="Please write to "
suffix=" before noon."

# chat TEXT OUT [CURL ARGS...]: sends TEXT as a chat request through Envoy,
# the answer's body in OUT; prints the status (000: no answer).
chat() {
  local text="$1" out="$2"
  shift 2
  python3 -c 'import json, sys; print(json.dumps({"model": "m", "messages": [{"role": "user", "content": sys.argv[1]}]}))' \
    "$text" >"$state/request.json"
  curl -s -o "$out" -w '%{http_code}' --max-time 10 "$gateway/v1/chat/completions" \
    -H 'content-type: application/json' "$@" --data-binary "@$state/request.json" || true
}

# The user text of the last request the fake LLM received.
provider_saw() {
  curl -fsS "$fake/_fake/requests/last" -o "$state/last.json"
  json "$state/last.json" 'd["body"]["messages"][0]["content"] if "body" in d else d["messages"][0]["content"]'
}

# How many requests the fake LLM received since it was last cleared.
provider_count() {
  curl -fsS "$fake/_fake/requests" -o "$state/requests.json"
  json "$state/requests.json" 'len(d)'
}

answer_text() { json "$1" 'd["choices"][0]["message"]["content"]'; }

fresh_email() { printf '%s.%s@latet-faults-e2e-acme.it\n' "$1" "$(date +%s%N | tail -c 10)"; }

surrogate_in() {
  local seen="$1"
  seen="${seen#"$prefix"}"
  printf '%s\n' "${seen%"$suffix"}"
}

start_envoy() {
  render_template "$LATET_ENVOY_DIR/gateway.yaml.in" "$state/envoy.yaml"
  LATET_GATEWAY_TOKEN="$(cat "$state/demo.gateway.token")"
  export LATET_GATEWAY_TOKEN
  latet_start envoy "$logs/envoy.log" "$envoy" -c "$state/envoy.yaml" \
    --concurrency 1 --disable-hot-restart -l info
  unset LATET_GATEWAY_TOKEN
  envoy_pid="${LATET_PIDS[-1]}"
}

stop_envoy() {
  latet_stop_pid "$envoy_pid" envoy
  local i
  for i in "${!LATET_PIDS[@]}"; do
    [[ "${LATET_PIDS[$i]}" != "$envoy_pid" ]] || LATET_PIDS[i]=""
  done
}

# Waits until the filter holds its vault (a request without a value answers
# 200), then clears the fake LLM's request log.
wait_vault() {
  local ok=0
  for _ in $(seq 300); do
    if [[ "$(chat "ready?" /dev/null)" == 200 ]]; then
      ok=1
      break
    fi
    sleep 0.05
  done
  ((ok)) || latet_die "the filter did not serve within 15 s; see $logs"
  curl -fsS -o /dev/null -X DELETE "$fake/_fake/requests"
}

# --- start: control service, key and tokens, fake LLM, Envoy --------------------
latet_start control "$logs/control.log" "$latet" serve --db "$state/latet.db" \
  --listen "127.0.0.1:$LATET_CONTROL_PORT" --admin-token-file "$state/admin.token"
wait_for 60 answers "$control/" || latet_die "control service did not answer"
wait_for 30 test -s "$state/admin.token" || latet_die "no admin token"
cli=("$latet" server --server "$control" --admin-token-file "$state/admin.token")
"${cli[@]}" keys create demo --out "$state/demo.gateway.token" >>"$logs/control-cli.log" 2>&1 ||
  latet_die "could not create key demo"
"${cli[@]}" keys add-token demo faults-forget --forget --out "$state/forget.token" \
  >>"$logs/control-cli.log" 2>&1 || latet_die "could not add a forget token"
latet_start fake-llm "$logs/fake-llm.log" "$fake_llm" --listen "127.0.0.1:$fake_port" \
  --chunk-delay-ms 0
wait_for 30 answers "$fake/_fake/health" || latet_die "fake LLM did not answer"
start_envoy
wait_for 60 answers "$admin/ready" || latet_die "envoy did not start; see $logs"
wait_vault

# --- 1. a VM crash under FAIL_CLOSED -----------------------------------------------
t1=$SECONDS
value="$(fresh_email crash)"
text="$prefix$value$suffix"
status="$(chat "$text" "$state/answer.json")"
seen="$(provider_saw)"
if [[ "$status" == 200 && "$seen" != *"$value"* && "$(answer_text "$state/answer.json")" == "$text" ]]; then
  pass "before the crash: the value is masked upstream and restored"
else
  fail "before the crash: status $status, or the provider saw the value, or the answer was not restored"
fi
curl -fsS -o /dev/null -X DELETE "$fake/_fake/requests"

status="$(chat "$text" "$state/answer.json" -H 'x-latet-fault: crash')"
[[ "$status" == 503 ]] && pass "the crash request: 503" || fail "the crash request: status $status, not 503"
count="$(provider_count)"
[[ "$count" == 0 ]] && pass "the crash request: nothing upstream" || fail "the crash request: the provider received $count requests"

for attempt in 1 2 3; do
  status="$(chat "$text" "$state/answer.json")"
  [[ "$status" == 503 ]] || fail "after the crash, request $attempt with a vault value: status $status, not 503"
done
count="$(provider_count)"
if [[ "$count" == 0 ]]; then
  pass "after the crash: 3 requests with a vault value answered 503, nothing upstream"
else
  fail "after the crash: the provider received $count requests (unmasked forward?)"
fi
kill -0 "$envoy_pid" 2>/dev/null && pass "Envoy itself still runs" || fail "Envoy exited"

sleep 0.2 # Envoy's log is written asynchronously
if grep -q "latet fault probe: aborting the VM" "$logs/envoy.log" &&
  grep -q "Function: proxy_on_request_headers failed" "$logs/envoy.log"; then
  pass "Envoy's log names the crash"
else
  fail "Envoy's log does not name the crash"
fi
latet_log "crash test: $((SECONDS - t1)) s"

# --- 2. Envoy restarted while the control service holds a new forget --------------
t2=$SECONDS
stop_envoy
start_envoy
wait_for 60 answers "$admin/ready" || latet_die "envoy did not start again; see $logs"
wait_vault

value="$(fresh_email restart)"
text="$prefix$value$suffix"
status="$(chat "$text" "$state/answer.json")"
seen="$(provider_saw)"
s1="$(surrogate_in "$seen")"
if [[ "$status" == 200 && -n "$s1" && "$s1" != "$seen" && "$s1" != "$value" &&
  "$(answer_text "$state/answer.json")" == "$text" ]]; then
  pass "the value is masked (S1) and restored"
else
  fail "the value was not masked and restored (status $status)"
fi

stop_envoy
printf '{"values": [%s]}' "$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$value")" \
  >"$state/forget.json"
status="$(curl -s -o "$state/forgotten.json" -w '%{http_code}' -X POST "$control/_latet/apps/v1/forget" \
  -H "authorization: Bearer $(cat "$state/forget.token")" -H 'content-type: application/json' \
  --data-binary "@$state/forget.json")"
if [[ "$status" == 200 && "$(json "$state/forgotten.json" 'd["forgotten"]')" == 1 ]]; then
  pass "forgotten at the control service while Envoy was down"
else
  fail "the forget answered $status"
fi

start_envoy
# At once: no wait for /ready nor for the feed. Every answer is a 503 while
# the vault loads, or S1 left as written.
echo_text="$prefix$s1$suffix"
not_ready=0 refused=0 served=0
deadline=$((SECONDS + 30))
while ((SECONDS < deadline)); do
  status="$(chat "$echo_text" "$state/answer.json")"
  case "$status" in
    000) refused=$((refused + 1)) ;; # the listener is not up yet
    503)
      if [[ "$(json "$state/answer.json" 'd["error"]["type"]')" == latet_vault_not_ready ]]; then
        not_ready=$((not_ready + 1))
      else
        fail "after the restart: a 503 that is not latet_vault_not_ready"
        break
      fi
      ;;
    200)
      served=1
      break
      ;;
    *)
      fail "after the restart: status $status"
      break
      ;;
  esac
  sleep 0.01
done
latet_log "after the restart: $refused refused connections, $not_ready answers latet_vault_not_ready before the first served"
restored="$(answer_text "$state/answer.json")"
# S1 stays as written, domain included: it is retired, and the echo request
# sent no value (restoreScope: request; with "vault" its company domain's
# surrogate would restore, rule V5, docs/product-rules.md#v5).
echo_restored="$echo_text"
if ((served)) && [[ "$restored" == "$echo_restored" && "$restored" != *"$value"* ]]; then
  pass "after the restart: the first answer echoing S1 leaves it as written"
else
  fail "after the restart: S1 was restored or no answer was served"
fi

status="$(chat "$text" "$state/answer.json")"
seen="$(provider_saw)"
s2="$(surrogate_in "$seen")"
if [[ "$status" == 200 && "$seen" != *"$value"* && -n "$s2" && "$s2" != "$s1" &&
  "$(answer_text "$state/answer.json")" == "$text" ]]; then
  pass "the value sent again gets a new surrogate S2 != S1, which restores"
else
  fail "the value sent again: status $status, or the provider saw the value or S1, or S2 did not restore"
fi
status="$(chat "$echo_text" "$state/answer.json")"
if [[ "$status" == 200 && "$(answer_text "$state/answer.json")" == "$echo_restored" ]]; then
  pass "S1 echoed again still stays as written"
else
  fail "S1 echoed again: status $status or restored"
fi
latet_log "restart test: $((SECONDS - t2)) s"

# --- no value in any log -----------------------------------------------------------
if grep -rl "e2e-acme" "$logs" >&2; then
  fail "a test value reached the logs above"
else
  pass "no test value in $logs"
fi

latet_log "tests took $((SECONDS - t_tests)) s; $failures failed"
((failures == 0))
