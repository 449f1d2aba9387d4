#!/usr/bin/env bash
# The project's test command (README): every check CI runs, in order.
# Stages print their name and time; the first failure stops the run.
set -euo pipefail
cd "$(dirname "$0")/.."

stage() {
  local name=$1; shift
  local t0=$SECONDS
  echo "==> $name"
  "$@"
  echo "<== $name ($((SECONDS - t0)) s)"
}

stage "format" cargo fmt --all --check
stage "clippy (host)" cargo clippy --workspace --all-targets -- -D warnings
stage "latet-core for wasm32-wasip1" cargo check -p latet-core --target wasm32-wasip1
stage "latet-core for wasm32-unknown-unknown" cargo check -p latet-core --target wasm32-unknown-unknown
stage "tests" cargo test --workspace
echo "all checks passed"
