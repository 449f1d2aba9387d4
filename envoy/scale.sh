#!/usr/bin/env bash
# Scale simulation of the gateway fleet: a throwaway
# PostgreSQL cluster, two `latet serve` replicas over it (one master key, one
# admin token), a key with a vault of synthetic values, then N simulated
# gateways (control/examples/scale_gateways: what the filter's poller does,
# snapshot then long-poll, half on each replica) for each N given. Prints a
# table per N, then one row per N (the BENCHMARKS.md table).
#
#   envoy/scale.sh 100 1000 5000      the figures (fresh replicas per N)
#   envoy/scale.sh --smoke            N=20, 200 values, one forget; exits 1
#                                     unless it reached every gateway (CI)
# Options before the N values: --values M (default 10000), --forgets K
# (default 10), --forget-every-ms MS (default 2000), --callout-timeout-ms MS
# (the snapshot call's limit; default 5000, the filter's calloutTimeoutMs),
# --warm (the gateways resume from a held seq, no snapshot each: the forget
# fan-out and memory per parked poll without the snapshot herd),
# --cold-start-limit-s S (default 600: then the run goes on with those parked).
# LATET_PROFILE=debug uses the debug binaries (the test command's); release
# by default.
# Everything it starts is stopped, and its temp dirs removed, on exit.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
LATET_LOG_TAG=scale

smoke=0
values=10000
forgets=10
forget_every_ms=2000
counts=()
run_flags=()
while (($#)); do
  case "$1" in
    --smoke) smoke=1 ;;
    --values) values="$2"; shift ;;
    --forgets) forgets="$2"; shift ;;
    --forget-every-ms) forget_every_ms="$2"; shift ;;
    --callout-timeout-ms) run_flags+=(--callout-timeout-ms "$2"); shift ;;
    --warm) run_flags+=(--warm) ;;
    --cold-start-limit-s) run_flags+=(--cold-start-limit-s "$2"); shift ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *[!0-9]* | "") latet_die "not a gateway count: $1 (see --help)" ;;
    *) counts+=("$1") ;;
  esac
  shift
done
if ((smoke)); then
  counts=(20)
  values=200
  forgets=1
  forget_every_ms=0
  run_flags+=(--require-all --cold-start-limit-s 20 --drain-limit-s 10)
fi
((${#counts[@]})) || latet_die "give the gateway counts (envoy/scale.sh 100 1000 5000) or --smoke"

# One descriptor per gateway in the client and per parked poll in a
# replica: take the hard limit.
max_n=$(printf '%s\n' "${counts[@]}" | sort -n | tail -1)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if (($(ulimit -n) < max_n + 256)); then
  latet_log "ulimit -n is $(ulimit -n): too low for $max_n gateways (raise the hard limit)"
fi

work=$(mktemp -d /tmp/latet-scale.XXXXXX)
# The cluster's own dir: its owner (nobody, when run as root) must enter it.
pg_dir=$(mktemp -u /tmp/latet-scale-pg.XXXXXX)
pg_started=0
cleanup() {
  local status=$?
  latet_stop_all
  ((pg_started)) && bash "$LATET_ROOT/scripts/pg-test-cluster.sh" stop "$pg_dir"
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

latet_bin=$(build_latet_binary)
# shellcheck disable=SC2046
(cd "$LATET_ROOT" && cargo build -p latet --example scale_gateways $(native_profile_args)) >&2
client="$(latet_target_dir)/${LATET_PROFILE:-release}/examples/scale_gateways"

latet_log "PostgreSQL cluster in $pg_dir"
pg_started=1
pg_url=$(bash "$LATET_ROOT/scripts/pg-test-cluster.sh" start "$pg_dir")
(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/master.key")

# start_replica NAME: starts one replica; sets REPLICA_URL and REPLICA_PID.
start_replica() {
  local name="$1" port
  port="$(free_port)"
  : >"$work/$name.log"
  latet_start "$name" "$work/$name.log" "$latet_bin" serve --db "$pg_url" \
    --listen "127.0.0.1:$port" --admin-token-file "$work/admin.token" \
    --master-key-file "$work/master.key"
  REPLICA_PID="${LATET_PIDS[-1]}"
  REPLICA_URL="http://127.0.0.1:$port"
  wait_http "$REPLICA_URL/" 30 "$REPLICA_PID"
}

rows=()
seeded=0
for n in "${counts[@]}"; do
  # Fresh replicas for each N: their CPU and peak memory are this run's.
  # The first makes the admin token; the second takes the same file.
  start_replica "r1-n$n"; url1=$REPLICA_URL; pid1=$REPLICA_PID
  start_replica "r2-n$n"; url2=$REPLICA_URL; pid2=$REPLICA_PID
  if ((!seeded)); then
    "$client" seed --replica "$url1" --replica "$url2" --admin-token-file "$work/admin.token" \
      --values "$values" --out-dir "$work"
    seeded=1
  fi
  latet_log "N=$n: $((n / 2)) gateways on each replica"
  "$client" run --replica "$url1" --replica "$url2" --replica-pid "$pid1" --replica-pid "$pid2" \
    --gateway-token-file "$work/gateway.token" --forget-token-file "$work/forget.token" \
    --gateways "$n" --forgets "$forgets" --forget-every-ms "$forget_every_ms" \
    --db-pid "$(head -1 "$pg_dir/data/postmaster.pid")" \
    "${run_flags[@]}" | tee "$work/run-$n.out"
  rows+=("$(sed -n 's/^row: //p' "$work/run-$n.out")")
  latet_stop_all
  # No value (the synthetic ones are all @example.org) and no token in
  # what the replicas logged or the client printed.
  if grep -lF -e '@example.org' -e "$(cat "$work/gateway.token")" -e "$(cat "$work/forget.token")" \
    -e "$(cat "$work/admin.token")" "$work"/*.log "$work/run-$n.out" >&2; then
    latet_die "a value or a token was logged (files above)"
  fi
done

echo
echo "| N | cold start (all parked) | control CPU, cold start | database CPU, cold start | snapshot bytes / gateway | forget p50 | forget p99 | forget max | receipts | control CPU, $forgets forgets | database CPU, $forgets forgets | RSS idle → parked r1 / r2 (MiB) | peak RSS r1 / r2 (MiB) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
