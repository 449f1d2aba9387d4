#!/usr/bin/env bash
# The playground's browser test (scripts/test.sh runs it): builds the page's
# .wasm and the native example, then drives headless Chromium over them
# (playground/test/browser_test.py). Honours CARGO_TARGET_DIR.
# `--screenshot docs/playground.png` also takes the README's picture.
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
site=$(bash playground/build.sh)
cargo build -q -p latet-playground --example native
python3 playground/test/browser_test.py "$site" "$target_dir/debug/examples/native" "$@"
