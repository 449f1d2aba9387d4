#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh machine: the Rust
# targets and components, Binaryen's wasm-opt, and (through envoy/) Envoy.
# Idempotent: skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup target add wasm32-wasip1 wasm32-unknown-unknown >/dev/null
rustup component add rustfmt clippy >/dev/null 2>&1 || true

if ! command -v wasm-opt >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binaryen >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binaryen >/dev/null
  fi
fi

if [ -x envoy/install-envoy.sh ]; then
  envoy/install-envoy.sh >/dev/null
fi
echo "setup: done"
