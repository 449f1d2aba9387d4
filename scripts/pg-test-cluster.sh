#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the control service's tests.
#
#   scripts/pg-test-cluster.sh start DIR   # prints the cluster's URL on stdout
#   scripts/pg-test-cluster.sh stop DIR    # stops it and removes DIR
#
# DIR must be missing or empty (start makes it; its parents must let others
# through, as /tmp does). The cluster listens on a Unix socket in
# DIR only (no TCP port to collide with), trusts local connections (nothing
# but this machine's users can reach the socket) and is run by an
# unprivileged user: initdb refuses root, so as root it runs as `nobody`.
# Needs Debian's `postgresql` package (scripts/setup.sh installs it).
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1
dir=$2

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [[ -z "$bindir" || ! -x "$bindir/initdb" ]]; then
  echo "pg-test-cluster: no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)" >&2
  exit 1
fi

# Runs a command as the cluster's owner.
as_owner() {
  if [[ $(id -u) = 0 ]]; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
  else
    "$@"
  fi
}

case $action in
  start)
    if [[ -e "$dir" && -n "$(ls -A "$dir")" ]]; then
      echo "pg-test-cluster: $dir is not empty" >&2
      exit 1
    fi
    mkdir -p "$dir"
    [[ $(id -u) = 0 ]] && chown nobody:nogroup "$dir"
    # Others may enter DIR to reach the socket (the tests may run as another user).
    chmod 755 "$dir"
    as_owner "$bindir/initdb" -D "$dir/data" -U latet --auth=trust \
      --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
      cat "$dir/initdb.log" >&2
      exit 1
    }
    # fsync off: a throwaway cluster; the tests' crashes are of the service, not the machine.
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
      -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c fsync=off -c max_connections=300" \
      >/dev/null || {
      cat "$dir/server.log" >&2
      exit 1
    }
    # pg_ctl -w returns once the server accepts connections; check it does.
    for _ in $(seq 1 100); do
      "$bindir/pg_isready" -q -h "$dir" -U latet && break
      sleep 0.1
    done
    "$bindir/pg_isready" -q -h "$dir" -U latet
    echo "postgres:///postgres?host=$dir&user=latet"
    ;;
  stop)
    if [[ -d "$dir/data" ]]; then
      as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  *) usage ;;
esac
