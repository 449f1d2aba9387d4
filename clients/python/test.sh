#!/usr/bin/env bash
# The Python client's checks: installs the package into its venv as a user
# would (pip install ./clients/python, offline), then ruff, mypy --strict and
# pytest against the real `latet serve` on loopback.
#
# Environment:
#   LATET_BIN   the latet binary the tests start (default: the debug build,
#               $CARGO_TARGET_DIR/debug/latet or <repo>/target/debug/latet)
# Arguments are passed to pytest.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$here/.venv"
LATET_BIN="${LATET_BIN:-${CARGO_TARGET_DIR:-$repo/target}/debug/latet}"
# Absolute: the tests run from this directory.
[[ "$LATET_BIN" == /* ]] || LATET_BIN="$PWD/$LATET_BIN"
export LATET_BIN

if [[ ! -x "$venv/bin/python" ]]; then
  echo "python client: no venv at $venv; run scripts/setup.sh" >&2
  exit 1
fi
if [[ ! -x "$LATET_BIN" ]]; then
  echo "python client: no latet binary at $LATET_BIN; run cargo build -p latet or set LATET_BIN" >&2
  exit 1
fi

# In-tree build leftovers (build/, *.egg-info) are removed on exit.
trap 'rm -rf "$here/build" "$here"/src/*.egg-info' EXIT
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  --no-build-isolation --no-deps --force-reinstall "$here"

cd "$here"
"$venv/bin/ruff" check src tests
"$venv/bin/ruff" format --check src tests
"$venv/bin/mypy" src tests
"$venv/bin/python" -m pytest -p no:cacheprovider "$@"
