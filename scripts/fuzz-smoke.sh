#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a few seconds (CI smoke run).
#
#   scripts/fuzz-smoke.sh [SECONDS_PER_TARGET]     (default 10)
#   FUZZ_LONG=1 FUZZ_RUNS=10000000 scripts/fuzz-smoke.sh   (long run: runs per target)
#
# The smoke run builds with AddressSanitizer and inputs up to 64 KiB. The
# long run builds without a sanitizer (the fuzzed crates have no unsafe code
# on native targets: the filter's only unsafe block is its wasm32-only
# allocator) into fuzz/target/none, caps inputs at 4 KiB and runs at nice 19:
# about 3x the executions a second for the same checks.
#
# Environment (defaults):
#   FUZZ_TARGETS    all five       which targets, space-separated, in order
#   FUZZ_SANITIZER  address (long: none)   cargo fuzz --sanitizer
#   FUZZ_MAX_LEN    65536 (long: 4096)     libFuzzer -max_len
#   FUZZ_LOG_DIR    (none)         keep each target's libFuzzer log as FUZZ_LOG_DIR/fuzz-<target>.log
#   FUZZ_BIN_DIR    (none)         run the target binaries in this directory instead of building
#                                  (e.g. built from a clean export of a commit)
#
# Installs the nightly toolchain and cargo-fuzz when missing; if they cannot
# be installed, says so and exits 0 (skipped), so CI without network passes
# with a clear message. A crash fails the run and leaves the input under
# fuzz/artifacts/<target>/.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds="${1:-10}"
read -r -a targets <<<"${FUZZ_TARGETS:-mask_request stream_restore filter_config wire_events compact_snapshot}"
if [[ "${FUZZ_LONG:-0}" == 1 ]]; then
  sanitizer="${FUZZ_SANITIZER:-none}"
  max_len="${FUZZ_MAX_LEN:-4096}"
  niceness=19
else
  sanitizer="${FUZZ_SANITIZER:-address}"
  max_len="${FUZZ_MAX_LEN:-65536}"
  niceness=10
fi

skip() {
  # In CI a missing toolchain is a broken setup, not a reason to skip.
  if [[ -n "${CI:-}" ]]; then
    echo "fuzz-smoke: FAILED: $*" >&2
    exit 1
  fi
  echo "fuzz-smoke: SKIPPED: $*" >&2
  exit 0
}

command -v rustup >/dev/null 2>&1 || skip "rustup is not installed"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  rustup toolchain install nightly --profile minimal >/dev/null 2>&1 \
    || skip "the nightly toolchain could not be installed"
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked >/dev/null 2>&1 \
    || skip "cargo-fuzz could not be installed"
fi

cd fuzz
if [[ -n "${FUZZ_BIN_DIR:-}" ]]; then
  bin_dir="$FUZZ_BIN_DIR"
else
  # Each sanitizer in its own target directory: switching does not rebuild the other.
  export CARGO_TARGET_DIR="$PWD/target/$sanitizer"
  build=(cargo +nightly fuzz build -O -s "$sanitizer")
  echo "fuzz-smoke: building targets (sanitizer $sanitizer)"
  nice "${build[@]}" >/dev/null 2>&1 || nice "${build[@]}"
  bin_dir="$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release"
fi

status=0
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target" "artifacts/$target"
  if [[ "${FUZZ_LONG:-0}" == 1 ]]; then
    limit=(-runs="${FUZZ_RUNS:-10000000}")
  else
    limit=(-max_total_time="$seconds")
  fi
  if [[ -n "${FUZZ_LOG_DIR:-}" ]]; then
    log="$FUZZ_LOG_DIR/fuzz-$target.log"
  else
    log="$(mktemp)"
  fi
  started=$SECONDS
  if nice -n "$niceness" "$bin_dir/$target" "corpus/$target" "seeds/$target" \
      "${limit[@]}" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="artifacts/$target/" >"$log" 2>&1; then
    runs="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')"
    rate="$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}')"
    echo "fuzz-smoke: $target ok (${runs:-?} executions in $((SECONDS - started)) s, ${rate:-?}/s)"
  else
    echo "fuzz-smoke: $target FAILED" >&2
    grep -E 'panicked|SUMMARY|Test unit written' "$log" >&2 || tail -20 "$log" >&2
    status=1
  fi
  [[ -n "${FUZZ_LOG_DIR:-}" ]] || rm -f "$log"
done
exit "$status"
