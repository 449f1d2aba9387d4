#!/usr/bin/env bash
# What the Latet filter costs on the request path, measured against the floor
# and checked against the performance targets (rules P1–P5,
# docs/product-rules.md#p1). One Envoy with four listeners — no filter; the floor filter
# (buffer and copy back); the Latet filter with its singleton, in its default
# configuration; the same filter with the person detector off — in front of
# the fake LLM, the control service holding the vault. Measures, interleaved
# between listeners: p50/p99 and req/s for 2/20/200 KB chat requests (4/40/400
# vault values) on one and eight connections against 10k- and 100k-entry
# vaults (names off on one connection only); streaming TTFB/TTLB; forget
# propagation; Envoy RSS, the snapshot's size (compact and JSON) and load
# time; the module's size; and the engine alone natively and in V8 (node).
# Memory and forgets are measured in an Envoy without the names-off listener
# (its root contexts hold a second index per worker).
#
#   envoy/bench.sh           full run (~17 min); writes BENCHMARKS.md and
#                            BENCHMARKS.json at the repository root, with a
#                            before/after table against the BENCHMARKS.json
#                            it replaces
#   envoy/bench.sh --smoke   ~15 s of measuring on a small vault (CI); writes
#                            its report under the state dir only
#
# Exits non-zero only when the setup is broken (a build fails, a process does
# not start, a request fails, the filter does not mask or restore, a forget is
# not applied); never because a figure is slow.
#
# Environment (defaults):
#   BENCH_PORT_BASE   19100   ports BASE..BASE+6 on 127.0.0.1 (none, floor,
#                             latet, admin, control, fake LLM, latet names off)
#   BENCH_ROUNDS      3 (smoke 1)   rounds per latency cell
#   BENCH_SECONDS     3 (smoke 1)   seconds per wrk run
#   BENCH_SKIP_ENGINE unset   1: skip the engine harness (native and V8)
#   LATET_WASM_SIMD   1       0: build the filter and the V8 engine harness without simd128
#   BENCH_ONLY        unset   memory: only Envoy's RSS over the empty, 10k and
#                             100k vaults (a few minutes); prints memory.jsonl
#                             and writes no report
#                     history: only the history cells (one connection),
#                             the two vaults side by side in one Envoy (the
#                             Latet listener on a 10k-entry key, a second one,
#                             its own VM and sync service, on a 100k-entry
#                             key), interleaved round by round: their ratio
#                             is not moved by the machine's load between two
#                             Envoys (~2 min a size); prints the added p50 per
#                             listener and writes no report
#   BENCH_SIZES       "2k 20k 200k"   the request sizes of the latency cells
#   BENCH_HOLD        unset   1: stop after loading the first vault and keep
#                             everything running until Ctrl-C (for profiling)
#   BENCH_STATE_DIR   <target dir>/bench-state   database, logs, results
set -euo pipefail
LATET_LOG_TAG=bench
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_dir="$LATET_ENVOY_DIR/bench"

smoke=0
case "${1:-}" in
  --smoke) smoke=1 ;;
  "") ;;
  *) latet_die "usage: envoy/bench.sh [--smoke]" ;;
esac

base="${BENCH_PORT_BASE:-19100}"
port_none=$base port_floor=$((base + 1)) port_latet=$((base + 2))
port_admin=$((base + 3)) port_control=$((base + 4)) port_fake=$((base + 5))
port_names_off=$((base + 6))
workers=2
if ((smoke)); then
  rounds="${BENCH_ROUNDS:-1}" seconds="${BENCH_SECONDS:-1}"
  vaults=(small) vault_sizes=(1500) conns_list=(1)
  stream_n=3 forget_n=4 engine_vaults=2000 engine_ms=30
else
  rounds="${BENCH_ROUNDS:-3}" seconds="${BENCH_SECONDS:-3}"
  vaults=(10k 100k) vault_sizes=(10000 100000) conns_list=(1 8)
  stream_n=20 forget_n=51 engine_vaults=10000,100000 engine_ms=400
fi
read -ra sizes <<<"${BENCH_SIZES:-2k 20k 200k}"
load_at_start="$(cut -d' ' -f1-3 /proc/loadavg)"

state="${BENCH_STATE_DIR:-$(latet_target_dir)/bench-state}"
rm -rf "$state"
mkdir -p "$state/logs" "$state/results" "$state/bodies"
state="$(cd "$state" && pwd)"
results="$state/results"
logs="$state/logs"
control_url="http://127.0.0.1:$port_control"
admin_url="http://127.0.0.1:$port_admin"
fake_url="http://127.0.0.1:$port_fake"

for port in $(seq "$base" $((base + 6))); do
  latet_port_busy "$port" && latet_die "127.0.0.1:$port is in use (set BENCH_PORT_BASE)"
done

# --- tools and builds ------------------------------------------------------
if ! command -v wrk >/dev/null 2>&1; then
  [[ "$(id -u)" == 0 ]] || latet_die "wrk is missing: install Debian's wrk package"
  latet_log "installing wrk"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >&2 ||
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >&2; }
fi
command -v node >/dev/null 2>&1 || [[ -n "${BENCH_SKIP_ENGINE:-}" ]] || latet_die "node is missing (or set BENCH_SKIP_ENGINE=1)"
t0=$SECONDS
envoy="$(envoy_binary)"
latet="${LATET_BIN:-$(build_latet_binary)}"
latet_wasm="${LATET_WASM:-$(build_filter_wasm)}"
floor_wasm="$(build_floor_wasm)"
fake_llm="${LATET_FAKE_LLM_BIN:-$(build_fake_llm)}"
latet_log "built and installed in $((SECONDS - t0)) s"

python3 "$bench_dir/bench.py" bodies "$state/bodies" >/dev/null

# --- processes, stopped by pid on exit (envoy/lib.sh) -----------------------
trap latet_stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now_ms() { date +%s%3N; }

# 1. the control service, a key `bench`, its gateway token and a forget token
latet_start control "$logs/control.log" "$latet" serve --db "$state/latet.db" \
  --listen "127.0.0.1:$port_control" --admin-token-file "$state/admin.token"
wait_http "$control_url/" 60 "${LATET_PIDS[-1]}" || latet_die "control service did not start; see $logs/control.log"
for _ in $(seq 100); do [[ -s "$state/admin.token" ]] && break; sleep 0.05; done
cli=("$latet" server --server "$control_url" --admin-token-file "$state/admin.token")
"${cli[@]}" keys create bench --out "$state/gateway.token" >>"$logs/cli.log" 2>&1 || latet_die "keys create failed; see $logs/cli.log"
"${cli[@]}" keys add-token bench erasure --forget --out "$state/forget.token" >>"$logs/cli.log" 2>&1 || latet_die "add-token failed; see $logs/cli.log"

# 2. the fake LLM, answering as fast as it can (no pause between stream writes
#    unless a request asks for one)
latet_start fake-llm "$logs/fake-llm.log" "$fake_llm" --listen "127.0.0.1:$port_fake" --chunk-delay-ms 0
wait_http "$fake_url/_fake/health" 30 "${LATET_PIDS[-1]}" || latet_die "fake LLM did not start"

# 3. Envoy (started per vault size: its start measures the snapshot load)
export BENCH_PORT_NONE=$port_none BENCH_PORT_FLOOR=$port_floor BENCH_PORT_LATET=$port_latet
export BENCH_PORT_ADMIN=$port_admin BENCH_PORT_CONTROL=$port_control BENCH_PORT_FAKE=$port_fake
export BENCH_PORT_NAMES_OFF=$port_names_off
export BENCH_BODY_LIMIT=4194304 BENCH_LATET_WASM="$latet_wasm" BENCH_FLOOR_WASM="$floor_wasm"
# Two configs: all four listeners (latency, streaming), and the same without
# the names-off listener (memory, forgets: as the gateway runs, one filter
# configuration per worker).
render_template "$bench_dir/envoy-bench.yaml.in" "$state/envoy.yaml"
sed '/# names-off listener: begin/,/# names-off listener: end/d' "$state/envoy.yaml" >"$state/envoy-memory.yaml"
grep -q 'name: latet-names-off$' "$state/envoy-memory.yaml" && latet_die "envoy-memory.yaml still holds the names-off listener"
grep -q 'name: latet-names-off$' "$state/envoy.yaml" || latet_die "envoy.yaml lacks the names-off listener"
envoy_index=-1

latet_round_trip() {
  curl -fsS -o /dev/null --max-time 5 "http://127.0.0.1:$port_latet/v1/chat/completions" \
    -H 'content-type: application/json' \
    -d '{"model":"probe","messages":[{"role":"user","content":"ready?"}]}' 2>/dev/null
}

# start_envoy VAULT CONFIG: starts Envoy with CONFIG (memory and forget:
# three listeners; all: four), waits until the Latet listener answers 200,
# and with CONFIG memory appends RSS, snapshot sizes and load times to
# memory.jsonl.
start_envoy() {
  local vault="$1" config="$2" t_start t_ready t_load deadline pid rss yaml
  local -a others
  case "$config" in
    memory | forget) yaml="$state/envoy-memory.yaml" others=("$port_none" "$port_floor") ;;
    all) yaml="$state/envoy.yaml" others=("$port_none" "$port_floor" "$port_names_off") ;;
    vaults) yaml="$state/envoy-vaults.yaml" others=("$port_none" "$port_floor" "$port_names_off") ;;
    *) latet_die "start_envoy: config memory, forget, all or vaults, not $config" ;;
  esac
  if ((envoy_index >= 0)); then
    latet_stop_pid "${LATET_PIDS[$envoy_index]}"
    LATET_PIDS[envoy_index]=""
  fi
  t_start=$(now_ms)
  LATET_GATEWAY_TOKEN="$(cat "$state/gateway.token")" \
    latet_start envoy "$logs/envoy-$vault-$config.log" "$envoy" -c "$yaml" \
    --concurrency "$workers" --disable-hot-restart -l warning
  envoy_index=$((${#LATET_PIDS[@]} - 1))
  pid="${LATET_PIDS[$envoy_index]}"
  deadline=$((SECONDS + 120))
  until curl -fsS -o /dev/null --max-time 2 "$admin_url/ready" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || latet_die "envoy exited during start; see $logs/envoy-$vault-$config.log"
    ((SECONDS < deadline)) || latet_die "envoy not ready in 120 s"
    sleep 0.01
  done
  t_ready=$(now_ms)
  until latet_round_trip; do
    kill -0 "$pid" 2>/dev/null || latet_die "envoy exited during start; see $logs/envoy-$vault-$config.log"
    ((SECONDS < deadline)) || latet_die "the Latet listener did not answer 200 in 120 s (vault not loaded?)"
    sleep 0.01
  done
  t_load=$(now_ms)
  # The other listeners answer too (names off: once its roots hold the vault).
  for port in "${others[@]}"; do
    until curl -fsS -o /dev/null --max-time 5 "http://127.0.0.1:$port/v1/chat/completions" \
      -H 'content-type: application/json' -d '{"model":"p","messages":[{"role":"user","content":"hi"}]}' 2>/dev/null; do
      kill -0 "$pid" 2>/dev/null || latet_die "envoy exited during start; see $logs/envoy-$vault-$config.log"
      ((SECONDS < deadline)) || latet_die "listener $port does not answer 200"
      sleep 0.01
    done
  done
  if [[ "$config" != memory ]]; then
    latet_log "envoy up for vault $vault ($config): Latet listener $((t_load - t_start)) ms"
    return
  fi
  sleep 1
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
  # Where the RSS lies, mapping by mapping (bench.py memory reads it).
  cp "/proc/$pid/smaps" "$results/smaps-$vault.txt" 2>/dev/null || true
  python3 "$bench_dir/bench.py" snapshot --control "$control_url" --token "$state/gateway.token" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); d.update(vault=sys.argv[1], rss_kib=int(sys.argv[2]), ready_ms=int(sys.argv[3]), load_ms=int(sys.argv[4])); print(json.dumps(d))' \
      "$vault" "$rss" $((t_ready - t_start)) $((t_load - t_start)) >>"$results/memory.jsonl"
  latet_log "envoy up for vault $vault: ready $((t_ready - t_start)) ms, Latet listener $((t_load - t_start)) ms, RSS $((rss / 1024)) MiB"
}

clear_fake_log() { curl -fsS -o /dev/null -X DELETE "$fake_url/_fake/requests" || latet_die "fake LLM gone"; }

# Envoy's CPU time so far (user + system, clock ticks): a run's share of it
# per request is the CPU a request costs Envoy, which the machine's load moves
# far less than its latency.
envoy_cpu_ticks() {
  awk '{print $14 + $15}' "/proc/${LATET_PIDS[$envoy_index]}/stat" 2>/dev/null || echo 0
}

# run_wrk VAULT SIZE CONNS LISTENER PORT SALT MODE: one wrk run, one line of
# latency.jsonl. MODE (post.lua): unique (every message new: the worst case)
# or history (the earlier messages resent, the last one new).
run_wrk() {
  local vault="$1" size="$2" conns="$3" listener="$4" port="$5" salt="$6" mode="$7" threads=1 out line
  local cpu_before cpu_after
  ((conns > 1)) && threads=2
  cpu_before="$(envoy_cpu_ticks)"
  out="$(wrk -t"$threads" -c"$conns" -d"${seconds}s" --latency --timeout 30s -s "$bench_dir/post.lua" \
    "http://127.0.0.1:$port" -- "$state/bodies/chat-$size.json" /v1/chat/completions "$mode" "$salt" 2>&1)" ||
    latet_die "wrk failed against $listener"
  cpu_after="$(envoy_cpu_ticks)"
  line="$(printf '%s\n' "$out" | sed -n 's/^BENCHJSON //p')"
  [[ -n "$line" ]] || latet_die "wrk printed no figures against $listener: $out"
  printf '%s\n' "$line" | python3 -c 'import json,sys
d=json.load(sys.stdin); a=sys.argv
d.update(vault=a[1], size=a[2], conns=int(a[3]), listener=a[4], round=int(a[5]), body_bytes=int(a[6]), mode=a[7],
         envoy_cpu_ticks=int(a[8]), clock_ticks=int(a[9]))
print(json.dumps(d))' "$vault" "$size" "$conns" "$listener" "$salt" "$(stat -c %s "$state/bodies/chat-$size.json")" "$mode" \
    $((cpu_after - cpu_before)) "$(getconf CLK_TCK)" >>"$results/latency.jsonl"
  if [[ "$line" != *'"non2xx":0,"errors_connect":0,"errors_read":0,"errors_write":0,"errors_timeout":0'* ]]; then
    latet_die "errors against $listener ($size, $conns conns): $line"
  fi
  clear_fake_log
}

# latet-names-off runs only in the one-connection cells (names' share of
# the added latency; the eight-connection cells would add a third to the run).
listeners=(none floor latet latet-names-off)
declare -A port_of=([none]=$port_none [floor]=$port_floor [latet]=$port_latet [latet-names-off]=$port_names_off)
salt=0

# --- BENCH_ONLY=history: both vaults in one Envoy, interleaved ------------------
if [[ "${BENCH_ONLY:-}" == history ]]; then
  # The 100k vault is a second key behind a second Latet listener (on the
  # names-off listener's port) with its own vm_id and sync service.
  "${cli[@]}" keys create bench100k --out "$state/gateway-100k.token" >>"$logs/cli.log" 2>&1 ||
    latet_die "keys create failed; see $logs/cli.log"
  python3 "$bench_dir/bench.py" preload --control "$control_url" --token "$state/gateway.token" \
    --start 0 --end "${vault_sizes[0]}" >>"$results/preload.jsonl"
  python3 "$bench_dir/bench.py" preload --control "$control_url" --token "$state/gateway-100k.token" \
    --start 0 --end "${vault_sizes[-1]}" >>"$results/preload.jsonl"
  python3 "$bench_dir/bench.py" vaults-yaml <"$state/envoy.yaml" >"$state/envoy-vaults.yaml" ||
    latet_die "envoy-vaults.yaml not written"
  LATET_GATEWAY_TOKEN_100K="$(cat "$state/gateway-100k.token")"
  export LATET_GATEWAY_TOKEN_100K
  start_envoy "${vaults[0]}+${vaults[-1]}" vaults
  python3 "$bench_dir/bench.py" check --control "$control_url" --token "$state/gateway.token" \
    --port "$port_latet" --fake "$fake_url" >/dev/null || latet_die "the 10k listener does not mask and restore"
  python3 "$bench_dir/bench.py" check --control "$control_url" --token "$state/gateway-100k.token" \
    --port "$port_names_off" --fake "$fake_url" >/dev/null || latet_die "the 100k listener does not mask and restore"
  history_listeners=(none floor latet latet-100k)
  port_of[latet-100k]=$port_names_off
  for size in "${sizes[@]}"; do
    for listener in "${history_listeners[@]}"; do
      wrk -t1 -c1 -d1s -s "$bench_dir/post.lua" "http://127.0.0.1:${port_of[$listener]}" -- \
        "$state/bodies/chat-$size.json" /v1/chat/completions history 999 >/dev/null 2>&1 || latet_die "warm-up failed"
    done
  done
  clear_fake_log
  n=${#history_listeners[@]}
  latet_log "history cells, vaults side by side (${#sizes[@]} sizes × $rounds rounds × ${seconds} s × $n listeners)"
  for size in "${sizes[@]}"; do
    for ((r = 0; r < rounds; r++)); do
      for ((i = 0; i < n; i++)); do
        listener="${history_listeners[$(((i + r) % n))]}"
        salt=$((salt + 1))
        run_wrk "${vaults[0]}+${vaults[-1]}" "$size" 1 "$listener" "${port_of[$listener]}" "$salt" history
      done
    done
  done
  # The filter's own timings inside the VM (both listeners together).
  curl -fsS "$admin_url/stats?filter=latet_.*duration" >"$results/stats.txt" 2>/dev/null || true
  latet_stop_all
  python3 "$bench_dir/bench.py" added --results "$results"
  latet_log "done in $((SECONDS - t0)) s: $results/latency.jsonl"
  exit 0
fi

# --- memory with an empty vault ----------------------------------------------
start_envoy empty memory

# --- per vault size: preload, restart Envoy (snapshot load), latency --------
preloaded=0
for v in "${!vaults[@]}"; do
  vault="${vaults[$v]}" target="${vault_sizes[$v]}"
  python3 "$bench_dir/bench.py" preload --control "$control_url" --token "$state/gateway.token" \
    --start "$preloaded" --end "$target" >>"$results/preload.jsonl"
  preloaded=$target
  start_envoy "$vault" memory
  [[ "${BENCH_ONLY:-}" == memory ]] && continue
  start_envoy "$vault" all
  for port in "$port_latet" "$port_names_off"; do
    python3 "$bench_dir/bench.py" check --control "$control_url" --token "$state/gateway.token" \
      --port "$port" --fake "$fake_url" >/dev/null || latet_die "the Latet listener on $port does not mask and restore"
  done
  if [[ -n "${BENCH_HOLD:-}" ]]; then
    latet_log "holding (BENCH_HOLD): listeners none $port_none, floor $port_floor, latet $port_latet, latet names off $port_names_off; admin $admin_url; bodies $state/bodies; Ctrl-C stops"
    wait "${LATET_PIDS[$envoy_index]}" || true
    exit 0
  fi
  # Warm-up (not recorded): each listener, each size.
  for size in "${sizes[@]}"; do
    for listener in "${listeners[@]}"; do
      wrk -t1 -c1 -d1s -s "$bench_dir/post.lua" "http://127.0.0.1:${port_of[$listener]}" -- \
        "$state/bodies/chat-$size.json" /v1/chat/completions unique 999 >/dev/null 2>&1 || latet_die "warm-up failed"
    done
  done
  clear_fake_log
  # Cells: every message new on 1 and 8 connections (the worst case: the
  # memo never helps), then the agent's usual case on 1 connection: the
  # history resent, one new message.
  cells=()
  for conns in "${conns_list[@]}"; do cells+=("unique:$conns"); done
  cells+=("history:1")
  latet_log "vault $vault: latency matrix (${#sizes[@]} sizes × ${#cells[@]} cells × $rounds rounds × ${seconds} s × 3 listeners, 4 on one connection)"
  for size in "${sizes[@]}"; do
    for cell in "${cells[@]}"; do
      mode="${cell%%:*}" conns="${cell##*:}"
      cell_listeners=("${listeners[@]}")
      ((conns == 1)) || cell_listeners=(none floor latet)
      n=${#cell_listeners[@]}
      for ((r = 0; r < rounds; r++)); do
        # Rotate the order each round so no listener always runs first.
        for ((i = 0; i < n; i++)); do
          listener="${cell_listeners[$(((i + r) % n))]}"
          salt=$((salt + 1))
          run_wrk "$vault" "$size" "$conns" "$listener" "${port_of[$listener]}" "$salt" "$mode"
        done
      done
    done
  done
  # RSS after the load, in the Envoy with all four listeners (the names-off
  # roots' second index included; not in the report's memory table).
  awk '/^VmRSS:/ {print $2}' "/proc/${LATET_PIDS[$envoy_index]}/status" |
    python3 -c 'import json,sys; print(json.dumps({"vault": sys.argv[1], "rss_kib_after_load": int(sys.stdin.read())}))' "$vault" \
      >>"$results/rss-after.jsonl"
done

if [[ "${BENCH_ONLY:-}" == memory ]]; then
  latet_stop_all
  python3 "$bench_dir/bench.py" memory --results "$results" --workers "$workers"
  latet_log "done in $((SECONDS - t0)) s: $results/memory.jsonl"
  exit 0
fi

# --- streaming: TTFB/TTLB, no filter, the floor (it buffers whole answers:
# its first byte is its last), Latet
latet_log "streaming"
python3 "$bench_dir/bench.py" stream --listener "none=$port_none" --listener "floor=$port_floor" \
  --listener "latet=$port_latet" \
  --body "$state/bodies/chat-20k-stream.json" --body "$state/bodies/chat-200k-stream.json" \
  --n "$stream_n" --chunk 12 --delay-ms 1 --salt 5000 >>"$results/stream.jsonl"
clear_fake_log

# --- forget propagation (one filter configuration per worker, as deployed) ---
start_envoy "${vaults[-1]}" forget
latet_log "forget propagation ($forget_n forgets)"
python3 "$bench_dir/bench.py" forget --control "$control_url" --gateway-token "$state/gateway.token" \
  --forget-token "$state/forget.token" --admin "$admin_url" --port "$port_latet" \
  --n "$forget_n" --first-index $((preloaded / 2)) >"$results/forget.json" ||
  latet_die "forget propagation: the filter applied no forget"
python3 - "$results/forget.json" <<'EOF' || latet_die "forgets were not applied on every worker"
import json, sys
f = json.load(open(sys.argv[1]))
ok = f["timeouts"] == 0 and f["verify_declined"] == f["verify_requests"] and f["restored_before"] == f["forgets"]
sys.exit(0 if ok else 1)
EOF
latet_stop_all

# --- the module's size ---------------------------------------------------------
python3 - "$latet_wasm" "$floor_wasm" >"$results/wasm.json" <<'EOF'
import json, os, sys
opt, floor = sys.argv[1], sys.argv[2]
raw = opt.replace(".opt.wasm", ".wasm")
print(json.dumps({"latet_opt_bytes": os.path.getsize(opt),
                  "latet_bytes": os.path.getsize(raw) if os.path.exists(raw) else None,
                  "floor_bytes": os.path.getsize(floor)}))
EOF

# --- the engine alone: native and V8 -----------------------------------------
if [[ -z "${BENCH_SKIP_ENGINE:-}" ]]; then
  latet_log "engine harness: native and wasm32-wasip1 in node"
  harness="$bench_dir/engine-harness/Cargo.toml"
  target_dir="$(latet_target_dir)"
  (cd "$LATET_ROOT" && cargo build -q --release --manifest-path "$harness" --target-dir "$target_dir") >&2 ||
    latet_die "engine harness (native) did not build"
  # Built as the filter is (plugin/build.sh): simd128 unless LATET_WASM_SIMD=0.
  simd_flags=""
  [[ "${LATET_WASM_SIMD:-1}" == 1 ]] && simd_flags="-C target-feature=+simd128"
  (cd "$LATET_ROOT" && CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="${CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS:-} $simd_flags" \
    cargo build -q --release --target wasm32-wasip1 --manifest-path "$harness" --target-dir "$target_dir") >&2 ||
    latet_die "engine harness (wasm32-wasip1) did not build"
  export LATET_BENCH_VAULTS="$engine_vaults" LATET_BENCH_MS="$engine_ms"
  "$target_dir/release/latet-engine-harness" >"$results/engine.jsonl" || latet_die "engine harness (native) failed"
  # --no-liftoff: Envoy's V8 compiles with TurboFan only (proxy-wasm
  # cpp-host turns Liftoff off); node would otherwise run large functions in
  # the baseline tier for a while (measured: 200 KB masking 3× slower).
  v8_rows_expected=$(( $(tr ',' '\n' <<<"$engine_vaults" | wc -l) * 4 ))  # a vault row + 3 cases each
  if ! node --no-warnings --no-liftoff "$bench_dir/run-wasi.mjs" "$target_dir/wasm32-wasip1/release/latet-engine-harness.wasm" \
    >>"$results/engine.jsonl"; then
    # node 20 has crashed inside V8 while tearing down after a 100k run
    # (seen twice, after every figure was printed): keep complete figures.
    v8_rows=$(grep -c 'wasm32-wasip1' "$results/engine.jsonl" || true)
    ((v8_rows >= v8_rows_expected)) || latet_die "engine harness (V8) failed"
    latet_log "node exited with an error after printing all $v8_rows V8 rows; kept them"
  fi
fi

# --- the report ----------------------------------------------------------------
cpu="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
python3 - "$results/meta.json" <<EOF
import json, sys
json.dump({"date": "$(date -u +%Y-%m-%dT%H:%MZ)", "smoke": bool($smoke), "cpu": """$cpu""", "cores": $(nproc),
           "load": "$load_at_start", "load_at_end": "$(cut -d' ' -f1-3 /proc/loadavg)", "envoy": "$("$envoy" --version 2>/dev/null | grep -o '/[0-9.]*/' | head -1 | tr -d /)",
           "node": "$(node --version 2>/dev/null || true)", "wrk": "$(wrk -v 2>&1 | head -1 | awk '{print $2}')",
           "workers": $workers, "rounds": $rounds, "seconds": $seconds,
           "vaults": "${vaults[*]}", "commit": "$(git -C "$LATET_ROOT" rev-parse --short HEAD 2>/dev/null || true)"},
          open(sys.argv[1], "w"))
EOF
if ((smoke)); then
  md="$state/BENCHMARKS.md" json="$state/BENCHMARKS.json"
else
  md="$LATET_ROOT/BENCHMARKS.md" json="$LATET_ROOT/BENCHMARKS.json"
fi
# The before/after table compares with the BENCHMARKS.json at the root (the
# one a full run replaces; the smoke run compares with it too, writing
# nowhere but its state dir).
python3 "$bench_dir/bench.py" report --results "$results" --json "$json" --md "$md" --notes "$bench_dir/notes.md" \
  --previous "$LATET_ROOT/BENCHMARKS.json"
latet_log "done in $((SECONDS - t0)) s: $md"
