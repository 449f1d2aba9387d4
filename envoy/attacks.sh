#!/usr/bin/env bash
# The attack corpus on real Envoy: starts envoy/run.sh on free ports with a
# fresh state directory, sends every attack of envoy/attacks/corpus.jsonl
# (envoy/fake-llm/tests/attacks.rs, ignored by a plain `cargo test`), checks
# what the fake LLM recorded for each, checks that no value reached a log,
# and stops everything.
#
# Prints one line per leaking attack (id, category, where: never the value),
# per-category counts, then `N attacks held, M leaked`. Exits 1 on a leak
# whose id envoy/attacks/known-leaks.txt does not list (the masker's to-do,
# to be emptied) or on any value in a log, unless --report.
#
# usage: envoy/attacks.sh [--report] [--all-leaks] [--update-known] [--json FILE] [--only ID[,ID...]]
#   --report        measure only: never fail (LATET_ATTACKS_REPORT=1)
#   --all-leaks     ignore known-leaks.txt: fail on any leak
#   --update-known  measure, then rewrite known-leaks.txt from this run's leaks
#   --json FILE     also write every attack's result to FILE (JSON)
#   --only IDS      run only the attacks whose id starts with one of IDS
# LATET_ATTACKS_KEEP=1 keeps the state directory (logs, rendered config).
set -euo pipefail
LATET_LOG_TAG=attacks
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

report=0
update_known=0
known="$LATET_ENVOY_DIR/attacks/known-leaks.txt"
json_out=""
only=""
while (($#)); do
  case "$1" in
    --report) report=1 ;;
    --all-leaks) known="" ;;
    --update-known) update_known=1; report=1 ;;
    --json) json_out="$(realpath -m "${2:?--json needs a file}")"; shift ;;
    --only) only="${2:?--only needs ids}"; shift ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    *) latet_die "unknown argument $1 (see --help)" ;;
  esac
  shift
done
[[ "${LATET_ATTACKS_REPORT:-}" == 1 ]] && report=1

# The corpus file is made by corpus.py: refuse a stale one.
python3 "$LATET_ENVOY_DIR/attacks/corpus.py" --check

state="$(mktemp -d /tmp/latet-attacks.XXXXXX)"
export LATET_STATE_DIR="$state"
LATET_LISTEN_PORT="$(free_port)"
LATET_ADMIN_PORT="$(free_port)"
LATET_CONTROL_PORT="$(free_port)"
LATET_FAKE_LLM_PORT="$(free_port)"
export LATET_LISTEN_PORT LATET_ADMIN_PORT LATET_CONTROL_PORT LATET_FAKE_LLM_PORT
export LATET_UPSTREAM=fake
# Whole answers only; no pause between stream writes needed.
export LATET_FAKE_LLM_DELAY_MS=0

# Build first (cargo is a no-op when current), and the test binary too, so
# that the run itself is start time and attack time only.
t0=$SECONDS
LATET_BIN="$(build_latet_binary)"
LATET_WASM="$(build_filter_wasm)"
LATET_FAKE_LLM_BIN="$(build_fake_llm)"
export LATET_BIN LATET_WASM LATET_FAKE_LLM_BIN
(cd "$LATET_ROOT" && cargo test -q -p latet-fake-llm --test attacks --no-run) >&2
latet_log "built in $((SECONDS - t0)) s"

run_pid=""
finish() {
  if [[ -n "$run_pid" ]] && kill -0 "$run_pid" 2>/dev/null; then
    kill -TERM "$run_pid" 2>/dev/null || true
    wait "$run_pid" 2>/dev/null || true
  fi
  if [[ "${LATET_ATTACKS_KEEP:-}" == 1 ]]; then
    latet_log "state kept in $state"
  else
    rm -rf "$state"
  fi
}
trap finish EXIT

t1=$SECONDS
"$LATET_ENVOY_DIR/run.sh" >"$state/run.out" 2>"$state/run.err" &
run_pid=$!
wait_ready_line "$state/run.out" "$run_pid" "" "$state/run.err" || latet_die "run.sh did not get ready"
latet_log "gateway ready in $((SECONDS - t1)) s"

export LATET_ATTACKS_GATEWAY="http://127.0.0.1:$LATET_LISTEN_PORT"
export LATET_ATTACKS_FAKE="http://127.0.0.1:$LATET_FAKE_LLM_PORT"
export LATET_ATTACKS_LOGS="$state/logs"
export LATET_ATTACKS_REPORT="$report"
export LATET_ATTACKS_ONLY="$only"
if [[ -n "$known" && -f "$known" ]]; then
  export LATET_ATTACKS_KNOWN="$known"
else
  export LATET_ATTACKS_KNOWN=""
fi
if ((update_known)); then
  [[ -z "$only" ]] || latet_die "--update-known needs the whole corpus (no --only)"
  [[ -n "$json_out" ]] || json_out="$state/results.json"
fi
[[ -z "$json_out" ]] || export LATET_ATTACKS_JSON="$json_out"

t2=$SECONDS
status=0
(cd "$LATET_ROOT" && cargo test -q -p latet-fake-llm --test attacks -- --ignored --nocapture --test-threads 1) || status=1
latet_log "attacks ran in $((SECONDS - t2)) s"
if ((update_known)) && ((status == 0)); then
  python3 "$LATET_ENVOY_DIR/attacks/known_leaks.py" "$json_out" "$LATET_ENVOY_DIR/attacks/known-leaks.txt"
fi

# Every e-mail of the corpus is at an atk-corp domain and every secret
# holds AtkCorp (the runner also searched the logs for every value itself).
if grep -rli "atk-corp\|atkcorp" "$state/logs" >&2; then
  latet_log "a corpus value reached the logs above"
  ((report)) || status=1
else
  latet_log "no atk-corp marker in $state/logs"
fi
exit "$status"
