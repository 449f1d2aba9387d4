#!/usr/bin/env bash
# Builds the filter for wasm32-wasip1 in release, then shrinks it with
# wasm-opt (binaryen) — only when the .wasm's content or the wasm-opt flags
# changed since the last run (both are kept beside the output in
# latet_filter.opt.stamp: its SHA-256 and the flags). Prints both sizes.
# Honours CARGO_TARGET_DIR.
# Output: $TARGET/wasm32-wasip1/release/latet_filter.opt.wasm
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip1; then
    rustup target add wasm32-wasip1
fi
if ! command -v wasm-opt >/dev/null; then
    echo "wasm-opt not found: install binaryen (apt-get install -y binaryen)" >&2
    exit 1
fi
# simd128: V8 in Envoy 1.40 runs it (smoke passes); memchr, the
# compiler's vectorised loops, the vault token walk
# (core/src/snapshot/token_starts.rs) and the JSON string scan use it.
# The token walk in V8 against its scalar form (2026-12-06, engine harness,
# loaded machine): finding values ~2x, restoring ~1.6x.
# LATET_WASM_SIMD=0 builds without it.
if [[ "${LATET_WASM_SIMD:-1}" == 1 ]]; then
    export CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="${CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS:-} -C target-feature=+simd128"
    simd=(--enable-simd)
else
    simd=()
fi
cargo build -p latet-filter --release --target wasm32-wasip1
out="$target_dir/wasm32-wasip1/release"
flags=(-Oz --strip-debug --enable-bulk-memory --enable-sign-ext --enable-nontrapping-float-to-int "${simd[@]}")
stamp="$(sha256sum "$out/latet_filter.wasm" | cut -d' ' -f1) ${flags[*]}"
if [[ -f "$out/latet_filter.opt.wasm" && "$(cat "$out/latet_filter.opt.stamp" 2>/dev/null)" == "$stamp" ]]; then
    echo "latet_filter.wasm unchanged: wasm-opt not run" >&2
else
    rm -f "$out/latet_filter.opt.stamp"
    wasm-opt "${flags[@]}" "$out/latet_filter.wasm" -o "$out/latet_filter.opt.wasm"
    printf '%s\n' "$stamp" >"$out/latet_filter.opt.stamp"
fi
before=$(stat -c %s "$out/latet_filter.wasm")
after=$(stat -c %s "$out/latet_filter.opt.wasm")
echo "latet_filter.wasm: $before bytes; after wasm-opt -Oz: $after bytes"
echo "$out/latet_filter.opt.wasm"
