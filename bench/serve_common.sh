# Shared by the serve benchmarks (sourced): the HTTP client, a scratch folder, and the
# stop of the daemon whose pid is in $pid when the script exits.
HERE=$(cd "$(dirname "$0")" && pwd)
PY=$(command -v /usr/bin/python3 || command -v python3)
client() { "$PY" "$HERE/http_client.py" "$@"; }
TMP=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
