#!/usr/bin/env bash
# Runs `envoy --mode validate` on every Envoy configuration under envoy/:
#   - templates (*.yaml.in) are rendered with sample values, once with the
#     fake LLM upstream (plain HTTP), once with a TLS provider, and once with
#     the control service over TLS (other templates' placeholders are filled
#     by name: see fill_placeholders);
#   - configs (*.yaml holding `static_resources:`) are checked with their
#     module path (`filename: ….wasm`) replaced by the module under test, and
#     files under /etc/latet/ ending in .pem (a private CA) by a throwaway
#     CA's certificate (Envoy's validate mode reads them);
#   - other YAML (Kubernetes manifests) is named and skipped.
# Validate mode loads the module and runs the HTTP filter's on_configure, so
# with the real filter this also checks each filter configuration.
#
# usage: envoy/envoy-validate.sh [--wasm FILE | --floor]
#   (default) build the filter (plugin/) and validate against it
#   --wasm FILE  validate against this module
#   --floor      validate against the floor filter (envoy/floor-filter): checks
#                Envoy's side only, not the filter's configuration
set -euo pipefail
LATET_LOG_TAG=envoy-validate
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

wasm=""
case "${1:-}" in
  --wasm) wasm="${2:?--wasm needs a file}" ;;
  --floor) wasm="$(build_floor_wasm)" ;;
  "") wasm="$(build_filter_wasm)" ;;
  *) latet_die "usage: envoy-validate.sh [--wasm FILE | --floor]" ;;
esac
[[ -f "$wasm" ]] || latet_die "no module at $wasm"
wasm="$(cd "$(dirname "$wasm")" && pwd)/$(basename "$wasm")"
envoy="$(envoy_binary)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
# validate NAME FILE: one envoy run; its log is shown only on failure.
validate() {
  local name="$1" file="$2"
  # The filter may check that its token variable is set; never a real token.
  if LATET_GATEWAY_TOKEN=validate-only "$envoy" --mode validate -c "$file" >"$work/log" 2>&1; then
    printf 'validate: %s OK\n' "$name"
    passed=$((passed + 1))
  else
    printf 'validate: %s FAILED\n' "$name"
    grep -E 'critical|error' "$work/log" | tail -5 || tail -5 "$work/log"
    failed=$((failed + 1))
  fi
}

# Sample values for the templates (validate mode binds no port).
export LATET_LISTEN_PORT=10000 LATET_ADMIN_PORT=9901 LATET_CONTROL_PORT=8787
export LATET_BODY_LIMIT_BYTES=4194304 LATET_WASM="$wasm"
# Two control replicas (the form envoy/replicas.sh runs; one is the same list).
LATET_CONTROL_ENDPOINTS="$(control_endpoints 8787 8789)"
export LATET_CONTROL_ENDPOINTS
# A throwaway CA for the configs that trust a private one (openssl).
make_throwaway_tls "$work/tls" || latet_die "could not make a throwaway CA"

# Other templates' placeholders get sample values by their names: a port,
# a size, a host, a module (the floor filter for one named *FLOOR*WASM*, the
# module under test for any other *WASM*). An unknown name fails the template.
floor_wasm=""
sample_port=30000
fill_placeholders() {
  local name
  for name in $(grep -o '\${[A-Z_][A-Z0-9_]*}' "$1" | sort -u | tr -d '${}'); do
    [[ -n "${!name+set}" ]] && continue
    case "$name" in
      *FLOOR*WASM*)
        [[ -n "$floor_wasm" ]] || floor_wasm="$(build_floor_wasm)"
        export "$name=$floor_wasm"
        ;;
      *WASM*) export "$name=$wasm" ;;
      *PORT*)
        sample_port=$((sample_port + 1))
        export "$name=$sample_port"
        ;;
      *LIMIT* | *BYTES*) export "$name=4194304" ;;
      *HOST*) export "$name=127.0.0.1" ;;
    esac
  done
}

cd "$LATET_ROOT"
while IFS= read -r file; do
  case "$file" in
    *.yaml.in)
      # Both upstream kinds only where the template has the choice, and
      # the control service over TLS where it has that one.
      modes=(plain)
      grep -q 'LATET_UPSTREAM_TRANSPORT_SOCKET' "$file" && modes+=(tls-upstream)
      grep -q 'LATET_CONTROL_TRANSPORT_SOCKET' "$file" && modes+=(tls-control)
      for mode in "${modes[@]}"; do
        if [[ "$mode" == tls-upstream ]]; then
          export LATET_UPSTREAM_HOST=api.openai.com LATET_UPSTREAM_PORT=443
          LATET_UPSTREAM_TRANSPORT_SOCKET="$(upstream_transport_socket tls "$LATET_UPSTREAM_HOST")"
        else
          export LATET_UPSTREAM_HOST=127.0.0.1 LATET_UPSTREAM_PORT=8788
          LATET_UPSTREAM_TRANSPORT_SOCKET="$(upstream_transport_socket plain)"
        fi
        if [[ "$mode" == tls-control ]]; then
          LATET_CONTROL_TRANSPORT_SOCKET="$(control_transport_socket tls "$work/tls/ca.pem" localhost)"
        else
          LATET_CONTROL_TRANSPORT_SOCKET="$(control_transport_socket plain)"
        fi
        export LATET_UPSTREAM_TRANSPORT_SOCKET LATET_CONTROL_TRANSPORT_SOCKET
        out="$work/$(basename "$file" .in)"
        fill_placeholders "$file"
        if render_template "$file" "$out"; then
          if ((${#modes[@]} > 1)); then
            validate "$file ($mode)" "$out"
          else
            validate "$file" "$out"
          fi
        else
          printf 'validate: %s FAILED (template)\n' "$file"
          failed=$((failed + 1))
        fi
      done
      ;;
    *)
      if ! grep -q '^static_resources:' "$file"; then
        printf 'validate: %s skipped (not an Envoy bootstrap)\n' "$file"
        continue
      fi
      out="$work/$(basename "$file")"
      sed -E -e "s#(filename:[[:space:]]*)\"?[^\"}[:space:]]*\\.wasm\"?#\\1\"$wasm\"#" \
        -e "s#(filename:[[:space:]]*)\"?/etc/latet/[^\"}[:space:]]*\\.pem\"?#\\1\"$work/tls/ca.pem\"#" \
        "$file" >"$out"
      validate "$file" "$out"
      ;;
  esac
done < <(find envoy -path envoy/.venv -prune -o -type f \( -name '*.yaml' -o -name '*.yaml.in' -o -name '*.yml' \) -print | sort)

printf 'envoy-validate: %d passed, %d failed\n' "$passed" "$failed"
((failed == 0))
