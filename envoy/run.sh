#!/usr/bin/env bash
# Runs the Latet gateway: the control service (on its SQLite file), an
# upstream (the fake LLM, or a real provider over TLS) and Envoy with the
# filter and its singleton sync service. Prints one line `ready`, then the
# URLs, on stdout when everything answers; progress goes to stderr. Ctrl-C,
# SIGTERM or SIGHUP stops everything it started, by pid, wherever its output
# goes (`envoy/run.sh | tee run.log` included). One run per state directory
# (a lock on $LATET_STATE_DIR/run.lock): a second one is refused.
#
# Builds what it needs first, with cargo's progress on stderr (cargo is a
# no-op when current; wasm-opt runs only on a changed .wasm): the filter
# (release, wasm-opt), the `latet` binary, the fake LLM; installs Envoy.
#
# Environment (defaults):
#   LATET_STATE_DIR        <repo>/.latet   SQLite file, tokens, rendered config, logs/
#   LATET_LISTEN_PORT      10000           Envoy listener (127.0.0.1): point agents here
#   LATET_ADMIN_PORT       9901            Envoy admin (127.0.0.1): /ready, /stats/prometheus
#   LATET_CONTROL_PORT     8787            control service (127.0.0.1)
#   LATET_UPSTREAM         fake            `fake`, or a provider's base URL such as
#                                          https://api.openai.com (scheme, host, port; no path)
#   LATET_CONTROL_TLS      0               1: the control service speaks HTTPS only, with a
#                                          throwaway CA and certificate made in
#                                          $LATET_STATE_DIR/tls/ (openssl); Envoy and the CLI
#                                          check it against that CA
#   LATET_FAKE_LLM_PORT    8788            the fake LLM (127.0.0.1), when LATET_UPSTREAM=fake
#   LATET_FAKE_LLM_DELAY_MS 1              its pause between two stream writes (0: none)
#   LATET_BODY_LIMIT_BYTES 4194304         largest body masked (filter) and buffered (Envoy)
#   LATET_ENVOY_LOG_LEVEL  info            Envoy's log level (debug and trace print headers:
#                                          never use them with real data)
#   LATET_READY_TIMEOUT    120             seconds to wait for everything to answer
#   LATET_BIN, LATET_WASM, LATET_FAKE_LLM_BIN
#                                          use these files instead of building
#
#   LATET_RUN_MAY_EXIT     (none)          names of parts whose exit does not stop the rest
#                                          (tests that stop `control` on purpose)
#
# Files: $LATET_STATE_DIR/admin.token (admin token), demo.gateway.token (the
# `demo` key's gateway token), latet.db, envoy.yaml, logs/{control,fake-llm,envoy}.log,
# tls/{ca.pem,server.pem,server.key} with LATET_CONTROL_TLS=1,
# pids/<part>.pid while a part runs, run.lock (this run's pid, locked while
# it or a part it started runs).
set -euo pipefail
LATET_LOG_TAG=run
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

state="${LATET_STATE_DIR:-$LATET_ROOT/.latet}"
export LATET_LISTEN_PORT="${LATET_LISTEN_PORT:-10000}"
export LATET_ADMIN_PORT="${LATET_ADMIN_PORT:-9901}"
export LATET_CONTROL_PORT="${LATET_CONTROL_PORT:-8787}"
export LATET_BODY_LIMIT_BYTES="${LATET_BODY_LIMIT_BYTES:-4194304}"
upstream="${LATET_UPSTREAM:-fake}"
fake_port="${LATET_FAKE_LLM_PORT:-8788}"
fake_delay_ms="${LATET_FAKE_LLM_DELAY_MS:-1}"
ready_timeout="${LATET_READY_TIMEOUT:-120}"
case "${LATET_CONTROL_TLS:-0}" in
  0 | "") control_tls=0 ;;
  1) control_tls=1 ;;
  *) latet_die "LATET_CONTROL_TLS must be 0 or 1" ;;
esac

mkdir -p "$state/logs" "$state/pids"
state="$(cd "$state" && pwd)"
logs="$state/logs"

# --- one run per state directory: two control services on one SQLite file,
# or two Envoys on one rendered config, is never what anyone wants. The lock
# is held by this script and inherited by the parts it starts: a part left
# running (this script killed with SIGKILL) keeps the directory locked.
exec {run_lock}>>"$state/run.lock"
if ! flock -n "$run_lock"; then
  holder="$(tr -cd '0-9' <"$state/run.lock" 2>/dev/null || true)"
  latet_die "another run.sh (pid ${holder:-unknown}) is running on $state: stop it first (Ctrl-C in its terminal, or kill ${holder:-its pid}), or set LATET_STATE_DIR to another directory"
fi
printf '%s\n' "$$" >"$state/run.lock"

# --- stopping: every part it started, by pid, on exit, Ctrl-C, SIGTERM or
# SIGHUP. With `run.sh | tee run.log`, Ctrl-C ends tee as well: a write to
# the closed pipe would kill this script (SIGPIPE) before it stopped
# anything, so the exit handler ignores SIGPIPE (and further signals) and
# goes on whatever its writes do.
LATET_PID_DIR="$state/pids"
on_exit() {
  trap '' PIPE INT TERM HUP
  set +e
  latet_stop_all
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- the upstream: the fake LLM or a provider's URL ------------------------
if [[ "$upstream" == fake ]]; then
  upstream_mode=plain
  export LATET_UPSTREAM_HOST=127.0.0.1 LATET_UPSTREAM_PORT="$fake_port"
  upstream_url="http://127.0.0.1:$fake_port"
elif [[ "$upstream" =~ ^(https?)://([A-Za-z0-9.-]+)(:([0-9]+))?/?$ ]]; then
  if [[ "${BASH_REMATCH[1]}" == https ]]; then
    upstream_mode=tls
    default_port=443
  else
    upstream_mode=plain
    default_port=80
  fi
  export LATET_UPSTREAM_HOST="${BASH_REMATCH[2]}"
  export LATET_UPSTREAM_PORT="${BASH_REMATCH[4]:-$default_port}"
  upstream_url="$upstream"
else
  latet_die "LATET_UPSTREAM must be 'fake' or scheme://host[:port] without a path"
fi
LATET_UPSTREAM_TRANSPORT_SOCKET="$(upstream_transport_socket "$upstream_mode" "$LATET_UPSTREAM_HOST")"
export LATET_UPSTREAM_TRANSPORT_SOCKET

# --- refuse busy ports: an old process there would answer our readiness polls
ports=("$LATET_LISTEN_PORT" "$LATET_ADMIN_PORT" "$LATET_CONTROL_PORT")
[[ "$upstream" == fake ]] && ports+=("$fake_port")
for port in "${ports[@]}"; do
  if latet_port_busy "$port"; then
    latet_die "127.0.0.1:$port is already in use (an earlier run still going?)"
  fi
done

# --- build and install (progress on stderr; the first build takes minutes) --
t0=$SECONDS
latet_log "Envoy: installing when missing"
envoy="$(envoy_binary)"
if [[ -z "${LATET_BIN:-}" ]]; then
  latet_log "building the control service (latet)"
fi
latet="${LATET_BIN:-$(build_latet_binary)}"
if [[ -z "${LATET_WASM:-}" ]]; then
  latet_log "building the filter (.wasm, release, then wasm-opt when it changed)"
fi
wasm="${LATET_WASM:-$(build_filter_wasm)}"
if [[ "$upstream" == fake ]]; then
  if [[ -z "${LATET_FAKE_LLM_BIN:-}" ]]; then
    latet_log "building the fake LLM"
  fi
  fake_llm="${LATET_FAKE_LLM_BIN:-$(build_fake_llm)}"
fi
export LATET_WASM="$wasm"
latet_log "built and installed in $((SECONDS - t0)) s"

# --- processes: started in their own session, stopped by pid on exit --------

# answers_http URL [CURL ARGS...]: any HTTP answer at all (a 404 too) within 2 s.
answers_http() {
  local code url="$1"
  shift
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$@" "$url" 2>/dev/null || true)"
  [[ -n "$code" && "$code" != 000 ]]
}

# wait_until NAME PID CHECK...: polls CHECK until it succeeds; fails when the
# process PID has exited or after LATET_READY_TIMEOUT seconds.
wait_until() {
  local name="$1" pid="$2" deadline=$((SECONDS + ready_timeout))
  shift 2
  until "$@"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      latet_die "$name exited during start; see $logs"
    fi
    if ((SECONDS >= deadline)); then
      latet_die "$name did not get ready within ${ready_timeout}s; see $logs"
    fi
    sleep 0.05
  done
}

# 1. the control service. A token file left from an earlier database opens
# nothing in a new one: it goes with the database.
if [[ ! -e "$state/latet.db" && -e "$state/demo.gateway.token" ]]; then
  latet_log "no latet.db: removing the stale demo.gateway.token"
  rm -f "$state/demo.gateway.token"
fi
# With LATET_CONTROL_TLS=1: HTTPS only, with a throwaway CA and certificate
# made for this run (names localhost and 127.0.0.1); Envoy, curl and the CLI
# trust that CA alone.
control_serve_tls=()
control_curl=()
control_cli=()
if ((control_tls)); then
  latet_log "control over TLS: a throwaway CA and certificate in $state/tls"
  make_throwaway_tls "$state/tls" || latet_die "could not make the throwaway certificate"
  control_url="https://127.0.0.1:$LATET_CONTROL_PORT"
  control_serve_tls=(--tls-cert "$state/tls/server.pem" --tls-key "$state/tls/server.key")
  control_curl=(--cacert "$state/tls/ca.pem")
  control_cli=(--ca-cert "$state/tls/ca.pem")
  LATET_CONTROL_TRANSPORT_SOCKET="$(control_transport_socket tls "$state/tls/ca.pem" localhost)"
else
  control_url="http://127.0.0.1:$LATET_CONTROL_PORT"
  LATET_CONTROL_TRANSPORT_SOCKET="$(control_transport_socket plain)"
fi
LATET_CONTROL_ENDPOINTS="$(control_endpoints "$LATET_CONTROL_PORT")"
export LATET_CONTROL_TRANSPORT_SOCKET LATET_CONTROL_ENDPOINTS
latet_start control "$logs/control.log" "$latet" serve \
  --db "$state/latet.db" \
  --listen "127.0.0.1:$LATET_CONTROL_PORT" \
  --admin-token-file "$state/admin.token" "${control_serve_tls[@]}"
control_pid="${LATET_PIDS[-1]}"
wait_until control "$control_pid" answers_http "$control_url/" "${control_curl[@]}"
wait_until "control (admin token)" "$control_pid" test -s "$state/admin.token"

# 2. the key `demo` and its gateway token (its first token), once
if [[ ! -s "$state/demo.gateway.token" ]]; then
  latet_log "creating key demo"
  "$latet" server --server "$control_url" --admin-token-file "$state/admin.token" "${control_cli[@]}" \
    keys create demo --out "$state/demo.gateway.token" --force >>"$logs/control-cli.log" 2>&1 ||
    latet_die "could not create key demo (see $logs/control-cli.log); if $state holds a key demo without its token file, remove $state"
fi
chmod 600 "$state/admin.token" "$state/demo.gateway.token" 2>/dev/null || true

# 3. the upstream
if [[ "$upstream" == fake ]]; then
  latet_start fake-llm "$logs/fake-llm.log" "$fake_llm" --listen "127.0.0.1:$fake_port" \
    --chunk-delay-ms "$fake_delay_ms"
  wait_until fake-llm "${LATET_PIDS[-1]}" answers_http "$upstream_url/_fake/health"
fi

# 4. Envoy with the filter and the singleton sync service
render_template "$LATET_ENVOY_DIR/gateway.yaml.in" "$state/envoy.yaml"
LATET_GATEWAY_TOKEN="$(cat "$state/demo.gateway.token")"
export LATET_GATEWAY_TOKEN
# --disable-hot-restart: no shared-memory base id, so several Envoys (tests,
# another checkout) can run side by side.
latet_start envoy "$logs/envoy.log" "$envoy" -c "$state/envoy.yaml" \
  --concurrency 2 --disable-hot-restart -l "${LATET_ENVOY_LOG_LEVEL:-info}"
unset LATET_GATEWAY_TOKEN
envoy_pid="${LATET_PIDS[-1]}"
admin_url="http://127.0.0.1:$LATET_ADMIN_PORT"
gateway_url="http://127.0.0.1:$LATET_LISTEN_PORT"
envoy_ready() { curl -fsS -o /dev/null --max-time 2 "$admin_url/ready" 2>/dev/null; }
wait_until envoy "$envoy_pid" envoy_ready

# 5. With the fake LLM, a real round trip through the filter: it answers 200
# only once the filter holds the vault (503 latet_vault_not_ready before).
# The probe holds no value; the fake's request log is cleared afterwards.
if [[ "$upstream" == fake ]]; then
  round_trip() {
    curl -fsS -o /dev/null --max-time 5 "$gateway_url/v1/chat/completions" \
      -H 'content-type: application/json' \
      -d '{"model":"probe","messages":[{"role":"user","content":"ready?"}]}' 2>/dev/null
  }
  wait_until "envoy (filter with its vault)" "$envoy_pid" round_trip
  curl -fsS -o /dev/null -X DELETE "$upstream_url/_fake/requests"
fi

latet_log "all up in $((SECONDS - t0)) s"
echo ready
echo "gateway   $gateway_url"
echo "admin     $admin_url   (/ready, /stats/prometheus)"
if ((control_tls)); then
  echo "control   $control_url   (CA: $state/tls/ca.pem)"
else
  echo "control   $control_url"
fi
if [[ "$upstream" == fake ]]; then
  echo "upstream  $upstream_url   (fake LLM: /_fake/requests/last)"
else
  echo "upstream  $upstream_url"
fi
echo "state     $state   (admin.token, demo.gateway.token, logs/)"

# Serve until Ctrl-C, or until one of the processes exits. Tests that stop
# a part on purpose name it in LATET_RUN_MAY_EXIT (e.g. `control`): its exit
# is logged and the rest keeps running.
may_exit=" ${LATET_RUN_MAY_EXIT:-} "
while true; do
  set +e
  wait -n "${LATET_PIDS[@]}"
  status=$?
  set -e
  fatal=0
  kept_pids=()
  kept_names=()
  for i in "${!LATET_PIDS[@]}"; do
    if kill -0 "${LATET_PIDS[$i]}" 2>/dev/null; then
      kept_pids+=("${LATET_PIDS[$i]}")
      kept_names+=("${LATET_NAMES[$i]}")
      continue
    fi
    latet_stop_pid "${LATET_PIDS[$i]}" "${LATET_NAMES[$i]}"
    if [[ "$may_exit" == *" ${LATET_NAMES[$i]} "* ]]; then
      latet_log "${LATET_NAMES[$i]} exited (status $status); allowed by LATET_RUN_MAY_EXIT"
    else
      latet_log "${LATET_NAMES[$i]} exited (status $status); stopping the rest; see $logs"
      fatal=1
    fi
  done
  LATET_PIDS=("${kept_pids[@]}")
  LATET_NAMES=("${kept_names[@]}")
  if ((fatal)) || ((${#LATET_PIDS[@]} == 0)); then
    exit 1
  fi
done
