# Shared helpers of the envoy/ scripts. Source it: `. "$(dirname "$0")/lib.sh"`.
# Every function prints progress on stderr and results on stdout.

# The repository root (envoy/..).
LATET_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LATET_ENVOY_DIR="$LATET_ROOT/envoy"

latet_log() { printf '%s: %s\n' "${LATET_LOG_TAG:-latet}" "$*" >&2; }
latet_die() { latet_log "$*"; exit 1; }

# The envoy binary (installs it first when missing or at another version).
envoy_binary() {
  "$LATET_ENVOY_DIR/install-envoy.sh"
}

# render_template IN OUT: writes IN to OUT with every ${NAME} replaced by the
# value of the environment variable NAME. Fails, naming the variable, when one
# is unset; fails when a placeholder is left. Values may hold any character
# but a newline.
render_template() {
  local in="$1" out="$2" name value escaped
  local -a script=()
  for name in $(grep -o '\${[A-Z_][A-Z0-9_]*}' "$in" | sort -u | tr -d '${}'); do
    if [[ -z "${!name+set}" ]]; then
      latet_log "$in needs \$$name"
      return 1
    fi
    value="${!name}"
    if [[ "$value" == *$'\n'* ]]; then
      latet_log "\$$name holds a newline"
      return 1
    fi
    # Escape what sed's replacement gives a meaning to: \ & and the delimiter |.
    escaped="$(printf '%s' "$value" | sed -e 's/[\\&|]/\\&/g')"
    script+=(-e "s|\\\${$name}|$escaped|g")
  done
  if ((${#script[@]})); then
    sed "${script[@]}" "$in" >"$out"
  else
    cp "$in" "$out"
  fi
  if grep -n '\${[A-Z_][A-Z0-9_]*}' "$out" >&2; then
    latet_log "$out still holds a placeholder"
    return 1
  fi
}

# The one-line transport socket of the upstream cluster: raw_buffer (plain
# HTTP), or TLS to host $2 when $1 is "tls": SNI $2, the certificate checked
# against the system CAs and for the name $2.
upstream_transport_socket() {
  local mode="$1" host="${2:-}"
  case "$mode" in
    plain)
      printf '%s\n' '{name: envoy.transport_sockets.raw_buffer, typed_config: {"@type": type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer}}'
      ;;
    tls)
      printf '{name: envoy.transport_sockets.tls, typed_config: {"@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext, sni: "%s", common_tls_context: {validation_context: {trusted_ca: {filename: "%s"}, match_typed_subject_alt_names: [{san_type: DNS, matcher: {exact: "%s"}}]}}}}\n' \
        "$host" "${LATET_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" "$host"
      ;;
    *)
      latet_log "transport mode must be plain or tls"
      return 1
      ;;
  esac
}

# The one-line transport socket of the control cluster (the filter's
# callouts to `latet serve`): raw_buffer, or when $1 is "tls" TLS with SNI
# $3, the certificate checked against the CA file $2 and for the name $3.
control_transport_socket() {
  local mode="$1" ca="${2:-}" name="${3:-}"
  case "$mode" in
    plain) upstream_transport_socket plain ;;
    tls)
      printf '{name: envoy.transport_sockets.tls, typed_config: {"@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext, sni: "%s", common_tls_context: {validation_context: {trusted_ca: {filename: "%s"}, match_typed_subject_alt_names: [{san_type: DNS, matcher: {exact: "%s"}}]}}}}\n' \
        "$name" "$ca" "$name"
      ;;
    *)
      latet_log "transport mode must be plain or tls"
      return 1
      ;;
  esac
}

# control_endpoints PORT...: the control cluster's lb_endpoints, one line of
# YAML flow: a control replica on 127.0.0.1:PORT for each PORT.
control_endpoints() {
  local port sep="" out="["
  for port in "$@"; do
    out+="$sep{endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: $port}}}}"
    sep=", "
  done
  printf '%s]\n' "$out"
}

# make_throwaway_tls DIR: a throwaway CA and a server certificate it signed,
# with openssl: DIR/ca.pem (the CA's certificate; its key is deleted once it
# has signed), DIR/server.pem and DIR/server.key (mode 0600) for the names
# localhost and 127.0.0.1, valid for 7 days. For tests and local runs only.
make_throwaway_tls() {
  local dir="$1"
  command -v openssl >/dev/null 2>&1 || {
    latet_log "openssl is missing (Debian package openssl; scripts/setup.sh installs it)"
    return 1
  }
  mkdir -p "$dir"
  rm -f "$dir/ca.pem" "$dir/ca.key" "$dir/server.pem" "$dir/server.key" "$dir/server.csr"
  (
    umask 077
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 \
      -subj "/CN=latet throwaway CA" -keyout "$dir/ca.key" -out "$dir/ca.pem" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" &&
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -subj "/CN=localhost" -keyout "$dir/server.key" -out "$dir/server.csr" &&
      openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
        -set_serial "0x$(openssl rand -hex 8)" -days 7 -out "$dir/server.pem" \
        -extfile <(printf '%s\n' 'subjectAltName=DNS:localhost,IP:127.0.0.1' \
          'basicConstraints=critical,CA:FALSE' 'keyUsage=critical,digitalSignature' \
          'extendedKeyUsage=serverAuth')
  ) >"$dir/openssl.log" 2>&1 || {
    latet_log "openssl failed; see $dir/openssl.log"
    return 1
  }
  rm -f "$dir/ca.key" "$dir/server.csr" "$dir/openssl.log"
  chmod 644 "$dir/ca.pem" "$dir/server.pem"
}

# --- processes a script starts, stopped by pid --------------------------------
# latet_start NAME LOG CMD... runs CMD in a new session (setsid), output
# appended to LOG, and records it in LATET_PIDS/LATET_NAMES (and in
# $LATET_PID_DIR/NAME.pid when LATET_PID_DIR is set). Envoy started from a
# script without setsid got SIGTERM when the script's parent went away
# (docs/envoy-facts.md#runtime). Non-interactive bash puts background jobs in their own
# process group, so setsid does not fork and $! is the command's pid.
# latet_stop_all (for `trap latet_stop_all EXIT`) stops them all.
LATET_PIDS=()
LATET_NAMES=()
latet_start() {
  local name="$1" log="$2"
  shift 2
  setsid "$@" </dev/null >>"$log" 2>&1 &
  LATET_PIDS+=("$!")
  LATET_NAMES+=("$name")
  [[ -z "${LATET_PID_DIR:-}" ]] || echo "$!" >"$LATET_PID_DIR/$name.pid"
  latet_log "started $name (pid $!, log $log)"
}

# latet_stop_pid PID [NAME]: SIGTERM (if not sent yet), up to 5 s to exit,
# then SIGKILL; reaps it and removes its pid file.
latet_stop_pid() {
  local pid="$1" name="${2:-}"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    latet_log "${name:-pid $pid} ignored SIGTERM for 5 s: killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  [[ -z "$name" || -z "${LATET_PID_DIR:-}" ]] || rm -f "$LATET_PID_DIR/$name.pid"
}

# latet_stop_all: every process latet_start started and that is still
# recorded (an entry set to "" was stopped already): SIGTERM to all at once,
# then each waited for, newest first.
latet_stop_all() {
  local i
  ((${#LATET_PIDS[@]})) || return 0
  latet_log "stopping ${LATET_NAMES[*]}"
  for i in "${!LATET_PIDS[@]}"; do
    [[ -z "${LATET_PIDS[$i]}" ]] || kill -TERM "${LATET_PIDS[$i]}" 2>/dev/null || true
  done
  for ((i = ${#LATET_PIDS[@]} - 1; i >= 0; i--)); do
    [[ -z "${LATET_PIDS[$i]}" ]] || latet_stop_pid "${LATET_PIDS[$i]}" "${LATET_NAMES[$i]}"
  done
  LATET_PIDS=()
  LATET_NAMES=()
}

# free_port: prints a TCP port of 127.0.0.1 that nothing listens on now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_ready_line FILE PID [SECONDS] [ERRFILE]: polls until FILE holds the
# line `ready` (what run.sh prints once everything answers). Fails when
# process PID has exited (printing the last lines of ERRFILE, if given) or
# after SECONDS (default LATET_READY_TIMEOUT, else 120).
wait_ready_line() {
  local file="$1" pid="$2" seconds="${3:-${LATET_READY_TIMEOUT:-120}}" err="${4:-}" deadline
  deadline=$((SECONDS + seconds))
  until grep -qx ready "$file" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      [[ -z "$err" || ! -f "$err" ]] || tail -n 30 "$err" >&2
      latet_log "process $pid ended before printing ready"
      return 1
    fi
    if ((SECONDS >= deadline)); then
      latet_log "no ready line in $file within ${seconds}s"
      return 1
    fi
    sleep 0.1
  done
}

# wait_for SECONDS CHECK...: runs CHECK every 50 ms until it succeeds;
# fails after SECONDS.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
}

# latet_port_busy PORT: something listens on 127.0.0.1:PORT.
latet_port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_http URL SECONDS [PID]: polls URL until it answers 2xx. Fails after
# SECONDS, or at once when process PID (if given) has exited.
wait_http() {
  local url="$1" seconds="$2" pid="${3:-}" deadline
  deadline=$((SECONDS + seconds))
  while ((SECONDS < deadline)); do
    if curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; then
      return 0
    fi
    if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
      latet_log "process $pid exited before $url answered"
      return 1
    fi
    sleep 0.05
  done
  latet_log "$url did not answer within ${seconds}s"
  return 1
}

# wasm-opt from Debian's binaryen package, installed when missing.
ensure_wasm_opt() {
  command -v wasm-opt >/dev/null 2>&1 && return 0
  if [[ "$(id -u)" != 0 ]]; then
    latet_log "wasm-opt is missing: install Debian's binaryen package"
    return 1
  fi
  latet_log "installing binaryen (wasm-opt)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binaryen >&2
}

# The rust target for the filter, added when missing.
ensure_wasm_target() {
  rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip1 && return 0
  latet_log "adding the wasm32-wasip1 rust target"
  rustup target add wasm32-wasip1 >&2
}

# Cargo's target directory (honours CARGO_TARGET_DIR).
latet_target_dir() {
  printf '%s\n' "${CARGO_TARGET_DIR:-$LATET_ROOT/target}"
}

# Builds the filter for release (cargo is a no-op when it is current) and
# prints the path of the wasm-opt'ed module. Uses plugin/build.sh when it
# exists, so that there is one recipe.
build_filter_wasm() {
  local dir
  dir="$(latet_target_dir)/wasm32-wasip1/release"
  ensure_wasm_target
  ensure_wasm_opt
  if [[ -f "$LATET_ROOT/plugin/build.sh" ]]; then
    bash "$LATET_ROOT/plugin/build.sh" >&2
  else
    (cd "$LATET_ROOT" && cargo build -q -p latet-filter --target wasm32-wasip1 --release) >&2
    if [[ ! "$dir/latet_filter.opt.wasm" -nt "$dir/latet_filter.wasm" ]]; then
      wasm-opt -Oz "$dir/latet_filter.wasm" -o "$dir/latet_filter.opt.wasm" >&2
    fi
  fi
  if [[ ! -f "$dir/latet_filter.opt.wasm" ]]; then
    latet_log "no $dir/latet_filter.opt.wasm after the build"
    return 1
  fi
  printf '%s\n' "$dir/latet_filter.opt.wasm"
}

# Builds the floor filter (a buffer-and-copy module, envoy/floor-filter) and
# prints its path: a stand-in module for checks that need any valid filter.
build_floor_wasm() {
  local dir
  dir="$(latet_target_dir)/wasm32-wasip1/release"
  ensure_wasm_target
  (cd "$LATET_ROOT" && cargo build -q -p latet-floor-filter --target wasm32-wasip1 --release) >&2
  printf '%s\n' "$dir/latet_floor_filter.wasm"
}

# The cargo profile of the native binaries (`latet`, the fake LLM):
# LATET_PROFILE=release (default) or debug — the test command uses debug, so
# the binaries `cargo test` already built are reused instead of compiling
# the whole async stack a second time.
native_profile_args() {
  case "${LATET_PROFILE:-release}" in
    release) printf '%s\n' --release ;;
    debug) ;;
    *) latet_die "LATET_PROFILE must be release or debug" ;;
  esac
}

# Builds the control service's `latet` binary and prints its path. Cargo's
# progress goes to stderr (a first build is minutes of it; a current one is
# one "Finished" line).
build_latet_binary() {
  # shellcheck disable=SC2046
  (cd "$LATET_ROOT" && cargo build -p latet $(native_profile_args)) >&2
  printf '%s\n' "$(latet_target_dir)/${LATET_PROFILE:-release}/latet"
}

# Builds the fake LLM and prints its path (cargo's progress on stderr).
build_fake_llm() {
  # shellcheck disable=SC2046
  (cd "$LATET_ROOT" && cargo build -p latet-fake-llm $(native_profile_args)) >&2
  printf '%s\n' "$(latet_target_dir)/${LATET_PROFILE:-release}/latet-fake-llm"
}
