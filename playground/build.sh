#!/usr/bin/env bash
# Builds the playground: latet-playground for wasm32-unknown-unknown in
# release, and the page's files beside it, in one folder a static server
# can serve. Honours CARGO_TARGET_DIR. Prints that folder.
# Output: $TARGET/playground-web/{index.html,playground.js,style.css,latet_playground.wasm}
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build -q -p latet-playground --release --target wasm32-unknown-unknown >&2
site="$target_dir/playground-web"
mkdir -p "$site"
cp playground/web/index.html playground/web/playground.js playground/web/style.css "$site/"
cp "$target_dir/wasm32-unknown-unknown/release/latet_playground.wasm" "$site/"
echo "$site"
