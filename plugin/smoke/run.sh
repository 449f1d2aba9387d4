#!/usr/bin/env bash
# Smoke run of the built filter in real Envoy (V8, 2 workers) with the sync
# singleton, a fake control service and an echoing upstream: masks, restores,
# applies a forget. Prints PASS/FAIL lines and "N passed, N failed".
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
wasm="$target_dir/wasm32-wasip1/release/latet_filter.opt.wasm"
[[ -f "$wasm" ]] || bash "$root/plugin/build.sh" >&2
envoy_bin="$(bash "$root/envoy/install-envoy.sh")"
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
control=$(free_port); upstream=$(free_port); listen=$(free_port); admin=$(free_port); plain=$(free_port)
misconfigured=$(free_port)
misconfig='{"controlCluster": "latet_nowhere", "gatewayToken": "smoke-token", "tickMs": 200, "leaseMs": 1000}'
config='{"controlCluster": "latet_control", "gatewayToken": "smoke-token", "tickMs": 200, "leaseMs": 1000, "feedWaitMs": 1000}'
sed -e "s|@ADMIN@|$admin|; s|@PLAIN@|$plain|; s|@LISTEN@|$listen|; s|@UPSTREAM@|$upstream|; s|@CONTROL@|$control|; s|@MISCONFIGURED@|$misconfigured|" \
    -e "s|@WASM@|$wasm|g; s|@CONFIG@|$config|g; s|@MISCONFIG@|$misconfig|g" "$here/envoy.yaml.in" > "$work/envoy.yaml"
python3 "$here/fakes.py" "$control" "$upstream" "$work/upstream.log" > "$work/fakes.out" 2>&1 &
pids+=($!)
setsid "$envoy_bin" -c "$work/envoy.yaml" --concurrency 2 --log-level warn \
    --component-log-level wasm:info > "$work/envoy.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$admin/ready" >/dev/null 2>&1 && break; sleep 0.1
done
passed=0; failed=0
check() { if eval "$2"; then echo "PASS $1"; passed=$((passed+1)); else echo "FAIL $1"; failed=$((failed+1)); fi; }
ask() {
    curl -s -D "$work/headers" "http://127.0.0.1:$listen/v1/chat/completions" -H 'content-type: application/json' \
        -d "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"$1\"}]}"
}
# Wait until the snapshot reached the workers (503 vault_not_ready before).
for _ in $(seq 50); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$listen/v1/chat/completions" \
        -H 'content-type: application/json' -d '{"messages":[]}')
    [[ "$code" == 200 ]] && break; sleep 0.1
done
start_line=$(grep -c "latet-filter .* (git .*) starting" "$work/envoy.log" || true)
check "VM start line with version and git revision" '[[ $start_line -ge 1 ]]'
answer=$(ask "Hello, I am Mario Rossi")
check "upstream got the surrogate, not the value" 'tail -1 "$work/upstream.log" | grep -q "Laura Bianchi" && ! tail -1 "$work/upstream.log" | grep -q "Mario"'
check "the answer was restored" 'grep -q "echo: Hello, I am Mario Rossi" <<<"$answer"'
answer=$(ask "write to anna.verdi@gmail.com")
check "a new value got an entry by callout and was masked" 'tail -1 "$work/upstream.log" | grep -q "example.org" && ! tail -1 "$work/upstream.log" | grep -q "anna.verdi"'
check "the new value was restored" 'grep -q "echo: write to anna.verdi@gmail.com" <<<"$answer"'
curl -s -X POST "http://127.0.0.1:$control/admin/forget" -d '{"value":"Mario Rossi"}' >/dev/null
sleep 1
restored=0
for _ in 1 2 3 4 5 6; do   # several requests: both workers
    answer=$(ask "Laura Bianchi is a surrogate")
    grep -q "Mario" <<<"$answer" && restored=1
done
check "after the forget no worker restores the old surrogate" '[[ $restored == 0 ]]'
# A controlCluster naming no cluster: refused with that cause, the log names it.
refused=""
for _ in $(seq 30); do
    refused=$(curl -s "http://127.0.0.1:$misconfigured/v1/chat/completions" \
        -H 'content-type: application/json' -d '{"messages":[]}')
    grep -q latet_control_cluster_unknown <<<"$refused" && break; sleep 0.2
done
check "an unknown controlCluster is refused by name" 'grep -q latet_control_cluster_unknown <<<"$refused"'
check "the log names the unknown cluster" 'grep -q "no cluster named .latet_nowhere. (controlCluster)" "$work/envoy.log"'
curl -s "http://127.0.0.1:$admin/stats" > "$work/stats"
check "metrics appear as wasmcustom" 'grep -q "wasmcustom.latet_values_masked_total" "$work/stats"'
check "forget applied on the workers" 'grep -E "wasmcustom.latet_forget_events_applied_total: [1-9]" "$work/stats" >/dev/null'
check "no value in Envoy's log" '! grep -E "Mario|anna.verdi|smoke-token" "$work/envoy.log"'
grep -E "wasmcustom.latet_" "$work/stats" | sed 's/^/  /'
if [[ "${LATET_SMOKE_MEASURE:-}" == 1 ]]; then
    # p50 over keep-alive requests, interleaved: with the filter vs without.
    python3 - "$listen" "$plain" <<'PY'
import http.client, json, statistics, sys, time
body = json.dumps({"model": "m", "messages": [{"role": "user", "content":
        "Hello, I am Mario Rossi and this is a longer message. " * 40}]})
conns = {name: http.client.HTTPConnection("127.0.0.1", int(port)) for name, port in
         [("filter", sys.argv[1]), ("plain", sys.argv[2])]}
times = {name: [] for name in conns}
for i in range(400):
    for name, c in conns.items():
        t = time.perf_counter()
        c.request("POST", "/v1/chat/completions", body, {"content-type": "application/json"})
        c.getresponse().read()
        if i >= 50: times[name].append((time.perf_counter() - t) * 1000)
for name, t in times.items():
    print(f"  {name}: p50 {statistics.median(t):.3f} ms over {len(t)} requests, body {len(body)} bytes")
PY
fi
if [[ $failed -gt 0 ]]; then tail -30 "$work/envoy.log" >&2; fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
