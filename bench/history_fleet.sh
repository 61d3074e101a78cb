#!/usr/bin/env bash
# The fleet simulation (eacgm_bench_history_fleet) against a throwaway PostgreSQL server:
# Debian's (the newest /usr/lib/postgresql/<version>), initdb in a temporary directory
# (as nobody when run as root), the server's default settings but for a Unix socket in
# that directory and no TCP; stopped and removed at the end.
# Usage: bench/history_fleet.sh [BUILD] [eacgm_bench_history_fleet arguments...]
set -euo pipefail
B=${1:-build}
shift || true
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "history_fleet: no PostgreSQL server under /usr/lib/postgresql (make setup)" >&2; exit 2; }
dir=$(mktemp -d /tmp/eacgm-pgbench-XXXXXX)
as=()
if [ "$(id -u)" -eq 0 ]; then
  chown "$(id -u nobody):$(id -g nobody)" "$dir"
  as=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
(cd "$dir" && "${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust --locale=C --encoding=UTF8 >/dev/null)
(cd "$dir" && "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
  -o "-k $dir -p $port -c listen_addresses=''" start >/dev/null)
"$bin/postgres" --version
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo "server settings: $("$bin/psql" -X -At -h "$dir" -p "$port" -U postgres -d postgres -c \
  "SELECT string_agg(name || '=' || setting || coalesce(unit, ''), ' ') FROM pg_settings WHERE name IN
   ('shared_buffers', 'fsync', 'synchronous_commit', 'max_wal_size', 'checkpoint_timeout')")"
"$B/bench/eacgm_bench_history_fleet" --url "host=$dir port=$port dbname=postgres user=postgres" "$@"
