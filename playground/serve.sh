#!/usr/bin/env bash
# Builds the playground and serves it on loopback only:
#   bash playground/serve.sh [port]     → http://127.0.0.1:8790/
# The page computes everything in the browser and sends nothing anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
port="${1:-8790}"
site=$(bash playground/build.sh)
echo "playground: http://127.0.0.1:$port/  (Ctrl-C stops it)"
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site"
