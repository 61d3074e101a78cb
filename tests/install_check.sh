#!/usr/bin/env bash
# `make install`'s rules (cmake --install) into a staging root: every file in its place,
# the unit naming the installed binary and documentation and keeping its state directory,
# the configuration parsed by the installed binary, and an existing configuration kept.
# Usage: tests/install_check.sh BUILD_DIR
set -euo pipefail
BUILD="$(cd "${1:?usage: install_check.sh BUILD_DIR}" && pwd)"
ROOT="$(mktemp -d)"
trap 'rm -rf "$ROOT"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

DESTDIR="$ROOT" cmake --install "$BUILD" --prefix /opt/eacgm >/dev/null
P="$ROOT/opt/eacgm"
for f in bin/eacgm bin/eacgm-sched lib/eacgm/libeacgm_hook.so lib/systemd/system/eacgm.service \
         share/doc/eacgm/cli.md share/doc/eacgm/config.md share/doc/eacgm/README.md \
         share/eacgm/prometheus/rules/eacgm.rules.yml share/eacgm/prometheus/prometheus.yml \
         share/eacgm/grafana/provisioning; do
  [ -e "$P/$f" ] || fail "$f not installed"
done
[ -f "$ROOT/etc/eacgm/eacgm.toml" ] || fail "/etc/eacgm/eacgm.toml not installed"

unit="$P/lib/systemd/system/eacgm.service"
exec_path=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$unit")
[ "$exec_path" = /opt/eacgm/bin/eacgm ] || fail "ExecStart names $exec_path"
doc=$(sed -n 's|^Documentation=file://||p' "$unit")
[ -f "$ROOT$doc" ] || fail "Documentation=$doc is not installed"
grep -qx 'StateDirectory=eacgm' "$unit" || fail "no StateDirectory= for the store"
grep -q -- '--config /etc/eacgm/eacgm.toml' "$unit" || fail "the unit does not read /etc/eacgm/eacgm.toml"

# The installed configuration is valid for the installed binary.
"$P/bin/eacgm" --config "$ROOT/etc/eacgm/eacgm.toml" probes >/dev/null || fail "the installed configuration is refused"
"$P/bin/eacgm" --version | grep -q eacgm || fail "the installed binary does not run"

# A second install keeps the administrator's configuration.
echo '[gpu]' > "$ROOT/etc/eacgm/eacgm.toml"
DESTDIR="$ROOT" cmake --install "$BUILD" --prefix /opt/eacgm >/dev/null
[ "$(cat "$ROOT/etc/eacgm/eacgm.toml")" = "[gpu]" ] || fail "an existing configuration was overwritten"
echo "install check: PASS"
